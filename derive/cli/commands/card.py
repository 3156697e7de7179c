"""derive card."""

from __future__ import annotations

HELP = "the everyday answers for a chip and a model, each with its claim and verdict"

DESCRIPTION = """\
One screen of the library's everyday answers (its CARD) for the scenario: for the lecture library the
decode floor, the critical batch B*, the critical context L*, the cost per token and the step time at
the scenario's batch, and the longest context that fits in HBM at that batch.  Each value carries its
unit, the claim or definition it rests on and that claim's verdict at the scenario.  A scenario that
cannot exist (the memory does not fit) is marked infeasible, with the bound and its numbers.

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


def card_lines(result) -> list[str]:
    """Aligned columns: label, value, the declaration and its verdict."""
    out = [f"scenario {result.scenario.name}"]
    w_label = max(len(r.label) for r in result.rows)
    w_value = max(len(r.display) for r in result.rows)
    for r in result.rows:
        out.append(f"  {r.label:<{w_label}}  {r.display:<{w_value}}  {r.decl} ({r.verdict})")
    out += [v.note for v in result.feasibility.violations]
    out += [f"note: {n}" for n in result.scenario.notes_for(result.inputs)]
    return out


def card_markdown(result) -> list[str]:
    from derive.model.prose import markdown_escape

    out = [f"**Scenario** `{result.scenario.name}`", "", "| answer | value | rests on | verdict |",
           "| --- | --- | --- | --- |"]
    for r in result.rows:
        out.append(f"| {markdown_escape(r.label)} | {markdown_escape(r.display)} | `{r.decl}` | {r.verdict} |")
    extra = [v.note for v in result.feasibility.violations] + result.scenario.notes_for(result.inputs)
    if extra:
        out.append("")
        out += [f"- {markdown_escape(n)}" for n in extra]
    return out
