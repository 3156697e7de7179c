"""A card: the everyday answers for one scenario, each resting on a declaration and its verdict.

The library lists the rows (a root's ``CARD``): a label, the declaration the answer rests on, and either a
value (an expression evaluated at the scenario) or a quantity to vary (the exact margin of the claim over
it, the largest value where it holds).  Each row carries the value with its unit, the declaration's id and
kind, and its verdict at the scenario (a claim is checked; a definition is a definition).  The engine does
not know what the rows mean.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from derive.errors import DeriveError, LibraryError, MissingValueError
from derive.model.declarations import Claim, Declaration
from derive.model.library import Library
from derive.model.scenario import Scenario, relation_at, with_implied_input_tables
from derive.model.units import format_dimension
from derive.whatif.feasibility import NEGATED, Feasibility, Limit, failing_hypotheses, feasibility


@dataclass
class CardRow:
    label: str
    name: str  # the evaluated expression, or the varied quantity
    display: str  # the whole answer: "12.3 ms", "1.523M token/seq (infeasible there: ...)", "undefined (...)"
    exact: str | None  # SI, exact
    unit: str  # the SI unit of ``exact`` (``display`` has its own, with a prefix)
    decl: str
    kind: str  # "claim" | "definition" | ...
    verdict: str  # the claim's verdict at the scenario, or the declaration's kind
    # ``display`` in two parts, for a table: the value alone ("1.523M token/seq", "undefined", "error") and
    # what is said of it (why it is undefined, a bound its value breaks), printed below the table
    shown: str = ""
    note: str | None = None

    def __post_init__(self) -> None:
        if not self.shown:
            self.shown = self.display

    @property
    def infeasible(self) -> bool:
        """Whether the note says the value lies where the scenario cannot exist (the table says so too)."""
        return bool(self.note) and self.note.startswith("infeasible")

    def to_json(self) -> dict[str, object]:
        return {"label": self.label, "name": self.name, "display": self.display, "exact": self.exact,
                "unit": self.unit, "decl": self.decl, "kind": self.kind, "verdict": self.verdict,
                "shown": self.shown, "note": self.note}


@dataclass
class Card:
    scenario: Scenario
    rows: list[CardRow]
    feasibility: Feasibility
    inputs: list[str] = field(default_factory=list)  # the scenario inputs the rows used

    @property
    def rows_with_notes(self) -> list[CardRow]:
        return [r for r in self.rows if r.note]

    def to_json(self) -> dict[str, object]:
        return {"scenario": self.scenario.name, "rows": [r.to_json() for r in self.rows],
                "feasibility": self.feasibility.to_json(), "notes": self.scenario.notes_for(self.inputs)}


def card(library: Library, scenario: Scenario, checker=None) -> Card:
    """The library's CARD rows at ``scenario`` (with an input table it does not use read at its defaults where
    those are what the scenario says: ``with_implied_input_tables``); ``checker`` (a
    ``derive.checking.checker.Checker``) gives the verdicts of the claims (none checked when it is None: the
    verdict reads ``not checked``)."""
    from derive.model.display import format_bound, format_quantity, format_value
    from derive.model.evaluate import evaluate
    from derive.whatif.margin import margin

    # one chip in one stage is one layout (every degree 1): its rows are answered, not asked for, with a note
    scenario = with_implied_input_tables(library, scenario)
    checker = None if checker is None else checker.at(scenario)
    rows_spec = list(getattr(library, "card", ()) or ())
    if not rows_spec:
        raise LibraryError("this library declares no card (a root's CARD)", where="card",
                          hint="derive eval NAME evaluates any quantity")
    decls = [library.resolve(r["decl"]) for r in rows_spec]
    claims = [d.id for d in decls if isinstance(d, Claim)]
    verdicts: dict[str, str] = {}
    if checker is not None and claims:
        report = checker.check(claims)
        verdicts = {cid: r.verdict for cid, r in report.by_id().items()}
    rows: list[CardRow] = []
    inputs: set[str] = set()
    for spec, d in zip(rows_spec, decls, strict=True):
        verdict = verdicts.get(d.id, "not checked") if isinstance(d, Claim) else d.kind
        # a general claim whose own hypotheses fail here is proved for other values: its row says so
        outside = _outside(library, scenario, d) if isinstance(d, Claim) and not d.instance else None
        if outside:  # its words name the scenario's values of the failing hypothesis: their notes go below
            inputs |= _read_inputs(library, scenario, d.hypotheses)
        if "value" in spec:
            try:
                ev = evaluate(library, scenario, spec["value"], spec.get("unit"), dependence=True)
            except MissingValueError as err:  # an input the chip and the model do not give: say which (one a
                # given zero multiplies is not needed, one a side condition reads, a denominator, is: ``evaluate``'s)
                rows.append(_needs_row(library, spec["label"], spec["value"], d, verdict, sorted(err.names)))
                continue
            inputs.update(ev.used)
            if ev.exact is None:
                shown, note = "undefined", ev.reason
            else:
                shown, note = format_value(ev.in_unit(), ev.unit, fixed=ev.fixed_unit), "; ".join(ev.notes) or None
            note = "; ".join(n for n in (note, outside, *_caveats(library, scenario, spec, inputs)) if n) or None
            rows.append(CardRow(spec["label"], spec["value"], ev.display, None if ev.exact is None else str(ev.exact),
                                format_dimension(ev.dimension), d.id, d.kind, verdict, shown, note))
            continue
        name = spec["vary"]
        q = library.quantities[name]
        try:
            m = margin(library, scenario, d.id, name, verify=False)
        except MissingValueError as err:  # worded as a value row's: which inputs to give
            rows.append(_needs_row(library, spec["label"], name, d, verdict, sorted(err.names)))
            continue
        except DeriveError as err:
            rows.append(CardRow(spec["label"], name, f"error: {err.message}", None, format_dimension(q.dimension),
                                d.id, d.kind, verdict, "error", err.message))
            continue
        goal_inputs = _goal_inputs(library, d)
        inputs.update(n for n in scenario.values
                      if n in library.quantities and library.quantities[n].sym in goal_inputs)
        highs = [iv.high for iv in m.intervals]
        note = None
        capped = _capped(m) if highs else None
        if not highs:
            shown, exact = "none: it fits at no value", None
        elif capped is not None:  # a feasibility bound on the quantity itself ends the answer first (the model's
            # maximum context before the memory's): the longest value that fits and can exist, and what ends it
            top = None if any(h is None for h in highs) else max(highs)
            alone = "with no upper end" if top is None else \
                f"up to {format_bound(top, q.dimension, q.display_unit, upper=True)}"
            shown, exact = format_bound(capped.value, q.dimension, q.display_unit, upper=True), str(capped.value)
            note = (f"ends {'just below' if capped.strict else 'at'} a feasibility bound, {capped.relation} with "
                    f"{capped.shown} ({capped.claim}); {d.id} alone holds {alone}")
        elif any(h is None for h in highs):
            shown, exact = "no limit", None
        else:
            top = max(highs)  # the largest value that fits: printed no higher than it is
            shown, exact = format_bound(top, q.dimension, q.display_unit, upper=True), str(sp.nsimplify(top))
            own = scenario.values.get(name)
            beyond = _infeasible_at(library, scenario, name, top) if own is not None else []
            if beyond:  # the largest value that fits breaks another bound (a context past the model's maximum)
                note = f"infeasible there: {'; '.join(f'{v.rhs} ({v.claim})' for v in beyond)}"
            elif own is not None and top > own.value:
                note = (f"more than the scenario's {format_quantity(own.value, q.dimension, q.display_unit)}"
                        f"{', from ' + own.origin if own.origin else ''}")
        note = "; ".join(n for n in (note, outside, *_caveats(library, scenario, spec, inputs)) if n) or None
        display = shown + (f" ({note})" if note else "")
        rows.append(CardRow(spec["label"], name, display, exact, format_dimension(q.dimension), d.id, d.kind, verdict,
                            shown, note))
    return Card(scenario, rows, feasibility(library, scenario), sorted(inputs))


def _needs_row(library: Library, label: str, name: str, d: Declaration, verdict: str, missing: list[str]) -> CardRow:
    """A row whose answer needs inputs the scenario does not give, naming them (more than two: the table says how
    many and the list goes below it, as a note; JSON: both)."""
    needs = "needs " + ", ".join(f"--set {n}=..." for n in missing)
    shown, note = (f"needs {len(missing)} inputs", needs) if len(missing) > 2 else (needs, None)
    q = library.quantities.get(name)  # the row's own unit, not the missing input's
    unit = format_dimension(q.dimension) if q is not None else ""
    return CardRow(label, name, needs, None, unit, d.id, d.kind, verdict, shown, note)


def caveats_for(library: Library, scenario: Scenario, name: str, used: set[str] | None = None) -> list[str]:
    """The caveats the library's card attaches to the value ``name`` (its rows whose value it is) that hold at
    the scenario, each with the row's label: ``derive eval`` says them beside the value, as the card does.
    ``used`` receives the inputs they rest on (as ``_caveats``)."""
    return [f"{spec['label']}: {note}" for spec in getattr(library, "card", ()) or ()
            if spec.get("value") == name for note in _caveats(library, scenario, spec, used)]


def _caveats(library: Library, scenario: Scenario, spec: dict, used: set[str] | None = None) -> list[str]:
    """The notes of a row's caveats whose relation holds at the scenario's values, decided exactly (one whose
    quantities the scenario does not all give, or that has no value there, is not decided: no note).  ``used``
    receives the inputs a note rests on, so that where they came from is said too."""
    out = []
    for c in spec.get("caveats", ()):
        decided = relation_at(library, c["relation"], scenario.values, scenario.pinned)
        if decided is not None and decided[0]:
            out.append(f"{c['when']} here: {c['note']}")
            if used is not None:
                used.update(library.quantity_of(sym).name for sym in decided[1])
    return out


def _read_inputs(library: Library, scenario: Scenario, formulas) -> set[str]:
    """The scenario's inputs that ``formulas`` rest on once expanded through the definitions."""
    pinned = frozenset(scenario.pinned)
    names = {library.quantity_of(sym).name for f in formulas
             for sym in library.formula_expand(f, pinned).free_symbols()}
    return {n for n in names if n in scenario.values}


def _outside(library: Library, scenario: Scenario, claim: Claim) -> str | None:
    """Words for a general claim whose own hypotheses fail at the scenario (None where they hold or lack values)."""
    failing = failing_hypotheses(library, scenario, claim)
    if not failing:
        return None
    v = failing[0]
    more = f" (and {len(failing) - 1} more)" if len(failing) > 1 else ""
    return (f"{claim.id} assumes {v.relation}{more}, and here {v.lhs} {NEGATED.get(v.op, '?')} {v.rhs}: proved where "
            "its hypotheses hold, it says nothing at this scenario's values")


def _capped(m) -> Limit | None:
    """The tightest feasibility bound on the varied quantity itself that ends the margin's intervals sooner than
    they end (the margin's ``limits``), where the claim still holds up to it; None where none does."""
    if not m.limits:
        return None
    lim = m.limits[0]
    holds_there = any(iv.contains(lim.value) or (lim.strict and iv.high is not None and iv.high == lim.value
                                                  and (iv.low is None or iv.low < lim.value)) for iv in m.intervals)
    return lim if holds_there else None


def _infeasible_at(library: Library, scenario: Scenario, name: str, value: sp.Expr) -> list:
    """The feasibility bounds the scenario breaks once ``name`` takes ``value`` (and not before)."""
    import dataclasses

    from derive.model.scenario import ScenarioValue

    before = {v.claim for v in feasibility(library, scenario).violations}
    values = {**scenario.values, name: ScenarioValue(name, sp.Rational(value), "card", origin="card")}
    there = feasibility(library, dataclasses.replace(scenario, values=values))
    return [v for v in there.violations if v.claim not in before and name in v.relation]


def _goal_inputs(library: Library, claim: Claim) -> set:
    """The base quantities a claim's goal rests on, through the definitions."""
    out: set = set()
    for s in claim.goal.free_symbols():
        out |= set(library.expand(s).free_symbols)
    return out
