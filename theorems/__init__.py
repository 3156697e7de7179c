"""The lecture library: Reiner Pope's "The math behind how LLMs are trained and served" as checked math.

One module per chapter, in lecture order; presets (hardware, models, scenarios) are TOML data under
``presets/``, every value with its source.  ``derive`` finds this package through the
``derive.libraries`` entry point named ``lecture``.
"""

from __future__ import annotations

from pathlib import Path

from derive import logic

from . import batching, capacity, context, gap, moe, pipeline, pricing, revnets, roofline, scaling
from .configs.live_formulas import LIVE_CONFIG_FORMULAS as _LIVE_CONFIG_FORMULAS
from .figures import FIGURES  # noqa: F401  (figure specs; derive.model.loader reads FIGURES)

TOPICS = [roofline, batching, moe, pipeline, capacity, scaling, context, pricing, revnets, gap]
PRESET_DIRS = [Path(__file__).parent / "presets"]
# The numbers a what-if (derive diff, derive.diff) always shows before and after: (label, expression).
HEADLINES = [
    ("B* (critical batch)", "critical_batch"),
    ("weight fetch per step", "weight_fetch_time"),  # the experts read at the batch; the floor is the card's
    ("step time", "step_time"),
    ("cost per token", "cost_per_token"),
    ("KV per sequence", "kv_bytes_per_sequence"),
    ("critical context L*", "critical_context"),
]
# the hand reader; a model_type it has no family for is built on PyTorch's meta device when torch and transformers
# are installed (theorems.configs.meta), else refused as before
def MODEL_CONFIG_READER(*args: object, **kwargs: object) -> object:  # noqa: N802  (the loader's attribute name)
    """``theorems.configs.model_values_with_meta``, its family readers imported on the first config read."""
    from .configs import model_values_with_meta

    return model_values_with_meta(*args, **kwargs)


# The hand reading as formulas, for the plain decoder families: the live page reads a pasted config.json with them
# (format: derive.model.config_formulas; tests hold them to the hand reader exactly).
LIVE_CONFIG_FORMULAS = _LIVE_CONFIG_FORMULAS
# --model ORG/NAME: where a Hugging Face id's config.json is (the local cache only).
def MODEL_CONFIG_FINDER(*args: object, **kwargs: object) -> object:  # noqa: N802
    """``theorems.configs.find_cached_config``, imported on first use."""
    from .configs import find_cached_config

    return find_cached_config(*args, **kwargs)


# Peak rates that --measured may replace by measured ones, each with the assumption that says no measurement
# exceeds it (derive ledger checks every measured ceiling against it).
CEILINGS = {"flops": "gap.peak_flops_is_ceiling", "hbm_bandwidth": "gap.peak_bandwidth_is_ceiling",
            "scaleup_bandwidth": None, "scaleout_bandwidth": None}

# derive audit: the metric columns a table of measured or predicted numbers may have, and the proved claim each is
# held to (format: derive.whatif.audit).  A metric is read as the claim's measured quantity; `row_inputs` are never
# taken from a preset (the row states them, else `defaults`, the values that give the weakest bound, apply); a
# default of another input applies where neither the row nor its presets give it.
# the terms of the strict floor (roofline.step_time_floor): one token's active weights, however the batch routes
_STEP_TERMS = {"compute": "compute_time", "weights": "weight_fetch_time_floor", "KV": "kv_read_time_floor",
               "embedding rows": "embedding_fetch_time"}
_STEP_INPUTS = ["batch", "context", "chips"]
# a row that names no model reads no per-layer embedding row (Gemma 4 E2B/E4B's tables add to it) and attends
# to none of its cache sparsely (its KV columns are what a step reads; DeepSeek-V3.2 gives a model)
_MODELLESS_ROW = {"per_layer_row_params": "0 param/token", "kv_sparse_bytes_per_token": "0 byte/token",
                  "attention_topk": "0 token/seq"}
# a row that gives its mean tokens per verification step (speculative decoding, multi-token prediction; the serving
# library's column) gains more than one token per step: it is held to the serving library's form of the step floor
_SPECULATIVE = ["accepted_tokens_per_step"]
# How a run stores its KV cache is the serving stack's choice, not the model's (FP8 caches of BF16 models are common,
# 4-bit ones exist): a row that says it (bytes_per_kv_element) is held to its KV reads at that width; a row that does
# not is held to the floor without them, the bound's weakest form (its KV columns, if it gives them, still count).
KV_STATED = ["bytes_per_kv_element"]
_KV_UNSTATED = {"kv_bytes_per_token": "0 byte/token", "kv_window_bytes_per_token": "0 byte/token",
                "kv_chunk_bytes_per_token": "0 byte/token", "kv_state_bytes": "0 byte/seq",
                "kv_sparse_bytes_per_token": "0 byte/token"}


def kv_split(bound: dict) -> list[dict]:
    """``bound`` as three audit bounds: for a row that states its KV element width, for one that gives its KV bytes
    per token itself, and for one that gives neither (held without its KV reads, with a note)."""
    kv_inputs = {"row_inputs": [*bound.get("row_inputs", []), *_KV_UNSTATED],
                 "defaults": {**bound.get("defaults", {}), **_KV_UNSTATED}}
    stated = {**bound, "when_given": [*bound.get("when_given", []), *KV_STATED],
              "reading": bound["reading"] + "; its KV cache read at the row's bytes_per_kv_element"}
    own = {**{k: v for k, v in bound.items() if k != "meaning"}, **kv_inputs,
           "when_given": [*bound.get("when_given", []), "kv_bytes_per_token"],
           "unless_given": [*bound.get("unless_given", []), *KV_STATED],
           "reading": bound["reading"] + "; its KV cache read as its own KV columns give it"}
    unstated = {**{k: v for k, v in bound.items() if k != "meaning"}, **kv_inputs,
                "unless_given": [*bound.get("unless_given", []), *KV_STATED, "kv_bytes_per_token"],
                "reading": bound["reading"] + "; the row gives no bytes_per_kv_element and no kv_bytes_per_token, so "
                                              "its KV reads are left out (the weakest form, since a cache may be "
                                              "stored narrower than the model's datatype)",
                "note": "a row that gives neither bytes_per_kv_element nor kv_bytes_per_token is held to the floors "
                        "without its KV reads (a KV cache may be stored narrower than the model's datatype: FP8, "
                        "4-bit); give bytes_per_kv_element (2 byte for BF16, 1 byte for FP8) to hold it to them"}
    return [stated, own, unstated]


# A row that does not say how its run stored the weights is held to the model's own datatype (its config's or preset's,
# else the chip's) and to the chip's rate for it; unlike the KV cache's, that is the checkpoint's as published, so the
# bound keeps it, and says so: a run that quantized a checkpoint on the fly (FP8, 4-bit) must give bytes_per_param.
WEIGHTS_UNSTATED = {"bytes_per_param": "a row that gives no bytes_per_param is held to its weights in the model's own "
                                       "datatype (its config's or preset's, else the chip's) and, unless it gives "
                                       "flops, to the chip's rate for that datatype; a run that quantized its weights "
                                       "(FP8, 4-bit) must give bytes_per_param (1 byte for FP8, 0.5 byte for 4-bit)"}


def weights_noted(bound: dict) -> dict:
    """``bound`` with the note said where a row held to it leaves ``bytes_per_param`` empty (a bound that names a
    claim; an ``unchecked`` entry as it is)."""
    if "claim" not in bound:
        return bound
    return {**bound, "notes_when_missing": {**bound.get("notes_when_missing", {}), **WEIGHTS_UNSTATED}}


# the bounds that read the step floor, before kv_split (the serving library gives each a speculative form too)
STEP_FLOOR_BOUNDS = [
    {"metric": "tpot", "unit": "s", "meaning": "time per output token of one sequence (a decode step)",
     "claim": "gap.roofline_floor_below_measured", "measured": "tpot",
     "reading": "each sequence gains one token per decode step, so its time per output token is a step time "
                "(a row of speculative decoding gives accepted_tokens_per_step, with --library serving)",
     "terms": _STEP_TERMS, "row_inputs": _STEP_INPUTS, "unless_given": _SPECULATIVE,
     "defaults": {"batch": "1 seq", "context": "1 token/seq", **_MODELLESS_ROW}},  # never falls as either grows
    {"metric": "tokens_per_s", "unit": "token/s", "meaning": "output tokens per second of the row's chips (a replica)",
     "claim": "gap.roofline_floor_below_measured", "measured": "batch * tokens_per_step / tokens_per_s",
     "reading": "at most batch sequences are in flight, each gaining one token per step, and batch over the step "
                "floor never falls as the batch grows: batch/tokens_per_s is at least a step time",
     "terms": _STEP_TERMS, "row_inputs": _STEP_INPUTS, "defaults": {"context": "1 token/seq", **_MODELLESS_ROW},
     "unless_given": _SPECULATIVE},
    {"metric": "tokens_per_s_per_chip", "unit": "token/s", "claim": "gap.roofline_floor_below_measured",
     "measured": "batch * tokens_per_step / (tokens_per_s_per_chip * chips)",
     "reading": "all chips together output chips times the per-chip rate; read as tokens_per_s",
     "terms": _STEP_TERMS, "row_inputs": _STEP_INPUTS, "defaults": {"context": "1 token/seq", **_MODELLESS_ROW},
     "unless_given": _SPECULATIVE},
]
_TPOT, _TOKENS_PER_S, _TOKENS_PER_S_PER_CHIP = STEP_FLOOR_BOUNDS
AUDIT_BOUNDS = [weights_noted(b) for b in [
    *kv_split(_TPOT),
    *kv_split(_TOKENS_PER_S),
    {"metric": "tokens_per_s", "unit": "token/s", "claim": "gap.throughput_per_chip_ceiling",
     "measured": "tokens_per_s / chips", "reading": "the output tokens of all chips, shared over the chips",
     "row_inputs": ["chips"]},
    {"metric": "tokens_per_s_per_chip", "unit": "token/s", "meaning": "output tokens per second per chip",
     "claim": "gap.throughput_per_chip_ceiling", "measured": "tokens_per_s_per_chip",
     "reading": "tokens per second per chip is the claim's measured quantity"},
    *kv_split(_TOKENS_PER_S_PER_CHIP),
    {"metric": "ttft", "unit": "s", "meaning": "time to first token",
     "unchecked": "the lecture proves no floor on prefill time (a library with a prefill floor adds one)"},
    {"metric": "request_rate", "unit": "1/s", "meaning": "requests completed per second",
     "unchecked": "the lecture proves no bound on requests per second (it has no output length per request)"},
]]
# Rules on the inputs, decided on every scenario built (derive.model.scenario).  The share of experts read is kept a
# rule rather than a declared fraction: its upper bound in every certificate sends cvc5 past its resource limit.
INPUT_CONSTRAINTS = [
    {"id": "roofline.share_of_experts_at_most_one", "what": "share of experts read",
     "rule": "expert_read_fraction <= 1", "relation": logic.le(roofline.expert_read_fraction_q.sym, 1),
     "reason": "a step reads each skipped expert at most once: the share of them it reads is at most 1",
     "hint": "give a share from 0 (the strict floor) to 1 (every expert)",
     "source": "counting (roofline.distinct_experts_bounds)"},
    {"id": "roofline.output_head_within_active", "what": "output head",
     "rule": "params_output_head < params_active",
     "relation": logic.lt(roofline.params_output_head.sym, roofline.params_active.sym),
     "reason": "the output head is one of the weights a token multiplies: it cannot outnumber them",
     "hint": "give the output head's parameters (vocab_size x hidden_size), fewer than params_active",
     "source": "counting (a model config's lm_head, or its tied embedding matrix)"},
    {"id": "roofline.sparse_kv_within_kv", "what": "sparse attention",
     "rule": "kv_sparse_bytes_per_token <= kv_bytes_per_token",
     "relation": logic.le(roofline.kv_sparse_bytes_per_token.sym, roofline.kv_bytes_per_token.sym),
     "reason": "the sparse-attention layers' cache is part of the KV cache: a step cannot skip more than it holds",
     "hint": "give kv_bytes_per_token every cached byte per token, the sparse part included",
     "source": "counting (roofline.kv_read_bytes_per_sequence)"},
    {"id": "roofline.weights_not_narrower_than_flops", "what": "precision",
     "rule": "bytes_per_param >= flops_datatype_bytes",
     "relation": logic.ge(roofline.bytes_per_param.sym, roofline.flops_datatype_bytes.sym), "refuse": False,
     "reason": "the model's weights are narrower than the datatype the chip's flops is quoted at, and kernels at "
               "the narrower datatype can run faster than flops: a compute time read at flops, and a floor that "
               "rests on it, may sit above a measurement",
     "hint": "use the chip's preset for the weights' datatype (h100-sxm-fp8, b200-fp4, ...) or --set flops=... at "
             "that datatype (and --set flops_datatype_bytes=1 for an FP8 rate)",
     "source": "the chips' spec sheets give a rate per datatype (hardware presets: flops_bf16, flops_fp8, "
               "flops_fp4, flops_int8)",
     # A chip preset that quotes the narrower datatype's rate gives it in place of flops (a floor reads the
     # fastest rate the weights' datatype allows); below one byte a weight may be FP4, else FP8 is the narrowest
     # rate it can use (or INT8: an A100 has no FP8).  A chip without such a rate (a TPU v4) keeps flops, and this
     # rule's note.
     "remedies": [
         {"when": "bytes_per_param < 1 byte/param", "take": {"flops": "flops_fp4"},
          "set": {"flops_datatype_bytes": "1/2 byte/param"},
          "reason": "weights averaging under 1 byte are in part FP4, which the chip's matrix units run at its FP4 "
                    "rate (a floor reads the fastest rate)"},
         # an 8-bit weight may be FP8 or INT8: the faster of the two rates a chip quotes (TPU v6e: INT8 1,836,
         # FP8 918), so the INT8 rate goes first where it is the faster, then FP8, then INT8 on a chip without FP8
         {"when": "flops_int8 > flops_fp8", "take": {"flops": "flops_int8"},
          "set": {"flops_datatype_bytes": "1 byte/param"},
          "reason": "weights averaging under 2 bytes are in part 8-bit, which the chip's matrix units run at its "
                    "INT8 rate, its fastest 8-bit one (a floor reads the fastest rate)"},
         {"when": "bytes_per_param < 2 byte/param", "take": {"flops": "flops_fp8"},
          "set": {"flops_datatype_bytes": "1 byte/param"},
          "reason": "weights averaging under 2 bytes are in part FP8 (or narrower), which the chip's matrix units "
                    "run at its FP8 rate (a floor reads the fastest rate)"},
         {"when": "bytes_per_param < 2 byte/param", "take": {"flops": "flops_int8"},
          "set": {"flops_datatype_bytes": "1 byte/param"},
          "reason": "weights averaging under 2 bytes are in part 8-bit (or narrower), which the chip's matrix "
                    "units run at its INT8 rate, the one 8-bit rate it quotes (a floor reads the fastest rate)"},
     ]},
    # the other way round (BF16 weights on a chip preset quoted at its FP4 rate): a floor read at the faster rate
    # stays a floor, but every value that reads flops (B*, L*, a step's compute) is that of narrower weights
    {"id": "roofline.weights_not_wider_than_flops", "what": "precision",
     # twice: an FP8 checkpoint averages a little over 1 byte (its BF16 norms, block scales), FP4 over 0.5
     "rule": "bytes_per_param < 2 * flops_datatype_bytes",
     "relation": logic.lt(roofline.bytes_per_param.sym, 2 * roofline.flops_datatype_bytes.sym), "refuse": False,
     "reason": "the model's weights are twice or more as wide as the datatype the chip's flops is quoted at, and "
               "a matrix unit runs them at their own, slower rate: values that read flops (B*, L*, a step's "
               "compute) are those of weights that narrow (a floor read at the faster rate stays a floor)",
     "hint": "use the chip's preset for the weights' datatype (b200 for BF16 weights) or --set bytes_per_param=... "
             "for weights quantized to the chip's datatype",
     "source": "the chips' spec sheets give a rate per datatype (hardware presets: flops_bf16, flops_fp8, "
               "flops_fp4, flops_int8)"},
    {"id": "pipeline.microbatches_fill_the_stages", "what": "pipeline",
     "rule": "microbatches >= stages", "relation": logic.ge(pipeline.microbatches.sym, pipeline.stages.sym),
     "refuse": False,
     "reason": "with fewer micro-batches in flight than pipeline stages some stages sit idle every step, and "
               "cost_per_token, which rents one stage's chips at full use, undercounts the rent: "
               "pipelined_cost_per_token rents every stage (derive card shows it)",
     "hint": "--set microbatches=... up to the stages for a full pipeline, or read pipelined_cost_per_token",
     "source": "lecture 01:00-01:02 (a pipeline is full with as many micro-batches as stages; "
               "pipeline.pipelined_cost_per_token)"},
]
# derive.predict and `derive export --format floors-json`: the metric whose proved floor, split into its terms, a
# serving simulator's latency predictor takes (a decode step of one sequence).
PREDICT_METRIC = "tpot"
# Claims that state when a scenario can exist at all: a value computed where one fails carries an `infeasible` note.
FEASIBILITY = ["capacity.memory_fits_in_hbm", "capacity.context_within_model"]
# derive card: the everyday answers for a chip and a model, each resting on its claim or definition.
CARD = [
    {"label": "decode floor (one token's active weights read per step)", "value": "weight_fetch_time_floor",
     "decl": "roofline.latency_floor"},
    {"label": "B* (batch where decode turns compute-bound)", "value": "critical_batch",
     "decl": "batching.batch_optimum",
     # B* weighs the weight reads alone against the multiplies: past L* the KV reads decide
     "caveats": [{"when": "context >= critical_context",
                  "note": "B* counts the weight reads only; past the critical context the KV cache's reads "
                          "alone outweigh each sequence's multiplies, so no batch is compute-bound "
                          "(batching.kv_memory_bound_past_critical_context)"}]},
    {"label": "critical context L* (past it no batch is compute-bound)", "value": "critical_context",
     "decl": "batching.kv_memory_bound_past_critical_context"},
    # every stage's chips are rented (a layout over pp nodes): equal to roofline.cost_per_token on one stage
    {"label": "cost per token at the scenario's batch", "value": "pipelined_cost_per_token",
     "decl": "pipeline.pipelined_cost_per_token"},
    {"label": "step time at the scenario's batch", "value": "step_time",
     "decl": "roofline.roofline_step_time",
     # the roofline's step reads every cached token; a sparse-attention step reads the top k of some layers' cache,
     # a chunked-attention layer its current chunk
     "caveats": [{"when": "kv_read_bytes_per_sequence < kv_bytes_per_sequence",
                  "note": "this step reads each sequence's whole KV cache; sparse attention reads the top "
                          "attention_topk tokens of its layers' cache and chunked attention only the current "
                          "chunk, so a step may read less (roofline.kv_read_time_floor, the floor's KV term)"}]},
    {"label": "longest context that fits at the scenario's batch", "vary": "context",
     "decl": "capacity.memory_fits_in_hbm"},
]
