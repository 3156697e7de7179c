"""GLM-4.5 (``glm4_moe``): grouped-query attention with DeepSeek-style MoE layers, shared expert and leading
dense layers (``configuration_glm4_moe.py``); GLM-4.5V's language model is the same (``glm4v_moe_text``)."""

from __future__ import annotations

from .base import Family
from .deepseek import deepseek_moe_mlp

FAMILIES = (
    Family("glm_moe", {"glm4_moe": False}, {"Glm4MoeForCausalLM": "glm4_moe"}, mlp=deepseek_moe_mlp,
           # GLM-4.5V's language model (glm4v_moe's text_config): GLM-4.5's tensors (modeling_glm4v_moe.py)
           aliases={"glm4v_moe_text": "glm4_moe"}),
)
