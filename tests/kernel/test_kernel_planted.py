"""The planted suite (tests/kernel/planted.py): claims of known truth through ``decide``.

One module-scoped run decides every case; the tests then read the results.  Asserted: no claim that
is not true is ``proved``; no claim that is not false is ``refuted``; every counterexample passes a
fresh kernel's re-check *and* an independent high-precision evaluation; no internal errors; every claim
within its budget; and the engines stay useful (most true claims proved, most false ones refuted).
"""

from __future__ import annotations

import time
from collections import Counter

import mpmath
import pytest
import sympy as sp
from planted import cases

from derive.kernel.prover import decide
from derive.kernel.trusted import Kernel

CASES = cases()
SECONDS_PER_CLAIM = 20  # far above any deterministic budget's cost here: a hang, not a slow claim


@pytest.fixture(scope="module")
def results():
    out = {}
    for c in CASES:
        start = time.perf_counter()
        outcome = decide(c.problem)
        out[c.id] = (outcome, time.perf_counter() - start)
    return out


def test_suite_size():
    truth = Counter(c.truth for c in CASES)
    assert truth["true"] >= 300 and truth["false"] >= 300
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_verdict_is_never_wrong(results, case):
    outcome, seconds = results[case.id]
    assert "internal error" not in (outcome.reason or ""), outcome.reason
    assert seconds < SECONDS_PER_CLAIM
    if case.truth != "true":
        assert outcome.verdict != "proved", outcome
    if case.truth != "false":
        assert outcome.verdict != "refuted", outcome
    if case.truth == "true":
        assert outcome.verdict != "inconsistent", outcome
    if outcome.verdict == "unknown":
        assert outcome.reason
    if outcome.verdict == "refuted":
        point = {s: sp.Rational(outcome.counterexample[str(s)]) for s in case.problem.symbols()}
        assert Kernel(case.problem).counterexample_failure(point) is None
        assert _independently_false(case.problem, point)


def test_engines_stay_decisive(results):
    """A checker that answered ``unknown`` to everything would pass the test above: not this one."""
    hits = Counter()
    for c in CASES:
        hits[(c.truth, results[c.id][0].verdict == c.ideal)] += 1
    for truth in ("true", "false", "inconsistent", "meaningless"):
        total = hits[(truth, True)] + hits[(truth, False)]
        assert hits[(truth, True)] >= 0.95 * total, (truth, hits)


def _independently_false(problem, point) -> bool:
    """The hypotheses hold and the goal fails at ``point`` by plain 60-digit evaluation (no kernel code)."""
    with mpmath.workdps(60):
        def holds(f):
            from derive.kernel.logic import And, Implies, Not, Or, Rel
            if isinstance(f, Rel):
                lhs = sp.N(f.lhs.xreplace(point), 60)
                rhs = sp.N(f.rhs.xreplace(point), 60)
                d = lhs - rhs
                if not d.is_real:
                    raise ValueError("not real")
                tol = sp.Float(10) ** -40 * max(abs(lhs), abs(rhs))  # relative: values may be tiny
                sign = 0 if abs(d) <= tol else (1 if d > 0 else -1)
                return {"==": sign == 0, "!=": sign != 0, "<": sign < 0, "<=": sign <= 0, ">": sign > 0,
                        ">=": sign >= 0}[f.op]
            if isinstance(f, And):
                return all(holds(a) for a in f.args)
            if isinstance(f, Or):
                return any(holds(a) for a in f.args)
            if isinstance(f, Not):
                return not holds(f.arg)
            if isinstance(f, Implies):
                return (not holds(f.premise)) or holds(f.conclusion)
            raise TypeError(f)
        for s, (lo, hi) in problem.bounds.items():
            if s in point and not (lo <= point[s] <= hi):
                return False
        if any(not point[s].is_integer for s in problem.integer if s in point):
            return False
        return all(holds(h) for h in problem.hypotheses) and not holds(problem.goal)
