"""A definition's expression has a value only where its denominators are nonzero, its radicands nonnegative and
its logarithms' arguments positive.  Once definitions are expanded sympy folds ``t*(1/t)`` to 1, ``0*(1/t)`` and
``1/t - 1/t`` to 0, so the expansion alone no longer says so: an instance claim at t = 0 was ``proved`` while
``derive eval`` said the quantity was undefined there.  Those conditions are side conditions of every expression
that uses the quantity (``Library.definition_conditions``, kind "defined"): never assumed by a goal, false at an
instance point gives ``unknown``; in a hypothesis they restrict the region.  A remainder by a constant 0 stays
undefined in the kernel's reading of ``Mod`` (``0*floor(x/0)`` folded to 0: ``Mod(x, 0) >= 0`` was refuted)."""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive import Claim, Definition, Quantity, derived, logic
from derive.checking.checker import Checker
from derive.kernel.problem import Problem
from derive.kernel.prover import decide
from derive.model.declarations import Topic
from derive.model.evaluate import evaluate
from derive.model.library import Library
from derive.model.scenario import Scenario, ScenarioValue

R = sp.Rational
SRC = derived("where definitions have values")


def Q(name, domain="real"):  # noqa: N802 - reads like the constructor it wraps
    return Quantity(name, name, "1", name, domain=domain)


def D(q, expr):  # noqa: N802
    return Definition(f"t.{q.name}", title=q.name, statement="s", source=SRC, defines=q, expr=expr)


tq, p = Q("t"), Q("p", "positive")
t = tq.sym
inv, inv2, lg, root = Q("inv"), Q("inv2"), Q("lg"), Q("root")
g = Q("g")  # inv*t: 1 wherever inv has a value
zero = Quantity("zero", "z", "1", "zero", domain="nonnegative", value=0, source=SRC)
DEFS = (D(inv, 1 / t), D(inv2, 1 / t), D(lg, sp.log(t)), D(root, sp.sqrt(t)), D(g, inv.sym * t))
QUANTITIES = (tq, p, inv, inv2, lg, root, g, zero)


def library(*claims):
    return Library([Topic("t", "t", "", QUANTITIES, (*DEFS, *claims))])


def scenario(tv):
    return Scenario("s", {"t": ScenarioValue("t", R(tv), "test")})


def check(goal, tv=None, hyps=()):
    claim = Claim("t.c", title="c", statement="s", source=SRC, goal=goal, hypotheses=tuple(hyps),
                  instance=tv is not None)
    return Checker(library(claim), scenario(0 if tv is None else tv), rlimit=2_000_000).check(["t.c"]).by_id()["t.c"]


FOLDED = [
    (logic.eq(inv.sym * t, 1), 0),
    (logic.eq(zero.sym * inv.sym, 0), 0),
    (logic.eq(inv.sym - inv2.sym, 0), 0),
    (logic.eq(g.sym, 1), 0),  # through a chain
    (logic.eq(lg.sym - sp.log(t), 0), 0),
    (logic.ge(root.sym ** 2 - t, 0), -4),
]


@pytest.mark.parametrize(("goal", "tv"), FOLDED)
def test_an_instance_claim_where_a_definition_has_no_value_is_never_decided(goal, tv):
    res = check(goal, tv)
    assert res.verdict == "unknown", res
    assert "is defined only where" in res.reason or "no real value" in res.reason


@pytest.mark.parametrize(("goal", "tv"), FOLDED)
def test_where_the_definition_has_a_value_the_claim_is_decided(goal, tv):
    assert check(goal, 2).verdict == "proved"


@pytest.mark.parametrize("goal", [logic.eq(inv.sym * t, 2), logic.eq(g.sym, 0)])
def test_a_false_twin_is_refuted_only_where_the_definition_has_a_value(goal):
    assert check(goal, 2).verdict == "refuted"
    res = check(goal)
    assert res.verdict == "refuted" and R(res.counterexample["t"]) != 0


def test_a_general_claim_through_a_folded_definition_keeps_its_proof():
    assert check(logic.eq(inv.sym * t, 1)).verdict == "proved"


def test_in_a_hypothesis_the_conditions_restrict_the_region():
    # g == 1 holds wherever g has a value, so it says t != 0
    assert check(logic.Not(logic.eq(t, 0)), hyps=(logic.eq(g.sym, 1),)).verdict == "proved"


@pytest.mark.parametrize(("text", "value"), [("inv*t", None), ("g", None), ("t", 0)])
def test_eval_reads_the_same_conditions(text, value):
    out = evaluate(library(), scenario(0), text)
    assert out.exact == value
    if value is None:
        assert "inv is defined only where t != 0" in out.display
    assert evaluate(library(), scenario(2), text).exact is not None


def test_a_remainder_by_a_constant_zero_is_undefined():
    res = check(logic.ge(sp.Mod(t, zero.sym), 0))
    assert res.verdict == "unknown" and res.counterexample is None
    x = sp.Symbol("x")
    assert decide(Problem([], logic.ge(sp.Mod(x, 0, evaluate=False), 0))).verdict == "unknown"


@settings(max_examples=20, deadline=None)
@given(st.fractions(-4, 4, max_denominator=3), st.integers(-2, 2))
def test_planted_folded_instances(tv, c):
    res = check(logic.ge(g.sym, c), tv)
    if tv == 0:
        assert res.verdict == "unknown"
    else:
        assert res.verdict == ("proved" if 1 >= c else "refuted")


def test_a_symbolic_power_keeps_its_value_at_a_zero_base():
    # the engines read a**(k + 1) only on a positive base; the power still has a value at a = 0, k = 1 (eval), but
    # a claim about it there is not proved: substituting k = 1 would turn it into a**2 and drop the base's side
    # condition, which the kernel reads as written (as it reads x**y with y == 2, x == 0: unknown)
    k = Quantity("k", "k", "1", "k", integer=True)
    power = Q("power")
    claim = Claim("t.c", title="c", statement="s", source=SRC, goal=logic.eq(power.sym, 0), instance=True)
    lib = Library([Topic("t", "t", "", (*QUANTITIES, k, power), (*DEFS, D(power, t ** (k.sym + 1)), claim))])
    scen = Scenario("s", {"t": ScenarioValue("t", R(0), "test"), "k": ScenarioValue("k", R(1), "test")})
    assert evaluate(lib, scen, "power").exact == 0
    result = Checker(lib, scen, rlimit=2_000_000).check(["t.c"]).by_id()["t.c"]
    assert result.verdict == "unknown" and "power base" in result.reason, result.reason
