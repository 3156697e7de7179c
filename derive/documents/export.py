"""Paper-ready snippets of single declarations (``derive export``).

Each snippet is the declaration's formula in an equation with the same stable label the derivation
document uses (``eq:batch_optimum``; the full id when two topics share a last part), preceded by the
title, the verdict under the scenario and the source as comments (LaTeX) or prose (Markdown).
"""

from __future__ import annotations

from collections.abc import Sequence

from derive.checking.checker import Checker, Report
from derive.documents.render import render
from derive.documents.view import ModelBuilder
from derive.model.declarations import Claim
from derive.model.library import Library
from derive.model.scenario import Scenario


def export(library: Library, scenario: Scenario, ids: Sequence[str], kind: str = "latex", *,
           checker: Checker | None = None) -> str:
    """Snippets for ``ids`` in ``kind`` ("latex" or "markdown")."""
    decls = [library.resolve(i) for i in ids]
    claims = [d.id for d in decls if isinstance(d, Claim)]
    if claims:
        report = (checker or Checker(library, scenario)).check(claims)
    else:
        report = Report(scenario, [])
    mb = ModelBuilder(library, scenario, report)
    items = []
    for d in decls:
        r = mb.results.get(d.id)
        items.append({"id": d.id, "title": d.title, "statement": d.statement, "source": str(d.source),
                      "anchor": mb.anchor(d.id), "label": mb.eq_label(d.id), "formula": mb.formula(d),
                      "verdict": r.verdict if r else ("assumed" if d.kind == "assumption" else None),
                      "engine": r.engine if r else None})
    template = "export.tex.j2" if kind == "latex" else "export.md.j2"
    return render("latex" if kind == "latex" else "markdown", template, {"items": items, "scenario": scenario.name})
