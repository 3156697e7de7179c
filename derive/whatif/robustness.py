"""Robustness: how far each quantity a claim uses can move from its scenario value before the claim breaks.

``robustness(library, scenario, claim_ids)`` turns margins (``derive.whatif.margin``) into a table: for each
headline claim and each quantity it uses, how far the quantity can move from its scenario value, as factors
down and up, before the claim breaks.  A general headline claim does not depend on values; its rows are those
of the instance claims that use it (e.g. a lecture's numeric instance of a general law).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

import sympy as sp

from derive.errors import DeriveError
from derive.model.declarations import Assumption, Claim
from derive.model.library import Library
from derive.model.scenario import Scenario
from derive.model.situation import situate
from derive.whatif.margin import margin


@dataclass
class RobustnessRow:
    """How far one quantity can move from its scenario value before a claim breaks."""

    claim: str
    label: str
    quantity: str | None  # None: one row for a general claim
    unit: str
    value: float | None  # scenario value, in `unit`
    low: float | None  # the interval around the value, in `unit` (None: unbounded)
    high: float | None
    factor_down: float | None  # value / low (None: any decrease keeps the claim)
    factor_up: float | None  # high / value (None: any increase keeps the claim)
    holds: bool | None  # does the claim hold at the scenario value?
    note: str = ""
    exact_low: str | None = None
    exact_high: str | None = None
    headline: str | None = None  # the labelled claim this row belongs to (``claim`` may be its instance)

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


def robustness(library: Library, scenario: Scenario, claim_ids: Iterable[str] | None = None) -> list[RobustnessRow]:
    """The robustness table: for each headline claim (a claim with a ``label``; or the claims named in
    ``claim_ids``) and each base quantity it uses that the scenario gives a value (``forall`` quantities
    excluded), the interval of that quantity around its scenario value over which the claim holds, as
    factors: ``factor_down = value/low`` and ``factor_up = high/value``.  ``None`` for a factor means
    unbounded (the claim survives any move that way, within the quantity's domain).  ``holds`` False:
    the claim already fails at the scenario value (factors are then None).  A margin that cannot be
    computed gives a row with ``note`` saying why.  A general claim (``instance=False``) gets a single
    row with ``quantity`` None: its verdict does not depend on the scenario's values.  Rows come in
    library order, quantities by name; ``value``, ``low`` and ``high`` are in the quantity's display
    unit (``unit``), ``exact_low``/``exact_high`` the exact endpoints as text in that unit.
    Endpoints are exact (sympy); the z3 cross-check is skipped here for speed (``derive margin`` runs it).
    """
    if claim_ids is None:
        claims = [c for c in library.claims() if c.label]
    else:
        claims = []
        for i in claim_ids:
            d = library.resolve(i)
            if isinstance(d, Claim):
                claims.append(d)
    rows: list[RobustnessRow] = []
    todo: list[tuple[Claim, Claim]] = []  # (headline, claim whose margins are computed)
    for claim in claims:
        users = [] if claim.instance or claim_ids is not None else \
            [c for c in library.claims() if c.instance and any(u is claim for u in c.uses)]
        if claim.instance:
            todo.append((claim, claim))
        elif users:
            todo.extend((claim, u) for u in users)
        else:
            rows.append(RobustnessRow(claim.id, claim.label or claim.title, None, "", None, None, None, None, None,
                                      None, note="general claim: its verdict does not depend on the scenario's "
                                                 "values (it holds for every value its assumptions allow, or never)",
                                      headline=claim.id))
    for headline, claim in todo:
        forall = {q.name for q in claim.forall}
        used: set[str] = set()
        exprs = list(claim.exprs())
        for aid in library.rests_on(claim):
            a = library.declarations[aid]
            if isinstance(a, Assumption) and a.relation is not None:
                exprs.extend(a.relation.exprs())
        for e in exprs:
            used |= {str(s) for s in situate(library, scenario).expand(e).free_symbols}
        names = sorted(n for n in used if n in scenario.values and n not in forall)
        for name in names:
            row = _robustness_row(library, scenario, claim, name)
            row.label, row.headline = headline.label or headline.title, headline.id
            rows.append(row)
    return rows


def _robustness_row(library: Library, scenario: Scenario, claim: Claim, name: str) -> RobustnessRow:
    from derive.model.dimensions import format_dimension

    q = library.quantities[name]
    unit = q.display_unit or q.unit
    try:
        from derive.model.units import parse_unit

        u = parse_unit(unit)
        if u.dimension != q.dimension:
            raise ValueError
        scale = sp.Rational(u.scale.numerator, u.scale.denominator)
    except Exception:  # a display unit the parser does not know: fall back to SI
        unit, scale = format_dimension(q.dimension), sp.Integer(1)
    value = scenario.value(name)
    row = RobustnessRow(claim.id, claim.label or claim.title, name, unit, float(value / scale), None, None, None, None,
                        None)
    try:
        m = margin(library, scenario, claim.id, name, verify=False)
    except DeriveError as err:
        row.note = err.message
        return row
    around = m.around_value()
    row.holds = around is not None
    if around is None:
        row.note = "fails at the scenario value"
        return row
    if around.low is not None and around.low > 0:
        row.low, row.exact_low = float(around.low / scale), str(around.low / scale)
        row.factor_down = float(value / around.low)
    elif around.low is not None:
        row.low, row.exact_low = float(around.low / scale), str(around.low / scale)
    if around.high is not None:
        row.high, row.exact_high = float(around.high / scale), str(around.high / scale)
        row.factor_up = float(around.high / value) if value > 0 else None
    return row
