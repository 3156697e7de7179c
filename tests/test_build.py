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
    formats = FORMATS if WITH_PDF else ("md", "tex")
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
    assert r"\newcommand{\valCriticalBatch}{\SI{2400}{\sequence}}" in values
    assert "What breaks" not in md  # the default scenario is the baseline


@needs_pdf
def test_pdf_has_every_claim_title(built, lecture_library):
    text = subprocess.run(["pdftotext", "-layout", str(built.out / "derivation.pdf"), "-"], check=True,
                          capture_output=True, text=True).stdout
    words = _words(text)
    missing = [c.title for c in lecture_library.claims() if _words(c.title) not in words]
    assert not missing, f"claim titles not found in the PDF: {missing}"


def test_two_builds_are_byte_identical(built, lecture_library, lecture_scenario, tmp_path, cache_dir):
    formats = FORMATS if WITH_PDF else ("md", "tex")
    again = build(lecture_library, lecture_scenario, tmp_path / "build", formats, baseline=lecture_scenario,
                  cache=_proof_cache(cache_dir))
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
    monkeypatch.setenv("DERIVE_CACHE_DIR", str(cache_dir))
    code = main(["build", "--format", "md", "--out", str(tmp_path / "b"), "--set", "hbm_capacity=80 GB"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out.startswith("wrote ") and captured.err == ""
    md = (tmp_path / "b" / "derivation.md").read_text()
    assert "## What breaks" in md and "`lecture`" in md
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
def test_example_paper_compiles_against_the_macros(built, tmp_path):
    shutil.copy(ROOT / "examples" / "paper" / "paper.tex", tmp_path / "paper.tex")
    first_line = rf"\def\derivebuild{{{built.out}}}\input{{paper.tex}}"
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", first_line],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:]
    text = subprocess.run(["pdftotext", str(tmp_path / "paper.pdf"), "-"], capture_output=True, text=True).stdout
    assert "2400 seq" in text  # \valCriticalBatch
    assert "Undefined control sequence" not in proc.stdout


@needs_pdf
def test_small_document_with_what_breaks_compiles(tmp_path):
    """The golden LaTeX of the small library (what-breaks section, skipped figures, an inconsistency box)
    compiles too."""
    shutil.copy(ROOT / "tests" / "golden" / "small.tex", tmp_path / "small.tex")
    sys.path.insert(0, str(ROOT / "tests"))
    import doclib

    from derive.documents.figures import render_figure, render_graph

    lib = doclib.library()
    for spec in lib.figures:
        render_figure(spec, lib, doclib.scenario(), tmp_path / "figures")
    render_graph(lib, {}, tmp_path / "figures")
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "small.tex"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:]
