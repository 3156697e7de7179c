"""DBRX (``dbrx``: databricks/dbrx-base and dbrx-instruct; transformers' ``configuration_dbrx.py``,
``modeling_dbrx.py``): every layer grouped-query attention with one fused ``Wqkv`` projection (the weights of q, k and
v projections) and ``out_proj``, and a mixture of ``moe_num_experts`` gated experts (``w1``, ``v1``, ``w2``, stored
stacked) of ``ffn_hidden_size``, ``moe_top_k`` per token, with a router; no shared expert, no dense layer.

The file names its sizes its own way and nests two of them: ``d_model``, ``n_layers``, ``n_heads``, ``max_seq_len`` at
the top, ``attn_config`` (``kv_n_heads``, ``clip_qkv``, ``rope_theta``) and ``ffn_config`` (``ffn_hidden_size``,
``moe_num_experts``, ``moe_top_k``, ...).  ``renames`` hands them to the reader under its names, each said in a note;
a nested size the file leaves out is refused, not filled with ``DbrxAttentionConfig``'s or ``DbrxFFNConfig``'s
defaults (1 KV head, 4 experts of 3,584, 1 per token: no published DBRX's).  ``clip_qkv`` bounds activations and sets
no shape; the LayerNorms have no bias and, like every norm, are not counted.  Embeddings untied by default
(``DbrxConfig``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from derive.errors import ScenarioError

from .base import Attention, Family, Fields, renamed_size
from .mixtral import every_layer_moe

# (where the file keeps it, its name there) -> the reader's name; None: the top level
_NAMES = ((None, "d_model", "hidden_size"), (None, "n_layers", "num_hidden_layers"),
          (None, "n_heads", "num_attention_heads"), (None, "max_seq_len", "max_position_embeddings"),
          ("attn_config", "kv_n_heads", "num_key_value_heads"), ("ffn_config", "ffn_hidden_size", "intermediate_size"),
          ("ffn_config", "moe_num_experts", "num_local_experts"), ("ffn_config", "moe_top_k", "num_experts_per_tok"))
_OPTIONAL = frozenset({"max_seq_len"})  # absent: DbrxConfig's 2,048 (class_defaults below), with a note


def _renames(cfg: Mapping[str, Any], where: str) -> tuple[Mapping[str, Any], list[str]]:
    out = dict(cfg)
    blocks: dict[str, Mapping[str, Any]] = {}
    for block in ("attn_config", "ffn_config"):
        value = cfg.get(block)
        if not isinstance(value, Mapping):
            raise ScenarioError(f"field '{block}' must be an object, got {value!r}", where=where,
                                hint="a dbrx config keeps its attention and expert sizes in attn_config and ffn_config")
        blocks[block] = value
    read = Fields(cfg, where, "dbrx")
    renamed = []
    for block, name, ours in _NAMES:
        source = cfg if block is None else blocks[block]
        label = name if block is None else f"{block}.{name}"
        if source.get(name) is None:
            if name in _OPTIONAL:
                continue
            raise ScenarioError(f"missing field '{label}'", where=where, hint=f"a dbrx config needs '{label}'")
        renamed_size(read, out, label, source[name], ours, renamed)
    return out, ["dbrx names its own sizes: " + ", ".join(renamed)]


def _notes(f: Fields, mtype: str, att: Attention) -> None:
    clip = f.config["attn_config"].get("clip_qkv")
    f.notes.append("dbrx: fused Wqkv (the q, k and v weights), "
                   + ("no clipping" if clip is None else f"attn_config.clip_qkv {clip}: q, k, v clipped")
                   + " (no shape); LayerNorms without bias, not counted")


FAMILIES = (
    Family("dbrx", {"dbrx": False}, {"DbrxForCausalLM": "dbrx"}, mlp=every_layer_moe, notes=_notes,
           renames=_renames, class_defaults={"dbrx": {"max_position_embeddings": 2048}}),
)
