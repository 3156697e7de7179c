"""One wording for a report's verdict counts, shared by the command line and the Python API."""

from __future__ import annotations


def expectations_elsewhere(library, scenario, results) -> frozenset[str]:
    """The results whose claim's declared expectation is about another scenario: instance claims (they speak
    about the scenario's values, and their expected verdict was written for the library's own scenario)
    checked at any other scenario.  Their verdicts are answers at these values, never surprises.  A library
    with no scenario of its own (only ``--set`` values) has its expectations written for those values."""
    if scenario.is_library_default or not scenario.has_base:
        return frozenset()
    return frozenset(r.id for r in results if getattr(library.declarations.get(r.id), "instance", False))


def verdict_summary(results, elsewhere: frozenset[str] = frozenset(), default: str = "lecture") -> str:
    """``126 proved, 18 refuted as expected, 0 surprises``: each verdict that met its expectation counted
    (a verdict other than ``proved`` or ``assumed`` says "as expected": a false twin refuted on purpose), then
    the surprises, each with what was expected.  ``elsewhere`` (see ``expectations_elsewhere``): claims
    counted apart as answers at this scenario's values, their expectations being those of scenario
    ``default``."""
    met: dict[str, int] = {}
    surprises: dict[tuple[str, str], int] = {}
    here: dict[str, int] = {}
    for r in results:
        if elsewhere and r.id in elsewhere:
            here[r.verdict] = here.get(r.verdict, 0) + 1
        elif r.meets_expectation:
            met[r.verdict] = met.get(r.verdict, 0) + 1
        else:
            surprises[(r.verdict, r.expected)] = surprises.get((r.verdict, r.expected), 0) + 1
    if not met and not surprises and not here:
        return "no claims"
    parts = [f"{n} {v}" + ("" if v in ("proved", "assumed") else " as expected") for v, n in met.items()]
    total = sum(surprises.values())
    text = f"{total} surprise{'' if total == 1 else 's'}"
    if surprises:
        text += " (" + ", ".join(f"{n} {v}, expected {e}" for (v, e), n in surprises.items()) + ")"
    out = ", ".join([*parts, text])
    if here:
        n = sum(here.values())
        out += (f"; {n} instance claim{'' if n == 1 else 's'} answered at these values (their expectations are "
                f"for scenario {default}): " + ", ".join(f"{k} {v}" for v, k in sorted(here.items())))
    return out

