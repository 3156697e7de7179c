"""Dense decoders with Llama's tensors under a model_type of their own: every layer q, k, v and o projections and a
gated MLP (gate and up, fused or not, and down), their layers full or windowed as each type says.

- ``phi3`` (Phi-3, Phi-3.5, Phi-4, Phi-4-mini; ``modeling_phi3.py``: ``qkv_proj`` and ``gate_up_proj`` fused, the
  same weights): ``sliding_window``, when set, on every layer.
- ``olmo2`` (``modeling_olmo2.py``): every layer full; q and k norms only.
- ``olmo3`` (``configuration_olmo3.py``): ``layer_types``; without it, three sliding-window layers to one full
  (``(i + 1) % 4``), ``sliding_window`` 4096 by default.
- ``glm4`` (GLM-4-0414, ``modeling_glm4.py``): every layer full; fused ``gate_up_proj``, extra norms.
- ``granite`` (Granite 3.x, ``modeling_granite.py``): Llama's layers with multipliers that set no shape.
- ``seed_oss`` (``modeling_seed_oss.py``), ``ernie4_5`` (``modeling_ernie4_5.py``): every layer full.
- ``smollm3`` (``configuration_smollm3.py``): ``layer_types``; without it, sliding-window layers only where
  ``use_sliding_window`` is true, and there the layers without rotary embedding (``no_rope_layers`` 0; every
  ``no_rope_layer_interval``-th layer by default).
- ``cohere`` (Command R, R+; ``modeling_cohere.py``) and ``cohere2`` (Command R7B, Command A;
  ``configuration_cohere2.py``): attention and MLP side by side in each layer (the same tensors); Command R's every
  layer full, ``cohere2``'s ``layer_types``, else three sliding-window layers to one full (``sliding_window_pattern``,
  4).
- ``ministral3`` (Ministral 3, the language model of a ``mistral3`` file; ``modeling_ministral3.py``): as Phi-3,
  ``sliding_window``, when set, on every layer.
- ``exaone4`` (EXAONE 4.0; ``configuration_exaone4.py``): ``layer_types``; without it, every
  ``sliding_window_pattern``-th layer full (4 by default), none windowed when ``sliding_window`` is null; a lettered
  pattern ("LLLG") without ``layer_types`` is refused (transformers builds the list from a number only).
- ``granitemoe`` (``modeling_granitemoe.py``): every layer a mixture of ``num_local_experts`` gated experts of
  ``intermediate_size`` and a router, as Mixtral's; ``phimoe`` (Phi-3.5-MoE, ``modeling_phimoe.py``) the same, with
  Phi-3's window on every layer when ``sliding_window`` is set.

Tie defaults are the config classes' (``tie_word_embeddings``).  A window at least as long as the model's context
(Phi-4-mini's 262,144 beside 131,072) windows nothing: those layers are read as full attention, with a note.
"""

from __future__ import annotations

from derive.errors import ScenarioError

from .base import Family, Fields, LayerKinds, all_full, count_every
from .dense import dense_mlp
from .mixtral import every_layer_moe


def _whole_context(f: Fields, sliding: int) -> bool:
    """A window no shorter than ``max_position_embeddings`` keeps every token the model can see."""
    ctx = f.config.get("max_position_embeddings")
    if isinstance(ctx, int) and not isinstance(ctx, bool) and 0 < ctx <= sliding:
        f.notes.append(f"sliding_window {sliding:,} is no shorter than max_position_embeddings {ctx:,}: every layer "
                       "keeps the whole context (read as full attention)")
        return True
    return False


def every_layer_window(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    """Phi-3 and StarCoder2 hand ``sliding_window`` to every layer's attention when it is set."""
    f.read.add("sliding_window")
    if sliding is None or _whole_context(f, sliding):
        return all_full(f, mtype, n, sliding)
    f.notes.append(f"sliding_window = {sliding}: every layer keeps only the last {sliding} tokens")
    return {"full": 0, "window": n, "chunk": 0, "linear": 0}, sliding, 0


def _periodic(f: Fields, n: int, sliding: int | None, period: int, default_window: int, words: str) -> LayerKinds:
    """Without ``layer_types``: every ``period``-th layer full, the others windowed (transformers' default list)."""
    f.read.add("sliding_window")
    window = default_window if sliding is None else sliding
    if sliding is None:
        f.notes.append(f"'sliding_window' absent: transformers' default {default_window}")
    full = count_every(n, period, offset=1)
    f.notes.append(f"'layer_types' absent: {words} ({n - full} sliding-window layers of {n})")
    return {"full": full, "window": n - full, "chunk": 0, "linear": 0}, window, 0


def _olmo3(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    return _periodic(f, n, sliding, 4, 4096, "three sliding-window layers to one full ((i + 1) % 4, transformers' "
                                            "olmo3 default)")


def _every_pattern_th_full(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    """Every ``sliding_window_pattern``-th layer full, the others windowed (Cohere2's and EXAONE 4's default 4)."""
    period = f.optional("sliding_window_pattern", 4, minimum=1, meaning="three sliding-window layers to one full "
                                                                     f"(transformers' {mtype} default, 4)")
    return _periodic(f, n, sliding, period, 4096, f"every {period}th layer full, the others sliding-window "
                                                  "(sliding_window_pattern)")


def _smollm3(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    f.read.add("sliding_window")
    if f.get("use_sliding_window") is not True or sliding is None:
        return all_full(f, mtype, n, sliding)
    listed = f.int_list("no_rope_layers")
    if listed:
        if len(listed) != n:
            raise f.bad("no_rope_layers", f.config["no_rope_layers"], f"a list of {n} entries, one per layer")
        no_rope = sum(1 for v in listed if v == 0)
    else:
        interval = f.optional("no_rope_layer_interval", 4, minimum=1,
                              meaning="every 4th layer without rotary embedding (transformers' smollm3 default)")
        no_rope = count_every(n, interval, offset=1)
    f.notes.append(f"use_sliding_window: the {no_rope} layers without rotary embedding keep the last {sliding} tokens")
    return {"full": n - no_rope, "window": no_rope, "chunk": 0, "linear": 0}, sliding, 0


def _exaone4(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    # Exaone4Config: sliding_window 4096 and sliding_window_pattern 4 by default; a null window windows nothing
    if "sliding_window" in f.config and sliding is None:
        return _all_full(f, mtype, n, sliding)
    pattern = f.get("sliding_window_pattern")
    if isinstance(pattern, str):  # "LLLG": transformers builds layer_types from a number only
        raise ScenarioError(f"field 'sliding_window_pattern' is {pattern!r} and the file has no 'layer_types'",
                            where=f.where, hint="EXAONE 4 files with a lettered pattern list layer_types too")
    return _every_pattern_th_full(f, mtype, n, sliding)


def _all_full(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    # these types window no layer, whatever a file says: a sliding_window there is read and not applied
    f.read.add("sliding_window")
    return all_full(f, mtype, n, sliding)


_PATTERNS = {"phi3": every_layer_window, "ministral3": every_layer_window, "olmo3": _olmo3,
             "cohere2": _every_pattern_th_full, "smollm3": _smollm3, "exaone4": _exaone4}


def _pattern(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    return _PATTERNS.get(mtype, _all_full)(f, mtype, n, sliding)


FAMILIES = (
    Family("llama_like",
           {"phi3": False, "olmo2": False, "olmo3": False, "glm4": False, "granite": False, "seed_oss": False,
            "ernie4_5": True, "smollm3": True, "cohere": True, "cohere2": True, "ministral3": False,
            "exaone4": False},
           {"Phi3ForCausalLM": "phi3", "Olmo2ForCausalLM": "olmo2", "Olmo3ForCausalLM": "olmo3",
            "Glm4ForCausalLM": "glm4", "GraniteForCausalLM": "granite", "SeedOssForCausalLM": "seed_oss",
            "Ernie4_5ForCausalLM": "ernie4_5", "SmolLM3ForCausalLM": "smollm3", "Cohere2ForCausalLM": "cohere2",
            "Ministral3ForCausalLM": "ministral3", "Exaone4ForCausalLM": "exaone4", "CohereForCausalLM": "cohere"},
           mlp=dense_mlp, pattern=_pattern),
    Family("granite_moe", {"granitemoe": False}, {"GraniteMoeForCausalLM": "granitemoe"}, mlp=every_layer_moe),
    Family("phimoe", {"phimoe": False}, {"PhimoeForCausalLM": "phimoe"}, mlp=every_layer_moe,
           pattern=every_layer_window),
)
