"""GPT-2, OPT, StarCoder (``gpt_bigcode``) and BLOOM: worked examples against the publishers' totals, planted
refusals, the command line.

The fixtures are the publishers' files (see ``fixtures/configs/SOURCES.md`` for each one's copy and how close it is).
The reader counts weight matrices only (the package's convention): the exact published totals (GPT-2, OPT-125M, BLOOM)
count every tensor, so each test adds the biases and LayerNorms the reader leaves out, counted by hand from the
modelling code, checks the sum equals the published total exactly, and that the reader's own count is within 0.1 % of
it.  SantaCoder's and StarCoderBase's publishers give rounded totals (1.1B, 15.5B).  Every count is also the one
transformers builds on PyTorch's meta device (those tests skip without torch).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from libtools import cli_reads_config, refused_by_reader_and_cli, run_cli

from theorems.configs import SUPPORTED_MODEL_TYPES, cross_check, model_values, param_breakdown

CONFIGS = Path(__file__).parent / "fixtures" / "configs"
TOLERANCE = Fraction(1, 1000)  # the biases and norms the reader leaves out: under 0.1 % of each model here


def _load(name: str) -> dict:
    return json.loads((CONFIGS / name).read_text())


def _within_tolerance(count: int, published: int) -> bool:
    return count <= published and Fraction(published - count, published) < TOLERANCE


# --------------------------------------------------------------------------------------------------
# GPT-2

def _gpt2_not_counted(d: int, n: int) -> int:
    """What the reader leaves out of a GPT-2 model (modeling_gpt2.py): per layer the c_attn bias (3d), the attention
    c_proj bias (d), the MLP's c_fc bias (4d) and c_proj bias (d), two LayerNorms (weight and bias, 4d); the final
    LayerNorm ln_f (2d)."""
    return n * (3 * d + d + 4 * d + d + 4 * d) + 2 * d


# Published totals: every tensor of the checkpoint, GPT2LMHeadModel's parameters as transformers counts them (the tied
# head once): GPT-2 small 124,439,808 (OpenAI's repository names it 124M, models/124M), GPT-2 large 774,030,080 (774M).
GPT2 = {"gpt2.json": (768, 12, 124_439_808), "gpt2-large.json": (1280, 36, 774_030_080)}


def test_gpt2_small_worked_example() -> None:
    v, pb = model_values(_load("gpt2.json")), param_breakdown(_load("gpt2.json"))
    d, n, heads, vocab, positions = 768, 12, 12, 50257, 1024
    # wte (tied to the head), wpe; per layer c_attn (3d x d) and c_proj (d x d), c_fc (d x 4d) and c_proj (4d x d)
    total = vocab * d + positions * d + n * (4 * d * d + 2 * d * 4 * d)
    assert v["params_total"].value == total == 124_318_464
    # the published 124,439,808 is this plus the 121,344 biases and LayerNorm weights: 0.098 % more
    assert total + _gpt2_not_counted(768, 12) == 124_439_808
    assert _within_tolerance(total, 124_439_808)
    # both tables are lookups: the position table is in params_embedding, not in params_active
    assert pb.position_embedding == positions * d == 786_432
    assert v["params_embedding"].value == vocab * d + positions * d == 39_383_808
    assert v["params_active"].value == total - positions * d == 123_532_032  # the tied matrix counts once, as the head
    # 12 layers * 2 (K and V) * 12 heads * 64 head_dim * 2 bytes (no torch_dtype: 2 assumed, said in a note)
    assert v["kv_bytes_per_token"].value == 12 * 2 * heads * 64 * 2 == 36_864
    assert v["head_dim"].value == 64 and v["kv_heads"].value == heads and v["query_heads"].value == heads
    assert v["context"].value == 1024  # n_positions: the table has no row beyond it
    assert any("n_inner' null: the MLP is 4 * n_embd = 3,072" in note for note in v.notes)
    assert any("n_positions as max_position_embeddings" in note for note in v.notes)
    assert any("learned position table wpe" in note for note in v.notes)


@pytest.mark.parametrize("name", sorted(GPT2))
def test_gpt2_totals_equal_the_published_ones(name: str) -> None:
    d, n, published = GPT2[name]
    total = model_values(_load(name))["params_total"].value
    assert total + _gpt2_not_counted(d, n) == published
    assert _within_tolerance(int(total), published)


def test_gpt2_n_inner_given_is_the_mlp_width() -> None:
    config = _load("gpt2.json")
    base = model_values(config)["params_total"].value
    assert model_values(config | {"n_inner": 3072})["params_total"].value == base  # 4 * n_embd written out
    # a narrower MLP: c_fc and c_proj lose 2 * d * 1024 per layer
    assert model_values(config | {"n_inner": 2048})["params_total"].value == base - 12 * 2 * 768 * 1024


def test_gpt2_score_scaling_fields_change_no_count() -> None:
    config = _load("gpt2.json")
    base = model_values(config)
    for change in ({"scale_attn_by_inverse_layer_idx": True}, {"reorder_and_upcast_attn": True},
                   {"scale_attn_weights": False}, {"add_cross_attention": False}):
        other = model_values(config | change)
        assert other["params_total"].value == base["params_total"].value, change
        assert other["kv_bytes_per_token"].value == base["kv_bytes_per_token"].value, change


def test_gpt2_untied_head_is_counted() -> None:
    config = _load("gpt2.json")
    tied = model_values(config)["params_total"].value
    assert model_values(config | {"tie_word_embeddings": False})["params_total"].value == tied + 50257 * 768


def test_gpt2_a_longer_position_table_is_counted_and_is_the_context() -> None:
    v = model_values(_load("gpt2.json") | {"n_positions": 2048, "n_ctx": 2048})
    assert v["params_total"].value == 124_318_464 + 1024 * 768
    assert v["context"].value == 2048


# --------------------------------------------------------------------------------------------------
# OPT

def _opt_not_counted(d: int, n: int) -> int:
    """What the reader leaves out of an OPT model (modeling_opt.py): per layer the q, k, v and out_proj biases (4d),
    fc1's bias (ffn_dim = 4d) and fc2's (d), two LayerNorms (weight and bias, 4d); the final LayerNorm (2d)."""
    return n * (4 * d + 4 * d + d + 4 * d) + 2 * d


def test_opt_125m_worked_example() -> None:
    v, pb = model_values(_load("opt-125m.json")), param_breakdown(_load("opt-125m.json"))
    d, n, heads, ffn, vocab, context = 768, 12, 12, 3072, 50272, 2048
    # embed_tokens (tied to the head), embed_positions with 2 rows more than the context; q, k, v, out_proj; fc1, fc2
    total = vocab * d + (context + 2) * d + n * (4 * d * d + 2 * d * ffn)
    assert v["params_total"].value == total == 125_117_952
    # OPT-125M's published 125,239,296 (every tensor, as transformers counts OPTForCausalLM) is this plus 121,344
    # biases and LayerNorm weights: 0.097 % more
    assert total + _opt_not_counted(d, n) == 125_239_296
    assert _within_tolerance(total, 125_239_296)
    assert pb.position_embedding == 2050 * d == 1_574_400
    assert v["params_embedding"].value == vocab * d + 2050 * d
    assert v["params_active"].value == total - 2050 * d == 123_543_552
    # 12 layers * 2 (K and V) * 12 heads * 64 head_dim * 2 bytes (torch_dtype float16)
    assert v["kv_bytes_per_token"].value == 12 * 2 * heads * 64 * 2 == 36_864
    assert v["bytes_per_param"].value == 2 and v["context"].value == context  # max_position_embeddings, not + 2
    assert any("(max_position_embeddings + 2) = 2,050 rows (an offset of 2)" in note for note in v.notes)


def test_opt_layer_norm_placement_and_bias_flags_change_no_count() -> None:
    config = _load("opt-125m.json")
    base = model_values(config)
    for change in ({"do_layer_norm_before": False}, {"enable_bias": False}, {"layer_norm_elementwise_affine": False},
                   {"_remove_final_layer_norm": True}, {"word_embed_proj_dim": None}):
        other = model_values(config | change)
        assert other["params_total"].value == base["params_total"].value, change
        assert other["kv_bytes_per_token"].value == base["kv_bytes_per_token"].value, change
    assert any("do_layer_norm_before false" in n for n in model_values(config | {"do_layer_norm_before": False}).notes)


def test_opt_untied_head_is_counted() -> None:
    config = _load("opt-125m.json")
    tied = model_values(config)["params_total"].value
    assert model_values(config | {"tie_word_embeddings": False})["params_total"].value == tied + 50272 * 768


# --------------------------------------------------------------------------------------------------
# GPT-BigCode: SantaCoder and StarCoderBase

def _starcoderbase() -> dict:
    """The published SantaCoder file with StarCoderBase's sizes (StarCoder paper, arXiv 2305.06161, section 5.1 "Model
    architecture": 40 layers, width 6144, 48 heads, MLP 24576, 8192 positions, vocabulary 49152, multi-query attention);
    the BigCode files differ only in these."""
    return _load("gpt_bigcode-santacoder.json") | {"n_embd": 6144, "n_head": 48, "n_layer": 40, "n_inner": 24576,
                                                   "n_positions": 8192, "vocab_size": 49152}


def test_santacoder_worked_example() -> None:
    v, pb = model_values(_load("gpt_bigcode-santacoder.json")), param_breakdown(_load("gpt_bigcode-santacoder.json"))
    d, n, heads, hd, inner, vocab, positions = 2048, 24, 16, 128, 8192, 49280, 2048
    # c_attn: 16 query heads and one key and one value head (d + 2 * 128 outputs), c_proj d x d; c_fc and c_proj
    attention = d * (d + 2 * hd) + d * d
    total = vocab * d + positions * d + n * (attention + 2 * d * inner)
    assert v["params_total"].value == total == 1_124_335_616
    assert round(total / 1e8) == 11  # BigCode's SantaCoder: "1.1B parameter models"
    assert pb.position_embedding == positions * d
    assert v["params_active"].value == total - positions * d
    # multi-query: 24 layers * 2 (K and V) * 1 kv head * 128 head_dim * 2 bytes (no torch_dtype: 2 assumed)
    assert v["kv_bytes_per_token"].value == 24 * 2 * 1 * hd * 2 == 12_288
    assert v["kv_heads"].value == 1 and v["query_heads"].value == heads and v["head_dim"].value == hd
    assert v["context"].value == 2048


def test_starcoderbase_is_15_5b_with_a_one_head_cache() -> None:
    v = model_values(_starcoderbase())
    d, n, hd, inner, vocab, positions = 6144, 40, 128, 24576, 49152, 8192
    total = vocab * d + positions * d + n * (d * (d + 2 * hd) + d * d + 2 * d * inner)
    assert v["params_total"].value == total == 15_514_730_496
    assert round(total / 1e8) == 155  # StarCoder paper: "15.5B parameter models"
    # 40 layers * 2 * 128 * 2 bytes = 20,480: 2 * head_dim elements per token and layer, 1/48 of a multi-head cache
    assert v["kv_bytes_per_token"].value == 40 * 2 * hd * 2 == 20_480
    mha = model_values(_starcoderbase() | {"multi_query": False})
    assert mha["kv_bytes_per_token"].value == 48 * v["kv_bytes_per_token"].value
    assert mha["params_total"].value == total + n * d * 2 * (d - hd)  # c_attn 3 * n_embd wide


def test_gpt_bigcode_multi_query_defaults_to_true() -> None:
    config = {k: w for k, w in _load("gpt_bigcode-santacoder.json").items() if k != "multi_query"}
    v = model_values(config)
    assert v["kv_heads"].value == 1 and any("'multi_query' absent" in note for note in v.notes)


# --------------------------------------------------------------------------------------------------
# BLOOM

def _bloom_not_counted(d: int, n: int) -> int:
    """What the reader leaves out of a BLOOM model (modeling_bloom.py): per layer the query_key_value bias (3d), the
    dense bias (d), the MLP's biases (4d and d), two LayerNorms (weight and bias, 4d); word_embeddings_layernorm and
    the final ln_f (2d each)."""
    return n * (3 * d + d + 4 * d + d + 4 * d) + 4 * d


def _bloom_176b() -> dict:
    """The BLOOM-560M file with BLOOM-176B's sizes under the names bigscience/bloom's file uses (n_embed,
    num_attention_heads, seq_length); the model card: 70 layers, 112 heads, width 14336, sequence length 2048."""
    config = {k: w for k, w in _load("bloom-560m.json").items() if k not in ("hidden_size", "n_head")}
    return config | {"n_embed": 14336, "n_layer": 70, "num_attention_heads": 112, "seq_length": 2048}


def test_bloom_560m_worked_example() -> None:
    v, pb = model_values(_load("bloom-560m.json")), param_breakdown(_load("bloom-560m.json"))
    d, n, heads, vocab = 1024, 24, 16, 250880
    # word_embeddings (tied to the head); per layer query_key_value (3d x d) and dense, dense_h_to_4h and dense_4h_to_h
    total = vocab * d + n * (4 * d * d + 2 * d * 4 * d)
    assert v["params_total"].value == total == 558_891_008
    # BLOOM-560M's 559,214,592 (KerasHub's bloom_560m_multi preset, keras-team/keras-hub
    # keras_hub/src/models/bloom/bloom_presets.py @ 1f5bf552444c8835177c60918e13aee68a3cf80b, "params": 559214592) is
    # this plus 323,584 biases and LayerNorm weights: 0.058 % more
    assert total + _bloom_not_counted(d, n) == 559_214_592
    assert _within_tolerance(total, 559_214_592)
    assert pb.position_embedding == 0  # ALiBi: no table
    assert v["params_embedding"].value == vocab * d
    # 24 layers * 2 (K and V) * 16 heads * 64 head_dim * 2 bytes (no torch_dtype: 2 assumed)
    assert v["kv_bytes_per_token"].value == 24 * 2 * heads * 64 * 2 == 98_304
    assert "context" not in v and "max_context" not in v  # no table caps it: the scenario's context is used
    assert any("ALiBi positions, no position table" in note for note in v.notes)


def test_bloom_176b_equals_the_model_card() -> None:
    v = model_values(_bloom_176b())
    d, n, vocab = 14336, 70, 250880
    total = vocab * d + n * 12 * d * d
    assert v["params_total"].value == total == 176_234_168_320
    # bigscience/bloom model card, "Model Architecture and Objective": "176,247,271,424 parameters: 3,596,615,680
    # embedding parameters, 70 layers, 112 attention heads, hidden layers are 14336-dimensional, sequence length of
    # 2048 tokens"
    assert total + _bloom_not_counted(d, n) == 176_247_271_424
    assert _within_tolerance(total, 176_247_271_424)
    assert v["params_embedding"].value == 3_596_615_680
    # 70 layers * 2 * 112 heads * 128 head_dim * 2 bytes = 4,014,080 per token
    assert v["kv_bytes_per_token"].value == 70 * 2 * 112 * 128 * 2 == 4_014_080
    assert "context" not in v
    assert any("seq_length 2,048: the training sequence length, not a cap" in note for note in v.notes)
    assert any("n_embed as hidden_size" in note for note in v.notes)


def test_bloom_context_comes_from_the_scenario(capsys) -> None:
    path = str(CONFIGS / "bloom-560m.json")
    code, out, err = run_cli(capsys, ["eval", "context", "--model", path])
    assert code == 0, err
    assert out.startswith("context = 200k token/seq"), out  # the lecture scenario's, no table to cap it
    code, out, err = run_cli(capsys, ["eval", "context", "--model", path, "--set", "context=4096 token/seq"])
    assert code == 0, err
    assert out.startswith("context = 4,096 token/seq"), out


# --------------------------------------------------------------------------------------------------
# the same counts on PyTorch's meta device (skipped without torch and transformers)

META = {"gpt2.json": lambda: _load("gpt2.json"), "gpt2-large.json": lambda: _load("gpt2-large.json"),
        "opt-125m.json": lambda: _load("opt-125m.json"),
        "gpt_bigcode-santacoder.json": lambda: _load("gpt_bigcode-santacoder.json"),
        "bloom-560m.json": lambda: _load("bloom-560m.json"), "starcoderbase": _starcoderbase,
        "bloom-176b": _bloom_176b, "gpt2 untied": lambda: _load("gpt2.json") | {"tie_word_embeddings": False}}


@pytest.mark.parametrize("name", sorted(META))
def test_the_counts_are_what_the_meta_device_builds(name: str) -> None:
    # transformers' models hold the position tables as nn.Embedding: the meta count puts them with the token table
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    check = cross_check(META[name](), where=name)
    for key in ("params_total", "params_embedding", "attention_layers"):
        hand, meta = check.counts[key]
        assert hand == meta, (key, check.versions)


# --------------------------------------------------------------------------------------------------
# refusals: a planted field the family does not model, one line on the command line too

PLANTED = [
    ("gpt2.json", {"add_cross_attention": True}, "field 'add_cross_attention' is True"),
    ("gpt2.json", {"n_inner": "3072"}, "field 'n_inner' must be a whole number"),
    ("gpt2.json", {"n_inner": 3072.5}, "field 'n_inner' must be a whole number"),
    ("gpt2.json", {"n_embd": None}, "missing field 'n_embd'"),
    ("gpt2.json", {"n_head": 7}, r"n_embd \(768\) is not a multiple of n_head \(7\)"),
    ("gpt2.json", {"hidden_size": 1024}, r"fields 'n_embd' \(768\) and 'hidden_size' \(1024\) disagree"),
    ("gpt2.json", {"num_key_value_heads": 4}, "field 'num_key_value_heads' is 4 but a layer of gpt2 has 12"),
    ("gpt2.json", {"layer_types": ["full_attention"] * 11 + ["mamba"]}, "unknown layer kind 'mamba'"),
    # OPT-350M's layout: a 512-wide token table, project_in and project_out around 1,024-wide layers
    ("opt-125m.json", {"word_embed_proj_dim": 512}, r"field 'word_embed_proj_dim' \(512\) differs from hidden_size"),
    ("opt-125m.json", {"ffn_dim": None}, "missing field 'ffn_dim'"),
    ("opt-125m.json", {"do_layer_norm_before": "yes"}, "field 'do_layer_norm_before' must be true or false"),
    ("opt-125m.json", {"num_key_value_heads": 4}, "field 'num_key_value_heads' is 4 but a layer of opt has 12"),
    ("opt-125m.json", {"max_position_embeddings": 0}, "field 'max_position_embeddings' must be at least 1"),
    ("gpt_bigcode-santacoder.json", {"multi_query": 1}, "field 'multi_query' must be true or false"),
    ("gpt_bigcode-santacoder.json", {"add_cross_attention": True}, "field 'add_cross_attention' is True"),
    ("gpt_bigcode-santacoder.json", {"num_key_value_heads": 16},
     "field 'num_key_value_heads' is 16 but a layer of gpt_bigcode has 1"),
    ("gpt_bigcode-santacoder.json", {"n_inner": -1}, "field 'n_inner' must be at least 1"),
    ("bloom-560m.json", {"n_inner": 2048}, "field 'n_inner' is 2048 but a bloom MLP is 4 \\* hidden_size = 4096"),
    ("bloom-560m.json", {"n_embed": 2048}, r"fields 'n_embed' \(2048\) and 'hidden_size' \(1024\) disagree"),
    ("bloom-560m.json", {"num_key_value_heads": 1}, "field 'num_key_value_heads' is 1 but a layer of bloom has 16"),
    ("bloom-560m.json", {"seq_length": "2k"}, "field 'seq_length' must be a whole number"),
]


@pytest.mark.parametrize("name, change, words", PLANTED, ids=lambda x: x if isinstance(x, str) else "")
def test_a_planted_field_the_family_cannot_place_is_refused(name: str, change: dict, words: str, capsys,
                                                          tmp_path: Path) -> None:
    refused_by_reader_and_cli(capsys, tmp_path, _load(name) | change, words)


# --------------------------------------------------------------------------------------------------
# the command line

@pytest.mark.parametrize("name, total, kv", [("gpt2.json", "124318464", "36864"),
                                             ("opt-125m.json", "125117952", "36864"),
                                             ("gpt_bigcode-santacoder.json", "1124335616", "12288"),
                                             ("bloom-560m.json", "558891008", "98304")])
def test_the_command_line_reads_the_classic_families(name: str, total: str, kv: str, capsys) -> None:
    cli_reads_config(capsys, CONFIGS / name, total, kv)


@pytest.mark.parametrize("mtype", ["gpt2", "opt", "gpt_bigcode", "bloom"])
def test_the_classic_types_are_supported(mtype: str) -> None:
    assert mtype in SUPPORTED_MODEL_TYPES
