"""OLMoE (``olmoe``: allenai/OLMoE-1B-7B-0924 and its -Instruct; transformers' ``configuration_olmoe.py``,
``modeling_olmoe.py``): every layer q, k, v and o projections (``num_key_value_heads``; OLMoE-1B-7B: 16, one per
query head) and a mixture of ``num_experts`` gated experts of ``intermediate_size``, ``num_experts_per_tok`` per token,
with a router; no shared expert and no dense layer.  The q and k RMSNorms over the whole projections are norms, not
counted; ``clip_qkv`` (null: no clipping) bounds activations and sets no shape.  Embeddings untied by default
(``OlmoeConfig``)."""

from __future__ import annotations

from .base import Attention, Family, Fields
from .mixtral import every_layer_moe


def _notes(f: Fields, mtype: str, att: Attention) -> None:
    clip = f.get("clip_qkv")
    f.notes.append("olmoe: q and k RMSNorms (norms, not counted); "
                   + ("clip_qkv null: no clipping" if clip is None else f"clip_qkv {clip}: activations clipped")
                   + " (no shape)")


FAMILIES = (
    Family("olmoe", {"olmoe": False}, {"OlmoeForCausalLM": "olmoe"}, mlp=every_layer_moe, notes=_notes),
)
