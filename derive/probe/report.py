"""The text ``python -m derive.probe`` prints: ceilings, knees, and time per output token and to first token
against their floors.  Pure formatting of results computed elsewhere (``derive.probe.analysis``,
``derive.probe.shapes``, ``derive.probe.floors``); it returns lines and prints nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from derive.model.display import format_value
from derive.probe.analysis import knee
from derive.probe.shapes import layer_knees
from derive.whatif.ledger import LedgerRow

FLOOR_BUG = ("a floor sits above a measurement: a bug in the floor or in the measurement's scenario, to be "
             "reported, not a result")


def _ratio(x: object) -> str:
    return "-" if x is None else f"{float(x):.2f}x"  # type: ignore[arg-type]


def _pct(value: float, measured: float) -> str:
    return f"{100 * (value / measured - 1):+.1f} %"


def ceilings_lines(result: Mapping) -> list[str]:
    ratio = result["matmul_flops_per_s"] / result["read_bytes_per_s"]
    return [f"device: {result.get('device')}",
            f"  achieved dense FLOP/s   {format_value(result['matmul_flops_per_s'], 'FLOP/s')}",
            f"  achieved HBM read       {format_value(result['read_bytes_per_s'], 'byte/s')}",
            f"  achieved F/W            {format_value(ratio, 'FLOP/byte')}"]


def knee_lines(result: Mapping, rows: Mapping[str, LedgerRow]) -> list[str]:
    """Each knee: measured; the lecture's R x S at the 8192-cube rate (the ledger's gap.knee_tokens at the
    achieved ceilings); the prediction from the rates at the shapes that run, or why there is none."""
    out = []
    for lk in layer_knees(result):
        points = result["dense_knee"]["points"] if lk.entry == "dense-knee" else next(
            m["points"] for m in result["moe_knee"] if f"moe-knee-e{m['experts']}-k{m['top_k']}" == lk.entry)
        measured = knee(points).tokens
        label = "dense knee" if lk.entry == "dense-knee" else lk.entry.replace("moe-knee-", "knee ")
        out.append(f"  {label:<22}  {format_value(measured, 'token')} measured")
        row = rows.get(lk.entry)
        lecture = None if row is None else row.bound_achieved
        if lecture is not None:
            out.append(f"      lecture R x S at the 8192-cube rate  {format_value(float(lecture), 'token')} "
                       f"({_pct(float(lecture), measured)})")
        a = lk.asymptotes
        if a.tokens is None:
            out.append(f"      from the rates at its shapes          none: {a.reason}")
        else:
            k = knee(points)
            out.append(f"      from the rates at its shapes          {format_value(a.tokens, 'token')} "
                       f"({_pct(a.tokens, measured)}): compute slope {_pct(a.seconds_per_token, k.seconds_per_token)} "
                       f"(from the {a.slope_from}), plateau {_pct(a.weight_seconds, k.plateau_s)} (from the "
                       f"{a.plateau_from})")
        p = lk.prediction
        if a.tokens is None:  # one reason is enough where neither prediction has the rates it needs
            continue
        if p.tokens is None:
            out.append(f"      compute reaches the weight read at    none: {p.reason}")
        else:
            out.append(f"      compute reaches the weight read at    {format_value(p.tokens, 'token')} "
                       "(where the layer turns compute-bound)")
    return out


def floor_lines(rows: Sequence[LedgerRow]) -> list[str]:
    """Decode steps (TPOT, unfused and fused attention) and prefill passes (TTFT) against their floors."""
    out = []
    titles = (("decode-sdpa-", "TPOT, fused attention (decode_sdpa)"), ("decode-", "TPOT, unfused attention (decode)"),
              ("prefill-", "TTFT, prefill pass (prefill)"))
    for prefix, title in titles:
        picked = [r for r in rows if _local(r).startswith(prefix)
                  and not (prefix == "decode-" and _local(r).startswith("decode-sdpa-"))]
        if not picked:
            continue
        out.append(f"  {title}: measured, floor at peaks (ratio), at achieved ceilings (ratio)")
        for r in picked:
            shown = _local(r).removeprefix(prefix)
            achieved = "-" if r.bound_achieved is None else format_value(r.bound_achieved, r.unit)
            flag = "   <- CONTRADICTION" if r.status == "contradiction" else ""
            measured, bound = format_value(r.entry.value, r.unit), format_value(r.bound, r.unit)
            out.append(f"    {shown:<14} {measured:>10}   {bound:>10} ({_ratio(r.ratio)})   {achieved:>10} "
                       f"({_ratio(r.ratio_achieved)}){flag}")
    return out


def contradiction_lines(rows: Sequence[LedgerRow]) -> list[str]:
    return [f"contradiction: {_local(r)} measured {format_value(r.entry.value, r.unit)} is below its floor "
            f"{format_value(r.bound, r.unit)} ({r.entry.check}): {FLOOR_BUG}"
            for r in rows if r.status == "contradiction"]


def _local(row: LedgerRow) -> str:
    return row.entry.id.rpartition("/")[2]


def report(result: Mapping, rows: Sequence[LedgerRow]) -> list[str]:
    by_id = {_local(r): r for r in rows}
    return [*ceilings_lines(result), *knee_lines(result, by_id), *floor_lines(rows), *contradiction_lines(rows)]
