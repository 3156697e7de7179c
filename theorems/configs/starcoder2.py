"""StarCoder2 (``starcoder2``; transformers' ``configuration_starcoder2.py``, ``modeling_starcoder2.py``): grouped-query
attention and an ungated MLP, ``c_fc`` (hidden_size -> intermediate_size) and ``c_proj`` back, two matrices where
Llama's gated MLP has three (``hidden_act`` gelu_pytorch_tanh); biases and LayerNorms, not counted.  ``sliding_window``,
when set, windows every layer.  Embeddings tied by default (``Starcoder2Config``)."""

from __future__ import annotations

from .base import Family, Fields, Mlp
from .llama_like import every_layer_window


def ungated_mlp(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    """One ungated MLP of ``intermediate_size`` per layer: up and down, ``2 * d * width``."""
    return Mlp(dense_mlp=n * 2 * d * f.need("intermediate_size"))


FAMILIES = (
    Family("starcoder2", {"starcoder2": True}, {"Starcoder2ForCausalLM": "starcoder2"}, mlp=ungated_mlp,
           pattern=every_layer_window),
)
