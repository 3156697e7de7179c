"""Claims whose goals and hypotheses are Boolean structures (iff, implies, not, or nested three and four deep, an
``and`` of parts true on different sub-regions, disjunctive hypotheses), and instance claims whose hypotheses fix
values (redundant, contradicting each other, overriding the scenario's), written through the public library API.
Each true claim has a false twin; a counterexample is re-checked here by plain exact arithmetic over
``Fraction`` (no kernel code), and a proof is checked against the same arithmetic on a grid."""

from __future__ import annotations

import itertools
from fractions import Fraction as F

import pytest
import sympy as sp

from derive import Claim, Quantity, derived, logic
from derive.checking.checker import Checker
from derive.model.declarations import Topic
from derive.model.library import Library
from derive.model.scenario import Scenario, ScenarioValue

R = sp.Rational
SRC = derived("boolean structure")
x, y = (Quantity(n, n, "1", n, domain="real") for n in ("x", "y"))
k = Quantity("k", "k", "1", "k", domain="real", integer=True)
X, Y, K = x.sym, y.sym, k.sym
And, Or, Not, Implies, Iff = logic.And, logic.Or, logic.Not, logic.Implies, logic.Iff


def imp(p, q):
    return (not p) or q


# id: (goal, hypotheses, verdict, truth(x, y, k) -> True/False, or None outside the hypotheses)
GENERAL = {
    "and_regions": (And((Implies(logic.gt(X, 0), logic.gt(X**3, 0)), Implies(logic.lt(X, 0), logic.lt(X**3, 0)))), (),
                    "proved", lambda x, y, k: imp(x > 0, x**3 > 0) and imp(x < 0, x**3 < 0)),
    "and_regions_twin": (And((Implies(logic.gt(X, 0), logic.gt(X**3, 0)), Implies(logic.lt(X, 0), logic.gt(X**3, 0)))),
                         (), "refuted", lambda x, y, k: imp(x > 0, x**3 > 0) and imp(x < 0, x**3 > 0)),
    "disjunctive_hypothesis": (logic.gt(X**2, 1), (Or((logic.gt(X, 1), logic.lt(X, -1))),), "proved",
                               lambda x, y, k: (x * x > 1) if (x > 1 or x < -1) else None),
    "disjunctive_hypothesis_twin": (logic.gt(X, 1), (Or((logic.gt(X, 1), logic.lt(X, -1))),), "refuted",
                                    lambda x, y, k: (x > 1) if (x > 1 or x < -1) else None),
    "abs_by_cases": (logic.ge(sp.Abs(X), 1), (Or((logic.ge(X, 1), logic.le(X, -1))),), "proved",
                     lambda x, y, k: (abs(x) >= 1) if (x >= 1 or x <= -1) else None),
    "abs_by_cases_twin": (logic.ge(sp.Abs(X), 2), (Or((logic.ge(X, 1), logic.le(X, -1))),), "refuted",
                          lambda x, y, k: (abs(x) >= 2) if (x >= 1 or x <= -1) else None),
    "four_negations": (Not(Not(Not(Not(logic.ge(X**2, 0))))), (), "proved", lambda x, y, k: x * x >= 0),
    "three_negations_twin": (Not(Not(Not(logic.ge(X**2, 0)))), (), "refuted", lambda x, y, k: not x * x >= 0),
    "sign_of_product": (Iff(Iff(logic.gt(X, 0), logic.gt(Y, 0)), logic.gt(X * Y, 0)),
                        (Not(logic.eq(X, 0)), Not(logic.eq(Y, 0))), "proved",
                        lambda x, y, k: ((x > 0) == (y > 0)) == (x * y > 0) if x != 0 and y != 0 else None),
    "sign_of_product_twin": (Iff(Iff(logic.gt(X, 0), logic.gt(Y, 0)), logic.gt(X * Y, 0)), (), "refuted",
                             lambda x, y, k: ((x > 0) == (y > 0)) == (x * y > 0)),
    "nested_implication": (Implies(logic.gt(X, 2), Implies(logic.gt(Y, X), logic.gt(Y, 2))), (), "proved",
                           lambda x, y, k: imp(x > 2, imp(y > x, y > 2))),
    "nested_implication_twin": (Implies(logic.gt(X, 2), Implies(logic.gt(Y, 0), logic.gt(Y, 2))), (), "refuted",
                                lambda x, y, k: imp(x > 2, imp(y > 0, y > 2))),
    "integer_gap": (Or((logic.le(K, 0), logic.ge(K, 1))), (), "proved", lambda x, y, k: k <= 0 or k >= 1),
    "integer_gap_twin": (Or((logic.le(K, 0), logic.ge(K, 2))), (), "refuted", lambda x, y, k: k <= 0 or k >= 2),
    "real_gap_twin": (Or((logic.le(X, 0), logic.ge(X, 1))), (), "refuted", lambda x, y, k: x <= 0 or x >= 1),
    "hypotheses_by_cases": (logic.gt(Y, 0), (Implies(logic.gt(X, 0), logic.gt(Y, 0)),
                                             Implies(logic.le(X, 0), logic.gt(Y, 1))), "proved",
                            lambda x, y, k: (y > 0) if imp(x > 0, y > 0) and imp(x <= 0, y > 1) else None),
    "hypotheses_by_cases_twin": (logic.gt(Y, 1), (Implies(logic.gt(X, 0), logic.gt(Y, 0)),
                                                  Implies(logic.le(X, 0), logic.gt(Y, 1))), "refuted",
                                 lambda x, y, k: (y > 1) if imp(x > 0, y > 0) and imp(x <= 0, y > 1) else None),
    "negated_disjunction": (logic.gt(X, 0), (Not(Or((logic.le(X, 0), logic.eq(Y, 1)))),), "proved",
                            lambda x, y, k: (x > 0) if not (x <= 0 or y == 1) else None),
    "negated_disjunction_twin": (logic.gt(Y, 1), (Not(Or((logic.le(X, 0), logic.eq(Y, 1)))),), "refuted",
                                 lambda x, y, k: (y > 1) if not (x <= 0 or y == 1) else None),
    "either_value": (logic.ge(X**2, 4), (Or((logic.eq(X, 2), logic.eq(X, -2))),), "proved",
                     lambda x, y, k: (x * x >= 4) if x in (2, -2) else None),
    "either_value_twin": (logic.ge(X, 2), (Or((logic.eq(X, 2), logic.eq(X, -2))),), "refuted",
                          lambda x, y, k: (x >= 2) if x in (2, -2) else None),
    "integer_fixed_to_half": (logic.ge(K, 0), (logic.eq(2 * K, 1),), "inconsistent", lambda x, y, k: None),
    "contradictory_iff": (logic.gt(X, 5), (Iff(logic.gt(X, 0), logic.le(X, 0)),), "inconsistent",
                          lambda x, y, k: None),
    "de_morgan_floor": (Iff(Not(And((logic.ge(sp.floor(X), 0), logic.lt(X, 1)))),
                            Or((logic.lt(X, 0), logic.ge(X, 1)))), (), "proved",
                        lambda x, y, k: (not (x // 1 >= 0 and x < 1)) == (x < 0 or x >= 1)),
    "de_morgan_floor_twin": (Iff(Not(And((logic.ge(sp.floor(X), 0), logic.lt(X, 1)))),
                                 Or((logic.le(X, 0), logic.ge(X, 1)))), (), "refuted",
                             lambda x, y, k: (not (x // 1 >= 0 and x < 1)) == (x <= 0 or x >= 1)),
}

GRID = [F(n, 3) for n in range(-9, 10)]


@pytest.fixture(scope="module")
def general():
    claims = [Claim(f"t.{name}", title=name, statement="s", source=SRC, goal=g, hypotheses=h)
              for name, (g, h, _, _) in GENERAL.items()]
    lib = Library([Topic("t", "t", "", (x, y, k), tuple(claims))])
    return Checker(lib, Scenario("s", {}), rlimit=2_000_000).check([c.id for c in claims]).by_id()


def test_each_true_claim_has_a_false_twin():
    verdicts = [v for _, _, v, _ in GENERAL.values()]
    assert verdicts.count("proved") >= 10 and verdicts.count("refuted") >= 10


@pytest.mark.parametrize("name", sorted(GENERAL))
def test_a_boolean_claim_gets_its_verdict(name, general):
    _, _, verdict, truth = GENERAL[name]
    res = general[f"t.{name}"]
    assert res.verdict == verdict, (res.verdict, res.reason)
    if verdict == "refuted":
        p = {n: F(str(res.counterexample.get(n, 1))) for n in ("x", "y", "k")}
        assert truth(p["x"], p["y"], p["k"]) is False, p
    if verdict == "proved":
        for xv, yv, kv in itertools.product(GRID, GRID[::3], range(-3, 4)):
            assert truth(xv, yv, F(kv)) is not False, (xv, yv, kv)


# instance claims: (goal, hypotheses, scenario values, verdict).  A hypothesis ``q == number`` supplies q's value,
# over the scenario's (docs/verdicts.md)
INSTANCE = {
    "redundant_fixes": (logic.eq(X + Y, 3), (logic.eq(X, 1), logic.eq(2 * X, 2)), {"y": 2}, "proved"),
    "redundant_fixes_twin": (logic.eq(X + Y, 4), (logic.eq(X, 1), logic.eq(2 * X, 2)), {"y": 2}, "refuted"),
    "fixes_disagree": (logic.eq(X + Y, 3), (logic.eq(X, 1), logic.eq(2 * X, 3)), {"y": 2}, "inconsistent"),
    "fix_over_scenario": (logic.eq(X + Y, 3), (logic.eq(X, 1),), {"x": 2, "y": 2}, "proved"),
    "fix_over_scenario_twin": (logic.eq(X + Y, 4), (logic.eq(X, 1),), {"x": 2, "y": 2}, "refuted"),
    "fix_chain": (logic.eq(Y - X, 3), (logic.eq(X, 2), logic.eq(Y, 2 * X + 1)), {"y": 5}, "proved"),
    "fix_chain_twin": (logic.eq(Y - X, 3), (logic.eq(X, 2), logic.eq(Y, 2 * X + 1)), {"y": 4}, "inconsistent"),
    "fix_mod_negative": (logic.eq(sp.Mod(X, -2), R(-1, 2)), (logic.eq(X, R(7, 2)),), {}, "proved"),
    "fix_mod_negative_twin": (logic.eq(sp.Mod(X, 2), R(-1, 2)), (logic.eq(X, R(7, 2)),), {}, "refuted"),
    "integer_half": (logic.eq(sp.floor(K), K), (), {"k": R(1, 2)}, "not proved"),
    # x**y is defined where x > 0 (a symbolic exponent), whichever hypotheses give the values
    "power_of_negative_base": (logic.eq(X**Y, R(1, 4)), (logic.eq(X, -2), logic.eq(Y, -2)), {}, "unknown"),
    "power_of_positive_base": (logic.eq(X**Y, R(1, 4)), (logic.eq(X, 2), logic.eq(Y, -2)), {}, "proved"),
}


@pytest.mark.parametrize("name", sorted(INSTANCE))
def test_an_instance_claim_with_fixing_hypotheses_gets_its_verdict(name):
    goal, hyps, values, verdict = INSTANCE[name]
    claim = Claim(f"t.{name}", title=name, statement="s", source=SRC, goal=goal, hypotheses=hyps, instance=True)
    lib = Library([Topic("t", "t", "", (x, y, k), (claim,))])
    scenario = Scenario("s", {n: ScenarioValue(n, R(v), "test") for n, v in values.items()})
    res = Checker(lib, scenario, rlimit=2_000_000).check([claim.id]).by_id()[claim.id]
    assert "internal error" not in (res.reason or "")
    if verdict == "not proved":
        assert res.verdict in ("unknown", "inconsistent"), res.reason
    else:
        assert res.verdict == verdict, (res.verdict, res.reason)
