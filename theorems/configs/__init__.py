"""Hugging Face ``config.json`` reader: model quantities from an architecture description.

A model's ``config.json`` names its shape (width, depth, heads, experts, latent ranks, layer kinds,
datatype) but not its parameter count, its KV-cache size or its bytes per weight.  This package derives
those, exactly, in the units the lecture uses, so that ``derive --model PATH/config.json`` (or
``--model ORG/NAME`` from the local Hugging Face cache, or a model preset's ``[config]`` table)
supplies the model's quantities.  All LLM-specific knowledge lives here, in ``theorems/``; the engine
only calls ``model_values``.

Layout: one module per family (``dense``, ``gemma``, ``falcon``, ``mixtral``, ``gpt_oss``, ``qwen_moe``,
``qwen_hybrid``, ``llama4``, ``glm``, ``deepseek``, ``nemotron_h``, ``nemotron_nas``, ``jamba``, ``falcon_h1``,
``granite``, ``gemma4``, ``mimo``, ``gpt2``, ``gpt_bigcode``, ``opt``, ``bloom``, ...), each a ``Family`` record
saying how its configs lay out their layers; ``registry`` picks the family; ``reader`` runs the same steps for
every family; ``ssm`` holds the Mamba mixers the hybrid families share; ``precision`` reads the datatype and
quantization; ``hub`` finds a cached ``config.json``; ``meta`` counts the model transformers builds on PyTorch's meta
device (an optional extra).
Adding a family: its module, its test, and one entry in ``registry.FAMILIES``.

Refuse, never guess
-------------------
A file of an unknown ``model_type`` is read as the known family whose fields it has only when that family
reads every field of the file that could set a layer kind or a tensor shape (``base.neutral`` names the
fields that set neither: token ids, dropout, norm epsilons, rope settings, ...); otherwise one line names the
type and the fields it could not place.  A layer kind the family does not model (an unknown ``layer_types``
entry, a linear-attention layer in a family without one, an unknown ``hybrid_override_pattern`` character,
a NAS block with a window or sinks) is refused the same way.  Where torch and transformers are installed
(``pip install "derive-llm[meta]"``), the library's reader (``model_values_with_meta``) reads a ``model_type``
the hand reader has no family for by building it on PyTorch's meta device instead (``meta``), with a note; what
that count does not determine (a mixture of experts' active parameters, the KV cache of a model whose layers
are not all full attention) is left out, for ``--set``.  ``Infinity`` and ``NaN`` read as Python's json
reads them; a size field holding one is refused.

Main functions
--------------
- ``model_values(config, bytes_per_kv_element=None, where=...)``: quantity name -> ``ConfigValue``,
  returned as a ``ModelValues`` mapping whose ``notes`` list every default and approximation applied.
- ``load_config_json(path)``: the same, read from a file (errors name the file).
- ``param_breakdown(config, where=...)``: the parameter count split into its parts.
- ``kv_layout(config, where=...)``: the KV cache by layer kind (``KVLayout``), with
  ``KVLayout.bytes_per_sequence(context, bytes_per_element)`` for a hand count at any context.
- ``find_cached_config(model_id)``: the ``config.json`` of ``ORG/NAME`` in the local Hugging Face cache.

Counting conventions
--------------------
- Parameters are the weight matrices: token embedding, LM head (unless ``tie_word_embeddings``),
  attention projections (fused ones, GPT-NeoX's ``query_key_value`` and DBRX's ``Wqkv``, as the q, k and v
  weights they hold), MLP matrices (gated: gate, up and down, 3 matrices; Falcon, Phi, StarCoder2, GPT-NeoX: 2),
  MoE routers, linear-attention projections and convolutions, the DeepSeek-V3.2 indexer.  Norm gains, bias vectors,
  gpt-oss attention sinks and Gated DeltaNet's per-head decay vectors are not counted (each well under
  0.1 % of the models here); multi-token-prediction modules and vision towers are not counted.
- A Mamba-2 layer (Nemotron-H, Falcon-H1, Granite 4) counts ``in_proj``, the depthwise convolution and
  ``out_proj``; its per-head ``A_log``, ``D`` and ``dt_bias`` are not counted, like the norms.  A Mamba layer
  (Jamba) counts ``in_proj``, the convolution, ``x_proj``, ``dt_proj`` and its ``inner x state`` ``A_log``
  matrix and ``out_proj``; not ``D`` or the ``dt_proj`` bias (``ssm``).
- A learned position table (GPT-2's ``wpe``, OPT's ``embed_positions``, StarCoder's) is a weight table looked up per
  position like the token table: counted in ``params_total`` and ``params_embedding``, not in ``params_active``.
  ALiBi and rotary positions have no table.
- ``params_total`` counts everything above, embeddings included (the publishers' totals do).
- ``params_active`` is what the compute formulas multiply by: the parameters a token's forward pass
  multiplies, so *without the input embedding* (a table lookup, no multiplies) and *with the output
  head* (a real matrix multiply), routed experts a token does not use left out.  This is OpenAI's
  convention for gpt-oss (5.1B of 116.8B) and matches DeepSeek-V2-Lite's 2.4B.  ``params_embedding``
  gives the input embedding, so ``params_active + params_embedding`` is the count with every weight of
  the selected path (Mistral's 12.9B for Mixtral, DeepSeek-V3's 37B); the notes give both, and the
  counts without any embedding.  Gemma 4 E2B/E4B's per-layer table is looked up like the input embedding: in
  ``params_embedding``, not in ``params_active``; every config gives ``per_layer_row_params``, the per-layer
  row one token reads in decode beside the input embedding's (0 without such tables), which
  ``roofline.embedding_row_params`` adds to d_model.

KV cache by layer kind
----------------------
Every layer is one of: full attention (GQA/MQA/MHA: ``2 * kv_heads * head_dim`` elements per token;
MLA: ``kv_lora_rank + qk_rope_head_dim``), sliding window W (holds ``min(L, W)`` tokens), chunked
attention C (holds at most ``min(L, C)`` tokens: the current chunk), a layer with a recurrent state
(Gated DeltaNet linear attention, Mamba, Mamba-2: a state of fixed size per sequence, whatever the context; a
Falcon-H1 layer keeps both a KV cache and a state), or
no cache at all (Nemotron-H's MLP and MoE layers, a NAS block without attention, a Gemma 4 layer that reuses an
earlier layer's cache).  The counts per kind are
computed arithmetically from the config (``layer_types`` when given, else the family's pattern); no
per-layer list is built.  The values: ``kv_bytes_per_token`` (full layers plus any indexer keys: the
per-token figure at long context), ``kv_window_bytes_per_token`` and ``attention_window``,
``kv_chunk_bytes_per_token`` and ``attention_chunk``, ``kv_state_bytes`` (bytes per sequence of the fixed
recurrent state, at ``mamba_ssm_dtype`` / ``mamba_ssm_cache_dtype`` when the config names one).  The
library's ``kv_bytes_per_sequence`` combines them at the scenario's context.

For the context chapter's per-head formula (``kv_cache_layers * kv_elements_per_layer * e`` with
``kv_elements_per_layer = 2 * kv_heads * head_dim``), latent attention pins ``kv_elements_per_layer`` to
``kv_lora_rank + qk_rope_head_dim`` and reads decoding as multi-query attention over the latent
(``kv_heads`` 1, ``head_dim`` the latent's width, every query head), as absorbed MLA decoding runs.

Defaults
--------
A field that defines the model's size is required: when it is missing the reader raises
``ScenarioError`` naming the field and the file.  A few fields whose absence has one conventional
meaning are filled in and the notes say so (``num_key_value_heads``, ``head_dim``,
``tie_word_embeddings``, ``first_k_dense_replace``, ``moe_layer_freq``, ``decoder_sparse_step``, layer
patterns).  Counts are capped (``MAX_LAYERS`` layers, ``MAX_SIZE`` for widths): an absurd value is a
one-line error naming the field.
"""

from __future__ import annotations

import importlib

# each public name and the module that holds it: imported on first use (module ``__getattr__``), so that loading
# the library (a check, a build) does not import every family reader; ``from theorems.configs import x`` works
_HOMES = {
    "MAX_LAYERS": "base", "MAX_SIZE": "base", "ConfigValue": "base", "KVLayout": "base", "ModelValues": "base",
    "ParamBreakdown": "base", "find_cached_config": "hub", "CrossCheck": "meta", "MetaCount": "meta",
    "cross_check": "meta", "meta_available": "meta", "meta_count": "meta", "meta_model_values": "meta",
    "model_values_with_meta": "meta", "kv_layout": "reader", "load_config_json": "reader",
    "model_values": "reader", "param_breakdown": "reader", "read_config_json": "reader",
    "SUPPORTED_MODEL_TYPES": "registry",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "MAX_LAYERS",
    "MAX_SIZE",
    "SUPPORTED_MODEL_TYPES",
    "ConfigValue",
    "CrossCheck",
    "KVLayout",
    "MetaCount",
    "ModelValues",
    "ParamBreakdown",
    "cross_check",
    "find_cached_config",
    "kv_layout",
    "load_config_json",
    "meta_available",
    "meta_count",
    "meta_model_values",
    "model_values",
    "model_values_with_meta",
    "param_breakdown",
    "read_config_json",
]


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
