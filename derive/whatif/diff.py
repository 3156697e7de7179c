"""What breaks when the scenario changes: the claims whose verdict differs between two scenarios.

``diff(library, baseline, current)`` checks every claim under the baseline (or takes the baseline's
results from the results cache), then re-checks under the current scenario **only the claims the
change can reach**; every other claim keeps its baseline verdict of its own, and blocking is then
recomputed over the whole graph, so a claim whose dependency broke becomes ``blocked`` without being
re-proved.

A claim is *affected* (re-checked) when one of these holds:

- it is an instance claim and a quantity it finally depends on (its ``bounds`` included; through
  definitions, stopping at pinned quantities) has a different value in the two scenarios (a ``forall`` quantity is never
  substituted, so its value does not count);
- it is an instance claim and a quantity pinned in one scenario but not in the other lies on its
  definition paths (the pin cuts a definition the claim expands through);
- an ``--assume`` relation present in one scenario only shares a quantity with it (the checker adds
  scenario assumptions to exactly those claims).

General claims (``instance=False``) are about the definitions for every value the assumptions allow;
values and pins never reach them.  The dependency sets are computed over the definition graph, without
expanding formulas, and err on the side of re-checking.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import sympy as sp

from derive.checking.checker import Checker, ClaimResult
from derive.model.declarations import Assumption, Claim, free_symbols_of
from derive.model.library import Library
from derive.model.prose import markdown_escape
from derive.model.scenario import Scenario, linked
from derive.whatif.feasibility import feasibility


@dataclass(frozen=True)
class ScenarioChange:
    """What differs between two scenarios: values (exact SI text, None when absent), pins, assumptions."""

    values: Mapping[str, tuple[str | None, str | None]]
    pinned_added: tuple[str, ...] = ()
    pinned_removed: tuple[str, ...] = ()
    assumptions_added: tuple[str, ...] = ()
    assumptions_removed: tuple[str, ...] = ()

    @property
    def quantities(self) -> set[str]:
        return set(self.values) | set(self.pinned_added) | set(self.pinned_removed)

    @property
    def empty(self) -> bool:
        return not (self.values or self.pinned_added or self.pinned_removed or self.assumptions_added
                    or self.assumptions_removed)

    def to_json(self) -> dict:
        return {"values": {n: {"before": b, "after": a} for n, (b, a) in sorted(self.values.items())},
                "pinned_added": list(self.pinned_added), "pinned_removed": list(self.pinned_removed),
                "assumptions_added": list(self.assumptions_added),
                "assumptions_removed": list(self.assumptions_removed)}

    def lines(self) -> list[str]:
        out = []
        for n, (b, a) in sorted(self.values.items()):
            out.append(f"{n}: {b if b is not None else '(no value)'} -> {a if a is not None else '(no value)'}")
        out += [f"pinned {n} (definition cut)" for n in self.pinned_added]
        out += [f"unpinned {n} (definition restored)" for n in self.pinned_removed]
        out += [f"--assume {t}" for t in self.assumptions_added]
        out += [f"dropped assumption {t}" for t in self.assumptions_removed]
        return out


def compare_scenarios(base: Scenario, current: Scenario) -> ScenarioChange:
    values = {}
    for name in sorted(set(base.values) | set(current.values)):
        b, a = base.value(name), current.value(name)
        if b != a:
            values[name] = (None if b is None else str(b), None if a is None else str(a))
    base_texts = [t for t, _ in base.assumptions]
    cur_texts = [t for t, _ in current.assumptions]
    return ScenarioChange(
        values=values,
        pinned_added=tuple(sorted(current.pinned - base.pinned)),
        pinned_removed=tuple(sorted(base.pinned - current.pinned)),
        assumptions_added=tuple(t for t in cur_texts if t not in base_texts),
        assumptions_removed=tuple(t for t in base_texts if t not in cur_texts),
    )


class Dependencies:
    """Quantities a declaration reaches through definitions, memoised per set of pins."""

    def __init__(self, library: Library) -> None:
        self.library = library
        self._memo: dict[tuple[str, frozenset[str]], frozenset[str]] = {}

    def reach(self, name: str, pinned: frozenset[str]) -> frozenset[str]:
        """``name`` and every quantity its definition expands through; pinned quantities are leaves."""
        key = (name, pinned)
        if key in self._memo:
            return self._memo[key]
        out = {name}
        d = self.library.definition_of.get(name)
        if d is not None and name not in pinned:
            # the domain too: where it holds decides whether a claim that uses the quantity is read at all
            domain = list(d.domain.exprs()) if d.domain is not None else []
            for s in free_symbols_of([d.expr, *domain]):
                out |= self.reach(self.library.quantity_of(s).name, pinned)
        result = frozenset(out)
        self._memo[key] = result
        return result

    def of_exprs(self, exprs: Iterable, pinned: frozenset[str]) -> set[str]:
        out: set[str] = set()
        for s in free_symbols_of(list(exprs)):
            out |= self.reach(self.library.quantity_of(s).name, pinned)
        return out

    def of_claim(self, claim: Claim, pinned: frozenset[str]) -> set[str]:
        """Quantities of the goal, hypotheses, steps, ``bounds`` (hypotheses too: bounds on a derived quantity
        read its definition's inputs) and the relations of the assumptions it rests on."""
        exprs = list(claim.exprs())
        exprs += [e for q, lo, hi in claim.bounds for e in (getattr(q, "sym", None), lo, hi)
                  if isinstance(e, sp.Basic)]
        for aid in self.library.rests_on(claim):
            a = self.library.declarations[aid]
            if isinstance(a, Assumption) and a.relation is not None:
                exprs.extend(a.relation.exprs())
        return self.of_exprs(exprs, pinned)


@dataclass(frozen=True)
class Reach:
    """Why a claim is re-checked: in words, and the changed quantities whose values it uses."""

    reason: str
    values: tuple[str, ...] = ()


def affected_claims(library: Library, base: Scenario, current: Scenario, claims: Iterable[Claim],
                    change: ScenarioChange | None = None) -> dict[str, Reach]:
    """The claims a change of scenario can reach, each with the reason (see module docstring)."""
    change = change or compare_scenarios(base, current)
    deps = Dependencies(library)
    pin_changed = set(change.pinned_added) | set(change.pinned_removed)
    added = [f for t, f in current.assumptions if t in change.assumptions_added]
    removed = [f for t, f in base.assumptions if t in change.assumptions_removed]
    out: dict[str, Reach] = {}
    for claim in claims:
        reasons: list[str] = []
        moved: list[str] = []
        if claim.instance:
            forall = {q.name for q in claim.forall}
            reach = deps.of_claim(claim, base.pinned) | deps.of_claim(claim, current.pinned)
            moved = sorted((reach & set(change.values)) - forall)
            if moved:
                reasons.append("uses " + ", ".join(moved) + " (value changed)")
            cut = sorted(reach & pin_changed - set(moved))
            if cut:
                reasons.append("expands through " + ", ".join(cut) + " (pin changed)")
        for scenario, formulas, word in ((current, added, "added"), (base, removed, "dropped")):
            if not formulas:
                continue
            pinned = scenario.pinned if claim.instance else frozenset()
            mine = deps.of_claim(claim, pinned)
            groups = [deps.of_exprs(f.exprs(), pinned) for _, f in scenario.assumptions]
            for i in linked(groups, mine):  # the assumptions the claim rests on, through one another
                mine |= groups[i]
            for f in formulas:
                shared = sorted(mine & deps.of_exprs(f.exprs(), pinned))
                if shared:
                    reasons.append(f"shares {', '.join(shared)} with an {word} assumption")
                    break
        if reasons:
            out[claim.id] = Reach("; ".join(reasons), tuple(moved))
    return out


def own_results(checker: Checker, claims: Iterable[Claim]) -> dict[str, ClaimResult]:
    """Each claim's own verdict (goal and steps), before blocking."""
    return {c.id: checker.check_own(c) for c in claims}


def with_blocking(checker: Checker, claims: list[Claim], own: Mapping[str, ClaimResult]) -> dict[str, ClaimResult]:
    """Blocking applied in dependency order, on copies (``own`` is left as it was)."""
    done: dict[str, ClaimResult] = {}
    ids = {c.id for c in claims}
    for decl in checker.library.topological():
        if decl.id in ids:
            assert isinstance(decl, Claim)
            done[decl.id] = checker.apply_blocking(decl, dataclasses.replace(own[decl.id]), done)
    return done


@dataclass
class DiffReport:
    baseline: Scenario
    current: Scenario
    change: ScenarioChange
    order: list[str]
    before: dict[str, ClaimResult]
    after: dict[str, ClaimResult]
    rechecked: dict[str, Reach]  # id -> why it was re-checked (claims outside ``order`` included)
    prover_calls: int = 0
    baseline_cached: bool = False
    pinned: dict[str, list[dict]] = field(default_factory=dict)
    library: Library | None = None
    headlines: list[dict] = field(default_factory=list)  # explain.headlines_compared
    headline_notes: list[str] = field(default_factory=list)  # how the headlines read a side (an implied layout)
    explanations: dict[str, dict] = field(default_factory=dict)  # id -> what moved (see ``explain_flips``)
    conflicts: list = field(default_factory=list)  # explain.Conflict, when the scenario is inconsistent
    # feasibility.Violation of each side ("baseline", "scenario"): bounds no deployment there can meet
    infeasible: dict[str, list] = field(default_factory=dict)

    def changed(self) -> list[str]:
        return [i for i in self.order if self.before[i].verdict != self.after[i].verdict]

    def entry(self, cid: str) -> dict:
        b, a = self.before[cid], self.after[cid]
        reach = self.rechecked.get(cid)
        used = {n: {"before": self.change.values[n][0], "after": self.change.values[n][1]}
                for n in (reach.values if reach else ())}
        return {"id": cid, "title": a.title, "before": b.verdict, "after": a.verdict, "expected": a.expected,
                "counterexample": a.counterexample, "counterexample_before": b.counterexample,
                "reason": a.reason if a.verdict != "proved" else b.reason, "engine": a.engine,
                "why_rechecked": reach.reason if reach else None, "values": used,
                **self.explanations.get(cid, {})}

    def to_json(self) -> dict:
        changed = self.changed()
        return {
            "baseline": self.baseline.name, "scenario": self.current.name,
            "changed": [self.entry(c) for c in changed],
            "unchanged": len(self.order) - len(changed),
            "rechecked": len(self.rechecked), "rechecked_ids": list(self.rechecked),
            "claims": len(self.order), "prover_calls": self.prover_calls,
            "changes": {**self.change.to_json(), "display": {n: {"before": self.value_text(n, b), "after":
                        self.value_text(n, a)} for n, (b, a) in sorted(self.change.values.items())}},
            "pinned": self.pinned,
            "headlines": self.headlines, "headline_notes": self.headline_notes,
            "conflicts": [c.to_json() for c in self.conflicts],
            "infeasible": {side: [v.to_json() for v in vs] for side, vs in self.infeasible.items()},
        }

    def infeasible_lines(self) -> list[str]:
        """Each bound a side's deployment cannot meet (the memory does not fit), under its values."""
        out = [v.note for v in self.infeasible.get("scenario", ())]
        return out + [f"in baseline {self.baseline.name}, {v.note}" for v in self.infeasible.get("baseline", ())]

    def value_text(self, name: str, si_text: str | None) -> str:
        """A scenario value for people (``20 TB/s``); raw when the library is not at hand."""
        if si_text is None:
            return "(no value)"
        if self.library is None or name not in self.library.quantities:
            return si_text
        from derive.model.display import format_quantity

        q = self.library.quantities[name]
        return format_quantity(sp.Rational(si_text), q.dimension, q.display_unit)

    def change_lines(self) -> list[str]:
        out = []
        for n, (b, a) in sorted(self.change.values.items()):
            layer = self.current.values[n].origin if n in self.current.values else "dropped"
            out.append(f"{n}: {self.value_text(n, b)} -> {self.value_text(n, a)}   ({layer})")
        out += [f"pinned {n} (definition cut)" for n in self.change.pinned_added]
        out += [f"unpinned {n} (definition restored)" for n in self.change.pinned_removed]
        out += [f"--assume {t}" for t in self.change.assumptions_added]
        out += [f"dropped assumption {t}" for t in self.change.assumptions_removed]
        return out

    def groups(self) -> tuple[list[str], list[str]]:
        """Changed claims split: the lecture's own numbers (instance claims) and qualitative claims."""
        changed = self.changed()
        inst = [c for c in changed if self.explanations.get(c, {}).get("group") == "instance"]
        return inst, [c for c in changed if c not in inst]

    def headline_lines(self) -> list[str]:
        if not self.headlines:
            return []
        width = max(len(h["label"]) for h in self.headlines)
        bw = max(len(h["before"]["display"]) for h in self.headlines)
        out = [f"{'headline quantities':<{width + 2}}  {'before':<{bw}}    after"]
        for h in self.headlines:
            mark = "" if h["changed"] else "   (unchanged)"
            after = "" if not h["changed"] else h["after"]["display"]
            out.append(f"  {h['label']:<{width}}  {h['before']['display']:<{bw}} -> {after or h['before']['display']}"
                       f"{mark}")
        return out + [f"  note: {n}" for n in self.headline_notes]

    def claim_lines(self, cid: str) -> list[str]:
        e = self.entry(cid)
        out = [f"  {cid}  {e['before']} -> {e['after']}   {e['title']}"]
        for v in e.get("violations", []):
            out.append(f"      {v['when']}: {v['text']}")
        if e.get("threshold"):
            out.append(f"      {e['threshold']['text']}")
        if e["counterexample"] and not e.get("violations") and self.library is not None:
            out.append("      counterexample: " + ", ".join(
                f"{k} = {self.value_text(k, v)}" for k, v in e["counterexample"].items()))
        if e["reason"] and e["after"] not in ("proved", "refuted"):
            out.append(f"      reason: {e['reason']}")
        return out

    def text_lines(self) -> list[str]:
        changed = self.changed()
        out = [f"what if: {self.baseline.name} -> {self.current.name}"]
        out += [f"  {line}" for line in self.change_lines()] or ["  (no change of values, pins or assumptions)"]
        same = (self.pinned.get("baseline") or []) == (self.pinned.get("scenario") or [])
        for side in ("scenario",) if same else ("baseline", "scenario"):
            notes = self.pinned.get(side) or []
            if notes:
                out.append(f"pinned{'' if same else ' in ' + side}: " + ", ".join(
                    f"{n['quantity']} = {n.get('display', n['value'])} (definition cut)" for n in notes))
        out += self.headline_lines()
        out += self.infeasible_lines()
        inst, general = self.groups()
        out.append(f"the lecture's own numbers that moved ({len(inst)} instance claim{'s' if len(inst) != 1 else ''}):"
                   if inst else "the lecture's own numbers: no instance claim changes verdict")
        for cid in inst:
            out += self.claim_lines(cid)
        out.append(f"qualitative claims that flipped ({len(general)}):" if general
                   else "qualitative claims: none flipped")
        for cid in general:
            out += self.claim_lines(cid)
        if self.conflicts:
            out.append("the scenario contradicts itself (verdict inconsistent: nothing follows from it):")
            for c in self.conflicts:
                out += [f"  {line}" for line in c.lines()]
        out.append(f"{len(changed)} of {len(self.order)} claims change verdict; re-checked {len(self.rechecked)} "
                   f"(the other {len(self.order) - len(self.rechecked)} cannot be reached by the change); "
                   f"{self.prover_calls} prover calls")
        return out

    def markdown(self) -> str:
        changed = self.changed()
        lines = [f"# What changes from `{self.baseline.name}` to `{self.current.name}`", ""]
        lines += ["## Scenario change", ""]
        lines += [f"- {_md_code(line)}" for line in self.change_lines()] or ["- (none)"]
        for side in ("baseline", "scenario"):
            notes = self.pinned.get(side) or []
            if notes:
                lines.append(f"- pinned in {side}: " + ", ".join(f"`{n['quantity']}` = {n['value']} (definition cut)"
                                                                for n in notes))
        if self.headlines:
            lines += ["", "## Headline quantities", "", "| quantity | before | after |", "| --- | --- | --- |"]
            lines += [f"| {h['label']} | {h['before']['display']} | {h['after']['display']} |" for h in self.headlines]
            lines += [""] * bool(self.headline_notes) + [f"- note: {_md_code(n)}" for n in self.headline_notes]
        if infeasible := self.infeasible_lines():
            lines += [""] + [f"- {_md_code(line)}" for line in infeasible]
        if self.conflicts:
            lines += ["", "## The scenario contradicts itself", ""]
            lines += [f"- {_md_code(line.strip())}" for c in self.conflicts for line in c.lines()]
        lines += ["", "## Claims whose verdict changes", ""]
        if not changed:
            lines.append("None.")
        else:
            lines += ["| claim | before | after | counterexample or reason |", "| --- | --- | --- | --- |"]
            for cid in changed:
                e = self.entry(cid)
                detail = "; ".join(v["text"] for v in e.get("violations", []))
                if e.get("threshold"):
                    detail = (detail + "; " if detail else "") + e["threshold"]["text"]
                if not detail and e["counterexample"]:
                    detail = ", ".join(f"`{k}` = {self.value_text(k, v)}" for k, v in e["counterexample"].items())
                elif not detail and e["values"]:
                    detail = "at " + ", ".join(f"`{n}` = {self.value_text(n, v['after'])}"
                                               for n, v in e["values"].items())
                if e["reason"] and e["after"] != "proved":
                    detail = (detail + "; " if detail else "") + markdown_escape(e["reason"])
                lines.append(f"| `{cid}` ({markdown_escape(e['title'])}) | {e['before']} | **{e['after']}** | "
                             f"{detail or '-'} |")
        lines += ["", f"{len(changed)} of {len(self.order)} claims change verdict. Re-checked "
                  f"{len(self.rechecked)} claims that the change can reach; the other "
                  f"{len(self.order) - len(self.rechecked)} keep their baseline verdict (blocking recomputed).", ""]
        if self.rechecked:
            lines += ["<details><summary>Re-checked claims</summary>", ""]
            lines += [f"- `{i}`: {r.reason}" for i, r in self.rechecked.items()]
            lines += ["", "</details>", ""]
        return "\n".join(lines)


def _md_code(text: str) -> str:
    return text.replace("|", "\\|")


def diff(library: Library, baseline: Scenario, current: Scenario, *, rlimit: int | None = None, cache=None,
         results_cache=None, ids: Iterable[str] | None = None) -> DiffReport:
    """Compare verdicts between two scenarios, re-checking only the claims the change can reach.

    ``cache``: a ``derive.checking.cache.ProofCache`` shared by both checkers; ``results_cache``: a
    ``derive.checking.cache.ResultsCache`` holding the baseline's own results (the baseline is then not
    re-assembled at all).  ``ids``: restrict to these claims (and the claims they rest on).
    What moved, in numbers, is added by ``derive.whatif.explain.explain_flips(report)``.
    """
    from derive.kernel.problem import DEFAULT_RLIMIT

    rlimit = rlimit or DEFAULT_RLIMIT
    base_checker = Checker(library, baseline, rlimit=rlimit, cache=cache)
    cur_checker = Checker(library, current, rlimit=rlimit, cache=cache)
    claims = select_claims(library, ids)
    order = [c.id for c in claims] if ids is None else [library.resolve(i).id for i in ids]

    before_own = None
    key = None
    if results_cache is not None:
        key = results_cache.key(baseline, rlimit, [c.id for c in claims], library=library)
        before_own = results_cache.get(key, confirm=base_checker.confirms)
    cached = before_own is not None and set(before_own) >= {c.id for c in claims}
    if not cached:
        before_own = own_results(base_checker, claims)
        if results_cache is not None:
            results_cache.put(key, before_own)

    change = compare_scenarios(baseline, current)
    reach = affected_claims(library, baseline, current, claims, change)
    after_own = {c.id: (cur_checker.check_own(c) if c.id in reach else before_own[c.id]) for c in claims}
    before = with_blocking(base_checker, claims, before_own)
    after = with_blocking(cur_checker, claims, after_own)

    report = DiffReport(
        baseline=baseline, current=current, change=change, order=order,
        before={i: before[i] for i in order}, after={i: after[i] for i in order},
        rechecked=reach, prover_calls=base_checker.prover_calls + cur_checker.prover_calls,
        baseline_cached=cached, library=library,
        # the headline values are printed at both sides: a side no deployment can meet says so
        infeasible={side: v for side, sc in (("scenario", current), ("baseline", baseline))
                    if (v := feasibility(library, sc).violations)},
    )
    return report




def select_claims(library: Library, ids: Iterable[str] | None) -> list[Claim]:
    if ids is None:
        return library.claims()
    wanted: set[str] = set()
    for i in ids:
        d = library.resolve(i)
        if not isinstance(d, Claim):
            from derive.errors import WrongKindError

            article = "an" if d.kind[:1] in "aeiou" else "a"  # an assumption, a definition
            raise WrongKindError(f"'{d.id}' is {article} {d.kind}, not a claim", hint="`derive show` displays it")
        wanted.add(d.id)
        wanted |= {a for a in library.ancestors(d.id) if isinstance(library.declarations[a], Claim)}
    return [c for c in library.claims() if c.id in wanted]
