"""derive export."""

from __future__ import annotations

HELP = "paper-ready snippet(s) on stdout: equations with stable labels (eq:batch_optimum)"


def add_arguments(p) -> None:
    p.add_argument("ids", nargs="+", metavar="ID", help="declaration ids (full, or the last part when unique)")
    p.add_argument("--format", choices=("latex", "markdown", "tex", "md", "smt2"), default="latex",
                   help="latex (default), markdown, or smt2: the claim's certificate (an SMT-LIB2 query whose "
                        "unsat establishes its verdict; JSON for an interval proof)")


def run(args, ctx) -> int:
    import sys

    if args.format == "smt2":
        return _certificates(args, ctx)
    from derive.documents.export import export
    from derive.documents.render import check_templates

    check_templates()  # a broken installation fails here, before any proving
    kind = {"tex": "latex", "md": "markdown"}.get(args.format, args.format)
    ids = list(dict.fromkeys(ctx.library.resolve(i).id for i in args.ids))  # one equation (one label) each
    sys.stdout.write(export(ctx.library, ctx.scenario, ids, kind, checker=ctx.checker()))
    return 0


def _certificates(args, ctx) -> int:
    import sys

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
    sys.stdout.write("\n".join(texts))
    return 0
