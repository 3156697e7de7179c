"""One name index for every front end: what a name given to ``eval`` is, and what to say when it is no value.

The command line (``derive eval``) and the Python API (``derive.evaluate``) ask the same question of a
name: a quantity, a definition, or something else.  A claim or an assumption has no value; the answer names
the quantities it is about, so that the next try is one step away.
"""

from __future__ import annotations

import dataclasses
import re

import sympy as sp

from derive.errors import UnknownNameError, WrongKindError
from derive.kernel.logic import Formula, Rel
from derive.model.declarations import Claim, Definition
from derive.model.library import Library

_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+")


def about(library: Library, declaration: object) -> list[str]:
    """The quantities a claim's goal (or an assumption's relation) is about, by name, in the library's order:
    the derived ones first (the values people ask for), then the inputs."""
    formula = getattr(declaration, "goal", None) or getattr(declaration, "relation", None)
    if formula is None:
        return []
    names = {str(s) for s in formula.free_symbols()} & set(library.quantities)
    # a side written out in full (``N q / (n W)``) is a defined quantity's expression: name that quantity
    sides = [side for rel in _relations(formula) for side in (rel.lhs, rel.rhs) if not side.is_number]
    named = [d.defines.name for d in library.definition_of.values()
             if any(side is not d.expr and side == d.expr for side in sides) or any(
                 not side.is_Symbol and sp.expand(side - d.expr) == 0 for side in sides)]
    ordered = sorted(names, key=lambda n: (not library.is_derived(n), n))
    return list(dict.fromkeys([*sorted(named), *ordered]))


def _relations(f: object) -> list[Rel]:
    if isinstance(f, Rel):
        return [f]
    out: list[Rel] = []
    for fl in dataclasses.fields(f):  # type: ignore[arg-type]
        v = getattr(f, fl.name)
        for item in v if isinstance(v, tuple) else (v,):
            if isinstance(item, Formula):
                out.extend(_relations(item))
    return out


def check_value_name(library: Library, text: str, *, where: str = "eval") -> None:
    """Raise the one clear error for a name that is no value: a claim or assumption id (naming the
    quantities it is about), or a dotted id the library does not declare.  Quantities, definitions and
    expressions pass."""
    name = text.strip()
    if name in library.quantities:
        return
    found = library.declarations.get(name)
    if found is None and "." not in name:
        matches = [d for d in library.declarations.values() if d.short == name]
        found = matches[0] if len(matches) == 1 else None
    if found is not None and not isinstance(found, Definition):
        quantities = about(library, found)
        article = "an" if found.kind[0] in "aeiou" else "a"
        hint = ""
        if quantities:
            hint = f"it is about {', '.join(quantities[:6])}: derive eval {quantities[0]}; "
        hint += f"derive show {found.id} shows it" + (f", derive check {found.id} checks it"
                                                       if isinstance(found, Claim) else "")
        raise WrongKindError(f"'{name}' is {article} {found.kind} ({found.id}), not a value", where=where, hint=hint)
    if found is None and _ID.fullmatch(name):
        raise UnknownNameError("id", name, list(library.declarations), where=where)
