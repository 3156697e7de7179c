"""Counting a config's model on PyTorch's meta device: exact counts for any family transformers knows.

Where ``torch`` and ``transformers`` are installed (``pip install "derive-llm[meta]"``), transformers can build
the model a ``config.json`` describes on PyTorch's ``meta`` device: every module and every tensor's shape, no
memory and no weights.  Counting that model is exact for every family transformers knows, not only the ones the
hand reader (``reader``) knows.  Both are imported inside the functions here, so nothing changes for a user
without them, and code from a model's repository is never run (``trust_remote_code=False`` always: a model type
that needs its own code is refused).

Main functions
--------------
- ``meta_available()``: whether ``torch`` and ``transformers`` can be imported.
- ``meta_count(config, where=...)``: the ``MetaCount`` of a config (raises ``MissingExtraError`` without them).
- ``meta_model_values(config, ...)``: the quantities ``model_values`` gives, where the count determines them.
- ``model_values_with_meta(config, ...)``: the library's config reader: the hand reader, and where it refuses a
  ``model_type`` it does not know and the extra is installed, the meta-device count instead, with a note.
- ``cross_check(config, where=...)``: the hand reader's counts beside the meta-device counts (``CrossCheck``).

What is counted, and what is left out
-------------------------------------
- ``params_matrices``: every parameter tensor of two or more dimensions whose name does not end in ``bias``,
  tied tensors once.  This is the hand reader's convention (weight matrices, convolutions, fused expert
  tensors, Jamba's ``inner x state`` ``A_log``; not norm gains, biases, per-head vectors or sinks), so the two
  counts can be compared exactly; ``params_all`` counts every tensor.
- ``params_embedding``: the input embedding's weight (``get_input_embeddings``); ``tied`` when the output head
  is that same tensor.  ``params_lookup``: every other embedding table (Gemma 4 E2B/E4B's per-layer table), which a
  token looks up and does not multiply: counted with the input embedding in ``params_embedding``'s value and left
  out of ``params_active``, as the hand reader counts them.
- Attention modules: a module whose class name ends in ``Attention`` and that holds no ``A_log`` parameter,
  outside another counted module.  State-space modules: a module that holds an ``A_log`` parameter (Mamba,
  Mamba-2, Gated DeltaNet: each keeps a fixed-size recurrent state per sequence).
- Routed experts: the matrices under modules named ``experts``; the experts per layer from their leading
  dimension (or the list's length), the experts per token from ``top_k`` of that module's block or router,
  each given only when every MoE layer agrees.
- ``kv_elements_per_token``: the cached elements per token (``k_proj`` plus ``v_proj`` outputs summed over the
  attention modules; 0 without any), only where every attention module is known to be full attention: each with
  its own ``k_proj`` and ``v_proj``, no config field that could window, chunk, share or loop some layers, and
  ``layer_types`` (if given) naming as many full-attention layers as there are attention modules, its other
  entries state-space, MoE or MLP layers.  Otherwise ``None`` and ``kv_reason`` says why: a forward pass's use
  of the modules is not visible in the modules themselves.  Neither is given unless every layer's mixer is
  recognized (an attention or state-space module per layer at least, or ``layer_types`` naming the others as
  MLP or MoE layers): a mixer of another kind may keep a cache or a state.  The state a state-space module
  keeps per sequence is not read (``kv_state_bytes`` is left out where there is one).
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from derive.errors import MissingExtraError, ScenarioError

from .base import MAX_SIZE, ConfigValue, ModelValues, bn, count_text, num
from .precision import dtype, served
from .reader import bytes_value, dense_expert_values, hidden_values, kv_layout, model_values, param_breakdown
from .registry import ALIASES, ARCHITECTURES, FAMILY_OF, WRAPPERS

# the meta device builds every layer as a Python object: far above any real model, far below the hand cap
MAX_META_LAYERS = 4096
INSTALL_HINT = 'pip install "derive-llm[meta]" (torch and transformers)'
# config fields whose name says some layers may keep less than a full cache (a window, a chunk, a cache shared
# with another layer, a layer run more than once) or read less of it than they keep (a sparse attention's top-k
# selection, DeepSeek-V3.2's index_topk, MiniCPM4's sparse_config): the modules alone cannot say which, so KV is
# left out (a whole-cache read would put the step floor above a real step)
_KV_UNSURE = re.compile(r"window|chunk|kv_shar|shared_kv|share_kv|cross_layer|loop|recur|sparse_?att|sparse_config"
                        r"|^index_|moba|topk_blocks")


def cache_unsure_fields(fields: Mapping[str, object]) -> list[str]:
    """The set fields of a config whose names say some layers may keep, or read, less than a full cache."""
    return sorted(k for k, v in fields.items() if _KV_UNSURE.search(k) and v not in (None, False, 0, [], {}))


# layer_types entries: full attention, and layers that keep no cache growing with the context
_FULL_TYPES = frozenset({"full_attention", "attention", "global"})
_OTHER_TYPES = frozenset({"linear_attention", "mamba", "mamba2", "moe", "mlp"})


@dataclass(frozen=True)
class MetaCount:
    """What counting a config's model on the meta device determines exactly (see the module docstring)."""

    model_type: str
    model_class: str
    transformers_version: str
    torch_version: str
    layers: int | None
    hidden_size: int | None
    params_all: int
    params_matrices: int
    params_embedding: int
    params_lookup: int  # embedding tables besides the input embedding (looked up, not multiplied)
    tied: bool
    attention_modules: int
    state_modules: int
    module_kinds: tuple[tuple[str, int], ...]  # (class name, count) of the attention and state modules
    moe: bool
    routed_experts: int | None  # None: a mixture of experts whose experts are not in modules named "experts"
    experts_total: int | None
    experts_active: int | None
    kv_elements_per_token: int | None
    kv_reason: str  # why kv_elements_per_token is None ("" when it is known)
    layers_accounted: bool  # every layer's mixer recognized as attention or state-space (else KV and state unread)
    text_only: bool  # the language model of a multimodal config (its vision tower not built)
    params_output_head: int | None = None  # the output embeddings' weight (None: the model has none)

    @property
    def version_words(self) -> str:
        return f"transformers {self.transformers_version} and torch {self.torch_version}"


def _backends() -> tuple[Any, Any] | None:
    try:
        import torch
        import transformers
    except ImportError:
        return None
    return torch, transformers


def meta_available() -> bool:
    """Whether ``torch`` and ``transformers`` can be imported (the ``meta`` extra)."""
    return _backends() is not None


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return (text[0] if text else type(err).__name__)[:300]


def _build(config: Mapping[str, Any], where: str, torch: Any, transformers: Any) -> tuple[Any, Any, bool]:
    """The transformers config and the model built on the meta device; never runs a repository's code."""
    from transformers import AutoConfig, AutoModelForCausalLM

    version = transformers.__version__
    mtype = config.get("model_type")
    if not isinstance(mtype, str) or not mtype:
        raise ScenarioError("the config names no model_type, which transformers needs to build it", where=where)
    fields = {k: v for k, v in config.items() if k != "model_type"}
    text_fields = config.get("text_config")
    for key, value in (*fields.items(), *(text_fields.items() if isinstance(text_fields, Mapping) else ())):
        # every layer and every listed expert is a Python object on the meta device: refused before building
        if (re.search(r"layers|experts", key) and isinstance(value, int | float) and not isinstance(value, bool)
                and value > MAX_META_LAYERS):
            raise ScenarioError(f"field '{key}' is {value:,}, more than the {MAX_META_LAYERS:,} the meta device "
                                "builds", where=where)
    try:
        tcfg = AutoConfig.for_model(mtype, **fields)
    except ValueError as err:
        if "nrecognized" in str(err):
            raise ScenarioError(f"transformers {version} does not know model_type {mtype!r} either", where=where,
                                hint="code from a model's repository is never run (trust_remote_code=False)") from None
        raise ScenarioError(f"transformers {version} refuses this {mtype} config: {_first_line(err)}",
                            where=where) from None
    except Exception as err:  # noqa: BLE001 - a third-party config class: its failure is one line
        raise ScenarioError(f"transformers {version} refuses this {mtype} config: {type(err).__name__}: "
                            f"{_first_line(err)}", where=where) from None
    text = tcfg.get_text_config(decoder=True) if hasattr(tcfg, "get_text_config") else tcfg
    for cfg in (text, tcfg):
        layers = getattr(cfg, "num_hidden_layers", None)
        if isinstance(layers, int) and layers > MAX_META_LAYERS:
            raise ScenarioError(f"num_hidden_layers is {count_text(layers)}, more than the {MAX_META_LAYERS:,} layers "
                                "the meta device builds", where=where)
    last: Exception | None = None
    for cfg in ((text, tcfg) if text is not tcfg else (tcfg,)):
        try:
            with torch.device("meta"):
                return cfg, AutoModelForCausalLM.from_config(cfg, trust_remote_code=False), cfg is not tcfg
        except Exception as err:  # noqa: BLE001 - transformers' own refusal, as one line
            last = err
    raise ScenarioError(f"transformers {version} builds no causal language model for model_type {mtype!r}: "
                        f"{type(last).__name__}: {_first_line(last)}", where=where) from None


def _top_k(block: Any) -> int | None:
    """Experts per token of an MoE block: its own ``top_k`` or its router's."""
    for mod in (block, *block.children()):
        for attr in ("top_k", "num_experts_per_tok"):
            k = getattr(mod, attr, None)
            if isinstance(k, int) and not isinstance(k, bool) and k > 0:
                return k
    return None


def _matrix(name: str, p: Any) -> bool:
    return p.dim() >= 2 and not name.endswith("bias")


def _count(model: Any, cfg: Any, torch: Any) -> dict[str, Any]:
    params = dict(model.named_parameters())  # a tied tensor once
    emb = model.get_input_embeddings().weight
    out_mod = model.get_output_embeddings()
    tied = out_mod is not None and getattr(out_mod, "weight", None) is emb
    lookup = sum(mod.weight.numel() for mod in model.modules()
                 if isinstance(mod, torch.nn.Embedding) and mod.weight is not emb)
    kinds: Counter[str] = Counter()
    attention, state, taken = [], 0, []
    experts: list[tuple[str, Any]] = []
    moe_named = False
    # remove_duplicate=False: a module run at two places (a shared block) counts at each
    for name, mod in model.named_modules(remove_duplicate=False):
        cls = type(mod).__name__
        if re.search(r"expert|router|moe", cls, re.IGNORECASE) or name.rsplit(".", 1)[-1] == "experts":
            moe_named = True
        if name.rsplit(".", 1)[-1] == "experts":
            experts.append((name, mod))
        inside = any(name.startswith(t + ".") for t in taken)
        if inside:
            continue
        own = dict(mod.named_parameters(recurse=False))
        if "A_log" in own:
            state += 1
            kinds[cls] += 1
            taken.append(name)
        elif cls.endswith("Attention"):
            attention.append(mod)
            kinds[cls] += 1
            taken.append(name)
    routed: int | None = 0
    totals, actives = set(), set()
    for name, mod in experts:
        routed += sum(p.numel() for n, p in mod.named_parameters() if _matrix(n, p))
        if isinstance(mod, torch.nn.ModuleList):
            totals.add(len(mod))
        else:
            lead = {p.shape[0] for p in mod.parameters() if p.dim() >= 3}
            totals.add(lead.pop() if len(lead) == 1 else None)
        parent = model.get_submodule(name.rsplit(".", 1)[0]) if "." in name else model
        actives.add(_top_k(parent))
    if moe_named and not experts:
        routed = None
    e_total = totals.pop() if len(totals) == 1 else None
    e_active = actives.pop() if len(actives) == 1 else None
    if e_total is not None and e_active is not None and e_active > e_total:
        e_active = None

    kv, reason = None, ""
    unsure = cache_unsure_fields(cfg.to_dict())
    types = getattr(cfg, "layer_types", None)
    full_types = [t for t in types or () if t in _FULL_TYPES]
    layers = getattr(cfg, "num_hidden_layers", None)
    typed = (types is not None and len(types) == layers and all(t in _FULL_TYPES | _OTHER_TYPES for t in types)
             and len(full_types) == len(attention))
    # every layer's mixer recognized: one attention or state-space module per layer at least, or layer_types
    # naming the others (Nemotron-H's MLP and MoE layers); a mixer of another kind may keep a cache or a state
    accounted = isinstance(layers, int) and (len(attention) + state >= layers or typed)
    if not accounted:
        reason = (f"{len(attention)} attention and {state} state-space module(s) recognized for {layers} layers: "
                  "another layer's mixer may keep a cache or a state")
    elif not attention:
        kv = 0  # nothing keeps a cache that grows with the context
    elif unsure:
        reason = (f"field(s) {', '.join(unsure)} may window, chunk, share or repeat some layers' cache, or read "
                  "only part of it")
    elif types is not None and (any(t not in _FULL_TYPES | _OTHER_TYPES for t in types)
                                or len(full_types) != len(attention)):
        reason = (f"layer_types names layers other than full attention ({', '.join(sorted(set(types)))}) for "
                  f"{len(attention)} attention module(s)")
    elif not all(isinstance(getattr(a, "k_proj", None), torch.nn.Linear)
                 and isinstance(getattr(a, "v_proj", None), torch.nn.Linear) for a in attention):
        reason = "an attention module without its own k_proj and v_proj (latent or fused projections)"
    else:
        kv = sum(a.k_proj.out_features + a.v_proj.out_features for a in attention)
    return {
        "params_all": sum(p.numel() for p in params.values()),
        "params_matrices": sum(p.numel() for n, p in params.items() if _matrix(n, p)),
        "params_embedding": emb.numel(), "params_lookup": lookup, "tied": tied, "attention_modules": len(attention),
        "params_output_head": (out_mod.weight.numel() if out_mod is not None and getattr(out_mod, "weight", None)
                               is not None else None),
        "state_modules": state, "module_kinds": tuple(sorted(kinds.items())),
        "moe": moe_named, "routed_experts": routed if moe_named else 0,
        "experts_total": e_total, "experts_active": e_active, "kv_elements_per_token": kv, "kv_reason": reason,
        "layers_accounted": accounted,
    }


def meta_count(config: Mapping[str, Any], *, where: str = "config") -> MetaCount:
    """Build ``config``'s model on PyTorch's meta device with transformers and count it (``MetaCount``).

    Raises ``MissingExtraError`` without torch and transformers, ``ScenarioError`` (one line) for a
    ``model_type`` transformers does not know or a config it refuses.
    """
    found = _backends()
    if found is None:
        raise MissingExtraError("counting on the meta device needs torch and transformers", where=where,
                                hint=INSTALL_HINT)
    if not isinstance(config, Mapping):
        raise ScenarioError(f"a model config must be a JSON object, got {type(config).__name__}", where=where)
    torch, transformers = found
    verbosity = transformers.logging.get_verbosity()
    try:
        transformers.logging.set_verbosity_error()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cfg, model, text_only = _build(config, where, torch, transformers)
            counts = _count(model, cfg, torch)
    except (RecursionError, MemoryError) as err:
        raise ScenarioError(f"the config is too large to build on the meta device ({type(err).__name__})",
                            where=where) from None
    except ScenarioError:
        raise
    except Exception as err:  # noqa: BLE001 - transformers' modules are third-party code: one line
        raise ScenarioError(f"transformers {transformers.__version__} could not build this config on the meta "
                            f"device: {type(err).__name__}: {_first_line(err)}", where=where) from None
    finally:
        transformers.logging.set_verbosity(verbosity)
    whole = lambda v: v if isinstance(v, int) and not isinstance(v, bool) else None  # noqa: E731
    return MetaCount(model_type=str(config.get("model_type")), model_class=type(model).__name__,
                     transformers_version=transformers.__version__, torch_version=torch.__version__,
                     layers=whole(getattr(cfg, "num_hidden_layers", None)),
                     hidden_size=whole(getattr(cfg, "hidden_size", None)), text_only=text_only, **counts)


def _datatype(config: Mapping[str, Any], where: str) -> tuple[str | None, Fraction | None]:
    """The config's ``torch_dtype``/``dtype``, at the top or in ``text_config``."""
    name, size = dtype(config, where)
    text = config.get("text_config")
    if name is None and isinstance(text, Mapping):
        name, size = dtype(text, where)
    return name, size


def meta_model_values(config: Mapping[str, Any], *, bytes_per_kv_element: Fraction | Any | None = None,
                      default_bytes_per_kv_element: Fraction | Any | None = None, where: str = "config",
                      why: str = "") -> ModelValues:
    """The quantities of ``model_values`` that the meta-device count determines exactly.

    Always ``params_total`` (the hand reader's convention: weight matrices; ``params_all`` is in the note),
    ``params_embedding``, ``layers`` and ``d_model``; ``params_active`` and one expert per token only for a
    model without experts (for a mixture of experts the experts per layer and per token where every MoE layer
    agrees, ``params_active`` left to ``--set``); the KV values only where ``kv_elements_per_token`` is known;
    ``bytes_per_param`` only for a config without ``quantization_config``; ``context`` from
    ``max_position_embeddings``.  Every value's note and the first note say it was read on the meta device;
    ``why`` (e.g. "the hand reader does not know model_type 'mamba'") is added to that note.
    """
    c = meta_count(config, where=where)
    read = f"read on PyTorch's meta device with transformers {c.transformers_version}"
    head = read + (f" ({why})" if why else "")
    notes = [f"{head}: {c.model_class}"
             + (", the language model of a multimodal config (vision tower not built)" if c.text_only else "")
             + "; fields the file leaves out take transformers' defaults for its config class"]
    out = ModelValues()
    skipped = c.params_all - c.params_matrices
    out["params_total"] = ConfigValue(
        Fraction(c.params_matrices), "param",
        f"{read}: every weight tensor of two or more dimensions, embeddings included ({num(c.params_matrices)}); "
        f"norms, biases and per-head vectors ({num(skipped)}) not counted, as the hand reader counts; "
        f"{num(c.params_all)} with them")
    out["params_embedding"] = ConfigValue(
        Fraction(c.params_embedding + c.params_lookup), "param",
        f"{read}: the input embedding's weight ({num(c.params_embedding)})"
        + (f" and the other embedding tables ({num(c.params_lookup)}), looked up per token" if c.params_lookup
           else ""))
    if c.layers is not None:
        out["layers"] = ConfigValue(Fraction(c.layers), "1", f"num_hidden_layers = {c.layers}")
    if c.hidden_size is not None:
        out.update(hidden_values(c.hidden_size))
    # the meta device gives the other tables' sizes, not the row a token reads of them: that row is left out, as
    # kv_state_bytes is, and said
    if c.params_lookup:
        notes.append(f"per_layer_row_params not read on the meta device: the row a token reads of the other "
                     f"embedding tables ({num(c.params_lookup)} parameters) is not known there; "
                     "--set per_layer_row_params=...")
    else:
        out["per_layer_row_params"] = ConfigValue(Fraction(0), "param/token", f"{read}: no other embedding table")
    kinds = ", ".join(f"{n} {k}" for k, n in c.module_kinds) or "none"
    notes.append(f"{read}: {c.attention_modules} attention and {c.state_modules} state-space module(s) ({kinds})")
    if c.params_output_head is not None:
        out["params_output_head"] = ConfigValue(Fraction(c.params_output_head), "param",
                                                f"{read}: the output embeddings' weight"
                                                + (" (tied to the input embedding)" if c.tied else "")
                                                + ", multiplied for a prompt's last token only")
    if not c.moe:
        active = c.params_matrices - (0 if c.tied else c.params_embedding) - c.params_lookup
        lookup = ("the embedding matrix counted once, as the tied output head" if c.tied
                  else f"minus the input embedding {num(c.params_embedding)} (a lookup), output head kept")
        if c.params_lookup:
            lookup += f", minus the other embedding tables {num(c.params_lookup)} (lookups)"
        out["params_active"] = ConfigValue(Fraction(active), "param",
                                           f"{read}: no experts, so every counted weight is on each token's path, "
                                           f"{lookup}")
        out.update(dense_expert_values())
        notes.append(f"params_total {bn(c.params_matrices)}; params_active {bn(active)} (no experts)")
    else:
        routed = f"{bn(c.routed_experts)} in routed experts" if c.routed_experts is not None else (
            "routed experts not in modules named 'experts'")
        if c.experts_total is not None:
            out["experts_total"] = ConfigValue(Fraction(c.experts_total), "1",
                                               f"{read}: routed experts per MoE layer")
        if c.routed_experts is not None:
            out["params_routed"] = ConfigValue(Fraction(c.routed_experts), "param",
                                               f"{read}: parameters of the modules named 'experts'")
        if c.experts_active is not None and c.experts_total is not None:
            out["experts_active"] = ConfigValue(Fraction(c.experts_active), "1",
                                                f"{read}: the MoE blocks' top_k, routed experts per token")
        notes.append(f"params_total {bn(c.params_matrices)} ({routed}); params_active is not read for a mixture of "
                     "experts on the meta device (which weights a token uses is the forward pass's, not the "
                     "modules'): --set params_active=...")
    name, size = _datatype(config, where)
    name, narrower = served(name)
    if narrower is not None:
        notes.append(narrower)
    if bytes_per_kv_element is not None:
        e, e_note = bytes_value(bytes_per_kv_element, where), "bytes per cached element: set by the user"
    elif size is not None:
        e, e_note = size, f"bytes per cached element: {name}"
    elif default_bytes_per_kv_element is not None:
        e = bytes_value(default_bytes_per_kv_element, where)
        e_note = "bytes per cached element: the config names no datatype; from the scenario"
    else:
        e, e_note = Fraction(2), "bytes per cached element: the config names no datatype; 2 (bf16) assumed"
    if c.kv_elements_per_token is not None:
        k = Fraction(c.kv_elements_per_token) * e
        out["kv_bytes_per_token"] = ConfigValue(
            k, "B/token", f"{read}: k_proj + v_proj outputs of {c.attention_modules} full-attention modules, "
            f"{num(c.kv_elements_per_token)} elements per token * {num(e)} B")
        for key, unit in (("kv_window_bytes_per_token", "B/token"), ("attention_window", "token/seq"),
                          ("kv_chunk_bytes_per_token", "B/token"), ("attention_chunk", "token/seq"),
                          ("kv_sparse_bytes_per_token", "B/token"), ("attention_topk", "token/seq"),
                          ("window_attention_dims", "1"), ("chunk_attention_dims", "1"),
                          ("sparse_attention_dims", "1"), ("indexer_dims", "1")):
            out[key] = ConfigValue(Fraction(0), unit, f"{read}: no sliding-window, chunked or sparse attention "
                                                      "layer")
        out["bytes_per_kv_element"] = ConfigValue(e, "B", e_note, native=bytes_per_kv_element is None)
    else:
        notes.append(f"KV not read on the meta device: {c.kv_reason}; --set kv_bytes_per_token=... (and "
                     "kv_window_bytes_per_token, attention_window; kv_sparse_bytes_per_token, attention_topk for "
                     "a sparse attention) for this model")
    if not c.state_modules and c.kv_elements_per_token is not None:  # every mixer a plain attention module
        out["kv_state_bytes"] = ConfigValue(Fraction(0), "B/seq", f"{read}: no state-space layer")
    elif c.state_modules:
        notes.append(f"kv_state_bytes not read on the meta device: the state {c.state_modules} state-space "
                     "module(s) keep per sequence is the forward pass's, not the modules'; --set kv_state_bytes=...")
    else:
        notes.append(f"kv_state_bytes not read on the meta device: {c.kv_reason}; --set kv_state_bytes=...")
    quantized = config.get("quantization_config") is not None or (
        isinstance(config.get("text_config"), Mapping) and config["text_config"].get("quantization_config"))
    if size is not None and not quantized:
        out["bytes_per_param"] = ConfigValue(size, "B/param", f"{name}: {num(size)} bytes per weight", native=True)
    elif quantized:
        notes.append("quantization_config is not read on the meta device: --set bytes_per_param=...")
    text = config.get("text_config")
    # the file's own maximum context (at the top, else in text_config), never a config class's default
    max_ctx = config.get("max_position_embeddings")
    if max_ctx is None and isinstance(text, Mapping):
        max_ctx = text.get("max_position_embeddings")
    if isinstance(max_ctx, int) and not isinstance(max_ctx, bool) and 1 <= max_ctx <= MAX_SIZE:
        out["context"] = ConfigValue(Fraction(max_ctx), "token/seq",
                                     f"the model's maximum context, max_position_embeddings = {max_ctx:,}",
                                     native=True)
        out["max_context"] = ConfigValue(Fraction(max_ctx), "token/seq", f"max_position_embeddings = {max_ctx:,}")
    out.notes = tuple(dict.fromkeys(notes))
    return out


def _known_to_hand(config: Mapping[str, Any]) -> bool:
    """Whether the hand reader has a family for the config's ``model_type`` or ``architectures``."""
    mtype = config.get("model_type")
    if isinstance(mtype, str) and ALIASES.get(mtype, mtype) in FAMILY_OF:
        return True
    archs = config.get("architectures")
    return isinstance(archs, list) and any(isinstance(a, str) and a in ARCHITECTURES for a in archs)


def model_values_with_meta(config: Mapping[str, Any], *, bytes_per_kv_element: Fraction | Any | None = None,
                           default_bytes_per_kv_element: Fraction | Any | None = None,
                           where: str = "config") -> ModelValues:
    """The library's config reader: ``model_values``, and where it refuses a ``model_type`` it has no family
    for and torch and transformers are installed, ``meta_model_values`` with a note saying so.

    Without torch and transformers, or for a type the hand reader knows, its refusal is raised unchanged.
    """
    try:
        return model_values(config, bytes_per_kv_element=bytes_per_kv_element,
                            default_bytes_per_kv_element=default_bytes_per_kv_element, where=where)
    except ScenarioError as refusal:
        if (not isinstance(config, Mapping) or not isinstance(config.get("model_type"), str)
                or _known_to_hand(config) or not meta_available()):
            raise  # nothing to build by name, a layout the hand reader owns, or no torch: the refusal as it was
        mtype = config.get("model_type")
        text = config.get("text_config")
        inner = text.get("model_type") if isinstance(text, Mapping) else None
        # a wrapper the hand reader knows (mistral3) whose language model it does not
        why = (f"the hand reader does not know the language model of this {mtype} config (text_config "
               + (f"model_type {inner!r})" if inner is not None else "absent)")
               if mtype in WRAPPERS else f"the hand reader does not know model_type {mtype!r}")
        try:
            return meta_model_values(config, bytes_per_kv_element=bytes_per_kv_element,
                                     default_bytes_per_kv_element=default_bytes_per_kv_element, where=where,
                                     why=why)
        except ScenarioError as err:
            # the meta device's reason first: the hand reader's names many fields and may be shortened
            raise ScenarioError(f"not read on the meta device ({err.message}); {refusal.message}",
                                where=refusal.where, hint=refusal.hint) from None


@dataclass(frozen=True)
class CrossCheck:
    """The hand reader's counts beside the meta device's, for one config: name -> (hand, meta)."""

    counts: Mapping[str, tuple[int | None, int | None]]
    versions: str

    @property
    def differences(self) -> dict[str, tuple[int | None, int | None]]:
        """The counts that differ (a count one side does not determine is not compared)."""
        return {k: (h, m) for k, (h, m) in self.counts.items() if h is not None and m is not None and h != m}


def compare(hand: Mapping[str, int | None], meta: Mapping[str, int | None], versions: str = "") -> CrossCheck:
    """Pair two sets of counts by name (``cross_check``'s comparison, on its own for testing)."""
    return CrossCheck({k: (hand.get(k), meta.get(k)) for k in sorted(set(hand) | set(meta))}, versions)


def cross_check(config: Mapping[str, Any], *, where: str = "config", model_type: str | None = None) -> CrossCheck:
    """The hand reader's counts of ``config`` beside the meta-device counts: parameters (total, input
    embedding, routed experts), attention layers and state-space layers.  ``model_type`` builds the meta
    model as that type (a file whose own type names a repository's code, read by the hand reader through its
    ``architectures``, e.g. Kimi K2's ``kimi_k2`` as ``deepseek_v3``)."""
    pb, kv = param_breakdown(config, where=where), kv_layout(config, where=where)
    meta_cfg = config if model_type is None else dict(config, model_type=model_type)
    c = meta_count(meta_cfg, where=where)
    # a layer that reuses another layer's cache is an attention module all the same
    attention = (kv.full_layers + kv.window_layers + kv.chunk_layers + kv.shared_full_layers
                 + kv.shared_window_layers)
    hand = {"params_total": pb.total, "params_embedding": pb.lookup, "routed_experts": pb.routed_experts,
            "attention_layers": attention, "state_layers": kv.state_layers}
    meta = {"params_total": c.params_matrices, "params_embedding": c.params_embedding + c.params_lookup,
            "routed_experts": c.routed_experts, "attention_layers": c.attention_modules,
            "state_layers": c.state_modules}
    return compare(hand, meta, c.version_words)
