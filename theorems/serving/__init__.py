"""Beyond the lecture: prefill, speculative decoding, parallel layouts, per-step overhead, collectives and the
network, throughput and saturation, prefill/decode disaggregation, and the economics of rented chips against API
prices, on the lecture's quantities.

Part II of the documents.  The chapters build on the lecture's quantities (imported from its modules), so
the lecture's topics come first in ``TOPICS``: ``--library serving`` alone loads them, and
``--library lecture --library serving`` loads each module once (a module listed twice adds nothing).
Presets are the lecture's, and the dated price scenarios of ``theorems/presets/serving/``.  ``derive`` finds
this package through the ``derive.libraries`` entry point named ``serving``.
"""

from __future__ import annotations

from pathlib import Path

# the lecture's library attributes, read by derive.model.loader (each taken once when both libraries are loaded):
# its presets, figures, headlines, config reader (and its formulas for the live page) and finder, ceilings, audit
# bounds, feasibility constraints and floor; and the step-floor bounds and kv_split, which the audit here builds on
from theorems import AUDIT_BOUNDS as LECTURE_AUDIT_BOUNDS
from theorems import CARD as LECTURE_CARD
from theorems import (  # noqa: F401
    CEILINGS,
    FIGURES,
    MODEL_CONFIG_FINDER,
    MODEL_CONFIG_READER,
    PREDICT_METRIC,
    STEP_FLOOR_BOUNDS,
    kv_split,
    weights_noted,
)
from theorems import FEASIBILITY as LECTURE_FEASIBILITY
from theorems import HEADLINES as LECTURE_HEADLINES
from theorems import INPUT_CONSTRAINTS as LECTURE_INPUT_CONSTRAINTS
from theorems import PRESET_DIRS as LECTURE_PRESET_DIRS
from theorems import TOPICS as LECTURE_TOPICS

# the lecture's reading of a pasted config.json, with the MoE layers and dispatch datatype network.py reads
from theorems.configs.live_formulas import SERVING_LIVE_CONFIG_FORMULAS as LIVE_CONFIG_FORMULAS  # noqa: F401

from . import disaggregation, economics, layouts, network, overhead, prefill, saturation, speculative

# derive diff reports these before and after every what-if: the lecture's, and a layout's own floors and step, which
# move with its degrees where the lecture's pooled numbers do not (n/a on a side without a layout or a prompt)
HEADLINES = [*LECTURE_HEADLINES, ("decode floor on the layout", "layout_decode_floor"),
             ("step time on the layout", "layout_step_time"), ("TTFT floor on the layout", "layout_ttft_floor")]
# the whole document's title when this library is loaded (its part II is "Beyond the lecture")
TITLE = ("The math behind how LLMs are trained and served, and beyond: the lecture and the serving library "
         "as checked math")
# derive audit: the lecture's bounds, and the step floor's form for a row of speculative decoding or multi-token
# prediction, which gives its mean tokens per verification step (a benchmark's "acceptance length"): each sequence
# gains that many tokens per step on average, and the step, verifying k + 1 tokens, is no shorter than a plain one
# (speculative.verify_step_between), so the time per output token times it is at least the step floor
_E = "accepted_tokens_per_step"


def _speculative(bound: dict) -> dict:
    """A step-floor bound (``theorems.STEP_FLOOR_BOUNDS``) for a row of speculative decoding."""
    return {**{k: v for k, v in bound.items() if k != "meaning"},
            "measured": f"({bound['measured']}) * {_E}", "row_inputs": [*bound["row_inputs"], _E], "when_given": [_E],
            "unless_given": [x for x in bound.get("unless_given", []) if x != _E],
            "reading": f"{bound['reading'].split(' (a row of speculative')[0]}, with speculative decoding {_E} tokens "
                       "per sequence per verification step on average, a step no shorter than a plain one "
                       "(speculative.verify_step_between)"}


def _measured_collective(name: str, what: str, group: str, over: str, bus_factor: str,
                         bus_reading: str) -> list[dict]:
    """derive audit's two columns of one measured collective (an nccl-tests row of ``name``_payload bytes over the
    ``group`` degree's chips): its time, the claim's measured quantity, or its bus bandwidth, read as nccl-tests
    defines it (``bus_factor`` x payload / time)."""
    return [{"metric": metric, "unit": unit, "meaning": meaning, "claim": f"network.{name}_floor_below_measured",
             "measured": measured, "reading": reading, "row_inputs": [group, f"{name}_payload"]}
            for metric, unit, meaning, measured, reading in (
                (f"{name}_time", "s", f"time of one {what} of {name}_payload bytes {over}", f"{name}_time",
                 f"the time of one {what} is the claim's measured quantity"),
                (f"{name}_busbw", "byte/s", f"nccl-tests' bus bandwidth of one {what} {over}",
                 f"{bus_factor} * {name}_payload / {name}_busbw", f"nccl-tests reports busbw = {bus_reading}"))]


# a plain step-floor row (no acceptance length) is read as one token per sequence per step: a run with speculative
# decoding beats that reading without beating the floor, so the audit says what the empty column means
_PLAIN_DECODE = {_E: f"a row that gives no {_E} is held to plain decoding, one token per sequence per step; a run "
                     "with speculative decoding or multi-token prediction (EAGLE, MTP, n-gram drafts) must give its "
                     f"mean tokens per verification step ({_E}, a benchmark's acceptance length), or it can read as "
                     "impossible"}


def _plain_noted(bound: dict) -> dict:
    """A lecture bound that holds only rows without an acceptance length, with the note on what that reading means."""
    if _E not in bound.get("unless_given", []):
        return bound
    return {**bound, "notes_when_missing": {**bound.get("notes_when_missing", {}), **_PLAIN_DECODE}}


AUDIT_BOUNDS = [
    *map(_plain_noted, LECTURE_AUDIT_BOUNDS),
    *(weights_noted(b) for bound in STEP_FLOOR_BOUNDS for b in kv_split(_speculative(bound))),
    # the time to first token: one request's own prefill, its prompt's uncached tokens (prefill_tokens; the
    # weakest form, one token, where the row gives none: the weights read once)
    *map(weights_noted, kv_split({"metric": "ttft", "unit": "s", "meaning": "time to first token of one request",
               "claim": "prefill.ttft_floor_below_measured", "measured": "ttft",
               "reading": "a request's first token comes out of a prefill of its own prompt, whatever else the "
                          "server batches; prefill_tokens counts the prompt tokens prefilled (a prefix served from "
                          "a cache is not)",
               # over every pipeline stage's chips, the weights once over one stage's (the last token's pass)
               # (the output head multiplies the last prompt token only)
               "terms": {"compute": "flops_per_param_token * ((params_active - params_output_head) * prefill_tokens "
                                    "+ params_output_head * tokens_per_step) * request_sequences "
                                    "/ (chips * stages * flops)",
                         "weights": "params_active * bytes_per_param / (chips * hbm_bandwidth)",
                         "KV": "request_sequences * prefill_tokens * kv_bytes_per_token / (chips * stages * "
                               "hbm_bandwidth)"},
               "row_inputs": ["prefill_tokens", "chips"], "defaults": {"prefill_tokens": "1 token/seq"}})),
    # one measured all-reduce (an nccl-tests row): its payload once over the layout's links, whatever the algorithm
    *_measured_collective("allreduce", "all-reduce", "tp", "over tp chips", "2 * (tp - 1) / tp",
                          "2(tp - 1)/tp x payload / time, whatever the algorithm"),
    # one measured all-to-all (an nccl-tests alltoall_perf row): the shares bound for other chips over the scale-up
    # links, whatever the topology
    *_measured_collective("alltoall", "all-to-all", "ep", "a chip over ep chips", "(ep - 1) / ep",
                          "(ep - 1)/ep x size / time for an all-to-all"),
]
SERVING_TOPICS = [prefill, speculative, layouts, overhead, network, saturation, disaggregation, economics]
TOPICS = [*LECTURE_TOPICS, *SERVING_TOPICS]

# A layout as an input (a scenario file's [layout] table, or --set tp=8 ...) and the layouts that cannot exist:
# derive.model.scenario fills a layout's missing degrees and refuses one that breaks a constraint, in one line.
# A layout also gives the economics chapter its rented chips (every stage's), so the rent counts the whole layout.
INPUT_TABLES = {"layout": {**layouts.INPUT_TABLE, "gives": {**layouts.INPUT_TABLE["gives"], **economics.LAYOUT_GIVES}}}
INPUT_CONSTRAINTS = [*LECTURE_INPUT_CONSTRAINTS, *layouts.INPUT_CONSTRAINTS, *economics.INPUT_CONSTRAINTS]
# a scenario exists only where its chips hold what they must: the lecture's pooled share, and under a layout each
# chip's own weights and KV cache (data and context parallelism copy weights, tp past the KV heads copies KV heads)
FEASIBILITY = [*LECTURE_FEASIBILITY, layouts.layout_memory_fits_in_hbm.id]
# derive card --library serving: the lecture's everyday answers, the TTFT floor, the layout's chips and its all-reduces
# under a layout a replica reads its dense weights over its own tp devices: the lecture's pooled decode floor says so
_POOLED_FLOOR_CAVEAT = {"when": "layout_decode_floor > weight_fetch_time_floor",
                        "note": "this floor pools the stage's chips; each replica reads its dense weights over its own "
                                "tp devices, so the layout's decode floor below is the higher one "
                                "(layouts.layout_decode_floor)"}
# and reads its own KV heads' copies: the lecture's pooled step time says so
_POOLED_STEP_CAVEAT = {"when": "layout_step_time > step_time",
                       "note": "this step pools the stage's chips; each replica reads its own copy of the dense "
                               "weights (and tp past the KV heads copies KV heads), so the layout's step time below is "
                               "the longer one (layouts.layout_step_time)"}
# and a request's prefill runs on its own replica: the pooled TTFT floor says so
_POOLED_TTFT_CAVEAT = {"when": "layout_ttft_floor > request_ttft_floor",
                       "note": "this floor pools the stage's chips; a request runs on one replica, whose devices read "
                               "and multiply its dense weights, so the layout's TTFT floor below is the higher one "
                               "(layouts.layout_ttft_floor)"}
# the cost per token prices the pooled step: under a layout each step lasts the layout's, so a token costs more
_POOLED_COST_CAVEAT = {"when": "layout_step_time > step_time",
                       "note": "this cost prices the pooled step; under the layout a step lasts layout_step_time "
                               "(layouts.layout_step_time, below), so a token costs that much more per step"}
_CAVEATS = {"roofline.latency_floor": _POOLED_FLOOR_CAVEAT, "roofline.roofline_step_time": _POOLED_STEP_CAVEAT,
            "pipeline.pipelined_cost_per_token": _POOLED_COST_CAVEAT}
CARD = [
    *({**row, "caveats": [*row.get("caveats", []), _CAVEATS[row["decl"]]]} if row["decl"] in _CAVEATS else row
      for row in LECTURE_CARD),
    # one request's own prefill, whatever the server batched with it: the floor derive audit holds a TTFT to
    # (ttft_floor is a prefill of the scenario's whole batch of prompts, a floor only for such a pass)
    {"label": "time to first token floor (one request's prefill of prefill_tokens)", "value": "request_ttft_floor",
     "decl": "prefill.ttft_floor_below_measured", "caveats": [_POOLED_TTFT_CAVEAT]},
    # what that prefill multiplies, attention of every kind the config reader knows included (the floor above
    # leaves attention out: which form a kernel runs is the serving stack's choice), the output head at the
    # sampled token only, as a server runs it
    {"label": "prefill FLOPs of one request's prompt (attention included, logits at its last token)",
     "value": "served_prefill_flops", "decl": "prefill.served_prefill_flops"},
    {"label": "chips of the layout (tp·pp·cp·dp; ep shares them)", "value": "layout_chips",
     "decl": "layouts.layout_chips"},
    # the lecture's decode floor pools a stage's chips; a replica reads its own dense weights over its tp devices
    {"label": "decode floor on the layout (a replica's tp devices read its dense weights)",
     "value": "layout_decode_floor", "decl": "layouts.layout_decode_floor"},
    {"label": "step time on the layout (each replica reads its own dense weights)", "value": "layout_step_time",
     "decl": "layouts.layout_step_time"},
    {"label": "time to first token floor on the layout (one request on its replica)", "value": "layout_ttft_floor",
     "decl": "layouts.layout_ttft_floor"},
    # the lecture's row above pools a stage's chips; a layout that copies weights or KV heads holds more per chip
    {"label": "longest context the layout's chips hold (their own weights, KV and hidden states)", "vary": "context",
     "decl": "layouts.layout_memory_fits_in_hbm"},
    {"label": "TP all-reduce latency per decode step (scale-up links)", "value": "tp_allreduce_latency",
     "decl": "network.tp_allreduce_latency"},
    {"label": "TP all-reduce latency per decode step (the layout's links)", "value": "tp_link_allreduce_latency",
     "decl": "network.tp_link_allreduce_latency"},
    {"label": "TP all-reduce floor per decode step (any algorithm)", "value": "tp_link_allreduce_floor",
     "decl": "network.tp_link_allreduce_floor"},
]
# the lecture's presets, and the serving library's own scenarios (dated API and rental prices; they name quantities
# only this library has, so the lecture does not list them)
PRESET_DIRS = [*LECTURE_PRESET_DIRS, Path(__file__).resolve().parent.parent / "presets" / "serving"]
