"""The long fuzz and fault campaign (``make fuzz``): the CI suite in tests/fuzz/, scaled up and reseeded.

    python bench/fuzz.py                      # about 10x the CI run, a fresh seed
    python bench/fuzz.py --scale 100 --seed 7 # 36,000 command-line strings, 12,000 files, 3,600 damaged caches
    python bench/fuzz.py --only strings       # one part: strings, files, properties, build, cache, libraries, kernel

Each part is the CI test module with its case counts multiplied by ``--scale`` (through FUZZ_CASES,
FUZZ_FILES, FUZZ_CACHE_ROUNDS and FUZZ_KILLS) and its seed set by ``--seed`` (FUZZ_SEED); hypothesis examples are
multiplied too.  The contract is the one the CI tests assert (tests/fuzz/fuzzkit.py ``violations``).
Exit status 0 when every part holds it; the failing cases are printed by pytest.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARTS = ["strings", "files", "properties", "libraries", "build", "cache", "kernel"]
BASE = {"FUZZ_CASES": 360, "FUZZ_FILES": 120, "FUZZ_CACHE_ROUNDS": 36, "FUZZ_KILLS": 16, "FUZZ_CLAIMS": 60}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scale", type=int, default=10, help="multiply the CI case counts (default 10)")
    p.add_argument("--seed", type=int, default=None, help="seed (default: from the clock, printed)")
    p.add_argument("--only", choices=PARTS, action="append", help="run only these parts")
    args = p.parse_args(argv)
    seed = args.seed if args.seed is not None else int(time.time())
    env = dict(os.environ, FUZZ_SEED=str(seed), PYTHONPATH=str(ROOT))
    for key, base in BASE.items():
        env[key] = str(base * max(args.scale, 1))
    env["HYPOTHESIS_MAX_EXAMPLES"] = str(150 * max(args.scale, 1))
    parts = args.only or PARTS
    print(f"fuzz: seed {seed}, scale {args.scale}: {', '.join(f'{k}={env[k]}' for k in BASE)}", flush=True)
    failed = []
    for part in parts:
        start = time.perf_counter()
        code = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
                                str(ROOT / "tests" / "fuzz" / f"test_fuzz_{part}.py")], cwd=ROOT, env=env)
        print(f"fuzz: {part}: {'ok' if code == 0 else 'FAILED'} in {time.perf_counter() - start:.0f} s", flush=True)
        if code != 0:
            failed.append(part)
    print(f"fuzz: seed {seed}: " + (f"FAILED: {', '.join(failed)}" if failed else "every part holds the contract"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
