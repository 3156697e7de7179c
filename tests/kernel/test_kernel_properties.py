"""Property tests: random claims whose truth is known by construction, true ones and false twins."""

from __future__ import annotations

import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from derive.kernel import logic
from derive.kernel.problem import Problem
from derive.kernel.prover import decide
from derive.kernel.trusted import Kernel

R = sp.Rational
x = sp.Symbol("x")
rationals = st.fractions(min_value=-20, max_value=20, max_denominator=12).map(lambda f: R(f.numerator, f.denominator))
weights = st.lists(st.tuples(st.integers(1, 5), rationals), min_size=1, max_size=3)
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check(problem: Problem, truth: bool) -> None:
    out = decide(problem)
    assert "internal error" not in (out.reason or "")
    if truth:
        assert out.verdict != "refuted" and out.verdict != "inconsistent", out
    else:
        assert out.verdict != "proved", out
    if out.verdict == "refuted":
        point = {s: R(out.counterexample[str(s)]) for s in problem.symbols()}
        assert Kernel(problem).counterexample_failure(point) is None


@SETTINGS
@given(weights, rationals)
def test_sums_of_squares(terms, d):
    poly = sum(c * (x - r) ** 2 for c, r in terms) + d
    _check(Problem([], logic.ge(poly, d)), True)
    r0 = terms[0][1]
    at_r0 = poly.subs(x, r0)
    _check(Problem([], logic.ge(poly, at_r0 + R(1, 10))), False)


@SETTINGS
@given(rationals, rationals, rationals, st.integers(1, 30))
def test_linear_on_a_box(a, b, lo, width):
    hi = lo + width
    top = max(a * lo + b, a * hi + b)
    bounds = {x: (lo, hi)}
    _check(Problem([], logic.le(a * x + b, top), bounds=bounds), True)
    _check(Problem([], logic.le(a * x + b, top - R(1, 100)), bounds=bounds), False)


@SETTINGS
@given(st.fractions(min_value=-2, max_value=2, max_denominator=6), rationals)
def test_exponentials_on_a_box(a, lo):
    a = R(a.numerator, a.denominator)
    hi = lo / 4 + 1 if lo > 0 else lo + 2
    lo, hi = min(lo / 4, hi), max(lo / 4, hi)
    top = sp.exp(max(a * lo, a * hi))
    bounds = {x: (lo, hi)}
    _check(Problem([], logic.le(sp.exp(a * x), top + R(1, 100)), bounds=bounds), True)
    _check(Problem([], logic.le(sp.exp(a * x), top - R(1, 100)), bounds=bounds), False)


@SETTINGS
@given(rationals, st.integers(1, 6))
def test_poles_are_never_proved(c, width):
    goal = logic.gt(sp.exp(x) + 1 / (x - c) ** 2, 0)
    _check(Problem([], goal, bounds={x: (c - width, c + width)}), False)  # undefined at c: not "true"
    _check(Problem([], goal, bounds={x: (c + R(1, 2), c + width)}), True)
