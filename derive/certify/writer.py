"""Certificates for the kernel's ``proved`` and ``inconsistent`` verdicts.

One certificate per verdict, a pure function of the problem the kernel decided (deterministic: the same
bytes in every process and under every ``PYTHONHASHSEED``):

* ``smt2``: an SMT-LIB2 query whose ``unsat`` establishes the verdict.  For ``proved``: the region (every
  hypothesis, the side conditions that make each defined, the bounds, integrality as ``Int`` sorts) and
  the goal false *or* one of its side conditions false (so ``unsat`` shows the goal defined and true
  wherever the assumptions hold).  For ``inconsistent``: the region alone.  Written for the z3 route,
  the sympy identity route and exact evaluation, whenever SMT-LIB2 arithmetic can state the problem.
* ``interval`` (JSON): the kernel's bisection tree of the bounded box, in preorder, with the statement
  (every assumption the kernel reads, the goal), the box and, per leaf, the enclosures of the goal's
  relations as exact rationals; ``derive.certify.replay`` re-evaluates it.  Written for interval proofs,
  and for exact evaluations (a one-point box) that SMT-LIB2 cannot state (``exp``, ``log``).
* ``identity`` (JSON): a sympy identity SMT-LIB2 cannot state, with how to re-check it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import mpmath
import sympy as sp

from derive.certify import smt2
from derive.errors import CertificateError, OutputError
from derive.kernel.logic import And, Formula, Iff, Implies, IsInteger, Not, Or, Rel, name_of
from derive.kernel.problem import Outcome, Problem
from derive.kernel.trusted import BOX_PRECISION, Kernel, Refused, Unsettled, enclose, formula_side_conditions

FORMAT = "derive-certificate/1"
INDEX = "index.json"


@dataclass(frozen=True)
class Certificate:
    claim: str
    verdict: str  # proved | inconsistent
    engine: str  # the kernel's route: z3 | sympy | exact | interval
    kind: str  # smt2 | interval | identity
    text: str
    # of a ``proved``: a point where every assumption holds, the kernel's own (JSON, kind ``witness``), so that a
    # re-check sees the assumptions satisfiable and the verdict not vacuous; None where the kernel has none
    witness: str | None = None

    @property
    def filename(self) -> str:
        return f"{self.claim}.{'smt2' if self.kind == 'smt2' else 'json'}"

    @property
    def witness_filename(self) -> str:
        return f"{self.claim}.witness.json"


def _header(claim: str, scenario: str, outcome: Outcome, what: str) -> list[str]:
    return [f"derive certificate ({FORMAT}): claim {claim}, scenario {scenario}",
            f"verdict {outcome.verdict} by {outcome.engine}: {outcome.recheck or outcome.reason or ''}".rstrip(": "),
            what]


def certificate(claim: str, scenario: str, problem: Problem, outcome: Outcome) -> Certificate:
    """The certificate of ``outcome`` (``proved`` or ``inconsistent``) on ``problem``, a proved one with the
    kernel's witness of its assumptions; ``CertificateError`` when there is none to write (another verdict, or a
    route with no certificate form)."""
    cert, k = _certificate(claim, scenario, problem, outcome)
    if outcome.verdict != "proved":
        return cert
    point = k.witness()
    if point is None:
        return cert
    # the point alone: a re-check holds it to the certificate's own statement, never to one the witness states
    data = {"kind": "witness", "format": FORMAT, "claim": claim, "scenario": scenario, "verdict": "proved",
            "point": {name_of(s): _q(point[s]) for s in k.symbols}}
    return Certificate(cert.claim, cert.verdict, cert.engine, cert.kind, cert.text, json.dumps(data, indent=1) + "\n")


def _certificate(claim: str, scenario: str, problem: Problem, outcome: Outcome) -> tuple[Certificate, Kernel]:
    if outcome.verdict not in ("proved", "inconsistent"):
        raise CertificateError(f"claim {claim} is {outcome.verdict}: only proved and inconsistent verdicts "
                               "have certificates")
    try:
        k = Kernel(problem)
    except Refused as err:
        raise CertificateError(f"claim {claim}: the kernel refuses the statement ({err})") from None
    if outcome.engine == "interval":
        return _interval(claim, scenario, k, outcome), k
    assertions = _assertions(k, outcome.verdict)
    what = ("unsat of this query: the assumptions (hypotheses, their side conditions, bounds, integrality) "
            "contradict each other" if outcome.verdict == "inconsistent" else
            "unsat of this query: wherever the assumptions hold, the goal is defined (every side condition) and true")
    comments = _header(claim, scenario, outcome, what)
    if outcome.engine == "sympy" and isinstance(k.goal, Rel):
        comments.append(f"identity: {sp.sstr(k.goal.lhs)} - ({sp.sstr(k.goal.rhs)}) is 0 by sympy's "
                        "expand/together/cancel")
    try:
        text = smt2.query(k.symbols, k.integer, assertions, comments)
    except CertificateError as err:
        if outcome.engine == "exact" and outcome.verdict == "proved":
            box = _box(k, "exact")
            if box is not None:
                return _json(claim, "proved", outcome.engine, "interval", {
                    **_statement(claim, scenario, k, outcome, box), "tree": [_leaf(k, box)]}), k
        if outcome.engine == "sympy" and isinstance(k.goal, Rel):
            return _json(claim, outcome.verdict, outcome.engine, "identity", {
                **_statement(claim, scenario, k, outcome, {}),
                "lhs": sp.srepr(k.goal.lhs), "rhs": sp.srepr(k.goal.rhs),  # text for sympy, never evaluated here
                "how": "sympy.cancel(sympy.together(sympy.expand(lhs - rhs))) == 0, for all complex values of "
                       "the quantities, so wherever both sides are defined",
                "smt2": f"not written: {err.message}"}), k
        raise CertificateError(f"claim {claim}: no certificate ({err.message})") from None
    return Certificate(claim, outcome.verdict, outcome.engine, "smt2", text), k


def _assertions(k: Kernel, verdict: str) -> list[Formula]:
    """What an SMT-LIB2 certificate asserts: the region, and for ``proved`` the goal false or undefined."""
    if verdict == "inconsistent":
        return list(k.region)
    return [*k.region, Or((Not(k.goal), *(Not(sc.condition) for sc in formula_side_conditions(k.goal))))]


def statement_of(problem: Problem, verdict: str, engine: str, kind: str) -> str | dict:
    """What a certificate of ``kind`` for ``verdict`` by ``engine`` on ``problem`` states, its proof left out:
    an ``smt2`` one's query (its comments aside, the same commands); a JSON one's quantities (integrality and
    box), assumptions and goal, an identity's two sides too.  A re-check compares a certificate's statement with
    it to tie the certificate to a library's claim (``derive.certify.recheck.tie``); no proof search is run.
    ``CertificateError`` where the kernel refuses the problem or the kind cannot state it."""
    try:
        k = Kernel(problem)
    except Refused as err:
        raise CertificateError(f"the kernel refuses the statement ({err})") from None
    outcome = Outcome(verdict, engine)
    if kind == "smt2":
        return smt2.query(k.symbols, k.integer, _assertions(k, verdict))
    if kind == "identity":
        if not isinstance(k.goal, Rel):
            raise CertificateError("the goal is no single relation, so no identity states it")
        return {**_claim_statement(k, outcome, {}), "lhs": sp.srepr(k.goal.lhs), "rhs": sp.srepr(k.goal.rhs)}
    if kind != "interval":
        raise CertificateError(f"no statement for a certificate of kind {kind!r}")
    box = _box(k, engine)
    if box is None:
        raise CertificateError(f"no box for a certificate by {engine} (a quantity without bounds, or no point the "
                               "hypotheses fix)")
    return _claim_statement(k, outcome, box)


def _box(k: Kernel, engine: str) -> dict[sp.Symbol, tuple[sp.Rational, sp.Rational]] | None:
    """The box a JSON certificate states: the bounds of an interval proof, an exact evaluation's one point (the
    one the hypotheses fix); None where there is none."""
    if engine == "interval":
        return {s: k.bounds[s] for s in k.symbols} if set(k.symbols) <= set(k.bounds) else None
    point = k.fixed_point()
    return None if point is None else {s: (v, v) for s, v in point.items()}


STATED = ("quantities", "assumptions", "goal")  # a JSON certificate's statement (``statement_of``), by key


def _claim_statement(k: Kernel, outcome: Outcome, box: Mapping[sp.Symbol, tuple[sp.Rational, sp.Rational]]) -> dict:
    data = _statement("", "", k, outcome, box)
    return {key: data[key] for key in STATED}


# JSON certificates --------------------------------------------------------------------------------------

def _q(v: sp.Rational) -> str:
    return str(sp.Rational(v))


_FUNCS = {sp.Add: "Add", sp.Mul: "Mul", sp.Pow: "Pow", sp.exp: "exp", sp.log: "log", sp.Max: "Max", sp.Min: "Min",
          sp.Abs: "Abs", sp.floor: "floor", sp.ceiling: "ceiling"}


def expr_json(e: sp.Expr) -> list:
    """An expression as JSON, read without evaluating code: ``["sym", name]``, ``["num", "p/q"]``,
    ``["pi"]``, ``["E"]``, ``[function, *arguments]``, ``["Piecewise", [expr, condition], ...]``."""
    if isinstance(e, sp.Symbol):
        return ["sym", name_of(e)]
    if e.is_Rational:
        return ["num", _q(e)]
    if e is sp.pi or e is sp.E:
        return [str(e)]
    if isinstance(e, sp.Piecewise):
        return ["Piecewise", *([expr_json(x), _condition_json(c)] for x, c in e.args)]
    name = _FUNCS.get(e.func)
    if name is None:
        raise CertificateError(f"{type(e).__name__} has no form in an interval certificate: {sp.sstr(e)}")
    return [name, *(expr_json(a) for a in e.args)]


def _condition_json(c: sp.Basic) -> dict:
    if c is sp.true or c is sp.false:
        return {"const": bool(c)}
    if isinstance(c, sp.core.relational.Relational):
        return formula_json(Rel(c.lhs, c.rel_op, c.rhs))
    if isinstance(c, (sp.And, sp.Or)):
        return {type(c).__name__.lower(): [_condition_json(a) for a in c.args]}
    if isinstance(c, sp.Not):
        return {"not": _condition_json(c.args[0])}
    raise CertificateError(f"unsupported condition {c}")


def formula_json(f: Formula) -> dict:
    """A formula as JSON (relations with their sides as ``expr_json``)."""
    if isinstance(f, Rel):
        return {"rel": f.op, "lhs": expr_json(f.lhs), "rhs": expr_json(f.rhs)}
    if isinstance(f, (And, Or)):
        return {type(f).__name__.lower(): [formula_json(a) for a in f.args]}
    if isinstance(f, Not):
        return {"not": formula_json(f.arg)}
    if isinstance(f, Implies):
        return {"implies": [formula_json(f.premise), formula_json(f.conclusion)]}
    if isinstance(f, Iff):
        return {"iff": [formula_json(f.left), formula_json(f.right)]}
    if isinstance(f, IsInteger):
        return {"is_int": expr_json(f.expr)}
    raise CertificateError(f"unsupported formula {f!r}")


def _statement(claim: str, scenario: str, k: Kernel, outcome: Outcome,
               box: Mapping[sp.Symbol, tuple[sp.Rational, sp.Rational]]) -> dict:
    return {
        "format": FORMAT, "claim": claim, "scenario": scenario, "verdict": outcome.verdict,
        "engine": outcome.engine, "method": outcome.recheck or "",
        "quantities": [{"name": name_of(s), "integer": s in k.integer,
                        **({"low": _q(box[s][0]), "high": _q(box[s][1])} if s in box else {})} for s in k.symbols],
        "assumptions": [formula_json(h) for h in k.assumed],
        "goal": formula_json(k.goal) if outcome.verdict == "proved" else None,
    }


def _relations(f: Formula) -> list[Rel]:
    out, todo = [], [f]
    while todo:
        g = todo.pop(0)
        if isinstance(g, Rel):
            out.append(g)
        elif isinstance(g, (And, Or)):
            todo += list(g.args)
        elif isinstance(g, Not):
            todo.append(g.arg)
        elif isinstance(g, Implies):
            todo += [g.premise, g.conclusion]
        elif isinstance(g, Iff):
            todo += [g.left, g.right]
    return out


def _exact(x: object) -> str:
    """An mpmath interval endpoint (a binary float) as the exact rational it is."""
    with mpmath.workprec(4 * BOX_PRECISION):  # wider than the endpoint: the conversion is exact
        man, exp = mpmath.mpf(x).man_exp
    return str(sp.Integer(man) * sp.Integer(2) ** exp)


def _leaf(k: Kernel, box: Mapping[sp.Symbol, tuple[sp.Rational, sp.Rational]]) -> dict:
    """A leaf with the enclosure of each goal relation's ``lhs - rhs`` on it (None where it may be
    undefined), as exact rationals."""
    saved = mpmath.iv.prec
    mpmath.iv.prec = BOX_PRECISION
    try:
        ivbox = {s: mpmath.iv.mpf(int(lo.p)) / int(lo.q) if lo == hi else
                 mpmath.iv.mpf([(mpmath.iv.mpf(int(lo.p)) / int(lo.q)).a, (mpmath.iv.mpf(int(hi.p)) / int(hi.q)).b])
                 for s, (lo, hi) in box.items()}
        encl: list[list[str] | None] = []
        for r in _relations(k.goal):
            try:
                v = enclose(r.lhs, ivbox) - enclose(r.rhs, ivbox)
                encl.append([_exact(v.a), _exact(v.b)])
            except (Unsettled, ArithmeticError, ValueError, TypeError):
                encl.append(None)
    finally:
        mpmath.iv.prec = saved
    return {"leaf": {name_of(s): [_q(lo), _q(hi)] for s, (lo, hi) in box.items()}, "enclosures": encl}


def _interval(claim: str, scenario: str, k: Kernel, outcome: Outcome) -> Certificate:
    from derive.kernel.interval import propose

    empty = outcome.verdict == "inconsistent"
    kind, tree, _ = propose(k, empty=empty)
    if kind != "proved":
        raise CertificateError(f"claim {claim}: the interval engine did not reproduce its tree ({tree})")
    box = _box(k, "interval")
    if box is None:
        raise CertificateError(f"claim {claim}: a quantity without bounds, so no box for its interval proof")
    nodes: list[dict] = []
    todo: list[tuple[dict, tuple]] = [(box, tree)]
    while todo:  # preorder: a split, then its low child's nodes, then its high child's
        b, node = todo.pop()
        if node[0] == "split":
            _, s, m, low, high = node
            nodes.append({"split": name_of(s), "at": _q(m)})
            todo += [({**b, s: (m, b[s][1])}, high), ({**b, s: (b[s][0], m)}, low)]
        elif node[0] == "taylor":
            centre = sorted(node[1].items(), key=lambda kv: name_of(kv[0]))
            nodes.append({"taylor": {name_of(s): _q(v) for s, v in centre}, **_leaf(k, b)})
        else:
            nodes.append(_leaf(k, b))
    return _json(claim, outcome.verdict, outcome.engine, "interval",
                 {**_statement(claim, scenario, k, outcome, box), "tree": nodes})


def _json(claim: str, verdict: str, engine: str, kind: str, data: dict) -> Certificate:
    return Certificate(claim, verdict, engine, kind, json.dumps({"kind": kind, **data}, indent=1) + "\n")


# a folder of certificates ---------------------------------------------------------------------------------

def write(folder: str | os.PathLike, certificates: Iterable[Certificate], skipped: Mapping[str, str]) -> Path:
    """Write ``certificates`` and an index (claim, verdict, file; and each claim with no certificate, with
    why) into ``folder``; each file written whole (a temporary name, then renamed)."""
    out = Path(folder)
    try:
        out.mkdir(parents=True, exist_ok=True)
        index = {"format": FORMAT, "certificates": [], "skipped": dict(sorted(skipped.items()))}
        for c in sorted(certificates, key=lambda c: c.claim):
            _write(out / c.filename, c.text)
            entry = {"claim": c.claim, "verdict": c.verdict, "engine": c.engine, "kind": c.kind, "file": c.filename}
            if c.witness is not None:
                _write(out / c.witness_filename, c.witness)
                entry["witness"] = c.witness_filename
            index["certificates"].append(entry)
        _write(out / INDEX, json.dumps(index, indent=1, sort_keys=True) + "\n")
    except OSError as err:
        raise OutputError(f"cannot write certificates: {err.strerror or err}", where=str(out)) from None
    return out


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def certify_report(checker: object, report: object) -> tuple[list[Certificate], dict[str, str]]:
    """The certificates of a checker's report (``derive.checking.checker``): one per claim whose verdict is
    ``proved`` or ``inconsistent``, from the problem the checker decided; and each such claim without one,
    with why."""
    certs: list[Certificate] = []
    skipped: dict[str, str] = {}
    library, scenario = checker.library, checker.scenario
    for r in report.results:
        if r.verdict not in ("proved", "inconsistent"):
            continue
        claim = library.declarations[r.id]
        problem = checker.problem(claim, claim.goal, checker.hypotheses_for(claim))
        outcome = Outcome(r.verdict, r.engine, recheck=r.recheck)
        try:
            certs.append(certificate(r.id, scenario.name, problem, outcome))
        except CertificateError as err:
            skipped[r.id] = err.message
    return certs, skipped
