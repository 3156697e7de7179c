"""derive ledger."""

from __future__ import annotations

from derive.cli import library_option

HELP = ("measurements against the proved floors: floor, measured, ratio and signed error; a measurement below its "
        "floor is a contradiction; --since flags ratios that moved")
SCENARIO = False  # each entry carries its own scenario


def add_arguments(p) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--hardware", dest="only", action="append", default=[], metavar="NAME",
                   help="only measurements on this hardware preset (repeatable)")
    p.add_argument("--since", metavar="FILE", help="a previous `derive ledger --json`: flag each entry whose ratio "
                   "moved by at least 2 points and 10%% relative (exit 1), and list the entries new and gone")
    p.add_argument("--figures", metavar="DIR", help="also draw measured points over the derived curves into DIR")
    library_option(p, "declarations (and their ledger/ and measurements/ presets)")


def _ratio(x) -> str:
    return "-" if x is None else f"{float(x):.2f}x"


def _error(x) -> str:
    return f"{float(x):+.1%}"


def run(args, ctx) -> int:
    from pathlib import Path

    from derive.cli.commands.output import check_output_folder, emit, emit_json
    from derive.errors import UnknownNameError
    from derive.model.display import format_value
    from derive.model.scenario import PresetStore
    from derive.whatif.ledger import build_ledger, compare_ledgers, read_previous_ledger

    known = PresetStore.discover(ctx.library.preset_dirs).names("hardware")
    for name in args.only:
        if name not in known:
            raise UnknownNameError("hardware preset", name, known, where="--hardware")
    if args.figures is not None:
        check_output_folder(args.figures, "--figures")
    previous = read_previous_ledger(args.since) if args.since is not None else None
    ledger = build_ledger(ctx.library, hardware=args.only)
    since = compare_ledgers(previous, ledger, args.since) if previous is not None else None
    failed = bool(ledger.contradictions) or bool(since is not None and since.moved)
    written: list = []
    if args.figures:
        from derive.documents.measured import draw_ledger_figures

        written = draw_ledger_figures(ctx.library, ledger, Path(args.figures))
    if args.json:
        extra = {"since": since.to_json()} if since is not None else {}
        emit_json({**ledger.to_json(), "figures": [str(p) for p in written], **extra})
        return 1 if failed else 0
    word = {"floor": "floor", "ceiling": "ceiling", "prediction": "derived"}
    rows = []
    for r in ledger.rows:
        e = r.entry
        rows.append((e.id, e.hardware or "-", word.get(r.kind, "bound"), format_value(r.bound, r.unit),
                     format_value(e.value, r.unit), _ratio(r.ratio), _error(r.signed_error),
                     "-" if r.bound_achieved is None else format_value(r.bound_achieved, r.unit),
                     _ratio(r.ratio_achieved), r.status + (f" ({', '.join(r.broken)})" if r.broken else "")))
    head = ("entry", "hardware", "held to", "derived", "measured", "ratio", "error", "at achieved", "ratio", "status")
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
    if ledger.skipped:
        topics = sorted({s.rsplit("(", 1)[-1].split(".")[0] for s in ledger.skipped})
        emit(f"note: {len(ledger.skipped)} entr{'y' if len(ledger.skipped) == 1 else 'ies'} check claims this "
             f"library does not have ({', '.join(t + '.*' for t in topics)}); load the library that has them "
             "(e.g. --library serving)")
    for r in ledger.contradictions:
        side = "below its floor" if r.kind == "floor" else "above its ceiling"
        broken = ", ".join(r.broken) or f"the claim {r.entry.check}"
        emit(f"contradiction: {r.entry.id} measured {format_value(r.entry.value, r.unit)} is {side} "
             f"{format_value(r.bound, r.unit)}; it breaks {broken}")
    if since is not None:
        for m in since.moved:
            emit(f"moved since {args.since}: {m.id} ratio {m.before:.3g}x -> {m.after:.3g}x ({m.change:+.3g}, "
                 f"{m.change / m.before:+.1%})")
        for word, ids in (("new", since.new), ("gone", since.gone)):
            for i in ids:
                emit(f"{word} since {args.since}: {i}")
        emit(f"since {args.since}: {len(since.moved)} moved (at least 2 points and 10 % of the ratio), "
             f"{len(since.new)} new, {len(since.gone)} gone")
    for p in written:
        emit(f"wrote {p}")
    return 1 if failed else 0
