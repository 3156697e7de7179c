"""MiniMax-M2 (``minimax_m2``): 62 layers of grouped-query attention and 256 experts, read against the tensors of the
MiniMax-M2.7 checkpoint and the meta-device count.

No verbatim publisher file was found: the config below is MiniMax-M2.7's as transformers 5.7 re-serialized it in a
public report (gogongxt/python ``scripts/models/minimax_m2.7.md`` @ cbff706dc959707a9944e38e8164783122dfa32a,
"完整配置"), the sizes every field the reader uses; the same report lists every tensor of the checkpoint's 125
safetensors files and their total, 228,703,644,928 ("参数总量").
"""

from __future__ import annotations

from pathlib import Path

import pytest
from libtools import refused_by_reader_and_cli

from theorems.configs import cross_check, model_values

MINIMAX_M27 = {
    "architectures": ["MiniMaxM2ForCausalLM"], "attn_type_list": [1] * 62, "dtype": "bfloat16", "head_dim": 128,
    "hidden_act": "silu", "hidden_size": 3072, "intermediate_size": 1536, "max_position_embeddings": 204800,
    "model_type": "minimax_m2", "mtp_transformer_layers": 1, "num_attention_heads": 48, "num_experts_per_tok": 8,
    "num_hidden_layers": 62, "num_key_value_heads": 8, "num_local_experts": 256, "num_mtp_modules": 3,
    "qk_norm_type": "per_layer",
    "quantization_config": {"activation_scheme": "dynamic", "fmt": "float8_e4m3fn",
                            "modules_to_not_convert": ["gate", "e_score_correction_bias", "lm_head"],
                            "quant_method": "fp8", "weight_block_size": [128, 128]},
    "rotary_dim": 64, "scoring_func": "sigmoid", "shared_intermediate_size": 0, "tie_word_embeddings": False,
    "use_mtp": True, "use_qk_norm": True, "use_routing_bias": True, "vocab_size": 200064,
}
CHECKPOINT_TENSORS = 228_703_644_928


def test_minimax_m27_counts_the_checkpoints_tensors() -> None:
    d, n, experts, width, vocab = 3072, 62, 256, 1536, 200064
    attention = n * (2 * d * 48 * 128 + 2 * d * 8 * 128)  # q and o, k and v
    routed = n * experts * 3 * d * width
    total = 2 * vocab * d + attention + routed + n * d * experts  # + routers
    v = model_values(MINIMAX_M27)
    assert v["params_total"].value == total == 228_688_920_576  # transformers 5.24 on the meta device: the same
    # the checkpoint's other tensors: FP8 block scales of every quantized matrix (experts [12, 24] each, q and o
    # [48, 24], k and v [8, 24]), RMSNorm gains (two per layer, q and k norms, the final one), routing biases
    scales = n * (experts * 3 * 12 * 24 + 2 * 48 * 24 + 2 * 8 * 24)
    norms = n * (2 * d + 48 * 128 + 8 * 128) + d
    biases = n * experts
    assert total + scales + norms + biases == CHECKPOINT_TENSORS
    # 8 of 256 experts per token: MiniMax's "230B total, 10B activated"
    active = v["params_active"].value
    assert active == total - routed + n * 8 * 3 * d * width - vocab * d
    assert round(active / 1e9) == 10
    assert v["kv_bytes_per_token"].value == n * 2 * 8 * 128 * 2  # every layer full attention, bf16 cache
    assert v["experts_total"].value == 256 and v["experts_active"].value == 8 and v["moe_layers"].value == 62
    assert any("3 multi-token-prediction module(s) not counted" in note for note in v.notes)


def test_minimax_m27_counts_as_the_meta_device_builds_it() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    check = cross_check(MINIMAX_M27, where="minimax_m2.7")
    assert check.differences == {}, check.versions
    assert check.counts["params_total"] == (228_688_920_576, 228_688_920_576)


def test_attn_type_list_may_be_absent() -> None:
    config = {k: v for k, v in MINIMAX_M27.items() if k != "attn_type_list"}
    assert model_values(config)["params_total"].value == model_values(MINIMAX_M27)["params_total"].value


@pytest.mark.parametrize("change, words", [
    ({"attn_type_list": [1] * 61 + [0]}, "linear-attention layer"),  # MiniMax-Text-01's lightning attention
    ({"attn_type_list": [1] * 61 + [2]}, "unknown layer kind 2"),
    ({"attn_type_list": [1] * 60}, "lists 60 layers but num_hidden_layers is 62"),
    ({"shared_intermediate_size": 1536}, "shared_intermediate_size"),
    ({"layer_types": ["full_attention"] * 61 + ["mamba"]}, "unknown layer kind 'mamba'"),
])
def test_a_layer_the_minimax_m2_layout_does_not_have_is_refused(change: dict, words: str, capsys,
                                                                 tmp_path: Path) -> None:
    config = MINIMAX_M27 | change
    refused_by_reader_and_cli(capsys, tmp_path, config, words)
