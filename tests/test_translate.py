"""Property tests: the sympy->z3 translation agrees with exact evaluation, and its verdicts with
exact evaluation at random points."""

from __future__ import annotations

import sympy as sp
import z3
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from derive import logic
from derive.errors import TranslationError
from derive.kernel.problem import Problem
from derive.kernel.prover import decide
from derive.kernel.translate import Translator, make_variables

A, B, C = sp.symbols("a b c")
SYMS = (A, B, C)

leaves = st.one_of(
    st.sampled_from(SYMS),
    st.fractions(min_value=-20, max_value=20, max_denominator=9).map(lambda f: sp.Rational(f.numerator, f.denominator)),
)


def combine(children):
    return st.one_of(
        st.tuples(children, children).map(lambda t: t[0] + t[1]),
        st.tuples(children, children).map(lambda t: t[0] - t[1]),
        st.tuples(children, children).map(lambda t: t[0] * t[1]),
        st.tuples(children, children).map(lambda t: t[0] / (t[1] ** 2 + 1)),  # denominators kept away from 0
        st.tuples(children, st.integers(0, 3)).map(lambda t: t[0] ** t[1]),
        st.tuples(children, children).map(lambda t: sp.Max(t[0], t[1])),
        st.tuples(children, children).map(lambda t: sp.Min(t[0], t[1])),
        children.map(sp.Abs),
    )


exprs = st.recursive(leaves, combine, max_leaves=8)
points = st.fixed_dictionaries({
    s: st.fractions(min_value=-10, max_value=10, max_denominator=7).map(
        lambda f: sp.Rational(f.numerator, f.denominator))
    for s in SYMS
})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(exprs, points)
def test_translation_agrees_with_exact_evaluation(expr, point):
    expected = expr.xreplace(point)
    assume(expected.is_Rational)
    tr = Translator(make_variables(set(SYMS)))
    z = tr.expr(expr)
    s = z3.Solver()
    s.add(*tr.definitions)
    s.add(*[tr.variables[k] == z3.Q(int(v.p), int(v.q)) for k, v in point.items()])
    s.add(z != z3.Q(int(expected.p), int(expected.q)))
    assert s.check() == z3.unsat


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(exprs, exprs, points)
def test_verdicts_agree_with_exact_evaluation(lhs, rhs, point):
    """A refutation's counterexample really violates the relation; a proof holds at any point."""
    goal = logic.ge(lhs, rhs)
    out = decide(Problem([], goal, rlimit=2_000_000))
    if out.verdict == "proved":
        assert goal.evaluate(point)
    elif out.verdict == "refuted":
        cex = {s: out.counterexample.get(str(s), sp.Integer(0)) for s in SYMS}
        assert not goal.evaluate(cex)
    else:
        assert out.verdict == "unknown" and out.reason


def test_nonpolynomial_is_reported_not_guessed():
    tr = Translator(make_variables({A}))
    try:
        tr.expr(sp.exp(A))
    except TranslationError as err:
        assert "non-polynomial" in err.message
    else:  # pragma: no cover
        raise AssertionError("exp must not translate")


def test_rational_power_gets_an_exact_root():
    out = decide(Problem([logic.gt(A, 0)], logic.eq(sp.sqrt(A) ** 2, A)))
    assert out.verdict == "proved"
    out = decide(Problem([logic.eq(A, 2)], logic.eq(sp.sqrt(A), sp.Rational(7, 5))))
    assert out.verdict == "refuted"
