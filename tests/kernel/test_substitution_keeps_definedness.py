"""Values that hypotheses fix (``y == 2``) are substituted before any route runs, and the statement must stay the
same on the region, definedness included.  A value could make a part defined that is not as written: ``x**y``
(a symbolic exponent: defined where x > 0) became ``x**2`` (defined everywhere), so ``x**y >= 0`` with
``y == 2, x <= 0`` was ``proved`` although it is undefined at every point of its region, while the same region
written as inequalities gave ``unknown``; and sympy folds ``y/x`` at y = 0 to 0, dropping x != 0.  Such a
substitution is not made: the statement is read as written.  Planted true claims with false twins; a
counterexample is re-checked here by plain exact arithmetic."""

from __future__ import annotations

from fractions import Fraction as F

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.kernel import logic
from derive.kernel.problem import Problem
from derive.kernel.prover import decide

R = sp.Rational
x, y, a = sp.symbols("x y a")

# name: (hypotheses, goal, verdict, truth(x, y, a) for a refutation's re-check)
CASES = {
    "power_exponent_fixed": ([logic.eq(y, 2)], logic.ge(x**y, 0), "unknown", None),
    "power_exponent_fixed_nonpositive_base": ([logic.eq(y, 2), logic.le(x, 0)], logic.ge(x**y, 0), "unknown", None),
    "power_exponent_fixed_positive_base": ([logic.eq(y, 2), logic.gt(x, 0)], logic.ge(x**y, 0), "proved", None),
    "power_exponent_fixed_twin": ([logic.eq(y, 2), logic.gt(x, 0)], logic.gt(x**y, 1), "refuted",
                                  lambda x, y, a: x**2 > 1),
    "power_negative_base_fixed": ([logic.eq(x, -2), logic.eq(y, -2)], logic.eq(x**y, R(1, 4)), "unknown", None),
    "power_zero_base_fixed": ([logic.eq(x, 0), logic.eq(y, 2)], logic.eq(x**y, 0), "unknown", None),
    "power_positive_base_fixed": ([logic.eq(x, 2), logic.eq(y, -2)], logic.eq(x**y, R(1, 4)), "proved", None),
    "power_positive_base_fixed_twin": ([logic.eq(x, 2), logic.eq(y, -2)], logic.eq(x**y, R(1, 2)), "refuted",
                                       lambda x, y, a: F(2) ** -2 == F(1, 2)),
    "numerator_fixed_to_zero": ([logic.eq(y, 0)], logic.eq(y / x, 0), "unknown", None),
    "numerator_fixed_to_zero_nonzero_x": ([logic.eq(y, 0), logic.gt(x, 0)], logic.eq(y / x, 0), "proved", None),
    "remainder_of_zero": ([logic.eq(y, 0)], logic.eq(sp.Mod(y, x), 0), "unknown", None),
    "remainder_of_zero_nonzero_x": ([logic.eq(y, 0), logic.ge(x, 1)], logic.eq(sp.Mod(y, x), 0), "proved", None),
    # substitutions that keep definedness are still made (the engines see fewer unknowns)
    "product_fixed": ([logic.eq(a, 3), logic.eq(y, 2)], logic.eq(a * y, 6), "proved", None),
    "product_fixed_twin": ([logic.eq(a, 3), logic.eq(y, 2)], logic.eq(a * y, 5), "refuted", lambda x, y, a: a * y == 5),
    "pole_moved": ([logic.eq(y, 2), logic.gt(x, 2)], logic.gt(1 / (x - y), 0), "proved", None),
    "pole_moved_twin": ([logic.eq(y, 2), logic.gt(x, 2)], logic.gt(1 / (x - y), 1), "refuted",
                        lambda x, y, a: 1 / (x - 2) > 1),
    "root_of_product": ([logic.eq(y, 4), logic.ge(a, 1)], logic.ge(sp.sqrt(a * y), 2), "proved", None),
    # a copy of x != 0 under a Piecewise guard does not carry the unguarded one that the fold of y/x drops
    "guarded_copy": ([logic.eq(y, 0)], logic.ge(y / x + sp.Piecewise((1 / x, x > 5), (0, True)), 0), "unknown",
                     None),
    "guarded_copy_twin": ([logic.eq(y, 0)], logic.gt(y / x + sp.Piecewise((1 / x, x > 5), (0, True)) + x**2, 0),
                          "unknown", None),  # not refuted at x = 0, where it is undefined
    "guarded_copy_in_a_hypothesis": ([logic.eq(y, 0), logic.ge(y / x + sp.Piecewise((1 / x, x > 5), (0, True)), 0)],
                                     logic.ne(x, 0), "proved", None),
    # a guarded condition a hypothesis gives (x > 0 for x**y under the branch z > 5) still lets y = 2 in
    "guarded_condition_given": ([logic.eq(y, 2), logic.gt(x, 0)],
                                logic.eq(sp.Piecewise((x**y - x**2, a > 5), (0, True)), 0), "proved", None),
    "guarded_condition_given_twin": ([logic.eq(y, 2), logic.gt(x, 0)],
                                     logic.eq(sp.Piecewise((x**y - x**2 + 1, a > 5), (0, True)), 0), "refuted",
                                     lambda x, y, a: (x**2 - x**2 + 1 if a > 5 else 0) == 0),
    # a branch the values do not reach keeps no condition: Piecewise((1, y > 0), (1/x, True)) at y = 1 is 1
    "unreached_branch": ([logic.eq(y, 1)], logic.gt(sp.Piecewise((1, y > 0), (1 / x, True)), 0), "proved", None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_substituted_value_keeps_what_is_defined(name):
    hyps, goal, verdict, truth = CASES[name]
    out = decide(Problem(hyps, goal))
    assert out.verdict == verdict, out.reason
    if verdict == "refuted":
        p = {n: F(str(out.counterexample.get(n, 1))) for n in ("x", "y", "a")}
        assert not truth(p["x"], p["y"], p["a"]), p


@settings(max_examples=30, deadline=None)
@given(st.fractions(min_value=-3, max_value=3, max_denominator=4), st.integers(min_value=-3, max_value=3))
def test_equalities_and_the_same_region_as_inequalities_agree(base, exponent):
    base = R(base.numerator, base.denominator)
    goal = logic.gt(x**y, 0)  # true wherever defined (x > 0)
    fixed = decide(Problem([logic.eq(x, base), logic.eq(y, exponent)], goal)).verdict
    boxed = decide(Problem([logic.ge(x, base), logic.le(x, base), logic.ge(y, exponent), logic.le(y, exponent)],
                           goal)).verdict
    assert fixed != "refuted" and boxed != "refuted"
    if base <= 0:  # undefined at the region's only point: never proved
        assert fixed != "proved" and boxed != "proved"
    else:
        assert fixed == "proved"
