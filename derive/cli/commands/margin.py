"""derive margin."""

from __future__ import annotations

HELP = "the interval(s) of a quantity over which a claim holds, other values from the scenario"

DESCRIPTION = """\
The exact set of values of QUANTITY over which the claim holds, every other value taken from the
scenario (instance semantics: goal and hypotheses expanded, scenario values substituted, the varied
quantity left free; a varied derived quantity is pinned).  sympy's solveset finds the critical points
of every relation; the formula is evaluated exactly between them; each finite endpoint is then
cross-checked by z3 just inside, just outside and at the endpoint.  QUANTITY may also be an
expression such as "flops/hbm_bandwidth" (solved for one of its quantities).

--json: {"id", "vary", "unit", "holds_on": [[low, high], ...], "exact": [["4", null]], "closed",
"value", "holds_at_value", "verified", "checks", ...}; numbers in the quantity's SI unit or --unit,
null for an unbounded end.

Where QUANTITY is named by an input rule of the library (a layout degree), an end of the set whose value there
(an integer quantity's last integer inside) breaks a rule says so, with the nearest value inside that meets
every rule (JSON "input_rules_at_ends").

Two --vary give a region instead, sampled on a grid (vectorised numeric evaluation, not exact) and
drawn to --out FILE (.png, .svg or .pdf; deterministic bytes).  Each may carry a range,
"Q=LO:HI[:log]" (default: the scenario value /10 .. x10, logarithmic).

Examples:
  derive margin scaleout_viability --vary experts_active
  derive margin batch_optimum_lecture --vary flops --unit "PFLOP/s" --json
  derive margin batch_optimum_lecture --vary flops/hbm_bandwidth
  derive margin lecture_batch_near_optimum --vary flops --vary "hbm_bandwidth=2 TB/s:40 TB/s" --out region.png
"""


def add_arguments(p) -> None:
    import argparse

    p.description = DESCRIPTION
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("id", metavar="ID")
    p.add_argument("--vary", action="append", required=True, metavar="QUANTITY",
                   help="the quantity (or expression) to vary; twice for a 2-D region")
    p.add_argument("--unit", metavar="U", help='express the numbers in this unit (e.g. "PFLOP/s")')
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--out", metavar="FILE", help="two --vary: write the region figure here")
    p.add_argument("--grid", type=int, default=None, metavar="N", help="two --vary: points per axis (default 200)")
    p.add_argument("--no-verify", action="store_true", help="skip the z3 cross-check of the endpoints")


def run(args, ctx) -> int:
    from derive.cli.commands.output import emit, emit_json, pinned_line, pinned_notes
    from derive.errors import MarginError
    from derive.whatif.margin import margin
    from derive.whatif.region import region, region_figure

    lib, scen = ctx.library, ctx.scenario
    pinned = pinned_notes(lib, scen)
    if len(args.vary) == 1:
        if args.out:
            raise MarginError("--out draws a region: give two --vary")
        if args.grid is not None:
            raise MarginError("--grid sets the sampling of a region: give two --vary",
                              hint="one --vary gives exact intervals, computed without a grid")
        m = margin(lib, scen, args.id, args.vary[0], unit=args.unit, verify=not args.no_verify, rlimit=ctx.rlimit)
        if args.json:
            emit_json({**m.to_json(), "scenario": scen.name, "pinned": pinned})
        else:
            for line in m.text_lines():
                emit(line)
            if pinned:
                emit(pinned_line(pinned))
        return 0 if m.verified is not False else 1
    if len(args.vary) != 2:
        raise MarginError("give one --vary (exact intervals) or two (a sampled region)")
    from derive.whatif.sweep import parse_axis

    if args.grid is None:
        args.grid = 200
    if not 2 <= args.grid <= 4000:
        raise MarginError(f"--grid must be between 2 and 4000, got {args.grid}")
    axes = []
    for text in args.vary:
        name = text.partition("=")[0].strip()
        around = scen.value(name) if name in scen.values else None
        spec = text if "=" in text else name
        if "=" in text and text.count(":") == 1:  # LO:HI -> LO:HI:grid
            spec = f"{text}:{args.grid}"
        elif "=" in text and text.rstrip().endswith(":log") and text.count(":") == 2:
            spec = text[: text.rstrip().rfind(":log")] + f":{args.grid}:log"
        axes.append(parse_axis(lib, spec, default_points=args.grid, around=around))
    reg = region(lib, scen, args.id, axes)
    if args.out:
        region_figure(reg, args.out)
    axis_notes = [a.note for a in axes if a.note]
    if args.json:
        emit_json({**reg.to_json(), "scenario": scen.name, "pinned": pinned, "axis_notes": axis_notes})
    else:
        a, b = reg.axes
        emit(f"{reg.id} holds on {reg.fraction:.1%} of a {len(a.values)} x {len(b.values)} grid of "
             f"{reg.ranges_text()} (sampled numerically, not a proof)")
        unfit = reg.unfit_lines()
        if unfit:
            share = reg.feasible_fraction
            emit(f"  on its feasible points: {'none is feasible' if share is None else f'holds on {share:.1%}'}")
            for line in unfit:
                emit(f"  {line}")
        if reg.out:
            emit(f"figure: {reg.out}")
        for v in reg.infeasible:
            emit(v.note)
        if pinned:
            emit(pinned_line(pinned))
        for note in axis_notes + reg.notes:
            emit(f"note: {note}")
    return 0
