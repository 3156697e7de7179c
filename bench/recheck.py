"""The lecture's certificates re-checked: ``derive check --certificates DIR`` then ``derive recheck DIR``,
each in a fresh process of the installed console script.

Budget (2 cores): ``derive recheck`` of the whole lecture within 60 s.  Prints the count of each status
and every ``not confirmed`` line with its reason.
Run: .venv/bin/python bench/recheck.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGET_S = 60.0


def main() -> int:
    derive = shutil.which("derive", path=str(Path(sys.executable).parent)) or "derive"
    with tempfile.TemporaryDirectory() as tmp:
        folder = str(Path(tmp) / "certs")
        start = time.perf_counter()
        subprocess.run([derive, "check", "--no-cache", "--certificates", folder], check=False,
                       stdout=subprocess.DEVNULL)
        written = time.perf_counter() - start
        start = time.perf_counter()
        out = subprocess.run([derive, "recheck", folder], capture_output=True, text=True)
        took = time.perf_counter() - start
    lines = out.stdout.splitlines()
    for line in lines:
        if line.startswith(("not confirmed", "disagrees")):
            print(line)
    print(lines[-1] if lines else out.stderr.strip())
    print(f"check --certificates {written:.1f} s; recheck {took:.1f} s (budget {BUDGET_S:.0f} s)")
    return 0 if out.returncode == 0 and took < BUDGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
