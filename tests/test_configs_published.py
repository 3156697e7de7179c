"""Popular models of the supported families against their published parameter counts: the reader's totals, active
counts and KV bytes per token, worked by hand.

Two publisher files are fixtures (``phi-2.json``, a family added here, and ``starcoder2-15b.json``, whose untied head
differs from StarCoder2's tied default); the others are built in the test from the sizes of the publisher's
config.json (no verbatim copy kept).  Where the publisher's count is exact (the checkpoint's tensor count on its
Hugging Face page), the reader's count plus the norms and biases it leaves out, counted by hand, equals it; else the
count rounds to the published figure.  Each count is also the one transformers 5.24 builds on PyTorch's meta device
(the meta tests skip without torch).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from derive.errors import ScenarioError
from theorems.configs import cross_check, model_values, param_breakdown

CONFIGS = Path(__file__).parent / "fixtures" / "configs"


def _load(name: str) -> dict:
    return json.loads((CONFIGS / name).read_text())


def _cfg(mtype: str, arch: str, d: int, n: int, heads: int, kv: int, width: int, vocab: int, **extra) -> dict:
    return {"model_type": mtype, "architectures": [arch], "hidden_size": d, "num_hidden_layers": n,
            "num_attention_heads": heads, "num_key_value_heads": kv, "intermediate_size": width,
            "vocab_size": vocab, "torch_dtype": "bfloat16", **extra}


def _gqa_kv(layers: int, kv: int, head_dim: int, e: int = 2) -> int:
    """KV bytes per token: keys and values of ``kv`` heads of ``head_dim`` in ``layers`` layers."""
    return layers * 2 * kv * head_dim * e


_QWEN_WINDOW = {"use_sliding_window": False}
# Qwen/Qwen2.5-VL-7B-Instruct in transformers 4's layout: the language model's fields at the top level
QWEN25_VL_7B = _cfg("qwen2_5_vl", "Qwen2_5_VLForConditionalGeneration", 3584, 28, 28, 4, 18944, 152064,
                    max_position_embeddings=128000, sliding_window=32768, max_window_layers=28,
                    rope_scaling={"type": "mrope", "mrope_section": [16, 24, 24]}, image_token_id=151655,
                    vision_config={"depth": 32, "hidden_act": "silu", "hidden_size": 1280, "intermediate_size": 3420,
                                   "num_heads": 16, "in_chans": 3, "out_hidden_size": 3584, "patch_size": 14,
                                   "spatial_merge_size": 2, "spatial_patch_size": 14, "window_size": 112,
                                   "fullatt_block_indexes": [7, 15, 23, 31], "tokens_per_second": 2,
                                   "temporal_patch_size": 2}, **_QWEN_WINDOW)


def _qwen25_vl_vision() -> int:
    """Qwen2.5-VL-7B's vision tower (not counted by the reader), every tensor: a 3D patch convolution (3 channels, 2
    frames, 14 x 14), 32 blocks (two RMSNorms, qkv and proj with biases, a gated MLP of 3420 with biases) and the
    merger (an RMSNorm, 4 patches of 1280 -> 5120 -> 3584 with biases)."""
    d, width = 1280, 3420
    block = 2 * d + (d * 3 * d + 3 * d) + (d * d + d) + (3 * d * width + 2 * width + d)
    merger = d + (4 * d * 4 * d + 4 * d) + (4 * d * 3584 + 3584)
    return 1280 * 3 * 2 * 14 * 14 + 32 * block + merger
MODELS = {
    # model: (config, reader's total, norms and biases not counted (None: no exact published count),
    #         published total, its rounding, published active with the embedding (or None), KV full, KV window)
    # 2,614,341,888 (its Hugging Face page); float32 weights (a 16-bit cache, as served); alternate layers local
    "google/gemma-2-2b": (
        _cfg("gemma2", "Gemma2ForCausalLM", 2304, 26, 8, 4, 9216, 256000, head_dim=256, sliding_window=4096,
             torch_dtype="float32", hidden_activation="gelu_pytorch_tanh"),
        2_614_099_968, 26 * 4 * 2304 + 2304, 2_614_341_888, 0, None, _gqa_kv(13, 4, 256), _gqa_kv(13, 4, 256)),
    "google/gemma-3-1b-it": (  # 999,885,952; five local layers (512 tokens) to one global: 4 of 26 global
        _cfg("gemma3_text", "Gemma3ForCausalLM", 1152, 26, 4, 1, 6912, 262144, head_dim=256, sliding_window=512,
             sliding_window_pattern=6, max_position_embeddings=32768),
        999_751_680, 26 * (4 * 1152 + 2 * 256) + 1152, 999_885_952, 0, None, _gqa_kv(4, 1, 256),
        _gqa_kv(22, 1, 256)),
    "meta-llama/Llama-3.2-1B": (  # 1,235,814,400; tied
        _cfg("llama", "LlamaForCausalLM", 2048, 16, 32, 8, 8192, 128256, head_dim=64, tie_word_embeddings=True,
             rope_scaling={"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                           "original_max_position_embeddings": 8192, "rope_type": "llama3"}),
        1_235_746_816, 16 * 2 * 2048 + 2048, 1_235_814_400, 0, None, _gqa_kv(16, 8, 64), 0),
    "Qwen/Qwen2.5-0.5B": (  # 494,032,768; tied; q, k and v biases; the window is not used (use_sliding_window)
        _cfg("qwen2", "Qwen2ForCausalLM", 896, 24, 14, 2, 4864, 151936, tie_word_embeddings=True,
             sliding_window=32768, max_window_layers=24, **_QWEN_WINDOW),
        493_961_216, 24 * (2 * 896 + 896 + 2 * 128) + 896, 494_032_768, 0, None, _gqa_kv(24, 2, 64), 0),
    "Qwen/Qwen2.5-72B-Instruct": (  # 72.7B
        _cfg("qwen2", "Qwen2ForCausalLM", 8192, 80, 64, 8, 29568, 152064, sliding_window=131072,
             max_window_layers=70, **_QWEN_WINDOW),
        72_704_065_536, None, 72.7e9, 0.0005, None, _gqa_kv(80, 8, 128), 0),
    "Qwen/Qwen3-235B-A22B": (  # "235B in total and 22B activated"
        _cfg("qwen3_moe", "Qwen3MoeForCausalLM", 4096, 94, 64, 4, 12288, 151936, head_dim=128, num_experts=128,
             num_experts_per_tok=8, moe_intermediate_size=1536, max_window_layers=94, **_QWEN_WINDOW),
        235_092_836_352, None, 235e9, 0.001, 22e9, _gqa_kv(94, 4, 128), 0),
    "Qwen/Qwen1.5-MoE-A2.7B": (  # "14.3B parameters in total and 2.7B activated"; a shared expert of 5632
        _cfg("qwen2_moe", "Qwen2MoeForCausalLM", 2048, 24, 16, 16, 5632, 151936, num_experts=60,
             num_experts_per_tok=4, moe_intermediate_size=1408, shared_expert_intermediate_size=5632,
             **_QWEN_WINDOW),
        14_315_536_384, None, 14.3e9, 0.002, 2.7e9, _gqa_kv(24, 16, 128), 0),
    "mistralai/Mixtral-8x22B-v0.1": (  # "141B parameters", "39B active"
        _cfg("mixtral", "MixtralForCausalLM", 6144, 56, 48, 8, 16384, 32000, num_local_experts=8,
             num_experts_per_tok=2, sliding_window=None),
        140_619_939_840, None, 141e9, 0.003, 39e9, _gqa_kv(56, 8, 128), 0),
    "mistralai/Mistral-Nemo-Base-2407": (  # 12.2B; head_dim 128 given (hidden 5120 / 32 heads would be 160)
        _cfg("mistral", "MistralForCausalLM", 5120, 40, 32, 8, 14336, 131072, head_dim=128, sliding_window=None),
        12_247_367_680, None, 12.2e9, 0.004, None, _gqa_kv(40, 8, 128), 0),
    "deepseek-ai/DeepSeek-V2": (  # "236B total parameters, of which 21B are activated"; latent attention
        {"model_type": "deepseek_v2", "architectures": ["DeepseekV2ForCausalLM"], "hidden_size": 5120,
         "num_hidden_layers": 60, "num_attention_heads": 128, "num_key_value_heads": 128, "intermediate_size": 12288,
         "vocab_size": 102400, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_nope_head_dim": 128,
         "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 160, "n_shared_experts": 2,
         "num_experts_per_tok": 6, "moe_intermediate_size": 1536, "first_k_dense_replace": 1, "moe_layer_freq": 1,
         "topk_method": "group_limited_greedy", "n_group": 8, "topk_group": 3, "tie_word_embeddings": False,
         "torch_dtype": "bfloat16"},
        235_740_692_480, None, 236e9, 0.002, 21e9, 60 * (512 + 64) * 2, 0),
    "Qwen/Qwen2.5-VL-7B-Instruct": (  # 8,292,166,656 with the vision tower; Qwen2's language model at the top level
        QWEN25_VL_7B, 7_615_283_200, 28 * (3584 + 2 * 512 + 2 * 3584) + 3584 + _qwen25_vl_vision(),
        8_292_166_656, 0, None, _gqa_kv(28, 4, 128), 0),
    "microsoft/Phi-3-mini-4k-instruct": (  # "3.8B parameters"; sliding_window 2047 on every layer below 4,096
        _cfg("phi3", "Phi3ForCausalLM", 3072, 32, 32, 32, 8192, 32064, sliding_window=2047,
             max_position_embeddings=4096),
        3_820_879_872, None, 3.8e9, 0.006, None, 0, _gqa_kv(32, 32, 96)),
    "microsoft/Phi-3-medium-4k-instruct": (  # "14B parameters"
        _cfg("phi3", "Phi3ForCausalLM", 5120, 40, 40, 10, 17920, 32064, sliding_window=2047,
             max_position_embeddings=4096),
        13_959_823_360, None, 14e9, 0.003, None, 0, _gqa_kv(40, 10, 128)),
    "microsoft/phi-2": (  # 2,779,683,840 ("2.78B"): biases on every projection and the head, LayerNorms
        _load("phi-2.json"),
        2_778_726_400, 32 * (2 * 2560 + 4 * 2560 + 10240 + 2560) + 2 * 2560 + 51200, 2_779_683_840, 0, None,
        _gqa_kv(32, 32, 80), 0),
    # "16B" on its Hugging Face page: untied, float32 weights (served in 16 bits, so a 2-byte cache), a 4,096 window
    "bigcode/starcoder2-15b": (
        _load("starcoder2-15b.json"),
        15_955_132_416, None, 16e9, 0.004, None, 0, _gqa_kv(40, 4, 128)),
}


@pytest.mark.parametrize("model", sorted(MODELS))
def test_totals_active_and_kv_against_the_published_counts(model: str) -> None:
    config, total, not_counted, published, rounding, active, kv_full, kv_window = MODELS[model]
    v, pb = model_values(config), param_breakdown(config)
    assert v["params_total"].value == total
    if not_counted is not None:  # an exact published count: every tensor, norms and biases included
        assert total + not_counted == published
    else:
        assert abs(total - published) <= rounding * published, (model, total)
    if active is not None:  # the publishers' active counts include the input embedding
        assert abs(pb.active_with_embedding - active) <= 0.03 * active, (model, pb.active_with_embedding)
    assert v["kv_bytes_per_token"].value == kv_full
    assert v["kv_window_bytes_per_token"].value == kv_window


# transformers builds no causal language model for a qwen2_5_vl file (only the whole vision-language model): its
# count is checked against the published total with the vision tower counted by hand instead
@pytest.mark.parametrize("model", sorted(m for m in MODELS if m != "Qwen/Qwen2.5-VL-7B-Instruct"))
def test_published_models_count_as_the_meta_device_builds_them(model: str) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    config, total, _, _, _, _, _, _ = MODELS[model]
    check = cross_check(config, where=model)
    assert check.counts["params_total"] == (total, total), check.versions


def test_phi_2_worked_example() -> None:
    v = model_values(_load("phi-2.json"))
    d, n, width, vocab = 2560, 32, 10240, 51200
    # q, k, v and dense (32 heads of 80, one KV head each), fc1 and fc2 (no gate), untied head
    total = 2 * vocab * d + n * (4 * d * d + 2 * d * width)
    assert v["params_total"].value == total == 2_778_726_400
    assert v["params_active"].value == total - vocab * d
    assert v["kv_bytes_per_token"].value == n * 2 * 32 * 80 * 2 == 327_680  # float16, every layer full
    assert v["bytes_per_param"].value == 2 and v["context"].value == 2048


def test_starcoder2_15b_reads_its_untied_head() -> None:
    # the file says tie_word_embeddings false; Starcoder2Config's default (true) would drop the head's 302M
    config = _load("starcoder2-15b.json")
    d, vocab = 6144, 49152
    untied = model_values(config)["params_total"].value
    tied = model_values({k: v for k, v in config.items() if k != "tie_word_embeddings"})["params_total"].value
    assert untied - tied == vocab * d
    # float32 as published, served in 16 bits as every serving engine runs it: a floor never counts 4-byte weights
    assert model_values(config)["bytes_per_param"].value == 2
    assert any("torch_dtype float32: weights and KV cache counted at 2 bytes" in n for n in model_values(config).notes)


@pytest.mark.parametrize("change, words", [
    ({"layer_types": ["full_attention"] * 31 + ["mamba"]}, "unknown layer kind 'mamba'"),
    ({"layer_types": ["full_attention"] * 31 + ["linear_attention"]}, "linear-attention layer"),
    ({"num_attention_heads": 30}, "not a multiple"),
])
def test_a_planted_phi_file_with_a_layer_it_does_not_know_is_refused(change: dict, words: str) -> None:
    config = _load("phi-2.json")
    planted = config | change
    if "num_attention_heads" in change:
        planted["num_key_value_heads"] = 4  # 30 query heads cannot share 4 KV heads evenly
    with pytest.raises(ScenarioError, match=words) as err:
        model_values(planted)
    assert "\n" not in str(err.value)


def test_qwen25_vl_in_either_layout_reads_qwen2s_language_model() -> None:
    # transformers 4 files keep the language model at the top level; transformers 5 re-saves it in text_config
    top = model_values(QWEN25_VL_7B)
    assert any("top level of a qwen2_5_vl config" in n for n in top.notes)
    text = {k: v for k, v in QWEN25_VL_7B.items() if k not in ("hidden_size", "num_hidden_layers", "intermediate_size",
                                                                 "num_attention_heads", "num_key_value_heads",
                                                                 "vocab_size", "sliding_window", "max_window_layers",
                                                                 "use_sliding_window", "max_position_embeddings")}
    text["text_config"] = {k: QWEN25_VL_7B[k] for k in QWEN25_VL_7B if k not in text} | {
        "model_type": "qwen2_5_vl_text"}
    nested = model_values(text)
    assert nested["params_total"].value == top["params_total"].value
    assert nested["kv_bytes_per_token"].value == top["kv_bytes_per_token"].value
    planted = QWEN25_VL_7B | {"layer_types": ["full_attention"] * 27 + ["mamba"]}
    with pytest.raises(ScenarioError, match="unknown layer kind 'mamba'"):
        model_values(planted)


@pytest.mark.parametrize("name", ["falcon-7b.json", "falcon-40b.json"])
def test_a_falcon_file_without_a_context_takes_falcon_configs_default(name: str) -> None:
    # tiiuae's files name no max_position_embeddings; FalconConfig's 2,048 (the context both were trained at) is what
    # transformers builds, said in a note; max_context had been refused as absent
    v = model_values(_load(name))
    assert v["max_context"].value == 2048 and v["context"].value == 2048
    assert any("'max_position_embeddings' absent" in n for n in v.notes)
    assert model_values(_load(name) | {"max_position_embeddings": 8192})["max_context"].value == 8192
