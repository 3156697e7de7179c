"""Every claim checked on every chip × model preset pair (issue: `derive check --hardware X --model Y`
must work for all pairs, with verdicts, never a bad-input error)."""

from __future__ import annotations

import pytest

from derive.whatif.matrix import check_matrix
from derive.whatif.sweep import preset_pairs

HEADLINES = ("batching.batch_optimum", "roofline.latency_floor", "pipeline.pipeline_neutrality",
             "scaling.compute_equalisation")
VERDICTS = {"proved", "refuted", "unknown", "inconsistent", "blocked"}


@pytest.fixture(scope="module")
def matrix(lecture_library, tmp_path_factory):
    return check_matrix(["lecture"], cache_dir=str(tmp_path_factory.mktemp("matrix-cache")), workers=2)


def test_matrix_covers_every_pair(lecture_library, matrix):
    pairs = preset_pairs(lecture_library)
    assert len(pairs) >= 12 * 8
    assert [(r.hardware, r.model) for r in matrix] == pairs


def test_every_pair_checks_without_error(matrix):
    errors = [(r.hardware, r.model, r.error) for r in matrix if r.error]
    assert not errors
    for row in matrix:
        assert set(row.verdicts.values()) <= VERDICTS


def test_general_headline_claims_hold_on_every_pair(matrix):
    for row in matrix:
        for cid in HEADLINES:
            assert row.verdicts[cid] == "proved", (row.hardware, row.model, cid)


def test_hardware_dependent_claims_do_change(matrix):
    # The lecture's Rubin drain time (14.4 ms) is an instance claim: a slower HBM must refute it.
    by_pair = {(r.hardware, r.model): r for r in matrix}
    assert by_pair[("h100-sxm", "llama3-70b")].verdicts["roofline.hbm_drain_time"] == "refuted"
