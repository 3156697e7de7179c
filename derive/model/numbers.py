"""Exact numbers in, bounded numbers out: the one rule for floats, budgeted numeric evaluation, JSON.

The rule for floats (the only place a binary float becomes an exact number)
    A number is read from its **decimal text**, exactly: ``0.1`` is 1/10, ``1+1e-20`` stays
    100000000000000000001/100000000000000000000 and ``1e-40`` is 1/10**40, never 0.  User text
    (``--set``, ``--assume``, ``eval``, TOML values) is read this way by ``derive.model.parse``.  A value
    that arrives as a binary float (a Python ``float`` in a user library, a sympy ``Float`` in a
    definition, a JSON number) is first written as its shortest round-trip decimal (``repr``: the float
    ``0.1`` is ``"0.1"``), and that text is read exactly.  ``nsimplify`` is never used: it guesses a
    "simple" closed form and turned the exact 39845888/1080078125 into an expression with 19th roots.

Numeric evaluation (``numeric``) is bounded: sympy's ``evalf`` with a fixed number of digits and a cap
on the working precision (``MAX_WORKING_DIGITS``).  An exact value stays exact; only its printed value is
rounded.  Values outside the range of a binary float (``exp(10**10)``, ``exp(-10**10)``) keep a decimal
text (``1.07775e+4342944819``) and give ``None`` as a float, with a note saying why.

JSON never holds NaN or Infinity (``json_safe``): such a float becomes ``null`` and the object gets a
``KEY_note`` saying what it was.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import sympy as sp

from derive.errors import BudgetError, ScenarioError

__all__ = ["MAX_WORKING_DIGITS", "NumericValue", "check_exponentials", "dumps_json", "exact_from_float", "exactify",
           "json_safe", "numeric"]

PRINT_DIGITS = 15  # significant digits a value is computed to (6 are shown)
MAX_WORKING_DIGITS = 400  # the most working precision evalf may use to reach them (about 1330 bits)
MAX_EXP_ARGUMENT_BITS = 4096  # |x| in exp(x) below 2**4096: reducing a larger argument needs that many bits


def exact_from_float(x: float | sp.Float) -> sp.Rational:
    """The exact number a float stands for under the rule above (its shortest decimal text, read exactly)."""
    if isinstance(x, sp.Float):
        if not x.is_finite:
            raise ScenarioError(f"{x} is not a finite number")
        if x._prec <= 53:  # an ordinary binary float: its shortest round-trip decimal
            text = repr(float(x))
        else:  # a higher-precision Float: the decimal text sympy writes for its precision
            text = str(x)
    else:
        if not math.isfinite(x):
            raise ScenarioError(f"{x} is not a finite number")
        text = repr(float(x))
    value = Fraction(text)
    return sp.Rational(value.numerator, value.denominator)


def exactify(expr: sp.Expr) -> sp.Expr:
    """``expr`` with every sympy ``Float`` replaced by its exact value under the rule above."""
    floats = expr.atoms(sp.Float)
    if not floats:
        return expr
    return expr.xreplace({f: exact_from_float(f) for f in floats})


@dataclass(frozen=True)
class NumericValue:
    """A number to show: ``value`` as a float when it is one (else None), ``text`` always, ``note`` why not."""

    value: float | None
    text: str  # 6 significant digits
    note: str | None = None


def numeric(expr: sp.Expr, *, what: str = "the value", where: str | None = None) -> NumericValue:
    """``expr`` (a closed real number) to ``PRINT_DIGITS`` digits within the precision budget.

    Raises ``BudgetError`` when the digits cannot be had within ``MAX_WORKING_DIGITS`` (heavy
    cancellation) and ``ScenarioError`` when ``expr`` is not a real number."""
    check_exponentials(expr, what=what, where=where)
    if isinstance(expr, sp.Rational):
        return _from_mpf(mpmath.mpf(expr.p) / expr.q if expr.q != 1 else mpmath.mpf(expr.p), exact_zero=expr == 0)
    try:
        with mpmath.workdps(PRINT_DIGITS + 5):
            approx = expr.evalf(PRINT_DIGITS, maxn=MAX_WORKING_DIGITS, strict=True)
    except sp.core.evalf.PrecisionExhausted:
        raise BudgetError(f"{what} cannot be computed to {PRINT_DIGITS} digits within the precision budget "
                          f"({MAX_WORKING_DIGITS} digits of working precision)", where=where,
                          hint="the expression cancels too closely; its exact form is kept") from None
    except (ValueError, TypeError, ArithmeticError, RecursionError, NotImplementedError) as err:
        raise BudgetError(f"{what} cannot be evaluated numerically ({type(err).__name__})", where=where,
                          hint="simplify the expression") from None
    if not isinstance(approx, sp.Float):
        if approx.is_zero:
            return NumericValue(0.0, "0")
        raise ScenarioError(f"{what} does not evaluate to a real number ({_short(approx)})", where=where)
    return _from_mpf(mpmath.mpf(approx._mpf_), exact_zero=False)


def check_exponentials(expr: sp.Expr, *, what: str = "the value", where: str | None = None) -> None:
    """``BudgetError`` when some ``exp(x)`` in ``expr`` has ``|x|`` beyond 2**MAX_EXP_ARGUMENT_BITS.

    Evaluating ``exp(x)`` reduces ``x`` modulo log 2 with about log2|x| extra bits; for
    ``exp(-14975*exp(10**60))`` that is 1.4e60 bits, which mpmath would try (and never finish) whatever
    precision evalf was asked for.  Arguments are checked innermost first, each with a 5-digit estimate."""
    if not isinstance(expr, sp.Basic) or not expr.has(sp.exp):
        return
    for e in sorted(expr.atoms(sp.exp), key=lambda a: (a.count(sp.exp), sp.default_sort_key(a))):
        try:
            arg = e.args[0].evalf(5, maxn=60)
        except (ValueError, TypeError, ArithmeticError, RecursionError):
            continue
        if isinstance(arg, sp.Float) and arg.is_finite and not arg.is_zero \
                and int(mpmath.mag(mpmath.mpf(arg._mpf_))) > MAX_EXP_ARGUMENT_BITS:
            raise BudgetError(f"{what} needs exp of a number beyond 2**{MAX_EXP_ARGUMENT_BITS} in size "
                              f"({_short(e, 60)})", where=where,
                              hint="beyond the evaluation budget; use smaller numbers")


def _from_mpf(x: mpmath.mpf, *, exact_zero: bool) -> NumericValue:
    if x == 0:
        return NumericValue(0.0, "0")
    text = mpmath.nstr(x, 6, min_fixed=-4, max_fixed=6)
    magnitude = abs(x)
    if magnitude > sys.float_info.max:
        return NumericValue(None, text, "beyond the range of a binary float")
    if magnitude < sys.float_info.min:  # would underflow to 0 or lose digits as a subnormal
        return NumericValue(None, text, "below the range of a binary float (not zero)")
    value = float(x)
    return NumericValue(value, f"{value:.6g}")


def _short(expr: object, limit: int = 80) -> str:
    text = str(expr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def json_safe(data: object) -> object:
    """``data`` with every NaN or infinite float replaced by ``None``; in a mapping, the key also gets a
    ``KEY_note`` saying what the number was (null plus a reason).  Containers are copied, not changed."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        out: dict = {}
        for key, value in data.items():
            if isinstance(value, float) and not math.isfinite(value):
                out[key] = None
                note = "not a number" if math.isnan(value) else ("+" if value > 0 else "-") + "infinite"
                out.setdefault(f"{key}_note", f"{note}: not representable in JSON")
            else:
                out[key] = json_safe(value)
        return out
    if isinstance(data, (list, tuple)):
        return [json_safe(v) for v in data]
    return data


def dumps_json(data: object, *, indent: int | None = 2) -> str:
    """Strict JSON (never NaN or Infinity, see ``json_safe``), UTF-8 text kept as is."""
    return json.dumps(json_safe(data), indent=indent, ensure_ascii=False, allow_nan=False)
