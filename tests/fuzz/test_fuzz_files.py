"""Fuzz scenario TOML files and config.json files through --scenario and --model.

Seeds are mutated structurally (types, nesting, huge integers, payload strings in relations), as text
and byte by byte (bit flips, truncation, other encodings); each file is read by the real command line in a
worker process and held to the contract of ``fuzzkit.violations``.
"""

from __future__ import annotations

import json
import os
import random

import fuzzkit as fk
import pytest

SEED = int(os.environ.get("FUZZ_SEED", "20261123"))
FILES = int(os.environ.get("FUZZ_FILES", "120"))

KNOWN_BAD_TOML = {
    "not-utf8": fk.SCENARIO_SEED.encode("utf-16"),
    "latin1": "[values.flops]\nvalue = \"989 TFLOP/s\"\nsource = \"caf\xe9\"\n".encode("latin-1"),
    "deep": b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n",
    "assume-int": b"assume = 5\n",
    "assume-table": b"[assume]\nx = 1\n",
    "digits": b"[values.flops]\nvalue = " + b"9" * 5000 + b"\nsource = \"s\"\n",
    "digits-text": b"[values.flops]\nvalue = \"" + b"9" * 5000 + b" FLOP/s\"\nsource = \"s\"\n",
    "values-int": b"values = 5\n",
    "value-missing": b"[values.flops]\nsource = \"s\"\n",
    "nan": b"[values.flops]\nvalue = nan\nsource = \"s\"\n",
    "escape": b"[values.flops]\nvalue = \"1\\u001b[2J TFLOP/s\"\nsource = \"s\"\n",
    "newline-key": b"[values.\"flops\\nrm\"]\nvalue = 1\nsource = \"s\"\n",
}
KNOWN_BAD_JSON = {
    "deep": b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "digits": b'{"hidden_size": ' + b"9" * 5000 + b"}",
    "not-object": b"[1, 2]",
    "not-utf8": json.dumps(fk.CONFIG_SEED).encode("utf-16"),
    "nan": b'{"hidden_size": NaN}',
    "truncated": json.dumps(fk.CONFIG_SEED).encode()[:40],
    "empty": b"",
}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fuzz-files")
    canary = tmp / "CANARY"
    r = random.Random(SEED)
    cases = []
    for name, data in KNOWN_BAD_TOML.items():
        path = tmp / f"bad-{name}.toml"
        path.write_bytes(data)
        cases.append((["eval", "flops / hbm_bandwidth", "--scenario", str(path)], f"toml {name}", "bad"))
    for name, data in KNOWN_BAD_JSON.items():
        path = tmp / f"bad-{name}.json"
        path.write_bytes(data)
        cases.append((["eval", "params_total", "--model", str(path)], f"config.json {name}", "bad"))
    seed_toml, seed_json = tmp / "seed.toml", tmp / "seed.json"
    seed_toml.write_text(fk.SCENARIO_SEED)
    seed_json.write_text(json.dumps(fk.CONFIG_SEED))
    cases.append((["eval", "flops / hbm_bandwidth", "--scenario", str(seed_toml), "--json"], "toml seed", "good"))
    cases.append((["eval", "params_total", "--model", str(seed_json), "--json"], "config.json seed", "good"))
    for i in range(FILES):
        if i % 2:
            path = tmp / f"f{i}.toml"
            path.write_bytes(fk.gen_scenario_toml(r, str(canary)))
            argv = ["eval", r.choice(["flops / hbm_bandwidth", "flops"]), "--scenario", str(path)]
        else:
            path = tmp / f"f{i}.json"
            path.write_bytes(fk.gen_config_json(r, str(canary)))
            argv = ["eval", r.choice(["params_total", "params_active", "num_layers"]), "--model", str(path)]
        cases.append((argv + (["--json"] if r.random() < 0.3 else []), path.name, ""))
    results = fk.run_many([c[0] for c in cases], workers=2,
                          env={"DERIVE_CACHE_DIR": str(tmp / "cache"), "FUZZ_CWD": str(tmp)})
    by_argv = {tuple(o.argv): o for o in results}
    return [(c, by_argv[tuple(c[0])]) for c in cases], canary


def _report(pairs, canary) -> list[str]:
    return [f"{what}: {v}" for (argv, what, kind), o in pairs
            for v in fk.violations(o, canaries=[canary], bad=kind == "bad", good=kind == "good")]


def test_malformed_files_are_typed_one_line_errors(outcomes):
    pairs, canary = outcomes
    known = [(c, o) for c, o in pairs if c[2] in ("bad", "good")]
    bad = _report(known, canary)
    assert not bad, "\n".join(bad)
    for (_argv, what, kind), o in known:
        if kind == "bad":
            assert "(in " in o.err, f"{what}: the error names no file: {o.err}"


def test_mutated_files_hold_the_contract(outcomes):
    pairs, canary = outcomes
    generated = [(c, o) for c, o in pairs if c[2] == ""]
    bad = _report(generated, canary)
    assert not bad, f"{len(bad)} of {len(generated)} files break the contract:\n" + "\n".join(bad[:30])

