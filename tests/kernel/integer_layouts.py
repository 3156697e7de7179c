"""Linear integer claims of the serving kind, each true claim with a false twin.

Ceilings and floors written as their two inequalities, divisibility by a fixed count, pages per
sequence, tokens per expert, chips per layout: every quantity an integer, every relation linear, so
the kernel sends them to z3's linear integer procedure.  ``cases()`` builds 64 of them (32 pairs)
deterministically; the false twin of each pair is off by one at a point the integers reach.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from derive.kernel import logic
from derive.kernel.logic import Rel
from derive.kernel.problem import Problem

a, b, c, q, pages, length, tokens, per_expert, chips, stages, experts, groups = sp.symbols(
    "a b c q pages length tokens per_expert chips stages experts groups")


@dataclass(frozen=True)
class IntegerCase:
    id: str
    family: str
    truth: str  # true | false
    problem: Problem


def _p(hyps, goal, integer) -> Problem:
    return Problem(list(hyps), goal, set(integer))


def _pair(family: str, d: int, hyps, goal_true, goal_false, integer) -> list[IntegerCase]:
    return [IntegerCase(f"{family}_{d}", family, "true", _p(hyps, goal_true, integer)),
            IntegerCase(f"{family}_{d}_twin", family, "false", _p(hyps, goal_false, integer))]


def cases() -> list[IntegerCase]:
    out: list[IntegerCase] = []
    for d in (2, 3, 8, 16, 64, 128):
        # c = ceil(a/d): d*c >= a and d*c < a + d; the rounding adds at most d - 1
        ceil = [logic.ge(d * c, a), logic.lt(d * c, a + d), logic.ge(a, 1)]
        out += _pair("ceiling", d, ceil, logic.le(d * c - a, d - 1), logic.le(d * c - a, d - 2), {a, c})
        # q = floor(a/d): d*q <= a < d*q + d; the remainder is at most d - 1
        floor = [logic.le(d * q, a), logic.lt(a, d * q + d), logic.ge(a, 0)]
        out += _pair("floor", d, floor, logic.le(a - d * q, d - 1), logic.le(a - d * q, d - 2), {a, q})
    for size in (16, 32, 256, 512):
        # pages = ceil(length/size): a sequence of length >= 1 holds a page, and wastes under one page
        hyps = [logic.ge(size * pages, length), logic.lt(size * pages, length + size), logic.ge(length, 1)]
        out += _pair("pages", size, hyps, logic.ge(pages, 1), logic.ge(pages, 2), {pages, length})
        out += _pair("page_waste", size, hyps, logic.le(size * pages, length + size - 1),
                     logic.le(size * pages, length), {pages, length})
    for e in (8, 64, 128, 256):
        # per_expert = ceil(tokens/e) for at most 8192 routed tokens: at most ceil(8192/e)
        top = -(-8192 // e)
        hyps = [logic.ge(e * per_expert, tokens), logic.lt(e * per_expert, tokens + e), logic.ge(tokens, 0),
                logic.le(tokens, 8192)]
        out += _pair("tokens_per_expert", e, hyps, logic.le(per_expert, top), logic.le(per_expert, top - 1),
                     {per_expert, tokens})
    for tp in (2, 4, 8, 16):
        # chips = tp * stages within 64 chips: at most 64 // tp stages
        hyps = [logic.eq(chips, tp * stages), logic.ge(stages, 1), logic.le(chips, 64)]
        out += _pair("chips_per_layout", tp, hyps, logic.le(stages, 64 // tp), logic.le(stages, 64 // tp - 1),
                     {chips, stages})
    for g in (3, 6, 10, 12):
        # experts = g * groups: never a count that g does not divide (g + 1), but 2g is reached
        hyps = [logic.eq(experts, g * groups), logic.ge(groups, 0)]
        out += _pair("divisibility", g, hyps, Rel(experts, "!=", g + 1), Rel(experts, "!=", 2 * g),
                     {experts, groups})
    return out
