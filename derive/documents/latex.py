"""LaTeX for formulas and escaping for prose.

Formulas: ``QuantityLatexPrinter`` is sympy's ``LatexPrinter`` with one change that matters: every
symbol prints as its quantity's *explicit* LaTeX form (``Quantity.latex``), never as a subscript that
sympy guesses from the name (``hbm_bandwidth`` would become ``hbm_{bandwidth}``).  Terms are printed in
the order sympy stores them (``order="none"``), so that a sum is not re-sorted for display.  A symbol
whose LaTeX form is itself a compound (``F/W``) is bracketed where a power or a product would otherwise
misread it.

Prose: ``latex_escape`` and ``markdown_escape`` make plain text safe in a LaTeX or Markdown document;
templates apply them to every piece of prose (titles, statements, sources), while math arrives
already rendered by the printer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import sympy as sp
from sympy.printing.latex import LatexPrinter

from derive.kernel.logic import Formula
from derive.model.prose import PROSE_MATH, markdown_escape

_COMPOUND = re.compile(r"[/+\-]|\\cdot|\\times|\s")


def _is_compound(text: str) -> bool:
    """A LaTeX form that needs brackets when raised to a power or multiplied (``F/W``, ``a b``)."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0 and _COMPOUND.match(text, i):
            return True
    return False


class QuantityLatexPrinter(LatexPrinter):
    """sympy's LaTeX printer, with each symbol printed as its quantity's explicit LaTeX form."""

    printmethod = "_derive_latex"

    def __init__(self, symbol_latex: Mapping[sp.Symbol, str], settings: dict | None = None) -> None:
        merged = {"order": "none"}
        merged.update(settings or {})
        super().__init__(merged)
        self.symbol_latex = dict(symbol_latex)

    def _print_Symbol(self, expr: sp.Symbol, style: str = "plain") -> str:
        known = self.symbol_latex.get(expr)
        if known is not None:
            return known
        # Not a declared quantity (a dummy of the caller): print the name verbatim, never guessing.
        return r"\mathit{" + expr.name.replace("_", r"\_") + "}"

    def _compound_symbol(self, expr: sp.Basic) -> bool:
        return isinstance(expr, sp.Symbol) and _is_compound(self._print_Symbol(expr))

    def parenthesize(self, item, level, is_neg=False, strict=False) -> str:
        if self._compound_symbol(item):
            return self._add_parens(self._print(item))
        return super().parenthesize(item, level, is_neg, strict)

    def _needs_mul_brackets(self, expr, first=False, last=False) -> bool:
        if self._compound_symbol(expr):
            return True
        return super()._needs_mul_brackets(expr, first=first, last=last)

    def _print_Max(self, expr: sp.Max, exp: str | None = None) -> str:
        # Keep the arguments in stored order; sympy's own printer sorts them by default_sort_key.
        text = r"\max\left(" + ", ".join(self._print(a) for a in expr.args) + r"\right)"
        return text if exp is None else rf"{text}^{{{exp}}}"

    def _print_Min(self, expr: sp.Min, exp: str | None = None) -> str:
        text = r"\min\left(" + ", ".join(self._print(a) for a in expr.args) + r"\right)"
        return text if exp is None else rf"{text}^{{{exp}}}"


def symbol_latex_map(quantities: Mapping[str, object]) -> dict[sp.Symbol, str]:
    """``{quantity.sym: quantity.latex}`` for a name -> Quantity mapping (``Library.quantities``)."""
    return {q.sym: q.latex for q in quantities.values()}  # type: ignore[attr-defined]


def make_printer(quantities: Mapping[str, object]) -> Callable[[sp.Expr], str]:
    """A function that prints an expression with the library's LaTeX forms."""
    printer = QuantityLatexPrinter(symbol_latex_map(quantities))
    return printer.doprint


def formula_latex(formula: sp.Expr | Formula, printer: Callable[[sp.Expr], str]) -> str:
    """An expression or a relation tree (``derive.kernel.logic.Formula``) as LaTeX."""
    if isinstance(formula, Formula):
        return formula.latex(printer)
    return printer(formula)


# prose -----------------------------------------------------------------------------------------------

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\ensuremath{\$}", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\ensuremath{\sim}", "^": r"\^{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
}
# Characters that pdflatex's default UTF-8 set-up does not print (or prints badly): each as a command.
_LATEX_UNICODE = {
    "×": r"\ensuremath{\times}", "·": r"\ensuremath{\cdot}", "≈": r"\ensuremath{\approx}",
    "≤": r"\ensuremath{\le}", "≥": r"\ensuremath{\ge}", "≠": r"\ensuremath{\neq}", "±": r"\ensuremath{\pm}",
    "→": r"\ensuremath{\to}", "←": r"\ensuremath{\leftarrow}", "⇒": r"\ensuremath{\Rightarrow}",
    "⇔": r"\ensuremath{\Leftrightarrow}", "↔": r"\ensuremath{\leftrightarrow}", "∞": r"\ensuremath{\infty}",
    "√": r"\ensuremath{\surd}", "∝": r"\ensuremath{\propto}", "∑": r"\ensuremath{\sum}", "∈": r"\ensuremath{\in}",
    "−": r"\ensuremath{-}", "∼": r"\ensuremath{\sim}", "≪": r"\ensuremath{\ll}", "≫": r"\ensuremath{\gg}",
    "µ": r"\ensuremath{\mu}", "°": r"\ensuremath{^\circ}", "′": r"\ensuremath{'}",
    "²": r"\ensuremath{^2}", "³": r"\ensuremath{^3}", "¹": r"\ensuremath{^1}", "⁻": r"\ensuremath{^-}",
    "½": r"\ensuremath{\tfrac12}", "¼": r"\ensuremath{\tfrac14}", "¾": r"\ensuremath{\tfrac34}",
    "—": "---", "–": "--", "‘": "`", "’": "'", "“": "``", "”": "''", "…": r"\ldots{}", "\u00a0": "~",
    "€": r"EUR{}", "✓": r"\ensuremath{\checkmark}", "•": r"\ensuremath{\bullet}",
}
_GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta", "η": "eta",
    "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi", "π": "pi",
    "ρ": "rho", "σ": "sigma", "τ": "tau", "υ": "upsilon", "φ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega",
    "Γ": "Gamma", "Δ": "Delta", "Θ": "Theta", "Λ": "Lambda", "Ξ": "Xi", "Π": "Pi", "Σ": "Sigma",
    "Υ": "Upsilon", "Φ": "Phi", "Ψ": "Psi", "Ω": "Omega",
}
for _ch, _name in _GREEK.items():
    _LATEX_UNICODE[_ch] = rf"\ensuremath{{\{_name}}}"


def latex_escape(text: object) -> str:
    """Plain text -> LaTeX text: special characters escaped, common Unicode symbols as commands.

    Only glyphs of the OT1 Computer Modern fonts and math fonts are used (never TS1, whose fonts are
    bitmaps on a minimal TeX Live): ``$`` and bullets go through math mode.

    Latin-1 letters (é, ü, ...) pass through (the document uses T1 fonts and UTF-8 input); any other
    character without a known command becomes ``?`` rather than breaking the compile."""
    out: list[str] = []
    text = str(text)
    for i, ch in enumerate(text):
        if ch == '"':  # straight double quotes become opening or closing quotes
            out.append("``" if i == 0 or text[i - 1] in " \t\n([{" else "''")
        elif ch == "'" and (i == 0 or text[i - 1] in " \t\n([{") and text[i + 1:i + 2].strip():
            out.append("`")  # a single quote opening a quotation; elsewhere it is an apostrophe or closes one
        elif ch == "-" and text[i + 1:i + 2] == "-":
            out.append("-{}")  # "--option" stays two hyphens, never an en dash
        elif ch in _LATEX_SPECIAL:
            out.append(_LATEX_SPECIAL[ch])
        elif ch in _LATEX_UNICODE:
            out.append(_LATEX_UNICODE[ch])
        elif ord(ch) < 0x80:
            out.append(ch if ch.isprintable() or ch in "\n\t" else " ")
        elif ord(ch) < 0x180 and ch.isalpha():
            out.append(ch)
        else:
            out.append("?")
    return "".join(out)


def latex_escape_breakable(text: object) -> str:
    """``latex_escape`` that also lets long identifiers and paths (sources, ids) break after ``/ . _ : @``."""
    out = latex_escape(text)
    out = re.sub(r"(/|\\_|:|@|\.(?=\S))", r"\1\\allowbreak{}", out)
    return out


def latex_comment(text: object) -> str:
    """Text for a ``%`` comment line: one line, nothing to escape."""
    return " ".join(str(text).split())


def markdown_math(latex: str) -> str:
    """LaTeX math made safe inside Markdown ``$...$`` on GitHub: pipes would split a table row, and
    ``^{*}`` twice on a line reads as emphasis to GitHub's Markdown pass (``^{\\ast}`` does not)."""
    latex = latex.replace("|", r"\vert ")
    return re.sub(r"\^\{\*\}|\^\*", r"^{\\ast}", latex)


def label_text(text: str) -> str:
    """Characters allowed in a LaTeX label or an HTML anchor: letters, digits, ``.:_-``."""
    return re.sub(r"[^A-Za-z0-9.:_-]", "-", text)


def macro_name(prefix: str, text: str) -> str:
    """A TeX control-sequence name (letters only) from an id: ``claim`` + ``batch_optimum`` ->
    ``claimBatchOptimum``.  Digits are spelt out, so ``l2_cache`` gives ``LTwoCache``."""
    digits = "Zero One Two Three Four Five Six Seven Eight Nine".split()
    words = re.split(r"[^A-Za-z0-9]+", text)
    out = [prefix]
    for w in words:
        if not w:
            continue
        parts = re.findall(r"[A-Za-z]+|\d", w)
        for p in parts:
            out.append(digits[int(p)] if p.isdigit() else p[:1].upper() + p[1:])
    return "".join(out)


# prose with inline math ------------------------------------------------------------------------------

class ResolvedProse(tuple):
    """A paragraph whose placeholders the document model has filled in (``ModelBuilder.prose``): parts
    ``("text", plain)``, ``("math", latex)``, ``("value", {"tex", "md", ...})`` and ``("verdict", word)``.
    The prose filters take it as well as a plain string."""


def prose_parts(text: object) -> list[tuple[str, object]]:
    """Prose split into ``("text", ...)`` and ``("math", latex)`` parts: math is written ``\\(...\\)``
    in a declaration's prose (a dollar stays a dollar: prices are common in prose).  A
    ``ResolvedProse`` is returned as its parts."""
    if isinstance(text, ResolvedProse):
        return list(text)
    text = str(text)
    out: list[tuple[str, object]] = []
    pos = 0
    for m in PROSE_MATH.finditer(text):
        if m.start() > pos:
            out.append(("text", text[pos:m.start()]))
        out.append(("math", m.group(1).strip()))
        pos = m.end()
    if pos < len(text):
        out.append(("text", text[pos:]))
    return out


def latex_prose(text: object) -> str:
    """``latex_escape`` for prose that may hold ``\\(...\\)`` math, which passes through as math; resolved
    values and verdicts come as the engine rendered them (``\\SI{...}{...}``, ``\\verdict{...}``)."""
    out = []
    for kind, t in prose_parts(text):
        if kind == "text":
            out.append(latex_escape(t))
        elif kind == "math":
            out.append(rf"\({t}\)")
        elif kind == "value":
            out.append(t["tex"])  # type: ignore[index]
        else:
            out.append(rf"\verdict{{{t}}}")
    return "".join(out)


def markdown_prose(text: object) -> str:
    """``markdown_escape`` for prose that may hold ``\\(...\\)`` math, written as GitHub's ``$...$``;
    a dollar of the prose becomes ``<span>$</span>``, the escape GitHub documents for a dollar on a
    line with math.  Resolved values are their text form, verdicts in bold."""
    parts = prose_parts(text)
    out = []
    for kind, t in parts:
        if kind == "math":
            out.append("$" + markdown_math(str(t)) + "$")
        elif kind == "value":
            out.append(markdown_escape(t["md"]))  # type: ignore[index]
        elif kind == "verdict":
            out.append(f"**{t}**")
        else:
            t = str(t)
            lead = " " if t[:1].isspace() else ""
            trail = " " if t[-1:].isspace() and t.strip() else ""
            out.append(lead + markdown_escape(t) + trail)
    return "".join(out).strip()


def markdown_heading(text: object) -> str:
    """A title for a Markdown heading: GitHub shows headings verbatim enough that escaping ASCII math
    (``B\\*``, ``N\\_tot``) only adds backslashes to the anchor and the page; keep the characters
    that cannot start Markdown syntax inside a heading, and drop the rest to plain look-alikes."""
    t = " ".join(str(text).split())
    t = t.replace("*", "∗").replace("_", " ").replace("`", "'").replace("<", "‹").replace(">", "›")
    t = t.replace("$", "<span>$</span>").replace("[", "(").replace("]", ")").replace("|", "/").replace("#", "No. ")
    return t.replace("\\", "/")
