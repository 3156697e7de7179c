"""Memory capacity, the KV cache, and why pipelining is not wise

Chapter 4 of the lecture ("Why Ilya said 'As we now know, pipelining is not wise'",
01:03:37-01:18:59).  Pipelining was meant to relieve memory capacity: each rack holds fewer layers.
That works for the weights but not for the KV cache: to keep every rack busy, the pipeline needs as
many micro-batches in flight as it has stages, so the sequences held grow exactly as the layers per
rack shrink.  Past two stages or so the KV cache dominates memory and more stages buy nothing, while
each stage adds a rack-to-rack hop to every token.  What does help latency is a bigger scale-up
domain, which pools more HBM bandwidth for the weight reads.

Main claims:
- ``capacity.memory_capacity_per_gpu``: bytes per chip, (N_tot·q + B_glob·L·k)/(n·P), with weights
  and contexts sharded evenly (``capacity.perfect_sharding``).
- **KV-cache dominance** ``capacity.kv_cache_dominance``: with P micro-batches in flight the memory
  per chip is N_tot·q/(n·P) + B·S/n: the weight term falls as 1/P, the KV term does not depend on P.
- ``capacity.kv_dominance_threshold``: the KV term is the larger exactly when P > N_tot·q/(B·S);
  ``capacity.kv_cache_dominance_lecture``: with the lecture's 3.5e11 weight bytes, 2,400-sequence
  micro-batches, 200k context and 1,667 bytes per token, P = 2 already suffices.
- ``capacity.pipelining_cannot_extend_context`` and ``capacity.pipelining_fits_any_model``: pipelining
  "totally helps with model size" but not with context length.
- ``capacity.pipeline_hop_latency``: four hops of 2.5 ms turn a 20 ms step into about 30 ms;
  ``capacity.hop_latency_few_ms``: "20 to 30" over 3-4 hops means 2.5-3.3 ms per hop.
- ``capacity.scaleup_bandwidth_latency``: however many stages, a token's step is bounded by reading
  all weights over the pooled bandwidth of one scale-up domain; ``capacity.scaleup_latency_gain_hopper_to_blackwell``:
  going from 8 to 64 chips per domain cut that floor 8-fold.

Notation: as in ``roofline`` and ``pipeline``; B is the micro-batch (the lecture's b, one "train"),
m = P micro-batches are in flight, so B_glob = P·B sequences are held.  T_train is the decode step of
the system without hops (the lecture's 20 ms train, ``train_interval``), n_hop the rack-to-rack hops
one token step crosses.

Implementation notes: the lecture writes N_total for the weight bytes; we keep bytes per parameter q
explicit.  The lecture's 1,667 bytes per token comes from chapter 6 (``context``); it enters here as
a hypothesis of the instance claim, with its value.  The 20 ms base step of the hop estimate is the
lecture's "train" interval (``batching.train_interval``).

References: the lecture, 01:03-01:18; DeepSeek-AI 2024 (DeepSeek-V3 technical report) for serving
with wide expert parallelism and little pipelining.
"""

from __future__ import annotations

import sympy as sp

from derive import Assumption, Claim, Definition, Quantity, Step, lecture, logic, si, spec

from .batching import batch_optimum, critical_batch_q, train_interval
from .moe import moe_rack_bound, scaleup_domain_growth, scaleup_domain_hopper
from .pipeline import (
    T_P,
    P,
    bubble_vanishes_when_filled,
    h,
    kv_bytes_per_chip_q,
    m,
    microbatches,
    pipeline_latency_with_hops,
    pipeline_neutrality,
    scaleout_viability,
    sequences_in_flight_q,
    stages,
)
from .roofline import (
    EVERY_EXPERT_READ,
    FULL_ATTENTION_ONLY,
    B,
    C,
    L,
    L_chunk,
    L_win,
    N_emb,
    N_tot,
    S_kv,
    W,
    batch,
    k,
    k_chunk,
    k_win,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    latency_floor_all_experts,
    memory_time,
    n,
    q,
    s_state,
    step_time_q,
    weight_fetch_time_q,
)

CHAPTER = "Why Ilya said pipelining is not wise"

memory_per_chip_q = Quantity("memory_per_chip", r"c_{\mathrm{mem}}", "byte",
                             "HBM bytes one chip must hold: its share of the weights and of the KV caches in flight",
                             display_unit="GB")
hop_count = Quantity("hop_count", r"n_{\mathrm{hop}}", "1", "rack-to-rack hops one token crosses per decode step")
max_context_q = Quantity("max_context", r"L_{\mathrm{max}}", "token/seq",
                         "the longest context the model is set up for (its config's max_position_embeddings)")

N_seq, M_chip = sequences_in_flight_q.sym, memory_per_chip_q.sym
T_train, n_hop = train_interval.sym, hop_count.sym
n_H = scaleup_domain_hopper.sym

# 29. The memory wall ----------------------------------------------------------------------------------
memory_wall_capex = Assumption(
    "capacity.memory_wall_capex", title="Memory is half of hyperscaler capex",
    statement="Hyperscalers are said to spend about half of this year's capital expenditure on memory, and "
              "smartphone volumes are expected to fall by about 30% as memory gets scarce: memory capacity is "
              "a cost worth saving.  Dwarkesh quoting Dylan Patel; Reiner finds it 'believable'.  A "
              "second-hand estimate, not derived.",
    source=lecture("01:03-01:04", CHAPTER),
)

# 30. Memory per chip ----------------------------------------------------------------------------------
perfect_sharding = Assumption(
    "capacity.perfect_sharding", title="Weights and contexts are sharded evenly",
    statement="Parameters are divided evenly over the chips of a rack and layers over the racks; each "
              "sequence's KV cache is spread the same way (the lecture 'hand-waves exactly how').",
    source=lecture("01:05-01:07", CHAPTER),
)
memory_capacity_per_gpu = Definition(
    "capacity.memory_capacity_per_gpu", title="Memory per chip",
    statement="The whole system holds the weights once and the KV cache of every sequence in flight; "
              "n chips per rack times P racks share it evenly.",
    source=lecture("01:05-01:07", CHAPTER),
    defines=memory_per_chip_q, expr=(N_tot * q + N_seq * S_kv) / (n * P),
    uses=(perfect_sharding, memory_time),
)

# 31. The KV cache does not shrink with P ---------------------------------------------------------------
kv_cache_dominance = Claim(
    "capacity.kv_cache_dominance", title="More stages shrink the weights per chip, not the KV cache",
    label="KV-cache dominance",
    statement=r"With as many micro-batches in flight as stages, the memory per chip is the weights over \(n P\) "
              r"plus one micro-batch's KV caches over \(n\).  The weight term keeps falling as stages are added; "
              r"the KV term stays where it is, because \(P\) times more sequences are in flight, each with \(P\) "
              "times fewer layers per rack.  So the KV cache soon dominates and further stages save nothing.",
    source=lecture("01:08-01:11", CHAPTER),
    goal=logic.eq(M_chip, N_tot * q / (n * P) + B * S_kv / n),
    hypotheses=(logic.eq(m, P),),
    steps=(
        Step((N_tot * q + N_seq * S_kv) / (n * P), "the definition of memory per chip"),
        Step(N_tot * q / (n * P) + sp.Min(m, P) * B * S_kv / (n * P),
             r"\(\min(m, P)\) micro-batches of \(B\) sequences are in flight"),
        Step(N_tot * q / (n * P) + B * S_kv / n, r"\(m = P\): the \(P\)s cancel in the KV term"),
    ),
    uses=(pipeline_neutrality, bubble_vanishes_when_filled),
)
kv_dominance_threshold = Claim(
    "capacity.kv_dominance_threshold", title="When the KV cache is the larger share",
    statement=r"With \(P\) micro-batches in flight, a chip holds more KV-cache bytes than weight bytes exactly "
              "when the number of stages exceeds the weight bytes over one micro-batch's KV bytes.",
    source=lecture("01:10-01:11", CHAPTER, reconstructed=True),
    goal=logic.Iff(logic.lt(N_tot * q / (n * P), kv_bytes_per_chip_q.sym), logic.gt(P, N_tot * q / (B * S_kv))),
    hypotheses=(logic.gt(S_kv, 0), logic.eq(m, P),),
    steps=(
        Step(logic.lt(N_tot * q / (n * P), kv_bytes_per_chip_q.sym), "weights per chip below KV per chip",
             link="iff"),
        Step(logic.lt(N_tot * q / (n * P), B * S_kv / n),
             r"pipeline neutrality: the KV per chip is \(B S_{\mathrm{kv}}/n\)", link="iff"),
        Step(logic.lt(N_tot * q, P * B * S_kv), r"multiply by \(n P > 0\)", link="iff"),
        Step(logic.gt(P, N_tot * q / (B * S_kv)), r"divide by \(B S_{\mathrm{kv}} > 0\)", link="iff"),
    ),
    uses=(kv_cache_dominance,),
)
kv_cache_dominance_lecture = Claim(
    "capacity.kv_cache_dominance_lecture", title="The lecture's numbers: two stages are already enough",
    statement="With 3.5e11 weight bytes (700B parameters at FP4), micro-batches of 2,400 sequences (300 times "
              "sparsity 8), 200k tokens of context and 1,667 KV bytes per token, one micro-batch's KV cache "
              r"is 8.0e11 bytes, more than the whole model; from \(P = 2\) on, each chip holds more KV cache "
              "than weights.",
    source=lecture("01:10-01:11", CHAPTER, reconstructed=True),
    goal=logic.And((
        logic.within_percent(N_tot * q, si("3.5e11 B"), 1),
        logic.within_percent(B * S_kv, si("8e11 B"), 1),
        logic.lt(N_tot * q / (n * P), kv_bytes_per_chip_q.sym),
    )),
    hypotheses=(logic.ge(P, 2), logic.eq(m, P), logic.eq(B, critical_batch_q.sym),
                logic.eq(k, sp.Rational(5000, 3))),
    instance=True, forall=(stages, microbatches, batch, kv_bytes_per_token),
    uses=(kv_dominance_threshold, batch_optimum),
    notes=r"The micro-batch is the lecture's 'train', \(b = 300 \times 8\) (the critical batch); "
          r"\(k = 10^{11}/(300 \times 2 \cdot 10^{5})\) = 1,667 B/token is the lecture's estimate from "
          "its long-context chapter, not the scenario's 2,048.",
)
memory_fits_in_hbm = Claim(
    "capacity.memory_fits_in_hbm", title="The scenario's model and contexts fit in HBM",
    statement="At the scenario's values, each chip's share of the weights and of the KV caches in flight "
              "fits in its HBM.",
    source=lecture("01:05-01:07", CHAPTER, reconstructed=True),
    goal=logic.le(M_chip, C),
    instance=True,
)

context_within_model = Assumption(
    "capacity.context_within_model", title="A sequence's context is within the model's maximum",
    statement="A deployment serves no sequence longer than the model's maximum context: past it the model's "
              "position encoding was never set up, so a value computed there describes no real deployment.",
    source=spec("Hugging Face transformers, PretrainedConfig: max_position_embeddings, the maximum sequence length "
                "the model might ever be used with", "2024-01"),
    relation=logic.le(L, max_context_q.sym),
)

# 32. What practice does --------------------------------------------------------------------------------
pipelining_cannot_extend_context = Claim(
    "capacity.pipelining_cannot_extend_context", title="Pipelining does not help with context length",
    statement=r"With \(P\) micro-batches in flight, whatever \(P\), the context that fits is at most the rack's HBM "
              "over one micro-batch's KV bytes per token of context: the bound has no P in it.",
    source=lecture("01:12", CHAPTER),
    goal=logic.le(L, n * C / (B * k)),
    hypotheses=(*FULL_ATTENTION_ONLY, logic.eq(m, P), logic.le(M_chip, C)),
    steps=(
        Step(logic.le(N_tot * q / (n * P) + B * S_kv / n, C), "KV-cache dominance: the memory per chip"),
        Step(logic.le(B * S_kv / n, C), "the weight term is positive"),
        Step(logic.le(L, n * C / (B * k)), "solve for L"),
    ),
    uses=(kv_cache_dominance,),
)
windowed_kv_bounded = Claim(
    "capacity.windowed_kv_bounded", title="Windowed, chunked and linear layers: a cache that stops growing",
    statement="A sliding-window layer holds at most its window, a chunked layer at most one chunk and a "
              "linear-attention layer a state of fixed size, whatever the context.  So a sequence's KV cache "
              r"is at most \(L k\) plus the constant \(L_{\mathrm{win}} k_{\mathrm{win}} + L_{\mathrm{chunk}} "
              r"k_{\mathrm{chunk}} + s_{\mathrm{state}}\): only the full-attention "
              "layers make memory grow with the context.  For a hybrid model (Gemma 3, gpt-oss, Llama 4, "
              "Qwen3-Next) the context that fits is set by its full layers alone, and a model with none "
              "(Mistral-7B: every layer windowed) holds any context once that constant fits.",
    source=lecture("01:12", CHAPTER, reconstructed=True),
    goal=logic.And((logic.le(S_kv, L * k + L_win * k_win + L_chunk * k_chunk + s_state),
                    logic.Implies(logic.eq(k, 0), logic.le(S_kv, L_win * k_win + L_chunk * k_chunk + s_state)))),
    uses=(kv_bytes_per_sequence, pipelining_cannot_extend_context),
    notes=r"The lecture's layout has only full layers (\(S_{\mathrm{kv}} = L k\)), and "
          "capacity.pipelining_cannot_extend_context is stated for it.",
)
pipelining_fits_any_model = Claim(
    "capacity.pipelining_fits_any_model", title="Pipelining does help with model size",
    statement="As long as one micro-batch's KV cache fits in a rack, any model fits once it is split over "
              r"enough stages: \(P \ge q N_{\mathrm{tot}}/(n C_{\mathrm{HBM}} - B S_{\mathrm{kv}})\) suffices.",
    source=lecture("01:12", CHAPTER),
    goal=logic.le(M_chip, C),
    hypotheses=(logic.eq(m, P), logic.lt(B * S_kv, n * C), logic.ge(P, N_tot * q / (n * C - B * S_kv))),
    steps=(
        Step(logic.le(N_tot * q, P * (n * C - B * S_kv)),
             r"multiply the bound on \(P\) by \(n C_{\mathrm{HBM}} - B S_{\mathrm{kv}} > 0\)"),
        Step(logic.le(N_tot * q / (n * P) + B * S_kv / n, C), r"divide by \(n P\) and rearrange"),
        Step(logic.le(M_chip, C), "KV-cache dominance: the memory per chip"),
    ),
    uses=(kv_cache_dominance,),
)
inference_parallelism_practice = Assumption(
    "capacity.inference_parallelism_practice", title="Serve with wide expert parallelism and little pipelining",
    statement="In inference, expert parallelism goes up to the scale-up domain, and pipelining is used very "
              "little, maybe not at all, maybe two stages, as in DeepSeek's deployment.  Tensor parallelism "
              "is not profitable with small experts.  Pipelining helps with model size, not with context "
              "length; a stage boundary on scale-out is affordable, but more stages add hops and save only "
              "weight capacity.",
    source=lecture("01:11-01:13", CHAPTER),
    uses=(kv_cache_dominance, pipelining_cannot_extend_context, pipelining_fits_any_model, scaleout_viability,
          moe_rack_bound),
)

# 33. Hops add latency ---------------------------------------------------------------------------------
pipeline_hop_latency = Claim(
    "capacity.pipeline_hop_latency", title="Hops of a few ms turn 20 ms into about 30 ms",
    statement="A token going through the lecture's four racks crosses three or four rack-to-rack hops (four "
              "when the last stage hands back to the first).  At a few milliseconds per hop, the 20 ms step "
              "becomes about 30 ms.",
    source=lecture("01:14-01:16", CHAPTER),
    goal=logic.within_percent(T_train + n_hop * h, si("30 ms"), 10),
    hypotheses=(logic.ge(n_hop, P - 1), logic.le(n_hop, P)),
    instance=True, forall=(hop_count,), uses=(pipeline_latency_with_hops,),
    notes="Hops add up along the chain in decode.  With the scenario's 2.5 ms per hop (reconstructed from "
          "'a few milliseconds'), the step is 27.5 to 30 ms.",
)
hop_latency_few_ms = Claim(
    "capacity.hop_latency_few_ms", title="'20 to 30' over 3-4 hops means 2.5-3.3 ms per hop",
    statement="If three or four hops add 10 ms to a 20 ms step, each hop costs between 2.5 and 3.3 ms: "
              "'a few milliseconds', as the lecture guesses.",
    source=lecture("01:14-01:16", CHAPTER, reconstructed=True),
    goal=logic.between(h, si("2.5 ms"), sp.Rational(1, 300)),
    hypotheses=(logic.eq(T_train, si("20 ms")), logic.eq(T_train + n_hop * h, si("30 ms")),
                logic.between(n_hop, 3, 4)),
)

# 34. Scale-up size, not pipelining, sets the latency floor ---------------------------------------------
scaleup_bandwidth_latency = Claim(
    "capacity.scaleup_bandwidth_latency", title="Only a bigger scale-up domain lowers the latency floor",
    statement="However many stages, a token's decode step takes at least the time to read all weights over "
              "the pooled HBM bandwidth of one scale-up domain: the stages of one token run one after the "
              "other, so they cannot read their weights in parallel.  Pipelining solves the capacity "
              "problem; a bigger scale-up domain solves the bandwidth problem.",
    source=lecture("01:15-01:18", CHAPTER),
    hypotheses=EVERY_EXPERT_READ,
    goal=logic.ge(T_P, (N_tot - N_emb) * q / (n * W)),
    steps=(
        Step(logic.eq(T_P, step_time_q.sym), "pipeline neutrality: the stages add up to one rack's step"),
        Step(logic.ge(T_P, (N_tot - N_emb) * q / (n * W)), "the latency floor, every expert read"),
    ),
    uses=(pipeline_neutrality, latency_floor_all_experts, scaleup_domain_growth),
)
scaleup_latency_gain_hopper_to_blackwell = Claim(
    "capacity.scaleup_latency_gain_hopper_to_blackwell", title="8 to 64 chips: an 8-fold lower weight-read floor",
    statement="At equal bandwidth per chip, reading the weights over the scenario's scale-up domain is 8 "
              "times faster than over one 8-GPU Hopper box (9 times with all 72 GPUs of a Blackwell rack), "
              "while per-chip HBM bandwidth grows only 1.5-2x per generation.",
    source=lecture("01:16-01:18", CHAPTER),
    goal=logic.between((N_tot * q / (n_H * W)) / weight_fetch_time_q.sym, 8, 9),
    instance=True, uses=(scaleup_bandwidth_latency,),
)

# The chapter's argument, for part I of the documents (placeholders: derive.model.prose) ------------------
PROSE = (
    r"The lecture's fourth chapter (minutes 64 to 79) takes its title from Ilya Sutskever's 'as we now know, "
    r"pipelining is not wise'.  Pipelining was meant to relieve memory capacity, and for the weights it does, "
    r"each chip holding \(1/(nP)\) of them.  The KV cache is another matter, because keeping \(P\) stages busy "
    r"takes \(P\) micro-batches in flight.",
    "{{result:kv_cache_dominance}}",
    "{{figure:pipeline_memory_split}}",
    "For the scenario a chip holds {{value:memory_per_chip}} of an HBM of {{value:hbm_capacity}}.  With the "
    "lecture's own numbers (a 700B model at FP4, micro-batches of 300 times 8 sequences at 200K tokens of "
    "context and about 1.7 KB per token) one micro-batch's KV outweighs the whole model, so the KV term is the "
    "larger from two stages on; checked at the scenario's bytes per weight, that reading is "
    "{{verdict:kv_cache_dominance_lecture}}.  Hence the lecture's two slogans.  "
    "Pipelining 'totally helps with model size': any model fits once split over enough stages, as long as one "
    "micro-batch's KV fits a rack.  It does not help with context length: the longest context that fits has no "
    r"\(P\) in it.  Only layers whose cache stops growing (sliding windows, chunks, linear attention) loosen that "
    "bound, and only for their own share.",
    "Meanwhile every stage adds a hop.  At 'a few milliseconds' per hop, three or four hops turn the lecture's "
    "20 ms step into about 30; for the scenario, {{value:stages}} stages with hops of {{value:hop_latency}} make "
    "a {{value:step_time}} step take {{value:pipelined_step_time_with_hops}}.  What lowers the latency floor is "
    "a larger scale-up domain, which pools more HBM bandwidth for the weight reads: from an 8-GPU Hopper box to a "
    "64-chip rack the floor fell eightfold, while per-chip bandwidth grows 1.5 to 2x a generation.  Practice "
    "follows the argument: expert parallelism up to the size of the scale-up domain, and little or no "
    "pipelining, as in DeepSeek's deployment.",
)
