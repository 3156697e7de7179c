"""The statement-size budget: ``tree_size`` counts a part sympy shares every time it occurs, sums the roots,
caps the count, and gives the same answer however often it is asked (it keeps each tree's count)."""

from __future__ import annotations

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.kernel.logic import Rel
from derive.kernel.problem import Problem
from derive.kernel.prover import decide
from derive.kernel.trusted import MAX_NODES, tree_size

x, y = sp.symbols("x y")


def _doubling(times: int) -> sp.Expr:
    """``e*(e + 1)`` nested ``times`` times: a small object whose tree has about 2**times nodes."""
    e: sp.Expr = x
    for _ in range(times):
        e = sp.Mul(e, sp.Add(e, 1, evaluate=False), evaluate=False)
    return e


def test_shared_parts_count_every_time():
    assert tree_size([x]) == 1
    assert tree_size([x + y]) == 3
    # x*(x + 1): Mul, x, Add, x, 1
    assert tree_size([_doubling(1)]) == 5
    assert tree_size([_doubling(2)]) == 13


def test_the_count_is_capped_past_the_limit():
    assert tree_size([_doubling(30)]) == MAX_NODES + 1
    assert tree_size([_doubling(3)], limit=10) == 11
    assert tree_size([x + y, x + y, x + y], limit=7) == 8


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=12), min_size=1, max_size=5),
       st.integers(min_value=1, max_value=400))
def test_roots_add_up_and_asking_again_gives_the_same(depths, limit):
    roots = [_doubling(d) for d in depths]
    first = tree_size(roots, limit)
    assert first == min(limit + 1, sum(tree_size([r], limit) for r in roots))
    assert tree_size(roots, limit) == first == tree_size(list(roots), limit)


def test_a_statement_past_the_budget_is_refused_and_a_small_one_is_read():
    big = Problem([Rel(x, ">", 0)], Rel(_doubling(30), ">", 0), set(), {})
    out = decide(big)
    assert out.verdict == "unknown" and "too large for the engines" in (out.reason or "")
    small = Problem([Rel(x, ">", 0)], Rel(_doubling(2), ">", 0), set(), {})
    assert decide(small).verdict == "proved"
