"""Parsing user text into sympy expressions, relations and values, by an allow-list of syntax.

Text typed on the command line (``--set QUANTITY=VALUE``, ``--assume "RELATION"``, ``derive eval
EXPR``) becomes sympy objects here.  Nothing the user types is ever executed: the text is checked
character by character, read by ``ast.parse`` (which only builds a syntax tree), and the tree is
walked by hand, turning each allowed node into a sympy object.  Any other node is an error.

Main entries
- ``parse_expression``: ``flops / hbm_bandwidth * 2**-1`` -> a sympy expression over given symbols.
- ``parse_relation``: ``a < b <= c``, ``and``/``or``/``not``, ``x in [a, b]`` -> a ``logic.Formula``.
- ``parse_assignment``: ``flops=989 TFLOP/s`` -> ``("flops", "989 TFLOP/s")``.
- ``parse_value``: ``3.35 TB/s`` -> the exact number in SI base units, its unit checked.

Grammar (everything else is refused)
- numbers: ``42``, ``0.1`` (exactly 1/10, never a float), ``1e12``, ``1_000``; no complex, hex, bool.
- operators: ``+ - * /``, ``**`` and ``^`` (both power), unary ``+``/``-``, parentheses.
- functions: ``max``/``min`` (two or more arguments), ``abs``, ``ceil``, ``floor``, ``sqrt``, ``exp``,
  ``log`` (one).
- names: only those in the given mapping; an unknown one suggests the closest names.
- relations: ``== != < <= > >=``, chained (``a < b <= c`` is ``a < b and b <= c``), ``and``, ``or``,
  ``not``, ``x in [a, b]`` (closed: ``a <= x <= b``), ``x in (a, b)`` (open), ``x not in [...]``.

Implementation notes
- Security is the point.  No ``eval``/``exec``/``compile`` of user text and no ``sympify`` or
  ``parse_expr`` of strings (they execute code).  Defence in depth: a character allow-list runs
  first (no quotes, colons, braces, ``@``, ``#``, backslashes), then the AST allow-list.
- Resource limits, checked before the work they guard: text length, bracket depth (before
  ``ast.parse``), node count and tree depth (measured iteratively before the recursive walk),
  digits and decimal exponent of each literal (before converting it), exponents must be rational
  constants with small numerator and denominator, and the size of a power is estimated from the
  digits of its base before sympy computes it.  ``10**10**10`` is refused, not computed.  Exact
  roots of large numbers and ``exp`` of large numbers are refused too: sympy takes seconds on them
  (``(p/q)**(1/53)`` with 100-digit ``p`` and ``q`` takes half a minute).  Every intermediate
  result is checked for size, so no sympy step ever starts from a huge number.
- Python's own ``SyntaxWarning`` (``1and x``) is turned into an error and never printed.
- Symbolic exponents are refused (``x**y``); ``exp(...)`` is the way to write an exponential.
- Division by zero, ``log(0)``, and non-real numbers (``sqrt(-1)``, ``(-8)**(1/3)``) are refused.
- Symbols come from the caller and carry no assumptions, so sympy folds nothing it should not.
- Every failure is a ``ParseError``, ``UnknownNameError`` or ``UnitError`` (all ``DeriveError``)
  with a one-line message, the ``where`` the text came from, and a hint.

References: Python's ``ast`` module documentation; DESIGN.md ("Command line").
"""

from __future__ import annotations

import ast
import difflib
import keyword
import math
import re
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from derive.errors import DeriveError, DimensionError, ParseError, UnitError, UnknownNameError
from derive.kernel.logic import And, Formula, Not, Or, Rel, between
from derive.model.units import (
    RATE_SPELLINGS,
    Dimension,
    Unit,
    format_dimension,
    parse_unit,
    unit_factors,
)

__all__ = ["parse_assignment", "parse_expression", "parse_quantity_expression", "parse_quantity_relation",
           "parse_relation", "parse_value"]

# Limits -----------------------------------------------------------------------------------------
MAX_TEXT_LENGTH = 2000  # characters of user text
MAX_NODES = 400  # syntax-tree nodes (operators and contexts not counted)
MAX_DEPTH = 40  # nesting of the syntax tree, and of brackets in the text
MAX_LITERAL_DIGITS = 400  # digits in one numeric literal
MAX_LITERAL_EXPONENT = 400  # |e| in a literal like 1e12
MAX_EXPONENT = 64  # |p/q| of a power's exponent, and its denominator q
MAX_NUMBER_DIGITS = 1000  # digits of any number built along the way (numerator or denominator)
MAX_ROOT_SIZE = 400  # digits of a number times the order of a root taken of it (exact roots are slow beyond)
MAX_EXP_DIGITS = 100  # numbers inside exp(...) (comparing exp(10**400) with anything takes sympy seconds)
MAX_SYMBOL_POWER = 256  # |exponent| of any power left in a result, e.g. after (x**64)**64

_LOG10_2 = math.log10(2)

# Common typographic characters mapped to their ASCII operators before anything else.
_TYPOGRAPHY = {"≤": "<=", "≥": ">=", "≠": "!=", "×": "*", "·": "*", "−": "-", "⁄": "/"}
_TYPOGRAPHY_RE = re.compile("|".join(map(re.escape, _TYPOGRAPHY)))
_ALLOWED_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_ \t\r\n.+-*/^()[],<>=!")
_CHAR_HINTS = {
    "'": "strings are not allowed",
    '"': "strings are not allowed",
    ":": "lambdas, slices and ':=' are not allowed",
    "%": "'%' is only allowed in a value such as \"50%\"; in an expression write /100",
    "#": "comments are not allowed",
    "$": "a dollar sign goes straight before a number, like $3/h or $2.19/Mtok (or write 3 USD/h)",
    "&": "write 'and'",
    "|": "write 'or'",
    "~": "write 'not'",
    ";": "one expression only",
}

_EXPR_HINT = "allowed: numbers, quantity names, + - * / ** ^, parentheses, abs ceil exp floor log max min sqrt"
_REL_HINT = "compare with == != < <= > >=, combine with and/or/not, or write 'x in [a, b]'"
_NUMBER_HINT = "write numbers in decimal, like 42, 0.1, 3.35e12 or 1_000"

_FUNCTIONS: dict[str, tuple[Callable[..., sp.Expr], int, int | None]] = {
    # name -> (constructor, least number of arguments, most number of arguments or None)
    "max": (sp.Max, 2, None),
    "min": (sp.Min, 2, None),
    "abs": (sp.Abs, 1, 1),
    "ceil": (sp.ceiling, 1, 1),
    "floor": (sp.floor, 1, 1),
    "sqrt": (sp.sqrt, 1, 1),
    "exp": (sp.exp, 1, 1),
    "log": (sp.log, 1, 1),
}

_BINOPS: dict[type, Callable[[sp.Expr, sp.Expr], sp.Expr]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
}
_COMPARISONS: dict[type, str] = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
}
_OPERATOR_SYMBOLS: dict[type, str] = {
    ast.Mod: "%", ast.FloorDiv: "//", ast.MatMult: "@", ast.LShift: "<<", ast.RShift: ">>",
    ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^",
}
_NODE_WORDS: dict[type, str] = {
    ast.Attribute: "attribute access ('.')",
    ast.Subscript: "subscripts ('[...]')",
    ast.Lambda: "lambda",
    ast.IfExp: "conditional expressions ('if ... else')",
    ast.NamedExpr: "assignment expressions (':=')",
    ast.ListComp: "comprehensions",
    ast.SetComp: "comprehensions",
    ast.DictComp: "comprehensions",
    ast.GeneratorExp: "comprehensions",
    ast.JoinedStr: "f-strings",
    ast.FormattedValue: "f-strings",
    ast.List: "lists ('[...]' is only allowed after 'in')",
    ast.Tuple: "tuples ('(a, b)' is only allowed after 'in')",
    ast.Set: "sets",
    ast.Dict: "dicts",
    ast.Starred: "starred arguments",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.Slice: "slices",
}
# Node classes that are operators or contexts: not counted against MAX_NODES nor MAX_DEPTH.
_UNCOUNTED = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)

_DECIMAL = re.compile(r"(?P<int>[0-9_]*)(?:\.(?P<frac>[0-9_]*))?(?:[eE](?P<exp>[+-]?[0-9_]+))?")
_NUMBER_RE = r"(?:[0-9](?:_?[0-9])*(?:\.(?:[0-9](?:_?[0-9])*)?)?|\.[0-9](?:_?[0-9])*)(?:[eE][+-]?[0-9]+)?"
# "128k", "1M", "1.5G": a multiplier written straight after a number (not the start of a unit word)
_MULTIPLIERS = {"k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_MULT_RE = r"[kKMGT](?![A-Za-z0-9_µ$%])"
# a value's number may group its thousands as derive prints them ("1,000", "$16,384/h"): three digits a group
_GROUPED_RE = r"[0-9]{1,3}(?:,[0-9]{3})+(?![0-9])(?:\.(?:[0-9](?:_?[0-9])*)?)?(?:[eE][+-]?[0-9]+)?"
_VALUE = re.compile(
    rf"\s*(?P<sign>[+-]?)\s*(?P<cur>\$?)\s*(?P<num>{_GROUPED_RE}|{_NUMBER_RE})(?P<mult>{_MULT_RE})?"
    rf"(?:\s*/\s*(?P<den>{_NUMBER_RE}))?\s*(?P<unit>.*)", re.S
)
_QUANTITY_NAME = re.compile(r"[a-z][a-z0-9_]*")  # as in declarations: snake_case
# A quantity may be named like a Python keyword (``lambda``, a decay rate): where it is a quantity's name,
# such a word is marked before Python's parser reads the text (``lambdaʹ``, U+02B9, which no quantity name
# holds) and read as the name.  The words of the relation grammar (and, or, not, in) stay keywords.
_KW_MARK = "\u02b9"
_KEYWORD_RE = re.compile(r"(?<![\w.])(" + "|".join(sorted(set(keyword.kwlist) - {"and", "or", "not", "in"}))
                         + r")(?!\w)")


# Public API -------------------------------------------------------------------------------------

def parse_expression(text: str, names: Mapping[str, sp.Symbol], *, where: str = "") -> sp.Expr:
    """Parse an arithmetic expression over the quantities in ``names`` into an exact sympy expression.

    ``names`` maps each allowed name to its symbol (or expression).  Numbers become exact rationals.
    Raises ``ParseError`` for anything outside the grammar and ``UnknownNameError`` for a name not in
    ``names``; no other exception escapes, whatever the text.
    """
    with _guard(text, where):
        tree, prepared = _read(text, where, what="expression", names=names)
        return _Builder(prepared, names, where).expr(tree.body)


def parse_relation(text: str, names: Mapping[str, sp.Symbol], *, where: str = "") -> Formula:
    """Parse a relation (comparisons, chains, ``and``/``or``/``not``, interval membership) into a Formula.

    ``a < b <= c`` becomes ``And(a < b, b <= c)``; ``x in [a, b]`` becomes ``x >= a and x <= b``
    (``logic.between``) and ``x in (a, b)`` the same with strict inequalities.  A bare expression,
    without any comparison, is a ``ParseError``.
    """
    with _guard(text, where):
        tree, prepared = _read(text, where, what="relation", names=names)
        return _Builder(prepared, names, where).formula(tree.body)


def parse_assignment(text: str, *, where: str = "") -> tuple[str, str]:
    """Split ``QUANTITY=VALUE`` into the snake_case name and the (stripped, non-empty) value text."""
    _check_text(text, where, what="assignment")
    name, sep, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not sep:
        raise ParseError(f"expected QUANTITY=VALUE, got '{_show(text)}'", where=where,
                         hint="for example flops=989 TFLOP/s")
    if not name:
        raise ParseError(f"missing quantity name before '=' in '{_show(text)}'", where=where,
                         hint="for example flops=989 TFLOP/s")
    if not _QUANTITY_NAME.fullmatch(name):
        raise ParseError(f"'{_show(name)}' is not a quantity name", where=where,
                         hint="quantity names are snake_case: lower-case letters, digits and '_', like hbm_bandwidth")
    if not value:
        raise ParseError(f"missing value after '{name}='", where=where, hint="for example flops=989 TFLOP/s")
    if value.startswith("="):
        raise ParseError(f"'{_show(text)}' has '==' where one '=' is expected", where=where,
                         hint="write QUANTITY=VALUE with a single '='")
    return name, value


def is_bare_number(text: str) -> bool:
    """Whether ``text`` is a number with no unit (``6``, ``6e12``, ``1.5k``), as ``parse_value`` reads it: the one
    test of "a bare number" for files, tables and the command line."""
    match = _VALUE.fullmatch(text)
    return match is not None and not match["unit"].strip() and not match["cur"]


def parse_value(text: str, dimension: Dimension, *, where: str = "", quantity: str = "",
                si: bool = True, unit_hint: str | None = None) -> sp.Rational:
    """Parse ``NUMBER [UNIT]`` (or ``A/B [UNIT]``) into an exact rational in SI base units.

    ``"3.35 TB/s"`` is ``3350000000000``; ``"20 ms"`` is ``1/50``; ``"50%"`` is ``1/2``; ``"1M token/seq"``
    is ``1000000`` (k, M, G, T straight after the number multiply it).  ``"989 TFLOPs"`` reads as a rate
    when the quantity is one.  A bare number for a quantity with a unit is taken in SI base units when
    ``si`` (library code, files), and is a ``UnitError`` suggesting the unit otherwise (typed input).  A
    unit whose dimension is not ``dimension`` is a ``UnitError`` naming both dimensions (``quantity``
    names the value in that message).
    """
    _check_text(text, where, what="value")
    for position, char in enumerate(text, start=1):
        if not char.isprintable():
            raise ParseError(f"character '{_show(char)}' at position {position} is not allowed in '{_show(text)}'",
                             where=where, hint="a value is one line: a number and an optional unit")
    match = _VALUE.fullmatch(text)
    if match is None:
        raise ParseError(f"cannot read value '{_show(text)}'", where=where,
                         hint="write a number and an optional unit, like 3.35 TB/s, 80 GiB, 20 ms, 1/3600 USD/s or 50%")
    number = _decimal(match["num"].replace(",", ""), where)
    if match["mult"]:
        number *= _MULTIPLIERS[match["mult"]]
    if match["den"] is not None:
        den = _decimal(match["den"], where)
        if den == 0:
            raise ParseError(f"division by zero in value '{_show(text)}'", where=where, hint="check the denominator")
        number /= den
    if match["sign"] == "-":
        number = -number
    unit_text = match["unit"].strip()
    if unit_text.startswith(","):
        raise ParseError(f"cannot read value '{_show(text)}': a comma only groups thousands", where=where,
                         hint="write decimals with a point, like 1.5, and group thousands in threes, like 16,384")
    if match["cur"]:  # "$1.5/h", "$2.19/Mtok", "$4.6M": money as derive prints it, the dollar sign first
        if not match["mult"] and re.match(r"B(?![A-Za-z0-9_])", unit_text):  # "$1.2B": a billion dollars
            number *= 10**9
            unit_text = unit_text[1:].strip()
        if unit_text and not unit_text.startswith("/"):
            raise ParseError(f"cannot read value '{_show(text)}': after a leading $ only a per-unit may follow",
                             where=where, hint="write $1.5/h, $2.19/Mtok, or the number first: 1.5 USD/h")
        unit_text = "$" + unit_text
    if unit_text:
        if unit_text.startswith("/"):
            unit_text = "1" + unit_text  # "5 /s" is five per second
        try:
            unit = _read_unit(unit_text, where)
        except UnitError as exc:
            if not (dimension.is_dimensionless and exc.message.startswith("unknown unit")):
                raise
            # "8 chip", "64 experts": a count in words, for a quantity that is a plain number
            bare = _show(text[:match.start("unit")].strip())
            raise UnitError(exc.message, where=where, hint=f"{quantity or 'the value'} is a plain number: write "
                                                           f"{bare} alone, without '{_show(unit_text)}'") from None
        if unit.dimension != dimension and _is_rate_spelling(unit_text, unit) and \
                unit.dimension / Dimension.of(s=1) == dimension:
            unit = Unit(dimension, unit.scale, unit.text)  # "989 TFLOPs" for a FLOP/s quantity
        if unit.dimension != dimension:
            who = quantity or "the value"
            hint = ("give a bare number or a percentage" if dimension.is_dimensionless
                    else f"give {who} in a unit of {format_dimension(dimension)}")
            if unit_text.startswith("B") and "byte" not in dimension.as_dict():
                hint = "B is a byte; for a billion write G or e9, like 70G or 70e9"
            raise UnitError(
                f"unit '{_show(unit_text)}' is {_dimension_words(unit.dimension)} but {who} is "
                f"{_dimension_words(dimension)}",
                where=where, hint=hint,
            )
        number *= unit.scale
    elif not si and dimension.is_dimensionless and number != 0 and _scaled(unit_hint):
        # a plain number declared in %: "50" would be read as 50 (5,000 %), a factor the user never typed
        who = quantity or "the value"
        raise UnitError(f"'{_show(text)}' has no unit but {who} is given in {unit_hint}", where=where,
                        hint=f"write {_show(text.strip())} {unit_hint}, or the plain fraction with --si")
    elif not si and not dimension.is_dimensionless and number != 0:
        who = quantity or "the value"
        raise UnitError(
            f"'{_show(text)}' has no unit but {who} is {format_dimension(dimension)}",
            where=where,
            hint=f"write it with a unit, like {unit_example(text.strip(), number, dimension, unit_hint)} (or pass --si "
                 "to read bare numbers in SI base units)",
        )
    return sp.Rational(number.numerator, number.denominator)


def _scaled(unit_text: str | None) -> bool:
    """Whether a dimensionless quantity's declared unit scales its numbers (``%``: 1/100)."""
    try:
        return bool(unit_text) and parse_unit(unit_text).scale != 1
    except (DeriveError, ValueError, ArithmeticError, RecursionError):
        return False


def _read_unit(unit_text: str, where: str) -> Unit:
    try:
        return parse_unit(unit_text)
    except UnitError as exc:
        raise UnitError(_show(exc.message, limit=200), where=where, hint=exc.hint) from exc
    except DeriveError:
        raise
    except (ValueError, ArithmeticError, RecursionError) as exc:  # parse_unit is not ours; keep the contract
        raise UnitError(f"cannot read unit '{_show(unit_text)}'", where=where) from exc


def _is_rate_spelling(unit_text: str, unit: Unit) -> bool:
    """``TFLOPs``: a vendor's rate, FLOP/s, when written with a prefix (a plain ``FLOPs`` is a count)."""
    return any(prefix and word in RATE_SPELLINGS for prefix, word, e in unit_factors(unit_text) if e == 1)


def unit_example(typed: str, number: Fraction, dimension: Dimension, unit: str | None = None) -> str:
    """The bare number again, with a unit.  A small number (below 1,000) was most likely meant in the
    quantity's own unit (``3.35`` -> ``3.35 TB/s``); a large one in SI base units, so it is shown as that
    value with a prefix (``3.35e12`` -> ``3.35 TB/s``, never ``3.35e12 TB/s``)."""
    from derive.model.display import input_text

    si_unit = format_dimension(dimension)
    if unit and abs(number) < 1000:
        return f"{typed}{unit[1:]}" if unit.startswith("1/") else f"{typed} {unit}"  # 5/s, not "5 1/s"
    try:
        return input_text(number, si_unit)
    except DeriveError:
        return f"{typed} {si_unit}"


# Numbers with units inside expressions and relations ----------------------------------------------

DimensionLookup = Callable[[sp.Symbol], Dimension]

# a unit right after a number: words, '/', '·', '^', digits and parentheses, no spaces inside
_UNIT_CHARS = re.compile(r"[A-Za-zµ$%][A-Za-zµ$%0-9/·^()]*")
# a number with its thousands grouped as derive prints them ("2,400 seq") is one number where a unit follows it;
# without a unit its commas stay commas ("max(1,000)" reads as before)
_LITERAL = re.compile(rf"(?<![A-Za-z0-9_.])(?P<num>{_GROUPED_RE}|{_NUMBER_RE})(?P<mult>{_MULT_RE})?")
_PLAIN_LITERAL = re.compile(rf"(?<![A-Za-z0-9_.])(?P<num>{_NUMBER_RE})(?P<mult>{_MULT_RE})?")
_INTERVAL_WITH_UNIT = re.compile(
    rf"(?P<open>[\[(])\s*(?P<a>[+-]?\s*{_NUMBER_RE}(?:{_MULT_RE})?)\s*,\s*(?P<b>[+-]?\s*{_NUMBER_RE}(?:{_MULT_RE})?)"
    rf"\s*(?P<close>[\])])[ \t]*(?P<unit>(?!(?:and|or|not|in)\b)[A-Za-zµ$%][A-Za-zµ$%0-9/·^()]*)"
)  # (a word of the grammar after the bracket is no unit: "x in [1, 5] and y > 2")


# money as derive prints it, the dollar sign first: "$3/h" reads as "3 $/h", "$1.2B" as "1.2G $"
_DOLLAR_FIRST = re.compile(rf"\$\s*(?P<num>{_NUMBER_RE})(?P<mult>{_MULT_RE})?(?P<b>B(?![A-Za-z0-9_µ$%]))?")


@dataclass(frozen=True)
class _Literal:
    value: Fraction  # SI base units
    dimension: Dimension
    text: str


def _unit_at(text: str, start: int, names: Mapping[str, object], where: str = "") -> tuple[str, int] | None:
    """The longest unit string starting at ``start`` (after optional blanks) that the unit grammar
    reads and that names no quantity or function; (unit text, end) or None."""
    pos = start
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    m = _UNIT_CHARS.match(text, pos)
    if m is None:
        return None
    candidate = m.group(0)
    first = re.match(r"[A-Za-zµ$%]+", candidate)
    if first is not None and first.group(0) not in names and first.group(0) not in _FUNCTIONS \
            and first.group(0) not in ("and", "or", "not", "in", "if", "else", "is"):
        try:
            parse_unit(first.group(0))
        except UnitError as exc:
            if not exc.message.startswith("unknown unit"):
                raise  # a unit word with a prefix that cannot apply ("80 mb")
            word = first.group(0)
            close = difflib.get_close_matches(word, list(names), n=2, cutoff=0.75)
            raise UnitError(f"'{_show(word)}' after a number is neither a unit nor a quantity", where=where,
                            hint=(f"did you mean {', '.join(close)}? (write * between a number and a quantity)"
                                  if close else exc.hint)) from None
    for found in list(re.finditer(r"[A-Za-zµ$%]+", candidate))[1:]:  # a word the unit goes on with ("TB/ss")
        word = found.group(0)
        whole = re.match(r"[\wµ$%]+", text[m.start() + found.start():])  # "hbm" of "hbm_bandwidth" is not a word
        if whole is None or whole.group(0) != word or word in names or word in _FUNCTIONS \
                or word in ("and", "or", "not", "in", "if", "else", "is"):
            break  # the unit ends before it: "30 TB/batch" divides by the quantity
        try:
            parse_unit(word)
        except UnitError as exc:
            if not exc.message.startswith("unknown unit"):
                raise
            close = difflib.get_close_matches(word, list(names), n=2, cutoff=0.75)
            raise UnitError(f"'{_show(word)}' in '{_show(candidate)}' is neither a unit nor a quantity", where=where,
                            hint=f"did you mean {', '.join(close)}?" if close else exc.hint) from None
    for end in range(len(candidate), 0, -1):
        piece = candidate[:end]
        if piece.count("(") != piece.count(")") or piece[-1] in "/·^(":
            continue
        if end < len(candidate) and (candidate[end].isalpha() or candidate[end] in "µ$%") and piece[-1].isalpha():
            continue  # never split a word: "2 flops" is not "2 flop" and "s"
        words = re.findall(r"[A-Za-zµ$%]+", piece)
        calls = candidate[end:end + 1] == "(" or text[pos + end:].lstrip().startswith("(")
        # "min" is a unit (minutes) unless it is called: "20 min" but "min(a, b)"
        if any(w in names or (w in _FUNCTIONS and calls) or w in ("and", "or", "not", "in") for w in words):
            continue
        try:
            parse_unit(piece)
        except (DeriveError, ValueError, ArithmeticError, RecursionError):
            continue
        return piece, pos + end
    return None


def _substitute_literals(text: str, names: Mapping[str, object], where: str
                         ) -> tuple[str, dict[str, _Literal]]:
    """Replace every ``NUMBER[k|M|G|T] UNIT`` in ``text`` by a fresh placeholder name; a number with a
    multiplier but no unit becomes its plain digits.  ``[128k, 1M] token/seq`` gives its unit to both ends."""
    _check_text(text, where, what="expression")
    text = _DOLLAR_FIRST.sub(lambda m: f"{m['num']}{m['mult'] or ('G' if m['b'] else '')} $", text)
    text = _INTERVAL_WITH_UNIT.sub(
        lambda m: f"{m['open']}{m['a']} {m['unit']}, {m['b']} {m['unit']}{m['close']}", text)
    tag = "_u"
    while tag in text:
        tag += "u"
    literals: dict[str, _Literal] = {}
    out: list[str] = []
    pos = 0
    for m in _LITERAL.finditer(text):
        if m.start() < pos:
            continue
        unit = _unit_at(text, m.end(), names, where)
        if unit is None and "," in m["num"]:  # no unit: the first digits alone, the rest read on as before
            m = _PLAIN_LITERAL.match(text, m.start())
            unit = _unit_at(text, m.end(), names, where)
        number = _decimal(m["num"].replace(",", ""), where)
        if m["mult"]:
            number *= _MULTIPLIERS[m["mult"]]
        out.append(text[pos:m.start()])
        if unit is None:
            # a plain number stays as written; "128k" becomes its digits
            out.append(f"({number.numerator}/{number.denominator})" if m["mult"] else m.group(0))
            pos = m.end()
            continue
        unit_text, end = unit
        parsed = _read_unit(unit_text.replace("·", "*"), where)
        dim = parsed.dimension
        if _is_rate_spelling(unit_text, parsed):
            dim = dim * Dimension.of(s=-1)  # "900 TFLOPs" in a relation: vendors mean FLOP/s
        name = f"{tag}{len(literals)}"
        literals[name] = _Literal(number * parsed.scale, dim, text[m.start():end])
        out.append(f" {name} ")
        pos = end
    out.append(text[pos:])
    return "".join(out), literals


def parse_quantity_expression(text: str, names: Mapping[str, sp.Symbol], lookup: DimensionLookup, *,
                              where: str = "") -> tuple[sp.Expr, Dimension]:
    """An expression that may carry units on its numbers (``hbm_bandwidth * 2 ms``): the exact expression
    in SI base units and its dimension, dimension-checked (``log(flops)`` is refused)."""
    from derive.model.dimensions import dimension_of

    with _guard(text, where):
        rewritten, literals = _substitute_literals(text, names, where)
        with _literal_names(literals):
            placeholders = {n: sp.Symbol(n) for n in literals}
            expr = parse_expression(rewritten, {**names, **placeholders}, where=where)
            dim = dimension_of(expr, _lookup_with(lookup, literals), where=where)
            value = expr.xreplace({placeholders[n]: _rational(v.value) for n, v in literals.items()})
            _check_defined(value, text, where)
            return value, dim


def parse_quantity_relation(text: str, names: Mapping[str, sp.Symbol], lookup: DimensionLookup, *,
                            where: str = "", si: bool = False) -> Formula:
    """A relation whose numbers may carry units (``hbm_bandwidth >= 30 TB/s``, ``context in [128k, 1M]
    token/seq``), dimension-checked like an expression: both sides of every comparison must have one
    dimension (``flops > hbm_bandwidth`` is refused).  A bare nonzero number compared with a quantity
    that has a unit is refused, with the unit suggested, unless ``si`` (then it is in SI base units)."""
    from derive.model.dimensions import dimension_of

    with _guard(text, where), _literal_names(_substitute_literals(text, names, where)[1]):
        rewritten, literals = _substitute_literals(text, names, where)
        placeholders = {n: sp.Symbol(n) for n in literals}
        formula = parse_relation(rewritten, {**names, **placeholders}, where=where)
        full_lookup = _lookup_with(lookup, literals)
        for rel in _relations_of(formula):
            left, right = rel.lhs, rel.rhs
            ldim = dimension_of(left, full_lookup, where=where)
            rdim = dimension_of(right, full_lookup, where=where)
            if ldim == rdim or left == 0 or right == 0:
                continue
            for bare, other, odim in ((left, right, rdim), (right, left, ldim)):
                if bare.is_number and not odim.is_dimensionless:
                    if si:
                        break  # a bare number in SI base units of the other side
                    shown = _show(str(other.xreplace(_names_of(literals))))
                    raise UnitError(
                        f"{_number_words(bare)} has no unit but {shown} is {format_dimension(odim)}", where=where,
                        hint=f"write the unit, like {_number_words(bare)} {format_dimension(odim)} (or pass --si to "
                             "read bare numbers in SI base units)")
            else:
                raise DimensionError(
                    f"the sides of '{_show(text)}' differ: {_dimension_words(ldim)} vs {_dimension_words(rdim)}",
                    where=where, hint="compare quantities of one dimension; numbers take units, like 30 TB/s")
        out = formula.map_exprs(lambda e: e.xreplace({placeholders[n]: _rational(v.value)
                                                       for n, v in literals.items()}))
        for e in out.exprs():
            _check_defined(e, text, where)
        if not out.free_symbols():
            raise ParseError(f"'{_show(text)}' names no quantity, so it constrains nothing", where=where,
                             hint="an assumption relates quantities, like hbm_bandwidth >= 30 TB/s")
        _check_nonempty(out, text, where)
        return out


def _check_nonempty(formula: Formula, text: str, where: str) -> None:
    """Refuse bounds that leave a quantity no value (``context in [1M, 128k] token/seq``, ``x > 5 and x < 3``):
    such an assumption contradicts itself, and every claim that used it would read ``inconsistent``."""
    if isinstance(formula, Not) or isinstance(formula, Or):
        return  # a false branch of an 'or' (or under 'not') is not a contradiction of the whole
    if not isinstance(formula, And):
        return
    lows: dict[sp.Expr, tuple[sp.Expr, bool]] = {}
    highs: dict[sp.Expr, tuple[sp.Expr, bool]] = {}
    for a in formula.args:
        if isinstance(a, And):
            _check_nonempty(a, text, where)
        if not (isinstance(a, Rel) and a.rhs.is_number and a.rhs.is_real and not a.lhs.is_number):
            continue
        strict = a.op in (">", "<")
        if a.op in (">=", ">"):
            old = lows.get(a.lhs)
            if old is None or (a.rhs - old[0]).is_positive or (a.rhs == old[0] and strict):
                lows[a.lhs] = (a.rhs, strict)
        elif a.op in ("<=", "<"):
            old = highs.get(a.lhs)
            if old is None or (old[0] - a.rhs).is_positive or (a.rhs == old[0] and strict):
                highs[a.lhs] = (a.rhs, strict)
    for lhs in lows.keys() & highs.keys():
        (low, low_strict), (high, high_strict) = lows[lhs], highs[lhs]
        if (low - high).is_positive or (low == high and (low_strict or high_strict)):
            raise ParseError(f"'{_show(text)}' leaves {_show(str(lhs))} no value: its lower bound is not below its "
                             "upper bound", where=where, hint="write the interval low end first, like [128k, 1M]")


def _number_words(x: sp.Expr) -> str:
    from derive.model.display import format_number

    return format_number(x)


@contextmanager
def _literal_names(literals: Mapping[str, _Literal]) -> Iterator[None]:
    """Errors raised while reading a rewritten text name the user's ``30 TB/s``, never a placeholder."""
    try:
        yield
    except DeriveError as err:
        for name in sorted(literals, key=len, reverse=True):
            err.message = err.message.replace(name, literals[name].text)
        err.args = (err.one_line(),)
        raise


def _check_defined(e: sp.Expr, text: str, where: str) -> None:
    if e.has(sp.zoo, sp.oo, sp.S.NegativeInfinity, sp.nan):
        raise ParseError(f"'{_show(text)}' is undefined (division by zero)", where=where,
                         hint="check denominators")


def _lookup_with(lookup: DimensionLookup, literals: Mapping[str, _Literal]) -> DimensionLookup:
    def find(sym: sp.Symbol) -> Dimension:
        lit = literals.get(str(sym))
        return lit.dimension if lit is not None else lookup(sym)
    return find


def _names_of(literals: Mapping[str, _Literal]) -> dict[sp.Symbol, sp.Symbol]:
    return {sp.Symbol(n): sp.Symbol(v.text) for n, v in literals.items()}


def _rational(x: Fraction) -> sp.Rational:
    return sp.Rational(x.numerator, x.denominator)


def _relations_of(formula: Formula) -> list[Rel]:
    if isinstance(formula, Rel):
        return [formula]
    if isinstance(formula, Not):
        return _relations_of(formula.arg)
    out: list[Rel] = []
    if isinstance(formula, (And, Or)):
        for child in formula.args:
            out += _relations_of(child)
    return out


# Reading text -----------------------------------------------------------------------------------

@contextmanager
def _guard(text: object, where: str) -> Iterator[None]:
    """Turn resource errors that should never happen (but could, inside sympy or ast) into ParseError."""
    try:
        yield
    except DeriveError:
        raise
    except (RecursionError, MemoryError, OverflowError, ArithmeticError, ValueError) as exc:
        shown = _show(text) if isinstance(text, str) else "?"
        raise ParseError(f"cannot read '{shown}' ({type(exc).__name__})", where=where,
                         hint="simplify the expression") from exc


def _check_text(text: object, where: str, *, what: str) -> None:
    if not isinstance(text, str):
        raise ParseError(f"the {what} must be text, not {type(text).__name__}", where=where)
    if len(text) > MAX_TEXT_LENGTH:
        raise ParseError(f"the {what} is too long ({len(text)} characters, at most {MAX_TEXT_LENGTH})",
                         where=where, hint="split it into named definitions")
    if not text.strip():
        raise ParseError(f"empty {what}", where=where, hint=_EXPR_HINT if what == "expression" else None)


def _read(text: str, where: str, *, what: str,
          names: Mapping[str, object] | None = None) -> tuple[ast.Expression, str]:
    """Check the characters and bracket depth, parse, then bound the size and depth of the tree."""
    _check_text(text, where, what=what)
    prepared = _TYPOGRAPHY_RE.sub(lambda m: _TYPOGRAPHY[m.group(0)], text)
    for position, char in enumerate(prepared, start=1):
        if char not in _ALLOWED_CHARS:
            shown = char if char.isprintable() else repr(char)[1:-1]
            raise ParseError(f"character '{shown}' at position {position} is not allowed in '{_show(text)}'",
                             where=where, hint=_CHAR_HINTS.get(char, _EXPR_HINT))
    prepared = _KEYWORD_RE.sub(lambda m: m.group(1) + (_KW_MARK if m.group(1) in (names or {}) else ""),
                               prepared.replace("^", "**").strip())
    depth = 0
    for char in prepared:
        depth += char in "(["
        depth -= char in ")]"
        if depth > MAX_DEPTH:
            raise ParseError(f"brackets nested more than {MAX_DEPTH} deep in '{_show(text)}'", where=where,
                             hint="split it into named definitions")
    try:
        with warnings.catch_warnings():
            # "1and x" or "1(2)" only warn in Python; here they are errors, and the library never prints.
            warnings.simplefilter("ignore")
            warnings.simplefilter("error", SyntaxWarning)
            tree = ast.parse(prepared, mode="eval")
    except SyntaxError as exc:
        raise ParseError(f"cannot read {what} '{_show(text)}': {_syntax_message(exc, prepared)}",
                         where=where, hint=_syntax_hint(prepared, what, exc)) from None
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        raise ParseError(f"cannot read {what} '{_show(text)}' ({type(exc).__name__})", where=where,
                         hint="simplify it") from None
    _check_size(tree, text, where)
    return tree, prepared


def _syntax_message(exc: SyntaxError, prepared: str) -> str:
    lines = (exc.msg or "").strip().splitlines()
    message = lines[0] if lines else "invalid syntax"
    if exc.offset and exc.lineno == 1 and 0 < exc.offset <= len(prepared) + 1:
        near = prepared[exc.offset - 1: exc.offset + 9]
        if near.strip():
            message += f" near '{_show(near)}'"
    return message


def _syntax_hint(prepared: str, what: str, exc: SyntaxError) -> str:
    if "decimal literal" in (exc.msg or ""):
        return "put a space between a number and a word, like '1 and x'"
    if re.search(r"(?<![<>=!])=(?!=)", prepared):
        return "write == for equality" if what != "expression" else "an expression has no '='; for a value use --set"
    return _REL_HINT if what == "relation" else _EXPR_HINT


def _check_size(tree: ast.AST, text: str, where: str) -> None:
    """Count nodes and measure depth iteratively, so that no deep tree reaches a recursive walk."""
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    count = 0
    while stack:
        node, depth = stack.pop()
        if isinstance(node, _UNCOUNTED):
            continue
        count += 1
        if count > MAX_NODES:
            raise ParseError(f"'{_show(text)}' is too large (more than {MAX_NODES} parts)", where=where,
                             hint="split it into named definitions")
        if depth > MAX_DEPTH:
            raise ParseError(f"'{_show(text)}' is nested too deeply (more than {MAX_DEPTH} levels)", where=where,
                             hint="split it into named definitions")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def _decimal(literal: str, where: str) -> Fraction:
    """The exact value of a decimal literal (``0.1`` is 1/10), with digits and exponent bounded first."""
    match = _DECIMAL.fullmatch(literal)
    if match is None:
        raise ParseError(f"'{_show(literal)}' is not a decimal number", where=where, hint=_NUMBER_HINT)
    whole = match["int"].replace("_", "")
    frac = (match["frac"] or "").replace("_", "")
    if not whole and not frac:
        raise ParseError(f"'{_show(literal)}' is not a decimal number", where=where, hint=_NUMBER_HINT)
    if len(whole) + len(frac) > MAX_LITERAL_DIGITS:
        raise ParseError(f"number '{_show(literal)}' has more than {MAX_LITERAL_DIGITS} digits", where=where,
                         hint="use scientific notation, like 1e12")
    exponent = 0
    if match["exp"] is not None:
        exp_text = match["exp"].replace("_", "")
        magnitude = exp_text.lstrip("+-").lstrip("0")
        if len(magnitude) > 4 or int(magnitude or "0") > MAX_LITERAL_EXPONENT:
            raise ParseError(f"exponent of number '{_show(literal)}' is beyond ±{MAX_LITERAL_EXPONENT}", where=where,
                             hint="numbers must stay within 1e-400 .. 1e400")
        exponent = int(exp_text)
    mantissa = int(whole + frac or "0")
    return Fraction(mantissa) * Fraction(10) ** (exponent - len(frac))


# Building sympy objects -------------------------------------------------------------------------

class _Builder:
    """Walk an already size-checked tree, turning each allowed node into a sympy object."""

    def __init__(self, text: str, names: Mapping[str, sp.Symbol], where: str) -> None:
        self.text, self.names, self.where = text, names, where

    def segment(self, node: ast.AST) -> str:
        try:
            seg = ast.get_source_segment(self.text, node)
        except (ValueError, IndexError, TypeError):  # positions not available
            seg = None
        return _show(seg.replace(_KW_MARK, "") if seg is not None else type(node).__name__)

    def fail(self, message: str, hint: str | None = _EXPR_HINT) -> ParseError:
        return ParseError(message, where=self.where, hint=hint)

    # relations ----------------------------------------------------------------------------------
    def formula(self, node: ast.AST) -> Formula:
        if isinstance(node, ast.BoolOp):
            parts = tuple(self.formula(value) for value in node.values)
            return And(parts) if isinstance(node.op, ast.And) else Or(parts)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return Not(self.formula(node.operand))
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            raise self.fail(f"'{self.segment(node)}' is not a relation", hint=_REL_HINT)
        self.expr(node)  # report what is wrong inside it first (unknown names, bad syntax)
        raise self.fail(f"'{self.segment(node)}' is an expression, not a relation", hint=_REL_HINT)

    def compare(self, node: ast.Compare) -> Formula:
        ops = node.ops
        if any(isinstance(op, (ast.In, ast.NotIn)) for op in ops):
            if len(ops) != 1:
                raise self.fail(f"interval membership cannot be chained in '{self.segment(node)}'",
                                hint="write 'x in [a, b] and ...'")
            return self.membership(node.left, node.comparators[0], negated=isinstance(ops[0], ast.NotIn))
        for op in ops:
            if isinstance(op, (ast.Is, ast.IsNot)):
                raise self.fail(f"'is' is not a comparison in '{self.segment(node)}'", hint="write == or !=")
        sides = [self.expr(side) for side in (node.left, *node.comparators)]
        rels = tuple(Rel(a, _COMPARISONS[type(op)], b) for a, op, b in zip(sides[:-1], ops, sides[1:], strict=True))
        return rels[0] if len(rels) == 1 else And(rels)

    def membership(self, left: ast.expr, interval: ast.expr, *, negated: bool) -> Formula:
        interval_hint = "write x in [a, b] (closed) or x in (a, b) (open)"
        if not isinstance(interval, (ast.List, ast.Tuple)) or len(interval.elts) != 2:
            raise self.fail(f"'{self.segment(interval)}' is not an interval", hint=interval_hint)
        x = self.expr(left)
        low, high = (self.expr(end) for end in interval.elts)
        if isinstance(interval, ast.List):
            inside = between(x, low, high)
        else:
            inside = And((Rel(x, ">", low), Rel(x, "<", high)))
        return Not(inside) if negated else inside

    # expressions --------------------------------------------------------------------------------
    def expr(self, node: ast.AST, *, numeric: bool = False) -> sp.Expr:
        """Build ``node``; ``numeric`` (inside an exponent) refuses names."""
        if isinstance(node, ast.Constant):
            return self.number(node)
        if isinstance(node, ast.Name):
            return self.name(node, numeric=numeric)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.UAdd):
                return self.expr(node.operand, numeric=numeric)
            if isinstance(node.op, ast.USub):
                operand = self.expr(node.operand, numeric=numeric)
                return self.sympy(node, lambda: -operand)
            if isinstance(node.op, ast.Not):
                raise self.fail(f"'not' applies to relations, not to '{self.segment(node.operand)}'", hint=_REL_HINT)
            raise self.fail(f"operator '~' is not allowed in '{self.segment(node)}'")
        if isinstance(node, ast.BinOp):
            return self.binop(node, numeric=numeric)
        if isinstance(node, ast.Call):
            return self.call(node, numeric=numeric)
        if isinstance(node, (ast.Compare, ast.BoolOp)):
            raise self.fail(f"a relation ('{self.segment(node)}') cannot be part of an arithmetic expression",
                            hint="relations belong in --assume; an expression computes a number")
        words = _NODE_WORDS.get(type(node), type(node).__name__)
        segment = self.segment(node)
        grouped = re.search(r"(?<![\w.])[0-9]{1,3}(?:,[0-9]{3})+(?![\w.])", segment)
        if isinstance(node, ast.Tuple) and grouped:  # "batch >= 1,000": derive prints thousands so, with a unit
            raise self.fail(f"'{grouped.group(0)}' without a unit reads as a list, not one number with its thousands "
                            f"grouped (in '{segment}')",
                            hint="give the number its unit (2,400 seq), or write it without commas (2400)")
        raise self.fail(f"{words} not allowed in '{segment}'")

    def number(self, node: ast.Constant) -> sp.Expr:
        value = node.value
        if isinstance(value, bool) or value is None or value is Ellipsis:
            raise self.fail(f"'{self.segment(node)}' is not a number", hint=_NUMBER_HINT)
        if isinstance(value, complex):
            raise self.fail(f"complex number '{self.segment(node)}' is not allowed",
                            hint="only real numbers are allowed")
        if not isinstance(value, (int, float)):
            raise self.fail(f"{type(value).__name__} literal '{self.segment(node)}' is not allowed", hint=_NUMBER_HINT)
        literal = ast.get_source_segment(self.text, node)
        if literal is None:
            raise self.fail("cannot locate a number in the text", hint=_NUMBER_HINT)
        exact = _decimal(literal, self.where)
        return sp.Rational(exact.numerator, exact.denominator)

    def name(self, node: ast.Name, *, numeric: bool) -> sp.Expr:
        if numeric:
            raise self.fail(f"exponent must be a number, not '{self.segment(node)}'",
                            hint="symbolic exponents are not supported; write exp(y*log(x)) for x**y")
        ident = node.id.removesuffix(_KW_MARK)
        if ident in self.names:
            return self.names[ident]
        if ident in _FUNCTIONS:
            raise self.fail(f"function '{ident}' must be called, like {ident}(x)")
        raise UnknownNameError("quantity", ident, self.names.keys(), where=self.where)

    def binop(self, node: ast.BinOp, *, numeric: bool) -> sp.Expr:
        if isinstance(node.op, ast.Pow):
            base = self.expr(node.left, numeric=numeric)
            exponent = self.exponent(node.right)
            return self.power(node, base, exponent)
        build = _BINOPS.get(type(node.op))
        if build is None:
            symbol = _OPERATOR_SYMBOLS.get(type(node.op), type(node.op).__name__)
            raise self.fail(f"operator '{symbol}' is not allowed in '{self.segment(node)}'")
        left = self.expr(node.left, numeric=numeric)
        right = self.expr(node.right, numeric=numeric)
        return self.sympy(node, lambda: build(left, right))

    def exponent(self, node: ast.expr) -> sp.Rational:
        value = self.expr(node, numeric=True)
        if not isinstance(value, sp.Rational):
            raise self.fail(f"exponent '{self.segment(node)}' is not a rational number",
                            hint="exponents must be fractions like 2, -1 or 1/2")
        if abs(value) > MAX_EXPONENT or value.q > MAX_EXPONENT:
            raise self.fail(f"exponent '{self.segment(node)}' is too large",
                            hint=f"exponents are limited to ±{MAX_EXPONENT} with denominators up to {MAX_EXPONENT}")
        return value

    def power(self, node: ast.AST, base: sp.Expr, exponent: sp.Rational) -> sp.Expr:
        """``base**exponent``, refused before computing when its numbers would be too large."""
        if exponent.q > 1 and _max_digits(base) * exponent.q > MAX_ROOT_SIZE:
            raise self.fail(f"root of order {exponent.q} of a number this large in '{self.segment(node)}'",
                            hint=f"digits of the number times the order of the root must stay within {MAX_ROOT_SIZE}")
        if _max_log10(base) * abs(exponent) >= MAX_NUMBER_DIGITS:
            raise self.fail(f"'{self.segment(node)}' is too large (more than {MAX_NUMBER_DIGITS} digits)",
                            hint="use smaller numbers")
        return self.sympy(node, lambda: base**exponent)

    def call(self, node: ast.Call, *, numeric: bool) -> sp.Expr:
        func = node.func
        if not isinstance(func, ast.Name):
            raise self.fail(f"only the functions abs, ceil, exp, floor, log, max, min, sqrt can be called, not "
                            f"'{self.segment(func)}'")
        if func.id not in _FUNCTIONS:
            if func.id in self.names:
                raise self.fail(f"quantity '{func.id}' is not a function", hint="write * for multiplication")
            close = difflib.get_close_matches(func.id, list(_FUNCTIONS), n=2, cutoff=0.6)
            hint = ((f"did you mean {', '.join(close)}?" if close else "")
                    or "allowed: abs, ceil, exp, floor, log, max, min, sqrt")
            raise self.fail(f"function '{func.id}' is not allowed", hint=hint)
        if node.keywords:
            raise self.fail(f"keyword arguments are not allowed in '{self.segment(node)}'")
        if any(isinstance(arg, ast.Starred) for arg in node.args):
            raise self.fail(f"starred arguments are not allowed in '{self.segment(node)}'")
        build, least, most = _FUNCTIONS[func.id]
        count = len(node.args)
        if count < least or (most is not None and count > most):
            wanted = f"{least}" if least == most else f"at least {least}"
            raise self.fail(f"{func.id} takes {wanted} argument{'s' if wanted != '1' else ''}, "
                            f"got {count} in '{self.segment(node)}'")
        args = [self.expr(arg, numeric=numeric) for arg in node.args]
        if func.id == "sqrt":
            return self.power(node, args[0], sp.Rational(1, 2))
        if func.id == "exp" and _max_digits(args[0]) > MAX_EXP_DIGITS:
            raise self.fail(f"exp of a number with more than {MAX_EXP_DIGITS} digits in '{self.segment(node)}'",
                            hint="use smaller numbers")
        if func.id in ("ceil", "floor"):
            return self.rounded(node, build, args[0])
        return self.sympy(node, lambda: build(*args))

    def rounded(self, node: ast.AST, build: Callable[[sp.Expr], sp.Expr], arg: sp.Expr) -> sp.Expr:
        """``ceil``/``floor`` of ``arg``; an irrational number past the kernel's ``ROUNDING_DIGITS`` is refused
        before sympy rounds it (the integer part of exp(10**7) takes millions of digits), as is one it leaves
        unrounded."""
        from derive.kernel.logic import ROUNDING_DIGITS, beyond_rounding

        result = None if beyond_rounding(arg) else self.sympy(node, lambda: build(arg))
        if result is None or (not result.free_symbols and isinstance(result, (sp.floor, sp.ceiling))):
            raise self.fail(f"'{self.segment(node)}' rounds a number too large to round exactly (beyond "
                            f"{ROUNDING_DIGITS} digits)", hint="use smaller numbers")
        return result

    def sympy(self, node: ast.AST, build: Callable[[], sp.Expr]) -> sp.Expr:
        """Run one sympy construction, then refuse undefined, non-real or oversized results."""
        try:
            result = build()
        except DeriveError:
            raise
        except Exception as exc:  # sympy may raise anything; the contract is ParseError only
            raise self.fail(f"cannot evaluate '{self.segment(node)}' ({type(exc).__name__})",
                            hint="simplify the expression") from exc
        if not isinstance(result, sp.Expr):
            raise self.fail(f"'{self.segment(node)}' is not a number")
        if result.has(sp.zoo, sp.oo, sp.S.NegativeInfinity, sp.nan):
            raise self.fail(f"'{self.segment(node)}' is undefined (division by zero or log of zero)",
                            hint="check denominators and arguments of log")
        if not result.free_symbols and result.is_extended_real is False:
            raise self.fail(f"'{self.segment(node)}' is not a real number",
                            hint="roots and logs of negative numbers are not allowed")
        if _max_digits(result) > MAX_NUMBER_DIGITS:
            raise self.fail(f"'{self.segment(node)}' is too large (more than {MAX_NUMBER_DIGITS} digits)",
                            hint="use smaller numbers")
        for power in result.atoms(sp.Pow):
            exp = power.exp
            if isinstance(exp, sp.Rational) and (abs(exp.p) > MAX_SYMBOL_POWER or exp.q > MAX_SYMBOL_POWER):
                raise self.fail(f"power in '{self.segment(node)}' is too large (beyond {MAX_SYMBOL_POWER})",
                                hint="use smaller exponents")
        return result


def _max_digits(expr: sp.Expr) -> int:
    """Largest number of decimal digits among the numerators and denominators of ``expr``'s rationals."""
    return max((_digits(int(part)) for number in expr.atoms(sp.Rational) for part in (number.p, number.q)), default=0)


def _max_log10(expr: sp.Expr) -> float:
    """Largest log10 among the (nonzero) numerators and denominators of ``expr``'s rationals."""
    parts = (abs(int(part)) for number in expr.atoms(sp.Rational) for part in (number.p, number.q))
    return max((math.log10(part) for part in parts if part), default=0.0)


def _digits(n: int) -> int:
    bits = abs(n).bit_length()
    if bits > 10_000:  # beyond any limit here; avoid converting a huge integer to text
        return math.floor(bits * _LOG10_2)
    return len(str(abs(n)))


def _dimension_words(dim: Dimension) -> str:
    return "dimensionless" if dim.is_dimensionless else format_dimension(dim)


def _show(text: str, limit: int = 60) -> str:
    """User text fit for a one-line message: control characters escaped, long text cut."""
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[: limit + 1])
    shown = shown.replace("\n", " ")
    return shown if len(text) <= limit else shown[: limit - 3] + "..."
