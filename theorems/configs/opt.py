"""OPT (``opt``: Meta's OPT-125M to OPT-66B; transformers' ``configuration_opt.py``, ``modeling_opt.py``): multi-head
attention with separate ``q_proj``, ``k_proj``, ``v_proj`` and ``out_proj``, an ungated MLP ``fc1`` (hidden_size ->
ffn_dim) and ``fc2`` back, two matrices, and a learned position table ``embed_positions`` beside the token table.

- The position table has ``max_position_embeddings + 2`` rows (``OPTLearnedPositionalEmbedding``'s offset of 2,
  fairseq's legacy): 2,050 rows of hidden_size for every published OPT.  It is looked up per position, not
  multiplied: counted with the embeddings (``params_embedding``, ``params_total``), not in ``params_active``.  The
  context is ``max_position_embeddings``.
- ``word_embed_proj_dim`` narrower than ``hidden_size`` (OPT-350M: 512 of 1,024) gives a narrower token table and a
  ``project_in`` and ``project_out`` matrix: not modelled, refused in one line rather than counted as a full-width
  table.  Equal (every other OPT) or absent (``OPTConfig``: hidden_size), there is no projection.
- ``do_layer_norm_before`` false (OPT-350M) puts the LayerNorms after attention and MLP instead of before: the same
  weights, said in a note.  ``enable_bias``, ``layer_norm_elementwise_affine`` and ``_remove_final_layer_norm`` add or
  remove biases and norm weights only, which the reader does not count.
- The LM head is tied to the token table (``OPTConfig``'s ``tie_word_embeddings`` default, true); biases and the
  LayerNorms are not counted: ``13 * hidden_size`` weights per layer and ``2 * hidden_size`` at the end (OPT-125M:
  121,344 of 125,239,296).
"""

from __future__ import annotations

from derive.errors import ScenarioError

from .base import Attention, Family, Fields, Mlp, fixed_heads, num


def _attention(f: Fields, mtype: str, d: int) -> Attention:
    att = fixed_heads(f, mtype, d, hint="OPT's attention is multi-head, each head hidden_size / "
                                        "num_attention_heads wide; a file that groups its heads is another "
                                        "architecture")
    f.notes.append(f"opt attention: multi-head, {att.query_heads} heads of {att.head_dim} (hidden_size / "
                   "num_attention_heads), q_proj, k_proj, v_proj and out_proj; biases and LayerNorms not counted")
    return att


def _mlp(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    """fc1 and fc2: ``2 * d * ffn_dim`` per layer."""
    return Mlp(dense_mlp=n * 2 * d * f.need("ffn_dim"))


def _positions(f: Fields, mtype: str, d: int) -> int:
    """``embed_positions``: ``max_position_embeddings + 2`` rows of hidden_size."""
    rows = f.need("max_position_embeddings", why="opt position table") + 2
    f.notes.append(f"opt learned position table embed_positions: (max_position_embeddings + 2) = {num(rows)} rows "
                   f"(an offset of 2) x hidden_size {num(d)} = {num(rows * d)} weights, looked up per position like "
                   "the token table (with the embeddings, not in params_active)")
    return rows * d


def _notes(f: Fields, mtype: str, att: Attention) -> None:
    d = f.need("hidden_size")
    width = f.optional("word_embed_proj_dim", None, minimum=1)
    if width is not None and width != d:
        raise ScenarioError(f"field 'word_embed_proj_dim' ({width}) differs from hidden_size ({d}): a narrower token "
                            "table with project_in and project_out matrices (OPT-350M's layout) is not modelled",
                            where=f.where, hint="refused rather than counted as a full-width token table")
    before = f.flag("do_layer_norm_before", True, "OPTConfig's default, LayerNorm before attention and MLP")
    f.notes.append("do_layer_norm_before: LayerNorm before attention and MLP (the same weights)" if before else
                   "do_layer_norm_before false: LayerNorm after attention and MLP (the same weights)")


FAMILIES = (
    Family("opt", {"opt": True}, {"OPTForCausalLM": "opt"}, mlp=_mlp, attention=_attention, notes=_notes,
           positions=_positions),
)
