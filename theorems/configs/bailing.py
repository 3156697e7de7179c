"""inclusionAI Ling 1 / 1.5 (``bailing_moe``, ``BailingMoeForCausalLM``: Ling-lite, Ling-plus, Ling-Coder-lite), read
from the publisher's own remote code: inclusionAI/Ling @ ceb347601d43d1b102fdb10858e2fb384d27bf80,
``models/configuration_bailing_moe.py`` and ``models/modeling_bailing_moe.py`` (no transformers class).

- Attention (``BailingMoeAttention``): one fused ``query_key_value`` of ``hidden_size x (num_attention_heads + 2 *
  num_key_value_heads) * head_dim`` (the q, k and v weights) and ``dense`` back to ``hidden_size``; ``head_dim``
  hidden_size / num_attention_heads when null.  ``use_qkv_bias`` and ``use_bias`` add biases, not counted.  The class
  default ``num_key_value_heads`` is 0, which the code cannot build: the field is required.  The code applies no
  sliding window (``use_sliding_window``, ``sliding_window`` and ``max_window_layers`` are read by nothing): every layer
  full attention.
- Layers (``BailingMoeDecoderLayer``): layer ``i`` is a MoE layer when ``num_experts`` is not null and ``i >=
  first_k_dense_replace``, else a gated MLP of ``intermediate_size``.  A MoE layer: ``num_experts`` gated experts of
  ``moe_intermediate_size``, ``num_experts_per_tok`` per token, a router (``BailingMoeGate.weight``, ``num_experts x
  hidden_size``) and, unless ``num_shared_experts`` is null, one shared gated MLP of ``moe_intermediate_size *
  num_shared_experts``.  The class default for an absent ``num_experts`` is 16: refused as a missing field rather than
  read as a default.
- ``norm_head`` normalizes the head's weights in the forward pass (no shape).  Embeddings untied by default
  (``BailingMoeConfig``: ``tie_word_embeddings=False``).

Ling 2.0 (``BailingMoeV2ForCausalLM``, inclusionAI/Ling-V2 ``models/modeling_bailing_moe_v2.py``) writes the same
``model_type`` with another layout (multi-token-prediction layers, q and k norms, a grouped sigmoid router with an
expert bias): a file naming that class is refused in one line, not read as Ling 1's.
"""

from __future__ import annotations

from derive.errors import ScenarioError

from .base import Attention, Family, Fields, Mlp, experts_per_token, gated, gqa, routed

V2_CLASS = "BailingMoeV2ForCausalLM"


def _attention(f: Fields, mtype: str, d: int) -> Attention:
    archs = f.get("architectures") or ()
    if V2_CLASS in archs:
        raise ScenarioError(f"architecture {V2_CLASS} (Ling 2.0) with model_type {mtype!r}: its layout "
                            "(multi-token-prediction layers, grouped sigmoid routing) is not Ling 1's, which the "
                            f"{mtype} reader reads", where=f.where,
                            hint="refused rather than read as BailingMoeForCausalLM")
    return gqa(f, d, kv_heads=f.need("num_key_value_heads", why=mtype))


def _mlp(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    if "num_experts" not in f.config:
        f.read.add("num_experts")
        raise ScenarioError("missing field 'num_experts'", where=f.where,
                            hint=f"a {mtype} config needs 'num_experts' (null for a dense model; the class "
                                 "default, 16, is not assumed)")
    experts = f.optional("num_experts", None, minimum=1)
    first_dense = f.optional("first_k_dense_replace", 0, meaning="every layer a MoE layer (0)")
    moe_layers = 0 if experts is None else max(0, n - first_dense)
    dense = 0
    if moe_layers < n:
        dense = (n - moe_layers) * gated(d, f.need("intermediate_size", why=f"{mtype} dense-layer"))
    if not moe_layers:
        f.notes.append(f"no MoE layer ({'num_experts null' if experts is None else 'first_k_dense_replace'}): "
                       f"{n} dense layers")
        return Mlp(dense_mlp=dense)
    active = experts_per_token(f, mtype)
    width = f.need("moe_intermediate_size", why=mtype)
    shared_n = f.optional("num_shared_experts", 0, meaning="no shared expert (0)") or 0
    f.notes.append(f"{moe_layers} MoE layers of {n} (from first_k_dense_replace {first_dense}): {experts} experts of "
                   f"moe_intermediate_size {width}, {active} per token, a router and {shared_n} shared experts as "
                   f"one MLP of {shared_n * width}")
    return routed(moe_layers, experts, active, d, width, dense_mlp=dense,
                  shared=moe_layers * gated(d, shared_n * width), shared_n=shared_n)


def _notes(f: Fields, mtype: str, att: Attention) -> None:
    f.notes.append(f"{mtype}: one fused query_key_value projection (the q, k and v weights) and dense; biases "
                   "(use_qkv_bias, use_bias) and norms not counted; no sliding window in the publisher's code")


FAMILIES = (
    Family("bailing", {"bailing_moe": False}, {"BailingMoeForCausalLM": "bailing_moe"}, mlp=_mlp,
           attention=_attention, notes=_notes,
           # fields of the publisher's files that set no size: the head's normalization, the routing softmax, and
           # the window fields its code never reads
           known=frozenset({"norm_head", "norm_softmax", "use_qkv_bias", "use_sliding_window", "max_window_layers",
                            "intermediate_size"})),
)
