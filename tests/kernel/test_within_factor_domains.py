"""``within_factor`` reads the declared domain of its target's quantities: the plain range ``t/f <= x <= t*f``
where they are >= 0, the two ends in either order where one may be negative (a real-domain target)."""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive import Claim, Quantity, derived, logic
from derive.checking.checker import Checker
from derive.kernel.logic import Within
from derive.model.declarations import Topic
from derive.model.library import Library
from derive.model.scenario import Scenario, ScenarioValue

R = sp.Rational
SRC = derived("within_factor domains")


def verdict(goal, quantities, hyps=(), values=None, instance=False):
    claim = Claim("t.c", title="c", statement="s", source=SRC, goal=goal, hypotheses=tuple(hyps), instance=instance)
    lib = Library([Topic("t", "t", "", tuple(quantities), (claim,))])
    scen = Scenario("s", {k: ScenarioValue(k, R(v), "test") for k, v in (values or {}).items()})
    return Checker(lib, scen, rlimit=2_000_000).check(["t.c"]).by_id()["t.c"]


@pytest.mark.parametrize("domain", ["real", "nonnegative", "positive"])
def test_a_quantity_is_within_any_factor_of_itself(domain):
    x = Quantity("x", "x", "1", "x", domain=domain)
    assert verdict(logic.within_factor(x.sym, x.sym, 2), (x,)).verdict == "proved"


@pytest.mark.parametrize("domain", ["real", "positive"])
def test_three_times_a_quantity_is_not_within_a_factor_two(domain):
    x = Quantity("x", "x", "1", "x", domain=domain)
    res = verdict(logic.within_factor(3 * x.sym, x.sym, 2), (x,))
    assert res.verdict == "refuted" and R(res.counterexample["x"]) != 0


def test_a_target_written_positive_is_plain_where_its_quantities_are_positive():
    x, y = sp.symbols("x y")
    f = logic.within_factor(y, x, 2)
    assert isinstance(f, Within) and f == logic.between(y, x / 2, 2 * x)
    assert f.read_with(lambda s: False) == logic.between(y, x / 2, 2 * x)
    assert f.read_with(lambda s: True) == f.either


@settings(max_examples=20, deadline=None)
@given(st.fractions(-8, 8, max_denominator=6), st.fractions(-8, 8, max_denominator=6))
def test_planted_real_targets_at_a_point(xv, yv):
    x = Quantity("x", "x", "1", "x", domain="real")
    y = Quantity("y", "y", "1", "y", domain="real")
    res = verdict(logic.within_factor(y.sym, x.sym, 2), (x, y), values={"x": xv, "y": yv}, instance=True)
    lo, hi = sorted([R(xv) / 2, R(xv) * 2])
    assert res.verdict == ("proved" if lo <= R(yv) <= hi else "refuted")
