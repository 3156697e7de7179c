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

  Every weight these products stream from memory (the knees', ``layer_rates``' and ``read_sizes``') is a
  view of one pool of device memory, timed at ``PLACEMENTS`` places spread over the pool; its time is the
  mean over the places (``seconds_by_placement`` keeps each).  One allocation's place moved a product's read
  time by up to 22 % on an H100 (the same 16-expert product read in 630-806 us in runs of 2026-11-27).
  Each layer's knee points and its ``read_sizes`` are timed in turn, place by place, so a drift of the
  chip's read rate during a run (10 % between two sections of one H200 run) moves both alike.
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
- ``layer_rates``: the rate of the products at the knees' ``KNEE_SLOPE_POINTS`` largest batches as a layer
  runs them: ``group`` distinct K x N weights of the full width, streamed from memory, in one batched
  product of rows x K x N each, ``group`` enough to give every SM 128 output tiles (so not the layer's own
  expert count, nor its own weight or timing).  The compute slope of the knee predicted from them is within
  7 % of the measured slope in ten runs; the cache-resident ``shape_rates`` put it up to 8 % fast at
  sparsity 16 and 7 % slow for the dense layer.
- ``read_sizes``: the weight-read time of the products at the knees' plateau shapes (the
  ``KNEE_FLAT_POINTS`` smallest batches of each knee: rows x K x N) over weights of other sizes than the
  layer's own: ``READ_SIZE_FACTORS`` times it, a quarter to four (the dense layer's K x N widened or narrowed in
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
numbers mean nothing).  ``sections`` picks the sections to run (``SECTIONS``; all by default).  The full
run took 60-66 s on one H100 or H200 (2026-11-27, five runs); the sections up to ``shape_rates`` take
40-46 s.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable, Collection
from typing import TextIO

import torch

from derive.probe.analysis import KNEE_FLAT_POINTS, KNEE_SLOPE_POINTS
from derive.probe.model import Decoder, params_layers, params_read_per_step, rand
from derive.probe.shapes import READ_SIZE_FACTORS

Timer = Callable[[Callable[[], object], int, int], float]
TILE = 128  # nominal output tile edge of a tensor-core product: sizes the group of shape_rates
TILES_PER_SM = 128
PLACEMENTS = 4  # places in the weight pool each streamed weight is timed at (see the module docstring)
POOL_ALIGN = 2**20  # elements between placements are rounded to this (2 MiB of bf16)
SECTIONS = ("ceilings", "knees", "shape_rates", "layer_rates", "read_sizes", "decode", "prefill")


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


class _Pool:
    """One buffer of random bf16 from which every streamed weight is taken as a view, at ``PLACEMENTS``
    offsets spread over the buffer (``views``): a weight's time is the mean over its placements."""

    def __init__(self, elements: int, dev: torch.device, align: int = POOL_ALIGN) -> None:
        self.align = align
        self.data = rand(math.ceil(elements / align) * align, device=dev)

    def views(self, *shape: int) -> list[torch.Tensor]:
        n = math.prod(shape)
        room = self.data.numel() - n
        if room < 0:
            raise ValueError(f"a weight of {n} elements does not fit the pool of {self.data.numel()}")
        starts = [room * i // max(PLACEMENTS - 1, 1) // self.align * self.align for i in range(PLACEMENTS)]
        return [self.data[s:s + n].view(*shape) for s in starts]  # where room is short, placements coincide


def _placed(fn: Callable[[torch.Tensor], object], weights: list[torch.Tensor], timed: Timer, repeats: int,
            warmup: int) -> tuple[float, list[float]]:
    """The mean over the weight's placements of the median time of ``fn(weight)``, and each placement's."""
    each = [timed(lambda w=w: fn(w), repeats, warmup) for w in weights]
    return statistics.fmean(each), each


def tile_group(rows: int, n: int, sm_count: int) -> int:
    """How many products of rows x K x n one timing of ``shape_rates`` or ``layer_rates`` runs: enough to
    give every SM ``TILES_PER_SM`` output tiles of ``TILE`` x ``TILE``."""
    tiles = math.ceil(rows / TILE) * math.ceil(n / TILE)
    return max(1, math.ceil(TILES_PER_SM * max(sm_count, 1) / tiles))


def streamed_product(layout: str, rows: int, k: int, n: int, matrices: int, *, pool: _Pool, dev: torch.device
                     ) -> tuple[Callable[[torch.Tensor], object], list[torch.Tensor]]:
    """A product whose weight streams from memory, and that weight's placements in the pool: "dense",
    X[rows, k] @ W[k, n]; "experts", one batched product of ``matrices`` X[rows, k] @ W[k, n]."""
    if layout == "dense":
        x = rand(rows, k, device=dev)
        return (lambda w, x=x: x @ w), pool.views(k, n)
    x = rand(matrices, rows, k, device=dev)
    return (lambda w, x=x: torch.bmm(x, w)), pool.views(matrices, k, n)


def layer_rate(rows: int, k: int, n: int, *, pool: _Pool, dev: torch.device, timed: Timer, repeats: int,
               warmup: int, sm_count: int) -> dict:
    """The rate of rows x k x n products as a layer runs them (``layer_rates`` in the module docstring)."""
    group = tile_group(rows, n, sm_count)
    group = max(1, min(group, pool.data.numel() // (k * n)))  # a group that does not fit the pool is cut
    fn, views = streamed_product("experts", rows, k, n, group, pool=pool, dev=dev)
    t, each = _placed(fn, views, timed, repeats, warmup)
    return {"rows": rows, "K": k, "N": n, "group": group, "seconds": t, "seconds_by_placement": each,
            "flops_per_s": 2 * group * rows * k * n / t}


def shape_rate(rows: int, k: int, n: int, *, dev: torch.device, timed: Timer, repeats: int, warmup: int,
               cache_bytes: int, sm_count: int) -> dict:
    """The compute-bound rate of rows x k x n products (see the module docstring, ``shape_rates``)."""
    block = min(n, max(TILE, (cache_bytes // 4) // (2 * k) // TILE * TILE))
    group = tile_group(rows, block, sm_count)
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


def read_size_job(layout: str, rows: int, k: int, n: int, matrices: int, factor: float, *, pool: _Pool,
                  dev: torch.device) -> tuple[dict, Callable[[torch.Tensor], object], list[torch.Tensor]]:
    """A product of ``rows`` rows over a weight ``factor`` times a layer's own (``read_sizes`` in the module
    docstring): its entry (without its time), the product, and the weight's placements in the pool.  "dense":
    one k x (n·factor) weight; "experts": a stack of (matrices·factor) k x n weights in one batched product."""
    if layout == "dense":
        mats, columns = 1, max(TILE, round(n * factor / TILE) * TILE)
    else:
        mats, columns = max(1, round(matrices * factor)), n
    fn, views = streamed_product(layout, rows, k, columns, mats, pool=pool, dev=dev)
    return ({"layout": layout, "rows": rows, "K": k, "N": n, "matrices": mats, "columns": columns,
             "weight_bytes": mats * k * columns * 2}, fn, views)


def measure(*, device: str | None = None, tiny: bool = False, log: TextIO = sys.stderr,
            saved: Callable[[dict], object] | None = None, sections: Collection[str] = SECTIONS) -> dict:
    """Run the measurements of ``sections`` (all of ``SECTIONS`` by default); return a result in the schema
    of ``derive.probe.analysis``.

    ``saved``, when given, receives the result so far after each section (ceilings, knees, shape rates,
    each decode shape, each prefill shape): a run cut short (a time limit, a lost machine) keeps what it
    measured.  Each partial result is itself a valid result; sections not yet run are absent."""
    wanted = set(sections)
    if wanted - set(SECTIONS):
        raise ValueError(f"unknown probe sections {sorted(wanted - set(SECTIONS))}: the sections are {SECTIONS}")
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

    if "ceilings" in wanted:
        buf = rand(sz.read_bytes // 2, device=dev)
        dst = torch.empty_like(buf)
        t = timed(lambda src=buf, out=dst: out.copy_(src), sz.repeats, sz.warmup)
        out["copy_bytes_per_s"] = 2 * buf.numel() * 2 / t
        t = timed(lambda src=buf: src.sum(dtype=torch.float32), sz.repeats, sz.warmup)
        out["read_bytes_per_s"] = buf.numel() * 2 / t
        out["read_method"] = (f"float32-accumulated sum over {buf.numel() * 2 / 2**30:.3g} GiB of bf16 (bytes read "
                              f"over time), median of {sz.repeats} runs after {sz.warmup} warm-up")
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

    # every streamed weight is a view of one pool, large enough for the largest read size with room to move
    largest = max(sz.knee_k * max(TILE, round(sz.knee_n * max(READ_SIZE_FACTORS) / TILE) * TILE),
                  max(max(1, round(e * max(READ_SIZE_FACTORS))) for e, _ in sz.moe) * sz.moe_d * sz.moe_f)
    pool = _Pool(math.ceil(1.25 * largest), dev, align=1024 if tiny else POOL_ALIGN) if wanted & {
        "knees", "layer_rates", "read_sizes"} else _Pool(0, dev)
    if pool.data.numel():
        say(f"weight pool {pool.data.numel() * 2 / 2**30:.3g} GiB, {PLACEMENTS} placements per weight")
    knees = ([(1, 1, sz.knee_k, sz.knee_n, sz.knee_batches)]
             + [(e, top, sz.moe_d, sz.moe_f, sz.moe_batches) for e, top in sz.moe])
    if wanted & {"knees", "read_sizes"}:
        # Each layer's knee points and the read times of its plateau products at other weight sizes are timed
        # in turn, placement by placement: a drift of the chip's read rate between two sections (10 % within
        # one H200 run, 2026-11-27) then moves both alike.
        if "knees" in wanted:
            out["moe_knee"] = []
        if "read_sizes" in wanted:
            out["read_sizes"] = []
        for e, top, k, n, batches in knees:
            layout = "dense" if e == 1 else "experts"
            jobs: list[tuple[dict, Callable[[torch.Tensor], object], list[torch.Tensor]]] = []
            points: list[dict] = []
            sizes: list[dict] = []
            if "knees" in wanted:
                for bt in batches:
                    per = math.ceil(bt * top / e)
                    point = {"batch": bt} if e == 1 else {"batch": bt, "tokens_per_expert": per}
                    points.append(point)  # every batch's product reads the one weight at the same placements
                    jobs.append((point, *streamed_product(layout, per, k, n, e, pool=pool, dev=dev)))
            if "read_sizes" in wanted:
                for rows in sorted({math.ceil(bt * top / e) for bt in sorted(batches)[:KNEE_FLAT_POINTS]}):
                    for factor in READ_SIZE_FACTORS:
                        entry, fn, views = read_size_job(layout, rows, k, n, e, factor, pool=pool, dev=dev)
                        sizes.append(entry)
                        jobs.append((entry, fn, views))
            for entry, _, _ in jobs:
                entry["seconds_by_placement"] = []
            for place in range(PLACEMENTS):
                for entry, fn, views in jobs:
                    entry["seconds_by_placement"].append(
                        timed(lambda fn=fn, w=views[place]: fn(w), sz.repeats, sz.warmup))
            for entry, _, _ in jobs:
                entry["seconds"] = statistics.fmean(entry["seconds_by_placement"])
            del jobs
            _release(dev)
            if "knees" in wanted:
                shape = {"K": k, "N": n, "placements": PLACEMENTS, "points": points}
                if e == 1:
                    out["dense_knee"] = {**shape, "weight_bytes": k * n * 2}
                else:
                    out["moe_knee"].append({"experts": e, "top_k": top, "sparsity": e / top, **shape,
                                            "weight_bytes": e * k * n * 2})
            if "read_sizes" in wanted:
                out["read_sizes"].extend(sizes)
            say(f"{'dense layer' if e == 1 else f'expert layer E={e}, k={top}'}: knee points and read sizes done")
            keep()

    if "layer_rates" in wanted:
        slope_shapes = sorted({(math.ceil(b * top / e), k, n) for e, top, k, n, batches in knees
                               for b in sorted(batches)[-KNEE_SLOPE_POINTS:]})
        out["layer_rates"] = []
        for rows, k, n in slope_shapes:
            out["layer_rates"].append(layer_rate(rows, k, n, pool=pool, dev=dev, timed=timed, repeats=sz.repeats,
                                                 warmup=sz.warmup, sm_count=out["sm_count"]))
            _release(dev)
        say(f"layer rates at {len(slope_shapes)} product shapes done")
        keep()

    del pool  # free the pool before the sections that allocate their own
    _release(dev)

    if "shape_rates" in wanted:
        props = torch.cuda.get_device_properties(dev) if dev.type == "cuda" else None
        cache = int(getattr(props, "L2_cache_size", 0) or 0) or 2**20  # a CPU run (tiny): any size will do
        shapes = sorted({(math.ceil(b * top / e), k, n) for e, top, k, n, batches in knees for b in batches})
        out["shape_rates"] = []
        for rows, k, n in shapes:
            out["shape_rates"].append(shape_rate(rows, k, n, dev=dev, timed=timed, repeats=sz.repeats,
                                                 warmup=sz.warmup, cache_bytes=cache, sm_count=out["sm_count"]))
            _release(dev)
        say(f"rates at {len(shapes)} product shapes done")
        keep()

    m = sz.model
    params = params_read_per_step(m)
    if "decode" in wanted or "prefill" in wanted:
        out["decode_model"] = {**m, "params_read_per_step": params,
                               "params_total": params + m["d"] * m["vocab"], "params_layers": params_layers(m)}
    if "decode" in wanted:
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

    if "prefill" in wanted:
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
