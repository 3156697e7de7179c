"""Printing helpers shared by commands (the library itself never prints)."""

from __future__ import annotations

import json
import sys


def emit_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def emit(line: str = "") -> None:
    sys.stdout.write(line + "\n")
