"""Derived against measured: proved floors, achieved ceilings, and the gap between them

Every other chapter computes with spec-sheet peaks.  Real kernels do not reach them: the public record
(and a probe run on one H100) says by how much.  This chapter states what a measurement can and cannot
do to the derivations.  A floor is a theorem that rests on named assumptions, so a measurement below
it contradicts one of them; a measurement above it measures the gap.  ``derive ledger`` evaluates these
claims for every measurement in ``presets/ledger/`` and every measured ceiling in
``presets/measurements/``; ``--measured`` puts the achieved ceilings in place of the peaks.

Main claims:
- **Measured floor** ``gap.roofline_floor_below_measured``: a measured decode step lasts at least the
  roofline step time, because it does at least the roofline's multiplies at no more than the peak
  FLOP/s (``gap.step_does_its_flops``) and reads at least the roofline's bytes at no more than the
  peak bandwidth (``gap.step_reads_its_bytes``).
- ``gap.throughput_per_chip_ceiling``: tokens per second per chip never exceed F/(2·N_act)
  (``gap.tokens_cost_their_flops``).
- ``gap.achieved_ratio``, ``gap.achieved_ratio_from_efficiencies``: the achieved ratio
  R_measured = F_achieved·q/(2·W_achieved) is the spec-sheet ratio times the FLOP/s efficiency over the
  bandwidth efficiency; ``gap.achieved_ratio_below_peak_ratio``: when a chip reaches a smaller share of
  its FLOP/s than of its bandwidth, the real knee sits below the spec sheet's;
  ``gap.achieved_ratio_h100_sxm`` (about 253 against 295) and ``gap.achieved_ratio_gb200_fp8`` (about
  187 against 313) give its value where both ceilings were measured.
- **Knee against sparsity** ``gap.knee_moves_with_sparsity``: an expert layer whose E experts each
  take a balanced share of B tokens routed to k of them is compute-bound from B = R·E/k = R·S on: the
  knee moves with the sparsity as R × S (a dense matrix product is E = k = 1).

Notation: T_meas a measured step time, Θ_meas measured output tokens per second per chip, F_ach and
W_ach achieved dense FLOP/s and HBM read bandwidth, R_ach the achieved ratio, B_layer tokens through
one expert layer, P_e parameters of one expert, E_tot and E_act experts per layer and per token.

Implementation notes: measured values are scenario values like any other; the ledger pins the
measured quantity of each entry and evaluates the other side of the claim under the entry's
scenario.  The assumptions are the physics a measurement could break: a result below a floor names
the one whose relation its numbers violate.  Per-chip claims read their hypotheses from the
measurement files (one source of truth) and state the value they expect by hand.

References: Williams et al. 2009 (roofline); stas00/ml-engineering (MAMF); the measurements in
``presets/measurements/`` and ``presets/ledger/``, each with its source.
"""

from __future__ import annotations

import tomllib
from fractions import Fraction
from pathlib import Path

from derive import Assumption, Claim, Definition, Quantity, Source, derived, logic, paper, si

from .batching import hardware_ratio_q
from .moe import experts_active, experts_total
from .roofline import (
    F,
    N_act,
    W,
    c_fwd,
    compute_time_q,
    embedding_fetch_time_q,
    kv_read_floor_q,
    q,
    step_time_floor_q,
    weight_fetch_floor_q,
)

CHAPTER = "Derived against measured"
PRESETS = Path(__file__).parent / "presets"


ROOFLINE = "Williams, Waterman and Patterson 2009, Roofline: an insightful visual performance model"


def measured(ref: str, detail: str = "") -> Source:
    """A declaration that rests on measurements (``ref``: where they are)."""
    return Source("measured", ref, detail)


def _preset_value(path: Path, name: str) -> Fraction:
    with open(path, "rb") as fh:
        return si(str(tomllib.load(fh)["values"][name]["value"]))


def _hyp(chip: str, measurement: str) -> tuple[logic.Formula, ...]:
    """Hypotheses fixing a chip's peaks (hardware preset) and achieved ceilings (a measurement file)."""
    hw = PRESETS / "hardware" / f"{chip}.toml"
    meas = PRESETS / "measurements" / chip / f"{measurement}.toml"
    return (logic.eq(F, _preset_value(hw, "flops")), logic.eq(W, _preset_value(hw, "hbm_bandwidth")),
            logic.eq(q, _preset_value(hw, "bytes_per_param")),
            logic.eq(achieved_flops.sym, _preset_value(meas, "flops")),
            logic.eq(achieved_hbm_bandwidth.sym, _preset_value(meas, "hbm_bandwidth")))


# Quantities -------------------------------------------------------------------------------------------
measured_step_time = Quantity("measured_step_time", r"T_{\mathrm{meas}}", "s",
                              "wall-clock time of one measured decode step", display_unit="ms")
measured_throughput = Quantity("measured_throughput_per_chip", r"\Theta_{\mathrm{meas}}", "token/s",
                               "measured output tokens per second, per chip serving them")
achieved_flops = Quantity("achieved_flops", r"F_{\mathrm{ach}}", "FLOP/s",
                          "dense FLOP/s a real kernel reached on one chip", display_unit="TFLOP/s")
achieved_hbm_bandwidth = Quantity("achieved_hbm_bandwidth", r"W_{\mathrm{ach}}", "byte/s",
                                  "HBM read bandwidth a real kernel reached on one chip", display_unit="TB/s")
achieved_ratio_q = Quantity("achieved_ratio", r"R_{\mathrm{ach}}", "token",
                            "the hardware ratio at achieved ceilings: F_ach·q/(2·W_ach)")
layer_tokens = Quantity("layer_tokens", r"B_{\mathrm{layer}}", "token", "tokens sent through one expert layer")
expert_params = Quantity("expert_params", r"P_{e}", "param", "parameters of one expert")
expert_compute_time_q = Quantity("expert_layer_compute_time", r"t_{\mathrm{c}}^{\mathrm{E}}", "s",
                                 "time for an expert layer's multiplies at peak FLOP/s", display_unit="ms")
expert_weight_time_q = Quantity("expert_layer_weight_time", r"t_{\mathrm{w}}^{\mathrm{E}}", "s",
                                "time to read every expert's weights once", display_unit="ms")
knee_tokens_q = Quantity("knee_tokens", r"B_{\mathrm{knee}}", "token",
                         "tokens at which an expert layer's compute time equals its weight-read time")

T_meas, Theta = measured_step_time.sym, measured_throughput.sym
F_ach, W_ach, R_ach = achieved_flops.sym, achieved_hbm_bandwidth.sym, achieved_ratio_q.sym
R = hardware_ratio_q.sym
B_layer, P_e, E_tot, E_act = layer_tokens.sym, expert_params.sym, experts_total.sym, experts_active.sym

# Ceilings and the assumptions a measurement could break ------------------------------------------------
peak_flops_is_ceiling = Assumption(
    "gap.peak_flops_is_ceiling", title="Peak FLOP/s is a ceiling",
    statement="No kernel multiplies faster than the chip's peak dense FLOP/s at its precision: an achieved "
              "rate is at most the spec sheet's.",
    source=measured("stas00/ml-engineering:compute/accelerator/README.md (MAMF table)",
                    "the peak is the clock times the tensor units' width; measured kernels reach 51-87 % of it"),
    relation=logic.le(F_ach, F),
)
peak_bandwidth_is_ceiling = Assumption(
    "gap.peak_bandwidth_is_ceiling", title="Peak HBM bandwidth is a ceiling",
    statement="No kernel reads HBM faster than the memory clock times the bus width: an achieved read "
              "bandwidth is at most the spec sheet's.",
    source=measured("stas00/ml-engineering:compute/accelerator/README.md (How to calculate theoretical "
                    "memory bandwidth)", "bandwidth = memory clock x bus width x 2"),
    relation=logic.le(W_ach, W),
)
step_does_its_flops = Assumption(
    "gap.step_does_its_flops", title="A measured step does the roofline's multiplies",
    statement="A measured decode step multiplies every active weight by every sequence's new token (2 FLOPs "
              "each) at no more than the peak FLOP/s of its chips, so it lasts at least the compute time.  "
              "Speculative decoding (several tokens per step) or weights skipped at run time would break it.",
    source=paper(ROOFLINE, "applied to a decode step"),
    relation=logic.ge(T_meas, compute_time_q.sym),
)
step_reads_its_bytes = Assumption(
    "gap.step_reads_its_bytes", title="A measured step reads the roofline's bytes",
    statement="A measured decode step reads at least the weights one token multiplies (q bytes each: its routed "
              "experts, the shared ones and every dense weight, whatever the routing of the others), every "
              "sequence's KV cache (less what sparse attention leaves unread) and each new token's embedding row "
              "from HBM at least once, at no more than "
              "the peak bandwidth of its chips.  Weights stored in fewer bytes than the scenario says, or served "
              "from a cache larger than the weights, would break it.",
    source=paper(ROOFLINE, "applied to a decode step"),
    relation=logic.ge(T_meas, weight_fetch_floor_q.sym + kv_read_floor_q.sym + embedding_fetch_time_q.sym),
)
tokens_cost_their_flops = Assumption(
    "gap.tokens_cost_their_flops", title="Each output token costs its multiplies",
    statement=r"Every token a server outputs took at least \(2 N_{\mathrm{act}}\) FLOPs on some chip, done at no "
              r"more than the peak FLOP/s, so the tokens per second of one chip times \(2 N_{\mathrm{act}}\) is at "
              r"most \(F\).",
    source=paper("Kaplan et al. 2020, Scaling Laws for Neural Language Models", "C_forward = 2N, at most F per second"),
    relation=logic.le(Theta * c_fwd * N_act, F),
)

# The floor and the ceiling a measurement is held to --------------------------------------------------
roofline_floor_below_measured = Claim(
    "gap.roofline_floor_below_measured", title="The roofline step time is a floor on any measured step",
    label="Measured floor",
    statement="Whatever the software and the routing, a measured decode step lasts at least the strict floor "
              "of the roofline step time (compute, or the fewest bytes any routing reads, at the chips' peaks); a "
              "measurement below it contradicts one of the two assumptions it rests on, and the ratio above it is "
              "the gap software could close.",
    source=paper(ROOFLINE, "a lower bound; derive ledger checks it against every decode measurement"),
    goal=logic.ge(T_meas, step_time_floor_q.sym),
    uses=(step_does_its_flops, step_reads_its_bytes),
)
throughput_per_chip_ceiling = Claim(
    "gap.throughput_per_chip_ceiling", title="Tokens per second per chip are at most peak FLOP/s over a token's FLOPs",
    statement="However large the batch, one chip cannot output more tokens per second than its peak FLOP/s "
              r"over the FLOPs of one token, \(2 N_{\mathrm{act}}\).",
    source=paper(ROOFLINE, "the compute side of the roofline, per token"),
    goal=logic.le(Theta, F / (c_fwd * N_act)),
    uses=(tokens_cost_their_flops,),
)

# The achieved ratio --------------------------------------------------------------------------------------
achieved_ratio = Definition(
    "gap.achieved_ratio", title="Achieved hardware ratio",
    statement="The hardware ratio at the ceilings a real kernel reached: achieved FLOP/s times bytes per "
              "weight over twice the achieved HBM bandwidth.  It is where a real weight-streaming matrix "
              "product turns compute-bound.",
    source=derived("batching.hardware_ratio at measured F and W"),
    defines=achieved_ratio_q, expr=F_ach * q / (c_fwd * W_ach),
)
achieved_ratio_from_efficiencies = Claim(
    "gap.achieved_ratio_from_efficiencies", title="The achieved ratio is the peak ratio times two efficiencies",
    statement=r"\(R_{\mathrm{ach}} = R\,(F_{\mathrm{ach}}/F)/(W_{\mathrm{ach}}/W)\): the spec-sheet ratio scaled "
              "by the share of FLOP/s a kernel "
              "reaches over the share of bandwidth it reaches.",
    source=derived("algebra on the two definitions"),
    goal=logic.eq(R_ach, R * (F_ach / F) / (W_ach / W)),
)
achieved_ratio_below_peak_ratio = Claim(
    "gap.achieved_ratio_below_peak_ratio", title="The real knee sits below the spec sheet's",
    statement="When a chip reaches a smaller share of its peak FLOP/s than of its peak bandwidth (as every "
              "GPU measured here does), the achieved ratio is below the spec-sheet ratio: a real matrix product "
              "turns compute-bound at a smaller batch than the spec sheet implies.",
    source=derived("from gap.achieved_ratio_from_efficiencies"),
    hypotheses=(logic.le(F_ach / F, W_ach / W),),
    goal=logic.le(R_ach, R),
    uses=(achieved_ratio_from_efficiencies,),
)
achieved_ratio_h100_sxm = Claim(
    "gap.achieved_ratio_h100_sxm", title="H100 SXM: achieved ratio about 253, against 295 on paper",
    statement="Measured on one H100 SXM (770 TFLOP/s bf16 and 3.05 TB/s read, 78 % and 91 % of the peaks), "
              "the achieved ratio is about 253 tokens against the spec sheet's 295: the knee of a "
              "weight-streaming matrix product moves down by about 14 %.",
    source=measured("presets/measurements/h100-sxm/probe-2026-11-23.toml (shared/measurements, 2026-11-23)",
                    "peaks from presets/hardware/h100-sxm.toml"),
    hypotheses=_hyp("h100-sxm", "probe-2026-11-23"),
    goal=logic.And((logic.within_percent(R_ach, 253, 1), logic.lt(R_ach, R))),
    uses=(achieved_ratio_below_peak_ratio,),
)
achieved_ratio_gb200_fp8 = Claim(
    "gap.achieved_ratio_gb200_fp8", title="GB200 (FP8): achieved ratio about 187, against 313 on paper",
    statement="Azure measured 2,744 TFLOP/s FP8 and 7.35 TB/s on a GB200 (55 % and 92 % of the peaks): at one "
              "byte per weight the achieved ratio is about 187 tokens against the spec sheet's 313.",
    source=measured("presets/measurements/gb200-nvl72-fp8/azure-nd-gb200-v6.toml (Azure HPC blog, 2025-03)",
                    "peaks from presets/hardware/gb200-nvl72-fp8.toml"),
    hypotheses=_hyp("gb200-nvl72-fp8", "azure-nd-gb200-v6"),
    goal=logic.And((logic.within_percent(R_ach, 187, 1), logic.lt(R_ach, R))),
    uses=(achieved_ratio_below_peak_ratio,),
)

# The knee of an expert layer -------------------------------------------------------------------------
expert_layer_compute_time = Definition(
    "gap.expert_layer_compute_time", title="Compute time of an expert layer",
    statement=r"\(B_{\mathrm{layer}}\) tokens each go to \(E_{\mathrm{act}}\) experts of \(P_{e}\) parameters: "
              r"\(2 B_{\mathrm{layer}} E_{\mathrm{act}} P_{e}\) FLOPs at the peak FLOP/s.",
    source=derived("the expert-layer benchmark of shared/measurements (balanced routing)"),
    defines=expert_compute_time_q, expr=c_fwd * B_layer * E_act * P_e / F,
)
expert_layer_weight_time = Definition(
    "gap.expert_layer_weight_time", title="Weight-read time of an expert layer",
    statement=r"Every one of the \(E_{\mathrm{tot}}\) experts is read once per call, \(q\) bytes per parameter.",
    source=derived("the expert-layer benchmark of shared/measurements (balanced routing)"),
    defines=expert_weight_time_q, expr=E_tot * P_e * q / W,
)
knee_tokens = Definition(
    "gap.knee_tokens", title="Knee of an expert layer",
    statement=r"The hardware ratio times the layer's sparsity \(E_{\mathrm{tot}}/E_{\mathrm{act}}\): "
              r"\(R \times S\) tokens.",
    source=derived("batching.batch_optimum for one layer"),
    defines=knee_tokens_q, expr=R * E_tot / E_act,
)
knee_moves_with_sparsity = Claim(
    "gap.knee_moves_with_sparsity", title="The knee moves with sparsity as R × S", label="Knee against sparsity",
    statement="An expert layer's compute time equals its weight-read time exactly when it receives "
              r"\(R E_{\mathrm{tot}}/E_{\mathrm{act}}\) tokens: the knee of a dense matrix product "
              r"(\(E_{\mathrm{tot}} = E_{\mathrm{act}} = 1\)) is \(R\), and a layer of sparsity "
              r"\(S = E_{\mathrm{tot}}/E_{\mathrm{act}}\) needs \(S\) times as many tokens to become compute-bound.",
    source=measured("presets/ledger/h100-sxm-probe-2026-11-23.toml (knees)",
                    "the lecture's R x S for one layer; measured 4.0x the dense knee at S = 4, 13.2-13.5x at S = 16"),
    goal=logic.Iff(logic.eq(expert_compute_time_q.sym, expert_weight_time_q.sym),
                   logic.eq(B_layer, knee_tokens_q.sym)),
)

# The chapter's argument, for part I of the documents (placeholders: derive.model.prose) ------------------
PROSE = (
    "This chapter is not in the lecture.  Every other chapter reasons with spec-sheet peaks, which real kernels "
    "do not reach, and a measurement cannot refute a proved floor: it can only contradict an assumption the "
    "floor rests on.  A measured decode step does at least the roofline's multiplies at no more than peak FLOP/s "
    "and reads at least the roofline's bytes at no more than peak bandwidth.",
    "{{result:roofline_floor_below_measured}}",
    "A measurement below the floor names the assumption that broke (several tokens per step, say, or weights "
    "stored in fewer bytes than assumed).  Kernels reach a smaller share of peak FLOP/s than of peak bandwidth, "
    "so the achieved hardware ratio, where a weight-streaming matrix product really turns compute-bound, sits "
    "below the spec sheet's: the measured H100 and GB200 ceilings both lower it.  The ledger command lists "
    "every published or probed measurement against its floor, and the measured option rebuilds this document "
    "with achieved ceilings in place of the peaks.",
    "The probe also tests the batching chapter's formula one layer at a time, on expert layers of growing "
    "sparsity.",
    "{{result:knee_moves_with_sparsity}}",
    "For the scenario's hardware and a DeepSeek-like layer the knee is {{value:knee_tokens}}.  The probe's "
    "measured knees move with the sparsity as predicted at moderate sparsity and somewhat less at the highest it "
    "tried (the claim's source lists them).",
)
