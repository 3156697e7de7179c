"""Tencent Hunyuan dense decoders (``hunyuan_v1_dense``: Hunyuan-7B, Hy-MT2-7B; transformers'
``configuration_hunyuan_v1_dense.py``, ``modeling_hunyuan_v1_dense.py``): Llama's tensors, every layer q, k, v and o
projections (``num_key_value_heads``, ``head_dim``) and a gated MLP of ``intermediate_size``, every layer full
attention; the q and k RMSNorms (``use_qk_norm``) are norms, not counted; the dynamic-alpha rotary scaling sets no
shape.

Tencent's files also carry the names of their own modeling code.  ``attention_head_dim`` must agree with the head size
read; ``use_cla`` true (cross-layer attention: layers that reuse another layer's keys and values, every
``cla_share_factor``-th) is refused, since transformers' class builds no such layer and the reader would count a cache
per layer.  Embeddings untied by default (``HunYuanDenseV1Config``; the published files say true).
"""

from __future__ import annotations

from derive.errors import ScenarioError

from .base import Attention, Family, Fields, gqa
from .dense import dense_mlp


def _attention(f: Fields, mtype: str, d: int) -> Attention:
    att = gqa(f, d)
    own = f.optional("attention_head_dim", None, minimum=1)
    if own is not None and own != att.head_dim:
        raise ScenarioError(f"field 'attention_head_dim' ({own}) disagrees with the head size read ({att.head_dim})",
                            where=f.where, hint="Tencent's code reads attention_head_dim, transformers' head_dim")
    if f.flag("use_cla", False, ""):
        raise ScenarioError(f"field 'use_cla' is true: cross-layer attention (layers reusing another layer's keys and "
                            f"values) is not a layer kind a {mtype} config is read with", where=f.where,
                            hint="refused rather than counted as a cache in every layer")
    return att


def _notes(f: Fields, mtype: str, att: Attention) -> None:
    f.read.add("cla_share_factor")  # read only with use_cla, which is refused above
    if f.flag("use_qk_norm", False, ""):
        f.notes.append(f"{mtype}: q and k RMSNorms (use_qk_norm; norms, not counted)")


FAMILIES = (
    Family("hunyuan", {"hunyuan_v1_dense": False}, {"HunYuanDenseV1ForCausalLM": "hunyuan_v1_dense"}, mlp=dense_mlp,
           attention=_attention, notes=_notes),
)
