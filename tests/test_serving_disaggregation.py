"""Part II, chapter disaggregation (theorems/serving/disaggregation.py): KV transfer bytes from the publishers'
config.json (DeepSeek-V3's MLA, Llama 3.1 405B's GQA), the exact break-even batch, the stall as a multiple of the
transfer, input and output token costs kept apart, rates per prefill, decode and deployed chip in units that do not
add (DeepSeek's published units and rates per node), and bad input."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from libtools import close

from derive.model.evaluate import evaluate
from derive.model.loader import load_library
from derive.model.scenario import build_scenario
from theorems.serving import disaggregation as dis

LIB = load_library(["serving"])

# KV bytes per token, all layers, BF16 (2 bytes an element):
# deepseek-ai/DeepSeek-V3 config.json: 61 layers x (kv_lora_rank 512 + qk_rope_head_dim 64)
DSV3_KV = 61 * (512 + 64) * 2
# meta-llama/Llama-3.1-405B config.json: 126 layers x 8 KV heads x head_dim 128 x (keys, values)
LLAMA_405B_KV = 126 * 8 * 128 * 2 * 2
NIC = "scaleout_bandwidth=50e9 byte/s"  # one 400 Gb/s NIC per GPU (the h100-sxm preset)


def value(text: str, sets=(), **kw) -> Fraction:
    return Fraction(str(evaluate(LIB, build_scenario(LIB, sets=list(sets), **kw), text).exact))


def test_kv_per_token_matches_the_published_70_and_516_kb():
    # DeepSeek's ISCA '25 paper, table 1: 70.272 KB per token for DeepSeek-V3, 516.096 KB for Llama 3.1 405B
    assert DSV3_KV == 70_272
    assert LLAMA_405B_KV == 516_096


def test_deepseek_v3_4k_prompt_transfer():
    sets = [f"kv_bytes_per_token={DSV3_KV} byte/token", "prefill_tokens=4096 token/seq", "chips=1", NIC]
    assert value("kv_transfer_bytes", sets) == 4096 * 70_272  # 287.8 MB
    assert value("kv_transfer_time", sets) == Fraction(4096 * 70_272, 50 * 10**9)
    assert close(value("kv_transfer_time", sets), Fraction(576, 10**5), rel=Fraction(1, 100))
    # over the 8 NICs of a prefill node the same cache crosses in an eighth of the time
    assert value("kv_transfer_time", [*sets[:-2], "chips=8", NIC]) * 8 == value("kv_transfer_time", sets)


@pytest.mark.parametrize(("kv", "active", "flops", "below"), [
    (DSV3_KV, 37 * 10**9, 1979 * 10**12, Fraction(1, 25)),       # DeepSeek-V3, FP8 peak of an H100-class chip
    (LLAMA_405B_KV, 405 * 10**9, 989 * 10**12, Fraction(1, 50)),  # Llama 3.1 405B, BF16 peak of an H100
])
def test_breakeven_batch_is_a_fraction_of_one_request(kv, active, flops, below):
    sets = [f"kv_bytes_per_token={kv} byte/token", f"params_active={active} param", f"flops={flops} FLOP/s", NIC]
    b = value("disaggregation_breakeven_batch", sets)
    # one request's KV bytes per token times F, over 2 FLOPs x N_act x 50 GB/s
    assert b == Fraction(kv * flops, 2 * active * 50 * 10**9)
    assert 0 < b < below


@pytest.mark.parametrize("batch", [1, 8, 256])
def test_stall_is_batch_over_breakeven_transfers(batch):
    sets = [f"kv_bytes_per_token={DSV3_KV} byte/token", "params_active=37e9 param", "flops=1979e12 FLOP/s", NIC,
            "prefill_tokens=4096 token/seq", "chips=8", f"batch={batch} seq"]
    ratio = value("prefill_interference / (one_request * kv_transfer_time)", sets)
    assert ratio == batch / value("disaggregation_breakeven_batch", sets)
    assert ratio > 25 * batch


@given(ell=st.integers(1, 10**6), kv=st.integers(1, 10**7), n_act=st.integers(10**8, 10**12),
       f=st.integers(10**13, 10**16), w=st.integers(10**9, 10**12), chips=st.integers(1, 64),
       batch=st.fractions(Fraction(1, 1000), 4096))
@settings(max_examples=200, deadline=None)
def test_breakeven_decides_for_every_prompt(ell, kv, n_act, f, w, chips, batch):
    subs = {dis.ell: ell, dis.k: kv, dis.N_act: n_act, dis.F: f, dis.W_out: w, dis.n: chips,
            dis.B: sp.Rational(batch.numerator, batch.denominator)}
    transfer = LIB.expand(dis.sigma * dis.t_x).subs(subs)
    stall = LIB.expand(dis.I_pre).subs(subs)
    b_dis = LIB.expand(dis.B_dis).subs(subs)
    assert bool(sp.Le(transfer, stall)) == bool(sp.Ge(subs[dis.B], b_dis))


def test_input_and_output_token_costs_are_separate_quantities():
    assert LIB.quantity("input_token_cost") is not LIB.quantity("output_token_cost")
    sets = ["prefill_tokens=1000 token/seq", "output_tokens=200 token/seq"]
    got = value("request_cost", sets)
    assert got == 1000 * value("prefill_cost_per_token", sets) + 200 * value("cost_per_token", sets)


@pytest.mark.parametrize("bad", ["scaleout_bandwidth=0 byte/s", "prefill_tokens=-5 token/seq"])
def test_bad_disaggregation_input_is_one_line_exit_2(bad):
    proc = subprocess.run([sys.executable, "-m", "derive", "eval", "--library", "serving", "--set", bad,
                           "disaggregation_breakeven_batch"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


# Pool sizes and rates per chip: prefill chips, decode chips and deployed chips are different units ----------------
# DeepSeek-V3/R1 Inference System Overview (deepseek-ai/open-infra-index, 2025-03-01): a prefill unit spans 4 nodes,
# a decode unit 18, 8 H800 GPUs a node; about 73.7k input tokens/s per prefill node, 14.8k output per decode node
DS_UNITS = ["prefill_chips=32 prefill_chip", "decode_chips=144 decode_chip",
            f"input_token_rate={4 * 73_700} token/s", f"output_token_rate={18 * 14_800} token/s"]


def test_deepseek_units_rates_per_prefill_decode_and_deployed_chip():
    assert value("deployed_chips", DS_UNITS) == 176
    assert value("input_rate_per_prefill_chip", DS_UNITS) == Fraction(73_700, 8)  # 9,212.5 per prefill chip
    assert value("output_rate_per_decode_chip", DS_UNITS) == 1850
    per_chip = value("output_rate_per_deployed_chip", DS_UNITS)
    assert per_chip == Fraction(266_400, 176) and close(per_chip, 1514)
    # the prefill chips the decode pool needs beside it cost the deployment 18 % of the per-decode-chip rate
    assert close(1 - per_chip / 1850, Fraction(18, 100), rel=Fraction(2, 100))


def test_rates_per_chip_carry_their_pools_units():
    units = {name: LIB.quantity(name).unit for name in
             ("prefill_chips", "decode_chips", "deployed_chips", "input_rate_per_prefill_chip",
              "output_rate_per_decode_chip", "output_rate_per_deployed_chip")}
    assert units == {"prefill_chips": "prefill_chip", "decode_chips": "decode_chip", "deployed_chips": "1",
                     "input_rate_per_prefill_chip": "token/(s·prefill_chip)",
                     "output_rate_per_decode_chip": "token/(s·decode_chip)",
                     "output_rate_per_deployed_chip": "token/s"}
    dims = {LIB.quantity(n).dimension for n in ("input_rate_per_prefill_chip", "output_rate_per_decode_chip",
                                                "output_rate_per_deployed_chip")}
    assert len(dims) == 3
    assert LIB.quantity("deployed_chips").dimension == LIB.quantity("chips").dimension
    for name in ("chip_per_prefill_chip", "chip_per_decode_chip"):
        assert LIB.quantity(name).value == 1 and LIB.quantity(name).source is not None


def test_adding_a_per_prefill_chip_rate_to_a_per_decode_chip_rate_does_not_load():
    from derive import Definition, Quantity, derived
    from derive.errors import DimensionError
    from derive.model.declarations import Topic
    from derive.model.library import Library

    pooled = Quantity("pooled_rate", "r", "token/(s·prefill_chip)", "the two pools' rates added, by mistake")
    mistake = Definition("mine.pooled_rate", title="Pooled rate", statement="Adds the rates of both pools.",
                         source=derived("a mistake"), defines=pooled, expr=dis.th_pre + dis.th_dec)
    topic = Topic("mine", "mine", "", (pooled,), (mistake,))
    with pytest.raises(DimensionError, match=r"token/\(s·prefill_chip\).*token/\(s·decode_chip\)"):
        Library([*LIB.topics, topic])


@given(pre=st.integers(1, 10**5), dec=st.integers(1, 10**5), rate=st.integers(1, 10**9))
@settings(max_examples=200, deadline=None)
def test_rate_per_deployed_chip_is_the_decode_rate_diluted(pre, dec, rate):
    subs = {dis.N_pre: pre, dis.N_dec: dec, dis.Th_out: rate}
    per_deployed = LIB.expand(dis.th_dep).subs(subs)
    per_decode = LIB.expand(dis.th_dec / dis.kap_dec).subs(subs)
    assert per_deployed == per_decode * sp.Rational(dec, pre + dec)
    assert per_deployed < per_decode


@pytest.mark.parametrize(("bad", "says"), [
    ("prefill_chips=32", "write it with a unit, like 32 prefill_chip"),
    ("prefill_chips=32 decode_chip", "unit 'decode_chip' is decode_chip but prefill_chips is prefill_chip"),
    ("decode_chips=144", "like 144 decode_chip"),
    ("prefill_chips=32 prefill_chips", "unknown unit 'prefill_chips'"),
])
def test_a_pool_size_in_the_wrong_unit_is_one_line_exit_2(bad, says):
    proc = subprocess.run([sys.executable, "-m", "derive", "eval", "--library", "serving", "--set", bad,
                           "deployed_chips"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert says in proc.stderr
