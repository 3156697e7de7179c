"""Documents of a small fixed library (tests/doclib.py) against golden files, and the pieces that
make them: numbers, units, figures.

Regenerate the golden files after an intended change with ``DERIVE_UPDATE_GOLDEN=1 pytest
tests/test_render.py`` and review the diff."""

from __future__ import annotations

import os
from pathlib import Path

import doclib
import numpy as np
import pytest
import sympy as sp

from derive import logic
from derive.checking.checker import Checker, Report
from derive.documents.figures import _compile, render_chapter_graph, render_figure, render_graph
from derive.documents.latex import markdown_heading
from derive.documents.render import render
from derive.documents.thresholds import compute_thresholds
from derive.documents.values_text import siunitx_unit, value_text
from derive.documents.view import ModelBuilder, claims_model, document_model, latex_width, values_model
from derive.errors import DeriveError
from derive.model.scenario import Scenario, ScenarioValue

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("DERIVE_UPDATE_GOLDEN", "") not in ("", "0")


def _changed_scenario(base: Scenario) -> Scenario:
    """The fixture scenario with twice the work per job: the instance claim breaks."""
    values = dict(base.values)
    values["work"] = ScenarioValue("work", sp.Integer(8 * 10**12), "--set work=8 TFLOP/seq", None, "--set")
    return Scenario("fixture+work=8 TFLOP/seq", values, (), frozenset(), (*base.layers, "--set work=8 TFLOP/seq"))


def _documents(out: Path) -> dict[str, str]:
    lib = doclib.library()
    base = doclib.scenario()
    scenario = _changed_scenario(base)
    report = Checker(lib, scenario).check()
    baseline = Checker(lib, base).check()
    figures = [render_figure(f, lib, scenario, out) for f in lib.figures]
    verdicts = {r.id: r.verdict for r in report.results}
    graph = render_graph(lib, verdicts, out)
    chapter_graphs = {t.name: render_chapter_graph(lib, verdicts, t.name, out) for t in lib.topics}
    model = document_model(lib, scenario, report, baseline=baseline, figures=figures, graph=graph,
                           thresholds=compute_thresholds(lib, scenario), chapter_graphs=chapter_graphs)
    return {
        "small.md": render("markdown", "derivation.md.j2", model),
        "small.tex": render("latex", "derivation.tex.j2", model),
        "small_claims.tex": render("latex", "claims.tex.j2", claims_model(lib, scenario, report)),
        "small_values.tex": render("latex", "values.tex.j2", values_model(lib, scenario, report)),
    }


@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    return _documents(tmp_path_factory.mktemp("figures"))


@pytest.mark.parametrize("name", ["small.md", "small.tex", "small_claims.tex", "small_values.tex"])
def test_golden(documents, name):
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(exist_ok=True)
        path.write_text(documents[name], encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with DERIVE_UPDATE_GOLDEN=1"
    assert documents[name] == path.read_text(encoding="utf-8"), (
        f"{name} differs from its golden file; if the change is intended, regenerate with DERIVE_UPDATE_GOLDEN=1")


def test_document_has_every_declaration_and_the_breakage(documents):
    md, tex = documents["small.md"], documents["small.tex"]
    lib = doclib.library()
    for d in lib.ordered():
        assert d.id in md and markdown_heading(d.title) in md
        assert rf"\label{{decl:{d.short}}}" in tex
    assert "## C. What breaks" in md and "money.run_time_example" not in md.split("## C. What breaks")[1].split("##")[0]
    assert "[The example batch runs in about 16 ms](#run_time_example) | proved | **refuted**" in md
    assert r"\section{What breaks}" in tex
    assert "> [!WARNING]" in md and r"\inconsistencybox" in tex
    assert "Figure skipped: the scenario gives no value for price." in md
    assert r"\label{eq:batch_optimum}" not in tex and r"\label{eq:balance}" in tex
    assert r"\newcommand{\claimBalance}" in documents["small_claims.tex"]
    assert r"\newcommand{\valRunTime}{\texorpdfstring{\deriveValue{run_time}}{32 ms}}" in documents["small_values.tex"]
    assert r"\expandafter\def\csname derive@n@run_time\endcsname{32}" in documents["small_values.tex"]


def test_documents_are_deterministic(documents, tmp_path):
    assert _documents(tmp_path) == documents


def test_missing_field_is_an_error_not_an_empty_string():
    with pytest.raises(DeriveError, match="undefined"):
        render("markdown", "derivation.md.j2", {"title": "x"})


def test_latex_templates_use_delimiters_that_cannot_clash_with_tex():
    from derive.documents.render import _environment

    env = _environment("latex")
    text = r"\frac{{a}}{b} {% x %} {# y #} \VAR{v} \BLOCK{if v}yes\BLOCK{endif} \#{ a comment }"
    assert env.from_string(text).render(v=1) == r"\frac{{a}}{b} {% x %} {# y #} 1 yes "


@pytest.mark.parametrize("unit, si", [
    ("TB/s", r"\tera\byte\per\second"),
    ("FLOP/(param*token)", r"\flop\per\param\per\token"),
    ("FLOP/param/token", r"\flop\per\param\per\token"),
    ("param token", r"\param\token"),
    ("USD/h", r"\usd\per\hour"),
    ("token/seq", r"\token\per\sequence"),
    ("ms", r"\milli\second"),
    ("s^2", r"\second\squared"),
    ("GiB", r"\gibi\byte"),
    ("FLOPS", r"\flop\per\second"),
    ("1", ""),
])
def test_siunitx_units(unit, si):
    assert siunitx_unit(unit) == si


def test_value_text_both_formats():
    v = value_text(sp.Rational(72, 5), "ms")
    assert v["tex"] == r"\SI{14.4}{\milli\second}" and v["md"] == "14.4 ms"
    big = value_text(7 * 10**11, "param")
    assert big["tex"] == r"\SI{7e11}{\param}" and big["md"] == "700G param"
    assert value_text(200000, "token/seq")["md"] == "200k token/seq"  # the shared formatter shortens counts
    assert value_text(6, "1")["tex"] == r"\num{6}"


@pytest.mark.parametrize(("rel", "latex"), [
    (logic.eq(doclib.rate.sym, 312 * 10**12), r"R = 312\,\mathrm{TFLOP/s}"),
    (logic.le(doclib.load_time_q.sym, sp.Rational(1, 64)), r"t_{\mathrm{load}} \le 15.625\,\mathrm{ms}"),
    (logic.lt(10**12, doclib.rate.sym), r"1\,\mathrm{TFLOP/s} < R"),  # the number on the left
    (logic.ge(doclib.size.sym, 80 * 10**9), r"S \ge 80\,\mathrm{GB}"),
    (logic.ge(doclib.jobs.sym, 128_000), r"J \ge 128\mathrm{k}\,\mathrm{seq}"),
    (logic.eq(doclib.price.sym, sp.Rational(1, 1800)), r"p = \$2/\mathrm{h}"),
    (logic.ge(doclib.jobs.sym * doclib.work.sym, 10**16), r"J W_{\mathrm{op}} \ge 10\,\mathrm{PFLOP}"),
    # rounded where nothing short is exact, and the relation says so
    (logic.eq(doclib.rate.sym, sp.Rational(7703545352014791, 10)), r"R \approx 770.4\,\mathrm{TFLOP/s}"),
    (logic.ge(doclib.rate.sym, sp.Rational(7703545352014791, 10)), r"R \gtrsim 770.4\,\mathrm{TFLOP/s}"),
    (logic.lt(doclib.rate.sym, sp.Rational(7703545352014791, 10)), r"R \lesssim 770.4\,\mathrm{TFLOP/s}"),
    (logic.Rel(doclib.rate.sym, "!=", 3), r"R \neq 3\,\mathrm{FLOP/s}"),
    (logic.Rel(doclib.rate.sym, "!=", sp.Rational(10**15 + 1, 3)), r"R \neq \frac{1000000000000001}{3}"),
    # dimensionless: short numbers as the printer writes them, long ones shortened
    (logic.le(doclib.two.sym, 100), r"c_{2} \le 100"),
    (logic.le(doclib.two.sym, sp.Rational(1, 3)), r"c_{2} \le \frac{1}{3}"),
    (logic.le(doclib.two.sym, 10**9), r"c_{2} \le 10^{9}"),
    (logic.le(doclib.two.sym, 123456789), r"c_{2} \lesssim 1.235 \times 10^{8}"),
    (logic.gt(doclib.rate.sym, 0), r"R > 0"),
    (logic.eq(doclib.rate.sym, doclib.bandwidth.sym * 300), r"R = 300 W"),  # no plain number side
])
def test_numbers_in_formulas_carry_units(rel, latex):
    mb = ModelBuilder(doclib.library(), doclib.scenario(), Report(doclib.scenario(), []))
    assert mb.formula_latex(rel) == latex
    both = logic.And((rel, logic.gt(doclib.rate.sym, 10**15)))
    assert mb.formula_latex(both) == latex + r" \;\wedge\; R > 1\,\mathrm{PFLOP/s}"


def test_latex_width_is_monotone_in_content():
    assert latex_width(r"\frac{a}{b}") < latex_width("a b c")
    assert latex_width(r"N_{\mathrm{tot}}") < latex_width(r"N \mathrm{tot}")


def test_curves_are_vectorised_and_exact_enough():
    lib = doclib.library()
    scenario = doclib.scenario()
    jobs = lib.quantities["jobs"].sym
    fn = _compile(lib, scenario, lib.quantities["total_time"].sym, jobs)
    xs = np.array([1.0, 10.0, 50.0, 100.0, 1000.0])
    ys = fn(xs)
    assert ys.shape == xs.shape
    # total_time = max(J * 4e12 / (2 * 1e15), 200e9 / 2e12)
    assert np.allclose(ys, np.maximum(xs * 4e12 / 2e15, 0.1))


def test_figures_are_byte_identical(tmp_path):
    lib = doclib.library()
    scenario = doclib.scenario()
    spec = lib.figures[0]
    a = render_figure(spec, lib, scenario, tmp_path / "a")
    b = render_figure(spec, lib, scenario, tmp_path / "b")
    assert a.files == b.files == {"svg": "figures/time_vs_jobs.svg", "pdf": "figures/time_vs_jobs.pdf"}
    for name in ("time_vs_jobs.svg", "time_vs_jobs.pdf"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    svg = (tmp_path / "a" / "time_vs_jobs.svg").read_text()
    assert "<dc:date>" not in svg


def test_figure_without_inputs_is_skipped_with_a_note(tmp_path):
    lib = doclib.library()
    result = render_figure(lib.figures[1], lib, doclib.scenario(), tmp_path)
    assert result.skipped and result.note == "Figure skipped: the scenario gives no value for price."
    assert not list(tmp_path.iterdir())
    drawn = render_figure(lib.figures[1], lib, doclib.scenario(with_price=True), tmp_path)
    assert not drawn.skipped


@pytest.mark.parametrize(("value", "unit", "md", "tex"), [
    (622329856, "param", "622,329,856 param", r"\num{622329856}\,\si{"),
    (sp.Rational(3997696), "byte/token", "3,997,696 byte/token", r"\num{3997696}"),
    (sp.Rational(7, 3), "param", "7/3 param", r"\tfrac{7}{3}"),
])
def test_an_exact_value_a_document_prints_groups_its_digits(value, unit, md, tex):
    """A value read exactly (not rounded to a prefix) was printed as 622329856 param in the documents."""
    from derive.documents.values_text import exact_value_text
    from derive.model.declarations import Quantity

    out = exact_value_text(sp.Rational(value), Quantity("n", "n", unit, "a count"))
    assert out["md"] == md and tex in out["tex"] and out["eq_md"] == "="
