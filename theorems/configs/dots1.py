"""rednote-hilab dots.llm1 (``dots1``: dots.llm1.base and dots.llm1.inst; transformers' ``configuration_dots1.py`` and
``modular_dots1.py``): Qwen3's attention with DeepSeek-V3's experts.

- Attention (``Dots1Attention`` is ``Qwen3Attention``): q, k, v and o projections of ``num_key_value_heads`` and
  ``head_dim`` (hidden_size / num_attention_heads when absent); the q and k RMSNorms over ``head_dim`` are norms, and
  the ``attention_bias`` vectors biases, neither counted.
- Layers (``Dots1DecoderLayer`` is ``DeepseekV3DecoderLayer``): layers ``0 .. first_k_dense_replace - 1`` a gated MLP of
  ``intermediate_size``, every later layer a MoE layer: ``n_routed_experts`` gated experts of ``moe_intermediate_size``,
  ``num_experts_per_tok`` per token, a router of ``hidden_size x n_routed_experts`` (its ``e_score_correction_bias``
  is a vector, not counted) and ``n_shared_experts`` shared experts as one gated MLP of ``n_shared_experts *
  moe_intermediate_size``.  DeepSeek's ``moe_layer_freq`` is not read by this class; a value other than 1 is refused.
- Layer kinds: ``layer_types`` when listed; otherwise layer ``i`` keeps a sliding window when ``sliding_window`` is set
  and ``i >= max_window_layers`` (``Dots1Config.__post_init__``, class defaults 4096 and 62: a 62-layer file without
  either field is full attention throughout).  The class has no ``use_sliding_window`` switch: a file that says false
  beside windowed layers is refused rather than read either way.
- Embeddings untied by default (``Dots1Config``).
"""

from __future__ import annotations

from derive.errors import ScenarioError

from .base import Attention, Family, Fields, LayerKinds, Mlp
from .deepseek import deepseek_moe_mlp

# Dots1Config's class defaults for the two fields that place sliding-window layers
SLIDING_WINDOW_DEFAULT = 4096
MAX_WINDOW_LAYERS_DEFAULT = 62


def _mlp(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    if f.has("moe_layer_freq") and f.config["moe_layer_freq"] != 1:
        raise ScenarioError(f"field 'moe_layer_freq' is {f.config['moe_layer_freq']!r}: transformers' {mtype} class "
                            "makes every layer after first_k_dense_replace a MoE layer", where=f.where,
                            hint="refused rather than read as every layer or as DeepSeek's spacing")
    return deepseek_moe_mlp(f, mtype, d, n)


def _pattern(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    f.read.add("sliding_window")
    if "sliding_window" not in f.config:
        sliding = SLIDING_WINDOW_DEFAULT
    first = f.optional("max_window_layers", MAX_WINDOW_LAYERS_DEFAULT, minimum=0)
    windowed = 0 if sliding is None else max(0, n - first)
    if not windowed:
        f.notes.append(f"every layer full attention ({mtype}: a layer slides only when sliding_window is set and its "
                       f"index is at least max_window_layers, {first})")
        return {"full": n, "window": 0, "chunk": 0, "linear": 0}, 0, 0
    if f.has("use_sliding_window") and f.config["use_sliding_window"] is not True:
        raise ScenarioError(f"field 'use_sliding_window' is {f.config['use_sliding_window']!r} but {mtype} windows "
                            f"layers {first} to {n - 1} (sliding_window and max_window_layers; its class has no such "
                            "switch)", where=f.where, hint="refused rather than read as either")
    f.notes.append(f"sliding_window = {sliding} on layers {first} to {n - 1} (max_window_layers {first})")
    return {"full": n - windowed, "window": windowed, "chunk": 0, "linear": 0}, sliding, 0


def _notes(f: Fields, mtype: str, att: Attention) -> None:
    f.notes.append(f"{mtype}: q and k RMSNorms in every attention layer (norms, not counted); biases not counted")


FAMILIES = (
    Family("dots1", {"dots1": False}, {"Dots1ForCausalLM": "dots1"}, mlp=_mlp, pattern=_pattern, notes=_notes,
           # the switch is read only beside windowed layers; the dense layers' width only when there are some
           known=frozenset({"use_sliding_window", "intermediate_size", "max_window_layers"})),
)
