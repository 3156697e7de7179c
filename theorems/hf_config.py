"""Hugging Face ``config.json`` reader: model quantities from an architecture description.

A model's ``config.json`` names its shape (width, depth, heads, experts, latent ranks) but not its
parameter count or its KV-cache size.  This module derives those, exactly, in the units the lecture
uses, so that ``derive --model PATH/config.json`` (or a model preset's ``[config]`` table) supplies
``params_total``, ``params_active``, ``layers``, the expert counts and ``kv_bytes_per_token``.
All LLM-specific knowledge lives here, in ``theorems/``; the engine only calls ``model_values``.

Main functions
--------------
- ``model_values(config, bytes_per_kv_element=2, where=...)``: quantity name -> ``ConfigValue``.
- ``load_config_json(path)``: the same, read from a file (errors name the file).
- ``param_breakdown(config, where=...)``: the parameter count split into its parts.

Supported architectures (by ``model_type``, else by ``architectures``)
----------------------------------------------------------------------
- dense, multi-head / grouped-query / multi-query attention: ``llama``, ``mistral``, ``qwen2``,
  ``qwen3``, ``gemma``, ``gemma2``, ``gemma3_text`` (and ``gemma3``, whose text model sits in
  ``text_config``; the vision tower is not counted);
- mixture of experts: ``mixtral``, ``qwen2_moe``, ``qwen3_moe``, ``gpt_oss``;
- multi-head latent attention with mixture of experts: ``deepseek_v2``, ``deepseek_v3`` and
  ``kimi_k2`` (Kimi K2 reuses the DeepSeek-V3 layout).

Counting conventions
--------------------
- Parameters are the weight matrices: token embedding, LM head (unless ``tie_word_embeddings``),
  attention projections, MLP matrices (gated: gate, up and down, 3 matrices), MoE routers.  Norm
  gains, bias vectors and gpt-oss attention sinks are not counted (each well under 0.1 % of the
  models here); multi-token-prediction modules and vision towers are not counted.
- ``params_active`` is ``params_total`` minus the routed experts a token does not use; embedding,
  LM head, shared experts, dense layers and routers all count as active.  This is the DeepSeek-V3
  README's convention (671B / 37B).  OpenAI's gpt-oss figure (5.1B) leaves out the input embedding;
  ``param_breakdown`` gives the embedding separately for such comparisons.
- ``kv_bytes_per_token``: bytes of KV cache per token of context, summed over all layers.  GQA/MQA/
  MHA store ``2 * num_key_value_heads * head_dim`` elements per layer; MLA stores the compressed
  latent and the shared rope key, ``kv_lora_rank + qk_rope_head_dim``.  Sliding-window layers are
  counted as full attention (the value is exact for contexts up to the window and an upper bound
  beyond it); the note says so when a config has a window.

Defaults
--------
A field that defines the model's size (width, depth, heads, vocabulary, FFN and expert widths, expert
counts, latent ranks) is required: when it is missing the reader raises ``ScenarioError`` naming the
field and the file.  A few fields whose absence has one conventional meaning are filled in and the
note of every affected value says so: ``num_key_value_heads`` (absent = one KV head per query head,
multi-head attention), ``head_dim`` (absent = ``hidden_size / num_attention_heads``),
``tie_word_embeddings`` (absent = the transformers default of that model class),
``first_k_dense_replace`` (0), ``moe_layer_freq`` and ``decoder_sparse_step`` (1), ``mlp_only_layers``
(none).

References
----------
- transformers model configurations (``configuration_llama.py``, ``configuration_mixtral.py``,
  ``configuration_qwen3_moe.py``, ``configuration_deepseek_v3.py``, ``configuration_gpt_oss.py``,
  ``configuration_gemma3.py``) for the field names and their meaning.
- DeepSeek-V2 paper (arXiv:2405.04434), section 2.1, for the MLA projections and cache.
"""

from __future__ import annotations

import json
import numbers
import pathlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from derive.errors import ScenarioError

__all__ = [
    "SUPPORTED_MODEL_TYPES",
    "ConfigValue",
    "ParamBreakdown",
    "load_config_json",
    "model_values",
    "param_breakdown",
]


@dataclass(frozen=True)
class ConfigValue:
    """One quantity read from a config: exact value in SI base units, its unit, and how it was derived."""

    value: Fraction
    unit: str
    note: str


# model_type -> (layout, transformers' tie_word_embeddings default for that config class)
_MODEL_TYPES: dict[str, tuple[str, bool]] = {
    "llama": ("dense", False),
    "mistral": ("dense", False),
    "qwen2": ("dense", False),
    "qwen3": ("dense", False),
    "gemma": ("dense", True),
    "gemma2": ("dense", True),
    "gemma3_text": ("dense", True),
    "gemma3": ("dense", True),
    "mixtral": ("mixtral", False),
    "qwen2_moe": ("qwen_moe", False),
    "qwen3_moe": ("qwen_moe", False),
    "gpt_oss": ("gpt_oss", False),
    "deepseek_v2": ("deepseek", False),
    "deepseek_v3": ("deepseek", False),
    "kimi_k2": ("deepseek", False),
}

# architectures class name -> model_type
_ARCHITECTURES: dict[str, str] = {
    "LlamaForCausalLM": "llama",
    "MistralForCausalLM": "mistral",
    "Qwen2ForCausalLM": "qwen2",
    "Qwen3ForCausalLM": "qwen3",
    "GemmaForCausalLM": "gemma",
    "Gemma2ForCausalLM": "gemma2",
    "Gemma3ForCausalLM": "gemma3_text",
    "Gemma3ForConditionalGeneration": "gemma3",
    "MixtralForCausalLM": "mixtral",
    "Qwen2MoeForCausalLM": "qwen2_moe",
    "Qwen3MoeForCausalLM": "qwen3_moe",
    "GptOssForCausalLM": "gpt_oss",
    "DeepseekV2ForCausalLM": "deepseek_v2",
    "DeepseekV3ForCausalLM": "deepseek_v3",
}

SUPPORTED_MODEL_TYPES: tuple[str, ...] = tuple(sorted(_MODEL_TYPES))


@dataclass(frozen=True)
class ParamBreakdown:
    """A parameter count split into parts (all in parameters, all layers summed)."""

    model_type: str
    layers: int
    embedding: int  # input token embedding
    lm_head: int  # 0 when tied to the embedding
    attention: int
    dense_mlp: int  # MLPs of the dense (non-MoE) layers
    routed_experts: int  # every routed expert of every MoE layer
    routed_experts_active: int  # the routed experts one token uses
    shared_experts: int
    router: int
    moe_layers: int
    experts_total: int  # routed experts per MoE layer (0 for a dense model)
    experts_active: int
    experts_shared: int
    notes: tuple[str, ...]  # defaults applied and conventions, for the values' notes

    @property
    def total(self) -> int:
        return (self.embedding + self.lm_head + self.attention + self.dense_mlp + self.routed_experts
                + self.shared_experts + self.router)

    @property
    def active(self) -> int:
        return self.total - self.routed_experts + self.routed_experts_active

    @property
    def is_moe(self) -> bool:
        return self.moe_layers > 0


# --------------------------------------------------------------------------------------------------
# field access: every read names the field and where it came from


class _Fields:
    def __init__(self, config: Mapping[str, Any], where: str, model_type: str) -> None:
        self.config = config
        self.where = where
        self.model_type = model_type
        self.notes: list[str] = []

    def _bad(self, key: str, value: Any, what: str) -> ScenarioError:
        kind = type(value).__name__
        return ScenarioError(f"field '{key}' must be {what}, got {value!r} ({kind})", where=self.where,
                             hint="config.json sizes are JSON numbers")

    def _whole(self, key: str, value: Any, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise self._bad(key, value, "a whole number")
        try:
            whole = int(value)
        except (OverflowError, ValueError):  # inf, nan
            raise self._bad(key, value, "a whole number") from None
        if whole != value:
            raise self._bad(key, value, "a whole number")
        value = whole
        if value < minimum:
            raise ScenarioError(f"field '{key}' must be at least {minimum}, got {value}", where=self.where)
        return value

    def need(self, key: str, *, minimum: int = 1, why: str = "") -> int:
        if key not in self.config or self.config[key] is None:
            hint = f"a {why or self.model_type} config needs '{key}'"
            raise ScenarioError(f"missing field '{key}'", where=self.where, hint=hint)
        return self._whole(key, self.config[key], minimum)

    def optional(self, key: str, default: int | None, *, minimum: int = 0, meaning: str = "") -> int | None:
        if key not in self.config or self.config[key] is None:
            if default is not None and meaning:
                self.notes.append(f"'{key}' absent: {meaning}")
            return default
        return self._whole(key, self.config[key], minimum)

    def flag(self, key: str, default: bool, meaning: str) -> bool:
        if key not in self.config or self.config[key] is None:
            self.notes.append(f"'{key}' absent: {meaning}")
            return default
        value = self.config[key]
        if not isinstance(value, bool):
            raise self._bad(key, value, "true or false")
        return value

    def int_list(self, key: str) -> list[int]:
        value = self.config.get(key)
        if value is None:
            return []
        if not isinstance(value, Sequence) or isinstance(value, str):
            raise self._bad(key, value, "a list of layer indices")
        return [self._whole(f"{key}[{i}]", v, 0) for i, v in enumerate(value)]


def _model_type(config: Mapping[str, Any], where: str) -> str:
    archs = config.get("architectures")
    if archs is not None and (not isinstance(archs, Sequence) or isinstance(archs, str)
                              or not all(isinstance(a, str) for a in archs)):
        raise ScenarioError(f"field 'architectures' must be a list of class names, got {archs!r}", where=where)
    mtype = config.get("model_type")
    if mtype is not None and not isinstance(mtype, str):
        raise ScenarioError(f"field 'model_type' must be a string, got {mtype!r}", where=where)
    from_arch = next((_ARCHITECTURES[a] for a in archs or () if a in _ARCHITECTURES), None)
    if mtype in _MODEL_TYPES:
        if from_arch is not None and _MODEL_TYPES[from_arch][0] != _MODEL_TYPES[mtype][0]:
            raise ScenarioError(f"field 'architectures' ({list(archs)}) and field 'model_type' ({mtype!r}) "
                                "describe different layouts", where=where)
        return mtype
    if from_arch is not None:
        return from_arch
    if archs is None and mtype is None:
        raise ScenarioError("missing fields 'architectures' and 'model_type': cannot tell the architecture",
                            where=where, hint=f"supported model_type values: {', '.join(SUPPORTED_MODEL_TYPES)}")
    raise ScenarioError(f"unsupported architecture: architectures={list(archs or [])}, model_type={mtype!r}",
                        where=where, hint=f"supported model_type values: {', '.join(SUPPORTED_MODEL_TYPES)}")


def _text_config(config: Mapping[str, Any], mtype: str, where: str) -> tuple[Mapping[str, Any], str, list[str]]:
    """Multimodal configs (Gemma 3) keep the language model in ``text_config``."""
    text = config.get("text_config")
    if text is None or "hidden_size" in config:
        return config, where, []
    if not isinstance(text, Mapping):
        raise ScenarioError(f"field 'text_config' must be an object, got {text!r}", where=where)
    merged = dict(text)
    for key in ("tie_word_embeddings",):
        if key not in merged and key in config:
            merged[key] = config[key]
    return merged, f"{where}: text_config", [f"language model read from text_config of a {mtype} config; "
                                             "vision tower not counted"]


# --------------------------------------------------------------------------------------------------
# attention


@dataclass(frozen=True)
class _Attention:
    params_per_layer: int
    kv_elements_per_layer: int  # per token of context
    kv_formula: str  # e.g. "2 (K and V) * 8 kv heads * 128 head_dim"
    head_dim: int | None
    kv_heads: int | None


def _gqa(f: _Fields, d: int) -> _Attention:
    heads = f.need("num_attention_heads")
    kv = f.optional("num_key_value_heads", None, minimum=1)
    if kv is None:
        kv = heads
        f.notes.append(f"'num_key_value_heads' absent: multi-head attention, {heads} kv heads")
    if heads % kv:
        raise ScenarioError(f"num_attention_heads ({heads}) is not a multiple of num_key_value_heads ({kv})",
                            where=f.where)
    hd = f.optional("head_dim", None, minimum=1)
    if hd is None:
        if d % heads:
            raise ScenarioError(f"missing field 'head_dim' and hidden_size ({d}) is not a multiple of "
                                f"num_attention_heads ({heads})", where=f.where)
        hd = d // heads
        f.notes.append(f"'head_dim' absent: hidden_size / num_attention_heads = {hd}")
    params = d * heads * hd + 2 * d * kv * hd + heads * hd * d  # q, k and v, o
    return _Attention(params, 2 * kv * hd, f"2 (K and V) * {kv} kv heads * {hd} head_dim", hd, kv)


def _mla(f: _Fields, d: int) -> _Attention:
    heads = f.need("num_attention_heads")
    why = "multi-head latent attention"
    kv_rank = f.need("kv_lora_rank", why=why)
    rope = f.need("qk_rope_head_dim", why=why)
    nope = f.need("qk_nope_head_dim", why=why)
    v = f.need("v_head_dim", why=why)
    q_rank = f.optional("q_lora_rank", None, minimum=1)
    if q_rank is None:
        q = d * heads * (nope + rope)  # plain q_proj (DeepSeek-V2-Lite)
        f.notes.append("'q_lora_rank' absent or null: uncompressed query projection")
    else:
        q = d * q_rank + q_rank * heads * (nope + rope)  # q_a, q_b
    kv_a = d * (kv_rank + rope)
    kv_b = kv_rank * heads * (nope + v)
    o = heads * v * d
    return _Attention(q + kv_a + kv_b + o, kv_rank + rope,
                      f"(kv_lora_rank {kv_rank} + qk_rope_head_dim {rope}) latent elements", None, None)


# --------------------------------------------------------------------------------------------------
# parameter count


def param_breakdown(config: Mapping[str, Any], *, where: str = "config") -> ParamBreakdown:
    """Split a config's parameter count into embedding, attention, MLP and expert parts."""
    return _analyse(config, where)[0]


def _analyse(config: Mapping[str, Any], where: str) -> tuple[ParamBreakdown, _Attention, Mapping[str, Any], int]:
    if not isinstance(config, Mapping):
        raise ScenarioError(f"a model config must be a JSON object, got {type(config).__name__}", where=where)
    mtype = _model_type(config, where)
    layout, tie_default = _MODEL_TYPES[mtype]
    cfg, where, notes = _text_config(config, mtype, where)
    f = _Fields(cfg, where, mtype)
    f.notes.extend(notes)

    d = f.need("hidden_size")
    n_layers = f.need("num_hidden_layers")
    vocab = f.need("vocab_size")
    tie = f.flag("tie_word_embeddings", tie_default,
                 f"transformers' {mtype} default, {'tied' if tie_default else 'untied'} LM head")
    att = _mla(f, d) if layout == "deepseek" else _gqa(f, d)
    if layout != "deepseek" and "kv_lora_rank" in cfg and cfg["kv_lora_rank"] is not None:
        raise ScenarioError(f"field 'kv_lora_rank' is set but model_type {mtype!r} has no latent attention",
                            where=where)

    def gated(width: int) -> int:
        return 3 * d * width  # gate, up, down

    moe_layers = experts = active = shared_n = 0
    dense_mlp = routed = routed_active = shared = router = 0
    if layout == "dense":
        dense_mlp = n_layers * gated(f.need("intermediate_size"))
    elif layout in ("mixtral", "gpt_oss"):
        experts = f.need("num_local_experts", why=mtype)
        active = _experts_per_token(f, mtype)
        width = f.need("intermediate_size", why=mtype)
        moe_layers = n_layers
        routed, routed_active = moe_layers * experts * gated(width), moe_layers * active * gated(width)
        router = moe_layers * d * experts
    elif layout == "qwen_moe":
        experts = f.need("num_experts", why=mtype)
        active = _experts_per_token(f, mtype)
        width = f.need("moe_intermediate_size", why=mtype)
        step = f.optional("decoder_sparse_step", 1, minimum=1, meaning="every layer may be sparse (1)")
        dense_only = set(f.int_list("mlp_only_layers"))
        is_moe = [i not in dense_only and (i + 1) % step == 0 for i in range(n_layers)]
        moe_layers = sum(is_moe)
        if moe_layers < n_layers:
            dense_mlp = (n_layers - moe_layers) * gated(f.need("intermediate_size", why=f"{mtype} dense-layer"))
        routed, routed_active = moe_layers * experts * gated(width), moe_layers * active * gated(width)
        router = moe_layers * d * experts
        shared_width = f.optional("shared_expert_intermediate_size", 0)
        if shared_width:
            shared_n = 1
            shared = moe_layers * (gated(shared_width) + d)  # the shared expert and its sigmoid gate
    else:  # deepseek
        experts = f.need("n_routed_experts", why=mtype)
        active = _experts_per_token(f, mtype)
        width = f.need("moe_intermediate_size", why=mtype)
        if "n_shared_experts" not in cfg:
            raise ScenarioError("missing field 'n_shared_experts'", where=where,
                                hint=f"a {mtype} config needs 'n_shared_experts' (null or 0 for none)")
        shared_n = f.optional("n_shared_experts", 0) or 0
        first_dense = f.optional("first_k_dense_replace", 0, meaning="no leading dense layers (0)")
        freq = f.optional("moe_layer_freq", 1, minimum=1, meaning="every layer after the dense ones is MoE (1)")
        is_moe = [i >= first_dense and i % freq == 0 for i in range(n_layers)]
        moe_layers = sum(is_moe)
        if moe_layers < n_layers:
            dense_mlp = (n_layers - moe_layers) * gated(f.need("intermediate_size", why=f"{mtype} dense-layer"))
        routed, routed_active = moe_layers * experts * gated(width), moe_layers * active * gated(width)
        shared = moe_layers * shared_n * gated(width)
        router = moe_layers * d * experts
    if experts and active > experts:
        raise ScenarioError(f"{active} experts per token but only {experts} experts", where=where)

    pb = ParamBreakdown(
        model_type=mtype, layers=n_layers, embedding=vocab * d, lm_head=0 if tie else vocab * d,
        attention=n_layers * att.params_per_layer, dense_mlp=dense_mlp, routed_experts=routed,
        routed_experts_active=routed_active, shared_experts=shared, router=router, moe_layers=moe_layers,
        experts_total=experts, experts_active=active, experts_shared=shared_n, notes=tuple(f.notes),
    )
    return pb, att, cfg, d


def _experts_per_token(f: _Fields, mtype: str) -> int:
    # OpenAI's own gpt-oss config.json says experts_per_token; transformers says num_experts_per_tok.
    if "num_experts_per_tok" not in f.config and "experts_per_token" in f.config:
        return f.need("experts_per_token", why=mtype)
    return f.need("num_experts_per_tok", why=mtype)


# --------------------------------------------------------------------------------------------------
# the public reader


def _fraction(value: Any, where: str) -> Fraction:
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


def _n(x: int | Fraction) -> str:
    if isinstance(x, Fraction) and x.denominator != 1:
        return str(x)
    return f"{int(x):,}"


def _window_note(cfg: Mapping[str, Any], mtype: str, n_layers: int) -> str:
    window = cfg.get("sliding_window")
    if window is None or cfg.get("use_sliding_window") is False:
        return ""
    types = cfg.get("layer_types")
    if isinstance(types, Sequence) and not isinstance(types, str):
        count = sum(1 for t in types if t == "sliding_attention")
        which = f"{count} of {n_layers} layers use"
    elif mtype == "gpt_oss":
        which = f"{(n_layers + 1) // 2} of {n_layers} layers (alternate ones) use"
    elif isinstance(cfg.get("sliding_window_pattern"), int) and cfg["sliding_window_pattern"] > 0:
        pattern = cfg["sliding_window_pattern"]
        which = f"{n_layers - n_layers // pattern} of {n_layers} layers (all but every {pattern}th) use"
    else:
        which = "some or all layers use"
    return (f"; {which} a sliding window of {window} tokens, counted here as full attention "
            "(exact up to that context, an upper bound beyond it)")


def model_values(config: Mapping[str, Any], *, bytes_per_kv_element: Fraction | Any = Fraction(2),
                 where: str = "config") -> dict[str, ConfigValue]:
    """Model quantities from a Hugging Face style config mapping.

    Returns ``params_total``, ``params_active``, ``layers``, ``kv_bytes_per_token``,
    ``bytes_per_kv_element``, ``d_model``; ``head_dim`` and ``kv_heads`` for non-latent attention;
    ``experts_total``, ``experts_active`` (and ``experts_shared`` when there are shared experts) for
    mixture-of-experts models.  Raises ``ScenarioError`` for an unknown architecture, a missing size
    field or a value that is not a whole number.
    """
    kv_bytes = _fraction(bytes_per_kv_element, where)
    pb, att, cfg, d = _analyse(config, where)
    mtype = pb.model_type
    L = pb.layers
    defaults = ("; " + "; ".join(pb.notes)) if pb.notes else ""

    parts = [f"embedding {_n(pb.embedding)}"]
    parts.append(f"LM head {_n(pb.lm_head)}" if pb.lm_head else "LM head tied to the embedding")
    parts.append(f"attention {_n(pb.attention)} ({L} layers)")
    if pb.dense_mlp:
        parts.append(f"dense MLP {_n(pb.dense_mlp)} ({L - pb.moe_layers} layers, 3 matrices)")
    if pb.is_moe:
        parts.append(f"routed experts {_n(pb.routed_experts)} ({pb.moe_layers} MoE layers x {pb.experts_total})")
        if pb.shared_experts:
            parts.append(f"shared experts {_n(pb.shared_experts)}")
        parts.append(f"routers {_n(pb.router)}")
    conv = "; norms, biases and sinks not counted"
    total_note = " + ".join(parts) + conv + defaults
    if pb.is_moe:
        active_note = (f"total minus unselected routed experts: {_n(pb.total)} - {_n(pb.routed_experts)} + "
                       f"{_n(pb.routed_experts_active)} ({pb.experts_active} of {pb.experts_total} per MoE layer); "
                       "embedding, LM head, shared experts and routers counted as active" + defaults)
    else:
        active_note = "dense model: every parameter is used for every token" + defaults

    kv_total = Fraction(L * att.kv_elements_per_layer) * kv_bytes
    kv_note = (f"{L} layers * {att.kv_formula} * {_n(kv_bytes)} B per element"
               + _window_note(cfg, mtype, L) + defaults)

    out: dict[str, ConfigValue] = {
        "params_total": ConfigValue(Fraction(pb.total), "param", total_note),
        "params_active": ConfigValue(Fraction(pb.active), "param", active_note),
        "layers": ConfigValue(Fraction(L), "1", f"num_hidden_layers = {L}"),
        "kv_bytes_per_token": ConfigValue(kv_total, "B/token", kv_note),
        "bytes_per_kv_element": ConfigValue(kv_bytes, "B", "bytes per cached K/V element (argument)"),
        "d_model": ConfigValue(Fraction(d), "1", f"hidden_size = {d}"),
    }
    if att.head_dim is not None and att.kv_heads is not None:
        out["head_dim"] = ConfigValue(Fraction(att.head_dim), "1", f"head_dim = {att.head_dim}" + defaults)
        out["kv_heads"] = ConfigValue(Fraction(att.kv_heads), "1", f"num_key_value_heads = {att.kv_heads}" + defaults)
    if pb.is_moe:
        out["experts_total"] = ConfigValue(Fraction(pb.experts_total), "1",
                                           f"routed experts per MoE layer ({pb.moe_layers} of {L} layers are MoE)")
        out["experts_active"] = ConfigValue(Fraction(pb.experts_active), "1", "routed experts per token")
        if pb.experts_shared:
            out["experts_shared"] = ConfigValue(Fraction(pb.experts_shared), "1",
                                                "shared experts per MoE layer, used by every token")
    return out


def load_config_json(path: pathlib.Path | str, *, bytes_per_kv_element: Fraction | Any = Fraction(2)
                     ) -> dict[str, ConfigValue]:
    """Read a ``config.json`` file and return ``model_values`` for it; every error names the file."""
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
    if not isinstance(config, Mapping):
        raise ScenarioError(f"{path} must hold a JSON object, got {type(config).__name__}", where=str(path))
    return model_values(config, bytes_per_kv_element=bytes_per_kv_element, where=str(path))
