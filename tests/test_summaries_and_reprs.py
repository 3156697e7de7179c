"""Quiet, honest summaries (counts that say what was expected; notes only about inputs used) and the
notebook's views of scenarios, evaluations and claims."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

import derive
from derive.checking.summary import verdict_summary
from derive.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@dataclass
class R:
    verdict: str
    expected: str

    @property
    def meets_expectation(self) -> bool:
        return self.verdict == self.expected


@pytest.mark.parametrize(("results", "text"), [
    ([R("proved", "proved")] * 3 + [R("refuted", "refuted")] * 2, "3 proved, 2 refuted as expected, 0 surprises"),
    ([R("proved", "proved"), R("unknown", "proved")], "1 proved, 1 surprise (1 unknown, expected proved)"),
    ([R("proved", "refuted")] * 2, "2 surprises (2 proved, expected refuted)"),
    ([], "no claims"),
])
def test_verdict_summary_says_what_was_expected(results, text) -> None:
    assert verdict_summary(results) == text


@dataclass
class RI(R):
    id: str = ""


def test_instance_claims_elsewhere_are_answers_not_surprises() -> None:
    results = [RI("proved", "proved", "a"), RI("refuted", "proved", "b"), RI("refuted", "proved", "c")]
    assert verdict_summary(results, frozenset({"b"})) == (
        "1 proved, 1 surprise (1 refuted, expected proved); 1 instance claim answered at these values (their "
        "expectations are for scenario lecture): 1 refuted")


@pytest.mark.parametrize("argv", [("--hardware", "h100-sxm"), ("--set", "hbm_bandwidth=40 TB/s")])
def test_check_at_another_scenario_has_no_surprises_from_instance_claims(capsys, argv) -> None:
    """The lecture's instance claims speak about its numbers: at a chip of one's own they are answered,
    never counted as surprises, and the exit code stays 0; a general claim keeps its expectation."""
    import json

    code, out, _ = run(capsys, "check", *argv)
    last = out.rstrip().splitlines()[-1]
    assert code == 0 and ", 0 surprises; " in last and "instance claims answered at these values" in last
    code, out, _ = run(capsys, "check", *argv, "--json")
    data = json.loads(out)
    elsewhere = set(data["expectations_elsewhere"])
    assert elsewhere and any(c["verdict"] != c["expected"] for c in data["claims"] if c["id"] in elsewhere)
    assert all(c["verdict"] == c["expected"] for c in data["claims"] if c["id"] not in elsewhere)
    api_kwargs = {"hardware": argv[1]} if argv[0] == "--hardware" else {"set": [argv[1]]}
    assert derive.check(**api_kwargs).ok


def test_check_summary_line(capsys) -> None:
    code, out, _ = run(capsys, "check", "latency_floor")
    assert code == 0 and out.rstrip().endswith("scenario lecture: 1 proved, 0 surprises")


def test_pins_and_notes_only_for_inputs_read(capsys) -> None:
    # latency_floor does not read sparsity: the lecture's sparsity pin is not mentioned (it reads the embedding
    # rows, which the lecture pins to 0, and says so)
    code, out, _ = run(capsys, "check", "latency_floor")
    assert "sparsity" not in out and "pinned: embedding_row_params = 0" in out
    code, out, _ = run(capsys, "check", "batch_optimum")  # the twin: batch_optimum reads sparsity
    assert "pinned: sparsity = 8" in out
    code, out, _ = run(capsys, "eval", "flops", "--hardware", "h100-sxm", "--model", "llama3-70b")
    assert "chip_price" not in out and "stages" not in out
    code, out, _ = run(capsys, "eval", "cost_per_token", "--hardware", "h100-sxm", "--model", "llama3-70b")
    assert "chip_price = 2 USD/h is the lecture's value" in out


def test_scenario_and_evaluation_render_as_html() -> None:
    sc = derive.scenario(hardware="h100-sxm", model="llama3-70b")
    html = sc._repr_html_()
    assert "<table>" in html and "deployment default" in html and "hardware preset" in html
    ev = derive.evaluate("critical_batch", scenario=sc).evaluations[0]
    assert "<b>" in ev._repr_html_() and "critical_batch" in ev._repr_html_()


def test_claim_repr_shows_the_values_it_is_about() -> None:
    view = derive.claim("latency_floor", check=False)
    assert "weight_fetch_time = 273.4 µs" in repr(view)
    assert "weight_fetch_time" in view._repr_html_()


def test_infeasible_values_say_so_in_the_api() -> None:
    sc = derive.scenario(hardware="h100-sxm", model="llama3-70b", set=["batch=2000 seq"])
    values = derive.evaluate("cost_per_token", scenario=sc)
    assert values.infeasible and "infeasible: memory_per_chip" in repr(values)
    assert derive.evaluate("cost_per_token").infeasible == []


def test_piped_progress_is_one_line_per_stage(capsys, monkeypatch) -> None:
    from derive.cli import terminal

    monkeypatch.setattr(terminal, "DELAY", 0.0)  # every stage counts as slow
    code, out, err = run(capsys, "check", "latency_floor", "batch_optimum")
    assert code == 0 and err.splitlines() == [line for line in err.splitlines() if line.startswith("derive")]
    assert any(re.match(r"derive: checking claims: (\d+) of \1 in [0-9.]+ s$", line) for line in err.splitlines()), err
    monkeypatch.setattr(terminal, "DELAY", 3600.0)  # the twin: quick work says nothing
    code, out, err = run(capsys, "check", "latency_floor")
    assert err == ""


def test_narrow_terminal_gets_plain_check_lines(monkeypatch) -> None:
    from derive.cli import terminal

    monkeypatch.setattr(terminal, "colour", lambda stream=None: True)
    monkeypatch.setattr(terminal, "_console", lambda stream: type("C", (), {"width": 80})())
    assert terminal.verdict_table([(" ", "proved", "a.b", "t", "z3", "")]) is False
