"""Qwen3-Next and Qwen3.5: Gated DeltaNet linear-attention layers (a fixed-size state) with full attention on
one layer in ``full_attention_interval``, a gate projected with the query (``configuration_qwen3_next.py``;
Qwen3.5's multimodal files keep the language model in ``text_config``)."""

from __future__ import annotations

from .base import Attention, Family, Fields, LayerKinds, Linear, count_every, gqa, num, state_dtype_bytes
from .dense import dense_mlp
from .qwen_moe import qwen_moe_mlp


def _attention(f: Fields, mtype: str, d: int) -> Attention:
    return gqa(f, d, gated_query=f.flag("attn_output_gate", True, "" if mtype.startswith("qwen3_next")
                                         else "gated query (Qwen3.5 default)"))


def _pattern(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    interval = f.optional("full_attention_interval", 4, minimum=1,
                          meaning="one full-attention layer in 4 (Qwen3-Next's default)")
    full = count_every(n, interval, offset=1)
    return {"full": full, "window": 0, "chunk": 0, "linear": n - full}, 0, 0


def gated_deltanet(f: Fields, d: int) -> Linear:
    """Qwen3-Next / Qwen3.5 linear attention: projections, a short causal convolution, a recurrent state."""
    why = "linear-attention (Gated DeltaNet)"
    k_heads = f.need("linear_num_key_heads", why=why)
    v_heads = f.need("linear_num_value_heads", why=why)
    k_dim = f.need("linear_key_head_dim", why=why)
    v_dim = f.need("linear_value_head_dim", why=why)
    kernel = f.need("linear_conv_kernel_dim", why=why)
    key_dim, value_dim = k_heads * k_dim, v_heads * v_dim
    conv_dim = 2 * key_dim + value_dim
    params = (d * (2 * key_dim + 2 * value_dim)  # q, k, v and the output gate z
              + d * 2 * v_heads  # beta and the decay a, one per value head
              + conv_dim * kernel  # depthwise causal convolution over q, k, v
              + value_dim * d)  # out_proj
    recurrent, conv = v_heads * k_dim * v_dim, conv_dim * (kernel - 1)
    formula = (f"{v_heads} value heads * {k_dim} * {v_dim} recurrent state + {conv_dim} channels * {kernel - 1} "
               "convolution state")
    ssm = f.get("mamba_ssm_dtype")
    if ssm is not None:
        each = state_dtype_bytes(f, "mamba_ssm_dtype", ssm)
        f.notes.append(f"mamba_ssm_dtype {ssm}: the linear-attention recurrent state is kept at {num(each)} B per "
                       "element, the convolution state at the KV element size")
        return Linear(params, conv, formula.replace("recurrent state", f"recurrent state at {num(each)} B"),
                       recurrent * each)
    return Linear(params, recurrent + conv, formula)


# transformers' Qwen3-Next ignores the sliding-window fields; layer_types, when given, wins over the interval;
# intermediate_size is the dense layers' width (read when mlp_only_layers leaves some)
_KNOWN = frozenset({"use_sliding_window", "max_window_layers", "full_attention_interval", "intermediate_size"})

FAMILIES = (
    Family("qwen3_5", {"qwen3_5": False, "qwen3_5_text": False},
           {"Qwen3_5ForConditionalGeneration": "qwen3_5", "Qwen3_5ForCausalLM": "qwen3_5"},
           mlp=dense_mlp, attention=_attention, pattern=_pattern, linear=gated_deltanet, known=_KNOWN),
    Family("qwen3_next", {"qwen3_next": False, "qwen3_5_moe": False, "qwen3_5_moe_text": False},
           {"Qwen3NextForCausalLM": "qwen3_next", "Qwen3_5MoeForConditionalGeneration": "qwen3_5_moe",
            "Qwen3_5MoeForCausalLM": "qwen3_5_moe"},
           mlp=qwen_moe_mlp, attention=_attention, pattern=_pattern, linear=gated_deltanet, known=_KNOWN),
)
