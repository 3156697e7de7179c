"""Every claim of the lecture library, under the lecture scenario: the verdict it is declared to get,
each derivation step checked, and no unexplained verdict."""

from __future__ import annotations

import pytest

from derive.model.loader import load_library

CLAIMS = load_library(["lecture"]).claims()


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.id)
def test_verdict_meets_expectation(report, claim):
    result = report[claim.id]
    assert result.verdict == claim.expected, result.reason
    assert all(s.outcome.verdict == "proved" for s in result.steps), [s.outcome.reason for s in result.steps]
    if result.verdict in ("unknown", "blocked", "inconsistent"):
        assert result.reason


@pytest.mark.parametrize("claim", [c for c in CLAIMS if c.expected == "refuted"], ids=lambda c: c.id)
def test_refuted_claims_are_tagged_inconsistencies(claim):
    # A claim kept only to be refuted is a reading of the lecture that does not hold: the documents box it.
    assert "inconsistency" in claim.tags


def test_refuted_instance_claims_show_their_point(report):
    for claim in CLAIMS:
        if claim.instance and report[claim.id].verdict == "refuted":
            assert report[claim.id].counterexample, claim.id
