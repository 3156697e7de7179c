"""Sweeps: quantities and claims evaluated over a grid of values or over every hardware × model preset pair.

Everything numeric here is *vectorised*: a target is expanded to base quantities once (pinned
quantities stay symbols), the scenario's values are substituted for everything that is not swept, and
the result is compiled once with ``sympy.lambdify`` to numpy and applied to whole arrays of points;
``subs`` is never called per point.  A claim in a sweep is its instance goal and hypotheses (see
``derive.model.situation.Statement.formula``) compiled relation by relation to numpy comparisons: a **numeric
sweep, not a proof** (``==`` is tested with a relative tolerance of 1e-9), and the output says so.

Real verdicts for every preset pair are ``derive.whatif.matrix``'s (``sweep --presets --check``).

CSV output is deterministic: fixed column order, floats with ``repr``-free ``%.12g`` formatting,
booleans as 1/0, a missing value as an empty field.  Figures are saved with fixed metadata.
"""

from __future__ import annotations

import csv
import io
import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import sympy as sp

from derive.errors import DeriveError, ScenarioError, SweepError
from derive.kernel.logic import Formula, Rel
from derive.model.declarations import Claim
from derive.model.evaluate import definitions_used, domain_breaks, formula_words
from derive.model.library import Library
from derive.model.scenario import Scenario, with_input_table_defaults
from derive.model.situation import eliminate_forall, input_notes, situate
from derive.whatif.rules import grid_rules, pair_rule_notes

NOT_A_PROOF = "numeric sweep, not a proof"
EQ_RTOL = 1e-9


# Size budget of a grid, checked before anything is allocated: one axis, the whole grid, and the grid
# times its columns (each column is one float array of the grid's size).
MAX_AXIS_POINTS = 1_000_000
MAX_GRID_POINTS = 2_000_000
MAX_GRID_VALUES = 20_000_000  # points x columns: 160 MB of float64


def check_grid_size(counts: Sequence[int], columns: int = 1, *, where: str = "--vary") -> int:
    """The number of points of the full grid of axes with ``counts`` points each; ``BudgetError`` (exit 2)
    when it or ``points x columns`` is beyond the budget.  Called before any grid is allocated."""
    from derive.errors import BudgetError

    points = 1
    for n in counts:
        if n > MAX_AXIS_POINTS:
            raise BudgetError(f"an axis of {n:,} points is beyond the budget of {MAX_AXIS_POINTS:,}", where=where,
                              hint="use fewer points per axis")
        points *= max(int(n), 0)
    shape = " x ".join(f"{n:,}" for n in counts)
    if points > MAX_GRID_POINTS:
        raise BudgetError(f"a grid of {shape} = {points:,} points is beyond the budget of {MAX_GRID_POINTS:,} "
                          "points", where=where, hint="use fewer points per axis (each --vary multiplies the grid)")
    if points * max(columns, 1) > MAX_GRID_VALUES:
        raise BudgetError(f"a grid of {points:,} points with {columns} columns is beyond the budget of "
                          f"{MAX_GRID_VALUES:,} values", where=where, hint="use fewer points or fewer targets")
    return points


# formulas and expressions to numpy --------------------------------------------------------------------

def numpy_function(expr: sp.Expr, symbols: Sequence[sp.Symbol]) -> Callable[..., np.ndarray]:
    """``expr`` compiled once; the result is broadcast to the shape of the inputs."""
    from sympy.core.function import AppliedUndef

    undefined = sorted(str(f.func) for f in expr.atoms(AppliedUndef))
    if undefined:  # lambdify writes a call of a name numpy does not have (a NameError at the first point)
        raise SweepError(f"cannot evaluate {sp.sstr(expr)} numerically: {', '.join(undefined)} is a function "
                         "without a definition")
    fn = sp.lambdify(list(symbols), expr, "numpy")

    def call(*arrays: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            out = np.asarray(fn(*arrays), dtype=float)
        # a zero denominator gives inf: no value there, as eval says (a value past a float's range reads so too)
        out = np.where(np.isfinite(out), out, np.nan)
        shape = np.broadcast_shapes(*(np.shape(a) for a in arrays)) if arrays else ()
        return np.broadcast_to(out, shape) if out.shape != shape else out

    return call


def numpy_formula(formula: Formula, symbols: Sequence[sp.Symbol]) -> Callable[..., np.ndarray]:
    """A formula tree compiled to a vectorised boolean function (each relation lambdified once).
    Where any side of any relation is undefined (division by zero, NaN) the formula does not hold, as
    the kernel reads it (strictly): ``not (sqrt(x) < 1)`` at x = -1 "held" when only the relation was
    made false and ``not`` turned it true."""
    parts = _numpy_parts(formula, symbols)

    def holds(*a: np.ndarray) -> np.ndarray:
        truth, defined = parts(*a)
        return truth & defined

    return holds


def numpy_truth(formula: Formula, symbols: Sequence[sp.Symbol]) -> Callable[..., np.ndarray]:
    """A formula compiled to a vectorised function of 1.0 (holds), 0.0 (fails) and NaN (a side of a relation
    has no value there: a zero denominator, a root of a negative number), as ``derive check`` reads it
    (``unknown`` there, never refuted)."""
    parts = _numpy_parts(formula, symbols)

    def truth(*a: np.ndarray) -> np.ndarray:
        held, defined = parts(*a)
        return np.where(defined, np.asarray(held, dtype=float), np.nan)

    return truth


def _near_integer(v: np.ndarray) -> np.ndarray:
    """Where ``v`` is an integer within the relative tolerance of ``==`` (a numeric sweep, not a proof)."""
    with np.errstate(all="ignore"):
        return np.abs(v - np.round(v)) <= EQ_RTOL * np.maximum(1.0, np.abs(v))


def _numpy_parts(formula: Formula, symbols: Sequence[sp.Symbol]) -> Callable[..., tuple[np.ndarray, np.ndarray]]:
    """(truth, defined) of a formula tree, each side of each relation evaluated once per call: defined
    where every side is finite, whatever the Boolean structure above it."""
    from derive.kernel.logic import And, Iff, Implies, IsInteger, Not, Or

    if isinstance(formula, Rel):
        lhs, rhs = numpy_function(formula.lhs, symbols), numpy_function(formula.rhs, symbols)
        op = formula.op

        def rel(*a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            left, right = lhs(*a), rhs(*a)
            with np.errstate(all="ignore"):
                if op == "==":
                    out = np.isclose(left, right, rtol=EQ_RTOL, atol=0.0)
                elif op == "!=":
                    out = ~np.isclose(left, right, rtol=EQ_RTOL, atol=0.0)
                else:
                    out = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}[op](left, right)
            defined = np.isfinite(left) & np.isfinite(right)
            return out & defined, defined

        return rel
    if isinstance(formula, (And, Or, Implies, Iff)):
        args = {And: lambda f: f.args, Or: lambda f: f.args, Implies: lambda f: (f.premise, f.conclusion),
                Iff: lambda f: (f.left, f.right)}[type(formula)](formula)
        subs = [_numpy_parts(f, symbols) for f in args]
        combine = {And: np.logical_and, Or: np.logical_or, Iff: np.equal,
                   Implies: lambda p, c: np.logical_or(np.logical_not(p), c)}[type(formula)]

        def junction(*a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            truth, defined = subs[0](*a)
            for sub in subs[1:]:
                t, d = sub(*a)
                truth, defined = combine(truth, t), defined & d
            return truth, defined

        return junction
    if isinstance(formula, IsInteger):  # within the relative tolerance of "==": a numeric sweep, not a proof
        value = numpy_function(formula.expr, symbols)

        def whole(*a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            v = value(*a)
            with np.errstate(all="ignore"):
                defined = np.isfinite(v)
            return _near_integer(v) & defined, defined

        return whole
    if isinstance(formula, Not):
        inner = _numpy_parts(formula.arg, symbols)

        def negation(*a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            truth, defined = inner(*a)
            return np.logical_not(truth), defined

        return negation
    raise SweepError(f"cannot evaluate a {type(formula).__name__} numerically")


# axes -------------------------------------------------------------------------------------------------

@dataclass
class Axis:
    """A swept quantity: its values in SI units and the unit they are printed in."""

    name: str
    values: np.ndarray  # SI
    unit: str
    scale: float  # printed value = SI value / scale
    log: bool = False
    note: str = ""  # how the range was read, when that may surprise (a bare number in SI base units)

    @property
    def printed(self) -> np.ndarray:
        return self.values / self.scale


FLOAT_RANGE = f"{sys.float_info.min:.2g} to {sys.float_info.max:.2g}".replace("e+", "e")


def parse_axis(library: Library, text: str, *, log: bool = False, default_points: int = 50,
               around: sp.Expr | None = None) -> Axis:
    """``Q=LO:HI[:N][:log]`` (values may carry units: ``flops=100 TFLOP/s:10 PFLOP/s:40:log``) or a bare
    ``Q`` (then ``around``/10 .. ``around``*10, logarithmic)."""
    from derive.model.parse import parse_value
    from derive.model.units import format_dimension, parse_unit

    name, eq, spec = text.partition("=")
    name = name.strip()
    if eq and not spec.strip():  # "batch=" read as the bare name: a range the user meant to give
        raise SweepError(f"--vary {text.strip()}: nothing after '='",
                         hint=f"give a range, {name}=LO:HI[:N], or the name alone (a decade either side of its value)")
    if name not in library.quantities:
        from derive.errors import UnknownNameError

        raise UnknownNameError("quantity", name, library.quantities, where="--vary")
    q = library.quantities[name]
    unit = q.display_unit or format_dimension(q.dimension)
    try:
        u = parse_unit(unit)
        scale = float(u.scale) if u.dimension == q.dimension else 1.0
        if u.dimension != q.dimension:
            unit = format_dimension(q.dimension)
    except DeriveError:
        unit, scale = format_dimension(q.dimension), 1.0
    parts = [p.strip() for p in spec.split(":")] if spec else []
    if parts and parts[-1].lower() == "log":
        log = True
        parts = parts[:-1]
    note = ""
    if not parts:
        if around is None or around <= 0:
            raise SweepError(f"--vary {name}: give a range, e.g. {name}=LO:HI:N (no scenario value to centre on)")
        lo, hi, n, log = float(around) / 10, float(around) * 10, default_points, True
        if not (math.isfinite(hi) and lo > 0):
            raise SweepError(f"--vary {name}: the scenario's value is beyond the range of a float, which a sweep "
                             "computes in", hint=f"give a range, e.g. {name}=LO:HI:N")
    else:
        if len(parts) not in (2, 3):
            raise SweepError(f"--vary {text!r}: expected {name}=LO:HI[:N][:log]")
        exact = [parse_value(p, q.dimension, where=f"--vary {name}", quantity=name) for p in parts[:2]]
        lo, hi = (float(e) for e in exact)
        for e, f, p in zip(exact, (lo, hi), parts, strict=False):
            # a sweep computes in floats: 1e400 became inf ("need LO <= HI") and 1e-400 became 0 ("starts at 0")
            if not math.isfinite(f) or (f == 0) != (e == 0):
                raise SweepError(f"--vary {name}: {p} is beyond the range of a float, which a sweep computes in "
                                 f"(magnitudes {FLOAT_RANGE} in SI units)",
                                 hint="use margin for exact edges, or a range inside that")
        note = _bare_note(name, q, parts[:2], unit, scale)
        try:
            n = int(parts[2]) if len(parts) == 3 else default_points
        except ValueError:
            raise SweepError(f"--vary {text!r}: the number of points must be an integer") from None
    if n < 1:
        raise SweepError(f"--vary {name}: the number of points must be at least 1")
    check_grid_size([n], where=f"--vary {name}")
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi < lo:
        raise SweepError(f"--vary {name}: need LO <= HI")
    if lo == hi and n > 1:  # n copies of one point
        raise SweepError(f"--vary {name}: LO = HI gives one point, not {n}", hint=f"give {name}=LO:HI:N with LO < HI, "
                         f"or --set {name}=... for one value")
    if q.outside_domain(lo) or q.outside_domain(hi):
        # a value outside the quantity's domain is no value of it (as --set refuses it): a claim read there
        # would "hold" at points that do not exist
        end = f"starts at {lo:g}" if q.outside_domain(lo) else f"ends at {hi:g}"
        raise SweepError(f"--vary {name}: {name} must be {q.domain_words}, but the range {end}",
                         hint=f"start the range inside the domain, e.g. {name}=LO:HI with LO > 0"
                         if q.domain == "positive" else f"keep the range {q.domain_words}")
    if log:
        if lo <= 0:
            raise SweepError(f"--vary {name}: a logarithmic axis needs LO > 0")
        values = np.geomspace(lo, hi, n)
    else:
        values = np.linspace(lo, hi, n)
    if q.whole and not q.integer:  # a count (sequences, tokens) takes whole values: 21.88 seq is no batch (an
        # integer quantity, a parallel degree, keeps its grid: a point off the integers is infeasible and said)
        whole = float(q.unit_si)  # one unit of the count in SI (1 seq is 1)
        first, last = math.ceil(lo / whole - 1e-9), math.floor(hi / whole + 1e-9)
        if first > last:
            raise SweepError(f"--vary {name}: {name} counts whole units, and no whole value lies in the range",
                             hint=f"widen it to hold a whole number of {unit}")
        rounded = np.unique(np.clip(np.round(values / whole), first, last)) * whole
        if len(rounded) < len(values):
            note = (note + "; " if note else "") + (f"--vary {name}: {name} counts whole units, so the {len(values)} "
                                                    f"points are {len(rounded)} whole values")
        values = rounded
    return Axis(name, values, unit, scale, log, note)


_COUNTED = {"token", "seq", "param"}  # a bare number of these is what a person means (batch=1:4096)


def _bare_note(name: str, q, ends: list[str], unit: str, scale: float) -> str:
    """A note when LO or HI is a bare number for a quantity measured in FLOP, bytes, seconds or dollars: it was
    read in SI base units (flops=100:1000 is 100 FLOP/s, not 100 TFLOP/s), which the CSV shows in ``unit``."""
    from derive.errors import UnitError
    from derive.model.parse import parse_value
    from derive.model.units import format_dimension

    if all(base in _COUNTED for base, _ in q.dimension.powers):
        return ""
    bare = []
    for text in ends:
        try:
            parse_value(text, q.dimension, quantity=name, si=False)
        except UnitError:
            bare.append(text)
        except DeriveError:
            pass
    if not bare:
        return ""
    si = format_dimension(q.dimension)
    return (f"--vary {name}: {', '.join(bare)} without a unit read in SI base units ({si}); give units, "
            f"like {name}=100 {unit}:1000 {unit}" if scale != 1.0 else
            f"--vary {name}: {', '.join(bare)} without a unit read in SI base units ({si})")


# targets ----------------------------------------------------------------------------------------------

@dataclass
class Target:
    text: str
    kind: str  # "quantity" | "claim"
    header: str
    expr: sp.Expr | None = None
    claim: Claim | None = None
    unit: str = ""
    scale: float = 1.0


def resolve_target(library: Library, text: str) -> Target:
    from derive.model.evaluate import expression_for
    from derive.model.units import format_dimension, parse_unit

    try:
        d = library.resolve(text)
    except DeriveError:
        d = None
    if isinstance(d, Claim):
        return Target(text, "claim", f"{d.id} [holds; {NOT_A_PROOF}]", claim=d)
    name, expr, dim = expression_for(library, text)
    if any(p.denominator != 1 for _, p in dim.powers):
        raise SweepError(f"{name} has the dimension {format_dimension(dim)}, which no unit expresses",
                         hint="sweep quantities, or expressions of whole powers of quantities")
    unit, scale = format_dimension(dim), 1.0
    if isinstance(expr, sp.Symbol) and library.quantity_of(expr).display_unit:
        try:
            u = parse_unit(library.quantity_of(expr).display_unit)
            if u.dimension == dim:
                unit, scale = library.quantity_of(expr).display_unit, float(u.scale)
        except DeriveError:
            pass
    return Target(text, "quantity", f"{name} [{unit}]", expr=expr, unit=unit, scale=scale)


# grid sweeps ------------------------------------------------------------------------------------------

@dataclass
class SweepResult:
    columns: list[str]
    data: list[np.ndarray]  # one array per column (floats; booleans as 0/1; NaN = missing)
    kinds: list[str]  # "axis" | "quantity" | "claim" | "label"
    labels: dict[str, list[str]] = field(default_factory=dict)  # text columns (preset names)
    notes: list[str] = field(default_factory=list)
    points: int = 0
    evaluations: int = 0
    seconds: float = 0.0

    def to_csv(self) -> str:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow(self.columns)
        cols = [_column_text(self.labels[c] if k == "label" else arr, k)
                for c, arr, k in zip(self.columns, self.data, self.kinds, strict=True)]
        buf.writelines(",".join(row) + "\n" for row in zip(*cols, strict=True))
        return buf.getvalue()


def _column_text(values, kind: str) -> list[str]:
    """A column as CSV fields: ``%.12g`` floats, 1/0 for claims, empty for a missing value."""
    if kind == "label":
        return [_quote(str(v)) for v in values]
    arr = np.asarray(values, dtype=float)
    if kind == "claim":
        out = np.where(arr > 0.5, "1", "0").tolist()
    else:
        out = [f"{v:.12g}" for v in arr.tolist()]
    if np.isnan(arr).any():
        for i in np.nonzero(np.isnan(arr))[0].tolist():
            out[i] = ""
    return out


def _quote(text: str) -> str:
    if any(ch in text for ch in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _compiled_quantity(library: Library, scenario: Scenario, target: Target, keep: Sequence[str],
                       symbols: Sequence[sp.Symbol]) -> Callable[..., np.ndarray]:
    e = situate(library, scenario).require(target.expr, target.text, keep=keep,
                                           pinned=[n for n in keep if library.is_derived(n)], as_written=True)
    return numpy_function(e, symbols)


def _claim_formulas(library: Library, scenario: Scenario, target: Target, keep: Sequence[str],
                    symbols: Sequence[sp.Symbol]) -> tuple[Formula, list[Formula]]:
    claim = target.claim
    assert claim is not None
    pins = frozenset(n for n in keep if library.is_derived(n))
    goal, hyps = situate(library, scenario).statement(claim, keep=keep, pinned=pins).formula()
    goal, hyps, _ = eliminate_forall(library, claim, goal, hyps, symbols[0] if symbols else sp.Symbol("_"))
    free = goal.free_symbols() - set(symbols)
    for h in hyps:
        free |= h.free_symbols() - set(symbols)
    if free:
        raise ScenarioError(f"cannot sweep {claim.id}: {', '.join(sorted(map(str, free)))} stay free "
                            "(no scenario value, or universally quantified)",
                            hint="sweep them with --vary or give them values with --set")
    return goal, list(hyps)


def compiled_claim(library: Library, scenario: Scenario, target: Target, keep: Sequence[str],
                   symbols: Sequence[sp.Symbol]) -> Callable[..., np.ndarray]:
    """Where the claim holds: its hypotheses and its goal all true (margin's reading)."""
    from derive.kernel.logic import And

    goal, hyps = _claim_formulas(library, scenario, target, keep, symbols)
    return numpy_formula(And((*hyps, goal)) if hyps else goal, symbols)


def compiled_goal_and_hypotheses(library: Library, scenario: Scenario, target: Target, keep: Sequence[str],
                                 symbols: Sequence[sp.Symbol]) -> tuple[Callable[..., np.ndarray],
                                                                        Callable[..., np.ndarray] | None]:
    """The claim's goal (1, 0, or NaN where it has no value) and where its hypotheses hold (None: it has none),
    compiled from one expansion.
    Where the hypotheses fail the check says ``inconsistent`` (an instance claim) or the claim says nothing
    (a general one): neither is "does not hold"."""
    from derive.kernel.logic import And

    goal, hyps = _claim_formulas(library, scenario, target, keep, symbols)
    hyp = numpy_formula(And(tuple(hyps)) if len(hyps) > 1 else hyps[0], symbols) if hyps else None
    return numpy_truth(goal, symbols), hyp


UNDEFINED_NOTE = ("an empty claim field: the claim's goal has no value there (a zero denominator, a root or "
                  "logarithm of a negative number; derive check says unknown), so it neither holds nor fails")
HYPOTHESES_NOTE = ("an empty claim field: the claim's hypotheses fail there (derive check says inconsistent for an "
                   "instance claim; a general claim says nothing there), so it neither holds nor fails")


def sweep_grid(library: Library, scenario: Scenario, targets: Sequence[Target], axes: Sequence[Axis]) -> SweepResult:
    """Every target at every point of the full grid of ``axes`` (the first axis varies slowest)."""
    import time

    start = time.perf_counter()
    if not axes:
        raise SweepError("give at least one --vary Q=LO:HI:N (or --presets)")
    names = [a.name for a in axes]
    if len(set(names)) != len(names):
        raise SweepError("each quantity may be swept once")
    check_grid_size([len(a.values) for a in axes], len(axes) + len(targets))
    # a swept member of an input table (--vary tp) uses the table as --set tp=... would: its other members
    # take their defaults (pp = 1), each said in a note; one chip in one stage reads its layout alike
    scenario, defaults_notes = with_input_table_defaults(library, scenario, names)
    symbols = [library.quantities[n].sym for n in names]
    mesh = np.meshgrid(*[a.values for a in axes], indexing="ij")
    flat = [m.reshape(-1) for m in mesh]
    columns = [f"{a.name} [{a.unit}]" for a in axes]
    data: list[np.ndarray] = [f / a.scale for f, a in zip(flat, axes, strict=True)]
    kinds = ["axis"] * len(axes)
    evaluations = 0
    hypotheses_fail = undefined_goal = False
    # a value an input rule's remedy gives that follows a swept one (the chip's FP8 rate where the swept weights
    # are 1 byte) is carried per point beside the axes, as --set of the point's values would give it
    rules = grid_rules(library, scenario, names, [a.values for a in axes])
    carried = rules.carried if rules is not None else {}
    names_all = [*names, *carried]
    symbols_all = [*symbols, *(library.quantities[n].sym for n in carried)]
    flat_all = [*flat, *carried.values()]
    domains = GridDomains(library, scenario, names_all, symbols_all, flat_all)
    for t in targets:
        if t.kind == "claim":
            goal, hyp = compiled_goal_and_hypotheses(library, scenario, t, names_all, symbols_all)
            values = np.broadcast_to(goal(*flat_all), flat[0].shape).astype(float)
            undefined_goal = undefined_goal or bool(np.isnan(values).any())
            if hyp is not None:
                held = np.broadcast_to(hyp(*flat_all), values.shape)
                values = np.where(held, values, np.nan)
                hypotheses_fail = hypotheses_fail or not bool(held.all())
        else:
            fn = _compiled_quantity(library, scenario, t, names_all, symbols_all)
            values = np.broadcast_to(fn(*flat_all), flat[0].shape) / t.scale
        data.append(domains.masked(t, values))
        columns.append(t.header)
        kinds.append(t.kind)
        evaluations += flat[0].size
    notes = [f"claims are evaluated numerically per point: a {NOT_A_PROOF}"] if any(t.kind == "claim"
                                                                                    for t in targets) else []
    notes += [HYPOTHESES_NOTE] if hypotheses_fail else []
    notes += [UNDEFINED_NOTE] if undefined_goal else []
    notes += domains.notes(int(flat[0].size))
    notes += [a.note for a in axes if a.note]
    notes += defaults_notes
    notes += [n for n in input_notes(library, scenario, [_target_of(t) for t in targets], names_all)
              if n not in notes]
    feasible = _feasible_grid(library, scenario, names_all, symbols_all, flat_all)
    if feasible is not None and (feasible < 0.5).any():
        failing = infeasible_by_constraint(library, scenario, names_all, symbols_all, flat_all)
        which = ", ".join(f"{cid} at {int(np.broadcast_to(f, flat[0].shape).sum())}" for cid, f in failing.items()
                          if f.any())
        notes.append(INFEASIBLE_NOTE.format(n=int((feasible < 0.5).sum()), of=int(flat[0].size), which=which))
    # the library's input rules at each point, decided exactly as --set would decide them (feasible = 0 where one
    # breaks); None when no rule names a swept quantity, so such a sweep is as it was
    if rules is not None:
        if feasible is None:
            feasible = np.ones(flat[0].shape)
        feasible = np.where(rules.broken, 0.0, feasible)
        notes += rules.notes(int(flat[0].size))
    if feasible is not None:
        columns.append(FEASIBLE_COLUMN)
        kinds.append("claim")
        data.append(feasible)
    return SweepResult(columns, data, kinds, notes=notes, points=int(flat[0].size), evaluations=evaluations,
                       seconds=time.perf_counter() - start)


def _target_of(target: Target):
    """What a target reads: its claim, or its expression."""
    return target.claim if target.claim is not None else target.expr


def _target_exprs(target: Target) -> list[sp.Expr]:
    """The expressions a target reads: a quantity's, or a claim's hypotheses and goal."""
    if target.expr is not None:
        return [target.expr]
    assert target.claim is not None
    return [e for f in (*target.claim.hypotheses, target.claim.goal) for e in f.exprs()]


class GridDomains:
    """Where the definitions a target expands through are defined on a grid, as ``derive eval`` and the
    kernel read them: a definition's ``domain`` that fails at a point (or cannot be evaluated there) leaves
    the target without a value at that point (an empty field, as ``eval`` says "undefined" and ``check``
    decides nothing there), and a derived quantity whose value breaks its declared domain or integrality is
    counted in a note (``eval`` prints such a value with a note).  Decided per point in floats, like the
    sweep itself; each definition's condition is compiled once."""

    def __init__(self, library: Library, scenario: Scenario, names: Sequence[str], symbols: Sequence[sp.Symbol],
                 flat: Sequence[np.ndarray]) -> None:
        self._library, self._symbols, self._flat = library, list(symbols), list(flat)
        # a varied derived quantity is a leaf at each point, as in the targets and the feasibility column
        self._pins = (frozenset(scenario.pinned) - set(names)) | {n for n in names if library.is_derived(n)}
        self._values = situate(library, scenario).values_except(names)
        self._outside: dict[str, np.ndarray | None] = {}  # definition id -> where its domain fails
        self._declared: dict[str, np.ndarray | None] = {}  # definition id -> where its value breaks the declaration
        self._empties: dict[str, list[str]] = {}  # definition id -> the targets it emptied
        self._order: list[str] = []

    def masked(self, target: Target, values: np.ndarray) -> np.ndarray:
        """``values`` of ``target`` with NaN wherever a definition it uses is outside its domain."""
        out = np.asarray(values, dtype=float)
        for d in definitions_used(self._library, *_target_exprs(target), pinned=self._pins):
            if d.id not in self._order:
                self._order.append(d.id)
            outside = self._domain_fails(d)
            if outside is not None and outside.any():
                out = np.where(outside, np.nan, out)
                self._empties.setdefault(d.id, []).append(target.text)
            self._declaration_breaks(d)
        return out

    def _domain_fails(self, d) -> np.ndarray | None:
        if d.id not in self._outside:
            self._outside[d.id] = None
            if d.domain is not None:
                f = self._library.formula_expand(d.domain, self._pins).subs(self._values)
                if not (f.free_symbols() - set(self._symbols)):  # an input without a value: undecided, as eval
                    holds = numpy_formula(f, self._symbols)(*self._flat)
                    self._outside[d.id] = ~np.broadcast_to(holds, self._flat[0].shape)
        return self._outside[d.id]

    def _declaration_breaks(self, d) -> None:
        if d.id in self._declared:
            return
        self._declared[d.id] = None
        q = d.defines
        if q.domain == "real" and not q.integer:
            return
        e = self._library.expand(q.sym, self._pins).subs(self._values)
        if e.free_symbols - set(self._symbols):
            return
        v = numpy_function(e, self._symbols)(*self._flat)
        with np.errstate(all="ignore"):
            bad = ~np.asarray(q.inside_domain(v), dtype=bool)
            if q.integer:
                bad |= ~_near_integer(v)
        outside = self._outside.get(d.id)  # a point outside the domain has no value to break the declaration
        self._declared[d.id] = bad & np.isfinite(v) & (~outside if outside is not None else True)

    def notes(self, points: int) -> list[str]:
        """One note per definition that emptied a field or whose declaration breaks at some point."""
        out = []
        defs = self._library.definition_of
        by_id = {d.id: d for d in defs.values()}
        for did in self._order:
            d = by_id[did]
            outside = self._outside.get(did)
            if did in self._empties and outside is not None:
                out.append(f"{int(outside.sum())} of {points} points are outside the domain of {d.defines.name} "
                           f"({d.defines.name} is defined only where {formula_words(d.domain)}, definition {did}): "
                           f"{', '.join(self._empties[did])} empty there")
            bad = self._declared.get(did)
            if bad is not None and bad.any():
                q = d.defines
                declared = q.domain_words if q.domain != "real" else ""
                what = " and ".join(w for w in (declared, "an integer" if q.integer else "") if w)
                out.append(f"{int(bad.sum())} of {points} points give {q.name} a value that is not {what}, as it "
                           f"is declared (definition {did}); such values are printed, as derive eval prints them")
        return out


FEASIBLE_COLUMN = "feasible"
INFEASIBLE_NOTE = ("{n} of {of} points are infeasible (feasible = 0: a bound of the library's FEASIBILITY claims "
                   "fails there: {which}); their values describe no deployment")


def _feasible_grid(library: Library, scenario: Scenario, names: Sequence[str], symbols: Sequence[sp.Symbol],
                   flat: Sequence[np.ndarray]) -> np.ndarray | None:
    """1 where every feasibility constraint of the library holds at the point, 0 where one fails, NaN where
    one cannot be evaluated (a float comparison per point, like the claim columns); None without constraints."""
    from derive.kernel.logic import And

    goals = _feasibility_goals(library, scenario, names, symbols)
    if goals is None:
        return None
    if not goals:
        return np.full(flat[0].shape, np.nan)
    goal = And(tuple(goals.values())) if len(goals) > 1 else next(iter(goals.values()))
    with np.errstate(all="ignore"):
        return np.broadcast_to(numpy_formula(goal, symbols)(*flat), flat[0].shape).astype(float)


def infeasible_by_constraint(library: Library, scenario: Scenario, names: Sequence[str],
                             symbols: Sequence[sp.Symbol], flat: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    """Per feasibility constraint of the library that the grid's values decide, where it fails (a bool array of
    the grid's shape; a point where it cannot be evaluated is not counted as failing), in the library's order."""
    goals = _feasibility_goals(library, scenario, names, symbols) or {}
    out: dict[str, np.ndarray] = {}
    for cid, goal in goals.items():
        with np.errstate(all="ignore"):
            held = np.broadcast_to(numpy_formula(goal, symbols)(*flat), flat[0].shape).astype(float)
        out[cid] = held < 0.5
    return out


def _feasibility_goals(library: Library, scenario: Scenario, names: Sequence[str],
                       symbols: Sequence[sp.Symbol]) -> dict | None:
    """Each feasibility constraint's statement with every value but the grid's put in, by constraint id, for those
    the grid's quantities decide; None without constraints."""
    from derive.whatif.feasibility import constraint_statement, constraints

    claims = constraints(library)
    if not claims:
        return None
    # a varied derived quantity is a leaf at each point (--set layout_chips=16 pins it), as in the rules and targets
    pins = (frozenset(scenario.pinned) - set(names)) | {n for n in names if library.is_derived(n)}
    subst = situate(library, scenario).values_except(names)
    every = {c.id: library.formula_expand(constraint_statement(c), pins).subs(subst) for c in claims}
    # a bound the scenario gives no inputs for (the model's maximum context at the lecture's scenario) is
    # undecided, as in ``feasibility``: the others still mark the points
    return {cid: g for cid, g in every.items() if not (g.free_symbols() - set(symbols))}


# preset sweeps ------------------------------------------------------------------------------------------

def preset_pairs(library: Library) -> list[tuple[str, str]]:
    from derive.model.scenario import PresetStore

    store = PresetStore.discover(library.preset_dirs)
    return [(h, m) for h in store.names("hardware") for m in store.names("model")]


def sweep_presets(library: Library, targets: Sequence[Target], *, scenario: str | None = None,
                  sets: Sequence[str] = (), assumes: Sequence[str] = (),
                  pairs: Sequence[tuple[str, str]] | None = None) -> SweepResult:
    """Every target under every hardware × model pair (on top of the base scenario and ``--set``).

    Targets are compiled once per distinct set of pins and evaluated on arrays of per-pair values.
    A pair whose scenario lacks an input gives an empty field."""
    import time

    from derive.model.scenario import broken_input_constraints, build_scenario

    start = time.perf_counter()
    pairs = list(pairs) if pairs is not None else preset_pairs(library)
    if not pairs:
        raise SweepError("the library has no hardware and model presets to sweep")
    # a pair whose scenario breaks an input rule (--set tp=16 where a chip's domain is 8) is built all the same
    # and marked infeasible below, with the rule: the other pairs still answer
    scenarios = [build_scenario(library, scenario=scenario, hardware=h, model=m, sets=sets, assumes=assumes,
                                refuse_broken_rules=False) for h, m in pairs]
    columns = ["hardware", "model"]
    kinds = ["label", "label"]
    labels = {"hardware": [h for h, _ in pairs], "model": [m for _, m in pairs]}
    data: list[np.ndarray] = [np.zeros(len(pairs)), np.zeros(len(pairs))]
    groups: dict[frozenset[str], list[int]] = {}
    for i, s in enumerate(scenarios):
        groups.setdefault(frozenset(s.pinned), []).append(i)
    evaluations = 0
    hypotheses_fail = undefined_goal = False
    outside: dict[tuple[str, str, str], list[int]] = {}  # (definition, quantity, condition) -> pairs outside
    for t in targets:
        out = np.full(len(pairs), np.nan)
        for pins, idx in groups.items():
            if t.kind == "claim":
                from derive.kernel.logic import And

                ref = situate(library, scenarios[idx[0]]).without_values()
                goal, hyps = ref.statement(t.claim).formula()
                goal, hyps, _ = eliminate_forall(library, t.claim, goal, hyps, sp.Symbol("_"))
                f = And((*hyps, goal)) if hyps else goal
                syms = sorted(f.free_symbols(), key=str)
                quantified = sorted(str(s) for s in syms if s in {q.sym for q in t.claim.forall})
                if quantified:
                    raise SweepError(f"cannot sweep {t.claim.id} numerically: it is universally quantified over "
                                     f"{', '.join(quantified)}", hint="use --check for real verdicts")
                fn = numpy_truth(goal, syms)  # NaN where the goal has no value; the hypotheses below
                hyp = numpy_formula(And(tuple(hyps)) if len(hyps) > 1 else hyps[0], syms) if hyps else None
            else:
                syms = sorted(library.expand(t.expr, pins).free_symbols, key=str)
                fn = numpy_function(library.expand(t.expr, pins), syms)
            arrays = []
            for s in syms:
                name = library.quantity_of(s).name
                arrays.append(np.array([float(scenarios[i].value(name)) if name in scenarios[i].values else np.nan
                                        for i in idx]))
            values = fn(*arrays) if syms else fn()
            values = np.broadcast_to(np.asarray(values, dtype=float), (len(idx),))
            if t.kind == "claim":
                missing = np.zeros(len(idx), dtype=bool)
                for a in arrays:
                    missing |= np.isnan(a)
                values = np.where(missing, np.nan, values)
                if hyp is not None:
                    with np.errstate(all="ignore"):
                        ok = np.broadcast_to(np.asarray(hyp(*arrays) if syms else hyp(), dtype=bool), (len(idx),))
                    values = np.where(ok | missing, values, np.nan)
                    hypotheses_fail = hypotheses_fail or bool((~ok & ~missing).any())
                    undefined_goal = undefined_goal or bool((np.isnan(values) & ok & ~missing).any())
                else:
                    undefined_goal = undefined_goal or bool((np.isnan(values) & ~missing).any())
            values = values if t.kind == "claim" else values / t.scale
            # a pair outside a definition's domain has no value there (exact, per pair, as derive eval decides it)
            exprs = _target_exprs(t)
            if any(d.domain is not None for d in definitions_used(library, *exprs, pinned=pins)):
                empty = np.zeros(len(idx), dtype=bool)
                for j, i in enumerate(idx):
                    broken = domain_breaks(library, scenarios[i], exprs, scenarios[i].pinned,
                                           scenarios[i].substitution(library), kinds=("domain",), first=True)
                    if broken:
                        empty[j] = True
                        outside.setdefault((broken[0].definition, broken[0].quantity,
                                            broken[0].declared), []).append(i)
                values = np.where(empty, np.nan, values)
            out[idx] = values
            evaluations += len(idx)
        columns.append(t.header)
        kinds.append(t.kind)
        data.append(out)
    notes = [f"claims are evaluated numerically per pair: a {NOT_A_PROOF} (derive sweep --presets --check runs "
             "the prover)"] if any(t.kind == "claim" for t in targets) else []
    notes += [HYPOTHESES_NOTE] if hypotheses_fail else []
    notes += [UNDEFINED_NOTE] if undefined_goal else []
    for (did, quantity, declared), at in outside.items():
        notes.append(f"{len(set(at))} of {len(pairs)} pairs are outside the domain of {quantity} ({quantity} is "
                     f"defined only where {declared}, definition {did}): the targets that use it are empty there")
    # what every pair's scenario says of the inputs read (the lecture's chip price, kept for every chip)
    common: list[str] | None = None
    for s in scenarios:
        said = input_notes(library, s, [_target_of(t) for t in targets])
        common = said if common is None else [n for n in common if n in said]
    notes += [n for n in common or [] if n not in notes]
    from derive.whatif.feasibility import constraints, feasibility

    feasible = None
    if constraints(library):  # exact, per pair: 1 feasible, 0 a bound fails, empty when it cannot be decided
        reports = [feasibility(library, s) for s in scenarios]
        feasible = np.array([np.nan if f.undecided and f.feasible else float(f.feasible) for f in reports])
        if (feasible < 0.5).any():
            counts: dict[str, int] = {}
            for f in reports:
                for v in f.violations:
                    counts[v.claim] = counts.get(v.claim, 0) + 1
            which = ", ".join(f"{cid} at {n}" for cid, n in counts.items())
            notes.append(INFEASIBLE_NOTE.format(n=int((feasible < 0.5).sum()), of=len(pairs), which=which).replace(
                "points", "pairs"))
    broken = [[b for b in broken_input_constraints(library, s.values, s.pinned) if b.refuses] for s in scenarios]
    if any(broken):
        feasible = np.ones(len(pairs)) if feasible is None else feasible
        feasible = np.where([bool(b) for b in broken], 0.0, feasible)
        notes += pair_rule_notes(broken, pairs)
    if feasible is not None:
        columns.append(FEASIBLE_COLUMN)
        kinds.append("claim")
        data.append(feasible)
    return SweepResult(columns, data, kinds, labels=labels, notes=notes, points=len(pairs), evaluations=evaluations,
                       seconds=time.perf_counter() - start)


# figures -----------------------------------------------------------------------------------------------

def save_figure(fig, path: str | os.PathLike) -> None:
    """Save deterministically (fixed metadata and SVG hash salt), atomically."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower() or "png"
    metadata = {"svg": {"Date": None, "Creator": None},
                "pdf": {"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None},
                "png": {"Software": None}}.get(fmt)
    if metadata is None:
        raise SweepError(f"figure format '{fmt}' is not supported (use .png, .svg or .pdf)")
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, metadata=metadata, dpi=150 if fmt == "png" else "figure")
    write_output_file(path, buf.getvalue(), where=f"figure {path}")


def output_target(path: str | os.PathLike, *, where: str) -> Path:
    """The file a user-named output path writes: the path itself, or where a symbolic link points (the link is
    kept and its target replaced, as a plain ``> FILE`` would); ``OutputError`` (one line, ``where``) for an empty
    name and for a path that exists and is not a regular file (a folder, ``/dev/null``, a FIFO): the atomic
    write renames over its target and would replace a device file; and for a path through a file (``afile/x``),
    said before any work."""
    from derive.checking.cache import not_a_folder_on_the_way
    from derive.errors import OutputError

    where = where.rstrip()  # "--out " for an empty name: the option alone
    if not str(path).strip():
        raise OutputError("the file name is empty", where=where, hint="name a file to write")
    path = Path(path)
    try:
        target = path.resolve() if path.is_symlink() else path
        special = target.exists() and not target.is_file()
    except (OSError, RuntimeError) as err:  # a link that loops: RuntimeError
        why = getattr(err, "strerror", None) or "a symbolic link that loops"
        raise OutputError(f"cannot write {path}: {why}", where=where) from None
    if special:
        raise OutputError(f"{path} exists and is not a regular file", where=where,
                          hint="name a file to write (omit the option to print to stdout)")
    blocked = not_a_folder_on_the_way(target, itself=False)  # said before any work
    if blocked is not None:
        raise OutputError(f"cannot write {path}: {blocked} is not a folder", where=where,
                          hint="name a file in a folder")
    return target


def write_output_file(path: str | os.PathLike, data: bytes, *, where: str) -> None:
    """Write a user-named output file atomically (``output_target``: a link's target); ``OutputError`` (one
    line, ``where``) when it cannot be."""
    from derive.checking.cache import atomic_write
    from derive.errors import OutputError

    target = output_target(path, where=where)
    if not atomic_write(target, data):
        raise OutputError(f"cannot write {path}", where=where,
                          hint="check that its folder exists or can be created, is writable and has space")
    user_mode(target)


def user_mode(path: Path) -> None:
    """The atomic write's temporary file is private (0600); a user's output gets the usual mode."""
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(path, 0o666 & ~umask)
    except OSError:
        pass


def pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    matplotlib.rcParams.update({"svg.hashsalt": "derive", "svg.fonttype": "path", "font.size": 9,
                                "pdf.fonttype": 42, "savefig.bbox": "tight"})
    import matplotlib.pyplot as plt

    return plt


def sweep_figure(result: SweepResult, axes: Sequence[Axis], path: str | os.PathLike, title: str = "") -> None:
    """1 axis: one panel per target against it; 2 axes: a map per target; presets: a chip × model map."""
    plt = pyplot()
    feasible = (result.data[result.columns.index(FEASIBLE_COLUMN)] if FEASIBLE_COLUMN in result.columns
                else None)
    targets = [i for i, k in enumerate(result.kinds) if k in ("quantity", "claim")
               and result.columns[i] != FEASIBLE_COLUMN]
    if not targets:
        raise SweepError("nothing to plot")
    n = len(targets)
    fig, panels = plt.subplots(n, 1, figsize=(6.4, 3.0 * n + 0.4), squeeze=False, layout="constrained")
    for panel, ti in zip(panels[:, 0], targets, strict=True):
        values = result.data[ti]
        colour = {"cmap": "RdYlGn", "vmin": 0, "vmax": 1} if result.kinds[ti] == "claim" else {"cmap": "viridis"}
        if result.labels:  # presets: hardware × model
            hws = sorted(set(result.labels["hardware"]))
            models = sorted(set(result.labels["model"]))
            grid = np.full((len(hws), len(models)), np.nan)
            for i, (h, m) in enumerate(zip(result.labels["hardware"], result.labels["model"], strict=True)):
                grid[hws.index(h), models.index(m)] = values[i]
            im = panel.imshow(grid, aspect="auto", interpolation="nearest", **colour)
            panel.set_xticks(range(len(models)), models, rotation=45, ha="right")
            panel.set_yticks(range(len(hws)), hws)
            fig.colorbar(im, ax=panel)
            if feasible is not None:  # an infeasible pair is crossed out
                for i, (h, m) in enumerate(zip(result.labels["hardware"], result.labels["model"], strict=True)):
                    if feasible[i] < 0.5:
                        panel.text(models.index(m), hws.index(h), "×", ha="center", va="center", color="black")
        elif len(axes) == 1:
            panel.plot(axes[0].printed, values, lw=1.4)
            bad = feasible < 0.5 if feasible is not None else None
            if bad is not None and bad.any():  # infeasible points: grey band and crosses
                panel.plot(axes[0].printed[bad], values[bad], "x", color="0.4", ms=4, label="infeasible")
                panel.legend(fontsize=7, loc="best")
            if len(axes[0].printed) > 1:  # the swept range, even where nothing is drawn (all fields empty)
                panel.set_xlim(axes[0].printed[0], axes[0].printed[-1])
            if result.kinds[ti] == "claim":
                panel.set_ylim(-0.05, 1.05)
            panel.set_xlabel(f"{axes[0].name} [{axes[0].unit}]")
            if axes[0].log:
                panel.set_xscale("log")
        else:
            a, b = axes[0], axes[1]
            shape = (len(a.values), len(b.values)) + (() if len(axes) == 2 else (-1,))
            grid = values.reshape(shape)
            if grid.ndim > 2:
                grid = grid[..., 0]
            mesh = panel.pcolormesh(b.printed, a.printed, grid, shading="nearest", **colour)
            panel.set_xlabel(f"{b.name} [{b.unit}]")
            panel.set_ylabel(f"{a.name} [{a.unit}]")
            if a.log:
                panel.set_yscale("log")
            if b.log:
                panel.set_xscale("log")
            fig.colorbar(mesh, ax=panel)
            if feasible is not None and (feasible < 0.5).any():  # infeasible region hatched
                bad = (feasible < 0.5).reshape(shape)
                bad = bad[..., 0] if bad.ndim > 2 else bad
                panel.contourf(b.printed, a.printed, bad.astype(float), levels=[0.5, 1.5], colors="none",
                               hatches=["xx"])
        panel.set_title(result.columns[ti], fontsize=9)
    if title:
        fig.suptitle(title, fontsize=10)
    save_figure(fig, path)
    plt.close(fig)
