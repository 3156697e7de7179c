"""Independent tasks on forked worker processes, results in order.

Used for the claims of a large check and for the drawing phase of a build.  Fork (not spawn) so a
child inherits the loaded library and scenario instead of pickling them; only results travel back.
Where fork is unavailable, or z3's global context exists in this process (a child must not inherit
solver state), or a child fails, the tasks run here, one after the other: the same results, and a
task's own error (a ``DeriveError`` with its hint) is raised as if it had always run serially.

The workers are plain forks that share one pipe of task numbers (all written before they start, each
worker reading the next when it is free) and each send their results on a pipe of their own, which
this process reads in its one thread.  ``multiprocessing.Pool`` did the same with three threads here,
one of which woke at every result that arrived and polled the workers: a fifth of a second of this
process's CPU in a check of the serving library, taken from the workers on two cores.
"""

from __future__ import annotations

import gc
import os
import pickle
import select
import selectors
import signal
import struct
from collections.abc import Callable, Sequence

_INDEX = struct.Struct("<i")  # a task's number on the shared pipe (4 bytes: a pipe reads them whole)
_SIZE = struct.Struct("<Q")  # the length of a result's pickle, before it


MAX_WORKERS = 8  # past this, the library's fork and the results' pickling outweigh the claims' share


def default_workers() -> int:
    """Processes for a large check: the CPUs this process may run on (a container's share, not the
    machine's), at most ``MAX_WORKERS``."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cpus))


def can_fork() -> bool:
    import z3

    return hasattr(os, "fork") and getattr(z3.z3, "_main_ctx", None) is None


def run_tasks(tasks: Sequence[Callable[[], object]], workers: int,
              on_result: Callable[[object], None] | None = None,
              meanwhile: Callable[[], None] | None = None,
              cost: Sequence[float] | None = None) -> list[object]:
    """``[task() for task in tasks]``, on up to ``workers`` forked processes; ``on_result`` is called with
    each result as it arrives (in completion order).  ``meanwhile`` (which must not raise) is called once
    in this process while the workers run, or first when the tasks run here: work of the caller's that
    does not need the results, which would otherwise wait for the slowest worker.  ``cost`` (one number a
    task, known before it runs, never a timing): the workers take the tasks in decreasing cost, ties in
    list order (``handout_order``), so that the last ones are small and no worker idles long at the end;
    the results still come back in the list's order, and here the tasks run in the list's order."""
    results: dict[int, object] = {}
    pending = [meanwhile] if meanwhile is not None else []

    def once() -> None:  # ``meanwhile``, at its first call only
        if pending:
            pending.pop()()

    if len(tasks) > 1 and workers > 1 and can_fork():
        gc.freeze()  # the children inherit the heap: the collector need not walk (and copy) it in each
        try:
            _run_forked(tasks, min(workers, len(tasks)), handout_order(len(tasks), cost), results, on_result, once)
        except OSError:
            pass  # no worker processes on this system (or a worker's result cut short): the rest runs below
        finally:
            gc.unfreeze()
    once()
    out: list[object] = []
    for i, task in enumerate(tasks):
        if i not in results:
            results[i] = task()
            if on_result is not None:
                on_result(results[i])
        out.append(results[i])
    return out


def handout_order(n: int, cost: Sequence[float] | None = None) -> list[int]:
    """Indices of ``n`` tasks in the order workers take them: decreasing ``cost``, ties (and no costs) in
    list order; deterministic, so the same tasks are handed out alike in every run."""
    if cost is None:
        return list(range(n))
    if len(cost) != n:
        raise ValueError(f"{len(cost)} costs for {n} tasks")
    return sorted(range(n), key=lambda i: (-cost[i], i))


def _run_forked(tasks: Sequence[Callable[[], object]], workers: int, order: list[int], results: dict[int, object],
                on_result: Callable[[object], None] | None, meanwhile: Callable[[], None]) -> None:
    """``results[i] = tasks[i]()`` on ``workers`` forked children, taking the tasks in ``order``; ``meanwhile``
    is called here once they started.  A task that failed, whose result cannot travel back, or that a child
    had when it died has no entry: the caller runs it."""
    queue_r, queue_w = os.pipe()
    data = b"".join(_INDEX.pack(i) for i in order)
    children: dict[int, int] = {}  # the read end of a child's result pipe -> its process id
    try:
        # The numbers are written without blocking, as many as the pipe takes, then more whenever it has room
        # while the results are read: a blocking write of more numbers than the pipe holds waited on workers
        # that waited in turn on this process to read their results (30,000 tasks hung).  Each write is whole
        # numbers of at most PIPE_BUF bytes, which a pipe writes at once or not at all.
        os.set_blocking(queue_w, False)
        data = _feed(queue_w, data)
        for _ in range(workers):
            result_r, result_w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: never returns
                os.close(result_r)
                os.close(queue_w)
                _work(tasks, queue_r, result_w)
            os.close(result_w)
            children[result_r] = pid
        data = _feed(queue_w, data)
        if not data:
            os.close(queue_w)  # the workers stop at the pipe's end
            queue_w = -1
        meanwhile()
        with selectors.DefaultSelector() as waiting:  # poll or epoll: no limit on the pipes' numbers
            for fd in children:
                waiting.register(fd, selectors.EVENT_READ)
            if queue_w >= 0:
                waiting.register(queue_w, selectors.EVENT_WRITE)
            while children:
                for key, _ in waiting.select():
                    fd = key.fd
                    if fd == queue_w:  # room in the pipe: more numbers, and its end once all are in
                        data = _feed(queue_w, data)
                        if not data:
                            waiting.unregister(queue_w)
                            os.close(queue_w)
                            queue_w = -1
                        continue
                    head = _read_exactly(fd, _SIZE.size)
                    body = _read_exactly(fd, _SIZE.unpack(head)[0]) if head is not None else None
                    if body is None:  # the child finished (or died): its pipe is at its end
                        waiting.unregister(fd)
                        os.close(fd)
                        os.waitpid(children.pop(fd), 0)
                        continue
                    i, ok, value = pickle.loads(body)
                    if ok:
                        results[i] = value
                        if on_result is not None:
                            on_result(value)
    finally:
        for fd in (queue_r, queue_w):
            if fd >= 0:
                os.close(fd)
        for fd, pid in children.items():  # an error here (an interrupt): the children stop too
            os.close(fd)
            try:
                os.kill(pid, signal.SIGTERM)
                os.waitpid(pid, 0)
            except OSError:
                pass


def _feed(fd: int, data: bytes) -> bytes:
    """Write task numbers to the non-blocking pipe ``fd`` until it is full; return what is left."""
    chunk = select.PIPE_BUF - select.PIPE_BUF % _INDEX.size
    while data:
        try:
            done = os.write(fd, data[:chunk])
        except BlockingIOError:
            break
        data = data[done:]
    return data


def _work(tasks: Sequence[Callable[[], object]], queue: int, out: int) -> None:
    """In a forked child: run the tasks whose numbers it reads from ``queue`` and write each result to
    ``out`` (``(i, False, None)`` when the task failed or its result cannot be pickled: the parent then runs
    it itself); end the process without the parent's exit handlers or its unflushed output."""
    code = 0
    try:
        while True:
            head = os.read(queue, _INDEX.size)
            if len(head) < _INDEX.size:
                break
            (i,) = _INDEX.unpack(head)
            try:
                body = pickle.dumps((i, True, tasks[i]()))
            except Exception:  # noqa: BLE001 - the parent re-runs the task and raises its real error
                body = pickle.dumps((i, False, None))
            view = memoryview(_SIZE.pack(len(body)) + body)
            while view:
                view = view[os.write(out, view):]
    except BaseException:  # noqa: BLE001 - the parent runs what this child did not send
        code = 1
    finally:
        os._exit(code)


def _read_exactly(fd: int, n: int) -> bytes | None:
    """``n`` bytes from ``fd``, or None at the pipe's end before any of them."""
    parts: list[bytes] = []
    while n:
        got = os.read(fd, n)
        if not got:
            if parts:
                raise OSError("a worker's result was cut short")
            return None
        parts.append(got)
        n -= len(got)
    return b"".join(parts)
