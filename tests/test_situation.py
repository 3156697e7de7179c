"""A library under a scenario (``derive.model.situation``): one object, one missing-value error, one statement.

The statement of a claim has two readings, the kernel's (``derive check``) and the one formula of margins and
sweeps; they are of the same parts, so at a scenario that fixes every value they must agree claim by claim:
``proved`` where the formula holds, ``inconsistent`` where a hypothesis fails, ``refuted`` where only the goal
does.
"""

from __future__ import annotations

import dataclasses

import pytest
import sympy as sp

from derive import logic
from derive.errors import MissingValueError, ScenarioError, no_value_words
from derive.kernel.logic import And
from derive.model.declarations import Claim
from derive.model.evaluate import evaluate
from derive.model.loader import load_library
from derive.model.scenario import build_scenario
from derive.model.situation import Situation, situate

CLAIMS = load_library(["lecture"]).claims()
# instance claims with nothing left universally quantified: at the lecture scenario their formula is a number
CLOSED = [c for c in CLAIMS if c.instance and not c.forall]


def test_situate_gives_one_object_per_library_and_scenario(lecture_library, lecture_scenario):
    one = situate(lecture_library, lecture_scenario)
    assert situate(lecture_library, lecture_scenario) is one
    assert one.substitution is one.substitution  # computed once
    other = dataclasses.replace(lecture_scenario, values=dict(lecture_scenario.values))
    assert situate(lecture_library, other) is not one


def test_substitution_is_every_value_of_a_quantity(lecture_library, lecture_scenario):
    subst = Situation(lecture_library, lecture_scenario).substitution
    assert {str(s) for s in subst} == {n for n in lecture_scenario.values if n in lecture_library.quantities}
    assert all(subst[lecture_library.quantities[n].sym] == v.value for n, v in lecture_scenario.values.items()
               if n in lecture_library.quantities)


def test_a_missing_value_has_one_error_and_one_wording(lecture_library, lecture_scenario):
    from derive.whatif.margin import margin
    from derive.whatif.sweep import parse_axis, resolve_target, sweep_grid

    bare = dataclasses.replace(lecture_scenario, values={k: v for k, v in lecture_scenario.values.items()
                                                         if k != "flops"})
    errors = []
    with pytest.raises(MissingValueError) as err:
        evaluate(lecture_library, bare, "critical_intensity")
    errors.append(err.value)
    with pytest.raises(MissingValueError) as err:
        margin(lecture_library, bare, "batch_optimum", "batch", verify=False)
    errors.append(err.value)
    with pytest.raises(MissingValueError) as err:
        sweep_grid(lecture_library, bare, [resolve_target(lecture_library, "critical_intensity")],
                   [parse_axis(lecture_library, "batch=1:100:3")])
    errors.append(err.value)
    for e in errors:
        assert isinstance(e, ScenarioError) and e.exit_code == 2
        assert "flops" in e.names
        assert e.message == f"cannot evaluate {e.what}: {no_value_words(e.names)}"
        assert e.hint.startswith(f"add --set {e.names[0]}=VALUE")


def test_value_is_none_where_an_input_is_missing_or_undefined(lecture_library, lecture_scenario):
    s = situate(lecture_library, lecture_scenario)
    flops = lecture_library.quantities["flops"].sym
    assert s.value(flops) == lecture_scenario.value("flops")
    bare = dataclasses.replace(lecture_scenario, values={k: v for k, v in lecture_scenario.values.items()
                                                         if k != "flops"})
    assert situate(lecture_library, bare).value(flops) is None
    assert s.value(1 / (flops - flops.subs(s.substitution))) is None  # a zero denominator: no value, no zoo


@pytest.mark.parametrize("claim", CLOSED, ids=lambda c: c.id)
def test_the_two_readings_of_a_statement_agree(lecture_library, lecture_scenario, report, claim: Claim):
    situation = situate(lecture_library, lecture_scenario)
    if situation.missing_for(claim):
        pytest.skip("the scenario does not give every value of this claim")
    goal, hyps = situation.statement(claim).formula()
    if goal.free_symbols() or any(h.free_symbols() for h in hyps):
        pytest.skip("a value the claim's hypotheses leave open")
    try:
        hypotheses_hold = And(tuple(hyps)).evaluate({}) if hyps else True
        goal_holds = goal.evaluate({})
    except Exception:  # noqa: BLE001 - beyond exact evaluation here: the kernel's reading alone decides
        pytest.skip("not evaluable exactly")
    verdict = report[claim.id].own_verdict
    if not hypotheses_hold:
        assert verdict == "inconsistent"
    elif goal_holds:
        assert verdict == "proved"
    else:
        assert verdict == "refuted"


def _small(goal, hyps=()):
    from derive import Quantity, derived
    from derive.model.declarations import Topic
    from derive.model.library import Library

    x = Quantity("x", "x", "1", "x")
    claim = Claim("t.c", title="c", statement="s", source=derived("planted"), goal=goal(x.sym),
                  hypotheses=tuple(h(x.sym) for h in hyps), instance=True)
    return Library([Topic("t", "t", "", (x,), (claim,))]), claim


@pytest.mark.parametrize(("goal", "hyps", "verdict"), [
    (lambda x: logic.ge(x, 5), (), "proved"),
    (lambda x: logic.ge(x, 10), (), "refuted"),  # the false twin
    (lambda x: logic.ge(x, 5), (lambda x: logic.ge(x, 8),), "inconsistent"),
])
def test_the_readings_agree_on_planted_claims(goal, hyps, verdict):
    """The agreement above on claims of known truth at x = 7, the false twin included (so it can fail)."""
    from derive.checking.checker import Checker
    from derive.model.scenario import Scenario, ScenarioValue

    library, claim = _small(goal, hyps)
    scenario = Scenario("s", {"x": ScenarioValue("x", sp.Integer(7), "test")})
    assert Checker(library, scenario).check().by_id()["t.c"].verdict == verdict
    goal_f, hyps_f = situate(library, scenario).statement(claim).formula()
    holds = And(tuple(hyps_f)).evaluate({}) if hyps_f else True
    assert (verdict == "inconsistent") == (not holds)
    assert (verdict == "proved") == (holds and goal_f.evaluate({}))


def test_config_finder_and_reader_are_declared_by_the_lecture(lecture_library, monkeypatch):
    """The lecture's finder and reader are theorems.configs' own, imported when first called."""
    import theorems.configs as configs

    monkeypatch.setattr(configs, "find_cached_config", lambda model_id: f"found {model_id}", raising=False)
    monkeypatch.setattr(configs, "model_values_with_meta", lambda config, **kw: ("read", config, kw), raising=False)
    assert lecture_library.model_config_finder("org/name") == "found org/name"
    assert lecture_library.model_config_reader({"a": 1}, where="w") == ("read", {"a": 1}, {"where": "w"})


# a part the values rule out needs no inputs ---------------------------------------------------------------------

def _without(scenario, *names):
    return dataclasses.replace(scenario, values={k: v for k, v in scenario.values.items() if k not in names})


def test_a_dense_models_step_time_needs_no_share_of_experts_read(lecture_library, lecture_scenario):
    """Nothing is routed in a dense model (its parameters without the embedding are all active), so the share of
    routed experts a step reads multiplies zero: the step time does not ask for it, and is the same whatever it is."""
    dense = _without(lecture_scenario, "expert_read_fraction")
    active = lecture_scenario.values["params_active"]
    embedding = lecture_scenario.values["params_embedding"]
    dense.values["params_total"] = dataclasses.replace(
        active, value=active.value + embedding.value)  # every non-embedding parameter active
    assert situate(lecture_library, dense).missing(lecture_library.quantities["step_time"].sym) == []
    step = evaluate(lecture_library, dense, "step_time").exact
    assert "expert_read_fraction" not in evaluate(lecture_library, dense, "step_time").inputs
    for share in ("0", "1/3", "1"):
        given = dataclasses.replace(dense, values=dict(dense.values))
        given.values["expert_read_fraction"] = dataclasses.replace(active, value=sp.Rational(share))
        assert evaluate(lecture_library, given, "step_time").exact == step
    # a mixture of experts routes most of its parameters: there the share is asked for
    moe = _without(lecture_scenario, "expert_read_fraction")
    with pytest.raises(MissingValueError, match="expert_read_fraction"):
        evaluate(lecture_library, moe, "step_time")


def test_an_input_the_values_cancel_is_still_asked_where_it_decides_definedness(lecture_library, lecture_scenario):
    """(x - x0)/(y - z) at x = x0 is 0 for every y and z but y = z, where it has no value: y is still asked for;
    over y alone, declared positive (never 0), it is not (tests/test_missing_inputs.py: a quantity of any sign)."""
    situation = situate(lecture_library, _without(lecture_scenario, "hbm_bandwidth"))
    flops, bw, batch = (lecture_library.quantities[n].sym for n in ("flops", "hbm_bandwidth", "batch"))
    at = lecture_scenario.values["flops"].value
    assert situation.missing((flops - at) / (bw - 3)) == ["hbm_bandwidth"]
    assert situation.missing((flops - at) / bw) == []
    assert situation.missing((flops - at) * bw) == []
    assert situation.missing((flops - at) * bw + batch / bw) == ["hbm_bandwidth"]


def test_an_instance_claim_of_a_dense_model_needs_no_share_of_experts_read(lecture_library, lecture_scenario):
    moe = _without(lecture_scenario, "expert_read_fraction")
    reading = situate(lecture_library, moe)
    asking = [c for c in lecture_library.claims() if "expert_read_fraction" in reading.missing_for(c)]
    assert asking  # the lecture's step-time claims read it for a mixture of experts
    dense = _without(lecture_scenario, "expert_read_fraction")
    active, embedding = lecture_scenario.values["params_active"], lecture_scenario.values["params_embedding"]
    dense.values["params_total"] = dataclasses.replace(active, value=active.value + embedding.value)
    assert not [c.id for c in asking if "expert_read_fraction" in situate(lecture_library, dense).missing_for(c)]



@pytest.mark.parametrize(("tp", "asked"), [(2, []), (8, []), (16, ["scaleout_bandwidth"])])
def test_a_branch_the_values_rule_out_asks_for_nothing_not_even_for_its_side_conditions(tp, asked):
    """A tensor-parallel all-reduce inside one scale-up domain runs on scale-up links: a chip of one's own that
    gives no scale-out bandwidth is not asked for it (the other branch's denominator, min(W_up, n·W_out), is a
    side condition only where that branch is taken), and is asked where the group spans domains."""
    serving = load_library(["serving"])
    scenario = build_scenario(serving, hardware="h200", model="llama3-70b", sets=[f"tp={tp}"])
    scenario = _without(scenario, "scaleout_bandwidth", "scaleout_latency")
    situation = situate(serving, scenario)
    missing = situation.missing(serving.quantities["tp_link_allreduce_time"].sym)
    assert missing == asked + (["scaleout_latency"] if tp > 8 else [])
