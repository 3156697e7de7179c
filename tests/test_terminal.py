"""Terminal output (derive/cli/terminal.py): colours and tables only on a terminal without NO_COLOR,
progress only on a terminal's stderr, rich never imported by ``derive --help``."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from derive.cli import terminal


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_when_not_a_terminal(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    terminal.emit_lines(["  a.b  proved -> refuted"])
    assert out.getvalue() == "  a.b  proved -> refuted\n"
    assert terminal.verdict_table([(" ", "proved", "a.b", "t", "z3", "")]) is False
    assert out.getvalue().count("\n") == 1


def test_colours_on_a_terminal_and_none_with_no_color(monkeypatch):
    out = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    terminal.emit_lines(["x.y  proved -> refuted"])
    assert "\x1b[" in out.getvalue() and "proved" in out.getvalue()
    monkeypatch.setattr(terminal, "TABLE_MIN_WIDTH", 0)  # a fake terminal is 80 columns wide
    assert terminal.verdict_table([("!", "refuted", "a.b", "title", "z3", "counterexample:\n  n = 2 seq")])
    monkeypatch.setenv("NO_COLOR", "1")
    plain = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", plain)
    terminal.emit_lines(["x.y  proved -> refuted"])
    assert plain.getvalue() == "x.y  proved -> refuted\n"


def test_progress_off_a_terminal_is_one_line_per_slow_stage(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(terminal, "DELAY", 0.0)
    with terminal.progress("checking") as update:
        update(1, 2)
    with terminal.working("building"):
        pass
    assert [line.rsplit(" in ", 1)[0] for line in err.getvalue().splitlines()] == [
        "derive: checking: 1 of 2", "derive: building: done"]
    monkeypatch.setattr(terminal, "DELAY", 3600.0)  # quick stages say nothing
    with terminal.working("building"):
        pass
    assert err.getvalue().count("\n") == 2


def test_progress_draws_on_a_terminal_after_the_delay(monkeypatch):
    err = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setattr(terminal, "DELAY", 0.0)
    with terminal.progress("checking claims") as update:
        update(1, 4)
        update(4, 4)
    assert "checking claims" in err.getvalue()


def test_help_stays_light():
    code = ("import sys; from derive.cli import build_parser; build_parser(); "
            "assert 'rich' not in sys.modules and 'sympy' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("tex, text", [
    (r"N_{\mathrm{tot}}/N_{\mathrm{act}}", "N_tot/N_act"),
    (r"B^{*}", "B*"),
    (r"B^{*}_{\mathrm{kv}} = \frac{B^{*}}{1 - L/L^{*}}", "B*_kv = B*/(1 - L/L*)"),
    (r"R = F q/(2W)", "R = F q/(2W)"),
    (r"a\cdot e^{-u/2}", "a · e^(-u/2)"),
    (r"\sqrt{ab} \le x^{2}", "√(ab) ≤ x²"),
    (r"t_c/\max(t_c, t_{\mathrm{kv}})", "t_c/max(t_c, t_kv)"),
    (r"2 \cdot 10^{15}\,\mathrm{FLOP}", "2 · 10¹⁵ FLOP"),
    (r"\alpha\,C_A = \beta\,C_B", "α C_A = β C_B"),
])
def test_inline_math_reads_as_plain_text(tex, text):
    assert terminal.plain_math(tex) == text


def test_prose_math_in_derive_show_is_plain_text(capsys):
    from derive.cli import main

    assert main(["show", "roofline.cost_per_token_and_floor"]) == 0
    out = capsys.readouterr().out
    assert "q N_read/(B W τ)" in out and "\\(" not in out and "\\mathrm" not in out
