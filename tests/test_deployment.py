"""Your chip and your model first: a deployment scenario inherits no lecture value unsaid.

Worked examples: Llama 3.1 70B in bf16 on one 8-chip H100 node at batch 64 fits contexts up to 23.79k tokens
(141 GB of weights, 640 GB of HBM, 327,680 KV bytes per token); gpt-oss-120b with one 131,072-token sequence
fits one 80 GB chip (its publisher: "fits into a single 80GB GPU").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sympy as sp

from derive.cli import main
from derive.errors import ScenarioError
from derive.model.scenario import build_scenario
from derive.whatif.feasibility import feasibility
from derive.whatif.margin import margin

CONFIGS = Path(__file__).parent / "fixtures" / "configs"
LLAMA_70B = str(CONFIGS / "llama3_70b.json")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# the lecture keeps its story ------------------------------------------------------------------------------

def test_lecture_scenario_keeps_its_numbers(lecture_library) -> None:
    sc = build_scenario(lecture_library)
    assert (sc.value("stages"), sc.value("microbatches"), sc.value("batch")) == (4, 4, 2000)
    assert "deployment default" not in sc.layers and sc.notes == ()


@pytest.mark.parametrize("options", [{"hardware": "h100-sxm"}, {"model": "llama3-70b"},
                                     {"hardware": "h100-sxm", "model": LLAMA_70B}])
def test_a_deployment_does_not_inherit_the_lecture_story(lecture_library, options) -> None:
    sc = build_scenario(lecture_library, **options)
    for name, value in (("stages", 1), ("microbatches", 1), ("batch", 1)):
        assert sc.value(name) == value and sc.values[name].origin == "deployment default"
        assert any(n.startswith(f"{name} = ") for n in sc.notes_for([name]))  # each one said, with its origin


def test_every_lecture_value_left_carries_a_note(lecture_library) -> None:
    sc = build_scenario(lecture_library, hardware="h100-sxm", model="llama3-70b")
    left = [n for n, v in sc.values.items() if v.origin == "scenario lecture"]
    assert "chip_price" in left and "stages" not in left
    for name in left:
        assert any(name in n and "lecture's value" in n for n in sc.notes_for([name])), name


@pytest.mark.parametrize("hardware, chips", [("tpu-v5p", "8,960"), ("h100-sxm", "8"), ("gb200-nvl72", "72")])
def test_a_presets_chip_count_is_said_where_used(lecture_library, hardware, chips) -> None:
    """A chip preset's chips is its whole node, rack or pod: every value a command prints for one model over
    them (a decode floor of microseconds over a TPU pod) says so, and a --set of chips answers it."""
    sc = build_scenario(lecture_library, hardware=hardware, model="gemma3-27b")
    said = [n for n in sc.notes_for(["chips"]) if n.startswith("chips = ")]
    assert len(said) == 1 and f"chips = {chips} from hardware {hardware}" in said[0] and "--set chips" in said[0]
    assert not any(n.startswith("chips = ") for n in sc.notes_for(["flops"]))
    mine = build_scenario(lecture_library, hardware=hardware, model="gemma3-27b", sets=["chips=1"])
    assert not any(n.startswith("chips = ") for n in mine.notes_for(["chips"]))


def test_the_card_of_a_pod_says_its_chip_count(capsys) -> None:
    code, out, _ = run(capsys, "card", "--hardware", "tpu-v5p", "--model", "gemma3-27b")
    assert code == 0 and "note: chips = 8,960 from hardware tpu-v5p" in out


def test_notes_show_only_the_inputs_used(lecture_library) -> None:
    sc = build_scenario(lecture_library, hardware="h100-sxm", model="llama3-70b")
    assert not any("chip_price" in n for n in sc.notes_for(["flops", "hbm_bandwidth"]))
    assert any("chip_price" in n for n in sc.notes_for(["chip_price"]))


@pytest.mark.parametrize(("model", "noted"), [("llama3-70b", False), ("deepseek-v3", True)])
def test_a_note_shows_only_for_an_input_the_value_depends_on(capsys, model, noted) -> None:
    """A dense model has no skipped experts: the lecture's expert_read_fraction cannot change its step time,
    so its note stays quiet there and shows for an MoE model, where it can."""
    code, out, _ = run(capsys, "eval", "step_time", "--hardware", "h100-sxm", "--model", model, "--json")
    data = json.loads(out)
    assert code == 0 and ("expert_read_fraction" in data["inputs"])
    assert any(n.startswith("expert_read_fraction") for n in data["notes"]) is noted


def test_a_set_value_silences_the_note_it_answers(lecture_library) -> None:
    sc = build_scenario(lecture_library, hardware="h100-sxm", model="llama3-70b", sets=["context=8192 token/seq"])
    assert not any(n.startswith("context") for n in sc.notes)
    plain = build_scenario(lecture_library, hardware="h100-sxm", model="llama3-70b")
    assert any(n.startswith("context") for n in plain.notes)  # the twin: without --set the note is there


# worked examples ------------------------------------------------------------------------------------------

def test_llama_70b_longest_context_on_one_h100_node(lecture_library) -> None:
    sc = build_scenario(lecture_library, hardware="h100-sxm", model=LLAMA_70B, sets=["batch=64 seq"])
    m = margin(lecture_library, sc, "capacity.memory_fits_in_hbm", "context", verify=False)
    (iv,) = m.intervals
    assert iv.high == sp.Rational(7612537, 320) and round(float(iv.high)) == 23_789


def test_llama_70b_longest_context_command_line(capsys) -> None:
    code, out, _ = run(capsys, "margin", "capacity.memory_fits_in_hbm", "--vary", "context", "--hardware", "h100-sxm",
                       "--model", LLAMA_70B, "--set", "batch=64 seq")
    assert code == 0 and "23.789k token/seq]" in out  # the end printed inside the set: 23.79k does not fit


@pytest.mark.parametrize(("batch", "fits"), [(1, True), (4, False)])
def test_gpt_oss_120b_one_sequence_fits_one_chip(lecture_library, batch, fits) -> None:
    # one stage with the lecture's four micro-batches: only one micro-batch is in flight per stage
    sc = build_scenario(lecture_library, scenario="lecture", hardware="h100-sxm", model="gpt-oss-120b",
                        sets=["chips=1", f"batch={batch} seq", "stages=1", "context=131072 token/seq"])
    assert sc.value("microbatches") == 4
    assert feasibility(lecture_library, sc).feasible is fits


# scenario files name their chip and model -------------------------------------------------------------------

def _deployment_file(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "mine.toml"
    path.write_text(f'hardware = "h100-sxm"\nmodel = "llama3-70b"\n{extra}'
                    '[values.batch]\nvalue = "64 seq"\nsource = "our serving config"\n'
                    '[values.context]\nvalue = "8192 token/seq"\nsource = "our serving config"\n')
    return path


def test_scenario_file_names_hardware_and_model(lecture_library, tmp_path) -> None:
    sc = build_scenario(lecture_library, scenario=str(_deployment_file(tmp_path)))
    assert sc.value("hbm_capacity") == 80 * 10**9 and sc.value("layers") == 80
    assert sc.value("batch") == 64 and sc.value("context") == 8192  # the file's own values win over the model's
    assert sc.value("stages") == 1 and "chip_price" not in sc.values  # no lecture value: a price is required


def test_scenario_file_command_line_overrides_its_presets(lecture_library, tmp_path) -> None:
    sc = build_scenario(lecture_library, scenario=str(_deployment_file(tmp_path)), hardware="h200")
    assert sc.value("hbm_capacity") == 141 * 10**9


def test_diff_against_a_deployment_file(capsys, tmp_path) -> None:
    code, out, _ = run(capsys, "diff", "--against", str(_deployment_file(tmp_path)), "--json")
    assert code in (0, 1) and "changed" in json.loads(out)


def test_scenario_file_preset_name_must_be_text(lecture_library, tmp_path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("hardware = 3\n")
    with pytest.raises(ScenarioError, match="must name a preset"):
        build_scenario(lecture_library, scenario=str(path))


# a chip's flops is quoted at one datatype ---------------------------------------------------------------------

# A model stored narrower than that datatype takes the chip preset's own rate for it (a floor reads the fastest rate
# the weights' datatype allows); where the chip quotes none, or the rate is the user's, flops stays with a note.
@pytest.mark.parametrize(("hardware", "model", "sets", "tflops", "taken", "noted"), [
    ("h100-sxm", "deepseek-v3", (), 1979, "flops_fp8", False),     # FP8 weights: the chip's FP8 rate
    ("h100-sxm-fp8", "deepseek-v3", (), 1979, None, False),        # the FP8 preset: nothing to replace
    ("h100-sxm", "llama3-70b", (), 989, None, False),              # BF16 weights, the BF16 rate
    ("b200-fp8", "gpt-oss-120b", (), 9000, "flops_fp4", False),    # MXFP4 experts: the chip's FP4 rate
    ("h100-sxm", "gpt-oss-120b", (), 1979, "flops_fp8", True),     # no FP4 rate on an H100: FP8, and the note
    ("a100-80gb", "deepseek-v3", (), 624, "flops_int8", False),    # no FP8 units on an A100: its INT8 rate
    ("tpu-v4", "deepseek-v3", (), 275, None, True),                # no 8-bit rate above BF16 on a v4: the note
    ("h100-sxm", "deepseek-v3", ("flops=989 TFLOP/s",), 989, None, True),  # the user's rate is kept
    ("tpu-v6e", "deepseek-v3", (), 1836, "flops_int8", False),     # 8-bit weights: INT8 1,836 beats FP8 918
    ("tpu-v5e", "deepseek-v3", (), 393, "flops_int8", False),      # no FP8 rate on a v5e: its INT8 one
    ("tpu-v5p", "deepseek-v3", (), 918, "flops_int8", False),      # FP8 no faster than BF16 on a v5p: INT8
    ("trn2", "deepseek-v3", (), 1299, "flops_fp8", False),         # Trainium2's FP8 1,299 (not 2 x 667)
    ("trn2", "gpt-oss-120b", (), 1299, "flops_fp8", True),         # no FP4 rate on Trainium2: FP8, and the note
    ("trn3", "gpt-oss-120b", (), 2517, "flops_fp4", False),        # MXFP4 experts on Trainium3: its MXFP4 rate
    ("trn3-fp8", "deepseek-v3", (), 2517, None, False),            # the FP8 preset: nothing to replace
])
def test_weights_narrower_than_the_flops_datatype_take_the_chips_rate_or_get_a_note(
        lecture_library, hardware, model, sets, tflops, taken, noted) -> None:
    sc = build_scenario(lecture_library, hardware=hardware, model=model, sets=sets)
    assert sc.value("flops") == tflops * 10**12
    replaced = [n for n in sc.notes if n.startswith("flops: ") and f"hardware {hardware}'s flops_" in n]
    assert [taken] == [n.split("'s ")[1].split(",")[0] for n in replaced] if taken else not replaced
    if taken:
        assert "a floor reads the fastest rate" in replaced[0] and "--set flops=" in replaced[0]
    said = [n for n in sc.notes if n.startswith("bytes_per_param >= flops_datatype_bytes does not hold")]
    assert bool(said) is noted
    if noted:
        assert "may sit above a measurement" in said[0] and "--set flops=" in said[0]


_PRESETS = Path(__file__).parents[1] / "theorems" / "presets"
HARDWARE_PRESETS = sorted(p.stem for p in (_PRESETS / "hardware").glob("*.toml"))
MODEL_PRESETS = sorted(p.stem for p in (_PRESETS / "models").glob("*.toml"))
# each rate's datatype, bytes per value
_RATES = {"flops_fp4": sp.Rational(1, 2), "flops_fp8": 1, "flops_int8": 1, "flops_bf16": 2}


@pytest.mark.parametrize("hardware", HARDWARE_PRESETS)
def test_every_chip_and_model_read_the_fastest_rate_the_weights_allow(lecture_library, hardware) -> None:
    """For every pair of presets: flops is the fastest of the chip's quoted rates whose datatype the weights may
    run at (FP4 under 1 byte per weight on average, FP8 under 2, BF16 always) or the preset's own flops, never
    less; and the rule's note is printed exactly where the weights stay narrower than flops' datatype."""
    for model in MODEL_PRESETS:
        sc = build_scenario(lecture_library, hardware=hardware, model=model)
        chip = build_scenario(lecture_library, hardware=hardware)
        width = sc.value("bytes_per_param")
        allowed = [chip.value(r) for r, w in _RATES.items() if r in chip.values and (w == 2 or width < 2 * w)]
        assert sc.value("flops") == max([chip.value("flops"), *allowed]), (hardware, model)
        noted = any(n.startswith("bytes_per_param >= flops_datatype_bytes does not hold") for n in sc.notes)
        assert noted is bool(width < sc.value("flops_datatype_bytes")), (hardware, model)


def test_a_measured_compute_rate_is_never_replaced_by_a_spec_sheet_rate(lecture_library) -> None:
    sc = build_scenario(lecture_library, hardware="h100-sxm", model="deepseek-v3", measured=True)
    assert sc.values["flops"].origin.startswith("measured") and sc.value("flops") < 989 * 10**12
    assert any(n.startswith("bytes_per_param >= flops_datatype_bytes does not hold") for n in sc.notes)


# a pipeline with fewer micro-batches than stages ----------------------------------------------------------------

@pytest.mark.parametrize(("sets", "noted"), [
    ((), False),                                     # the lecture's pipeline: 4 stages, 4 micro-batches
    (("stages=2", "microbatches=1"), True),          # a stage idle every step
    (("stages=2", "microbatches=2"), False),         # a full pipeline
    (("stages=1", "microbatches=1"), False),         # one node, no pipeline
    (("stages=4", "microbatches=8"), False),         # more than full: the rest wait, none idle
])
def test_a_pipeline_not_kept_full_says_which_cost_counts_every_stage(lecture_library, sets, noted) -> None:
    sc = build_scenario(lecture_library, sets=sets)
    said = [n for n in sc.notes if n.startswith("microbatches >= stages does not hold")]
    assert bool(said) is noted
    if noted:
        assert "pipelined_cost_per_token rents every stage" in said[0] and "--set microbatches=" in said[0]
        # the two costs differ by stages / microbatches exactly where the note is given
        from derive.model.evaluate import evaluate

        cost, piped = (evaluate(lecture_library, sc, q).exact for q in ("cost_per_token", "pipelined_cost_per_token"))
        assert piped == 2 * cost


# a deployment's micro-batches fill its pipeline unless told otherwise ------------------------------------------

@pytest.mark.parametrize(("library", "sets", "microbatches"), [
    ("lecture", (), 1),                              # one node, no pipeline
    ("lecture", ("stages=4",), 4),                   # stages by hand: one micro-batch each
    ("serving", ("tp=8", "pp=2"), 2),                # a layout of two stages
    ("serving", ("tp=8", "pp=2", "microbatches=1"), 1),  # a value given by hand wins, and the rule says so
])
def test_deployment_microbatches_follow_the_stages(library, sets, microbatches) -> None:
    from derive.model.loader import load_library

    lib = load_library([library])
    sc = build_scenario(lib, hardware="h100-sxm", model="llama3-405b", sets=list(sets))
    assert sc.value("microbatches") == microbatches
    idle = any(n.startswith("microbatches >= stages does not hold") for n in sc.notes)
    assert idle is bool(microbatches < sc.value("stages"))
    if "microbatches=1" not in sets:
        assert any(n.startswith(f"microbatches = {microbatches} (pipeline_fill_microbatches at this scenario)")
                   for n in sc.notes_for(["microbatches"]))


def test_a_full_pipeline_by_default_costs_what_one_stage_does(capsys) -> None:
    # Llama 3 405B on two H100 nodes (tp=8, pp=2): two micro-batches in flight, so the pipelined cost per token is
    # the one-stage cost (pipeline.pipeline_neutrality); one micro-batch by hand pays for the idle stage, twice
    base = ["eval", "pipelined_cost_per_token", "cost_per_token", "--json", "--library", "serving",
            "--hardware", "h100-sxm", "--model", "llama3-405b", "--set", "tp=8", "--set", "pp=2"]
    rows = []
    for extra in ([], ["--set", "microbatches=1"]):
        assert main([*base, *extra]) == 0
        rows.append({r["name"]: r["exact"] for r in json.loads(capsys.readouterr().out)["values"]})
    full, one = rows
    assert full["pipelined_cost_per_token"] == full["cost_per_token"]
    assert sp.Rational(one["pipelined_cost_per_token"]) == 2 * sp.Rational(full["pipelined_cost_per_token"])


def test_a_layout_file_runs_as_many_micro_batches_as_stages(tmp_path) -> None:
    from derive.model.loader import load_library

    path = tmp_path / "pp4.toml"
    path.write_text('name = "pp4"\nhardware = "h100-sxm"\nmodel = "llama3-405b"\n[layout]\ntp = 4\npp = 4\n')
    sc = build_scenario(load_library(["serving"]), scenario=str(path))
    assert (sc.value("stages"), sc.value("microbatches")) == (4, 4)


@pytest.mark.parametrize("table, words", [
    ('[said_from_presets]\nchips = 3\n', '[said_from_presets] must be a table of quantity = "what it means"'),
    ('said_from_presets = "chips"\n', '[said_from_presets] must be a table of quantity = "what it means"'),
    ('[said_from_presets]\nchipz = "the pod"\n', "unknown quantity 'chipz'"),
])
def test_a_malformed_said_from_presets_table_is_one_error_line(capsys, tmp_path, table, words) -> None:
    """A library's own deployment.toml whose [said_from_presets] is not a table of quantity = "what it means"
    is refused where it is read: one line naming the file, exit 2, nothing printed."""
    import re

    lecture = Path(__file__).resolve().parents[1] / "theorems" / "presets" / "deployment.toml"
    text = re.sub(r"\[said_from_presets\]\n(?:.+\n)*", "", lecture.read_text())
    assert "said_from_presets" not in text  # the lecture's own table removed, the planted one added below
    (tmp_path / "presets").mkdir()
    (tmp_path / "presets" / "deployment.toml").write_text(table + text if table.startswith("said") else text + "\n"
                                                          + table)
    code, out, err = run(capsys, "eval", "step_time", "--library", str(tmp_path), "--library", "lecture",
                         "--hardware", "h100-sxm", "--model", "llama3-8b")
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert words in err and "deployment.toml" in err


def test_a_scenario_files_model_path_is_read_beside_it_else_from_the_working_folder(lecture_library, tmp_path,
                                                                                     monkeypatch) -> None:
    """``model = "configs/x.json"`` names a file beside the scenario file where there is one (so a folder of
    scenarios travels with its configs), else one from the working folder, as ``--model`` reads it."""
    import shutil

    config = Path(__file__).parent / "fixtures" / "configs" / "deepseek_v3.json"
    (tmp_path / "scenarios" / "configs").mkdir(parents=True)
    (tmp_path / "configs").mkdir()
    shutil.copy(config, tmp_path / "scenarios" / "configs" / "beside.json")
    shutil.copy(config, tmp_path / "configs" / "cwd.json")
    monkeypatch.chdir(tmp_path)
    for name in ("beside", "cwd"):
        path = tmp_path / "scenarios" / f"{name}.toml"
        path.write_text(f'hardware = "h200"\nmodel = "configs/{name}.json"\n')
        sc = build_scenario(lecture_library, scenario=str(path))
        assert sc.values["params_total"].value > 6 * 10**11, name  # DeepSeek-V3's 671B
    path.write_text('hardware = "h200"\nmodel = "configs/nowhere.json"\n')
    with pytest.raises(ScenarioError, match="nowhere.json"):
        build_scenario(lecture_library, scenario=str(path))


def test_trainium2_decode_floor_by_hand(lecture_library, capsys) -> None:
    """Four Trainium2 chips (AWS's chip page: 2.9 TB/s each) read Llama 3.1 70B's 69,501,714,432 active BF16 weights
    in 2 x 69.50e9 B / 11.6 TB/s = 11.98 ms; the preset gives no NeuronLink latency, so a tensor-parallel latency
    asks for it in one line."""
    sc = build_scenario(lecture_library, hardware="trn2", model="llama3-70b", sets=["chips=4"])
    assert sc.value("hbm_capacity") == 96 * 2**30
    assert main(["eval", "weight_fetch_time", "--json", "--hardware", "trn2", "--model", "llama3-70b",
                 "--set", "chips=4"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert sp.Rational(got["exact"]) == sp.Rational(2 * 69_501_714_432, 4 * 29 * 10**11) and got["unit"] == "s"
    assert got["display"] == "11.98 ms"
    assert main(["eval", "tp_allreduce_latency", "--library", "serving", "--hardware", "trn2", "--model", "llama3-70b",
                 "--set", "tp=4"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "scaleup_latency" in err


_OWN_CHIP = """model = "{model}"
[values.flops]
value = "1835 TFLOP/s"
source = "a chip typed from its spec sheet: the BF16 dense rate"
[values.hbm_bandwidth]
value = "3.7 TB/s"
source = "spec sheet"
[values.hbm_capacity]
value = "128 GB"
source = "spec sheet"
"""


@pytest.mark.parametrize(("extra", "warned"), [("", True), ('[values.flops_datatype_bytes]\nvalue = "1 B/param"\n'
                                                           'source = "my flops is the FP8 rate"\n', False)])
def test_a_chip_typed_by_hand_with_narrower_weights_is_told_its_flops_may_be_the_bf16_rate(capsys, tmp_path, extra,
                                                                                            warned) -> None:
    """A chip typed by hand gives flops without its datatype: the deployment reads it as the BF16 rate, so FP8
    weights (DeepSeek-V3's published FP8 checkpoint) get the note that a compute floor at that rate may sit above
    a measurement; saying the rate is FP8 (flops_datatype_bytes = 1) answers it."""
    path = tmp_path / "chip.toml"
    path.write_text(_OWN_CHIP.format(model="deepseek-v3") + extra)  # the preset: FP8 weights (quantization_config)
    assert main(["card", "--scenario", str(path), "--set", "chips=8", "--json", "--no-cache"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any("bytes_per_param >= flops_datatype_bytes does not hold" in n for n in notes) is warned


@pytest.mark.parametrize("name", ["cost_per_token", "chip_price"])
def test_show_says_which_lecture_value_a_printed_value_read(capsys, name) -> None:
    """`derive show` printed the cost per token under an H100 and Llama 3 70B from the lecture's $2/h rent without
    the note `derive eval` gives; a definition and a quantity alike now carry the notes of the inputs they read."""
    argv = ["show", name, "--hardware", "h100-sxm", "--model", "llama3-70b"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "value: $" in out and "note: chip_price = 2 USD/h is the lecture's value" in out
    assert main([*argv, "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any(n.startswith("chip_price = 2 USD/h is the lecture's value") for n in notes)
    assert main(["show", "critical_batch", "--hardware", "h100-sxm", "--model", "llama3-70b"]) == 0
    assert "chip_price" not in capsys.readouterr().out  # a value that does not read the rent says nothing of it


_RENT = "chip_price = 2 USD/h is the lecture's value"


@pytest.mark.parametrize("argv", [
    ["sweep", "cost_per_token", "--vary", "batch=1:512:3", "--hardware", "mi300x", "--model", "qwen3-235b-a22b"],
    ["sweep", "cost_per_token", "--presets"],
    ["margin", "roofline.cost_per_token_and_floor", "--vary", "batch", "--hardware", "mi300x", "--model",
     "qwen3-235b-a22b", "--set", "expert_read_fraction=1"],
])
def test_sweeps_and_margins_say_which_lecture_value_they_read(capsys, argv) -> None:
    """`derive sweep cost_per_token` at an MI300X priced it at the lecture's $2/h with only the infeasible note,
    a margin alike: both now carry the notes of the inputs their targets read, as `derive eval` does."""
    def said(args: list[str]) -> str:  # a sweep's notes are on stderr, beside its CSV
        assert main([*args, "--no-cache"]) == 0
        return "".join(capsys.readouterr())

    assert _RENT in said(argv)
    assert _RENT not in said([*argv, "--set", "chip_price=$3/h"])  # the user's own rent: nothing to say
    if argv[0] == "sweep":  # a target that does not read the rent says nothing of it
        assert "chip_price" not in said([a.replace("cost_per_token", "critical_batch") for a in argv])


@pytest.mark.parametrize(("hardware", "model", "said"), [
    ("b200-fp4", "llama3-70b", True),  # BF16 weights at the FP4 rate: B* four times too high, now said
    ("h100-sxm-fp8", "llama3-70b", True),
    ("b200-fp4", "deepseek-v3", True),  # FP8 weights at the FP4 rate
    ("h100-sxm-fp8", "deepseek-v3", False),  # FP8 averaging 1.003 B (BF16 norms, block scales): its own rate
    ("b200-fp4", "gpt-oss-120b", False),  # MXFP4 at the FP4 rate
    ("b200", "llama3-70b", False),
])
def test_weights_wider_than_the_chips_rate_are_said(capsys, hardware, model, said) -> None:
    assert main(["eval", "critical_batch", "--hardware", hardware, "--model", model, "--no-cache"]) == 0
    out = "".join(capsys.readouterr())
    assert ("bytes_per_param < 2 * flops_datatype_bytes does not hold" in out) is said, out


def test_a_counterexample_says_which_values_are_the_claims_own(capsys) -> None:
    """At a user's chip and model, a refuted instance claim printed the trillion parameters its own hypotheses
    fix beside the user's values, unmarked: a reader took them for their model's."""
    assert main(["check", "pipeline.capacity_surplus_inference", "--hardware", "mi300x", "--model",
                 "qwen3-235b-a22b", "--set", "chips=1", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "params_total = 1T param (the claim's own hypothesis)" in out
    assert "hbm_capacity = 192 GB\n" in out  # the chip's own value: no mark
