"""derive eval."""

from __future__ import annotations

HELP = "numeric values of quantities, definitions or expressions under the scenario"

DESCRIPTION = """\
The value of each NAME (a quantity, a definition id, or an expression such as
"hbm_bandwidth * 20 ms") under the scenario, with a unit and a sensible prefix.  A value computed
through a definition outside its declared domain is `undefined`, with the reason; a derived quantity
whose value breaks its declared domain (positive, non-negative) or integrality is noted beside the value, and
so is a caveat the library's card attaches to the value where it holds (B* past the critical context).

--json: one name gives {"name", "value", "exact", "unit", "display", "inputs", "pinned", "notes"} ("value"
is null, with "reason" and "hint", when undefined; "declaration_notes" when a value breaks a declaration); several
names give {"values": [...], "scenario", "pinned", "notes"}; both "caveats" (a list).  --explain adds each
input's value, unit and the layer that set it ("explain" in --json).

Examples:
  derive eval critical_batch step_time cost_per_token
  derive eval critical_batch_kv --set "context=8k token/seq"
  derive eval "hbm_capacity / hbm_bandwidth" --unit ms
"""


def add_arguments(p) -> None:
    import argparse

    p.description = DESCRIPTION
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("exprs", nargs="+", metavar="NAME|EXPR")
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
    from derive.model.names import check_value_name

    for text in args.exprs:
        check_value_name(ctx.library, text)
    scenario = ctx.read_scenario  # one chip in one stage is one layout: answered with the note, as the card does
    evs = [evaluate(ctx.library, scenario, text, args.unit, dependence=True) for text in args.exprs]
    inputs = {n for ev in evs for n in ev.used}
    from derive.whatif.card import caveats_for
    from derive.whatif.feasibility import feasibility

    infeasible = feasibility(ctx.library, scenario).violations  # a value where the scenario cannot exist says so
    # the card's caveats, where they hold; the inputs their words read get their origin notes too
    caveats = [c for ev in evs for c in caveats_for(ctx.library, scenario, ev.name, inputs)]
    pinned = pinned_notes(ctx.library, scenario, only=inputs)
    ceilings = [c for c in scenario.ceilings if c.name in inputs]  # which peak or measured rates were used
    if args.json:
        extra = {"pinned": pinned, "ceilings": [c.to_json() for c in ceilings],
                 "notes": scenario_notes(scenario, inputs), "infeasible": [v.to_json() for v in infeasible],
                 "caveats": caveats}
        if args.explain:
            extra["explain"] = scenario.explain(ctx.library, sorted(inputs))
        if len(evs) == 1:
            emit_json({**evs[0].to_json(), **extra})
        else:
            emit_json({"values": [ev.to_json() for ev in evs], "scenario": scenario.name, **extra})
        return 0
    for line in eval_lines(evs):
        emit(line)
    for ev in evs:  # which layer gave the values that leave a definition undefined
        if ev.exact is None and ev.hint:
            emit(f"hint: {ev.name}: {ev.hint}" if len(evs) > 1 else f"hint: {ev.hint}")
    emit(f"(scenario {scenario.name})")
    for c in caveats:
        emit(f"caveat: {c}")
    for v in infeasible:
        emit(v.note)
    if pinned:
        emit(pinned_line(pinned))
    if scenario.measured and ceilings:
        from derive.model.display import format_value

        emit("ceilings: " + ", ".join(
            f"{c.name} {format_value(c.value, ctx.library.quantities[c.name].unit)} ({c.kind}"
            + (f" {c.as_of}" if c.kind == "measured" else "") + ")" for c in ceilings))
    if args.explain:
        for line in explain_lines(scenario.explain(ctx.library, sorted(inputs))):
            emit(line)
    emit_notes(scenario, inputs)
    return 0


def eval_lines(evs) -> list[str]:
    """``name = 2,400 seq``; ``name ≈ 3,593 seq  (exactly 11100000/3089 seq)`` when rounded."""
    from derive.model.display import shown

    width = max((len(ev.name) for ev in evs), default=0) if len(evs) > 1 else 0
    out = []
    for ev in evs:
        if ev.exact is None:
            out.append(f"{ev.name:<{width}} = {ev.display}")
            continue
        s = shown(ev.in_unit(), ev.unit, fixed=ev.fixed_unit)
        if s.exact:
            out.append(f"{ev.name:<{width}} = {s.text}")
            continue
        exact = ev.in_unit()
        text = str(exact)
        if ev.unit.startswith("1/"):  # 1/12 per second reads (1/12)/s, not "1/12 1/s"
            text = (f"({text})" if "/" in text else text) + ev.unit[1:]
        elif ev.unit not in ("1", ""):
            text = f"{text} {ev.unit}"
        note = f"  (exactly {text})" if len(str(exact)) <= 30 and exact.is_Rational else ""
        out.append(f"{ev.name:<{width}} ≈ {s.text}{note}".rstrip())
    # a derived value outside its declared domain or integrality: said beside it (claims are not read there)
    return [line + (f"  (note: {'; '.join(ev.notes)})" if ev.exact is not None and ev.notes else "")
            for line, ev in zip(out, evs, strict=True)]
