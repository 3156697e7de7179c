"""Falcon-H1 (``falcon_h1``): attention and Mamba-2 side by side in every layer, so every layer keeps a KV cache
and a fixed Mamba-2 state; parameters, KV bytes and state bytes written out by hand.

No public copy of a Falcon-H1 ``config.json`` was found whole (``tests/fixtures/configs/SOURCES.md``), so the
configs below are written out field by field from the public copies named there: Falcon-H1-0.5B's fields as a
Megatron-Bridge test quotes them, with ``mamba_d_ssm`` = 24 heads x 64 (transformers' Falcon-H1 table: 36 layers,
width 1024, 8 attention and 2 KV heads, 24 Mamba heads, head sizes 64 / 64, state 128); Falcon-H1-7B's as a
public test quotes them.  Published sizes are the family's names (0.5B, 7B); no safetensors total was found.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from derive.cli import main
from derive.errors import ScenarioError
from theorems.configs import kv_layout, model_values, param_breakdown

H1_05B = {
    "architectures": ["FalconH1ForCausalLM"], "model_type": "falcon_h1", "attention_bias": False,
    "attn_layer_indices": None, "head_dim": 64, "hidden_act": "silu", "hidden_size": 1024, "intermediate_size": 2048,
    "key_multiplier": 0.39062499999999994, "mamba_chunk_size": 128, "mamba_conv_bias": True, "mamba_d_conv": 4,
    "mamba_d_head": 64, "mamba_d_ssm": 1536, "mamba_d_state": 128, "mamba_expand": 2, "mamba_n_groups": 1,
    "mamba_n_heads": 24, "mamba_norm_before_gate": False, "mamba_proj_bias": False, "mamba_rms_norm": False,
    "mamba_use_mlp": True, "max_position_embeddings": 16384, "mlp_bias": False,
    "mlp_multipliers": [0.8838834764831844, 0.5859375], "num_attention_heads": 8, "num_hidden_layers": 36,
    "num_key_value_heads": 2, "projectors_bias": False, "rms_norm_eps": 1e-5, "rope_theta": 100000000000.0,
    "ssm_multipliers": [0.3535533905932738, 0.25, 0.3535533905932738, 0.5, 0.3535533905932738],
    "tie_word_embeddings": False, "torch_dtype": "bfloat16", "vocab_size": 32784,
}
H1_7B = {
    "model_type": "falcon_h1", "hidden_size": 3072, "num_hidden_layers": 44, "num_attention_heads": 12,
    "num_key_value_heads": 2, "head_dim": 128, "intermediate_size": 12288, "vocab_size": 130048,
    "tie_word_embeddings": False, "mamba_d_state": 256, "mamba_n_groups": 1, "mamba_n_heads": 24, "mamba_d_head": 128,
    "mamba_d_ssm": 3072, "mamba_expand": 2, "mamba_d_conv": 4, "mamba_chunk_size": 128,
    "max_position_embeddings": 262144,
}


def _counts(d: int, layers: int, heads: int, kv: int, hd: int, ffn: int, vocab: int, m_heads: int, m_hd: int,
            state: int, groups: int = 1, kernel: int = 4) -> tuple[int, int, int]:
    """Parameters, KV elements per token and state elements per sequence, written out layer by layer."""
    inner = m_heads * m_hd
    conv = inner + 2 * groups * state
    attention = d * heads * hd + 2 * d * kv * hd + heads * hd * d
    mamba = d * (inner + conv + m_heads) + conv * kernel + inner * d  # in_proj (z, x, B, C, dt), conv1d, out_proj
    mlp = 3 * d * ffn
    total = 2 * vocab * d + layers * (attention + mamba + mlp)
    return total, layers * 2 * kv * hd, layers * (m_heads * m_hd * state + conv * (kernel - 1))


def test_every_layer_is_attention_and_mamba() -> None:
    kv, pb = kv_layout(H1_05B), param_breakdown(H1_05B)
    assert (kv.full_layers, kv.state_layers, pb.layers) == (36, 36, 36)
    assert not pb.is_moe and pb.dense_mlp == 36 * 3 * 1024 * 2048


@pytest.mark.parametrize("config, shape, named", [
    (H1_05B, (1024, 36, 8, 2, 64, 2048, 32784, 24, 64, 128), (0.5e9, 0.6e9)),
    (H1_7B, (3072, 44, 12, 2, 128, 12288, 130048, 24, 128, 256), (7e9, 8e9)),
])
def test_counts_by_hand(config: dict, shape: tuple, named: tuple[float, float]) -> None:
    total, kv_elements, state_elements = _counts(*shape)
    values = model_values(config)
    assert values["params_total"].value == total
    assert values["params_active"].value == total - shape[6] * shape[0]  # dense: all but the input embedding
    assert named[0] <= total < named[1]  # the size the model is named by, rounded down
    assert values["kv_bytes_per_token"].value == 2 * kv_elements
    assert values["kv_state_bytes"].value == 2 * state_elements
    assert values["kv_cache_layers"].value == shape[1]


def test_05b_worked_example() -> None:
    values = model_values(H1_05B)
    assert values["params_total"].value == 521_269_248
    assert values["kv_bytes_per_token"].value == 36 * 2 * 2 * 64 * 2 == 18_432
    # per layer: 24 heads x 64 x 128 SSM state and 1,792 channels (1536 + 2 x 128) x 3 convolution inputs, bf16
    assert values["kv_state_bytes"].value == 36 * (24 * 64 * 128 + 1792 * 3) * 2 == 14_542_848


def test_7b_kv_bytes_are_every_layer() -> None:
    # 44 layers, K and V, 2 KV heads of 128, bf16: 44 KiB a token (every layer attends)
    assert model_values(H1_7B)["kv_bytes_per_token"].value == 44 * 2 * 2 * 128 * 2 == 45_056


def test_kv_per_sequence_adds_the_state() -> None:
    kv = kv_layout(H1_05B)
    assert kv.bytes_per_sequence(8192, 2) == 18_432 * 8192 + 14_542_848
    assert kv.bytes_per_sequence(Fraction(1), 2) == 18_432 + 14_542_848


def test_mamba_width_defaults_as_transformers_does() -> None:
    # null: mamba_expand * hidden_size; auto head size: width / heads
    null = H1_05B | {"mamba_d_ssm": None, "mamba_d_head": "auto", "mamba_n_heads": 32}
    assert kv_layout(null).state_elements == 36 * (32 * 64 * 128 + (2048 + 256) * 3)
    values = model_values(null)
    assert any("'mamba_d_ssm' null" in n for n in values.notes)


@pytest.mark.parametrize("changes, what", [
    ({"mamba_d_ssm": 2048}, "mamba_n_heads \\(24\\) \\* mamba_d_head \\(64\\) is not the Mamba-2 width"),
    # absent: transformers' default width 1024, which 24 heads of 64 do not fill
    ({"mamba_d_ssm": "absent"}, "mamba_d_ssm \\(1024\\)"),
    ({"attn_layer_indices": [0, 4, 8]}, "attn_layer_indices"),
    ({"layer_types": ["hybrid"] * 35 + ["attention"]}, "must be 'hybrid' for every layer"),
    ({"mamba_n_groups": 5}, "mamba_n_heads \\(24\\) is not a multiple of mamba_n_groups \\(5\\)"),
])
def test_bad_layout_is_refused(changes: dict, what: str) -> None:
    config = dict(H1_05B)
    for key, value in changes.items():
        if value == "absent":
            del config[key]
        else:
            config[key] = value
    with pytest.raises(ScenarioError, match=what) as err:
        model_values(config)
    assert "\n" not in str(err.value)


def test_hybrid_layer_types_are_read() -> None:
    listed = H1_05B | {"layer_types": ["hybrid"] * 36}
    assert model_values(listed)["params_total"].value == model_values(H1_05B)["params_total"].value


def test_planted_unknown_layer_kind_is_refused_on_the_command_line(tmp_path: Path, capsys) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(H1_05B | {"layer_types": ["hybrid"] * 35 + ["retention"]}))
    assert main(["eval", "params_total", "--model", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "'retention'" in captured.err


@pytest.mark.parametrize("config", [H1_05B, H1_7B], ids=["0.5B", "7B"])
def test_under_an_unknown_type_the_layers_are_not_guessed(config: dict) -> None:
    # read as a dense Llama, every Mamba-2 mixer would vanish; the fields it could not place are named
    renamed = config | {"model_type": "my_model", "architectures": ["MyModelForCausalLM"]}
    with pytest.raises(ScenarioError, match="unknown architecture 'my_model'.*mamba_d_ssm") as err:
        model_values(renamed)
    assert "\n" not in str(err.value)
