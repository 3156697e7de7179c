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
