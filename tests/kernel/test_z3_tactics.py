"""How z3 is run (``derive.kernel.z3_tactics``) never decides what its answers mean.

A goal over integer quantities is first asked over the reals (the integrality left out), in a z3 context
of its own: its ``unsat`` is the query's, its ``sat`` is never read.  Claims that need integrality to hold
are still proved, their false twins refuted at integer points, and the plain solver the kernel uses by
default gives the same verdicts.
"""

from __future__ import annotations

import pytest
import sympy as sp
import z3

from derive.kernel import logic
from derive.kernel.problem import Problem
from derive.kernel.prover import decide
from derive.kernel.trusted import Kernel, PlainZ3
from derive.kernel.z3_tactics import TacticSolver

n, m, x = sp.symbols("n m x")
R = sp.Rational

# (hypotheses, goal, integer quantities, true?): each true claim next to its false twin
CASES = [
    # holds over the reals: the relaxed attempt proves it
    ([logic.gt(n, 0), logic.ge(m, n * n)], logic.ge(m + 1, n * n), {n, m}, True),
    ([logic.gt(n, 0), logic.ge(m, n * n)], logic.ge(m, n * n + 1), {n, m}, False),
    # holds only because n is an integer (n > 0 means n >= 1): the full query proves it
    ([logic.gt(n, 0), logic.gt(x, 0)], logic.ge(n * x, x), {n}, True),
    ([logic.gt(n, 0), logic.gt(x, 0)], logic.ge(n * x, 2 * x), {n}, False),
    ([logic.gt(n * m, 0), logic.gt(n, 0)], logic.ge(n * m, 1), {n, m}, True),
    ([logic.gt(n * m, 0), logic.gt(n, 0)], logic.ge(n * m, 2), {n, m}, False),
]


@pytest.mark.parametrize("hyps, goal, integer, true", CASES, ids=[str(c[1]) for c in CASES])
def test_integer_goals_keep_their_verdicts(hyps, goal, integer, true):
    out = decide(Problem(list(hyps), goal, set(integer)))
    assert out.verdict == ("proved" if true else "refuted"), out.reason
    if not true:
        point = {s: out.counterexample[str(s)] for s in goal.free_symbols()}
        assert all(point[s].is_integer for s in integer if s in point)
        assert not goal.evaluate(point)


@pytest.mark.parametrize("hyps, goal, integer, true", CASES, ids=[str(c[1]) for c in CASES])
def test_the_plain_solver_agrees(hyps, goal, integer, true):
    k = Kernel(Problem(list(hyps), goal, set(integer)), PlainZ3())
    status, _, _ = k.z3_goal()
    assert (status == "unsat") == true


def test_the_relaxed_attempt_comes_first_for_a_goal_over_counts_only():
    tactics = TacticSolver()
    roles = [role for _, role in tactics.attempts(rlimit=10**6, integer=True, linear_integer=False, roots=False,
                                                  alone=False)]
    assert roles == ["relaxed", "final"]
    region = [role for _, role in tactics.attempts(rlimit=10**6, integer=True, linear_integer=False, roots=False,
                                                   alone=True)]
    assert region == ["final"]  # the region wants a model: an integer one
    reals = [role for _, role in tactics.attempts(rlimit=10**6, integer=False, linear_integer=False, roots=False,
                                                  alone=False)]
    assert reals == ["provisional", "final", "final"]


def test_a_relaxed_sat_is_never_read(monkeypatch):
    """A relaxed attempt that (wrongly) answered sat with a non-integer model must not refute a true claim."""
    class Lying(TacticSolver):
        def attempts(self, **kw):
            for make, role in super().attempts(**kw):
                if role == "relaxed":
                    def sat_solver(ctx, make=make):
                        s = make(ctx)
                        s.check = lambda *a: z3.sat  # type: ignore[method-assign]
                        return s
                    yield sat_solver, role
                else:
                    yield make, role

    hyps, goal, integer, _ = CASES[2]
    k = Kernel(Problem(list(hyps), goal, set(integer)), Lying())
    assert k.z3_goal()[0] == "unsat"
    assert k.proved("z3").verdict == "proved"
