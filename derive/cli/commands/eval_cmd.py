"""derive eval."""

from __future__ import annotations

HELP = "numeric value of a quantity, definition or expression under the scenario"


def add_arguments(p) -> None:
    p.add_argument("expr", metavar="NAME|EXPR")
    p.add_argument("--unit", metavar="U", help='express the value in this unit (e.g. "ms", "TB/s")')
    p.add_argument("--json", action="store_true", help="machine-readable output")


def run(args, ctx) -> int:
    from derive.cli.commands.output import emit, emit_json, pinned_line, pinned_notes
    from derive.model.evaluate import evaluate

    ev = evaluate(ctx.library, ctx.scenario, args.expr, args.unit)
    pinned = pinned_notes(ctx.library, ctx.scenario, only=set(ev.inputs))
    if args.json:
        emit_json({**ev.to_json(), "pinned": pinned})
    else:
        unit = "" if ev.unit == "1" else f" {ev.unit}"
        note = f"; {ev.note}" if ev.note else ""
        emit(f"{ev.name} = {ev.text}{unit}   (exact: {ev.exact}; scenario {ctx.scenario.name}{note})")
        if pinned:
            emit(pinned_line(pinned))
    return 0
