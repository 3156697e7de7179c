"""Tencent Hunyuan's decoders: the dense ``hunyuan_v1_dense`` (the publisher's Hy-MT2-7B file) and the mixture of
experts ``hunyuan_v1_moe`` (the publisher's Hunyuan-A13B file), each worked by hand, the fields of Tencent's own code
the reader refuses rather than guesses, the command line.

Hy-MT2-7B: no exact published count was found: Tencent names the model by its size class ("Hy-MT2 ... 1.8B, 7B and
30B-A3B", the Hy-MT2 model card); the count is checked against transformers 5.24's meta-device build (skipped without
torch).  Hunyuan-A13B: Tencent publishes "80 billion total parameters while activating only 13 billion" (Hunyuan-A13B
Technical Report, abstract and section 2.2, in Tencent-Hunyuan/Hunyuan-A13B
@ df832ebcc42e64db91ec1a4eadb90c296f3c7346, ``report/Hunyuan_A13B_Technical_Report.pdf``), rounded figures.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from libtools import refused_by_reader_and_cli, run_cli

from theorems.configs import SUPPORTED_MODEL_TYPES, cross_check, model_values

CONFIGS = Path(__file__).parent / "fixtures" / "configs"
NAME = "hy-mt2-7b.json"


def _load() -> dict:
    return json.loads((CONFIGS / NAME).read_text())


def test_hy_mt2_7b_worked_example() -> None:
    v = model_values(_load())
    d, n, heads, kv, hd, width, vocab = 4096, 32, 32, 8, 128, 14336, 128167
    attention = d * heads * hd + 2 * d * kv * hd + heads * hd * d  # q, k and v (8 KV heads), o
    total = vocab * d + n * (attention + 3 * d * width)  # tied: the embedding is the head; gate, up and down
    assert v["params_total"].value == total == 7_504_293_888
    assert v["params_active"].value == total  # tied: the matrix counts once, as the output head
    assert v["params_embedding"].value == vocab * d == 524_972_032
    # 32 layers * 2 (K and V) * 8 kv heads * 128 head_dim * 2 bytes (bfloat16) = 131,072
    assert v["kv_bytes_per_token"].value == n * 2 * kv * hd * 2 == 131_072
    assert v["context"].value == 262144 and v["bytes_per_param"].value == 2
    assert any("use_qk_norm" in note for note in v.notes)


def test_hy_mt2_7b_counts_as_the_meta_device_builds_it() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    check = cross_check(_load(), where=NAME)
    assert check.counts["params_total"] == (7_504_293_888, 7_504_293_888), check.versions


@pytest.mark.parametrize("change, words", [
    ({"use_cla": True}, "field 'use_cla' is true: cross-layer attention"),
    ({"attention_head_dim": 64}, "field 'attention_head_dim' \\(64\\) disagrees with the head size read \\(128\\)"),
    ({"layer_types": ["full_attention"] * 31 + ["mamba"]}, "unknown layer kind 'mamba'"),
    ({"num_key_value_heads": 7}, "not a multiple"),
])
def test_a_planted_hunyuan_field_the_reader_cannot_place_is_refused(change: dict, words: str, capsys,
                                                                   tmp_path: Path) -> None:
    refused_by_reader_and_cli(capsys, tmp_path, _load() | change, words)


def test_the_command_line_reads_the_hunyuan_file(capsys, tmp_path: Path) -> None:
    path = str(CONFIGS / NAME)
    code, out, err = run_cli(capsys, ["eval", "params_total", "--model", path])
    assert code == 0 and "exactly 7504293888 " in out.splitlines()[0], err
    code, out, err = run_cli(capsys, ["card", "--hardware", "h100-sxm", "--model", path])
    assert code == 0 and "roofline.latency_floor (proved)" in out, err
    code, out, err = run_cli(capsys, ["check", "--model", path, "--cache-dir", str(tmp_path / "cache")])
    assert code == 0 and "0 surprises" in out.strip().splitlines()[-1], err


def test_hunyuan_dense_is_supported() -> None:
    assert "hunyuan_v1_dense" in SUPPORTED_MODEL_TYPES


A13B = "hunyuan-a13b-instruct.json"
# Hunyuan-A13B by hand (Technical Report, Table 1: 32 layers, 32 heads, 8 KV heads, 1 shared and 64 routed experts,
# 8 active, hidden 4096, FFN 3072): every layer attention, one shared gated MLP, 64 gated experts and a router
D, N, HEADS, KV, HD, WIDTH, VOCAB, EXPERTS, TOP_K = 4096, 32, 32, 8, 128, 3072, 128167, 64, 8
ATTENTION = D * HEADS * HD + 2 * D * KV * HD + HEADS * HD * D  # q, k and v (8 KV heads), o
EXPERT = 3 * D * WIDTH  # gate, up and down
A13B_TOTAL = VOCAB * D + N * (ATTENTION + EXPERT + EXPERTS * EXPERT + D * EXPERTS)  # tied: the embedding is the head
A13B_ACTIVE = VOCAB * D + N * (ATTENTION + EXPERT + TOP_K * EXPERT + D * EXPERTS)


def _a13b() -> dict:
    return json.loads((CONFIGS / A13B).read_text())


def test_hunyuan_a13b_worked_example() -> None:
    v = model_values(_a13b())
    assert v["params_total"].value == A13B_TOTAL == 80_392_908_800
    assert v["params_active"].value == A13B_ACTIVE == 12_747_173_888
    assert v["params_embedding"].value == VOCAB * D == 524_972_032
    # 32 layers * 2 (K and V) * 8 kv heads * 128 head_dim * 2 bytes (bfloat16) = 131,072: every layer keeps its own
    # cache (use_cla false)
    assert v["kv_bytes_per_token"].value == N * 2 * KV * HD * 2 == 131_072
    assert (v["experts_total"].value, v["experts_active"].value, v["experts_shared"].value) == (64, 8, 1)
    assert v["moe_layers"].value == N and v["bytes_per_param"].value == 2
    assert v["context"].value == 32768  # max_position_embeddings of the publisher's file
    assert any(note.startswith("head_dim 128 from attention_head_dim") for note in v.notes)


def test_hunyuan_a13b_against_tencents_rounded_counts() -> None:
    # "80 billion total ... 13 billion active": within half a billion, the rounding of a figure in whole billions; the
    # reader leaves out the norms (q and k norms, two per layer, the final one: under 0.3M weights in all)
    assert float(A13B_TOTAL) == pytest.approx(80e9, abs=0.5e9)
    assert float(A13B_ACTIVE) == pytest.approx(13e9, abs=0.5e9)


def test_the_publishers_model_type_hunyuan_reads_by_its_architecture() -> None:
    config = _a13b()
    assert config["model_type"] == "hunyuan"  # Tencent's GitHub copy predates transformers' hunyuan_v1_moe
    renamed = config | {"model_type": "hunyuan_v1_moe"}
    assert model_values(renamed)["params_total"].value == model_values(config)["params_total"].value


def test_per_layer_lists_and_single_values_read_the_same() -> None:
    single = _a13b() | {"moe_topk": 8, "moe_intermediate_size": 3072, "num_shared_expert": 1}
    assert model_values(single)["params_active"].value == A13B_ACTIVE


def test_a_shared_mlp_not_named_is_the_one_transformers_builds() -> None:
    config = {k: v for k, v in _a13b().items() if k not in ("use_mixed_mlp_moe", "num_shared_expert")}
    v = model_values(config)
    assert v["params_total"].value == A13B_TOTAL
    assert any("'use_mixed_mlp_moe' absent" in note for note in v.notes)


@pytest.mark.parametrize("change, words", [
    ({"use_cla": True}, "field 'use_cla' is true: cross-layer attention"),
    ({"use_mla": True}, "field 'use_mla' is true"),
    ({"moe_intermediate_size": [1536] * 32}, "field 'moe_intermediate_size' \\(1536\\) is not intermediate_size"),
    ({"moe_topk": [8] * 31 + [2]}, "field 'moe_topk' differs between layers \\(2, 8\\)"),
    ({"num_experts": [64] * 16 + [32] * 16}, "field 'num_experts' differs between layers"),
    ({"moe_topk": [8] * 31}, "field 'moe_topk' lists 31 layers but num_hidden_layers is 32"),
    ({"num_experts": 1}, "field 'num_experts' is 1"),
    ({"num_shared_expert": [2] * 32}, "field 'num_shared_expert' is 2"),
    ({"use_mixed_mlp_moe": False}, "field 'use_mixed_mlp_moe' is false"),
    ({"moe_layer_num_skipped": 1}, "field 'moe_layer_num_skipped' is 1"),
    ({"add_classification_head": True}, "field 'add_classification_head' is true"),
    ({"attention_head_dim": 64}, "field 'attention_head_dim' \\(64\\) disagrees"),
    ({"moe_topk": None}, "missing field 'moe_topk'"),
    ({"moe_topk": [8] * 31 + ["8"]}, "field 'moe_topk\\[31\\]' must be a whole number"),
    ({"moe_topk": 80}, "80 experts per token but only 64 experts"),
])
def test_a_planted_hunyuan_moe_field_the_reader_cannot_place_is_refused(change: dict, words: str, capsys,
                                                                       tmp_path: Path) -> None:
    refused_by_reader_and_cli(capsys, tmp_path, _a13b() | change, words)


def test_the_command_line_reads_the_hunyuan_a13b_file(capsys, tmp_path: Path) -> None:
    path = str(CONFIGS / A13B)
    code, out, err = run_cli(capsys, ["eval", "params_active", "--model", path])
    assert code == 0 and "exactly 12747173888 " in out.splitlines()[0], err
    code, out, err = run_cli(capsys, ["card", "--hardware", "h100-sxm", "--model", path])
    assert code == 0 and "roofline.latency_floor (proved)" in out, err


def test_hunyuan_moe_is_supported() -> None:
    assert "hunyuan_v1_moe" in SUPPORTED_MODEL_TYPES
