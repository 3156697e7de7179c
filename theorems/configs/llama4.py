"""Llama 4 (Scout, Maverick): MoE layers every ``interleave_moe_layer_step`` (or those in ``moe_layers``) with
one shared expert, dense layers of ``intermediate_size_mlp``, and chunked attention on three of four layers
(``no_rope_layers``, else every ``no_rope_layer_interval``-th layer global) (``configuration_llama4.py``)."""

from __future__ import annotations

from derive.errors import ScenarioError

from .base import Family, Fields, LayerKinds, Mlp, count_every, experts_per_token, gated, routed


def _mlp(f: Fields, mtype: str, d: int, n: int) -> Mlp:
    experts = f.need("num_local_experts", why=mtype)
    active = experts_per_token(f, mtype)
    width = f.need("intermediate_size", why=mtype)  # routed and shared expert width
    moe_list = f.int_list("moe_layers")
    if moe_list:
        moe_layers = len({i for i in moe_list if i < n})
    else:
        step = f.optional("interleave_moe_layer_step", 1, minimum=1, meaning="every layer is MoE (1)")
        moe_layers = count_every(n, step, offset=1)
    dense = 0
    if moe_layers < n:
        dense = (n - moe_layers) * gated(d, f.need("intermediate_size_mlp", why="llama4 dense-layer"))
    return routed(moe_layers, experts, active, d, width, dense_mlp=dense, shared=moe_layers * gated(d, width),
                  shared_n=1)


def _pattern(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    chunk = f.need("attention_chunk_size", why="llama4 chunked-attention")
    no_rope = f.int_list("no_rope_layers")
    if no_rope:
        if len(no_rope) != n:
            raise ScenarioError(f"field 'no_rope_layers' lists {len(no_rope)} layers but num_hidden_layers "
                                f"is {n}", where=f.where)
        chunked = sum(1 for v in no_rope if v)
    else:
        interval = f.optional("no_rope_layer_interval", 4, minimum=1,
                              meaning="every 4th layer is global (no RoPE), the others chunked")
        chunked = n - count_every(n, interval, offset=1)
    f.notes.append(f"chunked attention ({chunked} of {n} layers, chunks of {chunk} tokens) holds at most "
                   "one chunk: min(L, chunk) tokens, an upper bound on the tokens since the chunk began")
    return {"full": n - chunked, "window": 0, "chunk": chunked, "linear": 0}, 0, chunk


FAMILIES = (
    Family("llama4", {"llama4": False, "llama4_text": False},
           {"Llama4ForConditionalGeneration": "llama4", "Llama4ForCausalLM": "llama4_text"},
           mlp=_mlp, pattern=_pattern,
           known=frozenset({"intermediate_size_mlp"})),  # the dense layers' width: read when there are some
)
