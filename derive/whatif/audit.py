"""The audit: rows of measured or predicted numbers held against the bounds a library proves.

A library declares, in ``AUDIT_BOUNDS``, the metric columns a table may have and the claim each is held to::

    {"metric": "tpot", "unit": "s", "meaning": "time per output token of one sequence",
     "claim": "gap.roofline_floor_below_measured",   # a relation `measured OP bound` the engine must prove
     "measured": "tpot",                            # the claim's measured quantity, as an expression in the
                                                    # metric (by its name) and the library's quantities
     "reading": "why the metric gives that quantity (one sentence)",
     "terms": {"compute": "compute_time"},          # parts of the bound reported for a consistent row
     "row_inputs": ["batch", "chips"],              # never taken from a preset: the row states them ...
     "defaults": {"batch": "1 seq"},                # ... or the bound uses these (values giving its weakest form)
     "note": "words said once after a table where a row was held to this bound",
     "notes_when_missing": {"batch": "words said once where a row held to it leaves this column empty"}}
    {"metric": "ttft", "unit": "s", "unchecked": "why no bound exists"}

A default of an input that is not a row input applies where neither the row nor its presets give one (a
quantity most models leave at its weakest value, such as a table they do not have).

The measured expression must be the metric times, or over, an expression free of it; so each declaration is
a bound on the metric itself (a floor or a ceiling), solved once.

Prove once, evaluate many: each claim is checked once with no scenario values (for every value its
assumptions allow); a claim that is not ``proved`` leaves its metric ``unchecked``.  Rows stream in chunks;
each chunk's bounds are evaluated with numpy (``sympy.lambdify``), and every row whose verdict could turn on
rounding (within ``EXACT_MARGIN`` of the bound) and every impossible row is evaluated again in exact rational
arithmetic, which decides.  A row's presets (model, hardware and the quantities that act through them, such as
``bytes_per_kv_element``) give a base scenario, built once per distinct combination; values of the
lecture's story scenario are never used.

Row verdicts: ``impossible`` (a number beats a proved bound: the bound, its value, the ratio and the smallest
change of one input that makes the row possible), ``consistent`` (the slack over the tightest bound, and the
share of each declared term), ``unchecked`` (the reason).  Malformed input (an unknown or missing column, a
unit of the wrong dimension, a line that is not a row) is an ``AuditInputError`` naming line and column.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import IO

import numpy as np
import sympy as sp

from derive.errors import DeriveError, LibraryError, ParseError, UnitError, escape_control
from derive.model.declarations import Claim
from derive.model.library import Library
from derive.model.units import Dimension, parse_unit

MAX_AUDIT_BYTES = 2 * 2**30  # a file larger than this is refused before it is read (10 M rows fit)
CHUNK_ROWS = 20_000  # rows evaluated together (memory stays bounded whatever the file's length)
CACHE_ENTRIES = 100_000  # cells read once per distinct text: each cache is emptied when it holds more than this
EXACT_MARGIN = 1e-9  # a float slack this close to 1 is decided again in exact arithmetic
META_COLUMNS = ("model", "hardware")  # required; a cell may be empty (then the row's own columns give values)
FREE_COLUMNS = ("id", "source", "note", "date", "scope", "software", "version", "level")  # carried, never read
TEXT_COLUMNS = frozenset(META_COLUMNS + FREE_COLUMNS)  # names and words: never read as numbers
SCOPE_COLUMNS = ("software", "version", "level")  # with the hardware column: where a row's number holds
SEARCH_DECADES = 6  # the smallest change searches each input over [1e-6, 1e6] times its value


class AuditInputError(DeriveError):
    """A table ``derive audit`` cannot read (exit 2): names the line and the column (``column``: the name of a
    column no loaded library reads, for a hint that names a library that does)."""

    column: str | None = None


# The declared bounds, compiled ----------------------------------------------------------------------------------

@dataclass
class Bound:
    """One declared bound, solved for its metric: ``metric OP value`` with OP ``>=`` (a floor) or ``<=``."""

    metric: str
    claim: str
    op: str
    expr: sp.Expr  # the bound on the metric, in base quantities (definitions expanded)
    inputs: tuple[str, ...]  # the base quantities it needs, in name order
    measured_name: str  # the claim's measured quantity
    measured_expr: sp.Expr  # it, from the metric (symbol ``metric_sym``) and base quantities
    metric_sym: sp.Symbol
    reading: str
    rests_on: tuple[str, ...]
    verdict: str  # of the claim, checked once
    reason: str | None
    terms: dict[str, sp.Expr] = field(default_factory=dict)  # expanded, in the measured quantity's unit
    row_inputs: frozenset[str] = frozenset()
    defaults: dict[str, sp.Rational] = field(default_factory=dict)
    measured_unit: str = "1"
    func: object = None  # numpy function of ``inputs``
    exact_func: object = None  # the same in exact rational arithmetic (Fractions in, a Fraction out)
    measured_func: object = None  # numpy: the measured quantity from (metric, *inputs)
    term_funcs: dict[str, object] = field(default_factory=dict)  # numpy, of ``inputs``
    # a row is held to the bound only when it gives every column of ``when_given`` and none of ``unless_given``
    # (its reading: a row that gives its tokens per verification step is no plain decode step)
    when_given: frozenset[str] = frozenset()
    unless_given: frozenset[str] = frozenset()
    note: str = ""  # the library's words, said once after a table where a row was held to this bound
    # a column's words, said once after a table where a row held to this bound left that column empty (its value
    # then came from a preset, or a default: what the verdict rests on that the row did not state)
    notes_when_missing: dict[str, str] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return "floor" if self.op == ">=" else "ceiling"

    @property
    def usable(self) -> bool:
        return self.verdict == "proved"


@dataclass
class Metric:
    name: str
    unit: str
    dimension: Dimension
    meaning: str
    bounds: list[Bound]
    unchecked: str | None  # why no bound exists (when ``bounds`` is empty)


@dataclass
class AuditPlan:
    """What an audit holds each metric column to; built once per library (each claim checked once)."""

    library: Library
    metrics: dict[str, Metric]
    claim_results: dict[str, object]

    @property
    def inputs(self) -> set[str]:
        return {n for m in self.metrics.values() for b in m.bounds for n in b.inputs}


def _dimension(library: Library, unit: str, where: str) -> Dimension:
    try:
        return parse_unit(unit).dimension
    except DeriveError as err:
        raise LibraryError(f"unit '{unit}' cannot be read: {err.message}", where=where) from None


def _bound_on_metric(measured: sp.Expr, m: sp.Symbol, op: str, rhs: sp.Expr, where: str) -> tuple[str, sp.Expr]:
    """``measured(m) OP rhs`` as ``m OP' value``: the measured expression is ``c*m`` or ``c/m`` with ``c`` free of m."""
    if m not in measured.free_symbols:
        raise LibraryError("the measured expression does not use the metric", where=where)
    factor = sp.simplify(measured / m)
    if m not in factor.free_symbols:
        return op, rhs / factor
    factor = sp.simplify(measured * m)
    if m not in factor.free_symbols:
        return {">=": "<=", ">": "<", "<=": ">=", "<": ">"}[op], factor / rhs
    raise LibraryError("the measured expression must be the metric times, or over, an expression free of it",
                       where=where, hint='like "tpot" or "batch * tokens_per_step / tokens_per_s"')


def _exact_function(syms: list[sp.Symbol], expr: sp.Expr) -> callable:
    """A Python function over Fractions: exact rationals stay exact (``Fraction(1, 2)``, never 0.5) and ``Max``/
    ``Min`` are Python's ``max``/``min``; the exact twin of the numpy function, thousands of times faster than
    substituting into the sympy expression."""
    from sympy.printing.pycode import PythonCodePrinter

    class Printer(PythonCodePrinter):
        def _print_Rational(self, e: sp.Rational) -> str:
            return f"Fraction({e.p}, {e.q})"

        def _print_Integer(self, e: sp.Integer) -> str:
            return f"Fraction({e.p})"

        def _print_Max(self, e: sp.Expr) -> str:
            return "max(" + ", ".join(self._print(a) for a in e.args) + ")"

        def _print_Min(self, e: sp.Expr) -> str:
            return "min(" + ", ".join(self._print(a) for a in e.args) + ")"

        def _print_Pow(self, e: sp.Pow, rational: bool = False) -> str:
            base, exp = e.args
            if exp.is_Integer:
                return f"({self._print(base)})**({int(exp)})"
            raise LibraryError(f"an audit bound must be rational in its inputs, not '{e}'")

    for bad in (sp.Float, sp.Function):
        if any(isinstance(a, bad) and not isinstance(a, (sp.Max, sp.Min)) for a in sp.preorder_traversal(expr)):
            raise LibraryError(f"an audit bound must be rational in its inputs (max and min allowed), not '{expr}'")
    return sp.lambdify(syms, expr, modules=[{"Fraction": Fraction, "max": max, "min": min}],
                       printer=Printer({"fully_qualified_modules": False, "inline": True,
                                        "allow_unknown_functions": False}))


def plan_audit(library: Library, check: callable) -> AuditPlan:
    """Compile the library's ``AUDIT_BOUNDS``.  ``check(ids) -> {id: ClaimResult}`` checks the claims once
    (under no scenario values); a claim that is not ``proved`` leaves its bound unusable, with the reason."""
    from derive.model.dimensions import dimension_of
    from derive.model.parse import parse_expression, parse_value
    from derive.whatif.ledger import check_relation

    metrics: dict[str, Metric] = {}
    unchecked: dict[str, str] = {}
    pending: list[tuple[dict, str]] = []
    for i, raw in enumerate(library.audit_bounds):
        where = f"AUDIT_BOUNDS[{i}] ({raw['metric']})"
        name, unit = str(raw["metric"]), str(raw["unit"])
        if not name.isidentifier():
            raise LibraryError(f"metric '{name}' is not a column name", where=where, hint="snake_case")
        dim = _dimension(library, unit, where)
        known = metrics.get(name)
        if known is not None and known.dimension != dim:
            raise LibraryError(f"metric '{name}' is declared in two units ({known.unit}, {unit})", where=where)
        if known is None:
            metrics[name] = Metric(name, unit, dim, str(raw.get("meaning", "")), [], None)
        if "unchecked" in raw:
            unchecked.setdefault(name, str(raw["unchecked"]))
        else:
            pending.append((raw, where))
    ids = sorted({str(raw["claim"]) for raw, _ in pending})
    for cid in ids:
        if cid not in library.declarations or not isinstance(library.declarations[cid], Claim):
            raise LibraryError(f"AUDIT_BOUNDS names '{cid}', which is not a claim of the library")
    results = check(ids) if ids else {}
    names = library.symbols()
    for raw, where in pending:
        metric = metrics[str(raw["metric"])]
        cid = str(raw["claim"])
        measured_name, op, rhs = check_relation(library, cid, where)
        if op not in (">=", "<="):
            raise LibraryError(f"'{cid}' is a relation '{op}'; an audit bound is a '>=' or '<=' claim", where=where)
        m = sp.Symbol(f"{metric.name}__metric", positive=True)
        measured = parse_expression(str(raw["measured"]), {**names, metric.name: m}, where=f"{where} measured")
        lookup = lambda s, _m=m, _d=metric.dimension: _d if s == _m else library.dimension(s)  # noqa: E731
        got = dimension_of(measured, lookup, where=f"{where} measured")
        want = library.quantity(measured_name).dimension
        if got != want:
            raise LibraryError(f"the measured expression has the wrong dimension for {measured_name}", where=where)
        constants = {q.sym: q.value for q in library.quantities.values() if q.value is not None}
        measured = measured.xreplace(constants)
        derived = sorted(str(x) for x in measured.free_symbols - {m} if library.is_derived(str(x)))
        if derived:
            raise LibraryError(f"the measured expression uses the derived quantity '{derived[0]}'", where=where,
                               hint="write it in base quantities")
        metric_op, value = _bound_on_metric(measured, m, op, rhs, where)
        expr = library.expand(value)
        if m in expr.free_symbols:
            raise LibraryError("the bound on the metric depends on the metric", where=where)
        inputs = tuple(sorted(str(s) for s in expr.free_symbols | (measured.free_symbols - {m})))
        terms = {}
        for label, text in dict(raw.get("terms", {})).items():
            t = parse_expression(text, names, where=f"{where} terms.{label}")
            if dimension_of(t, library.dimension, where=f"{where} terms.{label}") != want:
                raise LibraryError(f"term '{label}' is not in the unit of {measured_name}", where=where)
            terms[label] = library.expand(t)
        row_inputs = frozenset(str(x) for x in raw.get("row_inputs", ()))
        defaults = {}
        for qname, text in dict(raw.get("defaults", {})).items():
            q = library.quantity(qname)
            v = parse_value(text, q.dimension, where=f"{where} defaults.{qname}")
            defaults[qname] = Fraction(int(v.p), int(v.q))
        when_given = frozenset(str(x) for x in raw.get("when_given", ()))
        unless_given = frozenset(str(x) for x in raw.get("unless_given", ()))
        notes_when_missing = {str(k): str(v) for k, v in dict(raw.get("notes_when_missing", {})).items()}
        for qname in sorted(row_inputs | set(defaults) | when_given | set(notes_when_missing)):
            library.quantity(qname)  # an unknown name is an error here, with suggestions
        # ``unless_given`` may name a column another library declares (no row of this library can give it)
        result = results.get(cid)
        verdict = getattr(result, "verdict", "unknown")
        reason = None if verdict == "proved" else f"bound not proved: {cid} is {verdict}" + (
            f" ({result.reason})" if getattr(result, "reason", None) else "")
        syms = [library.quantity(n).sym for n in inputs]
        func = sp.lambdify(syms, expr, modules="numpy")
        exact_func = _exact_function(syms, expr)
        measured_func = sp.lambdify([m, *syms], measured, modules="numpy")
        term_funcs = {label: sp.lambdify(syms, t, modules="numpy") for label, t in terms.items()}
        metric.bounds.append(Bound(
            metric=metric.name, claim=cid, op=metric_op, expr=expr, inputs=inputs, measured_name=measured_name,
            measured_expr=measured, metric_sym=m, reading=str(raw.get("reading", "")),
            rests_on=tuple(library.rests_on(library.declarations[cid])), verdict=verdict, reason=reason,
            terms=terms, row_inputs=row_inputs, defaults=defaults, when_given=when_given, unless_given=unless_given,
            measured_unit=str(library.quantity(measured_name).unit), func=func, exact_func=exact_func,
            measured_func=measured_func, term_funcs=term_funcs, note=str(raw.get("note", "")),
            notes_when_missing=notes_when_missing))
    for name, metric in metrics.items():
        if not metric.bounds:
            metric.unchecked = unchecked.get(name, "no bound declared")
    return AuditPlan(library, metrics, results)


def checker_for(library: Library, cache: object = None) -> callable:
    """The one check of the bounds' claims: under no scenario values, so a ``proved`` holds at every row."""
    from derive.checking.checker import Checker
    from derive.model.scenario import Scenario

    def check(ids: list[str]) -> dict[str, object]:
        report = Checker(library, Scenario("audit (no values)", {}), cache=cache).check(ids)
        return report.by_id()

    return check


# Reading rows ------------------------------------------------------------------------------------------------------

@dataclass
class RawRow:
    line: int
    cells: dict[str, str]


class Header(list):
    """A table's column names, in order, and the line that first names each (a CSV's header line, 1; a JSON-lines
    table's first line with that key), for errors about a column."""

    def __init__(self, names: Iterable[str], lines: Mapping[str, int] | None = None) -> None:
        super().__init__(names)
        self.lines = dict(lines or {})

    def line_of(self, name: str) -> int:
        return self.lines.get(name, 1)


def _open(path: str, stdin: IO[str] | None) -> tuple[IO[str], str]:
    if path == "-":
        import sys

        return (stdin or sys.stdin), "<stdin>"
    p = Path(path)
    if not p.exists():
        raise AuditInputError(f"file not found: {path}", where=path)
    if not p.is_file():  # a folder or a device: no table to read
        raise AuditInputError(f"not a regular file: {path}", where=path,
                              hint="give a .csv or .jsonl file, or - for standard input")
    size = p.stat().st_size
    if size > MAX_AUDIT_BYTES:
        raise AuditInputError(f"{path} is {size:,} bytes, over the {MAX_AUDIT_BYTES:,}-byte limit", where=path,
                              hint="split the table into smaller files")
    return open(p, encoding="utf-8", newline=""), path  # noqa: SIM115 - closed by read_rows


def _format_of(path: str, first: str, fmt: str | None) -> str:
    if fmt:
        return fmt
    if path.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    if path.endswith((".csv", ".tsv")):
        return "csv"
    return "jsonl" if first.lstrip().startswith("{") else "csv"


# a spreadsheet's "Unicode text" export is UTF-16; its "CSV UTF-8" is what the audit reads
NOT_UTF8_HINT = "save the table as UTF-8 (a spreadsheet's \"CSV UTF-8\"; its \"Unicode text\" is UTF-16)"


def _delimiter(path: str, header: str) -> str:
    """A comma, or the tab of a ``.tsv`` file or of a header with tabs and no comma, or the semicolon of a header
    with semicolons and no comma (a spreadsheet's export where the comma is the decimal mark)."""
    if path.endswith(".tsv") or ("," not in header and "\t" in header):
        return "\t"
    return ";" if "," not in header and ";" in header else ","


def _cell(value: object, line: int, column: str, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise AuditInputError(f"line {line}, column '{column}': a value must be text or a number, "
                              f"got {type(value).__name__}", where=where)
    return value if isinstance(value, str) else repr(value)


_LOCALE_NUMBER = re.compile(r"([-+]?)(\d[\d.,]*)(.*)", re.S)


def _decimal_comma(cell: str, line: int, where: str) -> str:
    """A cell of a semicolon table (a spreadsheet's export where the comma is the decimal mark) with its number in
    derive's form: ``30,5 ms`` is 30.5 ms and ``1.500,5`` is 1500.5 (points group thousands); ``1.5`` has no other
    reading; ``1.500`` could be 1.5 or 1,500, so it is refused.  A cell that starts with no digit is as written."""
    match = _LOCALE_NUMBER.fullmatch(cell)
    if match is None:
        return cell
    sign, number, rest = match.groups()
    grouped = re.fullmatch(r"\d{1,3}(\.\d{3})+", number.split(",", 1)[0]) is not None
    if "," in number:
        whole, _, fraction = number.partition(",")
        if "," in fraction or "." in fraction or ("." in whole and not grouped):
            raise AuditInputError(f"line {line}: cannot read '{escape_control(cell, limit=60)}' as a number with a "
                                  "decimal comma", where=where,
                                  hint="in a semicolon table write 1500,5 or 1.500,5 (a point groups thousands)")
        return f"{sign}{whole.replace('.', '')}.{fraction}{rest}"
    if grouped:
        raise AuditInputError(f"line {line}: '{escape_control(cell, limit=60)}' in a semicolon table could be "
                              f"{number.replace('.', '')} (a point grouping thousands) or {float(number):g} (a "
                              "decimal point)", where=where,
                              hint="write a decimal with a comma (1,5) and a number without thousands points (1500)")
    return cell


MAX_HEADER_CHARS = 1 << 20  # a header (or a JSON-lines table's first row) this long is no table


def read_rows(path: str, *, fmt: str | None = None, stdin: IO[str] | None = None) -> tuple[list[str], Iterator[RawRow]]:
    """The header and a stream of rows of a CSV or JSON-lines table (``-``: standard input).  Malformed lines
    are ``AuditInputError`` when the stream reaches them (the caller writes nothing until the end)."""
    stream, where = _open(path, stdin)

    def head_line() -> str:  # bounded: /dev/zero on standard input has no line end
        try:
            line = stream.readline(MAX_HEADER_CHARS + 1)
        except UnicodeDecodeError:
            stream.close()
            raise AuditInputError("the file is not UTF-8 text", where=where, hint=NOT_UTF8_HINT) from None
        if len(line) > MAX_HEADER_CHARS:
            stream.close()
            raise AuditInputError(f"the header line is longer than {MAX_HEADER_CHARS:,} characters", where=where,
                                  hint="give a header line of column names and one row per line")
        return line

    first = head_line().removeprefix("\ufeff")  # the byte-order mark a spreadsheet writes before UTF-8 text
    while first and not first.strip():
        first = head_line()
    if not first:
        if path != "-":
            stream.close()
        raise AuditInputError("the table is empty", where=where, hint="give a header line and one row per line")
    kind = _format_of(path, first, fmt)
    if kind == "csv":
        delimiter = _delimiter(path, first)
        header = next(csv.reader([first], delimiter=delimiter))
        header = [h.strip() for h in header]
        if len(set(header)) != len(header):
            dup = next(h for h in header if header.count(h) > 1)
            raise AuditInputError(f"line 1: column '{dup}' appears twice", where=where)

        def rows() -> Iterator[RawRow]:
            try:
                reader = csv.reader(stream, delimiter=delimiter)
                for values in reader:
                    line = reader.line_num + 1
                    if not values or all(not v.strip() for v in values):
                        continue
                    if len(values) != len(header):
                        sep = {",": "", "\t": "tabs", ";": "semicolons"}[delimiter]
                        raise AuditInputError(f"line {line}: {len(values)} cells for {len(header)} columns",
                                              where=where, hint=f"the header separates its columns by {sep}: every "
                                                                "line must" if sep else
                                              "quote a value that contains a comma (or close an open quote)")
                    cells = dict(zip(header, (v.strip() for v in values), strict=True))
                    if delimiter == ";":  # a spreadsheet's export where the comma is the decimal mark: its numbers
                        cells = {h: v if h in TEXT_COLUMNS else _decimal_comma(v, line, where)
                                 for h, v in cells.items()}
                    yield RawRow(line, cells)
            except csv.Error as err:
                raise AuditInputError(f"line {reader.line_num + 1}: not CSV ({err})", where=where) from None
            except UnicodeDecodeError:
                raise AuditInputError("the file is not UTF-8 text", where=where, hint=NOT_UTF8_HINT) from None
            finally:
                if path != "-":
                    stream.close()

        return header, rows()

    from derive.model.scenario import DuplicateKeyError, unique_keys

    def parse(text: str, line: int) -> dict[str, str]:
        try:
            obj = json.loads(text, object_pairs_hook=unique_keys)
        except DuplicateKeyError as err:  # json keeps the last of two values silently; a CSV refuses a column twice
            raise AuditInputError(f"line {line}: key '{err.key}' appears twice", where=where,
                                  hint="give each column once per row") from None
        except (ValueError, RecursionError) as err:  # ValueError: a number past Python's 4,300 digits too
            why = "" if isinstance(err, json.JSONDecodeError) else f" ({escape_control(err, limit=120)})"
            raise AuditInputError(f"line {line}: not a JSON object{why}", where=where) from None
        if not isinstance(obj, dict):
            raise AuditInputError(f"line {line}: not a JSON object", where=where)
        return {str(k): _cell(v, line, str(k), where) for k, v in obj.items()}

    # every line is read first: a JSON line names its own columns, and the table's are those of every line (a
    # bytes_per_param only the second line gives was dropped, the row held to the model's own datatype)
    rows = [RawRow(1, parse(first, 1))]
    try:
        for n, text in enumerate(stream, start=2):
            if text.strip():
                rows.append(RawRow(n, parse(text, n)))
    except UnicodeDecodeError:
        raise AuditInputError("the file is not UTF-8 text", where=where, hint=NOT_UTF8_HINT) from None
    finally:
        if path != "-":
            stream.close()
    lines: dict[str, int] = {}
    for row in rows:
        for key in row.cells:
            lines.setdefault(key, row.line)
    return Header(lines, lines), iter(rows)


# Evaluating rows ---------------------------------------------------------------------------------------------------

@dataclass
class BoundResult:
    """One bound at one row."""

    claim: str
    kind: str  # floor | ceiling
    status: str  # impossible | consistent | unchecked
    bound: sp.Rational | float | None = None  # in the metric's SI unit
    ratio: float | None = None  # metric / bound
    reason: str | None = None
    terms: dict[str, dict[str, float]] = field(default_factory=dict)
    changes: list[dict[str, object]] = field(default_factory=list)  # single-input changes that make it possible
    exact: bool = False  # decided in exact arithmetic

    @property
    def signed_error(self) -> float | None:
        """The number over the bound, minus 1: above (+) or below (-) it; a floor is beaten below, a ceiling above."""
        return None if self.ratio is None else self.ratio - 1

    @property
    def slack(self) -> float | None:
        """How far the number is from the bound, >= 1 when it respects it: ratio for a floor, 1/ratio for a ceiling."""
        if self.ratio is None:
            return None
        if self.kind == "floor":
            return self.ratio
        return math.inf if self.ratio == 0 else 1 / self.ratio


@dataclass
class AuditRow:
    line: int
    cells: dict[str, str]
    verdict: str  # impossible | consistent | unchecked
    metrics: dict[str, list[BoundResult]]
    reason: str | None = None  # of an unchecked row
    notes: list[str] = field(default_factory=list)

    @property
    def tightest(self) -> tuple[str, BoundResult] | None:
        found = [(m, b) for m, bs in self.metrics.items() for b in bs if b.slack is not None]
        return min(found, key=lambda mb: mb[1].slack) if found else None


class _Groups:
    """Base scenario values per (model, hardware, preset-side settings), built once each."""

    def __init__(self, library: Library, keep: set[str]) -> None:
        self.library = library
        self.keep = keep
        self.cache: dict[tuple, tuple[dict[str, sp.Rational], str | None, list[str]]] = {}

    def values(self, model: str, hardware: str, sets: tuple[str, ...]) -> tuple[dict[str, sp.Rational], str | None,
                                                                                  list[str]]:
        key = (model, hardware, sets)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        from derive.model.scenario import build_scenario

        try:
            sc = build_scenario(self.library, hardware=hardware or None, model=model or None, sets=sets, si=True)
        except DeriveError as err:
            if err.where in ("--model", "--hardware"):  # the row's cell, not an option of the command line
                err.where = f"the row's {err.where[2:]} cell"
                if err.where.endswith("hardware cell"):  # an audit has no --scenario: a row gives a chip's columns
                    err.hint = ("a hardware preset's name (derive presets), or leave it out and give the chip's "
                                "flops, hbm_bandwidth and hbm_capacity columns")
            out: tuple = ({}, err.one_line(), [])
        else:
            vals = {n: _frac(v.value) for n, v in sc.values.items()
                    if n in self.keep and not v.origin.startswith("scenario ")}
            origin = {n: v.origin for n, v in sc.values.items() if n in vals}
            out = (vals, None, [f"{n} from {origin[n]}" for n in sorted(vals)])
        if len(self.cache) > 10_000:
            self.cache.clear()
        self.cache[key] = out
        return out


_PER_TOKEN = __import__("re").compile(r"\s*/\s*token\s*$")
# ASCII digits, as --set reads them (\d took full-width and Arabic-Indic digits)
_PLAIN = __import__("re").compile(r"([+-]?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)(?: +(\S.*))?")


def _read_value(text: str, dim: Dimension, cache: dict) -> Fraction:
    """A cell as an exact SI value (a bare number is SI), by ``derive.model.parse.parse_value``'s rules.  A plain
    decimal with an optional unit after a space is read as the decimal times the unit's scale, the unit parsed
    once per distinct text; anything else goes through ``parse_value`` itself."""
    match = _PLAIN.fullmatch(text)
    if match is not None:
        number, unit = match.groups()
        scale = _scale(unit, dim, cache) if unit else Fraction(1)
        return Fraction(number) * scale
    return _scale_of(text, dim, cache)


def _scale(unit: str, dim: Dimension, cache: dict) -> Fraction:
    return _scale_of("1 " + unit, dim, cache)


def _scale_of(text: str, dim: Dimension, cache: dict) -> Fraction:
    key = (text, dim)
    hit = cache.get(key)
    if hit is None:
        from derive.model.parse import parse_value

        try:
            v = parse_value(text, dim, si=True)
            hit = Fraction(int(v.p), int(v.q))
        except UnitError as err:
            hit = err
        except DeriveError as err:
            hit = ParseError(err.message)
        if len(cache) > CACHE_ENTRIES:
            cache.clear()
        cache[key] = hit
    if isinstance(hit, Exception):
        raise hit
    return hit


def _frac(x: sp.Rational | Fraction) -> Fraction:
    return x if isinstance(x, Fraction) else Fraction(int(x.p), int(x.q))


def _line_of(header: list[str], name: str) -> int:
    return header.line_of(name) if isinstance(header, Header) else 1


class Auditor:
    """Audits rows against a plan; ``audit(rows)`` yields one ``AuditRow`` per input row, in order."""

    def __init__(self, plan: AuditPlan, header: list[str], where: str = "", exact: bool = False,
                 folder: Path | None = None) -> None:
        """``folder``: the table's folder, which a relative config.json path in a ``model`` cell is read from
        (``derive.model.scenario.model_path_from``, as in a scenario file); None (standard input): the
        working folder."""
        self.plan = plan
        self.library = plan.library
        self.where = where
        self.exact = exact
        self.folder = folder
        self.model_paths: dict[str, tuple[str, bool]] = {}  # a model cell's path and whether it names no file, once
        lib = self.library
        self.metric_cols = [h for h in header if h in plan.metrics]
        self.quantity_cols: list[str] = []
        for col in header:
            if col in plan.metrics or col in META_COLUMNS or col in FREE_COLUMNS:
                continue
            if col not in lib.quantities:
                from derive.errors import UnknownNameError

                hint = UnknownNameError("column", col, [*lib.quantities, *plan.metrics, *META_COLUMNS,
                                                        *FREE_COLUMNS]).hint
                err = AuditInputError(f"line {_line_of(header, col)}: unknown column '{col}'", where=where, hint=hint)
                err.column = col
                raise err
            q = lib.quantities[col]
            if q.value is not None or lib.is_derived(col):
                raise AuditInputError(f"line {_line_of(header, col)}: column '{col}' is "
                                      f"{'a constant' if q.value is not None else 'derived'}"
                                      ", not an input", where=where, hint=f"give the inputs of {col} instead")
            self.quantity_cols.append(col)
        missing = [c for c in META_COLUMNS if c not in header]
        if missing:
            raise AuditInputError(f"line 1: missing required column '{missing[0]}'", where=where,
                                  hint="give model and hardware columns (a cell may be empty)")
        if not self.metric_cols:
            raise AuditInputError("line 1: no metric column", where=where,
                                  hint="metric columns: " + ", ".join(sorted(plan.metrics)))
        inputs = plan.inputs
        self.row_cols = [c for c in self.quantity_cols if c in inputs]  # evaluated per row
        # a column an input rule's remedy reads (the weights' bytes, which choose a chip's rate) acts through the
        # presets too: the row's scenario is built with it, so the remedy sees the row's value
        from derive.model.scenario import remedy_reads

        remedied = set().union(*(remedy_reads(lib, c) for c in lib.input_constraints))
        self.preset_cols = [c for c in self.quantity_cols if c not in inputs or c in remedied]
        self.groups = _Groups(lib, inputs)
        self.read_cols = list(dict.fromkeys(self.row_cols + self.preset_cols + self.metric_cols))
        self.group_ids: dict[tuple, int] = {}
        self.group_list: list[tuple[dict[str, Fraction], str | None, dict[str, float]]] = []
        self.parsed: dict = {}
        self.floats: dict[tuple[str, Dimension], float] = {}
        self.notes: list[str] = []  # the notes of the bounds a row was held to (``Bound.note``), in order

    # one row's values --------------------------------------------------------------------------------------
    def _float(self, text: str, dim: Dimension) -> float:
        """A cell in SI as a float (the vectorised pass); its exact value is read again when a verdict needs it."""
        key = (text, dim)
        hit = self.floats.get(key)
        if hit is not None:
            return hit
        value = self._read_float(text, dim)
        if len(self.floats) > CACHE_ENTRIES:
            self.floats.clear()
        self.floats[key] = value
        return value

    def _read_float(self, text: str, dim: Dimension) -> float:
        match = _PLAIN.fullmatch(text)
        if match is not None:
            number, unit = match.groups()
            return float(number) * (float(_scale(unit, dim, self.parsed)) if unit else 1.0)
        return float(_scale_of(text, dim, self.parsed))

    def prepare(self, raw: RawRow) -> tuple[dict[str, float], int, list[str]]:
        """The row's readable values (floats, SI), its preset group and its unreadable cells."""
        lib = self.library
        bad: list[str] = []
        row: dict[str, float] = {}
        for col in self.read_cols:
            text = raw.cells.get(col, "")
            if not text:
                continue
            if col == "tpot" and _PER_TOKEN.search(text):  # "30 ms/token": a time per output token is a tpot
                text = raw.cells[col] = _PER_TOKEN.sub("", text)
            metric = self.plan.metrics.get(col)
            dim = metric.dimension if metric is not None else lib.quantities[col].dimension
            try:
                v = self._float(text, dim)
            except UnitError as err:
                raise AuditInputError(f"line {raw.line}, column '{col}': {err.message}", where=self.where,
                                      hint=err.hint) from None
            except ParseError as err:
                bad.append(f"{col}: {err.message}")
                continue
            if not math.isfinite(v) and v >= 0:  # 1e400: the vectorised pass reads cells as 64-bit floats
                bad.append(f"{col}: {text} is beyond the audit's floating-point range (about 1.8e308)")
                continue
            if metric is not None:
                if not v >= 0:
                    bad.append(f"{col}: {text} is negative")
                    continue
            else:
                q = lib.quantities[col]
                if q.outside_domain(v) or (q.integer and not v.is_integer()):
                    bad.append(f"{col}: {text} is outside its domain ({q.domain}{', integer' if q.integer else ''})")
                    continue
            row[col] = v + 0.0  # -0.0 is 0: its ratio read "-0x"
        cell = raw.cells.get("model", "")
        model, nowhere = self.model_paths.get(cell) or self._model_path(cell)
        key = (model, raw.cells.get("hardware", ""), tuple(f"{c}={raw.cells[c]}" for c in self.preset_cols if c in row))
        gid = self.group_ids.get(key)
        if gid is None:
            gid = self.group_ids[key] = len(self.group_list)
            vals, err, _ = self.groups.values(*key)
            self.group_list.append((vals, err, {n: float(v) for n, v in vals.items()}))
        if nowhere:
            bad.append(f"model/hardware: config file not found: {cell} is neither beside the table ({model}) nor in "
                       "the working folder")
        elif self.group_list[gid][1]:
            bad.append(f"model/hardware: {self.group_list[gid][1]}")
        return row, gid, bad

    def _model_path(self, cell: str) -> tuple[str, bool]:
        """A model cell as the scenario reads it (``model_path_from``: beside the table, else the working folder)
        and whether it names a file in neither; looked up once per cell text, not once per row."""
        model = cell
        if cell and self.folder is not None:
            from derive.model.scenario import model_path_from

            model = model_path_from(cell, self.folder)
        if len(self.model_paths) > CACHE_ENTRIES:
            self.model_paths.clear()
        self.model_paths[cell] = (model, model != cell and not Path(model).is_file())
        return self.model_paths[cell]

    def exact_inputs(self, bound: Bound, raw: RawRow, gid: int) -> list[Fraction]:
        """The bound's inputs at a row, exactly (read again from the cells)."""
        base = self.group_list[gid][0]
        out = []
        for name in bound.inputs:
            text = raw.cells.get(name, "") if name in self.row_cols else ""
            if text:
                out.append(_read_value(text, self.library.quantities[name].dimension, self.parsed))
            elif name in bound.row_inputs or (name not in base and name in bound.defaults):
                out.append(bound.defaults[name])
            else:
                out.append(base[name])
        return out

    def _exact_metric(self, metric: Metric, raw: RawRow) -> Fraction:
        return _read_value(raw.cells[metric.name], metric.dimension, self.parsed)

    # the audit ---------------------------------------------------------------------------------------------
    def audit(self, rows: Iterable[RawRow]) -> Iterator[AuditRow]:
        chunk: list[RawRow] = []
        for raw in rows:
            chunk.append(raw)
            if len(chunk) >= CHUNK_ROWS:
                yield from self._chunk(chunk)
                chunk = []
        if chunk:
            yield from self._chunk(chunk)

    def _chunk(self, raws: list[RawRow]) -> Iterator[AuditRow]:
        prepared = [self.prepare(r) for r in raws]
        n = len(raws)
        cols = {c: np.array([p[0].get(c, np.nan) for p in prepared]) for c in self.read_cols}
        gidx = np.array([p[1] for p in prepared], dtype=np.int64)
        bad = np.array([bool(p[2]) for p in prepared])
        results: list[dict[str, list[BoundResult]]] = [{} for _ in range(n)]
        for mname in self.metric_cols:
            metric = self.plan.metrics[mname]
            present = ~np.isnan(cols[mname]) & ~bad
            for i in np.flatnonzero(~np.isnan(cols[mname])):
                results[i][mname] = []
            for bound in metric.bounds:
                self._evaluate(bound, metric, raws, cols, gidx, np.flatnonzero(present), results)
        for i, raw in enumerate(raws):
            res = results[i]
            if prepared[i][2]:  # a cell that cannot be read: the row is not audited on a guess
                yield AuditRow(raw.line, raw.cells, "unchecked", {m: [] for m in res}, "; ".join(prepared[i][2]))
                continue
            found = [b for bs in res.values() for b in bs]
            if any(b.status == "impossible" for b in found):
                verdict, reason = "impossible", None
            elif any(b.status == "consistent" for b in found):
                verdict, reason = "consistent", None
            else:
                verdict = "unchecked"
                reasons = [b.reason for b in found if b.reason]
                for mname in res:
                    m = self.plan.metrics[mname]
                    if not m.bounds:
                        reasons.append(f"{mname}: {m.unchecked}")
                if not res:
                    reasons.insert(0, "no metric value in this row")
                reason = "; ".join(dict.fromkeys(reasons)) or "no bound applies"
            yield AuditRow(raw.line, raw.cells, verdict, res, reason)

    def _evaluate(self, bound: Bound, metric: Metric, raws: list[RawRow], cols: dict[str, np.ndarray],
                  gidx: np.ndarray, rows: np.ndarray, results: list) -> None:
        if bound.when_given or bound.unless_given:  # rows outside the bound's reading are not held to it
            held = np.ones(rows.size, dtype=bool)
            for name in bound.when_given:
                held &= ~np.isnan(cols[name][rows]) if name in cols else False
            for name in bound.unless_given:
                held &= np.isnan(cols[name][rows]) if name in cols else True
            rows = rows[held]
        if rows.size == 0:
            return
        if bound.note and bound.note not in self.notes:
            self.notes.append(bound.note)
        for name, words in bound.notes_when_missing.items():
            if words not in self.notes and (name not in cols or bool(np.isnan(cols[name][rows]).any())):
                self.notes.append(words)
        if not bound.usable:
            for i in rows:
                results[i][metric.name].append(BoundResult(bound.claim, bound.kind, "unchecked", reason=bound.reason))
            return
        g = gidx[rows]
        arrays = []
        for name in bound.inputs:
            col = cols[name][rows] if name in cols else np.full(rows.size, np.nan)
            if name in bound.row_inputs:
                fill = np.full(rows.size, float(bound.defaults[name]) if name in bound.defaults else np.nan)
            else:
                default = float(bound.defaults[name]) if name in bound.defaults else np.nan
                per_group = np.array([grp[2].get(name, default) for grp in self.group_list])
                fill = per_group[g]
            arrays.append(np.where(np.isnan(col), fill, col))
        missing = np.zeros(rows.size, dtype=bool)
        for a in arrays:
            missing |= np.isnan(a)
        for k in np.flatnonzero(missing):
            names = [bound.inputs[j] for j, a in enumerate(arrays) if np.isnan(a[k])]
            results[rows[k]][metric.name].append(BoundResult(bound.claim, bound.kind, "unchecked",
                                                             reason=f"{metric.name}: missing " + ", ".join(names)))
        keep = np.flatnonzero(~missing)
        if keep.size == 0:
            return
        live = rows[keep]
        arrays = [a[keep] for a in arrays]
        measured = cols[metric.name][live]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            b = np.asarray(bound.func(*arrays), dtype=float) * np.ones(live.size)
            ratio = measured / b
        floor = bound.kind == "floor"
        clear = np.isfinite(ratio) & np.isfinite(b) & (b > 0) & (np.abs(ratio - 1) > EXACT_MARGIN)
        if self.exact:
            clear[:] = False
        beaten_fast = clear & ((ratio < 1) if floor else (ratio > 1))
        out: list[BoundResult] = []
        for k in range(live.size):
            res = BoundResult(bound.claim, bound.kind, "impossible" if beaten_fast[k] else "consistent",
                              bound=float(b[k]), ratio=float(ratio[k]))
            if not clear[k]:
                raw = raws[live[k]]
                self._decide_exactly(bound, res, self.exact_inputs(bound, raw, gidx[live[k]]),
                                     self._exact_metric(metric, raw))
            out.append(res)
        beaten = [k for k in range(live.size) if out[k].status == "impossible"]
        fine = np.array([k for k in range(live.size) if out[k].status == "consistent"], dtype=np.int64)
        if beaten:
            self._changes(bound, metric, [a[beaten] for a in arrays], measured[beaten], [out[k] for k in beaten],
                          [raws[live[k]] for k in beaten], [int(gidx[live[k]]) for k in beaten])
        if fine.size and bound.terms:
            fa = [a[fine] for a in arrays]
            with np.errstate(all="ignore"):
                meas = np.asarray(bound.measured_func(measured[fine], *fa), dtype=float) * np.ones(fine.size)
                terms = {label: np.asarray(f(*fa), dtype=float) * np.ones(fine.size)
                         for label, f in bound.term_funcs.items()}
            for j, k in enumerate(fine):
                res = out[k]
                res.terms = {label: {"value": float(v[j]), "share": float(v[j] / meas[j])}
                             for label, v in terms.items()}
                slack = res.slack
                if slack is not None and slack > 0:
                    res.terms["unexplained"] = {"value": float(meas[j] * (1 - 1 / slack)), "share": 1 - 1 / slack}
        for k, res in enumerate(out):
            results[live[k]][metric.name].append(res)

    def _decide_exactly(self, bound: Bound, res: BoundResult, vals: list[Fraction], measured: Fraction) -> None:
        res.exact = True
        try:
            exact = bound.exact_func(*vals)
        except ZeroDivisionError:
            exact = None
        if exact is None or exact <= 0:
            res.status, res.ratio, res.bound = "unchecked", None, None
            res.reason = "the bound has no positive value here"
            return
        res.bound = exact
        ratio = measured / exact
        try:
            res.ratio = float(ratio)
        except OverflowError:  # a bound some 300 decades below the number: the ratio is past a float's range
            res.ratio = math.inf
        res.status = "impossible" if (ratio < 1 if bound.kind == "floor" else ratio > 1) else "consistent"

    def _changes(self, bound: Bound, metric: Metric, arrays: list[np.ndarray], measured: np.ndarray,
                 results: list[BoundResult], raws: list[RawRow], gids: list[int]) -> None:
        """For each impossible row, the one input whose least change makes the row possible, smallest relative
        change first: found in floats for all rows at once (a grid of factors, then bisection), rounded outwards
        to 3 significant digits and confirmed (in exact arithmetic where floats are too close to tell; else the
        next input is tried)."""
        lib = self.library
        n = len(measured)
        grid = np.logspace(-SEARCH_DECADES, SEARCH_DECADES, 8 * SEARCH_DECADES + 1)
        log_grid = np.abs(np.log(grid))
        factors = np.full((n, len(arrays)), np.nan)  # the least factor on each input that makes a row possible
        m = measured[:, None]
        for j in range(len(arrays)):
            args = [a[:, None] for a in arrays]
            args[j] = arrays[j][:, None] * grid[None, :]
            with np.errstate(all="ignore"):
                b = np.asarray(bound.func(*args), dtype=float) * np.ones((n, grid.size))
            ok = (m >= b) if bound.kind == "floor" else (m <= b)
            if not ok.any():
                continue
            score = np.where(ok, log_grid[None, :], np.inf)
            best = np.argmin(score, axis=1)
            has = np.isfinite(score[np.arange(n), best])
            lo, hi = np.ones(n), grid[best]
            for _ in range(30):
                mid = np.sqrt(lo * hi)
                args = list(arrays)
                args[j] = arrays[j] * mid
                with np.errstate(all="ignore"):
                    bm = np.asarray(bound.func(*args), dtype=float) * np.ones(n)
                good = (measured >= bm) if bound.kind == "floor" else (measured <= bm)
                hi = np.where(good, mid, hi)
                lo = np.where(good, lo, mid)
            factors[has, j] = hi[has]
        floor = bound.kind == "floor"
        # the best input of every row at once: rounded outwards to 3 significant digits and confirmed in floats
        score = np.where(np.isnan(factors), np.inf, np.abs(np.log(np.where(np.isnan(factors), 1.0, factors))))
        best = np.argmin(score, axis=1)
        rows_all = np.arange(n)
        ok_rows = np.isfinite(score[rows_all, best])
        f_best = np.where(ok_rows, factors[rows_all, np.where(ok_rows, best, 0)], 1.0)
        current = np.array([arrays[j][r] for r, j in enumerate(best)]) if n else np.zeros(0)
        target = _round_out_array(current * f_best, up=f_best > 1)
        trial = [a.copy() for a in arrays]
        for j in range(len(arrays)):
            sel = best == j
            trial[j][sel] = target[sel]
        with np.errstate(all="ignore"):
            bt = np.asarray(bound.func(*trial), dtype=float) * np.ones(n)
            ratio = measured / bt
        sure = ok_rows & np.isfinite(ratio) & (bt > 0) & (np.abs(ratio - 1) > EXACT_MARGIN) & (
            (ratio >= 1) if floor else (ratio <= 1))
        for r in np.flatnonzero(sure):
            j = int(best[r])
            q = lib.quantity(bound.inputs[j])
            if q.counted and not float(target[r]).is_integer():
                sure[r] = False
                continue
            results[r].changes = [_change(q, ">=" if f_best[r] > 1 else "<=", Fraction(f"{target[r]:.3e}"),
                                          float(f_best[r]), float(current[r]))]
        found = {r: sorted((abs(math.log(factors[r, j])), j, float(factors[r, j]))
                           for j in range(len(arrays)) if not np.isnan(factors[r, j]))
                 for r in np.flatnonzero(~sure)}
        for r, candidates in found.items():
            row = [float(a[r]) for a in arrays]
            for _, j, factor in candidates:
                name = bound.inputs[j]
                q = lib.quantity(name)
                target = _round_out(Fraction(row[j]) * Fraction(factor), up=factor > 1, integer=q.counted)
                if target is None or target <= 0:
                    continue
                trial = list(row)
                trial[j] = float(target)
                with np.errstate(all="ignore"):
                    bt = float(bound.func(*trial))
                ratio = measured[r] / bt if bt > 0 else math.nan
                if not math.isfinite(ratio) or abs(ratio - 1) <= EXACT_MARGIN:
                    exact_vals = self.exact_inputs(bound, raws[r], gids[r])
                    exact_vals[j] = target
                    try:
                        bx = bound.exact_func(*exact_vals)
                    except ZeroDivisionError:
                        continue
                    if bx <= 0:
                        continue
                    ratio = float(self._exact_metric(metric, raws[r]) / bx)
                    if (ratio < 1) if floor else (ratio > 1):
                        continue
                elif (ratio < 1) if floor else (ratio > 1):
                    continue  # rounding did not make it possible: no claim made
                results[r].changes = [_change(q, ">=" if factor > 1 else "<=", target, factor, row[j])]
                break


def _change(q: object, op: str, value: Fraction, factor: float, row_value: float) -> dict[str, object]:
    from derive.model.units import format_dimension

    unit = format_dimension(q.dimension)
    unit = "" if unit == "1" else " " + unit
    return {"quantity": q.name, "op": op, "value": value, "factor": factor, "row_value": Fraction(row_value),
            "text": f"needs {q.name} {op} {float(value):.4g}{unit} (row: {row_value:.4g}{unit})"}


def _round_out_array(x: np.ndarray, *, up: np.ndarray) -> np.ndarray:
    """Floats to 3 significant digits, up where ``up`` else down (each then read exactly from its decimal text)."""
    with np.errstate(all="ignore"):
        scale = 10.0 ** (np.floor(np.log10(np.where(x > 0, x, 1.0))) - 2)
        out = np.where(up, np.ceil(x / scale * (1 - 1e-12)), np.floor(x / scale * (1 + 1e-12))) * scale
    return np.array([float(f"{v:.3e}") for v in out]) if out.size else out


def _round_out(x: Fraction, *, up: bool, integer: bool) -> Fraction | None:
    """``x`` to 3 significant digits (or a whole number), rounded away from the impossible side."""
    if x <= 0:
        return None
    if integer:
        return Fraction(math.ceil(x) if up else math.floor(x))
    e = math.floor(math.log10(float(x))) - 2
    scale = Fraction(10) ** e
    n = x / scale
    return (math.ceil(n) if up else math.floor(n)) * scale


# Output ------------------------------------------------------------------------------------------------------------

def _num(x: object) -> object:
    if x is None:
        return None
    if isinstance(x, (sp.Rational, Fraction)):
        return float(x)
    return x


def row_json(row: AuditRow, plan: AuditPlan) -> dict[str, object]:
    """One audited row (stable keys): line, cells, verdict, reason, and per metric its bounds."""
    metrics: dict[str, list] = {}
    for mname, bounds in row.metrics.items():
        unit = plan.metrics[mname].unit
        metrics[mname] = [{
            "claim": b.claim, "kind": b.kind, "status": b.status, "unit": unit, "bound": _num(b.bound),
            "bound_exact": str(b.bound) if b.exact and b.bound is not None else None,
            "ratio": b.ratio, "signed_error": b.signed_error, "reason": b.reason,
            "terms": b.terms or None,
            "rests_on": list(_bound_of(plan, mname, b.claim).rests_on) if b.status == "impossible" else None,
            "changes": [{"quantity": c["quantity"], "op": c["op"], "value": str(c["value"]), "text": c["text"]}
                        for c in b.changes] or None,
        } for b in bounds]
    tight = row.tightest
    cell = lambda key: row.cells.get(key) or None  # noqa: E731
    scope = {"chip": cell("hardware"), **{k: cell(k) for k in SCOPE_COLUMNS}, "note": cell("scope")}
    return {"line": row.line, "cells": row.cells, "verdict": row.verdict, "reason": row.reason,
            "scope": scope, "date": cell("date"), "source": cell("source"),
            "tightest": None if tight is None else {"metric": tight[0], "claim": tight[1].claim,
                                                    "slack": tight[1].slack},
            "metrics": metrics, "notes": row.notes or None}


def plan_json(plan: AuditPlan) -> list[dict[str, object]]:
    """Every metric the library declares, with each bound's claim, its kind, its verdict (checked once) and the
    assumptions it rests on; or the reason it has none."""
    out: list[dict[str, object]] = []
    for m in plan.metrics.values():
        out.append({"metric": m.name, "unit": m.unit, "meaning": m.meaning or None, "unchecked": m.unchecked,
                    "bounds": [{"claim": b.claim, "kind": b.kind, "verdict": b.verdict, "reason": b.reason,
                                "rests_on": list(b.rests_on), "reading": b.reading or None,
                                "row_inputs": sorted(b.row_inputs),
                                "defaults": {k: str(v) for k, v in sorted(b.defaults.items())}}
                               for b in m.bounds]})
    return out


def _bound_of(plan: AuditPlan, metric: str, claim: str) -> Bound:
    return next(b for b in plan.metrics[metric].bounds if b.claim == claim)


CSV_FIELDS = ("line", "verdict", "metric", "claim", "kind", "bound", "ratio", "signed_error", "slack", "change",
              "reason")


def row_csv(row: AuditRow, header: list[str]) -> list[str]:
    """The row's own cells, then the verdict and its tightest (or beaten) bound."""
    tight = row.tightest
    beaten = next(((m, b) for m, bs in row.metrics.items() for b in bs if b.status == "impossible"), None)
    pick = beaten or tight
    cells = [row.cells.get(h, "") for h in header]
    if pick is None:
        return [*cells, str(row.line), row.verdict, "", "", "", "", "", "", "", "", row.reason or ""]
    m, b = pick
    change = b.changes[0]["text"] if b.changes else ""
    return [*cells, str(row.line), row.verdict, m, b.claim, b.kind, repr(float(b.bound)) if b.bound else "",
            f"{b.ratio:.6g}" if b.ratio is not None else "",
            f"{b.signed_error:+.6g}" if b.signed_error is not None else "",
            f"{b.slack:.6g}" if b.slack is not None else "",
            change, row.reason or ""]


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet reads as the start of a formula


def csv_line(values: list[str]) -> str:
    """One CSV line; a text cell a spreadsheet would run as a formula (``=cmd|...``, from a row's own id or
    source) gets a leading apostrophe, as OWASP advises; numbers (``-0.5``, ``+1.2``) are left as they are."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow([f"'{v}" if v.startswith(_FORMULA_START) and not _is_number(v)
                                                    else v for v in values])
    return buf.getvalue()


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
