"""derive.probe without torch: the new sections (prefill, fused decode, shape rates) in the saved result, the
files and the report made of them, knees predicted from per-shape rates, and old results analysed as before."""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.probe.__main__ import main as probe_main
from derive.probe.analysis import (
    KNEE_SLOPE_POINTS,
    ProbeDataError,
    knee,
    ledger_toml,
    measurement_toml,
    prefill_ledger_toml,
    save_result,
    write_files,
)
from derive.probe.floors import evaluate
from derive.probe.report import report
from derive.probe.shapes import (
    NO_SHAPE_RATES,
    LayerShape,
    crossing,
    layer_knees,
    plateau_from_read_sizes,
    predict_knee,
    predict_knee_asymptotes,
    read_fit,
    read_size_table,
)

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = sorted((ROOT / "theorems" / "presets" / "measurements").glob("*/probe-*.json"))
SHARED = Path("/work/shared/measurements")
# sha256 of ledger_toml / measurement_toml (hardware h200, date 2026-11-27, source "s") of the shared results,
# made by the probe before it gained prefill, fused decode and shape rates: old files analyse identically (the
# ledger text adds only the scope lines, software/version/level; without them it hashes as before)
SHARED_DIGESTS = {
    "h100-sxm-2026-11-23.json": ("3bfc6dc07acef81e0295e692409645641c36f3c2d6501958bd577d853cee9c8a",
                                 "0fa47a6e5a327e25df74c3fa076b971d7884dcbff3131b0d2306f1c0b1995c73"),
    "h200-2026-11-27.json": ("e5d56b93c9259b0c5c05af19ad35a6fb6943c91a9e2fa63165f01cfb834d58d3",
                             "775bb7b240723304606f11846be3bc807f9e32a5aad394786fb5cd8c3802dc20"),
}
H200_RAW = ROOT / "theorems" / "presets" / "measurements" / "h200" / "probe-2026-11-25.json"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "probe"
# every real run with shape rates at eight tiles per SM and no read sizes: two committed (one per chip) and
# four more of the same day (SOURCES.md)
WITH_SHAPE_RATES = [*(p for p in COMMITTED if "shape_rates" in json.loads(p.read_text())),
                    *sorted(FIXTURES.glob("*-2026-11-27-shapes-run-*.json")),
                    FIXTURES / "h100-sxm-2026-11-27-run-2.json"]
# runs with read sizes and shape rates at 128 tiles per SM: four on H200s, two on an H100 (SOURCES.md)
WITH_READ_SIZES = sorted(FIXTURES.glob("*-2026-11-27-sizes-run-*.json"))
# runs with layer rates and every streamed weight at four placements: the knees and their read sizes timed in
# separate sections (six) or in turn, layer by layer (four: "interleaved"; SOURCES.md)
WITH_LAYER_RATES = sorted([*FIXTURES.glob("*-2026-11-27-placed-run-*.json"),
                           *FIXTURES.glob("*-2026-11-27-interleaved-run-*.json")])
INTERLEAVED = sorted(FIXTURES.glob("*-2026-11-27-interleaved-run-*.json"))


def _old() -> dict:
    return json.loads(H200_RAW.read_text())


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# Old results -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(SHARED_DIGESTS))
def test_shared_results_make_the_files_they_made_before(name):
    path = SHARED / name
    if not path.exists():
        pytest.skip("the shared measurements are not on this machine")
    result = json.loads(path.read_text())
    made = (ledger_toml(result, hardware="h200", date="2026-11-27", source="s"),
            measurement_toml(result, hardware="h200", date="2026-11-27", source="s"))
    assert tuple(_sha(t) for t in made) == SHARED_DIGESTS[name]
    assert prefill_ledger_toml(result, hardware="h200", date="2026-11-27", source="s") is None


OLD_COMMITTED = [p for p in COMMITTED if "shape_rates" not in json.loads(p.read_text())]


@pytest.mark.parametrize("raw", OLD_COMMITTED, ids=[f"{p.parent.name}/{p.name}" for p in OLD_COMMITTED])
def test_old_results_say_they_have_no_shape_rates(raw):
    """No rate is made up for a result measured before shape_rates: every knee says so, none is predicted."""
    knees = layer_knees(json.loads(raw.read_text()))
    assert len(knees) == 4
    assert all(k.prediction.tokens is None and k.prediction.reason == NO_SHAPE_RATES for k in knees)
    assert all(k.asymptotes.tokens is None and k.asymptotes.reason == NO_SHAPE_RATES for k in knees)


def test_old_result_report_names_the_missing_rates_and_only_decode_floors(capsys, tmp_path):
    saved = tmp_path / "old.json"
    saved.write_text(H200_RAW.read_text())
    assert probe_main(["--hardware", "h200", "--from-json", str(saved), "--out", str(tmp_path / "out"),
                       "--date", "2026-11-25"]) == 0
    out = capsys.readouterr().out
    assert out.count("none: " + NO_SHAPE_RATES) == 4
    assert "TPOT, unfused attention" in out and "TTFT" not in out and "fused attention (decode_sdpa)" not in out
    assert not (tmp_path / "out" / "ledger" / "h200-probe-2026-11-25-prefill.toml").exists()


# A result with every section: prefill, fused decode, shape rates --------------------------------------------
def _with_new_sections(ttft_scale: float, rate_share: float = 0.8) -> dict:
    """The committed H200 result plus synthetic new sections: prefill passes timed at ``ttft_scale`` times
    their floor at the peaks, fused decode steps 10 % faster than the unfused ones, and every product shape at
    ``rate_share`` of the 8192-cube rate."""
    r = _old()
    model = r["decode_model"]
    model["params_layers"] = model["params_read_per_step"] - model["d"] * model["vocab"]
    for moe in r["moe_knee"]:
        moe["K"], moe["N"] = 4096, 14336
    r["decode_sdpa"] = [{**p, "seconds": 0.9 * p["seconds"]} for p in r["decode"]]
    rate = rate_share * r["matmul_flops_per_s"]
    shapes = {(p["batch"], 8192, 28672) for p in r["dense_knee"]["points"]}
    shapes |= {(p["tokens_per_expert"], 4096, 14336) for m in r["moe_knee"] for p in m["points"]}
    r["shape_rates"] = [{"rows": a, "K": k, "N": n, "block_columns": 768, "group": 1, "seconds": 1.0,
                         "flops_per_s": rate, "weight_copied": False} for a, k, n in sorted(shapes)]
    r["prefill"] = [{"batch": b, "tokens": ell, "seconds": 1.0} for b, ell in ((1, 128), (1, 8192), (8, 4096))]
    floors = {row.entry.id.rpartition("/")[2]: row.bound
              for row in evaluate(r, hardware="h200", date="2026-11-25", source="s") if "prefill" in row.entry.id}
    for p in r["prefill"]:
        p["seconds"] = ttft_scale * float(floors[f"prefill-b{p['batch']}-l{p['tokens']}"])
    return r


@pytest.fixture(scope="module")
def full():
    return _with_new_sections(1.5)


def test_prefill_passes_are_held_to_the_ttft_floor_with_causal_attention(full):
    rows = {r.entry.id.rpartition("/")[2]: r for r in evaluate(full, hardware="h200", date="2026-11-25", source="s")}
    prefill = {i: r for i, r in rows.items() if i.startswith("prefill-")}
    assert set(prefill) == {"prefill-b1-l128", "prefill-b1-l8192", "prefill-b8-l4096"}
    assert all(r.status == "above floor" and r.kind == "floor" and r.entry.check == "prefill.ttft_floor"
               for r in prefill.values())
    # the floor at B = 8, L = 4096 by hand: the larger of the FLOPs (causal attention included) at 989 TFLOP/s
    # and the weights plus the new tokens' KV at 4.8 TB/s
    m = full["decode_model"]
    n, a = m["params_layers"], m["layers"] * m["heads"] * m["head_dim"]
    flops = 8 * (2 * n * 4096 + 4 * a * 4096 * 4097 / 2)
    read = n * 2 + 8 * 4096 * 2 * m["layers"] * m["kv_heads"] * m["head_dim"] * 2
    assert float(prefill["prefill-b8-l4096"].bound) == pytest.approx(max(flops / 989e12, read / 4.8e12), rel=1e-12)
    assert prefill["prefill-b8-l4096"].bound_achieved > prefill["prefill-b8-l4096"].bound  # achieved < peak
    sdpa = [r for i, r in rows.items() if i.startswith("decode-sdpa-")]
    assert len(sdpa) == len(full["decode"]) and all(r.status == "above floor" for r in sdpa)


def test_a_prefill_below_its_floor_is_reported_never_hidden(tmp_path, capsys):
    """Planted false twin: prefill passes timed at half their floor are contradictions, printed and exit 1."""
    twin = _with_new_sections(0.5)
    rows = evaluate(twin, hardware="h200", date="2026-11-25", source="s")
    assert {r.entry.id.rpartition("/")[2] for r in rows if r.status == "contradiction"} == {
        "prefill-b1-l128", "prefill-b1-l8192", "prefill-b8-l4096"}
    saved = tmp_path / "twin.json"
    saved.write_text(json.dumps(twin))
    assert probe_main(["--hardware", "h200", "--from-json", str(saved), "--out", str(tmp_path / "out"),
                       "--date", "2026-11-25"]) == 1
    out = capsys.readouterr().out
    assert out.count("contradiction: prefill-") == 3 and "CONTRADICTION" in out


def test_report_of_a_full_result(full, tmp_path, capsys):
    saved = tmp_path / "full.json"
    saved.write_text(json.dumps(full))
    assert probe_main(["--hardware", "h200", "--from-json", str(saved), "--out", str(tmp_path / "out"),
                       "--date", "2026-11-25"]) == 0
    out = capsys.readouterr().out
    for title in ("TPOT, fused attention (decode_sdpa)", "TPOT, unfused attention (decode)",
                  "TTFT, prefill pass (prefill)", "lecture R x S at the 8192-cube rate"):
        assert title in out
    assert "none:" not in out and "contradiction" not in out
    written = sorted(p.name for p in (tmp_path / "out").rglob("*.toml"))
    assert written == ["h200-probe-2026-11-25-prefill.toml", "h200-probe-2026-11-25.toml", "probe-2026-11-25.toml"]


def test_the_prefill_ledger_file_reads_with_the_serving_library(full, tmp_path, capsys):
    from derive.cli import main

    write_files(full, hardware="h200", date="2030-01-01", source="s", out=tmp_path / "lib" / "presets")
    assert main(["ledger", "--json", "--hardware", "h200", "--library", "serving",
                 "--library", str(tmp_path / "lib")]) == 0
    rows = {e["id"]: e for e in json.loads(capsys.readouterr().out)["entries"]}
    row = rows["h200-probe-2030-01-01-prefill/prefill-b1-l8192"]
    assert row["kind"] == "floor" and row["status"] == "above floor" and row["ratio"] == pytest.approx(1.5)


def test_a_run_is_held_to_its_own_ceilings_over_another_file_of_the_same_day(tmp_path):
    from derive.model.loader import load_library

    other = {**_old(), "matmul_flops_per_s": 1e14}
    folder = tmp_path / "measurements" / "h200"
    folder.mkdir(parents=True)
    (folder / "zzz-same-day.toml").write_text(measurement_toml(other, hardware="h200", date="2026-11-25", source="s"))
    lib = load_library(["lecture"])
    lib.preset_dirs.insert(0, tmp_path)
    run = _old()
    rows = {r.entry.id.rpartition("/")[2]: r for r in evaluate(run, hardware="h200", date="2026-11-25", source="s",
                                                               library=lib)}
    r_ach = run["matmul_flops_per_s"] * 2 / (2 * run["read_bytes_per_s"])
    assert float(rows["dense-knee"].bound_achieved) == pytest.approx(r_ach, rel=1e-6)


# Knees from the rates at the shapes that run ---------------------------------------------------------------
def test_knees_predicted_at_a_known_rate(full):
    """Every shape at 0.8 of the 8192-cube rate: each knee is 0.8 x R_ach x S, exactly (rows are B·k/E)."""
    f, w = full["matmul_flops_per_s"], full["read_bytes_per_s"]
    got = {k.entry: k for k in layer_knees(full)}
    expect = {"dense-knee": 1, "moe-knee-e8-k2": 4, "moe-knee-e32-k2": 16, "moe-knee-e64-k4": 16}
    for entry, s in expect.items():
        assert got[entry].prediction.tokens == pytest.approx(0.8 * f * 2 / (2 * w) * s, rel=1e-12)


def test_the_prediction_never_reads_the_knee_timings(full):
    slow = copy.deepcopy(full)
    for p in [*slow["dense_knee"]["points"], *(p for m in slow["moe_knee"] for p in m["points"])]:
        p["seconds"] *= 3
    assert [k.prediction for k in layer_knees(slow)] == [k.prediction for k in layer_knees(full)]
    assert [knee(m["points"]).tokens for m in slow["moe_knee"]] != [knee(m["points"]).tokens for m in full["moe_knee"]]


def test_the_knee_from_the_asymptotes_at_a_known_rate(full):
    """The knee defined as the measured one (plateau over slope) at 0.8 of the 8192-cube rate everywhere is
    0.8 x R_ach x S exactly: the plateau is the weight over the achieved read, the slope the shapes' rate."""
    f, w = full["matmul_flops_per_s"], full["read_bytes_per_s"]
    got = {k.entry: k.asymptotes for k in layer_knees(full)}
    for entry, s in {"dense-knee": 1, "moe-knee-e8-k2": 4, "moe-knee-e32-k2": 16, "moe-knee-e64-k4": 16}.items():
        assert got[entry].tokens == pytest.approx(0.8 * f * 2 / (2 * w) * s, rel=1e-12)
        assert got[entry].tokens == pytest.approx(got[entry].weight_seconds / got[entry].seconds_per_token, rel=1e-15)


def test_the_knee_from_the_asymptotes_never_reads_the_knee_timings(full):
    slow = copy.deepcopy(full)
    for p in [*slow["dense_knee"]["points"], *(p for m in slow["moe_knee"] for p in m["points"])]:
        p["seconds"] *= 3
    assert [k.asymptotes for k in layer_knees(slow)] == [k.asymptotes for k in layer_knees(full)]


def test_the_slope_reads_only_the_largest_batches_rates(full):
    """Shape rates halved at batches the slope does not read leave the knee; halved at two of the three it
    reads (the median of three moves only then) they halve it."""
    base = {k.entry: k.asymptotes.tokens for k in layer_knees(full)}["dense-knee"]
    batches = sorted(p["batch"] for p in full["dense_knee"]["points"])
    for rows, factor in ((batches[:-KNEE_SLOPE_POINTS], 1), (batches[-2:], 0.5)):
        changed = copy.deepcopy(full)
        for rate in changed["shape_rates"]:
            if rate["K"] == 8192 and rate["rows"] in rows:
                rate["flops_per_s"] /= 2
        after = {k.entry: k.asymptotes.tokens for k in layer_knees(changed)}["dense-knee"]
        assert after == pytest.approx(factor * base, rel=1e-12)


@pytest.mark.parametrize("raw", WITH_SHAPE_RATES, ids=[p.name for p in WITH_SHAPE_RATES])
def test_shape_rates_close_the_high_sparsity_knee_gap(raw):
    """Measured on an H100 and an H200 (six runs): at sparsity 16 the lecture's R x S at the 8192-cube rate
    sits 9-28 % above the measured knee; the knee from the rates at the shapes that run is within 7.5 % of
    it and nearer than R x S in every run.  The compute slope from the shape rates is within 11 % of the
    measured one for every layer.  (At sparsity 1 and 4 the prediction runs 3-15 % low: the plateau, the
    knee's weight read, is slower than the sum's bandwidth there; docs/measured.md.)"""
    result = json.loads(raw.read_text())
    f, w = result["matmul_flops_per_s"], result["read_bytes_per_s"]
    assert len(layer_knees(result)) == 4
    for lk in layer_knees(result):
        points = result["dense_knee"]["points"] if lk.entry == "dense-knee" else next(
            m["points"] for m in result["moe_knee"] if f"moe-knee-e{m['experts']}-k{m['top_k']}" == lk.entry)
        measured = knee(points)
        a = lk.asymptotes
        assert a.tokens is not None, a.reason
        assert abs(a.seconds_per_token / measured.seconds_per_token - 1) <= 0.11
        if lk.layer.sparsity == 16:
            lecture = f * 2 / (2 * w) * lk.layer.sparsity
            assert abs(a.tokens / measured.tokens - 1) <= 0.075
            assert abs(a.tokens - measured.tokens) < abs(lecture - measured.tokens)
            assert lecture > 1.08 * measured.tokens


def _measured_knee(result: dict, entry: str):
    points = result["dense_knee"]["points"] if entry == "dense-knee" else next(
        m["points"] for m in result["moe_knee"] if f"moe-knee-e{m['experts']}-k{m['top_k']}" == entry)
    return knee(points)


@pytest.mark.parametrize("raw", WITH_READ_SIZES, ids=[p.name for p in WITH_READ_SIZES])
def test_read_sizes_give_the_plateau_the_sum_bandwidth_misses(raw):
    """Six runs with read sizes (four on H200s, two on an H100): the plateau from each layer's own series of
    read times at other weight sizes is within 10 % of the measured one, and for the dense layer nearer than
    the sum's bandwidth (which puts it 5-22 % low).  Every knee prediction is within 12 %; at sparsity 16 it
    is nearer than the lecture's R x S, which sits 9-30 % high.  (Within 5 %: 11 of the 24 knees;
    docs/measured.md.)"""
    result = json.loads(raw.read_text())
    f, w = result["matmul_flops_per_s"], result["read_bytes_per_s"]
    for lk in layer_knees(result):
        measured, a = _measured_knee(result, lk.entry), lk.asymptotes
        assert a.tokens is not None and a.plateau_from == "read sizes", a.reason
        assert abs(a.weight_seconds / measured.plateau_s - 1) <= 0.10
        assert abs(a.tokens / measured.tokens - 1) <= 0.12
        if lk.layer.sparsity == 1:
            assert abs(a.weight_seconds - measured.plateau_s) < abs(lk.layer.weight_bytes / w - measured.plateau_s)
        if lk.layer.sparsity == 16:
            lecture = f * 2 / (2 * w) * lk.layer.sparsity
            assert abs(a.tokens - measured.tokens) < abs(lecture - measured.tokens)
            assert lecture > 1.09 * measured.tokens


@pytest.mark.parametrize("raw", WITH_LAYER_RATES, ids=[p.name for p in WITH_LAYER_RATES])
def test_layer_rates_put_every_high_sparsity_knee_within_5_percent(raw):
    """Ten runs with layer rates (six on H200s, four on H100s): the compute slope from the products as the
    layer runs them is within 7 % of the measured one for every layer, and at sparsity 16 the knee predicted
    from them is within 5 % of the measured knee, where the lecture's R x S sits 5-28 % above it."""
    result = json.loads(raw.read_text())
    f, w = result["matmul_flops_per_s"], result["read_bytes_per_s"]
    assert len(layer_knees(result)) == 4
    for lk in layer_knees(result):
        measured, a = _measured_knee(result, lk.entry), lk.asymptotes
        assert a.tokens is not None and a.slope_from == "layer rates", a.reason
        assert abs(a.seconds_per_token / measured.seconds_per_token - 1) <= 0.07
        if lk.layer.sparsity == 16:
            lecture = f * 2 / (2 * w) * lk.layer.sparsity
            assert abs(a.tokens / measured.tokens - 1) <= 0.05
            assert lecture > 1.05 * measured.tokens


@pytest.mark.parametrize("raw", INTERLEAVED, ids=[p.name for p in INTERLEAVED])
def test_interleaved_read_sizes_give_the_plateau_within_3_percent(raw):
    """Timed in turn with the knee, each layer's read sizes give its plateau within 3 % of the measured one,
    and every knee prediction is within 7 %."""
    result = json.loads(raw.read_text())
    for lk in layer_knees(result):
        measured, a = _measured_knee(result, lk.entry), lk.asymptotes
        assert a.tokens is not None and a.plateau_from == "read sizes", a.reason
        assert abs(a.weight_seconds / measured.plateau_s - 1) <= 0.03
        assert abs(a.tokens / measured.tokens - 1) <= 0.07


def test_interleaved_runs_put_15_of_16_knees_within_5_percent():
    """Two H200 and two H100 runs of the interleaved probe: 15 of the 16 knees predicted within 5 %; the
    sixteenth (an H100, sparsity 4) 6.7 % low, its layer rates 6.5 % slower than the knee's own large batches
    (docs/measured.md)."""
    off = []
    for raw in INTERLEAVED:
        result = json.loads(raw.read_text())
        for lk in layer_knees(result):
            off.append(abs(lk.asymptotes.tokens / _measured_knee(result, lk.entry).tokens - 1))
    assert len(off) == 16
    assert sum(x <= 0.05 for x in off) == 15 and max(off) < 0.07


def test_a_result_without_layer_rates_takes_the_slope_from_the_shape_rates(full):
    assert {k.asymptotes.slope_from for k in layer_knees(full)} == {"shape rates"}


def test_the_slope_from_layer_rates_never_reads_the_knee_timings():
    result = json.loads(INTERLEAVED[0].read_text())
    slow = copy.deepcopy(result)
    for p in [*slow["dense_knee"]["points"], *(p for m in slow["moe_knee"] for p in m["points"])]:
        p["seconds"] *= 3
        p["seconds_by_placement"] = [t * 3 for t in p["seconds_by_placement"]]
    assert [k.asymptotes for k in layer_knees(slow)] == [k.asymptotes for k in layer_knees(result)]
    faster = copy.deepcopy(result)
    for rate in faster["layer_rates"]:
        rate["flops_per_s"] *= 2
    assert [k.asymptotes.tokens for k in layer_knees(faster)] == pytest.approx(
        [2 * k.asymptotes.tokens for k in layer_knees(result)], rel=1e-12)


def test_a_result_without_read_sizes_takes_the_plateau_from_the_read_bandwidth(full):
    assert {k.asymptotes.plateau_from for k in layer_knees(full)} == {"read bandwidth"}


@settings(max_examples=60, deadline=None)
@given(st.floats(1e-6, 1e-3), st.floats(1e11, 1e13),
       st.lists(st.floats(1e6, 1e10), min_size=2, max_size=6, unique=True))
def test_read_fit_recovers_a_start_up_time_and_a_rate(start, rate, sizes):
    """Times exactly t_0 + bytes / W give back t_0 and W."""
    if max(sizes) < 1.01 * min(sizes):
        return
    t0, got = read_fit([(b, start + b / rate) for b in sizes])
    assert t0 == pytest.approx(start, rel=1e-6, abs=1e-12) and got == pytest.approx(rate, rel=1e-6)


@pytest.mark.parametrize("points", [[(1e9, 1e-3)], [(1e9, 1e-3), (1e9, 2e-3)], [(1e9, 2e-3), (2e9, 1e-3)]])
def test_read_fit_refuses_points_that_give_no_rate(points):
    assert read_fit(points) is None


def test_the_plateau_reads_only_the_layers_own_series():
    """A planted time at the layer's own weight size, or at a size of another layer's series, leaves the
    plateau as it was: only the layer's own series of other sizes fits."""
    layer = LayerShape(8, 2, 4096, 14336, 8 * 4096 * 14336 * 2.0)
    rows = [{"layout": "experts", "rows": r, "K": 4096, "N": 14336, "matrices": m, "columns": 14336,
             "weight_bytes": m * 4096 * 14336 * 2, "seconds": 2e-5 + m * 4096 * 14336 * 2 / 4e12}
            for r in (4, 16, 32, 64) for m in (2, 4, 16, 32)]
    rows += [{**rows[0], "rows": r, "matrices": 3, "weight_bytes": 3 * 4096 * 14336 * 2, "seconds": 1.0}
             for r in (4, 16, 32, 64)]  # three experts: no multiple of this layer's eight in READ_SIZE_FACTORS
    batches = [16, 64, 128, 256, 512, 1024, 2048, 4096]
    base = plateau_from_read_sizes(layer, batches, read_size_table(rows))
    assert base == pytest.approx(2e-5 + layer.weight_bytes / 4e12, rel=1e-9)
    planted = [*rows, *({**rows[0], "rows": r, "matrices": 8, "weight_bytes": layer.weight_bytes, "seconds": 1.0}
                        for r in (4, 16, 32, 64))]
    assert plateau_from_read_sizes(layer, batches, read_size_table(planted)) == base
    missing = [x for x in rows if x["rows"] != 64]
    assert plateau_from_read_sizes(layer, batches, read_size_table(missing)) is None


def test_a_saved_result_is_replaced_whole(tmp_path):
    """save_result writes through a sibling file and renames it: the path holds one whole result, never half
    of one, and nothing is left beside it."""
    path = tmp_path / "run.json"
    save_result({"device": "a", "read_bytes_per_s": 1.0}, path)
    save_result({"device": "b"}, path)
    assert json.loads(path.read_text()) == {"device": "b"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]


def test_a_file_name_that_leaves_the_folder_is_refused(tmp_path, capsys):
    saved = tmp_path / "old.json"
    saved.write_text(H200_RAW.read_text())
    assert probe_main(["--hardware", "h200", "--from-json", str(saved), "--out", str(tmp_path / "out"),
                       "--name", "../escaped"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert not (tmp_path / "out").exists() and not (tmp_path / "escaped.toml").exists()


def test_a_missing_shape_gets_no_prediction(full):
    partial = copy.deepcopy(full)
    partial["shape_rates"] = [s for s in partial["shape_rates"] if s["rows"] != 512 or s["K"] != 4096]
    got = {k.entry: k.prediction for k in layer_knees(partial)}
    assert got["moe-knee-e8-k2"].tokens is None and "512 x 4096 x 14336" in got["moe-knee-e8-k2"].reason
    assert got["dense-knee"].tokens is not None


@settings(max_examples=200, deadline=None)
@given(experts=st.sampled_from([1, 8, 32, 64]), top=st.sampled_from([1, 2, 4]),
       rate=st.floats(1e13, 2e15), bandwidth=st.floats(1e11, 1e13),
       multiples=st.lists(st.integers(1, 4000), min_size=2, max_size=12, unique=True))
def test_constant_rate_knee_is_r_s_exactly(experts, top, rate, bandwidth, multiples):
    """At one rate r for every shape the knee is r·q/(2W) x E/k (q = 2 bytes), whenever it lies within the
    measured batches (multiples of E so that every expert gets B·k/E rows); outside them there is none."""
    top = min(top, experts)
    layer = LayerShape(experts, top, 4096, 14336, experts * 4096 * 14336 * 2)
    batches = sorted(experts * m for m in multiples)
    rates = {(layer.rows(b), 4096, 14336): rate for b in batches}
    expected = rate * 2 / (2 * bandwidth) * experts / top
    p = predict_knee(layer, batches, rates, bandwidth)
    if batches[0] < expected < batches[-1]:
        assert p.tokens == pytest.approx(expected, rel=1e-9)
    elif expected < batches[0] or expected > batches[-1]:
        assert p.tokens is None and p.reason


@settings(max_examples=200, deadline=None)
@given(experts=st.sampled_from([1, 8, 32, 64]), top=st.sampled_from([1, 2, 4]),
       rate=st.floats(1e13, 2e15), bandwidth=st.floats(1e11, 1e13),
       multiples=st.lists(st.integers(1, 4000), min_size=7, max_size=12, unique=True))
def test_constant_rate_asymptote_knee_is_r_s_exactly(experts, top, rate, bandwidth, multiples):
    """At one rate for every shape the knee as plateau over slope is r·q/(2W) x E/k at any batches (the
    crossing prediction needs the knee inside them; this one does not)."""
    top = min(top, experts)
    layer = LayerShape(experts, top, 4096, 14336, experts * 4096 * 14336 * 2)
    batches = sorted(experts * m for m in multiples)
    rates = {(layer.rows(b), 4096, 14336): rate for b in batches}
    p = predict_knee_asymptotes(layer, batches, rates, bandwidth)
    assert p.tokens == pytest.approx(rate * 2 / (2 * bandwidth) * experts / top, rel=1e-9)
    assert predict_knee_asymptotes(layer, batches[:6], rates, bandwidth).tokens is None  # too few batches


@settings(max_examples=200, deadline=None)
@given(experts=st.sampled_from([8, 32, 64]), top=st.sampled_from([2, 4]), peak=st.floats(2e14, 2e15),
       bandwidth=st.floats(1e12, 8e12), slow_rows=st.floats(0, 100))
def test_skinny_products_lower_the_knee_by_their_slowdown(experts, top, peak, bandwidth, slow_rows):
    """Products of r rows at F·r/(r + r0) (slower the skinnier): compute time is 2KN·E·(r + r0)/F, linear in
    B, so the knee is exactly (F/W - r0)·E/k with q = 2 bytes: r0·S below the lecture's R x S."""
    layer = LayerShape(experts, top, 4096, 14336, experts * 4096 * 14336 * 2)
    batches = [experts * m for m in range(1, 2001, 7)]
    rates = {(layer.rows(b), 4096, 14336): peak * layer.rows(b) / (layer.rows(b) + slow_rows) for b in batches}
    expected = (peak / bandwidth - slow_rows) * experts / top
    p = predict_knee(layer, batches, rates, bandwidth)
    if batches[0] < expected < batches[-1]:
        assert p.tokens == pytest.approx(expected, rel=1e-9)
        assert p.tokens <= peak / bandwidth * experts / top * (1 + 1e-9)  # never above R x S at F


@settings(max_examples=200, deadline=None)
@given(pts=st.lists(st.tuples(st.integers(0, 10**4), st.floats(0.0, 1e3)), min_size=1, max_size=10),
       level=st.floats(1e-3, 1e3))
def test_crossing_is_the_first_point_where_the_curve_reaches_the_level(pts, level):
    xs = sorted({x for x, _ in pts})
    curve = [(x, next(y for xx, y in pts if xx == x)) for x in xs]
    x = crossing(curve, level)
    if x is None:
        assert all(y < level for _, y in curve)
        return
    before = [(a, y) for a, y in curve if a < x]
    assert all(y < level for _, y in before)
    if before and x > curve[0][0]:  # on a segment: the interpolated curve is at the level there
        (x0, y0), (x1, y1) = before[-1], next(p for p in curve if p[0] >= x)
        assert y0 + (y1 - y0) * (x - x0) / (x1 - x0) == pytest.approx(level, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("raw", [*COMMITTED, *(SHARED / n for n in sorted(SHARED_DIGESTS))],
                         ids=[*(f"{p.parent.name}/{p.name}" for p in COMMITTED), *sorted(SHARED_DIGESTS)])
def test_every_measured_step_is_at_or_above_its_floor(raw, tmp_path, capsys):
    """The real H100 and H200 results: no floor above a measurement, and the exit code says so."""
    if not raw.exists():
        pytest.skip("the shared measurements are not on this machine")
    hardware = "h200" if "h200" in raw.name or raw.parent.name == "h200" else "h100-sxm"
    assert probe_main(["--hardware", hardware, "--from-json", str(raw), "--out", str(tmp_path)]) == 0
    assert "contradiction" not in capsys.readouterr().out.lower()


# Bad input and the torch-free modules ---------------------------------------------------------------------
def test_prefill_without_its_model_fields_is_one_error(tmp_path, capsys):
    r = _old()
    r["prefill"] = [{"batch": 1, "tokens": 128, "seconds": 0.01}]  # decode_model has no params_layers
    saved = tmp_path / "r.json"
    saved.write_text(json.dumps(r))
    assert probe_main(["--hardware", "h200", "--from-json", str(saved), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "params_layers" in err and not (tmp_path / "out").exists()
    with pytest.raises(ProbeDataError):
        prefill_ledger_toml(r, hardware="h200", date="d", source="s")


def test_unknown_hardware_writes_nothing(tmp_path, capsys):
    saved = tmp_path / "r.json"
    saved.write_text(H200_RAW.read_text())
    assert probe_main(["--hardware", "no-such-chip", "--from-json", str(saved), "--out", str(tmp_path / "out")]) == 2
    assert "no-such-chip" in capsys.readouterr().err and not (tmp_path / "out").exists()


@pytest.mark.parametrize("edit", ["no-seconds", "not-an-object", "batch-as-list"])
def test_a_malformed_saved_result_is_one_error_line(tmp_path, capsys, edit):
    r = _old()
    if edit == "no-seconds":
        del r["decode"][3]["seconds"]
    elif edit == "batch-as-list":
        r["dense_knee"]["points"][0]["batch"] = [1]
    saved = tmp_path / "r.json"
    saved.write_text(json.dumps([r] if edit == "not-an-object" else r))
    assert probe_main(["--hardware", "h200", "--from-json", str(saved), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("derive.probe: error: ") and err.count("\n") == 1 and not (tmp_path / "out").exists()


def test_an_unknown_hardware_is_refused_before_measuring(monkeypatch, capsys):
    """The preset name is checked before minutes of measuring (the bench is never called)."""
    import types

    called = []
    fake = types.ModuleType("derive.probe.bench")
    fake.measure = lambda **kw: called.append(kw)  # type: ignore[attr-defined]
    fake.SECTIONS = ("knees",)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "derive.probe.bench", fake)
    assert probe_main(["--hardware", "h2000", "--tiny"]) == 2
    assert not called and "h200" in capsys.readouterr().err  # did you mean


def test_the_analysis_modules_never_import_torch():
    code = ("import sys, derive.probe.analysis, derive.probe.shapes, derive.probe.floors, derive.probe.report, "
            "derive.probe.__main__; print('torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False"


def test_report_is_lines_without_printing(full, capsys):
    rows = evaluate(full, hardware="h200", date="2026-11-25", source="s")
    lines = report(full, rows)
    assert capsys.readouterr().out == "" and all(isinstance(x, str) and "\n" not in x for x in lines)
    assert any(x.startswith("  TTFT") for x in lines)


def test_a_run_cut_short_keeps_every_section_it_finished(tmp_path):
    """``measure`` hands each partial result to ``saved`` as sections finish: each is a valid result (the knees
    analyse once the rates are in), sections only ever grow, and the last is the whole result.  (Needs torch;
    a tiny CPU run.)"""
    pytest.importorskip("torch")
    from derive.probe.bench import measure

    partials: list[dict] = []
    with open(tmp_path / "log", "w") as log:
        result = measure(tiny=True, device="cpu", log=log, saved=lambda r: partials.append(copy.deepcopy(r)))
    assert len(partials) > 5 and partials[-1] == result
    for before, after in zip(partials, partials[1:], strict=False):
        assert set(before) <= set(after)
    with_rates = next(p for p in partials if "shape_rates" in p)
    assert "decode" not in with_rates
    assert all(k.asymptotes.tokens is not None or k.asymptotes.reason for k in layer_knees(with_rates))
    saved = tmp_path / "run.json"
    save_result(with_rates, saved)
    assert json.loads(saved.read_text()) == json.loads(json.dumps(with_rates))
