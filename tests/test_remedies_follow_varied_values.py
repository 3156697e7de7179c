"""A value an input rule's remedy gives follows a value a command varies, as ``--set`` of it gives it.

The lecture's rule ``roofline.weights_not_narrower_than_flops`` has remedies: a chip preset quoted at BF16 gives
its FP8 rate (``flops_fp8``) to weights averaging under 2 bytes, and its FP4 rate under 1 byte.  ``derive eval
--set bytes_per_param=1 byte/param`` on an H100 reads 1,979 TFLOP/s (NVIDIA's H100 SXM datasheet, dense FP8);
a sweep over bytes_per_param must read the same rate at 1 byte, and the BF16 989 TFLOP/s at 2 bytes, so that
its compute floors stay floors at every point.  A rate the user gave (``--set flops=...``) is never replaced.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from derive.model.evaluate import evaluate
from derive.model.loader import load_library
from derive.model.scenario import build_scenario, remedies_at
from derive.whatif.sweep import parse_axis, resolve_target, sweep_grid

LIB = load_library(["lecture"])
TFLOPS = 10**12


def sweep(targets, vary, **scenario):
    sc = build_scenario(LIB, **scenario)
    return sweep_grid(LIB, sc, [resolve_target(LIB, t) for t in targets], [parse_axis(LIB, vary)])


def column(result, name):
    (i,) = [k for k, c in enumerate(result.columns) if c.startswith(name + " [") or c == name]
    return result.data[i]


def eval_at(name, bytes_per_param, **scenario):
    sets = [*scenario.pop("sets", []), f"bytes_per_param={bytes_per_param} byte/param"]
    sc = build_scenario(LIB, sets=sets, **scenario)
    return Fraction(str(evaluate(LIB, sc, name).exact))


@pytest.mark.parametrize(("hardware", "model", "rates"), [
    ("h100-sxm", "llama3-70b", {"0.5": 1979, "1": 1979, "1.5": 1979, "2": 989}),  # no FP4 rate on an H100
    ("b200", "deepseek-v3", {"0.5": 9000, "1": 4500, "1.5": 4500, "2": 2250}),   # FP8 weights, swept to BF16
])
def test_the_chips_rate_follows_the_swept_weight_bytes(hardware, model, rates):
    result = sweep(["flops", "compute_time"], "bytes_per_param=0.5 byte/param:2 byte/param:4",
                   hardware=hardware, model=model)
    flops = column(result, "flops")
    assert flops.tolist() == [float(r) for r in rates.values()]
    times = column(result, "compute_time")
    for k, b in enumerate(rates):  # the value --set of the point's bytes gives, to the float's precision
        assert times[k] == pytest.approx(float(eval_at("compute_time", b, hardware=hardware, model=model)) * 1e3,
                                         rel=1e-12)
    assert any("flops_fp8" in n and "of 4 points" in n for n in result.notes)


def test_a_rate_the_user_gave_is_not_replaced_and_the_rule_says_so():
    result = sweep(["flops"], "bytes_per_param=0.5 byte/param:2 byte/param:4", hardware="h100-sxm",
                   model="llama3-70b", sets=["flops=1000 TFLOP/s"])
    assert column(result, "flops").tolist() == [1000.0] * 4
    assert any("does not hold at 3 of 4 points" in n for n in result.notes)


def test_a_sweep_that_leaves_the_weights_alone_keeps_the_scenarios_rate():
    result = sweep(["flops"], "batch=1 seq:64 seq:4", hardware="h100-sxm", model="deepseek-v3")
    assert column(result, "flops").tolist() == [1979.0] * 4  # the FP8 rate the scenario took for FP8 weights
    assert not any("of 4 points, as --set" in n for n in result.notes)


def test_remedies_at_puts_back_what_an_earlier_remedy_replaced():
    sc = build_scenario(LIB, hardware="b200", model="deepseek-v3")
    assert sc.value("flops") == 4500 * TFLOPS  # FP8 weights: the FP8 rate
    values, notes = remedies_at(LIB, sc, {"bytes_per_param": sp.Integer(2)})
    assert values["flops"].value == 2250 * TFLOPS and values["flops_datatype_bytes"].value == 2 and not notes
    values, notes = remedies_at(LIB, sc, {"bytes_per_param": sp.Rational(1, 2)})
    assert values["flops"].value == 9000 * TFLOPS and len(notes) == 1


def test_a_two_axis_sweep_carries_the_rate_along_the_weights_axis_only():
    sc = build_scenario(LIB, hardware="h100-sxm", model="llama3-70b")
    axes = [parse_axis(LIB, "batch=1 seq:1024 seq:3"), parse_axis(LIB, "bytes_per_param=1 byte/param:2 byte/param:2")]
    result = sweep_grid(LIB, sc, [resolve_target(LIB, "flops")], axes)
    assert column(result, "flops").tolist() == [1979.0, 989.0] * 3
    assert np.all(column(result, "feasible") >= 0)


# margins: the set is taken cell by cell of the values on which the remedies agree --------------------------

def verdict_at(claim_id, bytes_per_param, **scenario):
    from derive.checking.checker import Checker

    sc = build_scenario(LIB, sets=[f"bytes_per_param={bytes_per_param} byte/param"], **scenario)
    return Checker(LIB, sc).check([claim_id]).results[0].verdict


@pytest.mark.parametrize(("hardware", "model"), [("h100-sxm", "llama3-70b"), ("b200", "deepseek-v3")])
def test_a_margin_over_the_weight_bytes_agrees_with_the_check_at_set_values(hardware, model):
    from derive.whatif.margin import margin

    claim = "batching.lecture_batch_near_optimum"
    m = margin(LIB, build_scenario(LIB, hardware=hardware, model=model), claim, "bytes_per_param")
    assert m.intervals and m.verified is not False
    probes = set()
    for i in m.intervals:
        for end in (i.low, i.high):
            if end is not None:
                probes |= {end * sp.Rational(999, 1000), end * sp.Rational(1001, 1000)}
    probes |= {sp.Rational(1, 2), sp.Integer(1), sp.Rational(3, 2), sp.Integer(2)}
    for p in sorted(probes):
        inside = any(i.contains(p) for i in m.intervals)
        assert (verdict_at(claim, p, hardware=hardware, model=model) == "proved") == inside, p
    assert any("flops_fp8" in n for n in m.notes)


def test_a_margin_the_remedies_do_not_move_is_the_scenarios_own():
    from derive.whatif.margin import margin

    sc = build_scenario(LIB, hardware="tpu-v4", model="llama3-70b")  # a TPU v4 quotes no 8-bit rate above BF16
    m = margin(LIB, sc, "batching.lecture_batch_near_optimum", "bytes_per_param")
    assert not any("as --set of such a value" in n for n in m.notes)


def test_joined_and_clipped_intervals_keep_membership():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from derive.whatif.margin import Interval, _clipped, _joined

    ends = st.integers(-6, 6).map(sp.Integer)
    interval = st.tuples(ends, ends, st.booleans(), st.booleans(), st.booleans(), st.booleans()).map(
        lambda t: Interval(None if t[4] else min(t[0], t[1]), None if t[5] else max(t[0], t[1]), t[2], t[3]))

    @settings(max_examples=200, deadline=None, derandomize=True)
    @given(st.lists(interval, max_size=4), st.lists(interval, max_size=3))
    def check(intervals, cells):
        intervals = [i for i in intervals if i.low is None or i.high is None or i.low < i.high
                     or (i.low_closed and i.high_closed)]
        joined, clipped = _joined(intervals), _clipped(intervals, cells)
        for k in range(-16, 17):
            p = sp.Rational(k, 2)
            held = any(i.contains(p) for i in intervals)
            assert any(i.contains(p) for i in joined) == held
            assert any(i.contains(p) for i in clipped) == (held and any(c.contains(p) for c in cells))
        pairs = zip(joined, joined[1:], strict=False)
        assert all(a.high is not None and b.low is not None and a.high <= b.low for a, b in pairs)

    check()


def test_a_region_over_the_weight_bytes_reads_the_rate_each_point_takes():
    from derive.whatif.region import region
    from derive.whatif.sweep import compiled_claim, resolve_target

    sc = build_scenario(LIB, hardware="h100-sxm", model="llama3-70b")
    claim = "batching.lecture_batch_near_optimum"
    axes = [parse_axis(LIB, "bytes_per_param=0.002 byte/param:0.01 byte/param:9"),
            parse_axis(LIB, "hbm_bandwidth=3 TB/s:3.5 TB/s:3")]
    reg = region(LIB, sc, claim, axes)
    for i, b in enumerate(axes[0].values):
        at = build_scenario(LIB, hardware="h100-sxm", model="llama3-70b",
                            sets=[f"bytes_per_param={sp.Rational(b).limit_denominator(10**6)} byte/param"])
        names = ["hbm_bandwidth"]
        fn = compiled_claim(LIB, at, resolve_target(LIB, claim), names, [LIB.quantities[n].sym for n in names])
        assert reg.holds[i].tolist() == np.asarray(fn(axes[1].values), dtype=bool).tolist()
    assert reg.holds.any() and any("flops_fp8" in n for n in reg.notes)


def test_the_cells_of_a_margin_split_where_the_chips_rate_changes():
    """FP8 weights on a B200 (the scenario took its FP8 rate): under 1 byte its FP4 rate, from 2 bytes its BF16 one;
    the cells are read from the rule's and its remedies' relations at the values as given, before any remedy."""
    from derive.whatif.margin import remedy_cells

    sc = build_scenario(LIB, hardware="b200", model="deepseek-v3")
    cells = remedy_cells(LIB, sc, "bytes_per_param")
    rates = {}
    for where, at, _ in cells:
        rates[at.value("flops") // TFLOPS] = [(c.low, c.high, c.low_closed, c.high_closed) for c in where]
    assert rates[9000] == [(None, 1, False, False)]
    assert rates[4500] == [(1, 2, True, False)]
    assert rates[2250] == [(2, None, True, False)]
    assert remedy_cells(LIB, sc, "batch") is None  # no remedy reads the batch
