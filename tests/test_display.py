"""The formatter for values with units (derive/model/display.py): a table of input -> exact text,
and properties: what is shown reads back (number, suffix, unit) to the value within rounding, and JSON
is always finite."""

import json
import math
import re
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.model.display import (
    display_json,
    format_assignment,
    format_number,
    format_range,
    format_value,
    latex_value,
    shown,
)
from derive.model.units import Dimension, parse_unit


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (2 * 10**13, "byte/s", "20 TB/s"),
        (Fraction(225, 4) * 10**9, "byte/s", "56.25 GB/s"),
        (24 * 10**15, "FLOP/s", "24 PFLOP/s"),
        (sp.Rational(9, 625), "s", "14.4 ms"),
        (sp.Rational(23, 10**7), "USD/token", "$2.3/Mtok"),
        (2400, "seq", "2,400 seq"),
        (sp.Integer(1200), "seq", "1,200 seq"),
        (sp.Rational(575, 10) * 10**24, "FLOP", "5.75e25 FLOP"),
        (200_000, "token/seq", "200k token/seq"),
        (30_100, "token/seq", "30.1k token/seq"),
        (10**6, "token/seq", "1M token/seq"),
        (70 * 10**9, "param", "70G param"),
        (0, "byte/s", "0 byte/s"),
        (Fraction(-3, 2), "s", "-1.5 s"),
        (80, "GiB", "80 GiB"),
        (3072, "GiB", "3 TiB"),
        (999_999, "byte", "1 MB"),  # rounding to 4 figures moves to the next prefix
        (999_4, "byte", "9.994 kB"),
        (Fraction(1, 3), "1", "0.3333"),
        (1200, "1", "1,200"),
        (6, "FLOP/(param*token)", "6 FLOP/(param·token)"),
        (2.5, "USD/h", "$2.5/h"),
        (4.6e6, "USD", "$4.6M"),
        (-Fraction(23, 10**7), "USD/token", "-$2.3/Mtok"),
        (20, "TB/s", "20 TB/s"),
        (0.02, "TB/s", "20 GB/s"),
        (989, "TFLOPS", "989 TFLOP/s"),
        (150, "s", "2.5 min"),
        (7200, "s", "2 h"),
        (3 * 10**6, "s", "34.72 days"),
        (Fraction(1, 10**12), "s", "1e-12 s"),
        (5, "1/s", "5/s"),
        (50, "%", "50%"),
        (sp.sqrt(2), "s", "1.414 s"),
        (sp.Rational(-4254, 10), "seq", "-425.4 seq"),
        (12, "Gb/s", "12 Gbit/s"),
        (10**30, "seq", "1e30 seq"),
        (2 * 10**12, Dimension.of(byte=1, s=-1), "2 TB/s"),
        (float("inf"), "byte/s", "∞ byte/s"),
        (sp.oo, "s", "∞ s"),
        (None, "seq", "undefined"),
        (float("nan"), "seq", "undefined"),
        (sp.nan, "seq", "undefined"),
        (sp.I, "seq", "undefined"),
    ],
)
def test_format_value(value, unit, text):
    assert format_value(value, unit) == text


def test_fixed_unit_and_significant_figures():
    assert format_value(Fraction(9, 625) * 1000, "ms", fixed=True) == "14.4 ms"
    assert format_value(Fraction(1, 7), "s", sig=2) == "140 ms"
    assert format_value(12345678, "1", sig=6) == "12.3457M"
    assert format_number(Fraction(1, 7)) == "0.1429"
    assert format_number(123456) == "123,456"
    assert format_number(None) == "undefined"


def test_assignment_and_range():
    assert format_assignment("hbm_bandwidth", 2 * 10**13, "byte/s") == "hbm_bandwidth = 20 TB/s"
    assert format_range(Fraction(225, 4) * 10**9, sp.oo, "byte/s") == "[56.25 GB/s, ∞)"
    assert format_range(1, 2, "s", lo_closed=False) == "(1 s, 2 s]"


def test_display_json_is_finite_and_exact():
    d = display_json(sp.Rational(225, 4), "GB/s")
    assert d == {"value": 56.25, "exact": "225/4", "unit": "GB/s", "display": "56.25 GB/s"}
    assert display_json(sp.sqrt(2), "s")["exact"] == "sqrt(2)"
    for bad in (None, float("nan"), float("inf"), sp.oo, sp.zoo):
        out = display_json(bad, "s")
        assert out["value"] is None and out["reason"]
        json.dumps(out, allow_nan=False)
    huge = display_json(10**400, "FLOP")
    assert huge["value"] is None and huge["exact"] == str(10**400)
    json.dumps(huge, allow_nan=False)


def test_latex_value_parts():
    assert latex_value(Fraction(225, 4) * 10**9, "byte/s") == latex_value(56.25, "GB/s")
    lv = latex_value(sp.Rational(23, 10**7), "USD/token")
    assert (lv.num, lv.unit) == ("2.3", "USD/Mtok")
    assert latex_value(200_000, "token/seq").num == "200000"
    assert latex_value(70 * 10**9, "param").num == "7e10"
    assert latex_value(None, "s").text == r"\text{undefined}"
    assert latex_value(float("-inf"), "s").text == r"-\infty"


_SHOWN = re.compile(r"^(-?)(\$?)([\d,.]+(?:e-?\d+)?)([kMGTB]?)(.*)$")
_SUFFIX = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "B": 10**9}
_UNITS = ["byte/s", "FLOP/s", "s", "USD/token", "seq", "token/seq", "param", "FLOP", "1", "GiB", "USD/h",
          "byte/token", "FLOP/byte", "USD", "ms", "TB/s"]


def _read_back(text: str, money_unit: str) -> Fraction:
    """The value a reader takes from the text, in SI base units."""
    m = _SHOWN.match(text)
    assert m, text
    sign, dollar, number, suffix, rest = m.groups()
    value = Fraction(number.replace(",", "")) * _SUFFIX[suffix] * (-1 if sign else 1)
    unit = rest.strip()
    if dollar:
        unit = "USD" + unit
    return value * parse_unit(unit or "1").scale


@settings(max_examples=300, deadline=None)
@given(
    st.fractions(min_value=Fraction(-10**20), max_value=Fraction(10**20), max_denominator=10**12),
    st.sampled_from(_UNITS),
)
def test_shown_reads_back_within_rounding(value, unit):
    text = format_value(value, unit)
    assert "Fraction" not in text and "e+" not in text
    si = value * parse_unit(unit).scale
    back = _read_back(text, unit)
    if si == 0:
        assert back == 0
    else:
        assert abs(back - si) <= abs(si) * Fraction(5, 10**4) + Fraction(1, 10**30), (value, unit, text)
    # the unit part is a unit string of the grammar, with the same dimension
    s = shown(value, unit)
    assert parse_unit(s.unit).dimension == parse_unit(unit).dimension
    lv = latex_value(value, unit)
    assert lv.num is not None and math.isfinite(float(lv.num))
    assert parse_unit(lv.unit).dimension == parse_unit(unit).dimension
