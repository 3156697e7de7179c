"""derive export."""

from __future__ import annotations

HELP = "paper-ready snippet(s) on stdout: equations with stable labels (eq:batch_optimum)"


def add_arguments(p) -> None:
    p.add_argument("ids", nargs="+", metavar="ID", help="declaration ids (full, or the last part when unique)")
    p.add_argument("--format", choices=("latex", "markdown", "tex", "md"), default="latex",
                   help="latex (default) or markdown")


def run(args, ctx) -> int:
    import sys

    from derive.documents.export import export
    from derive.documents.render import check_templates

    check_templates()  # a broken installation fails here, before any proving
    kind = {"tex": "latex", "md": "markdown"}.get(args.format, args.format)
    ids = list(dict.fromkeys(ctx.library.resolve(i).id for i in args.ids))  # one equation (one label) each
    sys.stdout.write(export(ctx.library, ctx.scenario, ids, kind, checker=ctx.checker()))
    return 0
