"""Jamba (``jamba``: AI21's Jamba v0.1, Jamba 1.5 and 1.6 Mini and Large): Mamba layers with grouped-query
attention on one layer in ``attn_layer_period``, and a mixture of experts on one layer in ``expert_layer_period``.

Layer i is attention when ``i % attn_layer_period == attn_layer_offset``, else a Mamba (version 1) layer; its
feed-forward part is a mixture of ``num_experts`` gated experts of ``intermediate_size`` (``num_experts_per_tok``
per token, one router) when ``i % expert_layer_period == expert_layer_offset`` and ``num_experts > 1``, else one
gated MLP of ``intermediate_size`` (transformers' ``JambaConfig.layers_block_type`` and ``layers_num_experts``;
Lieber et al., arXiv:2403.19887, section 2).  The Mamba layer is ``ssm.mamba1`` with ``inner = mamba_expand *
hidden_size``, ``mamba_d_state``, ``mamba_d_conv`` and ``mamba_dt_rank`` (``"auto"``: ceil(hidden_size / 16)).
The layer kinds come from the periods and offsets only; a ``layer_types`` list beside them is refused.
"""

from __future__ import annotations

import math

from derive.errors import ScenarioError

from . import ssm
from .base import Family, Fields, LayerKinds, Linear, Mlp, count_every, experts_per_token, gated, routed


def _period(f: Fields, name: str, default_period: int, default_offset: int) -> tuple[int, int]:
    """A layer period and its offset (transformers refuses an offset at or past the period)."""
    got = f.optional(f"{name}_period", None, minimum=1)
    period = default_period if got is None else got
    got = f.optional(f"{name}_offset", None)
    offset = default_offset if got is None else got
    for key, value in ((f"{name}_period", default_period), (f"{name}_offset", default_offset)):
        if not f.has(key):
            f.notes.append(f"'{key}' absent: transformers' jamba default, {value}")
    if offset >= period:
        raise ScenarioError(f"field '{name}_offset' ({offset}) must be smaller than '{name}_period' ({period})",
                            where=f.where)
    return period, offset


def _no_layer_types(f: Fields) -> None:
    if f.has("layer_types"):
        raise ScenarioError("field 'layer_types' given beside 'attn_layer_period'", where=f.where,
                            hint="a jamba config places its layers by attn_layer_period and attn_layer_offset only")


def _pattern(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    _no_layer_types(f)
    period, offset = _period(f, "attn_layer", 8, 4)
    full = count_every(n, period, offset=-offset)
    f.notes.append(f"attn_layer_period {period}, offset {offset}: {full} attention and {n - full} Mamba layers of "
                   f"{n}; only the attention layers keep a KV cache")
    return {"full": full, "window": 0, "chunk": 0, "linear": n - full}, 0, 0


def _mlp(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    _no_layer_types(f)
    width = f.need("intermediate_size", why="jamba")
    experts = f.need("num_experts", why="jamba", aliases=("num_local_experts",))
    period, offset = _period(f, "expert_layer", 2, 1)
    moe_layers = count_every(n, period, offset=-offset) if experts > 1 else 0
    dense = (n - moe_layers) * gated(d, width)
    f.notes.append(f"expert_layer_period {period}, offset {offset}: {moe_layers} MoE and {n - moe_layers} dense "
                   "MLP layers")
    if not moe_layers:
        return Mlp(dense_mlp=dense)
    return routed(moe_layers, experts, experts_per_token(f, mtype), d, width, dense_mlp=dense)


def _mamba(f: Fields, d: int) -> Linear:
    why = "jamba Mamba-layer"
    expand = f.need("mamba_expand", why=why)
    rank = f.get("mamba_dt_rank", "auto")
    if rank == "auto":
        dt_rank = math.ceil(d / 16)
        f.notes.append(f"mamba_dt_rank auto: ceil(hidden_size / 16) = {dt_rank}")
    else:
        dt_rank = f.whole("mamba_dt_rank", rank, 1)
    return ssm.mamba1(f, d, inner=expand * d, state=f.need("mamba_d_state", why=why),
                      kernel=f.need("mamba_d_conv", why=why), dt_rank=dt_rank)


FAMILIES = (
    Family("jamba", {"jamba": False}, {"JambaForCausalLM": "jamba"}, mlp=_mlp, pattern=_pattern, linear=_mamba,
           own_layer_types=True,
           # kernel choices and biases (not counted, like every bias): no size
           known=frozenset({"use_mamba_kernels", "mamba_conv_bias", "mamba_proj_bias", "mamba_inner_layernorms",
                            "use_mambapy", "use_associative_scan", "sliding_window", "n_ctx"})),
)
