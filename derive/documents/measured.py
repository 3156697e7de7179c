"""Measured against derived: the ledger as a document section, and its figures.

``measured_section(library, figures_dir)`` returns a plain data model (rows already formatted with
units, figure files, counts) that a template can render; ``draw_ledger_figures`` draws the measured
points of each ledger figure over the derived curve (the bound at the spec-sheet peaks, and at the
achieved ceilings when the hardware has measurement files).  Output is deterministic: fixed
matplotlib metadata and hash salt, no dates.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import sympy as sp

from derive.errors import ScenarioError
from derive.model.library import Library
from derive.model.scenario import Scenario, build_scenario
from derive.model.situation import situate
from derive.model.units import parse_unit
from derive.whatif.ledger import FigureSpec, Ledger, LedgerRow, build_ledger, check_relation

SECTION_TITLE = "Measured against derived"
_METADATA = {"svg": {"Date": None, "Creator": None}, "png": {"Software": None},
             "pdf": {"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None}}


@dataclass(frozen=True)
class MeasuredRow:
    id: str
    title: str
    hardware: str | None
    kind: str  # "floor", "ceiling" or "prediction"
    derived: str  # the bound at the spec-sheet peaks, with its unit
    measured: str
    ratio: float  # measured / derived
    derived_achieved: str | None  # the bound at the achieved ceilings, when measured
    ratio_achieved: float | None
    status: str  # "above floor", "below ceiling", "prediction", "contradiction"
    contradicts: tuple[str, ...]  # assumptions a contradiction breaks
    check: str  # the declaration the measurement is held to
    source: str
    as_of: str


@dataclass(frozen=True)
class MeasuredFigure:
    name: str
    files: dict[str, str]  # format -> file name inside the figures folder
    caption: str


@dataclass(frozen=True)
class MeasuredSection:
    title: str
    intro: str
    rows: tuple[MeasuredRow, ...]
    figures: tuple[MeasuredFigure, ...]
    summary: dict[str, int]  # status -> count

    @property
    def contradictions(self) -> tuple[MeasuredRow, ...]:
        return tuple(r for r in self.rows if r.status == "contradiction")


def _row(r: LedgerRow) -> MeasuredRow:
    from derive.model.display import format_value

    e = r.entry
    ra = r.ratio_achieved
    return MeasuredRow(e.id, e.title, e.hardware, r.kind, format_value(r.bound, r.unit), format_value(e.value, r.unit),
                       float(r.ratio), None if r.bound_achieved is None else format_value(r.bound_achieved, r.unit),
                       None if ra is None else float(ra), r.status, r.broken, e.check, e.source, e.as_of)


def measured_section(library: Library, figures_dir: Path | None = None,
                     formats: Sequence[str] = ("svg",)) -> MeasuredSection:
    """The ledger as a section: every measurement with its floor, ratio and status; figures drawn into
    ``figures_dir`` when given."""
    ledger = build_ledger(library)
    figures: list[MeasuredFigure] = []
    if figures_dir is not None:
        figures = [f for f in _draw(library, ledger, Path(figures_dir), formats)]
    summary = ledger.to_json()["summary"]
    intro = (f"{len(ledger.rows)} measurements held to the library's proved floors and ceilings: the bound at the "
             "spec-sheet peaks, the same bound at the chip's achieved ceilings where it has measurement files, "
             "and the measured value's ratio to each.  A measurement on the wrong side of a proved bound "
             "contradicts an assumption, which is named.")
    return MeasuredSection(SECTION_TITLE, intro, tuple(_row(r) for r in ledger.rows), tuple(figures), summary)


def draw_ledger_figures(library: Library, ledger: Ledger, directory: Path,
                        formats: Sequence[str] = ("svg", "png")) -> list[Path]:
    """Draw every ledger figure (measured points over the derived curves) into ``directory``."""
    return [Path(directory) / name for f in _draw(library, ledger, Path(directory), formats)
            for name in f.files.values()]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _scenario(library: Library, row: LedgerRow, measured: bool = False) -> Scenario:
    e = row.entry
    return build_scenario(library, hardware=e.hardware, model=e.model, sets=e.sets, measured=measured)


def _value_at(library: Library, scen: Scenario, expr: sp.Expr) -> sp.Rational:
    value = situate(library, scen).require(expr, str(expr))
    if not value.is_Rational:
        raise ScenarioError(f"cannot evaluate {expr} under {scen.name}")
    return value


def _curve(library: Library, scen: Scenario, bound: sp.Expr, xexpr: sp.Expr, vary: sp.Symbol,
           xs: Sequence[float]) -> list[float]:
    """The bound along the x-axis: for each x, solve x-expression = x for the varied quantity."""
    situation = situate(library, scen)
    subs = situation.values_except([str(vary)])
    expanded = situation.expand(bound).xreplace(subs)
    xe = situation.expand(xexpr).xreplace(subs)
    target = sp.Symbol("_x", positive=True)
    sols = [s for s in sp.solve(sp.Eq(xe, target), vary) if s.is_positive is not False]
    if len(sols) != 1:
        raise ScenarioError(f"cannot vary {vary} along the axis {xexpr}")
    f = sp.lambdify(target, expanded.xreplace({vary: sols[0]}), modules=["math", {"Max": max, "Min": min}])
    return [float(f(x)) for x in xs]


def _draw(library: Library, ledger: Ledger, directory: Path, formats: Sequence[str]) -> list[MeasuredFigure]:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from derive.model.parse import parse_expression

    out = []
    for spec in ledger.figures:
        rows = [r for r in ledger.rows if spec.name in r.entry.series and r.entry.file == spec.file]
        if not rows:
            continue
        with matplotlib.rc_context({"svg.hashsalt": "derive", "svg.fonttype": "path", "font.size": 9,
                                    "axes.grid": True, "grid.alpha": 0.3, "figure.dpi": 100,
                                    "savefig.bbox": "tight", "pdf.fonttype": 3}):
            fig = _figure(library, spec, rows, parse_expression, plt)
            stem = _slug(f"{Path(spec.file).stem}-{spec.name}")
            directory.mkdir(parents=True, exist_ok=True)
            files = {}
            for fmt in formats:
                buf = io.BytesIO()
                fig.savefig(buf, format=fmt, metadata=_METADATA[fmt], dpi=150 if fmt == "png" else "figure")
                (directory / f"{stem}.{fmt}").write_bytes(buf.getvalue())
                files[fmt] = f"{stem}.{fmt}"
            plt.close(fig)
        hw = rows[0].entry.hardware or ""
        out.append(MeasuredFigure(spec.name, files, f"{spec.name} ({hw}): measured points against the derived "
                                                    f"bound at the spec-sheet peaks and at the achieved ceilings"))
    return out


def _figure(library: Library, spec: FigureSpec, rows: list[LedgerRow], parse_expression, plt):
    xexpr = parse_expression(spec.x, library.symbols(), where=f"figure {spec.name}")
    free = sorted(xexpr.free_symbols, key=lambda s: s.name)
    vary = next((s for s in free if s.name == "experts_total"), None) if len(free) > 1 else free[0]
    if vary is None:
        vary = free[0]
    measured, _, bound = check_relation(library, rows[0].entry.check, f"figure {spec.name}")
    q = library.quantities[measured]
    yunit = q.display_unit or q.unit
    yscale = float(parse_unit(yunit).scale)
    points = []
    for r in rows:
        scen = _scenario(library, r)
        points.append((float(_value_at(library, scen, xexpr)), float(r.entry.value) / yscale))
    points.sort()
    lo, hi = points[0][0], points[-1][0]
    logx = hi / lo > 20
    n = 200
    xs = [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)] if logx else [lo + (hi - lo) * i / (n - 1)
                                                                          for i in range(n)]
    base = rows[0]
    fig, ax = plt.subplots(figsize=(5.2, 3.4))
    word = {"floor": "floor", "ceiling": "ceiling"}.get(base.kind, "derived")
    ax.plot(xs, [y / yscale for y in _curve(library, _scenario(library, base), bound, xexpr, vary, xs)],
            color="#1f4e79", label=f"{word} at spec-sheet peaks")
    if base.bound_achieved is not None:
        ax.plot(xs, [y / yscale for y in _curve(library, _scenario(library, base, True), bound, xexpr, vary, xs)],
                color="#1f4e79", linestyle="--", label=f"{word} at achieved ceilings")
    ax.plot([p[0] for p in points], [p[1] for p in points], "o", color="#c0392b", markersize=4, label="measured")
    if logx:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel(spec.x.replace("_", " "))
    ax.set_ylabel(f"{measured.replace('_', ' ')} [{yunit}]")
    ax.set_title(f"{spec.name} ({base.entry.hardware})", fontsize=9)
    ax.legend(fontsize=8, loc="best")
    return fig
