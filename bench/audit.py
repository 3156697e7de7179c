"""Speed target of ``derive audit``: 100,000 rows in at most 10 s and 1 GB on a 2-core machine.

Writes a table of synthetic rows (a few models and chips; batches, contexts and numbers drawn from a fixed
seed; about two thirds impossible, the costly case: each needs its smallest change) to a temporary folder, audits
it with the command line as a user would (``--out FILE.csv``), and reports the audit's wall time, its CPU time
(user + system) and its peak memory.  The target is checked against the CPU time, which a machine shared with
other jobs does not inflate (the wall time is printed beside it).  Exit 1 when a target is missed.
``--html`` also writes the report page (``--html DIR``), held to the same targets.
Usage: ``python bench/audit.py [--rows N] [--html]``.
"""

from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S, TARGET_MB = 10.0, 1024
MODELS = ["llama3-8b", "llama3-70b", "llama3-405b", "deepseek-v3", "mixtral-8x22b"]
HARDWARE = ["h100-sxm", "h200", "b200", "mi300x", "a100-80gb"]


def write_table(path: Path, rows: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("id,model,hardware,chips,batch,context,bytes_per_param,tpot,tokens_per_s,tokens_per_s_per_chip\n")
        for i in range(rows):
            batch = rng.choice([1, 8, 32, 64, 128, 256])
            tpot = f"{rng.uniform(1, 200):.3f} ms"
            tps = f"{rng.uniform(10, 50000):.1f}" if i % 3 else ""
            fh.write(f"r{i},{rng.choice(MODELS)},{rng.choice(HARDWARE)},{rng.choice([1, 2, 4, 8])},{batch},"
                     f"{rng.choice([128, 1024, 4096])},{rng.choice(['1 byte/param', '2 byte/param'])},{tpot},{tps},"
                     f"{'' if i % 5 else '1000'}\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--html", action="store_true", help="also write the report page")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "rows.csv"
        write_table(table, args.rows)
        derive = Path(sys.executable).with_name("derive")
        start = time.perf_counter()
        extra = ["--html", str(Path(tmp) / "report")] if args.html else []
        done = subprocess.run([str(derive), "audit", str(table), "--out", str(Path(tmp) / "out.csv"), *extra],
                              capture_output=True, text=True)
        seconds = time.perf_counter() - start
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        peak_mb, cpu = usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime
    summary = [line for line in done.stdout.splitlines() if " rows: " in line]
    print(summary[-1] if summary else done.stderr.strip())
    print(f"audit of {args.rows:,} rows: {cpu:.2f} s CPU (target {TARGET_S:g} s), {seconds:.2f} s wall, "
          f"peak memory {peak_mb:.0f} MB (target {TARGET_MB} MB), exit {done.returncode}")
    ok = done.returncode in (0, 1) and cpu <= TARGET_S * args.rows / 100_000 and peak_mb <= TARGET_MB
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
