"""Input rules at the points a command visits: a library's ``INPUT_CONSTRAINTS`` decided per point, exactly.

A scenario built with ``--set tp=3`` is refused when it breaks a rule (``derive.model.scenario``); a sweep that
*varies* a quantity a rule names visits many values of it, and each point is decided here as that ``--set``
would decide it: a refusing rule that fails marks the point infeasible, a rule that only notes (uneven
pipeline stages) is counted, and a rule whose inputs the scenario does not all give stays undecided.

Exact, not float: the values of the grid are floats, but a rule such as "tp divides the query heads" is a
statement about integers.  Each swept value is read exactly (an integer quantity's value within a relative
1e-12 of a whole number is that number, the CSV prints it so; any other float is its exact binary fraction),
and the rule is evaluated in Python integers and fractions on the product of the axes it names, once per
combination of their values, then broadcast to the grid.  An integer quantity swept off the integers
(``tp = 2.5`` from a linear grid) is no value of it: ``--set`` refuses it, so the point is infeasible too.

Only rules that name a swept quantity are evaluated; the others were decided when the scenario was built.
A library without rules, or a sweep of quantities no rule names, costs one check of the rules' symbols.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import sympy as sp

from derive.kernel.logic import And, Formula, Iff, Implies, IsInteger, Not, Or, Rel
from derive.model.library import Library
from derive.model.scenario import BrokenRule, InputRule, Scenario
from derive.model.situation import situate

# a float this close to a whole number is that number: a grid computed in floats (geomspace gives
# 7.999999999999999 for 8), closer than the CSV's 12 significant digits show
INTEGER_RTOL = 1e-12


@dataclass(frozen=True)
class RuleCount(InputRule):
    """One input rule broken at some points: the rule and how many points break it."""

    points: int


@dataclass
class GridRules:
    """The input rules over a grid: ``broken`` per point (a refusing rule fails there, or an integer quantity
    is off the integers), each rule's count, and each integer quantity's count of points off the integers;
    ``carried``: the per-point values (SI, one per point of the flattened grid) of each quantity a rule's remedy
    gives that changes across the grid, for the command to evaluate beside the axes, and ``remedied`` what the
    remedies did, with their counts."""

    broken: np.ndarray  # bool, one per point of the flattened grid
    rules: list[RuleCount] = field(default_factory=list)
    off_integers: list[tuple[str, int]] = field(default_factory=list)
    carried: dict[str, np.ndarray] = field(default_factory=dict)
    remedied: list[str] = field(default_factory=list)

    def notes(self, of: int, unit: str = "points", marked: str = "feasible = 0") -> list[str]:
        """One line per remedy applied, per broken rule and per integer quantity swept off the integers;
        ``marked``: how the command marks such a point."""
        out = list(self.remedied)
        for name, n in self.off_integers:
            out.append(f"{name} is off the integers at {n} of {of} {unit} ({marked}): {name} is a whole number "
                       f"and --set refuses any other value; choose a range and a number of points that land on "
                       f"whole numbers, e.g. {name}=1:16:16")
        for r in self.rules:
            c = r.constraint
            if r.refuses:
                out.append(f"input rule broken at {r.points} of {of} {unit} ({marked}; --set would refuse "
                           f"each): {c['rule']} [{c['id']}]: {c['reason']}")
            else:
                out.append(f"{c['rule']} does not hold at {r.points} of {of} {unit} (a note, not infeasible) "
                           f"[{c['id']}]: {c['reason']}")
        return out


def exact_values(values: np.ndarray, integer: bool) -> tuple[list[int | Fraction], np.ndarray]:
    """The swept floats read exactly, and where an integer quantity's value is off the integers."""
    out: list[int | Fraction] = []
    off = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values.tolist()):
        nearest = round(v)
        if integer and abs(v - nearest) <= INTEGER_RTOL * max(1.0, abs(v)):
            out.append(int(nearest))
            continue
        out.append(Fraction(v))
        off[i] = integer
    return out, off


@dataclass
class _GridRemedies:
    """The input rules with remedies over a grid that varies a value they read, decided point by point as
    ``--set`` of the point's values would decide them (``remedies_at``): ``carried`` the per-point values (SI, one
    per point of the flattened grid) of each quantity a remedy gives that changes across the grid, ``handled`` the
    rules decided here (``_decided_rules`` leaves them), ``rules`` those still broken after their remedies with their
    counts, ``broken`` where a refusing one is, and ``lines`` what the remedies did, with their counts."""

    carried: dict[str, np.ndarray]
    handled: frozenset[str]
    rules: list[RuleCount]
    broken: np.ndarray
    lines: list[str]


def _grid_remedies(library: Library, scenario: Scenario, names: Sequence[str],
                   axis_values: Sequence[np.ndarray]) -> _GridRemedies | None:
    """The input rules whose remedies read a swept quantity, at every combination of the swept values they read
    (then broadcast to the full grid of ``axis_values``, the first varying slowest); None when no such rule."""
    from itertools import product

    from derive.model.scenario import broken_input_constraints, remedies_at, remedy_reads, remedy_targets

    rules = [c for c in library.input_constraints if remedy_reads(library, c) & set(names)]
    if not rules:
        return None
    read = set().union(*(remedy_reads(library, c) for c in rules))
    idx = [i for i, n in enumerate(names) if n in read]
    shape = tuple(len(v) for v in axis_values)
    sub = tuple(len(axis_values[i]) for i in idx)
    exact = {i: exact_values(np.asarray(axis_values[i], dtype=float), library.quantities[names[i]].integer)[0]
             for i in idx}
    handled = frozenset(c["id"] for c in rules)
    targets = [n for n in remedy_targets(library) if n not in names]  # a swept value is the user's: never replaced
    given: dict[str, list] = {n: [] for n in targets}
    notes: dict[str, int] = {}
    fails: dict[str, np.ndarray] = {c["id"]: np.zeros(sub, dtype=bool) for c in rules}
    for combo in product(*[range(n) for n in sub]):
        point = {names[i]: sp.Rational(exact[i][k]) for i, k in zip(idx, combo, strict=True)}
        values, said = remedies_at(library, scenario, point)
        for name in targets:
            given[name].append(values[name].value if name in values else None)
        for _, text in said:
            notes[text] = notes.get(text, 0) + 1
        pinned = frozenset(n for n in values if library.is_derived(n))
        for b in broken_input_constraints(library, values, pinned):
            if b.constraint["id"] in handled:
                fails[b.constraint["id"]][combo] = True
    every = int(np.prod(shape))
    per_combo = every // max(1, int(np.prod(sub)))

    def spread(a: np.ndarray) -> np.ndarray:
        return np.broadcast_to(a.reshape([shape[i] if i in idx else 1 for i in range(len(shape))]),
                               shape).reshape(-1)

    carried = {}
    for name, got in given.items():
        now = scenario.values[name].value if name in scenario.values else None
        if any(v != now for v in got):  # a remedy moves it somewhere on the grid
            carried[name] = spread(np.array([np.nan if v is None else float(v) for v in got]).reshape(sub))
    counts = [RuleCount(c, int(fails[c["id"]].sum()) * per_combo) for c in rules if fails[c["id"]].any()]
    broken = np.zeros(every, dtype=bool)
    for c in rules:
        if c["refuse"]:
            broken |= spread(fails[c["id"]])
    lines = [f"{text} (at {n * per_combo} of {every} points, as --set of their values gives it)"
             for text, n in notes.items()]
    return _GridRemedies(carried, handled, counts, broken, lines)


def _decided_rules(library: Library, scenario: Scenario,
                   names: Sequence[str], skip: frozenset[str] = frozenset()) -> list[tuple[dict, Formula, list[int]]]:
    """The rules that name a swept quantity and whose other inputs the scenario gives: each constraint, its
    relation with the scenario's other values substituted, and the indices of the swept names it rests on."""
    if not library.input_constraints:
        return []
    symbols = [library.quantities[n].sym for n in names]
    swept = set(symbols)
    # a varied derived quantity is a leaf (--set layout_chips=16 pins it), as a sweep's targets keep it
    pins = (frozenset(scenario.pinned) - set(names)) | {n for n in names if library.is_derived(n)}
    decided: list[tuple[dict, Formula, list[int]]] = []
    subst = None
    for c in library.input_constraints:
        if c["id"] in skip:
            continue
        relation = library.formula_expand(c["relation"], pins)
        if not relation.free_symbols() & swept:
            continue  # decided once, where the scenario was built
        if subst is None:
            subst = situate(library, scenario).values_except(names)
        relation = relation.subs(subst)
        if relation.free_symbols() - swept:
            continue  # an input the scenario does not give: undecided, as where a scenario is built
        decided.append((c, relation, [i for i, s in enumerate(symbols) if s in relation.free_symbols()]))
    return decided


def names_a_rule(library: Library, scenario: Scenario, name: str) -> bool:
    """Whether an input rule the scenario can decide names the quantity ``name``."""
    return bool(_decided_rules(library, scenario, [name]))


def grid_rules(library: Library, scenario: Scenario, names: Sequence[str],
               axis_values: Sequence[np.ndarray]) -> GridRules | None:
    """The library's input rules that name a swept quantity, at every point of the full grid of
    ``axis_values`` (one 1-D array of SI values per name, the first varying slowest); None when no rule
    names one (nothing to mark).  A rule whose remedy reads a swept value is decided after its remedy at each
    point, and the values the remedy gives are carried (``_grid_remedies``)."""
    remedies = _grid_remedies(library, scenario, names, axis_values)
    decided = _decided_rules(library, scenario, names, remedies.handled if remedies is not None else frozenset())
    if not decided and remedies is None:
        return None
    symbols = [library.quantities[n].sym for n in names]
    shape = tuple(len(v) for v in axis_values)
    exact: dict[int, list[int | Fraction]] = {}
    off: dict[int, np.ndarray] = {}
    for i in sorted({i for _, _, idx in decided for i in idx}):
        exact[i], off[i] = exact_values(np.asarray(axis_values[i], dtype=float),
                                        library.quantities[names[i]].integer)
    broken = np.zeros(shape, dtype=bool)
    counts: list[RuleCount] = []
    for c, relation, idx in decided:
        fails = _fails_on_product(relation, [symbols[i] for i in idx], [exact[i] for i in idx])
        full = np.broadcast_to(fails.reshape([shape[i] if i in idx else 1 for i in range(len(shape))]), shape)
        if full.any():
            counts.append(RuleCount(c, int(full.sum())))
            if c["refuse"]:
                broken |= full
    off_integers = []
    for i, mask in off.items():
        if mask.any():
            full = np.broadcast_to(mask.reshape([shape[j] if j == i else 1 for j in range(len(shape))]), shape)
            off_integers.append((names[i], int(full.sum())))
            broken |= full
    if remedies is None:
        return GridRules(broken.reshape(-1), counts, off_integers)
    return GridRules(broken.reshape(-1) | remedies.broken, [*remedies.rules, *counts], off_integers,
                     remedies.carried, remedies.lines)


def refused_at(library: Library, scenario: Scenario, name: str, values: Sequence[int | Fraction]) -> np.ndarray:
    """Where a refusing input rule fails once ``name`` takes each of ``values`` (exact numbers, SI), the rest
    of the scenario fixed: one bool per value (an integer quantity's non-integer value is refused too)."""
    out = np.zeros(len(values), dtype=bool)
    if library.quantities[name].integer:
        out |= np.array([Fraction(v).denominator != 1 for v in values], dtype=bool)
    sym = library.quantities[name].sym
    for c, relation, idx in _decided_rules(library, scenario, [name]):
        if c["refuse"] and idx:
            out |= _fails_on_product(relation, [sym], [list(values)])
    return out


def _fails_on_product(relation: Formula, symbols: Sequence[sp.Symbol],
                      columns: Sequence[list[int | Fraction]]) -> np.ndarray:
    """Where ``relation`` is false on the product of ``columns`` (one list of exact values per symbol): an
    array of that product's shape.  Where it is not defined (a division by zero) it is not decided, so not
    false.  Integer and fraction arithmetic on object arrays; a relation with anything but sums, products and
    integer powers is evaluated point by point with the kernel's exact ``evaluate``."""
    shape = tuple(len(c) for c in columns)
    grids = np.meshgrid(*[np.array(c, dtype=object) for c in columns], indexing="ij") if columns else []
    env = dict(zip(symbols, grids, strict=True))
    try:
        truth, defined = _formula(relation, env, shape)
    except _NotArithmetic:
        out = np.zeros(shape, dtype=bool)
        for index in np.ndindex(*shape):
            point = {s: sp.Rational(g[index]) for s, g in env.items()}
            try:
                out[index] = not relation.evaluate(point)
            except Exception:  # noqa: BLE001 - not defined there: not decided, as where a scenario is built
                out[index] = False
        return out
    return defined & ~truth


class _NotArithmetic(Exception):
    """An expression beyond sums, products and integer powers (the exact object-array path)."""


_RECIPROCAL = np.frompyfunc(lambda x: Fraction(1) / x if x != 0 else Fraction(0), 1, 1)
_WHOLE = np.frompyfunc(lambda x: x.denominator == 1, 1, 1)


def _expr(e: sp.Expr, env: dict, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(exact values, defined) of ``e`` on object arrays of ints and Fractions."""
    if e.is_Symbol:
        return env[e], np.ones(shape, dtype=bool)
    if e.is_Integer:
        return np.full(shape, int(e), dtype=object), np.ones(shape, dtype=bool)
    if e.is_Rational:
        return np.full(shape, Fraction(int(e.p), int(e.q)), dtype=object), np.ones(shape, dtype=bool)
    if e.is_Add or e.is_Mul:
        parts = [_expr(a, env, shape) for a in e.args]
        value, defined = parts[0]
        for v, d in parts[1:]:
            value = value + v if e.is_Add else value * v
            defined = defined & d
        return value, defined
    if e.is_Pow and e.exp.is_Integer:
        base, defined = _expr(e.base, env, shape)
        n = int(e.exp)
        if n >= 0:
            return base ** n, defined
        nonzero = (base != 0).astype(bool)
        return _RECIPROCAL(base ** -n), defined & nonzero
    raise _NotArithmetic(str(e))


def _formula(f: Formula, env: dict, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(truth, defined) of a formula on the product grid, exactly."""
    if isinstance(f, Rel):
        left, dl = _expr(f.lhs, env, shape)
        right, dr = _expr(f.rhs, env, shape)
        diff = left - right
        truth = {"==": diff == 0, "!=": diff != 0, "<": diff < 0, "<=": diff <= 0, ">": diff > 0,
                 ">=": diff >= 0}[f.op]
        return np.asarray(truth, dtype=bool), dl & dr
    if isinstance(f, IsInteger):
        value, defined = _expr(f.expr, env, shape)
        return np.asarray(_WHOLE(value), dtype=bool), defined
    if isinstance(f, (And, Or)):
        parts = [_formula(a, env, shape) for a in f.args]
        combine = np.logical_and if isinstance(f, And) else np.logical_or
        truth, defined = parts[0]
        for t, d in parts[1:]:
            truth, defined = combine(truth, t), defined & d
        return truth, defined
    if isinstance(f, Not):
        truth, defined = _formula(f.arg, env, shape)
        return ~truth, defined
    if isinstance(f, Implies):
        (p, dp), (c, dc) = _formula(f.premise, env, shape), _formula(f.conclusion, env, shape)
        return ~p | c, dp & dc
    if isinstance(f, Iff):
        (a, da), (b, db) = _formula(f.left, env, shape), _formula(f.right, env, shape)
        return a == b, da & db
    raise _NotArithmetic(type(f).__name__)


def pair_rule_notes(broken: Sequence[Sequence[BrokenRule]], pairs: Sequence[tuple[str, str]]) -> list[str]:
    """One line per refusing input rule that some preset pairs break (``broken``: each pair's broken rules):
    how many, the first pair with its numbers, and the reason."""
    first: dict[str, tuple[BrokenRule, tuple[str, str]]] = {}
    count: dict[str, int] = {}
    for rules, pair in zip(broken, pairs, strict=True):
        for b in rules:
            first.setdefault(b.id, (b, pair))
            count[b.id] = count.get(b.id, 0) + 1
    out = []
    for rid, (b, (hw, model)) in first.items():
        c = b.constraint
        out.append(f"input rule broken at {count[rid]} of {len(pairs)} pairs (feasible = 0; --set would refuse "
                   f"each): {c['rule']} [{rid}], e.g. {hw} x {model} ({b.numbers}): {c['reason']}")
    return out
