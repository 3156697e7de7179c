"""Verdicts: each proof method has a deliberately false twin that must come back refuted, with a
counterexample that really violates it; contradictions give inconsistent; no sympy shortcut proves
anything."""

from __future__ import annotations

import sympy as sp
import z3
from libtools import make_library

from derive import Assumption, Claim, Quantity, Step, derived, logic
from derive.checking.checker import Checker
from derive.kernel.problem import Problem
from derive.kernel.prover import decide
from derive.model.scenario import Scenario

SRC = derived("test")
x = Quantity("x", "x", "1", "a positive number")
y = Quantity("y", "y", "1", "another positive number")
z = Quantity("z", "z", "1", "a real number", domain="real")
X, Y, Z = x.sym, y.sym, z.sym


def check(*items, scenario: Scenario | None = None) -> dict:
    lib = make_library(x, y, z, *items)
    report = Checker(lib, scenario or Scenario("empty", {})).check()
    return report.by_id()


def positive(*syms):
    return [logic.gt(s, 0) for s in syms]


# --- z3 inequality ------------------------------------------------------------------------------------

def test_z3_inequality_and_false_twin():
    true = Claim("t.amgm", title="AM-GM", statement="s", source=SRC, goal=logic.ge(X**2 + Y**2, 2 * X * Y))
    false = Claim("t.amgm_false", title="twin", statement="s", source=SRC, goal=logic.ge(X**2 + Y**2, 3 * X * Y),
                  expected="refuted")
    res = check(true, false)
    assert res["t.amgm"].verdict == "proved" and res["t.amgm"].engine == "z3"
    r = res["t.amgm_false"]
    assert r.verdict == "refuted"
    point = {X: sp.Rational(r.counterexample["x"]), Y: sp.Rational(r.counterexample["y"])}
    assert not logic.ge(X**2 + Y**2, 3 * X * Y).evaluate(point)  # really violates it
    assert point[X] > 0 and point[Y] > 0  # and lies inside the assumptions


# --- sympy identity -----------------------------------------------------------------------------------

def test_sympy_identity_and_false_twin():
    true = Claim("t.square", title="square", statement="s", source=SRC,
                 goal=logic.eq((X + Y) ** 2, X**2 + 2 * X * Y + Y**2))
    false = Claim("t.square_false", title="twin", statement="s", source=SRC, goal=logic.eq((X + Y) ** 2, X**2 + Y**2),
                  expected="refuted")
    res = check(true, false)
    assert res["t.square"].verdict == "proved"
    assert res["t.square"].engine == "sympy" and res["t.square"].recheck.startswith("sympy expand")
    r = res["t.square_false"]
    assert r.verdict == "refuted"
    point = {X: sp.Rational(r.counterexample["x"]), Y: sp.Rational(r.counterexample["y"])}
    assert (point[X] + point[Y]) ** 2 != point[X] ** 2 + point[Y] ** 2


def test_identity_with_undefined_function_and_false_twin():
    f = sp.Function("f")
    feistel_inverse = (Y + f(X)) - f(X)
    true = Claim("t.feistel", title="inverse", statement="s", source=SRC, goal=logic.eq(feistel_inverse, Y))
    false = Claim("t.feistel_false", title="twin", statement="s", source=SRC, goal=logic.eq(Y + f(X) - f(Y), Y),
                  expected="refuted")
    res = check(true, false)
    assert res["t.feistel"].verdict == "proved" and res["t.feistel"].engine == "sympy"
    assert res["t.feistel_false"].verdict != "proved"


# --- derivation steps -------------------------------------------------------------------------------------

def test_expression_steps_each_checked_and_a_false_step_leaves_a_true_claim_unknown():
    """A false step shows the derivation wrong, not the claim: a true statement with a false step is unknown with
    the step and its point named, never refuted at a point where the statement holds."""
    good = Claim("t.chain", title="chain", statement="s", source=SRC, goal=logic.eq(X * (X + Y), X**2 + X * Y),
                 steps=(Step(X * X + X * Y, "distribute"),))
    bad = Claim("t.chain_false", title="chain", statement="s", source=SRC, goal=logic.eq(X * (X + Y), X**2 + X * Y),
                steps=(Step(X * X + 2 * X * Y, "a wrong step"), Step(X**2 + X * Y, "and back")), expected="unknown")
    res = check(good, bad)
    assert res["t.chain"].verdict == "proved"
    r = res["t.chain_false"]
    assert r.verdict == "unknown" and r.counterexample is None
    assert r.reason.startswith("derivation step 1 is false at ") and "proved without the derivation" in r.reason


def test_a_false_step_of_a_false_claim_refutes_it_at_a_point_of_the_statement():
    """The twin: the statement itself false, its derivation false too: refuted, with a counterexample that the
    kernel re-checks against the statement (not only the step)."""
    claim = Claim("t.chain_both_false", title="chain", statement="s", source=SRC,
                  goal=logic.eq(X * (X + Y), X**2 + 2 * X * Y),
                  steps=(Step(X * X + 3 * X * Y, "a wrong step"), Step(X**2 + 2 * X * Y, "and a wrong one")),
                  expected="refuted")
    r = check(claim)["t.chain_both_false"]
    assert r.verdict == "refuted"
    xv, yv = (sp.Rational(r.counterexample[n]) for n in ("x", "y"))
    assert xv * (xv + yv) != xv**2 + 2 * xv * yv


def test_a_step_outside_a_definitions_domain_leaves_a_claim_unknown_not_inconsistent():
    """The step's problem adds the domain of a definition it uses (d = z - 1 only for z < 0) to the claim's
    hypothesis z > 0: that contradiction is the step's, not the claim's (whose assumptions hold at z = 1)."""
    from derive import Definition

    dq = Quantity("dq", "d", "1", "a derived real", domain="real")
    d = Definition("t.d", title="d", statement="s", source=SRC, defines=dq, expr=Z - 1, domain=logic.lt(Z, 0))
    claim = Claim("t.outside", title="outside", statement="s", source=SRC, hypotheses=(logic.gt(Z, 0),),
                  goal=logic.gt(Z + 1, Z), steps=(Step(logic.gt(Z + 1, Z)), Step(logic.gt(dq.sym + 2, Z))),
                  expected="unknown")
    r = check(dq, d, claim)["t.outside"]
    assert r.verdict == "unknown", r.reason
    assert "contradict each other where the claim's own do not" in r.reason


def test_relation_steps_iff_chain():
    claim = Claim(
        "t.solve", title="solve", statement="s", source=SRC,
        goal=logic.Iff(logic.ge(2 * X, Y), logic.ge(X, Y / 2)),
        steps=(Step(logic.eq(2 * X, Y), "start", link="iff"), Step(logic.eq(X, Y / 2), "halve", link="iff")),
    )
    wrong = Claim(
        "t.solve_false", title="solve", statement="s", source=SRC,
        goal=logic.Iff(logic.ge(2 * X, Y), logic.ge(X, Y / 2)),
        steps=(Step(logic.eq(2 * X, Y), "start", link="iff"), Step(logic.eq(X, Y / 3), "wrong", link="iff")),
        expected="unknown",
    )
    res = check(claim, wrong)
    assert res["t.solve"].verdict == "proved"
    assert res["t.solve_false"].verdict == "unknown" and "derivation step 1 is false" in res["t.solve_false"].reason


# --- interval engine --------------------------------------------------------------------------------------

def test_interval_engine_and_false_twin():
    bounds = ((x, 0, 3),)
    half = sp.Rational(1, 2)
    true = Claim("t.exp", title="exp", statement="s", source=SRC, goal=logic.ge(sp.exp(X), half + X), bounds=bounds)
    false = Claim("t.exp_false", title="twin", statement="s", source=SRC, goal=logic.ge(half + X, sp.exp(X)),
                  bounds=bounds, expected="refuted")
    res = check(true, false)
    assert res["t.exp"].verdict == "proved" and res["t.exp"].engine == "interval"
    r = res["t.exp_false"]
    assert r.verdict == "refuted"
    v = sp.Rational(r.counterexample["x"])
    assert half + v < sp.exp(v)


def test_interval_engine_is_honest_at_a_tight_point():
    # exp(x) >= 1 + x touches at x = 0: plain interval arithmetic cannot close the boxes there.
    claim = Claim("t.exp_tight", title="exp", statement="s", source=SRC, goal=logic.ge(sp.exp(X), 1 + X),
                  bounds=((x, 0, 3),), expected="unknown")
    r = check(claim)["t.exp_tight"]
    assert r.verdict in ("unknown", "proved")  # never refuted
    assert r.verdict != "refuted"


def test_interval_engine_needs_bounds():
    claim = Claim("t.exp_unbounded", title="exp", statement="s", source=SRC, goal=logic.ge(sp.exp(X), 1 + X),
                  expected="unknown")
    r = check(claim)["t.exp_unbounded"]
    assert r.verdict == "unknown" and "bounds" in r.reason


# --- consistency and honesty --------------------------------------------------------------------------------

def test_contradictory_assumptions_are_inconsistent_never_proved():
    a = Assumption("t.small", title="small", statement="s", source=SRC, relation=logic.lt(X, 1))
    b = Assumption("t.large", title="large", statement="s", source=SRC, relation=logic.gt(X, 2))
    claim = Claim("t.anything", title="anything", statement="s", source=SRC, goal=logic.eq(X, 42), uses=(a, b),
                  expected="inconsistent")
    r = check(a, b, claim)["t.anything"]
    assert r.verdict == "inconsistent"


def test_contradictory_hypotheses_even_for_sympy_identities():
    claim = Claim("t.vacuous", title="vacuous", statement="s", source=SRC, goal=logic.eq(X + Y, Y + X),
                  hypotheses=(logic.lt(X, 0),), expected="inconsistent")  # x is declared positive
    assert check(claim)["t.vacuous"].verdict == "inconsistent"


def test_sympy_assumption_shortcut_cannot_prove():
    # With sympy's own assumptions, sqrt(z**2) == z would be settled by sympy for a positive symbol.
    # Our symbols carry no assumptions: with z real (not positive) the claim must be refuted.
    claim = Claim("t.sqrt_sq", title="sqrt", statement="s", source=SRC, goal=logic.eq(sp.sqrt(Z**2), Z),
                  expected="refuted")
    r = check(claim)["t.sqrt_sq"]
    assert r.verdict == "refuted"
    assert sp.Rational(r.counterexample["z"]) < 0
    # ... and the same claim over a positive quantity is proved, by z3, not by a sympy shortcut.
    pos = Claim("t.sqrt_sq_pos", title="sqrt", statement="s", source=SRC, goal=logic.eq(sp.sqrt(X**2), X))
    r = check(pos)["t.sqrt_sq_pos"]
    assert r.verdict == "proved" and r.engine == "z3"


def test_symbols_have_no_sympy_assumptions():
    assert X.is_positive is None
    assert logic.gt(X, 0) != True  # noqa: E712 - a Rel is never collapsed to a bool by sympy


def test_positive_symbol_from_outside_is_rejected():
    sneaky = sp.Symbol("x", positive=True)
    problem = Problem([], logic.gt(sneaky, 0))
    out = decide(problem)
    assert out.verdict == "unknown"


def test_division_by_possibly_zero_denominator_is_unknown():
    # true wherever it is defined, but undefined at z = 0: never proved
    claim = Claim("t.div", title="div", statement="s", source=SRC, goal=logic.ge((Y / Z) ** 2, 0), expected="unknown")
    r = check(claim)["t.div"]
    assert r.verdict == "unknown" and "denominator" in r.reason
    # false at a point where it is defined: refuted there (z != 0), never at the pole
    false = Claim("t.div2", title="div", statement="s", source=SRC, goal=logic.ge(Y / Z, 0), expected="refuted")
    r = check(false)["t.div2"]
    assert r.verdict == "refuted" and sp.Rational(r.counterexample["z"]) != 0


def test_floats_are_refused():
    out = decide(Problem([], logic.ge(X, sp.Float(0.1))))
    assert out.verdict == "unknown" and "floating-point" in out.reason


def test_rlimit_gives_deterministic_unknown():
    # A hard nonlinear goal under a tiny resource limit: unknown, and the same reason twice.
    goal = logic.ge(X**7 * Y**5 - 3 * X**3 * Y**2 + X * Y, -sp.Rational(1, 10**6))
    a = decide(Problem(positive(X, Y), goal, rlimit=1000))
    b = decide(Problem(positive(X, Y), goal, rlimit=1000))
    assert a == b
    assert a.verdict in ("unknown", "proved", "refuted")


def test_refuted_counterexample_is_exactly_rechecked():
    goal = logic.lt(X * X, 2)
    out = decide(Problem(positive(X), goal))
    assert out.verdict == "refuted" and out.recheck == "exact"
    v = out.counterexample["x"]
    assert v * v >= 2


def test_a_counterexample_only_at_an_irrational_point_is_unknown_and_says_so():
    """x**2 != 2 fails only at x = sqrt(2): z3 finds it, the kernel re-checks rationals only, so the verdict is
    unknown and the reason names the irrational value (not "the goal holds there" alone, which read as if z3's
    point were no counterexample); the rational twin x**2 != 4 is refuted at exactly 2."""
    irrational = decide(Problem(positive(X), logic.ne(X**2, 2)))
    assert irrational.verdict == "unknown"
    assert "irrational (x ≈ 1.414213562)" in irrational.reason and "exact rationals only" in irrational.reason
    rational = decide(Problem(positive(X), logic.ne(X**2, 4)))
    assert rational.verdict == "refuted" and rational.counterexample == {"x": 2}


def test_a_rational_model_point_is_never_called_rounded():
    from derive.kernel.trusted import Kernel

    k = Kernel(Problem(positive(X), logic.lt(X, 3)))
    status, point, _ = k.z3_goal()
    assert status == "sat" and k.rounded(point) == [] and k.rounded({X: sp.Integer(7)}) == []
    k = Kernel(Problem(positive(X), logic.ne(X**2, 2)))
    status, point, _ = k.z3_goal()
    assert status == "sat" and k.rounded(point) == [X]
    assert k.rounded({X: sp.Integer(1)}) == []  # another point: not z3's


def test_z3_translation_is_exact():
    from derive.kernel.translate import Translator, make_variables

    tr = Translator(make_variables({X}))
    e = tr.expr(sp.Rational(1, 3) * X)
    s = z3.Solver()
    s.add(tr.variables[X] == 3, e != 1)
    assert s.check() == z3.unsat


def test_interval_engine_never_proves_from_unsatisfiable_hypotheses():
    claim = Claim("t.exp_vacuous", title="exp", statement="s", source=SRC, goal=logic.ge(X, sp.exp(X)),
                  hypotheses=(logic.gt(X, 5),), bounds=((x, 0, 3),), expected="unknown")
    r = check(claim)["t.exp_vacuous"]
    assert r.verdict != "proved"
