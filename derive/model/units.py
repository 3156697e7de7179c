"""A small dimension system and a parser for unit strings.

Dimensions are products of powers of a few base dimensions (FLOP, byte, second, token, sequence,
parameter, dollar, joule).  Counting units such as chips, layers or experts are dimensionless, unless a
library declares one as a dimension of its own (``declare_count_dimension("prefill_chip", ...)``): then
a quantity per prefill chip and one per decode chip cannot be added by mistake.  A ``Unit`` is a
dimension with a scale to the base units (``TB/s`` is ``byte/s`` times 10**12).

The parser is a hand-written recursive descent over a fixed vocabulary: no ``eval``, no sympy
parsing.  Decimal prefixes (k, M, G, T, P, E; m, u, n for small) and binary ones (Ki, Mi, Gi, Ti)
apply to every base unit; ``B`` is a byte and ``b`` a bit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from derive.errors import DeriveError, UnitError

BASE_DIMENSIONS: tuple[str, ...] = ("FLOP", "byte", "s", "token", "seq", "param", "USD", "J")
# Counting dimensions libraries declared (word -> hint), each its own base dimension.  Only ever added to,
# never changed: a unit string that parsed keeps its meaning, so ``parse_unit``'s cache stays right.
_DECLARED: dict[str, str] = {}


def base_dimensions() -> tuple[str, ...]:
    """The engine's base dimensions, then the declared counting dimensions in alphabetical order (not the
    order of declaration, which depends on which library a process imported first)."""
    return BASE_DIMENSIONS + tuple(sorted(_DECLARED))


def declared_count_dimensions() -> dict[str, str]:
    """The counting dimensions declared so far, each with its hint, in alphabetical order."""
    return {name: _DECLARED[name] for name in sorted(_DECLARED)}


@dataclass(frozen=True, order=True)
class Dimension:
    """Exponents of the base dimensions, stored sorted so equal dimensions compare equal."""

    powers: tuple[tuple[str, Fraction], ...] = ()

    @staticmethod
    def of(**powers: int | Fraction) -> Dimension:
        return Dimension._make({k: Fraction(v) for k, v in powers.items()})

    @staticmethod
    def _make(powers: dict[str, Fraction]) -> Dimension:
        for name in powers:
            if name not in BASE_DIMENSIONS and name not in _DECLARED:
                raise UnitError(f"unknown base dimension '{name}'")
        return Dimension(tuple(sorted((k, v) for k, v in powers.items() if v != 0)))

    def as_dict(self) -> dict[str, Fraction]:
        return dict(self.powers)

    def __mul__(self, other: Dimension) -> Dimension:
        out = self.as_dict()
        for k, v in other.powers:
            out[k] = out.get(k, Fraction(0)) + v
        return Dimension._make(out)

    def __truediv__(self, other: Dimension) -> Dimension:
        return self * other ** -1

    def __pow__(self, exponent: int | Fraction) -> Dimension:
        e = Fraction(exponent)
        return Dimension._make({k: v * e for k, v in self.powers})

    @property
    def is_dimensionless(self) -> bool:
        return not self.powers

    def __str__(self) -> str:
        return format_dimension(self)


DIMENSIONLESS = Dimension()


def format_dimension(dim: Dimension) -> str:
    """``byte/s``, ``FLOP/(param·token)``, ``1`` for dimensionless.  Order follows ``base_dimensions()``:
    BASE_DIMENSIONS, then the declared counts alphabetically."""
    if dim.powers == (("J", Fraction(1)), ("s", Fraction(-1))):
        return "W"  # power reads in watts, as spec sheets give it
    order = {name: i for i, name in enumerate(base_dimensions())}
    num, den = [], []
    for name, p in sorted(dim.powers, key=lambda kv: order[kv[0]]):
        target = num if p > 0 else den
        mag = abs(p)
        target.append(name if mag == 1 else f"{name}^{mag}")
    top = "·".join(num) or "1"
    if not den:
        return top
    bottom = den[0] if len(den) == 1 else "(" + "·".join(den) + ")"
    return f"{top}/{bottom}"


@dataclass(frozen=True)
class Unit:
    """A dimension and the factor that converts a value in this unit to base units."""

    dimension: Dimension
    scale: Fraction = Fraction(1)
    text: str = ""

    def __mul__(self, other: Unit) -> Unit:
        return Unit(self.dimension * other.dimension, self.scale * other.scale)

    def __truediv__(self, other: Unit) -> Unit:
        return Unit(self.dimension / other.dimension, self.scale / other.scale)

    def __pow__(self, e: int) -> Unit:
        return Unit(self.dimension**e, self.scale**e)


# name -> (dimension, scale).  Aliases are listed explicitly so that nothing is guessed.
_BASE_UNITS: dict[str, tuple[Dimension, Fraction]] = {}


def _add(names: tuple[str, ...], dim: Dimension, scale: Fraction | int = 1) -> None:
    for n in names:
        _BASE_UNITS[n] = (dim, Fraction(scale))


_add(("FLOP", "FLOPs", "flop", "flops"), Dimension.of(FLOP=1))
_add(("B", "byte", "bytes"), Dimension.of(byte=1))
_add(("b", "bit", "bits"), Dimension.of(byte=1), Fraction(1, 8))
_add(("s", "sec", "second", "seconds"), Dimension.of(s=1))
_add(("min", "minute", "minutes"), Dimension.of(s=1), 60)
_add(("h", "hr", "hour", "hours"), Dimension.of(s=1), 3600)
_add(("day", "days"), Dimension.of(s=1), 86400)
_add(("token", "tokens", "tok"), Dimension.of(token=1))
_add(("seq", "sequence", "sequences"), Dimension.of(seq=1))
_add(("param", "params", "parameter", "parameters"), Dimension.of(param=1))
_add(("USD", "$", "dollar", "dollars"), Dimension.of(USD=1))
# energy and power, for a chip's rated power and tokens per joule
_add(("J", "joule", "joules"), Dimension.of(J=1))
_add(("W", "watt", "watts"), Dimension.of(J=1, s=-1))
_add(("1",), DIMENSIONLESS)
_add(("%", "percent"), DIMENSIONLESS, Fraction(1, 100))
# FLOPS as a rate, as spec sheets write it ("989 TFLOPS"); Bps/bps as vendors write rates ("900 GBps").
_add(("FLOPS",), Dimension.of(FLOP=1, s=-1))
_add(("Bps",), Dimension.of(byte=1, s=-1))
_add(("bps",), Dimension.of(byte=1, s=-1), Fraction(1, 8))

_PREFIXES: dict[str, Fraction] = {
    "k": Fraction(10**3), "K": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9),
    "T": Fraction(10**12), "P": Fraction(10**15), "E": Fraction(10**18),
    "m": Fraction(1, 10**3), "u": Fraction(1, 10**6), "µ": Fraction(1, 10**6), "n": Fraction(1, 10**9),
    "p": Fraction(1, 10**12),
    "Ki": Fraction(2**10), "Mi": Fraction(2**20), "Gi": Fraction(2**30), "Ti": Fraction(2**40),
}
# Prefixes are not applied to these (``h`` with ``m`` would read as milli-hour, "$" has no prefixes).
_NO_PREFIX = {"1", "%", "percent", "$", "min", "h", "hr", "day", "days", "minute", "minutes", "hour", "hours"}
# Sub-unit prefixes only make sense on time: ``80 mb`` is a typo for 80 Mb, not 80 millibits.
_SUBUNIT_PREFIXES = {"m", "u", "µ", "n", "p"}
_TIME_WORDS = {"s", "sec", "second", "seconds"}


Factor = tuple[str, str, int]  # (prefix, unit word, exponent): "TB/s" -> [("T", "B", 1), ("", "s", -1)]


def _split_word(word: str, text: str) -> tuple[str, str]:
    """``"TB"`` -> ``("T", "B")``; a word that is a unit itself has no prefix."""
    if word in _BASE_UNITS:
        return "", word
    for plen in (2, 1):
        prefix, rest = word[:plen], word[plen:]
        if prefix in _PREFIXES and rest in _BASE_UNITS and rest not in _NO_PREFIX:
            if prefix in _SUBUNIT_PREFIXES and rest not in _TIME_WORDS:
                raise UnitError(
                    f"'{word}' in '{text}' would be a fraction ({_PREFIXES[prefix]}) of a {rest}; "
                    "sub-unit prefixes (m, u, n, p) apply to seconds only",
                    hint={"m": f"did you mean M{rest} (mega)?", "p": f"did you mean P{rest} (peta)?"}.get(prefix),
                )
            return prefix, rest
    declared = ", ".join(sorted(_DECLARED))
    raise UnitError(
        f"unknown unit '{word}' in '{text}'",
        hint="units are built from FLOP, B (byte), b (bit), s, ms, min, h, token, seq, param, USD, J, W "
             "with prefixes k M G T P, Ki Mi Gi Ti" + (f"; counts declared: {declared}" if declared else ""),
    )


_WORD = re.compile(r"[A-Za-z][A-Za-z_]*[A-Za-z]")  # a declared count: letters, inner underscores (prefill_chip)


def _letters(word: str) -> str:
    return word.replace("_", "").lower()


def declare_count_dimension(name: str, *, hint: str) -> None:
    """Make ``name`` (``prefill_chip``) a unit word and a base dimension of its own, for a library that
    counts things which must not mix (chips of a prefill pool and of a decode pool): ``token/(s·prefill_chip)``
    then parses, and adding it to a ``token/(s·decode_chip)`` is a unit error.  ``hint`` says in plain words
    what one of it is (``"one chip of the prefill pool"``).  Declaring a declared name again does nothing (the
    first hint stays); a name that is already a unit word, reads as a prefixed one, or spells another unit word
    (ignoring case and underscores) is refused.  Count words take no prefixes: ``kprefill_chip`` stays
    unknown."""
    if not isinstance(name, str) or not _WORD.fullmatch(name):
        raise UnitError(f"cannot declare the counting dimension {name!r}",
                        hint="a count is letters with inner underscores, like prefill_chip")
    if not isinstance(hint, str) or not hint.strip():
        raise UnitError(f"counting dimension '{name}' needs a hint", hint="say what one of it is, in plain words")
    if name in _DECLARED:
        return  # two libraries counting the same thing (one built on the other, or both loaded): one dimension
    if name in _BASE_UNITS or name in BASE_DIMENSIONS or name in _PREFIXES:
        raise UnitError(f"cannot declare '{name}' as a count: it is a unit word already",
                        hint="pick a word of its own, like prefill_chip")
    for plen in (2, 1):
        prefix, rest = name[:plen], name[plen:]
        if prefix in _PREFIXES and rest in _BASE_UNITS:
            raise UnitError(f"cannot declare '{name}' as a count: it reads as the prefix {prefix} on {rest}",
                            hint="pick a word of its own, like prefill_chip")
    alike = sorted(w for w in (*_BASE_UNITS, *_DECLARED) if _letters(w) == _letters(name))
    if alike:
        raise UnitError(f"cannot declare '{name}' as a count: it spells the unit word '{alike[0]}'",
                        hint="pick a word that differs in more than case and underscores")
    _DECLARED[name] = hint
    _BASE_UNITS[name] = (Dimension.of(**{name: 1}), Fraction(1))
    _NO_PREFIX.add(name)


def is_declared_count(word: str) -> bool:
    """Whether ``word`` is a counting dimension a library declared."""
    return word in _DECLARED


_TOKEN = re.compile(r"\s*(\*\*|[A-Za-zµ$%_]+|\d+|[*/·^()\-])")
RATE_SPELLINGS = frozenset({"FLOPs", "flops"})  # "989 TFLOPs" on a spec sheet means FLOP/s


def unit_factors(text: str) -> list[Factor]:
    """The unit words of a unit string with their prefixes and exponents, in the order written.
    The one grammar for unit strings: ``parse_unit`` folds these into a ``Unit``, and the document
    renderer turns them into siunitx macros."""
    src = text.strip()
    if not src:
        return []
    if len(src) > 100:
        raise UnitError(f"unit string too long ({len(src)} characters)")
    tokens: list[str] = []
    pos = 0
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if not m:
            raise UnitError(f"cannot read unit '{src}' at character {pos + 1}")
        tokens.append(m.group(1))
        pos = m.end()
        while pos < len(src) and src[pos] == " ":
            # a space between two unit words means multiplication ("param token")
            pos += 1
            if pos < len(src) and re.match(r"[A-Za-zµ$(]", src[pos]) and tokens[-1] not in "*/·^(":
                tokens.append("*")
    parser = _UnitParser(tokens, src)
    factors = parser.product()
    if parser.i != len(tokens):
        raise UnitError(f"cannot read unit '{src}' near '{tokens[parser.i]}'")
    return factors


@lru_cache(maxsize=4096)  # a pure function of its text; a Unit is immutable; display reads units by the hundred
def parse_unit(text: str, *, where: str | None = None) -> Unit:
    """Parse ``TB/s``, ``FLOP/(param*token)``, ``USD/h``, ``GiB`` into a ``Unit``; ``where`` (``--unit``) goes into
    an error that does not say where it is already."""
    if where is not None:
        try:
            return parse_unit(text)
        except DeriveError as err:
            err.where = err.where or where
            raise
    unit = Unit(DIMENSIONLESS)
    for prefix, word, exponent in unit_factors(text):
        dim, scale = _BASE_UNITS[word]
        unit = unit * Unit(dim, scale * _PREFIXES.get(prefix, Fraction(1))) ** exponent
    return Unit(unit.dimension, unit.scale, text.strip() or "1")


class _UnitParser:
    """Recursive descent over unit tokens, producing factor lists."""

    def __init__(self, tokens: list[str], text: str) -> None:
        self.tokens, self.text, self.i = tokens, text, 0

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise UnitError(f"unit '{self.text}' ends too early")
        self.i += 1
        return tok

    def product(self) -> list[Factor]:
        factors = self.power()
        while self.peek() in ("*", "·", "/"):
            op = self.take()
            rhs = self.power()
            factors += [(p, w, -e) for p, w, e in rhs] if op == "/" else rhs
        return factors

    def power(self) -> list[Factor]:
        base = self.atom()
        if self.peek() in ("^", "**"):
            self.take()
            sign = -1 if self.peek() == "-" else 1
            if sign < 0:
                self.take()
            exp = self.take()
            if not exp.isdigit() or int(exp) > 12:
                raise UnitError(f"bad exponent '{exp}' in unit '{self.text}'")
            base = [(p, w, e * sign * int(exp)) for p, w, e in base]
        return base

    def atom(self) -> list[Factor]:
        tok = self.take()
        if tok == "(":
            inner = self.product()
            if self.take() != ")":
                raise UnitError(f"unbalanced parenthesis in unit '{self.text}'")
            return inner
        if tok.isdigit():
            if tok != "1":
                raise UnitError(f"a number ('{tok}') inside unit '{self.text}'", hint="put the number before the unit")
            return []
        return [(*_split_word(tok, self.text), 1)]


_NUMBER = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(.*)$")


def si(text: str) -> Fraction:
    """``"14.4 ms"`` -> Fraction(9, 625): a number with a unit, in SI base units.  For library authors
    writing constants; user input goes through ``derive.model.parse.parse_value``, which also checks the
    dimension."""
    m = _NUMBER.match(text)
    if not m:
        raise UnitError(f"not a number with a unit: '{text}'")
    return Fraction(m.group(1)) * parse_unit(m.group(2)).scale
