"""Economics: rented chip-hours against API prices, the margin at a utilisation, and the break-even utilisation

Chapter 8 of part II ("Beyond the lecture").  A provider rents n_rent chips at p_chip per chip-hour whether they
are busy or not (the lecture's n chips, or every stage's chips of a layout).  Fully busy they produce Θ_out
output tokens (or prefill Θ_in input tokens) per second: a measured or published rate, or the roofline's Bτ/T.
Busy only a share ρ of the time (the saturation chapter's utilisation), the rent is shared by ρ times fewer
tokens, so a served token costs the full-use cost over ρ.  Against an API price per token this gives the
provider's margin at a utilisation, and the utilisation at which the margin is zero: an exact threshold, below
which every token sold loses money.

Main claims:
- **Served cost at the roofline** ``economics.served_output_cost_at_roofline`` and
  ``economics.served_input_cost_at_roofline``: at the roofline's rates, a served token costs the lecture's
  cost per output token (``roofline.cost_per_token``) or per input token (``pricing.prefill_cost_per_token``)
  over the utilisation.
- **Break-even utilisation** ``economics.output_margin_breakeven_iff`` and
  ``economics.input_margin_breakeven_iff``: the margin on a token is nonnegative exactly when the utilisation
  is at least ρ* = p_chip·n_rent/(Θ·p), and it is exactly 1 − ρ*/ρ.
- **Tokens per provisioned watt** ``economics.tokens_per_joule_scale_with_utilisation``: output tokens per
  second per rated watt of the n_rent chips are ρ·Θ_out/(n_rent·P_chip), and the rent per token served is the rent per
  provisioned watt-second over them.
- **A layout rents every stage** ``economics.layout_rent_counts_every_stage``: the chips rented are
  ``rented_chips`` (n_rent), the lecture's n where no layout is given and every chip of a layout, tp·pp·cp·dp,
  where one is; so under pp stages an output token costs pp times the rent of one stage's n chips
  (``economics.layout_rent_one_stage``, one stage's rent under four stages, is refuted).
- Worked examples from DeepSeek's published inference system (8 H800 per node at $2 per GPU-hour, 14.8k
  output tokens/s per decode node, 73.7k input tokens/s per prefill node, DeepSeek-R1's API prices):
  ``economics.deepseek_decode_output_cost`` (about $0.30 per million output tokens at full use) and its
  refuted twin ``economics.deepseek_decode_output_cost_node_rent_per_gpu_rate`` ($2.40: a node's rent over
  one GPU's share of the rate); ``economics.deepseek_r1_output_breakeven`` (ρ* below 14 %) and its refuted
  twin ``economics.deepseek_r1_output_breakeven_half``; ``economics.deepseek_r1_input_breakeven`` (ρ* below
  11 %); ``economics.deepseek_r1_output_margin_at_half`` (above 70 % of the price kept at ρ = 1/2) and the
  refuted ``economics.deepseek_r1_output_margin_at_tenth`` (no margin is left at ρ = 1/10).

Notation: n_rent chips rented (``rented_chips``; n, the lecture's ``chips``, without a layout), p_chip the
rental price of one chip, Θ_out and Θ_in output and input tokens per second of the n_rent chips when fully busy,
ρ the utilisation (the share of the rented time that serves paid tokens), p_out and p_in the API prices per
output and input token (the lecture's ``price_output`` and ``price_input``), M the margin as a share of the
price, P_chip the power one chip is provisioned for (a hardware preset's ``chip_power``: its rated TDP or board
power), η output tokens per provisioned joule.

Implementation notes: the rental price is paid for every provisioned chip-second, so the rent counts every chip
a replica occupies: under a pipeline-parallel layout the lecture's n (``chips``) is one stage's tp·cp·dp chips,
and the layout gives ``rented_chips`` as all tp·pp·cp·dp of them (``layouts.layout_chips``, from the degrees; a
value typed by hand must agree, ``economics.rented_chips_are_the_layout``); the utilisation is the
saturation chapter's ρ = λ/μ (arrivals over capacity), so a what-if may pin it (``--set utilisation=0.6``).
Input and output tokens are priced separately and each on its own rate, as a disaggregated deployment runs
them on separate pools (``disaggregation.request_cost_split``); a co-located replica shares its chips
between the two, and its split of the rent between them is the user's.  Cache-hit input prices and the price of
electricity are not modelled here; power enters as the chips' rated power, not a measured draw.

References: DeepSeek-AI 2025, "DeepSeek-V3/R1 Inference System Overview", deepseek-ai/open-infra-index,
202502OpenSourceWeek/day_6_one_more_thing_deepseekV3R1_inference_system_overview.md (H800 at $2 per GPU-hour;
per node about 73.7k input tokens/s in prefill and 14.8k output tokens/s in decode; DeepSeek-R1 at $0.55
per million input tokens on a cache miss and $2.19 per million output tokens); the lecture's pricing chapter
for the price quantities.
"""

from __future__ import annotations

import sympy as sp

from derive import Claim, Definition, Quantity, Step, logic, paper, si, spec
from theorems.pricing import (
    prefill_cost_per_token_q,
    prefill_step_time_q,
    prefill_tokens,
    price_input,
    price_output,
)
from theorems.roofline import B, chip_power, chip_price, chips, cost_per_token_q, n, p_chip, step_time_q, tau

from .layouts import cp_q, dp_q, layout_chips, layout_chips_q, pp, pp_q, stage_chips_q, tp_q
from .saturation import arrival_rate, output_tokens, utilisation_q

PART = "Beyond the lecture"  # the documents render this library's chapters as part II
CHAPTER = "Economics: rented chips against API prices"

rho, p_in, p_out, ell = utilisation_q.sym, price_input.sym, price_output.sym, prefill_tokens.sym
T, T_pre, c_tok, c_pre = step_time_q.sym, prefill_step_time_q.sym, cost_per_token_q.sym, prefill_cost_per_token_q.sym

_DS_OVERVIEW = ("deepseek-ai/open-infra-index, 202502OpenSourceWeek/day_6_one_more_thing_deepseekV3R1_inference_"
                "system_overview.md")
_DEEPSEEK = spec(f"{_DS_OVERVIEW}: H800 GPUs rented at $2 per GPU-hour, 8 GPUs per node; each prefill node about "
                 "73.7k input tokens/s (cache hits included), each decode node about 14.8k output tokens/s; "
                 "DeepSeek-R1 priced $0.55 per million input tokens (cache miss) and $2.19 per million output "
                 "tokens", "2025-03-01")
_RENT = paper(f"DeepSeek-AI 2025, DeepSeek-V3/R1 Inference System Overview, {_DS_OVERVIEW}",
              "cost and theoretical income: GPU rental priced per hour for every node in service, income per "
              "token at the API's prices")

# Inputs -----------------------------------------------------------------------------------------------
output_token_rate = Quantity(
    "output_token_rate", r"\Theta_{\mathrm{out}}", "token/s",
    "output tokens per second the rented chips produce when fully busy (a measurement, a published figure, "
    "or the roofline's B·tau/T)")
input_token_rate = Quantity(
    "input_token_rate", r"\Theta_{\mathrm{in}}", "token/s",
    "input (prompt) tokens per second the rented chips prefill when fully busy")

Th_out, Th_in = output_token_rate.sym, input_token_rate.sym

# The chips a provider rents for the rates above.  Without a layout the replica is the lecture's one group of n chips;
# a layout in use gives every chip of its stages (its INPUT_TABLE ``gives`` this quantity layout_chips = tp·pp·cp·dp,
# derived from the degrees), where the lecture's n is one stage's chips only.
rented_chips_q = Quantity("rented_chips", r"n_{\mathrm{rent}}", "1",
                          "chips rented for the token rates: the lecture's n chips where no layout is given, every "
                          "chip of the layout (tp·pp·cp·dp, all its pipeline stages) where one is")
n_rent = rented_chips_q.sym

# Derived ----------------------------------------------------------------------------------------------
served_output_cost_q = Quantity("served_output_token_cost", r"c_{\mathrm{out}}^{\rho}", "USD/token",
                                "rent of the chips rented, per output token served at utilisation rho",
                                display_unit="USD/Mtoken")
served_input_cost_q = Quantity("served_input_token_cost", r"c_{\mathrm{in}}^{\rho}", "USD/token",
                               "rent of the chips rented, per input token served at utilisation rho",
                               display_unit="USD/Mtoken")
output_margin_q = Quantity("output_token_margin", r"M_{\mathrm{out}}", "1",
                           "share of the API price of an output token left after the rent of serving it "
                           "(negative: a loss)", domain="real")
input_margin_q = Quantity("input_token_margin", r"M_{\mathrm{in}}", "1",
                          "share of the API price of an input token left after the rent of serving it "
                          "(negative: a loss)", domain="real")
output_breakeven_q = Quantity("output_breakeven_utilisation", r"\rho^{*}_{\mathrm{out}}", "1",
                              "utilisation at which the rent of an output token equals its API price")
input_breakeven_q = Quantity("input_breakeven_utilisation", r"\rho^{*}_{\mathrm{in}}", "1",
                             "utilisation at which the rent of an input token equals its API price")

tokens_per_joule_q = Quantity("output_tokens_per_joule", r"\eta_{\mathrm{out}}", "token/J",
                             "output tokens served per second per watt the rented chips are provisioned for (tokens "
                             "per joule of rated power) at utilisation rho")

c_out_r, c_in_r = served_output_cost_q.sym, served_input_cost_q.sym
P_chip, eta = chip_power.sym, tokens_per_joule_q.sym
M_out, M_in, r_out, r_in = output_margin_q.sym, input_margin_q.sym, output_breakeven_q.sym, input_breakeven_q.sym

# Definitions ------------------------------------------------------------------------------------------
rented_chips = Definition(
    "economics.rented_chips", title="Chips rented",
    statement="Without a layout the replica is one group of the lecture's n chips, and those are the chips rented.  "
              "A layout in use gives the rented chips as every chip of its pipeline stages, tp·pp·cp·dp "
              "(layouts.layout_chips), in place of this definition: a stage's n chips alone would leave pp − 1 "
              "stages unpaid.",
    source=_RENT, defines=rented_chips_q, expr=n,
)
served_output_cost = Definition(
    "economics.served_output_token_cost", title="Rent per output token served",
    statement="The rented chips' rent per second over the output tokens they serve per second: the full-use rate "
              "times the utilisation.",
    source=_RENT, defines=served_output_cost_q, expr=p_chip * n_rent / (rho * Th_out),
)
served_input_cost = Definition(
    "economics.served_input_token_cost", title="Rent per input token served",
    statement="The rented chips' rent per second over the input tokens they prefill per second at the utilisation.",
    source=_RENT, defines=served_input_cost_q, expr=p_chip * n_rent / (rho * Th_in),
)
output_margin = Definition(
    "economics.output_token_margin", title="Margin on an output token",
    statement="The API price of an output token less its rent, as a share of the price.",
    source=_RENT, defines=output_margin_q, expr=1 - c_out_r / p_out,
)
input_margin = Definition(
    "economics.input_token_margin", title="Margin on an input token",
    statement="The API price of an input token less its rent, as a share of the price.",
    source=_RENT, defines=input_margin_q, expr=1 - c_in_r / p_in,
)
output_breakeven = Definition(
    "economics.output_breakeven_utilisation", title="Break-even utilisation for output tokens",
    statement="The rent of the rented chips per second over the income per second of selling every output token "
              "they can produce.",
    source=_RENT, defines=output_breakeven_q, expr=p_chip * n_rent / (Th_out * p_out),
)
input_breakeven = Definition(
    "economics.input_breakeven_utilisation", title="Break-even utilisation for input tokens",
    statement="The rent of the rented chips per second over the income per second of selling every input token "
              "they can prefill.",
    source=_RENT, defines=input_breakeven_q, expr=p_chip * n_rent / (Th_in * p_in),
)

tokens_per_joule = Definition(
    "economics.output_tokens_per_joule", title="Output tokens per provisioned watt",
    statement="The output tokens served per second over the rated power of the rented chips: what a provider gets for "
              "the power it must provision, busy or idle.",
    source=_RENT, defines=tokens_per_joule_q, expr=rho * Th_out / (n_rent * P_chip),
)

# Claims -----------------------------------------------------------------------------------------------
served_output_cost_at_roofline = Claim(
    "economics.served_output_cost_at_roofline", title="At the roofline, a served output token costs c_tok/ρ",
    label="Served cost at the roofline",
    statement="When the chips produce output tokens at the roofline's rate, B·τ tokens every step time T, an "
              "output token served at utilisation ρ costs the lecture's cost per token over ρ.",
    source=_RENT,
    hypotheses=(logic.eq(Th_out, B * tau / T),),
    goal=logic.eq(c_out_r, c_tok / rho),
)
served_input_cost_at_roofline = Claim(
    "economics.served_input_cost_at_roofline", title="At the roofline, a served input token costs c_pre/ρ",
    statement="When the chips prefill at the roofline's rate, B·ℓ tokens every prefill pass T_pre, an input token "
              "served at utilisation ρ costs the lecture's prefill cost per token over ρ.",
    source=_RENT,
    hypotheses=(logic.eq(Th_in, B * ell / T_pre),),
    goal=logic.eq(c_in_r, c_pre / rho),
)
output_margin_breakeven_iff = Claim(
    "economics.output_margin_breakeven_iff", title="Output tokens pay from the utilisation ρ*_out on",
    label="Break-even utilisation",
    statement="The margin on an output token is nonnegative exactly when the utilisation is at least "
              "\\(\\rho^{*}_{\\mathrm{out}} = p_{\\mathrm{chip}} n_{\\mathrm{rent}}/"
              "(\\Theta_{\\mathrm{out}} p_{\\mathrm{out}})\\), "
              "and it is exactly \\(1 - \\rho^{*}_{\\mathrm{out}}/\\rho\\).",
    source=_RENT,
    goal=logic.And((logic.Iff(logic.ge(M_out, 0), logic.ge(rho, r_out)), logic.eq(M_out, 1 - r_out / rho))),
    steps=(
        Step(logic.eq(M_out, 1 - p_chip * n_rent / (rho * Th_out * p_out)), "substitute the rent per token served"),
        Step(logic.eq(M_out, 1 - r_out / rho), r"the rent over the price is \(\rho^{*}_{\mathrm{out}}/\rho\)"),
    ),
)
input_margin_breakeven_iff = Claim(
    "economics.input_margin_breakeven_iff", title="Input tokens pay from the utilisation ρ*_in on",
    statement="The margin on an input token is nonnegative exactly when the utilisation is at least "
              "\\(\\rho^{*}_{\\mathrm{in}} = p_{\\mathrm{chip}} n_{\\mathrm{rent}}/"
              "(\\Theta_{\\mathrm{in}} p_{\\mathrm{in}})\\), "
              "and it is exactly \\(1 - \\rho^{*}_{\\mathrm{in}}/\\rho\\).",
    source=_RENT,
    goal=logic.And((logic.Iff(logic.ge(M_in, 0), logic.ge(rho, r_in)), logic.eq(M_in, 1 - r_in / rho))),
)

tokens_per_joule_scale_with_utilisation = Claim(
    "economics.tokens_per_joule_scale_with_utilisation", title="Tokens per provisioned watt fall with utilisation",
    label="Tokens per provisioned watt",
    statement="Output tokens per provisioned watt are the utilisation times their full-use value "
              r"\(\Theta_{\mathrm{out}}/(n_{\mathrm{rent}} P_{\mathrm{chip}})\), so never more than it below "
              "saturation; and the "
              "rent per output token served is the rent per provisioned watt-second over them.",
    source=_RENT,
    goal=logic.And((logic.eq(eta, rho * Th_out / (n_rent * P_chip)),
                    logic.Iff(logic.le(eta, Th_out / (n_rent * P_chip)), logic.le(rho, 1)),
                    logic.eq(c_out_r, (p_chip / P_chip) / eta))),
)

# A layout rents every stage ----------------------------------------------------------------------------------
# The layout gives n_rent = tp·pp·cp·dp and the lecture's n = tp·cp·dp (layouts.INPUT_TABLE): stated here as
# hypotheses over the degrees, the rented chips and n being variables of the claim, so that the claim says what the
# scenario's layout does to the rent at any degrees.
_MEGATRON = paper("Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU Clusters Using "
                  "Megatron-LM (SC '21), arXiv:2104.04473", "section 3.1: p·t·d = n GPUs, every pipeline stage on "
                  "GPUs of its own")
_LAYOUT_GIVES = (logic.eq(n_rent, layout_chips_q.sym), logic.eq(n, stage_chips_q.sym))
_LAYOUT_FORALL = (rented_chips_q, chips, tp_q, pp_q, cp_q, dp_q, chip_price, output_token_rate, arrival_rate,
                  output_tokens, prefill_tokens)
_ONE_STAGE_RENT = p_chip * n / (rho * Th_out)  # the rent per output token of one stage's chips, the lecture's n
layout_rent_counts_every_stage = Claim(
    "economics.layout_rent_counts_every_stage", title="A pipelined layout rents pp stages: pp times one stage's rent",
    label="A layout rents every stage",
    statement="Where a layout gives the rented chips (all tp·pp·cp·dp of them) and the lecture's n (one stage's "
              "tp·cp·dp), an output token served at the same rate and utilisation costs pp times the rent of one "
              "stage's chips, and more than it exactly when there are at least two stages.",
    source=_MEGATRON,
    hypotheses=_LAYOUT_GIVES,
    goal=logic.And((logic.eq(c_out_r, pp * _ONE_STAGE_RENT), logic.Iff(logic.gt(c_out_r, _ONE_STAGE_RENT),
                                                                        logic.ge(pp, 2)))),
    instance=True, forall=_LAYOUT_FORALL, uses=(served_output_cost,),
    notes="layouts.layout_is_stages_of_chips: the layout's chips are pp times a stage's.",
)
layout_rent_one_stage = Claim(
    "economics.layout_rent_one_stage", title="False twin: a four-stage layout rents one stage",
    statement="Under a layout of four pipeline stages, an output token would cost only the rent of one stage's "
              "chips, the lecture's n.",
    source=_MEGATRON,
    hypotheses=(*_LAYOUT_GIVES, logic.eq(pp_q.sym, 4)),
    goal=logic.eq(c_out_r, _ONE_STAGE_RENT),
    instance=True, forall=_LAYOUT_FORALL, expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of economics.layout_rent_counts_every_stage: the other three stages' chips are "
          "rented too, so the rent per token is four times one stage's.",
)

# Worked examples: DeepSeek's published inference system (2025-03-01) ------------------------------------
_NODE = (logic.eq(n, 8), logic.eq(p_chip, si("2 USD/h")))  # 8 H800 per node, $2 per GPU-hour
_DECODE = (*_NODE, logic.eq(Th_out, si("14800 token/s")))  # output tokens/s per decode node
_PREFILL = (*_NODE, logic.eq(Th_in, si("73700 token/s")))  # input tokens/s per prefill node (cache hits included)
_R1_OUT = logic.eq(p_out, si("2.19 USD/Mtoken"))  # $2.19 per million output tokens
_R1_IN = logic.eq(p_in, si("0.55 USD/Mtoken"))  # $0.55 per million input tokens (cache miss)
# the utilisation is saturation's arrival rate over capacity: its inputs are quantified over, the hypotheses pin it
_FORALL = (chips, chip_price, output_token_rate, input_token_rate, price_input, price_output, arrival_rate,
           output_tokens, prefill_tokens)
_PER_M = sp.Rational(1, 10**6)  # one dollar per million tokens, in USD/token

deepseek_decode_output_cost = Claim(
    "economics.deepseek_decode_output_cost", title="DeepSeek's decode node: about $0.30 per million output tokens",
    statement="Eight H800 at $2 per GPU-hour producing 14,800 output tokens per second, fully busy, rent out at "
              "$16 per 53.28 million tokens: within 1 % of $0.30 per million output tokens.",
    source=_DEEPSEEK,
    hypotheses=(*_DECODE, logic.eq(rho, 1)),
    goal=logic.within_percent(c_out_r, sp.Rational(3, 10) * _PER_M, 1),
    instance=True, forall=_FORALL, uses=(served_output_cost,),
)
deepseek_decode_output_cost_node_rent_per_gpu_rate = Claim(
    "economics.deepseek_decode_output_cost_node_rent_per_gpu_rate",
    title="False twin: a node's rent over one GPU's share of the rate",
    statement="Pricing the whole node's $16 per hour against one GPU's eighth of the 14,800 tokens per second "
              "would put an output token within 1 % of $2.40 per million.",
    source=_DEEPSEEK,
    hypotheses=(*_DECODE, logic.eq(rho, 1)),
    goal=logic.within_percent(c_out_r, sp.Rational(24, 10) * _PER_M, 1),
    instance=True, forall=_FORALL, expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of economics.deepseek_decode_output_cost: the rent and the rate must count the same "
          "chips; mixing a node's rent with a GPU's rate is 8 times too dear.",
)
deepseek_r1_output_breakeven = Claim(
    "economics.deepseek_r1_output_breakeven", title="At R1's output price, a decode node pays from 14 % busy",
    statement="At $2.19 per million output tokens, a decode node renting at $16 per hour and producing 14,800 "
              "tokens per second breaks even below 14 % utilisation (ρ* ≈ 0.137).",
    source=_DEEPSEEK,
    hypotheses=(*_DECODE, _R1_OUT),
    goal=logic.lt(r_out, sp.Rational(14, 100)),
    instance=True, forall=_FORALL, uses=(output_margin_breakeven_iff,),
)
deepseek_r1_output_breakeven_half = Claim(
    "economics.deepseek_r1_output_breakeven_half", title="False twin: R1's output price needs half the node busy",
    statement="At $2.19 per million output tokens, a decode node would have to be busy at least half the time to "
              "cover its rent.",
    source=_DEEPSEEK,
    hypotheses=(*_DECODE, _R1_OUT),
    goal=logic.ge(r_out, sp.Rational(1, 2)),
    instance=True, forall=_FORALL, expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of economics.deepseek_r1_output_breakeven: the break-even is about 0.137.",
)
deepseek_r1_input_breakeven = Claim(
    "economics.deepseek_r1_input_breakeven", title="At R1's input price, a prefill node pays from 11 % busy",
    statement="At $0.55 per million input tokens (a cache miss), a prefill node renting at $16 per hour and "
              "prefilling 73,700 tokens per second breaks even below 11 % utilisation (ρ* ≈ 0.110).",
    source=_DEEPSEEK,
    hypotheses=(*_PREFILL, _R1_IN),
    goal=logic.lt(r_in, sp.Rational(11, 100)),
    instance=True, forall=_FORALL, uses=(input_margin_breakeven_iff,),
)
deepseek_r1_output_margin_at_half = Claim(
    "economics.deepseek_r1_output_margin_at_half", title="Half busy, R1's output price keeps over 70 %",
    statement="A decode node busy half the time serves output tokens at about $0.60 per million: more than 70 % "
              "of R1's $2.19 is margin.",
    source=_DEEPSEEK,
    hypotheses=(*_DECODE, _R1_OUT, logic.eq(rho, sp.Rational(1, 2))),
    goal=logic.gt(M_out, sp.Rational(7, 10)),
    instance=True, forall=_FORALL, uses=(output_margin_breakeven_iff,),
)
deepseek_r1_output_margin_at_tenth = Claim(
    "economics.deepseek_r1_output_margin_at_tenth", title="False twin: a tenth busy still pays",
    statement="A decode node busy a tenth of the time would still cover its rent at R1's output price.",
    source=_DEEPSEEK,
    hypotheses=(*_DECODE, _R1_OUT, logic.eq(rho, sp.Rational(1, 10))),
    goal=logic.ge(M_out, 0),
    instance=True, forall=_FORALL, expected="refuted", tags=("inconsistency",),
    notes="A planted false twin of economics.deepseek_r1_output_margin_at_half: 1/10 is below the break-even "
          "utilisation 0.137, so the margin is about -37 %.",
)

# A layout in use gives the rented chips (theorems.serving joins this to the layout table's ``gives``): every chip of
# its stages, derived from the degrees; a value typed by hand must agree, never a second source of the count.
LAYOUT_GIVES = {"rented_chips": "layout_chips"}
INPUT_CONSTRAINTS = [
    # stated over the degrees, so that a what-if pinning layout_chips (sweep --vary layout_chips) does not move it
    {"id": "economics.rented_chips_are_the_layout", "what": "layout", "rule": "rented_chips = tp*pp*cp*dp",
     "relation": logic.eq(n_rent, layout_chips.expr),
     "reason": "a layout rents every chip of its stages, tp*pp*cp*dp, and a value typed by hand must agree",
     "hint": "leave rented_chips out: the layout gives it", "source": _MEGATRON},
]

PROSE = (
    "Rented chips cost the same busy or idle.  Fully busy, n chips produce output tokens at a rate Θ_out, from a "
    "measurement, a published figure or the roofline; busy a share ρ of the time, the rent is shared by ρ times "
    "fewer tokens.",
    "{{result:served_output_cost_at_roofline}}",
    "Against an API price per token, the margin is then fixed by one number, the utilisation at which the rent "
    "equals the income.",
    "{{result:output_margin_breakeven_iff}}",
    "A layout rents every chip it occupies.  Under pipeline parallelism the lecture's n chips are one stage's, "
    "and the layout gives the rented chips as all of its stages' chips, derived from its degrees: the rent per "
    "token grows with the stages unless the rate grows with them (micro-batches in flight).",
    "{{result:layout_rent_counts_every_stage}}",
    "Where a chip's rated power is known, the same rate gives the tokens a provider gets per watt it provisions.",
    "{{result:tokens_per_joule_scale_with_utilisation}}",
    "DeepSeek's published serving system is the worked example: a decode node of eight H800 rented at $2 per "
    "GPU-hour produces 14,800 output tokens per second, about $0.30 of rent per million at full use; at R1's "
    "$2.19 per million it pays from about 14 % utilisation, and its prefill nodes at $0.55 per million input "
    "tokens from about 11 %.",
)
