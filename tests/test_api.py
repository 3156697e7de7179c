"""The notebook API (derive/api.py): lazily exported names, values with units, domains, renderable
reports with escaped text, dataframes, diffs that say what moved."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import derive
from derive.errors import DeriveError, UnitError


def test_api_names_are_exported_lazily():
    for name in ("load", "scenario", "check", "evaluate", "diff", "margin", "claim"):
        assert name in derive.__all__
    code = "import sys, derive; assert 'sympy' not in sys.modules and 'derive.api' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_evaluate_values_and_domains():
    values = derive.evaluate("critical_batch", "critical_batch_kv", "hbm_bandwidth * 20 ms")
    assert values["critical_batch"].display == "2,400 seq"
    assert values["critical_batch_kv"].value is None and "critical_context" in values["critical_batch_kv"].reason
    assert values["hbm_bandwidth * 20 ms"].display == "400 GB"
    assert "2,400 seq" in values._repr_html_() and "2,400 seq" in repr(values)
    inside = derive.evaluate("critical_batch_kv", set={"context": "8k token/seq"})
    assert inside["critical_batch_kv"].value > 0


def test_evaluate_says_what_the_values_rest_on_as_eval_does():
    """Your chip and model: a value that rests on the lecture's chip price or on a preset's whole node of chips
    says so in the API's text and HTML, as ``derive eval`` does; a value that uses neither does not."""
    sc = derive.scenario(hardware="h100-sxm", model="llama3-70b")
    cost = derive.evaluate("cost_per_token", scenario=sc)
    assert any(n.startswith("chip_price = 2 USD/h is the lecture's value") for n in cost.notes)
    assert any(n.startswith("chips = 8 from hardware h100-sxm") for n in cost.notes)
    assert "note: chip_price = 2 USD/h is the lecture's value" in repr(cost)
    assert "chip_price = 2 USD/h is the lecture&#x27;s value" in cost._repr_html_()
    flops = derive.evaluate("flops", scenario=sc)
    assert not any(n.startswith(("chip_price", "chips =")) for n in flops.notes)
    mine = derive.evaluate("cost_per_token", scenario=derive.scenario(hardware="h100-sxm", model="llama3-70b",
                                                                      set={"chip_price": "3 USD/h", "chips": 4}))
    assert not any(n.startswith(("chip_price", "chips =")) for n in mine.notes)


def test_scenario_keywords_are_strict_about_units():
    with pytest.raises(UnitError):
        derive.scenario(set={"hbm_bandwidth": 3.35})
    assert derive.scenario(set={"hbm_bandwidth": 3.35}, si=True).value("hbm_bandwidth") == derive.scenario(
        set={"hbm_bandwidth": "3.35 byte/s"}).value("hbm_bandwidth")
    with pytest.raises(DeriveError):
        derive.evaluate("flops", scenario=derive.scenario(), hardware="h100-sxm")


def test_check_report_renders_and_escapes(monkeypatch):
    report = derive.check("batch_optimum_lecture")
    assert report.ok and report["batch_optimum_lecture"].verdict == "proved"
    html = report._repr_html_()
    assert "<table>" in html and "#1a7f37" in html  # a coloured verdict
    monkeypatch.setattr(report.results[0], "title", "50% <b>bold</b> & more")
    html = report._repr_html_()
    assert "50% &lt;b&gt;bold&lt;/b&gt; &amp; more" in html
    pytest.importorskip("pandas")
    frame = report.to_dataframe()
    assert list(frame["verdict"]) == ["proved"]


def test_claim_handcalc_substitutes_values():
    view = derive.claim("batching.critical_batch")
    latex = view._repr_latex_()
    assert latex.startswith("$$") and latex.endswith("$$")
    assert r"\cdot" in latex and "300" in latex and r"2{,}400\ \text{seq}" in latex
    view = derive.claim("batch_optimum_lecture")
    assert view.result is not None and view.result.verdict == "proved"


def test_tex_text_escapes_mathjax_specials():
    from derive.api import tex_text

    assert tex_text("50% of $x_1 & {y}#") == r"50\% of \$x\_1 \& \{y\}\#"


def test_diff_says_what_moved():
    view = derive.diff(set={"hbm_bandwidth": "40 TB/s"}, ids=["batch_optimum_lecture"])
    assert view.changed() == ["batching.batch_optimum_lecture"]
    entry = view.to_json()["changed"][0]
    assert entry["violations"][0]["text"] == "critical_batch = 1,200 seq; the claim needs 2,376 seq to 2,424 seq"
    assert entry["threshold"]["at"] == "20.2 TB/s"
    html = view._repr_html_()
    assert "1,200 seq" in html and "20.2 TB/s" in html


def test_margin_view():
    view = derive.margin("scaleout_viability", "scaleout_bandwidth", verify=False)
    assert "[56.25 GB/s, ∞)" in repr(view)


def test_declaration_reprs_escape_and_show_the_formula():
    from derive import Claim, Quantity, derived, logic

    x = Quantity("share_x", "x", "1", "a share")
    c = Claim("fx.pct", title="Within 5% of 100 & #1_a", statement="s.", source=derived("t"),
              goal=logic.le(x.sym, 2))
    latex = c._repr_latex_()
    assert r"5\% of 100 \& \#1\_a" in latex and r"\mathit{share\_x} \le 2" in latex
    assert "%" not in latex.replace(r"\%", "")
    r = derive.check("hw_ratio_a100")["hw_ratio_a100"]
    assert r._repr_latex_().count("$") == 2 and "counterexample" in r._repr_latex_()


@pytest.mark.parametrize("domain", ["nonnegative", "positive"])
def test_a_user_claim_with_ne_is_refuted_exactly_where_it_fails(tmp_path, capsys, domain):
    """``logic.ne``: 2u != 1 fails only at u = 1/2, which the counterexample names exactly; bounded away from it the
    same relation is proved (the planted true twin)."""
    from derive.cli import main

    lib = tmp_path / "mine.py"
    lib.write_text(
        "from derive import Claim, Quantity, derived, logic\n"
        f"u = Quantity('mine_u', 'u', '1', 'a share', domain='{domain}')\n"
        "half = Claim('mine.not_half', title='u is never one half', statement='s', source=derived('test'),\n"
        "             goal=logic.ne(2 * u.sym, 1), expected='refuted')\n"
        "above = Claim('mine.not_half_above_one', title='past one, never one half', statement='s',\n"
        "              source=derived('test'), hypotheses=(logic.ge(u.sym, 1),), goal=logic.ne(2 * u.sym, 1))\n")
    assert main(["check", "--library", str(lib), "--json", "--no-cache"]) == 0
    got = {c["id"]: c for c in json.loads(capsys.readouterr().out)["claims"]}
    assert got["mine.not_half"]["verdict"] == "refuted"
    assert got["mine.not_half"]["counterexample"] == {"mine_u": "1/2"}
    assert got["mine.not_half_above_one"]["verdict"] == "proved"


def test_a_missing_value_says_how_to_give_it_in_python():
    """The library's hint names the command line's --set; from Python the value is given with set={...}."""
    from derive.errors import MissingValueError

    with pytest.raises(MissingValueError, match=r"give set=\{'prefill_tokens': VALUE\}") as err:
        derive.evaluate("request_ttft_floor", library=derive.load("serving"), hardware="h100-sxm", model="llama3-8b")
    assert "--set" not in str(err.value)


# arguments of the wrong type, and results at a scenario that cannot exist ---------------------------------------

@pytest.mark.parametrize(("call", "words"), [
    (lambda: derive.load(None), "libraries takes str"),
    (lambda: derive.scenario(hardware=5), "hardware takes str | None"),
    (lambda: derive.scenario("h100-sxm"), "library takes Library | None"),
    (lambda: derive.scenario(set=5), "set takes"),
    (lambda: derive.check(5), "ids takes"),
    (lambda: derive.check([None]), "ids takes"),
    (lambda: derive.check("batch_optimum", workers="a"), "workers takes int"),
    (lambda: derive.check("batch_optimum", workers=0), "workers must be 1 or more, got 0"),
    (lambda: derive.check("batch_optimum")[None], "takes a claim id"),  # was a TypeError inside difflib
    (lambda: derive.check("batch_optimum")[5], "there are 1 results"),
    (lambda: derive.evaluate("batch")[None], "takes a name"),
    (lambda: derive.evaluate("batch")[3], "there are 1 values"),
    (lambda: derive.predict(set=3), "set takes a mapping"),
    (lambda: derive.check([]), "ids is empty"),  # checked every claim
    (lambda: derive.format_value(1, None), "takes a number and a unit text, got int 1"),  # was an AttributeError
    (lambda: derive.format_value("abc", "ms"), "takes a number and a unit text, got str"),  # was "undefined"
    (lambda: derive.check("batch_optimum", workers=-1), "workers must be 1 or more, got -1"),
    (lambda: derive.claim(None), "claim_id takes str"),
    (lambda: derive.evaluate(None), "names takes str"),
    (lambda: derive.evaluate("hbm_bandwidth", unit=5), "unit takes str | None"),
    (lambda: derive.margin("batch_optimum_lecture", None), "vary takes str"),
    (lambda: derive.diff(5), "baseline takes"),
    (lambda: derive.check(scenario=5), "scenario takes Scenario")])
def test_an_argument_of_the_wrong_type_is_a_usage_error_naming_it(call, words):
    # each was a TypeError or AttributeError from deep inside (pathlib, difflib, the scenario builder)
    with pytest.raises(derive.errors.UsageError, match=words.replace("|", r"\|")):
        call()


def test_a_scenario_of_another_library_is_refused():
    serving = derive.load("serving")
    sc = derive.scenario(serving, hardware="h100-sxm", model="llama3-70b", set={"tp": "8"})
    for call in (lambda: derive.check("batch_optimum_lecture", scenario=sc),
                 lambda: derive.margin("batch_optimum_lecture", "hbm_bandwidth", scenario=sc),  # was KeyError
                 lambda: derive.diff(sc)):
        with pytest.raises(derive.errors.UsageError, match="built with another library"):
            call()
    assert derive.check("batch_optimum_lecture", scenario=sc, library=serving).results[0].verdict == "refuted"


def test_diff_takes_one_id_as_text_and_lookups_name_what_is_there():
    view = derive.diff(ids="batch_optimum_lecture", set={"hbm_bandwidth": "40 TB/s"})  # was read letter by letter
    assert view.changed() == ["batching.batch_optimum_lecture"]
    report = derive.check("batch_optimum_lecture")
    with pytest.raises(derive.errors.UnknownNameError, match="checked claim"):
        report["latency_floor"]  # a claim of the library that was not checked: was a bare KeyError
    with pytest.raises(derive.errors.UnknownNameError, match="known: critical_batch"):
        derive.evaluate("critical_batch")["x"]


def test_every_rendering_of_a_result_says_the_scenario_cannot_exist():
    sc = derive.scenario(hardware="h100-sxm", model="llama3-70b", set={"chips": "1"})
    words = "memory_per_chip <= hbm_capacity fails"
    report = derive.check("latency_floor", scenario=sc)
    shown = words.replace("<", "&lt;")  # as HTML writes it
    assert words in repr(report) and shown in report._repr_html_() and words in report.to_json()["infeasible"][0]
    values = derive.evaluate("step_time", scenario=sc)
    assert words in values.to_json()[0]["infeasible"][0] and words in values.rows()[0]["infeasible"]
    assert all(words in str(ev) for ev in values)  # iterating keeps it too
    one = values["step_time"]  # one value taken from the result keeps the mark (it had lost it)
    assert words in str(one) and words in repr(one) and shown in one._repr_html_()
    assert words in one.to_json()["infeasible"][0] and len(repr(one)) < 400
    assert shown in derive.diff(scenario=sc)._repr_html_()
    assert "memory" in derive.claim("latency_floor", scenario=sc)._repr_latex_()
    assert words in repr(derive.predict(hardware="h100-sxm", model="llama3-70b", set={"chips": "1"}))
    fits = derive.check("latency_floor", hardware="h100-sxm", model="llama3-70b")
    assert fits.to_json()["infeasible"] == [] and "fails" not in repr(fits)


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"set": {"hbm_bandwidth": "3e12"}}, ["(in set: hbm_bandwidth=3e12)", "si=True"]),
    ({"set": {"nosuch": "1 s"}}, ["(in set: nosuch=1 s)"]),
    ({"hardware": "nosuchchip"}, ["(in hardware)"]),
])
def test_api_errors_name_the_apis_arguments_not_the_command_lines(kwargs, words):
    with pytest.raises(derive.errors.DeriveError) as err:
        derive.evaluate("step_time", **kwargs)
    text = str(err.value)
    assert all(w in text for w in words) and "--" not in text, text


def test_a_scenario_built_in_python_names_its_arguments_in_errors():
    with pytest.raises(derive.errors.DeriveError) as err:
        derive.scenario(set={"batch": "__import__('os')"})
    assert "(in set: batch=" in str(err.value) and "--set" not in str(err.value)


def test_values_and_results_are_taken_by_name_or_position():
    values = derive.evaluate("batch", "hbm_bandwidth")
    assert values[0].name == "batch" and values[-1].name == values["hbm_bandwidth"].name == "hbm_bandwidth"
    report = derive.check("batch_optimum")
    assert report[0].id == report["batch_optimum"].id == "batching.batch_optimum"


def test_predict_refuses_a_grid_past_its_budget_before_building_it():
    with pytest.raises(derive.errors.BudgetError, match="beyond the budget of 10,000 points"):
        derive.predict(batch=[f"{i} seq" for i in range(1, 201)], context=[f"{i} token/seq" for i in range(1, 101)])


def test_margin_with_an_empty_unit_is_refused_as_evaluate_refuses_it():
    with pytest.raises(derive.errors.MarginError, match="the unit is empty"):
        derive.margin("batch_optimum_lecture", "batch", unit="")
