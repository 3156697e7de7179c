"""Knees predicted from the matrix-product rate at the shapes that run (pure Python, no torch).

The lecture's knee of a weight-streaming layer is B* = R x S: the hardware ratio R = F·q/(2·W) times the
sparsity S = E/k, with F the rate of one large square product (the probe's 8192-cube rate).  A real expert
layer near its knee multiplies skinny per-expert products (a few hundred rows each), which run below that
rate, so the layer turns compute-bound at a smaller batch.  This module predicts the knee from the rates
measured at the shapes themselves (``shape_rates`` of a saved result; their method is in
``derive.probe.bench``): at a layer point of batch B, each of the E experts multiplies r = ceil(B·k/E)
rows (a dense layer: E = k = 1, r = B) by its K x N weight, so

    compute time   t_c(B) = 2·E·r·K·N / rate(r, K, N)
    weight time    t_w    = weight bytes / achieved read bandwidth

Two knees are predicted from them, neither reading the knee's own timings:

- the knee (``predict_knee_asymptotes``), defined as the measured one is (``derive.probe.analysis.knee``): the
  weight-read plateau over the compute slope. The slope is the median over the knee's ``KNEE_SLOPE_POINTS``
  largest batches of t_c(B)/B, at the ``layer_rates`` where a result has them (the products as a layer runs
  them, weights streamed from memory), else at the ``shape_rates``. The plateau comes from ``read_sizes``
  where a result has them (``plateau_from_read_sizes``): the product of each plateau row count timed over the
  layer's own series of weights of its K x N at other sizes (a quarter to four times its own, never its own),
  fitted as t = t_0 + bytes / W_r (a fixed start-up time and a streaming rate, least squares), read at the
  layer's weight; the median over the plateau's row counts. A small-row product pays t_0 (tens of
  microseconds) on every launch, so over a 470 MB weight it reads about a tenth slower than over 4 GiB, and
  the sum's bandwidth alone puts the plateau 7-20 % low. A result without ``read_sizes`` takes the plateau as
  the weight over the achieved read bandwidth (the lecture's W), and says so. This is the figure to hold
  against the measured knee.
- the batch where compute first reaches the weight read (``predict_knee``): the batch where t_c first
  reaches t_w, t_c taken as linear in B between the layer's measured batches.  It sits below the knee
  wherever the products near the knee run slower than the large ones (it is where the layer turns
  compute-bound, not where the asymptotes meet).

A saved result without a rate for some needed shape gets no prediction, with the reason (older results have
no ``shape_rates`` at all).

Schema read: ``shape_rates``, a list of {rows, K, N, block_columns, group, seconds, flops_per_s,
weight_copied} (the first entry of a shape wins); ``read_sizes``, a list of {layout ("dense" or "experts"), rows,
K, N, matrices, columns, weight_bytes, seconds}.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from derive.probe.analysis import KNEE_FLAT_POINTS, KNEE_SLOPE_POINTS

READ_SIZE_FACTORS = (0.25, 0.5, 0.75, 1.5, 2.0, 4.0)  # read_sizes: weights these multiples of a layer's own, never 1
NO_SHAPE_RATES = ("this result has no shape_rates (measured before the probe timed the products at the shapes "
                  "that run, or without that section): no per-shape prediction")


@dataclass(frozen=True)
class LayerShape:
    """A weight-streaming layer: ``experts`` weights of K x N, each token routed to ``top_k`` of them."""

    experts: int
    top_k: int
    k: int
    n: int
    weight_bytes: float

    def rows(self, batch: int) -> int:
        """Rows each expert multiplies at this batch (balanced routing)."""
        return math.ceil(batch * self.top_k / self.experts)

    @property
    def sparsity(self) -> float:
        return self.experts / self.top_k

    @property
    def layout(self) -> str:
        """How its products run: one dense product, or a batched product over the experts."""
        return "dense" if self.experts == 1 else "experts"


@dataclass(frozen=True)
class ShapePrediction:
    """The knee predicted from per-shape rates, or why there is none (``tokens`` None, ``reason`` set)."""

    tokens: float | None
    reason: str = ""
    weight_seconds: float = 0.0
    points: tuple[tuple[int, float], ...] = ()  # (batch, compute seconds at that batch's shape rate)
    seconds_per_token: float = 0.0  # predict_knee_asymptotes: the predicted compute slope (its plateau: weight_seconds)
    plateau_from: str = "read bandwidth"  # predict_knee_asymptotes: "read sizes" where read_sizes gave the plateau
    slope_from: str = "shape rates"  # predict_knee_asymptotes: "layer rates" where layer_rates gave the slope


def rate_table(shape_rates: Sequence[Mapping[str, object]]) -> dict[tuple[int, int, int], float]:
    """(rows, K, N) -> measured FLOP/s; the first entry of a shape wins."""
    table: dict[tuple[int, int, int], float] = {}
    for s in shape_rates:
        key = (int(s["rows"]), int(s["K"]), int(s["N"]))  # type: ignore[call-overload]
        table.setdefault(key, float(s["flops_per_s"]))  # type: ignore[arg-type]
    return table


def crossing(points: Sequence[tuple[float, float]], level: float) -> float | None:
    """The first x where the piecewise-linear curve through ``points`` (sorted by x) reaches ``level``;
    None when it stays below.  A curve already at or above ``level`` at its first point gives that point."""
    if not points:
        return None
    x0, y0 = points[0]
    if y0 >= level:
        return x0
    for x1, y1 in points[1:]:
        if y1 >= level:
            return min(x1, x0 + (level - y0) * (x1 - x0) / (y1 - y0))  # never past x1 by rounding
        x0, y0 = x1, y1
    return None


def compute_seconds(layer: LayerShape, batch: int, rates: Mapping[tuple[int, int, int], float]
                    ) -> tuple[float | None, str]:
    """The layer's multiplies at ``batch`` timed at the rate of their shape, t_c = 2·E·r·K·N / rate, or None and
    why there is none (no rate measured for the shape, or one not positive)."""
    r = layer.rows(batch)
    rate = rates.get((r, layer.k, layer.n))
    if rate is None:
        return None, (f"no rate measured for the shape {r} x {layer.k} x {layer.n} (batch {batch}): no per-shape "
                      "prediction")
    if rate <= 0:
        return None, f"the rate for the shape {r} x {layer.k} x {layer.n} is not positive"
    return 2 * layer.experts * r * layer.k * layer.n / rate, ""


def predict_knee(layer: LayerShape, batches: Sequence[int], rates: Mapping[tuple[int, int, int], float],
                 read_bytes_per_s: float) -> ShapePrediction:
    """The batch where the layer's compute time at its shapes' rates reaches its weight-read time."""
    t_w = layer.weight_bytes / read_bytes_per_s
    if not rates:
        return ShapePrediction(None, NO_SHAPE_RATES, t_w)
    pts = []
    for b in sorted(set(batches)):
        t_c, why = compute_seconds(layer, b, rates)
        if t_c is None:
            return ShapePrediction(None, why, t_w)
        pts.append((b, t_c))
    tokens = crossing(pts, t_w)
    if tokens is None:
        return ShapePrediction(None, f"compute stays below the weight read up to batch {pts[-1][0]}: the knee lies "
                                     "beyond the measured batches", t_w, tuple(pts))
    if tokens == pts[0][0] and pts[0][1] > t_w:
        return ShapePrediction(None, f"compute already exceeds the weight read at the smallest batch ({pts[0][0]}): "
                                     "the knee lies below the measured batches", t_w, tuple(pts))
    return ShapePrediction(tokens, "", t_w, tuple(pts))


def predict_knee_asymptotes(layer: LayerShape, batches: Sequence[int], rates: Mapping[tuple[int, int, int], float],
                            read_bytes_per_s: float, plateau_s: float | None = None) -> ShapePrediction:
    """The knee as the measured one is defined (plateau over slope): the plateau is ``plateau_s`` where given
    (``plateau_from_read_sizes``), else the weight bytes over the achieved read bandwidth (the lecture's W);
    the slope the median over the ``KNEE_SLOPE_POINTS`` largest batches of the compute time per token at
    those batches' shape rates."""
    bs = sorted(set(batches))
    if not rates:
        return ShapePrediction(None, NO_SHAPE_RATES)
    if len(bs) < KNEE_FLAT_POINTS + KNEE_SLOPE_POINTS:
        return ShapePrediction(None, f"a knee needs at least {KNEE_FLAT_POINTS + KNEE_SLOPE_POINTS} batches, "
                                     f"got {len(bs)}")
    pts = []
    for b in bs[-KNEE_SLOPE_POINTS:]:
        t_c, why = compute_seconds(layer, b, rates)
        if t_c is None:
            return ShapePrediction(None, why)
        pts.append((b, t_c))
    slope = statistics.median(t / b for b, t in pts)
    if plateau_s is None:
        plateau, source = layer.weight_bytes / read_bytes_per_s, "read bandwidth"
    else:
        plateau, source = plateau_s, "read sizes"
    return ShapePrediction(plateau / slope, "", plateau, tuple(pts), seconds_per_token=slope, plateau_from=source)


def read_fit(points: Sequence[tuple[float, float]]) -> tuple[float, float] | None:
    """Least-squares t = t_0 + bytes / W through (weight bytes, seconds) points: (t_0, W), or None where the
    points do not determine a positive rate (fewer than two sizes, or time not rising with size)."""
    if len({b for b, _ in points}) < 2:
        return None
    n = len(points)
    mx, my = sum(b for b, _ in points) / n, sum(t for _, t in points) / n
    sxx = sum((b - mx) ** 2 for b, _ in points)
    per_byte = sum((b - mx) * (t - my) for b, t in points) / sxx
    if per_byte <= 0:
        return None
    return my - per_byte * mx, 1 / per_byte


def read_size_table(read_sizes: Sequence[Mapping[str, object]]
                    ) -> dict[tuple[str, int, int, int], list[tuple[float, float]]]:
    """(layout, rows, K, N) -> [(weight bytes, seconds)] of the products timed at other weight sizes."""
    table: dict[tuple[str, int, int, int], list[tuple[float, float]]] = {}
    for s in read_sizes:
        key = (str(s["layout"]), int(s["rows"]), int(s["K"]), int(s["N"]))  # type: ignore[call-overload]
        table.setdefault(key, []).append((float(s["weight_bytes"]), float(s["seconds"])))  # type: ignore[arg-type]
    return table


def plateau_from_read_sizes(layer: LayerShape, batches: Sequence[int],
                            sizes: Mapping[tuple[str, int, int, int], Sequence[tuple[float, float]]]
                            ) -> float | None:
    """The plateau as the median over the ``KNEE_FLAT_POINTS`` smallest batches of t_0 + W / W_r, each row
    count's fit (``read_fit``) over the layer's own series of weights (``READ_SIZE_FACTORS`` times its weight W,
    within 2 %: another layer's series at the same row count runs other sizes) read at W; None where a row count
    has no fit.  The layer's own size is not in the series, so the knee's timings are never read."""
    times = []
    for b in sorted(set(batches))[:KNEE_FLAT_POINTS]:
        pts = [(w, t) for w, t in sizes.get((layer.layout, layer.rows(b), layer.k, layer.n), ())
               if any(math.isclose(w, f * layer.weight_bytes, rel_tol=0.02) for f in READ_SIZE_FACTORS)]
        fit = read_fit(pts)
        if fit is None:
            return None
        t0, rate = fit
        if t0 + layer.weight_bytes / rate <= 0:  # a fit that extrapolates to no time at all gives no plateau
            return None
        times.append(t0 + layer.weight_bytes / rate)
    return statistics.median(times) if times else None


@dataclass(frozen=True)
class LayerKnee:
    """One knee benchmark of a result: its ledger entry id, layer shape and per-shape prediction."""

    entry: str  # "dense-knee" or "moe-knee-e<E>-k<k>", as in the probe's ledger file
    layer: LayerShape | None  # None: the result does not give the layer's K and N
    batches: tuple[int, ...]
    prediction: ShapePrediction  # predict_knee: where compute first reaches the weight read
    asymptotes: ShapePrediction = ShapePrediction(None, NO_SHAPE_RATES)  # the knee, as measured knees are defined


def layer_knees(result: Mapping) -> list[LayerKnee]:
    """Every knee benchmark of ``result`` with its per-shape prediction (or the reason it has none)."""
    rates = rate_table(result.get("shape_rates") or [])
    slope_rates = rate_table(result.get("layer_rates") or [])
    sizes = read_size_table(result.get("read_sizes") or [])
    bandwidth = float(result["read_bytes_per_s"])
    out = []
    dense = result.get("dense_knee")
    if dense:
        k, n = int(dense["K"]), int(dense["N"])
        layer = LayerShape(1, 1, k, n, float(dense.get("weight_bytes", 2 * k * n)))
        out.append(_layer_knee("dense-knee", layer, dense["points"], rates, slope_rates, sizes, bandwidth))
    for moe in result.get("moe_knee", []):
        e, top = int(moe["experts"]), int(moe["top_k"])
        entry = f"moe-knee-e{e}-k{top}"
        if "K" not in moe or "N" not in moe:  # results before 2026-11-28 do not name the expert's shape
            reason = NO_SHAPE_RATES if not rates else "this expert-layer benchmark does not give its K and N"
            batches = tuple(sorted(int(p["batch"]) for p in moe["points"]))
            out.append(LayerKnee(entry, None, batches, ShapePrediction(None, reason)))
            continue
        layer = LayerShape(e, top, int(moe["K"]), int(moe["N"]), float(moe["weight_bytes"]))
        out.append(_layer_knee(entry, layer, moe["points"], rates, slope_rates, sizes, bandwidth))
    return out


def _layer_knee(entry: str, layer: LayerShape, points: Sequence[Mapping[str, object]],
                rates: Mapping[tuple[int, int, int], float], slope_rates: Mapping[tuple[int, int, int], float],
                sizes: Mapping[tuple[str, int, int, int], Sequence[tuple[float, float]]],
                bandwidth: float) -> LayerKnee:
    batches = tuple(sorted(int(p["batch"]) for p in points))  # type: ignore[call-overload]
    plateau = plateau_from_read_sizes(layer, batches, sizes)
    if slope_rates:  # the products as the layer runs them, where the result has them
        asymptotes = replace(predict_knee_asymptotes(layer, batches, slope_rates, bandwidth, plateau),
                             slope_from="layer rates")
    else:
        asymptotes = predict_knee_asymptotes(layer, batches, rates, bandwidth, plateau)
    return LayerKnee(entry, layer, batches, predict_knee(layer, batches, rates, bandwidth), asymptotes)
