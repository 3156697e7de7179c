"""Scenarios: the values and extra assumptions a check is run under.

A scenario is built in layers, each overriding the one before: the base scenario (``lecture`` unless
``--scenario`` names another one or a TOML file), the hardware preset, the model preset or
``config.json``, then ``--set`` values; ``--assume`` relations are added on top.  ``--measured`` adds a
layer right after the hardware preset: the chip's measurement files (``measurements/<hardware>/*.toml``),
each value with its source, date and method, replace the preset's peaks; the scenario's ``ceilings``
record which values (measured, spec-sheet peak, or set by hand) the formulas used.  Every value keeps
where it came from.  Giving a value to a *derived* quantity pins it: its definition is cut for this
scenario, and the scenario says so.

Preset files are TOML data in the library's preset folders (``hardware/``, ``models/``,
``scenarios/``); the engine reads them without knowing what the quantities mean.

A scenario file that names its chip or model (``hardware = "h100-sxm"``) is a deployment: its own values win
over the chip and model presets.  A library may declare input tables (``INPUT_TABLES``): a scenario file gives
one as ``[NAME]`` (``[layout]`` with ``tp = 8``), and once any member has a value, from the file or ``--set``,
the members left out take their declared defaults, each with a note; the quantities a table ``gives`` (the
serving library's layout gives ``chips`` = tp·cp·dp and ``stages`` = pp) then take their value from it, in place of
a chip preset's or the library's own scenario's (a value given by hand is kept, and the library's rules say
whether it agrees).  The library's ``INPUT_CONSTRAINTS`` are
checked on every scenario built: a value off an integer quantity's integers, or a rule the values break (a
tensor-parallel degree that does not divide the heads), is one ``ScenarioError`` naming the rule and its numbers.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import math
import sys
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import sympy as sp

from derive.errors import DeriveError, ScenarioError, UnknownNameError, escape_control
from derive.kernel.logic import Formula, replace
from derive.model.library import Library
from derive.model.numbers import exactify
from derive.model.units import parse_unit

PRESET_KINDS = {"hardware": "hardware", "model": "models", "scenario": "scenarios"}


DEFAULT_SCENARIO = "lecture"  # the scenario a library's claims are checked at when none is named


@dataclass(frozen=True)
class ScenarioValue:
    name: str
    value: sp.Rational  # SI base units
    source: str
    as_of: str | None = None
    origin: str = ""  # which layer set it: "scenario lecture", "hardware h100-sxm", "--set"
    note: str = ""
    method: str = ""  # how a measured value was measured (measurement files only)
    # a value worked out from another quantity at the scenario (``from = "NAME"`` in the file); ``value``
    # is then that quantity's value where it is defined, else the file's own value
    tied: str = ""
    fallback: sp.Rational | None = None  # a tied value's own ``value``: where the quantity has none, it stands


@dataclass(frozen=True)
class Ceiling:
    """One of the library's ceilings (``CEILINGS``: peak rates a formula divides by) as this scenario set it.

    ``kind``: ``measured`` (a measurement file), ``peak`` (the hardware preset's spec sheet), ``set``
    (``--set``), or ``scenario`` (the base scenario's own value)."""

    name: str
    value: sp.Rational
    kind: str
    source: str
    as_of: str | None
    method: str
    origin: str

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "value": str(self.value), "kind": self.kind, "source": self.source,
                "as_of": self.as_of, "method": self.method or None, "origin": self.origin}


@dataclass(frozen=True)
class Scenario:
    name: str
    values: Mapping[str, ScenarioValue]
    assumptions: tuple[tuple[str, Formula], ...] = ()
    pinned: frozenset[str] = frozenset()
    layers: tuple[str, ...] = ()
    ceilings: tuple[Ceiling, ...] = ()  # which peak or measured rates the formulas use
    notes: tuple[str, ...] = ()  # defaults and approximations the layers applied, one sentence each
    # the quantity each note is about, aligned with ``notes`` ("" for a note about the whole scenario)
    subjects: tuple[str, ...] = ()
    # (given quantity, the derived quantity its value is worked out from): what an input table in use gives
    # (``chips`` from ``stage_chips``) and a value a scenario file works out (``from = "..."``: the deployment's
    # share of experts read); a command that varies an input of the second moves the first with it
    # (``Situation.values_except``)
    links: tuple[tuple[str, str], ...] = ()
    # each value an input rule's remedy may replace, as it was before the remedies ran (None: no value): a command
    # that varies a value a remedy reads decides the remedies again at each point (``remedies_at``)
    before_remedies: tuple[tuple[str, ScenarioValue | None], ...] = ()

    @property
    def is_library_default(self) -> bool:
        """The library's own scenario with nothing over it: where its claims' expected verdicts were written."""
        return not self.assumptions and self.layers in ((), (f"scenario {DEFAULT_SCENARIO}",))

    @property
    def has_base(self) -> bool:
        """Built over a scenario (the library's own or a file), not from ``--set`` values alone."""
        return any(layer.startswith("scenario ") for layer in self.layers)

    def notes_for(self, names: Iterable[str] | None = None) -> list[str]:
        """The notes a command that used the inputs ``names`` should show: every note about the whole
        scenario, and the notes about one input only when that input was used (all of them when ``names``
        is None)."""
        if names is None:
            return list(self.notes)
        used = set(names)
        subjects = self.subjects + ("",) * (len(self.notes) - len(self.subjects))
        return [n for n, s in zip(self.notes, subjects, strict=True) if not s or s in used]

    @property
    def measured(self) -> bool:
        """True when at least one ceiling comes from a measurement file."""
        return any(c.kind == "measured" for c in self.ceilings)

    def value(self, name: str) -> sp.Rational | None:
        v = self.values.get(name)
        return None if v is None else v.value

    def substitution(self, library: Library) -> dict[sp.Symbol, sp.Rational]:
        return {library.quantities[n].sym: v.value for n, v in self.values.items() if n in library.quantities}

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        for name in sorted(self.values):
            h.update(f"{name}={self.values[name].value};".encode())
        for text, _ in self.assumptions:
            h.update(f"assume {text};".encode())
        h.update(("pinned " + ",".join(sorted(self.pinned))).encode())
        for name, source in self.links:
            h.update(f"link {name}={source};".encode())
        return h.hexdigest()[:16]

    def describe(self) -> dict[str, object]:
        return {
            "name": self.name,
            "layers": list(self.layers),
            "values": {n: {"value": str(v.value), "source": v.source, "origin": v.origin}
                       for n, v in sorted(self.values.items())},
            "assumptions": [t for t, _ in self.assumptions],
            "pinned": sorted(self.pinned),
            "links": {n: t for n, t in self.links},
            "ceilings": [c.to_json() for c in self.ceilings],
            "notes": list(self.notes),
        }

    def _repr_html_(self) -> str:
        """A notebook shows the scenario as a table: each input's value, the layer that set it, its source."""
        from html import escape

        rows = "".join(
            f"<tr><td><code>{escape(n)}</code></td><td>{escape(_plain(v.value))}</td>"
            f"<td>{escape(layer_kind(v.origin))}</td><td>{escape(v.source)}</td></tr>"
            for n, v in sorted(self.values.items()))
        notes = "".join(f"<li>{escape(n)}</li>" for n in self.notes)
        return (f"<div><strong>Scenario {escape(self.name)}</strong> ({len(self.values)} values)"
                f"<table><thead><tr><th>quantity</th><th>value (SI)</th><th>layer</th><th>source</th></tr></thead>"
                f"<tbody>{rows}</tbody></table>" + (f"<ul>{notes}</ul>" if notes else "") + "</div>")

    def explain(self, library: Library, names: Iterable[str] | None = None) -> list[dict[str, str]]:
        """For each input (all values, or ``names``): its value in the quantity's unit, the unit, the layer
        that set it (``lecture``, ``scenario file``, ``hardware preset``, ``measured``, ``model config``,
        ``model preset``, ``--set``), where exactly (``origin``), its source and note.  Documents show
        this table."""
        rows = []
        for name in sorted(self.values) if names is None else [n for n in names if n in self.values]:
            v = self.values[name]
            q = library.quantities.get(name)
            unit_text = (q.display_unit or q.unit) if q is not None else "1"
            try:
                scale = parse_unit(unit_text).scale
            except Exception:  # noqa: BLE001 - an odd display unit shows the quantity's own unit instead
                unit_text = q.unit if q is not None else "1"
                scale = parse_unit(unit_text).scale
            value = v.value / sp.Rational(scale.numerator, scale.denominator)
            display = _shown_q(library, name, v.value) if q is not None else _plain(value)
            rows.append({"name": name, "value": _plain(value), "exact": str(v.value), "unit": unit_text,
                         "display": display,
                         "layer": layer_kind(v.origin), "origin": v.origin, "source": v.source,
                         "note": v.note})
        return rows


def linked(groups: list[frozenset] | list[set], start: set) -> list[int]:
    """Indices of the ``groups`` (the quantities of each ``--assume`` relation) that share a quantity with
    ``start`` (a claim's), directly or through one another: with ``a < b`` and ``b < 0`` both assumed, a
    claim about ``a`` rests on both (taking only the first, its counterexamples broke the second)."""
    reach, chosen, grew = set(start), set(), True
    while grew:
        grew = False
        for i, g in enumerate(groups):
            if i not in chosen and reach & set(g):
                chosen.add(i)
                reach |= set(g)
                grew = True
    return sorted(chosen)


def layer_kind(origin: str) -> str:
    """The kind of layer an origin string names, in the words ``--explain`` uses."""
    head = origin.split(" ", 1)[0]
    if origin == "scenario lecture":
        return "lecture"
    if origin.endswith((" default", " gives")):  # "deployment default", an input table's ("layout default"),
        return origin  # or what a table gives ("layout gives")
    return {"scenario": "scenario file", "deployment": "deployment default", "hardware": "hardware preset",
            "measured": "measured",
            "config": "model config", "hf": "model config", "model": "model preset",
            "--set": "--set"}.get(head, head or "?")


def _plain(value: sp.Rational) -> str:
    """A value for people: an integer exactly, else 6 significant digits."""
    if value.is_Integer:
        return f"{int(value):,}"
    return f"{float(value):.6g}"


@dataclass
class PresetStore:
    """Preset files found in the library's preset folders, by kind and name."""

    files: dict[str, dict[str, Path]] = field(default_factory=dict)
    dirs: list[Path] = field(default_factory=list)

    @staticmethod
    def discover(dirs: Iterable[Path]) -> PresetStore:
        dirs = [Path(d) for d in dirs]
        store = PresetStore({k: {} for k in PRESET_KINDS}, dirs)
        for d in dirs:
            for kind, sub in PRESET_KINDS.items():
                folder = Path(d) / sub
                if folder.is_dir():
                    for f in sorted(folder.glob("*.toml")):
                        store.files[kind].setdefault(f.stem, f)
                    if kind == "scenario":  # a folder of TOML files is one scenario, merged in name order
                        for sub_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
                            store.files[kind].setdefault(sub_dir.name, sub_dir)
        return store

    def path(self, kind: str, name: str) -> Path:
        found = self.files.get(kind, {})
        if name in found:
            return found[name]
        if kind == "hardware" and ("/" in name or "\\" in name or name.endswith(".toml")):
            raise ScenarioError(f"--hardware takes a preset name, not a file: {name}", where="--hardware",
                                hint="see derive presets; for your own chip give a --scenario file with its values, "
                                     "or a --library folder with presets/hardware/NAME.toml")
        raise UnknownNameError(f"{kind} preset", name, found, where=f"--{kind}")

    def deployment_file(self) -> Path | None:
        """The first preset folder's ``deployment.toml``: neutral values for a user's own chip and model."""
        for d in self.dirs:
            if (Path(d) / DEPLOYMENT_FILE).is_file():
                return Path(d) / DEPLOYMENT_FILE
        return None

    def names(self, kind: str) -> list[str]:
        return sorted(self.files.get(kind, {}))

    def measurement_files(self, hardware: str) -> list[Path]:
        """Measurement files of a hardware preset: ``measurements/<hardware>/*.toml`` in every preset folder."""
        found: dict[str, Path] = {}
        for d in self.dirs:
            folder = Path(d) / "measurements" / hardware
            if folder.is_dir():
                for f in sorted(folder.glob("*.toml")):
                    found.setdefault(f.stem, f)
        return [found[k] for k in sorted(found)]

    def measured_hardware(self) -> list[str]:
        """Hardware presets that have at least one measurement file."""
        names: set[str] = set()
        for d in self.dirs:
            folder = Path(d) / "measurements"
            if folder.is_dir():
                names.update(p.name for p in folder.iterdir() if p.is_dir() and any(p.glob("*.toml")))
        return sorted(names)


MAX_FILE_BYTES = 4 * 2**20  # a scenario, preset or config.json file; real ones are a few kB
MAX_FILE_DEPTH = 64  # nesting of tables/arrays (TOML) or objects/arrays (JSON)


def read_file_bytes(path: Path, *, what: str = "file", limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file, at most ``limit`` of them (a FIFO or /dev/zero cannot hang the read)."""
    try:
        if path.exists() and not path.is_file():
            kind = "a folder" if path.is_dir() else "not a regular file"
            raise ScenarioError(f"{what} {path} is {kind}", where=str(path), hint="give the path of a file")
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except FileNotFoundError:
        raise ScenarioError(f"{what} not found: {path}", where=str(path)) from None
    except IsADirectoryError:
        raise ScenarioError(f"{what} is a folder, not a file: {path}", where=str(path)) from None
    except OSError as err:
        raise ScenarioError(f"cannot read {what} {path}: {err.strerror or type(err).__name__}", where=str(path),
                            hint="check that the file exists and is readable") from None
    if len(data) > limit:
        raise ScenarioError(f"{what} {path} is larger than {limit // 2**20} MiB", where=str(path),
                            hint="scenario, preset and config files are small text files")
    return data


def _decode(data: bytes, path: Path, what: str) -> str:
    try:
        return data.decode("utf-8").removeprefix("\ufeff")  # a byte-order mark (files saved on Windows) is not text
    except UnicodeDecodeError as err:
        raise ScenarioError(f"{what} is not UTF-8 text (byte {err.start})", where=str(path),
                            hint="save the file as UTF-8") from None


def _nesting(text: str) -> int:
    """An upper bound on the bracket nesting of TOML or JSON text (brackets inside strings count too)."""
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(depth - 1, 0)
    return deepest


def _check_nesting(text: str, path: Path, what: str) -> None:
    if _nesting(text) > MAX_FILE_DEPTH:
        raise ScenarioError(f"{what} is nested more than {MAX_FILE_DEPTH} levels deep", where=str(path),
                            hint="scenario, preset and config files are flat tables")


def read_toml(path: Path) -> dict:
    """A TOML file as a dict; every failure (missing, unreadable, not UTF-8, too large, too deep, invalid,
    integers of more digits than Python converts) is a one-line ``ScenarioError`` naming the file."""
    path = Path(path)
    text = _decode(read_file_bytes(path, what="TOML file"), path, "TOML file")
    _check_nesting(text, path, "TOML file")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ScenarioError(f"invalid TOML: {err}", where=str(path)) from None
    except (ValueError, RecursionError, MemoryError) as err:  # e.g. an integer of more than 4300 digits
        raise ScenarioError(f"cannot read TOML: {_reason(err)}", where=str(path),
                            hint="numbers in presets are short decimals; give large values with an exponent") from None


def read_json(path: Path, *, what: str = "JSON file", constants: bool = False) -> object:
    """A JSON file, read under the same bounds as ``read_toml`` (size, nesting, digits, UTF-8).

    ``constants``: ``Infinity``, ``-Infinity`` and ``NaN`` read as Python's json reads them (floats), as
    publishers' config.json files hold them (Nemotron-H's ``time_step_limit``); the reader then refuses one
    wherever a number must be finite.  Otherwise they are refused here.
    """
    path = Path(path)
    text = _decode(read_file_bytes(path, what=what), path, what)
    _check_nesting(text, path, what)
    try:
        return json.loads(text, parse_constant=None if constants else _no_constant, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as err:
        raise ScenarioError(f"invalid JSON: {err}", where=str(path)) from None
    except DuplicateKeyError as err:
        raise ScenarioError(f"key '{err.key}' appears twice in one object", where=str(path),
                            hint="a JSON object names each key once; keep the value you mean") from None
    except (ValueError, RecursionError, MemoryError) as err:
        raise ScenarioError(f"cannot read JSON: {_reason(err)}", where=str(path),
                            hint=f"numbers in a {what} are short decimals") from None


class DuplicateKeyError(ValueError):
    """A JSON object that names one key twice (``json`` would silently keep the last value)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """``json.loads``'s ``object_pairs_hook``: an object's pairs as a dict, ``DuplicateKeyError`` for a key
    named twice (the audit's JSON-lines rows read theirs so too)."""
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(key)
        out[key] = value
    return out


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number (strict JSON has no NaN or Infinity)")


def _reason(err: BaseException) -> str:
    if isinstance(err, RecursionError):
        return "nested too deeply"
    text = str(err).split(";")[0].strip()
    if "integer string conversion" in text:
        return f"an integer of more than {sys.get_int_max_str_digits() or 4300} digits"
    return text or type(err).__name__


def _as_of(value: object, where: str, key: str) -> str | None:
    """A date as text: TOML's own date (``as_of = 2024-01-01``, a ``datetime.date``) in ISO form, so that JSON
    output and documents can hold it; text as given (escaped); anything else is bad input."""
    import datetime

    if value is None or isinstance(value, str):
        return None if value is None else escape_control(value)
    if isinstance(value, datetime.date):  # datetime.datetime is a date
        return value.isoformat()
    raise ScenarioError(f"{key} must be a date (2024-01-01 or \"2024-01\"), got "
                        + ("a time of day" if isinstance(value, datetime.time) else _toml_type(value)), where=where)


# the keys of one [values.NAME] table (a measurement file adds `method` and `date`)
VALUE_KEYS = frozenset({"value", "source", "as_of", "note", "method", "date", "from"})
# the top-level keys of a scenario file: its values, its assumptions and what describes it
SCENARIO_KEYS = frozenset({"values", "assume", "name", "title", "description", "source", "as_of", "date", "note",
                           "notes", "kind", "hardware", "model"})
# the top-level keys that describe a scenario file to its reader (text; `as_of` and `date` dates)
_DESCRIBING = frozenset({"name", "title", "description", "source", "as_of", "date", "note", "notes", "kind"})
# a preset folder's neutral values for a user's own chip and model (see build_scenario)
DEPLOYMENT_FILE = "deployment.toml"


def _toml_type(value: object) -> str:
    """The TOML word for a parsed value's type (``true`` is a boolean, not Python's ``True``)."""
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (int, float)):
        return "a number"
    return f"a {type(value).__name__}"


def _check_scenario_keys(library: Library, data: Mapping, where: str) -> None:
    """A scenario file's top level holds ``[values.NAME]`` tables and ``assume``; anything else is a
    mistake that would otherwise be ignored silently (``hbm_bandwidth = "3 TB/s"`` at the top level)."""
    for key in data:
        if key in _DESCRIBING:  # read by people, never by a command: still a mistake when it is no text
            given = data[key]
            if key in ("as_of", "date"):
                _as_of(given, where, key)
            elif not (isinstance(given, str) or key == "notes" and isinstance(given, list)
                      and all(isinstance(n, str) for n in given)):
                raise ScenarioError(f"`{key}` must be text, got {_toml_type(given)}", where=where,
                                    hint=f'write {key} = "..."' + (' or notes = ["...", "..."]' if key == "notes"
                                                                   else ""))
            continue
        if key in SCENARIO_KEYS or key in library.input_tables:
            continue
        if key in library.quantities:
            raise ScenarioError(f"'{key}' is at the top level of the scenario file; values go in [values.NAME] tables",
                                where=where, hint=f'write it as [values.{key}] with value = "..." and source = "..."')
        close = difflib.get_close_matches(str(key), sorted(SCENARIO_KEYS | set(library.input_tables)), n=1)
        tables = "".join(f", [{t}]" for t in sorted(library.input_tables))
        raise ScenarioError(f"unknown key '{key}' in the scenario file", where=where,
                            hint=(f"did you mean {close[0]}? " if close else "")
                            + f"a scenario file has [values.NAME] tables{tables} and assume = [...]"
                            + ("" if tables else "; this library declares no input tables such as [layout]"))


def _input_table_values(library: Library, data: Mapping, where: str, origin: str) -> dict[str, ScenarioValue]:
    """The library's input tables a scenario file gives (``[layout]`` with ``tp = 8``): each entry a member of
    its table, its value a number or text such as ``"8"`` read in the quantity's unit."""
    from derive.model.parse import parse_value

    out: dict[str, ScenarioValue] = {}
    for table, spec in library.input_tables.items():
        if table not in data:
            continue
        entries = data[table]
        if not isinstance(entries, Mapping):
            raise ScenarioError(f"[{table}] must be a table of NAME = value, got {_toml_type(entries)}", where=where,
                                hint=f"write [{table}] then one member per line, e.g. "
                                     f"{next(iter(spec['members']))} = 1")
        members = spec["members"]
        for name, raw in entries.items():
            if name not in members:
                raise UnknownNameError(f"[{table}] entry", str(name), members, where=where)
            if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
                raise ScenarioError(f"{table}.{name} must be a number or text such as \"8\", got {_toml_type(raw)}",
                                    where=where)
            if isinstance(raw, float) and not math.isfinite(raw):
                raise ScenarioError(f"{table}.{name} is not a finite number (TOML read it as {raw})", where=where)
            q = library.quantities[name]
            value = parse_value(str(raw), q.dimension, where=f"{where}: {table}.{name}", quantity=name)
            out[name] = ScenarioValue(name, value, f"[{table}] of {escape_control(Path(where).name)}", None, origin)
    return out


def _value_table(library: Library, data: Mapping, where: str, origin: str) -> dict[str, ScenarioValue]:
    from derive.model.parse import is_bare_number, parse_value

    out: dict[str, ScenarioValue] = {}
    values = data.get("values", {})
    if not isinstance(values, Mapping):
        raise ScenarioError("[values] must be a table", where=where)
    for name, entry in values.items():
        q = library.quantity(name) if name in library.quantities else None
        if q is None:
            raise UnknownNameError("quantity", name, library.quantities, where=where)
        if not isinstance(entry, Mapping):
            raise ScenarioError(f"values.{name} must be a table with `value` and `source`, got "
                                f"{_toml_type(entry)}", where=where,
                                hint=f'write [values.{name}] then value = "..." and source = "..." on their own lines')
        unknown = sorted(set(entry) - VALUE_KEYS)
        if unknown:
            close = difflib.get_close_matches(str(unknown[0]), sorted(VALUE_KEYS), n=1)
            raise ScenarioError(f"values.{name} has an unknown key '{unknown[0]}'", where=where,
                                hint=(f"did you mean {close[0]}? " if close else "")
                                + f"a value's keys are {', '.join(sorted(VALUE_KEYS))}")
        if "value" not in entry:
            raise ScenarioError(f"values.{name} has no `value`", where=where,
                                hint='every value is a table: value = "3.35 TB/s", source = "...", as_of = "..."')
        if "source" not in entry:
            raise ScenarioError(f"values.{name} has no source", where=where, hint="every preset value carries source")
        if not isinstance(entry["source"], str) or not entry["source"].strip():  # 3 or "" is no source
            raise ScenarioError(f"values.{name}.source must be text naming where the value comes from, got "
                                f"{entry['source']!r}", where=where,
                                hint='a spec sheet, a paper with its section, a measurement: source = "..."')
        raw = entry["value"]
        if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
            raise ScenarioError(f"values.{name}.value must be text such as \"3.35 TB/s\" or a number, got "
                                f"{_toml_type(raw)}", where=where)
        if isinstance(raw, float) and not math.isfinite(raw):  # TOML's inf/nan, or a literal beyond a float (1e400)
            raise ScenarioError(f"values.{name}.value is not a finite number (TOML read it as {raw})", where=where,
                                hint=f'beyond a float, write text with a unit: value = "1e400 {q.unit}"'
                                if raw == raw else "give a number")
        for key in ("note", "method"):  # read by people: text, like the file's own describing keys
            if key in entry and not isinstance(entry[key], str):
                raise ScenarioError(f"values.{name}.{key} must be text, got {_toml_type(entry[key])}", where=where,
                                    hint=f'write {key} = "..."')
        if "date" in entry:
            _as_of(entry["date"], where, f"values.{name}.date")
        text = str(raw)
        value = parse_value(text, q.dimension, where=f"{where}: values.{name}", quantity=name)
        if not q.dimension.is_dimensionless and value != 0 and is_bare_number(text):
            # "6" for a bandwidth is 6 byte/s: a slip, refused as on --set
            from fractions import Fraction

            from derive.model.parse import unit_example

            like = unit_example(text.strip(), Fraction(int(value.p), int(value.q)), q.dimension, q.display_unit)
            raise ScenarioError(f"values.{name}.value {text!r} has no unit but {name} is {q.unit}", where=where,
                                hint=f'write value = "{like}"')
        tied = _tie_source(library, name, entry.get("from"), where)
        # source and note are shown on terminals and in documents: control characters escaped (one line each)
        out[name] = ScenarioValue(name, value, escape_control(entry["source"]), _as_of(entry.get("as_of"), where,
                                                                                    f"values.{name}.as_of"), origin,
                                  escape_control(entry.get("note", "")), tied=tied)
    return out


def _said_from_presets(library: Library, data: Mapping, where: str) -> dict[str, str]:
    """The deployment file's ``[said_from_presets]``: quantities that a chip or model preset gives for a whole
    deployment (how many chips), each with what it means, said wherever a command uses them, since a reader
    of one chip's numbers would not guess them."""
    said = data.get("said_from_presets", {})
    if not isinstance(said, Mapping) or not all(isinstance(v, str) for v in said.values()):
        raise ScenarioError("[said_from_presets] must be a table of quantity = \"what it means\"", where=where)
    for n in said:
        if n not in library.quantities:
            raise UnknownNameError("quantity", n, library.quantities, where=where)
    return dict(said)


def _tie_source(library: Library, name: str, source: object, where: str) -> str:
    """The quantity a ``from = "NAME"`` key works a value out from: a derived quantity of the same dimension
    (its definition is what a tool varying the batch reads), never the quantity itself."""
    if source is None:
        return ""
    if not isinstance(source, str):
        raise ScenarioError(f"values.{name}.from must name a quantity, got {_toml_type(source)}", where=where,
                            hint=f'write from = "NAME", a derived quantity that gives {name} its value')
    if source not in library.quantities:
        raise UnknownNameError("quantity", source, library.quantities, where=f"{where}: values.{name}.from")
    if not library.is_derived(source) or source == name:
        raise ScenarioError(f"values.{name}.from names {source}, which no definition gives", where=where,
                            hint="from = names a derived quantity (one with a definition) to work the value out from")
    if library.dimension(library.quantities[source].sym) != library.dimension(library.quantities[name].sym):
        raise ScenarioError(f"values.{name}.from names {source}, whose unit is not {name}'s", where=where,
                            hint=f"from = names a derived quantity measured as {name} is")
    return source


def _assumption_table(library: Library, data: Mapping, where: str) -> list[tuple[str, Formula]]:
    from derive.model.parse import parse_quantity_relation

    out = []
    entries = data.get("assume", [])
    if isinstance(entries, str):
        entries = [entries]
    if not isinstance(entries, list):
        raise ScenarioError(f"`assume` must be a list of relations, got {type(entries).__name__}", where=where,
                            hint='write assume = ["flops > 0"] or [[assume]] tables with a `relation`')
    for i, entry in enumerate(entries):
        text = entry.get("relation") if isinstance(entry, Mapping) else entry
        if not isinstance(text, str):
            raise ScenarioError(f"assume[{i}] needs a `relation` string", where=where)
        out.append((text, parse_quantity_relation(text, library.symbols(), library.dimension,
                                                  where=f"{where}: assume[{i}]", si=True)))
    return out


def measurement_values(library: Library, path: Path, hardware: str) -> tuple[str, str, dict[str, ScenarioValue]]:
    """One measurement file: its date and its values, each with source, date and method (a value may
    take them from the file's top level)."""
    data = read_toml(path)
    where = str(path)
    if data.get("hardware", hardware) != hardware:
        raise ScenarioError(f"measurement file names hardware '{data.get('hardware')}' but lies under "
                            f"measurements/{hardware}/", where=where)
    table = data.get("values", {})
    if not isinstance(table, Mapping):
        raise ScenarioError("[values] must be a table", where=where)
    # a value may take its source from the file's top level
    entries = {name: ({"source": data["source"], **entry} if isinstance(entry, Mapping) and "source" in data
                      else entry) for name, entry in table.items()}
    values = _value_table(library, {"values": entries}, where, f"measured {hardware}/{path.stem}")
    if not values:
        raise ScenarioError("a measurement file needs at least one [values.NAME] table", where=where)
    date = _as_of(data.get("date"), where, "date")
    if "method" in data and not isinstance(data["method"], str):
        raise ScenarioError(f"method must be text, got {_toml_type(data['method'])}", where=where,
                            hint='write method = "..."')
    out: dict[str, ScenarioValue] = {}
    for name, v in values.items():
        entry = entries[name]
        as_of = entry.get("as_of") or entry.get("date") or date
        method = entry.get("method") or data.get("method")
        if not as_of or not method:
            raise ScenarioError(f"values.{name} needs a date (`as_of`, or `date` at the top) and a `method`",
                                where=where, hint="every measured value carries source, date and method")
        out[name] = ScenarioValue(name, v.value, v.source, str(as_of), v.origin, v.note, str(method))
    return str(date or min(str(v.as_of) for v in out.values())), path.stem, out


def _measured_layer(library: Library, store: PresetStore, hardware: str | None,
                    names: Iterable[str]) -> tuple[str, dict[str, ScenarioValue]]:
    """The chip's measurement files, oldest first, so that each value comes from its latest measurement;
    or only the files ``names`` asks for."""
    option = "--measurement" if list(names) else "--measured"
    if not hardware:
        raise ScenarioError(f"{option} needs --hardware NAME (the chip whose measurements to use)",
                            where=option, hint=f"chips with measurements: {', '.join(store.measured_hardware())}")
    files = store.measurement_files(hardware)
    if not files:
        raise ScenarioError(f"no measurement files for hardware '{hardware}'", where=option,
                            hint=f"chips with measurements: {', '.join(store.measured_hardware()) or 'none'}")
    wanted = list(names)
    if wanted:
        by_name = {f.stem: f for f in files}
        for n in wanted:
            if n not in by_name:
                raise UnknownNameError(f"measurement of {hardware}", n, by_name, where="--measurement")
        files = [by_name[n] for n in wanted]
    read = sorted(measurement_values(library, f, hardware) for f in files)
    values: dict[str, ScenarioValue] = {}
    for _, _, vals in read:
        values.update(vals)
    return f"measured {hardware} ({', '.join(stem for _, stem, _ in read)})", values


def _ceilings(library: Library, values: Mapping[str, ScenarioValue]) -> tuple[Ceiling, ...]:
    kinds = {"measured": "measured", "hardware": "peak", "--set": "set"}
    out = []
    for name in getattr(library, "ceilings", ()):
        v = values.get(name)
        if v is None:
            continue
        kind = kinds.get(v.origin.split(" ", 1)[0], "scenario")
        out.append(Ceiling(name, v.value, kind, v.source, v.as_of, v.method, v.origin))
    return tuple(out)


def _model_layer(library: Library, model: str, store: PresetStore, bytes_per_kv_element: sp.Rational | None,
                 default_kv: sp.Rational | None = None
                 ) -> tuple[str, dict[str, ScenarioValue], frozenset[str], tuple[str, ...]]:
    """A model preset (TOML with a [config] table), a path to a config.json (or to a folder holding one),
    or a Hugging Face id ``ORG/NAME`` found in the local Hugging Face cache (the reader's
    ``find_cached_config``).

    Returns the layer's label, its values, the names of the values that describe the model's own
    precision and context (``native``: they replace the lecture's round numbers and a hardware preset's,
    not a value the user gave) and the reader's notes."""
    path = Path(model)
    reader = library.model_config_reader
    is_preset = "/" not in model and "\\" not in model and not model.endswith(".json")
    if is_preset and model not in store.files.get("model", {}) and path.is_dir():
        is_preset = False  # a folder in the current one (``--model gemma-3-27b``) that holds a config.json
    if not is_preset and reader is None:
        raise ScenarioError("this library has no config.json reader", where="--model")
    if is_preset:
        preset_path = store.path("model", model)
        data = read_toml(preset_path)
        if "config" not in data:
            return (f"model {model}", _value_table(library, data, str(preset_path), f"model {model}"),
                    frozenset(), ())
        if reader is None:
            raise ScenarioError("this library has no model config reader", where=str(preset_path))
        config = data["config"]
        label, source = f"model {model}", escape_control(data.get("source", preset_path.name))
        as_of = _as_of(data.get("as_of"), str(preset_path), "as_of")
    else:
        if path.is_dir() and (path / "config.json").is_file():
            path = path / "config.json"
            label, source = f"config {path.parent.name}/config.json", f"config.json at {path}"
        elif path.is_dir():
            raise ScenarioError(f"folder {model} has no config.json", where="--model",
                                hint="give the path of a Hugging Face config.json, or of the folder that holds one")
        elif path.is_file() or model.endswith(".json") or path.suffix == ".json" or path.exists():
            if path.exists() and not path.is_file():
                raise ScenarioError(f"{model} is not a regular file", where="--model",
                                    hint="give the path of a Hugging Face config.json")
            if not path.is_file():
                raise ScenarioError(f"config file not found: {model}", where="--model")
            label, source = f"config {path.name}", f"config.json at {model}"
        else:
            finder = library.model_config_finder
            if finder is None:
                raise ScenarioError(f"config file not found: {model}", where="--model",
                                    hint="this library cannot look up Hugging Face ids; give a path to a config.json")
            path = Path(finder(model))
            label, source = f"hf {model}", f"Hugging Face cache: {path}"
        # a file name is user text that reaches terminals and documents: a newline or carriage return in it
        # would break a line (or rewrite one: "scenario x\r... proved"); it is shown escaped, as in errors
        label, source = escape_control(label), escape_control(source)
        config = read_json(path, what="config file", constants=True)
        if not isinstance(config, Mapping):
            raise ScenarioError(f"{path} is not a JSON object", where="--model")
        as_of = None
    kwargs: dict = {}
    if bytes_per_kv_element is not None:
        kwargs["bytes_per_kv_element"] = bytes_per_kv_element
    if default_kv is not None:
        kwargs["default_bytes_per_kv_element"] = default_kv
    native = set()
    try:
        import contextlib

        with contextlib.redirect_stdout(sys.stderr):  # a library's reader is user code: stdout stays derive's
            try:
                values = reader(config, where=label, **kwargs)
            except TypeError:
                if "default_bytes_per_kv_element" not in kwargs:
                    raise
                kwargs.pop("default_bytes_per_kv_element")  # a library's reader without that argument
                values = reader(config, where=label, **kwargs)
        out = {}
        for name, cv in values.items():
            if name not in library.quantities:
                continue  # the reader may know architecture fields this library has no quantity for
            q = library.quantities[name]
            unit = parse_unit(cv.unit)
            if unit.dimension != q.dimension:
                raise ScenarioError(f"config reader gave {name} in {cv.unit}, expected {q.unit}", where=label)
            out[name] = ScenarioValue(name, _exact(cv.value) * sp.Rational(unit.scale), source, as_of, label,
                                      cv.note)
            if getattr(cv, "native", False):
                native.add(name)
        notes = tuple(escape_control(n) for n in getattr(values, "notes", ()))  # a config's text, one line each
    except DeriveError:
        raise
    except (RecursionError, MemoryError) as err:
        raise ScenarioError(f"the config is too large or deep to read ({type(err).__name__})", where=label) from None
    except Exception as err:  # the library's reader is user code: its failure is a one-line error, not a crash
        raise ScenarioError(f"the library's config reader failed: {type(err).__name__}: {err}", where=label,
                            hint="check the fields of the config (or the library's MODEL_CONFIG_READER)") from None
    return label, out, frozenset(native), notes


def _exact(value: object) -> sp.Rational:
    """A reader's value as an exact rational; a binary float by the one rule of ``derive.model.numbers``."""
    from derive.model.numbers import exact_from_float

    if isinstance(value, float):
        return exact_from_float(value)
    exact = sp.Rational(value)
    if not isinstance(exact, sp.Rational):
        raise ScenarioError(f"config reader gave a value that is not a rational number: {value!r}")
    return exact


@dataclass(frozen=True)
class ModelLayer:
    """A model layer already read (``build_scenario(model_layer=...)``): its label, its values, the names of the
    values that describe the model's own precision and context (``native``) and the reader's notes."""

    label: str
    values: Mapping[str, ScenarioValue]
    native: frozenset[str] = frozenset()
    notes: tuple[str, ...] = ()


def model_may_replace(value: ScenarioValue | None, base_origin: str | None) -> bool:
    """Whether a model's native value (its precision, its maximum context) replaces ``value``: the default
    scenario's round numbers (``base_origin``, None for another base) and a hardware preset's datatype, never a
    scenario file's, a measurement's or a --set's."""
    return value is None or value.origin.startswith("hardware ") or (base_origin is not None
                                                                    and value.origin == base_origin)


def build_scenario(library: Library, *, scenario: str | None = None, hardware: str | None = None,
                   model: str | None = None, sets: Iterable[str] = (), assumes: Iterable[str] = (),
                   si: bool = True, measured: bool = False, measurements: Iterable[str] = (),
                   refuse_broken_rules: bool = True, model_layer: ModelLayer | None = None) -> Scenario:
    """Assemble a scenario from its layers (see module docstring).  ``si``: a bare number in ``--set``
    or ``--assume`` for a quantity with a unit is in SI base units; when False it is an error that
    suggests the unit (the command line's default; ``--si`` turns it back on).  ``measured``: use the
    hardware's measurement files (all of them, latest value per quantity; only ``measurements`` when given).
    ``refuse_broken_rules``: False builds a scenario that breaks a refusing input rule (a sweep over preset
    pairs marks that pair instead; ``broken_input_constraints`` says which rules it breaks).
    ``model_layer``: a model already read, in place of ``model`` (the live page asks for the scenario a
    pasted config.json lands in with an empty one)."""
    if model_layer is not None:
        model = model_layer.label
    from derive.model.parse import parse_assignment, parse_quantity_relation, parse_value

    for option, given in (("--scenario", scenario), ("--hardware", hardware), ("--model", model)):
        if given is not None and not given.strip():
            raise ScenarioError(f"{option} is empty", where=option,
                                hint=f"give a name (see derive presets) or leave {option} out")
    store = PresetStore.discover(library.preset_dirs)
    values: dict[str, ScenarioValue] = {}
    assumptions: list[tuple[str, Formula]] = []
    layers: list[str] = []

    base = scenario or DEFAULT_SCENARIO
    if base.endswith(".toml") or "/" in base or (base not in store.files["scenario"] and Path(base).is_dir()):
        path = Path(base)
        if not path.exists():
            raise ScenarioError(f"scenario file not found: {base}", where="--scenario")
        name = escape_control(path.stem)
    elif base in store.files["scenario"]:
        path, name = store.files["scenario"][base], base
    elif scenario is None:
        path, name = None, "empty"  # a library without a lecture scenario
    else:
        raise UnknownNameError("scenario", base, store.files["scenario"], where="--scenario")
    file_names_presets = False
    # what a deployment's scenario file itself sets wins over the chip and model presets
    file_values: dict[str, ScenarioValue] = {}
    hw_from_file = model_from_file = False
    if path is not None:
        parts = sorted(path.glob("*.toml")) if path.is_dir() else [path]
        if not parts:
            raise ScenarioError(f"scenario folder {path} has no .toml files", where="--scenario",
                                hint="a scenario is a TOML file, or a folder of them merged in name order")
        for part in parts:
            data = read_toml(part)
            _check_scenario_keys(library, data, str(part))
            own = _value_table(library, data, str(part), f"scenario {name}")
            tabled = _input_table_values(library, data, str(part), f"scenario {name}")
            twice = sorted(set(own) & set(tabled))
            if twice:
                raise ScenarioError(f"{twice[0]} is given twice in the scenario file: in [values.{twice[0]}] and in "
                                    f"an input table", where=str(part), hint="keep one of them")
            values.update(own)
            values.update(tabled)
            file_values.update(own)
            file_values.update(tabled)
            assumptions.extend(_assumption_table(library, data, str(part)))
            # a deployment's file names its chip and model; --hardware and --model still override them
            named = (_named_preset(data, "hardware", part), _named_preset(data, "model", part, relative_to=part.parent))
            if named[0] is not None and hardware is None and named[0] not in store.files.get("hardware", {}):
                raise UnknownNameError("hardware preset", named[0], store.files.get("hardware", {}),
                                       where=f"{part}: hardware")  # the file's name, not --hardware's
            file_names_presets = file_names_presets or any(named)
            # a file that names its chip (or model) is a deployment: its own values win over any chip (or model)
            # preset, the one it names or one --hardware (--model) puts in its place
            hw_from_file = hw_from_file or named[0] is not None
            model_from_file = model_from_file or named[1] is not None
            hardware, model = hardware or named[0], model or named[1]
        layers.append(f"scenario {name}")
    default_base = scenario is None
    base_origin = f"scenario {name}"
    # Your chip or your model on the default scenario: the lecture's own story (its stages, micro-batches,
    # batch) is replaced by the library's neutral values for one serving node; what is left of the lecture
    # is kept with a note each (below), so no lecture number reaches a deployment unsaid.
    # A scenario file that names its chip or model is a deployment too: the neutral values fill what it leaves out.
    deployment = bool(hardware or model) and path is not None and (default_base or file_names_presets)
    deployment_file = store.deployment_file() if deployment else None
    said: dict[str, str] = {}  # quantities a preset gives that describe the deployment more than the chip
    if deployment_file is not None:
        deployment_data = read_toml(deployment_file)
        said = _said_from_presets(library, deployment_data, str(deployment_file))
        neutral = _value_table(library, deployment_data, str(deployment_file), "deployment default")
        values.update(neutral if default_base else {k: v for k, v in neutral.items() if k not in values})
        layers.append("deployment default")
    notes: list[tuple[str, str]] = []  # (the quantity it is about, the note)
    if hardware:
        hw_path = store.path("hardware", hardware)
        hw_values = _value_table(library, read_toml(hw_path), str(hw_path), f"hardware {hardware}")
        if hw_from_file:
            for qname in sorted(set(hw_values) & set(file_values)):
                if hw_values[qname].value != file_values[qname].value:
                    mine, theirs = file_values[qname].value, hw_values[qname].value
                    notes.append((qname, f"{qname}: the scenario file's {_plain_q(library, qname, mine)} replaces "
                                         f"hardware {hardware}'s {_plain_q(library, qname, theirs)}"))
                del hw_values[qname]
        values.update(hw_values)
        layers.append(f"hardware {hardware}")
    measurements = list(measurements)
    if measured or measurements:
        label, measured_values = _measured_layer(library, store, hardware, measurements)
        values.update(measured_values)
        layers.append(label)

    parsed_sets: list[tuple[str, sp.Rational, str]] = []
    set_twice: list[str] = []
    for text in sets:
        qname, value_text = parse_assignment(text, where="--set")
        if qname not in library.quantities:
            raise UnknownNameError("quantity", qname, library.quantities, where=f"--set {text}")
        q = library.quantities[qname]
        if q.value is not None:
            raise ScenarioError(f"'{qname}' is a constant of the library ({q.value}) and cannot be set",
                                where=f"--set {text}", hint=f"see derive show {qname}")
        value = parse_value(value_text, q.dimension, where=f"--set {text}", quantity=qname, si=si,
                            unit_hint=q.display_unit or q.unit)
        earlier = next((t for n, v, t in parsed_sets if n == qname and v != value), None)
        if earlier is not None:  # a later --set overrides (a script's base options, then the what-if): said
            set_twice.append(f"{qname} is set twice: --set {text} replaces --set {earlier}")
        parsed_sets.append((qname, value, text))

    notes.extend(("", t) for t in set_twice)

    def replaceable(qname: str) -> bool:
        """A value the model's own precision and context may replace: the default lecture scenario's round
        numbers and a hardware preset's datatype, never a scenario file's, a measurement's or --set's."""
        return model_may_replace(values.get(qname), base_origin if default_base else None)

    if model:
        kv = next((v for n, v, _ in parsed_sets if n == "bytes_per_kv_element"), None)
        default_kv = None
        if kv is None and "bytes_per_kv_element" in values:
            if values["bytes_per_kv_element"].origin.startswith("hardware "):
                default_kv = values["bytes_per_kv_element"].value  # the chip's native datatype, if the config has none
            elif not replaceable("bytes_per_kv_element"):
                kv = values["bytes_per_kv_element"].value  # the user's scenario file set it
        if model_layer is not None:
            label, model_vals = model_layer.label, dict(model_layer.values)
            native, reader_notes = model_layer.native, model_layer.notes
        else:
            label, model_vals, native, reader_notes = _model_layer(library, model, store, kv, default_kv)
        notes.extend(("", n) for n in reader_notes)
        for qname, v in model_vals.items():
            before = values.get(qname)
            if model_from_file and qname in file_values and qname not in native:
                if file_values[qname].value != v.value:
                    notes.append((qname, f"{qname}: the model's {_plain_q(library, qname, v.value)} not used; the "
                                         f"scenario file sets {_plain_q(library, qname, file_values[qname].value)}"))
                continue
            if qname in native and not replaceable(qname):
                if before is not None and before.value != v.value:
                    notes.append((qname, f"{qname}: the model's {_plain_q(library, qname, v.value)} not used; "
                                         f"{before.origin} sets {_plain_q(library, qname, before.value)}"))
                continue
            if qname in native and before is not None and before.value != v.value:
                notes.append((qname, f"{qname}: {_plain_q(library, qname, v.value)} from the model ({v.note}) "
                                     f"replaces {before.origin}'s {_plain_q(library, qname, before.value)}"))
            elif qname in native and before is None:  # nothing else gave it: the model's own, said so
                notes.append((qname, f"{qname}: {_plain_q(library, qname, v.value)} from the model ({v.note}); "
                                     f"--set {qname}=... for yours"))
            values[qname] = v
        layers.append(label)
    given = {qname for qname, _, _ in parsed_sets}
    notes = [(q, t) for q, t in notes if q not in given]  # a --set answers the question a note raised
    for qname, value, text in parsed_sets:
        values[qname] = ScenarioValue(qname, value, f"--set {text}", None, "--set")
        layers.append(f"--set {text}")
    notes.extend(_table_defaults(library, values, layers))
    user_file = path is not None and base not in store.files["scenario"]
    given_notes, links = _table_gives(library, values, layers, keep=lambda v: v.origin == "--set" or (
        user_file and v.origin == base_origin))
    notes.extend(given_notes)
    if deployment:
        for qname in sorted(values):
            v = values[qname]
            if v.origin == "deployment default" and not v.tied:  # a tied value's note comes once it is worked out
                notes.append((qname, f"{qname} = {_plain_q(library, qname, v.value)}: {v.source}"))
            elif default_base and v.origin == base_origin and not library.is_derived(qname):
                notes.append((qname, f"{qname} = {_plain_q(library, qname, v.value)} is the lecture's value: the "
                                     f"chip and the model do not give it; --set {qname}=... for yours"))
            elif qname in said and v.origin.startswith(("hardware ", "model ")):
                notes.append((qname, f"{qname} = {_plain_q(library, qname, v.value)} from {v.origin}: "
                                     f"{said[qname]} ({v.note or v.source}); --set {qname}=... for yours"))
    for text in assumes:
        assumptions.append((text, parse_quantity_relation(text, library.symbols(), library.dimension,
                                                          where=f"--assume {text!r}", si=si)))
        layers.append(f"--assume {text}")

    for qname, v in values.items():
        q = library.quantities[qname]
        if q.value is not None:
            raise ScenarioError(f"'{qname}' is a constant of the library ({q.value}) and cannot be set",
                                where=v.origin)
        where = v.source if v.origin == "--set" else v.origin  # "--set hbm_bandwidth=-1 TB/s"
        # an integer quantity (a parallel degree, a count) is refused off the integers as off its domain
        words = f"a {q.domain_words} integer" if q.integer and q.domain in ("positive", "nonnegative") else (
            f"{q.domain_words} and an integer" if q.integer else q.domain_words)
        if q.outside_domain(v.value) or (q.integer and not v.value.is_integer):
            raise ScenarioError(f"{qname} must be {words}, got {_shown_q(library, qname, v.value)}", where=where)
        # a count the proofs read as a real is set in whole units: 1.5 chips is a slip, or a threshold asked about
        # exactly (a margin's end), so it is read as given and said wherever it is used
        if q.whole and v.value.is_number and not (v.value / q.unit_si).is_integer:
            of = "" if q.unit == "1" else f" of {q.unit}"
            notes.append((qname, f"{qname} = {_shown_q(library, qname, v.value)} is not a whole number{of}, read as "
                                 f"given; {qname} counts {q.meaning}"))
    _drop_stale_pins(library, values, layers)
    before_remedies = tuple((n, values.get(n)) for n in remedy_targets(library))
    notes.extend(_apply_remedies(library, values))
    ties, tie_notes = _work_out_ties(library, values)
    notes.extend(tie_notes)
    pinned = frozenset(n for n in values if library.is_derived(n))
    if refuse_broken_rules:
        notes.extend(check_input_constraints(library, values, pinned))
    else:
        notes.extend(("", f"{b.constraint['rule']} does not hold ({b.numbers}): {b.constraint['reason']}")
                     for b in broken_input_constraints(library, values, pinned) if not b.refuses)
    base_layers = 1 if path is not None else 0
    extra = ["measured" if layer.startswith("measured ") else layer.split(" ", 1)[-1]
             for layer in layers[base_layers:] if not layer.startswith(("unpinned", "deployment"))
             and not layer.endswith(" default") and " gives " not in layer]
    label = name if not extra else f"{name}+" + "+".join(extra)
    notes.extend((layer.split(" ")[1], f"{layer[len('unpinned '):]}: unpinned")
                 for layer in layers if layer.startswith("unpinned "))
    notes = list(dict.fromkeys(notes))
    return Scenario(label, values, tuple(assumptions), pinned, tuple(layers), _ceilings(library, values),
                    tuple(t for _, t in notes), tuple(q for q, _ in notes), links + ties, before_remedies)


def _work_out_ties(library: Library, values: dict[str, ScenarioValue]) -> tuple[tuple[tuple[str, str], ...],
                                                                                 list[tuple[str, str]]]:
    """Give each value set with ``from = "NAME"`` (and not replaced by a later layer) NAME's exact value at the
    other values: the deployment's share of experts read is the uniform-routing expectation at the scenario's
    batch, whatever batch ``--set`` gives.  Where NAME has no value there (a definition's domain fails, an
    input is missing), the file's own value stands, and the note says why.  Returns the ties kept and a note
    for each value."""
    ties: list[tuple[str, str]] = []
    notes: list[tuple[str, str]] = []
    for name in sorted(n for n, v in values.items() if v.tied):
        v = values[name]
        others = {n: w for n, w in values.items() if n != name}
        worked, reason = _value_at(library, v.tied, others, frozenset(n for n in others if library.is_derived(n)),
                                   forbidden=name)
        if reason is not None:
            values[name] = dataclasses.replace(v, tied="")
            notes.append((name, f"{name} = {_plain_q(library, name, v.value)}: {v.source} ({v.tied} has no value "
                                f"here: {reason})"))
            continue
        values[name] = dataclasses.replace(v, value=worked, fallback=v.value)
        ties.append((name, v.tied))
        notes.append((name, f"{name} = {_plain_q(library, name, worked)} ({v.tied} at this scenario): {v.source}"))
    return tuple(ties), notes


def _value_at(library: Library, source: str, values: Mapping[str, ScenarioValue], pinned: frozenset[str],
              forbidden: str = "") -> tuple[sp.Rational | None, str | None]:
    """The exact value of the quantity ``source`` at ``values`` (its definitions expanded under ``pinned``), or
    None and why not: an input without a value, a definition's domain that fails there, a part without a real
    value, or the quantity ``forbidden`` among its inputs (a value worked out from itself).  The one reading of
    a linked value (``Scenario.links``) when it is given, worked out, or followed to a margin's end."""
    sym = library.quantities[source].sym
    subst = {library.quantities[n].sym: w.value for n, w in values.items()}
    expanded = library.expand(sym, pinned)
    if forbidden and forbidden in {str(x) for x in expanded.free_symbols}:
        return None, f"{source} reads {forbidden} itself"
    missing = sorted(str(x) for x in expanded.free_symbols if x not in subst)
    if missing:
        return None, f"no value for {', '.join(missing)}"
    failing = [str(c) for _, c in library.definition_conditions([sym], pinned, kinds=("domain",))
               if not _holds(c, subst)]
    if failing:
        return None, f"it is defined only where {failing[0]}"
    try:
        worked = exactify(replace(expanded, subst, strict=True))
    except DeriveError as err:
        return None, str(err)
    if not worked.is_Rational:
        return None, f"it is not a rational number here ({worked})"
    return worked, None


def _holds(condition: Formula, subst: Mapping[sp.Symbol, sp.Rational]) -> bool:
    """Whether a side condition holds at the values (False where it cannot be read there)."""
    try:
        return condition.evaluate(subst)
    except (DeriveError, TypeError, ValueError, ZeroDivisionError):
        return False


def _table_defaults(library: Library, values: dict[str, ScenarioValue], layers: list[str]) -> list[tuple[str, str]]:
    """A library's input table that the scenario uses (any member has a value): its members not given take
    their declared default, each with a note.  A table the scenario does not use adds nothing, so a scenario
    without a layout stays as it was."""
    from derive.model.parse import parse_value

    notes = []
    for table, spec in library.input_tables.items():
        members = spec["members"]
        if not any(m in values for m in members):
            continue
        filled = []
        for member, entry in members.items():
            if member in values or "default" not in entry:
                continue
            q = library.quantities[member]
            value = parse_value(entry["default"], q.dimension, where=f"{table} default", quantity=member)
            values[member] = ScenarioValue(member, value, entry["source"], None, f"{table} default")
            filled.append(member)
            notes.append((member, f"{member} = {_plain_q(library, member, value)}: {entry['source']}"))
        if filled:
            layers.append(f"{table} default")
    return notes


def _implied_by_gives(library: Library, spec: Mapping, values: Mapping[str, ScenarioValue]) -> str | None:
    """Why a table the scenario does not use is in use at its defaults, or None: every member has a default, and
    every quantity the table gives (``gives``) already has that value at the scenario, given or worked out from
    its own definition (one chip in one stage: a layout's tp·cp·dp = 1 and pp = 1, every degree 1).  Otherwise a
    table not given stays unused (eight chips fit many layouts; none is guessed)."""
    gives = spec.get("gives") or {}
    if not gives or any("default" not in entry for entry in spec["members"].values()):
        return None
    trial = {**values, **_default_values(library, "", spec)}
    said = []
    for given, source in sorted(gives.items()):
        now = values[given].value if given in values else _value_at(library, given, values, frozenset())[0]
        if now is None or _value_at(library, source, trial, frozenset())[0] != now:
            return None
        said.append(f"{given} = {_plain_q(library, given, now)}")
    return ", ".join(said[:-1]) + (" and " if len(said) > 1 else "") + said[-1]


def _default_values(library: Library, table: str, spec: Mapping) -> dict[str, ScenarioValue]:
    """Every member of an input table (each has a default) at its declared default."""
    from derive.model.parse import parse_value

    out = {}
    for member, entry in spec["members"].items():
        value = parse_value(entry["default"], library.quantities[member].dimension, where=f"{table} default",
                            quantity=member)
        out[member] = ScenarioValue(member, value, entry["source"], None, f"{table} default")
    return out


def _table_gives(library: Library, values: dict[str, ScenarioValue], layers: list[str],
                 keep: Callable[[ScenarioValue], bool]) -> tuple[list[tuple[str, str]], tuple[tuple[str, str], ...]]:
    """An input table in use gives the quantities it names (``gives``) their value from its members: ``chips``
    takes ``stage_chips`` at the layout, in place of a chip preset's or the library's own scenario's value, with a
    note; a value ``keep`` says was given by hand stays (the library's rules say whether it agrees).  Returns the
    notes and the (given, derived) pairs now linked."""
    notes: list[tuple[str, str]] = []
    links: list[tuple[str, str]] = []
    for table, spec in library.input_tables.items():
        if not any(m in values for m in spec["members"]):
            continue
        for given, source in spec.get("gives", {}).items():
            expr = library.expand(library.quantities[source].sym)
            point = {str(s): values[str(s)].value for s in expr.free_symbols if str(s) in values}
            if any(library.quantities[n].outside_domain(v) or (library.quantities[n].integer and not v.is_integer)
                   for n, v in point.items()):
                continue  # a member off its domain: it is refused on its own, in its own words
            value, _ = _value_at(library, source, values, frozenset())
            if value is None:
                continue  # a member without a value or a default: nothing to give
            before = values.get(given)
            if before is not None and keep(before):
                continue
            links.append((given, source))
            formula = "" if str(expr) == source else f" = {expr}"  # stages = pp, not stages = pp = pp
            values[given] = ScenarioValue(given, value, f"the {table}: {given} = {source}{formula}", None,
                                          f"{table} gives")
            replaced = "" if before is None else (
                f"; replaces {before.origin}'s {_plain_q(library, given, before.value)}"
                if before.value != value else f"; as {before.origin} says")
            shown = "" if str(expr) == source else f" ({expr})"
            notes.append((given, f"{given} = {_plain_q(library, given, value)}: the {table}'s {source}{shown}"
                                 f"{replaced}"))
            layers.append(f"{table} gives {given}")
    return notes, tuple(links)


def follow_links(library: Library, scenario: Scenario, values: Mapping[str, ScenarioValue],
                 pinned: Iterable[str] = ()) -> dict[str, ScenarioValue]:
    """``values`` (the scenario's, some changed: a margin's end) with each linked quantity (``scenario.links``:
    what an input table gives, a value worked out ``from`` a quantity) given again from them, as ``--set`` of the
    changed values would give it; one whose source has no value there keeps its own."""
    out = dict(values)
    for given, source in scenario.links:
        value, _ = _value_at(library, source, out, frozenset(pinned))
        if given in out and value is not None:
            out[given] = dataclasses.replace(out[given], value=value)
    return out


@dataclass(frozen=True)
class InputRule:
    """One of the library's input rules (its ``id``, ``rule``, ``reason``, ``hint``, ``refuse``: the loader
    gives every constraint each key), as a broken rule or a count of broken points carries it."""

    constraint: Mapping[str, object]

    @property
    def id(self) -> str:
        return str(self.constraint["id"])

    @property
    def refuses(self) -> bool:
        return bool(self.constraint["refuse"])


@dataclass(frozen=True)
class BrokenRule(InputRule):
    """One input rule a scenario's values break: the rule, its numbers (``tp = 3, query_heads = 64``) and the
    values it rests on."""

    numbers: str
    names: tuple[str, ...]  # the quantities given a value that the rule rests on, expanded


def relation_at(library: Library, relation: Formula, values: Mapping[str, ScenarioValue],
                pinned: Iterable[str] = ()) -> tuple[bool, dict[sp.Symbol, sp.Expr]] | None:
    """Whether ``relation`` holds at these values, decided exactly (rationals) once expanded through the
    library's definitions (the ``pinned`` derived quantities cut), with the point it was decided at; None where
    a quantity it then rests on has no value, or where it is not defined at them: not decided."""
    expanded = library.formula_expand(relation, frozenset(pinned))
    names = sorted(library.quantity_of(s).name for s in expanded.free_symbols())
    if any(n not in values for n in names):
        return None
    point = {library.quantities[n].sym: values[n].value for n in names}
    try:
        return bool(expanded.evaluate(point)), point
    except Exception:  # noqa: BLE001 - a value where the relation is not defined: not decided here
        return None


def broken_input_constraints(library: Library, values: Mapping[str, ScenarioValue],
                             pinned: Iterable[str] = ()) -> list[BrokenRule]:
    """The library's ``input_constraints`` that these values break, in the library's order, each decided
    exactly (rationals).  A rule whose quantities the values do not all give, or that is not defined at them,
    is not decided here and is not in the list."""
    pinned = frozenset(pinned)
    out: list[BrokenRule] = []
    for c in library.input_constraints:
        decided = relation_at(library, c["relation"], values, pinned)
        if decided is None or decided[0]:
            continue
        point = decided[1]
        names = sorted(library.quantity_of(s).name for s in point)
        own = sorted({library.quantity_of(s).name for s in c["relation"].free_symbols()},
                     key=lambda n: (c["rule"].find(n) if n in c["rule"] else len(c["rule"]), n))
        numbers = ", ".join(_shown_with_inputs(library, n, values, point, pinned) for n in own)
        out.append(BrokenRule(c, numbers, tuple(names)))
    return out


def _apply_remedies(library: Library, values: dict[str, ScenarioValue]) -> list[tuple[str, str]]:
    """A broken input rule's first remedy that applies (its ``when`` holds at the values, and each value it
    replaces and each value it takes come from the same chip preset): the preset's other value in place of the
    one the rule found wrong (a chip's FP8 rate for weights stored in FP8), with a note each.  A value the user
    gave (``--set``, a scenario file, a measurement) is never replaced: the rule's note stands instead."""
    notes: list[tuple[str, str]] = []
    pinned = frozenset(n for n in values if library.is_derived(n))
    for broken in broken_input_constraints(library, values, pinned):
        for remedy in broken.constraint.get("remedies", ()):
            relation = remedy["relation"]
            names = sorted(library.quantity_of(x).name for x in relation.free_symbols())
            if any(n not in values for n in names):
                continue
            if not _holds(relation, {library.quantities[n].sym: values[n].value for n in names}):
                continue
            pairs = list(remedy["take"].items())
            touched = [n for pair in pairs for n in pair] + list(remedy["set"])
            origins = {values[n].origin if n in values else "" for n in touched}
            if len(origins) != 1 or not origins.pop().startswith("hardware "):
                continue
            for target, source in pairs:
                old, new = values[target], values[source]
                if new.value != old.value:
                    notes.append((target, f"{target}: {_plain_q(library, target, new.value)}, {old.origin}'s {source}, "
                                          f"in place of its {target} {_plain_q(library, target, old.value)}: "
                                          f"{remedy['reason']}; --set {target}=... for yours"))
                values[target] = dataclasses.replace(new, name=target)
            for target, value in remedy.get("values", {}).items():
                values[target] = dataclasses.replace(values[target], value=value, source=remedy["reason"])
            break
    return notes


def remedy_targets(library: Library) -> list[str]:
    """The quantities an input rule's remedy may replace (``take`` and ``set``), in the library's order."""
    out: list[str] = []
    for c in library.input_constraints:
        for remedy in c.get("remedies", ()):
            out += [n for n in [*remedy["take"], *remedy.get("values", {})] if n not in out]
    return out


def remedy_reads(library: Library, constraint: Mapping) -> set[str]:
    """The quantities that decide whether a rule's remedies apply: those its relation and their ``when`` read
    (none for a rule without remedies)."""
    if not constraint.get("remedies"):
        return set()
    out = {library.quantity_of(s).name for s in constraint["relation"].free_symbols()}
    for remedy in constraint["remedies"]:
        out |= {library.quantity_of(s).name for s in remedy["relation"].free_symbols()}
    return out


def remedies_at(library: Library, scenario: Scenario, point: Mapping[str, sp.Rational]
                ) -> tuple[dict[str, ScenarioValue], list[tuple[str, str]]]:
    """The scenario's values where the quantities of ``point`` take its values (SI), as ``--set`` of each would
    give them: the values an input rule's remedy replaced put back, then the remedies decided again at the new
    values (weights swept to 1 byte take a chip preset's FP8 rate; swept back to 2 bytes, its BF16 ``flops``).
    Returns the values and the remedies' notes."""
    values = values_before_remedies(scenario)
    for name, value in point.items():
        values[name] = ScenarioValue(name, sp.Rational(value), f"--set {name}", origin="--set")
    notes = _apply_remedies(library, values)
    return values, notes


def values_before_remedies(scenario: Scenario) -> dict[str, ScenarioValue]:
    """The scenario's values with each value an input rule's remedy replaced put back as it was."""
    values = dict(scenario.values)
    for name, before in scenario.before_remedies:
        if before is None:
            values.pop(name, None)
        else:
            values[name] = before
    return values


def check_input_constraints(library: Library, values: Mapping[str, ScenarioValue],
                            pinned: Iterable[str] = ()) -> list[tuple[str, str]]:
    """The library's ``input_constraints`` at these values: a broken rule that refuses is a one-line
    ``ScenarioError`` naming the rule, its numbers, the reason and where the value came from; a broken rule
    that does not refuse is a note (returned as ``(subject, text)`` pairs).  A rule whose quantities the
    scenario does not all give is not decided here."""
    notes: list[tuple[str, str]] = []
    tabled = {m for t in library.input_tables.values() for m in t["members"]}
    given = {g for t in library.input_tables.values() for g in t.get("gives", {})}
    for broken in broken_input_constraints(library, values, pinned):
        c = broken.constraint
        if not broken.refuses:
            hint = f"; {c['hint']}" if c.get("hint") else ""
            notes.append(("", f"{c['rule']} does not hold ({broken.numbers}): {c['reason']}{hint}"))
            continue
        # where the user looks first: an input table's value they gave (a degree), then the value given last
        # (--set over a model over a chip over a file)
        own = sorted({library.quantity_of(s).name for s in c["relation"].free_symbols()},
                     key=lambda n: (c["rule"].find(n) if n in c["rule"] else len(c["rule"]), n))
        order = {n: i for i, n in enumerate(own)}
        # a value typed by hand for a quantity a table gives (--set chips=16 beside a layout) is the one to name
        typed = [values[n] for n in broken.names if n in given and not values[n].origin.endswith(" gives")]
        culprit = max(typed or (values[n] for n in broken.names), key=lambda v: (
            v.name in tabled and not v.origin.endswith(" default"), _LAYER_RANK.get(v.origin.split(" ", 1)[0], 0),
            -order.get(v.name, len(order))))
        by_source = culprit.origin == "--set" or (culprit.name in tabled and culprit.origin.startswith("scenario "))
        where = culprit.source if by_source else culprit.origin
        raise ScenarioError(f"impossible {c['what']}: {c['rule']} does not hold ({broken.numbers}); {c['reason']} "
                            f"[{c['id']}]", where=where, hint=c.get("hint") or None)
    return notes


def with_implied_input_tables(library: Library, scenario: Scenario, varied: Iterable[str] = ()) -> Scenario:
    """``scenario`` with each input table it does not use read at its defaults where those give exactly what the
    scenario already says (``_implied_by_gives``: one chip in one stage is the layout tp = pp = cp = dp = 1), with
    one note a table; the same scenario where no table is so implied.  The quantities a table gives stay free (no
    link); a table a what-if moves (``varied`` names a member, a quantity it gives or one those are worked out
    from: a sweep over ``chips``) is left unused, since the defaults hold at the scenario's own values only."""
    import dataclasses

    values = dict(scenario.values)
    notes: list[tuple[str, str]] = []
    layers: list[str] = []
    varied = set(varied)
    for table, spec in library.input_tables.items():
        if any(m in values for m in spec["members"]):
            continue
        gives = spec.get("gives") or {}
        reads = {str(x) for g in gives for x in library.expand(library.quantities[g].sym).free_symbols}
        if varied & (set(spec["members"]) | set(gives) | reads):
            continue
        implied = _implied_by_gives(library, spec, values)
        if implied is None:
            continue
        values.update(_default_values(library, table, spec))
        shown = ", ".join(f"{m} = {_plain_q(library, m, values[m].value)}" for m in spec["members"])
        first = next(iter(spec["members"]))
        notes.append((first, f"{table}: none given; at its defaults it gives {implied}, the scenario's own, so the "
                             f"{table} is {shown}; --set {first}=... for another"))
        layers.append(f"{table} default")
    if not notes:
        return scenario
    return dataclasses.replace(scenario, values=values, layers=scenario.layers + tuple(layers),
                               notes=scenario.notes + tuple(t for _, t in notes),
                               subjects=scenario.subjects + tuple(q for q, _ in notes))


def with_input_table_defaults(library: Library, scenario: Scenario,
                              names: Iterable[str]) -> tuple[Scenario, list[str]]:
    """``scenario`` as a command that varies the quantities ``names`` sees it: when one of them is a member of
    an input table the scenario does not use yet (``--vary tp`` with no layout given), the table's other members
    take their declared defaults, as ``--set tp=...`` would give them; and one line per table so filled
    (``--vary tp uses the layout table: ...``).  A table the names leave alone whose defaults give what the
    scenario already says (one chip in one stage) is read at them, its note the first line
    (``with_implied_input_tables``).  The same scenario and no line when neither applies."""
    names = list(names)
    implied = with_implied_input_tables(library, scenario, names)
    scenario_lines = list(implied.notes[len(scenario.notes):])
    scenario, lines = _varied_table_defaults(library, implied, names)
    return scenario, [*scenario_lines, *lines]


def _varied_table_defaults(library: Library, scenario: Scenario, names: list[str]) -> tuple[Scenario, list[str]]:
    """``with_input_table_defaults`` for the tables a varied name is a member of."""
    import dataclasses

    values = dict(scenario.values)
    placeholders = [n for n in names if n not in values
                    and any(n in t["members"] for t in library.input_tables.values())]
    if not placeholders:
        return scenario, []
    for n in placeholders:  # stands for the varied value while the defaults are filled
        values[n] = ScenarioValue(n, sp.Integer(1), "varied", None, "varied")
    layers: list[str] = []
    notes = [(q, t) for q, t in _table_defaults(library, values, layers) if q not in names]
    # the table is in use now: what it gives follows the varied member (a value given by hand stays)
    given_notes, links = _table_gives(library, values, layers, keep=lambda v: v.origin == "--set" or (
        v.origin.startswith("scenario ") and v.origin != f"scenario {DEFAULT_SCENARIO}"))
    notes += [(q, t) for q, t in given_notes if q not in names]
    for n in placeholders:
        del values[n]
    if not layers:
        return scenario, []
    lines = []
    for table, spec in library.input_tables.items():
        varied = [n for n in placeholders if n in spec["members"]]
        filled = [m for m in spec["members"] if m in values and m not in scenario.values]
        if varied and filled:
            shown = ", ".join(f"{m} = {_plain_q(library, m, values[m].value)}" for m in filled)
            lines.append(f"--vary {varied[0]} uses the {table} table: its other members take their defaults, as "
                         f"--set {varied[0]}=... would: {shown}")
    scenario = dataclasses.replace(scenario, values=values, layers=scenario.layers + tuple(layers),
                                   notes=scenario.notes + tuple(t for _, t in notes),
                                   subjects=scenario.subjects + tuple(q for q, _ in notes),
                                   links=scenario.links + links)
    return scenario, lines


def _shown_with_inputs(library: Library, name: str, values: Mapping[str, ScenarioValue],
                       point: Mapping[sp.Symbol, sp.Rational], pinned: frozenset[str]) -> str:
    """``tp = 3``, or for a derived quantity its value and the inputs it comes from:
    ``layout_chips = 128 (tp = 16, pp = 8, cp = 1, dp = 1)``."""
    if name in values:
        return f"{name} = {_plain_q(library, name, values[name].value)}"
    expanded = library.expand(library.quantities[name].sym, pinned)
    value = sp.Rational(sp.sympify(expanded).xreplace(dict(point)))
    text = str(library.definition_of[name].expr) if name in library.definition_of else ""
    inputs = sorted((library.quantity_of(s).name for s in expanded.free_symbols),
                    key=lambda n: (text.find(n) if n in text else len(text), n))
    shown = ", ".join(f"{n} = {_plain_q(library, n, values[n].value)}" for n in inputs if n in values)
    return f"{name} = {_plain_q(library, name, value)}" + (f" ({shown})" if shown else "")


def _named_preset(data: Mapping, key: str, part: Path, relative_to: Path | None = None) -> str | None:
    """``hardware = "h100-sxm"`` or ``model = "llama3-70b"`` (or a config.json path, read relative to the
    scenario file's folder) at the top of a scenario file."""
    given = data.get(key)
    if given is None:
        return None
    if not isinstance(given, str) or not given.strip():
        raise ScenarioError(f"`{key}` must name a preset (text), got {_toml_type(given)}", where=str(part),
                            hint=f'write {key} = "NAME" (see derive presets)')
    return model_path_from(given, relative_to) if relative_to is not None else given


def model_path_from(given: str, folder: Path) -> str:
    """A model named in a file (a scenario file's ``model``, an audited table's ``model`` cell) as the command
    line reads it: a relative ``config.json`` path (one with a ``/`` or ending ``.json``) is read from the
    file's ``folder`` where it names a file there, else from the working folder (as ``--model`` reads it); a
    preset name or an absolute path as given."""
    if ("/" in given or given.endswith(".json")) and not Path(given).is_absolute():
        beside = folder / given
        return str(beside) if beside.is_file() or not Path(given).is_file() else given
    return given


def _shown_q(library: Library, name: str, value: sp.Rational) -> str:
    """A value of a quantity (SI) for people, with a prefix: ``-1 TB/s``, not ``-1000000000000``."""
    from derive.model.display import format_quantity

    q = library.quantities[name]
    return format_quantity(value, q.dimension, q.display_unit)


def _plain_q(library: Library, name: str, value: sp.Rational) -> str:
    """A scenario value in its quantity's unit, for a note."""
    q = library.quantities.get(name)
    unit_text = (q.display_unit or q.unit) if q is not None else "1"
    scale = parse_unit(unit_text).scale
    shown = _plain(value / sp.Rational(scale.numerator, scale.denominator))
    return shown if unit_text == "1" else f"{shown} {unit_text}"


_LAYER_RANK = {"scenario": 0, "deployment": 0, "hardware": 1, "measured": 2, "model": 3, "config": 3, "hf": 3,
               "--set": 4}


def _drop_stale_pins(library: Library, values: dict[str, ScenarioValue], layers: list[str]) -> None:
    """A pin set by an earlier layer yields to a later layer that sets one of its inputs: the lecture
    pins sparsity = 8, but ``--model llama3-70b`` gives params_total and params_active, and then the
    model's own sparsity must count.  The scenario's layers record each dropped pin."""
    def rank(v: ScenarioValue) -> int:
        return _LAYER_RANK.get(v.origin.split(" ", 1)[0], 0)

    for name in [n for n in values if library.is_derived(n)]:
        pin = values[name]
        if pin.origin.endswith(" gives"):
            continue  # an input table gives it from the final values of its members: never stale
        inputs = library.base_inputs(library.quantities[name].sym)
        later = [i for i in inputs if i in values and rank(values[i]) > rank(pin)]
        if later:
            del values[name]
            layers.append(f"unpinned {name} (its input {later[0]} comes from {values[later[0]].origin})")
