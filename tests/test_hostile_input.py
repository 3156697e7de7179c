"""Hostile or careless input to the parts around the kernel (what-if tools, scenario and preset files, user
libraries, documents): each test protects one defect found by feeding derive what such a user would, and is named
for it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from libtools import one_error_line, run_cli

LLAMA = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
         "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
         "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}


run = run_cli


def test_margin_says_inconsistent_where_check_does(capsys):
    # with --assume contradicting the scenario, check says inconsistent; margin said "the claim does NOT hold",
    # the words of a refutation
    assume = ["--assume", "scaleout_bandwidth >= 200 GB/s"]
    code, out, err = run(capsys, ["check", "scaleout_viability", "--json", *assume])
    assert json.loads(out)["claims"][0]["verdict"] == "inconsistent", (out, err)
    code, out, err = run(capsys, ["margin", "scaleout_viability", "--vary", "experts_active", *assume])
    assert code == 0, err
    assert "assumptions contradict each other there (derive check: inconsistent)" in out, out
    code, out, err = run(capsys, ["margin", "scaleout_viability", "--vary", "experts_active", "--json", *assume])
    data = json.loads(out)
    assert data["holds_at_value"] is False and data["verdict_at_value"] == "inconsistent", data
    # a plain refutation stays one
    code, out, err = run(capsys, ["margin", "scaleout_viability", "--vary", "experts_active", "--json",
                                  "--set", "experts_active=2"])
    assert json.loads(out)["verdict_at_value"] == "refuted"
    code, out, err = run(capsys, ["check", "scaleout_viability", "--json", "--set", "experts_active=2"])
    assert json.loads(out)["claims"][0]["verdict"] == "refuted"


KATEX_HOSTILE = (
    '"""A library whose LaTeX KaTeX cannot read."""\n'
    "from derive import Claim, Quantity, derived, logic\n"
    "x = Quantity('kx_rate', r'\\unknownmacro{r}', '1/s', 'a rate')\n"
    "n = Quantity('kx_count', 'm', '1', 'a count')\n"
    "PROSE = (r'Prose with \\(\\alsounknown x\\) and then \\(a < b\\).',)\n"
    "t = Claim('kx.claim', title='A claim', statement='It holds.', source=derived('x'),\n"
    "          goal=logic.gt(n.sym / x.sym, 0))\n"
)


def _chromium_path() -> str | None:
    for name in (os.environ.get("DERIVE_CHROMIUM", ""), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def test_site_page_survives_a_formula_katex_cannot_read(tmp_path, capsys):
    # the first formula KaTeX refused threw out of the page script: every later formula stayed raw TeX, and
    # search and the graph were never set up
    browser = _chromium_path()
    if browser is None:
        if os.environ.get("DERIVE_REQUIRE_BROWSER", "") not in ("", "0"):
            pytest.fail("no chromium found and DERIVE_REQUIRE_BROWSER is set")
        pytest.skip("chromium is not installed")
    (tmp_path / "kx.py").write_text(KATEX_HOSTILE)
    out = tmp_path / "site"
    code, _, err = run(capsys, ["build", "--library", str(tmp_path / "kx.py"), "--format", "html", "--out", str(out),
                                "--no-cache"])
    assert code == 0, err
    (page,) = sorted(out.glob("chapter-*.html"))
    proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
                           "--allow-file-access-from-files", "--virtual-time-budget=5000", "--dump-dom",
                           page.as_uri()], capture_output=True, text=True, timeout=180)
    dom = proc.stdout
    assert 'data-derive-ready="1"' in dom and "data-derive-error" not in dom, dom[:2000]
    assert 'class="math math-error"' in dom and "\\alsounknown x" in dom  # shown as its source, marked
    assert 'class="katex"' in dom  # the formula after it (a < b) is rendered


def test_failed_pdf_build_names_the_latex_error_and_writes_nothing(tmp_path, capsys):
    # the error line quoted "==> Fatal error occurred, no output PDF file produced!", not the cause
    if shutil.which(os.environ.get("DERIVE_PDFLATEX") or "pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    (tmp_path / "kx.py").write_text(KATEX_HOSTILE)
    out = tmp_path / "paper"
    out.mkdir()
    (out / "mine.txt").write_text("kept")
    code, _, err = run(capsys, ["build", "--library", str(tmp_path / "kx.py"), "--format", "md,pdf", "--out", str(out),
                                "--no-cache"])
    one_error_line(code, err)
    assert "Undefined control sequence" in err and "alsounknown" in err, err
    assert "Fatal error" not in err, err
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]  # no half-written build


def test_file_names_and_sources_with_control_characters_stay_on_one_line(tmp_path, capsys):
    # a config file named "a\n\\typeout{x}.json" split the scenario's name over two lines on the terminal and in
    # the documents (a carriage return could rewrite a line); a scenario file's source could hold ESC sequences
    weird = tmp_path / "a\n\\typeout{x}\r.json"
    weird.write_text(json.dumps(LLAMA))
    code, out, err = run(capsys, ["check", "pipeline_neutrality", "--model", str(weird)])
    assert code == 0, err
    assert "\r" not in out + err
    assert "scenario lecture+a\\n\\typeout{x}\\r.json: 1 proved" in out, out
    scenario = tmp_path / "sc\rproved.toml"
    scenario.write_text('[values.hbm_bandwidth]\nvalue = "3 TB/s"\nsource = "me\\r\\u001b[31mRED\\nline2"\n'
                        'note = "n\\nx"\n')
    import derive

    sc = derive.scenario(derive.load(), base=str(scenario))
    v = sc.values["hbm_bandwidth"]
    assert (v.source, v.note) == ("me\\r\\x1b[31mRED\\nline2", "n\\nx")
    assert sc.name == "sc\\rproved"


@pytest.mark.parametrize("vary", ["batch=1 seq:1e400 seq:3", "batch=1e-400 seq:1 seq:3"])
def test_sweep_range_beyond_a_float_says_so(capsys, vary):
    # 1e400 became inf and the error said "need LO <= HI"; 1e-400 became 0 and it said the range "starts at 0"
    code, out, err = run(capsys, ["sweep", "critical_batch", "--vary", vary])
    one_error_line(code, err)
    assert "beyond the range of a float" in err and "LO <= HI" not in err and "starts at 0" not in err, err
    assert "e+" not in err


def test_numeric_sweep_leaves_a_claim_empty_where_its_hypotheses_fail(capsys):
    # the claim column read 0 ("does not hold") where the claim's hypotheses fail: the check says inconsistent
    # there (an instance claim) or proved (a general claim, which says nothing there), never refuted
    import math

    import derive
    from derive.whatif.sweep import resolve_target, sweep_presets

    assume = ["--assume", "scaleout_bandwidth >= 200 GB/s"]
    code, out, err = run(capsys, ["sweep", "scaleout_viability", "--vary", "experts_active=1:12:4", *assume])
    assert code == 0, err
    rows = [line.split(",") for line in out.splitlines()[1:]]
    assert rows and all(r[1] == "" for r in rows), out
    assert "hypotheses fail there" in err
    code, out, _ = run(capsys, ["check", "scaleout_viability", "--json", "--set", "experts_active=4", *assume])
    assert json.loads(out)["claims"][0]["verdict"] == "inconsistent"
    # a general claim under a chip whose ratio is below its hypothesis R >= 300: empty, and the check proves it
    lib = derive.load()
    target = resolve_target(lib, "unbatched_cost_penalty_thousandfold")
    result = sweep_presets(lib, [target], pairs=[("a100-80gb", "llama3-70b")])
    # the claim's field is empty; the feasible column after it is the pair's feasibility, a separate question
    assert result.columns[-1] == "feasible" and math.isnan(result.data[2][0])
    assert result.to_csv().splitlines()[1].startswith("a100-80gb,llama3-70b,,")
    code, out, _ = run(capsys, ["check", "unbatched_cost_penalty_thousandfold", "--json", "--hardware", "a100-80gb",
                                "--model", "llama3-70b"])
    assert json.loads(out)["claims"][0]["verdict"] == "proved"


@pytest.mark.parametrize(("literal", "words"), [("1e400", "TOML read it as inf"), ("inf", "TOML read it as inf"),
                                                ("nan", "TOML read it as nan")])
def test_scenario_toml_number_beyond_a_float_is_named_as_written(tmp_path, capsys, literal, words):
    # value = 1e400 said "cannot read value 'inf'": a value the user never wrote
    (tmp_path / "s.toml").write_text(f'[values.hbm_bandwidth]\nvalue = {literal}\nsource = "me"\n')
    code, out, err = run(capsys, ["eval", "hbm_bandwidth", "--scenario", str(tmp_path / "s.toml")])
    one_error_line(code, err)
    assert "values.hbm_bandwidth.value is not a finite number" in err and words in err, err


def test_pdf_strings_keep_backslash_caret_and_tilde():
    # a title's "\end{document}" read "/end{document}" in bookmarks, "^" vanished, and "~" (also what "≈" becomes)
    # read "-": "≈ 2,400" turned into "- 2,400"
    from derive.documents.view import pdf_text

    text = pdf_text("a \\end{document} x^2 ~5 ≈ 2,400")
    assert text == ("a \\textbackslash{}end\\{document\\} x\\textasciicircum{}2 \\textasciitilde{}5 "
                    "\\textasciitilde{} 2,400"), text


def _chip_library(tmp_path):
    lib = tmp_path / "chips"
    (lib / "presets" / "hardware").mkdir(parents=True)
    (lib / "chips.py").write_text('PRESET_DIRS = ("presets",)\n')
    (lib / "presets" / "hardware" / "datey.toml").write_text(
        'name = "datey"\ntitle = "T\\u001b[31mRED\\rX"\n[values.flops]\nvalue = "1 PFLOP/s"\n'
        'source = "me\\u001b[2J"\nas_of = 2024-01-01\n')
    return ["--library", "lecture", "--library", str(lib)]


def test_toml_date_in_a_preset_reaches_json_as_text(tmp_path, capsys):
    # as_of = 2024-01-01 (a TOML date, not a string) made every --json output and the build an internal error
    libs = _chip_library(tmp_path)
    code, out, err = run(capsys, ["eval", "flops", "--json", "--hardware", "datey", *libs])
    assert code == 0, err
    code, out, err = run(capsys, ["check", "pipeline_neutrality", "--json", "--hardware", "datey", *libs])
    assert code == 0, err
    assert "2024-01-01" in out
    code, out, err = run(capsys, ["presets", "--json", *libs])
    assert code == 0, err
    (row,) = [r for r in json.loads(out)["hardware"] if r["name"] == "datey"]
    assert row["values"]["flops"]["as_of"] == "2024-01-01"


def test_presets_listing_escapes_control_characters_and_shows_no_none(tmp_path, capsys):
    # a preset's title and source went to the terminal raw (ESC sequences, carriage returns), and a value without
    # as_of printed "(None)"
    libs = _chip_library(tmp_path)
    (tmp_path / "chips" / "presets" / "hardware" / "undated.toml").write_text(
        'name = "undated"\n[values.flops]\nvalue = "1 PFLOP/s"\nsource = "me"\n')
    code, out, err = run(capsys, ["presets", *libs])
    assert code == 0, err
    assert "\x1b" not in out and "\r" not in out and "(None)" not in out and "None" not in out
    assert "T\\x1b[31mRED\\rX" in out and "me\\x1b[2J (2024-01-01)" in out


def test_library_file_name_with_html_special_characters_gives_safe_chapter_names(tmp_path, capsys):
    # a library file 'e"v<il> x.py' gave the page chapter-derive_user_e"v<il> x.html and the Markdown anchor
    # <a id="topic-derive_user_e"v<il> x"></a>, which breaks out of its attribute; a '#' would break every link
    lib = tmp_path / 'e"v<il> #x.py'
    lib.write_text("from derive import Claim, Quantity, derived, logic\n"
                   "n = Quantity('q_count', 'm', '1', 'a count')\n"
                   "t = Claim('q.claim', title='t', statement='s', source=derived('x'), goal=logic.gt(n.sym, 0))\n")
    out = tmp_path / "site"
    code, _, err = run(capsys, ["build", "--library", str(lib), "--format", "html,md", "--out", str(out), "--no-cache"])
    assert code == 0, err
    (page,) = [p.name for p in out.glob("chapter-*.html")]
    assert re.fullmatch(r"chapter-derive_user_\w+\.html", page, flags=re.ASCII), page
    md = (out / "derivation.md").read_text()
    assert '"v<il>' not in md and re.search(r'<a id="topic-derive_user_\w+"></a>', md, flags=re.ASCII)


def test_margin_of_a_general_claim_does_not_claim_the_checks_verdict(capsys):
    # a general claim whose hypotheses fail at the scenario's values (R >= 300 on an A100) was said to be
    # "inconsistent" for derive check, which proves it (for every value)
    argv = ["unbatched_cost_penalty_thousandfold", "--hardware", "a100-80gb", "--model", "llama3-70b"]
    code, out, err = run(capsys, ["margin", *argv, "--vary", "experts_active"])
    assert code == 0, err
    assert "a general claim says nothing there" in out and "derive check: inconsistent" not in out, out
    code, out, err = run(capsys, ["margin", *argv, "--vary", "experts_active", "--json"])
    assert json.loads(out)["verdict_at_value"] is None
    code, out, err = run(capsys, ["check", *argv, "--json"])
    assert json.loads(out)["claims"][0]["verdict"] == "proved"


def test_diff_markdown_shows_a_title_verbatim(tmp_path, capsys):
    # a title's <b>x</b> went into the Markdown table as raw HTML, *s* as emphasis, and | became /
    (tmp_path / "ev.py").write_text(
        "from derive import Claim, Quantity, derived, logic\n"
        "x = Quantity('ev_rate', 'r', '1/s', 'rate')\n"
        "c = Claim('ev.fast', title=r'Fast | pipe <b>x</b> *s* $5', statement='s', source=derived('x'),\n"
        "          goal=logic.gt(x.sym, 1), instance=True)\n")
    lib = ["--library", str(tmp_path / "ev.py")]
    code, out, err = run(capsys, ["diff", *lib, "--si", "--set", "ev_rate=0.5", "--format", "md"])
    assert code in (0, 1), err
    (row,) = [line for line in out.splitlines() if line.startswith("| `ev.fast`")]
    assert r"(Fast \| pipe \<b\>x\</b\> \*s\* <span>$</span>5)" in row, row


# found by feeding derive damaged files and odd paths (session of 2026-11-30) -----------------------------------

PLANTED = os.path.join(os.path.dirname(__file__), "..", "examples", "audit", "planted.csv")


def test_audit_out_refuses_a_fifo_and_writes_through_a_link(tmp_path, capsys):
    # the atomic write renamed its temporary file over whatever the path was: a FIFO, a device, a link
    fifo = tmp_path / "ff.csv"
    os.mkfifo(fifo)
    code, out, err = run(capsys, ["audit", PLANTED, "--out", str(fifo)])
    one_error_line(code, err)
    assert "not a regular file" in err and fifo.is_fifo()
    real, link = tmp_path / "real.csv", tmp_path / "link.csv"
    real.write_text("old\n")
    link.symlink_to(real.name)
    code, out, err = run(capsys, ["audit", PLANTED, "--out", str(link)])
    assert code in (0, 1), err
    assert link.is_symlink() and real.read_text().startswith("id,model,hardware")
    assert real.stat().st_mode & 0o044  # the usual mode of a user's file, not the temporary file's 0600


@pytest.mark.parametrize("argv", [["audit", PLANTED, "--out", ""], ["sweep", "step_time", "--vary", "batch=1:10:3",
                                                                     "--out", ""],
                                  ["sweep", "step_time", "--vary", "batch=1:10:3", "--figure", ""],
                                  ["check", "batch_optimum", "--certificates", ""], ["eval", "batch", "--unit", ""],
                                  ["audit", PLANTED, "--top", "0"]])
def test_an_empty_output_name_or_no_rows_to_show_is_refused(capsys, argv):
    code, out, err = run(capsys, argv)
    one_error_line(code, err)


def test_a_fifo_beside_a_scenario_file_does_not_hang_the_check(tmp_path):
    # the output cache digested every *.toml beside the scenario file, and opening a FIFO waits for a writer
    (tmp_path / "mine.toml").write_text('[values.batch]\nvalue = "64 seq"\nsource = "ours"\n')
    os.mkfifo(tmp_path / "zz.toml")
    proc = subprocess.run([sys.executable, "-m", "derive", "check", "batch_optimum", "--scenario",
                           str(tmp_path / "mine.toml")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr


def test_ledger_since_reads_no_fifo_or_device(tmp_path, capsys):
    fifo = tmp_path / "f.json"
    os.mkfifo(fifo)
    for path in (str(fifo), "/dev/zero"):
        code, out, err = run(capsys, ["ledger", "--since", path])
        one_error_line(code, err)
        assert "not a regular file" in err


@pytest.mark.parametrize(("quant", "words"), [
    ({"quant_method": "bitsandbytes", "load_in_4bit": "no"}, "must be true or false"),
    ({"quant_method": "compressed-tensors", "config_groups": {"g": [1]}}, "config group must be an object"),
    ({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": [1]}}}, "config group must be")])
def test_a_quantization_field_of_the_wrong_type_is_refused_not_read_loosely(tmp_path, capsys, quant, words):
    # "load_in_4bit": "no" read as 4-bit weights (a string is true), a group that is a list as no group at all
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**LLAMA, "quantization_config": quant}))
    code, out, err = run(capsys, ["eval", "bytes_per_param", "--hardware", "h100-sxm", "--model", str(path)])
    one_error_line(code, err)
    assert words in err


@pytest.mark.parametrize("cell", ["1e400", "1e999 ms"])
def test_an_audited_number_beyond_a_float_leaves_its_row_unchecked(tmp_path, capsys, cell):
    path = tmp_path / "huge.csv"
    path.write_text(f"id,model,hardware,chips,batch,context,bytes_per_param,tpot\nr,llama3-70b,h100-sxm,8,1,1024,2,"
                    f"{cell}\n")
    code, out, err = run(capsys, ["audit", str(path)])
    assert code == 0 and "internal error" not in err, err
    assert "beyond the audit's floating-point range" in out and "0 impossible, 0 consistent, 1 unchecked" in out


def test_a_jsonl_row_naming_a_column_twice_is_refused(tmp_path, capsys):
    path = tmp_path / "dup.jsonl"
    path.write_text('{"id": "a", "model": "llama3-70b", "hardware": "h100-sxm", "chips": 8, "chips": 4, '
                    '"tpot": "12 ms"}\n')
    code, out, err = run(capsys, ["audit", str(path)])
    one_error_line(code, err)
    assert "'chips' appears twice" in err


@pytest.mark.parametrize("argv", [["eval", "floor(exp(10**7))"], ["eval", "ceil(exp(1000))"],
                                  ["check", "batch_optimum", "--assume", "batch*floor(exp(10**7)) >= 1 seq"]])
def test_rounding_a_number_too_large_is_refused_at_once(capsys, argv):
    # sympy searched millions of digits for floor(exp(10**7)) (no end in sight) or gave up with PrecisionExhausted
    code, out, err = run(capsys, argv)
    one_error_line(code, err)
    assert "too large to round exactly" in err


def test_rounding_a_value_too_large_says_so_where_it_is_evaluated(capsys):
    code, out, err = run(capsys, ["eval", "floor(exp(sparsity))", "--set", "sparsity=10000000"])
    assert code == 0 and "internal error" not in err, err
    assert "is not rounded exactly at the values given" in out
    code, out, err = run(capsys, ["eval", "floor(exp(sparsity))", "--set", "sparsity=100"])
    assert "2.688e43" in out


@pytest.mark.parametrize("inner", [[1], {"a": 1}])
def test_a_multimodal_config_whose_inner_type_is_not_text_is_refused(tmp_path, capsys, inner):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "mistral3", "text_config": {"model_type": inner}}))
    code, out, err = run(capsys, ["eval", "step_time", "--hardware", "h100-sxm", "--model", str(path)])
    one_error_line(code, err)
    assert "text_config.model_type' must be text" in err and "config reader failed" not in err


def test_a_hub_cache_ref_that_is_not_text_falls_back_to_the_snapshots(tmp_path, capsys, monkeypatch):
    repo = tmp_path / "models--a--b"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_bytes(b"\xff\xfe")
    (repo / "snapshots" / "abc").mkdir(parents=True)
    (repo / "snapshots" / "abc" / "config.json").write_text(json.dumps(LLAMA))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    code, out, err = run(capsys, ["eval", "params_total", "--model", "a/b"])
    assert code == 0 and "internal error" not in err, err
    assert "params_total" in out


def test_recheck_of_a_damaged_certificate_folder(tmp_path, capsys):
    code, out, err = run(capsys, ["check", "batch_optimum", "chinchilla_equalisation_at_chinchilla_budget",
                                  "--certificates", str(tmp_path / "c")])
    assert code == 0, err
    index = json.loads((tmp_path / "c" / "index.json").read_text())
    by_kind = {e["kind"]: e["file"] for e in index["certificates"]}
    (tmp_path / "c" / by_kind["interval"]).write_text("[1, 2, 3]")  # JSON, not an interval certificate
    (tmp_path / "c" / by_kind["smt2"]).write_text("(assert (= 1 (")  # cut short: cvc5 warned on the terminal
    code, out, err = run(capsys, ["recheck", str(tmp_path / "c")])
    assert code == 0 and err.count("\n") <= 1 and "internal error" not in err, err
    assert "0 confirmed, 2 not confirmed, 0 disagrees" in out
    (tmp_path / "c" / by_kind["smt2"]).write_bytes(b"\xff\xfe")
    code, out, err = run(capsys, ["recheck", str(tmp_path / "c")])
    one_error_line(code, err)
    assert "not UTF-8" in err
    (tmp_path / "c" / by_kind["smt2"]).unlink()
    os.mkfifo(tmp_path / "c" / by_kind["smt2"])
    code, out, err = run(capsys, ["recheck", str(tmp_path / "c")])
    one_error_line(code, err)
    assert "not a regular file" in err


@pytest.mark.parametrize("source", ["3", '""'])
def test_a_scenario_value_without_a_source_in_words_is_refused(tmp_path, capsys, source):
    path = tmp_path / "mine.toml"
    path.write_text(f'[values.batch]\nvalue = "64 seq"\nsource = {source}\n')
    code, out, err = run(capsys, ["eval", "batch", "--scenario", str(path)])
    one_error_line(code, err)
    assert "source must be text" in err


def test_an_unknown_chip_named_in_a_scenario_file_is_said_to_be_the_files(tmp_path, capsys):
    path = tmp_path / "mine.toml"
    path.write_text('hardware = "h100-sx"\n')
    code, out, err = run(capsys, ["eval", "step_time", "--scenario", str(path)])
    one_error_line(code, err)
    assert f"(in {path}: hardware)" in err and "did you mean h100-sxm" in err


def test_an_audit_header_without_a_line_end_is_refused_not_read_to_the_end():
    # `derive audit - < /dev/zero` read one endless line into memory
    import io

    from derive.whatif.audit import MAX_HEADER_CHARS, AuditInputError, read_rows

    with pytest.raises(AuditInputError, match="header line is longer"):
        read_rows("-", stdin=io.StringIO("\0" * (MAX_HEADER_CHARS + 10)))


# found by writing hostile user libraries (session of 2026-11-30) --------------------------------------------

HEAD = ("from derive import Claim, Quantity, Definition, derived, logic\nS = derived('t')\n"
        "x = Quantity('xr', 'x', '1', 'a real', domain='real')\nX = x.sym\n")


@pytest.mark.parametrize(("body", "words"), [
    ("raise BaseException('x')\n", "BaseException: x"),
    ("raise GeneratorExit()\n", "GeneratorExit"),
    ("class E(Exception):\n    def __str__(self):\n        raise RuntimeError('nested')\nraise E()\n",
     "its message cannot be printed"),
    ("c = Claim('b.c', title='t', statement='s', source=S, goal=logic.gt(X, 0), forall=(X,))\n", "forall holds xr"),
    ("q = Quantity('qq', 'q', '1', 'm', value=2, source=S)\n"
     "d = Definition('b.d', title='t', statement='s', source=S, defines=q, expr=X + 1)\n", "is a constant (2)"),
    # accepted before: tags read letter by letter, a number as a title, text as a flag, a time shown in bytes,
    # LaTeX that no .tex would compile
    ("c = Claim('b.c', title='t', statement='s', source=S, goal=logic.gt(X, 0), tags='inconsistency')\n",
     "tags is a tuple of words"),
    ("c = Claim('b.c', title=5, statement='s', source=S, goal=logic.gt(X, 0))\n", "title must be text"),
    ("n = Quantity('nn', 'n', '1', 'a count', integer='yes')\n", "integer must be True or False"),
    ("t = Quantity('tt', 't', 's', 'a time', display_unit='byte')\n", "does not measure s"),
    ("t = Quantity('tt', '\\\\frac{', 's', 'a time')\n", "unbalanced braces")])
def test_a_library_that_fails_in_any_way_is_one_line(tmp_path, capsys, body, words):
    # a BaseException was a traceback, an unprintable exception an internal error, forall=(a symbol,) an internal
    # error in the verdict, and a constant with a definition a refuted restatement of that definition
    path = tmp_path / "mine.py"
    path.write_text(HEAD + body)
    code, out, err = run(capsys, ["check", "--library", str(path)])
    one_error_line(code, err)
    assert words in err


def test_a_claim_of_shared_parts_is_refused_by_its_size_at_once(tmp_path, capsys):
    # e*(e + 1) nested 24 deep: 50 distinct parts, a tree of 2**24 nodes; the node budget refused it, then listing
    # the claim's inputs walked the whole tree (sympy's free_symbols and atoms read shared parts again)
    path = tmp_path / "mine.py"
    path.write_text(HEAD + "e = X\nfor i in range(24):\n    e = e * (e + 1)\n"
                           "c = Claim('b.c', title='t', statement='s', source=S, goal=logic.gt(e, -1))\n")
    code, out, err = run(capsys, ["check", "--library", str(path)])
    assert code == 1, err
    assert "too large for the engines" in out
