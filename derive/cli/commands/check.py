"""derive check."""

from __future__ import annotations

from derive.cli import terminal

HELP = "check claims; exit 0 when every claim meets its expected verdict, 1 when one does not"


def add_arguments(p) -> None:
    p.add_argument("ids", nargs="*", metavar="ID")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--certificates", metavar="DIR",
                   help="write a certificate for every proved and inconsistent verdict into DIR")
    p.add_argument("--recheck", action="store_true",
                   help="re-check the certificates with cvc5 and the independent interval replayer "
                        "(exit 1 on a disagreement)")


def run(args, ctx) -> int:
    from derive.checking.parallel import default_workers
    from derive.checking.summary import expectations_elsewhere, verdict_summary
    from derive.cli.commands.output import (
        assignment_lines,
        check_output_folder,
        claim_inputs,
        emit,
        emit_json,
        emit_notes,
        pinned_line,
        pinned_notes,
        quantity_text,
        scenario_notes,
    )
    from derive.model.scenario import DEFAULT_SCENARIO

    if args.certificates is not None:  # said before the check's work
        check_output_folder(args.certificates, "--certificates")
    ids = list(dict.fromkeys(ctx.library.resolve(i).id for i in args.ids))  # each claim once, in the order given
    checker = ctx.checker(ctx.read_scenario, workers=default_workers())
    notes: dict[str, object] = {}

    def read_notes() -> None:  # needs no verdict: done while the worker processes check
        try:
            from derive.whatif.feasibility import feasibility  # imported here too: 10 ms

            notes["infeasible"] = feasibility(ctx.library, ctx.read_scenario).violations  # no deployment can exist
        except Exception as err:  # noqa: BLE001 - raised below, after the check, as it always was
            notes["error"] = err

    def alongside(claim, result) -> tuple:
        # in the process that checked the claim, whose expansions of it are at hand (in the parent, while the
        # workers checked, the notes' expansions were a tenth of the serving library's check's CPU), and
        # where the counterexample's lines are written without holding up the output (281 values there)
        try:
            inputs: set[str] | Exception = claim_inputs(ctx.library, ctx.read_scenario, [claim.id])
        except Exception as err:  # noqa: BLE001 - raised below, after the check, as it always was
            inputs = err
        ready = display = None
        if result.counterexample:
            try:
                ready = assignment_lines(ctx.library, result.counterexample, _own_values(checker, claim))
                display = {k: quantity_text(ctx.library, k, v) for k, v in result.counterexample.items()} \
                    if args.json else None
            except Exception:  # noqa: BLE001 - written again below, where its error is raised
                ready = display = None
        return inputs, ready, display

    with terminal.progress("checking claims") as update:
        checker.progress = update
        report = checker.check(ids or None, meanwhile=read_notes, alongside=alongside)
    written = checker.alongside_values
    inputs: set[str] = set()
    for cid in ids or [c.id for c in ctx.library.claims()]:  # the notes' inputs: what these claims read
        part = written[cid][0]  # type: ignore[index]
        if isinstance(part, Exception):
            raise part
        inputs |= part
    notes["pinned"] = pinned_notes(ctx.library, ctx.read_scenario, only=inputs)  # its error before feasibility's
    if "error" in notes:
        raise notes["error"]  # type: ignore[misc]
    notes["inputs"] = inputs
    rechecked = _certify(args, checker, report) if args.certificates or args.recheck else 0
    elsewhere = expectations_elsewhere(ctx.library, ctx.read_scenario, report.results)
    ok = all(r.meets_expectation or r.id in elsewhere for r in report.results)
    inputs = notes["inputs"]  # notes: only what the claims read
    pinned = notes["pinned"]
    infeasible = notes["infeasible"]  # verdicts where no deployment can exist
    own_conflicts = assume_conflicts(ctx.library, ctx.read_scenario)
    if args.json:
        data = report.to_json()
        for claim in data["claims"]:  # exact values stay; a reader's form beside them
            if claim.get("counterexample"):
                display = written[claim["id"]][2]  # type: ignore[index]
                claim["counterexample_display"] = display if display is not None else {
                    k: quantity_text(ctx.library, k, v) for k, v in claim["counterexample"].items()}
        emit_json({**data, "pinned": pinned, "notes": scenario_notes(ctx.read_scenario, inputs),
                   "assume_conflicts": [c.to_json() for c in own_conflicts],
                   "expectations_elsewhere": sorted(elsewhere),
                   "infeasible": [v.to_json() for v in infeasible]})
        return 0 if ok and not rechecked else 1
    width = max((len(r.id) for r in report.results), default=10)
    rows, lines = [], []
    for r in report.results:
        as_expected = r.meets_expectation or r.id in elsewhere
        mark = " " if as_expected else "!"
        detail = [] if as_expected else [f"expected {r.expected}"]
        if r.counterexample:
            ready = written[r.id][1]  # type: ignore[index]
            detail += ["counterexample:"] + [f"  {line}" for line in (
                ready if ready is not None else assignment_lines(ctx.library, r.counterexample,
                                                                 _own_values(checker, ctx.library.resolve(r.id))))]
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
            for c in conflicts(ctx.library, ctx.read_scenario, ctx.library.declarations[cid]):
                seen.setdefault(f"{c.origin} {c.relation}", c)
        if seen:
            emit("inconsistent: the scenario's values contradict")
            for c in seen.values():
                for line in c.lines():
                    emit(f"  {line}")
    elif own_conflicts:  # no claim checked here reads them, so no verdict says it: the scenario says nothing
        emit("the scenario contradicts itself (no claim checked here reads it, so no verdict shows it):")
        for c in own_conflicts:
            for line in c.lines():
                emit(f"  {line}")
    if report.findings:
        emit("findings: definitions not shown to meet what they declare (claims are read only where it holds)")
        for f in report.findings:
            emit(f"  {f.text()}")
    if pinned:
        emit(pinned_line(pinned))
    for v in infeasible:
        emit(v.note)
    emit_notes(ctx.read_scenario, inputs)
    emit(f"scenario {ctx.read_scenario.name}: {verdict_summary(report.results, elsewhere, DEFAULT_SCENARIO)}")
    return 0 if ok and not rechecked else 1


def assume_conflicts(library, scenario) -> list:
    """The scenario's own ``--assume`` relations that its values contradict (none without ``--assume``)."""
    if not scenario.assumptions:
        return []
    from derive.whatif.explain import conflicts

    return [c for c in conflicts(library, scenario) if c.origin == "--assume"]


def _certify(args, checker, report) -> int:
    """Write the certificates (to ``--certificates`` or a temporary folder) and, with ``--recheck``,
    re-check them; the number of disagreements (printed on stderr, so ``--json`` stays one document)."""
    import tempfile

    from derive.certify.writer import certify_report, write

    certs, skipped = certify_report(checker, report)
    if not args.recheck:
        write(args.certificates, certs, skipped)
        return 0
    from derive.cli.commands.output import emit
    from derive.cli.commands.recheck import report_lines

    with tempfile.TemporaryDirectory() as tmp:
        folder = write(args.certificates or tmp, certs, skipped)
        lines, disagreements = report_lines(folder)
    for line in lines:
        if args.json:
            terminal.write_err(line + "\n")
        else:
            emit(line)
    return disagreements


def _own_values(checker, claim) -> frozenset[str]:
    """The quantities an instance claim's own hypotheses fix (``params_total == 1T``): its counterexample says them
    apart from the scenario's values, which a reader of their own chip and model would take them for."""
    if not getattr(claim, "instance", False):
        return frozenset()
    return frozenset(str(s) for s in checker.situation.fixed_by_hypotheses(claim))
