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

    results = recheck(folder, workers=default_workers())
    width = max((len(r.claim) for r in results), default=10)
    lines = [f"{r.status:<13} {r.claim:<{width}}  [{r.checker}] {r.reason}" for r in results]
    counts = {s: sum(r.status == s for r in results) for s in ("confirmed", "not confirmed", "disagrees")}
    lines.append("recheck: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    return lines, counts["disagrees"]


def run(args, ctx) -> int:
    from derive.cli.commands.output import emit

    lines, disagreements = report_lines(args.folder)
    for line in lines:
        emit(line)
    return 1 if disagreements else 0
