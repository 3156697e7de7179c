"""What a what-if says in numbers (derive/whatif/explain.py and derive diff): the bound a claim now
violates with both values, the exact flipping value of the one changed input, headline quantities
before and after, and the values an inconsistent --assume contradicts, with --set suggestions."""

from __future__ import annotations

import json

import pytest
from whatif_fixture import BASE_SETS, SOURCE, write_library

from derive.cli import main
from derive.model.loader import load_library
from derive.model.scenario import build_scenario
from derive.whatif.diff import diff
from derive.whatif.explain import conflicts, explain_flips, flip_threshold, violations


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = write_library(tmp_path_factory.mktemp("explain"))
    (root / "fx.py").write_text(SOURCE + '\nHEADLINES = [("the ratio", "ratio"), ("aa times two", "2 * aa")]\n')
    return root


@pytest.fixture(scope="module")
def lib(folder):
    return load_library([str(folder)])


def scen(lib, *sets, assumes=()):
    values = dict(s.split("=", 1) for s in BASE_SETS)
    values.update(dict(s.split("=", 1) for s in sets))
    return build_scenario(lib, sets=[f"{k}={v}" for k, v in values.items()], assumes=assumes)


def test_violation_names_the_value_and_the_bound(lib):
    claim = lib.resolve("fx.inst_r")
    (v,) = violations(lib, scen(lib, "aa=3"), claim)
    assert v.text == "ratio = 1.5; the claim needs at least 2"
    assert violations(lib, scen(lib), claim) == []  # holds: nothing violated


def test_threshold_is_exact_and_between_the_two_values(lib):
    t = flip_threshold(lib, scen(lib), scen(lib, "aa=3"), lib.resolve("fx.inst_r"), "aa")
    assert t is not None and t.exact == "4" and t.at == "4"
    assert "flips at aa = 4" in t.text
    # no flip between two values on the same side of the boundary
    assert flip_threshold(lib, scen(lib), scen(lib, "aa=20"), lib.resolve("fx.inst_r"), "aa") is None


def test_conflict_names_values_layers_and_suggests_set(lib):
    found = conflicts(lib, scen(lib, assumes=["aa == 5"]))
    (c,) = found
    assert c.origin == "--assume" and "aa = 10" in c.failing
    assert c.values == [{"quantity": "aa", "display": "10", "layer": "--set"}]
    assert c.suggestions == ['--set "aa=5"']


def test_diff_report_carries_headlines_and_explanations(lib):
    report = diff(lib, scen(lib), scen(lib, "aa=3"))
    explain_flips(report)
    data = report.to_json()
    heads = {h["label"]: h for h in data["headlines"]}
    assert heads["the ratio"]["before"]["display"] == "5" and heads["the ratio"]["after"]["display"] == "1.5"
    assert heads["aa times two"]["after"]["exact"] == "6"
    (entry,) = [e for e in data["changed"] if e["id"] == "fx.inst_r"]
    assert entry["group"] == "instance"
    assert entry["violations"][0]["text"] == "ratio = 1.5; the claim needs at least 2"
    assert entry["threshold"]["exact"] == "4"
    json.dumps(data, allow_nan=False)
    text = "\n".join(report.text_lines())
    assert "aa: 10 -> 3" in text and "the ratio" in text and "flips at aa = 4" in text


def test_cli_diff_inconsistent_suggests_set(folder, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("DERIVE_CACHE_DIR", str(tmp_path))
    sets = [a for s in BASE_SETS for a in ("--set", s)]
    code = main(["diff", "--library", str(folder), "--against", str(_scenario_file(tmp_path)), *sets,
                 "--assume", "aa == 5"])
    out = capsys.readouterr().out
    assert code == 0
    assert "contradicts itself" in out and '--set "aa=5"' in out


def _scenario_file(tmp_path):
    path = tmp_path / "base.toml"
    path.write_text("".join(f'[values.{k}]\nvalue = "{v}"\nsource = "test"\n'
                            for k, v in (s.split("=", 1) for s in BASE_SETS)))
    return path
