"""Batch size: the optimum that balances weight reads against matrix multiplies

Chapter 1 of the lecture ("How batch size affects token cost and speed", 00:00:00-00:32:09), second
half.  Weight reads are shared by the whole batch; multiplies are not.  So a batch large enough
makes the step compute-bound, and the threshold depends on the hardware's FLOPs per byte and the
model's sparsity only.

Main claims:
- **Batch optimum** ``batching.batch_optimum``: compute time equals weight-fetch time exactly when
  the batch is B* = R·S (hardware ratio times sparsity, per token of the step); the step is
  compute-bound iff B >= B*.
- ``batching.batch_optimum_lecture``: with the lecture's R = 300 and S = 8, B* = 2,400.

Notation: R = F·q/(2·W), the lecture's dimensionless "about 300" (here in tokens per weight fetch);
S = N_tot/N_act the sparsity factor.

Implementation notes: the KV term is left out of the optimum as on the blackboard; the KV-corrected
optimum is ``batching.kv_raises_batch_optimum``.

References: the lecture, 00:15:16-00:20:40.
"""

from __future__ import annotations

from derive import Claim, Definition, Quantity, Step, lecture, logic

from .roofline import (
    B,
    CHAPTER,
    F,
    N_act,
    N_tot,
    W,
    c_fwd,
    compute_time_q,
    n,
    q,
    tau,
    weight_fetch_time_q,
)

hardware_ratio_q = Quantity("hardware_ratio", "R", "token",
                            "tokens that must share one weight fetch for compute to match memory time: "
                            "F·q/(2·W), the lecture's ~300")
sparsity_q = Quantity("sparsity", "S", "1", "total over active parameters")
critical_batch_q = Quantity("critical_batch", "B^{*}", "seq", "batch at which compute time equals weight-fetch time")

hardware_ratio = Definition(
    "batching.hardware_ratio", title="Hardware ratio",
    statement="Peak FLOPs times bytes per weight over twice the memory bandwidth: how many tokens must "
              "use each weight read to keep the multipliers as busy as the memory.",
    source=lecture("00:15:16", CHAPTER),
    defines=hardware_ratio_q, expr=F * q / (c_fwd * W),
)
sparsity = Definition(
    "batching.sparsity", title="Sparsity factor",
    statement="How many times more parameters the model has than it uses per token.",
    source=lecture("00:17:20", CHAPTER),
    defines=sparsity_q, expr=N_tot / N_act,
)
critical_batch = Definition(
    "batching.critical_batch", title="Critical batch",
    statement="The hardware ratio times the sparsity, in sequences of one new token each.",
    source=lecture("00:17:20", CHAPTER),
    defines=critical_batch_q, expr=hardware_ratio_q.sym * sparsity_q.sym / tau,
)

batch_optimum = Claim(
    "batching.batch_optimum", title="Batch that balances weight reads against multiplies", label="Batch optimum",
    statement="Compute time equals weight-fetch time exactly when the batch equals the hardware ratio "
              "times the sparsity; with a larger batch the step is compute-bound, with a smaller one it "
              "waits on weight reads.  The threshold depends on sparsity, not on model scale.",
    source=lecture("00:17:20-00:20:40", CHAPTER),
    goal=logic.Iff(logic.ge(compute_time_q.sym, weight_fetch_time_q.sym), logic.ge(B, critical_batch_q.sym)),
    steps=(
        Step(logic.eq(compute_time_q.sym, weight_fetch_time_q.sym), "balance point of the two times", link="iff"),
        Step(logic.eq(c_fwd * N_act * B * tau / (n * F), N_tot * q / (n * W)), "substitute the definitions",
             link="iff"),
        Step(logic.eq(B, F * q * N_tot / (c_fwd * W * N_act * tau)), "solve for B (the chip count cancels)",
             link="iff"),
        Step(logic.eq(B, hardware_ratio_q.sym * sparsity_q.sym / tau), "R = Fq/(2W) and S = N_tot/N_act",
             link="iff"),
        Step(logic.eq(B, critical_batch_q.sym), "the definition of B*", link="iff"),
    ),
)

batch_optimum_lecture = Claim(
    "batching.batch_optimum_lecture", title="The lecture's optimum: 300 × 8 = 2,400",
    statement="With a hardware ratio of 300 and the lecture's sparsity of 8 (32 of 256 experts), the "
              "critical batch is 2,400 sequences.",
    source=lecture("00:17:20", CHAPTER),
    goal=logic.within_percent(critical_batch_q.sym, 2400, 1),
    instance=True, uses=(batch_optimum,),
)
