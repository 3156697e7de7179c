"""GLM-4.5 (``glm4_moe``): grouped-query attention with DeepSeek-style MoE layers, shared expert and leading
dense layers (``configuration_glm4_moe.py``)."""

from __future__ import annotations

from .base import Family
from .deepseek import deepseek_moe_mlp

FAMILIES = (
    Family("glm_moe", {"glm4_moe": False}, {"Glm4MoeForCausalLM": "glm4_moe"}, mlp=deepseek_moe_mlp),
)
