"""The `fraction` domain (0 <= x <= 1: a probability, a share): every engine reads both ends, and a value from
outside (--set, a sweep's range, an audit cell) is refused with one line."""

from __future__ import annotations

import pytest
import sympy as sp
from libtools import make_library, one_error_line, run_cli

from derive import Claim, Quantity, derived, logic
from derive.checking.checker import Checker
from derive.errors import LibraryError
from derive.model.scenario import Scenario

p = Quantity("share", "p", "1", "a share", domain="fraction")


def _verdicts(*claims):
    lib = make_library(p, *claims)
    return {r.id: r.verdict for r in Checker(lib, Scenario("empty", {})).check().results}


def test_both_ends_are_known_to_the_kernel():
    true = Claim("t.at_most_one", title="t", statement="s", source=derived("t"), goal=logic.le(p.sym, 1))
    square = Claim("t.square_below", title="t", statement="s", source=derived("t"), goal=logic.le(p.sym**2, p.sym))
    twin = Claim("t.below_half", title="t", statement="s", source=derived("t"), goal=logic.le(p.sym, sp.Rational(1, 2)))
    got = _verdicts(true, square, twin)
    assert got == {"t.at_most_one": "proved", "t.square_below": "proved", "t.below_half": "refuted"}


def test_the_domain_formula_and_its_words():
    assert p.domain_formula().evaluate({p.sym: sp.Rational(1, 2)})
    assert not p.domain_formula().evaluate({p.sym: sp.Rational(3, 2)})
    assert p.domain_words == "between 0 and 1"
    assert [p.outside_domain(v) for v in (-0.1, 0, 1, 1.5)] == [True, False, False, True]
    with pytest.raises(LibraryError):
        Quantity("x", "x", "1", "x", domain="probability")


@pytest.mark.parametrize("argv", [
    ["eval", "iid_accepted_tokens", "--library", "serving", "--set", "acceptance_rate=1.5", "--set", "draft_length=2"],
    ["sweep", "iid_accepted_tokens", "--library", "serving", "--vary", "acceptance_rate=0:2:5",
     "--set", "draft_length=2"],
])
def test_a_value_past_one_is_one_error_line(capsys, argv):
    code, _, err = run_cli(capsys, argv)
    one_error_line(code, err)
    assert "acceptance_rate" in err and ("between 0 and 1" in err)
