"""derive eval."""

from __future__ import annotations

HELP = "numeric value of a quantity, definition or expression under the scenario"


def add_arguments(p) -> None:
    p.add_argument("expr", metavar="NAME|EXPR")
    p.add_argument("--unit", metavar="U", help='express the value in this unit (e.g. "ms", "TB/s")')
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--explain", action="store_true",
                   help="show each input's value, unit and the layer that set it (lecture, hardware preset, "
                        "model config, --set)")


def run(args, ctx) -> int:
    from derive.cli.commands.output import (
        emit,
        emit_json,
        emit_notes,
        explain_lines,
        pinned_line,
        pinned_notes,
        scenario_notes,
    )
    from derive.model.evaluate import evaluate

    ev = evaluate(ctx.library, ctx.scenario, args.expr, args.unit)
    pinned = pinned_notes(ctx.library, ctx.scenario, only=set(ev.inputs))
    explain = ctx.scenario.explain(ctx.library, ev.inputs) if getattr(args, "explain", False) else None
    if args.json:
        extra = {"explain": explain} if explain is not None else {}
        emit_json({**ev.to_json(), "pinned": pinned, "notes": scenario_notes(ctx.scenario), **extra})
    else:
        unit = "" if ev.unit == "1" else f" {ev.unit}"
        emit(f"{ev.name} = {ev.value:.6g}{unit}   (exact: {ev.exact}; scenario {ctx.scenario.name})")
        if pinned:
            emit(pinned_line(pinned))
        for line in explain_lines(explain or []):
            emit(line)
        emit_notes(ctx.scenario)
    return 0
