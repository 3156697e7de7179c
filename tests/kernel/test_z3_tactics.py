"""How z3 is run (``derive.kernel.z3_tactics``) never decides what its answers mean.

A query over integer quantities goes to nlsat first, which reads their integrality itself, on a small share
of the rlimit; its ``sat`` is provisional (z3's solver gives the model).  Claims that need integrality to
hold are proved, their false twins refuted at integer points, an integer equation nlsat cannot settle
within its share is still decided, and the plain solver the kernel uses by default gives the same verdicts.
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
    # holds over the reals
    ([logic.gt(n, 0), logic.ge(m, n * n)], logic.ge(m + 1, n * n), {n, m}, True),
    ([logic.gt(n, 0), logic.ge(m, n * n)], logic.ge(m, n * n + 1), {n, m}, False),
    # holds only because n is an integer (n > 0 means n >= 1)
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


def test_nlsat_comes_first_with_integer_quantities_on_a_smaller_share():
    from derive.kernel import z3_tactics

    tactics = TacticSolver()
    roles = [role for _, role in tactics.attempts(rlimit=10**6, integer=True, linear_integer=False, roots=False,
                                                  alone=False)]
    assert roles == ["provisional", "final"]
    region = [role for _, role in tactics.attempts(rlimit=10**6, integer=True, linear_integer=False, roots=False,
                                                   alone=True)]
    assert region == ["provisional", "final"]
    reals = [role for _, role in tactics.attempts(rlimit=10**6, integer=False, linear_integer=False, roots=False,
                                                  alone=False)]
    assert reals == ["provisional", "final", "final"]
    assert z3_tactics.NLSAT_INTEGER_SHARE < z3_tactics.NLSAT_SHARE


def test_an_integer_equation_nlsat_cannot_settle_is_still_decided():
    """3n + 6m = 5 has no integer solution and no bound: nlsat branches until its share is spent, then z3's
    solver shows it (and its twin with a solution is refuted at integer values)."""
    out = decide(Problem([], logic.Not(logic.eq(3 * n + 6 * m, 5)), {n, m}))
    assert out.verdict == "proved", out.reason
    twin = decide(Problem([], logic.Not(logic.eq(3 * n + 6 * m, 9)), {n, m}))
    assert twin.verdict == "refuted"
    assert 3 * twin.counterexample["n"] + 6 * twin.counterexample["m"] == 9


def test_a_provisional_sat_never_refutes_a_true_claim(monkeypatch):
    """nlsat answering (wrongly) sat with a non-integer model must not refute a true claim: where a model is
    wanted the gate asks the final solver, and the kernel re-checks every point."""
    class Lying(TacticSolver):
        def attempts(self, **kw):
            for make, role in super().attempts(**kw):
                if role == "provisional" and not kw["alone"]:  # the goal's queries
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


# n² + n is even for every whole n: true, but beyond what z3 settles on nonlinear integers (Mod read as a floor)
PARITY = Problem([logic.gt(n, 0)], logic.eq(sp.Mod(n**2 + n, 2), 0), {n})


def test_an_unknown_stopped_by_the_wall_clock_says_so(monkeypatch):
    """z3 answers "canceled" both where its rlimit and where its wall clock stopped it; the reason names the one
    that did (it said "resource limit reached" for the safety net, so a user would raise --rlimit for nothing)."""
    import derive.kernel.z3_tactics as tactics

    monkeypatch.setattr(tactics, "Z3_SAFETY_MS", 3_000)
    out = decide(PARITY)
    assert out.verdict == "unknown"
    assert "z3's wall-clock safety net (3 s for a goal) reached" in out.reason and "rlimit" not in out.reason


def test_an_unknown_stopped_by_the_rlimit_says_so():
    out = decide(Problem(PARITY.hypotheses, PARITY.goal, PARITY.integer, rlimit=300_000))
    assert out.verdict == "unknown"
    assert "z3 resource limit (rlimit 300000) reached" in out.reason and "wall-clock" not in out.reason
