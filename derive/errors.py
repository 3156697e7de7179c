"""Typed errors of the engine: the one hierarchy.

Each error carries the exit code the command line uses for it, so that ``cli.py`` has one place that
catches, prints one line and exits.  The library raises these; it never prints and never exits.  Every
error is a subclass that says what failed; ``DeriveError`` itself is only ever caught.

``DeriveError`` (exit 2: the user can fix it)

* input the user typed: ``ParseError`` (an expression), ``UnitError`` (a unit), ``UnknownNameError`` and
  ``AmbiguousNameError`` (a name), ``WrongKindError`` (a declaration of another kind than the command
  needs), ``UsageError`` (options or arguments that do not fit together);
* what was loaded: ``LibraryError`` (a malformed library; ``DimensionError``: two sides differ in dimension),
  ``ScenarioError`` (a malformed scenario, preset or file; ``MissingValueError``: a value it does not give),
  ``CertificateError`` (a certificate file);
* what a command could not do: ``UndefinedValueError`` (no real value there), ``BudgetError`` (beyond a
  size or precision budget), ``MarginError`` and ``SweepError`` (a margin or sweep that cannot be set up),
  ``BuildError`` (a document not produced), ``TemplateError`` (a document template), ``OutputError`` (a file
  not written), ``ResourceError`` (a file of the installed package missing), ``MissingExtraError`` (an
  optional dependency not installed);
* ``TranslationError`` (and ``DivisionByZeroRisk``): what the sympy-to-z3 translator cannot express, reported
  as an ``unknown`` verdict, never to the user as a failure.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

MAX_MESSAGE = 600  # characters of one error line; user text beyond is cut


def escape_control(text: object, *, limit: int | None = None) -> str:
    """``text`` fit for one terminal line: every non-printable character (newline, carriage return,
    tab, ESC and the rest of C0/C1, DEL, Unicode format and separator characters such as U+202E or
    U+2028) written as its Python escape (``\\n``, ``\\x1b``, ``\\u202e``), so that user text can neither
    break the one-line error contract nor send terminal control sequences.  ``limit`` cuts long text."""
    text = str(text)
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 3, 0)] + "..."
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class DeriveError(Exception):
    """Base class: a problem the user can fix.  ``exit_code`` 2 means bad input."""

    exit_code = 2

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None) -> None:
        self.message = message
        self.where = where
        self.hint = hint
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """What, where and hint on one line; control characters in any part are escaped (the one place)."""
        parts = [escape_control(self.message, limit=MAX_MESSAGE)]
        if self.where:
            parts.append(f"(in {escape_control(self.where, limit=200)})")
        text = " ".join(parts)
        if self.hint:
            text += f"; {escape_control(self.hint, limit=300)}"
        return text


class UnitError(DeriveError):
    """An unknown unit, or a unit whose dimension does not fit the quantity."""


class DimensionError(DeriveError):
    """Two sides of a formula (or two terms of a sum) differ in dimension."""


class ParseError(DeriveError):
    """User text (``--set``, ``--assume``, ``eval``) is not an allowed expression."""


class UnknownNameError(DeriveError):
    """An id, quantity or preset that does not exist; suggests the closest names."""

    def __init__(self, kind: str, name: str, known: Iterable[str], *, where: str | None = None) -> None:
        known = sorted(set(known))
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        listing = {"quantity": "derive show NAME / derive list", "id": "derive list", "topic": "derive list",
                   "column": "derive list --quantities"}.get(kind, "derive presets")
        if close:
            hint = f"did you mean {', '.join(close)}?"
        elif 0 < len(known) <= 12:
            hint = f"known: {', '.join(known)}"
        else:
            hint = f"{len(known)} known; see `{listing}`"
        super().__init__(f"unknown {kind} '{name}'", where=where, hint=hint)
        self.kind = kind
        self.name = name
        self.suggestions = close


class WrongKindError(DeriveError):
    """A declaration of another kind than the command needs (a definition where a claim is wanted)."""


class UsageError(DeriveError):
    """Options or arguments that do not fit together, or one that is missing or unknown (``--format``)."""


class AmbiguousNameError(DeriveError):
    """A short id that matches more than one declaration."""


class LibraryError(DeriveError):
    """A malformed library: cycles, missing dependencies, duplicate ids, bad declarations."""


class ScenarioError(DeriveError):
    """A malformed scenario, preset or config file, or a missing value."""


class MissingValueError(ScenarioError):
    """A value the scenario does not give: one wording for every command (``names``: the inputs missing)."""

    def __init__(self, what: str, names: Iterable[str], *, where: str | None = None, hint: str | None = None) -> None:
        self.what = what
        self.names = list(names)
        super().__init__(f"cannot evaluate {what}: {no_value_words(self.names)}", where=where,
                         hint=hint or self.default_hint(self.names))

    @staticmethod
    def default_hint(names: list[str]) -> str:
        """The hint where the caller has none: the CLI replaces it with the options that give the values."""
        return f"add --set {names[0]}=VALUE or choose a preset (derive presets)"


def no_value_words(names: Iterable[str]) -> str:
    """``the scenario gives no value for a, b``: the words every missing value is reported in."""
    return "the scenario gives no value for " + ", ".join(names)


class OutputError(DeriveError):
    """An output file or folder that cannot be written (read-only, permission denied, disk full);
    ``where`` names the folder or file."""


class BudgetError(DeriveError):
    """A request beyond a size or precision budget (a sweep grid too large, a number beyond the evaluation
    budget); nothing was allocated or computed past the check."""


class MarginError(DeriveError):
    """A margin that cannot be computed; ``never`` separates "cannot work" from "not supported yet"."""

    def __init__(self, message: str, *, hint: str | None = None, never: bool = False) -> None:
        super().__init__(message, hint=hint)
        self.never = never


class SweepError(DeriveError):
    """A sweep that cannot be set up."""


class BuildError(DeriveError):
    """The document could not be produced (for instance LaTeX failed on it)."""


class TemplateError(DeriveError):
    """A document template that is missing, or that fails to render (a field it names does not exist)."""


class MissingExtraError(DeriveError):
    """An optional dependency that is not installed (``hint`` says how to install it)."""


class ResourceError(DeriveError):
    """A file the installed package should carry (templates, vendored assets) is missing."""


class UndefinedValueError(DeriveError):
    """An expression that has no real value at the values given (a zero denominator, a negative radicand,
    a logarithm of 0, a ``Piecewise`` condition that must be read and cannot be)."""


class TranslationError(DeriveError):
    """A construct the sympy-to-z3 translator cannot express (reason is reported as ``unknown``)."""

    def __init__(self, message: str, *, never: bool = False) -> None:
        # ``never``: cannot work in principle (e.g. a complex number), as opposed to "not supported yet".
        self.never = never
        super().__init__(message)


class DivisionByZeroRisk(TranslationError):
    """A denominator that the assumptions do not keep away from zero."""


class CertificateError(DeriveError):
    """A certificate that cannot be written or read: a statement outside SMT-LIB2 arithmetic, or a
    certificate file that is malformed (``where`` names the file)."""
