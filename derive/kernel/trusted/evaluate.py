"""Exact evaluation: the truth of a formula at a point of exact rationals.  Trusted.

Invariants this module keeps:

* ``evaluate_at(f, point)`` returns the truth of ``f`` at ``point`` only when every part of ``f`` is
  defined there (strict: every argument is evaluated, even where another already settles the value, so
  a zero denominator is never cancelled away); otherwise it raises ``Undefined``, ``Unsupported`` (a
  construct without a rule here: nothing is known of its value) or ``OverBudget``.
* A value is exact rational arithmetic wherever it is rational and within ``EXACT_BITS``; where it is
  irrational (or larger) the two sides of a relation are separated by certified enclosures
  (``derive.kernel.trusted.enclose``) at ``PRECISIONS`` bits in turn.  Two sides that no precision
  separates are equal only when sympy's exact arithmetic at the point reduces their difference to 0
  (within ``ALGEBRA_TERMS``), else ``OverBudget``.
* A ``Piecewise`` is read in order: the first condition that holds picks the branch; a later condition is
  never read; none holding is ``Undefined``.
* Integrality at a point (``IsInteger``) is the exact value's, or an enclosure strictly between two
  consecutive integers (not an integer); never a guess.
* ``mpmath.iv.prec`` is restored after every evaluation.

``expansion_size`` (the algebra budget of the identity route and of ``_exactly_equal``) lives here too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import mpmath
import sympy as sp

from derive.kernel.logic import And, Formula, Iff, Implies, IsInteger, Not, Or, Rel, rational_bits
from derive.kernel.trusted.enclose import (
    CONSTANTS,
    MaybeUndefined,
    OverBudget,
    Undefined,
    Unsettled,
    Unsupported,
    bool_formula,
    enclose,
    ivnum,
    whole_end,
)

EXACT_BITS = 20_000  # largest exact rational (numerator or denominator bits) exact evaluation builds
PRECISIONS = (64, 256, 1024, 4096)  # bits of the certified interval evaluation at a point, tried in order
ALGEBRA_TERMS = 5_000  # largest expansion the identity route normalises
_iv = mpmath.iv


def exact_value(e: sp.Expr, point: Mapping[sp.Symbol, sp.Rational]) -> sp.Rational | None:
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
        vals = [exact_value(a, point) for a in e.args]
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
        b, x = exact_value(e.base, point), exact_value(e.exp, point)
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
        a = exact_value(e.args[0], point)
        if a is not None and a <= 0:
            raise Undefined(f"logarithm of {sp.sstr(e.args[0])} = {a}")
        return sp.Integer(0) if a == 1 else None
    if isinstance(e, (sp.exp, sp.sin, sp.cos)):
        a = exact_value(e.args[0], point)
        if a == 0:
            return sp.Integer(0) if isinstance(e, sp.sin) else sp.Integer(1)
        return None
    if isinstance(e, (sp.floor, sp.ceiling)):
        a = exact_value(e.args[0], point)
        if a is None:
            return None
        down = sp.Integer(int(a.p) // int(a.q))  # Python's // rounds toward minus infinity: the floor
        return down if isinstance(e, sp.floor) or down == a else down + 1
    if isinstance(e, sp.Mod):  # a - b*floor(a/b), undefined at b = 0 (``meaning``)
        a, b = exact_value(e.args[0], point), exact_value(e.args[1], point)
        if b == 0:
            raise Undefined(f"modulus {sp.sstr(e.args[1])} is zero")
        if a is None or b is None:
            return None
        return a - b * sp.floor(a / b)
    if isinstance(e, sp.Piecewise):
        for expr, cond in e.args:
            c = bool_formula(cond)
            if c is None or evaluate_at(c, point):
                return exact_value(expr, point)
        raise Undefined(f"no branch of {sp.sstr(e)} applies")
    if e in CONSTANTS:
        return None
    raise Unsupported(f"cannot evaluate {type(e).__name__} ({sp.sstr(e)})")




def _compare(lhs: sp.Expr, rhs: sp.Expr, point: Mapping[sp.Symbol, sp.Rational]) -> int:
    """The sign of ``lhs - rhs`` at ``point``, each side evaluated on its own (so a zero denominator
    is never cancelled away).  Raises ``Undefined`` or ``OverBudget``."""
    a, b = exact_value(lhs, point), exact_value(rhs, point)
    if a is not None and b is not None:
        d = a - b
        return 0 if d == 0 else (1 if d > 0 else -1)
    saved = _iv.prec
    why = "no precision separated them"
    try:
        for prec in PRECISIONS:
            _iv.prec = prec
            box = {s: _iv.mpf(ivnum(sp.Rational(v))) for s, v in point.items()}
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
        return exact_value(e, point)
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
    v = exact_value(e, point)
    if v is not None:
        return bool(v.is_integer)
    saved = _iv.prec
    try:
        for prec in PRECISIONS:
            _iv.prec = prec
            box = {s: _iv.mpf(ivnum(sp.Rational(x))) for s, x in point.items()}
            try:
                d = enclose(e, box)
            except (MaybeUndefined, ZeroDivisionError, ValueError, mpmath.libmp.libmpf.ComplexResult):
                continue
            below = whole_end(d.a)
            if below is not None and below == whole_end(d.b) and whole_end(d.a, up=True) != below:
                return False  # strictly between two consecutive integers
    finally:
        _iv.prec = saved
    raise OverBudget(f"exact-evaluation budget: could not settle whether {sp.sstr(e)} is an integer")




def value_at(e: sp.Expr, point: Mapping[sp.Symbol, sp.Rational]):
    """An interval holding the value of ``e`` (defined there) at a rational point: exactly the value when
    exact arithmetic or sympy's exact evaluation gives it (a touching point's 0), else an enclosure."""
    v = exact_value(e, point)
    if v is None and _exactly_equal(e, sp.Integer(0), point):
        v = sp.Integer(0)
    if v is not None:
        return ivnum(v)
    return enclose(e, {s: ivnum(q) for s, q in point.items()})



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
