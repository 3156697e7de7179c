"""The caches, the API's library loading, diff, sweep and kernel readings around the what-if tools, each case a
defect that was seen, with its minimal example.  The output cache: a file a library looked for and did not find is
an input too (its later appearance must invalidate).
"""

from __future__ import annotations

import pytest
import sympy as sp

from derive import Claim, Quantity, derived, logic
from derive.model.declarations import Topic
from derive.model.library import Library
from derive.model.scenario import Scenario, ScenarioValue

R = sp.Rational
SRC = derived("red team 3")


def Q(name, domain="real", integer=False):  # noqa: N802 - reads like the constructor it wraps
    return Quantity(name, name, "1", name, domain=domain, integer=integer)


def scen(**values):
    return Scenario("s", {k: ScenarioValue(k, R(v), "test") for k, v in values.items()})


# the output cache: a file looked for and missing is an input ----------------------------------------------

OPTIONAL = '''
"""Reads an optional limit file when it exists."""
from derive import Claim, Quantity, derived, logic
from derive.errors import DeriveError

LIMIT = 5
try:
    with open({path!r}) as fh:
        LIMIT = int(fh.read())
except FileNotFoundError:
    pass
xq = Quantity("xq", "x", "1", "x")
c = Claim("o.c", title="c", statement="s", source=derived("rt3"), goal=logic.le(xq.sym, LIMIT), instance=True)
'''

PROBED = '''
"""Tightens its claim when a flag file exists (an existence probe, no read)."""
import os
from derive import Claim, Quantity, derived, logic
from derive.errors import DeriveError

LIMIT = 3 if os.path.exists({path!r}) else 5
xq = Quantity("xq", "x", "1", "x")
c = Claim("o.c", title="c", statement="s", source=derived("rt3"), goal=logic.le(xq.sym, LIMIT), instance=True)
'''


@pytest.mark.parametrize("source", [OPTIONAL, PROBED], ids=["opened", "probed"])
def test_output_cache_a_missing_file_that_appears_invalidates(tmp_path, capsys, monkeypatch, source):
    from derive.cli import main

    flag = tmp_path / "data" / "limit.txt"
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "optional.py").write_text(source.format(path=str(flag)))
    argv = ["check", "--library", str(folder), "--set", "xq=4", "--cache-dir", str(tmp_path / "c")]
    monkeypatch.setattr("sys.argv", ["derive", *argv])
    assert main(argv, replay=True) == 0
    assert main(argv, replay=True) == 0  # replayed
    capsys.readouterr()
    flag.parent.mkdir()
    flag.write_text("3")
    assert main(argv, replay=True) == 1, "a stale verdict was replayed"
    assert "refuted" in capsys.readouterr().out


# the proof cache: an intact entry with a malformed counterexample is a miss -------------------------------

@pytest.mark.parametrize("value", ["1/0", "nan", "oo", "x", "-1", "1/2"])
def test_proof_cache_entry_with_a_malformed_counterexample_is_a_miss(tmp_path, value):
    """A sealed entry (intact checksum) whose counterexample is "1/0" crashed the read (ZeroDivisionError);
    one that does not refute the problem is recomputed."""
    from derive.checking.cache import ProofCache, seal
    from derive.kernel.problem import Problem

    x = sp.Symbol("x")
    problem = Problem([logic.Rel(x, ">", 0)], logic.Rel(x, "<", 1))
    cache = ProofCache(tmp_path)
    key = cache.key(problem)
    assert cache.write_entry(key, seal("proof", key, {"verdict": "refuted", "engine": "z3", "reason": None,
                                                      "recheck": None, "counterexample": {"x": value},
                                                      "side_conditions": []}))
    outcome, ran = cache.decide(problem)
    assert ran and outcome.verdict == "refuted" and outcome.counterexample["x"] >= 1


# the notebook API: an edited library is read again -------------------------------------------------------

LIMITED = '''
from derive import Claim, Quantity, derived, logic

xq = Quantity("xq", "x", "1", "x")
c = Claim("o.c", title="c", statement="s", source=derived("rt3"), goal=logic.le(xq.sym, {limit}), instance=True)
'''


@pytest.mark.parametrize("layout", ["file", "folder", "package"])
def test_api_load_reads_an_edited_library_again(tmp_path, layout):
    """``derive.load(path)`` kept the first library it read for the whole process: a notebook that edited
    its claim and checked again got the old verdict."""
    import derive

    folder = tmp_path / f"edited_{layout}_lib"
    folder.mkdir()
    module = folder / ("__init__.py" if layout == "package" else "mine.py")
    spec = str(module if layout == "file" else folder)
    verdicts = []
    for limit in (5, 3):
        module.write_text(LIMITED.format(limit=limit))
        lib = derive.load(spec)
        verdicts.append(derive.check("o.c", library=lib, set={"xq": "4"})["o.c"].verdict)
    assert verdicts == ["proved", "refuted"]


# derive.logic: within_factor with a factor below 1 -------------------------------------------------------

def test_within_factor_below_one_is_the_same_range_as_its_inverse():
    """within_factor(x, 100, 1/2) was 200 <= x <= 50: x = 100 was refuted."""
    from derive.checking.checker import Checker

    xq = Q("x")
    for factor, truth in ((R(1, 2), "proved"), (2, "proved")):
        claim = Claim("t.c", title="c", statement="s", source=SRC, goal=logic.within_factor(xq.sym, 100, factor),
                      hypotheses=(logic.eq(xq.sym, 199),))
        lib = Library([Topic("t", "t", "", (xq,), (claim,))])
        assert Checker(lib, scen()).check().by_id()["t.c"].verdict == truth
    for bad in (0, -2):
        with pytest.raises(ValueError):
            logic.within_factor(xq.sym, 100, bad)


# sweeps: an undefined point never holds, whatever the Boolean structure ----------------------------------

def test_sweep_formula_is_false_where_any_part_is_undefined():
    """not (sqrt(x) < 1) "held" at x = -1: the relation was made false there and ``not`` turned it true."""
    import numpy as np

    from derive.whatif.sweep import numpy_formula

    x = sp.Symbol("x")
    pts = np.array([-1.0, 0.0, 4.0])
    f = numpy_formula(logic.Not(logic.lt(sp.sqrt(x), 1)), [x])
    assert list(f(pts)) == [False, False, True]
    g = numpy_formula(logic.Implies(logic.gt(1 / x, 0), logic.gt(x, 5)), [x])
    assert list(g(pts)) == [True, False, False]


def test_a_false_assumption_without_quantities_is_inconsistent_beyond_z3():
    """--assume "exp(x) + x**3 <= 1" at x = 5: z3 cannot read exp(5), so the claim was unknown ("could not
    establish that the assumptions are satisfiable"); the closed assumption is false, exactly."""
    from derive.kernel.problem import Problem
    from derive.kernel.prover import decide

    false = logic.Rel(sp.exp(5) + 125, "<=", 1)
    assert decide(Problem([false], logic.Rel(sp.Integer(1), ">", 0))).verdict == "inconsistent"
    true = logic.Rel(sp.exp(5) + 125, ">=", 1)
    assert decide(Problem([true], logic.Rel(sp.Integer(1), ">", 0))).verdict == "proved"
    undefined = logic.Rel(sp.log(sp.Integer(-1) + sp.exp(0) - 1), "<=", 1)  # undefined: not a contradiction
    assert decide(Problem([undefined], logic.Rel(sp.Integer(1), ">", 0))).verdict != "inconsistent"


# diff: a claim's bounds are part of what a changed value reaches ----------------------------------------

def test_diff_rechecks_a_claim_whose_bounds_read_a_changed_value():
    """x <= 100 stated on 1 <= d <= 10, d := a*b: a from 2 to 20 puts d = 60 outside its bounds (check says
    inconsistent), but diff kept the baseline's "proved" (the claim's bounds were not in its reach)."""
    from derive import Definition
    from derive.checking.checker import Checker
    from derive.whatif.diff import diff

    xq, aq, bq, dq = Q("x", "positive"), Q("a", "positive"), Q("b", "positive"), Q("d", "positive")
    ddef = Definition("t.d", title="d", statement="s", source=SRC, defines=dq, expr=aq.sym * bq.sym)
    claim = Claim("t.c", title="c", statement="s", source=SRC, goal=logic.le(xq.sym, 100), bounds=((dq, 1, 10),),
                  instance=True)
    lib = Library([Topic("t", "t", "", (xq, aq, bq), (ddef, claim))])
    base, now = scen(x=5, a=2, b=3), scen(x=5, a=20, b=3)
    assert Checker(lib, now).check().by_id()["t.c"].verdict == "inconsistent"
    report = diff(lib, base, now)
    assert report.before["t.c"].verdict == "proved" and report.after["t.c"].verdict == "inconsistent"
