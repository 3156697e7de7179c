"""The reader every family shares: a config mapping in, the model's quantities out (``model_values``)."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from derive.errors import ScenarioError, escape_control

from .base import (
    KIND_NAMES,
    MAX_LAYERS,
    MAX_SIZE,
    Attention,
    ConfigValue,
    Family,
    Fields,
    KVLayout,
    ModelValues,
    ParamBreakdown,
    bn,
    count_text,
    guessed_shape_conflicts,
    listed_kinds,
    neutral,
    num,
)
from .precision import dispatch_element_bytes, precision
from .registry import FAMILY_OF, SUPPORTED_HINT, model_type, text_config


def param_breakdown(config: Mapping[str, Any], *, where: str = "config") -> ParamBreakdown:
    """Split a config's parameter count into embedding, attention, MLP and expert parts."""
    return _analyse(config, where).params


def checkpoint_bytes_per_param(config: Mapping[str, Any], *, where: str = "config") -> Fraction | None:
    """The checkpoint's mean bytes per weight over every weight, lookup tables included (its weights' size over
    ``ParamBreakdown.total``), where the config names its datatype; ``model_values``' ``bytes_per_param`` is the
    mean over the weights a decode step reads, which is at most this."""
    a = _analyse(config, where)
    return precision(a.cfg, a.params, a.where).checkpoint


def kv_layout(config: Mapping[str, Any], *, where: str = "config") -> KVLayout:
    """The config's KV cache by layer kind."""
    return _analyse(config, where).kv


@dataclass
class _Analysis:
    params: ParamBreakdown
    kv: KVLayout
    cfg: Mapping[str, Any]
    d: int
    attention: Attention
    where: str
    notes: list[str] = field(default_factory=list)


def _analyse(config: Mapping[str, Any], where: str) -> _Analysis:
    if not isinstance(config, Mapping):
        raise ScenarioError(f"a model config must be a JSON object, got {type(config).__name__}", where=where)
    mtype, type_notes = model_type(config, where)
    if not type_notes:
        return _analyse_as(config, where, mtype, type_notes)
    try:
        return _analyse_as(config, where, mtype, type_notes)
    except ScenarioError as err:
        if err.message.startswith("unknown architecture"):
            raise
        # a layer kind the guessed layout does not know (Granite's "mamba" read as Mixtral's) is the file's
        # own architecture, not a fault of the layout: say which type was refused
        name = config.get("model_type") or ", ".join(config.get("architectures") or ()) or "(none named)"
        raise ScenarioError(f"unknown architecture {name!r} cannot be read as {FAMILY_OF[mtype].name}, whose fields "
                            f"it has: {err.message}", where=err.where,
                            hint="refused rather than guessed; " + SUPPORTED_HINT) from None


def _analyse_as(config: Mapping[str, Any], where: str, mtype: str, type_notes: list[str]) -> _Analysis:
    fam = FAMILY_OF[mtype]
    tie_default = fam.model_types[mtype]
    cfg, where, notes = text_config(config, mtype, where)
    if mtype in ("qwen3_5", "qwen3_5_moe", "llama4") and cfg is not config:
        mtype = mtype + "_text" if mtype + "_text" in FAMILY_OF else mtype
    if fam.renames is not None:
        cfg, renamed = fam.renames(cfg, where)
        notes = notes + renamed
    filled = {k: v for k, v in fam.class_defaults.get(mtype, {}).items() if cfg.get(k) is None}
    if filled:
        cfg = {**cfg, **filled}
        notes = notes + [f"'{k}' absent: transformers' {mtype} default {v:,}" for k, v in filled.items()]
    f = Fields(cfg, where, mtype)
    f.notes.extend(type_notes + notes)

    d = f.need("hidden_size")
    n_layers = f.need("num_hidden_layers", maximum=MAX_LAYERS, aliases=("n_layer",))
    vocab = f.need("vocab_size")
    tie = f.flag("tie_word_embeddings", tie_default,
                 f"transformers' {mtype} default, {'tied' if tie_default else 'untied'} LM head")
    blocks = fam.blocks(f, mtype, d, n_layers) if fam.blocks is not None else None
    att = blocks.attention if blocks is not None else fam.attention(f, mtype, d)
    if not fam.latent and f.has("kv_lora_rank"):
        raise ScenarioError(f"field 'kv_lora_rank' is set but model_type {mtype!r} has no latent attention",
                            where=where)
    types = f.str_list("layer_types", n_layers)
    sliding = f.optional("sliding_window", None, minimum=1)
    f.read.discard("sliding_window")  # placed only by a pattern that applies it (Mistral's, not Llama's)
    if blocks is not None:
        if (types is not None or sliding is not None) and not fam.own_layer_types:
            raise ScenarioError(f"field '{'layer_types' if types is not None else 'sliding_window'}' given beside "
                                "'block_configs'", where=where, hint="each block says its own layer kind")
        counts = {"full": blocks.full_layers, "window": blocks.window_layers, "chunk": 0, "linear": 0}
        window, chunk = blocks.window, 0
    else:
        counts, window, chunk = (listed_kinds(f, types, sliding, {**KIND_NAMES, **fam.kind_names})
                                 if types is not None and not fam.own_layer_types
                                 else fam.pattern(f, mtype, n_layers, sliding))
    if counts["linear"] and fam.linear is None:
        raise ScenarioError(f"{counts['linear']} linear-attention layer(s) in a {mtype} config, whose layers the "
                            "reader knows only as attention: refused rather than read as another layer kind",
                            where=where, hint="a model with linear-attention layers needs its own model_type")
    linear = fam.linear(f, d) if fam.linear is not None and counts["linear"] else None
    # layers without attention (Nemotron-H's MLP and MoE layers) count in neither
    attention = (counts["full"] + counts["window"] + counts["chunk"]) * att.params_per_layer
    full_elements = counts["full"] * att.kv_elements_per_layer
    if blocks is not None:
        attention, full_elements = blocks.attention_params, blocks.full_elements
    if linear is not None:
        attention += counts["linear"] * linear.params_per_layer

    indexer_bytes, indexer_dims = Fraction(0), 0
    if mtype in ("deepseek_v32", "glm_moe_dsa") or f.has("index_head_dim"):
        idx_heads = f.need("index_n_heads", why="sparse-attention indexer")
        idx_dim = f.need("index_head_dim", why="sparse-attention indexer")
        q_rank = f.optional("q_lora_rank", None, minimum=1) or d
        idx_layers = _indexer_layers(f, n_layers)
        attention += idx_layers * (q_rank * idx_heads * idx_dim + d * idx_dim + d * idx_heads)  # wq_b, wk, weights
        indexer_bytes = idx_layers * (Fraction(idx_dim) + 4 * Fraction(-(-idx_dim // 128)))
        indexer_dims = idx_layers * idx_heads * idx_dim
        f.notes.append(f"sparse-attention indexer: {idx_dim} FP8 keys + one FP32 scale per 128 per token and "
                       f"layer ({idx_layers} layers), as in DeepSeek's reference inference code")

    mlp = blocks.mlp if blocks is not None else fam.mlp(f, mtype, d, n_layers)
    positions = fam.positions(f, mtype, d) if fam.positions is not None else 0
    if mlp.experts and mlp.active > mlp.experts:
        raise ScenarioError(f"{mlp.active} experts per token but only {mlp.experts} experts", where=where)
    if fam.notes is not None:
        fam.notes(f, mtype, att)
    mtp = f.optional("num_nextn_predict_layers", 0) or 0  # a whole number, checked: it is printed in a note
    if mtp:
        f.notes.append(f"{mtp} multi-token-prediction layer(s) not counted")

    if type_notes:
        _refuse_unplaced(config, cfg, f, fam, where)

    pb = ParamBreakdown(
        model_type=mtype, layers=n_layers, embedding=vocab * d, lm_head=0 if tie else vocab * d,
        attention=attention, dense_mlp=mlp.dense_mlp, routed_experts=mlp.routed,
        routed_experts_active=mlp.routed_active, shared_experts=mlp.shared, router=mlp.router,
        moe_layers=mlp.moe_layers, experts_total=mlp.experts, experts_active=mlp.active,
        experts_shared=mlp.shared_n, notes=tuple(f.notes), tied=tie,
        per_layer_embedding=blocks.per_layer_embedding if blocks is not None else 0,
        per_layer_inputs=blocks.per_layer_inputs if blocks is not None else 0,
        per_layer_row=blocks.per_layer_row if blocks is not None else 0, position_embedding=positions,
    )
    per = att.kv_elements_per_layer
    # sliding layers with heads of their own (MiMo, Gemma 4) say so; otherwise they are the full layers' attention
    win_att = blocks.window_attention if blocks is not None and blocks.window_attention is not None else att
    formulas = [f"full: {counts['full']} layers * {att.kv_formula}"]
    if counts["window"]:
        formulas.append(f"sliding window of {window}: {counts['window']} layers * {win_att.kv_formula}")
    if counts["chunk"]:
        formulas.append(f"chunks of {chunk}: {counts['chunk']} layers * {att.kv_formula}")
    if linear is not None:
        formulas.append(f"{linear.kind}: {counts['linear']} layers * ({linear.formula})")
    shared_full = blocks.shared_full_layers if blocks is not None else 0
    shared_window = blocks.shared_window_layers if blocks is not None else 0
    if shared_full or shared_window:
        formulas.append(f"reusing an earlier layer's cache: {shared_full} global and {shared_window} sliding-window "
                        "layers * 0")
    def query_dims(layers: int, a: Attention) -> int | Fraction | None:
        dim = a.prefill_head_dim if a.prefill_head_dim is not None else a.head_dim
        return 0 if not layers else (None if dim is None else layers * a.query_heads * dim)

    kv = KVLayout(full_layers=counts["full"], full_elements=full_elements,
                  window_layers=counts["window"], window=window,
                  window_elements=counts["window"] * win_att.kv_elements_per_layer,
                  chunk_layers=counts["chunk"], chunk=chunk, chunk_elements=counts["chunk"] * per,
                  state_layers=counts["linear"],
                  state_elements=counts["linear"] * linear.state_elements_per_layer if linear else 0,
                  state_bytes=counts["linear"] * linear.state_bytes_per_layer if linear else Fraction(0),
                  indexer_bytes_per_token=indexer_bytes, formulas=tuple(formulas),
                  shared_full_layers=shared_full, shared_window_layers=shared_window,
                  window_query_dims=query_dims(counts["window"] + shared_window, win_att),
                  chunk_query_dims=query_dims(counts["chunk"], att),
                  # every layer of a sparse attention selects its top k (DeepSeek-V3.2: all 61)
                  sparse_query_dims=query_dims(n_layers if indexer_dims else 0, att), indexer_dims=indexer_dims)
    return _Analysis(pb, kv, cfg, d, att, where, list(f.notes))


def _refuse_unplaced(config: Mapping[str, Any], cfg: Mapping[str, Any], f: Fields, fam: Family, where: str) -> None:
    """A file of an unknown architecture is read as a known family only when that family read every field
    that could set a layer kind or a tensor shape; a field it did not read may be a layer it does not know
    (Nemotron-H's hybrid_override_pattern read as GLM-4.5's attention + MoE gave 102B for a 31.6B model)."""
    unplaced = sorted(k for k, v in cfg.items()
                      if v is not None and k not in f.read and k not in fam.known and not neutral(k))
    conflicts = guessed_shape_conflicts(cfg)
    if unplaced or conflicts:
        archs = config.get("architectures")
        name = config.get("model_type") or (", ".join(archs) if archs else "(none named)")
        why = [f"its fields {', '.join(unplaced)} are not placed by the {fam.name} layout it otherwise matches"
               ] if unplaced else []
        if conflicts:  # an activation or a stack that layout does not have changes shapes it would count
            why.append(f"{'; '.join(conflicts)} does not fit the {fam.name} layout"
                       + ("" if unplaced else " it otherwise matches") + " (decoder-only, SiLU-gated MLP)")
        raise ScenarioError(f"unknown architecture {name!r}: {', and '.join(why)}, so its layers cannot be read "
                            "exactly", where=where, hint="refused rather than guessed; "
                                                         + SUPPORTED_HINT)


def _indexer_layers(f: Fields, n_layers: int) -> int:
    """The layers that run a sparse attention's indexer, with its weights and key cache: every layer, or those
    ``indexer_types`` marks "full" (GLM-5.2: a "shared" layer reuses the top-k of the full layer before it)."""
    kinds = f.str_list("indexer_types", n_layers)
    freq = f.optional("index_topk_freq", 1, minimum=1)  # whole numbers, checked whether or not the list says more
    f.optional("index_skip_topk_offset", 0)
    if kinds is None:
        if freq != 1 or f.get("index_topk_pattern") is not None:
            key = "index_topk_freq" if freq != 1 else "index_topk_pattern"
            raise ScenarioError(f"field '{key}' ({escape_control(f.config[key], limit=80)}) without 'indexer_types': "
                                "which layers share an indexer is not said", where=f.where,
                                hint="a file that lists the layers' indexers in 'indexer_types' is read")
        return n_layers
    unknown = sorted({k for k in kinds if k not in ("full", "shared")})
    if unknown or kinds[0] != "full":
        what = (f"an unknown kind {unknown[0]!r}" if unknown
                else "a first layer that shares an indexer before any layer has one")
        raise ScenarioError(f"field 'indexer_types' has {what}", where=f.where,
                            hint="known kinds: full, shared (the top-k of the full layer before it)")
    if f.get("index_topk_pattern") is not None:
        raise ScenarioError("fields 'indexer_types' and 'index_topk_pattern' both say which layers share an indexer",
                            where=f.where, hint="keep one of them")
    full = kinds.count("full")
    f.notes.append(f"indexer_types lists the layers: {full} run the indexer, {n_layers - full} reuse the top-k of "
                   "the full layer before them (no indexer weights or keys of their own)")
    return full


def _topk(cfg: Mapping[str, Any], where: str = "config") -> int:
    """A sparse-attention model's ``index_topk``: the tokens each query reads of its cache (DeepSeek-V3.2: 2,048)."""
    topk = cfg.get("index_topk")
    if isinstance(topk, bool) or not isinstance(topk, int) or topk < 1:
        raise ScenarioError(f"field 'index_topk' must be a whole number of tokens >= 1 for a model with a sparse-"
                            f"attention indexer, got {topk!r}", where=where,
                            hint="it sets how many cached tokens a decode step reads")
    return topk


def hidden_values(d: int) -> dict[str, ConfigValue]:
    """What the hidden size gives, for every reader: ``d_model``, and what a link carries per token (all-reduces,
    all-to-alls, pipeline hand-overs), the hidden vector in BF16, the usual datatype on the wire (an FP8
    dispatch, DeepSeek's, is a --set)."""
    return {"d_model": ConfigValue(Fraction(d), "1", f"hidden_size = {d}"),
            "token_activation_bytes": ConfigValue(Fraction(2 * d), "B/token",
                                                  f"hidden_size = {d} elements in BF16 (2 bytes each) per token on "
                                                  "a link; --set token_activation_bytes=... for an FP8 dispatch")}


def dense_expert_values() -> dict[str, ConfigValue]:
    """A dense model is one expert that every token uses, for every reader: the lecture's 256 and 8 must not
    reach it."""
    return {"experts_total": ConfigValue(Fraction(1), "1", "a dense model: no routed MoE layer, one MLP every "
                                         "token uses (counted as one expert)"),
            "experts_active": ConfigValue(Fraction(1), "1", "a dense model: its one MLP is active for every token"),
            "params_routed": ConfigValue(Fraction(0), "param", "a dense model: no routed experts, every weight is in "
                                         "the dense part a layout splits over tensor parallelism")}


def bytes_value(value: Any, where: str) -> Fraction:
    """A bytes-per-element value given by a user or a scenario, as an exact positive fraction."""
    if isinstance(value, bool):
        raise ScenarioError(f"bytes_per_kv_element must be a number, got {value!r}", where=where)
    try:
        if isinstance(value, Fraction | int):
            out = Fraction(value)
        elif hasattr(value, "p") and hasattr(value, "q"):  # sympy.Rational
            out = Fraction(int(value.p), int(value.q))
        else:
            out = Fraction(str(value))
    except (ValueError, TypeError, ZeroDivisionError):
        raise ScenarioError(f"bytes_per_kv_element must be a number, got {value!r}", where=where) from None
    if out <= 0:
        raise ScenarioError(f"bytes_per_kv_element must be positive, got {out}", where=where)
    return out


def model_values(config: Mapping[str, Any], *, bytes_per_kv_element: Fraction | Any | None = None,
                 default_bytes_per_kv_element: Fraction | Any | None = None,
                 where: str = "config") -> ModelValues:
    """Model quantities from a Hugging Face style config mapping.

    Returns ``params_total``, ``params_active`` (compute convention: no input embedding, output head
    included), ``params_embedding``, ``layers``, the KV cache by layer kind (``kv_bytes_per_token``,
    ``kv_window_bytes_per_token``, ``attention_window``, ``kv_chunk_bytes_per_token``,
    ``attention_chunk``, ``kv_state_bytes``), ``bytes_per_kv_element``, ``d_model``; ``head_dim``,
    ``kv_heads``, ``query_heads``, ``kv_cache_layers`` and ``global_attention_layers`` for non-latent
    attention; the expert counts for mixture-of-experts models, with ``moe_layers`` and the dispatch datatype
    ``dispatch_bytes_per_element`` (``precision.dispatch_element_bytes``); ``bytes_per_param`` when the config
    names its datatype; ``context`` (its maximum, ``max_position_embeddings``) when given;
    ``per_layer_row_params``, the row of the per-layer tables beside the input embedding's (Gemma 4 E2B/E4B; 0 else).
    ``bytes_per_kv_element`` given here wins over the config's datatype (the user set it);
    ``default_bytes_per_kv_element`` is used only when the config names no datatype (else 2).
    Raises ``ScenarioError`` for an unknown architecture, a missing size field or a bad value.
    """
    a = _analyse(config, where)
    pb, kv, cfg = a.params, a.kv, a.cfg
    L = pb.layers
    prec = precision(cfg, pb, a.where)
    notes: list[str] = list(pb.notes) + list(prec.notes)
    if bytes_per_kv_element is not None:
        e = bytes_value(bytes_per_kv_element, where)
        e_note = "bytes per cached element: set by the user"
    elif prec.bytes_per_kv_element is not None:
        e, e_note = prec.bytes_per_kv_element, prec.kv_note
    elif default_bytes_per_kv_element is not None:
        e = bytes_value(default_bytes_per_kv_element, where)
        e_note = "bytes per cached element: the config names no datatype; from the scenario"
    else:
        e = Fraction(2)
        e_note = "bytes per cached element: the config names no datatype; 2 (bf16) assumed"
        notes.append("config gives no torch_dtype: KV cache counted at 2 bytes per element (bf16)")
    defaults = ("; " + "; ".join(pb.notes)) if pb.notes else ""

    parts = [f"embedding {num(pb.embedding)}"]
    parts.append(f"LM head {num(pb.lm_head)}" if pb.lm_head else "LM head tied to the embedding")
    if pb.per_layer_embedding:
        parts.append(f"per-layer embedding {num(pb.per_layer_embedding)} + its projections "
                     f"{num(pb.per_layer_inputs)}")
    if pb.position_embedding:
        parts.append(f"learned position embedding {num(pb.position_embedding)} (a lookup)")
    parts.append(f"attention {num(pb.attention)} ({L} layers)")
    if pb.dense_mlp:
        parts.append(f"dense MLP {num(pb.dense_mlp)} ({L - pb.moe_layers} layers)")
    if pb.is_moe:
        parts.append(f"routed experts {num(pb.routed_experts)} ({pb.moe_layers} MoE layers x {pb.experts_total})")
        if pb.shared_experts:
            parts.append(f"shared experts {num(pb.shared_experts)}")
        parts.append(f"routers {num(pb.router)}")
    conv = "; norms, biases and sinks not counted"
    total_note = (" + ".join(parts) + conv + f"; {bn(pb.total_non_embedding)} without embeddings" + defaults)
    lookup = ("the embedding matrix counted once, as the tied output head" if pb.tied else
              f"minus the input embedding {num(pb.embedding)} (a lookup), output head kept")
    if pb.per_layer_embedding:
        lookup += f", minus the per-layer embedding {num(pb.per_layer_embedding)} (a lookup)"
    if pb.position_embedding:
        lookup += f", minus the learned position embedding {num(pb.position_embedding)} (a lookup)"
    active_note = (f"multiplied per token (compute convention): {num(pb.active_with_embedding)} on the token's path, "
                   f"{lookup}; "
                   f"{bn(pb.active_with_embedding)} with the embedding, {bn(pb.active_non_embedding)} without "
                   "any embedding")
    if pb.is_moe:
        active_note += (f"; {pb.experts_active} of {pb.experts_total} routed experts per MoE layer, shared experts "
                        "and routers counted")
    if pb.tied:
        active_words = (f"params_active {bn(pb.active)} (tied embeddings: the matrix counts once, as the output "
                        f"head), {bn(pb.active_non_embedding)} without it")
    else:
        active_words = (f"params_active {bn(pb.active)} without the input embedding, output head included "
                        f"({bn(pb.active_with_embedding)} with it, {bn(pb.active_non_embedding)} without any "
                        "embedding)")
    if pb.per_layer_embedding:
        active_words += f"; the per-layer embedding {bn(pb.per_layer_embedding)} (a lookup) left out"
    if pb.position_embedding:
        active_words += f"; the learned position embedding {bn(pb.position_embedding)} (a lookup) left out"
    notes.append(f"params_total {bn(pb.total)} with embeddings ({bn(pb.total_non_embedding)} without); "
                 + active_words)

    layout = "; ".join(kv.formulas)
    k_full = Fraction(kv.full_elements) * e + kv.indexer_bytes_per_token
    kv_note = (f"{layout}; * {num(e)} B per element; only the full layers grow with the context"
               + (f" (+ indexer {num(kv.indexer_bytes_per_token)} B)" if kv.indexer_bytes_per_token else "")
               + defaults)
    if kv.window_layers or kv.chunk_layers or kv.state_layers:
        parts_kv = [f"at long context {num(k_full)} B per token"]
        if kv.window_layers or kv.chunk_layers:
            every = (Fraction(kv.full_elements + kv.window_elements + kv.chunk_elements) * e
                     + kv.indexer_bytes_per_token)
            parts_kv.append(f"every attention layer counted as full would be {num(every)}")
        if kv.state_layers:
            parts_kv.append(f"plus a fixed {num(kv.state_bytes_at(e))} B per sequence of recurrent state "
                            "(linear-attention or Mamba layers)")
        notes.append(f"KV by layer kind: {layout}; " + ", ".join(parts_kv) + "; see kv_bytes_per_sequence")

    out = ModelValues({
        "params_total": ConfigValue(Fraction(pb.total), "param", total_note),
        "params_active": ConfigValue(Fraction(pb.active), "param", active_note),
        "params_embedding": ConfigValue(Fraction(pb.lookup), "param",
                                        f"input token embedding: vocab_size {num(pb.embedding // a.d)} * hidden_size "
                                        f"{num(a.d)}" + (f", + the per-layer embedding {num(pb.per_layer_embedding)}, "
                                                         "also looked up per token, not multiplied"
                                                         if pb.per_layer_embedding else "")
                                        + (f", + the learned position embedding {num(pb.position_embedding)}, "
                                           "also looked up per token, not multiplied"
                                           if pb.position_embedding else "")),
        "params_output_head": ConfigValue(
            Fraction(pb.output_head), "param",
            (f"the embedding matrix, tied as the output head ({num(pb.output_head)})" if pb.tied
             else f"the LM head ({num(pb.output_head)})")
            + ": in params_active, and multiplied for a prompt's last token only"),
        "layers": ConfigValue(Fraction(L), "1", f"num_hidden_layers = {L}"),
        "kv_bytes_per_token": ConfigValue(k_full, "B/token", kv_note),
        "kv_window_bytes_per_token": ConfigValue(Fraction(kv.window_elements) * e, "B/token",
                                                 f"{kv.window_layers} sliding-window layers" if kv.window_layers
                                                 else "no sliding-window layers"),
        "attention_window": ConfigValue(Fraction(kv.window), "token/seq",
                                        f"sliding_window = {kv.window}" if kv.window_layers else
                                        "no sliding-window layers"),
        "kv_chunk_bytes_per_token": ConfigValue(Fraction(kv.chunk_elements) * e, "B/token",
                                                f"{kv.chunk_layers} chunked-attention layers" if kv.chunk_layers
                                                else "no chunked-attention layers"),
        "attention_chunk": ConfigValue(Fraction(kv.chunk), "token/seq",
                                       f"attention_chunk_size = {kv.chunk}" if kv.chunk_layers else
                                       "no chunked-attention layers"),
        # sparse attention (DeepSeek-V3.2): the latent cache holds every token, a decode step reads the top k of it
        "kv_sparse_bytes_per_token": ConfigValue(
            Fraction(kv.full_elements) * e if kv.indexer_bytes_per_token else Fraction(0), "B/token",
            "sparse attention: of kv_bytes_per_token, the latent cache's bytes, of which a decode step reads the "
            "indexer's top attention_topk tokens only (the indexer's own keys are read for every token)"
            if kv.indexer_bytes_per_token else "no sparse attention: a decode step reads every cached token"),
        "attention_topk": ConfigValue(
            Fraction(_topk(cfg, a.where) if kv.indexer_bytes_per_token else 0), "token/seq",
            f"index_topk = {_topk(cfg, a.where):,}" if kv.indexer_bytes_per_token else "no sparse attention"),
        "kv_state_bytes": ConfigValue(kv.state_bytes_at(e), "B/seq",
                                      f"{kv.state_layers} layers with a fixed-size recurrent state (linear "
                                      "attention or Mamba), one per sequence whatever the context"
                                      if kv.state_layers else "no linear-attention or state-space layers"),
        "bytes_per_kv_element": ConfigValue(e, "B", e_note, native=bytes_per_kv_element is None),
        **hidden_values(a.d),
    })
    # decode reads one row of each table per new token, never a table whole; the library adds this row to the
    # input embedding's (d_model), so a width set by hand keeps it
    out["per_layer_row_params"] = ConfigValue(
        Fraction(pb.per_layer_row), "param/token",
        f"one token's lookups read one row of the per-layer tables: {num(pb.per_layer_row)} (num_hidden_layers * "
        "hidden_size_per_layer_input), beside the input embedding's row of hidden_size" if pb.per_layer_row
        else "no per-layer embedding tables: a token's lookup reads the input embedding's row only")
    if pb.per_layer_row:
        notes.append(f"per-layer embedding: decode looks up one row of {num(pb.per_layer_row)} per new token "
                     "beside the input embedding's, never reading the table whole (per_layer_row_params)")
    # the routed experts one token skips, counted: the library's reading (total - input embedding - active) is short
    # by the output head where it is the input table (tied), so such a model gives its own count
    skipped = pb.routed_experts - pb.routed_experts_active
    if skipped != max(0, pb.total - pb.lookup - pb.active):
        out["params_routed_skipped"] = ConfigValue(
            Fraction(skipped), "param",
            f"the routed experts' weights one token skips, counted: {bn(pb.routed_experts)} routed less the "
            f"{bn(pb.routed_experts_active)} it uses (total - input embedding - active would leave out the tied "
            "output head)")
    if prec.bytes_per_param is not None:
        out["bytes_per_param"] = ConfigValue(prec.bytes_per_param, "B/param", prec.param_note, native=True)
    max_ctx = cfg.get("max_position_embeddings")
    if isinstance(max_ctx, int) and not isinstance(max_ctx, bool) and max_ctx > MAX_SIZE:
        # some files say "unlimited" this way (1e30): not a context to read, said so
        notes.append(f"max_position_embeddings = {count_text(max_ctx)} is no real context: not used")
        max_ctx = None
    if max_ctx is not None:  # a value that is not a context (-1, 0, true, 1.5) is an error, never silently dropped
        max_ctx = Fields(cfg, a.where, "").whole("max_position_embeddings", max_ctx, 1)
        out["context"] = ConfigValue(Fraction(max_ctx), "token/seq",
                                     f"the model's maximum context, max_position_embeddings = {max_ctx:,}",
                                     native=True)
        out["max_context"] = ConfigValue(Fraction(max_ctx), "token/seq",
                                         f"max_position_embeddings = {max_ctx:,}")
    att = a.attention
    if att.latent:
        rank = att.kv_elements_per_layer
        out["head_dim"] = ConfigValue(Fraction(att.head_dim), "1",
                                      f"latent attention, decoding absorbed: the mean of the scores' {rank} elements "
                                      f"(kv_lora_rank + qk_rope_head_dim) and the values' {2 * att.head_dim - rank} "
                                      "(kv_lora_rank)")
        out["kv_heads"] = ConfigValue(Fraction(1), "1", "latent attention: one cached latent shared by every query "
                                      "head (multi-query over the cache)")
        out["kv_elements_per_layer"] = ConfigValue(Fraction(rank), "1/token",
                                                   f"latent attention: kv_lora_rank + qk_rope_head_dim = {rank} "
                                                   "elements per layer and token, one latent serving as keys and "
                                                   "values (not 2 * kv_heads * head_dim)")
        out["query_heads"] = ConfigValue(Fraction(att.query_heads), "1", f"num_attention_heads = {att.query_heads}")
        if att.prefill_head_dim is not None:
            out["prefill_head_dim"] = ConfigValue(
                att.prefill_head_dim, "1", "latent attention: a prefill runs the non-absorbed form, the mean of its "
                f"score (qk_nope_head_dim + qk_rope_head_dim) and value (v_head_dim) head dimensions, "
                f"{att.prefill_head_dim}")
    elif att.head_dim is not None and att.kv_heads is not None:
        out["head_dim"] = ConfigValue(Fraction(att.head_dim), "1",
                                      (att.head_dim_note or f"head_dim = {att.head_dim}") + defaults)
        out["kv_heads"] = ConfigValue(Fraction(att.kv_heads), "1",
                                      (att.kv_heads_note or f"num_key_value_heads = {att.kv_heads}") + defaults)
        out["query_heads"] = ConfigValue(Fraction(att.query_heads), "1", f"num_attention_heads = {att.query_heads}")
    if att.head_dim is not None and att.kv_heads is not None:
        if kv.full_layers:
            out["kv_cache_layers"] = ConfigValue(Fraction(kv.full_layers), "1",
                                                 "layers whose KV cache spans the whole context")
        if kv.indexer_bytes_per_token:
            # sparse attention (DeepSeek-V3.2): each query attends to the indexer's top-k tokens, never the whole
            # context, so no layer's attention grows with it; the floors leave that attention out, as a window's
            topk = cfg.get("index_topk")
            out["global_attention_layers"] = ConfigValue(
                Fraction(0), "1", "sparse attention: each query attends to the indexer's top "
                + (f"{topk:,} tokens (index_topk)" if isinstance(topk, int) else "k tokens")
                + ", not the whole context: no layer's attention spans it (sparse_attention_dims and indexer_dims "
                  "count the work it does; the cache still holds every token)")
        else:
            out["global_attention_layers"] = ConfigValue(
                Fraction(kv.full_layers + kv.shared_full_layers), "1",
                "layers whose attention spans the whole context" + (
                    f" ({kv.shared_full_layers} of them reusing an earlier layer's cache)"
                    if kv.shared_full_layers else "") + (
                    "; none: every layer's attention is windowed, chunked or linear (a window's or a chunk's "
                    "attention FLOPs are window_attention_dims' and chunk_attention_dims')"
                    if not kv.full_layers + kv.shared_full_layers else ""))
        sparse_layers = kv.full_layers + kv.shared_full_layers if kv.indexer_bytes_per_token else 0
        for key, dims, kind, layers in (
                ("window_attention_dims", kv.window_query_dims, "sliding-window", kv.window_layers
                 + kv.shared_window_layers),
                ("chunk_attention_dims", kv.chunk_query_dims, "chunked-attention", kv.chunk_layers),
                ("sparse_attention_dims", kv.sparse_query_dims, "sparse-attention", sparse_layers)):
            if dims is not None:
                out[key] = ConfigValue(Fraction(dims), "1", (
                    f"{layers} {kind} layers x query heads x head dimension = {num(dims)}" if layers else
                    f"no {kind} layer"))
        out["indexer_dims"] = ConfigValue(Fraction(kv.indexer_dims), "1", (
            f"the sparse-attention indexer: layers x index_n_heads x index_head_dim = {num(kv.indexer_dims)}"
            if kv.indexer_dims else "no sparse-attention indexer"))
    if pb.is_moe:
        out["experts_total"] = ConfigValue(Fraction(pb.experts_total), "1",
                                           f"routed experts per MoE layer ({pb.moe_layers} of {L} layers are MoE)")
        # what an expert-parallel all-to-all carries: the family's count of MoE layers, the dispatch datatype
        out["moe_layers"] = ConfigValue(Fraction(pb.moe_layers), "1",
                                        f"layers whose MLP is a routed MoE: {pb.moe_layers} of {L}")
        dispatch, dispatch_note = dispatch_element_bytes(cfg)
        out["dispatch_bytes_per_element"] = ConfigValue(dispatch, "B", dispatch_note)
        out["experts_active"] = ConfigValue(Fraction(pb.experts_active), "1", "routed experts per token")
        # what a layout spreads over expert parallelism (the rest, shared experts included, is the dense part)
        out["params_routed"] = ConfigValue(Fraction(pb.routed_experts), "param",
                                           f"routed experts, all MoE layers: {bn(pb.routed_experts)} ({pb.moe_layers} "
                                           f"MoE layers x {pb.experts_total} experts)")
        if pb.experts_shared:
            out["experts_shared"] = ConfigValue(Fraction(pb.experts_shared), "1",
                                                "shared experts per MoE layer, used by every token")
    else:
        out.update(dense_expert_values())
    out.notes = tuple(dict.fromkeys(notes))
    return out


def load_config_json(path: pathlib.Path | str, *, bytes_per_kv_element: Fraction | Any | None = None
                     ) -> ModelValues:
    """Read a ``config.json`` file and return ``model_values`` for it; every error names the file."""
    path = pathlib.Path(path)
    return model_values(read_config_json(path), bytes_per_kv_element=bytes_per_kv_element, where=str(path))


def read_config_json(path: pathlib.Path | str) -> Mapping[str, Any]:
    """The JSON object of a ``config.json`` file; every error is one line naming the file."""
    path = pathlib.Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"config file not found: {path}", where=str(path)) from None
    except (OSError, UnicodeDecodeError) as err:
        raise ScenarioError(f"cannot read {path}: {err}", where=str(path)) from None
    try:
        config = json.loads(text)
    except json.JSONDecodeError as err:
        raise ScenarioError(f"invalid JSON in {path}: {err.msg} at line {err.lineno} column {err.colno}",
                            where=str(path)) from None
    except RecursionError:
        raise ScenarioError(f"invalid JSON in {path}: nested too deeply", where=str(path)) from None
    if not isinstance(config, Mapping):
        raise ScenarioError(f"{path} must hold a JSON object, got {type(config).__name__}", where=str(path))
    return config
