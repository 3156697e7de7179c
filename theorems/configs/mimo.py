"""Xiaomi MiMo-V2-Flash (``mimo_v2_flash``) and MiMo-V2.5 (``mimo_v2``: the same language model with vision and
audio towers): sliding-window and full-attention layers with heads of their own, and routed experts on the layers
a per-layer list names.

``hybrid_layer_pattern`` gives each layer's kind, 0 full attention and 1 a window of the last ``sliding_window``
tokens (transformers' MiMo-V2-Flash config turns it into ``layer_types`` the same way; MiMo-V2.5's checkpoint
agrees: its nine layers 0, 5, 11, ..., 47 hold 4 KV heads, the other 39 hold 8).  Full layers use
``num_attention_heads``, ``num_key_value_heads``, ``head_dim`` (queries and keys) and ``v_head_dim`` (values);
sliding layers the ``swa_`` fields of the same names.  ``moe_layer_freq`` lists each layer, 1 for
``n_routed_experts`` experts of ``moe_intermediate_size`` (``num_experts_per_tok`` per token, one router), 0 for a
gated MLP of ``intermediate_size``.  The per-head attention-sink bias (``add_*_attention_sink_bias``) is not
counted, like the norms.  Anything else that would change a layer (a shared expert, ``hybrid_block_size``, a
chunk that is not the window) is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from derive.errors import ScenarioError

from .base import Attention, Blocks, Family, Fields, Mlp, experts_per_token, gated, routed

_KINDS = {0: "full", 1: "window"}  # hybrid_layer_pattern's entries
_LAYER_TYPES = {"full_attention": "full", "sliding_attention": "window"}
_MLP_TYPES = {"dense": 0, "sparse": 1}  # transformers' mlp_layer_types, the same list as moe_layer_freq


def _per_layer(f: Fields, key: str, n: int, names: dict) -> list | None:
    """One entry per layer from ``names``; one line naming the entry for anything else."""
    value = f.get(key)
    if value is None:
        return None
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise f.bad(key, value, f"a list with one entry per layer ({n})")
    if len(value) != n:
        raise ScenarioError(f"field '{key}' lists {len(value)} layers but num_hidden_layers is {n}", where=f.where)
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, int | float | str) or v not in names:
            raise ScenarioError(f"field '{key}[{i}]' has an unknown layer kind {v!r}", where=f.where,
                                hint=f"known: {', '.join(repr(k) for k in names)}; refused rather than guessed")
    return [names[v] for v in value]


def _layer_kinds(f: Fields, n: int) -> list[str]:
    pattern = _per_layer(f, "hybrid_layer_pattern", n, _KINDS)
    types = _per_layer(f, "layer_types", n, _LAYER_TYPES)
    if pattern is not None and types is not None and pattern != types:
        raise ScenarioError("fields 'hybrid_layer_pattern' and 'layer_types' disagree", where=f.where)
    kinds = pattern if pattern is not None else types
    if f.get("hybrid_block_size") is not None:
        raise ScenarioError(f"field 'hybrid_block_size' = {f.config['hybrid_block_size']!r}: a layer pattern by "
                            "blocks is not read", where=f.where, hint="give hybrid_layer_pattern, one entry per layer")
    if kinds is None:
        raise ScenarioError("missing field 'hybrid_layer_pattern'", where=f.where,
                            hint="a MiMo config lists each layer's attention: 0 full, 1 sliding window")
    return kinds


def _attention(f: Fields, prefix: str, d: int) -> Attention:
    """One attention layer: queries and keys of ``head_dim``, values of ``v_head_dim``."""
    why = f"MiMo {'sliding-window' if prefix else 'full-attention'} layer"
    heads = f.need(prefix + "num_attention_heads", why=why)
    kv = f.need(prefix + "num_key_value_heads", why=why)
    qk = f.need(prefix + "head_dim", why=why)
    v = f.need(prefix + "v_head_dim", why=why)
    if heads % kv:
        raise ScenarioError(f"{prefix}num_attention_heads ({heads}) is not a multiple of {prefix}num_key_value_heads "
                            f"({kv})", where=f.where)
    params = d * heads * qk + d * kv * (qk + v) + heads * v * d  # q; k and v; o
    mean = Fraction(qk + v, 2)
    return Attention(params, kv * (qk + v), f"{kv} kv heads * ({qk} key + {v} value elements)",
                     int(mean) if mean.denominator == 1 else mean, kv, heads,
                     head_dim_note=f"({prefix}head_dim {qk} + {prefix}v_head_dim {v}) / 2 = {mean}: keys and values "
                                   "differ in size; with their mean, 2 * kv_heads * head_dim is the cached elements "
                                   "and 4 * head_dim the attention FLOPs per context token and query head, both exact",
                     kv_heads_note=f"{prefix}num_key_value_heads = {kv}")


def _window(f: Fields) -> int:
    window = f.optional("sliding_window", None, minimum=1)
    size = f.optional("sliding_window_size", None, minimum=1)
    if window is not None and size is not None and window != size:
        raise ScenarioError(f"fields 'sliding_window' ({window}) and 'sliding_window_size' ({size}) disagree",
                            where=f.where)
    window = window if window is not None else size
    if window is None:
        raise ScenarioError("missing field 'sliding_window'", where=f.where,
                            hint="hybrid_layer_pattern has sliding-window layers")
    chunk = f.optional("attention_chunk_size", None, minimum=1)
    if chunk is not None and chunk != window:  # MiMo's files repeat the window there
        raise ScenarioError(f"field 'attention_chunk_size' ({chunk}) is not the window ({window}): chunked "
                            "attention is not read for MiMo", where=f.where)
    return window


def _moe_flags(f: Fields, n: int) -> list[int]:
    freq = f.get("moe_layer_freq")
    if freq is not None and (not isinstance(freq, Sequence) or isinstance(freq, str)):
        raise f.bad("moe_layer_freq", freq, "a list with one 0 (dense) or 1 (experts) per layer")
    flags = _per_layer(f, "moe_layer_freq", n, {0: 0, 1: 1})
    types = _per_layer(f, "mlp_layer_types", n, _MLP_TYPES)
    if flags is not None and types is not None and flags != types:
        raise ScenarioError("fields 'moe_layer_freq' and 'mlp_layer_types' disagree", where=f.where)
    out = flags if flags is not None else types
    if out is None:
        raise ScenarioError("missing field 'moe_layer_freq'", where=f.where,
                            hint="a MiMo config lists each layer's MLP: 0 dense, 1 routed experts")
    return out


def _mlp(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    flags = _moe_flags(f, n)
    moe_layers = sum(flags)
    dense = (n - moe_layers) * gated(d, f.need("intermediate_size", why="MiMo dense-layer")) if moe_layers < n else 0
    if not moe_layers:
        return Mlp(dense_mlp=dense)
    shared = f.optional("n_shared_experts", None)
    if shared:  # MiMo's files say null; a shared expert of unknown width is not guessed
        raise ScenarioError(f"field 'n_shared_experts' = {shared}: MiMo's layers have no shared expert", where=f.where,
                            hint="refused rather than guessed")
    f.notes.append(f"moe_layer_freq lists the layers: {moe_layers} with routed experts and {n - moe_layers} dense")
    return routed(moe_layers, f.need("n_routed_experts", why=mtype), experts_per_token(f, mtype), d,
                  f.need("moe_intermediate_size", why=mtype), dense_mlp=dense)


def _blocks(f: Fields, mtype: str, d: int, n: int) -> Blocks:
    kinds = _layer_kinds(f, n)
    full_att = _attention(f, "", d)
    n_full = kinds.count("full")
    n_window = n - n_full
    window_att = _attention(f, "swa_", d) if n_window else None
    window = _window(f) if n_window else 0
    f.notes.append(f"hybrid_layer_pattern: {n_full} full-attention and {n_window} sliding-window layers of {n}")
    return Blocks(attention=full_att,
                  attention_params=n_full * full_att.params_per_layer
                  + (n_window * window_att.params_per_layer if window_att else 0),
                  full_layers=n_full, full_elements=n_full * full_att.kv_elements_per_layer, mlp=_mlp(f, mtype, d, n),
                  window_layers=n_window, window=window, window_attention=window_att)


def _notes(f: Fields, mtype: str, att: Attention) -> None:
    towers = [k for k in ("vision_config", "audio_config") if f.config.get(k) is not None]
    if towers:
        f.notes.append(f"{' and '.join(towers)}: the vision and audio towers are not counted")


FAMILIES = (
    Family("mimo", {"mimo_v2_flash": False, "mimo_v2": False},
           {"MiMoV2FlashForCausalLM": "mimo_v2_flash", "MiMoV2ForCausalLM": "mimo_v2"},
           mlp=lambda f, mtype, d, n: Mlp(), blocks=_blocks, notes=_notes, own_layer_types=True,
           # sinks, the value scale and the fused q/k/v layout set no size; the window's RoPE base is a setting
           known=frozenset({"add_full_attention_sink_bias", "add_swa_attention_sink_bias", "attention_value_scale",
                            "attention_projection_layout", "swa_rope_theta", "moe_router_dtype"})),
)
