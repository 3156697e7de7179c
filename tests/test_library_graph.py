"""The library's dependency graph: its own walks agree with networkx's on the built-in libraries, and a
check does not import networkx (the graph as a networkx object is made only where it is asked for)."""

from __future__ import annotations

import subprocess
import sys

import networkx as nx
import pytest
from libtools import make_library

from derive import Assumption, Claim, Definition, Quantity, derived, logic
from derive.model.loader import load_library

SRC = derived("test")


@pytest.fixture(scope="module")
def both():
    return load_library(["lecture", "serving"])


def test_topological_order_is_networkx_lexicographical_order(both):
    order = {d.id: i for i, d in enumerate(both.ordered())}
    expected = list(nx.lexicographical_topological_sort(both.graph, key=order.get))
    assert [d.id for d in both.topological()] == expected


def test_ancestors_descendants_and_predecessors_are_networkx_ones(both):
    g = both.graph
    for decl_id in both.declarations:
        assert both.ancestors(decl_id) == nx.ancestors(g, decl_id)
        assert both.descendants(decl_id) == nx.descendants(g, decl_id)
        assert both.predecessors(decl_id) == list(g.predecessors(decl_id))


def test_graph_holds_every_declaration_in_order_and_each_edge_once():
    a = Quantity("aa", "a", "1", "a")
    b = Quantity("bb", "b", "1", "b")
    fact = Assumption("t.fact", title="f", statement="s", source=SRC, relation=logic.ge(a.sym, 1))
    db = Definition("t.db", title="b", statement="s", source=SRC, defines=b, expr=2 * a.sym)
    # uses the definition twice over: through its quantity and explicitly
    claim = Claim("t.c", title="c", statement="s", source=SRC, goal=logic.ge(b.sym, 2), uses=(fact, db))
    lib = make_library(a, b, fact, db, claim)
    assert list(lib.graph.nodes) == ["t.fact", "t.db", "t.c"]
    assert sorted(lib.graph.edges) == [("t.db", "t.c"), ("t.fact", "t.c")]
    assert lib.predecessors("t.c") == ["t.db", "t.fact"]
    assert lib.ancestors("t.c") == {"t.db", "t.fact"} and lib.descendants("t.fact") == {"t.c"}
    assert [d.id for d in lib.topological()] == ["t.fact", "t.db", "t.c"]


def test_a_later_declaration_waits_for_what_it_uses():
    a = Quantity("aa", "a", "1", "a")
    b = Quantity("bb", "b", "1", "b")
    claim = Claim("t.c", title="c", statement="s", source=SRC, goal=logic.ge(b.sym, 0))
    db = Definition("t.db", title="b", statement="s", source=SRC, defines=b, expr=a.sym + 1)
    lib = make_library(a, b, claim, db)  # declared before the definition it uses
    assert [d.id for d in lib.topological()] == ["t.db", "t.c"]


def test_a_check_does_not_import_networkx(tmp_path):
    code = ("import sys; from derive.cli import main; "
            f"code = main(['check', '--cache-dir', {str(tmp_path)!r}]); "
            "print('networkx' in sys.modules, code)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "False 0"
