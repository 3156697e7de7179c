"""Printing helpers shared by commands (the library itself never prints)."""

from __future__ import annotations

from derive.cli import terminal


def emit_json(data: object) -> None:
    """Strict JSON on stdout: never NaN or Infinity (null plus a ``KEY_note``, see derive.model.numbers)."""
    from derive.model.numbers import dumps_json

    terminal.write_out(dumps_json(data) + "\n")


def check_output_folder(out: str, option: str) -> None:
    """An output folder option (``--out``, ``--figures``): empty, a file, or a path that runs through a file is
    one ``OutputError`` naming the option, said before any work."""
    from pathlib import Path

    from derive.checking.cache import not_a_folder_on_the_way
    from derive.errors import OutputError

    if not out.strip():
        raise OutputError(f"{option} is empty", where=option, hint="name a folder (it is created when missing)")
    blocked = not_a_folder_on_the_way(out)
    if blocked is not None:
        what = "is not a folder" if blocked == Path(out) else f"runs through {blocked}, which is not a folder"
        raise OutputError(f"{out} {what}", where=f"{option} {out}", hint="name a folder (it is created when missing)")


def emit(line: str = "") -> None:
    terminal.write_out(line + "\n")


def quantity_text(library, name: str, si_value) -> str:
    """``20 TB/s``: a value of a quantity (SI, exact or as text) for people."""
    import sympy as sp

    from derive.model.display import format_quantity, format_value

    value = sp.Rational(si_value) if isinstance(si_value, str) else si_value
    q = library.quantities.get(name)
    if q is None:
        return format_value(value, "1")
    return format_quantity(value, q.dimension, q.display_unit)


def assignment_lines(library, values: dict | None, own: frozenset[str] = frozenset()) -> list[str]:
    """Counterexample or pinned values as ``name = value unit`` lines; a value the display rounds is
    followed by its exact value (a counterexample is exact: the claim may hold at 0.3333 but not at 1/3).
    ``own``: the values the claim's own hypotheses fix, said so beside the scenario's."""
    import sympy as sp

    from derive.model.display import shown
    from derive.model.units import format_dimension

    lines = []
    for name, text in (values or {}).items():
        line = f"{name} = {quantity_text(library, name, text)}"
        value = sp.Rational(text) if isinstance(text, str) else text
        q = library.quantities.get(name)
        unit = format_dimension(q.dimension) if q is not None else "1"
        if isinstance(value, sp.Rational) and not shown(value, unit).exact:
            line += f" (exactly {value}{'' if unit == '1' else ' ' + unit})"
        if name in own:
            line += " (the claim's own hypothesis)"
        lines.append(line)
    return lines


def pinned_notes(library, scenario, only=None) -> list[dict]:
    """The scenario's pinned derived quantities (each cuts its definition), for JSON output.
    ``only``: restrict to these names (e.g. the inputs of an evaluated expression)."""
    out = []
    for name in sorted(scenario.pinned):
        if only is not None and name not in only:
            continue
        definition = library.definition_of.get(name)
        origin = scenario.values[name].origin
        # an input table in use ("layout gives") pins what it gives: say so rather than a bare cut
        note = f"given by the {origin.removesuffix(' gives')}" if origin.endswith(" gives") else "definition cut"
        out.append({"quantity": name, "value": str(scenario.value(name)),
                    "display": quantity_text(library, name, scenario.value(name)),
                    "definition": definition.id if definition is not None else None, "note": note})
    return out


def scenario_notes(scenario, only=None) -> list[str]:
    """Defaults and approximations the scenario's layers applied (config reader, native precision, the
    deployment defaults, lecture values kept).  ``only``: the inputs the command used; a note about one
    input shows only when that input was used."""
    notes_for = getattr(scenario, "notes_for", None)
    if notes_for is not None:
        return notes_for(only)
    return list(getattr(scenario, "notes", ()) or ())


def emit_notes(scenario, only=None) -> None:
    """One ``note:`` line per default or approximation the command used, so that none is silent."""
    for note in scenario_notes(scenario, only):
        emit(f"note: {note}")


def explain_lines(rows: list[dict]) -> list[str]:
    """``--explain``: each input's value, unit and the layer that set it, as aligned columns."""
    if not rows:
        return []
    def shown(r: dict) -> str:  # "3.35 TB/s", "70.55G param", "8": with a prefix, no unit "1"
        return r.get("display") or (r["value"] if r["unit"] in ("1", "") else f"{r['value']} {r['unit']}")

    w_name = max(len(r["name"]) for r in rows)
    w_value = max(len(shown(r)) for r in rows)
    w_layer = max(len(r["layer"]) for r in rows)
    out = ["inputs:"]
    for r in rows:
        out.append(f"  {r['name']:<{w_name}}  {shown(r):<{w_value}}  {r['layer']:<{w_layer}}  ({r['origin']})")
    return out


def pinned_line(notes: list[dict]) -> str | None:
    """``pinned: hardware_ratio = 600 (definition cut)`` (``(given by the layout)`` for what a table in use
    gives), or None when nothing is pinned."""
    if not notes:
        return None
    return "pinned: " + ", ".join(
        f"{n['quantity']} = {n.get('display', n['value'])} ({n.get('note', 'definition cut')})" for n in notes)


def formula_text(library, formula) -> str:
    """A formula for people: a number compared with a quantity carries the quantity's unit and a prefix
    (``chips*hbm_capacity >= 20 TB``, not ``>= 20000000000000``).  The layout is ``str(formula)``'s."""
    import sympy as sp

    from derive.kernel.logic import And, Iff, Implies, Not, Or, Rel

    def side(e, other) -> str:
        if e.is_number and not other.is_number:
            try:
                from derive.model.dimensions import dimension_of
                from derive.model.display import shown
                from derive.model.units import format_dimension

                dim = dimension_of(other, library.dimension, where="formula")
                if all(p.denominator == 1 for _, p in dim.powers):
                    unit = format_dimension(dim)
                    s = shown(e, unit)
                    if s.exact:  # rounded text would misstate an exact relation: 5000/3 byte/token stays exact
                        return s.text.replace(",", "")
                    return sp.sstr(e) if unit == "1" else f"{sp.sstr(e)} {unit}"
            except Exception:  # noqa: BLE001 - a formula the dimension reader cannot place keeps its plain form
                pass
        return sp.sstr(e)

    def text(f) -> str:
        if isinstance(f, Rel):
            return f"{side(f.lhs, f.rhs)} {f.op} {side(f.rhs, f.lhs)}"
        if isinstance(f, And):
            return " and ".join(f"({text(a)})" for a in f.args)
        if isinstance(f, Or):
            return " or ".join(f"({text(a)})" for a in f.args)
        if isinstance(f, Not):
            return f"not ({text(f.arg)})"
        if isinstance(f, Implies):
            return f"({text(f.premise)}) implies ({text(f.conclusion)})"
        if isinstance(f, Iff):
            return f"({text(f.left)}) iff ({text(f.right)})"
        return str(f)

    return text(formula)


def claim_inputs(library, scenario, claim_ids) -> set[str]:
    """The scenario inputs the claims' goals and hypotheses read (the scenario's pins kept as they are), so
    that notes and pins unrelated to the claims checked stay unsaid."""
    from derive.kernel.logic import name_of  # a symbol's name without sympy's printer (thousands of them)

    pins = frozenset(scenario.pinned)
    names: set[str] = set()
    for cid in claim_ids:
        d = library.declarations.get(cid)
        for f in [getattr(d, "goal", None), *getattr(d, "hypotheses", ()), getattr(d, "relation", None)]:
            if f is not None:
                names |= {name_of(sym) for sym in library.formula_expand(f, pins).free_symbols()}
    return names
