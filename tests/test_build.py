"""``derive build`` on the lecture library: every output, the PDF, reproducibility, atomicity, the
example paper.

The lecture is built once per module (the PDF compile is the slow part).  Without pdflatex the PDF
tests skip, unless ``DERIVE_REQUIRE_LATEX=1`` (set by CI): then they fail."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from derive.cli import main
from derive.documents.build import FORMATS, BuildError, build
from derive.errors import DeriveError

ROOT = Path(__file__).resolve().parent.parent
REQUIRE_LATEX = os.environ.get("DERIVE_REQUIRE_LATEX", "") not in ("", "0")
HAVE_LATEX = shutil.which("pdflatex") is not None
WITH_PDF = HAVE_LATEX or REQUIRE_LATEX  # without pdflatex but required: the build itself fails (as it should)
needs_pdf = pytest.mark.skipif(not WITH_PDF, reason="pdflatex is not installed (set DERIVE_REQUIRE_LATEX=1 to fail)")


def _proof_cache(path: Path):
    try:
        from derive.checking.cache import ProofCache
    except ImportError:  # the cache is an optimisation; builds are the same without it
        return None
    return ProofCache(path)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("proof-cache")


@pytest.fixture(scope="module")
def built(tmp_path_factory, lecture_library, lecture_scenario, cache_dir):
    out = tmp_path_factory.mktemp("lecture") / "build"
    formats = FORMATS if WITH_PDF else ("md", "tex", "html")
    return build(lecture_library, lecture_scenario, out, formats, baseline=lecture_scenario,
                 cache=_proof_cache(cache_dir))


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _words(text: str) -> str:
    """Letters and digits only, lower case: survives line breaks, hyphenation and typographic quotes."""
    return re.sub(r"[^0-9a-z]", "", text.lower())


def test_every_output_is_written(built, lecture_library):
    out = built.out
    expected = {"derivation.md", "derivation.tex", "claims.tex", "values.tex", "status.json", "graph.dot",
                "graph.json"}
    if WITH_PDF:
        expected.add("derivation.pdf")
    assert expected <= set(built.files)
    assert set(built.files) == set(_snapshot(out))
    for spec in lecture_library.figures:
        assert f"figures/{spec.id}.svg" in built.files and f"figures/{spec.id}.pdf" in built.files
    assert "figures/dependency_graph.svg" in built.files

    status = json.loads((out / "status.json").read_text())
    assert {c["id"] for c in status["claims"]} == {c.id for c in lecture_library.claims()}
    assert all("seconds" not in c for c in status["claims"])
    assert set(status["claims"][0]) >= {"id", "title", "kind", "verdict", "expected", "engine", "counterexample",
                                        "reason", "rests_on"}
    graph = json.loads((out / "graph.json").read_text())
    assert [n["id"] for n in graph["nodes"]] == [d.id for d in lecture_library.ordered()]
    assert (out / "graph.dot").read_text().startswith("digraph derive {")


def test_documents_hold_every_declaration(built, lecture_library):
    md = (built.out / "derivation.md").read_text()
    tex = (built.out / "derivation.tex").read_text()
    for d in lecture_library.ordered():
        assert f"`{d.id}`" in md
        assert f"{{decl:{d.short}}}" in tex or f"{{decl:{d.id}}}" in tex
    assert r"\label{eq:batch_optimum}" in tex and r"\label{eq:latency_floor}" in tex
    claims = (built.out / "claims.tex").read_text()
    for name in ("claimBatchOptimum", "claimLatencyFloor", "defnCriticalBatch"):
        assert rf"\newcommand{{\{name}}}" in claims
    values = (built.out / "values.tex").read_text()
    assert r"\newcommand{\valCriticalBatch}{\texorpdfstring{\deriveValue{critical_batch}}{2,400 seq}}" in values
    assert r"\expandafter\def\csname derive@v@batch_optimum\endcsname{proved}" in values
    assert "What breaks" not in md  # the default scenario is the baseline


@needs_pdf
def test_pdf_has_every_claim_title(built, lecture_library):
    text = subprocess.run(["pdftotext", "-layout", str(built.out / "derivation.pdf"), "-"], check=True,
                          capture_output=True, text=True).stdout
    words = _words(text)
    missing = [c.title for c in lecture_library.claims() if _words(c.title) not in words]
    assert not missing, f"claim titles not found in the PDF: {missing}"


def test_two_builds_are_byte_identical(built, lecture_library, lecture_scenario, tmp_path, cache_dir):
    """A second build with a cold artifact cache (figures redrawn, LaTeX run again) gives the same bytes."""
    formats = FORMATS if WITH_PDF else ("md", "tex", "html")
    # the check's caches warm (the report is the same), the documents' artifact cache cold
    shutil.copytree(cache_dir, tmp_path / "cache", ignore=shutil.ignore_patterns("documents"))
    again = build(lecture_library, lecture_scenario, tmp_path / "build", formats, baseline=lecture_scenario,
                  cache=_proof_cache(tmp_path / "cache"))
    first, second = _snapshot(built.out), _snapshot(again.out)
    assert sorted(first) == sorted(second)
    differing = [name for name in first if first[name] != second[name]]
    assert not differing, f"outputs differ between two builds: {differing}"


def test_failed_build_leaves_previous_outputs(built, lecture_library, lecture_scenario, tmp_path, monkeypatch):
    out = tmp_path / "build"
    shutil.copytree(built.out, out)
    before = _snapshot(out)

    import derive.documents.build as build_module

    real_render = build_module.render

    def failing_render(kind, template, model, *args, **kwargs):
        if kind == "latex":  # status.json, graphs, figures and derivation.md are written by now
            raise RuntimeError("simulated crash in the middle of a build")
        return real_render(kind, template, model, *args, **kwargs)

    monkeypatch.setattr(build_module, "render", failing_render)
    with pytest.raises(RuntimeError, match="simulated crash"):
        build(lecture_library, lecture_scenario, out, ("md", "tex"), report=built.report)
    assert _snapshot(out) == before
    assert not [p for p in tmp_path.iterdir() if p.name != "build"], "a staging folder was left behind"


def test_killed_build_leaves_previous_outputs(built, tmp_path, cache_dir):
    """SIGKILL while pdflatex runs (a fake one that waits): nothing of the new build is in place."""
    out = tmp_path / "build"
    shutil.copytree(built.out, out)
    (out / "derivation.md").write_text("the previous build\n")
    before = _snapshot(out)
    marker = tmp_path / "latex-started"
    fake = tmp_path / "fake-pdflatex"
    fake.write_text(f"#!/bin/sh\ntouch '{marker}'\nsleep 120\n")
    fake.chmod(0o755)
    env = dict(os.environ, DERIVE_PDFLATEX=str(fake), DERIVE_CACHE_DIR=str(cache_dir))
    proc = subprocess.Popen([sys.executable, "-m", "derive.cli", "build", "--out", str(out)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            if proc.poll() is not None:
                pytest.fail(f"build ended before reaching LaTeX: {proc.stderr.read().decode()}")
            if time.monotonic() > deadline:
                pytest.fail("build did not reach LaTeX within 120 s")
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert _snapshot(out) == before


def test_without_latex_the_tex_is_written_with_a_notice(built, lecture_library, lecture_scenario, tmp_path,
                                                         monkeypatch):
    monkeypatch.setenv("DERIVE_PDFLATEX", "")
    monkeypatch.delenv("DERIVE_REQUIRE_LATEX", raising=False)
    result = build(lecture_library, lecture_scenario, tmp_path / "b", ("tex", "pdf"), report=built.report)
    assert result.notices == ["no LaTeX engine (pdflatex) found: wrote derivation.tex, not derivation.pdf"]
    assert (tmp_path / "b" / "derivation.tex").exists() and not (tmp_path / "b" / "derivation.pdf").exists()
    monkeypatch.setenv("DERIVE_REQUIRE_LATEX", "1")
    with pytest.raises(BuildError, match="no LaTeX engine"):
        build(lecture_library, lecture_scenario, tmp_path / "c", ("tex", "pdf"), report=built.report)
    assert not (tmp_path / "c").exists()


def test_cli_build_with_a_changed_scenario_has_what_breaks(tmp_path, cache_dir, monkeypatch, capsys):
    from derive.cli import terminal

    monkeypatch.setenv("DERIVE_CACHE_DIR", str(cache_dir))
    monkeypatch.setattr(terminal, "DELAY", 0.0)  # every stage counts as slow: piped, one line per stage
    code = main(["build", "--format", "md", "--out", str(tmp_path / "b"), "--set", "hbm_capacity=80 GB"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out.startswith("wrote ")
    stages = [line.split(":")[1].strip() for line in captured.err.splitlines()]
    assert [s.split(" ")[0] for s in stages] == ["checking", "drawing", "writing", "done"], captured.err
    assert captured.err.splitlines()[-1].startswith("derive build: done in ")
    md = (tmp_path / "b" / "derivation.md").read_text()
    assert "## C. What breaks" in md and "`lecture`" in md
    assert "| roofline.hbm_drain_time" not in md  # rows link titles, ids are in anchors
    assert "(#hbm_drain_time) | proved | **refuted**" in md


def test_cli_build_bad_format_is_bad_input(capsys):
    assert main(["build", "--format", "docx"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown format 'docx'" in err


def test_build_refuses_a_file_as_output_folder(lecture_library, lecture_scenario, tmp_path, built):
    target = tmp_path / "not-a-folder"
    target.write_text("x")
    with pytest.raises(DeriveError, match="not a folder"):
        build(lecture_library, lecture_scenario, target, ("md",), report=built.report)


@needs_pdf
def test_example_paper_compiles_to_a_fixed_point_with_latexmk(built, tmp_path):
    """examples/paper uses every macro (formulas, values, per-value rounding, verdicts in a section title
    and a caption, strict mode); latexmk brings it to a fixed point without a warning."""
    if shutil.which("latexmk") is None:
        if REQUIRE_LATEX:
            pytest.fail("latexmk is not installed and DERIVE_REQUIRE_LATEX is set")
        pytest.skip("latexmk is not installed")
    shutil.copy(ROOT / "examples" / "paper" / "paper.tex", tmp_path / "paper.tex")
    proc = subprocess.run(["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error",
                           rf"-usepretex=\def\derivebuild{{{built.out}}}", "paper.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    log = (tmp_path / "paper.log").read_text(errors="replace")
    assert proc.returncode == 0, log[-3000:]
    warnings = [line for line in log.splitlines() if "Warning" in line and "infwarerr" not in line]
    assert not warnings, warnings  # no undefined reference, no "Rerun", no hyperref token dropped from a bookmark
    text = subprocess.run(["pdftotext", str(tmp_path / "paper.pdf"), "-"], capture_output=True, text=True).stdout
    assert "2,400 seq" in text  # \valCriticalBatch, with the paper's own siunitx grouping
    assert "2,000 seq to one significant figure" in " ".join(text.split())  # \deriveValue[round-...]
    assert "14 ms" in text  # \deriveSetValueOptions{drain_time}{round-mode=figures, round-precision=2}
    assert "The latency floor (proved)" in text  # \deriveVerdict in a section title
    bookmarks = (tmp_path / "paper.out").read_text(errors="replace")
    assert r"\000p\000r\000o\000v\000e\000d" in bookmarks  # ... and in its PDF bookmark, as text
    again = subprocess.run(["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error",
                            rf"-usepretex=\def\derivebuild{{{built.out}}}", "paper.tex"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "Nothing to do" in again.stdout + again.stderr  # a fixed point


@needs_pdf
def test_strict_paper_stops_when_a_cited_claim_is_not_proved(built, tmp_path):
    """With \\derivestricttrue, a paper citing a claim whose verdict is not proved stops with a clear
    LaTeX error that names the claim and its verdict."""
    macros = tmp_path / "macros"
    macros.mkdir()
    shutil.copy(built.out / "claims.tex", macros / "claims.tex")
    values = (built.out / "values.tex").read_text()
    for name in ("batching.batch_optimum", "batch_optimum"):
        values = values.replace(rf"\csname derive@v@{name}\endcsname{{proved}}",
                                rf"\csname derive@v@{name}\endcsname{{refuted}}")
    (macros / "values.tex").write_text(values)
    shutil.copy(ROOT / "examples" / "paper" / "paper.tex", tmp_path / "paper.tex")
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error",
                           rf"\def\derivebuild{{{macros}}}\input{{paper.tex}}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    flat = " ".join(proc.stdout.split())
    assert "Package derive Error: Claim `batching.batch_optimum' is refuted, not proved, under scenario lecture" in flat


def _braced(text: str, start: int) -> str:
    """The brace group that opens at ``text[start]``."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0) if text[i - 1] != "\\" else 0
        if depth == 0:
            return text[start + 1:i]
    return text[start + 1:]


def markdown_math(md: str) -> list[str]:
    """Every formula of a Markdown document: ``$$`` blocks and inline ``$...$`` spans (a prose dollar is
    ``<span>$</span>``)."""
    out, block = [], None
    for line in md.splitlines():
        if line.strip() == "$$":
            if block is not None:
                out.append("\n".join(block))
            block = None if block is not None else []
        elif block is not None:
            block.append(line)
        else:
            out += re.findall(r"\$((?:\\.|[^$\\])+)\$", line.replace("<span>$</span>", ""))
    return out


def latex_math(tex: str) -> list[str]:
    """Every formula of a LaTeX document: ``$...$``, ``\\(...\\)``, ``\\[...\\]``, equation and align
    environments, and the argument of ``\\fitmath``."""
    out = re.findall(r"(?<!\\)\$((?:\\.|[^$\\])+)\$", tex)
    out += re.findall(r"\\\((.*?)\\\)", tex, flags=re.S) + re.findall(r"\\\[(.*?)\\\]", tex, flags=re.S)
    out += re.findall(r"\\begin\{(?:equation|align)\*?\}(.*?)\\end\{(?:equation|align)\*?\}", tex, flags=re.S)
    for m in re.finditer(r"\\fitmath(?:\[[^\]]*\])?\{", tex):
        out.append(_braced(tex, m.end() - 1))
    return out


def long_numbers(formulas: list[str]) -> list[str]:
    """Runs of nine or more digits (grouping separators ignored) in formulas: a number no one reads."""
    return [f for f in formulas if re.search(r"\d{9,}", re.sub(r"(?<=\d)(\{,\}|,)(?=\d)", "", f))]


def test_formulas_print_no_raw_numbers(built):
    """A number in a formula reaches people with a unit and a prefix (312 TFLOP/s, not 312000000000000):
    no formula of the Markdown, the LaTeX or the site has a run of nine or more digits."""
    md = markdown_math((built.out / "derivation.md").read_text())
    tex = latex_math((built.out / "derivation.tex").read_text())
    assert len(md) > 500 and len(tex) > 500  # the extraction finds the formulas
    assert any(r"312\,\mathrm{TFLOP/s}" in f for f in md) and any(r"312\,\mathrm{TFLOP/s}" in f for f in tex)
    assert long_numbers(md) == [] and long_numbers(tex) == []
    html = [f for page in built.out.glob("*.html")
            for f in re.findall(r'class="math[^"]*">(.*?)</(?:span|div)>', page.read_text(), flags=re.S)]
    assert len(html) > 500 and long_numbers(html) == []
    # the check itself finds what it is for
    assert long_numbers(["F = 312000000000000", r"x \le 1{,}000{,}000{,}000", "q = 2"]) == [
        "F = 312000000000000", r"x \le 1{,}000{,}000{,}000"]


@needs_pdf
def test_latex_log_is_kept_and_has_no_overfull_box(built):
    log = (built.out / "derivation.log").read_text(errors="replace")
    assert "derivation.tex" in log and "Output written on derivation.pdf" in log
    boxes = [line for line in log.splitlines() if line.startswith(("Overfull \\hbox", "Overfull \\vbox"))]
    assert not boxes, f"{len(boxes)} overfull boxes, first: {boxes[:5]}"


@needs_pdf
def test_pdf_reads_like_the_lecture(built, lecture_library):
    """Part I follows the lecture: chapters in order, then the catalogue as appendices; the title page
    names the version, the scenario and the date of the inputs; the lecture's numbers read as it says them."""
    text = subprocess.run(["pdftotext", "-layout", str(built.out / "derivation.pdf"), "-"], check=True,
                          capture_output=True, text=True).stdout
    flat = " ".join(text.split())
    title_page = " ".join(text.split("\f")[0].split())
    assert "scenario lecture" in title_page and "engine derive 0." in title_page and "inputs dated" in title_page
    part1, _, appendix = flat.partition("Part II Appendices")
    assert part1.startswith(title_page[:40]) or "Part I The argument" in part1
    titles = [t.title for t in lecture_library.topics]
    positions = [part1.find(f"{i} {_first_words(t)}", part1.find("Part I The argument")) for i, t in
                 enumerate(titles, start=1)]
    assert all(p > 0 for p in positions) and positions == sorted(positions), positions
    assert "Catalogue:" in appendix
    assert "B ∗ = 2,400 seq (within 1 %)" in flat or "B∗ = 2,400 seq (within 1 %)" in flat
    assert "56.25 GB/s, 2.0× below the scenario’s 112.5 GB/s" in flat
    assert "Not evaluated" not in flat


def _first_words(title: str) -> str:
    return " ".join(title.split()[:3])


def test_markdown_renders_on_github(built, lecture_library):
    """The constructs GitHub's math renderer breaks on are absent; numbering is the PDF's."""
    md = (built.out / "derivation.md").read_text()
    lines = md.splitlines()
    first_chapter = next(i for i, line in enumerate(lines) if line.startswith("## 1. "))
    assert lines.index("## Contents") < first_chapter  # Contents first
    in_display = False
    for line in lines:
        assert "^{*}" not in line, line  # two of them on a line read as emphasis
        if line.strip() == "$$":
            in_display = not in_display
        # math spans and $$ blocks, where \\$ is the documented escape (\$4.95/\mathrm{Mtok})
        prose = "" if in_display else re.sub(r"\$(?:\\.|[^$\\])+\$", "", line)
        assert "\\$" not in prose, line  # a backslash-dollar in prose beside math breaks; GitHub's is <span>$</span>
        if line.startswith("#"):
            assert "\\" not in line and "$" not in line.replace("<span>$</span>", ""), line  # plain headings
    chapters = [line for line in lines if re.match(r"## \d+\. ", line)]
    assert [c.split(". ", 1)[0] for c in chapters] == [f"## {i}" for i in range(1, len(lecture_library.topics) + 1)]
    tex = (built.out / "derivation.tex").read_text()
    part1 = tex.split(r"\appendix")[0]
    tex_titles = re.findall(r"^\\section\{(.*)\}\\label\{sec:topic-", part1, flags=re.M)
    assert len(tex_titles) == len(chapters)  # the same chapters, in the same order, numbered by LaTeX 1, 2, ...
    assert "<span>$</span>" in md  # prices in prose, escaped the GitHub way


@needs_pdf
def test_small_document_with_what_breaks_compiles(tmp_path):
    """The golden LaTeX of the small library (what-breaks section, skipped figures, an inconsistency box)
    compiles too."""
    shutil.copy(ROOT / "tests" / "golden" / "small.tex", tmp_path / "small.tex")
    sys.path.insert(0, str(ROOT / "tests"))
    import doclib

    from derive.documents.figures import render_chapter_graph, render_figure, render_graph

    lib = doclib.library()
    for spec in lib.figures:
        render_figure(spec, lib, doclib.scenario(), tmp_path / "figures")
    render_graph(lib, {}, tmp_path / "figures")
    for t in lib.topics:
        render_chapter_graph(lib, {}, t.name, tmp_path / "figures")
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "small.tex"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:]


# the web site, in a real browser -------------------------------------------------------------------------

REQUIRE_BROWSER = os.environ.get("DERIVE_REQUIRE_BROWSER", "") not in ("", "0")
SCREENSHOTS = ROOT / "build" / "browser-test"


def _chromium() -> str | None:
    for name in (os.environ.get("DERIVE_CHROMIUM", ""), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


@pytest.fixture(scope="module")
def browser():
    path = _chromium()
    if path is None:
        if REQUIRE_BROWSER:
            pytest.fail("no chromium found and DERIVE_REQUIRE_BROWSER is set")
        pytest.skip("chromium is not installed (set DERIVE_REQUIRE_BROWSER=1 to fail)")
    return path


def _chrome(browser: str, url: str, *args: str) -> tuple[str, list[str]]:
    """Run headless Chromium on ``url``: (stdout, console lines)."""
    proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--enable-logging=stderr", "--v=0", "--allow-file-access-from-files",
                           "--virtual-time-budget=5000", *args, url],
                          capture_output=True, text=True, timeout=180)
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    return proc.stdout, console


def test_site_pages_load_without_error_and_render_math(built, browser):
    out = built.out
    pages = ["index.html", "graph.html"] + sorted(p.name for p in out.glob("chapter-*.html"))
    assert len(pages) > 2
    for page in pages:
        dom, console = _chrome(browser, (out / page).as_uri(), "--dump-dom")
        assert 'data-derive-ready="1"' in dom, f"{page}: the page script did not finish"
        assert "data-derive-error" not in dom and not console, f"{page}: {console[:3]}"
        assert "katex-error" not in dom, page
        maths = dom.count('class="math')
        assert dom.count('class="katex"') >= maths, f"{page}: {maths} math elements, not all rendered"
        text = re.sub(r"<[^>]+>", " ", re.sub(r"<(script|style|annotation)[^>]*>.*?</\\1>", " ", dom, flags=re.S))
        assert not re.search(r"\\$[^$<]*\\\\[a-zA-Z]+", text), f"{page}: raw TeX between dollars left in the page"


def test_site_graph_nodes_link_to_their_claims(built, browser, lecture_library):
    out = built.out
    dom, console = _chrome(browser, (out / "graph.html").as_uri() + "#pipeline.scaleout_viability", "--dump-dom")
    assert not console, console[:3]
    hrefs = dict(re.findall(r'<g class="node[^"]*"[^>]*data-id="([^"]+)"[^>]*>.*?<a href="([^"]+)"', dom, flags=re.S))
    claims = [c.id for c in lecture_library.claims()]
    assert set(claims) <= set(hrefs), "every claim is a node of the graph"
    for decl_id in claims:
        page, _, anchor = hrefs[decl_id].partition("#")
        html = (out / page).read_text()
        assert f'id="{anchor}" data-id="{decl_id}"' in html, decl_id
    # the selected node's subgraph: what it rests on and what rests on it, and a link to its declaration
    assert 'id="open-declaration"' in dom and "Rests on" in dom and "Rests on it" in dom
    assert 'class="node selected' in dom or 'class="node outline selected' in dom


def test_site_screenshots(built, browser):
    """Screenshots of the index, a chapter and the graph (kept under build/browser-test for CI)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for page, size in (("index.html", "1280,1600"), ("chapter-batching.html", "1280,2400"),
                       ("graph.html#batching.batch_optimum", "1600,1200")):
        name = page.split(".")[0] + ".png"
        target = SCREENSHOTS / name
        target.unlink(missing_ok=True)
        _, console = _chrome(browser, built.out.as_uri() + "/" + page, f"--screenshot={target}",
                             f"--window-size={size}")
        assert target.exists() and target.stat().st_size > 10_000, name
        assert not console, console[:3]


@needs_pdf
def test_chapter_graphs_print_at_a_legible_size(built, lecture_library):
    """Each chapter's dependency subgraph fits the text width at its natural size, so its labels print
    at their own point size (no shrinking to fit), which is at least 7 pt."""
    from derive.documents.figures import CHAPTER_GRAPH_FONT

    text_width_in = (21.0 - 2 * 2.3) / 2.54  # a4paper, margin=2.3cm
    assert CHAPTER_GRAPH_FONT >= 7
    for t in lecture_library.topics:
        pdf = built.out / "figures" / f"graph_{t.name}.pdf"
        info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
        width_pt = float(re.search(r"Page size:\s+([\d.]+) x", info).group(1))
        assert width_pt / 72 <= text_width_in, f"{pdf.name} is {width_pt / 72:.2f} in wide: it would be shrunk"


def test_a_build_at_the_readers_chip_and_model_shows_instance_answers_not_surprises(tmp_path, cache_dir, monkeypatch,
                                                                                    capsys):
    """The lecture's instance claims read at another chip and model are answers at those values (derive check
    counts them apart): the document marks none of them "expected proved", and counts no claim not as expected."""
    monkeypatch.setenv("DERIVE_CACHE_DIR", str(cache_dir))
    code = main(["build", "--format", "md", "--out", str(tmp_path / "b"), "--hardware", "h100-sxm", "--model",
                 "llama3-8b"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "instance claims answered at these values" in captured.out
    md = (tmp_path / "b" / "derivation.md").read_text()
    assert "**refuted**" in md  # the lecture's numbers do not hold for this chip and model
    assert "(**expected " not in md and "; **expected " not in md
    assert "0 claims not as expected." in md
