"""Bytes per weight of quantized checkpoints (``quantization_config``), scales included where they come per group;
a scheme whose bytes the reader cannot determine is refused with one line naming the field, never read as the
model's unquantized datatype (a ModelOpt NVFP4, HQQ or mixed compressed-tensors file had printed 2 bytes per
weight, as if unquantized, with only a note)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from libtools import one_error_line, run_cli

from derive.errors import ScenarioError
from theorems.configs import model_values, param_breakdown
from theorems.configs.reader import checkpoint_bytes_per_param

CONFIGS = Path(__file__).parent / "fixtures" / "configs"
LLAMA_31_8B = json.loads((CONFIGS / "llama-3.1-8b.json").read_text())

# moonshotai/Kimi-K2.5 as gogongxt/python prints it (scripts/models/kimi_k2.5.md @
# d2644104bc43890ee0cd101aac98cf27a9d81e14, transformers 5.7's KimiK25Config: the language model in text_config, a
# compressed-tensors int4 quantization_config at both levels): the sizes and the quantization written out
_K25_QUANT = {
    "config_groups": {"group_0": {"input_activations": None, "output_activations": None, "targets": ["Linear"],
                                  "weights": {"actorder": None, "block_structure": None, "dynamic": False,
                                              "group_size": 32, "num_bits": 4, "observer": "minmax",
                                              "observer_kwargs": {}, "strategy": "group", "symmetric": True,
                                              "type": "int"}}},
    "format": "pack-quantized",
    "ignore": ["lm_head", "re:.*self_attn.*", "re:.*shared_experts.*", "re:.*mlp\\.(gate|up|gate_up|down)_proj.*"],
    "kv_cache_scheme": None, "quant_method": "compressed-tensors", "quantization_status": "compressed"}
KIMI_K25 = {
    "architectures": ["KimiK25ForConditionalGeneration"], "dtype": "bfloat16", "model_type": "kimi_k25",
    "quantization_config": _K25_QUANT, "tie_word_embeddings": False,
    "text_config": {"architectures": ["DeepseekV3ForCausalLM"], "dtype": "bfloat16", "first_k_dense_replace": 1,
                    "hidden_size": 7168, "intermediate_size": 18432, "kv_lora_rank": 512,
                    "max_position_embeddings": 262144, "model_type": "deepseek_v3", "moe_intermediate_size": 2048,
                    "moe_layer_freq": 1, "n_group": 1, "n_routed_experts": 384, "n_shared_experts": 1,
                    "num_attention_heads": 64, "num_experts_per_tok": 8, "num_hidden_layers": 61,
                    "num_key_value_heads": 64, "num_nextn_predict_layers": 0, "q_lora_rank": 1536,
                    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "quantization_config": _K25_QUANT,
                    "tie_word_embeddings": False, "topk_group": 1, "v_head_dim": 128, "vocab_size": 163840}}


def _kimi_k25_tensors_not_counted() -> int:
    """Bytes of the report's tensors the reader does not count: the vision tower and projector (bf16), the language
    model's norms (bf16), the routing biases (fp32) and each packed expert matrix's int32 shape pair."""
    blocks = 27 * (2 * 4304 * 1152 + 1152 * 1152 + 3456 * 1152 + 4304 + 1152 + 1152 + 3456 + 4 * 1152)
    vision = blocks + 2 * 1152 + 64 * 64 * 1152 + 1152 * 3 * 14 * 14 + 1152
    projector = 2 * 1152 + 4608 * 4608 + 4608 + 7168 * 4608 + 7168
    norms = 61 * (2 * 7168 + 512 + 1536) + 7168
    return 2 * (vision + projector + norms) + 4 * 60 * 384 + 4 * 2 * 3 * 60 * 384


def test_group_scales_reproduce_the_kimi_k25_checkpoint() -> None:
    # the report's "张量累计大小" (the tensors' bytes) is 554.27 GB (GiB: its 2.19 GB embedding is 163840 * 7168 * 2
    # bytes); the int4 experts carry a bf16 scale per 32 weights, 59 GiB of it, which "scales not counted" had left
    # out (493.8 GiB); the first layer's dense MLP is in the ignore list as a pattern and stays bf16
    pb, values = param_breakdown(KIMI_K25), model_values(KIMI_K25)
    experts = 60 * 384 * 3 * 7168 * 2048
    assert pb.routed_experts == experts
    by_hand = experts * (Fraction(1, 2) + Fraction(2, 32)) + (pb.total - experts) * 2
    assert checkpoint_bytes_per_param(KIMI_K25) * pb.total == by_hand
    assert values["bytes_per_param"].value * pb.total < by_hand  # the mean over what a step reads: no embedding
    size = (by_hand + _kimi_k25_tensors_not_counted()) / 2**30
    assert float(size) == pytest.approx(554.27, abs=0.005)


@pytest.mark.parametrize(("quant", "per_weight"), [
    # NVIDIA ModelOpt NVFP4: 4-bit floats with an FP8 scale per 16 (per-tensor FP32 scales not counted)
    ({"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16, "ignore": ["lm_head"]},
     Fraction(1, 2) + Fraction(1, 16)),
    ({"quant_method": "modelopt", "quant_algo": "FP8", "ignore": ["lm_head"]}, Fraction(1)),
    # the same NVFP4 as llm-compressor writes it (compressed-tensors, nvfp4-pack-quantized)
    ({"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", "config_groups": {"group_0": {
        "targets": ["Linear"], "weights": {"num_bits": 4, "type": "float", "strategy": "tensor_group",
                                           "group_size": 16, "symmetric": True}}}, "ignore": ["lm_head"]},
     Fraction(1, 2) + Fraction(1, 16)),
    # int4 per 128 with a bf16 scale, and asymmetric with a 4-bit zero point besides
    ({"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {"group_0": {
        "targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128,
                                           "symmetric": True}}}, "ignore": ["lm_head"]},
     Fraction(1, 2) + Fraction(2, 128)),
    ({"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {"group_0": {
        "targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128,
                                           "symmetric": False}}}, "ignore": ["lm_head"]},
     Fraction(1, 2) + (2 + Fraction(1, 2)) / 128),
    # bitsandbytes 4-bit: blocks of 64 with an FP32 absmax, or (double quantization) a byte and an FP32 per 256 blocks
    ({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"},
     Fraction(1, 2) + Fraction(4, 64)),
    ({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4",
      "bnb_4bit_use_double_quant": True}, Fraction(1, 2) + Fraction(1, 64) + Fraction(4, 64 * 256)),
], ids=["modelopt-nvfp4", "modelopt-fp8", "ct-nvfp4", "ct-int4-sym", "ct-int4-asym", "bnb-nf4", "bnb-nf4-dq"])
def test_bytes_per_weight_with_group_scales(quant: dict, per_weight: Fraction) -> None:
    config = LLAMA_31_8B | {"quantization_config": quant}
    pb, values = param_breakdown(config), model_values(config)
    kept = pb.embedding + pb.lm_head  # both stay bf16 (embeddings are never quantized here, lm_head is ignored)
    assert checkpoint_bytes_per_param(config) * pb.total == (pb.total - kept) * per_weight + 2 * kept
    # a decode step reads the output head and the layers, never the input table whole: the floors' mean is theirs
    assert values["bytes_per_param"].value * pb.active == (pb.active - pb.lm_head) * per_weight + 2 * pb.lm_head


def test_kv_only_compressed_tensors_keeps_the_weights() -> None:
    # a file that quantizes only the KV cache (no config_groups) keeps bf16 weights and reads the cache's bits
    config = LLAMA_31_8B | {"quantization_config": {"quant_method": "compressed-tensors",
                                                     "kv_cache_scheme": {"num_bits": 8, "type": "float"}}}
    values = model_values(config)
    assert values["bytes_per_param"].value == 2 and values["bytes_per_kv_element"].value == 1


@pytest.mark.parametrize(("quant", "words"), [
    ({"quant_method": "hqq", "nbits": 4}, "quant_method 'hqq' is not read"),
    ({"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", "quantized_layers": {}},
     "ModelOpt quant_algo 'MIXED_PRECISION' is not read"),
    ({"quant_method": "modelopt", "quant_algo": "W4A8_AWQ"}, "ModelOpt quant_algo 'W4A8_AWQ' is not read"),
    ({"quant_method": "bitsandbytes"}, "neither load_in_4bit nor load_in_8bit"),
    ({"quant_method": "compressed-tensors", "config_groups": {
        "a": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "float", "strategy": "tensor_group",
                                                 "group_size": 16}},
        "b": {"targets": ["re:.*self_attn.*"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}},
     "2 different ways"),
    ({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 4, "strategy": "group",
                                                                                 "group_size": 0}}}},
     "'group_size' of at least 1"),
], ids=["hqq", "modelopt-mixed", "modelopt-w4a8", "bnb-no-bits", "ct-two-schemes", "ct-group-0"])
def test_unread_quantization_is_refused_not_read_as_unquantized(tmp_path, capsys, quant: dict, words: str) -> None:
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_31_8B | {"quantization_config": quant}))
    code, out, err = run_cli(capsys, ["eval", "bytes_per_param", "--model", str(tmp_path / "config.json")])
    one_error_line(code, err)
    assert words in err and "quantization_config" in err and "config.json" in err, err
    assert out == ""


@pytest.mark.parametrize("inner", ["deepseek_v3", "kimi_k2"])
def test_kimi_k25_reads_its_text_config_as_kimi_k2(inner: str) -> None:
    # a kimi_k25 file wraps Kimi K2's language model (text_config model_type deepseek_v3, or kimi_k2 in NVIDIA's
    # copy): read as that type, not guessed from the fields ("unknown architecture ... read as deepseek_v3")
    config = KIMI_K25 | {"text_config": KIMI_K25["text_config"] | {"model_type": inner}}
    values = model_values(config)
    assert not any("unknown architecture" in n for n in values.notes)
    assert any("text_config" in n and "kimi_k25" in n for n in values.notes)
    pb = param_breakdown(config)
    assert pb.experts_total == 384 and pb.experts_active == 8 and pb.moe_layers == 60
    planted = KIMI_K25 | {"text_config": KIMI_K25["text_config"] | {"model_type": "my_lm"}}
    with pytest.raises(ScenarioError, match="kimi_k25 config whose text_config has model_type 'my_lm'"):
        model_values(planted)


def test_bitsandbytes_skip_modules_stay_unquantized() -> None:
    # bitsandbytes names the modules it leaves alone in llm_int8_skip_modules (whatever the bit width)
    quant = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4",
             "llm_int8_skip_modules": ["lm_head", "self_attn"]}
    config = LLAMA_31_8B | {"quantization_config": quant}
    pb, values = param_breakdown(config), model_values(config)
    kept = pb.embedding + pb.lm_head + pb.attention
    per_weight = Fraction(1, 2) + Fraction(4, 64)
    assert checkpoint_bytes_per_param(config) * pb.total == (pb.total - kept) * per_weight + 2 * kept
    read = pb.lm_head + pb.attention
    assert values["bytes_per_param"].value * pb.active == (pb.active - read) * per_weight + 2 * read
