"""Chapter 2 (theorems/moe.py): verdicts under the lecture scenario, the lecture's numbers, and worked
examples against published figures."""

from __future__ import annotations

from fractions import Fraction

import pytest
from libtools import close, scenario_with

from derive.checking.checker import Checker
from derive.model.declarations import Claim
from derive.model.evaluate import evaluate
from derive.model.scenario import build_scenario
from theorems import moe

CLAIMS = [v for v in vars(moe).values() if isinstance(v, Claim) and v.topic == "moe"]
CATALOGUE = ["moe_expert_parallel_layout", "moe_rack_bound", "scaleout_bandwidth_ratio_and_rack",
             "scaleup_domain_growth", "scaleup_capacity_unlock"]


@pytest.mark.parametrize("name", CATALOGUE)
def test_catalogue_name_resolves(library, name):
    assert library.resolve(name).topic == "moe"


@pytest.mark.parametrize(("name", "target"), [
    ("experts_per_chip", 4),                       # 256 experts on 64 GPUs (00:33)
    ("routing_fraction", Fraction(1, 32)),         # "maybe 1 in 32" (00:33)
    ("scaleout_slowdown", 8),                      # scale-out "about 8x slower" (00:38)
    ("scaleup_capacity", 64 * 288 * 10**9),        # 64 Rubin-class chips of 288 GB
])
def test_lecture_numbers(library, lecture, name, target):
    assert close(evaluate(library, lecture, name).exact, target)


@pytest.mark.parametrize(("racks", "target"), [(2, 8), (3, 16)])
def test_cross_rack_share_takes_r_times_racks_minus_one(library, racks, target):
    # Two racks: half the tokens leave and their share takes 8x as long (00:36-00:39); three racks: 2 x 8.
    scenario = build_scenario(library, sets=[f"expert_layer_racks={racks}"])
    assert close(evaluate(library, scenario, "alltoall_crossrack_time / alltoall_inrack_time").exact, target)


def test_deepseek_v3_routes_one_in_32(library):
    # deepseek-ai/DeepSeek-V3 config_671B.json: n_routed_experts = 256, num_experts_per_tok = 8.
    scenario = scenario_with(library, model="deepseek-v3")
    assert evaluate(library, scenario, "routing_fraction").exact == Fraction(1, 32)
    assert evaluate(library, scenario, "experts_total / experts_active").exact == 32


def test_dgx_h100_pools_640_gb(library):
    # NVIDIA DGX H100 datasheet: 8 H100 SXM, "640GB total GPU memory".
    scenario = scenario_with(library, hardware="h100-sxm")
    assert evaluate(library, scenario, "scaleup_capacity").exact == 640 * 10**9
    result = Checker(library, scenario).check(["moe.rack_about_64"]).by_id()["moe.rack_about_64"]
    assert result.verdict == "refuted"  # an 8-GPU box is not a 64-chip rack


def test_gb200_nvl72_pools_13_4_tb(library):
    # NVIDIA GB200 NVL72: "up to 13.4 TB HBM3e" over 72 Blackwell GPUs.
    scenario = scenario_with(library, hardware="gb200-nvl72")
    assert close(evaluate(library, scenario, "scaleup_capacity").exact, Fraction(134, 10) * 10**12)
    layout = Checker(library, scenario).check(["moe.moe_expert_parallel_layout"]).by_id()
    assert layout["moe.moe_expert_parallel_layout"].verdict == "refuted"  # 256 experts do not divide over 72
