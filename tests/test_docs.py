"""The documentation site (``docs/``, built with MkDocs) and the README: the site builds in strict mode,
every internal link and anchor of the built pages resolves, and every command the pages show is run.

Commands are shown in ``console`` blocks: a line ``$ derive ...`` is a command, and the lines after it (up to
the next ``$`` line) are text its output must contain, whitespace collapsed (``...`` stands for lines left
out).  A command must not fail on bad input (exit 2) unless the text shown is its ``error:`` line; a command
shown without output only has to run.  Commands run in-process, in a folder that holds the checkout's
``tests/`` and ``examples/`` (the paths the docs use), with the test session's cache folder."""

from __future__ import annotations

import html.parser
import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from derive.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md")) + [ROOT / "README.md"]
HAVE_MKDOCS = importlib.util.find_spec("mkdocs") is not None
needs_mkdocs = pytest.mark.skipif(not HAVE_MKDOCS, reason="mkdocs is not installed (pip install -e '.[dev]')")

FENCE = re.compile(r"^```(\S*)\s*$")


def shown_commands(page: Path, root: Path = ROOT) -> list[tuple[str, str, list[str]]]:
    """(where, command line, expected output lines) for every ``$`` line of the page's console blocks."""
    found: list[tuple[str, str, list[str]]] = []
    lang = None
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        fence = FENCE.match(line)
        if fence:
            lang = None if lang is not None else fence.group(1)
            continue
        if lang != "console":
            continue
        if line.startswith("$ "):
            found.append((f"{page.relative_to(root)}:{number}", line[2:], []))
        elif found and line.strip() and line.strip() != "...":
            found[-1][2].append(line)
    return found


COMMANDS = [c for page in PAGES for c in shown_commands(page)]


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _hugging_face_cache(home: Path, model_id: str, config: Path) -> None:
    """The layout of a local Hugging Face cache holding one model's config.json (nothing is downloaded)."""
    repo = home / "hub" / ("models--" + model_id.replace("/", "--"))
    (repo / "snapshots" / "0123abcd").mkdir(parents=True)
    shutil.copy(config, repo / "snapshots" / "0123abcd" / "config.json")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")


@pytest.mark.parametrize(("where", "command", "expected"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_shown_command_runs_and_prints_what_the_page_says(where, command, expected, tmp_path, monkeypatch, capsys):
    argv = shlex.split(command, comments=True)
    assert argv[0] == "derive", f"{where}: a console block shows only derive commands, not {argv[0]!r}"
    for name in ("tests", "examples"):
        (tmp_path / name).symlink_to(ROOT / name)
    _hugging_face_cache(tmp_path / "hf", "meta-llama/Llama-3.1-8B", ROOT / "tests/fixtures/configs/llama-3.1-8b.json")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.chdir(tmp_path)
    try:
        code = main(argv[1:])
    except SystemExit as stop:  # argparse's usage errors
        code = stop.code
    out, err = capsys.readouterr()
    shows_error = any("error:" in line for line in expected)
    if shows_error:
        assert code == 2, f"{where}: `{command}` should fail on bad input, exit {code}"
    else:
        assert code in (0, 1), f"{where}: `{command}` exited {code}: {err.strip()}"
    printed = _collapse(out + err)
    missing = [line for line in expected if _collapse(line) not in printed]
    assert not missing, f"{where}: `{command}` did not print {missing}; it printed:\n{out}{err}"


def test_the_library_example_of_the_docs_is_a_library_that_checks(tmp_path, capsys):
    """The Python example of "Your own claims" is a whole library: written to a file, it loads and its claim is
    proved."""
    text = (DOCS / "own-claims.md").read_text(encoding="utf-8")
    example, definition = re.findall(r"```python\n(.*?)```", text, re.S)
    (tmp_path / "mine.py").write_text(example, encoding="utf-8")
    assert main(["check", "--library", str(tmp_path / "mine.py")]) == 0
    out = capsys.readouterr().out
    assert "proved" in out and "mine.time_positive" in out
    # the Definition example, on top of the lecture: its domain shown, its value computed
    (tmp_path / "transfer.py").write_text(definition, encoding="utf-8")
    libs = ["--library", "lecture", "--library", str(tmp_path / "transfer.py")]
    assert main(["check", *libs, "--no-cache"]) == 0
    assert "kv_transfer_time is declared positive" not in capsys.readouterr().out
    assert main(["eval", "kv_transfer_time", *libs, "--hardware", "h200", "--model", "llama3-70b",
                 "--set", "link_bandwidth=64 GB/s", "--set", "prompt_len=8192 token"]) == 0
    assert "kv_transfer_time ≈ 41.94 ms" in capsys.readouterr().out  # 8192 x 327,680 B / 64 GB/s


def test_the_pages_show_commands():
    assert len(COMMANDS) >= 20
    pages = {where.split(":")[0] for where, _, _ in COMMANDS}
    assert "README.md" in pages and len(pages) >= 6


def test_the_command_reader_sees_commands_and_their_output(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```sh\n$ derive not-run\n```\n\n```console\n$ derive eval batch  # a comment\nbatch = 2,000 seq\n"
                    "...\n$ derive presets\n```\n")
    found = [(c, e) for _, c, e in shown_commands(page, tmp_path)]
    assert found == [("derive eval batch  # a comment", ["batch = 2,000 seq"]), ("derive presets", [])]


# the site -----------------------------------------------------------------------------------------------------


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])


def broken_links(site: Path) -> list[str]:
    """Every relative link of the built site whose file or anchor does not exist."""
    pages = {}
    for page in sorted(site.rglob("*.html")):
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        pages[page] = parser
    broken = []
    for page, parser in pages.items():
        for href in parser.hrefs:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith("/"):
                continue  # outside the site
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {href} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                if unquote(parts.fragment) not in pages[target].ids:
                    broken.append(f"{page.relative_to(site)}: {href} (no such anchor)")
    return broken


def _mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess:
    # not --quiet: it hides the warnings that strict mode counts, and a broken link would pass
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(config), "--site-dir", str(site)], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    if not HAVE_MKDOCS:
        pytest.skip("mkdocs is not installed (pip install -e '.[dev]')")
    site = tmp_path_factory.mktemp("site")
    proc = _mkdocs_build(ROOT / "mkdocs.yml", site)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return site


@needs_mkdocs
def test_every_page_is_built_and_in_the_navigation(site):
    built = {p.relative_to(site).parent.as_posix() for p in site.rglob("index.html")}
    for page in DOCS.glob("*.md"):
        expected = "." if page.stem == "index" else page.stem
        assert expected in built, f"{page.name} was not built"
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    missing = [p.name for p in DOCS.glob("*.md") if p.name not in nav]
    assert not missing, f"pages missing from the navigation in mkdocs.yml: {missing}"


@needs_mkdocs
def test_every_internal_link_of_the_site_resolves(site):
    assert not broken_links(site)


def test_the_link_checker_finds_a_missing_file_and_a_missing_anchor(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "index.html").write_text('<h1 id="top">t</h1><a href="a/">ok</a><a href="#top">ok</a>'
                                         '<a href="b/">gone</a><a href="a/#nowhere">no anchor</a>'
                                         '<a href="https://example.org/x">outside</a>')
    (tmp_path / "a" / "index.html").write_text('<h2 id="here">h</h2>')
    assert broken_links(tmp_path) == ["index.html: b/ (no such file)", "index.html: a/#nowhere (no such anchor)"]


@needs_mkdocs
def test_a_broken_link_in_the_docs_fails_the_build(tmp_path):
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    page = tmp_path / "docs" / "index.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nSee [nowhere](no-such-page.md).\n", encoding="utf-8")
    proc = _mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode != 0 and "no-such-page.md" in proc.stderr + proc.stdout


def test_readme_links_to_files_that_exist():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if not urlsplit(t).scheme]
    assert any(t.startswith("docs/") for t in local)
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, f"README links to missing files: {missing}"


def test_readme_quick_start_is_the_two_make_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", quick, re.S).group(1)
    assert [line.split("#")[0].strip() for line in block.strip().splitlines()] == ["make build", "make test"]
