"""derive show."""

from __future__ import annotations

HELP = "statement, formula, derivation steps, assumptions, dependencies, verdict"


def add_arguments(p) -> None:
    p.add_argument("id", metavar="ID")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def run(args, ctx) -> int:
    import sympy as sp

    from derive.cli.commands.output import emit, emit_json, emit_notes, scenario_notes
    from derive.model.declarations import Assumption, Claim, Definition

    lib = ctx.library
    if args.id in lib.quantities and args.id not in {d.short for d in lib.ordered()}:
        q = lib.quantities[args.id]
        info = {"quantity": q.name, "latex": q.latex, "unit": q.unit, "meaning": q.meaning, "domain": _domain(q),
                "defined_by": lib.definition_of[q.name].id if q.name in lib.definition_of else None,
                "input_table": next((t for t, spec in lib.input_tables.items() if q.name in spec["members"]), None)}
        # the rules a scenario's inputs must meet that name this quantity (a library's INPUT_CONSTRAINTS)
        rules = [f"{c['rule']} ({c['id']})" for c in lib.input_constraints
                 if any(q.name in lib.reaches(e) for e in c["relation"].exprs())]
        value = _value(lib, ctx.scenario, q.name)
        infeasible = _infeasible(lib, ctx.scenario) if value is not None else []
        if args.json:
            emit_json({**info, "rules": rules, "value": None if value is None else value.to_json(),
                       "infeasible": [v.to_json() for v in infeasible],
                       "notes": scenario_notes(ctx.scenario, set(value.used)) if value is not None else []})
        else:
            for k, v in info.items():
                if v is not None:
                    emit(f"{k}: {v}")
            for rule in rules:
                emit(f"rule: {rule}")
            if value is not None:
                emit(f"value: {value.display}   (scenario {ctx.scenario.name})")
            for v in infeasible:
                emit(v.note)
            if value is not None:  # the defaults and lecture values the value read, as derive eval says them
                emit_notes(ctx.scenario, set(value.used))
        return 0
    d = lib.resolve(args.id)
    used: set[str] | None = None
    info: dict = {"id": d.id, "kind": d.kind, "title": d.title, "statement": d.statement, "source": str(d.source)}
    if isinstance(d, Definition):
        info["formula"] = f"{d.defines.name} = {sp.sstr(d.expr)}"
        if d.domain is not None:
            info["domain"] = str(d.domain)
        value = _value(lib, ctx.scenario, d.defines.name)
        if value is not None:
            info["value"] = value.display if not args.json else value.to_json()
            used = set(value.used)  # the notes are of the inputs it read, as derive eval says them
            info["notes"] = scenario_notes(ctx.scenario, used)
    elif isinstance(d, Assumption):
        info["formula"] = str(d.relation) if d.relation is not None else None
    info["depends_on"] = sorted(lib.predecessors(d.id))
    info["rests_on"] = lib.rests_on(d)
    if isinstance(d, Claim):
        info["formula"] = str(d.goal)
        info["hypotheses"] = [str(h) for h in d.hypotheses]
        used = set(d.goal.free_symbols()).union(*(h.free_symbols() for h in d.hypotheses))
        # every quantity's domain is a hypothesis too (positive unless declared otherwise)
        info["domains"] = [_domain(q, named=True) for q in sorted({lib.quantity_of(s) for s in used},
                                                                  key=lambda q: q.name)]
        result = ctx.checker().check([d.id]).results[0]
        info["verdict"] = result.verdict
        info["expected"] = result.expected
        info["engine"] = result.engine
        info["reason"] = result.reason
        info["counterexample"] = result.counterexample
        info["steps"] = [{"step": str(s.formula), "why": s.why, "verdict": s.outcome.verdict,
                          "engine": s.outcome.engine} for s in result.steps]
        info["notes"] = scenario_notes(ctx.scenario)
    # a value or a verdict at the scenario is printed: where no deployment can exist there, say so
    printed = "value" in info or "verdict" in info
    infeasible = _infeasible(lib, ctx.scenario) if printed else []
    if args.json:
        emit_json({**info, "infeasible": [v.to_json() for v in infeasible]} if printed else info)
        return 0
    from derive.cli.commands.output import assignment_lines, formula_text

    if isinstance(d, Claim):  # numbers with their units for people; the JSON keeps the exact form
        info["formula"] = formula_text(lib, d.goal)
        info["hypotheses"] = [formula_text(lib, h) for h in d.hypotheses]
        for step, s in zip(info["steps"], result.steps, strict=True):
            step["step"] = formula_text(lib, s.formula)
    elif isinstance(d, Assumption) and d.relation is not None:
        info["formula"] = formula_text(lib, d.relation)
    from derive.cli.terminal import plain_prose

    for k, v in info.items():
        if k == "notes":
            continue
        if k == "steps":
            for i, s in enumerate(v):
                emit(f"  step {i + 1}: {s['step']}   [{s['verdict']}, {s['engine']}] {plain_prose(s['why'])}")
        elif k == "counterexample" and v:
            emit("counterexample:")
            for line in assignment_lines(lib, v):
                emit(f"  {line}")
        elif k == "statement" and v:
            emit(f"{k}: {' '.join(plain_prose(v).split())}")  # one line: a newline in prose is a space
        elif isinstance(v, list) and v:
            emit(f"{k}: {', '.join(map(str, v))}")
        elif v not in (None, [], ""):
            emit(f"{k}: {v}")
    for v in infeasible:
        emit(v.note)
    if "notes" in info:
        emit_notes(ctx.scenario, used)
    return 0


def _infeasible(lib, scenario) -> list:
    """The feasibility bounds the scenario breaks (``derive.whatif.feasibility``)."""
    from derive.whatif.feasibility import feasibility

    return feasibility(lib, scenario).violations


def _value(lib, scenario, name: str):
    """The quantity's value under the scenario (``derive eval``'s, with the inputs it read), or None when it has
    none there."""
    from derive.errors import DeriveError
    from derive.model.evaluate import evaluate

    try:
        return evaluate(lib, scenario, name, dependence=True)
    except DeriveError:
        return None


def _domain(q, named: bool = False) -> str:
    """A quantity's domain, which every claim about it assumes: ``positive (> 0), integer``; with its name
    for a claim's list (``batch > 0 integer``)."""
    relation = {"positive": "> 0", "nonnegative": ">= 0", "fraction": "in [0, 1]"}.get(q.domain)
    if named:
        return f"{q.name} {relation or 'real'}" + (" integer" if q.integer else "")
    return (f"{q.domain} ({relation})" if relation else "any real") + (", integer" if q.integer else "")
