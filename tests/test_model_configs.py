"""Real config.json files of today's architectures (issue 9): published parameter counts, KV bytes per
sequence by layer kind at several contexts (hand counts), native precision, notes and --explain,
``--model ORG/NAME`` from a local Hugging Face cache.

Fixtures in ``tests/fixtures/configs/`` named after the Hugging Face id hold the publisher's config.json,
verbatim or transcribed (``SOURCES.md`` there says which, and where each was copied from).  Hand counts are written
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
from theorems.configs import kv_layout, load_config_json, model_values, param_breakdown
from theorems.configs.reader import checkpoint_bytes_per_param

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
    assert rows["batch"]["layer"] == "deployment default"  # not the lecture's 2,000 sequences
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


def test_config_finder_is_a_declared_library_attribute(tmp_path) -> None:
    """``--model ORG/NAME`` asks the library's MODEL_CONFIG_FINDER (a declared attribute, checked when the library
    loads); a library without one says it cannot look ids up; a finder that is no function is a LibraryError."""
    from derive.errors import LibraryError
    from derive.model.loader import load_library

    config = tmp_path / "found.json"
    config.write_text(json.dumps(_config("mistral-7b-v0.1.json")))
    lib_dir = tmp_path / "finderlib"
    lib_dir.mkdir()
    (lib_dir / "__init__.py").write_text(
        "from pathlib import Path\n"
        "from theorems import FIGURES, TOPICS, PRESET_DIRS, MODEL_CONFIG_READER\n"
        f"MODEL_CONFIG_FINDER = lambda model_id: Path({str(config)!r})\n")
    library = load_library([str(lib_dir)])
    assert library.model_config_finder is not None
    assert build_scenario(library, model="acme/widget").value("attention_window") == 4096
    library.model_config_finder = None
    with pytest.raises(ScenarioError, match="cannot look up Hugging Face ids"):
        build_scenario(library, model="acme/widget")
    (lib_dir / "__init__.py").write_text("from theorems import FIGURES, TOPICS\nMODEL_CONFIG_FINDER = 'hub'\n")
    with pytest.raises(LibraryError, match="MODEL_CONFIG_FINDER must be a function"):
        load_library([str(lib_dir)])


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
    # Google, Gemma 2 report (arXiv:2408.00118): 9B (9.24B); alternate layers local (4,096), float32 weights, served
    # (and cached) in 16 bits
    "gemma-2-9b.json": (9.24 * B, 9.24 * B, "compute", 0.002,
                        lambda L: _gqa(21, 8, 256) * L + _gqa(21, 8, 256) * min(L, 4096)),
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
    assert checkpoint_bytes_per_param(config) == expected / pb.total
    assert 60e9 < float(expected) < 66e9  # the checkpoint is about 65 GB
    # a step reads the head, attention and routers (bf16) and between one token's experts and all of them: the
    # least mean over those sets (all of them, here) keeps the floors below what any step reads
    wide = pb.lm_head + pb.attention + pb.router
    read = wide * 2 + Fraction(pb.routed_experts * 17, 32)
    assert values["bytes_per_param"].value == read / (wide + pb.routed_experts)
    assert "bytes_per_param" in values and values["bytes_per_param"].native


def test_deepseek_fp8_block_scales() -> None:
    config = _config("deepseek-v3.2.json")
    pb, values = param_breakdown(config), model_values(config)
    kept = pb.embedding + pb.lm_head + pb.router
    expected = (pb.total - kept) * (1 + Fraction(4, 128 * 128)) + 2 * kept
    assert checkpoint_bytes_per_param(config) == expected / pb.total
    assert values["bytes_per_param"].value < expected / pb.total  # the step never reads the input table whole
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
    assert checkpoint_bytes_per_param(config) == ((pb.total - kept) * per_weight + 2 * kept) / pb.total
    assert values["bytes_per_param"].value * pb.active == (pb.active - pb.lm_head) * per_weight + 2 * pb.lm_head
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
    from theorems.configs import find_cached_config

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
    assert set(data["notes"]) <= set(data["scenario"]["notes"])  # the notes about inputs the claims read
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


# --------------------------------------------------------------------------------------------------
# the counts against real checkpoints: the tensor totals of gogongxt/python's checkpoint reports
# (scripts/models/*.md, "参数总量", every tensor of the safetensors files), less the tensors the reader does
# not count, written out from the shapes those reports list.  Equality is exact: the reader counts exactly
# the weight matrices of the checkpoint.

_QWEN3_30B_A3B = {  # Qwen/Qwen3-30B-A3B-Instruct-2507 as transformers 5.7 writes it (num_local_experts)
    "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 2048,
    "num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
    "intermediate_size": 6144, "moe_intermediate_size": 768, "num_local_experts": 128, "num_experts_per_tok": 8,
    "decoder_sparse_step": 1, "mlp_only_layers": [], "max_window_layers": 48, "sliding_window": None,
    "use_sliding_window": False, "vocab_size": 151936, "tie_word_embeddings": False, "dtype": "bfloat16"}


def _deepseek_v32_not_counted() -> int:
    L = 62  # 61 layers and the multi-token-prediction layer 61
    fp8_scales = (3 * (56 * 144 + 144 * 56 * 2) + L * (5 * 56 + 256 * 4 + 56 * 128 + 12 * 56 + 192 * 12 + 56 + 64 * 12)
                  + 59 * 256 * (56 * 16 + 16 * 56 * 2) + 59 * (56 * 16 + 16 * 56 * 2))
    norms = L * (7168 * 2 + 128 * 2 + 512 + 1536) + 7168 * 4  # + enorm, hnorm, shared_head.norm, model.norm
    e_score_bias = 59 * 256
    mtp = (7168 * 1536 + 24576 * 1536 + 576 * 7168 + 32768 * 512 + 7168 * 16384  # its attention
           + 64 * 7168 + 128 * 7168 + 8192 * 1536  # its indexer
           + 256 * 3 * 2048 * 7168 + 256 * 7168 + 3 * 2048 * 7168  # its experts, router, shared expert
           + 7168 * 14336 + 2 * 129280 * 7168)  # eh_proj, its embedding and head
    return fp8_scales + norms + e_score_bias + mtp


def _kimi_k2_not_counted() -> int:
    fp8_scales = (61 * (5 * 56 + 128 * 4 + 56 * 64 + 12 * 56 + 96 * 12) + (56 * 144 + 144 * 56 * 2)
                  + 60 * 384 * (56 * 16 + 16 * 56 * 2) + 60 * (56 * 16 + 16 * 56 * 2))
    return fp8_scales + 61 * 56 + 60 * 384 + 61 * (7168 * 2 + 512 + 1536) + 7168  # inv_freq, biases, norms


def _qwen3_next_not_counted() -> int:
    norms = 48 * 2 * 2048 + 2048 + 36 * (32 + 32 + 128) + 12 * (256 + 256)  # + A_log, dt_bias, gated norm, q/k norm
    mtp = (2048 * 4096 + 512 * 3 * 512 * 2048 + 512 * 2048 + 3 * 512 * 2048 + 2048  # fc, experts, router, shared
           + 8192 * 2048 + 2 * 512 * 2048 + 4096 * 2048 + 2 * 256 + 5 * 2048)  # attention, q/k norms, its norms
    return norms + mtp


def _gpt_oss_20b_not_counted() -> int:
    # MXFP4 blocks hold two values per uint8 and one uint8 scale per 32 values: the report counts bytes there
    experts = 24 * 32 * (5760 * 2880 + 2880 * 2880)
    biases = 24 * 32 * (2880 + 5760 + 1) + 24 * (4096 + 512 + 512 + 2880) + 24 * 64 + 24 * 2 * 2880 + 2880
    return biases - experts + experts // 2 + experts // 32  # (sinks and norms included in biases)


def _glm_45_not_counted() -> int:
    L = 93  # 92 layers and the multi-token-prediction layer 92
    fp8_scales = (3 * (5120 + 12288 * 2) + L * (1024 + 5120 + 12288 + 1024) + 90 * 160 * (5120 + 1536 * 2)
                  + 90 * (5120 + 1536 * 2) + 151552)
    biases = L * (1024 + 12288 + 1024) + 90 * 160  # q, k, v biases; e_score_correction_bias
    norms = L * (5120 * 2 + 128 * 2) + 5120 * 4
    mtp = (5120 * 12288 * 2 + 5120 * 1024 * 2 + 160 * 3 * 5120 * 1536 + 160 * 5120 + 3 * 5120 * 1536
           + 5120 * 10240 + 2 * 151552 * 5120)
    return fp8_scales + biases + norms + mtp


_GLM_47_FLASH = {  # zai-org/GLM-4.7-Flash as transformers 5.7 writes it (glm4_moe_lite: MLA, mlp_layer_types)
    "architectures": ["Glm4MoeLiteForCausalLM"], "model_type": "glm4_moe_lite", "hidden_size": 2048,
    "num_hidden_layers": 47, "num_attention_heads": 20, "num_key_value_heads": 20, "q_lora_rank": 768,
    "kv_lora_rank": 512, "qk_nope_head_dim": 192, "qk_rope_head_dim": 64, "qk_head_dim": 256, "v_head_dim": 256,
    "intermediate_size": 10240, "moe_intermediate_size": 1536, "n_routed_experts": 64, "n_shared_experts": 1,
    "num_experts_per_tok": 4, "first_k_dense_replace": 1, "mlp_layer_types": ["dense"] + ["sparse"] * 46,
    "num_nextn_predict_layers": 1, "vocab_size": 154880, "tie_word_embeddings": False, "dtype": "bfloat16"}


def _glm_47_flash_not_counted() -> int:
    d, vocab = 2048, 154880
    attention = 768 * d + 5120 * 768 + 576 * d + 8960 * 512 + d * 5120  # q_a, q_b, kv_a, kv_b, o
    mtp = attention + 64 * 3 * d * 1536 + 64 * d + 3 * d * 1536 + d * 4096 + 2 * vocab * d  # + eh_proj, embed, head
    norms = 48 * (2 * d + 512 + 768) + 4 * d  # 47 layers and the MTP layer; + enorm, hnorm, shared_head.norm, norm
    return mtp + norms + 47 * 64  # + e_score_correction_bias


_QWEN3_VL_VISION = {"deepstack_visual_indexes": [8, 16, 24], "depth": 27, "hidden_size": 1152,
                    "intermediate_size": 4304, "num_heads": 16, "num_position_embeddings": 2304, "patch_size": 16,
                    "spatial_merge_size": 2, "temporal_patch_size": 2}
# Qwen/Qwen3-VL-8B-Instruct and Qwen3-VL-30B-A3B-Instruct as transformers 5.7 writes them: the MoE one's text_config
# says tie_word_embeddings true (the text class's default), its top level false, and the checkpoint has an lm_head
_QWEN3_VL_8B = {
    "architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl", "tie_word_embeddings": False,
    "text_config": {"model_type": "qwen3_vl_text", "hidden_size": 4096, "num_hidden_layers": 36,
                    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288,
                    "vocab_size": 151936, "dtype": "bfloat16"},
    "vision_config": {**_QWEN3_VL_VISION, "model_type": "qwen3_vl_vision", "out_hidden_size": 4096}}
_QWEN3_VL_30B_A3B = {
    "architectures": ["Qwen3VLMoeForConditionalGeneration"], "model_type": "qwen3_vl_moe", "tie_word_embeddings": False,
    "text_config": {"model_type": "qwen3_vl_moe_text", "hidden_size": 2048, "num_hidden_layers": 48,
                    "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 6144,
                    "moe_intermediate_size": 768, "num_local_experts": 128, "num_experts_per_tok": 8,
                    "decoder_sparse_step": 1, "mlp_only_layers": [], "sliding_window": None,
                    "tie_word_embeddings": True, "vocab_size": 151936, "dtype": "bfloat16"},
    "vision_config": {**_QWEN3_VL_VISION, "model_type": "qwen3_vl_moe_vision", "out_hidden_size": 2048}}


def _qwen3_vl_not_counted(d: int, layers: int) -> int:
    """The vision tower (27 blocks of 1152, three deepstack mergers and the merger into the width ``d``, the patch
    and position embeddings, with their biases and norms) and the language model's norms."""
    blocks = 27 * (3456 * 1152 + 3456 + 1152 * 1152 + 1152 + 2 * (4304 * 1152) + 4304 + 1152 + 4 * 1152)
    mergers = 3 * (4608 * 4608 + 4608 + d * 4608 + d + 2 * 4608) + 4608 * 4608 + 4608 + d * 4608 + d + 2 * 1152
    vision = blocks + mergers + 1152 * 3 * 2 * 16 * 16 + 1152 + 2304 * 1152
    return vision + layers * (2 * d + 2 * 128) + d


_GLM_45V = {  # zai-org/GLM-4.5V as transformers 5.7 writes it: GLM-4.5's layers in its text_config
    "architectures": ["Glm4vMoeForConditionalGeneration"], "model_type": "glm4v_moe", "tie_word_embeddings": False,
    "text_config": {"model_type": "glm4v_moe_text", "attention_bias": True, "first_k_dense_replace": 1,
                    "head_dim": 128, "hidden_size": 4096, "intermediate_size": 10944, "moe_intermediate_size": 1408,
                    "n_routed_experts": 128, "n_shared_experts": 1, "num_attention_heads": 96,
                    "num_experts_per_tok": 8, "num_hidden_layers": 46, "num_key_value_heads": 8,
                    "partial_rotary_factor": 0.5, "tie_word_embeddings": False, "use_qk_norm": False,
                    "vocab_size": 151552, "dtype": "bfloat16"},
    "vision_config": {"model_type": "glm4v_moe_vision", "depth": 24, "hidden_size": 1536, "intermediate_size": 10944,
                      "num_heads": 12, "out_hidden_size": 4096, "patch_size": 14, "spatial_merge_size": 2}}


def _glm_45v_not_counted() -> int:
    d, v = 4096, 1536
    blocks = 24 * (4608 * v + v * v + 3 * 4096 * v + 2 * v)  # qkv, proj, gated MLP, two norms
    vision = (blocks + 4096 * v * 4 + 4096 + 576 * v + 3 * d * 10944 + 2 * d + d * d  # downsample, positions, merger
              + v * 3 * 2 * 14 * 14 + v + 2 * v)  # patch embedding, two norms
    return vision + 46 * (2 * d + 12288 + 2 * 1024) + d + 45 * 128  # norms, q/k/v biases, e_score_correction_bias


def _glm_5_not_counted(indexer_layers: int) -> int:
    """GLM-5.x (glm_moe_dsa): the norms of 78 layers and the multi-token-prediction layer 78 (the indexer's
    k_norm weight and bias where a layer has an indexer), e_score_correction_bias, and layer 78 itself (its
    attention, indexer, experts, router, shared expert and eh_proj; it shares the embedding and head)."""
    d = 6144
    norms = 79 * (2 * d + 512 + 2048) + indexer_layers * 2 * 128 + 4 * d
    mtp = (2048 * d + 16384 * 2048 + 576 * d + 28672 * 512 + d * 16384 + 4096 * 2048 + 128 * d + 32 * d
           + 256 * 3 * 2048 * d + 256 * d + 3 * 2048 * d + d * 12288)
    return norms + 76 * 256 + mtp


CHECKPOINTS = {
    # (config, the report's tensor total, what the reader does not count, report path @ commit)
    # GLM-5.2's indexer on 21 layers and layer 78, as its indexer_types and the tensors list them
    "glm-5.1": ("glm-5.1.json", 753_864_139_008, _glm_5_not_counted(79), "scripts/models/glm_5.1.md@ec99626"),
    "glm-5.2": ("glm-5.2.json", 753_329_940_480, _glm_5_not_counted(22), "scripts/models/glm_5.2.md@b521199"),
    "glm-4.5v": (_GLM_45V, 107_710_933_120, _glm_45v_not_counted(), "scripts/models/glm_4.5v.md@cbff706"),
    "qwen3-vl-8b": (_QWEN3_VL_8B, 8_767_123_696, _qwen3_vl_not_counted(4096, 36),
                    "scripts/models/qwen3_vl_8b_instruct.md@cbff706"),
    "qwen3-vl-30b-a3b": (_QWEN3_VL_30B_A3B, 31_070_754_032, _qwen3_vl_not_counted(2048, 48),
                         "scripts/models/qwen3_vl_30b_a3b_instruct.md@cbff706"),
    "glm-4.7-flash": (_GLM_47_FLASH, 31_221_488_576, _glm_47_flash_not_counted(),
                      "scripts/models/glm_4.7_flash.md@cbff706"),
    "deepseek-v2-lite": ("deepseek-v2-lite.json", 15_706_484_224, 27 * (2 * 2048 + 512) + 2048,
                         "scripts/DeepSeek-V2-Lite-Chat.md@9582923"),
    "qwen3-next-80b-a3b": ("qwen3-next-80b-a3b-instruct.json", 81_324_862_720, _qwen3_next_not_counted(),
                           "scripts/models/qwen3_next_80b_a3b_instruct.md@ec99626"),
    "deepseek-v3.2": ("deepseek-v3.2.json", 685_396_921_376, _deepseek_v32_not_counted(),
                      "scripts/models/deepseek_v3.2.md@cbff706"),
    "kimi-k2-instruct": ("kimi-k2-instruct.json", 1_026_470_731_056, _kimi_k2_not_counted(),
                         "scripts/models/kimi_k2_instruct.md@ec99626"),
    "gpt-oss-20b": ("gpt-oss-20b.json", 11_956_805_184, _gpt_oss_20b_not_counted(),
                    "scripts/models/gpt_oss_20b.md@cbff706"),
    "glm-4.5": ("glm-4.5.json", 358_458_543_424, _glm_45_not_counted(), "scripts/models/glm_4.5_fp8.md@cbff706"),
    "qwen3-30b-a3b": (_QWEN3_30B_A3B, 30_532_122_624, 48 * (2 * 2048 + 2 * 128) + 2048,
                      "scripts/models/qwen3_30b_a3b_instruct_2507.md@cbff706"),
}


@pytest.mark.parametrize("name", sorted(CHECKPOINTS))
def test_counts_equal_the_checkpoint_tensors(name: str) -> None:
    config, tensors, not_counted, _ = CHECKPOINTS[name]
    config = _config(config) if isinstance(config, str) else config
    assert model_values(config)["params_total"].value == tensors - not_counted


def test_qwen3_30b_a3b_published() -> None:
    # Qwen3-30B-A3B model card: "30.5B in total and 3.3B activated" (with embeddings), 29.9B non-embedding
    pb = param_breakdown(_QWEN3_30B_A3B)
    assert round(pb.total / 1e8) == 305 and round(pb.total_non_embedding / 1e8) == 299
    assert float(pb.active_with_embedding) == pytest.approx(3.3e9, rel=0.02)
    # KV: 48 layers * 2 * 4 kv heads * 128 * 2 bytes; no window (use_sliding_window false)
    assert model_values(_QWEN3_30B_A3B)["kv_bytes_per_token"].value == 48 * 2 * 4 * 128 * 2


# --------------------------------------------------------------------------------------------------
# bytes per weight against the size of quantized checkpoints (the same reports' "张量累计大小", in GiB)

_QWEN3_32B = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 5120,
              "num_hidden_layers": 64, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128,
              "intermediate_size": 25600, "vocab_size": 151936, "tie_word_embeddings": False}
_QWEN3_8B = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 4096,
             "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
             "intermediate_size": 12288, "vocab_size": 151936, "tie_word_embeddings": False}
QUANTIZED = {
    # Qwen/Qwen3-32B-AWQ (scripts/qwen3_32b_awq.md@6a3ceab): 18.00 GiB
    "awq": (_QWEN3_32B | {"dtype": "float16", "quantization_config": {
        "bits": 4, "group_size": 128, "modules_to_not_convert": None, "quant_method": "awq", "version": "gemm",
        "zero_point": True}}, 18.00),
    # Qwen/Qwen3-8B-FP8 (scripts/qwen3_8b_fp8.md@d881ab7): 8.79 GiB
    "fp8": (_QWEN3_8B | {"dtype": "bfloat16", "quantization_config": {
        "activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]}}, 8.79),
    # openai/gpt-oss-20b (scripts/models/gpt_oss_20b.md@cbff706): 12.82 GiB (13 MB of biases not counted)
    "mxfp4": ("gpt-oss-20b.json", 12.82),
}


@pytest.mark.parametrize("scheme", sorted(QUANTIZED))
def test_bytes_per_weight_reproduce_quantized_checkpoints(scheme: str) -> None:
    config, gib = QUANTIZED[scheme]
    config = _config(config) if isinstance(config, str) else config
    values = model_values(config)
    size = checkpoint_bytes_per_param(config) * values["params_total"].value / 2**30
    assert float(size) == pytest.approx(gib, rel=0.003)
    # and by hand, for the AWQ file: 4-bit weights, an FP16 scale and a 4-bit zero per 128 in every linear
    # layer; embedding and head at float16
    if scheme == "awq":
        linear = 64 * (5120 * 8192 + 2 * 5120 * 1024 + 8192 * 5120 + 3 * 5120 * 25600)
        by_hand = linear * (Fraction(1, 2) + Fraction(2 + Fraction(1, 2), 128)) + 2 * 151936 * 5120 * 2
        assert checkpoint_bytes_per_param(config) * values["params_total"].value == by_hand


# --------------------------------------------------------------------------------------------------
# the reader on the forms real files take


def test_gemma3_sparse_config_takes_transformers_defaults() -> None:
    # google/gemma-3-4b-it names only what differs from transformers' Gemma3TextConfig (a public copy of the
    # file: boi/eoi/image tokens, torch_dtype and a text_config of four sizes, rope_scaling, sliding_window)
    config = {"architectures": ["Gemma3ForConditionalGeneration"], "boi_token_index": 255999,
              "eoi_token_index": 256000, "eos_token_id": [1, 106], "image_token_index": 262144,
              "initializer_range": 0.02, "mm_tokens_per_image": 256, "model_type": "gemma3",
              "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text",
                              "num_hidden_layers": 34, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                              "sliding_window": 1024},
              "torch_dtype": "bfloat16", "transformers_version": "4.50.0.dev0"}
    values, pb = model_values(config), param_breakdown(config)
    # defaults: 8 heads, 4 KV heads of 256, vocabulary 262,208, tied; Gemma 3 report table 1: 4B has
    # 3,209M non-embedding parameters
    d = 2560
    assert pb.total_non_embedding == 34 * (d * 8 * 256 + 2 * d * 4 * 256 + 8 * 256 * d + 3 * d * 10240)
    # Google's figure counts the four norm gains of each layer and the q/k norms, which the reader leaves out
    assert pb.total_non_embedding + 34 * (4 * d + 2 * 256) == pytest.approx(3209e6, abs=0.5e6)
    assert pb.embedding == 262208 * d and pb.lm_head == 0
    # five local layers to one global: layers 5, 11, 17, 23, 29 global, 29 local on a 1,024 window
    layout = kv_layout(config)
    for context in (500, 1024, 50_000):
        assert layout.bytes_per_sequence(context, 2) == _gqa(5, 4, 256) * context + _gqa(29, 4, 256) * min(context,
                                                                                                           1024)
    assert any("'vocab_size' absent" in n and "262,208" in n for n in values.notes)


def test_gemma3_12b_non_embedding_count() -> None:
    # Gemma 3 report table 1: 12B has 10,759M non-embedding parameters (google/gemma-3-12b-it text sizes:
    # hidden 3840, 48 layers, 16 heads, 8 KV heads, intermediate 15360; head_dim left to the default 256)
    config = {"model_type": "gemma3_text", "hidden_size": 3840, "num_hidden_layers": 48,
              "num_attention_heads": 16, "num_key_value_heads": 8, "intermediate_size": 15360,
              "sliding_window": 1024}
    pb = param_breakdown(config)
    assert pb.total_non_embedding == 48 * (3840 * 16 * 256 + 2 * 3840 * 8 * 256 + 16 * 256 * 3840 + 3 * 3840 * 15360)
    # + the norm gains Google's table counts: four of the width and two of the head dimension per layer
    assert pb.total_non_embedding + 48 * (4 * 3840 + 2 * 256) == pytest.approx(10_759e6, abs=0.5e6)


def test_refinedweb_falcon_40b_reads_grouped_kv_heads() -> None:
    # tiiuae/falcon-40b before its move to the falcon model type (model_type RefinedWeb, tiiuae's code):
    # no new_decoder_architecture field, n_head_kv 8 groups
    old = {"alibi": False, "apply_residual_connection_post_layernorm": False, "architectures": ["RWForCausalLM"],
           "bias": False, "bos_token_id": 11, "eos_token_id": 11, "hidden_dropout": 0.0, "hidden_size": 8192,
           "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "RefinedWeb", "n_head": 128,
           "n_head_kv": 8, "n_layer": 60, "parallel_attn": True, "torch_dtype": "bfloat16", "vocab_size": 65024}
    values = model_values(old)
    assert values["kv_bytes_per_token"].value == _gqa(60, 8, 64)
    d = 8192  # fused query_key_value (128 + 2 * 8 heads of 64), dense, 4x MLP without a gate, tied embedding
    assert values["params_total"].value == 65024 * d + 60 * (d * (128 + 16) * 64 + d * d + 2 * d * 4 * d)
    # Falcon-7B's RefinedWebModel: multi_query, one KV head
    seven = {"architectures": ["RWForCausalLM"], "model_type": "RefinedWebModel", "hidden_size": 4544, "n_head": 71,
             "n_layer": 32, "multi_query": True, "parallel_attn": True, "vocab_size": 65024, "bias": False}
    assert model_values(seven)["kv_bytes_per_token"].value == _gqa(32, 1, 64)


def test_gpt_oss_original_config_without_model_type() -> None:
    # OpenAI's own original/config.json of gpt-oss-120b names no architecture and uses num_experts,
    # experts_per_token (as quoted in NVIDIA/TensorRT-LLM tests/unittest/_torch/modeling/test_modeling_gpt_oss.py)
    original = {"num_hidden_layers": 36, "num_experts": 128, "experts_per_token": 4, "vocab_size": 201088,
                "hidden_size": 2880, "intermediate_size": 2880, "swiglu_limit": 7.0, "head_dim": 64,
                "num_attention_heads": 64, "num_key_value_heads": 8, "sliding_window": 128,
                "initial_context_length": 4096, "rope_theta": 150000, "rope_scaling_factor": 32.0,
                "rope_ntk_alpha": 1, "rope_ntk_beta": 32}
    values, hf = model_values(original), model_values(_config("gpt-oss-120b.json"))
    for name in ("params_total", "params_active", "params_embedding"):
        assert values[name].value == hf[name].value, name
    assert values["kv_bytes_per_token"].value == hf["kv_bytes_per_token"].value == _gqa(18, 8, 64)
    assert any("names no architecture" in n and "gpt_oss" in n for n in values.notes)


def test_qwen_sliding_window_needs_use_sliding_window() -> None:
    # transformers' Qwen2Config: use_sliding_window defaults to false, so sliding_window alone windows nothing
    config = _config("qwen2-57b-a14b.json")
    assert kv_layout(config).window_layers == 0
    no_flag = {k: v for k, v in config.items() if k != "use_sliding_window"}
    assert kv_layout(no_flag).window_layers == 0
    on = kv_layout(config | {"use_sliding_window": True, "sliding_window": 4096})
    assert (on.full_layers, on.window_layers, on.window) == (28, 0, 4096)  # max_window_layers 28: none windowed
    on = kv_layout(config | {"use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 20})
    assert (on.full_layers, on.window_layers) == (20, 8)


@pytest.mark.parametrize("fixture", ["llama-4-scout-17b-16e.json", "llama-4-maverick-17b-128e.json"])
def test_llama4_resaved_with_full_layer_lists(fixture: str) -> None:
    # transformers 4.51+ writes no_rope_layers and moe_layers in full (a Scout file re-saved that way is quoted
    # in vllm-project/vllm#20581); newer versions add layer_types
    config = _config(fixture)
    text = config["text_config"]
    step = text["interleave_moe_layer_step"]
    full = dict(text, no_rope_layers=[1, 1, 1, 0] * 12, moe_layers=list(range(step - 1, 48, step)))
    typed = dict(full, layer_types=["chunked_attention", "chunked_attention", "chunked_attention",
                                    "full_attention"] * 12)
    base = model_values(config)
    for variant in (full, typed):
        values = model_values(dict(config, text_config=variant))
        for name in ("params_total", "params_active", "kv_bytes_per_token", "kv_chunk_bytes_per_token"):
            assert values[name].value == base[name].value, name
    assert base["kv_chunk_bytes_per_token"].value == _gqa(36, 8, 128)


def test_qwen35_recurrent_state_in_its_own_datatype() -> None:
    # Qwen/Qwen3.5-35B-A3B text_config as transformers 5.7 prints it (scripts/models/qwen3.5_35b_a3b.md@cbff706):
    # 40 layers, 3 linear-attention layers to 1 full, mamba_ssm_dtype float32.  Model card: 35B total, 3B active
    text = {"attn_output_gate": True, "dtype": "bfloat16", "full_attention_interval": 4, "head_dim": 256,
            "hidden_size": 2048, "layer_types": (["linear_attention"] * 3 + ["full_attention"]) * 10,
            "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
            "linear_num_value_heads": 32, "linear_value_head_dim": 128, "mamba_ssm_dtype": "float32",
            "max_position_embeddings": 262144, "mlp_only_layers": [], "model_type": "qwen3_5_moe_text",
            "moe_intermediate_size": 512, "num_attention_heads": 16, "num_experts": 256, "num_experts_per_tok": 8,
            "num_hidden_layers": 40, "num_key_value_heads": 2, "shared_expert_intermediate_size": 512,
            "tie_word_embeddings": False, "vocab_size": 248320}
    config = {"architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe",
              "text_config": text, "tie_word_embeddings": False}
    values, pb = model_values(config), param_breakdown(config)
    # state: 30 layers * (32 value heads * 128 * 128 at 4 bytes + (2 * 16 * 128 + 32 * 128) channels * 3 at 2 bytes)
    state = 30 * (32 * 128 * 128 * 4 + (2 * 16 * 128 + 32 * 128) * 3 * 2)
    assert values["kv_state_bytes"].value == state
    for context in (1, 4096, 262_144):
        assert kv_layout(config).bytes_per_sequence(context, 2) == _gqa(10, 2, 256) * context + state
    assert round(pb.total / 1e9) == 35 and round(pb.active / 1e9) == 3  # the vision encoder is not counted


def test_glm45_air_published() -> None:
    # zai-org/GLM-4.5-Air config.json sizes (not byte-verified): 46 layers, hidden 4096, 96 heads of 128, 8 KV
    # heads, 128 experts (8 per token, 1 shared, width 1408), 1 dense layer of 10944.  Z.ai: 106B total, 12B active
    config = {"architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe", "hidden_size": 4096,
              "num_hidden_layers": 46, "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 128,
              "intermediate_size": 10944, "moe_intermediate_size": 1408, "n_routed_experts": 128,
              "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 1, "vocab_size": 151552,
              "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
    pb = param_breakdown(config)
    d, attention = 4096, 4096 * 96 * 128 + 2 * 4096 * 8 * 128 + 96 * 128 * 4096
    expert = 3 * d * 1408
    assert pb.total == 2 * 151552 * d + 46 * attention + 3 * d * 10944 + 45 * (128 * expert + expert + d * 128)
    assert float(pb.total) == pytest.approx(106e9, rel=0.01)
    assert float(pb.active_non_embedding) == pytest.approx(12e9, rel=0.02)
    assert model_values(config)["kv_bytes_per_token"].value == _gqa(46, 8, 128)


def test_gemma2_9b_it_is_the_base_file_in_bfloat16() -> None:
    # google/gemma-2-9b-it's config.json (printed in vllm-project/vllm#10548; mlc-ai/mlc-llm model_preset.py
    # `gemma2_9b` @ 01ced331) has every key and value of google/gemma-2-9b's (the fixture, verbatim) except
    # "torch_dtype": "bfloat16" for "float32": the same weights, and served alike, in 16 bits (vLLM's --dtype auto
    # runs a float32 checkpoint in FP16), so both are counted and cached at 2 bytes; only the base says so
    base = _config("gemma-2-9b.json")
    assert base["torch_dtype"] == "float32"
    it = base | {"torch_dtype": "bfloat16"}
    assert param_breakdown(it).total == param_breakdown(base).total
    vb, vi = model_values(base), model_values(it)
    assert (vb["bytes_per_param"].value, vi["bytes_per_param"].value) == (2, 2)
    assert (vb["bytes_per_kv_element"].value, vi["bytes_per_kv_element"].value) == (2, 2)
    assert [n for n in vb.notes if "float32" in n] and not [n for n in vi.notes if "float32" in n]
    for context in (1, 4096, 4097, 8192):
        assert kv_layout(it).bytes_per_sequence(context, 2) == kv_layout(base).bytes_per_sequence(context, 2)
        assert kv_layout(it).bytes_per_sequence(context, 2) == _gqa(21, 8, 256) * (context + min(context, 4096))


def test_a_float32_run_is_one_set_away(capsys) -> None:
    """A float32 checkpoint is counted as it is served (16 bits); a run that keeps 4 bytes says so with --set."""
    from derive.cli import main

    path = str(CONFIGS / "gemma-2-9b.json")
    code = main(["eval", "bytes_per_param", "bytes_per_kv_element", "--model", path,
                 "--set", "bytes_per_param=4 byte/param", "--set", "bytes_per_kv_element=4 byte", "--no-cache"])
    out = capsys.readouterr().out
    assert code == 0 and "bytes_per_param      = 4 byte/param" in out and "bytes_per_kv_element = 4 byte" in out


def test_context_chapter_reads_the_latent_cache(lecture_library) -> None:
    # DeepSeek-V3.2: the chapter's KV bytes per token from the layout is 61 layers * (512 + 64) * 2 bytes,
    # not 2 * kv_heads * head_dim; the indexer's keys come on top in kv_bytes_per_token
    sc = build_scenario(lecture_library, model=str(CONFIGS / "deepseek-v3.2.json"))
    assert evaluate(lecture_library, sc, "kv_bytes_from_heads").exact == 61 * (512 + 64) * 2
    assert sc.value("kv_bytes_per_token") == 61 * (512 + 64) * 2 + 61 * (128 + 4)
    rows = {r["name"]: r for r in sc.explain(lecture_library, ["kv_elements_per_layer", "kv_cache_layers"])}
    assert rows["kv_elements_per_layer"]["layer"] == rows["kv_cache_layers"]["layer"] == "model config"
    assert any("latent attention" in n and "576" in n for n in sc.notes)
    # the lecture's own layout is untouched: 1 layer * 2 * 8 heads * 128 * 1 byte
    assert evaluate(lecture_library, build_scenario(lecture_library), "kv_bytes_from_heads").exact == 2048


def test_compressed_tensors_ignore_list_names_modules_not_biases() -> None:
    # zai-org/GLM-4.5-FP8 (scripts/models/glm_4.5_fp8.md@cbff706): compressed-tensors FP8 weights per channel;
    # its ignore list names norms, biases and routers one by one (a few of its entries here) and the head.
    # The attention weights themselves are FP8 in the checkpoint (k_proj.weight float8_e4m3fn).
    quant = {"config_groups": {"group_0": {"targets": ["Linear"], "weights": {
        "num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True, "dynamic": False}}},
        "format": "float-quantized", "quant_method": "compressed-tensors",
        "ignore": ["model.layers.12.input_layernorm", "model.layers.5.self_attn.q_norm",
                   "model.layers.11.self_attn.k_proj.bias", "model.layers.52.mlp.gate",
                   "model.layers.29.mlp.gate.e_score_correction_bias", "lm_head", "model.norm"]}
    config = _config("glm-4.5.json") | {"quantization_config": quant}
    pb = param_breakdown(config)
    kept = 151552 * 5120 * 2 + 89 * 5120 * 160  # embedding and head, the 89 MoE layers' routers, at bf16
    assert pb.embedding + pb.lm_head + pb.router == kept
    assert checkpoint_bytes_per_param(config) * pb.total == (pb.total - kept) * 1 + kept * 2
    # gpt-oss names its whole attention blocks: those stay at bf16
    oss = model_values(_config("gpt-oss-20b.json"))
    assert "attention" in oss["bytes_per_param"].note


def test_loading_the_lecture_imports_no_family_reader():
    """The config readers load on the first config read, not with the library (a check reads none)."""
    import subprocess
    import sys

    code = ("import sys; from derive.model.loader import load_library; load_library(['lecture']); "
            "print(sorted(m for m in sys.modules if m.startswith('theorems.configs.') and m.rsplit('.', 1)[1] in "
            "('reader', 'registry', 'meta', 'deepseek', 'gemma4')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_lazy_package_gives_every_public_name():
    import theorems.configs as configs

    for name in configs.__all__:
        assert getattr(configs, name) is not None, name
    with pytest.raises(AttributeError):
        configs.no_such_name  # noqa: B018


def test_glm_5_caches_the_indexer_keys_only_where_a_layer_runs_it() -> None:
    # 576 latent bf16 elements per layer, and 128 FP8 keys + one FP32 scale on the indexer's layers
    assert model_values(_config("glm-5.1.json"))["kv_bytes_per_token"].value == 78 * 576 * 2 + 78 * 132
    assert model_values(_config("glm-5.2.json"))["kv_bytes_per_token"].value == 78 * 576 * 2 + 21 * 132


@pytest.mark.parametrize(("edit", "words"), [
    ({"indexer_types": ["full"] * 77 + ["mixed"]}, ["indexer_types", "unknown kind 'mixed'"]),
    ({"indexer_types": ["shared"] + ["full"] * 77}, ["indexer_types", "first layer that shares"]),
    ({"indexer_types": None}, ["index_topk_freq", "without 'indexer_types'"]),
    ({"index_topk_pattern": "FSSS" * 19 + "FS"}, ["both say which layers share"]),
    ({"qk_head_dim": None}, ["head_dim", "is not qk_rope_head_dim (64)"]),
    # whole numbers whether or not the list says more; the multi-token-prediction count is printed in a note
    ({"index_topk_freq": "x"}, ["index_topk_freq", "whole number"]),
    ({"index_topk_freq": True, "indexer_types": None}, ["index_topk_freq", "whole number"]),
    ({"num_nextn_predict_layers": "\x1b[31m\nforged"}, ["num_nextn_predict_layers", "whole number"]),
])
def test_glm_5_layouts_the_reader_cannot_place_are_refused(edit, words) -> None:
    config = {k: v for k, v in {**_config("glm-5.2.json"), **edit}.items() if v is not None}
    with pytest.raises(ScenarioError) as err:
        model_values(config)
    for w in words:
        assert w in str(err.value), str(err.value)


def test_a_config_readers_notes_reach_the_terminal_escaped(tmp_path):
    """A reader note carries config text; a newline or terminal escape in it would forge a line."""
    from derive.model.loader import load_library
    from derive.model.scenario import build_scenario

    config = {**_config("glm-5.2.json"), "indexer_types": None, "index_topk_freq": None,
              "model_type": "glm_moe_dsa", "architectures": ["GlmMoeDsaForCausalLM"],
              "quantization_config": None}
    config = {k: v for k, v in config.items() if v is not None}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    notes = build_scenario(load_library(["lecture"]), model=str(path)).notes
    assert notes and all("\n" not in n and "\x1b" not in n for n in notes)
