"""What a definition declares, read by the kernel: a definition's ``domain``, a derived quantity's declared
domain and integrality.  Side conditions of every expression that uses the quantity (a claim is decided only
where they hold: never ``proved`` nor ``refuted`` outside them), never hypotheses of a goal, obligations of the
definition itself (``Checker.obligations``), and one reading for eval, check, margin and sweep."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive import Claim, Definition, Quantity, derived, logic
from derive.checking.checker import Checker
from derive.model.declarations import Topic
from derive.model.evaluate import evaluate
from derive.model.library import Library
from derive.model.scenario import Scenario, ScenarioValue, build_scenario
from derive.whatif.margin import margin
from derive.whatif.sweep import compiled_claim, resolve_target

R = sp.Rational
SRC = derived("definition domains")
RLIMIT = 2_000_000


def Q(name, domain="positive", integer=False):  # noqa: N802 - reads like the constructor it wraps
    return Quantity(name, name, "1", name, domain=domain, integer=integer)


def D(name, q, expr, domain=None):  # noqa: N802
    return Definition(f"t.{name}", title=name, statement="s", source=SRC, defines=q, expr=expr, domain=domain)


def C(name, goal, **kw):  # noqa: N802
    return Claim(f"t.{name}", title=name, statement="s", source=SRC, goal=goal, **kw)


def library(*items):
    quantities = tuple(i for i in items if isinstance(i, Quantity))
    decls = tuple(i for i in items if not isinstance(i, Quantity))
    return Library([Topic("t", "t", "", quantities, decls)])


def scenario(values):
    return Scenario("s", {k: ScenarioValue(k, R(v), "test") for k, v in values.items()})


def check(lib, values=None, ids=None):
    return Checker(lib, scenario(values or {}), rlimit=RLIMIT).check(ids)


a, b, n, e = Q("a"), Q("b"), Q("n", integer=True), Q("e", integer=True)
cb = Q("cb")
cb_def = D("cb", cb, 1 / (b.sym - a.sym), domain=logic.lt(a.sym, b.sym))
cc = Q("cc")
cc_def = D("cc", cc, 2 * cb.sym + 1)  # a chain: cc goes through cb, and so through its domain
d = Q("d")
d_def = D("d", d, a.sym - b.sym)  # positive by default
te = Q("te", integer=True)
te_def = D("te", te, n.sym / e.sym)


# a definition's domain -------------------------------------------------------------------------------------

@pytest.mark.parametrize("quantity", ["cb", "cc"])
def test_an_instance_claim_outside_a_definitions_domain_is_never_proved(quantity):
    sym = sp.Symbol(quantity)
    lib = library(a, b, cb, cc, cb_def, cc_def, C("neg", logic.lt(sym, 0), instance=True),
                  C("pos", logic.gt(sym, 0), instance=True))
    res = check(lib, {"a": 3, "b": 2}).by_id()
    for cid in ("t.neg", "t.pos"):  # the claim speaks only where cb is defined: nowhere at this scenario
        assert res[cid].verdict == "inconsistent", res[cid]
        assert "a = 3 ≥ b = 2; cb is defined only where a < b (definition t.cb)" in res[cid].reason
    assert evaluate(lib, scenario({"a": 3, "b": 2}), quantity).exact is None


@pytest.mark.parametrize("quantity", ["cb", "cc"])
def test_inside_the_domain_the_claim_and_its_false_twin_are_decided(quantity):
    sym = sp.Symbol(quantity)
    lib = library(a, b, cb, cc, cb_def, cc_def, C("pos", logic.gt(sym, 0), instance=True),
                  C("neg", logic.lt(sym, 0), instance=True))
    res = check(lib, {"a": 2, "b": 3}).by_id()
    assert res["t.pos"].verdict == "proved" and res["t.neg"].verdict == "refuted"


def test_a_general_claim_is_never_refuted_outside_the_domain():
    # a goal that uses cb speaks of the points where cb is defined: true there, so proved, with or without the
    # domain written out; its false twins are refuted at a point inside the domain
    lib = library(a, b, cb, cb_def, C("gen", logic.gt(cb.sym, 0)),
                  C("stated", logic.gt(cb.sym, 0), hypotheses=(logic.lt(a.sym, b.sym),)),
                  C("twin", logic.gt(cb.sym, 1), hypotheses=(logic.lt(a.sym, b.sym),)),
                  C("gen_twin", logic.gt(cb.sym, 1)))
    res = check(lib).by_id()
    assert res["t.gen"].verdict == "proved"
    assert res["t.stated"].verdict == "proved"
    for twin in ("t.twin", "t.gen_twin"):
        assert res[twin].verdict == "refuted"
        point = {k: R(v) for k, v in res[twin].counterexample.items()}
        assert point["a"] < point["b"]


def test_a_hypothesis_is_read_only_where_its_definitions_are_defined():
    # cb > 0 is a hypothesis: the region lies inside cb's domain, so a < b follows
    lib = library(a, b, cb, cb_def, C("from_hyp", logic.lt(a.sym, b.sym), hypotheses=(logic.gt(cb.sym, 0),)))
    assert check(lib).by_id()["t.from_hyp"].verdict == "proved"


# a derived quantity's declared domain and integrality ----------------------------------------------------------

def test_a_declared_domain_is_never_a_hypothesis_of_the_goal():
    lib = library(a, b, d, d_def, C("dpos", logic.gt(d.sym, 0)), C("a_gt_b", logic.gt(a.sym, b.sym)),
                  C("stated", logic.gt(d.sym, 0), hypotheses=(logic.gt(a.sym, b.sym),)),
                  C("twin", logic.gt(d.sym, 1), hypotheses=(logic.gt(a.sym, b.sym),)))
    report = check(lib)
    res = report.by_id()
    assert res["t.dpos"].verdict == "unknown"  # refuted only at points where d <= 0, which are not d's
    assert res["t.a_gt_b"].verdict == "refuted"
    assert res["t.stated"].verdict == "proved"
    assert res["t.twin"].verdict == "refuted"
    point = {k: R(v) for k, v in res["t.twin"].counterexample.items()}
    assert point["a"] - point["b"] > 0
    assert [(f.definition, f.verdict) for f in report.findings] == [("t.d", "refuted")]


def test_declared_integrality_is_a_side_condition_and_an_obligation():
    lib = library(n, e, te, te_def, C("te1", logic.ge(te.sym, 1)),
                  C("inst", logic.ge(te.sym, 1), instance=True))
    report = check(lib, {"n": 3, "e": 2})
    res = report.by_id()
    assert res["t.te1"].verdict == "unknown" and res["t.inst"].verdict == "unknown"
    assert "te is declared an integer" in res["t.inst"].reason
    assert [f.definition for f in report.findings] == ["t.te"]
    shown = evaluate(lib, scenario({"n": 3, "e": 2}), "te").display
    assert "not an integer" in shown
    whole = check(lib, {"n": 4, "e": 2}).by_id()["t.inst"]
    assert whole.verdict == "proved"


def test_eval_notes_a_value_outside_its_declared_domain():
    lib = library(a, b, d, d_def)
    assert "outside its declared domain (positive)" in evaluate(lib, scenario({"a": 1, "b": 2}), "d").display
    assert evaluate(lib, scenario({"a": 2, "b": 1}), "d").display == "1"


def test_the_command_line_eval_says_the_note_beside_the_value():
    from derive.cli.commands.eval_cmd import eval_lines

    lib = library(a, b, d, d_def)
    ev = evaluate(lib, scenario({"a": 1, "b": 2}), "d")
    assert eval_lines([ev]) == ["d = -1  (note: d = -1 is outside its declared domain (positive))"]
    assert ev.to_json()["declaration_notes"] == ["d = -1 is outside its declared domain (positive)"]


def test_a_whole_check_holds_every_definition_to_its_declaration():
    # d (a - b, declared positive) is used by no claim: a check of the whole library still reports it, a check of
    # named claims only the definitions they use
    s = Q("s")
    lib = library(a, b, d, d_def, s, D("s", s, a.sym + b.sym), C("c", logic.gt(s.sym, a.sym)))
    assert [(f.definition, f.verdict) for f in check(lib).findings] == [("t.d", "refuted")]
    assert check(lib, ids=["t.c"]).findings == []


def test_a_definition_meeting_its_declaration_is_no_finding():
    s = Q("s")
    lib = library(a, b, s, D("s", s, a.sym + b.sym), C("c", logic.gt(s.sym, a.sym)))
    report = check(lib)
    assert report.findings == [] and report.by_id()["t.c"].verdict == "proved"


# hypothesis-generated instances: decided where defined, unknown elsewhere ------------------------------------

small = st.fractions(min_value=R(1, 8), max_value=8, max_denominator=8)


@settings(max_examples=20, deadline=None)
@given(small, small, st.integers(-4, 4))
def test_planted_instances_of_a_domain(av, bv, c):
    lib = library(a, b, cb, cb_def, C("c", logic.gt(cb.sym, c), instance=True))
    verdict = check(lib, {"a": av, "b": bv}).by_id()["t.c"].verdict
    if av < bv:
        assert verdict == ("proved" if 1 / (R(bv) - R(av)) > c else "refuted")
    else:  # outside cb's domain the claim says nothing: never proved, never refuted (at a = b, 1/0: unknown)
        assert verdict == ("unknown" if av == bv else "inconsistent")


@settings(max_examples=20, deadline=None)
@given(small, small, st.integers(-4, 4))
def test_planted_instances_of_a_declared_domain(av, bv, c):
    lib = library(a, b, d, d_def, C("c", logic.ge(d.sym, c), instance=True))
    verdict = check(lib, {"a": av, "b": bv}).by_id()["t.c"].verdict
    if av > bv:
        assert verdict == ("proved" if R(av) - R(bv) >= c else "refuted")
    else:
        assert verdict == "unknown"


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 12), st.integers(1, 5), st.integers(0, 6))
def test_planted_instances_of_declared_integrality(nv, ev, c):
    lib = library(n, e, te, te_def, C("c", logic.ge(te.sym, c), instance=True))
    verdict = check(lib, {"n": nv, "e": ev}).by_id()["t.c"].verdict
    if nv % ev == 0:
        assert verdict == ("proved" if nv // ev >= c else "refuted")
    else:
        assert verdict == "unknown"


# one reading for eval, check, margin and sweep ---------------------------------------------------------------

@pytest.mark.parametrize(("values", "inside"), [({"a": 3, "b": 2}, False), ({"a": 2, "b": 3}, True),
                                                ({"a": 2, "b": 2}, False)])
def test_eval_check_margin_and_sweep_agree_at_a_point(values, inside):
    lib = library(a, b, cb, cb_def, C("c", logic.gt(cb.sym, 0), instance=True))
    scen = scenario(values)
    verdict = check(lib, values).by_id()["t.c"].verdict
    value = evaluate(lib, scen, "cb")
    m = margin(lib, scen, "t.c", "a")
    holds = compiled_claim(lib, scen, resolve_target(lib, "t.c"), ["a"], [a.sym])(np.array([float(values["a"])]))
    if inside:
        assert verdict == "proved" and value.exact is not None and m.holds_at_value and bool(holds[0])
    else:
        assert verdict not in ("proved", "refuted") and value.exact is None
        assert not m.holds_at_value and m.verdict_at_value != "refuted" and not bool(holds[0])


def test_every_lecture_definition_meets_its_declaration():
    """No finding under a check of the lecture: every derived quantity's declared domain and integrality is
    shown from its definition (the uniform-routing share and count of experts read, powers of the batch,
    through the facts of a power with a symbolic exponent)."""
    from derive.model.loader import load_library

    lib = load_library(["lecture"])
    assert Checker(lib, build_scenario(lib)).obligations() == []
