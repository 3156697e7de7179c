"""Documents from a checked library: a plain data model, then jinja2 templates.

``document_model`` turns a ``Library``, the ``Report`` of a check, its ``Scenario`` (and optionally
the baseline report and drawn figures) into dicts and lists of strings only.  Every formula and every
number in it is already rendered (LaTeX for math; ``{"tex", "md"}`` pairs for values with units), so
templates hold no math and no numbers of their own; prose stays raw and templates escape it with the
``tex`` / ``md`` filters.  Rendering uses ``StrictUndefined`` (a missing field is an error) and, for
LaTeX, delimiters that cannot clash with TeX: ``\\VAR{...}``, ``\\BLOCK{...}``, ``\\#{...}``.

Output is deterministic: no dates, library order where the library gives one, sorted otherwise.
Templates live at the repository top level, ``templates/markdown`` and ``templates/latex``.
"""

from __future__ import annotations

import importlib.resources
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from functools import cached_property
from pathlib import Path

import jinja2
import sympy as sp

from derive.checking.checker import ClaimResult, Report
from derive.documents.figures import FigureResult
from derive.documents.latex import (
    label_text,
    latex_comment,
    latex_escape,
    latex_escape_breakable,
    macro_name,
    make_printer,
    markdown_escape,
    markdown_math,
)
from derive.errors import DeriveError, ResourceError, UnitError
from derive.kernel.logic import And, Formula, Iff, Implies, Not, Or, Rel
from derive.model.declarations import VERDICTS, Assumption, Claim, Declaration, Definition, Quantity
from derive.model.dimensions import dimension_of
from derive.model.library import Library
from derive.model.scenario import Scenario
from derive.model.units import format_dimension, parse_unit, unit_factors

TEMPLATE_KINDS = ("latex", "markdown")
Printer = Callable[[sp.Expr], str]


# numbers and units -----------------------------------------------------------------------------------

def format_number(value: sp.Expr | float | Fraction | int) -> tuple[str, int | None]:
    """(mantissa, exponent): exact integers below 10**6 as they are; otherwise four significant
    digits, in scientific form outside [1e-3, 1e6)."""
    if isinstance(value, sp.Basic) and value.is_Integer and abs(int(value)) < 10**6:
        return str(int(value)), None
    if isinstance(value, int | Fraction) and Fraction(value).denominator == 1 and abs(int(value)) < 10**6:
        return str(int(value)), None
    v = float(value)
    if v == 0 or not math.isfinite(v):
        return ("0" if v == 0 else str(v)), None
    a = abs(v)
    if 1e-3 <= a < 1e6:
        digits = max(0, 3 - math.floor(math.log10(a)))
        text = f"{v:.{digits}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        if float(text) != 0 and abs(float(text)) < 1e6:
            return text, None
    exponent = math.floor(math.log10(a))
    mantissa = round(v / 10**exponent, 3)
    if abs(mantissa) >= 10:
        exponent += 1
        mantissa = round(v / 10**exponent, 3)
    text = f"{mantissa:.3f}".rstrip("0").rstrip(".")
    return text, exponent


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_SI_BASE = {
    "FLOP": [("\\flop", 1)], "FLOPs": [("\\flop", 1)], "flop": [("\\flop", 1)], "flops": [("\\flop", 1)],
    "FLOPS": [("\\flop", 1), ("\\second", -1)],
    "B": [("\\byte", 1)], "byte": [("\\byte", 1)], "bytes": [("\\byte", 1)],
    "b": [("\\bit", 1)], "bit": [("\\bit", 1)], "bits": [("\\bit", 1)],
    "s": [("\\second", 1)], "sec": [("\\second", 1)], "second": [("\\second", 1)], "seconds": [("\\second", 1)],
    "min": [("\\minute", 1)], "minute": [("\\minute", 1)], "minutes": [("\\minute", 1)],
    "h": [("\\hour", 1)], "hr": [("\\hour", 1)], "hour": [("\\hour", 1)], "hours": [("\\hour", 1)],
    "day": [("\\day", 1)], "days": [("\\day", 1)],
    "token": [("\\token", 1)], "tokens": [("\\token", 1)], "tok": [("\\token", 1)],
    "seq": [("\\sequence", 1)], "sequence": [("\\sequence", 1)], "sequences": [("\\sequence", 1)],
    "param": [("\\param", 1)], "params": [("\\param", 1)], "parameter": [("\\param", 1)],
    "parameters": [("\\param", 1)],
    "USD": [("\\usd", 1)], "$": [("\\usd", 1)], "dollar": [("\\usd", 1)], "dollars": [("\\usd", 1)],
    "%": [("\\percent", 1)], "percent": [("\\percent", 1)], "1": [],
}
_SI_PREFIX = {"k": "\\kilo", "K": "\\kilo", "M": "\\mega", "G": "\\giga", "T": "\\tera", "P": "\\peta",
              "E": "\\exa", "m": "\\milli", "u": "\\micro", "µ": "\\micro", "n": "\\nano",
              "Ki": "\\kibi", "Mi": "\\mebi", "Gi": "\\gibi", "Ti": "\\tebi"}
# Units siunitx does not know, declared wherever values are used (derivation.tex and values.tex).
SIUNIT_DECLARATIONS = (
    r"\DeclareSIUnit\flop{FLOP}", r"\DeclareSIUnit\byte{B}", r"\DeclareSIUnit\bit{b}",
    r"\DeclareSIUnit\token{token}", r"\DeclareSIUnit\sequence{seq}", r"\DeclareSIUnit\param{param}",
    r"\DeclareSIUnit\usd{USD}", r"\DeclareSIUnit\day{day}",
)


def siunitx_unit(text: str) -> str:
    """A unit string of the library (``TB/s``, ``FLOP/(param*token)``) as siunitx unit macros, read with
    the engine's own unit grammar (``derive.model.units.unit_factors``)."""
    parts: list[tuple[str, Fraction]] = []
    for prefix, word, exponent in unit_factors(text):
        if word not in _SI_BASE:
            raise UnitError(f"no siunitx form for unit '{word}' in '{text}'")
        macros = [(m, Fraction(p) * exponent) for m, p in _SI_BASE[word]]
        if prefix and macros:
            macros[0] = (_SI_PREFIX[prefix] + macros[0][0], macros[0][1])
        parts += macros
    num = [(m, p) for m, p in parts if p > 0]
    den = [(m, -p) for m, p in parts if p < 0]

    def fmt(m: str, p: Fraction) -> str:
        if p == 1:
            return m
        if p == 2:
            return m + r"\squared"
        if p == 3:
            return m + r"\cubed"
        return m + r"\tothe{" + (str(p.numerator) if p.denominator == 1 else str(float(p))) + "}"

    return "".join(fmt(m, p) for m, p in num) + "".join(r"\per" + fmt(m, p) for m, p in den)


def markdown_unit(text: str) -> str:
    t = text.strip()
    return "" if t in ("", "1") else t.replace("*", "·")


def value_text(value: sp.Expr | float, unit: str) -> dict[str, str]:
    """A number with a unit, rendered for both formats: ``{"tex": "\\SI{14.4}{\\milli\\second}",
    "md": "14.4 ms", "num": "14.4", "unit": "ms"}``."""
    mantissa, exponent = format_number(value)
    si_unit = siunitx_unit(unit)
    tex_num = mantissa if exponent is None else f"{mantissa}e{exponent}"
    tex = rf"\SI{{{tex_num}}}{{{si_unit}}}" if si_unit else rf"\num{{{tex_num}}}"
    md_num = _group(mantissa) if exponent is None else f"{mantissa} × 10{str(exponent).translate(_SUPERSCRIPT)}"
    md_unit = markdown_unit(unit)
    return {"tex": tex, "md": f"{md_num} {md_unit}".strip(), "num": tex_num, "unit": md_unit, "eq_md": "=",
            "eq_tex": "="}


def _group(mantissa: str) -> str:
    sign = "-" if mantissa.startswith("-") else ""
    body = mantissa.lstrip("-")
    whole, _, frac = body.partition(".")
    if len(whole) > 4:
        whole = f"{int(whole):,}"
    return sign + whole + ("." + frac if frac else "")


def exact_value_text(si_value: sp.Rational, q: Quantity) -> dict[str, str]:
    """An exact value (a counterexample) for a reader: in the quantity's display unit when that is
    exact in four significant digits, else as the exact fraction in SI units, else rounded."""
    unit = quantity_unit(q)
    shown = in_unit(si_value, unit)
    mantissa, exponent = format_number(shown)
    if exponent is None and sp.Rational(mantissa) == shown:
        return value_text(shown, unit)
    si = format_dimension(q.dimension)
    r = sp.Rational(si_value)
    if r.q < 10**6 and abs(r.p) < 10**9:
        si_unit, md_unit = siunitx_unit(si), markdown_unit(si)
        frac = rf"\ensuremath{{\tfrac{{{abs(r.p)}}}{{{r.q}}}}}"
        sign = "-" if r.p < 0 else ""
        tex = sign + frac + (rf"\,\si{{{si_unit}}}" if si_unit else "")
        return {"tex": tex, "md": f"{r} {md_unit}".strip(), "num": str(r), "unit": md_unit, "eq_md": "=",
                "eq_tex": "="}
    out = value_text(shown, unit)
    if sp.Rational(mantissa) * sp.Rational(10) ** (exponent or 0) != shown:
        out.update(eq_md="≈", eq_tex=r"\approx")
    return out


def undefined_text(reason: str | None) -> dict[str, str]:
    """No value: a definition is used outside its domain (``reason`` says where)."""
    md = f"undefined ({reason})" if reason else "undefined"
    tex = r"\text{undefined}" + (f" ({latex_escape(reason)})" if reason else "")
    return {"tex": tex, "md": md, "num": "", "unit": "", "eq_md": "=", "eq_tex": "="}


def unit_tex(text: str) -> str:
    si = siunitx_unit(text)
    return rf"\si{{{si}}}" if si else "1"


# evaluation under a scenario -------------------------------------------------------------------------

def evaluate_expr(library: Library, scenario: Scenario, expr: sp.Expr, unit: str | None
                  ) -> tuple[dict[str, str] | None, list[str]]:
    """The value of an expression under the scenario, in ``unit`` (SI when None or unfit), or the
    names of the inputs the scenario lacks.  A quantity goes through ``derive.model.evaluate`` (the path of
    ``derive eval``), so documents and the command line agree."""
    expanded = library.expand(expr, scenario.pinned)
    missing = sorted(str(s) for s in expanded.free_symbols if str(s) not in scenario.values)
    if missing:
        return None, missing
    if isinstance(expr, sp.Symbol) and str(expr) in library.quantities:
        from derive.model.evaluate import evaluate

        try:
            ev = evaluate(library, scenario, str(expr))
        except DeriveError:  # not a real number under this scenario
            return None, []
        if ev.exact is None:  # outside the domain of a definition: say so, never a number
            return undefined_text(ev.reason), []
        exact = ev.exact
    else:
        from derive.model.evaluate import domain_violation

        reason = domain_violation(library, scenario, expr)
        if reason is not None:
            return undefined_text(reason), []
        from derive.model.numbers import exactify

        exact = exactify(expanded.xreplace(scenario.substitution(library)))  # floats by the one rule, no nsimplify
        if not exact.is_number or exact.is_real is False:
            return None, []
    dim = dimension_of(expr, library.dimension, where="document")
    if unit is None or parse_unit(unit).dimension != dim:
        unit = format_dimension(dim)
    value = in_unit(exact, unit)
    if not value.is_Rational:
        value = sp.Float(sp.N(value, 20))
    return value_text(value, unit), []


DISPLAY_WIDTH = 58  # rough width of a display line, in characters of math (see ``latex_width``)
INLINE_WIDTH = 16  # the widest expression repeated inline next to its value


def latex_width(latex: str) -> float:
    """A rough width of rendered math in characters: fractions count their wider part, sub- and
    superscripts count less, commands count as one symbol.  Used only to decide line breaks."""
    total = 0.0
    i, n = 0, len(latex)
    while i < n:
        ch = latex[i]
        if latex.startswith(r"\frac{", i):
            num, j = _group_at(latex, i + 5)
            den, j = _group_at(latex, j)
            total += max(latex_width(num), latex_width(den)) + 1
            i = j
            continue
        if latex.startswith((r"\mathrm{", r"\text{", r"\mathit{"), i):
            start = latex.index("{", i)
            inner, j = _group_at(latex, start)
            total += len(inner) * 0.8
            i = j
            continue
        if ch in "_^":
            if i + 1 < n and latex[i + 1] == "{":
                inner, j = _group_at(latex, i + 1)
                total += 0.6 * latex_width(inner)
                i = j
            else:
                total += 0.6
                i += 2
            continue
        if ch == "\\":
            j = i + 1
            while j < n and latex[j].isalpha():
                j += 1
            name = latex[i + 1:j] or latex[i + 1:i + 2]
            total += {"left": 0, "right": 0, ";": 1, ",": 0.3, "quad": 2, "max": 3, "min": 3,
                      "iff": 3, "implies": 3, "wedge": 2, "vee": 2}.get(name, 1)
            i = max(j, i + 2)
            continue
        if ch in "{} ":
            i += 1
            continue
        total += 1.6 if ch in "=<>+-" else 1
        i += 1
    return total


def _group_at(text: str, i: int) -> tuple[str, int]:
    """The brace group starting at ``text[i] == "{"``: (content, index after it)."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i + 1:j], j + 1
    return text[i + 1:], len(text)


def _part(f: Formula, printer: Printer) -> str:
    inner = f.latex(printer)
    return inner if isinstance(f, Rel) else rf"\left({inner}\right)"


def quantity_unit(q: Quantity) -> str:
    return q.display_unit or q.unit


def in_unit(si_value: sp.Expr, unit: str) -> sp.Expr:
    """An exact SI value expressed in ``unit`` (still exact)."""
    scale = parse_unit(unit).scale
    return sp.sympify(si_value) / sp.Rational(scale.numerator, scale.denominator)


# the model -------------------------------------------------------------------------------------------

def _relations(f: Formula) -> list[Rel]:
    if isinstance(f, Rel):
        return [f]
    if isinstance(f, And | Or):
        return [r for a in f.args for r in _relations(a)]
    if isinstance(f, Not):
        return _relations(f.arg)
    if isinstance(f, Implies):
        return _relations(f.premise) + _relations(f.conclusion)
    if isinstance(f, Iff):
        return _relations(f.left) + _relations(f.right)
    return []


_OPS = {"==": "=", "!=": r"\neq", "<": "<", "<=": r"\le", ">": ">", ">=": r"\ge"}


class ModelBuilder:
    """Builds the document model; one instance per document."""

    def __init__(self, library: Library, scenario: Scenario, report: Report, *,
                 baseline: Report | None = None, figures: Sequence[FigureResult] = (),
                 graph: FigureResult | None = None, robustness: Sequence | None = None) -> None:
        self.robustness_rows = list(robustness or [])
        self.library = library
        self.scenario = scenario
        self.report = report
        self.baseline = baseline
        self.figures = list(figures)
        self.graph = graph
        self.printer: Printer = make_printer(library.quantities)
        self.results: dict[str, ClaimResult] = report.by_id()

    # names ---------------------------------------------------------------------------------------

    @cached_property
    def short_names(self) -> dict[str, str]:
        """Declaration id -> its shortest unique name (the last part unless two topics share it)."""
        counts: dict[str, int] = {}
        for d in self.library.ordered():
            counts[d.short] = counts.get(d.short, 0) + 1
        return {d.id: d.short if counts[d.short] == 1 else d.id for d in self.library.ordered()}

    def anchor(self, decl_id: str) -> str:
        return label_text(self.short_names[decl_id])

    def eq_label(self, decl_id: str) -> str:
        return "eq:" + label_text(self.short_names[decl_id])

    @cached_property
    def macro_names(self) -> dict[str, str]:
        prefix = {"claim": "claim", "definition": "defn", "assumption": "assume"}
        out: dict[str, str] = {}
        taken: dict[str, str] = {}
        for d in self.library.ordered():
            name = macro_name(prefix[d.kind], self.short_names[d.id])
            if name in taken:  # two ids that differ only in punctuation or case
                raise DeriveError(f"'{d.id}' and '{taken[name]}' give the same macro name \\{name}")
            taken[name] = d.id
            out[d.id] = name
        return out

    # pieces ----------------------------------------------------------------------------------------

    def ref(self, decl_id: str) -> dict[str, str]:
        d = self.library.declarations[decl_id]
        return {"id": d.id, "anchor": self.anchor(d.id), "title": d.title, "kind": d.kind}

    def formula_display(self, d: Declaration) -> str | None:
        """The formula for a LaTeX display: a long conjunction, disjunction, equivalence or implication
        at the top is broken into aligned lines, one part per line."""
        one_line = self.formula(d)
        f = d.goal if isinstance(d, Claim) else getattr(d, "relation", None)
        if one_line is None or f is None or latex_width(one_line) <= DISPLAY_WIDTH:
            return one_line
        parts: list[tuple[str, str]] = []
        if isinstance(f, And | Or):
            joiner = r"\wedge" if isinstance(f, And) else r"\vee"
            parts = [("" if i == 0 else joiner, _part(a, self.printer)) for i, a in enumerate(f.args)]
        elif isinstance(f, Iff | Implies):
            left, right = (f.left, f.right) if isinstance(f, Iff) else (f.premise, f.conclusion)
            joiner = r"\iff" if isinstance(f, Iff) else r"\implies"
            parts = [("", _part(left, self.printer)), (joiner, _part(right, self.printer))]
        if len(parts) < 2:
            return one_line
        lines = [rf"{j}\;& {p}" if j else rf"& {p}" for j, p in parts]
        return r"\begin{aligned}" + r" \\ ".join(lines) + r"\end{aligned}"

    def formula(self, d: Declaration) -> str | None:
        if isinstance(d, Definition):
            return f"{d.defines.latex} = {self.printer(d.expr)}"
        if isinstance(d, Assumption):
            return d.relation.latex(self.printer) if d.relation is not None else None
        if isinstance(d, Claim):
            return d.goal.latex(self.printer)
        return None

    def counterexample(self, values: Mapping[str, str] | None) -> list[dict]:
        out = []
        for name, text in (values or {}).items():
            q = self.library.quantities.get(name)
            exact = sp.Rational(text)
            if q is None:
                out.append({"symbol": r"\mathit{" + name.replace("_", r"\_") + "}",
                            "value": value_text(exact, "1")})
                continue
            out.append({"symbol": q.latex, "name": name, "value": exact_value_text(exact, q)})
        return out

    def numbers(self, d: Declaration) -> tuple[list[dict], list[str]]:
        """Values under the scenario: a definition's quantity; each side of a relation."""
        lib, sc = self.library, self.scenario
        rows: list[dict] = []
        missing: set[str] = set()
        if isinstance(d, Definition):
            value, miss = evaluate_expr(lib, sc, d.defines.sym, quantity_unit(d.defines))
            if value is not None:
                rows.append({"label": d.defines.latex, "text": None, "value": value})
            missing |= set(miss)
            return rows, sorted(missing)
        formula = d.goal if isinstance(d, Claim) else getattr(d, "relation", None)
        if formula is None:
            return rows, []
        seen: set[sp.Expr] = set()
        relations = _relations(formula)
        for k, rel in enumerate(relations, start=1):
            symbols = [s for s in (rel.lhs, rel.rhs) if isinstance(s, sp.Symbol)]
            unit = quantity_unit(lib.quantity_of(symbols[0])) if symbols else None
            for side, name in ((rel.lhs, "left"), (rel.rhs, "right")):
                if side.is_number or side in seen:
                    continue
                seen.add(side)
                side_unit = quantity_unit(lib.quantity_of(side)) if isinstance(side, sp.Symbol) else unit
                value, miss = evaluate_expr(lib, sc, side, side_unit)
                missing |= set(miss)
                if value is None:
                    continue
                latex = self.printer(side)
                if latex_width(latex) <= INLINE_WIDTH:
                    rows.append({"label": latex, "text": None, "value": value})
                else:  # too big to repeat inline: name the side instead
                    where = f" of relation {k}" if len(relations) > 1 else ""
                    rows.append({"label": None, "text": f"{name} side{where}", "value": value})
        return rows, sorted(missing)

    def derivation(self, claim: Claim, result: ClaimResult | None) -> list[dict]:
        """Rows of the derivation, paired with the checker's result for each link.

        Mirrors ``Checker._check_steps``: for an identity whose steps are expressions, the chain runs
        from the goal's left side through the steps to its right side."""
        steps: list[tuple[object, str, str]] = [(s.formula, s.why, s.link) for s in claim.steps]
        if not steps:
            return []
        goal = claim.goal
        expression_chain = isinstance(goal, Rel) and goal.op == "==" and not isinstance(steps[0][0], Formula)
        chain = [(goal.lhs, "", ""), *steps, (goal.rhs, "", "")] if expression_chain else steps
        outcomes = {s.index: s.outcome for s in (result.steps if result else [])}
        first_is_supposition = claim.steps[0].link == "iff"
        rows: list[dict] = []
        for i, (formula, why, link) in enumerate(chain):
            if expression_chain and i == 0:
                continue
            prev = chain[i - 1][0] if i > 0 else None
            if expression_chain and i == len(chain) - 1 and formula == prev:
                continue  # the goal's right side is the last step itself
            row = {"why": why, "verdict": None, "engine": None, "reason": None, "note": None}
            outcome = outcomes.get(i)
            if outcome is not None:
                row.update(verdict=outcome.verdict, engine=outcome.engine,
                           reason=outcome.reason if outcome.verdict != "proved" else None)
            elif i == 0 and first_is_supposition:
                row["note"] = "supposition"
            elif isinstance(prev, sp.Basic) and isinstance(formula, sp.Basic) and prev == formula:
                row["note"] = "unchanged"
            elif result is not None and not result.steps:
                row["note"] = "not checked"
            if expression_chain:
                left = self.printer(chain[0][0]) if i == 1 else ""
                row.update(left=left, right="= " + self.printer(formula),
                           line=(left + " = " if i == 1 else "= ") + self.printer(formula))
            else:
                connective = "" if i == 0 else (r"\Leftrightarrow\;" if link == "iff" else r"\Rightarrow\;")
                if isinstance(formula, Rel):
                    left = f"{connective} {self.printer(formula.lhs)}".strip()
                    right = f"{_OPS[formula.op]} {self.printer(formula.rhs)}"
                    line = f"{left} {right}"
                elif isinstance(formula, Formula):
                    left, right = connective, formula.latex(self.printer)
                    line = f"{connective} {right}".strip()
                else:
                    left, right = connective, self.printer(formula)
                    line = f"{connective} {right}".strip()
                row.update(left=left, right=right, line=line)
            rows.append(row)
        return rows

    def declaration(self, d: Declaration) -> dict:
        result = self.results.get(d.id)
        graph = self.library.graph
        order = {x.id: i for i, x in enumerate(self.library.ordered())}
        depends = sorted(graph.predecessors(d.id), key=order.get)
        rests_on = result.rests_on if result is not None else self.library.rests_on(d)
        numbers, missing = self.numbers(d)
        model = {
            "id": d.id, "short": d.short, "kind": d.kind, "anchor": self.anchor(d.id),
            "label": self.eq_label(d.id), "macro": self.macro_names[d.id],
            "title": d.title, "headline": getattr(d, "label", None), "statement": d.statement,
            "source": str(d.source), "source_kind": d.source.kind, "tags": list(d.tags),
            "inconsistency": "inconsistency" in d.tags, "notes": getattr(d, "notes", "") or "",
            "formula": self.formula(d), "formula_tex": self.formula_display(d), "hypotheses": [], "steps": [],
            "instance": False,
            "defines": None, "depends_on": [self.ref(i) for i in depends],
            "rests_on": [self.ref(i) for i in rests_on if i in self.library.declarations],
            "verdict": "assumed" if isinstance(d, Assumption) else None, "expected": None, "meets": True,
            "engine": None, "reason": None, "counterexample": [], "recheck": None,
            "numbers": numbers, "missing": missing,
        }
        if isinstance(d, Definition):
            q = d.defines
            model["defines"] = {"name": q.name, "symbol": q.latex, "unit": unit_tex(q.unit),
                                "unit_md": markdown_unit(q.unit), "meaning": q.meaning}
        if isinstance(d, Claim):
            model["hypotheses"] = [h.latex(self.printer) for h in d.hypotheses]
            model["instance"] = d.instance
            model["steps"] = self.derivation(d, result)
            if result is not None:
                model.update(verdict=result.verdict, expected=result.expected, meets=result.meets_expectation,
                             engine=result.engine, reason=result.reason, recheck=result.recheck,
                             counterexample=self.counterexample(result.counterexample))
            else:
                model.update(verdict="unchecked", expected=d.expected, meets=False)
        return model

    def notation(self, quantities: Iterable[Quantity]) -> list[dict]:
        rows = []
        for q in quantities:
            value = None
            if q.value is not None:
                value = value_text(in_unit(q.value, q.unit), q.unit)
            rows.append({"name": q.name, "symbol": q.latex, "unit": unit_tex(q.unit), "unit_md": q.unit,
                         "meaning": q.meaning, "value": value,
                         "defined_by": (self.ref(self.library.definition_of[q.name].id)
                                        if q.name in self.library.definition_of else None)})
        return rows

    def scenario_model(self) -> dict:
        sc, lib = self.scenario, self.library
        rows = []
        for name, q in lib.quantities.items():
            v = sc.values.get(name)
            if v is None:
                continue
            unit = quantity_unit(q)
            rows.append({"name": name, "symbol": q.latex, "value": value_text(in_unit(v.value, unit), unit),
                         "source": v.source, "as_of": v.as_of or "", "origin": v.origin, "note": v.note,
                         "pinned": name in sc.pinned})
        return {"name": sc.name, "layers": list(sc.layers), "rows": rows,
                "assumptions": [{"text": t, "latex": f.latex(self.printer)} for t, f in sc.assumptions],
                "pinned": sorted(sc.pinned)}

    def what_breaks(self) -> dict | None:
        if self.baseline is None:
            return None
        before = self.baseline.by_id()
        changed = []
        for r in self.report.results:
            b = before.get(r.id)
            if b is None or b.verdict == r.verdict:
                continue
            changed.append({**self.ref(r.id), "before": b.verdict, "after": r.verdict, "reason": r.reason,
                            "counterexample": self.counterexample(r.counterexample)})
        return {"baseline": self.baseline.scenario.name, "changed": changed,
                "unchanged": sum(1 for r in self.report.results if r.id in before) - len(changed)}

    def robustness(self) -> list[dict]:
        """Rows of the robustness table: how far each input of a headline claim's numbers can move
        before the claim breaks (rows of ``derive.whatif.margin.robustness``; general claims and rows
        without a computable margin are left out: the table is about numbers)."""
        def factor(x: float | None) -> str | None:
            return None if x is None else f"{x:.3g}"

        rows = []
        for row in self.robustness_rows:
            if row.quantity is None or row.holds is None:
                continue
            q = self.library.quantities[row.quantity]
            rows.append({
                "headline": self.ref(row.headline or row.claim), "claim": self.ref(row.claim),
                "quantity": row.quantity, "latex": q.latex,
                "value": f"{row.value:.4g}" if row.value is not None else "",
                "unit": row.unit, "holds": bool(row.holds),
                "down": factor(row.factor_down), "up": factor(row.factor_up),
            })
        return rows

    @staticmethod
    def figure_model(f: FigureResult) -> dict:
        return {"id": f.id, "title": f.title, "caption": f.caption, "svg": f.files.get("svg"),
                "pdf": f.files.get("pdf"), "png": f.files.get("png"), "note": f.note, "skipped": f.skipped,
                "label": "fig:" + label_text(f.id)}

    def build(self) -> dict:
        lib = self.library
        topic_names = {t.name for t in lib.topics}
        placed: dict[str, list[dict]] = {}
        loose = []
        for f in self.figures:
            if f.topic in topic_names:
                placed.setdefault(f.topic, []).append(self.figure_model(f))
            else:
                loose.append(self.figure_model(f))
        topics = []
        for t in lib.topics:
            topics.append({"name": t.name, "title": t.title, "summary": t.summary, "anchor": "topic-" + t.name,
                           "notation": self.notation(t.quantities),
                           "declarations": [self.declaration(d) for d in t.declarations],
                           "figures": placed.get(t.name, [])})
        counts = self.report.summary()
        claims = [{**self.ref(r.id), "verdict": r.verdict, "expected": r.expected, "meets": r.meets_expectation,
                   "engine": r.engine} for r in self.report.results]
        return {
            "title": lib.title or "Derivation",
            "scenario": self.scenario_model(),
            "verdicts": [{"verdict": v, "count": counts.get(v, 0)} for v in VERDICTS if counts.get(v, 0)],
            "claims": claims,
            "not_as_expected": sum(1 for c in claims if not c["meets"]),
            "declaration_counts": {k: sum(1 for d in lib.ordered() if d.kind == k)
                                   for k in ("definition", "assumption", "claim")},
            "topics": topics,
            "figures": loose,
            "graph": self.figure_model(self.graph) if self.graph is not None else None,
            "what_breaks": self.what_breaks(),
            "robustness": self.robustness(),
            "siunit_declarations": list(SIUNIT_DECLARATIONS),
        }


def document_model(library: Library, scenario: Scenario, report: Report, *, baseline: Report | None = None,
                   figures: Sequence[FigureResult] = (), graph: FigureResult | None = None,
                   robustness: Sequence | None = None) -> dict:
    """The whole document as plain data (see the module docstring)."""
    return ModelBuilder(library, scenario, report, baseline=baseline, figures=figures, graph=graph,
                        robustness=robustness).build()


# paper macros -------------------------------------------------------------------------------------------

def claims_model(library: Library, scenario: Scenario, report: Report | None = None) -> dict:
    """A macro per declaration with a formula: ``\\claimBatchOptimum``, ``\\defnCriticalBatch``."""
    report = report or Report(scenario, [])
    mb = ModelBuilder(library, scenario, report)
    rows = []
    for d in library.ordered():
        formula = mb.formula(d)
        if formula is None:
            continue
        r = mb.results.get(d.id)
        rows.append({"id": d.id, "macro": mb.macro_names[d.id], "formula": formula, "title": d.title,
                     "label": mb.eq_label(d.id), "verdict": r.verdict if r else None})
    return {"scenario": scenario.name, "macros": rows}


def values_model(library: Library, scenario: Scenario) -> dict:
    """A macro per quantity with a value under the scenario: given ones and computed ones."""
    rows = []
    for name, q in library.quantities.items():
        if q.value is not None:
            continue
        value, _ = evaluate_expr(library, scenario, q.sym, quantity_unit(q))
        if value is None:
            continue
        origin = "scenario" if name in scenario.values else "computed"
        rows.append({"name": name, "macro": macro_name("val", name), "value": value, "origin": origin})
    return {"scenario": scenario.name, "values": rows, "siunit_declarations": list(SIUNIT_DECLARATIONS)}


# templates --------------------------------------------------------------------------------------------

def template_folder(kind: str):
    """The packaged template folder of one kind, read through importlib.resources (works from a wheel or a zip)."""
    return importlib.resources.files("derive.documents").joinpath("templates", kind)


def check_templates(kinds: Sequence[str] = TEMPLATE_KINDS) -> None:
    """Fail fast, before any proving, when the package was installed without its templates."""
    for kind in kinds:
        folder = template_folder(kind)
        if not folder.is_dir() or not any(entry.name.endswith(".j2") for entry in folder.iterdir()):
            raise ResourceError(f"the installed package lacks its {kind} templates "
                                f"(derive/documents/templates/{kind}); "
                                "reinstall derive-llm")


def _environment(kind: str, template_dir: Path | None = None) -> jinja2.Environment:
    if template_dir is not None:
        folder = template_dir / kind
        if not folder.is_dir():
            raise DeriveError(f"template folder not found: {folder}")
        loader: jinja2.BaseLoader = jinja2.FileSystemLoader(str(folder))
    else:
        check_templates([kind])
        loader = jinja2.PackageLoader("derive.documents", f"templates/{kind}")
    common = {"loader": loader, "undefined": jinja2.StrictUndefined,
              "keep_trailing_newline": True, "trim_blocks": True, "lstrip_blocks": True, "autoescape": False}
    if kind == "latex":
        env = jinja2.Environment(block_start_string=r"\BLOCK{", block_end_string="}",
                                 variable_start_string=r"\VAR{", variable_end_string="}",
                                 comment_start_string=r"\#{", comment_end_string="}",
                                 line_statement_prefix=None, line_comment_prefix=None, **common)
    else:
        env = jinja2.Environment(**common)
    env.filters["tex"] = latex_escape
    env.filters["texbreak"] = latex_escape_breakable
    env.filters["texcomment"] = latex_comment
    env.filters["md"] = markdown_escape
    env.filters["mdmath"] = markdown_math
    return env


def render(kind: str, template: str, model: Mapping, template_dir: Path | None = None) -> str:
    """Render the packaged ``templates/<kind>/<template>`` with the model; lines are stripped of trailing spaces."""
    try:
        text = _environment(kind, template_dir).get_template(template).render(**model)
    except jinja2.UndefinedError as err:
        raise DeriveError(f"template {kind}/{template}: {err.message}") from None
    except jinja2.TemplateError as err:
        raise DeriveError(f"template {kind}/{template}: {err}") from None
    lines = [line.rstrip() for line in text.splitlines()]
    out = "\n".join(lines).strip("\n") + "\n"
    return re.sub(r"\n{3,}", "\n\n", out)
