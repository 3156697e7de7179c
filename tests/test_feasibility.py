"""Feasibility: a value computed where the scenario cannot exist says so, with the bound and its numbers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from derive.cli import main
from derive.model.scenario import build_scenario
from derive.whatif.feasibility import constraints, feasibility

LLAMA_70B = str(Path(__file__).parent / "fixtures" / "configs" / "llama3_70b.json")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_library_declares_its_constraints(lecture_library) -> None:
    assert [c.id for c in constraints(lecture_library)] == ["capacity.memory_fits_in_hbm",
                                                             "capacity.context_within_model"]


@pytest.mark.parametrize(("context", "feasible"), [(131_072, True), (131_073, False), (1_000_000, False)])
def test_context_past_the_model_maximum_is_infeasible(lecture_library, context, feasible) -> None:
    """Llama 3.1 is set up for 131,072 tokens (max_position_embeddings): one token past it, no deployment."""
    sc = build_scenario(lecture_library, hardware="h200", model=LLAMA_70B,
                        sets=["batch=1 seq", f"context={context} token/seq"])
    f = feasibility(lecture_library, sc)
    assert f.feasible is feasible
    if not feasible:
        (v,) = f.violations
        # one token past: as many figures as tell the sides apart (131.1k against 131.1k said nothing)
        shown = "max_context = 131.072k token/seq" if context == 131_073 else "max_context = 131.1k token/seq"
        assert v.claim == "capacity.context_within_model" and shown in v.note, v.note


def test_the_lecture_scenario_leaves_the_model_maximum_undecided(lecture_library, lecture_scenario) -> None:
    f = feasibility(lecture_library, lecture_scenario)
    assert f.feasible and f.undecided == ("capacity.context_within_model",)


def test_eval_notes_a_context_past_the_model_maximum(capsys) -> None:
    code, out, _ = run(capsys, "eval", "kv_bytes_per_sequence", "--hardware", "h200", "--model", LLAMA_70B,
                       "--set", "context=1000000 token/seq")
    assert code == 0 and "infeasible: context = 1M token/seq > max_context = 131.1k token/seq" in out


def test_lecture_scenario_is_feasible(lecture_library, lecture_scenario) -> None:
    assert feasibility(lecture_library, lecture_scenario).feasible


@pytest.mark.parametrize(("batch", "feasible"), [(16, True), (2000, False)])
def test_kv_cache_past_hbm_is_infeasible(lecture_library, batch, feasible) -> None:
    sc = build_scenario(lecture_library, hardware="h100-sxm", model=LLAMA_70B,
                        sets=[f"batch={batch} seq", "context=8192 token/seq"])
    f = feasibility(lecture_library, sc)
    assert f.feasible is feasible
    if not feasible:
        (v,) = f.violations
        assert v.claim == "capacity.memory_fits_in_hbm" and "hbm_capacity = 80 GB" in v.note
        assert v.note.startswith("infeasible: memory_per_chip = ")


def test_eval_carries_the_infeasible_note(capsys) -> None:
    argv = ["eval", "cost_per_token", "--hardware", "h100-sxm", "--model", LLAMA_70B, "--set", "batch=2000 seq"]
    code, out, _ = run(capsys, *argv)
    assert code == 0 and "infeasible: memory_per_chip" in out and "> hbm_capacity = 80 GB" in out
    code, out, _ = run(capsys, *argv, "--json")
    data = json.loads(out)
    assert data["infeasible"][0]["claim"] == "capacity.memory_fits_in_hbm"
    code, out, _ = run(capsys, "eval", "cost_per_token", "--json")
    assert json.loads(out)["infeasible"] == []  # the twin: the lecture's own scenario fits


def test_sweep_has_a_feasible_column(capsys, tmp_path) -> None:
    out_csv = tmp_path / "s.csv"
    code, _, err = run(capsys, "sweep", "cost_per_token", "--vary", "batch=1 seq:256 seq:6", "--hardware", "h100-sxm",
                       "--model", LLAMA_70B, "--out", str(out_csv), "--figure", str(tmp_path / "s.png"))
    assert code == 0
    lines = out_csv.read_text().splitlines()
    assert lines[0].endswith(",feasible")
    assert [line.rsplit(",", 1)[1] for line in lines[1:]] == ["1", "0", "0", "0", "0", "0"]
    assert (tmp_path / "s.png").stat().st_size > 0


def test_sweep_presets_marks_pairs_that_do_not_fit(lecture_library) -> None:
    from derive.whatif.sweep import resolve_target, sweep_presets

    result = sweep_presets(lecture_library, [resolve_target(lecture_library, "critical_batch")],
                           pairs=[("h100-sxm", "llama3-8b"), ("a100-80gb", "deepseek-v3")])
    assert result.columns[-1] == "feasible" and list(result.data[-1]) == [1.0, 0.0]


@pytest.mark.parametrize(("batch", "infeasible"), [("2000 seq", True), ("1 seq", False)])
def test_documents_open_the_scenario_notes_with_the_bound(lecture_library, batch, infeasible) -> None:
    from derive.checking.checker import Report
    from derive.documents.view import ModelBuilder

    sc = build_scenario(lecture_library, hardware="h100-sxm", model=LLAMA_70B, sets=[f"batch={batch}"])
    notes = ModelBuilder(lecture_library, sc, Report(sc, [])).scenario_model()["notes"]
    assert (bool(notes) and notes[0].startswith("infeasible: memory_per_chip")) is infeasible


def test_check_carries_the_infeasible_note(capsys) -> None:
    code, out, _ = run(capsys, "check", "latency_floor", "--hardware", "h100-sxm", "--model", LLAMA_70B,
                       "--set", "batch=2000 seq", "--json")
    assert json.loads(out)["infeasible"][0]["claim"] == "capacity.memory_fits_in_hbm"
    code, out, _ = run(capsys, "check", "latency_floor", "--json")
    assert json.loads(out)["infeasible"] == []


# Llama 3 70B's BF16 weights (141 GB) on one 80 GB H100: no such deployment exists
NO_FIT = ["--hardware", "h100-sxm", "--model", "llama3-70b", "--set", "chips=1", "--no-cache"]


@pytest.mark.parametrize("argv", [["diff"], ["diff", "--format", "md"],
                                  ["margin", "roofline.latency_floor", "--vary", "hbm_bandwidth"],
                                  ["margin", "roofline.latency_floor", "--vary", "hbm_bandwidth", "--vary", "batch",
                                   "--grid", "4"]], ids=["diff", "diff-md", "margin", "region"])
def test_diff_and_margin_say_when_the_scenario_cannot_exist(argv, capsys):
    """Both print values at the scenario (headline values, the scenario's own value of the varied input), so an
    infeasible scenario says so there too, as eval, card and check do; their JSON carries it."""
    assert main([*argv, *NO_FIT]) == 0
    assert "infeasible: memory_per_chip = " in capsys.readouterr().out
    if argv[0] == "diff" and len(argv) == 1:
        assert main(["diff", "--json", *NO_FIT]) == 0
        side = json.loads(capsys.readouterr().out)["infeasible"]["scenario"]
        assert side[0]["claim"] == "capacity.memory_fits_in_hbm"
    elif argv[0] == "margin" and len(argv) == 4:
        assert main([*argv, "--json", *NO_FIT]) == 0
        assert json.loads(capsys.readouterr().out)["infeasible"][0]["claim"] == "capacity.memory_fits_in_hbm"


def test_a_feasible_scenario_has_no_such_line(capsys):
    assert main(["margin", "roofline.latency_floor", "--vary", "hbm_bandwidth", "--hardware", "h100-sxm",
                 "--model", "llama3-8b", "--set", "chips=1", "--set", "batch=1 seq", "--no-cache"]) == 0
    assert "infeasible" not in capsys.readouterr().out


@pytest.mark.parametrize("name", ["batching.batch_optimum_lecture", "critical_batch", "batching.critical_batch"])
def test_show_says_when_the_scenario_of_its_value_or_verdict_cannot_exist(name, capsys):
    assert main(["show", name, *NO_FIT]) == 0
    assert "infeasible: memory_per_chip = " in capsys.readouterr().out
    assert main(["show", name, "--json", *NO_FIT]) == 0
    assert json.loads(capsys.readouterr().out)["infeasible"][0]["claim"] == "capacity.memory_fits_in_hbm"


def test_the_python_apis_margin_and_diff_carry_it_too():
    import derive

    sc = {"hardware": "h100-sxm", "model": "llama3-70b", "set": {"chips": "1"}}
    m = derive.margin("roofline.latency_floor", "hbm_bandwidth", **sc)
    assert "infeasible: memory_per_chip = " in repr(m) and m.to_json()["infeasible"]
    d = derive.diff(**sc)
    assert "infeasible: memory_per_chip = " in "\n".join(d.report.text_lines())
    assert d.to_json()["infeasible"]["scenario"]
    v = derive.claim("batch_optimum_lecture", **sc)
    assert "infeasible: memory_per_chip = " in repr(v) and "infeasible: memory_per_chip" in v._repr_html_()
    assert "infeasible" not in repr(derive.claim("batch_optimum_lecture"))  # the lecture's own scenario fits


def test_margin_says_where_a_bound_on_the_varied_quantity_ends_the_feasible_part(capsys) -> None:
    # one sequence of Llama 3 70B on an H100 node fits 1.523M tokens in memory; past the model's 131,072 the
    # margin's values describe no deployment, and it says so (text and JSON), once
    argv = ["margin", "capacity.memory_fits_in_hbm", "--vary", "context", "--hardware", "h100-sxm", "--model",
            "llama3-70b", "--set", "batch=1 seq", "--no-verify"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("infeasible past 131.07k token/seq: context <= max_context with max_context = 131.1k "
                     "token/seq (capacity.context_within_model)") == 1
    assert main([*argv, "--json"]) == 0
    [limit] = json.loads(capsys.readouterr().out)["feasible_up_to"]
    assert limit == {"claim": "capacity.context_within_model", "relation": "context <= max_context",
                     "value": 131072.0, "exact": "131072", "strict": False}
    # at 64 sequences the memory ends the set first (23.79k tokens): no such note
    assert main([*argv[:-3], "--set", "batch=64 seq", "--no-verify"]) in (0, 1)
    assert "infeasible past" not in capsys.readouterr().out


@pytest.mark.parametrize(("batch", "infeasible"), [("2000 seq", True), ("1 seq", False)])
def test_a_document_at_an_infeasible_scenario_says_so_first_and_marks_every_value(capsys, tmp_path, batch,
                                                                                    infeasible) -> None:
    """The title says which bound the scenario breaks; each value the prose prints under it carries a dagger and
    each declaration's "Under ..." line says (infeasible); a scenario that can exist has neither."""
    code, _, err = run(capsys, "build", "--hardware", "h100-sxm", "--model", LLAMA_70B, "--set", f"batch={batch}",
                       "--format", "md", "--out", str(tmp_path / "b"), "--cache-dir", str(tmp_path / "c"))
    assert code == 0, err
    md = (tmp_path / "b" / "derivation.md").read_text()
    head = md.split("## Contents")[0]
    assert ("**This scenario cannot exist as given**: memory\\_per\\_chip" in head) is infeasible
    prose_values = md.count("ms†")
    assert (prose_values > 3) is infeasible and (prose_values == 0) is not infeasible
    unders = [line for line in md.splitlines() if line.startswith("**Under `")]
    assert unders and all(("*(infeasible)*" in line) is infeasible for line in unders)
    # the lecture's numbers set beside their computed values: those are printed under the scenario too
    computed = re.findall(r"computed ([0-9][^;|:)]*?)(?=[;|:)]| \|)", md)  # a number: not the title's words
    assert computed and all(c.strip().endswith("†") is infeasible for c in computed), computed


def test_a_failed_bound_shows_its_sides_with_the_figures_that_tell_them_apart(capsys) -> None:
    """Just past Llama 3 70B's longest context on eight H100s the note read "80 GB > 80 GB"."""
    code, out, err = run(capsys, "check", "memory_fits_in_hbm", "--hardware", "h100-sxm", "--model", LLAMA_70B,
                         "--set", "context=1522508 token/seq")
    line = next(x for x in out.splitlines() if "memory_per_chip =" in x and x.startswith("infeasible"))
    shown = re.match(r"infeasible: memory_per_chip = (.+?) > hbm_capacity = (.+?), so", line)
    assert shown and shown.group(1) != shown.group(2) and shown.group(2) == "80 GB", line
