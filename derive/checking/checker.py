"""Checking claims of a library under a scenario: from declarations to ``Problem``s to results."""

from __future__ import annotations

import functools
import math
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

import sympy as sp

from derive.errors import UndefinedValueError
from derive.kernel.logic import Formula, Iff, Implies, Rel, name_of
from derive.kernel.problem import DEFAULT_RLIMIT, Outcome, Problem
from derive.kernel.prover import decide, region_shown_nonempty
from derive.kernel.trusted import MAX_NODES, Kernel, tree_size
from derive.model.declarations import Assumption, Claim, Declaration
from derive.model.library import Library
from derive.model.scenario import Scenario, linked
from derive.model.situation import Situation


class ProofStore(Protocol):
    """What the checker needs of a proof cache (``derive.checking.cache.ProofCache`` is one)."""

    def decide(self, problem: Problem) -> tuple[Outcome, bool]: ...


CHUNK = 3  # claims per task of a parallel check (see ``Checker._own_in_parallel``)

_SEVERITY = {"proved": 0, "assumed": 0, "blocked": 1, "unknown": 2, "inconsistent": 3, "refuted": 4}


@dataclass
class StepResult:
    index: int
    formula: sp.Expr | Formula
    why: str
    outcome: Outcome


@dataclass
class ClaimResult:
    id: str
    title: str
    kind: str
    verdict: str
    expected: str
    engine: str
    counterexample: dict[str, str] | None
    reason: str | None
    rests_on: list[str]
    seconds: float
    steps: list[StepResult] = field(default_factory=list)
    recheck: str | None = None
    own_verdict: str | None = None  # before blocking by dependencies
    side_conditions: list[str] = field(default_factory=list)  # of a proof: what the kernel discharged

    @property
    def meets_expectation(self) -> bool:
        return self.verdict == self.expected

    def _repr_latex_(self) -> str:
        from derive.model.display import format_number, tex_text

        text = rf"\textbf{{{tex_text(self.title)}}}\text{{: {tex_text(self.verdict)} ({tex_text(self.engine)})}}"
        if self.counterexample:
            text += r"\text{; counterexample } " + ", ".join(
                rf"\text{{{tex_text(k)}}} = {format_number(sp.Rational(v)).replace(',', '{,}')}"
                for k, v in self.counterexample.items())
        return f"${text}$"

    def to_json(self) -> dict:
        return {
            "id": self.id, "title": self.title, "kind": self.kind, "verdict": self.verdict,
            "expected": self.expected, "engine": self.engine, "counterexample": self.counterexample,
            "reason": self.reason, "rests_on": self.rests_on, "seconds": round(self.seconds, 4),
            "recheck": self.recheck, "side_conditions": list(self.side_conditions),
            "steps": [{"index": s.index, "verdict": s.outcome.verdict, "engine": s.outcome.engine,
                       "reason": s.outcome.reason} for s in self.steps],
        }


@dataclass
class Finding:
    """A definition that is not shown to meet its own declaration (its quantity's domain or integrality)
    under the library's assumptions: what it declares, the verdict on that obligation and why."""

    definition: str
    quantity: str
    declares: str
    verdict: str
    reason: str | None
    counterexample: dict[str, str] | None

    def text(self) -> str:
        where = (" (fails at " + ", ".join(f"{k} = {v}" for k, v in self.counterexample.items()) + ")"
                 if self.counterexample else f" ({self.reason})" if self.reason else "")
        return f"{self.definition}: {self.declares}, but the library does not show it: {self.verdict}{where}"

    def to_json(self) -> dict:
        return {"definition": self.definition, "quantity": self.quantity, "declares": self.declares,
                "verdict": self.verdict, "reason": self.reason, "counterexample": self.counterexample}


@dataclass
class Report:
    scenario: Scenario
    results: list[ClaimResult]
    # definitions not shown to meet their declared domain or integrality (``Checker.obligations``)
    findings: list[Finding] = field(default_factory=list)

    def summary(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.results:
            out[r.verdict] = out.get(r.verdict, 0) + 1
        return dict(sorted(out.items()))

    @property
    def ok(self) -> bool:
        return all(r.meets_expectation for r in self.results)

    def to_json(self) -> dict:
        return {"scenario": self.scenario.describe(), "claims": [r.to_json() for r in self.results],
                "summary": self.summary(), "findings": [f.to_json() for f in self.findings]}

    def by_id(self) -> dict[str, ClaimResult]:
        return {r.id: r for r in self.results}


class Checker:
    """Builds the proof problem of each claim and decides it."""

    def __init__(self, library: Library, scenario: Scenario, *, rlimit: int = DEFAULT_RLIMIT,
                 cache: ProofStore | None = None, workers: int = 1) -> None:
        self.library = library
        self.scenario = scenario
        self.situation = Situation(library, scenario)  # the library at the scenario, for this checker's life
        self.rlimit = rlimit
        self.cache = cache  # a derive.checking.cache.ProofCache, or None to always run the prover
        self.prover_calls = 0  # problems the prover actually decided (cache misses)
        self.workers = workers  # processes for a large check (see _own_in_parallel)
        # check(alongside=...)'s values, by claim id, from the process that checked each claim
        self.alongside_values: dict[str, object] = {}
        self._order: dict[str, int] | None = None  # each declaration's place in the library's order
        # called as progress(done, total) while check() runs (the command line draws a progress bar)
        self.progress: Callable[[int, int], None] | None = None

    def at(self, scenario: Scenario) -> Checker:
        """A checker of the same library, limits, cache and workers at another scenario (this one's if the same)."""
        if scenario is self.scenario:
            return self
        other = Checker(self.library, scenario, rlimit=self.rlimit, cache=self.cache, workers=self.workers)
        other.progress = self.progress
        return other

    def decide(self, problem: Problem) -> Outcome:
        """``prover.decide`` through the proof cache, when there is one."""
        if self.cache is None:
            self.prover_calls += 1
            return decide(problem)
        outcome, ran = self.cache.decide(problem)
        self.prover_calls += ran
        return outcome

    # problem assembly: one statement per claim and goal (``derive.model.situation``) ---------------

    def pinned_for(self, claim: Claim) -> frozenset[str]:
        """The pins a claim is read under (``Situation.pins_for``)."""
        return self.situation.pins_for(claim)

    def hypotheses_for(self, claim: Claim) -> list[Formula]:
        """Cited assumptions (transitively) and the claim's own premises, with their side conditions
        (``Situation.hypotheses``)."""
        return self.situation.hypotheses(claim)

    def problem(self, claim: Claim, goal: Formula | None = None, hyps: list[Formula] | None = None) -> Problem:
        """The kernel's problem of ``goal`` (the claim's own by default, or a derivation step's link) at the
        scenario: ``Situation.statement(...).problem``.  ``hyps`` is accepted for callers that computed
        ``hypotheses_for``; the statement has them already."""
        del hyps  # the statement's own: the same list, assembled once per claim
        return self.situation.statement(claim, goal).problem(self.rlimit)

    def fixed_by_hypotheses(self, claim: Claim) -> set[sp.Symbol]:
        """Quantities an instance claim's own hypotheses fix to a number (``Situation.fixed_by_hypotheses``)."""
        return set(self.situation.fixed_by_hypotheses(claim))

    def missing_values(self, claim: Claim) -> list[str]:
        return self.situation.missing_for(claim)

    # checking ------------------------------------------------------------------------------------

    def check_own(self, claim: Claim) -> ClaimResult:
        """The claim's own verdict (goal and every derivation step), ignoring its claim dependencies."""
        start = time.perf_counter()
        lib = self.library
        rests_on = lib.rests_on(claim)
        try:
            large = self.too_large(claim)
            if large:
                return self._result(claim, Outcome("unknown", "none", large), [], rests_on, start)
            missing = self.missing_values(claim)
            if missing:
                outcome = Outcome("unknown", "none", "the scenario gives no value for " + ", ".join(missing)
                                  + " (use --set or a preset)")
                return self._result(claim, outcome, [], rests_on, start)
            hyps = self.hypotheses_for(claim)
            steps = self._check_steps(claim, hyps)
            outcome = self.decide(self.problem(claim, claim.goal, hyps))
            result = self._result(claim, outcome, steps, rests_on, start)
            if result.verdict == "refuted" and claim.instance:
                # The point where an instance claim fails includes the scenario values it was checked at.
                result.counterexample = {**self.instance_values(claim, hyps), **(result.counterexample or {})}
            if result.verdict in ("inconsistent", "unknown") and claim.instance:
                result.reason = self.outside_domains(claim, result.verdict) or result.reason
        except UndefinedValueError as err:
            reason = self.outside_domains(claim, "undefined") or err.message
            outcome = Outcome("unknown", "none", f"the claim is not defined at the scenario's values: {reason}")
            return self._result(claim, outcome, [], rests_on, start)
        except Exception as err:  # noqa: BLE001 - one claim's internal error never stops the others
            outcome = Outcome("unknown", "none", f"internal error, so no verdict: {type(err).__name__}: {err}")
            return self._result(claim, outcome, [], rests_on, start)
        return result

    def outside_domains(self, claim: Claim, why: str) -> str | None:
        """Where an instance claim's values leave a definition it uses outside its ``domain``, or make a
        derived quantity break what it declares: the words of an ``inconsistent``, ``unknown`` or
        ``undefined`` (``why``) reason that name the definition, the condition as declared, the values that
        break it and the layer that gave them (``derive.model.evaluate.domain_breaks``).  None where no such
        condition is false at the values.  Wording only: the verdict is the kernel's.

        ``inconsistent``: a domain of a definition the goal or a hypothesis uses, or a declaration of one a
        hypothesis uses (each a hypothesis of the statement); ``unknown``: a declaration of one the goal
        uses (read, never assumed); ``undefined``: a domain anywhere (a part without a real value)."""
        from derive.model.evaluate import domain_breaks

        lib = self.library
        try:
            statement = self.situation.statement(claim)
            values = {**statement.substituted, **statement.fixed}
            origins = {name_of(s): "the claim's hypotheses" for s in statement.fixed}
            written = [h for aid in lib.rests_on(claim)
                       if isinstance(a := lib.declarations[aid], Assumption) and (h := a.relation) is not None]
            hyps = [e for f in [*written, *claim.hypotheses] for e in f.exprs()] + [q.sym for q, _, _ in claim.bounds]
            goal = list(claim.goal.exprs())
            if why == "inconsistent":
                breaks = domain_breaks(lib, self.scenario, goal, statement.pins, values, ("domain",), origins=origins)
                breaks += [b for b in domain_breaks(lib, self.scenario, hyps, statement.pins, values, origins=origins)
                           if b not in breaks]
            elif why == "unknown":
                breaks = domain_breaks(lib, self.scenario, goal, statement.pins, values, ("declared",),
                                       origins=origins)
            else:
                breaks = domain_breaks(lib, self.scenario, goal + hyps, statement.pins, values, ("domain",),
                                       origins=origins)
        except Exception:  # noqa: BLE001 - words only: a reason that cannot be worded stays the kernel's
            return None
        if not breaks:
            return None
        more = f" (and {len(breaks) - 1} more)" if len(breaks) > 1 else ""
        first = breaks[0]
        if why == "inconsistent":
            head = (f"the values lie outside the domain of {first.definition}: {first.words()}{more}; the claim's "
                    "assumptions contradict each other there")
        elif why == "unknown":
            head = (f"the claim is read where {first.quantity} breaks its declaration: {first.words()}{more}; "
                    "no verdict there")
        else:
            head = f"{first.words()}{more}"
        return f"{head}; hint: {first.hint()}"

    def too_large(self, claim: Claim) -> str | None:
        """Why the claim is too large to check (its expressions, with the assumptions it cites and the
        definitions they use expanded, past the kernel's ``MAX_NODES``), or None: checked on sympy's
        shared structure before anything walks the trees."""
        lib, pinned = self.library, self.pinned_for(claim)
        exprs = list(claim.exprs())
        for aid in lib.rests_on(claim):
            relation = getattr(lib.declarations[aid], "relation", None)
            exprs += relation.exprs() if relation is not None else []
        if tree_size(exprs) <= MAX_NODES and tree_size([lib.expand(e, pinned) for e in exprs]) <= MAX_NODES:
            return None
        return f"the claim is too large for the engines (more than {MAX_NODES} nodes, definitions expanded; a budget)"

    def confirms(self, result: ClaimResult) -> bool:
        """Whether a stored own result (a cache's) may be replayed: a ``refuted`` one only when the
        kernel re-checks its counterexample against the claim's problem as it is assembled now (a step's
        counterexample is not re-checked here: such a result is simply recomputed)."""
        if result.verdict != "refuted":
            return True
        claim = self.library.declarations.get(result.id)
        if not isinstance(claim, Claim) or not result.counterexample:
            return False
        return self.refutes_goal(claim, result.counterexample, result.engine)

    def refutes_goal(self, claim: Claim, counterexample: dict[str, str], engine: str) -> bool:
        """Whether the kernel confirms ``counterexample`` (values by quantity name, as text) as a counterexample
        to the claim's own statement, its hypotheses and goal as assembled now."""
        try:
            hyps = self.hypotheses_for(claim)
            fixed = self.instance_values(claim, hyps) if claim.instance else {}
            if any(counterexample.get(name) != value for name, value in fixed.items()):
                return False
            problem = self.problem(claim, claim.goal, hyps)
            point = {s: sp.Rational(counterexample[str(s)]) for s in problem.symbols() if str(s) in counterexample}
            return Kernel(problem).refuted(point, engine) is not None
        except Exception:  # noqa: BLE001 - a point that cannot be re-checked refutes nothing
            return False

    def instance_values(self, claim: Claim, hyps: list[Formula] | None = None) -> dict[str, str]:
        """Scenario values substituted into an instance claim, by quantity name."""
        statement = self.situation.statement(claim)
        return statement.shown_values([statement.goal, *(self.hypotheses_for(claim) if hyps is None else hyps)])

    def _check_steps(self, claim: Claim, hyps: list[Formula]) -> list[StepResult]:
        """Each line against the previous one: equal expressions, or the previous relation implies
        (or is equivalent to) this one.  A first relation must follow from the hypotheses."""
        chain = step_chain(claim)
        results: list[StepResult] = []
        prev = None
        # The first line's link says how it stands to the hypotheses: "implies" means it follows from
        # them (checked); "iff" means it is the supposition a chain of equivalences starts from.
        first_is_supposition = bool(claim.steps) and claim.steps[0].link == "iff"
        for i, (formula, why, link_kind) in enumerate(chain):
            same = isinstance(prev, sp.Basic) and isinstance(formula, sp.Basic) and prev == formula
            link: Formula | None = None
            if prev is None:
                link = formula if isinstance(formula, Formula) and not first_is_supposition else None
            elif same:
                link = None
            elif isinstance(prev, Formula) and isinstance(formula, Formula):
                link = Iff(prev, formula) if link_kind == "iff" else Implies(prev, formula)
            elif not isinstance(prev, Formula) and not isinstance(formula, Formula):
                link = Rel(prev, "==", formula)
            else:
                results.append(StepResult(i, formula, why, Outcome(
                    "unknown", "none", "a step mixes an expression and a relation")))
            if link is not None:
                results.append(StepResult(i, formula, why, self.decide(self.problem(claim, link, hyps))))
            prev = formula
        return results

    def _result(self, claim: Claim, outcome: Outcome, steps: list[StepResult], rests_on: list[str],
                start: float) -> ClaimResult:
        worst = outcome
        for s in steps:
            if _SEVERITY[s.outcome.verdict] > _SEVERITY[worst.verdict]:
                worst = s.outcome
        reason = worst.reason
        if worst is not outcome and worst.verdict != "proved":
            idx = next(s.index for s in steps if s.outcome is worst)
            reason = f"derivation step {idx}: {worst.reason or worst.verdict}"
            cex = worst.as_text_counterexample()
            why = None
            if worst.verdict == "refuted" and not (cex and self.refutes_goal(claim, cex, worst.engine)):
                # a false step shows the derivation wrong, not the claim: `refuted` is said only with a
                # counterexample to the claim's own statement, so the claim is unknown, the step's point named
                at = ", ".join(f"{k} = {v}" for k, v in (cex or {}).items())
                why = f"derivation step {idx} is false{f' at {at}' if at else ''}, where the claim's own statement " \
                      "is not refuted"
            elif worst.verdict == "inconsistent" and outcome.verdict != "inconsistent":
                # the step's problem adds what its own expressions need (a definition's domain) to the claim's
                # hypotheses; contradicting them shows the step meaningless there, not the claim's assumptions
                why = f"derivation step {idx}'s assumptions contradict each other where the claim's own do not (a " \
                      "definition it uses is outside its domain there)"
            if why is not None:
                own = outcome.verdict if outcome.verdict != "proved" else "proved without the derivation"
                worst = Outcome("unknown", worst.engine,
                                f"{why}: the derivation does not establish it (the statement alone: {own})")
                reason = worst.reason
        return ClaimResult(
            id=claim.id, title=claim.title, kind=claim_kind(claim), verdict=worst.verdict,
            expected=claim.expected, engine=worst.engine, counterexample=worst.as_text_counterexample(),
            reason=reason, rests_on=rests_on, seconds=time.perf_counter() - start, steps=steps,
            recheck=worst.recheck, own_verdict=worst.verdict,
            side_conditions=list(outcome.side_conditions) if worst.verdict == "proved" else [],
        )

    def check(self, ids: Iterable[str] | None = None, *, meanwhile: Callable[[], None] | None = None,
              alongside: Callable[[Claim, ClaimResult], object] | None = None) -> Report:
        """Check the named claims (all when ``ids`` is None) and the claims they rest on.  ``meanwhile``
        (which must not raise): the caller's work that does not need the results, done in this process
        while worker processes check (``derive.checking.parallel.run_tasks``), else first.  ``alongside``
        (which must not raise; its values picklable): the caller's work on each claim checked and its own
        result (before blocking), done right after the claim in the process that checked it, where the
        library's expansions of the claim are at hand; its values go to ``alongside_values`` by claim id
        (a value that cannot travel back from a worker makes the worker's part run here)."""
        lib = self.library
        wanted = None if ids is None else [lib.resolve(i) for i in ids]
        if wanted is not None:
            for d in wanted:
                if not isinstance(d, Claim):
                    from derive.errors import WrongKindError

                    article = "an" if d.kind[:1] in "aeiou" else "a"  # an assumption, a definition
                    raise WrongKindError(f"'{d.id}' is {article} {d.kind}, not a claim",
                                         hint="`derive show` displays it")
        needed = self._closure(wanted)
        todo = [d for d in lib.topological() if d.id in needed and isinstance(d, Claim)]
        names = self.obligation_names(needed if wanted is not None else None)  # a whole check: every definition
        if meanwhile is not None:
            meanwhile = _once(meanwhile)
        self.alongside_values = {}
        own, findings = self._own_in_parallel(todo, names, meanwhile, alongside) if self.workers > 1 else ({}, None)
        if meanwhile is not None:  # no worker processes: here, first
            meanwhile()
        results: dict[str, ClaimResult] = {}
        for k, decl in enumerate(todo, start=1):
            result = own.get(decl.id)
            if result is None:
                result = self.check_own(decl)
                if alongside is not None:
                    self.alongside_values[decl.id] = alongside(decl, result)
            results[decl.id] = self.apply_blocking(decl, result, results)
            if self.progress is not None and not own:  # a parallel run reported while it ran
                self.progress(k, len(todo))
        order = [d.id for d in (wanted if wanted is not None else lib.claims())]
        if findings is None:
            findings = [f for name in names for f in self.obligation(name)]
        return Report(self.scenario, [results[i] for i in order], findings)

    def obligations(self, claim_ids: Iterable[str] | None = None) -> list[Finding]:
        """The definitions (those the claims ``claim_ids`` use, or all) that are not shown to meet their
        declared domain or integrality under the library's assumptions (``obligation``)."""
        return [f for name in self.obligation_names(claim_ids) for f in self.obligation(name)]

    def obligation_names(self, claim_ids: Iterable[str] | None = None) -> list[str]:
        """Derived quantities (those the claims ``claim_ids`` use, or all) whose declaration is not met
        by the structure of their definition alone: each is an obligation."""
        lib = self.library
        if claim_ids is None:
            names = sorted(lib.definition_of)
        else:
            used: set[str] = set()
            for cid in claim_ids:
                used |= {a for a in lib.ancestors(cid) if lib.declarations[a].kind == "definition"}
            names = sorted(d.defines.name for d in lib.definition_of.values() if d.id in used)
        return [n for n in names if self._declared(n)]

    def _declared(self, name: str) -> list[tuple[str, Formula]]:
        return [(label, c) for label, c in self.library.definition_conditions([self.library.quantities[name].sym])
                if label.startswith(f"{name} is declared")]

    def obligation(self, name: str) -> list[Finding]:
        """Whether the definition of ``name`` meets what its quantity declares (domain, integrality): the
        declared relation of the definition's expression, under the library's assumptions that share a
        quantity with it, the definition's own domain and what the definitions it uses declare
        (``Library.definition_conditions``), decided like a claim (first without the assumptions where that
        cannot change the finding, ``_met_from_context``); a finding for each one not proved.
        A declaration is never a hypothesis elsewhere; where the quantity is used it is a side condition."""
        lib = self.library
        definition = lib.definition_of[name]
        own = self._declared(name)
        inner = lib.definition_conditions([definition.expr, *(definition.domain.exprs() if definition.domain
                                                               else [])])
        context = [c for _, c in inner]
        if definition.domain is not None:
            context.append(lib.formula_expand(definition.domain))
        symbols = set().union(*(c.free_symbols() for _, c in own)) if own else set()
        assumptions = [d.relation for d in lib.declarations.values()
                       if isinstance(d, Assumption) and d.relation is not None]
        expanded = [lib.formula_expand(a) for a in assumptions]
        expanded = [expanded[i] for i in linked([f.free_symbols() for f in expanded], symbols)]
        out: list[Finding] = []
        for label, goal in own:
            problem = self._obligation_problem(definition.id, goal, [*expanded, *context])
            outcome = (self._met_from_context(definition.id, goal, context, problem) if expanded else None) \
                or self.decide(problem)  # without linked assumptions the shorter problem is this one
            if outcome.verdict != "proved":
                point = outcome.as_text_counterexample()  # the quantities of the declaration, in short
                shown = {n: v for n, v in point.items() if n in {name_of(s) for s in goal.free_symbols()}} \
                    if point else None
                out.append(Finding(definition.id, name, label, outcome.verdict, outcome.reason, shown))
        return out

    def _obligation_problem(self, definition_id: str, goal: Formula, hyps: list[Formula]) -> Problem:
        """``goal`` under ``hyps`` and the declared domains of every quantity they read."""
        lib = self.library
        present = goal.free_symbols().union(*(h.free_symbols() for h in hyps))
        domains = [d for s in sorted(present, key=name_of) if (d := lib.quantity_of(s).domain_formula())]
        integer = {s for s in present if lib.quantity_of(s).integer}
        return Problem(domains + hyps, goal, integer, {}, self.rlimit, zlib.crc32(definition_id.encode()))

    def _met_from_context(self, definition_id: str, goal: Formula, context: list[Formula],
                          problem: Problem) -> Outcome | None:
        """The obligation proved without the library's assumptions (from the declared domains and ``context``,
        the definition's own conditions, alone), where the kernel confirms a point of the whole ``problem``'s
        region; else None (the caller decides ``problem`` itself).  Its hypotheses are a subset of the
        problem's, so a proof holds on the problem's region too, and that region is not empty, so the
        problem is not ``inconsistent``: the finding is the same.  Most declarations follow from the
        domains alone, and a problem without the assumptions linked to the quantity (often forty) took
        z3 a fifth of the time (the serving library's obligations: 0.66 s of one process's CPU, 0.17 s)."""
        if not region_shown_nonempty(problem):
            return None
        outcome = self.decide(self._obligation_problem(definition_id, goal, context))
        return outcome if outcome.verdict == "proved" else None

    def _own_in_parallel(self, claims: list[Claim], names: list[str], meanwhile: Callable[[], None] | None = None,
                         alongside: Callable[[Claim, ClaimResult], object] | None = None
                         ) -> tuple[dict[str, ClaimResult], list[Finding] | None]:
        """Own verdicts of many claims, and the obligations of the definitions ``names``
        (``obligation``), on ``workers`` forked processes (``derive.checking.parallel``; blocking is
        applied after, in the parent).  Empty and None where one process would do: the caller then
        checks claim by claim."""
        from derive.checking.parallel import can_fork, run_tasks

        if len(claims) < 16 or not can_fork():
            return {}, None
        done = [0]

        def tick(part: object) -> None:
            if isinstance(part, tuple):  # an obligation's findings
                return
            done[0] += len(part)  # type: ignore[arg-type]
            if self.progress is not None:
                self.progress(done[0], len(claims))

        # the obligations first (a few take longer than a claim), then small chunks of claims, the chunks with
        # the most problems (each claim's goal and derivation steps) first: the last ones handed out are small,
        # so the workers finish together (two workers simulated on one cold check's task times: 0.10 s apart
        # in library order, 0.004 s in this one for the lecture; the serving library's chunks of four still
        # ended 0.09 to 0.11 s apart, a claim of few problems and a long interval proof among the last, and
        # chunks of three 0.01 to 0.02 s apart, 0.03 to 0.04 s sooner)
        tasks = [functools.partial(self._obligation_part, name) for name in names]
        chunks = [claims[i:i + CHUNK] for i in range(0, len(claims), CHUNK)]
        tasks += [functools.partial(self._own_many, chunk, alongside) for chunk in chunks]
        cost = [math.inf] * len(names) + [float(sum(1 + len(c.steps) for c in chunk)) for chunk in chunks]
        parts = run_tasks(tasks, self.workers, on_result=tick, meanwhile=meanwhile, cost=cost)
        findings = [f for part in parts[:len(names)] for f in part]  # type: ignore[attr-defined]
        own = {r.id: r for part in parts[len(names):] for r, _ in part}  # type: ignore[attr-defined]
        if alongside is not None:
            self.alongside_values.update((r.id, v) for part in parts[len(names):] for r, v in part)  # type: ignore
        for claim in claims:
            if own[claim.id].steps:
                chain = step_chain(claim)
                for s in own[claim.id].steps:
                    s.formula = chain[s.index][0]  # type: ignore[assignment]
        return own, findings

    def _obligation_part(self, name: str) -> tuple[Finding, ...]:
        return tuple(self.obligation(name))

    def _own_many(self, claims: list[Claim], alongside: Callable[[Claim, ClaimResult], object] | None = None
                  ) -> list[tuple[ClaimResult, object]]:
        """Own results of ``claims``, each with ``alongside``'s value (None without it), for another process:
        the steps' formulas are left out (rebuilding sympy trees from a pickle was most of what the parent
        spent on the results; ``_own_in_parallel`` puts the claims' own objects back)."""
        out = []
        for c in claims:
            r = self.check_own(c)
            out.append((r, alongside(c, r) if alongside is not None else None))
            for s in r.steps:
                s.formula = None  # type: ignore[assignment]
        return out

    def _closure(self, wanted: list[Declaration] | None) -> set[str]:
        lib = self.library
        if wanted is None:
            return {c.id for c in lib.claims()}
        out: set[str] = set()
        for d in wanted:
            out.add(d.id)
            out |= {a for a in lib.ancestors(d.id) if isinstance(lib.declarations[a], Claim)}
        return out

    def apply_blocking(self, claim: Claim, own: ClaimResult, done: dict[str, ClaimResult]) -> ClaimResult:
        """A proved claim that rests on a claim that is not proved, through any path of the dependency
        graph (directly, or through assumptions and definitions that use it), is ``blocked``."""
        if own.verdict != "proved":
            return own
        if self._order is None:  # made once: a check blocks every proved claim against it
            self._order = {d.id: i for i, d in enumerate(self.library.ordered())}
        bad = [u for u in resting_claims(self.library, claim, self._order)
               if u in done and done[u].verdict not in ("proved",)]
        if bad:
            own.verdict = "blocked"
            own.reason = "rests on " + ", ".join(f"{b} ({done[b].verdict})" for b in bad)
        return own




def _once(fn: Callable[[], None]) -> Callable[[], None]:
    """``fn``, run at its first call only."""
    done: list[bool] = []

    def call() -> None:
        if not done:
            done.append(True)
            fn()
    return call


def resting_claims(library: Library, claim: Claim, order: dict[str, int] | None = None) -> list[str]:
    """Claims this one rests on through paths whose inner nodes are assumptions or definitions (a
    claim further back is reached through the claim in between, whose own verdict carries it).  ``order``:
    each id's place in ``library.ordered()``, where the caller has it (made here otherwise)."""
    out: list[str] = []
    seen: set[str] = set()
    todo = library.predecessors(claim.id)
    while todo:
        d = todo.pop()
        if d in seen:
            continue
        seen.add(d)
        if isinstance(library.declarations[d], Claim):
            out.append(d)
        else:
            todo.extend(library.predecessors(d))
    if order is None:
        order = {d.id: i for i, d in enumerate(library.ordered())}
    return sorted(out, key=order.get)


def step_chain(claim: Claim) -> list[tuple[object, str, str]]:
    """The lines a claim's derivation checks, each with its reason and link: its steps, between the two
    sides of an equation when the first step is an expression (``StepResult.index`` counts in it)."""
    chain: list[tuple[object, str, str]] = [(s.formula, s.why, s.link) for s in claim.steps]
    goal = claim.goal
    if chain and isinstance(goal, Rel) and goal.op == "==" and not isinstance(chain[0][0], Formula):
        chain = [(goal.lhs, "", "")] + chain + [(goal.rhs, "", "")]
    return chain


def claim_kind(claim: Claim) -> str:
    g = claim.goal
    if isinstance(g, Rel) and g.op == "==":
        return "identity"
    return "instance" if claim.instance else "inequality"
