"""The ledger: measured results against the floors (and ceilings) the library proves.

A ledger file (TOML in a preset folder's ``ledger/``) lists measurements, each with the scenario it was
measured under (hardware preset, model, ``--set`` values) and its source.  Each entry names the
declaration it is held to (``check``): a claim or assumption whose relation has the measured quantity
alone on its left (``measured_step_time >= step_time``), or a definition, whose value is then a
prediction.  The ledger pins the measured value, evaluates the other side under the entry's scenario
(at the spec-sheet peaks, and at the achieved ceilings when the hardware has measurement files: those
dated no later than the entry, the latest value winning), and reports the ratio.  A measurement on the
wrong side of a proved bound is a contradiction: the ledger names the assumptions whose relations the
measurement violates.

Every measured ceiling of a measurement file (a library ``CEILINGS`` quantity with an assumption) is
also a row: the measured rate against the hardware preset's peak.

File format (every key of an entry may be given once at the top level as a default)::

    title = "..."; source = "..."; as_of = "2026-11-23"; method = "..."
    software = "TensorRT-LLM"; version = "0.9.0"; level = "framework"   # the scope; level: kernel or framework
    check = "gap.roofline_floor_below_measured"; hardware = "h100-sxm"; model = "llama3-8b"
    set = ["chips=1"]                      # top-level and entry sets are both applied, top-level first
    [[entry]]
    id = "decode-b1-l128"; value = "7.2 ms"; set = ["batch=1", "context=128"]
    series = ["step time vs batch, L = 128"]   # optional: the figures this point is drawn in
    [figure."step time vs batch, L = 128"]
    x = "batch"                              # the x-axis: an expression; its first quantity is varied

A definition as ``check`` makes the value a prediction of the quantity it defines; ``relation = ">="``
(or ``"<="``) holds the value to the definition as a floor (a ceiling) instead, for a definition that
states one (``prefill.ttft_floor``: a measured time to first token is at least it).  A measurement on the
wrong side is a contradiction like any other.

Each row records its evidence: the signed error against its bound (measured over bound, minus 1: negative
below the bound; a floor's contradiction is a negative error, a ceiling's a positive one), the scope (chip,
software and version, and whether a single kernel or a whole framework was measured), the date and the source.
A ledger is a record of measurements held to bounds; an entry whose value was fitted to measurements (a knee
read off a fitted curve) is a measurement of that fitted quantity, never a validation of the formula.

``compare_ledgers`` holds a ledger against a previous one (``derive ledger --since FILE``, a previous
``derive ledger --json``): an entry whose ratio moved by at least ``MOVED_POINTS`` (2 points: 0.02 in the
ratio) and ``MOVED_RELATIVE`` (10 % of its previous ratio) is flagged, with the entries new and gone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import sympy as sp

from derive.errors import MissingValueError, ScenarioError, UnknownNameError, escape_control
from derive.kernel.logic import Rel
from derive.model.declarations import Assumption, Claim, Definition
from derive.model.library import Library
from derive.model.scenario import Ceiling, PresetStore, Scenario, build_scenario, measurement_values, read_toml
from derive.model.situation import situate

ENTRY_KEYS = {"id", "title", "check", "measured", "value", "hardware", "model", "set", "source", "as_of", "method",
              "series", "note", "relation", "software", "version", "level"}
DEFINITION_RELATIONS = (">=", "<=")  # what `relation` may hold a definition's value as: a floor or a ceiling
LEVELS = ("kernel", "framework")  # what a measurement timed: one kernel, or a whole framework serving requests
MOVED_POINTS = Fraction(2, 100)  # --since: a ratio moved by at least this much ...
MOVED_RELATIVE = Fraction(1, 10)  # ... and by at least this share of its previous value is flagged
_OP_WORDS = {">=": "floor", ">": "floor", "<=": "ceiling", "<": "ceiling", "==": "prediction"}


@dataclass(frozen=True)
class LedgerEntry:
    """One measured result and the scenario it was measured under."""

    id: str  # "<ledger file stem>/<entry id>"; a measured ceiling: "<hardware>/<measurement file>/<quantity>"
    title: str
    check: str  # id of the claim, assumption or definition the measurement is held to
    measured: str  # the quantity the measured value is a value of
    value: sp.Rational  # SI base units
    value_text: str
    hardware: str | None
    model: str | None
    sets: tuple[str, ...]
    source: str
    as_of: str
    method: str
    series: tuple[str, ...] = ()
    note: str = ""
    file: str = ""
    relation: str = ""  # with a definition check: ">=" or "<=" (the value is held to it as a floor or a ceiling)
    software: str = ""  # the software measured, as its source names it ("" where the source does not)
    version: str = ""  # its version
    level: str = ""  # "kernel" or "framework" ("" where the source does not say)

    @property
    def scope(self) -> dict[str, str | None]:
        """Where the number holds: the chip, the software and its version, a kernel or a framework."""
        return {"chip": self.hardware, "software": self.software or None, "version": self.version or None,
                "level": self.level or None}


@dataclass(frozen=True)
class FigureSpec:
    """A figure of a ledger file: measured points of the entries in ``series`` over the derived curve."""

    name: str
    x: str  # an expression in quantities; the curve varies its first quantity (in name order)
    file: str


@dataclass(frozen=True)
class LedgerRow:
    """A ledger entry evaluated: its bound at the peaks (and at achieved ceilings), ratio and status."""

    entry: LedgerEntry
    relation: str  # the check's operator, measured on the left: ">=" (a floor), "<=" (a ceiling), "==" (prediction)
    bound: sp.Rational  # the other side at the scenario's spec-sheet values
    bound_achieved: sp.Rational | None  # the same at the hardware's measured ceilings (None: none measured)
    unit: str  # SI unit of the measured quantity
    display_unit: str | None
    status: str  # "above floor", "below ceiling", "prediction", "contradiction"
    broken: tuple[str, ...]  # assumptions the measurement contradicts
    scenario: str
    ceilings: tuple[Ceiling, ...] = ()  # ceilings of the achieved scenario (when there is one)

    @property
    def kind(self) -> str:
        return _OP_WORDS.get(self.relation, "bound")

    @property
    def ratio(self) -> Fraction:
        return Fraction(int(self.entry.value.p), int(self.entry.value.q)) / _frac(self.bound)

    @property
    def signed_error(self) -> Fraction:
        """Measured over bound, minus 1: how far the measurement lies above (+) or below (-) its bound."""
        return self.ratio - 1

    @property
    def ratio_achieved(self) -> Fraction | None:
        if self.bound_achieved is None or self.bound_achieved == 0:
            return None
        return Fraction(int(self.entry.value.p), int(self.entry.value.q)) / _frac(self.bound_achieved)

    def to_json(self) -> dict[str, object]:
        from derive.model.display import display_json

        e = self.entry
        ra = self.ratio_achieved
        return {
            "id": e.id, "title": e.title, "check": e.check, "kind": self.kind, "relation": self.relation,
            "measured": {"quantity": e.measured, **display_json(e.value, self.unit)},
            "bound": display_json(self.bound, self.unit),
            "bound_achieved": None if self.bound_achieved is None else display_json(self.bound_achieved, self.unit),
            "ratio": float(self.ratio), "signed_error": float(self.signed_error),
            "ratio_achieved": None if ra is None else float(ra),
            "status": self.status, "contradicts": list(self.broken),
            "scenario": {"name": self.scenario, "hardware": e.hardware, "model": e.model, "set": list(e.sets)},
            "ceilings": [c.to_json() for c in self.ceilings],
            "scope": e.scope, "source": e.source, "as_of": e.as_of, "method": e.method or None,
            "note": e.note or None,
            "series": list(e.series), "file": e.file,
        }


@dataclass
class Ledger:
    rows: list[LedgerRow] = field(default_factory=list)
    figures: list[FigureSpec] = field(default_factory=list)
    # entries that check another library's claims (a topic this library does not have), by file: entry id
    skipped: list[str] = field(default_factory=list)

    @property
    def contradictions(self) -> list[LedgerRow]:
        return [r for r in self.rows if r.status == "contradiction"]

    def to_json(self) -> dict[str, object]:
        counts: dict[str, int] = {}
        for r in self.rows:
            counts[r.status] = counts.get(r.status, 0) + 1
        return {"entries": [r.to_json() for r in self.rows], "summary": counts, "skipped": list(self.skipped)}


def _frac(x: sp.Rational) -> Fraction:
    return Fraction(int(x.p), int(x.q))


def _str_list(value: object, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ScenarioError("`set` must be a list of QUANTITY=VALUE strings", where=where)


def check_relation(library: Library, check: str, where: str) -> tuple[str, str, sp.Expr]:
    """The measured quantity, the operator and the bound expression of a check declaration."""
    if check not in library.declarations:
        raise UnknownNameError("id", check, library.declarations, where=where)
    decl = library.declarations[check]
    if isinstance(decl, Definition):
        return decl.defines.name, "==", decl.expr
    rel = decl.goal if isinstance(decl, Claim) else decl.relation if isinstance(decl, Assumption) else None
    if isinstance(decl, Claim) and decl.hypotheses:
        raise ScenarioError(f"'{check}' has hypotheses; a ledger check needs a claim without them", where=where)
    if not isinstance(rel, Rel) or not isinstance(rel.lhs, sp.Symbol) or rel.lhs.name not in library.quantities:
        raise ScenarioError(f"'{check}' is not a relation with a measured quantity alone on its left", where=where,
                            hint="check a claim like `measured_step_time >= step_time`, or a definition")
    return rel.lhs.name, rel.op, rel.rhs


def read_figures(path: Path) -> list[FigureSpec]:
    data = read_toml(path)
    figures = data.get("figure", {})
    if not isinstance(figures, Mapping):
        raise ScenarioError("[figure] must be a table of figures", where=str(path))
    out = []
    for name, spec in figures.items():
        if not isinstance(spec, Mapping) or not isinstance(spec.get("x"), str):
            raise ScenarioError(f"figure '{name}' needs an x-axis expression `x`", where=str(path))
        out.append(FigureSpec(str(name), spec["x"], path.name))
    return out


def read_ledger_file(library: Library, path: Path,
                     skipped: list[tuple[str | None, str]] | None = None) -> list[LedgerEntry]:
    """The entries of one ledger file; an entry checking another library's claim is left out and, where
    ``skipped`` is given, recorded there as (its hardware, a line naming it)."""
    from derive.model.parse import parse_value

    data = read_toml(path)
    where = str(path)
    figures = {f.name for f in read_figures(path)}
    entries = data.get("entry", [])
    if not isinstance(entries, list) or not entries:
        raise ScenarioError("a ledger file needs at least one [[entry]]", where=where)
    out = []
    for i, raw in enumerate(entries):
        w = f"{where}: entry[{i}]"
        if not isinstance(raw, Mapping):
            raise ScenarioError("each [[entry]] must be a table", where=w)
        unknown = sorted(set(raw) - ENTRY_KEYS)
        if unknown:
            raise ScenarioError(f"unknown key '{unknown[0]}'", where=w,
                                hint=f"known keys: {', '.join(sorted(ENTRY_KEYS))}")

        def get(key: str, default: object = None, raw: Mapping = raw) -> object:
            return raw.get(key, data.get(key, default))

        for key in ("id", "value", "check", "source", "as_of"):
            if get(key) is None:
                raise ScenarioError(f"ledger entry needs `{key}`", where=w,
                                    hint="every measurement carries its value, check, source and date")
        check = str(get("check"))
        if skipped is not None and foreign_check(library, check):
            skipped.append((None if get("hardware") is None else str(get("hardware")),
                            f"{path.stem}: {get('id')} ({check})"))
            continue
        measured, _, _ = check_relation(library, check, w)
        relation = str(get("relation", "") or "")
        if relation and (relation not in DEFINITION_RELATIONS or not isinstance(library.declarations[check],
                                                                                  Definition)):
            raise ScenarioError(f"`relation` {relation!r} needs a definition as check and one of "
                                f"{', '.join(DEFINITION_RELATIONS)}", where=w,
                                hint="a claim or an assumption states its own relation")
        if get("measured") not in (None, measured):
            raise ScenarioError(f"`measured` is {get('measured')!r} but {check} measures {measured}", where=w)
        q = library.quantities[measured]
        value_text = str(get("value"))
        value = parse_value(value_text, q.dimension, where=f"{w}: value", quantity=measured)
        level = str(get("level", "") or "")
        if level and level not in LEVELS:
            raise ScenarioError(f"`level` is {level!r}", where=w, hint="kernel (one kernel timed) or framework "
                                                                        "(a whole framework serving requests)")
        series = _str_list(raw.get("series"), w)
        if set(series) - figures:
            raise ScenarioError(f"series '{sorted(set(series) - figures)[0]}' has no [figure] table", where=w)
        out.append(LedgerEntry(
            id=f"{path.stem}/{raw['id'] if 'id' in raw else get('id')}", title=str(get("title", "")), check=check,
            measured=measured, value=value, value_text=value_text,
            hardware=None if get("hardware") is None else str(get("hardware")),
            model=None if get("model") is None else str(get("model")),
            sets=_later_wins(_str_list(data.get("set"), w) + _str_list(raw.get("set"), w)),
            source=str(get("source")), as_of=str(get("as_of")), method=str(get("method", "") or ""),
            series=series, note=str(raw.get("note", "")), file=path.name, relation=relation,
            software=str(get("software", "") or ""), version=str(get("version", "") or ""), level=level))
    return out


def _later_wins(sets: list[str]) -> tuple[str, ...]:
    """``QUANTITY=VALUE`` texts, one per quantity: an entry's own ``set`` overrides the file's (a scenario
    refuses one quantity set twice to different values)."""
    last: dict[str, str] = {}
    for text in sets:
        last[text.partition("=")[0].strip()] = text
    return tuple(t for t in sets if last[t.partition("=")[0].strip()] is t)


def ceiling_entries(library: Library, store: PresetStore) -> list[LedgerEntry]:
    """Every measured ceiling of the measurement files, as an entry held to the library's assumption
    that no measurement exceeds the peak (``CEILINGS``)."""
    out = []
    for hw in store.measured_hardware():
        for path in store.measurement_files(hw):
            data = read_toml(path)
            _, stem, values = measurement_values(library, path, hw)
            for name, v in values.items():
                check = library.ceilings.get(name)
                if not check:
                    continue
                measured, _, _ = check_relation(library, check, str(path))
                out.append(LedgerEntry(
                    id=f"{hw}/{stem}/{name}", title=str(data.get("title", stem)), check=check, measured=measured,
                    value=v.value, value_text=str(data["values"][name]["value"]), hardware=hw, model=None, sets=(),
                    source=v.source, as_of=str(v.as_of), method=v.method, note=v.note,
                    file=f"measurements/{hw}/{path.name}"))
    return out


def ledger_files(library: Library) -> list[Path]:
    """``ledger/*.toml`` of every preset folder, in name order (the first folder wins a name)."""
    found: dict[str, Path] = {}
    for d in library.preset_dirs:
        folder = Path(d) / "ledger"
        if folder.is_dir():
            for f in sorted(folder.glob("*.toml")):
                found.setdefault(f.name, f)
    return [found[k] for k in sorted(found)]


def foreign_check(library: Library, check: str) -> bool:
    """Whether ``check`` names a claim of a topic this library does not have (a probe's prefill file checks the
    serving library's ``prefill.ttft_floor``; the lecture alone skips it), rather than a misspelt id of its own."""
    topic, dot, _ = check.partition(".")
    return bool(dot) and check not in library.declarations and topic not in {t.name for t in library.topics}


def load_entries(library: Library, skipped: list[tuple[str | None, str]] | None = None) -> list[LedgerEntry]:
    """Entries of the ledger files, then the measured ceilings of the measurement files; ``skipped`` (when
    given) collects the entries that check another library's claims instead of refusing them."""
    entries: list[LedgerEntry] = []
    for f in ledger_files(library):
        entries.extend(read_ledger_file(library, f, skipped))
    entries.extend(ceiling_entries(library, PresetStore.discover(library.preset_dirs)))
    ids = [e.id for e in entries]
    dup = next((i for i in ids if ids.count(i) > 1), None)
    if dup:
        raise ScenarioError(f"two ledger entries have the id '{dup}'")
    return entries


def _value(library: Library, scenario: Scenario, expr: sp.Expr, where: str) -> sp.Rational:
    situation = situate(library, scenario)
    missing = situation.missing(expr)
    if missing:
        raise MissingValueError("the bound", missing, where=where,
                                hint=f"add set = [\"{missing[0]}=VALUE\"] to the entry")
    value = situation.expand(expr).xreplace(situation.substitution)  # rationals in, an exact rational out
    if not value.is_Rational:
        raise ScenarioError(f"the bound does not evaluate to an exact number ({value})", where=where)
    return value


def _broken(library: Library, check: str, scenario: Scenario, measured: str, value: sp.Rational) -> tuple[str, ...]:
    decl = library.declarations[check]
    ids = [check] if isinstance(decl, Assumption) else library.rests_on(decl)
    subs = dict(situate(library, scenario).substitution)
    subs[library.quantities[measured].sym] = value
    out = []
    for aid in ids:
        a = library.declarations[aid]
        if not isinstance(a, Assumption) or a.relation is None:
            continue
        rel = library.formula_expand(a.relation, scenario.pinned)
        if rel.free_symbols() - set(subs):
            continue  # the assumption speaks of a quantity this scenario does not give
        if not rel.evaluate(subs):
            out.append(aid)
    return tuple(out)


def measurements_as_of(library: Library, store: PresetStore, hardware: str, as_of: str) -> list[str]:
    """The chip's measurement files dated no later than ``as_of`` (ISO dates compare as text; ``2025-03``
    counts as no later than ``2025-03-01``), so that a probe run's knees and decode steps are held to the
    ceilings that run measured, not to a later run's.  Empty (every file, the latest value winning) when no
    file is that old."""
    dated = [measurement_values(library, f, hardware)[:2] for f in store.measurement_files(hardware)]
    return [stem for date, stem in sorted(dated) if date <= as_of]


def _run_measurements(library: Library, store: PresetStore, entry: LedgerEntry) -> list[str]:
    """The measurement files an entry's achieved ceilings come from: the run's own file where the ledger file
    is one run's (``<hardware>-<name>[-prefill]`` beside ``measurements/<hardware>/<name>.toml``, as the probe
    writes them: two runs of one day each keep their own ceilings), else those dated no later than the entry."""
    stem = Path(entry.file).stem.removesuffix("-prefill") if entry.file else ""
    own = stem.removeprefix(f"{entry.hardware}-") if stem.startswith(f"{entry.hardware}-") else ""
    if own and own in {f.stem for f in store.measurement_files(str(entry.hardware))}:
        return [own]
    return measurements_as_of(library, store, str(entry.hardware), entry.as_of)


def evaluate_entry(library: Library, entry: LedgerEntry, store: PresetStore | None = None) -> LedgerRow:
    store = store or PresetStore.discover(library.preset_dirs)
    where = f"ledger {entry.file}: {entry.id}"
    measured, op, expr = check_relation(library, entry.check, where)
    op = entry.relation or op  # a definition held as a floor or a ceiling
    scen = build_scenario(library, hardware=entry.hardware, model=entry.model, sets=entry.sets)
    bound = _value(library, scen, expr, where)
    achieved_scen = None
    is_ceiling_row = entry.check in library.ceilings.values()
    if entry.hardware and not is_ceiling_row and store.measurement_files(entry.hardware):
        achieved_scen = build_scenario(library, hardware=entry.hardware, model=entry.model, sets=entry.sets,
                                       measured=True, measurements=_run_measurements(library, store, entry))
    bound_achieved = None if achieved_scen is None else _value(library, achieved_scen, expr, where)
    holds = Rel(entry.value, op, bound).evaluate({}) if op != "==" else True
    # a definition held as a bound rests on no assumption a measurement could break: the row names the definition
    broken = () if holds or entry.relation else _broken(library, entry.check, scen, measured, entry.value)
    status = "contradiction" if not holds else {
        "floor": "above floor", "ceiling": "below ceiling"}.get(_OP_WORDS.get(op, ""), "prediction")
    q = library.quantities[measured]
    return LedgerRow(entry, op, bound, bound_achieved, q.unit, q.display_unit, status, broken, scen.name,
                     achieved_scen.ceilings if achieved_scen is not None else scen.ceilings)


def build_ledger(library: Library, *, hardware: Iterable[str] = ()) -> Ledger:
    """Every ledger entry of the library's preset folders, evaluated (only ``hardware``'s when given)."""
    wanted = set(hardware)
    store = PresetStore.discover(library.preset_dirs)
    figures = [spec for f in ledger_files(library) for spec in read_figures(f)]
    skipped: list[tuple[str | None, str]] = []
    entries = load_entries(library, skipped)
    return Ledger([evaluate_entry(library, e, store) for e in entries if not wanted or e.hardware in wanted],
                  figures, [text for chip, text in skipped if not wanted or chip in wanted])


# a ledger against a previous one ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Moved:
    """An entry whose ratio moved past both thresholds since the previous ledger."""

    id: str
    before: float
    after: float

    @property
    def change(self) -> float:
        return self.after - self.before

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "before": self.before, "after": self.after, "change": self.change,
                "relative": self.change / self.before if self.before else None}


@dataclass(frozen=True)
class Since:
    file: str
    moved: tuple[Moved, ...]
    new: tuple[str, ...]  # ids in this ledger, not in the previous one
    gone: tuple[str, ...]  # ids in the previous ledger, not in this one

    def to_json(self) -> dict[str, object]:
        return {"file": self.file, "moved": [m.to_json() for m in self.moved], "new": list(self.new),
                "gone": list(self.gone),
                "thresholds": {"points": float(MOVED_POINTS), "relative": float(MOVED_RELATIVE)}}


def _exact(x: float | Fraction) -> Fraction:
    """A float as the number its shortest decimal text names (0.12 is 12/100), as JSON numbers are read."""
    return x if isinstance(x, Fraction) else Fraction(repr(float(x)))


def moved(before: float | Fraction, after: float | Fraction) -> bool:
    """At least 2 points (0.02 in the ratio) and at least 10 % of the previous ratio."""
    b, a = _exact(before), _exact(after)
    step = abs(a - b)
    return step >= MOVED_POINTS and step >= MOVED_RELATIVE * abs(b)


def read_previous_ledger(path: str | Path) -> dict[str, float]:
    """``{id: ratio}`` of a previous ``derive ledger --json``; a file that is not one is a ``ScenarioError``."""
    from derive.model.scenario import read_json

    where = f"--since {path}"
    hint = "give the output of derive ledger --json"
    try:  # under the input files' bounds: a regular file of at most their size, UTF-8, nesting, digits
        data = read_json(Path(path), what="ledger JSON")
    except ScenarioError as err:
        raise ScenarioError(err.message, where=where, hint=err.hint or hint) from None
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ScenarioError(f"{path} has no list of entries", where=where, hint=hint)
    out: dict[str, float] = {}
    for i, e in enumerate(entries):
        ratio = e.get("ratio") if isinstance(e, dict) else None
        if not isinstance(e, dict) or not isinstance(e.get("id"), str) or isinstance(ratio, bool) or not isinstance(
                ratio, (int, float)) or not ratio == ratio:
            raise ScenarioError(f"entry {i} has no text id and numeric ratio", where=where, hint=hint)
        if not math.isfinite(ratio) or ratio < 0:  # a ratio of a measured value to its bound: finite, never negative
            raise ScenarioError(f"entry {i}'s ratio {ratio!r} is not a finite ratio of zero or more", where=where,
                                hint=hint)
        out[escape_control(e["id"])] = float(ratio)  # printed on a terminal: one line, no escape sequences
    return out


def compare_ledgers(previous: dict[str, float], ledger: Ledger, file: str = "") -> Since:
    """The entries whose ratio moved (``moved``) since ``previous``, and the entries new and gone."""
    now = {r.entry.id: r.ratio for r in ledger.rows}
    flagged = tuple(Moved(i, previous[i], float(now[i])) for i in now
                    if i in previous and moved(previous[i], now[i]))
    return Since(file, flagged, tuple(i for i in now if i not in previous),
                 tuple(i for i in previous if i not in now))
