"""The roofline of one decode step: compute time, memory time, and the floor on latency

Chapter 1 of the lecture ("How batch size affects token cost and speed", 00:00:00-00:32:09), first
half.  A decode step multiplies every active weight by every sequence in the batch and reads every
weight, plus every sequence's KV cache, from HBM.  The step cannot be faster than either job.

Main claims:
- ``roofline.compute_time``, ``roofline.memory_time`` (weights plus KV) and
  ``roofline.roofline_step_time`` (the larger of the two): the definitions everything rests on;
  ``roofline.step_time_ge_compute_time`` and ``roofline.step_time_ge_memory_time``: the roofline
  bound, each side on its own.
- ``roofline.latency_vs_batch_shape``: the step time never falls as the batch grows, starts at the
  weight-fetch time and rises at most linearly.
- ``roofline.params_read``: a step reads one token's active weights plus the share
  ``expert_read_fraction`` of the routed experts that token skips, and one input-embedding row per new
  token (``roofline.embedding_fetch_time``), not the table.  ``roofline.distinct_experts_bounds``: a
  step reads between k and min(E, kB) experts per layer, whatever the routing.
  ``roofline.expert_read_fraction_uniform`` and ``roofline.experts_read_uniform``: the expectation
  E(1 - (1 - k/E)^B) under uniform routing, a named assumption (``step_time_uniform`` evaluates the
  step at it); ``roofline.all_experts_read_threshold``: from about (E/k) ln(2E) tokens on every expert is
  read (200 for DeepSeek's 8 of 256), which is why the lecture's scenario pins the share to 1.
- **Latency floor** ``roofline.latency_floor``: for every batch and routing, a step takes at least the
  time to read the weights it reads, so at least one token's active weights, over the pooled bandwidth
  of the scale-up domain; ``roofline.latency_floor_all_experts``: once every expert is read, every weight
  but the input embedding (the lecture's floor); ``roofline.step_time_ge_floor``: the strict floor
  ``step_time_floor`` (share 0) is below the step time at every routing.
- **Cost floor** ``roofline.cost_per_token_and_floor``: the cost per token is a hyperbola in the
  batch (the weight reads) on top of constants (compute, KV reads), never below the floor
  ``cost_per_token_floor``; ``roofline.cost_per_token_nonincreasing``: it never rises with the batch;
  ``roofline.slow_mode_on_cost_floor``: once compute-bound it is exactly the compute cost.
- ``roofline.hbm_drain_time``: the Rubin example, 288 GB / 20 TB/s = 14.4 ms;
  ``roofline.drain_time_about_20ms``: "about 20 ms on many generations of HBM";
  ``roofline.full_hbm_step_ge_drain_time``: a step that reads a full HBM lasts at least a drain time.

Notation: B batch (sequences), N parameters (total and active), q bytes per parameter, F peak
FLOP/s per chip, W HBM bytes/s per chip, n chips in the scale-up domain, L context tokens,
k KV bytes per context token (all layers), p chip rental price per second, B' a second batch
(``batch_other``) for claims comparing two batches.

Implementation notes: ``expert_read_fraction`` is a scenario value (the lecture: 1), not defined by
the uniform-routing formula, because general claims must hold at every routing and a power with the
batch in its exponent is beyond the polynomial prover; the formula is its own quantity, evaluated up to
512 tokens exactly (beyond, the share at 512: a lower bound).  ``params_routed_skipped`` defaults to
the total less the input embedding less the active weights (exact for an untied output head).  The
lecture counts one multiply per active weight and token; we count two
FLOPs (multiply and add), the convention of spec sheets, through the constant
``flops_per_param_token``.  Sequences and tokens are distinct units, linked by
``tokens_per_step`` (one new token per sequence in a decode step).  Attention FLOPs are left out as
in the lecture (see ``context.quadratic_attention_negligible``).  ``step_time_at`` and ``cost_at``
write the step time and cost per token out at another batch, for monotonicity claims.

References: the lecture (Dwarkesh Podcast, 2026-04-29); the roofline model (Williams et al., 2009).
"""

from __future__ import annotations

import sympy as sp

from derive import Assumption, Claim, Definition, Quantity, Step, derived, lecture, logic, paper, si

CHAPTER = "How batch size affects token cost and speed"

# Constants of the accounting -------------------------------------------------------------------------
flops_per_param_token = Quantity(
    "flops_per_param_token", r"c_{\mathrm{fwd}}", "FLOP/(param*token)",
    "FLOPs per active parameter per token in a forward pass (one multiply, one add)",
    value=2, source=paper("Kaplan et al. 2020, Scaling Laws for Neural Language Models", "C_forward = 2N"),
)
tokens_per_step = Quantity(
    "tokens_per_step", r"\tau", "token/seq", "new tokens each sequence produces in one decode step",
    value=1, source=lecture("00:04", CHAPTER),
)

# Hardware ---------------------------------------------------------------------------------------------
flops = Quantity("flops", "F", "FLOP/s", "peak dense FLOP/s of one chip at the weights' precision",
                 display_unit="TFLOP/s")
hbm_bandwidth = Quantity("hbm_bandwidth", "W", "byte/s", "HBM bandwidth of one chip", display_unit="TB/s")
hbm_capacity = Quantity("hbm_capacity", r"C_{\mathrm{HBM}}", "byte", "HBM capacity of one chip",
                        display_unit="GB")
chips = Quantity("chips", "n", "1", "chips whose bandwidth and capacity are pooled (the scale-up domain "
                 "serving one replica)", whole=True)
# A hardware preset's spec-sheet fields beside the ones the lecture's formulas read (flops is the rate at the
# preset's own precision): the dense peak per datatype, and the power a chip is provisioned for.
flops_bf16 = Quantity("flops_bf16", r"F_{\mathrm{bf16}}", "FLOP/s", "peak dense BF16 FLOP/s of one chip (spec sheet)",
                      display_unit="TFLOP/s")
flops_fp8 = Quantity("flops_fp8", r"F_{\mathrm{fp8}}", "FLOP/s", "peak dense FP8 FLOP/s of one chip (spec sheet)",
                     display_unit="TFLOP/s")
flops_fp4 = Quantity("flops_fp4", r"F_{\mathrm{fp4}}", "FLOP/s", "peak dense FP4 FLOP/s of one chip (spec sheet)",
                     display_unit="TFLOP/s")
# an integer multiply-add counts 2 like a floating one: spec sheets' TOPS sit beside their TFLOPS in one unit
flops_int8 = Quantity("flops_int8", r"F_{\mathrm{int8}}", "FLOP/s", "peak dense INT8 OP/s of one chip (spec sheet)",
                      display_unit="TFLOP/s")
chip_power = Quantity("chip_power", r"P_{\mathrm{chip}}", "W", "power one chip is provisioned for: its rated "
                      "thermal design or total board power (spec sheet)", display_unit="W")

# Model and workload -----------------------------------------------------------------------------------
params_total = Quantity("params_total", r"N_{\mathrm{tot}}", "param", "total parameters of the model")
params_active = Quantity("params_active", r"N_{\mathrm{act}}", "param",
                         "parameters multiplied per token: routed experts a token skips and the input embedding "
                         "(a lookup) left out, the output head counted")
params_embedding = Quantity("params_embedding", r"N_{\mathrm{emb}}", "param",
                            "parameters of the input token embedding (a model config gives it); params_active + "
                            "params_embedding is the count with every weight on a token's path", domain="nonnegative")
params_output_head = Quantity("params_output_head", r"N_{\mathrm{head}}", "param",
                              "parameters of the output head (the LM head, or the tied embedding matrix serving as "
                              "it): counted in params_active, but a prefill multiplies them for a prompt's last "
                              "token only (a model config gives it)", domain="nonnegative")
bytes_per_param = Quantity("bytes_per_param", "q", "byte/param", "bytes per stored weight (FP4 = 1/2, FP8 = 1)")
flops_datatype_bytes = Quantity(
    "flops_datatype_bytes", r"q_{F}", "byte/param",
    "bytes per value of the datatype the chip's flops is quoted at (BF16 = 2, FP8 = 1, FP4 = 1/2): a model stored "
    "narrower may run faster kernels than flops")
batch = Quantity("batch", "B", "seq", "sequences decoded together in one step", whole=True)
context = Quantity("context", "L", "token/seq", "tokens of context per sequence", whole=True)
kv_bytes_per_token = Quantity("kv_bytes_per_token", "k", "byte/token",
                              "KV-cache bytes per token of context at long context, summed over the layers whose "
                              "cache grows with the context (full attention, latent attention, indexer keys)",
                              domain="nonnegative")
# Layers whose cache stops growing: sliding-window layers keep the last L_win tokens, chunked-attention layers at
# most one chunk, linear-attention (recurrent) layers a state of fixed size.  The lecture's model has none (0).
kv_window_bytes_per_token = Quantity("kv_window_bytes_per_token", r"k_{\mathrm{win}}", "byte/token",
                                     "KV-cache bytes per token held by the sliding-window layers, summed over them",
                                     domain="nonnegative")
attention_window = Quantity("attention_window", r"L_{\mathrm{win}}", "token/seq",
                            "tokens a sliding-window layer keeps (its window)", domain="nonnegative")
kv_chunk_bytes_per_token = Quantity("kv_chunk_bytes_per_token", r"k_{\mathrm{chunk}}", "byte/token",
                                    "KV-cache bytes per token held by the chunked-attention layers, summed over them",
                                    domain="nonnegative")
attention_chunk = Quantity("attention_chunk", r"L_{\mathrm{chunk}}", "token/seq",
                           "tokens of a chunked-attention layer's chunk (it attends within its chunk only)",
                           domain="nonnegative")
kv_state_bytes = Quantity("kv_state_bytes", r"s_{\mathrm{state}}", "byte/seq",
                          "bytes per sequence of fixed-size state (linear-attention and recurrent layers), whatever "
                          "the context", domain="nonnegative", display_unit="MB/seq")
# Sparse attention (DeepSeek-V3.2's DSA): the cache holds every token, but each query reads only the top-k tokens an
# indexer selects.  kv_bytes_per_token counts those bytes (the cache holds them); kv_sparse_bytes_per_token says how
# many of them a decode step reads for attention_topk tokens only.  The lecture's model has none (0).
kv_sparse_bytes_per_token = Quantity("kv_sparse_bytes_per_token", r"k_{\mathrm{sp}}", "byte/token",
                                     "of kv_bytes_per_token, the bytes per token of the sparse-attention layers' "
                                     "cache, of which a decode step reads attention_topk tokens only",
                                     domain="nonnegative")
attention_topk = Quantity("attention_topk", r"L_{\mathrm{top}}", "token/seq",
                          "tokens a sparse-attention query reads of its cache (the indexer's top k)",
                          domain="nonnegative")
kv_bytes_per_sequence_q = Quantity("kv_bytes_per_sequence", r"S_{\mathrm{kv}}", "byte/seq",
                                   "KV-cache bytes one sequence holds at the scenario's context, every layer kind "
                                   "counted", display_unit="GB/seq")
bytes_per_kv_element = Quantity("bytes_per_kv_element", "e", "byte", "bytes per stored KV element")
layers = Quantity("layers", r"N_{\mathrm{layers}}", "1", "transformer layers of the model (a model preset or "
                  "config.json gives it)")
chip_price = Quantity("chip_price", r"p_{\mathrm{chip}}", "USD/s", "rental price of one chip",
                      display_unit="USD/h")

# Which weights a decode step reads (expert reads by batch, embedding rows) ------------------------------
experts_total = Quantity("experts_total", r"E_{\mathrm{tot}}", "1", "routed experts in one MoE layer")
experts_active = Quantity("experts_active", r"E_{\mathrm{act}}", "1",
                          "routed experts each token is sent to in one MoE layer")
params_routed_skipped_q = Quantity(
    "params_routed_skipped", r"N_{\mathrm{skip}}", "param",
    "parameters of the routed experts one token does not use, summed over the MoE layers (0 for a dense model)",
    domain="nonnegative")
expert_read_fraction_q = Quantity(
    "expert_read_fraction", r"\rho", "1",
    "share of the routed-expert parameters one token skips that a decode step still reads, because another "
    "sequence of the batch is routed to them (0: only one token's experts, the strict floor; 1: every expert, "
    "the lecture's large batch; expert_read_fraction_uniform: the expectation under uniform routing)",
    domain="nonnegative")
expert_read_fraction_uniform_q = Quantity(
    "expert_read_fraction_uniform", r"\rho_{\mathrm{unif}}", "1",
    "the share of skipped experts a step reads, expected under uniform independent routing", domain="nonnegative")
experts_read_q = Quantity("experts_read", r"E_{\mathrm{read}}", "1",
                          "distinct routed experts a decode step reads in one MoE layer, at the scenario's share")
experts_read_uniform_q = Quantity("experts_read_uniform", r"E_{\mathrm{read}}^{\mathrm{unif}}", "1",
                                  "distinct routed experts a decode step reads in one MoE layer, expected under "
                                  "uniform routing")
params_read_q = Quantity("params_read", r"N_{\mathrm{read}}", "param",
                         "weights a decode step reads from HBM (shared by the batch): one token's active weights "
                         "plus the routed experts the other sequences add")
routing_token = Quantity(
    "routing_token", r"1_{\mathrm{tok}}", "token", "one token: the routing formula counts its draws in tokens",
    value=1, source=derived("a unit, so that the batch's token count is a pure number in an exponent"))
d_model = Quantity("d_model", r"d_{\mathrm{model}}", "1", "width of the model (hidden size): the length of one row "
                   "of the input embedding", domain="nonnegative")
params_per_width = Quantity(
    "params_per_embedding_element", r"c_{\mathrm{row}}", "param/token",
    "parameters a lookup reads per element of the model width for one token (one, the row's element)",
    value=1, source=derived("one token's lookup reads one row of d_model parameters"))
per_layer_row_params = Quantity(
    "per_layer_row_params", r"N_{\mathrm{pl}}", "param/token",
    "parameters of the per-layer embedding tables one token's lookups read beside the input embedding's row "
    "(Gemma 4 E2B/E4B: one row of num_hidden_layers x hidden_size_per_layer_input); none for most models",
    domain="nonnegative")
embedding_row_params_q = Quantity("embedding_row_params", r"N_{\mathrm{row}}", "param/token",
                                  "parameters of the input embedding one token's lookup reads: one row",
                                  domain="nonnegative")

# Times ------------------------------------------------------------------------------------------------
compute_time_q = Quantity("compute_time", r"t_{\mathrm{compute}}", "s",
                          "time for the step's matrix multiplies at peak FLOP/s", display_unit="ms")
weight_fetch_time_q = Quantity("weight_fetch_time", r"t_{\mathrm{w}}", "s",
                               "time to read the weights a step reads (params_read) once from HBM",
                               display_unit="ms")
kv_fetch_time_q = Quantity("kv_fetch_time", r"t_{\mathrm{kv}}", "s",
                           "time to read every sequence's KV cache once from HBM", display_unit="ms")
embedding_fetch_time_q = Quantity("embedding_fetch_time", r"t_{\mathrm{emb}}", "s",
                                  "time to read the input-embedding rows the batch's new tokens look up",
                                  display_unit="ms", domain="nonnegative")
params_read_uniform_q = Quantity("params_read_uniform", r"N_{\mathrm{read}}^{\mathrm{unif}}", "param",
                                 "weights a decode step is expected to read under uniform routing")
step_time_uniform_q = Quantity("step_time_uniform", r"T^{\mathrm{unif}}", "s",
                               "the roofline step time with the experts read expected under uniform routing at the "
                               "scenario's batch (whatever expert_read_fraction says)", display_unit="ms")
weight_fetch_floor_q = Quantity("weight_fetch_time_floor", r"t_{\mathrm{w}}^{\min}", "s",
                                "time to read the weights one token multiplies: no routing reads fewer",
                                display_unit="ms")
kv_read_bytes_q = Quantity("kv_read_bytes_per_sequence", r"S_{\mathrm{kv}}^{\mathrm{read}}", "byte/seq",
                          "KV-cache bytes of one sequence a decode step cannot skip: all it holds, less what a "
                          "sparse-attention layer does not select", display_unit="GB/seq", domain="nonnegative")
kv_read_floor_q = Quantity("kv_read_time_floor", r"t_{\mathrm{kv}}^{\min}", "s",
                           "time to read the KV-cache bytes the batch's decode step cannot skip", display_unit="ms",
                           domain="nonnegative")
step_time_floor_q = Quantity("step_time_floor", r"T^{\min}", "s",
                             "the roofline step time with the fewest weight reads any routing allows (the strict "
                             "floor a measurement is held to)", display_unit="ms")
memory_time_q = Quantity("memory_time", r"t_{\mathrm{mem}}", "s",
                         "weight fetch plus KV fetch plus embedding-row fetch time", display_unit="ms")
step_time_q = Quantity("step_time", "T", "s", "time of one decode step on the roofline", display_unit="ms")
drain_time_q = Quantity("drain_time", r"T_{\mathrm{drain}}", "s", "time to read the whole HBM once",
                        display_unit="ms")
critical_intensity_q = Quantity("critical_intensity", r"F/W", "FLOP/byte",
                                "FLOPs the chip can do per byte it reads")
cost_per_token_q = Quantity("cost_per_token", r"c_{\mathrm{tok}}", "USD/token",
                            "rental cost of the chips for one step, shared by the tokens the step produces",
                            display_unit="USD/token")
cost_floor_q = Quantity("cost_per_token_floor", r"c_{\mathrm{tok}}^{\min}", "USD/token",
                        "the cost per token no batch size can beat: compute or KV reads per token, whichever is "
                        "slower")

# A second batch size, for claims that compare two batches (monotonicity) -------------------------------
batch_other = Quantity("batch_other", "B'", "seq", "a second batch size, for comparisons between two batches")

k_win, L_win, k_chunk, L_chunk, s_state = (kv_window_bytes_per_token.sym, attention_window.sym,
                                           kv_chunk_bytes_per_token.sym, attention_chunk.sym, kv_state_bytes.sym)
S_kv = kv_bytes_per_sequence_q.sym
k_sp, L_top, S_read = kv_sparse_bytes_per_token.sym, attention_topk.sym, kv_read_bytes_q.sym
F, W, C, n = flops.sym, hbm_bandwidth.sym, hbm_capacity.sym, chips.sym
N_tot, N_act, q, B, L, k = (params_total.sym, params_active.sym, bytes_per_param.sym, batch.sym,
                            context.sym, kv_bytes_per_token.sym)
c_fwd, tau = flops_per_param_token.sym, tokens_per_step.sym
p_chip, B2 = chip_price.sym, batch_other.sym
E_tot, E_act = experts_total.sym, experts_active.sym
N_emb, N_skip, rho = params_embedding.sym, params_routed_skipped_q.sym, expert_read_fraction_q.sym
N_read, N_row = params_read_q.sym, embedding_row_params_q.sym
N_all = N_act + N_skip
"""Weights read once every expert is read (the lecture's large batch): every weight but the input embedding."""

UNIFORM_TOKEN_CAP = 512
"""Tokens up to which the uniform-routing share is computed exactly (beyond, the share at this count: a lower bound)."""

EVERY_EXPERT_READ = (logic.eq(rho, 1),)
"""Hypothesis of a claim about the lecture's large batch, at which every routed expert is read each step."""


def step_time_at(b: sp.Expr, nread: sp.Expr = N_act + rho * N_skip) -> sp.Expr:
    """The roofline step time written out at batch ``b``, with ``nread`` weights read (by default at the
    scenario's share of experts read, which the claims comparing two batches keep fixed)."""
    return sp.Max(c_fwd * N_act * b * tau / (n * F), (nread * q + b * S_kv + b * tau * N_row * q) / (n * W),
                  evaluate=False)


def cost_at(b: sp.Expr, nread: sp.Expr = N_act + rho * N_skip) -> sp.Expr:
    """Cost per token written out at batch ``b``."""
    return p_chip * n * step_time_at(b, nread) / (b * tau)

compute_time = Definition(
    "roofline.compute_time", title="Compute time of a decode step",
    statement="Each of the batch's new tokens is multiplied by every active weight; the chips of the "
              "scale-up domain share the work at their peak FLOP rate.",
    source=lecture("00:04", CHAPTER),
    defines=compute_time_q, expr=c_fwd * N_act * B * tau / (n * F),
)
params_routed_skipped = Definition(
    "roofline.params_routed_skipped", title="Routed-expert weights one token skips",
    statement="The total less the input embedding less one token's active weights: the routed experts the token "
              "is not sent to (none in a dense model).  Exact when the output head is its own matrix; a config "
              "reader may give the count directly.",
    source=derived("params_total, params_embedding and params_active as the config reader counts them"),
    defines=params_routed_skipped_q, expr=N_act * sp.Max(0, (N_tot - N_emb) / N_act - 1, evaluate=False),
)
distinct_experts_bounds = Assumption(
    "roofline.distinct_experts_bounds", title="A step reads between k and min(E, kB) experts per layer",
    statement=r"Each of the batch's \(B\tau\) new tokens is sent to \(E_{\mathrm{act}}\) distinct experts of "
              r"the layer's \(E_{\mathrm{tot}}\), so the experts the step reads number at least "
              r"\(E_{\mathrm{act}}\) (every token sent to the same ones) and at most "
              r"\(\min(E_{\mathrm{tot}}, E_{\mathrm{act}} B \tau)\) (no two tokens sharing one): whatever the "
              r"routing, the share of skipped experts read lies between 0 and 1.",
    source=derived("counting: a union of sets of k experts each holds at least k and at most their total"),
    relation=logic.And((logic.le(E_act, experts_read_q.sym),
                        logic.le(experts_read_q.sym, sp.Min(E_tot, E_act * B * tau / routing_token.sym,
                                                            evaluate=False)),
                        logic.between(rho, 0, 1))),
)
expert_read_fraction_uniform = Definition(
    "roofline.expert_read_fraction_uniform", title="Experts read under uniform routing (an assumption)",
    statement="An assumption about routing, offered as the value of expert_read_fraction (set it with --set "
              "expert_read_fraction=...): each token picks its experts uniformly and independently of the "
              "others.  An expert one token skips is then missed by each of the other "
              r"\(B\tau - 1\) tokens with probability \(1 - E_{\mathrm{act}}/E_{\mathrm{tot}}\), so the expected "
              r"share of skipped experts read is \(1 - (1 - E_{\mathrm{act}}/E_{\mathrm{tot}})^{B\tau - 1}\): 0 for "
              "one token, tending to 1 (the lecture's 'every expert') as the batch grows.  Skewed routing reads "
              "fewer; the strict floor (0) holds for every routing.  Computed exactly up to 512 tokens; past "
              "them the share at 512 stands in, a lower bound within 2e-5 of the expectation for routing of 8 "
              "in 384 or denser.",
    source=derived("expected distinct experts E(1 - (1 - k/E)^B) of B tokens routed uniformly to k of E experts"),
    defines=expert_read_fraction_uniform_q,
    # An exact power of a large batch has too many digits to print: past UNIFORM_TOKEN_CAP tokens the share at the
    # cap stands in (a lower bound; (1 - k/E)^511 is under 2e-5 for every model here but 1-of-128 routers, 2 %).
    expr=1 - (1 - E_act / E_tot) ** sp.Min(B * tau / routing_token.sym - 1, UNIFORM_TOKEN_CAP - 1),
    domain=logic.gt(E_tot, E_act),
)
experts_read = Definition(
    "roofline.experts_read", title="Distinct experts a step reads per MoE layer",
    statement=r"One token's \(E_{\mathrm{act}}\) experts plus the read share of the others.",
    source=derived("from expert_read_fraction"),
    defines=experts_read_q, expr=E_act + (E_tot - E_act) * rho,
)
experts_read_uniform = Definition(
    "roofline.experts_read_uniform", title="Expected distinct experts under uniform routing",
    statement=r"The textbook expectation \(E_{\mathrm{tot}}(1 - (1 - E_{\mathrm{act}}/E_{\mathrm{tot}})^{B\tau})\) "
              "for tokens that each pick their experts uniformly: an expert is missed by all of them with "
              r"probability \((1 - E_{\mathrm{act}}/E_{\mathrm{tot}})^{B\tau}\).",
    source=derived("expected size of a union of uniform random k-subsets of E experts"),
    defines=experts_read_uniform_q,
    expr=E_tot * (1 - (1 - E_act / E_tot) ** sp.Min(B * tau / routing_token.sym, UNIFORM_TOKEN_CAP)),
    domain=logic.gt(E_tot, E_act),
)
params_read = Definition(
    "roofline.params_read", title="Weights a decode step reads",
    statement="One token's active weights (its routed experts, the shared experts, attention, dense layers and "
              "the output head) plus the read share of the routed experts it skips.  The input embedding is "
              "not read as a table: decode looks up one row per new token (embedding_fetch_time).",
    source=lecture("00:05", CHAPTER, reconstructed=True),
    defines=params_read_q, expr=N_act + rho * N_skip,
)
weight_fetch_time = Definition(
    "roofline.weight_fetch_time", title="Weight fetch time",
    statement="The weights the step reads are read from HBM once per step, over the pooled bandwidth of all "
              "chips; once the batch reads every expert (the lecture's batch), that is every weight but the "
              "input embedding.",
    source=lecture("00:05", CHAPTER),
    defines=weight_fetch_time_q, expr=N_read * q / (n * W),
)
embedding_row_params = Definition(
    "roofline.embedding_row_params", title="Embedding row",
    statement="A token's lookup reads one row of the input embedding (the model width in parameters) and one row "
              "of each per-layer embedding table, where the model has them.",
    source=derived("the input embedding is a vocabulary x d_model table; a per-layer table is a vocabulary x "
                   "(layers x per-layer width) table"),
    defines=embedding_row_params_q, expr=d_model.sym * params_per_width.sym + per_layer_row_params.sym,
)
embedding_fetch_time = Definition(
    "roofline.embedding_fetch_time", title="Embedding-row fetch time",
    statement="Each new token of the batch reads its row of the input embedding (not the whole table).",
    source=derived("decode looks up one embedding row per new token"),
    defines=embedding_fetch_time_q, expr=B * tau * N_row * q / (n * W),
)
weight_fetch_time_floor = Definition(
    "roofline.weight_fetch_time_floor", title="Weight fetch floor",
    statement="Whatever the routing and the batch, a step reads at least the weights one token multiplies: its "
              "routed experts and the shared ones in every MoE layer, and every dense weight.",
    source=derived("roofline.distinct_experts_bounds at share 0"),
    defines=weight_fetch_floor_q, expr=N_act * q / (n * W),
)
kv_bytes_per_sequence = Definition(
    "roofline.kv_bytes_per_sequence", title="KV cache of one sequence, by layer kind",
    statement="A full-attention (or latent-attention) layer keeps every token of the context; a sliding-window "
              r"layer only the last \(L_{\mathrm{win}}\), a chunked layer at most one chunk of \(L_{\mathrm{chunk}}\), "
              "and a linear-attention layer a state of fixed size.  The lecture's model has only the first kind, so "
              r"there \(S_{\mathrm{kv}} = L k\).",
    source=lecture("00:06", CHAPTER, reconstructed=True),
    defines=kv_bytes_per_sequence_q,
    expr=L * k + sp.Min(L, L_win, evaluate=False) * k_win + sp.Min(L, L_chunk, evaluate=False) * k_chunk + s_state,
    # a sequence holds something: a cache that grows, a window or chunk of one, or a state
    domain=logic.Or((logic.gt(k, 0), logic.gt(s_state, 0), logic.And((logic.gt(k_win, 0), logic.gt(L_win, 0))),
                     logic.And((logic.gt(k_chunk, 0), logic.gt(L_chunk, 0))))),
)
FULL_ATTENTION_ONLY = (logic.gt(k, 0), logic.eq(k_win, 0), logic.eq(k_chunk, 0), logic.eq(s_state, 0))
"""Hypotheses of a claim about the lecture's layout, where every cached layer attends over the whole context."""

kv_fetch_time = Definition(
    "roofline.kv_fetch_time", title="KV-cache fetch time",
    statement="Every sequence in the batch reads its whole KV cache once per step.",
    source=lecture("00:06", CHAPTER),
    defines=kv_fetch_time_q, expr=B * S_kv / (n * W),
)
sparse_within_kv = Assumption(
    "roofline.sparse_kv_part_of_kv", title="Sparse attention's cache is part of the KV cache",
    statement="The bytes per token of the sparse-attention layers' cache are among the KV bytes per token the cache "
              "holds: a decode step skips no more than the cache holds.",
    source=derived("roofline.kv_bytes_per_sequence counts every layer's cache, sparse attention's included"),
    relation=logic.le(k_sp, k),
)
kv_read_bytes = Definition(
    "roofline.kv_read_bytes_per_sequence", title="KV-cache bytes a decode step cannot skip",
    statement="All of a sequence's KV cache, less the tokens a sparse-attention layer leaves unread: each query "
              r"reads \(L_{\mathrm{top}}\) tokens of that cache (DeepSeek-V3.2's indexer selects its top 2,048), so "
              r"past \(L_{\mathrm{top}}\) the rest of \(k_{\mathrm{sp}}\) per token is never read.  The indexer's "
              "own keys are read for every token.  A chunked-attention layer reads only its current chunk's tokens, "
              "none at a chunk's first token (Llama 4's local layers), so its cache counts nothing here: a run's "
              "later steps cross chunk boundaries whatever its shortest context.  Without sparse or chunked "
              "attention it is the whole cache.",
    source=paper("DeepSeek-AI 2025, DeepSeek-V3.2-Exp: Boosting Long-Context Efficiency with DeepSeek Sparse "
                 "Attention, github.com/deepseek-ai/DeepSeek-V3.2-Exp (DeepSeek_V3_2.pdf)",
                 "DeepSeek Sparse Attention: a lightning indexer scores every preceding token and each query attends "
                 "to the top-k of them (index_topk = 2,048 in the released config.json)"),
    defines=kv_read_bytes_q,
    expr=S_kv - (L - sp.Min(L, L_top, evaluate=False)) * k_sp - sp.Min(L, L_chunk, evaluate=False) * k_chunk,
)
kv_read_within_cache = Claim(
    "roofline.kv_read_within_cache", title="A step's unskippable KV read is at most the cache, all of it without "
    "sparse attention",
    statement="The KV-cache bytes a decode step cannot skip are never more than the sequence holds, and are all of "
              "it when no layer attends in chunks and none sparsely or the context is within the top k: the strict "
              "floor's KV term is then the lecture's whole-cache read.",
    source=derived("roofline.kv_read_bytes_per_sequence"),
    goal=logic.And((logic.le(S_read, S_kv),
                    logic.Implies(logic.And((logic.Or((logic.eq(k_sp, 0), logic.le(L, L_top))),
                                             logic.eq(k_chunk, 0))), logic.eq(S_read, S_kv)))),
    uses=(kv_read_bytes, sparse_within_kv),
)
kv_read_whole_cache_false_twin = Claim(
    "roofline.kv_read_whole_cache_false_twin", title="False twin: a sparse-attention step reads its whole cache",
    statement="A decode step would read every byte of its KV cache whatever its attention: false for a "
              "sparse-attention layer past its top k (DeepSeek-V3.2 at 128K tokens reads about a seventh of its "
              "cache per step), so a floor that read it all could sit above a measurement.",
    source=derived("roofline.kv_read_bytes_per_sequence"),
    goal=logic.eq(S_read, S_kv),
    uses=(kv_read_bytes, sparse_within_kv), expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of roofline.kv_read_within_cache.",
)
kv_read_floor = Definition(
    "roofline.kv_read_time_floor", title="KV-cache read a decode step cannot skip",
    statement="Every sequence in the batch reads at least the KV-cache bytes it cannot skip once per step.",
    source=derived("roofline.kv_fetch_time with what sparse attention leaves unread left out"),
    defines=kv_read_floor_q, expr=B * S_read / (n * W),
)
memory_time = Definition(
    "roofline.memory_time", title="Memory time of a decode step",
    statement="Weights, KV cache and embedding rows share the same HBM bandwidth, so their fetch times add.",
    source=lecture("00:07", CHAPTER),
    defines=memory_time_q, expr=weight_fetch_time_q.sym + kv_fetch_time_q.sym + embedding_fetch_time_q.sym,
)
step_time = Definition(
    "roofline.roofline_step_time", title="Step time on the roofline",
    statement="With compute and memory traffic overlapped perfectly, a step takes as long as the slower "
              "of the two.",
    source=lecture("00:03:16", CHAPTER),
    defines=step_time_q, expr=sp.Max(compute_time_q.sym, memory_time_q.sym, evaluate=False),
)
step_time_floor = Definition(
    "roofline.step_time_floor", title="Strict floor on the step time",
    statement="The roofline step time with the fewest weight reads any routing allows: compute, or one token's "
              "active weights plus the KV-cache bytes no attention skips and the embedding rows, whichever is "
              "slower.",
    source=derived("roofline.roofline_step_time at expert_read_fraction 0, its KV reads at "
                   "roofline.kv_read_time_floor"),
    defines=step_time_floor_q,
    expr=sp.Max(compute_time_q.sym, weight_fetch_floor_q.sym + kv_read_floor_q.sym + embedding_fetch_time_q.sym,
                evaluate=False),
)
params_read_uniform = Definition(
    "roofline.params_read_uniform", title="Weights read under uniform routing",
    statement="One token's active weights plus the uniform-routing share of the routed experts it skips.",
    source=derived("roofline.params_read at expert_read_fraction_uniform"),
    defines=params_read_uniform_q, expr=N_act + expert_read_fraction_uniform_q.sym * N_skip,
)
step_time_uniform = Definition(
    "roofline.step_time_uniform", title="Step time under uniform routing",
    statement="The roofline step time when the step reads the experts uniform routing is expected to read at the "
              "scenario's batch: one token's experts alone at batch 1, every expert at a large batch.",
    source=derived("roofline.roofline_step_time at expert_read_fraction_uniform"),
    defines=step_time_uniform_q,
    expr=sp.Max(compute_time_q.sym, params_read_uniform_q.sym * q / (n * W) + kv_fetch_time_q.sym
                + embedding_fetch_time_q.sym, evaluate=False),
)
critical_intensity = Definition(
    "roofline.critical_intensity", title="Critical arithmetic intensity",
    statement="FLOPs per byte of HBM traffic at which a chip is equally compute- and memory-bound.",
    source=lecture("00:16", CHAPTER),
    defines=critical_intensity_q, expr=F / W,
)
drain_time = Definition(
    "roofline.drain_time", title="HBM drain time",
    statement="Time to read the whole HBM once: capacity over bandwidth.",
    source=lecture("00:21", CHAPTER),
    defines=drain_time_q, expr=C / W,
)

cost_per_token = Definition(
    "roofline.cost_per_token", title="Cost per token",
    statement="The rental price of every chip in the scale-up domain for the length of one step, divided "
              "by the tokens that step produces (one per sequence in decode).",
    source=lecture("00:13-00:15", CHAPTER),
    defines=cost_per_token_q, expr=p_chip * n * step_time_q.sym / (B * tau),
)
cost_per_token_floor = Definition(
    "roofline.cost_per_token_floor", title="Cost floor per token",
    statement="Per token, the multiplies and the token's own KV reads cannot be shared with other "
              "sequences; the slower of the two, at the chip's rental price, is a cost no batch can beat.",
    source=lecture("00:14", CHAPTER),
    defines=cost_floor_q, expr=p_chip * sp.Max(c_fwd * N_act / F, S_kv / (tau * W), evaluate=False),
)

step_time_ge_compute_time = Claim(
    "roofline.step_time_ge_compute_time", title="A step is at least as long as its compute",
    statement="Whatever the batch, the roofline step time is never below the compute time.",
    source=lecture("00:03:16", CHAPTER),
    goal=logic.ge(step_time_q.sym, compute_time_q.sym),
)
step_time_ge_memory_time = Claim(
    "roofline.step_time_ge_memory_time", title="A step is at least as long as its memory traffic",
    statement="Whatever the batch, the roofline step time is never below the memory time.",
    source=lecture("00:03:16", CHAPTER),
    goal=logic.ge(step_time_q.sym, memory_time_q.sym),
)
latency_vs_batch_shape = Claim(
    "roofline.latency_vs_batch_shape", title="Step time grows with batch, from a flat start",
    statement="As a function of the batch, compute time is a line through the origin, weight fetch a "
              "constant and KV fetch a line through the origin; so the step time never falls as the "
              "batch grows, never drops below the weight-fetch time and rises at most linearly: "
              "nearly flat while weight reads dominate.",
    source=lecture("00:08-00:10", CHAPTER),
    hypotheses=(logic.le(B, B2),),
    goal=logic.And((
        logic.le(step_time_q.sym, step_time_at(B2)),
        logic.ge(step_time_q.sym, weight_fetch_time_q.sym),
        logic.le(step_time_q.sym, weight_fetch_time_q.sym
                 + B * (c_fwd * N_act * tau / (n * F) + S_kv / (n * W) + tau * N_row * q / (n * W))),
    )),
    notes=r"\(B'\) is any larger batch: the first part says \(T(B) \le T(B')\) at the same share of experts "
          "read (the share itself only grows with the batch).",
)
latency_floor = Claim(
    "roofline.latency_floor", title="Latency floor", label="Latency floor",
    statement="For every batch size and every routing, one decode step takes at least the time to read the "
              "weights it reads, and so at least the weights one token multiplies, once over the pooled HBM "
              "bandwidth of the scale-up domain: paying more cannot buy tokens faster than that.  For a dense "
              "model that is every weight but the input embedding; for a mixture of experts only one token's "
              "experts, and all of them once the batch reads every expert (latency_floor_all_experts).",
    source=lecture("00:09-00:11", CHAPTER),
    goal=logic.And((logic.ge(step_time_q.sym, weight_fetch_time_q.sym),
                    logic.ge(step_time_q.sym, N_act * q / (n * W)))),
    steps=(
        Step(logic.ge(step_time_q.sym, memory_time_q.sym), "the roofline: T is the max of both times"),
        Step(logic.ge(step_time_q.sym, N_read * q / (n * W) + B * S_kv / (n * W) + B * tau * N_row * q / (n * W)),
             "memory time is weight fetch plus KV fetch plus embedding rows"),
        Step(logic.And((logic.ge(step_time_q.sym, N_read * q / (n * W)),
                        logic.ge(step_time_q.sym, (N_act + rho * N_skip) * q / (n * W)))),
             "the KV and embedding terms are non-negative"),
        Step(logic.And((logic.ge(step_time_q.sym, weight_fetch_time_q.sym),
                        logic.ge(step_time_q.sym, N_act * q / (n * W)))),
             r"the read share \(\rho\) of the skipped experts is non-negative"),
    ),
    uses=(step_time_ge_memory_time, distinct_experts_bounds),
)
latency_floor_all_experts = Claim(
    "roofline.latency_floor_all_experts", title="Once every expert is read, the floor is every weight",
    statement="At a batch large enough that every routed expert is read each step (the lecture's), a step takes "
              "at least the time to read every weight but the input embedding: the lecture's latency floor.",
    source=lecture("00:09-00:11", CHAPTER),
    hypotheses=EVERY_EXPERT_READ,
    goal=logic.ge(step_time_q.sym, (N_tot - N_emb) * q / (n * W)),
    steps=(
        Step(logic.ge(step_time_q.sym, (N_act + N_skip) * q / (n * W)), "the latency floor with every expert read",
             link="implies"),
        Step(logic.ge(step_time_q.sym, (N_tot - N_emb) * q / (n * W)),
             "the skipped experts are the total less the embedding less the active weights (at least)"),
    ),
    uses=(latency_floor,),
)
step_time_ge_floor = Claim(
    "roofline.step_time_ge_floor", title="The strict floor is below the step time at every routing",
    statement="Whatever share of the skipped experts a step reads, its roofline step time is at least the strict "
              "floor, which counts one token's active weights only.  A measurement is held to this floor.",
    source=derived("roofline.distinct_experts_bounds"),
    goal=logic.ge(step_time_q.sym, step_time_floor_q.sym),
    uses=(distinct_experts_bounds,),
)
all_experts_read_threshold = Claim(
    "roofline.all_experts_read_threshold", title="From about (E/k) ln(2E) tokens on, every expert is read",
    statement="Under uniform routing fewer than half an expert per layer is expected unread once the batch's "
              r"tokens reach \((E_{\mathrm{tot}}/E_{\mathrm{act}}) \ln(2 E_{\mathrm{tot}})\): 200 for "
              "DeepSeek-V3's 8 of 256 (the lecture's batch of 2,000 is ten times that), 319 for Kimi K2's 8 of 384.  "
              "Checked at those two thresholds.",
    source=derived("E(1 - k/E)^B <= E exp(-kB/E) <= 1/2 for B >= (E/k) ln(2E)"),
    goal=logic.And((logic.lt(sp.Mul(256, sp.Pow(1 - sp.Rational(8, 256), 200, evaluate=False), evaluate=False),
                             sp.Rational(1, 2)),
                    logic.lt(sp.Mul(384, sp.Pow(1 - sp.Rational(8, 384), 319, evaluate=False), evaluate=False),
                             sp.Rational(1, 2)))),
    uses=(experts_read_uniform,),
)
cost_per_token_and_floor = Claim(
    "roofline.cost_per_token_and_floor", title="Cost per token: a hyperbola above a floor", label="Cost floor",
    statement="Dividing the step time by the batch, the compute and KV parts of the cost per token are "
              "constants while the weight-fetch part falls like one over the batch; so the cost per token "
              "is never below the floor set by compute or by KV reads per token, however large the batch "
              "(a 'slow mode' can at best reach that floor).",
    source=lecture("00:13-00:15", CHAPTER),
    goal=logic.And((
        logic.eq(cost_per_token_q.sym,
                 p_chip * sp.Max(c_fwd * N_act / F, N_read * q / (W * B * tau) + S_kv / (W * tau) + N_row * q / W,
                                 evaluate=False)),
        logic.ge(cost_per_token_q.sym, cost_floor_q.sym),
    )),
    steps=(
        Step(logic.eq(cost_per_token_q.sym, p_chip * n * step_time_at(B, N_read) / (B * tau)),
             "cost is chip price times chips times step time, per token", link="implies"),
        Step(logic.eq(cost_per_token_q.sym,
                      p_chip * sp.Max(c_fwd * N_act / F, N_read * q / (W * B * tau) + S_kv / (W * tau) + N_row * q / W,
                                      evaluate=False)),
             r"divide each branch of the max by \(B\tau\) (the chip count cancels)"),
        Step(logic.ge(cost_per_token_q.sym, p_chip * sp.Max(c_fwd * N_act / F, S_kv / (tau * W), evaluate=False)),
             r"the weight term \(q N_{\mathrm{read}}/(B W \tau)\) and the embedding row are non-negative"),
    ),
    uses=(latency_floor,),
)
cost_per_token_nonincreasing = Claim(
    "roofline.cost_per_token_nonincreasing", title="A bigger batch never costs more per token",
    statement="Growing the batch spreads the weight reads over more tokens and leaves the per-token "
              "compute and KV costs unchanged, so the cost per token never rises with the batch.",
    source=lecture("00:14", CHAPTER),
    hypotheses=(logic.le(B, B2),),
    goal=logic.le(cost_at(B2), cost_per_token_q.sym),
    steps=(
        Step(logic.le(N_read * q / (W * B2 * tau), N_read * q / (W * B * tau)),
             "the weight share per token falls as 1/B", link="implies"),
        Step(logic.le(p_chip * sp.Max(c_fwd * N_act / F, N_read * q / (W * B2 * tau) + S_kv / (W * tau) + N_row * q / W,
                                      evaluate=False),
                      p_chip * sp.Max(c_fwd * N_act / F, N_read * q / (W * B * tau) + S_kv / (W * tau) + N_row * q / W,
                                      evaluate=False)),
             "the max is monotone in each argument"),
    ),
    notes="At the same share of experts read: a larger batch reads more experts, but under uniform routing the "
          "weights read per token still fall.",
    uses=(cost_per_token_and_floor,),
)
slow_mode_on_cost_floor = Claim(
    "roofline.slow_mode_on_cost_floor", title="Once compute-bound, cost sits on the compute line",
    statement="When the step is compute-bound, the cost per token is exactly the chip price times the "
              "compute per token: a larger batch (a 'slow mode') cannot lower it further.",
    source=lecture("00:15", CHAPTER),
    hypotheses=(logic.ge(compute_time_q.sym, memory_time_q.sym),),
    goal=logic.eq(cost_per_token_q.sym, p_chip * c_fwd * N_act / F),
    uses=(cost_per_token_and_floor,),
)
hbm_drain_time = Claim(
    "roofline.hbm_drain_time", title="Rubin drains its HBM in about 15 ms",
    statement="With 288 GB of HBM read at 20 TB/s, reading all of memory once takes 14.4 ms, "
              "which the lecture rounds to about 15 ms.",
    source=lecture("00:22", CHAPTER),
    goal=logic.within_percent(drain_time_q.sym, si("14.4 ms"), 1),
    instance=True,
)
drain_time_about_20ms = Claim(
    "roofline.drain_time_about_20ms", title="HBM drains in about 20 ms",
    statement="Capacity over bandwidth of HBM is about 20 ms on many generations (read as within a factor "
              "1.5: 13 to 30 ms).",
    source=lecture("00:21-00:22", CHAPTER),
    goal=logic.within_factor(drain_time_q.sym, si("20 ms"), sp.Rational(3, 2)),
    instance=True,
    notes="Lecture (Rubin) 14.4 ms; presets: H100 24 ms, B200 22.5 ms, H200 29 ms, but A100 80GB 39 ms and "
          "MI300X 36 ms fall outside.",
)
full_hbm_step_ge_drain_time = Claim(
    "roofline.full_hbm_step_ge_drain_time", title="A step that reads a full HBM lasts a drain time",
    statement="If the weights and KV caches fill the HBM of every chip, a step that reads each of them once "
              "takes at least the drain time; a longer step would leave time to read memory twice, which "
              "nothing needs, so the natural step time is the drain time.",
    source=lecture("00:21-00:23", CHAPTER, reconstructed=True),
    hypotheses=(logic.eq(N_read * q + B * S_kv + B * tau * N_row * q, n * C),),
    goal=logic.And((logic.eq(memory_time_q.sym, drain_time_q.sym), logic.ge(step_time_q.sym, drain_time_q.sym))),
    uses=(step_time_ge_memory_time,),
)

# The chapter's argument, for part I of the documents (placeholders: derive.model.prose) ------------------
PROSE = (
    r"The lecture's first chapter ('How batch size affects token cost and speed', its first 32 minutes) starts "
    r"from one decode step, which has two jobs.  The multipliers must process every active weight once for every "
    r"sequence in the batch (two FLOPs per weight and token, as spec sheets count; the lecture counts one "
    r"multiply).  The memory must deliver every weight once, however many sequences share it, plus each "
    r"sequence's own KV cache.  With the two overlapped, the step takes as long as the slower job, "
    r"\(T = \max(t_{\mathrm{compute}}, t_{\mathrm{mem}})\): the roofline on which every later chapter rests.  "
    "Under the scenario this document is built for, a batch of {{value:batch}} with {{value:context}} of context "
    "needs {{value:compute_time}} of compute against {{value:memory_time}} of memory traffic, of which "
    "{{value:weight_fetch_time}} for the weights and {{value:kv_fetch_time}} for the KV caches.",
    "Read along the batch, the maximum has a floor, since only compute and KV reads grow with the batch.  That "
    "floor answers the question behind fast modes, whether a customer could pay a hundred times more for a "
    "faster model.",
    "{{result:latency_floor}}",
    "For the scenario the step reads {{value:params_read}} of weights in {{value:weight_fetch_time}}.  That "
    "counts the experts a mixture of experts really reads: one token reads only its own, a batch the union of its "
    "tokens' choices, which uniform routing makes every expert once the batch passes a few hundred tokens (the "
    "lecture's 2,000 read them all).  No routing reads fewer than one token's active weights, "
    "{{value:weight_fetch_time_floor}} here: the strict floor a measurement is held to.  Divided by the tokens it "
    "produces, the "
    "step time becomes a cost: the rental of every chip for the length of one step ({{value:chip_price}} per "
    "chip here), shared by the batch.  The weight reads are shared and the rest is not, which gives the cost per "
    "token its shape.",
    "{{result:cost_per_token_and_floor}}",
    "At the scenario's batch a token costs {{value:cost_per_token}}, against a floor of "
    "{{value:cost_per_token_floor}}; the next chapter draws both against the batch.  One more number sets the "
    "rhythm of serving.  The drain time, HBM capacity over bandwidth, is how long it takes to read the whole "
    "memory once.  If weights and caches fill HBM and each is read once per step, a step cannot be shorter, and "
    "making it longer would only leave time to read memory twice.  The lecture calls it 'about 20 ms on many "
    "generations of HBM' and works Rubin's 288 GB at 20 TB/s to 'about 15'; for the scenario it is "
    "{{value:drain_time}}.  The table below checks both remarks (among the presets, the A100 80GB and the "
    "MI300X fall outside the 20 ms band).",
)
