"""Deciding one formula under hypotheses: proposers, each checked by the trusted kernel.

Every engine here is an untrusted proposer; ``derive.kernel.trusted.Kernel`` admits (or degrades to
``unknown``) whatever they suggest.  How z3 is run (which procedures, what wall clock) is
``derive.kernel.z3_tactics``.  Order of work, and why:

1. The kernel reads the statement (floats, unknown functions, high-to-low bounds: ``unknown``) and
   checks the region (hypotheses, bounds, integrality): a simple point it confirms shows it non-empty
   (most do: pinned values, the middle of the bounds, else 1), else z3 is asked, and unsatisfiable
   gives ``inconsistent``.
2. An equation that sympy's expand/together/cancel reduce to ``0 = 0`` (cheap, and the kernel re-runs
   the reduction itself).
3. z3 on the negated goal (a linear integer problem over z3 ``Int`` variables with its QF_LIA procedure,
   see ``translate.linear_integer``): ``unsat`` is a proof (every route's proof gets a searched witness of the
   region when z3 cannot show it non-empty within its budget: ``_admit``); a model is a proposed
   counterexample (and simple rationals near it, since z3 may answer with algebraic numbers): the first
   solver's, then, where the kernel confirms none of those, the final solver's (``z3_tactics``).
4. Constructs z3 cannot express go to the interval engine (bounded boxes), whose proof is a
   certificate the kernel replays, and to a deterministic search for a counterexample inside the
   region; failing both, ``unknown`` with every route's reason.

Each route has a deterministic budget (z3 ``rlimit``, ``interval.MAX_BOXES``, ``SEARCH_STEPS``, the
kernel's exact-evaluation and algebra budgets).  An internal error gives ``unknown`` with its reason.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from itertools import chain

import sympy as sp

from derive.kernel.allocator import keep_freed_memory
from derive.kernel.logic import And, Not, Rel, name_of
from derive.kernel.problem import Outcome, Problem
from derive.kernel.trusted import Kernel, Refused, Unsettled, evaluate_at, without_mod
from derive.kernel.trusted.evaluate import exact_value
from derive.kernel.z3_tactics import TacticSolver

SEARCH_STEPS = 200  # points the counterexample search tries (each re-checked exactly by the kernel)


def decide(problem: Problem) -> Outcome:
    """Decide ``hypotheses => goal``; see the module docstring for the order of work."""
    keep_freed_memory()  # each z3 context would otherwise fault its pages in afresh
    try:
        return _decide(without_mod(problem))  # the kernel's reading of Mod, for the proposers too
    except RecursionError:
        return Outcome("unknown", "none", "expression too deeply nested for the engines (recursion budget)")
    except Exception as err:  # noqa: BLE001 - one claim's internal error must never stop the others
        return Outcome("unknown", "none", f"internal error, so no verdict: {type(err).__name__}: {err}")


def _decide(problem: Problem) -> Outcome:
    tactics = TacticSolver()
    try:
        k = Kernel(problem, tactics)
    except Refused as err:
        return Outcome("unknown", "none", f"not decided: {err}")
    bad = k.inconsistent(witness=_region_point(k))  # most regions contain it: it spares z3's question
    if bad is not None:
        return bad
    reasons: list[str] = []
    point = k.fixed_point()
    if point is not None:  # numbers only, or every quantity fixed: the kernel evaluates the statement itself
        out = k.proved("exact", witness=point)
        if out.verdict == "proved" or not k.symbols:
            return out if out.verdict == "proved" else (k.refuted(point, "exact") or out)
        refuted = k.refuted(point, "exact")
        if refuted is not None:
            return refuted

    goal = problem.goal
    if isinstance(goal, Rel) and goal.op == "==" and goal.free_symbols():
        # the kernel runs sympy's expand/together/cancel itself (no second run here)
        out = _admit(k, "sympy") if k.identity_holds() else k.proved("sympy")
        if out.verdict == "proved":
            return out
        if "do not reduce" not in (out.reason or ""):
            reasons.append(out.reason or "sympy identity not admitted")

    status, point, why = k.z3_goal(model=False)  # the first model (nlsat's where it runs first)
    if status == "unsat":
        return _admit(k, "z3")
    if status == "sat":
        out = _refuted_near(k, tactics, point)
        if out is None:  # a later solver's model (z3's default tactic: often rational where nlsat's is not)
            later, better, _ = k.z3_goal(model=True)
            out = _refuted_near(k, tactics, better) if later == "sat" and better != point else None
        if out is not None:
            return out
        conditions = k.goal_side_conditions()
        if conditions:  # z3 may have picked a point where the goal is undefined: ask for a defined one
            st, defined, _ = k.z3_point(And((Not(goal), *conditions)))
            out = _refuted_near(k, tactics, defined) if st == "sat" else None
            if out is not None:
                return out
        shown, sc_why = k.discharge()
        reasons.append(sc_why if shown is None else _unconfirmed(k, point))  # type: ignore[arg-type]
        if not _symbolic_powers(problem):
            return Outcome("unknown", "z3", "; ".join(dict.fromkeys(reasons)))
        # z3 read each power with a symbolic exponent through a few facts only (translate._symbolic_power):
        # its point may be no power at all, so the engines that read the powers themselves go on
    else:
        reasons.append((why or "z3 gave up") if status == "unknown" else f"cannot be expressed in z3: {why}")
    # z3 cannot express the claim, ran out of its budget, or read its powers through their facts only: the
    # interval engine on the bounded box
    if status != "unknown" or all(s in k.bounds for s in k.symbols):  # else the engine has no box to work on
        out = _interval(k, reasons)
        if out is not None:
            return out
    # a false claim is often false at a simple point (1 for every unbounded quantity), then the search
    found = k.refuted(_simple_point(k), "exact") or _search(k, problem)
    if found is not None:
        return found
    reasons.append(f"no counterexample among {SEARCH_STEPS} points searched (search budget)")
    return Outcome("unknown", "z3" if status in ("sat", "unknown") else "none", "; ".join(dict.fromkeys(reasons)))


def _refuted_near(k: Kernel, tactics: TacticSolver, point: dict | None) -> Outcome | None:
    """The kernel's ``refuted`` at z3's ``point`` or at a simple rational near it (z3 may answer with
    algebraic numbers), or None where it confirms none of them."""
    for cand in chain((point,), tactics.near(point)):  # lazily: a near point costs nsimplify
        out = k.refuted(cand, "z3")
        if out is not None:
            return out
    return None


def _unconfirmed(k: Kernel, point: dict) -> str:
    """Why z3's counterexample ``point`` is no verdict: the kernel's words for the point, and where z3's values
    were irrational, that what the kernel checked was that point rounded (it re-checks rationals only)."""
    failure = k.counterexample_failure(point)
    rounded = k.rounded(point)
    if not rounded:
        return f"z3's counterexample is not confirmed by the kernel ({failure})"
    shown = ", ".join(f"{name_of(s)} ≈ {sp.Float(point[s], 10)}" for s in rounded)
    return (f"z3's counterexample is irrational ({shown}) and the kernel re-checks exact rationals only: none tried "
            f"near it is a counterexample (at it rounded: {failure})")


def region_shown_nonempty(problem: Problem) -> bool:
    """Whether the kernel confirms a point inside the problem's region (hypotheses, bounds, integrality): the
    simple point, repaired (``_region_point``), so without z3.  False where it cannot tell (a refused
    statement, a point outside)."""
    try:
        k = Kernel(problem)
    except Refused:
        return False
    return k.in_region(_region_point(k))


def _symbolic_powers(problem: Problem) -> bool:
    """Whether the problem has a power whose exponent is no rational literal (``a**b``)."""
    exprs = [e for f in (problem.goal, *problem.hypotheses) for e in f.exprs()]
    return any(isinstance(p, sp.Pow) and not p.exp.is_Rational for e in exprs for p in sp.preorder_traversal(e))


def _interval(k: Kernel, reasons: list[str]) -> Outcome | None:
    """The interval engine's verdict the kernel admits (proved, refuted, or inconsistent assumptions on the
    box), or None with its reason added to ``reasons``."""
    from derive.kernel.interval import propose  # lazy: mpmath work only when needed

    kind, payload, witness = propose(k)
    if kind != "refuted" and k.problem.hypotheses and k.consistency(witness)[0] == "unknown":
        # z3 could not read the assumptions: are they contradictory on the box (integers considered)?
        empty, tree, _ = propose(k, empty=True)
        out = k.inconsistent("interval", tree) if empty == "proved" else None
        if out is not None:
            return out
    if kind == "refuted":
        return payload
    if kind == "proved":
        out = _admit(k, "interval", certificate=payload, witness=witness)
        if out.verdict == "proved":
            return out
        reasons.append(out.reason or "interval proof not admitted")
    else:
        reasons.append(payload)
    return None


# the search ------------------------------------------------------------------------------------------

def _points(k: Kernel, seed: int, count: int) -> Iterator[dict[sp.Symbol, sp.Rational]]:
    """Deterministic points inside the bounds, integers for integer quantities, non-negative where
    the assumptions say so; first the corners of the box (up to a quarter of ``count``), where a claim
    that touches its bound is false."""
    rng = random.Random(seed)
    corners = _corners(k, count // 4)
    for point in corners:
        yield point
    plain = _plain_points(k)
    yield from plain
    for _ in range(count - len(corners) - len(plain)):
        point: dict[sp.Symbol, sp.Rational] = {}
        for sym in k.symbols:
            if sym in k.bounds:
                lo, hi = k.bounds[sym]
                if sym in k.integer:
                    a, b = int(sp.ceiling(lo)), int(sp.floor(hi))
                    value = sp.Integer(rng.randint(a, b)) if a <= b else lo
                else:
                    value = lo + (hi - lo) * sp.Rational(rng.randint(0, 1000), 1000)
            else:
                value = sp.Rational(rng.randint(1, 999), rng.choice((1, 7, 10, 100))) * rng.choice((1, 1, 10, 1000))
                if sym in k.integer:
                    value = sp.Integer(max(1, int(value)))
                if sym not in k._pos and sym not in k._nonneg and rng.random() < 0.3:
                    value = -value
            point[sym] = value
        yield point


def _plain_points(k: Kernel) -> list[dict[sp.Symbol, sp.Rational]]:
    """Where a claim over an unbounded quantity that may be zero or negative is often false (``exp(x) > 1 + x``
    at 0): every such quantity at 0, then at -1 where it may be negative, the others at 1 (integers for
    integer quantities); none when every quantity is bounded or positive."""
    free = [s for s in k.symbols if s not in k.bounds and s not in k._pos]
    if not free:
        return []
    out = [{s: sp.Integer(0) if s in free else sp.Integer(1) for s in k.symbols}]
    negative = [s for s in free if s not in k._nonneg]
    if negative:
        out.append({s: sp.Integer(-1) if s in negative else sp.Integer(1) for s in k.symbols})
    return out


def _corners(k: Kernel, count: int) -> list[dict[sp.Symbol, sp.Rational]]:
    """Up to ``count`` corners of a box that bounds every quantity (the integers nearest inside, for
    integer quantities): all lows, all highs, then the others from both ends."""
    if not k.symbols or any(s not in k.bounds for s in k.symbols):
        return []
    ends = []
    for s in k.symbols:
        lo, hi = k.bounds[s]
        if s in k.integer:
            lo, hi = sp.ceiling(lo), sp.floor(hi)
        ends.append((lo, hi) if lo < hi else (lo,))
    out = []
    last = 2 ** len(ends) - 1
    for n in range(min(count, last + 1)):
        i = n // 2 if n % 2 == 0 else last - n // 2
        bits = [(i >> j) & 1 for j in range(len(ends))]
        out.append({s: e[b if len(e) == 2 else 0] for s, e, b in zip(k.symbols, ends, bits, strict=True)})
    return list({tuple(sorted(p.items(), key=str)): p for p in out}.values())


def _search(k: Kernel, problem: Problem) -> Outcome | None:
    """A bounded, deterministic search.  It can refute (the kernel re-checks) but never prove.  A point
    that a hypothesis excludes (false or not settled there) is no counterexample, so only the points that
    pass every hypothesis go to the kernel: the hypothesis that excluded the last point is tried first
    (most points of a search fail the same few), where the kernel reads them in their order."""
    order = list(k.problem.hypotheses)
    for point in _points(k, problem.seed, SEARCH_STEPS):
        if _excluded(order, point):
            continue
        out = k.refuted(point, "exact")
        if out is not None:
            return out
    return None


def _excluded(order: list, point: dict[sp.Symbol, sp.Rational]) -> bool:
    """Whether a hypothesis of ``order`` is false or not settled at ``point`` (that one moves to the front)."""
    for i, h in enumerate(order):
        try:
            holds = evaluate_at(h, point)
        except Unsettled:
            holds = False
        if not holds:
            if i:
                order.insert(0, order.pop(i))
            return True
    return False


def _admit(k: Kernel, engine: str, certificate: object = None, witness: dict | None = None) -> Outcome:
    """``k.proved(engine, ...)``, with a searched point of the region as the witness when z3 could not
    show the region non-empty within its budget (else a proof would be ``unknown`` only for that)."""
    if witness is None and k.consistency()[0] == "unknown":
        witness = _witness(k)
    return k.proved(engine, certificate=certificate, witness=witness)


def _simple_point(k: Kernel) -> dict[sp.Symbol, sp.Rational]:
    """A first guess at a point of the region: the middle of the bounds (the value a hypothesis ``x == c``
    pins, which gives bounds [c, c]; an integer in them, for an integer quantity), else 1."""
    point: dict[sp.Symbol, sp.Rational] = {s: sp.Integer(1) for s in k.symbols}
    for s, (lo, hi) in k.bounds.items():
        mid = (lo + hi) / 2
        point[s] = sp.floor(mid) if s in k.integer and sp.floor(mid) >= lo else mid
    return point


def _region_point(k: Kernel) -> dict[sp.Symbol, sp.Rational]:
    """The simple point, or where it misses the region, the simple point repaired (``_repaired``).  A pure
    function of the region (its hypotheses, side conditions and bounds, which quantities are integers), kept
    per region: a claim's derivation steps and claims citing the same assumptions share one (half of a
    check's problems); the kernel still checks the point against each problem where it is used."""
    key = (tuple(k.problem.hypotheses), tuple(k.region), tuple(sorted(k.bounds.items(), key=lambda kv: name_of(kv[0]))),
           k.integer, tuple(k.symbols))
    found = _REGION_POINTS.get(key)
    if found is None:
        point = _simple_point(k)
        found = point if k.in_region(point) else _repaired(k, point)
        if len(_REGION_POINTS) >= 4096:
            _REGION_POINTS.clear()
        _REGION_POINTS[key] = found
    return dict(found)


_REGION_POINTS: dict[tuple, dict[sp.Symbol, sp.Rational]] = {}


_SETTLES = {"==": lambda v, whole: v, ">=": lambda v, whole: v, "<=": lambda v, whole: v,
            ">": lambda v, whole: v + 1, "<": lambda v, whole: v / 2 if v > 0 and not whole else v - 1,
            "!=": lambda v, whole: v + 1}
_MIRRORED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _repaired(k: Kernel, point: dict[sp.Symbol, sp.Rational], rounds: int = 3) -> dict[sp.Symbol, sp.Rational]:
    """``point`` moved, relation by relation, towards the region: a top-level relation of the region with a
    quantity alone on one side (``context == 4*c/d``, ``tp > b/a + 1``, ``n >= 3``) that fails there sets the
    quantity to a value that makes it hold, the other side evaluated exactly at the point; failing that, a
    quantity on one side only, reached through sums, products and reciprocals (``2400/b == 6``, ``h*l + 1/50
    == 3/100``; the one that the fewest relations of the region read), is solved for (``_solved``).  A guess
    for the kernel to confirm (``Kernel.consistency``), so that z3 need not be asked; never a verdict."""
    point = dict(point)
    uses: dict[sp.Symbol, int] = {}
    for f in k.region:
        for sym in f.free_symbols():
            uses[sym] = uses.get(sym, 0) + 1
    for _ in range(rounds):
        moved = False
        for f in k.region:
            if not isinstance(f, Rel):
                continue
            try:
                if evaluate_at(f, point):
                    continue
            except Unsettled:
                continue
            sides = ((f.lhs, f.op, f.rhs), (f.rhs, _MIRRORED[f.op], f.lhs))
            settled = False
            for s, op, other in sides:
                if not isinstance(s, sp.Symbol) or s not in point or s in other.free_symbols:
                    continue
                try:
                    v = exact_value(other, point)
                except Unsettled:
                    v = None
                if v is None:
                    continue
                whole = s in k.integer
                new = _SETTLES[op](v, whole)
                if whole:
                    new = sp.ceiling(new) if op in (">", ">=") else sp.floor(new)
                    if op == "==" and new != v:
                        continue
                point[s] = sp.Integer(new) if whole else sp.Rational(new)
                moved = settled = True
                break
            if not settled and _solve_one(k, f, point, uses):
                moved = True
        if not moved or k.in_region(point):
            break
    return point


def _solve_one(k: Kernel, f: Rel, point: dict[sp.Symbol, sp.Rational], uses: dict[sp.Symbol, int]) -> bool:
    """Set one quantity of a side of ``f`` (not read by the other side, not an integer) to a value where ``f``
    holds, by ``_solved``; whether one was set."""
    for side, other in ((f.lhs, f.rhs), (f.rhs, f.lhs)):
        mine = side.free_symbols - other.free_symbols
        for s in sorted((s for s in mine if s in point and s not in k.integer), key=lambda s: (uses[s], name_of(s))):
            try:
                target = exact_value(other, point)
                v = _solved(side, s, target, point) if target is not None else None
            except Unsettled:
                v = None
            if v is None:
                continue
            for cand in (v,) if f.op in ("==", ">=", "<=") else (2 * v, v / 2, v + 1, v - 1):
                trial = {**point, s: cand}
                try:
                    if evaluate_at(f, trial):
                        point[s] = cand
                        return True
                except Unsettled:
                    continue
    return False


def _solved(e: sp.Expr, s: sp.Symbol, v: sp.Rational, point: dict[sp.Symbol, sp.Rational]) -> sp.Rational | None:
    """The value of ``s`` at which ``e`` equals ``v``, the other quantities at ``point``: ``e`` unwound along
    its one path to ``s`` through sums, products and reciprocals; None off such a path, or where a part has
    no exact value or a factor is 0.  Raises ``Unsettled`` (a part undefined at the point)."""
    while e != s:
        inner = [a for a in e.args if s in a.free_symbols]
        if len(inner) != 1:
            return None
        rest = [exact_value(b, point) for b in e.args if b is not inner[0]]
        if any(r is None for r in rest):
            return None
        if isinstance(e, sp.Add):
            v = v - sum(rest, sp.Integer(0))
        elif isinstance(e, sp.Mul) and all(r != 0 for r in rest):
            v = v / sp.Mul(*rest)
        elif isinstance(e, sp.Pow) and e.exp == -1 and v != 0:
            v = 1 / v
        else:
            return None
        e = inner[0]
    return sp.Rational(v)


def _witness(k: Kernel, tries: int = 60) -> dict | None:
    """A point of the region, for a kernel that cannot show it non-empty with z3."""
    order = list(k.problem.hypotheses)
    for point in _points(k, k.problem.seed + 1, tries):
        if not _excluded(order, point) and k.in_region(point):  # as in ``_search``
            return point
    return None
