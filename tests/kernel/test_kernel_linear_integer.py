"""Linear integer claims go to z3's linear integer procedure and are decided, true ones proved and their
false twins refuted at a re-checked point; problems with a real quantity or a nonlinear relation keep
the general route."""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from integer_layouts import cases

from derive.kernel import logic
from derive.kernel.logic import Rel
from derive.kernel.problem import Problem
from derive.kernel.prover import decide
from derive.kernel.trusted import Kernel, evaluate_at

c, B, x, y = sp.symbols("c B x y")
CASES = cases()


@pytest.mark.parametrize("case", CASES, ids=[k.id for k in CASES])
def test_integer_layout_claim_is_decided(case):
    out = decide(case.problem)
    assert out.verdict == {"true": "proved", "false": "refuted"}[case.truth], out.reason
    if out.verdict == "refuted":
        point = {sp.Symbol(k): v for k, v in out.counterexample.items()}
        assert all(v.is_integer for v in point.values())
        assert all(evaluate_at(h, point) for h in case.problem.hypotheses)
        assert not evaluate_at(case.problem.goal, point)


def test_ceiling_as_two_inequalities_is_proved():
    # c = ceil(2B/8) written as 8c >= 2B and 8c < 2B + 8: the rounding adds at most 6 (z3's mixed core ran
    # to its resource limit on this before the linear integer route)
    hyps = [logic.ge(8 * c, 2 * B), logic.lt(8 * c, 2 * B + 8), logic.ge(B, 1)]
    assert decide(Problem(hyps, logic.le(8 * c - 2 * B, 6), {c, B})).verdict == "proved"
    twin = decide(Problem(hyps, logic.le(8 * c - 2 * B, 5), {c, B}))
    assert twin.verdict == "refuted"


def test_rational_coefficients_keep_their_meaning():
    # c >= B/3 and c < B/3 + 1 with B = 4: c = 2; a scaled relation that lost its direction would refute
    hyps = [logic.ge(c, B / 3), logic.lt(c, B / 3 + 1), logic.eq(B, 4)]
    assert decide(Problem(hyps, logic.eq(c, 2), {c, B})).verdict == "proved"
    assert decide(Problem(hyps, logic.eq(c, 1), {c, B})).verdict == "refuted"


def test_integrality_alone_makes_the_assumptions_inconsistent():
    hyps = [logic.gt(2 * c, 1), logic.lt(2 * c, 2)]  # 1/2 < c < 1 has no integer
    assert decide(Problem(hyps, logic.ge(c, 5), {c})).verdict == "inconsistent"


@pytest.mark.parametrize("problem, linear", [
    (Problem([logic.ge(c, 1)], logic.ge(2 * c + B / 7, 1), {c, B}), True),
    (Problem([logic.ge(c, 1)], logic.ge(c * B, 1), {c, B}), False),  # a product of quantities
    (Problem([logic.ge(c, 1)], logic.ge(c + x, 1), {c}), False),  # a real quantity
    (Problem([logic.ge(c, 1)], logic.ge(1 / c, 0), {c}), False),  # a division by a quantity
], ids=["linear", "product", "real_quantity", "division"])
def test_route_is_taken_only_for_linear_integer_problems(problem, linear):
    assert Kernel(problem).linear_integer is linear


@settings(max_examples=25, deadline=None)
@given(d=st.integers(2, 500), slack=st.integers(0, 3))
def test_ceiling_rounds_up_by_less_than_the_divisor(d, slack):
    hyps = [logic.ge(d * c, B), logic.lt(d * c, B + d), logic.ge(B, 1)]
    bound = d - 1 - slack
    out = decide(Problem(hyps, Rel(d * c - B, "<=", bound), {c, B}))
    assert out.verdict == ("proved" if slack == 0 else "refuted")


def test_a_regions_answer_is_the_same_whatever_was_asked_before_it():
    # 1822a + 2221b = 1822*2221 - 1822 - 2221 (the Frobenius number: no whole solution).  A nonlinear goal reads
    # the region over reals with is_int, where z3 runs out of its budget; a linear one over Int sorts, where it is
    # unsat.  The region's answer was kept per region alone: after the first, the second was `unknown`
    a, b = sp.symbols("a b")
    region = [logic.ge(a, 0), logic.ge(b, 0), logic.eq(1822 * a + 2221 * b, 1822 * 2221 - 1822 - 2221)]
    decide(Problem(region, logic.ge(a * b, 0), {a, b}))
    assert decide(Problem(region, logic.ge(a, 0), {a, b})).verdict == "inconsistent"


def test_a_declared_integrality_of_a_linear_integer_goal_is_read():
    # h := n/2 declared an integer: z3 is asked whether the declaration holds somewhere, which the Int-sorted
    # reading could not state (an internal error, so `unknown`); n >= 1 gives n/2 > 0 wherever it holds
    n = sp.Symbol("n")
    out = decide(Problem([logic.ge(n, 1)], logic.ge(n / 2, 0), {n}, conditions=(("n/2 is declared an integer",
                                                                                 logic.IsInteger(n / 2)),)))
    assert out.verdict == "proved", out.reason
