"""Dense decoders with Llama's tensors under their own model_type (Phi-3/Phi-4, OLMo 2/3, GLM-4-0414, Granite 3,
Granite MoE, Seed-OSS, ERNIE 4.5, SmolLM3, Command R7B/A, Ministral 3, EXAONE 4), ERNIE 4.5's MoE, StarCoder2's
ungated MLP, and Mistral Small 3.x's ``mistral3`` wrapper read through its ``text_config``.

Worked examples: the publisher's Phi-4 and Phi-4-mini files (fixtures), and for the types no verbatim publisher file
was found for, a config built in the test from the sizes the model card gives: each count is the number transformers
5.24 builds on PyTorch's meta device (recorded here; the meta tests skip without torch) and agrees with the
published parameter count.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from libtools import refused_by_reader_and_cli, run_cli

from derive.errors import ScenarioError
from theorems.configs import SUPPORTED_MODEL_TYPES, cross_check, model_values

CONFIGS = Path(__file__).parent / "fixtures" / "configs"


def _load(name: str) -> dict:
    return json.loads((CONFIGS / name).read_text())


def _meta() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")


# --------------------------------------------------------------------------------------------------
# the publisher's files

def test_phi_4_worked_example() -> None:
    v = model_values(_load("phi-4.json"))
    d, n, heads, kv, hd, width, vocab = 5120, 40, 40, 10, 128, 17920, 100352
    attention = n * (d * heads * hd + 2 * d * kv * hd + heads * hd * d)
    total = 2 * vocab * d + attention + n * 3 * d * width  # untied: embedding and head
    assert v["params_total"].value == total == 14_659_092_480  # transformers 5.24 on the meta device: the same
    assert 14e9 <= total < 15e9  # model card: "14B parameters", dense decoder-only
    assert v["params_active"].value == total - vocab * d
    assert v["kv_bytes_per_token"].value == n * 2 * kv * hd * 2 == 204_800  # bf16, every layer full
    assert v["kv_window_bytes_per_token"].value == 0 and v["context"].value == 16384


def test_phi_4_mini_worked_example() -> None:
    v = model_values(_load("phi-4-mini-instruct.json"))
    d, n, heads, kv, hd, width, vocab = 3072, 32, 24, 8, 128, 8192, 200064
    total = vocab * d + n * (d * heads * hd + 2 * d * kv * hd + heads * hd * d + 3 * d * width)  # tied
    assert v["params_total"].value == total == 3_835_822_080  # the meta device's count, the same
    assert round(total / 1e8) == 38  # model card: "3.8B parameters"
    assert v["params_active"].value == total  # tied: the matrix counts once, as the output head
    # sliding_window 262,144 beside a 131,072 context windows nothing: every layer is full attention
    assert v["kv_bytes_per_token"].value == n * 2 * kv * hd * 2 == 131_072
    assert v["kv_window_bytes_per_token"].value == 0
    assert any("no shorter than max_position_embeddings" in note for note in v.notes)


@pytest.mark.parametrize("name", ["phi-4.json", "phi-4-mini-instruct.json"])
def test_the_command_line_reads_the_phi_files(name: str, capsys) -> None:
    path = str(CONFIGS / name)
    expected = {"phi-4.json": ("exactly 14659092480 param", "= 204.8 kB/token"),
                "phi-4-mini-instruct.json": ("exactly 3835822080 param", "exactly 131072 byte/token")}[name]
    for quantity, words in zip(("params_total", "kv_bytes_per_token"), expected, strict=True):
        code, out, err = run_cli(capsys, ["eval", quantity, "--model", path])
        assert code == 0, err
        assert out.startswith(quantity) and words in out.splitlines()[0], out
    code, out, err = run_cli(capsys, ["eval", "step_time", "--model", path, "--hardware", "h100-sxm"])
    assert code == 0 and "step_time" in out, err


def test_every_claim_is_checked_under_the_phi_4_mini_file(capsys, tmp_path: Path) -> None:
    # the scenario the file gives is checked whole, as for any other model: no surprise, one summary line
    code, out, err = run_cli(capsys, ["check", "--model", str(CONFIGS / "phi-4-mini-instruct.json"),
                                      "--cache-dir", str(tmp_path / "cache")])
    assert code == 0, err
    assert "0 surprises" in out.strip().splitlines()[-1]


# --------------------------------------------------------------------------------------------------
# configs built from model cards' sizes (no verbatim publisher file found): the meta device confirms each count

def _dense(mtype: str, arch: str, d: int, n: int, heads: int, kv: int, width: int, vocab: int, **extra) -> dict:
    return {"model_type": mtype, "architectures": [arch], "hidden_size": d, "num_hidden_layers": n,
            "num_attention_heads": heads, "num_key_value_heads": kv, "intermediate_size": width,
            "vocab_size": vocab, "torch_dtype": "bfloat16", **extra}


BUILT = {
    # model: (config, params_total = the meta device's count, published total, kv bytes per token at long context)
    "bigcode/starcoder2-3b": (
        _dense("starcoder2", "Starcoder2ForCausalLM", 3072, 30, 24, 2, 12288, 49152, sliding_window=4096,
               max_position_embeddings=16384, hidden_act="gelu_pytorch_tanh", use_bias=True),
        3_029_336_064, 3.03e9, 0),  # every layer windowed: nothing grows with the context
    "allenai/OLMo-2-1124-7B": (
        _dense("olmo2", "Olmo2ForCausalLM", 4096, 32, 32, 32, 11008, 100352, tie_word_embeddings=False),
        7_298_088_960, 7.30e9, 32 * 2 * 4096 * 2),
    "allenai/Olmo-3-1025-7B": (
        _dense("olmo3", "Olmo3ForCausalLM", 4096, 32, 32, 32, 11008, 100278, sliding_window=4096),
        7_297_482_752, 7.30e9, 8 * 2 * 4096 * 2),  # 8 full layers of 32 (every 4th)
    "THUDM/GLM-4-32B-0414": (
        _dense("glm4", "Glm4ForCausalLM", 6144, 61, 48, 2, 23040, 151552, head_dim=128, attention_bias=True,
               partial_rotary_factor=0.5),
        32_564_576_256, 32.6e9, 61 * 2 * 2 * 128 * 2),
    "ibm-granite/granite-3.1-8b-instruct": (
        _dense("granite", "GraniteForCausalLM", 4096, 40, 32, 8, 12800, 49155, tie_word_embeddings=True,
               attention_multiplier=0.0078125, embedding_multiplier=12.0, logits_scaling=16.0,
               residual_multiplier=0.22),
        8_170_516_480, 8.17e9, 40 * 2 * 8 * 128 * 2),
    "ibm-granite/granite-3.1-3b-a800m-instruct": (
        _dense("granitemoe", "GraniteMoeForCausalLM", 1536, 32, 24, 8, 512, 49155, tie_word_embeddings=True,
               num_local_experts=40, num_experts_per_tok=8),
        3_298_693_632, 3.30e9, 32 * 2 * 8 * 64 * 2),
    "ByteDance-Seed/Seed-OSS-36B-Instruct": (
        _dense("seed_oss", "SeedOssForCausalLM", 5120, 64, 80, 8, 27648, 155136, head_dim=128),
        36_149_657_600, 36.15e9, 64 * 2 * 8 * 128 * 2),
    "baidu/ERNIE-4.5-0.3B-PT": (
        _dense("ernie4_5", "Ernie4_5ForCausalLM", 1024, 18, 16, 2, 3072, 103424, head_dim=128),
        360_710_144, 0.36e9, 18 * 2 * 2 * 128 * 2),
    "HuggingFaceTB/SmolLM3-3B": (
        _dense("smollm3", "SmolLM3ForCausalLM", 2048, 36, 16, 4, 11008, 128256),
        3_074_949_120, 3.08e9, 36 * 2 * 4 * 128 * 2),
    "CohereForAI/c4ai-command-r7b-12-2024": (
        _dense("cohere2", "Cohere2ForCausalLM", 4096, 32, 32, 8, 14336, 256000, sliding_window=4096,
               sliding_window_pattern=4),
        8_027_897_856, 8.03e9, 8 * 2 * 8 * 128 * 2),
    "LGAI-EXAONE/EXAONE-4.0-32B": (
        _dense("exaone4", "Exaone4ForCausalLM", 5120, 64, 40, 8, 27392, 102400, head_dim=128, sliding_window=4096,
               sliding_window_pattern=4, tie_word_embeddings=False),
        32_002_539_520, 32.0e9, 16 * 2 * 8 * 128 * 2),  # model card: 30.95B without embeddings
    "LGAI-EXAONE/EXAONE-4.0-1.2B": (
        _dense("exaone4", "Exaone4ForCausalLM", 2048, 30, 32, 8, 4096, 102400, head_dim=64, sliding_window=None,
               layer_types=["full_attention"] * 30, tie_word_embeddings=True),
        1_279_262_720, 1.28e9, 30 * 2 * 8 * 64 * 2),  # model card: 1.07B without embeddings
    "baidu/ERNIE-4.5-21B-A3B-PT": (
        _dense("ernie4_5_moe", "Ernie4_5_MoeForCausalLM", 2560, 28, 20, 4, 12288, 103424, head_dim=128,
               moe_intermediate_size=1536, moe_num_experts=64, moe_k=6, moe_num_shared_experts=2,
               moe_layer_start_index=1, moe_layer_end_index=27, moe_layer_interval=1, tie_word_embeddings=True),
        21_825_290_240, 21.8e9, 28 * 2 * 4 * 128 * 2),  # "21B total, 3B activated"
    "baidu/ERNIE-4.5-300B-A47B-PT": (
        _dense("ernie4_5_moe", "Ernie4_5_MoeForCausalLM", 8192, 54, 64, 8, 28672, 103424,
               moe_intermediate_size=3584, moe_num_experts=64, moe_k=8, moe_num_shared_experts=0,
               moe_layer_start_index=3, moe_layer_end_index=53, moe_layer_interval=1, tie_word_embeddings=False),
        299_483_267_072, 300e9, 54 * 2 * 8 * 128 * 2),  # "300B total, 47B activated"
    "CohereForAI/c4ai-command-r-plus": (
        _dense("cohere", "CohereForCausalLM", 12288, 64, 96, 8, 33792, 256000, use_qk_norm=True,
               logit_scale=0.8333333333333334),
        103_809_024_000, 104e9, 64 * 2 * 8 * 128 * 2),
    "microsoft/Phi-3.5-MoE-instruct": (
        _dense("phimoe", "PhimoeForCausalLM", 4096, 32, 32, 8, 6400, 32064, num_local_experts=16,
               num_experts_per_tok=2, sliding_window=131072, max_position_embeddings=131072,
               tie_word_embeddings=False),
        41_872_261_120, 41.9e9, 32 * 2 * 8 * 128 * 2),  # "42B total, 6.6B active"; the window spans the context
    "mistralai/Mistral-Small-3.1-24B-Instruct-2503": (
        {"model_type": "mistral3", "architectures": ["Mistral3ForConditionalGeneration"], "torch_dtype": "bfloat16",
         "text_config": _dense("mistral", "MistralForCausalLM", 5120, 40, 32, 8, 32768, 131072, head_dim=128,
                               sliding_window=None),
         "vision_config": {"model_type": "pixtral", "hidden_size": 1024, "num_hidden_layers": 24,
                           "num_attention_heads": 16, "intermediate_size": 4096, "head_dim": 64, "patch_size": 14,
                           "image_size": 1540}},
        23_571_988_480, 24.0e9, 40 * 2 * 8 * 128 * 2),  # 24B with its vision tower, which is not counted
}


@pytest.mark.parametrize("model", sorted(BUILT))
def test_counts_of_configs_built_from_model_cards(model: str) -> None:
    config, total, published, kv = BUILT[model]
    v = model_values(config)
    assert v["params_total"].value == total
    assert abs(total - published) / published < 0.02, (model, total)
    assert v["kv_bytes_per_token"].value == kv


# what the meta device counts beside the hand count, and why: Cohere's per-head q and k norm gains are
# [heads, head_dim] tensors, which the meta count's rule (two or more dimensions) takes for matrices
META_EXTRA = {"CohereForAI/c4ai-command-r-plus": 64 * (96 + 8) * 128}


@pytest.mark.parametrize("model", sorted(BUILT))
def test_configs_built_from_model_cards_count_as_the_meta_device_builds_them(model: str) -> None:
    _meta()
    config, total, _, _ = BUILT[model]
    check = cross_check(config, where=model)
    assert {k: d for k, d in check.differences.items() if k != "params_total"} == {}, check.versions
    assert check.counts["params_total"] == (total, total + META_EXTRA.get(model, 0))


@pytest.mark.parametrize("model, active", [("baidu/ERNIE-4.5-21B-A3B-PT", 3.35e9),
                                           ("baidu/ERNIE-4.5-300B-A47B-PT", 47.1e9)])
def test_ernie_4_5_moe_layers_and_active_parameters(model: str, active: float) -> None:
    config = BUILT[model][0]
    v = model_values(config)
    n, start = config["num_hidden_layers"], config["moe_layer_start_index"]
    assert v["moe_layers"].value == n - start  # the first `start` layers dense
    assert v["experts_total"].value == 64 and v["experts_active"].value == config["moe_k"]
    assert v["params_active"].value == pytest.approx(active, rel=0.01)


def test_ernie_4_5_moe_interval_and_end() -> None:
    config = dict(BUILT["baidu/ERNIE-4.5-21B-A3B-PT"][0], moe_layer_interval=2, moe_layer_end_index=20)
    assert model_values(config)["moe_layers"].value == 10  # layers 1, 3, ..., 19
    with pytest.raises(ScenarioError, match="one entry per modality"):
        model_values(dict(config, moe_num_experts=[64, 64]))


def test_exaone4s_lettered_pattern_needs_layer_types() -> None:
    config = dict(BUILT["LGAI-EXAONE/EXAONE-4.0-32B"][0], sliding_window_pattern="LLLG")
    with pytest.raises(ScenarioError, match="sliding_window_pattern"):
        model_values(config)
    listed = dict(config, layer_types=(["sliding_attention"] * 3 + ["full_attention"]) * 16)
    assert _kinds(listed) == (16, 48)


def test_starcoder2s_mlp_is_two_matrices() -> None:
    config = BUILT["bigcode/starcoder2-3b"][0]
    v = model_values(config)
    d, n, width, vocab = 3072, 30, 12288, 49152
    attention = n * (2 * d * 24 * 128 + 2 * d * 2 * 128)
    assert v["params_total"].value == vocab * d + attention + n * 2 * d * width  # c_fc and c_proj, tied head
    assert v["params_total"].value < 3.1e9  # read as llama (three matrices) it was 4.16B
    assert v["kv_window_bytes_per_token"].value == n * 2 * 2 * 128 * 2 and v["attention_window"].value == 4096


# --------------------------------------------------------------------------------------------------
# layer patterns

def _kinds(config: dict) -> tuple[int, int]:
    v = model_values(config)
    per_layer = 2 * v["kv_heads"].value * v["head_dim"].value * 2
    return v["kv_bytes_per_token"].value / per_layer, v["kv_window_bytes_per_token"].value / per_layer


@pytest.mark.parametrize("model, full, window", [
    ("allenai/Olmo-3-1025-7B", 8, 24),  # (i + 1) % 4 == 0 full
    ("CohereForAI/c4ai-command-r7b-12-2024", 8, 24),  # sliding_window_pattern 4
    ("HuggingFaceTB/SmolLM3-3B", 36, 0),  # use_sliding_window false (its default)
    ("bigcode/starcoder2-3b", 0, 30),  # every layer
    ("LGAI-EXAONE/EXAONE-4.0-32B", 16, 48),  # sliding_window_pattern 4
])
def test_layer_patterns_without_layer_types(model: str, full: int, window: int) -> None:
    assert _kinds(BUILT[model][0]) == (full, window)


def test_a_listed_layer_types_wins_over_the_default_pattern() -> None:
    config = dict(BUILT["allenai/Olmo-3-1025-7B"][0], layer_types=["full_attention"] * 30 + ["sliding_attention"] * 2)
    assert _kinds(config) == (30, 2)


def test_cohere2s_pattern_follows_its_field() -> None:
    config = dict(BUILT["CohereForAI/c4ai-command-r7b-12-2024"][0], sliding_window_pattern=2)
    assert _kinds(config) == (16, 16)


@pytest.mark.parametrize("no_rope, window", [(None, 9), ([1, 1, 0, 1] * 9, 9), ([0] * 36, 36)])
def test_smollm3_windows_its_layers_without_rotary_embedding(no_rope, window) -> None:
    config = dict(BUILT["HuggingFaceTB/SmolLM3-3B"][0], use_sliding_window=True, sliding_window=4096)
    if no_rope is not None:
        config["no_rope_layers"] = no_rope
    assert _kinds(config) == (36 - window, window)


def test_smollm3s_list_must_have_one_entry_per_layer() -> None:
    config = dict(BUILT["HuggingFaceTB/SmolLM3-3B"][0], use_sliding_window=True, sliding_window=4096,
                  no_rope_layers=[1, 0])
    with pytest.raises(ScenarioError, match="no_rope_layers"):
        model_values(config)


def test_phi3_windows_every_layer_below_its_context() -> None:
    config = dict(_load("phi-4-mini-instruct.json"), sliding_window=2047)
    assert _kinds(config) == (0, 32)
    assert model_values(config)["attention_window"].value == 2047


# --------------------------------------------------------------------------------------------------
# refusals

NEW_TYPES = ["phi3", "olmo2", "olmo3", "glm4", "granite", "granitemoe", "seed_oss", "ernie4_5", "smollm3", "cohere2",
             "starcoder2", "ministral3", "mistral3", "exaone4", "ernie4_5_moe", "minimax_m2", "glm4_moe_lite",
             "qwen3_vl", "qwen3_vl_moe", "glm4v_moe", "cohere", "phimoe"]


def test_the_new_types_are_supported() -> None:
    assert set(NEW_TYPES) <= set(SUPPORTED_MODEL_TYPES)


@pytest.mark.parametrize("model", sorted(BUILT))
def test_one_unknown_layer_kind_is_refused(model: str) -> None:
    config = json.loads(json.dumps(BUILT[model][0]))
    text = config.get("text_config", config)
    text["layer_types"] = ["full_attention"] * (text["num_hidden_layers"] - 1) + ["mamba"]
    with pytest.raises(ScenarioError, match="unknown layer kind 'mamba'") as err:
        model_values(config)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("name", ["phi-4.json", "phi-4-mini-instruct.json"])
def test_a_planted_layer_kind_in_a_phi_file_is_refused(name: str) -> None:
    config = _load(name)
    config["layer_types"] = ["full_attention"] * 31 + ["mamba"]
    with pytest.raises(ScenarioError, match="layer_types"):
        model_values(config)


# --------------------------------------------------------------------------------------------------
# mistral3: the language model is read as the type its text_config names

def test_a_mistral3_file_reads_its_text_config_as_its_own_type() -> None:
    inner = _load("llama-3.1-8b.json")
    wrapped = {"model_type": "mistral3", "architectures": ["Mistral3ForConditionalGeneration"],
               "text_config": inner, "vision_config": {"model_type": "pixtral"}}
    v, own = model_values(wrapped), model_values(inner)
    assert {k: x.value for k, x in v.items()} == {k: x.value for k, x in own.items()}
    assert any("text_config (model_type llama) of a mistral3 config" in n for n in v.notes)


def test_mistral_large_3s_deepseek_text_config_is_read_as_deepseek() -> None:
    inner = _load("kimi-k2-instruct.json") | {"model_type": "deepseek_v3"}
    wrapped = {"model_type": "mistral3", "architectures": ["Mistral3ForConditionalGeneration"], "text_config": inner}
    assert model_values(wrapped)["params_total"].value == model_values(inner)["params_total"].value


def test_a_mistral3_text_config_without_model_type_is_mistral() -> None:
    config = json.loads(json.dumps(BUILT["mistralai/Mistral-Small-3.1-24B-Instruct-2503"][0]))
    del config["text_config"]["model_type"]
    assert model_values(config)["params_total"].value == 23_571_988_480


@pytest.mark.parametrize("text, words", [
    ({"model_type": "my_text", "hidden_size": 64, "num_hidden_layers": 2}, "text_config has model_type 'my_text'"),
    (None, "keeps its language model in 'text_config'"),
])
def test_a_mistral3_file_without_a_known_language_model_is_refused(text, words, capsys, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # without the meta extra (with it, transformers' own defaults for a missing text_config are built instead)
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "transformers", None)
    config = {"model_type": "mistral3", "architectures": ["Mistral3ForConditionalGeneration"]}
    if text is not None:
        config["text_config"] = text
    refused_by_reader_and_cli(capsys, tmp_path, config, words)


@pytest.mark.parametrize("mtype", [t for t in NEW_TYPES if not t.startswith(("mistral3", "qwen3_vl", "glm4v"))])
def test_tie_defaults_are_transformers_class_defaults(mtype: str) -> None:
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from theorems.configs.registry import FAMILY_OF

    config = transformers.AutoConfig.for_model(mtype)
    assert FAMILY_OF[mtype].model_types[mtype] is bool(config.tie_word_embeddings)


# --------------------------------------------------------------------------------------------------
# GLM-4.7-Flash (glm4_moe_lite): DeepSeek's tensors; the checkpoint's tensors are in tests/test_model_configs.py

GLM_47_FLASH = {"architectures": ["Glm4MoeLiteForCausalLM"], "model_type": "glm4_moe_lite", "hidden_size": 2048,
                "num_hidden_layers": 47, "num_attention_heads": 20, "num_key_value_heads": 20, "q_lora_rank": 768,
                "kv_lora_rank": 512, "qk_nope_head_dim": 192, "qk_rope_head_dim": 64, "v_head_dim": 256,
                "intermediate_size": 10240, "moe_intermediate_size": 1536, "n_routed_experts": 64,
                "n_shared_experts": 1, "num_experts_per_tok": 4, "first_k_dense_replace": 1,
                "num_nextn_predict_layers": 1, "vocab_size": 154880, "tie_word_embeddings": False,
                "dtype": "bfloat16"}


def test_glm_4_7_flash_reads_as_latent_attention_and_experts() -> None:
    v = model_values(GLM_47_FLASH)
    assert v["params_total"].value == 29_943_136_256  # the meta device's count, the same
    assert v["moe_layers"].value == 46 and v["experts_active"].value == 4
    assert v["kv_bytes_per_token"].value == 47 * (512 + 64) * 2  # the latent, bf16
    assert round(v["params_active"].value / 1e9, 1) == 3.6  # "30B-A3B"
    listed = dict(GLM_47_FLASH, mlp_layer_types=["dense"] * 3 + ["sparse"] * 44, first_k_dense_replace=3)
    assert model_values(listed)["moe_layers"].value == 44


def test_glm_4_7_flash_counts_as_the_meta_device_builds_it() -> None:
    _meta()
    check = cross_check(GLM_47_FLASH, where="glm-4.7-flash")
    assert check.differences == {}, check.versions
    assert check.counts["params_total"] == (29_943_136_256, 29_943_136_256)


@pytest.mark.parametrize("change, words", [
    ({"first_k_dense_replace": 3}, "makes layer 0 alone dense"),
    ({"mlp_layer_types": ["dense"] + ["sparse"] * 45 + ["mamba"]}, "unknown layer kind 'mamba'"),
    ({"mlp_layer_types": ["sparse"] * 47}, "disagree"),
    ({"qk_head_dim": 192}, "qk_head_dim"),
    ({"layer_types": ["full_attention"] * 46 + ["mamba"]}, "unknown layer kind 'mamba'"),
])
def test_glm_4_7_flash_refuses_what_its_layout_does_not_say(change: dict, words: str) -> None:
    with pytest.raises(ScenarioError, match=words):
        model_values(GLM_47_FLASH | change)


# --------------------------------------------------------------------------------------------------
# multimodal wrappers: the head is tied as the top level says (transformers 5 builds the model by that flag)

def _vl(outer: object, inner: object) -> dict:
    text = {"model_type": "qwen3_vl_moe_text", "hidden_size": 2048, "num_hidden_layers": 48,
            "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "moe_intermediate_size": 768,
            "num_local_experts": 128, "num_experts_per_tok": 8, "vocab_size": 151936}
    config = {"model_type": "qwen3_vl_moe", "architectures": ["Qwen3VLMoeForConditionalGeneration"],
              "text_config": text}
    if outer is not None:
        config["tie_word_embeddings"] = outer
    if inner is not None:
        text["tie_word_embeddings"] = inner
    return config


@pytest.mark.parametrize("outer, inner, tied", [(False, True, False), (True, False, True), (None, True, True),
                                                (False, None, False), (None, None, False)])
def test_a_wrappers_top_level_tie_flag_wins(outer, inner, tied) -> None:
    v = model_values(_vl(outer, inner))
    head = 151936 * 2048
    untied = model_values(_vl(False, False))["params_total"].value
    assert v["params_total"].value == (untied - head if tied else untied)
    assert any("the top level's" in n for n in v.notes) is (outer is not None and inner is not None
                                                            and outer != inner)


def test_a_qwen3_vl_language_model_with_an_unknown_layer_kind_is_refused() -> None:
    config = _vl(False, None)
    config["text_config"]["layer_types"] = ["full_attention"] * 47 + ["mamba"]
    with pytest.raises(ScenarioError, match="unknown layer kind 'mamba'"):
        model_values(config)


def test_glm_4_5vs_language_model_is_glm_4_5s() -> None:
    inner = _load("glm-4.5.json")
    wrapped = {"model_type": "glm4v_moe", "architectures": ["Glm4vMoeForConditionalGeneration"],
               "text_config": dict(inner, model_type="glm4v_moe_text")}
    assert model_values(wrapped)["params_total"].value == model_values(inner)["params_total"].value
    wrapped["text_config"]["layer_types"] = ["full_attention"] * (inner["num_hidden_layers"] - 1) + ["mamba"]
    with pytest.raises(ScenarioError, match="unknown layer kind 'mamba'"):
        model_values(wrapped)
