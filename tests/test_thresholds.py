"""Thresholds of the headline claims: the exact edge of each input where a claim flips, the inputs and
claims left out, the cache, and the units in which documents state them."""

from __future__ import annotations

import sympy as sp

from derive.documents.thresholds import (
    Threshold,
    compute_thresholds,
    has_band,
    headline_pairs,
    thresholds,
    tolerance_band,
)
from derive.documents.values_text import si_value_text
from derive.documents.view import ModelBuilder
from derive.kernel import logic


def test_tolerance_bands_are_recognised():
    x = sp.Symbol("x", positive=True)
    band = tolerance_band(logic.within_percent(x, 2400, 1))
    assert band is not None and band.kind == "percent" and band.center == 2400 and band.amount == 1
    band = tolerance_band(logic.within_factor(x, 300, sp.Rational(5, 4)))
    assert band is not None and band.kind == "factor" and band.center == 300 and band.amount == sp.Rational(5, 4)
    assert tolerance_band(logic.ge(x, 3)) is None
    # a factor 4/3 of 128,000 is also +-28 % of 133,333: the claim's own, rounder centre is the one shown
    band = tolerance_band(logic.within_factor(x, 128000, sp.Rational(4, 3)))
    assert band is not None and band.kind == "factor" and band.center == 128000
    band = tolerance_band(logic.between(x, 1000, 10000))
    assert band is not None and band.kind == "between" and (band.low, band.high) == (1000, 10000)
    assert has_band(logic.And((logic.within_percent(x, 5, 10), logic.ge(x, 1))))


def test_about_x_and_quantified_claims_are_left_out(lecture_library):
    pairs = {(h.id, c.id) for h, c in headline_pairs(lecture_library)}
    assert ("pipeline.scaleout_viability", "pipeline.scaleout_viability") in pairs
    varied = {c for _, c in pairs}
    assert "batching.batch_optimum_lecture" not in varied  # "about 2,400": its edges are the +-1 % band
    for _, claim in headline_pairs(lecture_library):
        assert not has_band(claim.goal) and not claim.forall


def test_scaleout_threshold_is_exact_and_stated_with_units(lecture_library, lecture_scenario, report):
    rows = [r for r in compute_thresholds(lecture_library, lecture_scenario)
            if r.claim == "pipeline.scaleout_viability"]
    by_input = {r.quantity: r for r in rows}
    row = by_input["scaleout_bandwidth"]
    assert row.holds and row.high is None and row.low_exact == str(sp.Rational(5625, 100) * 10**9)
    assert row.verified is True  # z3 agreed just inside and just outside the edge
    assert set(by_input) <= {q for q in lecture_scenario.values}
    from derive.checking.checker import Report

    mb = ModelBuilder(lecture_library, lecture_scenario, Report(lecture_scenario, list(report.values())),
                      thresholds=rows)
    phrases = {t["quantity"]: t["md"] for t in mb.threshold_rows("pipeline.scaleout_viability")}
    assert phrases["scaleout_bandwidth"].endswith("$ 56.25 GB/s, 2.0× below the scenario's 112.5 GB/s")


def test_thresholds_are_cached(lecture_library, lecture_scenario, tmp_path, monkeypatch):
    first = thresholds(lecture_library, lecture_scenario, cache_dir=tmp_path)
    assert first and list((tmp_path / "documents").glob("thresholds-*.json"))
    import derive.documents.thresholds as module

    def boom(*args, **kwargs):
        raise AssertionError("recomputed although cached")

    monkeypatch.setattr(module, "compute_thresholds", boom)
    again = thresholds(lecture_library, lecture_scenario, cache_dir=tmp_path)
    assert [r.to_json() for r in again] == [r.to_json() for r in first]
    assert all(isinstance(r, Threshold) for r in again)


def test_one_scaling_rule_for_every_number():
    assert si_value_text(sp.Integer(24) * 10**15, "TFLOP/s")["md"] == "24 PFLOP/s"
    assert si_value_text(sp.Rational(5754) * 10**22, "EFLOP")["md"] == "5.754e25 FLOP"
    assert si_value_text(sp.Rational(144, 10000), "s")["md"] == "14.4 ms"
    assert si_value_text(sp.Integer(2400), "seq")["md"] == "2,400 seq"


def test_an_input_that_never_flips_the_claim_gives_no_row(lecture_library, lecture_scenario):
    """Under another scenario an input may move over its whole range without the claim flipping: no edge,
    so no threshold phrase (and no crash on the missing edge)."""
    from derive.checking.checker import Report

    t = Threshold("batching.batch_optimum_lecture", "batching.batch_optimum_lecture", "flops", 2.4e16, False,
                  None, False, None, False)
    mb = ModelBuilder(lecture_library, lecture_scenario, Report(lecture_scenario, []), thresholds=[t])
    assert mb.threshold_rows("batching.batch_optimum_lecture") == []


def test_readings_say_a_range_as_a_range_and_skip_a_value_the_hypotheses_replace(lecture_library,
                                                                                lecture_scenario):
    from derive.checking.checker import Report

    mb = ModelBuilder(lecture_library, lecture_scenario, Report(lecture_scenario, []))
    between = mb.band_reading(lecture_library.resolve("unbatched_cost_penalty_lecture"))
    assert between["range"] and between["tol_md"].startswith("between 1,000 seq and 10")
    assert between["computed"]["md"] == "2,400 seq"
    # the claim re-pins the active parameters and the precision: the scenario's own value is not its subject
    pinned = mb.band_reading(lecture_library.resolve("kv_bytes_per_token_fp8_reading"))
    assert not pinned["range"] and pinned["computed"] is None
