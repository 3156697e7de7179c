"""A ``Piecewise`` at a scenario value is read in order: a condition after one that holds is never read; a
condition that must be read and has no value, and a root or logarithm without a real value, give ``unknown``
with the part named, never an internal error.  ``eval`` reads it the same way."""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive import Claim, Quantity, derived, logic
from derive.checking.checker import Checker
from derive.kernel.logic import replace
from derive.model.declarations import Definition, Topic
from derive.model.evaluate import evaluate
from derive.model.library import Library
from derive.model.scenario import Scenario, ScenarioValue

R = sp.Rational
SRC = derived("piecewise at values")
tq = Quantity("t", "t", "1", "t", domain="real")
t = tq.sym


def verdict(goal, value, hyps=()):
    claim = Claim("t.c", title="c", statement="s", source=SRC, goal=goal, hypotheses=tuple(hyps), instance=True)
    lib = Library([Topic("t", "t", "", (tq,), (claim,))])
    scen = Scenario("s", {"t": ScenarioValue("t", R(value), "test")})
    return Checker(lib, scen, rlimit=2_000_000).check(["t.c"]).by_id()["t.c"]


LATER_UNDEFINED = sp.Piecewise((5, t <= 0), (1, 1 / t > 1), (2, True))


@pytest.mark.parametrize(("goal", "value", "expected"), [
    (logic.ge(LATER_UNDEFINED, 5), 0, "proved"),
    (logic.gt(LATER_UNDEFINED, 5), 0, "refuted"),
    (logic.ge(sp.Piecewise((5, t <= 0), (1, sp.sqrt(t) > 1), (2, True)), 5), -4, "proved"),
    (logic.eq(sp.Piecewise((5, t <= 0), (1, sp.log(t) > 1), (2, True)), 2), 1, "proved"),
    (logic.eq(sp.Piecewise((5, t <= 0), (1, sp.log(t) > 1), (2, True)), 1), 1, "refuted"),
])
def test_a_condition_after_one_that_holds_is_never_read(goal, value, expected):
    assert verdict(goal, value).verdict == expected


@pytest.mark.parametrize(("goal", "value", "part"), [
    (logic.ge(sp.Piecewise((5, t < 0), (1, 1 / t > 1), (2, True)), 5), 0, "1/t"),
    (logic.gt(sp.sqrt(t), 1), -4, "sqrt(t)"),
    (logic.gt(sp.log(t), 1), 0, "log(t)"),
    (logic.gt(sp.Piecewise((1, sp.sqrt(t) > 1), (2, True)), 0), -4, "sqrt(t)"),
])
def test_a_part_without_a_value_that_must_be_read_is_named(goal, value, part):
    res = verdict(goal, value)
    assert res.verdict == "unknown" and "internal error" not in res.reason and part in res.reason


def test_eval_reads_piecewise_the_same_way():
    p = Quantity("p", "p", "1", "p", domain="real")
    lib = Library([Topic("t", "t", "", (tq,), (
        Definition("t.p", title="p", statement="s", source=SRC, defines=p, expr=LATER_UNDEFINED),))])
    assert evaluate(lib, Scenario("s", {"t": ScenarioValue("t", R(0), "test")}), "p").exact == 5
    other = Quantity("q", "q", "1", "q", domain="real")
    lib = Library([Topic("t", "t", "", (tq,), (
        Definition("t.q", title="q", statement="s", source=SRC, defines=other,
                   expr=sp.Piecewise((5, t < 0), (1, 1 / t > 1), (2, True))),))])
    out = evaluate(lib, Scenario("s", {"t": ScenarioValue("t", R(0), "test")}), "q")
    assert out.exact is None and "1/t" in out.display


@settings(max_examples=25, deadline=None)
@given(st.fractions(-3, 3, max_denominator=4), st.integers(0, 6))
def test_planted_piecewise_instances(tv, c):
    tv = R(tv)
    truth = 5 if tv <= 0 else (1 if 1 / tv > 1 else 2)
    assert verdict(logic.ge(LATER_UNDEFINED, c), tv).verdict == ("proved" if truth >= c else "refuted")


def test_replace_without_strict_leaves_an_unreadable_condition_for_the_kernel():
    out = replace(sp.Piecewise((5, t < 0), (1, 1 / t > 1), (2, True)), {t: 0})
    assert isinstance(out, sp.Piecewise)
