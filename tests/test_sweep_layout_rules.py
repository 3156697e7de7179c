"""Input rules where a command varies a quantity they name: ``derive sweep --vary tp``, ``--presets`` with a layout,
and ``derive margin --vary tp``.

The serving library's layout rules (``theorems.serving.layouts.INPUT_CONSTRAINTS``) refuse ``--set tp=3`` for
Llama 3 70B in one line.  A sweep over tp must say the same thing at every point: feasible = 0 where a rule breaks,
with a note that names the rule, and nothing changed for a sweep whose quantities no rule names.

Worked example (Llama 3 70B on H100s): the meta-llama config.json gives 64 query heads and 8 KV heads.  tp must
divide 64, and divide 8 or be a multiple of 8: tp in {1, 2, 4, 8, 16} up to 16 (TP16 spans two 8-GPU nodes, a note,
not a refusal).  The layout gives the chips (tp·cp·dp), so the 140 GB of BF16 weights fit from TP4 on (320 GB of
HBM), not on one or two chips; TP8 on one node as served in practice, TP4 in NVIDIA's NIM benchmarks.
"""

from __future__ import annotations

import csv
import io
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from libtools import make_library, run_cli

from derive import Quantity, logic
from derive.errors import ScenarioError
from derive.model.loader import load_library
from derive.model.scenario import Scenario, ScenarioValue, build_scenario
from derive.whatif.feasibility import feasibility
from derive.whatif.margin import margin
from derive.whatif.rules import grid_rules
from derive.whatif.sweep import Axis, parse_axis, resolve_target, sweep_grid, sweep_presets

LIB = load_library(["serving"])
GOLDEN = Path(__file__).parent / "golden"
LINKS = ["collective_latency=1us", "collective_bandwidth=450GB/s"]
REPRO = ["sweep", "tp_allreduce_time", "--library", "serving", "--hardware", "h100-sxm", "--model", "llama3-70b",
         "--vary", "tp=1:16:16", "--set", "collective_latency=1us", "--set", "collective_bandwidth=450GB/s"]


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def llama70b(*sets: str) -> Scenario:
    return build_scenario(LIB, hardware="h100-sxm", model="llama3-70b", sets=[*LINKS, *sets])


def allowed_tp(sc: Scenario, degrees) -> set[int]:
    """The rules of theorems.serving.layouts, written out for tp alone (the other degrees 1)."""
    heads, kv = (int(sc.value(n)) for n in ("query_heads", "kv_heads"))
    return {t for t in degrees if heads % t == 0 and (kv % t == 0 or t % kv == 0)}


def fits(*sets: str) -> bool:
    """The library's FEASIBILITY bounds at the layout given by --set (memory per chip among them)."""
    f = feasibility(LIB, llama70b(*sets))
    return bool(f.feasible)


def refused(sets: list[str], hardware: str = "h100-sxm", model: str = "llama3-70b") -> bool:
    try:
        build_scenario(LIB, hardware=hardware, model=model, sets=[*LINKS, *sets])
    except ScenarioError:
        return True
    return False


# the reproduction -------------------------------------------------------------------------------------

def test_llama3_70b_tp_sweep_is_feasible_only_at_the_degrees_the_rules_allow(capsys):
    code, out, err = run_cli(capsys, REPRO)
    assert code == 0, err
    feasible = {int(r["tp [1]"]): r["feasible"] for r in rows(out)}
    allowed = allowed_tp(llama70b(), range(1, 17))
    assert allowed == {1, 2, 4, 8, 16}  # 64 query heads, 8 KV heads
    expected = {t for t in allowed if fits(f"tp={t}")}
    assert expected == {4, 8, 16}  # the weights need four chips' HBM
    assert {t for t, f in feasible.items() if f == "1"} == expected
    assert {t for t, f in feasible.items() if f == "0"} == set(range(1, 17)) - expected


def test_the_note_names_each_broken_rule_its_reason_and_its_count(capsys):
    _, _, err = run_cli(capsys, REPRO)
    notes = [line for line in err.splitlines() if line.startswith("note: input rule broken")]
    by_id = {c["id"]: c for c in LIB.input_constraints}
    # tp = 3, 5, 6, 7, 9..15 do not divide 64 (tp = 9..16 spanning two nodes is a note, not a refusal)
    counts = {"layouts.tp_divides_query_heads": 11, "layouts.tp_and_kv_heads_divide": 11}
    assert len(notes) == len(counts)
    for rid, n in counts.items():
        (line,) = [x for x in notes if f"[{rid}]" in x]
        assert f"at {n} of 16 points" in line
        assert by_id[rid]["reason"] in line and by_id[rid]["rule"] in line
    # separate from the FEASIBILITY note (memory fits at every point here)
    assert "FEASIBILITY" not in "\n".join(notes)
    assert "tp <= scaleup_domain does not hold at 8 of 16 points (a note, not infeasible)" in err
    assert "layout table" in err and "pp = 1" in err  # the defaults --set tp=... would take, said once


def test_a_rule_note_is_not_counted_as_a_feasibility_failure():
    """The FEASIBILITY note counts only its own bounds: a layout rule's points are in their own note."""
    sc = llama70b()
    result = sweep_grid(LIB, sc, [resolve_target(LIB, "tp_allreduce_time")], [parse_axis(LIB, "tp=1:16:16")])
    # memory fails at tp = 1 and 2 only; the rules' points are counted in their own notes
    assert any(n.startswith("2 of 16 points are infeasible") for n in result.notes)
    assert sum("input rule broken" in n for n in result.notes) == 2


# a sweep no rule names is as it was ------------------------------------------------------------------

GOLDEN_SWEEPS = {
    "sweep_lecture_batch.csv": ["sweep", "critical_batch", "step_time", "--vary", "batch=1:4096:64"],
    "sweep_lecture_flops_batch.csv": ["sweep", "batch_optimum_lecture", "step_time", "--vary",
                                      "flops=100 TFLOP/s:10 PFLOP/s:12:log", "--vary", "batch=1:8192:10"],
    "sweep_lecture_context.csv": ["sweep", "step_time", "--hardware", "h100-sxm", "--model", "llama3-70b",
                                  "--vary", "context=1000:200000:60"],
    # chips is named by a rule, but with no layout given the rule is undecided: unchanged, not 0
    "sweep_serving_batch_chips.csv": ["sweep", "step_time", "memory_per_chip", "--library", "serving", "--hardware",
                                      "h100-sxm", "--model", "llama3-70b", "--vary", "batch=1:4096:20", "--vary",
                                      "chips=1:16:16"],
}


@pytest.mark.parametrize("name", sorted(GOLDEN_SWEEPS))
def test_a_sweep_no_rule_decides_is_byte_identical_to_before(capsys, name):
    """The golden files are the output of the engine before input rules entered sweeps (its whole counts, batch,
    context and chips, rounded to whole values since 2026-11-30)."""
    code, out, err = run_cli(capsys, GOLDEN_SWEEPS[name])
    assert code == 0, err
    assert out == (GOLDEN / name).read_text()
    assert "input rule" not in err


def test_a_sweep_of_lecture_quantities_evaluates_no_rule():
    sc = llama70b("tp=8")
    axes = [parse_axis(LIB, "batch=1:8192:100"), parse_axis(LIB, "context=1000:100000:100")]
    assert grid_rules(LIB, sc, [a.name for a in axes], [a.values for a in axes]) is None


# exact on integers ------------------------------------------------------------------------------------

def test_a_degree_off_the_integers_is_infeasible_and_said(capsys):
    code, out, err = run_cli(capsys, [*REPRO[:-6], "--vary", "tp=1:4:7", *REPRO[-4:]])
    assert code == 0, err
    feasible = {Fraction(r["tp [1]"]): r["feasible"] for r in rows(out)}
    # tp = 1 and 2 are whole but too few chips for the weights; 4 is the one feasible point
    assert feasible == {Fraction(1): "0", Fraction(3, 2): "0", Fraction(2): "0", Fraction(5, 2): "0",
                        Fraction(3): "0", Fraction(7, 2): "0", Fraction(4): "1"}
    assert "tp is off the integers at 3 of 7 points" in err


def test_a_log_grid_lands_on_whole_degrees():
    """geomspace(1, 64, 7) computes 7.999999999999999 for 8: read as 8 (the CSV prints 8), so TP8 stays
    feasible; 1 and 2 chips cannot hold the weights; 16, 32 and 64 span nodes (a note)."""
    axis = parse_axis(LIB, "tp=1:64:7:log")
    assert not all(float(v).is_integer() for v in axis.values)  # the floats really are off
    result = sweep_grid(LIB, llama70b(), [resolve_target(LIB, "tp_allreduce_time")], [axis])
    feasible = result.data[result.columns.index("feasible")]
    assert feasible.tolist() == [0, 0, 1, 1, 1, 1, 1]
    assert not any("off the integers" in n for n in result.notes)


def test_two_degrees_at_once_are_decided_on_their_product():
    """tp and dp over Llama 3 70B: feasible exactly where tp is allowed and the tp*dp chips hold the weights."""
    axes = [Axis("tp", np.arange(1, 9, dtype=float), "1", 1.0), Axis("dp", np.arange(1, 9, dtype=float), "1", 1.0)]
    sc = llama70b()
    result = sweep_grid(LIB, sc, [resolve_target(LIB, "layout_chips")], axes)
    feasible = result.data[result.columns.index("feasible")].reshape(8, 8)
    for t in range(1, 9):
        for d in range(1, 9):
            expected = float(t in allowed_tp(sc, [t]) and fits(f"tp={t}", f"dp={d}"))
            assert feasible[t - 1, d - 1] == expected, (t, d)
    assert feasible[0, 0] == 0.0 and feasible[7, 0] == 1.0  # one chip cannot hold the weights; a node can


DEGREE = st.integers(min_value=1, max_value=96)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tps=st.lists(DEGREE, min_size=1, max_size=4, unique=True),
       pps=st.lists(DEGREE, min_size=1, max_size=2, unique=True),
       ep=st.sampled_from([1, 2, 4, 8]), model=st.sampled_from(["llama3-70b", "deepseek-v3", "mixtral-8x7b"]),
       hardware=st.sampled_from(["h100-sxm", "gb200-nvl72"]))
def test_each_point_is_what_set_says(tps, pps, ep, model, hardware):
    """Property: at every point of a sweep over tp and pp (ep and dp given), feasible = 0 exactly where
    build_scenario with --set tp=... --set pp=... refuses the scenario or a FEASIBILITY bound fails there."""
    ep = 1 if model == "llama3-70b" else ep  # a dense model is one expert: no expert parallelism
    sets = [*LINKS, f"ep={ep}", f"dp={ep}"]  # ep divides the MoE models' experts; ep <= tp*cp*dp as dp = ep
    sc = build_scenario(LIB, hardware=hardware, model=model, sets=sets)
    axes = [Axis("tp", np.array(sorted(tps), dtype=float), "1", 1.0),
            Axis("pp", np.array(sorted(pps), dtype=float), "1", 1.0)]
    result = sweep_grid(LIB, sc, [resolve_target(LIB, "layout_chips")], axes)
    feasible = result.data[result.columns.index("feasible")].reshape(len(tps), len(pps))
    for i, t in enumerate(sorted(tps)):
        for j, p in enumerate(sorted(pps)):
            try:
                at = build_scenario(LIB, hardware=hardware, model=model, sets=[*sets, f"tp={t}", f"pp={p}"])
            except ScenarioError:
                expected = 0.0
            else:
                f = feasibility(LIB, at)
                expected = float("nan") if f.undecided and f.feasible else float(f.feasible)
            got = feasible[i, j]
            assert (np.isnan(got) and np.isnan(expected)) or got == expected, (t, p, ep, model, hardware, got)


# preset pairs -----------------------------------------------------------------------------------------

PAIRS = [("h100-sxm", "llama3-70b"), ("gb200-nvl72", "llama3-70b"), ("gb200-nvl72", "gemma3-27b"),
         ("h100-sxm", "mixtral-8x7b")]


def test_a_preset_pair_that_breaks_a_rule_is_marked_not_an_abort():
    """--set tp=64 divides Llama 3 70B's 64 query heads and neither gemma3-27b's nor Mixtral's 32."""
    targets = [resolve_target(LIB, "tp_allreduce_time")]
    result = sweep_presets(LIB, targets, sets=[*LINKS, "tp=64"], pairs=PAIRS)
    feasible = result.data[result.columns.index("feasible")].tolist()
    assert feasible == [0.0 if refused(["tp=64"], h, m) else 1.0 for h, m in PAIRS] == [1.0, 1.0, 0.0, 0.0]
    (note,) = [n for n in result.notes if "input rule broken" in n and "query_heads" in n]
    assert "at 2 of 4 pairs" in note and "[layouts.tp_divides_query_heads]" in note
    assert "gb200-nvl72 x gemma3-27b (tp = 64, query_heads = 32" in note


def test_a_preset_sweep_without_a_broken_rule_has_no_rule_note():
    result = sweep_presets(LIB, [resolve_target(LIB, "tp_allreduce_time")], sets=[*LINKS, "tp=8"], pairs=PAIRS)
    assert result.data[result.columns.index("feasible")].tolist() == [1.0] * 4
    assert not any("input rule" in n for n in result.notes)


def test_a_preset_sweep_cli_with_a_rule_broken_everywhere_exits_zero(capsys, tmp_path):
    out = tmp_path / "p.csv"
    code, summary, err = run_cli(capsys, ["sweep", "layout_chips", "--library", "serving", "--presets", "--set",
                                          "tp=3", "--out", str(out)])
    assert code == 0, err
    assert {r["feasible"] for r in rows(out.read_text())} == {"0"}
    assert "[layouts.tp_divides_query_heads]" in summary


# margins ----------------------------------------------------------------------------------------------

def test_a_margin_end_at_a_degree_the_rules_refuse_says_so():
    """network.tp_hides_iff_batch over tp for Llama 3 70B at 450 GB/s holds below t* = 13.06 (its activations,
    8,192 BF16 elements, read from the config): its last integer, 13, does not divide the heads; the largest
    degree below it the rules accept is 8."""
    m = margin(LIB, llama70b(), "network.tp_hides_iff_batch", "tp", verify=False)
    assert m.intervals and m.intervals[0].high is not None and 13 < m.intervals[0].high < 14
    (end,) = m.rule_ends
    assert end.side == "high" and end.value == 13 and end.nearest == 8
    assert set(end.ids) == {"layouts.tp_divides_query_heads", "layouts.tp_and_kv_heads_divide"}
    text = "\n".join(m.text_lines())
    assert "at tp = 13, the largest integer below the end 13.06: impossible there" in text
    assert "the largest tp of the interval that meets the input rules: 8" in text
    assert m.to_json()["input_rules_at_ends"][0]["nearest_meeting_rules"] == "8"


def test_a_margin_whose_ends_meet_the_rules_adds_nothing():
    m = margin(LIB, llama70b(), "network.pipeline_p2p_below_tp_allreduce", "tp", verify=False)
    assert [(i.low, i.high) for i in m.intervals] == [(2, None)]  # pp = 1 from the layout's defaults
    assert m.rule_ends == []


def test_a_margin_past_every_allowed_degree_says_none_was_found():
    m = margin(LIB, llama70b(), "network.tp_never_hides_past_degree", "tp", verify=False)
    (end,) = m.rule_ends
    # 14 breaks the head rules; 16 (two nodes) is the nearest degree the rules accept
    assert end.side == "low" and end.value == 14 and end.nearest == 16


# the exact evaluator against the kernel's, on a planted rule -----------------------------------------

def test_a_rule_beyond_sums_and_products_is_decided_point_by_point():
    """A rule written with Max (no object-array arithmetic) and its arithmetic twin agree at every point."""
    n = Quantity("n", "n", "1", "a count", integer=True)
    m_ = Quantity("m", "m", "1", "a bound")
    lib = make_library(n, m_)
    twin = make_library(n, m_)
    lib.input_constraints = [{"id": "t.max", "what": "input", "rule": "max(n, 2) <= m", "reason": "planted",
                              "relation": logic.le(sp.Max(n.sym, 2), m_.sym), "hint": "", "source": "test",
                              "refuse": True}]
    twin.input_constraints = [{"id": "t.and", "what": "input", "rule": "n <= m and 2 <= m", "reason": "planted",
                               "relation": logic.And((logic.le(n.sym, m_.sym), logic.le(2, m_.sym))), "hint": "",
                               "source": "test", "refuse": True}]
    values = np.arange(1, 12, dtype=float)
    for bound in (1, 2, 5):
        sc = Scenario("t", {"m": ScenarioValue("m", sp.Integer(bound), "test")})
        a = grid_rules(lib, sc, ["n"], [values])
        b = grid_rules(twin, sc, ["n"], [values])
        assert a is not None and b is not None
        assert a.broken.tolist() == b.broken.tolist() == [max(v, 2) > bound for v in range(1, 12)]


def test_a_region_over_a_degree_marks_the_points_the_rules_refuse(tmp_path):
    from derive.whatif.region import region, region_figure

    sc = llama70b()
    axes = [parse_axis(LIB, "tp=1:16:16"), parse_axis(LIB, "batch=1:256:8")]
    reg = region(LIB, sc, "network.tp_hides_iff_batch", axes)
    refused_tp = {int(t) for t, row in zip(axes[0].values, reg.refused, strict=True) if row.all()}
    assert refused_tp == set(range(1, 17)) - allowed_tp(sc, range(1, 17))
    assert not reg.refused[[0, 1, 3, 7]].any()
    assert any("[layouts.tp_divides_query_heads]" in n and "hatched in the figure" in n for n in reg.notes)
    assert reg.to_json()["refused_by_input_rules"] == 11 * 8
    region_figure(reg, str(tmp_path / "r.svg"))
    assert (tmp_path / "r.svg").stat().st_size > 0


def test_a_varied_derived_quantity_is_decided_as_its_pin():
    """--vary layout_chips pins it at each point, as --set layout_chips=N does: no rule names it now (the layout
    gives chips from its degrees), so each point is what its memory says, held at the pinned chips."""
    sc = llama70b("tp=1")
    result = sweep_grid(LIB, sc, [resolve_target(LIB, "layout_chips")], [parse_axis(LIB, "layout_chips=1:16:16")])
    feasible = result.data[result.columns.index("feasible")].tolist()
    assert feasible == [float(fits("tp=1", f"layout_chips={n}")) for n in range(1, 17)] == [0.0] * 16


def test_a_varied_derived_quantity_is_held_in_the_feasibility_bounds():
    """--vary memory_per_chip holds it at each point in the memory bound (memory_per_chip <= hbm_capacity), as
    --set memory_per_chip=N pins it: feasible up to the H100's 80 GB, not the scenario's own memory at every point."""
    sc = llama70b("tp=8")
    axis = parse_axis(LIB, "memory_per_chip=10 GB:160 GB:16")
    result = sweep_grid(LIB, sc, [resolve_target(LIB, "memory_per_chip")], [axis])
    feasible = result.data[result.columns.index("feasible")].tolist()
    expected = [float(fits("tp=8", f"memory_per_chip={g} GB")) for g in range(10, 161, 10)]
    assert feasible == expected == [1.0] * 8 + [0.0] * 8


def test_a_checked_preset_sweep_marks_a_broken_rule_per_pair():
    """sweep --presets --check with --set ep=3 --set dp=3: the lecture's base (256 experts) breaks the expert
    rule, but Kimi K2's 384 experts take EP3; the pair that breaks it (DeepSeek-V3's 256) carries its error,
    the other is checked, as a sweep without --check marks each pair."""
    from derive.whatif.matrix import check_matrix

    pairs = [("h100-sxm", "kimi-k2"), ("h100-sxm", "deepseek-v3")]
    rows = check_matrix(["serving"], pairs=pairs, sets=["ep=3", "dp=3"], ids=["layouts.layout_is_stages_of_chips"],
                        workers=1)
    kimi, deepseek = rows
    assert kimi.error is None and kimi.verdicts == {"layouts.layout_is_stages_of_chips": "proved"}
    assert deepseek.verdicts == {} and "[layouts.ep_divides_expert_slots]" in deepseek.error
    assert "ep = 3, experts_total = 256" in deepseek.error


# margins over a degree, and over an expression of degrees ----------------------------------------------------

DSV3_PREFILL = ["tp=4", "dp=8", "ep=32", "redundant_experts=32"]  # the report's prefill unit (section 3.4.1)


def test_a_margin_over_a_degree_moves_the_chips_it_gives():
    """The layout gives chips = tp·cp·dp, so DeepSeek-V3's memory fits from dp = 2.14 on at TP4 (its FP8 weights
    and the KV over 4·dp H100s), not at every dp as with the chips held at the unit's 32."""
    sc = build_scenario(LIB, hardware="h100-sxm", model="deepseek-v3", sets=DSV3_PREFILL)
    m = margin(LIB, sc, "capacity.memory_fits_in_hbm", "dp", verify=False)
    (iv,) = m.intervals
    assert iv.high is None and 2 < iv.low < 3
    at_two = build_scenario(LIB, hardware="h100-sxm", model="deepseek-v3",
                            sets=["tp=4", "dp=2", "ep=8", "redundant_experts=32"])
    assert not feasibility(LIB, at_two).feasible  # --set dp=2 says the same


def test_a_margin_over_an_expression_checks_the_input_rules_at_its_ends():
    """--vary tp*dp solves for dp: the low end 8.55 is first whole at dp = 3 (tp*dp = 12), where EP32 needs 32
    devices; the smallest tp*dp of the interval the rules accept is the unit's 32."""
    sc = build_scenario(LIB, hardware="h100-sxm", model="deepseek-v3", sets=DSV3_PREFILL)
    m = margin(LIB, sc, "capacity.memory_fits_in_hbm", "tp*dp", verify=False)
    (end,) = m.rule_ends
    assert end.side == "low" and end.value == 12 and end.nearest == 32
    assert end.ids == ("layouts.ep_within_devices",)
    text = "\n".join(m.text_lines())
    assert "at tp*dp = 12, the smallest value above the end 8.547 with a whole dp: impossible there" in text
    assert "the smallest tp*dp of the interval that meets the input rules: 32" in text
