"""Translation of sympy expressions and our formulas into z3, exactly.

Numbers become z3 rationals (never floats).  ``Max``/``Min``/``Abs``/``Piecewise`` become ``If``.
Integer powers are products; a negative power is a division.  A rational power ``x**(p/q)`` becomes a
fresh variable ``r >= 0`` with ``r**q == x**p``, defined only where ``x >= 0``.  Every division and
every radicand is recorded as an *obligation* the prover must discharge from the hypotheses before
it trusts a verdict: z3 treats ``x/0`` as an arbitrary value, so an unproved non-zero denominator
could otherwise make a false claim look true.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import sympy as sp
import z3

from derive.errors import TranslationError
from derive.kernel.logic import And, Formula, Iff, Implies, Not, Or, Rel

MAX_POWER = 64
# A root x**(p/q) becomes r with r**q == x**p: past this degree z3's nonlinear arithmetic can run for
# minutes inside one step that its resource limit does not interrupt (a Chinchilla-style N**(-17/50)
# took 130 s), so such powers go to the interval engine instead (a translation budget).
MAX_ROOT_DEGREE = 6
# z3 multiplies polynomials out: (a+b+c+d+e)**30 is 46,376 monomials, which z3 works on for minutes
# (and its solver can crash the process beyond that); a division by (a+b+c+d+e)**10 takes it past a
# minute.  A relation whose polynomials would exceed this many monomials (a denominator's counting
# DIVISION_WEIGHT times) is not translated (a translation budget; see ``monomials``).
MAX_MONOMIALS = 5000
DIVISION_WEIGHT = 5


@dataclass
class Obligation:
    """A side condition under which the translation is faithful: ``expr != 0`` or ``expr >= 0``."""

    expr: sp.Expr
    z3_expr: z3.ArithRef
    kind: str  # "nonzero" | "nonnegative"

    def violated(self) -> z3.BoolRef:
        return self.z3_expr == 0 if self.kind == "nonzero" else self.z3_expr < 0

    def describe(self) -> str:
        return f"{'denominator' if self.kind == 'nonzero' else 'radicand'} {sp.sstr(self.expr)}"


@dataclass
class Translator:
    """Translates over a fixed set of symbols; collects auxiliary definitions and obligations."""

    variables: Mapping[sp.Symbol, z3.ArithRef]
    ctx: z3.Context | None = None  # every z3 term is made in this context (None: z3's main one)
    definitions: list[z3.BoolRef] = field(default_factory=list)  # constraints defining aux variables
    obligations: list[Obligation] = field(default_factory=list)
    _aux: dict[sp.Expr, z3.ArithRef] = field(default_factory=dict)
    _done: dict[sp.Expr, z3.ArithRef] = field(default_factory=dict)  # sympy shares subterms: translate each once

    def expr(self, e: sp.Expr) -> z3.ArithRef:
        done = self._done.get(e)
        if done is None:
            done = self._done[e] = self._expr(e)
        return done

    def _expr(self, e: sp.Expr) -> z3.ArithRef:
        if isinstance(e, sp.Symbol):
            if e not in self.variables:
                raise TranslationError(f"symbol '{e}' is not a declared quantity of this check")
            return self.variables[e]
        if e.is_Integer:
            return z3.RealVal(int(e), self.ctx)
        if e.is_Rational:
            return z3.Q(int(e.p), int(e.q), self.ctx)
        if isinstance(e, sp.Float):
            raise TranslationError(f"floating-point literal {e}: write numbers as exact rationals", never=True)
        if e.is_number and not e.is_real:
            raise TranslationError(f"complex number {e}", never=True)
        if isinstance(e, sp.Add):
            return z3.Sum([self.expr(a) for a in e.args])
        if isinstance(e, sp.Mul):
            num, den = sp.fraction(e, exact=True)
            if den != 1:
                return self._divide(num, den)
            return z3.Product([self.expr(a) for a in e.args])
        if isinstance(e, sp.Pow):
            return self._power(e)
        if isinstance(e, (sp.Max, sp.Min)):
            args = [self.expr(a) for a in e.args]
            out = args[0]
            for a in args[1:]:
                out = z3.If(a > out, a, out) if isinstance(e, sp.Max) else z3.If(a < out, a, out)
            return out
        if isinstance(e, sp.Abs):
            a = self.expr(e.args[0])
            return z3.If(a >= 0, a, -a)
        if isinstance(e, sp.Piecewise):
            return self._piecewise(e)
        if isinstance(e, (sp.exp, sp.log)) or e.func in (sp.exp, sp.log):
            raise TranslationError(f"non-polynomial function {e.func.__name__} in {sp.sstr(e)}")
        if isinstance(e, sp.Function):
            raise TranslationError(f"unsupported function {e.func} in {sp.sstr(e)}")
        if e.is_number:
            raise TranslationError(f"irrational or transcendental constant {e}")
        raise TranslationError(f"unsupported construct {type(e).__name__}: {sp.sstr(e)}")

    def _divide(self, num: sp.Expr, den: sp.Expr) -> z3.ArithRef:
        zden = self.expr(den)
        if not (den.is_Number and den != 0):
            self.obligations.append(Obligation(den, zden, "nonzero"))
        return self.expr(num) / zden

    def _power(self, e: sp.Pow) -> z3.ArithRef:
        base, exp = e.base, e.exp
        if not exp.is_Rational:
            raise TranslationError(f"non-polynomial power {sp.sstr(e)} (symbolic exponent)")
        p, q = int(exp.p), int(exp.q)
        if abs(p) > MAX_POWER or q > MAX_POWER:
            raise TranslationError(f"exponent {exp} too large in {sp.sstr(e)}")
        if q > 1 and max(abs(p), q) > MAX_ROOT_DEGREE:
            raise TranslationError(f"root degree budget: {sp.sstr(e)} would need a degree-{max(abs(p), q)} "
                                   f"polynomial in z3 (at most {MAX_ROOT_DEGREE})")
        if q == 1:
            if p == 0:
                return z3.RealVal(1, self.ctx)
            zb = self.expr(base)
            pos = _int_power(zb, abs(p))
            if p > 0:
                return pos
            if not base.is_Number:
                self.obligations.append(Obligation(base, zb, "nonzero"))
            return 1 / pos
        # rational power: a fresh r >= 0 with r**q == base**|p|  (principal root of a non-negative base)
        key = sp.Pow(base, sp.Rational(abs(p), q), evaluate=False)
        if key not in self._aux:
            zb = self.expr(base)
            if not (base.is_Number and base >= 0):
                self.obligations.append(Obligation(base, zb, "nonnegative"))
            r = z3.Real(f"_root{len(self._aux)}", self.ctx)
            # Guarded, so that the definition never constrains the base: a negative radicand leaves
            # r free instead of making the hypotheses unsatisfiable (which would prove anything).
            self.definitions.append(z3.Implies(zb >= 0, z3.And(r >= 0, _int_power(r, q) == _int_power(zb, abs(p)))))
            self._aux[key] = r
        r = self._aux[key]
        if p < 0:
            self.obligations.append(Obligation(base, self.expr(base), "nonzero"))
            return 1 / r
        return r

    def _piecewise(self, e: sp.Piecewise) -> z3.ArithRef:
        *branches, (last_expr, last_cond) = e.args
        if last_cond is not sp.true:
            raise TranslationError(f"piecewise without an otherwise branch: {sp.sstr(e)}")
        out = self.expr(last_expr)
        for expr, cond in reversed(branches):
            out = z3.If(self.sympy_bool(cond), self.expr(expr), out)
        return out

    def sympy_bool(self, c: sp.Basic) -> z3.BoolRef:
        """Conditions inside Piecewise are sympy Booleans."""
        if c is sp.true:
            return z3.BoolVal(True, self.ctx)
        if c is sp.false:
            return z3.BoolVal(False, self.ctx)
        if isinstance(c, sp.core.relational.Relational):
            a, b = self.expr(c.lhs), self.expr(c.rhs)
            return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[c.rel_op]
        if isinstance(c, sp.And):
            return z3.And([self.sympy_bool(a) for a in c.args] or [z3.BoolVal(True, self.ctx)])
        if isinstance(c, sp.Or):
            return z3.Or([self.sympy_bool(a) for a in c.args] or [z3.BoolVal(False, self.ctx)])
        if isinstance(c, sp.Not):
            return z3.Not(self.sympy_bool(c.args[0]))
        if isinstance(c, sp.logic.boolalg.BooleanFunction):  # ITE, Xor, Implies, ...: as and/or/not
            plain = c.to_nnf()
            if not isinstance(plain, type(c)):
                return self.sympy_bool(plain)
        raise TranslationError(f"unsupported condition {c}")

    def formula(self, f: Formula) -> z3.BoolRef:
        if isinstance(f, Rel):
            size = monomials(f.lhs) + monomials(f.rhs)
            if size > MAX_MONOMIALS:
                raise TranslationError(f"polynomial budget: {f} would be about {size} monomials in z3 "
                                       f"(at most {MAX_MONOMIALS})")
            a, b = self.expr(f.lhs), self.expr(f.rhs)
            return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[f.op]
        if isinstance(f, And):
            return z3.And([self.formula(a) for a in f.args] or [z3.BoolVal(True, self.ctx)])
        if isinstance(f, Or):
            return z3.Or([self.formula(a) for a in f.args] or [z3.BoolVal(False, self.ctx)])
        if isinstance(f, Not):
            return z3.Not(self.formula(f.arg))
        if isinstance(f, Implies):
            return z3.Implies(self.formula(f.premise), self.formula(f.conclusion))
        if isinstance(f, Iff):
            return self.formula(f.left) == self.formula(f.right)
        raise TranslationError(f"unsupported formula {f!r}")


def monomials(e: sp.Expr) -> int:
    """An over-estimate of the monomials z3 holds for ``e``: sums, products and positive integer powers
    multiplied out; a division, a root, ``Max``/``Min``/``Abs``/``Piecewise`` is one term whose inside
    is a polynomial of its own (a denominator's counted ``DIVISION_WEIGHT`` times)."""
    own, inner = _monomials(e)
    return own + inner


def _monomials(e: sp.Expr) -> tuple[int, int]:
    """(monomials of ``e`` itself, monomials of the polynomials inside its atoms)."""
    cap = 10**9
    if isinstance(e, (sp.Add, sp.Mul)):
        parts = [_monomials(a) for a in e.args]
        own = 0 if isinstance(e, sp.Add) else 1
        for n, _ in parts:
            own = min(cap, own + n if isinstance(e, sp.Add) else own * n)
        return own, min(cap, sum(i for _, i in parts))
    if isinstance(e, sp.Pow) and e.exp.is_Rational:
        (k, inner), p, q = _monomials(e.base), abs(int(e.exp.p)), int(e.exp.q)
        if p > MAX_POWER:
            return cap, cap
        power = min(cap, math.comb(p + k - 1, k - 1)) if k > 1 and k < cap else (k if p else 1)
        if q == 1 and e.exp > 0:
            return power, inner
        weight = DIVISION_WEIGHT if e.exp < 0 else 1
        return 1, min(cap, inner + weight * power)
    inner = sum(monomials(a) for a in e.args if isinstance(a, sp.Expr))
    return 1, min(cap, inner if e.args else 0)


def _int_power(base: z3.ArithRef, n: int) -> z3.ArithRef:
    if n == 0:
        return z3.RealVal(1, base.ctx)
    out = base
    for _ in range(n - 1):
        out = out * base
    return out


def make_variables(symbols: set[sp.Symbol], integer: set[sp.Symbol] | None = None,
                   ctx: z3.Context | None = None) -> dict[sp.Symbol, z3.ArithRef]:
    """One z3 Real per symbol (integrality is a separate constraint, see ``integrality``)."""
    return {s: z3.Real(str(s), ctx) for s in sorted(symbols, key=str)}


def z3_value_to_rational(value: z3.ExprRef, digits: int = 40) -> tuple[sp.Rational, bool]:
    """An exact rational for a model value; ``(value, exact)`` where ``exact`` is False when the
    model held an algebraic number that had to be approximated."""
    if z3.is_rational_value(value):
        return sp.Rational(value.numerator_as_long(), value.denominator_as_long()), True
    if z3.is_algebraic_value(value):
        approx = value.approx(digits)
        return sp.Rational(approx.numerator_as_long(), approx.denominator_as_long()), False
    if z3.is_int_value(value):
        return sp.Rational(value.as_long()), True
    raise TranslationError(f"cannot read model value {value}")
