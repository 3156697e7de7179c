"""The command line: exit codes 0/1/2, one-line errors, JSON keys of DESIGN.md, user libraries."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from derive.cli import main

USER_LIB = str(Path(__file__).parent / "fixtures" / "user_library" / "mine.py")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_json_headline_claims_proved(capsys):
    code, out, _ = run(capsys, "check", "batch_optimum", "latency_floor", "--json")
    data = json.loads(out)
    verdicts = {c["id"].rsplit(".", 1)[1]: c["verdict"] for c in data["claims"]}
    assert verdicts == {"batch_optimum": "proved", "latency_floor": "proved"}
    assert code == 0
    claim = data["claims"][0]
    for key in ("id", "title", "kind", "verdict", "expected", "engine", "counterexample", "reason", "rests_on",
                "seconds"):
        assert key in claim
    assert set(data) >= {"scenario", "claims", "summary"}


def test_user_library_true_false_inconsistent(capsys):
    code, out, _ = run(capsys, "check", "--library", USER_LIB, "--json")
    data = json.loads(out)
    by_id = {c["id"]: c for c in data["claims"]}
    assert by_id["mine.time_positive"]["verdict"] == "proved"
    assert by_id["mine.too_fast"]["verdict"] == "refuted"
    cex = by_id["mine.too_fast"]["counterexample"]
    from fractions import Fraction

    assert Fraction(cex["widget_count"]) / Fraction(cex["widget_rate"]) >= 1  # really violates it
    assert by_id["mine.both"]["verdict"] == "inconsistent"
    assert code == 1  # the false claim was expected to be proved


def test_user_library_text_shows_counterexample(capsys):
    code, out, _ = run(capsys, "check", "--library", USER_LIB)
    assert code == 1
    assert "counterexample:" in out and "widget_count = " in out


@pytest.mark.parametrize("hostile", [
    "__import__('os').system('touch {marker}')",
    "open('{marker}', 'w')",
    "flops.__class__.__bases__",
    "().__class__",
    "lambda: 1",
    "flops >= 9**9**9**9",
    "(" * 5000 + "1" + ")" * 5000,
    "flops >= " + "9" * 5000,
])
@pytest.mark.parametrize("option", ["--assume", "--set"])
def test_hostile_input_exit_2_one_line_nothing_executed(capsys, tmp_path, hostile, option):
    marker = tmp_path / "pwned"
    text = hostile.format(marker=marker)
    if option == "--set":
        text = "flops=" + text
    code, out, err = run(capsys, "eval", "flops", option, text)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("derive eval: error:")
    assert "Traceback" not in err
    assert not marker.exists()


def test_no_traceback_in_a_real_process(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "derive.cli", "check", "--assume", "__import__('os')"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("argv, code", [
    (["--version"], 0), (["check", "--help"], 0), (["check", "--bogus"], 2), ([], 2),
    (["eval", "hbm_bandwidth", "--no-cache"], 0), (["check", "--library", USER_LIB, "--no-cache"], 1),
])
def test_the_console_script_ends_quickly_with_the_commands_exit_code(argv, code):
    """``entry`` skips the interpreter's teardown (``_quick_exit``): the exit code, the flushed output and
    the exit handlers registered while the command ran must all survive that."""
    proc = subprocess.run([sys.executable, "-c", "from derive.cli import entry; entry()", *argv],
                          capture_output=True, text=True)
    assert proc.returncode == code, proc.stderr
    if argv[:1] == ["eval"]:
        assert "TB/s" in proc.stdout  # buffered output reached the pipe
    if argv == ["--version"]:
        assert proc.stdout.startswith("derive ")


def test_exit_handlers_registered_while_a_command_runs_still_run(tmp_path):
    marker = tmp_path / "ran"
    probe = ("import atexit, sys; import derive.cli as cli; real = cli.main\n"
             "def main(*a, **k):\n"
             f"    atexit.register(lambda: open({str(marker)!r}, 'w').close())\n"
             "    print('printed, not flushed', end='')\n"
             "    return 1\n"
             "cli.main = main; cli.entry()\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stdout == "printed, not flushed"
    assert marker.exists()


def test_eval_accepts_units(capsys):
    code, out, _ = run(capsys, "eval", "drain_time", "--unit", "ms", "--json", "--set", "hbm_capacity=80 GB",
                       "--set", "hbm_bandwidth=3.35 TB/s")
    data = json.loads(out)
    assert code == 0
    assert data["name"] == "drain_time" and data["unit"] == "ms"
    assert data["exact"] == "16/670"[:0] + str(__import__("sympy").Rational(80 * 10**9, 335 * 10**10))
    assert abs(data["value"] - 23.8806) < 1e-3


def test_eval_expression_and_unit_mismatch(capsys):
    code, out, _ = run(capsys, "eval", "flops / hbm_bandwidth")
    assert code == 0 and "FLOP/byte" in out
    code, _, err = run(capsys, "eval", "drain_time", "--unit", "GB")
    assert code == 2 and "cannot express" in err


@pytest.mark.parametrize(("argv", "needle"), [
    (["show", "batch_optimm"], "did you mean"),
    (["eval", "flps"], "did you mean flops"),
    (["check", "--hardware", "h100"], "did you mean"),
    (["check", "--set", "flops=3 TB/s"], "byte/s but flops is FLOP/s"),
    (["check", "--set", "nonsense"], "--set"),
    (["check", "--scenario", "/nonexistent.toml"], "not found"),
    (["list", "--topic", "rooflin"], "did you mean roofline"),
])
def test_bad_input_one_line(capsys, argv, needle):
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert needle in err
    assert err.count("\n") == 1


def test_list_and_show(capsys):
    code, out, _ = run(capsys, "list", "--json")
    rows = json.loads(out)
    assert code == 0 and any(r["id"] == "batching.batch_optimum" for r in rows)
    code, out, _ = run(capsys, "show", "batch_optimum", "--json")
    info = json.loads(out)
    assert info["verdict"] == "proved" and info["steps"]
    code, out, _ = run(capsys, "show", "flops")
    assert code == 0 and "FLOP/s" in out and "domain: positive (> 0)" in out


def test_show_says_what_domain_a_claim_assumes(capsys):
    # quantities are positive unless declared otherwise: a claim's check assumes it, so show says it
    code, out, _ = run(capsys, "show", "network_depth")
    assert code == 0 and "domain: positive (> 0), integer" in out
    code, out, _ = run(capsys, "show", "revnets.revnet_memory_tradeoff")
    assert code == 0 and "network_depth > 0 integer" in out and "params_active > 0" in out
    code, out, _ = run(capsys, "show", "revnets.feistel_inverse", "--json")
    assert code == 0 and "feistel_right real" in json.loads(out)["domains"]


def test_help_is_fast_to_import():
    proc = subprocess.run([sys.executable, "-c", "import sys, derive.cli; print('sympy' in sys.modules)"],
                          capture_output=True, text=True)
    assert proc.stdout.strip() == "False"  # heavy modules load only when a command runs


def test_workers_follow_the_cpus_this_process_may_use(monkeypatch):
    import os

    from derive.checking import parallel

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(3)), raising=False)
    assert parallel.default_workers() == 3
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)), raising=False)
    assert parallel.default_workers() == parallel.MAX_WORKERS

    def unavailable(pid):
        raise AttributeError

    monkeypatch.setattr(os, "sched_getaffinity", unavailable, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert parallel.default_workers() == 1


def test_parallel_check_agrees_with_serial(report):
    """`derive check` forks a worker per CPU in a fresh process; verdicts must equal a serial check."""
    proc = subprocess.run([sys.executable, "-m", "derive.cli", "check", "--json", "--no-cache"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    parallel = {c["id"]: (c["verdict"], c["counterexample"]) for c in data["claims"]}
    serial = {i: (r.verdict, r.counterexample) for i, r in report.items()}
    assert parallel == serial


def test_a_counterexample_the_display_rounds_is_followed_by_its_exact_value():
    import derive
    from derive.cli.commands.output import assignment_lines

    lines = assignment_lines(derive.load(), {"layers_per_stage": "4/3", "chips": "2", "hbm_bandwidth": "1/3"})
    assert lines == ["layers_per_stage = 1.333 (exactly 4/3)", "chips = 2",
                     "hbm_bandwidth = 0.3333 byte/s (exactly 1/3 byte/s)"]


@pytest.mark.parametrize("argv", [
    ["eval", "deployed_chips"],                             # a quantity only the serving library declares
    ["check", "network.tp_on_scaleup_iff"],                 # a claim of the serving library
    ["eval", "critical_batch", "--set", "tp=8"],            # a layout degree given to the lecture library
])
def test_a_name_of_another_built_in_library_says_which_library_has_it(capsys, argv):
    code, _, err = run(capsys, *argv)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "the serving library has" in err and "add --library serving" in err


def test_a_name_no_library_has_keeps_its_suggestions(capsys):
    code, _, err = run(capsys, "eval", "critical_batc")
    assert code == 2 and "did you mean critical_batch" in err and "--library" not in err
