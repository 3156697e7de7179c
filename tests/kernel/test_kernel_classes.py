"""One minimal test per class of issue 13 (verdicts that lied, crashed or hung)."""

from __future__ import annotations

import sympy as sp

from derive import Assumption, Claim, Definition, Quantity, derived, logic
from derive.checking.checker import Checker
from derive.kernel.problem import Problem
from derive.kernel.prover import decide
from derive.kernel.trusted import Kernel
from derive.model.declarations import Topic
from derive.model.library import Library
from derive.model.scenario import Scenario, ScenarioValue

R = sp.Rational
p, u, x, m, a, k, t = sp.symbols("p u x m a k t")
SRC = derived("test")


def run(hyps, goal, **kw):
    return decide(Problem(list(hyps), goal, set(kw.get("integer", ())), dict(kw.get("bounds", {})), 2_000_000, 0))


def confirmed(problem_hyps, goal, out, **kw):
    kern = Kernel(Problem(list(problem_hyps), goal, set(kw.get("integer", ())), dict(kw.get("bounds", {}))))
    point = {s: out.counterexample[str(s)] for s in kern.symbols}
    return kern.counterexample_failure(point) is None


def test_floats_on_the_identity_route_are_refused_not_folded():
    for goal in (logic.eq(p + 1e-20 * p, p), logic.eq(p * 0.1, p * (R(1, 10) + R(1, 10**18)))):
        out = run([logic.gt(p, 0)], goal)
        assert out.verdict == "unknown" and "float" in out.reason


def test_interval_engine_respects_side_conditions():
    for goal, lo in ((logic.gt(sp.exp(u) + 1 / (u - 2) ** 2, 0), 1), (logic.gt(sp.exp(u) / (u - 2), 0), 2),
                     (logic.lt(sp.log(u - 2), 10), 2)):
        out = run([], goal, bounds={u: (R(lo), R(4))})
        assert out.verdict == "unknown", (goal, out)
    out = run([], logic.lt(sp.log(u - 2), 10), bounds={u: (R(3), R(4))})
    assert out.verdict == "proved" and out.engine == "interval" and out.side_conditions


def test_integer_quantity_with_exp_is_inconsistent_and_counterexamples_are_integers():
    out = run([logic.gt(m, 1), logic.lt(m, 2)], logic.gt(sp.exp(m), 1), integer={m})
    assert out.verdict == "inconsistent"
    out = run([], logic.ge(sp.exp(m), 3 * m), integer={m}, bounds={m: (R(0), R(5))})
    assert out.verdict == "refuted" and sp.Rational(out.counterexample["m"]).is_integer


def test_identity_route_checks_denominators_without_z3():
    goal = logic.eq(sp.exp(x) * (p**2 - 4) / (p - 2), sp.exp(x) * (p + 2))
    assert run([logic.gt(p, 0)], goal).verdict == "unknown"
    assert run([logic.gt(p, 2)], goal).verdict == "proved"


def test_bounds_mean_the_same_for_every_engine():
    b = {u: (R(1, 10), R(10))}
    assert run([logic.gt(u, 0)], logic.le(u**2, 100), bounds=b).verdict == "proved"
    out = run([logic.gt(u, 0)], logic.le(u**2 * sp.exp(u - u + 0 * u), 100), bounds=b)
    assert out.verdict == "proved"
    out = run([logic.gt(u, 0)], logic.le(u**2 + sp.exp(-u) - sp.exp(-u), 99), bounds=b)
    assert out.verdict == "refuted" and sp.Rational(out.counterexample["u"]) <= 10


def test_search_stays_inside_bounds_and_integrality():
    goal = logic.eq(sp.exp(m * x), sp.exp(m) * x)  # z3 cannot express it: the search refutes it
    out = run([], goal, integer={m}, bounds={m: (R(3), R(7)), x: (R(1, 2), R(2))})
    assert out.verdict == "refuted"
    mv, xv = sp.Rational(out.counterexample["m"]), sp.Rational(out.counterexample["x"])
    assert mv.is_integer and 3 <= mv <= 7 and R(1, 2) <= xv <= 2


def test_crashes_become_unknown_or_verdicts():
    assert run([], logic.lt(sp.exp(1), sp.E + R(1, 10**36))).verdict == "proved"
    assert run([], logic.lt(sp.exp(1), sp.E + 1e-36)).verdict == "unknown"
    out = run([], logic.le(u, 100), bounds={u: (R(10), R(1, 10))})
    assert out.verdict == "unknown" and "high-to-low" in out.reason


def test_symbolic_exponent_ends_within_budget():
    goal = logic.le((1 - a ** (k + 1)) / (1 - a), k + 1)
    hyps = [logic.gt(a, 0), logic.lt(a, 1), logic.ge(k, 0)]
    out = run(hyps, goal, bounds={a: (R(1, 10), R(9, 10)), k: (R(0), R(50))})
    assert out.verdict in ("unknown", "proved") and out.verdict != "refuted"


def test_within_percent_with_a_negative_target():
    assert run([logic.eq(x, -100)], logic.within_percent(x, -100, 5)).verdict == "proved"
    assert run([logic.eq(x, -104)], logic.within_percent(x, -100, 5)).verdict == "proved"
    assert run([logic.eq(x, -106)], logic.within_percent(x, -100, 5)).verdict == "refuted"
    assert run([logic.eq(x, -110)], logic.within_factor(x, -100, R(6, 5))).verdict == "proved"


# --- checker level --------------------------------------------------------------------------------

qa = Quantity("qa", "a", "1", "a")
qb = Quantity("qb", "b", "1", "b")
qd = Quantity("qd", "d", "1", "d")
qz = Quantity("qz", "z", "1", "z", domain="real")
d_def = Definition("t.d", title="d", statement="s", source=SRC, defines=qd, expr=qa.sym * qb.sym)


def lib(*decls):
    return Library([Topic("t", "t", "", (qa, qb, qz), (d_def, *decls))])


def test_forall_over_a_derived_quantity_is_not_expanded():
    claim = Claim("t.inst", title="inst", statement="s", source=SRC, goal=logic.le(qd.sym, 10), instance=True,
                  forall=(qd,), expected="refuted")
    scen = Scenario("s", {"qa": ScenarioValue("qa", R(2), "test"), "qb": ScenarioValue("qb", R(3), "test")})
    res = Checker(lib(claim), scen).check().by_id()["t.inst"]
    assert res.verdict == "refuted", res.reason


def test_blocking_follows_assumptions_and_definitions():
    bad = Claim("t.bad", title="bad", statement="s", source=SRC, goal=logic.gt(qa.sym, qa.sym + 1), expected="refuted")
    via_assumption = Assumption("t.assume", title="assume", statement="s", source=SRC,
                                relation=logic.gt(qb.sym, 0), uses=(bad,))
    uses_it = Claim("t.user", title="user", statement="s", source=SRC, goal=logic.gt(qb.sym, 0),
                    uses=(via_assumption,), expected="blocked")
    results = Checker(lib(bad, via_assumption, uses_it), Scenario("s", {})).check().by_id()
    assert results["t.bad"].verdict == "refuted"
    assert results["t.user"].verdict == "blocked" and "t.bad" in results["t.user"].reason


def test_internal_error_in_one_claim_leaves_the_others(monkeypatch):
    good = Claim("t.good", title="g", statement="s", source=SRC, goal=logic.ge(qa.sym**2, 0))
    other = Claim("t.other", title="o", statement="s", source=SRC, goal=logic.ge(qb.sym, 0))
    checker = Checker(lib(good, other), Scenario("s", {}))
    real = checker.problem

    def broken(claim, goal, hyps):
        if claim.id == "t.other":
            raise RuntimeError("boom")
        return real(claim, goal, hyps)

    monkeypatch.setattr(checker, "problem", broken)
    res = checker.check().by_id()
    assert res["t.good"].verdict == "proved"
    assert res["t.other"].verdict == "unknown" and "boom" in res["t.other"].reason


def test_huge_values_end_within_budget():
    n_ = sp.Symbol("n")
    out = run([], logic.eq(10**n_, 10**n_ + 0 * n_), integer={n_}, bounds={n_: (R(10**9), R(10**9 + 5))})
    assert out.verdict == "proved"
    out = run([], logic.le(sp.exp(sp.exp(x)), sp.exp(x)), bounds={x: (R(0), R(100))})
    assert out.verdict == "refuted"


def test_z3_out_of_budget_falls_back_to_the_interval_engine():
    bounds = {x: (R(0), R(10))}
    tight = Problem([logic.gt(x, 0)], logic.le(x**3 - x, 1000), set(), bounds, 50, 0)
    assert decide(tight).verdict == "proved"
    false = Problem([logic.gt(x, 0)], logic.le(x**3 - x, 100), set(), bounds, 50, 0)
    out = decide(false)
    assert out.verdict == "refuted" and 0 <= sp.Rational(out.counterexample["x"]) <= 10
