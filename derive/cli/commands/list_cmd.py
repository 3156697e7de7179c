"""derive list."""

from __future__ import annotations

from derive.cli import library_option

HELP = "every declaration: id, kind, title (--quantities: every quantity with unit and meaning)"
SCENARIO = False  # the library's declarations, whatever the chip and model: --library alone


def add_arguments(p) -> None:
    p.add_argument("--topic", metavar="T", help="only this topic (module)")
    p.add_argument("--quantities", action="store_true",
                   help="list every quantity instead: input, derived (with its definition) or constant, unit, meaning")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    library_option(p)


def run(args, ctx) -> int:
    from derive.cli.commands.output import emit, emit_json
    from derive.errors import UnknownNameError

    lib = ctx.library
    topics = [t.name for t in lib.topics]
    if args.topic is not None and args.topic not in topics:  # "" names no topic: not "every topic"
        raise UnknownNameError("topic", args.topic, topics, where="--topic")
    if args.quantities:
        rows = quantity_rows(lib, args.topic)
        if args.json:
            emit_json(rows)
            return 0
        w_name = max((len(r["name"]) for r in rows), default=10)
        w_kind = max((len(r["kind"]) for r in rows), default=7)
        w_unit = max((len(r["unit"]) for r in rows), default=4)
        for r in rows:
            emit(f"{r['name']:<{w_name}}  {r['kind']:<{w_kind}}  {r['unit']:<{w_unit}}  {r['meaning']}")
        return 0
    rows = [d for d in lib.ordered() if args.topic is None or d.topic == args.topic]
    if args.json:
        emit_json([{"id": d.id, "kind": d.kind, "title": d.title} for d in rows])
        return 0
    width = max((len(d.id) for d in rows), default=10)
    for d in rows:
        emit(f"{d.id:<{width}}  {d.kind:<10}  {d.title}")
    return 0


def quantity_rows(lib, topic: str | None = None) -> list[dict]:
    """Each quantity (of ``topic``, or all, in the library's order): ``input`` (a scenario sets it),
    ``derived`` (a definition gives it; ``definition`` names it) or ``constant``, with unit and meaning."""
    out = []
    for t in lib.topics:
        if topic is not None and t.name != topic:
            continue
        for q in t.quantities:
            if lib.quantities.get(q.name) is not q:
                continue
            definition = lib.definition_of.get(q.name)
            kind = "constant" if q.value is not None else "derived" if definition is not None else "input"
            out.append({"name": q.name, "kind": kind, "unit": q.display_unit or q.unit, "meaning": q.meaning,
                        "definition": definition.id if definition is not None else None})
    return out
