"""Compatibility name for ``theorems.configs``, the config.json reader (one module per model family).

Kept so that code written against ``theorems.hf_config`` keeps working; new code imports
``theorems.configs``.
"""

from __future__ import annotations

from .configs import (
    MAX_LAYERS,
    MAX_SIZE,
    SUPPORTED_MODEL_TYPES,
    ConfigValue,
    KVLayout,
    ModelValues,
    ParamBreakdown,
    find_cached_config,
    kv_layout,
    load_config_json,
    model_values,
    param_breakdown,
    read_config_json,
)

__all__ = [
    "MAX_LAYERS",
    "MAX_SIZE",
    "SUPPORTED_MODEL_TYPES",
    "ConfigValue",
    "KVLayout",
    "ModelValues",
    "ParamBreakdown",
    "find_cached_config",
    "kv_layout",
    "load_config_json",
    "model_values",
    "param_breakdown",
    "read_config_json",
]
