"""The meta-device reader: a model_type the hand reader has no family for, counted exactly on PyTorch's meta device.

Tests marked by ``_meta()`` need torch and transformers (the ``meta`` extra) and skip without them; CI does not
install them, so there the tests of the plain path run: the refusal exactly as before, the meta path never
attempted when the imports fail, nothing of torch imported by the library.  With the extra installed,
``test_hand_counts_equal_the_meta_device_counts`` cross-checks every fixture's hand count against the model
transformers builds (docs/models-and-chips.md records the result).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from libtools import one_error_line, run_cli

from derive.errors import MissingExtraError, ScenarioError
from theorems.configs import (
    cross_check,
    meta_available,
    meta_count,
    meta_model_values,
    model_values,
    model_values_with_meta,
)
from theorems.configs import meta as meta_module
from theorems.configs.meta import cache_unsure_fields

ROOT = Path(__file__).parent.parent
CONFIGS = Path(__file__).parent / "fixtures" / "configs"
UNKNOWN = CONFIGS / "unknown_architecture.json"  # model_type "mamba": no family of the hand reader
FIXTURES = sorted(p.name for p in CONFIGS.glob("*.json")
                  if p.name not in ("broken_missing_layers.json", "unknown_architecture.json"))
# fixtures transformers cannot build without running the publisher's own code (never done): the reason each
NOT_BUILT = {"llama-3.3-nemotron-super-49b-v1.json": "nemotron-nas (DeciLM) exists only as the repository's own "
                                                     "code; transformers has no class for it",
             # its auto_map names configuration_mimo_v2.py; transformers 5.7 read the config through that code and
             # built no model ("当前 transformers 版本不支持实例化", gogongxt/python scripts/models/mimo_v2.5.md)
             "mimo-v2.5.json": "mimo_v2 (MiMo-V2.5) exists only as the repository's own code",
             # transformers 5.24 has hunyuan_v1_moe, whose config class reads other fields (built as it, this file
             # fails in its rotary setup), and bailing_hybrid, not Ling 1.5's bailing_moe
             "hunyuan-a13b-instruct.json": "hunyuan (Hunyuan-A13B's own code) is not a type transformers knows",
             "ling-lite-1.5.json": "bailing_moe (Ling 1.5's own code) is not a type transformers knows"}
# fixtures whose model_type names the repository's code, read by the hand reader through their architectures
READ_AS = {"kimi-k2-instruct.json": "deepseek_v3"}  # kimi_k2, architectures DeepseekV3ForCausalLM
# counts where the hand reader and the meta device differ for a documented reason: none found (see the docs)
EXPLAINED: dict[str, dict[str, str]] = {}


def _meta() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.fixture
def without_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """``import torch`` and ``import transformers`` fail, as where the extra is not installed."""
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "transformers", None)


# -------------------------------------------------------------------------------------------------
# without torch and transformers (what CI runs)


def test_without_the_extra_the_refusal_is_unchanged(without_torch, monkeypatch) -> None:
    assert not meta_available()

    def attempted(*args, **kwargs):
        raise AssertionError("the meta path was attempted without torch")

    monkeypatch.setattr(meta_module, "meta_model_values", attempted)
    with pytest.raises(ScenarioError) as hand:
        model_values(_load(UNKNOWN), where="x")
    with pytest.raises(ScenarioError) as read:
        model_values_with_meta(_load(UNKNOWN), where="x")
    assert read.value.one_line() == hand.value.one_line()
    assert "unsupported architecture" in str(read.value) and "'mamba'" in str(read.value)


def test_without_the_extra_the_command_line_refuses_in_one_line(without_torch, capsys) -> None:
    code, out, err = run_cli(capsys, ["eval", "params_total", "--model", str(UNKNOWN)])
    one_error_line(code, err)
    assert "unsupported architecture: architectures=['MambaForCausalLM'], model_type='mamba'" in err
    assert out == "" and "meta device" not in err


def test_without_the_extra_meta_count_says_what_to_install(without_torch) -> None:
    with pytest.raises(MissingExtraError, match="torch and transformers") as err:
        meta_count(_load(UNKNOWN))
    assert "derive-llm[meta]" in err.value.one_line() and "\n" not in err.value.one_line()


def test_a_type_the_hand_reader_knows_is_never_counted_on_the_meta_device(monkeypatch) -> None:
    # a llama file missing a size field is the file's fault, not a layout to try another way
    def attempted(*args, **kwargs):
        raise AssertionError("the meta path was attempted for a known type")

    monkeypatch.setattr(meta_module, "meta_available", lambda: True)
    monkeypatch.setattr(meta_module, "meta_model_values", attempted)
    with pytest.raises(ScenarioError, match="num_hidden_layers"):
        model_values_with_meta(_load(CONFIGS / "broken_missing_layers.json"))
    kimi = _load(CONFIGS / "kimi-k2-instruct.json")  # kimi_k2: known through its architectures
    assert model_values_with_meta(kimi)["params_total"].value == model_values(kimi)["params_total"].value


def test_the_library_does_not_import_torch() -> None:
    code = "import sys, theorems, theorems.configs; print('torch' in sys.modules, 'transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["False", "False"]


def test_torch_is_an_optional_extra_never_a_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any(dep.startswith(("torch", "transformers")) for dep in project["dependencies"])
    meta = project["optional-dependencies"]["meta"]
    assert any(d.startswith("torch>=") for d in meta) and any(d.startswith("transformers>=") for d in meta)


def test_the_comparison_finds_a_planted_difference() -> None:
    from theorems.configs.meta import compare

    same = compare({"params_total": 10, "state_layers": 2}, {"params_total": 10, "state_layers": 2})
    assert same.differences == {}
    planted = compare({"params_total": 10, "state_layers": 2}, {"params_total": 11, "state_layers": 2})
    assert planted.differences == {"params_total": (10, 11)}
    # a count one side does not determine is not a difference
    assert compare({"routed_experts": 5}, {"routed_experts": None}).differences == {}


# -------------------------------------------------------------------------------------------------
# with torch and transformers (skipped without them)


@pytest.mark.parametrize("name", FIXTURES)
def test_hand_counts_equal_the_meta_device_counts(name: str) -> None:
    _meta()
    config = _load(CONFIGS / name)
    if name in NOT_BUILT:
        with pytest.raises(ScenarioError, match="does not know model_type"):
            meta_count(config)
        return
    check = cross_check(config, where=name, model_type=READ_AS.get(name))
    assert set(check.counts) == {"params_total", "params_embedding", "routed_experts", "attention_layers",
                                 "state_layers"}
    assert all(m is not None for _, m in check.counts.values())  # every count compared, none left out
    explained = EXPLAINED.get(name, {})
    assert {k: v for k, v in check.differences.items() if k not in explained} == {}, check.versions


@pytest.mark.parametrize("name", [n for n in FIXTURES if n not in NOT_BUILT])
def test_every_value_the_meta_device_gives_is_the_hand_readers(name: str) -> None:
    _meta()
    config = _load(CONFIGS / name)
    if name in READ_AS:
        config = dict(config, model_type=READ_AS[name])
    meta, hand = meta_model_values(config), model_values(config)
    assert {"params_total", "params_embedding", "layers"} <= set(meta)
    for key, value in meta.items():
        assert value.value == hand[key].value, (key, value.note)


def test_an_unknown_state_space_model_is_read_on_the_meta_device(capsys) -> None:
    _meta()
    values = model_values_with_meta(_load(UNKNOWN), where="mamba")
    # Mamba (transformers' MambaConfig defaults for what the file leaves out: expand 2, conv_kernel 4,
    # time_step_rank ceil(2560 / 16) = 160), by hand: in_proj, conv1d, x_proj, dt_proj, A_log, out_proj
    d, inner, state, kernel, rank = 2560, 5120, 16, 4, 160
    layer = d * 2 * inner + inner * kernel + inner * (rank + 2 * state) + rank * inner + inner * state + inner * d
    embedding = 50280 * d  # tied to the output head
    assert values["params_total"].value == 64 * layer + embedding == 2_767_196_160
    assert values["params_embedding"].value == embedding
    assert values["params_active"].value == 64 * layer + embedding  # tied: the matrix counts once, as the head
    assert values["kv_bytes_per_token"].value == 0  # no attention module
    assert "kv_state_bytes" not in values  # the state the mixers keep is not read
    assert any("kv_state_bytes not read" in n for n in values.notes)
    first = values.notes[0]
    assert first.startswith("read on PyTorch's meta device with transformers ")
    assert "(the hand reader does not know model_type 'mamba')" in first
    code, out, err = run_cli(capsys, ["eval", "params_total", "--model", str(UNKNOWN)])
    assert code == 0, err
    assert "2767196160" in out and "read on PyTorch's meta device" in out


# a mixture of experts of a type the hand reader has no family for (transformers' FlexOlmo: OLMoE's tensors, its
# norms after attention and experts; modular_flex_olmo.py), sizes planted small; token ids inside the planted
# vocabulary (FlexOlmoConfig's defaults, 100277 and 100257, are not)
MOE = {"model_type": "flex_olmo", "architectures": ["FlexOlmoForCausalLM"], "hidden_size": 64, "intermediate_size": 32,
       "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4, "num_experts": 8,
       "num_experts_per_tok": 2, "vocab_size": 100, "tie_word_embeddings": False, "pad_token_id": 1,
       "eos_token_id": 2}


def test_an_unknown_mixture_of_experts_leaves_its_active_count_to_set() -> None:
    _meta()
    with pytest.raises(ScenarioError):
        model_values(MOE)  # read as llama its experts are unplaced: refused by hand
    values = model_values_with_meta(MOE)
    attention = 4 * 64 * 64  # q, k, v, o: 4 heads of 16
    experts = 8 * 3 * 64 * 32  # gate, up, down
    router = 8 * 64
    assert values["params_total"].value == 2 * (attention + experts + router) + 2 * 100 * 64
    assert values["experts_total"].value == 8 and values["experts_active"].value == 2
    assert "params_active" not in values
    assert any("--set params_active" in n for n in values.notes)
    assert values["kv_bytes_per_token"].value == 2 * (64 + 64) * 2  # 2 layers, k and v, 2 B (no datatype)
    assert meta_count(MOE).routed_experts == 2 * experts


def test_a_field_that_may_window_some_layers_leaves_kv_out() -> None:
    _meta()
    values = model_values_with_meta(MOE | {"sliding_window": 16})
    assert "kv_bytes_per_token" not in values and "kv_window_bytes_per_token" not in values
    assert any("sliding_window" in n and "--set kv_bytes_per_token" in n for n in values.notes)


@pytest.mark.parametrize("field,value", [("index_topk", 2048), ("sparse_config", {"topk": 64}),
                                         ("use_sparse_attention", True)])
def test_a_field_that_may_read_part_of_the_cache_leaves_kv_out(field: str, value: object) -> None:
    # a sparse attention reads its top k tokens of a whole cache: a whole-cache read would be no floor
    _meta()
    values = model_values_with_meta(MOE | {field: value})
    assert "kv_bytes_per_token" not in values and "kv_sparse_bytes_per_token" not in values
    assert any(field in n and "attention_topk" in n for n in values.notes)


def test_a_moe_layer_step_field_is_not_read_as_sparse_attention() -> None:
    # Qwen2-MoE's decoder_sparse_step and Hunyuan's moe_topk say which layers are MoE, not what attention reads
    assert cache_unsure_fields({"decoder_sparse_step": 1, "moe_topk": 8, "index_topk": 2048}) == ["index_topk"]


def test_a_type_transformers_does_not_know_either_is_refused_in_one_line(capsys, tmp_path) -> None:
    _meta()
    # auto_map names a repository's code: never run, so the type stays unknown
    config = MOE | {"model_type": "my_model", "architectures": ["MyModelForCausalLM"],
                      "auto_map": {"AutoModelForCausalLM": "modeling_my_model.MyModelForCausalLM"}}
    with pytest.raises(ScenarioError, match="transformers .* does not know model_type 'my_model' either"):
        model_values_with_meta(config)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    code, out, err = run_cli(capsys, ["eval", "params_total", "--model", str(path)])
    one_error_line(code, err)
    assert "not read on the meta device (transformers" in err and "unknown architecture 'my_model'" in err


@pytest.mark.parametrize("field, value", [("num_experts", 10**7), ("num_hidden_layers", float("inf")),
                                          ("num_local_experts", 5000)])
def test_a_size_the_meta_device_would_build_for_ever_is_refused_before_building(field: str, value: object) -> None:
    _meta()
    with pytest.raises(ScenarioError, match=f"field '{field}' is .* more than the 4,096") as err:
        meta_count(MOE | {field: value})
    assert "\n" not in err.value.one_line()


def test_a_config_without_a_model_type_is_not_built(monkeypatch) -> None:
    # nothing names a class to build: the hand reader's refusal stands, whether or not torch is installed
    def attempted(*args, **kwargs):
        raise AssertionError("the meta path was attempted without a model_type")

    monkeypatch.setattr(meta_module, "meta_available", lambda: True)
    monkeypatch.setattr(meta_module, "meta_model_values", attempted)
    with pytest.raises(ScenarioError, match="'architectures' and 'model_type'"):
        model_values_with_meta({"hidden_size": 8, "num_hidden_layers": 2})


def test_a_mixer_the_count_does_not_recognize_leaves_kv_and_state_out() -> None:
    _meta()
    # RWKV's time mixing is named an attention but keeps a recurrent state and has no k_proj/v_proj
    rwkv = {"model_type": "rwkv", "architectures": ["RwkvForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2,
            "vocab_size": 100, "attention_hidden_size": 64, "intermediate_size": 128}
    values = meta_model_values(rwkv)
    assert "kv_bytes_per_token" not in values and "kv_state_bytes" not in values
    assert any("--set kv_state_bytes" in n for n in values.notes)
