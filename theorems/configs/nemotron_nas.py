"""Llama-Nemotron NAS models (``nemotron-nas``, ``DeciLMForCausalLM``: Llama-3.3-Nemotron-Super-49B,
Llama-3.1-Nemotron-Ultra-253B, Llama-3.1-Nemotron-51B): a Llama whose layers differ one by one, as
``block_configs`` lists them.

Each block's ``attention`` is grouped-query attention with ``num_attention_heads / n_heads_in_group`` KV heads,
or ``no_op`` (none: no weights, no cache), or ``replace_with_linear`` (one ``hidden_size`` square matrix, no
cache).  Each block's ``ffn`` is a gated MLP of width ``ffn_mult * 2/3 * hidden_size`` rounded up to a
multiple of 256 (the DeciLM code's ``_ffn_mult_to_intermediate_size``), or ``no_op``, or
``replace_with_linear``.  Anything else a block sets (a window, sparsity, sink tokens) is a layer kind the
reader does not model, and is refused.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from derive.errors import ScenarioError

from .base import Attention, Blocks, Family, Fields, Mlp, gated

# block keys whose value changes nothing when it is the one given here
_INERT = {"sparsify": None, "num_sink_tokens": None, "unshifted_sink": False,
          "use_prefill_window_in_sink_attention": False, "window_length": None}
_ATTENTION_KEYS = {"n_heads_in_group", "no_op", "replace_with_linear"}
_FFN_KEYS = {"ffn_mult", "no_op", "replace_with_linear"}


def ffn_width(ffn_mult: Fraction, d: int) -> int:
    """``_ffn_mult_to_intermediate_size``: int(2 * ffn_mult * d / 3), rounded up to a multiple of 256."""
    width = math.floor(2 * ffn_mult * d / 3)
    return -(-width // 256) * 256


def _part(f: Fields, i: int, block: Mapping[str, Any], name: str, known: set[str]) -> Mapping[str, Any]:
    part = block.get(name)
    where = f"block_configs[{i}].{name}"
    if not isinstance(part, Mapping):
        raise ScenarioError(f"field '{where}' must be an object, got {part!r}", where=f.where)
    for key, value in part.items():
        if key in known or (key in _INERT and value == _INERT[key]):
            continue
        raise ScenarioError(f"field '{where}.{key}' = {value!r} sets a layer kind the reader does not model",
                            where=f.where, hint="refused rather than read as plain attention or MLP")
    for key in ("no_op", "replace_with_linear"):
        if not isinstance(part.get(key, False), bool):
            raise f.bad(f"{where}.{key}", part[key], "true or false")
    if part.get("no_op") and part.get("replace_with_linear"):
        raise ScenarioError(f"field '{where}' is both no_op and replace_with_linear", where=f.where)
    return part


def _blocks(f: Fields, mtype: str, d: int, n: int) -> Blocks:
    blocks = f.get("block_configs")
    if not isinstance(blocks, list) or not all(isinstance(b, Mapping) for b in blocks):
        raise ScenarioError("missing field 'block_configs'" if blocks is None else
                            f"field 'block_configs' must be a list of objects, got {type(blocks).__name__}",
                            where=f.where, hint="a nemotron-nas config lists one block per layer")
    if len(blocks) != n:
        raise ScenarioError(f"field 'block_configs' lists {len(blocks)} blocks but num_hidden_layers is {n}",
                            where=f.where)
    heads = f.need("num_attention_heads")
    head_dim = f.optional("head_dim", None, minimum=1)
    if head_dim is None:
        if d % heads:
            raise ScenarioError(f"missing field 'head_dim' and hidden_size ({d}) is not a multiple of "
                                f"num_attention_heads ({heads})", where=f.where)
        head_dim = d // heads
    f.read.update({"num_key_value_heads", "intermediate_size"})  # null in these files: every block says its own
    attention = kv = full = dense = 0
    kinds: dict[str, int] = {}
    kv_heads_seen: set[int] = set()
    for i, block in enumerate(blocks):
        a = _part(f, i, block, "attention", _ATTENTION_KEYS)
        m = _part(f, i, block, "ffn", _FFN_KEYS)
        if a.get("no_op"):
            kind = "no attention"
        elif a.get("replace_with_linear"):
            kind, attention = "linear in place of attention", attention + d * d
        else:
            group = f.whole(f"block_configs[{i}].attention.n_heads_in_group", a.get("n_heads_in_group"), 1)
            if heads % group:
                raise ScenarioError(f"block_configs[{i}]: num_attention_heads ({heads}) is not a multiple of "
                                    f"n_heads_in_group ({group})", where=f.where)
            kvh = heads // group
            kv_heads_seen.add(kvh)
            attention += d * heads * head_dim + 2 * d * kvh * head_dim + heads * head_dim * d
            kv, full, kind = kv + 2 * kvh * head_dim, full + 1, f"attention with {kvh} KV heads"
        kinds[kind] = kinds.get(kind, 0) + 1
        if m.get("replace_with_linear"):
            dense += d * d
        elif not m.get("no_op"):
            mult = m.get("ffn_mult")
            if isinstance(mult, bool) or not isinstance(mult, int | float) or not math.isfinite(mult) or mult <= 0:
                raise f.bad(f"block_configs[{i}].ffn.ffn_mult", mult, "a positive finite number")
            dense += gated(d, ffn_width(Fraction(str(mult)), d))
    f.notes.append("block_configs: " + ", ".join(f"{c} {k}" for k, c in sorted(kinds.items())) + f" of {n} layers; "
                   "MLP widths from ffn_mult (2/3 * ffn_mult * hidden_size, rounded up to 256)")
    kvh = next(iter(kv_heads_seen)) if len(kv_heads_seen) == 1 else None
    att = Attention(0, 2 * kvh * head_dim if kvh else 0,
                    f"2 (K and V) * {kvh} kv heads * {head_dim} head_dim" if kvh else
                    f"2 (K and V) * each block's kv heads * {head_dim} head_dim", head_dim if kvh else None,
                    kvh, heads)
    return Blocks(attention=att, attention_params=attention, full_layers=full, full_elements=kv,
                  mlp=Mlp(dense_mlp=dense))


FAMILIES = (
    Family("nemotron_nas", {"nemotron-nas": False}, {"DeciLMForCausalLM": "nemotron-nas"},
           mlp=lambda f, mtype, d, n: Mlp(), blocks=_blocks),
)
