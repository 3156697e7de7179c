"""derive recheck."""

from __future__ import annotations

HELP = ("re-check a folder of certificates (derive check --certificates DIR) with cvc5 and the interval "
        "replayer; exit 1 when one disagrees")
# the folder holds its own statements; with --library (and the scenario's options, as on check) each is also held
# to the library's claim at the scenario: the certificate must state that claim, not another
SCENARIO = True


def add_arguments(p) -> None:
    p.add_argument("folder", metavar="DIR", help="a folder written by derive check --certificates DIR")


_SCENARIO_ONLY = {"hardware": "--hardware", "model": "--model", "scenario": "--scenario", "sets": "--set",
                  "assumes": "--assume", "si": "--si", "measured": "--measured", "measurements": "--measurement"}


def statements(ctx, folder) -> dict:
    """What the library states for each claim of the folder's index at the scenario
    (``derive.certify.writer.statement_of``, as check --certificates assembles it), or why it states nothing."""
    from derive.certify.recheck import entries
    from derive.certify.writer import statement_of
    from derive.errors import DeriveError
    from derive.model.declarations import Claim

    certs, _ = entries(folder)
    checker = ctx.checker(ctx.read_scenario)
    out: dict = {}
    for e in certs:
        claim = ctx.library.declarations.get(e["claim"])
        if not isinstance(claim, Claim):
            out[e["claim"]] = KeyError(e["claim"])
            continue
        try:
            problem = checker.problem(claim, claim.goal, checker.hypotheses_for(claim))
            out[e["claim"]] = statement_of(problem, e["verdict"], str(e.get("engine", "")), e["kind"])
        except DeriveError as err:
            out[e["claim"]] = err
    return out


def report_lines(folder, ctx=None) -> tuple[list[str], int]:
    """One line per claim and a summary; and the number of disagreements (with a library: and of certificates
    that state another claim than the library's)."""
    from derive.certify.recheck import recheck
    from derive.checking.parallel import default_workers
    from derive.errors import escape_control

    tied = statements(ctx, folder) if ctx is not None else None
    results = recheck(folder, workers=default_workers(), statements=tied,
                      scenario=ctx.read_scenario.name if tied is not None else None)
    # a folder's claim ids and reasons are data: a newline or terminal escape in them is printed escaped
    claims = [escape_control(r.claim, limit=200) for r in results]
    width = max((len(c) for c in claims), default=10)
    lines = [f"{r.status:<13} {c:<{width}}  [{r.checker}] {escape_control(r.reason)}"
             for r, c in zip(results, claims, strict=True)]
    kinds = ("confirmed", "not confirmed", "disagrees") + (("differs",) if tied is not None else ())
    counts = {s: sum(r.status == s for r in results) for s in kinds}
    summary = "recheck: " + ", ".join(f"{n} {'differ' if s == 'differs' else s}" for s, n in counts.items())
    if tied is not None:
        summary += (f" from library {', '.join(escape_control(n) for n in ctx.args.libraries)} at scenario "
                    f"{escape_control(ctx.read_scenario.name)}")
    lines.append(summary)
    return lines, counts["disagrees"] + counts.get("differs", 0)


def run(args, ctx) -> int:
    from derive.cli.commands.output import emit

    if not args.folder:
        from derive.errors import CertificateError

        raise CertificateError("the certificate folder is empty text", where="DIR",
                               hint="name a folder written by derive check --certificates DIR")
    if not args.libraries:
        given = [flag for dest, flag in _SCENARIO_ONLY.items() if getattr(args, dest, None)]
        if given:
            from derive.errors import UsageError

            raise UsageError(f"{given[0]} ties the certificates to a library's claims at a scenario, but no "
                             "--library is given", hint="add --library lecture (or the library the folder was "
                             "written from)")
    lines, disagreements = report_lines(args.folder, ctx if args.libraries else None)
    for line in lines:
        emit(line)
    return 1 if disagreements else 0
