"""Prefill and time to first token: FLOPs with causal attention, where attention dominates, the TTFT floor

Chapter 1 of part II ("Beyond the lecture").  The lecture prices a prefill pass like a decode step with
ℓ new tokens per sequence and leaves attention out (``pricing.prefill_compute_time``).  A prefill of ℓ
tokens from an empty cache also multiplies every new token's queries with the keys and values before it
(causal masking): token i meets i tokens of context, so the attention work is the triangle
ℓ(ℓ + 1)/2, quadratic in the prompt.  This chapter counts it, says exactly where it overtakes the
weight multiplies, when a prefill is compute-bound, what that means for the time to first token (TTFT),
how large a prefill chunk a decode batch can carry and stay memory-bound, and what the attention term
adds to the training FLOPs per token that 6N leaves out.

Main claims:
- ``prefill.prefill_flops``: prefill FLOPs per sequence = weight multiplies c_fwd·N_act·ℓ plus causal
  attention c_attn·n_attn·n_q·d_pre·ℓ(ℓ + τ)/(2τ) over the layers spanning the whole context, plus the
  sliding-window layers' (exact: Σ min(i, L_win) over D_win query-head dimensions) and the chunked layers'
  (a lower count of Σ ((i − 1) mod L_chunk) + 1, exact within one chunk, over D_chunk), plus a sparse
  attention's (Σ min(i, k) over D_sp, and its indexer's Σ i over the queries past the first k, over D_idx);
  ``prefill.prefill_flops_ge_weight_flops``: never less than the lecture's count.
- **Attention crossover** ``prefill.attention_dominates_iff``: attention FLOPs of a prefill reach its
  weight FLOPs exactly when ℓ ≥ ℓ_attn = 2·c_fwd·N_act·τ/(c_attn·n_attn·n_q·d_pre) − τ, which is
  2·L_quad − τ (``context.quadratic_context``) where the prefill's head dimension is the decode step's: a
  prefill meets attention at twice the context a decode step does, less one token, because its average
  token sees half the prompt.
- **Prefill compute-bound** ``prefill.prefill_compute_bound``: once the pass holds at least
  B·ℓ ≥ q·N_tot·F/(c_fwd·N_act·W − k·F) new tokens, the TTFT floor is its compute time.
- **TTFT floor** ``prefill.ttft_floor_ge_weight_fetch`` and ``prefill.ttft_floor_ge_lecture_prefill``:
  the time to first token is never below the weight-fetch time nor below the lecture's prefill
  compute time (which has no attention).
- **Chunk budget** ``prefill.chunk_memory_bound_iff``: a decode batch of B sequences that also carries
  a prefill chunk of c tokens stays memory-bound exactly when c ≤ c* (Sarathi's piggy-backing).
- ``prefill.six_n_low_deepseek_v3``: 6N alone is more than 12 % below the 250 GFLOP per token DeepSeek
  publishes for DeepSeek-V3 at 4K; ``prefill.train_flops_deepseek_v3``, ``prefill.train_flops_deepseek_v2``
  and ``prefill.train_flops_llama3_405b``: with the causal attention term the count lands within 2 %
  of the published 250, 155 and 2,448 GFLOP per token.

Notation: ℓ new tokens per sequence (the prompt), B sequences prefilled together, c_attn = 4 FLOPs per
query head, head dimension and context token (2 for q·k, 2 for weighting v), n_attn layers attending
over the whole context, n_q query heads, d_pre the prefill's head dimension (``prefill.prefill_head_dim``:
the head dimension, unless a config pins it), τ = 1 token per sequence per step, k KV bytes written per new
token, c_train/c_fwd = 3 (backward twice the forward).

Implementation notes: attention is counted from an empty cache (no prefix hit); softmax, norms and
element-wise work are left out as in the lecture.  The memory side of a prefill is the weight read plus
the new tokens' KV written once (flash attention keeps scores on chip).  For latent attention (MLA) the
prefill runs the non-absorbed form, whose score and value head dimensions differ (192 and 128 for
DeepSeek-V3): c_attn·d_pre is 2·(192 + 128), i.e. d_pre = 160, which the config reader pins, while decoding
runs the absorbed form over the cached latent (head_dim = (576 + 512)/2 = 544 in the context chapter).  The
training FLOPs are the forward FLOPs per token times c_train/c_fwd.

References: Kaplan et al. 2020, "Scaling Laws for Neural Language Models", section 2.1 and table 1
(C_forward = 2N + 2·n_layer·n_ctx·d_attn, backward twice the forward); Hoffmann et al. 2022 (Chinchilla),
appendix F (attention logits and reduce both counted); Zhao et al. 2025, "Insights into DeepSeek-V3:
Scaling Challenges and Reflections on Hardware for AI Architectures" (ISCA '25), table 2 (training
GFLOPS per token at sequence length 4096); Agrawal et al. 2024, "Taming Throughput-Latency Tradeoff in LLM
Inference with Sarathi-Serve" (OSDI '24), sections 2 and 4 (chunked prefills, stall-free batching); Dao
et al. 2022, "FlashAttention" (scores kept on chip).
"""

from __future__ import annotations

import sympy as sp

from derive import Assumption, Claim, Definition, Quantity, Step, derived, logic, paper, si
from theorems.context import (
    attention_flops_per_context_token,
    chunk_attention_dims,
    global_attention_layers,
    head_dim,
    indexer_dims,
    query_heads,
    sparse_attention_dims,
    window_attention_dims,
)
from theorems.pipeline import stages
from theorems.pricing import prefill_compute_time_q, prefill_tokens
from theorems.roofline import (
    B,
    F,
    N_act,
    N_tot,
    S_kv,
    W,
    c_fwd,
    k,
    n,
    params_active,
    params_output_head,
    q,
    tau,
    weight_fetch_floor_q,
)
from theorems.roofline import attention_chunk as attention_chunk_q
from theorems.roofline import attention_topk as attention_topk_q
from theorems.roofline import attention_window as attention_window_q
from theorems.scaling import train_flops_per_param_token

PART = "Beyond the lecture"  # the documents render this library's chapters as part II
CHAPTER = "Prefill and time to first token"

ell = prefill_tokens.sym
c_attn, n_attn, n_q, d_head = (attention_flops_per_context_token.sym, global_attention_layers.sym,
                               query_heads.sym, head_dim.sym)
D_win, D_chunk = window_attention_dims.sym, chunk_attention_dims.sym
L_win, L_chunk, L_top = attention_window_q.sym, attention_chunk_q.sym, attention_topk_q.sym
D_sp, D_idx = sparse_attention_dims.sym, indexer_dims.sym
c_train = train_flops_per_param_token.sym
t_w, t_cp_lecture = weight_fetch_floor_q.sym, prefill_compute_time_q.sym
P = stages.sym

# Quantities -------------------------------------------------------------------------------------------
prefill_weight_flops_q = Quantity("prefill_weight_flops", r"C_{\mathrm{w}}^{\mathrm{pre}}", "FLOP/seq",
                                  "FLOPs of the weight multiplies of one sequence's prefill",
                                  display_unit="TFLOP/seq")
prefill_attention_flops_q = Quantity("prefill_attention_flops", r"C_{\mathrm{attn}}^{\mathrm{pre}}", "FLOP/seq",
                                     "FLOPs of the causal attention (scores and weighted values) of one "
                                     "sequence's prefill from an empty cache (over the layers attending over the "
                                     "whole context)", domain="nonnegative", display_unit="TFLOP/seq")
prefill_window_attention_flops_q = Quantity(
    "prefill_window_attention_flops", r"C_{\mathrm{win}}^{\mathrm{pre}}", "FLOP/seq",
    "FLOPs of the sliding-window layers' attention in one sequence's prefill from an empty cache",
    domain="nonnegative", display_unit="TFLOP/seq")
prefill_chunk_attention_flops_q = Quantity(
    "prefill_chunk_attention_flops", r"C_{\mathrm{chunk}}^{\mathrm{pre}}", "FLOP/seq",
    "FLOPs the chunked-attention layers' attention in one sequence's prefill does at least (exact up to one "
    "chunk's prompt)", domain="nonnegative", display_unit="TFLOP/seq")
prefill_sparse_attention_flops_q = Quantity(
    "prefill_sparse_attention_flops", r"C_{\mathrm{sp}}^{\mathrm{pre}}", "FLOP/seq",
    "FLOPs of a sparse attention in one sequence's prefill: each query over its top-k tokens, and the indexer's "
    "scores of every earlier token for the queries past the first k", domain="nonnegative", display_unit="TFLOP/seq")
indexer_flops_per_context_token = Quantity(
    "indexer_flops_per_context_token", r"c_{\mathrm{idx}}", "FLOP/token",
    "FLOPs per indexer head and dimension for each context token a sparse attention's indexer scores: the score "
    "q·k only, no values", value=2,
    source=paper("DeepSeek-AI 2025, DeepSeek-V3.2-Exp: Boosting Long-Context Efficiency with DeepSeek Sparse "
                 "Attention", "section 2.1, the lightning indexer: the index score is the sum over indexer heads "
                 "of w · ReLU(q · k), one dot product per head and preceding token"))
prefill_flops_q = Quantity("prefill_flops", r"C^{\mathrm{pre}}", "FLOP/seq",
                           "FLOPs of one sequence's prefill: weight multiplies plus causal attention (whole-context, "
                           "sliding-window, chunked and sparse layers)", display_unit="TFLOP/seq")
served_prefill_flops_q = Quantity("served_prefill_flops", r"C^{\mathrm{pre}}_{\mathrm{serve}}", "FLOP/seq",
                                  "FLOPs a server's prefill of one sequence's prompt does: prefill_flops less the "
                                  "output head's for every prompt token before the last (logits only where it "
                                  "samples)", display_unit="TFLOP/seq")
attention_crossover_q = Quantity("prefill_attention_crossover", r"\ell_{\mathrm{attn}}", "token/seq",
                                 "prompt length at which a prefill's attention FLOPs equal its weight FLOPs (below "
                                 "one token, attention outweighs the weights at every prompt)", domain="real")
prefill_compute_time_attn_q = Quantity("prefill_compute_time_with_attention", r"t_{\mathrm{compute}}^{\mathrm{ttft}}",
                                       "s", "time for all the multiplies of a prefill pass, attention included, "
                                       "at the peak FLOP/s of every pipeline stage's chips", display_unit="ms")
prefill_floor_compute_time_q = Quantity("prefill_floor_compute_time", r"t_{\mathrm{compute}}^{\min}", "s",
                                       "time for the multiplies a prefill pass cannot skip: all of them, attention "
                                       "included (a sparse attention's left out), but the output head's for every "
                                       "prompt token before the last, at the peak FLOP/s of every pipeline stage's "
                                       "chips", display_unit="ms")
prefill_memory_time_q = Quantity("prefill_memory_time", r"t_{\mathrm{mem}}^{\mathrm{ttft}}", "s",
                                 "time to read one token's active weights once and write the new tokens' KV cache, "
                                 "over every pipeline stage's chips, and at least the last prompt token's pass "
                                 "through the stages' weights one after the other", display_unit="ms")
ttft_floor_q = Quantity("ttft_floor", r"T_{\mathrm{TTFT}}", "s",
                        "roofline floor on the time to first token of a prefill pass of the batch's prompts "
                        "together: the slower of its multiplies and its memory traffic (one request's own: "
                        "request_ttft_floor)", display_unit="ms")
compute_bound_tokens_q = Quantity("prefill_compute_bound_tokens", r"N_{\mathrm{cb}}", "token",
                                  "new tokens a prefill pass needs (over all its sequences) to be compute-bound "
                                  "on the weights", display_unit="token")
prefill_chunk = Quantity("prefill_chunk", "c", "token",
                         "prefill tokens carried in one decode step beside the decode batch (chunked prefill)")
chunk_budget_q = Quantity("prefill_chunk_budget", r"c^{*}", "token",
                          "largest prefill chunk a decode step can carry and stay memory-bound on the weight "
                          "multiplies (negative: the decode batch alone is already compute-bound)", domain="real")
train_flops_causal_q = Quantity("train_flops_per_token_causal", r"C_{\mathrm{train}}^{\mathrm{tok}}", "FLOP/token",
                                "training FLOPs per token of a sequence of ℓ tokens: c_train/c_fwd times the "
                                "forward FLOPs, causal attention included", display_unit="GFLOP/token")

prefill_head_dim_q = Quantity("prefill_head_dim", r"d_{\mathrm{head}}^{\mathrm{pre}}", "1",
                              "mean of the score and value head dimensions a prefill's attention multiplies over, "
                              "per query head (head_dim, unless a model config pins it: latent attention's "
                              "non-absorbed form)")

C_w, C_attn, C_pre = prefill_weight_flops_q.sym, prefill_attention_flops_q.sym, prefill_flops_q.sym
ell_attn, t_cpa, t_pm = attention_crossover_q.sym, prefill_compute_time_attn_q.sym, prefill_memory_time_q.sym
H, t_cf, C_srv = params_output_head.sym, prefill_floor_compute_time_q.sym, served_prefill_flops_q.sym
T_ttft, N_cb, c_chunk, c_star = ttft_floor_q.sym, compute_bound_tokens_q.sym, prefill_chunk.sym, chunk_budget_q.sym
C_train_tok = train_flops_causal_q.sym
C_win, C_chk = prefill_window_attention_flops_q.sym, prefill_chunk_attention_flops_q.sym
C_sp, c_idx = prefill_sparse_attention_flops_q.sym, indexer_flops_per_context_token.sym
d_pre = prefill_head_dim_q.sym
A = n_attn * n_q * d_pre  # query-head dimensions attending over the whole context, summed over layers

# Published numbers ------------------------------------------------------------------------------------
_ISCA = paper("Zhao et al. 2025, Insights into DeepSeek-V3: Scaling Challenges and Reflections on Hardware for "
              "AI Architectures (ISCA '25), arXiv:2505.09343",
              "table 2: training GFLOPS per token at sequence length 4096")
published_train_flops_dsv3 = Quantity("published_train_flops_deepseek_v3", r"C_{\mathrm{V3}}^{\mathrm{pub}}",
                                      "FLOP/token", "training FLOPs per token DeepSeek publishes for DeepSeek-V3 "
                                      "at 4K context", value=si("250e9 FLOP/token"), source=_ISCA,
                                      display_unit="GFLOP/token")
published_train_flops_dsv2 = Quantity("published_train_flops_deepseek_v2", r"C_{\mathrm{V2}}^{\mathrm{pub}}",
                                      "FLOP/token", "training FLOPs per token DeepSeek publishes for DeepSeek-V2 "
                                      "at 4K context", value=si("155e9 FLOP/token"), source=_ISCA,
                                      display_unit="GFLOP/token")
published_train_flops_405b = Quantity("published_train_flops_llama3_405b", r"C_{\mathrm{405B}}^{\mathrm{pub}}",
                                      "FLOP/token", "training FLOPs per token DeepSeek's table gives for "
                                      "Llama 3.1 405B at 4K context", value=si("2448e9 FLOP/token"), source=_ISCA,
                                      display_unit="GFLOP/token")

# Definitions ------------------------------------------------------------------------------------------
prefill_head_dim = Definition(
    "prefill.prefill_head_dim", title="Head dimension of a prefill's attention",
    statement="A query head's scores run over the key head dimension and its weighted values over the value head "
              "dimension; in ordinary attention both are the head dimension.  Latent attention (DeepSeek-V2/V3, "
              "Kimi K2) prefills in its non-absorbed form, scores over qk_nope_head_dim + qk_rope_head_dim and "
              "values over v_head_dim, while decoding runs the absorbed form over the cached latent: a model "
              "config pins this quantity to the mean of the non-absorbed pair (160 for DeepSeek-V3), the cheaper "
              "form, so a floor stays one.",
    source=paper("deepseek-ai/FlashMLA README", "support matrix: dense MLA prefill in MHA mode with head_dim_k 192 "
                 "and head_dim_v 128; decoding in MQA mode with head_dim_k 576 and head_dim_v 512"),
    defines=prefill_head_dim_q, expr=d_head,
)
prefill_weight_flops = Definition(
    "prefill.prefill_weight_flops", title="Weight FLOPs of a prefill",
    statement="Every new token of the prompt is multiplied by every active weight, two FLOPs per weight.",
    source=paper("Kaplan et al. 2020, Scaling Laws for Neural Language Models", "table 1: C_forward = 2N"),
    defines=prefill_weight_flops_q, expr=c_fwd * N_act * ell,
)
prefill_attention_flops = Definition(
    "prefill.prefill_attention_flops", title="Causal attention FLOPs of a prefill",
    statement="With causal masking the i-th new token attends to the i tokens up to itself, so over the prompt "
              r"the query heads meet \(1 + 2 + \dots + \ell = \ell(\ell+1)/2\) context tokens, each costing "
              r"\(c_{\mathrm{attn}} = 4\) FLOPs per head dimension in every layer that attends over the whole "
              "context.",
    source=paper("Kaplan et al. 2020, Scaling Laws for Neural Language Models",
                 "table 1: attention 2·n_layer·n_ctx·d_attn per token for the scores; Hoffmann et al. 2022, "
                 "appendix F, counts the weighted sum of values alike; causal masking halves the square"),
    defines=prefill_attention_flops_q, expr=c_attn * A * ell * (ell + tau) / (2 * tau),
)


def _window_count(reach: sp.Expr) -> sp.Expr:
    """Context tokens a prompt's queries meet when each meets at most ``reach`` (a window, a top k): the causal
    triangle l(l+1)/2 less the part past the reach, m(m+1)/2 with m = l - w', w' = min(l, reach), which is
    w'(2l - w' + 1)/2, a product of two non-negative factors (z3 sees the sign)."""
    w = sp.Min(ell, reach, evaluate=False)
    return w * (2 * ell - w + tau) / (2 * tau)


_WIN_TERM = _window_count(L_win)
# the first chunk's triangle, then (C+1)/2 a token past it, less at most an eighth of a chunk's square (and never
# more than C/2 a token past the first chunk): exact within one chunk, never above the exact sum
_u_chk = sp.Min(ell, L_chunk, evaluate=False)
_CHUNK_TERM = (_u_chk * (_u_chk + tau) + (ell - _u_chk) * (L_chunk + tau)
               - sp.Min((ell - _u_chk) * L_chunk, L_chunk ** 2 / 4, evaluate=False)) / (2 * tau)
prefill_window_attention_flops = Definition(
    "prefill.prefill_window_attention_flops", title="Sliding-window attention FLOPs of a prefill",
    statement=r"A sliding-window layer's i-th new token attends to the \(\min(i, L_{\mathrm{win}})\) tokens of its "
              r"window up to itself: the causal triangle \(\ell(\ell+1)/2\) less the tokens past the window's "
              r"reach, \(m(m+1)/2\) with \(m = \max(\ell - L_{\mathrm{win}}, 0)\), at \(c_{\mathrm{attn}}\) FLOPs per "
              "query-head dimension of those layers.  A kernel that skips the blocks outside the window still "
              "computes every score inside it, so the count is one a floor may take.",
    source=paper("Beltagy et al. 2020, Longformer: The Long-Document Transformer",
                 "section 3.1: a sliding window of fixed size w around each token, O(n·w) computation"),
    defines=prefill_window_attention_flops_q, expr=c_attn * D_win * _WIN_TERM,
)
prefill_chunk_attention_flops = Definition(
    "prefill.prefill_chunk_attention_flops", title="Chunked attention FLOPs of a prefill, at least",
    statement=r"A chunked-attention layer's i-th new token attends to the tokens of its chunk up to itself, "
              r"\(((i-1) \bmod C) + 1\) of them, with \(C = L_{\mathrm{chunk}}\).  Over a prompt of "
              r"\(\ell = qC + r\) tokens they sum to \(\ell(C+1)/2 - r(C-r)/2\).  Counted: the first chunk's "
              r"triangle \(u(u+1)/2\), \(u = \min(\ell, C)\), then \((C+1)/2\) a token past it, less "
              r"\(\min(\ell - u, C/4)\, C/2\), which is at least \(r(C-r)/2\) (at most \(C^2/8\), and at most "
              r"\(rC/2\) where \(\ell - C \ge r\)): exact within one chunk, never above the exact sum (6 % below it "
              "for a 32K prompt in 8K chunks), so a floor stays one without reading the remainder.",
    source=paper("meta-llama/Llama-4-Scout-17B-16E config.json and transformers' Llama 4 attention mask",
                 "attention_chunk_size 8192: a chunked layer's causal mask stays within chunks of 8,192 tokens"),
    defines=prefill_chunk_attention_flops_q, expr=c_attn * D_chunk * _CHUNK_TERM,
)
# a query of a sparse attention attends to min(i, k) tokens (a window's count, over the top k); the indexer scores
# the i tokens before every query past the first k (a query within the first k selects them all: a server may skip
# the indexer there), the triangle's part past k, (l - v)(l + v + 1)/2 with v = min(l, k)
_w_sp = sp.Min(ell, L_top, evaluate=False)
_SPARSE_TERM = c_attn * D_sp * _window_count(L_top) + c_idx * D_idx * (ell - _w_sp) * (ell + _w_sp + tau) / (2 * tau)
prefill_sparse_attention_flops = Definition(
    "prefill.prefill_sparse_attention_flops", title="Sparse attention FLOPs of a prefill",
    statement=r"A sparse attention's i-th new token attends to the \(\min(i, k)\) tokens its indexer selects, "
              r"\(k\) = attention_topk, in every such layer: a window's count over the top k, at the prefill's "
              "head dimension (the cheaper form a kernel may run: DeepSeek-V3.2's 160, not the absorbed 544).  "
              "Its indexer scores every earlier token for each query past the first k, two FLOPs per indexer "
              "dimension; a query within the first k selects every token, so a server may skip the indexer there, "
              "and the count leaves it out.  Both are work a prefill at that k cannot skip.",
    source=paper("DeepSeek-AI 2025, DeepSeek-V3.2-Exp: Boosting Long-Context Efficiency with DeepSeek Sparse "
                 "Attention", "section 2.1: the lightning indexer scores the preceding tokens and each query "
                 "attends to the top-k of them (k = 2,048)"),
    defines=prefill_sparse_attention_flops_q, expr=_SPARSE_TERM,
)
prefill_flops = Definition(
    "prefill.prefill_flops", title="FLOPs of a prefill, attention included",
    statement="The weight multiplies plus the causal attention of one sequence's prompt: the layers attending over "
              "the whole context, the sliding-window, chunked-attention and sparse-attention layers (a linear "
              "layer's fixed-size state work is left out: it only adds work).",
    source=paper("Kaplan et al. 2020, Scaling Laws for Neural Language Models", "section 2.1, table 1"),
    defines=prefill_flops_q, expr=C_w + C_attn + C_win + C_chk + C_sp,
)
attention_crossover = Definition(
    "prefill.prefill_attention_crossover", title="Prompt length where attention matches the weights",
    statement="Twice the context at which one token's attention at the prefill's head dimension matches its "
              "weight multiplies, less one token: a prompt's average token sees about half the prompt.  Where "
              "the prefill's head dimension is the decode step's, that context is the quadratic context "
              r"\(L_{\mathrm{quad}}\).",
    source=paper("Kaplan et al. 2020, Scaling Laws for Neural Language Models",
                 "section 2.1: the context-dependent term matters once n_ctx > 12·d_model"),
    defines=attention_crossover_q, expr=2 * tau * c_fwd * N_act / (c_attn * A) - tau,
    domain=logic.gt(n_attn, 0),
)
prefill_compute_time_attn = Definition(
    "prefill.prefill_compute_time_with_attention", title="Compute time of a prefill pass with attention",
    statement="The FLOPs of all B sequences' prompts over the pooled peak FLOP/s of the chips of every pipeline "
              "stage: a pipeline passes the prompts through its stages in chunks, so all its stages can multiply at "
              "once (one stage: the chips of the scale-up domain alone).",
    source=paper("Williams et al. 2009, Roofline: an insightful visual performance model", "compute roof"),
    defines=prefill_compute_time_attn_q, expr=B * C_pre / (n * P * F),
)
# a server computes logits only where it samples: a prompt's last token
_LOGITS_AT_SAMPLES = paper("Kwon et al. 2023, Efficient Memory Management for Large Language Model Serving with "
                           "PagedAttention (vLLM)", "the logits are computed at the sampled positions only")
output_head_within_active = Assumption(
    "prefill.output_head_within_active", title="A token multiplies more than the output head",
    statement="The output head is one of the weights a token multiplies, not all of them: its attention and MLPs "
              "are the others.",
    source=derived("a decoder's layers precede its output head"),
    relation=logic.lt(H, N_act),
)
served_prefill_flops = Definition(
    "prefill.served_prefill_flops", title="FLOPs of a served prefill",
    statement="A prefill's FLOPs as a server does them: the output head multiplies the last prompt token only, "
              "where the first output token is sampled (training computes logits at every token, and "
              "prefill_flops counts them so).  For Llama 3 8B's 512-token prompt the difference is 2 x 525M x 511 "
              "FLOPs, 7 % of the pass; for a small model with a large vocabulary, most of it.",
    source=_LOGITS_AT_SAMPLES,
    defines=served_prefill_flops_q, expr=C_pre - c_fwd * H * (ell - tau),
)
prefill_floor_compute_time = Definition(
    "prefill.prefill_floor_compute_time", title="Compute time a prefill pass cannot skip",
    statement="The pass's multiplies, attention included, less the output head's for every prompt token but the "
              "last: a server needs logits only where it samples, the last prompt token of each sequence (vLLM, "
              "SGLang and TensorRT-LLM compute no others by default), so a floor leaves the others out.  For a "
              "small model with a large vocabulary the head is a large share of the active weights (Gemma 3 "
              "270M: 168M of 268M).  A sparse attention's work (its selected tokens and its indexer) is left out "
              "too: it only adds to the multiplies, and a floor may count less than a pass does.",
    source=_LOGITS_AT_SAMPLES,
    defines=prefill_floor_compute_time_q, expr=B * (C_pre - C_sp - c_fwd * H * (ell - tau)) / (n * P * F),
)
prefill_memory_time = Definition(
    "prefill.prefill_memory_time", title="Memory time of a prefill pass",
    statement="At least the weights every token multiplies are read once (a short prompt of a mixture of "
              "experts reaches only some experts, so only these are sure to be read; a long one reads them "
              "all); each new token's KV cache is written once (scores stay on chip with flash attention), over "
              "the chips of every pipeline stage, which work on chunks of the prompts at once.  And the chunk "
              "holding the last prompt token passes through the stages one after the other, each reading its "
              "share of those weights over its own chips: at least one read of them over one stage's chips.",
    source=paper("Dao et al. 2022, FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness",
                 "section 3.1: the score matrix is never written to HBM"),
    defines=prefill_memory_time_q,
    expr=sp.Max(N_act * q / (n * W), (N_act * q + B * ell * k) / (n * P * W), evaluate=False),
)
ttft_floor = Definition(
    "prefill.ttft_floor", title="Time-to-first-token floor of a whole prefill pass",
    statement="A prefill pass of the batch's prompts together can be no faster than the slower of the multiplies "
              "it cannot skip and its memory traffic; their first tokens come out of it.  One request's own floor, "
              "whatever the server batches with it, is request_ttft_floor.",
    source=paper("Williams et al. 2009, Roofline: an insightful visual performance model", "roofline bound"),
    defines=ttft_floor_q, expr=sp.Max(t_cf, t_pm, evaluate=False),
)
compute_bound_tokens = Definition(
    "prefill.prefill_compute_bound_tokens", title="Tokens that make a prefill compute-bound",
    statement="Where the weight multiplies of the pass's tokens (the output head left out: a server runs it on "
              "each sequence's last token only) outlast the weight read and the KV writes.",
    source=paper("Agrawal et al. 2024, Taming Throughput-Latency Tradeoff in LLM Inference with Sarathi-Serve "
                 "(OSDI '24)", "section 2: prefill is compute-bound, decode memory-bound"),
    defines=compute_bound_tokens_q, expr=N_tot * q * F / (c_fwd * (N_act - H) * W - k * F),
    domain=logic.gt(c_fwd * (N_act - H) * W, k * F),
)
chunk_budget = Definition(
    "prefill.prefill_chunk_budget", title="Prefill chunk a decode step can carry",
    statement="The chunk c whose weight multiplies, with the decode batch's, just fill the step's memory time "
              "(weights, the decode batch's KV reads and the chunk's KV writes).  The decode tokens are sampled, "
              "so each multiplies the output head; the chunk's tokens are not, so theirs leave it out (a chunk "
              "that ends its prompt samples one token more, one token's multiplies).  For a small model with a "
              "large vocabulary the head is much of the active weights (Gemma 3 270M: 168M of 268M), so a budget "
              "that counted it for every chunk token would be a fraction of the real one.",
    source=paper("Agrawal et al. 2024, Taming Throughput-Latency Tradeoff in LLM Inference with Sarathi-Serve "
                 "(OSDI '24)", "section 4: chunked prefills within a token budget per iteration"),
    defines=chunk_budget_q,
    expr=((N_tot * q + B * S_kv) * F - c_fwd * N_act * B * tau * W) / (c_fwd * (N_act - H) * W - k * F),
    domain=logic.gt(c_fwd * (N_act - H) * W, k * F),
)
train_flops_causal = Definition(
    "prefill.train_flops_per_token_causal", title="Training FLOPs per token with causal attention",
    statement="The forward FLOPs of a sequence, per token, times the ratio of training to forward FLOPs "
              "(the backward pass costs twice the forward).",
    source=paper("Kaplan et al. 2020, Scaling Laws for Neural Language Models",
                 "section 2.1: the backward pass is about twice the forward"),
    defines=train_flops_causal_q, expr=(c_train / c_fwd) * C_pre / ell,
)

# Claims -----------------------------------------------------------------------------------------------
prefill_flops_ge_weight_flops = Claim(
    "prefill.prefill_flops_ge_weight_flops", title="Attention only adds to a prefill's FLOPs",
    statement="A prefill's FLOPs are never below the weight multiplies the lecture counts, and exceed them by "
              "a term quadratic in the prompt (the sliding-window, chunked and sparse layers' own attention grows "
              "linearly once the prompt passes their window, chunk or top k; a sparse attention's indexer stays "
              "quadratic).",
    source=paper("Kaplan et al. 2020, Scaling Laws for Neural Language Models", "table 1"),
    goal=logic.And((logic.ge(C_pre, C_w), logic.eq(C_pre - C_w, c_attn * A * ell * (ell + tau) / (2 * tau)
                                                   + c_attn * D_win * _WIN_TERM + c_attn * D_chunk * _CHUNK_TERM
                                                   + _SPARSE_TERM))),
)
attention_dominates_iff = Claim(
    "prefill.attention_dominates_iff", title="Attention dominates a prefill past twice the quadratic context",
    label="Attention crossover",
    statement="A prefill's causal attention FLOPs reach its weight FLOPs exactly when the prompt has at least "
              r"\(\ell_{\mathrm{attn}}\) tokens, twice the context at which one token's attention matches its "
              r"weight multiplies, less one token (\(2 L_{\mathrm{quad}} - \tau\) where the prefill's head "
              "dimension is the decode step's), in a model with at least one layer attending over the whole context.",
    source=paper("Kaplan et al. 2020, Scaling Laws for Neural Language Models", "section 2.1"),
    hypotheses=(logic.gt(n_attn, 0),),
    goal=logic.Iff(logic.ge(C_attn, C_w), logic.ge(ell, ell_attn)),
    steps=(
        Step(logic.ge(C_attn, C_w), "suppose attention does at least the weights' work", link="iff"),
        Step(logic.ge(c_attn * A * ell * (ell + tau) / (2 * tau), c_fwd * N_act * ell), "substitute both counts",
             link="iff"),
        Step(logic.ge(ell + tau, 2 * tau * c_fwd * N_act / (c_attn * A)),
             r"divide by the positive \(\ell\, c_{\mathrm{attn}} A/(2\tau)\)", link="iff"),
        Step(logic.ge(ell, 2 * tau * c_fwd * N_act / (c_attn * A) - tau), r"subtract \(\tau\)", link="iff"),
    ),
)
prefill_compute_bound = Claim(
    "prefill.prefill_compute_bound", title="A long enough prefill is compute-bound", label="Prefill compute-bound",
    statement="If the pass's new tokens are at least \\(N_{\\mathrm{cb}}\\) for each pipeline stage (and a token's "
              "weight multiplies, the output head left out, outlast writing its KV), the time to first token is the "
              "compute time the pass cannot skip, attention included: even a pass that reads every weight of the "
              "model is compute-bound there.  A pipeline of P stages needs P times the tokens of one stage, since "
              "the last prompt token still reads every stage's weights one stage after another.",
    source=paper("Agrawal et al. 2024, Taming Throughput-Latency Tradeoff in LLM Inference with Sarathi-Serve "
                 "(OSDI '24)", "section 2"),
    hypotheses=(logic.gt(c_fwd * (N_act - H) * W, k * F), logic.ge(B * ell, P * N_cb), logic.le(N_act, N_tot)),
    goal=logic.eq(T_ttft, t_cf),
    steps=(
        Step(logic.ge(B * ell * (c_fwd * (N_act - H) * W - k * F), P * N_tot * q * F),
             r"multiply the hypothesis by the positive \(c_{\mathrm{fwd}} (N_{\mathrm{act}} - N_{\mathrm{head}}) W "
             r"- k F\)", link="implies"),
        Step(logic.And((logic.ge(c_fwd * (N_act - H) * B * ell / (n * P * F),
                                 (N_tot * q + B * ell * k) / (n * P * W)),
                        logic.ge(c_fwd * (N_act - H) * B * ell / (n * P * F), N_tot * q / (n * W)))),
             "rearrange, with at least one stage: the weight multiplies outlast the memory traffic, and the last "
             "token's pass through the stages' weights", link="implies"),
        Step(logic.ge(c_fwd * (N_act - H) * B * ell / (n * P * F), t_pm),
             "the pass reads at least one token's active weights and at most every weight", link="implies"),
        Step(logic.And((logic.ge(t_cf, c_fwd * (N_act - H) * B * ell / (n * P * F)),
                        logic.ge(c_fwd * (N_act - H) * B * ell / (n * P * F), t_pm))),
             "attention and the last tokens' output head only add compute", link="implies"),
        Step(logic.eq(T_ttft, t_cf), "the roofline takes the larger", link="implies"),
    ),
    uses=(prefill_flops_ge_weight_flops,),
)
ttft_floor_ge_weight_fetch = Claim(
    "prefill.ttft_floor_ge_weight_fetch", title="No first token before the weights are read", label="TTFT floor",
    statement="However short the prompt, the time to first token is at least the time to read the weights "
              "every token multiplies (one token's active weights) once over the pooled HBM bandwidth.",
    source=paper("Williams et al. 2009, Roofline: an insightful visual performance model", "roofline bound"),
    goal=logic.ge(T_ttft, t_w),
)
ttft_floor_ge_lecture_prefill = Claim(
    "prefill.ttft_floor_ge_lecture_prefill", title="The TTFT floor is above the lecture's prefill compute",
    statement="Counting attention can only lengthen a prefill: the time to first token is at least the "
              "lecture's prefill compute time, which leaves attention out, shared by the pipeline's stages (on one "
              "stage, the lecture's time itself), less the output head's multiplies of every prompt token but the "
              "last, which the lecture counts and a server skips (none where the head is not counted apart, as in "
              "the lecture's model).",
    source=paper("Kaplan et al. 2020, Scaling Laws for Neural Language Models", "table 1"),
    goal=logic.ge(T_ttft, (t_cp_lecture - c_fwd * H * B * (ell - tau) / (n * F)) / P),
    uses=(prefill_flops_ge_weight_flops,),
)
chunk_memory_bound_iff = Claim(
    "prefill.chunk_memory_bound_iff", title="A decode step carries a prefill chunk up to the chunk budget",
    label="Chunk budget",
    statement="A decode step of B sequences that also runs c prefill tokens (the output head on the sampled "
              "decode tokens only) keeps its weight multiplies within its memory time (weights, KV reads, the "
              "chunk's KV writes) exactly when c is at most the chunk budget \\(c^{*}\\).",
    source=paper("Agrawal et al. 2024, Taming Throughput-Latency Tradeoff in LLM Inference with Sarathi-Serve "
                 "(OSDI '24)", "section 4: stall-free batching"),
    hypotheses=(logic.gt(c_fwd * (N_act - H) * W, k * F),),
    goal=logic.Iff(logic.le(c_fwd * (N_act * B * tau + (N_act - H) * c_chunk) / (n * F),
                            (N_tot * q + B * S_kv + c_chunk * k) / (n * W)),
                   logic.le(c_chunk, c_star)),
    steps=(
        Step(logic.le(c_fwd * (N_act * B * tau + (N_act - H) * c_chunk) / (n * F),
                      (N_tot * q + B * S_kv + c_chunk * k) / (n * W)),
             "the mixed step's multiplies within its memory time", link="iff"),
        Step(logic.le(c_chunk * (c_fwd * (N_act - H) * W - k * F),
                      (N_tot * q + B * S_kv) * F - c_fwd * N_act * B * tau * W),
             r"multiply by \(n F W\) and collect the chunk's terms", link="iff"),
        Step(logic.le(c_chunk, c_star),
             r"divide by the positive \(c_{\mathrm{fwd}} (N_{\mathrm{act}} - H) W - k F\)", link="iff"),
    ),
)

# A measured time to first token (derive audit's ttft column) ----------------------------------------------
# One request's prompt alone, weights only: attention is left out (it only adds work, and which form a kernel
# runs, absorbed or not, is the serving stack's choice), so the bound holds whatever the attention and the
# audit can evaluate it from a row's base quantities.
request_sequences = Quantity("request_sequences", r"b_{\mathrm{req}}", "seq", "sequences one request prefills",
                             value=1, source=derived("a request is one sequence"))
measured_ttft = Quantity("measured_ttft", r"T_{\mathrm{TTFT}}^{\mathrm{meas}}", "s",
                         "a measured time to first token of one request: from its arrival to its first output token",
                         display_unit="ms")
request_ttft_floor_q = Quantity("request_ttft_floor", r"T_{\mathrm{TTFT}}^{\mathrm{req}}", "s",
                                "floor on one request's time to first token: its prompt's weight multiplies, or "
                                "reading its active weights once and writing its KV, whichever is slower",
                                display_unit="ms")
b_req, T_ttft_meas, T_req = request_sequences.sym, measured_ttft.sym, request_ttft_floor_q.sym
# the request's two roofline sides over its replica's chips (n a stage's, P stages, which a pipeline keeps busy at
# once on chunks of the prompt): its prompt's weight multiplies, and its weight read plus KV write, the read at
# least once over one stage's chips (the last prompt token passes through the stages one after the other)
# the output head multiplies the last prompt token only: a server computes no other logits
_req_compute = c_fwd * ((N_act - H) * ell + H * tau) * b_req / (n * P * F)
_req_memory = sp.Max(N_act * q / (n * W), (N_act * q + b_req * ell * k) / (n * P * W), evaluate=False)
request_ttft_floor = Definition(
    "prefill.request_ttft_floor", title="Floor on one request's time to first token",
    statement="However a server batches, one request's first token comes out of a prefill of its own prompt: "
              "at least its tokens' weight multiplies (the output head's for its last token only) at the peak "
              "FLOP/s of its replica's chips (every pipeline stage's), and at least one read of the weights a token "
              "multiplies plus one write of the prompt's KV "
              "cache at their peak bandwidth, the read at least once over one stage's chips, since the last prompt "
              "token passes through the stages one after the other.",
    source=paper("Williams et al. 2009, Roofline: an insightful visual performance model", "roofline bound"),
    defines=request_ttft_floor_q,
    expr=sp.Max(_req_compute, _req_memory, evaluate=False),
)
prefill_does_its_flops = Assumption(
    "prefill.prefill_does_its_flops", title="A measured prefill does its prompt's multiplies",
    statement="A request's first token needs every prompt token it prefills multiplied by every active weight "
              "but the output head, and its last token by the head too (2 FLOPs each), at no more than the peak "
              "FLOP/s of the replica's chips, the chips of every pipeline "
              "stage.  A prompt prefix served from a cache is not prefilled: prefill_tokens counts the tokens that "
              "are.",
    source=paper("Williams et al. 2009, Roofline: an insightful visual performance model", "applied to a prefill"),
    relation=logic.ge(T_ttft_meas, _req_compute),
)
prefill_reads_its_bytes = Assumption(
    "prefill.prefill_reads_its_bytes", title="A measured prefill reads its weights and writes its KV",
    statement="A request's prefill reads at least the weights one token multiplies once, and writes its prompt's "
              "KV cache once, at no more than the peak bandwidth of the replica's chips (every pipeline stage's); "
              "and the last prompt token passes through the stages one after the other, each reading its share of "
              "those weights over its own chips.",
    source=paper("Dao et al. 2022, FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness",
                 "section 3.1: scores stay on chip, so the KV written and the weights read are the least traffic"),
    relation=logic.ge(T_ttft_meas, _req_memory),
)
ttft_floor_below_measured = Claim(
    "prefill.ttft_floor_below_measured", title="A measured time to first token is at least the request's floor",
    label="Measured TTFT floor",
    statement="Whatever the batching and the scheduling, a measured time to first token is at least the floor of "
              "its request's own prefill; a measurement below it contradicts one of the two assumptions it rests "
              "on (a cached prefix counted as prefilled, weights narrower than stated, a slower chip quoted).",
    source=paper("Williams et al. 2009, Roofline: an insightful visual performance model",
                 "a lower bound; derive audit holds a table's ttft column to it"),
    goal=logic.ge(T_ttft_meas, T_req),
    uses=(prefill_does_its_flops, prefill_reads_its_bytes),
)
request_floor_head_every_token_false_twin = Claim(
    "prefill.request_floor_head_every_token_false_twin",
    title="False twin: a request's floor is its prompt times every active weight",
    statement="One request's time-to-first-token floor would be at least its prompt's tokens multiplied by every "
              "active weight, the output head included, at the peak FLOP/s of its chips: false wherever the head "
              "is counted apart and the prompt is longer than one token, since a server runs the head on the last "
              "token only (for Gemma 3 270M the head is 168M of its 268M multiplied weights, so such a floor could "
              "sit above a measurement).",
    source=_LOGITS_AT_SAMPLES,
    goal=logic.ge(T_req, c_fwd * N_act * b_req * ell / (n * P * F)),
    uses=(output_head_within_active,), expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of prefill.request_ttft_floor's compute side.",
)

# Worked examples against published training FLOPs (the models pinned by hypotheses) --------------------
def _pinned(active: str, attn_layers: int, heads: int, dim: int, length: int) -> tuple:
    # every layer attends over the whole context: no sliding-window, chunked or sparse layer
    return (logic.eq(N_act, si(active)), logic.eq(n_attn, attn_layers), logic.eq(n_q, heads),
            logic.eq(d_head, dim), logic.eq(ell, si(f"{length} token/seq")), logic.eq(D_win, 0),
            logic.eq(D_chunk, 0), logic.eq(D_sp, 0), logic.eq(D_idx, 0))


_FORALL = (params_active, global_attention_layers, query_heads, head_dim, prefill_tokens, window_attention_dims,
           chunk_attention_dims, sparse_attention_dims, indexer_dims)
_DSV3 = _pinned("37e9 param", 61, 128, 160, 4096)
_DSV2 = _pinned("21e9 param", 60, 128, 160, 4096)
_L405 = _pinned("405e9 param", 126, 128, 128, 4096)

six_n_low_deepseek_v3 = Claim(
    "prefill.six_n_low_deepseek_v3", title="6N alone is 12 % low for DeepSeek-V3 at 4K",
    statement="For DeepSeek-V3 (37B active parameters) 6N gives 222 GFLOP per token; the published 250 GFLOP "
              "per token at 4K context is more than 12 % above it.",
    source=_ISCA,
    hypotheses=_DSV3,
    goal=logic.ge(published_train_flops_dsv3.sym, sp.Rational(112, 100) * c_train * N_act),
    instance=True, forall=_FORALL,
)
train_flops_deepseek_v3 = Claim(
    "prefill.train_flops_deepseek_v3", title="With causal attention, DeepSeek-V3 at 4K is 250 GFLOP per token",
    statement="61 layers of 128 heads whose score and value dimensions average 160, over a 4,096-token sequence "
              "with causal masking, add about 31 GFLOP per token to 6N: the count is within 2 % of the "
              "published 250.",
    source=_ISCA,
    hypotheses=_DSV3,
    goal=logic.within_percent(C_train_tok, published_train_flops_dsv3.sym, 2),
    instance=True, forall=_FORALL,
    uses=(six_n_low_deepseek_v3,),
    notes="MLA's non-absorbed prefill form: score head dimension 128 + 64 = 192, value 128 "
          "(deepseek-ai/DeepSeek-V3 config.json: qk_nope_head_dim, qk_rope_head_dim, v_head_dim).",
)
train_flops_deepseek_v2 = Claim(
    "prefill.train_flops_deepseek_v2", title="DeepSeek-V2 at 4K: within 2 % of the published 155 GFLOP",
    statement="21B active parameters, 60 layers of 128 heads (score and value dimensions 192 and 128), 4,096 "
              "tokens: 6N plus causal attention is within 2 % of the published 155 GFLOP per token.",
    source=_ISCA,
    hypotheses=_DSV2,
    goal=logic.within_percent(C_train_tok, published_train_flops_dsv2.sym, 2),
    instance=True, forall=_FORALL,
    notes="deepseek-ai/DeepSeek-V2 config.json: num_hidden_layers 60, num_attention_heads 128.",
)
train_flops_llama3_405b = Claim(
    "prefill.train_flops_llama3_405b", title="Llama 3.1 405B at 4K: within 2 % of the published 2,448 GFLOP",
    statement="405B parameters, 126 layers of 128 heads of dimension 128, 4,096 tokens: 6N plus causal "
              "attention is within 2 % of the 2,448 GFLOP per token in DeepSeek's table.",
    source=_ISCA,
    hypotheses=_L405,
    goal=logic.within_percent(C_train_tok, published_train_flops_405b.sym, 2),
    instance=True, forall=_FORALL,
    notes="meta-llama/Llama-3.1-405B config.json: num_hidden_layers 126, num_attention_heads 128, head_dim 128.",
)
train_flops_deepseek_v3_full_square = Claim(
    "prefill.train_flops_deepseek_v3_full_square", title="Without the causal mask the count overshoots",
    statement="Counting the full square of attention (every token meeting all 4,096) instead of the causal "
              "triangle puts DeepSeek-V3 more than 10 % above the published 250 GFLOP per token: the mask is "
              "what makes the count agree.",
    source=_ISCA,
    hypotheses=_DSV3,
    goal=logic.within_percent((c_train / c_fwd) * (c_fwd * N_act * ell + c_attn * A * ell * ell / tau) / ell,
                              published_train_flops_dsv3.sym, 10),
    instance=True, forall=_FORALL,
    expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of prefill.train_flops_deepseek_v3: the full square gives about 283 GFLOP.",
)

# The chapter's argument, for part II of the documents (placeholders: derive.model.prose) ----------------
PROSE = (
    r"The lecture prices a prefill pass as a decode step with \(\ell\) new tokens per sequence and no "
    r"attention.  With causal masking the \(i\)-th token of a prompt meets the \(i\) tokens up to itself, so "
    r"attention adds \(c_{\mathrm{attn}} A\,\ell(\ell+1)/2\) FLOPs to the \(2 N_{\mathrm{act}} \ell\) of the "
    "weights, where A sums the query-head dimensions of the layers that attend over the whole context.",
    "{{result:attention_dominates_iff}}",
    "A decode step meets its attention at the quadratic context, {{value:quadratic_context}} under the scenario; "
    "a prompt at about twice that.  Below it, a prefill's time is set by the weights: read once, multiplied by "
    "every token.  Enough tokens make the pass compute-bound.",
    "{{result:prefill_compute_bound}}",
    "Under the scenario that takes {{value:prefill_compute_bound_tokens}} in one pass.  Whatever the prompt, the "
    "first token cannot come before the weights are read, nor before the lecture's own prefill compute.",
    "{{result:ttft_floor_ge_weight_fetch}}",
    "A decode step, memory-bound, has room for prefill multiplies beside it; how many tokens is the chunk "
    "budget, {{value:prefill_chunk_budget}} for the scenario's batch and context.",
    "{{result:chunk_memory_bound_iff}}",
    "Training counts the same attention three times (forward and a backward twice as costly).  DeepSeek "
    "publishes 250 GFLOP per token for DeepSeek-V3 at 4K context, 12 % above 6N; the causal term closes the gap "
    "to within 2 %, and the full square would overshoot by 13 %.",
)
