"""The gate: the only way a proposal becomes ``proved``, ``refuted`` or ``inconsistent``.  Trusted.

``Kernel(problem)`` reads one statement (``derive.kernel.trusted.meaning``); a proposer (``prover``,
``interval``, any search) then asks it to admit a verdict through ``Kernel.proved``, ``Kernel.refuted``
or ``Kernel.inconsistent``.  What the kernel cannot confirm is ``unknown`` with the reason.

Verdicts
--------
``inconsistent``
    z3 shows the region (hypotheses, bounds, integrality) unsatisfiable; or an interval certificate of
    the bounded box in which the kernel finds, on every leaf, an assumption defined and false or no
    integer point for an integer quantity.
``proved``
    (a) the region is non-empty: an exact witness point the kernel checks, or z3 ``sat`` when no
    hypothesis has a side condition; (b) the side conditions of the goal hold on the region, each shown
    syntactically (a positive symbol, ``exp``, sums/products/powers of positives) or by z3 ``unsat``
    (listed in ``Outcome.side_conditions``); (c) the goal by one sound route: z3 ``unsat`` of region and
    negated goal; an equation whose ``lhs - rhs`` sympy's expand/together/cancel reduce to 0 (identities
    valid for all complex values); or an interval certificate, a bisection tree of the bounded box in
    which the kernel re-evaluates every leaf with outward-rounded intervals and finds the goal defined
    and true on all of it, a hypothesis defined and false on all of it, or no integer point for an
    integer quantity, or (a *Taylor leaf*, for a goal that touches its bound) the goal shown by Taylor's
    theorem at a rational point of the leaf (``Kernel.taylor_closes``).  Strict enclosures make the
    certificate its own proof of (b).
``refuted``
    a point of exact rationals that the kernel re-checks against the statement: every quantity has a
    value, integer quantities are integers, the bounds hold, every hypothesis is defined and true, and
    the goal is defined and false, and the conditions its definitions declare hold.  Values are decided
    by exact rational arithmetic, or where a value is irrational by certified interval enclosures at
    increasing precision.

z3 in the gate
--------------
The gate's z3 queries are ``derive.kernel.trusted.query`` (a mixin of ``Kernel``): the kernel translates
every query and reads every answer; a ``Tactics`` object only chooses the procedures and their budgets.

Invariants this module keeps: no ``proved`` without (a) a non-empty region, (b) the goal's side
conditions shown on it and (c) one sound route; no ``refuted`` without a point of exact rationals that
``counterexample_failure`` accepts; no ``inconsistent`` without a false closed assumption, z3's ``unsat``
of the region, or a replayed interval certificate; no wall clock and no search of its own.

Budgets (deterministic, never wall-clock; running out gives ``unknown`` naming the budget)
------------------------------------------------------------------------------------------
z3: ``Problem.rlimit`` (``translate.MAX_ROOT_DEGREE`` keeps high-degree roots away from z3,
``translate.MAX_ROOTS`` many roots, ``translate.MAX_MONOMIALS`` polynomials z3 would multiply out past
that size; a ``Tactics`` object may add a wall-clock net under steps the rlimit does not interrupt, which
can only turn an answer into ``unknown``).  Exact evaluation: rationals up to ``EXACT_BITS`` bits,
certified intervals up to ``PRECISIONS[-1]`` bits.  Algebra: ``ALGEBRA_TERMS`` estimated terms of the
expanded common fraction (``expansion_size``, denominators included).  The proposers have their own
(``interval.MAX_BOXES``, ``prover.SEARCH_STEPS``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import chain

import sympy as sp

from derive.kernel.logic import (
    PRINT_BITS,
    And,
    Formula,
    IsInteger,
    Not,
    Or,
    Rel,
    name_of,
    rational_bits,
    structurally_integer,
    structurally_signed,
)
from derive.kernel.problem import Outcome, Problem
from derive.kernel.translate import (
    linear_integer,
)
from derive.kernel.trusted.evaluate import Unsettled, evaluate_at
from derive.kernel.trusted.meaning import (
    Refused,
    SideCondition,
    conjuncts_all,
    formula_side_conditions,
    hypothesis_box,
    refusal,
    substitute_values,
    without_mod,
)
from derive.kernel.trusted.query import PlainZ3, Tactics, Z3Queries
from derive.kernel.trusted.routes import ProofRoutes


class Kernel(ProofRoutes, Z3Queries):
    """The statement of one problem and the checks that admit verdicts on it.  Construction raises
    ``Refused`` for a statement without a meaning (``refusal``); ``tactics`` say how z3 is run (see the
    module docstring), never what its answers mean."""

    def __init__(self, problem: Problem, tactics: Tactics | None = None) -> None:
        why = refusal(problem)
        if why:
            raise Refused(why)
        problem = substitute_values(without_mod(problem))
        self.problem = problem
        present = problem.symbols()
        self.bounds = {s: (sp.Rational(lo), sp.Rational(hi)) for s, (lo, hi) in problem.bounds.items() if s in present}
        for s, (lo, hi) in hypothesis_box(problem.hypotheses).items():  # the same statement: bounds are
            if s in self.bounds:  # hypotheses, so both hold: their intersection (an empty one empties the region)
                lo = self.bounds[s][0] if lo is None else max(lo, self.bounds[s][0])
                hi = self.bounds[s][1] if hi is None else min(hi, self.bounds[s][1])
            if lo is not None and hi is not None and lo <= hi:
                self.bounds[s] = (lo, hi)
        self.integer = frozenset(s for s in problem.integer if s in present)
        self.symbols = sorted(present, key=name_of)
        # the region: hypotheses, each defined (its side conditions: what they mean, and what makes z3's
        # reading of a division or a root exact there), and bounds
        self.assumed: list[Formula] = list(problem.hypotheses)
        for h in problem.hypotheses:
            self.assumed += [sc.condition for sc in formula_side_conditions(h) if sc.condition not in self.assumed]
        self.region: list[Formula] = list(self.assumed)
        for s, (lo, hi) in sorted(self.bounds.items(), key=lambda kv: name_of(kv[0])):
            self.region += [Rel(s, ">=", lo), Rel(s, "<=", hi)]
        self.goal = problem.goal
        # what the goal's definitions declare (``Problem.conditions``): the goal is read only where they hold
        self.declared = [SideCondition(label, c) for label, c in problem.conditions]
        # every quantity an integer and every relation linear, the declared conditions z3 may be asked too (an
        # integrality ``IsInteger(n/2)`` is none): z3's QF_LIA procedure over Int variables
        self.linear_integer = bool(self.symbols) and set(self.symbols) == set(self.integer) and linear_integer(
            [*self.region, self.goal, *(sc.condition for sc in formula_side_conditions(self.goal)),
             *(sc.condition for sc in self.declared)], self.integer)
        self._z3 = None  # the goal's z3 context, made at its first query (``Z3Queries._context``)
        self.tactics: Tactics = tactics if tactics is not None else PlainZ3()
        self._goal_unsat = False
        self._rounded: dict[frozenset, frozenset[sp.Symbol]] = {}  # z3 points with irrational values (``rounded``)
        self._consistency: tuple[str, str | None] | None = None
        self._discharged: tuple[tuple[str, ...] | None, str | None] | None = None
        self._pos, self._nonneg = self._signed_symbols()
        self._taylor_answers: dict[tuple, bool] = {}  # taylor_closes, by box and centre
        self._witness: dict | None = None  # a point of the region the kernel confirmed (``consistency``)
        # the kernel's own answers of ``_region_miss``, by point: a proposer's point is checked again
        # where it becomes a witness or a counterexample (the values' types are part of the key)
        self._region_answers: dict[tuple, Callable[[], str] | None] = {}

    # the region ---------------------------------------------------------------------------------

    def witness(self) -> dict[sp.Symbol, sp.Rational] | None:
        """A point of the region the kernel confirmed exactly (every quantity a rational), once the region is shown
        non-empty; None where it was shown so without one (z3's algebraic point on a region without side
        conditions), or is not non-empty."""
        if self.consistency()[0] != "nonempty":
            return None
        if not self.symbols:
            return {}
        if self._witness is None:  # shown non-empty by z3's sat alone: its point, confirmed here, asked only now
            # (certificates want it; a check does not, so it never pays for the exact evaluation)
            status, point, _ = self.region_answer(model=True)
            if status == "sat" and point is not None and self.in_region(point):
                self._witness = dict(point)
        if self._witness is None or not set(self._witness) >= set(self.symbols):
            return None
        return {s: self._witness[s] for s in self.symbols}

    def consistency(self, witness: Mapping[sp.Symbol, sp.Rational] | None = None) -> tuple[str, str | None]:
        """("unsat"|"nonempty"|"unknown", reason).  "nonempty" needs an exact witness the kernel
        checks (z3's model, or ``witness`` from a proposer), or z3 sat on a region with no side
        conditions (then z3's reading of it is exact)."""
        if self._consistency is not None and (self._consistency[0] != "unknown" or witness is None):
            return self._consistency
        if witness is not None and self.in_region(witness):
            self._consistency = ("nonempty", None)
            self._witness = dict(witness)
            return self._consistency
        # a region without side conditions is read exactly by z3: any sat is its answer (no model wanted);
        # otherwise a model the kernel confirms below: the first solver's, when the kernel finds it in the
        # region (every region of the lecture and the serving library), else a later solver's (simpler
        # numbers, and rationals near them).  Short of ``sat`` both ask the same solvers in the same order.
        status, point, why = self.region_answer(model=False)
        plain = status == "sat" and self._read_exactly()
        if status == "sat" and not plain and not self.in_region(point):
            status, point, why = self.region_answer(model=True)
        if status == "unsat":
            self._consistency = ("unsat", None)
        elif status == "sat":
            if plain:  # the point still serves as a witness where the goal's definitions declare conditions
                ok = True
                if self.declared and self.in_region(point):
                    self._witness = dict(point)
            else:
                ok = self._confirm(point)
            self._consistency = ("nonempty", None) if ok else (
                "unknown", "z3 finds the assumptions satisfiable only at points the kernel cannot confirm")
        elif status == "unknown":
            self._consistency = ("unknown", f"could not establish that the assumptions are satisfiable: {why}")
        else:
            self._consistency = ("unknown", f"could not establish that the assumptions are satisfiable ({why})")
        return self._consistency

    def _read_exactly(self) -> bool:
        """Whether z3 reads the region exactly, so that its ``sat`` is the region's answer: no side conditions, and
        no power of a symbolic exponent (read through facts every such power meets: a ``sat`` of ``2**x == 3``
        with ``x < 1`` says nothing until the kernel confirms a point).  Other functions z3 does not read at all."""
        return not any(formula_side_conditions(h) for h in self.region) and not any(
            isinstance(n, sp.Pow) and not n.exp.is_Rational for h in self.region for e in h.exprs()
            for n in sp.preorder_traversal(e))

    def _confirm(self, point: Mapping[sp.Symbol, sp.Rational] | None) -> bool:
        """Whether z3's ``point``, or a simple rational near it, lies in the region (it becomes the witness)."""
        if point is None:
            return False
        for candidate in chain((point,), self.tactics.near(point)):  # lazily: a near point costs nsimplify
            if self.in_region(candidate):
                self._witness = dict(candidate)
                return True
        return False

    def in_region(self, point: Mapping[sp.Symbol, sp.Rational] | None) -> bool:
        if point is None:
            return False
        return self._region_miss(point) is None

    def _region_failure(self, point: Mapping[sp.Symbol, sp.Rational]) -> str | None:
        """Why ``point`` lies outside the region, in words, or None."""
        found = self._region_miss(point)
        return None if found is None else found()

    def _region_miss(self, point: Mapping[sp.Symbol, sp.Rational]) -> Callable[[], str] | None:
        """None where ``point`` lies in the region, else a maker of the words saying why (most callers ask
        only whether, and printing a hypothesis took a twentieth of a check)."""
        key = tuple((type(v), v) for v in (point.get(s) for s in self.symbols))
        if key not in self._region_answers:
            self._region_answers[key] = self._region_miss_at(point)
        return self._region_answers[key]

    def _region_miss_at(self, point: Mapping[sp.Symbol, sp.Rational]) -> Callable[[], str] | None:
        for s in self.symbols:
            v = point.get(s)
            if not isinstance(v, sp.Rational):
                return lambda s=s, v=v: f"{s} has no exact rational value ({v})"
            if s in self.integer and not v.is_integer:
                return lambda s=s, v=v: f"{s} = {v} is not an integer (an integer quantity)"
            if s in self.bounds and not (self.bounds[s][0] <= v <= self.bounds[s][1]):
                lo, hi = self.bounds[s]
                return lambda s=s, v=v, lo=lo, hi=hi: f"{s} = {v} lies outside its bounds [{lo}, {hi}]"
        for h in self.problem.hypotheses:
            try:
                if not evaluate_at(h, point):
                    return lambda h=h: f"hypothesis {h} fails there"
            except Unsettled as err:
                return lambda h=h, err=err: f"hypothesis {h} is not settled there ({err})"
        return None

    # side conditions of the goal ------------------------------------------------------------------

    def _signed_symbols(self) -> tuple[set[sp.Symbol], set[sp.Symbol]]:
        """Symbols that a top-level hypothesis or a bound makes > 0 / >= 0."""
        pos: set[sp.Symbol] = set()
        nonneg: set[sp.Symbol] = set()
        todo = list(self.region)
        while todo:
            h = todo.pop()
            if isinstance(h, And):
                todo.extend(h.args)
                continue
            if not isinstance(h, Rel):
                continue
            lhs, op, rhs = h.lhs, h.op, h.rhs
            if op in ("<", "<="):
                lhs, rhs, op = rhs, lhs, {"<": ">", "<=": ">="}[op]
            if isinstance(lhs, sp.Symbol) and rhs.is_Rational and op in (">", ">="):
                if rhs > 0 or (rhs == 0 and op == ">"):
                    pos.add(lhs)
                elif rhs == 0:
                    nonneg.add(lhs)
        return pos, nonneg

    def _syntactic(self, sc: SideCondition) -> bool:
        c = sc.condition
        if isinstance(c, IsInteger):
            return structurally_integer(c.expr, set(self.integer))
        if not isinstance(c, Rel) or c.rhs != 0:
            return False
        if c.op == ">=":
            return structurally_signed(c.lhs, "nonneg", self._pos, self._nonneg)
        return structurally_signed(c.lhs, "pos", self._pos, self._nonneg) or (
            c.op == "!=" and structurally_signed(-c.lhs, "pos", self._pos, self._nonneg))

    def discharge(self) -> tuple[tuple[str, ...] | None, str | None]:
        """(the goal's side conditions, each with how it was shown; or None and why not)."""
        if self._discharged is None:
            self._discharged = self._discharge(formula_side_conditions(self.goal))
        return self._discharged

    def _discharge(self, conditions: list[SideCondition]) -> tuple[tuple[str, ...] | None, str | None]:
        shown: list[str] = []
        pending: list[SideCondition] = []
        for sc in conditions:
            if self._syntactic(sc):
                shown.append(f"{sc} [structure]")
            else:
                pending.append(sc)
        if pending:
            status, point, why = self._z3_check(Or(tuple(Not(sc.condition) for sc in pending)))
            if status == "unsat":
                shown += [f"{sc} [z3]" for sc in pending]
            else:
                first = pending[0]
                if status == "sat":
                    for sc in pending:  # name the side condition that fails
                        st, _, _ = self._z3_check(Not(sc.condition))
                        if st == "sat":
                            first = sc
                            break
                    where = ", ".join(f"{k} = {v}" for k, v in sorted(point.items(), key=lambda kv: str(kv[0]))
                                      if k in first.condition.free_symbols())
                    reason = (f"side condition not implied by the assumptions: {first}"
                              + (f" fails e.g. at {where}" if where else "")
                              + "; state an assumption or bounds that rule it out")
                else:
                    reason = f"could not show the side condition {first} ({why})"
                return None, reason
        return tuple(shown), None

    # admitting verdicts ------------------------------------------------------------------------

    def inconsistent(self, engine: str = "z3", certificate: object = None,
                     witness: Mapping[sp.Symbol, sp.Rational] | None = None) -> Outcome | None:
        """``inconsistent`` when an assumption without quantities evaluates (exactly) to false, when z3 shows
        the region unsatisfiable, or (engine "interval") when a bisection tree of the bounded box has an
        assumption defined and false, or no integer point for an integer quantity, on every leaf
        (``_cover_failure`` without the goal); else None.  ``witness``: a proposer's point of the region,
        which, when the kernel confirms it, spares z3's question (``consistency``)."""
        if engine == "interval":
            if self._cover_failure(certificate, goal=False) is not None:
                return None
            return Outcome("inconsistent", engine, "the assumptions contradict each other on the stated bounds"
                           + (" (integer quantities considered)" if self.integer else ""),
                           recheck="interval certificate: an assumption fails on every box")
        for h in conjuncts_all(self.region):  # a closed assumption that is false: no route needed
            try:
                false = not h.free_symbols() and not evaluate_at(h, {})
            except Unsettled:
                continue
            if false:
                return Outcome("inconsistent", "exact", f"the assumptions contradict each other: {h} is false",
                               recheck="exact evaluation of an assumption without quantities")
        status, _ = self.consistency(witness)
        if status == "unsat":
            return Outcome("inconsistent", engine, "the assumptions contradict each other"
                           + (" (integer quantities considered)" if self.integer else ""), recheck="z3 unsat")
        return None

    def z3_point(self, extra: Formula) -> tuple[str, dict | None, str | None]:
        """z3 on region and ``extra``: a proposer's way to look for points (never a verdict by itself)."""
        return self._z3_check(extra)

    def goal_side_conditions(self) -> list[Formula]:
        """Where the goal is defined and read: its side conditions and what its definitions declare (a
        counterexample lies where they all hold)."""
        return [sc.condition for sc in [*formula_side_conditions(self.goal), *self.declared]]

    def declared_failure(self, witness: Mapping[sp.Symbol, sp.Rational] | None = None) -> str | None:
        """Why a proof of the goal would say nothing, or None: what the goal's definitions declare
        (``Problem.conditions``) is false where the claim is read (numbers only, decided exactly; or
        at the region's only point), or holds at no point of the region (z3 unsat).  The declared
        conditions are never hypotheses of the goal (``d := a - b`` declared positive must not prove
        ``a > b``): a proof shows the goal on the whole region, hence wherever they hold."""
        if not self.declared:
            return None
        closed = [sc for sc in self.declared if not sc.condition.free_symbols()]
        if witness is not None and set(witness) >= set(self.symbols):
            closed = self.declared
        for sc in closed:
            try:
                holds = evaluate_at(sc.condition, witness or {})
            except Unsettled as err:
                return f"the claim is read where its definitions are not settled: {sc} ({err})"
            if not holds:
                return f"the claim is read outside its definitions' domains: {sc} is false there"
        if len(closed) < len(self.declared) and not self._declared_hold(self._witness):
            status, _, _ = self._z3_check(And(tuple(sc.condition for sc in self.declared)), model=False)
            if status == "unsat":
                return ("the claim's definitions are defined nowhere on its region: "
                        + "; ".join(str(sc) for sc in self.declared))
        return None

    def z3_goal(self, *, model: bool = True) -> tuple[str, dict | None, str | None]:
        """z3 on region and negated goal.  ``unsat`` is remembered: it is the z3 route's proof.  ``model``:
        whether a later solver's model is worth waiting for (else the first ``sat`` is the answer)."""
        status, point, why = self._z3_check(Not(self.goal), model=model)
        if status == "unsat":
            self._goal_unsat = True
        return status, point, why

    def proved(self, engine: str, certificate: object = None,
               witness: Mapping[sp.Symbol, sp.Rational] | None = None) -> Outcome:
        """Admit ``proved`` from ``engine`` (z3 | sympy | interval) or say why not (``unknown``)."""
        if engine == "z3":
            if not self._goal_unsat:
                return Outcome("unknown", engine, "kernel: z3 did not show the negated goal unsatisfiable")
            method = "z3: negated goal unsatisfiable under the assumptions"
        elif engine == "sympy":
            why = self._identity_failure()
            if why:
                return Outcome("unknown", engine, f"kernel: {why}")
            method = "sympy expand/together/cancel: lhs - rhs is identically 0"
        elif engine == "exact":
            point = self.fixed_point()
            if point is None:
                return Outcome("unknown", engine, "kernel: exact evaluation proves only statements whose "
                                                  "assumptions fix every quantity")
            failure = self.declared_failure(point)
            if failure:  # read first: the goal's value there means nothing
                return Outcome("unknown", engine, failure)
            try:
                if not evaluate_at(self.goal, point):
                    return Outcome("unknown", engine, "kernel: the goal is false")
            except Unsettled as err:
                return Outcome("unknown", engine, f"kernel: {err}")
            witness = point
            method = "exact evaluation at the only point the assumptions allow" if point else \
                "exact evaluation of a statement without quantities"
        elif engine == "interval":
            why = self._cover_failure(certificate)
            if why:
                return Outcome("unknown", engine, f"kernel: interval certificate rejected: {why}")
            method = "interval certificate re-evaluated by the kernel over the stated bounds"
        else:
            return Outcome("unknown", engine, f"kernel: no proof rule for engine {engine}")
        status, why = self.consistency(witness)
        if status == "unsat":
            return self.inconsistent() or Outcome("unknown", engine, "inconsistent")
        if status != "nonempty":
            return Outcome("unknown", engine, why)
        if engine in ("interval", "exact"):  # strict enclosures / evaluation at the region's only point
            conditions: tuple[str, ...] = tuple(f"{sc} [{engine}]" for sc in formula_side_conditions(self.goal))
        else:
            shown, why = self.discharge()
            if shown is None:
                return Outcome("unknown", engine, why)
            conditions = shown
        failure = self.declared_failure(witness if engine == "exact" else None)
        if failure:
            return Outcome("unknown", engine, failure)
        return Outcome("proved", engine, recheck=method, side_conditions=conditions)

    def fixed_point(self) -> dict[sp.Symbol, sp.Rational] | None:
        """The point when the assumptions fix every quantity to a rational (bounds with low == high, which a
        top-level hypothesis ``x == 3/2`` gives too): the region is that point or empty; else None."""
        point = {s: lo for s, (lo, hi) in self.bounds.items() if lo == hi}
        return point if set(point) == set(self.symbols) else None

    def refuted(self, point: Mapping, engine: str) -> Outcome | None:
        """``refuted`` when the kernel confirms ``point`` (by name or symbol) as a counterexample, else None."""
        pt = {s: point.get(s, point.get(name_of(s))) for s in self.symbols}
        if self.counterexample_failure(pt) is not None:
            return None
        return Outcome("refuted", engine, counterexample={str(k): v for k, v in pt.items()},
                       recheck="exact")

    def counterexample_failure(self, point: Mapping[sp.Symbol, sp.Rational]) -> str | None:
        """Why ``point`` is not a counterexample of the statement, or None when it is one."""
        why = self._region_failure(point)
        if why:
            return why
        if any(rational_bits(v) > PRINT_BITS for v in point.values()):
            return f"a value of more than {PRINT_BITS} bits cannot be reported (a budget)"
        failure = self._outside_declared(point)
        if failure:
            return failure
        try:
            if evaluate_at(self.goal, point):
                return "the goal holds there"
        except Unsettled as err:
            return f"the goal is not settled there ({err})"
        return None

    def _declared_hold(self, point: Mapping[sp.Symbol, sp.Rational] | None) -> bool:
        """Whether ``point`` (of the region) satisfies every declared condition, exactly."""
        if point is None:
            return False
        try:
            return all(evaluate_at(sc.condition, point) for sc in self.declared)
        except Unsettled:
            return False

    def _outside_declared(self, point: Mapping[sp.Symbol, sp.Rational]) -> str | None:
        """Why the goal is not defined at ``point`` by what its definitions declare, or None."""
        for sc in self.declared:
            try:
                if not evaluate_at(sc.condition, point):
                    return f"the goal is not defined there: {sc} fails"
            except Unsettled as err:
                return f"the goal is not defined there: {sc} is not settled ({err})"
        return None

