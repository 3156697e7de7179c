"""Batch size: the optimum that balances weight reads against matrix multiplies

Chapter 1 of the lecture ("How batch size affects token cost and speed", 00:00:00-00:32:09), second
half.  Weight reads are shared by the whole batch; multiplies and KV reads are not.  So a batch large
enough makes the step compute-bound, and the threshold depends on the hardware's FLOPs per byte and
the model's sparsity only.  From that threshold follow the lecture's numbers: the 2,400-sequence
batch, the 20 ms "train" schedule with its 40 ms worst case, 128,000 tokens/s per replica, the
thousandfold penalty for not batching, and a reading of "fast mode" prices.

Main claims:
- ``batching.fast_mode_premise``: fast modes charge about 6x for about 2.5x speed (the question the
  chapter answers).
- ``batching.deepseek_v3_params``: 700B total, 37B active, as said; ``batching.sparsity_inconsistency``
  shows that the lecture's sparsity of 8 does not follow from these (expected ``refuted``).
- ``batching.goldilocks_context_and_mfu``: once weights are amortized, MFU is min(1, L*/L), so
  doubling the context past the balance point halves it (``batching.mfu_half_at_double_context``).
- ``batching.hw_ratio_300``: the hardware ratio R = F·q/(2W) is about 300; ``batching.hw_ratio_a100``
  (expected ``refuted``) shows the A100 at about 153.
- **Batch optimum** ``batching.batch_optimum``: compute time equals weight-fetch time exactly when the
  batch is B* = R·S (per new token); the step is compute-bound iff B >= B*.
  ``batching.batch_optimum_lecture``: 300 × 8 = 2,400.
- ``batching.kv_raises_batch_optimum``: with KV reads the balancing batch is B*/(1 - L/L*), larger
  than B* and growing with the context; past L* no batch is compute-bound
  (``batching.kv_memory_bound_past_critical_context``); at the scenario's own 200k-token context
  that is the case (``batching.kv_optimum_at_lecture_context``, expected ``refuted``).
- ``batching.train_schedule``: a batch departs every 20 ms, so the worst case is 40 ms.
- ``batching.fast_mode_pricing``: in a weights-only model a fast mode at batch B_f < B* against a
  normal mode at m·B* is m times faster and B*/B_f times dearer; 2.5x and 6x give m = 2.5 and
  B_f = 400.
- ``batching.unbatched_cost_penalty``: one sequence at a time costs B* times more per token than the
  optimum (2,400x for the lecture, "a thousand times worse").
- ``batching.batch_scale_independence``: B* depends on the model only through its sparsity.
- ``batching.system_throughput_and_gemini_fraction``: 2,000 × 64 = 128,000 tokens/s per replica,
  about a thousandth of a fleet serving hundreds of millions of tokens per second.
- ``batching.routed_scaling_tradeoff``, ``batching.routed_scaling_gain``: 64 experts buy about a 4x
  larger dense-equivalent model (Clark et al. 2022).
- ``batching.sparsity_bandwidth_win``: at fixed active parameters, more total parameters raise the
  needed batch and the memory needed, but not the batched cost per token.

Notation: R = F·q/(2·W), the lecture's dimensionless "about 300" (here in tokens per weight fetch);
S = (N_act + N_skip)/N_act the sparsity factor, the weights a step reads once every expert is read
(every weight but the input embedding) over the active ones, 1 for a dense model; B* = R·S/τ the
critical batch (τ = 1 token per sequence per decode step); L* = 2·N_act·τ·W/(F·k) the context at
which KV reads per token take as long as the token's multiplies.

Implementation notes: the optimum is stated where every expert is read (``EVERY_EXPERT_READ``), as at
any MoE model's critical batch; the KV term is left out of the optimum as on the blackboard; the KV-corrected
optimum is ``batching.kv_raises_batch_optimum``.  Claims that model a fast or an unbatched mode with
"KV ignored" write the weights-only step time max(2·N_act·B·τ/(n·F), N_tot·q/(n·W)) out explicitly
instead of setting the KV size to zero.  The lecture scenario pins ``sparsity`` = 8 (the lecture's
reading of "32 of 256"), so instance claims use B* = 2,400 while N_tot/N_act stays 700/37; claims
that would mix the two are written so that they do not.  Lecture numbers are instance claims with a
stated tolerance; the lecture's inconsistencies carry the tag ``inconsistency`` and encode both
readings, the false one with ``expected="refuted"``.

References: the lecture, 00:00-00:32; Clark et al. 2022, "Unified Scaling Laws for Routed Language
Models"; DeepSeek-AI 2024, "DeepSeek-V3 Technical Report".
"""

from __future__ import annotations

import sympy as sp

from derive import Assumption, Claim, Definition, Quantity, Step, lecture, logic, paper, si, spec

from .roofline import (
    B2,
    CHAPTER,
    EVERY_EXPERT_READ,
    FULL_ATTENTION_ONLY,
    B,
    F,
    L,
    N_act,
    N_all,
    N_row,
    N_tot,
    S_kv,
    W,
    c_fwd,
    compute_time_q,
    cost_per_token_and_floor,
    critical_intensity_q,
    drain_time_q,
    k,
    kv_fetch_time_q,
    latency_floor,
    memory_time_q,
    n,
    p_chip,
    q,
    slow_mode_on_cost_floor,
    step_time_at,
    step_time_q,
    tau,
    weight_fetch_time_q,
)

INCONSISTENCY = ("inconsistency",)

# Quantities -------------------------------------------------------------------------------------------
fast_price_ratio = Quantity("fast_price_ratio", r"\rho_{\$}", "1",
                            "price per token of a fast mode over the normal price")
fast_speed_ratio = Quantity("fast_speed_ratio", r"\rho_{v}", "1",
                            "token streaming speed of a fast mode over the normal speed")
critical_context_q = Quantity("critical_context", "L^{*}", "token/seq",
                              "context at which a sequence's KV reads take as long as its multiplies")
mfu_q = Quantity("mfu", r"\mathrm{MFU}", "1", "fraction of peak FLOP/s a decode step uses")
mfu_amortized_q = Quantity("mfu_weights_amortized", r"\mathrm{MFU}_{\infty}", "1",
                           "MFU once weight reads are amortized away, so only compute and KV reads count")
context_other = Quantity("context_other", "L'", "token/seq", "a second context length, for comparisons")
hardware_ratio_q = Quantity("hardware_ratio", "R", "token",
                            "tokens that must share one weight fetch for compute to match memory time: "
                            "F·q/(2·W), the lecture's ~300")
sparsity_q = Quantity("sparsity", "S", "1", "total over active parameters")
critical_batch_q = Quantity("critical_batch", "B^{*}", "seq", "batch at which compute time equals weight-fetch time")
critical_batch_kv_q = Quantity("critical_batch_kv", r"B^{*}_{\mathrm{kv}}", "seq",
                               "batch at which compute time equals weight plus KV fetch time")
train_interval = Quantity("train_interval", r"T_{\mathrm{train}}", "s",
                          "time between successive batch departures (the 'train' schedule)", display_unit="ms")
queue_wait = Quantity("queue_wait", r"t_{\mathrm{wait}}", "s",
                      "time a request waits for the next departure", domain="nonnegative", display_unit="ms")
request_latency_q = Quantity("request_latency", r"t_{\mathrm{req}}", "s",
                             "time from a request's arrival to the end of the step that serves it", display_unit="ms")
worst_case_latency_q = Quantity("worst_case_latency", r"t_{\mathrm{req}}^{\max}", "s",
                                "request latency when the request just missed a departure", display_unit="ms")
fast_batch = Quantity("fast_batch", r"B_{\mathrm{f}}", "seq", "batch of a fast (low-latency) mode")
normal_batch_multiple = Quantity("normal_batch_multiple", "m", "1",
                                 "the normal mode's batch as a multiple of the critical batch")
model_scale = Quantity("model_scale", r"\lambda", "1", "factor scaling both total and active parameters")
throughput_q = Quantity("throughput", r"\Theta", "token/s", "tokens per second one replica produces")
params_dense_equivalent = Quantity("params_dense_equivalent", r"N_{\mathrm{dense}}", "param",
                                   "parameters of a dense model of the same quality as a routed one")
sparsity_gain = Quantity("sparsity_gain", "g", "1",
                         "factor by which total parameters grow at fixed active parameters")

R, S, Bstar, Bkv = hardware_ratio_q.sym, sparsity_q.sym, critical_batch_q.sym, critical_batch_kv_q.sym
Lstar, L2 = critical_context_q.sym, context_other.sym
T_train, Bf, m = train_interval.sym, fast_batch.sym, normal_batch_multiple.sym
t_c, t_w, t_kv, t_mem, T = (compute_time_q.sym, weight_fetch_time_q.sym, kv_fetch_time_q.sym, memory_time_q.sym,
                            step_time_q.sym)


def step_time_weights_only(b: sp.Expr, ntot: sp.Expr = N_all) -> sp.Expr:
    """The roofline step time with the KV term left out, at batch ``b``, every expert read (``ntot``
    weights: all of them but the input embedding)."""
    return sp.Max(c_fwd * N_act * b * tau / (n * F), ntot * q / (n * W), evaluate=False)


def cost_weights_only(b: sp.Expr, ntot: sp.Expr = N_all) -> sp.Expr:
    """Cost per token with the KV term left out, at batch ``b``."""
    return p_chip * n * step_time_weights_only(b, ntot) / (b * tau)


# 1. The question: fast modes ---------------------------------------------------------------------------
fast_mode_premise = Assumption(
    "batching.fast_mode_premise", title="Fast modes: about 6x the price for about 2.5x the speed",
    statement="Coding assistants sell a 'fast mode' that streams tokens about 2.5 times faster for about "
              "6 times the price per token.  The lecture attributes most of this to a smaller batch; "
              "speculative decoding and multi-token prediction are a second effect it does not analyse.  "
              "The two ratios are scenario values (fast_price_ratio, fast_speed_ratio).",
    source=lecture("00:02", CHAPTER),
)

# 5. The model on the blackboard ---------------------------------------------------------------------
deepseek_v3_params = Assumption(
    "batching.deepseek_v3_params", title="DeepSeek-V3: about 700B total, 37B active parameters",
    statement="The lecture's running example has about 37 billion active and 700 billion total "
              "parameters (params_active, params_total in the lecture scenario).  The published figures "
              "are 671B total and 37B active, with 8 of 256 routed experts plus one shared expert per "
              "token, so the parameter ratio is about 18-19, not the 8 used later for the batch optimum.",
    source=lecture("00:06", CHAPTER),
    tags=INCONSISTENCY,
)

# 7. Goldilocks context and MFU -------------------------------------------------------------------------
critical_context = Definition(
    "batching.critical_context", title="Balance context",
    statement="The context at which the KV-cache bytes a sequence reads per step take as long over the "
              "memory bandwidth as that sequence's multiplies take on the FLOPs.",
    source=lecture("00:12", CHAPTER, reconstructed=True),
    defines=critical_context_q, expr=c_fwd * N_act * tau * W / (F * k),
    domain=logic.gt(k, 0),  # a model whose cache does not grow with the context has no balance context
)
mfu = Definition(
    "batching.mfu", title="Model FLOPs utilization of a decode step",
    statement="Compute time over step time: the share of peak FLOP/s the step uses.",
    source=lecture("00:12", CHAPTER),
    defines=mfu_q, expr=t_c / T,
)
mfu_weights_amortized = Definition(
    "batching.mfu_weights_amortized", title="MFU with weight reads amortized",
    statement="Compute time over the slower of compute and KV reads: the MFU a very large batch tends to, "
              "when the shared weight reads no longer matter.",
    source=lecture("00:12", CHAPTER),
    defines=mfu_amortized_q, expr=t_c / sp.Max(t_c, t_kv, evaluate=False),
)
goldilocks_context_and_mfu = Claim(
    "batching.goldilocks_context_and_mfu", title="Past the balance context, MFU falls as 1/L",
    label="Goldilocks context",
    statement="With weights amortized, a step is equally compute- and memory-bound exactly at the balance "
              r"context \(L^{*}\); beyond it KV reads dominate and the MFU is \(L^{*}/L\), so it falls in "
              "inverse proportion to the context (dense attention).",
    source=lecture("00:12-00:13", CHAPTER),
    hypotheses=FULL_ATTENTION_ONLY,
    goal=logic.And((
        logic.Iff(logic.ge(t_kv, t_c), logic.ge(L, Lstar)),
        logic.eq(mfu_amortized_q.sym, sp.Min(1, Lstar / L, evaluate=False)),
    )),
    steps=(
        Step(logic.eq(t_c / t_kv, Lstar / L), "the batch and the chip count cancel in the ratio",
             link="implies"),
        Step(logic.And((logic.Iff(logic.ge(t_kv, t_c), logic.ge(L, Lstar)),
                        logic.eq(mfu_amortized_q.sym, sp.Min(1, t_c / t_kv, evaluate=False)))),
             r"\(t_c/\max(t_c, t_{\mathrm{kv}}) = \min(1, t_c/t_{\mathrm{kv}})\)"),
    ),
    notes="Sparse attention (DeepSeek) replaces the linear KV term by something like its square root; "
          "this claim is the dense model the lecture draws.",
)
mfu_bounded_by_context = Claim(
    "batching.mfu_bounded_by_context", title="MFU never exceeds its weights-amortized value",
    statement="Weight reads only add to the step time, so at any batch the MFU is at most its "
              r"weights-amortized value \(\min(1, L^{*}/L)\).",
    source=lecture("00:12-00:13", CHAPTER, reconstructed=True),
    hypotheses=FULL_ATTENTION_ONLY,
    goal=logic.le(mfu_q.sym, sp.Min(1, Lstar / L, evaluate=False)),
    uses=(goldilocks_context_and_mfu,),
)
mfu_half_at_double_context = Claim(
    "batching.mfu_half_at_double_context", title="Twice the balance context halves MFU",
    statement="Going from the balance context to twice that context (the lecture's 100K to 200K example) "
              "halves the MFU, even with weights fully amortized.",
    source=lecture("00:12-00:13", CHAPTER),
    hypotheses=(*FULL_ATTENTION_ONLY, logic.eq(L, 2 * Lstar),),
    goal=logic.And((logic.eq(mfu_amortized_q.sym, sp.Rational(1, 2)), logic.le(mfu_q.sym, sp.Rational(1, 2)))),
    uses=(goldilocks_context_and_mfu, mfu_bounded_by_context),
)

# 9. The hardware ratio -----------------------------------------------------------------------------------
hardware_ratio = Definition(
    "batching.hardware_ratio", title="Hardware ratio",
    statement="Peak FLOPs times bytes per weight over twice the memory bandwidth: how many tokens must "
              "use each weight read to keep the multipliers as busy as the memory.",
    source=lecture("00:15:16", CHAPTER),
    defines=hardware_ratio_q, expr=F * q / (c_fwd * W),
)
hw_ratio_300 = Claim(
    "batching.hw_ratio_300", title="The hardware ratio is about 300",
    statement="Multiplies per second times bytes per weight over bytes per second comes out near 300 on "
              "most accelerators; read here as 200 to 450 (within a factor 1.5).",
    source=lecture("00:15:16-00:17", CHAPTER),
    goal=logic.within_factor(R, 300, sp.Rational(3, 2)),
    instance=True,
    notes=r"Under the lecture scenario \(R = 300\) by construction (24 PFLOP/s, FP4, 20 TB/s).  Presets "
          "test the 'stable from A100 to B100' remark: h100-sxm gives 295 and b200 281, but a100-80gb "
          "gives 153, outside the band (see hw_ratio_a100).",
)
hardware_ratio_precision_invariant = Claim(
    "batching.hardware_ratio_precision_invariant", title="The hardware ratio does not depend on precision",
    statement="Halving the bytes per weight (e.g. FP8 to FP4) doubles the multiply rate of the same chip, "
              "so the hardware ratio is unchanged.",
    source=lecture("00:16", CHAPTER, reconstructed=True),
    goal=logic.eq((2 * F) * (q / 2) / (c_fwd * W), R),
)
hw_ratio_a100_value = Claim(
    "batching.hw_ratio_a100_value", title="A100 80GB: hardware ratio about 153",
    statement="With the A100's 312 TFLOP/s in bf16, 2 bytes per weight and 2.039 TB/s of HBM bandwidth, "
              "the hardware ratio is about 153.",
    source=spec("NVIDIA A100 80GB SXM datasheet (312 TFLOP/s bf16 dense, 2,039 GB/s)", "2020-11"),
    hypotheses=(logic.eq(F, si("312 TFLOP/s")), logic.eq(q, 2), logic.eq(W, si("2.039 TB/s"))),
    goal=logic.within_percent(R, 153, 1),
)
hw_ratio_a100 = Claim(
    "batching.hw_ratio_a100", title="'About 300 from A100 on' fails for the A100",
    statement="The lecture says the ratio has stayed around 300 from the A100 to the B100.  With the "
              "A100's own specification it is about 153, outside the 200-450 band of hw_ratio_300: the "
              "stability holds from the H100 on.",
    source=lecture("00:16", CHAPTER),
    hypotheses=(logic.eq(F, si("312 TFLOP/s")), logic.eq(q, 2), logic.eq(W, si("2.039 TB/s"))),
    goal=logic.within_factor(R, 300, sp.Rational(3, 2)),
    expected="refuted", tags=INCONSISTENCY,
    notes="Same check as `derive check hw_ratio_300 --hardware a100-80gb`, written with the datasheet "
          "values so that it shows in the default check.",
)
hw_ratio_as_flops_per_byte = Claim(
    "batching.hw_ratio_as_flops_per_byte", title="'300 FLOPs per byte' is a different number",
    statement=r"A summary gives the ratio as about 300 FLOPs per byte.  The FLOPs-per-byte intensity \(F/W\) "
              r"is a different quantity: \(2R/q\), which is 1,200 FLOP/byte for FP4 at the lecture's \(R = 300\).",
    source=lecture("00:16", CHAPTER),
    goal=logic.within_factor(critical_intensity_q.sym, 300, sp.Rational(3, 2)),
    instance=True, expected="refuted", tags=INCONSISTENCY,
    notes=r"At bf16 (\(q = 2\) bytes) the two numbers coincide, \(F/W = R\): under the h100-sxm preset this claim "
          "holds (295 FLOP/byte).  The lecture's FP4 reading makes them differ by a factor 4.",
)

# 10. The batch optimum ---------------------------------------------------------------------------------
sparsity = Definition(
    "batching.sparsity", title="Sparsity factor",
    statement="How many times more weights a step reads once every expert is read than one token multiplies: "
              "every weight but the input embedding (a lookup) over the active ones.  1 for a dense model.",
    source=lecture("00:17:20", CHAPTER),
    defines=sparsity_q, expr=N_all / N_act,
)
critical_batch = Definition(
    "batching.critical_batch", title="Critical batch",
    statement="The hardware ratio times the sparsity, in sequences of one new token each.",
    source=lecture("00:17:20", CHAPTER),
    defines=critical_batch_q, expr=R * S / tau,
)
batch_optimum = Claim(
    "batching.batch_optimum", title="Batch that balances weight reads against multiplies", label="Batch optimum",
    statement="Compute time equals weight-fetch time exactly when the batch equals the hardware ratio "
              "times the sparsity; with a larger batch the step is compute-bound, with a smaller one it "
              "waits on weight reads.  The threshold depends on sparsity, not on model scale.",
    source=lecture("00:17:20-00:20:40", CHAPTER),
    hypotheses=EVERY_EXPERT_READ,
    goal=logic.Iff(logic.ge(t_c, t_w), logic.ge(B, Bstar)),
    steps=(
        Step(logic.eq(t_c, t_w), "balance point of the two times", link="iff"),
        Step(logic.eq(c_fwd * N_act * B * tau / (n * F), N_all * q / (n * W)),
             "substitute the definitions (every expert read)", link="iff"),
        Step(logic.eq(B, F * q * N_all / (c_fwd * W * N_act * tau)), "solve for B (the chip count cancels)",
             link="iff"),
        Step(logic.eq(B, R * S / tau), r"\(R = F q/(2W)\) and \(S = N_{\mathrm{read}}/N_{\mathrm{act}}\)", link="iff"),
        Step(logic.eq(B, Bstar), r"the definition of \(B^{*}\)", link="iff"),
    ),
    notes="Stated where every expert is read: the critical batch of every mixture of experts here lies far "
          "above the batch from which uniform routing reads them all (roofline.all_experts_read_threshold).",
)
batch_optimum_lecture = Claim(
    "batching.batch_optimum_lecture", title="The lecture's optimum: 300 × 8 = 2,400",
    statement="With a hardware ratio of 300 and the lecture's sparsity of 8 (32 of 256 experts), the "
              "critical batch is 2,400 sequences.",
    source=lecture("00:17:20", CHAPTER),
    goal=logic.within_percent(Bstar, 2400, 1),
    instance=True, uses=(batch_optimum, hw_ratio_300),
)
sparsity_inconsistency = Claim(
    "batching.sparsity_inconsistency", title="Sparsity 8 does not follow from 700B/37B",
    statement="The lecture takes DeepSeek's sparsity as 8 ('32 out of 256 experts'), but its own 700B total "
              "and 37B active parameters give about 18.9.  Read as 'the sparsity is within 25% of "
              r"\(N_{\mathrm{tot}}/N_{\mathrm{act}}\)', the lecture's two statements disagree.",
    source=lecture("00:06, 00:18", CHAPTER),
    goal=logic.within_factor(S, N_tot / N_act, sp.Rational(5, 4)),
    instance=True, expected="refuted", tags=INCONSISTENCY, uses=(deepseek_v3_params,),
    notes=r"The lecture scenario pins \(S = 8\) and keeps \(N_{\mathrm{tot}}/N_{\mathrm{act}}\) = 700B/37B; "
          "this claim compares the two.  The real DeepSeek-V3 routes 8 of 256 experts (a ratio of 32, "
          "see moe.moe_routing_vs_sparsity) and has 671B/37B, about 18.1.",
)
batch_optimum_from_params = Claim(
    "batching.batch_optimum_from_params", title="With 700B/37B the optimum is about 5,700",
    statement="Using the lecture's own parameter counts instead of the sparsity of 8, the critical batch "
              "is 300 × 700/37, about 5,680 sequences: the other reading of the inconsistency.",
    source=lecture("00:06, 00:18", CHAPTER, reconstructed=True),
    goal=logic.within_percent(R * N_tot / (N_act * tau), sp.Rational(300 * 700, 37), 1),
    instance=True, tags=INCONSISTENCY, uses=(batch_optimum, deepseek_v3_params),
)
lecture_batch_near_optimum = Claim(
    "batching.lecture_batch_near_optimum", title="The lecture's 2,000 sequences sit near the critical batch",
    statement="The batch the lecture uses for throughput, 2,000 sequences, is within 25% of the critical "
              "batch of 2,400 ('two to three thousand tokens per batch').",
    source=lecture("00:20, 00:25", CHAPTER),
    goal=logic.within_factor(B, Bstar, sp.Rational(5, 4)),
    instance=True, uses=(batch_optimum,),
)
lecture_batch_double_or_triple = Claim(
    "batching.lecture_batch_double_or_triple", title="'Double or triple it' is not the 2,000 used",
    statement="The lecture advises running at two or three times the critical batch (4,800 to 7,200), "
              "yet uses 2,000 sequences for its throughput figure; the two statements disagree.",
    source=lecture("00:19, 00:25", CHAPTER),
    goal=logic.between(B, 2 * Bstar, 3 * Bstar),
    instance=True, expected="refuted", tags=INCONSISTENCY, uses=(batch_optimum,),
)

# 11. KV reads raise the optimum ----------------------------------------------------------------------------
critical_batch_kv = Definition(
    "batching.critical_batch_kv", title="KV-corrected critical batch",
    statement="The batch at which compute time equals weight plus KV fetch time: the critical batch "
              r"divided by \(1 - L/L^{*}\), defined for contexts below the balance context.",
    source=lecture("00:19", CHAPTER, reconstructed=True),
    defines=critical_batch_kv_q, expr=Bstar / (1 - L / Lstar), domain=logic.lt(L, Lstar),
)
critical_batch_kv_balance = Claim(
    "batching.critical_batch_kv_balance", title="With KV reads, compute-bound from the KV-corrected critical batch on",
    statement="Below the balance context, a step is compute-bound (compute time at least weight plus KV "
              "fetch time) exactly when the batch is at least the KV-corrected critical batch.",
    source=lecture("00:19", CHAPTER, reconstructed=True),
    hypotheses=(*FULL_ATTENTION_ONLY, *EVERY_EXPERT_READ, logic.eq(N_row, 0), logic.lt(L, Lstar),),
    goal=logic.Iff(logic.ge(t_c, t_mem), logic.ge(B, Bkv)),
    steps=(
        Step(logic.ge(t_c, t_mem), "compute-bound", link="iff"),
        Step(logic.ge(c_fwd * N_act * B * tau / F - B * S_kv / W, N_all * q / W),
             "move the KV term to the left (times n)", link="iff"),
        Step(logic.ge(B * (c_fwd * N_act * tau / F) * (1 - L / Lstar), N_all * q / W),
             r"\(L k/W = (2 N_{\mathrm{act}} \tau/F)\,(L/L^{*})\)", link="iff"),
        Step(logic.ge(B, Bstar / (1 - L / Lstar)),
             r"divide by the positive \(2 N_{\mathrm{act}} \tau (1 - L/L^{*})/F\)", link="iff"),
    ),
    uses=(batch_optimum,),
    notes="Every expert read and the embedding rows left out, as on the board (a row per token is about "
          "1e-7 of a token's weights).",
)
kv_raises_batch_optimum = Claim(
    "batching.kv_raises_batch_optimum", title="KV reads raise the optimal batch, more so at longer context",
    label="KV-corrected batch optimum",
    statement="KV reads take memory bandwidth away from the weight reads, so balancing compute against all "
              r"memory traffic needs a larger batch than \(R S\), and the longer the context the larger "
              "(for any two contexts below the balance context).",
    source=lecture("00:19", CHAPTER),
    hypotheses=(*FULL_ATTENTION_ONLY, logic.lt(L, L2), logic.lt(L2, Lstar)),
    goal=logic.And((logic.gt(Bkv, Bstar), logic.lt(Bkv, Bstar / (1 - L2 / Lstar)))),
    steps=(
        Step(logic.And((logic.lt(0, 1 - L2 / Lstar), logic.lt(1 - L2 / Lstar, 1 - L / Lstar),
                        logic.lt(1 - L / Lstar, 1))),
             r"\(0 < L < L' < L^{*}\)", link="implies"),
        Step(logic.And((logic.gt(Bstar / (1 - L / Lstar), Bstar),
                        logic.lt(Bstar / (1 - L / Lstar), Bstar / (1 - L2 / Lstar)))),
             r"\(B^{*}\) divided by a smaller positive number is larger"),
    ),
    uses=(critical_batch_kv_balance,),
    notes=r"\(B^{*}_{\mathrm{kv}}(L')\) is written out as \(B^{*}/(1 - L'/L^{*})\).",
)
kv_memory_bound_past_critical_context = Claim(
    "batching.kv_memory_bound_past_critical_context", title="Past the balance context, no batch is compute-bound",
    statement="At or beyond the balance context every sequence's KV reads already take as long as its "
              "multiplies, so with the weight reads on top the step is memory-bound at every batch.  Layers "
              "that attend over a window or a chunk, or keep a fixed state, only add reads, so this holds for "
              "a hybrid model too, its balance context counting the full-attention layers' cache alone.",
    source=lecture("00:19", CHAPTER, reconstructed=True),
    # k > 0 alone (not FULL_ATTENTION_ONLY): the other layer kinds' reads only lengthen the memory time
    hypotheses=(logic.gt(k, 0), logic.ge(L, Lstar),),
    goal=logic.lt(t_c, t_mem),
    uses=(goldilocks_context_and_mfu,),
)

kv_optimum_at_lecture_context = Claim(
    "batching.kv_optimum_at_lecture_context", title="At the lecture's own numbers no KV-corrected optimum exists",
    statement="The lecture has the optimal batch grow with context, which needs a context below the balance "
              "context.  With the scenario's DeepSeek-sized 37B active parameters, 2,048 KV bytes per token "
              "and 1,200 FLOPs per byte, the balance context is about 30,000 tokens, far below the 200,000 "
              "used elsewhere in the lecture: at that context every batch is memory-bound.",
    source=lecture("00:19, 01:36-01:40", CHAPTER, reconstructed=True),
    goal=logic.lt(L, Lstar),
    instance=True, expected="refuted", tags=INCONSISTENCY, uses=(kv_raises_batch_optimum,),
    notes="The numbers come from different parts of the lecture: 200k tokens and 2 KB/token are the "
          r"long-context chapter's, where the active parameters are a frontier guess of 1e11 and \(W/F\) is "
          "read as 1/300; that chapter (context.py) handles the factor between the two readings.",
)

# 12. The train schedule ---------------------------------------------------------------------------------
request_latency = Definition(
    "batching.request_latency", title="Request latency under a train schedule",
    statement="A request waits for the next departure, then rides one step.",
    source=lecture("00:20", CHAPTER),
    defines=request_latency_q, expr=queue_wait.sym + T_train,
)
worst_case_latency = Definition(
    "batching.worst_case_latency", title="Worst-case latency under a train schedule",
    statement="A request that just missed a departure waits a whole interval, then rides one.",
    source=lecture("00:20", CHAPTER),
    defines=worst_case_latency_q, expr=2 * T_train,
)
train_schedule_bounds = Claim(
    "batching.train_schedule_bounds", title="A request takes between one and two intervals",
    statement="With a batch departing every interval whether full or not, a request's latency is at least "
              "one interval (the ride) and at most two (a full wait, then the ride).",
    source=lecture("00:20-00:21", CHAPTER),
    hypotheses=(logic.le(queue_wait.sym, T_train),),
    goal=logic.between(request_latency_q.sym, T_train, worst_case_latency_q.sym),
)
train_schedule = Claim(
    "batching.train_schedule", title="A train every 20 ms: 40 ms in the worst case",
    statement="With a batch departing every 20 ms, the worst-case latency is 40 ms.",
    source=lecture("00:20-00:21", CHAPTER),
    goal=logic.within_percent(worst_case_latency_q.sym, si("40 ms"), 1),
    instance=True, uses=(train_schedule_bounds,),
)
train_interval_near_drain_time = Claim(
    "batching.train_interval_near_drain_time", title="The 20 ms interval is about an HBM drain time",
    statement="The lecture sets the interval to the time to read all of HBM once, which it says is about "
              "20 ms on many HBM generations; read as 'within a factor 1.5 of the drain time'.",
    source=lecture("00:21-00:23", CHAPTER),
    goal=logic.within_factor(T_train, drain_time_q.sym, sp.Rational(3, 2)),
    instance=True,
    notes="Lecture: 20 ms against Rubin's 14.4 ms.  The presets show the spread: H100 24 ms, B200 22.5 ms, "
          "but A100 80GB 39 ms and MI300X 36 ms fall outside.",
)

# 14. Fast mode as a smaller batch -----------------------------------------------------------------------------
fast_mode_pricing = Claim(
    "batching.fast_mode_pricing", title="Fast mode: faster by the batch multiple, dearer by the batch ratio",
    label="Fast-mode pricing",
    statement=r"Ignoring KV reads, let the normal mode run at \(m \ge 1\) times the critical batch "
              r"(compute-bound) and the fast mode at a batch \(B_{\mathrm{f}}\) at most \(B^{*}\) (on the "
              r"weight-read floor).  Then the fast mode is \(m\) times faster per step and costs "
              r"\(B^{*}/B_{\mathrm{f}}\) times more per token.",
    source=lecture("00:02, 00:19", CHAPTER, reconstructed=True),
    hypotheses=(logic.ge(m, 1), logic.le(Bf, Bstar), *EVERY_EXPERT_READ),
    goal=logic.And((
        logic.eq(step_time_weights_only(m * Bstar) / step_time_weights_only(Bf), m),
        logic.eq(cost_weights_only(Bf) / cost_weights_only(m * Bstar), Bstar / Bf),
    )),
    steps=(
        Step(logic.eq(c_fwd * N_act * Bstar * tau / (n * F), t_w),
             "at the critical batch compute time equals weight-fetch time", link="implies"),
        Step(logic.And((logic.eq(step_time_weights_only(m * Bstar), m * t_w),
                        logic.eq(step_time_weights_only(Bf), t_w))),
             r"\(m \ge 1\) makes the normal step compute-bound; \(B_f \le B^{*}\) leaves the fast step on the "
             "weight floor"),
    ),
    uses=(batch_optimum, fast_mode_premise),
)
fast_mode_pricing_lecture = Claim(
    "batching.fast_mode_pricing_lecture", title="6x the price for 2.5x the speed: a fast batch of 400",
    statement="Matching the fast-mode model to the observed ratios, 2.5x speed means the normal "
              "batch is 2.5 times the critical batch (inside 'double or triple it') and 6x price means a "
              "fast batch of 2,400/6 = 400 sequences.",
    source=lecture("00:02, 00:19", CHAPTER, reconstructed=True),
    hypotheses=(logic.eq(m, fast_speed_ratio.sym), logic.eq(Bstar / Bf, fast_price_ratio.sym)),
    goal=logic.And((logic.between(m, 2, 3), logic.within_percent(Bf, 400, 1))),
    instance=True, forall=(normal_batch_multiple, fast_batch), uses=(fast_mode_pricing,),
)
fast_mode_speedup_cap = Claim(
    "batching.fast_mode_speedup_cap", title="No price buys more speed-up than the step over the weight fetch",
    statement="Whatever batch a fast mode picks, its step is no faster than the weight-fetch time, so its "
              r"speed-up over a mode with step time \(T\) is at most \(T/t_{\mathrm{w}}\): about \(m\), two or "
              "three, for a normal "
              "mode at m times the critical batch.  Paying 100 times more cannot buy 100 times the speed.",
    source=lecture("00:09-00:11", CHAPTER),
    goal=logic.le(T / step_time_at(B2), T / t_w),
    uses=(latency_floor,),
    notes=r"\(B'\) is the fast mode's batch.",
)

# 15. The cost of not batching -------------------------------------------------------------------------------
unbatched_cost_penalty = Claim(
    "batching.unbatched_cost_penalty", title="One sequence at a time costs the critical batch times more",
    label="Unbatched cost penalty",
    statement="Ignoring KV reads, a single sequence per step pays the whole weight-fetch time for one token, "
              r"while the critical batch shares the same step time among \(B^{*}\) tokens: the cost per token "
              r"is \(B^{*}\) times higher (whenever \(B^{*}\) is at least one sequence).",
    source=lecture("00:04:35", CHAPTER, reconstructed=True),
    hypotheses=(logic.eq(B2, 1), logic.ge(Bstar, B2), *EVERY_EXPERT_READ),
    goal=logic.eq(cost_weights_only(B2) / cost_weights_only(Bstar), Bstar / B2),
    steps=(
        Step(logic.And((logic.eq(step_time_weights_only(B2), t_w), logic.eq(step_time_weights_only(Bstar), t_w))),
             r"one sequence is below \(B^{*}\), and at \(B^{*}\) compute equals weight fetch", link="implies"),
    ),
    uses=(batch_optimum, cost_per_token_and_floor),
    notes=r"\(B' = 1\) sequence is the unbatched mode.",
)
unbatched_cost_penalty_thousandfold = Claim(
    "batching.unbatched_cost_penalty_thousandfold", title="With R ≥ 300 and S ≥ 4, the penalty passes 1,000x",
    statement="For any chip with a hardware ratio of at least 300 and a model at least 4 times sparse, the "
              "critical batch, and so the unbatched penalty, exceeds a thousand.",
    source=lecture("00:04:35", CHAPTER, reconstructed=True),
    hypotheses=(logic.ge(R, 300), logic.ge(S, 4)),
    goal=logic.ge(Bstar, 1000),
    uses=(unbatched_cost_penalty,),
)
unbatched_cost_penalty_lecture = Claim(
    "batching.unbatched_cost_penalty_lecture", title="'A thousand times worse': 2,400x for the lecture",
    statement=r"With the lecture's numbers the unbatched penalty is \(B^{*}/(1\,\mathrm{seq})\) = 2,400, of the order "
              "of the 'thousand times worse' the lecture warns of (read as 1,000 to 10,000).",
    source=lecture("00:04:35", CHAPTER),
    goal=logic.between(Bstar, 1000, 10000),
    instance=True, uses=(unbatched_cost_penalty,),
)

# 16. Scale does not matter ----------------------------------------------------------------------------------
batch_scale_independence = Claim(
    "batching.batch_scale_independence", title="The critical batch depends on sparsity, not scale",
    statement="Scaling total and active parameters by the same factor leaves the critical batch unchanged: "
              "it sees the model only through its sparsity.",
    source=lecture("00:24", CHAPTER),
    goal=logic.eq(F * q * (model_scale.sym * N_all) / (c_fwd * W * (model_scale.sym * N_act) * tau), Bstar),
    uses=(batch_optimum,),
)

# 17. Throughput ----------------------------------------------------------------------------------------------
throughput = Definition(
    "batching.throughput", title="Throughput of one replica",
    statement="Every departure carries one new token per sequence of the batch.",
    source=lecture("00:25", CHAPTER),
    defines=throughput_q, expr=B * tau / T_train,
)
system_throughput_and_gemini_fraction = Claim(
    "batching.system_throughput_and_gemini_fraction", title="2,000 × 64 = 128,000 tokens/s, a thousandth of Gemini",
    statement="With 2,000 sequences and about 64 departures per second, one replica streams 128,000 tokens "
              "per second; a thousand such replicas make the 'hundreds of millions of tokens per second' "
              "reported for Gemini.",
    source=lecture("00:25-00:26", CHAPTER),
    hypotheses=(logic.eq(T_train, si("15.625 ms")),),
    goal=logic.And((logic.eq(throughput_q.sym, 128000), logic.between(1000 * throughput_q.sym, 10**8, 10**9))),
    instance=True, forall=(train_interval,),
    notes="The lecture's 'about 60, so 64' departures per second is an interval of 1/64 s = 15.625 ms.",
)
system_throughput_at_train_interval = Claim(
    "batching.system_throughput_at_train_interval", title="At the scenario's interval, about 128,000 tokens/s",
    statement="At the scenario's own departure interval (20 ms in the lecture) the replica's throughput is "
              "within a factor 4/3 of the lecture's 128,000 tokens per second.",
    source=lecture("00:25", CHAPTER),
    goal=logic.within_factor(throughput_q.sym, 128000, sp.Rational(4, 3)),
    instance=True,
    notes="20 ms gives 100,000 tokens/s; the lecture's 'about 60' spans 15-20 ms.",
)
throughput_at_critical_batch = Claim(
    "batching.throughput_at_critical_batch", title="2,400 sequences do not give 128,000 tokens/s",
    statement="A summary pairs the 2,400-sequence optimum with 128,000 tokens per second; at 64 departures "
              "per second 2,400 sequences give 153,600, so the 128,000 belongs to the 2,000 sequences.",
    source=lecture("00:25", CHAPTER),
    hypotheses=(logic.eq(T_train, si("15.625 ms")),),
    goal=logic.within_percent(Bstar * tau / T_train, 128000, 5),
    instance=True, forall=(train_interval,), expected="refuted", tags=INCONSISTENCY,
)

# 18-19. Sparsity: what it buys and what it costs --------------------------------------------------------------
routed_scaling_tradeoff = Assumption(
    "batching.routed_scaling_tradeoff", title="64 experts buy about a 4x larger model",
    statement="In the unified scaling laws for routed language models, a 64-expert model with 370 million "
              "activated parameters matches a dense model of 1.3 billion: 64 times the parameters for about "
              "4 times the quality-equivalent size.  The result is sensitive to the routing technique "
              "(older than DeepSeek's).",
    source=paper("Clark et al. 2022, Unified Scaling Laws for Routed Language Models (ICML)",
                 "quoted at 00:26-00:29 of the lecture"),
)
routed_scaling_gain = Claim(
    "batching.routed_scaling_gain", title="1.3B / 370M: 'about 4x'",
    statement="A dense-equivalent size of 1.3 billion for 370 million active parameters is a gain of about "
              "3.5, the lecture's 'about 4x' (within 25%).",
    source=lecture("00:27", CHAPTER),
    hypotheses=(logic.eq(N_act, 370 * 10**6), logic.eq(params_dense_equivalent.sym, 13 * 10**8)),
    goal=logic.within_factor(params_dense_equivalent.sym / N_act, 4, sp.Rational(5, 4)),
    uses=(routed_scaling_tradeoff,),
)
sparsity_bandwidth_win = Claim(
    "batching.sparsity_bandwidth_win", title="More experts: same batched cost, larger batch",
    label="Sparsity bandwidth win",
    statement="Growing the total parameters g-fold at fixed active parameters multiplies the weight reads, "
              "the critical batch and the memory the weights need by g; but once each model runs at its own "
              "critical batch the weight reads are amortized and, KV aside, the cost per token is the same "
              "compute cost.  A pure win for bandwidth, while users suffice to fill the batch; it costs "
              "memory capacity.",
    source=lecture("00:29-00:32", CHAPTER),
    hypotheses=(logic.ge(sparsity_gain.sym, 1),),
    goal=logic.And((
        logic.eq(F * q * (sparsity_gain.sym * N_all) / (c_fwd * W * N_act * tau), sparsity_gain.sym * Bstar),
        logic.eq(cost_weights_only(sparsity_gain.sym * Bstar, sparsity_gain.sym * N_all), cost_weights_only(Bstar)),
        logic.eq(cost_weights_only(Bstar), p_chip * c_fwd * N_act / F),
    )),
    uses=(batch_optimum, slow_mode_on_cost_floor, routed_scaling_tradeoff),
)


# The chapter's argument, for part I of the documents (placeholders: derive.model.prose) ------------------
PROSE = (
    "The second half of the lecture's first chapter turns the roofline into a rule for the batch.  The question "
    "comes from prices: coding assistants sell a 'fast mode' at about six times the price for about two and a "
    "half times the speed, and the lecture's answer is that a faster mode runs a smaller batch.  Compute time "
    "grows with the batch while the weight reads stay put, so there is one batch at which the two meet (the "
    "figure below).",
    "{{figure:step_time_vs_batch}}",
    "{{result:batch_optimum}}",
    r"The model's size cancels: the critical batch 'only depends on sparsity, not on scale'.  With the lecture's "
    r"\(R\) of 'about 300' and sparsity of 8 it is 2,400 sequences; for the scenario the engine computes "
    r"\(R\) = {{value:hardware_ratio}} and \(B^{*}\) = {{value:critical_batch}}.  Not every number around this "
    "result agrees with the others.  The readings above set the advice to 'double or triple it' against the "
    "2,000 sequences the lecture then uses.  The remark that the ratio has stayed about 300 'from A100 to H100 "
    "to B100' is {{verdict:hw_ratio_a100}} for the A100's own datasheet.  Taking it as '300 FLOPs per byte', as "
    r"a summary does, confuses it with \(F/W = 2R/q\), a reading that is {{verdict:hw_ratio_as_flops_per_byte}} "
    "at the scenario's precision (the two coincide only at two bytes per weight).  The sparsity of 8 has a "
    "problem of its own.",
    "{{result:sparsity_inconsistency}}",
    r"The batch optimum ignored the KV reads, which compete with the weight reads for the same bandwidth.  Two "
    r"consequences follow, both measured against the balance context \(L^{*}\) at which a sequence's KV reads "
    r"take as long as its multiplies: past it the MFU falls, and below it the balancing batch grows with the "
    r"context.",
    "{{result:goldilocks_context_and_mfu}}",
    "{{result:kv_raises_batch_optimum}}",
    "The clash in that reading comes from mixing chapters: the 200K context and the 2 KB per token belong to the "
    "long-context chapter's frontier model of about 1e11 active parameters, not to DeepSeek's 37B.  For the "
    r"scenario \(L^{*}\) is {{value:critical_context}} against {{value:context}} of context served.",
    "A batch also sets a rhythm.  A server does not wait for a full batch: a 'train' departs every interval, "
    "full or not, so a request waits at most one interval and rides one, {{value:worst_case_latency}} at worst "
    "for the scenario's {{value:train_interval}}.  The interval is naturally about a drain time (the previous "
    "chapter).  Every departure yields one token per sequence, so the lecture's 2,000 sequences at 'about 64' "
    "departures a second stream 128,000 tokens per second per replica, a thousandth of what Gemini is reported "
    "to serve; the scenario's replica streams {{value:throughput}}.  A summary that credits the 2,400-sequence "
    "optimum with those 128,000 tokens per second is {{verdict:throughput_at_critical_batch}}: they come from "
    "the 2,000.",
    "Fast mode is then a smaller batch, and the roofline prices it, with KV reads ignored as on the board.",
    "{{result:fast_mode_pricing}}",
    "No price buys more speed than the normal mode's multiple of the critical batch, since no step beats the "
    "weight fetch.  The same accounting prices the other extreme, one sequence per step.",
    "{{result:unbatched_cost_penalty}}",
    r"With \(R \ge 300\) and any model at least four times sparse that penalty passes a thousand, the lecture's "
    "'a thousand times worse'.  The figure shows the whole curve: the cost per token falls with the batch onto "
    "its floor.",
    "{{figure:cost_vs_batch}}",
    "Last, what sparsity buys.  In bandwidth it costs nothing once the batch grows with it; it is paid for in "
    "memory capacity, the subject of the next chapters.",
    "{{result:sparsity_bandwidth_win}}",
    "What sparsity buys in quality is empirical.  In Clark et al.'s routed scaling laws a 64-expert model "
    "matches a dense one about four times its active size: '64x for 4x'.",
)
