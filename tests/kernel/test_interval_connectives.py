"""The interval engine settles an or, an and or an implies through one part while another is not settled on a
box, where every part is defined there: ``x > 0 implies exp(x) > x`` on [-1, 1] was ``unknown`` (every box
[0, d] leaves ``x > 0`` unsettled, while the conclusion holds on it).  A part that may be undefined settles
nothing (``x <= 0 or 1/(x + 1/2) > -100`` stays ``unknown``: undefined at -1/2).  Planted true claims with false
twins whose counterexamples are re-checked by plain exact arithmetic here."""

from __future__ import annotations

import math

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.kernel import logic
from derive.kernel.problem import Problem
from derive.kernel.prover import decide

R = sp.Rational
x, y = sp.symbols("x y")
BOX = {x: (R(-1), R(1))}
H = R(1, 2)

# name: (goal on x in [-1, 1], verdict, truth at a point by plain arithmetic, or None where the goal is undefined)
CASES = {
    "implies_exp": (logic.Implies(logic.gt(x, 0), logic.gt(sp.exp(x), x)), "proved", None),
    "implies_exp_twin": (logic.Implies(logic.gt(x, 0), logic.gt(sp.exp(x), 1 + x + x**2)), "refuted",
                         lambda v: not v > 0 or math.exp(v) > 1 + v + v * v),
    "or_exp": (logic.Or((logic.le(x, 0), logic.gt(sp.exp(x), x + H))), "proved", None),
    "or_exp_twin": (logic.Or((logic.le(x, 0), logic.gt(sp.exp(x), 2 * x + 1))), "refuted",
                    lambda v: v <= 0 or math.exp(v) > 2 * v + 1),
    "and_exp": (logic.Not(logic.And((logic.gt(x, 0), logic.lt(sp.exp(x), x)))), "proved", None),
    "and_exp_twin": (logic.Not(logic.And((logic.gt(x, 0), logic.lt(sp.exp(x), 1 + 2 * x)))), "refuted",
                     lambda v: not (v > 0 and math.exp(v) < 1 + 2 * v)),
    "nested": (logic.Implies(logic.ge(x, 0), logic.Or((logic.ge(x, H), logic.lt(sp.exp(x), 2)))), "proved", None),
    "nested_twin": (logic.Implies(logic.ge(x, 0), logic.Or((logic.ge(x, H), logic.lt(sp.exp(x), R(3, 2))))),
                    "refuted", lambda v: not v >= 0 or v >= 0.5 or math.exp(v) < 1.5),
    # a part undefined inside the box settles nothing: never proved
    "or_pole": (logic.Or((logic.le(x, 0), logic.gt(1 / (x + H), -100))), "unknown", None),
    "or_log": (logic.Or((logic.le(x, 0), logic.gt(sp.log(x + H), -100))), "unknown", None),
    "implies_root": (logic.Implies(logic.lt(x, 0), logic.ge(sp.exp(sp.sqrt(x + H)), 1)), "unknown", None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_connective_is_settled_by_its_parts_only_where_all_are_defined(name):
    goal, verdict, truth = CASES[name]
    out = decide(Problem([], goal, set(), dict(BOX)))
    assert out.verdict == verdict, out.reason
    if verdict == "refuted":
        v = sp.Rational(out.counterexample["x"])
        assert -1 <= v <= 1 and not truth(float(v)), v


def test_a_piecewise_condition_with_a_defined_unsettled_part():
    # the first condition holds wherever x <= 0 (its other part is defined everywhere): the value is 1 there
    goal = logic.ge(sp.Piecewise((1, sp.Or(x <= 0, sp.exp(x) > 10)), (sp.exp(x), True)), 1)
    assert decide(Problem([], goal, set(), dict(BOX))).verdict == "proved"


@settings(max_examples=25, deadline=None)
@given(st.fractions(min_value=-2, max_value=2, max_denominator=6))
def test_a_pole_anywhere_in_the_box_keeps_a_disjunction_unproved(pole):
    pole = R(pole.numerator, pole.denominator)
    goal = logic.Or((logic.le(x, 0), logic.gt(1 / (x - pole), -100)))
    verdict = decide(Problem([], goal, set(), dict(BOX))).verdict
    if -1 <= pole <= 1:
        assert verdict != "proved"
    elif pole < -1 or pole > R(101, 100):  # 1/(x - pole) > -100 on [0, 1]: the claim is true
        assert verdict in ("proved", "unknown")
