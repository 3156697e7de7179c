"""Chapter 4 (theorems/capacity.py): every claim meets its expected verdict, the lecture's numbers, and
a worked example against published model and hardware figures."""

from __future__ import annotations

import pytest
import sympy as sp

from derive.checking.checker import Checker
from derive.model.declarations import Assumption, Claim, Definition
from derive.model.evaluate import evaluate
from derive.model.scenario import build_scenario

TOPIC = "capacity"


def _ids() -> list[str]:
    from theorems import capacity

    return [v.id for v in vars(capacity).values() if isinstance(v, Claim) and v.topic == TOPIC]


@pytest.mark.parametrize(("name", "kind"), [
    ("memory_wall_capex", Assumption), ("memory_capacity_per_gpu", Definition), ("kv_cache_dominance", Claim),
    ("inference_parallelism_practice", Assumption), ("pipeline_hop_latency", Claim),
    ("scaleup_bandwidth_latency", Claim),
])
def test_catalogue_names_resolve(lecture_library, name, kind):
    decl = lecture_library.resolve(name)
    assert decl.id == f"capacity.{name}" and isinstance(decl, kind)


def test_kv_cache_dominance_rests_on_sharding(lecture_library):
    assert "capacity.perfect_sharding" in lecture_library.rests_on(lecture_library.resolve("kv_cache_dominance"))


def value(library, scenario, text) -> sp.Expr:
    return evaluate(library, scenario, text).exact


# The lecture's numbers ------------------------------------------------------------------------------

def test_memory_per_chip_in_the_lecture_scenario(lecture_library, lecture_scenario):
    # 700B x 0.5 B over 64 chips x 4 stages, plus 4 micro-batches x 2,000 sequences x 200k x 2,048 B.
    expected = (sp.Rational(35, 100) * 10**12 + 8000 * 200_000 * 2048) / (64 * 4)
    assert value(lecture_library, lecture_scenario, "memory_per_chip") == expected
    # The KV share per chip is one micro-batch's KV over the rack: 2,000 x 200k x 2,048 / 64 = 12.8 GB.
    assert value(lecture_library, lecture_scenario, "kv_bytes_per_chip") == sp.Rational(128, 10) * 10**9


@pytest.mark.parametrize("stages", ["1", "2", "4", "16"])
def test_kv_per_chip_does_not_depend_on_stages(lecture_library, lecture_scenario, stages):
    sc = build_scenario(lecture_library, sets=[f"stages={stages}", f"microbatches={stages}"])
    assert value(lecture_library, sc, "kv_bytes_per_chip") == value(lecture_library, lecture_scenario,
                                                                    "kv_bytes_per_chip")


def test_lecture_kv_dominance_numbers(lecture_library, lecture_scenario):
    # N_tot*q = 3.5e11 B; b = 300 x 8 = 2,400; L = 2e5; k = 1e11/(300 x 2e5) = 1,667 B/token.
    lib, sc = lecture_library, lecture_scenario
    assert value(lib, sc, "params_total * bytes_per_param") == sp.Rational(35, 100) * 10**12
    b = value(lib, sc, "critical_batch")
    assert b == 2400
    kv = b * value(lib, sc, "context") * sp.Rational(5000, 3)
    assert kv == 8 * 10**11
    assert kv > sp.Rational(35, 100) * 10**12 / 2  # at P = 2 the KV term already dominates


def test_hops_turn_20_into_30_ms(lecture_library, lecture_scenario):
    total = value(lecture_library, lecture_scenario, "train_interval + stages * hop_latency")
    assert total == sp.Rational(3, 100)


def test_hopper_to_blackwell_gain_is_eight(lecture_library, lecture_scenario):
    ratio = value(lecture_library, lecture_scenario, "params_total * bytes_per_param / (8 * hbm_bandwidth)")
    ratio /= value(lecture_library, lecture_scenario, "weight_fetch_time")
    assert ratio == 8


# Worked example against published numbers ---------------------------------------------------------------

def test_deepseek_v3_needs_more_than_one_h100_box(lecture_library):
    # DeepSeek-V3 README: 671B parameters, stored in FP8 (1 byte); DGX H100: 8 x 80 GB = 640 GB.
    # The weights alone overflow one box: with no pipelining memory_fits_in_hbm is refuted even for a
    # tiny KV cache; two stages (two boxes) fit, as pipelining_fits_any_model predicts.
    common = ["params_total=671e9 param", "bytes_per_param=1 B/param", "batch=8", "context=4096 token/seq"]
    one = build_scenario(lecture_library, hardware="h100-sxm", sets=common + ["stages=1", "microbatches=1"])
    two = build_scenario(lecture_library, hardware="h100-sxm", sets=common + ["stages=2", "microbatches=2"])
    check = "capacity.memory_fits_in_hbm"
    assert Checker(lecture_library, one).check([check]).by_id()[check].verdict == "refuted"
    assert Checker(lecture_library, two).check([check]).by_id()[check].verdict == "proved"
