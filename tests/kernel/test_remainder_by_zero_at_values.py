"""``Mod(t, s)`` at a scenario value s = 0 has no real value, like ``1/0``: the claim is ``unknown`` naming the
part and ``eval`` says undefined (sympy raises ``ZeroDivisionError`` there, where ``1/0`` is ``zoo``: it was an
internal error).  A Piecewise condition after one that holds is still never read."""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive import Claim, Definition, Quantity, derived, logic
from derive.checking.checker import Checker
from derive.errors import UndefinedValueError
from derive.kernel.logic import replace
from derive.model.declarations import Topic
from derive.model.evaluate import evaluate
from derive.model.library import Library
from derive.model.scenario import Scenario, ScenarioValue

R = sp.Rational
SRC = derived("remainder by zero")
tq, sq = Quantity("t", "t", "1", "t", domain="real"), Quantity("s", "s", "1", "s", domain="real")
t, s = tq.sym, sq.sym
m = Quantity("m", "m", "1", "m", domain="real")
m_def = Definition("t.m", title="m", statement="s", source=SRC, defines=m, expr=sp.Mod(t, s))


def library(*claims):
    return Library([Topic("t", "t", "", (tq, sq, m), (m_def, *claims))])


def scenario(tv, sv):
    return Scenario("s", {"t": ScenarioValue("t", R(tv), "test"), "s": ScenarioValue("s", R(sv), "test")})


def verdict(goal, tv, sv):
    claim = Claim("t.c", title="c", statement="s", source=SRC, goal=goal, instance=True)
    return Checker(library(claim), scenario(tv, sv), rlimit=2_000_000).check(["t.c"]).by_id()["t.c"]


@pytest.mark.parametrize("goal", [logic.ge(sp.Mod(t, s), 0), logic.lt(sp.Mod(t, s), 0), logic.ge(m.sym, 0),
                                  logic.gt(sp.Piecewise((1, sp.Mod(t, s) > 1), (2, True)), 0)])
@pytest.mark.parametrize("tv", [-7, 0, R(7, 3)])
def test_a_remainder_by_zero_is_undefined_never_an_internal_error(goal, tv):
    res = verdict(goal, tv, 0)
    assert res.verdict == "unknown" and "internal error" not in res.reason
    assert "Mod(t, s)" in res.reason and "division by zero" in res.reason


def test_a_condition_after_one_that_holds_is_never_read():
    goal = logic.eq(sp.Piecewise((1, s <= 0), (2, sp.Mod(t, s) > 1), (3, True)), 1)
    assert verdict(goal, 7, 0).verdict == "proved"
    assert verdict(goal, 7, 2).verdict == "refuted"


def test_eval_says_undefined():
    out = evaluate(library(), scenario(7, 0), "m")
    assert out.exact is None and "division by zero" in out.display
    assert evaluate(library(), scenario(7, -2), "m").exact == -1


def test_replace_raises_only_when_strict():
    with pytest.raises(UndefinedValueError, match="division by zero"):
        replace(sp.Mod(t, s), {s: 0}, strict=True)
    assert replace(sp.Mod(t, s), {s: 0}) == sp.Mod(t, 0, evaluate=False)


@settings(max_examples=25, deadline=None)
@given(st.fractions(-6, 6, max_denominator=3), st.fractions(-3, 3, max_denominator=2), st.integers(-2, 2))
def test_planted_remainders(tv, sv, c):
    res = verdict(logic.ge(m.sym, c), tv, sv)
    if sv == 0:
        assert res.verdict == "unknown"
    else:
        assert res.verdict == ("proved" if sp.Mod(R(tv), R(sv)) >= c else "refuted")
