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
    math_number,
    math_value,
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
        (Fraction(1, 1800), "USD/s", "$2/h"),  # money per second reads per hour, as chips are rented
        (5, "USD/s", "$18k/h"),
        (-Fraction(1, 1800), "USD/s", "-$2/h"),
        (4.6e6, "USD", "$4.6M"),
        (-Fraction(23, 10**7), "USD/token", "-$2.3/Mtok"),
        (20, "TB/s", "20 TB/s"),
        (0.02, "TB/s", "20 GB/s"),
        (989, "TFLOPS", "989 TFLOP/s"),
        (150, "s", "2.5 min"),
        (7200, "s", "2 h"),
        (3 * 10**6, "s", "34.72 days"),
        (Fraction(1, 10**12), "s", "1 ps"),
        (Fraction(9956, 10**13), "s", "995.6 ps"),  # as ns, µs and ms: the mantissa in [1, 1000)
        (Fraction(999, 10**12), "s", "999 ps"),
        (Fraction(1, 10**9), "s", "1 ns"),
        (Fraction(1, 10**13), "s", "1e-13 s"),  # below a picosecond: scientific
        (Fraction(-5, 10**11), "s", "-50 ps"),
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


@pytest.mark.parametrize(
    ("value", "unit", "math", "exact"),
    [
        (312 * 10**12, "FLOP/s", r"312\,\mathrm{TFLOP/s}", True),
        (2039 * 10**9, "byte/s", r"2.039\,\mathrm{TB/s}", True),
        (2400, "seq", r"2{,}400\,\mathrm{seq}", True),
        (128_000, "token/seq", r"128\mathrm{k}\,\mathrm{token/seq}", True),
        (sp.Rational(575, 10) * 10**24, "FLOP", r"5.75 \times 10^{25}\,\mathrm{FLOP}", True),
        (sp.Rational(23, 10**7), "USD/token", r"\$2.3/\mathrm{Mtok}", True),
        (Fraction(1, 10**5), "s", r"10\,\mathrm{\mu s}", True),
        (Fraction(9956, 10**13), "s", r"995.6\,\mathrm{ps}", True),
        (3, "FLOP/(param*token)", r"3\,\mathrm{FLOP/(param{\cdot}token)}", True),
        (5, "1/s", r"5/\mathrm{s}", True),
        (50, "%", r"50\,\%", True),
        # more figures, or a small fraction in the unit chosen, where 4 figures would round an exact value
        (Fraction(1, 64), "s", r"15.625\,\mathrm{ms}", True),
        (32768, "token/seq", r"32.768\mathrm{k}\,\mathrm{token/seq}", True),
        (Fraction(25047, 100), "token", r"250.47\,\mathrm{token}", True),
        (Fraction(5000, 3), "byte/token", r"\frac{5}{3}\,\mathrm{kB/token}", True),
        (Fraction(4 * 10**14, 3), "token", r"\frac{400}{3}\mathrm{T}\,\mathrm{token}", True),
        # nothing short is exact: rounded, and said so
        (Fraction(7703545352014791, 10), "FLOP/s", r"770.4\,\mathrm{TFLOP/s}", False),
        (None, "s", r"\text{undefined}", False),
    ],
)
def test_math_value(value, unit, math, exact):
    assert math_value(value, unit) == (math, exact)


def test_math_number_is_short_and_says_when_it_rounds():
    assert math_number(10**8) == ("10^{8}", True)
    assert math_number(25 * 10**6) == (r"2.5 \times 10^{7}", True)
    assert math_number(12345678) == (r"1.2345678 \times 10^{7}", True)
    assert math_number(123456789) == (r"1.235 \times 10^{8}", False)
    assert math_number(Fraction(1, 3)) == ("0.3333", False)
    assert math_number(123456) == ("123{,}456", True)
    assert math_number(sp.oo) == (r"\infty", False)


_SHOWN = re.compile(r"^(-?)(\$?)([\d,.]+(?:e-?\d+)?)([kMGTB]?)(.*)$")
_SUFFIX = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "B": 10**9}
_UNITS = ["byte/s", "FLOP/s", "s", "USD/token", "seq", "token/seq", "param", "FLOP", "1", "GiB", "USD/h",
          "byte/token", "FLOP/byte", "USD", "ms", "TB/s", "USD/s"]


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


def _read(text: str, unit: str) -> Fraction:
    """A printed count back to a number: ``23.789k token/seq`` -> 23789."""
    number = text.split()[0].replace(",", "")
    scale = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}.get(number[-1], 1)
    return Fraction(number.rstrip("kMGT")) * scale


@pytest.mark.parametrize(("value", "upper", "printed"), [
    (Fraction(7612537, 320), True, "23.789k token/seq"),  # 23.79k would be a context that does not fit
    (Fraction(7612537, 320), False, "23.79k token/seq"),
    (131072, True, "131.07k token/seq"),
    (355400, True, "355.4k token/seq"),  # exact at four figures: nothing added
    (Fraction(7612537, 5), True, "1.5225M token/seq"),
    (Fraction(40, 3), False, "13.34 token/seq"),  # a repeating decimal: four figures rounded inward
    (Fraction(40, 3), True, "13.33 token/seq"),
])
def test_a_bound_is_printed_on_its_sets_side(value, upper, printed):
    from derive.model.display import format_bound

    assert format_bound(value, parse_unit("token/seq").dimension, upper=upper) == printed


@settings(max_examples=200, deadline=None)
@given(st.fractions(min_value=Fraction(1, 10**3), max_value=Fraction(10**12)), st.booleans())
def test_a_printed_bound_never_reads_past_its_value(value, upper):
    from derive.model.display import format_bound

    text = format_bound(value, parse_unit("token/seq").dimension, upper=upper)
    assert (_read(text, "token/seq") <= value) if upper else (_read(text, "token/seq") >= value), text
