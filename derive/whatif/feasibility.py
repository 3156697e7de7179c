"""Feasibility: whether a scenario can exist at all, from the bounds the library declares.

A library names the claims that state its feasibility constraints (a root's ``FEASIBILITY``: ids of
claims such as "the weights and the KV caches fit in HBM").  Each constraint's relations are evaluated at
the scenario's values, exactly (rationals, no solver): a relation that is false is a ``Violation``, with
both sides' numbers, and every value computed at that scenario carries it as an ``infeasible`` note.  A
constraint whose inputs the scenario does not give is not evaluated (it cannot be decided, and says so
in ``undecided``).  The engine knows nothing of what the constraints mean.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from derive.errors import LibraryError
from derive.kernel.logic import And, Formula, Rel, replace
from derive.model.declarations import Assumption, Claim
from derive.model.library import Library
from derive.model.scenario import Scenario
from derive.model.situation import relations, situate

NEGATED = {"<=": ">", "<": ">=", ">=": "<", ">": "<=", "==": "!=", "!=": "=="}


@dataclass(frozen=True)
class Violation:
    """One violated feasibility bound: the claim that states it, the relation, and both sides' values."""

    claim: str
    relation: str  # as written: "memory_per_chip <= hbm_capacity"
    lhs: str  # "361.2 GB"
    rhs: str  # "80 GB"
    title: str = ""
    op: str = ""  # the relation's operator, "<=": the note shows its negation

    @property
    def note(self) -> str:
        """``infeasible: memory_per_chip = 361.2 GB > hbm_capacity = 80 GB (capacity.memory_fits_in_hbm)``."""
        return f"infeasible: {self.lhs} {NEGATED.get(self.op, '?')} {self.rhs}, so {self.relation} fails ({self.claim})"

    def to_json(self) -> dict[str, str]:
        return {"claim": self.claim, "relation": self.relation, "lhs": self.lhs, "rhs": self.rhs,
                "note": self.note}


@dataclass(frozen=True)
class Feasibility:
    violations: tuple[Violation, ...] = ()
    undecided: tuple[str, ...] = ()  # constraint ids whose inputs the scenario lacks

    @property
    def feasible(self) -> bool:
        return not self.violations

    @property
    def notes(self) -> list[str]:
        return [v.note for v in self.violations]

    def to_json(self) -> dict[str, object]:
        return {"feasible": self.feasible, "violations": [v.to_json() for v in self.violations],
                "undecided": list(self.undecided)}


def constraints(library: Library) -> list[Claim | Assumption]:
    """The library's feasibility constraints, in its order: instance claims (their goal) and assumptions
    with a relation (a bound no deployment may break, such as a context within the model's maximum); an id
    it does not declare, or an assumption with no relation, is an error."""
    out: list[Claim | Assumption] = []
    for cid in getattr(library, "feasibility", ()) or ():
        decl = library.declarations.get(cid)
        if not (isinstance(decl, Claim) or (isinstance(decl, Assumption) and decl.relation is not None)):
            raise LibraryError(f"feasibility constraint '{cid}' is neither a claim nor an assumption with a relation "
                              "of the library", where="FEASIBILITY")
        out.append(decl)
    return out


def constraint_statement(decl: Claim | Assumption) -> Formula | None:
    """What a feasibility constraint requires: a claim's goal, an assumption's relation."""
    return decl.relation if isinstance(decl, Assumption) else decl.goal


def _shown(library: Library, expr: sp.Expr, value: sp.Expr, sig: int = 4) -> str:
    from derive.model.dimensions import dimension_of
    from derive.model.display import format_quantity

    name = str(expr) if isinstance(expr, sp.Symbol) else ""
    q = library.quantities.get(name)
    try:
        dim = q.dimension if q is not None else dimension_of(expr, library.dimension, where="feasibility")
        text = format_quantity(value, dim, q.display_unit if q is not None else None, sig=sig)
    except Exception:  # noqa: BLE001 - a side no unit reader places is shown as a plain number
        text = f"{float(value):.{sig}g}"
    return f"{name} = {text}" if name else text


def _both_shown(library: Library, rel: object, sides: list[sp.Expr]) -> tuple[str, str]:
    """Both sides of a failed bound, with as many figures as it takes for them to read apart (``80 GB > 80 GB``
    said nothing: 80.000000001 GB against 80 GB), up to 16."""
    for sig in (4, 8, 12, 16):
        shown = tuple(_shown(library, side, value, sig) for side, value in zip((rel.lhs, rel.rhs), sides, strict=True))
        if shown[0].rpartition("= ")[2] != shown[1].rpartition("= ")[2]:
            break
    return shown


def feasibility(library: Library, scenario: Scenario) -> Feasibility:
    """The scenario's violated feasibility bounds (see module docstring)."""
    situation = situate(library, scenario)
    found: list[Violation] = []
    undecided: list[str] = []
    for claim in constraints(library):
        statement = constraint_statement(claim)
        rels: list[Rel] = relations(statement) if isinstance(statement, Formula) else []
        for rel in rels:
            # the values put in at once (``replace``), not one by one as sympy's ``subs`` does: the same numbers
            # (the scenario gives numbers only), in a hundredth of the time, which a check spent on every run
            sides = [replace(situation.expand(side), situation.substitution) for side in (rel.lhs, rel.rhs)]
            if any(not s.is_number for s in sides):
                undecided.append(claim.id)
                break
            if _holds(sides[0], rel.op, sides[1]) is False:
                found.append(Violation(claim.id, f"{rel.lhs} {rel.op} {rel.rhs}", *_both_shown(library, rel, sides),
                                       claim.title, rel.op))
    return Feasibility(tuple(found), tuple(dict.fromkeys(undecided)))


@dataclass(frozen=True)
class Limit:
    """An upper bound one feasibility constraint puts on a quantity by itself (``context <= max_context``), its
    other side a number at the scenario's values."""

    claim: str
    relation: str  # as written: "context <= max_context"
    value: sp.Expr  # the bound, SI
    shown: str  # "max_context = 131.1k token/seq"
    strict: bool  # "<": the bound itself is outside


def upper_limits(library: Library, scenario: Scenario, name: str) -> list[Limit]:
    """The upper bounds the library's feasibility constraints put on ``name`` directly, tightest first: each
    relation a constraint asserts (alone or in a conjunction) of the form ``name <= X`` or ``name < X`` (or
    ``X >= name``, ``X > name``) whose X, once expanded, has a value at the scenario and does not rest on
    ``name``.  A bound of any other shape is not solved for: ``feasibility`` still reports it."""
    situation = situate(library, scenario)
    sym = library.quantities[name].sym
    found: list[Limit] = []
    for decl in constraints(library):
        statement = constraint_statement(decl)
        for rel in _conjuncts(statement) if isinstance(statement, Formula) else []:
            if rel.op in ("<=", "<") and rel.lhs == sym:
                bound = rel.rhs
            elif rel.op in (">=", ">") and rel.rhs == sym:
                bound = rel.lhs
            else:
                continue
            expanded = situation.expand(bound)
            if sym in expanded.free_symbols:
                continue
            value = replace(expanded, situation.substitution)
            if value.is_number and value.is_real:
                found.append(Limit(decl.id, f"{rel.lhs} {rel.op} {rel.rhs}", sp.nsimplify(value),
                                   _shown(library, bound, value), rel.op in ("<", ">")))
    return sorted(found, key=lambda lim: (lim.value, not lim.strict))


def _conjuncts(f: Formula) -> list[Rel]:
    """The relations a formula asserts together (a relation, or a conjunction of them); [] for anything else,
    whose truth one failing relation does not settle."""
    if isinstance(f, Rel):
        return [f]
    if type(f) is And:
        parts = [_conjuncts(a) for a in f.args]
        return [r for p in parts for r in p] if all(parts) else []
    return []


def failing_hypotheses(library: Library, scenario: Scenario, claim: Claim) -> list[Violation]:
    """The claim's own hypotheses that fail, exactly, at the scenario's values (each a relation, or a conjunction
    of them; one whose sides lack a value is skipped).  Where one does, a general claim says nothing at this
    scenario: its verdict is about the values its hypotheses allow."""
    situation = situate(library, scenario)
    found: list[Violation] = []
    for hypothesis in claim.hypotheses:
        for rel in _conjuncts(hypothesis):
            sides = [replace(situation.expand(side), situation.substitution) for side in (rel.lhs, rel.rhs)]
            if all(s.is_number for s in sides) and _holds(sides[0], rel.op, sides[1]) is False:
                found.append(Violation(claim.id, f"{rel.lhs} {rel.op} {rel.rhs}", *_both_shown(library, rel, sides),
                                       claim.title, rel.op))
    return found


def _holds(lhs: sp.Expr, op: str, rhs: sp.Expr) -> bool | None:
    """An exact comparison of two numbers (rationals compare exactly; anything else is undecided)."""
    a, b = sp.nsimplify(lhs), sp.nsimplify(rhs)
    if not (a.is_real and b.is_real):
        return None
    result = {"<=": a <= b, "<": a < b, ">=": a >= b, ">": a > b, "==": sp.Eq(a, b), "!=": sp.Ne(a, b)}.get(op)
    if result is None:
        return None
    return bool(result) if result in (sp.true, sp.false) else None
