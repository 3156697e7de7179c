"""IBM Granite families with a shared MLP: the Granite 4 hybrids and the Granite MoE with shared experts.

Granite 4 hybrids (``granitemoehybrid``: Granite-4.0-H-Small, H-Tiny, H-Micro): each layer is a Mamba-2 layer
or a grouped-query attention layer, as ``layer_types`` lists them (``"mamba"`` / ``"attention"``, or transformers'
newer ``"linear_attention"`` / ``"full_attention"``), and every layer has a feed-forward part of its own
(transformers' ``GraniteMoeHybridDecoderLayer``).

The feed-forward part is a shared gated MLP of ``shared_intermediate_size`` (always there, used by every token)
plus, when ``num_local_experts`` > 0, a mixture of ``num_local_experts`` gated experts of ``intermediate_size``
with ``num_experts_per_tok`` per token and a router.  With no experts (H-Micro) the shared MLP is the dense MLP.
The Mamba-2 layer (``ssm.mamba2``) has ``mamba_expand * hidden_size`` channels in ``mamba_n_heads`` heads of
``mamba_d_head`` (``"auto"``: channels / heads; transformers refuses any other product), ``mamba_n_groups``
groups, ``mamba_d_state`` and ``mamba_d_conv``.  A file without ``layer_types`` is all Mamba-2, as transformers'
config class makes it (noted).  Attention uses no positional encoding (``position_embedding_type`` "nope"), which
changes no shape.

Granite MoE with shared experts (``granitemoeshared``: ibm-research/moe-7b-1b-active-shared-experts, the test model
transformers' documentation names; ``modular_granitemoeshared.py``): Granite MoE's layers (``granitemoe``, read in
``llama_like``: grouped-query attention and in every layer ``num_local_experts`` gated experts of
``intermediate_size``, ``num_experts_per_tok`` per token, and a router) plus, when ``shared_intermediate_size`` is
not 0, a shared gated MLP of that width in every layer (``GraniteMoeSharedMLP``: ``input_linear`` to twice the width,
gate and up, and ``output_linear``).  ``shared_intermediate_size`` absent is transformers' default 0: no shared MLP
(noted).  The multipliers (embedding, attention, residual, logits) set no shape.
"""

from __future__ import annotations

from dataclasses import replace

from . import ssm
from .base import Family, Fields, LayerKinds, Linear, Mlp, experts_per_token, gated, routed
from .mixtral import every_layer_moe


def _pattern(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    f.notes.append(f"'layer_types' absent: every layer Mamba-2 (transformers' {mtype} default)")
    return {"full": 0, "window": 0, "chunk": 0, "linear": n}, 0, 0


def _mlp(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    shared_width = f.need("shared_intermediate_size", why=mtype)
    experts = f.need("num_local_experts", minimum=0, why=mtype)
    if not experts:
        f.notes.append(f"num_local_experts 0: one gated MLP of shared_intermediate_size {shared_width} per layer")
        return Mlp(dense_mlp=n * gated(d, shared_width))
    shared = n * gated(d, shared_width)
    f.notes.append(f"every layer: {experts} experts of intermediate_size and one shared MLP of "
                   f"shared_intermediate_size {shared_width}")
    return routed(n, experts, experts_per_token(f, mtype), d, f.need("intermediate_size", why=mtype),
                  shared=shared, shared_n=1)


def _moe_shared_mlp(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    mlp = every_layer_moe(f, mtype, d, n)
    width = f.optional("shared_intermediate_size", 0, meaning=f"no shared MLP (transformers' {mtype} default 0)")
    if not width:
        return mlp
    f.notes.append(f"every layer: {mlp.experts} experts of intermediate_size and one shared MLP of "
                   f"shared_intermediate_size {width}")
    return replace(mlp, shared=n * gated(d, width), shared_n=1)


def _mamba(f: Fields, d: int) -> Linear:
    why = f"{f.model_type} Mamba-2"
    heads = f.need("mamba_n_heads", why=why)
    inner = f.need("mamba_expand", why=why) * d
    return ssm.mamba2_by_heads(f, d, heads=heads, inner=inner, inner_words="mamba_expand * hidden_size", why=why)


FAMILIES = (
    Family("granite_hybrid", {"granitemoehybrid": False}, {"GraniteMoeHybridForCausalLM": "granitemoehybrid"},
           mlp=_mlp, pattern=_pattern, linear=_mamba, kind_names={"mamba": "linear"},
           # multipliers, kernel settings, biases and the time-step range: no size
           known=frozenset({"embedding_multiplier", "logits_scaling", "residual_multiplier", "attention_multiplier",
                            "position_embedding_type", "normalization_function", "mamba_chunk_size",
                            "mamba_conv_bias", "mamba_proj_bias", "time_step_limit", "init_method"})),
    Family("granite_moe_shared", {"granitemoeshared": False}, {"GraniteMoeSharedForCausalLM": "granitemoeshared"},
           mlp=_moe_shared_mlp,
           known=frozenset({"embedding_multiplier", "logits_scaling", "residual_multiplier", "attention_multiplier",
                            "position_embedding_type"})),
)
