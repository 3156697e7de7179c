"""Tencent Hunyuan decoders: the dense ``hunyuan_v1_dense`` (Hunyuan-7B, Hy-MT2-7B) and the mixture of experts
``hunyuan_v1_moe`` (Hunyuan-A13B); transformers' ``configuration_hunyuan_v1_dense.py``,
``modeling_hunyuan_v1_dense.py``, ``configuration_hunyuan_v1_moe.py``, ``modeling_hunyuan_v1_moe.py``, and Tencent's
own ``models/modeling_hunyuan.py`` (Tencent-Hunyuan/Hunyuan-A13B @ df832ebcc42e64db91ec1a4eadb90c296f3c7346).

Both: Llama's attention, every layer q, k, v and o projections (``num_key_value_heads``, ``head_dim``), every layer
full attention; the q and k RMSNorms (``use_qk_norm``) are norms, not counted; the dynamic-alpha rotary scaling sets
no shape.  The dense type has a gated MLP of ``intermediate_size`` per layer.

The MoE type has in every layer (``HunYuanMoEV1Moe``) a shared gated MLP of ``intermediate_size`` used by every
token, ``num_experts`` gated experts of ``intermediate_size`` with ``moe_topk`` per token, and a router of
``hidden_size x num_experts`` (kept in float32 by both codes; counted as weights like any other).  Tencent's files
also carry per-layer lists (``moe_intermediate_size``, ``moe_topk``, ``num_shared_expert``) that the two codes read
differently, so the reader takes a list only when its entries agree and only where both codes build the same
tensors:

- ``moe_intermediate_size`` equal to ``intermediate_size`` (neither code reads it);
- ``num_shared_expert`` 1 (Tencent's code widens the shared MLP that many times, transformers' does not);
- ``use_mixed_mlp_moe`` true or absent (Tencent's code and transformers' first version build the shared MLP only
  when it is true, later versions always);
- ``num_experts`` at least 2 (Tencent's code builds a dense MLP for 1, transformers one expert);
- ``moe_layer_num_skipped`` 0 (documented as leading layers without experts; neither code builds them);
- ``use_mla`` false and ``add_classification_head`` false.

Anything else is refused in one line naming the field.

Tencent's files also carry the names of their own modeling code.  ``attention_head_dim`` must agree with the head size
read; ``use_cla`` true (cross-layer attention: layers that reuse another layer's keys and values, every
``cla_share_factor``-th) is refused, since transformers' classes build no such layer and the reader would count a
cache per layer.  Embeddings untied by default (``HunYuanDenseV1Config``, ``HunYuanMoEV1Config``; the published
files say true).  Tencent's own A13B file names ``model_type`` "hunyuan" beside the architecture
``HunYuanMoEV1ForCausalLM``, which is what selects this family.
"""

from __future__ import annotations

from collections.abc import Sequence

from derive.errors import ScenarioError

from .base import Attention, Family, Fields, Mlp, gated, gqa, routed
from .dense import dense_mlp


def _attention(f: Fields, mtype: str, d: int) -> Attention:
    att = gqa(f, d)
    own = f.optional("attention_head_dim", None, minimum=1)
    if own is not None and own != att.head_dim:
        raise ScenarioError(f"field 'attention_head_dim' ({own}) disagrees with the head size read ({att.head_dim})",
                            where=f.where, hint="Tencent's code reads attention_head_dim, transformers' head_dim")
    if own is not None and not f.has("head_dim"):  # the size came from hidden_size / heads: say the file agrees
        f.notes[:] = [f"head_dim {own} from attention_head_dim (Tencent's name), equal to hidden_size / "
                      "num_attention_heads" if n.startswith("'head_dim' absent") else n for n in f.notes]
    if f.flag("use_cla", False, ""):
        raise ScenarioError(f"field 'use_cla' is true: cross-layer attention (layers reusing another layer's keys and "
                            f"values) is not a layer kind a {mtype} config is read with", where=f.where,
                            hint="refused rather than counted as a cache in every layer")
    if f.flag("use_mla", False, ""):
        raise ScenarioError(f"field 'use_mla' is true: latent attention is not a layer kind a {mtype} config is read "
                            "with", where=f.where, hint="transformers' Hunyuan classes build grouped-query attention")
    return att


def _notes(f: Fields, mtype: str, att: Attention) -> None:
    f.read.add("cla_share_factor")  # read only with use_cla, which is refused above
    if f.flag("use_qk_norm", False, ""):
        f.notes.append(f"{mtype}: q and k RMSNorms (use_qk_norm; norms, not counted)")


def _refuse(f: Fields, key: str, what: str, hint: str) -> ScenarioError:
    return ScenarioError(f"field '{key}' {what}", where=f.where, hint=hint)


def _one_per_model(f: Fields, key: str, n: int, minimum: int = 1) -> int | None:
    """A size given once or as a list of one entry per layer, all equal (None when absent)."""
    value = f.get(key)
    if value is None:
        return None
    if not isinstance(value, Sequence) or isinstance(value, str):
        return f.whole(key, value, minimum)
    if len(value) != n:
        raise ScenarioError(f"field '{key}' lists {len(value)} layers but num_hidden_layers is {n}", where=f.where)
    values = sorted({f.whole(f"{key}[{i}]", v, minimum) for i, v in enumerate(value)})
    if len(values) > 1:
        raise _refuse(f, key, f"differs between layers ({', '.join(map(str, values[:4]))}): layers of different "
                      "sizes are not read", "refused rather than read as one size")
    return values[0]


def _moe_mlp(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    width = f.need("intermediate_size", why=mtype)
    experts = _one_per_model(f, "num_experts", n)
    if experts is None:
        raise ScenarioError("missing field 'num_experts'", where=f.where, hint=f"a {mtype} config needs 'num_experts'")
    if experts < 2:
        raise _refuse(f, "num_experts", f"is {experts}: Tencent's code builds a dense MLP there, transformers' one "
                      "expert beside the shared MLP", "refused rather than guessed")
    active = _one_per_model(f, "moe_topk", n)
    if active is None:
        raise ScenarioError("missing field 'moe_topk'", where=f.where, hint=f"a {mtype} config needs 'moe_topk'")
    expert_width = _one_per_model(f, "moe_intermediate_size", n)
    if expert_width is not None and expert_width != width:
        raise _refuse(f, "moe_intermediate_size", f"({expert_width}) is not intermediate_size ({width}): both codes "
                      "build every expert of intermediate_size", "refused rather than read as either width")
    shared_n = _one_per_model(f, "num_shared_expert", n, minimum=0)
    if shared_n is not None and shared_n != 1:
        raise _refuse(f, "num_shared_expert", f"is {shared_n}: Tencent's code widens the shared MLP {shared_n} times, "
                      "transformers' builds one of intermediate_size", "refused rather than read as either")
    if not f.flag("use_mixed_mlp_moe", True, "transformers' class builds the shared MLP in every layer"):
        raise _refuse(f, "use_mixed_mlp_moe", "is false: Tencent's code then builds no shared MLP, transformers' "
                      "builds one in every layer", "refused rather than read as either")
    skipped = f.optional("moe_layer_num_skipped", 0)
    if skipped:
        raise _refuse(f, "moe_layer_num_skipped", f"is {skipped}: leading layers without experts are not built by "
                      "either code", "refused rather than read as every layer a mixture of experts")
    if f.flag("add_classification_head", False, ""):
        raise _refuse(f, "add_classification_head", "is true: Tencent's reward head (pool_head, class_num) is not "
                      "counted", "a causal language model's file has it false")
    f.notes.append(f"every layer: {experts} experts of intermediate_size {width}, {active} per token, one shared MLP "
                   f"of intermediate_size and a float32 router (counted as weights of the model's datatype)")
    return routed(n, experts, active, d, width, shared=n * gated(d, width), shared_n=1)


FAMILIES = (
    Family("hunyuan", {"hunyuan_v1_dense": False}, {"HunYuanDenseV1ForCausalLM": "hunyuan_v1_dense"}, mlp=dense_mlp,
           attention=_attention, notes=_notes),
    Family("hunyuan_moe", {"hunyuan_v1_moe": False}, {"HunYuanMoEV1ForCausalLM": "hunyuan_v1_moe"}, mlp=_moe_mlp,
           attention=_attention, notes=_notes),
)
