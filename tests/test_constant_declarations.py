"""A constant's value is substituted everywhere, so a declaration it breaks (a negative value declared positive,
3/2 declared an integer) would be silently ignored: ``kbad > 0`` was refuted and ``kbad < 0`` proved for a
constant declared positive.  Such a constant is refused where it is built, with one line on the command line."""

from __future__ import annotations

from fractions import Fraction

import pytest
from libtools import one_error_line, run_cli

from derive import Quantity, derived
from derive.errors import LibraryError

SRC = derived("constants")


@pytest.mark.parametrize(("value", "domain", "integer", "words"), [
    (-2, "positive", False, "outside its declared domain (positive)"),
    (0, "positive", False, "outside its declared domain (positive)"),
    (Fraction(-1, 10), "nonnegative", False, "outside its declared domain (non-negative)"),
    (2, "fraction", False, "outside its declared domain (between 0 and 1)"),
    (Fraction(3, 2), "positive", True, "is not an integer"),
    ("0.5", "real", True, "is not an integer"),
])
def test_a_constant_breaking_its_declaration_is_refused(value, domain, integer, words):
    with pytest.raises(LibraryError, match=words.replace("(", r"\(").replace(")", r"\)")):
        Quantity("k", "k", "1", "k", domain=domain, integer=integer, value=value, source=SRC)


def test_a_whole_constant_that_is_not_whole_is_refused():
    with pytest.raises(LibraryError, match="is not an integer, but it is declared whole=True"):
        Quantity("k", "k", "1", "k", whole=True, value=Fraction(5, 2), source=SRC)
    assert Quantity("k", "k", "1", "k", whole=True, value=3, source=SRC).counted


@pytest.mark.parametrize(("value", "domain", "integer"), [
    (3, "positive", True), (0, "nonnegative", False), (1, "fraction", False), (0, "fraction", False),
    (-2, "real", True), ("0.25", "fraction", False),
])
def test_a_constant_meeting_its_declaration_is_built(value, domain, integer):
    assert Quantity("k", "k", "1", "k", domain=domain, integer=integer, value=value, source=SRC).value is not None


def test_the_command_line_says_one_line(capsys, tmp_path):
    (tmp_path / "mine.py").write_text("from derive import Quantity, derived\n"
                                      "k = Quantity('kneg', 'k', '1', 'k', value=-2, source=derived('x'))\n")
    code, out, err = run_cli(capsys, ["check", "--library", str(tmp_path)])
    one_error_line(code, err)
    assert "constant 'kneg': value -2 is outside its declared domain (positive)" in err and out == ""
