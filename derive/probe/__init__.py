"""``python -m derive.probe``: measure a machine's achieved ceilings, matmul knees, decode steps and prefill passes.

The measurement follows ``shared/measurements/README.md`` (CUDA-event timing, medians after warm-up):
achieved HBM read bandwidth, achieved dense FLOP/s, the knee of a weight-streaming matrix product, the
knees of balanced expert layers, the matrix-product rate at every shape those knees run, and whole decode
steps (attention unfused and fused) and prefill passes of a Llama-3-8B-shaped model.  It writes a
measurement file (``measurements/<hardware>/probe-<date>.toml``, used by ``--measured``) and ledger files
(``ledger/<hardware>-probe-<date>.toml`` for the knees and decode steps, read by ``derive ledger``;
``ledger/<hardware>-probe-<date>-prefill.toml`` for the prefill passes, read with ``--library serving``),
and prints each time per output token and to first token against its floor.

One job per module:

- ``bench``: the measurements (torch); ``model``: the model it times (torch).
- ``analysis``: the saved result's schema, the measured knees and the files written (no torch).
- ``shapes``: knees predicted from the rates at the shapes that run (no torch).
- ``floors``: the probe's ledger entries evaluated against the library's floors (no torch).
- ``report``: the printed lines (no torch); ``__main__``: the command.

torch is an optional extra (``pip install derive-llm[probe]``): only ``bench`` and ``model`` import it,
and only when a measurement runs.
"""
