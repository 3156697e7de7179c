"""Helpers for engine tests."""

from __future__ import annotations

from derive.declarations import Topic
from derive.library import Library


def make_library(*items, name: str = "t") -> Library:
    """A one-topic library from quantities and declarations, for engine tests."""
    from derive.declarations import Declaration, Quantity

    quantities = tuple(i for i in items if isinstance(i, Quantity))
    decls = tuple(i for i in items if isinstance(i, Declaration))
    return Library([Topic(name, name, "", quantities, decls)])
