"""The documents' view model: a checked library under a scenario turned into plain data.

``document_model`` turns a ``Library``, the ``Report`` of a check, its ``Scenario`` (and optionally the baseline
report and drawn figures) into dicts and lists of strings only.  Every formula and every number in it is already
rendered (LaTeX for math; ``{"tex", "md"}`` pairs for values with units, from ``derive.documents.values_text``),
so templates hold no math and no numbers of their own; prose stays raw and templates escape it with the ``tex`` /
``md`` filters (``derive.documents.render``).  Output is deterministic: no dates, library order where the
library gives one, sorted otherwise.
"""


from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cached_property

import sympy as sp

from derive.checking.checker import ClaimResult, Report
from derive.checking.summary import expectations_elsewhere
from derive.documents.figures import FigureResult
from derive.documents.latex import (
    ResolvedProse,
    label_text,
    latex_escape,
    macro_name,
    make_printer,
    markdown_math,
    prose_parts,
)
from derive.documents.thresholds import Threshold, tolerance_band
from derive.documents.values_text import (
    exact_value_text,
    in_unit,
    markdown_unit,
    quantity_unit,
    si_value_text,
    siunit_declarations,
    undefined_text,
    unit_tex,
    value_text,
)
from derive.errors import DeriveError, LibraryError, UnitError
from derive.kernel.logic import And, Formula, Iff, Implies, Not, Or, Rel
from derive.model.declarations import VERDICTS, Assumption, Claim, Declaration, Definition, Quantity
from derive.model.dimensions import dimension_of
from derive.model.library import Library
from derive.model.prose import placement, split
from derive.model.scenario import Scenario
from derive.model.situation import situate
from derive.model.units import format_dimension, parse_unit

Printer = Callable[[sp.Expr], str]

# evaluation under a scenario -------------------------------------------------------------------------

def evaluate_expr(library: Library, scenario: Scenario, expr: sp.Expr, unit: str | None
                  ) -> tuple[dict[str, str] | None, list[str]]:
    """The value of an expression under the scenario, in ``unit`` (SI when None or unfit), or the
    names of the inputs the scenario lacks.  A quantity goes through ``derive.model.evaluate`` (the path of
    ``derive eval``), so documents and the command line agree."""
    # the inputs it reaches first (cheap); the expansion only when one may be missing or it is needed
    situation = situate(library, scenario)
    if any(n not in scenario.values for n in library.reaches(expr, scenario.pinned)):
        missing = situation.missing(expr)
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

        # floats by the one rule, no nsimplify
        exact = exactify(situation.expand(expr).xreplace(situation.substitution))
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
INFEASIBLE_MARK = "†"  # after each value printed under a scenario that cannot exist (the title says why)


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


def _part(f: Formula, printer: Printer, rel: Callable[[Rel], str | None] | None = None) -> str:
    inner = f.latex(printer, rel)
    return inner if isinstance(f, Rel) else rf"\left({inner}\right)"






def _plain(x: sp.Expr) -> str:
    """A small exact number as text: 1, 2.5, 1.25."""
    x = sp.nsimplify(x)
    if x.is_Integer:
        return str(int(x))
    return f"{float(x):.4g}"


def _decimal_latex(x: sp.Expr, printer: Printer) -> str:
    """An exact number as a terminating decimal when it is one (0.016, not 2/125), else as the printer
    writes it."""
    x = sp.nsimplify(x)
    if x.is_Rational and not x.is_Integer:
        q = int(x.q)
        for p in (2, 5):
            while q % p == 0:
                q //= p
        if q == 1:
            from decimal import Decimal

            text = format(Decimal(int(x.p)) / Decimal(int(x.q)), "f")
            if len(text.replace("-", "").replace(".", "").lstrip("0")) <= 8:
                return text
    return printer(x)


def _factor(x: float) -> str:
    """A ratio for a reader: 1.04, 2.0, 6.6, 31, 1,200."""
    if x < 1.1:
        return f"{x:.2f}"
    if x < 10:
        return f"{x:.1f}"
    return f"{x:,.0f}"


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
# a relation to a rounded number (the symbol keeps its direction on the page)
_ROUNDED = {"==": r"\approx", "<": r"\lesssim", "<=": r"\lesssim", ">": r"\gtrsim", ">=": r"\gtrsim"}


class ModelBuilder:
    """Builds the document model; one instance per document."""

    def __init__(self, library: Library, scenario: Scenario, report: Report, *,
                 baseline: Report | None = None, figures: Sequence[FigureResult] = (),
                 graph: FigureResult | None = None, thresholds: Sequence[Threshold] = (),
                 chapter_graphs: Mapping[str, FigureResult] | None = None, measured: Mapping | None = None) -> None:
        self.thresholds = list(thresholds)
        self.measured = dict(measured) if measured else None
        self.chapter_graphs = dict(chapter_graphs or {})
        self.library = library
        self.scenario = scenario
        self.report = report
        self.baseline = baseline
        self.figures = list(figures)
        self.graph = graph
        self.printer: Printer = make_printer(library.quantities)
        self.results: dict[str, ClaimResult] = report.by_id()
        # instance claims answered at a scenario other than the library's own: their expectations were written
        # for that one, so a verdict here is an answer, never shown as a surprise (as derive check counts them)
        self.elsewhere = expectations_elsewhere(library, scenario, report.results)

    def meets(self, result: ClaimResult) -> bool:
        """Whether the document shows ``result`` as meeting its expectation (an answer elsewhere does)."""
        return result.meets_expectation or result.id in self.elsewhere

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
                raise LibraryError(f"'{d.id}' and '{taken[name]}' give the same macro name \\{name}")
            taken[name] = d.id
            out[d.id] = name
        return out

    # numbers in formulas ---------------------------------------------------------------------------

    def number_beside(self, number: sp.Expr, other: sp.Expr) -> tuple[str, bool] | None:
        """A plain number compared with (or stated for) ``other``, as math through the display formatter:
        with the unit of ``other`` and a prefix (``312\\,\\mathrm{TFLOP/s}``, not ``312000000000000``),
        and whether the text is exact.  A dimensionless number only when it is too long to read
        (``10^{8}``); None where the printer's own form is the better one (0, 2, ``\\frac{1}{3}``, no known
        dimension)."""
        from derive.model.display import math_number, math_value

        if not (number.is_Rational or number.is_Float) or number.is_zero or other.is_number:
            return None
        try:
            dim = dimension_of(other, self.library.dimension, where="document")
        except DeriveError:
            return None
        value = sp.Rational(number) if number.is_Rational else number
        if dim.is_dimensionless:
            r = sp.Rational(value)
            if abs(r.p) < 10**6 and r.q < 10**6:
                return None
            return math_number(value)
        unit = format_dimension(dim)
        if isinstance(other, sp.Symbol) and str(other) in self.library.quantities:
            own = quantity_unit(self.library.quantities[str(other)])
            if parse_unit(own).dimension == dim:
                unit = own
        try:
            return math_value(in_unit(value, unit), unit)
        except UnitError:  # a dimension the display has no unit for (a fractional power): the plain number
            return None

    def rel_parts(self, rel: Rel) -> tuple[str, str, str]:
        """(left, operator, right) of a relation as LaTeX, a plain number side with its unit
        (``number_beside``).  A number that could not be written exactly reads as rounded: ``\\approx``
        for ``=``, ``\\gtrsim``/``\\lesssim`` for a bound; beside ``\\neq`` it keeps the printer's form."""
        left, op, right = self.printer(rel.lhs), _OPS[rel.op], self.printer(rel.rhs)
        for on_right, side, other in ((True, rel.rhs, rel.lhs), (False, rel.lhs, rel.rhs)):
            shown = self.number_beside(side, other)
            if shown is None:
                continue
            text, exact = shown
            if not exact:
                if rel.op == "!=":
                    continue
                op = _ROUNDED[rel.op]
            if on_right:
                right = text
            else:
                left = text
        return left, op, right

    def rel_latex(self, rel: Rel) -> str:
        left, op, right = self.rel_parts(rel)
        return f"{left} {op} {right}"

    def formula_latex(self, f: Formula) -> str:
        """A relation tree as LaTeX, its plain numbers with units (``rel_latex``)."""
        return f.latex(self.printer, self.rel_latex)

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
            parts = [("" if i == 0 else joiner, _part(a, self.printer, self.rel_latex)) for i, a in enumerate(f.args)]
        elif isinstance(f, Iff | Implies):
            left, right = (f.left, f.right) if isinstance(f, Iff) else (f.premise, f.conclusion)
            joiner = r"\iff" if isinstance(f, Iff) else r"\implies"
            parts = [("", _part(left, self.printer, self.rel_latex)),
                     (joiner, _part(right, self.printer, self.rel_latex))]
        if len(parts) < 2:
            return one_line
        lines = [rf"{j}\;& {p}" if j else rf"& {p}" for j, p in parts]
        return r"\begin{aligned}" + r" \\ ".join(lines) + r"\end{aligned}"

    def formula(self, d: Declaration) -> str | None:
        if isinstance(d, Definition):
            return f"{d.defines.latex} = {self.printer(d.expr)}"
        if isinstance(d, Assumption):
            return self.formula_latex(d.relation) if d.relation is not None else None
        if isinstance(d, Claim):
            band = tolerance_band(d.goal)
            if band is not None and band.kind in ("percent", "factor"):
                # "about X" as people write it: B^{*} = 2400 \pm 1\,\%, not 2376 <= B^{*} <= 2424
                lhs, center = self.printer(band.expr), _decimal_latex(band.center, self.printer)
                shown = self.number_beside(sp.sympify(band.center), band.expr)
                if shown is not None and shown[1]:  # the lecture's round number, with its unit
                    center = shown[0]
                if band.kind == "percent":
                    return rf"{lhs} = {center} \pm {_plain(band.amount)}\,\%"
                return rf"{lhs} = {center} \cdot {_plain(band.amount)}^{{\pm 1}}"
            return self.formula_latex(d.goal)
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
                    lhs, op, rhs = self.rel_parts(formula)
                    left = f"{connective} {lhs}".strip()
                    right = f"{op} {rhs}"
                    line = f"{left} {right}"
                elif isinstance(formula, Formula):
                    left, right = connective, self.formula_latex(formula)
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
            "numbers": numbers, "missing": missing, "topic": d.topic,
            "discussed": d.id in self.in_argument, "eq_elsewhere": d.id in self.headlines,
            "chapter_number": self.chapter_numbers.get(d.topic),
        }
        if isinstance(d, Definition):
            q = d.defines
            model["defines"] = {"name": q.name, "symbol": q.latex, "unit": unit_tex(q.unit),
                                "unit_md": markdown_unit(q.unit), "meaning": q.meaning}
        if isinstance(d, Claim):
            model["hypotheses"] = [self.formula_latex(h) for h in d.hypotheses]
            model["instance"] = d.instance
            model["steps"] = self.derivation(d, result)
            if result is not None:
                model.update(verdict=result.verdict, expected=result.expected, meets=self.meets(result),
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
            rows.append({"name": name, "symbol": q.latex, "value": si_value_text(v.value, unit),
                         "source": v.source, "as_of": v.as_of or "", "origin": v.origin, "note": v.note,
                         "pinned": name in sc.pinned})
        # model-reader notes (``Scenario.notes``, from the config helper) when the scenario has them
        notes = [str(n) for n in (getattr(sc, "notes", None) or ())]
        notes = self.infeasible + notes  # a scenario that cannot exist says so first, with its bound
        ceilings = []
        for c in getattr(sc, "ceilings", ()) or ():
            q = lib.quantities.get(c.name)
            unit = quantity_unit(q) if q is not None else "1"
            ceilings.append({"name": c.name, "symbol": q.latex if q is not None else c.name,
                             "value": si_value_text(c.value, unit), "kind": c.kind, "source": c.source,
                             "as_of": c.as_of or "", "method": c.method or ""})
        return {"name": sc.name, "infeasible": bool(self.infeasible), "layers": list(sc.layers), "rows": rows,
                "notes": notes, "ceilings": ceilings,
                "measured_ceilings": any(c["kind"] == "measured" for c in ceilings),
                "assumptions": [{"text": t, "latex": self.formula_latex(f)} for t, f in sc.assumptions],
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

    # part I: the argument ----------------------------------------------------------------------------

    @cached_property
    def chapter_numbers(self) -> dict[str, int]:
        """Topic name -> chapter number, shared by every format."""
        return {t.name: i for i, t in enumerate(self.library.topics, start=1)}

    @cached_property
    def headlines(self) -> set[str]:
        """Claims whose formula part I displays with its equation label."""
        return {c.id for c in self.library.claims() if c.label}

    @cached_property
    def in_argument(self) -> set[str]:
        """Claims part I discusses: the headlines and the lecture's inconsistencies."""
        return self.headlines | {c.id for c in self.library.claims() if "inconsistency" in c.tags}

    def band_reading(self, claim: Claim) -> dict | None:
        """An "about X" claim as the lecture says it: ``B* = 2,400 seq (within 1 %)``, with the value
        the engine computes for the same expression."""
        band = tolerance_band(claim.goal)
        if band is None:
            return None
        expr = band.expr
        try:
            dim = dimension_of(expr, self.library.dimension, where=claim.id)
        except DeriveError:
            return None
        unit = quantity_unit(self.library.quantity_of(expr)) if isinstance(expr, sp.Symbol) else format_dimension(dim)
        stated = si_value_text(band.center, unit)
        if band.kind == "percent":
            tol_tex = rf"within \SI{{{_plain(band.amount)}}}{{\percent}}"
            tol_md = f"within {_plain(band.amount)} %"
        elif band.kind == "factor":
            tol_tex = tol_md = f"within a factor {_plain(band.amount)}"
        else:
            low, high = si_value_text(band.low, unit), si_value_text(band.high, unit)
            tol_tex, tol_md = f"between {low['tex']} and {high['tex']}", f"between {low['md']} and {high['md']}"
        # the scenario's value of the expression is what the claim is about only when no hypothesis re-pins it
        computed = None if claim.hypotheses else self.marked(evaluate_expr(self.library, self.scenario, expr, unit)[0])
        latex = self.printer(expr)
        return {"lhs": latex if latex_width(latex) <= 2 * INLINE_WIDTH else None, "stated": stated,
                "tol_tex": tol_tex, "tol_md": tol_md, "computed": computed, "range": band.kind == "between"}

    def threshold_rows(self, claim_id: str) -> list[dict]:
        """Phrases for the thresholds of one claim, one per input: where the claim flips as that input
        moves alone ("$W_{out} \\ge$ 56.25 GB/s, 2.0x below the scenario's 112.5 GB/s")."""
        out = []
        for t in self.thresholds:
            if t.claim != claim_id or (t.low is None and t.high is None):
                continue  # another claim's, or no edge: the claim does not flip as this input moves
            q = self.library.quantities[t.quantity]
            unit = quantity_unit(q)
            value = si_value_text(sp.nsimplify(t.value), unit)

            def edge_text(edge: float, exact: str | None, unit: str = unit) -> dict[str, str]:
                return si_value_text(sp.Rational(exact) if exact is not None else sp.nsimplify(edge), unit)

            sym_md = markdown_math(q.latex)
            if t.low is not None and t.high is not None:
                lo, hi = edge_text(t.low, t.low_exact), edge_text(t.high, t.high_exact)
                op_lo = r"\le" if t.low_closed else "<"
                op_hi = r"\le" if t.high_closed else "<"
                tex = rf"{lo['tex']} ${op_lo} {q.latex} {op_hi}$ {hi['tex']} (the scenario's {value['tex']})"
                md = f"{lo['md']} ${op_lo} {sym_md} {op_hi}$ {hi['md']} (the scenario's {value['md']})"
            else:
                below = t.low is not None
                edge = t.low if below else t.high
                shown = edge_text(edge, t.low_exact if below else t.high_exact)
                closed = t.low_closed if below else t.high_closed
                op = (r"\ge" if closed else ">") if below else (r"\le" if closed else "<")
                tail_tex = tail_md = ""
                if t.value > 0 and edge > 0:
                    factor = t.value / edge if t.value >= edge else edge / t.value
                    where = "below" if edge < t.value else "above"
                    tail_tex = rf", {_factor(factor)}$\times$ {where} the scenario's {value['tex']}"
                    tail_md = f", {_factor(factor)}× {where} the scenario's {value['md']}"
                tex = f"${q.latex} {op}$ {shown['tex']}{tail_tex}"
                md = f"${sym_md} {op}$ {shown['md']}{tail_md}"
            out.append({"quantity": q.name, "symbol": q.latex, "meaning": q.meaning, "holds": t.holds,
                        "verified": t.verified, "tex": tex, "md": md})
        return out

    def reading(self, c: Claim) -> dict:
        """A claim as it appears in the argument: its verdict, its number as the lecture states it,
        its thresholds."""
        r = self.results.get(c.id)
        return {**self.ref(c.id), "verdict": r.verdict if r else "unchecked",
                "meets": self.meets(r) if r else False,
                "expected": r.expected if r else c.expected, "band": self.band_reading(c),
                "statement": c.statement, "clause": c.statement.rstrip().rstrip("."),
                "thresholds": self.threshold_rows(c.id),
                "counterexample": self.counterexample(r.counterexample if r else None),
                "inconsistency": "inconsistency" in c.tags, "notes": c.notes or "",
                "formula": self.formula(c), "formula_tex": self.formula_display(c)}

    def chapter(self, topic, number: int, placed: Sequence[dict]) -> dict:
        """One chapter of part I: its prose, its headline results (formula, derivation, verdict), the
        lecture's numbers that rest on them, thresholds, inconsistencies (once, where they arise) and
        figures.  ``flow`` is the reading order: prose paragraphs with their placeholders resolved, and a
        result, inconsistency or figure where the prose places it (``{{result:ID}}``, ``{{figure:ID}}``);
        what the prose does not place follows it, in library order."""
        lib = self.library
        claims = [d for d in topic.declarations if isinstance(d, Claim)]
        # a chapter's PROSE is its text in part I (the docstring summary heads its catalogue appendix instead)
        paragraphs = [p for p in (getattr(topic, "prose", ()) or (topic.summary,)) if p]
        placements = [placement(p) for p in paragraphs]
        boxed = {lib.resolve(ref).id for kind, ref in filter(None, placements) if kind == "result"}
        # an inconsistency whose verdict the prose cites ({{verdict:ID}}) is discussed there: no box of its own
        cited = {lib.resolve(ref).id for p in paragraphs for kind, ref in split(p) if kind == "verdict"}
        used_by: dict[str, list[Claim]] = {}
        for u in lib.claims():
            if u.instance:
                for x in u.uses:
                    used_by.setdefault(x.id, []).append(u)
        items: dict[str, dict] = {}
        shown: set[str] = set()
        for c in claims:
            if not c.label or c.id in shown:
                continue
            shown.add(c.id)
            numbers = []
            for u in ([c] if c.instance else []) + [u for u in used_by.get(c.id, []) if u.topic == c.topic]:
                if (u.id in shown and u is not c) or u.id in boxed:
                    continue
                shown.add(u.id)
                numbers.append(self.reading(u))
            items[c.id] = {"kind": "result", "decl": self.declaration(c), "numbers": numbers,
                           "reading": self.reading(c)}
        for c in claims:
            if "inconsistency" in c.tags and c.id not in shown:
                shown.add(c.id)
                if c.id in cited and c.id not in boxed:
                    continue
                items[c.id] = {"kind": "inconsistency", "reading": self.reading(c), "decl": self.declaration(c)}
        figures = {f["id"]: f for f in placed}
        flow: list[dict] = []
        for p, where in zip(paragraphs, placements, strict=True):
            if where is None:
                flow.append({"kind": "prose", "text": self.prose(p)})
            elif where[0] == "result":
                flow.append(items.pop(lib.resolve(where[1]).id))
            elif where[1] in figures:  # a figure the build did not draw is left out of the flow
                flow.append({"kind": "figure", "figure": figures.pop(where[1])})
        flow += list(items.values()) + [{"kind": "figure", "figure": f} for f in figures.values()]
        k = 0
        for block in flow:
            if block["kind"] == "result":
                k += 1
                block["number"] = f"{number}.{k}"
        others = [self.reading(c) for c in claims if c.id not in shown and c.instance
                  and tolerance_band(c.goal) is not None]
        counts: dict[str, int] = {}
        for c in claims:
            r = self.results.get(c.id)
            v = r.verdict if r else "unchecked"
            counts[v] = counts.get(v, 0) + 1
        graph = self.chapter_graphs.get(topic.name)
        return {"number": number, "name": topic.name, "title": topic.title, "anchor": "topic-" + topic.name,
                "part": getattr(topic, "part", ""),
                "flow": flow, "entries": [b for b in flow if b["kind"] in ("result", "inconsistency")],
                "prose": [b["text"] for b in flow if b["kind"] == "prose"], "also": others,
                "figures": list(placed),
                "stats": [{"verdict": v, "count": counts[v]} for v in VERDICTS if counts.get(v)],
                "counts": {v: counts.get(v, 0) for v in VERDICTS},
                "claims": len(claims), "graph": self.figure_model(graph) if graph is not None else None}

    def prose(self, text: str) -> ResolvedProse:
        """A paragraph of a chapter's prose with its placeholders filled in under the scenario
        (``derive.model.prose``): values with their units, as everywhere else, and verdicts."""
        parts: list[tuple[str, object]] = []
        for kind, ref in split(text):
            if kind == "text":
                parts += prose_parts(ref)
            elif kind == "value":
                parts.append(("value", self.placeholder_value(ref)))
            elif kind == "verdict":
                r = self.results.get(self.library.resolve(ref).id)
                parts.append(("verdict", r.verdict if r else "unchecked"))
            else:
                raise LibraryError(f"{{{{{kind}:{ref}}}}} must be a paragraph on its own")
        return ResolvedProse(parts)

    @cached_property
    def infeasible(self) -> list[str]:
        """The library's feasibility bounds the scenario breaks, one line each ("infeasible: ..."); empty where
        it can exist.  The title says them and every value printed under the scenario is marked."""
        from derive.whatif.feasibility import feasibility

        return feasibility(self.library, self.scenario).notes

    def marked(self, value: dict[str, str] | None) -> dict[str, str] | None:
        """A value as printed in the text: at a scenario that cannot exist it carries a dagger, which the title
        explains."""
        if value is None or not self.infeasible:
            return value
        return {**value, "md": value["md"] + INFEASIBLE_MARK, "tex": value["tex"] + r"\textsuperscript{\dag}"}

    def placeholder_value(self, name: str) -> dict[str, str]:
        """``{{value:NAME}}``: the quantity's value under the scenario (the path of ``derive eval``), or,
        when the scenario gives it none, a visible note saying why (never a blank).  At a scenario that cannot
        exist the value carries a dagger, which the title explains."""
        q = self.library.quantity(name)
        value, missing = evaluate_expr(self.library, self.scenario, q.sym, quantity_unit(q))
        if value is not None:
            return self.marked(value)
        why = f"needs {', '.join(missing)}" if missing else "not a real number"
        text = f"[{name}: no value under scenario {self.scenario.name}, {why}]"
        return {"tex": latex_escape(text), "md": text, "num": "", "unit": ""}

    def title_page(self) -> dict:
        from derive import __version__

        dates = sorted({v.as_of for v in self.scenario.values.values() if v.as_of})
        return {"version": __version__, "scenario": self.scenario.name, "inputs_date": dates[-1] if dates else None,
                "inputs_from": dates[0] if len(dates) > 1 else None, "mark": INFEASIBLE_MARK,
                "infeasible": [n.removeprefix("infeasible: ") for n in self.infeasible]}

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
        chapters = []
        for number, t in enumerate(lib.topics, start=1):
            graph = self.chapter_graphs.get(t.name)
            # the summary heads the catalogue appendix when the chapter's PROSE replaced it in part I
            topics.append({"name": t.name, "title": t.title, "summary": t.summary, "anchor": "cat-" + t.name,
                           "summary_here": bool(getattr(t, "prose", ())),
                           "number": number, "notation": self.notation(t.quantities),
                           "declarations": [self.declaration(d) for d in t.declarations],
                           "figures": placed.get(t.name, []),
                           "graph": self.figure_model(graph) if graph is not None else None})
            chapters.append(self.chapter(t, number, placed.get(t.name, [])))
        # appendix letters, in the order of both templates (LaTeX letters them itself, in the same order)
        letters = iter("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        appendices = [{"letter": next(letters), "title": f"Scenario {self.scenario.name}", "anchor": "scenario"},
                      {"letter": next(letters), "title": "Verdicts", "anchor": "summary"}]
        if self.baseline is not None:
            appendices.append({"letter": next(letters), "title": "What breaks", "anchor": "what-breaks"})
        measured_appendix = None
        if self.measured:
            measured_appendix = next(letters)
            appendices.append({"letter": measured_appendix, "title": self.measured["title"], "anchor": "measured"})
        for t, ch in zip(topics, chapters, strict=True):
            t["appendix"] = ch["appendix"] = next(letters)
            appendices.append({"letter": t["appendix"], "title": "Catalogue: " + t["title"], "anchor": t["anchor"]})
        figures_appendix = graph_appendix = None
        if loose:
            figures_appendix = next(letters)
            appendices.append({"letter": figures_appendix, "title": "Figures", "anchor": "figures"})
        if self.graph is not None:
            graph_appendix = next(letters)
            appendices.append({"letter": graph_appendix, "title": "Dependency graph", "anchor": "dependency-graph"})
        counts = self.report.summary()
        claims = [{**self.ref(r.id), "verdict": r.verdict, "expected": r.expected, "meets": self.meets(r),
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
            "chapters": chapters,
            "appendices": appendices,
            "figures_appendix": figures_appendix,
            "measured": self.measured,
            "measured_appendix": measured_appendix,
            "graph_appendix": graph_appendix,
            "titlepage": self.title_page(),
            "verdict_names": [v for v in VERDICTS if counts.get(v, 0) and v != "assumed"],
            "verdict_counts": {v: counts.get(v, 0) for v in VERDICTS},
            "siunit_declarations": siunit_declarations(_unit_strings(self.library)),
        }


def document_model(library: Library, scenario: Scenario, report: Report, *, baseline: Report | None = None,
                   figures: Sequence[FigureResult] = (), graph: FigureResult | None = None,
                   thresholds: Sequence[Threshold] = (),
                   chapter_graphs: Mapping[str, FigureResult] | None = None, measured: Mapping | None = None) -> dict:
    """The whole document as plain data (see the module docstring).  ``measured``: the "Measured against
    derived" appendix (``derive.documents.build._measured``), when the library has a ledger."""
    return ModelBuilder(library, scenario, report, baseline=baseline, figures=figures, graph=graph,
                        thresholds=thresholds, chapter_graphs=chapter_graphs, measured=measured).build()


# paper macros -------------------------------------------------------------------------------------------

_PDF_ASCII = {"×": "x", "·": "*", "≈": "~", "≤": "<=", "≥": ">=", "≠": "!=", "—": "--", "–": "-", "’": "'",
              "‘": "'", "“": '"', "”": '"', "…": "...", "µ": "u", "−": "-", "\u00a0": " ", "→": "->", "±": "+-"}
_PDF_SPECIAL = {"#": r"\#", "%": r"\%", "&": r"\&", "_": r"\_", "$": r"\$", "{": r"\{", "}": r"\}",
                "\\": r"\textbackslash{}", "^": r"\textasciicircum{}", "~": r"\textasciitilde{}"}


def pdf_text(text: object) -> str:
    """Plain text for a PDF string (the second argument of ``\\texorpdfstring``, hence bookmarks):
    ASCII, with LaTeX's special characters as the commands ``\\pdfstringdef`` knows."""
    out = []
    for ch in str(text).translate(str.maketrans({**{c: v for c, v in _PDF_ASCII.items()},
                                                  **{d: str(i) for i, d in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")},
                                                  "⁻": "-"})):
        if ch in _PDF_SPECIAL:
            out.append(_PDF_SPECIAL[ch])
        elif 32 <= ord(ch) < 127:
            out.append(ch)
        elif ch.isspace():
            out.append(" ")
    return " ".join("".join(out).split())


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
        rows.append({"id": d.id, "short": mb.short_names[d.id], "macro": mb.macro_names[d.id], "formula": formula,
                     "title": d.title, "pdf_title": pdf_text(d.title), "label": mb.eq_label(d.id), "kind": d.kind,
                     "verdict": r.verdict if r else None})
    return {"scenario": scenario.name, "macros": rows}


def _unit_strings(library: Library) -> list[str]:
    """The unit strings of the library's quantities: every unit its documents show is built from them."""
    return [u for q in library.quantities.values() for u in (q.unit, q.display_unit) if u]


def values_model(library: Library, scenario: Scenario, report: Report | None = None) -> dict:
    """A macro per quantity with a value under the scenario (given ones and computed ones), and the
    verdict of every claim of the report."""
    rows = []
    for name, q in library.quantities.items():
        if q.value is not None:
            continue
        value, _ = evaluate_expr(library, scenario, q.sym, quantity_unit(q))
        if value is None:
            continue
        origin = "scenario" if name in scenario.values else "computed"
        rows.append({"name": name, "macro": macro_name("val", name), "value": {**value, "pdf": pdf_text(value["md"])},
                     "si_unit": value.get("si_unit", ""), "origin": origin})
    verdicts = []
    if report is not None:
        mb = ModelBuilder(library, scenario, report)
        for r in report.results:
            if r.id in library.declarations:
                verdicts.append({"id": r.id, "short": mb.short_names[r.id], "verdict": r.verdict})
    return {"scenario": scenario.name, "values": rows, "verdicts": verdicts,
            "siunit_declarations": siunit_declarations(_unit_strings(library))}
