"""Fault injection for the proof, results and output caches: a damaged cache never changes an answer.

A few claims (proved and refuted ones, with counterexamples) are checked once into a pristine cache, through
the output cache too (``main(argv, replay=True)``, as the console script runs).  Then, round after round,
a copy of the cache is damaged (bit flips, truncation, garbage, an empty file, a folder in place of a file,
well-formed edits: ``proved`` <-> ``refuted``, another exit code, another counterexample value) and the
same command runs on it.  Its verdicts, counterexamples and exit code must equal the pristine run's, and
the contract of ``fuzzkit.violations`` holds (no traceback, no untyped error).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from pathlib import Path

import fuzzkit as fk
import pytest

SEED = int(os.environ.get("FUZZ_SEED", "20261123"))
ROUNDS = int(os.environ.get("FUZZ_CACHE_ROUNDS", "36"))
IDS = ["roofline.step_time_ge_compute_time", "roofline.latency_floor", "batching.hw_ratio_a100",
       "batching.sparsity_inconsistency", "roofline.hbm_drain_time"]


def answers(out: str) -> list[tuple]:
    """What a run says: each claim's verdict and counterexample (timings aside)."""
    data = json.loads(out)
    return [(c["id"], c["verdict"], json.dumps(c.get("counterexample"), sort_keys=True)) for c in data["claims"]]


EDITS = [
    ("flip", None), ("truncate", None), ("garbage", None), ("empty", None), ("folder", None), ("delete", None),
    ("text", ('"proved"', '"refuted"')), ("text", ('"refuted"', '"proved"')), ("text", ("proved", "provee")),
    ("text", ('"exit_code": 0', '"exit_code": 1')), ("text", ('"exit_code": 1', '"exit_code": 0')),
    ("number", None), ("text", ('"verdict": "refuted"', '"verdict": "proved"')),
]


def damage(r: random.Random, files: list[Path]) -> str:
    """Damage one to three cache files in place; returns what was done."""
    done = []
    for path in r.sample(files, k=min(len(files), r.randrange(1, 4))):
        kind, arg = r.choice(EDITS)
        data = path.read_bytes()
        if kind == "flip" and data:
            b = bytearray(data)
            i = r.randrange(len(b))
            b[i] ^= 1 << r.randrange(8)
            path.write_bytes(bytes(b))
        elif kind == "truncate":
            path.write_bytes(data[: r.randrange(len(data) + 1)])
        elif kind == "garbage":
            path.write_bytes(os.urandom(r.randrange(1, 300)))
        elif kind == "empty":
            path.write_bytes(b"")
        elif kind == "folder":
            path.unlink()
            path.mkdir()
        elif kind == "delete":
            path.unlink()
        elif kind == "number":  # a well-formed edit of some number in the entry (a counterexample value)
            text = data.decode("utf-8", "replace")
            numbers = list(re.finditer(r"(?<![\w.])\d+(?![\w.])", text))
            if numbers:
                m = r.choice(numbers)
                text = text[: m.start()] + str(int(m.group()) * 7 + 1) + text[m.end():]
            path.write_text(text)
        else:
            old, new = arg
            path.write_text(data.decode("utf-8", "replace").replace(old, new))
        done.append(f"{kind}{'' if arg is None else ' ' + '->'.join(arg)} {path.parent.name}/{path.name[:12]}")
    return "; ".join(done)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fuzz-cache")
    cache = tmp / "pristine"
    worker = fk.Worker({"FUZZ_CWD": str(tmp)})
    try:
        argv = ["check", *IDS, "--json", "--cache-dir", str(cache)]
        first = worker.run(argv, replay=True, limit=300)
        again = worker.run(argv, replay=True, limit=300)  # answered from the output cache
    finally:
        worker.stop()
    assert first.code == 0 and not fk.violations(first), first.err
    assert again.code == 0 and answers(again.out) == answers(first.out)
    verdicts = {v for _, v, _ in answers(first.out)}
    assert verdicts == {"proved", "refuted"}, "the claims should give both verdicts"
    return tmp, cache, first


def test_a_damaged_cache_never_changes_an_answer(pristine):
    tmp, cache, first = pristine
    expected = answers(first.out)
    r = random.Random(SEED)
    runs, what = [], []
    for i in range(ROUNDS):
        copy = tmp / f"damaged{i}"
        shutil.copytree(cache, copy)
        files = sorted(p for p in copy.rglob("*") if p.is_file())
        what.append(damage(r, files))
        runs.append(["check", *IDS, "--json", "--cache-dir", str(copy)])
    worker = fk.Worker({"FUZZ_CWD": str(tmp)})
    wrong = []
    try:
        for argv, did in zip(runs, what, strict=True):
            o = worker.run(argv, replay=True, limit=300)
            problems = fk.violations(o)
            if o.code != first.code:
                problems.append(f"exit code {o.code} instead of {first.code}")
            elif o.out.strip():
                try:
                    if answers(o.out) != expected:
                        problems.append(f"wrong answers: {set(answers(o.out)) - set(expected)}")
                except (ValueError, KeyError) as exc:
                    problems.append(f"output is not the check report: {exc}: {o.out[:200]!r}")
            else:
                problems.append("no output")
            wrong += [f"{did}: {p}" for p in problems]
    finally:
        worker.stop()
    assert not wrong, f"{len(wrong)} wrong of {ROUNDS} damaged caches:\n" + "\n".join(wrong[:20])
