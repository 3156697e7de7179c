"""Which weights a decode step reads: experts by batch, embedding rows, and the strict floor.

Worked examples against numbers nobody here produced: a single-stream Kimi K2 decode measured at 46.8 ms per
token must sit above the strict floor (the old all-experts floor was 11x above it), and a dense Llama-3.1-70B
on an H100 has sparsity 1 and B* equal to the hardware ratio.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.checking.checker import Checker
from derive.model.evaluate import evaluate
from derive.model.scenario import build_scenario

# Single-stream decode of a 1T-parameter, 32B-active Kimi-K2-architecture model at 3.3 bits per weight on a
# machine with 819 GB/s of memory bandwidth: 46.8 ms per token.  Source: the spicyneuron/Kimi-K2.6-MLX-3.3bit
# model card on Hugging Face (mlx_lm.benchmark on a Mac Studio M3 Ultra: 21.363 generated tokens/s at 3.331
# bits per weight); the ledger holds it as published/kimi-k2.6-m3-ultra-single-stream, at its fastest reading.
KIMI_SINGLE_STREAM = {
    "measured_s": Fraction(468, 10000),
    "sets": ["batch=1 seq", "bytes_per_param=0.4125 B/param", "hbm_bandwidth=819 GB/s", "chips=1",
             "context=1 token/seq"],
}


def _eval(lib, sc, name):
    return evaluate(lib, sc, name).exact


def test_kimi_single_stream_measurement_sits_above_the_strict_floor(lecture_library):
    sc = build_scenario(lecture_library, model="kimi-k2", sets=KIMI_SINGLE_STREAM["sets"])
    floor = _eval(lecture_library, sc, "step_time_floor")
    assert floor <= KIMI_SINGLE_STREAM["measured_s"]
    # under uniform routing one sequence reads only its own experts: the expectation is the strict floor
    assert _eval(lecture_library, sc, "step_time_uniform") == floor
    assert _eval(lecture_library, sc, "experts_read_uniform") == 8


def test_kimi_all_experts_floor_exceeds_the_measurement(lecture_library):
    """The planted false twin: reading every expert (the lecture's large-batch floor) at batch 1 gives a
    'floor' eleven times the measurement, which the old weight_fetch_time printed as a floor."""
    sc = build_scenario(lecture_library, model="kimi-k2",
                        sets=[*KIMI_SINGLE_STREAM["sets"], "expert_read_fraction=1"])
    assert _eval(lecture_library, sc, "step_time") > 10 * KIMI_SINGLE_STREAM["measured_s"]


def test_dense_llama_70b_sparsity_is_one_and_knee_is_the_hardware_ratio(lecture_library):
    sc = build_scenario(lecture_library, model="llama3-70b", hardware="h100-sxm")
    assert _eval(lecture_library, sc, "sparsity") == 1
    ratio = _eval(lecture_library, sc, "hardware_ratio")
    assert _eval(lecture_library, sc, "critical_batch") == ratio
    assert round(float(ratio), 1) == 295.2  # 989.4 TFLOP/s x 2 B / (2 x 3.35 TB/s); was 299.7 with the table read


def test_decode_reads_embedding_rows_not_the_table(lecture_library):
    sc = build_scenario(lecture_library, model="llama3-70b", hardware="h100-sxm", sets=["batch=4 seq"])
    width = sc.value("d_model")
    bw, q = sc.value("hbm_bandwidth"), sc.value("bytes_per_param")
    chips = sc.value("chips")
    assert _eval(lecture_library, sc, "embedding_fetch_time") == 4 * width * q / (chips * bw)
    total, emb, active = (sc.value(n) for n in ("params_total", "params_embedding", "params_active"))
    assert _eval(lecture_library, sc, "params_read") == total - emb == active


def test_lecture_numbers_unchanged_at_its_own_batch(lecture_library, lecture_scenario):
    # the lecture reads every weight once per step: 700B at FP4 over 64 chips of 20 TB/s
    fetch = sp.Rational(700 * 10**9, 2) / (64 * 20 * 10**12)
    assert _eval(lecture_library, lecture_scenario, "weight_fetch_time") == fetch
    assert _eval(lecture_library, lecture_scenario, "critical_batch") == 2400
    # and uniform routing agrees with 'every expert' there (computed at 512 tokens, a lower bound: within 1e-7)
    rho = _eval(lecture_library, lecture_scenario, "expert_read_fraction_uniform")
    assert 0 < 1 - rho < sp.Rational(1, 10**7)


@pytest.mark.parametrize("share", ["0", "1/2", "1"])
def test_strict_floor_never_exceeds_the_step_time(lecture_library, share):
    sc = build_scenario(lecture_library, model="kimi-k2", hardware="h200",
                        sets=["batch=16 seq", f"expert_read_fraction={share}"])
    assert _eval(lecture_library, sc, "step_time_floor") <= _eval(lecture_library, sc, "step_time")


@pytest.mark.parametrize("model", ["kimi-k2", "llama3-70b"])
def test_floor_claims_are_proved_under_a_model(lecture_library, model):
    ids = ["roofline.latency_floor", "roofline.latency_floor_all_experts", "roofline.step_time_ge_floor",
           "roofline.all_experts_read_threshold", "gap.roofline_floor_below_measured", "batching.batch_optimum"]
    report = Checker(lecture_library, build_scenario(lecture_library, model=model, hardware="h200")).check(ids)
    assert {r.id: r.verdict for r in report.results} == dict.fromkeys(ids, "proved")


def _expected_distinct(e: int, k: int, b: int) -> Fraction:
    """E(1 - (1 - k/E)^B): the expected union of B uniform k-subsets of E."""
    return e * (1 - (1 - Fraction(k, e)) ** b)


@settings(max_examples=60, deadline=None)
@given(e=st.integers(2, 64), data=st.data())
def test_uniform_expectation_between_the_strict_bounds(lecture_library, e, data):
    k = data.draw(st.integers(1, e - 1))
    b = data.draw(st.integers(1, 40))
    sc = build_scenario(lecture_library, sets=[f"experts_total={e}", f"experts_active={k}", f"batch={b} seq"])
    distinct = _eval(lecture_library, sc, "experts_read_uniform")
    assert distinct == _expected_distinct(e, k, b)
    assert k <= distinct <= min(e, k * b)
    # one token's experts plus the uniform share of the others is the same count
    rho = _eval(lecture_library, sc, "expert_read_fraction_uniform")
    assert k + (e - k) * rho == distinct


@pytest.mark.parametrize(("experts", "active", "threshold"), [(256, 8, 200), (384, 8, 319)])
def test_all_experts_read_past_the_threshold(experts, active, threshold):
    # (E/k) ln(2E) tokens leave under half an expert per layer unread; one token fewer than half the threshold
    # leaves more than one unread
    assert experts - _expected_distinct(experts, active, threshold) < Fraction(1, 2)
    assert experts - _expected_distinct(experts, active, threshold // 4) > 1
