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
The region and the goal are translated to z3 here (``derive.kernel.translate``: exact rationals, the
side conditions asserted beside every division and root), and z3's ``unsat`` on them is believed
whichever z3 procedure answered.  *Which* procedures are tried, in what order, with what share of the
rlimit and what wall clock, is not the gate's business: a ``Tactics`` object hands it configured z3
solvers (``derive.kernel.z3_tactics.TacticSolver`` for the prover; ``PlainZ3`` below by default, one
``z3.Solver`` on the rlimit).  The gate itself adds the assertions to each solver and reads its
answer: ``unsat`` is final, a model is a point the gate re-checks exactly (or, for a region without
side conditions, z3's exact reading of it), ``unknown`` is ``unknown``.  A model's nearby simple
rationals (``Tactics.near``) are more points to re-check, never answers.

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

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

import sympy as sp
import z3

from derive.errors import TranslationError
from derive.kernel.logic import (
    PRINT_BITS,
    And,
    Formula,
    Implies,
    IsInteger,
    Not,
    Or,
    Rel,
    children,
    name_of,
    rational_bits,
    structurally_integer,
    structurally_signed,
)
from derive.kernel.problem import Outcome, Problem
from derive.kernel.translate import (
    LinearIntegerTranslator,
    Translator,
    linear_integer,
    make_integer_variables,
    make_variables,
    z3_value_to_rational,
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
)
from derive.kernel.trusted.routes import ProofRoutes


class Tactics(Protocol):
    """How z3 is run on the gate's queries (which procedures, what share of the rlimit, what wall clock).
    Not trusted: it only hands out solvers; the gate asks them and reads their answers."""

    name: str  # part of the key under which a region's answer is kept

    def attempts(self, ctx: z3.Context, *, rlimit: int, integer: bool, linear_integer: bool, roots: bool,
                 alone: bool) -> Iterator[tuple[z3.Solver, bool]]:
        """Configured solvers to ask in turn, each with whether its ``sat`` is provisional (a later
        solver's model is preferred).  The gate stops at the first ``unsat`` or non-provisional ``sat``."""
        ...

    def why_unknown(self, solver: z3.Solver | None, rlimit: int) -> str:
        """Why the last solver asked (None: none was) gave no answer, in words naming the budget."""
        ...

    def near(self, point: Mapping[sp.Symbol, sp.Rational]) -> Iterable[dict]:
        """Simple rationals near a model's point (z3 may answer with algebraic numbers): candidates only."""
        ...


class PlainZ3:
    """One ``z3.Solver`` on the rlimit, no wall clock: the gate's default, for a kernel built without a
    proposer's tactics (a re-check, a test).  With integer quantities the solver has seen ``push``, so
    its preprocessing stays within the rlimit."""

    name = "plain"

    def attempts(self, ctx: z3.Context, *, rlimit: int, integer: bool, linear_integer: bool, roots: bool,
                 alone: bool) -> Iterator[tuple[z3.Solver, bool]]:
        solver = z3.Solver(ctx=ctx)
        solver.set("rlimit", rlimit)
        if integer:
            solver.push()
        yield solver, False

    def why_unknown(self, solver: z3.Solver | None, rlimit: int) -> str:
        return f"z3 gave up ({solver.reason_unknown() if solver is not None else 'not asked'}; rlimit {rlimit})"

    def near(self, point: Mapping[sp.Symbol, sp.Rational]) -> Iterable[dict]:
        return ()


# z3's answer on a region alone (hypotheses, bounds, integrality), keyed by everything it reads
_REGION_Z3: dict[tuple, tuple[str, dict | None, str | None]] = {}


@dataclass
class _Z3:
    """One problem's z3 context: the region's assertions (integrality, region), its translator and
    variables.  Each query gets a new solver on them rather than push/pop on one: a solver that has
    seen ``push`` switches to z3's incremental core, which lacks the nonlinear tactics and was up to
    50x slower on the lecture's unsat queries."""
    ctx: z3.Context
    base: list
    translator: Translator
    variables: dict


def _z3_formula(tr: Translator, f: Formula) -> z3.BoolRef:
    """``f`` in z3: the translator's reading, and ``IsInteger`` as z3's ``is_int`` of the term."""
    if isinstance(f, IsInteger):
        return z3.IsInt(tr.expr(f.expr))
    if isinstance(f, (And, Or)) and any(_has_integrality(a) for a in f.args):
        parts = [_z3_formula(tr, a) for a in f.args]
        return z3.And(*parts) if isinstance(f, And) else z3.Or(*parts)
    if isinstance(f, Not) and _has_integrality(f.arg):
        return z3.Not(_z3_formula(tr, f.arg))
    if isinstance(f, Implies) and _has_integrality(f):
        return z3.Implies(_z3_formula(tr, f.premise), _z3_formula(tr, f.conclusion))
    return tr.formula(f)


def _has_integrality(f: Formula) -> bool:
    return isinstance(f, IsInteger) or any(_has_integrality(a) for a in children(f))


class Kernel(ProofRoutes):
    """The statement of one problem and the checks that admit verdicts on it.  Construction raises
    ``Refused`` for a statement without a meaning (``refusal``); ``tactics`` say how z3 is run (see the
    module docstring), never what its answers mean."""

    def __init__(self, problem: Problem, tactics: Tactics | None = None) -> None:
        why = refusal(problem)
        if why:
            raise Refused(why)
        problem = substitute_values(problem)
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
        # every quantity an integer and every relation linear: z3's QF_LIA procedure over Int variables
        self.linear_integer = bool(self.symbols) and set(self.symbols) == set(self.integer) and linear_integer(
            [*self.region, self.goal, *(sc.condition for sc in formula_side_conditions(self.goal))], self.integer)
        # what the goal's definitions declare (``Problem.conditions``): the goal is read only where they hold
        self.declared = [SideCondition(label, c) for label, c in problem.conditions]
        self._z3: _Z3 | None | str = None
        self.tactics: Tactics = tactics if tactics is not None else PlainZ3()
        self._goal_unsat = False
        self._consistency: tuple[str, str | None] | None = None
        self._discharged: tuple[tuple[str, ...] | None, str | None] | None = None
        self._pos, self._nonneg = self._signed_symbols()
        self._taylor_answers: dict[tuple, bool] = {}  # taylor_closes, by box and centre
        self._witness: dict | None = None  # a point of the region the kernel confirmed (``consistency``)

    # z3, one context per problem, a new solver per query ---------------------------------------------

    def _context(self) -> _Z3 | str:
        """The region asserted in a fresh z3 context (or why it cannot be translated), for the queries
        about the goal."""
        if self._z3 is None:
            self._z3 = self._fresh()
        return self._z3

    def _fresh(self) -> _Z3 | str:
        """A new z3 context with the region asserted."""
        ctx = z3.Context()
        if self.linear_integer:  # Int variables: integrality is their sort, not a constraint
            variables = make_integer_variables(set(self.symbols), ctx=ctx)
            tr: Translator | LinearIntegerTranslator = LinearIntegerTranslator(variables, ctx)
        else:
            variables = make_variables(set(self.symbols), ctx=ctx)
            tr = Translator(variables, ctx)
        try:
            region = [_z3_formula(tr, h) for h in self.region]
        except TranslationError as err:
            return err.message
        base = [z3.IsInt(variables[sym]) for sym in sorted(self.integer, key=name_of)
                if not self.linear_integer] + region  # in a fixed order:
        # a set's order follows PYTHONHASHSEED, and z3's models follow the order of its assertions
        return _Z3(ctx, base, tr, variables)

    def _z3_check(self, extra: Formula | None, *, alone: bool = False) -> tuple[str, dict | None, str | None]:
        """(sat|unsat|unknown|untranslatable, model point, reason) of region plus ``extra``; ``alone``:
        in a context of its own (so the goal's solver never depends on what was asked before it).  The
        solvers come from ``self.tactics``; the gate adds the assertions and reads each answer itself."""
        zs = self._fresh() if alone else self._context()
        if isinstance(zs, str):
            return "untranslatable", None, zs
        try:
            zextra = _z3_formula(zs.translator, extra) if extra is not None else None
        except TranslationError as err:
            return "untranslatable", None, err.message
        assertions = [*zs.base, *zs.translator.definitions, *([zextra] if zextra is not None else [])]
        attempts = self.tactics.attempts(zs.ctx, rlimit=self.problem.rlimit, integer=bool(self.integer),
                                         linear_integer=self.linear_integer, roots=bool(zs.translator.definitions),
                                         alone=alone)
        found: z3.Solver | None = None  # the solver whose model is the answer
        last: z3.Solver | None = None
        try:
            for solver, provisional in attempts:
                solver.add(*assertions)
                r = solver.check()
                if r == z3.unsat:
                    return "unsat", None, None
                last = solver
                if r == z3.sat:
                    found = solver if found is None or not provisional else found
                    if not provisional:
                        break
        finally:
            attempts.close()  # a tactics object accounts for its wall clock when it is closed
        if found is None:
            return "unknown", None, self.tactics.why_unknown(last, self.problem.rlimit)
        model = found.model()
        point = {sym: z3_value_to_rational(model.eval(var, model_completion=True))[0]
                 for sym, var in zs.variables.items()}
        return "sat", point, None

    # the region ---------------------------------------------------------------------------------

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
        key = (tuple(self.region), self.integer, tuple(self.symbols), self.problem.rlimit, self.tactics.name)
        if key not in _REGION_Z3:
            # z3 in a fresh context is deterministic, so one answer per region serves every problem on it
            # (a claim's derivation steps and many claims share their assumptions); a model point is
            # still re-checked below, problem by problem.  Asked in a context of its own, so the goal's
            # answers (counterexamples) do not depend on which problems this process saw before.
            if len(_REGION_Z3) >= 4096:
                _REGION_Z3.clear()
            _REGION_Z3[key] = self._z3_check(None, alone=True)
        status, point, why = _REGION_Z3[key]
        if status == "unsat":
            self._consistency = ("unsat", None)
        elif status == "sat":
            plain = not any(formula_side_conditions(h) for h in self.region)
            ok = plain or self.in_region(point) or any(self.in_region(c) for c in self.tactics.near(point))
            self._consistency = ("nonempty", None) if ok else (
                "unknown", "z3 finds the assumptions satisfiable only at points the kernel cannot confirm")
        elif status == "unknown":
            self._consistency = ("unknown", f"could not establish that the assumptions are satisfiable: {why}")
        else:
            self._consistency = ("unknown", f"could not establish that the assumptions are satisfiable ({why})")
        return self._consistency

    def in_region(self, point: Mapping[sp.Symbol, sp.Rational] | None) -> bool:
        if point is None:
            return False
        return self._region_failure(point) is None

    def _region_failure(self, point: Mapping[sp.Symbol, sp.Rational]) -> str | None:
        for s in self.symbols:
            v = point.get(s)
            if not isinstance(v, sp.Rational):
                return f"{s} has no exact rational value ({v})"
            if s in self.integer and not v.is_integer:
                return f"{s} = {v} is not an integer (an integer quantity)"
            if s in self.bounds and not (self.bounds[s][0] <= v <= self.bounds[s][1]):
                lo, hi = self.bounds[s]
                return f"{s} = {v} lies outside its bounds [{lo}, {hi}]"
        for h in self.problem.hypotheses:
            try:
                if not evaluate_at(h, point):
                    return f"hypothesis {h} fails there"
            except Unsettled as err:
                return f"hypothesis {h} is not settled there ({err})"
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
            status, _, _ = self._z3_check(And(tuple(sc.condition for sc in self.declared)))
            if status == "unsat":
                return ("the claim's definitions are defined nowhere on its region: "
                        + "; ".join(str(sc) for sc in self.declared))
        return None

    def z3_goal(self) -> tuple[str, dict | None, str | None]:
        """z3 on region and negated goal.  ``unsat`` is remembered: it is the z3 route's proof."""
        status, point, why = self._z3_check(Not(self.goal))
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
