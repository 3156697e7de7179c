"""The one formatter for values with units, for people: ``20 TB/s``, ``14.4 ms``, ``$2.3/Mtok``.

Every command, JSON ``display`` field and document shows a number through this module, so the
same value reads the same everywhere.  The value is given in ``unit`` (a unit string of the engine's
grammar, ``derive.model.units``: ``byte/s``, ``TB/s``, ``USD/token``, ``format_dimension(dim)``);
the formatter then picks the prefix that puts the number in [1, 1000):

- measured units (FLOP, byte, bit, seconds) take SI prefixes on the first unit of the numerator:
  ``2e13 byte/s`` -> ``20 TB/s``; a binary prefix in the given unit keeps the binary family (GiB);
- a time alone reads as ps, ns, µs, ms, s, min, h or days;
- counted units (token, seq, param, plain numbers) keep their unit and shorten the number:
  ``2,400 seq``, ``200k token/seq``, ``70G param``;
- money is written ``$``-first, a small price per unit moves the prefix to the denominator:
  ``2.3e-6 USD/token`` -> ``$2.3/Mtok``; a large sum reads ``$4.6M``; money per second, alone or per
  chip of a counted pool, reads per hour (``1/1800 USD/s`` -> ``$2/h``, ``1/3 USD/(s·prefill_chip)`` ->
  ``$1,200/(h·prefill_chip)``);
- beyond the largest prefix, scientific notation: ``5.75e25 FLOP``.

Exact values (sympy rationals, ``Fraction``, ``int``) are rounded only here, to ``sig`` significant
figures, with decimal arithmetic (no binary float in between).  A value that is not a finite real
number reads ``∞``, ``-∞`` or ``undefined``; JSON gets ``None`` and a reason, never NaN/Infinity.
"""

from __future__ import annotations

import contextvars
import math
from dataclasses import dataclass, replace
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction
from numbers import Rational as _RationalABC

import sympy as sp

from derive.errors import UnitError
from derive.model.units import Dimension, format_dimension, is_declared_count, parse_unit, unit_factors

__all__ = [
    "Shown",
    "LatexValue",
    "canonical_factors",
    "display_json",
    "format_assignment",
    "format_bound",
    "format_number",
    "format_quantity",
    "format_range",
    "format_value",
    "format_value_bound",
    "formatter_tables",
    "input_text",
    "latex_value",
    "math_number",
    "math_value",
    "shown",
    "tex_text",
    "to_fraction",
]

Value = sp.Basic | Fraction | int | float | None
UnitLike = str | Dimension

# Canonical spelling of each unit word of the grammar (FLOPS, a rate, is split into FLOP/s).
_CANON: dict[str, str] = {
    "FLOP": "FLOP", "FLOPs": "FLOP", "flop": "FLOP", "flops": "FLOP",
    "B": "byte", "byte": "byte", "bytes": "byte",
    "b": "bit", "bit": "bit", "bits": "bit",
    "s": "s", "sec": "s", "second": "s", "seconds": "s",
    "min": "min", "minute": "min", "minutes": "min",
    "h": "h", "hr": "h", "hour": "h", "hours": "h",
    "day": "day", "days": "day",
    "token": "token", "tokens": "token", "tok": "token",
    "seq": "seq", "sequence": "seq", "sequences": "seq",
    "param": "param", "params": "param", "parameter": "param", "parameters": "param",
    "USD": "USD", "$": "USD", "dollar": "USD", "dollars": "USD",
    "J": "J", "joule": "J", "joules": "J", "W": "W", "watt": "W", "watts": "W",
    "%": "%", "percent": "%",
}
_RATES = {"FLOPS": "FLOP", "Bps": "byte", "bps": "bit"}  # rate words of the grammar, split into X/s
_PREFIX_VALUE: dict[str, Fraction] = {
    "": Fraction(1), "k": Fraction(10**3), "K": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9),
    "T": Fraction(10**12), "P": Fraction(10**15), "E": Fraction(10**18),
    "m": Fraction(1, 10**3), "u": Fraction(1, 10**6), "µ": Fraction(1, 10**6), "n": Fraction(1, 10**9),
    "p": Fraction(1, 10**12),
    "Ki": Fraction(2**10), "Mi": Fraction(2**20), "Gi": Fraction(2**30), "Ti": Fraction(2**40),
}
_UP = ("", "k", "M", "G", "T", "P", "E")
_BINARY = ("", "Ki", "Mi", "Gi", "Ti")
_DOWN = ("p", "n", "µ", "m")  # only for seconds; below a picosecond, scientific (5e-16 s)
_MEASURED = {"FLOP", "byte", "bit", "s", "J", "W"}  # words that take unit prefixes
_COUNTED = {"token", "seq", "param"}  # words whose number is shortened instead (200k token)
_COUNT_SUFFIX = ("", "k", "M", "G", "T")
_MONEY_SUFFIX = (("", 1), ("k", 10**3), ("M", 10**6), ("B", 10**9), ("T", 10**12))  # finance usage
_TIME_LADDER = (("days", 86400, 172800), ("h", 3600, 7200), ("min", 60, 120), ("s", 1, 1))

Factor = tuple[str, str, int]


@dataclass(frozen=True)
class Shown:
    """A value split for display: ``number`` (text, already grouped/rounded), ``unit`` (engine
    grammar, parseable by ``parse_unit``), ``money`` (write ``$`` before the number), and the plain
    ``text`` the terminal shows.  ``number`` is None when the value is not a finite real number."""

    number: str | None
    unit: str
    text: str
    money: bool = False
    reason: str | None = None
    exact: bool = False  # the text is the value exactly, not rounded


@dataclass(frozen=True)
class LatexValue:
    """For siunitx: ``num`` goes in ``\\num{}``/``\\SI{num}{}``, ``unit`` is a unit string in the
    engine grammar (convert with the documents' siunitx unit helper); ``text`` is the LaTeX to use
    when the value is not a finite number (``\\infty``, ``\\text{undefined}``), else None."""

    num: str | None
    unit: str
    text: str | None = None


# exact numbers ------------------------------------------------------------------------------------------

MAX_EXACT_EXPONENT = 4000  # beyond 10**±4000 a number is never turned into a Fraction (exp(10**10) has
# 4.3e9 digits): it is shown in scientific notation from a bounded evaluation instead


def _huge(value: Value, sig: int = 4) -> str | None:
    """Scientific text (``1.078e4342944819``) for a finite real sympy number beyond 10**±MAX_EXACT_EXPONENT,
    else None.  Evaluated with a bounded working precision; never expanded to an exact rational."""
    if not isinstance(value, sp.Basic) or value.is_Rational or not value.is_number or value.free_symbols:
        return None
    import mpmath

    from derive.model.numbers import check_exponentials

    check_exponentials(value)  # exp(-exp(10**60)) would never finish: a BudgetError instead
    try:
        approx = value if value.is_Float else value.evalf(sig + 10, maxn=400)
    except (ValueError, TypeError, ArithmeticError, RecursionError):
        return None
    if not approx.is_Float or not approx.is_finite or approx.is_zero:
        return None
    m = mpmath.mpf(approx._mpf_)
    bits = abs(int(mpmath.mag(m)))  # an integer of any size: times 0.30103 it overflowed a float
    if bits * 30103 // 100000 <= MAX_EXACT_EXPONENT:
        return None
    if bits > 10**60:
        from derive.errors import BudgetError

        raise BudgetError(f"a value whose decimal exponent has about {len(str(bits * 30103 // 100000))} digits is "
                          "beyond the display budget (exponents of at most 60 digits)")
    mant, _, exp = mpmath.nstr(m, sig, min_fixed=1, max_fixed=0).partition("e")
    if "." in mant:
        mant = mant.rstrip("0").rstrip(".")
    return f"{mant}e{int(exp)}"


def to_fraction(value: Value) -> Fraction | float | None:
    """An exact ``Fraction`` for a finite real number; ``±inf`` for infinities; ``None`` for anything
    that is not a real number (NaN, complex, symbolic).  Irrational sympy numbers are evaluated to 30
    digits first."""
    if value is None or isinstance(value, bool):
        return None if value is None else Fraction(int(value))
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if math.isnan(value):
            return None
        # the shortest decimal that reads back as this float (1e-12, not its binary expansion)
        return value if math.isinf(value) else Fraction(repr(value))
    if isinstance(value, Decimal):
        if value.is_nan():
            return None
        return float(value) if value.is_infinite() else Fraction(value)
    if isinstance(value, _RationalABC):
        return Fraction(int(value.numerator), int(value.denominator))
    if isinstance(value, sp.Basic):
        if value is sp.oo:
            return math.inf
        if value is sp.S.NegativeInfinity:
            return -math.inf
        if value.is_Rational:
            return Fraction(int(value.p), int(value.q))
        if value.is_Float:
            return Fraction(str(value)) if value.is_finite else None
        if not value.is_number or value.free_symbols or value.is_real is False or value.has(sp.nan, sp.zoo):
            return None
        if _huge(value) is not None:
            from derive.errors import BudgetError

            raise BudgetError(f"{_huge(value)} is beyond the exact display budget (10**±{MAX_EXACT_EXPONENT})",
                              hint="shown in scientific notation, never as an exact rational")
        approx = sp.N(value, 30)
        if not (approx.is_Float or approx.is_Rational) or not approx.is_finite:
            return None
        r = sp.Rational(approx)
        return Fraction(int(r.p), int(r.q))
    return None


# how _round_sig rounds: half-up, except while format_value_bound prints an end of a set toward its inside
_ROUNDING: contextvars.ContextVar[str] = contextvars.ContextVar("derive_display_rounding", default=ROUND_HALF_UP)


def _round_sig(x: Fraction, sig: int) -> Decimal:
    """``x`` rounded half-up to ``sig`` significant figures, computed in decimal (exactly)."""
    if x == 0:
        return Decimal(0)
    with localcontext() as ctx:
        ctx.prec = max(sig, 1)
        ctx.rounding = _ROUNDING.get()
        return Decimal(x.numerator) / Decimal(x.denominator)


def _plain(d: Decimal, *, group: bool = True) -> str:
    """A rounded decimal without exponent and trailing zeros, digits grouped by thousands."""
    text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if text in ("-0", ""):
        text = "0"
    if not group:
        return text
    sign = "-" if text.startswith("-") else ""
    whole, _, frac = text.lstrip("-").partition(".")
    if len(whole) > 3:
        whole = f"{int(whole):,}"
    return sign + whole + ("." + frac if frac else "")


def _scientific(d: Decimal) -> str:
    """``5.75e25``, ``1e-12``: mantissa without trailing zeros."""
    sign, digits, exp = d.as_tuple()
    assert isinstance(exp, int)
    mant = "".join(map(str, digits)).rstrip("0") or "0"
    e = exp + len(digits) - 1
    body = mant[0] + ("." + mant[1:] if len(mant) > 1 else "")
    return f"{'-' if sign else ''}{body}e{e}"


def format_number(value: Value, *, sig: int = 4) -> str:
    """A plain number for people: ``2,400``, ``56.25``, ``0.0123``, ``5.75e25``; ``∞``/``undefined``
    when not finite.  No unit and no prefix (``format_value`` adds those)."""
    huge = _huge(value, sig)
    if huge is not None:
        return huge
    x = to_fraction(value)
    if x is None:
        return "undefined"
    if isinstance(x, float):
        return "∞" if x > 0 else "-∞"
    return _number_text(x, sig)


def _number_text(x: Fraction, sig: int) -> str:
    if x == 0:
        return "0"
    if x.denominator == 1 and abs(x) < 10**6:
        return _plain(Decimal(x.numerator))  # an exact integer below a million is shown in full
    d = _round_sig(x, sig)
    # others switch to scientific outside [1e-4, 1e6)
    return _plain(d) if Decimal("1e-4") <= abs(d) < Decimal("1e6") else _scientific(d)


# units ----------------------------------------------------------------------------------------------------

def _canonical(unit: str) -> list[Factor]:
    out: list[Factor] = []
    for prefix, word, exp in unit_factors(unit):
        if word in _RATES:
            out += [(prefix, _RATES[word], exp), ("", "s", -exp)]
        elif word == "1":
            continue
        elif word in _CANON:
            out.append((prefix, _CANON[word], exp))
        elif is_declared_count(word):  # a library's own count (prefill_chip): shown as written, never prefixed
            out.append((prefix, word, exp))
        else:  # a word the grammar gained but the display does not know yet
            raise UnitError(f"no display form for unit '{word}' in '{unit}'")
    return out


def _word_text(prefix: str, word: str, *, in_denominator: bool) -> str:
    if word == "byte":
        return prefix + "B" if prefix else "byte"
    if word == "token" and prefix and in_denominator:
        return prefix + "tok"  # $2.3/Mtok
    if word == "USD":
        return "USD"
    return prefix + word


def _unit_text(factors: list[Factor]) -> str:
    """Factors back to a unit string of the grammar: ``TB/s``, ``FLOP/(param·token)``, ``1/s``."""
    def one(p: str, w: str, e: int, den: bool) -> str:
        t = _word_text(p, w, in_denominator=den)
        return t if e == 1 else f"{t}^{e}"

    num = [one(p, w, e, False) for p, w, e in factors if e > 0]
    den = [one(p, w, -e, True) for p, w, e in factors if e < 0]
    top = "·".join(num)
    if not den:
        return top or "1"
    bottom = den[0] if len(den) == 1 else "(" + "·".join(den) + ")"
    return f"{top or '1'}/{bottom}"


def _strip_prefix(factors: list[Factor], i: int, x: Fraction) -> tuple[list[Factor], Fraction]:
    """Remove the prefix of factor ``i``, converting the value so that it is unchanged."""
    p, w, e = factors[i]
    out = list(factors)
    out[i] = ("", w, e)
    return out, x * _PREFIX_VALUE[p] ** e


def _pick(x: Fraction, ladder: tuple[str, ...], sig: int, *, per: bool = False) -> tuple[str, Decimal] | None:
    """The prefix of ``ladder`` that puts the rounded mantissa in [1, 1000): largest first.  With
    ``per`` the prefix sits in a denominator (mantissa = x * prefix).  None when no prefix does."""
    for p in sorted(ladder, key=lambda q: _PREFIX_VALUE[q], reverse=not per):
        f = _PREFIX_VALUE[p]
        m = _round_sig(x * f if per else x / f, sig)
        if 1 <= abs(m) < 1000:
            return p, m
    return None


def _unit_of(unit: UnitLike) -> str:
    return format_dimension(unit) if isinstance(unit, Dimension) else unit


def shown(value: Value, unit: UnitLike, *, sig: int = 4, fixed: bool = False) -> Shown:
    """The parts of ``format_value``; see the module docstring for the rules.  ``fixed`` keeps the
    unit as given (for an explicit ``--unit``) and only formats the number."""
    unit_text = _unit_of(unit).strip() or "1"
    huge = _huge(value, sig)
    if huge is not None:  # in the given unit, no prefix: the number is beyond every prefix anyway
        return Shown(huge, unit_text, huge if unit_text in ("1", "") else f"{huge} {unit_text}")
    x = to_fraction(value)
    factors = _canonical(unit_text)
    if x is None or isinstance(x, float):
        number_text = format_number(x if x is not None else None)
        reason = "not a real number" if x is None else ("+∞" if x > 0 else "-∞")
        u = unit_text if fixed else _unit_text(factors)
        text = number_text if u == "1" or x is None else f"{number_text} {u}"
        return Shown(None, u, text, reason=reason)
    out = _assemble(_number_text(x, sig), [], unit_text, sig) if fixed else _choose(x, factors, sig)
    return replace(out, exact=_reads_back(out, unit_text) == x)


_SUFFIX_VALUE = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "B": 10**9, "T": 10**12}


def _suffix_of(number: str) -> str:
    """The count suffix a formatted number ends with (``128k``: ``k``), or ``""``."""
    return number[-1] if number[-1:] and number[-1:] in _SUFFIX_VALUE else ""


def _reads_back(s: Shown, unit_text: str) -> Fraction | None:
    """The value a reader takes from ``s``, in ``unit_text``."""
    if s.number is None:
        return None
    number = s.number.replace(",", "")
    suffix = _suffix_of(number)
    try:
        value = Fraction(number[: len(number) - len(suffix)]) * _SUFFIX_VALUE[suffix]
        return value * parse_unit(s.unit).scale / parse_unit(unit_text).scale
    except (ValueError, ZeroDivisionError, UnitError):
        return None


def _assemble(number: str, factors: list[Factor], unit: str | None, sig: int, *, money: bool = False,
              suffix: str = "") -> Shown:
    u = unit if unit is not None else _unit_text(factors)
    if money:
        sign = "-" if number.startswith("-") else ""
        body = f"{sign}${number.lstrip('-')}{suffix}"
        rest = u.removeprefix("USD")
        return Shown(number + suffix, u, body + rest, money=True)
    if u in ("1", ""):
        return Shown(number + suffix, "1", number + suffix)
    if u == "%":
        return Shown(number + suffix, u, f"{number}{suffix}%")
    if u.startswith("1/"):
        return Shown(number + suffix, u, f"{number}{suffix}{u[1:]}")  # 5/s
    return Shown(number + suffix, u, f"{number}{suffix} {u}")


def _choose(x: Fraction, factors: list[Factor], sig: int) -> Shown:
    num = [i for i, (_, _, e) in enumerate(factors) if e > 0]
    den = [i for i, (_, _, e) in enumerate(factors) if e < 0]
    words = [w for _, w, _ in factors]

    # a time alone: ns .. days
    if len(factors) == 1 and factors[0][2] == 1 and words[0] in ("s", "min", "h", "day"):
        return _time(x * parse_unit(_unit_text(factors)).scale, sig)

    # money: $ first; a small price moves the prefix to the denominator, a large sum gets k/M/B/T
    if num and factors[num[0]][1] == "USD" and len(num) == 1 and factors[num[0]][2] == 1:
        usd = num[0]
        per_second = [i for i in den if factors[i] == ("", "s", -1)]
        per_count = [i for i in den if is_declared_count(factors[i][1]) and factors[i][2] == -1]
        if per_second and len(den) == 1 + len(per_count) and x != 0:
            # money per second (per chip of a pool a library counts: prefill_chip) reads per hour, as chips are
            # rented: $2/h, not $555.6/Ms; $1,200/(h·prefill_chip), not $333.3/(ks·prefill_chip); $20k/h, not $5.556/s
            fs = list(factors)
            fs[usd] = ("", "USD", 1)
            fs[per_second[0]] = ("", "h", -1)
            return _suffixed(x * 3600, fs, sig, _MONEY_SUFFIX, money=True)
        if abs(x) < 1 and x != 0:
            slots = [i for i in den if factors[i][2] == -1 and factors[i][1] in _MEASURED | _COUNTED]
            if slots:
                base, y = _strip_prefix(factors, slots[0], x)
                picked = _pick(y, _UP, sig, per=True)
                if base[slots[0]][1] == "token" and Fraction(1, 10**4) <= abs(y) * 10**6 < 1000:
                    picked = ("M", _round_sig(y * 10**6, sig))  # prices are quoted per million tokens
                if picked is not None:
                    p, m = picked
                    base[slots[0]] = (p, base[slots[0]][1], -1)
                    return _assemble(_plain(m), base, None, sig, money=True)
        fs = list(factors)
        fs[usd] = ("", "USD", 1)
        return _suffixed(x, fs, sig, _MONEY_SUFFIX, money=True)

    # an intensity (FLOP/byte, byte/FLOP): a ratio of two measured non-time units reads like a count
    intensity = bool(num) and bool(den) and all(words[i] in _MEASURED - {"s"} for i in num + den) \
        and factors[num[0]][0] == ""
    # measured unit first in the numerator: prefix on it
    if num and factors[num[0]][2] == 1 and words[num[0]] in _MEASURED and not intensity:
        i = num[0]
        binary = factors[i][0] in _BINARY[1:] and words[i] == "byte"
        base, y = _strip_prefix(factors, i, x)
        ladder = _BINARY if binary else (_DOWN + _UP if words[i] == "s" else _UP)
        if abs(y) >= 1 or words[i] == "s":
            picked = _pick(y, ladder, sig)
            if picked is not None:
                p, m = picked
                base[i] = (p, words[i], 1)
                return _assemble(_plain(m), base, None, sig)
        return _assemble(_number_text(y, sig), base, None, sig)

    # counted units and plain numbers: 200k token/seq
    if not num or words[num[0]] in _COUNTED or intensity:
        return _suffixed(x, factors, sig, tuple((p, _PREFIX_VALUE[p]) for p in _COUNT_SUFFIX))
    return _assemble(_number_text(x, sig), factors, None, sig)


def _suffixed(x: Fraction, factors: list[Factor], sig: int, ladder: tuple[tuple[str, int | Fraction], ...], *,
              money: bool = False) -> Shown:
    """The number shortened with a suffix (``200k``, ``$4.6M``) from 10,000 up; exact below."""
    if abs(x) >= 10**4:
        for s, f in reversed(ladder):
            m = _round_sig(x / f, sig)
            if abs(m) >= 1:
                if abs(m) >= 1000 and s == ladder[-1][0]:
                    break  # beyond the largest suffix: scientific
                return _assemble(_plain(m), factors, None, sig, money=money, suffix=s)
    return _assemble(_number_text(x, sig), factors, None, sig, money=money)


def _time(seconds: Fraction, sig: int) -> Shown:
    a = abs(seconds)
    for name, scale, threshold in _TIME_LADDER:
        if a >= threshold:
            m = _round_sig(seconds / scale, sig)
            if name == "days" and abs(m) >= 10**6:
                break
            unit = "day" if name == "days" and m == 1 else name
            return _assemble(_plain(m), [], unit, sig)
    if a == 0 or a >= 1:
        return _assemble(_number_text(seconds, sig), [], "s", sig)
    picked = _pick(seconds, _DOWN, sig)
    if picked is not None:
        p, m = picked
        return _assemble(_plain(m), [], f"{p}s", sig)
    return _assemble(_number_text(seconds, sig), [], "s", sig)


# the public formatters ----------------------------------------------------------------------------------

def format_value(value: Value, unit: UnitLike, *, sig: int = 4, fixed: bool = False) -> str:
    """``value`` (given in ``unit``) for people, with a prefix chosen for it: ``format_value(2 * 10**13,
    "byte/s")`` -> ``"20 TB/s"``.  ``fixed``: keep ``unit`` exactly (an explicit ``--unit``)."""
    if not isinstance(unit, (str, Dimension)) or not (value is None or isinstance(value, (sp.Basic, Fraction, int,
                                                                                           float))):
        from derive.errors import UsageError  # a public function: format_value(1, None) was an AttributeError

        raise UsageError(f"format_value() takes a number and a unit text, got {type(value).__name__} {value!r} and "
                         f"{type(unit).__name__} {unit!r}; see help(derive.format_value)")
    return shown(value, unit, sig=sig, fixed=fixed).text


def format_assignment(name: str, value: Value, unit: UnitLike, *, sig: int = 4) -> str:
    """A counterexample or pinned-value line: ``hbm_bandwidth = 20 TB/s``."""
    return f"{name} = {format_value(value, unit, sig=sig)}"


def format_range(lo: Value, hi: Value, unit: UnitLike, *, lo_closed: bool = True, hi_closed: bool = True,
                 sig: int = 4) -> str:
    """An interval of values: ``[56.25 GB/s, ∞)``; an infinite end is always open."""
    lo_x, hi_x = to_fraction(lo), to_fraction(hi)
    left = "(" if not lo_closed or isinstance(lo_x, float) else "["
    right = ")" if not hi_closed or isinstance(hi_x, float) else "]"
    a = "-∞" if isinstance(lo_x, float) and lo_x < 0 else format_value(lo, unit, sig=sig)
    b = "∞" if isinstance(hi_x, float) and hi_x > 0 else format_value(hi, unit, sig=sig)
    return f"{left}{a}, {b}{right}"


def format_quantity(si_value: Value, dimension: Dimension, display_unit: str | None = None, *, sig: int = 4) -> str:
    """A quantity's value given in SI base units: in its display unit's family when that has a binary
    prefix (GiB), else with the prefix the formatter picks for the SI unit."""
    return format_value(*_in_display_unit(si_value, dimension, display_unit), sig=sig)


def _in_display_unit(si_value: Value, dimension: Dimension, display_unit: str | None) -> tuple[Value, str]:
    """The value and unit ``format_quantity`` prints in: the display unit's where it has a binary prefix (GiB),
    else the SI unit (the formatter picks its prefix)."""
    if display_unit and any(p in _BINARY[1:] for p, _, _ in unit_factors(display_unit)):
        x = to_fraction(si_value)
        if isinstance(x, Fraction):
            return x / parse_unit(display_unit).scale, display_unit
    return si_value, format_dimension(dimension)


def format_value_bound(value: Value, unit: UnitLike, *, upper: bool, sig: int = 4, fixed: bool = False) -> str:
    """``format_value`` for the end of a set of values a reader acts on (the longest context that fits, the end of
    a margin): where ``sig`` figures would read past the end (an upper end printed higher, a lower end lower, so
    that the printed value lies outside the set), one or two figures more where that reads on the set's side,
    else ``sig`` figures rounded toward the inside."""
    x = to_fraction(value)
    if not isinstance(x, Fraction):
        return format_value(value, unit, sig=sig, fixed=fixed)
    unit_text = _unit_of(unit).strip() or "1"
    for figures in range(sig, sig + 3):  # a figure or two more where that is enough (23.789k, not 23.79k)
        out = shown(x, unit, sig=figures, fixed=fixed)
        back = _reads_back(out, unit_text)
        if back is None or (back <= x if upper else back >= x):
            return out.text
    token = _ROUNDING.set(ROUND_FLOOR if upper else ROUND_CEILING)  # else rounded inward (13.34, not 13.33333)
    try:
        return shown(x, unit, sig=sig, fixed=fixed).text
    finally:
        _ROUNDING.reset(token)


def format_bound(si_value: Value, dimension: Dimension, display_unit: str | None = None, *, upper: bool,
                 sig: int = 4) -> str:
    """``format_quantity`` printed on the set's side of an end (``format_value_bound``)."""
    return format_value_bound(*_in_display_unit(si_value, dimension, display_unit), upper=upper, sig=sig)


def input_text(value: Value, unit: UnitLike, *, sig: int = 6) -> str:
    """The value as a user would type it back (``--set``): ``40 TB/s``, ``128k token/seq``,
    ``2.3 USD/Mtok``; no digit grouping, no ``$``, unit in the engine's grammar."""
    s = shown(value, unit, sig=sig)
    if s.number is None:
        raise UnitError(f"no finite value to write for {format_value(value, unit)}")
    number = s.number.replace(",", "")
    if number.endswith("B"):  # money's billions: the grammar reads B as a byte
        number = _plain(Decimal(number[:-1]) * 10**9, group=False)
    return number if s.unit == "1" else f"{number} {s.unit}"


_TEX_TEXT = {"\\": r"\backslash ", "%": r"\%", "#": r"\#", "&": r"\&", "_": r"\_", "$": r"\$", "{": r"\{",
             "}": r"\}", "^": r"\hat{}", "~": r"\sim "}


def tex_text(text: object) -> str:
    """Prose for ``\\text{...}`` inside math rendered by MathJax or LaTeX: every special character escaped
    (a ``%`` would otherwise start a comment and swallow the rest of the formula)."""
    return "".join(_TEX_TEXT.get(c, c) for c in str(text))


def _exact_text(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def display_json(value: Value, unit: UnitLike, *, sig: int = 4) -> dict:
    """JSON-safe fields for a value in ``unit``: ``value`` (float, or None when not finite), ``exact``
    (the exact rational as text, or the sympy expression when irrational), ``unit``, ``display``,
    and ``reason`` when ``value`` is None.  Never NaN or Infinity."""
    unit_text = _unit_of(unit)
    huge = _huge(value, sig)
    if huge is not None:
        return {"value": None, "exact": str(value), "unit": unit_text, "display": shown(value, unit_text, sig=sig).text,
                "reason": "beyond the range of a JSON number; see exact"}
    x = to_fraction(value)
    s = shown(value, unit_text, sig=sig)
    if x is None or isinstance(x, float):
        reason = ("not a real number" if x is None else ("infinite" if x > 0 else "negative infinite"))
        return {"value": None, "exact": None, "unit": unit_text, "display": s.text, "reason": reason}
    exact = _exact_text(x)
    if isinstance(value, sp.Basic) and not value.is_Rational and not value.is_Float:
        exact = str(value)
    try:
        as_float = float(x)
    except OverflowError:
        as_float = None
    out = {"value": as_float, "exact": exact, "unit": unit_text, "display": s.text}
    if as_float is None:
        out["reason"] = "too large for a JSON number; see exact"
    return out


def latex_value(value: Value, unit: UnitLike, *, sig: int = 4) -> LatexValue:
    """The siunitx parts of a value: ``LatexValue(num="56.25", unit="GB/s")`` for ``\\SI{56.25}{...}``;
    counted units keep the full number (siunitx groups digits) up to a million, then ``2.4e9``;
    money is ``USD`` in the unit (``USD/Mtok``)."""
    s = shown(value, unit, sig=sig)
    if s.number is None:
        x = to_fraction(value)
        text = r"\text{undefined}" if x is None else (r"\infty" if x > 0 else r"-\infty")
        return LatexValue(None, s.unit, text)
    number = s.number.replace(",", "")
    suffix = _suffix_of(number)
    if suffix:
        base = Decimal(number[:-1]) * _SUFFIX_VALUE[suffix]
        number = _plain(base, group=False) if abs(base) < 10**6 else _scientific(base.normalize())
    return LatexValue(number, s.unit)



# math: a value inside a formula, for LaTeX, MathJax (GitHub) and KaTeX alike ----------------------------

def _math_number(text: str) -> str:
    """A number as the formatter wrote it (``2,400``, ``5.75e25``, ``-1e-12``) as math: ``2{,}400``,
    ``5.75 \\times 10^{25}``, ``-10^{-12}``."""
    mant, e, exp = text.partition("e")
    mant = mant.replace(",", "{,}")
    if not e:
        return mant
    sign = "-" if mant.startswith("-") else ""
    body = mant.lstrip("-")
    return f"{sign}10^{{{int(exp)}}}" if body == "1" else rf"{mant} \times 10^{{{int(exp)}}}"


def _math_unit(unit: str) -> str:
    """A unit string of the formatter (``TFLOP/s``, ``FLOP/(param·token)``, ``µs``) upright in math."""
    return r"\mathrm{" + unit.replace("·", r"{\cdot}").replace("µ", r"\mu ") + "}"


def math_number(value: Value, *, sig: int = 4, max_sig: int = 8) -> tuple[str, bool]:
    """A plain number (``format_number``'s rules) as math, and whether the text is the value exactly:
    ``4`` significant figures, more (up to ``max_sig``) where they make it exact: ``10^{8}``,
    ``1.2345678 \\times 10^{8}``, ``(r"1.235 \\times 10^{8}", False)`` for 123456789."""
    x = to_fraction(value)
    if not isinstance(x, Fraction):
        return (r"\text{undefined}" if x is None else (r"\infty" if x > 0 else r"-\infty")), False
    for k in range(sig, max(sig, max_sig) + 1):
        text = format_number(x, sig=k)
        mant, _, exp = text.replace(",", "").partition("e")
        if Fraction(mant) * Fraction(10) ** int(exp or 0) == x:
            return _math_number(text), True
    return _math_number(format_number(x, sig=sig)), False


def math_value(value: Value, unit: UnitLike, *, sig: int = 4, max_sig: int = 8) -> tuple[str, bool]:
    """A value given in ``unit`` as math, with the prefix ``shown`` picks, and whether the text is the value
    exactly: ``312\\,\\mathrm{TFLOP/s}``, ``128\\mathrm{k}\\,\\mathrm{token/seq}``, ``\\$2.3/\\mathrm{Mtok}``,
    ``5.75 \\times 10^{25}\\,\\mathrm{FLOP}``.  For a formula, where a rounded number would change what
    it says, more significant figures (up to ``max_sig``: ``15.625\\,\\mathrm{ms}``) or a small fraction
    in the chosen unit (``\\frac{400}{3}\\mathrm{T}\\,\\mathrm{token}``) keep it exact where they can.
    Not a finite number: ``\\infty``, ``\\text{undefined}``."""
    s = shown(value, unit, sig=sig)
    if s.number is None:
        lv = latex_value(value, unit, sig=sig)
        return lv.text or r"\text{undefined}", False
    for k in range(sig + 1, max(sig, max_sig) + 1):
        if s.exact:
            break
        s = shown(value, unit, sig=k)
    if s.exact:
        return _math_shown(s, None), True
    s = shown(value, unit, sig=sig)
    number = s.number.replace(",", "")  # type: ignore[union-attr]
    suffix = _suffix_of(number)
    x = to_fraction(value)
    unit_text = _unit_of(unit).strip() or "1"
    try:
        scale = parse_unit(s.unit).scale / parse_unit(unit_text).scale * _SUFFIX_VALUE[suffix]
    except UnitError:
        scale = None
    if isinstance(x, Fraction) and scale:
        y = x / scale
        if y.denominator <= 1000 and abs(y.numerator) < 10**6:
            sign = "-" if y < 0 else ""
            return _math_shown(s, rf"{sign}\frac{{{abs(y.numerator)}}}{{{y.denominator}}}"), True
    return _math_shown(s, None), False


def _math_shown(s: Shown, fraction: str | None) -> str:
    """``s`` as math; ``fraction`` (LaTeX) replaces its number, keeping its suffix and unit."""
    number = s.number or ""
    suffix = _suffix_of(number)
    num = fraction if fraction is not None else _math_number(number[: len(number) - len(suffix)])
    if suffix:
        num += r"\mathrm{" + suffix + "}"
    if s.money:
        sign = "-" if num.startswith("-") else ""
        rest = s.unit.removeprefix("USD")
        tail = ("/" + _math_unit(rest[1:])) if rest.startswith("/") else (_math_unit(rest) if rest else "")
        return rf"{sign}\${num.removeprefix('-')}{tail}"
    if s.unit in ("1", ""):
        return num
    if s.unit == "%":
        return rf"{num}\,\%"
    if s.unit.startswith("1/"):
        return rf"{num}/{_math_unit(s.unit[2:])}"
    return rf"{num}\,{_math_unit(s.unit)}"


# the formatter's rules as data, for a mirror of ``shown`` in another language ---------------------------

def canonical_factors(unit: UnitLike) -> list[tuple[str, str, int]]:
    """The (prefix, word, exponent) factors ``shown`` reads a unit as (``FLOPS`` split into ``FLOP/s``, each
    word in its canonical spelling): what a mirror of the formatter (the live page's script) starts from."""
    return list(_canonical(_unit_of(unit).strip() or "1"))


def formatter_tables() -> dict[str, object]:
    """The tables ``shown`` picks prefixes and suffixes from, as plain data (prefix values as
    ``[numerator, denominator]`` text, so that a mirror computes with them exactly)."""
    def frac(f: Fraction | int) -> list[str]:
        f = Fraction(f)
        return [str(f.numerator), str(f.denominator)]

    return {"prefix": {p: frac(v) for p, v in sorted(_PREFIX_VALUE.items())}, "up": list(_UP),
            "binary": list(_BINARY), "down": list(_DOWN), "measured": sorted(_MEASURED),
            "counted": sorted(_COUNTED), "count_suffix": list(_COUNT_SUFFIX),
            "money_suffix": [[s, str(v)] for s, v in _MONEY_SUFFIX],
            "time_ladder": [[n, str(s), str(t)] for n, s, t in _TIME_LADDER],
            # the grammar's own words: any other word of a value's factors is a count a library declared
            "words": sorted(set(_CANON.values()))}
