"""Benchmarks of derive's speed, measured in one run and printed with their ratios.

    python bench/run.py            # everything (a few minutes on 2 cores, most of it the cold checks)
    python bench/run.py --quick    # skip the full chip x model matrix
    python bench/run.py --write    # also write bench/RESULTS.md
    python bench/run.py --build    # only `derive build`, cold and warm (about a minute)

Each measurement runs the installed ``derive`` console script in a fresh process (so start-up and
imports count), with its own cache folder under a temporary directory, except where "in-process" is
said.  The project's modules are byte-compiled first, as an installed wheel's are.

Targets (2 cores): cold check <= 1.5 s and within 3x of ``import sympy, z3, networkx, jinja2``, warm
<= 0.3 s, ``derive --help`` <= 0.15 s, diff >= 3x faster than a full re-check, sweep >= 1e7
point-evaluations/s, matrix <= 30 s, ``derive build`` (md, tex, pdf) cold <= 30 s and warm <= 5 s.

Not timed tests: numbers depend on the machine and its load (printed with the results).
"""

from __future__ import annotations

import argparse
import compileall
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DERIVE = str(Path(sys.executable).parent / "derive")


NO_REPLAY = [sys.executable, "-c", "import sys; from derive.cli import main; sys.exit(main(sys.argv[1:]))"]


def run(argv: list[str], *, env: dict | None = None, repeat: int = 1, check: bool = True,
        replay: bool = True) -> float:
    """Median wall time of ``derive argv`` in a fresh process (``replay=False``: the output cache is not
    consulted, as for an in-process ``derive.cli.main`` call; the proof cache still is)."""
    times, cpus = [], []
    for _ in range(repeat):
        before = _children_cpu()
        start = time.perf_counter()
        cmd = [DERIVE, *argv] if replay else [*NO_REPLAY, *argv]
        proc = subprocess.run(cmd, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        times.append(time.perf_counter() - start)
        cpus.append(_children_cpu() - before)
        if check and proc.returncode not in (0, 1):
            raise SystemExit(f"derive {' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()}")
    LAST_CPU[0] = statistics.median(cpus)
    return statistics.median(times)


LAST_CPU = [0.0]  # CPU seconds (user + system, every process of the run) of the last `run`


def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(argv: list[str], **kw) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of ``derive argv``."""
    wall = run(argv, **kw)
    return wall, LAST_CPU[0]


def count_claims() -> int:
    from derive.model.loader import load_library

    return len(load_library(["lecture"]).claims())


def bench_help() -> dict:
    run(["--help"])  # warm the OS file cache
    t = run(["--help"], repeat=7)
    t_check_help = run(["check", "--help"], repeat=5)
    py = statistics.median(_time([sys.executable, "-c", "pass"]) for _ in range(5))
    return {"help_s": t, "check_help_s": t_check_help, "python_startup_s": py}


def _time(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def bench_check(cache: str) -> dict:
    cold_nocache = run(["check", "--no-cache"])
    cold, cold_cpu = timed(["check", "--cache-dir", cache])
    warm, warm_cpu = timed(["check", "--cache-dir", cache], repeat=5)  # output replay: no sympy, no z3
    warm_proofs = run(["check", "--cache-dir", cache], repeat=3, replay=False)  # every proof from the cache
    return {"cold_no_cache_s": cold_nocache, "cold_s": cold, "cold_cpu_s": cold_cpu, "warm_s": warm,
            "warm_cpu_s": warm_cpu, "warm_proof_cache_only_s": warm_proofs}


IMPORTS = "import sympy, z3, networkx, jinja2"


def bench_imports(tmp: str, pairs: int = 5) -> dict:
    """Issue 13's speed target: a cold ``derive check`` (an empty cache folder) within 3x of importing what
    it stands on.  Measured in interleaved pairs, so that a change in the machine's load touches both
    sides; the ratio is the median of the pairs' ratios."""
    _time([sys.executable, "-c", IMPORTS])  # warm the OS file cache
    imports, checks, ratios = [], [], []
    for i in range(pairs):
        imports.append(_time([sys.executable, "-c", IMPORTS]))
        checks.append(run(["check", "--cache-dir", str(Path(tmp) / f"cold-{i}")]))
        ratios.append(checks[-1] / imports[-1])
    return {"imports_s": statistics.median(imports), "cold_check_s": statistics.median(checks),
            "ratio": statistics.median(ratios), "best_ratio": min(ratios), "worst_ratio": max(ratios),
            "pairs": pairs}


def slowest_claims(n: int = 3) -> list[tuple[str, float]]:
    from derive.checking.checker import Checker
    from derive.model.loader import load_library
    from derive.model.scenario import build_scenario

    lib = load_library(["lecture"])
    checker = Checker(lib, build_scenario(lib))
    times = []
    for c in lib.claims():
        start = time.perf_counter()
        checker.check_own(c)
        times.append((c.id, time.perf_counter() - start))
    times.sort(key=lambda t: -t[1])
    return times[:n] + [("(all claims, in-process)", sum(t for _, t in times))]


def bench_diff(cache: str) -> dict:
    """Baseline cached (as after `derive check`); one quantity changes to a value never seen before."""
    run(["diff", "--cache-dir", cache])  # fills the baseline's results cache
    diff, diff_cpu = timed(["diff", "--cache-dir", cache, "--set", "hbm_capacity=576 GB"])
    full, full_cpu = timed(["check", "--no-cache", "--set", "hbm_capacity=577 GB"])
    full_cached = run(["check", "--cache-dir", cache, "--set", "hbm_capacity=578 GB"])
    # in-process: the work itself, without start-up and library loading
    from derive.checking.cache import ProofCache, ResultsCache
    from derive.checking.checker import Checker
    from derive.model.loader import load_library
    from derive.model.scenario import build_scenario
    from derive.whatif.diff import diff as diff_fn

    lib = load_library(["lecture"])
    base = build_scenario(lib)
    cur = build_scenario(lib, sets=["hbm_capacity=579 GB"])
    start = time.perf_counter()
    report = diff_fn(lib, base, cur, cache=ProofCache(cache), results_cache=ResultsCache(cache))
    t_diff = time.perf_counter() - start
    start = time.perf_counter()
    Checker(lib, build_scenario(lib, sets=["hbm_capacity=580 GB"])).check()
    t_full = time.perf_counter() - start
    return {"diff_s": diff, "full_recheck_no_cache_s": full, "full_recheck_proof_cache_s": full_cached,
            "diff_cpu_s": diff_cpu, "full_cpu_s": full_cpu,
            "ratio": full / diff, "ratio_vs_cached_check": full_cached / diff,
            "in_process_diff_s": t_diff, "in_process_full_s": t_full, "in_process_ratio": t_full / t_diff,
            "rechecked": len(report.rechecked), "claims": len(report.order)}


def bench_sweep() -> dict:
    import numpy as np
    import sympy as sp

    from derive.model.loader import load_library
    from derive.model.scenario import build_scenario
    from derive.whatif.sweep import numpy_function

    lib = load_library(["lecture"])
    scen = build_scenario(lib)
    keep = {"batch", "context"}
    expr = lib.expand(lib.quantities["step_time"].sym, scen.pinned)
    expr = expr.xreplace({lib.quantities[n].sym: v.value for n, v in scen.values.items() if n not in keep})
    syms = [lib.quantities["batch"].sym, lib.quantities["context"].sym]
    start = time.perf_counter()
    fn = numpy_function(expr, syms)
    compile_s = time.perf_counter() - start
    b, c = np.meshgrid(np.linspace(1, 8192, 2000), np.geomspace(1e3, 1e6, 1000), indexing="ij")
    b, c = b.reshape(-1), c.reshape(-1)
    fn(b[:1000], c[:1000])
    reps = []
    for _ in range(3):
        start = time.perf_counter()
        fn(b, c)
        reps.append(time.perf_counter() - start)
    vec = b.size / min(reps)
    pts = [(sp.Integer(int(x)), sp.Integer(int(y))) for x, y in zip(b[:200:1], c[:200:1], strict=True)]
    start = time.perf_counter()
    for x, y in pts:
        float(expr.subs({syms[0]: x, syms[1]: y}))
    subs = len(pts) / (time.perf_counter() - start)
    # end to end through the CLI, compile and CSV included
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        run(["sweep", "step_time", "--vary", "batch=1:8192:1000", "--vary", "context=1000:1000000:1000:log",
             "--out", str(Path(tmp) / "s.csv")])
        cli = time.perf_counter() - start
    # the serving library's layout rules decided exactly per point (integers and fractions, not floats) on a
    # 1000 x 1000 grid of tp x dp: the rule tp*pp*cp*dp <= chips names both, so every point is its own case
    from derive.model.scenario import with_input_table_defaults
    from derive.whatif.rules import grid_rules

    serving = load_library(["serving"])
    layout, _ = with_input_table_defaults(serving, build_scenario(serving, hardware="h100-sxm", model="llama3-70b"),
                                          ["tp", "dp"])
    degrees = np.arange(1, 1001, dtype=float)
    start = time.perf_counter()
    grid_rules(serving, layout, ["tp", "dp"], [degrees, degrees])
    rules = time.perf_counter() - start
    return {"points": int(b.size), "vectorised_evals_per_s": vec, "subs_evals_per_s": subs, "ratio": vec / subs,
            "compile_s": compile_s, "cli_1e6_points_with_csv_s": cli, "layout_rules_1e6_points_s": rules}


def bench_matrix(cache: str) -> dict:
    from derive.model.loader import load_library
    from derive.whatif.sweep import preset_pairs

    pairs = len(preset_pairs(load_library(["lecture"])))
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "m.csv")
        cold, cold_cpu = timed(["sweep", "--presets", "--check", "--out", out, "--cache-dir", str(Path(tmp) / "fresh")])
        warm_base = run(["sweep", "--presets", "--check", "--out", out, "--cache-dir", cache])
        warm = run(["sweep", "--presets", "--check", "--out", out, "--cache-dir", cache])
        one = run(["check", "--hardware", "h100-sxm", "--model", "llama3-70b", "--no-cache"])
    return {"pairs": pairs, "cold_s": cold, "cold_cpu_s": cold_cpu, "baseline_cached_s": warm_base, "warm_s": warm,
            "one_pair_cli_no_cache_s": one, "naive_serial_estimate_s": one * pairs}


def bench_build(tmp: str) -> dict:
    """`derive build` (md, tex, pdf): cold with an empty cache folder (checks, thresholds, figures and
    pdflatex all run), then warm (everything read from the caches).  Targets: cold <= 30 s, warm <= 5 s.
    Also the HTML site alone, warm.  pdflatex must be installed for the PDF to be part of it."""
    cache = str(Path(tmp) / "build-cache")
    out = str(Path(tmp) / "build-out")
    env = {"DERIVE_CACHE_DIR": cache}
    cold, cold_cpu = timed(["build", "--out", out, "--format", "md,tex,pdf"], env=env, replay=False)
    warm, warm_cpu = timed(["build", "--out", out, "--format", "md,tex,pdf"], env=env, replay=False, repeat=3)
    html = run(["build", "--out", out + "-html", "--format", "html"], env=env, replay=False, repeat=3)
    return {"cold_s": cold, "cold_cpu_s": cold_cpu, "warm_s": warm, "warm_cpu_s": warm_cpu, "html_warm_s": html,
            "pdf": shutil.which("pdflatex") is not None}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="skip the chip x model matrix")
    ap.add_argument("--write", action="store_true", help="write bench/RESULTS.md")
    ap.add_argument("--build", action="store_true", help="only `derive build`, cold and warm (no --write)")
    args = ap.parse_args()
    # The project's modules byte-compiled first, as installing a wheel does: a checkout run under
    # PYTHONDONTWRITEBYTECODE would otherwise compile them on every start, which no installed copy does.
    for package in ("derive", "theorems"):
        compileall.compile_dir(str(ROOT / package), quiet=1)
    tmp = tempfile.mkdtemp(prefix="derive-bench-")
    cache = str(Path(tmp) / "cache")
    load = os.getloadavg()
    print(f"derive bench: {platform.python_version()}, {os.cpu_count()} cores, load {load[0]:.1f} {load[1]:.1f}, "
          f"{count_claims()} claims")
    results: dict[str, dict] = {}
    if args.build:
        try:
            _print_build(bench_build(tmp))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return 0
    try:
        results["help"] = h = bench_help()
        print(f"derive --help          {h['help_s']:.3f} s   (target <= 0.15; python itself "
              f"{h['python_startup_s']:.3f} s; check --help {h['check_help_s']:.3f} s)")
        results["check"] = c = bench_check(cache)
        print(f"check, cold            {c['cold_s']:.2f} s   (target <= 1.5; CPU {c['cold_cpu_s']:.2f} s; with "
              f"--no-cache {c['cold_no_cache_s']:.2f} s)")
        print(f"check, warm            {c['warm_s']:.3f} s   (target <= 0.3; cold/warm = "
              f"{c['cold_s'] / c['warm_s']:.0f}x; proof cache only, no replay: {c['warm_proof_cache_only_s']:.2f} s)")
        results["imports"] = im = bench_imports(tmp)
        print(f"check, cold vs imports {im['cold_check_s']:.2f} s vs {im['imports_s']:.2f} s for `{IMPORTS}`: "
              f"{im['ratio']:.1f}x (target <= 3x; median of {im['pairs']} interleaved pairs, from "
              f"{im['best_ratio']:.1f}x to {im['worst_ratio']:.1f}x)")
        slow = slowest_claims()
        results["slowest"] = {k: v for k, v in slow}
        print("  slowest claims cold:  " + ", ".join(f"{k} {v:.2f} s" for k, v in slow))
        results["diff"] = d = bench_diff(cache)
        print(f"diff (1 value changed) {d['diff_s']:.2f} s   vs full re-check {d['full_recheck_no_cache_s']:.2f} s:"
              f" {d['ratio']:.1f}x (target >= 3; CPU {d['diff_cpu_s']:.2f} vs {d['full_cpu_s']:.2f} s);"
              f" vs check with warm proof cache {d['ratio_vs_cached_check']:.1f}x;"
              f" in-process {d['in_process_ratio']:.0f}x; re-checked {d['rechecked']} of {d['claims']} claims")
        results["sweep"] = s = bench_sweep()
        print(f"sweep                  {s['vectorised_evals_per_s']:.3g} point-evals/s (target >= 1e7) vs subs"
              f" {s['subs_evals_per_s']:.3g}/s: {s['ratio']:.3g}x; 1e6 points via the CLI with CSV"
              f" {s['cli_1e6_points_with_csv_s']:.2f} s; serving layout rules, exact, 1e6 points (tp x dp)"
              f" {s['layout_rules_1e6_points_s']:.2f} s")
        results["build"] = b = bench_build(tmp)
        _print_build(b)
        if not args.quick:
            results["matrix"] = m = bench_matrix(cache)
            print(f"matrix ({m['pairs']} pairs)    cold {m['cold_s']:.1f} s (CPU {m['cold_cpu_s']:.1f} s), "
                  "baseline cached "
                  f"{m['baseline_cached_s']:.1f} s, warm {m['warm_s']:.1f} s (target <= 30; one "
                  "`derive check --hardware --model` "
                  f"{m['one_pair_cli_no_cache_s']:.2f} s, x{m['pairs']} = {m['naive_serial_estimate_s']:.0f} s)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.write:
        write_results(results, load)
    return 0


def _print_build(b: dict) -> None:
    print(f"build md,tex,pdf       cold {b['cold_s']:.1f} s (target <= 30; CPU {b['cold_cpu_s']:.1f} s), warm "
          f"{b['warm_s']:.1f} s (target <= 5; CPU {b['warm_cpu_s']:.1f} s); html warm {b['html_warm_s']:.1f} s"
          + ("" if b["pdf"] else " (no pdflatex: PDF not compiled)"))


def write_results(r: dict, load) -> None:
    h, c, d, s = r["help"], r["check"], r["diff"], r["sweep"]
    m = r.get("matrix")
    lines = [
        "# Benchmark results",
        "",
        f"`python bench/run.py --write`; Python {platform.python_version()}, {os.cpu_count()} cores, load average "
        f"{load[0]:.1f} at the start (other jobs were running: absolute times are noisy, ratios less so).",
        "",
        "| measurement | result | target |",
        "| --- | --- | --- |",
        f"| `derive --help` start-up | {h['help_s']:.3f} s (bare `python -c pass`: {h['python_startup_s']:.3f} s) "
        "| <= 0.15 s |",
        f"| `derive check`, cold (empty cache) | {c['cold_s']:.2f} s (CPU {c['cold_cpu_s']:.2f} s) | <= 1.5 s |",
        f"| `derive check`, warm (output replayed) | {c['warm_s']:.3f} s ({c['cold_s'] / c['warm_s']:.0f}x faster) "
        "| <= 0.3 s |",
        f"| `derive check`, proofs from cache, no replay | {c['warm_proof_cache_only_s']:.2f} s | |",
        f"| `derive check`, cold vs `{IMPORTS}` | {r['imports']['cold_check_s']:.2f} s vs "
        f"{r['imports']['imports_s']:.2f} s = {r['imports']['ratio']:.1f}x (median of {r['imports']['pairs']} "
        f"interleaved pairs; {r['imports']['best_ratio']:.1f}x to {r['imports']['worst_ratio']:.1f}x) | <= 3x |",
        f"| `derive diff`, one value changed vs full re-check | {d['diff_s']:.2f} s vs "
        f"{d['full_recheck_no_cache_s']:.2f} s = {d['ratio']:.1f}x (in-process {d['in_process_ratio']:.0f}x; "
        f"re-checked {d['rechecked']} of "
        f"{d['claims']}) | >= 3x |",
        f"| sweep, vectorised | {s['vectorised_evals_per_s']:.3g} point-evals/s vs `subs` "
        f"{s['subs_evals_per_s']:.3g}/s ({s['ratio']:.3g}x) | >= 1e7/s |",
    ]
    b = r.get("build")
    if b:
        lines.append(f"| `derive build` (md, tex, pdf{'' if b['pdf'] else '; no pdflatex'}), cold / warm | "
                     f"{b['cold_s']:.1f} s (CPU {b['cold_cpu_s']:.1f} s) / {b['warm_s']:.1f} s "
                     f"(CPU {b['warm_cpu_s']:.1f} s); html site warm {b['html_warm_s']:.1f} s | <= 30 s / <= 5 s |")
    if m:
        lines.append(f"| chip x model matrix ({m['pairs']} pairs, real checks, 2 workers) | cold {m['cold_s']:.1f} s "
                     f"(CPU {m['cold_cpu_s']:.1f} s over 2 cores), baseline cached {m['baseline_cached_s']:.1f} s, "
                     f"warm {m['warm_s']:.1f} s | <= 30 s |")
    slow = ", ".join(f"`{k}` {v:.2f} s" for k, v in r["slowest"].items())
    lines += ["", f"Slowest claims of a cold check: {slow}.", ""]
    (ROOT / "bench" / "RESULTS.md").write_text("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
