"""Throughput and saturation: capacity in requests per second, utilisation, Little's law, and a queue-wait target

Chapter 6 of part II ("Beyond the lecture").  The lecture prices one step; a service receives requests.  A
replica that serves B requests together, prefilling their prompts in one pass and then decoding ℓ_out tokens
each, completes B requests per service time: that is its capacity μ in requests per second for the request
mix (ℓ, ℓ_out).  Requests arriving at rate λ load it to utilisation ρ = λ/μ; past ρ = 1 the queue grows
without end, and short of it the wait depends on a queueing model, named here: M/M/1.

Main claims:
- **Saturation** ``saturation.utilisation_below_one_iff``: utilisation is below 1 exactly when the arrival
  rate is below the capacity, with the exact margin μ − λ = μ(1 − ρ).
- **Little's law** ``saturation.littles_law_in_service``: the requests in service are λ·S = ρ·B: a replica
  at utilisation ρ keeps ρ of its batch slots busy.
- **Queue-wait target** ``saturation.queue_wait_under_target_iff``: under the named assumption
  ``saturation.mm1_queue`` the mean wait in queue is at most w exactly when λ ≤ λ_w = wμ²/(σ + wμ);
  ``saturation.queue_rate_margin``: λ_w stays below the capacity by exactly σμ/(σ + wμ).
- ``saturation.overestimate_saturates_iff``: a capacity overestimated by a factor 1 + e and loaded to a
  planned utilisation u of the estimate saturates exactly when u(1 + e) ≥ 1;
  ``saturation.overestimate_22_percent_at_85`` (22 % over, planned 85 %: saturated) and its refuted twin.

Notation: B requests (sequences) served together, ℓ prompt tokens and ℓ_out output tokens per request, τ
tokens per sequence per decode step, T the decode step time, T_pre the prefill pass time, S the service time
of a batch, μ = B/S the capacity, λ the arrival rate, ρ = λ/μ, σ = 1 seq (one request), w a target for the
mean wait in queue.

Implementation notes: the capacity model is static batching with equal lengths (a batch is prefilled, then
decoded to its end, every request of the mix alike); continuous batching refills a slot as soon as a request
ends and has the same capacity for equal lengths.  The step times are the lecture's (``roofline.step_time``,
``pricing.prefill_step_time``), so the capacity is the lecture's reading, an estimate rather than a proved ceiling:
its prefill counts the output head for every prompt token (a server runs it on the last) and no attention, and its
decode step reads each sequence's whole cache (a sparse attention reads less).  M/M/1 (Poisson
arrivals, exponential service, one server of rate μ, first come first served) is an assumption a user can
see: it ignores that a batch serves B requests at once, and is the textbook baseline, not a fit.

References: Little 1961, "A Proof for the Queuing Formula: L = λW", Operations Research 9(3); Kleinrock
1975, "Queueing Systems, Volume 1: Theory", section 3.2 (M/M/1: mean wait in queue ρ/(μ − λ)); Yu et al.
2022, "Orca: A Distributed Serving System for Transformer-Based Generative Models" (OSDI '22), section 2
(static against iteration-level batching).
"""

from __future__ import annotations

import sympy as sp

from derive import Assumption, Claim, Definition, Quantity, Step, derived, logic, paper
from theorems.pricing import prefill_step_time_q, prefill_tokens
from theorems.roofline import B, step_time_q, tau

PART = "Beyond the lecture"  # the documents render this library's chapters as part II
CHAPTER = "Throughput and saturation"

T, T_pre = step_time_q.sym, prefill_step_time_q.sym

_LITTLE = paper("Little 1961, A Proof for the Queuing Formula: L = λW, Operations Research 9(3)", "theorem")
_KLEINROCK = paper("Kleinrock 1975, Queueing Systems, Volume 1: Theory", "section 3.2: M/M/1, W_q = ρ/(μ − λ)")
_ORCA = paper("Yu et al. 2022, Orca: A Distributed Serving System for Transformer-Based Generative Models "
              "(OSDI '22)", "section 2: requests batched, prefilled, then decoded step by step")

# Inputs -----------------------------------------------------------------------------------------------
output_tokens = Quantity("output_tokens", r"\ell_{\mathrm{out}}", "token/seq", "output tokens per request of the mix")
arrival_rate = Quantity("arrival_rate", r"\lambda", "seq/s", "requests arriving per second at one replica",
                        display_unit="seq/s")
queue_wait_target = Quantity("queue_wait_target", r"w", "s", "target for the mean time a request waits in queue",
                             display_unit="ms")
one_request = Quantity("one_request", r"\sigma", "seq", "one request (one sequence), the unit a queue counts in",
                       value=1, source=derived("a request is one sequence"))
capacity_overestimate = Quantity("capacity_overestimate", "e", "1",
                                 "by how much an estimate exceeds the true capacity (0.22 for 22 %)",
                                 domain="nonnegative")
planned_utilisation = Quantity("planned_utilisation", "u", "1",
                               "utilisation of the estimated capacity a deployment is planned for")

ell_out, lam, w, sigma = output_tokens.sym, arrival_rate.sym, queue_wait_target.sym, one_request.sym
e_over, u_plan = capacity_overestimate.sym, planned_utilisation.sym

# Derived ----------------------------------------------------------------------------------------------
service_time_q = Quantity("service_time", "S", "s", "time a replica takes to serve one batch of the mix: one "
                          "prefill pass, then the decode steps of the output", display_unit="s")
capacity_q = Quantity("request_capacity", r"\mu", "seq/s", "requests one replica completes per second at the mix")
utilisation_q = Quantity("utilisation", r"\rho", "1", "arrival rate over capacity")
in_service_q = Quantity("requests_in_service", r"L_{\mathrm{s}}", "seq",
                        "mean requests in service (Little's law over the service time)")
queue_wait_q = Quantity("mm1_queue_wait", r"W_{\mathrm{q}}", "s",
                        "mean time a request waits in queue under M/M/1 (negative past saturation: no steady state)",
                        domain="real", display_unit="ms")
queue_rate_q = Quantity("queue_wait_rate_bound", r"\lambda_{w}", "seq/s",
                        "largest arrival rate whose M/M/1 mean wait in queue meets the target")

S, mu, rho, L_s, W_q, lam_w = (service_time_q.sym, capacity_q.sym, utilisation_q.sym, in_service_q.sym,
                               queue_wait_q.sym, queue_rate_q.sym)

# Assumption -------------------------------------------------------------------------------------------
mm1_queue = Assumption(
    "saturation.mm1_queue", title="M/M/1: Poisson arrivals, exponential service, one server",
    statement="The replica is read as one first-come-first-served server of rate μ fed by Poisson arrivals, with "
              "exponentially distributed service; the mean wait in queue is then ρ/(μ − λ) per request, and a "
              "steady state exists only below saturation.",
    source=_KLEINROCK,
    relation=logic.eq(W_q, rho * sigma / (mu - lam)),
)

# Definitions ------------------------------------------------------------------------------------------
service_time = Definition(
    "saturation.service_time", title="Service time of a batch",
    statement="One prefill pass of the batch's prompts, then one decode step per output token.",
    source=_ORCA, defines=service_time_q, expr=T_pre + ell_out * T / tau,
)
capacity = Definition(
    "saturation.request_capacity", title="Capacity in requests per second",
    statement="B requests complete every service time.",
    source=_ORCA, defines=capacity_q, expr=B / S,
)
utilisation = Definition(
    "saturation.utilisation", title="Utilisation",
    statement="The arrival rate over the capacity.",
    source=_KLEINROCK, defines=utilisation_q, expr=lam / mu,
)
in_service = Definition(
    "saturation.requests_in_service", title="Requests in service",
    statement="Little's law: arrivals per second times the time each spends in service.",
    source=_LITTLE, defines=in_service_q, expr=lam * S,
)
queue_rate = Definition(
    "saturation.queue_wait_rate_bound", title="Arrival rate that meets a queue-wait target",
    statement="Where the M/M/1 mean wait in queue equals the target.",
    source=_KLEINROCK, defines=queue_rate_q, expr=w * mu**2 / (sigma + w * mu),
)

# Claims -----------------------------------------------------------------------------------------------
utilisation_below_one_iff = Claim(
    "saturation.utilisation_below_one_iff", title="Below capacity exactly when utilisation is below 1",
    label="Saturation",
    statement="Utilisation is below 1 exactly when requests arrive slower than the capacity, and the headroom "
              "μ − λ is exactly μ(1 − ρ).",
    source=_KLEINROCK,
    goal=logic.And((logic.Iff(logic.lt(rho, 1), logic.lt(lam, mu)), logic.eq(mu - lam, mu * (1 - rho)))),
)
littles_law_in_service = Claim(
    "saturation.littles_law_in_service", title="Little's law: ρ of the batch slots are busy",
    label="Little's law",
    statement="The mean number of requests in service is the utilisation times the batch: at ρ = 1 every slot "
              "is busy, and no more requests than B are ever in service on average below saturation.",
    source=_LITTLE,
    goal=logic.And((logic.eq(L_s, rho * B), logic.Iff(logic.le(L_s, B), logic.le(rho, 1)))),
)
queue_wait_under_target_iff = Claim(
    "saturation.queue_wait_under_target_iff", title="The mean queue wait meets its target up to λ_w",
    label="Queue-wait target",
    statement="Below saturation and under M/M/1, the mean wait in queue is at most the target w exactly when the "
              "arrival rate is at most \\(\\lambda_{w} = w\\mu^{2}/(\\sigma + w\\mu)\\).",
    source=_KLEINROCK,
    hypotheses=(logic.lt(lam, mu),),
    goal=logic.Iff(logic.le(W_q, w), logic.le(lam, lam_w)),
    steps=(
        Step(logic.Iff(logic.le(W_q, w), logic.le(lam * sigma, w * mu * (mu - lam))),
             r"substitute \(\rho = \lambda/\mu\) and multiply by the positive \(\mu(\mu - \lambda)\)", link="implies"),
        Step(logic.Iff(logic.le(W_q, w), logic.le(lam * (sigma + w * mu), w * mu**2)),
             "collect the arrival rate's terms", link="implies"),
        Step(logic.Iff(logic.le(W_q, w), logic.le(lam, lam_w)), r"divide by the positive \(\sigma + w\mu\)",
             link="implies"),
    ),
    uses=(mm1_queue,),
)
queue_rate_margin = Claim(
    "saturation.queue_rate_margin", title="A queue-wait target always leaves headroom",
    statement="The arrival rate that meets a finite wait target is below the capacity by exactly "
              "\\(\\sigma\\mu/(\\sigma + w\\mu)\\): the tighter the target, the wider the margin.",
    source=_KLEINROCK,
    goal=logic.And((logic.eq(mu - lam_w, sigma * mu / (sigma + w * mu)), logic.lt(lam_w, mu))),
)
overestimate_saturates_iff = Claim(
    "saturation.overestimate_saturates_iff", title="An overestimated capacity saturates exactly at u(1 + e) ≥ 1",
    statement="If the capacity is overestimated by a factor 1 + e and requests arrive at a planned utilisation u "
              "of the estimate, the replica is saturated exactly when u(1 + e) ≥ 1.",
    source=_KLEINROCK,
    hypotheses=(logic.eq(lam, u_plan * (1 + e_over) * mu),),
    goal=logic.Iff(logic.ge(lam, mu), logic.ge(u_plan * (1 + e_over), 1)),
)

# Worked example: the 22 % overestimate (a capacity model 22 % high), planned at 85 % of the estimate
_OVER22_FORALL = (capacity_overestimate, planned_utilisation, arrival_rate, output_tokens, prefill_tokens)
_OVER22 = (logic.eq(e_over, sp.Rational(22, 100)), logic.eq(u_plan, sp.Rational(85, 100)))
overestimate_22_percent_at_85 = Claim(
    "saturation.overestimate_22_percent_at_85", title="22 % over, planned at 85 %: saturated",
    statement="A capacity estimate 22 % too high, loaded to 85 % of it, sends requests at 1.037 times the true "
              "capacity: the queue grows without end.",
    source=_KLEINROCK,
    hypotheses=(*_OVER22, logic.eq(lam, u_plan * (1 + e_over) * mu)),
    goal=logic.ge(lam, mu),
    instance=True, forall=_OVER22_FORALL, uses=(overestimate_saturates_iff,),
)
overestimate_22_percent_at_85_stable = Claim(
    "saturation.overestimate_22_percent_at_85_stable", title="False twin: 85 % of a 22 % overestimate is safe",
    statement="Planning for 85 % of a capacity estimate 22 % too high keeps the replica below saturation.",
    source=_KLEINROCK,
    hypotheses=(*_OVER22, logic.eq(lam, u_plan * (1 + e_over) * mu)),
    goal=logic.lt(lam, mu),
    instance=True, forall=_OVER22_FORALL, expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of saturation.overestimate_22_percent_at_85: 0.85 × 1.22 = 1.037.",
)

PROSE = (
    "A replica that serves B requests together, prefilling their prompts and then decoding their outputs, completes "
    "B requests per service time: its capacity for the request mix.  Arrivals load it to utilisation ρ.",
    "{{result:utilisation_below_one_iff}}",
    "Little's law turns the utilisation into busy batch slots.",
    "{{result:littles_law_in_service}}",
    "Short of saturation the wait depends on a queueing model; under the textbook M/M/1 a finite target on the mean "
    "wait in queue gives an exact largest arrival rate, always below the capacity.",
    "{{result:queue_wait_under_target_iff}}",
    "A capacity model that is 22 % high, planned at 85 % of its estimate, already runs past saturation: the queue, "
    "and with it the time to first token, grows without end.",
)
