"""Scenario layering: presets, --set, pins and their precedence."""

from __future__ import annotations

import pytest
import sympy as sp

from derive.errors import ScenarioError, UnitError, UnknownNameError
from derive.model.evaluate import evaluate
from derive.model.scenario import build_scenario


def test_lecture_scenario_values_carry_sources(lecture_library, lecture_scenario):
    assert lecture_scenario.value("hbm_bandwidth") == 20 * 10**12
    for v in lecture_scenario.values.values():
        assert v.source


def test_set_with_units_overrides(lecture_library):
    sc = build_scenario(lecture_library, sets=["hbm_bandwidth=3.35 TB/s"])
    assert sc.value("hbm_bandwidth") == sp.Rational(335 * 10**10)
    assert sc.values["hbm_bandwidth"].origin == "--set"


def test_pinning_a_derived_quantity_cuts_its_definition(lecture_library):
    sc = build_scenario(lecture_library, sets=["hardware_ratio=600"])
    assert "hardware_ratio" in sc.pinned
    assert evaluate(lecture_library, sc, "critical_batch").exact == 600 * 8


def test_later_layer_unpins_an_earlier_pin(lecture_library):
    # The lecture pins sparsity = 8; a model preset gives its own parameter counts.
    sc = build_scenario(lecture_library, model="llama3-70b")
    assert "sparsity" not in sc.pinned
    # dense: a step reads every weight but the input embedding (a lookup of one row per token), and a token
    # multiplies all of them, so the sparsity is 1
    assert evaluate(lecture_library, sc, "sparsity").exact == 1
    assert any(layer.startswith("unpinned sparsity") for layer in sc.layers)
    sc = build_scenario(lecture_library, model="llama3-70b", sets=["sparsity=10"])
    assert "sparsity" in sc.pinned


def test_hardware_preset_layer(lecture_library):
    sc = build_scenario(lecture_library, hardware="h100-sxm")
    ratio = evaluate(lecture_library, sc, "hardware_ratio").value
    assert 280 < ratio < 310  # 989 TFLOP/s * 2 B / (2 * 3.35 TB/s) = 295 (H100 datasheet, dense BF16)


@pytest.mark.parametrize(("kwargs", "error"), [
    ({"hardware": "h100"}, UnknownNameError),
    ({"model": "llama"}, UnknownNameError),
    ({"scenario": "nope"}, UnknownNameError),
    ({"sets": ["flops=1 GB"]}, UnitError),
    ({"sets": ["flops=-3"]}, ScenarioError),
    ({"sets": ["tokens_per_step=2"]}, ScenarioError),
    ({"model": "/no/such/config.json"}, ScenarioError),
])
def test_bad_scenarios(lecture_library, kwargs, error):
    with pytest.raises(error):
        build_scenario(lecture_library, **kwargs)


def test_scenario_toml_file(lecture_library, tmp_path):
    f = tmp_path / "mine.toml"
    f.write_text('[values.flops]\nvalue = "1 PFLOP/s"\nsource = "test"\nas_of = "2026"\n'
                 '[[assume]]\nrelation = "batch >= 100"\n')
    sc = build_scenario(lecture_library, scenario=str(f))
    assert sc.value("flops") == 10**15 and sc.assumptions
    f.write_text("[values.flops\n")
    with pytest.raises(ScenarioError, match="invalid TOML"):
        build_scenario(lecture_library, scenario=str(f))


def test_fingerprint_changes_with_values(lecture_library, lecture_scenario):
    other = build_scenario(lecture_library, sets=["batch=100"])
    assert other.fingerprint() != lecture_scenario.fingerprint()
    assert build_scenario(lecture_library).fingerprint() == lecture_scenario.fingerprint()
