"""Numeric values of quantities and expressions under a scenario, exactly first.

A definition may declare its domain (``Definition.domain``); a value computed through a definition
outside its domain is not a number: the ``Evaluation`` has ``exact = value = None`` and a ``reason``
naming the relation that fails with both values (``context = 200k token/seq ≥ critical_context =
30.1k token/seq``).

The exact value is the expression with the scenario's exact values substituted (sympy's automatic
simplification only; never ``nsimplify``, which guessed irrational forms for exact rationals; floats by
the one rule of ``derive.model.numbers``).  The float ``value`` is computed within a precision budget
(``derive.model.numbers.numeric``), so ``exp(10**10)`` ends at once: ``value`` None with a reason, the
display ``1.078e4342944819``.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from derive.errors import MissingValueError, ScenarioError, UndefinedValueError, UnitError
from derive.kernel.logic import And, Formula, Not, Or, Rel
from derive.model.declarations import Definition
from derive.model.dimensions import dimension_of
from derive.model.library import Library
from derive.model.numbers import numeric
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
        shown = format_value(self.in_unit(), self.unit, fixed=self.fixed_unit)
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
        return (f"<div><code>{escape(self.name)}</code> = <b>{escape(self.display)}</b>"
                f"<div style='font-size:smaller'>from {inputs}</div></div>")

    def to_json(self) -> dict:
        from derive.model.display import display_json

        out = {"name": self.name, "value": self.value, "exact": None if self.exact is None else str(self.exact),
               "unit": self.unit, "inputs": list(self.inputs), "display": self.display}
        if self.notes:
            out["declaration_notes"] = list(self.notes)
        if self.exact is None:
            out["reason"] = self.reason
        elif self.value is None:
            out["reason"] = display_json(self.in_unit(), self.unit).get("reason")
        return out


def expression_for(library: Library, text: str) -> tuple[str, sp.Expr]:
    """A quantity name, a definition id, or an expression in quantity names."""
    name, expr, _ = _expression(library, text)
    return name, expr


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
    inputs = tuple(sorted(str(s) for s in expanded.free_symbols))
    missing = situation.missing(expr)
    if missing:
        raise MissingValueError(name, missing)
    if any(p.denominator != 1 for _, p in dim.powers):
        raise UnitError(f"{name} has the dimension {format_dimension(dim)}, which no unit expresses", where="eval",
                        hint="take roots and fractional powers of ratios of one dimension, like "
                             "sqrt(flops/hbm_bandwidth * 1 byte/FLOP)")
    if unit:
        u = parse_unit(unit)
        if u.dimension != dim:
            q = library.quantities.get(name)
            like = (q.display_unit or q.unit) if q is not None else format_dimension(dim)
            raise UnitError(f"cannot express {name} ({format_dimension(dim)}) in {unit} "
                            f"({format_dimension(u.dimension)})", where="--unit",
                            hint=f"give a unit of {format_dimension(dim)}, like {like}")
        unit_text = unit
    else:
        unit_text = format_dimension(dim)
    reason = domain_violation(library, scenario, expr)
    if reason is not None:
        return Evaluation(name, None, dim, unit_text, None, inputs, reason, bool(unit))
    try:
        exact = situation.exact(expr, name)
    except UndefinedValueError as err:
        return Evaluation(name, None, dim, unit_text, None, inputs, err.message, bool(unit))
    if exact.free_symbols or exact.is_extended_real is False:
        raise ScenarioError(f"{name} does not evaluate to a real number ({_short(exact)})")
    scale = parse_unit(unit_text).scale
    value = numeric(exact / sp.Rational(scale.numerator, scale.denominator), what=name).value
    notes = declaration_violations(library, scenario, expr)
    return Evaluation(name, exact, dim, unit_text, value, inputs, None, bool(unit), notes,
                      _depends_on(library, scenario, expanded, inputs) if dependence else None)


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
    for d in definitions_used(library, expr, scenario.pinned):
        q = d.defines
        v = value_of(library, scenario, q.sym)
        if v is None or not v.is_Rational:
            continue
        if q.outside_domain(v):
            out.append(f"{q.name} = {v} is outside its declared domain ({q.domain})")
        if q.integer and not v.is_integer:
            out.append(f"{q.name} = {v} is not an integer, as it is declared")
    return tuple(out)


def definitions_used(library: Library, expr: sp.Expr, pinned: frozenset[str]) -> list[Definition]:
    """The definitions ``expr`` expands through (pinned quantities are leaves), outermost first."""
    out: list[Definition] = []
    seen: set[str] = set()
    stack = sorted(expr.free_symbols, key=str)
    while stack:
        name = str(stack.pop(0))
        if name in seen or name in pinned:
            continue
        seen.add(name)
        d = library.definition_of.get(name)
        if d is not None:
            out.append(d)
            stack.extend(sorted(d.expr.free_symbols, key=str))
    return out


def domain_violation(library: Library, scenario: Scenario, expr: sp.Expr) -> str | None:
    """Why ``expr`` has no value under the scenario: the first definition it expands through whose
    domain fails there, with the failing relation and both values; None when every domain holds (or
    cannot be decided because an input is missing)."""
    for d in definitions_used(library, expr, scenario.pinned):
        if d.domain is None:
            continue
        failing = _failing_relation(library, scenario, d.domain)
        if failing is not None:
            return f"{failing}; {d.defines.name} is defined only where {_formula_words(d.domain)}"
    return None


_NEGATED = {"<": "≥", "<=": ">", ">": "≤", ">=": "<", "==": "≠", "!=": "="}
_WORDS = {"<": "<", "<=": "≤", ">": ">", ">=": "≥", "==": "=", "!=": "≠"}


def _failing_relation(library: Library, scenario: Scenario, f: Formula) -> str | None:
    """A relation of ``f`` that is false under the scenario, in words with values; None when ``f`` holds
    or cannot be evaluated."""
    if isinstance(f, Rel):
        sides = [value_of(library, scenario, e) for e in (f.lhs, f.rhs)]
        if any(v is None for v in sides):
            return None
        if Rel(sides[0], f.op, sides[1]).evaluate({}):
            return None
        return (f"{_side_words(library, f.lhs, sides[0], f.rhs)} {_NEGATED[f.op]} "
                f"{_side_words(library, f.rhs, sides[1], f.lhs)}")
    if isinstance(f, And):
        for a in f.args:
            r = _failing_relation(library, scenario, a)
            if r is not None:
                return r
        return None
    if isinstance(f, Or):
        reasons = [_failing_relation(library, scenario, a) for a in f.args]
        return " and ".join(r for r in reasons if r) if all(reasons) else None
    if isinstance(f, Not):
        values = [value_of(library, scenario, e) for e in f.arg.exprs()]
        if any(v is None for v in values):
            return None
        holds = f.arg.map_exprs(lambda e: value_of(library, scenario, e)).evaluate({})
        return f"not ({_formula_words(f.arg)})" if holds else None
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


def _formula_words(f: Formula) -> str:
    if isinstance(f, Rel):
        return f"{f.lhs} {_WORDS[f.op]} {f.rhs}"
    if isinstance(f, (And, Or)):
        word = " and " if isinstance(f, And) else " or "
        return word.join(_formula_words(a) for a in f.args)
    if isinstance(f, Not):
        return f"not ({_formula_words(f.arg)})"
    return str(f)
