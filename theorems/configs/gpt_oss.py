"""gpt-oss: every layer MoE, alternate layers on a 128-token window, learned attention sinks
(``configuration_gpt_oss.py``; OpenAI's own ``original/config.json`` says ``num_experts`` and
``experts_per_token``)."""

from __future__ import annotations

from .base import Attention, Family, Fields, alternate_window
from .mixtral import every_layer_moe


def _notes(f: Fields, mtype: str, att: Attention) -> None:
    f.notes.append("gpt-oss attention sinks are learned per-head logits (parameters), not cached tokens: "
                   "no KV bytes")


FAMILIES = (
    Family("gpt_oss", {"gpt_oss": False}, {"GptOssForCausalLM": "gpt_oss"}, mlp=every_layer_moe,
           pattern=alternate_window, notes=_notes,
           known=frozenset({"swiglu_limit", "initial_context_length"})),
)
