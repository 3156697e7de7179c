"""Hugging Face ``config.json`` reader: model quantities from an architecture description.

A model's ``config.json`` names its shape (width, depth, heads, experts, latent ranks, layer kinds,
datatype) but not its parameter count, its KV-cache size or its bytes per weight.  This module derives
those, exactly, in the units the lecture uses, so that ``derive --model PATH/config.json`` (or
``--model ORG/NAME`` from the local Hugging Face cache, or a model preset's ``[config]`` table)
supplies the model's quantities.  All LLM-specific knowledge lives here, in ``theorems/``; the engine
only calls ``model_values``.

Main functions
--------------
- ``model_values(config, bytes_per_kv_element=None, where=...)``: quantity name -> ``ConfigValue``,
  returned as a ``ModelValues`` mapping whose ``notes`` list every default and approximation applied.
- ``load_config_json(path)``: the same, read from a file (errors name the file).
- ``param_breakdown(config, where=...)``: the parameter count split into its parts.
- ``kv_layout(config, where=...)``: the KV cache by layer kind (``KVLayout``), with
  ``KVLayout.bytes_per_sequence(context, bytes_per_element)`` for a hand count at any context.
- ``find_cached_config(model_id)``: the ``config.json`` of ``ORG/NAME`` in the local Hugging Face cache.

Supported architectures (by ``model_type``, else by ``architectures``; nested ``text_config`` is read)
-------------------------------------------------------------------------------------------------------
- dense, multi-head / grouped-query / multi-query attention: ``llama``, ``mistral`` (sliding window on
  every layer), ``qwen2``, ``qwen3``, ``gemma``, ``gemma2`` (every other layer local), ``gemma3_text``
  and ``gemma3`` (five of six layers local), ``falcon`` (``multi_query``, ``new_decoder_architecture``;
  also the older ``RefinedWeb``/``RefinedWebModel`` field names);
- mixture of experts: ``mixtral``, ``qwen2_moe``, ``qwen3_moe``, ``gpt_oss`` (alternate layers on a
  128-token window), ``glm4_moe`` (GLM-4.5), ``llama4``/``llama4_text`` (interleaved MoE and dense
  layers, a shared expert, chunked attention on three of four layers);
- hybrid linear attention: ``qwen3_next``, ``qwen3_5``, ``qwen3_5_moe`` (Gated DeltaNet layers with a
  fixed-size state, full attention on one layer in ``full_attention_interval``);
- multi-head latent attention with mixture of experts: ``deepseek_v2``, ``deepseek_v3``, ``kimi_k2``,
  and ``deepseek_v32`` (DeepSeek-V3.2: MLA plus the sparse-attention indexer's key cache).
An unknown ``model_type`` whose fields match one of these layouts is read with a note saying which, and so
is a config with no ``model_type`` at all (gpt-oss's ``original/config.json``).  Real files' forms: Gemma 3
files leave out what equals transformers' class default (``_CLASS_DEFAULTS``, filled in with a note);
transformers 5 re-saves (``dtype``, ``num_local_experts`` for Qwen MoE); Falcon's ``RefinedWeb`` (grouped
KV heads) and ``RefinedWebModel`` (multi-query) files.

Counting conventions
--------------------
- Parameters are the weight matrices: token embedding, LM head (unless ``tie_word_embeddings``),
  attention projections, MLP matrices (gated: gate, up and down, 3 matrices; Falcon: 2), MoE routers,
  linear-attention projections and convolutions, the DeepSeek-V3.2 indexer.  Norm gains, bias vectors,
  gpt-oss attention sinks and Gated DeltaNet's per-head decay vectors are not counted (each well under
  0.1 % of the models here); multi-token-prediction modules and vision towers are not counted.
- ``params_total`` counts everything above, embeddings included (the publishers' totals do).
- ``params_active`` is what the compute formulas multiply by: the parameters a token's forward pass
  multiplies, so *without the input embedding* (a table lookup, no multiplies) and *with the output
  head* (a real matrix multiply), routed experts a token does not use left out.  This is OpenAI's
  convention for gpt-oss (5.1B of 116.8B) and matches DeepSeek-V2-Lite's 2.4B.  ``params_embedding``
  gives the input embedding, so ``params_active + params_embedding`` is the count with every weight of
  the selected path (Mistral's 12.9B for Mixtral, DeepSeek-V3's 37B); the notes give both, and the
  counts without any embedding.

KV cache by layer kind
----------------------
Every layer is one of: full attention (GQA/MQA/MHA: ``2 * kv_heads * head_dim`` elements per token;
MLA: ``kv_lora_rank + qk_rope_head_dim``), sliding window W (holds ``min(L, W)`` tokens), chunked
attention C (holds at most ``min(L, C)`` tokens: the current chunk), or linear attention (a state of
fixed size, whatever the context).  The counts per kind are computed arithmetically from the config
(``layer_types`` when given, else the family's pattern); no per-layer list is built.  The values:
``kv_bytes_per_token`` (full layers plus any indexer keys: the per-token figure at long context),
``kv_window_bytes_per_token`` and ``attention_window``, ``kv_chunk_bytes_per_token`` and
``attention_chunk``, ``kv_state_bytes``.  The library's ``kv_bytes_per_sequence`` combines them at the
scenario's context.  DeepSeek-V3.2's indexer keeps ``index_head_dim`` FP8 keys per token and layer plus
one FP32 scale per 128 (DeepSeek's reference inference code), whatever the KV element size.  A linear-attention
recurrent state is kept at ``mamba_ssm_dtype`` when the config names one (Qwen3.5: float32), else at the KV
element size.

For the context chapter's per-head formula (``kv_cache_layers * kv_elements_per_layer * e`` with
``kv_elements_per_layer = 2 * kv_heads * head_dim``), latent attention pins ``kv_elements_per_layer`` to
``kv_lora_rank + qk_rope_head_dim`` and reads decoding as multi-query attention over the latent
(``kv_heads`` 1, ``head_dim`` the latent's width, every query head), as absorbed MLA decoding runs.

Precision
---------
``torch_dtype`` (or ``dtype``) sets the bytes of a weight and of a cached element; ``quantization_config``
refines the weights: ``fp8`` (1 byte, plus one FP32 scale per ``weight_block_size`` block),
``mxfp4`` (4.25 bits: 32 four-bit values share an 8-bit scale; on the routed experts, as gpt-oss ships
it), ``awq``/``gptq`` (``bits`` plus an FP16 scale and a ``bits`` zero point per ``group_size``),
``bitsandbytes`` (4 or 8 bits, block scales not counted); embeddings, LM head and the modules in
``modules_to_not_convert`` stay at ``torch_dtype``.  ``bytes_per_param`` is the exact weighted mean.
A cached element takes the ``torch_dtype`` size unless the config quantizes the KV cache
(``kv_cache_quant_algo``, ``kv_cache_scheme``).

Defaults
--------
A field that defines the model's size is required: when it is missing the reader raises
``ScenarioError`` naming the field and the file.  A few fields whose absence has one conventional
meaning are filled in and the notes say so (``num_key_value_heads``, ``head_dim``,
``tie_word_embeddings``, ``first_k_dense_replace``, ``moe_layer_freq``, ``decoder_sparse_step``, layer
patterns).  Counts are capped (``MAX_LAYERS`` layers, ``MAX_SIZE`` for widths): an absurd value is a
one-line error naming the field.

References
----------
- transformers model configurations (``configuration_llama.py``, ``configuration_mistral.py``,
  ``configuration_mixtral.py``, ``configuration_qwen3_moe.py``, ``configuration_qwen3_next.py``,
  ``configuration_deepseek_v3.py``, ``configuration_gpt_oss.py``, ``configuration_gemma2.py``,
  ``configuration_gemma3.py``, ``configuration_llama4.py``, ``configuration_glm4_moe.py``,
  ``configuration_falcon.py``) for the field names and their meaning.
- DeepSeek-V2 paper (arXiv:2405.04434), section 2.1, for the MLA projections and cache; DeepSeek-V3.2
  (deepseek-ai/DeepSeek-V3.2-Exp, inference/model.py) for the indexer.
- OCP Microscaling Formats (MX) v1.0 for MXFP4's 32-element blocks with an 8-bit shared scale.
"""

from __future__ import annotations

import json
import numbers
import os
import pathlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from derive.errors import ScenarioError
from derive.model.display import format_number

__all__ = [
    "MAX_LAYERS",
    "MAX_SIZE",
    "SUPPORTED_MODEL_TYPES",
    "ConfigValue",
    "KVLayout",
    "ModelValues",
    "ParamBreakdown",
    "find_cached_config",
    "kv_layout",
    "load_config_json",
    "model_values",
    "param_breakdown",
]

MAX_LAYERS = 100_000
MAX_SIZE = 2**40  # widths, vocabularies, expert counts: far above any real model


@dataclass(frozen=True)
class ConfigValue:
    """One quantity read from a config: exact value in SI base units, its unit, and how it was derived.

    ``native`` marks values that describe the model's own precision and context (bytes per weight, bytes
    per cached element, maximum context): the scenario lets them replace the lecture's round numbers and
    a hardware preset's, never a value the user gave.
    """

    value: Fraction
    unit: str
    note: str
    native: bool = False


class ModelValues(dict):
    """``model_values``' result: quantity name -> ``ConfigValue``, plus ``notes`` (every default and
    approximation the reader applied, one sentence each)."""

    notes: tuple[str, ...] = ()


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
    "falcon": ("falcon", True),
    "mixtral": ("mixtral", False),
    "qwen2_moe": ("qwen_moe", False),
    "qwen3_moe": ("qwen_moe", False),
    "qwen3_next": ("qwen_moe", False),
    "qwen3_5": ("dense", False),
    "qwen3_5_text": ("dense", False),
    "qwen3_5_moe": ("qwen_moe", False),
    "qwen3_5_moe_text": ("qwen_moe", False),
    "gpt_oss": ("mixtral", False),
    "glm4_moe": ("glm_moe", False),
    "llama4": ("llama4", False),
    "llama4_text": ("llama4", False),
    "deepseek_v2": ("deepseek", False),
    "deepseek_v3": ("deepseek", False),
    "deepseek_v32": ("deepseek", False),
    "kimi_k2": ("deepseek", False),
}
_ALIASES = {"RefinedWeb": "falcon", "RefinedWebModel": "falcon"}

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
    "FalconForCausalLM": "falcon",
    "RWForCausalLM": "falcon",
    "MixtralForCausalLM": "mixtral",
    "Qwen2MoeForCausalLM": "qwen2_moe",
    "Qwen3MoeForCausalLM": "qwen3_moe",
    "Qwen3NextForCausalLM": "qwen3_next",
    "Qwen3_5ForConditionalGeneration": "qwen3_5",
    "Qwen3_5ForCausalLM": "qwen3_5",
    "Qwen3_5MoeForConditionalGeneration": "qwen3_5_moe",
    "Qwen3_5MoeForCausalLM": "qwen3_5_moe",
    "GptOssForCausalLM": "gpt_oss",
    "Glm4MoeForCausalLM": "glm4_moe",
    "Llama4ForConditionalGeneration": "llama4",
    "Llama4ForCausalLM": "llama4_text",
    "DeepseekV2ForCausalLM": "deepseek_v2",
    "DeepseekV3ForCausalLM": "deepseek_v3",
    "DeepseekV32ForCausalLM": "deepseek_v32",
}

SUPPORTED_MODEL_TYPES: tuple[str, ...] = tuple(sorted(_MODEL_TYPES))

# Fields that transformers' config class fills in when config.json leaves them out.  Google's Gemma 3 files
# omit whatever equals the class default (gemma-3-27b-it's text_config has no vocab_size; gemma-3-4b-it's has
# no head counts), so the default is part of what the file says.  (configuration_gemma2.py,
# configuration_gemma3.py: Gemma2Config, Gemma3TextConfig.)
_CLASS_DEFAULTS: dict[str, dict[str, int]] = {
    "gemma2": {"vocab_size": 256_000, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
               "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "sliding_window": 4096},
    "gemma3_text": {"vocab_size": 262_208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
                    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "sliding_window": 4096,
                    "max_position_embeddings": 131_072},
}
_CLASS_DEFAULTS["gemma3"] = _CLASS_DEFAULTS["gemma3_text"]

_DTYPE_BYTES: dict[str, Fraction] = {
    "float32": Fraction(4), "float": Fraction(4), "fp32": Fraction(4),
    "bfloat16": Fraction(2), "bf16": Fraction(2), "float16": Fraction(2), "half": Fraction(2), "fp16": Fraction(2),
    "float8_e4m3fn": Fraction(1), "float8_e5m2": Fraction(1), "fp8": Fraction(1), "int8": Fraction(1),
}


# --------------------------------------------------------------------------------------------------
# the results


@dataclass(frozen=True)
class ParamBreakdown:
    """A parameter count split into parts (all in parameters, all layers summed)."""

    model_type: str
    layers: int
    embedding: int  # input token embedding
    lm_head: int  # 0 when tied to the embedding
    attention: int  # every attention block: full, windowed, chunked, latent, linear, indexer
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
    tied: bool = False  # the LM head is the embedding matrix

    @property
    def total(self) -> int:
        """Every counted weight, embeddings included (the publishers' totals)."""
        return (self.embedding + self.lm_head + self.attention + self.dense_mlp + self.routed_experts
                + self.shared_experts + self.router)

    @property
    def active_with_embedding(self) -> int:
        """Every weight on a token's path, the input embedding included."""
        return self.total - self.routed_experts + self.routed_experts_active

    @property
    def active(self) -> int:
        """What a token's forward pass multiplies: no input embedding (a lookup), the output head included
        (with tied embeddings the head is the embedding matrix, so it stays)."""
        return self.active_with_embedding - (0 if self.tied else self.embedding)

    @property
    def total_non_embedding(self) -> int:
        return self.total - self.embedding - self.lm_head

    @property
    def active_non_embedding(self) -> int:
        return self.active_with_embedding - self.embedding - self.lm_head

    @property
    def is_moe(self) -> bool:
        return self.moe_layers > 0


@dataclass(frozen=True)
class KVLayout:
    """The KV cache by layer kind: layer counts and elements, summed over the layers of each kind.

    Elements are per token of context (full, window, chunk) or per sequence (state); they take the KV
    element size.  ``indexer_bytes_per_token`` is already in bytes (its keys are FP8 whatever the KV
    datatype).
    """

    full_layers: int = 0
    full_elements: int = 0
    window_layers: int = 0
    window: int = 0
    window_elements: int = 0
    chunk_layers: int = 0
    chunk: int = 0
    chunk_elements: int = 0
    state_layers: int = 0
    state_elements: int = 0
    indexer_bytes_per_token: Fraction = Fraction(0)
    formulas: tuple[str, ...] = ()
    state_bytes: Fraction = Fraction(0)  # state held in a datatype of its own (Qwen3.5's float32 recurrent state)

    def state_bytes_at(self, bytes_per_element: int | Fraction) -> Fraction:
        """Bytes of the fixed-size linear-attention state of one sequence."""
        return self.state_elements * Fraction(bytes_per_element) + self.state_bytes

    def bytes_per_sequence(self, context: int | Fraction, bytes_per_element: int | Fraction) -> Fraction:
        """KV bytes one sequence holds at ``context`` tokens (the library's ``kv_bytes_per_sequence``)."""
        e, L = Fraction(bytes_per_element), Fraction(context)
        return (L * (self.full_elements * e + self.indexer_bytes_per_token) + min(L, self.window)
                * self.window_elements * e + min(L, self.chunk) * self.chunk_elements * e + self.state_bytes_at(e))


# --------------------------------------------------------------------------------------------------
# field access: every read names the field and where it came from


def _count(n: int) -> str:
    """A whole number for an error line: in full up to 15 digits (``1,099,511,627,776``), beyond that as the
    display formatter shortens it (``1e300``, not 301 digits)."""
    return f"{n:,}" if abs(n) < 10**15 else format_number(n)


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

    def _whole(self, key: str, value: Any, minimum: int, maximum: int = MAX_SIZE) -> int:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise self._bad(key, value, "a whole number")
        try:
            whole = int(value)
        except (OverflowError, ValueError):  # inf, nan
            raise self._bad(key, value, "a whole number") from None
        if whole != value:
            raise self._bad(key, value, "a whole number")
        if whole < minimum:
            raise ScenarioError(f"field '{key}' must be at least {minimum}, got {_count(whole)}", where=self.where)
        if whole > maximum:
            raise ScenarioError(f"field '{key}' is {_count(whole)}, more than {maximum:,}: not a real model",
                                where=self.where)
        return whole

    def has(self, key: str) -> bool:
        return key in self.config and self.config[key] is not None

    def need(self, key: str, *, minimum: int = 1, maximum: int = MAX_SIZE, why: str = "",
             aliases: Sequence[str] = ()) -> int:
        for name in (key, *aliases):
            if self.has(name):
                return self._whole(name, self.config[name], minimum, maximum)
        hint = f"a {why or self.model_type} config needs '{key}'"
        raise ScenarioError(f"missing field '{key}'", where=self.where, hint=hint)

    def optional(self, key: str, default: int | None, *, minimum: int = 0, meaning: str = "",
                 aliases: Sequence[str] = ()) -> int | None:
        for name in (key, *aliases):
            if self.has(name):
                return self._whole(name, self.config[name], minimum)
        if default is not None and meaning:
            self.notes.append(f"'{key}' absent: {meaning}")
        return default

    def flag(self, key: str, default: bool, meaning: str) -> bool:
        if not self.has(key):
            if meaning:
                self.notes.append(f"'{key}' absent: {meaning}")
            return default
        value = self.config[key]
        if not isinstance(value, bool):
            raise self._bad(key, value, "true or false")
        return value

    def int_list(self, key: str, n_layers: int | None = None) -> list[int]:
        value = self.config.get(key)
        if value is None:
            return []
        if not isinstance(value, Sequence) or isinstance(value, str):
            raise self._bad(key, value, "a list of layer indices")
        if len(value) > MAX_LAYERS:
            raise ScenarioError(f"field '{key}' lists {len(value):,} entries, more than {MAX_LAYERS:,}",
                                where=self.where)
        return [self._whole(f"{key}[{i}]", v, 0) for i, v in enumerate(value)]

    def str_list(self, key: str, n_layers: int) -> list[str] | None:
        value = self.config.get(key)
        if value is None:
            return None
        if not isinstance(value, Sequence) or isinstance(value, str) or not all(isinstance(v, str) for v in value):
            raise self._bad(key, value, "a list of strings")
        if len(value) != n_layers:
            raise ScenarioError(f"field '{key}' lists {len(value)} layers but num_hidden_layers is {n_layers}",
                                where=self.where)
        return list(value)


def _count_every(n: int, step: int, offset: int = 0) -> int:
    """How many of the layer indices 0..n-1 satisfy (i + offset) % step == 0, computed arithmetically."""
    if step <= 0:
        return 0
    first = (-offset) % step  # smallest i >= 0 with (i + offset) % step == 0
    return 0 if first >= n else (n - 1 - first) // step + 1


# --------------------------------------------------------------------------------------------------
# which layout


def _model_type(config: Mapping[str, Any], where: str) -> tuple[str, list[str]]:
    archs = config.get("architectures")
    if archs is not None and (not isinstance(archs, Sequence) or isinstance(archs, str)
                              or not all(isinstance(a, str) for a in archs)):
        raise ScenarioError(f"field 'architectures' must be a list of class names, got {archs!r}", where=where)
    mtype = config.get("model_type")
    if mtype is not None and not isinstance(mtype, str):
        raise ScenarioError(f"field 'model_type' must be a string, got {mtype!r}", where=where)
    mtype = _ALIASES.get(mtype, mtype) if mtype is not None else None
    from_arch = next((_ARCHITECTURES[a] for a in archs or () if a in _ARCHITECTURES), None)
    if mtype in _MODEL_TYPES:
        if from_arch is not None and _MODEL_TYPES[from_arch][0] != _MODEL_TYPES[mtype][0]:
            raise ScenarioError(f"field 'architectures' ({list(archs)}) and field 'model_type' ({mtype!r}) "
                                "describe different layouts", where=where)
        return mtype, []
    if from_arch is not None:
        return from_arch, []
    guess = _guess_family(config)
    if archs is None and mtype is None:
        if guess is None:
            raise ScenarioError("missing fields 'architectures' and 'model_type': cannot tell the architecture",
                                where=where, hint=f"supported model_type values: {', '.join(SUPPORTED_MODEL_TYPES)}")
        return guess, [f"config names no architecture (no 'architectures', no 'model_type'): read as {guess}, "
                       "whose fields it has; check the counts against the publisher's"]
    if guess is not None:
        return guess, [f"unknown architecture (architectures={list(archs or [])}, model_type={mtype!r}) read as "
                       f"{guess}, whose fields it has; check the counts against the publisher's"]
    raise ScenarioError(f"unsupported architecture: architectures={list(archs or [])}, model_type={mtype!r}",
                        where=where, hint=f"supported model_type values: {', '.join(SUPPORTED_MODEL_TYPES)}")


def _guess_family(config: Mapping[str, Any]) -> str | None:
    """A known layout for an unknown model_type, from the fields only that layout has."""
    cfg = config.get("text_config") if isinstance(config.get("text_config"), Mapping) else config
    keys = {k for k, v in cfg.items() if v is not None}
    if not {"hidden_size", "num_hidden_layers"} <= keys:
        return None
    if {"kv_lora_rank", "n_routed_experts"} <= keys:
        return "deepseek_v32" if "index_head_dim" in keys else "deepseek_v3"
    if "linear_num_value_heads" in keys:
        return "qwen3_5_moe" if "num_experts" in keys else "qwen3_5"
    if {"n_routed_experts", "num_key_value_heads"} <= keys:
        return "glm4_moe"
    if "intermediate_size_mlp" in keys or "interleave_moe_layer_step" in keys:
        return "llama4_text"
    if "experts_per_token" in keys or "swiglu_limit" in keys:
        return "gpt_oss"  # OpenAI's own gpt-oss config (original/config.json): num_experts, experts_per_token
    if "num_local_experts" in keys:
        return "mixtral"
    if "num_experts" in keys and "moe_intermediate_size" in keys:
        return "qwen3_moe"
    if {"num_attention_heads", "intermediate_size", "vocab_size"} <= keys:
        return "llama"
    return None


def _text_config(config: Mapping[str, Any], mtype: str, where: str) -> tuple[Mapping[str, Any], str, list[str]]:
    """Multimodal configs (Gemma 3, Llama 4, Qwen3.5) keep the language model in ``text_config``."""
    text = config.get("text_config")
    if text is None or "hidden_size" in config:
        return config, where, []
    if not isinstance(text, Mapping):
        raise ScenarioError(f"field 'text_config' must be an object, got {text!r}", where=where)
    merged = dict(text)
    for key in ("tie_word_embeddings", "torch_dtype", "dtype", "quantization_config"):
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
    query_heads: int
    latent: bool = False  # multi-head latent attention: one cached latent serves keys and values


def _gqa(f: _Fields, d: int, *, gated_query: bool = False) -> _Attention:
    heads = f.need("num_attention_heads", aliases=("n_head",))
    kv = f.optional("num_key_value_heads", None, minimum=1, aliases=("num_kv_heads", "n_head_kv"))
    if f.model_type == "falcon":
        # tiiuae's own RefinedWeb code (Falcon-40B/180B) always groups the KV heads (n_head_kv); RefinedWebModel
        # (Falcon-7B) and transformers' FalconConfig default to the old decoder with multi_query.
        refined_web = f.config.get("model_type") == "RefinedWeb"
        new_arch = f.flag("new_decoder_architecture", refined_web,
                          "RefinedWeb config: grouped KV heads (n_head_kv), as tiiuae's code reads it"
                          if refined_web else "")
        multi_query = f.flag("multi_query", True, "")
        if not new_arch:
            kv = 1 if multi_query else heads
            f.notes.append(f"falcon {'multi-query' if multi_query else 'multi-head'} attention: {kv} kv head(s)")
        elif kv is None:
            kv = heads
            f.notes.append(f"'num_kv_heads' absent: transformers' FalconConfig default, one KV head per query head "
                           f"({heads})")
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
    q = d * heads * hd * (2 if gated_query else 1)  # Qwen3-Next/3.5 project a gate with the query
    params = q + 2 * d * kv * hd + heads * hd * d  # q, k and v, o
    return _Attention(params, 2 * kv * hd, f"2 (K and V) * {kv} kv heads * {hd} head_dim", hd, kv, heads)


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
    # Decoding with the up-projections absorbed (DeepSeek's FlashMLA) is multi-query attention over the cache:
    # one shared "head" of kv_lora_rank + qk_rope_head_dim elements, read as keys and (its first kv_lora_rank
    # elements) as values.  That is the per-head layout the context chapter's formulas see.
    return _Attention(q + kv_a + kv_b + o, kv_rank + rope,
                      f"(kv_lora_rank {kv_rank} + qk_rope_head_dim {rope}) latent elements", kv_rank + rope, 1,
                      heads, latent=True)


@dataclass(frozen=True)
class _Linear:
    params_per_layer: int
    state_elements_per_layer: int  # at the KV element size
    formula: str
    state_bytes_per_layer: Fraction = Fraction(0)  # state kept in a datatype of its own (mamba_ssm_dtype)


def _gated_deltanet(f: _Fields, d: int) -> _Linear:
    """Qwen3-Next / Qwen3.5 linear attention: projections, a short causal convolution, a recurrent state."""
    why = "linear-attention (Gated DeltaNet)"
    k_heads = f.need("linear_num_key_heads", why=why)
    v_heads = f.need("linear_num_value_heads", why=why)
    k_dim = f.need("linear_key_head_dim", why=why)
    v_dim = f.need("linear_value_head_dim", why=why)
    kernel = f.need("linear_conv_kernel_dim", why=why)
    key_dim, value_dim = k_heads * k_dim, v_heads * v_dim
    conv_dim = 2 * key_dim + value_dim
    params = (d * (2 * key_dim + 2 * value_dim)  # q, k, v and the output gate z
              + d * 2 * v_heads  # beta and the decay a, one per value head
              + conv_dim * kernel  # depthwise causal convolution over q, k, v
              + value_dim * d)  # out_proj
    recurrent, conv = v_heads * k_dim * v_dim, conv_dim * (kernel - 1)
    formula = (f"{v_heads} value heads * {k_dim} * {v_dim} recurrent state + {conv_dim} channels * {kernel - 1} "
               "convolution state")
    ssm = f.config.get("mamba_ssm_dtype")
    if ssm is not None:
        if not isinstance(ssm, str) or ssm.removeprefix("torch.") not in _DTYPE_BYTES:
            raise ScenarioError(f"field 'mamba_ssm_dtype' names an unknown datatype {ssm!r}", where=f.where,
                                hint=f"known: {', '.join(sorted(_DTYPE_BYTES))}")
        each = _DTYPE_BYTES[ssm.removeprefix("torch.")]
        f.notes.append(f"mamba_ssm_dtype {ssm}: the linear-attention recurrent state is kept at {_n(each)} B per "
                       "element, the convolution state at the KV element size")
        return _Linear(params, conv, formula.replace("recurrent state", f"recurrent state at {_n(each)} B"),
                       recurrent * each)
    return _Linear(params, recurrent + conv, formula)


# --------------------------------------------------------------------------------------------------
# layer kinds


_KIND_NAMES = {"full_attention": "full", "global": "full", "attention": "full", "sliding_attention": "window",
               "sliding": "window", "local": "window", "chunked_attention": "chunk",
               "linear_attention": "linear"}


def _layer_kinds(f: _Fields, mtype: str, n: int) -> tuple[dict[str, int], int, int]:
    """(counts per kind, window, chunk): full / window / chunk / linear layer counts."""
    counts = {"full": n, "window": 0, "chunk": 0, "linear": 0}
    window = chunk = 0
    types = f.str_list("layer_types", n)
    sliding = f.optional("sliding_window", None, minimum=1)
    if mtype == "mistral" or mtype == "mixtral" or mtype.startswith("qwen2") or mtype in ("qwen3", "qwen3_moe"):
        # Mistral and Mixtral window every layer when sliding_window is set; Qwen2/Qwen3 only with
        # use_sliding_window true (transformers' default there is false)
        use = f.config.get("use_sliding_window", not mtype.startswith("qwen"))
        if sliding is not None and use is True and types is None:
            first = f.optional("max_window_layers", 0) if mtype.startswith("qwen") else 0
            first = min(first or 0, n)
            counts.update(full=first, window=n - first)
            window = sliding
            f.notes.append(f"sliding_window = {sliding} on layers {first} to {n - 1}" if first else
                           f"sliding_window = {sliding}: every layer keeps only the last {sliding} tokens")
    if types is not None:
        counts = {"full": 0, "window": 0, "chunk": 0, "linear": 0}
        for t in types:
            kind = _KIND_NAMES.get(t)
            if kind is None:
                raise ScenarioError(f"field 'layer_types' has an unknown layer kind {t!r}", where=f.where,
                                    hint=f"known kinds: {', '.join(sorted(_KIND_NAMES))}")
            counts[kind] += 1
        if counts["window"]:
            window = sliding or 0
            if not window:
                raise ScenarioError("missing field 'sliding_window'", where=f.where,
                                    hint="layer_types has sliding_attention layers")
        if counts["chunk"]:
            chunk = f.need("attention_chunk_size", why="chunked-attention")
    elif mtype in ("gemma2", "gpt_oss") and sliding is not None:
        counts.update(window=_count_every(n, 2), full=n - _count_every(n, 2))  # even layers local
        window = sliding
        f.notes.append("'layer_types' absent: every other layer (0, 2, ...) uses the sliding window "
                       f"({counts['window']} of {n})")
    elif mtype in ("gemma3", "gemma3_text") and sliding is not None:
        pattern = f.optional("sliding_window_pattern", 6, minimum=1, aliases=("_sliding_window_pattern",),
                             meaning="five local layers to one global (Gemma 3's pattern, 6)")
        full = _count_every(n, pattern, offset=1)
        counts.update(full=full, window=n - full)
        window = sliding
    elif mtype.startswith("llama4"):
        chunk = f.need("attention_chunk_size", why="llama4 chunked-attention")
        no_rope = f.int_list("no_rope_layers")
        if no_rope:
            if len(no_rope) != n:
                raise ScenarioError(f"field 'no_rope_layers' lists {len(no_rope)} layers but num_hidden_layers "
                                    f"is {n}", where=f.where)
            chunked = sum(1 for v in no_rope if v)
        else:
            interval = f.optional("no_rope_layer_interval", 4, minimum=1,
                                  meaning="every 4th layer is global (no RoPE), the others chunked")
            chunked = n - _count_every(n, interval, offset=1)
        counts.update(full=n - chunked, chunk=chunked)
        f.notes.append(f"chunked attention ({chunked} of {n} layers, chunks of {chunk} tokens) holds at most "
                       "one chunk: min(L, chunk) tokens, an upper bound on the tokens since the chunk began")
    elif mtype.startswith("qwen3_next") or mtype.startswith("qwen3_5"):
        interval = f.optional("full_attention_interval", 4, minimum=1,
                              meaning="one full-attention layer in 4 (Qwen3-Next's default)")
        full = _count_every(n, interval, offset=1)
        counts.update(full=full, linear=n - full)
    return counts, window, chunk


# --------------------------------------------------------------------------------------------------
# parameter count and KV layout


def param_breakdown(config: Mapping[str, Any], *, where: str = "config") -> ParamBreakdown:
    """Split a config's parameter count into embedding, attention, MLP and expert parts."""
    return _analyse(config, where).params


def kv_layout(config: Mapping[str, Any], *, where: str = "config") -> KVLayout:
    """The config's KV cache by layer kind."""
    return _analyse(config, where).kv


@dataclass
class _Analysis:
    params: ParamBreakdown
    kv: KVLayout
    cfg: Mapping[str, Any]
    d: int
    attention: _Attention
    where: str
    notes: list[str] = field(default_factory=list)


def _analyse(config: Mapping[str, Any], where: str) -> _Analysis:
    if not isinstance(config, Mapping):
        raise ScenarioError(f"a model config must be a JSON object, got {type(config).__name__}", where=where)
    mtype, type_notes = _model_type(config, where)
    layout, tie_default = _MODEL_TYPES[mtype]
    cfg, where, notes = _text_config(config, mtype, where)
    if mtype in ("qwen3_5", "qwen3_5_moe", "llama4") and cfg is not config:
        mtype = mtype + "_text" if mtype + "_text" in _MODEL_TYPES else mtype
    filled = {k: v for k, v in _CLASS_DEFAULTS.get(mtype, {}).items() if cfg.get(k) is None}
    if filled:
        cfg = {**cfg, **filled}
        notes = notes + [f"'{k}' absent: transformers' {mtype} default {v:,}" for k, v in filled.items()]
    f = _Fields(cfg, where, mtype)
    f.notes.extend(type_notes + notes)

    d = f.need("hidden_size")
    n_layers = f.need("num_hidden_layers", maximum=MAX_LAYERS, aliases=("n_layer",))
    vocab = f.need("vocab_size")
    tie = f.flag("tie_word_embeddings", tie_default,
                 f"transformers' {mtype} default, {'tied' if tie_default else 'untied'} LM head")
    hybrid = mtype.startswith(("qwen3_next", "qwen3_5"))
    att = _mla(f, d) if layout == "deepseek" else _gqa(f, d, gated_query=hybrid and f.flag(
        "attn_output_gate", True, "" if mtype.startswith("qwen3_next") else "gated query (Qwen3.5 default)"))
    if layout != "deepseek" and f.has("kv_lora_rank"):
        raise ScenarioError(f"field 'kv_lora_rank' is set but model_type {mtype!r} has no latent attention",
                            where=where)
    counts, window, chunk = _layer_kinds(f, mtype, n_layers)
    linear = _gated_deltanet(f, d) if counts["linear"] else None
    attention = (n_layers - counts["linear"]) * att.params_per_layer
    if linear is not None:
        attention += counts["linear"] * linear.params_per_layer

    indexer_bytes = Fraction(0)
    if mtype == "deepseek_v32" or f.has("index_head_dim"):
        idx_heads = f.need("index_n_heads", why="sparse-attention indexer")
        idx_dim = f.need("index_head_dim", why="sparse-attention indexer")
        q_rank = f.optional("q_lora_rank", None, minimum=1) or d
        attention += n_layers * (q_rank * idx_heads * idx_dim + d * idx_dim + d * idx_heads)  # wq_b, wk, weights
        indexer_bytes = n_layers * (Fraction(idx_dim) + 4 * Fraction(-(-idx_dim // 128)))
        f.notes.append(f"sparse-attention indexer: {idx_dim} FP8 keys + one FP32 scale per 128 per token and "
                       f"layer ({n_layers} layers), as in DeepSeek's reference inference code")

    def gated(width: int) -> int:
        return 3 * d * width  # gate, up, down

    moe_layers = experts = active = shared_n = 0
    dense_mlp = routed = routed_active = shared = router = 0
    if layout == "dense":
        dense_mlp = n_layers * gated(f.need("intermediate_size"))
    elif layout == "falcon":
        width = f.optional("ffn_hidden_size", None, minimum=1)
        if width is None:
            width = 4 * d
            f.notes.append(f"'ffn_hidden_size' absent: 4 * hidden_size = {width} (Falcon's MLP)")
        dense_mlp = n_layers * 2 * d * width  # dense_h_to_4h, dense_4h_to_h: no gate
    elif layout == "mixtral":
        experts = f.need("num_local_experts", why=mtype, aliases=("num_experts",))
        active = _experts_per_token(f, mtype)
        width = f.need("intermediate_size", why=mtype)
        moe_layers = n_layers
        routed, routed_active = moe_layers * experts * gated(width), moe_layers * active * gated(width)
        router = moe_layers * d * experts
    elif layout == "qwen_moe":
        experts = f.need("num_experts", why=mtype, aliases=("num_local_experts",))  # transformers 5 renames it
        active = _experts_per_token(f, mtype)
        width = f.need("moe_intermediate_size", why=mtype)
        step = f.optional("decoder_sparse_step", 1, minimum=1, meaning="every layer may be sparse (1)")
        dense_only = set(f.int_list("mlp_only_layers"))
        moe_layers = _count_every(n_layers, step, offset=1) - sum(
            1 for i in dense_only if i < n_layers and (i + 1) % step == 0)
        if moe_layers < n_layers:
            dense_mlp = (n_layers - moe_layers) * gated(f.need("intermediate_size", why=f"{mtype} dense-layer"))
        routed, routed_active = moe_layers * experts * gated(width), moe_layers * active * gated(width)
        router = moe_layers * d * experts
        shared_width = f.optional("shared_expert_intermediate_size", 0)
        if shared_width:
            shared_n = 1
            shared = moe_layers * (gated(shared_width) + d)  # the shared expert and its sigmoid gate
    elif layout == "llama4":
        experts = f.need("num_local_experts", why=mtype)
        active = _experts_per_token(f, mtype)
        width = f.need("intermediate_size", why=mtype)  # routed and shared expert width
        moe_list = f.int_list("moe_layers")
        if moe_list:
            moe_layers = len({i for i in moe_list if i < n_layers})
        else:
            step = f.optional("interleave_moe_layer_step", 1, minimum=1, meaning="every layer is MoE (1)")
            moe_layers = _count_every(n_layers, step, offset=1)
        if moe_layers < n_layers:
            dense_mlp = (n_layers - moe_layers) * gated(f.need("intermediate_size_mlp", why="llama4 dense-layer"))
        routed, routed_active = moe_layers * experts * gated(width), moe_layers * active * gated(width)
        shared_n = 1
        shared = moe_layers * gated(width)
        router = moe_layers * d * experts
    elif layout in ("deepseek", "glm_moe"):
        experts = f.need("n_routed_experts", why=mtype)
        active = _experts_per_token(f, mtype)
        width = f.need("moe_intermediate_size", why=mtype)
        if "n_shared_experts" not in cfg:
            raise ScenarioError("missing field 'n_shared_experts'", where=where,
                                hint=f"a {mtype} config needs 'n_shared_experts' (null or 0 for none)")
        shared_n = f.optional("n_shared_experts", 0) or 0
        first_dense = min(f.optional("first_k_dense_replace", 0, meaning="no leading dense layers (0)"), n_layers)
        freq = f.optional("moe_layer_freq", 1, minimum=1, meaning="every layer after the dense ones is MoE (1)")
        moe_layers = _count_every(n_layers, freq) - _count_every(first_dense, freq)
        if moe_layers < n_layers:
            dense_mlp = (n_layers - moe_layers) * gated(f.need("intermediate_size", why=f"{mtype} dense-layer"))
        routed, routed_active = moe_layers * experts * gated(width), moe_layers * active * gated(width)
        shared = moe_layers * shared_n * gated(width)
        router = moe_layers * d * experts
    if experts and active > experts:
        raise ScenarioError(f"{active} experts per token but only {experts} experts", where=where)
    if layout == "deepseek":
        rank = att.kv_elements_per_layer - f.need("qk_rope_head_dim")
        f.notes.append(f"latent attention: each layer caches kv_lora_rank + qk_rope_head_dim = "
                       f"{att.kv_elements_per_layer} elements per token (kv_elements_per_layer, pinned: the per-head "
                       "count 2 * kv_heads * head_dim does not apply); decoding with the up-projections absorbed is "
                       f"multi-query attention over that cache, so kv_heads = 1, head_dim = {att.head_dim} and "
                       f"{att.query_heads} query heads (4 * head_dim FLOPs per context token and query head "
                       f"overstate the 2 * {att.head_dim} + 2 * {rank} by under 10 %)")
    if mtype == "gpt_oss":
        f.notes.append("gpt-oss attention sinks are learned per-head logits (parameters), not cached tokens: "
                       "no KV bytes")
    if f.has("num_nextn_predict_layers") and cfg["num_nextn_predict_layers"]:
        f.notes.append(f"{cfg['num_nextn_predict_layers']} multi-token-prediction layer(s) not counted")

    pb = ParamBreakdown(
        model_type=mtype, layers=n_layers, embedding=vocab * d, lm_head=0 if tie else vocab * d,
        attention=attention, dense_mlp=dense_mlp, routed_experts=routed,
        routed_experts_active=routed_active, shared_experts=shared, router=router, moe_layers=moe_layers,
        experts_total=experts, experts_active=active, experts_shared=shared_n, notes=tuple(f.notes), tied=tie,
    )
    per = att.kv_elements_per_layer
    formulas = [f"full: {counts['full']} layers * {att.kv_formula}"]
    if counts["window"]:
        formulas.append(f"sliding window of {window}: {counts['window']} layers * {att.kv_formula}")
    if counts["chunk"]:
        formulas.append(f"chunks of {chunk}: {counts['chunk']} layers * {att.kv_formula}")
    if linear is not None:
        formulas.append(f"linear attention: {counts['linear']} layers * ({linear.formula})")
    kv = KVLayout(full_layers=counts["full"], full_elements=counts["full"] * per,
                  window_layers=counts["window"], window=window, window_elements=counts["window"] * per,
                  chunk_layers=counts["chunk"], chunk=chunk, chunk_elements=counts["chunk"] * per,
                  state_layers=counts["linear"],
                  state_elements=counts["linear"] * linear.state_elements_per_layer if linear else 0,
                  state_bytes=counts["linear"] * linear.state_bytes_per_layer if linear else Fraction(0),
                  indexer_bytes_per_token=indexer_bytes, formulas=tuple(formulas))
    return _Analysis(pb, kv, cfg, d, att, where, list(f.notes))


def _experts_per_token(f: _Fields, mtype: str) -> int:
    # OpenAI's own gpt-oss config.json says experts_per_token; transformers says num_experts_per_tok.
    if "num_experts_per_tok" not in f.config and "experts_per_token" in f.config:
        return f.need("experts_per_token", why=mtype)
    return f.need("num_experts_per_tok", why=mtype)


# --------------------------------------------------------------------------------------------------
# precision


@dataclass(frozen=True)
class _Precision:
    bytes_per_param: Fraction | None
    param_note: str
    bytes_per_kv_element: Fraction | None
    kv_note: str
    notes: tuple[str, ...]


def _dtype(cfg: Mapping[str, Any], where: str) -> tuple[str | None, Fraction | None]:
    for key in ("torch_dtype", "dtype"):
        value = cfg.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise ScenarioError(f"field '{key}' must be a datatype name, got {value!r}", where=where)
        name = value.removeprefix("torch.")
        if name not in _DTYPE_BYTES:
            raise ScenarioError(f"field '{key}' names an unknown datatype {value!r}", where=where,
                                hint=f"known: {', '.join(sorted(_DTYPE_BYTES))}")
        return name, _DTYPE_BYTES[name]
    return None, None


def _not_converted(q: Mapping[str, Any], where: str) -> set[str]:
    """The parameter groups ``modules_to_not_convert`` keeps at the model's datatype."""
    out: set[str] = set()
    patterns = q.get("modules_to_not_convert") or q.get("ignore") or ()
    if isinstance(patterns, (str, Mapping)) or not isinstance(patterns, Sequence):
        raise ScenarioError(f"quantization_config: modules_to_not_convert/ignore must be a list of module names, got "
                            f"{patterns!r}", where=where)
    for pattern in patterns:
        p = str(pattern).removeprefix("re:").rstrip("$")
        # norms, biases and correction terms are not weight matrices (compressed-tensors lists each one:
        # "model.layers.11.self_attn.k_proj.bias", "model.layers.5.self_attn.q_norm")
        if "norm" in p or p.endswith("bias") or p.endswith("sinks"):
            continue
        if p.rstrip(".*$").endswith(("attn", "attention")):  # the whole attention block
            out.add("attention")
        if "router" in p or p.endswith("mlp.gate") or "gate.weight" in p:
            out.add("router")
        if "shared_expert" in p:
            out.add("shared")
        if "embed" in p:
            out.add("embedding")
        if "lm_head" in p:
            out.add("lm_head")
    return out


def _precision(cfg: Mapping[str, Any], pb: ParamBreakdown, where: str) -> _Precision:
    name, base = _dtype(cfg, where)
    notes: list[str] = []
    q = cfg.get("quantization_config")
    if q is not None and not isinstance(q, Mapping):
        raise ScenarioError(f"field 'quantization_config' must be an object, got {q!r}", where=where)
    kv_bytes, kv_note = base, f"torch_dtype {name}: the KV cache is kept in the model's datatype" if name else ""
    if base is None and q is None:
        return _Precision(None, "", None, "", ("config gives no torch_dtype: bytes per weight come from the "
                                               "scenario",))
    weight_base = base if base is not None else Fraction(2)
    if base is None:
        notes.append("config gives no torch_dtype: unquantized weights counted at 2 bytes (bf16)")
    groups = {"embedding": pb.embedding, "lm_head": pb.lm_head, "attention": pb.attention, "dense": pb.dense_mlp,
              "experts": pb.routed_experts, "shared": pb.shared_experts, "router": pb.router}
    if q is None:
        return _Precision(weight_base, f"torch_dtype {name}: {_n(weight_base)} B per weight", kv_bytes, kv_note,
                          tuple(notes))
    method = str(q.get("quant_method") or q.get("quant_algo") or "").lower()
    # Embeddings, LM head and routers stay at the model's datatype in every scheme modelled here.
    keep = _not_converted(q, where) | {"embedding", "lm_head", "router"}
    quant_bytes: Fraction | None = None
    what = ""
    if method == "mxfp4":
        quant_bytes = Fraction(17, 32)  # 32 four-bit values + one 8-bit scale = 4.25 bits each
        keep |= {"attention"}  # gpt-oss quantizes the MoE experts only
        what = "MXFP4 (4-bit values, one 8-bit scale per 32: 4.25 bits)"
    elif method in ("fp8", "fbgemm_fp8"):
        block = q.get("weight_block_size")
        if block is not None and not (isinstance(block, Sequence) and len(block) == 2
                                      and all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in block)):
            # [128, true] read as a 128x1 block, a string or [0, 128] as per-tensor scales: each silently
            raise ScenarioError(f"quantization_config: weight_block_size must be two whole numbers, got {block!r}",
                                where=where)
        if isinstance(block, Sequence) and len(block) == 2 and all(isinstance(b, int) and b > 0 for b in block):
            quant_bytes = 1 + Fraction(4, block[0] * block[1])
            what = f"FP8 with one FP32 scale per {block[0]}x{block[1]} block"
        else:
            quant_bytes = Fraction(1)
            what = "FP8 (per-tensor or per-channel scales not counted)"
    elif method in ("awq", "gptq"):
        bits = q.get("bits", q.get("w_bit"))
        group = q.get("group_size", q.get("q_group_size"))
        if not isinstance(bits, int) or isinstance(bits, bool) or not 1 <= bits <= 16:
            raise ScenarioError(f"quantization_config: {method} needs 'bits', got {bits!r}", where=where)
        if group is not None and (isinstance(group, bool) or not isinstance(group, int) or group == 0 or group < -1):
            # -1 is GPTQ's per-channel; 0, true, "128" or 1.5 read as per-channel scales, silently
            raise ScenarioError(f"quantization_config: {method} group_size must be a whole number of weights (or -1 "
                                f"for per-channel scales), got {group!r}", where=where)
        if isinstance(group, int) and not isinstance(group, bool) and group > 0:
            quant_bytes = Fraction(bits, 8) + (2 + Fraction(bits, 8)) / group
            what = f"{method.upper()} {bits}-bit, an FP16 scale and a {bits}-bit zero point per {group} weights"
        else:
            quant_bytes = Fraction(bits, 8)
            what = f"{method.upper()} {bits}-bit (per-channel scales not counted)"
    elif method == "bitsandbytes":
        if q.get("load_in_4bit"):
            quant_bytes, what = Fraction(1, 2), "bitsandbytes 4-bit (block scales not counted)"
        elif q.get("load_in_8bit"):
            quant_bytes, what = Fraction(1), "bitsandbytes 8-bit (scales not counted)"
    elif method == "compressed-tensors":
        if not isinstance(q.get("config_groups") or {}, Mapping):
            raise ScenarioError(f"quantization_config: config_groups must be an object, got {q['config_groups']!r}",
                                where=where)
        bits = {g.get("weights", {}).get("num_bits") for g in (q.get("config_groups") or {}).values()
                if isinstance(g, Mapping) and isinstance(g.get("weights"), Mapping)}
        for b in bits:  # 0 bits read as weights that take no memory; true as 1 bit
            if b is not None and (isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= 16):
                raise ScenarioError(f"quantization_config: compressed-tensors weights need 'num_bits' from 1 to 16, "
                                    f"got {b!r}", where=where)
        if len(bits) == 1 and isinstance(next(iter(bits)), int):
            quant_bytes = Fraction(next(iter(bits)), 8)
            what = f"compressed-tensors {next(iter(bits))}-bit weights (scales not counted)"
        scheme = q.get("kv_cache_scheme")
        kv_bits = scheme.get("num_bits") if isinstance(scheme, Mapping) else None
        if kv_bits is not None and (isinstance(kv_bits, bool) or not isinstance(kv_bits, int)
                                    or not 1 <= kv_bits <= 16):
            raise ScenarioError(f"quantization_config: kv_cache_scheme needs 'num_bits' from 1 to 16, got {kv_bits!r}",
                                where=where)
        if isinstance(scheme, Mapping) and isinstance(scheme.get("num_bits"), int):
            kv_bytes = Fraction(scheme["num_bits"], 8)
            kv_note = f"kv_cache_scheme: {scheme['num_bits']}-bit KV cache"
    if str(q.get("kv_cache_quant_algo") or "").upper() == "FP8":
        kv_bytes, kv_note = Fraction(1), "kv_cache_quant_algo FP8: 1 byte per cached element"
    if quant_bytes is None:
        notes.append(f"quantization_config method {method or '?'!r} not modelled: weights counted at "
                     f"{_n(weight_base)} B")
        return _Precision(weight_base, f"{_n(weight_base)} B per weight", kv_bytes, kv_note, tuple(notes))
    quantized = sum(v for k, v in groups.items() if k not in keep)
    plain = pb.total - quantized
    total_bytes = quantized * quant_bytes + plain * weight_base
    mean = total_bytes / pb.total if pb.total else weight_base
    kept = ", ".join(sorted(k for k in keep if groups.get(k))) or "nothing"
    note = (f"{_n(quantized)} weights in {what} at {_n(quant_bytes)} B + {_n(plain)} ({kept}) at "
            f"{_n(weight_base)} B = {float(mean):.4g} B per weight on average")
    return _Precision(mean, note, kv_bytes, kv_note, tuple(notes))


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


def _b(x: int | Fraction) -> str:
    """A parameter count in billions, for notes."""
    return f"{float(x) / 1e9:.4g}B"


def model_values(config: Mapping[str, Any], *, bytes_per_kv_element: Fraction | Any | None = None,
                 default_bytes_per_kv_element: Fraction | Any | None = None,
                 where: str = "config") -> ModelValues:
    """Model quantities from a Hugging Face style config mapping.

    Returns ``params_total``, ``params_active`` (compute convention: no input embedding, output head
    included), ``params_embedding``, ``layers``, the KV cache by layer kind (``kv_bytes_per_token``,
    ``kv_window_bytes_per_token``, ``attention_window``, ``kv_chunk_bytes_per_token``,
    ``attention_chunk``, ``kv_state_bytes``), ``bytes_per_kv_element``, ``d_model``; ``head_dim``,
    ``kv_heads``, ``query_heads``, ``kv_cache_layers`` and ``global_attention_layers`` for non-latent
    attention; the expert counts for mixture-of-experts models; ``bytes_per_param`` when the config
    names its datatype; ``context`` (its maximum, ``max_position_embeddings``) when given.
    ``bytes_per_kv_element`` given here wins over the config's datatype (the user set it);
    ``default_bytes_per_kv_element`` is used only when the config names no datatype (else 2).
    Raises ``ScenarioError`` for an unknown architecture, a missing size field or a bad value.
    """
    a = _analyse(config, where)
    pb, kv, cfg = a.params, a.kv, a.cfg
    L = pb.layers
    prec = _precision(cfg, pb, a.where)
    notes: list[str] = list(pb.notes) + list(prec.notes)
    if bytes_per_kv_element is not None:
        e = _fraction(bytes_per_kv_element, where)
        e_note = "bytes per cached element: set by the user"
    elif prec.bytes_per_kv_element is not None:
        e, e_note = prec.bytes_per_kv_element, prec.kv_note
    elif default_bytes_per_kv_element is not None:
        e = _fraction(default_bytes_per_kv_element, where)
        e_note = "bytes per cached element: the config names no datatype; from the scenario"
    else:
        e = Fraction(2)
        e_note = "bytes per cached element: the config names no datatype; 2 (bf16) assumed"
        notes.append("config gives no torch_dtype: KV cache counted at 2 bytes per element (bf16)")
    defaults = ("; " + "; ".join(pb.notes)) if pb.notes else ""

    parts = [f"embedding {_n(pb.embedding)}"]
    parts.append(f"LM head {_n(pb.lm_head)}" if pb.lm_head else "LM head tied to the embedding")
    parts.append(f"attention {_n(pb.attention)} ({L} layers)")
    if pb.dense_mlp:
        parts.append(f"dense MLP {_n(pb.dense_mlp)} ({L - pb.moe_layers} layers)")
    if pb.is_moe:
        parts.append(f"routed experts {_n(pb.routed_experts)} ({pb.moe_layers} MoE layers x {pb.experts_total})")
        if pb.shared_experts:
            parts.append(f"shared experts {_n(pb.shared_experts)}")
        parts.append(f"routers {_n(pb.router)}")
    conv = "; norms, biases and sinks not counted"
    total_note = (" + ".join(parts) + conv + f"; {_b(pb.total_non_embedding)} without embeddings" + defaults)
    lookup = ("the embedding matrix counted once, as the tied output head" if pb.tied else
              f"minus the input embedding {_n(pb.embedding)} (a lookup), output head kept")
    active_note = (f"multiplied per token (compute convention): {_n(pb.active_with_embedding)} on the token's path, "
                   f"{lookup}; "
                   f"{_b(pb.active_with_embedding)} with the embedding, {_b(pb.active_non_embedding)} without "
                   "any embedding")
    if pb.is_moe:
        active_note += (f"; {pb.experts_active} of {pb.experts_total} routed experts per MoE layer, shared experts "
                        "and routers counted")
    if pb.tied:
        active_words = (f"params_active {_b(pb.active)} (tied embeddings: the matrix counts once, as the output "
                        f"head), {_b(pb.active_non_embedding)} without it")
    else:
        active_words = (f"params_active {_b(pb.active)} without the input embedding, output head included "
                        f"({_b(pb.active_with_embedding)} with it, {_b(pb.active_non_embedding)} without any "
                        "embedding)")
    notes.append(f"params_total {_b(pb.total)} with embeddings ({_b(pb.total_non_embedding)} without); "
                 + active_words)

    layout = "; ".join(kv.formulas)
    k_full = Fraction(kv.full_elements) * e + kv.indexer_bytes_per_token
    kv_note = (f"{layout}; * {_n(e)} B per element; only the full layers grow with the context"
               + (f" (+ indexer {_n(kv.indexer_bytes_per_token)} B)" if kv.indexer_bytes_per_token else "")
               + defaults)
    if kv.window_layers or kv.chunk_layers or kv.state_layers:
        parts_kv = [f"at long context {_n(k_full)} B per token"]
        if kv.window_layers or kv.chunk_layers:
            every = (Fraction(kv.full_elements + kv.window_elements + kv.chunk_elements) * e
                     + kv.indexer_bytes_per_token)
            parts_kv.append(f"every attention layer counted as full would be {_n(every)}")
        if kv.state_layers:
            parts_kv.append(f"plus a fixed {_n(kv.state_bytes_at(e))} B per sequence of linear-attention state")
        notes.append(f"KV by layer kind: {layout}; " + ", ".join(parts_kv) + "; see kv_bytes_per_sequence")

    out = ModelValues({
        "params_total": ConfigValue(Fraction(pb.total), "param", total_note),
        "params_active": ConfigValue(Fraction(pb.active), "param", active_note),
        "params_embedding": ConfigValue(Fraction(pb.embedding), "param",
                                        f"input token embedding: vocab_size {_n(pb.embedding // a.d)} * hidden_size "
                                        f"{_n(a.d)}"),
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
        "kv_state_bytes": ConfigValue(kv.state_bytes_at(e), "B/seq",
                                      f"{kv.state_layers} linear-attention layers, a fixed state each"
                                      if kv.state_layers else "no linear-attention layers"),
        "bytes_per_kv_element": ConfigValue(e, "B", e_note, native=bytes_per_kv_element is None),
        "d_model": ConfigValue(Fraction(a.d), "1", f"hidden_size = {a.d}"),
    })
    if prec.bytes_per_param is not None:
        out["bytes_per_param"] = ConfigValue(prec.bytes_per_param, "B/param", prec.param_note, native=True)
    max_ctx = cfg.get("max_position_embeddings")
    if isinstance(max_ctx, int) and not isinstance(max_ctx, bool) and max_ctx > MAX_SIZE:
        # some files say "unlimited" this way (1e30): not a context to read, said so
        notes.append(f"max_position_embeddings = {_count(max_ctx)} is no real context: not used")
        max_ctx = None
    if max_ctx is not None:  # a value that is not a context (-1, 0, true, 1.5) is an error, never silently dropped
        max_ctx = _Fields(cfg, a.where, "")._whole("max_position_embeddings", max_ctx, 1)
        out["context"] = ConfigValue(Fraction(max_ctx), "token/seq",
                                     f"the model's maximum context, max_position_embeddings = {max_ctx:,}",
                                     native=True)
    att = a.attention
    if att.latent:
        rank = att.kv_elements_per_layer
        out["head_dim"] = ConfigValue(Fraction(att.head_dim), "1",
                                      f"latent attention: the cached vector, kv_lora_rank + qk_rope_head_dim = {rank}")
        out["kv_heads"] = ConfigValue(Fraction(1), "1", "latent attention: one cached latent shared by every query "
                                      "head (multi-query over the cache)")
        out["kv_elements_per_layer"] = ConfigValue(Fraction(rank), "1/token",
                                                   f"latent attention: kv_lora_rank + qk_rope_head_dim = {rank} "
                                                   "elements per layer and token, one latent serving as keys and "
                                                   "values (not 2 * kv_heads * head_dim)")
        out["query_heads"] = ConfigValue(Fraction(att.query_heads), "1", f"num_attention_heads = {att.query_heads}")
    elif att.head_dim is not None and att.kv_heads is not None:
        out["head_dim"] = ConfigValue(Fraction(att.head_dim), "1", f"head_dim = {att.head_dim}" + defaults)
        out["kv_heads"] = ConfigValue(Fraction(att.kv_heads), "1", f"num_key_value_heads = {att.kv_heads}" + defaults)
        out["query_heads"] = ConfigValue(Fraction(att.query_heads), "1", f"num_attention_heads = {att.query_heads}")
    if att.head_dim is not None and att.kv_heads is not None:
        if kv.full_layers:
            out["kv_cache_layers"] = ConfigValue(Fraction(kv.full_layers), "1",
                                                 "layers whose KV cache spans the whole context")
            out["global_attention_layers"] = ConfigValue(Fraction(kv.full_layers), "1",
                                                         "layers whose attention spans the whole context")
    if pb.is_moe:
        out["experts_total"] = ConfigValue(Fraction(pb.experts_total), "1",
                                           f"routed experts per MoE layer ({pb.moe_layers} of {L} layers are MoE)")
        out["experts_active"] = ConfigValue(Fraction(pb.experts_active), "1", "routed experts per token")
        if pb.experts_shared:
            out["experts_shared"] = ConfigValue(Fraction(pb.experts_shared), "1",
                                                "shared experts per MoE layer, used by every token")
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


# --------------------------------------------------------------------------------------------------
# the local Hugging Face cache


def _hub_cache() -> pathlib.Path:
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            return pathlib.Path(os.environ[var])
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface")
    return pathlib.Path(home) / "hub"


def find_cached_config(model_id: str) -> pathlib.Path:
    """The ``config.json`` of Hugging Face model ``ORG/NAME`` in the local cache, offline.

    Looks in ``$HF_HUB_CACHE`` (else ``$HF_HOME/hub``, else ``~/.cache/huggingface/hub``) for
    ``models--ORG--NAME/snapshots/*/config.json``, preferring the snapshot ``refs/main`` names.  Uses
    ``huggingface_hub.try_to_load_from_cache`` when that optional package is installed (it knows the
    same layout).  Never downloads.  Raises ``ScenarioError`` (one line) when absent.
    """
    parts = model_id.split("/")
    if len(parts) != 2 or not all(p and p not in (".", "..") and "\\" not in p for p in parts):
        raise ScenarioError(f"not a Hugging Face model id: {model_id!r}", where="--model",
                            hint="give ORG/NAME (e.g. meta-llama/Llama-3.1-8B) or a path to a config.json")
    cache = _hub_cache()
    try:
        from huggingface_hub import try_to_load_from_cache  # optional extra

        found = try_to_load_from_cache(model_id, "config.json", cache_dir=str(cache))
        if isinstance(found, str) and os.path.isfile(found):
            return pathlib.Path(found)
    except ImportError:
        pass
    except Exception:  # noqa: BLE001 - a broken optional package must not hide the plain lookup below
        pass
    repo = cache / ("models--" + "--".join(parts))
    snapshots = repo / "snapshots"
    ref = repo / "refs" / "main"
    candidates: list[pathlib.Path] = []
    try:
        if ref.is_file():
            candidates.append(snapshots / ref.read_text(encoding="utf-8").strip() / "config.json")
        if snapshots.is_dir():
            candidates.extend(sorted(snapshots.glob("*/config.json"), key=lambda p: p.stat().st_mtime,
                                     reverse=True))
    except OSError:
        pass
    for path in candidates:
        if path.is_file():
            return path
    raise ScenarioError(f"model {model_id} is not in the local Hugging Face cache ({cache})", where="--model",
                        hint=f"download it first (huggingface-cli download {model_id} config.json) or give "
                             "a path to its config.json")
