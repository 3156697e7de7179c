"""``derive build``: every output of a checked library, written atomically and reproducibly.

Outputs (relative to the output folder):

- ``derivation.md`` (``md``) and ``figures/*.svg``;
- ``derivation.tex``, ``claims.tex``, ``values.tex`` (``tex``) and ``figures/*.pdf``;
- ``derivation.pdf`` (``pdf``), compiled with pdflatex when it is installed (otherwise a notice);
- ``index.html``, ``chapter-*.html``, ``graph.html`` and ``assets/`` (``html``): a static, offline site
  (``derive.documents.html``);
- ``derivation.log`` beside the PDF: the LaTeX log (tests read it for overfull boxes);
- always: ``status.json`` (the check report without timings), ``graph.dot`` and ``graph.json``.

Part I of the documents states thresholds of the headline claims (``derive.documents.thresholds``),
computed once and cached; figures and the compiled PDF are cached by content in the cache folder
(``derive.documents.store``), so a warm build redraws and recompiles nothing.

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
import re
import secrets
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from derive.checking.checker import Checker, Report
from derive.checking.parallel import run_tasks
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
from derive.documents.render import render
from derive.documents.store import ArtifactStore, content_key
from derive.documents.thresholds import thresholds
from derive.documents.view import claims_model, document_model, values_model
from derive.errors import BuildError, DeriveError, OutputError, UsageError
from derive.model.library import Library
from derive.model.numbers import dumps_json
from derive.model.scenario import Scenario

FORMATS = ("md", "tex", "pdf", "html")
DEFAULT_FORMATS = ("md", "tex", "pdf")
REQUIRE_LATEX_ENV = "DERIVE_REQUIRE_LATEX"
LATEX_ENGINE_ENV = "DERIVE_PDFLATEX"


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
            raise UsageError(f"unknown format '{item}'", where="--format",
                              hint="use md, tex, pdf, html (comma-separated)")
        if item not in out:
            out.append(item)
    if not out:
        raise UsageError("no format given", where="--format", hint="use md, tex, pdf, html (comma-separated)")
    return tuple(f for f in FORMATS if f in out)


def status_json(report: Report) -> str:
    """The check report as JSON without per-claim timings (which would make builds differ)."""
    data = report.to_json()
    for claim in data.get("claims", []):
        claim.pop("seconds", None)
    return dumps_json(data) + "\n"


# a stage hook: ``with stage("drawing figures") as update:`` (update(done, total) for counts); the command
# line shows stages, the library itself prints nothing
Stage = Callable[[str], AbstractContextManager[Callable[[int, int], None]]]


@contextmanager
def quiet_stage(label: str) -> Iterator[Callable[[int, int], None]]:
    """The default stage hook: nothing shown."""
    yield lambda done, total: None


def _checker(library: Library, scenario: Scenario, rlimit: int | None, cache) -> Checker:
    kwargs = {} if rlimit is None else {"rlimit": rlimit}
    if cache is not None:
        kwargs["cache"] = cache
    return Checker(library, scenario, **kwargs)


def latex_engine() -> str | None:
    """The pdflatex to use: ``$DERIVE_PDFLATEX`` (a path, or empty for none) or pdflatex on PATH.  A
    ``$DERIVE_PDFLATEX`` that names nothing runnable is a ``BuildError`` (exit 2), raised before any proving."""
    if LATEX_ENGINE_ENV in os.environ:
        engine = os.environ[LATEX_ENGINE_ENV] or None
        if engine is not None and shutil.which(engine) is None:
            raise BuildError(f"pdflatex is not runnable at {engine}", where=LATEX_ENGINE_ENV,
                             hint=f"install TeX Live (pdflatex), point {LATEX_ENGINE_ENV} at it or unset it, "
                                  "or build --format md,tex")
        return engine
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
            raise BuildError(f"pdflatex is not runnable at {engine}: {err.strerror}", where=LATEX_ENGINE_ENV
                             if os.environ.get(LATEX_ENGINE_ENV) else "PATH",
                             hint="install TeX Live (pdflatex), or build --format md,tex") from None
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
        # "! Undefined control sequence." or, with -file-line-error, "./derivation.tex:76: Undefined control
        # sequence." (any message: the later "==> Fatal error occurred" line names no cause)
        if line.startswith("!") or re.match(r"[^:\s]*\.tex:\d+: ", line):
            detail = " ".join(x.strip() for x in lines[i:i + 3] if x.strip())
            return detail[:300]
    return "see the LaTeX log"


def build(library: Library, scenario: Scenario, out: Path | str = "build", formats: Sequence[str] = DEFAULT_FORMATS, *,
          baseline: Scenario | None = None, rlimit: int | None = None, cache=None,
          report: Report | None = None, stage: Stage = quiet_stage) -> BuildResult:
    """Check the library under ``scenario`` and write every output into ``out`` (see module docstring).

    ``baseline``: when given and different from ``scenario``, its verdicts are compared ("What
    breaks").  ``report``: a report already computed for ``scenario`` (skips the check).  ``stage``: a hook
    told of each stage (checking, drawing, writing, compiling) and its counts, for a progress display."""
    formats = parse_formats(formats)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OutputError(f"output path exists and is not a folder: {out}", where="--out")
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

        with stage("checking the baseline and what the change reaches"):
            d = diff(library, baseline, scenario, rlimit=rlimit, cache=cache)
        base_report = Report(baseline, list(d.before.values()))
        if report is None:
            report = Report(scenario, list(d.after.values()))
    if report is None:
        with stage("checking claims") as update:
            checker = _checker(library, scenario, rlimit, cache)
            checker.progress = update
            report = checker.check()
    verdicts = {r.id: r.verdict for r in report.results}

    cache_root = getattr(cache, "root", None)
    files = publish(out, lambda staging: _write_all(library, scenario, report, base_report, figures, verdicts,
                                                   staging, formats, engine, cache_root, stage), notices)
    return BuildResult(out, files, report, base_report, notices)


def _write_all(library: Library, scenario: Scenario, report: Report, base_report: Report | None, figures: list,
               verdicts: dict[str, str], staging: Path, formats: Sequence[str], engine: str | None,
               cache_root: Path | None = None, stage: Stage = quiet_stage) -> list[str]:
    files: list[str] = []
    store = ArtifactStore(cache_root) if cache_root is not None else None

    def write(name: str, text: str) -> None:
        path = staging / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        files.append(name)

    write("status.json", status_json(report))
    write("graph.dot", graph_dot(library, verdicts))
    write("graph.json", dumps_json(graph_json(library, verdicts)) + "\n")

    wants_tex = "tex" in formats or "pdf" in formats
    fig_formats = tuple(f for f, wanted in (("svg", "md" in formats or "html" in formats), ("pdf", wants_tex))
                        if wanted)
    # the independent, slow parts (drawing, thresholds, the measured appendix) share the machine's cores
    extra = {"thresholds": lambda: thresholds(library, scenario, cache_dir=cache_root),
             "measured": lambda: _measured(library, store)}
    if "html" in formats:  # the live page's preset scenarios (derive.documents.live), beside the drawing
        from derive.documents.live import cached_preset_scenarios

        extra["live"] = lambda: cached_preset_scenarios(library, store)
    with stage(f"drawing {len(figures)} figures, the graphs, thresholds and the ledger"):
        drawn, graph, chapter_graphs, got = _figures(library, scenario, verdicts, figures, staging, fig_formats,
                                                     store, extra)
    for r in [*drawn, graph, *chapter_graphs.values()]:
        files.extend(r.files.values())

    with stage("writing the documents"):
        model = document_model(library, scenario, report, baseline=base_report, figures=drawn, graph=graph,
                               thresholds=got["thresholds"], chapter_graphs=chapter_graphs, measured=got["measured"])
        if "md" in formats:
            write("derivation.md", render("markdown", "derivation.md.j2", model))
        if "html" in formats:
            from derive.documents.html import write_site

            files.extend(write_site(library, model, staging, verdicts, formats))
            from derive.documents.live import write_live_page

            files.extend(write_live_page(library, scenario, report, got["thresholds"], staging, model, formats,
                                         presets=got["live"]))
        if wants_tex:
            write("derivation.tex", render("latex", "derivation.tex.j2", model))
            write("claims.tex", render("latex", "claims.tex.j2", claims_model(library, scenario, report)))
            write("values.tex", render("latex", "values.tex.j2", values_model(library, scenario, report)))
    if "pdf" in formats and engine is not None:
        names = sorted(f for f in files if f.startswith("figures/") and f.endswith(".pdf"))
        key = content_key("pdf", _engine_id(engine), (staging / "derivation.tex").read_bytes(),
                          *[n.encode() + b"\0" + (staging / n).read_bytes() for n in names])
        if store is None or store.get("pdf", key, staging) is None:
            with stage("compiling the PDF"):
                compile_pdf("derivation.tex", staging, engine)
            if store is not None:
                store.put("pdf", key, staging, ["derivation.pdf", "derivation.log"])
        files.extend(["derivation.pdf", "derivation.log"])
    return sorted(set(files))


def _measured(library: Library, store: ArtifactStore | None) -> dict | None:
    """The "Measured against derived" appendix (``derive.documents.measured``): the ledger's rows, or None
    when the library has no ledger.  Cached by the sources and the preset folders (the ledger's data);
    its figures are left to ``derive ledger --figures DIR``, which keeps a cold build within its budget."""
    from derive.checking.cache import dir_digest, sources_digest
    from derive.documents.measured import measured_section

    key = None
    if store is not None:
        key = content_key("measured", sources_digest(), *[f"{d}:{dir_digest(str(d))}" for d in library.preset_dirs])
        entry = store.dir / f"measured-{key}" / "section.json"
        try:
            return json.loads(entry.read_text())["section"]
        except (OSError, ValueError, KeyError, TypeError):
            pass
    try:
        section = measured_section(library, None)
    except DeriveError:
        return None
    data = None
    if section.rows:
        data = {"title": section.title, "intro": section.intro,
                "rows": [dataclasses.asdict(r) | {"ratio_text": f"{r.ratio:.2f}",
                                                  "ratio_achieved_text": None if r.ratio_achieved is None
                                                  else f"{r.ratio_achieved:.2f}"} for r in section.rows],
                "summary": [{"status": k, "count": v} for k, v in sorted(section.summary.items())]}
    if store is not None and key is not None:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "section.json").write_text(json.dumps({"section": data}, sort_keys=True))
            store.put("measured", key, Path(tmp), ["section.json"])
    return data


def _engine_id(engine: str) -> str:
    """The LaTeX engine's path and size (a changed TeX installation gives other PDFs)."""
    path = shutil.which(engine) or engine
    try:
        st = os.stat(path)
        return f"{path}:{st.st_size}:{int(st.st_mtime)}"
    except OSError:
        return path


def _figures(library: Library, scenario: Scenario, verdicts: dict[str, str], figures: list, staging: Path,
             formats: Sequence[str], store: ArtifactStore | None, extra: dict[str, Callable[[], object]]
             ) -> tuple[list[FigureResult], FigureResult, dict[str, FigureResult], dict[str, object]]:
    """Draw (or read from the artifact cache) every figure, the dependency graph and one subgraph per
    chapter, and run the ``extra`` tasks alongside (their results by name).  The key covers the engine's
    and libraries' sources, the scenario and the verdicts."""
    key = None
    if store is not None:
        from derive.checking.cache import sources_digest

        key = content_key("figures", sources_digest(), scenario.fingerprint(), json.dumps(verdicts, sort_keys=True),
                          ",".join(formats), json.dumps([f.id for f in figures]))
        manifest = store.get("figures", key, staging)
        if manifest is not None:
            try:
                results = [FigureResult(**r) for r in manifest["results"]]
                drawn, graph, chapters = results[:len(figures)], results[len(figures)], results[len(figures) + 1:]
                got = dict(zip(extra, run_tasks(list(extra.values()), BUILD_WORKERS), strict=True))
                return drawn, graph, {r.topic: r for r in chapters if r.topic}, got
            except (KeyError, TypeError, IndexError):
                pass
    fig_dir = staging / "figures"
    topics = [t.name for t in library.topics]
    # longest first: the graph and the extra tasks, then the figures and chapter graphs
    tasks: list[Callable[[], object]] = [
        *extra.values(),
        lambda: render_graph(library, verdicts, fig_dir, formats=formats),
        *[(lambda f=f: render_figure(f, library, scenario, fig_dir, formats)) for f in figures],
        *[(lambda t=t: render_chapter_graph(library, verdicts, t, fig_dir, formats)) for t in topics],
    ]
    out = run_tasks(tasks, BUILD_WORKERS)
    got = dict(zip(extra, out[:len(extra)], strict=True))
    graph = out[len(extra)]
    drawn = out[len(extra) + 1:len(extra) + 1 + len(figures)]
    chapters = dict(zip(topics, out[len(extra) + 1 + len(figures):], strict=True))
    if store is not None and key is not None:
        results = [*drawn, graph, *chapters.values()]
        names = [n for r in results for n in r.files.values()]
        store.put("figures", key, staging, names, {"results": [dataclasses.asdict(r) for r in results]})
    return drawn, graph, chapters, got  # type: ignore[return-value]


BUILD_WORKERS = 2  # processes for the drawing phase (the machines this is measured on have 2 cores)


# the write and switch phase ---------------------------------------------------------------------------

STAGING_TAG, OLD_TAG = "staging", "old"


def publish(out: Path, write: Callable[[Path], list[str]], notices: list[str] | None = None, *,
            option: str = "--out") -> list[str]:
    """Run ``write(staging)`` (it returns the files it wrote, relative to ``staging``) and make the result
    ``out`` in one atomic switch (see the module docstring).  Returns the sorted list of files written.

    ``out`` is never partly new: an error or a kill before the switch leaves the previous ``out`` as it
    was; after the switch it is the new build.  ``OSError`` anywhere becomes ``OutputError`` naming the
    folder; other errors propagate after the staging folder is removed.  ``option``: the command-line option
    that named ``out``, for the messages."""
    notices = notices if notices is not None else []
    out = Path(out)
    where = f"{option} {out}"
    # a symlinked --out: the folder it points to is replaced (the link stays a link)
    absolute = Path(os.path.realpath(out) if out.is_symlink() else os.path.abspath(out))
    cwd = Path.cwd()
    if absolute == cwd or absolute in cwd.parents or absolute.parent == absolute:
        raise OutputError(f"the output folder {out} is the current folder or contains it", where=where,
                          hint="the build replaces the output folder as a whole: give a subfolder such as build/")
    try:
        is_other = out.exists() and not out.is_dir()
    except OSError as err:
        raise OutputError(f"cannot use output folder {out}: {_reason(err)}", where=where) from None
    if is_other:
        raise OutputError(f"output path exists and is not a folder: {out}", where=where,
                          hint=f"remove the file or choose another {option}")
    if out.is_dir() and not os.access(out, os.W_OK | os.X_OK):
        raise OutputError(f"output folder {out} is read-only", where=where,
                          hint=f"make it writable or choose another {option}")
    parent = absolute.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        _recover(absolute, notices)
        staging = parent / f".{absolute.name}.{STAGING_TAG}-{os.getpid()}-{secrets.token_hex(4)}"
        staging.mkdir()
    except OSError as err:
        raise OutputError(f"cannot write beside the output folder, in {parent}: {_reason(err)}", where=where,
                          hint=f"the build is staged next to {option}: its parent folder must be writable") from None
    try:
        files = sorted(set(write(staging)))
        _keep_only(staging, files)
        if absolute.is_dir():
            _carry_over(absolute, staging, set(files))
        old = _switch(staging, absolute)
    except OSError as err:
        _remove(staging)
        name = getattr(err, "filename", None)
        shown = f" ({Path(name).name})" if name else ""
        raise OutputError(f"cannot write the build{shown}: {_reason(err)}", where=where,
                          hint="check free space and the permissions of the output folder; the previous "
                               "build is unchanged") from None
    except BaseException:
        _remove(staging)
        raise
    if old is not None and not _remove(old):
        notices.append(f"could not remove the previous build at {old} (the next build removes it)")
    return files


def _reason(err: OSError) -> str:
    return err.strerror or type(err).__name__


def _siblings(out: Path, tag: str) -> list[tuple[Path, int | None]]:
    """Staging or old folders of ``out`` in its parent, with the process id in their name."""
    prefix = f".{out.name}.{tag}-"
    found = []
    try:
        entries = list(out.parent.iterdir())
    except OSError:
        return []
    for entry in entries:
        if entry.name.startswith(prefix):
            pid = entry.name[len(prefix):].split("-", 1)[0]
            found.append((entry, int(pid) if pid.isdigit() else None))
        elif tag == STAGING_TAG and entry.name.startswith(f".{out.name}-staging-"):
            found.append((entry, None))  # derive 0.1's staging folders: no process id
    return found


def _alive(pid: int | None) -> bool:
    if pid is None:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _recover(out: Path, notices: list[str]) -> None:
    """Undo what killed builds left: an old build set aside with no ``out`` is put back; dead builds'
    staging folders and old builds are removed."""
    olds = [(p, pid) for p, pid in _siblings(out, OLD_TAG) if not _alive(pid)]
    if olds and not out.exists():
        newest = max(olds, key=lambda item: item[0].stat().st_mtime)[0]
        os.rename(newest, out)
        notices.append(f"restored {out} from a build interrupted while switching")
        olds = [(p, pid) for p, pid in olds if p != newest]
    for path, pid in [*olds, *_siblings(out, STAGING_TAG)]:
        if not _alive(pid):
            _remove(path)


def _keep_only(staging: Path, files: list[str]) -> None:
    """Remove from ``staging`` whatever ``write`` left that is not an output (LaTeX's .aux and .log)."""
    wanted = set(files)
    for path in sorted(staging.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        rel = path.relative_to(staging).as_posix()
        if path.is_dir() and not path.is_symlink():
            if not any(f.startswith(rel + "/") for f in wanted):
                shutil.rmtree(path)
        elif rel not in wanted:
            path.unlink()


def _carry_over(out: Path, staging: Path, written: set[str]) -> None:
    """Files of the previous ``out`` that the new build does not write (a user's own files, outputs of
    formats not built this time) are kept: hard-linked (or copied) into the staging folder."""
    for src in sorted(out.rglob("*")):
        rel = src.relative_to(out).as_posix()
        dst = staging / rel
        if rel in written or dst.exists() or dst.is_symlink():
            continue
        if src.is_symlink():
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(os.readlink(src), dst)
        elif src.is_dir():
            dst.mkdir(parents=True, exist_ok=True)
        elif src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(src, dst)
            except OSError:
                shutil.copy2(src, dst)


def _switch(staging: Path, out: Path) -> Path | None:
    """Make ``staging`` the folder ``out`` in one step; returns where the previous build now is (to delete)."""
    if not out.exists():
        try:
            os.rename(staging, out)
            return None
        except OSError as err:  # appeared meanwhile (a concurrent build): exchange with it instead
            if err.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
    if _exchange(staging, out):
        return staging  # the previous build, under the staging name
    old = out.parent / f".{out.name}.{OLD_TAG}-{os.getpid()}-{secrets.token_hex(4)}"
    os.rename(out, old)  # a kill here leaves no out and the old build aside: _recover puts it back
    os.rename(staging, out)
    return old


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 with RENAME_EXCHANGE); False where not supported."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _remove(path: Path) -> bool:
    """Delete a folder tree, making read-only parts writable on the way; True when it is gone."""
    def retry(func, name, _exc) -> None:
        try:
            os.chmod(os.path.dirname(name), 0o700)
            if os.path.isdir(name) and not os.path.islink(name):
                os.chmod(name, 0o700)
            func(name)
        except OSError:
            pass

    if not path.exists() and not path.is_symlink():
        return True
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry)
    else:
        shutil.rmtree(path, onerror=retry)
    return not path.exists()
