"""Certificates: SMT-LIB2 queries whose unsat establishes a verdict, JSON interval trees, their re-check by
cvc5 and by the interval replayer, and the folder and command line around them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import sympy as sp

from derive.certify import replay, smt2
from derive.certify.recheck import cvc5_available, recheck, recheck_one, run_cvc5
from derive.certify.writer import certificate, write
from derive.errors import CertificateError
from derive.kernel import logic
from derive.kernel.logic import Not
from derive.kernel.problem import Problem
from derive.kernel.prover import decide

R = sp.Rational
x, y, c, B = sp.symbols("x y c B")
needs_cvc5 = pytest.mark.skipif(not cvc5_available(), reason="cvc5 not installed")

# (problem, verdict): each true statement with a false twin whose query cvc5 finds satisfiable
PROVED = {
    "linear_integer_ceiling": Problem([logic.ge(8 * c, 2 * B), logic.lt(8 * c, 2 * B + 8), logic.ge(B, 1)],
                                      logic.le(8 * c - 2 * B, 6), {c, B}),
    "division_with_side_condition": Problem([logic.gt(x, 0), logic.gt(y, x)], logic.gt(y / x, 1)),
    "square_root": Problem([logic.ge(x, 4)], logic.ge(sp.sqrt(x), 2)),
    "mixed_integer": Problem([logic.ge(c, 1), logic.gt(x, R(1, 3))], logic.gt(c * x, R(1, 4)), {c}),
    # a power with a symbolic exponent: the facts every real power of a positive base meets (z3 and cvc5 alike)
    "symbolic_power": Problem([logic.gt(x, 0), logic.gt(y, 0)], logic.lt((1 - 1 / (x + 2)) ** y, 1)),
}
TWINS = {
    "linear_integer_ceiling": logic.le(8 * c - 2 * B, 5),
    "division_with_side_condition": logic.gt(y / x, 2),
    "square_root": logic.ge(sp.sqrt(x), 3),
    "mixed_integer": logic.gt(c * x, R(1, 2)),
    "symbolic_power": logic.lt((1 - 1 / (x + 2)) ** y, R(1, 2)),
}


def _cert(problem, claim="c"):
    out = decide(problem)
    assert out.verdict in ("proved", "inconsistent"), out.reason
    return certificate(claim, "test", problem, out)


@needs_cvc5
@pytest.mark.parametrize("name", sorted(PROVED))
def test_cvc5_confirms_a_proof_and_rejects_its_false_twin(name):
    cert = _cert(PROVED[name])
    assert cert.kind == "smt2"
    assert run_cvc5(cert.text)[0] == "unsat"
    twin = PROVED[name]
    # the same query with the false twin's goal: cvc5 must not call it unsat
    tampered = smt2.query(sorted(twin.symbols() | TWINS[name].free_symbols(), key=str), twin.integer,
                          [*twin.hypotheses, Not(TWINS[name])])
    assert run_cvc5(tampered)[0] == "sat"
    assert recheck_one(name, "smt2", tampered, True).status == "disagrees"


def test_linear_integer_query_is_qf_lia_with_integer_coefficients():
    text = _cert(PROVED["linear_integer_ceiling"]).text
    assert "(set-logic QF_LIA)" in text and "(declare-fun c () Int)" in text
    assert "(assert (not (<= (+ (* (- 2) B) (* 8 c) (- 6)) 0)))" not in text  # the goal is or-ed with side conditions
    assert "(check-sat)" in text


@pytest.mark.parametrize("relation", [logic.gt(sp.Integer(1), 0), logic.le(sp.Integer(-3), 0),
                                      logic.Rel(sp.Integer(0), "!=", sp.Integer(1))])
def test_a_linear_integer_relation_without_a_quantity_is_well_formed(relation):
    # a hypothesis whose quantities the scenario fixed (stages = 4) leaves a constant: SMT-LIB2's + takes two or
    # more arguments, so a lone constant is printed bare (cvc5 refused "(+ 1)")
    m = sp.Symbol("m")
    text = smt2.query([m], [m], [logic.eq(m, 1), relation])
    assert "(+ 1)" not in text and "(+ (- 3))" not in text and "(+ 0)" not in text
    if cvc5_available():
        assert run_cvc5(text)[0] in ("sat", "unsat")


def test_exact_rationals_are_printed_exactly():
    assert smt2.real(R(-3, 7)) == "(- (/ 3.0 7.0))"
    assert smt2.real(R(10**30)) == f"{10**30}.0"


def test_inconsistent_assumptions_have_a_region_certificate():
    problem = Problem([logic.gt(2 * c, 1), logic.lt(2 * c, 2)], logic.ge(c, 5), {c})
    cert = _cert(problem)
    assert cert.verdict == "inconsistent" and "(set-logic QF_LIA)" in cert.text
    if cvc5_available():
        assert run_cvc5(cert.text)[0] == "unsat"


def test_no_certificate_for_a_refuted_claim():
    problem = Problem([logic.gt(x, 0)], logic.gt(x, 1))
    with pytest.raises(CertificateError):
        certificate("c", "test", problem, decide(problem))


# the interval replayer -----------------------------------------------------------------------------------

INTERVAL = Problem([], logic.gt(sp.exp(x), x), set(), {x: (R(-3), R(3))})


def test_interval_proof_is_replayed_and_a_tampered_tree_is_caught():
    cert = _cert(INTERVAL)
    assert cert.kind == "interval"
    assert replay.replay(cert.text).status == "confirmed"
    data = json.loads(cert.text)
    data["goal"] = {"rel": "<", "lhs": ["exp", ["sym", "x"]], "rhs": ["sym", "x"]}  # the false twin
    assert replay.replay(json.dumps(data)).status == "disagrees"
    data = json.loads(cert.text)
    data["quantities"][0]["high"] = "4"  # a tree that no longer covers the stated box
    assert replay.replay(json.dumps(data)).status != "confirmed"


def test_replayer_is_written_apart_from_the_kernel():
    import ast

    tree = ast.parse(open(replay.__file__, encoding="utf-8").read())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any(m and m.startswith("derive") for m in imported), imported


# folders and the command line -------------------------------------------------------------------------------

def test_folder_round_trip_reports_each_claim(tmp_path):
    certs = [_cert(PROVED["linear_integer_ceiling"], "a"), _cert(INTERVAL, "b")]
    write(tmp_path, certs, {"z": "no form"})
    results = {r.claim: r for r in recheck(tmp_path)}
    assert results["b"].status == "confirmed"
    assert results["z"].status == "not confirmed" and "no form" in results["z"].reason
    expected = "confirmed" if cvc5_available() else "not confirmed"
    assert results["a"].status == expected
    if not cvc5_available():
        assert results["a"].reason.startswith("cvc5 not installed")


def test_recheck_of_a_missing_folder_is_one_line_exit_2(tmp_path):
    out = subprocess.run([sys.executable, "-m", "derive", "recheck", str(tmp_path / "none")],
                         capture_output=True, text=True)
    assert out.returncode == 2 and len(out.stderr.splitlines()) == 1 and "certificate index" in out.stderr


def test_certificates_are_byte_identical_across_hash_seeds(tmp_path):
    code = ("import sys; sys.path.insert(0, {tests!r}); from test_certificates import PROVED, INTERVAL, _cert;"
            "print(''.join(_cert(p).text for p in [*PROVED.values(), INTERVAL]))")
    tests = os.path.dirname(__file__)
    texts = {subprocess.run([sys.executable, "-c", code.format(tests=tests)], capture_output=True, text=True,
                            env={**os.environ, "PYTHONHASHSEED": seed}, check=True).stdout for seed in ("1", "99")}
    assert len(texts) == 1


def _cli(capsys, *argv):
    from derive.cli import main

    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_check_writes_certificates_and_rechecks_them(capsys, tmp_path):
    code, out, _ = _cli(capsys, "check", "batch_optimum", "--certificates", str(tmp_path), "--recheck")
    assert code == 0, out
    index = json.loads((tmp_path / "index.json").read_text())
    entry = next(e for e in index["certificates"] if e["claim"] == "batching.batch_optimum")
    assert (tmp_path / entry["file"]).read_text().startswith("; derive certificate")
    assert "recheck: " in out and "0 disagrees" in out


def test_export_smt2_prints_the_certificate(capsys):
    code, out, _ = _cli(capsys, "export", "batch_optimum", "--format", "smt2")
    assert code == 0 and "(check-sat)" in out and "claim batching.batch_optimum" in out


def test_export_smt2_of_a_refuted_claim_is_one_line_exit_2(capsys):
    code, out, err = _cli(capsys, "export", "hw_ratio_a100", "--format", "smt2")
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "refuted" in err


@needs_cvc5
def test_declared_integrality_in_a_hypothesis_reaches_the_certificate():
    """A derived quantity's declared integrality is a hypothesis condition (``logic.IsInteger``): the query
    states it with ``is_int`` in a mixed logic, cvc5 confirms the proof, and drops it only at its peril."""
    n, e = sp.symbols("n e")
    # te := n / e declared integer, used in a hypothesis te >= 1/2: then te >= 1 (an integer above 1/2)
    problem = Problem([logic.gt(n, 0), logic.gt(e, 0), logic.IsInteger(n / e), logic.ge(n / e, R(1, 2))],
                      logic.ge(n / e, 1))
    cert = _cert(problem)
    assert "(is_int " in cert.text and "IRA)" in cert.text
    assert run_cvc5(cert.text)[0] == "unsat"
    without = smt2.query(sorted(problem.symbols(), key=str), (), [problem.hypotheses[0], problem.hypotheses[1],
                                                                  problem.hypotheses[3], Not(problem.goal)])
    assert run_cvc5(without)[0] == "sat"


def test_declared_integrality_is_read_by_the_replayer():
    n = sp.symbols("n")
    from derive.certify.writer import formula_json
    f = formula_json(logic.IsInteger(n / 2))
    assert replay.truth(f, {"n": replay.iv.mpf([3, 3])}) is False
    assert replay.truth(f, {"n": replay.iv.mpf([4, 4])}) is True
    assert replay.truth(f, {"n": replay.iv.mpf([3, 5])}) is None


_MIXED = """(set-logic QF_NIRA)
(declare-fun m () Int)
(declare-fun y () Real)
(assert (> (to_real m) 0.0))
(assert {goal})
(check-sat)
"""


def test_relaxing_integers_reads_them_as_reals():
    from derive.certify.recheck import relax_integers

    text = relax_integers(_MIXED.format(goal="(< (* y (to_real m)) 0.0)"))
    assert "(declare-fun m () Real)" in text and "(to_real m)" not in text and "(set-logic QF_NRA)" in text
    assert relax_integers("(set-logic QF_LIA)\n(declare-fun c () Int)\n(check-sat)\n") is None
    assert relax_integers("(set-logic QF_NRA)\n(declare-fun y () Real)\n(check-sat)\n") is None


@needs_cvc5
@pytest.mark.parametrize(("goal", "relaxed_answer"), [
    ("(< (* (to_real m) (to_real m)) 0.0)", "unsat"),        # no integer and no real: both unsat
    ("(and (> (to_real m) 0.5) (< (to_real m) 0.75))", "sat"),  # no integer, a real: the relaxation says nothing
])
def test_a_relaxation_is_unsat_only_where_the_query_is(goal, relaxed_answer):
    from derive.certify.recheck import relax_integers

    text = _MIXED.format(goal=goal)
    assert run_cvc5(text)[0] == "unsat"
    assert run_cvc5(relax_integers(text))[0] == relaxed_answer


@needs_cvc5
def test_a_pipeline_claim_over_integer_stages_is_confirmed_through_the_relaxation(tmp_path):
    # stages and micro-batches are integers: cvc5 leaves the mixed query unknown within its budget, and
    # confirms it read over the reals
    proc = subprocess.run([sys.executable, "-m", "derive", "check", "capacity.pipelining_fits_any_model",
                           "--certificates", str(tmp_path), "--recheck"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "relaxation" in proc.stdout + proc.stderr and "1 confirmed" in proc.stdout + proc.stderr


@needs_cvc5
def test_a_query_cvc5_does_not_stop_is_not_confirmed_at_the_cap(monkeypatch):
    """cvc5 keeps working on this query past its resource limit (and its own time limit); the recheck stops it
    at the wall-clock cap and says so, never hangs."""
    import time
    from pathlib import Path

    from derive.certify import recheck as module

    monkeypatch.setattr(module, "CVC5_WALL_CAP_S", 2.0)
    text = (Path(__file__).parent / "fixtures" / "certificates" / "cvc5_runs_past_its_limit.smt2").read_text()
    start = time.monotonic()
    out = module.recheck_one("roofline.cost_per_token_and_floor", "smt2", text, True)
    assert time.monotonic() - start < 30
    assert out.status == "not confirmed" and "stopped after 2 s" in out.reason


@needs_cvc5
def test_the_capped_run_gives_cvc5s_own_answers():
    from derive.certify.recheck import run_cvc5_capped

    cert = _cert(PROVED["square_root"])
    assert run_cvc5_capped(cert.text) == run_cvc5(cert.text)


def _folder(tmp_path, cert: dict | None = None, **index) -> str:
    """A certificate folder of one interval certificate ``cert`` (a box a in [1, 2], goal true) and ``index``."""
    base = {"kind": "interval", "claim": "x.y", "verdict": "proved",
            "quantities": [{"name": "a", "integer": False, "low": "1", "high": "2"}],
            "goal": {"const": True}, "assumptions": [], "tree": [{"leaf": {"a": ["1", "2"]}}]}
    (tmp_path / "x.json").write_text(json.dumps({**base, **(cert or {})}))
    entry = {"claim": "x.y", "kind": "interval", "file": "x.json", "verdict": "proved"}
    (tmp_path / "index.json").write_text(json.dumps({"format": "derive-certificate/1", "certificates": [entry],
                                                     "skipped": {}, **index}))
    return str(tmp_path)


@pytest.mark.parametrize(("cert", "words"), [
    # sympy expands 1e400000000 for minutes: the replayer reads numbers under a budget
    ({"quantities": [{"name": "a", "integer": False, "low": "1e400000000", "high": "2"}]}, "exponent"),
    ({"quantities": [{"name": "a", "integer": False, "low": "1/0", "high": "2"}]}, "ZeroDivisionError"),
    ({"goal": {"rel": ">", "lhs": ["exp", ["exp", ["exp", ["exp", ["exp", ["num", "100"]]]]]], "rhs": ["num", "0"]}},
     "not"),
    ({"quantities": [{"name": "a", "integer": False, "low": 1.5, "high": "2"}]}, "must be text"),
])
def test_a_damaged_interval_certificate_is_not_confirmed_at_once(tmp_path, cert, words):
    (result,) = recheck(_folder(tmp_path, cert))
    assert result.status == "not confirmed" and words in result.reason, result.reason


def test_recheck_prints_a_folders_claim_ids_escaped_and_refuses_odd_indexes(tmp_path, capsys):
    from derive.cli.commands.recheck import report_lines

    folder = _folder(tmp_path)
    index = json.loads((tmp_path / "index.json").read_text())
    index["certificates"][0]["claim"] = "x\x1b[31m\nFORGED confirmed"
    (tmp_path / "index.json").write_text(json.dumps(index))
    (tmp_path / "x.json").write_text((tmp_path / "x.json").read_text().replace('"x.y"', json.dumps(
        index["certificates"][0]["claim"])))
    lines, _ = report_lines(folder)
    assert all("\x1b" not in line and "\n" not in line for line in lines) and "\\x1b" in lines[0]
    entry = index["certificates"][0]
    for bad in ({"skipped": {"a": 5}}, {"certificates": [{**entry, "file": "x\x00y"}]}, {"format": None},
                {"format": "derive-certificate/999"}, {"certificates": [{**entry, "verdict": "refuted"}]},
                {"certificates": [entry, entry]}, {"skipped": "x"}, {"certificates": "x"}):
        (tmp_path / "index.json").write_text(json.dumps({**index, **bad}))
        with pytest.raises(CertificateError):
            recheck(folder)


def test_an_interval_tree_past_the_replayers_budget_is_not_confirmed(tmp_path, monkeypatch):
    monkeypatch.setattr(replay, "MAX_TREE_NODES", 0)
    (result,) = recheck(_folder(tmp_path))
    assert result.status == "not confirmed" and "budget" in result.reason


def test_a_certificate_that_states_another_claim_or_verdict_disagrees(tmp_path):
    # nothing tied a file to its entry: a certificate of another claim (or relabelled) was "confirmed"
    folder = _folder(tmp_path, {"claim": "x.other"})
    (result,) = recheck(folder)
    assert result.status == "disagrees" and "states claim x.other, not x.y" in result.reason
    folder = _folder(tmp_path, {"verdict": "inconsistent"})
    (result,) = recheck(folder)
    assert result.status == "disagrees" and "states verdict inconsistent, the index proved" in result.reason


def test_a_certificate_that_is_a_link_is_not_read(tmp_path):
    folder = _folder(tmp_path)
    (tmp_path / "real.json").write_text((tmp_path / "x.json").read_text())
    (tmp_path / "x.json").unlink()
    (tmp_path / "x.json").symlink_to(tmp_path / "real.json")
    (result,) = recheck(folder)
    assert result.status == "not confirmed" and "symbolic link" in result.reason


def _witnessed(tmp_path, point: dict, assumptions: list, integer: bool = False, witness: dict | None = None) -> str:
    """A folder of one proved interval certificate (a in [0, 2], goal true, ``assumptions``) with a witness
    file giving ``point`` (``witness``: other fields of that file)."""
    cert = {"quantities": [{"name": "a", "integer": integer, "low": "0", "high": "2"}],
            "assumptions": assumptions, "tree": [{"leaf": {"a": ["0", "2"]}}]}
    folder = _folder(tmp_path, cert)
    index = json.loads((tmp_path / "index.json").read_text())
    index["certificates"][0]["witness"] = "x.witness.json"
    (tmp_path / "index.json").write_text(json.dumps(index))
    (tmp_path / "x.witness.json").write_text(json.dumps({"kind": "witness", "claim": "x.y", "verdict": "proved",
                                                         "point": point, **(witness or {})}))
    return folder


A = ["sym", "a"]
THIRD = {"rel": "==", "lhs": ["Mul", ["num", "3"], A], "rhs": ["num", "1"]}  # 3a = 1: exact, never an enclosure
TOWER = {"rel": ">", "lhs": ["Pow", ["Pow", ["Pow", ["Pow", ["Pow", A, ["num", "64"]], ["num", "64"]], ["num", "64"]],
                                     ["num", "64"]], ["num", "64"]], "rhs": ["num", "0"]}


@pytest.mark.parametrize(("point", "assumptions", "integer", "witness", "status", "words"), [
    ({"a": "1/3"}, [THIRD], False, None, "confirmed", "every one of the 1 assumptions holds"),
    ({"a": "1/2"}, [THIRD], False, None, "disagrees", "assumption 1 is false at the witness"),
    ({"a": "1/3"}, [THIRD], True, None, "disagrees", "gives the integer quantity a a fraction"),
    ({"a": "3"}, [], False, None, "disagrees", "outside the certificate's box"),
    ({"a": "1"}, [{"rel": ">", "lhs": ["exp", A], "rhs": ["num", "2"]}], False, None, "confirmed", "holds"),
    ({"a": "0"}, [{"rel": ">", "lhs": ["Pow", A, ["num", "-1"]], "rhs": ["num", "0"]}], False, None, "not confirmed",
     "not settled"),  # 1/a at a = 0: no value, so the witness shows nothing
    ({}, [THIRD], False, None, "disagrees", "does not give exactly the certificate's quantities a value"),
    # the witness file's own statement is never read: only the certificate's assumptions count
    ({"a": "1/2"}, [THIRD], False, {"assumptions": []}, "disagrees", "assumption 1 is false at the witness"),
    ({"a": "1/3"}, [THIRD], False, {"claim": "x.other"}, "disagrees", "states claim x.other"),
    ({"a": "3"}, [TOWER], False, None, "disagrees", "outside the certificate's box"),
    ({"a": "2"}, [TOWER], False, None, "not confirmed", "not settled"),  # 2**(64**5): past the exact budget, at once
])
def test_a_proved_certificate_is_confirmed_only_with_a_witness_of_its_assumptions(tmp_path, point, assumptions,
                                                                                  integer, witness, status, words):
    # a proof under assumptions that hold nowhere proves nothing: a point where they hold comes with it
    (result,) = recheck(_witnessed(tmp_path, point, assumptions, integer, witness))
    assert result.status == status and words in result.reason, result.reason


def test_a_vacuous_interval_certificate_with_a_made_up_witness_is_not_confirmed(tmp_path):
    # the review's forgery: assumptions x > 2 on the box [0, 1], goal 1 < 0, and an empty witness beside it
    folder = _witnessed(tmp_path, {}, [{"rel": ">", "lhs": A, "rhs": ["num", "2"]}],
                        witness={"assumptions": [], "quantities": []})
    (result,) = recheck(folder)
    assert result.status == "disagrees", result.reason


@pytest.mark.parametrize("name", ["a\x00b", "", "../x.json", "missing.json"])
def test_a_bad_witness_name_is_that_claims_not_confirmed_not_the_folders_error(tmp_path, name):
    folder = _witnessed(tmp_path, {"a": "1/3"}, [THIRD])
    index = json.loads((tmp_path / "index.json").read_text())
    index["certificates"][0]["witness"] = name
    (tmp_path / "index.json").write_text(json.dumps(index))
    (result,) = recheck(folder)
    assert result.status == "not confirmed" and "witness not confirmed" in result.reason


def test_a_proved_certificate_without_a_goal_disagrees(tmp_path):
    (result,) = recheck(_folder(tmp_path, {"goal": None}))
    assert result.status == "disagrees" and "without a goal" in result.reason


def test_a_proved_certificate_without_a_witness_is_not_confirmed(tmp_path):
    (result,) = recheck(_folder(tmp_path))
    assert result.status == "not confirmed" and "no witness of the assumptions" in result.reason


def test_every_proved_certificate_of_the_lecture_carries_a_witness_the_replayer_confirms(tmp_path):
    from derive.certify.replay import replay_witness, witness_point
    from derive.certify.writer import certify_report
    from derive.checking.checker import Checker
    from derive.model.loader import load_library
    from derive.model.scenario import build_scenario

    lib = load_library(["lecture"])
    checker = Checker(lib, build_scenario(lib))
    certs, _ = certify_report(checker, checker.check())
    proved = [c for c in certs if c.verdict == "proved"]
    assert proved and all(c.witness is not None for c in proved)
    json_kinds = [c for c in proved if c.kind != "smt2"]  # the SMT-LIB2 ones are cvc5's (the CI's recheck)
    assert json_kinds and {replay_witness(c.text, witness_point(c.witness)).status for c in json_kinds} == {"confirmed"}


@needs_cvc5
def test_an_smt2_certificate_whose_assumptions_hold_nowhere_is_not_confirmed(tmp_path):
    # the review's forgery: batch_optimum's header kept, its body replaced by batch > 1 and batch < 0 (unsat, so
    # "proved"), its honest witness beside it: the witness is held to the query's own assumptions
    from derive.cli import main

    assert main(["check", "batch_optimum", "--certificates", str(tmp_path)]) == 0
    (result,) = recheck(tmp_path)
    assert result.status == "confirmed" and "cvc5 finds the query's assumptions true at the witness" in result.reason
    cert = tmp_path / "batching.batch_optimum.smt2"
    lines = cert.read_text().splitlines()
    body = [i for i, line in enumerate(lines) if line.startswith("(assert ")]
    forged = [*lines[:body[0]], "(assert (> batch 1.0))", "(assert (< batch 0.0))", "(assert (> batch 5.0))",
              *lines[body[-1] + 1:]]
    cert.write_text("\n".join(forged) + "\n")
    (result,) = recheck(tmp_path)
    assert result.status == "disagrees" and "false at the witness" in result.reason


# a certificate is read by its commands, never by its lines (a second review's forgeries) -------------------------

@pytest.mark.parametrize(("text", "heads"), [
    ('(assert (> x 0.0))\n(assert\n  (not (> x 5.0)))\n(check-sat)', ["assert", "assert", "check-sat"]),
    ('(assert (> x 0.0)) (assert(not (> x 5.0)))\n (check-sat)', ["assert", "assert", "check-sat"]),
    ('; (check-sat)\n(assert (= |a(b| 1.0))\n(check-sat)\n(exit)', ["assert", "check-sat", "exit"]),
])
def test_smt2_commands_are_read_as_s_expressions(text, heads):
    from derive.certify.recheck import commands

    assert [h for h, _, _ in commands(text)] == heads


@pytest.mark.parametrize(("text", "words"), [
    ('(set-option :regular-output-channel "victim.txt")\n(check-sat)', "(set-option ...)"),  # truncated a file
    ('(set-info :source |\n(check-sat)\n|)\n(assert (< x 0.0))\n(check-sat)', "(set-info ...)"),
    ("(declare-fun f (Real) Real)\n(check-sat)", "a declaration other than a Real or Int constant"),
    ("(assert (> x 0.0))\n(check-sat)\n(assert (< x 0.0))\n(check-sat)", "not one (check-sat)"),
    ("(assert (> x 0.0)\n(check-sat)", "unbalanced"),
])
def test_smt2_commands_derive_does_not_write_are_refused(text, words):
    from derive.certify.recheck import commands

    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        commands(text)


@needs_cvc5
def test_a_goal_assertion_over_two_lines_is_still_the_one_the_witness_replaces(tmp_path):
    # the witness query dropped the line-initial "(assert (< x 0.0))" and kept the goal false: confirmed
    from derive.cli import main

    assert main(["check", "batch_optimum", "--certificates", str(tmp_path)]) == 0
    cert = tmp_path / "batching.batch_optimum.smt2"
    lines = cert.read_text().splitlines()
    body = [i for i, line in enumerate(lines) if line.startswith("(assert ")]
    forged = [*lines[:body[-1]], "(assert (< batch 0.0))", "(assert", "  (not (> batch 1000000.0)))",
              *lines[body[-1] + 1:]]
    cert.write_text("\n".join(forged) + "\n")
    (result,) = recheck(tmp_path)
    assert result.status == "disagrees" and "false at the witness" in result.reason


@pytest.mark.parametrize("node", [
    {"and": [{"const": False}], "not": {"const": False}},  # read as an and by the replayer, a not by the witness
    {"or": [{"const": True}], "is_int": ["num", "1/2"]},
    {},
])
def test_a_formula_node_of_two_kinds_is_not_read(tmp_path, node):
    (result,) = recheck(_witnessed(tmp_path, {"a": "1"}, [node]))
    assert result.status == "not confirmed" and "kinds" in result.reason, result.reason


def test_a_floor_of_a_huge_number_is_read_as_unbounded_at_once(tmp_path):
    # floor(2**(1e10)) built a gigabyte integer for each of its ends
    bomb = {"rel": ">=", "lhs": ["floor", ["Pow", ["num", "2"], ["num", "1e10"]]], "rhs": ["num", "0"]}
    (result,) = recheck(_witnessed(tmp_path, {"a": "1"}, [bomb] * 4))
    assert result.status == "not confirmed"


TIED = ["batching.batch_optimum", "scaling.exp_equalisation", "scaling.exp_total_cost_expanded",
        "scaling.chinchilla_optimum_condition", "roofline.hbm_drain_time"]


@pytest.fixture(scope="module")
def tied_folder(tmp_path_factory):
    """The lecture's certificates of claims of every kind (SMT-LIB2, an interval tree, an identity, an exact
    evaluation's point, an instance claim), written by check."""
    from derive.cli import main

    folder = tmp_path_factory.mktemp("tied")
    assert main(["check", *TIED, "--certificates", str(folder), "--no-cache"]) == 0
    kinds = {e["claim"]: (e["kind"], e["engine"]) for e in json.loads((folder / "index.json").read_text())
             ["certificates"]}
    assert {kinds[c] for c in TIED} == {("smt2", "z3"), ("interval", "interval"), ("identity", "sympy"),
                                        ("interval", "exact"), ("smt2", "exact")}, kinds
    return folder


def _copy(folder, tmp_path):
    import shutil

    return shutil.copytree(folder, tmp_path / "copy")


def test_recheck_with_the_library_ties_each_certificate_to_its_claim(capsys, tied_folder):
    code, out, err = _cli(capsys, "recheck", str(tied_folder), "--library", "lecture")
    assert code == 0, out + err
    assert "0 disagrees, 0 differ from library lecture at scenario lecture" in out
    assert "differs " not in out


def test_a_certificate_of_the_claim_at_another_scenario_differs(capsys, tied_folder):
    # the instance claim reads the lecture's bandwidth; at the H100's it states another inequality
    code, out, _ = _cli(capsys, "recheck", str(tied_folder), "--library", "lecture", "--hardware", "h100-sxm")
    assert code == 1
    line = next(x for x in out.splitlines() if "roofline.hbm_drain_time" in x)
    assert line.startswith("differs") and "its assertions" in line and "names scenario lecture" in line, line
    assert "1 differ from library lecture at scenario lecture+h100-sxm" in out  # the general claims still tie


@pytest.mark.parametrize(("claim", "edit", "words"), [
    ("batching.batch_optimum", lambda t: "".join(x for i, x in enumerate(t.splitlines(keepends=True))
                                                 if i != t.splitlines().index(next(y for y in t.splitlines()
                                                                                  if y.startswith("(assert")))),
     "in its assertions"),
    ("batching.batch_optimum", lambda t: t.replace("(check-sat)", "(assert true)\n(check-sat)"),
     "in its assertions (command 24 of 25: check-sat)"),
    ("scaling.exp_equalisation", lambda d: {**d, "assumptions": d["assumptions"][:-1]}, "in its assumptions"),
    ("scaling.exp_equalisation", lambda d: {**d, "quantities": [{**q, "high": q["low"]} for q in d["quantities"]]},
     "in its quantities"),
    ("scaling.exp_total_cost_expanded", lambda d: {**d, "rhs": d["lhs"]}, "identity's right side"),
    ("scaling.chinchilla_optimum_condition", lambda d: {**d, "goal": {**d["goal"], "rel": "<="}}, "in its goal"),
])
def test_a_certificate_of_an_edited_statement_differs_from_the_library(tmp_path, tied_folder, claim, edit, words):
    # a sound proof of another statement (a weaker assumption set, a smaller box) is no proof of the claim
    from derive.cli.commands.recheck import statements

    folder = _copy(tied_folder, tmp_path)
    entry = next(e for e in json.loads((folder / "index.json").read_text())["certificates"] if e["claim"] == claim)
    path = folder / entry["file"]
    if entry["kind"] == "smt2":
        path.write_text(edit(path.read_text()))
    else:
        path.write_text(json.dumps(edit(json.loads(path.read_text())), indent=1))
    from derive.cli import build_parser
    from derive.cli.context import Context

    ctx = Context(build_parser().parse_args(["recheck", str(folder), "--library", "lecture", "--no-cache"]))
    results = {r.claim: r for r in recheck(folder, statements=statements(ctx, folder), scenario="lecture")}
    assert results[claim].status == "differs" and words in results[claim].reason, results[claim].reason
    assert all(r.status != "differs" for c, r in results.items() if c != claim)


def test_a_comment_of_an_smt2_certificate_is_no_part_of_its_statement(tmp_path, tied_folder):
    from derive.certify.recheck import tie

    folder = _copy(tied_folder, tmp_path)
    path = folder / "batching.batch_optimum.smt2"
    text = path.read_text()
    assert tie({"kind": "smt2"}, "; another comment\n" + text.replace("(exit)", "; a note\n(exit)"), text) is None
    assert "its logic" in tie({"kind": "smt2"}, text.replace("(set-logic QF_", "(set-logic QF_A", 1), text)


def test_a_certificate_of_a_claim_the_library_lacks_differs(tmp_path, tied_folder):
    folder = _copy(tied_folder, tmp_path)
    statements = {"batching.batch_optimum": KeyError("batching.batch_optimum")}
    results = {r.claim: r for r in recheck(folder, statements=statements)}
    assert results["batching.batch_optimum"].status == "differs"
    assert "states nothing for it (no such claim)" in results["batching.batch_optimum"].reason
    assert all(r.status == "differs" for r in results.values() if r.claim in TIED)  # none given: nothing to tie to


def test_recheck_scenario_options_without_a_library_are_one_line_exit_2(capsys, tied_folder):
    code, out, err = _cli(capsys, "recheck", str(tied_folder), "--set", "batch=4 seq")
    assert code == 2 and len(err.splitlines()) == 1 and "--set ties the certificates" in err and "--library" in err
