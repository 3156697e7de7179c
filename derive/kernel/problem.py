"""What the kernel decides: a problem (hypotheses, goal, domains, bounds, budget) and its outcome.

The meaning of a problem is fixed by ``derive.kernel.trusted`` (bounds are hypotheses; integrality;
side conditions; floats refused).

Shared by every engine (z3, sympy, interval, search) so that none of them imports another.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from derive.kernel.logic import Formula

DEFAULT_RLIMIT = 20_000_000


@dataclass(frozen=True)
class Outcome:
    """The verdict on one formula."""

    verdict: str  # proved | refuted | unknown | inconsistent
    engine: str  # z3 | sympy | exact | interval | none
    reason: str | None = None
    counterexample: dict[str, sp.Rational] | None = None
    recheck: str | None = None  # how the kernel confirmed the verdict (see derive.kernel.trusted)
    side_conditions: tuple[str, ...] = ()  # of a ``proved``: the goal's side conditions and how each was shown

    def as_text_counterexample(self) -> dict[str, str] | None:
        if self.counterexample is None:
            return None
        return {k: str(v) for k, v in sorted(self.counterexample.items())}


@dataclass
class Problem:
    """Hypotheses and a goal over plain sympy symbols with their declared domains."""

    hypotheses: list[Formula]
    goal: Formula
    integer: set[sp.Symbol] = field(default_factory=set)
    bounds: dict[sp.Symbol, tuple[sp.Rational, sp.Rational]] = field(default_factory=dict)
    rlimit: int = DEFAULT_RLIMIT
    seed: int = 0
    # side conditions of the goal that its definitions declare (a definition's domain, a derived quantity's
    # declared domain and integrality), each with its origin in words: the goal is defined only where they
    # hold, so they must be shown on the region, and a point outside them is never a counterexample
    # (``derive.model.library.Library.definition_conditions``; the hypotheses' own are hypotheses)
    conditions: list[tuple[str, Formula]] = field(default_factory=list)

    def symbols(self) -> set[sp.Symbol]:
        out = set(self.goal.symbol_set())
        out.update(*(h.symbol_set() for h in self.hypotheses), *(c.symbol_set() for _, c in self.conditions))
        return out
