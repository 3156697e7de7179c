"""Gemma 4 (``gemma4``, ``gemma4_text``): sliding-window layers and global layers with heads of their own (global
keys serving as values), and in 26B-A4B routed experts beside every layer's dense MLP (``top_k_experts``).

No whole copy of Google's ``config.json`` was found (``tests/fixtures/configs/SOURCES.md``).
``gemma4_31b_printed.json`` is gemma-4-31B-it's config as transformers prints it from the checkpoint, whose tensor
total is compared exactly; ``gemma4_26b_a4b_shape.json`` holds 26B-A4B's sizes as the public copies agree on them.
Published: 26B-A4B about 25.2B parameters, about 3.8B active (Google's model details).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.cli import main
from derive.errors import ScenarioError
from derive.model.config_formulas import read_config, refusal, validate
from derive.model.evaluate import evaluate
from derive.model.scenario import build_scenario
from theorems.configs import kv_layout, load_config_json, model_values, param_breakdown
from theorems.configs.live_formulas import LIVE_CONFIG_FORMULAS

CONFIGS = Path(__file__).parent / "fixtures" / "configs"
DENSE, MOE = CONFIGS / "gemma4_31b_printed.json", CONFIGS / "gemma4_26b_a4b_shape.json"


def _with(path: Path, **text_changes: object) -> dict:
    config = json.loads(path.read_text())
    text = dict(config["text_config"])
    for key, value in text_changes.items():
        if value is ...:
            text.pop(key, None)
        else:
            text[key] = value
    return config | {"text_config": text}


# hand counts, written out from the fields; every sixth layer global
VOCAB = 262_144
D31 = 5376
SLIDING_31 = D31 * 32 * 256 + 2 * D31 * 16 * 256 + 32 * 256 * D31  # q; k and v (16 KV heads of 256); o
GLOBAL_31 = D31 * 32 * 512 + D31 * 4 * 512 + 32 * 512 * D31  # q; k only (4 KV heads of 512, keys as values); o
TOTAL_31 = VOCAB * D31 + 50 * SLIDING_31 + 10 * GLOBAL_31 + 60 * 3 * D31 * 21_504  # tied: the embedding once
D26 = 2816
SLIDING_26 = D26 * 16 * 256 + 2 * D26 * 8 * 256 + 16 * 256 * D26
GLOBAL_26 = D26 * 16 * 512 + D26 * 2 * 512 + 16 * 512 * D26
EXPERT_26 = 3 * D26 * 704
BASE_26 = VOCAB * D26 + 25 * SLIDING_26 + 5 * GLOBAL_26 + 30 * (3 * D26 * 2112 + D26 * 128)  # + dense MLP, router
TOTAL_26 = BASE_26 + 30 * 128 * EXPERT_26
ACTIVE_26 = BASE_26 + 30 * 8 * EXPERT_26  # tied: the embedding matrix counts once, as the output head


def _31b_not_counted() -> int:
    """gemma-4-31B-it's tensors the reader does not count, from the shapes gogongxt/python's report lists
    (``scripts/models/gemma_4_31b_it.md`` @ cbff706): the vision tower and its projection, norms, layer scalars."""
    vision = (27 * (4 * 1152 * 1152 + 3 * 1152 * 4304 + 4 * 1152 + 2 * 72) + 1152 * 768 + 2 * 10_240 * 1152
              + 2 * 1152 + D31 * 1152)  # layers, patch embedder, position table, std bias and scale, embed_vision
    norms = 60 * 4 * D31 + 60 + 50 * 2 * 256 + 10 * 2 * 512 + D31  # layer norms, layer_scalar, q/k norms, final
    return vision + norms


def test_layer_kinds_follow_layer_types() -> None:
    kv31, kv26 = kv_layout(json.loads(DENSE.read_text())), kv_layout(json.loads(MOE.read_text()))
    assert (kv31.full_layers, kv31.window_layers, kv31.window) == (10, 50, 1024)
    assert (kv26.full_layers, kv26.window_layers, kv26.window) == (5, 25, 1024)
    pb = param_breakdown(json.loads(MOE.read_text()))
    assert (pb.moe_layers, pb.experts_total, pb.experts_active, pb.experts_shared) == (30, 128, 8, 1)
    assert pb.shared_experts == 30 * 3 * D26 * 2112 and pb.router == 30 * D26 * 128


def test_31b_equals_the_checkpoint_tensors() -> None:
    # gogongxt/python scripts/models/gemma_4_31b_it.md @ cbff706: "参数总量 31,273,088,876", vision tower included
    assert load_config_json(DENSE)["params_total"].value == TOTAL_31 == 31_273_088_876 - _31b_not_counted()
    assert round(TOTAL_31 / 1e8) == 307  # 30.7B


def test_26b_a4b_against_published_counts() -> None:
    values = load_config_json(MOE)
    assert values["params_total"].value == TOTAL_26 == 25_232_441_344
    assert float(TOTAL_26) == pytest.approx(25.2e9, abs=0.05e9)  # Google: about 25.2B
    assert values["params_active"].value == ACTIVE_26 == 3_821_830_144
    assert float(ACTIVE_26) == pytest.approx(3.8e9, abs=0.05e9)  # Google: about 3.8B active
    assert values["experts_total"].value == 128 and values["experts_active"].value == 8


@pytest.mark.parametrize("path, full, window", [
    (DENSE, 10 * 2 * 4 * 512 * 2, 50 * 2 * 16 * 256 * 2),  # bf16 keys and values, cached apart
    (MOE, 5 * 2 * 2 * 512 * 2, 25 * 2 * 8 * 256 * 2),
])
def test_kv_bytes_by_layer_kind(path: Path, full: int, window: int) -> None:
    values = load_config_json(path)
    assert values["kv_bytes_per_token"].value == full and values["kv_window_bytes_per_token"].value == window
    assert values["attention_window"].value == 1024
    # the context chapter's per-head formula on the global layers gives the same bytes
    assert (values["kv_cache_layers"].value * 2 * values["kv_heads"].value * values["head_dim"].value * 2) == full


@pytest.mark.parametrize("context", [512, 1024, 262_144])
def test_kv_per_sequence_adds_the_window(lecture_library, context: int) -> None:
    sc = build_scenario(lecture_library, model=str(DENSE), sets=[f"context={context}"])
    got = Fraction(str(evaluate(lecture_library, sc, "kv_bytes_per_sequence").exact))
    assert got == context * 81_920 + min(context, 1024) * 819_200


@pytest.mark.parametrize("path, total, active, kv", [
    (DENSE, TOTAL_31, TOTAL_31, "81.92 kB/token"), (MOE, TOTAL_26, ACTIVE_26, "20.48 kB/token")])
def test_command_line_gives_the_numbers(capsys, path: Path, total: int, active: int, kv: str) -> None:
    assert main(["eval", "params_total", "params_active", "kv_bytes_per_token", "--model", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"exactly {total} param" in out and f"exactly {active} param" in out and kv in out


@pytest.mark.parametrize("path", [DENSE, MOE], ids=["31b", "26b-a4b"])
def test_planted_unknown_layer_kind_is_refused_on_the_command_line(tmp_path: Path, capsys, path: Path) -> None:
    types = json.loads(path.read_text())["text_config"]["layer_types"]
    config = _with(path, layer_types=types[:3] + ["chunked_attention"] + types[4:])
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert main(["eval", "params_total", "params_active", "kv_bytes_per_token",
                 "--model", str(tmp_path / "config.json")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "layer_types[3]" in captured.err and "unknown layer kind 'chunked_attention'" in captured.err


@pytest.mark.parametrize("path, changes, what", [
    (DENSE, {"hidden_size_per_layer_input": 256}, "per-layer input embeddings"),
    (DENSE, {"hidden_size_per_layer_input": ...}, "per-layer input embeddings"),  # Gemma4TextConfig's default: 256
    (DENSE, {"num_kv_shared_layers": 4}, "reuse another layer's KV cache"),
    (DENSE, {"use_double_wide_mlp": True}, "double-width MLPs"),
    (DENSE, {"use_bidirectional_attention": "all"}, "use_bidirectional_attention"),
    (DENSE, {"layer_types": ["sliding_attention"] * 60}, "last layer is global"),
    (DENSE, {"layer_types": ["full_attention"] * 59}, "one kind for each of the 60 layers"),
    (DENSE, {"num_experts": 128}, "enable_moe_block is not true"),
    (DENSE, {"num_global_key_value_heads": 5}, "not a multiple"),
    (MOE, {"top_k_experts": ...}, "missing field 'top_k_experts'"),
    (MOE, {"top_k_experts": 129}, "129 experts per token but only 128 experts"),
    (MOE, {"num_experts_per_tok": 2}, "'top_k_experts' (8) and 'num_experts_per_tok' (2) disagree"),
    (MOE, {"expert_intermediate_size": 512}, "'moe_intermediate_size' (704) and 'expert_intermediate_size' (512)"),
    (MOE, {"global_head_dim": 0}, "global_head_dim"),
])
def test_a_field_that_cannot_be_placed_is_refused(path: Path, changes: dict, what: str) -> None:
    with pytest.raises(ScenarioError) as err:
        model_values(_with(path, **changes))
    assert what in str(err.value) and "\n" not in str(err.value)


def test_class_defaults_read_a_sparse_file_alike() -> None:
    # fields that equal Gemma4TextConfig's defaults may be left out of a file, as Google's Gemma 3 files do
    full = model_values(json.loads(MOE.read_text()))
    sparse = model_values(_with(MOE, layer_types=..., num_kv_shared_layers=..., use_double_wide_mlp=...,
                                global_head_dim=...))
    assert {k: v.value for k, v in sparse.items()} == {k: v.value for k, v in full.items()}
    assert any("every sixth layer global" in n for n in sparse.notes)
    assert any("'global_head_dim' absent: transformers' gemma4 default 512" in n for n in sparse.notes)


def test_values_projected_apart_add_the_value_matrices() -> None:
    apart = param_breakdown(_with(DENSE, attention_k_eq_v=False))
    assert apart.total - TOTAL_31 == 10 * D31 * 4 * 512  # one v_proj per global layer
    absent = param_breakdown(_with(DENSE, attention_k_eq_v=...))  # Gemma4TextConfig's default: False
    assert absent.total == apart.total and any("attention_k_eq_v" in n for n in absent.notes)


def test_global_heads_default_to_the_sliding_ones() -> None:
    values = model_values(_with(DENSE, num_global_key_value_heads=...))
    assert values["kv_heads"].value == 16 and values["kv_bytes_per_token"].value == 10 * 2 * 16 * 512 * 2


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=0, max_size=11))
def test_counts_are_the_layer_by_layer_sums(sliding: list[bool]) -> None:
    kinds = sliding + [False]  # the last layer is global
    config = _with(DENSE, num_hidden_layers=len(kinds),
                   layer_types=["sliding_attention" if s else "full_attention" for s in kinds])
    pb, kv = param_breakdown(config), kv_layout(config)
    att = sum(SLIDING_31 if s else GLOBAL_31 for s in kinds)
    assert pb.total == VOCAB * D31 + att + len(kinds) * 3 * D31 * 21_504
    assert kv.full_elements == kinds.count(False) * 2 * 4 * 512
    assert kv.window_elements == kinds.count(True) * 2 * 16 * 256


def test_the_live_page_gives_its_one_line() -> None:
    readings = validate(LIVE_CONFIG_FORMULAS, where="test")
    for path in (DENSE, MOE):
        config = json.loads(path.read_text())
        for shown in (config, config["text_config"]):
            with pytest.raises(ScenarioError) as err:
                read_config(readings, shown)
            line = refusal(readings, err.value.message)
            assert shown["model_type"] in line and line.endswith("`derive card --model config.json`")
