"""The measurements themselves (needs torch, the optional ``probe`` extra).

Method (``shared/measurements/README.md``): random bf16 data, CUDA-event timing (wall clock with a
synchronize on other devices), the median of repeated runs after warm-up.

- HBM read: a float32-accumulated sum over a large bf16 buffer, bytes read over time.
- Copy: a device-to-device copy, bytes read plus written over time.
- Dense FLOP/s: a square bf16 matrix product.
- Dense knee: X[B, K] @ W[K, N] for a range of B, with W far larger than the last-level cache.
- MoE knees: E experts of d x f, top-k routing with perfectly balanced load (each expert gets
  ceil(B·k/E) tokens), one batched product over all experts, against B.
- Decode: whole decode steps of a Llama-3-8B-shaped model (32 layers, d 4096, 32 query heads, 8 KV heads
  of 128, FFN 14336, vocab 128256) with random weights in plain PyTorch (unfused RMSNorm, attention as
  two batched products and a float32 softmax), captured in one CUDA graph on a GPU: step time against
  batch B and context L (the KV cache holds L tokens per sequence, bf16).

``tiny=True`` shrinks every size so that the whole probe runs on a CPU in seconds (a smoke test: the
numbers mean nothing).  The full run stays under five minutes on one H100.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable
from typing import TextIO

import torch


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


def _rand(*shape: int, device: torch.device) -> torch.Tensor:
    return torch.randn(*shape, device=device, dtype=torch.bfloat16)


class _Decoder:
    """A Llama-shaped decoder with random weights, written as plain PyTorch."""

    def __init__(self, m: dict, batch: int, context: int, device: torch.device) -> None:
        d, h, kv, hd, f, v = m["d"], m["heads"], m["kv_heads"], m["head_dim"], m["ffn"], m["vocab"]
        self.m, self.batch, self.context = m, batch, context
        self.layers = [dict(wq=_rand(d, h * hd, device=device), wk=_rand(d, kv * hd, device=device),
                            wv=_rand(d, kv * hd, device=device), wo=_rand(h * hd, d, device=device),
                            w1=_rand(d, f, device=device), w3=_rand(d, f, device=device),
                            w2=_rand(f, d, device=device), n1=torch.ones(d, device=device, dtype=torch.bfloat16),
                            n2=torch.ones(d, device=device, dtype=torch.bfloat16),
                            k=_rand(batch, kv, context, hd, device=device),
                            v=_rand(batch, kv, context, hd, device=device)) for _ in range(m["layers"])]
        self.head = _rand(d, v, device=device)
        self.x = _rand(batch, d, device=device)

    @staticmethod
    def _norm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * w

    def step(self) -> torch.Tensor:
        m, b = self.m, self.batch
        h, kv, hd = m["heads"], m["kv_heads"], m["head_dim"]
        x = self.x
        for layer in self.layers:
            y = self._norm(x, layer["n1"])
            q = (y @ layer["wq"]).view(b, kv, h // kv, hd)  # query heads grouped by their KV head
            scores = torch.matmul(q, layer["k"].transpose(-1, -2)) / math.sqrt(hd)  # [b, kv, h/kv, L]
            p = torch.softmax(scores.float(), dim=-1).to(x.dtype)
            att = torch.matmul(p, layer["v"]).reshape(b, h * hd)
            _ = y @ layer["wk"], y @ layer["wv"]  # the new token's K and V (read the weights like a real step)
            x = x + att @ layer["wo"]
            y = self._norm(x, layer["n2"])
            x = x + (torch.nn.functional.silu(y @ layer["w1"]) * (y @ layer["w3"])) @ layer["w2"]
        return x @ self.head



def params_read_per_step(m: dict) -> int:
    """Weights a decode step reads: every layer's projections and norms, and the LM head (not the
    embedding table, of which a step reads one row per sequence)."""
    d, h, kv, hd, f = m["d"], m["heads"], m["kv_heads"], m["head_dim"], m["ffn"]
    per_layer = d * h * hd + 2 * d * kv * hd + h * hd * d + 3 * d * f + 2 * d
    return m["layers"] * per_layer + d * m["vocab"]


def measure(*, device: str | None = None, tiny: bool = False, log: TextIO = sys.stderr) -> dict:
    """Run every measurement; return a result in the schema of ``derive.probe.analysis``."""
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    sz = _Sizes(tiny)
    timed = _timer(dev)
    torch.manual_seed(0)
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else f"cpu ({torch.get_num_threads()} threads)"
    out: dict = {"device": name, "torch": torch.__version__,
                 "sm_count": torch.cuda.get_device_properties(dev).multi_processor_count if dev.type == "cuda" else 0}

    def say(text: str) -> None:
        log.write(f"derive.probe: {text}\n")
        log.flush()

    buf = _rand(sz.read_bytes // 2, device=dev)
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
    a, b = _rand(n, n, device=dev), _rand(n, n, device=dev)
    t = timed(lambda a=a, b=b: a @ b, sz.repeats, sz.warmup)
    out["matmul_flops_per_s"] = 2 * n**3 / t
    out["matmul_method"] = (f"{n}x{n}x{n} bf16 matrix product on random data, median of {sz.repeats} runs after "
                            f"{sz.warmup} warm-up")
    del a, b
    say(f"matmul {out['matmul_flops_per_s'] / 1e12:.1f} TFLOP/s")

    w = _rand(sz.knee_k, sz.knee_n, device=dev)
    pts = []
    for bt in sz.knee_batches:
        x = _rand(bt, sz.knee_k, device=dev)
        pts.append({"batch": bt, "seconds": timed(lambda x=x, w=w: x @ w, sz.repeats, sz.warmup)})
    out["dense_knee"] = {"K": sz.knee_k, "N": sz.knee_n, "weight_bytes": w.numel() * 2, "points": pts}
    del w
    say("dense knee done")

    out["moe_knee"] = []
    for experts, top in sz.moe:
        we = _rand(experts, sz.moe_d, sz.moe_f, device=dev)
        pts = []
        for bt in sz.moe_batches:
            per = math.ceil(bt * top / experts)
            x = _rand(experts, per, sz.moe_d, device=dev)
            pts.append({"batch": bt, "tokens_per_expert": per,
                        "seconds": timed(lambda x=x, we=we: torch.bmm(x, we), sz.repeats, sz.warmup)})
        out["moe_knee"].append({"experts": experts, "top_k": top, "sparsity": experts / top,
                                "weight_bytes": we.numel() * 2, "points": pts})
        del we
    say("expert-layer knees done")

    m = sz.model
    out["decode"] = []
    for bt, ctx in sz.decode:
        decoder = _Decoder(m, bt, ctx, dev)
        fn: Callable[[], object] = decoder.step
        if dev.type == "cuda":  # one CUDA graph per shape: the step without launch overhead
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                decoder.step()
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                decoder.step()
            fn = graph.replay
        t = timed(fn, sz.repeats, sz.warmup)
        kv_bytes = 2 * m["layers"] * bt * m["kv_heads"] * ctx * m["head_dim"] * 2
        out["decode"].append({"batch": bt, "context": ctx, "seconds": t, "kv_bytes": kv_bytes})
        say(f"decode B={bt} L={ctx}: {t * 1e3:.3f} ms")
        del decoder, fn
        if dev.type == "cuda":  # free this shape's weights, KV cache and graph pool before the next one
            del graph
            torch.cuda.synchronize(dev)
            torch.cuda.empty_cache()
    params = params_read_per_step(m)
    out["decode_model"] = {**m, "params_read_per_step": params,
                           "params_total": params + m["d"] * m["vocab"]}
    return out
