"""Translation of sympy expressions and our formulas into z3, exactly.

Numbers become z3 rationals (never floats).  ``Max``/``Min``/``Abs``/``Piecewise`` become ``If``.
Integer powers are products; a negative power is a division.  A rational power ``x**(p/q)`` becomes a
fresh variable ``r >= 0`` with ``r**q == x**p``, defined only where ``x >= 0``; a power with a symbolic exponent
``x**y`` a fresh variable with the facts every real power of a positive base meets (positive, and on the side of
1 that the signs of ``y`` and ``x - 1`` say), stated only where ``x > 0``.  z3 reads ``x/0`` as an
arbitrary value, so the kernel discharges every denominator and radicand itself
(``trusted.formula_side_conditions``) before it trusts a verdict; the translation need only be
faithful where they hold.

A linear integer problem (every quantity an integer, every relation linear with rational coefficients:
ceilings and floors written as two inequalities, counts of chips, experts, pages) is translated instead
over z3 ``Int`` variables with integer coefficients (``linear_integer``, ``LinearIntegerTranslator``), for
z3's linear integer procedure.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import sympy as sp
import z3
from z3 import z3core as C

from derive.errors import TranslationError
from derive.kernel.logic import And, Formula, Iff, Implies, Not, Or, Rel, children, name_of, rational_bits

MAX_POWER = 64
# A root x**(p/q) becomes r with r**q == x**p: past this degree z3's nonlinear arithmetic can run for
# minutes inside one step that its resource limit does not interrupt (a Chinchilla-style N**(-17/50)
# took 130 s), so such powers go to the interval engine instead (a translation budget).
MAX_ROOT_DEGREE = 6
# Several roots of one quantity meet in z3's algebraic numbers: x > 1 with x**(5/3), x**(4/3), sqrt(x) and
# x**(3/2) took 10 s to reach an rlimit of 1e6 (25 s to refute at the default); three roots took under a
# second in every case tried.  A problem with more root variables than this is not translated (a budget;
# the interval engine and the search take it)
MAX_ROOTS = 3
# z3 multiplies polynomials out: (a+b+c+d+e)**30 is 46,376 monomials, which z3 works on for minutes
# (and its solver can crash the process beyond that); a division by (a+b+c+d+e)**10 takes it past a
# minute.  A relation whose polynomials would exceed this many monomials (a denominator's counting
# DIVISION_WEIGHT times) is not translated (a translation budget; see ``monomials``).
MAX_MONOMIALS = 5000
DIVISION_WEIGHT = 5
# z3 reads numerals as decimal text, and Python writes an integer of more than 4300 digits as text only past
# a process-wide limit: a numeral beyond this many bits is not translated (a translation budget; the
# interval engine and exact evaluation still read it)
MAX_NUMERAL_BITS = 12_000
# A power with a symbolic exponent is a fresh variable with the facts every such power meets (its sign, and
# which side of 1 it lies on); past this many in one problem the interval engine takes it (a budget)
MAX_SYMBOLIC_POWERS = 4


class Translator:
    """Translates over a fixed set of symbols (``variables``) into one z3 context; collects the
    definitions of the auxiliary variables of roots.

    Terms are built with z3's C API (``z3core``) rather than its Python operators, whose coercions,
    sort checks and wrapper objects cost several times what z3 spends building the terms (about a
    tenth of a cold check of the lecture).  The terms are the ones the operators build (n-ary sums and
    products, numerals, left-nested integer powers), so z3 sees the same problem.  Every term made
    here is held (reference-counted) until the translator is dropped."""

    def __init__(self, variables: Mapping[sp.Symbol, z3.ArithRef], ctx: z3.Context | None = None) -> None:
        self.variables = variables
        self.ctx = ctx
        self.definitions: list[z3.BoolRef] = []  # constraints defining aux variables
        self._ctx = ctx if ctx is not None else z3.main_ctx()
        self._c = self._ctx.ref()
        self._real = z3.RealSort(self._ctx)  # held: its AST must outlive the numerals made with it
        self._held: list = []
        self._aux: dict[sp.Expr, object] = {}
        self._powers: dict[sp.Expr, object] = {}  # powers with a symbolic exponent (``_symbolic_power``)
        self._done: dict[sp.Expr, object] = {}  # sympy shares subterms: translate each once
        self._numerals: dict[str, object] = {}

    def __del__(self) -> None:
        c = getattr(self, "_c", None)
        if c is not None and self._ctx.ref() is not None:  # the context still exists
            for a in self._held:
                C.Z3_dec_ref(c, a)

    # raw terms ------------------------------------------------------------------------------------

    def _keep(self, a):
        C.Z3_inc_ref(self._c, a)
        self._held.append(a)
        return a

    def _numeral(self, text: str):
        a = self._numerals.get(text)
        if a is None:
            a = self._numerals[text] = self._keep(C.Z3_mk_numeral(self._c, text, self._real.ast))
        return a

    def _nary(self, make, args: list):
        return self._keep(make(self._c, len(args), (C.Ast * len(args))(*args)))

    def _binary(self, make, a, b):
        return self._keep(make(self._c, a, b))

    # public: wrapped z3 terms -----------------------------------------------------------------------

    def expr(self, e: sp.Expr) -> z3.ArithRef:
        return z3.ArithRef(self._term(e), self._ctx)

    def formula(self, f: Formula) -> z3.BoolRef:
        return z3.BoolRef(self._formula(f), self._ctx)

    # translation -------------------------------------------------------------------------------------

    def _term(self, e: sp.Expr):
        done = self._done.get(e)
        if done is None:
            done = self._done[e] = self._expr(e)
        return done

    def _expr(self, e: sp.Expr):
        if isinstance(e, sp.Symbol):
            if e not in self.variables:
                raise TranslationError(f"symbol '{e}' is not a declared quantity of this check")
            return self.variables[e].as_ast()
        if e.is_Rational:
            if rational_bits(e) > MAX_NUMERAL_BITS:
                raise TranslationError(f"numeral budget: a number of more than {MAX_NUMERAL_BITS} bits is not "
                                       "given to z3")
            return self._numeral(str(int(e)) if e.is_Integer else f"{int(e.p)}/{int(e.q)}")
        if isinstance(e, sp.Float):
            raise TranslationError(f"floating-point literal {e}: write numbers as exact rationals", never=True)
        if e.is_number and not e.is_real:
            raise TranslationError(f"complex number {e}", never=True)
        if isinstance(e, sp.Add):
            return self._nary(C.Z3_mk_add, [self._term(a) for a in e.args])
        if isinstance(e, sp.Mul):
            num, den = _fraction(e)
            if den != 1:
                zden = self._term(den)
                return self._binary(C.Z3_mk_div, self._term(num), zden)
            return self._nary(C.Z3_mk_mul, [self._term(a) for a in e.args])
        if isinstance(e, sp.Pow):
            return self._power(e)
        if isinstance(e, (sp.Max, sp.Min)):
            args = [self._term(a) for a in e.args]
            cmp = C.Z3_mk_gt if isinstance(e, sp.Max) else C.Z3_mk_lt
            out = args[0]
            for a in args[1:]:
                out = self._keep(C.Z3_mk_ite(self._c, self._binary(cmp, a, out), a, out))
            return out
        if isinstance(e, (sp.floor, sp.ceiling)):
            # floor(x) is z3's to_int (the largest integer <= x), read back as a real; ceiling(x) = -floor(-x)
            inner = self._term(e.args[0] if isinstance(e, sp.floor) else -e.args[0])
            down = self._keep(C.Z3_mk_int2real(self._c, self._keep(C.Z3_mk_real2int(self._c, inner))))
            return down if isinstance(e, sp.floor) else self._keep(C.Z3_mk_unary_minus(self._c, down))
        if isinstance(e, sp.Abs):
            a = self._term(e.args[0])
            neg = self._keep(C.Z3_mk_unary_minus(self._c, a))
            return self._keep(C.Z3_mk_ite(self._c, self._binary(C.Z3_mk_ge, a, self._numeral("0")), a, neg))
        if isinstance(e, sp.Piecewise):
            return self._piecewise(e)
        if isinstance(e, (sp.exp, sp.log)) or e.func in (sp.exp, sp.log):
            raise TranslationError(f"non-polynomial function {e.func.__name__} in {sp.sstr(e)}")
        if isinstance(e, sp.Function):
            raise TranslationError(f"unsupported function {e.func} in {sp.sstr(e)}")
        if e.is_number:
            raise TranslationError(f"irrational or transcendental constant {e}")
        raise TranslationError(f"unsupported construct {type(e).__name__}: {sp.sstr(e)}")

    def _int_power(self, base, n: int):
        if n == 0:
            return self._numeral("1")
        out = base
        for _ in range(n - 1):
            out = self._nary(C.Z3_mk_mul, [out, base])
        return out

    def _power(self, e: sp.Pow):
        base, exp = e.base, e.exp
        if not exp.is_Rational:
            return self._symbolic_power(e)
        p, q = int(exp.p), int(exp.q)
        if abs(p) > MAX_POWER or q > MAX_POWER:
            raise TranslationError(f"exponent {exp} too large in {sp.sstr(e)}")
        if q > 1 and max(abs(p), q) > MAX_ROOT_DEGREE:
            raise TranslationError(f"root degree budget: {sp.sstr(e)} would need a degree-{max(abs(p), q)} "
                                   f"polynomial in z3 (at most {MAX_ROOT_DEGREE})")
        if q == 1:
            if p == 0:
                return self._numeral("1")
            pos = self._int_power(self._term(base), abs(p))
            return pos if p > 0 else self._binary(C.Z3_mk_div, self._numeral("1"), pos)
        # rational power: a fresh r >= 0 with r**q == base**|p|  (principal root of a non-negative base)
        key = sp.Pow(base, sp.Rational(abs(p), q), evaluate=False)
        if key not in self._aux and len(self._aux) >= MAX_ROOTS:
            raise TranslationError(f"root budget: {sp.sstr(e)} would be z3's root variable number {MAX_ROOTS + 1} "
                                   f"(at most {MAX_ROOTS})")
        if key not in self._aux:
            zb = self._term(base)
            r = z3.Real(f"_root{len(self._aux)}", self._ctx)
            ra = self._keep(r.as_ast())
            # Guarded, so that the definition never constrains the base: a negative radicand leaves
            # r free instead of making the hypotheses unsatisfiable (which would prove anything).
            defined = self._nary(C.Z3_mk_and, [
                self._binary(C.Z3_mk_ge, ra, self._numeral("0")),
                self._binary(C.Z3_mk_eq, self._int_power(ra, q), self._int_power(zb, abs(p)))])
            guard = self._binary(C.Z3_mk_ge, zb, self._numeral("0"))
            self.definitions.append(z3.BoolRef(self._binary(C.Z3_mk_implies, guard, defined), self._ctx))
            self._aux[key] = ra
        r = self._aux[key]
        return self._binary(C.Z3_mk_div, self._numeral("1"), r) if p < 0 else r

    def _symbolic_power(self, e: sp.Pow):
        """``x**y`` with an exponent that is no rational literal: a fresh ``p`` with what holds of every real
        power of a positive base (``p > 0``; ``p = 1`` where ``y = 0`` or ``x = 1``; ``p < 1`` where ``y log x <
        0``; ``p > 1`` where ``y log x > 0``), guarded by ``x > 0`` (the meaning gives such a power a value only
        there: ``trusted.meaning``).  Every model of the original extends to one of these facts, so their
        ``unsat`` is the original's; a model's ``p`` may be no power, which the kernel's exact re-check of every
        counterexample catches."""
        if e in self._powers:
            return self._powers[e]
        if len(self._powers) >= MAX_SYMBOLIC_POWERS:
            raise TranslationError(f"power budget: {sp.sstr(e)} would be z3's power variable number "
                                   f"{MAX_SYMBOLIC_POWERS + 1} (at most {MAX_SYMBOLIC_POWERS})")
        x, y = self._term(e.base), self._term(e.exp)
        p = self._keep(z3.Real(f"_power{len(self._powers)}", self._ctx).as_ast())
        zero, one = self._numeral("0"), self._numeral("1")

        def both(a, b):
            return self._nary(C.Z3_mk_and, [a, b])

        def either(a, b):
            return self._nary(C.Z3_mk_or, [a, b])

        def imp(a, b):
            return self._binary(C.Z3_mk_implies, a, b)

        lt, gt, eq = C.Z3_mk_lt, C.Z3_mk_gt, C.Z3_mk_eq
        below = either(both(self._binary(lt, x, one), self._binary(gt, y, zero)),
                       both(self._binary(gt, x, one), self._binary(lt, y, zero)))
        above = either(both(self._binary(gt, x, one), self._binary(gt, y, zero)),
                       both(self._binary(lt, x, one), self._binary(lt, y, zero)))
        facts = self._nary(C.Z3_mk_and, [
            self._binary(gt, p, zero),
            imp(either(self._binary(eq, y, zero), self._binary(eq, x, one)), self._binary(eq, p, one)),
            imp(below, self._binary(lt, p, one)),
            imp(above, self._binary(gt, p, one))])
        self.definitions.append(z3.BoolRef(imp(self._binary(gt, x, zero), facts), self._ctx))
        self._powers[e] = p
        return p

    def _piecewise(self, e: sp.Piecewise):
        *branches, (last_expr, last_cond) = e.args
        if last_cond is not sp.true:
            raise TranslationError(f"piecewise without an otherwise branch: {sp.sstr(e)}")
        out = self._term(last_expr)
        for expr, cond in reversed(branches):
            out = self._keep(C.Z3_mk_ite(self._c, self._condition(cond), self._term(expr), out))
        return out

    def _relation(self, op: str, a, b):
        if op == "!=":
            return self._nary(C.Z3_mk_distinct, [a, b])
        return self._binary(_RELATIONS[op], a, b)

    def _constant(self, value: bool):
        return self._keep((C.Z3_mk_true if value else C.Z3_mk_false)(self._c))

    def sympy_bool(self, c: sp.Basic) -> z3.BoolRef:
        """Conditions inside Piecewise are sympy Booleans."""
        return z3.BoolRef(self._condition(c), self._ctx)

    def _condition(self, c: sp.Basic):
        if c is sp.true:
            return self._constant(True)
        if c is sp.false:
            return self._constant(False)
        if isinstance(c, sp.core.relational.Relational):
            return self._relation(c.rel_op, self._term(c.lhs), self._term(c.rhs))
        if isinstance(c, sp.And):
            return self._nary(C.Z3_mk_and, [self._condition(a) for a in c.args] or [self._constant(True)])
        if isinstance(c, sp.Or):
            return self._nary(C.Z3_mk_or, [self._condition(a) for a in c.args] or [self._constant(False)])
        if isinstance(c, sp.Not):
            return self._keep(C.Z3_mk_not(self._c, self._condition(c.args[0])))
        if isinstance(c, sp.logic.boolalg.BooleanFunction):  # ITE, Xor, Implies, ...: as and/or/not
            plain = c.to_nnf()
            if not isinstance(plain, type(c)):
                return self._condition(plain)
        raise TranslationError(f"unsupported condition {c}")

    def _formula(self, f: Formula):
        if isinstance(f, Rel):
            size = monomials(f.lhs) + monomials(f.rhs)
            if size > MAX_MONOMIALS:
                raise TranslationError(f"polynomial budget: {f} would be about {size} monomials in z3 "
                                       f"(at most {MAX_MONOMIALS})")
            return self._relation(f.op, self._term(f.lhs), self._term(f.rhs))
        if isinstance(f, And):
            return self._nary(C.Z3_mk_and, [self._formula(a) for a in f.args] or [self._constant(True)])
        if isinstance(f, Or):
            return self._nary(C.Z3_mk_or, [self._formula(a) for a in f.args] or [self._constant(False)])
        if isinstance(f, Not):
            return self._keep(C.Z3_mk_not(self._c, self._formula(f.arg)))
        if isinstance(f, Implies):
            return self._binary(C.Z3_mk_implies, self._formula(f.premise), self._formula(f.conclusion))
        if isinstance(f, Iff):
            return self._binary(C.Z3_mk_eq, self._formula(f.left), self._formula(f.right))
        raise TranslationError(f"unsupported formula {f!r}")


@functools.lru_cache(maxsize=1 << 14)  # a pure function of ``e``; every new context translates the same products
def _fraction(e: sp.Mul) -> tuple[sp.Expr, sp.Expr]:
    return sp.fraction(e, exact=True)


_RELATIONS = {"==": C.Z3_mk_eq, "<": C.Z3_mk_lt, "<=": C.Z3_mk_le, ">": C.Z3_mk_gt, ">=": C.Z3_mk_ge}


@functools.lru_cache(maxsize=1 << 14)  # a pure function of ``e``; hypotheses recur across problems
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


def make_variables(symbols: set[sp.Symbol], integer: set[sp.Symbol] | None = None,
                   ctx: z3.Context | None = None) -> dict[sp.Symbol, z3.ArithRef]:
    """One z3 Real per symbol (integrality is a separate constraint, see ``integrality``)."""
    return {s: z3.Real(name_of(s), ctx) for s in sorted(symbols, key=name_of)}


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


# linear integer problems --------------------------------------------------------------------------

def _linear_parts(e: sp.Expr, symbols: set[sp.Symbol]) -> dict[sp.Symbol | None, sp.Rational] | None:
    """``e`` as rational coefficients of ``symbols`` and a constant (key None), or None when it is not
    linear (a product of quantities, a division by one, a power, a function)."""
    if e.is_Rational:
        return {None: sp.Rational(e)}
    if isinstance(e, sp.Symbol):
        return {e: sp.Integer(1)} if e in symbols else None
    if isinstance(e, sp.Add):
        out: dict[sp.Symbol | None, sp.Rational] = {}
        for a in e.args:
            part = _linear_parts(a, symbols)
            if part is None:
                return None
            for k, v in part.items():
                out[k] = out.get(k, sp.Integer(0)) + v
        return out
    if isinstance(e, sp.Mul):
        coeff, rest = sp.Integer(1), []
        for a in e.args:
            if a.is_Rational:
                coeff *= a
            else:
                rest.append(a)
        if len(rest) != 1:
            return None if rest else {None: coeff}
        part = _linear_parts(rest[0], symbols)
        return None if part is None else {k: coeff * v for k, v in part.items()}
    return None


def linear_relation(f: Rel, symbols: set[sp.Symbol]) -> tuple[dict[sp.Symbol, int], int] | None:
    """``lhs - rhs`` of a linear relation as integer coefficients and an integer constant: the rational
    coefficients times the (positive) least common multiple of their denominators, which keeps ``op``."""
    lhs, rhs = _linear_parts(f.lhs, symbols), _linear_parts(f.rhs, symbols)
    if lhs is None or rhs is None:
        return None
    diff = dict(lhs)
    for k, v in rhs.items():
        diff[k] = diff.get(k, sp.Integer(0)) - v
    scale = math.lcm(*(int(v.q) for v in diff.values())) if diff else 1
    coeffs = {k: int(v * scale) for k, v in diff.items() if k is not None and v != 0}
    return coeffs, int(diff.get(None, 0) * scale)


def linear_integer(formulas: list[Formula], integer: set[sp.Symbol] | frozenset[sp.Symbol]) -> bool:
    """Whether every relation in ``formulas`` is linear with rational coefficients over quantities that
    are all integers: then the problem is linear integer arithmetic, which z3 decides with its QF_LIA
    procedure over Int variables (``LinearIntegerTranslator``) in a fraction of what its mixed
    real/integer core takes on the same question (a ceiling written as two inequalities ran to the
    resource limit there, and is unsat here in milliseconds)."""
    todo = list(formulas)
    while todo:
        f = todo.pop()
        if isinstance(f, Rel):
            if f.op not in _RELATIONS and f.op != "!=":
                return False
            if not f.free_symbols() <= set(integer) or linear_relation(f, set(integer)) is None:
                return False
        elif isinstance(f, (And, Or, Not, Implies, Iff)):
            todo.extend(children(f))
        else:
            return False
    return True


class LinearIntegerTranslator:
    """Translates linear formulas over integer quantities into z3 Int terms: each relation
    ``lhs op rhs`` becomes ``sum(c_i * x_i) + c_0 op 0`` with integer ``c_i`` (the rational coefficients
    scaled by the positive lcm of their denominators, so the relation means the same).  Only for
    formulas ``linear_integer`` accepts; anything else raises ``TranslationError``."""

    def __init__(self, variables: Mapping[sp.Symbol, z3.ArithRef], ctx: z3.Context | None = None) -> None:
        self.variables = variables
        self.ctx = ctx
        self.definitions: list[z3.BoolRef] = []  # no auxiliary variables: the same interface as Translator

    def formula(self, f: Formula) -> z3.BoolRef:
        if isinstance(f, Rel):
            linear = linear_relation(f, set(self.variables))
            if linear is None:
                raise TranslationError(f"not a linear integer relation: {f}")
            coeffs, const = linear
            terms = [z3.IntVal(c, self.ctx) * self.variables[s] for s, c in sorted(coeffs.items(),
                                                                                     key=lambda kv: name_of(kv[0]))]
            lhs = z3.Sum(*terms, z3.IntVal(const, self.ctx)) if terms else z3.IntVal(const, self.ctx)
            zero = z3.IntVal(0, self.ctx)
            return {"==": lhs == zero, "!=": lhs != zero, "<": lhs < zero, "<=": lhs <= zero,
                    ">": lhs > zero, ">=": lhs >= zero}[f.op]
        if isinstance(f, And):
            return z3.And([self.formula(a) for a in f.args], self.ctx) if f.args else z3.BoolVal(True, self.ctx)
        if isinstance(f, Or):
            return z3.Or([self.formula(a) for a in f.args], self.ctx) if f.args else z3.BoolVal(False, self.ctx)
        if isinstance(f, Not):
            return z3.Not(self.formula(f.arg), self.ctx)
        if isinstance(f, Implies):
            return z3.Implies(self.formula(f.premise), self.formula(f.conclusion), self.ctx)
        if isinstance(f, Iff):
            return self.formula(f.left) == self.formula(f.right)
        raise TranslationError(f"unsupported formula {f!r}")


def make_integer_variables(symbols: set[sp.Symbol], ctx: z3.Context | None = None) -> dict[sp.Symbol, z3.ArithRef]:
    """One z3 Int per symbol, for a linear integer problem (``LinearIntegerTranslator``)."""
    return {s: z3.Int(name_of(s), ctx) for s in sorted(symbols, key=name_of)}
