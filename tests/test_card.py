"""derive card, derive list --quantities, and eval of a claim: one-command answers with their claims."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp

import derive
from derive.cli import main
from derive.errors import DeriveError

LLAMA_70B = str(Path(__file__).parent / "fixtures" / "configs" / "llama3_70b.json")
NODE = ("--hardware", "h100-sxm", "--model", LLAMA_70B, "--set", "batch=64 seq")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_card_json_rows_rest_on_declarations(capsys) -> None:
    code, out, _ = run(capsys, "card", *NODE, "--json", "--no-cache")
    assert code == 0
    data = json.loads(out)
    rows = {r["name"]: r for r in data["rows"]}
    # the longest context at batch 64 on one node, 23,789.18 tokens: printed no higher than it is (23.79k would not fit)
    assert rows["context"]["display"] == "23.789k token/seq"
    assert rows["context"]["decl"] == "capacity.memory_fits_in_hbm"
    assert rows["weight_fetch_time_floor"]["decl"] == "roofline.latency_floor"
    assert rows["weight_fetch_time_floor"]["verdict"] == "proved" and rows["weight_fetch_time_floor"]["unit"] == "s"
    assert rows["critical_batch"]["verdict"] == "proved"
    assert rows["pipelined_cost_per_token"]["kind"] == "definition"
    # the model's 131,072-token context does not fit at batch 64: said, with the bound
    assert data["feasibility"]["feasible"] is False


def test_card_text_and_markdown(capsys) -> None:
    code, out, _ = run(capsys, "card", *NODE, "--set", "context=8192 token/seq", "--no-cache")
    assert code == 0 and "batching.batch_optimum (proved)" in out and "infeasible" not in out
    code, out, _ = run(capsys, "card", *NODE, "--format", "md", "--no-cache")
    assert code == 0 and "| answer | value | rests on | verdict |" in out and "`roofline.latency_floor`" in out


def test_list_quantities_names_inputs_and_derived(capsys) -> None:
    code, out, _ = run(capsys, "list", "--quantities", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert code == 0
    for name in ("batch", "chip_price", "stages"):
        assert rows[name]["kind"] == "input" and rows[name]["meaning"]
    assert rows["critical_batch"]["kind"] == "derived" and rows["critical_batch"]["definition"]
    assert rows["chip_price"]["unit"] == "USD/h"


@pytest.mark.parametrize("name", ["latency_floor", "roofline.latency_floor"])
def test_eval_of_a_claim_names_its_quantities(capsys, name) -> None:
    code, _, err = run(capsys, "eval", name)
    assert code == 2 and "is a claim" in err and "derive eval weight_fetch_time" in err


def test_api_evaluate_of_a_claim_says_the_same() -> None:
    with pytest.raises(DeriveError, match="is a claim") as info:
        derive.evaluate("latency_floor")
    assert "weight_fetch_time" in (info.value.hint or "")


def test_longest_context_ends_at_the_models_maximum_and_says_what_memory_alone_holds(capsys) -> None:
    # at batch 1 on one node a 70B model's memory holds far more than its 131,072-token maximum: the answer is the
    # maximum (the longest context that fits and that the model serves), the note names the bound that ends it and
    # what the memory claim alone would allow, so nobody reads 1.5M tokens as usable context
    code, out, _ = run(capsys, "card", "--hardware", "h100-sxm", "--model", "llama3-70b", "--set", "batch=1 seq",
                       "--json", "--no-cache")
    row = {r["name"]: r for r in json.loads(out)["rows"]}["context"]
    assert code == 0 and row["shown"] == "131.07k token/seq" and row["exact"] == "131072"
    assert row["note"] == ("ends at a feasibility bound, context <= max_context with max_context = 131.1k token/seq "
                           "(capacity.context_within_model); capacity.memory_fits_in_hbm alone holds up to "
                           "1.5225M token/seq")
    code, out, _ = run(capsys, "card", *NODE, "--json", "--no-cache")  # 23.79k is below the model's maximum
    display = {r["name"]: r for r in json.loads(out)["rows"]}["context"]["display"]
    assert "feasibility bound" not in display and "more than" not in display


def test_a_memory_with_no_upper_end_is_capped_by_the_models_maximum(capsys) -> None:
    # a model whose cache is a fixed state per sequence (a made-up recurrent one) fits any context in memory: the
    # margin has no upper end, and the card answers with the model's maximum, not "no limit"
    code, out, _ = run(capsys, "card", "--hardware", "h100-sxm", "--model", "llama3-8b", "--set", "batch=1 seq",
                       "--set", "kv_bytes_per_token=0 B/token", "--set", "kv_state_bytes=1 MB/seq", "--json",
                       "--no-cache")
    row = {r["name"]: r for r in json.loads(out)["rows"]}["context"]
    assert code == 0 and row["exact"] == "131072", row
    assert row["note"].endswith("capacity.memory_fits_in_hbm alone holds with no upper end")


def test_the_cap_is_each_feasibility_bound_on_the_quantity_itself() -> None:
    from derive.model.loader import load_library
    from derive.model.scenario import build_scenario
    from derive.whatif.feasibility import upper_limits

    lib = load_library(["lecture"])
    sc = build_scenario(lib, hardware="h100-sxm", model="llama3-70b")
    [limit] = upper_limits(lib, sc, "context")
    assert (limit.claim, limit.relation, limit.value, limit.strict) == \
        ("capacity.context_within_model", "context <= max_context", 131072, False)
    assert upper_limits(lib, sc, "batch") == []  # memory bounds batch only through a sum: not solved for


def test_longest_context_past_the_scenarios_own_context_within_the_model_maximum(capsys) -> None:
    # a maximum set far out is not broken: the card still says the margin's end exceeds the scenario's context
    code, out, _ = run(capsys, "card", "--hardware", "h100-sxm", "--model", "llama3-8b", "--set", "batch=1 seq",
                       "--set", "context=1000 token/seq", "--set", "max_context=100000000 token/seq", "--json",
                       "--no-cache")
    display = {r["name"]: r for r in json.loads(out)["rows"]}["context"]["display"]
    assert code == 0 and "more than the scenario's 1,000 token/seq, from --set" in display


def test_serving_card_gives_the_ttft_floor_or_names_the_input_it_needs(capsys) -> None:
    """The serving library's card adds the TTFT floor; without a prompt length the row says which --set it
    needs (the other rows still answer), with one it is one request's prefill floor: for Llama-3-70B on one
    8 x H100 node, 8,192 tokens cost 2 x 68.45B x 8,192 FLOPs and the 1.05B output head once (for the last
    token) at 7.9 PFLOP/s, 141.7 ms (attention left out)."""
    argv = ["card", "--library", "serving", "--hardware", "h100-sxm", "--model", "llama3-70b", "--json"]
    code, out, _ = run(capsys, *argv)
    rows = {r["name"]: r for r in json.loads(out)["rows"]}
    assert code == 0 and rows["request_ttft_floor"]["display"] == "needs --set prefill_tokens=..."
    assert rows["request_ttft_floor"]["exact"] is None and rows["weight_fetch_time_floor"]["exact"] is not None
    code, out, _ = run(capsys, *argv, "--set", "prefill_tokens=8192 token/seq")
    row = {r["name"]: r for r in json.loads(out)["rows"]}["request_ttft_floor"]
    seconds = float(sp.Rational(row["exact"]))
    assert code == 0 and row["decl"] == "prefill.ttft_floor_below_measured" and row["verdict"] == "proved"
    assert 0.1415 < seconds < 0.1420


def test_serving_card_gives_one_prompts_flops_with_its_attention(capsys) -> None:
    """Beside the floor (attention left out), what a server's prefill of the prompt multiplies: Llama 3 8B's 512
    tokens, 2 x 7.505B x 512 for the weights and 4 x 32 layers x 32 heads x 128 x 512 x 513 / 2 for causal
    attention, less the output head (128,256 x 4,096) at the 511 tokens before the last, where no logits are
    sampled: 7.217 TFLOP (7.754 counted as training does, logits at every token)."""
    argv = ["card", "--library", "serving", "--hardware", "h100-sxm", "--model", "llama3-8b", "--set", "chips=1",
            "--set", "prefill_tokens=512 token/seq", "--json"]
    code, out, _ = run(capsys, *argv)
    row = {r["name"]: r for r in json.loads(out)["rows"]}["served_prefill_flops"]
    params, head = 7_504_658_432, 128_256 * 4_096  # params_active of the preset: no input embedding, the head kept
    assert code == 0 and row["decl"] == "prefill.served_prefill_flops" and row["display"] == "7.217 TFLOP/seq"
    assert sp.Rational(row["exact"]) == 2 * params * 512 + 4 * 32 * 32 * 128 * 512 * 513 // 2 - 2 * head * 511


def test_the_cards_ttft_floor_is_one_requests_whatever_the_batch(capsys) -> None:
    """The scenario's batch is the sequences in flight, not prompts prefilled together: at 16 sequences the
    card's TTFT floor stays one request's (Llama 3 70B on an H100 node: 143.9 ms for 8K tokens), not the
    16-prompt prefill pass (ttft_floor, 16 times the multiplies and more), which a single request's measured
    TTFT can undercut."""
    argv = ["card", "--library", "serving", "--hardware", "h100-sxm", "--model", "llama3-70b", "--json",
            "--set", "prefill_tokens=8192 token/seq"]
    rows_one = {r["name"]: r for r in json.loads(run(capsys, *argv, "--set", "batch=1 seq")[1])["rows"]}
    rows_many = {r["name"]: r for r in json.loads(run(capsys, *argv, "--set", "batch=16 seq")[1])["rows"]}
    assert rows_one["request_ttft_floor"]["exact"] == rows_many["request_ttft_floor"]["exact"]
    code, out, _ = run(capsys, "eval", "ttft_floor", "--library", "serving", "--hardware", "h100-sxm", "--model",
                       "llama3-70b", "--set", "prefill_tokens=8192 token/seq", "--set", "batch=16 seq", "--json")
    batched = sp.Rational(json.loads(out)["exact"])
    assert code == 0 and batched > 15 * sp.Rational(rows_many["request_ttft_floor"]["exact"])


def test_card_cost_rents_every_stage_of_a_layout(capsys) -> None:
    """Llama 3 405B on two H100 nodes (TP8 x PP2, one micro-batch set by hand): the card's cost per token rents
    all 16 chips, twice the cost of one stage's 8 (roofline.cost_per_token, its twin); with the deployment's
    default of one micro-batch per stage the pipeline is full and the two agree (pipeline.pipeline_neutrality)."""
    base = ["--library", "serving", "--hardware", "h100-sxm", "--model", "llama3-405b", "--set", "tp=8",
            "--set", "pp=2", "--set", "batch=16 seq", "--set", "context=8192 token/seq", "--json", "--no-cache"]
    costs = []
    for extra in (["--set", "microbatches=1"], []):
        code, out, _ = run(capsys, "card", *base, *extra)
        assert code == 0
        costs.append(Fraction({r["name"]: r for r in json.loads(out)["rows"]}["pipelined_cost_per_token"]["exact"]))
    code, out, _ = run(capsys, "eval", "cost_per_token", *base[:-1])
    assert code == 0
    one_stage = Fraction(json.loads(out)["exact"])
    assert costs == [2 * one_stage, one_stage]


def test_a_long_note_is_a_numbered_marker_in_the_table_and_in_full_below(capsys) -> None:
    # the longest context at batch 1 ends at the model's maximum: the table says the value with a marker, short,
    # and the bound in full below it, so the value column stays as wide as the values
    # (the model's 131k context is past L*: the B* row's caveat is note [1])
    argv = ["card", "--hardware", "h100-sxm", "--model", "llama3-70b", "--set", "batch=1 seq", "--no-cache"]
    code, out, _ = run(capsys, *argv)
    lines = out.splitlines()
    [row] = [ln for ln in lines if ln.strip().startswith("longest context")]
    assert code == 0 and "131.07k token/seq [2]" in row and "max_context" not in row
    assert "[2] longest context that fits at the scenario's batch: ends at a feasibility bound, context <= " \
           "max_context with max_context = 131.1k token/seq (capacity.context_within_model); " \
           "capacity.memory_fits_in_hbm alone holds up to 1.5225M token/seq" in lines
    table = [ln for ln in lines if ln.startswith("  ")]
    starts = {ln.rindex(ln.rsplit(" (", 1)[0].split()[-1]) for ln in table}  # where the declaration column starts
    widest_label = max(len(ln[2:].split("  ")[0]) for ln in table)
    widest_value = max(len(ln[2 + widest_label + 2:].split("  ")[0]) for ln in table)
    assert starts == {2 + widest_label + 2 + widest_value + 2}
    code, out, _ = run(capsys, *argv, "--format", "md")
    assert code == 0 and "| 131.07k token/seq \\[2\\] |" in out
    assert "- \\[2\\] longest context that fits at the scenario's batch: ends at a feasibility bound" in out
    code, out, _ = run(capsys, *argv, "--json")
    row = {r["name"]: r for r in json.loads(out)["rows"]}["context"]
    assert row["shown"] == "131.07k token/seq" and row["note"].startswith("ends at a feasibility bound")
    assert row["display"] == f"{row['shown']} ({row['note']})"


def test_an_undefined_value_is_marked_and_its_reason_numbered_below(capsys) -> None:
    # no KV bytes per token: the critical context has no value; the reason names the definition below the table
    code, out, _ = run(capsys, "card", *NODE, "--set", "kv_bytes_per_token=0 B/token", "--no-cache")
    lines = out.splitlines()
    [row] = [ln for ln in lines if ln.strip().startswith("critical context")]
    assert code == 0 and "undefined [1]" in row and "defined only where" not in row
    [note] = [ln for ln in lines if ln.startswith("[1] ")]
    assert "critical_context is defined only where kv_bytes_per_token > 0 (definition batching.critical_context)" \
        in note
    assert all(ln.startswith(f"[{k}] ") for k, ln in enumerate([ln for ln in lines if ln.startswith("[")], 1))


def test_rows_without_a_note_print_as_before_and_a_short_note_is_numbered_too(capsys) -> None:
    argv = ["card", *NODE, "--set", "context=8192 token/seq", "--no-cache"]
    code, out, _ = run(capsys, *argv, "--json")
    rows = {r["name"]: r for r in json.loads(out)["rows"]}
    plain = [r for n, r in rows.items() if n not in ("context", "critical_batch")]  # 8K is past L*: B*'s caveat
    assert code == 0 and all(r["note"] is None and r["shown"] == r["display"] for r in plain)
    assert rows["context"]["note"] == "more than the scenario's 8,192 token/seq, from --set"
    code, out, _ = run(capsys, *argv)
    assert code == 0 and "23.789k token/seq [2]  capacity.memory_fits_in_hbm" in out and "infeasible" not in out
    assert "[2] longest context that fits at the scenario's batch: more than the scenario's 8,192 token/seq" in out


def test_a_row_names_only_the_inputs_its_value_still_needs(capsys, tmp_path) -> None:
    """A chip of the user's own in a scenario file, with a dense model and no batch: the step time needs the
    batch, not the share of skipped experts read (a dense model skips none: that term is zero whatever it is);
    a mixture of experts still needs both."""
    chip = tmp_path / "chip.toml"
    chip.write_text('[values.flops]\nvalue = "1835 TFLOP/s"\nsource = "spec sheet"\n'
                    '[values.hbm_bandwidth]\nvalue = "3.7 TB/s"\nsource = "spec sheet"\n'
                    '[values.hbm_capacity]\nvalue = "128 GB"\nsource = "spec sheet"\n'
                    '[values.chips]\nvalue = "8"\nsource = "one node"\n')
    code, out, _ = run(capsys, "card", "--scenario", str(chip), "--model", LLAMA_70B, "--json", "--no-cache")
    rows = {r["name"]: r for r in json.loads(out)["rows"]}
    assert code == 0 and rows["step_time"]["display"] == "needs --set batch=..."
    mixtral = str(Path(__file__).parent / "fixtures" / "configs" / "mixtral-8x7b-v0.1.json")
    code, out, _ = run(capsys, "card", "--scenario", str(chip), "--model", mixtral, "--json", "--no-cache")
    rows = {r["name"]: r for r in json.loads(out)["rows"]}
    assert code == 0 and rows["step_time"]["display"] == "needs --set batch=..., --set expert_read_fraction=..."


QWEN3_NEXT = str(Path(__file__).parent / "fixtures" / "configs" / "qwen3-next-80b-a3b-instruct.json")


def test_a_row_whose_general_claim_assumes_what_the_scenario_breaks_says_so(capsys) -> None:
    """Qwen3-Next at 16 sequences reads about a quarter of its experts a step (uniform routing): B* assumes every
    expert read (expert_read_fraction == 1), so its row says the claim, proved where that holds, says nothing here;
    the verdict stays the claim's own.  The critical-context claim holds for its linear-attention layers too
    (their fixed state only adds reads): no such note."""
    code, out, _ = run(capsys, "card", "--hardware", "h200", "--model", QWEN3_NEXT, "--set", "batch=16 seq", "--json",
                       "--no-cache")
    assert code == 0
    rows = {r["name"]: r for r in json.loads(out)["rows"]}
    row = rows["critical_batch"]
    assert row["verdict"] == "proved"
    assert "assumes expert_read_fraction == 1, and here expert_read_fraction = " in row["note"]
    assert "says nothing at this scenario's values" in row["note"]
    assert "says nothing" not in (rows["critical_context"]["note"] or "")


def test_the_inputs_a_rows_note_reads_have_their_origin_said_too(capsys, tmp_path) -> None:
    """A chip of the user's own (its rates and memory typed in a scenario file, no chip count) with Qwen3-Next: no
    step time can be printed, yet B*'s row says "expert_read_fraction = 0" (its claim assumes 1) and that the
    context is past L*.  The context (the model's maximum) and the share of experts (a deployment default) were
    read by those words only, so where they came from went unsaid below the card; now it is said."""
    scenario = tmp_path / "mine.toml"
    scenario.write_text(f'model = "{QWEN3_NEXT}"\n'
                        '[values.flops]\nvalue = "148 TFLOP/s"\nsource = "a spec sheet"\n'
                        '[values.hbm_bandwidth]\nvalue = "4 TB/s"\nsource = "a spec sheet"\n'
                        '[values.hbm_capacity]\nvalue = "96 GB"\nsource = "a spec sheet"\n')
    code, out, _ = run(capsys, "card", "--scenario", str(scenario), "--no-cache")
    assert code == 0
    assert "needs --set chips=..." in out  # no value row read the context or the share of experts
    assert "here expert_read_fraction = 0" in out and "context >= critical_context here" in out
    assert "note: context: 262,144 token/seq from the model" in out and "note: expert_read_fraction = 0" in out


def test_a_row_whose_claim_holds_at_the_scenario_has_no_such_note(capsys) -> None:
    code, out, _ = run(capsys, "card", *NODE, "--json", "--no-cache")
    assert code == 0
    notes = [r["note"] or "" for r in json.loads(out)["rows"]]
    assert not any("says nothing at this scenario" in n for n in notes)


def test_failing_hypotheses_reads_only_what_the_scenario_decides() -> None:
    from derive.model.loader import load_library
    from derive.model.scenario import build_scenario
    from derive.whatif.feasibility import failing_hypotheses

    lib = load_library(["lecture"])
    claim = lib.declarations["batching.goldilocks_context_and_mfu"]  # every cached layer attends fully
    hybrid = build_scenario(lib, hardware="h200", model=QWEN3_NEXT)
    assert [v.relation for v in failing_hypotheses(lib, hybrid, claim)] == ["kv_state_bytes == 0"]
    dense = build_scenario(lib, hardware="h100-sxm", model=LLAMA_70B, sets=["context=200000 token/seq"])
    assert failing_hypotheses(lib, dense, claim) == []


def test_a_row_that_needs_many_inputs_counts_them_and_lists_them_below(capsys) -> None:
    """The lecture's scenario has no layout: the chips of the layout need four inputs, so the table says "needs 4
    inputs" with a numbered note that lists them, and the JSON keeps the whole list as the display; a row that
    needs one or two inputs names them in the table."""
    code, out, _ = run(capsys, "card", "--library", "serving", "--scenario", "lecture", "--no-cache")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("  chips of the layout"))
    marker = row.split("needs 4 inputs [")[1].split("]")[0]
    assert f"[{marker}] chips of the layout (tp·pp·cp·dp; ep shares them): needs --set cp=..., --set dp=..., " \
           "--set pp=..., --set tp=..." in out
    code, out, _ = run(capsys, "card", "--library", "serving", "--scenario", "lecture", "--json", "--no-cache")
    rows = {r["name"]: r for r in json.loads(out)["rows"]}
    assert rows["layout_chips"]["display"] == "needs --set cp=..., --set dp=..., --set pp=..., --set tp=..."
    assert rows["layout_chips"]["shown"] == "needs 4 inputs" and rows["layout_chips"]["note"] == \
        rows["layout_chips"]["display"]
    assert rows["request_ttft_floor"]["shown"] == "needs --set prefill_tokens=..."
    assert rows["request_ttft_floor"]["note"] is None
    # a margin row (the longest context the layout's chips hold) words what it lacks alike, not as an error
    by_label = {r["label"]: r for r in json.loads(out)["rows"]}
    held = by_label["longest context the layout's chips hold (their own weights, KV and hidden states)"]
    assert held["shown"] == "needs 7 inputs" and "--set tp=..." in held["display"] and held["note"] == held["display"]


@pytest.mark.parametrize(("context", "noted"), [("1436 token/seq", False), ("1437 token/seq", True),
                                                 ("8192 token/seq", True), ("512 token/seq", False)])
def test_the_b_star_row_says_when_the_context_is_past_the_critical_context(capsys, context, noted) -> None:
    """B* weighs the weight reads alone; from L* on (1,436.9 token/seq for Llama 3 70B on an H100) the KV reads
    keep every batch memory-bound, and the row's caveat says so, decided exactly at the threshold."""
    code, out, _ = run(capsys, "card", *NODE, "--set", f"context={context}", "--json", "--no-cache")
    assert code == 0
    row = {r["name"]: r for r in json.loads(out)["rows"]}["critical_batch"]
    assert row["shown"] == "295.2 seq"  # the value itself does not change with the context
    said = "context >= critical_context here: B* counts the weight reads only" in (row["note"] or "")
    assert said is noted


CAVEAT_LIBRARY = """
from derive import Claim, Definition, Quantity, derived, logic
a = Quantity("a", "a", "s", "one time")
b = Quantity("b", "b", "s", "another time")
total_q = Quantity("total", "T", "s", "both times")
total = Definition("toy.total", title="Total", statement="The sum.", source=derived("a sum"), defines=total_q,
                   expr=a.sym + b.sym)
at_least_a = Claim("toy.at_least_a", title="At least a", statement="The total is at least a.",
                   source=derived("b is nonnegative"), hypotheses=(logic.ge(b.sym, 0),),
                   goal=logic.ge(total_q.sym, a.sym))
CARD = [{"label": "total", "value": "total", "decl": "toy.at_least_a", "caveats": CAVEATS}]
"""


def test_a_users_card_row_carries_its_own_caveat(capsys, tmp_path) -> None:
    lib = tmp_path / "toy.py"
    lib.write_text(CAVEAT_LIBRARY.replace("CAVEATS", '[{"when": "b > a", "note": "b dominates"}]'))
    code, out, err = run(capsys, "card", "--library", str(lib), "--set", "a=1 s", "--set", "b=3 s", "--json")
    assert code == 0, err
    assert json.loads(out)["rows"][0]["note"] == "b > a here: b dominates"
    code, out, err = run(capsys, "card", "--library", str(lib), "--set", "a=3 s", "--set", "b=1 s", "--json")
    assert code == 0 and json.loads(out)["rows"][0]["note"] is None, err


@pytest.mark.parametrize(("caveats", "said"), [
    ('[{"when": "b > a"}]', "'caveats' is a list of tables with 'when'"),
    ('{"when": "b > a", "note": "x"}', "'caveats' is a list of tables with 'when'"),
    ('[{"when": "b > 3 byte", "note": "x"}]', "CARD[0] caveats[0]"),
    ('[{"when": "c > a", "note": "x"}]', "CARD[0] caveats[0]"),
])
def test_a_malformed_caveat_is_one_line_naming_the_row(capsys, tmp_path, caveats, said) -> None:
    lib = tmp_path / "toy.py"
    lib.write_text(CAVEAT_LIBRARY.replace("CAVEATS", caveats))
    code, out, err = run(capsys, "card", "--library", str(lib), "--set", "a=1 s", "--set", "b=3 s")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert said in err


@pytest.mark.parametrize(("context", "noted"), [("1436 token/seq", False), ("1437 token/seq", True)])
def test_derive_eval_says_the_cards_caveat_beside_the_value(capsys, context, noted) -> None:
    """``derive eval critical_batch`` past the critical context says what the card's B* row says: the value counts
    the weight reads only (text and JSON); short of it, nothing."""
    code, out, _ = run(capsys, "eval", "critical_batch", *NODE, "--set", f"context={context}", "--no-cache")
    assert code == 0 and out.startswith("critical_batch ≈ 295.2 seq")
    said = "caveat: B* (batch where decode turns compute-bound): context >= critical_context here" in out
    assert said is noted
    code, out, _ = run(capsys, "eval", "critical_batch", *NODE, "--set", f"context={context}", "--json", "--no-cache")
    caveats = json.loads(out)["caveats"]
    assert bool(caveats) is noted and all("batching.kv_memory_bound_past_critical_context" in c for c in caveats)


def test_a_row_whose_denominators_are_declared_positive_needs_them_not_where_a_factor_is_zero(capsys,
                                                                                             tmp_path) -> None:
    """One chip per replica (tp = 1) has no all-reduce, and the all-reduce floor's formula divides by the links'
    bandwidths, which are declared positive: no value of theirs makes the floor undefined, so on a chip of the
    user's own that gives no links the row is 0 s, not a list of inputs (it asked for three; before that, the
    card ended with an error)."""
    path = tmp_path / "box.toml"
    path.write_text('model = "mixtral-8x7b"\n'
                    '[values.flops]\nvalue = "362 TFLOP/s"\nsource = "spec sheet"\n'
                    '[values.hbm_bandwidth]\nvalue = "864 GB/s"\nsource = "spec sheet"\n'
                    '[values.hbm_capacity]\nvalue = "48 GB"\nsource = "spec sheet"\n'
                    '[values.chips]\nvalue = "2"\nsource = "our box"\n')
    code, out, err = run(capsys, "card", "--library", "serving", "--scenario", str(path), "--set", "dp=2",
                         "--set", "ep=2", "--json", "--no-cache")
    assert code == 0, err
    rows = {r["name"]: r for r in json.loads(out)["rows"]}
    assert rows["tp_link_allreduce_floor"]["display"] == "0 s"
    assert rows["tp_allreduce_latency"]["display"] == "0 s"  # no side condition reads the missing links
    code, out, err = run(capsys, "card", "--library", "serving", "--scenario", str(path), "--set", "tp=2",
                         "--json", "--no-cache")
    rows = {r["name"]: r for r in json.loads(out)["rows"]}
    assert code == 0 and rows["tp_link_allreduce_floor"]["exact"] is None  # two chips do all-reduce: it asks
    assert "--set scaleup_bandwidth=..." in rows["tp_link_allreduce_floor"]["display"]


def test_eval_says_where_the_inputs_of_a_caveat_it_prints_came_from(capsys) -> None:
    """``derive eval critical_batch`` of a model past L* prints B*'s caveat, which reads the context; the context
    (the model's maximum, replacing the lecture's 200K) is no input of B* itself, so its origin went unsaid."""
    code, out, _ = run(capsys, "eval", "critical_batch", "--hardware", "h100-sxm", "--model", LLAMA_70B,
                       "--set", "chips=2", "--no-cache")
    assert code == 0
    assert "caveat: B* (batch where decode turns compute-bound): context >= critical_context here" in out
    assert "note: context: 131,072 token/seq from the model" in out
    code, out, _ = run(capsys, "eval", "critical_batch", "--hardware", "h100-sxm", "--model", LLAMA_70B,
                       "--set", "chips=2", "--set", "context=64 token/seq", "--no-cache")
    assert code == 0 and "caveat:" not in out and "note: context" not in out  # short context: no caveat, no note


# One chip in one stage: the layout is every degree 1 ------------------------------------------------------------
ONE_CHIP = ["card", "--library", "serving", "--hardware", "h100-sxm", "--model", "llama3-8b", "--set", "chips=1",
            "--set", "prefill_tokens=2048 token/seq", "--json", "--no-cache"]


def test_a_card_on_one_chip_in_one_stage_reads_the_layout_at_its_defaults(capsys) -> None:
    """With no layout given, one chip in one stage fits one layout only (tp·cp·dp = 1 and pp = 1): the layout rows
    are answered at the layout's defaults, with one note saying so, and equal the rows that need no layout; the
    claim rows on the layout are checked at it (not left unknown for want of tp)."""
    code, out, _ = run(capsys, *ONE_CHIP)
    data = json.loads(out)
    rows = {r["name"]: r for r in data["rows"]}
    assert code == 0 and rows["layout_chips"]["exact"] == "1"
    assert rows["layout_decode_floor"]["exact"] == rows["weight_fetch_time_floor"]["exact"]
    assert rows["layout_ttft_floor"]["exact"] == rows["request_ttft_floor"]["exact"]
    held = next(r for r in data["rows"] if r["decl"] == "layouts.layout_memory_fits_in_hbm")
    assert held["verdict"] in ("proved", "refuted") and held["exact"] is not None
    said = [n for n in data["notes"] if n.startswith("layout: none given")]
    assert len(said) == 1 and "chips = 1" in said[0] and "stages = 1" in said[0] and "tp = 1, pp = 1" in said[0]


def test_check_decides_the_layout_claims_the_card_decides_on_one_chip(capsys) -> None:
    """derive check reads the scenario as the card and the documents do: on one chip in one stage the layout's
    claims are decided at its defaults (check said unknown for want of tp while the card and build decided them)."""
    code, out, _ = run(capsys, *ONE_CHIP)
    held = next(r for r in json.loads(out)["rows"] if r["decl"] == "layouts.layout_memory_fits_in_hbm")
    argv = [a for a in ONE_CHIP if a not in ("card", "--json")]
    code, out, _ = run(capsys, "check", "layouts.layout_memory_fits_in_hbm", *argv, "--json")
    result = json.loads(out)["claims"][0]
    assert result["verdict"] == held["verdict"] and result["verdict"] in ("proved", "refuted")
    assert any(n.startswith("layout: none given") for n in json.loads(out)["notes"])


@pytest.mark.parametrize("extra", [["--set", "chips=8"], ["--set", "stages=2"]])
def test_no_layout_is_read_where_the_chips_fit_more_than_one(capsys, extra) -> None:
    """Eight chips (or one chip a stage over two stages) fit several layouts: none is guessed, the rows ask."""
    code, out, _ = run(capsys, *ONE_CHIP, *extra)
    data = json.loads(out)
    rows = {r["name"]: r for r in data["rows"]}
    assert code == 0 and rows["layout_chips"]["exact"] is None and "--set tp=..." in rows["layout_chips"]["display"]
    assert not [n for n in data["notes"] if n.startswith("layout: none given")]


def test_the_layout_read_for_the_card_leaves_a_margin_over_the_chips_free(capsys) -> None:
    """The card's reading is not the scenario's: a margin over the chips at one chip still moves the chips alone
    (no layout rule ties them to tp·cp·dp)."""
    code, out, _ = run(capsys, "margin", "roofline.latency_floor", "--library", "serving", "--hardware", "h100-sxm",
                       "--model", "llama3-8b", "--set", "chips=1", "--vary", "chips", "--no-cache")
    assert code == 0 and "chips_are_the_stage" not in out and "layout" not in out


def test_implied_input_tables_is_the_same_scenario_where_a_table_is_given_or_not_implied() -> None:
    from derive.model.loader import load_library
    from derive.model.scenario import build_scenario, with_implied_input_tables

    lib = load_library(["serving"])
    for sets in (["chips=1", "tp=1"], ["chips=2"]):
        sc = build_scenario(lib, hardware="h100-sxm", model="llama3-8b", sets=sets)
        assert with_implied_input_tables(lib, sc) is sc
    sc = build_scenario(lib, hardware="h100-sxm", model="llama3-8b", sets=["chips=1"])
    implied = with_implied_input_tables(lib, sc)
    assert implied is not sc and {n: implied.values[n].value for n in ("tp", "pp", "cp", "dp", "ep")} == \
        dict.fromkeys(("tp", "pp", "cp", "dp", "ep"), 1)
    assert "tp" not in sc.values and sc.links == implied.links


def test_diff_headlines_read_one_chip_as_the_card_does_and_say_so(capsys) -> None:
    """`derive diff`'s headline rows on the layout read one chip in one stage as the card does (every degree 1),
    with the same note once; in JSON too."""
    argv = ["diff", "--library", "serving", "--hardware", "h100-sxm", "--model", "llama3-8b", "--set", "chips=1",
            "--set", "hbm_bandwidth=2 TB/s", "--against", "lecture"]
    code, out, _ = run(capsys, *argv, "--json")
    data = json.loads(out)
    rows = {h["label"]: h for h in data["headlines"]}
    assert code == 0 and rows["decode floor on the layout"]["after"]["exact"] == \
        rows["weight fetch per step"]["after"]["exact"]
    assert len(data["headline_notes"]) == 1 and data["headline_notes"][0].startswith("layout: none given")
    code, out, _ = run(capsys, *argv)
    assert out.count("note: layout: none given") == 1


def test_eval_answers_a_layout_value_on_one_chip_with_the_note(capsys) -> None:
    """`derive eval` reads one chip in one stage as the card does: the layout's chips are 1 and its decode floor the
    pooled one, with the note; on eight chips it still asks for the layout."""
    base = ["eval", "layout_decode_floor", "weight_fetch_time_floor", "--library", "serving", "--hardware",
            "h100-sxm", "--model", "llama3-8b", "--json"]
    code, out, _ = run(capsys, *base, "--set", "chips=1")
    data = json.loads(out)
    values = {v["name"]: v for v in data["values"]}
    assert code == 0 and values["layout_decode_floor"]["exact"] == values["weight_fetch_time_floor"]["exact"]
    assert any(n.startswith("layout: none given") for n in data["notes"])
    assert main([*base, "--set", "chips=8"]) == 2
    assert "no value for tp" in capsys.readouterr().err


def test_a_document_on_one_chip_prints_the_layouts_values_with_the_note(capsys, tmp_path) -> None:
    """`derive build` reads one chip in one stage as the card does: the scenario appendix says the layout once and
    no value of the layout is left asking for tp."""
    code = main(["build", "--library", "serving", "--hardware", "h100-sxm", "--model", "llama3-8b", "--set",
                 "chips=1", "--format", "md", "--out", str(tmp_path / "b"), "--cache-dir", str(tmp_path / "c")])
    capsys.readouterr()
    md = (tmp_path / "b" / "derivation.md").read_text()
    assert code == 0 and md.count("layout: none given") == 1
    assert "needs tp" not in md and "tp = 1, pp = 1" in md


ONE_CHIP_SCENARIO = ["--library", "serving", "--hardware", "h100-sxm", "--model", "llama3-8b", "--set", "chips=1"]


def test_what_ifs_on_one_chip_read_its_layout_unless_they_move_the_chips(capsys) -> None:
    """A sweep over the batch and a margin over the context read one chip's layout (every degree 1) with the note;
    a sweep over the chips moves what the layout would give, so it reads none and asks for the layout."""
    assert main(["sweep", "layout_step_time", *ONE_CHIP_SCENARIO, "--vary", "batch=1:64:3"]) == 0
    out, err = capsys.readouterr()
    assert "layout: none given" in out + err and len(out.strip().splitlines()) >= 4
    assert main(["margin", "layouts.layout_memory_fits_in_hbm", *ONE_CHIP_SCENARIO, "--vary", "context",
                 "--no-cache"]) in (0, 1)
    out, err = capsys.readouterr()
    assert "holds for context in" in out and (out + err).count("layout: none given") == 1
    assert main(["sweep", "layout_step_time", *ONE_CHIP_SCENARIO, "--vary", "chips=1:8:3"]) == 2
    assert "no value for cp, dp, tp" in capsys.readouterr().err


def test_card_times_take_their_own_prefix_and_json_says_the_unit_of_exact(capsys) -> None:
    """A card's time rows were fixed to ms (0.02606 ms on a GB200 for Llama 3 8B) while its JSON said "ms"
    beside an exact value in seconds."""
    code, out, _ = run(capsys, "card", "--hardware", "gb200-nvl72-fp4", "--model", "llama3-8b", "--json", "--no-cache")
    assert code == 0
    rows = {r["name"]: r for r in json.loads(out)["rows"]}
    floor = rows["weight_fetch_time_floor"]
    assert floor["display"].endswith(" µs") and floor["unit"] == "s"
    assert sp.Rational(floor["exact"]) < sp.Rational(1, 10**4)  # seconds: 26.06 µs
    assert rows["critical_batch"]["unit"] == "seq"


def test_serving_card_says_the_cost_prices_the_pooled_step_under_a_layout(capsys) -> None:
    # TP4 x DP2 copies the dense weights: the layout's step is longer than the pooled one the cost row prices
    argv = ["card", "--library", "serving", "--hardware", "h100-sxm", "--model", "llama3-70b", "--json"]
    code, out, _ = run(capsys, *argv, "--set", "tp=4", "--set", "dp=2")
    rows = {r["name"]: r for r in json.loads(out)["rows"]}
    assert code == 0 and "this cost prices the pooled step" in rows["pipelined_cost_per_token"]["note"]
    code, out, _ = run(capsys, *argv, "--set", "tp=8")  # one replica over the stage: nothing to say
    rows = {r["name"]: r for r in json.loads(out)["rows"]}
    assert "prices the pooled step" not in (rows["pipelined_cost_per_token"].get("note") or "")
