"""Gemma 4 (``gemma4``, ``gemma4_text``): sliding-window and global layers with heads of their own; in the MoE
variant (26B-A4B) routed experts beside every layer's dense MLP; in E2B and E4B per-layer input embeddings, layers
that reuse an earlier layer's KV cache and (E2B) double-width MLPs on those layers.

As transformers' ``Gemma4TextConfig`` (``configuration_gemma4.py``) and ``modeling_gemma4.py`` build it:
``layer_types`` gives each layer's kind (absent: every sixth layer global, the rest sliding).  Sliding layers have
``num_key_value_heads`` heads of ``head_dim``; global layers heads of ``global_head_dim``, and with
``attention_k_eq_v`` ``num_global_key_value_heads`` of them (absent: ``num_key_value_heads``) and no value
projection (the keys' projection serves as values; the cache still holds keys and values, each normed apart);
without it ``num_key_value_heads`` (transformers applies the global count only with ``attention_k_eq_v``).  Every
layer has a gated MLP of ``intermediate_size``; with ``enable_moe_block`` also a router and ``num_experts`` gated
experts of ``moe_intermediate_size``, ``top_k_experts`` per token.

E2B and E4B: the last ``num_kv_shared_layers`` layers reuse the cache of the last earlier layer of their own kind
(``kv_sharing_modes``): they keep no cache and have no key or value projection, only queries and the output; with
``use_double_wide_mlp`` their MLPs are ``2 x intermediate_size`` wide.  ``hidden_size_per_layer_input`` = p > 0
adds a second table, ``vocab_size_per_layer_input`` rows of ``num_hidden_layers * p``, looked up per token like
the input embedding (counted with it in ``params_embedding``, left out of ``params_active``, one row read per
new token in decode), a projection ``hidden_size x (num_hidden_layers * p)`` and in every layer a gate
``hidden_size x p`` and a projection ``p x hidden_size``, multiplied like any weight.

A field Google's file leaves out takes the class default, and the notes say so.  Norms, the per-layer scalar and
the router's scale vector are not counted.
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
VOCAB_PER_LAYER_DEFAULT = 262_144  # Gemma4TextConfig's vocab_size_per_layer_input


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


def _per_layer_inputs(f: Fields, d: int, n: int) -> tuple[int, int, int]:
    """The per-layer table (looked up), its projections (multiplied) and one token's row of the table."""
    p = f.optional("hidden_size_per_layer_input", 0)
    if not p:
        f.read.add("vocab_size_per_layer_input")  # sizes nothing without per-layer inputs
        return 0, 0, 0
    if "vocab_size_per_layer_input" in f.config and f.config["vocab_size_per_layer_input"] is None:
        raise ScenarioError(f"field 'hidden_size_per_layer_input' = {p} but 'vocab_size_per_layer_input' is null: "
                            "the per-layer table's rows are not given", where=f.where,
                            hint="refused rather than guessed (transformers refuses null there too)")
    vocab = f.optional("vocab_size_per_layer_input", VOCAB_PER_LAYER_DEFAULT, minimum=1,
                       meaning=f"transformers' default {VOCAB_PER_LAYER_DEFAULT:,} rows in the per-layer table")
    row = n * p
    f.notes.append(f"per-layer input embeddings: a table of {vocab:,} x {row:,} (num_hidden_layers * "
                   f"hidden_size_per_layer_input = {n} * {p}), looked up per token like the input embedding; a "
                   f"projection of {d:,} x {row:,} and in every layer a gate and a projection of {d:,} x {p}, "
                   "multiplied")
    return vocab * row, d * row + n * 2 * d * p, row


def _shared_from(f: Fields, kinds: list[str]) -> int:
    """The first layer that reuses an earlier layer's cache (len(kinds) when none does), as
    ``Gemma4TextConfig.kv_sharing_modes`` places them: the last ``num_kv_shared_layers`` layers, each reusing the
    last earlier layer of its own kind."""
    n = len(kinds)
    shared = f.optional("num_kv_shared_layers", 0) or 0
    if shared >= n:
        raise ScenarioError(f"field 'num_kv_shared_layers' = {shared} with {n} layers: "
                            + ("more layers than the model has" if shared > n else
                               "no layer would keep a cache for them to reuse"), where=f.where,
                            hint="refused rather than guessed")
    first = n - shared
    missing = sorted(set(kinds[first:]) - set(kinds[:first]))
    if missing:  # transformers refuses this too (kv_sharing_modes)
        name = {"full": "full_attention", "window": "sliding_attention"}[missing[0]]
        raise ScenarioError(f"field 'num_kv_shared_layers' = {shared}: layers {first} to {n - 1} include "
                            f"{name} layers, but no earlier {name} layer keeps a cache they could reuse",
                            where=f.where, hint="refused rather than guessed")
    if shared:
        f.notes.append(f"num_kv_shared_layers = {shared}: layers {first} to {n - 1} reuse the cache of the last "
                       "earlier layer of their kind, keeping none and projecting no keys or values")
    return first


def _attention(f: Fields, d: int, heads: int, kv: int, hd: int, k_eq_v: bool, hd_field: str,
               kv_field: str) -> Attention:
    if heads % kv:
        raise ScenarioError(f"num_attention_heads ({heads}) is not a multiple of {kv_field} ({kv})", where=f.where)
    params = d * heads * hd + d * kv * hd * (1 if k_eq_v else 2) + heads * hd * d  # q; k (and v); o
    return Attention(params, 2 * kv * hd, f"2 (K and V) * {kv} kv heads * {hd} head_dim", hd, kv, heads,
                     head_dim_note=f"{hd_field} = {hd}", kv_heads_note=f"{kv_field} = {kv}")


def _global_kv(f: Fields, kv: int, k_eq_v: bool) -> tuple[int, str]:
    """Key-value heads of the global layers and the field that gives them."""
    given = f.optional("num_global_key_value_heads", None, minimum=1)
    if k_eq_v:
        if given is None:
            f.notes.append(f"'num_global_key_value_heads' absent: num_key_value_heads ({kv}) on global layers")
            return kv, "num_key_value_heads"
        return given, "num_global_key_value_heads"
    if given is not None and given != kv:  # transformers drops the field here; which one the author meant is open
        raise ScenarioError(f"field 'num_global_key_value_heads' = {given} but attention_k_eq_v is not true, and "
                            f"transformers then gives global layers num_key_value_heads ({kv})", where=f.where,
                            hint="refused rather than guessed which the file means")
    return kv, "num_key_value_heads"


def _mlp(f: Fields, d: int, widths: list[int]) -> Mlp:
    n = len(widths)
    dense = sum(gated(d, w) for w in widths)
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
    f.notes.append(f"enable_moe_block: every layer keeps its dense MLP ({num(dense)} weights in all, counted as one "
                   f"shared expert) beside {experts} routed experts, {active} per token")
    return routed(n, experts, active, d, width, shared=dense, shared_n=1)


def _blocks(f: Fields, mtype: str, d: int, n: int) -> Blocks:
    if f.get("use_bidirectional_attention") == "all":  # transformers then narrows the window to half plus one
        raise ScenarioError("field 'use_bidirectional_attention' = 'all': the window transformers then uses is not "
                            "read", where=f.where, hint="refused rather than guessed")
    kinds = _layer_kinds(f, n)
    first_shared = _shared_from(f, kinds)
    own, reuse = kinds[:first_shared], kinds[first_shared:]
    heads = f.need("num_attention_heads")
    kv = f.need("num_key_value_heads")
    hd, ghd = f.need("head_dim"), f.need("global_head_dim")
    window_att = (_attention(f, d, heads, kv, hd, False, "head_dim", "num_key_value_heads")
                  if "window" in kinds else None)
    k_eq_v = f.flag("attention_k_eq_v", False, "values projected apart on global layers (Gemma4TextConfig's default)")
    global_kv, global_field = _global_kv(f, kv, k_eq_v)
    full_att = _attention(f, d, heads, global_kv, ghd, k_eq_v, "global_head_dim", global_field)
    window = f.need("sliding_window", why="Gemma 4 sliding-window") if "window" in kinds else 0
    n_full, n_window = own.count("full"), own.count("window")
    r_full, r_window = reuse.count("full"), reuse.count("window")
    # a layer that reuses a cache keeps its query and output projections only
    attention = (n_full * full_att.params_per_layer + (n_window * window_att.params_per_layer if window_att else 0)
                 + r_full * 2 * d * heads * ghd + r_window * 2 * d * heads * hd)
    f.notes.append(f"layer_types: {kinds.count('window')} sliding-window layers ({kv} KV heads of {hd}) and "
                   f"{kinds.count('full')} global layers ({global_kv} KV heads of {ghd}"
                   + (", keys serving as values: no value projection, keys and values cached apart)" if k_eq_v
                      else ")")
                   + (f"; {n_window} and {n_full} of them keep a cache" if reuse else ""))
    intermediate = f.need("intermediate_size", why="Gemma 4")
    double = f.flag("use_double_wide_mlp", False, "")
    if double:
        f.notes.append(f"use_double_wide_mlp: the {len(reuse)} layers that reuse a cache have MLPs of "
                       f"2 * intermediate_size = {2 * intermediate:,}" if reuse else
                       "use_double_wide_mlp is true but no layer reuses a cache: every MLP single-width (transformers "
                       "widens only those)")
    widths = [intermediate] * len(own) + [intermediate * (2 if double else 1)] * len(reuse)
    table, projections, row = _per_layer_inputs(f, d, n)
    return Blocks(attention=full_att, attention_params=attention, full_layers=n_full,
                  full_elements=n_full * full_att.kv_elements_per_layer, mlp=_mlp(f, d, widths),
                  window_layers=n_window, window=window, window_attention=window_att,
                  shared_full_layers=r_full, shared_window_layers=r_window, per_layer_embedding=table,
                  per_layer_inputs=projections, per_layer_row=row)


FAMILIES = (
    Family("gemma4", {"gemma4": True, "gemma4_text": True},
           {"Gemma4ForConditionalGeneration": "gemma4", "Gemma4ForCausalLM": "gemma4_text"},
           mlp=lambda f, mtype, d, n: Mlp(), blocks=_blocks, class_defaults=CLASS_DEFAULTS, own_layer_types=True,
           # vision tokens attending both ways change no weight or cache
           known=frozenset({"use_bidirectional_attention"})),
)
