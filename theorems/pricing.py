"""API prices as measurements: decode is memory-bound, and cached prompts live on flash and disk

Chapter 6 of the lecture ("Deducing long context memory costs from API pricing", 01:33:02-02:04:02),
second half.  If providers price close to cost, price ratios are cost ratios.  Output tokens cost
about 5x input tokens; input (prefill) runs at the compute floor, so a decode step spends about 5x its
compute time on memory.  A prompt-cache hit is 10x cheaper than recomputing the prompt; holding a
token's KV in a memory tier costs a share of the device per second, retrieving it costs a share of its
bandwidth, and the two balance when the hold time equals the tier's drain time (capacity over
bandwidth).  Five-minute and one-hour cache tiers then point at flash and spinning disk.

Main claims:
- ``pricing.price_tracks_cost``: prices follow costs with a common markup (competition).
- ``pricing.prefill_at_compute_floor``: a long enough prefill is compute-bound and costs the compute
  floor per token.
- **Decode is memory-bound** ``pricing.decode_memory_bound``: with prices proportional to cost and
  prefill compute-bound, the output/input price ratio is the decode step's memory time over its
  compute time, i.e. one over decode MFU; ``pricing.decode_memory_bound_lecture``: 5x prices mean a
  decode step 5x memory-bound (MFU 1/5); ``pricing.decode_memory_bound_at_lecture_point``: the KV reads
  at 200K keep the lecture's batch memory-bound ("it still crosses").
- ``pricing.cache_hit_discount``: base input $5, 5-minute write $6.25 (1.25x), hit $0.50 (10x cheaper
  than base); ``pricing.cache_hit_vs_write_misreading`` (expected ``refuted``): hits are 12.5x, not
  10x, cheaper than writes.
- ``pricing.kv_tier_costs``: a tier's cost per token is its retrieval cost times (1 + hold time over
  drain time).
- **Drain-time rule** ``pricing.cache_tier_drain_time``: holding costs no more than retrieving
  exactly when the hold time is at most the tier's drain time; ``pricing.five_minute_cache_is_flash``
  and ``pricing.one_hour_cache_is_disk`` pick the tier nearest in ratio; the first guesses (HBM and
  DDR; DDR and flash) are ``refuted``.

Notation: p_in, p_out input and output prices per token; μ the common markup; ℓ new tokens per
sequence in a prefill pass; C_X, W_X, p_X capacity, bandwidth and rental price per second of a
memory tier; T_hold the hold time; T_X = C_X/W_X the tier's drain time.

Implementation notes: "nearest drain time" is measured as a ratio, max(a, b)/min(a, b), the
log-free form of |log(a/b)|.  The DDR and flash drain times are the lecture's unsourced ballparks
("1 to 10 seconds", "on the order of one minute"), kept as ranges by quantifying over them.  Prefill
is modelled as a pass of ℓ new tokens per sequence whose memory traffic is the decode step's (the
lecture: "no adjustment at all to the memory time").

References: the lecture, 01:41-02:03; Anthropic, API pricing and prompt caching documentation (Claude
Opus 4.5: $5 / $25 per million input / output tokens; cache writes 1.25x (5 minutes) and 2x (1 hour)
the input price, cache hits 0.1x).
"""

from __future__ import annotations

import sympy as sp

from derive import Assumption, Claim, Definition, Quantity, Step, lecture, logic

from .batching import mfu_q
from .roofline import (
    B,
    F,
    N_act,
    batch,
    c_fwd,
    compute_time_q,
    context,
    cost_per_token_and_floor,
    cost_per_token_q,
    drain_time_q,
    k,
    memory_time_q,
    n,
    p_chip,
    tau,
)
from .scaling import compute_equalisation

CHAPTER = "Deducing long context memory costs from API pricing"
INCONSISTENCY = ("inconsistency",)
t_c, t_mem = compute_time_q.sym, memory_time_q.sym

# ---------------------------------------------------------------------------------------------------
# 1. Prices follow costs (#43); output versus input (#44)
# ---------------------------------------------------------------------------------------------------
price_input = Quantity("price_input", r"p_{\mathrm{in}}", "USD/token", "price of an uncached input token",
                       display_unit="USD/Mtoken")
price_output = Quantity("price_output", r"p_{\mathrm{out}}", "USD/token", "price of an output token",
                        display_unit="USD/Mtoken")
price_markup = Quantity("price_markup", r"\mu", "1", "price over cost, common to a provider's products")
prefill_tokens = Quantity("prefill_tokens", r"\ell", "token/seq", "new tokens per sequence in one prefill pass",
                          whole=True)
prefill_compute_time_q = Quantity("prefill_compute_time", r"t_{\mathrm{compute}}^{\mathrm{pre}}", "s",
                                  "time for the multiplies of one prefill pass", display_unit="ms")
prefill_step_time_q = Quantity("prefill_step_time", r"T^{\mathrm{pre}}", "s", "time of one prefill pass",
                               display_unit="ms")
prefill_cost_per_token_q = Quantity("prefill_cost_per_token", r"c_{\mathrm{tok}}^{\mathrm{pre}}", "USD/token",
                                    "rental cost of a prefill pass per input token")
p_in, p_out, mu, ell = price_input.sym, price_output.sym, price_markup.sym, prefill_tokens.sym
t_cp, T_pre, c_pre = prefill_compute_time_q.sym, prefill_step_time_q.sym, prefill_cost_per_token_q.sym
c_dec = cost_per_token_q.sym

price_tracks_cost = Assumption(
    "pricing.price_tracks_cost", title="Prices track costs",
    statement="A provider is pushed to price close to its costs, otherwise a competitor could undercut it; "
              "so its prices are its costs times one common markup, and price ratios are cost ratios.",
    source=lecture("01:41", CHAPTER),
)
output_input_price_ratio = Assumption(
    "pricing.output_input_price_ratio", title="Output tokens cost 3-5x input tokens",
    statement="Output tokens are priced 3 to 5 times input tokens ('What I've seen in the past is 3-5x'; "
              "'let's say it's 5x').  Claude Opus 4.5 lists $5 and $25 per million tokens (5x); Gemini 3.1 "
              "Pro $2 and $12 (6x) up to 200K tokens.",
    source=lecture("01:42", CHAPTER),
    relation=logic.between(p_out / p_in, 3, 6),
)

prefill_compute_time = Definition(
    "pricing.prefill_compute_time", title="Compute time of a prefill pass",
    statement="Like a decode step, but every sequence contributes ℓ new tokens instead of one.",
    source=lecture("01:43", CHAPTER), defines=prefill_compute_time_q, expr=c_fwd * N_act * B * ell / (n * F),
)
prefill_step_time = Definition(
    "pricing.prefill_step_time", title="Time of a prefill pass",
    statement="The slower of its multiplies and the decode step's memory traffic: the new tokens' KV is "
              "produced and consumed on chip, so the memory time needs no adjustment.",
    source=lecture("01:43", CHAPTER),
    defines=prefill_step_time_q, expr=sp.Max(t_cp, t_mem, evaluate=False),
)
prefill_cost_per_token = Definition(
    "pricing.prefill_cost_per_token", title="Cost per input token",
    statement=r"Chip rental for one prefill pass, shared by the \(B \ell\) tokens it processes.",
    source=lecture("01:43", CHAPTER),
    defines=prefill_cost_per_token_q, expr=p_chip * n * T_pre / (B * ell),
)
prefill_at_compute_floor = Claim(
    "pricing.prefill_at_compute_floor", title="A long prefill is compute-bound and costs the compute floor",
    statement="Once a pass has enough new tokens per sequence that its multiplies outlast its memory "
              r"traffic, the cost per input token is the compute floor \(2 p_{\mathrm{chip}} N_{\mathrm{act}}/F\), "
              "however long the context.",
    source=lecture("01:43-01:44", CHAPTER),
    hypotheses=(logic.ge(t_cp, t_mem),),
    goal=logic.eq(c_pre, p_chip * c_fwd * N_act / F),
    steps=(
        Step(logic.eq(T_pre, t_cp), "the pass is compute-bound", link="implies"),
        Step(logic.eq(c_pre, p_chip * n * t_cp / (B * ell)), "cost is rental times time, per token"),
        Step(logic.eq(c_pre, p_chip * c_fwd * N_act / F), r"the batch, the chips and \(\ell\) cancel"),
    ),
)
decode_memory_bound = Claim(
    "pricing.decode_memory_bound", title="Decode is memory-bound by the output/input price ratio",
    label="Decode is memory-bound",
    statement="If both prices are the same markup on cost, prefill is compute-bound and decode is "
              "memory-bound, then the output/input price ratio equals the decode step's memory time over "
              "its compute time, and decode's MFU is the inverse price ratio.",
    source=lecture("01:41-01:45", CHAPTER),
    hypotheses=(logic.eq(p_out, mu * c_dec), logic.eq(p_in, mu * c_pre),
                logic.ge(t_cp, t_mem), logic.ge(t_mem, t_c)),
    goal=logic.And((logic.eq(p_out / p_in, t_mem / t_c), logic.eq(mfu_q.sym, p_in / p_out))),
    steps=(
        Step(logic.eq(c_pre, p_chip * c_fwd * N_act / F), "prefill sits on the compute floor", link="implies"),
        Step(logic.eq(c_dec, p_chip * n * t_mem / (B * tau)),
             r"decode is memory-bound: its step takes \(t_{\mathrm{mem}}\)"),
        Step(logic.eq(p_out / p_in, t_mem / t_c),
             r"the markup cancels; \(2 N_{\mathrm{act}}/F\) per token is \(t_c n/(B\tau)\)"),
    ),
    uses=(price_tracks_cost, prefill_at_compute_floor, cost_per_token_and_floor),
)
decode_memory_bound_lecture = Claim(
    "pricing.decode_memory_bound_lecture", title="5x prices: a decode step is 5x memory-bound",
    statement="With output at 5x the input price, for whatever batch, context and markup make the prices "
              "cost-proportional, decode spends 5 times its compute time on memory traffic: its MFU is 1/5 "
              "of prefill's.",
    source=lecture("01:44-01:45", CHAPTER),
    hypotheses=(logic.eq(p_out, mu * c_dec), logic.eq(p_in, mu * c_pre),
                logic.ge(t_cp, t_mem), logic.ge(t_mem, t_c)),
    goal=logic.And((logic.eq(t_mem, 5 * t_c), logic.eq(mfu_q.sym, sp.Rational(1, 5)))),
    instance=True, forall=(batch, context, prefill_tokens, price_markup),
    uses=(decode_memory_bound, output_input_price_ratio),
)
decode_memory_bound_at_lecture_point = Claim(
    "pricing.decode_memory_bound_at_lecture_point", title="At 200K the lecture's batch is memory-bound",
    statement="The batch is chosen near the compute/weight balance, yet at the lecture's 2,000 sequences of "
              "200K tokens the KV reads make the decode step memory-bound: 'it still crosses'.",
    source=lecture("01:45", CHAPTER),
    goal=logic.ge(t_mem, t_c),
    instance=True,
    uses=(decode_memory_bound,), tags=INCONSISTENCY,
    notes=r"Catalogue inconsistency 15: a batch near \(B^{*}\) balances compute against the weight reads only; "
          "long-context KV traffic tips the step to memory-bound, consistent with the 5x price ratio.",
)

# ---------------------------------------------------------------------------------------------------
# 2. Prompt-cache prices (#45)
# ---------------------------------------------------------------------------------------------------
price_cache_write_5min = Quantity("price_cache_write_5min", r"p_{\mathrm{w5}}", "USD/token",
                                  "price of writing an input token to the 5-minute prompt cache",
                                  display_unit="USD/Mtoken")
price_cache_write_1h = Quantity("price_cache_write_1h", r"p_{\mathrm{w60}}", "USD/token",
                                "price of writing an input token to the 1-hour prompt cache",
                                display_unit="USD/Mtoken")
price_cache_hit = Quantity("price_cache_hit", r"p_{\mathrm{hit}}", "USD/token",
                           "price of an input token read from the prompt cache", display_unit="USD/Mtoken")
p_w5, p_w60, p_hit = price_cache_write_5min.sym, price_cache_write_1h.sym, price_cache_hit.sym

cache_hit_discount = Claim(
    "pricing.cache_hit_discount", title="Cache hits are 10x cheaper than base input",
    statement="A token's KV can be rematerialized from its token ids (the base input price, $5 per million) "
              "or read back from a cache (a hit, $0.50: 10x cheaper).  Writing to the 5-minute cache costs "
              "$6.25, 1.25x the base price.",
    source=lecture("01:46-01:47:30", CHAPTER),
    goal=logic.And((
        logic.within_percent(p_in / p_hit, 10, 1),
        logic.within_percent(p_w5 / p_in, sp.Rational(5, 4), 1),
        logic.within_percent(p_in, sp.Rational(5, 10**6), 1),
        logic.within_percent(p_w5, sp.Rational(625, 10**8), 1),
    )),
    instance=True, uses=(price_tracks_cost,),
    notes="The 10x is Dwarkesh's recollection; $0.50 is Anthropic's listed hit price.  The 1-hour write, "
          "2x the base price, is not said in the lecture.",
)
cache_hit_vs_write_misreading = Claim(
    "pricing.cache_hit_vs_write_misreading", title="False twin: hits are 10x cheaper than writes",
    statement="One summary says cache hits are 10x cheaper than cache writes.  Against the 5-minute write "
              "they are 12.5x cheaper; the 10x is against base input.",
    source=lecture("01:46", CHAPTER),
    goal=logic.within_percent(p_w5 / p_hit, 10, 1),
    instance=True, expected="refuted", uses=(cache_hit_discount,), tags=INCONSISTENCY,
)
cache_write_pays_after_one_hit = Claim(
    "pricing.cache_write_pays_after_one_hit", title="A 5-minute cache write pays off on the first hit",
    statement="Writing a prompt to the 5-minute cache and reading it once costs $6.75 per million tokens, "
              "less than sending it uncached twice ($10).",
    source=lecture("01:46", CHAPTER, reconstructed=True),
    goal=logic.lt(p_w5 + p_hit, 2 * p_in),
    instance=True, uses=(cache_hit_discount,),
)

# ---------------------------------------------------------------------------------------------------
# 3. Holding versus retrieving KV in a memory tier (#47, #48)
# ---------------------------------------------------------------------------------------------------
tier_capacity = Quantity("tier_capacity", r"C_{X}", "byte", "capacity of one device of a memory tier",
                         display_unit="GB")
tier_bandwidth = Quantity("tier_bandwidth", r"W_{X}", "byte/s", "read bandwidth of one device of a memory tier",
                          display_unit="GB/s")
tier_price = Quantity("tier_price", r"p_{X}", "USD/s", "rental price of one device of a memory tier",
                      display_unit="USD/h")
cache_hold_time = Quantity("cache_hold_time", r"T_{\mathrm{hold}}", "s", "how long a cached prompt is kept")
tier_drain_time_q = Quantity("tier_drain_time", r"T_{X}", "s", "time to read a memory tier's device end to end")
kv_hold_cost_q = Quantity("kv_hold_cost", r"c_{\mathrm{hold}}", "USD/token",
                          "cost of keeping one token's KV in the tier for the hold time")
kv_retrieve_cost_q = Quantity("kv_retrieve_cost", r"c_{\mathrm{get}}", "USD/token",
                              "cost of reading one token's KV back from the tier")
remat_cost_q = Quantity("remat_cost", r"c_{\mathrm{remat}}", "USD/token",
                        "cost of recomputing one token's KV from its token id: a forward pass at the compute floor")
C_X, W_X, p_X, T_hold = tier_capacity.sym, tier_bandwidth.sym, tier_price.sym, cache_hold_time.sym
T_X, c_hold, c_get = tier_drain_time_q.sym, kv_hold_cost_q.sym, kv_retrieve_cost_q.sym

tier_drain_time = Definition(
    "pricing.tier_drain_time", title="Drain time of a memory tier",
    statement="Capacity over bandwidth, as for HBM.",
    source=lecture("01:58", CHAPTER), defines=tier_drain_time_q, expr=C_X / W_X,
)
kv_hold_cost = Definition(
    "pricing.kv_hold_cost", title="Cost of holding a token's KV",
    statement=r"The token occupies \(k/C_{X}\) of the device, paid at the device's rate for the hold time.",
    source=lecture("01:52-01:55", CHAPTER), defines=kv_hold_cost_q, expr=p_X * k * T_hold / C_X,
    domain=logic.gt(k, 0),  # a model with no per-token cache has nothing to hold or read back
)
kv_retrieve_cost = Definition(
    "pricing.kv_retrieve_cost", title="Cost of retrieving a token's KV",
    statement=r"Reading \(k\) bytes uses the device's bandwidth for \(k/W_{X}\) seconds, paid at the device's rate.",
    source=lecture("01:52-01:55", CHAPTER), defines=kv_retrieve_cost_q, expr=p_X * k / W_X,
    domain=logic.gt(k, 0),
)
remat_cost = Definition(
    "pricing.remat_cost", title="Cost of rematerializing a token's KV",
    statement="Recomputing the KV from token ids costs one forward pass per token at the compute floor; "
              "nothing is held.",
    source=lecture("01:52", CHAPTER), defines=remat_cost_q, expr=p_chip * c_fwd * N_act / F,
)
kv_tier_costs = Claim(
    "pricing.kv_tier_costs", title="A tier's cost: retrieval times (1 + hold time over drain time)",
    statement="Keeping a token's KV in a tier and reading it back once costs the retrieval cost times "
              r"\(1 + T_{\mathrm{hold}}/T_{X}\): a tier is cheap for hold times short against its drain time.  "
              "Rematerialization is the limit with nothing to hold and the compute floor to retrieve; HBM "
              "the one with almost nothing to retrieve and the dearest hold.",
    source=lecture("01:52-01:57", CHAPTER),
    goal=logic.eq(c_hold + c_get, c_get * (1 + T_hold / T_X)),
    steps=(
        Step(p_X * k * T_hold / C_X + p_X * k / W_X, "substitute the two costs"),
        Step(p_X * k / W_X * (1 + T_hold * W_X / C_X), "factor out the retrieval cost"),
    ),
    uses=(remat_cost, cost_per_token_and_floor),
)
cache_tier_drain_time = Claim(
    "pricing.cache_tier_drain_time", title="Hold no longer than the drain time", label="Drain-time rule",
    statement="Holding a token's KV costs no more than retrieving it exactly when the hold time is at most "
              "the tier's drain time, with equality when they match: the retrieval time equals the hold time "
              "times the fraction of capacity used.  By equalisation, the cheapest tier for a hold time is the "
              "one whose drain time is about that hold time.",
    source=lecture("01:58-02:03", CHAPTER),
    hypotheses=(logic.gt(k, 0),),
    goal=logic.And((logic.Iff(logic.le(c_hold, c_get), logic.le(T_hold, T_X)),
                    logic.Iff(logic.eq(c_hold, c_get), logic.eq(T_hold, T_X)))),
    steps=(
        Step(logic.le(c_hold, c_get), "suppose holding is no dearer", link="iff"),
        Step(logic.le(p_X * k * T_hold / C_X, p_X * k / W_X), "substitute", link="iff"),
        Step(logic.le(T_hold, C_X / W_X), r"\(p_X k > 0\) cancels", link="iff"),
    ),
    uses=(kv_tier_costs, compute_equalisation),
    notes="The HBM rule of thumb (roofline.hbm_drain_time) and the cache prices (pricing.cache_hit_discount) "
          "motivate the rule; they are about the scenario and not cited as dependencies of this general claim.",
)

ddr_drain_time = Quantity("ddr_drain_time", r"T_{\mathrm{DDR}}", "s", "drain time of host DDR memory")
flash_drain_time = Quantity("flash_drain_time", r"T_{\mathrm{flash}}", "s", "drain time of flash storage")
disk_drain_time = Quantity("disk_drain_time", r"T_{\mathrm{disk}}", "s", "drain time of a spinning disk",
                           display_unit="h")
cache_hold_short = Quantity("cache_hold_short", r"T_{5\,\mathrm{min}}", "s", "hold time of the short prompt cache",
                            display_unit="min")
cache_hold_long = Quantity("cache_hold_long", r"T_{1\,\mathrm{h}}", "s", "hold time of the long prompt cache",
                           display_unit="h")
T_hbm, T_ddr, T_flash, T_disk = drain_time_q.sym, ddr_drain_time.sym, flash_drain_time.sym, disk_drain_time.sym
T5, T60 = cache_hold_short.sym, cache_hold_long.sym


def ratio_gap(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    """max(a, b)/min(a, b): how many times apart two positive times are (the log-free |log(a/b)|)."""
    # unevaluated for symbols (positive times: sympy's pairwise comparisons cost ~5 ms a call), numbers fold
    fold = bool(sp.sympify(a).is_number and sp.sympify(b).is_number)
    return sp.Max(a, b, evaluate=fold) / sp.Min(a, b, evaluate=fold)


def nearest(hold: sp.Expr, tier: sp.Expr, others: tuple[sp.Expr, ...]) -> logic.Formula:
    """``tier``'s drain time is nearer to ``hold`` (as a ratio) than every drain time in ``others``."""
    return logic.And(tuple(logic.lt(ratio_gap(hold, tier), ratio_gap(hold, o)) for o in others))


_ballparks = (logic.between(T_ddr, 1, 10), logic.between(T_flash, 30, 120))
_ballpark_note = ("DDR 'like 1 to 10 seconds' and flash 'on the order of one minute' (taken as 30 s to 2 min) "
                  "are quantified over; HBM is the scenario's drain time, disk the lecture's hour.")
memory_tier_drain_times = Claim(
    "pricing.memory_tier_drain_times", title="Drain times: HBM ms, DDR seconds, flash a minute, disk an hour",
    statement="Each tier down is slower to drain: HBM in about 15 ms, DDR in 1-10 s, flash in about a minute, "
              "spinning disk in about an hour.",
    source=lecture("01:59-02:01", CHAPTER),
    hypotheses=_ballparks,
    goal=logic.And((logic.lt(T_hbm, T_ddr), logic.lt(T_ddr, T_flash), logic.lt(T_flash, T_disk))),
    instance=True, forall=(ddr_drain_time, flash_drain_time),
    notes=_ballpark_note,
)
five_minute_cache_is_flash = Claim(
    "pricing.five_minute_cache_is_flash", title="A 5-minute cache belongs on flash",
    statement="Five minutes is nearer (as a ratio) to flash's drain time than to HBM's, DDR's or a disk's: "
              "the 5-minute tier is flash.",
    source=lecture("02:01-02:03", CHAPTER),
    hypotheses=_ballparks,
    goal=nearest(T5, T_flash, (T_hbm, T_ddr, T_disk)),
    instance=True, forall=(ddr_drain_time, flash_drain_time),
    uses=(cache_tier_drain_time, memory_tier_drain_times), notes=_ballpark_note,
)
one_hour_cache_is_disk = Claim(
    "pricing.one_hour_cache_is_disk", title="A 1-hour cache belongs on spinning disk",
    statement="One hour is nearer to a spinning disk's drain time than to any faster tier's: 'I'm kind of "
              "shocked to see spinning disk'.",
    source=lecture("02:01-02:03", CHAPTER),
    hypotheses=_ballparks,
    goal=nearest(T60, T_disk, (T_hbm, T_ddr, T_flash)),
    instance=True, forall=(ddr_drain_time, flash_drain_time),
    uses=(cache_tier_drain_time, memory_tier_drain_times), notes=_ballpark_note,
)
cache_tiers_hbm_and_ddr = Claim(
    "pricing.cache_tiers_hbm_and_ddr", title="False twin: 5 minutes is HBM, an hour is DDR",
    statement="Dwarkesh's first guess: the 5-minute cache is HBM and the hour is DDR.  HBM drains 20,000 "
              "times faster than five minutes.",
    source=lecture("01:57", CHAPTER),
    hypotheses=_ballparks,
    goal=logic.And((nearest(T5, T_hbm, (T_ddr, T_flash, T_disk)), nearest(T60, T_ddr, (T_hbm, T_flash, T_disk)))),
    instance=True, forall=(ddr_drain_time, flash_drain_time), expected="refuted",
    uses=(cache_tier_drain_time,), tags=INCONSISTENCY,
)
cache_tiers_ddr_and_flash = Claim(
    "pricing.cache_tiers_ddr_and_flash", title="False twin: 5 minutes is DDR, an hour is flash",
    statement="Reiner's intermediate guess, 'one tier down': DDR and flash.  The drain-time rule moves both "
              "one tier further down.",
    source=lecture("01:57", CHAPTER),
    hypotheses=_ballparks,
    goal=logic.And((nearest(T5, T_ddr, (T_hbm, T_flash, T_disk)), nearest(T60, T_flash, (T_hbm, T_ddr, T_disk)))),
    instance=True, forall=(ddr_drain_time, flash_drain_time), expected="refuted",
    uses=(cache_tier_drain_time,), tags=INCONSISTENCY,
)

# The chapter's argument, for part I of the documents (placeholders: derive.model.prose) ------------------
PROSE = (
    "The second half of the sixth chapter reads more of the price list.  If competition keeps prices at costs "
    "times one markup, price ratios are cost ratios.  Output tokens cost 3 to 5 times input tokens, and the "
    "lecture settles on 5.  A prefill pass brings many new tokens per sequence, so it runs at the compute floor "
    "however long the prompt, its KV produced and consumed on chip; a decode step brings one token per "
    "sequence.",
    "{{result:decode_memory_bound}}",
    "The readings above show that this does not contradict the batching chapter, which chose the batch to "
    "balance compute against memory: the critical batch balances compute against the weight reads only, and at "
    "long context the KV reads tip the step back to memory-bound.",
    r"Prompt caching prices the rest of the KV cache's life.  A token's KV can be rematerialized from its ids at "
    r"the base input price ({{value:price_input}}) or read back from a cache after a write "
    r"({{value:price_cache_write_5min}} for five minutes): a hit costs {{value:price_cache_hit}}, ten times less "
    r"than base input and less still than the write, so a summary's 'ten times cheaper than writes' is "
    r"{{verdict:cache_hit_vs_write_misreading}}.  Holding KV in a memory tier occupies a share of the device for "
    r"the hold time, and reading it back a share of its bandwidth; together they cost the retrieval times "
    r"\(1 + T_{\mathrm{hold}}/T_{X}\), where \(T_{X}\), capacity over bandwidth, is the tier's drain time.",
    "{{result:cache_tier_drain_time}}",
    "With drain times of milliseconds for HBM, seconds for DDR, about a minute for flash and about an hour for a "
    "spinning disk, the rule puts each of the conversation's guesses one tier further down (the readings above), "
    "to the lecture's own surprise at spinning disk.",
)
