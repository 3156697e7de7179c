"""Values outside a definition's domain, said in words: every verdict or value that a definition's ``domain`` (or
what a derived quantity declares) leaves without meaning names the definition's id, the condition as declared in
the quantities' names, the values that break it and the layer that gave them, with a hint.  Wording only: the
verdicts are the kernel's (``inconsistent`` where a domain is a hypothesis, ``unknown`` where a declaration is
read), the same as before the words were added."""

from __future__ import annotations

import json
import textwrap

import pytest
import sympy as sp

from derive import Claim, Definition, Quantity, derived, logic
from derive.checking.checker import Checker
from derive.model.evaluate import domain_breaks, evaluate
from derive.model.scenario import Scenario, ScenarioValue, build_scenario
from tests.libtools import make_library, run_cli

SRC = derived("domain messages")
R = sp.Rational


def Q(name, domain="positive"):  # noqa: N802 - reads like the constructor it wraps
    return Quantity(name, name, "1", name, domain=domain)


a, b, k = Q("a"), Q("b"), Q("k", domain="nonnegative")
cb = Q("cb")
cb_def = Definition("t.cb", title="cb", statement="s", source=SRC, defines=cb, expr=1 / (b.sym - a.sym),
                    domain=logic.lt(a.sym, b.sym))
d = Q("d")  # declared positive, defined as a difference: a declaration read, never assumed
d_def = Definition("t.d", title="d", statement="s", source=SRC, defines=d, expr=a.sym - b.sym)
inv = Q("inv")
inv_def = Definition("t.inv", title="inv", statement="s", source=SRC, defines=inv, expr=1 / k.sym,
                     domain=logic.gt(k.sym, 0))


def claim(name, goal, **kw):
    return Claim(f"t.{name}", title=name, statement="s", source=SRC, goal=goal, instance=True, **kw)


def scenario(values, origin="--set"):
    return Scenario("s", {n: ScenarioValue(n, R(v), "test", origin=origin) for n, v in values.items()})


LIB = make_library(a, b, k, cb, d, inv, cb_def, d_def, inv_def,
                   claim("cb_pos", logic.gt(cb.sym, 0)), claim("cb_neg", logic.lt(cb.sym, 0)),
                   claim("d_small", logic.lt(d.sym, 5)), claim("inv_big", logic.gt(inv.sym, 1)),
                   claim("hyp", logic.gt(a.sym, 0), hypotheses=(logic.gt(cb.sym, 0),)))


def check(values, origin="--set"):
    return Checker(LIB, scenario(values, origin)).check().by_id()


# check: the verdicts stay the kernel's, the reasons say which definition and why ------------------------------

@pytest.mark.parametrize("cid", ["t.cb_pos", "t.cb_neg", "t.hyp"])
def test_an_instance_claim_outside_a_domain_names_the_definition_condition_and_values(cid):
    res = check({"a": 3, "b": 2})[cid]
    assert res.verdict == "inconsistent"  # as the kernel decides it: never proved, never refuted
    for words in ("domain of t.cb", "a = 3 ≥ b = 2", "cb is defined only where a < b", "(definition t.cb)",
                  "hint: a = 3, b = 2 from --set", "with --set"):
        assert words in res.reason, res.reason
    assert "3 < 2 is false" not in res.reason  # no longer numbers alone


def test_the_hint_names_the_layer_that_gave_each_value():
    reason = check({"a": 3, "b": 2}, origin="scenario lecture")["t.cb_pos"].reason
    assert "a = 3, b = 2 from scenario lecture" in reason


@pytest.mark.parametrize(("cid", "verdict"), [("t.cb_pos", "proved"), ("t.cb_neg", "refuted"), ("t.hyp", "proved")])
def test_inside_the_domain_the_claims_are_decided_and_say_nothing_of_domains(cid, verdict):
    res = check({"a": 2, "b": 3})[cid]
    assert res.verdict == verdict
    assert "domain" not in (res.reason or "")


def test_a_broken_declaration_of_the_goal_stays_unknown_and_says_which():
    res = check({"a": 1, "b": 2})["t.d_small"]
    assert res.verdict == "unknown"
    for words in ("d = a - b = -1", "d is declared positive (definition t.d)", "a = 1, b = 2 from --set",
                  "give values where d is positive"):
        assert words in res.reason, res.reason


def test_a_part_without_a_value_names_the_domain_that_excludes_it():
    res = check({"k": 0})["t.inv_big"]
    assert res.verdict == "unknown"
    assert "not defined at the scenario's values" in res.reason
    for words in ("k = 0 ≤ 0", "inv is defined only where k > 0 (definition t.inv)", "k = 0 from --set"):
        assert words in res.reason, res.reason


def test_the_claims_own_hypothesis_is_named_as_the_layer_of_a_value_it_fixes():
    lib = make_library(a, b, cb, cb_def, claim("fixed", logic.gt(cb.sym, 0), hypotheses=(logic.eq(a.sym, 5),)))
    res = Checker(lib, scenario({"a": 1, "b": 2})).check().by_id()["t.fixed"]
    assert res.verdict == "inconsistent"
    assert "a = 5 from the claim's hypotheses" in res.reason and "b = 2 from --set" in res.reason


def test_contradicting_assumptions_without_a_domain_keep_the_kernels_words():
    x = Q("x")
    lo = claim("lo", logic.gt(x.sym, 0), hypotheses=(logic.lt(x.sym, 1), logic.gt(x.sym, 2)))
    res = Checker(make_library(x, lo), scenario({"x": 3})).check().by_id()["t.lo"]
    assert res.verdict == "inconsistent" and "domain" not in res.reason
    assert "the assumptions contradict each other: 3 < 1 is false" in res.reason


# eval: the same words, and the hint ---------------------------------------------------------------------------

def test_eval_outside_a_domain_names_the_definition_and_hints_at_the_layer():
    ev = evaluate(LIB, scenario({"a": 3, "b": 2}), "cb")
    assert ev.exact is None
    assert ev.reason == "a = 3 ≥ b = 2; cb is defined only where a < b (definition t.cb)"
    assert ev.hint == "a = 3, b = 2 from --set; give values where cb is defined with --set (or another preset)"
    assert ev.to_json()["hint"] == ev.hint


def test_domain_breaks_reads_nested_conditions_in_order():
    e = Q("e")
    both = Q("both")
    both_def = Definition("t.both", title="both", statement="s", source=SRC, defines=both, expr=a.sym + e.sym,
                          domain=logic.Or((logic.gt(a.sym, 5), logic.And((logic.gt(e.sym, 1), logic.lt(a.sym, 1))))))
    lib = make_library(a, e, both, both_def)
    [brk] = domain_breaks(lib, scenario({}), [both.sym], frozenset(), {a.sym: R(2), e.sym: R(3)})
    assert brk.declared == "a > 5 or (e > 1 and a < 1)"
    assert brk.failing == "a = 2 ≤ 5 and a = 2 ≥ 1"
    assert domain_breaks(lib, scenario({}), [both.sym], frozenset(), {a.sym: R(6), e.sym: R(3)}) == []


def test_margin_at_a_scenario_value_outside_a_domain_names_it():
    from derive.whatif.margin import margin

    m = margin(LIB, scenario({"a": 3, "b": 2}), "t.cb_pos", "b", verify=False)
    assert m.reading_at_value == "inconsistent"
    [note] = [n for n in m.notes if n.startswith("at the scenario value")]
    assert "a = 3 ≥ b = 2; cb is defined only where a < b (definition t.cb)" in note and "from --set" in note
    inside = margin(LIB, scenario({"a": 2, "b": 3}), "t.cb_pos", "b", verify=False)
    assert not [n for n in inside.notes if n.startswith("at the scenario value")]


# the command line: exit code and the one line that says it -------------------------------------------------------

LIBRARY_FILE = '''
    """A definition with a domain, checked at a scenario outside it."""
    from derive import Claim, Definition, Quantity, derived, logic

    a = Quantity("dom_a", "a", "1", "a")
    b = Quantity("dom_b", "b", "1", "b")
    cb = Quantity("dom_cb", "c", "1", "one over the gap", domain="real")
    cb_def = Definition("dom.cb", title="cb", statement="One over b - a.", source=derived("t"), defines=cb,
                        expr=1 / (b.sym - a.sym), domain=logic.lt(a.sym, b.sym))
    here = Claim("dom.here", title="cb is positive here", statement="At the scenario cb is positive.",
                 source=derived("t"), goal=logic.gt(cb.sym, 0), instance=True, uses=(cb_def,))
'''


@pytest.fixture
def user_library(tmp_path, monkeypatch):
    monkeypatch.setenv("DERIVE_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "dom.py"
    path.write_text(textwrap.dedent(LIBRARY_FILE))
    return str(path)


def test_cli_check_outside_a_domain_exits_1_with_one_reason_line(capsys, user_library):
    code, out, err = run_cli(capsys, ["check", "--library", user_library, "--set", "dom_a=3", "--set", "dom_b=2"])
    assert code == 1, err  # a surprise: inconsistent where proved was expected
    [line] = [ln for ln in out.splitlines() if "reason:" in ln]
    assert ("reason: the values lie outside the domain of dom.cb: dom_a = 3 ≥ dom_b = 2; dom_cb is defined only "
            "where dom_a < dom_b (definition dom.cb); the claim's assumptions contradict each other there; "
            "hint: dom_a = 3, dom_b = 2 from --set; give values where dom_cb is defined with --set") in line
    code, out, _ = run_cli(capsys, ["check", "--library", user_library, "--set", "dom_a=1", "--set", "dom_b=2"])
    assert code == 0 and "proved" in out


def test_cli_check_json_carries_the_reason(capsys, user_library):
    code, out, _ = run_cli(capsys, ["check", "--json", "--library", user_library, "--set", "dom_a=3",
                                    "--set", "dom_b=2"])
    assert code == 1
    [row] = [r for r in json.loads(out)["claims"] if r["id"] == "dom.here"]
    assert row["verdict"] == "inconsistent" and "definition dom.cb" in row["reason"]


def test_cli_eval_outside_a_domain_prints_the_value_and_a_hint(capsys, user_library):
    code, out, _ = run_cli(capsys, ["eval", "dom_cb", "--library", user_library, "--set", "dom_a=3",
                                    "--set", "dom_b=2"])
    assert code == 0
    assert "dom_cb = undefined (dom_a = 3 ≥ dom_b = 2; dom_cb is defined only where dom_a < dom_b " \
           "(definition dom.cb))" in out
    assert "hint: dom_a = 3, dom_b = 2 from --set; give values where dom_cb is defined with --set" in out


def test_the_lecture_outside_a_domain_names_the_definition(lecture_library):
    sc = build_scenario(lecture_library, sets=["kv_bytes_per_token=0 B/token"])
    res = Checker(lecture_library, sc).check(["capacity.memory_fits_in_hbm"]).by_id()
    r = res["capacity.memory_fits_in_hbm"]
    assert r.verdict == "inconsistent"
    assert "domain of roofline.kv_bytes_per_sequence" in r.reason
    assert "kv_bytes_per_token = 0 byte/token from --set" in r.reason


def test_the_public_api_gives_the_same_reason(user_library):
    import derive

    lib = derive.load(user_library)
    report = derive.check("dom.here", library=lib, set={"dom_a": "3", "dom_b": "2"})
    r = report["dom.here"]
    assert r.verdict == "inconsistent"
    assert "dom_cb is defined only where dom_a < dom_b (definition dom.cb)" in r.reason
    assert "dom_a = 3, dom_b = 2 from --set" in r.reason
    values = derive.evaluate("dom_cb", library=lib, set={"dom_a": "3", "dom_b": "2"})
    assert values["dom_cb"].hint.startswith("dom_a = 3, dom_b = 2 from --set")
