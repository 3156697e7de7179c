"""derive sweep: vectorised grids and preset sweeps agree with exact evaluation; the real-check matrix."""

from __future__ import annotations

import random

import numpy as np
import pytest
import sympy as sp
from whatif_fixture import BASE_SETS, load, write_library

from derive.checking.checker import Checker
from derive.cli import main
from derive.kernel.logic import And, Iff, Not, Or, Rel
from derive.model.evaluate import evaluate
from derive.model.scenario import build_scenario
from derive.whatif.margin import margin
from derive.whatif.matrix import check_matrix
from derive.whatif.sweep import (
    numpy_formula,
    parse_axis,
    preset_pairs,
    resolve_target,
    sweep_grid,
    sweep_presets,
)

X, Y = sp.symbols("x y")


def test_numpy_formula_agrees_with_exact_evaluation():
    f = Or((And((Rel(X * Y, ">=", 3), Rel(X, "<", 2))), Not(Rel(sp.Max(X, Y), "<=", 5)),
            Iff(Rel(X, ">", Y), Rel(X / Y, ">", 1))))
    fn = numpy_formula(f, [X, Y])
    rng = random.Random(7)
    pts = [(sp.Rational(rng.randint(1, 80), 8), sp.Rational(rng.randint(1, 80), 8)) for _ in range(200)]
    xs = np.array([float(p[0]) for p in pts])
    ys = np.array([float(p[1]) for p in pts])
    got = fn(xs, ys)
    want = [f.evaluate({X: a, Y: b}) for a, b in pts]
    assert list(got) == want


def test_grid_sweep_matches_exact_evaluation(lecture_library, lecture_scenario):
    lib, scen = lecture_library, lecture_scenario
    axis = parse_axis(lib, "flops=1 PFLOP/s:50 PFLOP/s:7")
    result = sweep_grid(lib, scen, [resolve_target(lib, "critical_batch")], [axis])
    assert result.points == 7 and result.columns[1] == "critical_batch [seq]"
    for flops_si, got in zip(axis.values, result.data[1], strict=True):
        s = build_scenario(lib, sets=[f"flops={sp.nsimplify(flops_si)}"])
        assert got == pytest.approx(float(evaluate(lib, s, "critical_batch").exact), rel=1e-12)


def test_claim_sweep_agrees_with_margin_and_says_not_a_proof(lecture_library, lecture_scenario):
    lib, scen = lecture_library, lecture_scenario
    axis = parse_axis(lib, "experts_active=0.5:12:47")
    result = sweep_grid(lib, scen, [resolve_target(lib, "scaleout_viability")], [axis])
    assert "not a proof" in result.columns[1] and result.notes
    (iv,) = margin(lib, scen, "scaleout_viability", "experts_active", verify=False).intervals
    expected = [float(iv.low) <= v for v in axis.values]
    assert [bool(v) for v in result.data[1]] == expected


def test_csv_is_deterministic(lecture_library, lecture_scenario):
    lib, scen = lecture_library, lecture_scenario
    targets = [resolve_target(lib, t) for t in ("critical_batch", "flops/hbm_bandwidth", "batch_optimum_lecture")]
    axes = [parse_axis(lib, "flops=20 PFLOP/s:30 PFLOP/s:5"), parse_axis(lib, "hbm_bandwidth=10 TB/s:30 TB/s:3:log")]
    one = sweep_grid(lib, scen, targets, axes).to_csv()
    two = sweep_grid(lib, scen, targets, axes).to_csv()
    assert one == two and len(one.splitlines()) == 1 + 15
    assert one.splitlines()[0].startswith("flops [TFLOP/s],hbm_bandwidth [TB/s],critical_batch [seq]")


def test_preset_sweep_covers_every_pair(tmp_path):
    lib = load(tmp_path)
    result = sweep_presets(lib, [resolve_target(lib, "ratio"), resolve_target(lib, "fx.inst_r")])
    assert result.points == 4 == len(preset_pairs(lib))
    rows = dict(zip(zip(result.labels["hardware"], result.labels["model"], strict=True),
                    zip(result.data[2], result.data[3], strict=True), strict=True))
    assert rows[("fast", "m1")] == (5.0, 1.0)  # 10/2 >= 2
    assert rows[("slow", "m2")] == (0.75, 0.0)  # 3/4 < 2


def test_matrix_reuses_verdicts_and_agrees_with_full_checks(tmp_path):
    folder = write_library(tmp_path)
    lib = load(tmp_path)
    rows = check_matrix([str(folder)], sets=["cc=5"], workers=1)
    for r in rows:
        s = build_scenario(lib, hardware=r.hardware, model=r.model, sets=["cc=5"])
        assert r.verdicts == {x.id: x.verdict for x in Checker(lib, s).check().results}
    # fx.inst_r depends on aa (hardware) and bb (model); fx.inst_c on cc only, fixed by --set: never re-checked
    assert sum(r.rechecked for r in rows) == 4
    told: list[tuple[int, int]] = []
    two = check_matrix([str(folder)], sets=["cc=5"], workers=2, cache_dir=str(tmp_path / "cache"),
                       progress=lambda done, total: told.append((done, total)))
    assert [r.verdicts for r in two] == [r.verdicts for r in rows]
    assert told[0] == (0, 4) and told[-1] == (4, 4)  # progress counts pairs as the workers finish


def test_cli_sweep_writes_csv_and_figure(tmp_path, capsys):
    out, fig = tmp_path / "s.csv", tmp_path / "s.png"
    code = main(["sweep", "critical_batch", "scaleout_viability", "--vary", "experts_active=1:16:16",
                 "--out", str(out), "--figure", str(fig), "--json"])
    assert code == 0 and out.exists() and fig.exists()
    assert out.read_text().count("\n") == 17
    assert '"evaluations"' in capsys.readouterr().out
    folder = write_library(tmp_path)
    from derive.cli import terminal

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(terminal, "DELAY", 0.0)  # piped, the stage says how many pairs it checked
        code = main(["sweep", "--presets", "--check", "--library", str(folder), "--set", BASE_SETS[2],
                     "--workers", "1"])
    captured = capsys.readouterr()
    text = captured.out
    assert code == 0 and text.splitlines()[0].startswith("hardware,model,fx.general")
    assert "derive: checking preset pairs: 4 of 4 in " in captured.err


@pytest.mark.parametrize(("target", "header", "first"), [
    ("hbm_bandwidth * 20 ms", "hbm_bandwidth * 20 ms [byte]", "1,400000000000"),  # was [byte/s]
    ("batch/(2 seq)", "batch/(2 seq) [1]", "1,0.5"),  # was [seq]
    ("batch - 50 seq", "batch - 50 seq [seq]", "1,-49"),  # was refused: "-50 is a plain number"
])
def test_a_swept_expression_with_a_number_and_its_unit_keeps_its_dimension(capsys, target, header, first):
    assert main(["sweep", target, "--vary", "batch=1 seq:100 seq:2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"batch [seq],{header},feasible" and lines[1].startswith(first)


def test_a_sweeps_infeasible_note_names_the_bounds_that_fail(capsys):
    # it said "e.g. the memory does not fit" whichever bound failed
    assert main(["sweep", "step_time", "--vary", "context=1k token/seq:10M token/seq:5", "--hardware", "h100-sxm",
                 "--model", "llama3-70b", "--set", "batch=64 seq"]) == 0
    out = capsys.readouterr().err  # the CSV on stdout, its notes on stderr
    assert "4 of 5 points are infeasible" in out
    assert "capacity.memory_fits_in_hbm at 4, capacity.context_within_model at 4" in out


def test_a_sweep_of_a_whole_count_takes_whole_values(capsys):
    # a log grid gave 21.88 seq and 5,623.4 token/seq; an integer quantity (a parallel degree) keeps its grid
    assert main(["sweep", "critical_batch", "--vary", "batch=1 seq:100 seq:4:log"]) == 0
    assert [line.split(",")[0] for line in capsys.readouterr().out.splitlines()[1:]] == ["1", "5", "22", "100"]
    assert main(["sweep", "critical_batch", "--vary", "batch=1 seq:5 seq:20"]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 6 and "the 20 points are 5 whole values" in captured.err
    assert main(["sweep", "critical_batch", "--vary", "batch=0.2 seq:0.8 seq:3"]) == 2
    assert "no whole value lies in the range" in capsys.readouterr().err
