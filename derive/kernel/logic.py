"""Relations and their Boolean combinations, kept out of sympy's hands.

sympy evaluates ``x > 0`` to ``True`` on the spot when ``x`` is declared positive, and it folds
``And``/``Or`` eagerly.  A claim whose truth came from such a shortcut would never reach the prover.
So formulas are small frozen trees of our own: a relation stores its two sides and an operator and
is only ever decided by the prover (z3, interval) or by exact evaluation of numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from derive.errors import UndefinedValueError

OPS = ("==", "!=", "<", "<=", ">", ">=")
_NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
_LATEX_OPS = {"==": "=", "!=": r"\neq", "<": "<", "<=": r"\le", ">": ">", ">=": r"\ge"}


PRINT_BITS = 14_000  # largest number (numerator or denominator bits) derive reads: it prints numbers in decimal,
# and Python writes an integer of more than 4,300 digits as text only past a process-wide limit


def rational_bits(q: sp.Rational) -> int:
    """The larger bit length of a rational's numerator and denominator (its size, for the number budgets)."""
    return max(int(q.p).bit_length(), int(q.q).bit_length())


def name_of(s: sp.Basic) -> str:
    """``str(s)``, without sympy's printer for a plain symbol (its name): symbols are sorted and named by
    the thousand while a library is checked, and the printer takes microseconds for each."""
    return s.name if type(s) is sp.Symbol else str(s)


@lru_cache(maxsize=1 << 14)
def printed(e: sp.Basic) -> str:
    """``sp.sstr(e)``, kept: reasons and side conditions print the same relations again and again (a check
    printed 112 expressions 1,141 times), and sympy's printer walks the tree each time.  A pure function
    of the expression (equal expressions are the same tree, so they print the same)."""
    return sp.sstr(e)


@lru_cache(maxsize=1 << 15)
def symbols_in(e: sp.Basic, bound: bool = False) -> frozenset[sp.Symbol]:
    """``e.free_symbols`` (``bound``: all, as ``atoms`` finds them), kept, each distinct part read once: sympy walks
    the whole tree, where shared parts repeat (e*(e + 1) nested 24 deep: 2**24 nodes, 50 distinct parts)."""
    seen, todo, out = set(), [e], set()
    while todo:
        if (n := todo.pop()) not in seen:
            seen.add(n)
            binder = not bound and not isinstance(n, sp.Symbol) and getattr(n, "bound_symbols", None)  # Lambda
            out |= {n} if isinstance(n, sp.Symbol) else n.free_symbols if binder else set()
            todo.extend(() if isinstance(n, sp.Symbol) or binder else n.args)
    return frozenset(out)


def replace(expr: sp.Expr, mapping: Mapping[sp.Basic, sp.Expr], *, strict: bool = False) -> sp.Expr:
    """``expr.xreplace(mapping)``, except that a ``Max``/``Min`` whose new arguments are not all numbers
    is rebuilt unevaluated: sympy's evaluation of ``Max`` compares every pair of arguments symbolically
    (factoring their differences), which cost seconds over the lecture's step-time formulas and can
    only ever drop an argument, never change the value.  A ``Piecewise`` is read in order, as the kernel
    reads it: a condition after one that holds is never built (``1/t > 1`` after ``t <= 0`` at t = 0),
    nor the branch of a condition that is false.  Shared parts are rebuilt once.  Values may be Python
    numbers (as ``xreplace`` allows): they are sympified first.

    ``strict``: a part that the values leave without a real value (``log(0)``, ``1/0``, ``sqrt(-4)``, a
    condition that must be read and cannot be) raises ``UndefinedValueError`` naming it; otherwise
    such a part is left as sympy builds it (``zoo``, ``2*I``), which the kernel refuses to read."""
    if not mapping:
        return expr
    mapping = {k: v if isinstance(v, sp.Basic) else sp.sympify(v, strict=True) for k, v in mapping.items()}
    if isinstance(expr, sp.Basic) and all(type(k) is sp.Symbol for k in mapping):
        # values of symbols: the result depends on those the expression holds only, and the same values go
        # into the same hypotheses in problem after problem (a claim's derivation steps share them)
        present = symbols_in(expr, bound=True)  # bound ones too: xreplace replaces those
        held = tuple(sorted(((k, v) for k, v in mapping.items() if k in present), key=lambda kv: kv[0].name))
        out = _replaced_values(expr, held, strict)
        return expr if out is None else out
    return _replace(expr, mapping, strict)


@lru_cache(maxsize=1 << 14)
def _replaced_values(expr: sp.Basic, held: tuple, strict: bool) -> sp.Basic | None:
    """``_replace`` with the values ``held`` of the symbols ``expr`` holds, kept: the values of symbols it does
    not hold change nothing (a strict walk still reads every part, and an exception is never kept).  None where
    the expression is unchanged, so that the caller gets back the object it gave."""
    out = _replace(expr, dict(held), strict)
    return None if out is expr else out


ROUNDING_DIGITS = 100  # ceil/floor of an irrational number this large: sympy finds its integer part quickly


def beyond_rounding(x: sp.Basic) -> bool:
    """Whether ``x`` is a number, not a ratio of integers, past ``ROUNDING_DIGITS`` digits (judged at five digits:
    sympy's floats carry any exponent); unreadable counts as past.  The expression parser refuses such roundings."""
    try:
        return x.is_number and not x.is_Rational and bool(abs(x).evalf(5) > sp.Float(10) ** ROUNDING_DIGITS)
    except Exception:  # noqa: BLE001 - sympy may raise anything on a number it cannot evaluate
        return True


def _replace(expr: sp.Basic, mapping: Mapping[sp.Basic, sp.Basic], strict: bool) -> sp.Basic:
    """``replace`` itself, on a mapping whose values are sympy objects."""
    memo: dict[sp.Basic, sp.Basic] = {}

    def undefined(e: sp.Basic, what: str) -> UndefinedValueError:
        return UndefinedValueError(f"{sp.sstr(e)} has no real value at the values given ({what})")

    def piecewise(e: sp.Piecewise) -> sp.Basic:
        pairs = []
        dropped = False
        for branch, cond in e.args:
            try:
                c = go(cond)
            except TypeError as err:  # sympy refuses to compare a non-real number
                if strict:
                    raise undefined(cond, f"the condition cannot be read: {err}") from None
                return e.func(*[(go(b), go_loose(k)) for b, k in e.args], evaluate=False)
            if c is sp.false:
                dropped = True
                continue
            pairs.append((go(branch), c))
            if c is sp.true:
                break
        if not pairs:
            if strict:
                raise undefined(e, "no condition of the Piecewise holds")
            return e.func(*[(go(b), go_loose(k)) for b, k in e.args], evaluate=False)
        if not dropped and len(pairs) == len(e.args) and all(
                new is old for pair, old_pair in zip(pairs, e.args, strict=True)
                for new, old in zip(pair, old_pair.args, strict=True)):
            return e  # unchanged: the same object, as for any other node
        return e.func(*pairs)

    def go_loose(c: sp.Basic) -> sp.Basic:
        try:
            return go(c)
        except TypeError:
            return c.func(*[go(a) for a in c.args], evaluate=False)

    def go(e: sp.Basic) -> sp.Basic:
        hit = mapping.get(e)
        if hit is not None:
            return hit
        if not e.args:
            return e
        done = memo.get(e)
        if done is not None:
            return done
        if isinstance(e, sp.Piecewise):
            out = piecewise(e)
            memo[e] = out
            return out
        args = tuple(go(a) for a in e.args)
        if all(new is old for new, old in zip(args, e.args, strict=True)):
            out = e
        elif isinstance(e, (sp.Max, sp.Min)) and not all(a.is_number for a in args):
            out = e.func(*args, evaluate=False)
        elif isinstance(e, (sp.floor, sp.ceiling)) and beyond_rounding(args[0]):
            if strict:  # sympy would search millions of digits for the integer part of exp(10**7)
                raise UndefinedValueError(f"{sp.sstr(e)} is not rounded exactly at the values given (its argument "
                                          f"is past {ROUNDING_DIGITS} digits)")
            out = e.func(*args, evaluate=False)
        else:
            try:
                out = e.func(*args)
            except ZeroDivisionError:  # sympy's Mod(t, 0) raises where 1/0 is zoo: no real value either way
                if strict:
                    raise undefined(e, "a division by zero") from None
                out = e.func(*args, evaluate=False)
            if strict and isinstance(out, sp.Expr) and out.is_number and not out.is_Rational and (
                    out in (sp.zoo, sp.nan, sp.oo, -sp.oo) or out.is_extended_real is False):
                raise undefined(e, f"it would be {sp.sstr(out)}")
        memo[e] = out
        return out

    return go(expr)


class Formula:
    """Base of relation trees.  Subclasses are frozen dataclasses."""

    def free_symbols(self) -> set[sp.Symbol]:
        raise NotImplementedError

    def symbol_set(self) -> frozenset[sp.Symbol]:
        """``free_symbols()``, kept and not copied (formulas are immutable): for the kernel's own unions."""
        found = self.__dict__.get("_free")
        if found is None:
            found = frozenset(self.free_symbols())
            object.__setattr__(self, "_free", found)
        return found

    def map_exprs(self, fn: Callable[[sp.Expr], sp.Expr]) -> Formula:
        raise NotImplementedError

    def subs(self, mapping: Mapping[sp.Symbol, sp.Expr], *, strict: bool = False) -> Formula:
        """Values substituted (``replace``; ``strict``: a part left without a real value raises)."""
        mapping = dict(mapping)
        return self.map_exprs(lambda e: replace(e, mapping, strict=strict))

    def exprs(self) -> list[sp.Expr]:
        out: list[sp.Expr] = []
        self.map_exprs(lambda e: out.append(e) or e)
        return out

    def evaluate(self, values: Mapping[sp.Symbol, sp.Expr]) -> bool:
        """Exact truth value at a point; every free symbol must be given a number."""
        raise NotImplementedError

    def latex(self, printer: Callable[[sp.Expr], str], rel: RelPrinter | None = None) -> str:
        """LaTeX with ``printer`` for each side; ``rel``, when given, prints a whole relation its own way
        (documents give a plain number its unit) or returns None for the default."""
        raise NotImplementedError

    def __and__(self, other: Formula) -> Formula:
        return And((self, other))

    def __or__(self, other: Formula) -> Formula:
        return Or((self, other))

    def __invert__(self) -> Formula:
        return Not(self)


def _exact_sign(value: sp.Expr) -> int:
    """Sign of a closed-form number, decided exactly (sympy compares algebraic numbers safely)."""
    value = sp.nsimplify(value) if isinstance(value, sp.Float) else value
    if value.free_symbols:
        raise ValueError(f"not a number: {value}")
    if value.is_zero:
        return 0
    if value.is_positive:
        return 1
    if value.is_negative:
        return -1
    simplified = sp.simplify(value)
    if simplified.is_zero:
        return 0
    if simplified.is_positive:
        return 1
    if simplified.is_negative:
        return -1
    raise ValueError(f"cannot decide the sign of {value}")


@dataclass(frozen=True)
class Rel(Formula):
    lhs: sp.Expr
    op: str
    rhs: sp.Expr

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise ValueError(f"unknown relation operator {self.op!r}")
        # sympify returns a sympy object itself: asked only for the rest (a check builds 30,000 relations)
        if not isinstance(self.lhs, sp.Basic):
            object.__setattr__(self, "lhs", sp.sympify(self.lhs, strict=True))
        if not isinstance(self.rhs, sp.Basic):
            object.__setattr__(self, "rhs", sp.sympify(self.rhs, strict=True))

    def free_symbols(self) -> set[sp.Symbol]:
        found = self.__dict__.get("_free")
        if found is None:  # sympy walks the tree on each call; the checker asks often
            found = symbols_in(self.lhs) | symbols_in(self.rhs)
            object.__setattr__(self, "_free", found)
        return set(found)

    def map_exprs(self, fn: Callable[[sp.Expr], sp.Expr]) -> Formula:
        return Rel(fn(self.lhs), self.op, fn(self.rhs))

    def exprs(self) -> list[sp.Expr]:
        return [self.lhs, self.rhs]

    def negated(self) -> Rel:
        return Rel(self.lhs, _NEGATED[self.op], self.rhs)

    def evaluate(self, values: Mapping[sp.Symbol, sp.Expr]) -> bool:
        diff = (self.lhs - self.rhs).xreplace(dict(values))
        s = _exact_sign(diff)
        return {"==": s == 0, "!=": s != 0, "<": s < 0, "<=": s <= 0, ">": s > 0, ">=": s >= 0}[self.op]

    def latex(self, printer: Callable[[sp.Expr], str], rel: RelPrinter | None = None) -> str:
        own = rel(self) if rel is not None else None
        return own if own is not None else f"{printer(self.lhs)} {_LATEX_OPS[self.op]} {printer(self.rhs)}"

    def __str__(self) -> str:
        text = self.__dict__.get("_text")
        if text is None:  # sympy's printer is slow, and reasons and side conditions print the same relations
            text = f"{printed(self.lhs)} {self.op} {printed(self.rhs)}"
            object.__setattr__(self, "_text", text)
        return text


RelPrinter = Callable[[Rel], "str | None"]  # a relation in a caller's own form, or None for the default


@dataclass(frozen=True)
class And(Formula):
    args: tuple[Formula, ...]

    def free_symbols(self) -> set[sp.Symbol]:
        return set().union(*(a.symbol_set() for a in self.args))

    def map_exprs(self, fn: Callable[[sp.Expr], sp.Expr]) -> Formula:
        return And(tuple(a.map_exprs(fn) for a in self.args))

    def exprs(self) -> list[sp.Expr]:
        return [e for a in self.args for e in a.exprs()]

    def evaluate(self, values: Mapping[sp.Symbol, sp.Expr]) -> bool:
        return all(a.evaluate(values) for a in self.args)

    def latex(self, printer: Callable[[sp.Expr], str], rel: RelPrinter | None = None) -> str:
        return r" \;\wedge\; ".join(_paren(a, printer, rel) for a in self.args)

    def __str__(self) -> str:
        return " and ".join(f"({a})" for a in self.args)


@dataclass(frozen=True)
class Or(Formula):
    args: tuple[Formula, ...]

    def free_symbols(self) -> set[sp.Symbol]:
        return set().union(*(a.symbol_set() for a in self.args))

    def map_exprs(self, fn: Callable[[sp.Expr], sp.Expr]) -> Formula:
        return Or(tuple(a.map_exprs(fn) for a in self.args))

    def exprs(self) -> list[sp.Expr]:
        return [e for a in self.args for e in a.exprs()]

    def evaluate(self, values: Mapping[sp.Symbol, sp.Expr]) -> bool:
        return any(a.evaluate(values) for a in self.args)

    def latex(self, printer: Callable[[sp.Expr], str], rel: RelPrinter | None = None) -> str:
        return r" \;\vee\; ".join(_paren(a, printer, rel) for a in self.args)

    def __str__(self) -> str:
        return " or ".join(f"({a})" for a in self.args)


@dataclass(frozen=True)
class Not(Formula):
    arg: Formula

    def free_symbols(self) -> set[sp.Symbol]:
        return self.arg.free_symbols()

    def map_exprs(self, fn: Callable[[sp.Expr], sp.Expr]) -> Formula:
        return Not(self.arg.map_exprs(fn))

    def exprs(self) -> list[sp.Expr]:
        return self.arg.exprs()

    def evaluate(self, values: Mapping[sp.Symbol, sp.Expr]) -> bool:
        return not self.arg.evaluate(values)

    def latex(self, printer: Callable[[sp.Expr], str], rel: RelPrinter | None = None) -> str:
        return r"\neg " + _paren(self.arg, printer, rel)

    def __str__(self) -> str:
        return f"not ({self.arg})"


@dataclass(frozen=True)
class Implies(Formula):
    premise: Formula
    conclusion: Formula

    def free_symbols(self) -> set[sp.Symbol]:
        return set(self.premise.symbol_set() | self.conclusion.symbol_set())

    def map_exprs(self, fn: Callable[[sp.Expr], sp.Expr]) -> Formula:
        return Implies(self.premise.map_exprs(fn), self.conclusion.map_exprs(fn))

    def exprs(self) -> list[sp.Expr]:
        return self.premise.exprs() + self.conclusion.exprs()

    def evaluate(self, values: Mapping[sp.Symbol, sp.Expr]) -> bool:
        return (not self.premise.evaluate(values)) or self.conclusion.evaluate(values)

    def latex(self, printer: Callable[[sp.Expr], str], rel: RelPrinter | None = None) -> str:
        return _paren(self.premise, printer, rel) + r" \implies " + _paren(self.conclusion, printer, rel)

    def __str__(self) -> str:
        return f"({self.premise}) implies ({self.conclusion})"


@dataclass(frozen=True)
class Iff(Formula):
    left: Formula
    right: Formula

    def free_symbols(self) -> set[sp.Symbol]:
        return set(self.left.symbol_set() | self.right.symbol_set())

    def map_exprs(self, fn: Callable[[sp.Expr], sp.Expr]) -> Formula:
        return Iff(self.left.map_exprs(fn), self.right.map_exprs(fn))

    def exprs(self) -> list[sp.Expr]:
        return self.left.exprs() + self.right.exprs()

    def evaluate(self, values: Mapping[sp.Symbol, sp.Expr]) -> bool:
        return self.left.evaluate(values) == self.right.evaluate(values)

    def latex(self, printer: Callable[[sp.Expr], str], rel: RelPrinter | None = None) -> str:
        return _paren(self.left, printer, rel) + r" \iff " + _paren(self.right, printer, rel)

    def __str__(self) -> str:
        return f"({self.left}) iff ({self.right})"


@dataclass(frozen=True)
class IsInteger(Formula):
    """``expr`` is an integer: the declared integrality of a derived quantity, as a side condition of
    every expression that uses it (``derive.model.library.Library.definition_conditions``)."""

    expr: sp.Expr

    def __post_init__(self) -> None:
        object.__setattr__(self, "expr", sp.sympify(self.expr, strict=True))

    def free_symbols(self) -> set[sp.Symbol]:
        return set(self.expr.free_symbols)

    def map_exprs(self, fn: Callable[[sp.Expr], sp.Expr]) -> Formula:
        return IsInteger(fn(self.expr))

    def exprs(self) -> list[sp.Expr]:
        return [self.expr]

    def evaluate(self, values: Mapping[sp.Symbol, sp.Expr]) -> bool:
        value = self.expr.xreplace(dict(values))
        if value.free_symbols:
            raise ValueError(f"not a number: {value}")
        return value.is_integer is True

    def latex(self, printer: Callable[[sp.Expr], str], rel: RelPrinter | None = None) -> str:
        return printer(self.expr) + r" \in \mathbb{Z}"

    def __str__(self) -> str:
        return f"{printed(self.expr)} is an integer"


def _paren(f: Formula, printer: Callable[[sp.Expr], str], rel: RelPrinter | None = None) -> str:
    inner = f.latex(printer, rel)
    return inner if isinstance(f, Rel) else rf"\left({inner}\right)"


# structure alone (sound, purely syntactic) ----------------------------------------------------------

def structurally_signed(e: sp.Expr, want: str, pos: set[sp.Symbol], nonneg: set[sp.Symbol]) -> bool:
    """``e > 0`` (want="pos") or ``e >= 0`` ("nonneg") by structure alone."""
    if e.is_Rational:
        return e > 0 if want == "pos" else e >= 0
    if e in (sp.E, sp.pi):
        return True
    if isinstance(e, sp.Symbol):
        return e in pos or (want == "nonneg" and e in nonneg)
    if isinstance(e, sp.exp):
        return True
    if isinstance(e, sp.Add):  # positive: every term >= 0 and one of them > 0
        return all(structurally_signed(a, "nonneg", pos, nonneg) for a in e.args) and (
            want == "nonneg" or any(structurally_signed(a, "pos", pos, nonneg) for a in e.args))
    if isinstance(e, sp.Mul):
        return all(structurally_signed(a, want, pos, nonneg) for a in e.args)
    if isinstance(e, sp.Pow):
        if e.exp.is_Integer and int(e.exp) % 2 == 0 and want == "nonneg":
            return True
        return structurally_signed(e.base, want, pos, nonneg) and (want == "nonneg" or e.exp.is_Rational or
                                                        structurally_signed(e.base, "pos", pos, nonneg))
    if isinstance(e, sp.Abs):
        return want == "nonneg" or structurally_signed(e.args[0], "pos", pos, nonneg)
    if isinstance(e, sp.Max):
        return any(structurally_signed(a, want, pos, nonneg) for a in e.args)
    if isinstance(e, sp.Min):
        return all(structurally_signed(a, want, pos, nonneg) for a in e.args)
    return False


def structurally_integer(e: sp.Expr, integers: set[sp.Symbol]) -> bool:
    """``e`` is an integer by structure alone: sums, products and non-negative integer powers of integers
    and integer quantities (``integers``)."""
    if e.is_Integer:
        return True
    if isinstance(e, sp.Symbol):
        return e in integers
    if isinstance(e, (sp.Add, sp.Mul)):
        return all(structurally_integer(a, integers) for a in e.args)
    if isinstance(e, sp.Pow):
        return e.exp.is_Integer and e.exp >= 0 and structurally_integer(e.base, integers)
    return False


# Convenience constructors used by theorem modules -------------------------------------------------

def eq(lhs: sp.Expr, rhs: sp.Expr) -> Rel:
    return Rel(lhs, "==", rhs)


def ne(lhs: sp.Expr, rhs: sp.Expr) -> Rel:
    return Rel(lhs, "!=", rhs)


def le(lhs: sp.Expr, rhs: sp.Expr) -> Rel:
    return Rel(lhs, "<=", rhs)


def lt(lhs: sp.Expr, rhs: sp.Expr) -> Rel:
    return Rel(lhs, "<", rhs)


def ge(lhs: sp.Expr, rhs: sp.Expr) -> Rel:
    return Rel(lhs, ">=", rhs)


def gt(lhs: sp.Expr, rhs: sp.Expr) -> Rel:
    return Rel(lhs, ">", rhs)


def between(expr: sp.Expr, low: sp.Expr, high: sp.Expr) -> Formula:
    """``low <= expr <= high``."""
    return And((Rel(expr, ">=", low), Rel(expr, "<=", high)))


def within_factor(expr: sp.Expr, target: sp.Expr, factor: sp.Expr) -> Formula:
    """``expr`` between ``target/factor`` and ``target*factor`` (factor > 1), in that order for a
    positive target and the other way round for a negative one.  A numeric target's sign is known; a
    symbolic target written as a positive expression of quantities (``a*b/c``) is positive only where
    those quantities are >= 0, which their declared domains say, not their symbols: such a range is a
    ``Within``, which the library reads with the domains (``Library.formula_expand``: the either-order
    form wherever a quantity of the target may be negative).  Any other symbolic target or factor gets
    ``Min``/``Max`` of the two ends.  A numeric factor below 1 names the same range as its inverse
    ("within a factor 1/2" of 100 is 50 to 200; it was the empty range 200 to 50, so a true statement
    was refuted); a numeric factor <= 0 is an error."""
    target, factor = sp.sympify(target), sp.sympify(factor)
    if factor.is_number and factor.is_extended_real:
        if not factor.is_positive:
            raise ValueError(f"within_factor needs a factor > 0, got {factor}")
        if factor < 1:
            factor = 1 / factor
    low, high = target / factor, target * factor
    if target.is_number and factor.is_number:
        return between(expr, high, low) if target.is_negative else between(expr, low, high)
    either = between(expr, sp.Min(low, high, evaluate=False), sp.Max(low, high, evaluate=False))
    if factor.is_number and _written_positive(target):
        plain = between(expr, low, high)
        return Within(plain.args, either, tuple(sorted(target.free_symbols, key=name_of)))
    # a target written with a minus sign (``-a``, ``a - b``) or a symbolic factor may be negative (below 1)
    # where the claim is read: the range is between the two ends in either order (it was the empty range
    # there, so a true statement was refuted)
    return either


@dataclass(frozen=True, eq=False)
class Within(And):
    """``low <= expr <= high`` for a target written positive (``within_factor``): the plain range where
    every quantity in ``signed`` is >= 0, ``either`` (the two ends in either order) where one may be
    negative.  It is an ``And`` of the plain range for every reader; ``read_with`` picks the form a
    library's declared domains give it.  Equal to that ``And``."""

    either: Formula = None  # type: ignore[assignment]
    signed: tuple[sp.Symbol, ...] = ()  # in name order (a set's order would follow PYTHONHASHSEED)

    def read_with(self, may_be_negative: Callable[[sp.Symbol], bool]) -> Formula:
        """The plain range, or ``either`` when a quantity of the target may be negative."""
        if any(may_be_negative(s) for s in self.signed):
            return self.either
        return And(self.args)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, And) and self.args == other.args

    def __hash__(self) -> int:
        return hash((self.args,))


def read_signs(f: Formula, may_be_negative: Callable[[sp.Symbol], bool]) -> Formula:
    """``f`` with every ``Within`` read by the declared signs of its quantities (see ``Within``)."""
    if isinstance(f, Within):
        return f.read_with(may_be_negative)
    if isinstance(f, Rel) or not _has_within(f):
        return f
    if isinstance(f, (And, Or)):
        return type(f)(tuple(read_signs(a, may_be_negative) for a in f.args))
    if isinstance(f, Not):
        return Not(read_signs(f.arg, may_be_negative))
    if isinstance(f, Implies):
        return Implies(read_signs(f.premise, may_be_negative), read_signs(f.conclusion, may_be_negative))
    if isinstance(f, Iff):
        return Iff(read_signs(f.left, may_be_negative), read_signs(f.right, may_be_negative))
    return f


def _has_within(f: Formula) -> bool:
    if isinstance(f, Within):
        return True
    if isinstance(f, (And, Or)):
        return any(_has_within(a) for a in f.args)
    if isinstance(f, Not):
        return _has_within(f.arg)
    if isinstance(f, Implies):
        return _has_within(f.premise) or _has_within(f.conclusion)
    if isinstance(f, Iff):
        return _has_within(f.left) or _has_within(f.right)
    return False


def _written_positive(e: sp.Expr) -> bool:
    """Sums, products and rational powers of quantities, positive numbers, E and pi: positive wherever its
    quantities are (``Within`` reads their declared domains)."""
    if e.is_Rational:
        return bool(e > 0)
    if isinstance(e, sp.Symbol) or e in (sp.E, sp.pi):
        return True
    if isinstance(e, (sp.Add, sp.Mul)):
        return all(_written_positive(a) for a in e.args)
    if isinstance(e, sp.Pow):
        return e.exp.is_Rational and _written_positive(e.base)
    return False


def within_percent(expr: sp.Expr, target: sp.Expr, percent: sp.Expr) -> Formula:
    """``|expr - target| <= percent/100 * |target|``, written without Abs when the target is a number
    (a negative target too: the tolerance is taken on its magnitude); with ``Abs`` of a symbolic target."""
    # an int or a Fraction is exact; a float stays a Float, which the kernel refuses (its float rule)
    tol = sp.sympify(percent) / 100 if isinstance(percent, (float, sp.Expr)) else sp.Rational(percent) / 100
    target = sp.sympify(target)
    size = abs(target) if target.is_number else sp.Abs(target)
    return between(expr, target - tol * size, target + tol * size)


def children(f: Formula) -> tuple[Formula, ...]:
    """The formulas ``f`` is built from (none for a relation or an ``IsInteger``)."""
    if isinstance(f, (And, Or)):
        return f.args
    if isinstance(f, Not):
        return (f.arg,)
    if isinstance(f, Implies):
        return (f.premise, f.conclusion)
    if isinstance(f, Iff):
        return (f.left, f.right)
    return ()
