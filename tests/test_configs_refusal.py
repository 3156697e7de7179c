"""Refuse, never guess: a config whose layers the reader cannot place exactly is refused in one line.

- A file of an unknown ``model_type`` is read as a known family only when that family reads every field that
  could set a layer kind or a tensor shape; under the family it otherwise matches, its counts are then those of
  its own type, never a different layer structure (every fixture, renamed).
- A known family's file with one layer kind the reader does not know (an unknown ``layer_types`` entry, a
  ``linear_attention`` layer in a family without one, an unknown pattern character) is refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from derive.cli import main
from derive.errors import ScenarioError
from theorems.configs import SUPPORTED_MODEL_TYPES, model_values

CONFIGS = Path(__file__).parent / "fixtures" / "configs"
# one publisher's file (or more) per family module
FAMILY_FIXTURES = {
    "dense": "llama-3.1-8b.json", "dense-window": "mistral-7b-v0.1.json", "gemma2": "gemma-2-9b.json",
    "gemma3": "gemma-3-27b-it.json", "falcon": "falcon-40b.json", "mixtral": "mixtral-8x7b-v0.1.json",
    "gpt_oss": "gpt-oss-120b.json", "qwen_moe": "qwen2-57b-a14b.json", "qwen3_next": "qwen3-next-80b-a3b-instruct.json",
    "qwen3_5": "qwen3.5-397b-a17b.json", "llama4": "llama-4-scout-17b-16e.json", "glm_moe": "glm-4.5.json",
    "deepseek": "kimi-k2-instruct.json", "deepseek_v32": "deepseek-v3.2.json",
    "nemotron_h": "nvidia-nemotron-3-nano-30b-a3b-bf16.json", "gemma4": "gemma4_26b_a4b_shape.json",
    "gemma4_dense": "gemma4_31b_printed.json", "mimo": "mimo-v2.5.json", "llama_like": "phi-4.json",
    "llama_like-tied": "phi-4-mini-instruct.json", "phi": "phi-2.json", "starcoder2": "starcoder2-15b.json",
    "gpt_neox": "pythia-1b.json", "olmoe": "olmoe-1b-7b-0924.json", "dbrx": "dbrx-base.json",
    "hunyuan": "hy-mt2-7b.json", "hunyuan_moe": "hunyuan-a13b-instruct.json", "gpt2": "gpt2.json",
    "opt": "opt-125m.json", "gpt_bigcode": "gpt_bigcode-santacoder.json", "bloom": "bloom-560m.json",
    "dots1": "dots.llm1.inst.json", "bailing": "ling-lite-1.5.json",
}
REAL = sorted(p.name for p in CONFIGS.glob("*.json") if p.name not in ("broken_missing_layers.json",
                                                                       "unknown_architecture.json"))


def _load(name: str) -> dict:
    return json.loads((CONFIGS / name).read_text())


def _text(config: dict) -> dict:
    """The mapping that holds the language model's fields (``text_config`` in multimodal files)."""
    return config["text_config"] if "hidden_size" not in config and "text_config" in config else config


def _layers(text: dict) -> int:
    """The layer count, under the reader's name, DBRX's own (``n_layers``) or GPT-2's and BLOOM's (``n_layer``)."""
    return next(text[k] for k in ("num_hidden_layers", "n_layers", "n_layer") if k in text)


def _renamed(config: dict) -> dict:
    out = dict(config, model_type="my_model", architectures=["MyModelForCausalLM"])
    if "text_config" in out and "hidden_size" not in out:
        out["text_config"] = dict(out["text_config"], model_type="my_model_text")
    return out


@pytest.mark.parametrize("family, name", sorted(FAMILY_FIXTURES.items()))
def test_one_unknown_layer_kind_is_refused(family: str, name: str) -> None:
    config = _load(name)
    text = _text(config)
    n = _layers(text)
    if family == "nemotron_h":
        text["hybrid_override_pattern"] = text["hybrid_override_pattern"][:-1] + "Z"
        what = "unknown layer kind 'Z'"
    elif family == "mimo":  # 0 full, 1 sliding window: a 2 is no kind MiMo has
        text["hybrid_layer_pattern"] = text["hybrid_layer_pattern"][:-1] + [2]
        what = "unknown layer kind 2"
    else:
        text["layer_types"] = ["full_attention"] * (n - 1) + ["mamba"]
        what = "unknown layer kind 'mamba'"
    with pytest.raises(ScenarioError, match=what) as err:
        model_values(config)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("family, name", sorted((f, n) for f, n in FAMILY_FIXTURES.items()
                                                if not f.startswith(("qwen3_", "nemotron"))))
def test_a_linear_attention_layer_in_a_family_without_one_is_refused(family: str, name: str) -> None:
    # read as Gated DeltaNet before, with fields the family's files do not have
    config = _load(name)
    text = _text(config)
    text["layer_types"] = ["full_attention"] * (_layers(text) - 1) + ["linear_attention"]
    # families that list their own layer kinds name the entry; the others say the layer is linear attention
    with pytest.raises(ScenarioError, match="linear-attention layer|unknown layer kind 'linear_attention'"):
        model_values(config)


@pytest.mark.parametrize("name", REAL)
def test_an_unknown_type_is_refused_or_read_with_its_own_structure(name: str) -> None:
    config = _load(name)
    own = model_values(config)
    try:
        guessed = model_values(_renamed(config))
    except ScenarioError as err:
        assert "\n" not in str(err) and "my_model" in str(err)
        return
    assert set(guessed) == set(own)
    for key, value in own.items():
        assert guessed[key].value == value.value, key


def test_nemotron_h_fields_under_an_unknown_type_are_named() -> None:
    # issue 23: read "as glm4_moe, whose fields it has", the Nano became 52 attention + MoE layers, 102.3B
    config = _renamed(_load("nvidia-nemotron-3-nano-30b-a3b-bf16.json"))
    with pytest.raises(ScenarioError) as err:
        model_values(config)
    text = str(err.value)
    assert "'my_model'" in text and "hybrid_override_pattern" in text and "mamba_num_heads" in text
    assert "\n" not in text


def test_one_unplaced_field_is_enough() -> None:
    config = _renamed(_load("llama-3.1-8b.json")) | {"num_memory_layers": 4}
    with pytest.raises(ScenarioError, match="num_memory_layers"):
        model_values(config)


def test_settings_that_set_no_shape_do_not_block_a_read() -> None:
    config = _renamed(_load("llama-3.1-8b.json")) | {"attention_dropout": 0.1, "rms_norm_eps": 1e-6,
                                                     "rope_scaling": {"type": "linear"}, "pad_token_id": 0,
                                                     "_comment": "a note"}
    assert model_values(config)["params_total"].value == model_values(_load("llama-3.1-8b.json"))["params_total"].value


def test_a_window_llama_does_not_apply_is_not_dropped() -> None:
    # Mistral's sliding_window read under the llama layout would make every layer full attention
    with pytest.raises(ScenarioError, match="sliding_window"):
        model_values(_renamed(_load("mistral-7b-v0.1.json")))


def test_refusal_on_the_command_line_is_one_line_exit_2(tmp_path: Path, capsys) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_renamed(_load("nvidia-nemotron-3-nano-30b-a3b-bf16.json"))))
    assert main(["eval", "params_total", "--model", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "hybrid_override_pattern" in captured.err


def test_nemotron_h_is_supported() -> None:
    assert "nemotron_h" in SUPPORTED_MODEL_TYPES


@pytest.mark.parametrize("name, fields", [
    ("gemma4_31b_printed.json", ("attention_k_eq_v", "global_head_dim", "num_global_key_value_heads")),
    # read as qwen3_moe (num_experts, moe_intermediate_size), it stops at Qwen's experts-per-token field
    ("gemma4_26b_a4b_shape.json", ("num_experts_per_tok",)),
    ("mimo-v2.5.json", ("hybrid_layer_pattern", "swa_num_key_value_heads", "v_head_dim")),
])
def test_gemma4_and_mimo_under_an_unknown_type_are_refused_naming_their_fields(name: str, fields: tuple) -> None:
    # read "as llama" (Gemma 4) or "as glm4_moe" (MiMo), whose fields they have, the global layers would take the
    # sliding layers' heads and the values the keys' size: the fields that say otherwise are named instead
    with pytest.raises(ScenarioError) as err:
        model_values(_renamed(_load(name)))
    text = str(err.value)
    assert "'my_model" in text and all(f in text for f in fields), text
    assert "\n" not in text


@pytest.mark.parametrize("name", ["ai21-jamba-1.5-mini.json"])
def test_new_hybrid_fixture_renamed_is_refused(name: str) -> None:
    # read as llama, the Mamba layers and the experts would vanish; the periods are named instead
    with pytest.raises(ScenarioError, match="attn_layer_period") as err:
        model_values(_renamed(_load(name)))
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("mtype", ["jamba", "falcon_h1", "granitemoehybrid", "nemotron_h", "nemotron-nas"])
def test_hybrid_families_are_supported(mtype: str) -> None:
    assert mtype in SUPPORTED_MODEL_TYPES


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.json")), ids=lambda p: p.name)
def test_every_fixture_says_where_it_comes_from(path: Path) -> None:
    # a publisher's file is listed in SOURCES.md; a shape written for a test carries its own _comment
    config = json.loads(path.read_text())
    assert f"`{path.name}`" in (CONFIGS / "SOURCES.md").read_text() or "_comment" in config


# StarCoder2's shape (bigcode/starcoder2-3b's sizes) under a name the reader does not know: its MLP is c_fc and c_proj
# with gelu_pytorch_tanh, two matrices; read "as llama, whose fields it has" it printed 4.16B with three
STARCODER_LIKE = {"architectures": ["MyModelForCausalLM"], "model_type": "my_model", "hidden_size": 3072,
                  "intermediate_size": 12288, "num_attention_heads": 24, "num_key_value_heads": 2,
                  "num_hidden_layers": 30, "vocab_size": 49152, "max_position_embeddings": 16384,
                  "hidden_act": "gelu_pytorch_tanh", "torch_dtype": "float32", "tie_word_embeddings": True}


@pytest.mark.parametrize("field, value", [("hidden_act", "gelu_pytorch_tanh"), ("hidden_act", "gelu"),
                                          ("hidden_act", "relu2"), ("hidden_activation", "gelu_pytorch_tanh"),
                                          ("activation", "gelu"), ("mlp_hidden_act", "relu"),
                                          ("hidden_act", ["silu"]), ("is_encoder_decoder", True)])
def test_a_guessed_layout_refuses_an_mlp_or_stack_it_cannot_see(field: str, value: object, capsys,
                                                                   tmp_path: Path) -> None:
    config = {k: v for k, v in STARCODER_LIKE.items() if k != "hidden_act"} | {field: value}
    with pytest.raises(ScenarioError) as err:
        model_values(config)
    text = str(err.value)
    assert f"{field} {value!r}" in text and "'my_model'" in text and "\n" not in text
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    assert main(["eval", "params_total", "--model", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "refused rather than guessed" in captured.err


@pytest.mark.parametrize("base", ["llama-3.1-8b.json", "mixtral-8x7b-v0.1.json", "qwen2-57b-a14b.json"])
@pytest.mark.parametrize("act", ["silu", "SiLU", "swish", "swiglu"])
def test_a_guessed_silu_config_is_still_read(base: str, act: str) -> None:
    own = model_values(_load(base))
    guessed = model_values(_renamed(_load(base)) | {"hidden_act": act})
    assert guessed["params_total"].value == own["params_total"].value
    assert any("read as" in n for n in guessed.notes)


@pytest.mark.parametrize("name, field, act", [("gemma-2-9b.json", "hidden_activation", "gelu_pytorch_tanh"),
                                              ("gemma-3-27b-it.json", "hidden_activation", "gelu_pytorch_tanh"),
                                              ("falcon-40b.json", "activation", "gelu"),
                                              ("llama-3.1-8b.json", "hidden_act", "gelu")])
def test_a_known_family_is_read_by_its_own_layout_whatever_its_activation(name: str, field: str, act: str) -> None:
    # Gemma's GeGLU and Falcon's GELU MLP are their families' own layouts; transformers' Llama gates any activation
    config = _load(name)
    planted = json.loads(json.dumps(config))
    _text(planted)[field] = act
    assert model_values(planted)["params_total"].value == model_values(config)["params_total"].value
