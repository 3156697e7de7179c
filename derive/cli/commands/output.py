"""Printing helpers shared by commands (the library itself never prints)."""

from __future__ import annotations

import sys


def emit_json(data: object) -> None:
    """Strict JSON on stdout: never NaN or Infinity (null plus a ``KEY_note``, see derive.model.numbers)."""
    from derive.model.numbers import dumps_json

    sys.stdout.write(dumps_json(data) + "\n")


def emit(line: str = "") -> None:
    sys.stdout.write(line + "\n")


def pinned_notes(library, scenario, only=None) -> list[dict]:
    """The scenario's pinned derived quantities (each cuts its definition), for JSON output.
    ``only``: restrict to these names (e.g. the inputs of an evaluated expression)."""
    out = []
    for name in sorted(scenario.pinned):
        if only is not None and name not in only:
            continue
        definition = library.definition_of.get(name)
        out.append({"quantity": name, "value": str(scenario.value(name)),
                    "definition": definition.id if definition is not None else None, "note": "definition cut"})
    return out


def pinned_line(notes: list[dict]) -> str | None:
    """``pinned: hardware_ratio=600 (definition cut)``, or None when nothing is pinned."""
    if not notes:
        return None
    return "pinned: " + ", ".join(f"{n['quantity']}={n['value']} (definition cut)" for n in notes)
