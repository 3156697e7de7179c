"""Long context: where KV reads overtake compute, and what that says about bytes per token

Chapter 6 of the lecture ("Deducing long context memory costs from API pricing", 01:33:02-02:04:02),
first half.  Per generated token, compute is flat in the context length while KV reads grow with it,
so the cost per token has a knee at the balance context L*.  Gemini prices long prompts higher above
200K tokens; reading that tier boundary as L* lets one solve for the KV bytes per token of a frontier
model: about 2 KB, which a single shared KV layer with 8 heads of dimension 128 matches.  The
quadratic part of attention, the only compute that grows with the context, is negligible until
millions of tokens in such an architecture.

Main claims:
- **Context crossover** ``context.context_crossover``: with weights amortized, the cost per token is
  flat up to L* and linear in L beyond it; ``context.context_crossover_lecture``: the lecture's
  frontier model (1e11 active, R = 300, 2 KB per token, the lecture's 1-byte reading) puts L* at
  about 163K, within a factor 1.25 of the 200K price tier.
- ``context.kv_bytes_per_token``: if L* sits at the price tier, the KV bytes per token are
  q·N_act/(R·L_tier).  Both readings of the lecture's number are encoded:
  ``context.kv_bytes_per_token_fp8_reading`` (1,667 B with 1-byte weights, as on the board) and
  ``context.kv_bytes_per_token_fp4_reading`` (833 B with the scenario's FP4 weights);
  ``context.kv_bytes_per_token_fp4_claims_1667`` (expected ``refuted``) shows that 1,667 B does not
  follow at FP4.
- ``context.kv_bytes_architecture``: 1 shared layer × 2 × 128 × 8 heads × 1 byte = 2,048 B, within a
  factor 1.25 of the 1,667 B solved for (not of the 833 B FP4 reading:
  ``context.kv_bytes_architecture_fp4``, expected ``refuted``).
- ``context.quadratic_attention_negligible``: attention's own multiplies stay below the weight
  multiplies up to L_quad = 2·N_act/(4·n_attn·n_q·d_head); ``context.quadratic_attention_millions``:
  millions of tokens for one global layer of 128 heads, but only ~30K for 100 dense layers
  (``context.quadratic_attention_all_layers``, expected ``refuted``).
  ``context.attention_slope_below_memory_slope``: attention compute per context token stays below
  its KV reads unless a KV head serves more than F·e/(2·W) query heads (about 600).

Notation: L context per sequence, L* = 2·N_act·τ·W/(F·k) the balance context
(``batching.critical_context``), L_tier the context where the price steps up, R = F·q/(2·W),
n_kvl unique KV layers, n_kv KV heads, d_head head dimension, n_q query heads, n_attn layers that
attend over the whole context, e bytes per KV element.

Implementation notes: the lecture's W/F = 1/300 is per multiply at one byte per weight; with the
dimensionless R it becomes q/R, so the solved bytes per token depend on the weights' precision
(catalogue inconsistency 4).  The lecture's frontier model is pinned by hypotheses
(N_act = frontier_params_active; for the 1-byte reading q = 1 byte and R = 300, i.e. 12 PFLOP/s at
20 TB/s), so the scenario's DeepSeek-V3 numbers are untouched.  The price-follows-cost premise is
``pricing.price_tracks_cost``; this module comes first in the lecture and cannot import it, so
``context.gemini_long_context_tier`` restates it for the tier.

References: the lecture, 01:33-01:51; Google, Gemini API pricing (Gemini 3.1 Pro: higher input and
output prices above 200K-token prompts); Pope et al. 2022, "Efficiently Scaling Transformer
Inference" (KV cache 2·n_layers·n_kv·d_head·e bytes per token).
"""

from __future__ import annotations

import sympy as sp

from derive import Assumption, Claim, Definition, Quantity, Step, lecture, logic, spec

from .batching import critical_context_q, goldilocks_context_and_mfu, hardware_ratio_q, hw_ratio_300
from .roofline import (
    FULL_ATTENTION_ONLY,
    B,
    F,
    L,
    L_win,
    N_act,
    S_kv,
    W,
    bytes_per_kv_element,
    bytes_per_param,
    c_fwd,
    compute_time_q,
    cost_floor_q,
    flops,
    k,
    k_chunk,
    k_win,
    kv_bytes_per_sequence,
    kv_fetch_time_q,
    n,
    p_chip,
    params_active,
    q,
    s_state,
    tau,
)
from .scaling import frontier_params_active

CHAPTER = "Deducing long context memory costs from API pricing"
INCONSISTENCY = ("inconsistency",)
R, Lstar = hardware_ratio_q.sym, critical_context_q.sym
t_c, t_kv = compute_time_q.sym, kv_fetch_time_q.sym

# ---------------------------------------------------------------------------------------------------
# 1. The knee in cost per token at the balance context (#40)
# ---------------------------------------------------------------------------------------------------
price_tier_context = Quantity("price_tier_context", r"L_{\mathrm{tier}}", "token/seq",
                              "context length above which a provider charges a higher price per token")
kv_bytes_implied_q = Quantity("kv_bytes_implied", r"k_{\mathrm{tier}}", "byte/token",
                              "KV bytes per token for which the balance context falls on the price tier")
L_tier, k_tier = price_tier_context.sym, kv_bytes_implied_q.sym

gemini_long_context_tier = Assumption(
    "context.gemini_long_context_tier", title="Gemini charges more above 200K tokens",
    statement="Gemini 3.1 Pro charges a higher price per token for prompts longer than 200K tokens (the "
              "lecture says 50% more; the list prices step from $2 to $4 per million input tokens and "
              "from $12 to $18 per million output tokens).  Providers price close to cost (see "
              "pricing.price_tracks_cost), so the tier boundary marks where the cost per token starts to "
              "grow: the balance context, 'maybe not exactly'.  The lecture explains the location of the "
              "tier, not the size of the surcharge.",
    source=spec("ai.google.dev/gemini-api/docs/pricing", "2026-04", "Gemini 3.1 Pro, prompts above 200K tokens"),
    tags=INCONSISTENCY,
)
context_crossover = Claim(
    "context.context_crossover", title="The cost per token has a knee at the balance context",
    label="Context crossover",
    statement="With the weights amortized over a large batch, the cost per generated token is the compute "
              r"cost, flat in the context, up to the balance context \(L^{*}\); beyond it the KV reads dominate and "
              "the cost grows in proportion to the context.  A flat price below a tier and a higher one above "
              "keeps a provider near cost on both sides.",
    source=lecture("01:33-01:37", CHAPTER),
    hypotheses=FULL_ATTENTION_ONLY,
    goal=logic.And((
        logic.Implies(logic.le(L, Lstar), logic.eq(cost_floor_q.sym, p_chip * c_fwd * N_act / F)),
        logic.Implies(logic.ge(L, Lstar), logic.eq(cost_floor_q.sym, p_chip * L * k / (tau * W))),
    )),
    steps=(
        Step(logic.Iff(logic.le(L, Lstar), logic.le(L * k / (tau * W), c_fwd * N_act / F)),
             r"\(L^{*} = 2 N_{\mathrm{act}} \tau W/(F k)\): the KV reads of a token take as long as its multiplies",
             link="implies"),
    ),
    uses=(goldilocks_context_and_mfu,),
    notes="Attention's own multiplies, which do grow with the context, are left out as in the lecture; "
          "see context.quadratic_attention_negligible.",
)

_frontier = logic.eq(N_act, frontier_params_active.sym)
_one_byte_reading = (logic.eq(q, 1), logic.eq(R, 300))
context_crossover_lecture = Claim(
    "context.context_crossover_lecture", title="The lecture's frontier model crosses over near 200K",
    statement=r"For a model with 1e11 active parameters and 2 KB of KV per token, on hardware with \(R = 300\) "
              "read at one byte per weight as on the board, the balance context is about 163K tokens, within "
              "a factor 1.25 of Gemini's 200K tier.",
    source=lecture("01:35-01:37", CHAPTER),
    hypotheses=(_frontier, *_one_byte_reading),
    goal=logic.within_factor(Lstar, L_tier, sp.Rational(5, 4)),
    instance=True, forall=(params_active, bytes_per_param, flops),
    uses=(context_crossover, gemini_long_context_tier),
)

# ---------------------------------------------------------------------------------------------------
# 2. Solving for the KV bytes per token (#41) and the architecture check (#42)
# ---------------------------------------------------------------------------------------------------
kv_bytes_implied = Definition(
    "context.kv_bytes_implied", title="KV bytes per token implied by the price tier",
    statement="Bytes per weight times active parameters, over the hardware ratio times the tier context.",
    source=lecture("01:36-01:38", CHAPTER),
    defines=kv_bytes_implied_q, expr=q * N_act * tau / (R * L_tier),
)
kv_bytes_per_token_claim = Claim(
    "context.kv_bytes_per_token", title="Solving the tier for the KV bytes per token",
    label="KV bytes per token",
    statement="The balance context falls on the price tier exactly when the KV bytes per token are "
              r"\(q N_{\mathrm{act}}/(R L_{\mathrm{tier}})\): KV reads and multiplies per token balance there, and the "
              "batch and the "
              "chip count cancel.  This is bytes per token of context for the whole model, not per layer.",
    source=lecture("01:36-01:38", CHAPTER),
    hypotheses=(logic.gt(k, 0),),
    goal=logic.Iff(logic.eq(Lstar, L_tier), logic.eq(k, k_tier)),
    steps=(
        Step(logic.eq(Lstar, L_tier), "suppose the balance context is the tier", link="iff"),
        Step(logic.eq(c_fwd * N_act * tau * W / (F * k), L_tier),
             r"\(L^{*} = 2 N_{\mathrm{act}} \tau W/(F k)\)", link="iff"),
        Step(logic.eq(k, c_fwd * N_act * tau * W / (F * L_tier)), r"solve for \(k\)", link="iff"),
        Step(logic.eq(k, q * N_act * tau / (R * L_tier)), r"\(2W/F = q/R\)", link="iff"),
    ),
    uses=(context_crossover,),
    notes=r"\(R\) is the hardware ratio of batching.hw_ratio_300; it is not cited as a dependency because that "
          r"claim is about the scenario's hardware while this one holds for every \(R\).",
)
kv_bytes_per_token_fp8_reading = Claim(
    "context.kv_bytes_per_token_fp8_reading", title="One byte per weight: 1e11/(300 × 200K) = 1,667 bytes",
    statement=r"Reading \(W/F = 1/300\) as the board does (one byte per weight, \(R = 300\)), a "
              "1e11-active-parameter "
              "model whose balance context is the 200K tier keeps 1,667 bytes of KV per token: 'almost two "
              "kilobytes'.",
    source=lecture("01:37", CHAPTER),
    hypotheses=(_frontier, *_one_byte_reading),
    goal=logic.within_percent(k_tier, 1667, 1),
    instance=True, forall=(params_active, bytes_per_param, flops),
    uses=(kv_bytes_per_token_claim,), tags=INCONSISTENCY,
    notes=r"The lecture plugs in \(W/F = 1/300\) directly, which equals \(q/R\) only for \(q = 1\) byte (FP8); "
          "catalogue inconsistency 4.",
)
kv_bytes_per_token_fp4_reading = Claim(
    "context.kv_bytes_per_token_fp4_reading", title="FP4 weights: the same solve gives 833 bytes",
    statement=r"With the lecture scenario's FP4 weights (half a byte) and \(R = 300\), the same solve gives "
              "833 bytes per token: the answer halves with the weights' precision.",
    source=lecture("01:37", CHAPTER, reconstructed=True),
    hypotheses=(_frontier,),
    goal=logic.within_percent(k_tier, 833, 1),
    instance=True, forall=(params_active,),
    uses=(kv_bytes_per_token_claim, hw_ratio_300), tags=INCONSISTENCY,
)
kv_bytes_per_token_fp4_claims_1667 = Claim(
    "context.kv_bytes_per_token_fp4_claims_1667", title="False twin: 1,667 bytes at FP4",
    statement="At the scenario's FP4 weights the solve would give 1,667 bytes per token.  It gives 833.",
    source=lecture("01:37", CHAPTER),
    hypotheses=(_frontier,),
    goal=logic.within_percent(k_tier, 1667, 1),
    instance=True, forall=(params_active,), expected="refuted",
    uses=(kv_bytes_per_token_claim,), tags=INCONSISTENCY,
)

kv_cache_layers = Quantity("kv_cache_layers", r"n_{\mathrm{kvl}}", "1",
                           "layers that keep their own KV cache (1 when one global KV is shared by all layers)")
kv_heads = Quantity("kv_heads", r"n_{\mathrm{kv}}", "1", "key/value heads per layer")
head_dim = Quantity("head_dim", r"d_{\mathrm{head}}", "1", "dimension of one attention head")
kv_vectors_per_token = Quantity(
    "kv_vectors_per_token", r"\kappa", "1/token", "cached vectors per KV head per token of context: a key and a value",
    value=2, source=lecture("01:40", CHAPTER),
)
kv_elements_per_layer_q = Quantity(
    "kv_elements_per_layer", r"\epsilon_{\mathrm{kv}}", "1/token",
    "elements one KV layer caches per token of context (a key and a value per KV head; for multi-head latent "
    "attention the latent and its rotary key, which a model config pins)")
kv_elements_per_layer = Definition(
    "context.kv_elements_per_layer", title="Cached elements per layer and token",
    statement="Per token of context a layer caches a key and a value vector of the head dimension for each KV "
              "head.  Multi-head latent attention (DeepSeek-V2/V3, Kimi K2) caches one latent vector and one "
              "rotary key instead, kv_lora_rank + qk_rope_head_dim elements; a model config with latent "
              "attention pins this quantity to that sum, and the per-head count does not apply to it.",
    source=lecture("01:40", CHAPTER),
    defines=kv_elements_per_layer_q, expr=kv_vectors_per_token.sym * kv_heads.sym * head_dim.sym,
)
kv_bytes_from_heads_q = Quantity("kv_bytes_from_heads", r"k_{\mathrm{arch}}", "byte/token",
                                 "KV bytes per token of context computed from the attention layout")
kv_bytes_from_heads = Definition(
    "context.kv_bytes_from_heads", title="KV bytes per token from the attention layout",
    statement="Each layer with its own KV cache stores its cached elements (a key and a value vector of the "
              "head dimension for every KV head) for every token of context.",
    source=lecture("01:40", CHAPTER),
    defines=kv_bytes_from_heads_q,
    expr=kv_cache_layers.sym * kv_elements_per_layer_q.sym * bytes_per_kv_element.sym,
)
kv_bytes_architecture = Claim(
    "context.kv_bytes_architecture", title="One shared layer, 8 heads of 128: 2,048 bytes",
    statement="A Character.AI-style model whose layers share one global KV cache, with 8 KV heads of "
              "dimension 128 at one byte per element, keeps 1 × 2 × 8 × 128 = 2,048 bytes per token (the "
              "lecture scenario's value), within a factor 1.25 of the 1,667 bytes solved for: 'plausible, if "
              "maybe a little bit small'.",
    source=lecture("01:40-01:41", CHAPTER),
    hypotheses=(_frontier, *_one_byte_reading),
    goal=logic.And((
        logic.eq(kv_bytes_from_heads_q.sym, 2048),
        logic.eq(kv_bytes_from_heads_q.sym, k),
        logic.within_factor(kv_bytes_from_heads_q.sym, k_tier, sp.Rational(5, 4)),
    )),
    instance=True, forall=(params_active, bytes_per_param, flops),
    uses=(kv_bytes_per_token_claim, kv_bytes_per_token_fp8_reading), tags=INCONSISTENCY,
    notes="Per token for the whole model, not per layer (catalogue inconsistency 5).  The standard count "
          r"\(2 n_{\mathrm{layers}} n_{\mathrm{kv}} d_{\mathrm{head}} e\) (Pope et al. 2022) has "
          r"\(n_{\mathrm{layers}} = 1\) here.  Sparse attention would "
          "allow larger layouts by its sparsity factor.",
)
kv_bytes_architecture_fp4 = Claim(
    "context.kv_bytes_architecture_fp4", title="False twin: 2 KB also matches the FP4 reading",
    statement="At FP4 weights the solved value is 833 bytes; 2,048 bytes is not within a factor 1.25 of it.",
    source=lecture("01:40-01:41", CHAPTER, reconstructed=True),
    hypotheses=(_frontier,),
    goal=logic.within_factor(kv_bytes_from_heads_q.sym, k_tier, sp.Rational(5, 4)),
    instance=True, forall=(params_active,), expected="refuted",
    uses=(kv_bytes_per_token_fp4_reading,), tags=INCONSISTENCY,
)

# ---------------------------------------------------------------------------------------------------
# 3. The quadratic term and the context plateau (#46)
# ---------------------------------------------------------------------------------------------------
query_heads = Quantity("query_heads", r"n_{q}", "1", "query heads per attention layer")
global_attention_layers = Quantity("global_attention_layers", r"n_{\mathrm{attn}}", "1",
                                   "layers whose attention spans the whole context (0 where every layer's attention "
                                   "is windowed, chunked or sparse)", domain="nonnegative")
window_attention_dims = Quantity("window_attention_dims", r"D_{\mathrm{win}}", "1",
                                 "query-head dimensions of the sliding-window layers, summed over them (layers x "
                                 "query heads x head dimension; 0 without such layers)", domain="nonnegative")
chunk_attention_dims = Quantity("chunk_attention_dims", r"D_{\mathrm{chunk}}", "1",
                                "query-head dimensions of the chunked-attention layers, summed over them (layers x "
                                "query heads x head dimension; 0 without such layers)", domain="nonnegative")
sparse_attention_dims = Quantity("sparse_attention_dims", r"D_{\mathrm{sp}}", "1",
                                 "query-head dimensions of the sparse-attention layers, summed over them (layers x "
                                 "query heads x the prefill's head dimension; 0 without such layers): each query "
                                 "attends to its top attention_topk tokens", domain="nonnegative")
indexer_dims = Quantity("indexer_dims", r"D_{\mathrm{idx}}", "1",
                        "dimensions a sparse attention's indexer scores each context token over, summed over its "
                        "heads and layers (layers x indexer heads x indexer head dimension; 0 without an indexer)",
                        domain="nonnegative")
attention_flops_per_context_token = Quantity(
    "attention_flops_per_context_token", r"c_{\mathrm{attn}}", "FLOP/token",
    "FLOPs per query head and head dimension for each token of context: 2 for the score q·k, 2 for "
    "weighting v",
    value=4, source=lecture("01:48", CHAPTER, reconstructed=True),
)
attention_compute_time_q = Quantity("attention_compute_time", r"t_{\mathrm{attn}}", "s",
                                    "time for the attention score and value multiplies of one decode step",
                                    domain="nonnegative", display_unit="ms")
quadratic_context_q = Quantity("quadratic_context", r"L_{\mathrm{quad}}", "token/seq",
                               "context at which attention's multiplies equal the weight multiplies")
n_q, n_attn, n_kv, d_head, n_kvl = (query_heads.sym, global_attention_layers.sym, kv_heads.sym, head_dim.sym,
                                    kv_cache_layers.sym)
c_attn, e = attention_flops_per_context_token.sym, bytes_per_kv_element.sym
t_attn, L_quad = attention_compute_time_q.sym, quadratic_context_q.sym

attention_compute_time = Definition(
    "context.attention_compute_time", title="Attention compute time of a decode step",
    statement="Each new token's query heads meet every context token in every global attention layer: "
              "4 FLOPs per head dimension, so the work grows with the context (quadratically over a whole "
              "sequence).",
    source=lecture("01:48", CHAPTER, reconstructed=True),
    defines=attention_compute_time_q, expr=c_attn * n_attn * n_q * d_head * L * B / (n * F),
)
quadratic_context = Definition(
    "context.quadratic_context", title="Context where attention compute matches the weights",
    statement="The context at which a token's attention multiplies equal its weight multiplies.",
    source=lecture("01:48", CHAPTER, reconstructed=True),
    defines=quadratic_context_q, expr=c_fwd * N_act * tau / (c_attn * n_attn * n_q * d_head),
    domain=logic.gt(n_attn, 0),
)
context_length_plateau = Assumption(
    "context.context_length_plateau", title="Context lengths plateaued at 100-200K",
    statement="Served context lengths rose from about 8K to 100-200K tokens and have hovered there for a "
              "year or two, a balanced cost point, because HBM is not getting much better.  Sparse attention "
              "buys something like a square root of the KV traffic, not an unlimited gain, since too much "
              "sparsity loses quality.  (Dwarkesh's aside: continual learning purely in context would need "
              "contexts of about 1e8 tokens, a month of work.)",
    source=lecture("01:49-01:51", CHAPTER),
)
quadratic_attention_negligible = Claim(
    "context.quadratic_attention_negligible", title="Attention compute is small below a quadratic context",
    statement="The attention multiplies of a decode step are at most its weight multiplies exactly when the "
              r"context is at most \(L_{\mathrm{quad}} = 2 N_{\mathrm{act}} \tau/(4 n_{\mathrm{attn}} n_{q} "
              r"d_{\mathrm{head}})\); below that the compute line stays "
              "nearly flat in the context, as the lecture draws it (a model with at least one layer attending over "
              "the whole context; without one, attention never catches up).",
    source=lecture("01:48-01:49", CHAPTER),
    hypotheses=(logic.gt(n_attn, 0),),
    goal=logic.Iff(logic.le(t_attn, t_c), logic.le(L, L_quad)),
    steps=(
        Step(logic.le(t_attn, t_c), "suppose attention takes no longer than the weights", link="iff"),
        Step(logic.le(c_attn * n_attn * n_q * d_head * L * B / (n * F), c_fwd * N_act * B * tau / (n * F)),
             "substitute both times", link="iff"),
        Step(logic.le(L, c_fwd * N_act * tau / (c_attn * n_attn * n_q * d_head)),
             r"the batch, the chips and \(F\) cancel", link="iff"),
    ),
    uses=(context_crossover, context_length_plateau),
)
quadratic_attention_millions = Claim(
    "context.quadratic_attention_millions", title="One global layer: attention matters only at millions",
    statement="For the lecture's frontier model (1e11 active parameters) with one global attention layer of "
              "128 query heads of dimension 128, attention compute catches up with the weights only at about "
              "3 million tokens: 'up in the millions of tokens'.",
    source=lecture("01:48", CHAPTER),
    hypotheses=(_frontier,),
    goal=logic.ge(L_quad, 10**6),
    instance=True, forall=(params_active,),
    uses=(quadratic_attention_negligible,), tags=INCONSISTENCY,
    notes="'Millions' depends on the architecture: see context.quadratic_attention_all_layers.",
)
quadratic_attention_all_layers = Claim(
    "context.quadratic_attention_all_layers", title="False twin: millions also with 100 dense attention layers",
    statement="If all 100 layers of the same model attended over the whole context, attention would match "
              "the weights at about 30K tokens, not millions.",
    source=lecture("01:48", CHAPTER, reconstructed=True),
    hypotheses=(_frontier, logic.eq(n_attn, 100)),
    goal=logic.ge(L_quad, 10**6),
    instance=True, forall=(params_active, global_attention_layers), expected="refuted",
    uses=(quadratic_attention_negligible,), tags=INCONSISTENCY,
)
attention_slope_below_memory_slope = Claim(
    "context.attention_slope_below_memory_slope", title="Per context token, attention compute trails KV reads",
    statement="When every attention layer reads its own KV cache, the attention multiplies of a step take no "
              r"longer than its KV reads exactly when each KV head serves at most \(F e/(2W)\) query heads, about "
              "600 on the lecture's hardware; grouped-query attention uses 1 to 16.  The compute slope in the "
              "context is 'forced by fundamental principles' to be the smaller one.",
    source=lecture("01:49", CHAPTER),
    hypotheses=(*FULL_ATTENTION_ONLY, logic.eq(k, kv_bytes_from_heads_q.sym), logic.eq(n_attn, n_kvl)),
    goal=logic.Iff(logic.le(t_attn, t_kv),
                   logic.le(n_q / n_kv, F * kv_vectors_per_token.sym * e / (c_attn * W))),
    uses=(quadratic_attention_negligible, kv_bytes_from_heads),
)
attention_slope_lecture = Claim(
    "context.attention_slope_lecture", title="The lecture's model: attention compute under a tenth of KV reads",
    statement="With the lecture scenario's hardware and 2 KB per token, one global layer of 128 query heads "
              "spends under a tenth of the KV read time on attention multiplies, at any batch and context.",
    source=lecture("01:49", CHAPTER),
    goal=logic.le(10 * t_attn, t_kv),
    instance=True,
    uses=(attention_slope_below_memory_slope,),
)

# ---------------------------------------------------------------------------------------------------
# 4. Windowed and hybrid models: the KV per sequence at long context (issue 9)
# ---------------------------------------------------------------------------------------------------
_gemma3_like = (logic.eq(k_win, 5 * k), logic.eq(L_win, 1024), logic.eq(k_chunk, 0), logic.eq(s_state, 0))
hybrid_kv_at_long_context = Claim(
    "context.hybrid_kv_at_long_context", title="Five local layers in six: past 32K, under a fifth of the KV",
    statement="In a model where five of every six layers attend over a 1,024-token window (Gemma 3's layout), "
              "the KV cache of a sequence of 32K tokens or more is under a fifth of what it would be if every "
              "layer attended over the whole context.  The lecture's bytes-per-token reasoning applies to the "
              "full layers alone; counting every layer overstates the cache about six-fold at long context.",
    source=lecture("01:40-01:41", CHAPTER, reconstructed=True),
    hypotheses=(*_gemma3_like, logic.gt(k, 0), logic.ge(L, 32768)),
    goal=logic.le(5 * S_kv, L * (k + k_win)),
    uses=(kv_bytes_per_sequence, kv_bytes_from_heads),
    notes=r"Exact: \(S_{\mathrm{kv}} = L k + 1024 \cdot 5k\), against \(6 L k\) with every layer full.  See "
          "capacity.windowed_kv_bounded for the general bound.",
)
hybrid_kv_short_context = Claim(
    "context.hybrid_kv_short_context", title="False twin: windows cut the KV five-fold at 8K too",
    statement="The same five-fold saving at an 8K context.  It does not hold: at 8,192 tokens the windowed "
              r"layers still hold an eighth of the context each, and the cache is \(1/6 + 5/48 = 13/48\) of the "
              "all-full figure, over a fifth.",
    source=lecture("01:40-01:41", CHAPTER, reconstructed=True),
    hypotheses=(*_gemma3_like, logic.gt(k, 0), logic.eq(L, 8192)),
    goal=logic.le(5 * S_kv, L * (k + k_win)),
    expected="refuted",
    uses=(hybrid_kv_at_long_context,), tags=INCONSISTENCY,
)

# The chapter's argument, for part I of the documents (placeholders: derive.model.prose) ------------------
PROSE = (
    "The lecture's sixth chapter (minutes 93 to 124) reads API prices as measurements of cost, beginning with "
    "long context.  Per generated token, compute does not depend on the context but the KV reads grow with it.  "
    "Gemini 3.1 Pro charges more for prompts above 200K tokens, and the lecture reads that tier as the point "
    "where the cost per token starts to grow ('maybe not exactly'), which explains where the price steps, not "
    "by how much.",
    "{{result:context_crossover}}",
    "{{figure:memory_vs_context}}",
    "Turned around, the tier measures the model.",
    "{{result:kv_bytes_per_token}}",
    r"The readings above hold both precisions.  The lecture plugs in \(W/F = 1/300\) directly, which is "
    r"\(q/R\) only at one byte per weight, and it is the one-byte answer that a real layout matches; against "
    r"the FP4 answer the shared-KV layout is {{verdict:kv_bytes_architecture_fp4}}.",
    r"Attention's own multiplies, the one part of compute that grows with the context, were left out.  They stay "
    r"below the weight multiplies up to a context \(L_{\mathrm{quad}}\) that shrinks with the number of global "
    r"attention layers.  For one shared layer of 128 query heads in a 1e11-parameter model that is 'up in the "
    r"millions of tokens', as the lecture says ({{verdict:quadratic_attention_millions}}); had all 100 layers "
    r"attended over the whole context, it would be tens of thousands, and 'millions' "
    r"{{verdict:quadratic_attention_all_layers}}.  Per context token, attention's multiplies also trail its KV "
    r"reads unless a KV head serves hundreds of query heads, which grouped-query attention never does.",
    "Real models mix layer kinds.  Sliding-window, chunked and linear-attention layers keep a cache that stops "
    "growing, so at long context only the full-attention layers count: with five local layers in six (Gemma 3's "
    "layout) a sequence of 32K tokens or more holds under a fifth of the all-global cache, though the saving is "
    "not yet five-fold at 8K ({{verdict:hybrid_kv_short_context}} there).  Served contexts rose from about 8K to "
    "100-200K tokens and have stayed there, a balance that moves only as HBM improves; sparse attention buys "
    "about a square root of the KV traffic, not an unlimited gain.",
)
