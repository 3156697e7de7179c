"""Why a verdict moved, in numbers: the relation a claim now violates with both values, the exact value
of a changed input at which it flips, the headline quantities before and after, and, for an
``inconsistent`` scenario, which given values contradict which relation (with a ``--set`` to try).

Everything here is computed by the engine from the scenario's values: ``derive.model.evaluate`` for
values (definition domains respected), ``derive.whatif.margin`` for thresholds.  Nothing is printed;
``derive diff`` and ``derive.api`` format the results.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from derive.errors import DeriveError
from derive.kernel.logic import And, Formula, Not, Or, Rel
from derive.model.declarations import Assumption, Claim
from derive.model.dimensions import dimension_of
from derive.model.display import display_json, format_value, input_text
from derive.model.evaluate import Evaluation, evaluate, value_of
from derive.model.library import Library
from derive.model.scenario import Scenario, with_implied_input_tables
from derive.model.situation import situate
from derive.model.units import format_dimension

_OP_WORDS = {"<": "below", "<=": "at most", ">": "above", ">=": "at least", "==": "exactly", "!=": "other than"}
_OP_SIGNS = {"<": "<", "<=": "≤", ">": ">", ">=": "≥", "==": "=", "!=": "≠"}


@dataclass(frozen=True)
class Violation:
    """A relation of a claim that fails under a scenario, with the values of its sides."""

    quantity: str  # the side the claim is about (its left side, as written)
    value: str  # that side's value, for people
    needs: str  # what the claim needs: "2,376 seq to 2,424 seq", "at least 56.25 GB/s"
    text: str  # "critical_batch = 1,200 seq; the claim needs 2,376 seq to 2,424 seq"

    def to_json(self) -> dict:
        return {"quantity": self.quantity, "value": self.value, "needs": self.needs, "text": self.text}


@dataclass(frozen=True)
class Threshold:
    """Where a claim flips as one input moves from its baseline value to its new one."""

    quantity: str
    at: str  # the flipping value, for people
    exact: str  # its exact SI text
    holds_on: str  # the set where the claim holds, for people
    text: str

    def to_json(self) -> dict:
        return {"quantity": self.quantity, "at": self.at, "exact": self.exact, "holds_on": self.holds_on,
                "text": self.text}


@dataclass(frozen=True)
class Conflict:
    """A relation contradicted by the scenario's values: the relation, where it comes from, the values
    (with the layer that set each), and ``--set`` suggestions that would satisfy it."""

    relation: str
    origin: str  # "--assume", "assumption roofline.x"
    failing: str  # "flops/hbm_bandwidth = 1,200 FLOP/byte ≠ 600 FLOP/byte"
    values: list[dict] = field(default_factory=list)  # {"quantity", "display", "layer"}
    suggestions: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"relation": self.relation, "origin": self.origin, "failing": self.failing, "values": self.values,
                "suggestions": self.suggestions}

    def lines(self) -> list[str]:
        out = [f"{self.origin} {self.relation!s} fails: {self.failing}"]
        if self.values:
            out.append("  given: " + ", ".join(f"{v['quantity']} = {v['display']} ({v['layer']})" for v in self.values))
        if self.suggestions:
            out.append("  to ask 'what if' instead, change a value: " + " or ".join(self.suggestions))
        elif self.origin.startswith("hypothesis"):
            out.append("  the claim is stated only where this holds: under these values it says nothing")
        return out


# values -------------------------------------------------------------------------------------------------

def _shown(library: Library, expr: sp.Expr, value: sp.Expr, like: sp.Expr | None = None) -> str:
    """``value`` of ``expr``; a bare number takes the dimension of ``like`` (the other side)."""
    source = like if expr.is_number and like is not None else expr
    dim = dimension_of(source, library.dimension, where="explain")
    return format_value(value, format_dimension(dim))


def _side_name(expr: sp.Expr) -> str:
    return str(expr)


def headline_values(library: Library, scenario: Scenario) -> list[tuple[str, str, Evaluation | None]]:
    """(label, expression, evaluation or None when it cannot be computed here) for each headline."""
    out: list[tuple[str, str, Evaluation | None]] = []
    for label, text in library.headlines:
        try:
            out.append((label, text, evaluate(library, scenario, text)))
        except DeriveError:
            out.append((label, text, None))
    return out


def headlines_compared(library: Library, before: Scenario, after: Scenario) -> list[dict]:
    """Each headline's value before and after (display and exact, JSON-safe)."""
    rows = []
    for (label, text, b), (_, _, a) in zip(headline_values(library, before), headline_values(library, after),
                                           strict=True):
        rows.append({"label": label, "expression": text, "before": _ev_json(b), "after": _ev_json(a),
                     "changed": _ev_json(b) != _ev_json(a)})
    return rows


def _ev_json(ev: Evaluation | None) -> dict:
    if ev is None:
        return {"value": None, "exact": None, "display": "n/a", "reason": "not computable under this scenario"}
    if ev.exact is None:
        return {"value": None, "exact": None, "display": ev.display, "reason": ev.reason}
    d = display_json(ev.in_unit(), ev.unit)
    return {"value": d["value"], "exact": str(ev.exact), "display": d["display"]}


# violated relations ---------------------------------------------------------------------------------------

def _relations(f: Formula) -> list[Rel]:
    if isinstance(f, Rel):
        return [f]
    if isinstance(f, And):
        return [r for a in f.args for r in _relations(a)]
    return []


def at_hypotheses(library: Library, scenario: Scenario, claim: Claim) -> Scenario:
    """The scenario as the claim's statement reads it: an instance claim's ``forall`` quantity that one of its
    equality hypotheses fixes (``params_active = frontier_params_active``) takes that value, not the
    scenario's, as it does in the statement the verdict was decided on."""
    import dataclasses

    from derive.model.scenario import ScenarioValue

    forall = {q.name for q in claim.forall} if claim.instance else set()
    values = dict(scenario.values)
    for h in claim.hypotheses if forall else ():
        if not (isinstance(h, Rel) and h.op == "=="):
            continue
        for side, other in ((h.lhs, h.rhs), (h.rhs, h.lhs)):
            if isinstance(side, sp.Symbol) and str(side) in forall and str(side) not in other.free_symbols:
                v = value_of(library, scenario, other)
                if v is not None and v.is_Rational:
                    values[str(side)] = ScenarioValue(str(side), v, f"hypothesis of {claim.id}", origin="hypothesis")
    return scenario if values == dict(scenario.values) else dataclasses.replace(scenario, values=values)


def violations(library: Library, scenario: Scenario, claim: Claim) -> list[Violation]:
    """The relations of the claim's goal that fail at the scenario's values (a conjunction of
    comparisons only; a ``between`` reads as one range).  Empty when the goal is not of that shape or
    an input is missing."""
    rels = _relations(claim.goal)
    if not rels or isinstance(claim.goal, (Or, Not)):
        return []
    scenario = at_hypotheses(library, scenario, claim)
    groups: dict[str, list[tuple[Rel, sp.Expr, sp.Expr]]] = {}
    for rel in rels:
        lhs, rhs = rel.lhs, rel.rhs
        if lhs.is_number and not rhs.is_number:  # "2 <= x" reads as "x >= 2"
            rel = Rel(rhs, {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}[rel.op], lhs)
        lv, rv = value_of(library, scenario, rel.lhs), value_of(library, scenario, rel.rhs)
        if lv is None or rv is None:
            return []
        groups.setdefault(str(rel.lhs), []).append((rel, lv, rv))
    out = []
    for name, items in groups.items():
        if all(Rel(lv, r.op, rv).evaluate({}) for r, lv, rv in items):
            continue
        rel0, lv, _ = items[0]
        value = _shown(library, rel0.lhs, lv)
        lows = [(r, rv) for r, _, rv in items if r.op in (">", ">=")]
        highs = [(r, rv) for r, _, rv in items if r.op in ("<", "<=")]
        if len(lows) == 1 and len(highs) == 1 and len(items) == 2:
            low = _shown(library, lows[0][0].rhs, lows[0][1], rel0.lhs)
            needs = f"{low} to {_shown(library, highs[0][0].rhs, highs[0][1], rel0.lhs)}"
        else:
            failing = [(r, rv) for r, lv2, rv in items if not Rel(lv2, r.op, rv).evaluate({})]
            needs = " and ".join(f"{_OP_WORDS[r.op]} {_shown(library, r.rhs, rv, r.lhs)}" for r, rv in failing)
        out.append(Violation(name, value, needs, f"{name} = {value}; the claim needs {needs}"))
    return out


# thresholds -------------------------------------------------------------------------------------------------

def flip_threshold(library: Library, before: Scenario, after: Scenario, claim: Claim, quantity: str, *,
                   rlimit: int | None = None) -> Threshold | None:
    """The exact value of ``quantity`` (the one input that changed) at which the claim's verdict flips
    between its baseline value and its new one, from ``derive.whatif.margin`` (exact intervals).
    None when there is no single boundary between the two values or the margin cannot be computed."""
    from derive.whatif.margin import margin

    b, a = before.value(quantity), after.value(quantity)
    if b is None or a is None or b == a:
        return None
    try:
        m = margin(library, after, claim.id, quantity, verify=False, rlimit=rlimit)
    except DeriveError:
        return None
    lo, hi = (b, a) if b < a else (a, b)
    ends = []
    for i in m.intervals:
        for end in (i.low, i.high):
            if end is not None and lo <= end <= hi:
                ends.append(end)
    if len(set(ends)) != 1:
        return None
    at = ends[0]
    shown = m.shown(at)
    holds = " ∪ ".join(m.interval_text(i) for i in m.intervals) or "nowhere"
    return Threshold(quantity, shown, str(at), holds,
                     f"flips at {quantity} = {shown} (holds for {quantity} in {holds})")


# inconsistent scenarios ---------------------------------------------------------------------------------------

def conflicts(library: Library, scenario: Scenario, claim: Claim | None = None) -> list[Conflict]:
    """Relations the scenario's own values contradict: its ``--assume`` relations, the assumptions
    ``claim`` rests on (all of the library's when ``claim`` is None), and ``claim``'s hypotheses on a
    quantity the scenario pins (an instance claim's other hypotheses may fix values of their own).  Each
    names the values involved, the layer that set each, and ``--set`` changes that would satisfy it."""
    formulas: list[tuple[str, str, Formula]] = [("--assume", text, f) for text, f in scenario.assumptions]
    if claim is not None:  # an instance claim's own hypotheses meet the scenario's values too
        formulas += [(f"hypothesis of {claim.id}", str(h), h) for h in claim.hypotheses
                     if {str(x) for x in h.free_symbols()} & scenario.pinned]
    ids = library.rests_on(claim) if claim is not None else list(library.declarations)
    for aid in ids:
        a = library.declarations.get(aid)
        if isinstance(a, Assumption) and a.relation is not None:
            formulas.append((f"assumption {a.id}", str(a.relation), a.relation))
    free = {q.name for q in claim.forall} if claim is not None else set()  # never given scenario values
    out = []
    for origin, text, f in formulas:
        for rel in _relations(f) if isinstance(f, (Rel, And)) else []:
            if {str(x) for x in (rel.lhs - rel.rhs).free_symbols} & free:
                continue
            lv, rv = value_of(library, scenario, rel.lhs), value_of(library, scenario, rel.rhs)
            if lv is None or rv is None or Rel(lv, rel.op, rv).evaluate({}):
                continue
            failing = (f"{_side_text(library, rel.lhs, lv, rel.rhs)} {_NOT[rel.op]} "
                       f"{_side_text(library, rel.rhs, rv, rel.lhs)}")
            names = sorted({str(s) for s in (rel.lhs - rel.rhs).free_symbols})
            values = [{"quantity": n, "display": format_value(scenario.value(n), format_dimension(
                library.quantities[n].dimension)), "layer": scenario.values[n].origin}
                for n in names if n in scenario.values]
            hypothesis = origin.startswith("hypothesis")
            out.append(Conflict(text, origin, failing, values, [] if hypothesis else _suggest(library, scenario, rel)))
            break
    return out


_NOT = {"<": "≥", "<=": ">", ">": "≤", ">=": "<", "==": "≠", "!=": "="}


def _side_text(library: Library, e: sp.Expr, v: sp.Expr, other: sp.Expr) -> str:
    shown = _shown(library, e, v, other)
    return shown if e.is_number else f"{e} = {shown}"


def _suggest(library: Library, scenario: Scenario, rel: Rel) -> list[str]:
    """``--set`` values that put ``rel`` on its boundary, one per quantity the scenario gives it."""
    out = []
    symbols = sorted((rel.lhs - rel.rhs).free_symbols, key=str)
    for sym in symbols:
        name = str(sym)
        if name not in scenario.values or len(out) >= 2:
            continue
        others = {s: value_of(library, scenario, s) for s in symbols if s != sym}
        if any(v is None for v in others.values()):
            continue
        situation = situate(library, scenario)
        lhs = situation.expand(rel.lhs, [name]).xreplace(others)
        rhs = situation.expand(rel.rhs, [name]).xreplace(others)
        if (lhs - rhs).free_symbols != {sym}:
            continue
        try:
            roots = [r for r in sp.solve(sp.Eq(lhs, rhs), sym) if r.is_real and r.is_positive]
        except (NotImplementedError, TypeError, ValueError):
            continue
        if len(roots) != 1:
            continue
        q = library.quantities[name]
        out.append(f'--set "{name}={input_text(roots[0], format_dimension(q.dimension))}"')
    return out


MAX_THRESHOLDS = 8  # margins computed per diff (each is a symbolic solve)


def explain_flips(report, *, rlimit: int | None = None) -> None:
    """Fill a ``derive.whatif.diff.DiffReport``'s ``headlines``, ``explanations`` (per changed claim: group
    instance/general, violations before/now, threshold, conflicts) and ``conflicts``."""
    lib = report.library
    assert lib is not None
    # each side's headlines read as the card reads them (one chip in one stage: its layout), the notes once each
    before, after = (with_implied_input_tables(lib, sc) for sc in (report.baseline, report.current))
    report.headlines = headlines_compared(lib, before, after)
    said = [*before.notes[len(report.baseline.notes):], *after.notes[len(report.current.notes):]]
    report.headline_notes = list(dict.fromkeys(said))
    one_value = (len(report.change.values) == 1 and not report.change.pinned_added
                 and not report.change.pinned_removed and not report.change.assumptions_added
                 and not report.change.assumptions_removed)
    thresholds = 0
    seen_conflicts: dict[str, object] = {}
    for cid in report.changed():
        claim = lib.declarations[cid]
        assert isinstance(claim, Claim)
        info: dict = {"group": "instance" if claim.instance else "general", "violations": []}
        for when, scenario, verdict in (("before", report.baseline, report.before[cid].verdict),
                                        ("now", report.current, report.after[cid].verdict)):
            if verdict == "refuted" and claim.instance:
                info["violations"] += [{**v.to_json(), "when": when} for v in violations(lib, scenario, claim)]
        if claim.instance and one_value and thresholds < MAX_THRESHOLDS:
            name = next(iter(report.change.values))
            thresholds += 1
            t = flip_threshold(lib, report.baseline, report.current, claim, name, rlimit=rlimit)
            if t is not None:
                info["threshold"] = t.to_json()
        if report.after[cid].verdict == "inconsistent":
            found = conflicts(lib, report.current, claim)
            info["conflicts"] = [c.to_json() for c in found]
            for c in found:
                seen_conflicts.setdefault(c.relation, c)
        report.explanations[cid] = info
    report.conflicts = list(seen_conflicts.values())
