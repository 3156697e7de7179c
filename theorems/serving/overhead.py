"""Decode time per output token with a named per-step overhead

Chapter 4 of part II ("Beyond the lecture").  The lecture's decode step is the roofline alone.  A served
step also pays a time no roofline counts: kernel launches, sampling, the scheduler and the API server,
which serving engines have measured at more than half of a small model's step.  This chapter names that
time, adds it to the time per output token (TPOT), and says what it changes: the floors still hold, the
compute/memory balance does not move, and the cost per token still never rises with the batch, but a
token costs more, and the overhead is a small share of TPOT only past an exact step time.

Main claims:
- ``overhead.tpot``: TPOT = T + o, the roofline step plus the named overhead o
  (``overhead.step_overhead_is_additive``).
- ``overhead.tpot_floors_hold``: TPOT is at least the step time and the weight-fetch time (the lecture's
  latency floor still holds); ``overhead.overhead_leaves_balance``: whether a step is compute- or
  memory-bound does not depend on o, so the critical batch does not move.
- **Overhead share** ``overhead.overhead_share_below_iff``: the overhead is at most a fraction f of TPOT
  exactly when T ≥ o·(1 - f)/f.
- ``overhead.cost_with_overhead_nonincreasing``: with overhead, a larger batch still never costs more per
  token; ``overhead.cost_with_overhead_above``: and every token costs p·n·o/(B·τ) more.

Notation: o per-step overhead (seconds), T the lecture's roofline step time, f a fraction of TPOT.

Implementation notes: o is one number per step, the same whatever the batch (launch and sampling costs
that grow with the batch belong in the roofline terms); a measurement can set it for a chip and a serving
stack with ``--set decode_step_overhead=...``.

References: the vLLM team, "vLLM v0.6.0: 2.7x Throughput Improvement and 5x Latency Reduction"
(blog.vllm.ai, 2024-09-05: on an H100 with Llama 3 8B, the API server took 33 % and scheduling 29 % of the
time, model execution 38 %); NVIDIA, CUDA C++ Best Practices Guide, "CUDA graphs" (launch overhead).
"""

from __future__ import annotations

import sympy as sp

from derive import Assumption, Claim, Definition, Quantity, logic, spec
from theorems.roofline import (
    B2,
    B,
    compute_time_q,
    memory_time_q,
    n,
    p_chip,
    step_time_at,
    step_time_q,
    tau,
    weight_fetch_time_q,
)

PART = "Beyond the lecture"  # the documents render this library's chapters as part II
CHAPTER = "Decode time per output token"

_VLLM = spec("the vLLM team, vLLM v0.6.0: 2.7x Throughput Improvement and 5x Latency Reduction, "
             "https://blog.vllm.ai/2024/09/05/perf-update.html", "2024-09",
             "Llama 3 8B on one H100: API server 33 %, scheduling 29 %, model execution 38 % of the time")

step_overhead = Quantity("decode_step_overhead", r"o", "s",
                         "time a served decode step spends outside the roofline: launches, sampling, scheduling",
                         domain="nonnegative", display_unit="ms")
share_fraction = Quantity("overhead_share", "f", "1", "a fraction of the time per output token")
tpot_q = Quantity("tpot", r"T_{\mathrm{TPOT}}", "s", "time per output token of one sequence: the roofline step "
                  "plus the per-step overhead", display_unit="ms")
cost_with_overhead_q = Quantity("cost_per_token_with_overhead", r"c_{\mathrm{tok}}^{o}", "USD/token",
                                "rental cost of the chips for one served step, shared by its tokens")

o, f, T_tpot, c_o = step_overhead.sym, share_fraction.sym, tpot_q.sym, cost_with_overhead_q.sym
T, t_w = step_time_q.sym, weight_fetch_time_q.sym
t_c, t_mem = compute_time_q.sym, memory_time_q.sym

step_overhead_is_additive = Assumption(
    "overhead.step_overhead_is_additive", title="The per-step overhead adds to the roofline step",
    statement="The launches, sampling and scheduling of a step do not overlap its kernels and take the same time "
              "whatever the batch; so they add one constant per step.",
    source=_VLLM,
)

tpot = Definition(
    "overhead.tpot", title="Time per output token",
    statement="Each decode step yields one token per sequence and lasts the roofline step plus the overhead.",
    source=_VLLM, defines=tpot_q, expr=T + o, uses=(step_overhead_is_additive,),
)
cost_with_overhead = Definition(
    "overhead.cost_per_token_with_overhead", title="Cost per token with the overhead",
    statement="The rental of every chip for one served step, shared by the tokens the step produces.",
    source=_VLLM, defines=cost_with_overhead_q, expr=p_chip * n * T_tpot / (B * tau),
)

tpot_floors_hold = Claim(
    "overhead.tpot_floors_hold", title="The floors hold with the overhead",
    statement="Time per output token is at least the roofline step and at least the weight-fetch time: the "
              "lecture's latency floor stays a floor.",
    source=_VLLM,
    goal=logic.And((logic.ge(T_tpot, T), logic.ge(T_tpot, t_w))),
)
overhead_leaves_balance = Claim(
    "overhead.overhead_leaves_balance", title="The overhead does not move the critical batch",
    statement="Compute and memory times do not contain the overhead, so a step is compute-bound with it exactly "
              "when it is without it.",
    source=_VLLM,
    goal=logic.Iff(logic.ge(t_c + o, t_mem + o), logic.ge(t_c, t_mem)),
)
overhead_share_below_iff = Claim(
    "overhead.overhead_share_below_iff", title="The overhead is a small share only past a step time",
    label="Overhead share",
    statement=r"The overhead is at most a fraction \(f < 1\) of the time per output token exactly when the "
              r"roofline step lasts at least \(o (1 - f)/f\).",
    source=_VLLM,
    hypotheses=(logic.lt(f, 1),),
    goal=logic.Iff(logic.le(o, f * T_tpot), logic.ge(T, o * (1 - f) / f)),
)
cost_with_overhead_nonincreasing = Claim(
    "overhead.cost_with_overhead_nonincreasing", title="With overhead a bigger batch still never costs more",
    statement="The overhead is shared by the batch like the weight reads, so the cost per token still never "
              "rises with the batch.",
    source=_VLLM,
    hypotheses=(logic.le(B, B2),),
    goal=logic.le(p_chip * n * (step_time_at(B2) + o) / (B2 * tau), c_o),
)
cost_with_overhead_above = Claim(
    "overhead.cost_with_overhead_above", title="The overhead's price per token",
    statement="Every token costs the lecture's cost per token plus the overhead's rental shared by the batch.",
    source=_VLLM,
    goal=logic.eq(c_o, p_chip * n * step_time_at(B) / (B * tau) + p_chip * n * o / (B * tau)),
)
vllm_small_model_overhead = Claim(
    "overhead.vllm_small_model_overhead", title="vLLM before 0.6 on Llama 3 8B: overhead above half the step",
    statement="With the API server (33 %) and scheduling (29 %) taking 62 % of a step against 38 % for the model, "
              "the overhead is above half of TPOT: the roofline step is below o·(1 - 1/2)/(1/2) = o.",
    source=_VLLM,
    hypotheses=(logic.eq(o, sp.Rational(62, 38) * T), logic.eq(f, sp.Rational(1, 2))),
    goal=logic.gt(o, f * T_tpot),
    uses=(overhead_share_below_iff,),
)

PROSE = (
    "A served decode step is longer than its roofline: launches, sampling and scheduling add a time the lecture "
    "does not count.  Named as one overhead per step, it adds to the time per output token and leaves the "
    "lecture's floors standing.",
    "{{result:overhead_share_below_iff}}",
    "vLLM's team measured 62 % of a small model's step outside the model on an H100 before their 0.6 release; "
    "the share falls as the step grows with the model or the batch.",
)
