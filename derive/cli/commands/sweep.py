"""derive sweep."""

from __future__ import annotations

from derive.cli import terminal

HELP = "evaluate quantities or claims over a grid of values or over all chip x model presets (CSV, figure)"

DESCRIPTION = """\
Evaluate TARGETs (quantities, definition ids, expressions in quantity names, or claim ids) at every
point of a grid, vectorised: each target is expanded and compiled once with sympy.lambdify to numpy.

  --vary Q=LO:HI[:N][:log]   a swept quantity (repeatable: the full grid of all of them); values may
                             carry units, e.g. --vary "flops=100 TFLOP/s:10 PFLOP/s:60:log"
  --presets                  every hardware x model preset pair instead of a grid (base scenario and
                             --set apply on top); with --check, real prover verdicts of the claims
                             (TARGETs, or every claim) on two worker processes

A claim in a sweep is its instance goal and hypotheses evaluated numerically per point (1 = holds,
0 = the goal fails, empty = its hypotheses fail there, where the check says inconsistent, or the goal has
no value there, where it says unknown): a numeric sweep, not a proof ("==" within a relative 1e-9).
--check gives proofs.

feasible (a library with FEASIBILITY bounds or input rules): 0 where a bound fails (the memory does not fit), and
0 where the point breaks an input rule that --set would refuse (a layout degree that does not divide the heads,
or needs more chips than the domain), decided exactly on the point's numbers; a note names each rule and how
many points break it.  --vary of a layout degree takes the layout's other degrees from their defaults, as --set
would.  With --presets, a pair that breaks an input rule is marked the same way, not an error.

Output: CSV (deterministic formatting) to --out FILE, else to stdout; --figure FILE draws it (.png,
.svg, .pdf).  A summary (points, evaluations per second) goes to stdout when --out is given, else to
stderr; --json prints the summary as JSON.

Examples:
  derive sweep critical_batch step_time --vary "batch=1:4096:64" --out batch.csv --figure batch.png
  derive sweep batch_optimum_lecture --vary "flops=1 PFLOP/s:50 PFLOP/s:200:log" --out f.csv
  derive sweep critical_batch hardware_ratio --presets --out presets.csv
  derive sweep --presets --check --out matrix.csv
"""


def add_arguments(p) -> None:
    import argparse

    p.description = DESCRIPTION
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("targets", nargs="*", metavar="TARGET")
    p.add_argument("--vary", action="append", default=[], metavar="Q=LO:HI[:N][:log]", help="a swept quantity")
    p.add_argument("--log", action="store_true", help="logarithmic spacing for every --vary")
    from derive.cli import positive_int

    p.add_argument("--points", type=positive_int, default=50, metavar="N", help="points per axis when --vary omits N")
    p.add_argument("--presets", action="store_true", help="sweep every hardware x model preset pair")
    p.add_argument("--check", action="store_true", help="with --presets: real verdicts (prover), not numeric")
    p.add_argument("--workers", type=positive_int, default=2, metavar="N", help="processes for --check (default 2)")
    p.add_argument("--out", metavar="FILE.csv", help="write the CSV here (default: stdout)")
    p.add_argument("--figure", metavar="FILE", help="draw the sweep (.png, .svg or .pdf)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")


def run(args, ctx) -> int:
    import sys
    from pathlib import Path

    from derive.checking.cache import atomic_write, cache_dir
    from derive.cli.commands.output import emit, emit_json
    from derive.errors import SweepError
    from derive.whatif.matrix import check_matrix, matrix_csv
    from derive.whatif.sweep import (
        output_target,
        parse_axis,
        resolve_target,
        sweep_figure,
        sweep_grid,
        sweep_presets,
    )

    for option, value in (("--out", args.out), ("--figure", args.figure)):
        if value is not None:  # said before the sweep's work: an empty name, a folder, a device
            output_target(value, where=f"{option} {value}")
    if args.figure is not None and Path(args.figure).suffix.lower() not in (".png", ".svg", ".pdf"):
        raise SweepError(f"figure format '{Path(args.figure).suffix.lstrip('.')}' is not supported",
                         where=f"--figure {args.figure}", hint="use .png, .svg or .pdf")
    lib = ctx.library
    if args.check:
        if not args.presets:
            raise SweepError("--check runs the prover per preset pair: use it with --presets")
        if args.hardware or args.model:
            raise SweepError("--presets sweeps every hardware and model: drop --hardware/--model")
        import time

        start = time.perf_counter()
        ids = [lib.resolve(t).id for t in args.targets] or None
        with terminal.stage("checking preset pairs") as update:
            rows = check_matrix(args.libraries or ["lecture"], scenario=args.scenario, sets=args.sets,
                                assumes=args.assumes, ids=ids, rlimit=ctx.rlimit,
                                cache_dir=None if ctx.cache is None else str(cache_dir(args.cache_dir)),
                                workers=max(1, args.workers), progress=update)
        claim_ids = ids or [c.id for c in lib.claims()]
        text = matrix_csv(rows, claim_ids)
        seconds = time.perf_counter() - start
        summary = {"pairs": len(rows), "claims": len(claim_ids), "seconds": round(seconds, 3),
                   "rechecked": sum(r.rechecked for r in rows), "reused": sum(r.reused for r in rows),
                   "prover_calls": sum(r.prover_calls for r in rows),
                   "errors": sum(1 for r in rows if r.error), "out": args.out, "workers": args.workers,
                   "verdicts": _count(v for r in rows for v in r.verdicts.values())}
        _write(text, args.out, atomic_write)
        _summary(summary, args, emit, emit_json, sys)
        return 0
    targets = [_target(lib, t, resolve_target) for t in args.targets]
    if not targets:
        raise SweepError("name at least one TARGET (a quantity, expression or claim)")
    if args.presets:
        if args.vary:
            raise SweepError("--presets and --vary do not mix: sweep one or the other")
        if args.hardware or args.model:
            raise SweepError("--presets sweeps every hardware and model: drop --hardware/--model")
        result = sweep_presets(lib, targets, scenario=args.scenario, sets=args.sets, assumes=args.assumes)
        axes = []
    else:
        scen = ctx.scenario
        axes = []
        for text in args.vary:
            name = text.partition("=")[0].strip()
            around = scen.value(name) if name in scen.values else None
            axes.append(parse_axis(lib, text, log=args.log, default_points=args.points, around=around))
        result = sweep_grid(lib, scen, targets, axes)
    _write(result.to_csv(), args.out, atomic_write)
    if args.figure:
        sweep_figure(result, axes, args.figure, title=f"scenario {ctx.scenario.name}" if not args.presets else "")
    rate = float(f"{result.evaluations / result.seconds:.3g}") if result.seconds > 0 else None
    summary = {"points": result.points, "columns": result.columns, "evaluations": result.evaluations,
               "seconds": round(result.seconds, 4), "evaluations_per_second": rate,
               "out": args.out, "figure": args.figure, "notes": result.notes}
    _summary(summary, args, emit, emit_json, sys)
    return 0


def _target(lib, text: str, resolve_target):
    """A TARGET, with errors that name it (the expression reader says "eval")."""
    from derive.errors import DeriveError

    try:
        return resolve_target(lib, text)
    except DeriveError as err:
        if err.where in (None, "eval"):
            err.where = f"TARGET {text}"
        raise


def _count(values) -> dict:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items()))


def _write(text: str, out: str | None, atomic_write=None) -> None:

    from derive.whatif.sweep import write_output_file

    if out is not None:
        write_output_file(out, text.encode(), where=f"--out {out}")
    else:
        terminal.write_out(text)


def _summary(summary: dict, args, emit, emit_json, sys) -> None:
    if args.json:
        if args.out:
            emit_json(summary)
        else:
            from derive.model.numbers import dumps_json

            terminal.write_err(dumps_json(summary) + "\n")
        return
    parts = [f"{k}={v}" for k, v in summary.items() if k not in ("columns", "notes") and v not in (None, [])]
    from derive.errors import escape_control

    line = escape_control("sweep: " + ", ".join(parts))
    notes = summary.get("notes") or []
    if args.out:
        emit(line)
        for n in notes:
            emit(f"note: {n}")
    else:
        terminal.write_err(line + "\n")
        for n in notes:
            terminal.write_err(f"note: {n}\n")
