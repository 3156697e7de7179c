"""Phi-1, Phi-1.5 and Phi-2 (``phi``; transformers' ``configuration_phi.py``, ``modeling_phi.py``): q, k and v
projections (``num_key_value_heads``, absent: one per query head) and ``dense``, and an ungated MLP ``fc1``
(hidden_size -> intermediate_size) and ``fc2`` back with ``gelu_new``: two matrices where Llama's gated MLP has three.
Biases on every projection and the LM head, LayerNorms and the optional q/k LayerNorms (``qk_layernorm``) are not
counted; rotary embedding on a part of each head (``partial_rotary_factor``) changes no shape.  Every layer full
attention; embeddings untied by default (``PhiConfig``)."""

from __future__ import annotations

from .base import Family
from .starcoder2 import ungated_mlp

FAMILIES = (
    Family("phi", {"phi": False}, {"PhiForCausalLM": "phi"}, mlp=ungated_mlp),
)
