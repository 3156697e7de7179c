"""Parallel layouts and chip counts: the chips of a layout from its degrees, and the weights each chip holds

Chapter 3 of part II ("Beyond the lecture").  A serving or training layout splits the model and the work
by degrees: tensor parallelism (tp) splits every layer's matrices, pipeline parallelism (pp) the layers,
context parallelism (cp) the sequence, data parallelism (dp) replicates.  Expert parallelism (ep) spreads
the routed experts over devices the other degrees already use (DeepSeek-V3 runs its experts over the
attention's TP × DP devices): it adds no chips.  The chip count is therefore derived, tp·pp·cp·dp, never
typed a second time; counting ep as a further factor is the 4-8x overcount shipped tools make.

Main claims:
- ``layouts.layout_chips``: chips = tp·pp·cp·dp; ``layouts.stage_chips``: a stage's chips, tp·cp·dp;
  **Stages times stage chips** ``layouts.layout_is_stages_of_chips``: a layout is pp stages of tp·cp·dp chips,
  more than one stage pools exactly when pp ≥ 2.
- **EP adds no chips**
  ``layouts.expert_parallel_adds_no_chips``: under the named assumption
  ``layouts.experts_share_devices`` (ep at most the devices of one stage), the chips of a layout are at
  least ep and do not grow with it.
- ``layouts.llama3_405b_two_nodes``: Llama 3 405B's BF16 weights exceed one H100 node and half of them fit one,
  so TP8 × PP2 on two nodes, as Meta served it (``layouts.llama3_405b_one_node``, one node, is refuted).
- ``layouts.deepseek_v3_prefill_chips`` and ``layouts.deepseek_v3_decode_chips``: DeepSeek's published
  units (TP4 × DP8 with EP32; TP4 × DP80 with EP320) are 32 and 320 GPUs, as published;
  ``layouts.deepseek_v3_decode_ep_as_extra_chips`` (expected ``refuted``): counting EP as a factor gives
  102,400.
- **Weights per chip** ``layouts.weights_per_chip_shape``: the dense part is split tp·pp ways, the routed
  experts' slots (the experts and the redundant copies a layout hosts) pp·max(tp, ep) ways (whole experts over
  ep devices; where tp is wider, each expert split as a dense layer is, as vLLM does without expert
  parallelism); without redundant copies a chip's weights lie between the whole model over pp·max(tp, ep) and
  over pp·tp, and with ep = tp the split is the model over tp·pp.  DeepSeek-V3's EP320 decode unit hosts 256
  experts and 64 other slots, one expert a GPU, as published.
- **Layout memory** ``layouts.layout_memory_at_least_pooled``: a chip of a layout holds its weights and its KV
  cache (``layouts.layout_memory_per_chip``; a KV head is copied onto tp/kv_heads devices once tp passes the KV
  heads), at least the lecture's pooled share (``capacity.memory_capacity_per_gpu``): data and context
  parallelism copy the dense weights.  So the lecture's fit is necessary, never sufficient, and the serving
  library adds ``layouts.layout_memory_fits_in_hbm`` to the feasibility bounds: Llama 3 70B in BF16 as eight
  data-parallel replicas on one H100 node pools 17.6 GB a chip and fits on no chip
  (``layouts.llama3_70b_dp8_fits_no_chip``).

Notation: tp, pp, cp, dp, ep the degrees (integers), N_tot total parameters, N_exp the routed experts'
parameters (all layers), q bytes per parameter.

Implementation notes: the degrees are integer quantities with the positive domain, so a zero, negative or
fractional degree is one error line.  A layout is an input table (``INPUT_TABLE``: a scenario file's
``[layout]``, or ``--set tp=8 ...``); a degree it does not give is 1.  ``INPUT_CONSTRAINTS`` are the rules a
layout must meet at the scenario's model and chips, each refused in one line naming its numbers:

- tp divides the query heads (each device computes whole heads);
- tp and the KV heads divide one another: tp splits the KV heads evenly, or, past them, each KV head is
  replicated on tp/kv_heads devices (vLLM and SGLang replicate KV heads this way; a latent-attention model
  caches one latent, kv_heads = 1, replicated on every tensor-parallel device);
- pp is at most the layers (a stage holds at least one layer).  Uneven stages are allowed, as Megatron-LM
  and vLLM allow them: when pp does not divide the layers the scenario carries a note, the heaviest stage
  holds ceil(layers/pp) layers, and the per-chip figures here are averages over the stages;
- ep divides the routed experts plus the redundant copies a layout hosts (``redundant_experts``, 0 unless
  given): DeepSeek-V3's EP320 decode holds 256 experts and 64 redundant and shared slots, its EP32 and EP144
  units 256 + 32 redundant experts (9 and 2 per GPU);
- ep ≤ tp·cp·dp (``layouts.experts_share_devices``);
- a layout gives the lecture's ``chips`` and ``stages`` (the table's ``gives``): chips = tp·cp·dp, the chips
  whose bandwidth and capacity one pipeline stage pools (the lecture's n), and stages = pp (the lecture's P), so
  a replica is deployed on stages × chips = tp·pp·cp·dp chips.  They replace a chip preset's ``chips`` (one
  scale-up domain, the replica of the lecture's model when no layout is given); a value typed by hand must agree
  (``layouts.chips_are_the_stage``, ``layouts.stages_are_pp``), never a second source of the count.  A layout
  may span scale-up domains (``scaleup_domain``, from the chip preset): Llama 3 405B on TP8 × PP2 is two 8-GPU
  nodes, each stage one node; a tensor-parallel group past one domain is a note
  (``layouts.tp_within_scaleup_domain``), and the network chapter prices its all-reduces on scale-out.

Why chips is a stage's and not the replica's: the stages of one token run one after the other (the lecture's
``pipeline.pipelined_step_time``), so a decode step reads each stage's weights over that stage's chips, and the
lecture's step time over ``chips`` with ``stages`` pipelined is the replica's; pooling all pp stages' bandwidth
for one token would halve Llama 3 405B's TP8 × PP2 step time, a floor above no measurement but wrong by pp.

The decode floor of a layout (``layouts.layout_decode_floor``): every step of a replica reads the dense weights a
token multiplies over that replica's tp devices (``layouts.replica_weight_fetch_floor``), where the lecture's
floor spreads them over the whole stage; for a dense model the lecture's floor is low by exactly cp·dp
(``layouts.data_parallel_floor_is_cp_dp_times_pooled``).  DeepSeek-V3's EP144 decode unit on H100s: 4.85 ms, where
the pooled floor says 76 us.

Activations enter a chip's memory at their least (``layouts.layout_activation_bytes_per_chip``): the hidden state
of every token of a decode step, held once somewhere on its stage; the kernels' intermediates and workspace are left
out (they only add to it: a fit here is necessary for a real deployment, never sufficient).  The lecture's step
time pools a stage's chips' bandwidth as if each weight were read once per stage; under data parallelism every
replica reads its own copy, so ``layouts.layout_step_time`` adds the copies' reads (for a dense model it is one
replica's own step at its share of the batch), and ``layouts.layout_step_at_least_replica_read`` proves it never
below the replica's dense read.

References: Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using
Megatron-LM" (SC '21), section 3.1 (p·t·d = n GPUs); DeepSeek-AI 2024, "DeepSeek-V3 Technical Report",
arXiv:2412.19437, sections 3.4.1 and 3.4.2 (prefill unit of 32 GPUs: attention TP4 with SP and DP8, MoE
EP32; decode unit of 320 GPUs: TP4, DP80, EP320); DeepSeek-AI 2025, "DeepSeek-V3/R1 Inference System
Overview" (open-infra-index, day 6: prefill EP32 with DP32 over 4 nodes, decode EP144 with DP144 over 18
nodes, 32 redundant routed experts in each); Liu et al. 2024, "Ring Attention with Blockwise
Transformers for Near-Infinite Context" (context parallelism).
"""

from __future__ import annotations

import sympy as sp

from derive import Assumption, Claim, Definition, Quantity, Step, logic, paper, si, spec
from theorems.capacity import memory_per_chip_q
from theorems.context import kv_heads as kv_heads_q
from theorems.context import query_heads as query_heads_q
from theorems.moe import scaleup_domain as scaleup_domain_q
from theorems.moe import token_activation_bytes as token_activation_bytes_q
from theorems.pipeline import sequences_in_flight_q
from theorems.pipeline import stages as stages_q
from theorems.pricing import prefill_tokens as prefill_tokens_q
from theorems.roofline import (
    N_tot,
    c_fwd,
    compute_time_q,
    kv_bytes_per_sequence_q,
    kv_fetch_time_q,
    memory_time_q,
    q,
    weight_fetch_floor_q,
)
from theorems.roofline import batch as batch_q
from theorems.roofline import bytes_per_param as bytes_per_param_q
from theorems.roofline import chips as chips_q
from theorems.roofline import experts_active as experts_active_q
from theorems.roofline import experts_total as experts_total_q
from theorems.roofline import flops as flops_q
from theorems.roofline import hbm_bandwidth as hbm_bandwidth_q
from theorems.roofline import hbm_capacity as hbm_capacity_q
from theorems.roofline import layers as layers_q
from theorems.roofline import params_active as params_active_q
from theorems.roofline import params_output_head as params_output_head_q
from theorems.roofline import params_total as params_total_q
from theorems.roofline import tokens_per_step as tokens_per_step_q

from .prefill import request_sequences as request_sequences_q
from .prefill import request_ttft_floor_q

PART = "Beyond the lecture"  # the documents render this library's chapters as part II
CHAPTER = "Parallel layouts and chip counts"

_MEGATRON = paper("Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU Clusters Using "
                  "Megatron-LM (SC '21), arXiv:2104.04473", "section 3.1, notation: p·t·d = n GPUs")
_DSV3 = paper("DeepSeek-AI 2024, DeepSeek-V3 Technical Report, arXiv:2412.19437",
              "sections 3.4.1-3.4.2: prefill unit 32 GPUs (TP4 + SP, DP8, EP32); decode unit 320 GPUs (TP4 + SP, "
              "DP80, EP320)")
_KORTHIKANTI = paper("Korthikanti et al. 2023, Reducing Activation Recomputation in Large Transformer Models "
                     "(MLSys 2023), arXiv:2205.05198",
                     "section 4: a transformer layer's activations are s·b·h·(34 + 5·a·s/h) bytes in 16-bit precision, "
                     "of which its input, every token's hidden state, is 2·s·b·h")
_VLLM_TP = paper("vLLM, vllm/model_executor/layers/linear.py, QKVParallelLinear",
                 "the query heads and the KV heads are split over the tensor-parallel devices; with more devices "
                 "than KV heads each KV head is replicated on tp/kv_heads of them, which must be whole")

tp_q = Quantity("tp", r"d_{\mathrm{TP}}", "1", "tensor-parallel degree: devices that split every layer's matrices",
                integer=True)
pp_q = Quantity("pp", r"d_{\mathrm{PP}}", "1", "pipeline-parallel degree: stages the layers are split into",
                integer=True)
cp_q = Quantity("cp", r"d_{\mathrm{CP}}", "1", "context-parallel degree: devices that split one sequence's tokens",
                integer=True)
dp_q = Quantity("dp", r"d_{\mathrm{DP}}", "1", "data-parallel degree: replicas of the attention (and dense) part",
                integer=True)
ep_q = Quantity("ep", r"d_{\mathrm{EP}}", "1", "expert-parallel degree: devices the routed experts are spread over, "
                "taken from the devices of one stage", integer=True)
params_routed = Quantity("params_routed", r"N_{\mathrm{exp}}", "param",
                         "parameters of the routed experts, all layers (the rest of N_tot is dense; 0 for a dense "
                         "model)", domain="nonnegative")
redundant_experts_q = Quantity("redundant_experts", r"E_{\mathrm{red}}", "1",
                              "expert slots a layout holds beyond the routed experts of one layer: redundant copies of "
                              "busy experts (and DeepSeek-V3's shared-expert slots in decode)", domain="nonnegative",
                              integer=True)
layout_chips_q = Quantity("layout_chips", r"n_{\mathrm{layout}}", "1",
                          "chips a layout occupies: every stage's chips, the chips one replica is deployed on")
stage_chips_q = Quantity("stage_chips", r"n_{\mathrm{stage}}", "1",
                         "chips of one pipeline stage of a layout, whose bandwidth and capacity a stage pools")
weights_per_chip_q = Quantity("weights_per_chip", r"M_{\mathrm{w}}", "byte",
                              "weight bytes one chip holds: its share of the dense part and of the routed experts",
                              display_unit="GB")
layout_kv_bytes_per_chip_q = Quantity(
    "layout_kv_bytes_per_chip", r"M_{\mathrm{kv,layout}}", "byte",
    "KV-cache bytes one chip of a layout holds: its stage's layers of its share of the sequences in flight, each "
    "KV head on tp/kv_heads devices once tp passes the KV heads", display_unit="GB")
layout_activation_bytes_per_chip_q = Quantity(
    "layout_activation_bytes_per_chip", r"M_{\mathrm{act}}", "byte",
    "activation bytes one chip of a layout holds at least during a decode step: its share of the step's tokens' "
    "hidden states (the kernels' intermediates and workspace come on top)", display_unit="GB")
layout_memory_per_chip_q = Quantity(
    "layout_memory_per_chip", r"M_{\mathrm{layout}}", "byte",
    "HBM bytes one chip of a layout must hold: its weights, its KV cache and its share of the step's hidden states "
    "(the kernels' intermediates and workspace left out)", display_unit="GB")
replica_weight_fetch_floor_q = Quantity(
    "replica_weight_fetch_floor", r"t_{\mathrm{w}}^{\mathrm{rep}}", "s",
    "time one replica's tensor-parallel group takes to read the dense weights a token multiplies (all its active "
    "weights but the routed experts'), which every decode step of that replica reads", display_unit="ms")
layout_decode_floor_q = Quantity(
    "layout_decode_floor", r"t_{\mathrm{w}}^{\mathrm{layout}}", "s",
    "floor on a decode step under a layout: the slower of the pooled weight fetch floor and one replica's read "
    "of its dense weights", display_unit="ms")
layout_step_time_q = Quantity(
    "layout_step_time", r"T_{\mathrm{layout}}", "s",
    "roofline time of a decode step under a layout: the lecture's step with each replica's read of its dense weights "
    "and each copied KV head's read counted", display_unit="ms")

tp, pp, cp, dp, ep = tp_q.sym, pp_q.sym, cp_q.sym, dp_q.sym, ep_q.sym
N_exp, n_layout, M_w = params_routed.sym, layout_chips_q.sym, weights_per_chip_q.sym
n_stage, n_dom = stage_chips_q.sym, scaleup_domain_q.sym
E_red, E_tot = redundant_experts_q.sym, experts_total_q.sym

experts_share_devices = Assumption(
    "layouts.experts_share_devices", title="Expert parallelism shares the devices of a stage",
    statement="The routed experts of a stage are spread over devices that already run its attention (tensor, "
              "context and data parallel), so ep is at most tp·cp·dp and brings no devices of its own.",
    source=_DSV3,
    relation=logic.le(ep, tp * cp * dp),
)
routed_within_total = Assumption(
    "layouts.routed_within_total", title="The routed experts are part of the model",
    statement="The routed experts' parameters are at most all the parameters.",
    source=_DSV3,
    relation=logic.le(N_exp, N_tot),
)

layout_chips = Definition(
    "layouts.layout_chips", title="Chips of a layout",
    statement="The product of the degrees that each bring devices: tensor, pipeline, context and data.",
    source=_MEGATRON, defines=layout_chips_q, expr=tp * pp * cp * dp,
)
stage_chips = Definition(
    "layouts.stage_chips", title="Chips of one pipeline stage",
    statement="The degrees that split or replicate the work inside a stage: tensor, context and data; the "
              "stages run one after the other, each on its own chips.",
    source=_MEGATRON, defines=stage_chips_q, expr=tp * cp * dp,
)
weights_per_chip = Definition(
    "layouts.weights_per_chip", title="Weight bytes per chip",
    statement="The dense part is split over tensor and pipeline parallelism; the routed experts' slots (the "
              "experts and any redundant copies) over pipeline parallelism and over the wider of expert and "
              "tensor parallelism (whole experts over ep devices, each expert's matrices split as a dense "
              "layer's where tp is wider); data and context parallelism replicate weights.",
    source=paper("DeepSeek-AI 2024, DeepSeek-V3 Technical Report, arXiv:2412.19437",
                 "section 3.4.2: in decoding each GPU hosts one expert; without expert parallelism vLLM's fused MoE "
                 "layer splits every expert over the tensor-parallel devices (vllm/model_executor/layers/fused_moe)"),
    defines=weights_per_chip_q,
    expr=q * ((N_tot - N_exp) / (tp * pp)
              + N_exp * (E_tot + E_red) / (E_tot * pp * sp.Max(tp, ep, evaluate=False))),
)

expert_parallel_adds_no_chips = Claim(
    "layouts.expert_parallel_adds_no_chips", title="Expert parallelism adds no chips", label="EP adds no chips",
    statement="A layout's chips are tp·pp·cp·dp whatever its expert-parallel degree, and at least that degree: "
              "the experts live on devices the other degrees already count.",
    source=_DSV3,
    goal=logic.And((logic.eq(n_layout, tp * pp * cp * dp), logic.ge(n_layout, ep))),
    uses=(experts_share_devices,),
)
layout_is_stages_of_chips = Claim(
    "layouts.layout_is_stages_of_chips", title="A layout is its stages times the chips of a stage",
    label="Stages times stage chips",
    statement="A layout's chips are its pipeline stages times the chips of one stage, so a layout with pp ≥ 2 "
              "holds strictly more chips than one stage pools: the lecture's n is a stage's chips, and the "
              "chips deployed per replica are pp times n.",
    source=_MEGATRON,
    goal=logic.And((logic.eq(n_layout, pp * n_stage),
                    logic.Iff(logic.gt(n_layout, n_stage), logic.ge(pp, 2)))),
)
weights_per_chip_shape = Claim(
    "layouts.weights_per_chip_shape", title="A chip holds its dense share and its expert share",
    label="Weights per chip",
    statement="Without redundant expert copies, a chip's weights are at most the whole model over pp·tp (the "
              "dense part's split) and at least the whole model over pp times the larger of tp and ep.",
    source=_DSV3,
    hypotheses=(logic.eq(E_red, 0),),
    goal=logic.And((logic.le(M_w, q * N_tot / (pp * tp)),
                    logic.ge(M_w, q * N_tot / (pp * sp.Max(tp, ep, evaluate=False))))),
    uses=(routed_within_total,),
)
weights_per_chip_even = Claim(
    "layouts.weights_per_chip_even", title="With ep = tp a chip holds the model over tp·pp",
    statement="When the experts are spread as widely as the dense part, with no redundant copies, every chip "
              "holds the same share of both: the model's bytes over tp·pp.",
    source=_MEGATRON,
    hypotheses=(logic.eq(ep, tp), logic.eq(E_red, 0)),
    goal=logic.eq(M_w, q * N_tot / (tp * pp)),
)

# What a chip of a layout holds: its weights, its KV cache and its tokens' hidden states ----------------------
M_kv, M_layout, M_pooled = layout_kv_bytes_per_chip_q.sym, layout_memory_per_chip_q.sym, memory_per_chip_q.sym
M_act, B, tau, a_tok = (layout_activation_bytes_per_chip_q.sym, batch_q.sym, tokens_per_step_q.sym,
                        token_activation_bytes_q.sym)
N_seq, S_kv, h_kv, C = (sequences_in_flight_q.sym, kv_bytes_per_sequence_q.sym, kv_heads_q.sym,
                        hbm_capacity_q.sym)

layout_kv_bytes_per_chip = Definition(
    "layouts.layout_kv_bytes_per_chip", title="KV-cache bytes per chip of a layout",
    statement="A stage holds the KV cache of its own layers for every sequence in flight; its tensor, context and "
              "data parallel devices split it, except that past the KV heads tensor parallelism copies each KV "
              "head onto tp/kv_heads devices (one latent, kv_heads = 1, on every device of a latent-attention "
              "model).",
    source=_VLLM_TP,
    defines=layout_kv_bytes_per_chip_q,
    expr=N_seq * S_kv * sp.Max(1, tp / h_kv, evaluate=False) / (pp * tp * cp * dp),
)
layout_activation_bytes_per_chip = Definition(
    "layouts.layout_activation_bytes_per_chip", title="Activation bytes per chip of a layout, at least",
    statement="A decode step of a stage carries one new token of each of its sequences through every layer, and "
              "each token's hidden state is held somewhere on the stage while it does: at least the batch's hidden "
              "states over the stage's tp·cp·dp devices, however a layout shards them (sequence parallelism "
              "included).  The kernels' intermediates (an MLP's wider activations, attention's workspace) come on "
              "top and depend on the kernels, so they are left out: this share is a floor.",
    source=_KORTHIKANTI, defines=layout_activation_bytes_per_chip_q, expr=B * tau * a_tok / (tp * cp * dp),
)
layout_memory_per_chip = Definition(
    "layouts.layout_memory_per_chip", title="HBM bytes per chip of a layout",
    statement="A chip of a layout holds its weights, its KV cache and its share of the step's hidden states; the "
              "kernels' intermediates and workspace come on top.",
    source=_DSV3, defines=layout_memory_per_chip_q, expr=M_w + M_kv + M_act,
)
layout_memory_at_least_pooled = Claim(
    "layouts.layout_memory_at_least_pooled", title="A layout's chip holds at least the lecture's pooled share",
    label="Layout memory",
    statement="Under a layout (a stage of tp·cp·dp chips, pp stages) a chip holds at least the lecture's even share "
              "of the weights and KV caches: data and context parallelism copy the dense weights, experts spread "
              "over fewer devices than the stage hold more per device, and KV heads copied past tp = kv_heads "
              "add more.  So the lecture's memory fit is necessary for a layout, never sufficient.",
    source=_MEGATRON,
    hypotheses=(logic.eq(chips_q.sym, tp * cp * dp), logic.eq(stages_q.sym, pp)),
    goal=logic.ge(M_layout, M_pooled),
    uses=(experts_share_devices, routed_within_total),
    steps=(
        Step(logic.ge(M_w, q * N_tot / (pp * tp * cp * dp)),
             "tp and ep are each at most tp·cp·dp, so neither share of the weights is below the whole over the "
             "layout's chips"),
        Step(logic.ge(M_kv, N_seq * S_kv / (pp * tp * cp * dp)), "each KV head is held at least once"),
        Step(logic.ge(M_layout, M_pooled), "the two together against the lecture's share (the hidden states only "
                                            "add to them)"),
    ),
)
pooled_memory_at_least_layout = Claim(
    "layouts.pooled_memory_at_least_layout", title="False twin: the lecture's pooled share bounds a layout's chip",
    statement="A layout's chip would hold no more than the lecture's even share of the weights and KV caches.",
    source=_MEGATRON,
    hypotheses=layout_memory_at_least_pooled.hypotheses,
    goal=logic.le(M_layout, M_pooled),
    uses=(experts_share_devices, routed_within_total),
    expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of layouts.layout_memory_at_least_pooled: data parallelism copies the weights.",
)
layout_memory_fits_in_hbm = Claim(
    "layouts.layout_memory_fits_in_hbm", title="The layout's chips hold their weights and KV caches",
    statement="At the scenario's values, each chip of the layout holds its weights, its KV cache and its share of "
              "the step's hidden states in its HBM.",
    source=_MEGATRON,
    goal=logic.le(M_layout, C),
    instance=True, expected="unknown",
    notes="A feasibility bound of the serving library, beside the lecture's capacity.memory_fits_in_hbm (which "
          "pools a stage's chips as if nothing were copied).  The lecture's scenario gives no layout, so there its "
          "degrees have no values and it is unknown; at a scenario with a layout it is decided at its degrees.",
)

# The decode floor of a layout: a replica's tensor-parallel group reads its dense weights at every step -----------
t_rep, t_layout, t_pool = replica_weight_fetch_floor_q.sym, layout_decode_floor_q.sym, weight_fetch_floor_q.sym
N_act, E_act, W, H = params_active_q.sym, experts_active_q.sym, hbm_bandwidth_q.sym, params_output_head_q.sym

routed_active_within_active = Assumption(
    "layouts.routed_active_within_active", title="A token multiplies more than its routed experts and its head",
    statement="The routed experts a token multiplies (their share of all the routed experts' parameters) and the "
              "output head are parts of its active weights, which also hold its attention.",
    source=_DSV3,
    relation=logic.lt(N_exp * E_act / E_tot + H, N_act),
)
replica_weight_fetch_floor = Definition(
    "layouts.replica_weight_fetch_floor", title="A replica's dense weight read",
    statement="A sequence's decode step runs on one replica: its tensor-parallel devices (each stage's, one "
              "after the other) read every dense weight the token multiplies, attention, shared experts, dense "
              "layers and output head, whatever the other replicas do: the layout's dp copies the dense part.  Its "
              "routed experts may live elsewhere (expert parallelism), so they are left out.  A server that runs "
              "its dense MLPs tensor-parallel across the data-parallel ranks (SGLang's data-parallel attention) "
              "copies only the attention: give it as tp over those ranks.",
    source=_MEGATRON, defines=replica_weight_fetch_floor_q,
    expr=q * (N_act - N_exp * E_act / E_tot) / (tp * W), uses=(routed_active_within_active,),
)
layout_decode_floor = Definition(
    "layouts.layout_decode_floor", title="Decode floor of a layout",
    statement="A decode step under a layout lasts at least the lecture's pooled weight fetch floor and at least "
              "its replica's own read of the dense weights.",
    source=_MEGATRON, defines=layout_decode_floor_q, expr=sp.Max(t_pool, t_rep, evaluate=False),
)
# The step time of a layout: the lecture's roofline step, with what the layout copies read by every copy ----------
t_c, t_mem, t_kv = compute_time_q.sym, memory_time_q.sym, kv_fetch_time_q.sym
T_layout, n_kv = layout_step_time_q.sym, kv_heads_q.sym
_COPIED_DENSE = t_rep * (cp * dp - 1) / (cp * dp)  # what the other cp·dp - 1 copies of the dense part read, pooled
_COPIED_KV = t_kv * (sp.Max(1, tp / n_kv) - 1)  # past tp = kv_heads each KV head is read on tp/kv_heads devices
layout_step_time = Definition(
    "layouts.layout_step_time", title="Step time on a layout",
    statement="The lecture's roofline step pools a stage's chips as if each weight and each KV head were read once; "
              "under a layout each of the cp·dp replicas of a stage reads its own copy of the dense weights, and "
              "past tp = kv_heads each KV head is read on tp/kv_heads devices, so those reads are added to its "
              "memory time.  For a dense model with tp at most the KV heads it is one replica's step: its dense "
              "weights and its share of the sequences' KV caches over its tp devices.",
    source=_MEGATRON, defines=layout_step_time_q,
    expr=sp.Max(t_c, t_mem + _COPIED_DENSE + _COPIED_KV, evaluate=False),
)
layout_step_at_least_replica_read = Claim(
    "layouts.layout_step_at_least_replica_read", title="A layout's step lasts at least its replica's dense read",
    label="Layout step time",
    statement="Under a layout (a stage of tp·cp·dp chips) the step time is never below one replica's read of its "
              "dense weights over its tp devices, where the lecture's pooled step time can be, by up to cp·dp.",
    source=_MEGATRON,
    hypotheses=(logic.eq(chips_q.sym, tp * cp * dp),),
    goal=logic.ge(T_layout, t_rep),
    uses=(routed_active_within_active,),
    steps=(
        Step(logic.ge(t_mem, q * N_act / (chips_q.sym * W)),
             "a step reads at least one token's active weights over the stage's chips"),
        Step(logic.ge(t_mem + _COPIED_DENSE, t_rep),
             "the pooled read holds the replica's dense part once over tp·cp·dp chips; the copies add the rest"),
    ),
)
data_parallel_floor_is_cp_dp_times_pooled = Claim(
    "layouts.data_parallel_floor_is_cp_dp_times_pooled",
    title="For a dense model the replica's read is cp·dp times the pooled floor", label="Replica floor",
    statement="For a dense model under a layout (a stage of tp·cp·dp chips), a replica reads its weights over its "
              "tp devices alone, where the lecture's pooled floor spreads them over all tp·cp·dp chips: the "
              "pooled floor is low by exactly the data and context parallel degrees.",
    source=_MEGATRON,
    hypotheses=(logic.eq(N_exp, 0), logic.eq(chips_q.sym, tp * cp * dp)),
    goal=logic.eq(t_rep, cp * dp * t_pool),
)

# One request's time to first token under a layout: its prefill runs on its own replica --------------------------
replica_prefill_compute_floor_q = Quantity(
    "replica_prefill_compute_floor", r"t_{\mathrm{pre}}^{\mathrm{rep}}", "s",
    "time one request's dense multiplies take on its replica's chips (the tp·cp devices of every stage): its "
    "prompt's tokens times the active weights but the routed experts' (the output head for its last token only), "
    "at the chips' peak FLOP/s",
    display_unit="ms")
layout_ttft_floor_q = Quantity(
    "layout_ttft_floor", r"T_{\mathrm{TTFT}}^{\mathrm{layout}}", "s",
    "floor on one request's time to first token under a layout: the request's floor over the stage's pooled chips, "
    "its replica's read of its dense weights and its replica's dense multiplies, whichever is slowest",
    display_unit="ms")
t_pre_rep, T_ttft_layout, T_req = replica_prefill_compute_floor_q.sym, layout_ttft_floor_q.sym, request_ttft_floor_q.sym
b_req, ell, F = request_sequences_q.sym, prefill_tokens_q.sym, flops_q.sym

replica_prefill_compute_floor = Definition(
    "layouts.replica_prefill_compute_floor", title="A replica's dense multiplies of one prompt",
    statement="A request is served by one replica: its prompt's tokens are multiplied by the dense weights a token "
              "multiplies (attention, shared experts, dense layers; the output head for the last token only) on "
              "that replica's devices alone, "
              "the tp·cp devices of each of its pp stages (a pipeline passes the prompt through its stages in "
              "chunks), whatever the other data-parallel replicas do.  Its routed experts may run elsewhere (expert "
              "parallelism), so they are left out.  A server that runs its dense MLPs tensor-parallel across the "
              "data-parallel ranks (SGLang's data-parallel attention) copies only the attention: give it as tp over "
              "those ranks.",
    source=_MEGATRON, defines=replica_prefill_compute_floor_q,
    expr=c_fwd * ((N_act - N_exp * E_act / E_tot - H) * ell + H * tau) * b_req / (tp * cp * pp * F),
    uses=(routed_active_within_active,),
)
layout_ttft_floor = Definition(
    "layouts.layout_ttft_floor", title="Time-to-first-token floor of a layout",
    statement="One request's first token under a layout comes no sooner than the request's own floor over the "
              "stage's pooled chips, than its replica's read of the dense weights a token multiplies, and than its "
              "replica's multiplies of its prompt by them.",
    source=_MEGATRON, defines=layout_ttft_floor_q, expr=sp.Max(T_req, t_rep, t_pre_rep, evaluate=False),
)
layout_ttft_at_least_pooled_and_replica = Claim(
    "layouts.layout_ttft_at_least_pooled_and_replica",
    title="A layout's TTFT floor is at least the pooled floor and the replica's dense work",
    label="Layout TTFT floor",
    statement="Under a layout, one request's time-to-first-token floor is never below the request's pooled floor "
              "(every chip of the stage at work on it) nor below its replica's read and multiplies of the dense "
              "weights; for a dense model under data parallelism the replica's side is the higher one.",
    source=_MEGATRON,
    goal=logic.And((logic.ge(T_ttft_layout, T_req), logic.ge(T_ttft_layout, t_rep),
                    logic.ge(T_ttft_layout, t_pre_rep))),
)
dense_prefill_is_dp_times_pooled = Claim(
    "layouts.dense_prefill_is_dp_times_pooled",
    title="For a dense model a replica multiplies a prompt dp times slower than the pooled chips",
    label="Replica prefill",
    statement="For a dense model under a layout (a stage of tp·cp·dp chips over pp stages), a request's prompt is "
              "multiplied on its replica's tp·cp devices of each stage, where the pooled request floor spreads it "
              "over all tp·cp·dp: the pooled compute side is low by exactly the data-parallel degree.",
    source=_MEGATRON,
    hypotheses=(logic.eq(N_exp, 0), logic.eq(chips_q.sym, tp * cp * dp), logic.eq(stages_q.sym, pp)),
    goal=logic.eq(t_pre_rep, dp * c_fwd * ((N_act - H) * ell + H * tau) * b_req / (chips_q.sym * stages_q.sym * F)),
)

pooled_prefill_is_replica_false_twin = Claim(
    "layouts.pooled_prefill_is_replica_false_twin",
    title="False twin: a replica multiplies a prompt as fast as the pooled chips",
    statement="For a dense model under any layout, a request's prompt would be multiplied as fast on its replica as "
              "on every chip of the stage: false wherever dp > 1.",
    source=_MEGATRON,
    hypotheses=(logic.eq(N_exp, 0), logic.eq(chips_q.sym, tp * cp * dp), logic.eq(stages_q.sym, pp)),
    goal=logic.eq(t_pre_rep, c_fwd * ((N_act - H) * ell + H * tau) * b_req / (chips_q.sym * stages_q.sym * F)),
    expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of layouts.dense_prefill_is_dp_times_pooled.",
)

# Llama 3 70B on one H100 node: eight data-parallel replicas pool the node's HBM, and no chip holds a replica ----------
_LLAMA3_70B = (logic.eq(N_tot, si("70553706496 param")), logic.eq(N_exp, si("0 param")), logic.eq(E_tot, 1),
               logic.eq(E_red, 0), logic.eq(q, si("2 byte/param")), logic.eq(C, si("80 GB")),
               logic.eq(tp, 1), logic.eq(pp, 1), logic.eq(cp, 1), logic.eq(dp, 8), logic.eq(ep, 1))
_LLAMA3_70B_FORALL = (params_total_q, params_routed, experts_total_q, redundant_experts_q, bytes_per_param_q,
                      hbm_capacity_q, tp_q, pp_q, cp_q, dp_q, ep_q)
_LLAMA3_70B_SOURCE = spec("meta-llama/Meta-Llama-3-70B config.json and the H100 SXM's 80 GB (the h100-sxm preset)",
                          "2024-04", "80 layers, d_model 8192, 64 query heads, 8 KV heads, FFN 28672, vocabulary "
                          "128256: 70,553,706,496 parameters, BF16")
llama3_70b_dp8_fits_no_chip = Claim(
    "layouts.llama3_70b_dp8_fits_no_chip",
    title="Llama 3 70B in BF16 on DP8 H100s: the pooled share fits, no chip does", label="Llama 3 70B on DP8",
    statement="Eight data-parallel replicas of Llama 3 70B on one H100 node pool 17.6 GB of weights a chip, well "
              "within 80 GB, yet each chip must hold a whole replica's 141.1 GB: the pooled fit says nothing about "
              "a layout that copies.",
    source=_LLAMA3_70B_SOURCE,
    hypotheses=_LLAMA3_70B,
    goal=logic.And((logic.le(q * N_tot / (tp * pp * cp * dp), C), logic.gt(M_w, C))),
    instance=True, forall=_LLAMA3_70B_FORALL,
)
llama3_70b_dp8_weights_fit = Claim(
    "layouts.llama3_70b_dp8_weights_fit", title="False twin: Llama 3 70B's weights fit a chip of DP8 H100s",
    statement="A chip of eight data-parallel Llama 3 70B replicas on H100s would hold its weights.",
    source=_LLAMA3_70B_SOURCE,
    hypotheses=_LLAMA3_70B,
    goal=logic.le(M_w, C),
    instance=True, forall=_LLAMA3_70B_FORALL, expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of layouts.llama3_70b_dp8_fits_no_chip: 141.1 GB against 80 GB.",
)

# DeepSeek-V3's published deployment units (the degrees pinned by hypotheses) ---------------------------
_DEGREES = (tp_q, pp_q, cp_q, dp_q, ep_q)


def _layout(t: int, p: int, c: int, d: int, e: int) -> tuple:
    return tuple(logic.eq(x, v) for x, v in zip((tp, pp, cp, dp, ep), (t, p, c, d, e), strict=True))


deepseek_v3_prefill_chips = Claim(
    "layouts.deepseek_v3_prefill_chips", title="DeepSeek-V3's prefill unit: 32 GPUs",
    statement="Attention on TP4 × DP8 with the experts on EP32 over the same devices: 32 GPUs, as published.",
    source=_DSV3, hypotheses=_layout(4, 1, 1, 8, 32), goal=logic.eq(n_layout, 32),
    instance=True, forall=_DEGREES, uses=(expert_parallel_adds_no_chips,),
)
deepseek_v3_decode_chips = Claim(
    "layouts.deepseek_v3_decode_chips", title="DeepSeek-V3's decode unit: 320 GPUs",
    statement="Attention on TP4 × DP80 with the experts on EP320 over the same devices: 320 GPUs, as published.",
    source=_DSV3, hypotheses=_layout(4, 1, 1, 80, 320), goal=logic.eq(n_layout, 320),
    instance=True, forall=_DEGREES, uses=(expert_parallel_adds_no_chips,),
)
deepseek_v3_decode_ep_as_extra_chips = Claim(
    "layouts.deepseek_v3_decode_ep_as_extra_chips", title="False twin: EP counted as extra chips",
    statement="The overcount of tools that multiply the expert-parallel degree in: TP4 × DP80 × EP320 would be "
              "the published 320 GPUs.",
    source=_DSV3, hypotheses=_layout(4, 1, 1, 80, 320), goal=logic.eq(n_layout * ep, 320),
    instance=True, forall=_DEGREES, expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of layouts.deepseek_v3_decode_chips: the product is 102,400.",
)

# Llama 3 405B served on two H100 nodes (the layout's stages, each on one node's chips) ---------------------------
_LLAMA3_SERVING = paper("Llama Team 2024, The Llama 3 Herd of Models, arXiv:2407.21783",
                        "section 6.1: in BF16, Llama 3 405B does not fit in the GPU memory of one machine with 8 H100 "
                        "GPUs; inference runs on 16 GPUs in two machines, tensor parallel within, pipeline across")
_L405 = (logic.eq(N_tot, si("405e9 param")), logic.eq(q, si("2 byte/param")), logic.eq(hbm_capacity_q.sym, si("80 GB")),
         logic.eq(tp, 8), logic.eq(cp, 1), logic.eq(dp, 1))
_L405_FORALL = (params_total_q, bytes_per_param_q, hbm_capacity_q, tp_q, pp_q, cp_q, dp_q)
llama3_405b_two_nodes = Claim(
    "layouts.llama3_405b_two_nodes", title="Llama 3 405B in BF16: one stage per H100 node, two stages",
    label="Llama 3 405B on two nodes",
    statement="405B BF16 weights (810 GB) exceed the 640 GB of one node's eight 80 GB H100s, and half of them fit "
              "one node: TP8 × PP2, a stage of 8 chips per node, as Meta served it.",
    source=_LLAMA3_SERVING,
    hypotheses=(*_L405, logic.eq(pp, 2)),
    goal=logic.And((logic.gt(q * N_tot, n_stage * hbm_capacity_q.sym),
                    logic.le(q * N_tot / pp, n_stage * hbm_capacity_q.sym),
                    logic.eq(n_layout, 16))),
    instance=True, forall=_L405_FORALL, uses=(layout_is_stages_of_chips,),
    notes="meta-llama/llama-models MODEL_CARD.md: 405B parameters; the h100-sxm preset: 80 GB per GPU.  The weights "
          "alone; the KV cache needs room beside them.",
)
llama3_405b_one_node = Claim(
    "layouts.llama3_405b_one_node", title="False twin: Llama 3 405B in BF16 on one H100 node",
    statement="TP8 alone, one stage on one node's eight H100s, would hold the 405B BF16 weights.",
    source=_LLAMA3_SERVING,
    hypotheses=(*_L405, logic.eq(pp, 1)),
    goal=logic.le(q * N_tot / pp, n_stage * hbm_capacity_q.sym),
    instance=True, forall=_L405_FORALL, expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of layouts.llama3_405b_two_nodes: 810 GB against 640 GB.",
)

# A layout as an input, and the layouts that cannot exist -----------------------------------------------
_DS_INFRA = paper("DeepSeek-AI 2025, DeepSeek-V3/R1 Inference System Overview, github.com/deepseek-ai/open-infra-index "
                  "(202502OpenSourceWeek, day 6)", "prefill EP32 with DP32 over 4 nodes, decode EP144 with DP144 over "
                  "18 nodes, 32 redundant routed experts in each unit: 9 and 2 routed experts per GPU")
# derive.model.loader reads these through the library root (INPUT_TABLES, INPUT_CONSTRAINTS): a scenario file's
# [layout] table (or --set of any member) gives a layout; the members it leaves out take their default.
# A layout in use gives the lecture's chips (n, the chips a stage pools) and stages (P): the chips a replica pools are
# derived from its degrees, never typed a second time (derive.model.scenario, ``gives``).
INPUT_TABLE = {
    "meaning": "the parallel degrees of one deployment: tp, pp, cp, dp and ep, and the redundant expert slots",
    "gives": {"chips": "stage_chips", "stages": "pp"},
    "members": {
        "tp": {"default": "1", "source": "layout default: no tensor parallelism"},
        "pp": {"default": "1", "source": "layout default: no pipeline parallelism"},
        "cp": {"default": "1", "source": "layout default: no context parallelism"},
        "dp": {"default": "1", "source": "layout default: no data parallelism"},
        "ep": {"default": "1", "source": "layout default: the routed experts are not spread by expert parallelism"},
        "redundant_experts": {"default": "0", "source": "layout default: no redundant expert copies"},
    },
}
INPUT_CONSTRAINTS = [
    {"id": "layouts.tp_divides_query_heads", "what": "layout", "rule": "tp divides query_heads",
     "relation": logic.IsInteger(query_heads_q.sym / tp),
     "reason": "tensor parallelism gives every device whole query heads of each layer",
     "hint": "choose a tp that divides the model's query heads", "source": _MEGATRON},
    {"id": "layouts.tp_and_kv_heads_divide", "what": "layout", "rule": "tp divides kv_heads, or kv_heads divides tp",
     "relation": logic.Or((logic.IsInteger(kv_heads_q.sym / tp), logic.IsInteger(tp / kv_heads_q.sym))),
     "reason": "tensor parallelism splits the KV heads evenly, or past them replicates each KV head on "
               "tp/kv_heads devices",
     "hint": "choose a tp that divides the KV heads or a multiple of them", "source": _VLLM_TP},
    {"id": "layouts.pp_at_most_layers", "what": "layout", "rule": "pp <= layers",
     "relation": logic.le(pp, layers_q.sym),
     "reason": "every pipeline stage holds at least one layer",
     "hint": "choose at most as many stages as the model has layers", "source": _MEGATRON},
    {"id": "layouts.pp_divides_layers", "what": "layout", "rule": "pp divides layers",
     "relation": logic.IsInteger(layers_q.sym / pp), "refuse": False,
     "reason": "uneven stages: the heaviest holds ceil(layers/pp) layers, and per-chip figures are averages "
               "over the stages",
     "hint": "", "source": _MEGATRON},
    {"id": "layouts.ep_divides_expert_slots", "what": "layout", "rule": "ep divides experts_total + redundant_experts",
     "relation": logic.IsInteger((experts_total_q.sym + E_red) / ep),
     "reason": "expert parallelism gives every device the same number of expert slots (DeepSeek-V3: 256 + 32 "
               "redundant over EP32 is 9 each)",
     "hint": "choose an ep that divides the expert slots, or --set redundant_experts=N for redundant copies",
     "source": _DS_INFRA},
    {"id": "layouts.ep_within_devices", "what": "layout", "rule": "ep <= tp*cp*dp",
     "relation": experts_share_devices.relation,
     "reason": "the experts live on devices the attention's tensor, context and data parallelism already use",
     "hint": "raise dp (or tp, cp) to at least ep, or lower ep", "source": _DSV3},
    {"id": "layouts.chips_are_the_stage", "what": "layout", "rule": "chips = stage_chips",
     "relation": logic.eq(chips_q.sym, n_stage),
     "reason": "a layout gives chips (the chips one stage pools) as tp*cp*dp, and a value typed by hand must agree",
     "hint": "leave chips out: the layout gives it", "source": _MEGATRON},
    {"id": "layouts.stages_are_pp", "what": "layout", "rule": "stages = pp",
     "relation": logic.eq(stages_q.sym, pp),
     "reason": "a layout gives the pipeline stages as pp, and a value typed by hand must agree",
     "hint": "leave stages out: the layout gives it (--set pp=N)", "source": _MEGATRON},
    {"id": "layouts.tp_within_scaleup_domain", "what": "layout", "rule": "tp <= scaleup_domain",
     "relation": logic.le(tp, n_dom), "refuse": False,
     "reason": "the tensor-parallel group spans more than one scale-up domain, so its per-layer all-reduces run "
               "over the scale-out network (network.tp_link_bandwidth)",
     "hint": "", "source": _MEGATRON},
]

PROSE = (
    "A layout is a set of degrees.  Tensor, pipeline, context and data parallelism each bring devices; expert "
    "parallelism spreads the routed experts over devices the others already use.  So the chips of a layout "
    "are derived from its degrees and never typed a second time.",
    "{{result:expert_parallel_adds_no_chips}}",
    "DeepSeek's published units are the worked example: 32 GPUs for prefill and 320 for decode, where "
    "multiplying the expert-parallel degree in would claim 1,024 and 102,400.",
    "{{result:weights_per_chip_shape}}",
    "A chip holds its weights, its KV cache and its share of the step's hidden states.  Data and context "
    "parallelism copy the dense weights, and tensor "
    "parallelism past the KV heads copies KV heads, so a chip of a layout holds at least the lecture's pooled share "
    "and often more: the lecture's fit is necessary, and the layout's own "
    "(layouts.layout_memory_fits_in_hbm) is a second feasibility bound of this library.",
    "{{result:layout_memory_at_least_pooled}}",
    "{{result:llama3_70b_dp8_fits_no_chip}}",
    "Copies cost time as well as memory.  Every decode step of a replica reads the dense weights a token multiplies "
    "over the replica's own tensor-parallel devices, so the lecture's floor, which spreads them over the whole "
    "stage, is low by the data and context parallel degrees.",
    "{{result:data_parallel_floor_is_cp_dp_times_pooled}}",
    "A request's first token is the same story.  The server hands the request to one replica, whose devices read "
    "and multiply the dense weights for every token of its prompt; the other replicas serve other requests.  The "
    "prefill chapter's floor of one request pools the stage's chips, so under data parallelism the layout's own "
    "floor can be the higher one: for a dense model its compute side is exactly dp times the pooled one, while a "
    "mixture of experts spreads its routed experts' multiplies over the expert-parallel devices.",
    "{{result:layout_ttft_at_least_pooled_and_replica}}",
    "{{result:dense_prefill_is_dp_times_pooled}}",
    "A layout gives the lecture its chips and its stages: a stage pools the bandwidth and capacity of its tp·cp·dp "
    "chips, and the pp stages of one token run one after the other.  A model too large for one scale-up domain "
    "takes a second stage on a second domain.",
    "{{result:layout_is_stages_of_chips}}",
    "{{result:llama3_405b_two_nodes}}",
)
