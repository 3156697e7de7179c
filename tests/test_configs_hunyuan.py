"""Tencent Hunyuan's dense decoders (``hunyuan_v1_dense``): the publisher's Hy-MT2-7B file worked by hand, the fields of
Tencent's own code the reader refuses rather than guesses, the command line.

No exact published count was found: Tencent names the model by its size class ("Hy-MT2 ... 1.8B, 7B and 30B-A3B", the
Hy-MT2 model card); the count is checked against transformers 5.24's meta-device build (skipped without torch).
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
