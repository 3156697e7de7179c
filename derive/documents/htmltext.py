"""Text for HTML pages: math as elements KaTeX renders in the browser, prose escaped.

The site's templates render with autoescape on; these filters return ``Markup`` so that their own
elements survive while every piece of text inside them is escaped.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

from derive.documents.latex import markdown_math, prose_parts


def math_html(latex: str, display: bool = False) -> Markup:
    """A span (or div) that the page's script renders with KaTeX; the LaTeX is its escaped text."""
    tag = "div" if display else "span"
    cls = "math display" if display else "math"
    return Markup(f'<{tag} class="{cls}">{escape(latex)}</{tag}>')


def prose_html(text: object) -> Markup:
    """Prose with ``\\(...\\)`` math: text escaped, math as KaTeX spans; a resolved value as its text, a
    resolved verdict as the verdict badge the pages use elsewhere."""
    out = []
    for kind, t in prose_parts(text):
        if kind == "text":
            out.append(escape(t))
        elif kind == "math":
            out.append(math_html(str(t)))
        elif kind == "value":
            out.append(Markup('<span class="value">{}</span>').format(t["md"]))  # type: ignore[index]
        else:
            out.append(Markup('<span class="verdict v-{0}">{0}</span>').format(t))
    return Markup("").join(out)


_DOLLAR_MATH = re.compile(r"\$([^$]+)\$")


def dollar_html(text: object) -> Markup:
    """A phrase the engine wrote for Markdown, with math in ``$...$`` (thresholds, readings): text
    escaped, math as KaTeX spans.  Only engine-made phrases come here, never a user's prose."""
    out, pos, s = [], 0, str(text)
    for m in _DOLLAR_MATH.finditer(s):
        out.append(escape(s[pos:m.start()]))
        out.append(math_html(m.group(1)))
        pos = m.end()
    out.append(escape(s[pos:]))
    return Markup("").join(out)


def html_filters() -> dict:
    return {"math": math_html, "prose": prose_html, "dollar": dollar_html, "mdmath": markdown_math}
