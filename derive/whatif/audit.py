"""The audit: rows of measured or predicted numbers held against the bounds a library proves.

A library declares, in ``AUDIT_BOUNDS``, the metric columns a table may have and the claim each is held to::

    {"metric": "tpot", "unit": "s", "meaning": "time per output token of one sequence",
     "claim": "gap.roofline_floor_below_measured",   # a relation `measured OP bound` the engine must prove
     "measured": "tpot",                            # the claim's measured quantity, as an expression in the
                                                    # metric (by its name) and the library's quantities
     "reading": "why the metric gives that quantity (one sentence)",
     "terms": {"compute": "compute_time"},          # parts of the bound reported for a consistent row
     "row_inputs": ["batch", "chips"],              # never taken from a preset: the row states them ...
     "defaults": {"batch": "1 seq"}}                # ... or the bound uses these (values giving its weakest form)
    {"metric": "ttft", "unit": "s", "unchecked": "why no bound exists"}

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
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import IO

import numpy as np
import sympy as sp

from derive.errors import DeriveError, LibraryError, ParseError, UnitError
from derive.kernel.logic import Rel
from derive.model.declarations import Claim
from derive.model.library import Library
from derive.model.units import Dimension, parse_unit

MAX_AUDIT_BYTES = 2 * 2**30  # a file larger than this is refused before it is read (10 M rows fit)
CHUNK_ROWS = 20_000  # rows evaluated together (memory stays bounded whatever the file's length)
EXACT_MARGIN = 1e-9  # a float slack this close to 1 is decided again in exact arithmetic
META_COLUMNS = ("model", "hardware")  # required; a cell may be empty (then the row's own columns give values)
FREE_COLUMNS = ("id", "source", "note", "date", "scope")  # carried to the output, never read as values
SEARCH_DECADES = 6  # the smallest change searches each input over [1e-6, 1e6] times its value


class AuditInputError(DeriveError):
    """A table ``derive audit`` cannot read (exit 2): names the line and the column."""


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
        metric_op, value = _bound_on_metric(measured, m, op, rhs, where)
        expr = library.expand(value)
        if m in expr.free_symbols:
            raise LibraryError("the bound on the metric depends on the metric", where=where)
        inputs = tuple(sorted(str(s) for s in expr.free_symbols))
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
            defaults[qname] = parse_value(text, q.dimension, where=f"{where} defaults.{qname}")
        for qname in sorted(row_inputs | set(defaults)):
            library.quantity(qname)  # an unknown name is an error here, with suggestions
        result = results.get(cid)
        verdict = getattr(result, "verdict", "unknown")
        reason = None if verdict == "proved" else f"bound not proved: {cid} is {verdict}" + (
            f" ({result.reason})" if getattr(result, "reason", None) else "")
        syms = [library.quantity(n).sym for n in inputs]
        func = sp.lambdify(syms, expr, modules="numpy")
        metric.bounds.append(Bound(
            metric=metric.name, claim=cid, op=metric_op, expr=expr, inputs=inputs, measured_name=measured_name,
            measured_expr=measured, metric_sym=m, reading=str(raw.get("reading", "")),
            rests_on=tuple(library.rests_on(library.declarations[cid])), verdict=verdict, reason=reason,
            terms=terms, row_inputs=row_inputs, defaults=defaults,
            measured_unit=str(library.quantity(measured_name).unit), func=func))
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


def _open(path: str, stdin: IO[str] | None) -> tuple[IO[str], str]:
    if path == "-":
        import sys

        return (stdin or sys.stdin), "<stdin>"
    p = Path(path)
    if not p.is_file():
        raise AuditInputError(f"file not found: {path}", where=path)
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


def _cell(value: object, line: int, column: str, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise AuditInputError(f"line {line}, column '{column}': a value must be text or a number, "
                              f"got {type(value).__name__}", where=where)
    return value if isinstance(value, str) else repr(value)


def read_rows(path: str, *, fmt: str | None = None, stdin: IO[str] | None = None) -> tuple[list[str], Iterator[RawRow]]:
    """The header and a stream of rows of a CSV or JSON-lines table (``-``: standard input).  Malformed lines
    are ``AuditInputError`` when the stream reaches them (the caller writes nothing until the end)."""
    stream, where = _open(path, stdin)
    try:
        first = stream.readline()
    except UnicodeDecodeError:
        stream.close()
        raise AuditInputError("the file is not UTF-8 text", where=where) from None
    while first and not first.strip():
        first = stream.readline()
    if not first:
        if path != "-":
            stream.close()
        raise AuditInputError("the table is empty", where=where, hint="give a header line and one row per line")
    kind = _format_of(path, first, fmt)
    if kind == "csv":
        header = next(csv.reader([first]))
        header = [h.strip() for h in header]
        if len(set(header)) != len(header):
            dup = next(h for h in header if header.count(h) > 1)
            raise AuditInputError(f"line 1: column '{dup}' appears twice", where=where)

        def rows() -> Iterator[RawRow]:
            try:
                reader = csv.reader(stream)
                for values in reader:
                    line = reader.line_num + 1
                    if not values or all(not v.strip() for v in values):
                        continue
                    if len(values) != len(header):
                        raise AuditInputError(f"line {line}: {len(values)} cells for {len(header)} columns",
                                              where=where, hint="quote a value that contains a comma")
                    yield RawRow(line, dict(zip(header, (v.strip() for v in values), strict=True)))
            except csv.Error as err:
                raise AuditInputError(f"line {reader.line_num + 1}: not CSV ({err})", where=where) from None
            except UnicodeDecodeError:
                raise AuditInputError("the file is not UTF-8 text", where=where) from None
            finally:
                if path != "-":
                    stream.close()

        return header, rows()

    def parse(text: str, line: int) -> dict[str, str]:
        try:
            obj = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            raise AuditInputError(f"line {line}: not a JSON object", where=where) from None
        if not isinstance(obj, dict):
            raise AuditInputError(f"line {line}: not a JSON object", where=where)
        return {str(k): _cell(v, line, str(k), where) for k, v in obj.items()}

    head = parse(first, 1)
    header = list(head)

    def jrows() -> Iterator[RawRow]:
        try:
            yield RawRow(1, head)
            for n, text in enumerate(stream, start=2):
                if text.strip():
                    yield RawRow(n, parse(text, n))
        except UnicodeDecodeError:
            raise AuditInputError("the file is not UTF-8 text", where=where) from None
        finally:
            if path != "-":
                stream.close()

    return header, jrows()


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
            out: tuple = ({}, err.one_line(), [])
        else:
            vals = {n: v.value for n, v in sc.values.items()
                    if n in self.keep and not v.origin.startswith("scenario ")}
            origin = {n: v.origin for n, v in sc.values.items() if n in vals}
            out = (vals, None, [f"{n} from {origin[n]}" for n in sorted(vals)])
        if len(self.cache) > 10_000:
            self.cache.clear()
        self.cache[key] = out
        return out


def _read_value(text: str, dim: Dimension, cache: dict) -> sp.Rational:
    """A cell as an exact SI value; a bare number is SI.  Parsed once per distinct text and dimension."""
    key = (text, dim)
    hit = cache.get(key)
    if hit is None:
        from derive.model.parse import parse_value

        try:
            hit = parse_value(text, dim, si=True)
        except UnitError as err:
            hit = err
        except DeriveError as err:
            hit = ParseError(err.message)
        if len(cache) > 100_000:
            cache.clear()
        cache[key] = hit
    if isinstance(hit, Exception):
        raise hit
    return hit


def _frac(x: sp.Rational) -> Fraction:
    return Fraction(int(x.p), int(x.q))


def _exact(expr: sp.Expr, values: Mapping[str, sp.Rational], library: Library) -> sp.Rational | None:
    out = expr.xreplace({library.quantity(n).sym: v for n, v in values.items()})
    out = sp.nsimplify(out) if not out.is_Rational else out
    return out if isinstance(out, sp.Rational) else None


class Auditor:
    """Audits rows against a plan; ``audit(rows)`` yields one ``AuditRow`` per input row, in order."""

    def __init__(self, plan: AuditPlan, header: list[str], where: str = "", exact: bool = False) -> None:
        self.plan = plan
        self.library = plan.library
        self.where = where
        self.exact = exact
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
                raise AuditInputError(f"line 1: unknown column '{col}'", where=where, hint=hint)
            q = lib.quantities[col]
            if q.value is not None or lib.is_derived(col):
                raise AuditInputError(f"line 1: column '{col}' is {'a constant' if q.value is not None else 'derived'}"
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
        self.preset_cols = [c for c in self.quantity_cols if c not in inputs]  # act through the presets
        self.groups = _Groups(lib, inputs)
        self.parsed: dict = {}

    # one row's values --------------------------------------------------------------------------------------
    def _prepare(self, raw: RawRow) -> tuple[dict[str, sp.Rational], dict[str, sp.Rational],
                                             dict[str, sp.Rational], list[str], list[str]]:
        """Row values (from its columns), base values (presets), metric values and unreadable cells."""
        lib = self.library
        bad: dict[str, str] = {}
        row: dict[str, sp.Rational] = {}
        metric: dict[str, sp.Rational] = {}
        for col in self.row_cols + self.preset_cols + self.metric_cols:
            text = raw.cells.get(col, "")
            if not text:
                continue
            dim = self.plan.metrics[col].dimension if col in self.plan.metrics else lib.quantities[col].dimension
            try:
                v = _read_value(text, dim, self.parsed)
            except UnitError as err:
                raise AuditInputError(f"line {raw.line}, column '{col}': {err.message}", where=self.where,
                                      hint=err.hint) from None
            except ParseError as err:
                bad[col] = err.message
                continue
            if col in self.plan.metrics:
                if v < 0:
                    bad[col] = f"{col} is negative"
                    continue
                metric[col] = v
            else:
                q = lib.quantities[col]
                if (q.domain == "positive" and v <= 0) or (q.domain == "nonnegative" and v < 0) or (
                        q.integer and not v.is_integer):
                    bad[col] = f"{col} = {text} is outside its domain ({q.domain}{', integer' if q.integer else ''})"
                    continue
                row[col] = v
        sets = tuple(f"{c}={raw.cells[c]}" for c in self.preset_cols if c in row)
        base, err, notes = self.groups.values(raw.cells.get("model", ""), raw.cells.get("hardware", ""), sets)
        if err:
            bad["model/hardware"] = err
        return row, base, metric, [f"{k}: {v}" for k, v in bad.items()], notes

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
        prepared = [self._prepare(r) for r in raws]
        n = len(raws)
        results: list[dict[str, list[BoundResult]]] = [{} for _ in range(n)]
        for mname in self.metric_cols:
            metric = self.plan.metrics[mname]
            for i, (_, _, mv, _, _) in enumerate(prepared):
                if mname in mv:
                    results[i][mname] = []
            for bound in metric.bounds:
                self._evaluate(bound, metric, prepared, results)
        for i, raw in enumerate(raws):
            row_vals, base, mv, bad, notes = prepared[i]
            res = results[i]
            found = [b for bs in res.values() for b in bs]
            if bad:  # a cell that cannot be read: the row is not audited on a guess
                yield AuditRow(raw.line, raw.cells, "unchecked", {m: [] for m in res}, "; ".join(bad))
                continue
            if any(b.status == "impossible" for b in found):
                verdict, reason = "impossible", None
            elif any(b.status == "consistent" for b in found):
                verdict, reason = "consistent", None
            else:
                verdict = "unchecked"
                reasons = [b.reason for b in found if b.reason]
                for mname in self.metric_cols:
                    m = self.plan.metrics[mname]
                    if mname in mv and not m.bounds:
                        reasons.append(f"{mname}: {m.unchecked}")
                if not mv:
                    reasons.insert(0, "no metric value in this row")
                reason = "; ".join(dict.fromkeys(reasons)) or "no bound applies"
            yield AuditRow(raw.line, raw.cells, verdict, res, reason)

    def _evaluate(self, bound: Bound, metric: Metric, prepared: list, results: list) -> None:
        rows = [i for i, p in enumerate(prepared) if metric.name in p[2]]
        if not rows:
            return
        if not bound.usable:
            for i in rows:
                results[i][metric.name].append(BoundResult(bound.claim, bound.kind, "unchecked", reason=bound.reason))
            return
        values: dict[int, dict[str, sp.Rational]] = {}
        live: list[int] = []
        for i in rows:
            row_vals, base, _, bad, _ = prepared[i]
            if bad:
                continue
            vals: dict[str, sp.Rational] = {}
            missing = []
            for name in bound.inputs:
                if name in row_vals:
                    vals[name] = row_vals[name]
                elif name in bound.row_inputs:
                    if name in bound.defaults:
                        vals[name] = bound.defaults[name]
                    else:
                        missing.append(name)
                elif name in base:
                    vals[name] = base[name]
                else:
                    missing.append(name)
            if missing:
                why = "missing " + ", ".join(missing)
                results[i][metric.name].append(BoundResult(bound.claim, bound.kind, "unchecked",
                                                           reason=f"{metric.name}: {why}"))
                continue
            values[i] = vals
            live.append(i)
        if not live:
            return
        arrays = [np.array([float(values[i][n]) for i in live]) for n in bound.inputs]
        measured = np.array([float(prepared[i][2][metric.name]) for i in live])
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            b = np.asarray(bound.func(*arrays), dtype=float) * np.ones(len(live))
            ratio = measured / b
        for k, i in enumerate(live):
            r = float(ratio[k])
            res = BoundResult(bound.claim, bound.kind, "consistent", bound=float(b[k]), ratio=r)
            if not math.isfinite(r) or not math.isfinite(float(b[k])) or b[k] <= 0 or self.exact or \
                    abs(r - 1) <= EXACT_MARGIN or (r < 1 if bound.kind == "floor" else r > 1):
                self._decide_exactly(bound, res, values[i], prepared[i][2][metric.name])
            if res.status == "consistent" and bound.terms:
                res.terms = self._terms(bound, values[i], prepared[i][2][metric.name], res)
            results[i][metric.name].append(res)

    def _decide_exactly(self, bound: Bound, res: BoundResult, vals: dict[str, sp.Rational],
                        measured: sp.Rational) -> None:
        exact = _exact(bound.expr, vals, self.library)
        res.exact = True
        if exact is None or exact <= 0:
            res.status, res.reason, res.ratio, res.bound = "unchecked", "the bound has no positive value here", None, None
            return
        res.bound = exact
        ratio = _frac(measured) / _frac(exact)
        res.ratio = float(ratio)
        beaten = ratio < 1 if bound.kind == "floor" else ratio > 1
        if beaten:
            res.status = "impossible"
            res.changes = self._changes(bound, vals, measured)
        else:
            res.status = "consistent"

    def _terms(self, bound: Bound, vals: dict[str, sp.Rational], measured: sp.Rational,
               res: BoundResult) -> dict[str, dict[str, float]]:
        """Each term of the floor and its share of the measured quantity (the metric read as the claim's
        measured quantity); ``unexplained``: the share no term of the bound accounts for."""
        lib = self.library
        subs = {lib.quantity(n).sym: float(v) for n, v in vals.items()}
        subs[bound.metric_sym] = float(measured)
        meas = float(bound.measured_expr.xreplace({**{lib.quantity(n).sym: v for n, v in vals.items()},
                                                    bound.metric_sym: measured}))
        out: dict[str, dict[str, float]] = {}
        for label, t in bound.terms.items():
            val = float(t.xreplace({s: subs[s] for s in t.free_symbols if s in subs}))
            out[label] = {"value": val, "share": val / meas if meas else math.inf}
        if res.slack is not None and res.slack > 0:
            out["unexplained"] = {"value": meas * (1 - 1 / res.slack), "share": 1 - 1 / res.slack}
        return out

    def _changes(self, bound: Bound, vals: dict[str, sp.Rational], measured: sp.Rational) -> list[dict[str, object]]:
        """Each input that alone, changed, makes the row possible: the least change (3 significant digits,
        rounded outwards, confirmed exactly), smallest relative change first."""
        from derive.model.display import format_quantity

        lib = self.library
        grid = np.logspace(-SEARCH_DECADES, SEARCH_DECADES, 241)
        m = float(measured)
        base = [float(vals[n]) for n in bound.inputs]
        out = []
        for j, name in enumerate(bound.inputs):
            args = [np.full(grid.shape, x) for x in base]
            args[j] = base[j] * grid
            with np.errstate(all="ignore"):
                b = np.asarray(bound.func(*args), dtype=float) * np.ones(grid.shape)
            ok = (m >= b) if bound.kind == "floor" else (m <= b)
            if not ok.any():
                continue
            # the factor nearest 1 (in log) at which the row turns possible, then bisection towards 1
            idx = np.flatnonzero(ok)
            k = idx[np.argmin(np.abs(np.log(grid[idx])))]
            lo, hi = 1.0, float(grid[k])  # lo: still impossible, hi: possible
            for _ in range(60):
                mid = math.sqrt(lo * hi)
                point = list(base)
                point[j] = base[j] * mid
                with np.errstate(all="ignore"):
                    bm = float(bound.func(*point))
                if (m >= bm) if bound.kind == "floor" else (m <= bm):
                    hi = mid
                else:
                    lo = mid
            q = lib.quantity(name)
            target = _round_out(Fraction(base[j]) * Fraction(hi), up=hi > 1, integer=q.integer)
            if target is None or target <= 0:
                continue
            trial = dict(vals)
            trial[name] = sp.Rational(target.numerator, target.denominator)
            exact = _exact(bound.expr, trial, lib)
            if exact is None:
                continue
            r = _frac(measured) / _frac(exact)
            if (r < 1) if bound.kind == "floor" else (r > 1):
                continue  # rounding did not make it possible: no claim made
            value = sp.Rational(target.numerator, target.denominator)
            op = ">=" if hi > 1 else "<="
            out.append({"quantity": name, "op": op, "value": value,
                        "text": f"needs {name} {op} {format_quantity(value, q.dimension, q.display_unit)} "
                                f"(row: {format_quantity(vals[name], q.dimension, q.display_unit)})",
                        "factor": float(hi)})
        out.sort(key=lambda c: (abs(math.log(c["factor"])), c["quantity"]))
        return out


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
    if isinstance(x, sp.Rational):
        return float(x)
    return x


def row_json(row: AuditRow, plan: AuditPlan) -> dict[str, object]:
    """One audited row (stable keys): line, cells, verdict, reason, and per metric its bounds."""
    metrics: dict[str, list] = {}
    for mname, bounds in row.metrics.items():
        unit = plan.metrics[mname].unit
        metrics[mname] = [{
            "claim": b.claim, "kind": b.kind, "status": b.status, "unit": unit, "bound": _num(b.bound),
            "bound_exact": str(b.bound) if isinstance(b.bound, sp.Rational) else None,
            "ratio": b.ratio, "reason": b.reason,
            "terms": b.terms or None,
            "rests_on": list(_bound_of(plan, mname, b.claim).rests_on) if b.status == "impossible" else None,
            "changes": [{"quantity": c["quantity"], "op": c["op"], "value": str(c["value"]), "text": c["text"]}
                        for c in b.changes] or None,
        } for b in bounds]
    tight = row.tightest
    return {"line": row.line, "cells": row.cells, "verdict": row.verdict, "reason": row.reason,
            "tightest": None if tight is None else {"metric": tight[0], "claim": tight[1].claim,
                                                    "slack": tight[1].slack},
            "metrics": metrics, "notes": row.notes or None}


def _bound_of(plan: AuditPlan, metric: str, claim: str) -> Bound:
    return next(b for b in plan.metrics[metric].bounds if b.claim == claim)


CSV_FIELDS = ("line", "verdict", "metric", "claim", "kind", "bound", "ratio", "slack", "change", "reason")


def row_csv(row: AuditRow, header: list[str]) -> list[str]:
    """The row's own cells, then the verdict and its tightest (or beaten) bound."""
    tight = row.tightest
    beaten = next(((m, b) for m, bs in row.metrics.items() for b in bs if b.status == "impossible"), None)
    pick = beaten or tight
    cells = [row.cells.get(h, "") for h in header]
    if pick is None:
        return [*cells, str(row.line), row.verdict, "", "", "", "", "", "", "", row.reason or ""]
    m, b = pick
    change = b.changes[0]["text"] if b.changes else ""
    return [*cells, str(row.line), row.verdict, m, b.claim, b.kind, repr(float(b.bound)) if b.bound else "",
            f"{b.ratio:.6g}" if b.ratio is not None else "", f"{b.slack:.6g}" if b.slack is not None else "",
            change, row.reason or ""]


def csv_line(values: list[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(values)
    return buf.getvalue()
