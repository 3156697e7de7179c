"""A library under a scenario: the one place that substitutes values, names a missing one, and states a claim.

A ``Situation`` is built once per command from a ``Library`` and a ``Scenario`` (``situate`` hands back the
same one for the same pair).  Every tool asks it instead of joining the two again:

* ``substitution``: the scenario's values by symbol, computed once;
* ``expand``, ``missing``, ``require``, ``exact`` and ``value``: an expression expanded under the scenario's
  pins, the inputs it lacks, and its value; a missing value is always a ``MissingValueError`` with one
  wording (``cannot evaluate X: the scenario gives no value for a, b``);
* ``statement(claim)``: a claim at the scenario (goal, hypotheses, bounds, side conditions, the
  ``--assume`` relations it shares a quantity with, the values it is read at), assembled by one function.

A ``Statement`` has two readings, both of the same parts:

* ``Statement.problem``: what the kernel decides (``derive check``): the goal's declared side conditions
  are obligations (``Problem.conditions``), bounds of variables a box (``Problem.bounds``), the scenario's
  values substituted exactly (a part without a real value is an ``UndefinedValueError``);
* ``Statement.formula``: the claim as one formula in the quantities kept free (``derive margin``, ``sweep``,
  regions): every part a conjunct, so the claim *holds* where all are true (a failing hypothesis is
  where ``check`` says ``inconsistent``, never ``proved``).

Implementation notes: a general claim (``instance=False``) is about the definitions, so the scenario's pins
do not cut them and no value is substituted; an instance claim's derived ``forall`` quantities are cut
(they are variables), and the quantities its own hypotheses fix to a number (``acceptance == 4/5``) take that
number, not the scenario's (the kernel substitutes it, ``derive.kernel.trusted.substitute_values``).
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

import sympy as sp

from derive.errors import LibraryError, MissingValueError, UndefinedValueError
from derive.kernel.logic import And, Formula, Implies, Not, Or, Rel, name_of, replace
from derive.kernel.problem import DEFAULT_RLIMIT, Problem
from derive.kernel.trusted import lost_side_conditions, side_conditions
from derive.model.declarations import Assumption, Claim
from derive.model.library import Library
from derive.model.numbers import exactify
from derive.model.scenario import Scenario, linked


class Situation:
    """A library bound to a scenario (see the module docstring); build it with ``situate``."""

    def __init__(self, library: Library, scenario: Scenario) -> None:
        self.library = library
        self.scenario = scenario
        self._claims: dict[str, _ClaimParts] = {}

    @cached_property
    def substitution(self) -> dict[sp.Symbol, sp.Rational]:
        """Every scenario value of a quantity of the library, by symbol (SI base units)."""
        lib = self.library
        return {lib.quantities[n].sym: v.value for n, v in self.scenario.values.items() if n in lib.quantities}

    def values_except(self, names: Iterable[str]) -> dict[sp.Symbol, sp.Expr]:
        """``substitution`` without the quantities ``names`` (those a sweep or a margin varies).  A quantity an
        input table gives (``Scenario.links``: ``chips`` from the layout's ``stage_chips``) whose source rests on
        a varied name follows it: its value is the source's expression in the varied names, not a number."""
        out = set(names)
        subst: dict[sp.Symbol, sp.Expr] = {s: v for s, v in self.substitution.items() if name_of(s) not in out}
        subst.update(self.following(out, subst))
        return subst

    def following(self, varied: set[str], values: dict, skip: Iterable[str] = ()) -> dict[sp.Symbol, sp.Expr]:
        """The linked quantities (``Scenario.links``: what an input table gives, a value worked out ``from`` a
        derived quantity) whose source rests on a ``varied`` name, each as the source's expression in the varied
        names, the other ``values`` substituted: a sweep over the batch moves the deployment's share of experts
        read with it, a margin over tp the chips of the layout.  A linked quantity varied itself, or in ``skip``
        (a claim quantifies over it or its hypotheses fix it), keeps its own reading."""
        pins = frozenset(self.scenario.pinned) | {n for n in varied if self.library.is_derived(n)}
        skipped = set(skip)
        out: dict[sp.Symbol, sp.Expr] = {}
        for given, source in self.scenario.links:
            if given in varied or given in skipped or given not in self.library.quantities:
                continue
            expr = self.library.expand(self.library.quantities[source].sym, pins)
            if {name_of(s) for s in expr.free_symbols} & varied:
                out[self.library.quantities[given].sym] = expr.xreplace(
                    {s: v for s, v in values.items() if s in expr.free_symbols})
        return out

    def without_values(self) -> Situation:
        """The scenario's pins and assumptions with no values: formulas keep their symbols (a compiled sweep)."""
        return situate(self.library, dataclasses.replace(self.scenario, values={}))

    # values ------------------------------------------------------------------------------------------

    def expand(self, expr: sp.Expr, pinned: Iterable[str] = ()) -> sp.Expr:
        """``expr`` expanded through the definitions, the scenario's pins (and ``pinned``) kept as leaves."""
        return self.library.expand(expr, frozenset(self.scenario.pinned) | frozenset(pinned))

    def missing(self, expr: sp.Expr, keep: Iterable[str] = (), pinned: Iterable[str] = ()) -> list[str]:
        """The inputs of ``expr`` (expanded) that the scenario gives no value, ``keep`` aside, by name.

        A part the given values rule out needs no inputs: a branch whose condition they make false (a
        tensor-parallel all-reduce inside one scale-up domain needs no scale-out link; sympy drops the branch,
        or keeps only the one whose condition becomes true), a term they make exactly zero (a dense model's
        share of routed experts read: nothing is routed).  An input still asked for where, with the values
        put in, it reaches a side condition (a denominator, a root, a logarithm, a branch's condition): the
        value would not depend on it, but whether there is one would.  A part the values cannot be put into
        keeps every input."""
        kept = set(keep)
        expanded = self.expand(expr, pinned)
        absent = {name_of(s) for s in expanded.free_symbols} - set(self.scenario.values) - kept
        if not absent:
            return []
        values = self.values_except(kept)
        try:
            left = set(expanded.xreplace(values).free_symbols)
            for sc in side_conditions(expanded):
                if not holds_by_declared_signs(self.library, sc.condition):
                    left |= _open_symbols(sc.condition.subs(values))
        except (TypeError, ValueError, ZeroDivisionError, UndefinedValueError):
            return sorted(absent)
        return sorted(absent & {name_of(s) for s in left})

    def require(self, expr: sp.Expr, what: str, *, keep: Iterable[str] = (), pinned: Iterable[str] = (),
                where: str | None = None, hint: str | None = None, as_written: bool = False) -> sp.Expr:
        """``expr`` expanded with every value substituted except ``keep`` (whose symbols stay); a
        ``MissingValueError`` naming ``what`` when another input has no value.  ``as_written``: where the
        values fold a part away (y/x at y = 0 is 0), the result has no value where that part had none."""
        keep = tuple(keep)
        missing = self.missing(expr, keep, pinned)
        if missing:
            raise MissingValueError(what, missing, where=where, hint=hint)
        expanded, values = self.expand(expr, pinned), self.values_except(keep)
        out = expanded.xreplace(values)
        lost = _lost(Rel(expanded, "==", 0), Rel(out, "==", 0), values) if as_written else []
        return sp.Piecewise((out, sp.And(*(_relational(c) for c in lost)))) if lost else out

    def exact(self, expr: sp.Expr, what: str) -> sp.Expr:
        """The exact value of ``expr`` (floats by the one rule of ``derive.model.numbers``); a
        ``MissingValueError`` when an input has no value, an ``UndefinedValueError`` where a part has no
        real value (a zero denominator, a negative radicand)."""
        missing = self.missing(expr)
        if missing:
            raise MissingValueError(what, missing)
        return exactify(replace(self.expand(expr), self.substitution, strict=True))

    def value(self, expr: sp.Expr) -> sp.Expr | None:
        """The exact real value of ``expr``, or None when an input is missing or it has no real value."""
        if self.missing(expr):
            return None
        try:
            value = exactify(replace(self.expand(expr), self.substitution, strict=True))
        except UndefinedValueError:
            return None
        return value if value.is_number and value.is_extended_real else None

    # a claim at the scenario ---------------------------------------------------------------------------

    def pins_for(self, claim: Claim) -> frozenset[str]:
        """Pinned derived quantities cut their definitions only in instance claims (a general claim is
        about the definitions themselves); a derived quantity or constant named in ``forall`` is a
        variable of the instance claim, so its definition (or value) is cut too."""
        if not claim.instance:
            return frozenset()
        return frozenset(self.scenario.pinned) | forall_cut(self.library, claim)

    def hypotheses(self, claim: Claim, pinned: Iterable[str] = ()) -> list[Formula]:
        """The relations of the assumptions the claim rests on (transitively) and its own premises,
        expanded, then the side conditions their definitions declare (``Library.definition_conditions``: a
        hypothesis is read only where it is defined)."""
        return list(self._parts(claim, frozenset(pinned)).hypotheses)

    def fixed_by_hypotheses(self, claim: Claim) -> dict[sp.Symbol, sp.Rational]:
        """Quantities an instance claim's own hypotheses fix to a number (``acceptance == 4/5``), with that
        number: the claim supplies their values, so the scenario's are not used and none is needed."""
        out: dict[sp.Symbol, sp.Rational] = {}
        todo = list(claim.hypotheses)
        while todo:
            h = todo.pop()
            if isinstance(h, And):
                todo.extend(h.args)
            elif isinstance(h, Rel) and h.op == "==":
                for sym, value in ((h.lhs, h.rhs), (h.rhs, h.lhs)):
                    q = self.library.quantity_or_none(sym)
                    if q is not None and value.is_Rational and not self.library.is_derived(q.name) \
                            and q.value is None:
                        out.setdefault(sym, value)
        return out

    def missing_for(self, claim: Claim) -> list[str]:
        """The inputs of an instance claim the scenario gives no value (its ``forall`` quantities and
        those its hypotheses fix aside); empty for a general claim."""
        if not claim.instance:
            return []
        keep = {q.name for q in claim.forall} | {name_of(s) for s in self.fixed_by_hypotheses(claim)}
        pins = self.pins_for(claim)
        names: set[str] = set()
        for e in claim.exprs():  # an input none of them depends on at the values needs none (``missing``)
            names.update(self.missing(e, keep, pins))
        return sorted(names)

    def statement(self, claim: Claim, goal: Formula | None = None, *, keep: Iterable[str] = (),
                  pinned: Iterable[str] = ()) -> Statement:
        """The claim at the scenario: ``goal`` (the claim's own, or a derivation step's link) under the
        claim's hypotheses, bounds and side conditions.  ``keep``: quantities whose values are not
        substituted (those a margin or a sweep varies); ``pinned``: derived quantities whose definitions
        are cut besides the scenario's pins (a varied derived quantity)."""
        lib = self.library
        parts = self._parts(claim, frozenset(pinned))
        pins = parts.pins
        hyps = list(parts.hypotheses)
        goal = claim.goal if goal is None else goal
        # where the goal's definitions are defined is where it speaks (hypotheses); what they declare of their
        # values, and where their expressions have one, must hold there (``Problem.conditions``, never assumed)
        hyps += [c for _, c in lib.formula_conditions([goal], pins, kinds=("domain",)) if c not in hyps]
        declared = lib.formula_conditions([goal], pins, kinds=("defined", "declared"))
        goal = lib.formula_expand(goal, pins)
        symbols = goal.free_symbols()
        for h in hyps:
            symbols |= h.free_symbols()
        for _, c in declared:
            symbols |= c.free_symbols()
        written = [f for _, f in self.scenario.assumptions]
        extra = [lib.formula_expand(f, pins) for f in written]
        shared = linked([f.free_symbols() for f in extra], symbols)
        extra = [extra[i] for i in shared]
        extra += [c for _, c in lib.formula_conditions([written[i] for i in shared], pins)]
        kept = set(keep)
        values = {s: v for s, v in parts.values.items() if name_of(s) not in kept}
        boxed = list(parts.boxed)
        boxed += [c for _, c in lib.formula_conditions([Rel(q.sym, ">=", 0) for q, _, _ in claim.bounds], pins)]
        # a value outside its quantity's domain, or a non-integer for an integer quantity: a false hypothesis,
        # so the claim is inconsistent there and such a value is never a counterexample
        formulas = [goal, *hyps, *extra, *boxed, *(c for _, c in declared)]
        outside = lib.domain_violations(set().union(*(f.free_symbols() for f in formulas)), values)
        if kept:  # what is linked to a varied quantity follows it (chips a degree, the share of experts the batch)
            own = {q.name for q in claim.forall} | {name_of(s) for s in parts.fixed}
            values.update(self.following(kept, values, own))
        return Statement(lib, claim, pins, goal, hyps, declared, extra, dict(parts.bounds), boxed, outside,
                         values, dict(parts.fixed))

    def _parts(self, claim: Claim, pinned: frozenset[str]) -> _ClaimParts:
        key = (claim.id, pinned)
        if key not in self._claims or self._claims[key].claim is not claim:
            self._claims[key] = self._assemble(claim, pinned)
        return self._claims[key]

    def _assemble(self, claim: Claim, pinned: frozenset[str]) -> _ClaimParts:
        lib = self.library
        pins = self.pins_for(claim) | pinned
        written: list[Formula] = []
        for aid in lib.rests_on(claim):
            a = lib.declarations[aid]
            if isinstance(a, Assumption) and a.relation is not None:
                written.append(a.relation)
        written.extend(claim.hypotheses)
        hyps = [lib.formula_expand(h, pins) for h in written]
        hyps += [c for _, c in lib.formula_conditions(written, pins) if c not in hyps]
        forall = {q.sym for q in claim.forall}
        # every value but the ``forall`` quantities' (a general claim too is read at them by a margin)
        values = {s: v for s, v in self.substitution.items() if s not in forall}
        fixed = self.fixed_by_hypotheses(claim) if claim.instance else {}
        bounds, boxed = _bounds(lib, claim, pins, set(values) if claim.instance else set())
        return _ClaimParts(claim, pins, tuple(hyps), values, fixed, bounds, tuple(boxed))


@dataclass(frozen=True)
class _ClaimParts:
    """What a claim's statements share, whatever their goal: computed once per claim and pins."""

    claim: Claim
    pins: frozenset[str]
    hypotheses: tuple[Formula, ...]
    values: dict[sp.Symbol, sp.Rational]
    fixed: dict[sp.Symbol, sp.Rational]
    bounds: dict
    boxed: tuple[Formula, ...]


@dataclass
class Statement:
    """A claim at a scenario (``Situation.statement``), not yet substituted: every part expanded through the
    definitions under ``pins``.  ``values``: the scenario's values but the ``forall`` quantities' and those
    kept free; an instance claim is read at them, except where its own hypotheses fix a number (``fixed``)."""

    library: Library
    claim: Claim
    pins: frozenset[str]
    goal: Formula
    hypotheses: list[Formula]  # cited assumptions, own premises, the side conditions they and the goal need
    declared: list[tuple[str, Formula]]  # what the goal's definitions declare of their values: to be shown
    assumptions: list[Formula]  # the scenario's ``--assume`` relations that share a quantity, their conditions
    bounds: dict  # a box on quantities that stay variables: quantity symbol -> (low, high), as written
    boxed: list[Formula]  # the other bounds as relations, with the side conditions of bounded quantities
    outside: list[Formula]  # the relations a value breaks (outside its quantity's domain): false hypotheses
    values: dict[sp.Symbol, sp.Rational]
    fixed: dict[sp.Symbol, sp.Rational] = field(default_factory=dict)

    @property
    def substituted(self) -> dict[sp.Symbol, sp.Rational]:
        """The values the kernel's reading substitutes: none for a general claim (it is about every value);
        an instance claim's values but those its hypotheses fix (the kernel takes theirs)."""
        if not self.claim.instance:
            return {}
        return {s: v for s, v in self.values.items() if s not in self.fixed}

    def shown_values(self, formulas: Iterable[Formula] | None = None) -> dict[str, str]:
        """The scenario values the claim is read at, by quantity name: those its goal and hypotheses use."""
        parts = [self.goal, *self.hypotheses] if formulas is None else list(formulas)
        values = self.substituted
        used = set().union(*(f.free_symbols() for f in parts)) if parts else set()
        return {name_of(s): str(values[s]) for s in sorted(used, key=name_of) if s in values}

    def problem(self, rlimit: int = DEFAULT_RLIMIT) -> Problem:
        """The kernel's reading: hypotheses (each quantity's domain first), the goal, the declared side
        conditions as obligations, a box on the variables, integrality, a seed from the claim's id.  A part
        the values leave without a real value is an ``UndefinedValueError`` (never sympy's ``zoo``)."""
        declared = [c for _, c in self.declared]
        outside = self.outside if self.claim.instance else []
        formulas = [self.goal, *self.hypotheses, *self.assumptions, *self.boxed, *outside, *declared]
        values = self.substituted
        if values:
            substituted = [f.subs(values, strict=True) for f in formulas]
            if _folds_a_condition(formulas, substituted, values):
                # sympy's folding would drop a side condition (y/x at y = 0 is 0, x**y at y = 3 is x**3): the
                # values go in as hypotheses, which the kernel substitutes one by one where definedness is kept
                # (meaning.substitute_values)
                used = set().union(*(f.free_symbols() for f in formulas))
                formulas.insert(1, And(tuple(Rel(v, "==", values[v]) for v in sorted(used & set(values),
                                                                                    key=name_of))))
            else:
                formulas = substituted
        goal, hyps = formulas[0], formulas[1:len(formulas) - len(declared)]
        conditions = [(label, c) for (label, _), c in zip(self.declared, formulas[len(formulas) - len(declared):],
                                                          strict=True)]
        symbols = set(goal.free_symbols())
        for h in hyps:
            symbols |= h.free_symbols()
        for _, c in conditions:
            symbols |= c.free_symbols()
        domain: list[Formula] = []
        integer: set[sp.Symbol] = set()
        for s in sorted(symbols, key=name_of):
            q = self.library.quantity_of(s)
            d = q.domain_formula()
            if d is not None:
                domain.append(d)
            if q.integer:
                integer.add(s)
        seed = zlib.crc32(self.claim.id.encode())
        return Problem(domain + hyps, goal, integer, self.bounds, rlimit, seed, conditions)

    def formula(self) -> tuple[Formula, list[Formula]]:
        """The one-formula reading (margins, sweeps, regions), read at the values as the module docstring
        says: the goal and, beside it, every hypothesis, side condition, bound and shared ``--assume``
        relation (a general claim too is read at the scenario's values).  Returns (goal, hypotheses)."""
        _check_bounds(self.claim)
        box = [r for s, (lo, hi) in self.bounds.items() for r in (Rel(s, ">=", lo), Rel(s, "<=", hi))]
        hyps = [*self.hypotheses, *(c for _, c in self.declared if c not in self.hypotheses), *box, *self.boxed,
                *self.assumptions, *self.outside]
        values = {**self.values, **self.fixed} if self.claim.instance else self.values
        if not values:
            return self.goal, hyps
        return substituted_as_written(self.goal, hyps, values)


def substituted_as_written(goal: Formula, hyps: list[Formula], values: Mapping) -> tuple[Formula, list[Formula]]:
    """``goal`` and ``hyps`` with ``values`` substituted, keeping what sympy's folding drops (y/x at y = 0 is 0):
    a hypothesis' side conditions as hypotheses, the goal's as a guard that leaves it undefined where they fail,
    as the goal is as written (0 where they hold, no value where they fail: a Piecewise without otherwise)."""
    new_goal, read = goal.subs(values), [h.subs(values) for h in hyps]
    lost = _lost(goal, new_goal, values)
    if lost:
        new_goal = And((Rel(sp.Piecewise((sp.Integer(0), sp.And(*(_relational(c) for c in lost)))), "==", 0),
                        new_goal))
    return new_goal, [*read, *(c for h, r in zip(hyps, read, strict=True) for c in _lost(h, r, values))]


def _lost(old: Formula, new: Formula, values: dict) -> list[Formula]:
    """The side conditions of ``old`` that substituting ``values`` folded away (the kernel's reading), each
    at the values; one with no value there is false (the formula is undefined at the values)."""
    try:
        return lost_side_conditions(old, new, values)
    except UndefinedValueError:
        return [Rel(sp.Integer(0), "!=", 0)]


def _folds_a_condition(olds: list[Formula], news: list[Formula], values: Mapping) -> bool:
    return any(_lost(o, n, values) for o, n in zip(olds, news, strict=True))


_RELATIONAL = {"==": sp.Eq, "!=": sp.Ne, "<": sp.Lt, "<=": sp.Le, ">": sp.Gt, ">=": sp.Ge}


def _relational(f: Formula) -> sp.Basic:
    """A side condition as sympy's relational (a Piecewise condition): a relation, or an Or of them."""
    if isinstance(f, Rel):
        return _RELATIONAL[f.op](f.lhs, f.rhs)
    if isinstance(f, Or):
        return sp.Or(*(_relational(a) for a in f.args))
    if isinstance(f, And):
        return sp.And(*(_relational(a) for a in f.args))
    if isinstance(f, Not):
        return sp.Not(_relational(f.arg))
    if isinstance(f, Implies):  # a Piecewise branch's condition, under its guard
        return sp.Or(sp.Not(_relational(f.premise)), _relational(f.conclusion))
    raise TypeError(f"no relational form for {f}")


def _bounds(library: Library, claim: Claim, pins: frozenset[str], fixed: set) -> tuple[dict, list[Formula]]:
    """A claim's ``bounds`` (hypotheses, see derive.kernel.trusted): those of quantities that stay variables
    of the problem, and relations for the others (a derived quantity's bounds on its definition, a
    constant's or an instance value's on that value: a value outside its bounds makes the assumptions
    contradict each other, it is never a counterexample)."""
    bounds: dict = {}
    boxed: list[Formula] = []
    for q, lo, hi in claim.bounds:
        lo, hi = exact_bound(lo), exact_bound(hi)
        value = library.expand(q.sym, pins) if library.quantities.get(q.name) is q else q.sym
        numbers = all(isinstance(v, sp.Number) for v in (lo, hi))
        if q.sym in bounds and all(isinstance(v, sp.Rational) for v in (lo, hi, *bounds[q.sym])) and lo <= hi:
            # a second box for it: both hold (their intersection, or contradictory hypotheses)
            low, high = max(lo, bounds[q.sym][0]), min(hi, bounds[q.sym][1])
            if low <= high:
                bounds[q.sym] = (low, high)
            else:
                boxed += [Rel(q.sym, ">=", lo), Rel(q.sym, "<=", hi)]
        elif (value == q.sym and q.sym not in fixed) or not numbers:
            bounds[q.sym] = (lo, hi)  # a malformed bound stays here, for the kernel to refuse
        else:
            boxed += [Rel(value, ">=", lo), Rel(value, "<=", hi)]
    return bounds, boxed


def _check_bounds(claim: Claim) -> None:
    """A bound that is no finite number, or bounds written high-to-low, are an error of the one-formula
    reading (the kernel's verdict on them is ``unknown``: it refuses them)."""
    for q, lo, hi in claim.bounds:
        ends = []
        for end in (lo, hi):
            try:
                if isinstance(end, bool) or not isinstance(end, (int, float, sp.Number)) or not sp.Float(end).is_finite:
                    raise TypeError
                ends.append(sp.Float(end) if isinstance(end, (float, sp.Float)) else sp.Rational(end))
            except (TypeError, ValueError, ArithmeticError):
                raise LibraryError(f"'{claim.id}': bound {end!r} of {q.name} is not a finite number") from None
        if ends[0] > ends[1]:
            raise LibraryError(f"'{claim.id}': bounds of {q.name} are written high-to-low ({lo} > {hi})")


def bound_relations(library: Library, claim: Claim, pins: frozenset[str]) -> list[Formula]:
    """A claim's ``bounds`` as the relations they are, ``low <= q <= high`` (a derived quantity's through
    its definition under ``pins``), for a reader that evaluates them one by one (the live page); a bound
    that is no finite number, or bounds written high-to-low, are a ``LibraryError``."""
    _check_bounds(claim)
    out: list[Formula] = []
    for q, lo, hi in claim.bounds:
        value = library.expand(q.sym, pins) if library.quantities.get(q.name) is q else q.sym
        out += [Rel(value, ">=", exact_bound(lo)), Rel(value, "<=", exact_bound(hi))]
    return out


def exact_bound(value: object) -> object:
    """A bound as written: exact numbers become Rationals; a float stays a Float and anything else (a
    bool, infinity, an expression) stays as it is, for the kernel to refuse (see derive.kernel.trusted)."""
    if isinstance(value, (float, sp.Float)):
        return sp.Float(value)
    if isinstance(value, bool):
        return value
    try:
        return sp.Rational(value)
    except (TypeError, ValueError, ArithmeticError, sp.SympifyError):
        return value


def forall_cut(library: Library, claim: Claim) -> frozenset[str]:
    """Derived quantities and constants a claim quantifies over (``forall``): their definitions (or
    values) are cut, so that they stay variables."""
    return frozenset(q.name for q in claim.forall if library.is_derived(q.name) or q.value is not None)


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
                goal, hyps = substituted_as_written(goal, [g for g in hyps if g is not h], {y: sols[0]})
                remaining.discard(y)
                done.append(str(y))
                progress = True
                break
            if progress:
                break
    return goal, hyps, done


_SITUATIONS: list[Situation] = []  # the last few built, newest last: one per library and scenario in a command
_KEPT = 8


def input_notes(library: Library, scenario: Scenario, targets: Iterable[Claim | sp.Expr],
                varied: Iterable[str] = ()) -> list[str]:
    """The scenario's notes on the inputs the ``targets`` read (a claim: its goal, hypotheses and cited
    assumptions; an expression), the ``varied`` ones aside: a sweep or a margin that reads the lecture's chip
    price at a user's chip says so, as ``derive eval`` does."""
    exprs: list[sp.Expr] = []
    for t in targets:
        if isinstance(t, Claim):
            cited = [a.relation for a in t.uses if isinstance(a, Assumption) and a.relation is not None]
            exprs += [e for f in (t.goal, *t.hypotheses, *cited) for e in f.exprs()]
        else:
            exprs.append(t)
    names: set[str] = set()
    for e in exprs:
        names.update(library.base_inputs(e, scenario.pinned))
    return scenario.notes_for(names - set(varied))


def situate(library: Library, scenario: Scenario) -> Situation:
    """The ``Situation`` of this library under this scenario: the same object for the same pair (by
    identity), so that a command computes the substitution and each claim's statement once."""
    for s in _SITUATIONS:
        if s.library is library and s.scenario is scenario:
            return s
    s = Situation(library, scenario)
    _SITUATIONS.append(s)
    del _SITUATIONS[:-_KEPT]
    return s


def _open_symbols(condition: Formula) -> set[sp.Symbol]:
    """The symbols a side condition, values put in, still depends on: none where it guards a branch the values
    rule out (its premise, now a closed statement, is false: a scale-out link's bandwidth inside one domain)."""
    if isinstance(condition, Implies) and not condition.premise.free_symbols():
        try:
            if not condition.premise.evaluate({}):
                return set()
        except (TypeError, ValueError, ArithmeticError):
            pass  # a premise without a value keeps every symbol: the caller asks for them all
    return condition.free_symbols()


def holds_by_declared_signs(library: Library, condition: Formula) -> bool:
    """Whether a side condition (or the conclusion of a guarded one) holds for every value the declared domains of
    its quantities allow, whatever the scenario: a link's bandwidth, positive, is never a zero denominator.  Decided
    by sympy's sign rules on sums, products, powers, Min and Max of symbols carrying their declared sign; False
    where they do not tell.  Such a condition reads no input: ``Situation.missing`` asks for none of its
    quantities, and the live page leaves it out alike (``derive.documents.live``)."""
    relation = condition.conclusion if isinstance(condition, Implies) else condition
    symbols = relation.free_symbols()
    signed = {s: _declared_sign(library, s) for s in symbols}
    return _holds_by_sign(relation, signed)


def _declared_sign(library: Library, s: sp.Symbol) -> sp.Symbol:
    """``s`` as a sympy symbol of its quantity's declared sign (positive; non-negative, a share in [0, 1]:
    non-negative), real in any case; for the sign rules only, never in a statement."""
    q = library.quantity_or_none(s)
    domain = q.domain if q is not None else "real"
    return sp.Dummy(s.name, real=True, positive=True if domain == "positive" else None,
                    nonnegative=True if domain in ("nonnegative", "fraction") else None)


_SIGN_TESTS = {"!=": "is_nonzero", ">": "is_positive", ">=": "is_nonnegative", "<": "is_negative",
               "<=": "is_nonpositive", "==": "is_zero"}


def _holds_by_sign(condition: Formula, signed: Mapping[sp.Symbol, sp.Symbol]) -> bool:
    """Whether a relation (or a conjunction of them) holds with its symbols replaced by ``signed``'s."""
    if isinstance(condition, And):
        return all(_holds_by_sign(c, signed) for c in condition.args)
    if not isinstance(condition, Rel) or condition.op not in _SIGN_TESTS:
        return False
    difference = (condition.lhs - condition.rhs).xreplace(signed)
    return getattr(difference, _SIGN_TESTS[condition.op]) is True
