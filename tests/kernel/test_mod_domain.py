"""``Mod(a, b)`` in a claim (a layer's position in a pattern, leftover tokens of a batch): the kernel reads it as
``a - b*floor(a/b)`` (sympy's meaning; Python's ``%`` on integers, with the sign of ``b``), defined only where
``b != 0``.  True claims are proved, their false twins refuted at a point the kernel re-checks against the
statement as written (with ``Mod``), and a claim that needs ``b != 0`` without stating it stays ``unknown``
naming that condition.  Before, every claim with ``Mod`` was ``unknown`` ("no domain rule")."""

from __future__ import annotations

import pytest
import sympy as sp
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.certify.smt2 import query
from derive.kernel import logic
from derive.kernel.logic import Rel
from derive.kernel.problem import Problem
from derive.kernel.prover import decide
from derive.kernel.translate import Translator, make_variables
from derive.kernel.trusted import Kernel, Undefined, evaluate_at, side_conditions, without_mod

a, b, n, m = sp.symbols("a b n m")
COUNTS = [logic.ge(n, 0), logic.ge(b, 1)]
INTS = {n, b}

CASES = [  # (id, hypotheses, goal, integer quantities, true?)
    ("remainder_below_the_divisor", COUNTS, logic.lt(sp.Mod(n, b), b), INTS, True),
    ("remainder_below_the_divisor_less_one", COUNTS, logic.lt(sp.Mod(n, b), b - 1), INTS, False),
    ("remainder_nonnegative", COUNTS, logic.ge(sp.Mod(n, b), 0), INTS, True),
    ("remainder_positive", COUNTS, logic.gt(sp.Mod(n, b), 0), INTS, False),
    ("division_with_remainder", [logic.ge(n, 0)], logic.eq(sp.Mod(n, 8) + 8 * sp.floor(n / 8), n), {n}, True),
    ("remainder_of_eight_at_most_six", [logic.ge(n, 0)], logic.le(sp.Mod(n, 8), 6), {n}, False),
    ("even_layers_have_no_remainder", [logic.ge(m, 0), logic.eq(n, 2 * m)], logic.eq(sp.Mod(n, 2), 0),
     {n, m}, True),
    ("odd_layers_have_no_remainder", [logic.ge(m, 0), logic.eq(n, 2 * m + 1)], logic.eq(sp.Mod(n, 2), 0),
     {n, m}, False),
    ("real_remainder_below_a_positive_divisor", [logic.gt(b, 0)], logic.lt(sp.Mod(a, b), b), set(), True),
    ("real_remainder_takes_the_divisors_sign", [logic.lt(b, 0)], logic.le(sp.Mod(a, b), 0), set(), True),
    ("real_remainder_nonnegative_for_a_negative_divisor", [logic.lt(b, 0)], logic.ge(sp.Mod(a, b), 0), set(),
     False),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_mod_claims_are_decided(case):
    _, hyps, goal, ints, truth = case
    out = decide(Problem(list(hyps), goal, set(ints)))
    assert out.verdict == ("proved" if truth else "refuted"), out.reason
    if out.verdict == "refuted":  # re-checked exactly against the statement as written, Mod and all
        point = {sp.Symbol(name): v for name, v in out.counterexample.items()}
        assert all(evaluate_at(h, point) for h in hyps)
        assert not evaluate_at(goal, point)
        assert all(v.is_integer for s, v in point.items() if s in ints)


@pytest.mark.parametrize("goal", [logic.lt(sp.Mod(n, b), sp.Abs(b)), logic.ge(sp.Mod(n, b) * b, 0)],
                         ids=["below_the_divisor", "sign_of_the_divisor"])
def test_a_claim_that_needs_a_nonzero_divisor_without_it_stays_unknown_and_says_so(goal):
    # true wherever Mod(n, b) is defined, but b = 0 is allowed: never proved, never refuted at b = 0
    out = decide(Problem([logic.ge(n, 0)], goal, {n, b}))
    assert out.verdict == "unknown"
    assert "b != 0" in out.reason, out.reason
    stated = decide(Problem([logic.ge(n, 0), Rel(b, "!=", 0)], goal, {n, b}))
    assert stated.verdict == "proved", stated.reason


def test_the_side_condition_of_mod_is_a_nonzero_divisor():
    assert [str(sc) for sc in side_conditions(sp.Mod(a, b))] == ["modulus: b != 0"]
    assert side_conditions(sp.Mod(a, 3)) == []
    rewritten = without_mod(Problem([], logic.lt(sp.Mod(a, b), 1)))
    assert "b != 0" in {str(sc.condition) for e in rewritten.goal.exprs() for sc in side_conditions(e)}


def test_a_hypothesis_with_mod_is_read_only_where_it_is_defined():
    # Mod(n, b) == 0 says b divides n, and b != 0 with it: b = 0 is outside the region
    out = decide(Problem([logic.ge(n, 1), logic.eq(sp.Mod(n, b), 0)], Rel(b, "!=", 0), {n, b}))
    assert out.verdict == "proved", out.reason


def test_mod_at_a_zero_divisor_has_no_value():
    with pytest.raises(Undefined, match="modulus"):
        evaluate_at(Rel(sp.Mod(a, b), "==", 0), {a: sp.Integer(7), b: sp.Integer(0)})
    k = Kernel(Problem([logic.eq(a, 7), logic.eq(b, 0)], logic.eq(sp.Mod(a, b), 0)))
    assert k.refuted({a: sp.Integer(7), b: sp.Integer(0)}, "exact") is None  # never a counterexample


@settings(max_examples=300, deadline=None)
@given(st.integers(-10**6, 10**6), st.integers(-10**4, 10**4).filter(lambda v: v != 0))
def test_the_kernels_mod_is_pythons_percent_on_integers(x, y):
    want = sp.Integer(x % y)
    point = {a: sp.Integer(x), b: sp.Integer(y)}
    assert evaluate_at(Rel(sp.Mod(a, b), "==", want), point)  # exact evaluation
    rewritten = without_mod(Problem([], Rel(sp.Mod(a, b), "==", want))).goal
    assert evaluate_at(rewritten, point)  # the kernel's reading
    # z3's reading of it, at the same integers: the remainder is forced to Python's
    tr = Translator(make_variables({a, b}))
    s = z3.Solver()
    s.add(tr.expr(a) == x, tr.expr(b) == y, tr.expr(rewritten.lhs) != int(want))
    assert s.check() == z3.unsat


def test_certificate_reads_mod_through_to_int():
    k = Kernel(Problem(list(COUNTS), logic.lt(sp.Mod(n, b), b), set(INTS)))
    text = query([n, b], [n, b], [*k.region, logic.Not(k.goal)])
    assert "to_int" in text and "mod" not in text.lower().replace("model", "")


def test_a_library_claim_with_mod_of_like_quantities_is_checked():
    # pages of a KV cache: the tokens left over in the last page are fewer than a page
    from derive import Claim, Quantity, derived
    from derive.checking.checker import Checker
    from derive.model.scenario import Scenario, ScenarioValue
    from tests.libtools import make_library

    ctx = Quantity("ctx_len", "L", "token", "tokens in the context", integer=True)
    page = Quantity("page_len", "p", "token", "tokens in a page", integer=True)
    left = sp.Mod(ctx.sym, page.sym)

    def claim(name, goal, **kw):
        return Claim(f"t.{name}", title=name, statement="s", source=derived("mod"), goal=goal, **kw)

    lib = make_library(ctx, page, claim("below", logic.lt(left, page.sym)),
                       claim("twin", logic.lt(left, page.sym / 2), expected="refuted"),
                       claim("here", logic.eq(left, ctx.sym - 6 * page.sym), instance=True))
    values = {"ctx_len": 100, "page_len": 16}
    sc = Scenario("s", {n: ScenarioValue(n, sp.Integer(v), "test") for n, v in values.items()})
    res = Checker(lib, sc).check().by_id()
    assert res["t.below"].verdict == "proved" and res["t.here"].verdict == "proved"
    assert res["t.twin"].verdict == "refuted"
    point = {k: sp.Integer(v) for k, v in res["t.twin"].counterexample.items()}
    assert 2 * (point["ctx_len"] % point["page_len"]) >= point["page_len"]  # Python's %: the twin fails there
