"""Mixture of experts across a rack: expert parallelism and the size of the scale-up domain

Chapter 2 of the lecture ("How MoE models are laid out across GPU racks", 00:32:09-00:47:12).  An
MoE layer sends each token to a few of many experts.  Spreading the experts over the GPUs of one rack
(expert parallelism) turns every layer into an all-to-all exchange, which the rack's scale-up network
carries well and the scale-out network between racks, about 8 times slower, does not.  So one rack
bounds an expert layer, and the rack's pooled memory bounds the total parameters a model can have
without pipelining.

Main claims:
- ``moe.moe_expert_parallel_layout``: DeepSeek's 256 experts on 64 of an NVL72's 72 GPUs, 4 per GPU,
  each token routed to 1 in 32 of them; ``moe.moe_routing_vs_sparsity`` (expected ``refuted``) and
  ``moe.moe_sparsity_32_of_256`` hold the two readings of chapter 1's "32 of 256".
- **Rack bound** ``moe.moe_rack_bound``: spreading one MoE layer over R racks sends a fraction
  (R-1)/R of the tokens over scale-out, and that share takes (R-1)·r times as long as the in-rack
  share; ``moe.moe_rack_bound_lecture``: with two racks, half the tokens leave and take 8x as long.
- ``moe.scaleout_bandwidth_ratio_and_rack``: racks hold about 64 accelerators and scale-out is about
  8x slower (``moe.scaleout_about_8x_slower``, ``moe.rack_about_64``).
- ``moe.scaleup_domain_growth``: 8 (Hopper) to 72 (Blackwell) to "500 and something" (Rubin), with
  at least a genuine 4x (``moe.scaleup_growth_genuine_4x``; a summary's reading is refuted in
  ``moe.scaleup_growth_seed_reading``).
- ``moe.scaleup_capacity_unlock``: without pipelining the total parameters are bounded by the scale-up
  domain's pooled HBM, the active ones by compute cost; 8 Hoppers hold 640 GB
  (``moe.hopper_box_capacity``), too little for a trillion parameters at FP8, while a Blackwell rack
  holds a 5T model with room for KV.

Notation: E_tot routed experts per MoE layer (``experts_total``), E_act routed experts per token
(``experts_active``), n chips in the scale-up domain (``chips``), n_rack accelerators in a rack
(``rack_chips``), R racks one expert layer spans (``expert_layer_racks``), a bytes of a token's
activation, W_up and W_out scale-up and scale-out bandwidth per chip, r = W_up/W_out.

Implementation notes: ``experts_total`` and ``experts_active`` are declared in the roofline chapter (the weights
a decode step reads depend on them) and re-exported here; ``scaleup_bandwidth``, ``scaleout_bandwidth``,
``token_activation_bytes`` and r (``scaleout_slowdown``) are declared here, where the lecture
introduces them, and the pipeline chapter imports them.  Routing is taken as uniform: a token's expert is in any
rack with equal probability.  The all-to-all counts dispatch and combine (factor 2) as in
``pipeline.stage_scaleup_time``; it cancels from every ratio here.  The rack count is a real number
>= 2 for the prover: the claims hold for every real value, so for every whole one, and declaring it
an integer would make the problems nonlinear integer arithmetic, which z3 decides slowly.  The
10-20 TB capacity of a Blackwell rack is ``pipeline.rack_capacity_ten_to_twenty_tb``.

References: the lecture, 00:32-00:47; DeepSeek-AI 2024, "DeepSeek-V3 Technical Report" (256 routed
experts, 8 per token); NVIDIA DGX H100 and GB200 NVL72 specifications.
"""

from __future__ import annotations

import sympy as sp

from derive import Assumption, Claim, Definition, Quantity, Step, lecture, logic, si, spec

from .batching import INCONSISTENCY, deepseek_v3_params, sparsity_q
from .roofline import (
    B,
    C,
    F,
    N_act,
    N_tot,
    S_kv,
    c_fwd,
    cost_per_token_and_floor,
    cost_per_token_q,
    experts_active,
    experts_total,
    n,
    p_chip,
    q,
)

CHAPTER = "How MoE models are laid out across GPU racks"

# Quantities -------------------------------------------------------------------------------------------
rack_chips = Quantity("rack_chips", r"n_{\mathrm{rack}}", "1", "accelerators physically in one rack")
expert_layer_racks = Quantity("expert_layer_racks", "R", "1", "racks one MoE layer's experts are spread over",
                               integer=True)
experts_per_chip_q = Quantity("experts_per_chip", r"E_{\mathrm{chip}}", "1", "experts each chip holds")
routing_fraction_q = Quantity("routing_fraction", r"\phi", "1", "fraction of the routed experts a token uses")
cross_rack_fraction_q = Quantity("cross_rack_fraction", r"f_{\times}", "1",
                                 "share of a layer's routed tokens whose expert sits in another rack (none on one "
                                 "rack)",
                                 domain="nonnegative")
alltoall_inrack_time_q = Quantity("alltoall_inrack_time", r"t_{\mathrm{in}}", "s/token",
                                  "scale-up time per token of the in-rack share of one MoE layer's all-to-all",
                                  display_unit="ns/token")
alltoall_crossrack_time_q = Quantity("alltoall_crossrack_time", r"t_{\times}", "s/token",
                                     "scale-out time per token of the cross-rack share of one MoE layer's "
                                     "all-to-all (none on one rack)", domain="nonnegative", display_unit="ns/token")
scaleup_capacity_q = Quantity("scaleup_capacity", r"C_{\mathrm{su}}", "byte",
                              "HBM pooled over the scale-up domain", display_unit="TB")
scaleup_domain_hopper = Quantity(
    "scaleup_domain_hopper", r"n_{\mathrm{Hopper}}", "1", "GPUs in a Hopper scale-up domain (HGX/DGX H100)",
    value=8, source=spec("NVIDIA DGX H100 (8 GPUs joined by NVLink 4), per stas00/ml-engineering network README",
                         "2022-03"),
)
scaleup_domain_blackwell = Quantity(
    "scaleup_domain_blackwell", r"n_{\mathrm{Blackwell}}", "1", "GPUs in a Blackwell rack scale-up domain (NVL72)",
    value=72, source=spec("NVIDIA GB200 NVL72 (72 GPUs in one NVLink domain), per jax-ml/scaling-book gpus.md",
                          "2024-03"),
)
scaleup_domain_rubin = Quantity(
    "scaleup_domain_rubin", r"n_{\mathrm{Rubin}}", "1", "the lecture's Rubin scale-up domain, nominal count",
    value=500, source=lecture("00:40", CHAPTER),
)

# Routing and network (also used by the pipeline chapter) ----------------------------------------------
scaleup_bandwidth = Quantity("scaleup_bandwidth", r"W_{\mathrm{up}}", "byte/s",
                             "scale-up (in-rack, NVLink-class) bandwidth of one chip, one direction",
                             display_unit="GB/s")
scaleout_bandwidth = Quantity("scaleout_bandwidth", r"W_{\mathrm{out}}", "byte/s",
                              "scale-out (rack-to-rack network) bandwidth of one chip, one direction",
                              display_unit="GB/s")
# a hardware preset's per-message latencies beside its bandwidths (the serving library's collectives read them)
scaleup_latency = Quantity("scaleup_latency", r"\alpha_{\mathrm{up}}", "s",
                           "latency of one message step of a collective over the scale-up links (one ring step, "
                           "beyond its bytes over the bandwidth)", domain="nonnegative", display_unit="us")
scaleout_latency = Quantity("scaleout_latency", r"\alpha_{\mathrm{out}}", "s",
                            "latency of one message step of a collective over the scale-out network",
                            domain="nonnegative", display_unit="us")
# the chips one scale-up network joins (an NVLink domain, a TPU pod's ICI): a hardware preset gives it beside
# ``chips``; the serving library's collectives run over scale-up inside it and over scale-out across it
scaleup_domain = Quantity("scaleup_domain", r"n_{\mathrm{dom}}", "1",
                          "chips one scale-up network joins (an NVLink domain, a TPU pod's ICI); a group of chips "
                          "larger than it talks over the scale-out network", integer=True)
token_activation_bytes = Quantity("token_activation_bytes", "a", "byte/token",
                                  "bytes of one token's activation vector sent over a link")
scaleout_slowdown_q = Quantity("scaleout_slowdown", "r", "1", "how many times slower scale-out is than scale-up")

E_tot, E_act = experts_total.sym, experts_active.sym
W_up, W_out, a = scaleup_bandwidth.sym, scaleout_bandwidth.sym, token_activation_bytes.sym
r = scaleout_slowdown_q.sym
scaleout_slowdown = Definition(
    "moe.scaleout_slowdown", title="Scale-out slowdown",
    statement="Scale-up bandwidth over scale-out bandwidth per chip: the lecture's 'about 8x slower'.",
    source=lecture("00:37-00:39", CHAPTER),
    defines=scaleout_slowdown_q, expr=W_up / W_out,
)

Rr, f_x = expert_layer_racks.sym, cross_rack_fraction_q.sym
t_in, t_x = alltoall_inrack_time_q.sym, alltoall_crossrack_time_q.sym
n_rack, C_su = rack_chips.sym, scaleup_capacity_q.sym
n_hopper, n_blackwell, n_rubin = scaleup_domain_hopper.sym, scaleup_domain_blackwell.sym, scaleup_domain_rubin.sym

# 20. Expert parallelism inside one rack ---------------------------------------------------------------------
experts_per_chip = Definition(
    "moe.experts_per_chip", title="Experts per chip",
    statement="Expert parallelism spreads a layer's routed experts evenly over the chips of the scale-up domain.",
    source=lecture("00:33", CHAPTER),
    defines=experts_per_chip_q, expr=E_tot / n,
)
routing_fraction = Definition(
    "moe.routing_fraction", title="Routing fraction",
    statement="The router sends each token to a small fraction of the layer's routed experts.",
    source=lecture("00:33", CHAPTER),
    defines=routing_fraction_q, expr=E_act / E_tot,
)
moe_expert_parallel_layout = Claim(
    "moe.moe_expert_parallel_layout", title="256 experts on 64 GPUs: four each, one in 32 per token",
    label="Expert-parallel layout",
    statement="DeepSeek's 256 routed experts are laid out on 64 of the rack's 72 GPUs, leaving 8 idle so "
              "that each GPU holds exactly 4 experts; each token goes to about 1 in 32 of them.  Every GPU "
              "runs a copy of the router and may send tokens to any other: an all-to-all exchange, out and "
              "back, in every MoE layer.",
    source=lecture("00:32-00:35", CHAPTER),
    goal=logic.And((logic.eq(experts_per_chip_q.sym, 4), logic.eq(n_rack - n, 8),
                    logic.eq(routing_fraction_q.sym, sp.Rational(1, 32)))),
    instance=True, uses=(deepseek_v3_params,),
    notes="'1 in 32' is 8 of 256, DeepSeek-V3's real routing.  Chapter 1 says '32 out of 256' instead: see "
          "moe_routing_vs_sparsity.  Under a 72-chip preset the experts no longer divide evenly.",
)
moe_routing_vs_sparsity = Claim(
    "moe.moe_routing_vs_sparsity", title="'1 in 32' routing does not give sparsity 8",
    statement="Read as the ratio of routed to activated experts, this chapter's '1 in 32' (and DeepSeek-V3's "
              "8 of 256) gives 32, not the sparsity of 8 that the lecture's first chapter derives from '32 out of "
              "256'.",
    source=lecture("00:18, 00:33", CHAPTER),
    goal=logic.within_factor(E_tot / E_act, sparsity_q.sym, sp.Rational(5, 4)),
    instance=True, expected="refuted", tags=INCONSISTENCY,
    notes="The parameter ratio is a third number: 700/37 = 18.9 in the lecture, 671/37 = 18.1 published "
          "(shared expert, attention and dense layers are active for every token).",
)
moe_sparsity_32_of_256 = Claim(
    "moe.moe_sparsity_32_of_256", title="The first chapter's reading: 32 of 256 experts is sparsity 8",
    statement="The lecture's first chapter reads 32 activated out of 256 experts, the lecture's sparsity of 8.",
    source=lecture("00:18", "How batch size affects token cost and speed"),
    goal=logic.eq(E_tot / 32, sparsity_q.sym),
    instance=True, tags=INCONSISTENCY,
)

# 22. Racks and the two networks ----------------------------------------------------------------------------
scaleout_bandwidth_ratio_and_rack = Assumption(
    "moe.scaleout_bandwidth_ratio_and_rack", title="A rack holds about 64 chips; scale-out is about 8x slower",
    statement="A rack holds typically about 64 GPUs or XPUs, a size set by power delivery, weight and "
              "cooling; inside it a switched scale-up network joins any chip to any other in two hops.  "
              "The scale-out network between racks has about 8 times less bandwidth per chip.",
    source=lecture("00:36-00:39", CHAPTER),
)
scaleout_about_8x_slower = Claim(
    "moe.scaleout_about_8x_slower", title="Scale-out is about 8x slower than scale-up",
    statement="The scale-up over scale-out bandwidth per chip is about 8 (read as within a factor 1.5).",
    source=lecture("00:38", CHAPTER),
    goal=logic.within_factor(r, 8, sp.Rational(3, 2)),
    instance=True, uses=(scaleout_bandwidth_ratio_and_rack,),
    notes="Lecture values are chosen with ratio 8.  Presets: an H100 box is 450 GB/s against a 50 GB/s NIC (9); "
          "a GB200 NVL72 is 900 against 50 GB/s (18), outside the band.",
)
rack_about_64 = Claim(
    "moe.rack_about_64", title="A scale-up domain of about 64 chips",
    statement="The scale-up domain serving a replica has about 64 chips (within 25%).",
    source=lecture("00:37", CHAPTER),
    goal=logic.within_factor(n, 64, sp.Rational(5, 4)),
    instance=True, uses=(scaleout_bandwidth_ratio_and_rack,),
    notes="True of NVL72 racks (72); an 8-GPU HGX box is refuted, a TPU pod slice far exceeds it.",
)

# 21. One rack bounds an expert layer ------------------------------------------------------------------------
cross_rack_fraction = Definition(
    "moe.cross_rack_fraction", title="Cross-rack share of routed tokens",
    statement=r"With experts spread evenly over \(R\) racks and uniform routing, a token's expert is in another "
              r"rack with probability \((R-1)/R\).",
    source=lecture("00:36:39", CHAPTER, reconstructed=True),
    defines=cross_rack_fraction_q, expr=(Rr - 1) / Rr,
)
alltoall_inrack_time = Definition(
    "moe.alltoall_inrack_time", title="In-rack share of the all-to-all",
    statement="The tokens whose experts are in the same rack travel out and back over scale-up.",
    source=lecture("00:36:39", CHAPTER, reconstructed=True),
    defines=alltoall_inrack_time_q, expr=2 * E_act * a * (1 - f_x) / (n * W_up),
)
alltoall_crossrack_time = Definition(
    "moe.alltoall_crossrack_time", title="Cross-rack share of the all-to-all",
    statement="The tokens whose experts are in another rack travel out and back over scale-out.",
    source=lecture("00:36:39", CHAPTER, reconstructed=True),
    defines=alltoall_crossrack_time_q, expr=2 * E_act * a * f_x / (n * W_out),
)
moe_rack_bound = Claim(
    "moe.moe_rack_bound", title="One rack bounds the size of an expert layer", label="Rack bound",
    statement=r"Spread one MoE layer over \(R \ge 2\) racks and the cross-rack share of its all-to-all takes "
              r"\((R-1)\,r\) times as long as the in-rack share, at least \(r\): the slow network becomes the "
              "bottleneck.  So an expert layer should fit one rack's chips and memory.",
    source=lecture("00:36:39", CHAPTER),
    hypotheses=(logic.ge(Rr, 2),),
    goal=logic.And((logic.eq(t_x / t_in, (Rr - 1) * r), logic.ge(t_x, r * t_in))),
    steps=(
        Step(logic.eq(t_x / t_in, f_x / (1 - f_x) * (W_up / W_out)),
             r"\(E_{\mathrm{act}}\), \(a\) and \(n\) cancel", link="implies"),
        Step(logic.eq(t_x / t_in, (Rr - 1) * r), r"\(f/(1-f) = R-1\) and \(r = W_{\mathrm{up}}/W_{\mathrm{out}}\)"),
        Step(logic.And((logic.eq(t_x / t_in, (Rr - 1) * r), logic.ge(t_x, r * t_in))), r"\(R - 1 \ge 1\)"),
    ),
    uses=(scaleout_bandwidth_ratio_and_rack,),
)
moe_rack_bound_lecture = Claim(
    "moe.moe_rack_bound_lecture", title="Two racks: half the tokens leave, and take 8x as long",
    statement="Over two racks half of the routed tokens leave the rack, and with scale-out 8 times slower "
              "their share of the all-to-all takes 8 times as long as the share that stays.",
    source=lecture("00:36-00:39", CHAPTER),
    hypotheses=(logic.eq(Rr, 2),),
    goal=logic.And((logic.eq(f_x, sp.Rational(1, 2)), logic.within_percent(t_x / t_in, 8, 1))),
    instance=True, forall=(expert_layer_racks,), uses=(moe_rack_bound,),
)

# 23. The scale-up domain grows ------------------------------------------------------------------------------
scaleup_domain_growth = Assumption(
    "moe.scaleup_domain_growth", title="Scale-up domains: 8, then 72, then '500 and something'",
    statement="NVIDIA's scale-up domain went from 8 GPUs (Hopper trays) to 72 (Blackwell racks), a product "
              "decision rather than a technology jump, and Rubin announces 500-some; part of that count is "
              "'Jensen math', but the lecture grants at least a genuine 4x, bought with denser cabling and "
              "backplanes and limited by connector density, cable bend radius, weight, power and cooling.",
    source=lecture("00:39-00:41", CHAPTER),
)
scaleup_growth_hopper_to_blackwell = Claim(
    "moe.scaleup_growth_hopper_to_blackwell", title="Hopper to Blackwell: 9x the scale-up domain",
    statement="Going from 8-GPU trays to 72-GPU racks multiplied the scale-up domain by 9.",
    source=lecture("00:39", CHAPTER),
    goal=logic.eq(n_blackwell / n_hopper, 9),
    uses=(scaleup_domain_growth,),
)
scaleup_growth_genuine_4x = Claim(
    "moe.scaleup_growth_genuine_4x", title="From 64 to 500: nominally 8x, at least 4x genuine",
    statement="From a 64-chip rack to a 500-chip domain is a nominal factor of about 7.8; granting at most a "
              "factor 2 of 'Jensen math' (counting dies rather than packages) leaves at least the genuine "
              "4x the lecture claims.",
    source=lecture("00:40-00:41", CHAPTER),
    goal=logic.And((logic.ge(n_rubin / 64, 4), logic.le(n_rubin / 64, 8))),
    uses=(scaleup_domain_growth,),
)
scaleup_growth_seed_reading = Claim(
    "moe.scaleup_growth_seed_reading", title="'500+, roughly 4x Blackwell's 72' does not add up",
    statement="A summary predicts Rubin at '~500+ GPUs, roughly 4x Blackwell's 72'; 500 over 72 is about 6.9, "
              "not about 4: it conflates the nominal count with the lecture's 'genuine 4x'.",
    source=lecture("00:40-00:41", CHAPTER),
    goal=logic.within_factor(n_rubin / n_blackwell, 4, sp.Rational(5, 4)),
    expected="refuted", tags=INCONSISTENCY, uses=(scaleup_domain_growth,),
)

# 24. Larger scale-up domains unlock larger models ---------------------------------------------------------------
scaleup_capacity = Definition(
    "moe.scaleup_capacity", title="Scale-up capacity",
    statement="The HBM of every chip in the scale-up domain, pooled.",
    source=lecture("00:43", CHAPTER),
    defines=scaleup_capacity_q, expr=n * C,
)
scaleup_capacity_unlock = Claim(
    "moe.scaleup_capacity_unlock", title="Total parameters are bounded by the scale-up domain",
    label="Scale-up capacity unlock",
    statement="Without pipelining, weights and KV cache must fit the scale-up domain's pooled HBM, so the "
              "total parameters are at most its capacity over the bytes per weight; the active parameters "
              "instead set the cost floor per token.  A larger scale-up domain is what allows more total "
              "parameters.",
    source=lecture("00:43-00:46", CHAPTER),
    hypotheses=(logic.le(N_tot * q + B * S_kv, C_su),),
    goal=logic.And((logic.le(N_tot, C_su / q), logic.ge(cost_per_token_q.sym, p_chip * c_fwd * N_act / F))),
    uses=(cost_per_token_and_floor, scaleup_domain_growth),
    notes="Pipelining later lifts the weight-capacity limit (pipeline.pipeline_neutrality): scale-up size "
          "then matters for bandwidth.",
)
hopper_box_capacity = Claim(
    "moe.hopper_box_capacity", title="Eight Hoppers hold 640 GB",
    statement="The 2022 scale-up domain, 8 H100s of 80 GB, pools 640 GB: less than a trillion parameters at "
              "one byte each, the rumoured size of GPT-4.",
    source=lecture("00:43-00:44", CHAPTER),
    hypotheses=(logic.eq(n, 8), logic.eq(C, si("80 GB")), logic.eq(N_tot, 10**12), logic.eq(q, 1)),
    goal=logic.And((logic.eq(C_su, si("640 GB")), logic.gt(N_tot * q, C_su))),
    uses=(scaleup_capacity_unlock,),
)
blackwell_rack_fits_5t_model = Claim(
    "moe.blackwell_rack_fits_5t_model", title="A Blackwell rack fits a 5T model plus KV cache",
    statement="A GB200 NVL72 pools 72 × 186 GB, about 13.4 TB: a 5-trillion-parameter model at one byte per "
              "weight takes under half of it, leaving the rest for KV cache.",
    source=lecture("00:44", CHAPTER),
    hypotheses=(logic.eq(n, 72), logic.eq(C, si("186 GB")), logic.eq(N_tot, 5 * 10**12), logic.eq(q, 1)),
    goal=logic.And((logic.between(C_su, si("10 TB"), si("20 TB")), logic.le(2 * N_tot * q, C_su))),
    uses=(scaleup_capacity_unlock,),
    notes="186 GB per GPU: 13.4 TB per rack / 72 (hardware preset gb200-nvl72).",
)

# The chapter's argument, for part I of the documents (placeholders: derive.model.prose) ------------------
PROSE = (
    "The lecture's second chapter (minutes 32 to 47) goes from one chip to a rack.  An MoE layer is a router and "
    "many small MLPs, the experts, and each token visits a few of them.  Expert parallelism gives every chip a "
    "share of the experts and a copy of the router; tokens travel to the chips that hold their experts and back, "
    "an all-to-all exchange in every MoE layer.  The lecture's example is DeepSeek on an NVL72.",
    "{{result:moe_expert_parallel_layout}}",
    "The routing fraction gives DeepSeek's sparsity yet another reading, which cannot agree with the previous "
    "chapter's '32 out of 256' (an arithmetic that is {{verdict:moe_sparsity_32_of_256}} in itself).",
    "{{result:moe_routing_vs_sparsity}}",
    "Why one rack?  Inside it a switched scale-up network joins any two chips in two hops; between racks the "
    "scale-out network has about eight times less bandwidth per chip ({{value:scaleout_slowdown}} times for the "
    "scenario).  The all-to-all does not care where an expert sits, so a layer spread over racks sends part of "
    "its traffic over the slow network.",
    "{{result:moe_rack_bound}}",
    "The rack bounds the model as well: 'the active parameters are limited by the compute cost, and the total "
    "parameters are limited by the scale-up size'.",
    "{{result:scaleup_capacity_unlock}}",
    "For the scenario the pooled HBM is {{value:scaleup_capacity}}.  Eight Hoppers held '640 gigabytes as of "
    "2022', short of a trillion parameters at a byte each, while a Blackwell rack holds a five-trillion-parameter "
    "model with room left for KV.  Hence the race for larger scale-up domains: from 8 GPUs to 72, and announced "
    "at 'five hundred and something', of which the lecture grants 'at least a genuine 4x' over 64.  A summary's "
    "'500, roughly 4x Blackwell's 72' mixes the nominal count with that factor and is "
    "{{verdict:scaleup_growth_seed_reading}}.",
)
