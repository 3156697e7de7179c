"""derive recheck."""

from __future__ import annotations

HELP = ("re-check a folder of certificates (derive check --certificates DIR) with cvc5 and the interval "
        "replayer; exit 1 when one disagrees")
SCENARIO = False  # the folder holds its own statements: no library, scenario or z3 budget is read


def add_arguments(p) -> None:
    p.add_argument("folder", metavar="DIR", help="a folder written by derive check --certificates DIR")


def report_lines(folder) -> tuple[list[str], int]:
    """One line per claim and a summary; and the number of disagreements."""
    from derive.certify.recheck import recheck
    from derive.checking.parallel import default_workers
    from derive.errors import escape_control

    results = recheck(folder, workers=default_workers())
    # a folder's claim ids and reasons are data: a newline or terminal escape in them is printed escaped
    claims = [escape_control(r.claim, limit=200) for r in results]
    width = max((len(c) for c in claims), default=10)
    lines = [f"{r.status:<13} {c:<{width}}  [{r.checker}] {escape_control(r.reason)}"
             for r, c in zip(results, claims, strict=True)]
    counts = {s: sum(r.status == s for r in results) for s in ("confirmed", "not confirmed", "disagrees")}
    lines.append("recheck: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    return lines, counts["disagrees"]


def run(args, ctx) -> int:
    from derive.cli.commands.output import emit

    if not args.folder:
        from derive.errors import CertificateError

        raise CertificateError("the certificate folder is empty text", where="DIR",
                               hint="name a folder written by derive check --certificates DIR")
    lines, disagreements = report_lines(args.folder)
    for line in lines:
        emit(line)
    return 1 if disagreements else 0
