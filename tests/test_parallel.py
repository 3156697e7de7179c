"""Worker processes of a large check (``derive.checking.parallel``): results in order, and the caller's
own work done while the workers run."""

from __future__ import annotations

import functools
import os

import pytest

from derive.checking.parallel import can_fork, run_tasks


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
