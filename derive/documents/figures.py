"""Figures as data: a library declares what to plot, the engine evaluates and draws it.

A ``Figure`` names an x quantity and its range, the curves (quantities, expressions or expression
text in quantity names) and marks (vertical or horizontal lines at a value, such as a critical
batch or a latency floor).  ``render_figure`` evaluates every curve *vectorised*: the expression is
expanded to base quantities, the scenario's values are substituted for everything except x, and the
result is compiled once with ``sympy.lambdify`` to numpy and applied to the whole x grid.

Output is deterministic (fixed SVG hash salt, no dates or creator strings in SVG, PDF or PNG).  A
figure whose inputs the scenario does not give, or whose quantities the library does not have, is
skipped with a note: ``FigureResult.note`` says why, and documents show it instead of the figure.

``render_graph`` draws the dependency graph of claims and assumptions, coloured by verdict, with a
layered layout (no randomness).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import sympy as sp

from derive.errors import DeriveError, LibraryError, no_value_words
from derive.model.declarations import Assumption, Claim, Definition, Quantity
from derive.model.library import Library
from derive.model.scenario import Scenario
from derive.model.situation import situate
from derive.model.units import Dimension, format_dimension, parse_unit

_ID = re.compile(r"^[a-z][a-z0-9_]*$")
Plottable = Quantity | sp.Expr | str

VERDICT_COLOURS = {
    "proved": "#2e7d32", "refuted": "#c62828", "unknown": "#ef6c00", "inconsistent": "#6a1b9a",
    "assumed": "#546e7a", "blocked": "#f9a825", "definition": "#b0bec5", "unchecked": "#9e9e9e",
}
_LINE_COLOURS = ("#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#5d4037")


@dataclass(frozen=True)
class Curve:
    """One line of a figure: a quantity or expression of x; ``label`` defaults to its LaTeX form."""

    expr: Plottable
    label: str | None = None
    style: str = "-"


@dataclass(frozen=True)
class Mark:
    """A straight line at a value: vertical (``axis="x"``) or horizontal (``"y"``).  ``axis=None``
    picks the axis whose dimension matches the value's."""

    expr: Plottable
    label: str
    axis: str | None = None


@dataclass(frozen=True)
class Figure:
    """A plot of curves against one quantity, under the scenario a document is built for.

    ``x_range`` is in ``x_unit`` (default: the quantity's display unit, else its unit); curves are
    drawn in ``y_unit`` (default: the first curve's display unit, else SI).  ``crossings`` lists pairs
    of curve indices whose intersections are marked.  ``topic`` places the figure at the end of that
    topic's section in documents (default: a figures section of its own).
    """

    id: str
    title: str
    x: Quantity | str
    x_range: tuple[float, float]
    curves: tuple[Curve | Plottable, ...]
    marks: tuple[Mark | tuple[str, Plottable], ...] = ()
    crossings: tuple[tuple[int, int], ...] = ()
    x_unit: str | None = None
    y_unit: str | None = None
    y_label: str | None = None
    log_x: bool = False
    log_y: bool = False
    integer_x: bool = False
    caption: str = ""
    topic: str | None = None
    points: int = 400

    def __post_init__(self) -> None:
        if not _ID.match(self.id):
            raise LibraryError(f"figure id '{self.id}' must be snake_case")
        lo, hi = (float(v) for v in self.x_range)
        if not lo < hi:
            raise LibraryError(f"figure '{self.id}': x_range must be (low, high) with low < high")
        if self.log_x and lo <= 0:
            raise LibraryError(f"figure '{self.id}': a logarithmic x axis needs a positive range")
        if not self.curves:
            raise LibraryError(f"figure '{self.id}' has no curves")
        curves = tuple(c if isinstance(c, Curve) else Curve(c) for c in self.curves)
        marks = tuple(m if isinstance(m, Mark) else Mark(m[1], m[0]) for m in self.marks)
        for m in marks:
            if m.axis not in (None, "x", "y"):
                raise LibraryError(f"figure '{self.id}': mark axis must be 'x', 'y' or None")
        for i, j in self.crossings:
            if not (0 <= i < len(curves) and 0 <= j < len(curves)):
                raise LibraryError(f"figure '{self.id}': crossing ({i}, {j}) names a curve that does not exist")
        object.__setattr__(self, "x_range", (lo, hi))
        object.__setattr__(self, "curves", curves)
        object.__setattr__(self, "marks", marks)


@dataclass
class FigureResult:
    """A drawn (or skipped) figure: file names relative to the output folder, by format."""

    id: str
    title: str
    caption: str
    topic: str | None
    files: dict[str, str] = field(default_factory=dict)
    note: str | None = None  # why it was skipped

    @property
    def skipped(self) -> bool:
        return not self.files


class _Missing(Exception):
    """A figure cannot be drawn under this library or scenario (a note, not an error)."""


# evaluation ------------------------------------------------------------------------------------------

def _expr_of(library: Library, item: Plottable, where: str) -> sp.Expr:
    if isinstance(item, Quantity):
        if library.quantities.get(item.name) is not item:
            raise _Missing(f"the library has no quantity '{item.name}'")
        return item.sym
    if isinstance(item, str):
        if item in library.quantities:
            return library.quantities[item].sym
        from derive.model.parse import parse_expression

        try:
            return parse_expression(item, library.symbols(), where=where)
        except DeriveError as err:
            raise _Missing(f"'{item}' is not an expression in this library's quantities ({err.message})") from None
    expr = sp.sympify(item)
    unknown = sorted(str(s) for s in expr.free_symbols if str(s) not in library.quantities)
    if unknown:
        raise _Missing("the library has no quantity " + ", ".join(unknown))
    return expr


def _default_unit(library: Library, expr: sp.Expr) -> str:
    if isinstance(expr, sp.Symbol):
        q = library.quantity_of(expr)
        return q.display_unit or q.unit
    from derive.model.dimensions import dimension_of

    return format_dimension(dimension_of(expr, library.dimension, where="figure"))


def _dimension(library: Library, expr: sp.Expr) -> Dimension:
    from derive.model.dimensions import dimension_of

    return dimension_of(expr, library.dimension, where="figure")


def _scale(unit: str) -> float:
    s = parse_unit(unit).scale
    return s.numerator / s.denominator


def _compile(library: Library, scenario: Scenario, expr: sp.Expr, x: sp.Symbol | None):
    """The expression as a numpy function of x (SI in, SI out), scenario values substituted."""
    import numpy as np

    situation = situate(library, scenario)
    free = [] if x is None else [str(x)]
    missing = situation.missing(expr, keep=free, pinned=free)
    if missing:
        raise _Missing(no_value_words(missing))
    expanded = situation.expand(expr, free).xreplace(situation.values_except(free))
    if x is None:
        value = float(expanded)
        return lambda xs: np.full(np.shape(xs), value)
    fn = sp.lambdify(x, expanded, "numpy")

    def apply(xs):
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.asarray(fn(xs), dtype=float)
        return np.broadcast_to(out, np.shape(xs)).astype(float)

    return apply


def _mathtext(latex: str) -> str:
    return f"${latex}$"


def _crossings(xs, a, b) -> list[float]:
    import numpy as np

    d = a - b
    out = []
    for i in np.nonzero(np.sign(d[:-1]) * np.sign(d[1:]) < 0)[0]:
        x0, x1, d0, d1 = xs[i], xs[i + 1], d[i], d[i + 1]
        out.append(float(x0 - d0 * (x1 - x0) / (d1 - d0)))
    return out


def _save(fig, directory: Path, stem: str, formats: Sequence[str]) -> dict[str, str]:
    """Save with fixed metadata so that identical input gives identical bytes."""
    files = {}
    metadata = {
        "svg": {"Date": None, "Creator": None},
        "pdf": {"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None},
        "png": {"Software": None},
    }
    directory.mkdir(parents=True, exist_ok=True)
    for fmt in formats:
        name = f"{stem}.{fmt}"
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, metadata=metadata[fmt], dpi=150 if fmt == "png" else "figure")
        (directory / name).write_bytes(buf.getvalue())
        files[fmt] = name
    return files


def _rc():
    import matplotlib

    return matplotlib.rc_context({
        "svg.hashsalt": "derive", "svg.fonttype": "path", "font.size": 9, "axes.grid": True,
        "grid.alpha": 0.3, "figure.dpi": 100, "savefig.bbox": "tight", "pdf.fonttype": 3,
    })


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def render_figure(figure: Figure, library: Library, scenario: Scenario, directory: Path,
                  formats: Sequence[str] = ("svg", "pdf"), prefix: str = "figures/") -> FigureResult:
    """Draw one figure into ``directory``; a figure the scenario cannot supply is skipped with a note."""
    import numpy as np

    from derive.documents.latex import make_printer

    result = FigureResult(figure.id, figure.title, figure.caption, figure.topic)
    printer = make_printer(library.quantities)
    try:
        x_expr = _expr_of(library, figure.x, f"figure {figure.id}")
        if not isinstance(x_expr, sp.Symbol):
            raise LibraryError(f"figure '{figure.id}': x must be a quantity")
        xq = library.quantity_of(x_expr)
        x_unit = figure.x_unit or xq.display_unit or xq.unit
        if parse_unit(x_unit).dimension != xq.dimension:
            raise LibraryError(f"figure '{figure.id}': x_unit {x_unit} does not fit {xq.name} ({xq.unit})")
        curves = [(c, _expr_of(library, c.expr, f"figure {figure.id}")) for c in figure.curves]
        y_dim = _dimension(library, curves[0][1])
        for _c, e in curves[1:]:
            if _dimension(library, e) != y_dim:
                raise LibraryError(f"figure '{figure.id}': curves differ in dimension "
                                   f"({format_dimension(y_dim)} and {format_dimension(_dimension(library, e))})")
        y_unit = figure.y_unit or _default_unit(library, curves[0][1])
        if parse_unit(y_unit).dimension != y_dim:
            raise LibraryError(f"figure '{figure.id}': y_unit {y_unit} does not fit {format_dimension(y_dim)}")
        lo, hi = figure.x_range
        if figure.integer_x:
            xs = np.arange(int(np.ceil(lo)), int(np.floor(hi)) + 1, dtype=float)
        elif figure.log_x:
            xs = np.geomspace(lo, hi, figure.points)
        else:
            xs = np.linspace(lo, hi, figure.points)
        xs_si = xs * _scale(x_unit)
        ys = [_compile(library, scenario, e, x_expr)(xs_si) / _scale(y_unit) for _, e in curves]
        marks = []
        for m in figure.marks:
            e = _expr_of(library, m.expr, f"figure {figure.id}")
            dim = _dimension(library, e)
            axis = m.axis or ("x" if dim == xq.dimension else "y" if dim == y_dim else None)
            if axis is None or dim != (xq.dimension if axis == "x" else y_dim):
                raise LibraryError(f"figure '{figure.id}': mark '{m.label}' fits neither axis")
            value = float(_compile(library, scenario, e, None)(np.zeros(1))[0])
            unit = x_unit if axis == "x" else y_unit
            marks.append((m.label, axis, value / _scale(unit), _unit_suffix(unit)))
    except _Missing as why:
        result.note = f"Figure skipped: {why}."
        return result

    plt = _pyplot()
    with _rc():
        fig, ax = plt.subplots(figsize=(6.0, 3.6))
        for i, ((c, e), y) in enumerate(zip(curves, ys, strict=True)):
            label = c.label if c.label is not None else _mathtext(printer(e))
            style = c.style + ("o" if figure.integer_x and "o" not in c.style else "")
            ax.plot(xs, y, style, color=_LINE_COLOURS[i % len(_LINE_COLOURS)], label=label, linewidth=1.6,
                    markersize=3.5)
        for label, axis, value, unit in marks:
            if axis == "x":
                ax.axvline(value, color="#424242", linestyle="--", linewidth=1.0)
                ax.annotate(f"{label} = {_short(value)}{unit}", xy=(value, 1), xycoords=("data", "axes fraction"),
                            xytext=(3, -12), textcoords="offset points", fontsize=8, color="#424242")
            else:
                ax.axhline(value, color="#424242", linestyle=":", linewidth=1.0)
                ax.annotate(f"{label} = {_short(value)}{unit}", xy=(0, value), xycoords=("axes fraction", "data"),
                            xytext=(4, 3), textcoords="offset points", fontsize=8, color="#424242")
        for i, j in figure.crossings:
            for xc in _crossings(xs, ys[i], ys[j]):
                yc = float(np.interp(xc, xs, ys[i]))
                ax.plot([xc], [yc], "o", color="black", markersize=5)
                ax.annotate(f"crossover {_short(xc)}{_unit_suffix(x_unit)}", xy=(xc, yc), xytext=(5, -12),
                            textcoords="offset points", fontsize=8)
        if figure.log_x:
            ax.set_xscale("log")
        if figure.log_y:
            ax.set_yscale("log")
        unit_text = "" if x_unit.strip() == "1" else f" [{x_unit}]"
        ax.set_xlabel(f"{_mathtext(xq.latex)}  {xq.name.replace('_', ' ')}{unit_text}")
        ax.set_ylabel(figure.y_label or f"[{y_unit}]")
        ax.set_title(figure.title, fontsize=10)
        ax.legend(fontsize=8, loc="best")
        try:
            result.files = {fmt: prefix + name
                            for fmt, name in _save(fig, directory, figure.id, formats).items()}
        except ValueError as err:  # mathtext could not parse a label
            raise LibraryError(f"figure '{figure.id}' cannot be drawn: {err}") from None
        finally:
            plt.close(fig)
    return result


def _unit_suffix(unit: str) -> str:
    """" 14.4 ms"-style unit after a number on a label (nothing for a dimensionless axis)."""
    return "" if unit.strip() in ("", "1") else f" {unit}"


def _short(value: float) -> str:
    """A number for a label: four significant digits, thousands grouped, exponent only outside
    [1e-3, 1e6)."""
    if value == 0:
        return "0"
    if 1000 <= abs(value) < 1e6:
        return f"{round(value, 4 - len(str(int(abs(value))))):,.0f}"
    if 1e-3 <= abs(value) < 1000:
        return f"{value:.4g}"
    return f"{value:.3g}"


# the dependency graph --------------------------------------------------------------------------------

def claim_graph(library: Library):
    """Claims and assumptions, with an edge a -> b when b rests on a directly or through definitions
    only; transitively reduced."""
    import networkx as nx

    keep = [d.id for d in library.ordered() if isinstance(d, Claim | Assumption)]
    keep_set = set(keep)
    g = nx.DiGraph()
    g.add_nodes_from(keep)
    for v in keep:
        stack, seen = list(library.graph.predecessors(v)), set()
        while stack:
            u = stack.pop()
            if u in seen:
                continue
            seen.add(u)
            if u in keep_set:
                g.add_edge(u, v)
            else:
                stack.extend(library.graph.predecessors(u))
    reduced = nx.transitive_reduction(g)
    out = nx.DiGraph()
    out.add_nodes_from(keep)
    out.add_edges_from(sorted(reduced.edges(), key=lambda e: (keep.index(e[0]), keep.index(e[1]))))
    return out


def node_status(library: Library, verdicts: Mapping[str, str]) -> dict[str, str]:
    """Colour key of every declaration: its verdict, ``assumed``, ``definition`` or ``unchecked``."""
    out = {}
    for d in library.ordered():
        if isinstance(d, Claim):
            out[d.id] = verdicts.get(d.id, "unchecked")
        elif isinstance(d, Assumption):
            out[d.id] = "assumed"
        elif isinstance(d, Definition):
            out[d.id] = "definition"
    return out


def _layers(graph, order: Mapping[str, int]) -> dict[str, int]:
    import networkx as nx

    depth: dict[str, int] = {}
    for v in nx.lexicographical_topological_sort(graph, key=order.get):
        depth[v] = max((depth[u] + 1 for u in graph.predecessors(v)), default=0)
    return depth


def render_graph(library: Library, verdicts: Mapping[str, str], directory: Path, stem: str = "dependency_graph",
                 formats: Sequence[str] = ("svg", "pdf"), *, full: bool = False,
                 prefix: str = "figures/") -> FigureResult:
    """Draw the dependency graph (claims and assumptions; ``full``: every declaration)."""
    graph = library.graph if full else claim_graph(library)
    result = FigureResult(stem, "Dependency graph", "", None)
    if not full:
        alone = [v for v in graph.nodes if graph.degree(v) == 0]
        if alone and len(alone) < graph.number_of_nodes():
            graph = graph.copy()
            graph.remove_nodes_from(alone)
            result.caption = (f"{len(alone)} claims and assumptions that neither rest on nor support another "
                              "are not drawn.")
    if graph.number_of_nodes() == 0:
        result.note = "Figure skipped: the library has no claims."
        return result
    files = _draw_graph(graph, library, verdicts, directory, stem, formats)
    result.files = {fmt: prefix + name for fmt, name in files.items()}
    return result


PRINT_WIDTH_IN = 6.3  # the text width of the documents' LaTeX page, inches
CHAPTER_GRAPH_FONT = 7.5  # points, at natural size


def chapter_graph(library: Library, topic: str):
    """The claims and assumptions of one topic, with the ones of other topics they rest on directly
    (drawn as outside nodes); edges as in ``claim_graph``."""
    import networkx as nx

    full = claim_graph(library)
    own = [d.id for d in library.ordered() if d.topic == topic and d.id in full]
    nodes = set(own)
    for v in own:
        nodes |= set(full.predecessors(v))
    # Built node by node in library order: a networkx subgraph view of a small node set iterates that
    # set, whose order follows the strings' hashes and so PYTHONHASHSEED (the figures' bytes with it).
    sub = nx.DiGraph()
    sub.add_nodes_from(v for v in full.nodes if v in nodes)
    # an outside node only matters through its edges into the chapter
    sub.add_edges_from((u, v) for u, v in full.edges if v in own and u in nodes)
    return sub, set(own)


def render_chapter_graph(library: Library, verdicts: Mapping[str, str], topic: str, directory: Path,
                         formats: Sequence[str] = ("svg", "pdf"), prefix: str = "figures/") -> FigureResult:
    """One chapter's dependency subgraph, laid out for a portrait page so that its labels stay
    legible at print size (at least 6 pt after scaling to the text width)."""
    graph, own = chapter_graph(library, topic)
    stem = f"graph_{topic}"
    result = FigureResult(stem, "Dependency graph of the chapter", "", topic)
    if graph.number_of_nodes() == 0:
        result.note = "Figure skipped: the chapter has no claims or assumptions."
        return result
    outside = set(graph.nodes) - own
    result.caption = ("Claims and assumptions of the chapter; an arrow points from what a statement rests on "
                      "to the statement." + (" Outlined nodes belong to earlier chapters." if outside else ""))
    files = _draw_graph(graph, library, verdicts, directory, stem, formats, fontsize=CHAPTER_GRAPH_FONT,
                        aspect=1.1, outside=outside, max_width=PRINT_WIDTH_IN)
    result.files = {fmt: prefix + name for fmt, name in files.items()}
    return result


def graph_svg(library: Library, verdicts: Mapping[str, str]) -> bytes:
    """The full dependency graph as SVG bytes (``derive graph --format svg``)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        _draw_graph(library.graph, library, verdicts, Path(tmp), "graph", ("svg",))
        return (Path(tmp) / "graph.svg").read_bytes()


def _draw_graph(graph, library: Library, verdicts: Mapping[str, str], directory: Path, stem: str,
                formats: Sequence[str], *, fontsize: float = 6, aspect: float = 0.62,
                outside: Iterable[str] = (), max_width: float | None = None) -> dict[str, str]:
    from matplotlib.lines import Line2D

    outside = set(outside)
    order = {d.id: i for i, d in enumerate(library.ordered())}
    depth = _layers(graph, order)
    layers: dict[int, list[str]] = {}
    for v in sorted(graph.nodes, key=order.get):
        layers.setdefault(depth[v], []).append(v)
    label = {v: v.rsplit(".", 1)[-1] for v in graph.nodes}
    char = _GRAPH_CHAR * fontsize / 6
    vertical = max_width is not None
    if vertical:  # a page-width figure: layers top to bottom, each wrapped into lines of the page width
        pos, width, height = _graph_rows(layers, label, char=char, row=_GRAPH_ROW * fontsize / 6 * 1.9,
                                         max_width=max_width)
    else:
        _, pos, width, height = _graph_layout(layers, label, char=char, row=_GRAPH_ROW * fontsize / 6,
                                              aspect=aspect)
    status = node_status(library, verdicts)
    plt = _pyplot()
    with _rc():
        # Data coordinates are inches of the figure, so text (in points) and spacing stay in proportion.
        fig = plt.figure(figsize=(width, height))
        ax = fig.add_axes((0, 0, 1, 1))
        ax.axis("off")
        ax.grid(False)
        half = {v: char * len(label[v]) / 2 + 0.06 for v in graph.nodes}
        box = fontsize / 72 * 0.75  # half a label's height, inches
        for u, v in sorted(graph.edges, key=lambda e: (order[e[0]], order[e[1]])):  # drawing order is byte order
            (x0, y0), (x1, y1) = pos[u], pos[v]
            start, end = ((x0, y0 - box), (x1, y1 + box)) if vertical else ((x0 + half[u], y0), (x1 - half[v], y1))
            ax.annotate("", xy=end, xytext=start,
                        arrowprops={"arrowstyle": "-|>", "color": "#90a4ae", "lw": 0.6, "shrinkA": 0, "shrinkB": 1,
                                    "mutation_scale": 6})
        for v, (x, y) in pos.items():
            colour = VERDICT_COLOURS[status.get(v, "unchecked")]
            if v in outside:
                ax.text(x, y, label[v], ha="center", va="center", fontsize=fontsize, color=colour,
                        bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": colour, "lw": 0.8})
            else:
                ax.text(x, y, label[v], ha="center", va="center", fontsize=fontsize, color="white",
                        bbox={"boxstyle": "round,pad=0.2", "facecolor": colour, "edgecolor": "none"})
        ax.set_xlim(0, width)
        ax.set_ylim(0, height)
        used = [s for s in VERDICT_COLOURS if s in set(status[v] for v in graph.nodes if v in status)]
        handles = [Line2D([0], [0], marker="s", linestyle="", markersize=6, color=VERDICT_COLOURS[s], label=s)
                   for s in used]
        ax.legend(handles=handles, loc="upper right" if vertical else "lower left", ncol=max(1, len(handles)),
                  fontsize=7, frameon=False)
        try:
            return _save(fig, directory, stem, formats)
        finally:
            plt.close(fig)


_GRAPH_CHAR = 0.048  # inches per character of a 6-point label
_GRAPH_ROW = 0.2  # inches between rows


def _graph_rows(layers: Mapping[int, list[str]], label: Mapping[str, str], *, char: float, row: float,
                max_width: float) -> tuple[dict[str, tuple[float, float]], float, float]:
    """Layers top to bottom (what a statement rests on is above it); a layer wider than ``max_width``
    inches wraps into several lines.  Positions in inches; the figure is at most ``max_width`` wide, so
    it prints at its natural size and its labels keep their point size."""
    gap = 0.18
    lines: list[list[str]] = []
    for layer in sorted(layers):
        line: list[str] = []
        used = 0.0
        for v in layers[layer]:
            w = char * len(label[v]) + 0.12
            if line and used + gap + w > max_width - 0.6:
                lines.append(line)
                line, used = [], 0.0
            used += (gap if line else 0) + w
            line.append(v)
        if line:
            lines.append(line)
    height = len(lines) * row + 0.5  # room at the top for the legend
    width = max_width - 0.2  # the saved figure's tight bounding box pads 0.1 inch each side
    pos: dict[str, tuple[float, float]] = {}
    for i, line in enumerate(lines):
        widths = [char * len(label[v]) + 0.12 for v in line]
        total = sum(widths) + gap * (len(line) - 1)
        x = (width - total) / 2
        y = height - 0.45 - i * row
        for v, w in zip(line, widths, strict=True):
            pos[v] = (x + w / 2, y)
            x += w + gap
    return pos, width, height


def _graph_layout(layers: Mapping[int, list[str]], label: Mapping[str, str], *, char: float = _GRAPH_CHAR,
                  row: float = _GRAPH_ROW, aspect: float = 0.62, max_width: float | None = None):
    """Columns by dependency depth; a tall layer wraps into adjacent columns, the wrap height chosen so
    that the whole graph has roughly the shape ``aspect`` (height over width; a landscape page by
    default), preferring layouts no wider than ``max_width``.  Positions in inches."""
    tallest_layer = max(len(m) for m in layers.values())
    best = None
    for per_column in range(1 if max_width else min(8, tallest_layer), tallest_layer + 1):
        columns = [members[i:i + per_column] for layer in sorted(layers)
                   for members in [layers[layer]] for i in range(0, len(members), per_column)]
        widths = [max(len(label[v]) for v in c) * char + 0.5 for c in columns]
        width = sum(widths) + 0.4
        height = max(len(c) for c in columns) * row + 0.6
        score = abs(height / width - aspect) + (100 + width if max_width and width > max_width else 0)
        if best is None or score < best[0]:
            best = (score, columns, widths, width, height)
    _, columns, widths, width, height = best
    pos = {}
    x = 0.2
    for members, w in zip(columns, widths, strict=True):
        for i, v in enumerate(members):
            pos[v] = (x + w / 2, height / 2 + 0.15 - (i - (len(members) - 1) / 2) * row)
        x += w
    return columns, pos, width, height


def graph_json(library: Library, verdicts: Mapping[str, str]) -> dict:
    """Every declaration and every edge of the dependency graph, in library order."""
    status = node_status(library, verdicts)
    order = {d.id: i for i, d in enumerate(library.ordered())}
    nodes = [{"id": d.id, "kind": d.kind, "title": d.title, "topic": d.topic, "status": status.get(d.id)}
             for d in library.ordered()]
    edges = [{"from": u, "to": v} for u, v in sorted(library.graph.edges, key=lambda e: (order[e[0]], order[e[1]]))]
    return {"nodes": nodes, "edges": edges}


def graph_dot(library: Library, verdicts: Mapping[str, str]) -> str:
    """The dependency graph in Graphviz DOT, nodes filled by verdict."""
    data = graph_json(library, verdicts)

    def q(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = ["digraph derive {", "  rankdir=LR;",
             '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];']
    for n in data["nodes"]:
        colour = VERDICT_COLOURS.get(n["status"] or "unchecked", VERDICT_COLOURS["unchecked"])
        fontcolour = "black" if n["status"] == "definition" else "white"
        lines.append(f"  {q(n['id'])} [label={q(n['id'].rsplit('.', 1)[-1])}, tooltip={q(n['title'])}, "
                     f"kind={q(n['kind'])}, status={q(n['status'] or '')}, fillcolor={q(colour)}, "
                     f"fontcolor={q(fontcolour)}];")
    for e in data["edges"]:
        lines.append(f"  {q(e['from'])} -> {q(e['to'])};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def figures_of(library: Library) -> list[Figure]:
    """The library's figure specs (``Library.figures``), in declaration order."""
    return list(getattr(library, "figures", []) or [])


def check_unique(figures: Iterable[Figure]) -> None:
    seen: set[str] = set()
    for f in figures:
        if f.id in seen:
            raise LibraryError(f"two figures are named '{f.id}'")
        seen.add(f.id)
