"""Interval arithmetic with branch-and-bound, for claims z3 cannot express (exp, log, powers with
symbolic exponents).

Works on a bounded box: every symbol needs bounds (from the claim's ``bounds``).  A box is discarded
when some hypothesis is certainly false on it, closed when the goal is certainly true on it, and
split along its widest side otherwise.  ``proved`` only when every box is closed; a box whose
midpoint violates the goal (checked by exact evaluation) gives ``refuted``; running out of the box
budget gives ``unknown``.  Interval enclosures from mpmath are rigorous (outward rounding).
"""

from __future__ import annotations

from collections.abc import Mapping

import mpmath
import sympy as sp

from derive.kernel.logic import And, Formula, Iff, Implies, Not, Or, Rel
from derive.kernel.problem import Outcome, Problem, confirms

MAX_BOXES = 4000

_iv = mpmath.iv


def decide_interval(problem: Problem, *, reason: str) -> Outcome:
    syms = sorted(problem.symbols(), key=str)
    missing = [str(s) for s in syms if s not in problem.bounds]
    if missing:
        return Outcome("unknown", "interval",
                       f"{reason}; the interval engine needs bounds for {', '.join(missing)} (give the claim `bounds`)")
    boxes = [{s: problem.bounds[s] for s in syms}]
    closed = 0
    witness = not problem.hypotheses  # a point of the box where every hypothesis holds, exactly
    while boxes:
        if closed + len(boxes) > MAX_BOXES:
            return Outcome("unknown", "interval", f"{reason}; interval branch-and-bound ran out of its "
                           f"{MAX_BOXES}-box budget before deciding")
        box = boxes.pop()
        ivbox = {s: _enclose(lo, hi) for s, (lo, hi) in box.items()}
        hyp = _truth(And(tuple(problem.hypotheses)), ivbox) if problem.hypotheses else True
        if hyp is False:
            closed += 1
            continue
        goal = _truth(problem.goal, ivbox)
        if goal is True and hyp is True:
            closed += 1
            continue
        if goal is True:
            closed += 1  # the goal holds on the whole box, whatever the hypotheses say
            continue
        mid = {s: (lo + hi) / 2 for s, (lo, hi) in box.items()}
        # A rigorous enclosure at the midpoint settles most midpoints cheaply; only a midpoint that may
        # be a counterexample goes to exact (slow) sympy evaluation, which alone can refute.
        at_mid = {s: _enclose(v, v) for s, v in mid.items()}
        hyp_mid = _truth(And(tuple(problem.hypotheses)), at_mid) if problem.hypotheses else True
        witness = witness or hyp_mid is True or (hyp_mid is None and _holds(problem, mid))
        maybe_counterexample = hyp_mid is not False and _truth(problem.goal, at_mid) is not True
        if maybe_counterexample and confirms(problem, mid):
            return Outcome("refuted", "interval", counterexample={str(k): v for k, v in mid.items()}, recheck="exact")
        widest = max(box, key=lambda s: box[s][1] - box[s][0])
        lo, hi = box[widest]
        if hi - lo < sp.Rational(1, 10**12) * max(1, abs(hi)):
            return Outcome("unknown", "interval", f"{reason}; intervals did not separate near {widest}={lo}")
        m = (lo + hi) / 2
        boxes.append({**box, widest: (lo, m)})
        boxes.append({**box, widest: (m, hi)})
    if not witness and not _witness_search(problem):
        # Never a vacuous proof: the hypotheses must hold somewhere in the box.
        return Outcome("unknown", "interval", f"{reason}; no point of the box was found where the assumptions hold")
    return Outcome("proved", "interval", recheck="interval branch-and-bound over the stated bounds")


def _holds(problem, point) -> bool:
    try:
        return all(h.evaluate(point) for h in problem.hypotheses)
    except (ValueError, TypeError, ZeroDivisionError):
        return False


def _witness_search(problem, tries: int = 200) -> bool:
    """Deterministic sampling of the box for a point satisfying every hypothesis exactly."""
    import random

    rng = random.Random(problem.seed)
    for _ in range(tries):
        point = {s: lo + (hi - lo) * sp.Rational(rng.randint(0, 1000), 1000) for s, (lo, hi) in problem.bounds.items()}
        if _holds(problem, point):
            return True
    return False


def _enclose(lo: sp.Rational, hi: sp.Rational):
    """An interval that surely contains [lo, hi] (each end rounded outward)."""
    a = _iv.mpf(int(lo.p)) / int(lo.q)
    b = _iv.mpf(int(hi.p)) / int(hi.q)
    return _iv.mpf([a.a, b.b])


def _eval(expr: sp.Expr, box: Mapping[sp.Symbol, object]):
    """Interval enclosure of ``expr`` on ``box``."""
    if isinstance(expr, sp.Symbol):
        return box[expr]
    if expr.is_Rational:
        return _iv.mpf(expr.p) / expr.q
    if expr.is_number:
        approx = sp.Rational(sp.N(expr, 40))  # closed-form constants (pi, E, sqrt(2)): widen by 1e-30
        return _enclose(approx - sp.Rational(1, 10**30), approx + sp.Rational(1, 10**30))
    if isinstance(expr, sp.Add):
        out = _iv.mpf(0)
        for a in expr.args:
            out = out + _eval(a, box)
        return out
    if isinstance(expr, sp.Mul):
        out = _iv.mpf(1)
        for a in expr.args:
            out = out * _eval(a, box)
        return out
    if isinstance(expr, sp.Pow):
        base = _eval(expr.base, box)
        if expr.exp.is_Integer:
            return base ** int(expr.exp)
        return _iv.exp(_eval(expr.exp, box) * _iv.log(base))
    if isinstance(expr, sp.exp):
        return _iv.exp(_eval(expr.args[0], box))
    if isinstance(expr, sp.log):
        return _iv.log(_eval(expr.args[0], box))
    if isinstance(expr, (sp.Max, sp.Min)):
        vals = [_eval(a, box) for a in expr.args]
        pick = max if isinstance(expr, sp.Max) else min
        return _iv.mpf([pick(v.a for v in vals), pick(v.b for v in vals)])
    raise ValueError(f"interval engine cannot evaluate {expr}")


def _truth(f: Formula, box) -> bool | None:
    """True/False when certain on the whole box, None when undecided."""
    if isinstance(f, Rel):
        try:
            d = _eval(f.lhs - f.rhs, box)
        except (ValueError, ZeroDivisionError):
            return None
        lo, hi = d.a, d.b
        if f.op == ">=":
            return True if lo >= 0 else False if hi < 0 else None
        if f.op == ">":
            return True if lo > 0 else False if hi <= 0 else None
        if f.op == "<=":
            return True if hi <= 0 else False if lo > 0 else None
        if f.op == "<":
            return True if hi < 0 else False if lo >= 0 else None
        if f.op == "==":
            return False if (lo > 0 or hi < 0) else (True if lo == hi == 0 else None)
        return True if (lo > 0 or hi < 0) else None
    if isinstance(f, And):
        vals = [_truth(a, box) for a in f.args]
        return False if False in vals else (True if all(v is True for v in vals) else None)
    if isinstance(f, Or):
        vals = [_truth(a, box) for a in f.args]
        return True if True in vals else (False if all(v is False for v in vals) else None)
    if isinstance(f, Not):
        v = _truth(f.arg, box)
        return None if v is None else not v
    if isinstance(f, Implies):
        return _truth(Or((Not(f.premise), f.conclusion)), box)
    if isinstance(f, Iff):
        a, b = _truth(f.left, box), _truth(f.right, box)
        return None if a is None or b is None else a == b
    return None
