"""Worker processes of a large check (``derive.checking.parallel``): results in order, and the caller's
own work done while the workers run."""

from __future__ import annotations

import functools
import math
import os
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.checking.parallel import can_fork, handout_order, run_tasks


def _square(n: int) -> tuple[int, int]:
    return n * n, os.getpid()


@pytest.mark.parametrize("workers", [1, 2])
def test_results_come_back_in_order_and_meanwhile_runs_once_here(workers):
    events: list[tuple[str, int]] = []
    tasks = [functools.partial(_square, n) for n in range(6)]
    out = run_tasks(tasks, workers, on_result=lambda r: events.append(("result", r[0])),
                    meanwhile=lambda: events.append(("meanwhile", os.getpid())))
    assert [r[0] for r in out] == [0, 1, 4, 9, 16, 25]
    assert [e for e in events if e[0] == "meanwhile"] == [("meanwhile", os.getpid())]
    assert sorted(v for kind, v in events if kind == "result") == [0, 1, 4, 9, 16, 25]
    if workers == 1 or not can_fork():  # here: the caller's work first, then the tasks
        assert events[0][0] == "meanwhile" and {pid for _, pid in out} == {os.getpid()}
    else:
        assert os.getpid() not in {pid for _, pid in out}


def test_a_check_calls_meanwhile_once_whether_or_not_it_forks():
    from derive.checking.checker import Checker
    from derive.model.loader import load_library
    from derive.model.scenario import build_scenario

    lib = load_library(["lecture"])
    calls: list[int] = []
    claims = [c.id for c in lib.claims()][:3]
    for workers in (1, 2):
        Checker(lib, build_scenario(lib), workers=workers).check(claims, meanwhile=lambda: calls.append(1))
    assert calls == [1, 1]


def test_a_parallel_check_gives_each_step_its_formula_as_a_serial_one_does():
    from derive.checking.checker import Checker
    from derive.model.loader import load_library
    from derive.model.scenario import build_scenario

    lib = load_library(["lecture"])
    claims = [c.id for c in lib.claims() if c.steps][:20]  # 20 claims with derivations: more than a chunk each
    serial = Checker(lib, build_scenario(lib), workers=1).check(claims).by_id()
    parallel = Checker(lib, build_scenario(lib), workers=2).check(claims).by_id()
    for cid in claims:
        steps = [(s.index, s.formula, s.outcome.verdict) for s in serial[cid].steps]
        assert steps and [(s.index, s.formula, s.outcome.verdict) for s in parallel[cid].steps] == steps


def _started(n: int) -> tuple[int, float, int]:
    start = time.monotonic()
    time.sleep(0.05)  # long enough that a worker is busy while the next task is handed out
    return n, start, os.getpid()


def test_handout_order_is_decreasing_cost_with_ties_in_list_order():
    assert handout_order(4) == [0, 1, 2, 3]
    assert handout_order(5, [1, 3, 2, 3, math.inf]) == [4, 1, 3, 2, 0]
    assert handout_order(3, [2.0, 2.0, 2.0]) == [0, 1, 2]
    with pytest.raises(ValueError, match="2 costs for 3 tasks"):
        handout_order(3, [1, 2])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=5), max_size=30))
def test_handout_order_is_a_permutation_sorted_by_cost(costs):
    order = handout_order(len(costs), costs)
    assert sorted(order) == list(range(len(costs)))
    assert [(-costs[i], i) for i in order] == sorted((-c, i) for i, c in enumerate(costs))


@pytest.mark.parametrize("workers", [1, 2])
def test_costly_tasks_are_handed_out_first_and_results_come_back_in_list_order(workers):
    cost = [1, 1, 1, 1, 1, 9]  # a planted slow task, last in the list
    tasks = [functools.partial(_started, n) for n in range(6)]
    out = run_tasks(tasks, workers, cost=cost)
    assert [r[0] for r in out] == list(range(6))
    start = {n: t for n, t, _ in out}
    if workers > 1 and can_fork():  # handed out first, it starts before the cheap tasks handed out after it
        assert start[5] < min(start[n] for n in (2, 3, 4))
    else:  # here: in the list's order
        assert sorted(start, key=start.get) == list(range(6))


def test_a_check_hands_out_its_largest_chunks_first_and_keeps_library_order():
    from derive.checking.checker import Checker
    from derive.model.loader import load_library
    from derive.model.scenario import build_scenario

    lib = load_library(["lecture"])
    claims = [c.id for c in lib.claims()][:40]
    serial = Checker(lib, build_scenario(lib), workers=1).check(claims)
    parallel = Checker(lib, build_scenario(lib), workers=2).check(claims)
    assert [r.id for r in parallel.results] == [r.id for r in serial.results] == claims
    assert [(r.verdict, r.reason, r.counterexample) for r in parallel.results] == \
        [(r.verdict, r.reason, r.counterexample) for r in serial.results]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_check_hands_alongside_each_claim_with_its_own_result_in_the_process_that_checked_it(workers):
    from derive.checking.checker import Checker
    from derive.model.loader import load_library
    from derive.model.scenario import build_scenario

    lib = load_library(["lecture"])
    claims = [c.id for c in lib.claims()][:20]  # enough claims to fork for
    checker = Checker(lib, build_scenario(lib), workers=workers)
    report = checker.check(claims, alongside=lambda c, r: (c.id, r.id, r.own_verdict, os.getpid()))
    values = checker.alongside_values
    assert set(claims) <= set(values)  # every claim checked (those it rests on too) has its value
    for r in report.results:
        cid, rid, verdict, pid = values[r.id]  # type: ignore[misc]
        assert cid == rid == r.id and verdict == r.own_verdict
        assert (pid == os.getpid()) == (workers == 1 or not can_fork())
    again = Checker(lib, build_scenario(lib), workers=workers)
    again.check(claims[:2], alongside=lambda c, r: c.id)
    assert set(again.alongside_values) >= set(claims[:2]) and not set(again.alongside_values) - set(values)


def _exits_in_a_worker(n: int, parent: int) -> tuple[int, int]:
    if os.getpid() != parent:
        os._exit(3)  # a worker that dies in the middle of a task, its result never sent
    return n * n, os.getpid()


def _unpicklable(n: int) -> tuple[int, object]:
    return n * n, lambda: n  # a result that cannot travel back from a worker


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_a_task_whose_worker_dies_or_whose_result_cannot_travel_runs_here(workers):
    here = os.getpid()
    tasks = [functools.partial(_square, n) for n in range(5)]
    tasks += [functools.partial(_exits_in_a_worker, 5, here), functools.partial(_unpicklable, 6)]
    tasks += [functools.partial(_square, n) for n in range(7, 12)]
    seen: list[int] = []
    calls: list[int] = []
    out = run_tasks(tasks, workers, on_result=lambda r: seen.append(r[0]), meanwhile=lambda: calls.append(1))
    assert [r[0] for r in out] == [n * n for n in range(12)]
    assert sorted(seen) == [n * n for n in range(12)] and calls == [1]  # each result once, meanwhile once
    assert out[5][1] == here and out[6][1]() == 6  # both ran here


def test_many_tasks_pass_through_the_shared_pipe_in_order():
    tasks = [functools.partial(_square, n) for n in range(3000)]  # more numbers than a pipe takes at once
    assert [r[0] for r in run_tasks(tasks, 2, cost=[n % 7 for n in range(3000)])] == [n * n for n in range(3000)]


def test_more_tasks_than_the_pipes_hold_do_not_wait_on_each_other():
    """30,000 task numbers are more than a pipe holds (64 KiB), and their results more than a worker's result pipe
    holds: the numbers are fed as the pipe has room while the results are read (a blocking feed had hung)."""
    import signal

    class Hung(Exception):  # not an OSError, which run_tasks reads as "no worker processes" and runs serially
        pass

    def hung(*_):
        raise Hung("run_tasks hung")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(30)
    try:
        n = 30_000
        out = run_tasks([functools.partial(_square, k) for k in range(n)], 2)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert [r[0] for r in out] == [k * k for k in range(n)]
