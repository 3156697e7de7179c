"""Gemma 4 (``gemma4``, ``gemma4_text``): sliding-window and global layers with heads of their own, and in the MoE
variant (26B-A4B) routed experts beside every layer's dense MLP.

As transformers' ``Gemma4TextConfig`` (``configuration_gemma4.py``) and ``modeling_gemma4.py`` build it:
``layer_types`` gives each layer's kind (absent: every sixth layer global, the rest sliding).  Sliding layers have
``num_key_value_heads`` heads of ``head_dim``; global layers ``num_global_key_value_heads`` (absent:
``num_key_value_heads``) of ``global_head_dim``, and with ``attention_k_eq_v`` no value projection (the keys'
projection serves as values; the cache still holds keys and values, each normed apart).  Every layer has a gated
MLP of ``intermediate_size``; with ``enable_moe_block`` also a router and ``num_experts`` gated experts of
``moe_intermediate_size``, ``top_k_experts`` per token.  A field Google's file leaves out takes the class default,
and the notes say so.  Per-layer input embeddings (``hidden_size_per_layer_input``, the E2B and E4B models), KV
shared across layers (``num_kv_shared_layers``) and double-width MLPs are not modelled: refused, never read as
plain layers.  Norms, the per-layer scalar and the router's scale vector are not counted.
"""

from __future__ import annotations

from derive.errors import ScenarioError

from .base import Attention, Blocks, Family, Fields, Mlp, gated, num, routed

# Gemma4TextConfig's defaults for the sizes (huggingface/transformers, configuration_gemma4.py)
_DEFAULTS = {"vocab_size": 262_144, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 30,
             "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "sliding_window": 512,
             "max_position_embeddings": 131_072, "hidden_size_per_layer_input": 256, "global_head_dim": 512,
             "num_kv_shared_layers": 0}
CLASS_DEFAULTS = {"gemma4": _DEFAULTS, "gemma4_text": _DEFAULTS}
_KINDS = {"sliding_attention": "window", "full_attention": "full"}


def _layer_kinds(f: Fields, n: int) -> list[str]:
    types = f.get("layer_types")
    if types is None:
        f.notes.append("'layer_types' absent: every sixth layer global, the others sliding (Gemma4TextConfig's 5:1)")
        return ["window" if (i + 1) % 6 else "full" for i in range(n)]
    if not isinstance(types, list) or len(types) != n:
        raise ScenarioError(f"field 'layer_types' must list one kind for each of the {n} layers", where=f.where)
    for i, t in enumerate(types):
        if not isinstance(t, str) or t not in _KINDS:
            raise ScenarioError(f"field 'layer_types[{i}]' has an unknown layer kind {t!r}", where=f.where,
                                hint=f"known: {', '.join(sorted(_KINDS))}; refused rather than guessed")
    if types and types[-1] != "full_attention":  # transformers overrides the file here; not guessed which wins
        raise ScenarioError(f"field 'layer_types' ends with {types[-1]!r}: Gemma 4's last layer is global "
                            "(transformers replaces the entry)", where=f.where, hint="refused rather than guessed")
    return [_KINDS[t] for t in types]


def _refuse_unmodelled(f: Fields) -> None:
    """Layers the reader does not model: refused in one line naming the field."""
    per_layer = f.optional("hidden_size_per_layer_input", None)
    if per_layer:
        f.read.add("vocab_size_per_layer_input")
        raise ScenarioError(f"field 'hidden_size_per_layer_input' = {per_layer}: per-layer input embeddings (Gemma 4 "
                            "E2B/E4B) are not modelled", where=f.where, hint="refused rather than read as plain layers")
    f.read.add("vocab_size_per_layer_input")  # sizes nothing without per-layer inputs
    shared = f.optional("num_kv_shared_layers", None)
    if shared:
        raise ScenarioError(f"field 'num_kv_shared_layers' = {shared}: layers that reuse another layer's KV cache are "
                            "not modelled", where=f.where, hint="refused rather than counted as caching layers")
    if f.flag("use_double_wide_mlp", False, ""):
        raise ScenarioError("field 'use_double_wide_mlp' is true: double-width MLPs are not modelled", where=f.where,
                            hint="refused rather than read as single-width")
    if f.get("use_bidirectional_attention") == "all":  # transformers then narrows the window to half plus one
        raise ScenarioError("field 'use_bidirectional_attention' = 'all': the window transformers then uses is not "
                            "read", where=f.where, hint="refused rather than guessed")


def _attention(f: Fields, d: int, heads: int, kv: int, hd: int, k_eq_v: bool, prefix: str) -> Attention:
    if heads % kv:
        raise ScenarioError(f"num_attention_heads ({heads}) is not a multiple of {prefix}key-value heads ({kv})",
                            where=f.where)
    params = d * heads * hd + d * kv * hd * (1 if k_eq_v else 2) + heads * hd * d  # q; k (and v); o
    return Attention(params, 2 * kv * hd, f"2 (K and V) * {kv} kv heads * {hd} head_dim", hd, kv, heads,
                     head_dim_note=f"{'global_head_dim' if prefix else 'head_dim'} = {hd}",
                     kv_heads_note=f"{prefix or 'num_key_value_heads'} = {kv}")


def _mlp(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    dense = n * gated(d, f.need("intermediate_size", why="Gemma 4"))
    moe = f.flag("enable_moe_block", False, "no expert block (Gemma4TextConfig's default)")
    if not moe:
        stray = [k for k in ("num_experts", "top_k_experts", "moe_intermediate_size") if f.has(k)]
        if stray:
            raise ScenarioError(f"field '{stray[0]}' is set but enable_moe_block is not true", where=f.where,
                                hint="refused rather than guessed whether the experts exist")
        return Mlp(dense_mlp=dense)
    experts = f.need("num_experts", why="Gemma 4 MoE")
    active = f.need("top_k_experts", why="Gemma 4 MoE")
    if f.has("num_experts_per_tok") and f.need("num_experts_per_tok") != active:
        raise ScenarioError(f"fields 'top_k_experts' ({active}) and 'num_experts_per_tok' "
                            f"({f.need('num_experts_per_tok')}) disagree", where=f.where)
    width = f.need("moe_intermediate_size", why="Gemma 4 MoE", aliases=("expert_intermediate_size",))
    if f.has("expert_intermediate_size") and f.need("expert_intermediate_size") != width:
        raise ScenarioError(f"fields 'moe_intermediate_size' ({width}) and 'expert_intermediate_size' "
                            f"({f.need('expert_intermediate_size')}) disagree", where=f.where)
    f.notes.append(f"enable_moe_block: every layer keeps its dense MLP ({num(dense // n)} weights, counted as one "
                   f"shared expert) beside {experts} routed experts, {active} per token")
    return routed(n, experts, active, d, width, shared=dense, shared_n=1)


def _blocks(f: Fields, mtype: str, d: int, n: int) -> Blocks:
    _refuse_unmodelled(f)
    kinds = _layer_kinds(f, n)
    n_full = kinds.count("full")
    n_window = n - n_full
    heads = f.need("num_attention_heads")
    kv = f.need("num_key_value_heads")
    window_att = _attention(f, d, heads, kv, f.need("head_dim"), False, "") if n_window else None
    k_eq_v = f.flag("attention_k_eq_v", False, "values projected apart on global layers (Gemma4TextConfig's default)")
    global_kv = f.optional("num_global_key_value_heads", None, minimum=1)
    if global_kv is None:
        global_kv = kv
        f.notes.append(f"'num_global_key_value_heads' absent: num_key_value_heads ({kv}) on global layers")
    full_att = _attention(f, d, heads, global_kv, f.need("global_head_dim"), k_eq_v, "num_global_key_value_heads")
    window = f.need("sliding_window", why="Gemma 4 sliding-window") if n_window else 0
    f.notes.append(f"layer_types: {n_window} sliding-window layers ({kv} KV heads of {f.need('head_dim')}) and "
                   f"{n_full} global layers ({global_kv} KV heads of {full_att.head_dim}"
                   + (", keys serving as values: no value projection, keys and values cached apart)" if k_eq_v
                      else ")"))
    return Blocks(attention=full_att,
                  attention_params=n_full * full_att.params_per_layer
                  + (n_window * window_att.params_per_layer if window_att else 0),
                  full_layers=n_full, full_elements=n_full * full_att.kv_elements_per_layer, mlp=_mlp(f, mtype, d, n),
                  window_layers=n_window, window=window, window_attention=window_att)


FAMILIES = (
    Family("gemma4", {"gemma4": True, "gemma4_text": True},
           {"Gemma4ForConditionalGeneration": "gemma4", "Gemma4ForCausalLM": "gemma4_text"},
           mlp=lambda f, mtype, d, n: Mlp(), blocks=_blocks, class_defaults=CLASS_DEFAULTS, own_layer_types=True,
           # vision tokens attending both ways change no weight or cache
           known=frozenset({"use_bidirectional_attention"})),
)
