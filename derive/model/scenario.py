"""Scenarios: the values and extra assumptions a check is run under.

A scenario is built in layers, each overriding the one before: the base scenario (``lecture`` unless
``--scenario`` names another one or a TOML file), the hardware preset, the model preset or
``config.json``, then ``--set`` values; ``--assume`` relations are added on top.  Every value keeps
where it came from.  Giving a value to a *derived* quantity pins it: its definition is cut for this
scenario, and the scenario says so.

Preset files are TOML data in the library's preset folders (``hardware/``, ``models/``,
``scenarios/``); the engine reads them without knowing what the quantities mean.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import sympy as sp

from derive.errors import ScenarioError, UnknownNameError
from derive.kernel.logic import Formula
from derive.model.library import Library
from derive.model.units import parse_unit

PRESET_KINDS = {"hardware": "hardware", "model": "models", "scenario": "scenarios"}


@dataclass(frozen=True)
class ScenarioValue:
    name: str
    value: sp.Rational  # SI base units
    source: str
    as_of: str | None = None
    origin: str = ""  # which layer set it: "scenario lecture", "hardware h100-sxm", "--set"
    note: str = ""


@dataclass(frozen=True)
class Scenario:
    name: str
    values: Mapping[str, ScenarioValue]
    assumptions: tuple[tuple[str, Formula], ...] = ()
    pinned: frozenset[str] = frozenset()
    layers: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # defaults and approximations the layers applied, one sentence each

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
        return h.hexdigest()[:16]

    def describe(self) -> dict[str, object]:
        return {
            "name": self.name,
            "layers": list(self.layers),
            "values": {n: {"value": str(v.value), "source": v.source, "origin": v.origin}
                       for n, v in sorted(self.values.items())},
            "assumptions": [t for t, _ in self.assumptions],
            "pinned": sorted(self.pinned),
            "notes": list(self.notes),
        }

    def explain(self, library: Library, names: Iterable[str] | None = None) -> list[dict[str, str]]:
        """For each input (all values, or ``names``): its value in the quantity's unit, the unit, the layer
        that set it (``lecture``, ``scenario NAME``, ``hardware preset``, ``model config``, ``model preset``,
        ``--set``), where exactly (``origin``), its source and note.  Documents show this table."""
        rows = []
        for name in sorted(self.values) if names is None else [n for n in names if n in self.values]:
            v = self.values[name]
            q = library.quantities.get(name)
            unit_text = (q.display_unit or q.unit) if q is not None else "1"
            try:
                scale = parse_unit(unit_text).scale
            except Exception:  # noqa: BLE001 - an odd unit string shows the SI value instead
                unit_text, scale = (q.unit if q is not None else "1"), parse_unit(q.unit if q else "1").scale
            value = v.value / sp.Rational(scale.numerator, scale.denominator)
            rows.append({"name": name, "value": _plain(value), "exact": str(v.value), "unit": unit_text,
                         "layer": layer_kind(v.origin), "origin": v.origin, "source": v.source,
                         "note": v.note})
        return rows


def layer_kind(origin: str) -> str:
    """The kind of layer an origin string names, in the words ``--explain`` uses."""
    head = origin.split(" ", 1)[0]
    if origin == "scenario lecture":
        return "lecture"
    return {"scenario": "scenario file", "hardware": "hardware preset", "config": "model config",
            "hf": "model config", "model": "model preset", "--set": "--set"}.get(head, head or "?")


def _plain(value: sp.Rational) -> str:
    """A value for people: an integer exactly, else 6 significant digits."""
    if value.is_Integer:
        return f"{int(value):,}"
    return f"{float(value):.6g}"


@dataclass
class PresetStore:
    """Preset files found in the library's preset folders, by kind and name."""

    files: dict[str, dict[str, Path]] = field(default_factory=dict)

    @staticmethod
    def discover(dirs: Iterable[Path]) -> PresetStore:
        store = PresetStore({k: {} for k in PRESET_KINDS})
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
        raise UnknownNameError(f"{kind} preset", name, found, where=f"--{kind}")

    def names(self, kind: str) -> list[str]:
        return sorted(self.files.get(kind, {}))


def read_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ScenarioError(f"file not found: {path}") from None
    except tomllib.TOMLDecodeError as err:
        raise ScenarioError(f"invalid TOML: {err}", where=str(path)) from None
    except OSError as err:
        raise ScenarioError(f"cannot read {path}: {err.strerror}") from None


def _value_table(library: Library, data: Mapping, where: str, origin: str) -> dict[str, ScenarioValue]:
    from derive.model.parse import parse_value

    out: dict[str, ScenarioValue] = {}
    values = data.get("values", {})
    if not isinstance(values, Mapping):
        raise ScenarioError("[values] must be a table", where=where)
    for name, entry in values.items():
        q = library.quantity(name) if name in library.quantities else None
        if q is None:
            raise UnknownNameError("quantity", name, library.quantities, where=where)
        if not isinstance(entry, Mapping) or "value" not in entry:
            raise ScenarioError(f"values.{name} needs `value`, `source` and `as_of`", where=where)
        if "source" not in entry:
            raise ScenarioError(f"values.{name} has no source", where=where, hint="every preset value carries source")
        text = str(entry["value"])
        value = parse_value(text, q.dimension, where=f"{where}: values.{name}", quantity=name)
        out[name] = ScenarioValue(name, value, str(entry["source"]), entry.get("as_of"), origin, entry.get("note", ""))
    return out


def _assumption_table(library: Library, data: Mapping, where: str) -> list[tuple[str, Formula]]:
    from derive.model.parse import parse_relation

    out = []
    for i, entry in enumerate(data.get("assume", [])):
        text = entry.get("relation") if isinstance(entry, Mapping) else entry
        if not isinstance(text, str):
            raise ScenarioError(f"assume[{i}] needs a `relation` string", where=where)
        out.append((text, parse_relation(text, library.symbols(), where=f"{where}: assume[{i}]")))
    return out


def _read_json(path: Path, shown: str) -> Mapping:
    import json

    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ScenarioError(f"invalid JSON in {shown}: {err}", where="--model") from None
    except RecursionError:
        raise ScenarioError(f"invalid JSON in {shown}: nested too deeply", where="--model") from None
    except OSError as err:
        raise ScenarioError(f"cannot read {shown}: {err.strerror}", where="--model") from None
    if not isinstance(config, Mapping):
        raise ScenarioError(f"{shown} is not a JSON object", where="--model")
    return config


def _model_layer(library: Library, model: str, store: PresetStore, bytes_per_kv_element: sp.Rational | None,
                 default_kv: sp.Rational | None
                 ) -> tuple[str, dict[str, ScenarioValue], frozenset[str], tuple[str, ...]]:
    """A model preset (TOML with a [config] table), a path to a config.json (or to a folder holding one),
    or a Hugging Face id ``ORG/NAME`` found in the local Hugging Face cache.

    Returns the layer's label, its values, the names of the values that describe the model's own
    precision and context (``native``: they replace the lecture's round numbers and a hardware preset's,
    not a value the user gave) and the reader's notes."""
    path = Path(model)
    reader = library.model_config_reader
    is_preset = "/" not in model and "\\" not in model and not model.endswith(".json")
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
        label, source, as_of = f"model {model}", str(data.get("source", preset_path.name)), data.get("as_of")
    elif path.is_dir() and (path / "config.json").is_file():
        config = _read_json(path / "config.json", str(path / "config.json"))
        label, source, as_of = f"config {path.name}/config.json", f"config.json at {path / 'config.json'}", None
    elif path.is_file() or model.endswith(".json") or path.suffix == ".json" or path.exists():
        if not path.is_file():
            raise ScenarioError(f"config file not found: {model}", where="--model")
        config = _read_json(path, model)
        label, source, as_of = f"config {path.name}", f"config.json at {model}", None
    else:
        finder = getattr(reader, "find_cached_config", None)
        if finder is None:
            raise ScenarioError(f"config file not found: {model}", where="--model",
                                hint="this library cannot look up Hugging Face ids; give a path to a config.json")
        cached = Path(finder(model))
        config = _read_json(cached, str(cached))
        label, source, as_of = f"hf {model}", f"Hugging Face cache: {cached}", None
    kwargs: dict = {}
    if bytes_per_kv_element is not None:
        kwargs["bytes_per_kv_element"] = bytes_per_kv_element
    if default_kv is not None:
        kwargs["default_bytes_per_kv_element"] = default_kv
    try:
        values = reader(config, where=label, **kwargs)
    except TypeError:  # a library's reader without the default_bytes_per_kv_element argument
        kwargs.pop("default_bytes_per_kv_element", None)
        values = reader(config, where=label, **kwargs)
    out = {}
    native = set()
    for name, cv in values.items():
        if name not in library.quantities:
            continue  # the reader may know architecture fields this library has no quantity for
        q = library.quantities[name]
        unit = parse_unit(cv.unit)
        if unit.dimension != q.dimension:
            raise ScenarioError(f"config reader gave {name} in {cv.unit}, expected {q.unit}", where=label)
        out[name] = ScenarioValue(name, sp.Rational(cv.value) * sp.Rational(unit.scale), source, as_of, label,
                                  cv.note)
        if getattr(cv, "native", False):
            native.add(name)
    return label, out, frozenset(native), tuple(getattr(values, "notes", ()))


def build_scenario(library: Library, *, scenario: str | None = None, hardware: str | None = None,
                   model: str | None = None, sets: Iterable[str] = (), assumes: Iterable[str] = ()) -> Scenario:
    """Assemble a scenario from its layers (see module docstring)."""
    from derive.model.parse import parse_assignment, parse_relation, parse_value

    store = PresetStore.discover(library.preset_dirs)
    values: dict[str, ScenarioValue] = {}
    assumptions: list[tuple[str, Formula]] = []
    layers: list[str] = []

    base = scenario or "lecture"
    if base.endswith(".toml") or "/" in base:
        path = Path(base)
        if not path.exists():
            raise ScenarioError(f"scenario file not found: {base}", where="--scenario")
        name = path.stem
    elif base in store.files["scenario"]:
        path, name = store.files["scenario"][base], base
    elif scenario is None:
        path, name = None, "empty"  # a library without a lecture scenario
    else:
        raise UnknownNameError("scenario", base, store.files["scenario"], where="--scenario")
    if path is not None:
        parts = sorted(path.glob("*.toml")) if path.is_dir() else [path]
        for part in parts:
            data = read_toml(part)
            values.update(_value_table(library, data, str(part), f"scenario {name}"))
            assumptions.extend(_assumption_table(library, data, str(part)))
        layers.append(f"scenario {name}")
    if hardware:
        hw_path = store.path("hardware", hardware)
        values.update(_value_table(library, read_toml(hw_path), str(hw_path), f"hardware {hardware}"))
        layers.append(f"hardware {hardware}")

    parsed_sets: list[tuple[str, sp.Rational, str]] = []
    for text in sets:
        qname, value_text = parse_assignment(text, where="--set")
        q = library.quantity(qname)
        parsed_sets.append((qname, parse_value(value_text, q.dimension, where=f"--set {text}", quantity=qname), text))

    notes: list[str] = []
    default_base = scenario is None

    base_origin = f"scenario {name}"

    def replaceable(qname: str) -> bool:
        """A value the model's own precision and context may replace: the default lecture scenario's round
        numbers and a hardware preset's datatype, never a scenario file's or --set's."""
        v = values.get(qname)
        return v is None or v.origin.startswith("hardware ") or (default_base and v.origin == base_origin)

    if model:
        kv = next((v for n, v, _ in parsed_sets if n == "bytes_per_kv_element"), None)
        default_kv = None
        if kv is None and "bytes_per_kv_element" in values:
            if replaceable("bytes_per_kv_element") and values["bytes_per_kv_element"].origin.startswith("hardware "):
                default_kv = values["bytes_per_kv_element"].value  # the chip's native datatype, if the config has none
            elif not replaceable("bytes_per_kv_element"):
                kv = values["bytes_per_kv_element"].value  # the user's scenario file set it
        label, model_vals, native, reader_notes = _model_layer(library, model, store, kv, default_kv)
        notes.extend(reader_notes)
        for qname, v in model_vals.items():
            before = values.get(qname)
            if qname in native and not replaceable(qname):
                if before is not None and before.value != v.value:
                    notes.append(f"{qname}: the model's {_plain_q(library, qname, v.value)} not used; "
                                 f"{before.origin} sets {_plain_q(library, qname, before.value)}")
                continue
            if qname in native and before is not None and before.value != v.value:
                notes.append(f"{qname}: {_plain_q(library, qname, v.value)} from the model ({v.note}) replaces "
                             f"{before.origin}'s {_plain_q(library, qname, before.value)}")
            values[qname] = v
        layers.append(label)
    for qname, value, text in parsed_sets:
        values[qname] = ScenarioValue(qname, value, f"--set {text}", None, "--set")
        layers.append(f"--set {text}")
    if model and default_base:
        for qname in ("bytes_per_param", "bytes_per_kv_element", "context"):
            v = values.get(qname)
            if v is not None and v.origin == base_origin and qname in library.quantities:
                notes.append(f"{qname} = {_plain_q(library, qname, v.value)} is the lecture's round number: the model "
                             f"config does not give it; --set {qname}=... for yours")
    for text in assumes:
        assumptions.append((text, parse_relation(text, library.symbols(), where=f"--assume {text!r}")))
        layers.append(f"--assume {text}")

    for qname, v in values.items():
        q = library.quantities[qname]
        if q.value is not None:
            raise ScenarioError(f"'{qname}' is a constant of the library ({q.value}) and cannot be set",
                                where=v.origin)
        if q.domain == "positive" and v.value <= 0:
            raise ScenarioError(f"{qname} must be positive, got {v.value}", where=v.origin)
        if q.domain == "nonnegative" and v.value < 0:
            raise ScenarioError(f"{qname} must be non-negative, got {v.value}", where=v.origin)
    _drop_stale_pins(library, values, layers)
    pinned = frozenset(n for n in values if library.is_derived(n))
    base_layers = 1 if path is not None else 0
    extra = [layer.split(" ", 1)[-1] for layer in layers[base_layers:] if not layer.startswith("unpinned")]
    label = name if not extra else f"{name}+" + "+".join(extra)
    notes.extend(f"{layer[len('unpinned '):]}: unpinned" for layer in layers if layer.startswith("unpinned "))
    return Scenario(label, values, tuple(assumptions), pinned, tuple(layers), tuple(dict.fromkeys(notes)))


def _plain_q(library: Library, name: str, value: sp.Rational) -> str:
    """A scenario value in its quantity's unit, for a note."""
    q = library.quantities.get(name)
    unit_text = (q.display_unit or q.unit) if q is not None else "1"
    scale = parse_unit(unit_text).scale
    shown = _plain(value / sp.Rational(scale.numerator, scale.denominator))
    return shown if unit_text == "1" else f"{shown} {unit_text}"


_LAYER_RANK = {"scenario": 0, "hardware": 1, "model": 2, "config": 2, "hf": 2, "--set": 3}


def _drop_stale_pins(library: Library, values: dict[str, ScenarioValue], layers: list[str]) -> None:
    """A pin set by an earlier layer yields to a later layer that sets one of its inputs: the lecture
    pins sparsity = 8, but ``--model llama3-70b`` gives params_total and params_active, and then the
    model's own sparsity must count.  The scenario's layers record each dropped pin."""
    def rank(v: ScenarioValue) -> int:
        return _LAYER_RANK.get(v.origin.split(" ", 1)[0], 0)

    for name in [n for n in values if library.is_derived(n)]:
        pin = values[name]
        inputs = library.base_inputs(library.quantities[name].sym)
        later = [i for i in inputs if i in values and rank(values[i]) > rank(pin)]
        if later:
            del values[name]
            layers.append(f"unpinned {name} (its input {later[0]} comes from {values[later[0]].origin})")
