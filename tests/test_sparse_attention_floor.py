"""Sparse attention (DeepSeek-V3.2): the cache holds every token, a decode step reads the indexer's keys for every
token and the latent cache of the top k only.  The strict floor reads what a step cannot skip, so it stays below a
real decode at long context; the memory a sequence holds still counts every token."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from derive.cli import main
from derive.model.evaluate import evaluate
from derive.model.loader import load_library
from derive.model.scenario import build_scenario

V32 = str(Path(__file__).parent / "fixtures" / "configs" / "deepseek-v3.2.json")
LAYERS, LATENT, INDEXER, TOPK = 61, 576, 128 + 4, 2048  # per layer: 576 BF16 latent elements; 128 FP8 keys + a scale
H200 = {"chips": 8, "bandwidth": Fraction(4_800) * 10**9}


@pytest.fixture(scope="module")
def lib():
    return load_library(["lecture"])


def _value(lib, name: str, context: int, batch: int = 64) -> Fraction:
    sc = build_scenario(lib, hardware="h200", model=V32, sets=[f"context={context} token/seq", f"batch={batch} seq"])
    return Fraction(str(evaluate(lib, sc, name).exact))


@pytest.mark.parametrize("context", [1_024, 2_048, 8_192, 131_072])
def test_the_floor_reads_every_indexer_key_and_the_top_k_of_the_latent_cache(lib, context) -> None:
    read = LAYERS * (INDEXER * context + LATENT * 2 * min(context, TOPK))  # bytes one sequence's step reads
    assert _value(lib, "kv_read_bytes_per_sequence", context) == read
    assert _value(lib, "kv_read_time_floor", context) == 64 * read / (H200["chips"] * H200["bandwidth"])


@pytest.mark.parametrize("context", [1_024, 131_072])
def test_the_cache_a_sequence_holds_counts_every_token(lib, context) -> None:
    held = LAYERS * (INDEXER + LATENT * 2) * context
    assert _value(lib, "kv_bytes_per_sequence", context) == held
    assert _value(lib, "kv_fetch_time", context) == 64 * held / (H200["chips"] * H200["bandwidth"])


def test_at_long_context_the_floor_reads_a_seventh_of_the_cache(lib) -> None:
    """131,072 tokens: 10.27 GB held a sequence, 1.2 GB read; the step floor of 64 sequences on eight H200s falls
    from the whole cache's 18 ms to 2.98 ms (weights 0.98 ms plus 2 ms of KV)."""
    read, held = (_value(lib, n, 131_072) for n in ("kv_read_bytes_per_sequence", "kv_bytes_per_sequence"))
    assert 6.5 < held / read < 9
    floor = _value(lib, "step_time_floor", 131_072)
    assert Fraction(29, 10_000) < floor < Fraction(3, 1_000)


def test_a_dense_model_reads_its_whole_cache(lib) -> None:
    sc = build_scenario(lib, hardware="h100-sxm", model="llama3-70b", sets=["context=65536 token/seq"])
    names = ("kv_read_time_floor", "kv_fetch_time", "kv_sparse_bytes_per_token")
    values = {n: evaluate(lib, sc, n).exact for n in names}
    assert values["kv_sparse_bytes_per_token"] == 0 and values["kv_read_time_floor"] == values["kv_fetch_time"]


def test_a_sparse_part_larger_than_the_cache_is_one_line(capsys) -> None:
    assert main(["eval", "step_time_floor", "--set", "kv_sparse_bytes_per_token=1 MB/token"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "kv_sparse_bytes_per_token <= kv_bytes_per_token" in err


def test_a_sparse_attention_config_without_its_top_k_is_refused(capsys, tmp_path) -> None:
    config = json.loads(Path(V32).read_text())
    del config["index_topk"]
    path = tmp_path / "v32.json"
    path.write_text(json.dumps(config))
    assert main(["eval", "step_time_floor", "--hardware", "h200", "--model", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "index_topk" in err


def test_an_audit_row_of_a_long_context_decode_is_held_to_what_it_reads(tmp_path, capsys) -> None:
    """A made-up 10 ms TPOT for 64 sequences at 128K on eight H200s: below the whole cache's read (17 ms), above
    what sparse attention reads: consistent, never impossible."""
    rows = tmp_path / "v32.csv"
    rows.write_text(f"model,hardware,chips,batch,context,bytes_per_kv_element,tpot\n{V32},h200,8,64,131072,2,10 ms\n")
    code = main(["audit", str(rows), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["rows"][0]["verdict"] == "consistent"


def test_a_row_that_states_no_kv_width_is_held_without_its_kv_reads_sparse_part_included(tmp_path, capsys) -> None:
    """Without bytes_per_kv_element the row's KV columns are zero (the weakest form): the sparse part too, so the
    KV term is 0, never negative (a sparse part above a zeroed cache read as a negative read)."""
    rows = tmp_path / "v32.csv"
    rows.write_text(f"id,model,hardware,chips,batch,context,tpot\nr,{V32},h200,8,64,131072,10 ms\n")
    code = main(["audit", str(rows), "--json"])
    row = json.loads(capsys.readouterr().out)["rows"][0]
    floor = row["metrics"]["tpot"][0]
    assert code == 0 and row["verdict"] == "consistent" and floor["terms"]["KV"]["value"] == 0
    assert floor["bound"] >= floor["terms"]["weights"]["value"]


@pytest.mark.parametrize(("context", "noted"), [(131_072, True), (2_048, False)])
def test_the_cards_step_time_says_a_sparse_step_reads_less(capsys, context, noted) -> None:
    """The roofline step time (an estimate) reads the whole cache; past the top k the card says a step reads less."""
    assert main(["card", "--hardware", "h200", "--model", V32, "--set", f"context={context} token/seq",
                 "--set", "batch=32 seq", "--json", "--no-cache"]) == 0
    row = next(r for r in json.loads(capsys.readouterr().out)["rows"] if r["name"] == "step_time")
    assert ("roofline.kv_read_time_floor" in (row["note"] or "")) is noted
