"""Layouts as inputs: a scenario file's ``[layout]`` table or ``--set tp=8 ...``, the degrees a layout leaves out,
and the layouts that cannot exist, each refused in one line that names the rule and its numbers.

The serving library declares the table and the rules (``theorems.serving.layouts.INPUT_TABLE`` and
``INPUT_CONSTRAINTS``); the engine checks them on every scenario it builds.  Worked examples, from published
deployments:

- DeepSeek-V3/R1 inference system (DeepSeek-AI, open-infra-index, 2025, day 6): prefill EP32 with DP32 over 4
  nodes, decode EP144 with DP144 over 18 nodes, 32 redundant routed experts in each unit, so 9 and 2 routed
  experts per GPU; the technical report (arXiv:2412.19437, 3.4.1-3.4.2): prefill TP4 × DP8 with EP32 (one
  redundant expert per GPU), decode TP4 × DP80 with EP320 (64 GPUs for redundant and shared experts).
- Llama 3 405B served in BF16 on two 8-GPU H100 nodes, tensor parallel in a node and pipeline parallel across
  the two (Llama 3 paper, arXiv:2407.21783, section 6.1): TP8 × PP2, 16 chips; 126 layers over 2 stages, each
  stage pooling one node's 8 chips (the layout gives chips = 8 and stages = 2, nothing typed twice).
- Llama 3.x 70B on H100: TP8 on one 8-GPU node; TP2 on two H100s (NVIDIA NIM benchmarks, Llama-3.3-70B-Instruct
  fp8 TP2, the same architecture as Llama 3.1 70B).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from libtools import one_error_line, run_cli

from derive.errors import ScenarioError
from derive.model.evaluate import evaluate
from derive.model.loader import load_library
from derive.model.scenario import build_scenario, check_input_constraints

LIB = load_library(["serving"])
DEGREES = ("tp", "pp", "cp", "dp", "ep")


def chips_of(sc) -> Fraction:
    return Fraction(str(evaluate(LIB, sc, "layout_chips").exact))


def deployment_file(tmp_path: Path, layout: str, extra: str = "", *, model: str = "deepseek-v3") -> Path:
    path = tmp_path / "deployment.toml"
    path.write_text(f'hardware = "h100-sxm"\nmodel = "{model}"\n\n[layout]\n{layout}\n{extra}')
    return path


# valid layouts: a file and --set agree -------------------------------------------------------------------

DS_DECODE_EP144 = {"dp": 144, "ep": 144, "redundant_experts": 32}
DS_CHIPS_144 = '[values.chips]\nvalue = "144"\nsource = "DeepSeek-V3/R1 inference system: a decode unit is 18 nodes"\n'
DS_CHIPS_8 = '[values.chips]\nvalue = "8"\nsource = "one node"\n'


def test_layout_from_a_file_and_from_set_agree(tmp_path) -> None:
    table = "\n".join(f"{k} = {v}" for k, v in DS_DECODE_EP144.items())
    from_file = build_scenario(LIB, scenario=str(deployment_file(tmp_path, table, DS_CHIPS_144)))
    from_set = build_scenario(LIB, scenario=str(deployment_file(tmp_path, "", DS_CHIPS_144)),
                              sets=[f"{k}={v}" for k, v in DS_DECODE_EP144.items()])
    for name in (*DEGREES, "redundant_experts", "chips"):
        assert from_file.value(name) == from_set.value(name), name
    assert chips_of(from_file) == chips_of(from_set) == 144
    assert from_file.values["dp"].source == "[layout] of deployment.toml"
    assert from_file.values["tp"].origin == "layout default"  # the degrees a layout leaves out are 1, said so
    assert any(n.startswith("tp = 1: layout default") for n in from_file.notes_for(["tp"]))


def test_set_overrides_the_files_layout(tmp_path) -> None:
    path = deployment_file(tmp_path, "dp = 144\nep = 144\nredundant_experts = 32")
    sc = build_scenario(LIB, scenario=str(path), sets=["dp=72", "ep=72"])
    assert (sc.value("dp"), sc.value("ep"), chips_of(sc), sc.value("chips")) == (72, 72, 72, 72)


def test_the_files_own_chips_win_over_the_chip_it_names(tmp_path) -> None:
    path = deployment_file(tmp_path, "dp = 144\nep = 144\nredundant_experts = 32", DS_CHIPS_144)
    sc = build_scenario(LIB, scenario=str(path))
    assert sc.value("chips") == 144 and sc.value("hbm_capacity") == 80 * 10**9  # the rest of the chip stays
    assert any("scenario file's 144 replaces hardware h100-sxm's 8" in n for n in sc.notes)
    on_h200 = build_scenario(LIB, scenario=str(path), hardware="h200")  # also over --hardware's preset
    assert on_h200.value("chips") == 144 and on_h200.value("hbm_capacity") == 141 * 10**9


def test_the_layout_gives_chips_and_stages_over_the_chips_preset() -> None:
    sc = build_scenario(LIB, hardware="h100-sxm", model="llama3-405b", sets=["tp=4", "pp=2"])
    assert (sc.value("chips"), sc.value("stages"), chips_of(sc)) == (4, 2, 8)
    assert sc.values["chips"].origin == sc.values["stages"].origin == "layout gives"
    assert "chips = 4: the layout's stage_chips (cp*dp*tp); replaces hardware h100-sxm's 8" in sc.notes
    assert sc.value("scaleup_domain") == 8  # the chip's domain stays the chip's
    assert ("chips", "stage_chips") in sc.links and ("stages", "pp") in sc.links


def test_the_layout_gives_chips_over_the_lectures_own() -> None:
    sc = build_scenario(LIB, sets=["tp=8"])
    assert (sc.value("chips"), sc.value("stages")) == (8, 1)  # the lecture's 64 chips and 4 stages give way


def test_a_scenario_without_a_layout_keeps_its_chips() -> None:
    sc = build_scenario(LIB, hardware="h100-sxm", model="llama3-70b")
    assert sc.value("chips") == 8 and sc.values["chips"].origin == "hardware h100-sxm"
    assert dict(sc.links) == {"microbatches": "pipeline_fill_microbatches"}  # no layout gives anything


@pytest.mark.parametrize(("sets", "words"), [
    (["tp=8", "pp=2", "chips=16"], ["chips = stage_chips does not hold (chips = 16, stage_chips = 8",
                                    "[layouts.chips_are_the_stage]", "(in --set chips=16)", "leave chips out"]),
    (["tp=8", "stages=4"], ["stages = pp does not hold (stages = 4, pp = 1)", "[layouts.stages_are_pp]"]),
])
def test_chips_or_stages_typed_against_the_layout_is_one_line(capsys, sets, words) -> None:
    argv = ["eval", "layout_chips", "--library", "serving", "--hardware", "h100-sxm", "--model", "llama3-405b"]
    code, out, err = run_cli(capsys, argv + [a for s in sets for a in ("--set", s)])
    one_error_line(code, err)
    assert out == ""
    for w in words:
        assert w in err, (w, err)


def test_chips_typed_in_agreement_with_the_layout_is_accepted(tmp_path) -> None:
    sc = build_scenario(LIB, scenario=str(deployment_file(tmp_path, "tp = 8", DS_CHIPS_8)))
    assert sc.value("chips") == 8 and sc.values["chips"].origin.startswith("scenario ")


def test_a_scenario_without_a_layout_gets_no_degrees() -> None:
    sc = build_scenario(LIB)
    assert not any(n in sc.values for n in (*DEGREES, "redundant_experts"))
    assert "layout default" not in sc.layers


def test_eval_layout_chips_from_two_degrees(capsys) -> None:
    code, out, _ = run_cli(capsys, ["eval", "layout_chips", "--library", "serving", "--set", "tp=8", "--set", "pp=2"])
    assert code == 0 and out.startswith("layout_chips = 16\n")


def test_diff_against_a_deployment_file_with_a_layout(capsys, tmp_path) -> None:
    path = deployment_file(tmp_path, "dp = 144\nep = 144\nredundant_experts = 32", DS_CHIPS_144)
    code, out, err = run_cli(capsys, ["diff", "--library", "serving", "--against", str(path), "--json"])
    assert code in (0, 1), err
    assert "changed" in json.loads(out)


# the card shows the layout's chips -------------------------------------------------------------------------

def _card_row(capsys, *sets: str) -> dict:
    argv = ["card", "--library", "serving", "--hardware", "h100-sxm", "--model", "llama3-70b", "--json"]
    code, out, err = run_cli(capsys, argv + [a for s in sets for a in ("--set", s)])
    assert code == 0, err
    return next(r for r in json.loads(out)["rows"] if r["name"] == "layout_chips")


def test_card_shows_the_layouts_chips(capsys) -> None:
    row = _card_row(capsys, "tp=4", "pp=2")
    assert row["exact"] == "8" and row["decl"] == "layouts.layout_chips"


def test_card_without_a_layout_says_which_degrees_are_missing(capsys) -> None:
    row = _card_row(capsys)
    assert row["exact"] is None and row["display"].startswith("needs --set ") and "--set tp=..." in row["display"]


# worked examples: published layouts -------------------------------------------------------------------------

@pytest.mark.parametrize(("layout", "chips", "per_gpu"), [
    ({"dp": 32, "ep": 32, "redundant_experts": 32}, 32, 9),  # open-infra day 6, prefill: 9 routed experts per GPU
    ({"dp": 144, "ep": 144, "redundant_experts": 32}, 144, 2),  # open-infra day 6, decode: 2 routed experts per GPU
    ({"tp": 4, "dp": 8, "ep": 32, "redundant_experts": 32}, 32, 9),     # report 3.4.1, prefill unit
    ({"tp": 4, "dp": 80, "ep": 320, "redundant_experts": 64}, 320, 1),  # report 3.4.2, decode unit
])
def test_deepseek_v3_published_layouts_are_accepted(layout, chips, per_gpu) -> None:
    sc = build_scenario(LIB, hardware="h100-sxm", model="deepseek-v3", sets=[f"{k}={v}" for k, v in layout.items()])
    assert chips_of(sc) == sc.value("chips") == chips  # one stage: the unit's chips pool its bandwidth
    slots = Fraction(str(evaluate(LIB, sc, "(experts_total + redundant_experts) / ep").exact))
    assert slots == per_gpu


def test_deepseek_v3_ep144_without_its_redundant_experts_is_refused(capsys) -> None:
    # the false twin: 256 experts do not spread evenly over 144 GPUs; the 32 redundant copies make 288 = 2 x 144
    code, _, err = run_cli(capsys, ["eval", "layout_chips", "--library", "serving", "--model", "deepseek-v3",
                                    "--set", "dp=144", "--set", "ep=144"])
    one_error_line(code, err)
    assert "ep = 144, experts_total = 256, redundant_experts = 0" in err


def test_llama3_405b_tp8_pp2_spans_two_nodes() -> None:
    sc = build_scenario(LIB, hardware="h100-sxm", model="llama3-405b", sets=["tp=8", "pp=2"])
    assert chips_of(sc) == 16 and (sc.value("chips"), sc.value("stages")) == (8, 2)
    assert not any("pp divides layers" in n or "scaleup_domain" in n for n in sc.notes)  # 126 layers = 2 x 63
    # each stage holds half the BF16 weights on one node's 8 x 80 GB; one node alone could not hold them
    half = Fraction(str(evaluate(LIB, sc, "stage_weight_bytes").exact))
    assert half < 8 * 80 * 10**9 < 2 * half


@pytest.mark.parametrize(("sets", "chips"), [(["tp=8"], 8), (["tp=2"], 2)])
def test_llama3_70b_on_h100(sets, chips) -> None:
    sc = build_scenario(LIB, hardware="h100-sxm", model="llama3-70b", sets=sets)
    assert chips_of(sc) == chips


def test_uneven_pipeline_stages_are_a_note_not_an_error() -> None:
    sc = build_scenario(LIB, hardware="h100-sxm", model="llama3-70b", sets=["pp=3"])
    assert chips_of(sc) == 3 and (sc.value("chips"), sc.value("stages")) == (1, 3)
    assert any(n.startswith("pp divides layers does not hold (pp = 3, layers = 80)") for n in sc.notes)


# each refusal: one line, exit 2, the rule and its numbers -----------------------------------------------------

REFUSALS = [
    (["--set", "tp=2.5"], ["tp must be a positive integer", "got 2.5", "--set tp=2.5"]),
    (["--set", "tp=0"], ["tp must be a positive integer", "got 0"]),
    (["--set", "ep=-4"], ["ep must be a positive integer"]),
    (["--set", "redundant_experts=-1"], ["redundant_experts must be a non-negative integer"]),
    (["--model", "llama3-70b", "--set", "tp=3"],
     ["impossible layout: tp divides query_heads does not hold (tp = 3, query_heads = 64)",
      "layouts.tp_divides_query_heads", "--set tp=3"]),
    (["--set", "query_heads=48", "--set", "kv_heads=12", "--set", "tp=8"],
     ["tp divides kv_heads, or kv_heads divides tp", "tp = 8, kv_heads = 12", "replicates each KV head"]),
    (["--model", "llama3-70b", "--set", "pp=100"],
     ["pp <= layers does not hold (pp = 100, layers = 80)", "at least one layer"]),
    (["--model", "mixtral-8x7b", "--set", "dp=3", "--set", "ep=3"],
     ["ep divides experts_total + redundant_experts does not hold (ep = 3, experts_total = 8, redundant_experts = 0)",
      "redundant_experts=N"]),
    (["--model", "deepseek-v3", "--set", "dp=8", "--set", "ep=32"],
     ["ep <= tp*cp*dp does not hold (ep = 32, tp = 1, cp = 1, dp = 8)", "raise dp"]),
    (["--hardware", "h100-sxm", "--model", "llama3-70b", "--set", "tp=8", "--set", "chips=16"],
     ["chips = stage_chips does not hold (chips = 16, stage_chips = 8 (", "tp = 8", "leave chips out"]),
    (["--set", "acceptance_rate=1.5"], ["acceptance_rate must be between 0 and 1", "got 1.5"]),
    (["--set", "decode_step_overhead=-1 ms"], ["decode_step_overhead must be non-negative"]),
    (["--set", "arrival_rate=-2 seq/s"], ["arrival_rate must be positive"]),
]


@pytest.mark.parametrize(("options", "words"), REFUSALS, ids=[" ".join(o) for o, _ in REFUSALS])
def test_an_impossible_input_is_one_line(capsys, options, words) -> None:
    code, out, err = run_cli(capsys, ["eval", "layout_chips", "--library", "serving", *options])
    one_error_line(code, err)
    assert out == ""
    for w in words:
        assert w in err, (w, err)


FILE_REFUSALS = [
    ("tq = 8", ["unknown [layout] entry 'tq'", "did you mean tp"]),
    ('tp = "eight"', ["layout.tp"]),
    ("tp = true", ["layout.tp must be a number", "boolean true"]),
    ("tp = 3", ["tp divides query_heads does not hold (tp = 3, query_heads = 128)", "deployment.toml"]),
]


@pytest.mark.parametrize(("table", "words"), FILE_REFUSALS, ids=[t for t, _ in FILE_REFUSALS])
def test_a_bad_layout_table_is_one_line(capsys, tmp_path, table, words) -> None:
    path = deployment_file(tmp_path, table)
    code, _, err = run_cli(capsys, ["eval", "layout_chips", "--library", "serving", "--scenario", str(path)])
    one_error_line(code, err)
    for w in words:
        assert w in err, (w, err)


def test_a_degree_given_twice_in_one_file_is_one_line(capsys, tmp_path) -> None:
    path = deployment_file(tmp_path, "tp = 8", '[values.tp]\nvalue = "4"\nsource = "x"\n')
    code, _, err = run_cli(capsys, ["eval", "layout_chips", "--library", "serving", "--scenario", str(path)])
    one_error_line(code, err)
    assert "tp is given twice" in err


def test_a_layout_table_for_a_library_without_one_is_one_line(capsys, tmp_path) -> None:
    path = deployment_file(tmp_path, "tp = 8")
    code, _, err = run_cli(capsys, ["eval", "batch", "--scenario", str(path)])  # the lecture declares no layout
    one_error_line(code, err)
    assert "unknown key 'layout'" in err and "declares no input tables" in err


# every accepted layout meets every rule, and its chips are the product of its degrees ------------------------

def _meets_every_rule(d: dict[str, int]) -> bool:
    """The rules, restated in plain Python (not through the library's relations)."""
    tp, pp, cp, dp, ep = (d[k] for k in DEGREES)
    return (d["query_heads"] % tp == 0 and (d["kv_heads"] % tp == 0 or tp % d["kv_heads"] == 0)
            and pp <= d["layers"] and (d["experts_total"] + d["redundant_experts"]) % ep == 0
            and ep <= tp * cp * dp and d.get("chips", tp * cp * dp) == tp * cp * dp
            and d.get("stages", pp) == pp)


@st.composite
def layouts_and_models(draw) -> dict[str, int]:
    """A layout that meets every rule by construction, then, half the time, one value redrawn at random (which
    may break a rule or not): the property below decides which, independently of the library."""
    tp, kv = draw(st.sampled_from([1, 2, 4, 8])), draw(st.sampled_from([1, 2, 4, 8]))
    ep, redundant = draw(st.sampled_from([1, 2, 4, 8, 16, 32])), draw(st.sampled_from([0, 32]))
    pp, cp = draw(st.integers(1, 4)), draw(st.integers(1, 2))
    dp = draw(st.integers(-(-ep // (tp * cp)), 64))  # ep <= tp*cp*dp
    d = {"tp": tp, "pp": pp, "cp": cp, "dp": dp, "ep": ep, "redundant_experts": redundant,
         "query_heads": tp * draw(st.integers(1, 16)), "kv_heads": kv, "layers": pp * draw(st.integers(1, 8)),
         "experts_total": ep * draw(st.integers(1, 8)) * 32 - redundant if redundant else ep * draw(st.integers(1, 16))}
    if draw(st.booleans()):  # chips typed as well: in agreement with the layout, or not
        d["chips"] = tp * cp * dp * draw(st.sampled_from([1, 1, 2]))
    if d["experts_total"] <= 0:
        d["experts_total"], d["redundant_experts"] = ep, 0
    if draw(st.booleans()):
        d[draw(st.sampled_from(sorted(d)))] = draw(st.integers(1, 300))
    return d


@given(given_values=layouts_and_models())
@settings(max_examples=60, deadline=None)
def test_accepted_layouts_meet_every_rule(given_values) -> None:
    tp, pp, cp, dp = (given_values[k] for k in ("tp", "pp", "cp", "dp"))
    layers = given_values["layers"]
    try:
        sc = build_scenario(LIB, sets=[f"{k}={v}" for k, v in given_values.items()])
    except ScenarioError as err:
        assert not _meets_every_rule(given_values), err.one_line()
        assert "impossible layout" in err.message
        return
    assert _meets_every_rule(given_values)
    assert chips_of(sc) == tp * pp * cp * dp and sc.value("chips") == tp * cp * dp and sc.value("stages") == pp
    # the notes a layout may leave here (no chip named, so no scale-up domain): uneven stages, and more stages than
    # the lecture's micro-batches (its scenario pins 4; a pp above it comes only from a redrawn value)
    expected = {"pp divides layers"} if layers % pp else set()
    if sc.value("microbatches") < pp:
        expected.add("microbatches >= stages")
    notes = check_input_constraints(LIB, sc.values, sc.pinned)
    assert {text.split(" does not hold")[0] for _, text in notes} == expected


def test_every_rule_is_declared_with_its_reason_and_source() -> None:
    ids = [c["id"] for c in LIB.input_constraints]
    assert len(ids) == len(set(ids)) >= 7
    for c in LIB.input_constraints:
        assert c["reason"] and c["source"] and c["rule"] and (c["hint"] or not c["refuse"])
    assert set(LIB.input_tables["layout"]["members"]) == {*DEGREES, "redundant_experts"}


# the engine knows no layouts: any library declares its own tables and rules -----------------------------------

GRID_LIBRARY = """
from derive import Definition, Quantity, derived, logic
rows = Quantity("rows", "r", "1", "rows of a grid", integer=True)
cols = Quantity("cols", "c", "1", "columns of a grid", integer=True)
cells = Quantity("cells", "n", "1", "cells the grid is cut into", integer=True)
area = Quantity("grid_area", "a", "1", "rows times columns")
grid_area = Definition("grid.area", title="Area", statement="Rows times columns.", source=derived("a product"),
                       defines=area, expr=rows.sym * cols.sym)
INPUT_TABLES = {"grid": {"meaning": "the shape of a grid",
                         "members": {"rows": {"default": "1", "source": "grid default: one row"},
                                     "cols": {"default": "1", "source": "grid default: one column"}}}}
INPUT_CONSTRAINTS = [{"id": "grid.rows_divide_cells", "what": "grid", "rule": "rows divides cells",
                      "relation": logic.IsInteger(cells.sym / rows.sym), "reason": "every row holds as many cells",
                      "hint": "choose rows among the divisors of cells", "source": "a test"}]
"""


def test_a_users_library_declares_its_own_table_and_rule(capsys, tmp_path) -> None:
    lib = tmp_path / "grid.py"
    lib.write_text(GRID_LIBRARY)
    scenario = tmp_path / "g.toml"
    scenario.write_text('[grid]\nrows = 4\n\n[values.cells]\nvalue = "12"\nsource = "x"\n')
    code, out, err = run_cli(capsys, ["eval", "grid_area", "--library", str(lib), "--scenario", str(scenario)])
    assert code == 0 and out.startswith("grid_area = 4\n"), err
    code, _, err = run_cli(capsys, ["eval", "grid_area", "--library", str(lib), "--scenario", str(scenario),
                                    "--set", "rows=5"])
    one_error_line(code, err)
    assert "impossible grid: rows divides cells does not hold (rows = 5, cells = 12)" in err


# a rule's remedy: a preset's other value in place of the one the rule found wrong (no LLM in sight)
SHOP_LIBRARY = """
from pathlib import Path
from derive import Quantity, logic
PRESET_DIRS = [Path(__file__).parent / "presets"]
speed = Quantity("speed", "v", "s", "the lap time a race is planned at")
speed_wet = Quantity("speed_wet", "v_w", "s", "the car's rated lap time on a wet track")
rated_for = Quantity("rated_for", "g", "1", "the grip the speed is rated for")
grip = Quantity("grip", "r", "1", "the road's grip")
INPUT_CONSTRAINTS = [{"id": "road.grip_as_rated", "what": "road", "rule": "grip >= rated_for",
                      "relation": logic.ge(grip.sym, rated_for.sym), "refuse": False,
                      "reason": "the road grips less than the speed is rated for", "source": "a test",
                      "remedies": [{"when": "grip < 1/2", "take": {"speed": "speed_wet"}, "set": {"rated_for": "1/4"},
                                    "reason": "a wet road: the vehicle's wet rating"}]}]
"""


def test_a_rules_remedy_takes_the_presets_other_value_only_from_the_same_preset(capsys, tmp_path) -> None:
    lib = tmp_path / "shop.py"
    lib.write_text(SHOP_LIBRARY)
    (tmp_path / "presets" / "hardware").mkdir(parents=True)
    (tmp_path / "presets" / "hardware" / "van.toml").write_text(
        'name = "van"\nkind = "hardware"\n'
        '[values.speed]\nvalue = "30 s"\nsource = "dry rating"\n'
        '[values.speed_wet]\nvalue = "40 s"\nsource = "wet rating"\n'
        '[values.rated_for]\nvalue = "1"\nsource = "dry"\n')
    library = load_library([str(lib)])
    wet = build_scenario(library, hardware="van", sets=["grip=0.3"])
    assert wet.value("speed") == 40 and wet.value("rated_for") == sp.Rational(1, 4)
    assert any(n.startswith("speed: 40 s, hardware van's speed_wet, in place of its speed 30 s") for n in wet.notes)
    assert not any("grip >= rated_for does not hold" in n for n in wet.notes)
    # a value given by hand is never replaced: the rule's note stands
    mine = build_scenario(library, hardware="van", sets=["grip=0.3", "speed=25 s"])
    assert mine.value("speed") == 25 and mine.value("rated_for") == 1
    assert any("grip >= rated_for does not hold" in n for n in mine.notes)
    # where the remedy's condition fails, nothing is replaced
    damp = build_scenario(library, hardware="van", sets=["grip=0.7"])
    assert damp.value("speed") == 30 and any("grip >= rated_for does not hold" in n for n in damp.notes)


def test_a_users_table_gives_a_quantity_from_its_members(capsys, tmp_path) -> None:
    """The engine's ``gives`` is no layout's: a grid table gives its cells as rows times columns."""
    lib = tmp_path / "grid.py"
    lib.write_text(GRID_LIBRARY.replace('"cols": {"default": "1", "source": "grid default: one column"}}}}',
                                        '"cols": {"default": "1", "source": "grid default: one column"}}, '
                                        '"gives": {"cells": "grid_area"}}}'))
    scenario = tmp_path / "g.toml"
    scenario.write_text("[grid]\nrows = 4\ncols = 3\n")
    code, out, err = run_cli(capsys, ["eval", "cells", "--library", str(lib), "--scenario", str(scenario)])
    assert code == 0 and out.startswith("cells = 12\n"), err
    code, _, err = run_cli(capsys, ["eval", "cells", "--library", str(lib), "--scenario", str(scenario),
                                    "--set", "cells=13"])  # typed by hand against the table: its rule decides
    one_error_line(code, err)
    assert "rows divides cells does not hold (rows = 4, cells = 13)" in err


def test_a_table_gives_a_derived_quantity_by_pinning_it(capsys, tmp_path) -> None:
    """A derived quantity a table gives is its definition without the table and the table's value with it: the
    serving library's rented chips (the lecture's n alone, every stage's chips under a layout) are one such."""
    lib = tmp_path / "grid.py"
    lib.write_text(GRID_LIBRARY.replace('"cols": {"default": "1", "source": "grid default: one column"}}}}',
                                        '"cols": {"default": "1", "source": "grid default: one column"}}, '
                                        '"gives": {"billed": "grid_area"}}}')
                   + 'billed_q = Quantity("billed", "b", "1", "cells billed")\n'
                     'billed = Definition("grid.billed", title="Billed", statement="The cells.", '
                     'source=derived("one bill per cell"), defines=billed_q, expr=cells.sym)\n')
    code, out, err = run_cli(capsys, ["eval", "billed", "--library", str(lib), "--set", "cells=12"])
    assert code == 0 and out.startswith("billed = 12\n"), err  # no table in use: the definition
    code, out, err = run_cli(capsys, ["eval", "billed", "--library", str(lib), "--set", "cells=12", "--set", "rows=4",
                                      "--set", "cols=6"])
    assert code == 0 and out.startswith("billed = 24\n"), err  # the table gives it, though cells was set later
    assert "pinned: billed = 24" in out


MALFORMED = {
    "relation as text": ("INPUT_CONSTRAINTS = [{'id': 'a', 'what': 'w', 'rule': 'r', 'reason': 'r', 'source': 's', "
                         "'relation': 'x > 0'}]", "built with derive.logic"),
    "unknown key": ("INPUT_CONSTRAINTS = [{'id': 'a', 'what': 'w', 'rule': 'r', 'reason': 'r', 'source': 's', "
                    "'relation': logic.gt(x.sym, 0), 'colour': 'red'}]", "unknown key 'colour'"),
    "no reason": ("INPUT_CONSTRAINTS = [{'id': 'a', 'what': 'w', 'rule': 'r', 'source': 's', "
                  "'relation': logic.gt(x.sym, 0)}]", "needs a text 'reason'"),
    "no source": ("INPUT_CONSTRAINTS = [{'id': 'a', 'what': 'w', 'rule': 'r', 'reason': 'r', "
                  "'relation': logic.gt(x.sym, 0)}]", "needs a source"),
    "units disagree": ("INPUT_CONSTRAINTS = [{'id': 'a', 'what': 'w', 'rule': 'r', 'reason': 'r', 'source': 's', "
                       "'relation': logic.le(x.sym, t.sym)}]", "INPUT_CONSTRAINTS 'a'"),
    "same id twice": ("C = {'id': 'a', 'what': 'w', 'rule': 'r', 'reason': 'r', 'source': 's', "
                      "'relation': logic.gt(x.sym, 0)}\nINPUT_CONSTRAINTS = [C, {**C, 'rule': 'other'}]", "twice"),
    "remedies not a list": ("INPUT_CONSTRAINTS = [{'id': 'a', 'what': 'w', 'rule': 'r', 'reason': 'r', 'source': 's', "
                            "'relation': logic.gt(x.sym, 0), 'remedies': {'when': 'x > 1'}}]", "list of tables"),
    "remedy without when": ("INPUT_CONSTRAINTS = [{'id': 'a', 'what': 'w', 'rule': 'r', 'reason': 'r', 'source': 's', "
                            "'relation': logic.gt(x.sym, 0), 'remedies': [{'take': {'x': 'x'}, 'reason': 'r'}]}]",
                            "needs a text 'when'"),
    "remedy takes nothing": ("INPUT_CONSTRAINTS = [{'id': 'a', 'what': 'w', 'rule': 'r', 'reason': 'r', 'source': 's', "
                             "'relation': logic.gt(x.sym, 0), 'remedies': [{'when': 'x > 1', 'reason': 'r'}]}]",
                             "needs a 'take'"),
    "remedy takes across units": ("INPUT_CONSTRAINTS = [{'id': 'a', 'what': 'w', 'rule': 'r', 'reason': 'r', "
                                  "'source': 's', 'relation': logic.gt(x.sym, 0), 'remedies': [{'when': 'x > 1', "
                                  "'take': {'x': 't_q'}, 'reason': 'r'}]}]", "different units"),
    "remedy when in wrong units": ("INPUT_CONSTRAINTS = [{'id': 'a', 'what': 'w', 'rule': 'r', 'reason': 'r', "
                                   "'source': 's', 'relation': logic.gt(x.sym, 0), 'remedies': [{'when': 't_q > 3 "
                                   "byte', 'take': {'x': 'x'}, 'reason': 'r'}]}]", "remedies\\[0\\]"),
    "remedy unknown key": ("INPUT_CONSTRAINTS = [{'id': 'a', 'what': 'w', 'rule': 'r', 'reason': 'r', 'source': 's', "
                           "'relation': logic.gt(x.sym, 0), 'remedies': [{'when': 'x > 1', 'take': {'x': 'x'}, "
                           "'reason': 'r', 'then': 1}]}]", "unknown key 'then'"),
    "table not a mapping": ("INPUT_TABLES = ['x']", "INPUT_TABLES must be a mapping"),
    "member no quantity": ("INPUT_TABLES = {'t': {'meaning': 'm', 'members': {'y': {}}}}", "'y' is no quantity"),
    "default of the wrong unit": ("INPUT_TABLES = {'t': {'meaning': 'm', 'members': {'t_q': {'default': '3 byte', "
                                  "'source': 's'}}}}", "is byte but t_q is s"),
    "default without source": ("INPUT_TABLES = {'t': {'meaning': 'm', 'members': {'x': {'default': '1'}}}}",
                               "'default' and 'source'"),
    "gives not a mapping": ("INPUT_TABLES = {'t': {'meaning': 'm', 'members': {'x': {}}, 'gives': ['t_q']}}",
                            "'gives' must map"),
    "gives a member": ("INPUT_TABLES = {'t': {'meaning': 'm', 'members': {'x': {}}, 'gives': {'x': 'x'}}}",
                       "an input or derived quantity of the library outside the table"),
    "gives across units": ("INPUT_TABLES = {'t': {'meaning': 'm', 'members': {'x': {}}, 'gives': {'t_q': 'x'}}}",
                           "the units differ"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_input_declarations_are_a_library_error(case, tmp_path) -> None:
    from derive.errors import DeriveError

    text, words = MALFORMED[case]
    lib = tmp_path / "decl.py"
    lib.write_text("from derive import Quantity, logic\nx = Quantity('x', 'x', '1', 'a count')\n"
                   "t = Quantity('t_q', 't', 's', 'a time')\n" + text + "\n")
    with pytest.raises(DeriveError, match=words):
        load_library([str(lib)])


def test_show_names_the_rules_of_a_degree(capsys) -> None:
    code, out, _ = run_cli(capsys, ["show", "tp", "--library", "serving", "--json"])
    info = json.loads(out)
    assert code == 0 and info["input_table"] == "layout"
    assert {"tp divides query_heads (layouts.tp_divides_query_heads)",
            "chips = stage_chips (layouts.chips_are_the_stage)"} <= set(info["rules"])


def test_more_stages_than_the_lectures_micro_batches_is_a_note() -> None:
    """The failing case hypothesis found: pp = 5 on the lecture's 4 micro-batches, 6 layers."""
    sc = build_scenario(LIB, sets=["pp=5", "layers=6"])
    notes = check_input_constraints(LIB, sc.values, sc.pinned)
    assert {text.split(" does not hold")[0] for _, text in notes} == {"pp divides layers", "microbatches >= stages"}


def test_a_value_the_layout_gives_names_its_member_once():
    # the documents' scenario table read "the layout: stages = pp = pp"
    from derive.model.loader import load_library
    from derive.model.scenario import build_scenario

    lib = load_library(["serving"])
    sc = build_scenario(lib, sets=["tp=2", "pp=2"])
    assert sc.values["stages"].source == "the layout: stages = pp"
    assert sc.values["chips"].source.startswith("the layout: chips = stage_chips = ")
