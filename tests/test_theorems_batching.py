"""Chapter 1, second half (theorems/batching.py): verdicts under the lecture scenario, the lecture's
numbers, both readings of each inconsistency, and worked examples against published figures."""

from __future__ import annotations

from fractions import Fraction

import pytest
from libtools import close, scenario_with

from derive.checking.checker import Checker
from derive.model.declarations import Assumption, Claim
from derive.model.evaluate import evaluate
from derive.model.scenario import build_scenario
from theorems import batching

CLAIMS = [v for v in vars(batching).values() if isinstance(v, Claim) and v.topic == "batching"]
CATALOGUE = ["fast_mode_premise", "deepseek_v3_params", "goldilocks_context_and_mfu", "hw_ratio_300", "batch_optimum",
             "kv_raises_batch_optimum", "train_schedule", "fast_mode_pricing", "unbatched_cost_penalty",
             "batch_scale_independence", "system_throughput_and_gemini_fraction", "routed_scaling_tradeoff",
             "sparsity_bandwidth_win"]


@pytest.mark.parametrize("name", CATALOGUE)
def test_catalogue_name_resolves(library, name):
    assert library.resolve(name).topic == "batching"


def test_headline_requirements_are_proved(report):
    for cid in ("batching.batch_optimum", "batching.kv_raises_batch_optimum", "batching.critical_batch_kv_balance"):
        assert report[cid].verdict == "proved"


@pytest.mark.parametrize(("name", "target"), [
    ("hardware_ratio", 300),                       # "somewhere around 300" (00:16)
    ("critical_batch", 2400),                      # 300 x 8 (00:18)
    ("worst_case_latency", Fraction(40, 1000)),    # 20 ms wait + 20 ms ride (00:20)
    ("throughput", 100000),                        # 2,000 sequences every 20 ms
    ("sparsity", 8),                               # pinned: the lecture's "32 out of 256"
])
def test_lecture_numbers(library, lecture, name, target):
    assert close(evaluate(library, lecture, name).exact, target)


def test_sparsity_from_parameters_is_the_other_reading(library, lecture):
    # 700B / 37B = 18.9, the reading batch_optimum_from_params uses (about 5,680 sequences).
    ratio = evaluate(library, lecture, "params_total / params_active").exact
    assert close(ratio, Fraction(700, 37))
    assert close(evaluate(library, lecture, "hardware_ratio * params_total / params_active").exact,
                 Fraction(300 * 700, 37))


def test_fast_mode_pricing_rests_on_the_premise(library, report):
    assert "batching.fast_mode_premise" in report["batching.fast_mode_pricing"].rests_on
    assert isinstance(library.resolve("fast_mode_premise"), Assumption)
    assert lecture_value(library, "fast_price_ratio") == 6
    assert lecture_value(library, "fast_speed_ratio") == Fraction(5, 2)


def lecture_value(library, name):
    return build_scenario(library).value(name)


def test_hw_ratio_300_is_refuted_on_the_a100(library):
    # NVIDIA A100 80GB SXM: 312 TFLOP/s bf16 dense, 2 B/param, 2.039 TB/s -> R = 153.
    scenario = scenario_with(library, "a100-80gb")
    assert close(evaluate(library, scenario, "hardware_ratio").exact, 153)
    result = Checker(library, scenario).check(["batching.hw_ratio_300"]).by_id()["batching.hw_ratio_300"]
    assert result.verdict == "refuted"


def test_h100_critical_batch_matches_the_scaling_book(library):
    # jax-ml/scaling-book roofline.md, Question 5: a bf16 matmul on an H100 SXM becomes compute-bound at
    # B_crit = 9.89e14 / 3.35e12 = 295 tokens.  For a dense model (sparsity 1) that is our critical batch.
    scenario = scenario_with(library, "h100-sxm", sets=["sparsity=1"])
    assert close(evaluate(library, scenario, "critical_batch").exact, 295)
    result = Checker(library, scenario).check(["batching.hw_ratio_300"]).by_id()["batching.hw_ratio_300"]
    assert result.verdict == "proved"


def test_tpu_v5e_critical_batch_matches_the_scaling_book(library):
    # jax-ml/scaling-book roofline.md: "for a bfloat16 matmul to be compute-bound on most TPUs, we need our
    # batch size to be greater than 240 (tokens)" (TPU v5e: 1.97e14 / 8.2e11).
    scenario = scenario_with(library, "tpu-v5e", sets=["sparsity=1"])
    assert close(evaluate(library, scenario, "critical_batch").exact, 240, Fraction(2, 100))


def test_train_interval_rule_of_thumb_fails_for_the_a100(library):
    # A100 80GB drains its HBM in 80 GB / 2.039 TB/s = 39 ms, not "about 20 ms".
    scenario = scenario_with(library, "a100-80gb")
    result = Checker(library, scenario).check(["batching.train_interval_near_drain_time"]).by_id()
    assert result["batching.train_interval_near_drain_time"].verdict == "refuted"
