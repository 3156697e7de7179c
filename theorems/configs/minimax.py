"""MiniMax-M2 (``minimax_m2``: MiniMax-M2, M2.5, M2.7; transformers' ``configuration_minimax_m2.py``,
``modeling_minimax_m2.py``): grouped-query attention (``head_dim`` given: 48 heads of 128 on a width of 3072) and
every layer a mixture of ``num_local_experts`` gated experts of ``intermediate_size``, ``num_experts_per_tok`` per
token, one router; no sliding window.

The publisher's files list each layer's attention in ``attn_type_list``: 1 full softmax attention (every layer of
M2), 0 MiniMax's lightning (linear) attention, whose layers the reader does not know for this type: refused.  A
``shared_intermediate_size`` above 0 would add a shared expert transformers' layout does not have: refused.  The
multi-token-prediction modules (``use_mtp``, ``num_mtp_modules``) are not counted, as DeepSeek's are not; the
routing bias (``use_routing_bias``) and q/k norms are vectors, not counted.
"""

from __future__ import annotations

from derive.errors import ScenarioError

from .base import Family, Fields, LayerKinds, Mlp
from .mixtral import every_layer_moe


def _pattern(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    f.read.add("sliding_window")  # transformers' MiniMax-M2 windows no layer
    kinds = f.int_list("attn_type_list")
    if not kinds:
        return {"full": n, "window": 0, "chunk": 0, "linear": 0}, 0, 0
    if len(kinds) != n:
        raise ScenarioError(f"field 'attn_type_list' lists {len(kinds)} layers but num_hidden_layers is {n}",
                            where=f.where)
    unknown = sorted({k for k in kinds if k not in (0, 1)})
    if unknown:
        raise ScenarioError(f"field 'attn_type_list' has an unknown layer kind {unknown[0]}", where=f.where,
                            hint="1: full attention, 0: lightning (linear) attention")
    linear = kinds.count(0)
    return {"full": n - linear, "window": 0, "chunk": 0, "linear": linear}, 0, 0


def _mlp(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    shared = f.optional("shared_intermediate_size", 0)
    if shared:
        raise ScenarioError(f"field 'shared_intermediate_size' is {shared}: a shared expert the {mtype} layout "
                            "does not have", where=f.where, hint="MiniMax-M2's files give 0")
    if f.get("use_mtp") is True:
        modules = f.get("num_mtp_modules")
        f.notes.append(f"{modules if isinstance(modules, int) else 'its'} multi-token-prediction module(s) "
                       "not counted")
    return every_layer_moe(f, mtype, d, n)


FAMILIES = (
    Family("minimax_m2", {"minimax_m2": False}, {"MiniMaxM2ForCausalLM": "minimax_m2"}, mlp=_mlp, pattern=_pattern),
)
