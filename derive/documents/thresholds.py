"""Thresholds of the headline claims: the exact edge of each input where a claim flips.

For every headline claim (a claim with a ``label``) that is read at the scenario's values, and for the
instance claims that put a general headline law to numbers, each input the claim depends on is moved
alone, the rest of the scenario fixed, and the exact interval around its scenario value on which the
claim holds is computed with ``derive.whatif.margin.margin`` (cell decomposition, exact endpoints,
each finite endpoint cross-checked by z3 just inside and just outside).  A document then says
"holds while W_out >= 56.25 GB/s, 2.0x below the scenario's 112.5 GB/s".

Left out, because they say nothing a reader can use: inputs the claim does not depend on (the margin
is the whole domain), the tolerance band of an "about X" claim (``logic.within_percent`` /
``within_factor``): its edges are just the +-1 % around the stated number, and a count that must be
exactly its value.  Claims quantified over an input (``forall``) are left out too: their edge would
need quantifier elimination, which ``margin`` does not do yet.

Thresholds are expensive (sympy solving); they are computed once per (engine and library sources,
scenario) and kept in the cache folder (``<cache>/documents/thresholds-<key>.json``), so a warm
build reads them.  A missing or corrupt entry is recomputed, never an error.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import sympy as sp

from derive.errors import DeriveError
from derive.kernel.logic import And, Formula, Rel
from derive.model.declarations import Assumption, Claim
from derive.model.library import Library
from derive.model.scenario import Scenario
from derive.model.situation import situate

FORMAT = 1


@dataclass(frozen=True)
class Band:
    """An "about X" goal: ``expr`` within ``amount`` (percent or factor) of ``center``."""

    expr: sp.Expr
    center: sp.Expr
    kind: str  # "percent" | "factor" | "between"
    amount: sp.Expr | None
    low: sp.Expr
    high: sp.Expr


def tolerance_band(goal: Formula) -> Band | None:
    """Recognise ``low <= e <= high`` with numeric bounds (what ``within_percent``/``within_factor``
    write): ``center`` and the tolerance, or None for any other goal."""
    if not isinstance(goal, And) or len(goal.args) != 2 or not all(isinstance(a, Rel) for a in goal.args):
        return None
    bounds: dict[str, sp.Expr] = {}
    expr = None
    for r in goal.args:
        if r.rhs.is_number and not r.lhs.is_number:
            e, op, b = r.lhs, r.op, r.rhs
        elif r.lhs.is_number and not r.rhs.is_number:
            e, op, b = r.rhs, {">=": "<=", "<=": ">=", ">": "<", "<": ">"}.get(r.op, r.op), r.lhs
        else:
            return None
        if expr is not None and e != expr:
            return None
        expr = e
        if op in (">=", ">"):
            bounds["low"] = b
        elif op in ("<=", "<"):
            bounds["high"] = b
    if set(bounds) != {"low", "high"} or expr is None:
        return None
    # bounds are exact already (the kernel refuses floats); nsimplify would run PSLQ on every irrational one
    low, high = bounds["low"], bounds["high"]
    if not (low.is_positive and high.is_positive and high > low):
        return None
    center = (low + high) / 2
    tol = (high - low) / (high + low)
    geo = sp.sqrt(low * high)
    factor = Band(expr, geo, "factor", high / geo, low, high) if geo.is_Rational else None
    if tol.is_Rational and (tol * 100).is_Rational and (tol * 100).q <= 10:
        percent = Band(expr, center, "percent", tol * 100, low, high)
        # a band can read both ways (+-28 % of 133,333 is a factor 4/3 of 128,000): the rounder centre wins
        if factor is not None and sp.Rational(geo).q < sp.Rational(center).q:
            return factor
        return percent
    if factor is not None:
        return factor
    return Band(expr, center, "between", None, low, high)


@dataclass
class Threshold:
    """Where one claim flips as one input moves (numbers in SI; exact text where rational)."""

    headline: str  # the headline claim this row belongs to
    claim: str  # the claim whose statement was varied (the headline itself, or its instance)
    quantity: str
    value: float  # the scenario's value of the quantity (SI)
    holds: bool  # does the claim hold at the scenario's value?
    low: float | None  # edge below the value (None: none), SI
    low_closed: bool
    high: float | None
    high_closed: bool
    low_exact: str | None = None
    high_exact: str | None = None
    verified: bool | None = None  # z3 agreed at every edge (None: not cross-checked)
    note: str = ""

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Threshold:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__})


def has_band(goal: Formula) -> bool:
    """Does the goal contain an "about X" tolerance band anywhere (in a conjunction of several)?"""
    if tolerance_band(goal) is not None:
        return True
    return isinstance(goal, And) and any(has_band(a) for a in goal.args)


def headline_pairs(library: Library) -> list[tuple[Claim, Claim]]:
    """(headline, claim to vary): an instance headline itself; for a general headline, the instance
    claims that use it (its lecture numbers).  "About X" claims are left out (see the module docstring)."""
    out: list[tuple[Claim, Claim]] = []
    claims = library.claims()
    for c in claims:
        if not c.label:
            continue
        targets = [c] if c.instance else [u for u in claims if u.instance and any(x is c for x in u.uses)]
        for t in targets:
            if not has_band(t.goal) and not t.forall:
                out.append((c, t))
    return out


def _inputs(library: Library, scenario: Scenario, claim: Claim) -> list[str]:
    forall = {q.name for q in claim.forall}
    exprs = list(claim.exprs())
    for aid in library.rests_on(claim):
        a = library.declarations[aid]
        if isinstance(a, Assumption) and a.relation is not None:
            exprs.extend(a.relation.exprs())
    used: set[str] = set()
    situation = situate(library, scenario)
    for e in exprs:
        used |= {str(s) for s in situation.expand(e).free_symbols}
    return sorted(n for n in used if n in scenario.values and n not in forall
                  and library.quantities.get(n) is not None and library.quantities[n].value is None)


def _exact(e: sp.Expr | None) -> str | None:
    return None if e is None or not e.is_Rational else str(e)


def compute_thresholds(library: Library, scenario: Scenario, *, verify: bool = True) -> list[Threshold]:
    """Every threshold of the headline claims (see the module docstring); library order, inputs by name."""
    from derive.whatif.margin import margin

    rows: list[Threshold] = []
    for headline, claim in headline_pairs(library):
        for name in _inputs(library, scenario, claim):
            try:
                m = margin(library, scenario, claim.id, name, verify=verify)
            except DeriveError:
                continue  # not supported for this claim and input: nothing to say
            if m.value is None or m.symbol not in m.formula.free_symbols():
                continue  # the claim does not depend on this input
            value = m.value
            around = m.around_value()
            holds = around is not None
            if around is None:
                # the claim fails here: the nearest interval where it would hold
                near = sorted(m.intervals, key=lambda i: min(abs(e - value) for e in (i.low, i.high) if e is not None)
                              if (i.low is not None or i.high is not None) else 0)
                if not near:
                    rows.append(Threshold(headline.id, claim.id, name, float(value), False, None, False, None, False,
                                          note="fails for every value of this input" + (
                                              "; at the scenario's value its assumptions contradict each other"
                                              + (f" ({m.outside_domain.words()})" if m.outside_domain else "")
                                              if m.reading_at_value == "inconsistent" else
                                              "; at the scenario's value it is not read: a definition it reads "
                                              "breaks what it declares there"
                                              if m.reading_at_value == "unknown" else "")))
                    continue
                around = near[0]
            low = around.low if around.low is not None and not (around.low <= 0 and m.domain != "real") else None
            high = around.high
            if low is None and high is None:
                continue  # holds whatever this input: it does not decide the claim
            if low is not None and high is not None and low == high:
                continue  # an identity at one point (a count that must be exactly this): no edge to speak of
            verified = None if not m.checks else m.verified
            rows.append(Threshold(headline.id, claim.id, name, float(value), holds,
                                  None if low is None else float(sp.N(low, 30)), bool(around.low_closed),
                                  None if high is None else float(sp.N(high, 30)), bool(around.high_closed),
                                  _exact(low), _exact(high), verified))
    return rows


def _cache_path(directory: Path, library: Library, scenario: Scenario, verify: bool) -> Path:
    import hashlib

    from derive.checking.cache import library_digest, sources_digest

    key = hashlib.sha256(json.dumps({"sources": sources_digest(), "scenario": scenario.fingerprint(),
                                     "verify": verify, "format": FORMAT,
                                     "library": library_digest(library)}).encode()).hexdigest()
    return directory / "documents" / f"thresholds-{key[:32]}.json"


def thresholds(library: Library, scenario: Scenario, *, cache_dir: Path | None = None,
               verify: bool = True) -> list[Threshold]:
    """``compute_thresholds``, read from / written to ``cache_dir`` when given."""
    path = _cache_path(cache_dir, library, scenario, verify) if cache_dir is not None else None
    from derive.checking.cache import atomic_write, seal, unseal

    if path is not None:
        data = unseal(path, "thresholds", path.stem)  # sealed: a damaged or edited entry is a miss
        try:
            return [Threshold.from_json(r) for r in data["rows"]]
        except (ValueError, KeyError, TypeError):
            pass
    rows = compute_thresholds(library, scenario, verify=verify)
    if path is not None:
        atomic_write(path, seal("thresholds", path.stem, {"rows": [r.to_json() for r in rows]}))
    return rows


def by_claim(rows: Sequence[Threshold]) -> dict[str, list[Threshold]]:
    out: dict[str, list[Threshold]] = {}
    for r in rows:
        out.setdefault(r.claim, []).append(r)
    return out
