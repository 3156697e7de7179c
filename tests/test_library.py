"""Library construction: graph, cycles, missing dependencies, dimensions, look-ups."""

from __future__ import annotations

import pytest
import sympy as sp
from libtools import make_library

from derive import Assumption, Claim, Definition, Quantity, derived, logic
from derive.errors import AmbiguousNameError, DimensionError, LibraryError, UnknownNameError

SRC = derived("test")
bw = Quantity("bw", "W", "byte/s", "bandwidth")
cap = Quantity("cap", "C", "byte", "capacity")
drain = Quantity("drain", "T", "s", "drain time")
rate = Quantity("rate", "F", "FLOP/s", "compute rate")


def test_definition_dimension_checked():
    bad = Definition("t.drain", title="d", statement="s", source=SRC, defines=drain, expr=bw.sym / cap.sym)
    with pytest.raises(DimensionError, match=r"declared in s but its formula gives 1/s"):
        make_library(bw, cap, drain, bad)


def test_sum_of_unlike_terms_names_both_units():
    claim = Claim("t.c", title="c", statement="s", source=SRC, goal=logic.ge(bw.sym + rate.sym, 0))
    with pytest.raises(DimensionError, match=r"byte/s.*FLOP/s|FLOP/s.*byte/s"):
        make_library(bw, rate, claim)


def test_relation_sides_checked():
    claim = Claim("t.c", title="c", statement="s", source=SRC, goal=logic.ge(bw.sym, cap.sym))
    with pytest.raises(DimensionError, match=r"differ: byte/s vs byte"):
        make_library(bw, cap, claim)


def test_cycle_reports_path():
    a = Quantity("aa", "a", "1", "a")
    b = Quantity("bb", "b", "1", "b")
    da = Definition("t.da", title="a", statement="s", source=SRC, defines=a, expr=b.sym + 1)
    db = Definition("t.db", title="b", statement="s", source=SRC, defines=b, expr=a.sym * 2)
    with pytest.raises(LibraryError, match=r"dependency cycle: t\.d[ab] -> t\.d[ab] -> t\.d[ab]"):
        make_library(a, b, da, db)


def test_missing_dependency_is_an_error():
    outside = Assumption("other.fact", title="f", statement="s", source=SRC)
    claim = Claim("t.c", title="c", statement="s", source=SRC, goal=logic.ge(cap.sym, 0), uses=(outside,))
    with pytest.raises(LibraryError, match=r"depends on 'other.fact', which is not in the library"):
        make_library(cap, claim)


def test_undeclared_symbol_is_an_error():
    claim = Claim("t.c", title="c", statement="s", source=SRC, goal=logic.ge(sp.Symbol("ghost"), 0))
    with pytest.raises(LibraryError, match="ghost"):
        make_library(claim)


def test_graph_rests_on_and_expand():
    fact = Assumption("t.fact", title="f", statement="s", source=SRC, relation=logic.ge(cap.sym, 1))
    d = Definition("t.drain", title="d", statement="s", source=SRC, defines=drain, expr=cap.sym / bw.sym)
    c = Claim("t.c", title="c", statement="s", source=SRC, goal=logic.gt(drain.sym, 0), uses=(fact,))
    lib = make_library(bw, cap, drain, fact, d, c)
    assert set(lib.graph.predecessors("t.c")) == {"t.drain", "t.fact"}
    assert lib.rests_on(c) == ["t.fact"]
    assert lib.expand(drain.sym) == cap.sym / bw.sym
    assert lib.expand(drain.sym, pinned=["drain"]) == drain.sym
    assert [x.id for x in lib.topological()].index("t.drain") < [x.id for x in lib.topological()].index("t.c")


def test_expansions_are_remembered_per_expression_and_pinning():
    d = Definition("t.drain", title="d", statement="s", source=SRC, defines=drain, expr=cap.sym / bw.sym)
    lib = make_library(bw, cap, drain, d)
    e = 2 * drain.sym
    first = lib.expand(e)
    assert lib.expand(e) is first and first == 2 * cap.sym / bw.sym
    assert lib.expand(e, pinned=["drain"]) == e  # the pinning is part of what is remembered
    assert lib.expand(sp.Float(2.0) * drain.sym).has(sp.Float)  # equal in value, not the same expression


def test_resolve_short_full_ambiguous_unknown():
    c1 = Claim("t.same", title="c", statement="s", source=SRC, goal=logic.ge(cap.sym, 0))
    c2 = Claim("u.same", title="c", statement="s", source=SRC, goal=logic.ge(cap.sym, 0))
    c3 = Claim("t.batch_optimum", title="c", statement="s", source=SRC, goal=logic.ge(cap.sym, 0))
    lib = make_library(cap, c1, c2, c3)
    assert lib.resolve("t.same") is c1
    assert lib.resolve("batch_optimum") is c3
    with pytest.raises(AmbiguousNameError):
        lib.resolve("same")
    with pytest.raises(UnknownNameError, match="did you mean"):
        lib.resolve("batch_optimm")


def test_duplicate_quantity_names_refused():
    other = Quantity("cap", "C'", "byte", "another capacity")
    with pytest.raises(LibraryError, match="two different quantities"):
        make_library(cap, other)


def test_a_quantity_named_twice_in_two_topics_names_both_and_how_to_mend_it():
    from derive.model.declarations import Topic
    from derive.model.library import Library

    other = Quantity("cap", "C'", "byte", "another capacity")
    with pytest.raises(LibraryError) as info:
        Library([Topic("mine", "mine", "", (cap,), ()), Topic("yours", "yours", "", (other,), ())])
    assert "topic mine declares one, topic yours another" in info.value.message
    assert "import the other's quantity instead of declaring it again (from the module of topic mine)" in \
        info.value.hint


@pytest.mark.parametrize("bad", [
    lambda: Claim("nodot", title="c", statement="s", source=SRC, goal=logic.ge(cap.sym, 0)),
    lambda: Claim("t.c", title="", statement="s", source=SRC, goal=logic.ge(cap.sym, 0)),
    lambda: Claim("t.c", title="c", statement="s", source=SRC, goal=cap.sym > 0),
    lambda: Claim("t.c", title="c", statement="s", source=SRC, goal=logic.ge(cap.sym, 0), expected="maybe"),
    lambda: Quantity("Bad Name", "x", "1", "m"),
    lambda: Quantity("k", "k", "parsec", "m"),
    lambda: Quantity("k", "k", "1", "m", value=2),
])
def test_malformed_declarations(bad):
    from derive.errors import DeriveError

    with pytest.raises(DeriveError):
        bad()


def test_repr_latex_for_notebooks():
    c = Claim("t.c", title="A title", statement="s", source=SRC, goal=logic.ge(cap.sym, 0))
    assert "A title" in c._repr_latex_()
    assert cap._repr_latex_().startswith("$C")


@pytest.mark.parametrize("title, statement, refused", [
    ("plain title", "a statement\nover two lines\twith a tab", False),
    ("no\u00a0break space", "s", False),  # unprintable to Python, but not a control character
    ("t\r  proved", "s", True), ("t\x1b[2K", "s", True), ("t\u202e", "s", True), ("t\u2028", "s", True),
    ("t\tab", "s", True),  # a tab is allowed in prose only
    ("t", "s\x1b[1m", True),
])
def test_control_characters_are_refused_in_library_text(title, statement, refused):
    from derive import Claim, Quantity, derived, logic
    from derive.errors import LibraryError

    q = Quantity("widget_count", "m", "1", "widgets in one batch")

    def make():
        return Claim("mine.c", title=title, statement=statement, source=derived("x"), goal=logic.ge(q.sym, 0))

    if refused:
        with pytest.raises(LibraryError, match="control character"):
            make()
    else:
        make()


@pytest.mark.parametrize("make", [lambda: Quantity("xx\n", "x", "1", "a name with a final newline"),
                                  lambda: Claim("o.c\n", title="t", statement="s", source=derived("test"),
                                                goal=logic.gt(sp.Integer(1), 0))])
def test_a_name_or_id_with_a_final_newline_is_refused(make):
    # "$" matches before a final newline: "xx\n" sat beside "xx", and split the check's lines and certificates
    with pytest.raises(LibraryError, match="snake_case"):
        make()
