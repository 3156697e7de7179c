"""Dimension inference for sympy expressions over declared quantities."""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

from derive.errors import DimensionError, LibraryError
from derive.kernel.logic import PRINT_BITS, And, Formula, Iff, Implies, Not, Or, Rel, rational_bits
from derive.model.units import DIMENSIONLESS, Dimension, format_dimension

Lookup = Callable[[sp.Symbol], Dimension]


def dimension_of(expr: sp.Expr, lookup: Lookup, *, where: str = "", memo: dict | None = None) -> Dimension:
    """The dimension of ``expr``; raises ``DimensionError`` naming both sides of any mismatch.  Each
    distinct part is inferred once (``memo``): sympy shares repeated parts, whose tree can be
    exponentially larger than the expression."""
    memo = {} if memo is None else memo
    if id(expr) not in memo:
        memo[id(expr)] = (expr, _dimension_of(expr, lookup, where, memo))  # the part kept alive: ids stay unique
    return memo[id(expr)][1]


def _dimension_of(expr: sp.Expr, lookup: Lookup, where: str, memo: dict) -> Dimension:
    if isinstance(expr, sp.Symbol):
        return lookup(expr)
    if expr.is_Number or expr in (sp.pi, sp.E) or isinstance(expr, sp.NumberSymbol):
        if expr.is_Rational and rational_bits(expr) > PRINT_BITS:  # a number derive cannot print
            raise LibraryError(f"{where}: a number of more than 4,000 digits",
                               hint="derive prints every number in decimal; scale the quantity's unit instead")
        return DIMENSIONLESS
    if isinstance(expr, (sp.Add, sp.Max, sp.Min)):
        return _same(expr.args, lookup, where, "sum" if isinstance(expr, sp.Add) else str(expr.func), memo)
    if isinstance(expr, sp.Mul):
        out = DIMENSIONLESS
        for a in expr.args:
            out = out * dimension_of(a, lookup, where=where, memo=memo)
        return out
    if isinstance(expr, sp.Pow):
        base = dimension_of(expr.base, lookup, where=where, memo=memo)
        exp_dim = dimension_of(expr.exp, lookup, where=where, memo=memo)
        if not exp_dim.is_dimensionless:
            raise DimensionError(f"exponent {expr.exp} has dimension {format_dimension(exp_dim)}", where=where)
        if base.is_dimensionless:
            return DIMENSIONLESS
        if not expr.exp.is_Rational:
            raise DimensionError(
                f"power {expr} raises a quantity of dimension {format_dimension(base)} to a non-numeric exponent",
                where=where,
            )
        from fractions import Fraction

        return base ** Fraction(int(expr.exp.p), int(expr.exp.q))
    if isinstance(expr, sp.Abs):
        return dimension_of(expr.args[0], lookup, where=where, memo=memo)
    if isinstance(expr, sp.Piecewise):
        for _, cond in expr.args:  # a condition compares like with like too (it was never read: s > 1/s passed)
            _check_condition(cond, lookup, where, memo)
        dims = [dimension_of(e, lookup, where=where, memo=memo) for e, _ in expr.args]
        for d in dims[1:]:
            if d != dims[0]:
                raise DimensionError(
                    f"piecewise branches differ: {format_dimension(dims[0])} vs {format_dimension(d)}", where=where
                )
        return dims[0]
    if isinstance(expr, sp.Mod):  # a - b*floor(a/b): a and b alike, and so is the remainder
        return _same(expr.args, lookup, where, "Mod", memo)
    if isinstance(expr, sp.Function):
        # exp, log, sqrt-free functions and undefined functions take and give plain numbers.
        for a in expr.args:
            d = dimension_of(a, lookup, where=where, memo=memo)
            if not d.is_dimensionless:
                raise DimensionError(
                    f"{expr.func} applied to a quantity of dimension {format_dimension(d)}", where=where
                )
        return DIMENSIONLESS
    raise DimensionError(f"cannot infer the dimension of {expr}", where=where)


def _check_condition(cond: sp.Basic, lookup: Lookup, where: str, memo: dict) -> None:
    """A ``Piecewise`` condition: each relation compares like with like (a bare number is read in the SI base
    units of the other side, as in ``check_formula``), through ``And``/``Or``/``Not``."""
    if isinstance(cond, sp.logic.boolalg.BooleanAtom):
        return
    if isinstance(cond, sp.core.relational.Relational):
        left = dimension_of(cond.lhs, lookup, where=where, memo=memo)
        right = dimension_of(cond.rhs, lookup, where=where, memo=memo)
        if left != right and not (cond.lhs.is_number or cond.rhs.is_number):
            raise DimensionError(f"the sides of the condition '{cond}' differ: {format_dimension(left)} vs "
                                 f"{format_dimension(right)}", where=where)
        return
    if isinstance(cond, sp.logic.boolalg.BooleanFunction):
        for a in cond.args:
            _check_condition(a, lookup, where, memo)
        return
    raise DimensionError(f"cannot read the condition {cond} of a piecewise expression", where=where)


def _same(args: tuple[sp.Expr, ...], lookup: Lookup, where: str, what: str, memo: dict) -> Dimension:
    dims = [(a, dimension_of(a, lookup, where=where, memo=memo)) for a in args]
    first_expr, first = dims[0]
    for a, d in dims[1:]:
        if d != first:
            bare = next((d_other for e, d_this, d_other in ((first_expr, first, d), (a, d, first))
                         if e.is_number and d_this.is_dimensionless), None)
            raise DimensionError(
                f"dimension mismatch in {what.lower()}: {first_expr} is {_words(first)} but {a} is {_words(d)}",
                where=where,
                hint=None if bare is None else f"give the number a unit of {format_dimension(bare)}",
            )
    return first


def _words(d: Dimension) -> str:
    """``byte/s``; ``a plain number`` rather than ``1``."""
    return "a plain number" if d.is_dimensionless else format_dimension(d)


def check_formula(formula: Formula, lookup: Lookup, *, where: str) -> None:
    """Every relation in ``formula`` must compare like with like (0 fits any dimension)."""
    if isinstance(formula, Rel):
        left = dimension_of(formula.lhs, lookup, where=where)
        right = dimension_of(formula.rhs, lookup, where=where)
        # A bare number on one side is read in the SI base units of the other side.
        if left != right and not (formula.lhs.is_number or formula.rhs.is_number):
            raise DimensionError(
                f"the sides of '{formula}' differ: {format_dimension(left)} vs {format_dimension(right)}",
                where=where,
            )
    elif isinstance(formula, (And, Or)):
        for a in formula.args:
            check_formula(a, lookup, where=where)
    elif isinstance(formula, Not):
        check_formula(formula.arg, lookup, where=where)
    elif isinstance(formula, Implies):
        check_formula(formula.premise, lookup, where=where)
        check_formula(formula.conclusion, lookup, where=where)
    elif isinstance(formula, Iff):
        check_formula(formula.left, lookup, where=where)
        check_formula(formula.right, lookup, where=where)
