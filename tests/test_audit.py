"""derive audit: rows held against the library's declared, proved bounds (derive.whatif.audit)."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.cli import main
from derive.model.loader import load_library
from derive.whatif.audit import Auditor, checker_for, plan_audit, read_rows

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "audit"
LIB = load_library(["lecture"])
PLAN = plan_audit(LIB, checker_for(LIB))


def audit_file(path: Path, exact: bool = False) -> dict[str, object]:
    header, rows = read_rows(str(path))
    auditor = Auditor(PLAN, header, where=str(path), exact=exact)
    return {r.cells.get("id", str(r.line)): r for r in auditor.audit(rows)}


def test_every_declared_bound_is_proved_once():
    bounds = [b for m in PLAN.metrics.values() for b in m.bounds]
    assert {b.claim for b in bounds} == {"gap.roofline_floor_below_measured", "gap.throughput_per_chip_ceiling"}
    assert all(b.verdict == "proved" for b in bounds)
    assert PLAN.metrics["ttft"].unchecked and not PLAN.metrics["ttft"].bounds


# planted rows: verdicts known by construction -----------------------------------------------------------------

PLANTED = {
    "below-memory-floor": ("impossible", "tpot", "gap.roofline_floor_below_measured"),
    "above-flop-ceiling": ("impossible", "tokens_per_s_per_chip", "gap.throughput_per_chip_ceiling"),
    "above-step-ceiling": ("impossible", "tokens_per_s", "gap.roofline_floor_below_measured"),
    "consistent-decode": ("consistent", "tpot", None),
    "consistent-throughput": ("consistent", "tokens_per_s", None),
    "missing-chips": ("unchecked", None, None),
    "unreadable": ("unchecked", None, None),
    "no-bound": ("unchecked", None, None),
}


@pytest.mark.parametrize("row_id", sorted(PLANTED))
def test_planted_row_verdict(row_id):
    row = audit_file(EXAMPLES / "planted.csv")[row_id]
    verdict, metric, claim = PLANTED[row_id]
    assert row.verdict == verdict, row.reason
    if verdict == "impossible":
        beaten = [b for b in row.metrics[metric] if b.status == "impossible"]
        assert [b.claim for b in beaten][:1] == [claim]
        assert beaten[0].changes  # with the change that would make it possible
    if verdict == "unchecked":
        assert row.reason


@pytest.mark.parametrize("table", ["planted.csv", "trtllm-h100-fp8-v0.6.1.csv"])
def test_exact_audit_agrees_with_the_vectorised_one(table):
    fast, exact = audit_file(EXAMPLES / table), audit_file(EXAMPLES / table, exact=True)
    for key, row in fast.items():
        assert row.verdict == exact[key].verdict
        for metric, bounds in row.metrics.items():
            for b, e in zip(bounds, exact[key].metrics[metric], strict=True):
                assert b.status == e.status and (e.exact or e.status == "unchecked")
                if b.bound is not None:
                    assert math.isclose(float(b.bound), float(e.bound), rel_tol=1e-12)


def test_impossible_decode_row_names_its_change_and_it_really_suffices():
    row = audit_file(EXAMPLES / "planted.csv")["below-memory-floor"]
    b = row.metrics["tpot"][0]
    # 70.55 G params x 2 bytes over 8 x 3.35 TB/s is 5.28 ms: a 2 ms step is impossible
    assert Fraction(b.bound) > Fraction(2, 1000) and b.ratio < 1
    change = b.changes[0]
    assert change["quantity"] in b.changes[0]["text"] and change["op"] in (">=", "<=")
    header, rows = read_rows(str(EXAMPLES / "planted.csv"))
    # the bound of a row that states no KV datatype (kv_split: the planted table gives none)
    (bound,) = [bd for bd in PLAN.metrics["tpot"].bounds if {"bytes_per_kv_element", "kv_bytes_per_token"}
                <= bd.unless_given]
    assert "bytes_per_kv_element" not in header
    aud = Auditor(PLAN, header)
    raw = next(r for r in rows if r.cells["id"] == "below-memory-floor")
    _, gid, _ = aud.prepare(raw)
    vals = aud.exact_inputs(bound, raw, gid)
    vals[bound.inputs.index(change["quantity"])] = change["value"]
    assert bound.exact_func(*vals) <= Fraction(2, 1000)  # the stated change makes the row possible, exactly


def test_consistent_row_reports_its_terms():
    b = audit_file(EXAMPLES / "planted.csv")["consistent-decode"].metrics["tpot"][0]
    assert set(b.terms) == {"compute", "weights", "KV", "embedding rows", "unexplained"}
    assert sum(t["share"] for label, t in b.terms.items() if label != "compute") == pytest.approx(1)


# a published table: golden verdicts ------------------------------------------------------------------------------

# Each published table: every row consistent; its tightest row, that row's slack over its bound and the bound.
PUBLISHED = {
    # 3,327 tokens/s per chip against a 5,945/s ceiling from the step floor (64 sequences, 2,048-token context)
    "trtllm-h100-fp8-v0.6.1.csv": ("gptj-6b-b64-2048-2048", 1.787, "gap.roofline_floor_below_measured"),
    "trtllm-h200-fp8-v0.9.0.csv": ("llama-7b-b56-tp1-2048-2048", 2.076, "gap.roofline_floor_below_measured"),
    "trtllm-a100-fp16-v0.9.0.csv": ("llama-7b-b16-tp1-2048-2048", 1.769, "gap.roofline_floor_below_measured"),
}


@pytest.mark.parametrize("table", sorted(PUBLISHED))
def test_published_table_golden_verdicts(table):
    rows = audit_file(EXAMPLES / table)
    assert len(rows) == 12
    assert {r.verdict for r in rows.values()} == {"consistent"}
    # both bounds are evaluated at every row (none left unchecked for a missing model value)
    assert all(b.status == "consistent" for r in rows.values() for bs in r.metrics.values() for b in bs)
    tight = min(rows.values(), key=lambda r: r.tightest[1].slack)
    row_id, slack, claim = PUBLISHED[table]
    assert tight.cells["id"] == row_id
    assert tight.tightest[1].claim == claim
    assert tight.tightest[1].slack == pytest.approx(slack, rel=0.001)


# A published dashboard whose batch-1 tokens/s, read per GPU as its own tokens-per-dollar column reads them, beat
# the decode step floor (examples/audit/SOURCES.md says why): row -> (verdict, measured over the ceiling).
DASHBOARD = {
    "h200-trtllm-fp16-b1": ("impossible", 4.450),  # 155 tokens/s; 137.8 GB of weights over 4.8 TB/s: 34.8/s
    "h100-trtllm-fp16-b1": ("impossible", 4.525),  # 110 against 24.3/s
    "a100-vllm-fp16-b1": ("impossible", 2.365),  # 35 against 14.8/s
    "h200-vllm-fp16-b1": ("unchecked", None),  # no GPU count: never guessed
    "h100-vllm-fp16-b1": ("unchecked", None),
}


@pytest.mark.parametrize("row_id", sorted(DASHBOARD))
def test_published_dashboard_golden_verdicts(row_id):
    row = audit_file(EXAMPLES / "ai-infra-index-llama2-70b-b1.csv")[row_id]
    verdict, ratio = DASHBOARD[row_id]
    assert row.verdict == verdict, row.reason
    if verdict == "impossible":
        (beaten,) = [b for b in row.metrics["tokens_per_s"] if b.status == "impossible"]
        assert beaten.claim == "gap.roofline_floor_below_measured" and beaten.kind == "ceiling"
        assert beaten.ratio == pytest.approx(ratio, rel=0.001)
        assert beaten.changes and beaten.changes[0]["quantity"] == "chips"  # more GPUs than the table says
    else:
        assert "missing chips" in row.reason


# prove once, evaluate many: the vectorised value agrees with the exact one -----------------------------------------

positive = st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(10**6)).filter(lambda x: x > 0)


@pytest.mark.parametrize("metric,index", [(m, i) for m in PLAN.metrics for i in range(len(PLAN.metrics[m].bounds))])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_vectorised_bound_agrees_with_exact(metric, index, data):
    bound = PLAN.metrics[metric].bounds[index]
    vals = [data.draw(positive) * 10**data.draw(st.integers(0, 12)) for _ in bound.inputs]
    exact = bound.exact_func(*vals)
    fast = float(bound.func(*[float(v) for v in vals]))
    assert math.isclose(fast, float(exact), rel_tol=1e-12)


# the command line ---------------------------------------------------------------------------------------------

def test_cli_exit_codes_and_outputs(tmp_path, capsys):
    out = tmp_path / "out.csv"
    assert main(["audit", str(EXAMPLES / "planted.csv"), "--out", str(out)]) == 1
    assert "3 impossible, 2 consistent, 3 unchecked" in capsys.readouterr().out
    lines = out.read_text().splitlines()
    assert len(lines) == 9 and lines[0].endswith("change,reason")
    assert main(["audit", str(EXAMPLES / "trtllm-h100-fp8-v0.6.1.csv"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["summary"] == {"rows": 12, "impossible": 0, "consistent": 12, "unchecked": 0}
    assert {b["verdict"] for m in data["metrics"] for b in m["bounds"]} == {"proved"}


def test_rows_record_signed_error_scope_date_and_source(tmp_path, capsys):
    assert main(["audit", str(EXAMPLES / "ai-infra-index-llama2-70b-b1.csv"), "--json"]) == 1
    rows = {r["cells"]["id"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    row = rows["h200-trtllm-fp16-b1"]
    assert row["scope"] == {"chip": "h200", "software": "TensorRT-LLM", "version": None, "level": "framework",
                            "note": None}
    assert row["date"] == "2026-03" and row["source"].startswith("ai-infra-index")
    beaten = next(b for b in row["metrics"]["tokens_per_s"] if b["status"] == "impossible")
    assert beaten["signed_error"] == pytest.approx(beaten["ratio"] - 1) and beaten["signed_error"] > 0  # above
    out = tmp_path / "out.csv"
    assert main(["audit", str(EXAMPLES / "planted.csv"), "--out", str(out)]) == 1
    import csv

    by_id = {r["id"]: r for r in csv.DictReader(out.open())}
    below = by_id["below-memory-floor"]  # 2 ms under a 5.2 ms floor: negative
    assert float(below["signed_error"]) == pytest.approx(float(below["ratio"]) - 1) and below["signed_error"][0] == "-"
    assert by_id["missing-chips"]["signed_error"] == ""


BAD = {
    "unknown column": ("model,hardware,tpot,bandwith\nllama3-8b,h100-sxm,2 ms,1\n", "unknown column 'bandwith'"),
    "missing column": ("model,tpot\nllama3-8b,2 ms\n", "missing required column 'hardware'"),
    "wrong unit": ("model,hardware,chips,tpot\nllama3-8b,h100-sxm,1,3 TB/s\n", "line 2, column 'tpot'"),
    "ragged line": ("model,hardware,tpot\nllama3-8b,h100-sxm\n", "line 2"),
    "no metric": ("model,hardware,chips\nllama3-8b,h100-sxm,1\n", "no metric column"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_table_is_one_line_exit_2_and_no_output(case, tmp_path, capsys):
    text, words = BAD[case]
    table, out = tmp_path / "t.csv", tmp_path / "out.csv"
    table.write_text(text)
    assert main(["audit", str(table), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1
    assert not out.exists() and not list(tmp_path.glob(".derive-audit-*"))


def test_malformed_json_line_names_its_line(tmp_path, capsys):
    table = tmp_path / "t.jsonl"
    table.write_text('{"model": "llama3-8b", "hardware": "h100-sxm", "chips": 1, "tpot": "2 ms"}\n{oops\n')
    assert main(["audit", str(table)]) == 2
    assert "line 2: not a JSON object" in capsys.readouterr().err


def test_json_lines_name_their_own_columns(tmp_path, capsys):
    # the columns were the first line's: a second line's bytes_per_param was dropped (its row held to 2-byte
    # weights: a 3.5 ms step called impossible against 5.19 ms), and its tokens_per_s left the row unchecked
    base = {"model": "llama3-70b", "hardware": "h100-sxm", "chips": 8, "batch": 1}
    table = tmp_path / "t.jsonl"
    table.write_text("\n".join(json.dumps({"id": i, **base, **extra}) for i, extra in [
        ("bf16", {"tpot": "30 ms"}), ("int4", {"bytes_per_param": 0.5, "tpot": "3.5 ms"}),
        ("fast", {"tokens_per_s": "900000 tok/s"})]) + "\n")
    assert main(["audit", str(table), "--json"]) == 1
    rows = {r["cells"]["id"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["int4"]["verdict"] == "consistent" and rows["fast"]["verdict"] == "impossible"
    table.write_text(json.dumps({"id": "a", **base, "tpot": "30 ms"}) + "\n"
                     + json.dumps({"id": "b", **base, "bogus": 1, "tpot": "30 ms"}) + "\n")
    assert main(["audit", str(table)]) == 2
    assert "line 2: unknown column 'bogus'" in capsys.readouterr().err


@pytest.mark.parametrize(("cell", "read"), [("30,5 ms", "30.5 ms"), ("1.500,5 ms", "1500.5 ms"), ("7.5 ms", "7.5 ms"),
                                          ("-0,25", "-0.25"), ("h100-sxm", "h100-sxm"), ("12", "12")])
def test_a_semicolon_table_reads_the_comma_as_the_decimal_mark(cell, read):
    from derive.whatif.audit import _decimal_comma

    assert _decimal_comma(cell, 2, "t.csv") == read


def test_a_semicolon_tables_text_columns_are_as_written(tmp_path, capsys):
    # an id or a source is words: "1.500" there is no number to read (it was refused as ambiguous)
    table = tmp_path / "t.csv"
    table.write_text("id;source;model;hardware;chips;batch;tpot\n1.500;run 2,5;llama3-70b;h100-sxm;8;1;30,5 ms\n")
    assert main(["audit", str(table), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert row["cells"]["id"] == "1.500" and row["cells"]["source"] == "run 2,5" and row["cells"]["tpot"] == "30.5 ms"


@pytest.mark.parametrize(("cell", "words"), [("1.500 ms", "could be 1500 (a point grouping thousands) or 1.5"),
                                             ("1,5,5", "decimal comma"), ("15.00,5", "decimal comma")])
def test_a_semicolon_tables_ambiguous_number_is_one_line(tmp_path, capsys, cell, words):
    # 1.500 from a spreadsheet whose comma is the decimal mark is 1500: read as 1.5 ms it was "impossible"
    table = tmp_path / "t.csv"
    table.write_text(f"model;hardware;chips;batch;tpot\nllama3-70b;h100-sxm;8;1;{cell}\n")
    assert main(["audit", str(table)]) == 2
    err = capsys.readouterr().err
    assert "line 2: " in err and words in err and err.count("\n") == 1, err


def test_file_over_the_cap_is_refused_before_reading(tmp_path, capsys, monkeypatch):
    import derive.whatif.audit as audit

    table = tmp_path / "t.csv"
    table.write_text("model,hardware,tpot\n" + "llama3-8b,h100-sxm,2 ms\n" * 10)
    monkeypatch.setattr(audit, "MAX_AUDIT_BYTES", 100)
    assert main(["audit", str(table)]) == 2
    assert "over the 100-byte limit" in capsys.readouterr().err


@pytest.mark.parametrize(("where", "words"), [("missing.csv", "file not found: "),
                                              (".", "not a regular file: "), ("/dev/null", "not a regular file: ")])
def test_a_table_that_is_no_file_is_one_line_naming_what_is_there(tmp_path, capsys, monkeypatch, where, words):
    monkeypatch.chdir(tmp_path)
    assert main(["audit", where]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words + where in err


def test_a_bound_that_is_not_proved_leaves_its_metric_unchecked(tmp_path, capsys):
    lib = tmp_path / "mylib.py"
    lib.write_text(
        "from derive import Claim, Quantity, logic, derived\n"
        "t_meas = Quantity('t_meas', 't_m', 's', 'a measured time')\n"
        "t_floor = Quantity('t_floor', 't_f', 's', 'a time with no proof behind it')\n"
        "floor = Claim('mylib.floor', title='An unproved floor', statement='Measured is at least the floor.',\n"
        "              source=derived('nothing'), goal=logic.ge(t_meas.sym, t_floor.sym), expected='refuted')\n"
        "AUDIT_BOUNDS = [{'metric': 'latency', 'unit': 's', 'claim': 'mylib.floor', 'measured': 'latency'}]\n")
    table = tmp_path / "t.csv"
    table.write_text("model,hardware,t_floor,latency\n,,5 ms,1 ms\n")
    assert main(["audit", str(table), "--library", str(lib), "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert row["verdict"] == "unchecked" and "bound not proved" in row["reason"]


def test_table_from_standard_input_as_json_lines(monkeypatch, capsys):
    import io

    rows = [{"id": "x", "model": "llama3-8b", "hardware": "h100-sxm", "chips": 1, "tpot": "1 ms"},
            {"id": "y", "model": "llama3-8b", "hardware": "h100-sxm", "chips": 1, "tpot": "20 ms"}]
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(json.dumps(r) + "\n" for r in rows)))
    assert main(["audit", "-", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [r["verdict"] for r in out["rows"]] == ["impossible", "consistent"]
    change = out["rows"][0]["metrics"]["tpot"][0]["changes"][0]
    assert change["text"].startswith("needs ")


def test_control_characters_of_a_cell_never_reach_the_terminal(tmp_path, capsys):
    table = tmp_path / "t.csv"
    table.write_text('id,model,hardware,chips,tpot\n"a\x1b[31mb",llama3-8b,h100-sxm,1,1 ms\n')
    assert main(["audit", str(table)]) == 1
    assert "\x1b" not in capsys.readouterr().out


MALFORMED = {
    "not a table": ("AUDIT_BOUNDS = ['tpot']", "must be a table"),
    "unknown key": ("AUDIT_BOUNDS = [{'metric': 'x', 'unit': 's', 'unchecked': 'r', 'colour': 'red'}]", "unknown key"),
    "claim and unchecked": ("AUDIT_BOUNDS = [{'metric': 'x', 'unit': 's', 'claim': 'c', 'measured': 'x', "
                            "'unchecked': 'r'}]", "exactly one of"),
    "claim without measured": ("AUDIT_BOUNDS = [{'metric': 'x', 'unit': 's', 'claim': 'c'}]", "no 'measured'"),
    "terms not text": ("AUDIT_BOUNDS = [{'metric': 'x', 'unit': 's', 'unchecked': 'r', 'terms': {'a': 1}}]",
                       "wrong type"),
    "notes when missing not a table": ("AUDIT_BOUNDS = [{'metric': 'x', 'unit': 's', 'unchecked': 'r', "
                                       "'notes_when_missing': ['batch']}]", "wrong type"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_audit_declaration_is_a_library_error(case, tmp_path):
    from derive.errors import LibraryError

    text, words = MALFORMED[case]
    lib = tmp_path / "decl.py"
    lib.write_text(text + "\n")
    with pytest.raises(LibraryError, match=words):
        load_library(["lecture", str(lib)])


@pytest.mark.parametrize("measured,words", [
    ("latency ** 2 * hbm_bandwidth / (params_total * bytes_per_param)", "times, or over"),
    ("latency * batch", "wrong dimension"),
    ("params_total * bytes_per_param / hbm_bandwidth", "does not use the metric"),
    ("latency * step_time / weight_fetch_time", "derived quantity"),
])
def test_a_measured_expression_the_audit_cannot_solve_is_refused(measured, words, tmp_path):
    from derive.errors import LibraryError

    lib = tmp_path / "decl.py"
    lib.write_text("AUDIT_BOUNDS = [{'metric': 'latency', 'unit': 's', "
                   f"'claim': 'gap.roofline_floor_below_measured', 'measured': '{measured}'}}]\n")
    library = load_library(["lecture", str(lib)])
    with pytest.raises(LibraryError, match=words):
        plan_audit(library, checker_for(library))


def test_an_unknown_hardware_preset_leaves_the_row_unchecked(tmp_path, capsys):
    table = tmp_path / "t.csv"
    table.write_text("id,model,hardware,chips,tpot\nr,llama3-8b,h1000,1,1 ms\n")
    assert main(["audit", str(table), "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert row["verdict"] == "unchecked" and "h1000" in row["reason"]


def test_piped_audit_names_its_stage_with_the_row_count(monkeypatch, capsys, tmp_path):
    """Piped (CI), an audit says how many rows it held and how long it took, on one line of stderr; a
    table that fails on bad input says only its one error line."""
    from derive.cli import terminal

    monkeypatch.setattr(terminal, "DELAY", 0.0)  # every stage counts as slow
    table = Path(__file__).resolve().parent.parent / "examples" / "audit" / "ai-infra-index-llama2-70b-b1.csv"
    rows = sum(1 for line in table.read_text().splitlines()[1:] if line.strip())
    code = main(["audit", str(table)])
    err = capsys.readouterr().err
    assert code == 1 and f"derive: auditing rows: {rows} of {rows} in " in err
    bad = table.read_text() + "llama2-70b,h100-sxm,1,not-a-number\n"  # a malformed line at the end
    path = tmp_path / "malformed.csv"
    path.write_text(bad)
    code = main(["audit", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "auditing rows" not in err


# speculative decoding: a row that gives its tokens per verification step -------------------------------------
# EAGLE-style speculative decoding of Llama 3 8B on one H100 at batch 1 reaches a time per output token below the
# one-token step floor (4.52 ms at 1,024 tokens of context); such a row is held to the floor divided by its mean
# tokens per verification step, never called impossible for the tokens it drafts.
SPECULATIVE = ("id,model,hardware,chips,batch,context,bytes_per_kv_element,accepted_tokens_per_step,tpot,tokens_per_s\n"
               "plain,llama3-8b,h100-sxm,1,1,1024 token/seq,2 byte,,3.0 ms,\n"
               "eagle,llama3-8b,h100-sxm,1,1,1024 token/seq,2 byte,2.6,3.0 ms,\n"
               "eagle_low,llama3-8b,h100-sxm,1,1,1024 token/seq,2 byte,1.2,3.0 ms,\n"
               "eagle_rate,llama3-8b,h100-sxm,1,1,1024 token/seq,2 byte,2.6,,333\n")
SERVING = load_library(["lecture", "serving"])
SERVING_PLAN = plan_audit(SERVING, checker_for(SERVING))


def _speculative_rows(tmp_path: Path) -> dict[str, object]:
    path = tmp_path / "spec.csv"
    path.write_text(SPECULATIVE)
    header, rows = read_rows(str(path))
    return {r.cells["id"]: r for r in Auditor(SERVING_PLAN, header, where=str(path)).audit(rows)}


def test_a_speculative_row_is_held_to_the_floor_over_its_tokens_per_step(tmp_path):
    rows = _speculative_rows(tmp_path)
    assert rows["plain"].verdict == "impossible"  # the twin: one token per step, 0.66x the floor
    assert rows["eagle"].verdict == "consistent" and rows["eagle_rate"].verdict == "consistent"
    assert rows["eagle_low"].verdict == "impossible"  # 1.2 tokens per step do not explain 3 ms
    (held,) = rows["eagle"].metrics["tpot"]  # the lecture's one-token reading is not applied to it
    assert held.claim == "gap.roofline_floor_below_measured"
    (plain,) = rows["plain"].metrics["tpot"]  # nor the speculative form to a row that drafts nothing
    assert plain.bound / held.bound == pytest.approx(2.6, rel=1e-12)
    assert any(c.get("quantity") == "accepted_tokens_per_step" for c in rows["eagle_low"].metrics["tpot"][0].changes)


def test_a_row_without_an_acceptance_length_is_said_to_be_read_as_plain_decoding(tmp_path):
    # an EAGLE run's 244 token/s (SGLang's documentation, Llama 3.1 8B on one H100) beats the one-token ceiling of
    # 223 token/s: the note says what the empty column was read as, where a row leaves it empty, and only there
    def notes(text: str) -> list[str]:
        path = tmp_path / "rows.csv"
        path.write_text(text)
        header, rows = read_rows(str(path))
        auditor = Auditor(SERVING_PLAN, header, where=str(path))
        list(auditor.audit(rows))
        return auditor.notes

    head = "id,model,hardware,chips,batch,bytes_per_param,accepted_tokens_per_step,tokens_per_s\n"
    said = [n for n in notes(head + "eagle2,llama3-8b,h100-sxm,1,1,2 byte/param,,244.10\n")
            if "accepted_tokens_per_step" in n]
    assert len(said) == 1 and "plain decoding" in said[0] and "speculative decoding" in said[0]
    assert not any("plain decoding" in n for n in notes(head + "eagle2,llama3-8b,h100-sxm,1,1,2 byte/param,3,244.10\n"))


def test_a_bound_repeated_with_notes_of_its_own_is_taken_once_whatever_the_order():
    # the serving library repeats the lecture's plain step-floor bounds with a note on the acceptance length
    both, reverse, serving = (load_library(s).audit_bounds for s in (["lecture", "serving"], ["serving", "lecture"],
                                                                     ["serving"]))
    assert sorted(map(repr, both)) == sorted(map(repr, reverse)) == sorted(map(repr, serving))
    plain = [b for b in both if b["metric"] == "tpot" and "accepted_tokens_per_step" in b.get("unless_given", [])]
    assert len(plain) == len({repr({k: v for k, v in b.items() if k != "notes_when_missing"}) for b in plain})
    assert all("accepted_tokens_per_step" in b["notes_when_missing"] for b in plain)


def test_the_lecture_alone_refuses_the_speculative_column(tmp_path, capsys):
    path = tmp_path / "spec.csv"
    path.write_text(SPECULATIVE)
    assert main(["audit", str(path)]) == 2
    assert "unknown column 'accepted_tokens_per_step'" in capsys.readouterr().err


# the time to first token (the serving library's prefill floor) -----------------------------------------------

PUBLISHED_POINTS = Path(__file__).resolve().parent / "fixtures" / "published_measurements.toml"


def _serving_rows(tmp_path: Path, text: str) -> dict[str, object]:
    """The rows of a CSV ``text`` audited exactly against the serving library's bounds, by id."""
    path = tmp_path / "rows.csv"
    path.write_text(text)
    header, rows = read_rows(str(path))
    return {r.cells["id"]: r for r in Auditor(SERVING_PLAN, header, where=str(path), exact=True).audit(rows)}


def test_a_time_to_first_token_is_held_to_its_requests_own_prefill(tmp_path):
    """Llama 3 70B on eight H100s, an 8,192-token prompt: at least 2 x 68.45B x 8,192 FLOPs (the 1.05B output head
    once, for the last token) at 8 x 989 TFLOP/s (about 142 ms, worked out here from the preset's values), however
    the server batched; with no prompt length the weakest form, one token: the weights read once (about 5.2 ms)."""
    from derive.model.scenario import build_scenario

    sc = build_scenario(SERVING, hardware="h100-sxm", model="llama3-70b")
    n_act, head, q, k = (Fraction(str(sc.value(x)))
                         for x in ("params_active", "params_output_head", "bytes_per_param", "kv_bytes_per_token"))
    assert head == 128256 * 8192  # the untied LM head
    compute = 2 * ((n_act - head) * 8192 + head) / (8 * Fraction(989 * 10**12))
    memory = (n_act * q + 8192 * k) / (8 * Fraction(335 * 10**10))
    rows = _serving_rows(tmp_path, "id,model,hardware,chips,prefill_tokens,bytes_per_kv_element,ttft\n"
                                "slow,llama3-70b,h100-sxm,8,8192,2 byte,500 ms\n"
                                "fast,llama3-70b,h100-sxm,8,8192,2 byte,50 ms\n"
                                "short,llama3-70b,h100-sxm,8,,2 byte,1 ms\n"
                                "short_unstated,llama3-70b,h100-sxm,8,,,1 ms\n")
    (held,) = rows["slow"].metrics["ttft"]
    assert rows["slow"].verdict == "consistent" and held.claim == "prefill.ttft_floor_below_measured"
    assert Fraction(held.bound) == max(compute, memory)
    assert rows["fast"].verdict == "impossible"  # a tenth of a second under the prompt's own multiplies
    (short,) = rows["short"].metrics["ttft"]
    assert rows["short"].verdict == "impossible"
    assert Fraction(short.bound) == (n_act * q + k) / (8 * Fraction(335 * 10**10))  # one token's KV written too
    # a row that states no KV datatype: the KV written is left out (the weakest form), the weights still read
    (unstated,) = rows["short_unstated"].metrics["ttft"]
    assert Fraction(unstated.bound) == n_act * q / (8 * Fraction(335 * 10**10))


def test_no_published_time_to_first_token_is_impossible(tmp_path):
    """Every sourced TTFT of tests/fixtures/published_measurements.toml, written as an audit row with its setting."""
    import tomllib

    points = [p for p in tomllib.loads(PUBLISHED_POINTS.read_text())["point"] if p["kind"] == "ttft"]
    assert len(points) >= 10
    extra = sorted({o.split("=")[0] for p in points for o in p.get("overrides", ())})
    cols = ["id", "model", "hardware", "chips", "prefill_tokens", "bytes_per_param", "bytes_per_kv_element", *extra,
            "ttft"]
    lines = [",".join(cols)]
    for p in points:
        model = p["model"] if "/" not in p["model"] else str(PUBLISHED_POINTS.parent / p["model"])
        sets = dict(o.split("=", 1) for o in p.get("overrides", ()))
        cells = [p["id"], model, p["hardware"], str(p["chips"]), f"{p['prompt_tokens']} token/seq",
                 p.get("bytes_per_param", ""), p.get("bytes_per_kv_element", ""), *(sets.get(e, "") for e in extra),
                 p["measured"]]
        lines.append(",".join(cells))
    rows = _serving_rows(tmp_path, "\n".join(lines) + "\n")
    assert {r.verdict for r in rows.values()} == {"consistent"}, {i: r.verdict for i, r in rows.items()}


def test_the_lecture_alone_leaves_the_time_to_first_token_unchecked(tmp_path, capsys):
    path = tmp_path / "ttft.csv"
    path.write_text("id,model,hardware,chips,prefill_tokens,ttft\nslow,llama3-70b,h100-sxm,8,8192,50 ms\n")
    assert main(["audit", str(path), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert row["verdict"] == "unchecked" and "the lecture proves no floor on prefill time" in row["reason"]
    assert main(["audit", str(path), "--json", "--library", "serving"]) == 1  # the serving library's floor: 0.35x
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert row["verdict"] == "impossible"


def test_a_rows_own_weight_bytes_choose_the_chips_rate(tmp_path):
    """A row that gives its weights' bytes (an FP8 run of a BF16 checkpoint on h100-sxm) is held at the chip's FP8
    rate, as `--set bytes_per_param=1` would be: 10,000 tokens/s per chip of Llama 3 70B is under the FP8 ceiling
    1,979 TFLOP/s / (2 x 69.5B) = 14.2k and over the BF16 one (7.1k), which holds the row that gives no bytes."""
    path = tmp_path / "fp8.csv"
    path.write_text("id,model,hardware,chips,bytes_per_param,tokens_per_s_per_chip\n"
                    "fp8,llama3-70b,h100-sxm,8,1 byte/param,10000\n"
                    "bf16,llama3-70b,h100-sxm,8,,10000\n")
    header, rows = read_rows(str(path))
    out = {r.cells["id"]: r for r in Auditor(PLAN, header, where=str(path), exact=True).audit(rows)}
    assert out["fp8"].verdict == "consistent" and out["bf16"].verdict == "impossible"
    ceiling = {i: Fraction(r.metrics["tokens_per_s_per_chip"][0].bound) for i, r in out.items()}
    assert ceiling["fp8"] == Fraction(1979 * 10**12) / (2 * 69_501_714_432)
    assert ceiling["bf16"] == Fraction(989 * 10**12) / (2 * 69_501_714_432)


# the KV cache's datatype is the run's: a row that does not state it is held to the floor without its KV reads --------

KV_ROWS = ("id,model,hardware,chips,batch,context,bytes_per_kv_element,kv_bytes_per_token,tpot\n"
           # Llama 3 8B on eight H100s, 64 sequences at 32K: BF16 KV reads alone take 10.3 ms, FP8 ones 5.1 ms
           "unstated,llama3-8b,h100-sxm,8,64,32768 token/seq,,,8 ms\n"
           "bf16,llama3-8b,h100-sxm,8,64,32768 token/seq,2 byte,,8 ms\n"
           "fp8,llama3-8b,h100-sxm,8,64,32768 token/seq,1 byte,,8 ms\n"
           "own_kv,llama3-8b,h100-sxm,8,64,32768 token/seq,,131072 byte/token,8 ms\n")


def test_a_row_that_states_no_kv_datatype_is_not_held_to_the_models_kv_width(tmp_path):
    """An FP8 KV cache of a BF16 model (vLLM's --kv-cache-dtype fp8) halves the KV reads: 8 ms per token is possible
    then and impossible at BF16, so a row that does not say which is held to the floor without its KV reads."""
    path = tmp_path / "kv.csv"
    path.write_text(KV_ROWS)
    header, rows = read_rows(str(path))
    got = {r.cells["id"]: r for r in Auditor(PLAN, header, where=str(path), exact=True).audit(rows)}
    assert got["bf16"].verdict == "impossible" and got["fp8"].verdict == "consistent"
    assert got["unstated"].verdict == "consistent" and got["own_kv"].verdict == "impossible"
    (unstated,) = got["unstated"].metrics["tpot"]
    (fp8,) = got["fp8"].metrics["tpot"]
    (bf16,) = got["bf16"].metrics["tpot"]
    assert unstated.bound < fp8.bound < bf16.bound
    assert unstated.terms["KV"]["share"] == 0
    kv_read_fp8 = Fraction(64 * 32768 * 65536, 8 * 335 * 10**10)  # 32 layers x 8 heads x 128 x 2 (K, V) x 1 byte
    assert Fraction(fp8.bound) - Fraction(unstated.bound) == kv_read_fp8


def test_the_kv_reading_of_each_bound_is_said():
    readings = [b.reading for b in PLAN.metrics["tpot"].bounds]
    assert any("the row's bytes_per_kv_element" in r for r in readings)
    assert any("gives no bytes_per_kv_element" in r and "weakest form" in r for r in readings)


def test_the_kv_note_is_said_once_where_a_row_did_not_state_its_kv_datatype(tmp_path, capsys):
    unstated, stated = tmp_path / "unstated.csv", tmp_path / "stated.csv"
    lines = KV_ROWS.splitlines()
    unstated.write_text("\n".join([lines[0], lines[1], lines[1].replace("unstated,", "again,")]) + "\n")
    stated.write_text("\n".join([lines[0], lines[3]]) + "\n")
    main(["audit", str(unstated)])
    out = capsys.readouterr().out
    assert out.count("note: a row that gives neither bytes_per_kv_element") == 1
    main(["audit", str(stated)])
    assert "bytes_per_kv_element" not in capsys.readouterr().out
    main(["audit", str(unstated), "--json"])
    data = json.loads(capsys.readouterr().out)
    kv_notes = [n for n in data["notes"] if "KV" in n]
    assert len(kv_notes) == 1 and "held to the floors without its KV reads" in kv_notes[0]


def test_the_weights_note_is_said_once_where_a_row_left_its_weights_datatype_to_the_model(tmp_path, capsys):
    """A row without bytes_per_param is held to the checkpoint's datatype (BF16 for Llama 3 8B) and the chip's rate
    for it; the table says so once, and not where every row gives the column."""
    unstated, stated = tmp_path / "unstated.csv", tmp_path / "stated.csv"
    header = "id,model,hardware,chips,batch,context,bytes_per_param,bytes_per_kv_element,tpot\n"
    unstated.write_text(header + "a,llama3-8b,h100-sxm,1,1,1024,,2 byte,4 ms\n"
                                 "b,llama3-8b,h100-sxm,1,1,1024,1 byte/param,2 byte,4 ms\n"
                                 "c,llama3-8b,h100-sxm,1,1,1024,,2 byte,5 ms\n")
    stated.write_text(header + "b,llama3-8b,h100-sxm,1,1,1024,1 byte/param,2 byte,4 ms\n")
    assert main(["audit", str(unstated)]) == 1  # 4 ms is under the BF16 weights' 4.5 ms, over the FP8 ones'
    out = capsys.readouterr().out
    assert out.count("note: a row that gives no bytes_per_param") == 1
    assert main(["audit", str(stated)]) == 0
    assert "gives no bytes_per_param" not in capsys.readouterr().out
    main(["audit", str(unstated), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert sum("gives no bytes_per_param" in n for n in data["notes"]) == 1


# one measured all-reduce (the serving library's allreduce_time and allreduce_busbw columns) -------------------

def test_a_measured_allreduce_is_held_to_its_payload_once_over_the_scaleup_links(tmp_path):
    """2 GiB over eight H100s: at least 0.6 us plus 2^31 bytes at 450 GB/s, 4.773 ms, whatever the algorithm; NVLS's
    7.87 ms (NVIDIA/nccl issue 1455) is consistent, 1 ms is impossible; a bus bandwidth is read as nccl-tests
    defines it, so 482.26 GB/s on eight H200s (in-switch, above a ring's wire rate) is consistent too."""
    rows = _serving_rows(tmp_path, "id,model,hardware,tp,allreduce_payload,allreduce_time,allreduce_busbw\n"
                                     "nvls,,h100-sxm,8,2147483648 byte,7.87 ms,\n"
                                     "typo,,h100-sxm,8,2147483648 byte,1 ms,\n"
                                     "busbw,,h200,8,16 GiB,,482.26 GB/s\n"
                                     "one_chip,,h100-sxm,1,2147483648 byte,1 ns,\n")
    floor = Fraction(6, 10**7) + Fraction(2**31, 450 * 10**9)
    (held,) = rows["nvls"].metrics["allreduce_time"]
    assert rows["nvls"].verdict == "consistent" and held.claim == "network.allreduce_floor_below_measured"
    assert Fraction(held.bound) == floor
    assert rows["typo"].verdict == "impossible"
    assert rows["busbw"].verdict == "consistent"
    (bus,) = rows["busbw"].metrics["allreduce_busbw"]
    at_floor = Fraction(6, 10**7) + Fraction(16 * 2**30, 450 * 10**9)
    assert Fraction(bus.bound) == Fraction(14, 8) * 16 * 2**30 / at_floor
    # one chip reduces nothing: a floor of zero holds nothing
    assert rows["one_chip"].verdict == "unchecked" and "no positive value" in rows["one_chip"].reason


def test_no_published_allreduce_is_impossible(tmp_path):
    """Every sourced all-reduce of tests/fixtures/published_measurements.toml (rings and any algorithm), as an audit
    row of its time."""
    import tomllib

    from derive import si

    points = [p for p in tomllib.loads(PUBLISHED_POINTS.read_text())["point"]
              if p["kind"] in ("ring_allreduce", "allreduce")]
    assert len(points) >= 60
    lines = ["id,model,hardware,tp,allreduce_payload,allreduce_time"]
    for p in points:
        value, n, size = si(p["measured"]), p["chips"], p["message_bytes"]
        busbw = p["kind"] == "ring_allreduce" or p.get("measured_as") == "busbw"
        seconds = Fraction(2 * (n - 1), n) * size / value if busbw else size / value
        lines.append(f"{p['id']},,{p['hardware']},{n},{size} byte,{seconds.numerator}/{seconds.denominator} s")
    rows = _serving_rows(tmp_path, "\n".join(lines) + "\n")
    assert {r.verdict for r in rows.values()} == {"consistent"}, {i: r.verdict for i, r in rows.items()}


def test_the_lecture_alone_has_no_allreduce_column(tmp_path, capsys):
    path = tmp_path / "nccl.csv"
    path.write_text("id,model,hardware,tp,allreduce_payload,allreduce_time\na,,h100-sxm,8,1 GB,1 s\n")
    assert main(["audit", str(path)]) == 2
    assert "unknown column" in capsys.readouterr().err


def test_the_text_output_says_why_rows_went_unchecked_most_frequent_first(tmp_path, capsys):
    path = tmp_path / "mixed.csv"
    path.write_text("id,model,hardware,chips,batch,context,tpot\n"
                    "a,llama3-8b,h100-sxm,,1,128,10 ms\n"
                    "b,llama3-8b,h100-sxm,,1,128,11 ms\n"
                    "c,llama3-8b,h100-sxm,1,1,128,fast\n"
                    "d,llama3-8b,h100-sxm,1,1,128,10 ms\n")
    assert main(["audit", str(path)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    head = lines.index("unchecked, by reason (up to 10):")
    assert lines[head + 1] == "  2 rows (first: a): tpot: missing chips"
    assert lines[head + 2] == "  1 row (first: c): tpot: cannot read value 'fast'"
    assert "4 rows: 0 impossible, 1 consistent, 3 unchecked" in out


@pytest.mark.parametrize("column", ["tp", "allreduce_time"])
def test_a_column_only_another_library_reads_names_that_library(tmp_path, capsys, column):
    path = tmp_path / "t.csv"
    path.write_text(f"id,model,hardware,chips,{column}\nx,,h100-sxm,8,1\n")
    assert main(["audit", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"unknown column '{column}'" in err and "add --library serving" in err and err.count("\n") == 1


def test_an_unknown_column_points_to_the_list_of_quantities(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("id,model,hardware,chips,bogus\nx,,h100-sxm,8,1\n")
    assert main(["audit", str(path)]) == 2
    assert "see `derive list --quantities`" in capsys.readouterr().err


# one measured all-to-all (the serving library's alltoall_time and alltoall_busbw columns) -----------------------

def test_a_measured_alltoall_is_held_to_the_shares_it_sends_over_the_scaleup_links(tmp_path):
    """524,288,000 B a GPU over four H100s (NVIDIA/nccl issue 2169: 1,174.14 us, busbw 334.90 GB/s): at least 0.6 us
    plus three quarters of the buffer at 450 GB/s, 874.4 us; 0.5 ms is impossible, and so is a bus bandwidth above
    the links' 450 GB/s; one chip sends nothing, so nothing holds it."""
    rows = _serving_rows(tmp_path, "id,model,hardware,ep,alltoall_payload,alltoall_time,alltoall_busbw\n"
                                     "nccl2169,,h100-sxm,4,524288000 byte,1174.14 us,\n"
                                     "fast,,h100-sxm,4,524288000 byte,0.5 ms,\n"
                                     "busbw,,h100-sxm,4,524288000 byte,,334.90 GB/s\n"
                                     "overbus,,h100-sxm,8,1 GiB,,460 GB/s\n"
                                     "one_chip,,h100-sxm,1,524288000 byte,1 ns,\n")
    floor = Fraction(6, 10**7) + Fraction(3, 4) * Fraction(524288000, 450 * 10**9)
    (held,) = rows["nccl2169"].metrics["alltoall_time"]
    assert rows["nccl2169"].verdict == "consistent" and held.claim == "network.alltoall_floor_below_measured"
    assert Fraction(held.bound) == floor
    assert rows["fast"].verdict == "impossible"
    assert rows["busbw"].verdict == "consistent"
    (bus,) = rows["busbw"].metrics["alltoall_busbw"]
    assert Fraction(bus.bound) == Fraction(3, 4) * 524288000 / floor  # the ceiling: the shares over the floor's time
    assert rows["overbus"].verdict == "impossible"
    assert rows["one_chip"].verdict == "unchecked" and "no positive value" in rows["one_chip"].reason


def test_a_relative_model_path_in_a_table_is_read_from_the_tables_folder(tmp_path, capsys, monkeypatch):
    import shutil

    tables = tmp_path / "tables"
    (tables / "models").mkdir(parents=True)
    shutil.copy(Path(__file__).parent / "fixtures" / "configs" / "deepseek_v3.json", tables / "models" / "dsv3.json")
    path = tables / "rows.csv"
    path.write_text("id,model,hardware,chips,batch,context,tpot\n"
                    "fast,models/dsv3.json,h200,8,1,1024,1 ms\n")  # 37B active parameters: not in 1 ms on 8 chips
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the working folder holds no models/ folder: the table's folder is read
    assert main(["audit", str(path), "--json"]) == 1
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert row["verdict"] == "impossible", row
    # on standard input the same cell is read from the working folder, where it names no file
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO(path.read_text()))
    assert main(["audit", "-", "--format", "csv", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert row["verdict"] == "unchecked" and "dsv3.json" in row["reason"], row
    assert "(in the row's model cell)" in row["reason"], row  # a cell, not the --model option
    # a table read from a file, whose path names a file neither beside it nor in the working folder: both said
    assert main(["audit", str(path), "--json"]) == 1  # (as above: beside the table it is found)
    capsys.readouterr()
    elsewhere_table = elsewhere / "rows.csv"
    elsewhere_table.write_text(path.read_text())
    assert main(["audit", str(elsewhere_table), "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert "models/dsv3.json is neither beside the table" in row["reason"] and "nor in the working folder" in \
        row["reason"], row
    # a path that names no file beside the table is read from the working folder, as --model reads it
    monkeypatch.chdir(tmp_path)
    cwd_relative = tables / "from-cwd.csv"
    cwd_relative.write_text(path.read_text().replace("models/dsv3.json", "tables/models/dsv3.json"))
    assert main(["audit", str(cwd_relative), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["rows"][0]["verdict"] == "impossible"


SPREADSHEET_ROW = ("model", "hardware", "chips", "batch", "context", "tpot"), \
    ("llama3-8b", "h100-sxm", "1", "1", "1024", "1 ms")


@pytest.mark.parametrize(("name", "text"), [
    ("bom.csv", "\ufeff" + "\n".join(",".join(r) for r in SPREADSHEET_ROW) + "\n"),  # Excel's "CSV UTF-8"
    ("semicolons.csv", "\n".join(";".join(r) for r in SPREADSHEET_ROW) + "\n"),  # where the comma is decimal
    ("tabs.tsv", "\n".join("\t".join(r) for r in SPREADSHEET_ROW) + "\n"),
    ("tabs.csv", "\n".join("\t".join(r) for r in SPREADSHEET_ROW) + "\n"),
    ("bom.jsonl", "\ufeff" + json.dumps(dict(zip(*SPREADSHEET_ROW, strict=True))) + "\n"),
], ids=lambda v: v if v.count(".") == 1 and "\n" not in v else "")
def test_a_table_as_spreadsheets_save_it_is_read(name, text, tmp_path):
    """A byte-order mark before the header was read as part of the first column's name ("unknown column
    '\\ufeffmodel'"), and a header separated by semicolons or tabs as one column; each is read as written."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    rows = audit_file(path)
    assert [r.verdict for r in rows.values()] == ["impossible"]  # 1 ms is below Llama 3 8B's floor on one H100


def test_a_number_beyond_floating_point_is_unchecked_with_its_reason(tmp_path):
    path = tmp_path / "huge.csv"
    path.write_text("model,hardware,chips,tpot\nllama3-8b,h100-sxm,1e400,5 ms\n")
    row = audit_file(path)["2"]
    assert row.verdict == "unchecked" and "1e400 is beyond the audit's floating-point range" in row.reason


def test_a_utf16_table_is_one_line_saying_how_to_save_it(tmp_path, capsys):
    """A spreadsheet's "Unicode text" export (UTF-16, tabs) is refused in one line that says which export to use."""
    table = tmp_path / "export.txt"
    table.write_text("\n".join("\t".join(r) for r in SPREADSHEET_ROW) + "\n", encoding="utf-16")
    assert main(["audit", str(table)]) == 2
    err = capsys.readouterr().err
    assert "the file is not UTF-8 text" in err and "CSV UTF-8" in err and err.count("\n") == 1


@pytest.mark.parametrize("whole,needs", [(True, "needs n >= 4 (row: 1)"), (False, "needs n >= 3.34 (row: 1)")])
def test_a_count_is_suggested_in_whole_units(tmp_path, capsys, whole, needs):
    # n workers share w of work at rate r each: 3 s for 10 units at 1 a second needs 3.34 workers, that is 4
    lib = tmp_path / "countlib.py"
    lib.write_text(
        "from derive import Assumption, Claim, Quantity, logic, derived\n"
        "w = Quantity('w', 'w', 'FLOP', 'work of the job')\n"
        f"n = Quantity('n', 'n', '1', 'workers sharing it', whole={whole})\n"
        "r = Quantity('r', 'r', 'FLOP/s', 'rate of one worker')\n"
        "t = Quantity('t', 't', 's', 'measured time of the job')\n"
        "does = Assumption('countlib.does', title='The job does its work', statement='No faster than its work.',\n"
        "                  source=derived('a model'), relation=logic.ge(t.sym, w.sym / (n.sym * r.sym)))\n"
        "floor = Claim('countlib.floor', title='A floor', statement='At least the work over the workers.',\n"
        "              source=derived('the assumption'), goal=logic.ge(t.sym, w.sym / (n.sym * r.sym)), uses=(does,))\n"
        "AUDIT_BOUNDS = [{'metric': 'latency', 'unit': 's', 'claim': 'countlib.floor', 'measured': 'latency'}]\n")
    table = tmp_path / "t.csv"
    table.write_text("model,hardware,w,n,r,latency\n,,10 FLOP,1,1 FLOP/s,3 s\n")
    assert main(["audit", str(table), "--library", str(lib), "--json"]) == 1
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert row["verdict"] == "impossible"
    assert row["metrics"]["latency"][0]["changes"][0]["text"] == needs


LLAMA_H100 = "llama3-70b,h100-sxm,8,12,1024"  # model, hardware, chips, batch, context of a row below
HEADER = "id,model,hardware,chips,batch,context,tpot\n"


def _audit(tmp_path, capsys, rows: str, *options: str, header: str = HEADER) -> tuple[int, str, str]:
    """``derive audit`` of a table of ``rows`` under ``header``: (exit code, stdout, stderr)."""
    table = tmp_path / "rows.csv"
    table.write_text(header + rows, encoding="utf-8")
    code = main(["audit", str(table), *options])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_bare_number_is_shown_with_its_si_unit_and_minus_zero_is_zero(tmp_path, capsys):
    # a bare tpot is read in seconds (documented): the table showed "5" with no unit; -0 ms read "-0x"
    code, out, _ = _audit(tmp_path, capsys, f"bare,{LLAMA_H100},5\nzero,{LLAMA_H100},-0 ms\n")
    assert code == 1 and "  bare  tpot    5 s " in out and "-0x" not in out and " 0x " in out


def test_audit_output_keeps_a_spreadsheet_from_running_a_rows_text(tmp_path, capsys):
    # an id "=cmd|..." went into --out unquoted: a spreadsheet runs it as a formula
    code, _, _ = _audit(tmp_path, capsys, f"=cmd|x,{LLAMA_H100},20 ms\n", "--out", str(tmp_path / "out.csv"))
    line = (tmp_path / "out.csv").read_text().splitlines()[1]
    assert code == 0 and line.startswith("'=cmd|x,") and ",'-" not in line and ",'+" not in line  # numbers kept


def test_audit_report_links_only_to_a_folder_or_a_web_address(tmp_path, capsys):
    row = f"r,{LLAMA_H100},20 ms\n"
    code, _, err = _audit(tmp_path, capsys, row, "--html", str(tmp_path / "r"), "--site", "javascript:alert(1)//")
    assert code == 2 and "is a javascript: link" in err
    assert _audit(tmp_path, capsys, row, "--html", str(tmp_path / "r"), "--site", "https://example.org/s")[0] == 0


def test_a_tpot_written_per_token_reads_as_the_time_it_is(tmp_path, capsys):
    code, out, _ = _audit(tmp_path, capsys, f"a,{LLAMA_H100},30 ms/token\nb,{LLAMA_H100},30 ms\n", "--json")
    rows = json.loads(out)["rows"]
    assert code == 0 and rows[0]["verdict"] == rows[1]["verdict"] == "consistent"
    assert rows[0]["metrics"] == rows[1]["metrics"]  # was refused: "unit 'ms/token' is s/token"


def test_a_tab_separated_header_over_comma_rows_says_so(tmp_path, capsys):
    code, _, err = _audit(tmp_path, capsys, "r,llama3-70b,h100-sxm,20 ms\n", header="id\tmodel\thardware\ttpot\n")
    assert code == 2 and "the header separates its columns by tabs: every line must" in err


def test_an_audit_reads_ascii_digits_as_set_does(tmp_path, capsys):
    # "３０ ms" (full-width digits) read as 30 ms here, where --set refuses it
    code, out, _ = _audit(tmp_path, capsys, f"r,{LLAMA_H100},３０ ms\n")
    assert code == 0 and "cannot read value '３０ ms'" in out
