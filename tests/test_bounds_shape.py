"""A claim's ``bounds`` are checked for shape when the library is written, not when it is checked."""

from __future__ import annotations

import pytest
import sympy as sp

from derive import Claim, Quantity, derived, logic
from derive.errors import LibraryError

u = Quantity("u_val", "u", "1", "a number")


def claim(bounds):
    return Claim("t.c", title="t", statement="t", source=derived("test"), goal=logic.le(u.sym**2, 100), bounds=bounds)


def test_triples_and_mappings_are_the_same_bounds():
    assert claim(((u, sp.Rational(1, 10), 10),)).bounds == claim({u: (sp.Rational(1, 10), 10)}).bounds


@pytest.mark.parametrize("bad", [(u, 1), {u: 1}, ((u, 1),), (("u_val", 0, 1),), 5])
def test_malformed_bounds_are_a_library_error(bad):
    with pytest.raises(LibraryError, match="malformed bounds"):
        claim(bad)
