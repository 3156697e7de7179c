"""Part II, chapter layouts (theorems/serving/layouts.py): chips derived from the degrees (DeepSeek-V3's published
32- and 320-GPU units), expert parallelism adding no chips, weights and KV cache per chip (the layout's own fit
against the lecture's pooled one), and bad degrees."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.model.evaluate import evaluate
from derive.model.loader import load_library
from derive.model.scenario import build_scenario
from derive.whatif.card import card
from derive.whatif.feasibility import feasibility
from theorems.capacity import memory_capacity_per_gpu
from theorems.serving import layouts

LIB = load_library(["serving"])


def value(text: str, sets=(), **kw) -> Fraction:
    return Fraction(str(evaluate(LIB, build_scenario(LIB, sets=list(sets), **kw), text).exact))


def layout(tp=1, pp=1, cp=1, dp=1, ep=1) -> list[str]:
    return [f"tp={tp}", f"pp={pp}", f"cp={cp}", f"dp={dp}", f"ep={ep}"]


# the DeepSeek-V3 units pool more chips than the lecture's 64, and EP320 holds 256 experts plus 64 slots for
# redundant and shared experts (report 3.4.2: "64 GPUs are responsible for hosting redundant experts and shared
# experts"); the prefill unit's EP32 holds 256 + 32 redundant (3.4.1: "one additional redundant expert" per GPU)
DEPLOYED = {32: ["redundant_experts=32"], 320: ["redundant_experts=64"]}


@pytest.mark.parametrize(("degrees", "published"), [
    ({"tp": 4, "dp": 8, "ep": 32}, 32),    # DeepSeek-V3 report 3.4.1: prefill unit, 4 nodes of 8 GPUs
    ({"tp": 4, "dp": 80, "ep": 320}, 320),  # 3.4.2: decode unit, 40 nodes of 8 GPUs
])
def test_deepseek_v3_units_have_the_published_chip_count(degrees, published):
    sets = layout(**degrees) + DEPLOYED[published]
    assert value("layout_chips", sets) == published
    assert value("layout_chips", sets) != value("layout_chips * ep", sets)


def test_expert_parallel_degree_does_not_change_the_chips():
    assert {value("layout_chips", layout(tp=8, dp=4, ep=e)) for e in (1, 8, 32)} == {32}


# DeepSeek-V3's routed experts: 58 MoE layers x 256 experts x 3 matrices of 7168 x 2048
# (deepseek-ai/DeepSeek-V3 config.json: num_hidden_layers 61, first_k_dense_replace 3, n_routed_experts 256,
# hidden_size 7168, moe_intermediate_size 2048)
ROUTED = 58 * 256 * 3 * 7168 * 2048


@pytest.mark.parametrize(("degrees", "published", "experts_per_gpu"), [
    ({"tp": 4, "dp": 80, "ep": 320}, 320, 1),  # report 3.4.2: "each GPU hosts only one expert"
    ({"tp": 4, "dp": 8, "ep": 32}, 32, 9),     # 3.4.1 and the inference system overview: 256 + 32 slots, 9 a GPU
])
def test_deepseek_v3_units_hold_the_published_experts_per_gpu(degrees, published, experts_per_gpu):
    sets = layout(**degrees) + DEPLOYED[published] + [f"params_routed={ROUTED} param", "params_total=671e9 param",
                                                      "bytes_per_param=1 byte/param"]
    kw = {"sets": sets, "model": "deepseek-v3"}
    got = value("weights_per_chip", **kw)
    assert got == Fraction(671 * 10**9 - ROUTED, 4) + Fraction(ROUTED * experts_per_gpu, 256)
    if published == 320:
        assert 6 * 10**9 < got < 7 * 10**9  # about 6.4 GB of FP8 weights: a fraction of an H800's 80 GB


@given(tp=st.integers(1, 16), pp=st.integers(1, 8), ep=st.integers(1, 512),
       routed=st.fractions(0, 1))
@settings(max_examples=50, deadline=None)
def test_weights_per_chip_between_the_two_even_splits(tp, pp, ep, routed):
    n_tot, q = 10**12, 1
    subs = {layouts.tp: tp, layouts.pp: pp, layouts.ep: ep, layouts.N_exp: sp.Rational(routed) * n_tot,
            layouts.N_tot: n_tot, layouts.q: q, layouts.E_red: 0, layouts.E_tot: 256}
    m = Fraction(str(LIB.expand(layouts.M_w).subs(subs)))
    assert Fraction(q * n_tot, pp * max(tp, ep)) <= m <= Fraction(q * n_tot, pp * tp)


@pytest.mark.parametrize("bad", ["tp=0", "ep=-4", "pp=0"])
def test_zero_or_negative_degree_is_one_line_exit_2(bad):
    proc = subprocess.run([sys.executable, "-m", "derive", "eval", "--library", "serving", "--set", bad,
                           "layout_chips"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


@pytest.mark.parametrize("model", ["llama3-70b", "llama3-8b"])
def test_dense_model_has_one_expert_not_the_lectures(model):
    # a dense model's MLP is its one expert: the lecture's 256 routed experts never reach it
    sc = build_scenario(LIB, hardware="h100-sxm", model=model)
    assert (sc.value("experts_total"), sc.value("experts_active")) == (1, 1)
    assert not any("experts_" in n and "lecture" in n for n in sc.notes_for(["experts_total", "experts_active"]))


def test_expert_parallelism_over_a_dense_model_is_one_line_exit_2():
    proc = subprocess.run([sys.executable, "-m", "derive", "eval", "--library", "serving", "--hardware", "h100-sxm",
                           "--model", "llama3-70b", *[a for s in layout(dp=8, ep=8) for a in ("--set", s)],
                           "layout_chips"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "experts_total = 1" in proc.stderr


def test_a_layout_smaller_than_the_pooled_chips_pools_its_own():
    # a TPU v6e preset's domain is 256 chips: a TP4 replica's decode floor reads its own 4 chips' bandwidth
    small = build_scenario(LIB, hardware="tpu-v6e", model="llama3-70b", sets=layout(tp=4))
    assert small.value("chips") == 4 and small.value("scaleup_domain") == 256
    whole = build_scenario(LIB, hardware="tpu-v6e", model="llama3-70b")
    assert whole.value("chips") == 256  # no layout: one replica on the whole domain, the lecture's model
    ratio = Fraction(str(evaluate(LIB, small, "weight_fetch_time").exact)) / Fraction(
        str(evaluate(LIB, whole, "weight_fetch_time").exact))
    assert ratio == 64


def test_the_config_reader_gives_the_routed_experts_a_layout_spreads():
    """params_routed comes from the model (no --set needed): DeepSeek-V3's 58 x 256 experts, Qwen3-30B-A3B's
    48 x 128 experts of 3 x 2048 x 768 (its config.json), and 0 for a dense model."""
    assert value("params_routed", model="deepseek-v3") == ROUTED
    qwen = "tests/fixtures/configs/qwen3-30b-a3b-instruct-2507.json"
    assert value("params_routed", model=qwen) == 48 * 128 * 3 * 2048 * 768
    assert value("params_routed", model="tests/fixtures/configs/mistral-7b-v0.1.json") == 0


def test_a_dense_models_weights_per_chip_needs_no_expert_degree():
    sets = ["tp=2", "pp=1"]
    mistral = "tests/fixtures/configs/mistral-7b-v0.1.json"
    got = value("weights_per_chip", sets, model=mistral)
    assert got == value("params_total * bytes_per_param / 2", sets, model=mistral)


# What a chip of a layout holds: its weights and its KV cache ----------------------------------------------------
QWEN3_MOE = "tests/fixtures/configs/qwen3-30b-a3b-instruct-2507.json"


def test_a_chip_of_dp8_ep8_holds_the_dense_part_whole_and_an_eighth_of_the_experts():
    """Qwen3-30B-A3B as DP8 x EP8: every chip keeps the attention and embeddings whole, 16 of the 128 experts of each
    layer, and the KV cache of its own 8 of 64 sequences (4 KV heads of 128, 48 layers, BF16: 98,304 B a token)."""
    sets = layout(dp=8, ep=8) + ["batch=64 seq", "context=8192 token/seq"]
    kw = {"hardware": "h200", "model": QWEN3_MOE, "sets": sets}
    routed = 48 * 128 * 3 * 2048 * 768
    total = value("params_total", **kw)
    assert value("weights_per_chip", **kw) == 2 * ((total - routed) + Fraction(routed, 8))
    assert value("layout_kv_bytes_per_chip", **kw) == Fraction(64 * 8192 * 98304, 8)
    pooled = value("memory_per_chip", **kw)
    assert pooled == (2 * total + 64 * 8192 * 98304) / 8
    assert value("layout_memory_per_chip", **kw) > pooled  # the copied attention and embeddings
    # and its 8 sequences' hidden states, d_model 2,048 in BF16: a floor on its activations
    assert value("layout_activation_bytes_per_chip", **kw) == 8 * 2 * 2048
    assert value("layout_memory_per_chip", **kw) == sum(
        value(n, **kw) for n in ("weights_per_chip", "layout_kv_bytes_per_chip", "layout_activation_bytes_per_chip"))


def test_kv_per_chip_stops_shrinking_past_the_kv_heads():
    # Llama 3 70B has 8 KV heads: TP16 copies each onto two devices, so a chip holds what it held under TP8
    kw = {"hardware": "h100-sxm", "model": "llama3-70b"}
    at = {t: value("layout_kv_bytes_per_chip", layout(tp=t) + ["batch=64 seq", "context=8192 token/seq"], **kw)
          for t in (4, 8, 16)}
    assert at[4] == 2 * at[8] and at[16] == at[8]


def test_a_latent_cache_is_held_whole_by_every_tensor_parallel_device():
    # DeepSeek-V3 caches one latent a layer (kv_heads = 1): TP8 copies it onto all eight devices
    kw = {"hardware": "h200", "model": "deepseek-v3", "sets": layout(tp=8) + ["batch=32 seq", "context=4096 token/seq"]}
    assert value("kv_heads", **kw) == 1
    assert value("layout_kv_bytes_per_chip", **kw) == value("sequences_in_flight * kv_bytes_per_sequence", **kw)


def test_experts_without_expert_parallelism_are_split_over_the_tensor_parallel_devices():
    # TP8 with ep = 1 (vLLM and SGLang's default for DeepSeek-V3 on one node): a chip holds an eighth of every expert
    kw = {"hardware": "h200", "model": "deepseek-v3", "sets": layout(tp=8)}
    assert value("weights_per_chip", **kw) == value("params_total * bytes_per_param / 8", **kw)


@pytest.mark.parametrize(("hardware", "fits"), [("h200", True), ("h100-sxm", False)])
def test_deepseek_v3_on_one_tp8_node_fits_an_h200_node_not_an_h100_node(hardware, fits):
    # 671B FP8 weights: 84 GB a chip on TP8, beside the latent KV every chip holds whole
    sc = build_scenario(LIB, hardware=hardware, model="deepseek-v3",
                        sets=layout(tp=8) + ["batch=32 seq", "context=4096 token/seq"])
    broken = {v.claim for v in feasibility(LIB, sc).violations}
    assert ("layouts.layout_memory_fits_in_hbm" not in broken) is fits


@pytest.mark.parametrize(("degrees", "layout_fits"), [({"tp": 8}, True), ({"dp": 8}, False)])
def test_data_parallel_replicas_of_llama3_70b_fit_no_h100_where_the_pooled_share_fits(degrees, layout_fits):
    sc = build_scenario(LIB, hardware="h100-sxm", model="llama3-70b",
                        sets=layout(**degrees) + ["batch=8 seq", "context=4096 token/seq"])
    broken = {v.claim for v in feasibility(LIB, sc).violations}
    assert "capacity.memory_fits_in_hbm" not in broken  # the lecture's pooled share: 19 GB a chip either way
    assert ("layouts.layout_memory_fits_in_hbm" not in broken) is layout_fits


def test_the_card_gives_the_layouts_own_longest_context_below_the_pooled_one():
    rows = {r.decl: r for r in card(LIB, build_scenario(LIB, hardware="h200", model=QWEN3_MOE,
                                                       sets=layout(dp=8, ep=8) + ["batch=64 seq"])).rows}
    pooled, own = rows["capacity.memory_fits_in_hbm"], rows["layouts.layout_memory_fits_in_hbm"]
    assert Fraction(own.exact) < Fraction(pooled.exact)
    # by hand: (141 GB - the weights a chip holds - 8 sequences' hidden states, 2 x 2,048 B a token) over the 8
    # sequences' 98,304 B a token
    kw = {"hardware": "h200", "model": QWEN3_MOE, "sets": layout(dp=8, ep=8) + ["batch=64 seq"]}
    assert Fraction(own.exact) == (141 * 10**9 - value("weights_per_chip", **kw) - 8 * 4096) / (8 * 98304)


def test_without_a_layout_the_layouts_fit_is_not_decided():
    sc = build_scenario(LIB, hardware="h100-sxm", model="llama3-70b")
    assert "layouts.layout_memory_fits_in_hbm" in feasibility(LIB, sc).undecided


@given(tp=st.sampled_from([1, 2, 4, 8, 16]), pp=st.integers(1, 4), cp=st.integers(1, 4), dp=st.integers(1, 8),
       ep=st.sampled_from([1, 2, 4, 8, 16, 32]), routed=st.fractions(0, 1), kv_heads=st.sampled_from([1, 2, 8, 16]),
       redundant=st.sampled_from([0, 32]))
@settings(max_examples=60, deadline=None)
def test_a_layouts_chip_never_holds_less_than_the_pooled_share(tp, pp, cp, dp, ep, routed, kv_heads, redundant):
    """layouts.layout_memory_at_least_pooled at numbers: the layout's gives (chips = tp·cp·dp, stages = pp)."""
    if ep > tp * cp * dp:
        return
    n_tot, q, s_kv, seqs = 10**12, 1, 10**9, 64
    subs = {layouts.tp: tp, layouts.pp: pp, layouts.cp: cp, layouts.dp: dp, layouts.ep: ep, layouts.N_tot: n_tot,
            layouts.N_exp: sp.Rational(routed) * n_tot, layouts.E_tot: 256, layouts.E_red: redundant,
            layouts.q: q, layouts.S_kv: s_kv, layouts.N_seq: seqs,
            layouts.h_kv: kv_heads, layouts.chips_q.sym: tp * cp * dp, layouts.stages_q.sym: pp}
    own = layouts.weights_per_chip.expr + layouts.layout_kv_bytes_per_chip.expr  # layout_memory_per_chip without
    own += layouts.layout_activation_bytes_per_chip.expr.subs(  # its hidden states: 64 sequences of 16 KB tokens
        {layouts.B: seqs, layouts.tau: 1, layouts.a_tok: 16384})
    pooled = memory_capacity_per_gpu.expr
    own, pooled = (Fraction(str(e.subs(subs))) for e in (own, pooled))
    assert own >= pooled


# The decode floor of a layout: a replica reads its dense weights over its own tp devices --------------------------
@pytest.mark.parametrize(("degrees", "factor"), [({"tp": 8}, 1), ({"dp": 8}, 8), ({"tp": 2, "dp": 2, "cp": 2}, 4)])
def test_a_dense_replicas_floor_is_the_pooled_floor_times_cp_dp(degrees, factor):
    kw = {"hardware": "h100-sxm", "model": "llama3-70b", "sets": layout(**degrees)}
    assert value("replica_weight_fetch_floor", **kw) == factor * value("weight_fetch_time_floor", **kw)
    assert value("layout_decode_floor", **kw) == value("replica_weight_fetch_floor", **kw)


def test_deepseek_v3_decode_units_floor_reads_the_dense_weights_on_one_gpu():
    """EP144 with DP144 on H100s (tp = 1): each GPU reads the 16.2B dense parameters a token multiplies (its 8
    routed experts' share, 8/256 of the 653.9B routed, left out), 4.85 ms at 3.35 TB/s, where the pooled floor
    spreads the active weights over 144 GPUs (76 us)."""
    kw = {"hardware": "h100-sxm", "model": "deepseek-v3", "sets": layout(dp=144, ep=144) + ["redundant_experts=32"]}
    dense = value("params_active", **kw) - Fraction(ROUTED * 8, 256)
    got = value("replica_weight_fetch_floor", **kw)
    assert got == value("bytes_per_param", **kw) * dense / Fraction(335 * 10**10)
    assert Fraction(48, 10**4) < got < Fraction(49, 10**4)
    assert value("layout_decode_floor", **kw) == got > 60 * value("weight_fetch_time_floor", **kw)


@pytest.mark.parametrize(("degrees", "noted"), [({"dp": 8}, True), ({"tp": 8}, False)])
def test_the_pooled_decode_floor_row_points_to_the_layouts_where_a_replica_reads_more(degrees, noted):
    sc = build_scenario(LIB, hardware="h100-sxm", model="llama3-70b", sets=layout(**degrees))
    row = next(r for r in card(LIB, sc).rows if r.decl == "roofline.latency_floor")
    assert ("layouts.layout_decode_floor" in (row.note or "")) is noted


# One request's time to first token on a layout: its replica reads and multiplies its dense weights -----------------
PROMPT = ["prefill_tokens=8192 token/seq"]


@pytest.mark.parametrize(("degrees", "factor"), [({"tp": 8}, 1), ({"tp": 8, "dp": 4}, 4),
                                                 ({"tp": 2, "dp": 2, "cp": 2}, 2), ({"tp": 4, "pp": 2, "dp": 2}, 2)])
def test_a_dense_requests_ttft_floor_on_a_layout_is_dp_times_the_pooled(degrees, factor):
    """Llama 3 70B, an 8K prompt (compute-bound): the pooled request floor spreads its multiplies over every chip of
    the stages, the replica's over its tp·cp devices of each stage only, dp times fewer."""
    kw = {"hardware": "h100-sxm", "model": "llama3-70b", "sets": layout(**degrees) + PROMPT}
    pooled = value("request_ttft_floor", **kw)
    assert value("replica_prefill_compute_floor", **kw) == factor * pooled
    assert value("layout_ttft_floor", **kw) == factor * pooled


def test_llama3_70b_on_tp8_dp4_needs_a_replicas_eight_gpus_for_its_prompt():
    """TP8 x DP4 on 32 H100s: an 8K prompt's 2 x 68.45B x 8192 FLOPs (the 1.05B output head for the last token
    only) on one replica's eight GPUs at 989.4 TFLOP/s take 141.7 ms; the pooled floor said 36 ms, a quarter, which
    no replica can reach."""
    kw = {"hardware": "h100-sxm", "model": "llama3-70b", "sets": layout(tp=8, dp=4) + PROMPT}
    head = value("params_output_head", **kw)
    by_hand = 2 * ((value("params_active", **kw) - head) * 8192 + head) / (8 * value("flops", **kw))
    assert value("layout_ttft_floor", **kw) == by_hand
    assert Fraction(1416, 10**4) < by_hand < Fraction(1418, 10**4)


def test_deepseek_v3_prefill_units_replica_multiplies_its_dense_weights_on_four_gpus():
    """The prefill unit (TP4, DP8, EP32, DeepSeek-V3 report 3.4.1): a request's attention, shared expert and dense
    layers run on its rank's four GPUs, its 8 routed experts (8/256 of the 653.9B routed) on any of the 32."""
    kw = {"hardware": "h100-sxm", "model": "deepseek-v3", "sets": layout(tp=4, dp=8, ep=32) + DEPLOYED[32] + PROMPT}
    dense = value("params_active", **kw) - Fraction(ROUTED * 8, 256)
    head = value("params_output_head", **kw)
    assert head == 129280 * 7168  # the LM head, multiplied for the prompt's last token only
    got = value("replica_prefill_compute_floor", **kw)
    assert got == 2 * ((dense - head) * 8192 + head) / (4 * value("flops", **kw))
    assert value("layout_ttft_floor", **kw) == max(got, value("request_ttft_floor", **kw),
                                                    value("replica_weight_fetch_floor", **kw))
    assert got > value("request_ttft_floor", **kw)


@pytest.mark.parametrize(("degrees", "noted"), [({"tp": 8, "dp": 4}, True), ({"tp": 8}, False)])
def test_the_pooled_ttft_row_points_to_the_layouts_where_a_replica_does_more(degrees, noted):
    sc = build_scenario(LIB, hardware="h100-sxm", model="llama3-70b", sets=layout(**degrees) + PROMPT)
    rows = {r.decl: r for r in card(LIB, sc).rows}
    assert ("layouts.layout_ttft_floor" in (rows["prefill.ttft_floor_below_measured"].note or "")) is noted
    assert rows["layouts.layout_ttft_floor"].shown.endswith("ms")


# the step time of a layout: each replica's own step ------------------------------------------------------------

@pytest.mark.parametrize(("tp", "dp"), [(1, 8), (2, 4), (8, 1)])
@pytest.mark.parametrize("context", ["512 token/seq", "32768 token/seq"])
def test_a_data_parallel_layouts_step_is_one_replicas_lecture_step_at_its_share(tp, dp, context):
    """Llama 3 8B on an H100 node at 64 sequences: under TP·DP the layout's step time is the lecture's step time of
    one replica alone (tp chips, 64/dp sequences), compute-bound or memory-bound; the lecture's pooled step is
    shorter by the copies' reads whenever dp > 1."""
    base = ("context=" + context,)
    layout = value("layout_step_time", (*base, f"tp={tp}", f"dp={dp}", "batch=64 seq"), hardware="h100-sxm",
                   model="llama3-8b")
    replica = value("step_time", (*base, f"chips={tp}", f"batch={64 // dp} seq"), hardware="h100-sxm",
                    model="llama3-8b")
    pooled = value("step_time", (*base, f"tp={tp}", f"dp={dp}", "batch=64 seq"), hardware="h100-sxm",
                   model="llama3-8b")
    assert layout == replica
    assert (pooled < layout) is (dp > 1)


def test_tp_past_the_kv_heads_reads_each_copied_kv_head():
    """Llama 3 8B has 8 KV heads: at tp = 16 each is read on two devices, so the layout's step adds the KV reads
    once more over the pooled step (memory-bound: a long context, no data parallelism)."""
    sets = ("context=32768 token/seq", "batch=64 seq", "chips=16")
    kv = value("kv_fetch_time", (*sets, "tp=16"), hardware="h100-sxm", model="llama3-8b")
    pooled = value("step_time", (*sets, "tp=16"), hardware="h100-sxm", model="llama3-8b")
    layout = value("layout_step_time", (*sets, "tp=16"), hardware="h100-sxm", model="llama3-8b")
    assert kv > 0 and layout == pooled + kv


def test_the_serving_card_says_the_pooled_step_is_short_under_data_parallelism():
    sc = build_scenario(LIB, hardware="h100-sxm", model="llama3-8b", sets=["dp=8", "batch=64 seq"])
    rows = {r.label: r for r in card(LIB, sc).rows}
    lecture = rows["step time at the scenario's batch"]
    assert "layouts.layout_step_time" in (lecture.note or "")
    assert rows["step time on the layout (each replica reads its own dense weights)"].exact is not None
    sc = build_scenario(LIB, hardware="h100-sxm", model="llama3-8b", sets=["tp=8", "batch=64 seq"])
    assert "layouts.layout_step_time" not in ({r.label: r for r in card(LIB, sc).rows}
                                              ["step time at the scenario's batch"].note or "")


def test_a_diff_between_two_layouts_reports_the_layouts_own_floors(tmp_path, capsys):
    """Gemma 3 27B on eight TPU v6e chips, TP8 against TP4 x DP2: the lecture's pooled numbers do not move (the same
    eight chips), the layout's decode floor and TTFT floor double (a replica has half the chips), its step grows."""
    from derive.cli import main

    for name, degrees in (("tp8", "tp = 8"), ("tp4dp2", "tp = 4\ndp = 2")):
        (tmp_path / f"{name}.toml").write_text(
            f'hardware = "tpu-v6e"\nmodel = "gemma3-27b"\n[layout]\n{degrees}\n'
            '[values.prefill_tokens]\nvalue = "4096 token/seq"\nsource = "a workload"\n')
    code = main(["diff", "--library", "serving", "--scenario", str(tmp_path / "tp4dp2.toml"), "--against",
                 str(tmp_path / "tp8.toml"), "--json", "--cache-dir", str(tmp_path / "cache")])
    heads = {h["label"]: h for h in json.loads(capsys.readouterr().out)["headlines"]}
    assert code == 0
    assert heads["weight fetch per step"]["before"] == heads["weight fetch per step"]["after"]
    before, after = ({label: Fraction(heads[label][side]["exact"]) for label in heads if "layout" in label}
                     for side in ("before", "after"))
    assert after["decode floor on the layout"] == 2 * before["decode floor on the layout"]
    assert after["TTFT floor on the layout"] == 2 * before["TTFT floor on the layout"]
    assert after["step time on the layout"] > before["step time on the layout"]
