"""Chapter 6, first half (theorems/context.py): verdicts under the lecture scenario, the lecture's
numbers (both readings of the bytes-per-token solve), and a worked example against a published model
configuration."""

from __future__ import annotations

from fractions import Fraction

import pytest
from libtools import close

from derive.model.declarations import Claim
from derive.model.evaluate import evaluate
from derive.model.scenario import PresetStore, build_scenario
from theorems import context

CLAIMS = [v for v in vars(context).values() if isinstance(v, Claim) and v.topic == "context"]
CATALOGUE = ["context_crossover", "kv_bytes_per_token", "kv_bytes_architecture", "quadratic_attention_negligible"]
FRONTIER = "params_active=1e11"
ONE_BYTE = ["bytes_per_param=1", "flops=12 PFLOP/s"]  # the board's W/F = 1/300: R = 300 at one byte per weight


def value(library, name, sets=()):
    return evaluate(library, build_scenario(library, sets=list(sets)), name).exact


@pytest.mark.parametrize("name", CATALOGUE)
def test_catalogue_name_resolves(lecture_library, name):
    assert lecture_library.resolve(name).topic == "context"


def test_both_readings_are_tagged(lecture_library):
    for name in ("kv_bytes_per_token_fp8_reading", "kv_bytes_per_token_fp4_reading",
                 "kv_bytes_per_token_fp4_claims_1667"):
        assert "inconsistency" in lecture_library.resolve(name).tags


@pytest.mark.parametrize(("name", "sets", "target"), [
    ("hardware_ratio", ONE_BYTE, 300),                              # same R at FP8 as at FP4
    ("kv_bytes_implied", [FRONTIER, *ONE_BYTE], Fraction(5000, 3)),  # "1667. Almost two kilobytes." (01:37)
    ("kv_bytes_implied", [FRONTIER], Fraction(2500, 3)),             # FP4 weights: 833 bytes
    ("kv_bytes_from_heads", [], 2048),                               # 1 x 2 x 128 x 8 x 1 byte (01:40)
    ("critical_context", [FRONTIER, *ONE_BYTE], Fraction(10**11, 300 * 2048)),  # L* ~ 163K, near the 200K tier
    ("quadratic_context", [FRONTIER], Fraction(10**11, 2 * 128 * 128)),  # ~3.05 million tokens (01:48)
])
def test_lecture_numbers(lecture_library, name, sets, target):
    assert close(value(lecture_library, name, sets), target)


def test_the_tier_solve_inverts_the_crossover(lecture_library):
    # with k set to the implied value, the balance context is exactly the tier
    k = value(lecture_library, "kv_bytes_implied", [FRONTIER, *ONE_BYTE])
    sets = [FRONTIER, *ONE_BYTE, f"kv_bytes_per_token={k.p}/{k.q} B/token"]
    assert value(lecture_library, "critical_context", sets) == value(lecture_library, "price_tier_context")


def test_llama3_70b_kv_bytes_from_its_config(lecture_library):
    # meta-llama Llama 3.1 70B config: 80 layers, 8 KV heads, head_dim 128; bf16 cache (2 bytes per element):
    # 2 x 80 x 8 x 128 x 2 = 327,680 bytes (320 KiB) per token.  The model preset's reader must agree.
    sets = ["kv_cache_layers=80", "kv_heads=8", "head_dim=128", "bytes_per_kv_element=2 B"]
    ours = value(lecture_library, "kv_bytes_from_heads", sets)
    assert ours == 327680
    if "llama3-70b" not in PresetStore.discover(lecture_library.preset_dirs).names("model"):
        pytest.skip("model preset llama3-70b not present")
    scenario = build_scenario(lecture_library, model="llama3-70b", sets=["bytes_per_kv_element=2 B"])
    assert evaluate(lecture_library, scenario, "kv_bytes_per_token").exact == ours
