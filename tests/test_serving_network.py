"""Part II, chapter network (theorems/serving/network.py): ring all-reduce bytes, the exact tensor-parallel and
expert-parallel hiding thresholds as numbers, worked examples against DeepEP's published dispatch and combine
timings (H800, docs/legacy.md) and DeepSeek-V3's dimensions, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from libtools import close, one_error_line, run_cli

from derive.model.evaluate import evaluate
from derive.model.loader import load_library
from derive.model.scenario import build_scenario
from theorems.serving import network

LIB = load_library(["serving"])

# Llama 3 70B on H100 SXM (meta-llama/Meta-Llama-3-70B config.json: 80 layers, hidden 8192 in BF16; the h100-sxm
# preset: 989 TFLOP/s dense BF16, NVLink 450 GB/s one direction, one 400 Gb/s NIC = 50 GB/s per GPU)
LLAMA_70B = ["params_active=70e9 param", "layers=80", "token_activation_bytes=16384 byte/token", "flops=989e12 FLOP/s"]
# DeepEP low-latency kernels (docs/legacy.md): 128 tokens, top-8, hidden 7168, FP8 dispatch with a float32 scale per
# 128 elements (7168 + 56 * 4 = 7392 bytes), BF16 combine (14336 bytes)
DEEPEP = ["ep_tokens_per_chip=128 token", "experts_active=8", "dispatch_token_bytes=7392 byte/token",
          "combine_token_bytes=14336 byte/token"]


def value(text: str, sets=(), **kw) -> Fraction:
    return Fraction(str(evaluate(LIB, build_scenario(LIB, sets=list(sets), **kw), text).exact))


def at_degree(text: str, t: int, sets=()) -> Fraction:
    """``text``'s formula at tensor-parallel degree t, the other values from the scenario: a degree such as 13
    or 72 probes the formula's threshold, though no layout of a 128-head model has it (a scenario refuses
    tp=13: it does not divide the heads)."""
    sc = build_scenario(LIB, sets=list(sets))
    expr = LIB.expand(LIB.quantity(text).sym, sc.pinned).subs(sc.substitution(LIB)).subs(network.tp, t)
    expr = expr.subs({network.cp: 1, network.dp: 1})  # one group carries the batch where no layout says otherwise
    return Fraction(str(expr))


@pytest.mark.parametrize(("t", "factor"), [(2, Fraction(1)), (4, Fraction(3, 2)), (8, Fraction(7, 4)),
                                           (72, Fraction(71, 36))])
def test_ring_allreduce_sends_two_t_minus_one_over_t_messages(t, factor):
    sets = ["batch=64 seq", "token_activation_bytes=16384 byte/token"]
    assert at_degree("allreduce_message_bytes", t, sets) == 64 * 16384
    assert at_degree("ring_allreduce_bytes", t, sets) == factor * 64 * 16384


@pytest.mark.parametrize(("link", "t_star"), [("450e9", 13.15), ("50e9", 2.35)])
def test_llama3_70b_hide_degree_on_nvlink_and_infiniband(link, t_star):
    got = value("tp_hide_degree", [*LLAMA_70B, f"collective_bandwidth={link} byte/s"])
    assert close(got, Fraction(str(t_star)), rel=Fraction(1, 200))


@pytest.mark.parametrize(("t", "hides"), [(8, True), (13, True), (14, False)])
def test_hide_degree_decides_for_every_batch(t, hides):
    # the bandwidth part of the all-reduces against the compute, at batches 1 and 4096: the batch cancels
    for batch in (1, 4096):
        sets = [*LLAMA_70B, "collective_bandwidth=450e9 byte/s", f"batch={batch} seq", "collective_latency=0 s"]
        assert (at_degree("tp_allreduce_time", t, sets) <= at_degree("tp_compute_time", t, sets)) is hides


def test_hide_batch_is_where_latency_and_compute_meet():
    # TP8 over NVLink with an illustrative 5 µs per ring step: the all-reduce time equals the compute exactly at B_hide
    sets = [*LLAMA_70B, "collective_bandwidth=450e9 byte/s", "tp=8", "collective_latency=5e-6 s"]
    b = value("tp_hide_batch", sets)
    at = [*sets, f"batch={b.numerator}/{b.denominator} seq"]
    assert value("tp_allreduce_time", at) == value("tp_compute_time", at)
    # 2 * 2 * 80 * 5 µs * 8 * 7 over (141.6 - 7 * 11.65) µs per token: about 1,500 sequences, so small decode
    # batches do not hide an 8-way all-reduce's latency
    assert 1400 < b < 1600


@pytest.mark.parametrize(("link", "published_time", "rel"), [
    ("98e9", ("ep_dispatch_time", Fraction(77, 10**6)), Fraction(1, 100)),    # EP8 dispatch: 77 µs at 98 GB/s
    ("127e9", ("ep_combine_time", Fraction(114, 10**6)), Fraction(2, 100)),  # EP8 combine: 114 µs at 127 GB/s
])
def test_deepep_low_latency_timings_from_the_bytes(link, published_time, rel):
    name, published = published_time
    assert close(value(name, [*DEEPEP, f"collective_bandwidth={link} byte/s"]), published, rel=rel)


def test_deepep_dispatch_bytes_are_fp8_with_scales():
    assert value("ep_dispatch_time * collective_bandwidth", DEEPEP) == 128 * 8 * (7168 + 7168 // 128 * 4)
    # in BF16 the same dispatch would take twice the bytes: far from the published 77 µs at 98 GB/s
    bf16 = [*DEEPEP, "dispatch_token_bytes=14336 byte/token", "collective_bandwidth=98e9 byte/s"]
    assert value("ep_dispatch_time", bf16) > Fraction(145, 10**6)  # about 150 µs


def test_deepseek_v3_all_to_all_hide_bandwidth():
    # 58 MoE layers (61 - 3 dense), top-8, 37B active, H100-class FP8 dense peak 1979 TFLOP/s
    sets = ["moe_layers=58", "experts_active=8", "dispatch_token_bytes=7392 byte/token",
            "combine_token_bytes=14336 byte/token", "params_active=37e9 param", "flops=1979e12 FLOP/s"]
    w = value("ep_hide_bandwidth", sets)
    assert w == Fraction(58 * 8 * (7392 + 14336) * 1979 * 10**12, 2 * 37 * 10**9)
    assert 260 * 10**9 < w < 280 * 10**9
    # DeepEP's links: ~160 GB/s NVLink and ~50 GB/s InfiniBand on H800 both fall short at peak FP8
    for link in (160e9, 50e9):
        at = [*sets, f"collective_bandwidth={link} byte/s"]
        assert value("ep_alltoall_time_per_token", at) > value("token_compute_time", at)


@given(t=st.integers(1, 512), n_act=st.integers(10**9, 10**12), n_layers=st.integers(1, 200),
       act=st.integers(1024, 65536), w=st.integers(10**10, 2 * 10**12), f=st.integers(10**14, 10**16),
       copies=st.tuples(st.integers(1, 8), st.integers(1, 8)))
@settings(max_examples=200, deadline=None)
def test_hide_degree_decides_the_bandwidth_part(t, n_act, n_layers, act, w, f, copies):
    subs = {network.tp: t, network.N_act: n_act, network.N_L: n_layers, network.a: act, network.W_c: w,
            network.F: f, network.B: 1, network.alpha: 0, network.cp: copies[0], network.dp: copies[1]}
    comm = LIB.expand(network.t_ar).subs(subs)
    compute = LIB.expand(network.t_ctp).subs(subs)
    t_star = LIB.expand(network.t_star).subs(subs)
    assert bool(sp.Le(comm, compute)) == bool(sp.Le(t, t_star))


@given(t=st.integers(2, 128), p=st.integers(1, 128), n_layers=st.integers(1, 128), dp=st.integers(1, 16))
@settings(max_examples=100, deadline=None)
def test_pipeline_hand_overs_below_tp_all_reduces(t, p, n_layers, dp):
    if p > n_layers:
        return
    subs = {network.tp: t, network.pp: p, network.N_L: n_layers, network.B: 3, network.a: 1, network.cp: 1,
            network.dp: dp}
    p2p = (p - 1) * LIB.expand(network.M_pp).subs(subs)
    ar = LIB.expand(network.n_ar * network.N_L * network.V_ar).subs(subs)
    assert p2p <= ar


@pytest.mark.parametrize("bad", ["collective_latency=-1 us", "collective_bandwidth=0 byte/s", "moe_layers=-2"])
def test_negative_network_input_is_one_line_exit_2(bad):
    proc = subprocess.run([sys.executable, "-m", "derive", "eval", "--library", "serving", "--set", bad,
                           "tp_hide_degree"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


# Per-message latencies of the links (hardware presets: NCCL's cost model for NVIDIA chips, scaling-book for TPU ICI)
NVIDIA = ["a100-80gb", "h100-sxm", "h200", "b200", "gb200-nvl72", "rubin"]


@pytest.mark.parametrize("hardware", NVIDIA)
def test_nvidia_presets_carry_nccl_step_latencies(hardware):
    sc = build_scenario(LIB, hardware=hardware)
    assert sc.value("scaleup_latency") == sp.Rational(6, 10**7)  # 0.6 µs per Ring/LL step over NVLink
    assert sc.value("scaleout_latency") == sp.Rational(27, 10**7)  # 2.7 µs over the network


AMD = ["mi300x", "mi325x", "mi355x"]


@pytest.mark.parametrize("hardware", AMD)
def test_amd_presets_carry_the_smallest_published_step_latencies(hardware):
    # RCCL's tuning tables: 0.8 µs per Ring/LL step over xGMI at the least; the network: NCCL's 2.7 µs, below
    # RCCL's smallest (5.1 µs), so the latency floor stays a lower bound
    sc = build_scenario(LIB, hardware=hardware)
    assert sc.value("scaleup_latency") == sp.Rational(8, 10**7)
    assert sc.value("scaleout_latency") == sp.Rational(27, 10**7)


def test_llama3_70b_tp8_latency_on_mi300x():
    # 2 all-reduces x 80 layers x 2(8 - 1) ring steps x 0.8 µs = 1.792 ms
    got = value("tp_allreduce_latency", ["tp=8"], hardware="mi300x", model="llama3-70b")
    assert got == Fraction(1792, 10**6)


@pytest.mark.parametrize("hardware", ["tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu7x"])
def test_tpu_presets_carry_one_microsecond_per_ici_hop(hardware):
    sc = build_scenario(LIB, hardware=hardware)
    assert sc.value("scaleup_latency") == sp.Rational(1, 10**6)
    assert sc.value("scaleout_latency") is None  # no published per-message figure for the data-centre network


@pytest.mark.parametrize(("t", "expected_us"), [(1, 0), (2, 192), (4, 576), (8, 1344)])
def test_llama3_70b_tp_latency_on_h100(t, expected_us):
    # 2 all-reduces x 80 layers x 2(t - 1) ring steps x 0.6 µs
    got = value("tp_allreduce_latency", [f"tp={t}"], hardware="h100-sxm", model="llama3-70b")
    assert got == Fraction(expected_us, 10**6)


def test_tp8_latency_is_a_quarter_of_the_weight_fetch_on_h100():
    # 1.344 ms of latency against 70e9 x 2 B / (8 x 3.35 TB/s) = 5.22 ms: between a quarter and 26 %
    fetch = Fraction(70 * 10**9 * 2, 8 * 335 * 10**10)
    share = Fraction(1344, 10**6) / fetch
    assert Fraction(1, 4) < share < Fraction(26, 100)


def test_missing_latency_is_one_line_exit_2():
    # every hardware preset now carries a scale-up latency; without one the scenario has none
    proc = subprocess.run([sys.executable, "-m", "derive", "eval", "--library", "serving",
                           "--model", "llama3-70b", "--set", "tp=8", "tp_allreduce_latency"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "scaleup_latency" in proc.stderr


@given(t=st.integers(1, 256), n_layers=st.integers(1, 200), act=st.integers(1024, 65536),
       batch=st.integers(1, 4096), w=st.integers(10**9, 2 * 10**12), up=st.integers(0, 10**4),
       extra=st.integers(0, 10**5), dp=st.integers(1, 16))
@settings(max_examples=200, deadline=None)
def test_all_reduce_time_never_below_its_latency_floor(t, n_layers, act, batch, w, up, extra, dp):
    # any link whose step latency is at least the scale-up one (the assumption), any batch and bandwidth
    alpha_up = Fraction(up, 10**10)
    subs = {network.tp: t, network.N_L: n_layers, network.a: act, network.B: batch, network.W_c: w,
            network.alpha_up: alpha_up, network.alpha: alpha_up + Fraction(extra, 10**10), network.cp: 1,
            network.dp: dp}
    assert LIB.expand(network.t_ar).subs(subs) >= LIB.expand(network.t_lat).subs(subs)


@pytest.mark.parametrize(("model", "hidden"), [("llama3-70b", 8192), ("deepseek-v3", 7168), ("gpt-oss-120b", 2880)])
def test_a_model_gives_its_own_token_activation_bytes(model, hidden):
    # the hidden vector in BF16 on the wire, read from the config: the lecture's 7,168 bytes never reach it
    sc = build_scenario(LIB, hardware="h100-sxm", model=model)
    assert sc.value("token_activation_bytes") == 2 * hidden
    assert not any("token_activation_bytes" in n and "lecture" in n for n in sc.notes_for(["token_activation_bytes"]))


# which links a layout's collectives run over ---------------------------------------------------------------

GB = 10**9


@pytest.mark.parametrize(("hardware", "model", "layout", "name", "expected"), [
    # Llama 3 405B on two H100 nodes (Llama 3 paper, section 6.1): TP inside a node, PP across the two
    ("h100-sxm", "llama3-405b", ["tp=8", "pp=2"], "tp_link_bandwidth", 450 * GB),
    ("h100-sxm", "llama3-405b", ["tp=8", "pp=2"], "pp_link_bandwidth", 50 * GB),
    ("h100-sxm", "llama3-405b", ["tp=8", "pp=2"], "tp_link_latency", Fraction(6, 10**7)),
    # the same 16 GPUs as one tensor-parallel group cross the nodes: the rings' crossings share each node's eight
    # 50 GB/s ports (400 GB/s, under NVLink's 450), at the network's latency
    ("h100-sxm", "llama3-405b", ["tp=16"], "tp_link_bandwidth", 400 * GB),
    ("h100-sxm", "llama3-405b", ["tp=16"], "tp_link_latency", Fraction(27, 10**7)),
    # two stages inside one node hand over on NVLink
    ("h100-sxm", "llama3-70b", ["tp=4", "pp=2"], "pp_link_bandwidth", 450 * GB),
    # an NVL72 domain holds a TP16 group
    ("gb200-nvl72", "llama3-405b", ["tp=16"], "tp_link_bandwidth", 900 * GB),
    # DeepSeek-V3's EP32 prefill unit spans four nodes (report 3.4.1): the all-to-all runs over the NICs
    ("h100-sxm", "deepseek-v3", ["tp=4", "dp=8", "ep=32", "redundant_experts=32"], "ep_link_bandwidth", 50 * GB),
    ("gb200-nvl72", "deepseek-v3", ["tp=4", "dp=8", "ep=32", "redundant_experts=32"], "ep_link_bandwidth", 900 * GB),
])
def test_a_layouts_links_follow_its_domains(hardware, model, layout, name, expected):
    assert value(name, layout, hardware=hardware, model=model) == expected


@given(t=st.integers(1, 600), domain=st.integers(1, 600), up=st.integers(2, 2000), out=st.integers(1, 1999))
@settings(max_examples=40, deadline=None)
def test_tp_link_is_scaleup_up_to_one_domain_then_the_domains_ports(t, domain, up, out):
    """The definition at any degree, domain and pair of links (scale-out the slower): scale-up up to one domain, past
    it the domain's ports together, never more than scale-up."""
    out = min(out, up - 1)
    expr = LIB.expand(LIB.quantity("tp_link_bandwidth").sym)
    got = expr.subs({network.tp: t, network.n_dom: domain, network.W_up: up, network.W_out: out})
    assert got == (up if t <= domain else min(up, domain * out))
    assert got <= up and (got < up) == (t > domain and domain * out < up)


def test_a_tensor_parallel_group_past_its_domain_is_a_note_not_an_error():
    sc = build_scenario(LIB, hardware="h100-sxm", model="llama3-405b", sets=["tp=16"])
    assert sc.value("chips") == 16
    assert any(n.startswith("tp <= scaleup_domain does not hold (tp = 16, scaleup_domain = 8)") for n in sc.notes)


@pytest.mark.parametrize(("layout", "expected_ms"), [
    (["tp=8", "pp=2"], Fraction(21168, 10**4)),  # 2 x 126 x 14 ring steps x 0.6 µs, inside a node
    (["tp=16"], Fraction(20412, 10**3)),  # 2 x 126 x 30 ring steps x 2.7 µs, across two nodes
])
def test_llama3_405b_all_reduce_latency_on_the_layouts_links(layout, expected_ms):
    got = value("tp_link_allreduce_latency", layout, hardware="h100-sxm", model="llama3-405b")
    assert got == expected_ms / 1000
    scaleup = value("tp_allreduce_latency", layout, hardware="h100-sxm", model="llama3-405b")
    assert got >= scaleup and (got == scaleup) == (layout == ["tp=8", "pp=2"])


@pytest.mark.parametrize(("layout", "expected"), [
    # Llama 3 70B at 32 sequences on H100s: 80 layers, 2 all-reduces each, ring bytes 2·7/8·32·8192·2 = 917,504
    # B; TP8 inside a node: 14 steps at 0.6 µs plus the bytes at 450 GB/s; TP16 across two: 30 at 2.7 µs, and the
    # bytes at each node's eight 50 GB/s ports together (400 GB/s)
    (["tp=8"], 2 * 80 * (14 * Fraction(6, 10**7) + Fraction(917_504, 450 * GB))),
    (["tp=16"], 2 * 80 * (30 * Fraction(27, 10**7) + Fraction(2 * 15 * 32 * 8192 * 2, 16 * 400 * GB))),
])
def test_all_reduces_on_the_layouts_links_need_no_collective_inputs(layout, expected):
    """tp_link_allreduce_time reads the links the layout gives (no --set collective_bandwidth): by hand."""
    assert value("tp_link_allreduce_time", [*layout, "batch=32 seq"], hardware="h100-sxm",
                 model="llama3-70b") == expected


def test_all_reduces_on_the_layouts_links_are_the_general_time_on_those_links():
    """The layout's time is network.tp_allreduce_time with collective_bandwidth and collective_latency set to the
    links the layout gives (TP8 on one H100 node: NVLink's 450 GB/s and 0.6 µs)."""
    sets = ["tp=8", "batch=32 seq"]
    general = value("tp_allreduce_time", [*sets, "collective_bandwidth=450 GB/s", "collective_latency=0.6 us"],
                    hardware="h100-sxm", model="llama3-70b")
    assert value("tp_link_allreduce_time", sets, hardware="h100-sxm", model="llama3-70b") == general


# the all-to-all's bytes and MoE layers from the model ---------------------------------------------------------

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "configs"


@pytest.mark.parametrize(("model", "dispatch", "combine", "moe"), [
    # the deepseek-v3 preset's config: hidden 7168, FP8 activations with one FP32 scale per 128 (DeepEP's 7392 B),
    # BF16 combine; 61 layers, the first 3 dense
    ("deepseek-v3", 7168 + 56 * 4, 2 * 7168, 58),
    # DeepSeek-V3.2's config.json (verbatim): the same shape, its scales in UE8M0, one byte each
    (str(CONFIGS / "deepseek-v3.2.json"), 7168 + 56, 2 * 7168, 58),
    # Kimi K2 (verbatim): DeepSeek-V3's FP8 recipe, FP32 scales; 61 layers, the first dense
    (str(CONFIGS / "kimi-k2-instruct.json"), 7168 + 56 * 4, 2 * 7168, 60),
    # Qwen2-57B-A14B (bfloat16, no quantization): a BF16 dispatch, every one of its 28 layers MoE
    (str(CONFIGS / "qwen2-57b-a14b.json"), 2 * 3584, 2 * 3584, 28),
    # Mixtral 8x7B: BF16, 32 MoE layers
    (str(CONFIGS / "mixtral-8x7b-v0.1.json"), 2 * 4096, 2 * 4096, 32),
])
def test_a_model_gives_the_all_to_all_bytes_and_moe_layers(model, dispatch, combine, moe):
    sc = build_scenario(LIB, hardware="h100-sxm", model=model)
    got = {n: Fraction(str(evaluate(LIB, sc, n).exact))
           for n in ("dispatch_token_bytes", "combine_token_bytes", "moe_layers")}
    assert got == {"dispatch_token_bytes": dispatch, "combine_token_bytes": combine, "moe_layers": moe}


def test_deepseek_v3_preset_gives_deepeps_published_timings():
    # the DeepEP worked example with the bytes read from the model, not typed: the same 77 µs and 114 µs
    sets = ["ep_tokens_per_chip=128 token"]
    for name, link, published, rel in (("ep_dispatch_time", 98e9, Fraction(77, 10**6), Fraction(1, 100)),
                                       ("ep_combine_time", 127e9, Fraction(114, 10**6), Fraction(2, 100))):
        from_model = value(name, [*sets, f"collective_bandwidth={link!r} byte/s"], hardware="h100-sxm",
                           model="deepseek-v3")
        assert from_model == value(name, [*DEEPEP, f"collective_bandwidth={link!r} byte/s"])
        assert close(from_model, published, rel=rel)


def test_all_to_all_on_the_layouts_links_needs_no_typed_bytes(capsys):
    # DeepSeek-V3's EP32 prefill unit on H100 nodes: 58 MoE layers x 8 experts x (7392 + 14336) B over 50 GB/s
    code, out, err = run_cli(capsys, ["eval", "ep_link_alltoall_time_per_token", "--json", "--library", "serving",
                                      "--hardware", "h100-sxm", "--model", "deepseek-v3", "--set", "tp=4", "--set",
                                      "dp=8", "--set", "ep=32", "--set", "redundant_experts=32"])
    assert code == 0, err
    row = json.loads(out)  # one name: the object itself
    assert Fraction(row["exact"]) == Fraction(58 * 8 * (7392 + 14336), 50 * GB)


def test_a_dispatch_datatype_set_by_hand_wins_over_the_model():
    # --set dispatch_bytes_per_element: a BF16 dispatch of DeepSeek-V3 sends the whole 14,336 bytes
    got = value("dispatch_token_bytes", ["dispatch_bytes_per_element=2 byte"], hardware="h100-sxm",
                model="deepseek-v3")
    assert got == 2 * 7168


def test_without_a_model_the_dispatch_bytes_are_an_input_named_in_one_line(capsys):
    code, _, err = run_cli(capsys, ["eval", "ep_alltoall_time_per_token", "--library", "serving", "--set",
                                    "collective_bandwidth=50 GB/s"])
    one_error_line(code, err)
    assert "dispatch_bytes_per_element" in err and "moe_layers" in err


@pytest.mark.parametrize(("quantization", "expected"), [
    ({"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}, Fraction(33, 32)),
    ({"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128], "scale_fmt": "ue8m0"},
     Fraction(129, 128)),
    ({"quant_method": "fp8", "activation_scheme": "static"}, Fraction(1)),
    ({"quant_method": "mxfp4"}, Fraction(2)),  # 4-bit expert weights, BF16 activations on the wire
    (None, Fraction(2)),
])
def test_dispatch_datatype_from_the_quantization_config(quantization, expected):
    from theorems.configs.precision import dispatch_element_bytes

    cfg = {} if quantization is None else {"quantization_config": quantization}
    assert dispatch_element_bytes(cfg)[0] == expected


MY_CHIP = ["flops=667 TFLOP/s", "hbm_bandwidth=2.9 TB/s", "hbm_capacity=96 GB", "chips=2", "batch=16 seq",
           "context=4096 token/seq", "scaleup_bandwidth=640 GB/s", "scaleup_latency=2 us", "scaleup_domain=16"]


def test_an_all_reduce_inside_one_domain_needs_no_scale_out_link():
    """Your own chip with its scale-up link only: the layout's all-reduce runs inside one domain (tp <= n_dom), so
    the scale-out values, which only a layout past the domain reads, are not asked for; the value is the one the
    scale-out values would give, whatever they are.  Past the domain they are asked for, by name."""
    model = str(Path(__file__).parent / "fixtures" / "configs" / "llama-3.1-8b.json")
    inside = value("tp_link_allreduce_time", sets=[*MY_CHIP, "tp=2"], model=model, scenario="lecture")
    for out in (["scaleout_bandwidth=50 GB/s", "scaleout_latency=10 us"],
                ["scaleout_bandwidth=1 GB/s", "scaleout_latency=1 ms"]):
        assert value("tp_link_allreduce_time", sets=[*MY_CHIP, "tp=2", *out], model=model) == inside
    from derive.errors import MissingValueError

    with pytest.raises(MissingValueError, match="scaleout_latency"):
        value("tp_link_allreduce_time", sets=[*MY_CHIP, "tp=32", "chips=32"], model=model)


@pytest.mark.parametrize(("cp", "dp"), [(1, 1), (1, 2), (2, 1), (2, 4)])
def test_a_tensor_parallel_group_carries_its_share_of_the_batch(cp, dp):
    # a stage's cp·dp groups each carry B/(cp·dp) sequences: the whole batch in one group's message put the
    # all-reduce floor above what the group sends (tp=4, dp=2, 64 sequences: 208 µs where 152 µs is the bound)
    sets = ["batch=64 seq", "token_activation_bytes=16384 byte/token", "tp=4", f"cp={cp}", f"dp={dp}",
            "scaleup_bandwidth=450e9 byte/s", "scaleup_latency=1 us", "scaleup_domain=64", "layers=80",
            "params_active=70e9 param", "flops=989e12 FLOP/s"]
    share = Fraction(64, cp * dp)
    assert value("allreduce_message_bytes", sets) == share * 16384
    assert value("pp_p2p_bytes", sets) == share * 16384
    assert value("tp_link_allreduce_floor", sets) == 2 * 80 * (Fraction(1, 10**6) + share * 16384 / (450 * 10**9))
    assert value("tp_compute_time", sets) == 2 * 70 * 10**9 * share / (4 * 989 * 10**12)
