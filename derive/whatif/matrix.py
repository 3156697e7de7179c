"""The chip × model matrix of real checks (``derive sweep --presets --check``).

``check_matrix`` runs the real checker (z3 verdicts) for every hardware × model preset pair, on two worker
processes, re-checking per pair only the claims the pair's values reach (the ``derive.whatif.diff``
dependency analysis) and reusing a verdict whenever a claim meets exactly the values it met before (a
hardware-only claim is proved once per chip, not once per chip and model).  ``matrix_csv`` writes the
verdicts as deterministic CSV.  Numeric sweeps, which prove nothing, are ``derive.whatif.sweep``'s.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from derive.errors import DeriveError
from derive.model.declarations import Claim
from derive.model.library import Library
from derive.whatif.sweep import preset_pairs


@dataclass
class MatrixRow:
    hardware: str
    model: str
    verdicts: dict[str, str]
    rechecked: int
    reused: int
    prover_calls: int
    pinned: list[str] = field(default_factory=list)
    error: str | None = None


_WORKER: dict = {}


def _worker_init(library_specs: Sequence[str], scenario: str | None, sets: Sequence[str],
                 assumes: Sequence[str], ids: Sequence[str] | None, rlimit: int, cache_dir: str | None,
                 with_base: bool = True) -> None:
    from derive.checking.cache import ProofCache, ResultsCache, library_digest, sources_digest
    from derive.checking.checker import Checker
    from derive.model.loader import load_library
    from derive.model.scenario import build_scenario

    lib = load_library(list(library_specs))
    cache = ProofCache(cache_dir) if cache_dir else None
    # the baseline may break an input rule that a pair's chip and model meet (--set ep=3 over the lecture's 256
    # experts, where Kimi K2 has 384): each pair is refused or checked on its own, as sweep --presets marks it
    base = build_scenario(lib, scenario=scenario, sets=sets, assumes=assumes, refuse_broken_rules=False)
    claims = _matrix_claims(lib, ids)
    results = ResultsCache(cache_dir) if cache_dir else None
    # the library's own digest joins the sources: a library may read data files or the environment
    sources = f"{sources_digest()}:{library_digest(lib)}" if results else None
    _WORKER.clear()
    _WORKER.update(lib=lib, cache=cache, base=base, claims=claims, rlimit=rlimit, scenario=scenario, sets=sets,
                   assumes=assumes, memo={}, results=results, sources=sources)
    if with_base:
        _WORKER["base_own"] = _own_for(Checker(lib, base, rlimit=rlimit, cache=cache))


def _base_part(ids: Sequence[str]) -> list[dict]:
    """Own results of some claims under the baseline (the pool splits the baseline between workers)."""
    from derive.checking.cache import result_to_json
    from derive.checking.checker import Checker

    w = _WORKER
    checker = Checker(w["lib"], w["base"], rlimit=w["rlimit"], cache=w["cache"])
    wanted = set(ids)
    return [result_to_json(checker.check_own(c)) for c in w["claims"] if c.id in wanted]


def _own_for(checker) -> dict:
    """Own results of the worker's claims under the checker's scenario, through the results cache."""
    from derive.whatif.diff import own_results

    w = _WORKER
    claims, results = w["claims"], w["results"]
    ids = [c.id for c in claims]
    key = results.key(checker.scenario, w["rlimit"], ids, w["sources"]) if results else None
    own = results.get(key, confirm=checker.confirms) if results else None
    if own is None or not set(own) >= set(ids):
        own = own_results(checker, claims)
        if results:
            results.put(key, own)
    return own


def _matrix_claims(lib: Library, ids: Sequence[str] | None) -> list[Claim]:
    from derive.whatif.diff import select_claims

    return select_claims(lib, ids)


def _check_pair(pair: tuple[str, str]) -> MatrixRow:
    from derive.checking.checker import Checker
    from derive.model.scenario import build_scenario
    from derive.whatif.diff import Dependencies, affected_claims, with_blocking

    w = _WORKER
    lib, claims, base = w["lib"], w["claims"], w["base"]
    hw, model = pair
    try:
        scen = build_scenario(lib, scenario=w["scenario"], hardware=hw, model=model, sets=w["sets"],
                              assumes=w["assumes"])
    except DeriveError as err:
        return MatrixRow(hw, model, {}, 0, 0, 0, error=err.one_line())
    checker = Checker(lib, scen, rlimit=w["rlimit"], cache=w["cache"])
    results = w["results"]
    key = results.key(scen, w["rlimit"], [c.id for c in claims], w["sources"]) if results else None
    cached = results.get(key, confirm=checker.confirms) if results else None
    if cached is not None and set(cached) >= {c.id for c in claims}:
        final = with_blocking(checker, claims, cached)
        return MatrixRow(hw, model, {i: r.verdict for i, r in final.items()}, 0, len(claims), 0, sorted(scen.pinned))
    reach = affected_claims(lib, base, scen, claims)
    deps = w.setdefault("deps", Dependencies(lib))
    memo: dict = w["memo"]
    own = {}
    rechecked = reused = 0
    for c in claims:
        if c.id not in reach:
            own[c.id] = w["base_own"][c.id]
            continue
        pins = scen.pinned if c.instance else frozenset()
        used = sorted(deps.of_claim(c, pins) - {q.name for q in c.forall})
        signature = (c.id, pins, tuple((n, scen.value(n)) for n in used),
                     tuple(t for t, _ in scen.assumptions))
        if signature in memo:
            own[c.id] = memo[signature]
            reused += 1
        else:
            own[c.id] = memo[signature] = checker.check_own(c)
            rechecked += 1
    if results:
        results.put(key, own)
    final = with_blocking(checker, claims, own)
    return MatrixRow(hw, model, {i: r.verdict for i, r in final.items()}, rechecked, reused, checker.prover_calls,
                     sorted(scen.pinned))


def check_matrix(library_specs: Sequence[str], *, pairs: Sequence[tuple[str, str]] | None = None,
                 scenario: str | None = None, sets: Sequence[str] = (), assumes: Sequence[str] = (),
                 ids: Sequence[str] | None = None, rlimit: int | None = None, cache_dir: str | None = None,
                 workers: int = 2, progress: Callable[[int, int], None] | None = None) -> list[MatrixRow]:
    """Real checks (z3 verdicts) of the library for every hardware × model pair, on ``workers`` processes.

    Pairs are split so that each worker takes whole hardware presets (its in-memory memo then reuses
    hardware-only verdicts across models).  ``workers=1`` runs in this process.  ``progress(done, total)``:
    told the pairs checked so far."""
    from derive.kernel.problem import DEFAULT_RLIMIT
    from derive.model.loader import load_library

    rlimit = rlimit or DEFAULT_RLIMIT
    if pairs is None:
        pairs = preset_pairs(load_library(list(library_specs)))
    pairs = list(pairs)
    init_args = (list(library_specs), scenario, list(sets), list(assumes), list(ids) if ids else None, rlimit,
                 cache_dir)
    tell = progress or (lambda done, total: None)
    if workers <= 1 or len(pairs) < 2:
        _worker_init(*init_args)
        rows = []
        for p in pairs:
            rows.append(_check_pair(p))
            tell(len(rows), len(pairs))
        return rows
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    by_hw: dict[str, list[tuple[str, str]]] = {}
    for p in pairs:
        by_hw.setdefault(p[0], []).append(p)
    chunks: list[list[tuple[str, str]]] = [[] for _ in range(workers)]
    for i, hw in enumerate(sorted(by_hw)):
        chunks[i % workers].extend(by_hw[hw])
    base_json = _cached_base(init_args)
    # spawn, not fork: a parent that has already used z3 must not hand its solver state to children
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_worker_init,
                             initargs=(*init_args, False)) as pool:
        if base_json is None:  # the baseline, split between the workers (claims interleaved)
            ids_all = [c.id for c in _matrix_claims(load_library(list(library_specs)), ids)]
            parts = list(pool.map(_base_part, [ids_all[i::workers] for i in range(workers)]))
            by_id = {r["id"]: r for part in parts for r in part}
            base_json = [by_id[i] for i in ids_all]
            _store_base(init_args, base_json)
        tell(0, len(pairs))
        futures = [pool.submit(_check_chunk, (c, base_json)) for c in chunks if c]
        results = []
        for future in as_completed(futures):  # counts as workers finish; the order is restored below
            results.append(future.result())
            tell(sum(len(r) for r in results), len(pairs))
    by_pair = {(r.hardware, r.model): r for chunk in results for r in chunk}
    return [by_pair[p] for p in pairs]


def _base_key(init_args):
    from derive.checking.cache import ResultsCache, library_digest, sources_digest
    from derive.checking.checker import Checker
    from derive.model.loader import load_library
    from derive.model.scenario import build_scenario

    specs, scenario, sets, assumes, ids, rlimit, cache_dir = init_args
    if not cache_dir:
        return None, None, None
    lib = load_library(list(specs))
    base = build_scenario(lib, scenario=scenario, sets=sets, assumes=assumes, refuse_broken_rules=False)
    results = ResultsCache(cache_dir)
    sources = f"{sources_digest()}:{library_digest(lib)}"
    key = results.key(base, rlimit, [c.id for c in _matrix_claims(lib, ids)], sources)
    return results, key, Checker(lib, base, rlimit=rlimit).confirms  # replayed counterexamples are re-checked


def _cached_base(init_args) -> list[dict] | None:
    from derive.checking.cache import result_to_json

    results, key, confirm = _base_key(init_args)
    own = results.get(key, confirm=confirm) if results else None
    return None if own is None else [result_to_json(r) for r in own.values()]


def _store_base(init_args, base_json: list[dict]) -> None:
    from derive.checking.cache import result_from_json

    results, key, _ = _base_key(init_args)
    if results:
        results.put(key, {r["id"]: result_from_json(r) for r in base_json})


def _check_chunk(task) -> list[MatrixRow]:
    from derive.checking.cache import result_from_json

    pairs, base_json = task
    if "base_own" not in _WORKER:
        _WORKER["base_own"] = {r["id"]: result_from_json(r) for r in base_json}
    return [_check_pair(p) for p in pairs]


def matrix_csv(rows: Sequence[MatrixRow], claim_ids: Sequence[str]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["hardware", "model", *claim_ids, "pinned", "error"])
    for r in rows:
        w.writerow([r.hardware, r.model, *[r.verdicts.get(i, "") for i in claim_ids], " ".join(r.pinned),
                    r.error or ""])
    return buf.getvalue()
