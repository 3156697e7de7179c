"""Counting dimensions a library declares (derive.model.units.declare_count_dimension): units built from them
parse, display and render in siunitx; sums across them are unit errors when a library loads; an undeclared
word is still refused; the order of dimensions does not depend on the order of declaration."""

from __future__ import annotations

import os
import subprocess
import sys
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from libtools import make_library, one_error_line, run_cli

from derive import Claim, Definition, Quantity, declare_count_dimension, derived, logic
from derive.documents.values_text import SIUNIT_DECLARATIONS, siunit_declarations, siunitx_unit
from derive.errors import DimensionError, UnitError
from derive.model.display import format_value
from derive.model.parse import parse_value
from derive.model.units import (
    BASE_DIMENSIONS,
    base_dimensions,
    declared_count_dimensions,
    format_dimension,
    is_declared_count,
    parse_unit,
)

# words of this test's own; declaring is for the life of the process, so they are names nothing else uses
declare_count_dimension("blue_widget", hint="one widget of the blue line")
declare_count_dimension("red_widget", hint="one widget of the red line")
SRC = derived("test")


@pytest.mark.parametrize(("text", "dimension"), [
    ("blue_widget", "blue_widget"),
    ("1/blue_widget", "1/blue_widget"),
    ("token/(s·blue_widget)", "token/(s·blue_widget)"),
    ("token/(s*red_widget*blue_widget)", "token/(s·blue_widget·red_widget)"),
    ("blue_widget^2/red_widget", "blue_widget^2/red_widget"),
    ("USD/h blue_widget", "USD·blue_widget/s"),
])
def test_units_with_declared_counts_parse(text, dimension):
    assert format_dimension(parse_unit(text).dimension) == dimension


def test_a_count_is_its_own_base_dimension():
    blue, red = parse_unit("token/(s·blue_widget)").dimension, parse_unit("token/(s·red_widget)").dimension
    assert blue != red and blue != parse_unit("token/s").dimension
    assert parse_unit("blue_widget").dimension * parse_unit("1/blue_widget").dimension == parse_unit("1").dimension
    assert base_dimensions()[: len(BASE_DIMENSIONS)] == BASE_DIMENSIONS
    assert {"blue_widget", "red_widget"} <= set(base_dimensions())
    assert declared_count_dimensions()["blue_widget"] == "one widget of the blue line"
    assert is_declared_count("red_widget") and not is_declared_count("token")


def test_declaring_again_is_a_no_op():
    before = parse_unit("blue_widget")
    declare_count_dimension("blue_widget", hint="one widget of the blue line")
    declare_count_dimension("blue_widget", hint="another library's words for the same widget")
    assert parse_unit("blue_widget") == before
    assert declared_count_dimensions()["blue_widget"] == "one widget of the blue line"


@pytest.mark.parametrize(("name", "says"), [
    ("token", "unit word already"),
    ("hours", "unit word already"),
    ("k", "letters with inner underscores"),
    ("ms", "prefix m on s"),
    ("GB", "prefix G on B"),
    ("kblue_widget", "prefix k on blue_widget"),
    ("Token", "spells the unit word 'token'"),
    ("bluewidget", "spells the unit word 'blue_widget'"),
    ("_chip", "letters with inner underscores"),
    ("chip_", "letters with inner underscores"),
    ("chip2", "letters with inner underscores"),
    ("", "letters with inner underscores"),
])
def test_a_clash_or_a_bad_word_is_refused(name, says):
    with pytest.raises(UnitError, match=says):
        declare_count_dimension(name, hint="a test")
    assert not is_declared_count(name)


def test_a_count_needs_a_hint():
    with pytest.raises(UnitError, match="needs a hint"):
        declare_count_dimension("green_widget", hint=" ")
    assert not is_declared_count("green_widget")


@pytest.mark.parametrize("text", ["green_widget", "token/(s·green_widget)", "blue_widgets", "kblue_widget",
                                  "Blue_widget", "blue_widget_"])
def test_an_undeclared_word_is_still_refused(text):
    with pytest.raises(UnitError, match="unknown unit"):
        parse_unit(text)


def test_the_refusal_lists_the_declared_counts():
    with pytest.raises(UnitError) as err:
        parse_unit("blue_widgets")
    assert "blue_widget" in (err.value.hint or "")


def test_a_value_is_read_in_its_count():
    dim = parse_unit("token/(s·blue_widget)").dimension
    assert parse_value("1.5k token/(s·blue_widget)", dim, si=False) == 1500
    assert parse_value("3 Mtoken/(h·blue_widget)", dim, si=False) == Fraction(3 * 10**6, 3600)
    with pytest.raises(UnitError, match=r"is token/\(s·red_widget\) but the value is token/\(s·blue_widget\)"):
        parse_value("5 token/(s·red_widget)", dim, si=False)
    with pytest.raises(UnitError, match="has no unit"):
        parse_value("4", parse_unit("blue_widget").dimension, si=False)


@pytest.mark.parametrize(("value", "unit", "text"), [
    (4, "blue_widget", "4 blue_widget"),
    (1, "1/blue_widget", "1/blue_widget"),
    (Fraction(18425, 2), "token/(s·blue_widget)", "9,213 token/(s·blue_widget)"),
    (2 * 10**6, "token/(s·blue_widget)", "2M token/(s·blue_widget)"),
    # money per second per chip of a counted pool reads per hour, as chips are rented: not $333.3/(ks·blue_widget)
    (Fraction(1, 3), "USD/(s·blue_widget)", "$1,200/(h·blue_widget)"),
    (Fraction(1, 1800), "USD/(s·blue_widget)", "$2/(h·blue_widget)"),
    (Fraction(1, 1800), "USD/(s·blue_widget·red_widget)", "$2/(h·blue_widget·red_widget)"),
    (Fraction(50), "USD/(s·blue_widget)", "$180k/(h·blue_widget)"),
])
def test_values_display_with_their_count(value, unit, text):
    assert format_value(value, unit) == text


def test_siunitx_has_a_macro_for_a_declared_count():
    assert siunitx_unit("blue_widget") == r"\bluewidget"
    assert siunitx_unit("token/(s·blue_widget)") == r"\token\per\second\per\bluewidget"
    assert siunitx_unit("Mtoken/blue_widget^2") == r"\mega\token\per\bluewidget\squared"


def test_a_document_declares_the_counts_it_uses_and_no_others():
    assert siunit_declarations() == list(SIUNIT_DECLARATIONS)
    assert siunit_declarations(["token/s", "blue_widget", "1/blue_widget"]) == [
        *SIUNIT_DECLARATIONS, r"\DeclareSIUnit\bluewidget{\mbox{blue\_widget}}"]
    both = siunit_declarations(["red_widget", "token/(s·blue_widget)"])
    assert both[len(SIUNIT_DECLARATIONS):] == [r"\DeclareSIUnit\bluewidget{\mbox{blue\_widget}}",
                                               r"\DeclareSIUnit\redwidget{\mbox{red\_widget}}"]


def test_a_count_that_would_take_a_units_macro_is_refused_by_the_renderer():
    declare_count_dimension("sq_uared", hint="a count whose macro would be siunitx's \\squared")
    with pytest.raises(UnitError, match=r"siunitx macro \\squared"):
        siunitx_unit("sq_uared")


per_blue = Quantity("per_blue", "b", "token/(s·blue_widget)", "tokens per second per blue widget")
per_red = Quantity("per_red", "r", "token/(s·red_widget)", "tokens per second per red widget")
blue_count = Quantity("blue_count", "N_b", "blue_widget", "blue widgets")
blue_per_widget = Quantity("widgets_per_blue_widget", r"\kappa", "1/blue_widget", "widgets a blue widget is",
                           value=1, source=SRC)


def test_adding_rates_per_different_counts_is_a_unit_error():
    claim = Claim("t.mixed", title="m", statement="s", source=SRC, goal=logic.gt(per_blue.sym + per_red.sym, 0))
    with pytest.raises(DimensionError, match=r"token/\(s·blue_widget\).*token/\(s·red_widget\)"):
        make_library(per_blue, per_red, claim)


def test_a_definition_in_the_wrong_count_is_a_unit_error():
    total = Quantity("total_rate", "T", "token/s", "tokens per second of the blue line")
    wrong = Definition("t.total", title="t", statement="s", source=SRC, defines=total,
                       expr=per_red.sym * blue_count.sym)
    with pytest.raises(DimensionError, match=r"declared in token/s but its formula gives"):
        make_library(per_red, blue_count, total, wrong)
    right = Definition("t.total", title="t", statement="s", source=SRC, defines=total,
                       expr=per_blue.sym * blue_count.sym)
    assert "total_rate" in make_library(per_blue, blue_count, total, right).quantities


def test_a_conversion_of_value_one_turns_a_count_into_plain_chips():
    chips = Quantity("plain_widgets", "n", "1", "widgets, counted plainly")
    conv = Definition("t.plain", title="p", statement="s", source=SRC, defines=chips,
                      expr=blue_count.sym * blue_per_widget.sym)
    assert make_library(blue_count, blue_per_widget, chips, conv).is_derived("plain_widgets")
    mixed = Claim("t.mixed", title="m", statement="s", source=SRC, goal=logic.ge(chips.sym, blue_count.sym))
    with pytest.raises(DimensionError, match="differ"):
        make_library(blue_count, chips, mixed)


MIXING_LIBRARY = '''
from derive import Claim, Quantity, declare_count_dimension, derived, logic

declare_count_dimension("prefill_chip", hint="one chip of the prefill pool")
declare_count_dimension("decode_chip", hint="one chip of the decode pool")
per_prefill_chip = Quantity("per_prefill_chip", "a", "token/(s·prefill_chip)", "tokens per second per prefill chip")
per_decode_chip = Quantity("per_decode_chip", "b", "token/(s·decode_chip)", "tokens per second per decode chip")
both = Claim("mine.both", title="Both pools", statement="The two rates added.", source=derived("a mistake"),
             goal=logic.gt(per_prefill_chip.sym + per_decode_chip.sym, 0))
'''


def test_a_library_adding_a_per_prefill_chip_rate_to_a_per_decode_chip_rate_fails_to_load(tmp_path, capsys):
    path = tmp_path / "mixing.py"
    path.write_text(MIXING_LIBRARY)
    code, out, err = run_cli(capsys, ["check", "--library", str(path)])
    one_error_line(code, err)
    assert "dimension mismatch in sum" in err and "token/(s·prefill_chip)" in err and "token/(s·decode_chip)" in err
    assert "mine.both" in err and not out


def test_a_library_with_its_own_counts_checks_alike_cold_and_warm_in_fresh_processes(tmp_path):
    """The declaration is made when the library is imported, in each process: a cold check and a warm one (its
    results from the cache folder the cold one filled), under different hash seeds, print the same."""
    path = tmp_path / "pools.py"
    path.write_text(MIXING_LIBRARY.replace("per_prefill_chip.sym + per_decode_chip.sym", "per_prefill_chip.sym")
                    + '\nsaid = Claim("mine.said", title="Said", statement="A rate per prefill chip, shown.", '
                      'source=derived("x"), goal=logic.lt(per_prefill_chip.sym, 0))\n')
    outs = []
    for seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        env.pop("DERIVE_NO_CACHE", None)
        run = subprocess.run([sys.executable, "-m", "derive", "check", "--library", str(path), "--cache-dir",
                              str(tmp_path / "cache")], capture_output=True, text=True, timeout=300, env=env)
        assert run.returncode == 1, run.stderr  # mine.said is refuted, not expected to be
        outs.append(run.stdout)
        assert any((tmp_path / "cache").rglob("*.json"))  # the first run filled the cache the second reads
    assert outs[0] == outs[1]
    assert "proved" in outs[0] and "mine.both" in outs[0]
    assert "per_prefill_chip = 1 token/(s·prefill_chip)" in outs[0]  # the counterexample, in its unit


ORDER = '''
from derive import declare_count_dimension
from derive.model.units import format_dimension, parse_unit
for word in {words!r}:
    declare_count_dimension(word, hint="a test count")
print(format_dimension(parse_unit("token/(s·zeta_pool·alpha_pool)").dimension))
'''


@pytest.mark.parametrize("seed", ["0", "1", "12345"])
def test_the_order_of_dimensions_does_not_depend_on_the_order_of_declaration(seed):
    shown = set()
    for words in (["zeta_pool", "alpha_pool"], ["alpha_pool", "zeta_pool"]):
        run = subprocess.run([sys.executable, "-c", ORDER.format(words=words)], capture_output=True, text=True,
                             timeout=120, env={"PYTHONHASHSEED": seed, "PATH": ""})
        assert run.returncode == 0, run.stderr
        shown.add(run.stdout.strip())
    assert shown == {"token/(s·alpha_pool·zeta_pool)"}


_WORDS = ["blue_widget", "red_widget", "token", "s", "byte", "FLOP", "seq", "USD"]


@st.composite
def unit_strings(draw) -> str:
    """A unit string of the grammar, from declared counts and built-in words, with exponents and one slash."""
    def factor() -> str:
        word = draw(st.sampled_from(_WORDS))
        exp = draw(st.integers(1, 3))
        return word if exp == 1 else f"{word}^{exp}"
    top = [factor() for _ in range(draw(st.integers(0, 3)))]
    bottom = [factor() for _ in range(draw(st.integers(0, 3)))]
    text = "·".join(top) or "1"
    if bottom:
        times = draw(st.sampled_from(["·", "*", " "]))
        text += "/" + (bottom[0] if len(bottom) == 1 else "(" + times.join(bottom) + ")")
    return text


@settings(max_examples=300, deadline=None)
@given(unit_strings())
def test_a_dimension_with_counts_formats_to_a_unit_string_that_parses_back(text):
    dim = parse_unit(text).dimension
    shown = format_dimension(dim)
    assert parse_unit(shown).dimension == dim
    assert format_dimension(parse_unit(shown).dimension) == shown


@settings(max_examples=300, deadline=None)
@given(st.fractions(min_value=Fraction(1, 10**6), max_value=Fraction(10**12), max_denominator=10**6),
       st.sampled_from(["blue_widget", "1/blue_widget", "token/(s·blue_widget)", "token/(s·red_widget)",
                        "blue_widget/red_widget", "byte/blue_widget", "FLOP/(s·red_widget)"]))
def test_a_value_in_a_declared_count_reads_back_as_shown(value, unit):
    dim = parse_unit(unit).dimension
    text = format_value(value, unit)
    assert "blue_widget" in text or "red_widget" in text
    back = Fraction(str(parse_value(text.replace(",", ""), dim, si=False)))
    assert abs(back - value) <= value * Fraction(5, 10**4), (value, unit, text)


@pytest.mark.parametrize(("expr", "text"), [
    ("chip_price * chip_per_prefill_chip", "$2/(h·prefill_chip)"),  # a prefill chip's rent, as rented
    ("600 * chip_price * chip_per_decode_chip", "$1,200/(h·decode_chip)"),
])
def test_rent_per_pool_chip_reads_per_hour_on_the_command_line(capsys, expr, text):
    code, out, err = run_cli(capsys, ["eval", expr, "--library", "serving"])
    assert code == 0, err
    assert out.splitlines()[0].split("=", 1)[1].strip() == text
