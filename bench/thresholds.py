"""A document's thresholds (the margins of its headline claims) at a deployment's own scenario, cold.

    python bench/thresholds.py                      # the three cases below, each in a fresh process
    python bench/thresholds.py --case deepseek-64   # one case in this process (what a paired timing runs)

A build at the user's scenario computes every headline claim's margins (``derive.documents.thresholds``); a
mixture-of-experts model at a batch of B sequences makes the expected expert reads a polynomial of degree B in
the experts, whose solving once ran into the margin's 30 s wall-clock net (2026-11-29: a minute of a 72 s build).
The cases: DeepSeek-V3 on H100s at a batch of 64 (degree 64), Qwen3-235B-A22B on H200s at 32, Mixtral 8x7B on
H200s at 16.  No target of its own (the build's target is for the lecture's scenario); each line gives the
rows and seconds, so that a change that makes a margin slow shows here.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

CASES = {
    "deepseek-64": ("h100-sxm", "deepseek-v3", "64 seq"),
    "qwen3-moe-32": ("h200", "qwen3-235b-a22b", "32 seq"),
    "mixtral-16": ("h200", "mixtral-8x7b", "16 seq"),
}


def run_case(name: str) -> tuple[int, float]:
    from derive.documents.thresholds import compute_thresholds
    from derive.model.loader import load_library
    from derive.model.scenario import build_scenario

    hardware, model, batch = CASES[name]
    library = load_library(["serving"])
    scenario = build_scenario(library, hardware=hardware, model=model, sets=[f"batch={batch}"])
    start = time.perf_counter()
    rows = compute_thresholds(library, scenario)
    return len(rows), time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--case", choices=sorted(CASES))
    args = parser.parse_args()
    if args.case:
        rows, seconds = run_case(args.case)
        print(f"{args.case}: {rows} rows in {seconds:.2f} s")
        return 0
    for name in CASES:
        subprocess.run([sys.executable, __file__, "--case", name], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
