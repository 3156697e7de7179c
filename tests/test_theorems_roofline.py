"""Chapter 1, first half (theorems/roofline.py): verdicts under the lecture scenario, the lecture's
numbers, and worked examples against published hardware figures."""

from __future__ import annotations

from fractions import Fraction

import pytest
from libtools import close, scenario_with

from derive.checking.checker import Checker
from derive.model.declarations import Claim
from derive.model.evaluate import evaluate
from theorems import roofline

CLAIMS = [v for v in vars(roofline).values() if isinstance(v, Claim) and v.topic == "roofline"]
CATALOGUE = ["roofline_step_time", "compute_time", "memory_time", "latency_vs_batch_shape", "latency_floor",
             "cost_per_token_and_floor", "hbm_drain_time"]


@pytest.mark.parametrize("name", CATALOGUE)
def test_catalogue_name_resolves(library, name):
    assert library.resolve(name).topic == "roofline"


@pytest.mark.parametrize(("name", "target"), [
    ("drain_time", Fraction(144, 10000)),          # 288 GB / 20 TB/s = 14.4 ms (00:22)
    ("critical_intensity", 1200),                  # 24 PFLOP/s over 20 TB/s: FP4, 2 FLOPs per multiply
    # at 200k tokens of context the per-token KV reads (20.5 us) dominate the multiplies (3.1 us)
    ("cost_per_token_floor", Fraction(2, 3600) * 200000 * 2048 / (20 * 10**12)),
])
def test_lecture_numbers(library, lecture, name, target):
    assert close(evaluate(library, lecture, name).exact, target)


def test_cost_per_token_is_above_its_floor_at_the_lecture_point(library, lecture):
    cost = evaluate(library, lecture, "cost_per_token").exact
    floor = evaluate(library, lecture, "cost_per_token_floor").exact
    assert cost >= floor > 0


def test_latency_floor_rests_on_the_roofline(library, report):
    assert "roofline.step_time_ge_memory_time" in {u.id for u in library.resolve("latency_floor").uses}
    assert report["roofline.latency_floor"].verdict == "proved"


def test_h100_critical_intensity_matches_the_scaling_book(library):
    # jax-ml/scaling-book roofline.md, Question 5: H100 SXM bf16 9.89e14 FLOP/s over 3.35e12 B/s, "B_crit is 295".
    scenario = scenario_with(library, "h100-sxm")
    assert close(evaluate(library, scenario, "critical_intensity").exact, 295)


def test_tpu_v5e_critical_intensity_matches_the_scaling_book(library):
    # jax-ml/scaling-book roofline.md: "B > 1.97e14 / 8.20e11 = 240" for TPU v5e in bf16.
    scenario = scenario_with(library, "tpu-v5e")
    assert close(evaluate(library, scenario, "critical_intensity").exact, 240, Fraction(2, 100))


def test_h100_drain_time(library):
    # NVIDIA H100 SXM datasheet: 80 GB at 3.35 TB/s, about 24 ms to read all of HBM once.
    scenario = scenario_with(library, "h100-sxm")
    assert close(evaluate(library, scenario, "drain_time").exact, Fraction(80, 3350))


def test_drain_time_rule_of_thumb_fails_for_the_a100(library):
    # A100 80GB SXM: 80 GB / 2.039 TB/s = 39 ms, outside "about 20 ms" read as 13-30 ms.
    scenario = scenario_with(library, "a100-80gb")
    result = Checker(library, scenario).check(["roofline.drain_time_about_20ms"]).by_id()
    assert result["roofline.drain_time_about_20ms"].verdict == "refuted"
