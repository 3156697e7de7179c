"""Placeholders in a chapter's prose: numbers and verdicts the engine fills in, and where part I places
a result or a figure.

A chapter's ``PROSE`` (``Topic.prose``) never types a number the engine computes.  It names it:

- ``{{value:NAME}}``: the value of quantity ``NAME`` under the scenario being built, with its unit, as
  every other value of the documents is shown (``derive.model.display``): ``2,400 seq``, ``14.4 ms``.
- ``{{verdict:ID}}``: the verdict of claim ``ID`` (full id or unique last part) in the build's report.  An
  inconsistency of the chapter whose verdict the prose cites counts as discussed there: part I gives it
  no box of its own (``{{result:ID}}`` still places one).
- ``{{result:ID}}``, a paragraph on its own: part I shows the chapter's result (a claim with a label, or
  one tagged ``inconsistency``) at this point of the argument instead of after the prose.
- ``{{figure:ID}}``, a paragraph on its own: the chapter's figure ``ID`` goes here.

Placeholders are found with one regular expression and never evaluated as code.  Any ``{{...}}`` that is
not one of these, a name the library does not have, or a placeholder outside ``PROSE`` (statements,
notes and step reasons are shown where no scenario is at hand) is a ``LibraryError`` when the library is
loaded, so a typo fails at once and never prints as a blank.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence

from derive.errors import DeriveError, LibraryError, UnknownNameError

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~])")


def markdown_escape(text: object) -> str:
    """Plain text -> Markdown text that GitHub shows verbatim (no emphasis, links, math or table breaks).
    A dollar becomes ``<span>$</span>``: GitHub documents that form for a dollar on a line that also
    holds math (a backslash-escaped dollar beside math is known to break its renderer)."""
    escaped = _MD_SPECIAL.sub(r"\\\1", str(text)).replace("$", "<span>$</span>")
    # A line that starts with "1." or "-" would become a list item; prose here is one paragraph.
    return " ".join(escaped.split())


INLINE_KINDS = ("value", "verdict")
PLACEMENT_KINDS = ("result", "figure")
PLACEHOLDER = re.compile(r"\{\{(value|verdict|result|figure):([A-Za-z_][A-Za-z0-9_.]*)\}\}")
PROSE_MATH = re.compile(r"\\\((.+?)\\\)", re.S)  # inline math in prose: \( ... \)


def placement(paragraph: str) -> tuple[str, str] | None:
    """``(kind, ref)`` when the paragraph is a placement (``{{result:ID}}`` or ``{{figure:ID}}`` alone)."""
    m = PLACEHOLDER.fullmatch(paragraph.strip())
    if m is not None and m.group(1) in PLACEMENT_KINDS:
        return m.group(1), m.group(2)
    return None


def split(text: str) -> Iterator[tuple[str, str]]:
    """``("text", s)`` and ``(kind, ref)`` parts of a paragraph, in order.  The text parts are raw
    (they may still hold ``\\(...\\)`` math)."""
    pos = 0
    for m in PLACEHOLDER.finditer(text):
        if m.start() > pos:
            yield "text", text[pos:m.start()]
        yield m.group(1), m.group(2)
        pos = m.end()
    if pos < len(text):
        yield "text", text[pos:]


def _malformed(text: str) -> list[str]:
    """Every ``{{`` outside math that does not open a well-formed placeholder, with what follows it."""
    text = PROSE_MATH.sub(lambda m: " " * len(m.group(0)) if "{{" not in m.group(1) else m.group(0), text)
    out = []
    for i in (m.start() for m in re.finditer(r"\{\{", text)):
        if PLACEHOLDER.match(text, i) is None and (i == 0 or text[i - 1] != "{"):
            out.append(text[i:i + 40].split("}}")[0] + ("}}" if "}}" in text[i:i + 40] else ""))
    return out


def check_topic_prose(topic, resolve_claim, quantities: Mapping[str, object], figures: Sequence) -> None:
    """Raise ``LibraryError`` for a malformed or unknown placeholder in one topic's prose.

    ``resolve_claim(ref)`` returns the declaration of a full or short id (or raises
    ``UnknownNameError``); ``figures`` are the library's figure specs (``id`` and ``topic``)."""
    from derive.model.declarations import Claim

    placed: set[tuple[str, str]] = set()
    for i, paragraph in enumerate(topic.prose, start=1):
        where = f"{topic.name} PROSE paragraph {i}"
        bad = _malformed(paragraph)
        if bad:
            raise LibraryError(f"malformed placeholder {bad[0]!r}", where=where,
                               hint="write {{value:QUANTITY}}, {{verdict:ID}}, or a paragraph "
                                    "{{result:ID}} / {{figure:ID}} on its own")
        for m in PROSE_MATH.finditer(paragraph):
            if "{{" in m.group(1):
                raise LibraryError("a placeholder inside \\( ... \\) math", where=where,
                                   hint="put the placeholder after the math: \\(B^{*}\\) = {{value:critical_batch}}")
        whole = placement(paragraph)
        for kind, ref in split(paragraph):
            if kind == "text":
                continue
            if kind in PLACEMENT_KINDS and whole is None:
                raise LibraryError(f"{{{{{kind}:{ref}}}}} must be a paragraph on its own", where=where)
            if kind == "value":
                if ref not in quantities:
                    err = UnknownNameError("quantity", ref, quantities)
                    raise LibraryError(err.message, where=where, hint=err.hint)
            elif kind == "figure":
                known = {f.id: f for f in figures}
                if ref not in known:
                    err = UnknownNameError("figure", ref, known)
                    raise LibraryError(err.message, where=where, hint=err.hint)
                if known[ref].topic != topic.name:
                    raise LibraryError(f"figure '{ref}' belongs to topic '{known[ref].topic}', not '{topic.name}'",
                                       where=where)
            else:
                try:
                    decl = resolve_claim(ref)
                except DeriveError as err:  # unknown or ambiguous id
                    raise LibraryError(err.message, where=where, hint=err.hint) from None
                if not isinstance(decl, Claim):
                    raise LibraryError(f"{{{{{kind}:{ref}}}}}: '{decl.id}' is a {decl.kind}, not a claim",
                                       where=where)
                if kind == "result":
                    if decl.topic != topic.name:
                        raise LibraryError(f"{{{{result:{ref}}}}}: '{decl.id}' belongs to chapter '{decl.topic}', "
                                           f"not to this one, '{topic.name}'", where=where,
                                           hint=f"a claim's chapter is its id before the last dot: name it "
                                                f"'{topic.name}.{decl.short}' to show it here")
                    if not decl.label and "inconsistency" not in decl.tags:
                        raise LibraryError(f"{{{{result:{ref}}}}}: part I shows only claims with a label or "
                                           f"the tag 'inconsistency'; '{decl.id}' has neither", where=where)
            if kind in PLACEMENT_KINDS:
                key = (kind, ref)
                if key in placed:
                    raise LibraryError(f"{{{{{kind}:{ref}}}}} is placed twice", where=where)
                placed.add(key)


def check_no_placeholder(text: str, where: str) -> None:
    """Statements, notes and step reasons are shown without a scenario: no placeholder there."""
    m = PLACEHOLDER.search(text)
    if m is not None:
        raise LibraryError(f"placeholder {m.group(0)} outside a chapter's PROSE", where=where,
                           hint="placeholders are resolved in PROSE only; write the number as a claim instead")
