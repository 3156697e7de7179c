"""Re-checking a folder of certificates with a second solver (cvc5) and the interval replayer.

Per claim: ``confirmed`` (cvc5 answers ``unsat``, or the replayer closes every leaf), ``disagrees`` (cvc5
answers ``sat``, or the replayer finds the certificate wrong) or ``not confirmed`` with the reason (cvc5
not installed, cvc5 ``unknown`` within its deterministic resource limit, a certificate kind neither
re-checks).  cvc5 is an optional dependency (the ``recheck`` extra).
"""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from derive.certify.replay import replay, replay_witness, witness_point
from derive.certify.writer import FORMAT, INDEX
from derive.errors import CertificateError, escape_control

VERDICTS = ("proved", "inconsistent")  # the verdicts a certificate is written for (a refutation carries its point)

# cvc5's resource limit per certificate: a deterministic budget, not a clock (50,000 units took up to 2 s on
# the lecture's hardest nonlinear query, which cvc5 leaves unknown at any budget tried)
CVC5_RLIMIT = 50_000
# A safety net, not a budget: some nonlinear queries keep cvc5 in a procedure that checks neither its resource
# limit nor its own time limit (a bound 0 <= share <= 1 beside the lecture's cost floor ran for minutes), so each
# query runs in a child process that is stopped after this many seconds, its answer then `unknown`.  The lecture's
# other queries take at most 1.3 s; two of its queries never end, and a net of 60 s held the whole recheck at 68 s
# on two cores (its budget is 60 s)
CVC5_WALL_CAP_S = 20.0


@dataclass(frozen=True)
class Recheck:
    claim: str
    status: str  # confirmed | disagrees | not confirmed | differs (not the library's claim, where one is given)
    checker: str  # cvc5 | replay | none
    reason: str


def cvc5_available() -> bool:
    try:
        import cvc5  # noqa: F401
    except ImportError:
        return False
    return True


def run_cvc5(text: str, rlimit: int = CVC5_RLIMIT) -> tuple[str, str]:
    """(cvc5's answer to the script: sat | unsat | unknown | error, detail)."""
    import cvc5

    tm = cvc5.TermManager()
    solver = cvc5.Solver(tm)
    solver.setOption("rlimit", str(rlimit))
    symbols = cvc5.SymbolManager(tm)
    parser = cvc5.InputParser(solver, symbols)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, "certificate")
    answers: list[str] = []
    try:
        while True:
            command = parser.nextCommand()
            if command.isNull():
                break
            out = command.invoke(solver, symbols).strip()
            if out:
                answers.append(out)
    except RuntimeError as err:  # cvc5 reports parse and sort errors so
        return "error", str(err).splitlines()[0] if str(err) else type(err).__name__
    if len(answers) != 1 or answers[0].split(" ")[0] not in ("sat", "unsat", "unknown"):
        return "error", f"unexpected cvc5 output {answers!r}"
    answer, _, detail = answers[0].partition(" ")
    return answer, detail.strip("()")


def run_cvc5_capped(text: str, rlimit: int = CVC5_RLIMIT, seconds: float | None = None) -> tuple[str, str]:
    """``run_cvc5`` in a forked child process stopped after ``seconds`` (``CVC5_WALL_CAP_S``): a query cvc5
    does not stop within its resource limit is ``unknown`` with the cap as its detail, never a hang.  Where a
    child process cannot be made, cvc5 runs here."""
    seconds = CVC5_WALL_CAP_S if seconds is None else seconds
    try:
        read, write = os.pipe()
        pid = os.fork()
    except OSError:
        return run_cvc5(text, rlimit)
    if pid == 0:  # the child: answer through the pipe, then leave without running the parent's cleanup
        try:
            os.close(read)
            quiet = os.open(os.devnull, os.O_WRONLY)  # cvc5's warnings on a damaged script: the detail says why
            os.dup2(quiet, 2)
            os.write(write, json.dumps(run_cvc5(text, rlimit)).encode())
        finally:
            os._exit(0)
    os.close(write)
    deadline = time.monotonic() + seconds
    done = False
    while time.monotonic() < deadline:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            done = True
            break
        time.sleep(0.01)
    if not done:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(read)
        return "unknown", f"stopped after {seconds:g} s: cvc5 did not stop at its resource limit"
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    try:
        answer, detail = json.loads(data.decode())
    except (ValueError, TypeError):
        return "error", "cvc5's child process gave no answer"
    return str(answer), str(detail)


_INT_DECLARATION = re.compile(r"^\(declare-fun (\S+) \(\) Int\)$", re.M)


def relax_integers(text: str) -> str | None:
    """The query with every ``Int`` quantity read as a ``Real`` (its ``(to_real x)`` as ``x``), or None when it
    has none or is a linear integer query (QF_LIA, which cvc5 decides as it is).  Every model of the query is a
    model of the relaxed one, so an ``unsat`` of the relaxed query is the query's own; a ``sat`` says nothing."""
    names = _INT_DECLARATION.findall(text)
    if not names or "(set-logic QF_LIA)" in text:
        return None
    out = text
    for name in names:
        out = out.replace(f"(declare-fun {name} () Int)", f"(declare-fun {name} () Real)")
        out = out.replace(f"(to_real {name})", name)
    if "to_int" not in out and "is_int" not in out:  # no integer term is left: a logic of the reals
        out = out.replace("(set-logic QF_NIRA)", "(set-logic QF_NRA)").replace("(set-logic QF_LIRA)",
                                                                               "(set-logic QF_LRA)")
    return out


# the commands derive writes into a certificate: anything else (set-option's output channels, which create and
# truncate files, or its verbosity; set-info; define-fun; push) is not derive's, and is not handed to cvc5
COMMANDS = ("set-logic", "declare-fun", "assert", "check-sat", "exit")


_DECLARED = re.compile(r"\(declare-fun (\S+) \(\) (Real|Int)\)")


def commands(text: str) -> list[tuple[str, int, int]]:
    """The top-level commands of an SMT-LIB2 script as (head, start, end) spans of ``text``, read as S-expressions
    (comments, strings and |quoted symbols| skipped, never by lines); ``ValueError`` for one derive does not write,
    for unbalanced parentheses, or for text outside a command."""
    out: list[tuple[str, int, int]] = []
    depth, start, i, n = 0, -1, 0, len(text)
    while i < n:
        c = text[i]
        if c == ";":
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
            continue
        if c in "\"|":  # a string ("" inside is a quote) or a quoted symbol: no parenthesis in it counts
            close = i + 1
            while True:
                close = text.find(c, close)
                if close < 0:
                    raise ValueError("an unterminated string or quoted symbol")
                if c == '"' and text.startswith('""', close):
                    close += 2
                    continue
                break
            i = close + 1
            continue
        if c == "(":
            if depth == 0:
                start = i
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                raise ValueError("a ')' with no '('")
            if depth == 0:
                head = text[start + 1:i].split(None, 1)[0] if text[start + 1:i].split() else ""
                head = head.split("(", 1)[0]
                if head not in COMMANDS:
                    raise ValueError(f"a command derive does not write: ({head} ...)")
                if head == "declare-fun" and not _DECLARED.fullmatch(text[start:i + 1]):
                    raise ValueError("a declaration other than a Real or Int constant")
                out.append((head, start, i + 1))
        elif depth == 0 and not c.isspace():
            raise ValueError("text outside a command")
        i += 1
    if depth:
        raise ValueError("unbalanced parentheses")
    heads = [h for h, _, _ in out]
    if heads.count("check-sat") != 1 or "assert" in heads[heads.index("check-sat"):]:
        raise ValueError("not one (check-sat) after every assertion")
    return out


def recheck_one(claim: str, kind: str, text: str, have_cvc5: bool) -> Recheck:
    if kind == "smt2":
        if not have_cvc5:
            return Recheck(claim, "not confirmed", "none", "cvc5 not installed")
        try:
            commands(text)
        except ValueError as err:
            return Recheck(claim, "not confirmed", "none", f"not a certificate as derive writes one: {err}")
        answer, detail = run_cvc5_capped(text)
        if answer == "unsat":
            return Recheck(claim, "confirmed", "cvc5", "unsat")
        relaxed = relax_integers(text) if answer == "unknown" else None
        if relaxed is not None and run_cvc5_capped(relaxed)[0] == "unsat":  # mixed integer and real arithmetic is
            # harder for cvc5 than the reals alone; the relaxation's unsat covers every integer point too
            return Recheck(claim, "confirmed", "cvc5", "unsat with the integer quantities read as reals (a "
                                                       "relaxation: its unsat is the query's)")
        if answer == "sat":
            return Recheck(claim, "disagrees", "cvc5", "cvc5 finds the query satisfiable")
        if answer == "unknown":
            if detail.startswith("stopped after"):
                return Recheck(claim, "not confirmed", "cvc5", f"cvc5 {detail}")
            return Recheck(claim, "not confirmed", "cvc5", f"cvc5 unknown within its resource limit of {CVC5_RLIMIT}"
                           + (f" ({detail.lower()})" if detail else ""))
        return Recheck(claim, "not confirmed", "cvc5", f"cvc5 cannot read the certificate: {detail}")
    if kind == "interval":
        r = replay(text)
        return Recheck(claim, r.status, "replay", r.reason)
    if kind == "identity":
        return Recheck(claim, "not confirmed", "none", "a sympy identity outside SMT-LIB2 arithmetic (exp, log): "
                                                        "re-check with sympy as the certificate says")
    return Recheck(claim, "not confirmed", "none", f"no re-check for a certificate of kind {kind!r}")


CERTIFICATE_BYTES = 1 << 28  # a certificate or index file's size at most (an interval tree can be large)


def read_certificate_text(path: Path) -> str:
    """A certificate folder's file as text: a regular file (a FIFO or a device never hangs the read) of at most
    ``CERTIFICATE_BYTES``, UTF-8; else one ``CertificateError`` naming it."""
    from derive.errors import ScenarioError
    from derive.model.scenario import read_file_bytes

    try:
        return read_file_bytes(path, what="certificate file", limit=CERTIFICATE_BYTES).decode("utf-8")
    except ScenarioError as err:
        raise CertificateError(err.message, where=str(path), hint=err.hint) from None
    except UnicodeDecodeError as err:
        raise CertificateError(f"certificate file is not UTF-8 text (byte {err.start})", where=str(path),
                               hint="certificates are written as UTF-8 by derive check --certificates") from None


def entries(folder: str | Path) -> tuple[list[dict], dict[str, str]]:
    """The index of a certificate folder: its certificates, and the claims without one (with why)."""
    path = Path(folder) / INDEX
    if path.is_symlink():  # as a certificate file: derive writes the index, a link could name any file
        raise CertificateError("the certificate index is a symbolic link", where=str(path),
                               hint="write one with derive check --certificates DIR")
    if not path.exists():
        raise CertificateError("no certificate index", where=str(path),
                               hint="write one with derive check --certificates DIR")
    text = read_certificate_text(path)
    hint = "write one with derive check --certificates DIR"
    try:
        index = json.loads(text)
    except (ValueError, RecursionError) as err:
        raise CertificateError(f"unreadable certificate index: {err}", where=str(path), hint=hint) from None
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        got = repr(index.get("format")) if isinstance(index, dict) else f"a JSON {type(index).__name__}"
        raise CertificateError(f"not a certificate index of format {FORMAT} (format: {got})", where=str(path),
                               hint=hint)
    certs, skipped = index.get("certificates"), index.get("skipped", {})
    if not isinstance(certs, list) or not all(isinstance(e, dict) for e in certs):
        raise CertificateError("the index's `certificates` is not a list of entries", where=str(path), hint=hint)
    seen: set[str] = set()
    for n, e in enumerate(certs, start=1):
        if not all(isinstance(e.get(k), str) for k in ("claim", "kind", "file", "verdict")) or "/" in e["file"] \
                or e["file"].startswith(".") or "\x00" in e["file"] or e["verdict"] not in VERDICTS:
            raise CertificateError(f"certificate entry {n} is malformed: it needs claim, kind, file (a name in the "
                                   f"folder) and verdict ({' or '.join(VERDICTS)}) as text", where=str(path),
                                   hint=hint)
        if e["claim"] in seen:  # counted twice, and which one speaks for the claim?
            raise CertificateError(f"claim {escape_control(e['claim'])} has two certificate entries",
                                   where=str(path), hint=hint)
        seen.add(e["claim"])
    if not isinstance(skipped, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in skipped.items()):
        raise CertificateError("the index's `skipped` is not a table of claim id to reason (both text)",
                               where=str(path), hint=hint)
    return [dict(e) for e in certs], dict(skipped)


def _header_mismatch(entry: dict, text: str) -> tuple[str, str, str] | None:
    """(status, engine, reason) where the certificate does not state what its index entry says: ``disagrees`` for
    another claim or verdict, ``not confirmed`` where it names none; else None.  An SMT-LIB2 file's comment lines
    and a JSON certificate's fields name both."""
    if entry["kind"] == "smt2":
        head = text[:4096]
        claim = re.search(r"^; derive certificate \([^)]*\): claim (\S+),", head, re.M)
        verdict = re.search(r"^; verdict (\S+) by ", head, re.M)
        said = (claim and claim.group(1), verdict and verdict.group(1))
    else:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return None  # unreadable: the re-check itself says so
        said = (data.get("claim"), data.get("verdict")) if isinstance(data, dict) else (None, None)
    if None in said or not all(isinstance(x, str) for x in said):
        return "not confirmed", "none", "the certificate does not name its claim and verdict (damaged or not derive's)"
    if said[0] != entry["claim"]:
        return ("disagrees", "none", f"the certificate states claim {escape_control(said[0])}, not "
                                     f"{escape_control(entry['claim'])}")
    if said[1] != entry["verdict"]:
        return ("disagrees", "none", f"the certificate states verdict {escape_control(said[1])}, the index "
                                     f"{entry['verdict']}")
    return None


def _with_witness(entry: dict, text: str, witness: str | None, have_cvc5: bool) -> Recheck:
    """The certificate's re-check; for a ``proved`` one also its witness, held to the certificate's own
    assumptions (a proof under assumptions that hold nowhere proves nothing): confirmed only when both are.
    ``witness``: the witness file's text, else why there is none."""
    r = recheck_one(entry["claim"], entry["kind"], text, have_cvc5)
    if entry["verdict"] != "proved" or r.status == "disagrees":
        return r
    status, why = _witness_status(entry, text, witness, have_cvc5)
    if status == "disagrees":
        return Recheck(r.claim, "disagrees", r.checker, f"witness: {why}")
    if status == "confirmed":
        return Recheck(r.claim, r.status, r.checker, f"{r.reason}; witness: {why}")
    return Recheck(r.claim, "not confirmed", r.checker, f"{r.reason}; witness not confirmed: {why}")


def _witness_status(entry: dict, text: str, witness: str | None, have_cvc5: bool) -> tuple[str, str]:
    if "witness" not in entry:
        return "not confirmed", "no witness of the assumptions (a point where they hold) in the folder"
    if witness is None or witness.startswith(_NO_WITNESS):
        return "not confirmed", (witness or "").removeprefix(_NO_WITNESS) or "the witness file cannot be read"
    header = _header_mismatch({**entry, "kind": "witness"}, witness)
    if header:
        return header[0], header[2]
    try:
        point = witness_point(witness)
    except (ValueError, KeyError, TypeError, RecursionError, ArithmeticError) as err:
        return "not confirmed", f"unreadable ({type(err).__name__}: {err})"
    if entry["kind"] != "smt2":
        w = replay_witness(text, point)
        return w.status, w.reason
    if not have_cvc5:
        return "not confirmed", "cvc5 not installed"
    return _smt2_witness(text, point)


def _smt2_witness(text: str, point: dict) -> tuple[str, str]:
    """The certificate's own query with its last assertion (the goal false) replaced by the witness's values:
    cvc5's ``sat`` says its assumptions hold at the point.  Not where the query relaxes a power with a symbolic
    exponent (facts every real power meets, not its value): a model of it need not be a point of the claim."""
    from derive.certify import smt2

    try:
        spans = commands(text)
    except ValueError as err:
        return "not confirmed", f"not a certificate as derive writes one: {err}"
    asserts = [(a, b) for head, a, b in spans if head == "assert"]
    if not asserts:
        return "not confirmed", "the certificate asserts nothing"
    goal = asserts[-1]  # the goal false, the last assertion derive writes
    kept = [text[a:b] for head, a, b in spans if head in ("set-logic", "declare-fun", "assert") and (a, b) != goal]
    declared = dict(_DECLARED.fullmatch(text[a:b]).groups() for head, a, b in spans if head == "declare-fun")
    if any(n.startswith("|power#") for n in declared):
        return "not confirmed", "the query relaxes a power with a symbolic exponent, so its models are no witness"
    sorts = {n: sort for n, sort in declared.items() if not n.startswith("|root#")}
    try:
        values = {smt2.symbol(name): v for name, v in point.items()}
    except CertificateError as err:
        return "disagrees", err.message
    if set(values) != set(sorts):
        return "disagrees", "the witness does not give exactly the query's quantities a value"
    fixed = []
    for name, v in sorted(values.items()):
        if sorts[name] == "Int" and not v.is_integer:
            return "disagrees", f"the witness gives the integer quantity {name} a fraction"
        fixed.append(f"(assert (= {name} {smt2.integer(int(v)) if sorts[name] == 'Int' else smt2.real(v)}))")
    query = "\n".join([*kept, *fixed, "(check-sat)", "(exit)"])
    answer, detail = run_cvc5_capped(query + "\n")
    if answer == "sat":
        return "confirmed", "cvc5 finds the query's assumptions true at the witness (sat)"
    if answer == "unsat":
        return "disagrees", "cvc5 finds the query's assumptions false at the witness (unsat)"
    return "not confirmed", f"cvc5 {answer} at the witness{f' ({detail})' if detail else ''}"


_NO_WITNESS = "no witness: "  # the prefix of a reason read in place of a witness file


def _read_witness(folder: Path, name: object) -> str:
    """A witness file's text, or ``_NO_WITNESS`` and why (a claim's own failing, never the whole folder's)."""
    if not isinstance(name, str) or not name or "/" in name or name.startswith(".") or "\x00" in name:
        return _NO_WITNESS + "the index names no file of the folder as its witness"
    path = folder / name
    if path.is_symlink():
        return _NO_WITNESS + "the witness is a symbolic link, not a file derive wrote"
    try:
        return read_certificate_text(path)
    except CertificateError as err:
        return _NO_WITNESS + err.message


def tie(entry: dict, text: str, expected: str | dict) -> str | None:
    """Where the certificate ``text`` does not state ``expected`` (``derive.certify.writer.statement_of`` of the
    library's claim), which part differs, in words; None where it states it.  An SMT-LIB2 certificate is compared
    command by command (comments aside), a JSON one by its statement's keys."""
    if entry["kind"] == "smt2":
        if not isinstance(expected, str):
            return "the library's claim has a JSON certificate, this one is SMT-LIB2"
        try:
            got, want = ([t[a:b] for _, a, b in commands(t)] for t in (text, expected))
        except ValueError as err:
            return f"not a certificate as derive writes one: {err}"
        if got == want:
            return None
        first = next((i for i, (g, w) in enumerate(zip(got, want, strict=False)) if g != w), min(len(got), len(want)))
        if first >= min(len(got), len(want)):
            return f"it has {len(got)} commands, the library's claim {len(want)}"
        head = re.match(r"\(([^\s()]+)", want[first]).group(1)  # commands() read each as one
        part = {"set-logic": "its logic", "declare-fun": "its quantities"}.get(head, "its assertions")
        return f"it differs from the library's claim in {part} (command {first + 1} of {len(want)}: {head})"
    if not isinstance(expected, dict):
        return "the library's claim has an SMT-LIB2 certificate, this one is JSON"
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return "the certificate is not JSON"
    if not isinstance(data, dict):
        return "the certificate is not a JSON object"
    differ = [key for key in expected if data.get(key) != expected[key]]
    if not differ:
        return None
    words = {"quantities": "its quantities (their integrality or box)", "assumptions": "its assumptions",
             "goal": "its goal", "lhs": "its identity's left side", "rhs": "its identity's right side"}
    return "it differs from the library's claim in " + " and ".join(words.get(k, k) for k in differ)


def stated_scenario(entry: dict, text: str) -> str | None:
    """The scenario a certificate names (its first comment line, or its JSON ``scenario``), or None."""
    if entry["kind"] == "smt2":
        found = re.search(r"^; derive certificate \([^)]*\): claim \S+, scenario (.+)$", text[:4096], re.M)
        return found.group(1) if found else None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data.get("scenario") if isinstance(data, dict) and isinstance(data.get("scenario"), str) else None


def recheck(folder: str | Path, workers: int = 1, statements: dict[str, str | dict | Exception] | None = None,
            scenario: str | None = None) -> list[Recheck]:
    """Re-check every certificate of ``folder`` (in the index's order, on up to ``workers`` processes: each
    answer depends only on its certificate); the claims without a certificate come back ``not confirmed``
    with why.  ``statements``: what the library states for each claim of the folder at the scenario (``tie``; an
    exception where it states nothing: not a claim of the library, a statement the kernel refuses): a
    certificate that states anything else ``differs``, whatever its proof (and where it names another
    ``scenario`` than the library's, its reason says so)."""
    from derive.checking.parallel import run_tasks

    certs, skipped = entries(folder)
    have = cvc5_available()
    tasks = []
    for e in certs:
        path = Path(folder) / e["file"]
        if path.is_symlink():  # derive writes files; a link could hand cvc5 any file, its errors quoting it
            tasks.append(functools.partial(Recheck, e["claim"], "not confirmed", "none",
                                           "the certificate is a symbolic link, not a file derive wrote"))
            continue
        text = read_certificate_text(path)
        header = _header_mismatch(e, text)
        if header:
            tasks.append(functools.partial(Recheck, e["claim"], *header))
            continue
        if statements is not None:
            expected = statements.get(e["claim"], KeyError(e["claim"]))
            differs = (f"the library states nothing for it ({_words(expected)})" if isinstance(expected, Exception)
                       else tie(e, text, expected))
            if differs is not None:
                named = stated_scenario(e, text)
                if scenario is not None and named is not None and named != scenario:
                    differs += f" (the certificate names scenario {escape_control(named, limit=200)})"
                tasks.append(functools.partial(Recheck, e["claim"], "differs", "library", differs))
                continue
        witness = None
        if e["verdict"] == "proved" and "witness" in e:
            witness = _read_witness(Path(folder), e["witness"])
        tasks.append(functools.partial(_with_witness, e, text, witness, have))
    out = [r for r in run_tasks(tasks, workers) if isinstance(r, Recheck)]
    return out + [Recheck(claim, "not confirmed", "none", f"no certificate: {why}")
                  for claim, why in sorted(skipped.items())]


def _words(err: Exception) -> str:
    if isinstance(err, KeyError):
        return "no such claim"
    return getattr(err, "message", None) or str(err)
