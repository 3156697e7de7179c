"""derive ledger as evidence: signed error, scope, date and source per row; --since flags ratios that moved."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from derive.cli import main
from derive.errors import ScenarioError, UnknownNameError
from derive.model.loader import load_library
from derive.whatif.ledger import build_ledger, compare_ledgers, moved, read_previous_ledger

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ledger_json(tmp_path_factory) -> dict:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["ledger", "--json"]) == 0
    return json.loads(buf.getvalue())


def test_every_row_records_signed_error_scope_date_and_source(ledger_json):
    entries = ledger_json["entries"]
    assert len(entries) > 50
    for e in entries:
        assert e["signed_error"] == pytest.approx(e["ratio"] - 1, abs=1e-12)
        assert set(e["scope"]) == {"chip", "software", "version", "level"}
        assert e["scope"]["chip"] == e["scenario"]["hardware"]
        assert e["scope"]["level"] in (None, "kernel", "framework")
        assert e["as_of"] and e["source"]


def test_probe_rows_name_their_software_and_what_they_timed(ledger_json):
    probe = [e for e in ledger_json["entries"] if e["id"].startswith("h200-probe-2026-11-25/")]
    assert probe and {e["scope"]["software"] for e in probe} == {"PyTorch"}
    assert {e["scope"]["version"] for e in probe} == {"2.11.0+cu130"}
    knees = {e["scope"]["level"] for e in probe if e["check"] == "gap.knee_tokens"}
    steps = {e["scope"]["level"] for e in probe if e["check"] != "gap.knee_tokens"}
    assert (knees, steps) == ({"kernel"}, {"framework"})


def _planted(tmp_path: Path, body: str):
    (tmp_path / "ledger").mkdir(exist_ok=True)
    (tmp_path / "ledger" / "zz-planted.toml").write_text(body)
    lib = load_library(["lecture"])
    lib.preset_dirs.insert(0, tmp_path)
    return lib


PLANTED = """
source = "planted"
as_of = "2026-11-23"
check = "gap.roofline_floor_below_measured"
hardware = "h100-sxm"
software = "a serving framework"
version = "1.2.3"
level = "{level}"
set = ["chips=1", "params_total=8e9 param", "params_active=8e9 param", "batch=1", "context=128",
       "kv_bytes_per_token=131072 byte/token"]
[[entry]]
id = "too-fast"
value = "1 ms"
[[entry]]
id = "slow"
value = "20 ms"
"""


def test_signed_error_is_negative_below_a_floor_and_positive_above(tmp_path):
    rows = {r.entry.id: r for r in build_ledger(_planted(tmp_path, PLANTED.format(level="framework"))).rows
            if r.entry.id.startswith("zz-planted/")}
    fast, slow = rows["zz-planted/too-fast"], rows["zz-planted/slow"]
    assert fast.status == "contradiction" and fast.signed_error < 0
    assert slow.status == "above floor" and slow.signed_error > 0
    assert slow.signed_error == slow.ratio - 1  # exact
    assert slow.to_json()["scope"] == {"chip": "h100-sxm", "software": "a serving framework", "version": "1.2.3",
                                       "level": "framework"}


def test_an_unknown_level_is_refused(tmp_path):
    with pytest.raises(ScenarioError, match="level"):
        build_ledger(_planted(tmp_path, PLANTED.format(level="kernal")))


# --since: at least 2 points and 10 % relative -----------------------------------------------------------------

@pytest.mark.parametrize("before,after,flagged", [
    (1.00, 1.02, False),  # 2 points but 2 %
    (1.00, 1.10, True),  # 10 points, 10 %
    (1.00, 1.0999, False),  # just under 10 %
    (2.00, 1.75, True),  # down 25 points, 12.5 %
    (0.10, 0.12, True),  # 2 points, 20 %
    (0.10, 0.1199, False),  # under 2 points
    (0.05, 0.065, False),  # 30 % but 1.5 points
    (1.10, 1.00, False),  # 10 points down, but 9.1 % of the previous ratio
    (0.12, 0.10, True),
    (3.00, 3.00, False),
])
def test_moved_needs_both_thresholds(before, after, flagged):
    assert moved(before, after) is flagged


def test_since_flags_the_moved_entry_and_lists_new_and_gone(ledger_json, tmp_path, capsys):
    old = json.loads(json.dumps(ledger_json))
    entries = old["entries"]
    a, b, c = entries[0]["id"], entries[1]["id"], entries[2]["id"]
    entries[0]["ratio"] *= 1.5  # moved: both thresholds
    entries[1]["ratio"] *= 1.01  # within noise: not flagged
    del entries[2]  # a new entry since
    entries.append({**entries[3], "id": "old-ledger/retired"})  # gone since
    previous = tmp_path / "previous.json"
    previous.write_text(json.dumps(old))
    since = compare_ledgers(read_previous_ledger(previous), build_ledger(load_library(["lecture"])), "p")
    assert [m.id for m in since.moved] == [a] and since.new == (c,) and since.gone == ("old-ledger/retired",)
    assert since.moved[0].after == pytest.approx(since.moved[0].before / 1.5)
    assert main(["ledger", "--since", str(previous)]) == 1  # a moved point fails a CI job, as a contradiction does
    out = capsys.readouterr().out
    assert f"moved since {previous}: {a}" in out and f"{b} ratio" not in out
    assert f"new since {previous}: {c}" in out and "gone since" in out
    assert "1 moved (at least 2 points and 10 % of the ratio), 1 new, 1 gone" in out


def test_since_the_same_ledger_flags_nothing(ledger_json, tmp_path, capsys):
    previous = tmp_path / "same.json"
    previous.write_text(json.dumps(ledger_json))
    assert main(["ledger", "--since", str(previous), "--json"]) == 0
    since = json.loads(capsys.readouterr().out)["since"]
    assert since["moved"] == [] and since["new"] == [] and since["gone"] == []
    assert since["thresholds"] == {"points": 0.02, "relative": 0.1}


@pytest.mark.parametrize("text,words", [
    (None, "not found"),
    ("{not json", "invalid JSON"),
    ('{"rows": []}', "no list of entries"),
    ('{"entries": [{"id": "x", "ratio": "1.2"}]}', "entry 0 has no text id and numeric ratio"),
])
def test_a_bad_since_file_is_one_line_exit_2(text, words, tmp_path, capsys):
    path = tmp_path / "previous.json"
    if text is not None:
        path.write_text(text)
    assert main(["ledger", "--since", str(path)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "--since" in lines[0] and not captured.out


# wording: a fitted value is never called a validation ----------------------------------------------------------

def test_nothing_is_called_a_validation(ledger_json, capsys):
    """The ledger and the audit hold numbers to bounds; a value fitted to measurements (a knee read off a fitted
    curve) is a measurement of that quantity, and no output or page about them calls it a validation."""
    texts = [json.dumps(ledger_json)]
    for doc in ("docs/measured.md", "docs/audit.md", "examples/audit/README.md", "examples/audit/SOURCES.md"):
        texts.append((ROOT / doc).read_text(encoding="utf-8"))
    for module in ("derive/whatif/ledger.py", "derive/whatif/audit.py", "derive/documents/measured.py",
                   "derive/documents/audit_page.py", "derive/cli/commands/ledger.py", "derive/cli/commands/audit.py"):
        texts.append((ROOT / module).read_text(encoding="utf-8"))
    found = [m.group(0) for t in texts for m in re.finditer(r"\w*validat\w*", t, flags=re.I)
             if m.group(0).lower() not in ("invalidate", "invalidates")]
    # the ledger module's docstring says what a fitted value is not: that one sentence is the only mention
    assert found == ["validation"], found


def test_the_moved_thresholds_are_exact():
    from derive.whatif.ledger import MOVED_POINTS, MOVED_RELATIVE

    assert (MOVED_POINTS, MOVED_RELATIVE) == (Fraction(2, 100), Fraction(1, 10))


_ENTRY = """
[[entry]]
id = "{id}"
title = "a probe's prefill pass"
check = "{check}"
value = "50 ms"
hardware = "h100-sxm"
set = ["batch=1 seq"]
source = "a planted measurement"
as_of = "2031-01-01"
"""


def _with_ledger_file(tmp_path: Path, check: str):
    (tmp_path / "ledger").mkdir()
    (tmp_path / "ledger" / "h100-sxm-probe-2031-01-01-prefill.toml").write_text(_ENTRY.format(id="p1", check=check))
    lib = load_library(["lecture"])
    lib.preset_dirs.insert(0, tmp_path)
    return lib


def test_an_entry_of_another_librarys_claim_is_skipped_with_a_note(tmp_path):
    # a probe writes its prefill passes (held to the serving library's prefill.ttft_floor) beside its decode steps
    ledger = build_ledger(_with_ledger_file(tmp_path, "prefill.ttft_floor"))
    assert "h100-sxm-probe-2031-01-01-prefill: p1 (prefill.ttft_floor)" in ledger.skipped
    # the others are the committed probe runs' prefill passes, each in its own file
    assert all(s.split(":")[0].endswith("-prefill") and s.endswith("(prefill.ttft_floor)") for s in ledger.skipped)
    assert all(r.entry.id != "p1" for r in ledger.rows) and len(ledger.rows) > 50


def test_skipped_entries_are_only_those_of_the_chips_asked_for(tmp_path):
    lib = _with_ledger_file(tmp_path, "prefill.ttft_floor")
    assert build_ledger(lib, hardware=["tpu-v5e"]).skipped == []
    on_h100 = build_ledger(lib, hardware=["h100-sxm"]).skipped
    assert "h100-sxm-probe-2031-01-01-prefill: p1 (prefill.ttft_floor)" in on_h100
    assert all(s.startswith("h100-sxm-") for s in on_h100)


def test_a_misspelt_claim_of_the_librarys_own_topic_is_still_refused(tmp_path):
    with pytest.raises(UnknownNameError) as err:
        build_ledger(_with_ledger_file(tmp_path, "gap.roofline_floor_below_measurd"))
    assert "unknown id 'gap.roofline_floor_below_measurd'" in str(err.value.message)
