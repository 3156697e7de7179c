"""derive diff: verdict changes between scenarios, re-checking only what the change reaches."""

from __future__ import annotations

import json

import pytest
from whatif_fixture import BASE_SETS, load, write_library

from derive.checking.checker import Checker
from derive.cli import main
from derive.model.scenario import build_scenario
from derive.whatif.diff import affected_claims, compare_scenarios, diff


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    return load(tmp_path_factory.mktemp("whatif"))


def scen(lib, *sets, assumes=()):
    values = dict(s.split("=", 1) for s in BASE_SETS)
    values.update(dict(s.split("=", 1) for s in sets))
    return build_scenario(lib, sets=[f"{k}={v}" for k, v in values.items()], assumes=assumes)


def full(lib, scenario):
    return {r.id: r.verdict for r in Checker(lib, scenario).check().results}


def test_value_change_rechecks_only_dependants_and_blocks_descendants(lib):
    base, cur = scen(lib), scen(lib, "aa=3")  # ratio 3/2 < 2
    report = diff(lib, base, cur)
    assert set(report.rechecked) == {"fx.inst_r"}  # general claims and inst_c cannot be reached
    assert report.changed() == ["fx.inst_r", "fx.dep"]
    assert report.after["fx.inst_r"].verdict == "refuted"
    assert report.after["fx.dep"].verdict == "blocked"  # propagated without re-proving fx.dep
    assert {i: r.verdict for i, r in report.after.items()} == full(lib, cur)
    data = report.to_json()
    assert data["unchanged"] == 2 and data["rechecked"] == 1
    entry = data["changed"][0]
    assert {"id", "before", "after", "counterexample"} <= set(entry)
    assert entry["values"] == {"aa": {"before": "10", "after": "3"}}


def test_value_change_of_unused_quantity_rechecks_nothing_relevant(lib):
    report = diff(lib, scen(lib), scen(lib, "cc=20"))
    assert set(report.rechecked) == {"fx.inst_c"}
    assert report.changed() == ["fx.inst_c"]
    assert report.prover_calls == 4 + 1  # baseline: 4 claims (one problem each); current: inst_c only


def test_pin_of_derived_quantity_reaches_instance_claims_only(lib):
    base, cur = scen(lib), scen(lib, "ratio=1")
    change = compare_scenarios(base, cur)
    assert change.pinned_added == ("ratio",)
    reach = affected_claims(lib, base, cur, lib.claims(), change)
    assert set(reach) == {"fx.inst_r"}  # fx.general is about the definition: never pinned
    report = diff(lib, base, cur)
    assert report.after["fx.inst_r"].verdict == "refuted"
    assert {i: r.verdict for i, r in report.after.items()} == full(lib, cur)


def test_added_assumption_reaches_claims_sharing_a_quantity(lib):
    base, cur = scen(lib), scen(lib, assumes=["cc >= 20"])
    reach = affected_claims(lib, base, cur, lib.claims())
    assert set(reach) == {"fx.inst_c"}
    report = diff(lib, base, cur)
    assert report.after["fx.inst_c"].verdict == "inconsistent"  # cc = 5 contradicts cc >= 20
    assert {i: r.verdict for i, r in report.after.items()} == full(lib, cur)


def test_no_change_is_empty(lib):
    report = diff(lib, scen(lib), scen(lib))
    assert report.changed() == [] and report.rechecked == {} and report.change.empty


def test_markdown_report(lib):
    md = diff(lib, scen(lib), scen(lib, "aa=3")).markdown()
    assert "| claim | before | after |" in md and "`fx.inst_r`" in md and "**refuted**" in md


def test_cli_diff_on_fixture_json_and_exit_code(tmp_path, capsys):
    folder = write_library(tmp_path)
    cache = str(tmp_path / "cache")
    argv = ["diff", "--library", str(folder), "--cache-dir", cache, *sum((["--set", s] for s in BASE_SETS), [])]
    # baseline: --against a TOML scenario with the base values
    toml = tmp_path / "base.toml"
    toml.write_text("".join(f'[values.{s.split("=")[0]}]\nvalue = "{s.split("=")[1]}"\nsource = "test"\n'
                            for s in BASE_SETS))
    code = main([*argv, "--against", str(toml), "--set", "aa=3", "--json", "--exit-code"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    assert [c["id"] for c in data["changed"]] == ["fx.inst_r", "fx.dep"]
    assert data["unchanged"] == 2 and data["rechecked"] == 1
    # the baseline's results now come from the results cache: only the re-checked claim reaches the prover
    main([*argv, "--against", str(toml), "--set", "aa=4", "--json"])
    again = json.loads(capsys.readouterr().out)
    assert again["prover_calls"] == 1
    code = main([*argv, "--against", str(toml), "--format", "md"])
    assert code == 0 and "None." in capsys.readouterr().out


def test_lecture_diff_flops(tmp_path, capsys, lecture_library):
    """The Done-when example, restricted to a few claims (the whole lecture is checked by its own tests)."""
    ids = ["batch_optimum_lecture", "hbm_drain_time", "scaleout_viability"]
    code = main(["diff", *ids, "--set", "flops=989 TFLOP/s", "--json", "--cache-dir", str(tmp_path)])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    changed = {c["id"]: c for c in data["changed"]}
    assert changed["batching.batch_optimum_lecture"]["before"] == "proved"
    assert changed["batching.batch_optimum_lecture"]["after"] == "refuted"
    assert "roofline.hbm_drain_time" not in data["rechecked_ids"]  # does not use flops
    assert "pipeline.scaleout_viability" not in data["rechecked_ids"]
    assert all(n["note"] == "definition cut" for n in data["pinned"]["scenario"])


def test_diff_of_changes_to_a_scenario_file_says_its_baseline(tmp_path, capsys):
    # a user's scenario with a --set was compared against the lecture without a word
    from derive.cli import main

    mine = tmp_path / "mine.toml"
    mine.write_text('[values.hbm_bandwidth]\nvalue = "8 TB/s"\nsource = "my chip"\n')
    assert main(["diff", "--scenario", str(mine), "--set", "batch=32 seq", "--json"]) == 0
    err = capsys.readouterr().err
    assert f"the baseline is the lecture's scenario; --against {mine} compares against" in err
    assert main(["diff", "--scenario", str(mine), "--set", "batch=32 seq", "--against", str(mine), "--json"]) == 0
    assert "notice" not in capsys.readouterr().err
