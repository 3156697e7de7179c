"""derive check."""

from __future__ import annotations

HELP = "check claims; exit 0 when every claim meets its expected verdict, 1 when one does not"


def add_arguments(p) -> None:
    p.add_argument("ids", nargs="*", metavar="ID")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def run(args, ctx) -> int:
    from derive.checking.parallel import default_workers
    from derive.cli import terminal
    from derive.cli.commands.output import (
        assignment_lines,
        emit,
        emit_json,
        emit_notes,
        pinned_line,
        pinned_notes,
        quantity_text,
        scenario_notes,
    )

    ids = list(dict.fromkeys(ctx.library.resolve(i).id for i in args.ids))  # each claim once, in the order given
    checker = ctx.checker(workers=default_workers())
    with terminal.progress("checking claims") as update:
        checker.progress = update
        report = checker.check(ids or None)
    from derive.checking.summary import verdict_summary
    from derive.cli.commands.output import claim_inputs

    inputs = claim_inputs(ctx.library, ctx.scenario, [r.id for r in report.results])  # notes: only what was read
    pinned = pinned_notes(ctx.library, ctx.scenario, only=inputs)
    from derive.whatif.feasibility import feasibility

    infeasible = feasibility(ctx.library, ctx.scenario).violations  # verdicts where no deployment can exist
    if args.json:
        data = report.to_json()
        for claim in data["claims"]:  # exact values stay; a reader's form beside them
            if claim.get("counterexample"):
                claim["counterexample_display"] = {k: quantity_text(ctx.library, k, v)
                                                   for k, v in claim["counterexample"].items()}
        emit_json({**data, "pinned": pinned, "notes": scenario_notes(ctx.scenario, inputs),
                   "infeasible": [v.to_json() for v in infeasible]})
        return 0 if report.ok else 1
    width = max((len(r.id) for r in report.results), default=10)
    rows, lines = [], []
    for r in report.results:
        mark = " " if r.meets_expectation else "!"
        detail = [] if r.meets_expectation else [f"expected {r.expected}"]
        if r.counterexample:
            detail += ["counterexample:"] + [f"  {line}" for line in assignment_lines(ctx.library, r.counterexample)]
        if r.reason and r.verdict != "proved":
            detail.append(f"reason: {r.reason}")
        rows.append((mark, r.verdict, r.id, r.title, r.engine, "\n".join(detail)))
        lines.append(f"{mark} {r.verdict:<12} {r.id:<{width}}  {r.title}  [{r.engine}]")
        lines += [f"    {line}" for line in detail]
    if not terminal.verdict_table(rows):
        for line in lines:
            emit(line)
    inconsistent = [r.id for r in report.results if r.verdict == "inconsistent"]
    if inconsistent:
        from derive.whatif.explain import conflicts

        seen: dict[str, object] = {}
        for cid in inconsistent:
            for c in conflicts(ctx.library, ctx.scenario, ctx.library.declarations[cid]):
                seen.setdefault(f"{c.origin} {c.relation}", c)
        if seen:
            emit("inconsistent: the scenario's values contradict")
            for c in seen.values():
                for line in c.lines():
                    emit(f"  {line}")
    if pinned:
        emit(pinned_line(pinned))
    for v in infeasible:
        emit(v.note)
    emit_notes(ctx.scenario, inputs)
    emit(f"scenario {ctx.scenario.name}: {verdict_summary(report.results)}")
    return 0 if report.ok else 1
