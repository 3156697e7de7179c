"""``derive build``: every output of a checked library, written atomically and reproducibly.

Outputs (relative to the output folder):

- ``derivation.md`` (``md``) and ``figures/*.svg``;
- ``derivation.tex``, ``claims.tex``, ``values.tex`` (``tex``) and ``figures/*.pdf``;
- ``derivation.pdf`` (``pdf``), compiled with pdflatex when it is installed (otherwise a notice);
- always: ``status.json`` (the check report without timings), ``graph.dot`` and ``graph.json``.

Atomic: ``--out`` is always exactly one complete build, the old one or the new one (``publish``).
Everything is written into a staging folder beside ``--out`` (``.NAME.staging-PID-XXXX``); files of
the previous ``--out`` that the new build does not write (a user's own files) are hard-linked into it;
then one atomic exchange of the two folders switches old for new (Linux ``renameat2(RENAME_EXCHANGE)``),
and the old build, now under the staging name, is deleted.  Where the exchange is not available the
switch is two renames (``--out`` aside to ``.NAME.old-PID-XXXX``, staging into place); a build killed
between the two leaves no ``--out`` and the old build aside, and the next build (or the next read of
``publish``) renames it back before anything else.  Staging and old folders of builds that were killed
(their process is gone) are removed by the next build.  pdflatex runs in the staging folder with
``SOURCE_DATE_EPOCH=0`` and ``FORCE_SOURCE_DATE=1``, and the document suppresses PDF dates and ids, so
two builds of the same input are byte-identical.  Every write error (read-only folder, permission
denied, disk full, part-way or not) is a one-line ``OutputError`` naming the folder.

Environment: ``DERIVE_REQUIRE_LATEX=1`` makes a missing pdflatex an error (CI); ``DERIVE_PDFLATEX``
names the pdflatex to run (empty: behave as if none were installed).
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from derive.checking.checker import Checker, Report
from derive.documents.figures import (
    FigureResult,
    check_unique,
    figures_of,
    graph_dot,
    graph_json,
    render_chapter_graph,
    render_figure,
    render_graph,
)
from derive.documents.render import claims_model, document_model, render, values_model
from derive.documents.store import ArtifactStore, content_key
from derive.documents.thresholds import thresholds
from derive.errors import DeriveError, OutputError
from derive.model.library import Library
from derive.model.scenario import Scenario

FORMATS = ("md", "tex", "pdf", "html")
DEFAULT_FORMATS = ("md", "tex", "pdf")
REQUIRE_LATEX_ENV = "DERIVE_REQUIRE_LATEX"
LATEX_ENGINE_ENV = "DERIVE_PDFLATEX"


class BuildError(DeriveError):
    """The document could not be produced (for instance LaTeX failed on it)."""


@dataclass
class BuildResult:
    out: Path
    files: list[str]  # written, relative to ``out``, sorted
    report: Report
    baseline: Report | None = None
    notices: list[str] = field(default_factory=list)


def parse_formats(text: str | Iterable[str]) -> tuple[str, ...]:
    items = text.split(",") if isinstance(text, str) else list(text)
    out = []
    for item in (i.strip().lower() for i in items):
        if not item:
            continue
        item = {"markdown": "md", "latex": "tex"}.get(item, item)
        if item not in FORMATS:
            raise DeriveError(f"unknown format '{item}'", where="--format",
                              hint="use md, tex, pdf, html (comma-separated)")
        if item not in out:
            out.append(item)
    if not out:
        raise DeriveError("no format given", where="--format", hint="use md, tex, pdf, html (comma-separated)")
    return tuple(f for f in FORMATS if f in out)


def status_json(report: Report) -> str:
    """The check report as JSON without per-claim timings (which would make builds differ)."""
    data = report.to_json()
    for claim in data.get("claims", []):
        claim.pop("seconds", None)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _checker(library: Library, scenario: Scenario, rlimit: int | None, cache) -> Checker:
    kwargs = {} if rlimit is None else {"rlimit": rlimit}
    if cache is not None:
        kwargs["cache"] = cache
    return Checker(library, scenario, **kwargs)


def latex_engine() -> str | None:
    """The pdflatex to use: ``$DERIVE_PDFLATEX`` (a path, or empty for none) or pdflatex on PATH."""
    if LATEX_ENGINE_ENV in os.environ:
        return os.environ[LATEX_ENGINE_ENV] or None
    return shutil.which("pdflatex")


def latex_required() -> bool:
    return os.environ.get(REQUIRE_LATEX_ENV, "") not in ("", "0")


def compile_pdf(tex_name: str, workdir: Path, engine: str, *, max_runs: int = 4) -> Path:
    """Run pdflatex in ``workdir`` until cross-references settle (two runs at least).  Returns the PDF."""
    env = dict(os.environ, SOURCE_DATE_EPOCH="0", FORCE_SOURCE_DATE="1", TZ="UTC", LC_ALL="C")
    stem = Path(tex_name).stem
    for run in range(max_runs):
        try:
            proc = subprocess.run(
                [engine, "-interaction=nonstopmode", "-halt-on-error", "-file-line-error", tex_name],
                cwd=workdir, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=600,
            )
        except OSError as err:
            raise BuildError(f"cannot run {engine}: {err.strerror}") from None
        except subprocess.TimeoutExpired:
            raise BuildError(f"{engine} took more than 600 s on {tex_name}") from None
        log_path = workdir / f"{stem}.log"
        log = log_path.read_text(errors="replace") if log_path.exists() else ""
        if proc.returncode != 0:
            raise BuildError(f"pdflatex failed on {tex_name}: {_first_error(log, proc.stdout)}",
                             hint="the .tex is kept in the output folder of a --format tex build")
        if run >= 1 and not _wants_rerun(log):
            break
    pdf = workdir / f"{stem}.pdf"
    if not pdf.exists():
        raise BuildError(f"pdflatex wrote no PDF for {tex_name}")
    return pdf


def _wants_rerun(log: str) -> bool:
    """LaTeX (or longtable, hyperref's rerunfilecheck) asks for another run to settle references."""
    return any("Rerun" in line and not line.startswith("Package: rerunfilecheck") for line in log.splitlines())


def _first_error(log: str, stdout: bytes) -> str:
    text = log or stdout.decode(errors="replace")
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("!") or ":" in line and " error" in line.lower() and line.split(":")[0].endswith(".tex"):
            detail = " ".join(x.strip() for x in lines[i:i + 3] if x.strip())
            return detail[:300]
    return "see the LaTeX log"


def build(library: Library, scenario: Scenario, out: Path | str = "build", formats: Sequence[str] = DEFAULT_FORMATS, *,
          baseline: Scenario | None = None, rlimit: int | None = None, cache=None,
          report: Report | None = None) -> BuildResult:
    """Check the library under ``scenario`` and write every output into ``out`` (see module docstring).

    ``baseline``: when given and different from ``scenario``, its verdicts are compared ("What
    breaks").  ``report``: a report already computed for ``scenario`` (skips the check)."""
    formats = parse_formats(formats)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise DeriveError(f"output path exists and is not a folder: {out}", where="--out")
    engine = latex_engine() if "pdf" in formats else None
    notices: list[str] = []
    if "pdf" in formats and engine is None:
        if latex_required():
            raise BuildError(f"no LaTeX engine found (pdflatex) and {REQUIRE_LATEX_ENV} is set")
        notices.append("no LaTeX engine (pdflatex) found: wrote derivation.tex, not derivation.pdf")
    figures = figures_of(library)
    check_unique(figures)

    base_report = None
    if baseline is not None and baseline.fingerprint() != scenario.fingerprint():
        # "What breaks": derive.whatif.diff checks the baseline and re-checks only what the change reaches
        from derive.whatif.diff import diff

        d = diff(library, baseline, scenario, rlimit=rlimit, cache=cache)
        base_report = Report(baseline, list(d.before.values()))
        if report is None:
            report = Report(scenario, list(d.after.values()))
    if report is None:
        report = _checker(library, scenario, rlimit, cache).check()
    verdicts = {r.id: r.verdict for r in report.results}

    cache_root = getattr(cache, "root", None)
    files = publish(out, lambda staging: _write_all(library, scenario, report, base_report, figures, verdicts,
                                                   staging, formats, engine, cache_root), notices)
    return BuildResult(out, files, report, base_report, notices)


def _write_all(library: Library, scenario: Scenario, report: Report, base_report: Report | None, figures: list,
               verdicts: dict[str, str], staging: Path, formats: Sequence[str], engine: str | None,
               cache_root: Path | None = None) -> list[str]:
    files: list[str] = []
    store = ArtifactStore(cache_root) if cache_root is not None else None

    def write(name: str, text: str) -> None:
        path = staging / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        files.append(name)

    write("status.json", status_json(report))
    write("graph.dot", graph_dot(library, verdicts))
    write("graph.json", json.dumps(graph_json(library, verdicts), indent=2, ensure_ascii=False) + "\n")

    wants_tex = "tex" in formats or "pdf" in formats
    fig_formats = tuple(f for f, wanted in (("svg", "md" in formats or "html" in formats), ("pdf", wants_tex))
                        if wanted)
    drawn, graph, chapter_graphs = _figures(library, scenario, verdicts, figures, staging, fig_formats, store)
    for r in [*drawn, graph, *chapter_graphs.values()]:
        files.extend(r.files.values())

    rows = thresholds(library, scenario, cache_dir=cache_root)
    model = document_model(library, scenario, report, baseline=base_report, figures=drawn, graph=graph,
                           thresholds=rows, chapter_graphs=chapter_graphs)
    if "md" in formats:
        write("derivation.md", render("markdown", "derivation.md.j2", model))
    if "html" in formats:
        from derive.documents.html import write_site

        files.extend(write_site(library, model, staging, verdicts))
    if wants_tex:
        write("derivation.tex", render("latex", "derivation.tex.j2", model))
        write("claims.tex", render("latex", "claims.tex.j2", claims_model(library, scenario, report)))
        write("values.tex", render("latex", "values.tex.j2", values_model(library, scenario, report)))
    if "pdf" in formats and engine is not None:
        names = sorted(f for f in files if f.startswith("figures/") and f.endswith(".pdf"))
        key = content_key("pdf", _engine_id(engine), (staging / "derivation.tex").read_bytes(),
                          *[n.encode() + b"\0" + (staging / n).read_bytes() for n in names])
        if store is None or store.get("pdf", key, staging) is None:
            compile_pdf("derivation.tex", staging, engine)
            if store is not None:
                store.put("pdf", key, staging, ["derivation.pdf", "derivation.log"])
        files.extend(["derivation.pdf", "derivation.log"])
    return sorted(set(files))


from derive.documents.store import ArtifactStore, content_key
from derive.documents.thresholds import thresholds
from derive.errors import DeriveError, OutputError
