"""The speed-of-light predictor: derive.predict and `derive export --format floors-json` give the library's proved
floor on a decode step, split into its declared terms, exactly as `derive eval` computes them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import derive
from derive.errors import LibraryError
from derive.model.loader import load_library
from tests.libtools import one_error_line, run_cli

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "predict" / "floors.py"
# a dense model and two mixtures of experts (one with a shared expert), each on a chip it is served on
CASES = [("h100-sxm", "llama3-70b", "8 seq", "8192 token/seq"), ("b200", "deepseek-v3", "64 seq", "32k token/seq"),
         ("h200", "mixtral-8x7b", "1 seq", "1 token/seq")]


def _tpot_bound(library) -> dict:
    return next(b for b in library.audit_bounds if b["metric"] == library.predict_metric and "claim" in b)


def _eval_json(capsys, hardware, model, sets, name) -> dict:
    argv = ["eval", name, "--hardware", hardware, "--model", model, "--json"]
    for s in sets:
        argv += ["--set", s]
    code, out, err = run_cli(capsys, argv)
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("hardware,model,batch,context", CASES)
def test_floor_and_terms_agree_exactly_with_derive_eval(hardware, model, batch, context, capsys):
    floors = derive.predict(hardware=hardware, model=model, batch=batch, context=context)
    (point,) = floors.points
    sets = [f"batch={batch}", f"context={context}"]
    assert point.floor.exact is not None
    assert str(point.floor.exact) == _eval_json(capsys, hardware, model, sets, floors.quantity)["exact"]
    for label, text in _tpot_bound(derive.load())["terms"].items():
        assert str(point.terms[label].exact) == _eval_json(capsys, hardware, model, sets, text)["exact"], label
    assert point.inputs["batch"].display == batch.replace("8192", "8,192")
    assert str(point.inputs["context"].exact) == _eval_json(capsys, hardware, model, sets, "context")["exact"]


@pytest.mark.parametrize("hardware,model,batch,context", CASES)
def test_the_lecture_floor_is_the_larger_of_compute_and_the_bytes_terms(hardware, model, batch, context):
    """The lecture's step_time_floor: max(compute, weights + KV + embedding rows); a term never exceeds the floor."""
    (point,) = derive.predict(hardware=hardware, model=model, batch=batch, context=context).points
    t = {k: v.exact for k, v in point.terms.items()}
    assert point.floor.exact == max(t["compute"], t["weights"] + t["KV"] + t["embedding rows"])
    assert all(v <= point.floor.exact for v in t.values())


@settings(max_examples=15, deadline=None)
@given(batch=st.integers(1, 4096), context=st.integers(1, 10**6), model=st.sampled_from(["llama3-8b", "kimi-k2"]))
def test_the_floor_never_falls_as_batch_or_context_grows(batch, context, model):
    floors = derive.predict(hardware="b200", model=model, batch=[f"{batch} seq", f"{batch + 1} seq"],
                            context=[f"{context} token/seq", f"{2 * context} token/seq"])
    (b_c, b_2c, b1_c, b1_2c) = (p.floor.exact for p in floors.points)
    assert b_c <= b_2c and b_c <= b1_c and b1_c <= b1_2c and b_2c <= b1_2c


def test_the_floor_rests_on_a_proved_claim_declared_by_the_library():
    floors = derive.predict(hardware="h100-sxm", model="llama3-70b")
    library = derive.load()
    assert floors.claim == _tpot_bound(library)["claim"] == "gap.roofline_floor_below_measured"
    assert floors.verdict == "proved" and floors.lower_bound
    assert floors.quantity == "step_time_floor" and floors.points[0].floor.unit == "s"
    assert list(floors.points[0].terms) == list(_tpot_bound(library)["terms"])
    assert set(floors.rests_on) >= {"gap.step_does_its_flops", "gap.step_reads_its_bytes"}


def test_a_list_of_batches_gives_one_point_each_equal_to_its_single_call():
    batches = ["1 seq", "16 seq", "256 seq"]
    many = derive.predict(hardware="h100-sxm", model="llama3-8b", batch=batches,
                          context=["1k token/seq", "8k token/seq"])
    assert len(many.points) == 6
    for i, b in enumerate(batches):
        one = derive.predict(hardware="h100-sxm", model="llama3-8b", batch=b, context="8k token/seq").points[0]
        assert many.points[2 * i + 1].floor.exact == one.floor.exact
    floors = [p.floor.exact for p in many.points[1::2]]
    assert floors == sorted(floors) and floors[0] < floors[-1]  # the floor never falls as the batch grows


def test_floors_json_is_the_api_result_at_the_same_scenario(capsys):
    code, out, err = run_cli(capsys, ["export", "--format", "floors-json", "--hardware", "b200", "--model",
                                      "deepseek-v3", "--set", "batch=64 seq"])
    assert code == 0, err
    got = json.loads(out)
    want = derive.predict(hardware="b200", model="deepseek-v3", set={"batch": "64 seq"}).to_json()
    assert got == want
    assert got["schema"] == "derive.floors/1" and got["claim"]["lower_bound"] is True
    assert list(got["points"][0]) == ["scenario", "inputs", "floor", "terms", "infeasible"]


def test_an_infeasible_scenario_keeps_its_floor_and_says_why():
    (point,) = derive.predict(hardware="h100-sxm", model="llama3-405b", set={"chips": "1"}).points
    assert point.floor.exact is not None and point.infeasible
    assert "memory_fits_in_hbm" in point.infeasible[0]


def test_floors_json_is_byte_identical_across_hash_seeds():
    argv = [sys.executable, "-m", "derive", "export", "--format", "floors-json", "--hardware", "h200", "--model",
            "mixtral-8x7b", "--set", "batch=32 seq"]
    outs = set()
    for seed in ("0", "1", "12345"):
        run = subprocess.run(argv, capture_output=True, env={**os.environ, "PYTHONHASHSEED": seed}, check=True)
        outs.add(run.stdout)
    assert len(outs) == 1 and json.loads(outs.pop())["points"]


@pytest.mark.parametrize("argv", [
    ["export", "--format", "floors-json", "step_time_floor"],  # ids: the library names its floor
    ["export", "--format", "floors-json", "--hardware", "h1000"],
    ["export", "--format", "floors-json", "--model", "no-such-model"],
    ["export", "--format", "floors-json", "--set", "batch=64"],  # a bare number for a quantity with a unit
    ["export", "--format", "latex"],  # the other formats still need ids
], ids=["ids", "hardware", "model", "bare-number", "no-ids"])
def test_bad_input_is_one_line_and_exit_2(argv, capsys):
    code, out, err = run_cli(capsys, argv)
    one_error_line(code, err)
    assert out == ""


def test_scenario_and_batch_together_are_refused():
    from derive.errors import DeriveError

    with pytest.raises(DeriveError, match="not with scenario="):
        derive.predict(scenario=derive.scenario(hardware="h100-sxm"), batch="1 seq")


PLANTED = ("from derive import Claim, Quantity, logic, derived\n"
           "t_meas = Quantity('t_meas', 't_m', 's', 'a measured time')\n"
           "t_floor = Quantity('t_floor', 't_f', 's', 'a time with no proof behind it')\n"
           "floor = Claim('mylib.floor', title='An unproved floor', statement='Measured is at least the floor.',\n"
           "              source=derived('nothing'), goal=logic.ge(t_meas.sym, t_floor.sym), expected='refuted')\n"
           "AUDIT_BOUNDS = [{'metric': 'latency', 'unit': 's', 'claim': 'mylib.floor', 'measured': 'latency',\n"
           "                 'terms': {'all': 't_floor'}}]\n"
           "PREDICT_METRIC = 'latency'\n")


def test_a_floor_whose_claim_is_not_proved_is_never_called_a_lower_bound(tmp_path):
    lib = tmp_path / "mylib.py"
    lib.write_text(PLANTED)
    floors = derive.predict(library=load_library([str(lib)]), set={'t_floor': '5 ms'})
    assert floors.verdict != "proved" and not floors.lower_bound
    assert floors.points[0].floor.exact == Fraction(1, 200)


@pytest.mark.parametrize("text,words", [
    ("PREDICT_METRIC = 3", "must be a metric name"),
    ("PREDICT_METRIC = 'ttft'", "no AUDIT_BOUNDS metric declared with a claim and terms"),
    ("PREDICT_METRIC = 'nope'", "no AUDIT_BOUNDS metric"),
])
def test_a_malformed_predict_metric_is_a_library_error(text, words, tmp_path):
    lib = tmp_path / "decl.py"
    lib.write_text("from theorems import AUDIT_BOUNDS  # noqa: F401\n" + text + "\n")
    with pytest.raises(LibraryError, match=words):
        load_library(["lecture", str(lib)])


def test_the_example_prints_a_floor_per_batch_and_refuses_a_bad_preset():
    run = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, check=True)
    lines = run.stdout.splitlines()
    assert lines[0].startswith("decode-step floor, llama3-70b on h100-sxm") and len(lines) == 5
    floors = derive.predict(hardware="h100-sxm", model="llama3-70b", batch="64 seq", context="8192 token/seq")
    ms = float(Fraction(str(floors.points[0].floor.exact))) * 1e3
    assert f"{ms:8.3f} ms" in lines[3]
    bad = subprocess.run([sys.executable, str(EXAMPLE), "h1000"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "h1000" in bad.stderr
