"""The interval replayer reads a certificate's goal as derive's meaning does: defined wherever the assumptions
hold.  A connective whose settled part holds on a leaf (``x <= 0`` on [-1, 0]) does not close that leaf while
another part may be undefined there (``1/(x + 1/2)``): a forged certificate for such a goal, which the kernel
leaves ``unknown`` (the denominator's side condition fails at -1/2), was confirmed.  The same goal with its
pole outside the box is confirmed, and so is the kernel's own tree for it."""

from __future__ import annotations

import json

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.certify import replay
from derive.certify.writer import certificate, formula_json
from derive.kernel import logic
from derive.kernel.problem import Problem
from derive.kernel.prover import decide

R = sp.Rational
x = sp.Symbol("x")
BOX = (R(-1), R(1))


def goals(pole):
    """Goals true wherever defined, each undefined at ``x = pole`` (inside the box for a pole in it)."""
    return {
        "or": logic.Or((logic.le(x, 0), logic.gt(1 / (x - pole), -100))),
        "implies": logic.Implies(logic.gt(x, 0), logic.gt(1 / (x - pole), -100)),
        "or_log": logic.Or((logic.le(x, 0), logic.gt(sp.log(x - pole), -100))),
        "piecewise_condition": logic.ge(sp.Piecewise((1, sp.Or(x <= 0, 1 / (x - pole) > 0)), (0, True)), 1),
    }


def forged(goal, split=0):
    """A proof tree of two leaves split at ``split``, written by hand (a tampered certificate)."""
    split = R(split)
    return json.dumps({
        "kind": "interval", "format": "derive-certificate/1", "claim": "c", "scenario": "s", "verdict": "proved",
        "engine": "interval", "method": "", "assumptions": [], "goal": formula_json(goal),
        "quantities": [{"name": "x", "integer": False, "low": str(BOX[0]), "high": str(BOX[1])}],
        "tree": [{"split": "x", "at": str(split)}, {"leaf": {"x": [str(BOX[0]), str(split)]}, "enclosures": []},
                 {"leaf": {"x": [str(split), str(BOX[1])]}, "enclosures": []}]})


@pytest.mark.parametrize("name", sorted(goals(R(-1, 2))))
def test_a_goal_undefined_inside_a_leaf_is_never_confirmed(name):
    goal = goals(R(-1, 2))[name]
    assert decide(Problem([], goal, set(), {x: BOX})).verdict != "proved"
    assert replay.replay(forged(goal)).status != "confirmed"


@pytest.mark.parametrize("name", ["or", "implies", "or_log"])
def test_the_same_goal_with_its_pole_outside_the_box_is_confirmed(name):
    goal = goals(R(-2))[name]
    assert replay.replay(forged(goal)).status == "confirmed"


def test_the_kernels_own_tree_for_a_disjunction_is_confirmed():
    problem = Problem([], logic.Or((logic.le(x, 0), logic.gt(sp.exp(x), x + R(1, 2)))), set(), {x: BOX})
    out = decide(problem)
    assert out.verdict == "proved", out.reason
    cert = certificate("c", "test", problem, out)
    assert cert.kind == "interval"
    assert replay.replay(cert.text).status == "confirmed"


def test_an_assumption_false_or_undefined_on_a_leaf_still_closes_it():
    # x > 1/2 and 1/(x + 1/2) > 0 is false (or undefined) on [-1, 0]; the goal holds on [0, 1]
    text = json.loads(forged(logic.ge(x, 0)))
    text["assumptions"] = [formula_json(logic.And((logic.gt(x, R(1, 2)), logic.gt(1 / (x + R(1, 2)), 0))))]
    assert replay.replay(json.dumps(text)).status == "confirmed"


@settings(max_examples=40, deadline=None)
@given(st.fractions(min_value=-3, max_value=3, max_denominator=8))
def test_a_forged_disjunction_is_confirmed_only_where_it_is_defined(pole):
    pole = R(pole.numerator, pole.denominator)
    goal = goals(pole)["or"]
    status = replay.replay(forged(goal)).status
    # defined on the whole box exactly when the pole is outside it; then true (1/(x - pole) > -100 on [0, 1]
    # needs x - pole outside (-1/100, 0), which a pole outside [-1, 1] gives)
    assert (status == "confirmed") == (not BOX[0] <= pole <= BOX[1])
