"""``live.html``: the site's live page, where a reader changes the scenario and every number follows.

The reader picks a chip and a model among the library's presets (or keeps the build's own scenario) and
edits any input quantity; the page then recomputes, in the browser and offline, every derived quantity, each
feasibility bound (a root's ``FEASIBILITY``) and the truth of each instance claim at those values.

Nothing is re-typed for the browser:

- every formula (definitions, their domains and declared conditions, relations of claims, hypotheses,
  derivation steps, feasibility bounds) is printed by sympy's JavaScript printer
  (``sympy.printing.jscode``), each quantity read through one function ``g(name)`` so that the scenario's
  pins cut definitions at run time exactly as ``Library.expand`` does;
- every preset combination is the scenario ``build_scenario`` gives (``derive eval --hardware H --model M``),
  computed here, so the page never composes layers itself;
- numbers are shown by a mirror of ``derive.model.display.shown`` that reads the formatter's own tables
  (``formatter_tables``) and computes with exact rationals (BigInt); tests hold it to the Python formatter.

A pasted ``config.json`` is read with the library's config reader declared as formulas (a root's
``LIVE_CONFIG_FORMULAS``, ``derive.model.config_formulas``), printed by the same printer, for the file types it
declares; the page refuses any other file in one line and names the command that reads it.  The scenario a
pasted file lands in, for each chip, is the one ``build_scenario`` gives with an empty model layer (the
deployment defaults, the chip), with the names whose native values the model may replace
(``model_may_replace``); the page puts the file's values over it, as ``derive eval --hardware H --model
config.json`` does.

What the page cannot do, it says: a formula the printer cannot express (an undeclared function such as
``f(x)``), a claim quantified over an input (``forall``), a claim whose hypotheses need a value the scenario
lacks: "not available live".
Values are computed in floating point; relations compare with a relative tie band of ``TIE`` (differences
within it read as equal), and the exact verdicts and thresholds the engine computed for the build's scenario
stand beside them.

Deterministic (sorted keys, library order), one self-contained file: the script and its data are inline.
The presets' scenarios are the slow part (one ``build_scenario`` each); they are cached in the build's
artifact store by the engine's and the presets' contents.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path

import sympy as sp
from sympy.printing.jscode import JavascriptCodePrinter

from derive.checking.checker import Checker, Report, resting_claims
from derive.documents.thresholds import Threshold
from derive.errors import BuildError, DeriveError
from derive.kernel.logic import And, Formula, Iff, Implies, IsInteger, Not, Or, Rel
from derive.kernel.trusted import side_conditions
from derive.model.config_formulas import TYPE_FIELD
from derive.model.declarations import Assumption, Claim, Definition, Quantity
from derive.model.dimensions import dimension_of
from derive.model.display import canonical_factors, format_value, formatter_tables
from derive.model.library import Library
from derive.model.scenario import ModelLayer, PresetStore, Scenario, build_scenario, model_may_replace
from derive.model.situation import bound_relations, holds_by_declared_signs, relations
from derive.model.units import Dimension, format_dimension, parse_unit, unit_factors
from derive.whatif.feasibility import NEGATED, constraint_statement, constraints

LIVE_PAGE = "live.html"
TIE = 1e-12  # relative difference under which two floating-point sides of a relation read as equal
FORMAT = 3  # of the cached preset scenarios
PASTED = "config config.json (pasted)"  # the model layer a pasted config.json makes (its origin's first word: config)


class _Printer(JavascriptCodePrinter):
    """sympy's JavaScript printer, every quantity read through ``g("name")`` (pins are decided at run time)."""

    def _print_Symbol(self, expr: sp.Symbol) -> str:
        return f'g("{expr.name}")'

    def _print_Mul(self, expr: sp.Mul) -> str:
        # derive eval substitutes values into sympy, where 0 * x is 0: a factor that comes to 0 makes the product
        # 0 whatever another factor lacks, so the page's product reads its factors lazily (LIVE_PRODUCT, live.js)
        if sum(1 for a in expr.args if a.free_symbols) < 2:
            return super()._print_Mul(expr)
        return "LIVE_PRODUCT(" + ", ".join(f"function(){{return {self._print(a)};}}" for a in expr.args) + ")"


_PRINTER = _Printer({"strict": True})


def js_code(expr: sp.Expr) -> str | None:
    """``expr`` as a JavaScript expression, or None where the printer cannot express it."""
    if expr.atoms(sp.core.function.AppliedUndef):
        return None  # an undeclared function (f(x)): no formula to print
    try:
        return _PRINTER.doprint(expr)
    except (ValueError, TypeError, NotImplementedError, AttributeError):
        return None


class _Exporter:
    """Expressions (deduplicated, in first-use order) and formulas as trees that point into them."""

    def __init__(self, library: Library) -> None:
        self.library = library
        self.code: list[str] = []
        self.index: dict[str, int] = {}
        self.everything = frozenset(library.quantities)  # every quantity a leaf: read_signs, no expansion

    def expr(self, e: sp.Expr) -> int | None:
        code = js_code(sp.sympify(e))
        if code is None:
            return None
        if code not in self.index:
            self.index[code] = len(self.code)
            self.code.append(code)
        return self.index[code]

    def formula(self, f: Formula) -> list | None:
        """``["rel", i, op, j]``, ``["and", ...]``, ``["or", ...]``, ``["not", f]``, ``["imp", p, c]``,
        ``["iff", a, b]``, ``["int", i]``; None when a part cannot be printed."""
        f = self.library.formula_expand(f, self.everything)  # ``within_factor`` read by the declared signs
        return self._tree(f)

    def _tree(self, f: Formula) -> list | None:
        if isinstance(f, Rel):
            a, b = self.expr(f.lhs), self.expr(f.rhs)
            return None if a is None or b is None else ["rel", a, f.op, b]
        if isinstance(f, IsInteger):
            a = self.expr(f.expr)
            return None if a is None else ["int", a]
        if isinstance(f, (And, Or)):
            parts = [self._tree(x) for x in f.args]
            return None if any(p is None for p in parts) else ["and" if isinstance(f, And) else "or", *parts]
        if isinstance(f, Not):
            inner = self._tree(f.arg)
            return None if inner is None else ["not", inner]
        if isinstance(f, (Implies, Iff)):
            a, b = (f.premise, f.conclusion) if isinstance(f, Implies) else (f.left, f.right)
            ta, tb = self._tree(a), self._tree(b)
            return None if ta is None or tb is None else ["imp" if isinstance(f, Implies) else "iff", ta, tb]
        return None


def _float(value: sp.Expr | Fraction | int) -> float:
    """A correctly rounded float of an exact value."""
    if isinstance(value, sp.Rational):
        return float(Fraction(int(value.p), int(value.q)))
    if isinstance(value, (Fraction, int)):
        return float(value)
    return float(sp.N(value, 30))


def _unit_info(unit: str) -> dict:
    """What the script's formatter needs to show a value given in ``unit``."""
    return {"unit": unit, "factors": [list(f) for f in canonical_factors(unit)]}


def _quantities(library: Library) -> dict:
    out = {}
    for name in sorted(library.quantities):
        q = library.quantities[name]
        si = format_dimension(q.dimension)
        entry: dict[str, object] = {"meaning": q.meaning, "domain": q.domain, "integer": q.integer,
                                    "derived": library.is_derived(name), "si": _unit_info(si)}
        entry["input_unit"], entry["input_scale"] = _input_unit(q)
        if q.value is not None:
            entry["constant"] = _float(q.value)
        out[name] = entry
    return out


def _input_unit(q: Quantity) -> tuple[str, float]:
    """The unit a reader types a quantity's value in (its display unit, else its unit), and its scale to SI."""
    for text in (q.display_unit, q.unit):
        if not text:
            continue
        try:
            unit = parse_unit(text)
        except DeriveError:
            continue
        if unit.dimension == q.dimension:
            return text, float(unit.scale)
    return format_dimension(q.dimension), 1.0


def _definitions(library: Library, ex: _Exporter) -> dict:
    """Each definition: its expression, the quantities it reads, its domain and what it declares of its value
    (``Library.definition_conditions`` one level deep: every other quantity a leaf)."""
    out = {}
    for d in library.ordered():
        if not isinstance(d, Definition):
            continue
        q = d.defines
        others = frozenset(library.quantities) - {q.name}
        entry: dict[str, object] = {"id": d.id, "expr": ex.expr(d.expr),
                                    "deps": sorted(str(s) for s in d.expr.free_symbols),
                                    # where the formula is defined (its denominators, roots, branches): derive
                                    # eval asks for their inputs even where a factor of 0 makes the value 0,
                                    # save one the declared signs settle (a positive bandwidth is never 0)
                                    "side": [ex.formula(sc.condition) for sc in side_conditions(d.expr)
                                             if not holds_by_declared_signs(library, sc.condition)]}
        if d.domain is not None:
            entry["domain"] = ex.formula(d.domain)
            entry["domain_text"] = str(d.domain)
            entry["deps"] = sorted(set(entry["deps"]) | {str(s) for s in d.domain.free_symbols()})  # type: ignore
        for kind in ("domain", "declared"):
            conds = []
            for label, c in library.definition_conditions([q.sym], others, kinds=(kind,)):
                tree = ex.formula(c)
                conds.append({"label": label, "f": tree})
            entry["cond_" + kind] = conds
        out[q.name] = entry
    return out


def _feasibility(library: Library, ex: _Exporter) -> list[dict]:
    out = []
    for claim in constraints(library):
        statement = constraint_statement(claim)
        for rel in relations(statement) if isinstance(statement, Formula) else []:
            sides = []
            for side in (rel.lhs, rel.rhs):
                name = str(side) if isinstance(side, sp.Symbol) else ""
                q = library.quantities.get(name)
                try:
                    dim = q.dimension if q is not None else dimension_of(side, library.dimension,
                                                                          where="feasibility")
                except DeriveError:
                    dim = Dimension()  # a side no unit reader places: shown as a plain number, as derive does
                unit, scale = format_dimension(dim), 1.0
                if q is not None and q.display_unit and any(p in ("Ki", "Mi", "Gi", "Ti")
                                                            for p, _, _ in unit_factors(q.display_unit)):
                    unit, scale = q.display_unit, float(parse_unit(q.display_unit).scale)
                sides.append({"expr": ex.expr(side), "name": name, "scale": scale, **_unit_info(unit)})
            out.append({"claim": claim.id, "title": claim.title, "relation": f"{rel.lhs} {rel.op} {rel.rhs}",
                        "op": rel.op, "lhs": sides[0], "rhs": sides[1]})
    return out


def _steps(claim: Claim) -> tuple[list[Formula], bool]:
    """The links ``derive check`` decides for a claim's derivation (the checker's chain: each line against the
    previous one), and whether a step mixes an expression and a relation (the checker's ``unknown`` there)."""
    chain = [(s.formula, s.link) for s in claim.steps]
    goal = claim.goal
    if chain and isinstance(goal, Rel) and goal.op == "==" and not isinstance(chain[0][0], Formula):
        chain = [(goal.lhs, ""), *chain, (goal.rhs, "")]
    first_is_supposition = bool(claim.steps) and claim.steps[0].link == "iff"
    links: list[Formula] = []
    mixed = False
    prev = None
    for formula, link_kind in chain:
        if prev is None:
            if isinstance(formula, Formula) and not first_is_supposition:
                links.append(formula)
        elif isinstance(prev, sp.Basic) and isinstance(formula, sp.Basic) and prev == formula:
            pass
        elif isinstance(prev, Formula) and isinstance(formula, Formula):
            links.append(Iff(prev, formula) if link_kind == "iff" else Implies(prev, formula))
        elif not isinstance(prev, Formula) and not isinstance(formula, Formula):
            links.append(Rel(prev, "==", formula))
        else:
            mixed = True
        prev = formula
    return links, mixed


def _claims(library: Library, scenario: Scenario, report: Report, thresholds: Sequence[Threshold],
            ex: _Exporter, hrefs: Mapping[str, str]) -> list[dict]:
    checker = Checker(library, scenario)
    verdicts = {r.id: r.verdict for r in report.results}
    rows_by_claim: dict[str, list[Threshold]] = {}
    for t in thresholds:
        rows_by_claim.setdefault(t.claim, []).append(t)
    out = []
    for claim in library.claims():
        if not claim.instance:
            continue
        entry: dict[str, object] = {"id": claim.id, "title": claim.title, "topic": claim.topic,
                                    "expected": claim.expected, "build": verdicts.get(claim.id, "unchecked"),
                                    "href": hrefs.get(claim.id, ""),
                                    "rests": [c for c in resting_claims(library, claim)],
                                    "thresholds": [_threshold(library, t) for t in rows_by_claim.get(claim.id, [])]}
        reason = _not_live(library, scenario, checker, claim)
        if reason is None:
            try:
                reason = _claim_parts(library, checker, claim, ex, entry)
            except DeriveError as err:  # a malformed claim (its bounds): the checker's verdict is unknown too
                reason = err.message
        if reason is not None:
            entry["na"] = reason
        out.append(entry)
    return out


def _claim_parts(library: Library, checker: Checker, claim: Claim, ex: _Exporter, entry: dict) -> str | None:
    """Put the claim's formulas (goal, hypotheses, bounds, derivation links) and what the script needs to read
    them into ``entry``; the reason the page cannot read the claim, or None."""
    written: list[Formula] = []
    for aid in library.rests_on(claim):
        relation = getattr(library.declarations[aid], "relation", None)
        if isinstance(library.declarations[aid], Assumption) and relation is not None:
            written.append(relation)
    written += list(claim.hypotheses)
    links, mixed = _steps(claim)
    goal = ex.formula(claim.goal)
    hyps = [ex.formula(h) for h in written]
    bounds = [ex.formula(b) for b in bound_relations(library, claim, ex.everything)]
    steps = [ex.formula(f) for f in links]
    if goal is None or any(t is None for t in [*hyps, *bounds, *steps]):
        return "a formula of the claim has no JavaScript form"
    own: set[str] = set()  # what the checker asks the scenario for (a missing one: unknown)
    for f in [claim.goal, *claim.hypotheses]:
        own |= {str(s) for s in f.free_symbols()}
    for step in claim.steps:
        formula = step.formula
        own |= {str(s) for s in (formula.free_symbols() if isinstance(formula, Formula) else formula.free_symbols)}
    entry.update({"goal": goal, "hyps": hyps, "bounds": bounds, "steps": steps, "mixed_step": mixed,
                  "bound_syms": sorted(q.name for q, _, _ in claim.bounds), "own_syms": sorted(own),
                  "hyp_syms": sorted({str(s) for h in written for s in h.free_symbols()}),
                  "goal_syms": sorted(str(s) for s in claim.goal.free_symbols()),
                  "fixed": {str(s): _float(_fixed_value(claim, s))
                            for s in sorted(checker.fixed_by_hypotheses(claim), key=str)}})
    return None


def _fixed_value(claim: Claim, sym: sp.Symbol) -> sp.Rational:
    """The number an instance claim's own hypothesis ``sym == value`` fixes ``sym`` to."""
    todo = list(claim.hypotheses)
    while todo:
        h = todo.pop(0)
        if isinstance(h, And):
            todo.extend(h.args)
        elif isinstance(h, Rel) and h.op == "==":
            for a, b in ((h.lhs, h.rhs), (h.rhs, h.lhs)):
                if a == sym and b.is_Rational:
                    return b
    raise BuildError(f"{claim.id}: no hypothesis fixes {sym}")


def _not_live(library: Library, scenario: Scenario, checker: Checker, claim: Claim) -> str | None:
    if claim.forall:
        names = ", ".join(q.name for q in claim.forall)
        return f"stated for every value of {names}: a proof, not a number (see the engine's verdict)"
    if scenario.assumptions:
        return "the build's --assume relations are not evaluated live"
    try:
        large = checker.too_large(claim)
    except DeriveError as err:
        return err.message
    return large


def _threshold(library: Library, t: Threshold) -> dict:
    """An engine threshold: the exact edge(s) of one input where the claim flips, the rest of the build's
    scenario fixed, as text and as numbers (the script marks where the reader's value lies)."""
    q = library.quantities[t.quantity]
    unit = format_dimension(q.dimension)

    def shown(edge: float | None, exact: str | None) -> str | None:
        if edge is None:
            return None
        return format_value(sp.Rational(exact) if exact is not None else edge, unit)

    lo, hi = shown(t.low, t.low_exact), shown(t.high, t.high_exact)
    ops = ("≤" if t.low_closed else "<", "≤" if t.high_closed else "<")
    if lo is not None and hi is not None:
        text = f"{lo} {ops[0]} {q.name} {ops[1]} {hi}"
    elif lo is not None:
        text = f"{q.name} {'≥' if t.low_closed else '>'} {lo}"
    else:
        text = f"{q.name} {ops[1]} {hi}"
    verb = "holds" if t.holds else "would hold"
    return {"quantity": q.name, "text": f"{verb} for {text} (the build's value: {format_value(t.value, unit)})",
            "low": t.low, "high": t.high, "low_closed": t.low_closed, "high_closed": t.high_closed,
            "exact": [t.low_exact, t.high_exact]}


# the presets' scenarios ---------------------------------------------------------------------------------

def _scenario_entry(library: Library, sc: Scenario) -> dict:
    values = {n: _float(v.value) for n, v in sorted(sc.values.items()) if n in library.quantities}
    subjects = list(sc.subjects) + [""] * (len(sc.notes) - len(sc.subjects))
    # a linked value (a table gives it, or it is worked out from a quantity) is worked out again on the page from
    # its source quantity at the values the user sets (its scenario file's own value where that has none)
    links = {n: [t, _float(sc.values[n].fallback if sc.values[n].fallback is not None else sc.values[n].value)]
            for n, t in sc.links if n in sc.values}
    return {"values": values, "pinned": sorted(sc.pinned), "notes": list(sc.notes), "subjects": subjects,
            "name": sc.name, "links": links}


def preset_scenarios(library: Library) -> dict:
    """Every chip and model preset alone and in pairs, as ``build_scenario`` makes them (the command line's
    ``--hardware H --model M``): ``{"hardware": [...], "models": [...], "combos": {"H|M": entry}}``; a
    pair the engine refuses carries its one-line error instead of values."""
    store = PresetStore.discover(library.preset_dirs)
    hardware, models = store.names("hardware"), store.names("model")
    combos: dict[str, dict] = {}
    for h in ["", *hardware]:
        for m in ["", *models]:
            if not h and not m:
                continue
            try:
                sc = build_scenario(library, hardware=h or None, model=m or None)
            except DeriveError as err:
                combos[f"{h}|{m}"] = {"error": err.message}
                continue
            combos[f"{h}|{m}"] = _scenario_entry(library, sc)
    out = {"hardware": hardware, "models": models, "combos": combos}
    if library.live_config_formulas:
        out["paste"] = paste_bases(library, hardware)
        out["configs"] = preset_configs(library, store, models)
    return out


def preset_configs(library: Library, store: PresetStore, models: Sequence[str]) -> dict[str, str]:
    """The ``[config]`` of each model preset that the library's config formulas read, as JSON text: the page
    reads it again when the user sets one of the reader's arguments (``--set bytes_per_kv_element``), as the
    command line hands that value to the config reader; a preset the formulas do not read keeps its values,
    and the page says so."""
    from derive.model.config_formulas import read_config
    from derive.model.scenario import read_toml

    out: dict[str, str] = {}
    for m in models:
        config = read_toml(store.path("model", m)).get("config")
        if not isinstance(config, dict) or config.get(TYPE_FIELD) not in library.live_config_formulas:
            continue
        try:
            read_config(library.live_config_formulas, config)
        except DeriveError:
            continue  # a preset the formulas refuse (a window, a missing field): its values stay as built
        out[m] = json.dumps(config, sort_keys=True)
    return out


def paste_bases(library: Library, hardware: Sequence[str]) -> dict:
    """For no chip and for each chip: the scenario a pasted config.json lands in (``build_scenario`` with an
    empty model layer) and ``replace``, the native names whose values the file may replace there."""
    native = sorted({n for r in library.live_config_formulas.values() for n in r.native})
    out: dict[str, dict] = {}
    for h in ["", *hardware]:
        try:
            sc = build_scenario(library, hardware=h or None, model_layer=ModelLayer(PASTED, {}))
        except DeriveError as err:
            out[h] = {"error": err.message}
            continue
        base = sc.layers[0] if sc.layers and sc.layers[0].startswith("scenario ") else None
        out[h] = {**_scenario_entry(library, sc),
                  "replace": [n for n in native if model_may_replace(sc.values.get(n), base)]}
    return out


def cached_preset_scenarios(library: Library, store) -> dict:
    """``preset_scenarios`` through the build's artifact store (keyed by the engine's and libraries' sources
    and the preset folders' contents); ``store`` None computes them."""
    if store is None:
        return preset_scenarios(library)
    import tempfile

    from derive.checking.cache import dir_digest, sources_digest
    from derive.documents.store import content_key

    key = content_key("live", str(FORMAT), sources_digest(),
                      *[f"{d}:{dir_digest(str(d))}" for d in library.preset_dirs])
    entry = store.dir / f"live-{key}" / "presets.json"
    try:
        return json.loads(entry.read_text())["presets"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    data = preset_scenarios(library)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "presets.json").write_text(json.dumps({"presets": data}, sort_keys=True))
        store.put("live", key, Path(tmp), ["presets.json"])
    return data


# the page -----------------------------------------------------------------------------------------------

def live_data(library: Library, scenario: Scenario, report: Report, thresholds: Sequence[Threshold] = (), *,
              presets: Mapping | None = None, hrefs: Mapping[str, str] | None = None) -> dict:
    """Everything the page's script reads (JSON-able, deterministic), and the JavaScript of every formula
    under ``"code"`` (a list; formulas point into it by index)."""
    ex = _Exporter(library)
    presets = preset_scenarios(library) if presets is None else presets
    hrefs = hrefs or {}
    definitions = _definitions(library, ex)
    data = {
        "quantities": _quantities(library),
        "definitions": definitions,
        "order": [d.defines.name for d in library.ordered() if isinstance(d, Definition)],
        "topics": [{"name": t.name, "title": t.title} for t in library.topics],
        "feasibility": _feasibility(library, ex),
        "negated": dict(NEGATED),
        "claims": _claims(library, scenario, report, thresholds, ex, hrefs),
        "verdicts": {r.id: r.verdict for r in report.results},
        "build": _scenario_entry(library, scenario),
        "presets": _compact(presets),
        "paste": _paste_formulas(library, ex),
        "formatter": formatter_tables(),
        "tie": TIE,
        "tables": _input_tables(library),
    }
    pinned = set(data["build"]["pinned"])  # type: ignore[index]
    for combo in [*presets.get("combos", {}).values(), *presets.get("paste", {}).values()]:
        pinned |= set(combo.get("pinned", ()))
    data["pin_inputs"] = {n: library.base_inputs(library.quantities[n].sym) for n in sorted(pinned)
                          if n in library.quantities}
    data["code"] = list(ex.code)
    return data


def _input_tables(library: Library) -> list[dict]:
    """The library's input tables as the page applies them (``build_scenario``'s table defaults and what a table
    gives): each member's default in SI (None without one) and the quantities the table gives, by source."""
    from derive.model.parse import parse_value

    out = []
    for name in sorted(library.input_tables):
        spec = library.input_tables[name]
        members = {}
        for member, entry in sorted(spec["members"].items()):
            q = library.quantities[member]
            members[member] = (_float(parse_value(entry["default"], q.dimension, where=f"{name} default",
                                                  quantity=member)) if "default" in entry else None)
        out.append({"members": members, "gives": dict(sorted(spec.get("gives", {}).items()))})
    return out


def _compact(presets: Mapping) -> dict:
    """The preset scenarios (and the scenarios a pasted config.json lands in) with each (quantity, value) pair
    and each note stored once: ``pairs`` and ``notes`` tables, and per combination the indices into them (the
    page rebuilds each scenario)."""
    pairs: dict[tuple[str, float], int] = {}
    notes: dict[str, int] = {}

    def compact(combo: Mapping) -> dict:
        if "error" in combo:
            return {"error": combo["error"]}
        out = {"v": [pairs.setdefault((n, v), len(pairs)) for n, v in sorted(combo["values"].items())],
               "n": [notes.setdefault(t, len(notes)) for t in combo["notes"]],
               "s": list(combo.get("subjects", [""] * len(combo["notes"]))),
               "pinned": list(combo["pinned"]), "name": combo["name"]}
        if combo.get("links"):
            out["links"] = dict(sorted(combo["links"].items()))
        if "replace" in combo:
            out["replace"] = list(combo["replace"])
        return out

    combos = {key: compact(presets["combos"][key]) for key in sorted(presets.get("combos", {}))}
    paste = {key: compact(presets["paste"][key]) for key in sorted(presets.get("paste", {}))}
    return {"hardware": list(presets.get("hardware", ())), "models": list(presets.get("models", ())),
            "pairs": [[n, v] for n, v in pairs], "notes": list(notes), "combos": combos, "paste": paste,
            "configs": dict(sorted(presets.get("configs", {}).items()))}


def _paste_formulas(library: Library, ex: _Exporter) -> dict:
    """The library's config reader as formulas (``LIVE_CONFIG_FORMULAS``), each expression an index into the
    code table (its fields read through ``g``); a file type with a formula the printer cannot express is left
    out (the page then refuses its files like any other type's)."""
    types: dict[str, dict] = {}
    for name in sorted(library.live_config_formulas):
        r = library.live_config_formulas[name]
        fields = []
        for f in r.fields:
            fields.append({"name": f.name, "aliases": list(f.aliases), "kind": f.kind, "min": f.minimum,
                           "max": f.maximum, "optional": f.optional, "strip": f.strip,
                           "choices": {k: _float(v) for k, v in sorted(f.choices.items())},
                           "default": None if f.default is None else ex.expr(f.default)})
        values = {q: ex.expr(e) for q, e in sorted(r.values.items())}
        checks = [[op, ex.expr(a), ex.expr(b), words] for op, a, b, words in r.checks]
        arguments = {q: ex.expr(e) for q, e in sorted(r.arguments.items())}
        exprs = [*values.values(), *arguments.values(), *[c[1] for c in checks], *[c[2] for c in checks],
                 *[f["default"] for f, d in zip(fields, r.fields, strict=True) if d.default is not None]]
        if any(i is None for i in exprs):
            continue
        types[name] = {"fields": fields, "values": values, "checks": checks, "native": sorted(r.native),
                       "arguments": arguments,
                       "absent": {k: list(v) for k, v in sorted(r.absent.items())},
                       "names": {k: sorted(v) for k, v in sorted(r.names.items())}}
    return {"types": types, "type_field": TYPE_FIELD}


def _script(data: dict) -> str:
    """The data as a script: formulas as functions of ``g``, the rest as JSON (``</`` escaped)."""
    code = data.pop("code")
    body = json.dumps(data, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    funcs = ",\n".join(f"function(g){{return {c};}}" for c in code)
    text = f"window.LIVE = {body};\nwindow.LIVE_CODE = [\n{funcs}\n];\n"
    return text.replace("</", "<\\/")


def write_live_page(library: Library, scenario: Scenario, report: Report, thresholds: Sequence[Threshold],
                    staging: Path, model: Mapping, formats: Sequence[str] = (), *,
                    presets: Mapping | None = None) -> list[str]:
    """Write ``live.html`` into ``staging``; ``model`` is the documents' model (the frame of the site's pages),
    ``presets`` the ``preset_scenarios`` already computed (else computed here)."""
    from markupsafe import Markup

    from derive.documents.render import render

    pages = {t["name"]: f"chapter-{t['name']}.html" for t in model["topics"]}
    hrefs = {d["id"]: f"{pages[t['name']]}#{d['anchor']}" for t in model["topics"] for d in t["declarations"]}
    data = live_data(library, scenario, report, thresholds, presets=presets, hrefs=hrefs)
    site = {**model, "has_pdf": "pdf" in formats, "has_md": "md" in formats, "live_script": Markup(_script(data)),
            "live_tie": f"{TIE:g}", "live_paste": bool(data["paste"]["types"]),
            "live_config_reader": library.model_config_reader is not None}
    page = render("html", "live.html.j2", site)
    (staging / LIVE_PAGE).write_text(page, encoding="utf-8", newline="\n")
    return [LIVE_PAGE]

