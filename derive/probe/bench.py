"""The measurements themselves (needs torch, the optional ``probe`` extra).

Method (``shared/measurements/README.md``): random bf16 data, CUDA-event timing (wall clock with a
synchronize on other devices), the median of repeated runs after warm-up.  Each section below is a key of
the saved result (``--save-json``; its schema is in ``derive.probe.analysis``).

- ``read_bytes_per_s``: a float32-accumulated sum over a large bf16 buffer, bytes read over time.
- ``copy_bytes_per_s``: a device-to-device copy, bytes read plus written over time.
- ``matmul_flops_per_s``: a square bf16 matrix product.
- ``dense_knee``: X[B, K] @ W[K, N] for a range of B, with W far larger than the last-level cache.
- ``moe_knee``: E experts of d x f, top-k routing with perfectly balanced load (each expert gets
  ceil(B·k/E) tokens), one batched product over all experts, against B.
- ``shape_rates``: the matrix-product rate at each shape the knees run (rows x K x N: B x 8192 x 28672 for
  every dense-knee batch, ceil(B·k/E) x 4096 x 14336 for every expert-layer point), compute-bound: the
  weight is cut into column blocks of at most a quarter of the last-level cache (``block_columns``), and
  ``group`` products of rows x K x block share one block (a batched product whose weight operand has batch
  stride 0), enough to give every SM 128 output tiles of 128 x 128: the knees' largest batches run hundreds of
  waves of tiles, and a product of a few waves pays its last, partial wave (runs at eight tiles per SM put
  the compute slope at sparsity 16 up to 10 % slow: ``tests/fixtures/probe``).  The block is read from HBM once
  and from the cache after, so the time is the multiplies' time at that row count and depth:
  ``flops_per_s`` = 2·group·rows·K·block / seconds.  ``weight_copied`` says whether the batched product
  allocated a copy of the shared weight (then the rate also paid for that copy and is low).
- ``read_sizes``: the weight-read time of the products at the knees' plateau shapes (the
  ``KNEE_FLAT_POINTS`` smallest batches of each knee: rows x K x N) over weights of other sizes than the
  layer's own: a quarter, half, twice and four times it (the dense layer's K x N widened or narrowed in
  columns, the expert layers' stack of K x N weights with fewer or more experts), so never the knee's own
  weight or timing.  ``derive.probe.shapes`` fits t = t_0 + bytes / W_r to each row count and reads the
  knee's plateau at the layer's weight.  (Runs of 2026-11-27 timed ``stream_rates`` instead: the same row
  counts over one weight of about 4 GiB, which read about a tenth faster than the knees' 0.5-1 GB weights.)
- ``decode``: whole decode steps of a Llama-3-8B-shaped model (32 layers, d 4096, 32 query heads, 8 KV
  heads of 128, FFN 14336, vocab 128256) with random weights in plain PyTorch (unfused RMSNorm, attention
  as two batched products and a float32 softmax), captured in one CUDA graph on a GPU: step time against
  batch B and context L (the KV cache holds L tokens per sequence, bf16).
- ``decode_sdpa``: the same steps with fused attention (``scaled_dot_product_attention``; ``model.py``).
- ``prefill``: one forward pass of the same model over B sequences of L new tokens from an empty cache,
  causal fused attention, the LM head on each sequence's last token, captured in one CUDA graph: the time
  to first token of B prompts of L tokens, without launch, scheduling or sampling overhead.

``tiny=True`` shrinks every size so that the whole probe runs on a CPU in seconds (a smoke test: the
numbers mean nothing).  The full run took 60-66 s on one H100 or H200 (2026-11-27, five runs).
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable
from typing import TextIO

import torch

from derive.probe.analysis import KNEE_FLAT_POINTS
from derive.probe.model import Decoder, params_layers, params_read_per_step, rand
from derive.probe.shapes import READ_SIZE_FACTORS

Timer = Callable[[Callable[[], object], int, int], float]
TILE = 128  # nominal output tile edge of a tensor-core product: sizes the group of shape_rates
TILES_PER_SM = 128


class _Sizes:
    def __init__(self, tiny: bool) -> None:
        if tiny:
            self.read_bytes, self.matmul_n, self.repeats, self.warmup = 2**22, 128, 3, 1
            self.knee_k, self.knee_n = 64, 256
            self.knee_batches = [1, 2, 4, 8, 16, 64, 256, 512]
            self.moe_d, self.moe_f, self.moe = 32, 64, [(4, 2), (8, 2)]
            self.moe_batches = [4, 8, 16, 32, 64, 256, 512, 1024]
            self.model = dict(layers=2, d=64, heads=4, kv_heads=2, head_dim=16, ffn=128, vocab=256)
            self.decode = [(1, 16), (4, 16), (1, 64)]
            self.prefill = [(1, 16), (2, 32)]
            self.prefill_repeats, self.prefill_warmup = 3, 1
        else:
            self.read_bytes, self.matmul_n, self.repeats, self.warmup = 4 * 2**30, 8192, 20, 5
            self.knee_k, self.knee_n = 8192, 28672
            self.knee_batches = [1, 2, 4, 8, 16, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 384, 448, 512,
                                 640, 768, 1024, 1536, 2048, 4096, 8192, 16384]
            self.moe_d, self.moe_f, self.moe = 4096, 14336, [(8, 2), (32, 2), (64, 4)]
            self.moe_batches = [16, 64, 128, 256, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288,
                                16384, 32768]
            self.model = dict(layers=32, d=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336, vocab=128256)
            self.decode = [(1, 128), (16, 128), (64, 128), (128, 128), (256, 128), (512, 128), (1024, 128),
                           (1, 1024), (16, 1024), (64, 1024), (256, 1024), (1, 8192), (8, 8192), (32, 8192),
                           (1, 32768), (4, 32768), (8, 32768)]
            self.prefill = [(1, 128), (1, 512), (1, 2048), (1, 8192), (1, 16384), (4, 2048), (16, 512), (8, 4096)]
            self.prefill_repeats, self.prefill_warmup = 10, 3


def _timer(device: torch.device) -> Callable[[Callable[[], object], int, int], float]:
    """Median seconds of ``fn`` over ``repeats`` runs after ``warmup`` runs."""
    def run(fn: Callable[[], object], repeats: int, warmup: int) -> float:
        for _ in range(warmup):
            fn()
        times = []
        if device.type == "cuda":
            for _ in range(repeats):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end) / 1e3)
        else:
            for _ in range(repeats):
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
        return statistics.median(times)
    return run


def _graphed(fn: Callable[[], object], dev: torch.device) -> tuple[Callable[[], object], object]:
    """``fn`` captured in one CUDA graph on a GPU (its replay, without launch overhead), else ``fn`` itself."""
    if dev.type != "cuda":
        return fn, None
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay, graph


def _release(dev: torch.device) -> None:
    """Free one shape's tensors and graph pool before the next shape (the caller dropped its references)."""
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
        torch.cuda.empty_cache()


def shape_rate(rows: int, k: int, n: int, *, dev: torch.device, timed: Timer, repeats: int, warmup: int,
               cache_bytes: int, sm_count: int) -> dict:
    """The compute-bound rate of rows x k x n products (see the module docstring, ``shape_rates``)."""
    block = min(n, max(TILE, (cache_bytes // 4) // (2 * k) // TILE * TILE))
    tiles = math.ceil(rows / TILE) * math.ceil(block / TILE)
    group = max(1, math.ceil(TILES_PER_SM * max(sm_count, 1) / tiles))
    w = rand(k, block, device=dev).expand(group, k, block)  # one block, batch stride 0
    x = rand(group, rows, k, device=dev)
    copied = None
    if dev.type == "cuda":  # did the batched product copy the shared block?  (it would allocate group blocks)
        torch.cuda.synchronize(dev)
        before = torch.cuda.memory_allocated(dev)
        torch.cuda.reset_peak_memory_stats(dev)
        torch.bmm(x, w)
        torch.cuda.synchronize(dev)
        extra = torch.cuda.max_memory_allocated(dev) - before - group * rows * block * 2  # less the output
        copied = extra >= (group - 1) * k * block * 2 > 0
    t = timed(lambda x=x, w=w: torch.bmm(x, w), repeats, warmup)
    return {"rows": rows, "K": k, "N": n, "block_columns": block, "group": group, "seconds": t,
            "flops_per_s": 2 * group * rows * k * block / t, "weight_copied": copied}


def read_size(layout: str, rows: int, k: int, n: int, matrices: int, factor: float, *, dev: torch.device,
              timed: Timer, repeats: int, warmup: int) -> dict:
    """The time of a product of ``rows`` rows over a weight ``factor`` times a layer's own (``read_sizes`` in
    the module docstring): "dense" one k x (n·factor) weight, "experts" a stack of (matrices·factor) k x n
    weights in one batched product."""
    if layout == "dense":
        mats, columns = 1, max(TILE, round(n * factor / TILE) * TILE)
        w, x = rand(k, columns, device=dev), rand(rows, k, device=dev)
        t = timed(lambda x=x, w=w: x @ w, repeats, warmup)
    else:
        mats, columns = max(1, round(matrices * factor)), n
        w, x = rand(mats, k, n, device=dev), rand(mats, rows, k, device=dev)
        t = timed(lambda x=x, w=w: torch.bmm(x, w), repeats, warmup)
    return {"layout": layout, "rows": rows, "K": k, "N": n, "matrices": mats, "columns": columns,
            "weight_bytes": mats * k * columns * 2, "seconds": t}


def measure(*, device: str | None = None, tiny: bool = False, log: TextIO = sys.stderr,
            saved: Callable[[dict], object] | None = None) -> dict:
    """Run every measurement; return a result in the schema of ``derive.probe.analysis``.

    ``saved``, when given, receives the result so far after each section (ceilings, knees, shape rates,
    each decode shape, each prefill shape): a run cut short (a time limit, a lost machine) keeps what it
    measured.  Each partial result is itself a valid result; sections not yet run are absent."""
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    sz = _Sizes(tiny)
    timed = _timer(dev)
    torch.manual_seed(0)
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else f"cpu ({torch.get_num_threads()} threads)"
    out: dict = {"device": name, "torch": torch.__version__,
                 "sm_count": torch.cuda.get_device_properties(dev).multi_processor_count if dev.type == "cuda" else 0}

    began = time.perf_counter()

    def say(text: str) -> None:
        log.write(f"derive.probe: [{time.perf_counter() - began:6.1f} s] {text}\n")
        log.flush()

    def keep() -> None:
        if saved is not None:
            saved(dict(out))

    buf = rand(sz.read_bytes // 2, device=dev)
    dst = torch.empty_like(buf)
    t = timed(lambda src=buf, out=dst: out.copy_(src), sz.repeats, sz.warmup)
    out["copy_bytes_per_s"] = 2 * buf.numel() * 2 / t
    t = timed(lambda src=buf: src.sum(dtype=torch.float32), sz.repeats, sz.warmup)
    out["read_bytes_per_s"] = buf.numel() * 2 / t
    out["read_method"] = (f"float32-accumulated sum over {buf.numel() * 2 / 2**30:.3g} GiB of bf16 (bytes read over "
                          f"time), median of {sz.repeats} runs after {sz.warmup} warm-up")
    del buf, dst
    say(f"HBM read {out['read_bytes_per_s'] / 1e12:.3f} TB/s")

    n = sz.matmul_n
    a, b = rand(n, n, device=dev), rand(n, n, device=dev)
    t = timed(lambda a=a, b=b: a @ b, sz.repeats, sz.warmup)
    out["matmul_flops_per_s"] = 2 * n**3 / t
    out["matmul_method"] = (f"{n}x{n}x{n} bf16 matrix product on random data, median of {sz.repeats} runs after "
                            f"{sz.warmup} warm-up")
    del a, b
    say(f"matmul {out['matmul_flops_per_s'] / 1e12:.1f} TFLOP/s")
    keep()

    w = rand(sz.knee_k, sz.knee_n, device=dev)
    pts = []
    for bt in sz.knee_batches:
        x = rand(bt, sz.knee_k, device=dev)
        pts.append({"batch": bt, "seconds": timed(lambda x=x, w=w: x @ w, sz.repeats, sz.warmup)})
    out["dense_knee"] = {"K": sz.knee_k, "N": sz.knee_n, "weight_bytes": w.numel() * 2, "points": pts}
    del w
    say("dense knee done")
    keep()

    out["moe_knee"] = []
    for experts, top in sz.moe:
        we = rand(experts, sz.moe_d, sz.moe_f, device=dev)
        pts = []
        for bt in sz.moe_batches:
            per = math.ceil(bt * top / experts)
            x = rand(experts, per, sz.moe_d, device=dev)
            pts.append({"batch": bt, "tokens_per_expert": per,
                        "seconds": timed(lambda x=x, we=we: torch.bmm(x, we), sz.repeats, sz.warmup)})
        out["moe_knee"].append({"experts": experts, "top_k": top, "sparsity": experts / top, "K": sz.moe_d,
                                "N": sz.moe_f, "weight_bytes": we.numel() * 2, "points": pts})
        del we
    say("expert-layer knees done")
    keep()

    props = torch.cuda.get_device_properties(dev) if dev.type == "cuda" else None
    cache = int(getattr(props, "L2_cache_size", 0) or 0) or 2**20  # a CPU run (tiny): any size will do
    shapes = sorted({(int(p["batch"]), sz.knee_k, sz.knee_n) for p in out["dense_knee"]["points"]}
                    | {(int(p["tokens_per_expert"]), sz.moe_d, sz.moe_f) for e in out["moe_knee"] for p in e["points"]})
    out["shape_rates"] = []
    for rows, k, n in shapes:
        out["shape_rates"].append(shape_rate(rows, k, n, dev=dev, timed=timed, repeats=sz.repeats,
                                             warmup=sz.warmup, cache_bytes=cache, sm_count=out["sm_count"]))
        _release(dev)
    say(f"rates at {len(shapes)} product shapes done")
    keep()

    plateaus = sorted({("dense", int(p["batch"]), sz.knee_k, sz.knee_n, 1)
                       for p in sorted(out["dense_knee"]["points"], key=lambda p: p["batch"])[:KNEE_FLAT_POINTS]}
                      | {("experts", int(p["tokens_per_expert"]), sz.moe_d, sz.moe_f, int(e["experts"]))
                         for e in out["moe_knee"]
                         for p in sorted(e["points"], key=lambda p: p["batch"])[:KNEE_FLAT_POINTS]})
    out["read_sizes"] = []
    for layout, rows, k, n, matrices in plateaus:
        for factor in READ_SIZE_FACTORS:
            out["read_sizes"].append(read_size(layout, rows, k, n, matrices, factor, dev=dev, timed=timed,
                                               repeats=sz.repeats, warmup=sz.warmup))
            _release(dev)
    say(f"read times of {len(plateaus)} plateau shapes at {len(READ_SIZE_FACTORS)} weight sizes done")
    keep()

    m = sz.model
    params = params_read_per_step(m)
    out["decode_model"] = {**m, "params_read_per_step": params,
                           "params_total": params + m["d"] * m["vocab"], "params_layers": params_layers(m)}
    out["decode"], out["decode_sdpa"] = [], []
    for bt, ctx in sz.decode:
        decoder = Decoder(m, bt, ctx, dev)
        kv_bytes = 2 * m["layers"] * bt * m["kv_heads"] * ctx * m["head_dim"] * 2
        for key, step in (("decode", decoder.step), ("decode_sdpa", decoder.step_sdpa)):
            fn, graph = _graphed(step, dev)  # one CUDA graph per shape: the step without launch overhead
            t = timed(fn, sz.repeats, sz.warmup)
            out[key].append({"batch": bt, "context": ctx, "seconds": t, "kv_bytes": kv_bytes})
            say(f"{key} B={bt} L={ctx}: {t * 1e3:.3f} ms")
            del fn, graph
            _release(dev)
        del decoder, step
        _release(dev)  # free this shape's weights and KV cache before the next one
        keep()

    out["prefill"] = []
    out["prefill_method"] = (f"median of {sz.prefill_repeats} runs after {sz.prefill_warmup} warm-up, one CUDA "
                             "graph per shape on a GPU")
    for bt, tokens in sz.prefill:
        decoder = Decoder(m, bt, 0, dev, tokens=tokens)
        fn, graph = _graphed(decoder.prefill, dev)
        t = timed(fn, sz.prefill_repeats, sz.prefill_warmup)
        out["prefill"].append({"batch": bt, "tokens": tokens, "seconds": t})
        say(f"prefill B={bt} L={tokens}: {t * 1e3:.3f} ms")
        del decoder, fn, graph
        _release(dev)
        keep()
    return out
