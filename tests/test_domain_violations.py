"""A scenario value outside its quantity's domain (or a non-integer for an integer quantity) becomes a false
hypothesis (``Library.domain_violations``); the answers are kept per quantity and value, so asking again, or
with an equal value of another type, gives each value its own answer."""

from __future__ import annotations

import sympy as sp
from libtools import make_library

from derive import Quantity
from derive.kernel.logic import Rel

n = Quantity("n", "n", "1", "a count", integer=True)
w = Quantity("w", "w", "1", "a width")  # positive
z = Quantity("z", "z", "1", "an offset", domain="real")


def test_values_inside_their_domains_break_nothing():
    lib = make_library(n, w, z)
    assert lib.domain_violations([n.sym, w.sym, z.sym], {n.sym: sp.Integer(3), w.sym: sp.Rational(1, 2),
                                                         z.sym: sp.Integer(-4)}) == []


def test_each_value_breaks_what_it_breaks_every_time_it_is_asked():
    lib = make_library(n, w, z)
    values = {n.sym: sp.Rational(5, 2), w.sym: sp.Integer(-1)}
    first = lib.domain_violations([w.sym, n.sym, z.sym], values)
    assert [str(f) for f in first] == ["n == 2", "w > 0"]  # by name; the integer rule false at 5/2
    assert lib.domain_violations([n.sym, w.sym], values) == first
    assert lib.domain_violations([w.sym], {w.sym: sp.Integer(2)}) == []


def test_an_equal_value_of_another_type_gets_its_own_answer():
    lib = make_library(n)
    one, one_float = sp.Integer(1), sp.Float(1.0)
    assert lib.domain_violations([n.sym], {n.sym: one}) == []
    assert lib.domain_violations([n.sym], {n.sym: one_float}) == [Rel(n.sym, "==", sp.floor(one_float))]  # no integer
    assert lib.domain_violations([n.sym], {n.sym: one}) == []
