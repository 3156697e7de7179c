"""A numeric sweep leaves a claim's field empty where its goal has no value (a zero denominator, a logarithm or
root of a negative number), as ``derive check`` says ``unknown`` there: it printed 0, "the goal fails"."""

from __future__ import annotations

import math

import pytest
import sympy as sp
from libtools import make_library

from derive import Claim, Quantity, derived, logic
from derive.checking.checker import Checker
from derive.model.scenario import Scenario, ScenarioValue
from derive.whatif.sweep import UNDEFINED_NOTE, parse_axis, resolve_target, sweep_grid

R = sp.Rational
t = Quantity("t", "t", "1", "t", domain="real")
GOALS = {"log": logic.ge(sp.log(t.sym), 0), "inv": logic.ge(1 / t.sym, 0), "root": logic.lt(sp.sqrt(t.sym), 1)}


def claim(name):
    return Claim(f"t.{name}", title=name, statement="s", source=derived("t"), goal=GOALS[name], instance=True)


@pytest.mark.parametrize("name", sorted(GOALS))
def test_the_sweep_and_the_check_agree_at_every_point(name):
    lib = make_library(t, claim(name))
    empty = Scenario("s", {})
    result = sweep_grid(lib, empty, [resolve_target(lib, f"t.{name}")], [parse_axis(lib, "t=-2:2:9")])
    for tv, field in zip(result.data[0], result.data[1], strict=True):
        point = Scenario("s", {"t": ScenarioValue("t", R(str(tv)), "test")})
        verdict = Checker(lib, point).check([f"t.{name}"]).by_id()[f"t.{name}"].verdict
        expected = {"proved": 1.0, "refuted": 0.0}.get(verdict)
        assert (math.isnan(field) if expected is None else field == expected), (tv, field, verdict)
    assert UNDEFINED_NOTE in result.notes


def test_no_note_where_the_goal_has_a_value_everywhere():
    lib = make_library(t, claim("log"))
    result = sweep_grid(lib, Scenario("s", {}), [resolve_target(lib, "t.log")], [parse_axis(lib, "t=1:3:3")])
    assert list(result.data[1]) == [1.0, 1.0, 1.0] and UNDEFINED_NOTE not in result.notes
