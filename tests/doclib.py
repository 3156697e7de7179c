"""A small fixed library for document tests (golden files): two topics, every kind of declaration,
a refuted false twin, an inconsistency, an instance claim and prose full of special characters.
It is deliberately not the lecture, which keeps changing."""

from __future__ import annotations

import sympy as sp

from derive import Assumption, Claim, Definition, Quantity, Step, lecture, logic, paper, spec
from derive.documents.figures import Curve, Figure
from derive.model.declarations import Topic
from derive.model.library import Library
from derive.model.scenario import Scenario, ScenarioValue

work = Quantity("work", "W_{\\mathrm{op}}", "FLOP/seq", "floating-point operations of one job",
                display_unit="TFLOP/seq")
rate = Quantity("rate", "R", "FLOP/s", "peak rate of the machine", display_unit="TFLOP/s")
size = Quantity("size", "S", "byte", "bytes the job reads", display_unit="GB")
bandwidth = Quantity("bandwidth", "W", "byte/s", "memory bandwidth", display_unit="TB/s")
price = Quantity("price", "p", "USD/s", "rental price of the machine", display_unit="USD/h")
jobs = Quantity("jobs", "J", "seq", "jobs that share one read of the data")
two = Quantity("two", "c_{2}", "1", "a constant of the accounting", value=2,
               source=paper("Doe & Roe 2020, \"On #2\"", "eq. 3"))

run_time_q = Quantity("run_time", "t_{\\mathrm{run}}", "s", "time to do the work at peak rate", display_unit="ms")
load_time_q = Quantity("load_time", "t_{\\mathrm{load}}", "s", "time to read the data once", display_unit="ms")
total_time_q = Quantity("total_time", "T", "s", "time of the job on the roofline", display_unit="ms")
cost_q = Quantity("cost", "C", "USD", "cost of one job")
intensity_q = Quantity("intensity", "R/W", "FLOP/byte", "operations per byte the machine affords")
balance_jobs_q = Quantity("balance_jobs", "J^{*}", "seq", "jobs at which work and reads balance")

W_, R_, S_, BW, P_, J_ = work.sym, rate.sym, size.sym, bandwidth.sym, price.sym, jobs.sym

CH = "Chapter 1: time & money"

run_time = Definition("timing.run_time", title="Run time", statement="Work over the peak rate.",
                      source=lecture("00:01", CH), defines=run_time_q, expr=J_ * W_ / (two.sym * R_))
load_time = Definition("timing.load_time", title="Load time", statement="Bytes over bandwidth; read once for all jobs.",
                       source=lecture("00:02", CH), defines=load_time_q, expr=S_ / BW)
total_time = Definition("timing.total_time", title="Total time",
                        statement="The slower of the two jobs, with perfect overlap (the *roofline*).",
                        source=lecture("00:03", CH), defines=total_time_q, expr=sp.Max(run_time_q.sym, load_time_q.sym))
intensity = Definition("timing.intensity", title="Machine intensity", statement="Rate over bandwidth.",
                       source=lecture("00:04", CH), defines=intensity_q, expr=R_ / BW)
balance_jobs = Definition("timing.balance_jobs", title="Balance point",
                          statement="Jobs at which run time equals load time.", source=lecture("00:05", CH),
                          defines=balance_jobs_q, expr=two.sym * R_ * S_ / (BW * W_))

intensity_range = Assumption(
    "timing.intensity_range", title="Machines afford 100 to 1,000 FLOP per byte",
    statement="Spec sheets put R/W between 100 and 1,000 (50% either way of ~300 — roughly).",
    source=spec("vendor sheets, \"peak\" numbers", "2024-01"),
    relation=logic.between(intensity_q.sym, 100, 1000),
)
qualitative = Assumption(
    "timing.reads_dominate", title="Reads dominate at small batch",
    statement="A cited fact without a formula: at one job, reading dominates.",
    source=lecture("00:06", CH), tags=("inconsistency",),
)

total_ge_run = Claim(
    "timing.total_ge_run", title="A job takes at least its run time", label="Run-time floor",
    statement="Whatever the data size, the total time is never below the run time.",
    source=lecture("00:07", CH), goal=logic.ge(total_time_q.sym, run_time_q.sym),
)
total_le_run = Claim(
    "timing.total_le_run", title="False twin: a job takes at most its run time",
    statement="Deliberately false: reads can take longer than the work.",
    source=lecture("00:08", CH, reconstructed=True), goal=logic.le(total_time_q.sym, run_time_q.sym),
    expected="refuted", notes="Kept to show the engine finds counterexamples.",
)
cost_identity = Claim(
    "money.cost_identity", title="Cost is price times the slower time",
    statement="Paying p per second for the total time.",
    source=lecture("00:09", "Chapter 2"),
    goal=logic.eq(P_ * total_time_q.sym, P_ * sp.Max(J_ * W_ / (two.sym * R_), S_ / BW)),
    steps=(
        Step(P_ * sp.Max(run_time_q.sym, load_time_q.sym), "the definition of T"),
        Step(P_ * sp.Max(J_ * W_ / (two.sym * R_), S_ / BW), "substitute both times"),
    ),
)
balance = Claim(
    "money.balance", title="Work balances reads at J*", label="Balance point",
    statement="Run time equals load time exactly when the number of jobs is J*.",
    source=lecture("00:10", "Chapter 2"),
    goal=logic.Iff(logic.eq(run_time_q.sym, load_time_q.sym), logic.eq(J_, balance_jobs_q.sym)),
    steps=(
        Step(logic.eq(run_time_q.sym, load_time_q.sym), "balance", link="iff"),
        Step(logic.eq(J_ * W_ / (two.sym * R_), S_ / BW), "substitute | the definitions", link="iff"),
        Step(logic.eq(J_, two.sym * R_ * S_ / (BW * W_)), "solve for J", link="iff"),
    ),
    uses=(total_ge_run,),
)
run_time_example = Claim(
    "money.run_time_example", title="The example batch runs in about 16 ms",
    statement="Eight jobs of 4 TFLOP each at 1,000 TFLOP/s (two FLOP per step) run in 16 ms (within 1%).",
    source=lecture("00:11", "Chapter 2"), instance=True,
    goal=logic.within_percent(run_time_q.sym, sp.Rational(16, 1000), 1),
)
blocked_claim = Claim(
    "money.blocked_by_twin", title="Rests on the false twin",
    statement="Its own step holds, but it cites a refuted claim.",
    source=lecture("00:12", "Chapter 2"), goal=logic.ge(total_time_q.sym, load_time_q.sym),
    uses=(total_le_run,), expected="blocked",
)
intensity_claim = Claim(
    "money.intensity_positive", title="Intensity exceeds 50", statement="Follows from the cited range.",
    source=lecture("00:13", "Chapter 2"), goal=logic.gt(intensity_q.sym, 50), uses=(intensity_range,),
)

TIMING = Topic(
    "timing", "Timing of one job", "How long a job takes: work at peak rate, reads at full bandwidth, "
    "and the slower of the two.",
    (work, rate, size, bandwidth, jobs, two, run_time_q, load_time_q, total_time_q, intensity_q, balance_jobs_q),
    (run_time, load_time, total_time, intensity, balance_jobs, intensity_range, qualitative, total_ge_run,
     total_le_run),
    prose=(
        "The first topic's argument, with special characters a renderer must escape (50% & more, $2/h, "
        "a_b, <tags>, {braces}, #1): at the fixture's numbers the run takes {{value:run_time}} and the load "
        "{{value:load_time}}, so the roofline \\(T = \\max(t_{\\mathrm{run}}, t_{\\mathrm{load}})\\) gives "
        "{{value:total_time}}.",
        "{{result:total_ge_run}}",
        "The floor is {{verdict:total_ge_run}}; its false twin is {{verdict:timing.total_le_run}}.",
        "{{figure:time_vs_jobs}}",
        "A closing paragraph after the figure.",
    ),
)
MONEY = Topic(
    "money", "Money", "What the time costs, and where work balances reads (50% of the 'story').",
    (price, cost_q),
    (cost_identity, balance, run_time_example, blocked_claim, intensity_claim),
)

FIGURES = [
    Figure("time_vs_jobs", "Time against jobs", x=jobs, x_range=(1, 1000), log_x=True,
           curves=(Curve(run_time_q, "run"), Curve(load_time_q, "load"), Curve(total_time_q, "total", "--")),
           marks=(("J*", balance_jobs_q), ("load floor", load_time_q)), crossings=((0, 1),),
           caption="Run time grows with jobs; the load time does not.", topic="timing"),
    Figure("cost_vs_size", "Cost against size", x=size, x_range=(1, 100), curves=("price * total_time",),
           y_unit="USD", caption="Needs a price.", topic="money"),
    Figure("missing_quantity", "A figure of a quantity the library lacks", x=jobs, x_range=(1, 10),
           curves=("no_such_quantity",)),
]


def library() -> Library:
    return Library([TIMING, MONEY], figures=list(FIGURES), title="A small library: time & money")


def _v(name: str, value, source: str) -> tuple[str, ScenarioValue]:
    return name, ScenarioValue(name, sp.Rational(value), source, "2024-01", "scenario fixture")


def scenario(with_price: bool = False) -> Scenario:
    values = dict([
        _v("work", 4 * 10**12, "the example: 4 TFLOP per job"),
        _v("rate", 10**15, "vendor sheet (1,000 TFLOP/s; 50% of peak is typical) & more"),
        _v("size", 200 * 10**9, "the model: 200 GB of weights"),
        _v("bandwidth", 2 * 10**12, "vendor sheet: 2 TB/s, see https://example.com/a_b#c"),
        _v("jobs", 8, "a batch of 8"),
    ])
    if with_price:
        values.update([_v("price", sp.Rational(2, 3600), "$2/h")])
    return Scenario("fixture", values, (), frozenset(), ("scenario fixture",))
