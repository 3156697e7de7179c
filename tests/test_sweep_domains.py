"""A sweep reads a definition's domain as ``derive eval`` does: a point outside the domain of a definition a
target expands through leaves the target without a value there (an empty CSV field, with a note naming the
definition, its condition and how many points), never a number; a derived quantity whose value breaks its
declared domain or integrality keeps its value, as eval prints it, with a note counting the points."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive import Claim, Definition, Quantity, derived, logic
from derive.model.evaluate import evaluate
from derive.model.scenario import Scenario, ScenarioValue
from derive.whatif.sweep import parse_axis, resolve_target, sweep_grid
from tests.libtools import make_library, run_cli

SRC = derived("sweep domains")
R = sp.Rational


def Q(name, domain="positive", **kw):  # noqa: N802 - reads like the constructor it wraps
    return Quantity(name, name, "1", name, domain=domain, **kw)


a, b = Q("a"), Q("b")
cb = Q("cb")
cb_def = Definition("t.cb", title="cb", statement="s", source=SRC, defines=cb, expr=1 / (b.sym - a.sym),
                    domain=logic.lt(a.sym, b.sym))
twice = Q("twice")  # uses cb: outside cb's domain it has no value either
twice_def = Definition("t.twice", title="twice", statement="s", source=SRC, defines=twice, expr=2 * cb.sym)
d = Q("d")  # declared positive, defined as a difference: a declaration read, never assumed
d_def = Definition("t.d", title="d", statement="s", source=SRC, defines=d, expr=a.sym - b.sym)
half = Q("half", domain="nonnegative", integer=True)
half_def = Definition("t.half", title="half", statement="s", source=SRC, defines=half, expr=a.sym / 2)
cb_pos = Claim("t.cb_pos", title="cb_pos", statement="s", source=SRC, goal=logic.gt(cb.sym, 0), instance=True)
LIB = make_library(a, b, cb, twice, d, half, cb_def, twice_def, d_def, half_def, cb_pos)


def scenario(values):
    return Scenario("s", {n: ScenarioValue(n, R(v), "test", origin="--set") for n, v in values.items()})


def sweep(targets, axis, values):
    return sweep_grid(LIB, scenario(values), [resolve_target(LIB, t) for t in targets], [parse_axis(LIB, axis)])


def column(result, header):
    return result.data[result.columns.index(header)]


@pytest.mark.parametrize("target", ["cb", "twice", "cb + 1", "t.cb_pos"])
def test_a_target_through_a_definition_is_empty_outside_its_domain(target):
    result = sweep([target], "a=1:4:4", {"b": 2})  # a = 1 (inside), 2, 3, 4 (outside: a >= b)
    values = result.data[-1]
    assert not np.isnan(values[0])
    assert np.isnan(values[1:]).all()
    assert ",," not in result.to_csv().splitlines()[1] and result.to_csv().splitlines()[2].endswith(",")
    note = next(n for n in result.notes if "outside the domain" in n)
    assert note.startswith("3 of 4 points are outside the domain of cb")
    assert "cb is defined only where a < b, definition t.cb" in note and target in note


def test_a_twin_inside_the_domain_everywhere_has_every_value_and_no_note():
    result = sweep(["cb", "twice"], "a=1:1.5:6", {"b": 2})
    assert not np.isnan(column(result, "cb [1]")).any() and not np.isnan(column(result, "twice [1]")).any()
    assert not any("domain" in n for n in result.notes)
    assert column(result, "cb [1]")[0] == pytest.approx(1.0)


def test_a_broken_declaration_keeps_the_value_and_is_counted():
    result = sweep(["d", "half"], "a=1:4:4", {"b": 2})  # d = -1, 0, 1, 2; half = 0.5, 1, 1.5, 2
    assert list(column(result, "d [1]")) == [-1, 0, 1, 2]
    assert list(column(result, "half [1]")) == [0.5, 1, 1.5, 2]
    assert "2 of 4 points give d a value that is not positive, as it is declared (definition t.d)" in " ".join(
        result.notes)
    assert "2 of 4 points give half a value that is not non-negative and an integer" in " ".join(result.notes)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(2, 9))
def test_sweep_agrees_with_eval_at_every_point(lo, b_value, n):
    """Point by point: empty exactly where eval says undefined, else eval's value."""
    hi = lo + n
    result = sweep(["twice"], f"a={lo}:{hi}:{n + 1}", {"b": b_value})
    for a_value, swept in zip(column(result, "a [1]"), column(result, "twice [1]"), strict=True):
        ev = evaluate(LIB, scenario({"a": int(a_value), "b": b_value}), "twice")
        if ev.exact is None:
            assert np.isnan(swept) and "t.cb" in ev.reason
        else:
            assert swept == pytest.approx(float(ev.exact), rel=1e-12)


def test_a_preset_sweep_leaves_pairs_outside_the_domain_empty_as_eval_does(capsys, tmp_path):
    """The lecture's KV-corrected critical batch is defined only below the critical context: every preset pair
    at the model's own context is past it, so eval says undefined and the sweep leaves the field empty."""
    out = tmp_path / "p.csv"
    code, stdout, _ = run_cli(capsys, ["sweep", "--presets", "critical_batch_kv", "critical_batch",
                                       "--out", str(out)])
    assert code == 0
    rows = out.read_text().splitlines()[1:]
    assert rows and all(r.split(",")[2] == "" for r in rows)  # critical_batch_kv
    assert all(r.split(",")[3] != "" for r in rows)  # critical_batch, which has no domain
    assert "pairs are outside the domain of critical_batch_kv" in stdout
    assert "definition batching.critical_batch_kv" in stdout


def test_a_grid_sweep_of_the_lecture_below_and_past_the_critical_context(capsys):
    code, stdout, stderr = run_cli(capsys, ["sweep", "critical_batch_kv", "--vary", "context=1000:100000:3",
                                            "--hardware", "h100-sxm", "--model", "llama3-70b"])
    assert code == 0
    lines = stdout.splitlines()
    fields = [line.split(",")[1] for line in lines[1:4]]
    assert fields[0] != "" and float(fields[0]) > 0  # 1,000 tokens: below the critical context
    assert fields[1:] == ["", ""]
    assert "2 of 3 points are outside the domain of critical_batch_kv" in stderr  # notes beside the CSV
