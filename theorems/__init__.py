"""The lecture library: Reiner Pope's "The math behind how LLMs are trained and served" as checked math.

One module per chapter, in lecture order; presets (hardware, models, scenarios) are TOML data under
``presets/``, every value with its source.  ``derive`` finds this package through the
``derive.libraries`` entry point named ``lecture``.
"""

from __future__ import annotations

from pathlib import Path

from . import batching, capacity, context, gap, moe, pipeline, pricing, revnets, roofline, scaling
from .figures import FIGURES  # noqa: F401  (figure specs; derive.model.loader reads FIGURES)
from .hf_config import find_cached_config, model_values

# --model ORG/NAME: the scenario asks the reader where a Hugging Face id's config.json is (local cache only).
model_values.find_cached_config = find_cached_config  # type: ignore[attr-defined]

TOPICS = [roofline, batching, moe, pipeline, capacity, scaling, context, pricing, revnets, gap]
PRESET_DIRS = [Path(__file__).parent / "presets"]
# The numbers a what-if (derive diff, derive.diff) always shows before and after: (label, expression).
HEADLINES = [
    ("B* (critical batch)", "critical_batch"),
    ("latency floor (weight fetch)", "weight_fetch_time"),
    ("step time", "step_time"),
    ("cost per token", "cost_per_token"),
    ("KV per sequence", "kv_bytes_per_sequence"),
    ("critical context L*", "critical_context"),
]
MODEL_CONFIG_READER = model_values
# Peak rates that --measured may replace by measured ones, each with the assumption that says no measurement
# exceeds it (derive ledger checks every measured ceiling against it).
CEILINGS = {"flops": "gap.peak_flops_is_ceiling", "hbm_bandwidth": "gap.peak_bandwidth_is_ceiling",
            "scaleup_bandwidth": None, "scaleout_bandwidth": None}
# Claims that state when a scenario can exist at all: a value computed where one fails carries an `infeasible` note.
FEASIBILITY = ["capacity.memory_fits_in_hbm"]
# derive card: the everyday answers for a chip and a model, each resting on its claim or definition.
CARD = [
    {"label": "decode floor (weights read once per step)", "value": "weight_fetch_time", "unit": "ms",
     "decl": "roofline.latency_floor"},
    {"label": "B* (batch where decode turns compute-bound)", "value": "critical_batch",
     "decl": "batching.batch_optimum"},
    {"label": "critical context L* (past it no batch is compute-bound)", "value": "critical_context",
     "decl": "batching.kv_memory_bound_past_critical_context"},
    {"label": "cost per token at the scenario's batch", "value": "cost_per_token", "decl": "roofline.cost_per_token"},
    {"label": "step time at the scenario's batch", "value": "step_time", "unit": "ms",
     "decl": "roofline.roofline_step_time"},
    {"label": "longest context that fits at the scenario's batch", "vary": "context",
     "decl": "capacity.memory_fits_in_hbm"},
]
