"""A config.json that says something impossible is refused with one line naming the field (or, for a known
way of writing "unlimited", read with a note): each test protects one defect where such a file was read silently,
and is named for it."""

from __future__ import annotations

import json

import pytest
from libtools import one_error_line, run_cli

LLAMA = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
         "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
         "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}


run = run_cli


def test_config_json_with_a_duplicate_key_is_refused(tmp_path, capsys):
    # json keeps the last of two equal keys: a config naming num_hidden_layers twice was read as 64 layers, silently
    text = json.dumps(LLAMA)[:-1] + ', "num_hidden_layers": 64}'
    (tmp_path / "config.json").write_text(text)
    code, out, err = run(capsys, ["eval", "layers", "--model", str(tmp_path / "config.json")])
    one_error_line(code, err)
    assert "'num_hidden_layers' appears twice" in err and "config.json" in err, err
    assert out == ""


@pytest.mark.parametrize(("value", "words"), [(-1, "at least 1, got -1"), (0, "at least 1, got 0"),
                                              (True, "a whole number, got True"), (1.5, "a whole number, got 1.5"),
                                              ("128k", "a whole number, got '128k'")])
def test_config_json_max_position_embeddings_that_is_no_context_is_refused(tmp_path, capsys, value, words):
    # it was dropped silently, and a note said the config "does not give" a context: the lecture's 200k was used
    (tmp_path / "config.json").write_text(json.dumps({**LLAMA, "max_position_embeddings": value}))
    code, out, err = run(capsys, ["eval", "context", "--model", str(tmp_path / "config.json")])
    one_error_line(code, err)
    assert "field 'max_position_embeddings' must be" in err and words in err, err
    assert out == ""


@pytest.mark.parametrize("quantization", [
    {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 0}}}},
    {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": True}}}},
    {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 1000}}}},
    {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 8}}},
     "kv_cache_scheme": {"num_bits": True}},
], ids=["0 bits", "true bits", "1000 bits", "true kv bits"])
def test_config_json_quantization_bits_that_are_no_width_are_refused(tmp_path, capsys, quantization):
    # 0 bits made the quantized weights weigh nothing (bytes_per_param 0.26 from the embeddings alone), true read
    # as 1 bit, 1000 bits as 125 bytes per weight: each silently
    (tmp_path / "config.json").write_text(json.dumps({**LLAMA, "quantization_config": quantization}))
    code, out, err = run(capsys, ["eval", "bytes_per_param", "--model", str(tmp_path / "config.json")])
    one_error_line(code, err)
    assert "'num_bits' from 1 to 16" in err and "config.json" in err, err


@pytest.mark.parametrize("block", [[128, True], [0, 128], "128x128", [128]])
def test_config_json_fp8_block_size_that_is_no_block_is_refused(tmp_path, capsys, block):
    # [128, true] read as a 128x1 block (an FP32 scale per 128 weights); [0, 128] or "128x128" as per-tensor scales
    quantization = {"quant_method": "fp8", "weight_block_size": block}
    (tmp_path / "config.json").write_text(json.dumps({**LLAMA, "quantization_config": quantization}))
    code, out, err = run(capsys, ["eval", "bytes_per_param", "--model", str(tmp_path / "config.json")])
    one_error_line(code, err)
    assert "weight_block_size must be two whole numbers" in err, err


@pytest.mark.parametrize("group", [0, True, "128", 1.5, -2])
def test_config_json_awq_group_size_that_is_no_size_is_refused(tmp_path, capsys, group):
    # each read as per-channel scales (no group scales counted), silently; -1 (GPTQ's per-channel) stays valid
    quantization = {"quant_method": "gptq", "bits": 4, "group_size": group}
    (tmp_path / "config.json").write_text(json.dumps({**LLAMA, "quantization_config": quantization}))
    code, out, err = run(capsys, ["eval", "bytes_per_param", "--model", str(tmp_path / "config.json")])
    one_error_line(code, err)
    assert "group_size must be a whole number" in err, err
    (tmp_path / "config.json").write_text(json.dumps({**LLAMA, "quantization_config": {**quantization,
                                                                                         "group_size": -1}}))
    code, out, err = run(capsys, ["eval", "bytes_per_param", "--model", str(tmp_path / "config.json")])
    assert code == 0 and "per-channel" in out + err, err


@pytest.mark.parametrize(("quantization", "words"), [
    ({"quant_method": "compressed-tensors", "config_groups": [1]}, "config_groups must be an object"),
    ({"quant_method": "fp8", "modules_to_not_convert": 5}, "must be a list of module names"),
    ({"quant_method": "fp8", "modules_to_not_convert": "lm_head"}, "must be a list of module names"),
])
def test_config_json_quantization_lists_of_the_wrong_type_name_the_field(tmp_path, capsys, quantization, words):
    # these were "the library's config reader failed: AttributeError: 'list' object has no attribute 'values'"
    # ("lm_head" as a string was read letter by letter)
    (tmp_path / "config.json").write_text(json.dumps({**LLAMA, "quantization_config": quantization}))
    code, out, err = run(capsys, ["eval", "bytes_per_param", "--model", str(tmp_path / "config.json")])
    one_error_line(code, err)
    assert words in err and "Error:" not in err, err


def test_config_json_unlimited_max_position_embeddings_is_noted_not_fatal(tmp_path, capsys):
    # the companion of the refusals above: 1e30 is how some files say "unlimited"; it is not read, and says so
    (tmp_path / "config.json").write_text(json.dumps({**LLAMA, "max_position_embeddings": 10**30}))
    code, out, err = run(capsys, ["eval", "context", "--model", str(tmp_path / "config.json")])
    assert code == 0, err
    assert "max_position_embeddings = 1e30 is no real context" in out + err


@pytest.mark.parametrize(("field", "value", "hint"), [
    ("tie_word_embeddings", "yes", "a JSON boolean, true or false without quotes"),
    ("num_hidden_layers", "32", "config.json sizes are JSON numbers"),
])
def test_a_config_field_of_the_wrong_json_type_gets_a_hint_for_its_type(tmp_path, field, value, hint):
    # a boolean written as text was told "config.json sizes are JSON numbers"
    from pathlib import Path

    from derive.errors import ScenarioError
    from derive.model.loader import load_library
    from derive.model.scenario import build_scenario

    config = json.loads((Path(__file__).parent / "fixtures" / "configs" / "llama-3.1-8b.json").read_text())
    config[field] = value
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ScenarioError) as err:
        build_scenario(load_library(["lecture"]), model=str(tmp_path / "config.json"))
    assert err.value.hint == hint
