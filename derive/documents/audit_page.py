"""The audit as a web page: ``derive audit FILE --html DIR`` writes ``DIR/index.html``.

One self-contained page (inline style and SVG, no script, nothing loaded from the network):

- the summary line (rows: impossible, consistent, unchecked), as the terminal prints it;
- per chip and model, one plot per metric: each row's number against the bound it is held to (the beaten bound
  of an impossible row, else its tightest), on log axes with the line where the number equals the bound and the
  impossible side shaded; impossible points are red, each a link to the bound's derivation in the site;
- the impossible rows (line, label, number, bound, ratio, the least change of one input that makes the row
  possible), each linking to the claim's catalogue entry and to the assumptions it rests on;
- the reasons rows were left unchecked, with their counts.

Links follow the site's anchor scheme (``derive build --format html``, ``derive.documents.html``): a declaration's
catalogue entry is ``chapter-<topic>.html#<anchor>``, the anchor being its shortest unique name made safe by
``label_text`` (``site_pages``).  ``site`` says where the site is, relative to the page's folder or as a URL; the
default ``..`` puts the report in a folder inside the site, which a rebuild of the site keeps.

Bounded whatever the table's length: ``AuditReport`` keeps counts, at most ``MAX_POINTS`` points of each kind per
plot and ``MAX_ROWS`` impossible rows (the page says how many it leaves out).  Written atomically (the build's
``publish``: the folder is the old report or the new one, never part of one) and deterministic (no dates, fixed
number formats, plots and rows in first-seen order).
"""

from __future__ import annotations

import math
import posixpath
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from derive.documents.latex import label_text
from derive.errors import TemplateError, escape_control
from derive.model.library import Library
from derive.whatif.audit import AuditPlan, AuditRow, BoundResult

MAX_POINTS = 250  # per plot, of each of the two kinds (impossible, consistent): a scatter, not a table
MAX_ROWS = 1_000  # impossible rows listed in the table
MAX_REASONS = 20  # distinct reasons of unchecked rows listed (the rest are counted together)
PAGE = "index.html"
DEFAULT_SITE = ".."

# plot geometry, in SVG user units
WIDTH, HEIGHT = 400, 320
LEFT, RIGHT, TOP, BOTTOM = 78, 40, 30, 44


def site_pages(library: Library) -> dict[str, str]:
    """Declaration id -> its catalogue entry in the site, ``chapter-<topic>.html#<anchor>``."""
    counts = Counter(d.short for d in library.ordered())
    out: dict[str, str] = {}
    for topic in library.topics:
        for d in topic.declarations:
            short = d.short if counts[d.short] == 1 else d.id
            out[d.id] = f"chapter-{topic.name}.html#{label_text(short)}"
    return out


def _label(row: AuditRow) -> str:
    for key in ("id", "source"):
        if row.cells.get(key):
            return escape_control(row.cells[key], limit=60)
    return f"line {row.line}"


def _group_model(row: AuditRow) -> str:
    """The plot a row belongs to names its model: the preset or path, else the parameter count it states."""
    model = row.cells.get("model", "").strip()
    if model:
        return escape_control(model, limit=60)
    params = row.cells.get("params_total", "").strip()
    if params:
        return "params_total " + escape_control(params, limit=40)
    return "no model stated"


@dataclass
class _Point:
    x: float  # the bound, SI
    y: float  # the number, SI
    line: int
    label: str
    claim: str
    kind: str
    ratio: float
    impossible: bool


@dataclass
class _Panel:
    hardware: str
    model: str
    metric: str
    impossible: list[_Point] = field(default_factory=list)
    consistent: list[_Point] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)


class AuditReport:
    """Collects audited rows (``add``) into what the page shows, in bounded memory."""

    def __init__(self, plan: AuditPlan, source: str) -> None:
        self.plan = plan
        self.source = source
        self.counts: Counter = Counter()
        self.panels: dict[tuple[str, str, str], _Panel] = {}
        self.rows: list[tuple[AuditRow, str, BoundResult]] = []  # the first MAX_ROWS impossible rows
        self.reasons: Counter = Counter()

    def add(self, row: AuditRow) -> None:
        self.counts[row.verdict] += 1
        if row.verdict == "unchecked":
            reason = escape_control(row.reason or "no reason given", limit=200)
            if reason in self.reasons or len(self.reasons) < MAX_REASONS:
                self.reasons[reason] += 1
            else:
                self.reasons["(other reasons)"] += 1
        beaten_first = None
        for metric, bounds in row.metrics.items():
            beaten = [b for b in bounds if b.status == "impossible"]
            fine = [b for b in bounds if b.status == "consistent" and b.slack is not None]
            pick = beaten[0] if beaten else min(fine, key=lambda b: b.slack) if fine else None
            if pick is None or pick.bound is None or pick.ratio is None:
                continue
            if beaten and beaten_first is None:
                beaten_first = (metric, pick)
            hardware = escape_control(row.cells.get("hardware", "").strip(), limit=60) or "no hardware stated"
            key = (hardware, _group_model(row), metric)
            panel = self.panels.get(key)
            if panel is None:
                panel = self.panels[key] = _Panel(*key)
            bound = float(pick.bound)
            point = _Point(bound, pick.ratio * bound, row.line, _label(row), pick.claim, pick.kind, pick.ratio,
                           bool(beaten))
            kept = panel.impossible if beaten else panel.consistent
            panel.counts["impossible" if beaten else "consistent"] += 1
            if len(kept) < MAX_POINTS:
                kept.append(point)
        if beaten_first is not None and len(self.rows) < MAX_ROWS:
            self.rows.append((row, *beaten_first))

    @property
    def summary(self) -> str:
        total = sum(self.counts.values())
        return (f"{total} row{'s' if total != 1 else ''}: {self.counts['impossible']} impossible, "
                f"{self.counts['consistent']} consistent, {self.counts['unchecked']} unchecked")


# the page's model -------------------------------------------------------------------------------------------------

def _href(site: str, page: str) -> str:
    if not site:
        return page
    return site.rstrip("/") + "/" + page if "://" in site else posixpath.join(site, page)


def _ticks(lo: int, hi: int) -> list[int]:
    step = max(1, math.ceil((hi - lo) / 6))
    return list(range(lo, hi + 1, step))


def _plot(panel: _Panel, unit: str, links: dict[str, str]) -> dict:
    from derive.model.display import format_value

    points = panel.consistent + panel.impossible  # impossible drawn last, on top
    values = [v for p in points for v in (p.x, p.y) if v > 0 and math.isfinite(v)]
    # whole decades, with room so that no point sits on the frame
    lo = math.floor(math.log10(min(values)) - 0.1) if values else 0
    hi = math.ceil(math.log10(max(values)) + 0.1) if values else 1
    if hi <= lo:
        hi = lo + 1
    span_x, span_y = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(v: float) -> float:
        return LEFT + (math.log10(v) - lo) / (hi - lo) * span_x

    def py(v: float) -> float:
        return TOP + (1 - (math.log10(v) - lo) / (hi - lo)) * span_y

    x0, x1, y0, y1 = LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP
    kinds = {p.kind for p in points}
    shade = None  # the impossible side of the line, where the panel's bounds are all floors or all ceilings
    if kinds == {"floor"}:
        shade = f"{x0},{y0} {x1},{y0} {x1},{y1}"  # below the line: the number under its floor
    elif kinds == {"ceiling"}:
        shade = f"{x0},{y0} {x0},{y1} {x1},{y1}"  # above the line: the number over its ceiling
    drawn = []
    for p in points:
        if not (p.x > 0 and p.y > 0 and math.isfinite(p.x) and math.isfinite(p.y)):
            continue
        side = "floor" if p.kind == "floor" else "ceiling"
        # the values themselves are on the axes and, for impossible rows, in the table: a title formats none
        drawn.append({"cx": f"{px(p.x):.1f}", "cy": f"{py(p.y):.1f}", "impossible": p.impossible,
                      "href": links.get(p.claim), "line": p.line,
                      "title": f"line {p.line}, {p.label}: {p.ratio:.3g}x its {side} ({p.claim})"})
    ticks = [{"at": f"{px(10.0 ** k):.1f}", "y": f"{py(10.0 ** k):.1f}", "text": format_value(10.0 ** k, unit)}
             for k in _ticks(lo, hi)]
    shown = len(panel.impossible) + len(panel.consistent)
    total = panel.counts["impossible"] + panel.counts["consistent"]
    return {"hardware": panel.hardware, "model": panel.model, "metric": panel.metric, "unit": unit,
            "width": WIDTH, "height": HEIGHT, "x0": x0, "x1": x1, "y0": y0, "y1": y1, "shade": shade,
            "points": drawn, "ticks": ticks, "impossible": panel.counts["impossible"],
            "consistent": panel.counts["consistent"], "left_out": total - shown,
            "bound_word": "ceiling" if kinds == {"ceiling"} else "floor" if kinds == {"floor"} else "bound",
            "frame_w": x1 - x0, "frame_h": y0 - y1, "tick_label_x": x0 - 4, "tick_label_y": y0 + 14,
            "label_x": f"{(x0 + x1) / 2:.1f}", "label_y": HEIGHT - 6, "axis_x": 4, "axis_y": y1 - 10}


def page_model(report: AuditReport, site: str = DEFAULT_SITE) -> dict:
    """Everything the template shows, as text and numbers already formatted."""
    from derive.model.display import format_value

    plan = report.plan
    pages = site_pages(plan.library)
    links = {cid: _href(site, page) for cid, page in pages.items()}
    plots = [_plot(p, plan.metrics[p.metric].unit, links) for p in report.panels.values()]
    rows = []
    for row, metric, b in report.rows:
        unit = plan.metrics[metric].unit
        bound = next((x for x in plan.metrics[metric].bounds if x.claim == b.claim), None)
        rests_on = [{"id": a, "href": links.get(a)} for a in (bound.rests_on if bound is not None else ())]
        rows.append({"line": row.line, "label": _label(row), "metric": metric,
                     "number": format_value(b.ratio * float(b.bound), unit),
                     "bound": f"{b.kind} {format_value(float(b.bound), unit)}", "ratio": f"{b.ratio:.3g}x",
                     "claim": b.claim, "href": links.get(b.claim), "rests_on": rests_on,
                     "change": b.changes[0]["text"] if b.changes else "",
                     "source": escape_control(row.cells.get("source", ""), limit=200),
                     "date": escape_control(row.cells.get("date", ""), limit=40)})
    impossible = report.counts["impossible"]
    # the file's name, not its path: the same table gives the same page wherever it is read from
    source = "standard input" if report.source == "-" else escape_control(Path(report.source).name, limit=120)
    return {"title": f"Audit of {source}", "summary": report.summary,
            "counts": {k: report.counts[k] for k in ("impossible", "consistent", "unchecked")},
            "plots": plots, "rows": rows, "rows_left_out": impossible - len(rows),
            "reasons": sorted(report.reasons.items(), key=lambda kv: (-kv[1], kv[0])),
            "site": site, "site_index": _href(site, "index.html")}


def render_page(report: AuditReport, site: str = DEFAULT_SITE) -> str:
    """The page's HTML text (deterministic: the same rows give the same bytes)."""
    from derive.documents.htmltext import html_filters

    env = jinja2.Environment(loader=jinja2.PackageLoader("derive.documents", "templates/html"),
                             undefined=jinja2.StrictUndefined, autoescape=True, keep_trailing_newline=True,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters.update(html_filters())
    try:
        text = env.get_template("audit.html.j2").render(**page_model(report, site))
    except jinja2.TemplateError as err:
        raise TemplateError(f"template html/audit.html.j2: {err}") from None
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n") + "\n"


def write_report(report: AuditReport, out: Path | str, site: str = DEFAULT_SITE, option: str = "--html") -> list[str]:
    """Write ``out/index.html`` atomically; the files written, relative to ``out``."""
    from derive.documents.build import publish

    text = render_page(report, site)

    def write(staging: Path) -> list[str]:
        (staging / PAGE).write_text(text, encoding="utf-8", newline="\n")
        return [PAGE]

    return publish(Path(out), write, option=option)
