"""A certificate whose statement holds a root of a number (``sqrt(2)``, ``3**(1/3)``): the root is a variable
``r`` with ``r**q = n**p``, a nonlinear term even with no quantity in sight, so the query's logic must be a
nonlinear one (it was ``QF_LRA``, which cvc5 refuses to read, so a true verdict was never confirmed)."""

from __future__ import annotations

import pytest
import sympy as sp

from derive.certify import smt2
from derive.certify.recheck import cvc5_available, recheck_one
from derive.certify.writer import certificate
from derive.kernel import logic
from derive.kernel.logic import Not
from derive.kernel.problem import Problem
from derive.kernel.prover import decide

R = sp.Rational
x = sp.Symbol("x")
needs_cvc5 = pytest.mark.skipif(not cvc5_available(), reason="cvc5 not installed")

# (problem, verdict): numbers only, a root times a quantity, a root in a denominator, an inconsistent assumption
CASES = {
    "root_of_number": (Problem([], logic.ge(sp.sqrt(2) / 2, R(1, 2))), "proved"),
    "root_times_quantity": (Problem([logic.ge(x, 1)], logic.ge(sp.sqrt(2) * x, 1)), "proved"),
    "cube_root_in_denominator": (Problem([logic.ge(x, 2)], logic.ge(x / 3 ** R(1, 3), R(1, 2))), "proved"),
    "root_against_assumption": (Problem([logic.le(sp.sqrt(3) / 3, R(1, 2))], logic.ge(x, 0)), "inconsistent"),
}
# the same statements made false: the recheck must never confirm them
TWINS = {
    "root_of_number": Problem([], logic.ge(sp.sqrt(2) / 2, R(3, 4))),
    "root_times_quantity": Problem([logic.ge(x, 1)], logic.ge(sp.sqrt(2) * x, 2)),
    "cube_root_in_denominator": Problem([logic.ge(x, 2)], logic.ge(x / 3 ** R(1, 3), 2)),
}


def _text(problem, verdict):
    out = decide(problem)
    assert out.verdict == verdict, out.reason
    cert = certificate("c", "test", problem, out)
    assert cert.kind == "smt2"
    return cert.text


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_root_of_a_number_makes_the_query_nonlinear(name):
    text = _text(*CASES[name])
    assert "root#" in text and "(set-logic QF_N" in text


@needs_cvc5
@pytest.mark.parametrize("name", sorted(CASES))
def test_cvc5_confirms_a_certificate_with_a_root_of_a_number(name):
    assert recheck_one(name, "smt2", _text(*CASES[name]), True).status == "confirmed"


@needs_cvc5
@pytest.mark.parametrize("name", sorted(TWINS))
def test_the_false_twin_is_never_confirmed(name):
    problem, verdict = CASES[name]
    true_text = _text(problem, verdict)
    twin = TWINS[name]
    # the twin's query: the true certificate with the goal's assertion replaced by the twin's negated goal
    twin_out = decide(twin)
    assert twin_out.verdict == "refuted", twin_out.reason
    text = smt2.query(sorted(twin.symbols(), key=str), twin.integer, [*twin.hypotheses, Not(twin.goal)])
    assert "(set-logic QF_N" in text
    assert recheck_one(name, "smt2", text, True).status == "disagrees"
    assert true_text != text
