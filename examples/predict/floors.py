"""Speed-of-light floors for a serving simulator's latency predictor.

Run: python examples/predict/floors.py [HARDWARE] [MODEL]   (default: h100-sxm llama3-70b)

A serving simulator that accepts a pluggable latency predictor asks, for each decode step, how long a step of
a given batch at a given context takes.  ``derive.predict`` answers with the proved floor: no real step is
faster.  A predictor built on it is optimistic by construction, and the ratio of a measured step to it is the
share of the chip's peak the serving stack reached.

The same numbers as JSON, for a predictor written in another language:

    derive export --format floors-json --hardware h100-sxm --model llama3-70b --set 'batch=64 seq'

Schema ("derive.floors/1", documented in derive/whatif/predict.py):

    {"schema": "derive.floors/1", "metric": "tpot", "meaning": "...", "quantity": "step_time_floor",
     "claim": {"id", "title", "statement", "verdict", "lower_bound", "rests_on"},
     "points": [{"scenario", "inputs": {name: V}, "floor": V, "terms": {label: V}, "infeasible": [note]}]}
    V = {"exact": "p/q" in SI base units or null, "value": float in unit or null, "unit", "display"}
"""

from __future__ import annotations

import sys
from fractions import Fraction

import derive
from derive.errors import DeriveError


def floor_table(hardware: str, model: str, batches: list[str], context: str) -> list[tuple[str, float, str]]:
    """(batch, floor in seconds, the largest term) at each batch: what a simulator's predictor would look up."""
    floors = derive.predict(hardware=hardware, model=model, batch=batches, context=context)
    if not floors.lower_bound:  # only a proved floor may stand in for "no step is faster"
        raise SystemExit(f"{floors.claim} is {floors.verdict}, not a proved lower bound")
    rows = []
    for point in floors.points:
        largest = max(point.terms, key=lambda k: Fraction(str(point.terms[k].exact)))
        rows.append((point.inputs["batch"].display, float(Fraction(str(point.floor.exact))), largest))
    return rows


def main(argv: list[str]) -> int:
    hardware = argv[0] if argv else "h100-sxm"
    model = argv[1] if len(argv) > 1 else "llama3-70b"
    try:
        rows = floor_table(hardware, model, ["1 seq", "16 seq", "64 seq", "256 seq"], "8192 token/seq")
    except DeriveError as err:  # a preset name or a value derive cannot read: one line, exit 2
        print(f"floors.py: error: {err}", file=sys.stderr)
        return 2
    print(f"decode-step floor, {model} on {hardware}, context 8k token/seq")
    for batch, seconds, largest in rows:
        print(f"  batch {batch:>8}: {seconds * 1e3:8.3f} ms  (largest term: {largest})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
