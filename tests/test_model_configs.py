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
