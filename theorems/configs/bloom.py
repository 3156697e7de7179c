"""BLOOM (``bloom``: BigScience's BLOOM-560M to BLOOM-176B; transformers' ``configuration_bloom.py``,
``modeling_bloom.py``): multi-head attention with one fused ``query_key_value`` projection (``3 * hidden_size``
outputs: the weights of separate q, k and v projections) and ``dense`` back, an ungated MLP ``dense_h_to_4h`` and
``dense_4h_to_h``, always ``4 * hidden_size`` wide, and ALiBi positions: no position table.

- The files name their sizes two ways: BLOOM-560M's ``hidden_size``, ``n_layer``, ``n_head``; BLOOM-176B's ``n_embed``
  and ``num_attention_heads`` (``BloomConfig`` reads ``n_embed`` as ``hidden_size``, ``n_head`` and ``n_layer`` as
  ``num_attention_heads`` and ``num_hidden_layers``).  ``renames`` hands them to the reader, each said in a note; two
  names for one size that disagree are refused.
- ``BloomMLP`` is ``4 * hidden_size`` wide whatever the file says: ``n_inner`` null (BLOOM-560M) is read so; a
  different width is refused, not counted (the file and the model transformers builds would disagree).
- ALiBi adds a per-head bias to the scores; nothing caps the context at a table's length, so the reader gives no
  context: it comes from the scenario (``--set context=...``).  ``seq_length`` (BLOOM-176B's training length, 2,048)
  is said in a note, not read as a cap.
- The LM head is tied to ``word_embeddings`` (``BloomConfig``'s default).  Biases, the LayerNorm after the embedding
  (``word_embeddings_layernorm``), the two per layer and the final one are not counted: ``13 * hidden_size`` per layer
  and ``4 * hidden_size`` besides (BLOOM-176B: 13,103,104 of 176,247,271,424).
  ``apply_residual_connection_post_layernorm``, ``offset_alibi``, ``slow_but_exact`` and the fusion flags set no shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from derive.errors import ScenarioError

from .base import Attention, Family, Fields, Mlp, fixed_heads, num, renamed_size

# (a name a BLOOM file uses, the reader's name)
_NAMES = (("n_embed", "hidden_size"), ("n_layer", "num_hidden_layers"), ("n_head", "num_attention_heads"))


def _renames(cfg: Mapping[str, Any], where: str) -> tuple[Mapping[str, Any], list[str]]:
    read = Fields(cfg, where, "bloom")
    out = dict(cfg)
    renamed = []
    for name, ours in _NAMES:
        if cfg.get(name) is None:
            continue
        renamed_size(read, out, name, cfg[name], ours, renamed)
    return out, ["bloom names its own sizes: " + ", ".join(renamed)] if renamed else []


def _attention(f: Fields, mtype: str, d: int) -> Attention:
    att = fixed_heads(f, mtype, d, hint="BLOOM's attention is multi-head, one key and value head per query head, "
                                        "each hidden_size / num_attention_heads wide")
    f.notes.append(f"bloom attention: multi-head, {att.query_heads} heads of {att.head_dim} (hidden_size / "
                   "num_attention_heads), one fused query_key_value projection (the q, k and v weights) and dense; "
                   "biases and LayerNorms (with word_embeddings_layernorm) not counted")
    return att


def _mlp(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    """dense_h_to_4h and dense_4h_to_h: ``2 * d * 4d`` per layer, the width fixed by the model."""
    inner = f.get("n_inner")
    if inner is not None and f.whole("n_inner", inner, 1) != 4 * d:
        raise ScenarioError(f"field 'n_inner' is {inner} but a bloom MLP is 4 * hidden_size = {4 * d} wide (BloomMLP "
                            "reads no width)", where=f.where, hint="refused rather than counted at either width")
    return Mlp(dense_mlp=n * 2 * d * 4 * d)


def _notes(f: Fields, mtype: str, att: Attention) -> None:
    f.notes.append("bloom: ALiBi positions, no position table; the context is not capped by a table, so the "
                   "scenario's context is used (--set context=... for yours)")
    seq = f.get("seq_length")
    if seq is not None:
        f.notes.append(f"seq_length {num(f.whole('seq_length', seq, 1))}: the training sequence length, not a cap "
                       "(ALiBi has no table); not read as the context")


FAMILIES = (
    Family("bloom", {"bloom": True}, {"BloomForCausalLM": "bloom"}, mlp=_mlp, attention=_attention, notes=_notes,
           renames=_renames),
)
