"""derive card."""

from __future__ import annotations

HELP = "the everyday answers for a chip and a model, each with its claim and verdict"

DESCRIPTION = """\
One screen of the library's everyday answers (its CARD) for the scenario: for the lecture library the
decode floor, the critical batch B*, the critical context L*, the cost per token and the step time at
the scenario's batch, and the longest context that fits in HBM at that batch (no longer than the model's
maximum context: a feasibility bound on the value itself ends it, and the note says what memory alone holds).
Each value carries its
unit, the claim or definition it rests on and that claim's verdict at the scenario.  A scenario that
cannot exist (the memory does not fit) is marked infeasible, with the bound and its numbers.  What is said
of a value (why it is undefined, a bound it breaks, "more than the scenario's") is a numbered marker in its
cell, [1] or [1: infeasible], and the note in full below the table; --json gives each row's "shown" value
and "note" beside the whole "display".

Examples:
  derive card --hardware h100-sxm --model llama3-70b --set "batch=64 seq"
  derive card --hardware h200 --model path/to/config.json --format md
  derive card --hardware b200 --model deepseek-v3 --json
"""


def add_arguments(p) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--format", choices=("text", "md"), default="text", help="text (default) or a Markdown table")


def run(args, ctx) -> int:
    from derive.cli.commands.output import emit, emit_json
    from derive.whatif.card import card

    result = card(ctx.library, ctx.scenario, ctx.checker())
    if args.json:
        emit_json(result.to_json())
        return 0
    for line in (card_markdown(result) if args.format == "md" else card_lines(result)):
        emit(line)
    return 0


def card_cells(result) -> tuple[list[str], list[str]]:
    """Each row's value as the table shows it, and the notes below the table: a value's note (why it is
    undefined, a bound it breaks) is a numbered marker in its cell, ``[1]`` (``[1: infeasible]`` where the
    value lies where the scenario cannot exist), and the note in full below, so a long note never widens
    the table and is never dropped."""
    cells: list[str] = []
    notes: list[str] = []
    for r in result.rows:
        if not r.note:
            cells.append(r.shown)
            continue
        notes.append(r.note)
        k = len(notes)
        cells.append(f"{r.shown} [{k}: infeasible]" if r.infeasible else f"{r.shown} [{k}]")
    return cells, [f"[{k}] {result.rows_with_notes[k - 1].label}: {n}" for k, n in enumerate(notes, start=1)]


def card_lines(result) -> list[str]:
    """Aligned columns: label, value, the declaration and its verdict; the values' notes below."""
    out = [f"scenario {result.scenario.name}"]
    cells, notes = card_cells(result)
    w_label = max(len(r.label) for r in result.rows)
    w_value = max(len(c) for c in cells)
    for r, cell in zip(result.rows, cells, strict=True):
        out.append(f"  {r.label:<{w_label}}  {cell:<{w_value}}  {r.decl} ({r.verdict})")
    out += notes
    out += [v.note for v in result.feasibility.violations]
    out += [f"note: {n}" for n in result.scenario.notes_for(result.inputs)]
    return out


def card_markdown(result) -> list[str]:
    from derive.model.prose import markdown_escape

    out = [f"**Scenario** `{result.scenario.name}`", "", "| answer | value | rests on | verdict |",
           "| --- | --- | --- | --- |"]
    cells, notes = card_cells(result)
    for r, cell in zip(result.rows, cells, strict=True):
        out.append(f"| {markdown_escape(r.label)} | {markdown_escape(cell)} | `{r.decl}` | {r.verdict} |")
    extra = notes + [v.note for v in result.feasibility.violations] + result.scenario.notes_for(result.inputs)
    if extra:
        out.append("")
        out += [f"- {markdown_escape(n)}" for n in extra]
    return out
