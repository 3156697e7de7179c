"""derive audit --html: the report page (derive.documents.audit_page), its links into a built site, and a browser."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

import derive.documents.audit_page as audit_page
from derive.cli import main
from derive.documents.audit_page import AuditReport, render_page, site_pages
from derive.model.loader import load_library
from derive.whatif.audit import Auditor, checker_for, plan_audit, read_rows

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "audit"
DASHBOARD = EXAMPLES / "ai-infra-index-llama2-70b-b1.csv"
LIB = load_library(["lecture"])
PLAN = plan_audit(LIB, checker_for(LIB))
REQUIRE_BROWSER = os.environ.get("DERIVE_REQUIRE_BROWSER", "") not in ("", "0")


def report_of(path: Path) -> AuditReport:
    header, rows = read_rows(str(path))
    report = AuditReport(PLAN, path.name)
    for row in Auditor(PLAN, header, where=str(path)).audit(rows):
        report.add(row)
    return report


@pytest.fixture(scope="module")
def site(tmp_path_factory, lecture_library, lecture_scenario) -> Path:
    """The lecture's site, built as ``derive build --format html`` builds it."""
    from derive.documents.build import build

    out = tmp_path_factory.mktemp("site") / "site"
    build(lecture_library, lecture_scenario, out, ("html",))
    return out


def _anchor_exists(page: Path, anchor: str, decl_id: str) -> bool:
    return page.is_file() and f'id="{anchor}" data-id="{decl_id}"' in page.read_text(encoding="utf-8")


# links: the site's anchor scheme ------------------------------------------------------------------------------

def test_every_declaration_link_names_its_catalogue_entry_in_the_built_site(site):
    pages = site_pages(LIB)
    assert set(pages) == set(LIB.declarations)
    missing = [d for d, href in pages.items() if not _anchor_exists(site / href.partition("#")[0],
                                                                      href.partition("#")[2], d)]
    assert not missing, missing[:5]


def test_a_link_to_a_name_the_site_lacks_is_detected(site):
    """The planted twin of the check above: a wrong anchor is not found."""
    page, _, anchor = site_pages(LIB)["gap.roofline_floor_below_measured"].partition("#")
    assert _anchor_exists(site / page, anchor, "gap.roofline_floor_below_measured")
    assert not _anchor_exists(site / page, anchor + "-x", "gap.roofline_floor_below_measured")


@pytest.mark.parametrize("site_arg,prefix", [("..", "../chapter-"), ("https://example.org/derive/",
                                                                     "https://example.org/derive/chapter-"),
                                             ("", "chapter-")])
def test_links_start_where_the_site_is(site_arg, prefix):
    html = render_page(report_of(DASHBOARD), site_arg)
    hrefs = re.findall(r'class="derivation" href="([^"]+)"', html)
    assert len(hrefs) == 3 and all(h.startswith(prefix) for h in hrefs)


# the page's content ------------------------------------------------------------------------------------------

def test_page_counts_and_marks_the_impossible_rows():
    html = render_page(report_of(DASHBOARD))
    assert "5 rows: 3 impossible, 0 consistent, 2 unchecked" in html
    assert html.count('class="impossible-row"') == 3
    assert html.count('class="point impossible"') == 3  # one red point per impossible row, each a link
    assert html.count('<figure class="plot"') == 3  # one per chip (three chips, one model, one metric)
    assert "needs chips &gt;= 5" in html
    assert "tokens_per_s: missing chips" in html  # the unchecked rows' reason, counted


def test_page_of_planted_rows_draws_consistent_and_impossible_points():
    html = render_page(report_of(EXAMPLES / "planted.csv"))
    assert html.count('class="impossible-row"') == 3
    assert html.count('<circle class="point"') == 2  # the two consistent rows
    assert 'class="shade"' in html


def test_page_is_bounded_and_says_what_it_leaves_out(monkeypatch):
    monkeypatch.setattr(audit_page, "MAX_ROWS", 1)
    monkeypatch.setattr(audit_page, "MAX_POINTS", 1)
    report = report_of(EXAMPLES / "planted.csv")
    html = render_page(report)
    assert html.count('class="impossible-row"') == 1
    assert "2 more impossible rows are not listed" in html
    # the planted table's rows share no plot, so no point is left undrawn; a plot of two rows would leave one
    assert all(len(p.impossible) <= 1 and len(p.consistent) <= 1 for p in report.panels.values())


def test_user_text_is_escaped(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text('id,model,hardware,chips,batch,context,bytes_per_param,tpot,source\n'
                     '<script>x</script>,llama3-70b,h100-sxm,8,1,1024,2 byte/param,2 ms,"<b>\x1b[31m</b>"\n')
    html = render_page(report_of(table))
    assert "<script>x" not in html and "&lt;script&gt;x" in html
    assert "<b>" not in html and "\x1b" not in html


# the command line: atomic, deterministic -----------------------------------------------------------------------

def test_cli_writes_the_page_and_exits_1(tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["audit", str(DASHBOARD), "--html", str(out)]) == 1
    assert (out / "index.html").is_file() and sorted(p.name for p in out.iterdir()) == ["index.html"]
    assert f"wrote {out / 'index.html'}" in capsys.readouterr().out


def test_bad_table_leaves_no_page_and_keeps_the_old_one(tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["audit", str(DASHBOARD), "--html", str(out)]) == 1
    before = (out / "index.html").read_bytes()
    capsys.readouterr()
    bad = tmp_path / "bad.csv"
    rows = DASHBOARD.read_text().splitlines()
    bad.write_text("\n".join([*rows, "h100,,h100-sxm,1"]) + "\n")  # a short line at the end of the stream
    assert main(["audit", str(bad), "--html", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "line 7" in err[0]
    assert (out / "index.html").read_bytes() == before
    fresh = tmp_path / "fresh"
    assert main(["audit", str(bad), "--html", str(fresh)]) == 2
    assert not fresh.exists()


def test_html_into_a_file_is_one_line_exit_2(tmp_path, capsys):
    target = tmp_path / "a-file"
    target.write_text("x")
    assert main(["audit", str(DASHBOARD), "--html", str(target)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--html" in err[0]


def test_site_without_html_is_refused(capsys):
    assert main(["audit", str(DASHBOARD), "--site", "https://example.org/"]) == 2
    assert "--site" in capsys.readouterr().err


def test_page_bytes_are_the_same_across_processes_and_hash_seeds(tmp_path):
    pages = []
    for seed in ("0", "12345"):
        out = tmp_path / f"seed-{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, "-m", "derive", "audit", str(EXAMPLES / "planted.csv"), "--html",
                               str(out)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
        assert proc.returncode == 1, proc.stderr
        pages.append((out / "index.html").read_bytes())
    assert pages[0] == pages[1]


# in a real browser ---------------------------------------------------------------------------------------------

def _chromium() -> str | None:
    for name in (os.environ.get("DERIVE_CHROMIUM", ""), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


@pytest.fixture(scope="module")
def browser() -> str:
    path = _chromium()
    if path is None:
        if REQUIRE_BROWSER:
            pytest.fail("no chromium found and DERIVE_REQUIRE_BROWSER is set")
        pytest.skip("chromium is not installed (set DERIVE_REQUIRE_BROWSER=1 to fail)")
    return path


def test_report_page_in_a_browser_counts_its_impossible_rows_and_links_into_the_site(site, browser, tmp_path):
    report_dir = site / "audit"  # the default --site (..): the report inside the site's folder
    assert main(["audit", str(DASHBOARD), "--html", str(report_dir)]) == 1
    page = report_dir / "index.html"
    proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--enable-logging=stderr", "--v=0", "--allow-file-access-from-files",
                           "--virtual-time-budget=5000", "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=180)
    dom = proc.stdout
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, console[:3]
    assert 'data-impossible="3"' in dom and "3 impossible" in dom
    assert dom.count('class="impossible-row"') == 3
    assert len(re.findall(r'<circle class="point impossible"', dom)) == 3
    links = re.findall(r'<a class="(?:derivation|assumption|point-link)" href="([^"]+)"', dom)
    assert len(links) >= 3 * 3  # each row: its claim and the two assumptions it rests on; each point
    for href in set(links):
        where, _, anchor = href.partition("#")
        path = Path(unquote(urlparse(where).path)) if "://" in where else (page.parent / where).resolve()
        assert path.is_file(), href
        assert re.search(rf'id="{re.escape(anchor)}" data-id="[^"]+"', path.read_text(encoding="utf-8")), href
