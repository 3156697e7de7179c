"""Linear integer claims at speed: a 64-claim library of ceilings, floors, pages, tokens per expert,
chips per layout and divisibility (tests/kernel/integer_layouts.py) decided cold, in one process.

Budget: under 10 s in all, every true claim proved and every false twin refuted.
Run: .venv/bin/python bench/integer.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

BUDGET_S = 10.0


def main() -> int:
    start = time.perf_counter()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "kernel"))
    from integer_layouts import cases

    from derive.kernel.prover import decide

    wrong, slowest = [], (0.0, "")
    for case in cases():
        t = time.perf_counter()
        verdict = decide(case.problem).verdict
        slowest = max(slowest, (time.perf_counter() - t, case.id))
        if verdict != {"true": "proved", "false": "refuted"}[case.truth]:
            wrong.append(f"{case.id}: {verdict}")
    total = time.perf_counter() - start
    print(f"{len(cases())} linear integer claims in {total:.2f} s (imports included; budget {BUDGET_S:.0f} s); "
          f"slowest {slowest[1]} {slowest[0] * 1000:.0f} ms")
    for line in wrong:
        print(f"  wrong verdict: {line}")
    return 0 if not wrong and total < BUDGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
