"""How the prover runs z3: which procedures, in what order, on what share of the budget.  Not trusted.

The trusted gate (``derive.kernel.trusted.gate``) translates every query and reads every answer itself;
this module only hands it configured solvers (``TacticSolver.attempts``), says in words why none
answered (``why_unknown``) and offers simple rationals near a model's point (``near``), which the gate
re-checks like any other candidate.  A mistake here can cost an answer (``unknown``), never a wrong
verdict: z3's ``unsat`` is z3's whichever procedure gave it, and every model is re-checked.

The order, and why:

* Every quantity an integer and every relation linear: z3's QF_LIA procedure, alone.
* Without auxiliary root variables: nlsat first, behind the three steps it needs (``_nlsat``), on
  ``NLSAT_SHARE`` of the rlimit (``NLSAT_INTEGER_SHARE`` where some quantities are integers) and at most
  ``NLSAT_MS`` of wall clock.  Building and freeing z3's default tactic (a portfolio for every logic)
  costs more than most of these queries, and nlsat's ``unsat`` is the answer most goals get.  Its
  ``sat`` is provisional: where a model is wanted the default tactic's is asked for.  The prover asks for
  the first model (``model=False``) and only asks again where the kernel confirms neither nlsat's point nor
  a simple rational near it (on the libraries' 17 refutations nlsat's points were as simple, and the
  default tactic's second solve was a twelfth of a cold serving check's CPU).  Not with roots: there
  nlsat's algebraic numbers reach steps its rlimit does not interrupt (x > 1 with x**(5/3), x**(4/3),
  sqrt(x), x**(3/2) ran into the 60 s safety net at any share above 1e6; the default tactic refutes it).
  The wall-clock cap: nlsat can pass its share inside one step as well (a degree-15 polynomial in three
  quantities ran into the 60 s net, where the default tactic refutes it in 14 s); the libraries' tries
  take at most 30 ms, and a try cut short falls back to the default tactic.  With integer quantities
  nlsat reads their integrality itself (``is_int``, by branching), which settles a goal over counts in
  a millisecond where ``z3.Solver()`` took five to twelve; but on an integer equation with no solution
  and no bound (3n + 6m = 5) it branches until its share is spent, so the share is a fortieth (half a
  million at the default rlimit, about 40 ms; the libraries' integer queries spend at most 12,000).
* Then z3's default tactic as a solver of its own (not with integer quantities), on the full rlimit; then
  ``z3.Solver()``, which runs the same tactic beside an incremental core that receives and frees every
  assertion, asked only when the tactic gives up as incomplete (not when it ran out of budget).  With
  integer quantities the solver has seen ``push``: it keeps the incremental preprocessing, whose steps
  the rlimit bounds (the tactic pipeline's Groebner saturation ran a one-line claim for minutes within a
  1e6 rlimit).
* ``Z3_SAFETY_MS`` of wall clock, for the region's query and for all of a goal's queries together, as a
  net under steps the rlimit does not interrupt.  It can only turn an answer into ``unknown``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Mapping

import sympy as sp
import z3

NLSAT_SHARE = 0.25  # of the rlimit, for the first, cheaper try of a query without integers
NLSAT_INTEGER_SHARE = 0.025  # of the rlimit, for that try where some quantities are integers (the docstring)
NLSAT_MS = 2_000  # and a wall-clock cap on that try only (see the module docstring)
Z3_SAFETY_MS = 60_000  # a wall-clock safety net only, for z3 steps its rlimit does not interrupt: for the
# region's query, and for all of a goal's queries together


def _nlsat(ctx: z3.Context) -> z3.Solver:
    """nlsat behind the three steps it needs and nothing more: ``If`` terms (Max, Min, Piecewise) named,
    divisions and roots purified (without z3's completion of division by zero: the kernel's region has
    every denominator nonzero), the formula put in clauses.  z3's ``qfnra-nlsat`` runs eleven more
    (simplification, equation solving, factoring) before the same procedure: they took a third of its
    time on the libraries' queries (1,182 of them: the same answers, 1.8 s against 2.6 s), and a query
    they would have helped falls back to the default tactic as before."""
    steps = [z3.Tactic("elim-term-ite", ctx), z3.With(z3.Tactic("purify-arith", ctx), complete=False),
             z3.Tactic("tseitin-cnf", ctx), z3.Tactic("nlsat", ctx)]
    return z3.Then(*steps, ctx=ctx).solver()


def _out_of_budget(reason: str) -> bool:
    """Whether z3's reason for ``unknown`` is its rlimit ("... limit ...", or "canceled" from a tactic
    that its rlimit stopped) or its wall-clock net ("timeout")."""
    return "limit" in reason or "canceled" in reason or "timeout" in reason


class TacticSolver:
    """The prover's z3 tactics for one problem (one per ``Kernel``: it keeps the goal's wall clock)."""

    name = "tactics"

    def __init__(self) -> None:
        self.spent_ms = 0.0  # wall clock z3 spent on this goal's queries (see Z3_SAFETY_MS)
        # the last solver made: its wall-clock cap and when it was made.  z3 says "canceled" both where
        # its rlimit and where its timeout stopped it, so why_unknown tells them apart by the clock
        self._last: tuple[z3.Solver, float, float] | None = None

    def attempts(self, *, rlimit: int, integer: bool, linear_integer: bool, roots: bool,
                 alone: bool) -> Iterator[tuple[Callable[[z3.Context], z3.Solver], str]]:
        """Makers of configured solvers in the order of the module docstring, each with its role
        (``final``, ``provisional``: see ``derive.kernel.trusted.query.Tactics``); the next is
        offered only when the gate asks for it (the last gave no final answer)."""
        left_ms = float(Z3_SAFETY_MS)
        if not alone:  # the safety net is for all of the goal's queries together, not for each
            left_ms = Z3_SAFETY_MS - self.spent_ms
            if left_ms < 1000:
                return
        start = time.perf_counter()
        made: list[z3.Solver] = []  # the last solver made, whose reason a give-up is read from

        def maker(build: Callable[[z3.Context], z3.Solver], share: int, cap_ms: float = math.inf,
                  push: bool = False) -> Callable[[z3.Context], z3.Solver]:
            def make(ctx: z3.Context) -> z3.Solver:
                solver = build(ctx)
                solver.set("rlimit", share)
                timeout_ms = max(1, int(min(cap_ms, left_ms - 1000 * (time.perf_counter() - start))))
                solver.set("timeout", timeout_ms)
                if push:
                    solver.push()
                made[:] = [solver]
                self._last = (solver, timeout_ms, time.perf_counter())
                return solver
            return make

        try:
            if linear_integer:
                yield maker(lambda ctx: z3.SolverFor("QF_LIA", ctx=ctx), rlimit), "final"
                return
            nlsat_share = max(1, int(rlimit * (NLSAT_INTEGER_SHARE if integer else NLSAT_SHARE)))
            if not roots:
                yield maker(_nlsat, nlsat_share, NLSAT_MS), "provisional"
            if not integer:
                yield maker(lambda ctx: z3.Tactic("default", ctx).solver(), rlimit), "final"
                if made and _out_of_budget(made[0].reason_unknown()):
                    return
            yield maker(lambda ctx: z3.Solver(ctx=ctx), rlimit, push=integer), "final"
        finally:
            if not alone:
                self.spent_ms += 1000 * (time.perf_counter() - start)

    def why_unknown(self, solver: z3.Solver | None, rlimit: int) -> str:
        if solver is None:
            return f"z3's wall-clock safety net ({Z3_SAFETY_MS // 1000} s for a goal) is spent"
        why = solver.reason_unknown()
        if "timeout" in why or (_out_of_budget(why) and self._clock_ran_out(solver)):
            return f"z3's wall-clock safety net ({Z3_SAFETY_MS // 1000} s for a goal) reached"
        return f"z3 resource limit (rlimit {rlimit}) reached" if _out_of_budget(why) else f"z3 gave up ({why})"

    def _clock_ran_out(self, solver: z3.Solver) -> bool:
        """Whether ``solver``, the last one made, ran for its whole wall-clock cap: then its "canceled" was
        the clock's, not the rlimit's (a cap cut short by the clock is the safety net's only where it is
        the net: NLSAT_MS never ends an attempt on its own, a later solver follows it)."""
        if self._last is None or self._last[0] is not solver:
            return False
        _, timeout_ms, made_at = self._last
        return 1000 * (time.perf_counter() - made_at) >= 0.95 * timeout_ms

    def near(self, point: Mapping[sp.Symbol, sp.Rational] | None) -> Iterator[dict]:
        """Simple rationals near an (approximated) point: z3 may answer with algebraic numbers."""
        if not point:
            return
        for digits in (3, 6, 12, 24):
            yield {k: sp.nsimplify(sp.Float(v, 40), tolerance=sp.Rational(1, 10**digits), rational=True)
                   for k, v in point.items()}
