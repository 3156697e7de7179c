"""A derived quantity declared a ``fraction`` (0 <= x <= 1) carries both ends as side conditions wherever it is
used, like ``positive`` and ``nonnegative``: a claim is never decided at a point where its definition leaves
[0, 1] (only the lower end was read, so ``h <= 1`` was refuted and ``h > 1`` proved at h = 2), and the
definition owes both ends as an obligation."""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive import Claim, Definition, Quantity, derived, logic
from derive.checking.checker import Checker
from derive.model.declarations import Topic
from derive.model.evaluate import evaluate
from derive.model.library import Library
from derive.model.scenario import Scenario, ScenarioValue
from derive.whatif.margin import margin

R = sp.Rational
SRC = derived("declared fractions")


def Q(name, domain="positive"):  # noqa: N802 - reads like the constructor it wraps
    return Quantity(name, name, "1", name, domain=domain)


a, b = Q("a"), Q("b")
h = Q("h", "fraction")  # a/b: a fraction only where a <= b
h_def = Definition("t.h", title="h", statement="s", source=SRC, defines=h, expr=a.sym / b.sym)
hm = Q("hm", "fraction")  # a - b: a fraction only where 0 <= a - b <= 1
hm_def = Definition("t.hm", title="hm", statement="s", source=SRC, defines=hm, expr=a.sym - b.sym)
km = Q("km", "nonnegative")  # nonnegative by its structure once hm is read as a fraction
km_def = Definition("t.km", title="km", statement="s", source=SRC, defines=km, expr=hm.sym * a.sym)
ITEMS = (a, b, h, h_def, hm, hm_def, km, km_def)


def check(goal, values=None, instance=False, hyps=()):
    claim = Claim("t.c", title="c", statement="s", source=SRC, goal=goal, instance=instance, hypotheses=tuple(hyps))
    lib = Library([Topic("t", "t", "", tuple(i for i in ITEMS if isinstance(i, Quantity)),
                         (*(i for i in ITEMS if not isinstance(i, Quantity)), claim))])
    scen = Scenario("s", {k: ScenarioValue(k, R(v), "test") for k, v in (values or {}).items()})
    return lib, scen, Checker(lib, scen, rlimit=2_000_000).check(["t.c"]).by_id()["t.c"]


@pytest.mark.parametrize("goal", [logic.le(h.sym, 1), logic.gt(h.sym, 1)])
def test_an_instance_claim_where_the_fraction_is_broken_is_not_decided(goal):
    _, _, res = check(goal, {"a": 2, "b": 1}, instance=True)
    assert res.verdict == "unknown", res
    assert "h is declared between 0 and 1" in res.reason


@pytest.mark.parametrize(("goal", "expected"), [(logic.le(h.sym, 1), "proved"), (logic.gt(h.sym, 1), "refuted"),
                                                (logic.le(h.sym, R(1, 2)), "proved"),
                                                (logic.lt(h.sym, R(1, 2)), "refuted")])
def test_inside_the_fraction_the_claim_and_its_twin_are_decided(goal, expected):
    assert check(goal, {"a": 1, "b": 2}, instance=True)[2].verdict == expected


def test_a_general_claim_is_never_refuted_where_the_fraction_is_broken():
    res = check(logic.le(h.sym, 1))[2]
    assert res.verdict == "unknown"  # was refuted at a = 2, b = 1, a point that is not h's
    twin = check(logic.lt(h.sym, R(1, 2)))[2]
    assert twin.verdict == "refuted"
    point = {k: R(v) for k, v in twin.counterexample.items()}
    assert point["a"] <= point["b"] and point["a"] / point["b"] >= R(1, 2)


def test_a_structural_reading_through_a_fraction_keeps_the_fraction_a_condition():
    # km = hm*a is nonnegative by its structure only because hm is read as a fraction: at a = 1, b = 2 hm = -1
    _, _, res = check(logic.lt(km.sym, 0), {"a": 1, "b": 2}, instance=True)
    assert res.verdict == "unknown" and "hm" in res.reason
    assert check(logic.le(km.sym, 1), hyps=(logic.le(a.sym, 1),))[2].verdict == "proved"
    twin = check(logic.le(km.sym, R(1, 2)), hyps=(logic.le(a.sym, 1),))[2]
    assert twin.verdict == "refuted"


def test_the_declaration_is_an_obligation_of_both_ends():
    lib, scen, _ = check(logic.le(h.sym, 1))
    found = {(f.definition, f.verdict) for f in Checker(lib, scen).obligations()}
    assert found == {("t.h", "refuted"), ("t.hm", "refuted")}


def test_eval_and_margin_read_the_fraction_like_check():
    lib, scen, _ = check(logic.le(h.sym, 1), {"a": 2, "b": 1}, instance=True)
    assert "outside its declared domain (fraction)" in evaluate(lib, scen, "h").display
    m = margin(lib, scen, "t.c", "a")
    assert [iv.text() for iv in m.intervals] == ["(0, 1]"] and not m.holds_at_value


@settings(max_examples=20, deadline=None)
@given(st.fractions(R(1, 8), 4, max_denominator=8), st.fractions(R(1, 8), 4, max_denominator=8),
       st.fractions(0, 2, max_denominator=4))
def test_planted_fraction_instances(av, bv, c):
    _, _, res = check(logic.ge(h.sym, c), {"a": av, "b": bv}, instance=True)
    value = R(av) / R(bv)
    if value <= 1:
        assert res.verdict == ("proved" if value >= c else "refuted")
    else:
        assert res.verdict == "unknown"
