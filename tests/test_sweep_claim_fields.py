"""A claim's field in a numeric sweep agrees with ``derive check`` at every point: empty where its goal has no
value (a zero denominator, a logarithm or root of a negative number), where check says ``unknown`` (it printed 0,
"the goal fails"); an integrality (written, or a derived quantity's declared one) is read numerically (it was
"cannot evaluate a IsInteger", while margin sends such a claim to the sweep)."""

from __future__ import annotations

import math

import pytest
import sympy as sp
from libtools import make_library

from derive import Claim, Definition, Quantity, derived, logic
from derive.checking.checker import Checker
from derive.model.scenario import Scenario, ScenarioValue
from derive.whatif.sweep import UNDEFINED_NOTE, parse_axis, resolve_target, sweep_grid

R = sp.Rational
t = Quantity("t", "t", "1", "t", domain="real")
GOALS = {"log": logic.ge(sp.log(t.sym), 0), "inv": logic.ge(1 / t.sym, 0), "root": logic.lt(sp.sqrt(t.sym), 1),
         "half": logic.IsInteger(t.sym / 2), "third": logic.Not(logic.IsInteger(t.sym / 3))}


def claim(name):
    return Claim(f"t.{name}", title=name, statement="s", source=derived("t"), goal=GOALS[name], instance=True)


@pytest.mark.parametrize("name", sorted(GOALS))
def test_the_sweep_and_the_check_agree_at_every_point(name):
    lib = make_library(t, claim(name))
    empty = Scenario("s", {})
    result = sweep_grid(lib, empty, [resolve_target(lib, f"t.{name}")], [parse_axis(lib, "t=-3:3:13")])
    for tv, field in zip(result.data[0], result.data[1], strict=True):
        point = Scenario("s", {"t": ScenarioValue("t", R(str(tv)), "test")})
        verdict = Checker(lib, point).check([f"t.{name}"]).by_id()[f"t.{name}"].verdict
        expected = {"proved": 1.0, "refuted": 0.0}.get(verdict)
        assert (math.isnan(field) if expected is None else field == expected), (tv, field, verdict)
    assert (UNDEFINED_NOTE in result.notes) == (name in ("log", "inv", "root"))


def test_no_note_where_the_goal_has_a_value_everywhere():
    lib = make_library(t, claim("log"))
    result = sweep_grid(lib, Scenario("s", {}), [resolve_target(lib, "t.log")], [parse_axis(lib, "t=1:3:3")])
    assert list(result.data[1]) == [1.0, 1.0, 1.0] and UNDEFINED_NOTE not in result.notes


def test_a_declared_integrality_is_read_numerically():
    n = Quantity("n", "n", "1", "n", integer=True)
    half = Quantity("half", "h", "1", "half", integer=True)
    half_def = Definition("t.half", title="h", statement="s", source=derived("t"), defines=half, expr=n.sym / 2)
    c = Claim("t.c", title="c", statement="s", source=derived("t"), goal=logic.ge(half.sym, 2), instance=True)
    lib = make_library(n, half, half_def, c)
    result = sweep_grid(lib, Scenario("s", {}), [resolve_target(lib, "t.c")], [parse_axis(lib, "n=1:6:6")])
    shown = ["" if math.isnan(v) else int(v) for v in result.data[1]]
    assert shown == ["", 0, "", 1, "", 1]  # odd n: half is no integer there, so the claim says nothing
