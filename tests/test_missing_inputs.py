"""Which inputs a value needs: a factor the given values make zero leaves the rest unneeded, unless a side
condition (a denominator) still reads them; a denominator that the declared signs of its quantities keep away from
zero (a bandwidth, positive) is no such condition, and one of a quantity of any sign is."""

from __future__ import annotations

import sympy as sp
from libtools import make_library

from derive import Definition, Quantity, derived
from derive.errors import MissingValueError
from derive.model.evaluate import evaluate
from derive.model.scenario import Scenario, ScenarioValue

count = Quantity("count", "c", "1", "a count", domain="positive")
speed = Quantity("speed", "v", "1", "a positive rate", domain="positive")
share = Quantity("share", "s", "1", "a share", domain="fraction")
offset = Quantity("offset", "o", "1", "a number of either sign", domain="real")
slow = Quantity("slow", "t_1", "1", "zero with one count")
shifted = Quantity("shifted", "t_2", "1", "zero with one count, over a number of either sign")
summed = Quantity("summed", "t_3", "1", "zero with one count, over a sum of a rate and a share")
LIB = make_library(
    count, speed, share, offset, slow, shifted, summed,
    Definition("t.slow", title="slow", statement="s", source=derived("a test"), defines=slow,
               expr=(count.sym - 1) / sp.Min(speed.sym, 2 * speed.sym)),
    Definition("t.shifted", title="shifted", statement="s", source=derived("a test"), defines=shifted,
               expr=(count.sym - 1) / offset.sym),
    Definition("t.summed", title="summed", statement="s", source=derived("a test"), defines=summed,
               expr=(count.sym - 1) / (speed.sym + share.sym)),
)


def _at(**values) -> Scenario:
    return Scenario("s", {n: ScenarioValue(n, sp.Rational(v), "test") for n, v in values.items()})


def test_a_zero_factor_over_a_declared_positive_denominator_needs_nothing_else() -> None:
    assert evaluate(LIB, _at(count=1), "slow").exact == 0
    assert evaluate(LIB, _at(count=1), "summed").exact == 0  # positive plus non-negative: positive


def test_a_denominator_of_either_sign_is_still_asked_for() -> None:
    try:
        evaluate(LIB, _at(count=1), "shifted")
    except MissingValueError as err:
        assert list(err.names) == ["offset"]
    else:
        raise AssertionError("a denominator that may be zero must be given")


def test_the_value_is_the_same_once_the_denominator_is_given() -> None:
    assert evaluate(LIB, _at(count=1, speed=3), "slow").exact == 0
    assert evaluate(LIB, _at(count=3, speed=4), "slow").exact == sp.Rational(1, 2)
