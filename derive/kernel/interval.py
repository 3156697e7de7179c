"""Interval branch and bound, for claims z3 cannot express (exp, log, powers with symbolic exponents).

An untrusted proposer: it works on the box the claim's ``bounds`` give (every quantity needs bounds)
and proposes either a *certificate* for ``proved`` (the bisection tree it built, which the kernel
replays leaf by leaf with its own strict enclosures and Taylor forms, see ``derive.kernel.trusted``) or
a counterexample point (which the kernel re-checks exactly).  A box is closed when the goal is
certainly defined and true on it, a hypothesis certainly false on it, or it holds no integer for an
integer quantity, or when a Taylor form at the box's simplest rational point shows the goal (a claim
that touches its bound there); otherwise it is split along its widest side.  Strict enclosures mean a
box that touches a pole, a negative radicand or a non-positive logarithm argument never closes, so
undefined points in the box keep the claim from being proved.  Budget: ``MAX_BOXES`` boxes, fewer for
a large claim (``MAX_WORK`` nodes evaluated in all), then ``unknown``.
"""

from __future__ import annotations

from collections.abc import Mapping

import mpmath
import sympy as sp

from derive.kernel.trusted import BOX_PRECISION, TAYLOR_SYMBOLS, Kernel, MaybeUndefined, enclose, truth_on_box

MAX_BOXES = 4000
MAX_WORK = 1_000_000  # boxes times the nodes of the claim's expressions: a claim of 3,000 nodes gets 333 boxes
TAYLOR_DEPTH = 3  # Taylor forms are tried on boxes split at least this many times (where touching points are)
TAYLOR_TRIES = 120  # ... on at most this many boxes of one search: a try differentiates and evaluates exactly
# (about 20 ms), so trying every box of a search that will not close cost minutes of the box budget's time

_iv = mpmath.iv


class _Stop(Exception):
    def __init__(self, kind: str, payload: object) -> None:
        super().__init__(kind)
        self.kind, self.payload = kind, payload


def propose(k: Kernel, empty: bool = False) -> tuple[str, object, object]:
    """("proved", tree, witness) | ("refuted", Outcome, None) | ("unknown", reason, None).  With ``empty``,
    a tree whose every leaf breaks an assumption (for ``Kernel.inconsistent``), the goal left aside."""
    missing = [str(s) for s in k.symbols if s not in k.bounds]
    if missing:
        return ("unknown", f"the interval engine needs bounds for {', '.join(missing)} (give the claim `bounds`)",
                None)
    saved = _iv.prec
    _iv.prec = BOX_PRECISION
    search = _Search(k, empty)
    try:
        tree = search.solve({s: k.bounds[s] for s in k.symbols})
    except _Stop as stop:
        return (stop.kind, stop.payload, None)
    finally:
        _iv.prec = saved
    return ("proved", tree, search.witness)


class _Search:
    def __init__(self, k: Kernel, empty: bool = False) -> None:
        self.k = k
        self.empty = empty
        self.boxes = 0
        self.witness: dict | None = None
        self.witness_tries = 0
        self.nodes = sum(len(list(sp.preorder_traversal(e))) for f in [k.goal, *k.assumed] for e in f.exprs())
        self.budget = max(50, min(MAX_BOXES, MAX_WORK // self.nodes))
        self.centres_tried = 0
        self.taylor_tried = 0

    def solve(self, root: dict) -> tuple:
        """The bisection tree of ``root``, depth first (left before right), without recursion: a tree can
        be thousands of splits deep."""
        top: list = [None]
        todo: list[tuple[dict, int, list, int]] = [(root, 0, top, 0)]
        while todo:
            box, depth, parent, slot = todo.pop()
            node = self.visit(box, depth)
            if node[0] == "split":
                _, s, m, low, high = node
                node = ["split", s, m, None, None]
                todo += [(high, depth + 1, node, 4), (low, depth + 1, node, 3)]
            parent[slot] = node
        return _frozen(top[0])

    def visit(self, box: dict, depth: int) -> tuple:
        """A closed leaf, or ``("split", symbol, point, low box, high box)``; raises ``_Stop``."""
        k = self.k
        self.boxes += 1
        if self.boxes > self.budget:
            raise _Stop("unknown", f"interval budget of {self.budget} boxes exhausted before deciding"
                        + (f" (a claim of {self.nodes} nodes)" if self.budget < MAX_BOXES else ""))
        full, box = box, _shrink(box, k.integer)
        if box is None:
            return ("leaf",)
        ivbox = {s: _iv.mpf([_num(lo).a, _num(hi).b]) for s, (lo, hi) in box.items()}
        if (not self.empty and truth_on_box(k.goal, ivbox) is True) or any(
                truth_on_box(h, ivbox) is False for h in k.assumed):
            return ("leaf",)
        mid = {s: _middle(lo, hi, s in k.integer) for s, (lo, hi) in box.items()}
        at_mid = {s: _num(v) for s, v in mid.items()}
        if self.empty:
            if k.in_region(mid):
                raise _Stop("unknown", "the assumptions hold at a point")
        elif truth_on_box(k.goal, at_mid) is not True and not any(
                truth_on_box(h, at_mid) is False for h in k.assumed):
            out = k.refuted(mid, "interval")
            if out is not None:
                raise _Stop("refuted", out)
        if not self.empty and len(full) <= TAYLOR_SYMBOLS and depth >= TAYLOR_DEPTH:  # touching at a simple point?
            centre = {s: _simplest(lo, hi) for s, (lo, hi) in full.items()}
            if centre != mid and self.centres_tried < self.budget // 4:  # where it is false, if it is
                self.centres_tried += 1
                out = k.refuted(centre, "interval")
                if out is not None:
                    raise _Stop("refuted", out)
            if self.taylor_tried < TAYLOR_TRIES:
                self.taylor_tried += 1
                if k.taylor_closes(full, centre):  # where it holds
                    return ("taylor", centre)
        if self.witness is None and self.witness_tries < 20:
            self.witness_tries += 1
            if k.in_region(mid):
                self.witness = mid
        widths = {s: hi - lo for s, (lo, hi) in box.items()}
        if not widths:
            raise _Stop("unknown", "intervals did not settle the claim" + _why_not(k, ivbox))
        widest = max(sorted(widths, key=str), key=lambda s: widths[s])
        lo, hi = box[widest]
        if widths[widest] == 0 or hi - lo < sp.Rational(1, 10**12) * max(1, abs(hi)):
            raise _Stop("unknown", f"intervals did not separate near {widest} = {lo}" + _why_not(k, ivbox))
        m = _split_point(lo, hi, widest in k.integer)
        return ("split", widest, m, {**box, widest: (lo, m)}, {**box, widest: (m, hi)})


def _frozen(node: list | tuple) -> tuple:
    """The tree with its split nodes (lists while it was built) as tuples, without recursion."""
    out: dict[int, tuple] = {}
    order: list = []
    todo = [node]
    while todo:
        n = todo.pop()
        order.append(n)
        if isinstance(n, list):
            todo += [n[3], n[4]]
    for n in reversed(order):  # children before their parents
        out[id(n)] = (n[0], n[1], n[2], out[id(n[3])], out[id(n[4])]) if isinstance(n, list) else n
    return out[id(node)]


def _simplest(lo: sp.Rational, hi: sp.Rational) -> sp.Rational:
    """The rational with the smallest denominator in [lo, hi] (the nearest to 0 among those): where a
    claim touches its bound, it usually does so at a simple number."""
    if lo <= 0 <= hi:
        return sp.Integer(0)
    if hi < 0:
        return -_simplest(-hi, -lo)
    whole = sp.ceiling(lo)
    if whole <= hi:
        return sp.Integer(whole)
    base = sp.floor(lo)  # lo and hi lie strictly between base and base + 1
    return base + 1 / _simplest(1 / (hi - base), 1 / (lo - base))


def _num(v: sp.Rational):
    return _iv.mpf(int(v.p)) / int(v.q)


def _shrink(box: dict, integer: frozenset) -> dict | None:
    """Integer quantities range over the integers of their side; None when there are none."""
    out = dict(box)
    for s in integer:
        lo, hi = box[s]
        a, b = sp.ceiling(lo), sp.floor(hi)
        if a > b:
            return None
        out[s] = (sp.Integer(a), sp.Integer(b))
    return out


def _middle(lo: sp.Rational, hi: sp.Rational, integer: bool) -> sp.Rational:
    m = (lo + hi) / 2
    return sp.Integer(sp.floor(m)) if integer else m


def _split_point(lo: sp.Rational, hi: sp.Rational, integer: bool) -> sp.Rational:
    if integer:  # between two integers, so each side keeps whole integers
        return sp.floor((lo + hi) / 2) + sp.Rational(1, 2)
    return (lo + hi) / 2


def _why_not(k: Kernel, ivbox: Mapping) -> str:
    """Name an expression that may be undefined on the last box (the usual reason boxes never close)."""
    for f in [k.goal, *k.problem.hypotheses]:
        for e in f.exprs():
            try:
                enclose(e, ivbox)
            except MaybeUndefined as err:
                return f"; the claim may be undefined there ({err})"
            except (ZeroDivisionError, ValueError):
                continue
    return ""
