"""Speculative decoding and multi-token prediction: tokens per verification, its cost, when it pays

Chapter 2 of part II ("Beyond the lecture").  A draft (a small model, or the target's own multi-token
prediction heads) proposes k tokens; the target checks all of them, plus one token of its own, in one pass.
A verification step yields between 1 and k + 1 tokens per sequence (E on average), and costs a decode step
with k + 1 new tokens per sequence: free while the step is memory-bound (the weights are read once however
many tokens use them), k + 1 times the compute once it is compute-bound.  So speculation pays at small
batches and stops paying at large ones, and never gains more than k + 1.

Main claims:
- ``speculative.iid_accepted_tokens``: under the named i.i.d. model (``speculative.iid_acceptance``), a
  verification yields E = (1 - a^(k+1))/(1 - a) tokens (Leviathan et al. 2023, eq. 1);
  ``speculative.iid_one_draft``: with one drafted token that is 1 + a.
- ``speculative.verify_step_between``: verifying k + 1 tokens per sequence takes at least a plain step and
  at most k + 1 plain steps.
- **Speed-up bound** ``speculative.speedup_at_most_k_plus_1``: the speed-up over plain decoding is at most
  E, hence at most k + 1.
- **Break-even** ``speculative.beats_plain_iff``: speculation beats plain decoding exactly when E exceeds
  E* = (T_v + k·c_d·T)/T; ``speculative.memory_bound_break_even``: while verification is memory-bound,
  E* = 1 + k·c_d; ``speculative.one_draft_threshold``: with one drafted token, i.i.d. acceptance and a
  memory-bound verification, it pays exactly when the acceptance rate exceeds the draft's cost ratio.
- ``speculative.never_pays_compute_bound``: once a plain step is compute-bound (the batch at or past the
  critical batch), speculation never pays; **Stop batch** ``speculative.stops_paying_above_batch``: with
  a free draft (multi-token prediction) it pays exactly below B_stop = E·q·N_read·F/((k+1)·c_fwd·N_act·τ·W
  − E·(S_kv + τ·q·N_row)·F), N_read the weights a step reads and N_row an embedding row.
- ``speculative.mtp_deepseek_v3``: DeepSeek-V3's multi-token prediction (one extra token, 85-90 %
  acceptance) bounds the speed-up to 1.85-1.9, above the published 1.8x tokens per second.

Notation: a acceptance rate of one drafted token, k draft length, E mean tokens per verification step per
sequence (the "acceptance length" serving systems report), c_d the time of one draft step over one plain
target step (Leviathan's c), T the lecture's step time, T_v the verification step time, S the speed-up.

Implementation notes: the general claims take E as an input bounded by 1 ≤ E ≤ k + 1
(``speculative.acceptance_length_range``): a verification emits the target's own token and at most the k
drafted ones, whatever the acceptance process, so the claims hold for measured acceptance lengths as well
as for the i.i.d. formula.  The formula's power a^(k+1) has a symbolic exponent the prover cannot reason
about; it is evaluated, and its k = 1 form is proved.  The drafted tokens' KV is written in the same pass and
its reads are left out, as in the lecture's decode step.

References: Leviathan, Kalman and Matias 2023, "Fast Inference from Transformers via Speculative Decoding"
(ICML), section 3.1 and eq. (1), theorem 3.8; Chen et al. 2023, "Accelerating Large Language Model Decoding
with Speculative Sampling"; DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", section 5.4.3 (MTP: 85-90 %
acceptance of the second token, 1.8x TPS).
"""

from __future__ import annotations

import sympy as sp

from derive import Assumption, Claim, Definition, Quantity, logic, paper
from theorems.roofline import (
    B,
    F,
    N_act,
    S_kv,
    W,
    c_fwd,
    compute_time_q,
    embedding_row_params_q,
    memory_time_q,
    n,
    params_read_q,
    q,
    step_time_q,
    tau,
)

PART = "Beyond the lecture"  # the documents render this library's chapters as part II
CHAPTER = "Speculative decoding"

N_read, N_row = params_read_q.sym, embedding_row_params_q.sym

_LEVIATHAN = paper("Leviathan, Kalman and Matias 2023, Fast Inference from Transformers via Speculative Decoding "
                   "(ICML 2023), arXiv:2211.17192", "section 3.1, eq. (1)")
_DSV3 = paper("DeepSeek-AI 2024, DeepSeek-V3 Technical Report, arXiv:2412.19437",
              "section 5.4.3: the second token's acceptance rate is 85-90 %, decoding 1.8x the TPS")

acceptance_rate = Quantity("acceptance_rate", "a", "1", "probability that the target accepts one drafted token",
                           domain="fraction")
draft_length = Quantity("draft_length", "k", "1", "tokens the draft proposes per verification step", integer=True)
accepted_tokens = Quantity("accepted_tokens_per_step", "E", "1",
                           "mean tokens one verification step yields per sequence (the acceptance length), the "
                           "target's own token included")
iid_accepted_tokens_q = Quantity("iid_accepted_tokens", r"E_{\mathrm{iid}}", "1",
                                 "tokens per verification step when every drafted token is accepted independently "
                                 "with rate a")
draft_cost_ratio = Quantity("draft_cost_ratio", r"c_{d}", "1",
                            "time of one draft step over one plain decode step of the target (0 for multi-token "
                            "prediction heads run in the target's own pass)", domain="nonnegative")
verify_compute_time_q = Quantity("verify_compute_time", r"t_{\mathrm{compute}}^{\mathrm{v}}", "s",
                                 "time for the multiplies of a verification step (k + 1 tokens per sequence)",
                                 display_unit="ms")
verify_step_time_q = Quantity("verify_step_time", r"T_{\mathrm{v}}", "s",
                              "time of one verification step on the roofline", display_unit="ms")
speedup_q = Quantity("speculative_speedup", r"S_{\mathrm{spec}}", "1",
                     "tokens per second with speculation over tokens per second without, at the same batch")
break_even_q = Quantity("speculative_break_even", r"E^{*}", "1",
                        "acceptance length at which speculation exactly matches plain decoding")
stop_batch_q = Quantity("speculative_stop_batch", r"B_{\mathrm{stop}}", "seq",
                        "batch from which a free draft (multi-token prediction) stops paying")

a, k, E, E_iid, c_d = (acceptance_rate.sym, draft_length.sym, accepted_tokens.sym, iid_accepted_tokens_q.sym,
                       draft_cost_ratio.sym)
t_cv, T_v, S, E_star, B_stop = (verify_compute_time_q.sym, verify_step_time_q.sym, speedup_q.sym, break_even_q.sym,
                                stop_batch_q.sym)
T, t_c, t_mem = step_time_q.sym, compute_time_q.sym, memory_time_q.sym

# The modelling assumptions -----------------------------------------------------------------------------
iid_acceptance = Assumption(
    "speculative.iid_acceptance", title="Drafted tokens are accepted independently at one rate",
    statement="Each drafted token is accepted with the same probability a, independently of the others (the "
              "simplifying assumption behind Leviathan et al.'s eq. 1); a measured acceptance length can "
              r"replace it by setting \(E\) directly.",
    source=_LEVIATHAN,
)
acceptance_length_range = Assumption(
    "speculative.acceptance_length_range", title="A verification yields between 1 and k + 1 tokens",
    statement="A verification step keeps the accepted prefix of the k drafted tokens and adds the target's "
              "own next token, so it yields at least 1 and at most k + 1 tokens per sequence; so does the mean.",
    source=paper("Leviathan, Kalman and Matias 2023, Fast Inference from Transformers via Speculative Decoding",
                 "section 3.1 and algorithm 1: each iteration produces between 1 and γ + 1 tokens"),
    relation=logic.And((logic.ge(E, 1), logic.le(E, k + 1))),
)

# Definitions --------------------------------------------------------------------------------------------
iid_accepted_tokens = Definition(
    "speculative.iid_accepted_tokens", title="Tokens per verification under i.i.d. acceptance",
    statement=r"The first \(i\) drafted tokens are all accepted with probability \(a^i\); summing over "
              r"\(i = 0, \dots, k\) gives the geometric series \((1 - a^{k+1})/(1 - a)\).",
    # at a = 0 only the target's own token comes: the series' first term, 1 (written as its own branch, since
    # the engines read a power with a symbolic exponent on a positive base only)
    source=_LEVIATHAN, defines=iid_accepted_tokens_q,
    expr=sp.Piecewise((1, sp.Eq(a, 0)), ((1 - a ** (k + 1)) / (1 - a), True)),
    domain=logic.lt(a, 1), uses=(iid_acceptance,),
)
verify_compute_time = Definition(
    "speculative.verify_compute_time", title="Compute time of a verification step",
    statement="A decode step in which every sequence brings k + 1 tokens: the k drafted ones and the next.",
    source=_LEVIATHAN, defines=verify_compute_time_q, expr=c_fwd * N_act * B * (k + 1) * tau / (n * F),
)
verify_step_time = Definition(
    "speculative.verify_step_time", title="Time of a verification step",
    statement="The slower of its multiplies and the plain step's memory traffic: the weights and the KV "
              "caches are read once however many tokens per sequence use them.  For a mixture of experts at a "
              "small batch the k + 1 tokens of a sequence are routed apart and read more experts than one "
              "token does, so there this is a lower bound (the speed-up an upper bound, the break-even low).",
    source=paper("Chen et al. 2023, Accelerating Large Language Model Decoding with Speculative Sampling, "
                 "arXiv:2302.01318", "section 1: scoring K tokens in parallel costs about one token's time "
                 "while memory-bound"),
    defines=verify_step_time_q, expr=sp.Max(t_cv, t_mem, evaluate=False),
)
speedup = Definition(
    "speculative.speculative_speedup", title="Speed-up of speculative decoding",
    statement="E tokens per verification step and k draft steps, against one token per plain step.",
    source=paper("Leviathan, Kalman and Matias 2023, Fast Inference from Transformers via Speculative Decoding",
                 "theorem 3.8: (1 - α^(γ+1))/((1 - α)(γc + 1))"),
    defines=speedup_q, expr=E * T / (T_v + k * c_d * T),
)
break_even = Definition(
    "speculative.speculative_break_even", title="Acceptance length at break-even",
    statement="The time of a verification step and its k draft steps, in plain steps.",
    source=_LEVIATHAN, defines=break_even_q, expr=(T_v + k * c_d * T) / T,
)
stop_batch = Definition(
    "speculative.speculative_stop_batch", title="Batch from which a free draft stops paying",
    statement="The batch at which E plain steps' memory traffic equals k + 1 plain steps' multiplies.",
    source=_DSV3, defines=stop_batch_q,
    expr=E * N_read * q * F / ((k + 1) * c_fwd * N_act * tau * W - E * (S_kv + tau * q * N_row) * F),
    domain=logic.gt((k + 1) * c_fwd * N_act * tau * W, E * (S_kv + tau * q * N_row) * F),
)

# Claims -------------------------------------------------------------------------------------------------
iid_one_draft = Claim(
    "speculative.iid_one_draft", title="One drafted token yields 1 + a",
    statement="With k = 1 the geometric series has two terms: a verification yields 1 + a tokens.",
    source=_LEVIATHAN,
    hypotheses=(logic.lt(a, 1),),
    goal=logic.eq((1 - a ** 2) / (1 - a), 1 + a),
)
verify_step_between = Claim(
    "speculative.verify_step_between", title="Verifying k + 1 tokens costs one to k + 1 plain steps",
    statement="A verification step is never faster than a plain step (the same memory traffic, more "
              "multiplies) and never slower than k + 1 of them (memory-bound it costs one, compute-bound k + 1).",
    source=paper("Chen et al. 2023, Accelerating Large Language Model Decoding with Speculative Sampling",
                 "section 1"),
    goal=logic.And((logic.ge(T_v, T), logic.le(T_v, (k + 1) * T))),
)
speedup_at_most_k_plus_1 = Claim(
    "speculative.speedup_at_most_k_plus_1", title="Speculation gains at most k + 1", label="Speed-up bound",
    statement="Whatever the batch, the draft and its acceptance, speculative decoding is at most E times, so at "
              "most k + 1 times, faster than plain decoding.",
    source=_LEVIATHAN,
    goal=logic.And((logic.le(S, E), logic.le(S, k + 1))),
    uses=(verify_step_between, acceptance_length_range),
)
beats_plain_iff = Claim(
    "speculative.beats_plain_iff", title="Speculation pays exactly above the break-even length",
    label="Break-even",
    statement=r"Speculation is faster than plain decoding exactly when the acceptance length exceeds \(E^{*}\).",
    source=_LEVIATHAN,
    goal=logic.Iff(logic.gt(S, 1), logic.gt(E, E_star)),
)
memory_bound_break_even = Claim(
    "speculative.memory_bound_break_even", title="Memory-bound, verification is free",
    statement="While the verification step's multiplies fit in its memory time, verifying costs one plain "
              r"step, and the break-even is \(E^{*} = 1 + k c_d\): only the draft has to be paid for.",
    source=_LEVIATHAN,
    hypotheses=(logic.le(t_cv, t_mem),),
    goal=logic.eq(E_star, 1 + k * c_d),
    uses=(verify_step_between,),
)
one_draft_threshold = Claim(
    "speculative.one_draft_threshold", title="One draft token pays above the draft's cost ratio",
    statement="With one drafted token accepted at rate a (so E = 1 + a) and a memory-bound verification, "
              r"speculation pays exactly when \(a > c_d\).",
    source=_LEVIATHAN,
    hypotheses=(logic.eq(k, 1), logic.eq(E, 1 + a), logic.le(t_cv, t_mem)),
    goal=logic.Iff(logic.gt(S, 1), logic.gt(a, c_d)),
    uses=(beats_plain_iff, memory_bound_break_even, iid_one_draft),
)
never_pays_compute_bound = Claim(
    "speculative.never_pays_compute_bound", title="Past the critical batch speculation never pays",
    statement="Once a plain step is compute-bound, a verification step costs k + 1 plain steps for at most "
              "k + 1 tokens: speculation is never faster.",
    source=_LEVIATHAN,
    hypotheses=(logic.ge(t_c, t_mem),),
    goal=logic.le(S, 1),
    uses=(acceptance_length_range,),
)
stops_paying_above_batch = Claim(
    "speculative.stops_paying_above_batch", title="A free draft pays exactly below a batch", label="Stop batch",
    statement="With a draft that costs nothing (multi-token prediction in the target's own pass) the speed-up is "
              r"\(E T/T_{\mathrm{v}}\), so speculation pays exactly when \(E T > T_{\mathrm{v}}\); with an acceptance "
              r"length above 1 that holds exactly while the batch is below \(B_{\mathrm{stop}}\).",
    source=_DSV3,
    hypotheses=(logic.gt(E, 1), logic.gt((k + 1) * c_fwd * N_act * tau * W, E * (S_kv + tau * q * N_row) * F)),
    goal=logic.Iff(logic.gt(E * T, T_v), logic.lt(B, B_stop)),
    uses=(acceptance_length_range,),
)
pays_when_compute_bound_false_twin = Claim(
    "speculative.pays_when_compute_bound_false_twin", title="False twin: speculation pays at any batch",
    statement="The reading that a good enough draft always helps: with more than one token per verification, "
              "speculation would be faster even once a plain step is compute-bound.",
    source=_LEVIATHAN,
    hypotheses=(logic.ge(t_c, t_mem), logic.gt(E, 1)),
    goal=logic.gt(S, 1),
    expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of speculative.never_pays_compute_bound.",
)
mtp_deepseek_v3 = Claim(
    "speculative.mtp_deepseek_v3", title="DeepSeek-V3's MTP: at most 1.85-1.9x, published 1.8x",
    statement="One multi-token-prediction token accepted 85-90 % of the time gives 1.85-1.9 tokens per memory-bound "
              "step: a ceiling at or above the 1.8x tokens per second DeepSeek publishes.",
    source=_DSV3,
    hypotheses=(logic.eq(k, 1), logic.between(a, sp.Rational(85, 100), sp.Rational(90, 100)), logic.eq(E, 1 + a),
                logic.eq(c_d, 0), logic.le(t_cv, t_mem)),
    goal=logic.between(S, sp.Rational(18, 10), 2),
    uses=(memory_bound_break_even,),
)

PROSE = (
    r"A draft proposes \(k\) tokens; the target checks them and adds one of its own in a single pass, which "
    r"yields \(E\) tokens per sequence, between 1 and \(k + 1\); if each drafted token is accepted "
    r"independently at rate \(a\), \(E = (1 - a^{k+1})/(1 - a)\).",
    "{{result:speedup_at_most_k_plus_1}}",
    "The verification pass has the memory traffic of a plain step and k + 1 times its multiplies; so it costs "
    "one plain step while memory-bound and k + 1 when compute-bound.  That fixes the break-even exactly.",
    "{{result:beats_plain_iff}}",
    "{{result:stops_paying_above_batch}}",
)
