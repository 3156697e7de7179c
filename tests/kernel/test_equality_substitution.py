"""Equalities among the hypotheses substitute before any engine runs (``trusted.substitute_values``): a
quantity fixed to a number is that number in the goal, so speculative decoding's speed-up bound is decided;
an instance claim's own ``x == number`` hypotheses supply its values."""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive import Claim, Quantity, derived, logic
from derive.checking.checker import Checker
from derive.kernel.problem import Problem
from derive.kernel.trusted import substitute_values
from derive.model.declarations import Topic
from derive.model.library import Library
from derive.model.scenario import Scenario, ScenarioValue

R = sp.Rational
SRC = derived("equality substitution")
k = Quantity("draft_len", "k", "1", "tokens drafted per step", integer=True)
al = Quantity("acceptance", r"\alpha", "1", "chance a drafted token is accepted")
SPEEDUP = (1 - al.sym ** (k.sym + 1)) / (1 - al.sym)  # expected tokens per verification step


def verdict(goal, hyps, values=None, instance=False):
    claim = Claim("t.c", title="c", statement="s", source=SRC, goal=goal, hypotheses=tuple(hyps), instance=instance)
    lib = Library([Topic("t", "t", "", (k, al), (claim,))])
    scen = Scenario("s", {n: ScenarioValue(n, R(v), "test") for n, v in (values or {}).items()})
    return Checker(lib, scen, rlimit=2_000_000).check(["t.c"]).by_id()["t.c"]


def test_speculative_decoding_speedup_is_at_most_k_plus_one():
    hyps = (logic.eq(k.sym, 4), logic.lt(al.sym, 1))
    assert verdict(logic.le(SPEEDUP, k.sym + 1), hyps).verdict == "proved"
    twin = verdict(logic.le(SPEEDUP, k.sym), hyps)
    assert twin.verdict == "refuted" and twin.counterexample["draft_len"] == "4"


@pytest.mark.parametrize(("bound", "expected"), [(R(337, 100), "proved"), (R(335, 100), "refuted")])
def test_an_instance_claims_hypotheses_supply_its_values(bound, expected):
    hyps = (logic.eq(k.sym, 4), logic.eq(al.sym, R(4, 5)))  # 1 + .8 + .64 + .512 + .4096 = 3.3616
    assert verdict(logic.le(SPEEDUP, bound), hyps, instance=True).verdict == expected
    # a scenario value of the same quantity does not override the claim's own
    assert verdict(logic.le(SPEEDUP, bound), hyps, values={"acceptance": R(1, 2)}, instance=True).verdict == expected


def test_contradicting_equalities_are_inconsistent():
    assert verdict(logic.le(SPEEDUP, 5), (logic.eq(k.sym, 4), logic.eq(k.sym, 3))).verdict == "inconsistent"


def test_a_substitution_without_a_value_is_not_made():
    x, y = sp.symbols("x y")
    p = Problem([logic.eq(x, 4)], logic.gt(1 / (x - 4), y))
    assert substitute_values(p).goal == p.goal


def test_substitution_follows_chains_and_keeps_the_fixing_hypothesis():
    x, y, z = sp.symbols("x y z")
    p = substitute_values(Problem([logic.eq(x, 2), logic.eq(y, x + 1)], logic.gt(z * y, x)))
    assert p.goal == logic.gt(3 * z, 2) and logic.eq(x, 2) in p.hypotheses


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 6), st.fractions(R(1, 10), R(9, 10), max_denominator=10))
def test_planted_speedups(kv, av):
    hyps = (logic.eq(k.sym, kv), logic.eq(al.sym, R(av)))
    value = sum(R(av) ** i for i in range(kv + 1))
    assert verdict(logic.le(SPEEDUP, value), hyps).verdict == "proved"
    assert verdict(logic.lt(SPEEDUP, value), hyps).verdict == "refuted"
