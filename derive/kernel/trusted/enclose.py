"""Certified enclosures: an interval that holds every value of an expression on a box.  Trusted.

Invariants this module keeps:

* ``enclose(e, box)`` returns an outward-rounded mpmath interval (at the current ``mpmath.iv.prec``) that
  holds the value of ``e`` at every point of ``box`` (a mapping of symbols to mpmath intervals).  Where the
  box may hold a point at which ``e`` is undefined it raises ``MaybeUndefined``; it never returns an
  interval there.  Definedness is strict: a closed box touching a pole, a negative radicand, a
  non-positive logarithm argument or a power base <= 0 under a symbolic exponent is refused.
* ``truth_on_box(f, box)`` is True (False) only when ``f`` is certainly defined and true (false) at every
  point of the box, else None.  A relation is settled from each side's own enclosure, so nothing
  undefined is ever cancelled away; an and/or/implies with a part not settled is settled by its other
  parts only where every part is certainly defined on the box.
* A ``Piecewise`` is read in order: its conditions (``bool_formula``) are enclosed until one certainly
  holds; no branch after it is read.
* ``exp`` of an exponent beyond +-1e30 is widened to 0 below or +inf above (still an enclosure).

The failures of evaluation (``Unsettled`` and its kinds) are defined here, for this module and
``derive.kernel.trusted.evaluate``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

import mpmath
import sympy as sp

from derive.kernel.logic import And, Formula, Iff, Implies, Not, Or, Rel, children

BOX_PRECISION = 64  # bits of interval evaluation on a box
CONSTANTS = (sp.E, sp.pi)  # the only named constants the kernel reads
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


@lru_cache(maxsize=65536)
def _ivnum_at(q: sp.Rational, prec: int):
    return _iv.mpf(int(q.p)) / int(q.q)


MAX_WHOLE_BITS = 100_000  # the largest integer an enclosure's end is floored to (larger: read as unbounded)


def whole_end(end: object, *, up: bool = False) -> int | None:
    """The greatest integer at or below (``up``: the least at or above) an interval's end, exactly; None at an
    infinite end.  Not ``mpmath.floor``: it rounds its result to ``mp.prec`` (floor(2**60 - 1/2) came out 2**60)."""
    t = end._mpi_[0] if hasattr(end, "_mpi_") else end._mpf_
    if t in (mpmath.libmp.finf, mpmath.libmp.fninf):
        return None
    if t == mpmath.libmp.fnan:
        raise MaybeUndefined("an enclosure end is not a number")
    sign, man, exp, bits = t
    if man and exp + bits > MAX_WHOLE_BITS:  # floor(2**(1e10)) would be a gigabyte: unbounded, as infinite (sound)
        return None
    if man and exp + bits <= 0:  # 0 < |x| < 1, however many bits its fraction has
        return (1 if up else 0) if not sign else (0 if up else -1)
    p, q = mpmath.libmp.to_rational(t)
    return -(-p // q) if up else p // q


def ivnum(q: sp.Rational):
    """The rational ``q`` as an mpmath interval at the current precision (outward-rounded)."""
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
        return ivnum(e)
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
    if isinstance(e, (sp.floor, sp.ceiling)):  # monotone: the integers at the two ends, exactly
        a = enclose(e.args[0], box)
        up = isinstance(e, sp.ceiling)
        ends = (whole_end(a.a, up=up), whole_end(a.b, up=up))
        return _iv.mpf([-mpmath.inf if ends[0] is None else ends[0], mpmath.inf if ends[1] is None else ends[1]])
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



def _defined_on_box(f: Formula, box: Mapping[sp.Symbol, object]) -> bool:
    """Every side of every relation of ``f`` certainly defined on the whole box."""
    if isinstance(f, Rel):
        try:
            enclose(f.lhs, box), enclose(f.rhs, box)
        except (MaybeUndefined, ZeroDivisionError, ValueError, mpmath.libmp.libmpf.ComplexResult):
            return False
        return True
    parts = children(f)
    return bool(parts) and all(_defined_on_box(a, box) for a in parts)


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
        # a part not settled on the box settles an and/or/implies through its other parts only where every
        # part is defined (``x > 0 implies exp(x) > x`` on [0, 1]; never ``x <= 0 or 1/x > 0`` at 0)
        if not isinstance(f, (And, Or, Implies)) or not _defined_on_box(f, box):
            return None
        if isinstance(f, Implies):
            return True if vals[0] is False or vals[1] is True else None
        settles = isinstance(f, Or)  # one true part settles an or, one false part an and
        return settles if settles in vals else None
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
