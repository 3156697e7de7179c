"""A definition's obligation (``Checker.obligation``: its expression meets what its quantity declares, under the
library's assumptions linked to it).  It is first decided from the declared domains and the definition's own
conditions alone, where the kernel confirms a point of the whole region: the findings are those of the whole
problem, which is decided whenever that shorter route does not prove it."""

from __future__ import annotations

from derive import Assumption, Definition, Quantity, derived, logic
from derive.checking.checker import Checker
from derive.model.declarations import Topic
from derive.model.library import Library
from derive.model.scenario import Scenario

SRC = derived("obligations")


def Q(name, domain="positive"):  # noqa: N802 - reads like the constructor it wraps
    return Quantity(name, name, "1", name, domain=domain)


def D(name, q, expr):  # noqa: N802
    return Definition(f"t.{name}", title=name, statement="s", source=SRC, defines=q, expr=expr)


def A(name, relation):  # noqa: N802
    return Assumption(f"t.{name}", title=name, statement="s", source=SRC, relation=relation)


def findings(*items):
    quantities = tuple(i for i in items if isinstance(i, Quantity))
    decls = tuple(i for i in items if not isinstance(i, Quantity))
    checker = Checker(Library([Topic("t", "t", "", quantities, decls)]), Scenario("s", {}), rlimit=2_000_000)
    return [(f.definition, f.verdict) for f in checker.obligations()]


a, b = Q("a"), Q("b")
square = Q("square", domain="nonnegative")  # (a - b)**2 expanded: nonnegative, but not by its structure
square_def = D("square", square, a.sym**2 - 2 * a.sym * b.sym + b.sym**2)
gap = Q("gap")  # a - b: positive only where a > b is assumed
gap_def = D("gap", gap, a.sym - b.sym)


def test_an_obligation_met_by_the_domains_alone_is_no_finding():
    assert findings(a, b, square, square_def) == []
    assert findings(a, b, square, square_def, A("a_small", logic.lt(a.sym, 10))) == []


def test_an_obligation_that_needs_an_assumption_reads_it():
    assert findings(a, b, gap, gap_def, A("a_gt_b", logic.gt(a.sym, b.sym))) == []


def test_an_obligation_without_the_assumption_it_needs_is_refuted():  # the planted twin of the one above
    assert findings(a, b, gap, gap_def) == [("t.gap", "refuted")]
    assert findings(a, b, gap, gap_def, A("a_small", logic.lt(a.sym, 10))) == [("t.gap", "refuted")]


def test_contradictory_assumptions_stay_an_inconsistent_finding():
    # met by the domains alone, yet the assumptions linked to it have no common point: still reported
    contradictory = (A("a_big", logic.gt(a.sym, 2)), A("a_tiny", logic.lt(a.sym, 1)))
    assert findings(a, b, square, square_def, *contradictory) == [("t.square", "inconsistent")]
    assert findings(a, b, gap, gap_def, A("a_gt_b", logic.gt(a.sym, b.sym)), *contradictory) == \
        [("t.gap", "inconsistent")]

