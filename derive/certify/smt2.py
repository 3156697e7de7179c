"""SMT-LIB2 text of a kernel problem's query, printed here from its formulas (no solver's printer).

The text keeps the kernel's meaning exactly: numbers are exact rationals (``(/ 3.0 7.0)``), integer
quantities are ``Int`` (read as ``(to_real x)`` among reals), ``Max``/``Min``/``Abs``/``Piecewise`` are
``ite``, ``floor``/``ceiling`` are ``to_int`` (a mixed Int/Real logic), and a rational power ``x**(p/q)``
is a fresh ``r >= 0`` with ``r**q == x**|p|`` wherever
``x >= 0`` (as ``derive.kernel.translate`` reads it).  Division is SMT-LIB2's total ``/`` (an arbitrary
value at 0, as in z3), so a query states the side conditions its meaning needs.  A problem whose
quantities are all integers and whose relations are all linear prints as ``QF_LIA`` over ``Int`` with
integer coefficients.  ``exp``, ``log`` and other functions have no SMT-LIB2 arithmetic form:
``CertificateError``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import sympy as sp

from derive.errors import CertificateError
from derive.kernel.logic import And, Formula, Iff, Implies, IsInteger, Not, Or, Rel, name_of
from derive.kernel.translate import linear_integer, linear_relation

_SIMPLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
_OPS = {"==": "=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def symbol(name: str) -> str:
    """An SMT-LIB2 symbol for a quantity's name (quoted with ``|...|`` unless simple)."""
    if _SIMPLE.match(name):
        return name
    if "|" in name or "\\" in name:
        raise CertificateError(f"quantity name {name!r} cannot be written as an SMT-LIB2 symbol")
    return f"|{name}|"


def real(q: sp.Rational) -> str:
    """An exact rational as an SMT-LIB2 Real term."""
    q = sp.Rational(q)
    sign, q = ("-", -q) if q < 0 else ("", q)
    text = f"{int(q.p)}.0" if q.q == 1 else f"(/ {int(q.p)}.0 {int(q.q)}.0)"
    return f"(- {text})" if sign else text


def integer(n: int) -> str:
    return f"(- {-n})" if n < 0 else str(n)


class Printer:
    """Prints formulas over ``symbols``; remembers the root variables it introduced (their
    declarations and definitions go before the assertions) and whether anything was nonlinear."""

    def __init__(self, symbols: Iterable[sp.Symbol], integer_symbols: Iterable[sp.Symbol]) -> None:
        self.symbols = sorted(symbols, key=name_of)
        self.integer = frozenset(integer_symbols)
        self.nonlinear = False
        self.integrality = False  # an ``is_int`` was printed: the logic mixes Int and Real
        self.roots: dict[sp.Expr, str] = {}
        self.definitions: list[str] = []

    # terms -----------------------------------------------------------------------------------------

    def term(self, e: sp.Expr) -> str:
        if isinstance(e, sp.Symbol):
            if e not in self.symbols:
                raise CertificateError(f"symbol '{e}' is not a quantity of this query")
            name = symbol(name_of(e))
            return f"(to_real {name})" if e in self.integer else name
        if e.is_Rational:
            return real(e)
        if isinstance(e, sp.Add):
            return f"(+ {' '.join(self.term(a) for a in e.args)})"
        if isinstance(e, sp.Mul):
            num, den = sp.fraction(e, exact=True)
            if den != 1:
                if not den.is_number:
                    self.nonlinear = True
                return f"(/ {self.term(num)} {self.term(den)})"
            if sum(not a.is_number for a in e.args) > 1:
                self.nonlinear = True
            return f"(* {' '.join(self.term(a) for a in e.args)})"
        if isinstance(e, sp.Pow) and e.exp.is_Rational:
            return self._power(e)
        if isinstance(e, sp.Pow):
            return self._symbolic_power(e)
        if isinstance(e, (sp.Max, sp.Min)):
            args = [self.term(a) for a in e.args]
            cmp = ">" if isinstance(e, sp.Max) else "<"
            out = args[0]
            for a in args[1:]:
                out = f"(ite ({cmp} {a} {out}) {a} {out})"
            return out
        if isinstance(e, (sp.floor, sp.ceiling)):  # to_int is the floor (SMT-LIB2 Reals_Ints): a mixed logic
            self.integrality = True
            if isinstance(e, sp.floor):
                return f"(to_real (to_int {self.term(e.args[0])}))"
            return f"(- (to_real (to_int (- {self.term(e.args[0])}))))"
        if isinstance(e, sp.Abs):
            a = self.term(e.args[0])
            return f"(ite (>= {a} 0.0) {a} (- {a}))"
        if isinstance(e, sp.Piecewise):
            *branches, (last, cond) = e.args
            if cond is not sp.true:
                raise CertificateError(f"piecewise without an otherwise branch: {sp.sstr(e)}")
            out = self.term(last)
            for expr, c in reversed(branches):
                out = f"(ite {self.condition(c)} {self.term(expr)} {out})"
            return out
        raise CertificateError(f"{type(e).__name__} has no SMT-LIB2 arithmetic form: {sp.sstr(e)}")

    def _power(self, e: sp.Pow) -> str:
        p, q = int(e.exp.p), int(e.exp.q)
        # a root is a variable r with r**q = base**p, nonlinear even of a number (sqrt(2) * x is r * x)
        if q != 1 or not e.base.is_number:
            self.nonlinear = self.nonlinear or p not in (0, 1) or q != 1
        if q == 1:
            if p == 0:
                return "1.0"
            b = self.term(e.base)
            pos = b if abs(p) == 1 else f"(* {' '.join([b] * abs(p))})"
            return pos if p > 0 else f"(/ 1.0 {pos})"
        key = sp.Pow(e.base, sp.Rational(abs(p), q), evaluate=False)
        if key not in self.roots:
            r = self.roots[key] = f"|root#{len(self.roots)}|"
            b = self.term(e.base)
            rq = r if q == 1 else f"(* {' '.join([r] * q)})"
            bp = b if abs(p) == 1 else f"(* {' '.join([b] * abs(p))})"
            # guarded: a negative radicand leaves r free rather than constraining the base
            self.definitions.append(f"(=> (>= {b} 0.0) (and (>= {r} 0.0) (= {rq} {bp})))")
        r = self.roots[key]
        return f"(/ 1.0 {r})" if p < 0 else r

    def _symbolic_power(self, e: sp.Pow) -> str:
        """``x**y`` with a symbolic exponent: a fresh variable with the facts every real power of a positive base
        meets (the kernel's translation, ``derive.kernel.translate``), stated where ``x > 0``."""
        self.nonlinear = True
        if e not in self.roots:
            r = self.roots[e] = f"|power#{sum(k.exp.is_Rational is False for k in self.roots)}|"
            x, y = self.term(e.base), self.term(e.exp)
            below = f"(or (and (< {x} 1.0) (> {y} 0.0)) (and (> {x} 1.0) (< {y} 0.0)))"
            above = f"(or (and (> {x} 1.0) (> {y} 0.0)) (and (< {x} 1.0) (< {y} 0.0)))"
            self.definitions.append(f"(=> (> {x} 0.0) (and (> {r} 0.0) (=> (or (= {y} 0.0) (= {x} 1.0)) (= {r} 1.0)) "
                                    f"(=> {below} (< {r} 1.0)) (=> {above} (> {r} 1.0))))")
        return self.roots[e]

    def condition(self, c: sp.Basic) -> str:
        """A sympy Boolean (a Piecewise condition)."""
        if c is sp.true:
            return "true"
        if c is sp.false:
            return "false"
        if isinstance(c, sp.core.relational.Relational):
            return self.formula(Rel(c.lhs, c.rel_op, c.rhs))
        if isinstance(c, sp.And):
            return f"(and {' '.join(self.condition(a) for a in c.args)})"
        if isinstance(c, sp.Or):
            return f"(or {' '.join(self.condition(a) for a in c.args)})"
        if isinstance(c, sp.Not):
            return f"(not {self.condition(c.args[0])})"
        if isinstance(c, sp.logic.boolalg.BooleanFunction):
            plain = c.to_nnf()
            if not isinstance(plain, type(c)):
                return self.condition(plain)
        raise CertificateError(f"unsupported condition {c}")

    # formulas ------------------------------------------------------------------------------------------

    def formula(self, f: Formula) -> str:
        if isinstance(f, Rel):
            a, b = self.term(f.lhs), self.term(f.rhs)
            if f.op == "!=":
                return f"(not (= {a} {b}))"
            return f"({_OPS[f.op]} {a} {b})"
        if isinstance(f, And):
            return f"(and {' '.join(self.formula(a) for a in f.args)})" if f.args else "true"
        if isinstance(f, Or):
            return f"(or {' '.join(self.formula(a) for a in f.args)})" if f.args else "false"
        if isinstance(f, Not):
            return f"(not {self.formula(f.arg)})"
        if isinstance(f, Implies):
            return f"(=> {self.formula(f.premise)} {self.formula(f.conclusion)})"
        if isinstance(f, Iff):
            return f"(= {self.formula(f.left)} {self.formula(f.right)})"
        if isinstance(f, IsInteger):  # a derived quantity's declared integrality (SMT-LIB2 Reals_Ints)
            self.integrality = True
            return f"(is_int {self.term(f.expr)})"
        raise CertificateError(f"unsupported formula {f!r}")


class LinearIntegerPrinter(Printer):
    """A linear integer problem: each relation as ``sum(c_i * x_i) + c_0 op 0`` over ``Int`` with integer
    coefficients (the rational ones scaled by the positive lcm of their denominators)."""

    def formula(self, f: Formula) -> str:
        if not isinstance(f, Rel):
            return super().formula(f)
        linear = linear_relation(f, set(self.symbols))
        if linear is None:
            raise CertificateError(f"not a linear integer relation: {f}")
        coeffs, const = linear
        terms = [f"(* {integer(c)} {symbol(name_of(s))})" for s, c in sorted(coeffs.items(),
                                                                             key=lambda kv: name_of(kv[0]))]
        items = [*terms, integer(const)]
        lhs = f"(+ {' '.join(items)})" if len(items) > 1 else items[0]  # SMT-LIB2's + takes two or more
        if f.op == "!=":
            return f"(not (= {lhs} 0))"
        return f"({_OPS[f.op]} {lhs} 0)"


def query(symbols: Iterable[sp.Symbol], integer_symbols: Iterable[sp.Symbol], assertions: list[Formula],
          comments: Iterable[str] = ()) -> str:
    """The SMT-LIB2 script asserting ``assertions`` (a conjunction whose ``unsat`` is the certificate),
    with ``comments`` on top and ``(check-sat)`` at the end."""
    symbols = sorted(set(symbols), key=name_of)
    ints = frozenset(integer_symbols) & set(symbols)
    lia = bool(symbols) and ints == set(symbols) and linear_integer(assertions, ints)
    printer = (LinearIntegerPrinter if lia else Printer)(symbols, ints)
    body = [f"(assert {printer.formula(f)})" for f in assertions]
    if lia:
        logic = "QF_LIA"
    else:
        logic = "QF_" + ("N" if printer.nonlinear else "L") + ("IRA" if ints or printer.integrality else "RA")
    lines = [f"; {line}" for c in comments for line in c.splitlines()]
    lines.append(f"(set-logic {logic})")
    for s in symbols:
        lines.append(f"(declare-fun {symbol(name_of(s))} () {'Int' if s in ints else 'Real'})")
    for r in printer.roots.values():
        lines.append(f"(declare-fun {r} () Real)")
    lines += [f"(assert {d})" for d in printer.definitions]
    lines += body
    lines += ["(check-sat)", "; expected: unsat", "(exit)"]
    return "\n".join(lines) + "\n"
