"""``derive export``: paper-ready snippets with stable labels, and ``derive graph``."""

from __future__ import annotations

import json

import pytest

from derive.cli import main
from derive.documents.export import export


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_latex_snippet_has_a_stable_label_and_the_verdict(capsys):
    code, out, err = run(capsys, "export", "batch_optimum", "--no-cache")
    assert code == 0, err
    assert out.startswith("% batching.batch_optimum: ")
    assert "[proved, z3; scenario lecture]" in out
    assert "\\begin{equation}\\label{eq:batch_optimum}\n" in out
    assert r"t_{\mathrm{compute}}" in out and "\\end{equation}\n" in out


def test_several_ids_in_order_definitions_too(capsys):
    code, out, _ = run(capsys, "export", "latency_floor", "batching.critical_batch", "--format", "latex", "--no-cache")
    assert code == 0
    assert out.index(r"\label{eq:latency_floor}") < out.index(r"\label{eq:critical_batch}")
    assert r"B^{*} = " in out


def test_markdown_snippet(capsys):
    code, out, _ = run(capsys, "export", "latency_floor", "--format", "markdown", "--no-cache")
    assert code == 0
    assert out.startswith('<a id="latency_floor"></a>\n**Latency floor**')
    assert "\n$$\nT \\ge " in out and out.rstrip().endswith(")")


def test_snippets_match_the_document_labels(lecture_library, lecture_scenario):
    from derive.checking.checker import Report
    from derive.documents.view import ModelBuilder

    mb = ModelBuilder(lecture_library, lecture_scenario, Report(lecture_scenario, []))
    tex = export(lecture_library, lecture_scenario, ["critical_batch"])
    assert rf"\label{{{mb.eq_label('batching.critical_batch')}}}" in tex


def test_unknown_id_is_bad_input_with_a_suggestion(capsys):
    code, out, err = run(capsys, "export", "batch_optimun", "--no-cache")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "batch_optimum" in err


@pytest.mark.parametrize("fmt", ["dot", "json", "svg"])
def test_graph_formats(capsys, fmt, lecture_library):
    code, out, err = run(capsys, "graph", "--format", fmt, "--no-check")
    assert code == 0, err
    if fmt == "dot":
        assert out.startswith("digraph derive {") and '"roofline.latency_floor"' in out
    elif fmt == "json":
        data = json.loads(out)
        assert len(data["nodes"]) == len(lecture_library.declarations)
        assert {"from": "roofline.step_time_ge_memory_time", "to": "roofline.latency_floor"} in data["edges"]
    else:
        assert "<svg" in out and "<dc:date>" not in out


def test_graph_is_deterministic(capsys):
    first = run(capsys, "graph", "--format", "svg", "--no-check")[1]
    second = run(capsys, "graph", "--format", "svg", "--no-check")[1]
    assert first == second
