"""The prover's first point of a region (the simple point, repaired) is kept per region: a claim's outcome,
derivation steps included, is the same whichever claims were checked before it in the process."""

from __future__ import annotations

import json
import subprocess
import sys

_SCRIPT = """
import json, sys
from derive.checking.checker import Checker
from derive.model.loader import load_library
from derive.model.scenario import build_scenario

lib = load_library(["lecture"])
claims = [c for c in lib.claims() if c.steps][:24]
if sys.argv[1] == "reversed":
    claims.reverse()
checker = Checker(lib, build_scenario(lib), workers=1, cache=None)
out = {}
for c in claims:
    r = checker.check_own(c)
    out[c.id] = [r.verdict, r.engine, r.reason, r.counterexample, r.side_conditions,
                 [[s.index, s.outcome.verdict, s.outcome.engine, s.outcome.reason] for s in r.steps]]
print(json.dumps(out, sort_keys=True, default=str))
"""


def _outcomes(order: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _SCRIPT, order], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_outcomes_do_not_depend_on_the_order_claims_are_checked_in():
    forward, backward = _outcomes("forward"), _outcomes("reversed")
    assert len(forward) == 24 and any(v[5] for v in forward.values())
    assert forward == backward
