"""The names DESIGN.md promises users exist: quantities, headline claims, presets, verdict words."""

from __future__ import annotations

import pytest

from derive.model.declarations import VERDICTS, Claim
from derive.model.scenario import PresetStore

BASE = ["flops", "hbm_bandwidth", "hbm_capacity", "chips", "params_total", "params_active", "bytes_per_param",
        "bytes_per_kv_element", "batch", "context", "kv_bytes_per_token", "experts_total", "experts_active", "layers",
        "layers_per_stage", "stages", "scaleup_bandwidth", "scaleout_bandwidth"]
DERIVED = ["critical_intensity", "hardware_ratio", "sparsity", "critical_batch", "drain_time", "weight_fetch_time",
           "compute_time", "memory_time", "step_time", "cost_per_token"]
HEADLINES = ["batch_optimum", "latency_floor", "pipeline_neutrality", "scaleout_viability", "compute_equalisation"]
HARDWARE = ["a100-80gb", "h100-sxm", "h200", "b200", "gb200-nvl72", "tpu-v5e", "tpu-v5p", "mi300x"]
MODELS = ["deepseek-v3", "llama3-70b", "llama3-405b", "mixtral-8x7b", "qwen3-235b-a22b"]


@pytest.mark.parametrize("name", BASE + DERIVED)
def test_quantity_exists(library, name):
    assert name in library.quantities


@pytest.mark.parametrize("name", DERIVED)
def test_derived_quantity_has_a_definition(library, name):
    assert library.is_derived(name)


@pytest.mark.parametrize("name", HEADLINES)
def test_headline_claim_proved(library, report, name):
    claim = library.resolve(name)
    assert isinstance(claim, Claim) and claim.label
    assert report[claim.id].verdict == "proved"


def test_presets_exist(library):
    store = PresetStore.discover(library.preset_dirs)
    assert set(HARDWARE) <= set(store.names("hardware"))
    assert set(MODELS) <= set(store.names("model"))
    assert len(store.names("hardware")) >= 12 and len(store.names("model")) >= 8


def test_verdict_words():
    assert VERDICTS == ("proved", "refuted", "unknown", "inconsistent", "assumed", "blocked")
