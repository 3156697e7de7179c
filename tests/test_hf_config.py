"""Tests for theorems.hf_config: parameter counts, KV-cache bytes and errors from config.json files.

Expected values are written as the arithmetic they come from (exact integers, from the config's fields,
never from the reader's own formulas), and each fixture is also checked against the vendor's published
total (within 3 %), citing where that total is stated.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.errors import ScenarioError
from derive.model.units import DIMENSIONLESS, Dimension, parse_unit
from theorems.configs import ConfigValue, load_config_json, model_values, param_breakdown

FIXTURES = Path(__file__).parent / "fixtures" / "configs"


# --------------------------------------------------------------------------------------------------
# expected values, written out


def _deepseek_v3() -> dict[str, int]:
    d, vocab, heads = 7168, 129280, 128
    attention = (d * 1536 + 1536 * heads * (128 + 64)  # q_a, q_b
                 + d * (512 + 64) + 512 * heads * (128 + 128)  # kv_a (latent + rope key), kv_b
                 + heads * 128 * d)  # o
    expert = 3 * d * 2048
    dense_layers, moe_layers = 3, 58
    total = (2 * vocab * d + 61 * attention + dense_layers * 3 * d * 18432
             + moe_layers * (256 * expert + 1 * expert + d * 256))
    active = total - moe_layers * (256 - 8) * expert - vocab * d  # the input embedding is a lookup
    return {"params_total": total, "params_active": active, "kv": 61 * (512 + 64) * 2, "layers": 61}


def _llama3_70b() -> dict[str, int]:
    d, kv, hd = 8192, 8, 128
    total = 2 * 128256 * d + 80 * (2 * d * 64 * hd + 2 * d * kv * hd + 3 * d * 28672)
    return {"params_total": total, "params_active": total - 128256 * d, "kv": 2 * 80 * 8 * 128 * 2, "layers": 80}


def _mixtral_8x7b() -> dict[str, int]:
    d = 4096
    attention = 2 * d * 32 * 128 + 2 * d * 8 * 128
    expert = 3 * d * 14336
    total = 2 * 32000 * d + 32 * (attention + 8 * expert + d * 8)
    active = 32000 * d + 32 * (attention + 2 * expert + d * 8)  # output head, no input embedding
    return {"params_total": total, "params_active": active, "kv": 2 * 32 * 8 * 128 * 2, "layers": 32}


def _mha_13b() -> dict[str, int]:
    d = 5120
    total = 2 * 32000 * d + 40 * (4 * d * d + 3 * d * 13824)
    return {"params_total": total, "params_active": total - 32000 * d, "kv": 2 * 40 * 40 * 128 * 2, "layers": 40}


def _mqa_palm() -> dict[str, int]:
    d = 18432
    total = 256000 * d + 118 * (2 * d * 48 * 256 + 2 * d * 1 * 256 + 3 * d * 73728)  # tied embedding
    return {"params_total": total, "params_active": total, "kv": 2 * 118 * 1 * 256 * 2, "layers": 118}


def _gemma3_27b() -> dict[str, int]:
    d = 5376
    # google/gemma-3-27b-it names no vocab_size: transformers' Gemma3TextConfig default, 262,208 rows
    total = 262208 * d + 62 * (2 * d * 32 * 128 + 2 * d * 16 * 128 + 3 * d * 21504)  # tied embedding
    # 10 of 62 layers global (5 local : 1 global); the 52 local layers hold 1,024 tokens at most
    return {"params_total": total, "params_active": total, "kv": 2 * 10 * 16 * 128 * 2, "layers": 62}


CASES = {
    # DeepSeek-V3 README (deepseek-ai/DeepSeek-V3:README.md): "671B total parameters with 37B activated".
    "deepseek_v3.json": (_deepseek_v3(), 671e9, 37e9),
    # Llama 3.1 model card (meta-llama/llama-models:models/llama3_1/MODEL_CARD.md): 70B.
    "llama3_70b.json": (_llama3_70b(), 70e9, 70e9),
    # Mistral, https://mistral.ai/news/mixtral-of-experts/: 46.7B total, 12.9B used per token (Mistral's 12.9B
    # counts the input embedding, which the compute convention leaves out: compared in test_mixtral_published).
    "mixtral-8x7b-v0.1.json": (_mixtral_8x7b(), 46.7e9, None),
    # LLaMA-2 13B (scaling-book inference.md): 13B.
    "mha_llama2_13b.json": (_mha_13b(), 13e9, 13e9),
    # PaLM (Chowdhery et al. 2022): 540B.
    "mqa_palm540b_shape.json": (_mqa_palm(), 540e9, 540e9),
    # Gemma 3 technical report (arXiv:2503.19786): "1 to 27 billion parameters"; language model only here.
    "gemma-3-27b-it.json": (_gemma3_27b(), 27e9, 27e9),
}


@pytest.mark.parametrize("fixture", sorted(CASES))
def test_fixture_values_exact(fixture: str) -> None:
    expected, _, _ = CASES[fixture]
    values = load_config_json(FIXTURES / fixture)
    assert values["params_total"].value == expected["params_total"]
    assert values["params_active"].value == expected["params_active"]
    assert values["kv_bytes_per_token"].value == expected["kv"]
    assert values["layers"].value == expected["layers"]
    assert values["bytes_per_kv_element"].value == 2


@pytest.mark.parametrize("fixture", sorted(CASES))
def test_fixture_matches_published_totals(fixture: str) -> None:
    _, published_total, published_active = CASES[fixture]
    values = load_config_json(FIXTURES / fixture)
    assert float(values["params_total"].value) == pytest.approx(published_total, rel=0.03)
    if published_active is not None:
        assert float(values["params_active"].value) == pytest.approx(published_active, rel=0.03)


def test_mixtral_published() -> None:
    # Mistral's 12.9B per token counts every weight a token meets, the input embedding included:
    # 32000 * 4096 (embedding) + 32000 * 4096 (head) + 32 layers * (attention + 2 of 8 experts + router)
    d = 4096
    mistral_convention = 2 * 32000 * d + 32 * (2 * d * 32 * 128 + 2 * d * 8 * 128 + 2 * 3 * d * 14336 + d * 8)
    assert mistral_convention == pytest.approx(12.9e9, rel=0.002)
    values = load_config_json(FIXTURES / "mixtral-8x7b-v0.1.json")
    # the compute convention is the same count less the input embedding
    assert values["params_active"].value == mistral_convention - 32000 * d


def test_headline_kv_numbers() -> None:
    # The two numbers the brief asks for: 2*80*8*128*2 and 61*(512+64)*2 bytes per token.
    assert load_config_json(FIXTURES / "llama3_70b.json")["kv_bytes_per_token"].value == 327_680
    assert load_config_json(FIXTURES / "deepseek_v3.json")["kv_bytes_per_token"].value == 70_272


def test_deepseek_experts_and_latent_head_layout() -> None:
    values = load_config_json(FIXTURES / "deepseek_v3.json")
    experts = (values["experts_total"].value, values["experts_active"].value, values["experts_shared"].value)
    assert experts == (256, 8, 1)
    # latent attention as the context chapter's per-head formula sees it: one cached vector of
    # kv_lora_rank + qk_rope_head_dim = 512 + 64 per layer, serving keys and values, shared by 128 query heads;
    # head_dim is the mean of the scores' 576 and the values' 512 elements (4 * head_dim = 2 * 576 + 2 * 512), and a
    # prefill's the non-absorbed form's mean of 128 + 64 and 128
    head = {k: values[k].value for k in ("kv_cache_layers", "kv_elements_per_layer", "kv_heads", "head_dim",
                                         "query_heads", "prefill_head_dim")}
    assert head == {"kv_cache_layers": 61, "kv_elements_per_layer": 512 + 64, "kv_heads": 1,
                    "head_dim": (576 + 512) / 2, "query_heads": 128, "prefill_head_dim": (128 + 64 + 128) / 2}
    assert values["kv_bytes_per_token"].value == 61 * (512 + 64) * 2


def test_dense_models_read_the_per_head_layout() -> None:
    values = load_config_json(FIXTURES / "llama3_70b.json")
    assert (values["kv_heads"].value, values["head_dim"].value, values["d_model"].value) == (8, 128, 8192)
    # no routed experts: nothing is left out of the active count but the input embedding
    assert values["params_total"].value - values["params_active"].value == 128256 * 8192
    assert values["kv_cache_layers"].value * 2 * values["kv_heads"].value * values["head_dim"].value * 2 == 327_680


def test_mixtral_experts_without_shared_ones() -> None:
    values = load_config_json(FIXTURES / "mixtral-8x7b-v0.1.json")
    assert (values["experts_total"].value, values["experts_active"].value) == (8, 2)
    # what a token skips: 6 of 8 experts in each of 32 layers, and the input embedding; nothing shared
    assert values["params_total"].value - values["params_active"].value == 32 * 6 * 3 * 4096 * 14336 + 32000 * 4096


def test_mha_defaults_are_recorded_not_silent() -> None:
    values = load_config_json(FIXTURES / "mha_llama2_13b.json")
    assert values["kv_heads"].value == 40 and values["head_dim"].value == 128
    note = values["kv_bytes_per_token"].note
    assert "'num_key_value_heads' absent" in note and "'head_dim' absent" in note


def test_mqa_single_kv_head() -> None:
    values = load_config_json(FIXTURES / "mqa_palm540b_shape.json")
    assert values["kv_heads"].value == 1
    assert values["kv_bytes_per_token"].value == 120_832
    assert "tied" in values["params_total"].note


def test_gemma3_text_config_and_sliding_window_note() -> None:
    values = load_config_json(FIXTURES / "gemma-3-27b-it.json")
    assert "text_config" in values["params_total"].note
    assert "sliding window of 1024: 52 layers" in values["kv_bytes_per_token"].note  # 5 local : 1 global
    assert values["kv_window_bytes_per_token"].value == 2 * 52 * 16 * 128 * 2
    assert values["attention_window"].value == 1024


def test_units_parse_with_the_right_dimension() -> None:
    per_token = Dimension.of(byte=1, token=-1)
    expected = {"params_total": Dimension.of(param=1), "params_active": Dimension.of(param=1),
                "params_embedding": Dimension.of(param=1), "bytes_per_param": parse_unit("B/param").dimension,
                "kv_bytes_per_token": per_token, "kv_window_bytes_per_token": per_token,
                "kv_chunk_bytes_per_token": per_token, "token_activation_bytes": per_token,
                "kv_sparse_bytes_per_token": per_token, "attention_topk": parse_unit("token/seq").dimension,
                "bytes_per_kv_element": Dimension.of(byte=1), "dispatch_bytes_per_element": Dimension.of(byte=1),
                "attention_window": parse_unit("token/seq").dimension,
                "attention_chunk": parse_unit("token/seq").dimension,
                "context": parse_unit("token/seq").dimension, "kv_state_bytes": parse_unit("B/seq").dimension,
                "max_context": parse_unit("token/seq").dimension,
                "per_layer_row_params": Dimension.of(param=1, token=-1), "params_routed": Dimension.of(param=1),
                "params_output_head": Dimension.of(param=1)}
    expected["kv_elements_per_layer"] = Dimension.of(token=-1)
    for fixture in CASES:
        for name, cv in load_config_json(FIXTURES / fixture).items():
            assert isinstance(cv, ConfigValue) and isinstance(cv.value, Fraction)
            assert parse_unit(cv.unit).dimension == expected.get(name, DIMENSIONLESS), (fixture, name)
            assert parse_unit(cv.unit).scale == 1


# --------------------------------------------------------------------------------------------------
# bytes per KV element


def test_bytes_per_kv_element_scales_kv_and_is_echoed() -> None:
    fp8 = load_config_json(FIXTURES / "llama3_70b.json", bytes_per_kv_element=Fraction(1))
    assert fp8["kv_bytes_per_token"].value == 163_840
    assert fp8["bytes_per_kv_element"].value == 1
    config = json.loads((FIXTURES / "deepseek_v3.json").read_text())
    # the engine passes a sympy Rational
    half = model_values(config, bytes_per_kv_element=sp.Rational(1, 2))
    assert half["kv_bytes_per_token"].value == Fraction(61 * 576, 2)


@pytest.mark.parametrize("bad", [0, -2, True, "two"])
def test_bad_bytes_per_kv_element(bad: object) -> None:
    config = json.loads((FIXTURES / "llama3_70b.json").read_text())
    with pytest.raises(ScenarioError, match="bytes_per_kv_element"):
        model_values(config, bytes_per_kv_element=bad)


# --------------------------------------------------------------------------------------------------
# errors


def test_missing_field_names_field_and_file() -> None:
    path = FIXTURES / "broken_missing_layers.json"
    with pytest.raises(ScenarioError) as err:
        load_config_json(path)
    text = str(err.value)
    assert "num_hidden_layers" in text and str(path) in text


def test_unknown_architecture_names_the_fields() -> None:
    path = FIXTURES / "unknown_architecture.json"
    with pytest.raises(ScenarioError) as err:
        load_config_json(path)
    text = str(err.value)
    assert "architectures" in text and "MambaForCausalLM" in text and "model_type" in text
    assert str(path) in text and "llama" in text  # hint lists what is supported


def test_no_architecture_at_all() -> None:
    with pytest.raises(ScenarioError, match="'architectures' and 'model_type'"):
        model_values({"hidden_size": 8, "num_hidden_layers": 2})


def test_invalid_json(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"hidden_size": 4096,')
    with pytest.raises(ScenarioError, match="invalid JSON") as err:
        load_config_json(path)
    assert str(path) in str(err.value)


def test_json_that_is_not_an_object(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text("[1, 2, 3]")
    with pytest.raises(ScenarioError, match="JSON object"):
        load_config_json(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="not found"):
        load_config_json(tmp_path / "nope.json")


def _llama(**changes: object) -> dict:
    config = json.loads((FIXTURES / "llama3_70b.json").read_text())
    config.update(changes)
    return config


@pytest.mark.parametrize("field,value", [
    ("hidden_size", "8192"), ("num_hidden_layers", 80.5), ("num_hidden_layers", True),
    ("num_attention_heads", [64]), ("vocab_size", -1), ("num_key_value_heads", 0),
    ("tie_word_embeddings", "no"), ("intermediate_size", float("inf")), ("intermediate_size", float("nan")),
    ("intermediate_size", None),
])
def test_values_that_are_not_whole_numbers(field: str, value: object) -> None:
    with pytest.raises(ScenarioError, match=field):
        model_values(_llama(**{field: value}), where="test config")


def test_integral_floats_are_accepted() -> None:
    assert model_values(_llama(hidden_size=8192.0))["d_model"].value == 8192


def test_heads_not_multiple_of_kv_heads() -> None:
    with pytest.raises(ScenarioError, match="num_key_value_heads"):
        model_values(_llama(num_key_value_heads=7))


def test_head_dim_cannot_be_inferred() -> None:
    config = _llama(hidden_size=8100)  # 8100 / 64 heads is not whole
    with pytest.raises(ScenarioError, match="head_dim"):
        model_values(config)


def test_conflicting_architecture_and_model_type() -> None:
    with pytest.raises(ScenarioError, match="different layouts"):
        model_values(_llama(architectures=["MixtralForCausalLM"]))


def test_known_architecture_unknown_model_type() -> None:
    values = model_values(_llama(model_type="llama_custom"))
    assert values["layers"].value == 80


def _deepseek(**changes: object) -> dict:
    config = json.loads((FIXTURES / "deepseek_v3.json").read_text())
    config.update(changes)
    return {k: v for k, v in config.items() if v is not ...}


@pytest.mark.parametrize("field", ["kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim",
                                   "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
                                   "n_shared_experts", "intermediate_size"])
def test_deepseek_required_fields(field: str) -> None:
    with pytest.raises(ScenarioError, match=field):
        model_values(_deepseek(**{field: ...}))


def test_more_active_than_total_experts() -> None:
    with pytest.raises(ScenarioError, match="experts per token"):
        model_values(_deepseek(num_experts_per_tok=300))


def test_latent_rank_on_a_gqa_model_is_refused() -> None:
    with pytest.raises(ScenarioError, match="kv_lora_rank"):
        model_values(_llama(kv_lora_rank=512))


# --------------------------------------------------------------------------------------------------
# other layouts, on small synthetic configs (exact arithmetic)


def test_kimi_model_type_reads_as_deepseek_layout() -> None:
    config = _deepseek(model_type="kimi_k2", num_attention_heads=64, n_routed_experts=384, first_k_dense_replace=1,
                       vocab_size=163840)
    pb = param_breakdown(config)
    assert pb.model_type == "kimi_k2" and pb.moe_layers == 60 and pb.experts_total == 384
    # Kimi K2 README (MoonshotAI/Kimi-K2): 1T total, 32B activated
    assert pb.total == pytest.approx(1e12, rel=0.03) and pb.active == pytest.approx(32e9, rel=0.03)


def test_deepseek_v2_lite_plain_query() -> None:
    d, heads = 16, 2
    config = {"model_type": "deepseek_v2", "hidden_size": d, "num_hidden_layers": 3, "num_attention_heads": heads,
              "q_lora_rank": None, "kv_lora_rank": 4, "qk_rope_head_dim": 2, "qk_nope_head_dim": 3, "v_head_dim": 5,
              "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 2, "moe_intermediate_size": 6,
              "intermediate_size": 10, "first_k_dense_replace": 1, "moe_layer_freq": 1, "vocab_size": 7}
    attention = d * heads * (3 + 2) + d * (4 + 2) + 4 * heads * (3 + 5) + heads * 5 * d
    expert = 3 * d * 6
    total = 2 * 7 * d + 3 * attention + 3 * d * 10 + 2 * (4 * expert + 2 * expert + d * 4)
    values = model_values(config)
    assert values["params_total"].value == total
    assert values["params_active"].value == total - 2 * 2 * expert - 7 * d  # no input embedding
    assert values["kv_bytes_per_token"].value == 3 * (4 + 2) * 2
    assert "uncompressed query" in values["params_total"].note


def test_qwen2_moe_shared_expert_and_sparse_step() -> None:
    d = 8
    config = {"architectures": ["Qwen2MoeForCausalLM"], "hidden_size": d, "num_hidden_layers": 4,
              "num_attention_heads": 2, "num_key_value_heads": 1, "intermediate_size": 12, "vocab_size": 10,
              "num_experts": 4, "num_experts_per_tok": 1, "moe_intermediate_size": 6,
              "shared_expert_intermediate_size": 20, "decoder_sparse_step": 2, "mlp_only_layers": [3]}
    # layers 1 and 3 satisfy (i+1) % 2 == 0; layer 3 is forced dense: one MoE layer, three dense ones
    attention = 2 * d * 2 * 4 + 2 * d * 1 * 4
    total = 2 * 10 * d + 4 * attention + 3 * 3 * d * 12 + (4 * 3 * d * 6 + 3 * d * 20 + d + d * 4)
    values = model_values(config)
    assert values["params_total"].value == total
    assert values["params_active"].value == total - 3 * 3 * d * 6 - 10 * d
    assert values["experts_shared"].value == 1
    assert "1 of 4 layers are MoE" in values["experts_total"].note


def test_qwen3_235b_matches_model_card() -> None:
    config = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 4096,
              "num_hidden_layers": 94, "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128,
              "intermediate_size": 12288, "moe_intermediate_size": 1536, "num_experts": 128,
              "num_experts_per_tok": 8, "vocab_size": 151936, "tie_word_embeddings": False}
    values = model_values(config)
    # Qwen3-235B-A22B model card: 235B in total, 22B activated
    assert float(values["params_total"].value) == pytest.approx(235e9, rel=0.03)
    assert float(values["params_active"].value) == pytest.approx(22e9, rel=0.03)
    assert values["kv_bytes_per_token"].value == 2 * 94 * 4 * 128 * 2


def test_gpt_oss_openai_field_name_and_embedding_convention() -> None:
    hf = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 2880,
          "num_hidden_layers": 36, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64,
          "intermediate_size": 2880, "num_local_experts": 128, "num_experts_per_tok": 4, "vocab_size": 201088,
          "tie_word_embeddings": False, "sliding_window": 128}
    openai = {k: v for k, v in hf.items() if k != "num_experts_per_tok"} | {"experts_per_token": 4}
    assert model_values(hf) == model_values(openai)
    pb = param_breakdown(hf)
    # OpenAI (gpt-oss model card): 116.8B total, 5.1B active, the latter without the input embedding
    assert pb.total == pytest.approx(116.8e9, rel=0.01)
    assert pb.active == pytest.approx(5.1e9, rel=0.02)
    assert model_values(hf)["params_active"].value == pb.active
    assert "sliding window of 128: 18 layers" in model_values(hf)["kv_bytes_per_token"].note


def test_breakdown_sums() -> None:
    pb = param_breakdown(json.loads((FIXTURES / "deepseek_v3.json").read_text()))
    assert pb.total == _deepseek_v3()["params_total"]
    assert pb.moe_layers == 58 and pb.experts_shared == 1
    assert pb.embedding == pb.lm_head == 129280 * 7168


# --------------------------------------------------------------------------------------------------
# properties


@st.composite
def gqa_configs(draw: st.DrawFn) -> dict:
    kv = draw(st.integers(1, 16))
    group = draw(st.integers(1, 8))
    head_dim = draw(st.sampled_from([32, 64, 80, 128, 256]))
    return {"architectures": ["LlamaForCausalLM"], "hidden_size": draw(st.integers(1, 64)) * 64,
            "num_hidden_layers": draw(st.integers(1, 200)), "num_attention_heads": kv * group,
            "num_key_value_heads": kv, "head_dim": head_dim, "intermediate_size": draw(st.integers(1, 10_000)),
            "vocab_size": draw(st.integers(1, 300_000)), "tie_word_embeddings": draw(st.booleans())}


bytes_per_element = st.fractions(min_value=Fraction(1, 8), max_value=8).filter(lambda x: x > 0)


@settings(max_examples=60, deadline=None)
@given(config=gqa_configs(), b=bytes_per_element, k=st.integers(2, 5))
def test_kv_bytes_linear_in_layers_and_element_size(config: dict, b: Fraction, k: int) -> None:
    base = model_values(config, bytes_per_kv_element=b)["kv_bytes_per_token"].value
    deeper = model_values(config | {"num_hidden_layers": k * config["num_hidden_layers"]},
                          bytes_per_kv_element=b)["kv_bytes_per_token"].value
    wider = model_values(config, bytes_per_kv_element=k * b)["kv_bytes_per_token"].value
    assert deeper == k * base and wider == k * base
    layers, kv, hd = config["num_hidden_layers"], config["num_key_value_heads"], config["head_dim"]
    assert base == 2 * layers * kv * hd * b


@settings(max_examples=40, deadline=None)
@given(experts=st.integers(1, 64), layers=st.integers(1, 64), width=st.integers(1, 20_000), data=st.data())
def test_mixtral_counts_by_hand(experts: int, layers: int, width: int, data: st.DataObject) -> None:
    active = data.draw(st.integers(1, experts))
    config = json.loads((FIXTURES / "mixtral-8x7b-v0.1.json").read_text()) | {
        "num_local_experts": experts, "num_experts_per_tok": active, "num_hidden_layers": layers,
        "intermediate_size": width}
    values = model_values(config)
    d, vocab = 4096, 32000
    attention = d * 32 * 128 + 2 * d * 8 * 128 + 32 * 128 * d  # q, k and v, o
    expert = 3 * d * width  # gate, up, down
    total = 2 * vocab * d + layers * (attention + experts * expert + d * experts)
    assert values["params_total"].value == total
    # a token multiplies the head, attention, its experts and the router; the input embedding is a lookup
    assert values["params_active"].value == vocab * d + layers * (attention + active * expert + d * experts)
    assert values["params_active"].value < values["params_total"].value
