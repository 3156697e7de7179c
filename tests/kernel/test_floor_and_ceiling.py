"""``floor`` and ``ceiling`` written directly in a claim (pages per sequence, tokens per expert, chips per
layout): total functions with integer values, read exactly at a point, as ``to_int`` by z3 and in
certificates, and as monotone steps by the interval engine.  True claims are proved, their false twins
refuted at a point the kernel re-checks; before, every such claim was ``unknown`` ("no domain rule")."""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.certify.smt2 import query
from derive.kernel import logic
from derive.kernel.logic import Rel
from derive.kernel.problem import Problem
from derive.kernel.prover import decide
from derive.kernel.trusted import evaluate_at

a, b, x = sp.symbols("a b x")
R = sp.Rational
n, L, P, E, k, t = sp.symbols("n L P E k t")
POS = [logic.gt(a, 0), logic.gt(b, 0)]
COUNTS = [logic.ge(s, 1) for s in (n, L, P, E, k, t)]
INTS = {n, L, P, E, k, t}

CASES = [  # (id, hypotheses, goal, integer quantities, true?)
    ("ceiling_at_least", POS, logic.ge(sp.ceiling(a), a), set(), True),
    ("ceiling_within_one", POS, logic.lt(sp.ceiling(a), a + 1), set(), True),
    ("ceiling_within_a_half", POS, logic.le(sp.ceiling(a), a + sp.Rational(1, 2)), set(), False),
    ("floor_at_most", POS, logic.le(sp.floor(a), a), set(), True),
    ("floor_is_the_value", POS, logic.eq(sp.floor(a), a), set(), False),
    ("ceiling_minus_floor_at_most_one", POS, logic.le(sp.ceiling(a) - sp.floor(a), 1), set(), True),
    ("ceiling_minus_floor_is_one", POS, logic.eq(sp.ceiling(a) - sp.floor(a), 1), set(), False),
    ("pages_hold_the_context", COUNTS, logic.ge(sp.ceiling(L / P) * P, L), INTS, True),
    ("pages_waste_less_than_a_page", COUNTS, logic.lt(sp.ceiling(L / P) * P, L + P), INTS, True),
    ("pages_waste_nothing", COUNTS, logic.eq(sp.ceiling(L / P) * P, L), INTS, False),
    ("halves_at_most_the_count", COUNTS, logic.le(2 * sp.floor(n / 2), n), INTS, True),
    ("halves_are_the_count", COUNTS, logic.eq(2 * sp.floor(n / 2), n), INTS, False),
    ("tokens_per_expert_cover_the_batch", COUNTS, logic.ge(E * sp.ceiling(t * k / E), t * k), INTS, True),
    ("tokens_per_expert_at_most_the_batch", COUNTS, logic.le(sp.ceiling(t * k / E), t), INTS, False),
    ("ceiling_of_a_sum", POS, logic.le(sp.ceiling(a + b), sp.ceiling(a) + sp.ceiling(b)), set(), True),
    ("ceiling_of_a_sum_twin", POS, logic.eq(sp.ceiling(a + b), sp.ceiling(a) + sp.ceiling(b)), set(), False),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_floor_and_ceiling_claims_are_decided(case):
    _, hyps, goal, ints, truth = case
    out = decide(Problem(list(hyps), goal, set(ints)))
    assert out.verdict == ("proved" if truth else "refuted"), out.reason
    if out.verdict == "refuted":  # the point is re-checked exactly against the original statement
        point = {sp.Symbol(name): v for name, v in out.counterexample.items()}
        assert all(evaluate_at(h, point) for h in hyps if h.free_symbols() <= set(point))
        assert not evaluate_at(goal, point)


def test_interval_engine_reads_floor_as_a_step():
    # exp is out of z3's reach: the interval engine decides both on the stated box
    box = {x: (sp.Integer(0), sp.Integer(3))}
    proved = decide(Problem([logic.ge(x, 0), logic.le(x, 3)], logic.le(sp.floor(x), sp.exp(x)), bounds=box))
    assert proved.verdict == "proved", proved.reason
    twin = decide(Problem([logic.ge(x, 0), logic.le(x, 3)], logic.ge(sp.floor(x) + 2, sp.exp(x)), bounds=box))
    assert twin.verdict == "refuted", twin.reason


@settings(max_examples=200, deadline=None)
@given(st.fractions(min_value=-10**6, max_value=10**6, max_denominator=10**4))
def test_exact_floor_and_ceiling_agree_with_sympy(q):
    v = sp.Rational(q.numerator, q.denominator)
    for f in (sp.floor, sp.ceiling):
        assert evaluate_at(Rel(f(x), "==", f(v)), {x: v})
        assert not evaluate_at(Rel(f(x), "==", f(v) + 1), {x: v})


def test_certificate_reads_floor_and_ceiling_as_to_int():
    text = query([a], [], [logic.gt(a, 0), logic.Not(logic.ge(sp.ceiling(a), sp.floor(a)))])
    assert "(set-logic QF_LIRA)" in text and "(to_int (- a))" in text and "(to_real (to_int a))" in text


BIG = sp.Integer(2) ** 60  # past a double's 53 bits: mpmath.floor rounded floor(2**60 - 1/2) up to 2**60
NEAR_BIG = [  # (id, goal, box of x); each is false somewhere on its box, and exp keeps z3 out (the intervals decide)
    ("floor_below_big", logic.ge(sp.floor(x), BIG), (BIG - R(1, 2), BIG - R(1, 4))),
    ("ceiling_above_big", logic.le(sp.ceiling(x), BIG), (BIG + R(1, 4), BIG + R(1, 2))),
    ("remainder_near_big", logic.lt(sp.Mod(x, 1), 0), (BIG - R(1, 2), BIG - R(1, 4))),
]


@pytest.mark.parametrize("case", NEAR_BIG, ids=[c[0] for c in NEAR_BIG])
def test_floor_past_53_bits_is_exact_on_a_box(case):
    _, goal, (lo, hi) = case
    hyps = [logic.gt(sp.exp(x - BIG), 0), logic.ge(x, lo), logic.le(x, hi)]
    out = decide(Problem(hyps, goal, set(), {x: (lo, hi)}))
    assert out.verdict == "refuted", out.reason
    point = {sp.Symbol(name): v for name, v in out.counterexample.items()}
    assert not evaluate_at(goal, point)


def test_replayed_floor_past_53_bits_is_exact():
    # a hand-written certificate "proving" floor(x) >= 2**60 on [2**60 - 1/2, 2**60 - 1/4]: the replayer read
    # floor through mpmath at 53 bits and confirmed it
    import json

    from derive.certify import replay
    from derive.certify.writer import formula_json

    lo, hi = BIG - R(1, 2), BIG - R(1, 4)
    text = json.dumps({
        "kind": "interval", "format": "derive-certificate/1", "claim": "c", "scenario": "s", "verdict": "proved",
        "engine": "interval", "method": "", "assumptions": [], "goal": formula_json(logic.ge(sp.floor(x), BIG)),
        "quantities": [{"name": "x", "integer": False, "low": str(lo), "high": str(hi)}],
        "tree": [{"leaf": {"x": [str(lo), str(hi)]}, "enclosures": []}]})
    assert replay.replay(text).status == "disagrees"
    upside_down = json.loads(text)
    upside_down["quantities"][0].update(low=str(hi), high=str(lo))
    assert replay.replay(json.dumps(upside_down)).status == "not confirmed"  # was an internal AssertionError


def test_an_enclosure_end_is_floored_exactly_or_read_as_unbounded():
    import mpmath

    from derive.kernel.trusted.enclose import whole_end

    iv = mpmath.iv
    assert [whole_end(iv.mpf(v).a) for v in ("2.5", "-2.5", "1e-40", "-1e-40")] == [2, -3, 0, -1]
    assert [whole_end(iv.mpf(v).a, up=True) for v in ("2.5", "-2.5", "1e-40", "-1e-40")] == [3, -2, 1, 0]
    assert whole_end((iv.mpf(2) ** (10**6)).a) is None  # a million-bit integer is never built: unbounded, sound
