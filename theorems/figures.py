"""Figures of the lecture, as data: what to plot against what, drawn under the chosen scenario

``derive build`` evaluates each figure under the scenario it builds for (``--hardware``, ``--model``,
``--set``): the curves are the library's own definitions, expanded to base quantities and evaluated
vectorised.  A figure whose inputs the scenario lacks is skipped with a note in the document.

Figures:
- ``step_time_vs_batch``: the roofline of one decode step against the batch, with the critical batch
  B* and the latency floor (the weight-fetch time) marked.
- ``cost_vs_batch``: cost per token against the batch, with its floor and B*.
- ``memory_vs_context``: weight bytes against KV-cache bytes of a whole batch, against the context,
  with their crossover.
- ``pipeline_memory_split``: per-chip weight and KV bytes against the number of pipeline stages P
  (with as many micro-batches in flight as stages, the KV term does not shrink).

Curves are written as quantity names or expressions in quantity names, so that this module depends on
no theorem module: a quantity the library no longer has skips its figure instead of breaking imports.
"""

from __future__ import annotations

from derive.documents.figures import Curve, Figure

step_time_vs_batch = Figure(
    "step_time_vs_batch", "Decode step time against batch size",
    x="batch", x_range=(1, 100_000), log_x=True, log_y=True,
    curves=(Curve("compute_time", "compute time"), Curve("memory_time", "memory time (weights + KV)"),
            Curve("step_time", "step time (roofline)", "--")),
    marks=(("B*", "critical_batch"), ("latency floor", "weight_fetch_time")),
    y_label="time per step [ms]",
    caption="Compute time grows linearly with the batch; the weight reads are shared by the whole batch and set "
            "a floor on latency; the KV reads grow with the batch too.  B* is the batch at which compute time "
            "equals weight-fetch time (from the scenario's hardware ratio and sparsity).",
    topic="batching",
)

cost_vs_batch = Figure(
    "cost_vs_batch", "Cost per token against batch size",
    x="batch", x_range=(1, 100_000), log_x=True, log_y=True,
    curves=(Curve("cost_per_token", "cost per token"), Curve("cost_per_token_floor", "floor (no batch beats it)", ":")),
    marks=(("B*", "critical_batch"),),
    y_label="cost per token [USD/token]",
    caption="The weight reads are paid once per step and shared by every sequence, so the cost per token falls "
            "with the batch until the per-token work (multiplies and the token's own KV reads) dominates.",
    topic="batching",
)

memory_vs_context = Figure(
    "memory_vs_context", "Weights against KV cache, by context length",
    x="context", x_range=(1_000, 1_000_000), log_x=True, log_y=True,
    curves=(Curve("params_total * bytes_per_param", "weights"),
            Curve("batch * kv_bytes_per_sequence", "KV cache of the batch")),
    crossings=((0, 1),), y_unit="GB", y_label="bytes held [GB]",
    caption="Weights are held once; the KV cache grows with the context of every sequence in the batch (only "
            "through the full-attention layers: windowed, chunked and linear layers stop growing).  Past the "
            "crossover the KV cache is the larger part of memory.",
    topic="context",
)

pipeline_memory_split = Figure(
    "pipeline_memory_split", "Memory per chip against pipeline stages",
    x="stages", x_range=(1, 16), integer_x=True,
    curves=(Curve("params_total * bytes_per_param / (stages * chips)", "weights per chip"),
            Curve("batch * kv_bytes_per_sequence / chips", "KV cache per chip (P micro-batches in flight)"),
            Curve("(params_total * bytes_per_param + stages * batch * kv_bytes_per_sequence) "
                  "/ (stages * chips)", "total per chip", "--")),
    y_unit="GB", y_label="bytes per chip [GB]",
    caption="Each stage holds 1/P of the weights, but keeping P stages busy takes P micro-batches in flight, so "
            "the KV cache per chip stays constant: more stages save weight memory only.",
    topic="capacity",
)

FIGURES = [step_time_vs_batch, cost_vs_batch, memory_vs_context, pipeline_memory_split]
