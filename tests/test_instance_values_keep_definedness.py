"""An instance claim is read at the scenario's values, and a value must not make a part defined that is not as
written.  sympy folds ``y/x`` at y = 0 to 0 (x != 0 gone), ``y*log(x)`` at y = 0 to 0 (x > 0 gone) and ``x**y`` at
y = 3 to ``x**3`` (x > 0 gone): the model layer substituted the values itself, so ``0/x >= 0`` "for every x" was
``proved`` (a false twin of the general claim, which said ``unknown``), ``x**y > 0`` at x = -1, y = 3 was
``refuted`` at a point where it is undefined, margins held at the pole and sweeps gave a value there.  Now such
values go to the kernel as hypotheses, which substitutes only where definedness is kept (as ``docs/verdicts.md``
says), and the one-formula reading (margins, sweeps) keeps what the folding dropped.  True twins (the condition
given) stay proved, false twins refuted."""

from __future__ import annotations

import pytest
import sympy as sp

from derive.checking.checker import Checker
from derive.kernel import logic
from derive.model.declarations import Claim, Definition, Quantity, derived
from derive.model.scenario import build_scenario
from derive.whatif.margin import margin
from tests.libtools import make_library

X_Q = Quantity("xx", "x", "1", "x", domain="real")
Y_Q = Quantity("yy", "y", "1", "y", domain="real")
D_Q = Quantity("dd", "d", "1", "d", domain="real")
X, Y = X_Q.sym, Y_Q.sym
SRC = derived("a planted case")
D_DEF = Definition("t.d", title="d", statement="d := y log x", source=SRC, defines=D_Q, expr=Y * sp.log(X))


def _claim(cid: str, goal, **kw) -> Claim:
    return Claim(f"t.{cid}", title=cid, statement=cid, source=SRC, instance=True, goal=goal, **kw)


# id: (claim, --set values, verdict)
CASES = {
    "quotient_at_zero_numerator": (_claim("q", logic.ge(Y / X, 0), forall=(X_Q,)), ["yy=0"], "unknown"),
    "quotient_at_zero_numerator_nonzero_x": (
        _claim("q_ok", logic.ge(Y / X, 0), forall=(X_Q,), hypotheses=(logic.gt(X, 0),)), ["yy=0"], "proved"),
    "quotient_at_zero_numerator_twin": (
        _claim("q_twin", logic.gt(Y / X, 0), forall=(X_Q,), hypotheses=(logic.gt(X, 0),)), ["yy=0"], "refuted"),
    "logarithm_times_zero": (_claim("l", logic.eq(Y * sp.log(X), 0), forall=(X_Q,)), ["yy=0"], "unknown"),
    "logarithm_times_zero_positive_x": (
        _claim("l_ok", logic.eq(Y * sp.log(X), 0), forall=(X_Q,), bounds=((X_Q, 1, 4),)), ["yy=0"], "proved"),
    "definition_times_zero": (_claim("dz", logic.eq(D_Q.sym, 0), forall=(X_Q,), uses=(D_DEF,)), ["yy=0"],
                              "unknown"),
    "power_exponent_given": (
        _claim("p", logic.ge(X**Y, -1), forall=(X_Q,), hypotheses=(logic.ge(X, -1),)), ["yy=3"], "unknown"),
    "power_exponent_given_positive_base": (
        _claim("p_ok", logic.ge(X**Y, 0), forall=(X_Q,), hypotheses=(logic.gt(X, 0),)), ["yy=3"], "proved"),
    "power_exponent_given_twin": (
        _claim("p_twin", logic.ge(X**Y, 1), forall=(X_Q,), hypotheses=(logic.gt(X, 0),)), ["yy=3"], "refuted"),
    "power_at_a_negative_base": (_claim("n", logic.gt(X**Y, 0)), ["xx=-1", "yy=3"], "unknown"),
    "power_zero_to_zero": (_claim("z", logic.eq(X**Y, 1)), ["xx=0", "yy=0"], "unknown"),
    "power_at_a_positive_base": (_claim("pp", logic.gt(X**Y, 0)), ["xx=2", "yy=3"], "proved"),
    "power_at_a_positive_base_twin": (_claim("pp_twin", logic.gt(X**Y, 9)), ["xx=2", "yy=3"], "refuted"),
}


def _check(claim: Claim, sets: list[str]):
    lib = make_library(X_Q, Y_Q, D_Q, D_DEF, claim)
    scenario = build_scenario(lib, sets=sets)
    return lib, scenario, Checker(lib, scenario, cache=None).check_own(lib.resolve(claim.id))


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_value_does_not_drop_a_side_condition(name):
    claim, sets, verdict = CASES[name]
    _, _, result = _check(claim, sets)
    assert result.verdict == verdict, result.reason
    if verdict == "unknown":
        assert any(w in result.reason for w in ("fails", "undefined", "log")), result.reason


def test_the_general_claim_and_the_instance_agree():
    general = Claim("t.g", title="g", statement="g", source=SRC, hypotheses=(logic.eq(Y, 0),),
                    goal=logic.ge(Y / X, 0))
    instance, sets, _ = CASES["quotient_at_zero_numerator"]
    assert _check(general, [])[2].verdict == _check(instance, sets)[2].verdict == "unknown"


def test_a_margin_leaves_out_the_point_where_the_claim_is_undefined():
    claim = CASES["quotient_at_zero_numerator"][0]
    lib = make_library(X_Q, Y_Q, claim)
    out = margin(lib, build_scenario(lib, sets=["yy=0"]), claim.id, "xx")
    text = " ".join(str(i) for i in out.intervals)
    assert "0" in text and len(out.intervals) == 2, text  # (-oo, 0) and (0, oo), not the whole line
    assert any("undefined for xx = 0" in n for n in out.notes), out.notes


def test_a_margin_over_a_symbolic_power_starts_at_a_positive_base():
    claim = _claim("m", logic.lt(X**Y, 8))
    lib = make_library(X_Q, Y_Q, claim)
    out = margin(lib, build_scenario(lib, sets=["yy=3"]), claim.id, "xx")
    assert [(i.low, i.high) for i in out.intervals] == [(0, 2)]


def test_a_sweep_leaves_the_claim_empty_where_it_is_undefined():
    import math

    from derive.whatif.sweep import parse_axis, resolve_target, sweep_grid

    claim = CASES["quotient_at_zero_numerator"][0]
    lib = make_library(X_Q, Y_Q, claim)
    out = sweep_grid(lib, build_scenario(lib, sets=["yy=0"]), [resolve_target(lib, claim.id)],
                     [parse_axis(lib, "xx=-1:1:3")])
    column = [float(v) for v in out.data[-1]]
    assert column[0] == column[2] == 1 and math.isnan(column[1]), column


Z_Q = Quantity("zz", "z", "1", "z", domain="real")
W_Q = Quantity("ww", "w", "1", "w", domain="real")


def test_a_margin_through_an_eliminated_quantity_keeps_the_pole():
    # forall y with y == z: y/x >= 0 at z = 0; the equation's solution folded y/x to 0 at every x
    claim = Claim("t.el", title="el", statement="el", source=SRC, instance=True, forall=(Y_Q,),
                  hypotheses=(logic.eq(Y, Z_Q.sym),), goal=logic.ge(Y / X, 0))
    lib = make_library(X_Q, Y_Q, Z_Q, claim)
    out = margin(lib, build_scenario(lib, sets=["zz=0", "xx=1"]), claim.id, "xx")
    assert len(out.intervals) == 2 and any("undefined for xx = 0" in n for n in out.notes), out.notes


def test_a_margin_over_an_expression_reaches_only_its_values():
    # 1/xx never is 0: the margin over it is (0, oo), not [0, oo)
    claim = _claim("inv", logic.ge(Y / X, 0))
    lib = make_library(X_Q, Y_Q, claim)
    out = margin(lib, build_scenario(lib, sets=["yy=1", "xx=1"]), claim.id, "1/xx")
    assert [(i.low, i.low_closed) for i in out.intervals] == [(0, False)]


def test_diff_rechecks_a_claim_whose_definition_domain_reads_the_changed_value():
    from derive.whatif.diff import affected_claims

    d_q = Quantity("dw", "d", "1", "d", domain="real")
    d_def = Definition("t.dw", title="d", statement="d := 2x where w > 0", source=SRC, defines=d_q, expr=2 * X,
                       domain=logic.gt(W_Q.sym, 0))
    claim = _claim("dw_pos", logic.gt(d_q.sym, 0), uses=(d_def,))
    lib = make_library(X_Q, W_Q, d_q, d_def, claim)
    base, now = build_scenario(lib, sets=["xx=1", "ww=1"]), build_scenario(lib, sets=["xx=1", "ww=-1"])
    assert claim.id in affected_claims(lib, base, now, [claim])


def test_a_swept_value_is_empty_where_a_folded_part_has_none():
    import math

    from derive.whatif.sweep import parse_axis, resolve_target, sweep_grid

    lib = make_library(X_Q, Y_Q, D_Q, D_DEF)
    out = sweep_grid(lib, build_scenario(lib, sets=["yy=0"]), [resolve_target(lib, "dd"), resolve_target(lib, "yy/xx")],
                     [parse_axis(lib, "xx=-1:1:3")])
    dd, ratio = ([float(v) for v in col] for col in out.data[-2:])
    assert math.isnan(dd[0]) and math.isnan(dd[1]) and dd[2] == 0  # y*log(x) at y = 0: no value at x <= 0
    assert math.isnan(ratio[1]) and ratio[2] == 0
    both = sweep_grid(lib, build_scenario(lib), [resolve_target(lib, "yy/xx")],
                      [parse_axis(lib, "xx=-1:1:3"), parse_axis(lib, "yy=0:1:2")])
    assert not any(math.isinf(float(v)) for v in both.data[-1])  # 1/0 is no value, not inf


def test_a_margin_where_the_claim_has_no_value_at_all_says_where_to_look():
    from derive.errors import MarginError

    claim = _claim("nowhere", logic.ge(Y * sp.log(X) + 2, 1))
    lib = make_library(X_Q, Y_Q, claim)
    with pytest.raises(MarginError) as err:
        margin(lib, build_scenario(lib, sets=["xx=-1", "yy=0"]), claim.id, "yy")
    assert "derive check t.nowhere says which" in (err.value.hint or ""), err.value.one_line()


def test_a_value_that_folds_does_not_keep_the_others_from_being_read():
    # z = 0 folds z/(w - 1); y = 3 alone keeps x**y's base condition, which x > 0 gives: proved
    w_q = Quantity("wv", "w", "1", "w", domain="real")
    claim = _claim("mixed", logic.eq(X**Y - X**3 + Z_Q.sym / (w_q.sym - 1), 0), forall=(X_Q, w_q),
                   hypotheses=(logic.gt(X, 0), logic.gt(w_q.sym, 2)))
    lib = make_library(X_Q, Y_Q, Z_Q, w_q, claim)
    result = Checker(lib, build_scenario(lib, sets=["yy=3", "zz=0"]), cache=None).check_own(lib.resolve(claim.id))
    assert result.verdict == "proved", result.reason
