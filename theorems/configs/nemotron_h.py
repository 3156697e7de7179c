"""Nemotron-H and Nemotron 3 (``nemotron_h``): hybrid Mamba-2 / attention / MLP / MoE models whose layers are
spelled out one character each in ``hybrid_override_pattern``.

Each layer holds one mixer: ``M`` a Mamba-2 layer, ``*`` grouped-query attention, ``-`` an MLP, ``E`` a
mixture of experts.  MLPs and experts are two matrices (up and down, squared ReLU: no gate).  A Mamba-2
layer (transformers' ``NemotronHMamba2Mixer``) has ``mamba_num_heads * mamba_head_dim`` inner channels (not
``expand * hidden_size``): ``in_proj`` makes the gate z, the inner x, B and C of ``n_groups * ssm_state_size``
each and one time step per head; a depthwise causal convolution of ``conv_kernel`` over x, B and C; an
``out_proj`` back to ``hidden_size``.  A sequence keeps a fixed state per Mamba-2 layer: ``mamba_num_heads *
mamba_head_dim * ssm_state_size`` SSM elements (at ``mamba_ssm_cache_dtype`` when named) and the last
``conv_kernel - 1`` convolution inputs.  Per-head ``A_log``, ``D``, ``dt_bias`` and the gated norm's gain are not
counted, like every norm and bias here.
"""

from __future__ import annotations

from derive.errors import ScenarioError

from . import ssm
from .base import Family, Fields, LayerKinds, Linear, Mlp

# pattern character -> what the layer holds
LAYER_CHARS = {"M": "Mamba-2", "*": "attention", "-": "MLP", "E": "mixture of experts"}


def layer_pattern(f: Fields, n: int) -> str:
    """``hybrid_override_pattern``, checked: one known character per layer."""
    if f.has("layer_types"):
        raise ScenarioError("field 'layer_types' given beside 'hybrid_override_pattern'", where=f.where,
                            hint="a nemotron_h config names its layers in hybrid_override_pattern only")
    pattern = f.get("hybrid_override_pattern")
    if pattern is None:
        raise ScenarioError("missing field 'hybrid_override_pattern'", where=f.where,
                            hint="a nemotron_h config names each layer's kind in it (M, *, -, E)")
    if not isinstance(pattern, str):
        raise f.bad("hybrid_override_pattern", pattern, "a string of layer kinds")
    if len(pattern) != n:
        raise ScenarioError(f"field 'hybrid_override_pattern' has {len(pattern)} layers but num_hidden_layers is "
                            f"{n}", where=f.where)
    for i, ch in enumerate(pattern):
        if ch not in LAYER_CHARS:
            raise ScenarioError(f"field 'hybrid_override_pattern' has an unknown layer kind {ch!r} at layer {i}",
                                where=f.where, hint="known: " + ", ".join(f"{c} {w}" for c, w in LAYER_CHARS.items()))
    return pattern


def _pattern(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    p = layer_pattern(f, n)
    full, mamba = p.count("*"), p.count("M")
    f.notes.append(f"hybrid_override_pattern: {mamba} Mamba-2, {full} attention, {p.count('-')} MLP and "
                   f"{p.count('E')} MoE layers of {n}; only the attention layers keep a KV cache")
    return {"full": full, "window": 0, "chunk": 0, "linear": mamba}, 0, 0


def _mlp(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    p = layer_pattern(f, n)
    dense_layers, moe_layers = p.count("-"), p.count("E")
    dense = dense_layers * 2 * d * f.need("intermediate_size", why="nemotron_h MLP-layer") if dense_layers else 0
    if not moe_layers:
        return Mlp(dense_mlp=dense)
    experts = f.need("n_routed_experts", why="nemotron_h MoE-layer")
    active = f.need("num_experts_per_tok", why="nemotron_h MoE-layer")
    width = f.need("moe_intermediate_size", why="nemotron_h MoE-layer")
    shared_n = f.optional("n_shared_experts", 0) or 0
    shared_width = f.need("moe_shared_expert_intermediate_size", why="nemotron_h shared-expert") if shared_n else 0
    expert = 2 * d * width  # up and down, squared ReLU
    return Mlp(dense_mlp=dense, routed=moe_layers * experts * expert, routed_active=moe_layers * active * expert,
               shared=moe_layers * shared_n * 2 * d * shared_width, router=moe_layers * d * experts,
               moe_layers=moe_layers, experts=experts, active=active, shared_n=shared_n)


def mamba2(f: Fields, d: int) -> Linear:
    """One Mamba-2 layer: its weights and the fixed state a sequence keeps (``ssm.mamba2``)."""
    why = "Mamba-2 layer"
    return ssm.mamba2(f, d, heads=f.need("mamba_num_heads", why=why), head_dim=f.need("mamba_head_dim", why=why),
                      state=f.need("ssm_state_size", why=why), groups=f.need("n_groups", why=why),
                      kernel=f.need("conv_kernel", why=why))


FAMILIES = (
    Family("nemotron_h", {"nemotron_h": False}, {"NemotronHForCausalLM": "nemotron_h"}, mlp=_mlp,
           pattern=_pattern, linear=mamba2,
           # read by transformers for the kernels and the time-step range; no size.  expand is ignored when
           # mamba_num_heads and mamba_head_dim are given (transformers' NemotronHMamba2Mixer).
           known=frozenset({"chunk_size", "expand", "mamba_hidden_act", "mamba_proj_bias", "use_conv_bias",
                            "use_mamba_kernels", "time_step_floor", "time_step_max", "time_step_min",
                            "time_step_limit", "time_step_rank", "mamba_chunk_size"})),
)
