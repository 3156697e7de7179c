"""A speed-of-light predictor: the proved floor on one step, split into its terms, for serving simulators.

The library says which floor (``PREDICT_METRIC``: an ``AUDIT_BOUNDS`` metric with a claim and terms; the
lecture's is ``tpot``, held to ``gap.roofline_floor_below_measured``).  The floor is the claim's right side,
each term an expression the library declares, all evaluated exactly under the scenario as ``derive eval``
does; the claim is checked once under no scenario values, so ``proved`` holds at every point.

JSON (``derive export --format floors-json``, ``Floors.to_json()``), keys in this order, stable across runs::

    {"schema": "derive.floors/1",
     "metric": "tpot", "meaning": "...",              # the library's metric and what it measures
     "quantity": "step_time_floor",                   # the claim's bound, as derive eval names it
     "claim": {"id": "...", "title": "...", "statement": "...", "verdict": "proved",
               "lower_bound": true,                   # true only when the verdict is proved and it is a floor
               "rests_on": ["...", ...]},
     "points": [{"scenario": "...",                   # one per scenario (batch, context, ... varied)
                 "inputs": {"batch": V, "context": V, ...},   # the library's row inputs at the point
                 "floor": V,                          # the bound's value
                 "terms": {"compute": V, "weights": V, ...},  # the library's terms, same unit as the floor
                 "infeasible": ["..."]}]}             # notes: the scenario cannot exist as stated (fits no HBM)

where each ``V`` is ``{"exact": "p/q" (SI base units) or null, "value": float in "unit" or null, "unit": "s",
"display": "14.4 ms"}``.  A latency predictor reads ``points[i].floor.value`` (in ``unit``) as the least time
of one decode step; the terms are what the library's floor combines (the lecture's: the larger of compute and
weights + KV + embedding rows), for a simulator that models each resource itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from derive.errors import LibraryError
from derive.model.evaluate import Evaluation, evaluate
from derive.model.library import Library
from derive.model.scenario import Scenario

SCHEMA = "derive.floors/1"


@dataclass
class FloorPoint:
    """The floor at one scenario: its value, its terms and the library's row inputs there."""

    scenario: Scenario
    floor: Evaluation
    terms: dict[str, Evaluation]
    inputs: dict[str, Evaluation]
    infeasible: list[str]  # the scenario's violated feasibility claims, as notes (the floor still holds)


@dataclass
class Floors:
    """The proved floor of the library's ``PREDICT_METRIC`` at one or more scenarios."""

    metric: str
    meaning: str
    quantity: str
    claim: str
    title: str
    statement: str
    verdict: str
    is_floor: bool
    rests_on: tuple[str, ...]
    points: list[FloorPoint]

    @property
    def lower_bound(self) -> bool:
        """A proved lower bound: the claim is proved and bounds the metric from below."""
        return self.is_floor and self.verdict == "proved"

    def to_json(self) -> dict:
        return {"schema": SCHEMA, "metric": self.metric, "meaning": self.meaning, "quantity": self.quantity,
                "claim": {"id": self.claim, "title": self.title, "statement": self.statement,
                          "verdict": self.verdict, "lower_bound": self.lower_bound, "rests_on": list(self.rests_on)},
                "points": [{"scenario": p.scenario.name, "inputs": {k: _value(v) for k, v in p.inputs.items()},
                            "floor": _value(p.floor), "terms": {k: _value(v) for k, v in p.terms.items()},
                            "infeasible": list(p.infeasible)} for p in self.points]}

    def __repr__(self) -> str:
        head = f"{self.quantity} ({self.claim}: {self.verdict}{', a lower bound' if self.lower_bound else ''})"
        lines = [head]
        for p in self.points:
            where = ", ".join(f"{k} = {v.display}" for k, v in p.inputs.items())
            terms = ", ".join(f"{k} {v.display}" for k, v in p.terms.items())
            lines.append(f"  {where}: {p.floor.display} ({terms})")
            lines += [f"    {n}" for n in p.infeasible]  # a floor where no deployment can exist says so
        return "\n".join(lines)


def _value(ev: Evaluation) -> dict[str, object]:
    return {"exact": None if ev.exact is None else str(ev.exact), "value": ev.value, "unit": ev.unit,
            "display": ev.display}


def predict_floors(library: Library, scenarios: list[Scenario], check: callable) -> Floors:
    """The floor of the library's ``PREDICT_METRIC`` at each scenario.  ``check(ids) -> {id: ClaimResult}``
    checks the claim once (``derive.whatif.audit.checker_for``: under no scenario values)."""
    from derive.whatif.feasibility import feasibility
    from derive.whatif.ledger import check_relation

    metric = library.predict_metric
    if metric is None:
        raise LibraryError("the library declares no PREDICT_METRIC, so it names no floor to predict",
                           hint='declare PREDICT_METRIC = "<an AUDIT_BOUNDS metric with a claim and terms>"')
    raw = next((b for b in library.audit_bounds if b["metric"] == metric and "claim" in b and b.get("terms")), None)
    if raw is None:
        raise LibraryError(f"PREDICT_METRIC '{metric}' is no AUDIT_BOUNDS metric declared with a claim and terms")
    meaning = next((str(b["meaning"]) for b in library.audit_bounds if b["metric"] == metric and "meaning" in b), "")
    cid = str(raw["claim"])
    where = f"PREDICT_METRIC ({metric})"
    _, op, rhs = check_relation(library, cid, where)
    if op not in (">=", "<="):
        raise LibraryError(f"'{cid}' is a relation '{op}'; a predicted floor needs a '>=' claim", where=where)
    if str(raw.get("measured")) != metric:
        raise LibraryError(f"the bound of '{metric}' reads it through '{raw.get('measured')}'; a predicted floor "
                           "needs the metric to be the claim's measured quantity itself", where=where)
    quantity = rhs.name if isinstance(rhs, sp.Symbol) else sp.sstr(rhs)
    result = check([cid])[cid]
    decl = library.declarations[cid]
    terms = {str(k): str(v) for k, v in dict(raw["terms"]).items()}
    inputs = [str(x) for x in raw.get("row_inputs", ())]
    points = []
    for sc in scenarios:
        floor = evaluate(library, sc, quantity)
        unit = floor.unit  # every term in the floor's unit, so a simulator adds like with like
        parts = {}
        for label, text in terms.items():
            ev = evaluate(library, sc, text)
            parts[label] = ev if ev.unit == unit else evaluate(library, sc, text, unit)
        points.append(FloorPoint(sc, floor, parts, {n: evaluate(library, sc, n) for n in inputs},
                                 list(feasibility(library, sc).notes)))
    return Floors(metric, meaning, quantity, cid, decl.title, decl.statement, result.verdict, op == ">=",
                  tuple(library.rests_on(decl)), points)
