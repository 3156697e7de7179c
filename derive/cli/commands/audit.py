"""derive audit."""

from __future__ import annotations

import itertools

from derive.cli import library_option, positive_int, terminal

HELP = ("hold a table of measured or predicted numbers (CSV or JSON lines) against the proved bounds: per row "
        "impossible, consistent or unchecked; exit 1 when a row is impossible")
SCENARIO = False  # each row names its own model and hardware


def add_arguments(p) -> None:
    p.add_argument("file", metavar="FILE", help="the table (.csv, .jsonl), or - for standard input")
    p.add_argument("--format", dest="fmt", choices=("csv", "jsonl"), help="the table's format (default: from the "
                   "file name, else from its first line)")
    p.add_argument("--json", action="store_true", help="every row as JSON on stdout")
    p.add_argument("--out", metavar="FILE.csv", help="every row, with its verdict, to a CSV file (written atomically)")
    p.add_argument("--html", metavar="DIR", help="a report page, DIR/index.html: numbers against their bounds per chip "
                   "and model, impossible rows linked to the bounds' derivations (written atomically)")
    p.add_argument("--site", default=None, metavar="URL", help="where the derivation site (derive build --format "
                   "html) is, relative to DIR or as a URL, for --html's links (default: .., DIR inside the site)")
    p.add_argument("--top", type=positive_int, default=10, metavar="N",
                   help="rows shown per section of the table (default 10)")
    p.add_argument("--exact", action="store_true", help="decide every row in exact arithmetic (slower)")
    library_option(p, "declarations (and their AUDIT_BOUNDS)")
    p.add_argument("--no-cache", action="store_true", help="bypass the proof cache")


def run(args, ctx) -> int:
    import heapq
    import os
    import tempfile
    from pathlib import Path

    from derive.cli.commands.output import check_output_folder, emit
    from derive.errors import OutputError
    from derive.model.numbers import dumps_json
    from derive.whatif.audit import (
        CSV_FIELDS,
        Auditor,
        checker_for,
        csv_line,
        plan_audit,
        plan_json,
        read_rows,
        row_csv,
        row_json,
    )
    from derive.whatif.sweep import output_target, user_mode

    out_path = None
    if args.out is not None:  # said before the rows' work: an empty name, a folder, a device (a link: its target)
        out_path = output_target(args.out, where=f"--out {args.out}")
    if args.html is not None:
        check_output_folder(args.html, "--html")
    elif args.site is not None:
        raise OutputError("--site is for --html's links", where="--site", hint="add --html DIR")
    scheme = args.site.split(":", 1)[0].lower() if args.site is not None and ":" in args.site.split("/", 1)[0] else ""
    if scheme not in ("", "http", "https"):  # a javascript: or data: link would run in the reader's browser
        raise OutputError(f"--site {args.site!r} is a {scheme}: link", where="--site",
                          hint="a folder relative to the report, or an http(s) URL")
    plan = plan_audit(ctx.library, checker_for(ctx.library, ctx.cache))
    header, rows = read_rows(args.file, fmt=args.fmt)
    auditor = Auditor(plan, header, where=args.file, exact=args.exact,
                      folder=None if args.file == "-" else Path(args.file).parent)
    temps: list[Path] = []

    def temp(near: Path, what: str) -> tuple[Path, object]:
        try:  # a missing folder is made, as derive sweep --out makes it; one that cannot be is the option's error
            near.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=".derive-audit-", dir=near)
        except OSError as err:
            raise OutputError(f"cannot write in {near}: {err.strerror or err}", where=what,
                              hint="name a file in a folder you can write") from None
        temps.append(Path(name))
        return Path(name), os.fdopen(fd, "w", encoding="utf-8", newline="")

    counts = {"impossible": 0, "consistent": 0, "unchecked": 0}
    report = None
    if args.html is not None:
        from derive.documents.audit_page import AuditReport

        report = AuditReport(plan, args.file)
    impossible: list = []  # the first --top impossible rows
    tight: list = []  # heap of the --top tightest consistent rows: (-slack, line, row)
    # why rows went unchecked, by reason: [rows, the first row's label] (a table of a million rows may repeat one
    # reason a million times; the printed list is the --top most frequent)
    unchecked: dict[str, list] = {}
    csv_file = json_file = None
    try:
        if out_path is not None:
            csv_tmp, csv_file = temp(out_path.parent if str(out_path.parent) else Path("."), f"--out {args.out}")
            csv_file.write(csv_line([*header, *CSV_FIELDS]))
        if args.json:
            json_tmp, json_file = temp(Path(tempfile.gettempdir()), "--json (its temporary file)")
            json_file.write('{"rows": [')
        first = True
        with terminal.stage("auditing rows") as update:  # piped: one line with the count once done
            for row in auditor.audit(rows):
                counts[row.verdict] += 1
                if sum(counts.values()) % 1000 == 0:
                    update(sum(counts.values()), sum(counts.values()))
                if report is not None:
                    report.add(row)
                if csv_file is not None:
                    csv_file.write(csv_line(row_csv(row, header)))
                if json_file is not None:
                    json_file.write(("\n" if first else ",\n") + dumps_json(row_json(row, plan), indent=None))
                    first = False
                if row.verdict == "impossible" and len(impossible) < args.top:
                    impossible.append(row)
                elif row.verdict == "unchecked":
                    seen = unchecked.get(row.reason or "no bound applies")
                    if seen is not None:
                        seen[0] += 1
                    elif len(unchecked) < UNCHECKED_REASONS:
                        unchecked[row.reason or "no bound applies"] = [1, _label(row)]
                elif row.verdict == "consistent":
                    slack = row.tightest[1].slack
                    item = (-slack, -row.line, next(_counter), row)
                    if len(tight) < args.top:
                        heapq.heappush(tight, item)
                    elif item > tight[0]:
                        heapq.heapreplace(tight, item)
            update(sum(counts.values()), sum(counts.values()))
        total = sum(counts.values())
        if report is not None:  # before the CSV is put in place: a page that cannot be written leaves neither
            from derive.documents.audit_page import DEFAULT_SITE, write_report

            write_report(report, Path(args.html), DEFAULT_SITE if args.site is None else args.site)
        if csv_file is not None:
            csv_file.close()
            os.replace(csv_tmp, out_path)
            temps.remove(csv_tmp)
            user_mode(out_path)
        if json_file is not None:
            tail = {"summary": {"rows": total, **counts}, "notes": list(auditor.notes), "metrics": plan_json(plan)}
            json_file.write("\n], " + dumps_json(tail, indent=None)[1:] + "\n")
            json_file.close()
            with open(json_tmp, encoding="utf-8") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), ""):
                    terminal.write_out(chunk)
            return 1 if counts["impossible"] else 0
    finally:
        for f in (csv_file, json_file):
            if f is not None and not f.closed:
                f.close()
        for t in temps:
            t.unlink(missing_ok=True)
    _print_table(plan, impossible, [r for *_, r in sorted(tight, reverse=True)], args.top)
    _print_unchecked(unchecked, args.top)
    summary = (f"{total} row{'s' if total != 1 else ''}: {counts['impossible']} impossible, "
               f"{counts['consistent']} consistent, {counts['unchecked']} unchecked")
    emit(summary)
    for note in auditor.notes:
        emit(f"note: {note}")
    if out_path is not None:
        emit(f"wrote {out_path}")
    if report is not None:
        emit(f"wrote {Path(args.html) / 'index.html'}")
    return 1 if counts["impossible"] else 0


_counter = itertools.count()  # ties between equal slacks never compare rows
UNCHECKED_REASONS = 1000  # distinct reasons counted (a reason may quote a cell: a bound on the memory kept)


def _print_unchecked(unchecked: dict[str, list], top: int) -> None:
    """The most frequent reasons rows went unchecked, each with its count and its first row."""
    from derive.cli.commands.output import emit
    from derive.errors import escape_control

    if not unchecked:
        return
    emit(f"unchecked, by reason (up to {top}):")
    for reason, (n, first) in sorted(unchecked.items(), key=lambda kv: (-kv[1][0], kv[0]))[:top]:
        emit(f"  {n} row{'s' if n != 1 else ''} (first: {first}): {escape_control(reason, limit=200)}")
    emit("")


def _label(row) -> str:
    from derive.errors import escape_control

    for key in ("id", "source"):
        if row.cells.get(key):
            return escape_control(row.cells[key], limit=40)  # user text: never a raw control sequence
    return f"line {row.line}"


def _print_table(plan, impossible: list, tight: list, top: int) -> None:
    from derive.cli.commands.output import emit
    from derive.errors import escape_control
    from derive.model.display import format_quantity, format_value
    from derive.model.parse import is_bare_number

    def describe(row):
        metric, b = next(((m, b) for m, bs in row.metrics.items() for b in bs if b.status == "impossible"),
                         row.tightest)
        unit = plan.metrics[metric].unit
        measured = escape_control(row.cells.get(metric, ""), limit=30)
        if unit != "1" and is_bare_number(measured):  # a bare number is read in SI base units: say which
            measured = f"{measured} {unit}"
        side = "floor" if b.kind == "floor" else "ceiling"
        detail = ""
        if b.changes:
            c = b.changes[0]
            q = plan.library.quantity(c["quantity"])
            detail = (f"needs {q.name} {c['op']} {format_quantity(c['value'], q.dimension, q.display_unit)} "
                      f"(row: {format_quantity(c['row_value'], q.dimension, q.display_unit)})")
        if not detail and b.terms:
            detail = ", ".join(f"{k} {v['share']:.0%}" for k, v in b.terms.items())
        return (_label(row), metric, measured, f"{side} {format_value(b.bound, unit)}", f"{b.ratio:.3g}x",
                b.claim.rsplit(".", 1)[-1], detail)

    sections = [("impossible", [describe(r) for r in impossible]),
                ("tightest consistent", [describe(r) for r in tight])]
    head = ("row", "metric", "number", "bound", "ratio", "claim", "needs / terms (share)")
    if terminal.colour():
        _rich_tables(sections, head, top)
        return
    for title, rows in sections:
        if not rows:
            continue
        emit(f"{title} (up to {top}):")
        widths = [max(len(str(x[i])) for x in [head, *rows]) for i in range(len(head))]
        emit("  " + "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip())
        for r in rows:
            emit("  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        emit("")


def _rich_tables(sections: list, head: tuple[str, ...], top: int) -> None:
    """The same sections as tables on a terminal: impossible rows in red, consistent ones in green."""
    from rich.table import Table
    from rich.text import Text

    for title, rows in sections:
        if not rows:
            continue
        style = "bold red" if title == "impossible" else "green"
        table = Table(title=Text(f"{title} (up to {top})", style=style), title_justify="left", box=None,
                      show_edge=False, pad_edge=False)
        for name in head:
            table.add_column(name, overflow="fold", no_wrap=name in ("metric", "number", "ratio", "bound"))
        for r in rows:
            table.add_row(*[Text(str(c), style=style if i == 4 else "") for i, c in enumerate(r)])
        terminal.print_rich(table)
        terminal.print_rich()
