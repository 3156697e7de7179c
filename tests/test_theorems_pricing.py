"""Chapter 6, second half (theorems/pricing.py): verdicts under the lecture scenario, the lecture's
price arithmetic, the drain-time tier choice, and worked examples against published prices and HBM
specifications."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import sympy as sp
from libtools import close

from derive.checking.checker import Checker
from derive.model.declarations import Claim
from derive.model.evaluate import evaluate
from derive.model.scenario import PresetStore, build_scenario
from theorems import pricing

CLAIMS = [v for v in vars(pricing).values() if isinstance(v, Claim) and v.topic == "pricing"]
CATALOGUE = ["price_tracks_cost", "decode_memory_bound", "cache_hit_discount", "kv_tier_costs",
             "cache_tier_drain_time"]
PER_MTOK = Fraction(1, 10**6)


@pytest.mark.parametrize("name", CATALOGUE)
def test_catalogue_name_resolves(lecture_library, name):
    assert lecture_library.resolve(name).topic == "pricing"


@pytest.mark.parametrize(("expr", "target"), [
    ("price_output/price_input", 5),                   # "let's say it's 5x" (01:42)
    ("price_input/price_cache_hit", 10),               # a hit is "10x" cheaper than base input (01:46)
    ("price_cache_write_5min/price_input", Fraction(5, 4)),  # $6.25 against $5 (01:47)
    ("price_cache_write_5min/price_cache_hit", Fraction(25, 2)),  # 12.5x, not 10x, cheaper than a write
])
def test_lecture_price_ratios(lecture_library, lecture_scenario, expr, target):
    assert evaluate(lecture_library, lecture_scenario, expr).exact == target


def test_decode_at_the_lecture_point_is_memory_bound(lecture_library, lecture_scenario):
    ratio = evaluate(lecture_library, lecture_scenario, "memory_time/compute_time").exact
    assert ratio > 1  # "it still crosses": about 9.5 at 2,000 sequences of 200K tokens
    assert close(ratio, Fraction(913, 96), rel=Fraction(1, 50))


def test_drain_time_rule_picks_flash_and_disk(lecture_library, lecture_scenario):
    names = {"hbm": "drain_time", "ddr": "ddr_drain_time", "flash": "flash_drain_time", "disk": "disk_drain_time"}
    drain = {tier: evaluate(lecture_library, lecture_scenario, q).exact for tier, q in names.items()}

    def nearest(hold):
        return min(drain, key=lambda t: max(hold, drain[t]) / min(hold, drain[t]))

    assert nearest(evaluate(lecture_library, lecture_scenario, "cache_hold_short").exact) == "flash"
    assert nearest(evaluate(lecture_library, lecture_scenario, "cache_hold_long").exact) == "disk"


def test_ratio_gap_is_the_log_distance():
    a, b = sp.Integer(300), sp.Integer(60)
    assert pricing.ratio_gap(a, b) == pricing.ratio_gap(b, a) == 5
    assert math.isclose(math.log(pricing.ratio_gap(a, b)), abs(math.log(300) - math.log(60)))


def test_scenario_prices_match_anthropic_list_prices(lecture_library, lecture_scenario):
    # Anthropic API pricing, Claude Opus 4.5 (docs.claude.com/en/docs/about-claude/pricing): $5 input,
    # $25 output per million tokens; prompt caching: 5-minute write 1.25x, 1-hour write 2x, hit 0.1x input.
    published = {"price_input": 5, "price_output": 25, "price_cache_write_5min": Fraction(625, 100),
                 "price_cache_write_1h": 10, "price_cache_hit": Fraction(1, 2)}
    for name, dollars in published.items():
        assert evaluate(lecture_library, lecture_scenario, name).exact == dollars * PER_MTOK, name


def test_h100_hbm_is_still_far_too_small_for_a_five_minute_cache(lecture_library):
    # NVIDIA H100 SXM: 80 GB of HBM3 at 3.35 TB/s drains in 23.9 ms ("20 ms on many generations")
    if "h100-sxm" not in PresetStore.discover(lecture_library.preset_dirs).names("hardware"):
        pytest.skip("hardware preset h100-sxm not present")
    # the lecture's batch kept (a deployment's default batch of 1 cannot read every expert, which the claim assumes)
    scenario = build_scenario(lecture_library, hardware="h100-sxm", sets=["batch=2000 seq"])
    assert close(evaluate(lecture_library, scenario, "drain_time").exact, Fraction(80, 3350), rel=Fraction(1, 50))
    result = Checker(lecture_library, scenario).check(["pricing.five_minute_cache_is_flash"]).results[0]
    assert result.verdict == "proved", result.reason
