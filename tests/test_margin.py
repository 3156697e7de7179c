"""derive margin: exact intervals, z3-checked boundaries, regions, the robustness table."""

from __future__ import annotations

import json

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from whatif_fixture import BASE_SETS, load

from derive.cli import main
from derive.kernel.logic import And, Iff, Implies, Not, Or, Rel
from derive.kernel.problem import Problem
from derive.kernel.prover import decide
from derive.model.scenario import build_scenario
from derive.whatif.margin import margin, solve_intervals
from derive.whatif.region import region, region_figure
from derive.whatif.robustness import robustness
from derive.whatif.sweep import parse_axis

X = sp.Symbol("x")


@pytest.mark.parametrize(("formula", "domain", "expected"), [
    (Rel(X**2, ">=", 4), "real", "(-inf, -2] ∪ [2, inf)"),
    (Rel(X**2, ">", 4), "positive", "(2, inf)"),
    (Rel(X, "!=", 3), "positive", "(0, 3) ∪ (3, inf)"),
    (Rel(X, "==", 3), "positive", "[3, 3]"),
    (Or((Rel(X, "<=", 1), Rel(X, ">=", 5))), "positive", "(0, 1] ∪ [5, inf)"),
    (Not(Rel(X, "<", 2)), "nonnegative", "[2, inf)"),
    (Rel(sp.sqrt(X), ">=", 3), "positive", "[9, inf)"),
    (Rel(sp.Max(X, 2), "<=", 3), "real", "(-inf, 3]"),
    (Rel(1 / (X - 1), ">", 0), "real", "(1, inf)"),
    (Iff(Rel(X, ">=", 1), Rel(X, ">=", 2)), "real", "(-inf, 1) ∪ [2, inf)"),
    (Implies(Rel(X, ">", 5), Rel(X, ">", 7)), "positive", "(0, 5] ∪ (7, inf)"),
    (Rel(X * sp.Min(X, 10), ">=", 50), "positive", "[5*sqrt(2), inf)"),
    (And((Rel(X, ">=", 0), Rel(X, "<", 0))), "real", ""),
    (Rel(X, ">=", 0), "nonnegative", "[0, inf)"),
])
def test_solve_intervals_exact(formula, domain, expected):
    intervals, _ = solve_intervals(formula, X, domain)
    assert " ∪ ".join(i.text() for i in intervals) == expected


def _z3_holds(m, point):
    hyps = [Rel(m.symbol, "==", point), Rel(m.symbol, ">", 0)]
    return decide(Problem(hyps, m.formula, set(), {}, 10**7, 0)).verdict == "proved"


def test_scaleout_viability_margin_is_the_known_formula(lecture_library, lecture_scenario):
    """scaleout_viability holds iff experts_active >= r/(2*layers_per_stage), r = scale-up/scale-out."""
    lib, scen = lecture_library, lecture_scenario
    m = margin(lib, scen, "scaleout_viability", "experts_active")
    r = scen.value("scaleup_bandwidth") / scen.value("scaleout_bandwidth")
    bound = r / (2 * scen.value("layers_per_stage"))
    assert bound == 4
    assert len(m.intervals) == 1
    (iv,) = m.intervals
    assert iv.low == bound and iv.low_closed and iv.high is None
    data = m.to_json()
    assert data["holds_on"] == [[4.0, None]] and data["exact"] == [["4", None]] and data["unit"] == "1"
    assert data["verified"] is True
    # z3 on both sides of the boundary, independently of the margin's own cross-check
    eps = sp.Rational(1, 10**9)
    assert _z3_holds(m, bound) and _z3_holds(m, bound + eps) and not _z3_holds(m, bound - eps)
    sides = {c.where for c in m.checks}
    assert {"inside", "outside", "at"} <= sides and all(c.agrees for c in m.checks)


def test_scaleout_margin_moves_with_layers_per_stage(lecture_library):
    scen = build_scenario(lecture_library, sets=["layers_per_stage=2"])
    m = margin(lecture_library, scen, "scaleout_viability", "experts_active")
    assert m.to_json()["exact"] == [["2", None]]


def test_batch_optimum_lecture_over_flops(lecture_library, lecture_scenario):
    m = margin(lecture_library, lecture_scenario, "batch_optimum_lecture", "flops", unit="PFLOP/s")
    assert m.to_json()["exact"] == [["594/25", "606/25"]]  # 23.76 .. 24.24 PFLOP/s: critical batch within 1% of 2400
    assert m.holds_at_value and m.verified
    e = margin(lecture_library, lecture_scenario, "batch_optimum_lecture", "flops/hbm_bandwidth")
    assert e.to_json()["exact"] == [["1188", "1212"]] and e.eliminated == "flops"


def test_margin_errors(lecture_library, lecture_scenario):
    from derive.errors import DeriveError

    with pytest.raises(DeriveError):
        margin(lecture_library, lecture_scenario, "hardware_ratio", "flops")  # a definition, not a claim
    with pytest.raises(DeriveError):
        margin(lecture_library, lecture_scenario, "scaleout_viability", "experts_active", unit="GB")


def test_region_and_figure_are_deterministic(lecture_library, lecture_scenario, tmp_path):
    axes = [parse_axis(lecture_library, "experts_active=1:16:31"),
            parse_axis(lecture_library, "layers_per_stage=0.25:4:16")]
    reg = region(lecture_library, lecture_scenario, "scaleout_viability", axes)
    holds = reg.holds
    ea, ls = axes[0].values[:, None], axes[1].values[None, :]
    assert (holds == (2 * ea * ls >= 8 - 1e-12)).all()
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    region_figure(reg, str(a))
    region_figure(reg, str(b))
    assert a.read_bytes() == b.read_bytes()
    assert reg.to_json()["sampled"] is True


def test_region_marks_the_points_a_feasibility_bound_rules_out(lecture_library):
    """A grid past the model's maximum context (131,072 tokens for Llama 3 70B) or past the memory describes no
    deployment: the region counts those points per constraint, says where the claim holds among the others,
    and a grid inside every bound has none."""
    import numpy as np

    scen = build_scenario(lecture_library, hardware="h100-sxm", model="llama3-70b", sets=["batch=1 seq"])
    axes = [parse_axis(lecture_library, "context=1000:262144:64"),
            parse_axis(lecture_library, "hbm_bandwidth=1 TB/s:4 TB/s:5")]
    reg = region(lecture_library, scen, "latency_floor", axes)
    past = np.broadcast_to(axes[0].values[:, None] > 131072, reg.holds.shape)
    assert (reg.unfit["capacity.context_within_model"] == past).all() and past.any() and not past.all()
    assert not reg.feasible[past].any()
    data = reg.to_json()
    assert data["infeasible_points"]["capacity.context_within_model"] == int(past.sum())
    assert data["fraction_holding_feasible"] == pytest.approx(reg.holds[reg.feasible].mean())
    assert any(line.startswith(f"{int(past.sum()):,} of the 320 points are infeasible: capacity.context_within_model")
               for line in reg.unfit_lines())
    inside = region(lecture_library, scen, "latency_floor", [parse_axis(lecture_library, "context=1000:8192:8"),
                                                              axes[1]])
    assert inside.unfit_lines() == [] and inside.feasible.all()


def test_cli_region_names_its_ranges_and_its_infeasible_points(capsys, tmp_path):
    code = main(["margin", "latency_floor", "--hardware", "h100-sxm", "--model", "llama3-70b", "--set", "batch=1 seq",
                 "--vary", "context=1000:262144", "--vary", "hbm_bandwidth=1 TB/s:4 TB/s", "--grid", "20",
                 "--cache-dir", str(tmp_path)])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert "grid of context in [1,000 token/seq, 262.1k token/seq] x hbm_bandwidth in [1 TB/s, 4 TB/s]" in out[0]
    assert out[1] == "  on its feasible points: holds on 100.0%"
    assert any(line.endswith("points are infeasible: capacity.context_within_model fails there") for line in out)


def test_robustness_table(tmp_path):
    lib = load(tmp_path)
    scen = build_scenario(lib, sets=list(BASE_SETS))
    rows = robustness(lib, scen)
    by_q = {r.quantity: r for r in rows if r.claim == "fx.inst_r"}
    assert set(by_q) == {"aa", "bb"}
    assert by_q["aa"].factor_down == pytest.approx(2.5) and by_q["aa"].factor_up is None  # aa >= 4
    assert by_q["bb"].factor_up == pytest.approx(2.5) and by_q["bb"].factor_down is None  # bb <= 5
    assert by_q["aa"].holds is True


def test_cli_margin_json(capsys, tmp_path):
    code = main(["margin", "scaleout_viability", "--vary", "experts_active", "--json", "--cache-dir", str(tmp_path)])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {"id", "vary", "unit", "holds_on"} <= set(data)
    assert data["holds_on"] == [[4, None]]
    code = main(["margin", "scaleout_viability", "--vary", "experts_active", "--vary", "layers_per_stage=0.5:4",
                 "--grid", "20", "--out", str(tmp_path / "r.svg"), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["sampled"] is True and (tmp_path / "r.svg").exists()


@pytest.mark.parametrize("vary, hint", [
    ("pp", "has no threshold in one of them"),  # several quantities left for all values
])
def test_margin_of_a_general_claim_says_why_not(capsys, vary, hint):
    code = main(["margin", "economics.layout_rent_counts_every_stage", "--library", "serving", "--vary", vary])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "universally quantified over" in err and hint in err and "vary one of those" not in err


VACUOUS = '''
"""Claims whose hypotheses hold for no value of x once y is fixed."""
from derive import Claim, Quantity, derived, logic

x = Quantity("x", "x", "s", "a time")
y = Quantity("y", "y", "s", "another time")
general = Claim("v.general", title="between y and 2y", statement="x below y and above 2y.", source=derived("test"),
                hypotheses=[logic.lt(x.sym, y.sym), logic.gt(x.sym, 2 * y.sym)], goal=logic.gt(x.sym, 100 * y.sym))
instance = Claim("v.instance", title="the same, read at the values", statement="the same.", source=derived("test"),
                 hypotheses=[logic.lt(x.sym, y.sym), logic.gt(x.sym, 2 * y.sym)], goal=logic.gt(x.sym, 100 * y.sym),
                 instance=True)
false = Claim("v.false", title="false where it applies", statement="above 10y means below 5y.",
              source=derived("test"), hypotheses=[logic.gt(x.sym, 10 * y.sym)], goal=logic.lt(x.sym, 5 * y.sym))
'''


@pytest.mark.parametrize(("claim", "nowhere", "reads"), [
    ("v.general", True, "says nothing at any of them"),
    ("v.instance", True, "inconsistent at every one"),
    ("v.false", False, "holds for x in nowhere (empty set)"),  # its hypotheses hold above 10 s: refuted there
])
def test_a_margin_that_holds_nowhere_says_whether_the_hypotheses_ever_hold(tmp_path, capsys, claim, nowhere, reads):
    (tmp_path / "v.py").write_text(VACUOUS)
    argv = ["margin", claim, "--vary", "x", "--library", str(tmp_path), "--set", "x=3 s", "--set", "y=1 s",
            "--no-cache"]
    assert main(argv) == 0
    assert reads in capsys.readouterr().out
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["holds_on"] == [] and doc["hypotheses_nowhere"] is nowhere


SHARE = '''
from derive import Claim, Definition, Quantity, derived, logic
a = Quantity("part_a", "a", "1", "a part")
b = Quantity("whole_b", "b", "1", "the whole")
f = Quantity("share_f", "f", "1", "a share", domain="fraction")
share = Definition("s.share", title="share", statement="a over b.", source=derived("test"), defines=f,
                   expr=a.sym / b.sym, domain=logic.gt(b.sym, 0))
below = Claim("s.below", title="share below 1", statement="the share is below 1.", source=derived("test"),
              goal=logic.lt(f.sym, 1), instance=True)
under = Claim("s.under", title="share below 1 for a small part", statement="the same, for a part under 1.",
              source=derived("test"), hypotheses=[logic.lt(a.sym, 1)], goal=logic.lt(f.sym, 1), instance=True)
'''


@pytest.mark.parametrize(("claim", "verdict"), [("s.below", "unknown"), ("s.under", "inconsistent")])
def test_margin_at_a_broken_declaration_says_what_check_says(tmp_path, capsys, claim, verdict):
    # share_f = 3/2 breaks its declared fraction: the claim is not read there (check: unknown), unless a
    # hypothesis of its own fails too (check: inconsistent)
    (tmp_path / "s.py").write_text(SHARE)
    values = ["--library", str(tmp_path), "--set", "part_a=3", "--set", "whole_b=2", "--no-cache", "--json"]
    assert main(["check", claim, *values]) == 1
    assert json.loads(capsys.readouterr().out)["claims"][0]["verdict"] == verdict
    assert main(["margin", claim, "--vary", "part_a", *values]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict_at_value"] == verdict and doc["exact"] == ([["0", "2"]] if claim == "s.below" else [["0", "1"]])
    assert main(["margin", claim, "--vary", "part_a", *values[:-1]]) == 0
    assert f"(derive check: {verdict})" in capsys.readouterr().out


def test_margin_of_a_count_names_its_whole_values(capsys):
    # chips and batch are counts the proofs read as reals: the margin's real ends, then the whole values inside
    base = ["margin", "capacity.memory_fits_in_hbm", "--model", "llama3-70b", "--hardware", "h100-sxm",
            "--set", "context=8192 token/seq"]
    assert main([*base, "--vary", "chips", "--set", "batch=64 seq"]) == 0
    out = capsys.readouterr().out
    assert "holds for chips in [3.9113, ∞)" in out and "(chips is counted in whole units: 4 and more)" in out
    assert main([*base, "--vary", "batch", "--set", "chips=8", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["whole"] == [[1, 185]] and data["integer"] is False  # (0, 185.85 seq]
    # an integer quantity keeps its own line, and no whole ranges
    assert main(["margin", "scaleout_viability", "--vary", "experts_active", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["whole"] is None


@pytest.mark.parametrize("low, low_closed, high, high_closed, expected", [
    (0, False, sp.Rational(371, 2), True, [(1, 185)]),
    (3, False, 7, False, [(4, 6)]),
    (3, True, 7, True, [(3, 7)]),
    (sp.Rational(1, 3), True, sp.Rational(2, 3), True, []),
    (sp.Rational(39, 10), True, None, False, [(4, None)]),
])
def test_whole_values_of_an_interval(low, low_closed, high, high_closed, expected):
    from derive.whatif.margin import Interval, Margin

    lo, hi = (None if x is None else sp.sympify(x) for x in (low, high))
    m = Margin("c", "n", "1", sp.Integer(1), [Interval(lo, hi, low_closed, high_closed)], "positive", False,
               None, sp.Symbol("n"), whole_unit=sp.Integer(1))
    assert m.whole_ranges() == expected


@settings(max_examples=80, deadline=None)
@given(st.fractions(0, 60, max_denominator=7), st.fractions(0, 60, max_denominator=7), st.booleans(), st.booleans(),
       st.booleans())
def test_whole_values_are_the_integers_inside(a, b, low_closed, high_closed, unbounded):
    from derive.whatif.margin import Interval, Margin

    low, high = sorted((sp.Rational(a.numerator, a.denominator), sp.Rational(b.numerator, b.denominator)))
    interval = Interval(low, None if unbounded else high, low_closed, high_closed)
    m = Margin("c", "n", "1", sp.Integer(1), [interval], "positive", False, None, sp.Symbol("n"),
               whole_unit=sp.Integer(1))
    inside = [k for k in range(0, 80) if interval.contains(sp.Integer(k))]
    listed = [k for first, last in m.whole_ranges() for k in range(first, 80 if last is None else last + 1)]
    assert listed == inside


def test_a_margin_over_an_expression_the_claim_does_not_read_says_so(capsys) -> None:
    """Over hbm_capacity the note said the lecture's batch optimum does not depend on it; over hbm_capacity*2 it
    did not (the inverse relation the margin adds reads the expression's value)."""
    from derive.cli import main

    for vary, said in (("hbm_capacity*2", True), ("hbm_bandwidth*2", False)):
        assert main(["margin", "batch_optimum_lecture", "--vary", vary, "--no-verify"]) == 0
        out = capsys.readouterr().out
        assert (f"the claim does not depend on {vary}" in out) is said, out
