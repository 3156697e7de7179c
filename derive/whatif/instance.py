"""A claim as one formula at a scenario's values: the shared step of margins, regions and sweeps.

``instance_formula`` expands a claim's goal and hypotheses through the library's definitions and
substitutes the scenario's values, keeping the quantities being varied; ``eliminate_forall`` removes
``forall`` quantities that an equation among the hypotheses determines.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import sympy as sp

from derive.errors import DeriveError
from derive.kernel.logic import Formula, Rel
from derive.model.declarations import Assumption, Claim
from derive.model.library import Library
from derive.model.scenario import Scenario, linked


def relations(f: Formula) -> list[Rel]:
    """Every relation in a formula tree (generic over the tree's dataclass fields)."""
    if isinstance(f, Rel):
        return [f]
    out: list[Rel] = []
    for fl in dataclasses.fields(f):
        v = getattr(f, fl.name)
        items = v if isinstance(v, tuple) else (v,)
        for item in items:
            if isinstance(item, Formula):
                out.extend(relations(item))
    return out


def instance_formula(library: Library, scenario: Scenario, claim: Claim, keep: Iterable[str] = (),
                     pinned: Iterable[str] = ()) -> tuple[Formula, list[Formula]]:
    """Goal and hypotheses (rests-on relations, the claim's own, its ``bounds``, sharing ``--assume``
    relations) expanded with the scenario's pins (for an instance claim, as the checker does; a general
    claim is about the definitions) plus ``pinned``, scenario values substituted except for ``keep`` and
    the claim's ``forall`` quantities.  Returns (goal, hypotheses)."""
    lib = library
    # an instance claim's derived ``forall`` quantities are variables: their definitions are cut (as the checker does)
    derived_forall = frozenset(q.name for q in claim.forall if lib.is_derived(q.name))
    pins = (frozenset(scenario.pinned) | derived_forall if claim.instance else frozenset()) | frozenset(pinned)
    keep = set(keep)
    hyps: list[Formula] = []
    written: list[Formula] = []
    for aid in lib.rests_on(claim):
        a = lib.declarations[aid]
        if isinstance(a, Assumption) and a.relation is not None:
            written.append(a.relation)
    written.extend(claim.hypotheses)
    hyps.extend(lib.formula_expand(h, pins) for h in written)
    hyps.extend(bound_relations(library, claim, pins))
    # what the definitions declare (``Library.definition_conditions``): the claim is read only where it holds,
    # so outside it the claim neither holds nor fails, as the checker has it (``unknown`` there)
    hyps.extend(c for _, c in lib.formula_conditions([*written, claim.goal], pins) if c not in hyps)
    goal = lib.formula_expand(claim.goal, pins)
    symbols = set(goal.free_symbols())
    for h in hyps:
        symbols |= h.free_symbols()
    extra = [lib.formula_expand(f, pins) for _, f in scenario.assumptions]
    hyps += [extra[i] for i in linked([f.free_symbols() for f in extra], symbols)]
    forall = {q.name for q in claim.forall}
    subst = {lib.quantities[n].sym: v.value for n, v in scenario.values.items()
             if n in lib.quantities and n not in keep and n not in forall}
    # a value outside its quantity's domain, or a non-integer for an integer quantity: a false hypothesis, as
    # the checker has it (the claim is inconsistent there, never holding)
    hyps += lib.domain_violations(set(goal.free_symbols()).union(*(h.free_symbols() for h in hyps)), subst)
    return goal.subs(subst), [h.subs(subst) for h in hyps]


def bound_relations(library: Library, claim: Claim, pins: frozenset[str]) -> list[Formula]:
    """A claim's ``bounds`` as the hypotheses they are (one meaning for every engine, see
    ``derive.kernel.trusted``): ``low <= q <= high``, a derived quantity's through its definition.  A
    float stays a ``Float`` (the kernel refuses it where exactness matters); a bound that is no number, or
    bounds written high-to-low, are an error (the checker's verdict on them is ``unknown``)."""
    out: list[Formula] = []
    for q, lo, hi in claim.bounds:
        ends = []
        for end in (lo, hi):
            try:
                if isinstance(end, bool) or not isinstance(end, (int, float, sp.Number)) or not sp.Float(end).is_finite:
                    raise TypeError
                ends.append(sp.Float(end) if isinstance(end, (float, sp.Float)) else sp.Rational(end))
            except (TypeError, ValueError, ArithmeticError):
                raise DeriveError(f"'{claim.id}': bound {end!r} of {q.name} is not a finite number") from None
        if ends[0] > ends[1]:
            raise DeriveError(f"'{claim.id}': bounds of {q.name} are written high-to-low ({lo} > {hi})")
        value = library.expand(q.sym, pins) if library.quantities.get(q.name) is q else q.sym
        out += [Rel(value, ">=", ends[0]), Rel(value, "<=", ends[1])]
    return out


def eliminate_forall(library: Library, claim: Claim, goal: Formula, hyps: list[Formula],
                     x: sp.Symbol) -> tuple[Formula, list[Formula], list[str]]:
    """Remove ``forall`` quantities (not integer ones) that an equation among the hypotheses determines.

    ``forall y: (y = e and H) => G`` is ``(H => G)[y := e]`` when ``e`` does not contain ``y``; the
    domain of ``y`` (``y > 0``) becomes the hypothesis ``e > 0``.  Quantities no equation determines
    are left (the caller reports them).
    """
    # an integer quantity is never eliminated: y = x/2 holds for no integer y at odd x, where the
    # hypotheses fail (check: inconsistent), while G(x/2) may well hold there
    remaining = {q.sym for q in claim.forall if q.sym != x and not q.integer}
    present = goal.free_symbols().union(*(h.free_symbols() for h in hyps)) if hyps else goal.free_symbols()
    remaining &= present
    if not remaining:
        return goal, hyps, []
    hyps = list(hyps)
    for y in sorted(remaining, key=str):
        d = library.quantity_of(y).domain_formula()
        if d is not None:
            hyps.append(d)
    done: list[str] = []
    progress = True
    while remaining and progress:
        progress = False
        for h in hyps:
            if not (isinstance(h, Rel) and h.op == "=="):
                continue
            diff = h.lhs - h.rhs
            for y in sorted(remaining & diff.free_symbols, key=str):
                try:
                    sols = [e for e in sp.solve(diff, y) if not e.has(sp.I) and y not in e.free_symbols]
                except (NotImplementedError, ValueError, TypeError):
                    continue
                if len(sols) != 1:
                    continue
                sub = {y: sols[0]}
                hyps = [g.subs(sub) for g in hyps if g is not h]
                goal = goal.subs(sub)
                remaining.discard(y)
                done.append(str(y))
                progress = True
                break
            if progress:
                break
    return goal, hyps, done
