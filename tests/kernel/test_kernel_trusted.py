"""derive.kernel.trusted on its own: refusals, side conditions, exact evaluation, re-checks, certificates."""

from __future__ import annotations

import pytest
import sympy as sp

from derive.kernel import logic
from derive.kernel.logic import Rel
from derive.kernel.problem import Problem
from derive.kernel.trusted import Kernel, OverBudget, Refused, Undefined, evaluate_at, refusal, side_conditions

R = sp.Rational
x, y, n, k = sp.symbols("x y n k")


def problem(hyps, goal, integer=(), bounds=None):
    return Problem(list(hyps), goal, set(integer), dict(bounds or {}), 2_000_000, 0)


@pytest.mark.parametrize(("prob", "word"), [
    (problem([], logic.eq(x * 0.5, x / 2)), "float"),
    (problem([], logic.le(x, 1), bounds={x: (0.1, 1)}), "float"),
    (problem([], logic.le(x, 1), bounds={x: (R(2), R(1))}), "high-to-low"),
    (problem([], logic.le(sp.tan(x), 1)), "domain rule"),
    (problem([], logic.le(sp.Symbol("q", positive=True), 1)), "assumptions"),
    (problem([], logic.le(x, sp.oo)), "not a real number"),
])
def test_refusals(prob, word):
    why = refusal(prob)
    assert why and word in why
    with pytest.raises(Refused):
        Kernel(prob)


def test_side_conditions_of_every_construct():
    text = lambda e: sorted(str(sc.condition) for sc in side_conditions(e))  # noqa: E731
    assert text(1 / (x - 1)) == ["x - 1 != 0"]
    assert text(sp.sqrt(x)) == ["x >= 0"]
    assert text(x ** R(-1, 2)) == ["x > 0"]
    assert text(sp.log(x - 2)) == ["x - 2 > 0"]
    assert text(x**k) == ["x > 0"]
    assert text(sp.sqrt(2) + 1 / R(3)) == []  # numbers are settled at once
    (guarded,) = side_conditions(sp.Piecewise((1 / x, x > 0), (0, True)))
    assert isinstance(guarded.condition, logic.Implies)


def test_exact_evaluation_is_strict_and_certified():
    with pytest.raises(Undefined):
        evaluate_at(Rel(1 / x, ">", -1), {x: R(0)})
    with pytest.raises(Undefined):
        evaluate_at(Rel(sp.log(x), "<", 1), {x: R(-1)})
    assert evaluate_at(Rel(sp.sqrt(2), "<", R(3, 2)), {})
    assert evaluate_at(Rel(sp.exp(1), "<", sp.E + R(1, 10**36)), {})
    assert not evaluate_at(Rel(sp.E, "<", sp.E), {})
    assert evaluate_at(Rel(2**n, ">", 10**1000), {n: 10**7})  # beyond exact budget: intervals decide
    assert evaluate_at(Rel(x ** R(1, 3), "==", 2), {x: R(8)})  # perfect powers stay exact


def test_undecidable_equality_is_over_budget():
    with pytest.raises(OverBudget):
        evaluate_at(Rel(sp.sqrt(2) * sp.sqrt(3), "==", sp.sqrt(6) + sp.exp(-10**6)), {})


def test_counterexample_recheck_covers_the_statement():
    kern = Kernel(problem([logic.gt(x, 0)], logic.lt(1 / (x - 2), 5), integer=[n] if False else (),
                          bounds={x: (R(1), R(10))}))
    assert kern.counterexample_failure({x: R(21, 10)}) is None  # 1/(1/10) = 10 >= 5
    assert "outside its bounds" in kern.counterexample_failure({x: R(11)})
    assert "not settled" in kern.counterexample_failure({x: R(2)})  # undefined is no counterexample
    assert "goal holds" in kern.counterexample_failure({x: R(5)})
    kint = Kernel(problem([logic.gt(n, 0)], logic.gt(n, 1), integer=[n]))
    assert "not an integer" in kint.counterexample_failure({n: R(1, 2)})
    assert kint.counterexample_failure({n: R(1)}) is None
    assert "hypothesis" in kint.counterexample_failure({n: R(-1)})


def test_forged_proofs_are_rejected():
    kern = Kernel(problem([], logic.le(sp.exp(x), 2), bounds={x: (R(0), R(1))}))
    assert kern.proved("interval", certificate=("leaf",)).verdict == "unknown"
    bad_split = ("split", x, R(5), ("leaf",), ("leaf",))
    assert "bad split" in kern.proved("interval", certificate=bad_split).reason
    assert kern.proved("z3").verdict == "unknown"  # z3 never ran on the goal
    assert kern.proved("sympy").verdict == "unknown"
    assert kern.proved("exact").verdict == "unknown"
    true = Kernel(problem([], logic.le(sp.exp(x), 3), bounds={x: (R(0), R(1))}))
    out = true.proved("interval", certificate=("split", x, R(1, 2), ("leaf",), ("leaf",)))
    assert out.verdict == "proved"


def test_proof_needs_a_non_empty_region_and_its_side_conditions():
    kern = Kernel(problem([logic.gt(x, 1), logic.lt(x, 0)], logic.ge(x, 0)))
    assert kern.inconsistent() is not None
    kern = Kernel(problem([logic.ge(x, 0)], logic.eq(1 / x, 1 / x)))
    assert kern.z3_goal()[0] == "unsat"  # z3 reads 1/0 as some number ...
    out = kern.proved("z3")
    assert out.verdict == "unknown" and "x != 0" in out.reason  # ... the kernel does not
    kern = Kernel(problem([logic.gt(x, 0)], logic.gt(1 / x, 0)))
    kern.z3_goal()
    out = kern.proved("z3")
    assert out.verdict == "proved" and out.side_conditions


@pytest.mark.parametrize("power", [2**x, sp.Rational(1, 2) ** (-x), 3 ** (x / 2)])
def test_a_region_z3_reads_through_a_relaxed_power_is_no_witness_by_itself(power):
    # 2**x == 3 holds only at x = log2(3) > 1: with x < 1 the region is empty, but z3 reads 2**x as a fresh
    # positive number and answers sat (p = 3, x = 1/2); read as exact, the claim was `proved` on no point
    from derive.kernel.prover import decide

    value = sp.Integer(3) if power != 3 ** (x / 2) else sp.Integer(9)
    out = decide(Problem([logic.eq(power, value), logic.lt(x, 1)], logic.gt(x, 0)))
    assert out.verdict != "proved", out.reason
    assert Kernel(Problem([logic.eq(power, value), logic.lt(x, 1)], logic.gt(x, 0))).consistency()[0] != "nonempty"
    # where a point the kernel confirms exists, the same region is non-empty (x = 1: 2**1 == 2)
    assert Kernel(Problem([logic.eq(2**x, 2), logic.le(x, 1)], logic.gt(x, 0))).consistency()[0] == "nonempty"
