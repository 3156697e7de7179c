"""The interval replayer: re-checks a JSON certificate (``derive.certify.writer``) with an interval
evaluator of its own, written apart from the kernel's (it does not import ``derive.kernel``).

It reads the statement (quantities with their box, assumptions, goal) and the bisection tree in
preorder, checks that the splits partition the box (each split point strictly inside its box), and
closes every leaf by its own outward-rounded evaluation (mpmath interval arithmetic; rationals enter as
exact quotients): the goal defined and true on the whole leaf, an assumption defined and false on it, or
an integer quantity with no integer in its range.  Undefined means *possibly* undefined: a denominator
whose enclosure holds 0, a root or power of a base not known positive, a logarithm of an argument not
known positive.  The goal and a ``Piecewise`` condition are read strictly, as derive's meaning reads them:
settled only where every part of them is defined (``x <= 0 or 1/(x + 1/2) > 0`` is undefined at -1/2, so it
never closes a leaf holding -1/2, though its first part holds there); an assumption may be read loosely,
since one that is false or undefined on a leaf excludes it either way.  A Taylor leaf the plain evaluation
does not close is left unconfirmed (this replayer has no Taylor rule).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import mpmath
import sympy as sp

PRECISION = 96  # bits; wider than the kernel's boxes, so a leaf it closed closes here too
iv = mpmath.iv


class _Undecided(Exception):
    pass


@dataclass(frozen=True)
class Replay:
    status: str  # confirmed | disagrees | not confirmed
    reason: str


# a certificate's numbers as derive writes them (p/q, digits), read under a budget: "1e400000000" would take
# sympy minutes to expand; and at most so many tree nodes (derive's own trees have hundreds)
MAX_NUMBER_CHARS = 100_000
MAX_EXPONENT = 1_000
MAX_TREE_NODES = 200_000


def _rational(text: object) -> sp.Rational:
    """A certificate's exact number, refused (``ValueError``) past the budget above."""
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        raise ValueError(f"a number must be text or an integer, got {type(text).__name__}")
    s = str(text)
    if len(s) > MAX_NUMBER_CHARS:
        raise ValueError(f"a number of {len(s):,} characters is beyond the replayer's {MAX_NUMBER_CHARS:,}")
    mantissa, _, exponent = s.lower().partition("e")
    if exponent and (not exponent.lstrip("+-").isdigit() or len(exponent) > 6 or abs(int(exponent)) > MAX_EXPONENT):
        raise ValueError(f"exponent '{exponent[:20]}' is beyond the replayer's +-{MAX_EXPONENT}")
    return sp.Rational(s)


def _num(q: sp.Rational):
    q = sp.Rational(q)
    return iv.mpf(int(q.p)) / int(q.q)


def _hull(lo: sp.Rational, hi: sp.Rational):
    return iv.mpf([_num(lo).a, _num(hi).b])


def _positive(v) -> bool:
    return v.a > 0


def value(e: list, box: dict):
    """An enclosure of the JSON expression ``e`` on ``box`` (name -> interval); ``_Undecided`` where it may
    be undefined."""
    head, args = e[0], e[1:]
    if head == "sym":
        return box[args[0]]
    if head == "num":
        return _num(_rational(args[0]))
    if head == "pi":
        return iv.pi
    if head == "E":
        return iv.e
    if head == "Add":
        out = value(args[0], box)
        for a in args[1:]:
            out = out + value(a, box)
        return out
    if head == "Mul":
        out = iv.mpf(1)
        for a in args:
            out = out * value(a, box)
        return out
    if head == "Pow":
        base, x = args
        vb = value(base, box)
        if x[0] == "num":
            q = _rational(x[1])
            if q.is_Integer:
                n = int(q)
                if n < 0 and 0 in vb:
                    raise _Undecided("a denominator may be 0")
                return vb ** n if n >= 0 else 1 / (vb ** (-n))
            if q > 0 and vb.a >= 0:
                return iv.exp(iv.log(vb) * _num(q)) if vb.a > 0 else _root_from_zero(vb, q)
        if not _positive(vb):
            raise _Undecided("a power's base may not be positive")
        return iv.exp(value(x, box) * iv.log(vb))
    if head == "exp":
        return iv.exp(value(args[0], box))
    if head == "log":
        v = value(args[0], box)
        if not _positive(v):
            raise _Undecided("a logarithm's argument may not be positive")
        return iv.log(v)
    if head in ("Max", "Min"):
        vs = [value(a, box) for a in args]
        pick = max if head == "Max" else min
        return iv.mpf([pick(v.a for v in vs), pick(v.b for v in vs)])
    if head in ("floor", "ceiling"):  # non-decreasing: the integers at the two ends, exactly
        v = value(args[0], box)
        lo, hi = (_integer_at(end, up=head == "ceiling") for end in (v.a, v.b))
        return iv.mpf([-mpmath.inf if lo is None else lo, mpmath.inf if hi is None else hi])
    if head == "Abs":
        v = value(args[0], box)
        if v.a >= 0:
            return v
        if v.b <= 0:
            return -v
        return iv.mpf([0, max(-v.a, v.b)])
    if head == "Piecewise":
        for expr, cond in args:
            held = truth(cond, box, strict=True)
            if held is None:
                raise _Undecided("a Piecewise condition is not settled on the box")
            if held:
                return value(expr, box)
        raise _Undecided("no Piecewise branch holds")
    raise ValueError(f"no interval rule for {head!r}")


def _root_from_zero(vb, x: sp.Rational):
    """``b**x`` for ``x > 0`` on an enclosure of ``b`` that starts at 0: increasing, from 0."""
    top = iv.exp(iv.log(iv.mpf(vb.b)) * _num(x)) if vb.b > 0 else iv.mpf(0)
    return iv.mpf([0, top.b])


def _and(vs: list[bool | None]) -> bool | None:
    return False if False in vs else (True if all(v is True for v in vs) else None)


def _or(vs: list[bool | None]) -> bool | None:
    return True if True in vs else (False if all(v is False for v in vs) else None)


def _relation(op: str, lhs: list, rhs: list, box: dict) -> bool | None:
    """True/False when the relation is defined and settled on the whole box, else None."""
    try:
        d = value(lhs, box) - value(rhs, box)
    except _Undecided:
        return None
    except (ZeroDivisionError, ValueError):
        return None
    lo, hi = d.a, d.b
    if op == "<":
        return True if hi < 0 else (False if lo >= 0 else None)
    if op == "<=":
        return True if hi <= 0 else (False if lo > 0 else None)
    if op == ">":
        return True if lo > 0 else (False if hi <= 0 else None)
    if op == ">=":
        return True if lo >= 0 else (False if hi < 0 else None)
    if op == "==":
        return True if lo == hi == 0 else (False if lo > 0 or hi < 0 else None)
    if op == "!=":
        return True if lo > 0 or hi < 0 else (False if lo == hi == 0 else None)
    return None


def _defined(f: dict, box: dict) -> bool:
    """Every expression of the JSON formula has an enclosure on the box (none may be undefined there)."""
    if "const" in f:
        return True
    try:
        if "rel" in f:
            value(f["lhs"], box), value(f["rhs"], box)
            return True
        if "is_int" in f:
            value(f["is_int"], box)
            return True
    except (_Undecided, ZeroDivisionError, ValueError):
        return False
    parts = f.get("and", f.get("or", f.get("implies", f.get("iff"))))
    return all(_defined(a, box) for a in (parts if parts is not None else [f["not"]]))


def truth(f: dict, box: dict, strict: bool = False) -> bool | None:
    """A JSON formula's truth on the box (None: not settled, or possibly undefined).  ``strict``: None
    unless every part is defined on the box; else one part may settle a connective (``True or
    undefined`` is True), which only an assumption may use."""
    if strict and not _defined(f, box):
        return None
    if "const" in f:
        return bool(f["const"])
    if "rel" in f:
        return _relation(f["rel"], f["lhs"], f["rhs"], box)
    if "and" in f:
        return _and([truth(a, box) for a in f["and"]])
    if "or" in f:
        return _or([truth(a, box) for a in f["or"]])
    if "not" in f:
        v = truth(f["not"], box)
        return None if v is None else not v
    if "implies" in f:
        p, q = (truth(a, box) for a in f["implies"])
        return _or([None if p is None else not p, q])
    if "iff" in f:
        p, q = (truth(a, box) for a in f["iff"])
        return None if p is None or q is None else p == q
    if "is_int" in f:  # settled only where the enclosure holds no integer (False) or is one integer (True)
        try:
            v = value(f["is_int"], box)
        except (_Undecided, ZeroDivisionError, ValueError):
            return None
        lo, hi = _integer_at(v.a, up=True), _integer_at(v.b)
        if lo is None or hi is None:
            return None
        return False if lo > hi else (True if lo == hi and v._mpi_[0] == v._mpi_[1] else None)
    raise ValueError(f"unknown formula node {sorted(f)}")


# witnesses: a point where a proved claim's assumptions hold ---------------------------------------------------

MAX_POWER = 64  # an integer power the exact evaluator expands (a witness's numbers are small)
MAX_EXACT_BITS = 20_000  # the largest numerator or denominator it builds: nested powers grow as 64**depth


def _bounded(v: sp.Rational) -> sp.Rational:
    if max(abs(int(v.p)).bit_length(), int(v.q).bit_length()) > MAX_EXACT_BITS:
        raise OverflowError(f"a number past {MAX_EXACT_BITS:,} bits")
    return v


def exact(e: list, point: dict) -> sp.Rational | None:
    """The JSON expression ``e`` at a rational ``point`` exactly, where rational arithmetic gives it (sums,
    products, integer powers, max, min, abs, floor, ceiling), else None (exp, log, roots, pi: enclosures decide
    those); ``ZeroDivisionError`` at a zero denominator."""
    head, args = e[0], e[1:]
    if head == "sym":
        return point[args[0]]
    if head == "num":
        return _rational(args[0])
    if head in ("Add", "Mul", "Max", "Min"):
        vals = [exact(a, point) for a in args]
        if any(v is None for v in vals):
            return None
        if head in ("Add", "Mul"):  # one term at a time, each within the budget (2,000 factors of a large number)
            out = vals[0]
            for v in vals[1:]:
                out = _bounded(out + v if head == "Add" else out * v)
            return out
        return max(vals) if head == "Max" else min(vals)
    if head == "Pow" and args[1][0] == "num":
        n = _rational(args[1][1])
        base = exact(args[0], point)
        if base is None or not n.is_Integer or abs(n) > MAX_POWER:
            return None
        if base == 0 and n < 0:
            raise ZeroDivisionError("a zero base to a negative power")
        if max(abs(int(base.p)).bit_length(), int(base.q).bit_length()) * abs(n) > MAX_EXACT_BITS:
            raise OverflowError(f"a power past {MAX_EXACT_BITS:,} bits")
        return base ** n
    if head in ("Abs", "floor", "ceiling"):
        v = exact(args[0], point)
        return None if v is None else {"Abs": abs, "floor": sp.floor, "ceiling": sp.ceiling}[head](v)
    return None


_EXACT_RELATIONS = {"<": lambda d: d < 0, "<=": lambda d: d <= 0, ">": lambda d: d > 0, ">=": lambda d: d >= 0,
                    "==": lambda d: d == 0, "!=": lambda d: d != 0}


def holds_at(f: dict, point: dict) -> bool | None:
    """A JSON formula at a rational point: True or False where every part of it is defined and settled (exactly,
    else by an enclosure at the point), None otherwise."""
    if "const" in f:
        return bool(f["const"])
    if "rel" in f:
        try:
            lhs, rhs = exact(f["lhs"], point), exact(f["rhs"], point)
        except (ZeroDivisionError, OverflowError):
            return None
        if lhs is not None and rhs is not None:
            return bool(_EXACT_RELATIONS[f["rel"]](lhs - rhs))
        box = {n: _hull(v, v) for n, v in point.items()}
        return _relation(f["rel"], f["lhs"], f["rhs"], box)
    if "is_int" in f:
        try:
            v = exact(f["is_int"], point)
        except (ZeroDivisionError, OverflowError):
            return None
        return None if v is None else bool(v.is_integer)
    if "not" in f:
        v = holds_at(f["not"], point)
        return None if v is None else not v
    parts = [holds_at(a, point) for a in f.get("and", f.get("or", f.get("implies", f.get("iff", []))))]
    if None in parts:
        return None  # every part defined, as the kernel's region demands
    if "and" in f:
        return all(parts)
    if "or" in f:
        return any(parts)
    if "implies" in f:
        return (not parts[0]) or parts[1]
    if "iff" in f:
        return parts[0] == parts[1]
    raise ValueError(f"unknown formula node {sorted(f)}")


def witness_point(text: str) -> dict[str, sp.Rational]:
    """A witness file's point (name -> exact rational); ``ValueError`` where it is not one."""
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("kind") != "witness" or not isinstance(data.get("point"), dict):
        raise ValueError("not a derive witness (kind witness, with a point)")
    return {str(k): _rational(v) for k, v in data["point"].items()}


def replay_witness(certificate: str, point: dict[str, sp.Rational]) -> Replay:
    """Re-check a witness against a JSON certificate's own statement (never the witness file's): the point gives
    every quantity a value, in its box and whole where it is an integer, and every assumption holds there, so the
    assumptions the proof rests on are satisfiable."""
    saved = iv.prec
    iv.prec = PRECISION
    try:
        data = json.loads(certificate)
        for f in data["assumptions"]:
            well_formed(f)
        quantities = data["quantities"]
        names = [q["name"] for q in quantities]
        if sorted(point) != sorted(names):
            return Replay("disagrees", "the witness does not give exactly the certificate's quantities a value")
        for q in quantities:
            v = point[q["name"]]
            if q["integer"] and not v.is_integer:
                return Replay("disagrees", f"the witness gives the integer quantity {q['name']} a fraction")
            if "low" in q and not _rational(q["low"]) <= v <= _rational(q["high"]):
                return Replay("disagrees", f"the witness puts {q['name']} outside the certificate's box")
        for n, a in enumerate(data["assumptions"], start=1):
            held = holds_at(a, point)
            if held is False:
                return Replay("disagrees", f"assumption {n} is false at the witness")
            if held is None:
                return Replay("not confirmed", f"assumption {n} is not settled at the witness")
        return Replay("confirmed", f"every one of the {len(data['assumptions'])} assumptions holds at the witness")
    except (ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError, ArithmeticError,
            AssertionError) as err:
        return Replay("not confirmed", f"the replayer cannot read the witness ({type(err).__name__}: {err})")
    finally:
        iv.prec = saved


MAX_INTEGER_BITS = 100_000  # the largest integer an enclosure's end is floored to (larger: read as unbounded)


def _integer_at(end, *, up: bool = False) -> int | None:
    """The integer at or below (``up``: at or above) an enclosure's end, from its exact binary value (None:
    infinite).  mpmath.floor and mpmath.ceil round their result to 53 bits: floor(2**60 - 1/2) is 2**60 there."""
    raw = end._mpi_[0]
    if raw in (mpmath.libmp.finf, mpmath.libmp.fninf, mpmath.libmp.fnan):
        return None
    sign, man, exp, bits = raw
    if man and exp + bits > MAX_INTEGER_BITS:  # floor(2**(1e10)) would be a gigabyte: no end, as infinite
        return None
    if man and exp + bits <= 0:  # 0 < |x| < 1, however many bits its fraction has
        return (1 if up else 0) if not sign else (0 if up else -1)
    num, den = mpmath.libmp.to_rational(raw)
    return -(-num // den) if up else num // den


def replay(text: str) -> Replay:
    """Re-check one JSON certificate of kind ``interval``."""
    saved = iv.prec
    iv.prec = PRECISION
    try:
        return _replay(json.loads(text))
    except (ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError, ArithmeticError,
            AssertionError) as err:
        # ArithmeticError: a bound 1/0, an exp tower past mpmath's digits; AssertionError: mpmath's own checks
        return Replay("not confirmed", f"the replayer cannot read the certificate ({type(err).__name__}: {err})")
    finally:
        iv.prec = saved


_CONNECTIVES = ("const", "rel", "is_int", "not", "and", "or", "implies", "iff")


def well_formed(f: object) -> None:
    """A JSON formula whose every node is one kind (``{"and": [...], "not": ...}`` read as an and by one reader
    and a not by another); ``ValueError`` where it is not, expressions' Piecewise conditions included."""
    if not isinstance(f, dict):
        raise ValueError("a formula node is not an object")
    kinds = [k for k in _CONNECTIVES if k in f]
    if len(kinds) != 1:
        raise ValueError(f"a formula node of {len(kinds)} kinds ({', '.join(kinds) or 'none'}), not one")
    kind = kinds[0]
    if kind == "not":
        well_formed(f["not"])
    elif kind in ("and", "or", "implies", "iff"):
        if not isinstance(f[kind], list) or (kind in ("implies", "iff") and len(f[kind]) != 2):
            raise ValueError(f"a malformed {kind}")
        for part in f[kind]:
            well_formed(part)
    elif kind in ("rel", "is_int"):
        for e in ([f["lhs"], f["rhs"]] if kind == "rel" else [f["is_int"]]):
            _expression_well_formed(e)


def _expression_well_formed(e: object) -> None:
    if not isinstance(e, list) or not e:
        raise ValueError("an expression is not a list")
    if e[0] == "Piecewise":
        for pair in e[1:]:
            _expression_well_formed(pair[0])
            well_formed(pair[1])
    elif e[0] not in ("sym", "num"):
        for a in e[1:]:
            _expression_well_formed(a)


def _replay(data: dict) -> Replay:
    if data.get("kind") != "interval":
        return Replay("not confirmed", f"no replay rule for a certificate of kind {data.get('kind')!r}")
    if data.get("verdict") == "proved" and data.get("goal") is None:  # its leaves would close on assumptions alone
        return Replay("disagrees", "a proved certificate without a goal")
    for f in [*data["assumptions"], *([data["goal"]] if data.get("goal") is not None else [])]:
        well_formed(f)
    symbols = {q["name"]: q["name"] for q in data["quantities"]}
    integer = {symbols[q["name"]] for q in data["quantities"] if q["integer"]}
    box = {symbols[q["name"]]: (_rational(q["low"]), _rational(q["high"])) for q in data["quantities"]}
    upside_down = sorted(s for s, (lo, hi) in box.items() if lo > hi)
    if upside_down:
        return Replay("not confirmed", f"the box of {upside_down[0]} has its low end above its high end")
    goal = data["goal"]
    assumptions = data["assumptions"]
    if len(data["tree"]) > MAX_TREE_NODES:
        return Replay("not confirmed", f"a tree of {len(data['tree']):,} nodes is beyond the replayer's budget of "
                                       f"{MAX_TREE_NODES:,}")
    stack = [box]  # boxes still to be covered, in preorder
    unconfirmed: list[str] = []
    for node in data["tree"]:
        if not stack:
            return Replay("disagrees", "the tree has more nodes than its splits make boxes")
        b = stack.pop()
        if "split" in node:
            s, m = symbols[node["split"]], _rational(node["at"])
            lo, hi = b[s]
            if not lo < m < hi:
                return Replay("disagrees", f"split of {s} at {m} outside ({lo}, {hi})")
            stack += [{**b, s: (m, hi)}, {**b, s: (lo, m)}]
            continue
        leaf = {symbols[n]: (_rational(a), _rational(z)) for n, (a, z) in node["leaf"].items()}
        if leaf != b:
            return Replay("disagrees", "a leaf's box is not the box its splits make")
        closed, why = _closed(b, integer, goal, assumptions)
        if closed is False:
            return Replay("disagrees", why)
        if closed is None:
            unconfirmed.append(why + (" (a Taylor leaf: the replayer has no Taylor rule)" if "taylor" in node else ""))
    if stack:
        return Replay("disagrees", "the tree leaves part of the box uncovered")
    if unconfirmed:
        return Replay("not confirmed", f"{len(unconfirmed)} of the leaves not closed by the replayer: "
                      + unconfirmed[0])
    return Replay("confirmed", f"{len(data['tree'])} nodes replayed")


def _closed(box: dict, integer: set, goal: dict | None, assumptions: list[dict]) -> tuple[bool | None, str]:
    """(True: the leaf is closed; False: the goal is false on all of it while every assumption holds;
    None: not settled, with why)."""
    shrunk = {}
    for s, (lo, hi) in box.items():
        if s in integer:
            lo, hi = sp.ceiling(lo), sp.floor(hi)
            if lo > hi:
                return True, ""
        shrunk[s] = _hull(lo, hi)
    held = [truth(a, shrunk) for a in assumptions]
    if False in held:
        return True, ""
    where = ", ".join(f"{s} in [{lo}, {hi}]" for s, (lo, hi) in sorted(box.items(), key=lambda kv: str(kv[0])))
    where = where or "a statement without quantities (an equation of irrational numbers: intervals never settle it)"
    if goal is None:
        return None, f"the assumptions are not shown false on {where}"
    g = truth(goal, shrunk, strict=True)
    if g is True:
        return True, ""
    if g is False and all(h is True for h in held):
        return False, f"the goal is false on all of {where}, where every assumption holds"
    return None, f"the goal is not settled on {where}"
