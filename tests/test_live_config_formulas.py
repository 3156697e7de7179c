"""The lecture library's config reader as formulas (``theorems.configs.live_formulas``, read by
``derive.model.config_formulas``) against its Python reader (``theorems.configs.model_values``): the same values,
exactly, on every fixture config and model preset of the types it declares; both refuse a config missing a field
the Python reader needs; and whatever the formulas accept, the Python reader reads to the same numbers."""

from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.errors import LibraryError, ScenarioError
from derive.model.config_formulas import TYPE_FIELD, read_config, refusal, validate
from derive.model.loader import load_library
from derive.model.units import parse_unit
from theorems.configs import model_values
from theorems.configs.live_formulas import LIVE_CONFIG_FORMULAS, SERVING_LIVE_CONFIG_FORMULAS

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "configs"
PRESETS = Path(__file__).resolve().parents[1] / "theorems" / "presets" / "models"
READINGS = validate(LIVE_CONFIG_FORMULAS, where="test")
SERVING_READINGS = validate(SERVING_LIVE_CONFIG_FORMULAS, where="test")

# fixtures of a declared type that the formulas refuse, and why: each is outside the plain reading (the Python
# reader reads the first three; the last is a broken file both refuse)
REFUSED = {"mistral-7b-v0.1.json": "field 'sliding_window' = 4096 is outside this reading",
           # a window no shorter than the context: the Python reader reads every layer full, the formulas refuse
           "phi-4-mini-instruct.json": "field 'sliding_window' = 262144 is outside this reading",
           "mha_llama2_13b.json": "missing field 'torch_dtype'",
           "mqa_palm540b_shape.json": "missing field 'torch_dtype'",
           "broken_missing_layers.json": "missing field 'num_hidden_layers'"}


def _fixtures() -> list[Path]:
    return sorted(p for p in CONFIGS.glob("*.json") if json.loads(p.read_text()).get(TYPE_FIELD) in READINGS)


def _presets() -> list[tuple[str, dict]]:
    out = []
    for p in sorted(PRESETS.glob("*.toml")):
        config = tomllib.loads(p.read_text()).get("config")
        if config is not None and config.get(TYPE_FIELD) in READINGS:
            out.append((p.stem, config))
    return out


def _python(config: dict, quantities) -> tuple[dict[str, sp.Rational], frozenset[str]]:
    """The Python reader's values that are quantities of the library, in SI units, and the native ones."""
    values = model_values(config)
    out = {n: sp.Rational(v.value.numerator, v.value.denominator) * sp.Rational(parse_unit(v.unit).scale)
           for n, v in values.items() if n in quantities}
    return out, frozenset(n for n, v in values.items() if v.native and n in quantities)


def _assert_same(config: dict, quantities, readings=READINGS) -> None:
    reading = read_config(readings, config)
    expected, native = _python(config, quantities)
    assert reading.values == expected  # exact rationals, every value and no other
    assert reading.native == native


def test_the_fixtures_cover_every_family_read_as_formulas():
    types = {json.loads(p.read_text())[TYPE_FIELD] for p in _fixtures()} | {c[TYPE_FIELD] for _, c in _presets()}
    assert {"llama", "mistral", "mixtral", "qwen2_moe", "qwen3_moe"} <= types


@pytest.mark.parametrize("path", _fixtures(), ids=lambda p: p.name)
def test_formulas_read_every_fixture_as_the_python_reader_does(path, lecture_library):
    config = json.loads(path.read_text())
    if path.name in REFUSED:
        with pytest.raises(ScenarioError) as err:
            read_config(READINGS, config)
        assert err.value.message == REFUSED[path.name]
        return
    _assert_same(config, lecture_library.quantities)


@pytest.mark.parametrize("name, config", _presets(), ids=[n for n, _ in _presets()])
def test_formulas_read_every_model_preset_as_the_python_reader_does(name, config, lecture_library):
    _assert_same(config, lecture_library.quantities)


@pytest.fixture(scope="module")
def serving_library():
    return load_library(["serving"])


@pytest.mark.parametrize("path", [p for p in _fixtures() if p.name not in REFUSED], ids=lambda p: p.name)
def test_the_serving_reading_adds_what_the_all_to_all_carries(path, serving_library):
    """The serving library's quantities (moe_layers, dispatch_bytes_per_element for an MoE file) as well."""
    config = json.loads(path.read_text())
    _assert_same(config, serving_library.quantities, SERVING_READINGS)
    values = read_config(SERVING_READINGS, config).values
    assert ("moe_layers" in values) == (config[TYPE_FIELD] in ("mixtral", "qwen2_moe", "qwen3_moe"))


def test_the_serving_library_registers_its_own_reading(serving_library):
    assert serving_library.live_config_formulas == SERVING_READINGS


@pytest.mark.parametrize("name, change", [
    ("mistral-7b-v0.1.json", {"sliding_window": None}),  # no window: every layer full, as Mistral's reader reads it
    ("mha_llama2_13b.json", {"torch_dtype": "bfloat16"}),  # multi-head: num_key_value_heads and head_dim defaulted
    ("mqa_palm540b_shape.json", {"dtype": "torch.float16"}),  # one KV head, a tied head, the newer spelling
    ("llama-3.1-8b.json", {"tie_word_embeddings": True, "n_layer": 3, "num_hidden_layers": None}),
    ("qwen2-57b-a14b.json", {"decoder_sparse_step": 3, "shared_expert_intermediate_size": 0}),
    ("mixtral-8x7b-v0.1.json", {"num_local_experts": None, "num_experts": 4, "max_position_embeddings": None}),
])
def test_formulas_follow_the_defaults_and_aliases_of_the_python_reader(name, change, lecture_library):
    config = {k: v for k, v in {**json.loads((CONFIGS / name).read_text()), **change}.items()}
    _assert_same(config, lecture_library.quantities)


@pytest.mark.parametrize("kv", [sp.Integer(1), sp.Rational(1, 2), sp.Integer(4)])
@pytest.mark.parametrize("name", ["llama3_70b.json", "qwen2-57b-a14b.json"])
def test_a_kv_element_size_the_user_gives_is_read_as_the_python_reader_reads_it(name, kv, lecture_library):
    config = json.loads((CONFIGS / name).read_text())
    reading = read_config(READINGS, config, {"bytes_per_kv_element": kv})
    values = model_values(config, bytes_per_kv_element=kv)
    quantities = lecture_library.quantities
    assert reading.values == {n: sp.Rational(v.value.numerator, v.value.denominator)
                              * sp.Rational(parse_unit(v.unit).scale) for n, v in values.items() if n in quantities}
    assert reading.native == {n for n, v in values.items() if v.native and n in quantities}
    assert reading.values["kv_bytes_per_token"] == kv * read_config(READINGS, config).values["kv_bytes_per_token"] / 2


@pytest.mark.parametrize("name", ["mixtral-8x7b-v0.1.json", "qwen2-57b-a14b.json"])
def test_a_tied_mixture_of_experts_is_left_to_the_python_reader(name):
    # the reader counts a tied MoE's skipped experts itself (params_routed_skipped), a value the formulas lack
    config = {**json.loads((CONFIGS / name).read_text()), "tie_word_embeddings": True}
    assert "params_routed_skipped" in model_values(config)
    with pytest.raises(ScenarioError, match="tie_word_embeddings must be false in a mixture of experts"):
        read_config(READINGS, config)


def _bases() -> dict[str, dict]:
    """One accepted config per declared type (a dense Qwen from Llama 3.1 8B's shape)."""
    llama = json.loads((CONFIGS / "llama-3.1-8b.json").read_text())
    return {
        "llama": llama,
        "mistral": {**json.loads((CONFIGS / "mistral-7b-v0.1.json").read_text()), "sliding_window": None},
        "qwen2": {**llama, "model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "sliding_window": 4096,
                  "use_sliding_window": False},
        "qwen3": {**llama, "model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "head_dim": 128},
        "mixtral": json.loads((CONFIGS / "mixtral-8x7b-v0.1.json").read_text()),
        "qwen2_moe": json.loads((CONFIGS / "qwen2-57b-a14b.json").read_text()),
        "qwen3_moe": dict(next(c for n, c in _presets() if c[TYPE_FIELD] == "qwen3_moe")),
        "phi3": json.loads((CONFIGS / "phi-4.json").read_text()),
        # Llama 3.1 8B's shape under the types with Llama's tensors
        **{t: {**llama, "model_type": t, "architectures": [a]} for t, a in (
            ("olmo2", "Olmo2ForCausalLM"), ("glm4", "Glm4ForCausalLM"), ("granite", "GraniteForCausalLM"),
            ("seed_oss", "SeedOssForCausalLM"))},
    }


def test_every_declared_type_has_a_base():
    assert set(_bases()) == set(READINGS)


# fields the formulas need and the Python reader does not always: the datatype (without it the reader falls back on
# the chip's), and a MoE Qwen's dense width (read only when some layer is dense)
FORMULAS_ONLY = {"torch_dtype": "llama mistral qwen2 qwen3 mixtral qwen2_moe qwen3_moe phi3 olmo2 glm4 granite "
                                "seed_oss",
                 "intermediate_size": "qwen2_moe qwen3_moe"}


def _needed(tname: str, *, own: bool = False) -> list[str]:
    """The fields without a default the Python reader needs for this type (``own``: those only the formulas need)."""
    return [f.name for f in READINGS[tname].fields if f.default is None and not f.optional
            and (tname in FORMULAS_ONLY.get(f.name, "").split()) == own]


@pytest.mark.parametrize("tname, field", [(t, f) for t in sorted(READINGS) for f in _needed(t)])
def test_a_missing_field_is_refused_by_both_readers(tname, field, lecture_library):
    config = _bases()[tname]
    _assert_same(config, lecture_library.quantities)  # the base is read alike
    planted = {k: v for k, v in config.items() if k != field}
    with pytest.raises(ScenarioError) as python:
        model_values(planted)
    with pytest.raises(ScenarioError) as formulas:
        read_config(READINGS, planted)
    assert formulas.value.message == f"missing field '{field}'"
    assert field in python.value.message


@pytest.mark.parametrize("tname, field", [(t, f) for t in sorted(READINGS) for f in _needed(t, own=True)])
def test_a_field_only_the_formulas_need_is_refused_by_them_alone(tname, field, lecture_library):
    planted = {k: v for k, v in _bases()[tname].items() if k != field}
    model_values(planted)  # the Python reader reads it (falling back, or not reading the field)
    with pytest.raises(ScenarioError) as formulas:
        read_config(READINGS, planted)
    assert formulas.value.message == f"missing field '{field}'"


def test_a_refusal_names_the_types_and_the_command():
    line = refusal(READINGS, "missing field 'vocab_size'")
    assert line.startswith("missing field 'vocab_size': this page reads glm4, granite, llama, mistral, ")
    assert line.endswith("for other models run `derive card --model config.json`") and "\n" not in line


# whatever the formulas accept, the Python reader reads alike; whatever it refuses, so do the formulas -----------

ODD_VALUES = [None, 0, 1, 2, 3, 7, 64, -1, 1.5, 4096.0, True, False, "8", 2**40, 2**40 + 1, 10**6, [], [0],
              "bfloat16", "torch.float32", "int4", float("inf")]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(READINGS)), st.lists(st.tuples(st.sampled_from(
    ["hidden_size", "num_hidden_layers", "vocab_size", "tie_word_embeddings", "num_attention_heads",
     "num_key_value_heads", "head_dim", "torch_dtype", "dtype", "max_position_embeddings", "sliding_window",
     "use_sliding_window", "intermediate_size", "num_local_experts", "num_experts", "num_experts_per_tok",
     "experts_per_token", "moe_intermediate_size", "decoder_sparse_step", "shared_expert_intermediate_size",
     "mlp_only_layers", "layer_types", "n_layer", "n_head", "num_kv_heads", "architectures", "quantization_config"]),
    st.sampled_from(ODD_VALUES + ["drop"])), max_size=4))
def test_formulas_never_accept_what_the_python_reader_reads_otherwise(lecture_library, tname, changes):
    config = copy.deepcopy(_bases()[tname])
    for key, value in changes:
        if value == "drop":
            config.pop(key, None)
        else:
            config[key] = ["LlamaForCausalLM", 3][value is True] if key == "architectures" else value
    try:
        reading = read_config(READINGS, config)
    except ScenarioError:
        return  # refused: the page sends the user to the command line, which decides
    expected, native = _python(config, lecture_library.quantities)  # accepted: the Python reader must read it alike
    assert reading.values == expected
    assert reading.native == native


# the declaration itself ----------------------------------------------------------------------------------------

x = sp.Symbol("hidden_size")


@pytest.mark.parametrize("raw, words", [
    ({"llama": {"fields": {"hidden_size": {}}, "values": {"d_model": sp.Symbol("vocab_size")}}},
     "uses 'vocab_size', which is no field"),
    ({"llama": {"fields": {"hidden_size": {"default": "4096"}}, "values": {"d_model": x}}},
     "default must be a number or a sympy expression"),
    ({"llama": {"fields": {"head_dim": {"default": x / 2}, "hidden_size": {}}, "values": {"d_model": x}}},
     "default uses 'hidden_size', which is no earlier field"),
    ({"llama": {"fields": {"torch_dtype": {"choices": {"bf16": "two"}}}, "values": {"d_model": x}}},
     "must map a name to a positive number"),
    ({"llama": {"fields": {"hidden_size": {"maximum": 3}}, "values": {"d_model": x}}}, "must be a table"),
    ({"llama": {"fields": {"hidden_size": {}}, "values": {}}}, "a non-empty 'values'"),
    ({"llama": {"fields": {"hidden_size": {}}, "values": {"d_model": x}, "checks": [(x + 1, "big")]}},
     "must be a (sympy relation, words) pair"),
    ({"llama": {"fields": {"hidden_size": {}}, "values": {"d_model": x}, "native": ["context"]}},
     "'native' must list names of its values"),
    (["llama"], "must be a mapping"),
])
def test_a_malformed_declaration_is_a_library_error(raw, words):
    with pytest.raises(LibraryError) as err:
        validate(raw, where="--library test")
    assert words in err.value.message


def test_a_library_declaring_an_unknown_quantity_is_refused_at_load(tmp_path):
    from derive.model.loader import load_library

    lib = tmp_path / "mine.py"
    lib.write_text("import sympy as sp\nimport derive\n"
                   "size = derive.Quantity('size', 'S', '1', 'a size')\n"
                   "LIVE_CONFIG_FORMULAS = {'toy': {'fields': {'hidden_size': {}}, "
                   "'values': {'not_a_quantity': sp.Symbol('hidden_size')}}}\n")
    with pytest.raises(LibraryError) as err:
        load_library([str(lib)])
    assert "gives 'not_a_quantity', which is no quantity of the library" in err.value.message


def test_the_lecture_library_registers_its_formulas(lecture_library):
    assert set(lecture_library.live_config_formulas) == set(READINGS)
