"""Collectives and the network: all-reduce, all-to-all and point-to-point bytes, and when they hide behind compute

Chapter 5 of part II ("Beyond the lecture").  A layout that splits a model over chips pays in messages. Tensor
parallelism (tp) sums partial products after the attention and after the MLP of every layer: two all-reduces
per layer of the activations its group carries (its share of the step's tokens).  Expert parallelism sends each
token to the chips of its routed experts (dispatch) and brings the weighted outputs back (combine), an
all-to-all.  Pipeline parallelism hands one activation per token from stage to stage. Each message costs a
per-message latency plus its bytes over the link's bandwidth: scale-up links (NVLink, ICI) inside one domain
of ``chips``, scale-out links (InfiniBand, Ethernet) across domains.  A collective run beside the compute (two
micro-batches, one computing while the other communicates) costs nothing exactly when it is no longer than the
compute; this chapter says exactly when.

Main claims:
- ``network.ring_allreduce_between_one_and_two_messages``: a ring all-reduce sends 2(t − 1)/t times the
  message per chip: at least one message and less than two once t ≥ 2.
- **TP hides on bandwidth** ``network.tp_bandwidth_hides_iff``: the bandwidth part of a step's
  all-reduces fits in its compute exactly when tp ≤ t* = 1 + c_fwd·N_act·W_c/(2·n_ar·N_layers·a·F); the
  batch cancels, so no batch rescues a tp degree above t*.
- **TP hides past a batch** ``network.tp_hides_iff_batch``: with the per-message latency, a tp degree
  below t* hides its all-reduces exactly when the batch is at least B_hide;
  ``network.tp_never_hides_past_degree``: above t* it never does.
- ``network.hide_degree_at_most_scaleup``: no link faster than the scale-up links, so t* is at most its
  value on the scale-up bandwidth.
- **EP hides on bandwidth** ``network.ep_hides_iff_bandwidth``: a token's dispatch and combine over all MoE
  layers fit in its compute exactly when the link bandwidth is at least
  W_hide = n_moe·E_act·(a_d + a_c)·F/(c_fwd·N_act); the tokens per chip cancel.
- ``network.pipeline_p2p_below_tp_allreduce``: a step's pipeline hand-overs carry no more bytes than its
  tensor-parallel all-reduces (tp ≥ 2, at most one stage per layer).
- **TP stays on scale-up** ``network.tp_on_scaleup_iff``: a layout's all-reduces get the scale-up bandwidth
  when tp ≤ n_dom, the chips of one scale-up domain, and never more; past it the domain's scale-out ports
  together, n_dom·W_out (``network.rings_cross_at_every_nic``), slower exactly when those are slower than one
  chip's scale-up links (``network.tp_on_scaleup_below_domain``, strict below, is refuted);
  ``network.ep_on_scaleup_iff``: the all-to-all on scale-up exactly up to one domain of ep;
  ``network.pp_on_scaleout_iff``: the slowest pipeline hand-over runs over scale-out exactly when
  tp·pp·cp·dp > n_dom.  ``network.llama3_405b_tp8_pp2_links``: Llama 3 405B on two H100 nodes, all-reduces at
  450 GB/s and the hand-over at 50 GB/s (its false twin ``network.llama3_405b_tp16_on_nvlink`` is refuted);
  ``network.deepseek_v3_ep32_alltoall_on_infiniband``: DeepSeek-V3's EP32 prefill crosses nodes and does not
  hide at FP8 peak.  ``network.tp_link_latency_at_least_scaleup``: the all-reduce latency on the layout's links
  (``tp_link_allreduce_latency``) is at least the scale-up one, equal inside a domain;
  ``network.llama3_405b_tp16_latency_vs_tp8``: TP16 across two H100 nodes pays 9.6 times TP8's (20.4 ms against
  2.1 ms per step; ``network.llama3_405b_tp16_latency_tenfold`` is refuted).
  ``network.tp_link_allreduce_time_at_least_scaleup``: a step's all-reduces on the layout's links
  (``tp_link_allreduce_time``, which needs no ``collective_bandwidth``) take at least their scale-up time,
  exactly that inside a domain (``network.tp_link_allreduce_time_at_most_scaleup`` is refuted);
  ``ep_link_alltoall_time_per_token`` is the all-to-all on the layout's links.
- **The all-reduce floor** ``network.allreduce_floor_below_ring``: whatever the algorithm (ring, tree, one-shot,
  in-switch), every chip receives the whole sum once (``network.allreduce_receives_the_sum``), so one message
  latency plus the message over the layout's links (``tp_link_allreduce_floor``) bounds every all-reduce from
  below, and never exceeds a ring's time (``network.allreduce_floor_above_ring`` is refuted).
  ``network.h100_nvls_allreduce_above_floor``: NVLink SHARP all-reduces 2 GiB on eight H100s in 7.87 ms, above
  the 4.77 ms floor and under a ring's 8.36 ms on the same links (``network.h100_nvls_allreduce_under_ring``,
  held to the ring, is refuted).  ``network.allreduce_floor_below_measured``: a measured all-reduce of
  ``allreduce_payload`` bytes over tp chips takes at least one scale-up message latency and the payload once over
  the scale-up links (``allreduce_payload_floor``; derive audit's ``allreduce_time`` and ``allreduce_busbw``).
  ``network.alltoall_floor_below_measured``: a measured all-to-all of a buffer over ep chips takes at least one
  scale-up latency and the (ep - 1)/ep of the buffer bound for other chips over the scale-up links
  (``alltoall_payload_floor``; derive audit's ``alltoall_time`` and ``alltoall_busbw``); nccl-tests' 524 MB over
  four H100s in 1.174 ms is above its 874.4 us floor (``network.h100_alltoall_4_gpus_above_floor``).
- **The all-to-all's bytes from the model** ``network.dispatch_token_bytes`` and ``network.combine_token_bytes``:
  a token sends one hidden vector (d_model elements in the dispatch datatype, ``dispatch_bytes_per_element``,
  scales included) to each routed expert and gets one activation back (``token_activation_bytes``); a model's
  config gives d_model, the activation, the dispatch datatype and ``moe_layers``.
  ``network.deepseek_v3_fp8_dispatch_bytes``: DeepSeek-V3's FP8 dispatch with one FP32 scale per 128 elements is
  DeepEP's 7,392 bytes (``network.deepseek_v3_fp8_dispatch_bytes_no_scales``, 7,168, is refuted).
- Worked examples: ``network.llama3_70b_tp8_hides_on_nvlink`` (t* ≈ 13 on H100 NVLink at 450 GB/s;
  its false twin ``network.llama3_70b_tp8_hides_on_infiniband``, t* ≈ 2.4 at 50 GB/s, is refuted);
  ``network.deepep_dispatch_ep8`` and ``network.deepep_combine_ep8``: the dispatch and combine bytes of
  128 tokens to 8 experts, over DeepEP's published bandwidths, give its published 77 µs and 114 µs
  (``network.deepep_dispatch_ep8_bf16`` prices the dispatch in BF16 and is refuted);
  ``network.deepseek_v3_ep_hide_bandwidth``: at H100-class FP8 peak, DeepSeek-V3's all-to-all hides
  behind its weight multiplies only above 260 GB/s per GPU, more than five times a 400 Gb/s NIC's ~50 GB/s.

Notation: t = tp the tensor-parallel degree, pp the stages, B sequences per step of a stage (each of its cp·dp
tensor-parallel groups carries B/(cp·dp) of them), τ tokens per sequence per step, a bytes of one token's
activation (d_model elements), n_ar = 2 all-reduces per layer in a forward pass, N_layers layers,
n_moe MoE layers, E_act routed experts per token, a_d and a_c bytes one token sends
to one expert in the dispatch and receives back in the combine, W_c and α the bandwidth (one direction, per
chip) and per-message latency of the links the collective runs over, F peak FLOP/s, N_act active
parameters, T tokens one chip dispatches in one MoE layer, n_dom the chips of one scale-up domain
(``scaleup_domain``, a hardware preset's), W_out and α_out the scale-out bandwidth and message latency.

Implementation notes (the modelling assumptions, each visible in an expression):
- Ring all-reduce (reduce-scatter then all-gather): 2(t − 1) steps, each one message latency and 1/t of the
  message; the α–β cost model, named ``network.ring_allreduce``.  Tree, one-shot (TensorRT-LLM's and vLLM's
  custom all-reduce) and in-switch (NVLS/SHARP) all-reduces take fewer steps or send fewer bytes: a collective
  that hides as a ring hides under them too, but the ring's latency and time are no floor for them.
- Hiding is judged against the compute at peak FLOP/s of the weight multiplies only (no attention): the
  shortest the compute can be.  Real compute is longer (lower utilisation, attention), so a collective
  that hides here hides in practice; one that does not hide here may still hide at a lower utilisation.
- Expert parallelism counts every routed copy of a token as leaving its chip (an upper bound: a copy whose
  expert sits on the same chip sends nothing), the shared experts as local, and the tokens evenly spread
  over the chips with the routed work (uniform routing, as ``moe.routing_fraction``).
- The dispatch and combine bytes, and the MoE layers, are derived from the model where one is given (its
  ``config.json`` or preset: ``d_model``, ``token_activation_bytes`` in BF16, ``moe_layers`` from the family's
  MoE layer placement, ``dispatch_bytes_per_element`` from ``quantization_config``: FP8 with its block scales
  where the activations are quantized to FP8, else BF16); without a model they are inputs (``--set``), and a value
  set by hand pins them.
- A pipeline hand-over is one activation per token per stage boundary (``pipeline.boundary_scaleout_time``).
- A layout's chips are numbered tensor-parallel innermost, pipeline outermost (Megatron-LM's order), domains
  aligned to them: a group of at most n_dom chips sits in one domain, a larger one spans several.  The general
  claims keep the link as an input (``collective_bandwidth``); ``tp_link_bandwidth``, ``tp_link_latency``,
  ``ep_link_bandwidth`` and ``pp_link_bandwidth`` are the links a layout gives them, and
  ``tp_link_allreduce_time`` and ``ep_link_alltoall_time_per_token`` the collectives' times on those links.

References: Patarasuk and Yuan 2009, "Bandwidth optimal all-reduce algorithms for clusters of
workstations" (J. Parallel Distrib. Comput. 69(2)), section 3 (ring all-reduce, 2(p − 1)/p·n per process);
Thakur, Rabenseifner and Gropp 2005, "Optimization of Collective Communication Operations in MPICH" (IJHPCA
19(1)), section 4 (latency 2(p − 1)α for reduce-scatter plus all-gather); Shoeybi et al. 2019,
"Megatron-LM", section 3 and figure 4 (two all-reduces per layer in the forward pass); Narayanan et al. 2021,
"Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM" (SC '21), section 3.3
(tensor parallelism within a server, pipeline across servers); Llama Team 2024, "The Llama 3 Herd of Models",
arXiv:2407.21783, section 6.1 (405B served in BF16 on two 8-GPU H100 machines, TP within, PP across); DeepSeek-AI 2024,
"DeepSeek-V3 Technical Report", arXiv:2412.19437, section 3.2 (dispatch in FP8, combine in BF16, overlap of
computation and communication); deepseek-ai/DeepEP, docs/legacy.md, "Performance" (H800, ~160 GB/s NVLink,
CX7 400 Gb/s InfiniBand ~50 GB/s; low-latency kernels: 128 tokens, hidden 7168, top-8, FP8 dispatch and
BF16 combine, EP8 dispatch 77 µs at 98 GB/s, combine 114 µs at 127 GB/s).
"""

from __future__ import annotations

import sympy as sp

from derive import Assumption, Claim, Definition, Quantity, Step, derived, logic, paper, si, spec
from theorems.moe import (
    scaleout_bandwidth,
    scaleout_latency,
    scaleup_bandwidth,
    scaleup_domain,
    scaleup_latency,
    token_activation_bytes,
)
from theorems.roofline import (
    B,
    F,
    N_act,
    W,
    batch,
    c_fwd,
    d_model,
    experts_active,
    flops,
    hbm_bandwidth,
    layers,
    params_active,
    q,
    tau,
    tokens_per_step,
)

from .layouts import cp, cp_q, dp, dp_q, ep, ep_q, layout_chips_q, pp, pp_q, tp, tp_q

PART = "Beyond the lecture"  # the documents render this library's chapters as part II
CHAPTER = "Collectives and the network"

W_up, a, E_act, N_L = scaleup_bandwidth.sym, token_activation_bytes.sym, experts_active.sym, layers.sym
alpha_up = scaleup_latency.sym
W_out, alpha_out, n_dom, n_layout = scaleout_bandwidth.sym, scaleout_latency.sym, scaleup_domain.sym, layout_chips_q.sym

_RING = paper("Patarasuk and Yuan 2009, Bandwidth optimal all-reduce algorithms for clusters of workstations, "
              "J. Parallel Distrib. Comput. 69(2)", "section 3: the ring all-reduce sends 2(p-1)/p·n per process")
_THAKUR = paper("Thakur, Rabenseifner and Gropp 2005, Optimization of Collective Communication Operations in MPICH, "
                "IJHPCA 19(1)", "section 4: reduce-scatter plus all-gather, latency 2(p-1)α, bandwidth 2(p-1)/p·nβ")
_MEGATRON = paper("Shoeybi et al. 2019, Megatron-LM: Training Multi-Billion Parameter Language Models Using Model "
                  "Parallelism, arXiv:1909.08053", "section 3 and figure 4: two all-reduces in a layer's forward pass")
_DSV3 = paper("DeepSeek-AI 2024, DeepSeek-V3 Technical Report, arXiv:2412.19437",
              "sections 3.2.1-3.2.2: dispatch in FP8, combine in BF16, computation and communication overlapped")
_DSV3_FP8 = paper("DeepSeek-AI 2024, DeepSeek-V3 Technical Report, arXiv:2412.19437",
                  "sections 3.2.2 and 3.3.2: the activations before the MoE up-projections are quantized to FP8 in "
                  "1x128 tiles (one scale each) and dispatched so; the combine stays in BF16")
_NCCL = spec("NVIDIA/nccl src/graph/tuning.cc@5067397c, hwLatencies: per-step latency of a Ring/LL collective "
              "0.6 us over NVLink, 2.7 us over the network (NCCL's own cost model, no faster link anywhere)", "2026-06")
_DEEPEP = spec("deepseek-ai/DeepEP docs/legacy.md, Performance, low-latency kernels on H800 with CX7 400 Gb/s "
               "InfiniBand: 128 tokens per batch, hidden 7168, top-8 experts, FP8 dispatch, BF16 combine", "2025-02")

# Inputs -----------------------------------------------------------------------------------------------
allreduces_per_layer = Quantity(
    "allreduces_per_layer", r"n_{\mathrm{ar}}", "1",
    "all-reduces of the activations one tensor-parallel layer needs in a forward pass (after attention, after "
    "the MLP)", value=2, source=_MEGATRON)
collective_bandwidth = Quantity(
    "collective_bandwidth", r"W_{\mathrm{c}}", "byte/s",
    "one-direction bandwidth per chip of the links a collective runs over: the scale-up bandwidth inside one "
    "domain of `chips`, the scale-out bandwidth across domains", display_unit="GB/s")
collective_latency = Quantity(
    "collective_latency", r"\alpha", "s",
    "latency of one message of a collective on those links (one ring step)", domain="nonnegative",
    display_unit="us")
moe_layers = Quantity("moe_layers", r"n_{\mathrm{moe}}", "1", "layers of the model whose MLP is a routed MoE (a "
                      "model's config gives it)", integer=True)
dispatch_element_bytes = Quantity(
    "dispatch_bytes_per_element", r"e_{\mathrm{d}}", "byte",
    "bytes one element of a token's hidden vector takes in the expert-parallel dispatch, its scales included: the "
    "dispatch datatype (a model's config gives its serving precision: BF16 2; FP8 with one FP32 scale per 128 "
    "elements, DeepSeek-V3's, 1 + 4/128)")
dispatch_vectors = Quantity(
    "dispatch_vectors_per_token", r"v_{\mathrm{d}}", "1/token",
    "hidden vectors a token sends to one routed expert in the dispatch: one", value=1,
    source=derived("a token's dispatch to one routed expert is its hidden vector, once"))
dispatch_bytes = Quantity("dispatch_token_bytes", r"a_{\mathrm{d}}", "byte/token",
                          "bytes one token sends to one routed expert in the dispatch (its activation in the "
                          "dispatch datatype, with any scales)")
combine_bytes = Quantity("combine_token_bytes", r"a_{\mathrm{c}}", "byte/token",
                         "bytes one routed expert sends back for one token in the combine (its output in the "
                         "activation datatype)")
ep_tokens_per_chip = Quantity("ep_tokens_per_chip", r"T_{\mathrm{chip}}", "token",
                              "tokens one chip dispatches in one MoE layer")

# Published numbers ------------------------------------------------------------------------------------
published_dispatch_time = Quantity(
    "published_deepep_dispatch_time_ep8", r"t_{\mathrm{d}}^{\mathrm{pub}}", "s",
    "DeepEP's published low-latency dispatch time at EP8", value=si("77 us"), source=_DEEPEP, display_unit="us")
published_combine_time = Quantity(
    "published_deepep_combine_time_ep8", r"t_{\mathrm{c}}^{\mathrm{pub}}", "s",
    "DeepEP's published low-latency combine time at EP8", value=si("114 us"), source=_DEEPEP, display_unit="us")

W_c, alpha, n_ar = collective_bandwidth.sym, collective_latency.sym, allreduces_per_layer.sym
n_moe, a_d, a_c, T_chip = moe_layers.sym, dispatch_bytes.sym, combine_bytes.sym, ep_tokens_per_chip.sym
e_d, v_d = dispatch_element_bytes.sym, dispatch_vectors.sym

# Derived ----------------------------------------------------------------------------------------------
allreduce_message_q = Quantity("allreduce_message_bytes", r"M_{\mathrm{ar}}", "byte",
                               "bytes of one all-reduce's message: the activations of the tokens one "
                               "tensor-parallel group carries in a step",
                               display_unit="MB")
ring_allreduce_bytes_q = Quantity("ring_allreduce_bytes", r"V_{\mathrm{ar}}", "byte",
                                  "bytes each chip sends in one ring all-reduce (none with one chip)",
                                  domain="nonnegative", display_unit="MB")
tp_comm_time_q = Quantity("tp_allreduce_time", r"t_{\mathrm{ar}}", "s",
                          "time of a step's tensor-parallel all-reduces, every layer: latency plus bytes over "
                          "bandwidth (none with one chip)", domain="nonnegative", display_unit="ms")
tp_compute_time_q = Quantity("tp_compute_time", r"t_{\mathrm{c}}^{\mathrm{tp}}", "s",
                             "time of a step's weight multiplies split over the tensor-parallel chips at peak FLOP/s",
                             display_unit="ms")
tp_hide_degree_q = Quantity("tp_hide_degree", r"t^{*}", "1",
                            "largest tensor-parallel degree whose all-reduce bytes fit in the step's compute")
tp_hide_batch_q = Quantity("tp_hide_batch", r"B_{\mathrm{hide}}", "seq",
                           "smallest batch at which a step's all-reduces, latency included, fit in its compute "
                           "(meaningful below t*, where it is nonnegative)", domain="real")
tp_latency_floor_q = Quantity("tp_allreduce_latency", r"t_{\mathrm{lat}}", "s",
                              "latency part of a step's tensor-parallel all-reduces on the scale-up links: every "
                              "ring step's message latency, no bytes (none with one chip)", domain="nonnegative",
                              display_unit="ms")
pp_p2p_bytes_q = Quantity("pp_p2p_bytes", r"M_{\mathrm{pp}}", "byte",
                          "bytes one tensor-parallel group of a stage hands to the next stage in one step",
                          display_unit="MB")
ep_dispatch_per_token_q = Quantity("ep_dispatch_bytes_per_token", r"V_{\mathrm{d}}", "byte/token",
                                   "bytes one token sends in one MoE layer's dispatch")
ep_combine_per_token_q = Quantity("ep_combine_bytes_per_token", r"V_{\mathrm{c}}", "byte/token",
                                  "bytes one token gets back in one MoE layer's combine")
ep_alltoall_time_q = Quantity("ep_alltoall_time_per_token", r"t_{\mathrm{a2a}}", "s/token",
                              "link time of one token's dispatch and combine over all MoE layers",
                              display_unit="ns/token")
token_compute_time_q = Quantity("token_compute_time", r"t_{\mathrm{c}}^{\mathrm{tok}}", "s/token",
                                "time of one token's weight multiplies at one chip's peak FLOP/s",
                                display_unit="ns/token")
ep_hide_bandwidth_q = Quantity("ep_hide_bandwidth", r"W_{\mathrm{hide}}", "byte/s",
                               "smallest link bandwidth at which a token's all-to-all fits in its compute",
                               display_unit="GB/s")
ep_dispatch_time_q = Quantity("ep_dispatch_time", r"t_{\mathrm{d}}", "s",
                              "time of one chip's dispatch in one MoE layer over the link", display_unit="us")
ep_combine_time_q = Quantity("ep_combine_time", r"t_{\mathrm{c}}", "s",
                             "time of one chip's combine in one MoE layer over the link", display_unit="us")

M_ar, V_ar, t_ar, t_ctp = (allreduce_message_q.sym, ring_allreduce_bytes_q.sym, tp_comm_time_q.sym,
                           tp_compute_time_q.sym)
t_star, B_hide, M_pp = tp_hide_degree_q.sym, tp_hide_batch_q.sym, pp_p2p_bytes_q.sym
V_d, V_c, t_a2a, t_tok, W_hide = (ep_dispatch_per_token_q.sym, ep_combine_per_token_q.sym, ep_alltoall_time_q.sym,
                                  token_compute_time_q.sym, ep_hide_bandwidth_q.sym)
t_d, t_cb = ep_dispatch_time_q.sym, ep_combine_time_q.sym
t_lat = tp_latency_floor_q.sym
G = c_fwd * N_act / F  # one token's weight multiplies at peak, s/token
H = 2 * n_ar * N_L * a / W_c  # bytes-over-bandwidth of a step's all-reduces per token and per (t - 1), s/token

# Assumption -------------------------------------------------------------------------------------------
no_link_faster_than_scaleup = Assumption(
    "network.no_link_faster_than_scaleup", title="No collective runs faster than the scale-up links",
    statement="The links a collective runs over are at best the scale-up links of one domain; across domains "
              "they are the slower scale-out links.",
    source=paper("Zhao et al. 2025, Insights into DeepSeek-V3: Scaling Challenges and Reflections on Hardware for "
                 "AI Architectures (ISCA '25), arXiv:2505.09343",
                 "section 4: scale-up (NVLink) and scale-out (InfiniBand) bandwidths of an H800 node"),
    relation=logic.le(W_c, W_up),
)
ring_allreduce = Assumption(
    "network.ring_allreduce", title="The all-reduces run as rings",
    statement="A tensor-parallel all-reduce runs as a ring, NCCL's Ring algorithm: a reduce-scatter then an "
              "all-gather, 2(t − 1) steps of one message each.  One-shot kernels (TensorRT-LLM's and vLLM's custom "
              "all-reduce) and in-switch reduction (NVLink SHARP) take fewer steps and send fewer bytes, so the "
              "ring's latency and time are not floors for them.",
    source=_THAKUR,
)
no_message_faster_than_scaleup = Assumption(
    "network.no_message_faster_than_scaleup", title="No message step is quicker than one on the scale-up links",
    statement="A ring step of a collective costs at least the per-message latency of the scale-up links; across "
              "domains the network's is longer.",
    source=_NCCL,
    relation=logic.ge(alpha, alpha_up),
)

# Definitions ------------------------------------------------------------------------------------------
allreduce_message = Definition(
    "network.allreduce_message_bytes", title="Message of a tensor-parallel all-reduce",
    statement="Every token a tensor-parallel group carries contributes its activation vector, summed over the "
              "group's chips; a stage's cp·dp groups (copies of the dense part) each carry their share of the "
              "step's sequences, B/(cp·dp).",
    source=_MEGATRON, defines=allreduce_message_q, expr=B * tau * a / (cp * dp),
)
ring_allreduce_bytes = Definition(
    "network.ring_allreduce_bytes", title="Bytes a chip sends in a ring all-reduce",
    statement="A reduce-scatter then an all-gather around a ring of t chips: 2(t − 1) steps, each sending 1/t "
              "of the message.",
    source=_RING, defines=ring_allreduce_bytes_q, expr=2 * (tp - 1) * M_ar / tp,
)
tp_comm_time = Definition(
    "network.tp_allreduce_time", title="Time of a step's tensor-parallel all-reduces",
    statement="n_ar all-reduces in each layer, each 2(t − 1) message latencies plus its ring bytes over the "
              "link bandwidth.",
    source=_THAKUR, defines=tp_comm_time_q, expr=n_ar * N_L * (2 * (tp - 1) * alpha + V_ar / W_c),
)
tp_latency_floor = Definition(
    "network.tp_allreduce_latency", title="Latency of a step's all-reduces on the scale-up links",
    statement="n_ar all-reduces in each layer, each 2(t − 1) ring steps at the scale-up links' message latency; "
              "their bytes left out.",
    source=_THAKUR, defines=tp_latency_floor_q, expr=2 * n_ar * N_L * (tp - 1) * alpha_up,
)
tp_compute_time = Definition(
    "network.tp_compute_time", title="Compute of a step on the tensor-parallel chips",
    statement="The weight multiplies of the group's share of the step, every token times every active weight, "
              "shared by the t chips at their peak FLOP/s.",
    source=_MEGATRON, defines=tp_compute_time_q, expr=c_fwd * N_act * B * tau / (tp * cp * dp * F),
)
tp_hide_degree = Definition(
    "network.tp_hide_degree", title="Largest tensor-parallel degree that hides its all-reduce bytes",
    statement="One more than the compute of a token over the all-reduce bytes a token adds per further chip.",
    source=_RING, defines=tp_hide_degree_q, expr=1 + c_fwd * N_act * W_c / (2 * n_ar * N_L * a * F),
)
tp_hide_batch = Definition(
    "network.tp_hide_batch", title="Smallest batch that hides the all-reduces' latency",
    statement="The latency of a step's all-reduces over the room the compute leaves once their bytes are paid.",
    source=_THAKUR, defines=tp_hide_batch_q,
    expr=2 * n_ar * N_L * alpha * tp * (tp - 1) * cp * dp / (tau * (G - (tp - 1) * H)),
)
pp_p2p_bytes = Definition(
    "network.pp_p2p_bytes", title="Bytes of a pipeline hand-over",
    statement="One activation per token crosses each stage boundary; each tensor-parallel group hands over its "
              "own share of the step's sequences, B/(cp·dp).",
    source=paper("Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU Clusters Using "
                 "Megatron-LM (SC '21), arXiv:2104.04473", "section 4.1: point-to-point between stages"),
    defines=pp_p2p_bytes_q, expr=B * tau * a / (cp * dp),
)
dispatch_token_bytes = Definition(
    "network.dispatch_token_bytes", title="Dispatch bytes per token and routed expert",
    statement="A token sends one hidden vector, d_model elements in the dispatch datatype (scales included), to "
              "each routed expert.",
    source=_DSV3_FP8, defines=dispatch_bytes, expr=v_d * d_model.sym * e_d,
    domain=logic.gt(d_model.sym, 0),  # a model with a hidden vector to send
)
combine_token_bytes = Definition(
    "network.combine_token_bytes", title="Combine bytes per token and routed expert",
    statement="Each routed expert sends its output for the token back as one activation vector in the activation "
              "datatype: the bytes one token's activation takes on a link.",
    source=_DSV3_FP8, defines=combine_bytes, expr=a,
)
ep_dispatch_per_token = Definition(
    "network.ep_dispatch_bytes_per_token", title="Dispatch bytes per token",
    statement="A token sends its activation to each of its routed experts (every copy counted as leaving the chip).",
    source=_DSV3, defines=ep_dispatch_per_token_q, expr=E_act * a_d,
)
ep_combine_per_token = Definition(
    "network.ep_combine_bytes_per_token", title="Combine bytes per token",
    statement="Each routed expert sends its output for the token back.",
    source=_DSV3, defines=ep_combine_per_token_q, expr=E_act * a_c,
)
ep_alltoall_time = Definition(
    "network.ep_alltoall_time_per_token", title="All-to-all link time per token",
    statement="Dispatch and combine bytes of every MoE layer over the link bandwidth.",
    source=_DSV3, defines=ep_alltoall_time_q, expr=n_moe * (V_d + V_c) / W_c,
)
token_compute_time = Definition(
    "network.token_compute_time", title="Compute time of one token",
    statement="One token's weight multiplies at peak FLOP/s; with tokens and routed work spread evenly, each chip "
              "computes as many of them as it dispatches.",
    source=paper("Kaplan et al. 2020, Scaling Laws for Neural Language Models", "table 1: C_forward = 2N"),
    defines=token_compute_time_q, expr=c_fwd * N_act / F,
)
ep_hide_bandwidth = Definition(
    "network.ep_hide_bandwidth", title="Link bandwidth that hides the all-to-all",
    statement="A token's all-to-all bytes over all MoE layers per second of its compute.",
    source=_DSV3, defines=ep_hide_bandwidth_q, expr=n_moe * E_act * (a_d + a_c) * F / (c_fwd * N_act),
)
ep_dispatch_time = Definition(
    "network.ep_dispatch_time", title="Dispatch time of one chip in one layer",
    statement="The chip's tokens' dispatch bytes over the link bandwidth.",
    source=_DEEPEP, defines=ep_dispatch_time_q, expr=T_chip * V_d / W_c,
)
ep_combine_time = Definition(
    "network.ep_combine_time", title="Combine time of one chip in one layer",
    statement="The chip's tokens' combine bytes over the link bandwidth.",
    source=_DEEPEP, defines=ep_combine_time_q, expr=T_chip * V_c / W_c,
)

# Claims -----------------------------------------------------------------------------------------------
ring_allreduce_between_one_and_two_messages = Claim(
    "network.ring_allreduce_between_one_and_two_messages", title="A ring all-reduce sends one to two messages",
    statement="With at least two chips, each chip of a ring all-reduce sends at least the whole message and less "
              "than twice it, whatever the degree.",
    source=_RING,
    hypotheses=(logic.ge(tp, 2),),
    goal=logic.And((logic.ge(V_ar, M_ar), logic.lt(V_ar, 2 * M_ar))),
)
tp_bandwidth_hides_iff = Claim(
    "network.tp_bandwidth_hides_iff", title="All-reduce bytes hide exactly up to the degree t*",
    label="TP hides on bandwidth",
    statement="The bytes of a step's all-reduces take no longer than its compute exactly when the "
              "tensor-parallel degree is at most \\(t^{*}\\); the batch cancels, so no batch moves the threshold.",
    source=_RING,
    goal=logic.Iff(logic.le(n_ar * N_L * V_ar / W_c, t_ctp), logic.le(tp, t_star)),
    steps=(
        Step(logic.le(n_ar * N_L * 2 * (tp - 1) * B * tau * a / (tp * cp * dp * W_c),
                      c_fwd * N_act * B * tau / (tp * cp * dp * F)),
             "substitute the ring bytes and the compute", link="iff"),
        Step(logic.le(2 * n_ar * N_L * (tp - 1) * a * F, c_fwd * N_act * W_c),
             r"multiply by the positive \(t\, cp\, dp\, W_{\mathrm{c}} F/(B\tau)\): the batch cancels",
             link="iff"),
        Step(logic.le(tp, t_star), r"divide by the positive \(2 n_{\mathrm{ar}} N_{\mathrm{layers}} a F\)",
             link="iff"),
    ),
)
tp_hides_iff_batch = Claim(
    "network.tp_hides_iff_batch", title="Below t*, the all-reduces hide from the batch B_hide on",
    label="TP hides past a batch",
    statement="If the degree is below \\(t^{*}\\), a step's all-reduces, latency included, take no longer than "
              "its compute exactly when the batch is at least \\(B_{\\mathrm{hide}}\\).",
    source=_THAKUR,
    hypotheses=(logic.lt(tp, t_star),),
    goal=logic.Iff(logic.le(t_ar, t_ctp), logic.ge(B, B_hide)),
    steps=(
        Step(logic.gt(G - (tp - 1) * H, 0), r"below \(t^{*}\) a token's compute outlasts its all-reduce bytes",
             link="implies"),
        Step(logic.Iff(logic.le(t_ar, t_ctp),
                       logic.ge(B * tau * (G - (tp - 1) * H), 2 * n_ar * N_L * alpha * tp * (tp - 1) * cp * dp)),
             r"multiply by the positive \(t\, cp\, dp\) and collect the batch's terms", link="implies"),
        Step(logic.Iff(logic.le(t_ar, t_ctp), logic.ge(B, B_hide)),
             r"divide by the positive \(\tau (G - (t - 1) H)\)", link="implies"),
    ),
    uses=(tp_bandwidth_hides_iff,),
)
tp_never_hides_past_degree = Claim(
    "network.tp_never_hides_past_degree", title="Past t*, no batch hides the all-reduces",
    statement="If the degree exceeds \\(t^{*}\\), a step's all-reduces take longer than its compute at every "
              "batch and every latency.",
    source=_RING,
    hypotheses=(logic.gt(tp, t_star),),
    goal=logic.gt(t_ar, t_ctp),
    uses=(tp_bandwidth_hides_iff,),
)
hide_degree_at_most_scaleup = Claim(
    "network.hide_degree_at_most_scaleup", title="The scale-up links bound the degree that hides",
    statement="Since no collective link is faster than the scale-up links, \\(t^{*}\\) is at most its value on the "
              "scale-up bandwidth; a tensor-parallel group spread over the slower scale-out links hides a "
              "proportionally smaller degree.",
    source=_RING,
    goal=logic.le(t_star, 1 + c_fwd * N_act * W_up / (2 * n_ar * N_L * a * F)),
    uses=(no_link_faster_than_scaleup,),
)
ep_hides_iff_bandwidth = Claim(
    "network.ep_hides_iff_bandwidth", title="The all-to-all hides exactly above the bandwidth W_hide",
    label="EP hides on bandwidth",
    statement="A token's dispatch and combine over all MoE layers take no longer than its compute exactly when "
              "the link bandwidth is at least \\(W_{\\mathrm{hide}}\\); the tokens per chip cancel.",
    source=_DSV3,
    goal=logic.Iff(logic.le(t_a2a, t_tok), logic.ge(W_c, W_hide)),
    steps=(
        Step(logic.le(n_moe * E_act * (a_d + a_c) / W_c, c_fwd * N_act / F), "substitute the bytes and the compute",
             link="iff"),
        Step(logic.le(n_moe * E_act * (a_d + a_c) * F, c_fwd * N_act * W_c),
             r"multiply by the positive \(W_{\mathrm{c}} F\)", link="iff"),
        Step(logic.ge(W_c, W_hide), r"divide by the positive \(c_{\mathrm{fwd}} N_{\mathrm{act}}\)", link="iff"),
    ),
)
pipeline_p2p_below_tp_allreduce = Claim(
    "network.pipeline_p2p_below_tp_allreduce", title="Pipeline hand-overs carry less than tensor all-reduces",
    statement="With tp ≥ 2 and no more stages than layers, the bytes a step hands across all stage boundaries "
              "are at most the bytes one chip sends in the step's all-reduces.",
    source=paper("Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU Clusters Using "
                 "Megatron-LM (SC '21), arXiv:2104.04473", "section 3.2: pipeline parallelism sends less than "
                 "tensor parallelism, so it goes across nodes"),
    hypotheses=(logic.ge(tp, 2), logic.le(pp, N_L)),
    goal=logic.le((pp - 1) * M_pp, n_ar * N_L * V_ar),
    uses=(ring_allreduce_between_one_and_two_messages,),
)

# Worked examples (the models and links pinned by hypotheses) --------------------------------------------
_L70 = (logic.eq(N_act, si("70e9 param")), logic.eq(N_L, 80), logic.eq(a, si("16384 byte/token")),
        logic.eq(F, si("989e12 FLOP/s")), logic.eq(tp, 8))
_L70_FORALL = (params_active, layers, token_activation_bytes, flops, tp_q, collective_bandwidth)
llama3_70b_tp8_hides_on_nvlink = Claim(
    "network.llama3_70b_tp8_hides_on_nvlink", title="Llama 3 70B on TP8 over NVLink hides its all-reduce bytes",
    statement="70B parameters, 80 layers, activations of 8,192 BF16 elements, an H100's 989 TFLOP/s and 450 GB/s "
              "of NVLink: t* is about 13, so TP8 inside one node hides its all-reduce bytes.",
    source=spec("H100 SXM: 989 TFLOP/s dense BF16, NVLink 4 at 450 GB/s one direction (the h100-sxm preset); "
                "meta-llama/Meta-Llama-3-70B config.json: 80 layers, hidden 8192", "2024-04"),
    hypotheses=(*_L70, logic.eq(W_c, si("450e9 byte/s"))),
    goal=logic.le(tp, t_star),
    instance=True, forall=_L70_FORALL, uses=(tp_bandwidth_hides_iff,),
)
llama3_70b_tp8_hides_on_infiniband = Claim(
    "network.llama3_70b_tp8_hides_on_infiniband", title="False twin: TP8 across nodes over InfiniBand hides",
    statement="The same TP8 group spread over 400 Gb/s InfiniBand (50 GB/s per GPU) would hide its all-reduce "
              "bytes.",
    source=spec("H100 SXM: one 400 Gb/s ConnectX-7 NIC per GPU (the h100-sxm preset)", "2022-03"),
    hypotheses=(*_L70, logic.eq(W_c, si("50e9 byte/s"))),
    goal=logic.le(tp, t_star),
    instance=True, forall=_L70_FORALL, expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of network.llama3_70b_tp8_hides_on_nvlink: at 50 GB/s t* is about 2.35.",
)

# DeepSeek-V3's FP8 dispatch from its shape: hidden 7168, one FP32 scale per 128 elements (the deepseek-v3 preset's
# config gives both); the bytes are DeepEP's message body, 7168 + 56·4 = 7392, the a_d of the worked examples below
_DISPATCH_FORALL = (d_model, dispatch_element_bytes)
deepseek_v3_fp8_dispatch_bytes = Claim(
    "network.deepseek_v3_fp8_dispatch_bytes", title="DeepSeek-V3's FP8 dispatch: 7,392 bytes per token and expert",
    statement="A 7168-element hidden vector in FP8 with one FP32 scale per 128 elements is 7,392 bytes: the "
              "dispatch bytes DeepEP's low-latency kernels send per token and routed expert.",
    source=_DEEPEP,
    hypotheses=(logic.eq(d_model.sym, 7168), logic.eq(e_d, si("1.03125 byte"))),
    goal=logic.eq(a_d, si("7392 byte/token")),
    instance=True, forall=_DISPATCH_FORALL, uses=(dispatch_token_bytes,),
    notes="deepseek-ai/DeepSeek-V3 config.json: hidden_size 7168; quantization_config fp8, activation_scheme "
          "dynamic, weight_block_size [128, 128] (the deepseek-v3 preset's config gives dispatch_bytes_per_element "
          "= 1 + 4/128).",
)
deepseek_v3_fp8_dispatch_bytes_no_scales = Claim(
    "network.deepseek_v3_fp8_dispatch_bytes_no_scales", title="False twin: the FP8 dispatch without its scales",
    statement="Counting the FP8 dispatch at one byte per element, its scales left out, would give DeepEP's 7,392 "
              "bytes per token and expert.",
    source=_DEEPEP,
    hypotheses=(logic.eq(d_model.sym, 7168), logic.eq(e_d, si("1 byte"))),
    goal=logic.eq(a_d, si("7392 byte/token")),
    instance=True, forall=_DISPATCH_FORALL, expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of network.deepseek_v3_fp8_dispatch_bytes: without the 56 four-byte scales the "
          "vector is 7,168 bytes.",
)

_EP8 = (logic.eq(T_chip, si("128 token")), logic.eq(E_act, 8), logic.eq(a_d, si("7392 byte/token")),
        logic.eq(a_c, si("14336 byte/token")))
_EP8_FORALL = (ep_tokens_per_chip, experts_active, dispatch_bytes, combine_bytes, collective_bandwidth)
deepep_dispatch_ep8 = Claim(
    "network.deepep_dispatch_ep8", title="DeepEP's EP8 dispatch: 77 µs at 98 GB/s",
    statement="128 tokens each sent to 8 experts as 7,168 FP8 elements plus 56 four-byte scales (7,392 bytes) are "
              "7.6 MB; at the published 98 GB/s that is within 1 % of the published 77 µs.",
    source=_DEEPEP,
    hypotheses=(*_EP8, logic.eq(W_c, si("98e9 byte/s"))),
    goal=logic.within_percent(t_d, published_dispatch_time.sym, 1),
    instance=True, forall=_EP8_FORALL,
    notes="FP8 dispatch with one float32 scale per 128 elements (DeepSeek-V3 report, section 3.3: 1x128 tiles).",
)
deepep_combine_ep8 = Claim(
    "network.deepep_combine_ep8", title="DeepEP's EP8 combine: 114 µs at 127 GB/s",
    statement="The 8 expert outputs of 128 tokens come back in BF16 (14,336 bytes each), 14.7 MB; at the published "
              "127 GB/s that is within 2 % of the published 114 µs.",
    source=_DEEPEP,
    hypotheses=(*_EP8, logic.eq(W_c, si("127e9 byte/s"))),
    goal=logic.within_percent(t_cb, published_combine_time.sym, 2),
    instance=True, forall=_EP8_FORALL,
)
deepep_dispatch_ep8_bf16 = Claim(
    "network.deepep_dispatch_ep8_bf16", title="False twin: the dispatch priced in BF16",
    statement="Counting the dispatch in BF16 (14,336 bytes per token and expert) would still land within 10 % of "
              "the published 77 µs at 98 GB/s.",
    source=_DEEPEP,
    hypotheses=(logic.eq(T_chip, si("128 token")), logic.eq(E_act, 8), logic.eq(a_d, si("14336 byte/token")),
                logic.eq(a_c, si("14336 byte/token")), logic.eq(W_c, si("98e9 byte/s"))),
    goal=logic.within_percent(t_d, published_dispatch_time.sym, 10),
    instance=True, forall=_EP8_FORALL, expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of network.deepep_dispatch_ep8: BF16 gives about 150 µs, the FP8 dispatch is what "
          "makes the count agree.",
)
deepseek_v3_ep_hide_bandwidth = Claim(
    "network.deepseek_v3_ep_hide_bandwidth", title="DeepSeek-V3's all-to-all needs over 260 GB/s to hide at FP8 peak",
    statement="58 MoE layers, 8 routed experts, FP8 dispatch (7,392 bytes) and BF16 combine (14,336 bytes), 37B "
              "active parameters at 1,979 TFLOP/s: the all-to-all hides behind the weight multiplies only above "
              "260 GB/s per GPU, more than five times the ~50 GB/s of a 400 Gb/s NIC and above the H800's ~160 GB/s "
              "of NVLink.  DeepSeek overlaps it with two micro-batches and limits each token to 4 nodes.",
    source=_DSV3,
    hypotheses=(logic.eq(n_moe, 58), logic.eq(E_act, 8), logic.eq(a_d, si("7392 byte/token")),
                logic.eq(a_c, si("14336 byte/token")), logic.eq(N_act, si("37e9 param")),
                logic.eq(F, si("1979e12 FLOP/s"))),
    goal=logic.And((logic.ge(W_hide, si("260e9 byte/s")), logic.ge(W_hide, 5 * si("50e9 byte/s")))),
    instance=True, forall=(moe_layers, experts_active, dispatch_bytes, combine_bytes, params_active, flops),
    uses=(ep_hides_iff_bandwidth,),
    notes="deepseek-ai/DeepSeek-V3 config.json: num_hidden_layers 61, first_k_dense_replace 3, num_experts_per_tok 8, "
          "hidden_size 7168; 1,979 TFLOP/s is the dense FP8 peak of an H100-class chip (the h100-sxm-fp8 preset). "
          "Node-limited routing (at most 4 nodes per token, report section 2.1.2) halves the bytes that cross "
          "InfiniBand.",
)

tp_allreduce_time_at_least_latency = Claim(
    "network.tp_allreduce_time_at_least_latency", title="A step's all-reduces take at least their scale-up latency",
    label="TP ring latency",
    statement="Whatever the batch and the link, a step's tensor-parallel all-reduces, run as rings, take at least "
              "the message latencies of their ring steps on the scale-up links: a cost no batch size removes.",
    source=_THAKUR,
    goal=logic.ge(t_ar, t_lat),
    uses=(no_message_faster_than_scaleup, ring_allreduce),
)
_L70_LAT = (logic.eq(N_act, si("70e9 param")), logic.eq(N_L, 80), logic.eq(tp, 8), logic.eq(q, si("2 byte/param")),
            logic.eq(W, si("3.35e12 byte/s")), logic.eq(alpha_up, si("0.6 us")))
_L70_LAT_FORALL = (params_active, layers, tp_q, hbm_bandwidth, scaleup_latency)
llama3_70b_tp8_latency_quarter_of_fetch = Claim(
    "network.llama3_70b_tp8_latency_quarter_of_fetch",
    title="TP8's all-reduce latency adds a quarter to Llama 3 70B's weight fetch on H100",
    label="TP8 latency on H100",
    statement="80 layers, two all-reduces each, 14 ring steps at NCCL's 0.6 µs over NVLink: about 1.34 ms of "
              "latency per decode step, more than a quarter of the 5.2 ms it takes eight H100s at 3.35 TB/s to "
              "read 70B BF16 weights.  At small batch a TP8 decode step whose all-reduces run as NCCL rings is at "
              "least a quarter slower than the memory floor says.",
    source=_NCCL,
    hypotheses=_L70_LAT,
    goal=logic.ge(4 * t_lat, N_act * q / (tp * W)),
    instance=True, forall=_L70_LAT_FORALL, uses=(tp_allreduce_time_at_least_latency,),
    notes="The h100-sxm preset's scale-up latency (NCCL's model) and HBM bandwidth; meta-llama/Meta-Llama-3-70B "
          "config.json: 80 layers.",
)
llama3_70b_tp8_latency_negligible = Claim(
    "network.llama3_70b_tp8_latency_negligible",
    title="False twin: TP8's all-reduce latency is a rounding error beside the weight fetch",
    statement="The same TP8 decode step's all-reduce latencies would be under a tenth of its weight fetch.",
    source=_NCCL,
    hypotheses=_L70_LAT,
    goal=logic.le(10 * t_lat, N_act * q / (tp * W)),
    instance=True, forall=_L70_LAT_FORALL, expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of network.llama3_70b_tp8_latency_quarter_of_fetch: the latency is about 26 % of "
          "the fetch.",
)

# Which links a layout's collectives run over --------------------------------------------------------------
# A layout's chips are numbered tensor-parallel innermost and pipeline outermost (Megatron-LM's order), so a
# tensor-parallel group of at most one domain's chips sits inside one domain; an expert-parallel group likewise;
# and the stages of a replica share one domain exactly when all its chips do.
_ORDER = paper("Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU Clusters Using "
               "Megatron-LM (SC '21), arXiv:2104.04473", "section 3.3 and takeaway #1: tensor parallelism up to the "
               "GPUs of one multi-GPU server, pipeline parallelism across servers")
scaleout_slower_than_scaleup = Assumption(
    "network.scaleout_slower_than_scaleup", title="Scale-out links are slower than scale-up links",
    statement="A chip's share of the scale-out network is less bandwidth than its scale-up links.",
    source=_ORDER,
    relation=logic.lt(W_out, W_up),
)
tp_link_bandwidth_q = Quantity("tp_link_bandwidth", r"W_{\mathrm{TP}}", "byte/s",
                               "bandwidth per chip of the links a layout's tensor-parallel all-reduces run over: "
                               "scale-up when the group fits one domain, else scale-out", display_unit="GB/s")
tp_link_latency_q = Quantity("tp_link_latency", r"\alpha_{\mathrm{TP}}", "s",
                             "message latency of the links a layout's tensor-parallel all-reduces run over",
                             domain="nonnegative", display_unit="us")
ep_link_bandwidth_q = Quantity("ep_link_bandwidth", r"W_{\mathrm{EP}}", "byte/s",
                               "bandwidth per chip of the links a layout's expert-parallel all-to-all runs over: "
                               "scale-up when the group fits one domain, else scale-out", display_unit="GB/s")
pp_link_bandwidth_q = Quantity("pp_link_bandwidth", r"W_{\mathrm{PP}}", "byte/s",
                               "bandwidth per chip of the slowest hand-over between a layout's pipeline stages: "
                               "scale-up when the whole replica fits one domain, else scale-out",
                               display_unit="GB/s")
tp_link_allreduce_latency_q = Quantity("tp_link_allreduce_latency", r"t_{\mathrm{lat}}^{\mathrm{TP}}", "s",
                                       "latency part of a step's tensor-parallel all-reduces on the links the layout "
                                       "gives them (none with one chip)", domain="nonnegative", display_unit="ms")
tp_link_allreduce_time_q = Quantity("tp_link_allreduce_time", r"t_{\mathrm{ar}}^{\mathrm{TP}}", "s",
                                    "time of a step's tensor-parallel all-reduces on the links the layout gives "
                                    "them (collective_bandwidth and collective_latency not needed)",
                                    domain="nonnegative", display_unit="ms")
ep_link_alltoall_time_q = Quantity("ep_link_alltoall_time_per_token", r"t_{\mathrm{a2a}}^{\mathrm{EP}}", "s/token",
                                   "dispatch and combine time per token of every MoE layer on the links the "
                                   "layout gives the expert-parallel all-to-all", domain="nonnegative",
                                   display_unit="us/token")
W_tp, alpha_tp, W_ep, W_pp = (tp_link_bandwidth_q.sym, tp_link_latency_q.sym, ep_link_bandwidth_q.sym,
                              pp_link_bandwidth_q.sym)
t_lat_tp = tp_link_allreduce_latency_q.sym
t_ar_tp, t_a2a_ep = tp_link_allreduce_time_q.sym, ep_link_alltoall_time_q.sym
scaleout_message_not_quicker = Assumption(
    "network.scaleout_message_not_quicker", title="A message over scale-out takes at least one over scale-up",
    statement="A ring step over the scale-out network costs at least the per-message latency of the scale-up links.",
    source=_NCCL,
    relation=logic.ge(alpha_out, alpha_up),
)

rings_cross_at_every_nic = Assumption(
    "network.rings_cross_at_every_nic", title="A ring across domains crosses at every chip's network port",
    statement="An all-reduce over more than one scale-up domain runs as several rings (NCCL's channels), each "
              "leaving a domain at a different chip, so a domain's share of every ring's bytes leaves over all its "
              "chips' scale-out ports together (n_dom·W_out), and no chip forwards ring bytes faster than its "
              "scale-up links: a ring's bytes per chip move at min(W_up, n_dom·W_out) at best.  A ring's bytes "
              "cross a domain boundary at least once per domain, so this is a floor for every ring; a hierarchical "
              "or in-switch all-reduce sends fewer bytes across and is not bound by it.",
    source=paper("NVIDIA NCCL documentation, environment variables NCCL_ALGO and NCCL_MIN_NCHANNELS / "
                 "NCCL_CROSS_NIC; and S. Bekman, Machine Learning Engineering (github.com/stas00/ml-engineering, "
                 "network/README.md @ 744d01e)",
                 "a ring all-reduce of 4 GiB on 32 H200s in 4 nodes with NCCL_ALGO=allreduce:ring reaches a bus "
                 "bandwidth of 364.65 GB/s, 7.3 times one 400 Gb/s port and under the 8 ports' 400 GB/s"),
)
tp_link_bandwidth = Definition(
    "network.tp_link_bandwidth", title="Links of the tensor-parallel all-reduces",
    statement="Scale-up bandwidth when the tensor-parallel group fits one scale-up domain; when it spans more than "
              "one, the domain's scale-out ports together, n_dom·W_out, shared by its chips' rings, and never more "
              "than the scale-up links.",
    source=_ORDER, defines=tp_link_bandwidth_q,
    expr=sp.Piecewise((W_up, sp.Le(tp, n_dom)), (sp.Min(W_up, n_dom * W_out), True)),
    uses=(rings_cross_at_every_nic,),
)
tp_link_latency = Definition(
    "network.tp_link_latency", title="Message latency of the tensor-parallel all-reduces",
    statement="The scale-up links' message latency when the group fits one domain, the network's when it spans "
              "more than one.",
    source=_NCCL, defines=tp_link_latency_q, expr=sp.Piecewise((alpha_up, sp.Le(tp, n_dom)), (alpha_out, True)),
)
ep_link_bandwidth = Definition(
    "network.ep_link_bandwidth", title="Links of the expert-parallel all-to-all",
    statement="Scale-up bandwidth when the expert-parallel group fits one scale-up domain, scale-out bandwidth "
              "when it spans more than one.",
    source=_DSV3, defines=ep_link_bandwidth_q, expr=sp.Piecewise((W_up, sp.Le(ep, n_dom)), (W_out, True)),
)
pp_link_bandwidth = Definition(
    "network.pp_link_bandwidth", title="Links of the slowest pipeline hand-over",
    statement="Scale-up bandwidth when all the chips of the replica fit one scale-up domain; otherwise some "
              "stage boundary crosses domains and its hand-over runs over scale-out.",
    source=_ORDER, defines=pp_link_bandwidth_q,
    expr=sp.Piecewise((W_up, sp.Le(n_layout, n_dom)), (W_out, True)),
)

tp_link_allreduce_latency = Definition(
    "network.tp_link_allreduce_latency", title="Latency of a step's all-reduces on the layout's links",
    statement="n_ar all-reduces in each layer, each 2(t − 1) ring steps at the message latency of the links the "
              "tensor-parallel group runs over.",
    source=_THAKUR, defines=tp_link_allreduce_latency_q, expr=2 * n_ar * N_L * (tp - 1) * alpha_tp,
)
tp_link_allreduce_time = Definition(
    "network.tp_link_allreduce_time", title="A step's all-reduces on the layout's links",
    statement="network.tp_allreduce_time with the bandwidth and message latency of the links the layout's "
              "tensor-parallel group runs over, in place of the collective's inputs.",
    source=_THAKUR, defines=tp_link_allreduce_time_q, expr=tp_comm_time.expr.subs({W_c: W_tp, alpha: alpha_tp}),
)
ep_link_alltoall_time = Definition(
    "network.ep_link_alltoall_time_per_token", title="The all-to-all per token on the layout's links",
    statement="network.ep_alltoall_time_per_token with the bandwidth of the links the layout's expert-parallel "
              "group runs over.",
    source=_DSV3, defines=ep_link_alltoall_time_q, expr=ep_alltoall_time.expr.subs(W_c, W_ep),
)
_ALLREDUCE_ON_SCALEUP = tp_comm_time.expr.subs({W_c: W_up, alpha: alpha_up})  # the general time on scale-up links
tp_link_allreduce_time_at_least_scaleup = Claim(
    "network.tp_link_allreduce_time_at_least_scaleup",
    title="A layout's all-reduces take at least their time on scale-up links", label="All-reduces on the layout",
    statement="On whatever links the layout gives them, a step's all-reduces take at least as long as on the "
              "scale-up links (their bandwidth and message latency), and exactly as long when the group fits one "
              "domain.",
    source=_THAKUR,
    goal=logic.And((logic.ge(t_ar_tp, _ALLREDUCE_ON_SCALEUP),
                    logic.Implies(logic.le(tp, n_dom), logic.eq(t_ar_tp, _ALLREDUCE_ON_SCALEUP)))),
    uses=(scaleout_slower_than_scaleup, scaleout_message_not_quicker),
)
tp_link_allreduce_time_at_most_scaleup = Claim(
    "network.tp_link_allreduce_time_at_most_scaleup",
    title="False twin: a layout's all-reduces never take longer than on scale-up",
    statement="The all-reduces would never take longer than on the scale-up links, whatever the layout.",
    source=_THAKUR,
    goal=logic.le(t_ar_tp, _ALLREDUCE_ON_SCALEUP),
    uses=(scaleout_slower_than_scaleup, scaleout_message_not_quicker), expected="refuted",
    tags=("inconsistency",),
    notes="A planted false twin of network.tp_link_allreduce_time_at_least_scaleup: a group wider than one domain "
          "runs over the slower network.",
)

# A floor for every all-reduce, whatever its algorithm ------------------------------------------------------------
allreduce_receives_the_sum = Assumption(
    "network.allreduce_receives_the_sum", title="Every chip of an all-reduce receives the whole sum",
    statement="Every chip ends an all-reduce holding every element of the sum, and each element depends on the other "
              "chips' data, so at least the message's bytes (in its own datatype, uncompressed) reach each chip "
              "over its links, after at least one message latency; past one domain, what depends on the other "
              "domains enters a domain through its chips' scale-out ports together.  Rings, trees, one-shot kernels "
              "and in-switch reduction (NVLink SHARP, InfiniBand SHARP) all move at least this much; an all-reduce "
              "that compresses its message (quantized to fewer bytes) does not, and is not bound by it.",
    source=derived("each chip's result depends on every other chip's input, element by element: in-switch reduction "
                   "delivers each chip the reduced message exactly once (NVIDIA NCCL issue 1455: NVLS all-reduce "
                   "of 2 GiB on 8 H100s at an algorithm bandwidth of about 273 GB/s, under the 450 GB/s links)"),
)
tp_link_allreduce_floor_q = Quantity(
    "tp_link_allreduce_floor", r"t_{\mathrm{ar}}^{\min}", "s",
    "floor on a step's tensor-parallel all-reduces on the layout's links, whatever the algorithm (ring, tree, "
    "one-shot, in-switch): each one message latency plus the whole message once (none with one chip)",
    domain="nonnegative", display_unit="ms")
t_ar_min = tp_link_allreduce_floor_q.sym
tp_link_allreduce_floor = Definition(
    "network.tp_link_allreduce_floor", title="A floor on a step's all-reduces, whatever the algorithm",
    statement="n_ar all-reduces in each layer, each at least one message latency plus the whole message over the "
              "links the layout gives the tensor-parallel group (past one domain, the domain's scale-out ports "
              "together, never more than the scale-up links); nothing with one chip.",
    source=derived("a chip receives every element of the sum at least once (network.allreduce_receives_the_sum), "
                   "over links of at most network.tp_link_bandwidth, after at least one message latency"),
    defines=tp_link_allreduce_floor_q,
    expr=sp.Min(1, tp - 1) * n_ar * N_L * (alpha_tp + M_ar / W_tp),  # tp is a whole number: the factor is 0 or 1
    uses=(allreduce_receives_the_sum,),
)
allreduce_floor_below_ring = Claim(
    "network.allreduce_floor_below_ring", title="A ring never beats the all-reduce floor",
    label="The all-reduce floor",
    statement="On the links a layout gives its tensor-parallel group, the floor of any all-reduce (one message "
              "latency, the message once) is never above a ring's time (2(t − 1) latencies, 2(t − 1)/t of the "
              "message): a ring moves between one and two messages' worth where in-switch reduction moves one.",
    source=_THAKUR,
    goal=logic.le(t_ar_min, t_ar_tp),
    uses=(ring_allreduce_bytes,),
)
allreduce_floor_above_ring = Claim(
    "network.allreduce_floor_above_ring", title="False twin: the all-reduce floor is a ring's time",
    statement="The floor of any all-reduce would be at least a ring's time on the same links.",
    source=_THAKUR,
    goal=logic.ge(t_ar_min, t_ar_tp),
    expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of network.allreduce_floor_below_ring: past two chips a ring takes more latencies "
          "and more bytes than the floor, so in-switch reduction can beat a ring.",
)
# NCCL issue 1455: an NVLS all-reduce of 2 GiB on 8 H100s, algorithm bandwidth about 273 GB/s: 7.87 ms
_NVLS = paper("NVIDIA/nccl issue 1455 (2024-09-19), github.com/NVIDIA/nccl/issues/1455",
              "result 3: all_reduce_perf -b 2G -e 4G with NCCL_ALGO=NVLS, algorithm bandwidth about 273 GB/s on 8 "
              "H100 SXM; result 1: NCCL_ALGO=RING, bus bandwidth 365-370 GB/s")
_NVLS8 = (logic.eq(W_up, si("450e9 byte/s")), logic.eq(alpha_up, si("0.6 us")), logic.eq(n_dom, 8),
          logic.eq(W_out, si("50e9 byte/s")), logic.eq(alpha_out, si("2.7 us")),
          logic.eq(tp, 8), logic.eq(N_L, 1), logic.eq(n_ar, 1), logic.eq(B, si("1 seq")),
          logic.eq(tau, si("1 token/seq")), logic.eq(a, si("2147483648 byte/token")), logic.eq(cp, 1), logic.eq(dp, 1))
_NVLS8_FORALL = (scaleup_bandwidth, scaleup_latency, scaleup_domain, scaleout_bandwidth, scaleout_latency, tp_q,
                 layers, allreduces_per_layer, batch, tokens_per_step, token_activation_bytes, cp_q, dp_q)
_NVLS8_MEASURED = sp.Rational(2**31, 273 * 10**9)  # seconds: 2 GiB at 273 GB/s of algorithm bandwidth
h100_nvls_allreduce_above_floor = Claim(
    "network.h100_nvls_allreduce_above_floor",
    title="An in-switch all-reduce of 2 GiB on 8 H100s stays above the all-reduce floor",
    label="NVLS against the floor",
    statement="Eight H100s on 450 GB/s of NVLink: NVLink SHARP all-reduces 2 GiB in 7.87 ms (273 GB/s of algorithm "
              "bandwidth), above the 4.77 ms floor of any all-reduce (the message once over the links, one "
              "latency).",
    source=_NVLS,
    hypotheses=_NVLS8,
    goal=logic.le(t_ar_min, _NVLS8_MEASURED),
    instance=True, forall=_NVLS8_FORALL, uses=(allreduce_floor_below_ring,),
    notes="The h100-sxm preset's links: 450 GB/s and NCCL's 0.6 us per step (its scale-out links, unused by a group "
          "of one node, as the preset gives them); 2G in all_reduce_perf is 2^31 bytes.",
)
h100_nvls_allreduce_under_ring = Claim(
    "network.h100_nvls_allreduce_under_ring",
    title="False twin: the same in-switch all-reduce takes at least a ring's time",
    statement="Held to a ring's time on the same links (14 latencies, 1.75 messages: 8.36 ms), the 7.87 ms NVLS "
              "all-reduce would be impossible.",
    source=_NVLS,
    hypotheses=_NVLS8,
    goal=logic.le(t_ar_tp, _NVLS8_MEASURED),
    instance=True, forall=_NVLS8_FORALL, expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of network.h100_nvls_allreduce_above_floor: the ring's time is a floor for rings "
          "only (network.ring_allreduce), and in-switch reduction sends each byte to the switch once.",
)
# A measured all-reduce (derive audit's allreduce_time and allreduce_busbw columns) -------------------------------
allreduce_payload_q = Quantity("allreduce_payload", r"P_{\mathrm{ar}}", "byte",
                               "bytes of one measured all-reduce's message (its payload, as nccl-tests' size)",
                               display_unit="MB")
measured_allreduce_time_q = Quantity("measured_allreduce_time", r"T_{\mathrm{ar}}^{\mathrm{meas}}", "s",
                                     "a measured time of one all-reduce of allreduce_payload bytes over the tp chips",
                                     display_unit="us")
allreduce_payload_floor_q = Quantity("allreduce_payload_floor", r"T_{\mathrm{ar}}^{P}", "s",
                                     "floor on one all-reduce of allreduce_payload bytes over the tp chips, whatever "
                                     "the algorithm: one scale-up message latency and the payload once over the "
                                     "scale-up links (none with one chip)", domain="nonnegative", display_unit="us")
P_ar, T_ar_meas, T_ar_P = allreduce_payload_q.sym, measured_allreduce_time_q.sym, allreduce_payload_floor_q.sym
# In min only (an audit bound is evaluated so): the scale-up links' latency and bandwidth, never more than the
# layout's (network.tp_link_allreduce_floor for one all-reduce: past one domain its links are slower and its messages
# no quicker); tp is a whole number, so Min(1, tp - 1) is 0 or 1.
allreduce_payload_floor = Definition(
    "network.allreduce_payload_floor", title="A floor on one all-reduce of a given payload",
    statement="At least one scale-up message latency plus the payload once over the scale-up links, the fastest "
              "links any layout gives an all-reduce; nothing with one chip.",
    source=derived("network.tp_link_allreduce_floor for one all-reduce of allreduce_payload bytes, at the scale-up "
                   "links (network.tp_link_allreduce_time_at_least_scaleup: no layout's links are faster)"),
    defines=allreduce_payload_floor_q,
    expr=sp.Min(1, tp - 1) * (alpha_up + P_ar / W_up),
    uses=(allreduce_receives_the_sum,),
)
measured_allreduce_moves_the_sum = Assumption(
    "network.measured_allreduce_moves_the_sum", title="A measured all-reduce moves its payload once at least",
    statement="A measured all-reduce leaves every chip with the whole sum of its payload, uncompressed, so it takes "
              "at least one message latency of its links and the payload over them "
              "(network.allreduce_receives_the_sum); a payload counted in another datatype than the one sent, or a "
              "faster link than the chip's, breaks it.",
    source=derived("network.allreduce_receives_the_sum applied to one measured all-reduce"),
    relation=logic.ge(T_ar_meas, T_ar_P),
)
allreduce_floor_below_measured = Claim(
    "network.allreduce_floor_below_measured", title="A measured all-reduce takes at least its floor",
    label="Measured all-reduce floor",
    statement="Whatever the algorithm NCCL or another library chose (ring, tree, one-shot, in-switch), a measured "
              "all-reduce of a payload over tp chips takes at least one scale-up message latency and the payload "
              "once over the scale-up links; derive audit holds a table's allreduce_time and allreduce_busbw "
              "columns to it.",
    source=derived("network.measured_allreduce_moves_the_sum"),
    goal=logic.ge(T_ar_meas, T_ar_P),
    uses=(measured_allreduce_moves_the_sum, allreduce_floor_below_ring),
)

# A measured all-to-all (derive audit's alltoall_time and alltoall_busbw columns) --------------------------------
alltoall_payload_q = Quantity("alltoall_payload", r"P_{\mathrm{a2a}}", "byte",
                              "bytes of one measured all-to-all's buffer on each chip (nccl-tests' size): a share "
                              "for every chip of the group, its own included", display_unit="MB")
measured_alltoall_time_q = Quantity("measured_alltoall_time", r"T_{\mathrm{a2a}}^{\mathrm{meas}}", "s",
                                    "a measured time of one all-to-all of alltoall_payload bytes a chip over ep "
                                    "chips", display_unit="us")
alltoall_payload_floor_q = Quantity("alltoall_payload_floor", r"T_{\mathrm{a2a}}^{P}", "s",
                                    "floor on one all-to-all of alltoall_payload bytes a chip over ep chips, "
                                    "whatever the library: one scale-up message latency and the shares bound for "
                                    "other chips over the scale-up links (none with one chip)", domain="nonnegative",
                                    display_unit="us")
P_a2a, T_a2a_meas, T_a2a_P = alltoall_payload_q.sym, measured_alltoall_time_q.sym, alltoall_payload_floor_q.sym
# In min only, as the all-reduce's: ep is a whole number, so Min(1, ep - 1) is 0 or 1 (one chip sends nothing)
alltoall_payload_floor = Definition(
    "network.alltoall_payload_floor", title="A floor on one all-to-all of a given buffer",
    statement="At least one scale-up message latency plus the (ep - 1)/ep of the buffer bound for other chips over "
              "the scale-up links; nothing with one chip.",
    source=derived("network.measured_alltoall_sends_its_shares: the shares leave their chip over links no faster "
                   "than the scale-up links"),
    defines=alltoall_payload_floor_q,
    expr=sp.Min(1, ep - 1) * (alpha_up + (ep - 1) / ep * P_a2a / W_up),
)
measured_alltoall_sends_its_shares = Assumption(
    "network.measured_alltoall_sends_its_shares", title="A measured all-to-all sends every other chip its share",
    statement="A measured all-to-all hands each other chip of the group its own share of every chip's buffer, "
              "uncompressed: nothing is reduced or shared on the way, so (ep - 1)/ep of each buffer leaves its chip "
              "over its links, at most the scale-up links' bandwidth, after at least one message latency.  A buffer "
              "counted in another datatype than the one sent breaks it.",
    source=paper("NVIDIA/nccl-tests issue 130 (2023-02-03), github.com/NVIDIA/nccl-tests/issues/130",
                 "the all-to-all bus bandwidth is the algorithm bandwidth times (n - 1)/n, since 1/n of the data is "
                 "local and (n - 1)/n remote; an all-to-all's output on each chip is the other chips' distinct "
                 "shares, nothing reduced"),
    relation=logic.ge(T_a2a_meas, T_a2a_P),
)
alltoall_floor_below_measured = Claim(
    "network.alltoall_floor_below_measured", title="A measured all-to-all takes at least its floor",
    label="Measured all-to-all floor",
    statement="A measured all-to-all of a buffer over ep chips takes at least one scale-up message latency and "
              "the (ep - 1)/ep of the buffer bound for other chips over the scale-up links, whatever the library "
              "and the topology; derive audit holds a table's alltoall_time and alltoall_busbw columns to it.",
    source=derived("network.measured_alltoall_sends_its_shares"),
    goal=logic.ge(T_a2a_meas, T_a2a_P),
    uses=(measured_alltoall_sends_its_shares,),
)
# NCCL issue 2169: alltoall_perf on 4 H100s of one node, 524,288,000 B in 1,174.14 us (busbw 334.90 GB/s)
_A2A4 = paper("NVIDIA/nccl issue 2169 (2025), github.com/NVIDIA/nccl/issues/2169",
              "alltoall_perf -b 500M on 4 H100 80GB HBM3 of one node, NCCL 2.23: size 524288000 B, out-of-place time "
              "1174.14 us, algbw 446.53 GB/s, busbw 334.90 GB/s")
_A2A4_HYP = (logic.eq(W_up, si("450e9 byte/s")), logic.eq(alpha_up, si("0.6 us")), logic.eq(ep, 4),
             logic.eq(P_a2a, si("524288000 byte")))
_A2A4_FORALL = (scaleup_bandwidth, scaleup_latency, ep_q, alltoall_payload_q)
_A2A4_MEASURED = sp.Rational(117414, 10**8)  # seconds: 1,174.14 us
h100_alltoall_4_gpus_above_floor = Claim(
    "network.h100_alltoall_4_gpus_above_floor", title="An all-to-all of 500 MiB on 4 H100s stays above its floor",
    label="All-to-all against the floor",
    statement="Four H100s of one node on 450 GB/s of NVLink: nccl-tests all-to-alls 524 MB a GPU in 1.174 ms (a bus "
              "bandwidth of 334.9 GB/s), above the 874.4 us floor: three quarters of the buffer over the NVLink "
              "links and one latency.",
    source=_A2A4,
    hypotheses=_A2A4_HYP,
    goal=logic.le(T_a2a_P, _A2A4_MEASURED),
    instance=True, forall=_A2A4_FORALL, uses=(alltoall_floor_below_measured,),
    notes="The h100-sxm preset's links: 450 GB/s one direction and NCCL's 0.6 us per step.",
)
h100_alltoall_4_gpus_on_the_network = Claim(
    "network.h100_alltoall_4_gpus_on_the_network",
    title="False twin: the same all-to-all held to one 400 Gb/s network port",
    statement="Held to the node's network port instead (50 GB/s a GPU), the same 1.174 ms all-to-all would be "
              "consistent: three quarters of 524 MB over 50 GB/s.",
    source=_A2A4,
    hypotheses=(logic.eq(W_up, si("50e9 byte/s")), logic.eq(alpha_up, si("2.7 us")), logic.eq(ep, 4),
                logic.eq(P_a2a, si("524288000 byte"))),
    goal=logic.le(T_a2a_P, _A2A4_MEASURED),
    instance=True, forall=_A2A4_FORALL, expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of network.h100_alltoall_4_gpus_above_floor: 7.86 ms over one port, so the "
          "measurement ran on NVLink; a floor over the slower links would call it impossible.",
)

tp_on_scaleup_iff = Claim(
    "network.tp_on_scaleup_iff", title="TP all-reduces run on scale-up up to one domain, slower past it",
    label="TP stays on scale-up",
    statement="A layout's tensor-parallel all-reduces get the scale-up bandwidth when tp is at most the chips of "
              "one scale-up domain, and never more; one chip more and they share the domain's scale-out ports, "
              "slower exactly when those ports together are slower than one chip's scale-up links.",
    source=_ORDER,
    goal=logic.And((logic.Implies(logic.le(tp, n_dom), logic.eq(W_tp, W_up)), logic.le(W_tp, W_up),
                    logic.Iff(logic.lt(W_tp, W_up), logic.And((logic.gt(tp, n_dom),
                                                               logic.lt(n_dom * W_out, W_up)))))),
    uses=(scaleout_slower_than_scaleup,),
)
tp_on_scaleup_below_domain = Claim(
    "network.tp_on_scaleup_below_domain", title="False twin: a group of exactly one domain leaves it",
    statement="The all-reduces would get the scale-up bandwidth only when tp is strictly below the chips of one "
              "domain.",
    source=_ORDER,
    goal=logic.Iff(logic.eq(W_tp, W_up), logic.lt(tp, n_dom)),
    uses=(scaleout_slower_than_scaleup,), expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of network.tp_on_scaleup_iff: tp = 8 on an 8-GPU domain is inside it.",
)
ep_on_scaleup_iff = Claim(
    "network.ep_on_scaleup_iff", title="The all-to-all runs on scale-up exactly up to one domain",
    statement="A layout's expert-parallel dispatch and combine get the scale-up bandwidth exactly when ep is at "
              "most the chips of one scale-up domain.",
    source=_DSV3,
    goal=logic.Iff(logic.eq(W_ep, W_up), logic.le(ep, n_dom)),
    uses=(scaleout_slower_than_scaleup,),
)
pp_on_scaleout_iff = Claim(
    "network.pp_on_scaleout_iff", title="A pipeline hand-over crosses domains exactly past one domain of chips",
    statement="The slowest pipeline hand-over of a layout runs over scale-out exactly when the layout's chips, "
              "tp·pp·cp·dp, exceed one scale-up domain; a two-stage layout on one domain's chips stays on scale-up.",
    source=_ORDER,
    goal=logic.Iff(logic.eq(W_pp, W_out), logic.gt(tp * pp * cp * dp, n_dom)),
    uses=(scaleout_slower_than_scaleup,),
)

tp_link_latency_at_least_scaleup = Claim(
    "network.tp_link_latency_at_least_scaleup", title="A layout's all-reduce latency is at least the scale-up one",
    statement="On whatever links the layout gives them, a step's all-reduces take at least their latency on the "
              "scale-up links, and exactly that when the group fits one domain.",
    source=_THAKUR,
    goal=logic.And((logic.ge(t_lat_tp, t_lat), logic.Implies(logic.le(tp, n_dom), logic.eq(t_lat_tp, t_lat)))),
    uses=(scaleout_message_not_quicker,),
)

_H100_LINKS = (logic.eq(W_up, si("450e9 byte/s")), logic.eq(W_out, si("50e9 byte/s")), logic.eq(n_dom, 8),
               logic.eq(cp, 1), logic.eq(dp, 1))
_LINKS_FORALL = (scaleup_bandwidth, scaleout_bandwidth, scaleup_domain, tp_q, pp_q, cp_q, dp_q)
llama3_405b_tp8_pp2_links = Claim(
    "network.llama3_405b_tp8_pp2_links", title="Llama 3 405B on TP8 × PP2: all-reduces on NVLink, hand-over on "
    "InfiniBand", label="TP8 × PP2 on two nodes",
    statement="Meta served Llama 3 405B in BF16 on two 8-GPU H100 nodes, tensor parallel inside a node and "
              "pipeline parallel across the two: the all-reduces run at NVLink's 450 GB/s, the one hand-over "
              "between the stages at a 400 Gb/s NIC's 50 GB/s.",
    source=paper("Llama Team 2024, The Llama 3 Herd of Models, arXiv:2407.21783",
                 "section 6.1 (pipeline parallelism): BF16 inference on two machines with 8 H100 GPUs each, "
                 "tensor parallelism within a machine, pipeline parallelism across the two"),
    hypotheses=(*_H100_LINKS, logic.eq(tp, 8), logic.eq(pp, 2)),
    goal=logic.And((logic.eq(W_tp, si("450e9 byte/s")), logic.eq(W_pp, si("50e9 byte/s")))),
    instance=True, forall=_LINKS_FORALL, uses=(tp_on_scaleup_iff, pp_on_scaleout_iff),
    notes="The h100-sxm preset: scale-up 450 GB/s, scale-out 400 Gb/s, 8 GPUs per NVLink domain.",
)
llama3_405b_tp16_on_nvlink = Claim(
    "network.llama3_405b_tp16_on_nvlink", title="False twin: TP16 over two nodes keeps NVLink bandwidth",
    statement="Spreading the same 16 GPUs as one tensor-parallel group of 16 would keep the all-reduces on "
              "NVLink's 450 GB/s.",
    source=spec("H100 SXM: 8 GPUs per NVLink domain (HGX/DGX H100), one 400 Gb/s ConnectX-7 NIC per GPU (the "
                "h100-sxm preset)", "2022-03"),
    hypotheses=(*_H100_LINKS, logic.eq(tp, 16), logic.eq(pp, 1)),
    goal=logic.eq(W_tp, si("450e9 byte/s")),
    instance=True, forall=_LINKS_FORALL, expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of network.llama3_405b_tp8_pp2_links: a group of 16 spans two domains, so its "
          "all-reduces share each node's eight 50 GB/s ports, 400 GB/s.",
)
# a ring all-reduce across four 8-GPU nodes, measured with the ring forced: the bytes alone at the links the layout
# gives them stay under it (the latency, 62 steps of a few microseconds, is under 1 % here)
_MLE = paper("S. Bekman, Machine Learning Engineering, github.com/stas00/ml-engineering, network/README.md @ 744d01e",
             "all_reduce_perf of 4 GiB on 32 H200 SXM (4 p5en nodes, NVLink inside, EFA 400 Gb/s a GPU between) with "
             "NCCL_ALGO=allreduce:ring: bus bandwidth 364.65 GB/s, 22.8 ms")
_RING32 = (logic.eq(W_up, si("450e9 byte/s")), logic.eq(W_out, si("50e9 byte/s")), logic.eq(n_dom, 8),
           logic.eq(tp, 32), logic.eq(B, si("1 seq")), logic.eq(tau, si("1 token/seq")),
           logic.eq(a, si("4294967296 byte/token")), logic.eq(cp, 1), logic.eq(dp, 1))
_RING32_FORALL = (scaleup_bandwidth, scaleout_bandwidth, scaleup_domain, tp_q, batch, tokens_per_step,
                  token_activation_bytes, cp_q, dp_q)
h200_ring_32_gpus_under_measured = Claim(
    "network.h200_ring_32_gpus_under_measured",
    title="A 4 GiB ring all-reduce on 32 H200s: its bytes take 20.8 ms at least, 22.8 ms measured",
    label="A ring across four nodes",
    statement="Four nodes of eight H200s, 450 GB/s of NVLink and a 400 Gb/s port per GPU: a ring all-reduce of 4 GiB "
              "sends each GPU 1.9375 x 4 GiB, which the layout's links (each node's eight ports together, 400 GB/s) "
              "move in 20.8 ms at best, under the 22.8 ms measured with NCCL's ring forced.",
    source=_MLE,
    hypotheses=_RING32,
    goal=logic.le(V_ar / W_tp, si("22.8e-3 s")),
    instance=True, forall=_RING32_FORALL, uses=(rings_cross_at_every_nic,),
    notes="network.tp_link_bandwidth at tp = 32 over 8-GPU domains: min(450 GB/s, 8 x 50 GB/s).",
)
h200_ring_32_gpus_one_port = Claim(
    "network.h200_ring_32_gpus_one_port",
    title="False twin: the 32-GPU ring's bytes each go through one GPU's 400 Gb/s port",
    statement="Read as if every GPU's ring bytes crossed its own 50 GB/s port, the same all-reduce would take at "
              "least 166 ms: seven times the 22.8 ms measured.",
    source=_MLE,
    hypotheses=_RING32,
    goal=logic.le(V_ar / W_out, si("22.8e-3 s")),
    instance=True, forall=_RING32_FORALL, expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of network.h200_ring_32_gpus_under_measured: derive's tp_link_bandwidth read it so "
          "until the published-measurements pass found this ring 7.3 times under it.",
)
_L405_LAT = (logic.eq(N_L, 126), logic.eq(n_dom, 8), logic.eq(alpha_up, si("0.6 us")),
             logic.eq(alpha_out, si("2.7 us")))
_L405_LAT_FORALL = (layers, scaleup_domain, scaleup_latency, scaleout_latency)


def _tp_latency_at(degree: int) -> sp.Expr:
    """The definition's latency at a given degree, its links chosen by the definition's own rule."""
    return tp_link_allreduce_latency.expr.subs(alpha_tp, tp_link_latency.expr).subs(tp, degree)



llama3_405b_tp16_latency_vs_tp8 = Claim(
    "network.llama3_405b_tp16_latency_vs_tp8",
    title="Llama 3 405B: TP16 across two nodes pays over nine times TP8's all-reduce latency",
    statement="126 layers, two all-reduces each: TP8 inside a node pays 14 ring steps at NCCL's 0.6 µs (2.1 ms per "
              "step), TP16 across two nodes 30 ring steps at 2.7 µs over the network (20.4 ms), more than nine times "
              "as much; this is why the 16 GPUs are split by pipeline across the nodes.",
    source=_NCCL,
    hypotheses=_L405_LAT,
    goal=logic.ge(_tp_latency_at(16), 9 * _tp_latency_at(8)),
    instance=True, forall=_L405_LAT_FORALL, uses=(tp_link_latency_at_least_scaleup,),
    notes="meta-llama/Llama-3.1-405B config.json: 126 layers; the h100-sxm preset's latencies (NCCL's model).",
)
llama3_405b_tp16_latency_tenfold = Claim(
    "network.llama3_405b_tp16_latency_tenfold",
    title="False twin: TP16 across two nodes pays ten times TP8's all-reduce latency",
    statement="The same two layouts: TP16's all-reduce latency would be at least ten times TP8's.",
    source=_NCCL,
    hypotheses=_L405_LAT,
    goal=logic.ge(_tp_latency_at(16), 10 * _tp_latency_at(8)),
    instance=True, forall=_L405_LAT_FORALL, expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of network.llama3_405b_tp16_latency_vs_tp8: the ratio is 30 × 2.7 / (14 × 0.6) = "
          "9.64.",
)
deepseek_v3_ep32_alltoall_on_infiniband = Claim(
    "network.deepseek_v3_ep32_alltoall_on_infiniband",
    title="DeepSeek-V3's EP32 prefill all-to-all runs over InfiniBand and does not hide at FP8 peak",
    statement="DeepSeek-V3's prefill unit spreads the experts over 32 H800 GPUs, four 8-GPU nodes: the all-to-all "
              "crosses nodes, so it runs at the ~50 GB/s of a 400 Gb/s NIC, under the bandwidth at which it would "
              "hide behind the weight multiplies at FP8 peak; DeepSeek overlaps two micro-batches to hide it.",
    source=_DSV3,
    hypotheses=(logic.eq(ep, 32), logic.eq(n_dom, 8), logic.eq(W_up, si("160e9 byte/s")),
                logic.eq(W_out, si("50e9 byte/s")), logic.eq(n_moe, 58), logic.eq(E_act, 8),
                logic.eq(a_d, si("7392 byte/token")), logic.eq(a_c, si("14336 byte/token")),
                logic.eq(N_act, si("37e9 param")), logic.eq(F, si("1979e12 FLOP/s"))),
    goal=logic.And((logic.eq(W_ep, W_out), logic.lt(W_ep, W_hide))),
    instance=True, forall=(ep_q, scaleup_domain, scaleup_bandwidth, scaleout_bandwidth, moe_layers, experts_active,
                           dispatch_bytes, combine_bytes, params_active, flops),
    uses=(ep_on_scaleup_iff, ep_hides_iff_bandwidth),
    notes="Report section 3.4.1: the prefill unit is 4 nodes with 32 GPUs, EP32; section 3.2.2 and DeepEP's "
          "docs/legacy.md: cross-node all-to-all over InfiniBand (CX7 400 Gb/s, ~50 GB/s), NVLink ~160 GB/s on "
          "H800.",
)

PROSE = (
    "A layout pays for its split in messages.  Tensor parallelism all-reduces the activations its group carries "
    "twice in every layer; a ring all-reduce sends each chip between one and two messages' worth of bytes.",
    "{{result:tp_bandwidth_hides_iff}}",
    "The threshold does not depend on the batch: a token brings as much compute as it brings all-reduce bytes.  "
    "The per-message latency is what a batch does pay for.",
    "{{result:tp_hides_iff_batch}}",
    "No batch removes the latency itself: every ring step pays at least the scale-up links' message latency, and "
    "at the small batches of interactive decoding that cost is a visible share of the step.  It is why one-shot "
    "all-reduce kernels and in-switch reduction exist: they take fewer steps, so for them the ring's latency is "
    "no floor (network.ring_allreduce).",
    "{{result:tp_allreduce_time_at_least_latency}}",
    "{{result:llama3_70b_tp8_latency_quarter_of_fetch}}",
    "Expert parallelism sends each token to its routed experts and back; the tokens per chip cancel again, and the "
    "question becomes one of link bandwidth.",
    "{{result:ep_hides_iff_bandwidth}}",
    "DeepEP's published timings are the worked example: 128 tokens to 8 experts, in FP8 out and BF16 back, take "
    "77 and 114 µs at the bandwidths it reports, as the byte counts say; priced in BF16 both ways the dispatch "
    "would take twice as long.",
    "Which links a collective gets follows from the layout.  With the chips numbered tensor-parallel innermost, a "
    "group of at most one scale-up domain's chips stays on the scale-up links; one chip more and it crosses the "
    "scale-out network, whose ports in one domain carry the rings' crossings together.",
    "{{result:tp_on_scaleup_iff}}",
    "A ring that does cross domains leaves each one at several chips, one ring per port, so a domain's ports carry "
    "its crossings together: a measured 32-GPU ring sits just above the floor this gives, and seven times under "
    "one port's.",
    "{{result:h200_ring_32_gpus_under_measured}}",
    "So a model too large for one node goes across nodes by pipeline, not by tensor parallelism: Llama 3 405B on "
    "two H100 nodes keeps its all-reduces on NVLink and sends one hand-over per step over InfiniBand.",
    "{{result:llama3_405b_tp8_pp2_links}}",
    "On the layout's own links the all-reduces need no typed-in bandwidth (tp_link_allreduce_time), and they never "
    "run faster than on the scale-up links.",
    "{{result:tp_link_allreduce_time_at_least_scaleup}}",
    "A ring is one algorithm among several.  Whatever the algorithm, every chip ends with every element of the "
    "sum, so the whole message reaches it at least once: one message latency and the message over the links is "
    "a floor for rings, trees, one-shot kernels and in-switch reduction alike, and never above a ring's time.",
    "{{result:allreduce_floor_below_ring}}",
    "In-switch reduction comes closest to it: NVLink SHARP on eight H100s all-reduces 2 GiB faster than any ring "
    "can on the same links, and still above the floor.",
    "{{result:h100_nvls_allreduce_above_floor}}",
)
