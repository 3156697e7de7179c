"""ERNIE 4.5 MoE (``ernie4_5_moe``: ERNIE-4.5-21B-A3B, ERNIE-4.5-300B-A47B; transformers'
``configuration_ernie4_5_moe.py``, ``modeling_ernie4_5_moe.py``): grouped-query attention; layer ``i`` is a MoE layer
when ``(i + 1) % moe_layer_interval == 0`` and ``moe_layer_start_index <= i <= moe_layer_end_index`` (-1: the last
layer), else a gated MLP of ``intermediate_size``.  A MoE layer has ``moe_num_experts`` gated experts of
``moe_intermediate_size``, ``moe_k`` per token, a router, and ``moe_num_shared_experts`` shared experts as one gated
MLP of ``moe_num_shared_experts * moe_intermediate_size``.  The routing bias (``e_score_correction_bias``) is a
vector, not counted.  Embeddings tied by default (``Ernie4_5_MoeConfig``).  Per-modality expert lists (the VL
models') are refused.
"""

from __future__ import annotations

from derive.errors import ScenarioError

from .base import Family, Fields, Mlp, gated, routed


def _mlp(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    for key in ("moe_num_experts", "moe_k", "moe_intermediate_size"):
        if isinstance(f.get(key), list):
            raise ScenarioError(f"field '{key}' is a list (one entry per modality): a vision-language layout the "
                                f"{mtype} reader does not place", where=f.where)
    experts = f.need("moe_num_experts", why=mtype)
    active = f.need("moe_k", why=mtype)
    width = f.need("moe_intermediate_size", why=mtype)
    shared_n = f.optional("moe_num_shared_experts", 0)
    start = f.optional("moe_layer_start_index", 0)
    end = f.optional("moe_layer_end_index", None, minimum=-1)
    interval = f.optional("moe_layer_interval", 1, minimum=1)
    last = n - 1 if end is None or end == -1 else min(end, n - 1)
    moe = sum(1 for i in range(start, last + 1) if (i + 1) % interval == 0)
    f.notes.append(f"{moe} MoE layers of {n} (layers {start} to {last}, every {interval}), the others dense")
    dense = (n - moe) * gated(d, f.need("intermediate_size", why=mtype)) if moe < n else 0
    shared = moe * gated(d, shared_n * width)
    return routed(moe, experts, active, d, width, dense_mlp=dense, shared=shared, shared_n=shared_n)


FAMILIES = (
    Family("ernie_moe", {"ernie4_5_moe": True}, {"Ernie4_5_MoeForCausalLM": "ernie4_5_moe"}, mlp=_mlp),
)
