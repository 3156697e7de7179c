"""Real config.json files of today's architectures (issue 9): published parameter counts, KV bytes per
sequence by layer kind at several contexts (hand counts), native precision, notes and --explain,
``--model ORG/NAME`` from a local Hugging Face cache.

Fixtures in ``tests/fixtures/configs/`` named after the Hugging Face id are verbatim copies of the
publisher's config.json (``SOURCES.md`` there says where each was copied from).  Hand counts are written
as the arithmetic they come from; a published count is compared within the rounding of its statement.
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
from derive.model.evaluate import evaluate
from derive.model.scenario import build_scenario
from theorems.hf_config import kv_layout, load_config_json, model_values, param_breakdown

CONFIGS = Path(__file__).parent / "fixtures" / "configs"


def _config(name: str) -> dict:
    return json.loads((CONFIGS / name).read_text())


def _kv_at(lib, path: Path, context: int) -> Fraction:
    sc = build_scenario(lib, model=str(path), sets=[f"context={context}"])
    return Fraction(str(evaluate(lib, sc, "kv_bytes_per_sequence").exact))


# --------------------------------------------------------------------------------------------------
# native precision: a bf16 config gives bf16 numbers with no flags


def test_bf16_llama_31_8b_needs_no_flags(lecture_library) -> None:
    sc = build_scenario(lecture_library, model=str(CONFIGS / "llama-3.1-8b.json"))
    # 32 layers * 2 (K, V) * 8 kv heads * 128 head_dim * 2 bytes (bfloat16)
    assert sc.value("kv_bytes_per_token") == 32 * 2 * 8 * 128 * 2 == 131_072
    assert sc.value("bytes_per_param") == 2 and sc.value("bytes_per_kv_element") == 2
    assert sc.value("context") == 131_072  # the model's maximum context, not the lecture's 200K
    assert any("context" in n and "replaces" in n for n in sc.notes)
    rows = {r["name"]: r for r in sc.explain(lecture_library)}
    assert rows["kv_bytes_per_token"]["layer"] == "model config"
    assert rows["batch"]["layer"] == "lecture"
    # Meta's model card: 8B (8.03B with embeddings)
    assert float(sc.value("params_total")) == pytest.approx(8.03e9, rel=0.005)


def test_user_set_wins_over_the_config(lecture_library) -> None:
    sc = build_scenario(lecture_library, model=str(CONFIGS / "llama-3.1-8b.json"),
                        sets=["bytes_per_kv_element=1 B", "context=8192"])
    assert sc.value("kv_bytes_per_token") == 65_536 and sc.value("context") == 8192
    rows = {r["name"]: r for r in sc.explain(lecture_library, ["context", "bytes_per_kv_element"])}
    assert rows["context"]["layer"] == rows["bytes_per_kv_element"]["layer"] == "--set"


def test_hardware_native_kv_when_the_config_names_no_datatype(lecture_library) -> None:
    config = {k: v for k, v in _config("llama-3.1-8b.json").items() if k != "torch_dtype"}
    values = model_values(config, default_bytes_per_kv_element=Fraction(1))
    assert values["kv_bytes_per_token"].value == 65_536
    assert "bytes_per_param" not in values
    assert any("no torch_dtype" in n for n in values.notes)


def test_lecture_scenario_numbers_unchanged(lecture_library) -> None:
    sc = build_scenario(lecture_library)
    assert sc.value("kv_bytes_per_token") == 2048 and sc.value("bytes_per_param") == Fraction(1, 2)
    assert evaluate(lecture_library, sc, "kv_bytes_per_sequence").exact == 200_000 * 2048
    assert sc.notes == ()


# --------------------------------------------------------------------------------------------------
# Mistral-7B: every layer on a 4,096-token sliding window


def test_mistral_7b_counts_and_windowed_kv(lecture_library) -> None:
    path = CONFIGS / "mistral-7b-v0.1.json"
    values = load_config_json(path)
    d, kv_heads, hd = 4096, 8, 128
    total = 2 * 32000 * d + 32 * (2 * d * 32 * hd + 2 * d * kv_heads * hd + 3 * d * 14336)
    assert values["params_total"].value == total
    # Mistral AI, "Announcing Mistral 7B" (2023-09-27): "a 7.3B parameter model"
    assert float(total) == pytest.approx(7.3e9, rel=0.01)
    assert values["kv_bytes_per_token"].value == 0  # nothing grows past the window
    per_token = 32 * 2 * kv_heads * hd * 2
    assert values["kv_window_bytes_per_token"].value == per_token
    for context in (1000, 4096, 32_768):
        assert _kv_at(lecture_library, path, context) == per_token * min(context, 4096)


# --------------------------------------------------------------------------------------------------
# --model ORG/NAME from the local Hugging Face cache (offline)


def _fake_cache(root: Path, model_id: str, config: dict) -> Path:
    repo = root / "hub" / ("models--" + model_id.replace("/", "--"))
    snap = repo / "snapshots" / "0123abcd"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps(config))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    return snap / "config.json"


def test_hf_id_from_the_local_cache(lecture_library, tmp_path, monkeypatch) -> None:
    _fake_cache(tmp_path, "mistralai/Mistral-7B-v0.1", _config("mistral-7b-v0.1.json"))
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    sc = build_scenario(lecture_library, model="mistralai/Mistral-7B-v0.1")
    assert sc.value("attention_window") == 4096
    assert "mistralai/Mistral-7B-v0.1" in sc.name
    with pytest.raises(ScenarioError, match="not in the local Hugging Face cache") as err:
        build_scenario(lecture_library, model="mistralai/Mixtral-8x7B-v0.1")
    assert "\n" not in str(err.value)


def test_cli_eval_explain_and_notes(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DERIVE_CACHE_DIR", str(tmp_path / "cache"))
    path = str(CONFIGS / "mistral-7b-v0.1.json")
    assert main(["eval", "kv_bytes_per_sequence", "--model", path, "--set", "context=8192 token/seq", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "attention_window" in out and "model config" in out and "--set" in out
    assert "note:" in out
    assert main(["eval", "kv_bytes_per_sequence", "--model", path, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["notes"] and isinstance(data["notes"], list)


# --------------------------------------------------------------------------------------------------
# bad input: one line naming the field


def test_absurd_layer_count_is_one_line() -> None:
    config = _config("llama-3.1-8b.json") | {"num_hidden_layers": 10**9}
    with pytest.raises(ScenarioError, match="num_hidden_layers") as err:
        model_values(config)
    assert "\n" not in str(err.value)


def test_unknown_model_type_with_known_fields_is_read_with_a_note() -> None:
    config = _config("llama-3.1-8b.json") | {"model_type": "my_llama", "architectures": ["MyLlamaForCausalLM"]}
    values = model_values(config)
    assert values["kv_bytes_per_token"].value == 131_072
    assert any("read as llama" in n for n in values.notes)


def test_unreadable_config_names_the_missing_field() -> None:
    config = {k: v for k, v in _config("llama-3.1-8b.json").items() if k != "num_attention_heads"}
    with pytest.raises(ScenarioError, match="num_attention_heads"):
        model_values(config)


def test_layout_helpers_agree_with_model_values() -> None:
    config = _config("mistral-7b-v0.1.json")
    layout = kv_layout(config)
    assert layout.window == 4096 and layout.window_layers == 32 and layout.full_layers == 0
    assert layout.bytes_per_sequence(10_000, 2) == 4096 * 32 * 2 * 8 * 128 * 2
    assert param_breakdown(config).total == model_values(config)["params_total"].value


# --------------------------------------------------------------------------------------------------
# today's architectures: published counts (in the publisher's convention, within its rounding) and KV
# bytes per sequence by hand at several contexts


def _gqa(layers: int, kv_heads: int, head_dim: int, e: int = 2) -> int:
    """Bytes per token of ``layers`` attention layers keeping K and V."""
    return layers * 2 * kv_heads * head_dim * e


def _deltanet(layers: int, v_heads: int, k_heads: int, k_dim: int, v_dim: int, kernel: int, e: int = 2) -> int:
    """Bytes per sequence of Gated DeltaNet layers: recurrent state plus convolution state."""
    conv_dim = 2 * k_heads * k_dim + v_heads * v_dim
    return layers * (v_heads * k_dim * v_dim + conv_dim * (kernel - 1)) * e


B = 1e9
# fixture: (total, active, which active count the publisher states, relative tolerance, kv(L) by hand)
#   active conventions: "compute" = params_active (no input embedding, output head kept),
#   "with_embedding" = params_active + input embedding, "non_embedding" = no embedding at all.
#   The tolerance is the publisher's rounding (or the parts it counts and the reader does not, named).
ARCHITECTURES = {
    # OpenAI, gpt-oss model card (arXiv:2508.10925), table 1: 116.83B total, 5.13B active
    "gpt-oss-120b.json": (116.83 * B, 5.13 * B, "compute", 0.002,
                          lambda L: _gqa(18, 8, 64) * L + _gqa(18, 8, 64) * min(L, 128)),
    # same table: 20.91B total, 3.61B active
    "gpt-oss-20b.json": (20.91 * B, 3.61 * B, "compute", 0.002,
                         lambda L: _gqa(12, 8, 64) * L + _gqa(12, 8, 64) * min(L, 128)),
    # Qwen3-Next-80B-A3B model card: "80B in total and 3B activated"; 79.67B and 3.25B (non-embedding)
    # counted, each the publisher's figure to its one significant digit (a rounded name, 8 % for 3.25 -> 3)
    "qwen3-next-80b-a3b-instruct.json": (80 * B, 3 * B, "non_embedding", 0.085,
                                         lambda L: _gqa(12, 2, 256) * L + _deltanet(36, 32, 16, 128, 128, 4)),
    # Qwen3.5-397B-A17B model card: 397B total, 17B activated (language model; the vision encoder, counted in
    # the 397B, is not)
    "qwen3.5-397b-a17b.json": (397 * B, 17 * B, "with_embedding", 0.03,
                               lambda L: _gqa(15, 2, 256) * L + _deltanet(45, 64, 16, 128, 128, 4)),
    # DeepSeek-V3.2 (deepseek-ai/DeepSeek-V3.2-Exp README: the V3.1-Terminus layout plus the indexer; V3 README:
    # "671B total parameters with 37B activated"); indexer keys FP8 + one FP32 scale per 128 per layer
    "deepseek-v3.2.json": (671 * B, 37 * B, "compute", 0.015,
                           lambda L: (61 * (512 + 64) * 2 + 61 * (128 + 4)) * L),
    # Moonshot AI, Kimi-K2 README: "1 trillion total parameters", "32 billion activated parameters"
    "kimi-k2-instruct.json": (1000 * B, 32 * B, "compute", 0.03, lambda L: 61 * (512 + 64) * 2 * L),
    # DeepSeek-V2 README: DeepSeek-V2-Lite 15.7B total, 2.4B activated
    "deepseek-v2-lite.json": (15.7 * B, 2.4 * B, "compute", 0.025, lambda L: 27 * (512 + 64) * 2 * L),
    # Z.ai GLM-4.5 model card: 355B total, 32B active (the MTP layer, about 5.7B of the 355B, is not counted)
    "glm-4.5.json": (355 * B, 32 * B, "non_embedding", 0.01, lambda L: _gqa(92, 8, 128) * L),
    # Meta Llama 4 model card: Scout 17B active, 109B total; Maverick 17B active, 400B total (the vision
    # encoder, counted in the totals, is not here)
    "llama-4-scout-17b-16e.json": (109 * B, 17 * B, "with_embedding", 0.015,
                                   lambda L: _gqa(12, 8, 128) * L + _gqa(36, 8, 128) * min(L, 8192)),
    "llama-4-maverick-17b-128e.json": (400 * B, 17 * B, "with_embedding", 0.015,
                                       lambda L: _gqa(12, 8, 128) * L + _gqa(36, 8, 128) * min(L, 8192)),
    # Mistral AI, "Mixtral of experts" (mistral.ai/news/mixtral-of-experts): 46.7B total, 12.9B used per token
    "mixtral-8x7b-v0.1.json": (46.7 * B, 12.9 * B, "with_embedding", 0.002, lambda L: _gqa(32, 8, 128) * L),
    # Qwen2-57B-A14B model card: 57B parameters, 14B activated
    "qwen2-57b-a14b.json": (57 * B, 14 * B, "with_embedding", 0.02, lambda L: _gqa(28, 4, 128) * L),
    # Google, Gemma 3 technical report (arXiv:2503.19786), table 1: 27B, 25,600M non-embedding parameters;
    # five local layers (1,024-token window) to one global
    "gemma-3-27b-it.json": (27 * B, 25.6 * B, "non_embedding", 0.002,
                            lambda L: _gqa(10, 16, 128) * L + _gqa(52, 16, 128) * min(L, 1024)),
    # TII: Falcon-7B "a 7B parameters causal decoder-only model" (multi-query: one KV head of 64)
    "falcon-7b.json": (7 * B, 7 * B, "compute", 0.02, lambda L: _gqa(32, 1, 64) * L),
    # TII: Falcon-40B "a 40B parameters causal decoder-only model" (8 KV groups); 41.3B counted, a rounded name
    "falcon-40b.json": (40 * B, 40 * B, "compute", 0.035, lambda L: _gqa(60, 8, 64) * L),
    # Google, Gemma 2 report (arXiv:2408.00118): 9B (9.24B); alternate layers local (4,096), float32 weights
    "gemma-2-9b.json": (9.24 * B, 9.24 * B, "compute", 0.002,
                        lambda L: _gqa(21, 8, 256, 4) * L + _gqa(21, 8, 256, 4) * min(L, 4096)),
    # Mistral AI: "Mistral 7B is a 7.3B parameter model"; every layer on a 4,096 window
    "mistral-7b-v0.1.json": (7.3 * B, 7.3 * B, "with_embedding", 0.01, lambda L: _gqa(32, 8, 128) * min(L, 4096)),
    # Meta: Llama 3.1 8B (8.03B)
    "llama-3.1-8b.json": (8.03 * B, 8.03 * B, "with_embedding", 0.002, lambda L: _gqa(32, 8, 128) * L),
}


@pytest.mark.parametrize("fixture", sorted(ARCHITECTURES))
def test_published_parameter_counts(fixture: str) -> None:
    total, active, convention, tol, _ = ARCHITECTURES[fixture]
    config = _config(fixture)
    values, pb = model_values(config), param_breakdown(config)
    assert float(values["params_total"].value) == pytest.approx(total, rel=tol)
    counted = {"compute": pb.active, "with_embedding": pb.active_with_embedding,
               "non_embedding": pb.active_non_embedding}[convention]
    assert float(counted) == pytest.approx(active, rel=tol)
    assert values["params_active"].value == pb.active  # what the compute formulas use
    assert values["params_embedding"].value == pb.embedding


@pytest.mark.parametrize("fixture", sorted(ARCHITECTURES))
def test_kv_bytes_by_hand_at_several_contexts(fixture: str) -> None:
    hand = ARCHITECTURES[fixture][4]
    layout = kv_layout(_config(fixture))
    e = model_values(_config(fixture))["bytes_per_kv_element"].value
    for context in (1, 128, 129, 4096, 4097, 8192, 8193, 131_072, 1_000_000):
        assert layout.bytes_per_sequence(context, e) == hand(context), context


@pytest.mark.parametrize("fixture", ["gpt-oss-120b.json", "qwen3-next-80b-a3b-instruct.json",
                                     "llama-4-scout-17b-16e.json", "deepseek-v3.2.json", "gemma-2-9b.json",
                                     "gemma-3-27b-it.json"])
def test_engine_kv_per_sequence_matches_hand_count(lecture_library, fixture: str) -> None:
    hand = ARCHITECTURES[fixture][4]
    for context in (100, 10_000, 200_000):
        assert _kv_at(lecture_library, CONFIGS / fixture, context) == hand(context)


def test_gpt_oss_mxfp4_bytes_per_param() -> None:
    config = _config("gpt-oss-120b.json")
    pb, values = param_breakdown(config), model_values(config)
    # experts in MXFP4 (4.25 bits); attention, routers, embedding and head in bf16 (modules_to_not_convert)
    expected = Fraction(pb.routed_experts * 17, 32) + 2 * (pb.total - pb.routed_experts)
    assert values["bytes_per_param"].value == expected / pb.total
    assert 60e9 < float(expected) < 66e9  # the checkpoint is about 65 GB
    assert "bytes_per_param" in values and values["bytes_per_param"].native


def test_deepseek_fp8_block_scales() -> None:
    config = _config("deepseek-v3.2.json")
    pb, values = param_breakdown(config), model_values(config)
    kept = pb.embedding + pb.lm_head + pb.router
    expected = (pb.total - kept) * (1 + Fraction(4, 128 * 128)) + 2 * kept
    assert values["bytes_per_param"].value == expected / pb.total
    assert values["bytes_per_kv_element"].value == 2  # the cache stays in bf16


@pytest.mark.parametrize(("quant", "per_weight"), [
    ({"quant_method": "awq", "bits": 4, "group_size": 128}, Fraction(1, 2) + Fraction(5, 2) / 128),
    ({"quant_method": "gptq", "bits": 4, "group_size": 32}, Fraction(1, 2) + Fraction(5, 2) / 32),
    ({"quant_method": "gptq", "bits": 8, "group_size": 128}, 1 + Fraction(3) / 128),
    ({"quant_method": "fp8"}, Fraction(1)),
])
def test_int_and_fp8_quantization(quant: dict, per_weight: Fraction) -> None:
    config = _config("llama-3.1-8b.json") | {"quantization_config": quant}
    pb, values = param_breakdown(config), model_values(config)
    kept = pb.embedding + pb.lm_head
    assert values["bytes_per_param"].value == ((pb.total - kept) * per_weight + 2 * kept) / pb.total
    assert values["kv_bytes_per_token"].value == 131_072  # the KV cache is not quantized by these


def test_fp8_kv_cache_quantization() -> None:
    config = _config("llama-3.1-8b.json") | {"quantization_config": {"quant_algo": "FP8",
                                                                       "kv_cache_quant_algo": "FP8"}}
    assert model_values(config)["kv_bytes_per_token"].value == 65_536


def test_layer_kinds_are_counted_arithmetically() -> None:
    # 10**5 layers (the cap) read instantly: no per-layer list is built
    config = _config("qwen3-next-80b-a3b-instruct.json") | {"num_hidden_layers": 100_000}
    layout = kv_layout(config)
    assert layout.full_layers == 25_000 and layout.state_layers == 75_000
    with pytest.raises(ScenarioError, match="num_hidden_layers"):
        kv_layout(config | {"num_hidden_layers": 100_001})


def test_windowed_and_hybrid_claims_hold() -> None:
    from derive.checking.checker import Checker
    from derive.model.loader import load_library

    lib = load_library()
    report = Checker(lib, build_scenario(lib)).check(["capacity.windowed_kv_bounded",
                                                      "context.hybrid_kv_at_long_context",
                                                      "context.hybrid_kv_short_context"])
    verdicts = {r.id: r.verdict for r in report.results}
    assert verdicts == {"capacity.windowed_kv_bounded": "proved", "context.hybrid_kv_at_long_context": "proved",
                        "context.hybrid_kv_short_context": "refuted"}


def test_refinedweb_field_names_read_as_falcon() -> None:
    falcon = _config("falcon-40b.json")
    old = {k: v for k, v in falcon.items() if k not in ("num_attention_heads", "num_hidden_layers", "num_kv_heads",
                                                         "model_type", "architectures")}
    old |= {"model_type": "RefinedWeb", "architectures": ["RWForCausalLM"], "n_head": 128, "n_layer": 60,
            "n_head_kv": 8}
    assert model_values(old)["params_total"] == model_values(falcon)["params_total"]
    assert model_values(old)["kv_bytes_per_token"].value == _gqa(60, 8, 64)


def test_hardware_layer_and_model_dtype_in_explain(lecture_library) -> None:
    sc = build_scenario(lecture_library, hardware="h100-sxm-fp8", model=str(CONFIGS / "llama-3.1-8b.json"))
    rows = {r["name"]: r for r in sc.explain(lecture_library)}
    assert rows["flops"]["layer"] == "hardware preset"
    # the model's bf16 weights replace the FP8 preset's byte per weight, and a note says so
    assert rows["bytes_per_param"]["layer"] == "model config" and sc.value("bytes_per_param") == 2
    assert any(n.startswith("bytes_per_param") and "h100-sxm-fp8" in n for n in sc.notes)


def test_show_json_carries_notes(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DERIVE_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["show", "capacity.windowed_kv_bounded", "--model", str(CONFIGS / "gpt-oss-20b.json"),
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"] == "proved"
    assert any("sinks" in n for n in data["notes"])


@pytest.mark.parametrize("with_hub", [True, False])
def test_hf_cache_layout_with_and_without_huggingface_hub(tmp_path, monkeypatch, with_hub: bool) -> None:
    from theorems.hf_config import find_cached_config

    expected = _fake_cache(tmp_path, "openai/gpt-oss-20b", _config("gpt-oss-20b.json"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    if not with_hub:
        monkeypatch.setitem(__import__("sys").modules, "huggingface_hub", None)  # import fails: plain layout
    assert find_cached_config("openai/gpt-oss-20b").resolve() == expected.resolve()
    for bad in ("gpt-oss-20b", "a/b/c", "../x", "openai/.."):
        with pytest.raises(ScenarioError):
            find_cached_config(bad)


def test_check_json_and_text_carry_notes(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DERIVE_CACHE_DIR", str(tmp_path / "cache"))
    args = ["check", "capacity.windowed_kv_bounded", "--model", str(CONFIGS / "qwen3-next-80b-a3b-instruct.json")]
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert any("KV by layer kind" in n for n in data["notes"])
    assert data["scenario"]["notes"] == data["notes"]
    assert main(args) == 0
    assert "note: " in capsys.readouterr().out


@st.composite
def _hybrid_configs(draw: st.DrawFn) -> dict:
    kv, group, hd = draw(st.integers(1, 8)), draw(st.integers(1, 4)), draw(st.sampled_from([64, 128, 256]))
    layers = draw(st.integers(1, 120))
    kinds = draw(st.lists(st.sampled_from(["full_attention", "sliding_attention"]), min_size=layers,
                          max_size=layers))
    return {"model_type": "gemma3_text", "hidden_size": 64 * kv * group, "num_hidden_layers": layers,
            "num_attention_heads": kv * group, "num_key_value_heads": kv, "head_dim": hd,
            "intermediate_size": 256, "vocab_size": 1000, "sliding_window": draw(st.integers(1, 8192)),
            "layer_types": kinds, "torch_dtype": draw(st.sampled_from(["bfloat16", "float32"]))}


@settings(max_examples=40, deadline=None)
@given(config=_hybrid_configs(), contexts=st.lists(st.integers(1, 10**7), min_size=2, max_size=4))
def test_kv_per_sequence_is_the_sum_over_layers(config: dict, contexts: list[int]) -> None:
    # the arithmetic by kind equals a plain sum over the listed layers, and never falls as the context grows
    values, layout = model_values(config), kv_layout(config)
    e = values["bytes_per_kv_element"].value
    per_layer = 2 * config["num_key_value_heads"] * config["head_dim"] * e
    for context in contexts:
        plain = sum(per_layer * (context if kind == "full_attention" else min(context, config["sliding_window"]))
                    for kind in config["layer_types"])
        assert layout.bytes_per_sequence(context, e) == plain
    ordered = sorted(contexts)
    sizes = [layout.bytes_per_sequence(c, e) for c in ordered]
    assert sizes == sorted(sizes)
