"""The site's live page (``derive.documents.live``): formulas printed as JavaScript, and in headless Chromium the
page's values, feasibility and instance verdicts held to ``derive eval``, ``derive check`` and the feasibility
bounds at the same inputs, after changing inputs and presets; its number formatter held to the Python one."""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
import headless  # noqa: E402

from derive.documents.build import build  # noqa: E402
from derive.documents.live import LIVE_PAGE, js_code  # noqa: E402
from derive.errors import DeriveError  # noqa: E402
from derive.model.declarations import Definition  # noqa: E402
from derive.model.display import canonical_factors, format_value  # noqa: E402
from derive.model.evaluate import evaluate  # noqa: E402
from derive.model.scenario import build_scenario  # noqa: E402
from derive.model.units import format_dimension  # noqa: E402
from derive.whatif.feasibility import feasibility  # noqa: E402

REL = 1e-9


# formulas as JavaScript (no browser) ---------------------------------------------------------------------

x, y = sp.symbols("x y")


@pytest.mark.parametrize("expr, needles", [
    (sp.Piecewise((x, x > y), (y, True)), ['g("x") > g("y")', "?"]),
    (sp.Min(x, y), ["Math.min("]),
    (sp.Max(x, 2 * y), ["Math.max("]),
    (sp.ceiling(x / y), ["Math.ceil("]),
    (sp.floor(x), ["Math.floor("]),
    (sp.sqrt(x) + sp.log(y), ["Math.sqrt(", "Math.log("]),
    (sp.Rational(1, 3) * x, ["1/3"]),
])
def test_library_constructs_print_as_javascript(expr, needles):
    code = js_code(expr)
    assert code is not None
    for n in needles:
        assert n in code, code


@pytest.mark.parametrize("expr", [sp.Function("f")(x), x + sp.Function("G")(x, y), sp.Piecewise((x, x > y))])
def test_what_javascript_cannot_express_has_no_code(expr):
    assert js_code(expr) is None


def test_every_definition_prints_or_is_marked_not_available(lecture_library):
    from derive.checking.checker import Report
    from derive.documents.live import live_data

    sc = build_scenario(lecture_library)
    data = live_data(lecture_library, sc, Report(sc, []), presets={"hardware": [], "models": [], "combos": {}})
    defs = [d for d in lecture_library.ordered() if isinstance(d, Definition)]
    assert set(data["definitions"]) == {d.defines.name for d in defs}
    for d in defs:
        entry = data["definitions"][d.defines.name]
        has_undeclared = bool(d.expr.atoms(sp.core.function.AppliedUndef))
        assert (entry["expr"] is None) == has_undeclared, d.id
    # formulas are stored once each and only point into the code table
    assert len(data["code"]) == len(set(data["code"]))
    assert all(isinstance(i, int) and 0 <= i < len(data["code"])
               for e in data["definitions"].values() if e["expr"] is not None for i in [e["expr"]])


# the page in a browser ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def chromium():
    return headless.require_chromium()


def _site(tmp_path_factory, library, name: str) -> Path:
    out = tmp_path_factory.mktemp(name) / "site"
    build(library, build_scenario(library), out, ("html",))
    return out


@pytest.fixture(scope="module")
def lecture_site(tmp_path_factory, lecture_library):
    return _site(tmp_path_factory, lecture_library, "live-lecture")


@pytest.fixture(scope="module")
def serving_library():
    from derive.model.loader import load_library

    return load_library(["serving"])


@pytest.fixture(scope="module")
def serving_site(tmp_path_factory, serving_library):
    """The serving library's site at its default scenario, built once: the tests only read it (each in a browser of
    its own)."""
    return _site(tmp_path_factory, serving_library, "live-serving")


@pytest.fixture
def page(chromium):
    browser = headless.Browser(chromium)
    yield browser
    browser.close()


def _open(page: headless.Browser, site: Path) -> None:
    page.open((site / LIVE_PAGE).as_uri())
    error = page.js("document.body.getAttribute('data-derive-error')")
    assert error is None, error


def _pick(page: headless.Browser, hardware: str | None = None, model: str | None = None) -> None:
    for element, name in (("live-hardware", hardware), ("live-model", model)):
        if name is not None:
            page.js(f"(function(s){{s.value={json.dumps(name)};s.dispatchEvent(new Event('change'))}})"
                    f"(document.getElementById('{element}'))")


def _type(page: headless.Browser, quantity: str, text: str) -> None:
    page.js(f"(function(b){{b.value={json.dumps(text)};b.dispatchEvent(new Event('change'))}})"
            f"(document.querySelector('input[data-name={json.dumps(quantity)}]'))")


def _derived(page: headless.Browser) -> dict[str, dict]:
    return page.js("""Object.fromEntries(Array.from(document.querySelectorAll('#live-derived tr[data-q]')).map(r => {
        const c = r.querySelector('td.live-value');
        const v = c.hasAttribute('data-value') ? Number(c.getAttribute('data-value')) : null;
        return [r.getAttribute('data-q'), {value: v, state: c.getAttribute('data-state'), text: c.textContent}]; }))""")


def _verdicts(page: headless.Browser) -> dict[str, dict]:
    return page.js("""Object.fromEntries(Array.from(document.querySelectorAll('#live-claims tr[data-claim]')).map(r =>
        [r.getAttribute('data-claim'), {verdict: r.getAttribute('data-live-verdict'),
                                        open: r.getAttribute('data-rests-open')}]))""")


def _scenario_of(page: headless.Browser, library):
    state = page.js("DeriveLive.state()")
    return state, build_scenario(library, hardware=state["hardware"] or None, model=state["model"] or None,
                                 sets=state["sets"])


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL, abs_tol=0.0) or (a == 0 == b)


def _assert_matches_evaluate(library, scenario, derived: dict[str, dict], *, texts: bool = True) -> int:
    """Every derived value on the page against ``derive.model.evaluate`` (the path of ``derive eval``)."""
    compared = 0
    for name, shown in derived.items():
        try:
            ev = evaluate(library, scenario, name)
        except DeriveError:
            assert shown["value"] is None, f"{name}: the page shows {shown['text']}, derive eval has no value"
            continue
        if ev.exact is None:
            assert shown["state"] == "undefined", f"{name}: derive eval says {ev.display}, the page {shown['text']}"
            continue
        if shown["state"] == "na":
            continue  # not available live: said on the page, never a guess
        assert shown["value"] is not None, f"{name}: derive eval gives {ev.display}, the page {shown['text']}"
        assert _close(shown["value"], float(ev.exact)), f"{name}: page {shown['value']!r}, eval {float(ev.exact)!r}"
        if texts:
            assert shown["text"] == format_value(ev.in_unit(), ev.unit), name
        compared += 1
    return compared


def test_live_page_is_part_of_the_site_and_offline(lecture_site):
    html = (lecture_site / LIVE_PAGE).read_text()
    assert 'href="live.html"' in (lecture_site / "index.html").read_text()
    assert "window.LIVE = " in html and "window.LIVE_CODE = " in html and "DeriveLive" in html
    for attr in ("src", "href"):
        for link in __import__("re").findall(attr + r'="([^"]+)"', html):
            assert "://" not in link, link  # nothing from the network


def test_page_at_the_build_scenario_matches_eval_and_check(page, lecture_site, lecture_library):
    _open(page, lecture_site)
    scenario = build_scenario(lecture_library)
    assert _assert_matches_evaluate(lecture_library, scenario, _derived(page)) > 40
    status = {c["id"]: c["verdict"] for c in json.loads((lecture_site / "status.json").read_text())["claims"]}
    live = _verdicts(page)
    decided = [i for i, v in live.items() if v["verdict"] != "na" and not v["open"]]
    assert len(decided) > 20
    for claim_id in decided:
        assert live[claim_id]["verdict"] == status[claim_id], claim_id
    # what the page cannot compute it says, with a reason: claims stated for every value of an input
    assert any(v["verdict"] == "na" for v in live.values())
    assert _derived(page)["revnet_out_first"]["state"] in ("na", "missing")


def _cli(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "derive", *args], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ))


def _preset_args(state: dict) -> list[str]:
    args = []
    if state["hardware"]:
        args += ["--hardware", state["hardware"]]
    if state["model"]:
        args += ["--model", state["model"]]
    for s in state["sets"]:
        args += ["--set", s]
    return args


EVAL_NAMES = ["critical_batch", "step_time", "cost_per_token", "memory_per_chip", "kv_bytes_per_sequence",
              "weight_fetch_time", "critical_context", "drain_time"]


def test_changed_inputs_and_chip_match_derive_eval_and_check(page, lecture_site, lecture_library):
    _open(page, lecture_site)
    _type(page, "batch", "64")
    _type(page, "hbm_bandwidth", "2.5")
    _pick(page, hardware="h200", model="llama3-70b")
    state, scenario = _scenario_of(page, lecture_library)
    assert state["sets"] == ["batch=64 seq", "hbm_bandwidth=2.5 TB/s"]
    assert page.js("document.getElementById('live-cli').textContent") == \
        'derive eval NAME --hardware h200 --model llama3-70b --set "batch=64 seq" --set "hbm_bandwidth=2.5 TB/s"'
    derived = _derived(page)
    proc = _cli(["eval", *EVAL_NAMES, "--json", *_preset_args(state)])
    assert proc.returncode == 0, proc.stderr
    for row in json.loads(proc.stdout)["values"]:
        shown = derived[row["name"]]
        assert shown["value"] is not None, row["name"]
        assert _close(shown["value"], float(sp.Rational(row["exact"]))), (row["name"], shown, row)
        assert shown["text"] == row["display"].split(" (note:")[0], row["name"]
    assert _assert_matches_evaluate(lecture_library, scenario, derived) > 40

    # another chip, the edits kept: the values move with it
    _pick(page, hardware="b200")
    state, scenario = _scenario_of(page, lecture_library)
    assert state["hardware"] == "b200"
    assert _assert_matches_evaluate(lecture_library, scenario, _derived(page)) > 40

    # each instance claim's truth against derive check's verdict at the same inputs
    live = _verdicts(page)
    decided = sorted(i for i, v in live.items() if v["verdict"] != "na" and not v["open"])
    assert len(decided) > 20
    proc = _cli(["check", *decided, "--json", *_preset_args(state)])
    assert proc.returncode in (0, 1), proc.stderr
    checked = {c["id"]: c["verdict"] for c in json.loads(proc.stdout)["claims"]}
    assert {"proved", "refuted"} <= {checked[i] for i in decided}  # both kinds of answer are compared
    for claim_id in decided:
        assert live[claim_id]["verdict"] == checked[claim_id], claim_id


def test_an_infeasible_scenario_names_the_violated_bound(page, lecture_site, lecture_library):
    _open(page, lecture_site)
    _pick(page, hardware="a100-80gb", model="llama3-405b")
    _type(page, "batch", "4096")
    _, scenario = _scenario_of(page, lecture_library)
    expected = feasibility(lecture_library, scenario)
    assert not expected.feasible
    assert page.js("document.body.getAttribute('data-feasible')") == "0"
    shown = page.js("Array.from(document.querySelectorAll('#live-feasibility li[data-holds=false]'))"
                    ".map(li => li.firstChild.textContent)")
    assert shown == expected.notes
    # back to one sequence: the weights alone still do not fit on one A100 node for 405B
    _type(page, "batch", "1")
    _, scenario = _scenario_of(page, lecture_library)
    assert (page.js("document.body.getAttribute('data-feasible')") == "1") == feasibility(lecture_library,
                                                                                         scenario).feasible


def test_an_input_outside_its_domain_is_refused(page, lecture_site):
    _open(page, lecture_site)
    before = _derived(page)["step_time"]["value"]
    _type(page, "batch", "-3")
    assert page.js("document.querySelector('tr[data-input=batch]').getAttribute('data-invalid')") == \
        "batch must be positive"
    assert page.js("DeriveLive.state()")["sets"] == []
    assert _derived(page)["step_time"]["value"] == before
    _type(page, "batch", "3 seq")  # a number only: the unit is the column beside it
    assert page.js("document.querySelector('tr[data-input=batch]').getAttribute('data-invalid')") == "not a number"


def test_serving_library_page_follows_presets(page, serving_site, serving_library):
    _open(page, serving_site)
    _pick(page, hardware="h100-sxm", model="deepseek-v3")
    _type(page, "batch", "64")
    _, scenario = _scenario_of(page, serving_library)
    assert _assert_matches_evaluate(serving_library, scenario, _derived(page)) > 60


def test_serving_page_applies_a_layout_as_the_engine_does(page, serving_site, serving_library):
    """A degree typed on the page fills the layout's other degrees and gives chips and stages from it, as
    ``--set tp=8`` does (Llama 3 405B's TP8 x PP2 over two H100 nodes); the shares of experts read follow the
    batch of an MoE model (its link to the uniform-routing formula)."""
    _open(page, serving_site)
    _pick(page, hardware="h100-sxm", model="llama3-405b")
    _type(page, "tp", "8")
    _type(page, "pp", "2")
    state, scenario = _scenario_of(page, serving_library)
    assert scenario.value("chips") == 8 and scenario.value("stages") == 2
    assert _assert_matches_evaluate(serving_library, scenario, _derived(page)) > 60
    _open(page, serving_site)
    _pick(page, hardware="h200", model="deepseek-v3")
    _type(page, "batch", "32")
    _, scenario = _scenario_of(page, serving_library)
    assert 0 < scenario.value("expert_read_fraction") < 1
    assert _assert_matches_evaluate(serving_library, scenario, _derived(page)) > 60


def test_serving_page_needs_no_input_that_a_factor_of_zero_multiplies(page, serving_site, serving_library):
    """One chip has no all-reduce: its floor is Min(1, tp - 1) times the payload's time, 0 at tp = 1 whatever the
    payload, as derive eval gives it (sympy's 0 * x = 0); at tp = 2 the payload is needed."""
    _open(page, serving_site)
    _pick(page, hardware="h100-sxm", model="llama3-8b")
    _type(page, "tp", "1")
    _, scenario = _scenario_of(page, serving_library)
    derived = _derived(page)
    assert evaluate(serving_library, scenario, "allreduce_payload_floor").exact == 0
    assert derived["allreduce_payload_floor"]["value"] == 0, derived["allreduce_payload_floor"]
    assert _assert_matches_evaluate(serving_library, scenario, derived) > 60
    _type(page, "tp", "2")
    _, scenario = _scenario_of(page, serving_library)
    derived = _derived(page)
    assert derived["allreduce_payload_floor"]["text"] == "needs allreduce_payload", derived["allreduce_payload_floor"]
    assert _assert_matches_evaluate(serving_library, scenario, derived) > 60


_OWN_CHIP = """model = "llama3-8b"
[values.flops]
value = "312 TFLOP/s"
source = "a chip of the reader's own: scale-up links, no scale-out values"
[values.hbm_bandwidth]
value = "2 TB/s"
source = "the reader's"
[values.hbm_capacity]
value = "80 GB"
source = "the reader's"
[values.scaleup_domain]
value = "8"
source = "the reader's"
[values.scaleup_bandwidth]
value = "300 GB/s"
source = "the reader's"
[values.scaleup_latency]
value = "3 us"
source = "the reader's"
"""


def test_serving_page_reads_a_branch_without_the_inputs_of_the_other(page, tmp_path_factory, serving_library):
    """A site built at the reader's own chip, which gives scale-up links and no scale-out values: a tensor-parallel
    group inside its 8-chip domain is priced on the scale-up links alone (the branch the page reads, as derive eval
    does), and one past it needs the scale-out bandwidth, on the page as in derive eval."""
    folder = tmp_path_factory.mktemp("live-serving-branch")
    (folder / "own.toml").write_text(_OWN_CHIP)
    scenario_file = str(folder / "own.toml")
    site = folder / "site"
    build(serving_library, build_scenario(serving_library, scenario=scenario_file), site, ("html",))
    _open(page, site)
    for tp, inside in (("8", True), ("16", False)):
        _type(page, "tp", tp)
        state = page.js("DeriveLive.state()")
        scenario = build_scenario(serving_library, scenario=scenario_file, sets=state["sets"])
        assert "scaleout_bandwidth" not in scenario.values
        derived = _derived(page)
        link = derived["tp_link_bandwidth"]
        if inside:
            assert link["value"] == float(scenario.value("scaleup_bandwidth")), link
        else:
            assert link["value"] is None and "scaleout_bandwidth" in link["text"], link
        assert _assert_matches_evaluate(serving_library, scenario, derived) > 40


def test_serving_page_counts_the_pools_in_their_own_units(page, serving_site, serving_library):
    """Pool sizes typed in prefill_chip and decode_chip (counts the serving library declares) give the rates per
    prefill, decode and deployed chip that derive eval gives, each printed in its unit by the page's formatter."""
    _open(page, serving_site)
    # DeepSeek's published units (4 prefill nodes, 18 decode nodes of 8 H800) at its average rates per node
    for name, text in (("prefill_chips", "32"), ("decode_chips", "144"), ("input_token_rate", "294800"),
                       ("output_token_rate", "266400")):
        _type(page, name, text)
    _, scenario = _scenario_of(page, serving_library)
    assert scenario.value("prefill_chips") == 32 and scenario.value("decode_chips") == 144
    derived = _derived(page)
    assert derived["deployed_chips"]["text"] == "176"
    assert derived["input_rate_per_prefill_chip"]["text"] == "9,213 token/(s·prefill_chip)"
    assert derived["output_rate_per_decode_chip"]["text"] == "1,850 token/(s·decode_chip)"
    assert derived["output_rate_per_deployed_chip"]["text"] == "1,514 token/s"
    assert _assert_matches_evaluate(serving_library, scenario, derived) > 60
    units = ["prefill_chip", "1/decode_chip", "token/(s·prefill_chip)", "USD/(h·decode_chip)", "decode_chip^2"]
    infos = [{"unit": u, "factors": [list(f) for f in canonical_factors(u)]} for u in units]
    values = _sample_values()
    got = page.js(f"(function(vs, us){{return us.map(u => vs.map(v => DeriveLive.show(v, u)))}})"
                  f"({json.dumps(values)}, {json.dumps(infos)})")
    mismatches = [(u, v, shown, format_value(v, u)) for u, row in zip(units, got, strict=True)
                  for v, shown in zip(values, row, strict=True) if shown != format_value(v, u)]
    assert not mismatches, mismatches[:10]


# the number formatter: the page's mirror against derive.model.display ---------------------------------------

def _sample_values() -> list[float]:
    rng = random.Random(20261127)
    out = [0.0, 1.0, -1.0, 999999.0, 1e6, 10000.0, 9999.5, 2400.0, 0.5, 1 / 3, 2 / 3]
    for exp in range(-16, 31):
        for mant in (1, 1.2345, 9.9995, 999.95, 2.5, 3.35, 7.134, 0.5, 123456, 1 / 3, 4.5e-3):
            out += [mant * 10.0**exp, -mant * 10.0**exp]
    out += [10 ** rng.uniform(-15, 28) * rng.choice((1, -1)) for _ in range(400)]
    out += [float(rng.randint(1, 10**7)) for _ in range(100)]
    return out


def _sample_units(library) -> list[str]:
    units = {format_dimension(q.dimension) for q in library.quantities.values()}
    units |= {"GiB", "MiB/s", "USD", "USD/token", "USD/s", "USD/h", "s", "ms", "token/seq", "FLOP/byte", "1", "%"}
    return sorted(units)


def test_page_formatter_matches_the_python_formatter(page, lecture_site, lecture_library):
    _open(page, lecture_site)
    values, units = _sample_values(), _sample_units(lecture_library)
    mismatches = _formatter_mismatches(page, values, units)
    assert not mismatches, mismatches[:10]
    assert len(values) * len(units) > 10_000


def _formatter_mismatches(page, values: list, units: list[str]) -> list:
    """(unit, value, the page's text, Python's) wherever the page's formatter shows a value otherwise."""
    infos = [{"unit": u, "factors": [list(f) for f in canonical_factors(u)]} for u in units]
    got = page.js(f"(function(vs, us){{return us.map(u => vs.map(v => DeriveLive.show(v, u)))}})"
                  f"({json.dumps(values)}, {json.dumps(infos)})")
    return [(u, v, shown, format_value(v, u)) for u, row in zip(units, got, strict=True)
            for v, shown in zip(values, row, strict=True) if shown != format_value(v, u)]


def test_page_formatter_reads_money_per_pool_chip_per_hour(page, lecture_site):
    """A rent per chip of a pool a library counts reads per hour in the page as in Python ($2/(h·prefill_chip)),
    though the page's formatter knows no library's counts: any word outside the grammar's is one."""
    from theorems.serving import disaggregation  # noqa: F401  (declares prefill_chip and decode_chip)

    _open(page, lecture_site)
    units = ["USD/(s·prefill_chip)", "USD/(s·decode_chip)", "token/(s·prefill_chip)"]
    mismatches = _formatter_mismatches(page, _sample_values(), units)
    assert not mismatches, mismatches[:10]
    assert format_value(1 / 1800, "USD/(s·prefill_chip)") == "$2/(h·prefill_chip)"


# the printed formulas, evaluated in the browser, against sympy -------------------------------------------

PRINTED = [sp.Piecewise((x, x > y), (y, True)), sp.Min(x, y), sp.Max(x, 2 * y), sp.ceiling(x / y), sp.floor(x * y),
           sp.sqrt(x) + sp.log(y), sp.exp(-x) * y ** sp.Rational(3, 2), sp.Abs(x - y),
           x ** 2 / (1 + y) - sp.Rational(1, 7)]
POINTS = [(1.5, 2.25), (3.0, 0.5), (7.0, 7.0), (0.125, 10.0), (1e6, 3e-3)]


def test_printed_formulas_evaluate_as_sympy_does(page, lecture_site):
    _open(page, lecture_site)
    codes = [js_code(e) for e in PRINTED]
    got = page.js("(function(points){return [" + ",".join(
        f"points.map(p => (function(g){{return {c};}})(n => n === 'x' ? p[0] : p[1]))" for c in codes)
        + f"]}})({json.dumps(POINTS)})")
    for expr, row in zip(PRINTED, got, strict=True):
        for (a, b), value in zip(POINTS, row, strict=True):
            expected = float(expr.subs({x: sp.Rational(a), y: sp.Rational(b)}))
            assert math.isclose(value, expected, rel_tol=1e-12), (expr, a, b, value, expected)


@pytest.fixture(scope="module")
def shared_page(chromium, lecture_site):
    browser = headless.Browser(chromium)
    _open(browser, lecture_site)
    yield browser
    browser.close()


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(min_value=-1e30, max_value=1e30, allow_nan=False, allow_infinity=False), min_size=40,
                max_size=40),
       st.sampled_from(["byte/s", "FLOP/s", "s", "USD/token", "USD/s", "token/seq", "GiB", "seq", "FLOP/byte", "1"]))
def test_page_formatter_agrees_on_any_float(shared_page, values, unit):
    info = {"unit": unit, "factors": [list(f) for f in canonical_factors(unit)]}
    got = shared_page.js(f"{json.dumps(values)}.map(v => DeriveLive.show(v, {json.dumps(info)}))")
    assert got == [format_value(v, unit) for v in values]


# a pasted config.json ------------------------------------------------------------------------------------------

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "configs"


def _paste(page: headless.Browser, text: str) -> str | None:
    """Paste ``text`` and read it; the one line the page says when it refuses it (else None)."""
    page.js(f"(function(b){{b.value={json.dumps(text)};document.getElementById('live-paste-read').click()}})"
            "(document.getElementById('live-paste'))")
    return page.js("(function(s){return s.hasAttribute('data-error') ? s.textContent : null})"
                   "(document.getElementById('live-paste-status'))")


PASTED_EVAL = ["weight_fetch_time_floor", "params_total", "params_active", "kv_bytes_per_token", "critical_batch",
               "kv_bytes_per_sequence", "memory_per_chip", "cost_per_token"]


def _assert_eval_matches(page: headless.Browser, args: list[str]) -> None:
    """The page's values (inputs and derived) against ``derive eval`` at the same chip, config and --set."""
    derived, values = _derived(page), page.js("DeriveLive.values()")
    proc = _cli(["eval", *PASTED_EVAL, "--json", *args])
    assert proc.returncode == 0, proc.stderr
    for row in json.loads(proc.stdout)["values"]:
        exact = float(sp.Rational(row["exact"]))
        shown = values.get(row["name"]) if row["name"] in values else derived[row["name"]]["value"]
        assert shown is not None and _close(shown, exact), (row["name"], shown, row)


def test_a_pasted_config_matches_derive_eval_with_that_file(page, lecture_site, lecture_library):
    path = CONFIGS / "llama3_70b.json"
    _open(page, lecture_site)
    _pick(page, hardware="h100-sxm", model="llama3-8b")
    assert _paste(page, path.read_text()) is None
    state = page.js("DeriveLive.state()")
    assert (state["pasted"], state["model"]) == ("llama", "")  # the file replaces the model preset
    assert page.js("document.querySelector('tr[data-input=params_total] td.from').textContent") == \
        "from pasted config.json"
    assert page.js("document.getElementById('live-cli').textContent") == \
        "derive eval NAME --hardware h100-sxm --model config.json"
    _assert_eval_matches(page, ["--hardware", "h100-sxm", "--model", str(path)])
    scenario = build_scenario(lecture_library, hardware="h100-sxm", model=str(path))
    assert _assert_matches_evaluate(lecture_library, scenario, _derived(page)) > 40

    # edits and another chip keep the file: still derive eval's numbers; an FP8 cache (the reader's argument)
    # reads the file again, as --set bytes_per_kv_element hands it to the config reader
    _type(page, "batch", "64")
    _type(page, "bytes_per_kv_element", "1")
    _pick(page, hardware="b200")
    sets = [a for s in page.js("DeriveLive.state()")["sets"] for a in ("--set", s)]
    assert sets == ["--set", "batch=64 seq", "--set", "bytes_per_kv_element=1 byte"]
    _assert_eval_matches(page, ["--hardware", "b200", "--model", str(path), *sets])
    # no chip: the deployment defaults, as derive eval --model config.json alone
    _pick(page, hardware="")
    _assert_eval_matches(page, ["--model", str(path), *sets])
    # a model preset picked after it forgets the file
    _pick(page, model="llama3-8b")
    assert page.js("DeriveLive.state()")["pasted"] is None


@pytest.mark.parametrize("name", ["mixtral-8x7b-v0.1.json", "qwen2-57b-a14b.json"])
def test_a_pasted_moe_config_matches_derive_eval(page, lecture_site, name):
    _open(page, lecture_site)
    _pick(page, hardware="h200")
    assert _paste(page, (CONFIGS / name).read_text()) is None
    _assert_eval_matches(page, ["--hardware", "h200", "--model", str(CONFIGS / name)])


def test_the_page_reads_every_fixture_as_the_engine_reads_the_formulas(page, lecture_site, lecture_library):
    """``DeriveLive.readConfig`` against ``derive.model.config_formulas.read_config`` on every fixture, and on each
    with a field changed, dropped or mistyped: the same refusals, the same values."""
    from derive.model.config_formulas import read_config, refusal

    _open(page, lecture_site)
    readings = lecture_library.live_config_formulas
    configs = [json.loads(p.read_text()) for p in sorted(CONFIGS.glob("*.json"))]
    rng = random.Random(20261127)
    odd = [None, 0, -1, 1.5, True, "8", 2**40 + 1, [], 3, 64, "torch.bfloat16", "int4"]
    for base in list(configs):
        for _ in range(6):
            changed = dict(base)
            key = rng.choice(sorted(base) + ["head_dim", "num_key_value_heads", "dtype", "n_layer"])
            value = rng.choice(odd + ["drop"])
            if value == "drop":
                changed.pop(key, None)
            else:
                changed[key] = value
            configs.append(changed)
    got = page.js(f"{json.dumps(configs)}.map(c => DeriveLive.readConfig(JSON.stringify(c)))")
    accepted = 0
    for config, shown in zip(configs, got, strict=True):
        try:
            reading = read_config(readings, config)
        except DeriveError as err:
            assert shown.get("error") == err.message, (config, shown)
            assert page.js(f"DeriveLive.refusal({json.dumps(err.message)})") == refusal(readings, err.message)
            continue
        assert "error" not in shown, (config, shown)
        assert shown["values"] == {n: float(v) for n, v in reading.values.items()}, config
        assert set(shown["native"]) == reading.native
        accepted += 1
    assert accepted >= 8


def test_a_config_the_page_cannot_read_is_refused_in_one_line_and_changes_nothing(page, lecture_site):
    _open(page, lecture_site)
    _pick(page, hardware="h100-sxm")
    before, state = page.js("DeriveLive.values()"), page.js("DeriveLive.state()")
    line = _paste(page, (CONFIGS / "deepseek_v3.json").read_text())
    assert line is not None and "\n" not in line
    assert line.startswith('model_type "deepseek_v3" is not read here: this page reads glm4, granite, llama, mistral, ')
    assert line.endswith("; for other models run `derive card --model config.json`")
    assert page.js("DeriveLive.values()") == before and page.js("DeriveLive.state()") == state

    line = _paste(page, (CONFIGS / "broken_missing_layers.json").read_text())
    assert line.startswith("missing field 'num_hidden_layers': this page reads ")
    line = _paste(page, '{"model_type": "llama", "hidden_size": 4096,')  # malformed JSON: one line, nothing changes
    assert line is not None and line.startswith("config.json is not valid JSON (") and "\n" not in line
    assert page.js("DeriveLive.values()") == before and page.js("DeriveLive.state()") == state
    assert _paste(page, "[1, 2]") == ("a config.json must hold a JSON object: this page reads glm4, granite, "
                                      "llama, mistral, mixtral, olmo2, phi3, qwen2, qwen2_moe, qwen3, qwen3_moe, "
                                      "seed_oss; for other models run "
                                      "`derive card --model config.json`")


def _notes(page: headless.Browser) -> list[str]:
    return page.js("Array.from(document.querySelectorAll('#live-notes li')).map(li => li.textContent)")


def test_a_model_preset_is_read_again_at_the_kv_size_you_set(page, lecture_site):
    """--set bytes_per_kv_element hands the size to the config reader on the command line: the page reads the
    preset's own [config] again with it (Llama 3 70B's cache halves at one byte), as derive eval does."""
    _open(page, lecture_site)
    _pick(page, hardware="h100-sxm", model="llama3-70b")
    before = page.js("DeriveLive.values()")["kv_bytes_per_token"]
    _type(page, "bytes_per_kv_element", "1")
    assert page.js("DeriveLive.values()")["kv_bytes_per_token"] == before / 2
    _assert_eval_matches(page, ["--hardware", "h100-sxm", "--model", "llama3-70b",
                                "--set", "bytes_per_kv_element=1 byte"])
    assert any("read again from its config" in n for n in _notes(page))


def test_a_preset_the_formulas_do_not_read_says_its_kv_size_is_its_own(page, lecture_site):
    _open(page, lecture_site)
    _pick(page, hardware="h100-sxm", model="deepseek-v3")
    _type(page, "bytes_per_kv_element", "1")
    assert any("keep its own bytes_per_kv_element" in n and "derive eval --model deepseek-v3" in n
               for n in _notes(page))
