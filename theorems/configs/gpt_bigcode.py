"""GPT-BigCode (``gpt_bigcode``: BigCode's SantaCoder, StarCoderBase and StarCoder; transformers'
``configuration_gpt_bigcode.py``, ``modeling_gpt_bigcode.py``): GPT-2's layout and field names (``gpt2``: ``n_embd``,
``n_layer``, ``n_head``, ``n_positions``, ``n_inner``, the learned position table ``wpe``, the ungated ``c_fc`` and
``c_proj`` MLP, the tied head) with multi-query attention.

- ``multi_query`` true (``GPTBigCodeConfig``'s default, every published StarCoder): one key and one value head shared
  by every query head.  The fused ``c_attn`` then has ``n_embd + 2 * head_dim`` outputs, not ``3 * n_embd``, and the KV
  cache holds ``2 * head_dim`` elements per token and layer.  False: one key and value head per query head, as GPT-2.
- ``attention_softmax_in_fp32``, ``scale_attention_softmax_in_fp32`` and the ``inference_runner`` settings change the
  arithmetic or the kernels, no shape.  Biases and LayerNorms are not counted, as for GPT-2.
"""

from __future__ import annotations

from .base import Attention, Family, Fields
from .gpt2 import fused_attention, gpt2_renames, learned_positions
from .starcoder2 import ungated_mlp


def _attention(f: Fields, mtype: str, d: int) -> Attention:
    multi = f.flag("multi_query", True, "GPTBigCodeConfig's default, multi-query attention")
    att = fused_attention(f, mtype, d, kv_heads=1 if multi else None)
    f.notes.append(f"{mtype} attention: {att.query_heads} query heads of {att.head_dim} (n_embd / n_head), "
                   + (f"multi_query: one key and value head, c_attn n_embd + 2 * {att.head_dim} wide" if multi else
                      "multi_query false: one key and value head per query head, c_attn 3 * n_embd wide")
                   + "; biases and LayerNorms not counted")
    return att


FAMILIES = (
    Family("gpt_bigcode", {"gpt_bigcode": True}, {"GPTBigCodeForCausalLM": "gpt_bigcode"}, mlp=ungated_mlp,
           attention=_attention, renames=gpt2_renames("gpt_bigcode"), positions=learned_positions),
)
