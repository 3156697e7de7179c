"""MiMo-V2-Flash (``mimo_v2_flash``) and MiMo-V2.5 (``mimo_v2``): full-attention and sliding-window layers with heads
of their own (``hybrid_layer_pattern``, 0 full and 1 window), keys and values of different sizes, routed experts on
the layers ``moe_layer_freq`` lists.

The fixture ``mimo-v2.5.json`` is Xiaomi's MiMo-V2.5 file, verbatim (``tests/fixtures/configs/SOURCES.md``); its
checkpoint's tensor total is compared exactly.  No whole copy of MiMo-V2-Flash's own file was found: its fields are
written out below from NVIDIA NeMo AutoModel's ``MiMoV2FlashConfig`` ("Configuration for XiaomiMiMo/MiMo-V2-Flash")
and the layer lists every public copy agrees on.  Published (Xiaomi's model card): 309B total, 15B active.
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

V25 = Path(__file__).parent / "fixtures" / "configs" / "mimo-v2.5.json"


def _v25(**changes: object) -> dict:
    return json.loads(V25.read_text()) | changes


# the layer lists: global attention on layers 0, 5, 11, 17, ..., 47; layer 0 a dense MLP, the others experts
PATTERN = [0, 1, 1, 1, 1, 0] + [1, 1, 1, 1, 1, 0] * 7
FREQ = [0] + [1] * 47
# MiMo-V2-Flash's language model, written out (NeMo AutoModel's MiMoV2FlashConfig, docs.nvidia.com)
FLASH = {"architectures": ["MiMoV2FlashForCausalLM"], "model_type": "mimo_v2_flash", "vocab_size": 152_576,
         "hidden_size": 4096, "intermediate_size": 16_384, "moe_intermediate_size": 2048, "num_hidden_layers": 48,
         "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 192, "v_head_dim": 128,
         "swa_num_attention_heads": 64, "swa_num_key_value_heads": 8, "swa_head_dim": 192, "swa_v_head_dim": 128,
         "max_position_embeddings": 262_144, "tie_word_embeddings": False, "attention_value_scale": 0.707,
         "add_full_attention_sink_bias": False, "add_swa_attention_sink_bias": True, "hybrid_block_size": None,
         "hybrid_layer_pattern": PATTERN, "partial_rotary_factor": 0.334, "sliding_window": 128,
         "sliding_window_size": 128, "attention_chunk_size": 128, "n_routed_experts": 256, "n_shared_experts": None,
         "num_experts_per_tok": 8, "moe_layer_freq": FREQ, "torch_dtype": "bfloat16"}

# hand counts, written out from the fields
D, VOCAB = 4096, 152_576
FULL_ATT = D * 64 * 192 + D * 4 * (192 + 128) + 64 * 128 * D  # q; k and v (4 KV heads); o
SWA_ATT = D * 64 * 192 + D * 8 * (192 + 128) + 64 * 128 * D  # the same with 8 KV heads
EXPERT = 3 * D * 2048  # gate, up, down
TOTAL = 2 * VOCAB * D + 9 * FULL_ATT + 39 * SWA_ATT + 3 * D * 16_384 + 47 * (256 * EXPERT + D * 256)
ACTIVE = VOCAB * D + 9 * FULL_ATT + 39 * SWA_ATT + 3 * D * 16_384 + 47 * (8 * EXPERT + D * 256)  # head, no embedding
KV_FULL = 9 * 4 * (192 + 128) * 2  # bytes per token of context: 9 global layers, bf16
KV_WINDOW = 39 * 8 * (192 + 128) * 2  # bytes per token of the last 128


def _v25_not_counted() -> int:
    """MiMo-V2.5's tensors the reader does not count, from the shapes gogongxt/python's report lists
    (``scripts/models/mimo_v2.5.md`` @ 6910700)."""
    fp8_scales = 9 * 108 * 32 + 39 * 116 * 32 + 3 * 128 * 32 + 47 * 256 * 3 * 16 * 32  # qkv, layer 0's MLP, experts
    small = 39 * 64 + 47 * 256 + 48 * 2 * D + D  # sink biases, e_score_correction_bias, norms
    mtp = 3 * (D * 8192 + 5 * D + 3 * 16_384 * D + 3 * 128 * 32 + 64 + D * 8192 + 14_848 * D + 116 * 32)
    audio = (6 * (2 * 1024 + 3 * 1024 * 4096 + 4 * 1024 * 1024 + 3 * 1024) + 1024 + 2 * 16_384 * D
             + 20 * 1280 * 1024)
    vision = (28 * (1280 + 1280 * 2048 + 3072 + 3072 * 1280 + 1280 + 1280 * 4608 + 2 * (4608 + 4608 * 1280)
                    + 2 * 1280) + 24 * 32 + 1280 + 5120 * 5120 + D * 5120 + 1280 * 3 * 2 * 16 * 16)
    return fp8_scales + small + mtp + audio + vision


def test_layer_kinds_follow_the_lists() -> None:
    pb, kv = param_breakdown(_v25()), kv_layout(_v25())
    assert (kv.full_layers, kv.window_layers, kv.window, kv.chunk_layers, kv.state_layers) == (9, 39, 128, 0, 0)
    assert (pb.moe_layers, pb.layers, pb.experts_total, pb.experts_active, pb.experts_shared) == (47, 48, 256, 8, 0)
    assert pb.attention == 9 * FULL_ATT + 39 * SWA_ATT and pb.dense_mlp == 3 * D * 16_384


def test_v25_equals_the_checkpoint_tensors() -> None:
    # gogongxt/python scripts/models/mimo_v2.5.md @ 6910700: "参数总量 310,775,040,000", towers and MTP included
    assert load_config_json(V25)["params_total"].value == TOTAL == 310_775_040_000 - _v25_not_counted()
    assert TOTAL == 308_778_369_024


def test_flash_against_published_counts() -> None:
    values = model_values(FLASH)
    assert values["params_total"].value == TOTAL
    assert float(TOTAL) == pytest.approx(309e9, abs=0.5e9)  # Xiaomi: 309B total
    assert values["params_active"].value == ACTIVE
    # Xiaomi's "15B activated" counts every weight on the token's path, the input embedding too: 15.45B
    assert float(ACTIVE + VOCAB * D) == pytest.approx(15e9, abs=0.5e9)
    assert values["params_embedding"].value == VOCAB * D


def test_flash_and_v25_share_the_language_model() -> None:
    flash, v25 = model_values(FLASH), load_config_json(V25)
    for key in ("params_total", "params_active", "kv_bytes_per_token", "kv_window_bytes_per_token", "head_dim",
                "kv_heads", "experts_total", "experts_active", "token_activation_bytes"):
        assert flash[key].value == v25[key].value, key


def test_kv_bytes_by_layer_kind() -> None:
    values = load_config_json(V25)
    assert values["kv_bytes_per_token"].value == KV_FULL == 23_040
    assert values["kv_window_bytes_per_token"].value == KV_WINDOW == 199_680
    assert values["attention_window"].value == 128
    # keys of 192 and values of 128: their mean makes the per-head formula give the cached elements exactly
    assert values["head_dim"].value == 160 and values["kv_heads"].value == 4 and values["query_heads"].value == 64
    assert 2 * values["kv_heads"].value * values["head_dim"].value * 9 * 2 == KV_FULL
    assert values["kv_cache_layers"].value == values["global_attention_layers"].value == 9
    assert values["token_activation_bytes"].value == 2 * D


@pytest.mark.parametrize("context", [100, 128, 200_000])
def test_kv_per_sequence_adds_the_window(lecture_library, context: int) -> None:
    sc = build_scenario(lecture_library, model=str(V25), sets=[f"context={context}"])
    got = Fraction(str(evaluate(lecture_library, sc, "kv_bytes_per_sequence").exact))
    assert got == context * KV_FULL + min(context, 128) * KV_WINDOW


def test_command_line_gives_the_numbers(capsys) -> None:
    assert main(["eval", "params_total", "params_active", "kv_bytes_per_token", "--model", str(V25)]) == 0
    out = capsys.readouterr().out
    assert f"exactly {TOTAL} param" in out and f"exactly {ACTIVE} param" in out
    assert "kv_bytes_per_token = 23.04 kB/token" in out


def test_planted_unknown_layer_kind_is_refused_on_the_command_line(tmp_path: Path, capsys) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_v25(hybrid_layer_pattern=PATTERN[:-1] + [2])))
    assert main(["eval", "params_total", "params_active", "kv_bytes_per_token", "--model", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "hybrid_layer_pattern[47]" in captured.err and "unknown layer kind 2" in captured.err


@pytest.mark.parametrize("changes, what", [
    ({"hybrid_layer_pattern": PATTERN[:-1]}, "lists 47 layers but num_hidden_layers is 48"),
    ({"hybrid_layer_pattern": [True] + PATTERN[1:]}, "unknown layer kind True"),
    ({"hybrid_layer_pattern": None}, "missing field 'hybrid_layer_pattern'"),
    ({"hybrid_block_size": 6}, "hybrid_block_size"),
    ({"layer_types": ["full_attention"] * 48}, "'hybrid_layer_pattern' and 'layer_types' disagree"),
    ({"moe_layer_freq": 1}, "moe_layer_freq"),
    ({"moe_layer_freq": FREQ[:-1]}, "lists 47 layers"),
    ({"moe_layer_freq": [0] + [2] * 47}, "unknown layer kind 2"),
    ({"n_shared_experts": 1}, "no shared expert"),
    ({"attention_chunk_size": 64}, "chunked attention is not read"),
    ({"sliding_window_size": 256}, "'sliding_window' (128) and 'sliding_window_size' (256) disagree"),
    ({"swa_num_key_value_heads": None}, "missing field 'swa_num_key_value_heads'"),
    ({"v_head_dim": None}, "missing field 'v_head_dim'"),
    ({"num_key_value_heads": 5}, "not a multiple"),
    ({"num_experts_per_tok": 257}, "257 experts per token but only 256 experts"),
])
def test_a_field_that_cannot_be_placed_is_refused(changes: dict, what: str) -> None:
    with pytest.raises(ScenarioError) as err:
        model_values(_v25(**changes))
    assert what in str(err.value) and "\n" not in str(err.value)


def test_transformers_spelling_of_the_lists_reads_alike() -> None:
    # transformers' MiMo-V2-Flash config writes the lists as layer_types and mlp_layer_types
    spelled = {k: v for k, v in FLASH.items() if k not in ("hybrid_layer_pattern", "moe_layer_freq")}
    spelled |= {"layer_types": ["full_attention" if p == 0 else "sliding_attention" for p in PATTERN],
                "mlp_layer_types": ["dense" if m == 0 else "sparse" for m in FREQ]}
    spelled_values, listed_values = model_values(spelled), model_values(FLASH)
    assert {k: v.value for k, v in spelled_values.items()} == {k: v.value for k, v in listed_values.items()}


def test_a_dense_mimo_has_one_expert() -> None:
    values = model_values(FLASH | {"moe_layer_freq": [0] * 48})
    assert values["experts_total"].value == values["experts_active"].value == 1
    assert values["params_total"].value == 2 * VOCAB * D + 9 * FULL_ATT + 39 * SWA_ATT + 48 * 3 * D * 16_384


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=12))
def test_counts_are_the_layer_by_layer_sums(layers: list[tuple[int, int]]) -> None:
    n = len(layers)
    config = FLASH | {"num_hidden_layers": n, "hybrid_layer_pattern": [a for a, _ in layers],
                      "moe_layer_freq": [m for _, m in layers]}
    pb, kv = param_breakdown(config), kv_layout(config)
    att = sum(SWA_ATT if a else FULL_ATT for a, _ in layers)
    mlp = sum(256 * EXPERT + D * 256 if m else 3 * D * 16_384 for _, m in layers)
    assert pb.total == 2 * VOCAB * D + att + mlp
    assert kv.full_elements == sum(1 - a for a, _ in layers) * 4 * 320
    assert kv.window_elements == sum(a for a, _ in layers) * 8 * 320


def test_the_live_page_gives_its_one_line() -> None:
    # the page's formulas cover the plain decoder families only: MiMo goes to the command line
    readings = validate(LIVE_CONFIG_FORMULAS, where="test")
    for config in (_v25(), FLASH):
        with pytest.raises(ScenarioError) as err:
            read_config(readings, config)
        line = refusal(readings, err.value.message)
        assert config["model_type"] in line and line.endswith("`derive card --model config.json`")
        assert "\n" not in line
