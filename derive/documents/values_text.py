"""Values and units as document text: siunitx for LaTeX, plain text for Markdown, exact values with their
unit and prefix.  One job: a number with its unit, in each of the documents' languages."""

from __future__ import annotations

import re
from collections.abc import Iterable
from fractions import Fraction

import sympy as sp

from derive.documents.latex import latex_escape
from derive.errors import UnitError
from derive.model.declarations import Quantity
from derive.model.units import format_dimension, is_declared_count, parse_unit, unit_factors

_SI_BASE = {
    "FLOP": [("\\flop", 1)], "FLOPs": [("\\flop", 1)], "flop": [("\\flop", 1)], "flops": [("\\flop", 1)],
    "FLOPS": [("\\flop", 1), ("\\second", -1)],
    "B": [("\\byte", 1)], "byte": [("\\byte", 1)], "bytes": [("\\byte", 1)],
    "b": [("\\bit", 1)], "bit": [("\\bit", 1)], "bits": [("\\bit", 1)],
    "s": [("\\second", 1)], "sec": [("\\second", 1)], "second": [("\\second", 1)], "seconds": [("\\second", 1)],
    "min": [("\\minute", 1)], "minute": [("\\minute", 1)], "minutes": [("\\minute", 1)],
    "h": [("\\hour", 1)], "hr": [("\\hour", 1)], "hour": [("\\hour", 1)], "hours": [("\\hour", 1)],
    "day": [("\\day", 1)], "days": [("\\day", 1)],
    "token": [("\\token", 1)], "tokens": [("\\token", 1)], "tok": [("\\token", 1)],
    "seq": [("\\sequence", 1)], "sequence": [("\\sequence", 1)], "sequences": [("\\sequence", 1)],
    "param": [("\\param", 1)], "params": [("\\param", 1)], "parameter": [("\\param", 1)],
    "parameters": [("\\param", 1)],
    "USD": [("\\usd", 1)], "$": [("\\usd", 1)], "dollar": [("\\usd", 1)], "dollars": [("\\usd", 1)],
    "J": [("\\joule", 1)], "joule": [("\\joule", 1)], "joules": [("\\joule", 1)],
    "W": [("\\watt", 1)], "watt": [("\\watt", 1)], "watts": [("\\watt", 1)],
    "%": [("\\percent", 1)], "percent": [("\\percent", 1)], "1": [],
}
_SI_PREFIX = {"k": "\\kilo", "K": "\\kilo", "M": "\\mega", "G": "\\giga", "T": "\\tera", "P": "\\peta",
              "E": "\\exa", "m": "\\milli", "u": "\\micro", "µ": "\\micro", "n": "\\nano", "p": "\\pico",
              "Ki": "\\kibi", "Mi": "\\mebi", "Gi": "\\gibi", "Ti": "\\tebi"}
# Units siunitx does not know, declared wherever values are used (derivation.tex and values.tex).
SIUNIT_DECLARATIONS = (
    r"\DeclareSIUnit\flop{FLOP}", r"\DeclareSIUnit\byte{B}", r"\DeclareSIUnit\bit{b}",
    r"\DeclareSIUnit\token{token}", r"\DeclareSIUnit\sequence{seq}", r"\DeclareSIUnit\param{param}",
    r"\DeclareSIUnit\usd{USD}", r"\DeclareSIUnit\day{day}",
)
# Macros a unit string turns into besides the units': a declared count must not take one of these names.
_SI_TAKEN = frozenset(m for ms in _SI_BASE.values() for m, _ in ms) | frozenset(_SI_PREFIX.values()) \
    | {"\\per", "\\squared", "\\cubed", "\\tothe"}


def count_macro(word: str) -> str:
    """The siunitx macro of a count a library declared: the word without underscores (``prefill_chip``:
    ``\\prefillchip``), declared by ``siunit_declarations``."""
    macro = "\\" + word.replace("_", "")
    if macro in _SI_TAKEN:
        raise UnitError(f"the count '{word}' would take the siunitx macro {macro}, which units already use",
                        hint="declare the count under another word")
    return macro


def siunit_declarations(units: Iterable[str] = ()) -> list[str]:
    """``SIUNIT_DECLARATIONS``, then a ``\\DeclareSIUnit`` for each declared count that ``units`` (the unit
    strings a document shows) use, in alphabetical order: a document declares what it uses, whatever else
    the process imported, so that a build reads the same in every process."""
    used = sorted({w for text in units for _, w, _ in unit_factors(text) if is_declared_count(w)})
    return [*SIUNIT_DECLARATIONS,
            *(rf"\DeclareSIUnit{count_macro(w)}{{\mbox{{{latex_escape(w)}}}}}" for w in used)]


def siunitx_unit(text: str) -> str:
    """A unit string of the library (``TB/s``, ``FLOP/(param*token)``) as siunitx unit macros, read with
    the engine's own unit grammar (``derive.model.units.unit_factors``)."""
    parts: list[tuple[str, Fraction]] = []
    for prefix, word, exponent in unit_factors(text):
        if is_declared_count(word):
            parts.append((count_macro(word), Fraction(exponent)))  # counts take no prefixes
            continue
        if word not in _SI_BASE:
            raise UnitError(f"no siunitx form for unit '{word}' in '{text}'")
        macros = [(m, Fraction(p) * exponent) for m, p in _SI_BASE[word]]
        if prefix and macros:
            macros[0] = (_SI_PREFIX[prefix] + macros[0][0], macros[0][1])
        parts += macros
    num = [(m, p) for m, p in parts if p > 0]
    den = [(m, -p) for m, p in parts if p < 0]

    def fmt(m: str, p: Fraction) -> str:
        if p == 1:
            return m
        if p == 2:
            return m + r"\squared"
        if p == 3:
            return m + r"\cubed"
        return m + r"\tothe{" + (str(p.numerator) if p.denominator == 1 else str(float(p))) + "}"

    return "".join(fmt(m, p) for m, p in num) + "".join(r"\per" + fmt(m, p) for m, p in den)


def markdown_unit(text: str) -> str:
    t = text.strip()
    t = re.sub(r"^u(?=(s|B|FLOP)\b)", "µ", t)
    return "" if t in ("", "1") else t.replace("*", "·")


def value_text(value: sp.Expr | float, unit: str) -> dict[str, str]:
    """A number given in ``unit``, rendered for every format through the shared formatter
    (``derive.model.display``, which picks the prefix: 24 PFLOP/s, 14.4 ms, 2,400 seq, 5.75e25 FLOP):
    ``{"tex": "\\SI{14.4}{\\milli\\second}", "md": "14.4 ms", "num": "14.4", "unit": "ms", ...}``."""
    from derive.model.display import latex_value, shown

    s = shown(value, unit)
    lv = latex_value(value, unit)
    if lv.num is None:
        return {"tex": rf"\ensuremath{{{lv.text}}}", "md": s.text, "num": "", "unit": "", "eq_md": "=",
                "eq_tex": "=", "si_unit": ""}
    si_unit = siunitx_unit(lv.unit)
    tex = rf"\SI{{{lv.num}}}{{{si_unit}}}" if si_unit else rf"\num{{{lv.num}}}"
    return {"tex": tex, "md": s.text, "num": lv.num, "unit": markdown_unit(s.unit), "eq_md": "=",
            "eq_tex": "=", "si_unit": si_unit}


def si_value_text(si_value: sp.Expr | float, unit: str) -> dict[str, str]:
    """An SI value shown starting from ``unit`` (the formatter picks the prefix)."""
    return value_text(in_unit(si_value, unit), unit)


def _group(mantissa: str) -> str:
    sign = "-" if mantissa.startswith("-") else ""
    body = mantissa.lstrip("-")
    whole, _, frac = body.partition(".")
    if len(whole) > 3:
        whole = f"{int(whole):,}"
    return sign + whole + ("." + frac if frac else "")


def exact_value_text(si_value: sp.Rational, q: Quantity) -> dict[str, str]:
    """An exact value (a counterexample) for a reader, in the quantity's unit through the shared
    formatter; ``eq_md``/``eq_tex`` say "approximately" when the text is rounded."""
    from derive.model.display import shown

    unit = quantity_unit(q)
    value = in_unit(si_value, unit)
    out = value_text(value, unit)
    if shown(value, unit).exact:
        return out
    r = sp.Rational(si_value)
    if r.q < 10**6 and abs(r.p) < 10**9:  # a small fraction reads exactly, in SI units
        si = format_dimension(q.dimension)
        si_unit, md_unit = siunitx_unit(si), markdown_unit(si)
        sign = "-" if r.p < 0 else ""
        if r.q == 1:  # a whole number in full, its thousands grouped (622,329,856 param, not 622329856)
            tex, md = rf"\num{{{r.p}}}" + (rf"\,\si{{{si_unit}}}" if si_unit else ""), f"{r.p:,} {md_unit}"
        else:
            tex = sign + rf"\ensuremath{{\tfrac{{{abs(r.p)}}}{{{r.q}}}}}" + (rf"\,\si{{{si_unit}}}" if si_unit else "")
            md = f"{r} {md_unit}"
        return {"tex": tex, "md": md.strip(), "num": str(r), "unit": md_unit, "eq_md": "=",
                "eq_tex": "=", "si_unit": si_unit}
    out.update(eq_md="≈", eq_tex=r"\approx")
    return out


def undefined_text(reason: str | None) -> dict[str, str]:
    """No value: a definition is used outside its domain (``reason`` says where)."""
    md = f"undefined ({reason})" if reason else "undefined"
    tex = r"\text{undefined}" + (f" ({latex_escape(reason)})" if reason else "")
    return {"tex": tex, "md": md, "num": "", "unit": "", "eq_md": "=", "eq_tex": "="}


def unit_tex(text: str) -> str:
    si = siunitx_unit(text)
    return rf"\si{{{si}}}" if si else "1"

def quantity_unit(q: Quantity) -> str:
    return q.display_unit or q.unit

def in_unit(si_value: sp.Expr, unit: str) -> sp.Expr:
    """An exact SI value expressed in ``unit`` (still exact)."""
    scale = parse_unit(unit).scale
    return sp.sympify(si_value) / sp.Rational(scale.numerator, scale.denominator)
