"""A planted suite: claims whose truth is known by construction, each true claim with a false twin.

``cases()`` builds them deterministically.  Every case is a ``Planted``: a kernel ``Problem``, its
truth (``true``, ``false``, ``inconsistent``, or ``meaningless``: undefined somewhere on its region, or
written with floats) and the verdict a perfect checker would give (``ideal``).  Families cover every
engine and construct: z3 polynomials, the sympy identity route, the interval engine (exp, log,
symbolic exponents), roots, denominators, logarithm domains, integer quantities, bounds, Piecewise,
Max/Min/Abs, closed constants, huge and tiny magnitudes, hypotheses with divisions, floats,
within_percent with negative targets, inconsistent hypotheses.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import sympy as sp

from derive.kernel import logic
from derive.kernel.logic import Formula
from derive.kernel.problem import Problem

R = sp.Rational
x, y, u, t, p, a, k, n = sp.symbols("x y u t p a k n")
RLIMIT = 2_000_000


@dataclass
class Planted:
    id: str
    family: str
    truth: str  # true | false | inconsistent | meaningless
    ideal: str  # proved | refuted | inconsistent | unknown
    problem: Problem
    notes: str = ""
    extra: dict = field(default_factory=dict)


def _p(hyps: list[Formula], goal: Formula, *, integer=(), bounds=None, seed=0) -> Problem:
    return Problem(list(hyps), goal, set(integer), dict(bounds or {}), RLIMIT, seed)


def _rat(rng: random.Random, lo: int, hi: int, den: int = 10) -> sp.Rational:
    return R(rng.randint(lo * den, hi * den), den)


def cases() -> list[Planted]:
    rng = random.Random(13)
    out: list[Planted] = []

    def add(family: str, truth: str, ideal: str, problem: Problem, i: int, tag: str = "") -> None:
        out.append(Planted(f"{family}{tag}-{truth}-{i}", family, truth, ideal, problem))

    pos = [logic.gt(x, 0), logic.gt(y, 0)]
    for i in range(24):  # z3: completed squares, real variable
        c, s = _rat(rng, -20, 20), _rat(rng, -5, 5, 7)
        add("square", "true", "proved", _p([], logic.ge((x - s) ** 2 + c, c)), i)
        add("square", "false", "refuted", _p([], logic.gt((x - s) ** 2 + c, c)), i)
    for i in range(20):  # z3: AM-GM with a scale, positive quantities
        m = rng.randint(1, 9)
        add("amgm", "true", "proved", _p(pos, logic.ge(m * (x**2 + y**2), 2 * m * x * y)), i)
        add("amgm", "false", "refuted", _p(pos, logic.ge(m * (x**2 + y**2), (2 * m + 1) * x * y)), i)
    for i in range(24):  # bounds are hypotheses for z3 too
        lo, hi = _rat(rng, 1, 5), _rat(rng, 6, 40)
        b = {u: (lo, hi)}
        add("bounds", "true", "proved", _p([logic.gt(u, 0)], logic.le(u**2, hi**2), bounds=b), i)
        add("bounds", "false", "refuted", _p([logic.gt(u, 0)], logic.le(u**2, hi**2 - R(1, 100)), bounds=b), i)
    for i in range(14):  # interval engine: exp with a margin
        lo, hi = _rat(rng, -3, 0), _rat(rng, 1, 3)
        b = {u: (lo, hi)}
        top = sp.exp(hi) + hi
        add("exp", "true", "proved", _p([], logic.le(sp.exp(u) + u, top + R(1, 10)), bounds=b), i)
        add("exp", "false", "refuted", _p([], logic.le(sp.exp(u) + u, top - R(1, 10)), bounds=b), i)
    for i in range(14):  # interval engine: logarithms
        lo, hi = R(rng.randint(1, 10), 10), _rat(rng, 2, 6)
        b = {u: (lo, hi)}
        add("log", "true", "proved", _p([], logic.lt(sp.log(u), u), bounds=b), i)
        add("log", "false", "refuted", _p([], logic.lt(sp.log(u), u - R(11, 10)), bounds={u: (R(1, 2), hi)}), i)
    for i in range(16):  # denominators: a pole inside the box is never proved
        c = _rat(rng, -3, 3)
        add("pole", "true", "proved", _p([], logic.gt(1 / (u - c), 0), bounds={u: (c + R(1, 10), c + 5)}), i)
        add("pole", "meaningless", "unknown", _p([], logic.gt(1 / (u - c), 0), bounds={u: (c, c + 5)}), i)
    for i in range(12):  # the same with exp (the interval engine must see the pole)
        c = _rat(rng, -2, 2)
        add("exp_pole", "true", "proved",
            _p([], logic.gt(sp.exp(u) + 1 / (u - c) ** 2, 0), bounds={u: (c + R(1, 2), c + 3)}), i)
        add("exp_pole", "meaningless", "unknown",
            _p([], logic.gt(sp.exp(u) + 1 / (u - c) ** 2, 0), bounds={u: (c - 1, c + 2)}), i)
        add("exp_pole", "meaningless", "unknown", _p([], logic.gt(sp.exp(u) / (u - c), 0), bounds={u: (c, c + 2)}),
            i, "b")
    for i in range(12):  # logarithm domains
        c = _rat(rng, -2, 2)
        add("log_domain", "true", "proved", _p([], logic.lt(sp.log(u - c), 10), bounds={u: (c + R(1, 2), c + 2)}), i)
        add("log_domain", "meaningless", "unknown", _p([], logic.lt(sp.log(u - c), 10), bounds={u: (c, c + 2)}), i)
    for i in range(14):  # roots (z3 with auxiliary roots; counterexamples with irrational values)
        top = rng.randint(2, 6)
        add("cbrt", "true", "proved", _p([logic.ge(t, 0)], logic.le(t ** R(1, 3), top), bounds={t: (0, top**3)}), i)
        add("cbrt", "false", "refuted",
            _p([logic.ge(t, 0)], logic.le(t ** R(1, 3), top), bounds={t: (0, top**3 + 1)}), i)
    for i in range(12):
        lo = _rat(rng, 1, 3, 4)
        add("sqrt", "true", "proved", _p([logic.gt(u, 0)], logic.le(sp.sqrt(u), u), bounds={u: (1, lo + 10)}), i)
        add("sqrt", "false", "refuted", _p([logic.gt(u, 0)], logic.le(sp.sqrt(u), u), bounds={u: (R(1, 10), lo)}), i)
    for i in range(10):  # a root in a denominator needs a strictly positive radicand
        add("rsqrt", "true", "proved", _p([logic.gt(u, 0)], logic.gt(1 / sp.sqrt(u) + i, 0)), i)
        add("rsqrt", "meaningless", "unknown", _p([logic.ge(u, 0)], logic.gt(1 / sp.sqrt(u) + i, 0)), i)
    for i in range(16):  # integer quantities (z3)
        m = rng.randint(1, 5)
        add("int", "true", "proved", _p([logic.ge(n, m)], logic.ge(n**2, m * n), integer=[n]), i)
        add("int", "false", "refuted", _p([logic.ge(n, m)], logic.ge(n**2, m * n + 1), integer=[n]), i)
        add("int", "inconsistent", "inconsistent",
            _p([logic.gt(n, m), logic.lt(n, m + 1)], logic.ge(n, 10**6), integer=[n]), i, "c")
    for i in range(10):  # integer quantities with exp (interval engine; counterexamples must be integers)
        hi = rng.randint(4, 9)
        add("int_exp", "true", "proved", _p([], logic.ge(sp.exp(n), n + 1), integer=[n], bounds={n: (0, hi)}), i)
        add("int_exp", "false", "refuted", _p([], logic.ge(sp.exp(n), 3 * n), integer=[n], bounds={n: (0, hi)}), i)
        add("int_exp", "inconsistent", "inconsistent",
            _p([logic.gt(n, 1), logic.lt(n, 2)], logic.gt(sp.exp(n), 1), integer=[n]), i, "c")
    for i in range(16):  # sympy identities, with an undefined point when the hypotheses allow it
        s = rng.randint(1, 6)
        g = logic.eq(sp.exp(x) * (p**2 - s**2) / (p - s), sp.exp(x) * (p + s))
        add("identity_den", "true", "proved", _p([logic.gt(p, s)], g), i)
        add("identity_den", "meaningless", "unknown", _p([logic.gt(p, 0)], g), i)
    for i in range(14):  # identities and false twins (the false ones are refuted by the search)
        c = rng.randint(2, 5)
        add("identity", "true", "proved", _p([], logic.eq(sp.exp(c * x) * sp.exp(x), sp.exp((c + 1) * x))), i)
        add("identity", "false", "refuted", _p([], logic.eq(sp.exp(c * x) * sp.exp(y), sp.exp(c * x * y))), i)
        add("identity", "true", "proved", _p([], logic.eq((x + c) ** 2, x**2 + 2 * c * x + c**2)), i, "p")
        add("identity", "false", "refuted", _p([], logic.eq((x + c) ** 2, x**2 + c**2)), i, "p")
    for i in range(12):  # symbolic exponents
        hi = _rat(rng, 2, 5)
        b = {a: (R(1, 10), R(9, 10)), k: (R(1, 2), hi)}
        add("symexp", "true", "proved", _p([], logic.le(a**k, 1), bounds=b), i)
        add("symexp", "false", "refuted", _p([], logic.le(a**k, R(9, 10)), bounds=b), i)
    for i in range(12):  # symbolic exponents without bounds: the facts of a positive base's power (z3)
        c = rng.randint(2, 9)
        shrink = 1 - 1 / (x + c)  # in (0, 1) for x > 0
        add("sympow", "true", "proved", _p([logic.gt(x, 0), logic.gt(y, 0)], logic.lt(shrink ** y, 1)), i)
        add("sympow", "false", "refuted", _p([logic.gt(x, 0), logic.gt(y, 0)], logic.lt(shrink ** y, R(1, c))), i)
        add("sympow", "true", "proved", _p([logic.gt(x, 0)], logic.gt((x + c) ** (y - c) * x, 0)), i, "s")
        add("sympow", "false", "refuted", _p([logic.gt(x, 0), logic.gt(y, 0)], logic.ge(shrink ** y, 1)), i, "s")
        add("sympow", "true", "proved", _p([logic.gt(x, 1), logic.gt(y, 0)], logic.gt(x ** y, 1)), i, "g")
        add("sympow", "false", "refuted", _p([logic.gt(x, 1), logic.lt(y, 0)], logic.gt(x ** y, 1)), i, "g")
    for i in range(10):  # a Chinchilla-style exact exponent over a wide box
        top = 10 ** rng.randint(6, 14)
        b = {x: (1, top)}
        add("chinchilla", "true", "proved", _p([logic.gt(x, 0)], logic.le(x ** R(-17, 50), 1), bounds=b), i)
        add("chinchilla", "false", "refuted",
            _p([logic.gt(x, 0)], logic.ge(x ** R(-17, 50), R(1, 10)), bounds={x: (1, top)}), i)
    for i in range(12):  # Max / Min / Abs
        c = _rat(rng, -5, 5)
        add("maxmin", "true", "proved", _p([], logic.ge(sp.Max(x, c), x)), i)
        add("maxmin", "false", "refuted", _p([], logic.ge(sp.Min(x, c), x)), i)
        add("maxmin", "true", "proved", _p([], logic.ge(sp.Abs(x - c), 0)), i, "a")
        add("maxmin", "false", "refuted", _p([], logic.gt(sp.Abs(x - c), 0)), i, "a")
    for i in range(10):  # Piecewise: only the active branch must be defined
        c = _rat(rng, 1, 4)
        add("piecewise", "true", "proved", _p([], logic.ge(sp.Piecewise((c / x, x > 0), (0, True)), 0)), i)
        add("piecewise", "false", "refuted", _p([], logic.ge(sp.Piecewise((c / x, x > -1), (0, True)), 0)), i)
    for i in range(12):  # closed constants, close to their bound
        d = rng.randint(20, 40)
        e_up = sp.floor(sp.E * 10**d) + 1
        add("constant", "true", "proved", _p([], logic.lt(sp.exp(1), R(e_up, 10**d))), i)
        add("constant", "false", "refuted", _p([], logic.lt(sp.exp(1), R(e_up - 1, 10**d))), i)
        add("constant", "true", "proved", _p([], logic.lt(sp.E, sp.E + R(1, 10**d))), i, "b")
    for i in range(12):  # huge and tiny magnitudes
        big = 10 ** rng.randint(20, 40)
        add("magnitude", "true", "proved", _p([], logic.le(x, big), bounds={x: (0, big)}), i)
        add("magnitude", "false", "refuted", _p([], logic.lt(x, big), bounds={x: (0, big)}), i)
        tiny = R(1, 10 ** rng.randint(20, 40))
        add("magnitude", "true", "proved", _p([logic.gt(x, 0)], logic.gt(x + tiny, tiny)), i, "t")
        add("magnitude", "false", "refuted", _p([logic.gt(x, 0)], logic.gt(x * tiny, tiny)), i, "t")
    for i in range(12):  # hypotheses with divisions
        m = rng.randint(2, 6)
        add("ratio", "true", "proved", _p([*pos, logic.gt(x / y, m)], logic.gt(x, m * y)), i)
        add("ratio", "false", "refuted", _p([*pos, logic.gt(x / y, m)], logic.gt(x, (m + 1) * y)), i)
    for i in range(12):  # floats are refused, never folded
        f = float(10 ** -rng.randint(17, 30))
        add("float", "meaningless", "unknown", _p([logic.gt(p, 0)], logic.eq(p + f * p, p)), i)
        add("float", "meaningless", "unknown",
            _p([logic.gt(p, 0)], logic.eq(p * 0.1, p * (R(1, 10) + R(1, 10**18)))), i, "b")
    for i in range(12):  # within_percent with a negative target
        target = -rng.randint(1, 1000)
        pct = rng.randint(1, 20)
        add("percent", "true", "proved", _p([logic.eq(x, target)], logic.within_percent(x, target, pct)), i)
        add("percent", "true", "proved",
            _p([logic.eq(x, target * (1 + R(pct, 200)))], logic.within_percent(x, target, pct)), i, "b")
        add("percent", "false", "refuted",
            _p([logic.eq(x, target * (1 + R(2 * pct, 100)))], logic.within_percent(x, target, pct)), i, "c")
    for i in range(12):  # inconsistent hypotheses
        c = _rat(rng, -10, 10)
        add("inconsistent", "inconsistent", "inconsistent", _p([logic.gt(x, c), logic.lt(x, c - 1)], logic.ge(x, 0)), i)
        add("inconsistent", "inconsistent", "inconsistent",
            _p([logic.gt(x, c), logic.lt(x, c - 1)], logic.ge(sp.exp(x), 0)), i, "e")
    for i in range(16):  # z3: a cubic whose truth depends on the hypotheses' region
        c = rng.randint(1, 9)
        add("cubic", "true", "proved", _p([logic.ge(x, c)], logic.ge(x**3 - c**2 * x, 0)), i)
        add("cubic", "false", "refuted", _p([logic.ge(x, 0)], logic.ge(x**3 - c**2 * x, 0)), i)
    for i in range(8):  # bounds written high-to-low: refused, never a crash
        add("bounds_order", "meaningless", "unknown", _p([], logic.le(u, 100), bounds={u: (R(10), R(1, 10))}), i)
    return out


def assert_honest(truth: bool | None, verdict: str, detail: object = None) -> None:
    """The verdict a claim of known ``truth`` may get: a true one never ``refuted``, a false one never
    ``proved``, a meaningless one (None) neither; ``unknown`` is always allowed."""
    allowed = {True: ("proved", "unknown"), False: ("refuted", "unknown")}.get(truth, ("unknown", "inconsistent"))
    assert verdict in allowed, (verdict, detail)
