"""One wording for a report's verdict counts, shared by the command line and the Python API."""

from __future__ import annotations


def verdict_summary(results) -> str:
    """``126 proved, 18 refuted as expected, 0 surprises``: each verdict that met its expectation counted
    (a verdict other than ``proved`` or ``assumed`` says "as expected": a false twin refuted on purpose), then
    the surprises, each with what was expected."""
    met: dict[str, int] = {}
    surprises: dict[tuple[str, str], int] = {}
    for r in results:
        if r.meets_expectation:
            met[r.verdict] = met.get(r.verdict, 0) + 1
        else:
            surprises[(r.verdict, r.expected)] = surprises.get((r.verdict, r.expected), 0) + 1
    if not met and not surprises:
        return "no claims"
    parts = [f"{n} {v}" + ("" if v in ("proved", "assumed") else " as expected") for v, n in met.items()]
    total = sum(surprises.values())
    text = f"{total} surprise{'' if total == 1 else 's'}"
    if surprises:
        text += " (" + ", ".join(f"{n} {v}, expected {e}" for (v, e), n in surprises.items()) + ")"
    return ", ".join([*parts, text])

