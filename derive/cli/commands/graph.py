"""derive graph."""

from __future__ import annotations

from derive.cli import terminal

HELP = "the dependency graph on stdout (dot, json or svg), nodes coloured by verdict"


def add_arguments(p) -> None:
    p.add_argument("--format", choices=("dot", "json", "svg"), default="dot", help="output format (default: dot)")
    p.add_argument("--no-check", action="store_true",
                   help="do not check claims (nodes are 'unchecked' instead of their verdict)")


def run(args, ctx) -> int:
    import sys

    from derive.documents.figures import graph_dot, graph_json, graph_svg
    from derive.model.numbers import dumps_json

    library = ctx.library
    verdicts = {} if args.no_check else {r.id: r.verdict for r in ctx.checker().check().results}
    if args.format == "dot":
        terminal.write_out(graph_dot(library, verdicts))
    elif args.format == "json":
        terminal.write_out(dumps_json(graph_json(library, verdicts)) + "\n")
    else:
        sys.stdout.buffer.write(graph_svg(library, verdicts))
        sys.stdout.flush()
    return 0
