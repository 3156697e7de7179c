"""--measured (achieved ceilings as a scenario layer), derive ledger, and the probe's torch-free analysis."""

from __future__ import annotations

import json
import shutil
import tomllib
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp

from derive.cli import main
from derive.errors import ScenarioError
from derive.model.loader import load_library
from derive.model.scenario import build_scenario
from derive.probe.analysis import ProbeDataError, knee, ledger_toml, measurement_toml, write_files
from derive.whatif.ledger import build_ledger

SHARED = Path(__file__).resolve().parents[1] / "theorems" / "presets"
PROBE_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "probe"
# the three H100 probe runs (2026-11-23, 2026-11-25 and 2026-11-27), exact values of their measurement files
H100_23 = (sp.Rational("770354535201479.1"), sp.Rational("3048255290975.663"))
H100_25 = (sp.Rational("744668256475974.9"), sp.Rational("3047251742096.966"))
H100_27 = (sp.Rational("771167188987810.2"), sp.Rational("3043969081177.202"))


@pytest.fixture(scope="module")
def lib():
    return load_library(["lecture"])


def test_measured_layer_replaces_peaks_and_records_ceilings(lib):
    peak = build_scenario(lib, hardware="h100-sxm")
    meas = build_scenario(lib, hardware="h100-sxm", measured=True)
    assert (meas.value("flops"), meas.value("hbm_bandwidth")) == H100_27  # the latest of four files
    assert meas.value("hbm_capacity") == peak.value("hbm_capacity")  # only measured values change
    kinds = {c.name: c.kind for c in meas.ceilings}
    assert kinds["flops"] == "measured" and kinds["scaleup_bandwidth"] == "peak"
    assert {c.name: c.kind for c in peak.ceilings}["flops"] == "peak" and not peak.measured
    flops = next(c for c in meas.ceilings if c.name == "flops")
    assert flops.as_of == "2026-11-27" and flops.method and flops.source
    assert meas.name.endswith("+measured") and meas.fingerprint() != peak.fingerprint()


def test_one_measurement_file_and_set_on_top(lib):
    mamf = build_scenario(lib, hardware="h100-sxm", measurements=["stas00-mamf"])
    assert mamf.value("flops") == sp.Rational("794.5e12") and mamf.value("hbm_bandwidth") == sp.Rational("3.35e12")
    both = build_scenario(lib, hardware="h100-sxm", measured=True, sets=["flops=900 TFLOP/s"])
    assert both.value("flops") == 900 * 10**12
    assert {c.name: c.kind for c in both.ceilings}["flops"] == "set"


def test_measured_errors(lib, tmp_path):
    with pytest.raises(ScenarioError, match="needs --hardware"):
        build_scenario(lib, measured=True)
    with pytest.raises(ScenarioError, match="no measurement files"):
        build_scenario(lib, hardware="tpu-v4", measured=True)
    folder = tmp_path / "measurements" / "h100-sxm"
    folder.mkdir(parents=True)
    (folder / "bad.toml").write_text('source = "s"\ndate = "2026-01-01"\n[values.flops]\nvalue = "1 PFLOP/s"\n')
    lib2 = load_library(["lecture"])
    lib2.preset_dirs.insert(0, tmp_path)
    with pytest.raises(ScenarioError, match="method"):
        build_scenario(lib2, hardware="h100-sxm", measurements=["bad"])


def test_cli_eval_measured(capsys):
    assert main(["eval", "critical_intensity", "--hardware", "h100-sxm", "--measured", "--json",
                 "--no-cache"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert Fraction(out["exact"]) == Fraction(str(H100_27[0])) / Fraction(str(H100_27[1]))
    assert main(["eval", "critical_intensity", "--hardware", "h100-sxm", "--measurement", "probe-2026-11-23",
                 "--json", "--no-cache"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert Fraction(out["exact"]) == Fraction(str(H100_23[0])) / Fraction(str(H100_23[1]))
    assert main(["eval", "hardware_ratio", "--measured", "--no-cache"]) == 2
    assert "needs --hardware" in capsys.readouterr().err


def test_seeded_ledger_has_no_contradiction(lib):
    ledger = build_ledger(lib)
    assert not ledger.contradictions
    rows = {r.entry.id: r for r in ledger.rows}
    assert len(rows) >= 30
    # the probe's decode steps sit 1.4x-2.7x above the floor; the dense knee near R at achieved ceilings
    decode = [r for i, r in rows.items() if i.startswith("h100-sxm-probe-2026-11-23/decode-")]
    assert len(decode) == 18 and all(1 < r.ratio < 3 for r in decode)
    knee_row = rows["h100-sxm-probe-2026-11-23/dense-knee"]
    assert knee_row.kind == "prediction" and abs(float(knee_row.ratio_achieved) - 1) < 0.1
    assert rows["mi300x/stas00-mamf/flops"].status == "below ceiling"
    h200 = [r for i, r in rows.items() if i.startswith("h200-probe-2026-11-25/decode-")]
    assert len(h200) == 17 and all(1 < r.ratio < 3 for r in h200)
    h200_27 = [r for i, r in rows.items() if i.startswith("h200-probe-2026-11-27/decode-")]
    assert len(h200_27) == 17 and all(1 < r.ratio < 3 for r in h200_27)


def test_two_probe_runs_of_one_chip_are_both_listed_each_with_its_own_ceilings(lib):
    """Three probe runs of the H100: --measured takes the latest; the ledger lists both runs, and holds each
    run's knees and decode steps to the ceilings measured that day (not to the later run's)."""
    rows = {r.entry.id: r for r in build_ledger(lib, hardware=["h100-sxm"]).rows}
    for date, (flops, hbm), steps in (("2026-11-23", H100_23, 18), ("2026-11-25", H100_25, 17),
                                      ("2026-11-27", H100_27, 34)):  # 17 steps, unfused and fused attention
        assert rows[f"h100-sxm/probe-{date}/flops"].entry.value == flops
        knee_row = rows[f"h100-sxm-probe-{date}/dense-knee"]
        assert knee_row.bound_achieved == flops / (2 * hbm / 2)  # R_ach = F_ach * q / (2 W_ach), q = 2 bytes
        assert {c.name: c.as_of for c in knee_row.ceilings}["flops"] == date
        assert len([i for i in rows if i.startswith(f"h100-sxm-probe-{date}/decode-")]) == steps
    # an entry older than every measurement file is held to the latest (all files, latest winning)
    from derive.model.scenario import PresetStore
    from derive.whatif.ledger import measurements_as_of

    store = PresetStore.discover(lib.preset_dirs)
    assert measurements_as_of(lib, store, "h100-sxm", "2024-01") == []
    assert measurements_as_of(lib, store, "h100-sxm", "2026-11-24") == ["stas00-mamf", "probe-2026-11-23"]


def test_committed_probe_files_are_what_the_probe_makes_of_their_raw_results():
    """Each probe-<date>.json beside a measurement file is the raw result; --from-json on it, with the
    committed file's source and date, writes the committed measurement and ledger files byte for byte."""
    raws = sorted((SHARED / "measurements").glob("*/probe-*.json"))
    assert {p.parent.name for p in raws} >= {"h100-sxm", "h200"}
    for raw in raws:
        hardware, name = raw.parent.name, raw.stem
        committed = SHARED / "measurements" / hardware / f"{name}.toml"
        top = tomllib.loads(committed.read_text())
        result = json.loads(raw.read_text())
        assert measurement_toml(result, hardware=hardware, date=top["date"], source=top["source"]) \
            == committed.read_text()
        assert ledger_toml(result, hardware=hardware, date=top["date"], source=top["source"]) \
            == (SHARED / "ledger" / f"{hardware}-{name}.toml").read_text()


def test_probe_repeats_on_one_day():
    """Three runs on 2026-11-25 (H100): decode steps repeat within 2 %; the achieved ceilings within 5 %
    and the knees within 10 % of their median (the spread a single run's numbers carry)."""
    runs = [json.loads((SHARED / "measurements" / "h100-sxm" / "probe-2026-11-25.json").read_text())]
    runs += [json.loads(p.read_text()) for p in sorted(PROBE_FIXTURES.glob("h100-sxm-2026-11-25-repeat-*.json"))]
    assert len(runs) == 3

    def within(values, tol):
        mid = sorted(values)[1]
        return all(abs(v / mid - 1) <= tol for v in values)

    for key in ("matmul_flops_per_s", "read_bytes_per_s"):
        assert within([r[key] for r in runs], 0.05)
    assert within([knee(r["dense_knee"]["points"]).tokens for r in runs], 0.10)
    for i in range(3):
        assert within([knee(r["moe_knee"][i]["points"]).tokens for r in runs], 0.10)
    for j in range(len(runs[0]["decode"])):
        assert within([r["decode"][j]["seconds"] for r in runs], 0.02)


def test_planted_contradiction_names_the_broken_assumption(lib, tmp_path):
    (tmp_path / "ledger").mkdir()
    (tmp_path / "ledger" / "zz-planted.toml").write_text("""
source = "planted"
as_of = "2026-11-23"
check = "gap.roofline_floor_below_measured"
hardware = "h100-sxm"
[[entry]]
id = "too-fast"
value = "1 ms"
set = ["chips=1", "params_total=8e9 param", "params_active=8e9 param", "batch=1", "context=128",
       "kv_bytes_per_token=131072 byte/token"]
""")
    lib2 = load_library(["lecture"])
    lib2.preset_dirs.insert(0, tmp_path)
    row = next(r for r in build_ledger(lib2).rows if r.entry.id == "zz-planted/too-fast")
    assert row.status == "contradiction"
    assert row.broken == ("gap.step_reads_its_bytes",)  # 1 ms is above the compute time, below the reads


def test_ledger_cli_json(capsys, tmp_path):
    assert main(["ledger", "--json", "--hardware", "mi300x"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["entries"] and all(e["scenario"]["hardware"] == "mi300x" for e in data["entries"])
    e = data["entries"][0]
    assert {"bound", "measured", "ratio", "status", "source", "as_of"} <= set(e)


# The probe, without torch ------------------------------------------------------------------------------
def _synthetic(plateau=1e-3, per_token=1e-6, knee_at=None):
    pts = [{"batch": b, "seconds": max(plateau, b * per_token)} for b in (1, 2, 4, 8, 64, 4096, 8192, 16384)]
    return pts


def test_knee_of_a_synthetic_roofline():
    k = knee(_synthetic())
    assert k.tokens == pytest.approx(1000)
    with pytest.raises(ProbeDataError):
        knee(_synthetic()[:3])


def test_probe_files_round_trip_through_the_ledger(tmp_path):
    result = json.loads((Path("/work/shared/measurements/h100-sxm-2026-11-23.json")).read_text()) \
        if Path("/work/shared/measurements/h100-sxm-2026-11-23.json").exists() else None
    if result is None:
        result = {"device": "test", "matmul_flops_per_s": 5e14, "read_bytes_per_s": 2e12,
                  "dense_knee": {"K": 8, "N": 8, "points": _synthetic()},
                  "moe_knee": [{"experts": 8, "top_k": 2, "points": _synthetic(4e-3)}],
                  "decode_model": {"layers": 2, "kv_heads": 1, "head_dim": 8, "params_read_per_step": 10**9},
                  "decode": [{"batch": 1, "context": 16, "seconds": 0.01},
                             {"batch": 2, "context": 16, "seconds": 0.02}]}
    presets = tmp_path / "presets"
    paths = write_files(result, hardware="h100-sxm", date="2030-01-01", source="test", out=presets)
    assert all(p.exists() for p in paths)
    assert "[values.flops]" in measurement_toml(result, hardware="h100-sxm", date="d", source="s")
    assert "[[entry]]" in ledger_toml(result, hardware="h100-sxm", date="d", source="s")
    shutil.rmtree(presets / "ledger")  # keep the seeded ledger's ids unique; test the ledger file alone below
    lib2 = load_library(["lecture"])
    lib2.preset_dirs.insert(0, presets)
    scen = build_scenario(lib2, hardware="h100-sxm", measured=True)  # the newest file wins
    assert float(scen.value("flops")) == pytest.approx(result["matmul_flops_per_s"], rel=1e-9)
    with pytest.raises(ProbeDataError):
        measurement_toml({}, hardware="x", date="d", source="s")


def test_probe_cpu_tiny(tmp_path, capsys):
    pytest.importorskip("torch")
    from derive.probe.__main__ import main as probe_main

    out = tmp_path / "presets"
    assert probe_main(["--hardware", "h100-sxm", "--tiny", "--device", "cpu", "--out", str(out),
                       "--date", "2031-01-01"]) == 0
    assert "achieved dense FLOP/s" in capsys.readouterr().out
    lib2 = load_library(["lecture"])
    lib2.preset_dirs.insert(0, out)
    assert build_scenario(lib2, hardware="h100-sxm", measured=True).ceilings[0].as_of == "2031-01-01"
    rows = [r for r in build_ledger(lib2, hardware=["h100-sxm"]).rows if r.entry.file.endswith("2031-01-01.toml")]
    assert rows and all(r.status != "contradiction" for r in rows)  # a CPU is slower than an H100's floors


def test_probe_sections_pick_what_is_measured(tmp_path, capsys):
    """``--sections`` measures only the sections named; a name that is no section is one error line, exit 2,
    before anything is measured or written."""
    pytest.importorskip("torch")
    from derive.probe.__main__ import main as probe_main

    saved, out = tmp_path / "run.json", tmp_path / "presets"
    assert probe_main(["--hardware", "h100-sxm", "--tiny", "--device", "cpu", "--sections", "knees,bogus",
                       "--out", str(out), "--save-json", str(saved)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'bogus'" in err and "layer_rates" in err
    assert not saved.exists() and not out.exists()
    assert probe_main(["--hardware", "h100-sxm", "--tiny", "--device", "cpu", "--sections",
                       "ceilings, knees, layer_rates, read_sizes", "--out", str(out), "--save-json", str(saved)]) == 0
    result = json.loads(saved.read_text())
    assert {"dense_knee", "moe_knee", "layer_rates", "read_sizes"} <= set(result)
    assert not {"shape_rates", "decode", "prefill"} & set(result)
    assert "from the layer rates" in capsys.readouterr().out


def test_probe_without_torch_fails_cleanly(monkeypatch, capsys):
    import builtins

    from derive.probe.__main__ import main as probe_main

    real_import = builtins.__import__

    def no_torch(name, *args, **kwargs):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("No module named 'torch'")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(__import__("sys").modules, "derive.probe.bench", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_torch)
    assert probe_main(["--hardware", "h100-sxm", "--tiny"]) == 2
    assert "pip install" in capsys.readouterr().err


def test_probe_from_json_and_bad_json(tmp_path, capsys):
    from derive.probe.__main__ import main as probe_main

    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert probe_main(["--hardware", "h100-sxm", "--from-json", str(bad), "--out", str(tmp_path)]) == 2
    partial = tmp_path / "partial.json"
    partial.write_text('{"read_bytes_per_s": 1e12}')
    assert probe_main(["--hardware", "h100-sxm", "--from-json", str(partial), "--out", str(tmp_path)]) == 2
    assert "matmul_flops_per_s" in capsys.readouterr().err


def test_draw_ledger_figures_is_deterministic(tmp_path, lib):
    from derive.documents.measured import draw_ledger_figures, measured_section

    ledger = build_ledger(lib, hardware=["h100-sxm"])
    first = draw_ledger_figures(lib, ledger, tmp_path / "a", formats=("svg",))
    second = draw_ledger_figures(lib, ledger, tmp_path / "b", formats=("svg",))
    assert len(first) == 9 and [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    section = measured_section(lib)
    assert section.title == "Measured against derived" and section.rows and not section.contradictions
    assert any(r.ratio_achieved for r in section.rows)


def test_probe_output_is_a_data_only_library(tmp_path, capsys, monkeypatch):
    from derive.probe.__main__ import main as probe_main

    result = {"device": "test", "matmul_flops_per_s": 5e14, "read_bytes_per_s": 1e12,
              "dense_knee": {"K": 8, "N": 8, "points": _synthetic()}}
    saved = tmp_path / "r.json"
    saved.write_text(json.dumps(result))
    monkeypatch.chdir(tmp_path)
    assert probe_main(["--hardware", "tpu-v4", "--from-json", str(saved), "--date", "2030-01-01"]) == 0
    capsys.readouterr()
    assert main(["eval", "critical_intensity", "--hardware", "tpu-v4", "--measured", "--json", "--no-cache",
                 "--library", "lecture", "--library", "probe-out"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == pytest.approx(500)
    # 500 TFLOP/s is above the TPU v4's 275 TFLOP/s peak: a contradiction, and the exit code says so
    assert main(["ledger", "--json", "--hardware", "tpu-v4", "--library", "lecture", "--library", "probe-out"]) == 1
    rows = {e["id"]: e for e in json.loads(capsys.readouterr().out)["entries"]}
    assert "tpu-v4-probe-2030-01-01/dense-knee" in rows
    flops = rows["tpu-v4/probe-2030-01-01/flops"]
    assert flops["status"] == "contradiction" and flops["contradicts"] == ["gap.peak_flops_is_ceiling"]
    assert rows["tpu-v4/probe-2030-01-01/hbm_bandwidth"]["status"] == "below ceiling"


def test_two_runs_of_one_day_are_each_held_to_their_own_ceilings(lib):
    """Two H200 probe runs of 2026-11-27: each run's knees and steps read the ceilings its own measurement
    file gives (the ledger file names the run), not the other run's of the same date."""
    rows = {r.entry.id: r for r in build_ledger(lib, hardware=["h200"]).rows}
    for run in ("probe-2026-11-27", "probe-2026-11-27-shapes"):
        flops = rows[f"h200/{run}/flops"].entry.value
        hbm = rows[f"h200/{run}/hbm_bandwidth"].entry.value
        knee_row = rows[f"h200-{run}/dense-knee"]
        assert knee_row.bound_achieved == flops / (2 * hbm / 2)
    assert rows["h200/probe-2026-11-27/flops"].entry.value != rows["h200/probe-2026-11-27-shapes/flops"].entry.value
