"""z3 in the gate: the queries the kernel translates and whose answers it reads.  Trusted.

The region and the goal are translated to z3 here (``derive.kernel.translate``: exact rationals, the side
conditions asserted beside every division and root), one z3 context per problem and a new solver per
query; a region's own question is asked in a context of its own, so that the goal's answers never
depend on what was asked before.  *Which* z3 procedures run, in what order, on what share of the rlimit
and under what wall clock is not the kernel's business: a ``Tactics`` object offers configured solvers
(``derive.kernel.z3_tactics.TacticSolver`` for the prover; ``PlainZ3`` below by default: one
``z3.Solver`` on the rlimit, no clock).

Invariants this module keeps: the kernel adds every assertion to every solver itself and reads each
answer itself; ``unsat`` is z3's whichever procedure gave it; a ``sat`` yields a model point, which the
gate re-checks before it counts for anything but "not unsat"; ``unknown`` is only ever ``unknown``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

import sympy as sp
import z3

from derive.errors import TranslationError
from derive.kernel.logic import And, Formula, Implies, IsInteger, Not, Or, children, name_of
from derive.kernel.problem import Problem
from derive.kernel.translate import (
    LinearIntegerTranslator,
    Translator,
    make_integer_variables,
    make_variables,
    z3_value_to_rational,
)


class Tactics(Protocol):
    """How z3 is run on the gate's queries (which procedures, what share of the rlimit, what wall clock).
    Not trusted: it only hands out solvers; the gate asks them and reads their answers."""

    name: str  # part of the key under which a region's answer is kept

    def attempts(self, *, rlimit: int, integer: bool, linear_integer: bool, roots: bool,
                 alone: bool) -> Iterator[tuple[Callable[[z3.Context], z3.Solver], str]]:
        """Makers of configured solvers (each given the z3 context the gate asks in) to ask in turn, each
        with its role: ``final`` (its ``sat`` is the answer) or ``provisional`` (a later solver's model is
        preferred where a model is wanted).  Every solver is given every assertion.  The gate stops at the
        first ``unsat``, at a ``final`` ``sat``, and at any ``sat`` when no model is wanted."""
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

    def attempts(self, *, rlimit: int, integer: bool, linear_integer: bool, roots: bool,
                 alone: bool) -> Iterator[tuple[Callable[[z3.Context], z3.Solver], str]]:
        def make(ctx: z3.Context) -> z3.Solver:
            solver = z3.Solver(ctx=ctx)
            solver.set("rlimit", rlimit)
            if integer:
                solver.push()
            return solver

        yield make, "final"

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
    integrality: list  # is_int of each integer quantity (none where its sort is Int)
    region: list
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


def _assert_all(solver: z3.Solver, assertions: list) -> None:
    """``solver.add(*assertions)``: the same assertions in the same order, each z3 Boolean term passed to
    ``Z3_solver_assert`` directly (``Solver.add`` makes a Boolean sort and re-checks each term's sort in
    Python first: a third of the cost of asserting a region of thirty relations)."""
    if not isinstance(solver, z3.Solver):  # a stand-in of the same interface (a test's): its own ``add``
        solver.add(*assertions)
        return
    ctx = solver.ctx.ref()
    for a in assertions:
        if isinstance(a, z3.BoolRef):
            z3.Z3_solver_assert(ctx, solver.solver, a.as_ast())
        else:  # not a z3 Boolean term: z3's own conversion and its error
            solver.add(a)


def _point_key(point: Mapping[sp.Symbol, sp.Rational]) -> frozenset:
    return frozenset(point.items())


def _has_integrality(f: Formula) -> bool:
    return isinstance(f, IsInteger) or any(_has_integrality(a) for a in children(f))


class Z3Queries:
    """The gate's z3 queries, as methods of ``derive.kernel.trusted.gate.Kernel``."""

    problem: Problem
    symbols: list[sp.Symbol]
    integer: frozenset[sp.Symbol]
    linear_integer: bool
    region: list[Formula]
    tactics: Tactics
    _z3: _Z3 | None | str
    _rounded: dict[frozenset, frozenset[sp.Symbol]]


    def _context(self) -> _Z3 | str:
        """The region asserted in a z3 context of this problem (or why it cannot be translated), for the
        queries about the goal."""
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
        integrality = [z3.IsInt(variables[sym]) for sym in sorted(self.integer, key=name_of)
                       if not self.linear_integer]  # in a fixed order:
        # a set's order follows PYTHONHASHSEED, and z3's models follow the order of its assertions
        return _Z3(ctx, integrality, region, tr, variables)

    def _z3_check(self, extra: Formula | None, *, alone: bool = False,
                  model: bool = True) -> tuple[str, dict | None, str | None]:
        """(sat|unsat|unknown|untranslatable, model point, reason) of region plus ``extra``; ``alone``:
        in a context of its own (so the goal's solver never depends on what was asked before it);
        ``model``: whether a later solver's model is worth waiting for (``Tactics.attempts``), else the
        first ``sat`` is the answer.  The solvers come from ``self.tactics``; the gate adds every assertion
        to each and reads each answer itself."""
        zs = self._fresh() if alone else self._context()
        if isinstance(zs, str):
            return "untranslatable", None, zs
        try:
            zextra = _z3_formula(zs.translator, extra) if extra is not None else None
        except TranslationError as err:
            return "untranslatable", None, err.message
        assertions = [*zs.integrality, *zs.region, *zs.translator.definitions,
                      *([zextra] if zextra is not None else [])]
        attempts = self.tactics.attempts(rlimit=self.problem.rlimit, integer=bool(self.integer),
                                         linear_integer=self.linear_integer, roots=bool(zs.translator.definitions),
                                         alone=alone)
        found: z3.Solver | None = None  # the solver whose model is the answer
        last: z3.Solver | None = None
        try:
            for make, role in attempts:
                solver = make(zs.ctx)
                _assert_all(solver, assertions)
                r = solver.check()
                if r == z3.unsat:
                    return "unsat", None, None
                last = solver
                if r == z3.sat:
                    found = solver if found is None or role == "final" else found
                    if role == "final" or not model:
                        break
        finally:
            attempts.close()  # a tactics object accounts for its wall clock when it is closed
        if found is None:
            return "unknown", None, self.tactics.why_unknown(last, self.problem.rlimit)
        values = found.model()
        read = {sym: z3_value_to_rational(values.eval(var, model_completion=True))
                for sym, var in zs.variables.items()}
        point = {sym: value for sym, (value, _) in read.items()}
        rounded = frozenset(sym for sym, (_, exact) in read.items() if not exact)
        if rounded:  # words only (``rounded``): the point is re-checked like any other
            self._rounded[_point_key(point)] = rounded
        return "sat", point, None

    def rounded(self, point: Mapping[sp.Symbol, sp.Rational] | None) -> list[sp.Symbol]:
        """The quantities of ``point``, a model point this kernel read from z3, whose z3 value was an
        irrational (algebraic) number, rounded here to a rational: the kernel's exact re-check is then of a
        point near z3's, not of z3's own.  Empty for any other point.  For the words of a reason only."""
        if not point:
            return []
        return sorted(self._rounded.get(_point_key(point), ()), key=name_of)

    def region_answer(self, *, model: bool) -> tuple[str, dict | None, str | None]:
        """z3's answer on the region alone (``_z3_check`` with no goal), asked in a context of its own.
        z3 in a fresh context is deterministic, so one answer per region serves every problem on it (a
        claim's derivation steps and many claims share their assumptions); a model point is still
        re-checked by the caller, problem by problem."""
        key = (tuple(self.region), self.integer, tuple(self.symbols), self.problem.rlimit, self.tactics.name, model,
               self.linear_integer)  # Int sorts or reals with is_int: another query, another answer
        if key not in _REGION_Z3:
            if len(_REGION_Z3) >= 4096:
                _REGION_Z3.clear()
            _REGION_Z3[key] = self._z3_check(None, alone=True, model=model)
        return _REGION_Z3[key]
