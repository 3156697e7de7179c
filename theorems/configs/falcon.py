"""Falcon (7B, 40B, 180B): a two-matrix MLP (no gate) and multi-query or grouped KV heads.

The original files say ``RefinedWebModel`` (Falcon-7B: multi-query) or ``RefinedWeb`` (Falcon-40B/180B:
grouped KV heads, ``n_head_kv``); transformers' ``falcon`` type says ``multi_query`` and
``new_decoder_architecture`` (``configuration_falcon.py``).
"""

from __future__ import annotations

from .base import Attention, Family, Fields, Mlp, gqa


def _attention(f: Fields, mtype: str, d: int) -> Attention:
    heads = f.need("num_attention_heads", aliases=("n_head",))
    kv = f.optional("num_key_value_heads", None, minimum=1, aliases=("num_kv_heads", "n_head_kv"))
    # tiiuae's own RefinedWeb code (Falcon-40B/180B) always groups the KV heads (n_head_kv); RefinedWebModel
    # (Falcon-7B) and transformers' FalconConfig default to the old decoder with multi_query.
    refined_web = f.get("model_type") == "RefinedWeb"
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
    return gqa(f, d, kv_heads=kv)


def _mlp(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    width = f.optional("ffn_hidden_size", None, minimum=1)
    if width is None:
        width = 4 * d
        f.notes.append(f"'ffn_hidden_size' absent: 4 * hidden_size = {width} (Falcon's MLP)")
    return Mlp(dense_mlp=n * 2 * d * width)  # dense_h_to_4h, dense_4h_to_h: no gate


FAMILIES = (
    Family("falcon", {"falcon": True}, {"FalconForCausalLM": "falcon", "RWForCausalLM": "falcon"},
           mlp=_mlp, attention=_attention, aliases={"RefinedWeb": "falcon", "RefinedWebModel": "falcon"},
           # tiiuae's 7B and 40B files name no context: FalconConfig's default, the 2,048 tokens they were trained at
           class_defaults={"falcon": {"max_position_embeddings": 2048}}),
)
