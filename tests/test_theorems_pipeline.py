"""Chapter 3 (theorems/pipeline.py): every claim meets its expected verdict, the lecture's numbers, and
worked examples against published hardware figures."""

from __future__ import annotations

import pytest
import sympy as sp

from derive.checking.checker import Checker
from derive.model.declarations import Claim
from derive.model.evaluate import evaluate
from derive.model.scenario import build_scenario

TOPIC = "pipeline"


def claim_ids(library) -> list[str]:
    return [c.id for c in library.claims() if c.topic == TOPIC]


def _ids() -> list[str]:
    from theorems import pipeline

    return [v.id for v in vars(pipeline).values() if isinstance(v, Claim)]


@pytest.mark.parametrize("name", ["scaleout_viability", "pipeline_neutrality", "pipeline_bubble_and_training_batch",
                                  "capacity_surplus_inference"])
def test_catalogue_names_resolve(lecture_library, name):
    assert lecture_library.resolve(name).id == f"pipeline.{name}"


def test_headline_claims_are_general_or_instance_as_promised(lecture_library):
    assert lecture_library.resolve("pipeline_neutrality").instance is False
    assert lecture_library.resolve("scaleout_viability").instance is True
    assert lecture_library.resolve("scaleout_viability_criterion").instance is False


def value(library, scenario, text) -> sp.Expr:
    return evaluate(library, scenario, text).exact


# The lecture's numbers ------------------------------------------------------------------------------

def test_lecture_scaleout_ratio_is_two(lecture_library, lecture_scenario):
    # "8 activated experts", one layer per stage, scale-out "about 8x slower": 2*8*1/8 = 2.
    assert value(lecture_library, lecture_scenario, "scaleout_slowdown") == 8
    ratio = value(lecture_library, lecture_scenario, "stage_scaleup_time / boundary_scaleout_time")
    assert ratio == 2


def test_quarter_of_the_model_per_rack(lecture_library, lecture_scenario):
    per_stage = value(lecture_library, lecture_scenario, "stage_weight_bytes")
    assert per_stage == sp.Rational(700 * 10**9, 2) / 4  # 700B parameters at FP4, over 4 racks


def test_pipelined_step_and_cost_equal_one_rack(lecture_library, lecture_scenario):
    lib, sc = lecture_library, lecture_scenario
    assert value(lib, sc, "pipelined_step_time") == value(lib, sc, "step_time")
    assert value(lib, sc, "pipelined_cost_per_token") == value(lib, sc, "cost_per_token")


def test_filled_pipeline_has_no_bubble_and_single_batch_idles_three_quarters(lecture_library, lecture_scenario):
    assert value(lecture_library, lecture_scenario, "idle_fraction") == 0  # 4 micro-batches in 4 stages
    one = build_scenario(lecture_library, sets=["microbatches=1"])
    assert value(lecture_library, one, "idle_fraction") == sp.Rational(3, 4)


def test_hops_add_latency(lecture_library, lecture_scenario):
    lib, sc = lecture_library, lecture_scenario
    extra = value(lib, sc, "pipelined_step_time_with_hops") - value(lib, sc, "pipelined_step_time")
    assert extra == 3 * sp.Rational(25, 10000)  # three hand-overs of 2.5 ms between four stages


# Margins and counterexamples of the viability instance --------------------------------------------------

def _verdict(library, claim_id, **kwargs) -> str:
    scenario = build_scenario(library, **kwargs)
    return Checker(library, scenario).check([claim_id]).by_id()[claim_id].verdict


@pytest.mark.parametrize(("experts", "verdict"), [("2", "refuted"), ("3.99", "refuted"), ("4", "proved"),
                                                  ("32", "proved")])
def test_viability_threshold_is_four_experts_in_the_lecture(lecture_library, experts, verdict):
    # r = 8 and one layer per stage: viable iff experts_active >= 8/(2*1) = 4, boundary included.
    assert _verdict(lecture_library, "pipeline.scaleout_viability", sets=[f"experts_active={experts}"]) == verdict


def test_strict_reading_differs_only_on_the_boundary(lecture_library):
    # The seed's "> 8" and the transcript's ">= 8" disagree exactly at 2*E_act*L_stage = r.
    assert _verdict(lecture_library, "pipeline.scaleout_viability", sets=["experts_active=4"]) == "proved"
    result = Checker(lecture_library, build_scenario(lecture_library)).check(
        ["pipeline.scaleout_viability_strict_reading"]).by_id()["pipeline.scaleout_viability_strict_reading"]
    cx = {k: sp.Rational(v) for k, v in result.counterexample.items()}
    assert 2 * cx["experts_active"] * cx["layers_per_stage"] == cx["scaleup_bandwidth"] / cx["scaleout_bandwidth"]


# Worked examples against published numbers --------------------------------------------------------------

def test_h100_scaleout_ratio_published(lecture_library):
    # jax-ml/scaling-book gpus.md: H100 NVLink 4 = 18 x 25 GB/s = 450 GB/s per GPU, one 400 Gbps
    # ConnectX-7 NIC per GPU = 50 GB/s.  r = 9: DeepSeek-V3's 8 routed experts per token
    # (config num_experts_per_tok = 8) pass with one layer per stage (16 >= 9), two experts do not.
    sc = build_scenario(lecture_library, hardware="h100-sxm")
    assert value(lecture_library, sc, "scaleout_slowdown") == 9
    assert _verdict(lecture_library, "pipeline.scaleout_viability", hardware="h100-sxm") == "proved"
    assert _verdict(lecture_library, "pipeline.scaleout_viability", hardware="h100-sxm",
                    sets=["experts_active=2"]) == "refuted"


def test_gb200_needs_two_layers_per_stage(lecture_library):
    # jax-ml/scaling-book gpus.md: GB200 NVL72 900 GB/s NVLink per GPU, node egress 3.6 TB/s for 72 GPUs
    # = 50 GB/s per GPU, so r = 18 > 2*8*1: one layer per rack is not enough, two are (32 >= 18).
    sc = build_scenario(lecture_library, hardware="gb200-nvl72")
    assert value(lecture_library, sc, "scaleout_slowdown") == 18
    assert _verdict(lecture_library, "pipeline.scaleout_viability", hardware="gb200-nvl72") == "refuted"
    assert _verdict(lecture_library, "pipeline.scaleout_viability", hardware="gb200-nvl72",
                    sets=["layers_per_stage=2"]) == "proved"


def test_gb200_rack_holds_a_trillion_parameters(lecture_library):
    # NVIDIA GB200 NVL72: 13.4 TB of HBM per rack (72 x 186 GB); 1T parameters at FP8 = 1 TB.
    sc = build_scenario(lecture_library, hardware="gb200-nvl72")
    assert abs(value(lecture_library, sc, "chips * hbm_capacity") - sp.Rational(134, 10) * 10**12) < 10**11
    assert _verdict(lecture_library, "pipeline.capacity_surplus_inference", hardware="gb200-nvl72") == "proved"
    assert _verdict(lecture_library, "pipeline.rack_capacity_ten_to_twenty_tb", hardware="gb200-nvl72") == "proved"


def test_hopper_box_is_too_small_for_a_trillion(lecture_library):
    # DGX H100: 8 x 80 GB = 640 GB (nvidia.com/en-us/data-center/h100) < 1 TB.
    assert _verdict(lecture_library, "pipeline.capacity_surplus_inference", hardware="h100-sxm") == "refuted"
