"""GPT-NeoX (``gpt_neox``: EleutherAI's GPT-NeoX-20B and the Pythia suite; transformers' ``configuration_gpt_neox.py``,
``modeling_gpt_neox.py``): multi-head attention with one fused ``query_key_value`` projection (``3 * hidden_size``
outputs: the weights of separate q, k and v projections) and ``dense`` back, and an ungated MLP ``dense_h_to_4h``
(hidden_size -> intermediate_size) and ``dense_4h_to_h`` back, two matrices.

- There is no grouped-query attention: every query head has its own key and value head, ``hidden_size /
  num_attention_heads`` wide (transformers' ``head_size``); a ``num_key_value_heads`` or ``head_dim`` that says
  otherwise is refused, not read.
- ``use_parallel_residual`` (Pythia, GPT-NeoX-20B: true) adds the attention and the MLP to the same residual; either
  way the layer holds the same weights.
- ``rotary_pct`` puts the rotary embedding on that fraction of each head (Pythia: 0.25); it changes no shape and no
  cache size, said in a note.
- Biases on every projection, the two LayerNorms of each layer and the final one are not counted (the reader's
  convention); the untied output head ``embed_out`` is (``tie_word_embeddings``, false by default).
- ``vocab_size`` is the padded table (Pythia-1B: 50,304 rows, more than its tokenizer's tokens, so that tensor-parallel
  shards divide evenly): the rows the checkpoint holds, so the rows counted.
"""

from __future__ import annotations

import numbers

from .base import Attention, Family, Fields, fixed_heads
from .starcoder2 import ungated_mlp


def _attention(f: Fields, mtype: str, d: int) -> Attention:
    att = fixed_heads(f, mtype, d, hint="GPT-NeoX's attention is multi-head, each head hidden_size / "
                                        "num_attention_heads wide; a file that groups its heads is another "
                                        "architecture")
    f.notes.append(f"{mtype} attention: multi-head, {att.query_heads} heads of {att.head_dim} (hidden_size / "
                   "num_attention_heads), one fused query_key_value projection")
    return att


def _notes(f: Fields, mtype: str, att: Attention) -> None:
    parallel = f.flag("use_parallel_residual", True, "transformers' gpt_neox default, parallel attention and MLP")
    f.notes.append("use_parallel_residual: attention and MLP side by side on one residual (the same weights)"
                   if parallel else "use_parallel_residual false: attention then MLP (the same weights)")
    pct = f.get("rotary_pct")
    if pct is None:
        return
    if isinstance(pct, bool) or not isinstance(pct, numbers.Real) or not 0 < pct <= 1:
        raise f.bad("rotary_pct", pct, "a fraction of the head in (0, 1]")
    rotary = int(int(att.head_dim) * pct)
    f.notes.append(f"rotary_pct {pct}: rotary embedding on {rotary} of each head's {att.head_dim} dimensions (partial "
                   "rotary: no weight and no cache size changes)")


FAMILIES = (
    Family("gpt_neox", {"gpt_neox": False}, {"GPTNeoXForCausalLM": "gpt_neox"}, mlp=ungated_mlp,
           attention=_attention, notes=_notes),
)
