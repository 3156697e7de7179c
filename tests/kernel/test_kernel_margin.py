"""margin, exact end to end: roots, domains, non-monotone claims, z3 'unknown' is not a disagreement."""

from __future__ import annotations

import sympy as sp

from derive import Claim, Definition, Quantity, derived, logic
from derive.checking.checker import Checker
from derive.kernel.logic import Rel
from derive.model.declarations import Topic
from derive.model.library import Library
from derive.model.scenario import Scenario, ScenarioValue
from derive.whatif.margin import BoundaryCheck, Interval, Margin, margin, solve_intervals

R = sp.Rational
t = sp.Symbol("t")
SRC = derived("test")


def text(formula, domain="real"):
    notes: list[str] = []
    intervals, _ = solve_intervals(formula, t, domain, notes)
    return " ∪ ".join(i.text() for i in intervals), notes


def test_cube_root_holds_from_zero():
    assert text(Rel(t ** R(1, 3), "<=", 2), "nonnegative") == ("[0, 8]", [])
    got, notes = text(Rel(t ** R(1, 3), "<=", 2))
    assert got == "[0, 8]" and notes and "radicand" in notes[0]


def test_square_root_flags_its_domain():
    got, notes = text(Rel(sp.sqrt(t) + 1, ">=", 0))
    assert got == "[0, inf)"
    assert any("undefined for t in (-inf, 0)" in n for n in notes)


def test_non_monotone_claims():
    assert text(Rel(t**2 - 3 * t + 2, ">=", 0))[0] == "(-inf, 1] ∪ [2, inf)"
    assert text(Rel(sp.log(t), "<", 1))[0] == "(0, E)"
    assert text(Rel(1 / (t - 1) ** 2, ">", 1))[0] == "(0, 1) ∪ (1, 2)"


def test_unknown_is_could_not_confirm_not_disagreement():
    m = Margin("c", "t", "1", sp.Integer(1), [Interval(sp.Integer(0), None, True, False)], "real", False,
               Rel(t, ">=", 0), t, checks=[BoundaryCheck(R(1), "inside", True, "unknown"),
                                          BoundaryCheck(R(-1), "outside", False, "refuted")])
    assert m.verified is None
    lines = "\n".join(m.text_lines())
    assert "could not be confirmed" in lines and "DISAGREEMENT" not in lines
    m.checks.append(BoundaryCheck(R(2), "inside", True, "refuted"))
    assert m.verified is False and "DISAGREEMENT" in "\n".join(m.text_lines())


def test_margin_never_rounds_user_values():
    flops = Quantity("flops_x", "F", "1", "flops")
    ratio = Quantity("ratio_x", "r", "1", "ratio")
    defn = Definition("t.ratio", title="r", statement="s", source=SRC, defines=ratio,
                      expr=flops.sym / 80_000_000_000_000)
    claim = Claim("t.at_most", title="c", statement="s", source=SRC, goal=logic.le(ratio.sym, 303), instance=True,
                  expected="refuted")
    lib = Library([Topic("t", "t", "", (flops,), (defn, claim))])
    scen = Scenario("s", {"flops_x": ScenarioValue("flops_x", sp.Integer(24240000000000008), "test")})
    assert Checker(lib, scen).check().by_id()["t.at_most"].verdict == "refuted"
    m = margin(lib, scen, "t.at_most", "ratio_x", verify=False)
    assert m.value == R(24240000000000008, 80_000_000_000_000)
    assert m.holds_at_value is False
