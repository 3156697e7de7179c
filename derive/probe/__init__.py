"""``python -m derive.probe``: measure a machine's achieved ceilings, matmul knees and decode steps.

The measurement follows ``shared/measurements/README.md`` (CUDA-event timing, medians after warm-up):
achieved HBM read bandwidth, achieved dense FLOP/s, the knee of a weight-streaming matrix product, the
knees of balanced expert layers, and whole decode steps of a Llama-3-8B-shaped model.  It writes a
measurement file (``measurements/<hardware>/probe-<date>.toml``, used by ``--measured``) and a ledger
file (``ledger/<hardware>-probe-<date>.toml``, read by ``derive ledger``).

torch is an optional extra (``pip install derive-llm[probe]``): only ``derive.probe.bench`` imports it,
and only when a measurement runs.  ``derive.probe.analysis`` (knees, file formats) needs no torch.
"""
