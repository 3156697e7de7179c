"""``derive build --format html``: the document as a static, offline web site.

Pages (in the output folder, beside the other outputs, so the PDF and the Markdown are one click away):

- ``index.html``: title, scenario, statistics per chapter, the chapters in lecture order, a search
  over every declaration;
- ``chapter-<topic>.html``: the chapter's argument (prose, headline results with their derivations,
  the lecture's numbers and thresholds, inconsistencies, figures) and then its catalogue, one anchor
  per declaration (statement, formula, derivation steps with verdicts, values under the scenario,
  sources, counterexamples);
- ``graph.html``: the dependency graph of claims and assumptions, coloured by verdict, with a colour
  for "proved, and everything it rests on proved", a legend, search, click-through to each
  declaration and a per-node subgraph (what it rests on, what rests on it).

Math is rendered in the browser by KaTeX, vendored under ``assets/katex`` (MIT licence); the data of
the graph and of the search is a script (``assets/data.js``), not a JSON fetch, so the site works from
``file://``.  No page loads anything from the network.  Output is deterministic.
"""

from __future__ import annotations

import importlib.resources
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from derive.documents.figures import VERDICT_COLOURS, claim_graph, node_status
from derive.documents.render import render
from derive.model.library import Library

FULLY_PROVED_COLOUR = "#1b5e20"
PARTLY_PROVED_COLOUR = "#a5d6a7"  # proved, but something beneath is not: light, so "fully" stands out
ASSET_FILES = ("derive.css", "derive.js")


def _assets_folder():
    return importlib.resources.files("derive.documents").joinpath("assets")


def _copy_assets(staging: Path) -> list[str]:
    """Copy the vendored KaTeX and the site's own CSS and JS into ``assets/``."""
    files: list[str] = []

    def walk(node, rel: str) -> None:
        for entry in sorted(node.iterdir(), key=lambda e: e.name):
            name = f"{rel}/{entry.name}"
            if entry.is_dir():
                walk(entry, name)
            elif not entry.name.startswith("."):
                target = staging / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(entry.read_bytes())
                files.append(name)

    walk(_assets_folder(), "assets")
    return files


def graph_data(library: Library, verdicts: Mapping[str, str], hrefs: Mapping[str, str]) -> dict:
    """Nodes (claims and assumptions) with a layout by chapter, their status and "fully proved" flag,
    and the edges of the dependency graph (transitively reduced, through definitions)."""
    import networkx as nx

    graph = claim_graph(library)
    status = node_status(library, verdicts)
    topics = [t.name for t in library.topics]
    fully: dict[str, bool] = {}
    for v in nx.topological_sort(graph):
        s = status.get(v)
        below = [fully.get(u, False) or status.get(u) == "assumed" for u in graph.predecessors(v)]
        fully[v] = s == "proved" and all(below)
    rows: dict[str, int] = {}
    nodes = []
    for d in library.ordered():
        if d.id not in graph:
            continue
        col = topics.index(d.topic) if d.topic in topics else len(topics)
        row = rows.get(d.topic, 0)
        rows[d.topic] = row + 1
        nodes.append({"id": d.id, "short": d.short, "title": d.title, "kind": d.kind, "topic": d.topic,
                      "col": col, "row": row, "status": status.get(d.id, "unchecked"),
                      "fully": bool(fully.get(d.id)) and d.kind == "claim",
                      "href": hrefs.get(d.id, "index.html")})
    edges = [[u, v] for u, v in graph.edges]
    return {"nodes": nodes, "edges": edges, "chapters": [t.title for t in library.topics],
            "colours": {**VERDICT_COLOURS, "proved": PARTLY_PROVED_COLOUR, "fully": FULLY_PROVED_COLOUR}}


def write_site(library: Library, model: Mapping, staging: Path, verdicts: Mapping[str, str],
               formats: Sequence[str] = ()) -> list[str]:
    """Write the site into ``staging``; the files written, relative to it.  ``formats``: the other
    outputs of the same build, which the pages link to (the PDF, the Markdown)."""
    files = _copy_assets(staging)
    pages = {t["name"]: f"chapter-{t['name']}.html" for t in model["topics"]}
    hrefs = {d["id"]: f"{pages[t['name']]}#{d['anchor']}" for t in model["topics"] for d in t["declarations"]}
    data = graph_data(library, verdicts, hrefs)
    search = [{"id": d["id"], "title": d["title"], "kind": d["kind"], "verdict": d["verdict"] or d["kind"],
               "chapter": t["number"], "href": f"{pages[t['name']]}#{d['anchor']}", "statement": d["statement"]}
              for t in model["topics"] for d in t["declarations"]]
    script = ("window.DERIVE = " + json.dumps({"graph": data, "search": search}, ensure_ascii=True,
                                              sort_keys=True, separators=(",", ":")) + ";\n")
    (staging / "assets").mkdir(parents=True, exist_ok=True)
    (staging / "assets" / "data.js").write_text(script, encoding="utf-8", newline="\n")
    files.append("assets/data.js")
    fully: dict[str, int] = {t.name: 0 for t in library.topics}
    for n in data["nodes"]:
        if n["fully"]:
            fully[n["topic"]] = fully.get(n["topic"], 0) + 1
    site = {**model, "pages": pages, "legend": _legend(data), "href": hrefs, "fully": fully,
            "fully_total": sum(fully.values()), "has_pdf": "pdf" in formats, "has_md": "md" in formats}
    out = {"index.html": render("html", "index.html.j2", site), "graph.html": render("html", "graph.html.j2", site)}
    chapters = {c["name"]: c for c in model["chapters"]}
    for t in model["topics"]:
        out[pages[t["name"]]] = render("html", "chapter.html.j2", {**site, "topic": t, "chapter": chapters[t["name"]]})
    for name, text in out.items():
        (staging / name).write_text(text, encoding="utf-8", newline="\n")
        files.append(name)
    return files


def _legend(data: dict) -> list[dict]:
    used = {n["status"] for n in data["nodes"]}
    items = [{"key": "fully", "label": "proved, and everything it rests on proved",
              "colour": FULLY_PROVED_COLOUR}]
    for s in ("proved", "refuted", "unknown", "inconsistent", "blocked", "assumed", "unchecked"):
        if s in used:
            label = "proved (something beneath is not)" if s == "proved" else s
            colour = PARTLY_PROVED_COLOUR if s == "proved" else VERDICT_COLOURS[s]
            items.append({"key": s, "label": label, "colour": colour})
    return items
