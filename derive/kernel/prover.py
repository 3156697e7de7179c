"""Deciding one formula under hypotheses: the only place verdicts are made.

Order of work, and why:
1. The hypotheses must be satisfiable (z3), otherwise the verdict is ``inconsistent``: nothing
   follows from a contradiction, and a vacuous ``proved`` is never reported.
2. Every denominator and radicand the translation met must be kept away from zero / negatives by the
   hypotheses; otherwise ``unknown`` with the offending expression.
3. ``proved`` when z3 shows the negated goal unsatisfiable; ``refuted`` only when z3's model, read as
   exact rationals, satisfies the hypotheses and violates the goal under exact sympy evaluation.
4. Identities that sympy settles are re-checked by a second method (z3, or exact evaluation at
   sample points, with undefined functions replaced by concrete ones).
5. Constructs z3 cannot express go to the interval engine (bounded boxes), and otherwise to a
   deterministic search for an exactly re-checked counterexample; failing both, ``unknown``.

z3 runs under a deterministic resource limit (``rlimit``), never a wall-clock timeout, so the same
input gives the same verdict on every machine.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import sympy as sp
import z3

from derive.errors import TranslationError
from derive.kernel.logic import Formula, Rel
from derive.kernel.problem import Outcome, Problem, confirms
from derive.kernel.translate import Translator, make_variables, z3_value_to_rational

SIMPLIFY_MAX_OPS = 80


def decide(problem: Problem) -> Outcome:
    """Decide ``hypotheses => goal``; see the module docstring for the order of work."""
    carrying = sorted(str(s) for s in problem.symbols() if set(s.assumptions0) - {"commutative"})
    if carrying:
        # sympy could settle relations over such symbols on its own, behind the prover's back
        return Outcome("unknown", "none", f"symbol(s) {', '.join(carrying)} carry sympy assumptions; "
                       "state domains as hypotheses instead")
    quick = _sympy_identity(problem)
    if quick is not None:
        return quick
    try:
        return _decide_z3(problem)
    except TranslationError as err:
        if err.never:
            return Outcome("unknown", "none", f"cannot be expressed: {err.message}")
        from derive.kernel.interval import decide_interval  # lazy: mpmath only when needed

        outcome = decide_interval(problem, reason=err.message)
        if outcome.verdict != "unknown":
            return outcome
        found = _search_counterexample(problem)
        if found is not None:
            return found
        return outcome


# z3 --------------------------------------------------------------------------------------------------

def _solver(problem: Problem, ctx: z3.Context) -> z3.Solver:
    s = z3.Solver(ctx=ctx)
    s.set("rlimit", problem.rlimit)
    return s


def _decide_z3(problem: Problem) -> Outcome:
    # A fresh context per problem: z3's answer (a model, or where a search stops under the resource
    # limit) then depends on this problem alone, not on what the process solved before.
    ctx = z3.Context()
    variables = make_variables(problem.symbols(), ctx=ctx)
    tr = Translator(variables, ctx)
    hyps = [tr.formula(h) for h in problem.hypotheses]
    goal = tr.formula(problem.goal)
    s = _solver(problem, ctx)
    for sym in problem.integer:
        if sym in variables:
            s.add(z3.IsInt(variables[sym]))
    s.add(*tr.definitions)
    s.add(*hyps)

    consistent = s.check()
    if consistent == z3.unsat:
        return Outcome("inconsistent", "z3", "the assumptions contradict each other")
    if consistent == z3.unknown:
        return Outcome("unknown", "z3", _unsat_reason(s))

    positive = _positive_symbols(problem.hypotheses)
    pending = [ob for ob in tr.obligations if not _surely_positive(ob.expr, positive)]
    if len(pending) > 1:  # usually all hold: one query settles them together
        s.push()
        s.add(z3.Or([ob.violated() for ob in pending]))
        if s.check() == z3.unsat:
            pending = []
        s.pop()
    for ob in pending:
        s.push()
        s.add(ob.violated())
        r = s.check()
        s.pop()
        if r != z3.unsat:
            what = "may be zero" if ob.kind == "nonzero" else "may be negative"
            return Outcome("unknown", "z3",
                           f"{ob.describe()} {what} under the assumptions; state an assumption that rules it out")

    s.push()
    s.add(z3.Not(goal))
    r = s.check()
    if r == z3.unsat:
        return Outcome("proved", "z3")
    if r == z3.unknown:
        return Outcome("unknown", "z3", f"z3 gave up ({s.reason_unknown()})")
    model = s.model()
    point: dict[sp.Symbol, sp.Rational] = {}
    exact = True
    for sym, var in variables.items():
        value, was_exact = z3_value_to_rational(model.eval(var, model_completion=True))
        point[sym] = value
        exact = exact and was_exact
    if confirms(problem, point):
        return Outcome("refuted", "z3", counterexample={str(k): v for k, v in point.items()}, recheck="exact")
    nearby = _rational_neighbour(problem, point)
    if nearby is not None:
        return Outcome("refuted", "z3", counterexample={str(k): v for k, v in nearby.items()}, recheck="exact")
    why = "irrational values" if not exact else "values"
    return Outcome("unknown", "z3", f"z3's counterexample uses {why} that exact re-evaluation does not confirm")


def _positive_symbols(hypotheses: Sequence[Formula]) -> set[sp.Symbol]:
    """Symbols a hypothesis states to be > 0 directly (the quantities' domains)."""
    return {h.lhs for h in hypotheses
            if isinstance(h, Rel) and h.op == ">" and h.rhs == 0 and isinstance(h.lhs, sp.Symbol)}


def _surely_positive(e: sp.Expr, positive: set[sp.Symbol]) -> bool:
    """A syntactic proof that ``e > 0``: products, sums and rational powers of positive symbols and
    positive numbers.  It spares z3 the obvious obligations; anything else goes to z3."""
    if isinstance(e, sp.Symbol):
        return e in positive
    if e.is_Rational:
        return e > 0
    if isinstance(e, (sp.Mul, sp.Add)):
        return all(_surely_positive(a, positive) for a in e.args)
    if isinstance(e, sp.Pow):
        return e.exp.is_Rational and _surely_positive(e.base, positive)
    return False


def _rational_neighbour(problem: Problem, point: Mapping[sp.Symbol, sp.Rational]) -> dict | None:
    """z3 may answer with algebraic numbers; try simple rationals close to them."""
    for digits in (3, 6, 12, 24):
        cand = {k: sp.nsimplify(sp.Float(v, 40), tolerance=sp.Rational(1, 10**digits), rational=True)
                for k, v in point.items()}
        if confirms(problem, cand):
            return cand
    return None


# sympy identities -----------------------------------------------------------------------------------

def _sympy_identity(problem: Problem) -> Outcome | None:
    """A goal ``a == b`` that sympy reduces to 0 = 0, re-checked by a second method."""
    goal = problem.goal
    if not (isinstance(goal, Rel) and goal.op == "=="):
        return None
    diff = goal.lhs - goal.rhs
    if (diff != 0 and not diff.free_symbols) or diff.has(sp.Max, sp.Min, sp.Piecewise, sp.Abs):
        return None  # plain numbers and max/min/abs are z3's job; sympy's simplify only costs time here
    reduced = sp.cancel(sp.together(sp.expand(diff)))
    if reduced != 0 and not _is_rational_function(diff) and sp.count_ops(diff) <= SIMPLIFY_MAX_OPS:
        # sympy has no resource limit, so its general simplifier only sees small expressions
        reduced = sp.simplify(diff)
    if reduced != 0:
        return None
    # Second method.  z3 when the identity is expressible (it also checks the hypotheses are
    # satisfiable and the denominators non-zero); otherwise exact evaluation at sample points.
    try:
        z = _decide_z3(problem)
    except TranslationError:
        z = None
    if z is not None:
        if z.verdict == "proved":
            return Outcome("proved", "sympy", recheck="z3")
        if z.verdict in ("inconsistent", "refuted"):
            # A refutation here carries an exactly re-checked counterexample, so it outranks sympy.
            return z
        if "may be zero" in (z.reason or "") or "may be negative" in (z.reason or ""):
            return z
    agree = _samples_agree(problem)
    if agree is None:
        return Outcome("unknown", "sympy", "sympy reduces the identity to 0 = 0 but no sample point satisfying the "
                       "assumptions was found to re-check it")
    if agree:
        consistent = _consistency_only(problem)
        if consistent is not None:
            return consistent
        return Outcome("proved", "sympy", recheck="exact")
    return Outcome("unknown", "sympy", "sympy's identity failed the re-check by exact evaluation")


def _consistency_only(problem: Problem) -> Outcome | None:
    """Hypotheses must be satisfiable even when the goal itself is not expressible in z3."""
    try:
        ctx = z3.Context()
        variables = make_variables(set().union(*(h.free_symbols() for h in problem.hypotheses))
                                   if problem.hypotheses else set(), ctx=ctx)
        tr = Translator(variables, ctx)
        s = _solver(problem, ctx)
        s.add(*[tr.formula(h) for h in problem.hypotheses])
        s.add(*tr.definitions)
    except TranslationError:
        return None
    r = s.check()
    if r == z3.unsat:
        return Outcome("inconsistent", "z3", "the assumptions contradict each other")
    if r == z3.unknown:
        return Outcome("unknown", "z3", _unsat_reason(s))
    return None


def _is_rational_function(e: sp.Expr) -> bool:
    return all(isinstance(a, (sp.Symbol, sp.Number, sp.Add, sp.Mul)) or
               (isinstance(a, sp.Pow) and a.exp.is_Integer)
               for a in sp.preorder_traversal(e))


_CONCRETE_FUNCTIONS = (
    lambda x: x**2 + 1,
    lambda x: 3 * x - sp.Rational(2, 7),
    lambda x: x**3 - 2 * x,
)


def _samples_agree(problem: Problem, count: int = 6) -> bool | None:
    """Evaluate both sides exactly at points satisfying the hypotheses (undefined functions are
    replaced by concrete polynomials, since an identity in ``f`` must hold for every ``f``)."""
    goal = problem.goal
    assert isinstance(goal, Rel)
    rng = random.Random(problem.seed)
    funcs = {a.func for a in sp.preorder_traversal(goal.lhs - goal.rhs)
             if isinstance(a, sp.Function) and isinstance(a.func, sp.core.function.UndefinedFunction)}
    checked = 0
    for _attempt in range(60):
        point = _random_point(problem, rng)
        try:
            if any(not h.evaluate(point) for h in problem.hypotheses):
                continue
        except (ValueError, TypeError, ZeroDivisionError):
            continue
        for concrete in _CONCRETE_FUNCTIONS if funcs else (None,):
            expr = goal.lhs - goal.rhs
            if concrete is not None:
                expr = expr.replace(lambda a: isinstance(a, sp.Function) and a.func in funcs,
                                    lambda a, f=concrete: f(a.args[0]))
            value = expr.xreplace(point)
            if value.free_symbols:
                return False
            if value.is_zero is not True:
                # closed-form numbers (exp, log, roots of rationals): 60 significant digits decide
                try:
                    if abs(sp.N(value, 60)) > sp.Float(10) ** -40:
                        return False
                except TypeError:
                    return False
        checked += 1
        if checked >= count:
            return True
    return True if checked else None


def _random_point(problem: Problem, rng: random.Random) -> dict[sp.Symbol, sp.Rational]:
    point = {}
    for sym in sorted(problem.symbols(), key=str):
        if sym in problem.bounds:
            lo, hi = problem.bounds[sym]
            value = lo + (hi - lo) * sp.Rational(rng.randint(0, 1000), 1000)
        else:
            value = sp.Rational(rng.randint(1, 999), rng.choice((1, 7, 10, 100))) * rng.choice((1, 1, 10, 1000))
        if sym in problem.integer:
            value = sp.Integer(max(1, int(value)))
        point[sym] = value
    return point


def _search_counterexample(problem: Problem, tries: int = 200) -> Outcome | None:
    """A bounded, deterministic search.  It can refute (with an exact re-check) but never prove."""
    rng = random.Random(problem.seed)
    for _ in range(tries):
        point = _random_point(problem, rng)
        if confirms(problem, point):
            return Outcome("refuted", "exact", counterexample={str(k): v for k, v in point.items()},
                           recheck="exact")
    return None


def _unsat_reason(s: z3.Solver) -> str:
    return f"could not establish that the assumptions are satisfiable ({s.reason_unknown()})"
