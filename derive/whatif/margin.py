"""Margins: the exact set of values of one quantity over which a claim holds, the rest of the scenario fixed.

``margin(library, scenario, claim, vary)`` reads the claim with *instance semantics*: its goal, its
own hypotheses, the relations of the assumptions it rests on and the scenario's ``--assume``
relations that share a quantity with it are expanded to base quantities (pinned quantities stay
symbols, and a varied derived quantity is pinned too), and every scenario value except the varied
quantity's is substituted.  What is left is a formula in one variable ``x``.  The claim *holds* at
``x`` when the hypotheses and the goal are all true there (where a hypothesis fails the check would
say ``inconsistent``, not ``proved``).  Derivation steps are the proof, not the statement: they do not
enter the margin.

The set is computed exactly, by cell decomposition:

1. every relation ``lhs op rhs`` of the formula gives its critical points: the real zeros of
   ``lhs - rhs`` and of its denominators, found by ``sympy.solveset`` over the reals (``Max``, ``Min``
   and ``Abs`` are rewritten as ``Piecewise`` first, whose pieces and conditions contribute their own
   zeros).  Between two consecutive critical points no relation changes truth value;
2. the formula is evaluated *exactly* (``Formula.evaluate``, algebraic numbers allowed) at every
   critical point inside the quantity's domain and at one rational point in every open cell between;
3. the true cells and points are merged into intervals with exact endpoints, open or closed.

Each finite endpoint is then cross-checked by z3 through ``derive.kernel.prover.decide``: just inside and just
outside (exact rationals a small relative distance from the endpoint, closer than any other critical
point) and at the endpoint itself when it is rational; a disagreement is reported (``verified`` false).

A claim with ``forall`` quantities other than the varied one is not supported yet (the set would need
quantifier elimination).  The varied thing may also be an expression in quantities (``flops/hbm_bandwidth``):
it is then solved for one of its quantities (the first, in name order, with a unique solution) and
that quantity is eliminated: its domain becomes a hypothesis on ``x`` (``a + b`` with ``a > 0`` and
``b = 1`` needs ``x > 1``), and values that leave the expression independent of it (``a*b`` at ``b = 0``)
are refused.  A claim the kernel gives no meaning (a float: ``derive.kernel.trusted.refusal``)
has no margin either, and a point the kernel cannot evaluate ends the margin with the reason: only a
point where the claim is certainly undefined (a zero denominator, a negative radicand) counts as false.

Built on margins: the robustness table (``derive.whatif.robustness``); two quantities at once are a sampled
region (``derive.whatif.region``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import signal
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import sympy as sp

from derive.errors import MarginError, MissingValueError
from derive.kernel.logic import And, Formula, IsInteger, Rel, children
from derive.kernel.trusted import side_conditions
from derive.model.declarations import Assumption, Claim, Quantity
from derive.model.evaluate import DomainBreak, domain_breaks
from derive.model.library import Library
from derive.model.scenario import Scenario, broken_input_constraints, follow_links, with_input_table_defaults
from derive.model.situation import eliminate_forall, input_notes, relations, situate
from derive.whatif.feasibility import feasibility, upper_limits
from derive.whatif.rules import names_a_rule, refused_at


@dataclass(frozen=True)
class Interval:
    """``low .. high`` in SI units; ``None`` for an unbounded end."""

    low: sp.Expr | None
    high: sp.Expr | None
    low_closed: bool
    high_closed: bool

    def contains(self, v: sp.Expr) -> bool:
        if self.low is not None and (v < self.low or (v == self.low and not self.low_closed)):
            return False
        if self.high is not None and (v > self.high or (v == self.high and not self.high_closed)):
            return False
        return True

    def text(self, scale: sp.Rational | None = None) -> str:
        scale = sp.Integer(1) if scale is None else scale
        lo = "-inf" if self.low is None else str(self.low / scale)
        hi = "inf" if self.high is None else str(self.high / scale)
        return f"{'[' if self.low_closed else '('}{lo}, {hi}{']' if self.high_closed else ')'}"


@dataclass(frozen=True)
class BoundaryCheck:
    """z3's verdict at a point near an endpoint, against the computed set."""

    point: sp.Rational
    where: str  # "inside", "outside" or "at"
    expected: bool  # in the computed set?
    verdict: str  # proved | refuted | inconsistent | unknown

    @property
    def agrees(self) -> bool:
        return (self.verdict == "proved") == self.expected and self.verdict != "unknown"

    @property
    def confirmed(self) -> bool:
        """z3 decided the point (``unknown`` neither agrees nor disagrees: it could not confirm)."""
        return self.verdict != "unknown"

    def to_json(self, scale: sp.Rational) -> dict:
        return {"point": str(self.point / scale), "where": self.where, "in_set": self.expected,
                "z3": self.verdict, "agrees": self.agrees if self.confirmed else None}


@dataclass(frozen=True)
class RuleEnd:
    """An end of a margin's interval at which the varied quantity breaks an input rule of the library: the value
    there (an integer quantity's last integer inside the interval), the rules it breaks, and the nearest value
    inside the interval that meets them all (integer quantities; None when none was found in ``searched``)."""

    side: str  # "low" or "high"
    end: sp.Expr  # the interval's end (SI)
    value: sp.Rational  # the value checked (SI)
    broken: tuple[str, ...]  # each rule with its numbers: "tp divides query_heads (tp = 28, query_heads = 64)"
    ids: tuple[str, ...]
    nearest: sp.Rational | None = None
    searched: tuple[sp.Rational, sp.Rational] | None = None  # the values searched for ``nearest`` (integers)

    def to_json(self, scale: sp.Rational) -> dict:
        return {"side": self.side, "end": str(self.end / scale), "value": str(self.value / scale),
                "broken": list(self.ids), "rules": list(self.broken),
                "nearest_meeting_rules": None if self.nearest is None else str(self.nearest / scale)}


@dataclass
class Margin:
    id: str
    vary: str
    unit: str  # the unit of every number of the result
    scale: sp.Rational  # SI value = number * scale
    intervals: list[Interval]
    domain: str
    integer: bool
    formula: Formula  # the one-variable formula that was solved (x in SI units)
    symbol: sp.Symbol
    value: sp.Expr | None = None  # the scenario's value of the varied quantity (SI)
    checks: list[BoundaryCheck] = field(default_factory=list)
    eliminated: str | None = None  # for an expression: the quantity solved for
    notes: list[str] = field(default_factory=list)
    # at the scenario value, are the hypotheses (domain, assumptions, --assume) true?  False: the check there says
    # ``inconsistent``, not ``refuted``; None: not asked (the claim holds there, or no value)
    hypotheses_at_value: bool | None = None
    # at the scenario value, only what a definition the goal reads declares of its value fails (a share past 1):
    # the claim is not read there (check: unknown), the margin's sets being where it is read
    unread_at_value: bool = False
    instance: bool = True  # an instance claim (checked at the scenario's values); a general one is read as one here
    # ends of the set where the varied quantity's value breaks one of the library's input rules (a non-divisor
    # tensor-parallel degree): what --set would refuse there, and the nearest value inside that it accepts
    rule_ends: list[RuleEnd] = field(default_factory=list)
    # where the hypotheses fail at the scenario value because a definition's domain does: which, in words
    outside_domain: DomainBreak | None = None
    # the claim holds nowhere because its hypotheses (the varied quantity's domain included) hold for no value
    # of it at the scenario's other values: a general claim then says nothing anywhere (check: inconsistent)
    hypotheses_nowhere: bool = False
    # the varied quantity is a count the proofs read as a real (``Quantity.whole``): SI value per whole unit, or None
    whole_unit: sp.Rational | None = None
    # the feasibility bounds the scenario breaks (derive.whatif.feasibility.Violation): its value is printed, and no
    # deployment exists there
    infeasible: list = field(default_factory=list)
    # the feasibility bounds on the varied quantity itself (derive.whatif.feasibility.Limit) that end an interval
    # sooner than the claim does: past one, the claim's values describe no deployment (a context past the model's
    # maximum)
    limits: list = field(default_factory=list)

    @property
    def reading_at_value(self) -> str | None:
        """The claim read at the scenario value: proved, refuted, or inconsistent where the hypotheses themselves
        fail there (None without a value)."""
        if self.value is None:
            return None
        if self.holds_at_value:
            return "proved"
        if self.unread_at_value:
            return "unknown"
        return "inconsistent" if self.hypotheses_at_value is False else "refuted"

    @property
    def verdict_at_value(self) -> str | None:
        """What ``derive check`` says at the scenario value, for an instance claim (``reading_at_value``); None for a
        general claim, which the check decides for every value at once."""
        return self.reading_at_value if self.instance else None

    def whole_ranges(self) -> list[tuple[int, int | None]]:
        """The whole numbers of a count inside the intervals, as (first, last) with None for no end (empty
        unless the varied quantity is ``whole``)."""
        if self.whole_unit is None:
            return []
        out: list[tuple[int, int | None]] = []
        for i in self.intervals:
            low = None if i.low is None else i.low / self.whole_unit
            high = None if i.high is None else i.high / self.whole_unit
            first = 0 if low is None else int(sp.ceiling(low)) + (1 if low.is_integer and not i.low_closed else 0)
            first = max(first, 0)  # a count is never negative
            last = None if high is None else int(sp.floor(high)) - (1 if high.is_integer and not i.high_closed else 0)
            if last is None or first <= last:
                out.append((first, last))
        return out

    def _whole_text(self) -> str:
        words = [f"{a:,} and more" if b is None else (f"{a:,}" if a == b else f"{a:,} to {b:,}")
                 for a, b in self.whole_ranges()]
        return f"  ({self.vary} is counted in whole units: " + (", ".join(words) if words else "none") + ")"

    @property
    def verified(self) -> bool | None:
        """False on a real disagreement; True when z3 confirmed every point; None otherwise (no checks,
        or some points z3 could not decide)."""
        if not self.checks:
            return None
        if any(c.confirmed and not c.agrees for c in self.checks):
            return False
        return True if all(c.confirmed for c in self.checks) else None

    @property
    def holds_at_value(self) -> bool | None:
        if self.value is None:
            return None
        return self.around_value() is not None

    def around_value(self) -> Interval | None:
        """The interval that contains the scenario value, if any (none when an integer quantity's value is
        not an integer: no value of it, as the checker says ``inconsistent`` there)."""
        if self.value is None or (self.integer and self.value.is_integer is not True):
            return None
        return next((i for i in self.intervals if i.contains(self.value)), None)

    def to_json(self) -> dict:
        s = self.scale
        clamped: list[str] = []

        def end(v: sp.Expr | None) -> float | None:
            """An end as a float; ``None`` only for an unbounded end (an end beyond the float range was
            infinite, i.e. null: it read as unbounded).  Beyond the range: the largest float, and a note."""
            if v is None:
                return None
            f = float(v / s)
            if math.isinf(f):
                f = math.copysign(sys.float_info.max, f)
            elif f == 0 and v != 0:
                f = 5e-324 if v > 0 else -5e-324  # the nearest nonzero float (0.0 would move an open end)
            else:
                return f
            clamped.append(f"{f:g}")
            return f

        holds_on = [[end(i.low), end(i.high)] for i in self.intervals]
        out = {
            "id": self.id, "vary": self.vary, "unit": self.unit,
            "holds_on": holds_on,
            "exact": [[None if i.low is None else str(i.low / s), None if i.high is None else str(i.high / s)]
                      for i in self.intervals],
            "closed": [[i.low_closed, i.high_closed] for i in self.intervals],
            "domain": self.domain, "integer": self.integer,
            "whole": None if self.whole_unit is None else [[a, b] for a, b in self.whole_ranges()],
            "value": None if self.value is None else float(self.value / s),
            "holds_at_value": self.holds_at_value, "verdict_at_value": self.verdict_at_value,
            "formula": str(self.formula), "eliminated": self.eliminated,
            "verified": self.verified, "checks": [c.to_json(s) for c in self.checks],
            "method": "sympy solveset critical points + exact evaluation per cell; endpoints cross-checked by z3",
            "notes": self.notes, "hypotheses_nowhere": self.hypotheses_nowhere,
            "input_rules_at_ends": [r.to_json(s) for r in self.rule_ends],
            "infeasible": [v.to_json() for v in self.infeasible],
            "feasible_up_to": [{"claim": lim.claim, "relation": lim.relation, "value": float(lim.value / s),
                                "exact": str(lim.value / s), "strict": lim.strict} for lim in self.limits],
            "display": {"holds_on": [self.interval_text(i) for i in self.intervals],
                        "value": None if self.value is None else self.shown(self.value)},
        }
        if clamped:
            out["holds_on_note"] = ("ends beyond the range of a float are written as the nearest float ("
                                    + ", ".join(clamped) + "), not as null (unbounded); \"exact\" has them")
        return out

    def shown(self, si_value: sp.Expr) -> str:
        """A number of this result for people: ``56.25 GB/s`` (the unit asked for is kept)."""
        from derive.model.display import format_value
        from derive.model.units import parse_unit

        fixed = parse_unit(self.unit).scale != 1
        return format_value(si_value / self.scale, self.unit, fixed=fixed)

    def _exact(self, si_value: sp.Expr) -> bool:
        from derive.model.display import shown
        from derive.model.units import parse_unit

        return bool(shown(si_value / self.scale, self.unit, fixed=parse_unit(self.unit).scale != 1).exact)

    def _rounded(self, si_value: sp.Expr) -> str:
        """``= 24 PFLOP/s``, or ``≈ 24.24 PFLOP/s (exactly 3030000000000001/125000000000000)`` when rounded."""
        if self._exact(si_value):
            return f"= {self.shown(si_value)}"
        exact = si_value / self.scale
        note = f" (exactly {exact} {self.unit})" if exact.is_Rational and len(str(exact)) <= 40 else ""
        return f"≈ {self.shown(si_value)}{note}"

    def _end_text(self, si_value: sp.Expr, *, upper: bool) -> str:
        """An end of an interval, printed inside it (a value read off the page holds): ``254.9 seq``, not ``255``."""
        from derive.model.display import format_value_bound
        from derive.model.units import parse_unit

        return format_value_bound(si_value / self.scale, self.unit, upper=upper,
                                  fixed=parse_unit(self.unit).scale != 1)

    def interval_text(self, i: Interval) -> str:
        lo = "-∞" if i.low is None else self._end_text(i.low, upper=False)
        hi = "∞" if i.high is None else self._end_text(i.high, upper=True)
        return f"{'[' if i.low_closed and i.low is not None else '('}{lo}, {hi}" \
               f"{']' if i.high_closed and i.high is not None else ')'}"

    def text_lines(self) -> list[str]:
        sets = " ∪ ".join(self.interval_text(i) for i in self.intervals) or "nowhere (empty set)"
        out = [f"{self.id} holds for {self.vary} in {sets}"]
        if self.hypotheses_nowhere:
            out[0] = (f"{self.id} holds for no {self.vary}: its hypotheses hold for no value of {self.vary} at the "
                      "scenario's other values, so " + ("it is inconsistent at every one (derive check: "
                                                         "inconsistent)" if self.instance else
                                                         "it says nothing at any of them (derive check decides "
                                                         "it where they hold, over every value at once)"))
        if self.integer:
            out.append(f"  ({self.vary} is an integer quantity: only the integers of these intervals count)")
        elif self.whole_unit is not None:
            out.append(self._whole_text())
        if self.value is not None:
            state = {"proved": "holds", "refuted": "does NOT hold",
                     "inconsistent": "does NOT hold: its assumptions contradict each other there "
                                     "(derive check: inconsistent)" if self.instance else
                                     "says nothing: its hypotheses fail at this value, and a general claim says "
                                     "nothing there (derive check decides it where they hold)",
                     "unknown": "is not read: a definition it reads breaks what it declares there (derive check: "
                                "unknown)"}[self.reading_at_value
                                                                                                or "refuted"]
            out.append(f"  scenario value {self.vary} {self._rounded(self.value)}: the claim {state}")
        rounded = [e for i in self.intervals for e in (i.low, i.high) if e is not None and not self._exact(e)]
        if rounded:  # 24.24 PFLOP/s shown for an end and for a value beside it: the exact numbers decide
            out.append("  (numbers rounded for display; exact ends: "
                       + " ∪ ".join(i.text(self.scale) for i in self.intervals) + f" in {self.unit})")
        if self.eliminated:
            out.append(f"  ({self.eliminated} eliminated: solved from {self.vary} = {self.symbol})")
        # the solved formula is in SI base units (numbers like 900000000000): JSON "formula" keeps it
        if self.checks:
            ok = sum(c.confirmed and c.agrees for c in self.checks)
            open_ = sum(not c.confirmed for c in self.checks)
            out.append(f"  z3 cross-check of the endpoints: {ok}/{len(self.checks)} points agree"
                       + (f", {open_} could not be confirmed (z3: unknown)" if open_ else "")
                       + ("  <-- DISAGREEMENT" if self.verified is False else ""))
        out += [f"  note: {n}" for n in self.notes]
        out += [f"  note: {self._rule_end_text(r)}" for r in self.rule_ends]
        out += [f"  note: infeasible {'from' if lim.strict else 'past'} {self._end_text(lim.value, upper=True)}: "
                f"{lim.relation} "
                f"with {lim.shown} ({lim.claim})" for lim in self.limits]
        return out + [v.note for v in self.infeasible]

    def _rule_end_text(self, r: RuleEnd) -> str:
        """``at tp = 28, the largest integer below the end 28.57: impossible there: ...; the largest tp below it
        that meets the input rules: 8``."""
        near = "largest" if r.side == "high" else "smallest"
        if self.integer and r.value != r.end:
            where = (f"at {self.vary} = {self.shown(r.value)}, the {near} integer "
                     f"{'below' if r.side == 'high' else 'above'} the end {self.shown(r.end)}")
        elif self.eliminated and r.value != r.end:  # an expression: where its eliminated quantity is whole
            where = (f"at {self.vary} = {self.shown(r.value)}, the {near} value "
                     f"{'below' if r.side == 'high' else 'above'} the end {self.shown(r.end)} with a whole "
                     f"{self.eliminated}")
        else:
            where = f"at the end {self.vary} = {self.shown(r.value)}"
        text = f"{where}: impossible there ({'; '.join(r.broken)}: --set would refuse it)"
        if (self.integer or self.eliminated) and r.nearest is not None:
            text += (f"; the {'largest' if r.side == 'high' else 'smallest'} {self.vary} of the interval that meets "
                     f"the input rules: {self.shown(r.nearest)}")
        elif (self.integer or self.eliminated) and r.searched is not None:
            lo, hi = sorted(r.searched)
            text += f"; no {self.vary} from {self.shown(lo)} to {self.shown(hi)} meets the input rules"
        return text


# the varied thing ------------------------------------------------------------------------------------

@dataclass
class _Varied:
    text: str
    symbol: sp.Symbol  # the free variable of the solved formula
    pinned: frozenset[str]  # extra pins (a varied derived quantity)
    keep: frozenset[str]  # quantities not substituted
    replace: dict  # symbol -> expression of `symbol` (for an expression: the eliminated quantity)
    domain: str
    integer: bool
    dimension: object
    value: sp.Expr | None
    eliminated: str | None = None
    extra: tuple[Formula, ...] = ()  # the eliminated quantity's domain, in terms of ``symbol``
    expression: sp.Expr | None = None  # the varied expression (in quantities)


def _varied(library: Library, scenario: Scenario, text: str) -> _Varied:

    text = text.strip()
    if text in library.quantities:
        q: Quantity = library.quantities[text]
        if q.value is not None:
            raise MarginError(f"'{text}' is a constant of the library ({q.value}); it cannot vary", never=True)
        pinned = frozenset([text]) if library.is_derived(text) else frozenset()
        return _Varied(text, q.sym, pinned, frozenset([text]), {}, q.domain, q.integer, q.dimension,
                       scenario.value(text) if text in scenario.values else _derived_value(library, scenario, q))
    from derive.model.parse import parse_quantity_expression
    from derive.model.units import format_dimension

    name, eq, rest = text.partition("=")
    if eq and name.strip() and not rest.startswith("="):  # a sweep's NAME=LO:HI:N: a margin finds the range itself
        raise MarginError(f"--vary {text} gives a range, as derive sweep takes it; a margin varies one quantity over "
                          f"all its values and finds where the claim holds", never=True,
                          hint=f"--vary {name.strip()}" + (" (derive sweep for a grid)" if ":" in rest else ""))
    expr, dim = parse_quantity_expression(text, library.symbols(), library.dimension, where="--vary")
    if any(p.denominator != 1 for _, p in dim.powers):
        raise MarginError(f"'{text}' has the dimension {format_dimension(dim)}, which no unit expresses",
                          hint="vary a quantity, or an expression of whole powers of quantities")
    name = "x"  # the free variable: a name no quantity of the library has (a quantity may well be called x)
    while name in library.quantities:
        name += "_"
    x = sp.Symbol(name)
    for s in sorted(expr.free_symbols, key=str):
        q = library.quantity_of(s)
        try:
            sols = sp.solve(sp.Eq(expr, x), s, dict=False)
        except (NotImplementedError, ValueError):
            continue
        sols = [e for e in sols if not e.has(sp.I)]
        if len(sols) == 1:
            others = [library.quantity_of(o) for o in expr.free_symbols if o != s]
            positive = all(o.domain == "positive" for o in [q, *others]) and (expr.is_Mul or expr.is_Pow)
            pinned = frozenset(o.name for o in others if library.is_derived(o.name))
            pinned |= frozenset([q.name]) if library.is_derived(q.name) else frozenset()
            value = None
            try:
                value = _value_of(library, scenario, expr)
            except MissingValueError:
                pass
            dom = q.domain_formula()
            return _Varied(text, x, pinned, frozenset([q.name]), {s: sols[0]},
                           "positive" if positive else "real", False, dim, value, eliminated=q.name,
                           extra=() if dom is None else (dom.subs({s: sols[0]}),), expression=expr)
    raise MarginError(f"cannot solve '{text}' = x for any one of its quantities",
                      hint="vary a single quantity, or an expression linear in one of them")


def _inverse_checked(library: Library, v: _Varied, solved: sp.Expr, subst: dict, rlimit: int | None) -> list[Formula]:
    """The solution ``q = solved(x)`` of ``expression = x`` is a valid change of variable only where it is
    defined for every value the expression takes, and only at the ``x`` the expression reaches: each side
    condition of ``solved`` must follow (proved by the kernel) from the expression's own, or the margin is
    refused (``a**3 = x`` solves as ``x**(1/3)``, undefined at x = -8 = (-2)**3); and ``expression(solved(x))
    = x`` is returned as a hypothesis (``sqrt(a) = x`` solves as ``a = x**2``, which reaches no x < 0)."""
    from derive.kernel.problem import DEFAULT_RLIMIT, Problem
    from derive.kernel.prover import decide

    assert v.expression is not None and v.eliminated is not None
    q = library.quantities[v.eliminated]
    expr = v.expression.subs(subst)
    own = [sc.condition for sc in side_conditions(expr)]
    dom = q.domain_formula()
    for sc in side_conditions(solved):
        if v.symbol not in sc.condition.free_symbols():
            continue
        problem = Problem([*([dom] if dom is not None else []), *own], sc.condition.subs({v.symbol: expr}),
                          {q.sym} if q.integer else set(), {}, rlimit or DEFAULT_RLIMIT)
        if decide(problem).verdict != "proved":
            raise MarginError(f"{v.text} = {v.symbol} solves as {q.name} = {solved}, which is not shown to be defined "
                              f"for every value {v.text} takes ({sc.kind}: {sc.condition})",
                              hint=f"vary {q.name} itself")
    back = expr.subs({q.sym: solved})
    # where the solution has no value no quantity gives that x (1/q = x reaches no x = 0, although sympy reads
    # 1/(1/x) as x): its side conditions bound the set
    reached = [sc.condition for sc in side_conditions(solved)]
    return reached + ([] if back == v.symbol else [Rel(back, "==", v.symbol)])


def _derived_value(library: Library, scenario: Scenario, q: Quantity) -> sp.Expr | None:
    try:
        return _value_of(library, scenario, q.sym)
    except MissingValueError:
        return None


def _value_of(library: Library, scenario: Scenario, expr: sp.Expr) -> sp.Expr:
    return situate(library, scenario).require(expr, str(expr))  # exact as given: never rounded (no nsimplify)


# the solver --------------------------------------------------------------------------------------------

MAX_SOLVE_DEGREE = 8  # above this degree in the input, a polynomial's zeros come from its factors (``_zeros``)
MAX_FACTOR_DEGREE = 32  # and above this one, a margin is refused (a budget: factoring took 1.5 s a polynomial at 64)
CLOSED_FORM_DEGREE = 4  # a factor of at most this degree is solved in closed form (radicals)


def _degree_bound(e: sp.Expr, x: sp.Symbol) -> int | None:
    """An upper bound on the degree in ``x`` of ``e``, read from its tree without expanding it; None where ``e`` is
    no polynomial in ``x`` as written (a negative or fractional power of it, a function of it)."""
    if not e.has(x):
        return 0
    if e == x:
        return 1
    if isinstance(e, sp.Add):
        parts = [_degree_bound(a, x) for a in e.args]
        return None if None in parts else max(parts)  # type: ignore[type-var]
    if isinstance(e, sp.Mul):
        parts = [_degree_bound(a, x) for a in e.args]
        return None if None in parts else sum(parts)  # type: ignore[arg-type]
    if isinstance(e, sp.Pow) and e.exp.is_Integer and e.exp >= 0 and not e.exp.has(x):
        inner = _degree_bound(e.base, x)
        return None if inner is None else inner * int(e.exp)
    return None


def _factor_zeros(numerator: sp.Expr, x: sp.Symbol, degree: int, above: sp.Expr | None = None) -> set[sp.Expr]:
    """The real zeros of a polynomial of high degree in ``x`` with rational coefficients, from its factors over the
    rationals: a factor of low degree solved in closed form, one without real roots (Sturm's count) skipped.  A
    deployment's expected expert reads, 1 - (1 - k/E)**B, are of degree B in E, and their polynomials split into
    a few small factors and large ones without real roots (B = 16 and 32: under a second), where sympy's
    solveset on the whole ran past the wall-clock net from degree 32 on.  ``above``: the low end of the input's
    domain (zeros at or below it are not wanted).  An irreducible factor of higher degree with a real root above
    it ends the margin: such roots are CRootOf numbers, which the kernel does not evaluate."""
    def refuse(what: str) -> MarginError:
        return MarginError(f"no margin over {x}: the claim changes truth at {what}",
                           hint="derive sweep evaluates it point by point")

    if degree > MAX_FACTOR_DEGREE:
        raise refuse(f"the roots of a polynomial of degree up to {degree} in {x}, past the margin's budget of degree "
                     f"{MAX_FACTOR_DEGREE}")
    try:
        poly = sp.Poly(numerator, x)
    except sp.PolynomialError:
        poly = None
    if poly is None or not (poly.domain.is_ZZ or poly.domain.is_QQ):
        raise refuse(f"the roots of a polynomial of degree up to {degree} in {x} whose coefficients are not rational")
    zeros: set[sp.Expr] = set()
    for factor, _ in poly.factor_list()[1]:
        if factor.degree() <= CLOSED_FORM_DEGREE or len(factor.terms()) == 2:  # a binomial's roots are radicals
            zeros |= _solved_zeros(factor.as_expr(), x)
        elif factor.count_roots(inf=above) > 0:  # Sturm's exact count of the real roots (at or above ``above``)
            raise refuse(f"a real root of an irreducible polynomial of degree {factor.degree()} in {x}, a number "
                         "with no closed form that the kernel evaluates")
    return zeros


def _zeros(e: sp.Expr, x: sp.Symbol, above: sp.Expr | None = None) -> set[sp.Expr]:
    """Real zeros of ``e`` in ``x`` (a superset; ``above``: the low end of the input's domain, for the zeros of a
    polynomial of high degree, whose roots at or below it are not looked for)."""
    if not e.has(x):
        return set()
    numerator = sp.numer(sp.together(e))
    degree = _degree_bound(numerator, x)
    if degree is not None and degree > MAX_SOLVE_DEGREE:  # solveset's time grows with the degree: factors first
        return _factor_zeros(numerator, x, degree, above)
    return _solved_zeros(e, x)


def _solved_zeros(e: sp.Expr, x: sp.Symbol) -> set[sp.Expr]:
    """The real zeros of ``e`` by sympy's solveset (a superset where it gives a set with a finite part)."""
    try:
        sol = sp.solveset(e, x, domain=sp.S.Reals)
    except (NotImplementedError, ValueError, TypeError) as err:
        raise MarginError(f"sympy cannot solve {sp.sstr(e)} = 0 for {x}: {err}") from None
    if sol is sp.S.EmptySet:
        return set()
    if isinstance(sol, sp.FiniteSet):
        return set(sol)
    try:  # zero on whole intervals (e.g. identically zero): only the ends of those intervals matter
        boundary = sol.boundary
    except (NotImplementedError, TypeError, AttributeError):
        boundary = None
    if boundary is sp.S.EmptySet:
        return set()
    if isinstance(boundary, sp.FiniteSet):
        return {p for p in boundary if p.is_finite}
    finite = _finite_superset(sol)
    if finite is not None and not any(p.has(sp.I, sp.re, sp.im) for p in finite):
        return {p for p in finite if p.is_real is not False}
    raise MarginError(f"the zeros of {sp.sstr(e)} in {x} are not a finite set ({type(sol).__name__})",
                      hint="margins need relations whose solutions sympy can list")


def _finite_superset(sol: sp.Set) -> sp.FiniteSet | None:
    """A finite set holding every element of ``sol``, or None: ``Complement({roots}, {-3})`` (a pole taken
    out) and ``Intersection({roots}, Reals)`` have one (an extra critical point only splits a cell)."""
    if isinstance(sol, sp.FiniteSet):
        return sol
    if isinstance(sol, sp.Complement):
        return _finite_superset(sol.args[0])
    if isinstance(sol, sp.Intersection):
        for part in sol.args:
            found = _finite_superset(part)
            if found is not None:
                return found
    return None


def critical_points(formula: Formula, x: sp.Symbol, above: sp.Expr | None = None) -> list[sp.Expr]:
    """Real points where some relation of ``formula`` may change truth value, sorted, distinct (``above``: the low
    end of the input's domain, below which points are not needed; some may still be given)."""
    pts: set[sp.Expr] = set()
    for rel in relations(formula):
        for side in (rel.lhs, rel.rhs):  # each side's own: lhs - rhs may fold a pole away (x + 1/(x-2) - 1/(x-2))
            for sc in side_conditions(side):
                for r in relations(sc.condition):
                    pts |= _zeros(r.lhs - r.rhs, x, above)
        d = rel.lhs - rel.rhs
        if not d.has(x):
            continue
        if d.has(sp.Max, sp.Min, sp.Abs, sp.sign, sp.Heaviside):
            d = d.rewrite(sp.Piecewise)
        d = sp.piecewise_fold(d)
        pieces = d.args if isinstance(d, sp.Piecewise) else ((d, sp.true),)
        for expr, cond in pieces:
            pts |= _zeros(expr, x, above)
            pts |= _zeros(sp.denom(sp.together(expr)), x, above)
            for sc in side_conditions(expr):  # where a radicand, logarithm or denominator changes sign
                for r in relations(sc.condition):
                    pts |= _zeros(r.lhs - r.rhs, x, above)
            if isinstance(cond, sp.Basic) and cond not in (sp.true, sp.false):
                for r in cond.atoms(sp.core.relational.Relational):
                    pts |= _zeros(r.lhs - r.rhs, x, above)
    real = [p for p in pts if p.is_real is not False and not p.free_symbols]
    if any(p.has(sp.I, sp.re, sp.im) for p in real):  # real roots written through complex radicals
        raise MarginError("critical points that sympy writes only through complex numbers (the three real "
                          "roots of a cubic): the kernel cannot evaluate the claim there")
    real.sort(key=lambda p: sp.N(p, 60))
    out: list[sp.Expr] = []
    for p in real:
        if out and sp.simplify(p - out[-1]) == 0:
            continue
        out.append(p)
    return out


def _truth(formula: Formula, x: sp.Symbol, point: sp.Expr, undefined: list | None = None) -> bool:
    """The formula at one point, by the kernel's strict exact evaluation: where any part of it is
    undefined (a negative radicand, a zero denominator) the claim cannot hold (recorded in ``undefined``)."""
    from derive.kernel.trusted import OverBudget, Undefined, Unsettled, Unsupported, evaluate_at

    try:
        if point.is_Rational:  # evaluated at the point: messages name the expression that fails
            return bool(evaluate_at(formula, {x: point}))
        # an irrational point is substituted, and sympy folds what it can (0*sqrt(-3) is 0): the side conditions,
        # taken before, say where a part has no value
        for e in formula.exprs():
            for sc in side_conditions(e):
                if x in sc.condition.free_symbols() and not evaluate_at(sc.condition.subs({x: point}), {}):
                    raise Undefined(f"{sc.kind}: {sc.condition} fails at {x} = {_short(point)}")
        return bool(evaluate_at(formula.subs({x: point}), {}))
    except OverBudget:
        pass
    except Unsupported as err:  # nothing is known there: not "cannot hold"
        raise MarginError(f"no margin: the kernel cannot evaluate the claim at {x} = {point} ({err})") from None
    except Unsettled as err:
        if undefined is not None:
            undefined.append((point, str(err)))
        return False
    # beyond the kernel's evaluation budget: sympy's exact comparison of closed forms (minimal polynomials),
    # only for algebraic numbers of a small degree: its cost has no bound otherwise (a quartic's root with
    # nested cube roots in a one-line claim took 48 s)
    at = formula.subs({x: point})
    degree = algebraic_degree(at.exprs())
    if degree is None or degree > MAX_ALGEBRAIC_DEGREE:
        what = "not an algebraic number" if degree is None else f"algebraic degree up to {degree}"
        raise MarginError(f"no margin: whether the claim holds at {x} = {_short(point)} is beyond the exact-evaluation "
                          f"budget ({what}; at most degree {MAX_ALGEBRAIC_DEGREE})") from None
    try:
        return bool(at.evaluate({}))
    except (ValueError, TypeError, ZeroDivisionError):
        return False


MAX_ALGEBRAIC_DEGREE = 16  # sympy's exact comparisons: numbers of at most this (bound on the) degree


def algebraic_degree(exprs: Iterable[sp.Expr]) -> int | None:
    """A bound on the degree of the number field of closed numbers: the product of the root orders of
    their distinct radicals; None when one is not algebraic (exp, log, pi, ...) or has a symbol."""
    degree = 1
    seen: set = set()
    for e in exprs:
        for a in sp.preorder_traversal(e):
            transcendental = isinstance(a, (sp.exp, sp.log, sp.sin, sp.cos, sp.NumberSymbol, sp.Function)) \
                and not isinstance(a, (sp.Max, sp.Min, sp.Abs))
            if a.is_Symbol or transcendental:
                return None
            if isinstance(a, sp.Pow) and a not in seen:
                seen.add(a)
                if not a.exp.is_Rational:
                    return None
                degree *= int(a.exp.q)
    return degree


def _rational_between(a: sp.Expr | None, b: sp.Expr | None) -> sp.Rational:
    """An exact rational strictly between a and b (None: unbounded on that side)."""
    if a is None and b is None:
        return sp.Integer(1)
    if a is None:
        return sp.floor(b) - 1 - abs(sp.floor(b))
    if b is None:
        return sp.ceiling(a) + 1 + abs(sp.ceiling(a))
    if a.is_Rational and b.is_Rational:
        return (a + b) / 2
    for digits in (30, 60, 120):
        m = sp.Rational(str(sp.N((a + b) / 2, digits)))
        if a < m < b:
            return m
    raise MarginError(f"cannot separate the critical points {a} and {b}")


def _domain_formula(domain: str, x: sp.Symbol) -> list[Formula]:
    if domain == "positive":
        return [Rel(x, ">", 0)]
    if domain == "nonnegative":
        return [Rel(x, ">=", 0)]
    if domain == "fraction":
        return [Rel(x, ">=", 0), Rel(x, "<=", 1)]
    return []


def _domain_bounds(domain: str) -> tuple[sp.Expr | None, bool]:
    if domain == "positive":
        return sp.Integer(0), False
    if domain in ("nonnegative", "fraction"):  # a fraction's upper end, 1, is in its domain formula (_solve_intervals)
        return sp.Integer(0), True
    return None, False


MARGIN_SECONDS = 30  # wall-clock net of the sympy part of one margin (solveset has no budget of its own)


class _OverTime(BaseException):
    """Raised by the wall-clock net's alarm (a BaseException: sympy's ``except Exception`` cannot swallow it)."""


@contextlib.contextmanager
def _wall_clock_net(seconds: float) -> Iterator[None]:
    """Raise ``MarginError`` when the block runs longer than ``seconds`` (an interval timer; only in the main
    thread of a process that has one, elsewhere the block runs unguarded).  The one budget of a margin
    that is not deterministic: sympy's ``solveset`` squares radicals into quartics whose closed forms took
    30 s and more for one-line claims, with no operation count to bound it by."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer") \
            or signal.getitimer(signal.ITIMER_REAL)[0]:
        yield  # not the main thread, or an alarm of the caller's own is running: leave it alone
        return

    fired: list[bool] = []
    leaving: list[bool] = []

    def fire(signum, frame):
        if leaving:
            return
        # an exception raised where Python cannot pass it on (a garbage-collector callback, a __del__) is dropped:
        # the alarm comes again a second later (time enough to unwind the block), and a block that ends after it
        # fired is over time too
        fired.append(True)
        signal.setitimer(signal.ITIMER_REAL, 1)
        raise _OverTime

    over = MarginError(f"no margin: solving the claim took longer than the margin's wall-clock net of {seconds} s "
                       "(sympy's solveset has no budget of its own)")
    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _OverTime:
        leaving.append(True)
        raise over from None
    finally:
        leaving.append(True)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if fired:
        raise over


def solve_intervals(formula: Formula, x: sp.Symbol, domain: str = "real",
                    undefined: list[str] | None = None) -> tuple[list[Interval], list[sp.Expr]]:
    """The exact set where ``formula`` (in ``x`` only) is true, within the domain; and the critical points.
    Where the formula is undefined (a negative radicand, ...) it does not hold; ``undefined``, when
    given, receives one line per such cell or point.  Within ``MARGIN_SECONDS`` of wall-clock time."""
    steps = [e for f in formula.exprs() for e in sp.preorder_traversal(f)
             if isinstance(e, (sp.floor, sp.ceiling, sp.Mod)) and e.has(x)]
    whole = _integrality(formula, x)
    if whole is not None:  # true only at isolated points no critical point names: the margin was the empty set
        raise MarginError(f"no margin over {x}: {whole} holds only at isolated values of {x}",
                          hint="derive sweep evaluates it point by point")
    if steps:  # the truth can change at a jump, which is no zero of the relation: the critical points miss it
        raise MarginError(f"no margin over {x}: {sp.sstr(steps[0])} jumps as {x} varies, and the margin's "
                          "critical points are the zeros of continuous relations",
                          hint="derive sweep evaluates it point by point")
    with _wall_clock_net(MARGIN_SECONDS):
        return _solve_intervals(formula, x, domain, undefined)


def _integrality(formula: Formula, x: sp.Symbol) -> str | None:
    """The first ``IsInteger`` part of ``formula`` that depends on ``x`` (written or a declared integrality), in
    words; None when there is none."""
    if isinstance(formula, IsInteger):
        return f"{sp.sstr(formula.expr)} is an integer" if formula.expr.has(x) else None
    return next((w for c in children(formula) if (w := _integrality(c, x)) is not None), None)


def _solve_intervals(formula: Formula, x: sp.Symbol, domain: str,
                     undefined: list[str] | None) -> tuple[list[Interval], list[sp.Expr]]:
    extra = formula.free_symbols() - {x}
    if extra:
        raise MarginError(f"the formula still has {', '.join(sorted(map(str, extra)))} free")
    lo, lo_closed = _domain_bounds(domain)
    formula = And((*_domain_formula(domain, x), formula))  # a fraction's upper end, 1, ends the set too
    pts = [p for p in critical_points(formula, x, lo) if lo is None or p > lo]
    # the sequence: (open cell), point, (open cell), point, ..., (open cell)
    elements: list[tuple[str, sp.Expr | None, sp.Expr | None, bool]] = []
    bounds = [lo, *pts, None]
    bad: list = []

    def truth(point: sp.Expr, where: str) -> bool:
        before = len(bad)
        ok = _truth(formula, x, point, bad)
        if len(bad) > before and undefined is not None:
            undefined.append(f"undefined for {x} {where} ({bad[-1][1]}): the claim cannot hold there")
        return ok

    if lo is not None and lo_closed:
        elements.append(("point", lo, lo, truth(lo, f"= {lo}")))
    for i in range(len(bounds) - 1):
        a, b = bounds[i], bounds[i + 1]
        cell = f"in ({'-inf' if a is None else a}, {'inf' if b is None else b})"
        elements.append(("cell", a, b, truth(_rational_between(a, b), cell)))
        if b is not None:
            elements.append(("point", b, b, truth(b, f"= {b}")))
    intervals: list[Interval] = []
    start: tuple[sp.Expr | None, bool] | None = None
    prev = None
    for kind, a, b, ok in elements:
        if ok and start is None:
            start = (a, kind == "point")
        elif not ok and start is not None:
            # closes at this element's start: a false point ends an open interval; a false cell follows a
            # true point, which closes the interval
            assert prev is not None
            if kind == "point":
                intervals.append(Interval(start[0], a, start[1], False))
            else:
                intervals.append(Interval(start[0], prev[2], start[1], True))
            start = None
        prev = (kind, a, b, ok)
    if start is not None:
        intervals.append(Interval(start[0], None, start[1], False))
    return intervals, pts


# z3 cross-check ----------------------------------------------------------------------------------------

def _z3_verdict(goal: Formula, hyps: Sequence[Formula], x: sp.Symbol, point: sp.Rational, rlimit: int) -> str:
    from derive.kernel.problem import Problem
    from derive.kernel.prover import decide

    hypotheses = [Rel(x, "==", point), *hyps]
    return decide(Problem(hypotheses, goal, set(), {}, rlimit, 0)).verdict


def cross_check(goal: Formula, hyps: Sequence[Formula], x: sp.Symbol, intervals: list[Interval],
                critical: list[sp.Expr], rlimit: int) -> list[BoundaryCheck]:
    """z3 at every finite endpoint (when rational) and just inside and outside it."""
    checks: list[BoundaryCheck] = []
    seen: set = set()
    ends = sorted({e for i in intervals for e in (i.low, i.high) if e is not None}, key=lambda p: sp.N(p, 60))
    member = lambda p: any(i.contains(p) for i in intervals)  # noqa: E731
    for end in ends:
        near = [abs(end - c) for c in critical if c != end]
        rel = abs(end) / 10**6 if end != 0 else sp.Rational(1, 10**6)
        eps = min([rel, *[n / 4 for n in near if n > 0]])
        eps = sp.Rational(str(sp.N(eps, 6))) if not eps.is_Rational else eps
        base = end if end.is_Rational else sp.Rational(str(sp.N(end, 60)))
        candidates = [(base - eps, None), (base + eps, None)]
        if end.is_Rational:
            candidates.append((end, "at"))
        for p, where in candidates:
            if p in seen:
                continue
            seen.add(p)
            expected = member(p)
            side = where or ("inside" if expected else "outside")
            checks.append(BoundaryCheck(p, side, expected, _z3_verdict(goal, hyps, x, p, rlimit)))
    return checks


# the public entry points ---------------------------------------------------------------------------

def margin(library: Library, scenario: Scenario, claim_id: str, vary: str, *, unit: str | None = None,
           verify: bool = True, rlimit: int | None = None) -> Margin:
    """The exact set of values of ``vary`` over which the claim holds (see the module docstring).  Where the
    varied quantity decides an input rule's remedy (the weights' bytes choose a chip's FP8 rate), the set is
    taken cell by cell of the values on which the remedies give the same values (``remedy_cells``), each cell at
    the values ``--set`` of a value inside it gives, and joined."""
    name = vary.strip()
    cells = remedy_cells(library, scenario, name) if name in library.quantities else None
    if cells is None:
        return _margin(library, scenario, claim_id, vary, unit=unit, verify=verify, rlimit=rlimit)
    parts = [(where, _margin(library, at, claim_id, vary, unit=unit, verify=verify, rlimit=rlimit, cells=where))
             for where, at, _ in cells]
    value = scenario.values[name].value if name in scenario.values else None
    out = next((m for where, m in parts if value is not None and any(c.contains(value) for c in where)), parts[0][1])
    out.intervals = _joined([i for _, m in parts for i in m.intervals])
    out.checks = [c for _, m in parts for c in m.checks]
    if out.rule_ends:
        out.rule_ends = rule_ends(library, scenario, name, out.intervals)
    low, closed = _domain_bounds(out.domain)
    domain = [Interval(low, None, closed, False)]
    for where, _, said in cells:
        shown = _clipped(where, domain)
        if not shown:
            continue
        words = "; ".join(said) if said else "the scenario's own values, no remedy"
        out.notes.append(f"for {name} in " + " ∪ ".join(out.interval_text(c) for c in shown)
                         + f" (as --set of such a value gives it): {words}")
    return out


def remedy_cells(library: Library, scenario: Scenario, name: str
                 ) -> list[tuple[list[Interval], Scenario, list[str]]] | None:
    """The values of ``name`` split where an input rule's remedy that reads it changes what it gives: cells (the
    points and open intervals between the rational ends of the rules' relations, ``critical_points``), grouped by
    the values the remedies give there (``remedies_at`` at a rational point of the cell), each group with the
    scenario at those values and the remedies' notes.  None where no remedy reads ``name``, where every cell gives
    the scenario's own values (the margin is the scenario's), or where an end is irrational."""

    from derive.model.scenario import remedies_at, remedy_reads, remedy_targets, values_before_remedies

    rules = [c for c in library.input_constraints if name in remedy_reads(library, c)]
    if not rules:
        return None
    x = library.quantities[name].sym
    before = values_before_remedies(scenario)  # the rules' relations read the values as given, before any remedy
    subst = {library.quantities[n].sym: v.value for n, v in before.items() if n != name}
    ends: set[sp.Expr] = set()
    for c in rules:
        for rel in (c["relation"], *(r["relation"] for r in c["remedies"])):
            f = library.formula_expand(rel).subs(subst)
            if f.free_symbols() == {x}:
                ends |= set(critical_points(f, x))
    if any(not e.is_Rational for e in ends):
        return None
    points = sorted(ends)
    bounds = [None, *points, None]  # the open intervals between the ends, and the ends themselves
    cells = [Interval(a, b, False, False) for a, b in zip(bounds, bounds[1:], strict=False)]
    cells += [Interval(p, p, True, True) for p in points]
    targets = [n for n in remedy_targets(library) if n != name]
    groups: dict[tuple, tuple[list[Interval], dict, list[str]]] = {}
    for cell in cells:
        inside = cell.low if cell.low == cell.high else _rational_between(cell.low, cell.high)
        values, said = remedies_at(library, scenario, {name: inside})
        key = tuple((n, values[n].value if n in values else None) for n in targets)
        group = groups.setdefault(key, ([], values, [text for _, text in said]))
        group[0].append(cell)
    own = tuple((n, scenario.values[n].value if n in scenario.values else None) for n in targets)
    if list(groups) == [own]:
        return None
    out = []
    for key, (where, values, said) in groups.items():
        moved = {n: values[n] for n, _ in key if n in values}
        at = dataclasses.replace(scenario, values={**scenario.values, **moved})
        out.append((_joined(where), at, said))
    return out


def _clipped(intervals: Sequence[Interval], cells: Sequence[Interval]) -> list[Interval]:
    """The parts of ``intervals`` inside ``cells``."""
    out = []
    for i in intervals:
        for c in cells:
            lo, lo_closed = i.low, i.low_closed
            if c.low is not None and (lo is None or c.low > lo or (c.low == lo and not c.low_closed)):
                lo, lo_closed = c.low, c.low_closed
            hi, hi_closed = i.high, i.high_closed
            if c.high is not None and (hi is None or c.high < hi or (c.high == hi and not c.high_closed)):
                hi, hi_closed = c.high, c.high_closed
            if lo is not None and hi is not None and (lo > hi or (lo == hi and not (lo_closed and hi_closed))):
                continue
            out.append(Interval(lo, hi, lo_closed, hi_closed))
    return out


def _joined(intervals: Sequence[Interval]) -> list[Interval]:
    """``intervals`` sorted and merged where they overlap or meet at an end one of them holds."""
    key = lambda i: (0, 0, 0) if i.low is None else (1, sp.N(i.low, 60), 0 if i.low_closed else 1)  # noqa: E731
    out: list[Interval] = []
    for i in sorted(intervals, key=key):
        if out:
            last = out[-1]
            meets = last.high is None or i.low is None or i.low < last.high or (
                i.low == last.high and (last.high_closed or i.low_closed))
            if meets:
                if last.high is None or (i.high is not None and i.high < last.high):
                    high, closed = last.high, last.high_closed
                elif i.high is None or i.high > last.high:
                    high, closed = i.high, i.high_closed
                else:
                    high, closed = last.high, last.high_closed or i.high_closed
                out[-1] = Interval(last.low, high, last.low_closed, closed)
                continue
        out.append(i)
    return out


def _margin(library: Library, scenario: Scenario, claim_id: str, vary: str, *, unit: str | None = None,
            verify: bool = True, rlimit: int | None = None, cells: Sequence[Interval] | None = None) -> Margin:
    """``margin`` at one scenario; ``cells``: the set kept to them, and the cross-checks to the points in them."""
    from derive.kernel.problem import DEFAULT_RLIMIT
    from derive.model.dimensions import format_dimension
    from derive.model.units import parse_unit

    if unit is not None and not unit.strip():  # as derive eval: an empty unit is a slip, not "no unit"
        raise MarginError("the unit is empty", hint='name a unit, like "ms" or "TB/s" (or omit it)')

    claim = library.resolve(claim_id)
    if not isinstance(claim, Claim):
        article = "an" if claim.kind[:1] in "aeiou" else "a"  # an assumption, a definition
        raise MarginError(f"'{claim.id}' is {article} {claim.kind}, not a claim", hint="margins are for claims")
    table_notes: list[str] = []
    if vary.strip() in library.quantities:  # --vary tp uses the layout as --set tp=... would (pp = 1, ...)
        scenario, table_notes = with_input_table_defaults(library, scenario, [vary.strip()])
    v = _varied(library, scenario, vary)
    situation = situate(library, scenario)
    statement = situation.statement(claim, keep=v.keep, pinned=v.pinned)
    goal, hyps = statement.formula()
    stated = hyps
    solved_at: sp.Expr | None = None
    subst: dict = {}
    reads = True  # whether the statement itself reads the varied value (else: the formula below says)
    if v.replace:  # an expression: eliminate the quantity solved for, then give the others their values
        subst = situation.values_except({*v.keep, *(q.name for q in claim.forall)})
        (solved,) = [e.subs(subst) for e in v.replace.values()]
        if v.symbol not in solved.free_symbols or solved.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
            raise MarginError(f"with the scenario's values, {vary} = {v.symbol} does not determine {v.eliminated} "
                              f"({v.eliminated} = {solved})", hint="vary a single quantity instead")
        back = _inverse_checked(library, v, solved, subst, rlimit)
        solved_at = solved
        goal = goal.subs(v.replace).subs(subst)
        own = [h.subs(v.replace).subs(subst) for h in hyps]
        reads = v.symbol in goal.free_symbols().union(*(h.free_symbols() for h in own))  # before the inverse's
        hyps = [*own, *(h.subs(v.replace).subs(subst) for h in v.extra)] + back
    goal, hyps, eliminated = eliminate_forall(library, claim, goal, hyps, v.symbol)
    free = set(goal.free_symbols())
    for h in hyps:
        free |= h.free_symbols()
    free.discard(v.symbol)
    if free:
        names = sorted(map(str, free))
        forall = sorted(n for n in names if n in {q.name for q in claim.forall})
        if forall:
            raise MarginError(f"'{claim.id}' is universally quantified over {', '.join(forall)}, which no equation "
                              "among its hypotheses determines (an integer quantity is never eliminated): a margin "
                              "over such a claim is not supported yet",
                              hint=(f"vary {forall[0]} instead" if len(forall) == 1 else
                                    "a claim for every value of several quantities has no threshold in one of "
                                    "them; `derive check` decides it as stated"))
        raise MissingValueError(f"the margin of '{claim.id}'", names)
    formula = And((*hyps, goal)) if hyps else goal
    from derive.kernel.problem import Problem
    from derive.kernel.trusted import refusal

    why = refusal(Problem([], formula))  # what the kernel gives no meaning has no margin either
    if why:
        no_value = any(e.has(sp.nan, sp.zoo, sp.I) for e in formula.exprs())  # a part with no real value here
        raise MarginError(f"no margin for '{claim.id}': {why}",
                          hint=f"a part of the claim has no real value at the scenario's values: derive check "
                               f"{claim.id} says which" if no_value else None)
    undefined: list[str] = []
    try:
        intervals, critical = solve_intervals(formula, v.symbol, v.domain, undefined)
        if cells is not None:
            intervals = _clipped(intervals, cells)
    except MarginError as err:
        following = situation.following(set(v.keep), {})
        moving = [n for n, _ in scenario.links if library.quantities[n].sym in following]
        if not moving:
            raise
        # a value worked out from the varied quantity (the share of experts read, from the batch) can make
        # the relation transcendental: holding it at a number is the user's call, said in the hint
        raise MarginError(err.message, never=err.never,
                          hint=f"{moving[0]} moves with {vary} ({dict(scenario.links)[moving[0]]}); hold it with "
                               f"--set {moving[0]}=... to take this margin") from None
    if unit:
        u = parse_unit(unit, where="--unit")
        if u.dimension != v.dimension:
            raise MarginError(f"cannot express {vary} ({format_dimension(v.dimension)}) in {unit} "
                              f"({format_dimension(u.dimension)})")
        scale, unit_text = sp.Rational(u.scale.numerator, u.scale.denominator), unit
    else:
        scale, unit_text = sp.Integer(1), format_dimension(v.dimension)
    out = Margin(claim.id, vary, unit_text, scale, intervals, v.domain, v.integer, formula, v.symbol,
                 value=v.value, eliminated=v.eliminated, instance=claim.instance,
                 infeasible=feasibility(library, scenario).violations)
    if vary in library.quantities and library.quantities[vary].whole and not v.integer:
        out.whole_unit = library.quantities[vary].unit_si
    if vary in library.quantities:  # a bound on the quantity itself that ends the claim's set sooner
        out.limits = [lim for lim in upper_limits(library, scenario, vary)
                      if any(i.high is None or i.high > lim.value for i in intervals)]
    out.notes.extend(table_notes)
    out.notes.extend(undefined)
    out.notes.extend(n for n in input_notes(library, scenario, [claim], {*v.keep, v.eliminated or ""})
                     if n not in out.notes)
    if not v.replace and names_a_rule(library, scenario, v.text):
        out.rule_ends = rule_ends(library, scenario, v.text, intervals)
    elif solved_at is not None and v.eliminated and names_a_rule(library, scenario, v.eliminated):
        out.rule_ends = expression_rule_ends(library, scenario, v, solved_at, subst, intervals)
    if not claim.instance:
        out.notes.append("a general claim, read at the scenario's values (instance semantics)")
    if not reads or v.symbol not in formula.free_symbols():
        out.notes.append(f"the claim does not depend on {vary} (with the other values fixed)")
    if v.eliminated and library.quantities[v.eliminated].integer:
        out.notes.append(f"{v.eliminated} is an integer quantity: only the values of {vary} at which it is an "
                         "integer count")
    if eliminated:
        out.notes.append("universally quantified " + ", ".join(eliminated) + " eliminated through the hypotheses' "
                         "equations")
    dom = _domain_formula(v.domain, v.symbol)
    if not intervals and hyps:  # holds nowhere: because the goal fails where the hypotheses hold, or they never do?
        try:
            out.hypotheses_nowhere = not solve_intervals(And((*dom, *hyps)), v.symbol, v.domain, [])[0]
        except MarginError:
            pass  # their set cannot be solved: the plain reading stands
    if v.value is not None and not out.holds_at_value:
        conditions = (*dom, *hyps)  # the quantity's domain is a hypothesis too (check: inconsistent outside it)
        out.hypotheses_at_value = _hypotheses_hold(And(conditions) if conditions else None, v)
        if out.hypotheses_at_value is False and not eliminated:
            # what the goal's definitions declare of their values: read, never assumed (check leaves the claim
            # unknown where only they fail), though the margin, like the check, reads the claim only where they hold
            unread = set(stated) - set(dataclasses.replace(statement, declared=[]).formula()[1])
            if v.replace:
                unread = {h.subs(v.replace).subs(subst) for h in unread}
            read = [c for c in conditions if c not in unread]
            if len(read) < len(conditions) and _hypotheses_hold(And(read) if read else None, v):
                out.hypotheses_at_value = None
                out.unread_at_value = True
                unread_break = _domain_at_value(library, scenario, claim, frozenset(v.pinned), declared=True)
                if unread_break is not None:
                    out.notes.append(f"at the scenario value: {unread_break.words()}; hint: {unread_break.hint()}")
        if out.hypotheses_at_value is False:  # a definition's domain the scenario's values leave: named
            out.outside_domain = _domain_at_value(library, scenario, claim, frozenset(v.pinned))
            if out.outside_domain is not None:
                out.notes.append(f"at the scenario value: {out.outside_domain.words()}; "
                                 f"hint: {out.outside_domain.hint()}")
    if verify:
        out.checks = cross_check(goal, [*dom, *hyps], v.symbol, intervals, critical, rlimit or DEFAULT_RLIMIT)
        if cells is not None:  # a point outside the cells is read at other values
            out.checks = [c for c in out.checks if any(cell.contains(c.point) for cell in cells)]
    return out


def _domain_at_value(library: Library, scenario: Scenario, claim: Claim, pinned: frozenset[str],
                     declared: bool = False) -> DomainBreak | None:
    """The first definition domain the scenario's values leave, among those the claim's goal, hypotheses and
    cited assumptions use (``derive.model.evaluate.domain_breaks``); ``declared``: instead the first declaration
    (domain, integrality) of a definition the goal uses that they break; None if none."""
    situation = situate(library, scenario)
    forall = {q.sym for q in claim.forall}
    values = {s: v for s, v in situation.substitution.items() if s not in forall}
    written = [a.relation for aid in library.rests_on(claim)
               if isinstance(a := library.declarations[aid], Assumption) and a.relation is not None]
    exprs = [e for f in [claim.goal, *([] if declared else [*claim.hypotheses, *written])] for e in f.exprs()]
    breaks = domain_breaks(library, scenario, exprs, situation.pins_for(claim) | pinned, values,
                           ("declared",) if declared else ("domain",), first=True)
    return breaks[0] if breaks else None


RULE_SEARCH = 4096  # integers searched from an end for the nearest value the input rules accept


def rule_ends(library: Library, scenario: Scenario, name: str, intervals: Sequence[Interval]) -> list[RuleEnd]:
    """The finite ends of ``intervals`` at which ``name`` breaks a refusing input rule (an integer quantity: at
    the last integer inside the interval), each with the nearest value inside that meets every rule."""
    from derive.model.scenario import ScenarioValue

    integer = library.quantities[name].integer
    out: list[RuleEnd] = []
    for iv in intervals:
        for side, end, closed in (("low", iv.low, iv.low_closed), ("high", iv.high, iv.high_closed)):
            if end is None:
                continue
            if integer:
                k = sp.ceiling(end) if side == "low" else sp.floor(end)
                if k == end and not closed:
                    k += 1 if side == "low" else -1
                if not iv.contains(k):
                    continue  # no integer in the interval
            elif end.is_Rational:
                k = end
            else:
                continue
            values = {**scenario.values, name: ScenarioValue(name, sp.Rational(k), "margin", origin="margin")}
            pinned = frozenset(scenario.pinned) | ({name} if library.is_derived(name) else set())
            values = follow_links(library, scenario, values, pinned)  # chips follows a varied degree
            broken = [b for b in broken_input_constraints(library, values, pinned) if b.refuses]
            if not broken:
                continue
            nearest, searched = None, None
            if integer:
                step = 1 if side == "low" else -1
                other = iv.high if side == "low" else iv.low
                last = k + step * (RULE_SEARCH - 1)
                if other is not None:
                    bound = sp.floor(other) if side == "low" else sp.ceiling(other)
                    last = min(last, bound) if side == "low" else max(last, bound)
                candidates = [int(c) for c in range(int(k), int(last) + step, step) if iv.contains(sp.Integer(c))]
                refused = refused_at(library, scenario, name, candidates)
                ok = [c for c, bad in zip(candidates, refused.tolist(), strict=True) if not bad]
                nearest = sp.Integer(ok[0]) if ok else None
                searched = (sp.Integer(candidates[0]), sp.Integer(candidates[-1])) if candidates else None
            out.append(RuleEnd(side, end, sp.Rational(k), tuple(f"{b.constraint['rule']} does not hold ({b.numbers}) "
                                                                 f"[{b.id}]" for b in broken),
                               tuple(b.id for b in broken), nearest, searched))
    return out


def expression_rule_ends(library: Library, scenario: Scenario, v: _Varied, solved: sp.Expr, subst: dict,
                         intervals: Sequence[Interval]) -> list[RuleEnd]:
    """The ends of an expression's margin (``--vary tp*dp``) at which the quantity solved for (dp) breaks a
    refusing input rule: at each finite end, the value of the expression nearest the end inside the interval at
    which that quantity is whole (an integer quantity) or the end itself, with the nearest value inside that
    meets every rule (stepping the solved-for quantity by one)."""
    from derive.model.scenario import ScenarioValue

    assert v.expression is not None and v.eliminated is not None
    q = library.quantities[v.eliminated]
    along = v.expression.xreplace({s: e for s, e in subst.items() if s != q.sym})  # the expression in q alone
    if along.free_symbols - {q.sym}:
        return []
    pinned = frozenset(scenario.pinned) | ({q.name} if library.is_derived(q.name) else set())

    def at(k: sp.Rational) -> sp.Expr:
        return along.xreplace({q.sym: k})

    def broken_at(k: sp.Rational) -> list:
        values = {**scenario.values, q.name: ScenarioValue(q.name, k, "margin", origin="margin")}
        values = follow_links(library, scenario, values, pinned)
        return [b for b in broken_input_constraints(library, values, pinned) if b.refuses]

    out: list[RuleEnd] = []
    for iv in intervals:
        for side, end in (("low", iv.low), ("high", iv.high)):
            if end is None:
                continue
            e = sp.nsimplify(solved.xreplace({v.symbol: end})) if not end.is_Rational else solved.xreplace(
                {v.symbol: end})
            if q.integer:
                inside = [k for k in (sp.floor(e), sp.ceiling(e)) if k >= 1 and iv.contains(at(k))]
                if not inside:
                    continue
                k = (min if side == "low" else max)(inside, key=at)
            elif e.is_Rational:
                k = e
            else:
                continue
            broken = broken_at(sp.Rational(k))
            if not broken:
                continue
            nearest = searched = None
            if q.integer:
                step = 1 if (at(k + 1) > at(k)) == (side == "low") else -1  # q's step into the interval
                tried = []
                c = k
                while len(tried) < RULE_SEARCH and c >= 1 and iv.contains(at(c)):
                    tried.append(c)
                    if not broken_at(sp.Rational(c)):
                        nearest = at(c)
                        break
                    c += step
                searched = (at(tried[0]), at(tried[-1])) if tried else None
            out.append(RuleEnd(side, end, at(k), tuple(f"{b.constraint['rule']} does not hold ({b.numbers}) "
                                                        f"[{b.id}]" for b in broken),
                               tuple(b.id for b in broken), nearest, searched))
    return out


def _hypotheses_hold(hyps: Formula | None, v: _Varied) -> bool:
    """Do the hypotheses hold at the scenario value (an integer quantity's non-integer value: no)?"""
    if v.integer and v.value.is_integer is not True:
        return False
    if hyps is None:
        return True
    try:
        return _truth(hyps, v.symbol, v.value)
    except MarginError:  # beyond exact evaluation: say nothing more than "does not hold"
        return True


def _short(point: sp.Expr) -> str:
    text = str(point)
    return text if len(text) <= 40 else f"{sp.N(point, 12)} (a closed form of {len(text)} characters)"
