"""The config reader as formulas, for the live page: the plain decoder families only.

``model_values`` (``reader``) is Python code; a browser cannot run it.  For the families whose layers are all
alike and fully given by standard fields (dense Llama, Mistral, Qwen2, Qwen3, and Phi-3, OLMo 2, GLM-4, Granite,
Seed-OSS with Llama's tensors; Mixtral; Qwen2-MoE and Qwen3-MoE),
every quantity the reader gives is closed-form in a few fields of the file.  ``LIVE_CONFIG_FORMULAS`` states
those forms as data (the format is ``derive.model.config_formulas``'): each field with its bounds, aliases and
default exactly as the Python reader applies them, and each value as a sympy expression over symbols named
after the fields.  ``derive build --format html`` prints them with sympy's JavaScript printer, and the live page
reads a pasted ``config.json`` with them.

What they do not cover is refused, never approximated: a sliding window that applies (Mistral's
``sliding_window``, Qwen's ``use_sliding_window``), ``layer_types``, dense-only layers (``mlp_only_layers``),
latent attention, quantized weights (``quantization_config``), a mixture of experts with tied embeddings (the
reader counts its skipped experts itself), and a file that names no datatype (the Python
reader then falls back on the chip's KV datatype, a rule of the scenario, not of the file).  The page sends
those to ``derive card --model config.json``.  tests/test_live_config_formulas.py holds every formula to the
Python reader, exactly, on every fixture config of these types.  ``SERVING_LIVE_CONFIG_FORMULAS`` is the
serving library's: the same readings, with the MoE layers and the dispatch datatype its all-to-all reads.
"""

from __future__ import annotations

import sympy as sp

from . import dense, llama_like, mixtral, qwen_moe
from .base import MAX_LAYERS, MAX_SIZE, SERVED_BYTES

d, n, vocab, tie, heads, kv_heads, head_dim, e, ctx = sp.symbols(
    "hidden_size num_hidden_layers vocab_size tie_word_embeddings num_attention_heads num_key_value_heads head_dim "
    "torch_dtype max_position_embeddings")
width, experts, active, step, moe_width, shared_width = sp.symbols(
    "intermediate_size num_local_experts num_experts_per_tok decoder_sparse_step moe_intermediate_size "
    "shared_expert_intermediate_size")
qwen_experts = sp.Symbol("num_experts")
kv_element = sp.Symbol("bytes_per_kv_element")  # the reader's argument: the file's datatype unless the user gives one


def _whole(maximum: int = MAX_SIZE, **extra: object) -> dict:
    return {"min": 1, "max": maximum, **extra}


# the fields every family here reads, in the order (and with the defaults) of reader._analyse_as and base.gqa
COMMON_FIELDS = {
    "hidden_size": _whole(),
    "num_hidden_layers": _whole(MAX_LAYERS, aliases=["n_layer"]),
    "vocab_size": _whole(),
    "tie_word_embeddings": {"flag": True, "default": 0},  # transformers' default for these types: untied
    "num_attention_heads": _whole(aliases=["n_head"]),
    "num_key_value_heads": _whole(aliases=["num_kv_heads", "n_head_kv"], default=heads),  # absent: multi-head
    "head_dim": _whole(default=d / heads),  # absent: hidden_size / num_attention_heads, a whole number
    # the datatype: bytes per weight and per cached element (precision.dtype); required here, see above
    "torch_dtype": {"choices": dict(SERVED_BYTES), "strip": "torch.", "aliases": ["dtype"]},
    "max_position_embeddings": _whole(optional=True),
    "sliding_window": _whole(optional=True),  # read and checked by every family, placed only by a window pattern
}
# fields that would change the layer structure or the precision: refused unless absent (or one of these values)
OUTSIDE = {"layer_types": [None], "kv_lora_rank": [None], "index_head_dim": [None], "quantization_config": [None]}
CHECKS = [(sp.Eq(sp.Mod(heads, kv_heads), 0), "num_attention_heads must be a multiple of num_key_value_heads")]
ATTENTION = n * (d * heads * head_dim + 2 * d * kv_heads * head_dim + heads * head_dim * d)  # q, k and v, o
EMBEDDING = vocab * d
LM_HEAD = vocab * d * (1 - tie)


ZERO = sp.Integer(0)


def _values(mlp: sp.Expr, routed: sp.Expr = ZERO, routed_active: sp.Expr = ZERO, router: sp.Expr = ZERO,
            **moe: sp.Expr) -> dict:
    """Every value ``model_values`` gives for an all-full-attention model, in SI units."""
    total = EMBEDDING + LM_HEAD + ATTENTION + mlp + routed + router
    zero = ZERO
    return {
        "params_total": total,
        # without the input embedding (a lookup), the output head kept; routed experts a token skips left out
        "params_active": total - routed + routed_active - LM_HEAD,
        "params_embedding": EMBEDDING,
        "params_output_head": EMBEDDING,  # vocab x d: the head's own matrix or the tied embedding, the same size
        "layers": n,
        "kv_bytes_per_token": 2 * kv_heads * head_dim * n * kv_element,
        "kv_window_bytes_per_token": zero, "attention_window": zero, "kv_chunk_bytes_per_token": zero,
        "attention_chunk": zero, "kv_state_bytes": zero, "per_layer_row_params": zero,
        "kv_sparse_bytes_per_token": zero, "attention_topk": zero,
        "window_attention_dims": zero, "chunk_attention_dims": zero, "sparse_attention_dims": zero,
        "indexer_dims": zero,
        "bytes_per_kv_element": kv_element, "bytes_per_param": e, "d_model": d,
        "context": ctx, "max_context": ctx,
        "head_dim": head_dim, "kv_heads": kv_heads, "query_heads": heads, "token_activation_bytes": 2 * d,
        "kv_cache_layers": n, "global_attention_layers": n,
        **moe,
    }


def _reading(family: object, fields: dict, values: dict, outside: dict, checks: list) -> dict:
    return {"fields": {**COMMON_FIELDS, **fields}, "values": values,
            "native": ["bytes_per_param", "bytes_per_kv_element", "context"],
            # model_values(bytes_per_kv_element=...): a KV element size the user gives wins over the datatype
            "arguments": {"bytes_per_kv_element": e},
            "checks": CHECKS + checks, "absent": {**OUTSIDE, **outside},
            "names": {"architectures": sorted(family.architectures)}}


(DENSE,), (MIXTRAL,), (QWEN_MOE,) = dense.FAMILIES, mixtral.FAMILIES, qwen_moe.FAMILIES
LLAMA_LIKE = llama_like.FAMILIES[0]

# one gated MLP (gate, up, down) per layer: one expert that every token uses, as the Python reader says
_dense = _values(n * 3 * d * width, experts_total=sp.Integer(1), experts_active=sp.Integer(1))
_mixtral_routed = n * experts * 3 * d * width
_mixtral = _values(ZERO, routed=_mixtral_routed, routed_active=n * active * 3 * d * width,
                   router=n * d * experts, experts_total=experts, experts_active=active)
_moe_layers = sp.floor(n / step)  # layers i with (i + 1) % decoder_sparse_step == 0 (base.count_every)
_shared = sp.Piecewise((0, sp.Eq(shared_width, 0)), (_moe_layers * (3 * d * shared_width + d), True))  # + its gate
_qwen_routed = _moe_layers * qwen_experts * 3 * d * moe_width
_qwen_moe = _values((n - _moe_layers) * 3 * d * width + _shared, routed=_qwen_routed,
                    routed_active=_moe_layers * active * 3 * d * moe_width, router=_moe_layers * d * qwen_experts,
                    experts_total=qwen_experts, experts_active=active)

_dense_fields = {"intermediate_size": _whole()}
# a tied mixture of experts: the Python reader counts the routed weights a token skips itself (total - input
# embedding - active would leave out the tied head), a value these formulas do not give, so the page refuses it
_untied = (sp.Eq(tie, 0), "tie_word_embeddings must be false in a mixture of experts read here (the command "
                          "line counts a tied one's skipped experts)")
_experts_checks = [(sp.Le(active, experts), "num_experts_per_tok must be at most num_local_experts"), _untied]
_mixtral_fields = {"intermediate_size": _whole(), "num_local_experts": _whole(aliases=["num_experts"]),
                   "num_experts_per_tok": _whole()}
_qwen_fields = {"num_experts": _whole(aliases=["num_local_experts"]), "num_experts_per_tok": _whole(),
                "moe_intermediate_size": _whole(), "decoder_sparse_step": _whole(default=1),
                "shared_expert_intermediate_size": {"min": 0, "max": MAX_SIZE, "default": 0},
                # the dense layers' width: the Python reader needs it only when some layer is dense; required here
                "intermediate_size": _whole()}
_qwen_checks = [(sp.Le(active, qwen_experts), "num_experts_per_tok must be at most num_experts"),
                (sp.Le(step, n), "decoder_sparse_step larger than num_hidden_layers leaves no MoE layer"), _untied]
# a window applies: Mistral and Mixtral window every layer when sliding_window is set, Qwen with use_sliding_window
_window = {"sliding_window": [None]}
_qwen_window = {"use_sliding_window": [None, False]}
# two spellings of the experts per token, which the Python reader holds to each other
_one_spelling = {"experts_per_token": [None]}

LIVE_CONFIG_FORMULAS = {
    "llama": _reading(DENSE, _dense_fields, _dense, {}, []),
    "mistral": _reading(DENSE, _dense_fields, _dense, _window, []),
    "qwen2": _reading(DENSE, _dense_fields, _dense, _qwen_window, []),
    "qwen3": _reading(DENSE, _dense_fields, _dense, _qwen_window, []),
    # Llama's tensors under their own type, untied by default, every layer full (Phi-3 windows every layer when
    # sliding_window is set: refused here, as Mistral's)
    "phi3": _reading(LLAMA_LIKE, _dense_fields, _dense, _window, []),
    "olmo2": _reading(LLAMA_LIKE, _dense_fields, _dense, {}, []),
    "glm4": _reading(LLAMA_LIKE, _dense_fields, _dense, {}, []),
    "granite": _reading(LLAMA_LIKE, _dense_fields, _dense, {}, []),
    "seed_oss": _reading(LLAMA_LIKE, _dense_fields, _dense, {}, []),
    "mixtral": _reading(MIXTRAL, _mixtral_fields, _mixtral, {**_window, **_one_spelling}, _experts_checks),
    "qwen2_moe": _reading(QWEN_MOE, _qwen_fields, _qwen_moe,
                          {**_qwen_window, **_one_spelling, "mlp_only_layers": [None, []]}, _qwen_checks),
    "qwen3_moe": _reading(QWEN_MOE, _qwen_fields, _qwen_moe,
                          {**_qwen_window, **_one_spelling, "mlp_only_layers": [None, []]}, _qwen_checks),
}

# the serving library's reading adds what an expert-parallel all-to-all carries (theorems.serving.network): the
# MoE layers and the dispatch datatype, BF16 here (2 bytes: quantization_config, the file's only FP8 marker, is
# refused above), as the Python reader gives them for these types
# and the routed experts' parameters a layout spreads over expert parallelism (0 for a dense model)
_EXPERT_PARALLEL = {"mixtral": {"moe_layers": n, "params_routed": _mixtral_routed},
                    "qwen2_moe": {"moe_layers": _moe_layers, "params_routed": _qwen_routed},
                    "qwen3_moe": {"moe_layers": _moe_layers, "params_routed": _qwen_routed}}
SERVING_LIVE_CONFIG_FORMULAS = {
    name: {**reading, "values": {**reading["values"], **_EXPERT_PARALLEL[name],
                                 "dispatch_bytes_per_element": sp.Integer(2)}}
    if name in _EXPERT_PARALLEL else {**reading, "values": {**reading["values"], "params_routed": ZERO}}
    for name, reading in LIVE_CONFIG_FORMULAS.items()}
