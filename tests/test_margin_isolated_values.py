"""A margin is a union of intervals found from critical points: a claim that holds only at isolated values (an
integrality, written or declared, or a remainder) has no such set, and the margin says so in one line instead of
printing the empty set (``x/2 is an integer`` was "holds nowhere" while check proved it at x = 2)."""

from __future__ import annotations

import pytest
import sympy as sp
from libtools import make_library

from derive import Claim, Definition, Quantity, derived, logic
from derive.checking.checker import Checker
from derive.errors import MarginError
from derive.model.scenario import Scenario, ScenarioValue
from derive.whatif.margin import margin

R = sp.Rational
x = Quantity("x", "x", "1", "x", domain="real")
n = Quantity("n", "n", "1", "n", integer=True)
half = Quantity("half", "h", "1", "h", integer=True)
half_def = Definition("t.half", title="h", statement="s", source=derived("t"), defines=half, expr=n.sym / 2)


def setup(goal, values):
    c = Claim("t.c", title="c", statement="s", source=derived("t"), goal=goal, instance=True)
    lib = make_library(x, n, half, half_def, c)
    return lib, Scenario("s", {k: ScenarioValue(k, R(v), "test") for k, v in values.items()})


@pytest.mark.parametrize(("goal", "vary", "values"), [
    (logic.IsInteger(x.sym / 2), "x", {"x": 2}),
    (logic.ge(half.sym, 1), "n", {"n": 4}),  # half's declared integrality: n/2 is an integer
    (logic.le(sp.Mod(x.sym, 3), 1), "x", {"x": 1}),
])
def test_a_claim_true_at_isolated_values_has_no_margin(goal, vary, values):
    lib, scen = setup(goal, values)
    assert Checker(lib, scen).check(["t.c"]).by_id()["t.c"].verdict == "proved"
    with pytest.raises(MarginError, match=f"no margin over {vary}"):
        margin(lib, scen, "t.c", vary)


def test_a_claim_without_isolated_values_keeps_its_margin():
    lib, scen = setup(logic.le(x.sym * 2, 3), {"x": 1})
    assert [iv.text() for iv in margin(lib, scen, "t.c", "x").intervals] == ["(-inf, 3/2]"]
