"""Speed of the serving library (part II), measured in fresh processes and printed with its ratios.

    python bench/serving.py             # five interleaved pairs
    python bench/serving.py --pairs 3

Targets (2 cores): a cold ``derive check --library serving`` (an empty cache folder) and loading both libraries
(``--library lecture --library serving``, in-process ``load_library``) each within 4x of
``import sympy, z3, networkx, jinja2``; a warm check within 0.5 s.  Measured in interleaved pairs so that a
change in the machine's load touches both sides; each ratio is the median of the pairs' ratios.  The project's
modules are byte-compiled first, as ``bench/run.py`` and ``bench/compare.py`` do (an installed copy is).

Not a timed test: the numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import compileall
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DERIVE = str(Path(sys.executable).parent / "derive")
IMPORTS = "import sympy, z3, networkx, jinja2"
LOAD_BOTH = "from derive.model.loader import load_library; load_library(['lecture', 'serving'])"


def _time(cmd: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return elapsed


def measure(pairs: int) -> dict:
    for package in ("derive", "theorems"):  # under PYTHONDONTWRITEBYTECODE they would be compiled on every start
        compileall.compile_dir(str(ROOT / package), quiet=1)
    _time([sys.executable, "-c", IMPORTS])  # warm the OS file cache
    rows: dict[str, list[float]] = {"imports": [], "load_both": [], "cold_check": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(pairs):
            rows["imports"].append(_time([sys.executable, "-c", IMPORTS]))
            rows["load_both"].append(_time([sys.executable, "-c", LOAD_BOTH]))
            rows["cold_check"].append(_time([DERIVE, "check", "--library", "serving", "--cache-dir",
                                             str(Path(tmp) / f"cold-{i}")]))
        warm_cache = str(Path(tmp) / "cold-0")
        warm = statistics.median(_time([DERIVE, "check", "--library", "serving", "--cache-dir", warm_cache])
                                 for _ in range(5))
    ratio = {k: statistics.median(v / i for v, i in zip(rows[k], rows["imports"], strict=True))
             for k in ("load_both", "cold_check")}
    return {**{k: statistics.median(v) for k, v in rows.items()}, "warm_check": warm,
            "ratio_load_both": ratio["load_both"], "ratio_cold_check": ratio["cold_check"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=5)
    r = measure(parser.parse_args().pairs)
    print(f"`{IMPORTS}`: {r['imports']:.2f} s")
    print(f"load lecture + serving: {r['load_both']:.2f} s, {r['ratio_load_both']:.2f}x the imports (target <= 4x)")
    print(f"check --library serving, cold: {r['cold_check']:.2f} s, {r['ratio_cold_check']:.2f}x the imports "
          "(target <= 4x)")
    print(f"check --library serving, warm: {r['warm_check']:.2f} s (target <= 0.5 s)")
    ok = r["ratio_load_both"] <= 4 and r["ratio_cold_check"] <= 4 and r["warm_check"] <= 0.5
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
