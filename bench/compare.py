"""Cold checks of two source trees, interleaved with the imports they are measured against.

    python bench/compare.py BASE_TREE                  # this tree against BASE_TREE, 5 rounds, the lecture
    python bench/compare.py BASE_TREE --rounds 7 --library lecture --library serving

Each round times ``import sympy, z3, networkx, jinja2`` once, then a cold ``derive check --library L`` (an
empty cache folder) of each tree for each library, the trees' order alternating from round to round, so a
change in the machine's load touches both sides.  A tree is chosen with ``PYTHONPATH`` (its ``derive`` and
``theorems`` packages come before the installed ones); the installed console script and interpreter are
the same for both.  Printed per tree and library: the median wall time, the median ratio to the imports
of the same round (and its range), and the median CPU time of all the run's processes (user and system),
which another job on the machine disturbs less than the wall time.

Each tree's ``derive`` and ``theorems`` are byte-compiled first, in place, as installing a wheel does and as
``bench/run.py`` does: the imports it is measured against load byte-compiled packages, and a checkout run
under ``PYTHONDONTWRITEBYTECODE`` would otherwise compile its own modules on every start (about 0.2 s of
a cold check on this machine).  ``--source`` skips that (every module compiled from source on each start,
as the comparisons before 2026-11-27's sixth session were measured where that variable was set).

Not a timed test: the numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import compileall
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DERIVE = str(Path(sys.executable).parent / "derive")
IMPORTS = "import sympy, z3, networkx, jinja2"


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """(wall, user CPU, system CPU) seconds of ``cmd`` and every process it started."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime


def measure(trees: dict[str, str], libraries: list[str], rounds: int) -> dict[str, list[tuple[float, float, float]]]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    rows: dict[str, list[tuple[float, float, float]]] = {"imports": []}
    timed([sys.executable, "-c", IMPORTS], env)  # warm the OS file cache
    names = list(trees)
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(rounds):
            rows["imports"].append(timed([sys.executable, "-c", IMPORTS], env))
            for library in libraries:
                for name in names if i % 2 == 0 else names[::-1]:
                    cache = str(Path(tmp) / f"{name}-{library}-{i}")
                    rows.setdefault(f"{library} {name}", []).append(
                        timed([DERIVE, "check", "--library", library, "--cache-dir", cache],
                              {**env, "PYTHONPATH": trees[name]}))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("base", help="the source tree to compare against (a checkout or an exported commit)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--library", action="append", dest="libraries", help="lecture (default), serving, ...")
    parser.add_argument("--source", action="store_true",
                        help="do not byte-compile the trees first (their modules compiled on every start)")
    args = parser.parse_args()
    trees = {"base": str(Path(args.base).resolve()), "this": str(ROOT)}
    for tree in trees.values():
        if not (Path(tree) / "derive" / "__init__.py").is_file():
            raise SystemExit(f"bench/compare.py: {tree} is not a source tree of derive (no derive/__init__.py)")
    if not args.source:
        for tree in trees.values():
            for package in ("derive", "theorems"):
                if not compileall.compile_dir(str(Path(tree) / package), quiet=1):
                    print(f"bench/compare.py: could not byte-compile {tree}/{package} (read-only?): its modules "
                          "are compiled on every start", file=sys.stderr)
    rows = measure(trees, args.libraries or ["lecture"], args.rounds)
    imports = rows["imports"]
    print(f"Python {platform.python_version()}, {os.cpu_count()} CPUs, {args.rounds} rounds, trees "
          f"{'from source' if args.source else 'byte-compiled'}; load average at the end {os.getloadavg()[0]:.1f}")
    print(f"`{IMPORTS}`: {statistics.median(w for w, _, _ in imports):.2f} s "
          f"(CPU {statistics.median(u + s for _, u, s in imports):.2f} s)")
    for key, runs in rows.items():
        if key == "imports":
            continue
        ratios = [w / i[0] for (w, _, _), i in zip(runs, imports, strict=True)]
        print(f"{key}: {statistics.median(w for w, _, _ in runs):.2f} s, {statistics.median(ratios):.2f}x the imports "
              f"({min(ratios):.2f}x to {max(ratios):.2f}x); CPU {statistics.median(u for _, u, _ in runs):.2f} s user "
              f"+ {statistics.median(s for _, _, s in runs):.2f} s system")
    # each round's two trees ran one after the other: their ratio cancels most of a change in the machine's speed
    # between rounds (on a shared host the same command's time varies by a third from one minute to the next)
    for library in args.libraries or ["lecture"]:
        base, this = rows[f"{library} base"], rows[f"{library} this"]
        paired = [t[0] / b[0] for b, t in zip(base, this, strict=True)]
        cpu = [(t[1] + t[2]) / (b[1] + b[2]) for b, t in zip(base, this, strict=True)]
        print(f"{library} this / base, round by round: wall {statistics.median(paired):.3f} "
              f"({min(paired):.3f} to {max(paired):.3f}); CPU {statistics.median(cpu):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
