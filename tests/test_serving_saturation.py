"""Part II, chapter saturation (theorems/serving/saturation.py): capacity from the step times, utilisation and its
exact margin, Little's law against DeepSeek's published decode throughput and output speed, the M/M/1 queue-wait
bound as numbers (textbook values), the 22 % overestimate, and bad input."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.model.loader import load_library
from theorems.serving import saturation

LIB = load_library(["serving"])


# the chapter's definitions, expanded down to the lecture's step times (not further)
CHAPTER_DEFS = {d.defines.sym: d.expr for d in (saturation.service_time, saturation.capacity, saturation.utilisation,
                                                saturation.in_service, saturation.queue_rate)}


def at(expr: sp.Expr, **values) -> Fraction:
    """An expression of the chapter, expanded to the step times, at exact values given by symbol name."""
    full = expr
    for _ in CHAPTER_DEFS:
        full = full.xreplace(CHAPTER_DEFS)
    full = full.xreplace({q.sym: q.value for q in LIB.quantities.values() if q.value is not None})
    subs = {s: sp.Rational(str(values[s.name])) for s in full.free_symbols if s.name in values}
    out = full.subs(subs)
    assert not out.free_symbols, out.free_symbols
    return Fraction(str(out))


def queue_wait(lam, mu) -> Fraction:
    # the named assumption saturation.mm1_queue: W_q = rho * sigma / (mu - lam), sigma = one request
    return Fraction(lam) / Fraction(mu) / (Fraction(mu) - Fraction(lam))


def test_capacity_is_the_batch_over_the_service_time():
    # 64 requests, a 0.5 s prefill pass, 1,000 output tokens at 20 ms a step: 64 / 20.5 s
    got = at(saturation.mu, batch=64, prefill_step_time=Fraction(1, 2), step_time=Fraction(2, 100),
             output_tokens=1000, tokens_per_step=1)
    assert got == Fraction(64, 1) / Fraction(41, 2)


@pytest.mark.parametrize("speed", [20, 22])
def test_littles_law_deepseek_decode_node(speed):
    # DeepSeek's inference system overview (open-source week, day 6, 2025-03-01): 14.8k output tokens/s per H800
    # decode node, 20-22 output tokens/s per request.  Requests in service = arrivals x time in service, whatever
    # the output length: 14,800 / speed sequences per node, about 670-740.
    for out in (500, 1000, 4000):
        lam = Fraction(14800, out)  # requests per second completing their `out` tokens
        in_service = at(saturation.L_s, arrival_rate=lam, prefill_step_time=0, step_time=Fraction(1, speed),
                        output_tokens=out, tokens_per_step=1)
        assert in_service == Fraction(14800, speed)
    assert 670 < Fraction(14800, 22) < Fraction(14800, 20) < 741


@pytest.mark.parametrize(("rho", "waits"), [(Fraction(1, 2), 1), (Fraction(9, 10), 9), (Fraction(99, 100), 99)])
def test_mm1_textbook_waits(rho, waits):
    # Kleinrock vol. 1, section 3.2: W_q = rho / (mu (1 - rho)), in units of the mean service time 1/mu
    mu = Fraction(10)
    assert queue_wait(rho * mu, mu) * mu == waits


@pytest.mark.parametrize(("w", "mu"), [(Fraction(1, 10), Fraction(10)), (Fraction(2), Fraction(3, 7)),
                                       (Fraction(1, 1000), Fraction(250))])
def test_queue_rate_bound_meets_the_target_exactly(w, mu):
    lam_w = at(saturation.lam_w, queue_wait_target=w, batch=mu, prefill_step_time=1, step_time=0,
               output_tokens=1, tokens_per_step=1)  # capacity mu = batch / 1 s
    assert queue_wait(lam_w, mu) == w
    assert mu - lam_w == mu / (1 + w * mu)


@given(lam=st.fractions(Fraction(1, 100), 1000), mu=st.fractions(Fraction(1, 100), 1000),
       w=st.fractions(Fraction(1, 1000), 100))
@settings(max_examples=300, deadline=None)
def test_queue_rate_bound_decides_the_target(lam, mu, w):
    if lam >= mu:
        return
    lam_w = w * mu * mu / (1 + w * mu)
    assert (queue_wait(lam, mu) <= w) == (lam <= lam_w)


def test_overestimate_of_22_percent_saturates_at_85_percent():
    # the 22 % capacity overestimate: planning for 85 % of the estimate is 103.7 % of the true capacity
    assert Fraction(85, 100) * Fraction(122, 100) == Fraction(1037, 1000)
    # the largest safe plan is 1 / 1.22 = 82 % of the estimate
    assert Fraction(81, 100) < 1 / Fraction(122, 100) < Fraction(82, 100)


@pytest.mark.parametrize("bad", ["arrival_rate=-1 seq/s", "output_tokens=0 token/seq", "queue_wait_target=-5 ms"])
def test_negative_saturation_input_is_one_line_exit_2(bad):
    proc = subprocess.run([sys.executable, "-m", "derive", "eval", "--library", "serving", "--set", bad,
                           "request_capacity"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
