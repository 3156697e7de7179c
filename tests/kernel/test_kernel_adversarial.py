"""Adversarial claims written through the public library API (as a user writes them), each with its truth
known by construction and a false twin: what a second red-team pass found after the kernel was built.

Every case checks one claim through ``Checker`` on a one-topic library; ``truth`` is True (must not be
refuted), False (must not be proved) or None (meaningless or refused: must be ``unknown`` or
``inconsistent``, never a verdict).  A ``refuted`` verdict's counterexample is re-checked here by an
independent 60-digit evaluation of the claim as written (bounds included).
"""

from __future__ import annotations

import mpmath
import pytest
import sympy as sp

from derive import Assumption, Claim, Definition, Quantity, derived, logic
from derive.checking.checker import Checker
from derive.errors import LibraryError
from derive.model.declarations import Topic
from derive.model.library import Library
from derive.model.scenario import Scenario, ScenarioValue

R = sp.Rational
SRC = derived("red team")


def Q(name, domain="real", integer=False, value=None):  # noqa: N802 - reads like the constructor it wraps
    return Quantity(name, name, "1", name, domain=domain, integer=integer, value=value,
                    source=SRC if value is not None else None)


a, b, d, c5 = Q("a", "positive"), Q("b", "positive"), Q("d", "positive"), Q("c5", "positive", value=R(5))
x, n = Q("x"), Q("n", integer=True)
A, B, D, C5, X, N = a.sym, b.sym, d.sym, c5.sym, x.sym, n.sym
d_def = Definition("t.d", title="d", statement="s", source=SRC, defines=d, expr=A * B)
QUANTITIES = (a, b, x, n, c5)


def check(goal, *, hyps=(), bounds=(), instance=False, forall=(), values=None, decls=(d_def,)):
    claim = Claim("t.claim", title="c", statement="s", source=SRC, goal=goal, hypotheses=tuple(hyps),
                  bounds=bounds, instance=instance, forall=tuple(forall))
    lib = Library([Topic("t", "t", "", QUANTITIES, (*decls, claim))])
    scen = Scenario("s", {k: ScenarioValue(k, R(v), "test") for k, v in (values or {}).items()})
    return Checker(lib, scen, rlimit=2_000_000).check(["t.claim"]).by_id()["t.claim"], lib


def _value(e, point):
    mpmath.mp.dps = 60
    return sp.N(e.xreplace(point), 60)


def _expand(lib, e, point):
    """``e`` with the point's values first (a quantity in ``forall`` keeps its value), then definitions."""
    return lib.expand(e.xreplace(point))


def independent_recheck(result, lib, goal, bounds, hyps=()):
    """The counterexample violates the goal and satisfies bounds and hypotheses (60-digit evaluation of
    the expressions as written, derived quantities expanded)."""
    point = {lib.quantities[k].sym: R(v) for k, v in result.counterexample.items()}
    for q, lo, hi in bounds:
        v = _value(_expand(lib, q.sym, point), point)
        assert R(lo) <= v <= R(hi), (q.name, v, lo, hi)
    for h in hyps:
        assert all(_holds(f, lib, point) for f in _rels(h))
    assert not all(_holds(f, lib, point) for f in _rels(goal))


def _rels(f):
    return list(f.args) if isinstance(f, logic.And) else [f]


def _holds(f, lib, point):
    diff = _value(_expand(lib, f.lhs, point) - _expand(lib, f.rhs, point), point)
    return {"==": diff == 0, "<=": diff <= 0, "<": diff < 0, ">=": diff >= 0, ">": diff > 0, "!=": diff != 0}[f.op]


CASES = [
    # bounds on a derived quantity are hypotheses on its definition (they used to be dropped)
    ("derived-bounds", True, logic.le(D, 10), dict(bounds=((d, 1, 10),))),
    ("derived-bounds", False, logic.le(D, 9), dict(bounds=((d, 1, 10),))),
    ("derived-bounds-exp", False, logic.le(sp.exp(D), sp.exp(9)), dict(bounds=((d, 1, 10), (a, 1, 10), (b, 1, 10)))),
    # bounds on a constant are hypotheses on its value
    ("constant-bounds", None, logic.le(A, 10), dict(bounds=((c5, 6, 7), (a, 1, 2)))),
    ("constant-bounds", True, logic.le(A * C5, 10), dict(bounds=((c5, 1, 7), (a, 1, 2)))),
    ("constant-bounds", False, logic.le(A * C5, 9), dict(bounds=((c5, 1, 7), (a, 1, 2)))),
    # an instance value outside its bounds: the assumptions contradict each other, never a counterexample
    ("instance-bounds", None, logic.le(A, 10), dict(instance=True, values={"a": 100}, bounds=((a, 1, 5),))),
    ("instance-bounds", None, logic.ge(A, 10), dict(instance=True, values={"a": 100}, bounds=((a, 1, 5),))),
    ("instance-bounds", True, logic.le(A * B, 50), dict(instance=True, forall=(a,), values={"a": 100, "b": 5},
                                                         bounds=((a, 1, 10),))),
    ("instance-bounds", False, logic.le(A * B, 49), dict(instance=True, forall=(a,), values={"a": 100, "b": 5},
                                                          bounds=((a, 1, 10),))),
    # forall over a constant keeps it a variable (it used to be checked at its value only)
    ("forall-constant", False, logic.le(C5, 5), dict(instance=True, forall=(c5,))),
    ("forall-constant", True, logic.gt(C5, 0), dict(instance=True, forall=(c5,))),
    ("forall-derived", False, logic.le(D, 10), dict(instance=True, forall=(d,), values={"a": 2, "b": 3})),
    # malformed bounds: unknown with the reason, never an internal error (nor a verdict, for a bool)
    ("bad-bound", None, logic.le(X, 10), dict(bounds=((x, 0, sp.oo),))),
    ("bad-bound", None, logic.le(X, 10), dict(bounds=((x, 0, sp.sqrt(2)),))),
    ("bad-bound", None, logic.le(X, 10), dict(bounds=((x, A, 2),))),
    ("bad-bound", None, logic.le(X, 10), dict(bounds=((x, "abc", 2),))),
    ("bad-bound", None, logic.le(X, 1), dict(bounds=((x, False, True),))),
    ("bad-bound", None, logic.le(X, 10), dict(bounds=((x, 0, 1e300),))),
    # within_percent: a float tolerance is refused like every float (it was read as its binary value)
    ("percent-float", None, logic.within_percent(X, 100, 0.1), dict(hyps=(logic.eq(X, R("100.1")),))),
    ("percent-exact", True, logic.within_percent(X, 100, R(1, 10)), dict(hyps=(logic.eq(X, R("100.1")),))),
    ("percent-exact", False, logic.within_percent(X, 100, R(1, 10)), dict(hyps=(logic.eq(X, R("100.11")),))),
    ("percent-zero-target", True, logic.within_percent(X, 0, 5), dict(hyps=(logic.eq(X, 0),))),
    ("percent-zero-target", False, logic.within_percent(X, 0, 5), dict(hyps=(logic.eq(X, R(1, 10**9)),))),
    ("percent-negative", False, logic.within_percent(X, 100, -5), dict(hyps=(logic.eq(X, 100),))),
    # integer quantities with non-integer bounds
    ("int-bounds", True, logic.ge(N, 1), dict(bounds=((n, R(1, 2), R(5, 2)),))),
    ("int-bounds", False, logic.ge(N, 2), dict(bounds=((n, R(1, 2), R(5, 2)),))),
    ("int-bounds", None, logic.ge(sp.exp(N), 2), dict(bounds=((n, R(1, 3), R(2, 3)),))),
]


@pytest.mark.parametrize("family,truth,goal,kw", CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_adversarial_claim(family, truth, goal, kw):
    result, lib = check(goal, **kw)
    assert "internal error" not in (result.reason or ""), result.reason
    if truth is True:
        assert result.verdict in ("proved", "unknown"), (result.verdict, result.counterexample)
    elif truth is False:
        assert result.verdict in ("refuted", "unknown"), result.verdict
    else:
        assert result.verdict in ("unknown", "inconsistent"), (result.verdict, result.reason)
    if result.verdict == "refuted":
        fixed = {k for k in (kw.get("values") or {}) if k not in {q.name for q in kw.get("forall", ())}}
        if not fixed:
            independent_recheck(result, lib, goal, kw.get("bounds", ()), kw.get("hyps", ()))


def test_false_twins_are_refuted_not_left_unknown():
    for family, truth, goal, kw in CASES:
        if truth is False and family in ("derived-bounds", "constant-bounds", "forall-constant", "int-bounds"):
            assert check(goal, **kw)[0].verdict == "refuted", family


def test_a_definition_of_itself_is_a_library_error():
    loop = Definition("t.loop", title="d", statement="s", source=SRC, defines=d, expr=D + A)
    with pytest.raises(LibraryError, match="in terms of itself"):
        Library([Topic("t", "t", "", QUANTITIES, (loop,))])


def test_blocking_through_a_chain_of_assumptions_and_a_definition():
    bad = Claim("t.bad", title="b", statement="s", source=SRC, goal=logic.gt(A, A + 1), expected="refuted")
    first = Assumption("t.first", title="a", statement="s", source=SRC, relation=logic.gt(B, 0), uses=(bad,))
    second = Assumption("t.second", title="a", statement="s", source=SRC, relation=None, uses=(first,))
    defn = Definition("t.d2", title="d", statement="s", source=SRC, defines=d, expr=A * B, uses=(second,))
    user = Claim("t.user", title="u", statement="s", source=SRC, goal=logic.gt(D, 0))
    lib = Library([Topic("t", "t", "", QUANTITIES, (bad, first, second, defn, user))])
    res = Checker(lib, Scenario("s", {})).check(["t.user"]).by_id()
    assert res["t.user"].verdict == "blocked" and "t.bad" in res["t.user"].reason
