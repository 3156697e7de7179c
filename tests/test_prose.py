"""Placeholders in a chapter's prose (derive.model.prose): checked when the library loads, filled in by the
document model under the scenario being built, and escaped right in LaTeX, Markdown and HTML."""

from __future__ import annotations

import dataclasses

import doclib
import pytest
import sympy as sp

from derive.checking.checker import Checker, Report
from derive.cli import main
from derive.documents.htmltext import prose_html
from derive.documents.latex import latex_prose, markdown_prose
from derive.documents.view import ModelBuilder
from derive.errors import LibraryError
from derive.model.library import Library
from derive.model.prose import placement, split
from derive.model.scenario import Scenario, ScenarioValue, build_scenario


def _library_with(prose=(), statement=None) -> Library:
    """The document fixture with the first topic's prose (or one claim's statement) replaced."""
    timing = dataclasses.replace(doclib.TIMING, prose=tuple(prose))
    if statement is not None:
        claim = dataclasses.replace(doclib.total_ge_run, statement=statement)
        decls = tuple(claim if d is doclib.total_ge_run else d for d in timing.declarations)
        timing = dataclasses.replace(timing, declarations=decls)
    return Library([timing, doclib.MONEY], figures=list(doclib.FIGURES))


def _builder(library: Library, scenario: Scenario, check: bool = False) -> ModelBuilder:
    report = Checker(library, scenario).check() if check else Report(scenario, [])
    return ModelBuilder(library, scenario, report)


def test_split_and_placement_use_one_regex():
    parts = list(split("a {{value:run_time}} b {{verdict:money.balance}}."))
    assert parts == [("text", "a "), ("value", "run_time"), ("text", " b "), ("verdict", "money.balance"),
                     ("text", ".")]
    assert placement("  {{result:total_ge_run}} ") == ("result", "total_ge_run")
    assert placement("{{value:run_time}}") is None
    assert placement("see {{figure:time_vs_jobs}}") is None


@pytest.mark.parametrize("prose, message", [
    (("{{value:run_tme}}",), "unknown quantity 'run_tme'"),
    (("{{verdict:no_such_claim}}",), "unknown id 'no_such_claim'"),
    (("{{verdict:run_time}}",), "is a definition, not a claim"),
    (("{{valu:run_time}}",), "malformed placeholder '{{valu:run_time}}'"),
    (("{{value: run_time}}",), "malformed placeholder"),
    (("{{value:run_time}",), "malformed placeholder"),
    (("see {{result:total_ge_run}} here",), "must be a paragraph on its own"),
    (("{{result:total_le_run}}",), "only claims with a label or the tag 'inconsistency'"),
    (("{{result:money.balance}}",), "belongs to chapter 'money', not to this one"),
    (("{{result:total_ge_run}}", "{{result:total_ge_run}}"), "placed twice"),
    (("{{figure:no_such_figure}}",), "unknown figure 'no_such_figure'"),
    (("{{figure:cost_vs_size}}",), "belongs to topic 'money'"),
    ((r"\(T = {{value:total_time}}\)",), "inside"),
])
def test_bad_placeholder_is_a_library_error_at_load(prose, message):
    with pytest.raises(LibraryError) as err:
        _library_with(prose)
    assert message in err.value.one_line()
    assert "timing PROSE paragraph" in err.value.one_line()
    assert "\n" not in err.value.one_line()


def test_unknown_quantity_suggests_the_closest_name():
    with pytest.raises(LibraryError) as err:
        _library_with(("{{value:run_tme}}",))
    assert "did you mean run_time" in err.value.one_line()


def test_placeholder_outside_prose_is_refused():
    with pytest.raises(LibraryError, match="outside a chapter's PROSE"):
        _library_with(statement="Never below {{value:run_time}}.")


def test_values_and_verdicts_render_in_every_format():
    lib = _library_with(("Run {{value:run_time}} & load {{value:load_time}} <50%> at $2/h, a_b: "
                         r"\(t_{\mathrm{run}} \le T\) is {{verdict:total_ge_run}}, the twin "
                         "{{verdict:timing.total_le_run}}.",))
    text = _builder(lib, doclib.scenario(), check=True).prose(lib.topics[0].prose[0])
    tex = latex_prose(text)
    assert tex == (r"Run \SI{16}{\milli\second} \& load \SI{100}{\milli\second} \textless{}50\%\textgreater{} "
                   r"at \ensuremath{\$}2/h, a\_b: \(t_{\mathrm{run}} \le T\) is \verdict{proved}, the twin "
                   r"\verdict{refuted}.")
    md = markdown_prose(text)
    assert md == (r"Run 16 ms & load 100 ms \<50%\> at <span>$</span>2/h, a\_b: $t_{\mathrm{run}} \le T$ is "
                  "**proved**, the twin **refuted**.")
    html = str(prose_html(text))
    assert html == ('Run <span class="value">16 ms</span> &amp; load <span class="value">100 ms</span> '
                    '&lt;50%&gt; at $2/h, a_b: <span class="math">t_{\\mathrm{run}} \\le T</span> is '
                    '<span class="verdict v-proved">proved</span>, the twin '
                    '<span class="verdict v-refuted">refuted</span>.')


def test_value_follows_the_scenario_being_built():
    lib = _library_with(("{{value:run_time}}",))
    base = doclib.scenario()
    values = dict(base.values)
    values["work"] = ScenarioValue("work", sp.Integer(8 * 10**12), "--set", None, "--set")
    doubled = Scenario("doubled", values, (), frozenset(), ("--set",))
    assert markdown_prose(_builder(lib, base).prose("{{value:run_time}}")) == "16 ms"
    assert markdown_prose(_builder(lib, doubled).prose("{{value:run_time}}")) == "32 ms"


def test_value_changes_with_the_hardware_preset(lecture_library, lecture_scenario):
    h100 = build_scenario(lecture_library, hardware="h100-sxm")
    text = "{{value:critical_batch}} at {{value:hbm_bandwidth}}"
    lecture = markdown_prose(_builder(lecture_library, lecture_scenario).prose(text))
    other = markdown_prose(_builder(lecture_library, h100).prose(text))
    assert lecture == "2,400 seq at 20 TB/s"
    # the lecture's model and batch on one H100 node do not fit its memory: each value says so with a dagger
    assert other != lecture and other.endswith("3.35 TB/s†")


def test_value_the_scenario_cannot_give_is_said_not_blank():
    lib = _library_with(("{{value:run_time}}",))
    values = {k: v for k, v in doclib.scenario().values.items() if k != "rate"}
    partial = Scenario("partial", values, (), frozenset(), ("fixture without rate",))
    text = markdown_prose(_builder(lib, partial).prose("{{value:run_time}}"))
    assert text == r"\[run\_time: no value under scenario partial, needs rate\]"


def test_placements_order_part_one():
    lib = doclib.library()
    mb = _builder(lib, doclib.scenario(), check=True)
    ch = mb.chapter(lib.topics[0], 1, [{"id": "time_vs_jobs", "title": "Time against jobs"}])
    kinds = [b["kind"] for b in ch["flow"]]
    assert kinds == ["prose", "result", "prose", "figure", "prose"]  # the PROSE replaces the summary in part I
    assert ch["flow"][1]["number"] == "1.1"
    money = mb.chapter(lib.topics[1], 2, [])
    assert money["flow"][0]["kind"] == "prose" and "What the time costs" in str(money["flow"][0]["text"])


def _twin_as_inconsistency(prose) -> Library:
    twin = dataclasses.replace(doclib.total_le_run, tags=("inconsistency",))
    timing = dataclasses.replace(doclib.TIMING, prose=tuple(prose),
                                 declarations=tuple(twin if d is doclib.total_le_run else d
                                                    for d in doclib.TIMING.declarations))
    return Library([timing, doclib.MONEY], figures=list(doclib.FIGURES))


def test_an_inconsistency_the_prose_cites_gets_no_box_of_its_own():
    boxed = _twin_as_inconsistency(("Nothing cited.",))
    cited = _twin_as_inconsistency(("The twin is {{verdict:total_le_run}}.",))
    placed = _twin_as_inconsistency(("The twin is {{verdict:total_le_run}}.", "{{result:total_le_run}}"))

    def kinds(lib):
        ch = _builder(lib, doclib.scenario(), check=True).chapter(lib.topics[0], 1, [])
        return [b["kind"] for b in ch["flow"]]

    assert kinds(boxed) == ["prose", "result", "inconsistency"]
    assert kinds(cited) == ["prose", "result"]
    assert kinds(placed) == ["prose", "inconsistency", "result"]


def test_cli_reports_an_unknown_placeholder_in_one_line(tmp_path, capsys):
    mod = tmp_path / "typo.py"
    mod.write_text('"""A library with a typo in its prose."""\n'
                   "from derive import Claim, Quantity, derived, logic\n"
                   'x = Quantity("thing_rate", "r", "1/s", "things per second")\n'
                   'c = Claim("typo.pos", title="Positive", statement="Positive.", source=derived("t"),\n'
                   "          goal=logic.gt(x.sym, 0))\n"
                   'PROSE = ("The rate is {{value:thing_rat}}.",)\n')
    code = main(["list", "--library", str(mod)])
    out, err = capsys.readouterr()
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "unknown quantity 'thing_rat'" in lines[0] and "did you mean thing_rate" in lines[0]
