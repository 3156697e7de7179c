"""GPT-2 (``gpt2``: OpenAI's GPT-2 small to XL; transformers' ``configuration_gpt2.py``, ``modeling_gpt2.py``):
multi-head attention with one fused ``c_attn`` projection (``3 * n_embd`` outputs: the weights of separate q, k and v
projections) and ``c_proj`` back, an ungated MLP ``c_fc`` (n_embd -> n_inner) and ``c_proj`` back, two matrices, and a
learned position table ``wpe`` of ``n_positions x n_embd`` beside the token table ``wte``.

- The file names its sizes the GPT-2 way: ``n_embd``, ``n_layer``, ``n_head``, ``n_positions``, ``n_inner``.
  ``renames`` hands them to the reader under its names, each said in a note; ``n_inner`` null (every OpenAI file) is
  ``4 * n_embd``, as ``GPT2MLP`` builds it, said in a note.  ``n_ctx``, which older files carry beside
  ``n_positions``, sizes nothing in transformers; a value that differs is said in a note.
- ``wpe`` is a weight table looked up per position, not multiplied: counted with the embeddings (in
  ``params_embedding`` and ``params_total``, not in ``params_active``).  The context is capped by it: ``n_positions``.
- The LM head is tied to ``wte`` (``GPT2Config``'s default); a file that unties it counts its own head.
- Biases on every projection and the two LayerNorms of each layer and the final one are not counted (the reader's
  convention): ``(13 * n_embd) * n_layer + 2 * n_embd`` weights, under 0.1 % of GPT-2 small's 124,439,808.
- ``scale_attn_by_inverse_layer_idx``, ``reorder_and_upcast_attn`` and ``scale_attn_weights`` change the arithmetic of
  the scores, no shape.  ``add_cross_attention`` true adds a cross-attention block to every layer (GPT-2 as a
  decoder under an encoder): refused, not counted as a decoder-only model.

``gpt_bigcode`` (StarCoder) shares the names, the position table and the MLP, and reads them from here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from derive.errors import ScenarioError

from .base import Attention, Family, Fields, fixed_heads, num, renamed_size
from .starcoder2 import ungated_mlp

# the file's names -> the reader's
GPT2_NAMES = (("n_embd", "hidden_size"), ("n_layer", "num_hidden_layers"), ("n_head", "num_attention_heads"),
              ("n_positions", "max_position_embeddings"))

Renames = Callable[[Mapping[str, Any], str], tuple[Mapping[str, Any], list[str]]]


def gpt2_renames(mtype: str) -> Renames:
    """The reader's names for a GPT-2 style file's sizes (``n_embd``, ``n_layer``, ``n_head``, ``n_positions``,
    ``n_inner``), one note; ``add_cross_attention`` true is refused (a second attention block per layer)."""

    def renames(cfg: Mapping[str, Any], where: str) -> tuple[Mapping[str, Any], list[str]]:
        read = Fields(cfg, where, mtype)
        cross = cfg.get("add_cross_attention")
        if cross not in (None, False):
            raise ScenarioError(f"field 'add_cross_attention' is {cross!r}: a {mtype} layer with a cross-attention "
                                "block (a decoder under an encoder) is not modelled", where=where,
                                hint="the reader counts decoder-only models; remove the field for the decoder alone")
        out = dict(cfg)
        renamed = []
        for name, ours in GPT2_NAMES:
            if cfg.get(name) is None:
                if cfg.get(ours) is not None:
                    continue  # a file that already uses the reader's name (transformers' attribute_map)
                raise ScenarioError(f"missing field '{name}'", where=where, hint=f"a {mtype} config needs '{name}'")
            renamed_size(read, out, name, cfg[name], ours, renamed)
        notes = [f"{mtype} names its own sizes: " + ", ".join(renamed)] if renamed else []
        d = read.whole("hidden_size", out["hidden_size"], 1) if out.get("hidden_size") is not None else None
        inner = cfg.get("n_inner")
        if inner is None:
            if d is not None and cfg.get("intermediate_size") is None:
                out["intermediate_size"] = 4 * d
                notes.append(f"'n_inner' null: the MLP is 4 * n_embd = {num(4 * d)} wide (as transformers builds it)")
        else:
            value = read.whole("n_inner", inner, 1)
            if cfg.get("intermediate_size") is not None and cfg["intermediate_size"] != value:
                raise ScenarioError(f"fields 'n_inner' ({value}) and 'intermediate_size' "
                                    f"({cfg['intermediate_size']!r}) disagree", where=where)
            out["intermediate_size"] = value
            notes.append(f"n_inner {num(value)} as intermediate_size")
        ctx, positions = cfg.get("n_ctx"), out.get("max_position_embeddings")
        if ctx is not None and ctx != positions:
            notes.append(f"n_ctx {ctx!r} sizes nothing (transformers reads n_positions, {positions!r}, for the "
                         "position table and the context)")
        return out, notes

    return renames


def learned_positions(f: Fields, mtype: str, d: int) -> int:
    """The learned position table ``wpe``: ``n_positions`` rows of ``n_embd``, looked up per position."""
    rows = f.need("max_position_embeddings", why=f"{mtype} position table")
    f.notes.append(f"{mtype} learned position table wpe: n_positions {num(rows)} x n_embd {num(d)} = "
                   f"{num(rows * d)} weights, looked up per position like the token table (with the embeddings, "
                   "not in params_active)")
    return rows * d


def fused_attention(f: Fields, mtype: str, d: int, kv_heads: int | None = None) -> Attention:
    """One fused ``c_attn`` (queries, and keys and values for ``kv_heads`` heads; every query head's own when None)
    and ``c_proj`` back; heads ``n_embd / n_head`` wide.  A ``num_key_value_heads`` or ``head_dim`` that says
    otherwise is refused, not read."""
    return fixed_heads(f, mtype, d, kv_heads=kv_heads, sizes=("n_embd", "n_head"),
                       hint=f"{mtype}'s heads are set by n_head (and multi_query), n_embd / n_head wide")


def _attention(f: Fields, mtype: str, d: int) -> Attention:
    att = fused_attention(f, mtype, d)
    f.notes.append(f"{mtype} attention: multi-head, {att.query_heads} heads of {att.head_dim} (n_embd / n_head), one "
                   "fused c_attn projection (the q, k and v weights) and c_proj; biases and LayerNorms not counted")
    return att


FAMILIES = (
    Family("gpt2", {"gpt2": True}, {"GPT2LMHeadModel": "gpt2"}, mlp=ungated_mlp, attention=_attention,
           renames=gpt2_renames("gpt2"), positions=learned_positions),
)
