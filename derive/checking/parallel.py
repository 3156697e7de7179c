"""Independent tasks on forked worker processes, results in order.

Used for the claims of a large check and for the drawing phase of a build.  Fork (not spawn) so a
child inherits the loaded library and scenario instead of pickling them; only results travel back.
Where fork is unavailable, or z3's global context exists in this process (a child must not inherit
solver state), or a child fails, the tasks run here, one after the other: the same results, and a
task's own error (a ``DeriveError`` with its hint) is raised as if it had always run serially.
"""

from __future__ import annotations

import gc
import os
import pickle
from collections.abc import Callable, Sequence

_TASKS: Sequence[Callable[[], object]] = ()


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
    import multiprocessing

    import z3

    return "fork" in multiprocessing.get_all_start_methods() and getattr(z3.z3, "_main_ctx", None) is None


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
    if len(tasks) > 1 and workers > 1 and can_fork():
        import multiprocessing

        global _TASKS
        _TASKS = tasks
        gc.freeze()  # the children inherit the heap: the collector need not walk (and copy) it in each
        try:
            with multiprocessing.get_context("fork").Pool(min(workers, len(tasks))) as pool:
                arriving = pool.imap_unordered(_run_task, handout_order(len(tasks), cost))  # the workers start
                if meanwhile is not None:
                    meanwhile, later = None, meanwhile
                    later()
                for i, ok, value in arriving:
                    if ok:
                        results[i] = value
                        if on_result is not None:
                            on_result(value)
        except (OSError, RuntimeError, EOFError):
            pass  # no worker processes on this system: the rest runs below
        finally:
            gc.unfreeze()
            _TASKS = ()
    if meanwhile is not None:
        meanwhile()
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


def _run_task(i: int) -> tuple[int, bool, object]:
    """In a forked child: ``(i, True, result)``, or ``(i, False, None)`` when the task failed or its result
    cannot travel back (the parent then runs it itself)."""
    try:
        value = _TASKS[i]()
        pickle.dumps(value)
    except Exception:  # noqa: BLE001 - the parent re-runs the task and raises its real error
        return i, False, None
    return i, True, value
