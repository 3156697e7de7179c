"""Derive's floors against published measurements nobody on this project produced.

Each point of tests/fixtures/published_measurements.toml (a decode or serving measurement with its chip, chip count,
model, precision, batch and prompt length, and its source) is turned into the time derive's serving library calls
a lower bound for it: the strict step floor (roofline.step_time_floor), the prefill floor (prefill.ttft_floor), and
for multi-token prediction the speculative chapter's k + 1 bound.  A floor above its measurement is a bug in derive,
never in the data.  The planted false twin shows the test can fail: the all-experts step time, which derive once
printed as a floor, is above a published Mixtral decode; and a published Medusa decode of Llama 3.1 405B is faster
than the plain step floor, which only the speculative allowance reconciles.
"""

from __future__ import annotations

import json
import tomllib
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from derive import si
from derive.checking.checker import Checker
from derive.cli import main
from derive.model.evaluate import evaluate
from derive.model.loader import load_library
from derive.model.scenario import build_scenario

DATA = Path(__file__).parent / "fixtures" / "published_measurements.toml"
POINTS = tomllib.loads(DATA.read_text())["point"]
EXCLUDED = tomllib.loads(DATA.read_text())["excluded"]
KINDS = {"per_token_including_prefill", "batch_request_latency", "speculative_per_token", "ttft",
         "throughput_compute_per_output_token"}
LATENCIES = {"batch_request_latency", "ttft"}  # measured as seconds; the other kinds as tokens per second
REQUIRED = ("id", "title", "kind", "measured", "hardware", "model", "chips", "batch", "prompt_tokens",
            "bytes_per_param", "software", "source", "where", "as_of", "precision", "assumptions")


@pytest.fixture(scope="module")
def serving():
    return load_library(["serving"])


def _scenario(lib, point: dict, extra: tuple[str, ...] = ()):
    sets = [f"chips={point['chips']}", f"batch={point['batch']} seq",
            f"context={point['prompt_tokens']} token/seq", f"prefill_tokens={point['prompt_tokens']} token/seq",
            f"bytes_per_param={point['bytes_per_param']}"]
    if "bytes_per_kv_element" in point:
        sets.append(f"bytes_per_kv_element={point['bytes_per_kv_element']}")
    sets += point.get("overrides", [])
    return build_scenario(lib, hardware=point["hardware"], model=point["model"], sets=[*sets, *extra])


def _value(lib, sc, name: str) -> Fraction:
    return Fraction(str(evaluate(lib, sc, name).exact))


def measured_seconds(point: dict) -> Fraction:
    """A request latency as it is; a rate of tokens per second as the mean time per token."""
    value = si(point["measured"])
    return value if point["kind"] in LATENCIES else 1 / value


def floor_seconds(lib, point: dict) -> Fraction:
    """The time derive bounds the measurement below by (the fixture's header says why for each kind)."""
    sc = _scenario(lib, point)
    if point["kind"] == "throughput_compute_per_output_token":
        out = point["output_tokens"]
        return (_value(lib, sc, "prefill_compute_time_with_attention") / out
                + Fraction(out - 1, out) * _value(lib, sc, "compute_time"))
    step, ttft = _value(lib, sc, "step_time_floor"), _value(lib, sc, "ttft_floor")
    if point["kind"] == "ttft":
        return ttft
    if point["kind"] == "batch_request_latency":
        return ttft + (point["output_tokens"] - 1) * step
    if point["kind"] == "speculative_per_token":
        return min(ttft, step / (point["draft_length"] + 1))
    return min(ttft, step)


def test_every_point_states_its_deployment_and_source():
    assert len(POINTS) >= 20
    assert len({p["id"] for p in POINTS}) == len(POINTS)
    for p in POINTS:
        assert all(str(p.get(k, "")).strip() for k in REQUIRED), p["id"]
        assert p["kind"] in KINDS, p["id"]
        assert p["source"].startswith("https://"), p["id"]
        if p["kind"] in {"batch_request_latency", "throughput_compute_per_output_token"}:
            assert p["output_tokens"] >= 1
        if p["kind"] == "speculative_per_token":
            assert p["draft_length"] >= 1


def test_every_exclusion_says_why():
    for e in EXCLUDED:
        assert e["id"] and e["source"] and len(e["reason"]) > 40, e


@pytest.mark.parametrize("point", POINTS, ids=[p["id"] for p in POINTS])
def test_floor_is_below_the_published_measurement(serving, point):
    floor, measured = floor_seconds(serving, point), measured_seconds(point)
    assert 0 < floor <= measured, f"{point['id']}: floor {float(floor):.6g} s above measured {float(measured):.6g} s"


@settings(max_examples=200, deadline=None)
@given(ttft=st.fractions(min_value=Fraction(1, 10**6), max_value=10), step=st.fractions(min_value=Fraction(1, 10**6),
       max_value=10), n=st.integers(1, 10**6), k=st.integers(1, 8), accepted=st.data())
def test_per_token_accounting_holds_for_any_run_length(ttft, step, n, k, accepted):
    """One prefill then n - 1 steps averages at least the smaller of the two, whatever n; with speculation each of
    the n - 1 steps yields between 1 and k + 1 tokens, so a token costs at least min(ttft, step / (k + 1))."""
    assert (ttft + (n - 1) * step) / n >= min(ttft, step)
    yields = accepted.draw(st.lists(st.integers(1, k + 1), min_size=1, max_size=20))
    tokens = 1 + sum(yields)
    assert (ttft + len(yields) * step) / tokens >= min(ttft, step / (k + 1))


def test_speculative_allowance_is_the_libraries_proved_bound(serving):
    point = next(p for p in POINTS if p["kind"] == "speculative_per_token")
    sc = _scenario(serving, point, (f"draft_length={point['draft_length']}",))
    report = Checker(serving, sc).check(["speculative.speedup_at_most_k_plus_1"])
    assert [r.verdict for r in report.results] == ["proved"]


def test_all_experts_step_time_is_no_floor_for_a_published_mixtral_decode(serving):
    """The planted false twin: reading every expert at batch 1 (the lecture's large-batch floor) puts the 'floor'
    of a published Mixtral 8x7B decode on eight A100s above the measurement; the strict floor stays below."""
    point = next(p for p in POINTS if p["id"] == "gpt-fast-mixtral-8x7b-bf16-tp8")
    sc = _scenario(serving, point, ("expert_read_fraction=1",))
    assert _value(serving, sc, "step_time") > measured_seconds(point)
    assert floor_seconds(serving, point) <= measured_seconds(point)


def test_plain_step_floor_is_no_floor_for_a_speculative_measurement(serving):
    """A real false twin: Llama 3.1 405B with Medusa on eight H200s at 108 tokens/s/user is faster than the plain
    step floor even with FP8 weights (Hopper's smallest format); only the speculative allowance of k + 1 tokens per
    step admits it, and with k unstated the point is excluded rather than held to a floor."""
    point = next(e for e in EXCLUDED if e["id"] == "nvidia-h200-llama3.1-405b-medusa")
    sc = _scenario(serving, point)
    assert _value(serving, sc, "step_time_floor") > 1 / si(point["measured"])


def _cli_args(point: dict) -> list[str]:
    sets = [f"chips={point['chips']}", f"batch={point['batch']} seq", f"context={point['prompt_tokens']} token/seq",
            f"prefill_tokens={point['prompt_tokens']} token/seq", f"bytes_per_param={point['bytes_per_param']}",
            *([f"bytes_per_kv_element={point['bytes_per_kv_element']}"] if "bytes_per_kv_element" in point else []),
            *point.get("overrides", [])]
    return ["--library", "serving", "--hardware", point["hardware"], "--model", point["model"],
            *(arg for s in sets for arg in ("--set", s))]


FIRST_OF_EACH_KIND = [next(p for p in POINTS if p["kind"] == kind) for kind in sorted(KINDS)]


@pytest.mark.parametrize("point", FIRST_OF_EACH_KIND, ids=[p["id"] for p in FIRST_OF_EACH_KIND])
def test_command_line_gives_the_same_floors(serving, point, capsys):
    """`derive eval --json` with the point's values prints the numbers the floor is built from."""
    names = ["step_time_floor", "ttft_floor", "prefill_compute_time_with_attention", "compute_time"]
    assert main(["eval", *names, "--json", *_cli_args(point)]) == 0
    printed = {v["name"]: Fraction(v["exact"]) for v in json.loads(capsys.readouterr().out)["values"]}
    sc = _scenario(serving, point)
    assert printed == {name: _value(serving, sc, name) for name in names}
