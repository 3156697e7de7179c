"""The proof cache and the output cache: exact invalidation, corrupt entries tolerated, atomic writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from whatif_fixture import BASE_SETS, load, write_library

import derive.checking.cache as cache_mod
from derive.checking.cache import OutputCache, ProofCache, ResultsCache
from derive.checking.checker import Checker
from derive.cli import main
from derive.model.scenario import build_scenario
from derive.whatif.diff import own_results


@pytest.fixture()
def lib(tmp_path):
    return load(tmp_path)


def scen(lib, *sets):
    values = dict(s.split("=", 1) for s in BASE_SETS)
    values.update(dict(s.split("=", 1) for s in sets))
    return build_scenario(lib, sets=[f"{k}={v}" for k, v in values.items()])


def calls_per_claim(lib, scenario, cache, rlimit=None):
    """Prover calls each claim needed (0 = every problem came from the cache)."""
    checker = Checker(lib, scenario, cache=cache, **({"rlimit": rlimit} if rlimit else {}))
    out = {}
    for c in lib.claims():
        before = checker.prover_calls
        checker.check_own(c)
        out[c.id] = checker.prover_calls - before
    return out


def test_warm_check_runs_no_prover(lib, tmp_path):
    cache = ProofCache(tmp_path / "c")
    assert calls_per_claim(lib, scen(lib), cache) == {c.id: 1 for c in lib.claims()}
    fresh = ProofCache(tmp_path / "c")  # a new process: nothing in memory, everything on disk
    assert sum(calls_per_claim(lib, scen(lib), fresh).values()) == 0
    assert fresh.hits == 4 and fresh.misses == 0


def test_changed_value_invalidates_exactly_its_dependants(lib, tmp_path):
    cache = ProofCache(tmp_path / "c")
    calls_per_claim(lib, scen(lib), cache)
    # cc is used by fx.inst_c only; aa by fx.inst_r only (general claims never see values)
    assert calls_per_claim(lib, scen(lib, "cc=7"), ProofCache(tmp_path / "c")) == \
        {"fx.general": 0, "fx.inst_r": 0, "fx.inst_c": 1, "fx.dep": 0}
    assert calls_per_claim(lib, scen(lib, "aa=12"), ProofCache(tmp_path / "c")) == \
        {"fx.general": 0, "fx.inst_r": 1, "fx.inst_c": 0, "fx.dep": 0}
    # a pin cuts the definition in instance claims only
    assert calls_per_claim(lib, scen(lib, "ratio=3"), ProofCache(tmp_path / "c")) == \
        {"fx.general": 0, "fx.inst_r": 1, "fx.inst_c": 0, "fx.dep": 0}


def test_rlimit_and_engine_version_invalidate(lib, tmp_path, monkeypatch):
    cache = ProofCache(tmp_path / "c")
    calls_per_claim(lib, scen(lib), cache)
    assert sum(calls_per_claim(lib, scen(lib), ProofCache(tmp_path / "c"), rlimit=1234567).values()) == 4
    monkeypatch.setattr(cache_mod, "engine_fingerprint", lambda: "another engine")
    assert sum(calls_per_claim(lib, scen(lib), ProofCache(tmp_path / "c")).values()) == 4


def test_engine_fingerprint_reads_every_kernel_module_the_trusted_base_included():
    names = [name for name, _ in cache_mod.kernel_sources()]
    assert "trusted/gate.py" in names and "trusted/query.py" in names and "prover.py" in names
    assert names == sorted(names)
    kernel = Path(cache_mod.__file__).resolve().parent.parent / "kernel"
    assert len(names) == len(list(kernel.rglob("*.py")))


def test_cached_outcome_equals_fresh_outcome(lib, tmp_path):
    scenario = scen(lib, "aa=3")
    fresh = Checker(lib, scenario).check().to_json()
    Checker(lib, scenario, cache=ProofCache(tmp_path / "c")).check()
    cached = Checker(lib, scenario, cache=ProofCache(tmp_path / "c")).check().to_json()
    for a, b in zip(fresh["claims"], cached["claims"], strict=True):
        a.pop("seconds"), b.pop("seconds")
        assert a == b


@pytest.mark.parametrize("garbage", [b"", b"{", b"\x00\xff", b'{"key": "other", "outcome": {}}',
                                     b'{"outcome": {"verdict": "proved"}}', b"[1, 2]"])
def test_corrupt_entries_are_misses(lib, tmp_path, garbage):
    cache = ProofCache(tmp_path / "c")
    calls_per_claim(lib, scen(lib), cache)
    keys = ProofCache(tmp_path / "c").stored_keys()
    assert len(keys) == 4 and cache.writes == 4
    for key in keys:
        assert cache.write_entry(key, garbage)
    assert sum(calls_per_claim(lib, scen(lib), ProofCache(tmp_path / "c")).values()) == 4
    results = ResultsCache(tmp_path / "c")
    key = results.key(scen(lib), 1, ["fx.general"])
    (tmp_path / "c" / "results").mkdir(parents=True, exist_ok=True)
    (tmp_path / "c" / "results" / f"{key}.json").write_bytes(garbage)
    assert results.get(key) is None


def test_unwritable_cache_is_not_an_error(lib, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    cache = ProofCache(blocker / "c")  # cannot be created: writes fail silently
    assert sum(calls_per_claim(lib, scen(lib), cache).values()) == 4
    assert cache.writes == 0


def test_writes_leave_no_temporary_files(lib, tmp_path):
    calls_per_claim(lib, scen(lib), ProofCache(tmp_path / "c"))
    assert not [p for p in (tmp_path / "c").rglob("*") if p.name.endswith(".tmp")]


def test_results_cache_round_trip(lib, tmp_path):
    scenario = scen(lib, "aa=3")
    own = own_results(Checker(lib, scenario), lib.claims())
    rc = ResultsCache(tmp_path / "c")
    key = rc.key(scenario, 10, list(own))
    assert rc.put(key, own)
    back = rc.get(key, confirm=Checker(lib, scenario).confirms)
    assert {i: (r.verdict, r.counterexample, r.reason) for i, r in back.items()} == \
        {i: (r.verdict, r.counterexample, r.reason) for i, r in own.items()}


def test_results_cache_replays_a_counterexample_only_when_the_kernel_confirms_it(lib, tmp_path):
    scenario = scen(lib, "aa=3")
    checker = Checker(lib, scenario)
    own = own_results(checker, lib.claims())
    refuted = [r for r in own.values() if r.verdict == "refuted"]
    assert refuted
    rc = ResultsCache(tmp_path / "c")
    key = rc.key(scenario, 10, list(own))
    rc.put(key, own)
    assert rc.get(key) is None  # a refuted result is never replayed unchecked
    for r in refuted:  # a sealed entry whose counterexample does not refute (stale, or forged)
        r.counterexample = {k: "1" for k in r.counterexample}
    rc.put(key, own)
    assert rc.get(key, confirm=checker.confirms) is None


def test_output_cache_replays_until_an_input_changes(tmp_path, capsys, monkeypatch):
    folder = write_library(tmp_path)
    argv = ["check", "--library", str(folder), "--cache-dir", str(tmp_path / "c"),
            *sum((["--set", s] for s in BASE_SETS), [])]
    monkeypatch.setattr("sys.argv", ["derive", *argv])
    assert main(argv, replay=True) == 0
    first = capsys.readouterr().out

    def boom(*a, **k):
        raise AssertionError("the checker ran")

    monkeypatch.setattr(Checker, "check", boom)
    assert main(argv, replay=True) == 0  # replayed: the checker never ran
    assert capsys.readouterr().out == first
    preset = folder / "presets" / "hardware" / "fast.toml"
    preset.write_text(preset.read_text().replace('"10"', '"11"'))  # an input file changed: run again
    assert main(argv, replay=True) == 2
    assert "the checker ran" in capsys.readouterr().err
    assert main([*argv, "--no-cache"], replay=True) == 2  # --no-cache never replays


def test_output_cache_corrupt_entry(tmp_path):
    oc = OutputCache(tmp_path)
    key = oc.run_key(["check"])
    oc.store(key, argv=["check"], data_dirs=[], stdout="x\n", stderr="", exit_code=0)
    assert oc.lookup(key) == ("x\n", "", 0)
    path = tmp_path / "outputs" / f"{key}.json"
    data = json.loads(path.read_text())
    data["exit"] = "zero"
    path.write_text(json.dumps(data))
    assert oc.lookup(key) is None
    path.write_bytes(b"\x00")
    assert oc.lookup(key) is None
    os.remove(path)
    assert oc.lookup(key) is None


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                    max_leaves=20))
def test_sealed_entry_is_the_canonical_json_of_head_and_digest(body):
    """``seal`` writes the body once; its bytes are those of the whole entry serialised canonically."""
    head = {"format": cache_mod.FORMAT, "kind": "proof", "key": "k", "body": body}
    whole = cache_mod._canonical({**head, "sha": cache_mod._sha(cache_mod._canonical(head))}).encode()
    assert cache_mod.seal("proof", "k", body) == whole


def test_atomic_write_makes_a_missing_folder_and_survives_a_stale_temporary_name(tmp_path, monkeypatch):
    target = tmp_path / "a" / "b" / "entry.json"
    assert cache_mod.atomic_write(target, b"one") and target.read_bytes() == b"one"
    # a temporary file left under the name this process would use next (a dead process of the same pid)
    monkeypatch.setattr(cache_mod, "_TEMPORARY", iter([7, 8]))
    stale = target.parent / f".{target.name}.{os.getpid()}-7.tmp"
    stale.write_bytes(b"stale")
    assert cache_mod.atomic_write(target, b"two") and target.read_bytes() == b"two"
    assert stale.read_bytes() == b"stale"  # not taken over
    assert [p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")] == [stale.name]
