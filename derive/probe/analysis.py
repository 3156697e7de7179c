"""What the probe's raw timings mean, and the files it writes.  Pure Python: no torch here, so that the
analysis and the file formats are tested everywhere.

A probe result is a mapping in the schema of ``shared/measurements/h100-sxm-2026-11-23.json`` (all SI):
``read_bytes_per_s``, ``matmul_flops_per_s``, ``copy_bytes_per_s``, ``dense_knee`` {K, N, weight_bytes,
points: [{batch, seconds}]}, ``moe_knee`` [{experts, top_k, sparsity, weight_bytes, points: [{batch,
tokens_per_expert, seconds}]}], ``decode_model`` {layers, d, heads, kv_heads, head_dim, ffn, vocab,
params_read_per_step, params_total} and ``decode`` [{batch, context, seconds, kv_bytes}].  Results from
2026-11-28 on add three sections, and ``K`` and ``N`` (one expert's weight) to each ``moe_knee`` entry
(older files lack them and analyse as before; ``derive.probe.bench`` says how each is measured):

- ``shape_rates`` [{rows, K, N, block_columns, group, seconds, flops_per_s, weight_copied}]: the
  compute-bound matrix-product rate at each shape the knees run (rows x K x N: B x 8192 x 28672 for each
  dense-knee batch, ceil(B·k/E) x 4096 x 14336 for each expert-layer point); ``derive.probe.shapes``
  predicts the knees from them.
- ``stream_rates`` [{layout, rows, K, N, matrices, columns, weight_bytes, seconds, bytes_per_s}] (runs from
  2026-11-27 on): the weight-read rate of the knees' plateau row counts over a weight of the read buffer's
  size; no longer read (docs/measured.md gives what they showed).  Some runs of that day also carry
  ``matvec_bytes_per_s`` and ``size_read_rates``, diagnostics of an earlier probe that nothing reads
  (docs/measured.md gives what they showed).
- ``read_sizes`` [{layout, rows, K, N, matrices, columns, weight_bytes, seconds}] (runs from 2026-11-28 on,
  in place of ``stream_rates``): the time of the knees' plateau products over weights of other sizes than
  the layer's own; ``derive.probe.shapes`` takes the knee's plateau from them.
- ``layer_rates`` [{rows, K, N, group, seconds, seconds_by_placement, flops_per_s}] (runs from 2026-11-27,
  late, on): the rate of the products at the knees' largest batches as a layer runs them (distinct weights
  of the full K x N from memory); ``derive.probe.shapes`` takes the knee's compute slope from them.  The same
  runs time every streamed weight at several places in memory: knees gain ``placements`` and their points,
  like ``read_sizes``, ``seconds_by_placement`` (``seconds`` is the mean).
- ``decode_sdpa`` [{batch, context, seconds, kv_bytes}]: the decode steps of ``decode`` with fused
  attention (``torch.nn.functional.scaled_dot_product_attention``).  Ledger entries
  ``decode-sdpa-b<B>-l<L>``, held to the same floor as ``decode`` (``gap.roofline_floor_below_measured``):
  a step's time is each sequence's time per output token (TPOT).
- ``prefill`` [{batch, tokens, seconds}] and ``prefill_method``: one forward pass over B prompts of L
  tokens (causal fused attention, LM head on the last token): the time to first token (TTFT).
  ``decode_model`` gains ``params_layers``, the layers' weights every prompt token multiplies (the
  head and the embedding table left out, so the floor stays below).  Ledger entries ``prefill-b<B>-l<L>``
  in their own file (``<hardware>-<name>-prefill.toml``), held as at least ``prefill.ttft_floor`` of the
  serving library (causal attention FLOPs included), so ``derive ledger --library serving`` reads it.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

KNEE_FLAT_POINTS = 4  # smallest batches whose median time is the weight-read plateau
KNEE_SLOPE_POINTS = 3  # largest batches whose median time per token is the compute slope
MATMUL_METHOD = "square bf16 matrix product on random data, CUDA-event timing, median of repeated runs after warm-up"
READ_METHOD = ("float32-accumulated sum over a bf16 buffer far larger than the caches, bytes read over time, median "
               "of repeated runs")
KNEE_METHOD = (f"intersection of the two asymptotes of time against tokens: the median time of the "
               f"{KNEE_FLAT_POINTS} smallest batches (weight-read plateau) over the median time per token of the "
               f"{KNEE_SLOPE_POINTS} largest (compute slope)")


class ProbeDataError(ValueError):
    """A probe result that lacks what the analysis needs (raised with the field it lacks)."""


@dataclass(frozen=True)
class Knee:
    tokens: float  # where the plateau meets the compute line
    plateau_s: float
    seconds_per_token: float


def knee(points: Sequence[Mapping[str, float]]) -> Knee:
    """The knee of a time-against-tokens curve: flat while weight reads dominate, linear once compute does."""
    pts = sorted((float(p["batch"]), float(p["seconds"])) for p in points)
    if len(pts) < KNEE_FLAT_POINTS + KNEE_SLOPE_POINTS:
        raise ProbeDataError(f"a knee needs at least {KNEE_FLAT_POINTS + KNEE_SLOPE_POINTS} points, got {len(pts)}")
    plateau = statistics.median(t for _, t in pts[:KNEE_FLAT_POINTS])
    slope = statistics.median(t / b for b, t in pts[-KNEE_SLOPE_POINTS:])
    if slope <= 0:
        raise ProbeDataError("the largest batches took no time")
    return Knee(plateau / slope, plateau, slope)


def _num(x: float, digits: int = 6) -> str:
    """A float as exact decimal text with ``digits`` significant figures (TOML-safe, no exponent games)."""
    return f"{x:.{digits}g}"


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def kv_bytes_per_token(model: Mapping[str, int], bytes_per_element: int = 2) -> int:
    """K and V of every layer: 2 x layers x KV heads x head size x bytes per element."""
    return 2 * int(model["layers"]) * int(model["kv_heads"]) * int(model["head_dim"]) * bytes_per_element


def measurement_toml(result: Mapping, *, hardware: str, date: str, source: str) -> str:
    """A measurement file (``measurements/<hardware>/<name>.toml``) of the probe's achieved ceilings."""
    for key in ("matmul_flops_per_s", "read_bytes_per_s"):
        if key not in result:
            raise ProbeDataError(f"probe result has no '{key}'")
    device = result.get("device", "unknown device")
    return "\n".join([
        'kind = "measurement"', f"hardware = {_q(hardware)}", f"title = {_q(f'{device} measured by derive.probe')}",
        f"source = {_q(source)}", f"date = {_q(date)}", f"device = {_q(str(device))}", "",
        "[values.flops]", f'value = "{float(result["matmul_flops_per_s"])!r} FLOP/s"',
        f"method = {_q(result.get('matmul_method', MATMUL_METHOD))}",
        "", "[values.hbm_bandwidth]", f'value = "{float(result["read_bytes_per_s"])!r} byte/s"',
        f"method = {_q(result.get('read_method', READ_METHOD))}",
        "",
    ])


def ledger_toml(result: Mapping, *, hardware: str, date: str, source: str) -> str:
    """A ledger file of the probe's matmul knees and decode steps, each with the scenario it ran under."""
    title = f"{result.get('device', hardware)}: knees and decode steps (derive.probe)"
    lines = [f"title = {_q(title)}",
             f"source = {_q(source)}", f"as_of = {_q(date)}", f"hardware = {_q(hardware)}", 'set = ["chips=1"]']
    if result.get("torch"):  # the scope: plain PyTorch timing whole decode steps; each knee times one kernel
        lines += ['software = "PyTorch"', f"version = {_q(str(result['torch']))}", 'level = "framework"']
    lines += [""]
    lines += ['[figure."knee vs sparsity"]', 'x = "experts_total/experts_active"', ""]
    dense = result.get("dense_knee")
    if dense:
        k = knee(dense["points"])
        kk, nn = dense["K"], dense["N"]
        lines += ["[[entry]]", 'id = "dense-knee"', f"title = {_q(f'knee of X[B, {kk}] @ W[{kk}, {nn}]')}",
                  'check = "gap.knee_tokens"', 'level = "kernel"', f'value = "{_num(k.tokens)} token"',
                  'set = ["experts_total=1", "experts_active=1"]', 'series = "knee vs sparsity"',
                  f"method = {_q(KNEE_METHOD)}", ""]
    for moe in result.get("moe_knee", []):
        e, top = int(moe["experts"]), int(moe["top_k"])
        k = knee(moe["points"])
        lines += ["[[entry]]", f'id = "moe-knee-e{e}-k{top}"',
                  f"title = {_q(f'knee of {e} experts, top-{top}, balanced (S = {e / top:g})')}",
                  'check = "gap.knee_tokens"', 'level = "kernel"', f'value = "{_num(k.tokens)} token"',
                  f'set = ["experts_total={e}", "experts_active={top}"]', 'series = "knee vs sparsity"',
                  f"method = {_q(KNEE_METHOD)}", ""]
    model = result.get("decode_model")
    if result.get("decode"):
        if not model:
            raise ProbeDataError("probe result has decode steps but no 'decode_model'")
        contexts = sorted({int(p["context"]) for p in result["decode"]})
        batches = sorted({int(p["batch"]) for p in result["decode"]})
        by_batch_l = contexts[0]
        by_context_b = batches[0]
        lines += [f'[figure."step time vs batch, L = {by_batch_l}"]', 'x = "batch"', "",
                  f'[figure."step time vs context, B = {by_context_b}"]', 'x = "context"', ""]
        shape = _shape(model)
        method = (f"whole decode step of a {shape} model (plain PyTorch, one CUDA graph), bf16 weights and KV "
                  "cache; params_total counts the weights read per step (embedding table excluded)")
        for p in sorted(result["decode"], key=lambda p: (int(p["context"]), int(p["batch"]))):
            b, ctx = int(p["batch"]), int(p["context"])
            series = [s for s, cond in ((f"step time vs batch, L = {by_batch_l}", ctx == by_batch_l),
                                        (f"step time vs context, B = {by_context_b}", b == by_context_b)) if cond]
            lines += ["[[entry]]", f'id = "decode-b{b}-l{ctx}"', f"title = {_q(f'decode step, B = {b}, L = {ctx}')}",
                      'check = "gap.roofline_floor_below_measured"', f'value = "{_num(float(p["seconds"]))} s"',
                      f'set = [{_model_sets(model)}, "batch={b} seq", "context={ctx} token/seq"]',
                      "series = [" + ", ".join(_q(s) for s in series) + "]",
                      f"method = {_q(method)}", ""]
    lines += _sdpa_entries(result)
    return "\n".join(lines)


def _model_sets(model: Mapping) -> str:
    """The decode scenario's weights and KV bytes per token, as ``--set`` texts."""
    n = int(model["params_read_per_step"])
    return (f'"params_total={n} param", "params_active={n} param", '
            f'"kv_bytes_per_token={kv_bytes_per_token(model)} byte/token"')


def _sdpa_entries(result: Mapping) -> list[str]:
    """Ledger entries of the fused-attention decode steps (none for a result without ``decode_sdpa``)."""
    if not result.get("decode_sdpa"):
        return []
    model = result.get("decode_model")
    if not model:
        raise ProbeDataError("probe result has fused decode steps but no 'decode_model'")
    method = (f"whole decode step of the {_shape(model)} model with fused attention "
              "(torch.nn.functional.scaled_dot_product_attention over the KV cache), otherwise as decode-b*")
    lines: list[str] = []
    for p in sorted(result["decode_sdpa"], key=lambda p: (int(p["context"]), int(p["batch"]))):
        b, ctx = int(p["batch"]), int(p["context"])
        lines += ["[[entry]]", f'id = "decode-sdpa-b{b}-l{ctx}"',
                  f"title = {_q(f'decode step, fused attention, B = {b}, L = {ctx}')}",
                  'check = "gap.roofline_floor_below_measured"', f'value = "{_num(float(p["seconds"]))} s"',
                  f'set = [{_model_sets(model)}, "batch={b} seq", "context={ctx} token/seq"]',
                  f"method = {_q(method)}", ""]
    return lines


def _shape(model: Mapping) -> str:
    return (f"{model['layers']} layers, d {model.get('d')}, {model.get('heads')} query heads, "
            f"{model['kv_heads']} KV heads of {model['head_dim']}, FFN {model.get('ffn')}, vocab {model.get('vocab')}")


PREFILL_CHECK = "prefill.ttft_floor"  # the serving library's TTFT floor (causal attention FLOPs included)


def prefill_ledger_toml(result: Mapping, *, hardware: str, date: str, source: str) -> str | None:
    """A ledger file of the prefill passes (time to first token), each held as at least the TTFT floor;
    None for a result without ``prefill``."""
    if not result.get("prefill"):
        return None
    model = result.get("decode_model")
    if not model or "params_layers" not in model or "heads" not in model:
        raise ProbeDataError("probe result has prefill passes but no 'decode_model' with 'params_layers' and "
                             "'heads'")
    n = int(model["params_layers"])
    title = f"{result.get('device', hardware)}: time to first token (derive.probe)"
    lines = [f"title = {_q(title)}", f"source = {_q(source)}", f"as_of = {_q(date)}", f"hardware = {_q(hardware)}",
             f"check = {_q(PREFILL_CHECK)}", 'relation = ">="',
             # the head (run on each last token) is left out of the count, so none is taken off it
             f'set = ["chips=1", "params_total={n} param", "params_active={n} param", "params_output_head=0 param", '
             f'"kv_bytes_per_token={kv_bytes_per_token(model)} byte/token", '
             f'"global_attention_layers={int(model["layers"])}", "query_heads={int(model["heads"])}", '
             f'"head_dim={int(model["head_dim"])}"]', ""]
    method = (f"one forward pass of the {_shape(model)} model over B prompts of L tokens from an empty cache, "
              "causal fused attention (scaled_dot_product_attention), LM head on each last token; "
              f"{result.get('prefill_method', 'median of repeated runs after warm-up')}; params_total counts the "
              "layers' weights only (every prompt token multiplies them)")
    for p in sorted(result["prefill"], key=lambda p: (int(p["tokens"]), int(p["batch"]))):
        b, ell = int(p["batch"]), int(p["tokens"])
        lines += ["[[entry]]", f'id = "prefill-b{b}-l{ell}"', f"title = {_q(f'prefill (TTFT), B = {b}, L = {ell}')}",
                  f'value = "{_num(float(p["seconds"]))} s"',
                  f'set = ["batch={b} seq", "prefill_tokens={ell} token/seq"]', f"method = {_q(method)}", ""]
    return "\n".join(lines)


def save_result(result: Mapping, path: Path) -> None:
    """Write a probe result as JSON; the file is replaced whole (a reader never sees half of one)."""
    tmp = path.with_name(path.name + ".partial")
    tmp.write_text(json.dumps(result, indent=1) + "\n")
    tmp.replace(path)


def output_paths(out: Path, hardware: str, name: str) -> dict[str, Path]:
    """Where ``write_files`` puts the measurement, ledger and prefill ledger files."""
    return {"measurement": out / "measurements" / hardware / f"{name}.toml",
            "ledger": out / "ledger" / f"{hardware}-{name}.toml",
            "prefill": out / "ledger" / f"{hardware}-{name}-prefill.toml"}


def write_files(result: Mapping, *, hardware: str, date: str, source: str, out: Path,
                name: str | None = None) -> list[Path]:
    """Write ``out/measurements/<hardware>/<name>.toml``, ``out/ledger/<hardware>-<name>.toml`` and, with
    prefill passes, ``out/ledger/<hardware>-<name>-prefill.toml``.  Every text is made before any file is
    written, so bad data writes nothing."""
    paths = output_paths(out, hardware, name or f"probe-{date}")
    texts = {"measurement": measurement_toml(result, hardware=hardware, date=date, source=source),
             "ledger": ledger_toml(result, hardware=hardware, date=date, source=source),
             "prefill": prefill_ledger_toml(result, hardware=hardware, date=date, source=source)}
    if "[[entry]]" not in (texts["ledger"] or ""):  # only ceilings measured: no knee or decode ledger file
        texts["ledger"] = None
    written = []
    for key, text in texts.items():
        if text is not None:
            paths[key].parent.mkdir(parents=True, exist_ok=True)
            paths[key].write_text(text)
            written.append(paths[key])
    return written
