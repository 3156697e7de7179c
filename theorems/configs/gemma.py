"""Gemma, Gemma 2 and Gemma 3: dense models with tied embeddings and local (sliding-window) layers.

Gemma 2 makes every other layer local; Gemma 3 five of six (``sliding_window_pattern``, 6).  Google's
Gemma 3 files leave out whatever equals transformers' class default (gemma-3-27b-it's ``text_config`` has no
``vocab_size``; gemma-3-4b-it's has no head counts), so the default is part of what the file says
(``configuration_gemma2.py``, ``configuration_gemma3.py``: ``Gemma2Config``, ``Gemma3TextConfig``).
"""

from __future__ import annotations

from .base import Family, Fields, LayerKinds, all_full, alternate_window, count_every
from .dense import dense_mlp

_GEMMA3_DEFAULTS = {"vocab_size": 262_208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
                    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "sliding_window": 4096,
                    "max_position_embeddings": 131_072}
CLASS_DEFAULTS = {
    "gemma2": {"vocab_size": 256_000, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
               "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "sliding_window": 4096},
    "gemma3_text": _GEMMA3_DEFAULTS,
    "gemma3": _GEMMA3_DEFAULTS,
}


def _pattern(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    if mtype == "gemma2":
        return alternate_window(f, mtype, n, sliding)
    if mtype in ("gemma3", "gemma3_text") and sliding is not None:
        f.read.add("sliding_window")
        pattern = f.optional("sliding_window_pattern", 6, minimum=1, aliases=("_sliding_window_pattern",),
                             meaning="five local layers to one global (Gemma 3's pattern, 6)")
        full = count_every(n, pattern, offset=1)
        return {"full": full, "window": n - full, "chunk": 0, "linear": 0}, sliding, 0
    return all_full(f, mtype, n, sliding)


FAMILIES = (
    Family("gemma", {"gemma": True, "gemma2": True, "gemma3_text": True, "gemma3": True},
           {"GemmaForCausalLM": "gemma", "Gemma2ForCausalLM": "gemma2", "Gemma3ForCausalLM": "gemma3_text",
            "Gemma3ForConditionalGeneration": "gemma3"},
           mlp=dense_mlp, pattern=_pattern, class_defaults=CLASS_DEFAULTS),
)
