"""Every claim of the serving library's own chapters, under the lecture scenario: the verdict it is declared to
get, each derivation step checked; and the lecture's claims keep their verdicts when the serving library is
loaded beside them."""

from __future__ import annotations

import pytest

from derive.checking.checker import Checker
from derive.model.loader import load_library
from derive.model.scenario import build_scenario
from theorems.serving import SERVING_TOPICS

SERVING = load_library(["serving"])
CHAPTERS = {m.__name__.rsplit(".", 1)[-1] for m in SERVING_TOPICS}
CLAIMS = [c for c in SERVING.claims() if c.topic in CHAPTERS]


@pytest.fixture(scope="module")
def serving_whole():
    return Checker(SERVING, build_scenario(SERVING)).check()


@pytest.fixture(scope="module")
def serving_report(serving_whole):
    return serving_whole.by_id()


def test_every_definition_meets_its_declaration(serving_whole):
    # a whole check holds every definition to its declared domain, those no claim uses included (the i.i.d.
    # acceptance length, declared positive, was not shown so at a = 0 until it said its value there)
    assert [(f.definition, f.declares, f.reason) for f in serving_whole.findings] == []


def test_every_chapter_has_claims():
    assert {c.topic for c in CLAIMS} == CHAPTERS


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.id)
def test_verdict_meets_expectation(serving_report, claim):
    result = serving_report[claim.id]
    assert result.verdict == claim.expected, result.reason
    assert all(s.outcome.verdict == "proved" for s in result.steps), [s.outcome.reason for s in result.steps]


@pytest.mark.parametrize("claim", [c for c in CLAIMS if c.expected == "refuted"], ids=lambda c: c.id)
def test_refuted_claims_are_false_twins_with_a_counterexample(serving_report, claim):
    assert "inconsistency" in claim.tags
    assert serving_report[claim.id].counterexample


def test_lecture_verdicts_unchanged_beside_serving(report, serving_report):
    # the lecture's claims, checked inside the serving library, get the verdicts they get alone
    lecture_ids = [c.id for c in SERVING.claims() if c.topic not in CHAPTERS]
    assert lecture_ids and set(lecture_ids) == set(report)
    alone = {cid: report[cid].verdict for cid in lecture_ids}
    assert {cid: serving_report[cid].verdict for cid in lecture_ids} == alone


def test_both_libraries_load_each_part_once():
    both = load_library(["lecture", "serving"])
    assert [c.id for c in both.claims()] == [c.id for c in SERVING.claims()]
    assert len({f.id for f in both.figures}) == len(both.figures)
    assert len(set(both.preset_dirs)) == len(both.preset_dirs)
    assert len(set(both.headlines)) == len(both.headlines)


def test_every_serving_declaration_has_a_source_and_statement():
    for d in SERVING.declarations.values():
        if d.topic in CHAPTERS:
            assert d.source is not None and str(d.source), d.id
            assert d.statement and d.title, d.id
