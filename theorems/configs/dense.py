"""Dense decoder-only models with multi-head, grouped-query or multi-query attention (Llama, Mistral, Qwen2,
Qwen3): every layer one attention block and one gated MLP.

Mistral windows every layer when ``sliding_window`` is set; Qwen2 and Qwen3 only with
``use_sliding_window`` true, from ``max_window_layers`` on (transformers' ``configuration_llama.py``,
``configuration_mistral.py``, ``configuration_qwen2.py``, ``configuration_qwen3.py``).
"""

from __future__ import annotations

from .base import Family, Fields, LayerKinds, Mlp, all_full, gated, uniform_window


def dense_mlp(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    """One gated MLP of ``intermediate_size`` per layer."""
    return Mlp(dense_mlp=n * gated(d, f.need("intermediate_size")))


def _pattern(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    return all_full(f, mtype, n, sliding) if mtype == "llama" else uniform_window(f, mtype, n, sliding)


FAMILIES = (
    Family("dense", {"llama": False, "mistral": False, "qwen2": False, "qwen3": False},
           {"LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral", "Qwen2ForCausalLM": "qwen2",
            "Qwen3ForCausalLM": "qwen3"},
           mlp=dense_mlp, pattern=_pattern,
           # the language models of Qwen3-VL, Qwen2-VL and Qwen2.5-VL: Qwen3's and Qwen2's tensors
           # (modeling_qwen3_vl.py, modeling_qwen2_vl.py, modeling_qwen2_5_vl.py)
           aliases={"qwen3_vl_text": "qwen3", "qwen2_vl_text": "qwen2", "qwen2_5_vl_text": "qwen2"}),
)
