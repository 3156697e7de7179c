"""Numeric values of quantities and expressions under a scenario, exactly first.

A definition may declare its domain (``Definition.domain``); a value computed through a definition
outside its domain is not a number: the ``Evaluation`` has ``exact = value = None`` and a ``reason``
naming the relation that fails with both values (``context = 200k token/seq ≥ critical_context =
30.1k token/seq``), the condition as declared and the definition's id, and a ``hint`` naming the layer that
gave each value (``domain_breaks``: the same words for ``derive check``, ``margin`` and ``card``).

The exact value is the expression with the scenario's exact values substituted (sympy's automatic
simplification only; never ``nsimplify``, which guessed irrational forms for exact rationals; floats by
the one rule of ``derive.model.numbers``).  The float ``value`` is computed within a precision budget
(``derive.model.numbers.numeric``), so ``exp(10**10)`` ends at once: ``value`` None with a reason, the
display ``1.078e4342944819``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp

from derive.errors import BudgetError, MissingValueError, ScenarioError, UndefinedValueError, UnitError
from derive.kernel.logic import And, Formula, Not, Or, Rel, replace
from derive.model.declarations import Definition
from derive.model.dimensions import dimension_of
from derive.model.library import Library
from derive.model.numbers import exactify, numeric
from derive.model.scenario import Scenario
from derive.model.situation import situate
from derive.model.units import Dimension, format_dimension, parse_unit


@dataclass(frozen=True)
class Evaluation:
    name: str
    exact: sp.Expr | None  # in SI base units; None outside a definition's domain
    dimension: Dimension
    unit: str  # the unit `value` is expressed in
    value: float | None  # exact / unit scale
    inputs: tuple[str, ...]  # base quantities it was computed from
    reason: str | None = None  # why there is no value (outside a domain)
    fixed_unit: bool = False  # `unit` was asked for (--unit): keep it when displaying
    # derived quantities it goes through whose values break their declared domain or integrality (the
    # checker reads no claim there: ``Library.definition_conditions``), one phrase each
    notes: tuple[str, ...] = ()
    # the inputs whose value changes the result at this scenario's other values (a dense model's expert
    # settings multiply zero skipped experts): notes about an input the value does not depend on stay quiet
    depends_on: tuple[str, ...] | None = None
    hint: str | None = None  # where there is no value: which layer gave the values that break a domain
    # the feasibility bounds the scenario breaks (a value where it cannot exist), as notes: set by the Python
    # API's ``Values[name]``, so that one value taken from a result keeps its mark
    infeasible: tuple[str, ...] = ()

    def __str__(self) -> str:
        return "\n".join([f"{self.name} = {self.display}", *self.infeasible])

    def __repr__(self) -> str:  # not the dataclass's field dump (an exact fraction of a thousand digits)
        return f"<Evaluation {self}>"

    @property
    def used(self) -> tuple[str, ...]:
        """The inputs the value depends on at this scenario (all of ``inputs`` where not computed)."""
        return self.inputs if self.depends_on is None else self.depends_on

    @property
    def display(self) -> str:
        """``2,400 seq``, ``14.4 ms``, or ``undefined (...)``."""
        from derive.model.display import format_value

        if self.exact is None:
            return f"undefined ({self.reason})" if self.reason else "undefined"
        try:
            shown = format_value(self.in_unit(), self.unit, fixed=self.fixed_unit)
        except BudgetError as err:  # a repr or a notebook cell never raises: the budget is said in its place
            return f"not shown: {err.message}"
        return f"{shown} (note: {'; '.join(self.notes)})" if self.notes else shown

    def in_unit(self) -> sp.Expr | None:
        """The exact value in ``unit``."""
        if self.exact is None:
            return None
        scale = parse_unit(self.unit).scale
        return self.exact / sp.Rational(scale.numerator, scale.denominator)

    def _repr_html_(self) -> str:
        """A notebook shows the value with its unit and the inputs it was computed from."""
        from html import escape

        inputs = ", ".join(f"<code>{escape(n)}</code>" for n in self.inputs) or "none"
        marks = "".join(f"<div style='color:#b91c1c'>{escape(n)}</div>" for n in self.infeasible)
        return (f"<div><code>{escape(self.name)}</code> = <b>{escape(self.display)}</b>{marks}"
                f"<div style='font-size:smaller'>from {inputs}</div></div>")

    def to_json(self) -> dict:
        from derive.model.display import display_json

        # ``value`` is in ``unit``; ``exact`` in SI base units, ``exact_unit`` (20 ms: value 20, exact 1/50 s)
        out = {"name": self.name, "value": self.value, "exact": None if self.exact is None else str(self.exact),
               "exact_unit": format_dimension(self.dimension), "unit": self.unit, "inputs": list(self.inputs),
               "display": self.display}
        if self.notes:
            out["declaration_notes"] = list(self.notes)
        if self.infeasible:
            out["infeasible"] = list(self.infeasible)
        if self.exact is None:
            out["reason"] = self.reason
            if self.hint:
                out["hint"] = self.hint
        elif self.value is None:
            out["reason"] = display_json(self.in_unit(), self.unit).get("reason")
        return out


def expression_for(library: Library, text: str) -> tuple[str, sp.Expr, Dimension]:
    """A quantity name, a definition id, or an expression in quantity names, with its dimension as the parser read
    it (numbers with units are folded into the expression: ``dimension_of`` it again would read 20 ms as 0.02)."""
    return _expression(library, text)


def _expression(library: Library, text: str) -> tuple[str, sp.Expr, Dimension]:
    if text in library.quantities:
        q = library.quantities[text]
        return text, q.sym, q.dimension
    if "." in text and text in library.declarations and isinstance(library.declarations[text], Definition):
        q = library.declarations[text].defines  # type: ignore[union-attr]
        return text, q.sym, q.dimension
    from derive.model.parse import parse_quantity_expression

    expr, dim = parse_quantity_expression(text, library.symbols(), library.dimension, where="eval")
    return text, expr, dim


def evaluate(library: Library, scenario: Scenario, text: str, unit: str | None = None, *,
             dependence: bool = False) -> Evaluation:
    """The value of a quantity, definition or expression at the scenario.  ``dependence``: also find which
    inputs the value depends on at the scenario's other values (``Evaluation.depends_on``, for the notes of
    a command; a substitution per input, so only where it is asked)."""
    name, expr, dim = _expression(library, text)
    situation = situate(library, scenario)
    expanded = situation.expand(expr)
    missing = situation.missing(expr)
    if missing:
        raise MissingValueError(name, missing)
    # an input the scenario gives no value is one the value does not depend on at its values (``missing``)
    inputs = tuple(sorted(str(s) for s in expanded.free_symbols if str(s) in scenario.values))
    if any(p.denominator != 1 for _, p in dim.powers):
        raise UnitError(f"{name} has the dimension {format_dimension(dim)}, which no unit expresses", where="eval",
                        hint="take roots and fractional powers of ratios of one dimension, like "
                             "sqrt(flops/hbm_bandwidth * 1 byte/FLOP)")
    if unit is not None and not unit.strip():
        raise UnitError("the unit is empty", where="--unit", hint='name a unit, like "ms" or "TB/s" (or omit --unit)')
    if unit:
        u = parse_unit(unit, where="--unit")
        if u.dimension != dim:
            q = library.quantities.get(name)
            like = (q.display_unit or q.unit) if q is not None else format_dimension(dim)
            raise UnitError(f"cannot express {name} ({format_dimension(dim)}) in {unit} "
                            f"({format_dimension(u.dimension)})", where="--unit",
                            hint=f"give a unit of {format_dimension(dim)}, like {like}")
        unit_text = unit
    else:
        unit_text = format_dimension(dim)
    broken = first_domain_break(library, scenario, expr)
    if broken is not None:
        return Evaluation(name, None, dim, unit_text, None, inputs, broken.words(), bool(unit), hint=broken.hint())
    try:
        exact = situation.exact(expr, name)
    except UndefinedValueError as err:
        return Evaluation(name, None, dim, unit_text, None, inputs, err.message, bool(unit))
    undefined = _undefined_inside(library, scenario, expr)
    if undefined is not None:  # a part the expansion folded away (t*(1/t) is 1) has no value: check says so too
        return Evaluation(name, None, dim, unit_text, None, inputs, undefined, bool(unit))
    if exact.free_symbols or exact.is_extended_real is False:
        raise ScenarioError(f"{name} does not evaluate to a real number ({_short(exact)})")
    scale = parse_unit(unit_text).scale
    value = numeric(exact / sp.Rational(scale.numerator, scale.denominator), what=name).value
    notes = declaration_violations(library, scenario, expr)
    return Evaluation(name, exact, dim, unit_text, value, inputs, None, bool(unit), notes,
                      _depends_on(library, scenario, expanded, inputs) if dependence else None)


def _undefined_inside(library: Library, scenario: Scenario, expr: sp.Expr) -> str | None:
    """Why a definition ``expr`` goes through has no value at the scenario although the expansion has one
    (``Library.definition_conditions`` of kind "defined" false there); None when every one holds."""
    values = scenario.substitution(library)
    for label, c in library.definition_conditions([expr], scenario.pinned, kinds=("defined",)):
        if not c.free_symbols() <= set(values):
            continue
        try:
            holds = c.subs(values, strict=True).evaluate({})
        except (UndefinedValueError, TypeError, ValueError):
            continue  # a condition without a value: the exact evaluation above has said so where it matters
        if not holds:
            return f"{label}, which fails at the values given"
    return None


def _depends_on(library: Library, scenario: Scenario, expanded: sp.Expr, inputs: tuple[str, ...]) -> tuple[str, ...]:
    """The inputs still free in ``expanded`` once every other input takes its scenario value."""
    values = scenario.substitution(library)
    out = []
    for n in inputs:
        sym = library.quantities[n].sym
        rest = {s: v for s, v in values.items() if s != sym}
        try:
            if sym in expanded.xreplace(rest).free_symbols:
                out.append(n)
        except (TypeError, ValueError, ZeroDivisionError):  # an undefined part at the others' values: keep it
            out.append(n)
    return tuple(out)


def declaration_violations(library: Library, scenario: Scenario, expr: sp.Expr) -> tuple[str, ...]:
    """Derived quantities ``expr`` expands through whose values under the scenario break their declared
    domain (positive, non-negative) or integrality, as phrases (``d = -1 is outside its declared domain
    (positive)``); empty when every one holds or cannot be computed."""
    out: list[str] = []
    for d in definitions_used(library, expr, pinned=scenario.pinned, domains=False):
        q = d.defines
        v = value_of(library, scenario, q.sym)
        if v is None or not v.is_Rational:
            continue
        if q.outside_domain(v):
            out.append(f"{q.name} = {v} is outside its declared domain ({q.domain})")
        if q.integer and not v.is_integer:
            out.append(f"{q.name} = {v} is not an integer, as it is declared")
    return tuple(out)


def domain_violation(library: Library, scenario: Scenario, expr: sp.Expr) -> str | None:
    """Why ``expr`` has no value under the scenario: the first definition it expands through whose
    domain fails there, with the failing relation and both values and the definition's id; None when
    every domain holds (or cannot be decided because an input is missing)."""
    broken = first_domain_break(library, scenario, expr)
    return broken.words() if broken is not None else None


def first_domain_break(library: Library, scenario: Scenario, expr: sp.Expr) -> DomainBreak | None:
    """The first definition ``expr`` expands through whose ``domain`` fails at the scenario's values."""
    breaks = domain_breaks(library, scenario, [expr], scenario.pinned, scenario.substitution(library),
                           kinds=("domain",), first=True)
    return breaks[0] if breaks else None


@dataclass(frozen=True)
class DomainBreak:
    """A definition's ``domain`` (kind "domain"), or what its quantity declares (kind "declared": its
    domain or integrality), that the values of its inputs break: in the user's symbols, with the values."""

    kind: str  # domain | declared
    definition: str  # the definition's id
    quantity: str  # the quantity it defines
    declared: str  # the condition as written: "context < critical_context", "positive", "an integer"
    failing: str  # what fails, with values: "context = 200k token/seq ≥ critical_context = 30.11k token/seq"
    inputs: tuple[tuple[str, str, str], ...]  # (input, its value with a unit, the layer that set it)

    def words(self) -> str:
        """The failure and the condition: ``a = 3 ≥ b = 2; cb is defined only where a < b (definition t.cb)``."""
        if self.kind == "domain":
            return (f"{self.failing}; {self.quantity} is defined only where {self.declared} "
                    f"(definition {self.definition})")
        return f"{self.failing}, but {self.quantity} is declared {self.declared} (definition {self.definition})"

    def origins(self) -> str:
        """Which layer gave each input the failure rests on: ``a = 3, b = 2 from --set``."""
        by_origin: dict[str, list[str]] = {}
        for name, shown, origin in self.inputs:
            by_origin.setdefault(origin, []).append(f"{name} = {shown}")
        return "; ".join(f"{', '.join(items)} from {origin}" for origin, items in by_origin.items())

    def hint(self) -> str:
        """Which values to change, and how."""
        given = self.origins()
        where = "is defined" if self.kind == "domain" else f"is {self.declared}"
        return (f"{given}; " if given else "") + f"give values where {self.quantity} {where} with --set " \
            "(or another preset)"


def domain_breaks(library: Library, scenario: Scenario, exprs: list[sp.Expr], pinned: frozenset[str],
                  values: dict[sp.Symbol, sp.Expr], kinds: tuple[str, ...] = ("domain", "declared"),
                  first: bool = False, origins: dict[str, str] | None = None) -> list[DomainBreak]:
    """The definitions ``exprs`` expand through (``pinned`` quantities are leaves) whose domain (kind
    "domain") or whose quantity's declared domain or integrality (kind "declared") is false at ``values``
    (by symbol, exact), outermost first; one that cannot be decided there (an input without a value, no
    real value) is left out.  ``origins``: the layer that gave a value, by name, over the scenario's own
    (``ScenarioValue.origin``).  Wording only: deciding stays with the kernel."""
    def value(e: sp.Expr) -> sp.Expr | None:
        expanded = library.expand(e, pinned)
        if not expanded.free_symbols <= set(values):
            return None
        try:
            v = exactify(replace(expanded, values, strict=True))
        except UndefinedValueError:
            return None
        return v if v.is_number and v.is_extended_real else None

    out: list[DomainBreak] = []
    for d in definitions_used(library, *exprs, pinned=pinned):
        q = d.defines
        failing = None
        if "domain" in kinds and d.domain is not None:
            failing = _failing_relation(library, value, d.domain)
            if failing is not None:
                out.append(DomainBreak("domain", d.id, q.name, formula_words(d.domain), failing,
                                       _inputs(library, scenario, list(d.domain.exprs()), pinned, values, origins)))
        if "declared" in kinds and failing is None:
            v = value(q.sym)
            if v is not None and v.is_Rational and (q.outside_domain(v) or (q.integer and not v.is_integer)):
                declared = q.domain_words if q.outside_domain(v) else "an integer"
                failing = f"{q.name} = {d.expr} = {_shown(v, format_dimension(q.dimension))}"
                out.append(DomainBreak("declared", d.id, q.name, declared, failing,
                                       _inputs(library, scenario, [q.sym], pinned, values, origins)))
        if first and out:
            break
    return out


def _shown(value: sp.Expr, unit: str) -> str:
    from derive.model.display import format_value

    return format_value(value, unit)


def _inputs(library: Library, scenario: Scenario, exprs: list[sp.Expr], pinned: frozenset[str],
            values: dict[sp.Symbol, sp.Expr], origins: dict[str, str] | None) -> tuple[tuple[str, str, str], ...]:
    given = origins or {}
    out = []
    for s in sorted(set().union(*(library.expand(e, pinned).free_symbols for e in exprs)), key=str):
        name = str(s)
        q = library.quantities.get(name)
        v = values.get(s)
        if q is None or v is None:
            continue
        origin = given.get(name) or (scenario.values[name].origin if name in scenario.values else "") or "the scenario"
        out.append((name, _shown(v, format_dimension(q.dimension)), origin))
    return tuple(out)


def definitions_used(library: Library, *exprs: sp.Expr, pinned: frozenset[str],
                     domains: bool = True) -> list[Definition]:
    """The definitions ``exprs`` expand through (pinned quantities are leaves; with ``domains``, those
    a definition's domain uses count too), outermost first."""
    out: list[Definition] = []
    seen: set[str] = set()
    stack = sorted(set().union(*(e.free_symbols for e in exprs)), key=str)
    while stack:
        name = str(stack.pop(0))
        if name in seen or name in pinned:
            continue
        seen.add(name)
        d = library.definition_of.get(name)
        if d is not None:
            out.append(d)
            inner = [d.expr, *(d.domain.exprs() if domains and d.domain is not None else [])]
            stack.extend(sorted(set().union(*(e.free_symbols for e in inner)), key=str))
    return out


_NEGATED = {"<": "≥", "<=": ">", ">": "≤", ">=": "<", "==": "≠", "!=": "="}
_WORDS = {"<": "<", "<=": "≤", ">": ">", ">=": "≥", "==": "=", "!=": "≠"}


def _failing_relation(library: Library, value: Callable[[sp.Expr], sp.Expr | None], f: Formula) -> str | None:
    """A relation of ``f`` that is false at the values ``value`` gives, in words with values; None when
    ``f`` holds or cannot be evaluated."""
    if isinstance(f, Rel):
        sides = [value(e) for e in (f.lhs, f.rhs)]
        if any(v is None for v in sides):
            return None
        if Rel(sides[0], f.op, sides[1]).evaluate({}):
            return None
        return (f"{_side_words(library, f.lhs, sides[0], f.rhs)} {_NEGATED[f.op]} "
                f"{_side_words(library, f.rhs, sides[1], f.lhs)}")
    if isinstance(f, And):
        for a in f.args:
            r = _failing_relation(library, value, a)
            if r is not None:
                return r
        return None
    if isinstance(f, Or):
        reasons = [_failing_relation(library, value, a) for a in f.args]
        return " and ".join(r for r in reasons if r) if all(reasons) else None
    if isinstance(f, Not):
        values = [value(e) for e in f.arg.exprs()]
        if any(v is None for v in values):
            return None
        holds = f.arg.map_exprs(value).evaluate({})
        return f"not ({formula_words(f.arg)})" if holds else None
    return None


def value_of(library: Library, scenario: Scenario, e: sp.Expr) -> sp.Expr | None:
    """The exact value of ``e`` under the scenario (definitions expanded, pins kept), or None when an
    input is missing or the value is not a real number (``Situation.value``)."""
    return situate(library, scenario).value(e)


def _short(expr: object, limit: int = 80) -> str:
    text = str(expr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _side_words(library: Library, e: sp.Expr, value: sp.Expr, other: sp.Expr) -> str:
    from derive.model.display import format_value

    dim = dimension_of(other if e.is_number else e, library.dimension, where="domain")
    shown = format_value(value, format_dimension(dim))
    return shown if e.is_number else f"{e} = {shown}"


def formula_words(f: Formula) -> str:
    """A condition as a reader says it, in the quantities' names: ``context < critical_context``."""
    if isinstance(f, Rel):
        return f"{f.lhs} {_WORDS[f.op]} {f.rhs}"
    if isinstance(f, (And, Or)):
        word = " and " if isinstance(f, And) else " or "
        return word.join(f"({formula_words(a)})" if isinstance(a, (And, Or)) else formula_words(a)
                         for a in f.args)
    if isinstance(f, Not):
        return f"not ({formula_words(f.arg)})"
    return str(f)
