"""Fuzz the strings of --set, --assume, eval, --unit and --vary through the real command line.

A grammar generator and a mutation fuzzer (``fuzzkit``) make the cases; each runs ``derive.cli.main`` in a
worker process under a per-case time limit and is held to the contract in ``fuzzkit.violations``: no hang,
no traceback or untyped error, one escaped stderr line and exit 2 for bad input, strict JSON, and no code
execution (canary file, audit hook).  ``FUZZ_SEED`` and ``FUZZ_CASES`` change the seed and the number of
generated cases (bench/fuzz.py runs many more).
"""

from __future__ import annotations

import os
import random

import fuzzkit as fk
import pytest

SEED = int(os.environ.get("FUZZ_SEED", "20261123"))
CASES = int(os.environ.get("FUZZ_CASES", "360"))


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fuzz-strings")
    canary = tmp / "CANARY"
    generated = fk.string_cases(random.Random(SEED), CASES, str(canary))
    cases = ([(argv, what, "bad") for argv, what in fk.KNOWN_BAD]
             + [(argv, what, "good") for argv, what in fk.KNOWN_GOOD]
             + [(argv, what, "") for argv, what in generated])
    results = fk.run_many([c[0] for c in cases], workers=2,
                          env={"DERIVE_CACHE_DIR": str(tmp / "cache"), "FUZZ_CWD": str(tmp)})
    by_argv = {tuple(o.argv): o for o in results}
    return [(c, by_argv[tuple(c[0])]) for c in cases], canary


def _report(pairs, canary) -> list[str]:
    lines = []
    for (argv, what, kind), o in pairs:
        for v in fk.violations(o, canaries=[canary], bad=kind == "bad", good=kind == "good"):
            lines.append(f"{what}: {argv!r:.300}: {v}")
    return lines


def test_known_bad_inputs_are_one_line_exit_2(outcomes):
    pairs, canary = outcomes
    known = [(c, o) for c, o in pairs if c[2] == "bad"]
    assert len(known) == len(fk.KNOWN_BAD)
    bad = _report(known, canary)
    assert not bad, "\n".join(bad)


def test_known_good_inputs_end_promptly_with_a_value(outcomes):
    pairs, canary = outcomes
    good = [(c, o) for c, o in pairs if c[2] == "good"]
    bad = _report(good, canary)
    assert not bad, "\n".join(bad)
    by_what = {c[1]: o for c, o in good}
    assert "1.078e4342944819" in by_what["exp(10**10) within the budget"].out
    assert '"value": null' in by_what["exp(1000) as strict JSON"].out
    assert '"exact": "100000000000000000001/100000000000000000000"' in by_what["exact sum"].out
    assert '"exact": "1/10000000000000000000000000000000000000000"' in by_what["tiny"].out
    assert '"exact": "39845888/1080078125"' in by_what["exact rational"].out


def test_generated_strings_hold_the_contract(outcomes):
    pairs, canary = outcomes
    generated = [(c, o) for c, o in pairs if c[2] == ""]
    assert len(generated) == CASES
    bad = _report(generated, canary)
    assert not bad, f"{len(bad)} of {len(generated)} cases break the contract:\n" + "\n".join(bad[:30])
    codes = {o.code for _, o in generated}
    assert {0, 2} <= codes, "the generator should make both accepted and refused input"
