"""Falcon-H1 (``falcon_h1``: TII's Falcon-H1 0.5B to 34B): every layer runs grouped-query attention and a
Mamba-2 mixer side by side, then one gated MLP (transformers' ``FalconH1DecoderLayer``; the technical report,
arXiv:2507.22448, "parallel hybrid").

So every layer keeps a KV cache *and* a Mamba-2 state: ``kv_cache_layers`` is ``num_hidden_layers`` and the
fixed state counts every layer too.  The Mamba-2 mixer (``ssm.mamba2``) has ``mamba_n_heads`` heads of
``mamba_d_head`` (``"auto"``: ``mamba_d_ssm / mamba_n_heads``) over ``mamba_d_ssm`` channels
(``null``: ``mamba_expand * hidden_size``; absent: transformers' default 1024), ``mamba_n_groups`` groups,
``mamba_d_state`` and ``mamba_d_conv``; transformers refuses heads times head size that differ from the
channels, and so does this reader.  The MLP is gated, ``intermediate_size`` wide, in every layer
(``mamba_use_mlp`` is not read by transformers).  The muP multipliers scale activations, not shapes.
"""

from __future__ import annotations

from derive.errors import ScenarioError

from . import ssm
from .base import Family, Fields, LayerKinds, Linear
from .dense import dense_mlp

_D_SSM_DEFAULT = 1024  # FalconH1Config's mamba_d_ssm when the file has no such key


def _pattern(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    types = f.str_list("layer_types", n)
    other = next(((i, t) for i, t in enumerate(types or ()) if t != "hybrid"), None)
    if other is not None:
        raise ScenarioError(f"field 'layer_types' has layer kind {other[1]!r} at layer {other[0]}: a falcon_h1 "
                            "config must be 'hybrid' for every layer", where=f.where,
                            hint="every Falcon-H1 layer runs attention and Mamba-2 side by side")
    if f.get("attn_layer_indices") is not None:
        raise ScenarioError("field 'attn_layer_indices' is set: attention on some layers only is a layout "
                            "transformers' falcon_h1 does not build", where=f.where,
                            hint="refused rather than read as attention on every layer")
    f.notes.append(f"falcon_h1: all {n} layers run attention and Mamba-2 side by side; each keeps a KV cache "
                   "and a fixed Mamba-2 state")
    return {"full": n, "window": 0, "chunk": 0, "linear": n}, 0, 0


def _mamba(f: Fields, d: int) -> Linear:
    why = "falcon_h1 Mamba-2"
    heads = f.need("mamba_n_heads", why=why)
    if "mamba_d_ssm" not in f.config:
        f.read.add("mamba_d_ssm")
        inner = _D_SSM_DEFAULT
        f.notes.append(f"'mamba_d_ssm' absent: transformers' falcon_h1 default {inner}")
    elif f.config["mamba_d_ssm"] is None:
        f.read.add("mamba_d_ssm")
        inner = f.need("mamba_expand", why=why) * d
        f.notes.append(f"'mamba_d_ssm' null: mamba_expand * hidden_size = {inner}")
    else:
        inner = f.need("mamba_d_ssm", why=why)
    return ssm.mamba2_by_heads(f, d, heads=heads, inner=inner, inner_words="the Mamba-2 width mamba_d_ssm", why=why)


FAMILIES = (
    Family("falcon_h1", {"falcon_h1": False}, {"FalconH1ForCausalLM": "falcon_h1"},
           mlp=dense_mlp, pattern=_pattern, linear=_mamba, own_layer_types=True,
           # muP multipliers, kernel settings, biases and the time-step range: no size
           known=frozenset({"mamba_expand", "mamba_use_mlp", "mamba_chunk_size", "mamba_conv_bias", "mamba_proj_bias",
                            "mamba_norm_before_gate", "mamba_rms_norm", "projectors_bias", "time_step_min",
                            "time_step_max", "time_step_limit", "time_step_floor", "lm_head_multiplier",
                            "embedding_multiplier", "mlp_multipliers", "key_multiplier", "attention_out_multiplier",
                            "attention_in_multiplier", "ssm_multipliers", "ssm_in_multiplier", "ssm_out_multiplier",
                            "mlp_expansion_factor", "expansion_factor", "attn_layer_indices"})),
)

