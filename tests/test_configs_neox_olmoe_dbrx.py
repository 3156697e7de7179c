"""GPT-NeoX (Pythia), OLMoE and DBRX: worked examples against the publishers' counts, planted refusals, the CLI.

The fixtures are the publishers' files (``pythia-1b.json`` verbatim; ``olmoe-1b-7b-0924.json`` and ``dbrx-base.json``
transcribed, see ``fixtures/configs/SOURCES.md``).  Pythia's totals are exact (the model card's table of total
parameters, which count every tensor): the reader's count plus the biases and LayerNorms it leaves out, counted by
hand, equals them.  OLMoE's and DBRX's publishers give rounded totals and active counts.  Every count is also the one
transformers 5.24 builds on PyTorch's meta device (those tests skip without torch).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from libtools import cli_reads_config, refused_by_reader_and_cli, run_cli

from derive.errors import ScenarioError
from theorems.configs import SUPPORTED_MODEL_TYPES, cross_check, model_values, param_breakdown

CONFIGS = Path(__file__).parent / "fixtures" / "configs"


def _load(name: str) -> dict:
    return json.loads((CONFIGS / name).read_text())


def _kv(layers: int, kv_heads: int, head_dim: int, e: int) -> int:
    """KV bytes per token: keys and values (2) of ``kv_heads`` heads of ``head_dim`` in ``layers`` layers."""
    return layers * 2 * kv_heads * head_dim * e


# --------------------------------------------------------------------------------------------------
# GPT-NeoX: Pythia

def _neox_not_counted(d: int, n: int) -> int:
    """What the reader leaves out of a GPT-NeoX model: per layer the query_key_value bias (3d), the dense bias (d),
    the MLP's biases (4d and d) and two LayerNorms (weight and bias, 4d); the final LayerNorm (2d)."""
    return n * (3 * d + d + 4 * d + d + 4 * d) + 2 * d


# Pythia model card, "Naming convention and parameter count" (total params, every tensor), as copied in
# shimo-lab/modelmap 1000models/code_for_Section_5_and_Appendix_L/data/model_cards/EleutherAI_pythia-1.4b.md
# @ a064c6ea6442a46893f65989a26b15b78d01eda0.  Sizes: layers, width, heads (the same card), vocab_size as each
# checkpoint's config.json pads it (50,304; 50,432; 50,688 for the 12B, as fine-tunes of it print their config.json).
# GPT-NeoX-20B: its model card's hyperparameter table, "n_parameters 20554567680", 44 layers of 6144, 64 heads (a
# public copy of huggingface.co/EleutherAI/gpt-neox-20b's card, content search); its config.json's vocab_size 50,432.
NEOX = {
    # name: (layers, d_model, heads, vocab_size, published total)
    "pythia-1b": (16, 2048, 8, 50304, 1_011_781_632),
    "pythia-1.4b": (24, 2048, 16, 50304, 1_414_647_808),
    "pythia-6.9b": (32, 4096, 32, 50432, 6_857_302_016),
    "pythia-12b": (36, 5120, 40, 50688, 11_846_072_320),
    "gpt-neox-20b": (44, 6144, 64, 50432, 20_554_567_680),
}


def _neox(name: str) -> dict:
    """The published pythia-1b file with another GPT-NeoX model's sizes (the Pythia suite's files differ only in these;
    GPT-NeoX-20B's also in its activation, gelu_fast, which sets no shape)."""
    n, d, heads, vocab, _ = NEOX[name]
    return _load("pythia-1b.json") | {"num_hidden_layers": n, "hidden_size": d, "num_attention_heads": heads,
                                      "intermediate_size": 4 * d, "vocab_size": vocab}


def test_pythia_1b_worked_example() -> None:
    v = model_values(_load("pythia-1b.json"))
    d, n, heads, width, vocab = 2048, 16, 8, 8192, 50304
    # query_key_value (3 d x d) and dense (d x d); dense_h_to_4h and dense_4h_to_h (no gate); untied embed_out
    total = 2 * vocab * d + n * (4 * d * d + 2 * d * width)
    assert v["params_total"].value == total == 1_011_351_552
    assert total + _neox_not_counted(d, n) == 1_011_781_632  # the model card's total, every tensor
    assert v["params_embedding"].value == vocab * d == 103_022_592
    assert v["params_active"].value == total - vocab * d == 908_328_960  # the input embedding is a lookup
    # 16 layers * 2 (K and V) * 8 heads * 256 head_dim * 2 bytes (float16) = 131,072
    assert v["kv_bytes_per_token"].value == _kv(16, 8, 256, 2) == 131_072
    assert v["head_dim"].value == 256 and v["kv_heads"].value == heads
    assert v["bytes_per_param"].value == 2 and v["context"].value == 2048
    assert any("rotary_pct 0.25: rotary embedding on 64 of each head's 256" in note for note in v.notes)
    assert any("use_parallel_residual" in note for note in v.notes)


@pytest.mark.parametrize("name", sorted(NEOX))
def test_gpt_neox_totals_equal_the_model_cards(name: str) -> None:
    n, d, heads, vocab, published = NEOX[name]
    v = model_values(_neox(name))
    assert v["params_total"].value + _neox_not_counted(d, n) == published
    assert v["kv_bytes_per_token"].value == _kv(n, heads, d // heads, 2)  # multi-head: every head keeps K and V


def test_pythia_partial_rotary_and_residual_layout_change_no_count() -> None:
    config = _load("pythia-1b.json")
    base = model_values(config)
    for change in ({"rotary_pct": 1.0}, {"use_parallel_residual": False}, {"rotary_pct": None}):
        other = model_values(config | change)
        assert other["params_total"].value == base["params_total"].value, change
        assert other["kv_bytes_per_token"].value == base["kv_bytes_per_token"].value, change
    assert any("use_parallel_residual false" in n for n in model_values(config | {"use_parallel_residual": False}
                                                                           ).notes)


def test_pythia_reads_its_untied_head() -> None:
    config = _load("pythia-1b.json")
    untied = model_values(config)["params_total"].value
    tied = model_values(config | {"tie_word_embeddings": True})["params_total"].value
    assert untied - tied == 50304 * 2048  # embed_out, its own matrix
    # GPTNeoXConfig's default is untied: a file without the flag still counts embed_out
    assert model_values({k: v for k, v in config.items() if k != "tie_word_embeddings"})["params_total"].value == untied


# --------------------------------------------------------------------------------------------------
# OLMoE

def test_olmoe_1b_7b_worked_example() -> None:
    v, pb = model_values(_load("olmoe-1b-7b-0924.json")), param_breakdown(_load("olmoe-1b-7b-0924.json"))
    d, n, heads, hd, experts, active, width, vocab = 2048, 16, 16, 128, 64, 8, 1024, 50304
    attention = 4 * d * heads * hd  # q, k, v and o; 16 KV heads, one per query head
    expert = 3 * d * width  # gate, up and down
    router = d * experts
    total = 2 * vocab * d + n * (attention + experts * expert + router)
    assert v["params_total"].value == total == 6_919_028_736
    # OLMoE paper (arXiv 2409.02060), Table 1: 6.9B total, 1.3B active (the active count with the input embedding)
    assert round(total / 1e8) == 69
    assert pb.active_with_embedding == 2 * vocab * d + n * (attention + active * expert + router) == 1_281_884_160
    assert round(pb.active_with_embedding / 1e8) == 13
    assert v["params_active"].value == pb.active_with_embedding - vocab * d == 1_178_861_568
    assert v["params_embedding"].value == vocab * d
    assert v["experts_total"].value == 64 and v["experts_active"].value == 8 and v["moe_layers"].value == 16
    assert "experts_shared" not in v
    # the file names no datatype: 2 bytes assumed, said in a note; 16 layers * 2 * 16 heads * 128 * 2 B
    assert v["kv_bytes_per_token"].value == _kv(16, 16, 128, 2) == 131_072
    assert any("clip_qkv null" in note for note in v.notes)


# --------------------------------------------------------------------------------------------------
# DBRX

def test_dbrx_worked_example() -> None:
    v, pb = model_values(_load("dbrx-base.json")), param_breakdown(_load("dbrx-base.json"))
    d, n, heads, kv, hd, experts, active, width, vocab = 6144, 40, 48, 8, 128, 16, 4, 10752, 100352
    attention = d * (heads + 2 * kv) * hd + heads * hd * d  # Wqkv (48 query + 8 key + 8 value heads) and out_proj
    expert = 3 * d * width  # w1, v1 and w2
    router = d * experts
    total = 2 * vocab * d + n * (attention + experts * expert + router)
    assert v["params_total"].value == total == 131_596_025_856
    # Databricks' announcement: "132B total parameters of which 36B parameters are active on any input"
    assert round(total / 1e9) == 132
    assert pb.active_with_embedding == 2 * vocab * d + n * (attention + active * expert + router) == 36_469_211_136
    assert round(pb.active_with_embedding / 1e9) == 36
    assert v["params_active"].value == pb.active_with_embedding - vocab * d
    assert v["experts_total"].value == 16 and v["experts_active"].value == 4
    # 40 layers * 2 (K and V) * 8 kv heads * 128 head_dim * 2 bytes (bfloat16) = 163,840
    assert v["kv_bytes_per_token"].value == _kv(40, 8, 128, 2) == 163_840
    assert v["context"].value == 32768 and v["d_model"].value == d
    assert any("ffn_config.moe_num_experts as num_local_experts" in note for note in v.notes)


def test_dbrx_without_max_seq_len_takes_dbrx_configs_default() -> None:
    config = {k: w for k, w in _load("dbrx-base.json").items() if k != "max_seq_len"}
    v = model_values(config)
    assert v["context"].value == 2048 and any("'max_position_embeddings' absent" in n for n in v.notes)


@pytest.mark.parametrize("config", ["pythia-1b.json", "olmoe-1b-7b-0924.json", "dbrx-base.json", *sorted(NEOX)])
def test_the_counts_are_what_the_meta_device_builds(config: str) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    cfg = _load(config) if config.endswith(".json") else _neox(config)
    check = cross_check(cfg, where=config)
    for key in ("params_total", "params_embedding", "routed_experts", "attention_layers"):
        hand, meta = check.counts[key]
        assert hand == meta, (key, check.versions)


# --------------------------------------------------------------------------------------------------
# refusals: a planted layer kind or a field the family cannot place, one line on the command line too

PLANTED = [
    ("pythia-1b.json", {"layer_types": ["full_attention"] * 15 + ["mamba"]}, "unknown layer kind 'mamba'"),
    ("pythia-1b.json", {"num_key_value_heads": 2}, "field 'num_key_value_heads' is 2"),
    ("pythia-1b.json", {"head_dim": 128}, "field 'head_dim' is 128"),
    ("pythia-1b.json", {"rotary_pct": 1.5}, "field 'rotary_pct'"),
    ("olmoe-1b-7b-0924.json", {"layer_types": ["full_attention"] * 15 + ["linear_attention"]},
     "linear-attention layer"),
    ("olmoe-1b-7b-0924.json", {"kv_lora_rank": 512}, "kv_lora_rank"),
    ("olmoe-1b-7b-0924.json", {"num_experts_per_tok": 65}, "65 experts per token but only 64"),
    ("dbrx-base.json", {"layer_types": ["full_attention"] * 39 + ["mamba"]}, "unknown layer kind 'mamba'"),
    ("dbrx-base.json", {"ffn_config": {"ffn_hidden_size": 10752, "moe_num_experts": 16}},
     "missing field 'ffn_config.moe_top_k'"),
    ("dbrx-base.json", {"attn_config": 8}, "field 'attn_config' must be an object"),
    ("dbrx-base.json", {"hidden_size": 4096}, "'d_model' .* and 'hidden_size' .* disagree"),
    ("dbrx-base.json", {"n_heads": 12.5}, "field 'n_heads' must be a whole number"),
]


@pytest.mark.parametrize("name, change, words", PLANTED, ids=lambda x: x if isinstance(x, str) else "")
def test_a_planted_field_the_family_cannot_place_is_refused(name: str, change: dict, words: str, capsys,
                                                          tmp_path: Path) -> None:
    refused_by_reader_and_cli(capsys, tmp_path, _load(name) | change, words)


# --------------------------------------------------------------------------------------------------
# the command line

@pytest.mark.parametrize("name, total, kv", [("pythia-1b.json", "1011351552", "131072"),
                                             ("olmoe-1b-7b-0924.json", "6919028736", "131072"),
                                             ("dbrx-base.json", "131596025856", "163840")])
def test_the_command_line_reads_the_new_families(name: str, total: str, kv: str, capsys) -> None:
    cli_reads_config(capsys, CONFIGS / name, total, kv)


@pytest.mark.parametrize("name", ["pythia-1b.json", "olmoe-1b-7b-0924.json", "dbrx-base.json"])
def test_every_claim_is_checked_under_the_new_files(name: str, capsys, tmp_path: Path) -> None:
    # the scenario each file gives is checked whole, as for any other model: no surprise
    code, out, err = run_cli(capsys, ["check", "--model", str(CONFIGS / name), "--cache-dir", str(tmp_path / "cache")])
    assert code == 0, err
    assert "0 surprises" in out.strip().splitlines()[-1]


@pytest.mark.parametrize("mtype", ["gpt_neox", "olmoe", "dbrx"])
def test_the_new_types_are_supported(mtype: str) -> None:
    assert mtype in SUPPORTED_MODEL_TYPES


def test_a_renamed_dbrx_file_is_refused_not_guessed() -> None:
    # its sizes are under names no other family reads: an unknown type with them is refused in one line
    config = _load("dbrx-base.json") | {"model_type": "my_model", "architectures": ["MyModelForCausalLM"]}
    with pytest.raises(ScenarioError, match="my_model") as err:
        model_values(config)
    assert "\n" not in str(err.value)
