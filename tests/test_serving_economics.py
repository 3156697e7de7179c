"""Part II, chapter economics (theorems/serving/economics.py): rent per input and per output token served at a
utilisation, the margin against an API price and the exact break-even utilisation, checked by hand against
DeepSeek's published rent, rates and prices; the dated price scenarios; and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from libtools import close, one_error_line, run_cli

from derive.checking.checker import Checker
from derive.model.evaluate import evaluate
from derive.model.loader import load_library
from derive.model.scenario import PresetStore, build_scenario
from theorems.serving import economics as eco

LIB = load_library(["serving"])
PRICES = Path(eco.__file__).resolve().parent.parent / "presets" / "serving" / "scenarios"
SCENARIOS = sorted(PRICES.glob("*.toml"))

# DeepSeek-V3/R1 Inference System Overview (deepseek-ai/open-infra-index, 2025-03-01): 8 H800 per node at $2 per
# GPU-hour, 14.8k output tokens/s per decode node, 73.7k input tokens/s per prefill node; R1 at $0.55 per million
# input tokens (cache miss) and $2.19 per million output tokens
NODE_RENT = Fraction(8 * 2, 3600)  # USD/s
DECODE = ["chips=8", "chip_price=2 USD/h", "output_token_rate=14800 token/s", "price_output=2.19 USD/Mtoken"]
PREFILL = ["chips=8", "chip_price=2 USD/h", "input_token_rate=73700 token/s", "price_input=0.55 USD/Mtoken"]
PER_M = Fraction(1, 10**6)


def value(text: str, sets=(), **kw) -> Fraction:
    return Fraction(str(evaluate(LIB, build_scenario(LIB, sets=list(sets), **kw), text).exact))


# worked examples, by hand: (expression, inputs, the value worked out on paper) ---------------------------------
BY_HAND = [
    ("served_output_token_cost", [*DECODE, "utilisation=1"], NODE_RENT / 14800),  # $16/h over 53.28M tokens/h
    ("served_output_token_cost", [*DECODE, "utilisation=0.5"], 2 * NODE_RENT / 14800),
    ("served_input_token_cost", [*PREFILL, "utilisation=1"], NODE_RENT / 73700),
    ("output_breakeven_utilisation", DECODE, NODE_RENT / (14800 * Fraction(219, 100) * PER_M)),
    ("input_breakeven_utilisation", PREFILL, NODE_RENT / (73700 * Fraction(55, 100) * PER_M)),
    ("output_token_margin", [*DECODE, "utilisation=0.5"], 1 - 2 * NODE_RENT / (14800 * Fraction(219, 100) * PER_M)),
]


@pytest.mark.parametrize(("expr", "sets", "expected"), BY_HAND, ids=[f"{e}-{i}" for i, (e, _, _) in enumerate(BY_HAND)])
def test_worked_example_by_hand(expr, sets, expected):
    assert value(expr, sets) == expected


def test_deepseek_published_daily_cost_and_income():
    # the overview: 226.75 nodes of 8 H800 on average over 24 hours at $2 per GPU-hour cost $87,072 a day; 608B input
    # tokens (342B cache hits at $0.14 per million) and 168B output tokens at R1's prices would bring $562,027
    rent = value("chip_price * chips", ["chips=1814", "chip_price=2 USD/h"])
    assert rent * 86400 == 87072
    sc = "deepseek-r1-h800-2025-03"
    income = (342 * 10**9 * Fraction(14, 100) * PER_M + (608 - 342) * 10**9 * value("price_input", scenario=sc)
              + 168 * 10**9 * value("price_output", scenario=sc))
    assert close(income, 562_027, rel=Fraction(1, 1000))  # the token counts are published rounded to 1B
    assert close((income - 87072) / 87072, Fraction(545, 100), rel=Fraction(1, 100))  # the "545 %" cost-profit ratio


def test_deepseek_decode_rent_is_thirty_cents_per_million():
    got = value("served_output_token_cost", [*DECODE, "utilisation=1"])
    assert got == Fraction(1, 3_330_000)  # $16 per 53.28M tokens
    assert close(got / PER_M, Fraction(3, 10), rel=Fraction(1, 100))
    assert not close(got / PER_M, Fraction(24, 10), rel=Fraction(1, 100))  # the twin's node-rent-per-GPU-rate


@pytest.mark.parametrize(("sets", "below", "not_below"), [
    (DECODE, Fraction(14, 100), Fraction(13, 100)),   # 0.1371
    (PREFILL, Fraction(11, 100), Fraction(10, 100)),  # 0.1096
], ids=["output", "input"])
def test_breakeven_utilisation_brackets(sets, below, not_below):
    name = "output_breakeven_utilisation" if "price_output" in sets[-1] else "input_breakeven_utilisation"
    b = value(name, sets)
    assert not_below < b < below


@pytest.mark.parametrize(("rho", "pays"), [("0.1", False), ("0.137", False), ("0.1372", True), ("0.5", True),
                                           ("1", True)])
def test_margin_changes_sign_exactly_at_breakeven(rho, pays):
    margin = value("output_token_margin", [*DECODE, f"utilisation={rho}"])
    assert (margin >= 0) is pays
    assert margin == 1 - value("output_breakeven_utilisation", DECODE) / Fraction(rho)


@given(rent=st.fractions(Fraction(1, 10**5), Fraction(1, 10)), chips=st.integers(1, 512),
       rate=st.fractions(1, 10**6), price=st.fractions(Fraction(1, 10**9), Fraction(1, 10**4)),
       rho=st.fractions(Fraction(1, 1000), 1))
@settings(max_examples=200, deadline=None)
def test_breakeven_decides_the_margin_for_every_input(rent, chips, rate, price, rho):
    # the chapter's definitions, composed (margin of the rent per token served) and evaluated exactly
    subs = {eco.p_chip: rent, eco.n_rent: chips, eco.Th_out: rate, eco.p_out: price, eco.rho: rho}
    subs = {k: sp.Rational(v.numerator, v.denominator) if isinstance(v, Fraction) else v for k, v in subs.items()}
    margin = eco.output_margin.expr.subs(eco.c_out_r, eco.served_output_cost.expr).subs(subs)
    breakeven = eco.output_breakeven.expr.subs(subs)
    assert bool(margin >= 0) == bool(subs[eco.rho] >= breakeven)
    assert margin == 1 - breakeven / subs[eco.rho]


def test_served_cost_at_the_roofline_is_the_lecture_cost_over_utilisation():
    # the lecture scenario: at its own step time, a rate of B*tau/T gives cost_per_token back (utilisation 1)
    sc = build_scenario(LIB)
    rate = Fraction(str(evaluate(LIB, sc, "batch * tokens_per_step / step_time").exact))
    got = value("served_output_token_cost", [f"output_token_rate={float(rate)!r} token/s", "utilisation=1"])
    assert close(got, value("cost_per_token"), rel=Fraction(1, 10**9))  # the rate as a decimal: 1e-9 apart
    assert not close(got, 2 * value("cost_per_token"), rel=Fraction(1, 10))


def test_tokens_per_provisioned_watt_on_the_h100_preset():
    # the h100-sxm preset: 8 chips rated 700 W each (NVIDIA: up to 700 W); 14,800 output tokens/s over 5,600 W
    sets = ["output_token_rate=14800 token/s", "utilisation=1"]
    got = value("output_tokens_per_joule", sets, hardware="h100-sxm")
    assert got == Fraction(14800, 8 * 700) == Fraction(37, 14)
    assert value("output_tokens_per_joule", [sets[0], "utilisation=0.25"], hardware="h100-sxm") == got / 4
    # the rent per token is the rent per provisioned watt-second over the tokens per joule
    rent = value("served_output_token_cost", sets, hardware="h100-sxm")
    assert rent == value("chip_price / chip_power", hardware="h100-sxm") / got


def test_input_and_output_rent_are_separate_quantities():
    assert LIB.quantity("served_input_token_cost") is not LIB.quantity("served_output_token_cost")
    # the price quantities are the lecture's, not defined a second time
    assert LIB.quantity("price_output").sym is eco.p_out and LIB.quantity("utilisation").sym is eco.rho


# a layout rents every chip of its stages ------------------------------------------------------------------------

DEEPSEEK = ["--library", "serving", "--scenario", "deepseek-r1-h800-2025-03", "--set", "utilisation=1"]


@pytest.mark.parametrize("stages", [1, 2, 4])
def test_rent_per_output_token_scales_with_the_stages(capsys, stages):
    # a decode stage of 8 H800 (tp=8) at DeepSeek's rate: pp stages rent pp times the node, for the same tokens
    code, out, err = run_cli(capsys, ["eval", "served_output_token_cost", "rented_chips", "chips", "--json",
                                      *DEEPSEEK, "--set", "tp=8", "--set", f"pp={stages}"])
    assert code == 0, err
    got = {row["name"]: Fraction(row["exact"]) for row in json.loads(out)["values"]}
    assert got["chips"] == 8 and got["rented_chips"] == 8 * stages  # the lecture's n stays one stage's
    assert got["served_output_token_cost"] == stages * NODE_RENT / 14800


def test_the_rented_chips_a_layout_gives_are_said_to_be_its(capsys):
    code, out, err = run_cli(capsys, ["eval", "served_output_token_cost", *DEEPSEEK, "--set", "tp=8", "--set", "pp=2"])
    assert code == 0, err
    assert "pinned: rented_chips = 16 (given by the layout)" in out
    code, out, _ = run_cli(capsys, ["eval", "served_output_token_cost", "--json", *DEEPSEEK, "--set", "tp=8",
                                    "--set", "pp=2"])
    assert {n["quantity"]: n["note"] for n in json.loads(out)["pinned"]}["rented_chips"] == "given by the layout"


def test_layout_table_in_a_scenario_file_rents_every_stage(tmp_path):
    path = tmp_path / "pp4.toml"
    path.write_text('name = "pp4"\nhardware = "h100-sxm"\n[layout]\ntp = 8\npp = 4\ndp = 2\n')
    sets = ["output_token_rate=14800 token/s", "utilisation=1", "chip_price=2 USD/h"]
    sc = build_scenario(LIB, scenario=str(path), sets=sets)
    assert sc.values["rented_chips"].value == 64 and sc.values["chips"].value == 16
    got = Fraction(str(evaluate(LIB, sc, "served_output_token_cost").exact))
    assert got == 64 * Fraction(2, 3600) / 14800 == 4 * Fraction(str(evaluate(LIB, sc, "chip_price * chips / "
                                                                            "output_token_rate").exact))


def test_without_a_layout_the_rent_is_the_lectures_n_chips():
    assert value("rented_chips") == value("chips")  # the lecture scenario: one group of n chips
    assert value("served_output_token_cost", [*DECODE, "utilisation=1"]) == NODE_RENT / 14800


def test_rented_chips_typed_against_the_layout_is_one_line(capsys):
    code, _, err = run_cli(capsys, ["eval", "served_output_token_cost", *DEEPSEEK, "--set", "tp=8", "--set", "pp=4",
                                    "--set", "rented_chips=8"])
    one_error_line(code, err)
    assert "rented_chips = tp*pp*cp*dp does not hold" in err and "economics.rented_chips_are_the_layout" in err


def test_layout_rent_claims_at_a_layout(capsys):
    code, out, err = run_cli(capsys, ["check", "layout_rent_counts_every_stage", "layout_rent_one_stage", "--json",
                                      *DEEPSEEK, "--set", "tp=8", "--set", "pp=4"])
    verdicts = {c["id"]: c["verdict"] for c in json.loads(out)["claims"]}
    assert verdicts == {"economics.layout_rent_counts_every_stage": "proved",
                        "economics.layout_rent_one_stage": "refuted"}, err


# the dated price scenarios -----------------------------------------------------------------------------------

@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_price_scenario_values_are_sourced_and_dated(path):
    data = tomllib.loads(path.read_text())
    assert data["name"] == path.stem and data["kind"] == "scenario"
    for name, entry in data["values"].items():
        assert entry["source"].strip() and entry["as_of"][:2] == "20", name
    assert {"price_input", "price_output", "chip_price"} <= set(data["values"])


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_price_scenario_builds_under_serving_only(path):
    sc = build_scenario(LIB, scenario=path.stem)
    assert sc.values["price_output"].as_of and sc.values["chip_price"].source
    assert path.stem not in PresetStore.discover(load_library(["lecture"]).preset_dirs).names("scenario")


def test_deepseek_scenario_gives_the_published_break_even():
    got = value("output_breakeven_utilisation", scenario="deepseek-r1-h800-2025-03")
    assert got == value("output_breakeven_utilisation", DECODE)


def test_deepseek_scenario_checks_the_chapter():
    sc = build_scenario(LIB, scenario="deepseek-r1-h800-2025-03", sets=["utilisation=0.5"])
    report = Checker(LIB, sc).check(["economics.output_margin_breakeven_iff"]).by_id()
    assert report["economics.output_margin_breakeven_iff"].verdict == "proved"


@pytest.mark.parametrize("bad", ["utilisation=0", "utilisation=-0.5", "output_token_rate=-5 token/s",
                                 "chip_price=-2 USD/h"])
def test_bad_economics_input_is_one_line_exit_2(bad):
    proc = subprocess.run([sys.executable, "-m", "derive", "eval", "--library", "serving", "--scenario",
                           "deepseek-r1-h800-2025-03", "--set", bad, "served_output_token_cost"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stdout
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
