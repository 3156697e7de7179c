"""Derive's floors against published measurements nobody on this project produced.

Each point of tests/fixtures/published_measurements.toml (a decode or serving measurement with its chip, chip count,
model, precision, batch and prompt length, and its source) is turned into the time derive's serving library calls
a lower bound for it: the strict step floor (roofline.step_time_floor), the prefill floor (prefill.ttft_floor), and
for multi-token prediction the speculative chapter's k + 1 bound.  Kernel and collective points are held to the
parts of those floors they measure: a decode-attention kernel to the KV-cache read (roofline.kv_fetch_time), a GEMM
to the roofline of its weights multiplied by its rows (roofline.step_time_floor of a model made of the GEMM's
weights), an NCCL ring all-reduce to network.tp_link_allreduce_time (a floor for ring all-reduces only).  A floor
above its measurement is a bug in derive, never in the data.  The planted false twins show the test can fail: the
all-experts step time, which derive once printed as a floor, is above a published Mixtral decode; an all-reduce of any
algorithm (in-switch NVLS, a tree, NCCL's unstated choice) to network.tp_link_allreduce_floor; a published Medusa
decode of Llama 3.1 405B is faster than the plain step floor, which only the speculative allowance reconciles; an
FP8 run priced at the chip's BF16 rate has a "floor" above it, and so has an FP4 run; an in-switch (NVLS) all-reduce
beats the ring's; and a published "throughput" read as output tokens per second asks for more than the chips' peak.
"""

from __future__ import annotations

import json
import tomllib
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from derive import si
from derive.checking.checker import Checker
from derive.cli import main
from derive.model.evaluate import evaluate
from derive.model.loader import load_library
from derive.model.scenario import build_scenario

DATA = Path(__file__).parent / "fixtures" / "published_measurements.toml"
POINTS = tomllib.loads(DATA.read_text())["point"]
EXCLUDED = tomllib.loads(DATA.read_text())["excluded"]
SERVING_KINDS = {"per_token_including_prefill", "batch_request_latency", "speculative_per_token", "ttft",
                 "throughput_compute_per_output_token"}
KERNEL_KINDS = {"kernel_kv_read", "kernel_gemm", "ring_allreduce", "allreduce"}
KINDS = SERVING_KINDS | KERNEL_KINDS
LATENCIES = {"batch_request_latency", "ttft"}  # measured as seconds; the other serving kinds as tokens per second
REQUIRED = ("id", "title", "kind", "measured", "hardware", "chips", "software", "source", "where", "as_of",
            "precision", "assumptions")
REQUIRED_BY_KIND = {**dict.fromkeys(SERVING_KINDS, ("model", "batch", "prompt_tokens", "bytes_per_param")),
                    "kernel_kv_read": ("model", "batch", "prompt_tokens", "counted_bytes"),
                    "kernel_gemm": ("groups", "m", "n", "k", "bytes_per_param"), "ring_allreduce": ("message_bytes",),
                    "allreduce": ("message_bytes",)}
# a published FP8 run on a chip whose preset quotes its BF16 rate sets the preset's FP8 rate (flops_fp8) by hand
FP8_RATE_OVERRIDE = "flops="


@pytest.fixture(scope="module")
def serving():
    return load_library(["serving"])


def _model(point: dict) -> str | None:
    """A preset's name, or a config.json kept beside the fixture (a path relative to tests/fixtures)."""
    model = point.get("model")
    return str(DATA.parent / model) if model and model.endswith(".json") else model


def _sets(point: dict) -> list[str]:
    """The point's values as `--set` lines: its deployment for a serving point, its shape for a kernel."""
    kind = point.get("kind")  # an excluded measurement kept for a false twin has none: it reads as a serving point
    if kind == "kernel_gemm":
        # a GEMM of m rows through groups x (n x k) weights is a decode step of a model made of those weights: m
        # sequences each multiply every weight once (2 FLOPs a weight) and read their k-element rows of activations
        # once (one token of context each, as KV; FP8 rows, one byte an element), the weights read once; no
        # embedding rows, no other cache
        weights = point["groups"] * point["n"] * point["k"]
        return [f"chips={point['chips']}", f"batch={point['m']} seq", "context=1 token/seq",
                f"bytes_per_param={point['bytes_per_param']}", f"params_total={weights} param",
                f"params_active={weights} param", f"kv_bytes_per_token={point['groups'] * point['k']} B/token",
                "d_model=0", "per_layer_row_params=0 param/token", "kv_window_bytes_per_token=0 B/token",
                "attention_window=0 token/seq", "kv_chunk_bytes_per_token=0 B/token", "attention_chunk=0 token/seq",
                "kv_state_bytes=0 B/seq", *point.get("overrides", [])]
    if kind in ("ring_allreduce", "allreduce"):
        # one all-reduce of message_bytes: one layer, one token whose activation is the whole message
        return [f"chips={point['chips']}", f"tp={point['chips']}", "layers=1", "batch=1 seq",
                f"token_activation_bytes={point['message_bytes']} B/token", *point.get("overrides", [])]
    sets = [f"chips={point['chips']}", f"batch={point['batch']} seq",
            f"context={point['prompt_tokens']} token/seq", f"prefill_tokens={point['prompt_tokens']} token/seq"]
    if "bytes_per_param" in point:
        sets.append(f"bytes_per_param={point['bytes_per_param']}")
    if "bytes_per_kv_element" in point:
        sets.append(f"bytes_per_kv_element={point['bytes_per_kv_element']}")
    return [*sets, *point.get("overrides", [])]


def _scenario(lib, point: dict, extra: tuple[str, ...] = ()):
    return build_scenario(lib, hardware=point["hardware"], model=_model(point), sets=[*_sets(point), *extra])


def _value(lib, sc, name: str) -> Fraction:
    return Fraction(str(evaluate(lib, sc, name).exact))


def measured_seconds(point: dict) -> Fraction:
    """A request latency as it is; a rate of tokens per second as the mean time per token; a kernel's bandwidth or
    FLOP rate as the time its counted bytes or FLOPs took; a bus bandwidth as the all-reduce's time."""
    value, kind = si(point["measured"]), point["kind"]
    if kind == "kernel_kv_read":
        return point["counted_bytes"] / value
    if kind == "kernel_gemm":
        return 2 * point["groups"] * point["m"] * point["n"] * point["k"] / value
    if kind == "ring_allreduce" or kind == "allreduce" and point.get("measured_as") == "busbw":
        # nccl-tests: busBw = algBw * 2(n - 1)/n, algBw = bytes / time (a convention, whatever the algorithm)
        return Fraction(2 * (point["chips"] - 1), point["chips"]) * point["message_bytes"] / value
    if kind == "allreduce":  # an algorithm bandwidth: bytes / time
        return point["message_bytes"] / value
    return value if kind in LATENCIES else 1 / value


def floor_seconds(lib, point: dict) -> Fraction:
    """The time derive bounds the measurement below by (the fixture's header says why for each kind)."""
    sc = _scenario(lib, point)
    if point["kind"] == "kernel_kv_read":
        return _value(lib, sc, "kv_fetch_time")
    if point["kind"] == "kernel_gemm":
        return _value(lib, sc, "step_time_floor")
    if point["kind"] == "ring_allreduce":
        return _value(lib, sc, "tp_link_allreduce_time") / _value(lib, sc, "allreduces_per_layer")
    if point["kind"] == "allreduce":
        return _value(lib, sc, "tp_link_allreduce_floor") / _value(lib, sc, "allreduces_per_layer")
    if point["kind"] == "throughput_compute_per_output_token":
        out = point["output_tokens"]
        return (_value(lib, sc, "prefill_compute_time_with_attention") / out
                + Fraction(out - 1, out) * _value(lib, sc, "compute_time"))
    step, ttft = _value(lib, sc, "step_time_floor"), _value(lib, sc, "ttft_floor")
    if point["kind"] == "ttft":
        return ttft
    if point["kind"] == "batch_request_latency":
        return ttft + (point["output_tokens"] - 1) * step
    if point["kind"] == "speculative_per_token":
        return min(ttft, step / (point["draft_length"] + 1))
    return min(ttft, step)


def test_every_point_states_its_deployment_and_source():
    assert len(POINTS) >= 20
    assert len({p["id"] for p in POINTS}) == len(POINTS)
    for p in POINTS:
        assert p["kind"] in KINDS, p["id"]
        assert all(str(p.get(k, "")).strip() for k in (*REQUIRED, *REQUIRED_BY_KIND[p["kind"]])), p["id"]
        assert p["source"].startswith("https://"), p["id"]
        if p["kind"] in {"batch_request_latency", "throughput_compute_per_output_token"}:
            assert p["output_tokens"] >= 1
        if p["kind"] == "speculative_per_token":
            assert p["draft_length"] >= 1


def test_every_exclusion_says_why():
    for e in EXCLUDED:
        assert e["id"] and e["source"] and len(e["reason"]) > 40, e


@pytest.mark.parametrize("point", POINTS, ids=[p["id"] for p in POINTS])
def test_floor_is_below_the_published_measurement(serving, point):
    floor, measured = floor_seconds(serving, point), measured_seconds(point)
    assert 0 < floor <= measured, f"{point['id']}: floor {float(floor):.6g} s above measured {float(measured):.6g} s"


@settings(max_examples=200, deadline=None)
@given(ttft=st.fractions(min_value=Fraction(1, 10**6), max_value=10), step=st.fractions(min_value=Fraction(1, 10**6),
       max_value=10), n=st.integers(1, 10**6), k=st.integers(1, 8), accepted=st.data())
def test_per_token_accounting_holds_for_any_run_length(ttft, step, n, k, accepted):
    """One prefill then n - 1 steps averages at least the smaller of the two, whatever n; with speculation each of
    the n - 1 steps yields between 1 and k + 1 tokens, so a token costs at least min(ttft, step / (k + 1))."""
    assert (ttft + (n - 1) * step) / n >= min(ttft, step)
    yields = accepted.draw(st.lists(st.integers(1, k + 1), min_size=1, max_size=20))
    tokens = 1 + sum(yields)
    assert (ttft + len(yields) * step) / tokens >= min(ttft, step / (k + 1))


def test_speculative_allowance_is_the_libraries_proved_bound(serving):
    point = next(p for p in POINTS if p["kind"] == "speculative_per_token")
    sc = _scenario(serving, point, (f"draft_length={point['draft_length']}",))
    report = Checker(serving, sc).check(["speculative.speedup_at_most_k_plus_1"])
    assert [r.verdict for r in report.results] == ["proved"]


def test_all_experts_step_time_is_no_floor_for_a_published_mixtral_decode(serving):
    """The planted false twin: reading every expert at batch 1 (the lecture's large-batch floor) puts the 'floor'
    of a published Mixtral 8x7B decode on eight A100s above the measurement; the strict floor stays below."""
    point = next(p for p in POINTS if p["id"] == "gpt-fast-mixtral-8x7b-bf16-tp8")
    sc = _scenario(serving, point, ("expert_read_fraction=1",))
    assert _value(serving, sc, "step_time") > measured_seconds(point)
    assert floor_seconds(serving, point) <= measured_seconds(point)


def test_plain_step_floor_is_no_floor_for_a_speculative_measurement(serving):
    """A real false twin: Llama 3.1 405B with Medusa on eight H200s at 108 tokens/s/user is faster than the plain
    step floor even with FP8 weights (Hopper's smallest format); only the speculative allowance of k + 1 tokens per
    step admits it, and with k unstated the point is excluded rather than held to a floor."""
    point = next(e for e in EXCLUDED if e["id"] == "nvidia-h200-llama3.1-405b-medusa")
    sc = _scenario(serving, point)
    assert _value(serving, sc, "step_time_floor") > 1 / si(point["measured"])


def _cli_args(point: dict) -> list[str]:
    return ["--library", "serving", "--hardware", point["hardware"], "--model", _model(point),
            *(arg for s in _sets(point) for arg in ("--set", s))]


FIRST_OF_EACH_KIND = [next(p for p in POINTS if p["kind"] == kind) for kind in sorted(SERVING_KINDS)]


@pytest.mark.parametrize("point", FIRST_OF_EACH_KIND, ids=[p["id"] for p in FIRST_OF_EACH_KIND])
def test_command_line_gives_the_same_floors(serving, point, capsys):
    """`derive eval --json` with the point's values prints the numbers the floor is built from."""
    names = ["step_time_floor", "ttft_floor", "prefill_compute_time_with_attention", "compute_time"]
    assert main(["eval", *names, "--json", *_cli_args(point)]) == 0
    printed = {v["name"]: Fraction(v["exact"]) for v in json.loads(capsys.readouterr().out)["values"]}
    sc = _scenario(serving, point)
    assert printed == {name: _value(serving, sc, name) for name in names}


def _bf16_quoted(lib, point: dict) -> bool:
    """Whether the point's chip preset quotes its flops at BF16 (2 bytes a value)."""
    sc = build_scenario(lib, hardware=point["hardware"], model=None, sets=[])
    return _value(lib, sc, "flops_datatype_bytes") == 2


FP8_ON_BF16_PRESETS = [p for p in POINTS if p.get("bytes_per_param") == "1 B/param"
                       and any(o.startswith(FP8_RATE_OVERRIDE) for o in p.get("overrides", []))]


@pytest.mark.parametrize("point", FP8_ON_BF16_PRESETS, ids=[p["id"] for p in FP8_ON_BF16_PRESETS])
def test_an_fp8_rate_set_by_hand_is_the_presets_own(serving, point):
    """An FP8 run on a chip whose preset quotes BF16 takes the preset's flops_fp8, never a number typed in: the
    override is the rate scenario assembly gives an FP8 model on such a preset."""
    assert _bf16_quoted(serving, point), point["id"]
    sc = build_scenario(serving, hardware=point["hardware"], model=None, sets=[])
    override = next(o for o in point["overrides"] if o.startswith(FP8_RATE_OVERRIDE))
    assert si(override.split("=", 1)[1]) == _value(serving, sc, "flops_fp8"), point["id"]


def test_bf16_rate_is_no_floor_for_a_published_fp8_run(serving):
    """A real false twin: Llama 3.3 70B in FP8 on one H200 outputs 442 tokens/s at 2,048 in / 128 out; priced at the
    H200's BF16 rate (989 TFLOP/s) its prompts and outputs alone would take longer than that, so an FP8 model must be
    held to the chip's FP8 rate."""
    point = next(p for p in POINTS if p["id"] == "trtllm-perf-h200-llama3-70b-fp8-tp1-2048-128")
    bf16 = _value(serving, build_scenario(serving, hardware=point["hardware"], model=None, sets=[]), "flops_bf16")
    at_bf16 = {**point, "overrides": [f"flops={bf16} FLOP/s"]}
    assert floor_seconds(serving, at_bf16) > measured_seconds(point)
    assert floor_seconds(serving, point) <= measured_seconds(point)


def test_ring_allreduce_time_is_no_floor_for_an_in_switch_allreduce(serving):
    """A real false twin: NCCL's NVLink SHARP (NVLS) all-reduce of 2 GiB on eight H100s runs at an algorithm bandwidth
    of about 273 GB/s, faster than a ring can on 450 GB/s links; the ring's time is a floor only for rings
    (network.ring_allreduce), so the NVLS measurement is held to the floor of any algorithm instead, which is below
    it."""
    nvls = next(p for p in POINTS if p["id"] == "nccl-h100-nvls-allreduce-8gpu-2g")
    ring = next(p for p in POINTS if p["id"] == "nccl-h100-ring-allreduce-8gpu-2g")
    assert ring["chips"] == nvls["chips"] and ring["message_bytes"] == nvls["message_bytes"]
    assert floor_seconds(serving, ring) > measured_seconds(nvls) >= floor_seconds(serving, nvls)


def test_the_allreduce_floor_is_never_above_a_rings_time_on_published_points(serving):
    """Every ring point, held to the floor of any algorithm as well, stays above it (network.allreduce_floor_below_ring
    proves it for every layout): the allreduce kind is the weaker test, never a different one."""
    for point in (p for p in POINTS if p["kind"] == "ring_allreduce"):
        sc = _scenario(serving, point)
        assert _value(serving, sc, "tp_link_allreduce_floor") <= _value(serving, sc, "tp_link_allreduce_time")


def test_ttft_floor_counts_no_more_attention_than_an_mla_prefill_does(serving):
    """A floor counts at most the work the fastest published form does.  DeepSeek's dense MLA prefill runs in MHA
    mode (FlashMLA README, support matrix: head_dim_k 192, head_dim_v 128), 2 x (192 + 128) FLOPs per query head
    and context token; the absorbed form (576 and 512) is for decoding.  At a 32K prompt on eight H200s the
    absorbed count gave 0.76 s, the MHA form's 0.32 s."""
    sc = build_scenario(serving, hardware="h200-fp8", model="deepseek-v3",
                        sets=["chips=8", "batch=1 seq", "prefill_tokens=32768 token/seq"])
    counted = _value(serving, sc, "attention_flops_per_context_token") * _value(serving, sc, "prefill_head_dim")
    assert counted == 2 * (192 + 128)
    # decoding runs the absorbed form: 2 x 576 for the scores, 2 x 512 for the values, no more
    assert _value(serving, sc, "attention_flops_per_context_token") * _value(serving, sc, "head_dim") == 2 * (576 + 512)
    # by hand: 2 x 37.55B active weights per token plus 61 layers x 128 heads x 640 FLOPs x 32,768 x 32,769 / 2,
    # over 8 chips at the FP8 rate (h200-fp8's 1,979 TFLOP/s)
    active, head = _value(serving, sc, "params_active"), _value(serving, sc, "params_output_head")
    flops = 2 * (active - head) * 32768 + 2 * head + 61 * 128 * 640 * 32768 * 32769 / 2
    assert _value(serving, sc, "ttft_floor") == pytest.approx(flops / (8 * 1979e12), rel=1e-12)


NARROW_ON_BF16_PRESETS = [p for p in POINTS if p.get("kind") in SERVING_KINDS and si(p["bytes_per_param"]) < 2
                          and not any(o.startswith(FP8_RATE_OVERRIDE) for o in p.get("overrides", []))
                          and not p["hardware"].endswith(("-fp8", "-fp4"))]


@pytest.mark.parametrize("point", NARROW_ON_BF16_PRESETS, ids=[p["id"] for p in NARROW_ON_BF16_PRESETS])
def test_a_narrow_weight_run_on_a_bf16_preset_is_priced_at_the_presets_own_narrow_rate(serving, point):
    """With no rate set by hand, weights under 1 byte on a preset quoting BF16 run at its flops_fp4, under 2 bytes at
    its flops_fp8: the fastest rate the weights' format allows, which a floor must take; a preset without the narrower
    rate (the A100's, for weight-only int8) keeps its own."""
    assert _bf16_quoted(serving, point), point["id"]
    preset = build_scenario(serving, hardware=point["hardware"], model=None, sets=[])
    quoted = {name: _value(serving, preset, name) for name in ("flops_fp4", "flops_fp8", "flops_int8", "flops")
              if name in preset.values}
    eight_bit = [quoted[name] for name in ("flops_fp8", "flops_int8") if name in quoted]
    if si(point["bytes_per_param"]) < 1 and "flops_fp4" in quoted:
        expected = quoted["flops_fp4"]
    else:  # an 8-bit weight runs at the faster of the chip's FP8 and INT8 rates
        expected = max(eight_bit) if eight_bit else quoted["flops"]
    assert _value(serving, _scenario(serving, point), "flops") == expected, point["id"]


def test_eight_bit_weights_on_a_tpu_are_priced_at_its_int8_rate(serving):
    """Google's spec tables give TPU v5e 393 and v6e 1,836 INT8 TOPS, twice their BF16 rate (v6e's FP8 runs at the
    BF16 918), and JetStream's int8 weights run on those units: a floor for 1-byte weights reads the INT8 rate, not
    v6e's slower FP8 one nor v5e's BF16 one.  A GPU preset quoting no INT8 rate keeps its FP8 rate (H100: 1,979)."""
    for hardware, tera in (("tpu-v5e", 393), ("tpu-v6e", 1836), ("h100-sxm", 1979)):
        sc = build_scenario(serving, hardware=hardware, model="llama3-8b", sets=["bytes_per_param=1 B/param"])
        assert _value(serving, sc, "flops") == tera * 10**12, hardware
    # the two JetStream int8 rows on v5e are held to the floor at the int8 rate, half the compute term at BF16's
    point = next(p for p in POINTS if p["id"] == "jetstream-pytorch-v5e8-llama3-8b-int8")
    at_bf16 = floor_seconds(serving, {**point, "overrides": ["flops=197 TFLOP/s"]})
    assert floor_seconds(serving, point) < at_bf16


def test_bf16_rate_is_no_floor_for_a_published_fp4_run(serving):
    """A real false twin: Llama 3.3 70B in NVFP4 on one B200 outputs 11,147 tokens/s at 128 in / 128 out; priced at
    the B200's BF16 rate (2,250 TFLOP/s) its prompts and outputs alone would take longer than that."""
    point = next(p for p in POINTS if p["id"] == "trtllm-perf-b200-llama3-70b-fp4-tp1-128-128")
    bf16 = _value(serving, build_scenario(serving, hardware=point["hardware"], model=None, sets=[]), "flops_bf16")
    assert floor_seconds(serving, {**point, "overrides": [f"flops={bf16} FLOP/s"]}) > measured_seconds(point)
    assert floor_seconds(serving, point) <= measured_seconds(point)


def test_output_token_reading_of_an_unstated_throughput_exceeds_the_chips_peak(serving):
    """Why a row is excluded: 6,808 'tok/s' of Llama 3.1 405B FP8 at 2,048 in / 512 out on eight MI325X cannot be
    output tokens per second with every prompt computed, since that needs more than the chips' FP8 peak; the page
    says neither what it counts nor whether prompts hit a prefix cache, so no floor applies to it."""
    row = next(e for e in EXCLUDED if e["id"] == "vultr-mi325x-llama3.1-405b-fp8-2048-512-c750")
    as_output_rate = {**row, "kind": "throughput_compute_per_output_token"}
    assert floor_seconds(serving, as_output_rate) > measured_seconds(as_output_rate)
