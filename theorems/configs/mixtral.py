"""Mixtral: every layer a mixture of ``num_local_experts`` gated experts, ``num_experts_per_tok`` per token,
and a sliding window on every layer when ``sliding_window`` is set (``configuration_mixtral.py``)."""

from __future__ import annotations

from .base import Family, Fields, Mlp, experts_per_token, routed, uniform_window


def every_layer_moe(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    """Every layer MoE, experts of ``intermediate_size``, no shared expert."""
    experts = f.need("num_local_experts", why=mtype, aliases=("num_experts",))
    active = experts_per_token(f, mtype)
    return routed(n, experts, active, d, f.need("intermediate_size", why=mtype))


FAMILIES = (
    Family("mixtral", {"mixtral": False}, {"MixtralForCausalLM": "mixtral"}, mlp=every_layer_moe,
           pattern=uniform_window),
)
