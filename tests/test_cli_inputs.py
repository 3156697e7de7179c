"""Bad input on the command line, as a new or hostile user types it: each case is exit code 2 and exactly
one stderr line that says what is wrong, where, and a hint (never a traceback, never a silent default).
A second table holds inputs that used to be misread or shown badly and must now work and read well."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest

from derive.cli import main

GOOD = (
    "from derive import Claim, Quantity, derived, logic\n"
    "count = Quantity('widget_count', 'm', '1', 'widgets in one batch')\n"
    "c = Claim('mine.positive', title='t', statement='s', source=derived('x'), goal=logic.ge(count.sym, 0))\n"
)
# files a case may point at, written into the test's own folder (the command runs there)
FILES = {
    "top_level.toml": 'hbm_bandwidth = "3 TB/s"\n',
    "unknown_table.toml": '[values.hbm_bandwidth]\nvalue = "3 TB/s"\nsource = "me"\n[valeus.x]\n',
    "value_typo.toml": '[values.hbm_bandwidth]\nvalu = "3 TB/s"\nsource = "me"\n',
    "value_bool.toml": '[values.hbm_bandwidth]\nvalue = true\nsource = "me"\n',
    "value_array.toml": '[values.hbm_bandwidth]\nvalue = [1, 2]\nsource = "me"\n',
    "value_flat.toml": '[values]\nhbm_bandwidth = "3 TB/s"\n',
    "name_number.toml": 'name = 3\n',
    "bignum.jsonl": '{"id": "r1", "model": "llama3-70b", "hardware": "h100-sxm", "chips": 8, "tpot": 1' + "0" * 5000
                    + "}\n",
    "notes_mixed.toml": 'notes = ["fine", 2]\n',
    "as_of_number.toml": 'as_of = 2024\n',
    "as_of_time.toml": 'as_of = 07:32:00\n',
    "bare_bandwidth.toml": '[values.hbm_bandwidth]\nvalue = "6"\nsource = "me"\n',
    "bare_bandwidth_number.toml": '[values.hbm_bandwidth]\nvalue = 6e12\nsource = "me"\n',
    "ledger_inf.json": '{"entries": [{"id": "a", "ratio": 1e999}]}',
    "ledger_escape.json": '{"entries": [{"id": "x\\u001b[2J\\ny", "ratio": 1.0}]}',
    "note_number.toml": '[values.batch]\nvalue = "64 seq"\nsource = "me"\nnote = 5\n',
    "date_text.toml": '[values.batch]\nvalue = "64 seq"\nsource = "me"\ndate = 12\n',
    "value_extra.toml": '[values.hbm_bandwidth]\nvalue = "3 TB/s"\nsource = "me"\nunit = "TB/s"\n',
    "ok.toml": '[values.hbm_bandwidth]\nvalue = "3 TB/s"\nsource = "me"\n',
    "afile": "not a folder\n",
    "good.py": GOOD,
    "badpresets/mine.py": GOOD,
    "badpresets/presets/models/flat.toml": "[values]\nflops = 5\n",
    "empty.py": "",
    "uses_lecture.py": (
        "import theorems.roofline as r\n"
        "from derive import Claim, derived, logic\n"
        "c = Claim('mine.x', title='t', statement='s', source=derived('x'), goal=logic.gt(r.flops.sym, 0))\n"
    ),
    "bom.toml": '\ufeff[values.hbm_bandwidth]\nvalue = "3 TB/s"\nsource = "saved on Windows"\n',
    "ledgerlib/mine.py": (
        "from derive import Claim, Quantity, derived, logic\n"
        "rate = Quantity('widget_rate', 'r', '1/s', 'widgets made per second')\n"
        "count = Quantity('widget_count', 'm', '1', 'widgets in one batch')\n"
        "took = Quantity('measured_time', 't', 's', 'measured time of a batch')\n"
        "floor = Claim('mine.floor', title='t', statement='s', source=derived('x'),\n"
        "              goal=logic.ge(took.sym, count.sym / rate.sym))\n"
    ),
    "ledgerlib/presets/ledger/l.toml": (
        'set = ["widget_count=1", "widget_rate=1/s"]\n[[entry]]\nid = "a"\ncheck = "mine.floor"\n'
        'measured = "measured_time"\nvalue = "3 s"\nsource = "s"\nas_of = "2026-01-01"\nset = ["widget_count=2"]\n'
    ),
    "json/__init__.py": GOOD,
    # a limit far below derive's own, yet above the frames already on the stack (more of them under a test runner's
    # worker process), so that the library itself loads
    "recursion.py": "import sys\nframe, depth = sys._getframe(), 0\nwhile frame is not None:\n"
                    "    frame, depth = frame.f_back, depth + 1\nsys.setrecursionlimit(depth + 60)\n",
    # a keyword derive's Definition does not take, and a library that fails on its own line: the error names the
    # file and line, and for a declaration's keyword the keywords it takes
    "wrongkw.py": (
        "from derive import Definition, Quantity, derived\n"
        "t = Quantity('widget_time', 't', 's', 'time for one widget')\n"
        "d = Definition('mine.t', title='t', statement='s', source=derived('x'), name='widget_time', expr=1)\n"
    ),
    "mylib/fails.py": "x = 1\ny = {}['missing']\n",
    "spoof.py": (  # a carriage return in a title rewrote the terminal line of a refuted claim as "proved"
        "from derive import Claim, Quantity, derived, logic\n"
        "count = Quantity('widget_count', 'm', '1', 'widgets in one batch')\n"
        "c = Claim('mine.c', title='t\\r  proved       mine.c  fine', statement='s', source=derived('x'),\n"
        "          goal=logic.le(count.sym, 0))\n"
    ),
    "keyword.py": (  # a decay rate named lambda could be set, but no expression could name it
        "from derive import Claim, Quantity, derived, logic\n"
        "lam = Quantity('lambda', 'l', '1', 'decay rate')\n"
        "c = Claim('mine.c', title='t', statement='s', source=derived('x'), instance=True,\n"
        "          goal=logic.le(lam.sym, 10))\n"
    ),
    "undef.py": (
        "import sympy as sp\n"
        "from derive import Claim, Quantity, derived, logic\n"
        "count = Quantity('widget_count', 'm', '1', 'widgets in one batch')\n"
        "c = Claim('mine.u', title='t', statement='s', source=derived('x'), instance=True,\n"
        "          goal=logic.ge(sp.Function('u')(count.sym), 0))\n"
    ),
}
FOLDERS = ("empty_scenario", "no_config", "afolder")

BAD = [
    # --set: the hint's example is the value the user meant, never 3.35e+12 TB/s
    (["eval", "hbm_bandwidth", "--set", "hbm_bandwidth=3.35e12"], ["has no unit", "like 3.35 TB/s", "--si"]),
    (["eval", "hbm_bandwidth", "--set", "hbm_bandwidth=3.35"], ["has no unit", "like 3.35 TB/s"]),
    (["eval", "context", "--set", "context=128k"], ["has no unit", "like 128k token/seq"]),
    (["eval", "hbm_bandwidth", "--set", "hbm_bandwidth=-1 TB/s"],
     ["must be positive", "got -1 TB/s", "in --set hbm_bandwidth=-1 TB/s"]),
    (["eval", "batch", "--set", "batch=0 seq"], ["must be positive", "got 0 seq"]),
    (["eval", "hbm_bandwidth", "--set", "hbm_bandwith=3 TB/s"],
     ["unknown quantity 'hbm_bandwith'", "in --set hbm_bandwith=3 TB/s", "did you mean hbm_bandwidth"]),
    (["eval", "hbm_capacity", "--set", "hbm_capacity=80 pB"], ["sub-unit prefixes", "did you mean PB (peta)?"]),
    (["eval", "flops", "--set", "flops_per_param_token=3"], ["constant of the library", "cannot be set"]),
    # empty option values are errors, not the default (an empty --library used to import the current folder)
    (["eval", "hbm_bandwidth", "--hardware", ""], ["--hardware is empty"]),
    (["eval", "hbm_bandwidth", "--model", " "], ["--model is empty"]),
    (["eval", "hbm_bandwidth", "--scenario", ""], ["--scenario is empty"]),
    (["check", "--library", ""], ["--library is empty"]),
    (["eval", "hbm_bandwidth", "--hardware", "h100-sxm.toml"], ["preset name, not a file", "derive presets"]),
    (["eval", "params_total", "--model", "no_config"], ["no_config has no config.json", "in --model"]),
    (["eval", "params_total", "--model", "/dev/null"], ["/dev/null is not a regular file", "in --model"]),
    # scenario files: what would have been ignored silently is named
    (["eval", "hbm_bandwidth", "--scenario", "top_level.toml"], ["'hbm_bandwidth' is at the top level",
                                                                 "[values.hbm_bandwidth]"]),
    (["eval", "hbm_bandwidth", "--scenario", "unknown_table.toml"], ["unknown key 'valeus'", "did you mean values"]),
    (["eval", "hbm_bandwidth", "--scenario", "value_typo.toml"], ["unknown key 'valu'", "did you mean value"]),
    (["eval", "hbm_bandwidth", "--scenario", "value_extra.toml"], ["unknown key 'unit'", "value_extra.toml"]),
    (["eval", "hbm_bandwidth", "--scenario", "value_bool.toml"], ["got the boolean true", "value_bool.toml"]),
    (["eval", "hbm_bandwidth", "--scenario", "value_array.toml"], ["got an array"]),
    (["eval", "hbm_bandwidth", "--scenario", "value_flat.toml"], ["must be a table", "[values.hbm_bandwidth]"]),
    (["eval", "hbm_bandwidth", "--scenario", "empty_scenario"], ["has no .toml files"]),
    # what describes a scenario file is text (a date for as_of): `name = 3` was accepted and never read
    (["eval", "hbm_bandwidth", "--scenario", "name_number.toml"], ["`name` must be text, got a number",
                                                                   "name_number.toml"]),
    (["eval", "hbm_bandwidth", "--scenario", "notes_mixed.toml"], ["`notes` must be text", 'notes = ["...",']),
    (["eval", "hbm_bandwidth", "--scenario", "as_of_number.toml"], ["as_of must be a date", "as_of_number.toml"]),
    # a bare number for a quantity with a unit was read in SI silently (6 byte/s: a step of 51,500 days)
    (["eval", "hbm_bandwidth", "--scenario", "bare_bandwidth.toml"],
     ["values.hbm_bandwidth.value '6' has no unit but hbm_bandwidth is byte/s", 'write value = "6 TB/s"']),
    (["eval", "hbm_bandwidth", "--scenario", "bare_bandwidth_number.toml"], ["has no unit", '"6 TB/s"']),
    (["eval", "hbm_bandwidth", "--scenario", "as_of_time.toml"], ["as_of must be a date", "got a time of day"]),
    (["eval", "batch", "--scenario", "note_number.toml"], ["values.batch.note must be text, got a number",
                                                           'note = "..."']),
    (["eval", "batch", "--scenario", "date_text.toml"], ["values.batch.date must be a date"]),
    # a cache folder that cannot be one turned the cache off without a word
    (["check", "batch_optimum", "--cache-dir", "afile"], ["--cache-dir", "'afile' is not a folder"]),
    (["cache", "info", "--cache-dir", "afile"], ["--cache-dir", "'afile' is not a folder"]),
    (["check", "batch_optimum", "--cache-dir", ""], ["--cache-dir", "is empty"]),
    (["check", "batch_optimum", "--cache-dir", "afile/sub"], ["runs through 'afile', which is not a folder"]),
    # a JSON number past Python's 4,300 digits was an internal error
    (["audit", "bignum.jsonl"], ["line 1: not a JSON object", "4300 digits"]),
    (["diff", "--against", "nosuch"], ["unknown scenario 'nosuch'", "in --against", "known: lecture"]),
    (["diff", "--against", ""], ["--against is empty"]),
    # --assume: a relation that constrains nothing, or leaves no value
    (["check", "batch_optimum", "--assume", "1 < 0"], ["names no quantity"]),
    (["check", "batch_optimum", "--assume", "context in [1M, 128k] token/seq"],
     ["leaves context no value", "low end first"]),
    (["check", "batch_optimum", "--assume", "context > 5 token/seq and context < 3 token/seq"], ["no value"]),
    (["check", "batch_optimum", "--assume", "context in (1M, 1M) token/seq"], ["no value"]),
    # names of the wrong kind
    (["eval", "batch_optimum"], ["'batch_optimum' is a claim (batching.batch_optimum), not a value",
                                 "derive show batching.batch_optimum"]),
    (["eval", "batching.batch_optimum"], ["is a claim", "derive check batching.batch_optimum"]),
    (["eval", "deepseek_v3_params"], ["is an assumption"]),
    (["eval", "batching.nosuch"], ["unknown id 'batching.nosuch'"]),
    (["check", "deepseek_v3_params"], ["is an assumption, not a claim"]),
    (["margin", "deepseek_v3_params", "--vary", "flops"], ["is an assumption, not a claim"]),
    (["check", "critical_batch"], ["is a definition, not a claim"]),
    (["check", "hbm_bandwidth"], ["'hbm_bandwidth' is a quantity, not a declaration", "derive eval hbm_bandwidth"]),
    (["export", "hbm_bandwidth"], ["is a quantity, not a declaration"]),
    (["list", "--topic", "nosuch"], ["unknown topic 'nosuch'", "known:", "batching"]),
    (["list", "--topic", ""], ["unknown topic ''", "known:"]),  # was every topic
    # a float past its range: int * 0.30103 overflowed (an internal error), the ratio inf a Fraction error
    (["eval", "exp(exp(exp(exp(2))))"], ["about 703 digits", "beyond the display budget"]),
    (["ledger", "--since", "ledger_inf.json"], ["entry 0's ratio inf is not a finite ratio", "in --since"]),
    (["list", "--quantities", "--topic", ""], ["unknown topic ''"]),
    # libraries
    (["check", "--library", "uses_lecture.py"], ["symbol 'flops' is not a declared quantity",
                                                 "--library lecture --library uses_lecture.py"]),
    (["check", "--library", "servng"], ["no library named 'servng'", "did you mean serving?", "(lecture, serving)"]),
    (["check", "--library", "json"], ["library package 'json' has the name of a module", "rename the folder"]),
    ([], ["give a command: list, show, check", "derive --help"]),
    (["chek"], ["unknown command 'chek'", "did you mean check?"]),
    (["eval", "--unitt", "ms", "flops"], ["unrecognized argument: --unitt", "did you mean --unit?"]),
    (["eval", "-flops"], ["goes after --, like derive eval -- -flops"]),
    (["eval", "flops", "-hbm_bandwidth"], ["goes after --"]),
    (["check", "-x"], ["unrecognized argument: -x", "derive check -- -x"]),
    (["presets", "--library", "badpresets"], ["values.flops must be a table", "flat.toml"]),
    (["eval", "flops", "--measurement", "stas00-mamf"], ["--measurement needs --hardware"]),
    # eval's own checks
    (["eval", "sqrt(hbm_bandwidth)"], ["which no unit expresses"]),
    (["eval", "hbm_bandwidth + 5"], ["5 is a plain number but hbm_bandwidth is byte/s", "give the number a unit"]),
    (["eval", "max(1, 2 TB/s)"], ["dimension mismatch in max"]),
    (["eval", "hbm_bandwidth", "--unit", "TFLOP/s"], ["cannot express hbm_bandwidth", "in --unit", "like TB/s"]),
    (["eval", "hbm_bandwidth", "--unit", "0 ms"], ["a number ('0') inside unit '0 ms' (in --unit)"]),
    (["eval", "hbm_bandwidth", "--unit", "ms**0.5**2"], ["cannot read unit", "(in --unit)"]),
    # options out of range
    (["check", "batch_optimum", "--rlimit", "0"], ["--rlimit", "at least 1"]),
    (["check", "batch_optimum", "--rlimit", "-5"], ["--rlimit", "at least 1"]),
    (["margin", "batch_optimum_lecture", "--vary", "flops", "--grid", "5"], ["--grid", "two --vary"]),
    (["margin", "hw_ratio_300", "--vary", "sqrt(flops)"], ["which no unit expresses"]),
    # a sweep's range given to a margin read "lambdas, slices and ':=' are not allowed"
    (["margin", "batch_optimum_lecture", "--vary", "batch=1:100"], ["--vary batch=1:100 gives a range",
                                                                    "; --vary batch (derive sweep for a grid)"]),
    (["margin", "batch_optimum_lecture", "--vary", "flops", "--vary", "hbm_bandwidth", "--grid", "1"],
     ["between 2 and 4000"]),
    (["sweep", "sqrt(flops)", "--vary", "batch=1 seq:10 seq:3"], ["which no unit expresses", "TARGET sqrt(flops)"]),
    (["sweep", "nosuch", "--vary", "batch=1 seq:10 seq:3"], ["unknown quantity 'nosuch'", "in TARGET nosuch"]),
    (["sweep", "critical_batch", "--vary", "batch=1 seq:10 seq", "--points", "0"], ["--points", "at least 1"]),
    (["sweep", "critical_batch", "--vary", "batch="], ["--vary batch=: nothing after '='"]),  # read as the bare name
    (["sweep", "critical_batch", "--vary", "batch=1 seq:1 seq:3"], ["LO = HI gives one point, not 3"]),
    # a swept range outside the quantity's domain (a claim "held" at batch = -1 seq), an undefined function
    # (lambdify's NameError was an internal error)
    (["sweep", "critical_batch", "--vary", "batch=-1 seq:10 seq:3"], ["batch must be positive", "--vary batch"]),
    (["sweep", "mine.u", "--vary", "widget_count=1:3:3", "--library", "undef.py"], ["function without a definition"]),
    (["check", "--library", "wrongkw.py"], ["unexpected keyword argument 'name'", "(in --library wrongkw.py:3)",
                                            "derive.Definition takes id, title, statement, source, tags, defines, "
                                            "expr, uses, domain"]),
    (["check", "--library", "mylib"], ["could not load library mylib: KeyError: 'missing'",
                                       "(in --library mylib/fails.py:2)"]),
    (["check", "--library", "spoof.py"], ["title contains the control character '\\r'", "plain text"]),
    (["ledger", "--hardware", "nosuch"], ["unknown hardware preset 'nosuch'"]),
    (["ledger", "--figures", "afile"], ["afile is not a folder", "in --figures afile"]),
    (["ledger", "--figures", "afile/x"], ["runs through afile, which is not a folder"]),
    (["ledger", "--figures", ""], ["--figures is empty"]),
    (["build", "--out", "afile/sub"], ["afile/sub runs through afile, which is not a folder"]),
    (["build", "--out", "afile", "--format", "md"], ["afile is not a folder", "in --out afile"]),
    # a missing value names the option that gives it: a model, a chip, else --set
    (["eval", "ep_link_alltoall_time_per_token", "--library", "serving"],
     ["--model NAME or a config.json gives d_model, dispatch_bytes_per_element, moe_layers",
      "--hardware NAME gives scaleup_domain", "--set ep=VALUE"]),
    (["eval", "ep_link_alltoall_time_per_token", "--library", "serving", "--model", "deepseek-v3"],
     ["no value for ep, scaleup_domain;", "--hardware NAME gives scaleup_domain (derive presets); --set ep=VALUE"]),
    (["eval", "ttft_floor", "--library", "serving"], ["add --set prefill_tokens=VALUE or choose a preset"]),
]


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    for name in FOLDERS:
        (tmp_path / name).mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, argv):
    try:
        code = main(list(argv))
    except SystemExit as stop:  # argparse's own errors end the parse
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("argv", "words"), BAD, ids=[" ".join(a) or "(none)" for a, _ in BAD])
def test_bad_input_is_one_line_and_exit_2(workdir, capsys, argv, words):
    code, out, err = run(capsys, argv)
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err and "internal error" not in err, err
    for word in words:
        assert word in err, (word, err)
    assert "e+12" not in err


def test_empty_library_does_not_import_the_current_folder(workdir, capsys):
    (workdir / "canary.py").write_text("open('imported', 'w').close()\n")
    code, _, err = run(capsys, ["check", "--library", ""])
    assert code == 2 and "--library is empty" in err
    assert not (workdir / "imported").exists()


def test_library_cannot_break_the_recursion_limit(workdir, capsys):
    limit = sys.getrecursionlimit()
    code, out, err = run(capsys, ["check", "--library", "recursion.py"])
    assert code == 0, err
    assert sys.getrecursionlimit() == limit


def test_library_given_twice_loads_once(workdir, capsys):
    code, out, err = run(capsys, ["check", "--library", "good.py", "--library", "./good.py"])
    assert code == 0, err
    assert out.count("mine.positive") == 1


def test_library_without_claims_says_so(workdir, capsys):
    code, out, _ = run(capsys, ["check", "--library", "empty.py"])
    assert code == 0
    assert "scenario empty: no claims" in out


def test_check_lists_a_claim_named_twice_once(capsys):
    code, out, _ = run(capsys, ["check", "batch_optimum", "batching.batch_optimum", "--json"])
    assert code == 0
    assert [c["id"] for c in json.loads(out)["claims"]] == ["batching.batch_optimum"]


def test_model_folder_in_the_current_one(workdir, capsys):
    config = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
              "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256}
    (workdir / "my-llama").mkdir()
    (workdir / "my-llama" / "config.json").write_text(json.dumps(config))
    code, out, err = run(capsys, ["eval", "kv_bytes_per_token", "--model", "my-llama"])
    assert code == 0, err
    assert "kv_bytes_per_token" in out and "kB/token" in out


@pytest.mark.parametrize(("value", "shown"), [(1e300, "is 1e300, more than 1,099,511,627,776"),
                                              (10**40, "is 1e40,"), (-(10**30), "got -1e30")])
def test_an_absurd_config_value_reads_short_in_the_error(workdir, capsys, value, shown):
    config = {"model_type": "llama", "hidden_size": value, "num_hidden_layers": 32, "num_attention_heads": 32,
              "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256}
    (workdir / "absurd").mkdir()
    (workdir / "absurd" / "config.json").write_text(json.dumps(config))
    code, _, err = run(capsys, ["eval", "kv_bytes_per_token", "--model", "absurd"])
    assert code == 2 and err.count("\n") == 1, err
    assert "field 'hidden_size'" in err and shown in err and "absurd/config.json" in err, err
    assert len(err) < 200, err  # not 301 digits


def test_pdflatex_that_cannot_run_is_one_line_before_any_proving(workdir, capsys, monkeypatch):
    monkeypatch.setenv("DERIVE_PDFLATEX", str(workdir / "nonexistent"))
    monkeypatch.setattr("derive.checking.checker.Checker.check", lambda *a, **k: pytest.fail("proved first"))
    code, out, err = run(capsys, ["build", "--format", "pdf", "--out", "docs"])
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"pdflatex is not runnable at {workdir / 'nonexistent'}" in err  # what
    assert "(in DERIVE_PDFLATEX)" in err  # where
    assert "install TeX Live" in err and "unset it" in err and "--format md,tex" in err  # what to do
    assert not (workdir / "docs").exists()
    (workdir / "not-executable").write_text("")  # a file that is there but cannot run
    monkeypatch.setenv("DERIVE_PDFLATEX", str(workdir / "not-executable"))
    code, _, err = run(capsys, ["build", "--format", "md,pdf", "--out", "docs"])
    assert code == 2 and "pdflatex is not runnable at" in err, err


def test_picoseconds_are_a_unit(capsys):
    code, out, err = run(capsys, ["eval", "boundary_scaleout_time", "--unit", "ps/token"])
    assert code == 0, err
    assert out.startswith("boundary_scaleout_time ≈ 995.6 ps/token")


def test_margin_varies_an_expression_with_units(capsys):
    code, out, err = run(capsys, ["margin", "hw_ratio_300", "--vary", "flops/1 PFLOP/s", "--no-verify"])
    assert code == 0, err
    assert out.startswith("batching.hw_ratio_300 holds for flops/1 PFLOP/s in [16, 36]")


def test_sweep_notes_a_bare_number_read_in_si_units(workdir, capsys):
    code, out, err = run(capsys, ["sweep", "flops", "--vary", "flops=100:1000:2", "--out", "f.csv"])
    assert code == 0, err
    assert "note: --vary flops: 100, 1000 without a unit read in SI base units (FLOP/s)" in out
    code, out, err = run(capsys, ["sweep", "critical_batch", "--vary", "batch=1:4096:2", "--out", "b.csv"])
    assert code == 0 and "note" not in out  # a count is what a person means: no note


def test_a_rate_reads_per_second(workdir, capsys):
    code, out, _ = run(capsys, ["eval", "widget_count/1 min", "--library", "good.py", "--set", "widget_count=5"])
    assert code == 0
    assert "(exactly (1/12)/s)" in out
    code, _, err = run(capsys, ["eval", "widget_count", "--library", "ledgerlib", "--set", "widget_rate=5"])
    assert code == 2 and "like 5/s" in err


def test_minutes_in_an_expression(capsys):
    code, out, err = run(capsys, ["eval", "train_interval + 1 min"])
    assert code == 0, err
    assert out.startswith("train_interval + 1 min = 60.02 s")
    code, out, err = run(capsys, ["eval", "min(train_interval, 2 min)"])
    assert code == 0 and out.startswith("min(train_interval, 2 min) = 20 ms"), err


def test_a_quantity_named_like_a_python_keyword(workdir, capsys):
    code, out, err = run(capsys, ["eval", "lambda*2", "--library", "keyword.py", "--set", "lambda=3"])
    assert code == 0 and out.startswith("lambda*2 = 6"), err
    code, out, err = run(capsys, ["check", "--library", "keyword.py", "--set", "lambda=3", "--assume",
                                  "lambda in [1, 5] and not lambda > 4"])  # "and" after "]" read as a unit
    assert code == 0 and "proved" in out, err


def test_export_names_each_equation_once(capsys):
    code, out, _ = run(capsys, ["export", "batch_optimum", "batching.batch_optimum"])
    assert code == 0 and out.count(r"\label{eq:batch_optimum}") == 1


def test_price_per_second_reads_per_hour(capsys):
    code, out, _ = run(capsys, ["eval", "chip_price"])
    assert code == 0
    assert out.startswith("chip_price = $2/h\n")


def test_exact_note_of_a_plain_number_has_no_unit_1(capsys):
    code, out, _ = run(capsys, ["eval", "context/critical_context - 1"])
    assert code == 0
    assert "(exactly 5219/925)" in out and " 1)" not in out


def test_explain_shows_prefixes_and_no_unit_1(capsys):
    code, out, _ = run(capsys, ["eval", "memory_time", "--hardware", "h100-sxm", "--model", "llama3-70b", "--explain"])
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert "70.55G param" in lines["params_total"]
    assert "327.7 kB/token" in lines["kv_bytes_per_token"]
    assert lines["chips"].split()[1:3] == ["8", "hardware"]


def test_explain_json_keeps_exact_values(capsys):
    code, out, _ = run(capsys, ["eval", "flops", "--hardware", "h100-sxm", "--explain", "--json"])
    assert code == 0
    row = json.loads(out)["explain"][0]
    assert row["exact"] == "989000000000000" and row["display"] == "989 TFLOP/s"


def test_show_writes_numbers_in_formulas_with_units(capsys):
    code, out, _ = run(capsys, ["show", "rack_capacity_many_tens_tb"])
    assert "formula: chips*hbm_capacity >= 20 TB\n" in out
    code, out, _ = run(capsys, ["show", "hw_ratio_a100"])
    assert "flops == 312 TFLOP/s" in out and "hbm_bandwidth == 2.039 TB/s" in out
    code, out, _ = run(capsys, ["show", "kv_cache_dominance_lecture"])
    assert "kv_bytes_per_token == 5000/3 byte/token" in out  # not rounded where the relation is exact
    code, out, _ = run(capsys, ["show", "hw_ratio_a100", "--json"])
    assert "flops == 312000000000000" in json.loads(out)["hypotheses"]  # JSON keeps the exact form


def test_a_byte_order_mark_is_not_an_error(workdir, capsys):
    code, out, err = run(capsys, ["eval", "hbm_bandwidth", "--scenario", "bom.toml"])
    assert code == 0, err
    assert out.startswith("hbm_bandwidth = 3 TB/s\n")


def test_a_later_set_overrides_and_says_so(capsys):
    code, out, err = run(capsys, ["eval", "hbm_bandwidth", "--set", "hbm_bandwidth=3 TB/s", "--set",
                                  "hbm_bandwidth=4 TB/s"])
    assert code == 0, err
    assert out.startswith("hbm_bandwidth = 4 TB/s\n")
    assert "note: hbm_bandwidth is set twice: --set hbm_bandwidth=4 TB/s replaces --set hbm_bandwidth=3 TB/s" in out


def test_the_same_value_set_twice_is_fine(capsys):
    code, out, err = run(capsys, ["eval", "hbm_bandwidth", "--set", "hbm_bandwidth=3 TB/s", "--set",
                                  "hbm_bandwidth=3000 GB/s"])
    assert code == 0, err


def test_a_ledger_entry_set_overrides_its_file_set(workdir, capsys):
    code, out, err = run(capsys, ["ledger", "--library", "ledgerlib", "--json"])
    assert code == 0, err
    entry = json.loads(out)["entries"][0]
    assert entry["scenario"]["set"] == ["widget_rate=1/s", "widget_count=2"]
    assert entry["bound"]["exact"] == "2"  # the floor count/rate at the entry's count


def test_presets_of_a_library_without_any(workdir, capsys):
    code, out, _ = run(capsys, ["presets", "--library", "good.py"])
    assert code == 0
    assert out.splitlines()[0] == "hardware presets: none"


def test_ledger_without_entries_for_a_chip(capsys):
    code, out, _ = run(capsys, ["ledger", "--hardware", "tpu-v5e"])
    assert code == 0
    assert out == "no measurements for tpu-v5e\n"


def test_sweep_output_file_gets_the_usual_mode(workdir, capsys):
    old = os.umask(0o022)
    try:
        code, _, err = run(capsys, ["sweep", "critical_batch", "--vary", "batch=1 seq:10 seq:3", "--out", "b.csv"])
    finally:
        os.umask(old)
    assert code == 0, err
    assert stat.S_IMODE((workdir / "b.csv").stat().st_mode) == 0o644


def test_an_unknown_option_is_never_taken_for_help(capsys):
    code, out, err = run(capsys, ["ledger", "--model", "x"])
    assert code == 2 and "unrecognized arguments: --model x" in err and "--help?" not in err, err
    code, out, err = run(capsys, ["check", "--libary", "serving"])
    assert code == 2 and "did you mean --library?" in err, err


def test_a_sweep_whose_figure_cannot_be_written_writes_no_csv_either(workdir, capsys):
    code, out, err = run(capsys, ["sweep", "critical_batch", "--vary", "batch=1:10:3", "--out", "s.csv",
                                  "--figure", "afile/x.png"])
    assert code == 2 and "afile is not a folder" in err and not (workdir / "s.csv").exists(), err


@pytest.mark.parametrize("argv", [["list", "--set", "x=1"], ["list", "--model", "llama3-8b"],
                                  ["recheck", "afolder", "--hardware", "h100-sxm"],
                                  ["recheck", "afolder", "--rlimit", "5"], ["recheck", ""]])
def test_list_and_recheck_take_no_scenario(workdir, capsys, argv):
    """Both accepted the scenario options and ignored them; an empty DIR read the current folder."""
    code, out, err = run(capsys, argv)
    assert code == 2 and err.count("\n") == 1, err


def test_eval_json_says_the_unit_of_exact(capsys):
    import json as _json

    code, out, _ = run(capsys, ["eval", "step_time", "--unit", "ms", "--json"])
    data = _json.loads(out)
    assert code == 0 and data["unit"] == "ms" and data["exact_unit"] == "s"
    assert abs(float(__import__("fractions").Fraction(data["exact"])) * 1000 - data["value"]) < 1e-9


@pytest.mark.parametrize("through", ["afile", "afile/sub"])
def test_a_cache_folder_variable_that_names_a_file_is_one_line(workdir, capsys, monkeypatch, through):
    """$DERIVE_CACHE_DIR naming a file turned the cache off without a word (the option was checked, not it)."""
    import subprocess
    import sys

    monkeypatch.setenv("DERIVE_CACHE_DIR", str(workdir / through))
    code, out, err = run(capsys, ["check", "batch_optimum"])
    assert code == 2 and "in DERIVE_CACHE_DIR" in err and err.count("\n") == 1, err
    proc = subprocess.run([sys.executable, "-m", "derive", "check", "batch_optimum"], capture_output=True, text=True,
                          cwd=workdir)  # the console script's replay path reads the variable first
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "in DERIVE_CACHE_DIR" in proc.stderr


@pytest.mark.parametrize("argv, words", [
    (["eval", "batch", "--set", "batch=2.5 seq"], "batch = 2.5 seq is not a whole number of seq, read as given"),
    (["card", "--set", "chips=1.5"], "chips = 1.5 is not a whole number, read as given"),
    (["eval", "context", "--set", "context=1000.5 token/seq"], "is not a whole number of token/seq"),
])
def test_a_count_off_the_whole_numbers_is_read_as_given_and_said(capsys, argv, words):
    # a slip (1.5 chips) or a threshold asked about exactly (a margin's end): either way the reader is told
    assert main(argv) == 0
    assert words in capsys.readouterr().out
    assert main(["eval", "batch", "--set", "batch=3 seq"]) == 0
    assert "whole number" not in capsys.readouterr().out


def test_ledger_since_prints_an_id_of_the_previous_file_escaped(workdir, capsys):
    main(["ledger", "--since", "ledger_escape.json"])
    out = capsys.readouterr().out
    assert "gone since ledger_escape.json: x\\x1b[2J\\ny\n" in out and "\x1b" not in out


def test_check_of_one_claim_says_the_scenario_contradicts_its_assumption(capsys):
    # a general claim reads no scenario value, so its verdict cannot show an --assume the values break: said
    assert main(["check", "batch_optimum", "--assume", "hbm_bandwidth >= 30 TB/s"]) == 0
    out = capsys.readouterr().out
    assert "the scenario contradicts itself" in out and "--assume hbm_bandwidth >= 30 TB/s fails" in out
    assert main(["check", "batch_optimum", "--assume", "hbm_bandwidth >= 30 TB/s", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["assume_conflicts"][0]["origin"] == "--assume"
    assert main(["check", "batch_optimum", "--assume", "hbm_bandwidth >= 3 TB/s"]) == 0
    assert "contradicts" not in capsys.readouterr().out


def test_a_cache_folder_that_cannot_be_written_is_said_and_the_run_goes_on(workdir, capsys):
    # a name too long for the file system turned the cache off without a word (cache info refused it)
    assert main(["check", "batch_optimum", "--cache-dir", "a" * 300]) == 0
    captured = capsys.readouterr()
    assert "cannot be written (File name too long): running without the cache" in captured.err
    assert "1 proved" in captured.out


def test_a_blank_or_home_relative_cache_variable(workdir, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("DERIVE_CACHE_DIR", " ")  # made a folder named by a blank
    assert main(["check", "batch_optimum"]) == 2
    assert "it is blank (in DERIVE_CACHE_DIR)" in capsys.readouterr().err
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("DERIVE_CACHE_DIR", "~/derive-cache")  # made a folder named "~" in the working folder
    assert main(["check", "batch_optimum"]) == 0
    assert (tmp_path / "derive-cache").is_dir() and not (workdir / "~").exists()
