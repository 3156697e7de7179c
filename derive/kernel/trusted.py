"""The trusted kernel: what a claim means, and the gate every verdict passes.  Read this module first.

Everything else that decides (``prover``: the z3 route, the sympy shortcut, the counterexample search;
``interval``: branch and bound) is an untrusted *proposer*.  A proposal becomes a verdict only through
``Kernel.proved``, ``Kernel.refuted`` or ``Kernel.inconsistent`` below; a proposal the kernel cannot
confirm becomes ``unknown`` with the reason.  The trusted base is this module, ``translate`` (sympy to
z3, exact rationals), ``logic`` (formula trees), z3's ``sat``/``unsat`` answers, sympy's
``expand``/``together``/``cancel`` on assumption-free symbols (and its automatic evaluation of numbers,
trusted only when it gives exactly 0), sympy's ``diff`` of smooth expressions, and mpmath's
outward-rounded intervals.

What the kernel cannot see: sympy simplifies some expressions when they are *built*, before any
engine reads them (``x/x`` is 1, ``sqrt(x)**2`` is ``x``, ``exp(log(x))`` is ``x``); the statement
checked is the expression sympy built, so write a claim's side conditions as hypotheses when they
matter.

Meaning of a problem
--------------------
``Problem(hypotheses, goal, integer, bounds)`` states: at every real point where

* every quantity in ``integer`` is an integer,
* every bound ``lo <= x <= hi`` holds (``bounds`` are hypotheses, the same for every engine: a region
  the claim is stated on, never a hint),
* every hypothesis is *defined* and true,

the goal is defined and true.  *Defined* is strict: every denominator is non-zero, the base of a
fractional power is >= 0 (> 0 when the power is negative), a logarithm's argument is > 0, and a power
whose exponent is not a rational literal (``N**alpha``, ``a**(k+1)``) has a base > 0; a ``Piecewise``
needs its conditions defined (up to the one that holds), one of them true (a ``Piecewise`` without an
otherwise branch is undefined where none holds) and only its active branch defined.  These are the
*side conditions* (``side_conditions``).

What definitions declare (``Problem.conditions``, built by ``Library.definition_conditions``): a
definition's ``domain`` and a derived quantity's declared domain (positive, non-negative) and integrality
(``logic.IsInteger``, z3's ``is_int``) are side conditions of every expression that uses the quantity.
Those of the hypotheses are hypotheses (a hypothesis is read only where it is defined).  Those of the goal
(``conditions``) say where the goal is read: a counterexample must satisfy them; they are never
hypotheses of the goal (``d := a - b`` declared positive must not prove ``a > b``), so a proof shows the
goal on the whole region, and it is admitted only when they are not false where the claim is read
(numbers only, or the region's only point: exact; otherwise z3 must not find them unsatisfiable on the
region).  Whether each definition meets its declaration is its own obligation
(``derive.checking.checker.Checker.obligations``).

Before any route runs, a quantity that a top-level hypothesis fixes to a number (``x == 4``) is replaced
by it in the goal, the other hypotheses and the conditions (``substitute_values``): an equivalent
statement on the region, which keeps the fixing hypothesis.

Refused statements (``unknown``, never decided): floating-point numbers anywhere (the float rule
below), complex numbers, infinities, functions without a domain rule here, symbols carrying sympy
assumptions, and bounds that are not exact rationals or are written high-to-low.

The float rule: floats are refused
----------------------------------
sympy folds floats at 53 bits *when the expression is built*, before any engine sees it
(``p + 1e-20*p`` is already ``1.0*p``), so no reading of a float can recover what was written.  A
statement containing a float (a sympy ``Float``, or a float in ``bounds``) gets ``unknown`` with a
hint to write an exact rational (``sp.Rational('0.1')``).

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

Budgets (deterministic, never wall-clock; running out gives ``unknown`` naming the budget)
------------------------------------------------------------------------------------------
z3: ``Problem.rlimit`` (a query without integer quantities may first spend ``NLSAT_SHARE`` of it on
nlsat alone; plus ``Z3_SAFETY_MS`` of wall clock, for the region's query and for all of the
goal's together, as a net under steps the rlimit does not interrupt; ``translate.MAX_ROOT_DEGREE``
keeps high-degree roots away from z3, ``translate.MAX_ROOTS`` many roots, ``translate.MAX_MONOMIALS``
polynomials z3 would multiply out past that size).  Exact evaluation: rationals up to ``EXACT_BITS``
bits, certified intervals up to ``PRECISIONS[-1]`` bits.  Algebra: ``ALGEBRA_TERMS`` estimated terms of
the expanded common fraction (``expansion_size``, denominators included).  The proposers have their own
(``interval.MAX_BOXES``, ``prover.SEARCH_STEPS``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache

import mpmath
import sympy as sp
import z3

from derive.errors import TranslationError, UndefinedValueError
from derive.kernel.logic import (
    PRINT_BITS,
    And,
    Formula,
    Iff,
    Implies,
    IsInteger,
    Not,
    Or,
    Rel,
    children,
    name_of,
    rational_bits,
    replace,
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

EXACT_BITS = 20_000  # largest exact rational (numerator or denominator bits) exact evaluation builds
PRECISIONS = (64, 256, 1024, 4096)  # bits of the certified interval evaluation at a point, tried in order
BOX_PRECISION = 64  # bits of interval evaluation on a box
ALGEBRA_TERMS = 5_000  # largest expansion the identity route normalises
MAX_NODES = 50_000  # largest statement (nodes of its expression trees, see ``tree_size``) the engines read
TAYLOR_SYMBOLS = 6  # Taylor leaves of an interval certificate: for goals over at most this many quantities,
TAYLOR_NODES = 300  # and inequalities of at most this many nodes (their derivatives are built and enclosed)
NLSAT_SHARE = 0.25  # of the rlimit, for the first, cheaper try of a query without integers (``Kernel._solve``)
NLSAT_MS = 2_000  # and a wall-clock cap on that try only: nlsat can pass its share inside one step its rlimit
# does not interrupt (a degree-15 polynomial in three quantities ran into the 60 s net, where the default
# tactic that follows refutes it in 14 s); the lecture's tries take at most 25 ms, and a try cut short falls
# back to the default tactic, which decides as it did before nlsat was tried first
Z3_SAFETY_MS = 60_000  # a wall-clock safety net only, for z3 steps its rlimit does not interrupt: for the
# region's query, and for all of a goal's queries together
FLOAT_HINT = "floats are refused (sympy folds them at 53 bits); write an exact rational, e.g. sp.Rational('0.1')"

_TOTAL = (sp.exp, sp.sin, sp.cos, sp.Abs, sp.Max, sp.Min, sp.floor, sp.ceiling)  # defined for every real argument
_BOOL = sp.logic.boolalg
_CONDITIONS = (_BOOL.And, _BOOL.Or, _BOOL.Not, _BOOL.ITE, _BOOL.Xor, _BOOL.Implies, _BOOL.Equivalent, _BOOL.Nand,
               _BOOL.Nor, _BOOL.Xnor, _BOOL.BooleanTrue, _BOOL.BooleanFalse)  # Piecewise conditions (``bool_formula``)
_CONSTANTS = (sp.E, sp.pi)
_iv = mpmath.iv


class Unsettled(Exception):
    """A value the kernel cannot settle at a point or on a box: undefined, or over a budget."""


class Undefined(Unsettled):
    """Certainly undefined (a zero denominator, a negative radicand, ...)."""


class MaybeUndefined(Unsettled):
    """An enclosure that cannot exclude an undefined point."""


class Unsupported(Unsettled):
    """A construct exact evaluation has no rule for (``floor``, a float, an undefined function): nothing
    is known about its value there, defined or not."""


class OverBudget(Unsettled):
    """Exact or interval evaluation beyond its budget."""


# refusal ---------------------------------------------------------------------------------------------

def tree_size(exprs: list[sp.Expr], limit: int = MAX_NODES) -> int:
    """The nodes of the expressions' trees, a part sympy shares counted every time it occurs (the
    engines walk trees: ``e = e*(e + 1)`` thirty times over is a small object and a tree of 2**30 nodes),
    counted on the shared structure in linear time; any count past ``limit`` is ``limit + 1``."""
    memo: dict[int, int] = {}
    total = 0
    for root in exprs:
        todo: list[tuple[sp.Basic, bool]] = [(root, False)]
        while todo:
            node, ready = todo.pop()
            if id(node) in memo:
                continue
            if ready:
                memo[id(node)] = min(limit + 1, 1 + sum(memo[id(a)] for a in node.args))
            else:
                todo.append((node, True))
                todo += [(a, False) for a in node.args if id(a) not in memo]
        total = min(limit + 1, total + memo[id(root)])
    return total


def refusal(problem: Problem) -> str | None:
    """Why the kernel gives this problem no meaning (see the module docstring), or None."""
    statement = [*problem.hypotheses, problem.goal, *(c for _, c in problem.conditions)]
    if tree_size([e for f in statement for e in f.exprs()]) > MAX_NODES:
        return f"the statement is too large for the engines (more than {MAX_NODES} nodes; a budget)"
    for sym, (lo, hi) in sorted(problem.bounds.items(), key=lambda kv: name_of(kv[0])):
        for end in (lo, hi):
            if isinstance(end, (float, sp.Float)):
                return f"bound {end} of {sym} is a floating-point number: {FLOAT_HINT}"
            if isinstance(end, bool) or not isinstance(end, (int, sp.Rational)):
                return f"bound {end} of {sym} is not an exact rational number"
        if any(rational_bits(sp.Rational(end)) > PRINT_BITS for end in (lo, hi)):
            return f"a bound of {sym} has more than {PRINT_BITS} bits (a budget: values are printed in decimal)"
        if lo > hi:
            return f"bounds of {sym} are written high-to-low ({lo} > {hi}): write (low, high)"
    for f in [*problem.hypotheses, problem.goal, *(c for _, c in problem.conditions)]:
        for e in f.exprs():
            if not isinstance(e, sp.Expr) or isinstance(e, sp.core.containers.Tuple):
                return f"{type(e).__name__} {sp.sstr(e)} is not a number: a relation compares two expressions"
            why = _refused_expr(e)
            if why:
                return why
    carrying = sorted(str(s) for s in problem.symbols() if set(s.assumptions0) - {"commutative"})
    if carrying:
        return f"symbol(s) {', '.join(carrying)} carry sympy assumptions; state domains as hypotheses instead"
    return None


@lru_cache(maxsize=1 << 16)  # a pure function of ``e``; the hypotheses recur across a library's problems
def _refused_expr(e: sp.Expr) -> str | None:
    for a in sp.preorder_traversal(e):
        if isinstance(a, sp.Float):
            return f"floating-point number {a} in {sp.sstr(e)}: {FLOAT_HINT}"
        if a.is_Number and not a.is_Rational:
            return f"{a} is not a real number"
        if a.is_Rational and rational_bits(a) > PRINT_BITS:
            return f"a number of more than {PRINT_BITS} bits (a budget: values are printed in decimal)"
        if a is sp.I or isinstance(a, (sp.core.numbers.ImaginaryUnit,)):
            return f"complex number in {sp.sstr(e)}"
        if isinstance(a, sp.NumberSymbol) and a not in _CONSTANTS:
            return f"constant {a} is not supported (only E and pi)"
        if isinstance(a, (sp.Symbol, sp.Number, sp.Add, sp.Mul, sp.Pow, sp.log, sp.Piecewise,
                          sp.NumberSymbol, _CONDITIONS, sp.core.relational.Relational,
                          sp.core.containers.Tuple, sp.core.numbers.ImaginaryUnit)):
            continue
        if isinstance(a, _TOTAL) or (isinstance(a, sp.Function) and
                                     isinstance(a.func, sp.core.function.UndefinedFunction)):
            continue
        if isinstance(a, sp.Piecewise) or type(a).__name__ == "ExprCondPair":
            continue
        return f"{type(a).__name__} in {sp.sstr(e)} has no domain rule in the kernel"
    return None


# side conditions -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SideCondition:
    """``condition`` must hold wherever the expression it comes from is evaluated."""

    kind: str  # denominator | radicand | logarithm | power base | piecewise branch
    condition: Formula

    def __str__(self) -> str:
        return f"{self.kind}: {self.condition}"


def side_conditions(e: sp.Expr, guard: Formula | None = None) -> list[SideCondition]:
    """The side conditions of ``e`` (inner ones first), each under ``guard`` when given."""
    out: list[SideCondition] = []

    def add(kind: str, cond: Formula) -> None:
        if not cond.free_symbols():  # numbers only: settled now, exactly
            if _number_holds(cond):
                return
        sc = SideCondition(kind, cond if guard is None else Implies(guard, cond))
        if sc not in out:
            out.append(sc)

    def walk(a: sp.Expr) -> None:
        if isinstance(a, sp.Piecewise):
            earlier: list[Formula] = []
            for expr, cond in a.args:
                c = bool_formula(cond)
                # a condition is read only where no earlier one holds: its side conditions hold there
                reached = [*([guard] if guard is not None else []), *[Not(x) for x in earlier]]
                for f in (c.exprs() if c is not None else []):
                    for sc in side_conditions(f, And(tuple(reached)) if reached else None):
                        if sc not in out:
                            out.append(sc)
                branch = And((*[Not(x) for x in earlier], c)) if c is not None else (
                    And(tuple(Not(x) for x in earlier)) if earlier else None)
                if guard is not None and branch is not None:
                    branch = And((guard, branch))
                for sc in side_conditions(expr, branch if branch is not None else guard):
                    if sc not in out:
                        out.append(sc)
                if c is not None:
                    earlier.append(c)
            if a.args[-1].cond is not sp.true:  # no otherwise branch: undefined where no condition holds
                add("piecewise branch", Or(tuple(earlier)))
            return
        for arg in a.args:
            if isinstance(arg, sp.Basic) and not isinstance(arg, (sp.logic.boolalg.Boolean,)):
                walk(arg)
        if isinstance(a, sp.Pow):
            b, x = a.base, a.exp
            if x.is_Integer:
                if x < 0:
                    add("denominator", Rel(b, "!=", 0))
            elif x.is_Rational:
                add("radicand", Rel(b, ">=", 0) if x > 0 else Rel(b, ">", 0))
            else:
                add("power base", Rel(b, ">", 0))
        elif isinstance(a, sp.log):
            add("logarithm", Rel(a.args[0], ">", 0))

    walk(e)
    return out


def formula_side_conditions(f: Formula) -> list[SideCondition]:
    return list(_formula_side_conditions(f))


@lru_cache(maxsize=1 << 14)  # a pure function of ``f``; the hypotheses recur across a library's problems
def _formula_side_conditions(f: Formula) -> tuple[SideCondition, ...]:
    out: list[SideCondition] = []
    for e in f.exprs():
        for sc in side_conditions(e):
            if sc not in out:
                out.append(sc)
    return tuple(out)


def bool_formula(c: sp.Basic) -> Formula | None:
    """A sympy condition (inside ``Piecewise``) as a formula; None for ``true``."""
    if c is sp.true:
        return None
    if c is sp.false:
        return Rel(sp.Integer(0), "==", 1)
    if isinstance(c, sp.core.relational.Relational):
        return Rel(c.lhs, c.rel_op, c.rhs)
    if isinstance(c, (sp.And, sp.Or)):
        parts = [bool_formula(a) for a in c.args]
        parts = [p if p is not None else Rel(sp.Integer(0), "==", 0) for p in parts]
        return And(tuple(parts)) if isinstance(c, sp.And) else Or(tuple(parts))
    if isinstance(c, sp.Not):
        inner = bool_formula(c.args[0])
        return Not(inner if inner is not None else Rel(sp.Integer(0), "==", 0))
    if isinstance(c, sp.logic.boolalg.BooleanFunction):  # ITE, Xor, Implies, ...: as and/or/not
        plain = c.to_nnf()
        if not isinstance(plain, type(c)):
            return bool_formula(plain)
    raise Unsupported(f"unsupported condition {c}")


def _number_holds(cond: Rel) -> bool:
    try:
        return evaluate_at(cond, {})
    except Unsettled:
        return False


# evaluation at a point: exact first, certified intervals where a value is irrational -------------------

def _exact(e: sp.Expr, point: Mapping[sp.Symbol, sp.Rational]) -> sp.Rational | None:
    """The exact rational value of ``e`` at ``point``; None when it is irrational (or too large to
    build, which interval evaluation then settles).  Raises ``Undefined``.  Every argument is evaluated
    (definedness is strict), even where another already settles the value."""
    if isinstance(e, sp.Symbol):
        if e not in point:
            raise Unsupported(f"no value for {e}")
        v = point[e]
        return sp.Integer(v) if isinstance(v, int) else v
    if e.is_Rational:
        return e
    if isinstance(e, (sp.Add, sp.Mul, sp.Max, sp.Min, sp.Abs)):
        vals = [_exact(a, point) for a in e.args]
        if any(v is None for v in vals):
            return None
        if isinstance(e, sp.Add):
            out = sum(vals, sp.Integer(0))
        elif isinstance(e, sp.Mul):
            out = sp.Integer(1)
            for v in vals:
                out *= v
        elif isinstance(e, sp.Max):
            out = max(vals)
        elif isinstance(e, sp.Min):
            out = min(vals)
        else:
            out = abs(vals[0])
        return out if rational_bits(out) <= EXACT_BITS else None
    if isinstance(e, sp.Pow):
        b, x = _exact(e.base, point), _exact(e.exp, point)
        literal = e.exp.is_Rational
        if b is not None and not literal and b <= 0:
            raise Undefined(f"power base {sp.sstr(e.base)} = {b} is not > 0")
        if b is None or x is None:
            return None
        if x.is_Integer:
            if x < 0 and b == 0:
                raise Undefined(f"denominator {sp.sstr(e.base)} is zero")
            if rational_bits(b) * abs(int(x)) > EXACT_BITS:
                return None
            return b ** x
        if b < 0 or (b == 0 and x < 0):
            raise Undefined(f"radicand {sp.sstr(e.base)} = {b} is negative" if b < 0 else
                            f"denominator {sp.sstr(e.base)} is zero")
        if b == 0:
            return sp.Integer(0)
        if rational_bits(b) > EXACT_BITS:
            return None
        num, ok1 = sp.integer_nthroot(int(b.p), int(x.q))
        den, ok2 = sp.integer_nthroot(int(b.q), int(x.q))
        if not (ok1 and ok2):
            return None
        root = sp.Rational(num, den)
        return root ** int(x.p) if rational_bits(root) * abs(int(x.p)) <= EXACT_BITS else None
    if isinstance(e, sp.log):
        a = _exact(e.args[0], point)
        if a is not None and a <= 0:
            raise Undefined(f"logarithm of {sp.sstr(e.args[0])} = {a}")
        return sp.Integer(0) if a == 1 else None
    if isinstance(e, (sp.exp, sp.sin, sp.cos)):
        a = _exact(e.args[0], point)
        if a == 0:
            return sp.Integer(0) if isinstance(e, sp.sin) else sp.Integer(1)
        return None
    if isinstance(e, (sp.floor, sp.ceiling)):
        a = _exact(e.args[0], point)
        if a is None:
            return None
        down = sp.Integer(int(a.p) // int(a.q))  # Python's // rounds toward minus infinity: the floor
        return down if isinstance(e, sp.floor) or down == a else down + 1
    if isinstance(e, sp.Piecewise):
        for expr, cond in e.args:
            c = bool_formula(cond)
            if c is None or evaluate_at(c, point):
                return _exact(expr, point)
        raise Undefined(f"no branch of {sp.sstr(e)} applies")
    if e in _CONSTANTS:
        return None
    raise Unsupported(f"cannot evaluate {type(e).__name__} ({sp.sstr(e)})")


@lru_cache(maxsize=65536)
def _ivnum_at(q: sp.Rational, prec: int):
    return _iv.mpf(int(q.p)) / int(q.q)


def _ivnum(q: sp.Rational):
    return _ivnum_at(q, _iv.prec)


@lru_cache(maxsize=65536)
def _closed(e: sp.Expr) -> bool:
    return not e.free_symbols


_CONSTANT_ENCLOSURES: dict = {}  # (closed expression, precision) -> enclosure: constants are enclosed once


@lru_cache(maxsize=4096)
def _difference(lhs: sp.Expr, rhs: sp.Expr) -> sp.Expr:
    return lhs - rhs


def enclose(e: sp.Expr, box: Mapping[sp.Symbol, object]):
    """An outward-rounded interval containing every value of ``e`` on ``box`` (a mapping to mpmath
    intervals) at the current ``mpmath.iv.prec``.  Raises ``MaybeUndefined`` where the box may hold a
    point where ``e`` is undefined (strict: a closed box touching a pole is not accepted)."""
    if isinstance(e, sp.Symbol):
        return box[e]
    if e.is_Rational:
        return _ivnum(e)
    if not e.is_Atom and _closed(e):
        key = (e, _iv.prec)
        if key not in _CONSTANT_ENCLOSURES:
            if len(_CONSTANT_ENCLOSURES) > 20000:
                _CONSTANT_ENCLOSURES.clear()
            _CONSTANT_ENCLOSURES[key] = _enclose(e, box)  # an error is raised, not stored
        return _CONSTANT_ENCLOSURES[key]
    return _enclose(e, box)


def _enclose(e: sp.Expr, box: Mapping[sp.Symbol, object]):
    if e is sp.E:
        return _iv.e
    if e is sp.pi:
        return _iv.pi
    if isinstance(e, sp.Add):
        out = _iv.mpf(0)
        for a in e.args:
            out = out + enclose(a, box)
        return out
    if isinstance(e, sp.Mul):
        out = _iv.mpf(1)
        for a in e.args:
            out = out * enclose(a, box)
        return out
    if isinstance(e, sp.Pow):
        b = enclose(e.base, box)
        x = e.exp
        if x.is_Integer:
            n = int(x)
            if n >= 0:
                return b ** n
            if b.a <= 0 <= b.b:
                raise MaybeUndefined(f"denominator {sp.sstr(e.base)} may be zero")
            return 1 / (b ** (-n))
        if x.is_Rational:
            if b.a < 0 or (x < 0 and b.a <= 0):
                raise MaybeUndefined(f"radicand {sp.sstr(e.base)} may be {'negative' if b.a < 0 else 'zero'}")
            return _monotone_power(b, x)
        if b.a <= 0:
            raise MaybeUndefined(f"power base {sp.sstr(e.base)} may be <= 0")
        return _exp(enclose(x, box) * _iv.log(b))
    if isinstance(e, sp.exp):
        return _exp(enclose(e.args[0], box))
    if isinstance(e, sp.log):
        a = enclose(e.args[0], box)
        if a.a <= 0:
            raise MaybeUndefined(f"logarithm argument {sp.sstr(e.args[0])} may be <= 0")
        return _iv.log(a)
    if isinstance(e, (sp.sin, sp.cos)):
        return (_iv.sin if isinstance(e, sp.sin) else _iv.cos)(enclose(e.args[0], box))
    if isinstance(e, sp.Abs):
        a = enclose(e.args[0], box)
        if a.a >= 0:
            return a
        if a.b <= 0:
            return -a
        return _iv.mpf([0, max(-a.a, a.b)])
    if isinstance(e, (sp.floor, sp.ceiling)):  # monotone: the integers at the two ends
        a = enclose(e.args[0], box)
        end = mpmath.floor if isinstance(e, sp.floor) else mpmath.ceil
        return _iv.mpf([end(a.a), end(a.b)])
    if isinstance(e, (sp.Max, sp.Min)):
        vals = [enclose(a, box) for a in e.args]
        pick = max if isinstance(e, sp.Max) else min
        return _iv.mpf([pick(v.a for v in vals), pick(v.b for v in vals)])
    if isinstance(e, sp.Piecewise):
        hull = None
        for expr, cond in e.args:
            c = bool_formula(cond)
            for part in (c.exprs() if c is not None else ()):
                enclose(part, box)  # a condition is defined where it picks a branch (strict, as at a point)
            t = True if c is None else truth_on_box(c, box)
            if t is False:
                continue
            v = enclose(expr, box)
            hull = v if hull is None else _iv.mpf([min(hull.a, v.a), max(hull.b, v.b)])
            if t is True:
                return hull
        if hull is None:
            raise MaybeUndefined(f"no branch of {sp.sstr(e)} applies")
        raise MaybeUndefined(f"the branch of {sp.sstr(e)} is not settled on the box")
    raise MaybeUndefined(f"no interval rule for {type(e).__name__}")


_EXP_LIMIT = 10**30  # exp is evaluated for exponents up to this size; beyond it only bounded (0 or +inf)


def _exp(v):
    """``exp`` of an interval.  An exponent beyond +-1e30 is not evaluated (a budget): past it the
    enclosure is widened to 0 below or +inf above, which still holds every value (exp is increasing)."""
    if v.a >= -_EXP_LIMIT and v.b <= _EXP_LIMIT:
        return _iv.exp(v)
    low = _iv.mpf(0) if v.a < -_EXP_LIMIT else _iv.exp(v.a if v.a <= _EXP_LIMIT else _iv.mpf(_EXP_LIMIT))
    high = _iv.mpf("inf") if v.b > _EXP_LIMIT else _iv.exp(v.b if v.b >= -_EXP_LIMIT else _iv.mpf(-_EXP_LIMIT))
    return _iv.mpf([low.a, high.b])


def _monotone_power(b, x: sp.Rational):
    """``b**x`` for an interval ``b >= 0`` and a rational ``x``: monotone, so from its ends."""
    def at(v):
        if v == 0:
            return _iv.mpf(0)
        return _iv.exp(_iv.log(v) * (_iv.mpf(int(x.p)) / int(x.q)))
    lo, hi = at(b.a), at(b.b)
    if x < 0:
        lo, hi = hi, lo
    return _iv.mpf([lo.a, hi.b])


def _compare(lhs: sp.Expr, rhs: sp.Expr, point: Mapping[sp.Symbol, sp.Rational]) -> int:
    """The sign of ``lhs - rhs`` at ``point``, each side evaluated on its own (so a zero denominator
    is never cancelled away).  Raises ``Undefined`` or ``OverBudget``."""
    a, b = _exact(lhs, point), _exact(rhs, point)
    if a is not None and b is not None:
        d = a - b
        return 0 if d == 0 else (1 if d > 0 else -1)
    saved = _iv.prec
    why = "no precision separated them"
    try:
        for prec in PRECISIONS:
            _iv.prec = prec
            box = {s: _iv.mpf(_ivnum(sp.Rational(v))) for s, v in point.items()}
            try:
                d = enclose(lhs, box) - enclose(rhs, box)
            except (MaybeUndefined, ZeroDivisionError, ValueError, mpmath.libmp.libmpf.ComplexResult) as err:
                why = str(err)
                continue
            if d.a > 0:
                return 1
            if d.b < 0:
                return -1
            if lhs == rhs or _exactly_equal(lhs, rhs, point):
                return 0  # (and defined: the enclosure worked)
    finally:
        _iv.prec = saved
    raise OverBudget(f"exact-evaluation budget ({PRECISIONS[-1]}-bit intervals) could not settle "
                     f"{sp.sstr(lhs)} against {sp.sstr(rhs)}: {why}")


def _exactly_equal(lhs: sp.Expr, rhs: sp.Expr, point: Mapping[sp.Symbol, sp.Rational]) -> bool:
    """sympy's exact arithmetic at a rational point (its automatic evaluation, then ``expand``) reduces
    ``lhs - rhs`` to 0: ``u*exp(u)`` against ``E`` at u = 1, ``log(8)`` against ``3*log(2)``.  Only asked
    where both sides are defined (their enclosures worked) and no precision separated them."""
    at = {s: sp.Rational(v) for s, v in point.items()}
    for e in (lhs, rhs):  # sympy would build x**y exactly: only small powers (the algebra budget)
        for a in sp.preorder_traversal(e):
            if isinstance(a, sp.Pow):
                x = a.exp if a.exp.is_Rational else _exact_or_none(a.exp, at)
                if x is None or abs(x) > 1000:
                    return False
    z = lhs.xreplace(at) - rhs.xreplace(at)
    return z == 0 or (expansion_size(z) <= ALGEBRA_TERMS and sp.expand(z) == 0)


def _exact_or_none(e: sp.Expr, point: Mapping[sp.Symbol, sp.Rational]) -> sp.Rational | None:
    try:
        return _exact(e, point)
    except Unsettled:
        return None


_OPS = {"==": lambda s: s == 0, "!=": lambda s: s != 0, "<": lambda s: s < 0, "<=": lambda s: s <= 0,
        ">": lambda s: s > 0, ">=": lambda s: s >= 0}


def evaluate_at(f: Formula, point: Mapping[sp.Symbol, sp.Rational]) -> bool:
    """The truth of ``f`` at a point of exact rationals; strict (every part must be defined).
    Raises ``Unsettled`` (``Undefined``, ``Unsupported`` or ``OverBudget``)."""
    if isinstance(f, Rel):
        return _OPS[f.op](_compare(f.lhs, f.rhs, point))
    if isinstance(f, (And, Or)):
        vals = [evaluate_at(a, point) for a in f.args]
        return all(vals) if isinstance(f, And) else any(vals)
    if isinstance(f, Not):
        return not evaluate_at(f.arg, point)
    if isinstance(f, Implies):
        p, c = evaluate_at(f.premise, point), evaluate_at(f.conclusion, point)
        return (not p) or c
    if isinstance(f, Iff):
        return evaluate_at(f.left, point) == evaluate_at(f.right, point)
    if isinstance(f, IsInteger):
        return _is_integer_at(f.expr, point)
    raise Unsupported(f"unknown formula {f!r}")


def _is_integer_at(e: sp.Expr, point: Mapping[sp.Symbol, sp.Rational]) -> bool:
    """Whether ``e`` is an integer at ``point``: its exact rational value, else (irrational, or past the
    exact budget) a certified enclosure strictly between two consecutive integers.  Raises ``Unsettled``."""
    v = _exact(e, point)
    if v is not None:
        return bool(v.is_integer)
    saved = _iv.prec
    try:
        for prec in PRECISIONS:
            _iv.prec = prec
            box = {s: _iv.mpf(_ivnum(sp.Rational(x))) for s, x in point.items()}
            try:
                d = enclose(e, box)
            except (MaybeUndefined, ZeroDivisionError, ValueError, mpmath.libmp.libmpf.ComplexResult):
                continue
            if mpmath.floor(d.a) == mpmath.floor(d.b) and d.a > mpmath.floor(d.a):
                return False
    finally:
        _iv.prec = saved
    raise OverBudget(f"exact-evaluation budget: could not settle whether {sp.sstr(e)} is an integer")


def truth_on_box(f: Formula, box: Mapping[sp.Symbol, object]) -> bool | None:
    """True/False when ``f`` is certainly defined and true/false on the whole box; None otherwise."""
    if isinstance(f, Rel):
        try:
            # the difference as sympy writes it (its automatic simplifications are identities: less
            # width); when that settles the relation, each side on its own, so that nothing undefined
            # was cancelled away
            joint = enclose(_difference(f.lhs, f.rhs), box)
            lo, hi = joint.a, joint.b
            if not (lo > 0 or hi < 0 or lo >= 0 or hi <= 0):
                return None
            d = enclose(f.lhs, box) - enclose(f.rhs, box)
        except (MaybeUndefined, ZeroDivisionError, ValueError, mpmath.libmp.libmpf.ComplexResult):
            return None
        lo, hi = max(d.a, joint.a), min(d.b, joint.b)
        if f.op in (">=", ">", "<=", "<"):
            sure, never = {">=": (lo >= 0, hi < 0), ">": (lo > 0, hi <= 0),
                           "<=": (hi <= 0, lo > 0), "<": (hi < 0, lo >= 0)}[f.op]
            return True if sure else False if never else None
        differs = lo > 0 or hi < 0
        same = lo == hi == 0
        if f.op == "==":
            return False if differs else (True if same else None)
        return True if differs else (False if same else None)
    vals = [truth_on_box(a, box) for a in children(f)]
    if None in vals:
        return None
    if isinstance(f, And):
        return all(vals)
    if isinstance(f, Or):
        return any(vals)
    if isinstance(f, Not):
        return not vals[0]
    if isinstance(f, Implies):
        return (not vals[0]) or vals[1]
    if isinstance(f, Iff):
        return vals[0] == vals[1]
    return None


# syntactic positivity (a sound, purely structural proof) ------------------------------------------

# the kernel of one problem ---------------------------------------------------------------------------

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


def _out_of_budget(reason: str) -> bool:
    """Whether z3's reason for ``unknown`` is its rlimit ("... limit ...", or "canceled" from a tactic
    that its rlimit stopped) or its wall-clock net ("timeout")."""
    return "limit" in reason or "canceled" in reason or "timeout" in reason


class Kernel:
    """The statement of one problem and the checks that admit verdicts on it.  Construction raises
    ``Refused`` for a statement without a meaning (``refusal``)."""

    def __init__(self, problem: Problem) -> None:
        why = refusal(problem)
        if why:
            raise Refused(why)
        problem = substitute_values(problem)
        self.problem = problem
        present = problem.symbols()
        self.bounds = {s: (sp.Rational(lo), sp.Rational(hi)) for s, (lo, hi) in problem.bounds.items() if s in present}
        for s, (lo, hi) in _hypothesis_box(problem.hypotheses).items():  # the same statement: bounds are
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
        self._z3_ms = 0.0  # wall clock z3 spent on this goal's queries (see Z3_SAFETY_MS)
        self._goal_unsat = False
        self._consistency: tuple[str, str | None] | None = None
        self._discharged: tuple[tuple[str, ...] | None, str | None] | None = None
        self._pos, self._nonneg = self._signed_symbols()
        self._taylor_answers: dict[tuple, bool] = {}  # taylor_closes, by box and centre
        self._witness: dict | None = None  # a point of the region the kernel confirmed (``consistency``)

    # z3, one context per problem, a new solver per query ---------------------------------------------

    def _solver(self) -> _Z3 | str:
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
        in a context of its own (so the goal's solver never depends on what was asked before it)."""
        zs = self._fresh() if alone else self._solver()
        if isinstance(zs, str):
            return "untranslatable", None, zs
        try:
            zextra = _z3_formula(zs.translator, extra) if extra is not None else None
        except TranslationError as err:
            return "untranslatable", None, err.message
        left = Z3_SAFETY_MS
        if not alone:  # the safety net is for all of the goal's queries together, not for each
            left = Z3_SAFETY_MS - self._z3_ms
            if left < 1000:
                return "unknown", None, f"z3's wall-clock safety net ({Z3_SAFETY_MS // 1000} s for a goal) is spent"
        assertions = [*zs.base, *zs.translator.definitions, *([zextra] if zextra is not None else [])]
        start = time.perf_counter()
        try:
            r, solver = self._solve(zs.ctx, assertions, left, roots=bool(zs.translator.definitions))
            if r == z3.unsat:
                return "unsat", None, None
            if r == z3.unknown:
                why = solver.reason_unknown()
                budget = (f"z3's wall-clock safety net ({Z3_SAFETY_MS // 1000} s for a goal) reached"
                          if "timeout" in why else f"z3 resource limit (rlimit {self.problem.rlimit}) reached"
                          if _out_of_budget(why) else f"z3 gave up ({why})")
                return "unknown", None, budget
            model = solver.model()
            point = {}
            for sym, var in zs.variables.items():
                point[sym] = z3_value_to_rational(model.eval(var, model_completion=True))[0]
            return "sat", point, None
        finally:
            if not alone:
                self._z3_ms += 1000 * (time.perf_counter() - start)

    def _solve(self, ctx: z3.Context, assertions: list, left_ms: float,
               roots: bool = False) -> tuple[z3.CheckSatResult, z3.Solver]:
        """z3's answer on ``assertions`` within the rlimit and ``left_ms``, and the solver that gave it.

        Without integer quantities, z3's nlsat procedure is tried first, on ``NLSAT_SHARE`` of the rlimit:
        building and freeing z3's default tactic (a portfolio for every logic) costs more than most of
        these queries, and its ``unsat`` is the answer most goals get.  Otherwise (a model is wanted: the
        default tactic's are simpler numbers; or nlsat gave up) the default tactic runs as a solver of its
        own on the full rlimit; ``z3.Solver()`` runs the same tactic beside an incremental core that
        receives and frees every assertion, and is asked only when the tactic gives up as incomplete.
        nlsat's ``sat`` stands when the others give up.  Not with ``roots`` (auxiliary variables of rational
        powers): there nlsat's algebraic numbers reach steps its rlimit does not interrupt (x > 1 with
        x**(5/3), x**(4/3), sqrt(x), x**(3/2) ran into the 60 s safety net at any share above 1e6; the
        default tactic refutes it)."""
        start = time.perf_counter()

        def ask(solver: z3.Solver, rlimit: int, cap_ms: float = math.inf) -> z3.CheckSatResult:
            solver.set("rlimit", rlimit)
            solver.set("timeout", max(1, int(min(cap_ms, left_ms - 1000 * (time.perf_counter() - start)))))
            if self.integer:
                # with integer quantities z3 runs its SMT core either way (nlsat is for reals only); in a
                # solver that has seen push it keeps the incremental preprocessing, whose steps the rlimit
                # bounds (the tactic pipeline's Groebner saturation ran a one-line claim for minutes
                # within a 1e6 rlimit)
                solver.push()
            solver.add(*assertions)
            return solver.check()

        if self.linear_integer:
            solver = z3.SolverFor("QF_LIA", ctx=ctx)
            solver.set("rlimit", self.problem.rlimit)
            solver.set("timeout", max(1, int(left_ms)))
            solver.add(*assertions)
            return solver.check(), solver
        found: tuple[z3.CheckSatResult, z3.Solver] | None = None  # nlsat's sat, if nothing better comes
        if not self.integer and not roots:
            solver = z3.Tactic("qfnra-nlsat", ctx).solver()
            r = ask(solver, max(1, int(self.problem.rlimit * NLSAT_SHARE)), NLSAT_MS)
            if r == z3.unsat:
                return r, solver
            found = (r, solver) if r == z3.sat else None
        makers = [lambda: z3.Solver(ctx=ctx)]
        if not self.integer:
            makers.insert(0, lambda: z3.Tactic("default", ctx).solver())
        for make in makers:
            solver = make()
            r = ask(solver, self.problem.rlimit)
            if r != z3.unknown:
                return r, solver
            if _out_of_budget(solver.reason_unknown()):
                break
        return found or (r, solver)

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
        key = (tuple(self.region), self.integer, tuple(self.symbols), self.problem.rlimit)
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
            ok = plain or self.in_region(point) or any(self.in_region(c) for c in _neighbours(point))
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
        for h in _conjuncts_all(self.region):  # a closed assumption that is false: no route needed
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

    # the sound routes the kernel runs itself -----------------------------------------------------

    def identity_holds(self) -> bool:
        """Whether sympy's expand/together/cancel reduce the goal's ``lhs - rhs`` to 0."""
        return self._identity_failure() is None

    def _identity_failure(self) -> str | None:
        if not hasattr(self, "_identity"):
            self._identity = self._identity_check()
        return self._identity

    def _identity_check(self) -> str | None:
        g = self.goal
        if not (isinstance(g, Rel) and g.op == "=="):
            return "the identity route needs an equation"
        diff = g.lhs - g.rhs
        if expansion_size(diff) > ALGEBRA_TERMS:
            return f"algebra budget ({ALGEBRA_TERMS} terms) exceeded by the expansion of {sp.sstr(diff)}"
        if sp.cancel(sp.together(sp.expand(_extrema_as_symbols(diff)))) != 0:
            return "expand/together/cancel do not reduce lhs - rhs to 0"
        return None

    def _cover_failure(self, tree: object, goal: bool = True) -> str | None:
        """Replays a bisection tree: ``("leaf",)``, ``("taylor", point)`` (see ``taylor_closes``) or
        ``("split", symbol, point, low, high)``; with ``goal=False`` a leaf closes only where the region
        is empty (no Taylor leaves)."""
        if any(s not in self.bounds for s in self.symbols):
            return "some quantity has no bounds"
        saved = _iv.prec
        _iv.prec = BOX_PRECISION
        try:
            stack: list[tuple[dict, object]] = [({s: self.bounds[s] for s in self.symbols}, tree)]
            while stack:
                box, node = stack.pop()
                if not isinstance(node, tuple) or not node:
                    return "malformed node"
                if node[0] == "split":
                    _, s, m, low, high = node
                    lo, hi = box.get(s, (None, None))
                    if lo is None or not (isinstance(m, sp.Rational) and lo < m < hi):
                        return f"bad split of {s} at {m}"
                    stack += [({**box, s: (lo, m)}, low), ({**box, s: (m, hi)}, high)]
                    continue
                if goal and node[0] == "taylor" and len(node) == 2 and self.taylor_closes(box, node[1]):
                    continue
                if node != ("leaf",) or not self._leaf_closed(box, goal):
                    return "a leaf box is not closed: " + ", ".join(f"{s} in [{a}, {b}]" for s, (a, b) in box.items())
        finally:
            _iv.prec = saved
        return None

    def _leaf_closed(self, box: Mapping[sp.Symbol, tuple[sp.Rational, sp.Rational]], goal: bool = True) -> bool:
        box = dict(box)
        for s in self.integer:  # integer quantities range over the integers of their side
            lo, hi = sp.ceiling(box[s][0]), sp.floor(box[s][1])
            if lo > hi:
                return True  # no integer point in the box
            box[s] = (sp.Integer(lo), sp.Integer(hi))
        ivbox = {s: _iv.mpf([_ivnum(lo).a, _ivnum(hi).b]) for s, (lo, hi) in box.items()}
        if goal and truth_on_box(self.goal, ivbox) is True:
            return True
        return any(truth_on_box(h, ivbox) is False for h in self.assumed)

    # Taylor leaves: a goal that touches its bound --------------------------------------------------

    def taylor_closes(self, box: Mapping[sp.Symbol, tuple[sp.Rational, sp.Rational]], centre: object) -> bool:
        """Whether the goal (an inequality, or a conjunction of them) holds on all of the (convex) box,
        each inequality ``lhs op rhs`` by its enclosure or by Taylor's theorem at the rational point
        ``centre`` of the box.  With ``f = lhs - rhs`` (``rhs - lhs`` for < and <=), every x of the box has
        a xi on the segment from the centre c to x with

            f(x) = f(c) + grad f(xi).(x - c)                                   (mean value)
            f(x) = f(c) + grad f(c).(x - c) + (x - c)' H(xi) (x - c) / 2       (Lagrange remainder)

        so enclosing grad f and the Hessian H over the box (each square (x_i - c_i)**2 as a square) encloses
        f on the box; the inequality holds when either enclosure is >= 0 (> 0 for a strict one).  Where
        f(c) and grad f(c) are exactly 0 (a minimum that touches the bound) they are used exactly.  Sound
        where f is twice differentiable on the box: f is built from + * / powers exp log sin cos only, and
        the goal's sides, grad f and H all have strict enclosures on the whole box (every derivative
        defined; sympy's ``diff`` computes them)."""
        if not isinstance(centre, Mapping) or len(self.symbols) > TAYLOR_SYMBOLS:
            return False
        c = {s: centre.get(s) for s in self.symbols}
        if any(not isinstance(c[s], sp.Rational) or not box[s][0] <= c[s] <= box[s][1] for s in self.symbols):
            return False
        # the kernel's own answers, by box and centre: a certificate's replay asks again what the proposer
        # asked while it searched (the same rationals), and each answer costs exact and interval evaluations
        key = tuple((s, box[s][0], box[s][1], c[s]) for s in self.symbols)
        memo = self._taylor_answers
        if key not in memo:
            saved = _iv.prec
            _iv.prec = BOX_PRECISION
            try:
                ivbox = {s: _iv.mpf([_ivnum(box[s][0]).a, _ivnum(box[s][1]).b]) for s in self.symbols}
                memo[key] = all(truth_on_box(g, ivbox) is True or self._taylor_holds(g, ivbox, c)
                                for g in _conjuncts(self.goal))
            finally:
                _iv.prec = saved
        return memo[key]

    def _taylor_holds(self, g: Formula, ivbox: Mapping, c: Mapping[sp.Symbol, sp.Rational]) -> bool:
        parts = self._taylor_parts(g)
        if parts is None:
            return False
        f, strict, grad, hess = parts
        try:
            enclose(g.lhs, ivbox), enclose(g.rhs, ivbox)  # the inequality is defined on the box
            dx = [ivbox[s] - _ivnum(c[s]) for s in self.symbols]
            f0 = _value_at(f, c)
            slopes = [enclose(e, ivbox) for e in grad]
            t = f0 + sum((m * d for m, d in zip(slopes, dx, strict=True)), _iv.mpf(0))
            if t.a > 0 or (t.a >= 0 and not strict):
                return True
            t = f0 + sum((_value_at(e, c) * d for e, d in zip(grad, dx, strict=True)), _iv.mpf(0))
            for i in range(len(dx)):
                t += enclose(hess[i][i], ivbox) * dx[i] ** 2 / 2
                for j in range(i + 1, len(dx)):
                    t += enclose(hess[i][j], ivbox) * dx[i] * dx[j]
            return bool(t.a > 0 or (t.a >= 0 and not strict))
        except (Unsettled, ZeroDivisionError, ValueError, mpmath.libmp.libmpf.ComplexResult):
            return False

    def _taylor_parts(self, g: Formula) -> tuple | None:
        """(f, strict, gradient, Hessian) of an inequality for ``_taylor_holds``, or None when it is not an
        inequality of smooth functions."""
        if not hasattr(self, "_taylor"):
            self._taylor: dict[Formula, tuple | None] = {}
        if g not in self._taylor:
            self._taylor[g] = None
            if isinstance(g, Rel) and g.op in (">=", ">", "<=", "<"):
                f = g.lhs - g.rhs if g.op in (">=", ">") else g.rhs - g.lhs
                nodes = list(sp.preorder_traversal(f))
                if len(nodes) <= TAYLOR_NODES and all(isinstance(a, _SMOOTH) or a.is_Rational or a in _CONSTANTS
                                                      for a in nodes):
                    syms = self.symbols
                    grad = [sp.diff(f, s) for s in syms]
                    hess = [[sp.diff(grad[i], syms[j]) if j >= i else None for j in range(len(syms))]
                            for i in range(len(syms))]
                    self._taylor[g] = (f, g.op in (">", "<"), grad, hess)
        return self._taylor[g]


def _hypothesis_box(hypotheses: list[Formula]) -> dict[sp.Symbol, tuple[sp.Rational | None, sp.Rational | None]]:
    """The (low, high) bounds that top-level hypotheses ``c <= x``, ``x < c`` ... give a quantity, None for a
    side they leave open (``--assume "x in [a, b]"`` says what ``bounds`` says): a box that holds the region,
    for the engines that need one."""
    low: dict[sp.Symbol, sp.Rational] = {}
    high: dict[sp.Symbol, sp.Rational] = {}
    for h in _conjuncts_all(hypotheses):
        if not isinstance(h, Rel) or h.op in ("!=",):
            continue
        for s, op, c in ((h.lhs, h.op, h.rhs), (h.rhs, _FLIPPED[h.op], h.lhs)):
            if isinstance(s, sp.Symbol) and isinstance(c, sp.Rational):
                if op in (">", ">=", "=="):
                    low[s] = max(low.get(s, c), c)
                if op in ("<", "<=", "=="):
                    high[s] = min(high.get(s, c), c)
    return {s: (low.get(s), high.get(s)) for s in {*low, *high}}


_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}


def substitute_values(problem: Problem) -> Problem:
    """The same statement with each quantity that a hypothesis fixes to a number (``x == 4``, ``4 == x``,
    at the top level of the hypotheses) replaced by that number in the goal, the other hypotheses and the
    declared conditions, until no new value appears (``y == x + 1`` then fixes y).  The fixing hypothesis
    itself stays, so the region, its points and its counterexamples are those of the statement as written:
    on the region every formula equals its substituted form, definedness included, which is why this is
    a rewriting and not a proof step.  A substitution that leaves a part without a real value (``1/(x -
    4)`` at x = 4) is not made: the statement is read as written and its side conditions fail there."""
    values: dict[sp.Symbol, sp.Rational] = {}
    keep: set[int] = set()
    hyps = list(problem.hypotheses)
    goal, conditions = problem.goal, list(problem.conditions)
    while True:
        found: dict[sp.Symbol, sp.Rational] = {}
        for i, h in enumerate(hyps):
            for c in _conjuncts(h):
                if not (isinstance(c, Rel) and c.op == "=="):
                    continue
                for sym, value in ((c.lhs, c.rhs), (c.rhs, c.lhs)):
                    if isinstance(sym, sp.Symbol) and value.is_Rational and sym not in values and sym not in found:
                        found[sym] = value
                        keep.add(i)
        if not found:
            break
        try:
            new_hyps = [h if i in keep else h.subs(found, strict=True) for i, h in enumerate(hyps)]
            new_goal = goal.subs(found, strict=True)
            new_conditions = [(label, c.subs(found, strict=True)) for label, c in conditions]
        except UndefinedValueError:
            break
        hyps, goal, conditions = new_hyps, new_goal, new_conditions
        values.update(found)
    if not values:
        return problem
    return Problem(hyps, goal, set(problem.integer), dict(problem.bounds), problem.rlimit, problem.seed, conditions)


def _conjuncts(f: Formula) -> list[Formula]:
    return [c for a in f.args for c in _conjuncts(a)] if isinstance(f, And) else [f]


def _conjuncts_all(fs: list[Formula]) -> list[Formula]:
    return [c for f in fs for c in _conjuncts(f)]


_SMOOTH = (sp.Symbol, sp.Add, sp.Mul, sp.Pow, sp.exp, sp.log, sp.sin, sp.cos)  # with rationals, E and pi


def _value_at(e: sp.Expr, point: Mapping[sp.Symbol, sp.Rational]):
    """An interval holding the value of ``e`` (defined there) at a rational point: exactly the value when
    exact arithmetic or sympy's exact evaluation gives it (a touching point's 0), else an enclosure."""
    v = _exact(e, point)
    if v is None and _exactly_equal(e, sp.Integer(0), point):
        v = sp.Integer(0)
    if v is not None:
        return _ivnum(v)
    return enclose(e, {s: _ivnum(q) for s, q in point.items()})


class Refused(Exception):
    """A statement the kernel gives no meaning to (see ``refusal``)."""


def _neighbours(point: Mapping[sp.Symbol, sp.Rational] | None) -> Iterator[dict]:
    """Simple rationals near an (approximated) point: z3 may answer with algebraic numbers."""
    if not point:
        return
    for digits in (3, 6, 12, 24):
        yield {k: sp.nsimplify(sp.Float(v, 40), tolerance=sp.Rational(1, 10**digits), rational=True)
               for k, v in point.items()}


def _extrema_as_symbols(e: sp.Expr) -> sp.Expr:
    """``e`` with each ``Max``/``Min`` replaced by a symbol, one per function and set of expanded
    arguments.  Sound for the identity route: an expression that is identically 0 with those symbols free
    is 0 whatever values they stand for.  It spares ``expand`` rebuilding (and so re-evaluating, by
    pairwise symbolic comparison) every ``Max`` inside the goal, which took seconds on the lecture."""
    names: dict[tuple, sp.Symbol] = {}
    mapping: dict[sp.Basic, sp.Basic] = {}
    for m in sorted(e.atoms(sp.Max, sp.Min), key=lambda m: tree_size([m])):  # inner ones first
        key = (m.func, frozenset(sp.expand(replace(a, mapping)) for a in m.args))
        if key not in names:
            names[key] = sp.Dummy(f"{m.func.__name__.lower()}{len(names)}")
        mapping[m] = names[key]
    return replace(e, mapping)


def expansion_size(e: sp.Expr) -> int:
    """A cheap over-estimate of the terms ``cancel(together(expand(e)))`` builds: the numerator and the
    denominator of the expanded common fraction (an integer power of a sum is expanded, a negative one
    into a denominator; a sum of fractions goes over the product of their denominators), or the largest
    function argument, which is expanded on its own."""
    num, den, inner = _sizes(e)
    return max(num + den, inner)


_SIZE_CAP = 10**9  # sizes beyond any budget are capped, to keep the estimate itself cheap


def _power_terms(k: int, m: int) -> int:
    """Terms of a sum of ``k`` terms to the power ``m`` (multinomial count), capped."""
    if m <= 1 or k <= 1:
        return k if m else 1
    if math.lgamma(m + k) - math.lgamma(k) - math.lgamma(m + 1) > math.log(_SIZE_CAP):
        return _SIZE_CAP
    return math.comb(m + k - 1, k - 1)


def _sizes(e: sp.Expr) -> tuple[int, int, int]:
    """(numerator terms, denominator terms, largest inner expansion) of ``e``; see ``expansion_size``."""
    cap = lambda v: min(v, _SIZE_CAP)  # noqa: E731
    if isinstance(e, (sp.Add, sp.Mul)):
        parts = [_sizes(a) for a in e.args]
        inner = max(p[2] for p in parts)
        den = 1
        for _, d, _ in parts:
            den = cap(den * d)
        if isinstance(e, sp.Mul):
            num = 1
            for n, _, _ in parts:
                num = cap(num * n)
            return num, den, inner
        return cap(sum(cap(n * (den // d)) for n, d, _ in parts)), den, inner
    if isinstance(e, sp.Pow) and e.exp.is_Rational:
        nb, db, inner = _sizes(e.base)
        m = int(abs(e.exp.p) // e.exp.q)  # x**(7/2) is expanded as x**3 * sqrt(x)
        pn, pd = (_power_terms(k, m) for k in (nb, db))
        return (pn, pd, inner) if e.exp > 0 else (pd, pn, inner)
    inner = max((expansion_size(a) for a in e.args if isinstance(a, sp.Expr)), default=1)
    return 1, 1, inner
