"""A library's declarative ``config.json`` reader: fields in, formulas out, for the live page.

A library's Python config reader (``MODEL_CONFIG_READER``) is code, which a browser cannot run.  For the
plain architectures, whose quantities are closed-form in a few fields of the file, a library may declare the
same reading as data (a root's ``LIVE_CONFIG_FORMULAS``): for each accepted value of the file's type field,
the fields it reads (each with its bounds, aliases and default, exactly as its Python reader applies them)
and each quantity it gives as a sympy expression over symbols named after the fields.  The live page
(``derive.documents.live``) prints those expressions with sympy's JavaScript printer and reads a pasted
file with them; ``read_config`` here is the same reading in exact arithmetic, the reference the page's script
and the library's own reader are tested against.

The declaration (a mapping; the engine knows no field name of its own beyond ``TYPE_FIELD``)::

    {TYPE: {"fields": {NAME: FIELD, ...},      # read in this order; a default reads earlier fields only
            "values": {QUANTITY: EXPR, ...},    # SI units of the quantity; omitted when a field it reads is absent
            "native": [QUANTITY, ...],          # values that describe the model's own precision and context
            "arguments": {QUANTITY: EXPR},      # a quantity the scenario's user may give the reader (a --set),
                                                # else EXPR over the fields; values may read it by its name
            "checks": [(RELATION, WORDS), ...], # sympy relations over fields that must hold, else refused
            "absent": {NAME: [ALLOWED, ...]},   # a field outside this reading unless absent or one of these
            "names": {NAME: [TEXT, ...]}}}      # a field that, when given, must list only these names

    FIELD: {"min": int, "max": int, "aliases": [NAME, ...],  # a whole number (the default kind)
            "default": number or EXPR over earlier fields,   # else required ("optional": True: may be absent)
            "flag": True,                                    # true or false, read as 1 or 0
            "choices": {TEXT: number}, "strip": TEXT}        # a name read through a table (``strip``: a prefix)

Reading refuses, in one line naming the field, whatever the declaration does not cover: the page then says to
run the command line, whose Python reader reads many more architectures.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy as sp

from derive.errors import LibraryError, ScenarioError

TYPE_FIELD = "model_type"  # the field that names a file's type (a Hugging Face config's)
FIELD_KEYS = frozenset({"min", "max", "aliases", "default", "optional", "flag", "choices", "strip"})
TYPE_KEYS = frozenset({"fields", "values", "native", "checks", "absent", "names", "arguments"})
RELATIONS = {sp.Eq: "==", sp.Ne: "!=", sp.Le: "<=", sp.Lt: "<", sp.Ge: ">=", sp.Gt: ">"}


@dataclass(frozen=True)
class Field:
    name: str
    aliases: tuple[str, ...]
    kind: str  # "whole", "flag" or "choice"
    minimum: int
    maximum: int | None
    default: sp.Expr | None  # a number or an expression over earlier fields
    optional: bool
    choices: dict[str, sp.Rational]
    strip: str


@dataclass(frozen=True)
class TypeReading:
    """How one type of file is read."""

    name: str
    fields: tuple[Field, ...]
    values: dict[str, sp.Expr]
    native: frozenset[str]
    checks: tuple[tuple[str, sp.Expr, sp.Expr, str], ...]  # (op, lhs, rhs, words)
    absent: dict[str, tuple[Any, ...]]
    names: dict[str, frozenset[str]]
    arguments: dict[str, sp.Expr]  # quantity -> its value when the user gives none (over the fields)


@dataclass(frozen=True)
class ConfigReading:
    """``read_config``'s result: the type read, each quantity's exact value (SI units), the native ones."""

    model_type: str
    values: dict[str, sp.Rational]
    native: frozenset[str]


def _number(value: object) -> sp.Rational | None:
    if isinstance(value, bool) or not isinstance(value, (int, Fraction, sp.Rational)):
        return None
    return sp.Rational(value) if not isinstance(value, Fraction) else sp.Rational(value.numerator, value.denominator)


def validate(raw: object, where: str) -> dict[str, TypeReading]:
    """A root's ``LIVE_CONFIG_FORMULAS`` checked and normalised; a ``LibraryError`` names what is wrong."""
    label = "LIVE_CONFIG_FORMULAS"
    if not isinstance(raw, Mapping):
        raise LibraryError(f"{label} must be a mapping of file types to readings, got {type(raw).__name__}",
                           where=where)
    out: dict[str, TypeReading] = {}
    for tname, spec in raw.items():
        at = f"{label}[{tname!r}]"
        if not isinstance(tname, str) or not tname:
            raise LibraryError(f"{label}: a file type must be text", where=where)
        if not isinstance(spec, Mapping) or not set(spec) <= TYPE_KEYS or not isinstance(spec.get("fields"), Mapping) \
                or not isinstance(spec.get("values"), Mapping) or not spec["values"]:
            raise LibraryError(f"{at} must be a table with 'fields' and a non-empty 'values'", where=where,
                               hint="known keys: " + ", ".join(sorted(TYPE_KEYS)))
        fields: list[Field] = []
        for fname, fspec in spec["fields"].items():
            fields.append(_field(fname, fspec, [f.name for f in fields], f"{at} field {fname!r}", where))
        known = {f.name for f in fields}
        arguments = {}
        for qname, value in dict(spec.get("arguments", {})).items():
            if not isinstance(qname, str) or qname in known:
                raise LibraryError(f"{at}: an argument is a quantity's name, not a field's", where=where)
            arguments[qname] = value
        fields_only = set(known)

        def expr(value: object, what: str, known: set[str] = known | set(arguments)) -> sp.Expr:
            e = _number(value)
            if e is None:
                if not isinstance(value, sp.Expr):
                    raise LibraryError(f"{what} must be a number or a sympy expression, got {type(value).__name__}",
                                       where=where)
                e = value
            unknown = sorted(str(s) for s in e.free_symbols if str(s) not in known)
            if unknown:
                raise LibraryError(f"{what} uses '{unknown[0]}', which is no field of the reading", where=where,
                                   hint="declare it under 'fields'")
            return e

        arguments = {q: expr(v, f"{at} argument {q!r}", fields_only) for q, v in arguments.items()}
        values = {}
        for qname, value in spec["values"].items():
            if not isinstance(qname, str):
                raise LibraryError(f"{at}: a value's name must be text", where=where)
            values[qname] = expr(value, f"{at} value {qname!r}")
        native = spec.get("native", ())
        if isinstance(native, str) or not all(isinstance(n, str) and n in values for n in native):
            raise LibraryError(f"{at} 'native' must list names of its values", where=where)
        checks = []
        for i, item in enumerate(spec.get("checks", ())):
            ok = isinstance(item, (tuple, list)) and len(item) == 2 and type(item[0]) in RELATIONS \
                and isinstance(item[1], str)
            if not ok:
                raise LibraryError(f"{at} check {i} must be a (sympy relation, words) pair", where=where,
                                   hint="e.g. (sympy.Le(experts_active_field, experts_field), 'at most ...')")
            rel = item[0]
            checks.append((RELATIONS[type(rel)], expr(rel.lhs, f"{at} check {i}"), expr(rel.rhs, f"{at} check {i}"),
                           item[1]))
        absent = {}
        for fname, allowed in dict(spec.get("absent", {})).items():
            if not isinstance(fname, str) or isinstance(allowed, str) or not isinstance(allowed, (list, tuple)):
                raise LibraryError(f"{at} 'absent' maps field names to lists of allowed JSON values", where=where)
            absent[fname] = tuple(allowed)
        names = {}
        for fname, allowed in dict(spec.get("names", {})).items():
            if not isinstance(fname, str) or isinstance(allowed, str) \
                    or not all(isinstance(a, str) for a in allowed):
                raise LibraryError(f"{at} 'names' maps field names to lists of names", where=where)
            names[fname] = frozenset(allowed)
        out[tname] = TypeReading(tname, tuple(fields), values, frozenset(native), tuple(checks), absent, names,
                                 arguments)
    return out


def _field(name: object, spec: object, earlier: list[str], at: str, where: str) -> Field:
    if not isinstance(name, str) or not name:
        raise LibraryError(f"{at}: a field's name must be text", where=where)
    if not isinstance(spec, Mapping) or not set(spec) <= FIELD_KEYS:
        raise LibraryError(f"{at} must be a table", where=where, hint="known keys: " + ", ".join(sorted(FIELD_KEYS)))
    aliases = spec.get("aliases", ())
    if isinstance(aliases, str) or not all(isinstance(a, str) for a in aliases):
        raise LibraryError(f"{at} 'aliases' must list field names", where=where)
    kind = "flag" if spec.get("flag") else "choice" if "choices" in spec else "whole"
    lo, hi = spec.get("min", 1), spec.get("max")
    if isinstance(lo, bool) or not isinstance(lo, int) or (hi is not None and (isinstance(hi, bool)
                                                                               or not isinstance(hi, int))):
        raise LibraryError(f"{at} 'min' and 'max' must be whole numbers", where=where)
    choices: dict[str, sp.Rational] = {}
    if kind == "choice":
        raw = spec["choices"]
        if not isinstance(raw, Mapping) or not raw:
            raise LibraryError(f"{at} 'choices' must map names to numbers", where=where)
        for text, value in raw.items():
            number = _number(value)
            if not isinstance(text, str) or number is None or number <= 0:
                raise LibraryError(f"{at} choice {text!r} must map a name to a positive number, got {value!r}",
                                   where=where)
            choices[text] = number
    strip = spec.get("strip", "")
    if not isinstance(strip, str):
        raise LibraryError(f"{at} 'strip' must be text", where=where)
    default = None
    if "default" in spec:
        raw_default = spec["default"]
        default = _number(raw_default)
        if default is None:
            if not isinstance(raw_default, sp.Expr):
                raise LibraryError(f"{at} default must be a number or a sympy expression over earlier fields, got "
                                   f"{type(raw_default).__name__} {raw_default!r}", where=where)
            later = sorted(str(s) for s in raw_default.free_symbols if str(s) not in earlier)
            if later:
                raise LibraryError(f"{at} default uses '{later[0]}', which is no earlier field", where=where,
                                   hint="a default reads only the fields declared before it")
            default = raw_default
        if kind == "flag" and default not in (0, 1):
            raise LibraryError(f"{at} default of a flag must be 0 or 1", where=where)
    optional = spec.get("optional", False)
    if not isinstance(optional, bool) or (optional and default is not None):
        raise LibraryError(f"{at} 'optional' is true or false, and an optional field has no default", where=where)
    return Field(name, tuple(aliases), kind, lo, hi, default, optional, choices, strip)


def check_against(readings: Mapping[str, TypeReading], quantities: Mapping[str, object], where: str) -> None:
    """Every value a reading gives, and every argument it takes, is a quantity of the library."""
    for reading in readings.values():
        for qname in [*reading.values, *reading.arguments]:
            if qname not in quantities:
                raise LibraryError(f"LIVE_CONFIG_FORMULAS[{reading.name!r}] gives '{qname}', which is no quantity "
                                   "of the library", where=where)


# reading a file (the page's script does the same in floating point; see the module docstring) --------------

def _dumped(value: object) -> str:
    return json.dumps(value, sort_keys=True)


def read_config(readings: Mapping[str, TypeReading], config: object,
                arguments: Mapping[str, sp.Rational] | None = None) -> ConfigReading:
    """Read a parsed ``config.json`` with the declared formulas, exactly; ``ScenarioError`` (one line naming the
    field) for anything the declaration does not cover.  ``arguments``: values the user gave for a reading's
    arguments (``bytes_per_kv_element=1`` for an FP8 cache); the others take their declared defaults."""
    if not isinstance(config, Mapping):
        raise ScenarioError("a config.json must hold a JSON object")
    tname = config.get(TYPE_FIELD)
    if not isinstance(tname, str) or tname not in readings:
        raise ScenarioError(f"{TYPE_FIELD} {json.dumps(tname)} is not read here" if tname is not None
                            else f"missing field '{TYPE_FIELD}'")
    reading = readings[tname]
    for fname, allowed in reading.absent.items():
        value = config.get(fname)
        if _dumped(value) not in {_dumped(a) for a in allowed}:
            raise ScenarioError(f"field '{fname}' = {_dumped(value)} is outside this reading")
    for fname, allowed_names in reading.names.items():
        value = config.get(fname)
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ScenarioError(f"field '{fname}' must be a list of names")
        odd = [v for v in value if v not in allowed_names]
        if odd:
            raise ScenarioError(f"field '{fname}' names {odd[0]!r}, which this reading does not know")
    env: dict[sp.Symbol, sp.Rational] = {}
    for f in reading.fields:
        value = _field_value(f, config, env)
        if value is not None:
            env[sp.Symbol(f.name)] = value
    for qname, default in reading.arguments.items():
        given_value = (arguments or {}).get(qname)
        if given_value is not None:
            env[sp.Symbol(qname)] = sp.Rational(given_value)
        elif default.free_symbols <= set(env):
            env[sp.Symbol(qname)] = sp.Rational(sp.sympify(default).subs(env))
    for op, lhs, rhs, words in reading.checks:
        if (lhs.free_symbols | rhs.free_symbols) <= set(env):
            a, b = sp.Rational(lhs.subs(env)), sp.Rational(rhs.subs(env))
            if not {"==": a == b, "!=": a != b, "<=": a <= b, "<": a < b, ">=": a >= b, ">": a > b}[op]:
                raise ScenarioError(words)
    values = {}
    for qname, e in reading.values.items():
        if e.free_symbols <= set(env):
            values[qname] = sp.Rational(sp.sympify(e).subs(env))
    given_names = {q for q in reading.arguments if (arguments or {}).get(q) is not None}
    # a value the user gave through an argument is the user's, not the model's own (native) one
    return ConfigReading(tname, values, frozenset(n for n in reading.native if n in values and n not in given_names))


def _field_value(f: Field, config: Mapping, env: Mapping[sp.Symbol, sp.Rational]) -> sp.Rational | None:
    for name in (f.name, *f.aliases):
        value = config.get(name)
        if value is not None:
            return _given(f, name, value)
    if f.default is not None:
        value = sp.Rational(sp.sympify(f.default).subs(env))
        if f.kind == "whole" and (not value.is_integer or value < f.minimum
                                  or (f.maximum is not None and value > f.maximum)):
            raise ScenarioError(f"field '{f.name}' is absent and its default is not a whole number "
                                f"from {f.minimum}" + (f" to {f.maximum:,}" if f.maximum is not None else ""))
        return value
    if f.optional:
        return None
    raise ScenarioError(f"missing field '{f.name}'")


def _given(f: Field, name: str, value: object) -> sp.Rational:
    if f.kind == "flag":
        if not isinstance(value, bool):
            raise ScenarioError(f"field '{name}' must be true or false")
        return sp.Integer(int(value))
    if f.kind == "choice":
        text = value.removeprefix(f.strip) if isinstance(value, str) and f.strip else value
        if not isinstance(text, str) or text not in f.choices:
            raise ScenarioError(f"field '{name}' must be one of {', '.join(sorted(f.choices))}")
        return f.choices[text]
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or (isinstance(value, float) and not math.isfinite(value)) or value != int(value):
        raise ScenarioError(f"field '{name}' must be a whole number")
    whole = int(value)
    if whole < f.minimum or (f.maximum is not None and whole > f.maximum):
        raise ScenarioError(f"field '{name}' must be a whole number from {f.minimum}"
                            + (f" to {f.maximum:,}" if f.maximum is not None else ""))
    return sp.Integer(whole)


def refusal(readings: Mapping[str, TypeReading], what: str) -> str:
    """The one line the page shows for a file it does not read (the same words as its script)."""
    return (f"{what}: this page reads {', '.join(sorted(readings))}; for other models run "
            "`derive card --model config.json`")
