"""The proof routes the kernel runs itself: sympy identities, interval certificates, Taylor leaves.  Trusted.

Each route here decides the goal of one problem, on the problem's own statement (``Kernel`` mixes this
class in: it reads ``goal``, ``symbols``, ``bounds``, ``integer`` and ``assumed``).  A proposer may have
suggested the route (``derive.kernel.prover``, ``derive.kernel.interval``); the kernel re-runs it here
and believes nothing it was told.

Invariants this module keeps:

* The identity route holds only when sympy's ``cancel(together(expand(lhs - rhs)))`` is exactly 0 (an
  identity for all complex values, hence wherever both sides are defined), within ``ALGEBRA_TERMS``.  Each
  ``Max``/``Min`` is read as a free symbol first (``_extrema_as_symbols``): an expression that is 0 with
  those symbols free is 0 whatever they stand for.  A difference with a nonzero exact value at a probe point
  its quantities' assumptions allow fails the route before sympy runs (``_nonzero_somewhere``): a failure only.
* An interval certificate is a bisection tree of the bounded box.  It is accepted only when every split
  lies strictly inside its box and every leaf is re-evaluated here (``BOX_PRECISION`` bits, strict
  enclosures, integer quantities narrowed to the integers of their side) and found closed: the goal
  defined and true on all of it, a hypothesis defined and false on all of it, no integer point, or a
  Taylor leaf that ``taylor_closes`` confirms.  Strict enclosures make the certificate its own proof that
  the goal is defined on the box.
* A Taylor leaf is accepted only for an inequality of at most ``TAYLOR_NODES`` nodes over at most
  ``TAYLOR_SYMBOLS`` quantities built from + * / powers exp log sin cos (twice differentiable where its
  enclosures are strict), at a rational centre inside the box.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

import mpmath
import sympy as sp

from derive.kernel.logic import Formula, Rel, replace
from derive.kernel.trusted.enclose import BOX_PRECISION, CONSTANTS, Unsettled, enclose, ivnum, truth_on_box
from derive.kernel.trusted.evaluate import ALGEBRA_TERMS, exact_value, expansion_size, value_at
from derive.kernel.trusted.meaning import conjuncts, tree_size

TAYLOR_SYMBOLS = 6  # Taylor leaves of an interval certificate: for goals over at most this many quantities,
TAYLOR_NODES = 300  # and inequalities of at most this many nodes (their derivatives are built and enclosed)
_SMOOTH = (sp.Symbol, sp.Add, sp.Mul, sp.Pow, sp.exp, sp.log, sp.sin, sp.cos)  # with rationals, E and pi
_iv = mpmath.iv


class ProofRoutes:
    """The routes, as methods of ``derive.kernel.trusted.gate.Kernel``."""

    goal: Formula
    symbols: list[sp.Symbol]
    bounds: dict[sp.Symbol, tuple[sp.Rational, sp.Rational]]
    integer: frozenset[sp.Symbol]
    assumed: list[Formula]
    _taylor_answers: dict[tuple, bool]

    def identity_holds(self) -> bool:
        """Whether sympy's expand/together/cancel reduce the goal's ``lhs - rhs`` to 0."""
        return self._identity_failure() is None

    def _identity_failure(self) -> str | None:
        if not hasattr(self, "_identity"):
            self._identity = self._identity_check()
        return self._identity

    def _identity_check(self) -> str | None:
        g = self.goal
        if not (isinstance(g, Rel) and g.op == "=="):
            return "the identity route needs an equation"
        return _difference_failure(g.lhs - g.rhs)

    def _cover_failure(self, tree: object, goal: bool = True) -> str | None:
        """Replays a bisection tree: ``("leaf",)``, ``("taylor", point)`` (see ``taylor_closes``) or
        ``("split", symbol, point, low, high)``; with ``goal=False`` a leaf closes only where the region
        is empty (no Taylor leaves)."""
        if any(s not in self.bounds for s in self.symbols):
            return "some quantity has no bounds"
        saved = _iv.prec
        _iv.prec = BOX_PRECISION
        try:
            stack: list[tuple[dict, object]] = [({s: self.bounds[s] for s in self.symbols}, tree)]
            while stack:
                box, node = stack.pop()
                if not isinstance(node, tuple) or not node:
                    return "malformed node"
                if node[0] == "split":
                    _, s, m, low, high = node
                    lo, hi = box.get(s, (None, None))
                    if lo is None or not (isinstance(m, sp.Rational) and lo < m < hi):
                        return f"bad split of {s} at {m}"
                    stack += [({**box, s: (lo, m)}, low), ({**box, s: (m, hi)}, high)]
                    continue
                if goal and node[0] == "taylor" and len(node) == 2 and self.taylor_closes(box, node[1]):
                    continue
                if node != ("leaf",) or not self._leaf_closed(box, goal):
                    return "a leaf box is not closed: " + ", ".join(f"{s} in [{a}, {b}]" for s, (a, b) in box.items())
        finally:
            _iv.prec = saved
        return None

    def _leaf_closed(self, box: Mapping[sp.Symbol, tuple[sp.Rational, sp.Rational]], goal: bool = True) -> bool:
        box = dict(box)
        for s in self.integer:  # integer quantities range over the integers of their side
            lo, hi = sp.ceiling(box[s][0]), sp.floor(box[s][1])
            if lo > hi:
                return True  # no integer point in the box
            box[s] = (sp.Integer(lo), sp.Integer(hi))
        ivbox = {s: _iv.mpf([ivnum(lo).a, ivnum(hi).b]) for s, (lo, hi) in box.items()}
        if goal and truth_on_box(self.goal, ivbox) is True:
            return True
        return any(truth_on_box(h, ivbox) is False for h in self.assumed)

    # Taylor leaves: a goal that touches its bound --------------------------------------------------

    def taylor_closes(self, box: Mapping[sp.Symbol, tuple[sp.Rational, sp.Rational]], centre: object) -> bool:
        """Whether the goal (an inequality, or a conjunction of them) holds on all of the (convex) box,
        each inequality ``lhs op rhs`` by its enclosure or by Taylor's theorem at the rational point
        ``centre`` of the box.  With ``f = lhs - rhs`` (``rhs - lhs`` for < and <=), every x of the box has
        a xi on the segment from the centre c to x with

            f(x) = f(c) + grad f(xi).(x - c)                                   (mean value)
            f(x) = f(c) + grad f(c).(x - c) + (x - c)' H(xi) (x - c) / 2       (Lagrange remainder)

        so enclosing grad f and the Hessian H over the box (each square (x_i - c_i)**2 as a square) encloses
        f on the box; the inequality holds when either enclosure is >= 0 (> 0 for a strict one).  Where
        f(c) and grad f(c) are exactly 0 (a minimum that touches the bound) they are used exactly.  Sound
        where f is twice differentiable on the box: f is built from + * / powers exp log sin cos only, and
        the goal's sides, grad f and H all have strict enclosures on the whole box (every derivative
        defined; sympy's ``diff`` computes them)."""
        if not isinstance(centre, Mapping) or len(self.symbols) > TAYLOR_SYMBOLS:
            return False
        c = {s: centre.get(s) for s in self.symbols}
        if any(not isinstance(c[s], sp.Rational) or not box[s][0] <= c[s] <= box[s][1] for s in self.symbols):
            return False
        # the kernel's own answers, by box and centre: a certificate's replay asks again what the proposer
        # asked while it searched (the same rationals), and each answer costs exact and interval evaluations
        key = tuple((s, box[s][0], box[s][1], c[s]) for s in self.symbols)
        memo = self._taylor_answers
        if key not in memo:
            saved = _iv.prec
            _iv.prec = BOX_PRECISION
            try:
                ivbox = {s: _iv.mpf([ivnum(box[s][0]).a, ivnum(box[s][1]).b]) for s in self.symbols}
                memo[key] = all(truth_on_box(g, ivbox) is True or self._taylor_holds(g, ivbox, c)
                                for g in conjuncts(self.goal))
            finally:
                _iv.prec = saved
        return memo[key]

    def _taylor_holds(self, g: Formula, ivbox: Mapping, c: Mapping[sp.Symbol, sp.Rational]) -> bool:
        parts = self._taylor_parts(g)
        if parts is None:
            return False
        f, strict, grad = parts
        try:
            enclose(g.lhs, ivbox), enclose(g.rhs, ivbox)  # the inequality is defined on the box
            dx = [ivbox[s] - ivnum(c[s]) for s in self.symbols]
            f0 = value_at(f, c)
            slopes = [enclose(e, ivbox) for e in grad]
            t = f0 + sum((m * d for m, d in zip(slopes, dx, strict=True)), _iv.mpf(0))
            if t.a > 0 or (t.a >= 0 and not strict):
                return True
            hess = self._taylor_hessian(g, grad)
            t = f0 + sum((value_at(e, c) * d for e, d in zip(grad, dx, strict=True)), _iv.mpf(0))
            for i in range(len(dx)):
                t += enclose(hess[i][i], ivbox) * dx[i] ** 2 / 2
                for j in range(i + 1, len(dx)):
                    t += enclose(hess[i][j], ivbox) * dx[i] * dx[j]
            return bool(t.a > 0 or (t.a >= 0 and not strict))
        except (Unsettled, ZeroDivisionError, ValueError, mpmath.libmp.libmpf.ComplexResult):
            return False

    def _taylor_parts(self, g: Formula) -> tuple | None:
        """(f, strict, gradient) of an inequality for ``_taylor_holds``, or None when it is not an inequality
        of smooth functions."""
        if not hasattr(self, "_taylor"):
            self._taylor: dict[Formula, tuple | None] = {}
        if g not in self._taylor:
            self._taylor[g] = None
            if isinstance(g, Rel) and g.op in (">=", ">", "<=", "<"):
                f = g.lhs - g.rhs if g.op in (">=", ">") else g.rhs - g.lhs
                nodes = list(sp.preorder_traversal(f))
                if len(nodes) <= TAYLOR_NODES and all(isinstance(a, _SMOOTH) or a.is_Rational or a in CONSTANTS
                                                      for a in nodes):
                    self._taylor[g] = (f, g.op in (">", "<"), [sp.diff(f, s) for s in self.symbols])
        return self._taylor[g]

    def _taylor_hessian(self, g: Formula, grad: list) -> list[list]:
        """The upper triangle of the Hessian of ``g``'s f from its gradient ``grad`` (None below the diagonal),
        made where the mean-value form did not close a box (sympy's ``diff`` of a long expression is slow)."""
        if not hasattr(self, "_hessians"):
            self._hessians: dict[Formula, list[list]] = {}
        if g not in self._hessians:
            syms = self.symbols
            self._hessians[g] = [[sp.diff(grad[i], syms[j]) if j >= i else None for j in range(len(syms))]
                                 for i in range(len(syms))]
        return self._hessians[g]



@lru_cache(maxsize=1 << 12)  # a pure function of the difference; a check meets the same one in several problems
def _difference_failure(diff: sp.Expr) -> str | None:
    """Why expand/together/cancel do not reduce ``diff`` to 0 within ``ALGEBRA_TERMS``, or None."""
    if expansion_size(diff) > ALGEBRA_TERMS:
        return f"algebra budget ({ALGEBRA_TERMS} terms) exceeded by the expansion of {sp.sstr(diff)}"
    free = _extrema_as_symbols(diff)
    if _nonzero_somewhere(free) or sp.cancel(sp.together(sp.expand(free))) != 0:
        return "expand/together/cancel do not reduce lhs - rhs to 0"
    return None


_PROBE = (3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)  # a probe point's values, one per quantity in turn


def _nonzero_somewhere(e: sp.Expr) -> bool:
    """Whether ``e`` has an exact nonzero value at a point of small primes that every quantity's sympy
    assumptions allow (all of them defined there): then sympy's expand/together/cancel, which keep an
    expression's value wherever it is defined and the assumptions hold, cannot reduce it to 0, and their
    cost (most of the identity route's, on the equations z3 then proves) is spared.  False where the
    point does not settle it: the route then runs them."""
    symbols = sorted(e.free_symbols, key=lambda s: s.name)
    point: dict[sp.Symbol, sp.Rational] = {}
    for i, s in enumerate(symbols):
        v = sp.Integer(_PROBE[i % len(_PROBE)] + len(_PROBE) * (i // len(_PROBE)) * 2)
        if any(getattr(v, f"is_{fact}") is not held for fact, held in s.assumptions0.items()):
            return False
        point[s] = v
    try:
        value = exact_value(e, point)
    except Unsettled:
        return False
    return value is not None and value != 0


def _extrema_as_symbols(e: sp.Expr) -> sp.Expr:
    """``e`` with each ``Max``/``Min`` replaced by a symbol, one per function and set of expanded
    arguments.  Sound for the identity route: an expression that is identically 0 with those symbols free
    is 0 whatever values they stand for.  It spares ``expand`` rebuilding (and so re-evaluating, by
    pairwise symbolic comparison) every ``Max`` inside the goal, which took seconds on the lecture."""
    names: dict[tuple, sp.Symbol] = {}
    mapping: dict[sp.Basic, sp.Basic] = {}
    for m in sorted(e.atoms(sp.Max, sp.Min), key=lambda m: tree_size([m])):  # inner ones first
        key = (m.func, frozenset(sp.expand(replace(a, mapping)) for a in m.args))
        if key not in names:
            names[key] = sp.Dummy(f"{m.func.__name__.lower()}{len(names)}")
        mapping[m] = names[key]
    return replace(e, mapping)
