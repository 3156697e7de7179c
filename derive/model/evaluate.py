"""Numeric values of quantities and expressions under a scenario, exactly first.

The exact value is the expression with the scenario's exact values substituted (sympy's automatic
simplification only; never ``nsimplify``, see ``derive.model.numbers``).  The printed value is computed
from it within a precision budget, so ``exp(10**10)`` ends at once with ``1.07775e+4342944819``.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from derive.errors import ScenarioError, UnitError
from derive.model.declarations import Definition
from derive.model.dimensions import dimension_of
from derive.model.library import Library
from derive.model.numbers import NumericValue, exactify, numeric
from derive.model.scenario import Scenario
from derive.model.units import Dimension, format_dimension, parse_unit


@dataclass(frozen=True)
class Evaluation:
    name: str
    exact: sp.Expr  # in SI base units
    dimension: Dimension
    unit: str  # the unit `value` is expressed in
    value: float | None  # exact / unit scale as a float; None when beyond the range of a float (see `note`)
    inputs: tuple[str, ...]  # base quantities it was computed from
    text: str = ""  # the value to 6 significant digits (also when `value` is None)
    note: str | None = None  # why `value` is None

    def to_json(self) -> dict:
        out = {"name": self.name, "value": self.value, "exact": str(self.exact), "unit": self.unit,
               "inputs": list(self.inputs)}
        if self.value is None:
            out["value_text"] = self.text
            out["value_note"] = self.note
        return out


def expression_for(library: Library, text: str) -> tuple[str, sp.Expr]:
    """A quantity name, a definition id, or an expression in quantity names."""
    if text in library.quantities:
        return text, library.quantities[text].sym
    if "." in text and text in library.declarations and isinstance(library.declarations[text], Definition):
        return text, library.declarations[text].defines.sym  # type: ignore[union-attr]
    from derive.model.parse import parse_expression

    return text, parse_expression(text, library.symbols(), where="eval")


def evaluate(library: Library, scenario: Scenario, text: str, unit: str | None = None) -> Evaluation:
    name, expr = expression_for(library, text)
    dim = dimension_of(expr, library.dimension, where=name)
    expanded = library.expand(expr, scenario.pinned)
    inputs = tuple(sorted(str(s) for s in expanded.free_symbols))
    missing = [n for n in inputs if n not in scenario.values]
    if missing:
        raise ScenarioError(
            f"cannot evaluate {name}: the scenario gives no value for {', '.join(missing)}",
            hint=f"add --set {missing[0]}=VALUE or choose a preset (derive presets)",
        )
    exact = exactify(expanded.xreplace(scenario.substitution(library)))
    if exact.free_symbols or exact.is_extended_real is False:
        raise ScenarioError(f"{name} does not evaluate to a real number ({_short(exact)})")
    if unit:
        u = parse_unit(unit)
        if u.dimension != dim:
            raise UnitError(f"cannot express {name} ({format_dimension(dim)}) in {unit} "
                            f"({format_dimension(u.dimension)})")
        shown: NumericValue = numeric(exact / sp.Rational(u.scale.numerator, u.scale.denominator), what=name)
        unit_text = unit
    else:
        shown = numeric(exact, what=name)
        unit_text = format_dimension(dim)
    return Evaluation(name, exact, dim, unit_text, shown.value, inputs, shown.text, shown.note)


def _short(expr: object, limit: int = 80) -> str:
    text = str(expr)
    return text if len(text) <= limit else text[: limit - 3] + "..."
