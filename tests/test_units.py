from fractions import Fraction

import pytest

from derive.errors import UnitError
from derive.model.units import Dimension, format_dimension, parse_unit, si, unit_factors


@pytest.mark.parametrize(
    ("text", "dimension", "scale"),
    [
        ("TB/s", "byte/s", 10**12),
        ("GB", "byte", 10**9),
        ("GiB", "byte", 2**30),
        ("Gb/s", "byte/s", Fraction(10**9, 8)),
        ("TFLOP/s", "FLOP/s", 10**12),
        ("TFLOPS", "FLOP/s", 10**12),
        ("ms", "s", Fraction(1, 1000)),
        ("h", "s", 3600),
        ("USD/h", "USD/s", Fraction(1, 3600)),
        ("FLOP/(param*token)", "FLOP/(token·param)", 1),
        ("B/param", "byte/param", 1),
        ("token/seq", "token/seq", 1),
        ("1/token", "1/token", 1),
        ("%", "1", Fraction(1, 100)),
        ("byte s^-1", "byte/s", 1),
        ("", "1", 1),
    ],
)
def test_parse_unit(text, dimension, scale):
    unit = parse_unit(text)
    assert format_dimension(unit.dimension) == dimension
    assert unit.scale == scale


@pytest.mark.parametrize("text", ["furlong", "TB/", "(GB", "GB)", "3GB", "kmin", "B^x", "B^99", "x" * 200])
def test_parse_unit_rejects(text):
    with pytest.raises(UnitError):
        parse_unit(text)


def test_dimension_algebra():
    byte, s = Dimension.of(byte=1), Dimension.of(s=1)
    assert (byte / s) * s == byte
    assert (byte**2) ** Fraction(1, 2) == byte
    assert (byte / byte).is_dimensionless


def test_unit_factors_keep_prefixes_and_exponents():
    assert unit_factors("TB/s") == [("T", "B", 1), ("", "s", -1)]
    assert unit_factors("FLOP/(param*token)") == [("", "FLOP", 1), ("", "param", -1), ("", "token", -1)]
    assert unit_factors("GiB^2") == [("Gi", "B", 2)]


def test_si():
    assert si("14.4 ms") == Fraction(144, 10000)
    assert si("2 USD/h") == Fraction(1, 1800)
    with pytest.raises(UnitError):
        si("fast")
