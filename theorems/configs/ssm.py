"""State-space (Mamba) mixers shared by the hybrid families: their weights and the fixed state a sequence keeps.

A Mamba layer keeps no KV cache.  Each sequence holds, per layer, an SSM state and the last ``kernel - 1`` inputs
of its causal convolution, whatever the context (the layout vLLM's Mamba state cache allocates; transformers'
own cache keeps ``kernel`` inputs, one more).  The families name the same sizes differently, so each family
module reads its own fields and calls one of the two mixers here:

- ``mamba2``: Mamba-2 (Nemotron-H, Falcon-H1, Granite 4 hybrids).  ``inner = heads * head_dim`` channels;
  ``in_proj`` makes the gate z, x (``inner``), B and C (``groups * state`` each) and one time step per head; a
  depthwise convolution of ``kernel`` over x, B and C; ``out_proj`` back to ``hidden_size``.  State: ``heads *
  head_dim * state`` SSM elements plus ``(inner + 2 * groups * state) * (kernel - 1)`` convolution elements.  The
  per-head ``A_log``, ``D`` and ``dt_bias`` vectors are not counted, like norms and biases.
- ``mamba1``: Mamba (Jamba).  ``inner = expand * hidden_size``; ``in_proj`` makes x and the gate (``2 * inner``);
  a depthwise convolution of ``kernel`` over x; ``x_proj`` makes the time-step rank and B and C (``state`` each);
  ``dt_proj`` back up to ``inner``; ``A_log`` is an ``inner x state`` matrix (counted: it is a weight matrix, not
  a per-head vector); ``out_proj``.  State: ``inner * state`` SSM elements plus ``inner * (kernel - 1)``
  convolution elements.  ``D``, the ``dt_proj`` bias and the inner norms are not counted.

The SSM state takes ``mamba_ssm_cache_dtype`` (or ``mamba_ssm_dtype``) when the config names one, else the KV
element size; the convolution state always takes the KV element size.
"""

from __future__ import annotations

from fractions import Fraction

from derive.errors import ScenarioError

from .base import Fields, Linear, num, state_dtype_bytes


def _state(f: Fields, params: int, ssm: int, conv: int, formula: str, kind: str) -> Linear:
    """The layer's record, its SSM state in the datatype the config names for it (if any)."""
    dtype = None
    for key in ("mamba_ssm_cache_dtype", "mamba_ssm_dtype"):
        if f.has(key):
            dtype = (key, f.get(key))
            break
    if dtype is None:
        return Linear(params, ssm + conv, formula, kind=kind)
    key, name = dtype
    each = state_dtype_bytes(f, key, name)
    f.notes.append(f"{key} {name}: the {kind} SSM state is kept at {num(each)} B per element, the convolution "
                   "state at the KV element size")
    return Linear(params, conv, formula.replace("SSM state", f"SSM state at {num(each)} B"), ssm * Fraction(each),
                  kind=kind)


def mamba2(f: Fields, d: int, *, heads: int, head_dim: int, state: int, groups: int, kernel: int,
           fields: str = "mamba_num_heads", group_field: str = "n_groups") -> Linear:
    """One Mamba-2 layer: weights and the fixed state a sequence keeps (``fields`` and ``group_field`` name the
    config's own fields in errors)."""
    if heads % groups:
        raise ScenarioError(f"{fields} ({heads}) is not a multiple of {group_field} ({groups})", where=f.where)
    inner = heads * head_dim
    conv_dim = inner + 2 * groups * state  # x, B and C go through the convolution
    params = (d * (inner + conv_dim + heads)  # in_proj: z, x, B, C, dt
              + conv_dim * kernel  # depthwise conv1d
              + inner * d)  # out_proj
    formula = (f"{heads} heads * {head_dim} * {state} SSM state + {conv_dim} channels * {kernel - 1} convolution "
               "state")
    return _state(f, params, heads * head_dim * state, conv_dim * (kernel - 1), formula, "Mamba-2")


def mamba1(f: Fields, d: int, *, inner: int, state: int, kernel: int, dt_rank: int) -> Linear:
    """One Mamba layer (Jamba's): weights and the fixed state a sequence keeps."""
    params = (d * 2 * inner  # in_proj: x and the gate
              + inner * kernel  # depthwise conv1d
              + inner * (dt_rank + 2 * state)  # x_proj: time step, B, C
              + dt_rank * inner  # dt_proj
              + inner * state  # A_log
              + inner * d)  # out_proj
    formula = f"{inner} channels * {state} SSM state + {inner} channels * {kernel - 1} convolution state"
    return _state(f, params, inner * state, inner * (kernel - 1), formula, "Mamba")


def mamba2_by_heads(f: Fields, d: int, *, heads: int, inner: int, inner_words: str, why: str) -> Linear:
    """A Mamba-2 mixer named the transformers way (``mamba_n_heads``, ``mamba_d_head`` or "auto", state,
    groups and conv fields): the head size is ``inner // heads`` when "auto", and heads x head size must be
    the width ``inner`` (``inner_words`` says where it came from), as transformers requires."""
    head_dim_field = f.get("mamba_d_head", "auto")
    head_dim = inner // heads if head_dim_field == "auto" else f.whole("mamba_d_head", head_dim_field, 1)
    if heads * head_dim != inner:
        raise ScenarioError(f"mamba_n_heads ({heads}) * mamba_d_head ({head_dim}) is not {inner_words} ({inner})",
                            where=f.where, hint="transformers refuses this config too")
    return mamba2(f, d, heads=heads, head_dim=head_dim, state=f.need("mamba_d_state", why=why),
                  groups=f.need("mamba_n_groups", why=why), kernel=f.need("mamba_d_conv", why=why),
                  fields="mamba_n_heads", group_field="mamba_n_groups")
