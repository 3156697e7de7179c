"""Qwen2-MoE and Qwen3-MoE: MoE layers every ``decoder_sparse_step`` layers except ``mlp_only_layers``,
an optional shared expert with a sigmoid gate (``configuration_qwen2_moe.py``, ``configuration_qwen3_moe.py``;
transformers 5 renames ``num_experts`` to ``num_local_experts``)."""

from __future__ import annotations

from .base import Family, Fields, Mlp, count_every, experts_per_token, gated, routed, uniform_window


def qwen_moe_mlp(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    experts = f.need("num_experts", why=mtype, aliases=("num_local_experts",))
    active = experts_per_token(f, mtype)
    width = f.need("moe_intermediate_size", why=mtype)
    step = f.optional("decoder_sparse_step", 1, minimum=1, meaning="every layer may be sparse (1)")
    dense_only = set(f.int_list("mlp_only_layers"))
    moe_layers = count_every(n, step, offset=1) - sum(1 for i in dense_only if i < n and (i + 1) % step == 0)
    dense = 0
    if moe_layers < n:
        dense = (n - moe_layers) * gated(d, f.need("intermediate_size", why=f"{mtype} dense-layer"))
    shared_width = f.optional("shared_expert_intermediate_size", 0)
    shared_n = shared = 0
    if shared_width:
        shared_n = 1
        shared = moe_layers * (gated(d, shared_width) + d)  # the shared expert and its sigmoid gate
    return routed(moe_layers, experts, active, d, width, dense_mlp=dense, shared=shared, shared_n=shared_n)


FAMILIES = (
    Family("qwen_moe", {"qwen2_moe": False, "qwen3_moe": False},
           {"Qwen2MoeForCausalLM": "qwen2_moe", "Qwen3MoeForCausalLM": "qwen3_moe"}, mlp=qwen_moe_mlp,
           pattern=uniform_window,
           # Qwen3-VL-MoE's language model: Qwen3-MoE's tensors (modeling_qwen3_vl_moe.py)
           aliases={"qwen3_vl_moe_text": "qwen3_moe"},
           # the dense layers' width (read when mlp_only_layers or decoder_sparse_step leave some), the first
           # windowed layer (read when use_sliding_window is true)
           known=frozenset({"intermediate_size", "max_window_layers"})),
)
