"""Properties of the readers under hypothesis: only typed one-line errors, exact numbers stay exact.

In-process and bounded (``max_examples``); the command-line fuzz is test_fuzz_strings.py.
"""

from __future__ import annotations

import json
import math
import os
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from derive.errors import DeriveError, escape_control
from derive.model.numbers import dumps_json, exact_from_float
from derive.model.parse import parse_expression, parse_relation, parse_value
from derive.model.units import DIMENSIONLESS, parse_unit

FAST = settings(max_examples=int(os.environ.get("HYPOTHESIS_MAX_EXAMPLES", "150")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
ALPHABET = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
TOKENS = [*"flopsbatch_0123456789.eE+-*/^()[], <>=!%", "exp", "log", "sqrt", "max", "min", "abs", " and ", " in ",
          "**", "1e400", "10**10", "\n", "\x1b[", "flops", "hbm_bandwidth", "critical_batch"]
GRAMMARISH = st.lists(st.sampled_from(TOKENS), max_size=25).map("".join)


def _one_line(err: DeriveError) -> None:
    line = err.one_line()
    assert line.isprintable() and "\n" not in line, repr(line)


@pytest.fixture(scope="module")
def names(lecture_library):
    return lecture_library.symbols()


@FAST
@given(text=st.one_of(st.text(alphabet=ALPHABET, max_size=60), GRAMMARISH))
def test_expressions_raise_only_typed_one_line_errors(text, lecture_library):
    try:
        parse_expression(text, lecture_library.symbols(), where="eval")
    except DeriveError as err:
        _one_line(err)


@FAST
@given(text=st.one_of(st.text(alphabet=ALPHABET, max_size=60), GRAMMARISH))
def test_relations_raise_only_typed_one_line_errors(text, lecture_library):
    try:
        parse_relation(text, lecture_library.symbols(), where="--assume")
    except DeriveError as err:
        _one_line(err)


@FAST
@given(text=st.text(alphabet=ALPHABET, max_size=40))
def test_units_raise_only_typed_one_line_errors(text):
    try:
        parse_unit(text)
    except DeriveError as err:
        _one_line(err)


@FAST
@given(number=st.decimals(allow_nan=False, allow_infinity=False, places=None).filter(
    lambda d: d.is_finite() and abs(d.adjusted()) < 300))
def test_decimal_text_is_read_exactly(number):
    text = format(number, "f") if abs(number.adjusted()) < 30 else format(number, "e")
    assert Fraction(parse_value(text, DIMENSIONLESS)) == Fraction(text)


@FAST
@given(a=st.integers(-10**30, 10**30), e=st.integers(-300, 300))
def test_sums_of_decimals_stay_exact(a, e, lecture_library, lecture_scenario):
    from derive.model.evaluate import evaluate

    text = f"1+{a}e{e}"
    ev = evaluate(lecture_library, lecture_scenario, text)
    assert Fraction(str(ev.exact)) == 1 + Fraction(a) * Fraction(10) ** e


@FAST
@given(x=st.floats(allow_nan=False, allow_infinity=False))
def test_the_float_rule_is_the_shortest_decimal(x):
    assert Fraction(str(exact_from_float(x))) == Fraction(repr(x))


FLOATS = st.floats(allow_nan=True, allow_infinity=True)
JSONISH = st.recursive(st.one_of(FLOATS, st.integers(), st.text(max_size=5), st.none()),
                       lambda inner: st.one_of(st.lists(inner, max_size=4),
                                               st.dictionaries(st.text(max_size=4), inner, max_size=4)),
                       max_leaves=12)


@FAST
@given(data=JSONISH)
def test_json_never_holds_nan_or_infinity(data):
    text = dumps_json(data)

    def refuse(name):
        raise AssertionError(f"{name} in JSON")

    json.loads(text, parse_constant=refuse)


def test_a_non_finite_value_becomes_null_with_a_reason():
    out = json.loads(dumps_json({"rate": math.inf, "x": [math.nan, 1.0]}))
    assert out == {"rate": None, "rate_note": "+infinite: not representable in JSON", "x": [None, 1.0]}


@FAST
@given(text=st.text(max_size=80))
def test_escaping_leaves_one_printable_line(text):
    shown = escape_control(text)
    assert shown.isprintable()
    assert DeriveError(text, where=text, hint=text).one_line().isprintable()
