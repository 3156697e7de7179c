"""Which family reads a config: by ``model_type``, else by ``architectures``, else (a file that names no
known architecture) by the fields only one family has.  Adding a family: its module and one entry in
``FAMILIES`` below."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from derive.errors import ScenarioError

from . import (
    bailing,
    bloom,
    dbrx,
    deepseek,
    dense,
    dots1,
    ernie,
    falcon,
    falcon_h1,
    gemma,
    gemma4,
    glm,
    gpt2,
    gpt_bigcode,
    gpt_neox,
    gpt_oss,
    granite,
    hunyuan,
    jamba,
    llama4,
    llama_like,
    mimo,
    minimax,
    mixtral,
    nemotron_h,
    nemotron_nas,
    olmoe,
    opt,
    phi,
    qwen_hybrid,
    qwen_moe,
    starcoder2,
)
from .base import Family

FAMILIES: tuple[Family, ...] = (*dense.FAMILIES, *gemma.FAMILIES, *falcon.FAMILIES, *mixtral.FAMILIES,
                                *gpt_oss.FAMILIES, *qwen_moe.FAMILIES, *qwen_hybrid.FAMILIES, *llama4.FAMILIES,
                                *glm.FAMILIES, *deepseek.FAMILIES, *nemotron_h.FAMILIES,
                                *nemotron_nas.FAMILIES, *jamba.FAMILIES, *falcon_h1.FAMILIES,
                                *granite.FAMILIES, *gemma4.FAMILIES, *mimo.FAMILIES, *llama_like.FAMILIES,
                                *starcoder2.FAMILIES, *minimax.FAMILIES,
                                *ernie.FAMILIES, *phi.FAMILIES, *gpt_neox.FAMILIES, *olmoe.FAMILIES,
                                *dbrx.FAMILIES, *hunyuan.FAMILIES, *gpt2.FAMILIES,
                                *opt.FAMILIES, *gpt_bigcode.FAMILIES,
                                *bloom.FAMILIES, *dots1.FAMILIES, *bailing.FAMILIES)
FAMILY_OF: dict[str, Family] = {mtype: fam for fam in FAMILIES for mtype in fam.model_types}
ARCHITECTURES: dict[str, str] = {name: mtype for fam in FAMILIES for name, mtype in fam.architectures.items()}
ALIASES: dict[str, str] = {old: new for fam in FAMILIES for old, new in fam.aliases.items()}
# Multimodal wrappers whose language model is whatever text_config's own model_type says (Mistral Small 3.x's
# "mistral", Ministral 3's "ministral3", Mistral Large 3's "deepseek_v3"): the wrapper -> the text type transformers
# assumes when text_config names none (configuration_mistral3.py: ``sub_configs_defaults``, "mistral")
WRAPPERS: dict[str, str] = {"mistral3": "mistral", "qwen3_vl": "qwen3_vl_text", "qwen3_vl_moe": "qwen3_vl_moe_text",
                            "glm4v_moe": "glm4v_moe_text",
                            # Kimi-K2.5: Kimi K2's language model in text_config (model_type deepseek_v3 or kimi_k2)
                            "kimi_k25": "deepseek_v3",
                            # Qwen2-VL and Qwen2.5-VL: Qwen2's language model (q, k and v biases, a gated MLP)
                            "qwen2_vl": "qwen2_vl_text", "qwen2_5_vl": "qwen2_5_vl_text"}
# wrappers whose transformers 4 files keep the language model's fields at the top level beside vision_config
TOP_LEVEL_TEXT = frozenset({"qwen2_vl", "qwen2_5_vl"})
WRAPPER_ARCHITECTURES: dict[str, str] = {"Mistral3ForConditionalGeneration": "mistral3",
                                         "Qwen3VLForConditionalGeneration": "qwen3_vl",
                                         "Qwen3VLMoeForConditionalGeneration": "qwen3_vl_moe",
                                         "Glm4vMoeForConditionalGeneration": "glm4v_moe",
                                         "KimiK25ForConditionalGeneration": "kimi_k25",
                                         "Qwen2VLForConditionalGeneration": "qwen2_vl",
                                         "Qwen2_5_VLForConditionalGeneration": "qwen2_5_vl"}
SUPPORTED_MODEL_TYPES: tuple[str, ...] = tuple(sorted((*FAMILY_OF, *WRAPPERS)))
# for a refusal's hint, which one error line cuts at 300 characters: the types in the order of FAMILIES (the plain
# decoders first: llama, mistral, qwen2, qwen3, ...), so that the common ones are the ones still shown
SUPPORTED_HINT = "supported model_type values: " + ", ".join(dict.fromkeys((*FAMILY_OF, *WRAPPERS)))


def model_type(config: Mapping[str, Any], where: str) -> tuple[str, list[str]]:
    archs = config.get("architectures")
    if archs is not None and (not isinstance(archs, Sequence) or isinstance(archs, str)
                              or not all(isinstance(a, str) for a in archs)):
        raise ScenarioError(f"field 'architectures' must be a list of class names, got {archs!r}", where=where)
    mtype = config.get("model_type")
    if mtype is not None and not isinstance(mtype, str):
        raise ScenarioError(f"field 'model_type' must be a string, got {mtype!r}", where=where)
    mtype = ALIASES.get(mtype, mtype) if mtype is not None else None
    wrapper = mtype if mtype in WRAPPERS else next((WRAPPER_ARCHITECTURES[a] for a in archs or ()
                                                    if a in WRAPPER_ARCHITECTURES), None)
    if wrapper is not None and (mtype is None or mtype == wrapper):
        return _wrapped(config, wrapper, where)
    from_arch = next((ARCHITECTURES[a] for a in archs or () if a in ARCHITECTURES), None)
    if mtype in FAMILY_OF:
        if from_arch is not None and FAMILY_OF[from_arch] is not FAMILY_OF[mtype]:
            raise ScenarioError(f"field 'architectures' ({list(archs)}) and field 'model_type' ({mtype!r}) "
                                "describe different layouts", where=where)
        return mtype, []
    if from_arch is not None:
        return from_arch, []
    guess = guess_family(config)
    if archs is None and mtype is None:
        if guess is None:
            raise ScenarioError("missing fields 'architectures' and 'model_type': cannot tell the architecture",
                                where=where, hint=SUPPORTED_HINT)
        return guess, [f"config names no architecture (no 'architectures', no 'model_type'): read as {guess}, "
                       "whose fields it has; check the counts against the publisher's"]
    if guess is not None:
        return guess, [f"unknown architecture (architectures={list(archs or [])}, model_type={mtype!r}) read as "
                       f"{guess}, whose fields it has; check the counts against the publisher's"]
    raise ScenarioError(f"unsupported architecture: architectures={list(archs or [])}, model_type={mtype!r}",
                        where=where, hint=SUPPORTED_HINT)


def _wrapped(config: Mapping[str, Any], wrapper: str, where: str) -> tuple[str, list[str]]:
    """The language model of a multimodal wrapper, read as the type its ``text_config`` names."""
    text = config.get("text_config")
    if text is None and wrapper in TOP_LEVEL_TEXT and "hidden_size" in config:
        return ALIASES.get(WRAPPERS[wrapper], WRAPPERS[wrapper]), []  # text_config() says so in the notes
    if not isinstance(text, Mapping):
        raise ScenarioError(f"a {wrapper} config keeps its language model in 'text_config', got {text!r}",
                            where=where, hint="the file's text_config holds the language model's sizes")
    inner = text.get("model_type", WRAPPERS[wrapper])
    if not isinstance(inner, str):  # a list or an object would not even be looked up
        raise ScenarioError(f"field 'text_config.model_type' must be text, got {inner!r}", where=where,
                            hint="the language model's type, like \"mistral\"")
    inner = ALIASES.get(inner, inner)
    if inner not in FAMILY_OF:
        raise ScenarioError(f"unsupported architecture: a {wrapper} config whose text_config has model_type "
                            f"{inner!r}", where=where,
                            hint=SUPPORTED_HINT)
    return inner, []  # a known type, read as its own (text_config says so in the notes)


def guess_family(config: Mapping[str, Any]) -> str | None:
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


def text_config(config: Mapping[str, Any], mtype: str, where: str) -> tuple[Mapping[str, Any], str, list[str]]:
    """Multimodal configs (Gemma 3, Llama 4, Qwen3.5) keep the language model in ``text_config``."""
    text = config.get("text_config")
    if text is None or "hidden_size" in config:
        archs = config.get("architectures") or ()
        outer = config.get("model_type") or next((WRAPPER_ARCHITECTURES[a] for a in archs
                                                  if a in WRAPPER_ARCHITECTURES), None)
        if outer in TOP_LEVEL_TEXT and text is None:
            return config, where, [f"language model read from the top level of a {outer} config (model_type "
                                   f"{mtype}); vision tower not counted"]
        return config, where, []
    if not isinstance(text, Mapping):
        raise ScenarioError(f"field 'text_config' must be an object, got {text!r}", where=where)
    merged = dict(text)
    for key in ("tie_word_embeddings", "torch_dtype", "dtype", "quantization_config"):
        if key not in merged and key in config:
            merged[key] = config[key]
    tie_notes = []
    outer_tie, inner_tie = config.get("tie_word_embeddings"), text.get("tie_word_embeddings")
    if outer_tie is not None and inner_tie is not None and outer_tie != inner_tie:
        # transformers 5 ties a multimodal model's head by the top level's flag (its re-saved files write the text
        # class's default inside: Qwen3-VL-30B-A3B's true beside the top level's false, an untied checkpoint)
        merged["tie_word_embeddings"] = outer_tie
        tie_notes = [f"tie_word_embeddings: the top level's {outer_tie!r} read, text_config's {inner_tie!r} not "
                     "(transformers ties the model's head by the top level's)"]
    outer = config.get("model_type") if isinstance(config.get("model_type"), str) else mtype
    named = text.get("model_type") if isinstance(text.get("model_type"), str) else mtype
    inner = f" (model_type {named})" if outer != mtype else ""  # a wrapper read as the type its text_config names
    return merged, f"{where}: text_config", [f"language model read from text_config{inner} of a {outer} config; "
                                             "vision tower not counted", *tie_notes]
