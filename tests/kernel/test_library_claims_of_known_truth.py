"""Claims of known truth written through the public library API, as an adversarial user writes them: each true
claim with a false twin whose counterexample is re-checked here by plain exact arithmetic (no kernel code).
Classes: definitions with domains in chains, derived quantities' declarations, within_factor and within_percent
with real targets, Piecewise whose later conditions have no value, floor/ceiling/Mod with negative and rational
arguments, integer layouts, roots of possibly negative bases, equalities among hypotheses, contradictory
assumptions, strict against non-strict at a boundary, huge and tiny numbers, logical connectives.  ``ideal`` is
the verdict a perfect checker gives; ``unknown`` is accepted only where the case says so."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
import sympy as sp

from derive import Claim, Definition, Quantity, derived, logic
from derive.checking.checker import Checker
from derive.model.declarations import Topic
from derive.model.library import Library
from derive.model.scenario import Scenario, ScenarioValue

R = sp.Rational
SRC = derived("claims of known truth")


def Q(name, domain="positive", integer=False):  # noqa: N802 - reads like the constructor it wraps
    return Quantity(name, name, "1", name, domain=domain, integer=integer)


def D(q, expr, domain=None):  # noqa: N802
    return Definition(f"t.def_{q.name}", title=q.name, statement="s", source=SRC, defines=q, expr=expr, domain=domain)


a, b, c, x, y, t, w = Q("a"), Q("b"), Q("c"), Q("x", "real"), Q("y", "real"), Q("t", "real"), Q("w", "nonnegative")
n, m, z = Q("n", integer=True), Q("m", integer=True), Q("z", "real", integer=True)
A, B, C, X, Y, T, W, N, M, Z = (q.sym for q in (a, b, c, x, y, t, w, n, m, z))
cb = Q("cb")  # 1/(b - a), only where a < b
cd = Q("cd", "real")  # c*cb - 1, only where c > 1: a chain through cb
e = Q("e", "real")  # a - b
dd = Q("dd")  # sqrt(e), only where e >= 0 (declared positive: not at a = b)
fr = Q("fr", "fraction")  # a/(a + b)
QUANTITIES = (a, b, c, x, y, t, w, n, m, z, cb, cd, e, dd, fr)
DEFINITIONS = (D(cb, 1 / (B - A), logic.lt(A, B)), D(cd, C * cb.sym - 1, logic.gt(C, 1)), D(e, A - B),
               D(dd, sp.sqrt(e.sym), logic.ge(e.sym, 0)), D(fr, A / (A + B)))


def cd_of(p):
    return p["c"] / (p["b"] - p["a"]) - 1 if p["a"] < p["b"] and p["c"] > 1 else None


def later(v):  # Piecewise((5, t <= 0), (1, 1/t > 1), (2, True)) read in order
    return 5 if v <= 0 else (1 if 1 / v > 1 else 2)


LATER = sp.Piecewise((5, T <= 0), (1, 1 / T > 1), (2, True))


@dataclass
class Case:
    id: str
    goal: object
    ideal: str
    hyps: tuple = ()
    values: dict | None = None  # an instance claim at these values
    # the claim at a point, by plain exact arithmetic: True (hypotheses hold, goal holds), False (hypotheses
    # hold, goal fails) or None (outside the hypotheses or the definitions): a counterexample must give False
    truth: Callable[[dict], object] | None = None
    unknown_ok: bool = False


def within(v, target, f):
    lo, hi = sorted([target / f, target * f])
    return lo <= v <= hi


CASES = [
    # definitions with domains in chains
    Case("chain_pos", logic.gt(cd.sym, -1), "proved"),
    Case("chain_pos_twin", logic.gt(cd.sym, 0), "refuted", truth=lambda p: None if cd_of(p) is None else cd_of(p) > 0),
    Case("chain_hyp", logic.gt(B, A), "proved", hyps=(logic.ge(cd.sym, -100),)),
    Case("chain_not_used", logic.lt(A, B), "refuted", truth=lambda p: p["a"] < p["b"]),
    Case("chain_in", logic.gt(cd.sym, 2), "proved", values={"a": 1, "b": 2, "c": 4}),
    Case("chain_in_twin", logic.gt(cd.sym, 3), "refuted", values={"a": 1, "b": 2, "c": 4}),
    Case("chain_out_c", logic.gt(cd.sym, 0), "inconsistent", values={"a": 1, "b": 2, "c": R(1, 2)}),
    Case("chain_out_ab", logic.lt(cd.sym, 0), "inconsistent", values={"a": 2, "b": 1, "c": 4}),
    Case("chain_pole", logic.gt(cd.sym, 0), "unknown", values={"a": 1, "b": 1, "c": 4}),
    Case("root_domain", logic.ge(dd.sym, 1), "proved", values={"a": 5, "b": 1}),
    Case("root_domain_twin", logic.gt(dd.sym, 2), "refuted", values={"a": 5, "b": 1}),
    Case("root_out", logic.ge(dd.sym, 1), "unknown", values={"a": 1, "b": 2}),  # sqrt(-1): no value to read
    Case("root_declared", logic.ge(dd.sym, 0), "unknown", values={"a": 1, "b": 1}),  # dd = 0 breaks "positive"
    # a derived fraction: both ends are side conditions
    Case("fraction_le", logic.le(fr.sym, 1), "proved"),
    Case("fraction_twin", logic.lt(fr.sym, R(1, 2)), "refuted", truth=lambda p: p["a"] / (p["a"] + p["b"]) < R(1, 2)),
    # within_factor / within_percent with real and negative targets
    Case("within_self_real", logic.within_factor(X, X, 2), "proved"),
    Case("within_half_real", logic.within_factor(X / 2, X, 2), "proved"),
    Case("within_three_real", logic.within_factor(3 * X, X, 2), "refuted",
         truth=lambda p: within(3 * p["x"], p["x"], 2)),
    Case("within_minus", logic.within_factor(-X, X, 2), "refuted", truth=lambda p: within(-p["x"], p["x"], 2)),
    Case("within_negative_point", logic.within_factor(Y, X, 2), "proved", values={"x": -4, "y": -8}),
    Case("within_negative_twin", logic.within_factor(Y, X, 2), "refuted", values={"x": -4, "y": -9}),
    Case("within_inverse_factor", logic.within_factor(Y, X, R(1, 2)), "proved", values={"x": -4, "y": -2}),
    Case("percent_negative", logic.within_percent(Y, X, 5), "proved", values={"x": -100, "y": -95}),
    Case("percent_negative_twin", logic.within_percent(Y, X, 5), "refuted", values={"x": -100, "y": -94}),
    Case("percent_general", logic.within_percent(X * R(101, 100), X, 1), "proved"),
    Case("percent_general_twin", logic.within_percent(X * R(102, 100), X, 1), "refuted",
         truth=lambda p: abs(p["x"] * R(2, 100)) <= abs(p["x"]) / 100),
    # Piecewise whose later conditions have no value at the point
    Case("later_at_zero", logic.ge(LATER, 5), "proved", values={"t": 0}),
    Case("later_at_zero_twin", logic.gt(LATER, 5), "refuted", values={"t": 0}),
    Case("later_general", logic.ge(LATER, 1), "proved"),
    Case("later_general_twin", logic.ge(LATER, 2), "refuted", truth=lambda p: later(p["t"]) >= 2),
    Case("later_must_read", logic.ge(sp.Piecewise((5, T < 0), (1, 1 / T > 1), (2, True)), 1), "unknown",
         values={"t": 0}),
    Case("later_log", logic.eq(sp.Piecewise((5, T <= 0), (1, sp.log(T) > 1), (2, True)), 5), "proved",
         values={"t": -1}),
    Case("later_eq_condition", logic.eq(sp.Piecewise((7, sp.Eq(T, 0)), (1 / T, True)), 7), "proved", values={"t": 0}),
    Case("clamp", logic.le(sp.Min(sp.Max(T, -1), 1), 1), "proved"),
    Case("clamp_twin", logic.lt(sp.Min(sp.Max(T, -1), 1), 1), "refuted", truth=lambda p: min(max(p["t"], -1), 1) < 1),
    Case("triangle", logic.le(sp.Abs(X + Y), sp.Abs(X) + sp.Abs(Y)), "proved"),
    Case("triangle_twin", logic.lt(sp.Abs(X + Y), sp.Abs(X) + sp.Abs(Y)), "refuted",
         truth=lambda p: abs(p["x"] + p["y"]) < abs(p["x"]) + abs(p["y"])),
    # floor, ceiling and Mod with negative and rational arguments; a modulus that may be zero
    Case("ceiling_floor", logic.eq(sp.ceiling(T), -sp.floor(-T)), "proved"),
    Case("ceiling_floor_twin", logic.eq(sp.ceiling(T), sp.floor(T) + 1), "refuted",
         truth=lambda p: sp.ceiling(p["t"]) == sp.floor(p["t"]) + 1),
    Case("mod_negative_divisor", logic.le(sp.Mod(T, -3), 0), "proved"),
    Case("mod_negative_twin", logic.ge(sp.Mod(T, -3), 0), "refuted", truth=lambda p: sp.Mod(p["t"], -3) >= 0),
    Case("mod_point", logic.eq(sp.Mod(X, Y), R(-3, 2)), "proved", values={"x": R(-7, 2), "y": -2}),  # y's sign
    Case("mod_point_twin", logic.eq(sp.Mod(X, Y), R(1, 2)), "refuted", values={"x": R(-7, 2), "y": -2}),
    Case("mod_by_zero", logic.ge(sp.Mod(X, Y), 0), "unknown", values={"x": 7, "y": 0}),
    Case("mod_by_symbol", logic.ge(sp.Mod(X, Y), 0), "refuted",
         truth=lambda p: None if p["y"] == 0 else sp.Mod(p["x"], p["y"]) >= 0),
    # integer layouts
    Case("pad_to_eight", logic.lt(8 * sp.ceiling(N / 8), N + 8), "proved"),
    Case("pad_to_eight_twin", logic.lt(8 * sp.ceiling(N / 8), N + 7), "refuted",
         truth=lambda p: 8 * sp.ceiling(p["n"] / 8) < p["n"] + 7),
    Case("ceiling_as_bounds", logic.le(8 * Z - 2 * N, 6), "proved",
         hyps=(logic.ge(8 * Z, 2 * N), logic.lt(8 * Z, 2 * N + 8))),
    Case("ceiling_as_bounds_twin", logic.le(8 * Z - 2 * N, 5), "refuted",
         hyps=(logic.ge(8 * Z, 2 * N), logic.lt(8 * Z, 2 * N + 8)),
         truth=lambda p: (8 * p["z"] - 2 * p["n"] <= 5) if 2 * p["n"] <= 8 * p["z"] < 2 * p["n"] + 8 else None),
    Case("divides_quarter", logic.ge(N, 4), "proved", hyps=(logic.IsInteger(N / 4),)),
    Case("divides_quarter_twin", logic.IsInteger(N / 8), "refuted", hyps=(logic.IsInteger(N / 4),),
         truth=lambda p: (p["n"] / 8).q == 1 if (p["n"] / 4).q == 1 else None),
    Case("product_mod", logic.eq(sp.Mod(N * M, M), 0), "proved"),
    Case("product_mod_twin", logic.eq(sp.Mod(N * M, 2 * M), 0), "refuted",
         truth=lambda p: sp.Mod(p["n"] * p["m"], 2 * p["m"]) == 0),
    Case("huge_ceiling", logic.eq(sp.ceiling(N / M), sp.ceiling(R(2**64 + 3, 3))), "proved",
         values={"n": 2**64 + 3, "m": 3}),
    Case("huge_ceiling_twin", logic.eq(sp.ceiling(N / M), sp.ceiling(R(2**64 + 3, 3)) + 1), "refuted",
         values={"n": 2**64 + 3, "m": 3}),
    Case("no_half_integer", logic.ge(N, 2), "inconsistent", hyps=(logic.eq(2 * N, 7),)),
    # roots of possibly negative bases, reciprocals
    Case("cube_root_bound", logic.le(X ** R(1, 3), 2), "refuted", hyps=(logic.le(X, 9),),
         truth=lambda p: (p["x"] ** R(1, 3) <= 2) if 0 <= p["x"] <= 9 else None),
    Case("cube_root_negative_point", logic.ge(X ** R(1, 3), -100), "unknown", values={"x": -8}, unknown_ok=True),
    Case("root_product", logic.eq(sp.sqrt(A * B), sp.sqrt(A) * sp.sqrt(B)), "proved"),
    Case("abs_root", logic.eq(sp.sqrt(X**2), sp.Abs(X)), "proved"),
    Case("abs_root_twin", logic.eq(sp.sqrt(X**2), X), "refuted", truth=lambda p: abs(p["x"]) == p["x"]),
    Case("reciprocal_point", logic.eq(X ** -1, R(-1, 8)), "proved", values={"x": -8}),
    Case("reciprocal_zero", logic.gt(X ** -1, 0), "unknown", values={"x": 0}),
    # equalities among hypotheses
    Case("equality_chain", logic.eq(A, 4 * C), "proved", hyps=(logic.eq(A, 2 * B), logic.eq(B, 2 * C))),
    Case("equality_chain_twin", logic.eq(A, 3 * C), "refuted", hyps=(logic.eq(A, 2 * B), logic.eq(B, 2 * C)),
         truth=lambda p: (p["a"] == 3 * p["c"]) if p["a"] == 2 * p["b"] and p["b"] == 2 * p["c"] else None),
    Case("equality_against_domain", logic.ge(A, 0), "inconsistent", hyps=(logic.eq(A, 2 * B), logic.eq(B, -1))),
    Case("equality_against_bound", logic.ge(X, 100), "inconsistent",
         hyps=(logic.eq(X, 2 * Y), logic.eq(Y, 1), logic.gt(X, 3))),
    Case("equality_fixes_exp", logic.le(sp.exp(X), 8), "proved", hyps=(logic.eq(X, 2),)),
    Case("equality_fixes_exp_twin", logic.le(sp.exp(X), 7), "refuted", hyps=(logic.eq(X, 2),)),
    Case("equality_fixes_instance", logic.eq(A * B, 6), "proved", hyps=(logic.eq(B, 2),), values={"a": 3, "b": 5}),
    Case("equality_fixes_instance_twin", logic.eq(A * B, 15), "refuted", hyps=(logic.eq(B, 2),),
         values={"a": 3, "b": 5}),
    Case("equalities_disagree", logic.ge(A, 0), "inconsistent", hyps=(logic.eq(B, 2), logic.eq(B, 3)),
         values={"a": 3, "b": 5}),
    Case("fraction_fixed_outside", logic.ge(fr.sym, 0), "inconsistent", hyps=(logic.eq(A, 2 * A + 1),)),
    # contradictory assumptions are never proved
    Case("contradiction_order", logic.gt(A, 10**9), "inconsistent", hyps=(logic.gt(A, B), logic.gt(B, A))),
    Case("contradiction_square", logic.gt(X, 5), "inconsistent", hyps=(logic.lt(X**2 + 1, 0),)),
    Case("contradiction_abs", logic.gt(X, 5), "inconsistent", hyps=(logic.lt(sp.Abs(X), 0),)),
    Case("contradiction_floor", logic.gt(X, 5), "inconsistent", hyps=(logic.gt(sp.floor(X), X),)),
    Case("contradiction_nonnegative", logic.gt(X, 5), "inconsistent", hyps=(logic.lt(W, 0),)),
    Case("contradiction_root", logic.gt(X, 5), "inconsistent", hyps=(logic.gt(sp.sqrt(A), 3), logic.lt(A, 9))),
    Case("contradiction_max", logic.gt(X, 5), "inconsistent",
         hyps=(logic.gt(sp.Max(X, Y), 3), logic.lt(X, 1), logic.lt(Y, 1))),
    Case("contradiction_not_equal", logic.gt(X, 5), "inconsistent", hyps=(logic.Not(logic.eq(X, X)),)),
    # strict against non-strict where zero is allowed
    Case("nonnegative_ge", logic.ge(W * A, 0), "proved"),
    Case("nonnegative_gt", logic.gt(W * A, 0), "refuted", truth=lambda p: p["w"] * p["a"] > 0),
    Case("nonnegative_root", logic.ge(sp.sqrt(W), 0), "proved"),
    Case("nonnegative_root_twin", logic.gt(sp.sqrt(W), 0), "refuted", truth=lambda p: sp.sqrt(p["w"]) > 0),
    Case("nonnegative_point", logic.gt(W, 0), "refuted", values={"w": 0}),
    Case("nonnegative_pole", logic.gt(1 / W, 0), "unknown", values={"w": 0}),
    Case("nonnegative_pole_general", logic.gt(1 / W, 0), "unknown"),
    # huge and tiny numbers
    Case("tiny_step", logic.gt(A * (1 + R(1, 10**30)), A), "proved"),
    Case("tiny_step_twin", logic.gt(A * (1 - R(1, 10**30)), A), "refuted",
         truth=lambda p: p["a"] * (1 - R(1, 10**30)) > p["a"]),
    Case("huge_scale", logic.le(X * R(1, 10**30), 1), "proved", hyps=(logic.le(X, 10**30),)),
    Case("huge_scale_twin", logic.lt(X * R(1, 10**30), 1), "refuted", hyps=(logic.le(X, 10**30),),
         truth=lambda p: (p["x"] / 10**30 < 1) if p["x"] <= 10**30 else None),
    Case("huge_point", logic.gt(A + R(1, 10**30), A), "proved", values={"a": 10**60 + R(1, 3)}),
    Case("huge_point_twin", logic.lt(A, 10**60 + R(1, 3)), "refuted", values={"a": 10**60 + R(1, 3)}),
    # logical connectives and equations
    Case("implies", logic.Implies(logic.gt(X, 1), logic.gt(X**2, 1)), "proved"),
    Case("implies_twin", logic.Implies(logic.gt(X**2, 1), logic.gt(X, 1)), "refuted",
         truth=lambda p: (p["x"] > 1) or not (p["x"] ** 2 > 1)),
    Case("iff", logic.Iff(logic.gt(X, 0), logic.gt(X**3, 0)), "proved"),
    Case("iff_twin", logic.Iff(logic.gt(X, 0), logic.gt(X**2, 0)), "refuted",
         truth=lambda p: (p["x"] > 0) == (p["x"] ** 2 > 0)),
    Case("or_undefined_at_point", logic.Or((logic.le(T, 0), logic.gt(1 / T, 0))), "unknown", values={"t": 0}),
    Case("not_equal", logic.Not(logic.eq((A + B) ** 2, A**2 + B**2)), "proved"),
    Case("not_equal_twin", logic.Not(logic.eq((X + Y) ** 2, X**2 + Y**2)), "refuted",
         truth=lambda p: (p["x"] + p["y"]) ** 2 != p["x"] ** 2 + p["y"] ** 2),
    Case("cancel_positive", logic.eq(A, B), "proved", hyps=(logic.eq(A * C, B * C),)),
    Case("cancel_nonnegative_twin", logic.eq(X, Y), "refuted", hyps=(logic.eq(X * W, Y * W),),
         truth=lambda p: (p["x"] == p["y"]) if p["x"] * p["w"] == p["y"] * p["w"] else None),
]


@pytest.fixture(scope="module")
def results():
    out = {}
    general = [cs for cs in CASES if cs.values is None]
    claims = [Claim(f"t.{cs.id}", title=cs.id, statement="s", source=SRC, goal=cs.goal, hypotheses=cs.hyps)
              for cs in general]
    lib = Library([Topic("t", "t", "", QUANTITIES, (*DEFINITIONS, *claims))])
    report = Checker(lib, Scenario("s", {}), rlimit=2_000_000).check([cl.id for cl in claims]).by_id()
    out.update({cs.id: report[f"t.{cs.id}"] for cs in general})
    for cs in CASES:
        if cs.values is None:
            continue
        claim = Claim(f"t.{cs.id}", title=cs.id, statement="s", source=SRC, goal=cs.goal, hypotheses=cs.hyps,
                      instance=True)
        lib = Library([Topic("t", "t", "", QUANTITIES, (*DEFINITIONS, claim))])
        scen = Scenario("s", {k: ScenarioValue(k, R(v), "test") for k, v in cs.values.items()})
        out[cs.id] = Checker(lib, scen, rlimit=2_000_000).check([claim.id]).by_id()[claim.id]
    return out


def test_true_claims_have_false_twins():
    ideals = [cs.ideal for cs in CASES]
    assert ideals.count("refuted") >= 35 and ideals.count("proved") >= 35 and ideals.count("inconsistent") >= 10


@pytest.mark.parametrize("case", CASES, ids=lambda cs: cs.id)
def test_a_claim_of_known_truth_gets_its_verdict(case, results):
    res = results[case.id]
    assert "internal error" not in (res.reason or ""), res.reason
    allowed = {case.ideal, "unknown"} if case.unknown_ok else {case.ideal}
    assert res.verdict in allowed, (res.verdict, res.reason, res.counterexample)
    if res.verdict == "refuted" and case.values is None:
        point = {k: R(v) for k, v in res.counterexample.items()}
        for name in ("a", "b", "c", "x", "y", "t", "w", "n", "m", "z"):
            point.setdefault(name, R(1))  # a quantity the claim does not read
        if case.truth is not None:
            truth = case.truth(point)
            assert truth is not None and not bool(truth), point  # the hypotheses hold there and the goal fails
