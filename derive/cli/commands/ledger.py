"""derive ledger."""

from __future__ import annotations

HELP = ("measurements against the proved floors: floor, measured, ratio; a measurement below its floor is a "
        "contradiction")
SCENARIO = False  # each entry carries its own scenario


def add_arguments(p) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--hardware", dest="only", action="append", default=[], metavar="NAME",
                   help="only measurements on this hardware preset (repeatable)")
    p.add_argument("--figures", metavar="DIR", help="also draw measured points over the derived curves into DIR")
    p.add_argument("--library", dest="libraries", action="append", default=[], metavar="PATH",
                   help="load declarations (and their ledger/ and measurements/ presets) from PATH")


def _ratio(x) -> str:
    return "-" if x is None else f"{float(x):.2f}x"


def run(args, ctx) -> int:
    from pathlib import Path

    from derive.cli.commands.output import check_output_folder, emit, emit_json
    from derive.errors import UnknownNameError
    from derive.model.display import format_value
    from derive.model.scenario import PresetStore
    from derive.whatif.ledger import build_ledger

    known = PresetStore.discover(ctx.library.preset_dirs).names("hardware")
    for name in args.only:
        if name not in known:
            raise UnknownNameError("hardware preset", name, known, where="--hardware")
    if args.figures is not None:
        check_output_folder(args.figures, "--figures")
    ledger = build_ledger(ctx.library, hardware=args.only)
    written: list = []
    if args.figures:
        from derive.documents.measured import draw_ledger_figures

        written = draw_ledger_figures(ctx.library, ledger, Path(args.figures))
    if args.json:
        emit_json({**ledger.to_json(), "figures": [str(p) for p in written]})
        return 1 if ledger.contradictions else 0
    word = {"floor": "floor", "ceiling": "ceiling", "prediction": "derived"}
    rows = []
    for r in ledger.rows:
        e = r.entry
        rows.append((e.id, e.hardware or "-", word.get(r.kind, "bound"), format_value(r.bound, r.unit),
                     format_value(e.value, r.unit), _ratio(r.ratio),
                     "-" if r.bound_achieved is None else format_value(r.bound_achieved, r.unit),
                     _ratio(r.ratio_achieved), r.status + (f" ({', '.join(r.broken)})" if r.broken else "")))
    head = ("entry", "hardware", "held to", "derived", "measured", "ratio", "at achieved", "ratio", "status")
    widths = [max(len(str(row[i])) for row in [head, *rows]) for i in range(len(head))]
    if rows:
        emit("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip())
        for row in rows:
            emit("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        emit("")
    counts = ledger.to_json()["summary"]
    n_rows = len(ledger.rows)
    breakdown = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    emit(f"{n_rows} measurement{'' if n_rows == 1 else 's'}: {breakdown}" if n_rows
         else "no measurements" + (f" for {', '.join(args.only)}" if args.only else ""))
    for r in ledger.contradictions:
        side = "below its floor" if r.kind == "floor" else "above its ceiling"
        broken = ", ".join(r.broken) or f"the claim {r.entry.check}"
        emit(f"contradiction: {r.entry.id} measured {format_value(r.entry.value, r.unit)} is {side} "
             f"{format_value(r.bound, r.unit)}; it breaks {broken}")
    for p in written:
        emit(f"wrote {p}")
    return 1 if ledger.contradictions else 0
