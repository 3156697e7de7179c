"""The cache folder: per-user location, sealed entries, re-checked counterexamples, LRU bound, info/clear,
and replay keyed on everything a run read (data files outside the library, the environment)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
import sympy as sp
from whatif_fixture import BASE_SETS, write_library

import derive.checking.cache as cache_mod
from derive.checking.cache import OutputCache, ProofCache, library_digest, prune, seal, unseal, unseal_bytes
from derive.cli import main
from derive.kernel import logic
from derive.kernel.problem import Problem

x, y = sp.symbols("x y")


def refuted_problem() -> Problem:
    """x >= 1, y >= 1  =>  x + y <= 3: false (x = y = 2)."""
    return Problem([logic.ge(x, 1), logic.ge(y, 1)], logic.le(x + y, 3))


def test_default_folder_is_per_user_not_the_current_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("DERIVE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path / "..")
    folder = cache_mod.cache_dir()
    assert "derive-llm" in folder.parts
    assert not str(folder.resolve()).startswith(str(Path.cwd().resolve() / "build"))
    assert cache_mod.cache_dir(tmp_path / "mine") == tmp_path / "mine"
    monkeypatch.setenv("DERIVE_CACHE_DIR", str(tmp_path / "env"))
    assert cache_mod.cache_dir() == tmp_path / "env"


def test_check_leaves_no_litter_in_the_current_folder(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("DERIVE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    folder = write_library(tmp_path)
    argv = ["check", "--library", str(folder), *sum((["--set", s] for s in BASE_SETS), [])]
    monkeypatch.setattr("sys.argv", ["derive", *argv])
    assert main(argv, replay=True) == 0
    assert list(work.iterdir()) == []
    assert (Path(cache_mod.cache_dir()) / cache_mod.PROOF_STORE).is_file()


@pytest.mark.parametrize("damage", ["bitflip", "truncate", "garbage", "edit", "foreign_kind", "other_key", "format"])
def test_a_damaged_entry_is_never_read(tmp_path, damage):
    path = tmp_path / "e.json"
    body = {"verdict": "proved", "engine": "z3", "reason": None, "counterexample": None, "recheck": None}
    data = seal("proof", "k1", body)
    assert (path.write_bytes(data), unseal(path, "proof", "k1"))[1] == body
    if damage == "bitflip":
        i = data.index(b"proved") + 2
        data = data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1:]
    elif damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "garbage":
        data = os.urandom(64)
    elif damage == "edit":  # well-formed JSON, hash not recomputed
        data = data.replace(b'"proved"', b'"refuted"')
    elif damage == "format":
        entry = json.loads(data)
        entry["format"] = 1
        data = json.dumps(entry).encode()
    path.write_bytes(data)
    kind, key = ("output", "k1") if damage == "foreign_kind" else ("proof", "k2" if damage == "other_key" else "k1")
    assert unseal(path, kind, key) is None


def test_a_cached_counterexample_is_rechecked_on_read(tmp_path):
    problem = refuted_problem()
    cache = ProofCache(tmp_path)
    outcome, ran = cache.decide(problem)
    assert outcome.verdict == "refuted" and ran
    key = cache.key(problem)
    body = unseal_bytes(cache.read_entry(key), "proof", key)
    # a forged entry with a valid seal: the point (1, 1) satisfies the hypotheses and also the goal
    body["counterexample"] = {"x": "1", "y": "1"}
    assert cache.write_entry(key, seal("proof", key, body))
    fresh = ProofCache(tmp_path)
    again, ran = fresh.decide(problem)
    assert ran, "the forged counterexample must be a miss"
    assert again.verdict == "refuted"
    point = {x: sp.Rational(again.counterexample["x"]), y: sp.Rational(again.counterexample["y"])}
    assert problem.goal.evaluate(point) is False
    # a counterexample naming a quantity the problem does not have is a miss too
    body["counterexample"] = {"x": "2", "y": "2", "zz": "1"}
    assert cache.write_entry(key, seal("proof", key, body))
    assert ProofCache(tmp_path).get(key, problem) is None
    # and a stored refutation is never replayed without the problem to re-check it against
    assert ProofCache(tmp_path).get(key) is None


def test_a_damaged_proof_entry_is_recomputed_and_rewritten(tmp_path):
    problem = Problem([logic.ge(x, 1)], logic.ge(x * x, 1))
    cache = ProofCache(tmp_path)
    assert cache.decide(problem)[0].verdict == "proved"
    key = cache.key(problem)
    assert cache.write_entry(key, cache.read_entry(key).replace(b'"proved"', b'"refuted"'))
    fresh = ProofCache(tmp_path)
    outcome, ran = fresh.decide(problem)
    assert ran and outcome.verdict == "proved" and fresh.writes == 1
    assert ProofCache(tmp_path).decide(problem) == (outcome, False)


def test_prune_removes_least_recently_used_first(tmp_path):
    proofs = tmp_path / "proofs" / "ab"
    proofs.mkdir(parents=True)
    now = time.time()
    for i in range(10):
        f = proofs / f"e{i}.json"
        f.write_bytes(b"x" * 1000)
        os.utime(f, (now - 1000 + i, now - 1000 + i))  # e0 is the oldest
    (tmp_path / "README").write_text("not an entry")
    assert prune(tmp_path, limit=20_000) == 0
    removed = prune(tmp_path, limit=5_000)
    left = sorted(p.name for p in proofs.iterdir())
    assert removed == 6 and left == ["e6.json", "e7.json", "e8.json", "e9.json"]
    assert (tmp_path / "README").exists()


def test_cache_info_and_clear(tmp_path, capsys):
    cache = ProofCache(tmp_path)
    cache.decide(refuted_problem())
    assert main(["cache", "info", "--json", "--cache-dir", str(tmp_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["entries"]["proofs"] == 1 and doc["total_bytes"] > 0
    (tmp_path / "keep.txt").write_text("mine")
    assert main(["cache", "clear", "--cache-dir", str(tmp_path)]) == 0
    assert "removed 1 entries" in capsys.readouterr().out
    assert cache_mod.info(tmp_path).total_bytes == 0 and (tmp_path / "keep.txt").exists()


def test_prune_takes_store_rows_and_files_alike_by_last_use(tmp_path, monkeypatch):
    now = time.time()
    cache = ProofCache(tmp_path)
    for i in range(6):  # proofs used at now-1000, now-998, ...: the odd seconds are files
        monkeypatch.setattr(cache_mod.time, "time", lambda i=i: now - 1000 + 2 * i)
        assert cache.write_entry(f"p{i}", b"x" * 1000)
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    for i in range(6):
        f = outputs / f"o{i}.json"
        f.write_bytes(b"y" * 1000)
        os.utime(f, (now - 999 + 2 * i, now - 999 + 2 * i))
    monkeypatch.undo()
    total = cache_mod.info(tmp_path).total_bytes
    assert cache_mod.info(tmp_path).entries["proofs"] == 6 and total > 12_000
    removed = prune(tmp_path, limit=total // 2)
    assert removed == 8  # down to 80 % of half (4.8 kB): the eight least recently used, rows and files in turn
    assert ProofCache(tmp_path).stored_keys() == ["p4", "p5"]
    assert sorted(p.name for p in outputs.iterdir()) == ["o4.json", "o5.json"]


def test_a_hit_marks_its_row_as_used(tmp_path, monkeypatch):
    problem = Problem([logic.ge(x, 1)], logic.ge(x * x, 1))
    monkeypatch.setattr(cache_mod.time, "time", lambda: 1000.0)
    ProofCache(tmp_path).decide(problem)
    monkeypatch.setattr(cache_mod.time, "time", lambda: 5000.0)
    assert ProofCache(tmp_path).decide(problem)[1] is False
    monkeypatch.undo()
    [row] = cache_mod._entries(tmp_path)  # noqa: SLF001 - the entry's time of last use
    assert row.used == 5000.0


def test_a_damaged_store_is_started_anew(tmp_path):
    (tmp_path / cache_mod.PROOF_STORE).write_bytes(b"not a database, " * 100)
    problem = Problem([logic.ge(x, 1)], logic.ge(x * x, 1))
    cache = ProofCache(tmp_path)
    outcome, ran = cache.decide(problem)
    assert ran and outcome.verdict == "proved" and cache.writes == 1
    assert ProofCache(tmp_path).decide(problem) == (outcome, False)


def test_the_store_is_readable_by_its_owner_only(tmp_path):
    ProofCache(tmp_path).decide(Problem([logic.ge(x, 1)], logic.ge(x * x, 1)))
    assert (tmp_path / cache_mod.PROOF_STORE).stat().st_mode & 0o077 == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forked workers")
def test_forked_workers_write_through_connections_of_their_own(tmp_path):
    """The parent's connection is open before the fork (it decided a problem); each worker opens its own, and
    every worker's entries are in the store afterwards."""
    from derive.checking.parallel import run_tasks

    cache = ProofCache(tmp_path)
    problems = [Problem([logic.ge(x, k)], logic.ge(x + 1, k)) for k in range(1, 9)]
    cache.decide(problems[0])
    tasks = [lambda p=p: cache.decide(p)[0].verdict for p in problems[1:]]
    assert run_tasks(tasks, workers=2) == ["proved"] * 7
    assert len(ProofCache(tmp_path).stored_keys()) == 8
    assert all(not ran for _, ran in map(ProofCache(tmp_path).decide, problems))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="processes that start together")
def test_processes_that_make_the_store_together_all_write_to_it(tmp_path):
    """Four processes open a store that does not exist yet at once (each makes it, sets its journal and
    table) and write twenty entries each: none is lost to another's making."""
    pids = []
    for n in range(4):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's exit code is the assertion
            cache = ProofCache(tmp_path)
            ok = all(cache.write_entry(f"k{n}-{i}", seal("proof", f"k{n}-{i}", {"n": i})) for i in range(20))
            os._exit(0 if ok else 1)
        pids.append(pid)
    assert all(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0 for pid in pids)
    assert len(ProofCache(tmp_path).stored_keys()) == 80


def test_a_python_without_sqlite_has_no_proof_store_and_no_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "sqlite3", None)  # import sqlite3 raises ImportError, as in such a build
    cache = ProofCache(tmp_path)
    problem = Problem([logic.ge(x, 1)], logic.ge(x * x, 1))
    outcome, ran = cache.decide(problem)
    assert ran and outcome.verdict == "proved" and cache.writes == 0 and cache.stored_keys() == []
    assert cache.decide(problem) == (outcome, False)  # this process's own layer still answers
    assert cache_mod.info(tmp_path).entries["proofs"] == 0 and prune(tmp_path, limit=0) == 0


def test_an_unusable_store_leaves_every_read_a_miss(tmp_path):
    (tmp_path / cache_mod.PROOF_STORE).mkdir()  # a folder where the database would be: cannot be opened
    cache = ProofCache(tmp_path)
    problem = Problem([logic.ge(x, 1)], logic.ge(x * x, 1))
    assert cache.decide(problem)[1] and cache.writes == 0 and cache.read_entry(cache.key(problem)) is None
    assert cache_mod.info(tmp_path).entries["proofs"] == 0


LIB_READING_DATA = '''
"""A library whose bound comes from a data file outside its folder and from the environment."""
import json, os, pathlib
from derive import Claim, Quantity, derived, logic

v = Quantity("v", "v", "1", "a value")
LIMIT = json.loads(pathlib.Path({data!r}).read_text())["limit"] + int(os.environ.get("EXTRA_LIMIT", "0"))
bound = Claim("ext.bound", title="v under the limit", statement="v is at most the limit.", source=derived("test"),
              goal=logic.le(v.sym, LIMIT), instance=True)
'''


def test_replay_follows_data_files_and_environment(tmp_path, capsys, monkeypatch):
    data = tmp_path / "elsewhere" / "limit.json"
    data.parent.mkdir()
    data.write_text('{"limit": 10}')
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "ext.py").write_text(LIB_READING_DATA.format(data=str(data)))
    argv = ["check", "--library", str(lib), "--set", "v=5", "--cache-dir", str(tmp_path / "c"), "--json"]
    monkeypatch.setattr("sys.argv", ["derive", *argv])

    def verdict() -> str:
        code = main(argv, replay=True)
        out = json.loads(capsys.readouterr().out)
        assert code in (0, 1)
        return out["claims"][0]["verdict"]

    assert verdict() == "proved"
    assert verdict() == "proved"  # replayed
    data.write_text('{"limit": 3}')
    assert verdict() == "refuted"  # the data file changed: not replayed
    data.write_text('{"limit": 10}')
    monkeypatch.setenv("EXTRA_LIMIT", "-7")
    assert verdict() == "refuted"  # the environment changed: not replayed


def test_library_digest_sees_what_declarations_say(tmp_path):
    from derive.model.loader import load_library

    data = tmp_path / "limit.json"
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "ext.py").write_text(LIB_READING_DATA.format(data=str(data)))
    data.write_text('{"limit": 10}')
    first = library_digest(load_library([str(lib)]))
    assert library_digest(load_library([str(lib)])) == first
    data.write_text('{"limit": 11}')
    assert library_digest(load_library([str(lib)])) != first


def test_output_cache_refuses_an_entry_with_an_exit_code_it_never_stores(tmp_path):
    oc = OutputCache(tmp_path)
    assert oc.store("k", argv=[], data_dirs=[], stdout="x\n", stderr="", exit_code=0)
    path = tmp_path / "outputs" / "k.json"
    body = unseal(path, "output", "k")
    body["exit"] = 2
    path.write_bytes(seal("output", "k", body))
    assert oc.lookup("k") is None


def test_a_replayed_proof_keeps_its_side_conditions(tmp_path):
    problem = Problem([logic.gt(x, 0)], logic.gt(1 / x, 0))
    first, ran = ProofCache(tmp_path).decide(problem)
    assert ran and first.verdict == "proved" and first.side_conditions
    again, ran = ProofCache(tmp_path).decide(problem)
    assert not ran and again == first


def test_a_damaged_document_artifact_is_a_miss(tmp_path):
    from derive.documents.store import ArtifactStore

    src = tmp_path / "src"
    src.mkdir()
    (src / "figure.svg").write_text("<svg>right</svg>")
    store = ArtifactStore(tmp_path / "cache")
    store.put("figures", "k1", src, ["figure.svg"], {"note": "x"})
    dest = tmp_path / "dest"
    assert store.get("figures", "k1", dest)["note"] == "x" and (dest / "figure.svg").read_text() == "<svg>right</svg>"
    entry = tmp_path / "cache" / "documents" / "figures-k1" / "figure.svg"
    entry.write_text("<svg>wrong</svg>")
    other = tmp_path / "other"
    assert store.get("figures", "k1", other) is None and not (other / "figure.svg").exists()
    assert cache_mod.info(tmp_path / "cache").entries["documents"] == 2  # the file and its manifest


def test_sources_digest_covers_the_whole_engine_whatever_was_imported(monkeypatch):
    """Two processes that imported different engine modules (a cold check imports the interval engine, a warm
    one need not) agree on the digest; it covers every module of the package."""
    first = cache_mod.sources_digest()
    loaded = cache_mod.loaded_source_files()
    engine = os.path.dirname(os.path.dirname(os.path.abspath(cache_mod.__file__)))
    monkeypatch.setattr(cache_mod, "loaded_source_files",
                        lambda: [f for f in loaded if not f.startswith(engine + os.sep)])
    assert cache_mod.sources_digest() == first


def test_read_tracker_records_reads_not_writes_and_puts_the_originals_back(tmp_path):
    import builtins
    import io
    import os

    from derive.checking.cache import ReadTracker

    originals = (builtins.open, io.open, os.open, os.listdir, os.scandir)
    data = tmp_path / "data.json"
    data.write_text("{}")
    written = tmp_path / "out.txt"
    with ReadTracker() as tracker:
        data.read_text()
        with open(tmp_path / "data.json", "rb"):
            pass
        written.write_text("x")
        os.listdir(tmp_path / ".")
        fd = os.open(data, os.O_RDONLY)
        os.close(fd)
    assert str(data) in tracker.paths and str(tmp_path / ".") in tracker.paths
    assert str(written) not in tracker.paths
    assert (builtins.open, io.open, os.open, os.listdir, os.scandir) == originals
    with ReadTracker() as again:
        pass
    data.read_text()  # after the run: not recorded
    assert again.paths == set()
