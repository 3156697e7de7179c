"""derive list."""

from __future__ import annotations

HELP = "every declaration: id, kind, title"


def add_arguments(p) -> None:
    p.add_argument("--topic", metavar="T", help="only this topic (module)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def run(args, ctx) -> int:
    from derive.cli.commands.output import emit, emit_json
    from derive.errors import UnknownNameError

    lib = ctx.library
    topics = [t.name for t in lib.topics]
    if args.topic and args.topic not in topics:
        raise UnknownNameError("topic", args.topic, topics, where="--topic")
    rows = [d for d in lib.ordered() if not args.topic or d.topic == args.topic]
    if args.json:
        emit_json([{"id": d.id, "kind": d.kind, "title": d.title} for d in rows])
        return 0
    width = max((len(d.id) for d in rows), default=10)
    for d in rows:
        emit(f"{d.id:<{width}}  {d.kind:<10}  {d.title}")
    return 0
