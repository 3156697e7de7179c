"""Part II, chapter speculative (theorems/serving/speculative.py): Leviathan et al.'s tokens per verification
against the geometric sum it stands for, the speed-up at the roofline's regimes, the exact break-even and stop
batch as numbers, DeepSeek-V3's published multi-token-prediction speed-up, and bad input."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.model.evaluate import evaluate
from derive.model.loader import load_library
from derive.model.scenario import build_scenario

LIB = load_library(["serving"])
H100_70B = {"hardware": "h100-sxm", "model": "llama3-70b"}


def value(text: str, sets=(), **kw) -> Fraction:
    return Fraction(str(evaluate(LIB, build_scenario(LIB, sets=list(sets), **kw), text).exact))


def frac(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


@given(a=st.fractions(0, Fraction(99, 100)), k=st.integers(1, 8))
@settings(max_examples=40, deadline=None)
def test_iid_tokens_are_the_geometric_sum(a, k):
    got = value("iid_accepted_tokens", [f"acceptance_rate={frac(a)}", f"draft_length={k}"])
    assert got == sum(a**i for i in range(k + 1))
    assert 1 <= got <= k + 1


def test_leviathan_example_tokens_per_step():
    # eq. 1 at a = 0.8, k = 4: 1 + 0.8 + ... + 0.8^4 = 3.3616
    assert value("iid_accepted_tokens", ["acceptance_rate=0.8", "draft_length=4"]) == Fraction(33616, 10000)


def spec(batch: str, tokens: Fraction, k: int = 1, draft: str = "0", context: str = "4096") -> list[str]:
    return [f"batch={batch} seq", f"context={context} token/seq", f"draft_length={k}",
            f"accepted_tokens_per_step={frac(tokens)}", f"draft_cost_ratio={draft}"]


def test_deepseek_mtp_ceiling_above_published_speedup():
    # DeepSeek-V3 report 5.4.3: second-token acceptance 85-90 %, 1.8x TPS; a small memory-bound batch
    for rate in (Fraction(85, 100), Fraction(90, 100)):
        s = value("speculative_speedup", spec("1", 1 + rate), model="deepseek-v3", hardware="h200")
        assert s == 1 + rate
        assert s >= Fraction(18, 10)


def test_memory_bound_speedup_is_tokens_over_draft_cost():
    s = value("speculative_speedup", spec("1", Fraction(3), k=4, draft="1/20"), **H100_70B)
    assert s == Fraction(3) / (1 + Fraction(4, 20))


def test_speedup_never_above_k_plus_one_at_any_batch():
    for batch in ("1", "64", "512", "4096"):
        s = value("speculative_speedup", spec(batch, Fraction(5), k=4), **H100_70B)
        assert s <= 5


def test_stop_batch_is_exact():
    sets = spec("1", Fraction(17, 10), context="256")
    b_stop = value("speculative_stop_batch", sets, **H100_70B)
    at = spec(frac(b_stop), Fraction(17, 10), context="256")
    assert value("speculative_speedup", at, **H100_70B) == 1
    below = spec(frac(b_stop * Fraction(99, 100)), Fraction(17, 10), context="256")
    above = spec(frac(b_stop * Fraction(101, 100)), Fraction(17, 10), context="256")
    assert value("speculative_speedup", below, **H100_70B) > 1 > value("speculative_speedup", above, **H100_70B)
    # the stop batch lies below the critical batch: speculation stops paying before decode is compute-bound
    assert b_stop < value("critical_batch_kv", sets, **H100_70B)


def test_break_even_matches_speedup_one():
    sets = spec("256", Fraction(2), k=3, draft="1/10")
    e_star = value("speculative_break_even", sets, **H100_70B)
    assert value("speculative_speedup", spec("256", e_star, k=3, draft="1/10"), **H100_70B) == 1


def test_acceptance_rate_of_one_leaves_the_formula_undefined():
    # a probability of 1 is an acceptance rate, but the geometric sum's closed form is undefined there
    sc = build_scenario(LIB, sets=["acceptance_rate=1", "draft_length=3"])
    result = evaluate(LIB, sc, "iid_accepted_tokens")
    assert result.exact is None and "acceptance_rate < 1" in result.reason


@pytest.mark.parametrize("bad", ["acceptance_rate=-0.1", "acceptance_rate=3/2", "draft_cost_ratio=-1",
                                 "accepted_tokens_per_step=0", "draft_length=0"])
def test_negative_or_zero_input_is_one_line_exit_2(bad):
    proc = subprocess.run([sys.executable, "-m", "derive", "eval", "--library", "serving", "--set", bad,
                           "speculative_speedup"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
