"""diff's explanation lines read the statement the verdict was decided on (with the claim's equality
hypotheses), so they never contradict the verdict."""

from __future__ import annotations

import pytest

from derive.model.scenario import build_scenario
from derive.whatif.diff import diff
from derive.whatif.explain import at_hypotheses, explain_flips, violations


@pytest.fixture(scope="module")
def bandwidth_report(lecture_library, lecture_scenario):
    current = build_scenario(lecture_library, sets=["hbm_bandwidth=40 TB/s"], si=True)
    report = diff(lecture_library, lecture_scenario, current)
    explain_flips(report)
    return report


def test_a_proved_side_has_no_violation(lecture_library, bandwidth_report) -> None:
    r = bandwidth_report
    checked = 0
    for cid in r.changed():
        claim = lecture_library.declarations[cid]
        if not claim.instance:
            continue
        for scenario, verdict in ((r.baseline, r.before[cid].verdict), (r.current, r.after[cid].verdict)):
            if verdict == "proved":
                assert violations(lecture_library, scenario, claim) == [], cid
                checked += 1
    assert checked >= 5


def test_the_fp4_reading_shows_the_value_its_verdict_used(lecture_library, bandwidth_report) -> None:
    info = bandwidth_report.explanations["context.kv_bytes_per_token_fp4_reading"]
    (now,) = [v for v in info["violations"] if v["when"] == "now"]
    assert now["quantity"] == "kv_bytes_implied" and now["value"] == "1.667 kB/token"  # the claim's 1,667, not 616.7


def test_equality_hypothesis_sets_the_forall_quantity(lecture_library, lecture_scenario) -> None:
    claim = lecture_library.declarations["context.kv_bytes_per_token_fp4_reading"]
    sc = at_hypotheses(lecture_library, lecture_scenario, claim)
    assert sc.value("params_active") == sc.value("frontier_params_active") != lecture_scenario.value("params_active")
    general = lecture_library.declarations["roofline.latency_floor"]
    assert at_hypotheses(lecture_library, lecture_scenario, general) is lecture_scenario
