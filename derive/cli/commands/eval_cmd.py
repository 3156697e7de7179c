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
    ceilings = [c for c in ctx.scenario.ceilings if c.name in ev.inputs]
    if args.json:
        emit_json({**ev.to_json(), "pinned": pinned, "ceilings": [c.to_json() for c in ceilings]})
    else:
        unit = "" if ev.unit == "1" else f" {ev.unit}"
        emit(f"{ev.name} = {ev.value:.6g}{unit}   (exact: {ev.exact}; scenario {ctx.scenario.name})")
        if pinned:
            emit(pinned_line(pinned))
        if ctx.scenario.measured and ceilings:
            from derive.model.display import format_value

            emit("ceilings: " + ", ".join(
                f"{c.name} {format_value(c.value, ctx.library.quantities[c.name].unit)} ({c.kind}"
                + (f" {c.as_of}" if c.kind == "measured" else "") + ")" for c in ceilings))
    return 0
