"""Which weights a decode step reads: experts by batch, embedding rows, and the strict floor.

Worked examples against numbers nobody here produced: a single-stream Kimi K2 decode measured at 46.8 ms per
token must sit above the strict floor (the old all-experts floor was 11x above it), and a dense Llama-3.1-70B
on an H100 has sparsity 1 and B* equal to the hardware ratio.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

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


MAVERICK = str(Path(__file__).parent / "fixtures" / "configs" / "llama-4-maverick-17b-128e.json")


@pytest.mark.parametrize("context", [1, 8191, 8192, 8193, 10_000, 16_384, 100_000])
def test_chunked_layers_count_nothing_in_the_kv_floor(lecture_library, context):
    # Llama 4's local layers attend within 8,192-token chunks: at a chunk's first token they read no cache, so
    # a floor that counted a whole chunk (805 MB per sequence at 8,192 tokens) sat above what a step must read
    sc = build_scenario(lecture_library, model=MAVERICK, hardware="b200", sets=[f"context={context} token/seq"])
    full_layers = 12  # every fourth of the 48 layers attends to the whole context (no_rope_layers)
    per_token = full_layers * 2 * 8 * 128 * sc.value("bytes_per_kv_element")  # K and V, 8 KV heads of 128
    assert _eval(lecture_library, sc, "kv_read_bytes_per_sequence") == context * per_token
    assert _eval(lecture_library, sc, "kv_bytes_per_sequence") > context * per_token  # the chunk is still held


def test_a_step_at_a_chunk_boundary_is_not_impossible(tmp_path, capsys):
    # what a step at 8,192 tokens must read (the full layers' cache and the active weights) allows 4 ms; the old
    # floor (a whole chunk per local layer) was 6.69 ms and judged this row impossible
    from derive.cli import main

    table = tmp_path / "rows.csv"
    table.write_text("id,model,hardware,chips,batch,context,bytes_per_param,bytes_per_kv_element,tpot\n"
                     f"boundary,{MAVERICK},b200,8,512,8192,1 byte/param,1 byte,4 ms\n")
    assert main(["audit", str(table), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["verdict"] for r in rows] == ["consistent"]


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


# a deployment reads the experts its own batch routes to ------------------------------------------------------
# The deployment defaults tie expert_read_fraction to the uniform-routing expectation (from = ...): worked out at
# the scenario's batch, again at every batch a sweep reads, and replaced by --set like any value.

def _share(e: int, k: int, b: int) -> Fraction:
    """1 - (1 - k/E)^(B - 1): the share of a token's skipped experts another B - 1 uniform tokens read."""
    return 1 - (1 - Fraction(k, e)) ** (b - 1)


@pytest.mark.parametrize("batch", [1, 2, 64, 600])
def test_deployment_share_is_the_uniform_expectation_at_its_batch(lecture_library, batch):
    sc = build_scenario(lecture_library, hardware="b300", model="qwen3-235b-a22b", sets=[f"batch={batch} seq"])
    expected = _share(128, 8, min(batch, 512))  # Qwen3-235B-A22B routes 8 of 128; the formula caps at 512 tokens
    assert sc.value("expert_read_fraction") == expected
    # the deployment's two worked-out values: the share of experts read, and one micro-batch per stage
    assert dict(sc.links) == {"expert_read_fraction": "expert_read_fraction_uniform",
                              "microbatches": "pipeline_fill_microbatches"}
    assert _eval(lecture_library, sc, "step_time") == _eval(lecture_library, sc, "step_time_uniform")
    assert any(n.startswith("expert_read_fraction = ") and "uniform routing" in n for n in sc.notes)


def test_deployment_single_stream_step_reads_one_tokens_experts(lecture_library):
    """Batch 1 on one chip: the step reads one token's experts, not all 128 (7.45 ms before, 0.797 ms now), and
    no more than the lecture's every-expert step, its planted twin."""
    sc = build_scenario(lecture_library, hardware="b300", model="qwen3-235b-a22b")
    assert sc.value("expert_read_fraction") == 0
    assert _eval(lecture_library, sc, "step_time") == _eval(lecture_library, sc, "step_time_floor")
    every = build_scenario(lecture_library, hardware="b300", model="qwen3-235b-a22b",
                           sets=["expert_read_fraction=1"])
    assert "expert_read_fraction" not in dict(every.links)  # a --set replaces the link
    assert _eval(lecture_library, every, "step_time") > 9 * _eval(lecture_library, sc, "step_time")


def test_lecture_scenario_keeps_every_expert_read(lecture_library, lecture_scenario):
    assert lecture_scenario.value("expert_read_fraction") == 1 and lecture_scenario.links == ()


def test_dense_deployment_keeps_the_file_value_with_its_reason(lecture_library):
    """A dense model skips no expert, so the uniform share is not defined (experts_total = experts_active):
    the file's own value stands, said, and reads nothing."""
    sc = build_scenario(lecture_library, hardware="h100-sxm", model="llama3-70b")
    assert "expert_read_fraction" not in dict(sc.links) and sc.value("expert_read_fraction") == 1
    assert any("has no value here" in n and "experts_total > experts_active" in n for n in sc.notes)
    assert _eval(lecture_library, sc, "params_routed_skipped") == 0


def _sweep_batch(lib, sc, names):
    from derive.whatif.sweep import parse_axis, resolve_target, sweep_grid

    result = sweep_grid(lib, sc, [resolve_target(lib, n) for n in names], [parse_axis(lib, "batch=1 seq:512 seq:5")])
    return [[float(v) for v in col] for col in result.data[1:1 + len(names)]]


def test_sweep_over_batch_follows_the_tie(lecture_library):
    sc = build_scenario(lecture_library, hardware="b300", model="qwen3-235b-a22b")
    step, uniform, floor = _sweep_batch(lecture_library, sc, ["step_time", "step_time_uniform", "step_time_floor"])
    assert step[0] == pytest.approx(floor[0], rel=1e-12)  # batch 1: the strict floor
    assert step == pytest.approx(uniform, rel=1e-12)  # the share moves with the batch
    held = build_scenario(lecture_library, hardware="b300", model="qwen3-235b-a22b", sets=["expert_read_fraction=0"])
    step0, uniform0 = _sweep_batch(lecture_library, held, ["step_time", "step_time_uniform"])
    assert step0[2] < uniform0[2]  # the twin: a share held at 0 stays below the uniform one


def test_margin_over_batch_names_the_tie(lecture_library):
    from derive.errors import MarginError
    from derive.whatif.margin import margin

    sc = build_scenario(lecture_library, hardware="b300", model="qwen3-235b-a22b")
    with pytest.raises(MarginError, match="hold it with --set expert_read_fraction"):
        margin(lecture_library, sc, "pricing.decode_memory_bound_at_lecture_point", "batch")
    held = build_scenario(lecture_library, hardware="b300", model="qwen3-235b-a22b", sets=["expert_read_fraction=1"])
    assert margin(lecture_library, held, "pricing.decode_memory_bound_at_lecture_point", "batch").intervals


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 4096))
def test_deployment_step_time_between_floor_and_every_expert(lecture_library, batch):
    sc = build_scenario(lecture_library, hardware="h200", model="deepseek-v3", sets=[f"batch={batch} seq"])
    every = build_scenario(lecture_library, hardware="h200", model="deepseek-v3",
                           sets=[f"batch={batch} seq", "expert_read_fraction=1"])
    step = _eval(lecture_library, sc, "step_time")
    assert _eval(lecture_library, sc, "step_time_floor") <= step <= _eval(lecture_library, every, "step_time")


@pytest.mark.parametrize(("entry", "message"), [
    ('from = 3', "must name a quantity"),
    ('from = "no_such_quantity"', "no_such_quantity"),
    ('from = "batch"', "which no definition gives"),
    ('from = "step_time"', "whose unit is not"),
])
def test_a_tie_in_a_scenario_file_is_checked(lecture_library, tmp_path, entry, message):
    from derive.errors import DeriveError

    path = tmp_path / "mine.toml"
    path.write_text(f'[values.expert_read_fraction]\nvalue = "1"\n{entry}\nsource = "mine"\n')
    with pytest.raises(DeriveError, match=message):
        build_scenario(lecture_library, scenario=str(path))


@pytest.mark.parametrize(("share", "words"), [("-1/2", "non-negative"), ("2", "expert_read_fraction <= 1")])
def test_a_share_of_experts_outside_zero_to_one_is_refused(lecture_library, share, words):
    from derive.errors import ScenarioError

    with pytest.raises(ScenarioError, match=words):
        build_scenario(lecture_library, hardware="b300", model="qwen3-235b-a22b",
                       sets=[f"expert_read_fraction={share}"])
