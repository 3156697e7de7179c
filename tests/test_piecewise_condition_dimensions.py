"""A Piecewise condition compares like with like, as every relation of a claim does: a condition between a
duration and a plain number, or a sum of the two inside a condition, is refused when the library loads (it was
never read, so such a claim was decided).  A bare number is read in the SI base units of the other side."""

from __future__ import annotations

import re

import pytest
import sympy as sp
from libtools import make_library

from derive import Claim, Quantity, derived, logic
from derive.errors import DimensionError

a = Quantity("dur", "d", "s", "a duration")
b = Quantity("ratio", "r", "1", "a plain number")
A, B = a.sym, b.sym


def claim(goal):
    return Claim("t.c", title="c", statement="s", source=derived("t"), goal=goal)


@pytest.mark.parametrize(("cond", "words"), [
    (A > B, "condition 'dur > ratio' differ: s vs 1"),
    (A + B > 0, "dimension mismatch in sum"),
    (sp.And(A > 1, sp.Ne(A, B)), "condition 'Ne(dur, ratio)' differ"),
    (sp.Or(B > 2, A * B > B), "condition 'ratio < dur*ratio' differ"),
    (sp.log(A) > 1, "log applied to a quantity of dimension s"),
])
def test_a_condition_between_unlike_quantities_is_refused(cond, words):
    with pytest.raises(DimensionError, match=re.escape(words)):
        make_library(a, b, claim(logic.le(sp.Piecewise((1, cond), (2, True)), 3)))


@pytest.mark.parametrize("cond", [A > 1, sp.Eq(A, 0), sp.And(A > 2, B < 1), sp.Or(B > 2, A * B > A), sp.true])
def test_a_condition_between_like_quantities_loads(cond):
    make_library(a, b, claim(logic.le(sp.Piecewise((1, cond), (2, True)), 3)))
