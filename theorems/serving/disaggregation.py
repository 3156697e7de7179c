"""Prefill/decode disaggregation: the KV transfer against the interference a co-located prefill causes

Chapter 7 of part II ("Beyond the lecture").  A replica that prefills new requests between its decode steps
stalls every sequence it is decoding for the length of the prefill.  Disaggregation runs prefill and decode
on separate pools of chips; the price is that each request's KV cache, ℓ tokens of k bytes, crosses the
scale-out links from the prefill pool to the decode pool.  This chapter counts both in request-seconds and
says exactly when the transfer is the cheaper: the prompt length cancels, and what is left is a batch.
It also keeps the cost of an input token and of an output token as separate quantities, each priced on its
own pool.

Main claims:
- ``disaggregation.kv_transfer_bytes``: a request's KV transfer is ℓ·k bytes.
- **Disaggregation break-even** ``disaggregation.transfer_below_interference_iff``: the transfer delays the
  request by less than a co-located prefill stalls the B decoding sequences exactly when
  B ≥ B_dis = σ·k·F/(c_fwd·N_act·W_out); ``disaggregation.interference_over_transfer``: the stall is
  exactly B/B_dis transfers, whatever the prompt.
- ``disaggregation.request_cost_split``: a request costs its input tokens at the prefill pool's cost per input
  token plus its output tokens at the decode pool's cost per output token.
- **Rate per deployed chip** ``disaggregation.deployed_rate_is_decode_share``: the pools count chips in units of
  their own (``prefill_chip``, ``decode_chip``), so a rate per prefill chip and one per decode chip cannot be
  added; converted to chips, the output rate per deployed chip is the decode chip's times the decode pool's share
  of the chips, never above it (``disaggregation.deployed_rate_is_decode_rate``, equal, is refuted).
- ``disaggregation.deepseek_r1_rates_per_chip``: DeepSeek's published units (4 prefill nodes, 18 decode nodes of
  8 H800) at its average rates per node: 9,212.5 input tokens/s per prefill chip, 1,850 output tokens/s per decode
  chip, 1,514 per deployed chip (``disaggregation.deepseek_r1_decode_rate_as_deployed``, 1,850, is refuted).
- Worked examples (KV per token from the publishers' config.json): ``disaggregation.deepseek_v3_breakeven_below_one``
  (MLA's 70,272 bytes per token over a 400 Gb/s NIC: B_dis < 1/25, every batch gains);
  ``disaggregation.llama3_405b_breakeven_below_one`` (516,096 bytes per token: B_dis < 1/50);
  ``disaggregation.deepseek_v3_transfer_4k`` (a 4,096-token prompt's 288 MB cross one NIC in 5.8 ms) and
  its refuted twin ``disaggregation.deepseek_v3_transfer_4k_bf16_heads`` (pricing the cache as full heads).

Notation: ℓ prompt tokens, k KV bytes per token (all layers), n chips of the prefill group (each with its own
scale-out link), W_out scale-out bandwidth per chip, F peak FLOP/s, N_act active parameters, B sequences the
decode replica is decoding, σ one request, c_in and c_out the cost per input and per output token; N_pre and N_dec
the chips of the prefill and decode pools (in prefill_chip and decode_chip), κ_pre and κ_dec one chip per pool
chip, N_dep the deployment's chips, θ_pre, θ_dec and θ_dep the rates per prefill, decode and deployed chip.

Implementation notes: the interference is counted at the compute floor of a prefill (weight multiplies at
peak, no attention), its shortest: a real prefill stalls longer, so a transfer that wins here wins in
practice.  The transfer is counted as delaying only its own request (it runs on the links while both pools
compute), over the n links of the prefill group.  Chunked prefill (``prefill.chunk_memory_bound_iff``) is
the co-located alternative that shrinks the stall; it is not modelled here.

References: Zhong et al. 2024, "DistServe: Disaggregating Prefill and Decoding for Goodput-optimized Large
Language Model Serving" (OSDI '24), sections 2-3 (prefill-decode interference, KV transfer over the
cluster's network); Patel et al. 2024, "Splitwise: Efficient Generative LLM Inference Using Phase Splitting"
(ISCA '24), section 4 (KV transfer per request); DeepSeek-AI 2024, "DeepSeek-V3 Technical Report",
arXiv:2412.19437, section 3.4 (prefill and decode on separate units).
"""

from __future__ import annotations

from derive import Claim, Definition, Quantity, Step, declare_count_dimension, derived, logic, paper, si, spec
from theorems.moe import scaleout_bandwidth
from theorems.pricing import prefill_cost_per_token_q, prefill_tokens
from theorems.roofline import (
    B,
    F,
    N_act,
    c_fwd,
    chips,
    cost_per_token_q,
    flops,
    k,
    kv_bytes_per_token,
    n,
    params_active,
)

from .economics import input_token_rate, output_token_rate
from .saturation import one_request, output_tokens

PART = "Beyond the lecture"  # the documents render this library's chapters as part II
CHAPTER = "Prefill/decode disaggregation"

ell, W_out, sigma, ell_out = prefill_tokens.sym, scaleout_bandwidth.sym, one_request.sym, output_tokens.sym
c_pre, c_tok = prefill_cost_per_token_q.sym, cost_per_token_q.sym

_DISTSERVE = paper("Zhong et al. 2024, DistServe: Disaggregating Prefill and Decoding for Goodput-optimized Large "
                   "Language Model Serving (OSDI '24), arXiv:2401.09670",
                   "sections 2-3: prefill-decoding interference; KV cache transferred between instances")
_SPLITWISE = paper("Patel et al. 2024, Splitwise: Efficient Generative LLM Inference Using Phase Splitting (ISCA '24), "
                   "arXiv:2311.18677", "section 4: the KV cache of the prompt moves to the token machine")

# Derived ----------------------------------------------------------------------------------------------
kv_transfer_bytes_q = Quantity("kv_transfer_bytes", r"V_{\mathrm{kv}}", "byte/seq",
                               "bytes of one request's KV cache sent from the prefill pool to the decode pool",
                               domain="nonnegative", display_unit="MB/seq")
kv_transfer_time_q = Quantity("kv_transfer_time", r"t_{\mathrm{xfer}}", "s/seq",
                              "time of one request's KV transfer over the prefill group's scale-out links",
                              domain="nonnegative", display_unit="ms/seq")
prefill_stall_q = Quantity("prefill_stall", r"t_{\mathrm{stall}}", "s/seq",
                           "time a co-located prefill of one request stops the decode steps (its compute floor)",
                           display_unit="ms/seq")
interference_q = Quantity("prefill_interference", r"I", "s",
                          "request-seconds of delay a co-located prefill of one request causes: every decoding "
                          "sequence waits for it", display_unit="ms")
breakeven_batch_q = Quantity("disaggregation_breakeven_batch", r"B_{\mathrm{dis}}", "seq",
                             "decode batch above which a request's KV transfer delays less than a co-located "
                             "prefill stalls", domain="nonnegative")
input_cost_q = Quantity("input_token_cost", r"c_{\mathrm{in}}", "USD/token",
                        "cost of one input token on the prefill pool", display_unit="USD/Mtoken")
output_cost_q = Quantity("output_token_cost", r"c_{\mathrm{out}}", "USD/token",
                         "cost of one output token on the decode pool", display_unit="USD/Mtoken")
request_cost_q = Quantity("request_cost", r"c_{\mathrm{req}}", "USD/seq",
                          "cost of one request: its input tokens on the prefill pool, its output tokens on the "
                          "decode pool")

V_kv, t_x, t_stall, I_pre, B_dis = (kv_transfer_bytes_q.sym, kv_transfer_time_q.sym, prefill_stall_q.sym,
                                    interference_q.sym, breakeven_batch_q.sym)
c_in, c_out, c_req = input_cost_q.sym, output_cost_q.sym, request_cost_q.sym

# Definitions ------------------------------------------------------------------------------------------
kv_transfer_bytes = Definition(
    "disaggregation.kv_transfer_bytes", title="KV transfer bytes of a request",
    statement="Every prompt token's KV cache in the full-attention layers moves to the decode pool once (a "
              "model's sliding-window layers' last tokens and a linear-attention state move too and are left "
              "out: for such a model the bytes, and the break-even built on them, are a lower bound).",
    source=_SPLITWISE, defines=kv_transfer_bytes_q, expr=ell * k,
)
kv_transfer_time = Definition(
    "disaggregation.kv_transfer_time", title="KV transfer time of a request",
    statement="The request's KV bytes over the scale-out links of the n chips that prefilled it.",
    source=_DISTSERVE, defines=kv_transfer_time_q, expr=V_kv / (n * W_out),
)
prefill_stall = Definition(
    "disaggregation.prefill_stall", title="Stall of a co-located prefill",
    statement="A prefill of the request's prompt on the replica's n chips at peak FLOP/s: every prompt token "
              "times every active weight, as the lecture counts a prefill (the output head too, which a server "
              "runs on the last prompt token only: a few percent of a large model's active weights, so the "
              "stall reads that much high; attention left out, which adds to it).",
    source=_DISTSERVE, defines=prefill_stall_q, expr=c_fwd * N_act * ell / (n * F),
)
interference = Definition(
    "disaggregation.prefill_interference", title="Interference of a co-located prefill",
    statement="Each of the B decoding sequences waits out the stall.",
    source=_DISTSERVE, defines=interference_q, expr=B * t_stall,
)
breakeven_batch = Definition(
    "disaggregation.disaggregation_breakeven_batch", title="Break-even batch of disaggregation",
    statement="One request's worth of KV bytes per token over the scale-out links, in units of a token's "
              "compute at peak.",
    source=_DISTSERVE, defines=breakeven_batch_q, expr=sigma * k * F / (c_fwd * N_act * W_out),
)
input_cost = Definition(
    "disaggregation.input_token_cost", title="Cost of an input token",
    statement="The prefill pool's chip-seconds per input token, priced at the chips' rental price: the lecture's "
              "prefill cost per token.",
    source=_SPLITWISE, defines=input_cost_q, expr=c_pre,
)
output_cost = Definition(
    "disaggregation.output_token_cost", title="Cost of an output token",
    statement="The decode pool's chip-seconds per output token: the lecture's cost per token.",
    source=_SPLITWISE, defines=output_cost_q, expr=c_tok,
)
request_cost = Definition(
    "disaggregation.request_cost", title="Cost of a request",
    statement="Input tokens at the input token's cost plus output tokens at the output token's cost.",
    source=_SPLITWISE, defines=request_cost_q, expr=ell * c_in + ell_out * c_out,
)

# Claims -----------------------------------------------------------------------------------------------
transfer_below_interference_iff = Claim(
    "disaggregation.transfer_below_interference_iff", title="The KV transfer wins exactly from the batch B_dis on",
    label="Disaggregation break-even",
    statement="A request's KV transfer delays it (one request) by no more than a co-located prefill stalls the "
              "B decoding sequences exactly when B is at least \\(B_{\\mathrm{dis}}\\); the prompt length and the "
              "chips cancel.",
    source=_DISTSERVE,
    goal=logic.Iff(logic.le(sigma * t_x, I_pre), logic.ge(B, B_dis)),
    steps=(
        Step(logic.Iff(logic.le(sigma * t_x, I_pre),
                       logic.le(sigma * ell * k / (n * W_out), B * c_fwd * N_act * ell / (n * F))),
             "substitute the transfer and the stall", link="implies"),
        Step(logic.Iff(logic.le(sigma * t_x, I_pre), logic.le(sigma * k * F, B * c_fwd * N_act * W_out)),
             r"multiply by the positive \(n W_{\mathrm{out}} F/\ell\): prompt and chips cancel", link="implies"),
        Step(logic.Iff(logic.le(sigma * t_x, I_pre), logic.ge(B, B_dis)),
             r"divide by the positive \(c_{\mathrm{fwd}} N_{\mathrm{act}} W_{\mathrm{out}}\)", link="implies"),
    ),
)
interference_over_transfer = Claim(
    "disaggregation.interference_over_transfer", title="The stall is B/B_dis transfers",
    statement="A co-located prefill's interference is exactly B/B_dis times the request-seconds of its KV "
              "transfer, whatever the prompt length.",
    source=_DISTSERVE,
    goal=logic.eq(I_pre, (B / B_dis) * sigma * t_x),
)
request_cost_split = Claim(
    "disaggregation.request_cost_split", title="A request pays input and output tokens at their own costs",
    label="Cost per request",
    statement="A request costs ℓ input tokens at the prefill pool's cost per input token and ℓ_out output tokens "
              "at the decode pool's cost per output token; each part grows with its own length only.",
    source=_SPLITWISE,
    goal=logic.And((logic.eq(c_req, ell * c_pre + ell_out * c_tok), logic.ge(c_req, ell * c_in),
                    logic.ge(c_req, ell_out * c_out))),
)

# Worked examples: KV bytes per token from the publishers' config.json ----------------------------------
_NIC = spec("one 400 Gb/s ConnectX-7 NIC per GPU, 50 GB/s (the h100-sxm preset; DeepEP docs/legacy.md: H800 with "
            "CX7 400 Gb/s, ~50 GB/s)", "2022-03")
_DSV3_K = logic.eq(k, si(f"{61 * (512 + 64) * 2} byte/token"))
_NIC_W = logic.eq(W_out, si("50e9 byte/s"))
_DSV3_KV = (_DSV3_K, logic.eq(N_act, si("37e9 param")), logic.eq(F, si("1979e12 FLOP/s")), _NIC_W)
_PROMPT_4K = logic.eq(ell, si("4096 token/seq"))
_FORALL = (kv_bytes_per_token, params_active, flops, scaleout_bandwidth)
deepseek_v3_breakeven_below_one = Claim(
    "disaggregation.deepseek_v3_breakeven_below_one", title="DeepSeek-V3: the KV transfer wins at any batch",
    statement="MLA caches 61 layers × (512 + 64) BF16 elements, 70,272 bytes per token; with 37B active "
              "parameters at 1,979 TFLOP/s (FP8) and 50 GB/s per GPU, B_dis is below 1/25 of a request: even a "
              "decode batch of one loses more to a co-located prefill than to the transfer.",
    source=_NIC,
    hypotheses=_DSV3_KV,
    goal=logic.lt(B_dis, sigma / 25),
    instance=True, forall=_FORALL, uses=(transfer_below_interference_iff,),
    notes="deepseek-ai/DeepSeek-V3 config.json: num_hidden_layers 61, kv_lora_rank 512, qk_rope_head_dim 64.",
)
llama3_405b_breakeven_below_one = Claim(
    "disaggregation.llama3_405b_breakeven_below_one", title="Llama 3.1 405B: the KV transfer wins at any batch",
    statement="GQA caches 126 layers × 8 KV heads × 128 × 2 (keys and values) BF16 elements, 516,096 bytes per "
              "token; with 405B parameters at 989 TFLOP/s and 50 GB/s per GPU, B_dis is below 1/50 of a request.",
    source=_NIC,
    hypotheses=(logic.eq(k, si(f"{126 * 8 * 128 * 2 * 2} byte/token")), logic.eq(N_act, si("405e9 param")),
                logic.eq(F, si("989e12 FLOP/s")), _NIC_W),
    goal=logic.lt(B_dis, sigma / 50),
    instance=True, forall=_FORALL, uses=(transfer_below_interference_iff,),
    notes="meta-llama/Llama-3.1-405B config.json: num_hidden_layers 126, num_key_value_heads 8, head_dim 128.",
)
deepseek_v3_transfer_4k = Claim(
    "disaggregation.deepseek_v3_transfer_4k", title="A 4K DeepSeek-V3 prompt crosses one NIC in 5.8 ms",
    statement="4,096 tokens × 70,272 bytes = 288 MB: over one 50 GB/s link that is within 1 % of 5.76 ms.",
    source=_NIC,
    hypotheses=(_DSV3_K, _PROMPT_4K, logic.eq(n, 1), _NIC_W),
    goal=logic.within_percent(t_x, si("5.76e-3 s/seq"), 1),
    instance=True, forall=(kv_bytes_per_token, prefill_tokens, chips, scaleout_bandwidth),
)
deepseek_v3_transfer_4k_bf16_heads = Claim(
    "disaggregation.deepseek_v3_transfer_4k_bf16_heads", title="False twin: the cache priced as full heads",
    statement="Counting DeepSeek-V3's cache as 128 full key and value heads of 128 BF16 elements in each of 61 "
              "layers (3,997,696 bytes per token) would keep the 4K transfer within 10 % of 5.76 ms.",
    source=_NIC,
    hypotheses=(logic.eq(k, si(f"{61 * 128 * 128 * 2 * 2} byte/token")), _PROMPT_4K, logic.eq(n, 1), _NIC_W),
    goal=logic.within_percent(t_x, si("5.76e-3 s/seq"), 10),
    instance=True, forall=(kv_bytes_per_token, prefill_tokens, chips, scaleout_bandwidth), expected="refuted",
    tags=("inconsistency",),
    notes="A planted false twin of disaggregation.deepseek_v3_transfer_4k: uncompressed heads are 57 times MLA's "
          "latent, about 330 ms.",
)

# Pool sizes and rates per chip: a chip of each pool is its own unit -------------------------------------------
# A rate per prefill chip and a rate per decode chip are different numbers of different things: declared as
# counting dimensions, adding one to the other is a unit error when the library loads, not a wrong sum.
declare_count_dimension("prefill_chip", hint="one chip of a disaggregated deployment's prefill pool")
declare_count_dimension("decode_chip", hint="one chip of a disaggregated deployment's decode pool")

_ONE_CHIP = "a pool's chip is one chip of the deployment; the unit only says which pool counts it"
prefill_chips_q = Quantity("prefill_chips", r"N_{\mathrm{pre}}", "prefill_chip",
                           "chips of the prefill pool of a disaggregated deployment")
decode_chips_q = Quantity("decode_chips", r"N_{\mathrm{dec}}", "decode_chip",
                          "chips of the decode pool of a disaggregated deployment")
chip_per_prefill_chip_q = Quantity("chip_per_prefill_chip", r"\kappa_{\mathrm{pre}}", "1/prefill_chip",
                                   "chips of the deployment one prefill chip is: one", value=1,
                                   source=derived(f"a prefill chip is one chip: {_ONE_CHIP}"))
chip_per_decode_chip_q = Quantity("chip_per_decode_chip", r"\kappa_{\mathrm{dec}}", "1/decode_chip",
                                  "chips of the deployment one decode chip is: one", value=1,
                                  source=derived(f"a decode chip is one chip: {_ONE_CHIP}"))
deployed_chips_q = Quantity("deployed_chips", r"N_{\mathrm{dep}}", "1",
                            "chips of both pools, counted as the lecture counts chips")
prefill_chip_rate_q = Quantity("input_rate_per_prefill_chip", r"\theta_{\mathrm{pre}}", "token/(s·prefill_chip)",
                               "input tokens per second one chip of the prefill pool prefills")
decode_chip_rate_q = Quantity("output_rate_per_decode_chip", r"\theta_{\mathrm{dec}}", "token/(s·decode_chip)",
                              "output tokens per second one chip of the decode pool produces")
deployed_chip_rate_q = Quantity("output_rate_per_deployed_chip", r"\theta_{\mathrm{dep}}", "token/s",
                                "output tokens per second per chip of the whole deployment, both pools counted")

N_pre, N_dec, kap_pre, kap_dec, N_dep = (prefill_chips_q.sym, decode_chips_q.sym, chip_per_prefill_chip_q.sym,
                                         chip_per_decode_chip_q.sym, deployed_chips_q.sym)
th_pre, th_dec, th_dep = prefill_chip_rate_q.sym, decode_chip_rate_q.sym, deployed_chip_rate_q.sym
Th_in, Th_out = input_token_rate.sym, output_token_rate.sym

deployed_chips = Definition(
    "disaggregation.deployed_chips", title="Chips of a disaggregated deployment",
    statement="The prefill pool's chips and the decode pool's chips, each converted to chips (one chip each).",
    source=_DISTSERVE, defines=deployed_chips_q, expr=N_pre * kap_pre + N_dec * kap_dec,
)
prefill_chip_rate = Definition(
    "disaggregation.input_rate_per_prefill_chip", title="Input tokens per second per prefill chip",
    statement="The input token rate, read as the prefill pool's, over the prefill pool's chips.",
    source=_DISTSERVE, defines=prefill_chip_rate_q, expr=Th_in / N_pre,
)
decode_chip_rate = Definition(
    "disaggregation.output_rate_per_decode_chip", title="Output tokens per second per decode chip",
    statement="The output token rate, read as the decode pool's, over the decode pool's chips.",
    source=_DISTSERVE, defines=decode_chip_rate_q, expr=Th_out / N_dec,
)
deployed_chip_rate = Definition(
    "disaggregation.output_rate_per_deployed_chip", title="Output tokens per second per deployed chip",
    statement="The decode pool's output token rate over every chip of the deployment, prefill chips included.",
    source=_DISTSERVE, defines=deployed_chip_rate_q, expr=Th_out / N_dep,
)

_DECODE_SHARE = N_dec * kap_dec / N_dep
deployed_rate_is_decode_share = Claim(
    "disaggregation.deployed_rate_is_decode_share", title="The decode chip's rate, diluted by the decode pool's share",
    label="Rate per deployed chip",
    statement="The output rate per deployed chip is the output rate per decode chip (converted to chips) times "
              "the decode pool's share of the deployment's chips, and so never above it.",
    source=_DISTSERVE,
    goal=logic.And((logic.eq(th_dep, (th_dec / kap_dec) * _DECODE_SHARE), logic.le(th_dep, th_dec / kap_dec))),
    steps=(
        Step(logic.eq(th_dep, Th_out / (N_pre * kap_pre + N_dec * kap_dec)), "substitute the deployed chips"),
        Step(logic.And((logic.eq(th_dep, (th_dec / kap_dec) * _DECODE_SHARE), logic.le(th_dep, th_dec / kap_dec))),
             "the share is at most one: the prefill pool's chips are not negative", link="implies"),
    ),
)
deployed_rate_is_decode_rate = Claim(
    "disaggregation.deployed_rate_is_decode_rate", title="False twin: the decode chip's rate as the deployment's",
    statement="Reading the output rate per decode chip as the output rate per chip of the whole deployment: they "
              "would be equal.",
    source=_DISTSERVE,
    goal=logic.eq(th_dep, th_dec / kap_dec), expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of disaggregation.deployed_rate_is_decode_share: any prefill chip makes the "
          "deployment's rate per chip lower.",
)

# Worked example: DeepSeek's published units and rates per node (H800, 8 GPUs a node) ------------------------------
_DS_DAY6 = spec("deepseek-ai/open-infra-index, 202502OpenSourceWeek/day_6_one_more_thing_deepseekV3R1_inference_"
                "system_overview.md: a prefill deployment unit spans 4 nodes (EP32), a decode unit 18 nodes (EP144), "
                "8 H800 GPUs a node; each node delivers on average about 73.7k input tokens/s prefilling or about "
                "14.8k output tokens/s decoding", "2025-03-01")
_DS_UNITS = (logic.eq(N_pre, si("32 prefill_chip")), logic.eq(N_dec, si("144 decode_chip")),
             logic.eq(Th_in, si(f"{4 * 73_700} token/s")), logic.eq(Th_out, si(f"{18 * 14_800} token/s")))
_DS_FORALL = (prefill_chips_q, decode_chips_q, input_token_rate, output_token_rate)
deepseek_r1_rates_per_chip = Claim(
    "disaggregation.deepseek_r1_rates_per_chip", title="DeepSeek's units: 9,212.5, 1,850 and 1,514 tokens/s per chip",
    statement="One prefill unit (32 GPUs) and one decode unit (144 GPUs) at the published average rates per node "
              "prefill 9,212.5 input tokens/s per prefill chip and produce 1,850 output tokens/s per decode chip; "
              "over the 176 deployed chips that is within 1 % of 1,514 output tokens/s per chip.",
    source=_DS_DAY6, hypotheses=_DS_UNITS,
    goal=logic.And((logic.eq(th_pre, si("9212.5 token/(s·prefill_chip)")),
                    logic.eq(th_dec, si("1850 token/(s·decode_chip)")),
                    logic.eq(N_dep, 176), logic.within_percent(th_dep, si("1514 token/s"), 1))),
    instance=True, forall=_DS_FORALL, uses=(deployed_rate_is_decode_share,),
    notes="4 nodes × 73.7k = 294,800 input tokens/s over 32 prefill chips; 18 nodes × 14.8k = 266,400 output "
          "tokens/s over 144 decode chips, and over 176 chips 16,650/11 ≈ 1,513.6.",
)
deepseek_r1_decode_rate_as_deployed = Claim(
    "disaggregation.deepseek_r1_decode_rate_as_deployed", title="False twin: DeepSeek's 1,850 tokens/s per chip",
    statement="Reading DeepSeek's 1,850 output tokens/s per decode chip as the rate per deployed chip of a "
              "prefill unit and a decode unit: within 10 % of it.",
    source=_DS_DAY6, hypotheses=_DS_UNITS,
    goal=logic.within_percent(th_dep, si("1850 token/s"), 10),
    instance=True, forall=_DS_FORALL, expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of disaggregation.deepseek_r1_rates_per_chip: the 32 prefill chips make the "
          "deployment's rate per chip 18 % lower.",
)

PROSE = (
    "A replica that prefills between decode steps stalls every sequence it decodes; a disaggregated one sends the "
    "prompt's KV cache from a prefill pool to a decode pool instead.  Counted in request-seconds, the prompt length "
    "cancels.",
    "{{result:transfer_below_interference_iff}}",
    "With MLA's 70 KB per token or even Llama 3.1 405B's 516 KB, the break-even batch is a small fraction of one "
    "request: the transfer is the cheaper whenever a decode batch is running.  The costs of input and output tokens "
    "are then set by separate pools.",
    "{{result:request_cost_split}}",
    "The two pools count chips in units of their own, so that a rate per prefill chip cannot be added to a rate per "
    "decode chip; converted to chips, the deployment's rate per chip is the decode pool's diluted by its share.",
    "{{result:deployed_rate_is_decode_share}}",
)
