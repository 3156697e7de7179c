"""derive export.

``--format floors-json`` takes no ids: it prints the proved floor on one decode step at the scenario
(``--hardware``, ``--model``, ``--set 'batch=64 seq'`` ...), split into its terms, as one JSON object for the
pluggable latency predictors of serving simulators.  The schema is ``derive.whatif.predict``'s
(``"schema": "derive.floors/1"``: ``metric``, ``quantity``, ``claim`` {id, title, statement, verdict,
lower_bound, rests_on}, ``points`` [{scenario, inputs, floor, terms, infeasible}], each value
{exact, value, unit, display}); the same as ``derive.predict(...).to_json()``.
"""

from __future__ import annotations

from derive.cli import terminal

HELP = "paper-ready snippet(s) on stdout: equations with stable labels (eq:batch_optimum)"


def add_arguments(p) -> None:
    p.add_argument("ids", nargs="*", metavar="ID", help="declaration ids (full, or the last part when unique)")
    p.add_argument("--format", choices=("latex", "markdown", "tex", "md", "smt2", "floors-json"), default="latex",
                   help="latex (default), markdown, or smt2: the claim's certificate (an SMT-LIB2 query whose "
                        "unsat establishes its verdict; JSON for an interval proof), or floors-json: the proved "
                        "floor on a decode step at the scenario, by term, for a serving simulator (no ids)")


def run(args, ctx) -> int:

    from derive.errors import ScenarioError

    if args.format == "floors-json":
        return _floors(args, ctx)
    if not args.ids:
        raise ScenarioError(f"export --format {args.format} needs at least one declaration id",
                            hint="derive export batch_optimum (floors-json alone takes none)")
    if args.format == "smt2":
        return _certificates(args, ctx)
    from derive.documents.export import export
    from derive.documents.render import check_templates

    check_templates()  # a broken installation fails here, before any proving
    kind = {"tex": "latex", "md": "markdown"}.get(args.format, args.format)
    ids = list(dict.fromkeys(ctx.library.resolve(i).id for i in args.ids))  # one equation (one label) each
    terminal.write_out(export(ctx.library, ctx.scenario, ids, kind, checker=ctx.checker()))
    return 0


def _certificates(args, ctx) -> int:

    from derive.certify.writer import certify_report
    from derive.errors import CertificateError

    ids = list(dict.fromkeys(ctx.library.resolve(i).id for i in args.ids))
    checker = ctx.checker()
    report = checker.check(ids)
    results = report.by_id()
    certs, skipped = certify_report(checker, report)
    by_claim = {c.claim: c for c in certs}
    texts = []
    for cid in ids:
        if cid in by_claim:
            texts.append(by_claim[cid].text)
            continue
        r = results[cid]
        why = skipped.get(cid) or f"its verdict is {r.verdict}; only proved and inconsistent verdicts have one"
        raise CertificateError(f"no certificate for {cid}: {why}")
    terminal.write_out("\n".join(texts))
    return 0


def _floors(args, ctx) -> int:
    import json

    from derive.errors import ScenarioError
    from derive.whatif.audit import checker_for
    from derive.whatif.predict import predict_floors

    if args.ids:
        raise ScenarioError("export --format floors-json takes no ids (the library names its floor)",
                            where=f"'{args.ids[0]}'",
                            hint="set the scenario: --hardware, --model, --set 'batch=64 seq'")
    floors = predict_floors(ctx.library, [ctx.scenario], checker_for(ctx.library))
    terminal.write_out(json.dumps(floors.to_json(), indent=2, ensure_ascii=False) + "\n")
    return 0
