"""DeepSeek-V2/V3/V3.2 and Kimi K2: multi-head latent attention and MoE layers after ``first_k_dense_replace``
dense ones, every ``moe_layer_freq``, with shared experts (DeepSeek-V2 paper, arXiv:2405.04434, section 2.1;
``configuration_deepseek_v3.py``).  DeepSeek-V3.2 adds the sparse-attention indexer's key cache
(deepseek-ai/DeepSeek-V3.2-Exp, inference/model.py), read by ``reader`` wherever ``index_head_dim`` is set.
GLM-4.7-Flash (``glm4_moe_lite``, ``configuration_glm4_moe_lite.py``) has the same tensors; its layers are dense or
MoE as ``mlp_layer_types`` lists them, by default layer 0 dense and the others MoE.
"""

from __future__ import annotations

from fractions import Fraction

from derive.errors import ScenarioError

from .base import Attention, Family, Fields, Mlp, count_every, experts_per_token, gated, routed


def mla(f: Fields, mtype: str, d: int) -> Attention:
    heads = f.need("num_attention_heads")
    why = "multi-head latent attention"
    kv_rank = f.need("kv_lora_rank", why=why)
    rope = f.need("qk_rope_head_dim", why=why)
    nope = f.need("qk_nope_head_dim", why=why)
    v = f.need("v_head_dim", why=why)
    if f.has("qk_head_dim") and f.need("qk_head_dim", why=why) != nope + rope:  # transformers 5 writes the sum
        raise ScenarioError(f"field 'qk_head_dim' ({f.config['qk_head_dim']}) is not qk_nope_head_dim + "
                            f"qk_rope_head_dim ({nope} + {rope})", where=f.where)
    if f.has("head_dim") and f.need("head_dim", why=why) != rope:
        # transformers reads head_dim as qk_rope_head_dim (GLM-5.1 writes 64 for both); GLM-5.2 writes 192, its
        # checkpoint's kv_a_proj (576 = 512 + 64) and qk_head_dim (256 = 192 + 64) agree with qk_rope_head_dim
        if not f.has("qk_head_dim"):
            raise ScenarioError(f"field 'head_dim' ({f.config['head_dim']}) is not qk_rope_head_dim ({rope}), "
                                "which transformers reads it as", where=f.where,
                                hint="a file whose 'qk_head_dim' is qk_nope_head_dim + qk_rope_head_dim is read")
        f.notes.append(f"head_dim ({f.config['head_dim']}) differs from qk_rope_head_dim ({rope}); qk_head_dim = "
                       f"{nope} + {rope} places the rotary dimensions, so qk_rope_head_dim is read")
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
    # elements) as values.  The context chapter counts 4 * head_dim FLOPs per query head and context token, so
    # head_dim is the mean of the two, (576 + 512)/2 for DeepSeek-V3: 2 * 576 + 2 * 512 exactly.  A prefill runs
    # the non-absorbed form (FlashMLA's MHA mode: scores over qk_nope + qk_rope, values over v_head_dim), far
    # cheaper per pair: (192 + 128)/2.  Each form is the cheaper one where it runs, so each count stays a floor.
    return Attention(q + kv_a + kv_b + o, kv_rank + rope,
                     f"(kv_lora_rank {kv_rank} + qk_rope_head_dim {rope}) latent elements",
                     Fraction(2 * kv_rank + rope, 2), 1, heads, latent=True,
                     prefill_head_dim=Fraction(nope + rope + v, 2))


def deepseek_moe_mlp(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    """DeepSeek-style MoE (also GLM-4.5's): routed and shared experts of ``moe_intermediate_size``."""
    experts = f.need("n_routed_experts", why=mtype)
    active = experts_per_token(f, mtype)
    width = f.need("moe_intermediate_size", why=mtype)
    if "n_shared_experts" not in f.config:  # null is "none"; absent is a missing size field
        f.read.add("n_shared_experts")
        raise ScenarioError("missing field 'n_shared_experts'", where=f.where,
                            hint=f"a {mtype} config needs 'n_shared_experts' (null or 0 for none)")
    shared_n = f.optional("n_shared_experts", 0) or 0
    freq_field = f.get("moe_layer_freq")
    kinds = f.str_list("mlp_layer_types", n)
    if mtype == "glm4_moe_lite" and kinds is None:
        # transformers' Glm4MoeLiteConfig makes layer 0 alone dense, whatever first_k_dense_replace says
        first = f.optional("first_k_dense_replace", 1)
        if first != 1:
            raise ScenarioError(f"field 'first_k_dense_replace' is {first} but transformers' {mtype} makes layer 0 "
                                "alone dense", where=f.where, hint="a file with other dense layers lists them in "
                                                                   "'mlp_layer_types'")
        kinds = ["dense"] + ["sparse"] * (n - 1)
    if kinds is not None:  # transformers 5's per-layer list (GLM-4.7-Flash): "dense" or "sparse"
        unknown = sorted({k for k in kinds if k not in ("dense", "sparse")})
        if unknown:
            raise ScenarioError(f"field 'mlp_layer_types' has an unknown layer kind {unknown[0]!r}", where=f.where,
                                hint="known kinds: dense, sparse")
        first_dense = f.optional("first_k_dense_replace", 0) or 0
        if "sparse" in kinds[:first_dense]:
            raise ScenarioError(f"fields 'mlp_layer_types' and 'first_k_dense_replace' ({first_dense}) disagree: the "
                                "list marks a leading dense layer as MoE", where=f.where)
        moe_layers = kinds.count("sparse")
        f.notes.append(f"mlp_layer_types lists the layers: {moe_layers} MoE and {n - moe_layers} dense")
    elif isinstance(freq_field, list):  # one entry per layer, 1 for MoE (MiMo-V2-Flash writes it so)
        flags = f.int_list("moe_layer_freq")
        if len(flags) != n or any(v > 1 for v in flags):
            raise ScenarioError(f"field 'moe_layer_freq' as a list needs one 0 or 1 per layer ({n}), got "
                                f"{len(flags)} entries" + ("" if len(flags) != n else " with a value above 1"),
                                where=f.where)
        first_dense = f.optional("first_k_dense_replace", 0) or 0
        if any(flags[:first_dense]):
            raise ScenarioError(f"fields 'moe_layer_freq' and 'first_k_dense_replace' ({first_dense}) disagree: the "
                                "list marks a leading dense layer as MoE", where=f.where)
        moe_layers = sum(flags)
        f.notes.append(f"moe_layer_freq lists the layers: {moe_layers} MoE and {n - moe_layers} dense")
    else:
        first_dense = min(f.optional("first_k_dense_replace", 0, meaning="no leading dense layers (0)"), n)
        freq = f.optional("moe_layer_freq", 1, minimum=1, meaning="every layer after the dense ones is MoE (1)")
        moe_layers = count_every(n, freq) - count_every(first_dense, freq)
    dense = 0
    if moe_layers < n:
        dense = (n - moe_layers) * gated(d, f.need("intermediate_size", why=f"{mtype} dense-layer"))
    return routed(moe_layers, experts, active, d, width, dense_mlp=dense,
                  shared=moe_layers * shared_n * gated(d, width), shared_n=shared_n)


def _notes(f: Fields, mtype: str, att: Attention) -> None:
    rope = f.need("qk_rope_head_dim")
    rank = att.kv_elements_per_layer - rope
    score, value = f.need("qk_nope_head_dim") + rope, f.need("v_head_dim")
    f.notes.append(f"latent attention: each layer caches kv_lora_rank + qk_rope_head_dim = "
                   f"{att.kv_elements_per_layer} elements per token (kv_elements_per_layer, pinned: the per-head "
                   "count 2 * kv_heads * head_dim does not apply); decoding with the up-projections absorbed is "
                   f"multi-query attention over that cache, so kv_heads = 1 and {att.query_heads} query heads, "
                   f"scores over {att.kv_elements_per_layer} elements and values over {rank}: head_dim = "
                   f"{att.head_dim}, their mean (4 * head_dim FLOPs per context token and query head); a prefill "
                   f"runs the non-absorbed form, scores over {score} and values over {value} per head: "
                   f"prefill_head_dim = {att.prefill_head_dim}, pinned")


FAMILIES = (
    Family("deepseek", {"deepseek_v2": False, "deepseek_v3": False, "deepseek_v32": False, "kimi_k2": False,
                        "glm4_moe_lite": False, "glm_moe_dsa": False},
           {"DeepseekV2ForCausalLM": "deepseek_v2", "DeepseekV3ForCausalLM": "deepseek_v3",
            "DeepseekV32ForCausalLM": "deepseek_v32", "Glm4MoeLiteForCausalLM": "glm4_moe_lite",
            "GlmMoeDsaForCausalLM": "glm_moe_dsa"},
           mlp=deepseek_moe_mlp, attention=mla, notes=_notes, latent=True,
           # latent attention has no KV heads (the files repeat num_attention_heads); the indexer's top-k, the
           # expert-parallel size, the rotary layout of the indexer's keys and whether the multi-token-prediction
           # layer reuses the indexer set no weight
           known=frozenset({"num_key_value_heads", "index_topk", "ep_size", "indexer_rope_interleave",
                            "index_share_for_mtp_iteration"})),
)
