"""Units wherever a number is typed: --set, --assume, eval expressions and ranges; definition domains;
eval of several names.  Quantities here are a tiny set declared inline, plus the lecture where the
lecture's own numbers are the point."""

import re
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.cli import main
from derive.errors import DeriveError, DimensionError, ParseError, UnitError
from derive.model.display import shown
from derive.model.evaluate import evaluate
from derive.model.parse import parse_quantity_expression, parse_quantity_relation, parse_value
from derive.model.scenario import build_scenario
from derive.model.units import Dimension, parse_unit

BW = Dimension.of(byte=1, s=-1)
RATE = Dimension.of(FLOP=1, s=-1)
CTX = Dimension.of(token=1, seq=-1)
DIMS = {"hbm_bandwidth": BW, "flops": RATE, "context": CTX, "experts_active": Dimension()}
NAMES = {n: sp.Symbol(n) for n in DIMS}


def lookup(sym):
    return DIMS[str(sym)]


@pytest.mark.parametrize(("text", "dim", "si"), [
    ("1M token/seq", CTX, 10**6),
    ("128k token/seq", CTX, 128_000),
    ("1.5k token/seq", CTX, 1500),
    ("989 TFLOPs", RATE, 989 * 10**12),  # a vendor's rate spelling
    ("989 TFLOPS", RATE, 989 * 10**12),
    ("900 GBps", BW, 900 * 10**9),
    ("400 Gbps", BW, 50 * 10**9),
    ("3.35 TB/s", BW, Fraction(335, 100) * 10**12),
])
def test_values_with_units_and_shorthand(text, dim, si):
    assert parse_value(text, dim, si=False) == sp.Rational(si)


@pytest.mark.parametrize(("text", "dim", "needle"), [
    ("3.35", BW, "has no unit"),
    ("1M", CTX, "has no unit"),
    ("80 mb", Dimension.of(byte=1), "sub-unit"),
    ("70B", Dimension.of(param=1), "byte"),
    ("989 FLOPs", RATE, "FLOP"),  # without a prefix FLOPs is a count
])
def test_values_refused(text, dim, needle):
    with pytest.raises(UnitError) as err:
        parse_value(text, dim, si=False)
    assert needle in err.value.one_line()


def test_bare_number_accepted_with_si():
    assert parse_value("3.35", BW, si=True) == sp.Rational(335, 100)


def test_sub_unit_prefixes_only_on_time():
    assert parse_unit("ms").scale == Fraction(1, 1000)
    for text in ("mb", "mB", "uFLOP", "ntoken"):
        with pytest.raises(UnitError):
            parse_unit(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("hbm_bandwidth >= 30 TB/s", "hbm_bandwidth >= 30000000000000"),
    ("context in [128k, 1M] token/seq", "(context >= 128000) and (context <= 1000000)"),
    ("flops >= 900 TFLOPs", "flops >= 900000000000000"),
    ("flops/hbm_bandwidth >= 600 FLOP/B", "flops/hbm_bandwidth >= 600"),
    ("experts_active in [4, 16]", "(experts_active >= 4) and (experts_active <= 16)"),
    ("hbm_bandwidth > 0", "hbm_bandwidth > 0"),
    ("hbm_bandwidth >= 30GBps", "hbm_bandwidth >= 30000000000"),
    # thousands grouped as derive prints them, where a unit follows: one number
    ("context >= 131,072 token/seq", "context >= 131072"),
    ("hbm_bandwidth >= 1,200 GB/s", "hbm_bandwidth >= 1200000000000"),
    ("context <= 1,000,000.5 token/seq", "context <= 2000001/2"),
])
def test_relations_with_units(text, expected):
    assert str(parse_quantity_relation(text, NAMES, lookup, where="--assume")) == expected


@pytest.mark.parametrize(("text", "error"), [
    ("flops/hbm_bandwidth >= 600", UnitError),  # bare number against FLOP/byte
    ("context <= 1M", UnitError),
    ("log(flops) > 1", DimensionError),
    ("flops > hbm_bandwidth", DimensionError),
    ("hbm_bandwidth >= 30 TFLOP/s", DimensionError),
    ("context > 80 mb", UnitError),
])
def test_relations_refused(text, error):
    with pytest.raises(error):
        parse_quantity_relation(text, NAMES, lookup, where="--assume")


def test_grouped_thousands_without_a_unit_are_one_line_with_the_reason():
    """``context >= 1,000`` reads as a list in the expression grammar; said in so many words, with the fix."""
    with pytest.raises(ParseError) as err:
        parse_quantity_relation("context >= 1,000", NAMES, lookup, where="--assume")
    assert "'1,000' without a unit reads as a list" in err.value.one_line()
    assert "give the number its unit (2,400 seq)" in err.value.one_line()


def test_a_comma_between_arguments_stays_one():
    """Commas between a function's arguments are not thousands: ``max(2,300 ...)`` is never read as 2300."""
    f = parse_quantity_relation("context >= max(2, 300) * 1 token/seq", NAMES, lookup, where="--assume")
    assert str(f) == "context >= 300"


def test_relation_bare_number_with_si():
    f = parse_quantity_relation("flops/hbm_bandwidth >= 600", NAMES, lookup, si=True)
    assert str(f) == "flops/hbm_bandwidth >= 600"


def test_expression_with_units_keeps_its_dimension():
    expr, dim = parse_quantity_expression("hbm_bandwidth * 20 ms", NAMES, lookup)
    assert dim == Dimension.of(byte=1) and expr == NAMES["hbm_bandwidth"] / 50


def test_user_text_never_executes():
    with pytest.raises(DeriveError):
        parse_quantity_relation("__import__('os') > 1 TB/s", NAMES, lookup)


# the lecture: domains and the command line ---------------------------------------------------------

def test_definition_outside_its_domain_is_undefined(lecture_library):
    ev = evaluate(lecture_library, build_scenario(lecture_library), "critical_batch_kv")
    assert ev.exact is None and ev.value is None
    assert "context = 200k token/seq" in ev.reason and "critical_context" in ev.reason
    js = ev.to_json()
    assert js["value"] is None and js["reason"] == ev.reason
    inside = evaluate(lecture_library, build_scenario(lecture_library, sets=["context=10k token/seq"]),
                      "critical_batch_kv")
    assert inside.exact is not None and inside.exact > 0
    # an expression through the definition is undefined too
    assert evaluate(lecture_library, build_scenario(lecture_library), "2 * critical_batch_kv").exact is None


def test_scenario_strict_about_bare_numbers(lecture_library):
    with pytest.raises(UnitError, match="has no unit"):
        build_scenario(lecture_library, sets=["hbm_bandwidth=3.35"], si=False)
    with pytest.raises(UnitError, match="has no unit"):
        build_scenario(lecture_library, assumes=["flops/hbm_bandwidth >= 600"], si=False)
    sc = build_scenario(lecture_library, assumes=["hbm_bandwidth >= 30 TB/s"], si=False)
    assert sc.assumptions[0][0] == "hbm_bandwidth >= 30 TB/s"


def test_cli_eval_several_names(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("DERIVE_CACHE_DIR", str(tmp_path))
    assert main(["eval", "critical_batch", "critical_batch_kv", "hbm_bandwidth * 20 ms"]) == 0
    out = capsys.readouterr().out
    assert "critical_batch" in out and "2,400 seq" in out
    assert "undefined (context = 200k token/seq" in out
    assert "400 GB" in out
    assert main(["eval", "hbm_bandwidth", "--set", "hbm_bandwidth=3.35"]) == 2
    assert "has no unit" in capsys.readouterr().err
    assert main(["eval", "hbm_bandwidth", "--set", "hbm_bandwidth=3.35", "--si"]) == 0


def test_errors_name_what_the_user_wrote():
    with pytest.raises(DeriveError) as err:
        parse_quantity_expression("hbm_bandwidth / 0 TB/s", NAMES, lookup, where="eval")
    assert "division by zero" in err.value.one_line() and "zoo" not in err.value.one_line()
    with pytest.raises(DimensionError) as err:
        parse_quantity_relation("log(2 TB/s) > 1 and flops > 0", NAMES, lookup, where="--assume")
    assert "_u" not in err.value.one_line()
    with pytest.raises(UnitError, match="neither a unit nor a quantity"):
        parse_quantity_relation("flops >= 5 furlongs", NAMES, lookup)
    with pytest.raises(DeriveError):
        parse_quantity_expression("2 flops", NAMES, lookup)  # a word is never split into unit + rest
    assert str(parse_quantity_relation("flops > 3", NAMES, lookup, si=True)) == "flops > 3"


@pytest.mark.parametrize(("text", "said"), [
    ("hbm_bandwidth >= 30 TB/ss", "units are built from"),  # a unit's typo reads as one, not as a quantity
    ("hbm_bandwidth >= 30 TB/(s·furlong)", "units are built from"),
    ("hbm_bandwidth >= 30 TB/fllops", "did you mean flops?"),  # a word close to a quantity's name says so
])
def test_a_word_that_goes_on_a_unit_is_a_unit_or_a_quantity(text, said):
    with pytest.raises(UnitError) as err:
        parse_quantity_relation(text, NAMES, lookup, where="--assume")
    line = err.value.one_line()
    assert "neither a unit nor a quantity" in line and said in line and not re.search(r"\b_u+\d", line)


def test_a_unit_still_ends_before_a_quantity():
    expr, dim = parse_quantity_expression("2 FLOP/hbm_bandwidth * hbm_bandwidth", NAMES, lookup)
    assert (expr, dim) == parse_quantity_expression("2 FLOP", NAMES, lookup)


MONEY_UNITS = ["USD", "USD/s", "USD/token", "USD/FLOP", "USD/(token*s)"]


@pytest.mark.parametrize(("text", "unit", "expected"), [
    ("$1.5/h", "USD/s", Fraction(15, 10) / 3600),
    ("$1.5 /h", "USD/s", Fraction(15, 10) / 3600),
    ("$2.19/Mtok", "USD/token", Fraction(219, 100) / 10**6),
    ("$4.6M", "USD", 4_600_000),
    ("-$3", "USD", -3),
])
def test_money_reads_as_derive_prints_it(text, unit, expected):
    assert parse_value(text, parse_unit(unit).dimension, si=False) == sp.Rational(expected)


@pytest.mark.parametrize("text", ["$1.5 USD/h", "$1.5 GB", "$$1", "$-1/h"])
def test_money_with_a_second_unit_after_the_dollar_is_refused(text):
    with pytest.raises(DeriveError) as err:
        parse_value(text, parse_unit("USD/s").dimension, si=False)
    assert "cannot read value" in err.value.one_line()


PRINTED_UNITS = [*MONEY_UNITS, "byte/s", "FLOP/s", "token/seq", "s", "byte", "param", "1", "seq", "token/s", "FLOP"]


@settings(max_examples=300, deadline=None)
@given(st.fractions(min_value=Fraction(1, 10**9), max_value=Fraction(10**12)), st.sampled_from(PRINTED_UNITS))
def test_every_value_derive_prints_reads_back(x, unit):
    """A value copied from derive's output into --set or a scenario file is the value printed, to its digits
    (prices with their dollar sign first, thousands grouped with commas, 16.38k, 14.66G param, 20 ms)."""
    out = shown(x, unit)
    assert out.money == (unit in MONEY_UNITS)
    back = Fraction(str(parse_value(out.text, parse_unit(unit).dimension, si=False))) / parse_unit(unit).scale
    assert abs(back - x) <= x / 1000
    if out.exact:
        assert back == x


@pytest.mark.parametrize(("text", "same_as"), [
    ("chip_price <= $3/h", "chip_price <= 3 USD/h"),
    ("chip_price in [$1/h, $3/h]", "chip_price in [1 USD/h, 3 USD/h]"),
    ("chip_price * 1 h <= $1.2B", "chip_price * 1 h <= 1.2e9 USD"),
])
def test_money_in_relations_reads_as_printed(text, same_as):
    names = {"chip_price": sp.Symbol("chip_price")}
    dims = {"chip_price": Dimension.of(USD=1, s=-1)}

    def find(sym):
        return dims[str(sym)]

    assert parse_quantity_relation(text, names, find) == parse_quantity_relation(same_as, names, find)


def test_a_stray_dollar_sign_in_a_relation_says_where_it_goes():
    names = {"chip_price": sp.Symbol("chip_price")}
    with pytest.raises(DeriveError) as err:
        parse_quantity_relation("chip_price <= $x", names, lambda s: Dimension.of(USD=1, s=-1))
    assert "dollar sign goes straight before a number" in err.value.one_line()
