"""The meaning of a claim: what a problem states, what it refuses, and where it is defined.  Trusted.

The kernel's semantics, in one place; ``derive.kernel.trusted.gate`` admits verdicts against it and
``derive.kernel.trusted.evaluate`` decides it at a point.

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
*side conditions* (``side_conditions``).  ``Mod(a, b)`` is ``a - b*floor(a/b)`` (sympy's meaning, and Python's
``%`` on integers: the sign of ``b``), defined where ``b != 0``: the kernel reads every ``Mod`` as that expression
(``without_mod``), so its side condition is the denominator's and every engine reads ``floor``.

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
statement on the region, which keeps the fixing hypothesis.  Values that would change where a part is
defined (``x**y`` at y = 2 is ``x**2``, defined where ``x**y`` is not; sympy folds ``y/x`` at y = 0 to 0)
are not substituted: the statement is read as written.

Refused statements (``unknown``, never decided): floating-point numbers anywhere (the float rule
below), complex numbers, infinities, functions without a domain rule here, symbols carrying sympy
assumptions, and bounds that are not exact rationals or are written high-to-low.

The float rule: floats are refused
----------------------------------
sympy folds floats at 53 bits *when the expression is built*, before any engine sees it
(``p + 1e-20*p`` is already ``1.0*p``), so no reading of a float can recover what was written.  A
statement containing a float (a sympy ``Float``, or a float in ``bounds``) gets ``unknown`` with a
hint to write an exact rational (``sp.Rational('0.1')``).


Invariants this module keeps: ``refusal`` is None only for a statement every engine reads the same way
(exact rationals, no float, no complex number, every function with a domain rule below); ``side_conditions``
lists every condition under which an expression is defined (inner ones first, a ``Piecewise`` branch's only
where it is reached), and drops one only when it holds exactly on numbers; ``substitute_values`` returns the
same statement on the region (it rewrites, never proves).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from derive.errors import UndefinedValueError
from derive.kernel.logic import PRINT_BITS, And, Formula, Implies, Not, Or, Rel, name_of, rational_bits
from derive.kernel.problem import Problem
from derive.kernel.trusted.enclose import CONSTANTS, Unsettled, bool_formula
from derive.kernel.trusted.evaluate import evaluate_at

MAX_NODES = 50_000  # largest statement (nodes of its expression trees, see ``tree_size``) the engines read
FLOAT_HINT = "floats are refused (sympy folds them at 53 bits); write an exact rational, e.g. sp.Rational('0.1')"

_TOTAL = (sp.exp, sp.sin, sp.cos, sp.Abs, sp.Max, sp.Min, sp.floor, sp.ceiling)  # defined for every real argument
_BOOL = sp.logic.boolalg
_CONDITIONS = (_BOOL.And, _BOOL.Or, _BOOL.Not, _BOOL.ITE, _BOOL.Xor, _BOOL.Implies, _BOOL.Equivalent, _BOOL.Nand,
               _BOOL.Nor, _BOOL.Xnor, _BOOL.BooleanTrue, _BOOL.BooleanFalse)  # Piecewise conditions (``bool_formula``)


class Refused(Exception):
    """A statement the kernel gives no meaning to (see ``refusal``)."""


def tree_size(exprs: list[sp.Expr], limit: int = MAX_NODES) -> int:
    """The nodes of the expressions' trees, a part sympy shares counted every time it occurs (the
    engines walk trees: ``e = e*(e + 1)`` thirty times over is a small object and a tree of 2**30 nodes),
    counted on the shared structure in linear time; any count past ``limit`` is ``limit + 1``."""
    total = 0
    for root in exprs:
        total = min(limit + 1, total + _tree_size(root, limit))
    return total


@lru_cache(maxsize=1 << 14)  # a pure function of the tree; a check sizes the same hypotheses in many problems
def _tree_size(root: sp.Basic, limit: int) -> int:
    """``tree_size([root], limit)``: every node's count is capped at ``limit + 1``, so a sum of roots'
    capped counts, capped again, is the count of them all capped."""
    memo: dict[int, int] = {}
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
    return memo[id(root)]


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
        if isinstance(a, sp.NumberSymbol) and a not in CONSTANTS:
            return f"constant {a} is not supported (only E and pi)"
        if isinstance(a, (sp.Symbol, sp.Number, sp.Add, sp.Mul, sp.Pow, sp.log, sp.Piecewise, sp.Mod,
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
        elif isinstance(a, sp.Mod):  # a - b*floor(a/b): undefined at b = 0, as sympy's Mod(a, 0) is nan
            add("modulus", Rel(a.args[1], "!=", 0))

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


def _number_holds(cond: Formula, *, unsettled: bool = False) -> bool:
    """A formula of numbers only, decided exactly; ``unsettled`` where it cannot be (a side condition counts
    as failing, a Piecewise guard as reached: the cautious side of each)."""
    try:
        return evaluate_at(cond, {})
    except Unsettled:
        return unsettled



# the same statement, rewritten ----------------------------------------------------------------------------

def hypothesis_box(hypotheses: list[Formula]) -> dict[sp.Symbol, tuple[sp.Rational | None, sp.Rational | None]]:
    """The (low, high) bounds that top-level hypotheses ``c <= x``, ``x < c`` ... give a quantity, None for a
    side they leave open (``--assume "x in [a, b]"`` says what ``bounds`` says): a box that holds the region,
    for the engines that need one."""
    low: dict[sp.Symbol, sp.Rational] = {}
    high: dict[sp.Symbol, sp.Rational] = {}
    for h in conjuncts_all(hypotheses):
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
    4)`` at x = 4) is not made: the statement is read as written and its side conditions fail there.  Where
    the values together would, those that alone keep definedness are substituted (together, if they still do)."""
    values: dict[sp.Symbol, sp.Rational] = {}
    refused: set[sp.Symbol] = set()
    keep: set[int] = set()
    hyps = list(problem.hypotheses)
    goal, conditions = problem.goal, list(problem.conditions)

    def substituted(found: dict) -> tuple | None:
        try:
            new_hyps = [h if i in keep else h.subs(found, strict=True) for i, h in enumerate(hyps)]
            new_goal = goal.subs(found, strict=True)
            new_conditions = [(label, c.subs(found, strict=True)) for label, c in conditions]
        except UndefinedValueError:
            return None
        olds = [*(h for i, h in enumerate(hyps) if i not in keep), goal, *(c for _, c in conditions)]
        news = [*(h for i, h in enumerate(new_hyps) if i not in keep), new_goal, *(c for _, c in new_conditions)]
        held = (set(conjuncts_all(new_hyps)), hypothesis_box(new_hyps), problem.bounds)
        if any(not _keeps_definedness(o, n, found, held) for o, n in zip(olds, news, strict=True)):
            return None  # the values would make a part defined that is not as written: read it as written
        return new_hyps, new_goal, new_conditions

    while True:
        found: dict[sp.Symbol, sp.Rational] = {}
        for i, h in enumerate(hyps):
            for c in conjuncts(h):
                if not (isinstance(c, Rel) and c.op == "=="):
                    continue
                for sym, value in ((c.lhs, c.rhs), (c.rhs, c.lhs)):
                    if isinstance(sym, sp.Symbol) and value.is_Rational and sym not in values \
                            and sym not in found and sym not in refused:
                        found[sym] = value
                        keep.add(i)
        if not found:
            break
        step = substituted(found)
        if step is None and len(found) > 1:
            alone = {s: v for s, v in found.items() if substituted({s: v}) is not None}
            refused |= set(found) - set(alone)
            found = alone
            step = substituted(found) if found else None
        if step is None:
            break
        hyps, goal, conditions = step
        values.update(found)
    if not values:
        return problem
    return Problem(hyps, goal, set(problem.integer), dict(problem.bounds), problem.rlimit, problem.seed, conditions)


def _keeps_definedness(old: Formula, new: Formula, values: dict[sp.Symbol, sp.Rational], held: tuple) -> bool:
    """Every side condition of ``old``, at ``values``, holds on numbers, is one of ``new``'s, or is a top-level
    hypothesis (or a bound, or a hypothesis' bound, of a quantity: ``held``)."""
    hyps, box, bounds = held
    try:
        lost = lost_side_conditions(old, new, values)
    except UndefinedValueError:
        return False
    # a hypothesis holds on the whole region, so it carries a guarded condition too
    plain = [c.conclusion if isinstance(c, Implies) else c for c in lost]
    return all(c in hyps or _bounded(c, box, bounds) for c in plain)


def lost_side_conditions(old: Formula, new: Formula, values: Mapping[sp.Symbol, sp.Expr]) -> list[Formula]:
    """The side conditions of ``old`` at ``values`` that ``new`` (``old`` with the values substituted) does not
    carry and numbers alone do not settle true: a value can turn ``x**y`` (base > 0) into ``x**2`` (defined
    everywhere) or let sympy fold ``y/x`` at y = 0 to 0 (x != 0 gone), which would prove a statement undefined
    where it is read.  A condition under a Piecewise guard is carried by the same condition unguarded or under
    the same guard (never an unguarded one by a guarded copy: ``y/x + Piecewise((1/x, x > 5), (0, True))`` at
    y = 0 keeps x != 0 only where x > 5); one whose guard is false at the values is not read there.
    ``UndefinedValueError`` where a condition itself has no value at ``values``."""
    if old is new:
        return []
    pending: list[Formula] = []
    for sc in formula_side_conditions(old):
        cond = sc.condition.subs(values, strict=True)
        if isinstance(cond, Implies) and not cond.premise.free_symbols() \
                and not _number_holds(cond.premise, unsettled=True):
            continue  # its branch is not reached at the values
        c = cond.conclusion if isinstance(cond, Implies) else cond
        if not c.free_symbols() and isinstance(c, Rel) and _number_holds(c):
            continue
        pending.append(cond)
    if not pending:
        return []
    plain: set[Formula] = set()
    guarded: set[Formula] = set()
    for sc in formula_side_conditions(new):
        (guarded if isinstance(sc.condition, Implies) else plain).add(sc.condition)
    lost: list[Formula] = []
    for cond in pending:
        c = cond.conclusion if isinstance(cond, Implies) else cond
        if c in plain or cond in guarded or cond in lost:
            continue
        lost.append(cond)
    return lost


def _bounded(c: Formula, box: dict, bounds: dict) -> bool:
    """``x > 0``, ``x >= 0`` or ``x != 0`` of a quantity whose bounds (or hypotheses' bounds) say so."""
    if not (isinstance(c, Rel) and isinstance(c.lhs, sp.Symbol) and c.rhs == 0 and c.op in (">", ">=", "!=")):
        return False
    lows = [lo for lo in (box.get(c.lhs, (None, None))[0], bounds.get(c.lhs, (None, None))[0]) if lo is not None]
    return any(sp.Rational(lo) > 0 or (c.op == ">=" and sp.Rational(lo) >= 0) for lo in lows)


def without_mod(problem: Problem) -> Problem:
    """The same statement with every ``Mod(a, b)`` written as ``a - b*floor(a/b)``, its meaning for every real
    ``b != 0`` (the division carries that side condition); the problem itself where it has no ``Mod``."""
    exprs = [e for f in [*problem.hypotheses, problem.goal, *(c for _, c in problem.conditions)] for e in f.exprs()
             if isinstance(e, sp.Basic)]
    # a tree past the budget is refused as it is (``refusal``): never walked node by node here
    if tree_size(exprs) > MAX_NODES or not any(e.has(sp.Mod) for e in exprs):
        return problem

    def remainder(x: sp.Expr, y: sp.Expr) -> sp.Expr:
        if y.is_zero:  # Mod(x, 0) (a constant 0, unevaluated): 0*floor(x/0) would fold to 0, and the division
            # with its failing side condition with it; it is kept written out, so the statement stays undefined
            return sp.Add(x, sp.Mul(-1, y, sp.floor(sp.Mul(x, sp.Pow(y, -1, evaluate=False), evaluate=False)),
                                    evaluate=False), evaluate=False)
        return x - y * sp.floor(x / y)

    def rewrite(f: Formula) -> Formula:
        return f.map_exprs(lambda e: e.replace(sp.Mod, remainder) if isinstance(e, sp.Basic) else e)

    return Problem([rewrite(h) for h in problem.hypotheses], rewrite(problem.goal), set(problem.integer),
                   dict(problem.bounds), problem.rlimit, problem.seed,
                   [(label, rewrite(c)) for label, c in problem.conditions])


def conjuncts(f: Formula) -> list[Formula]:
    return [c for a in f.args for c in conjuncts(a)] if isinstance(f, And) else [f]


def conjuncts_all(fs: list[Formula]) -> list[Formula]:
    return [c for f in fs for c in conjuncts(f)]
