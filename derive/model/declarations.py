"""Quantities and the three kinds of declaration: definition, assumption, claim.

Every declaration has an id ``topic.name``, a title, a plain-words statement and a source.  They are
frozen values; a ``Library`` (see ``library.py``) collects them into a dependency graph.  Nothing here
registers itself anywhere: importing a theorem module builds no global state beyond its own constants.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any

import sympy as sp

from derive.errors import DeriveError, LibraryError
from derive.kernel.logic import PRINT_BITS, And, Formula, Rel, rational_bits
from derive.model.units import Dimension, Unit, parse_unit

_NAME = re.compile(r"[a-z][a-z0-9_]*")  # fullmatch: "$" would let a final newline in
_ID = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+")
VERDICTS = ("proved", "refuted", "unknown", "inconsistent", "assumed", "blocked")
DOMAINS = ("positive", "nonnegative", "fraction", "real")  # fraction: 0 <= x <= 1 (a probability, a share)


_CONTROL = frozenset(("Cc", "Cf", "Zl", "Zp"))  # control, format (U+202E), line and paragraph separators


def _check_text(owner: str, prose: tuple[str, ...] = (), **fields: object) -> None:
    """Text a library gives (titles, statements, sources, meanings) is printed on terminals: a control
    character in it (ESC, carriage return, U+202E) could rewrite what derive prints, e.g. a refuted
    claim's line shown as proved.  Refused at construction; ``prose`` fields may hold newlines and tabs."""
    import unicodedata

    for name, value in fields.items():
        if not isinstance(value, str):
            continue
        plain = value.replace("\n", "").replace("\t", "") if name in prose else value
        if plain.isprintable():  # no character of _CONTROL (nor any other unprintable one): the usual case
            continue
        for c in value:
            if unicodedata.category(c) in _CONTROL and not (name in prose and c in "\n\t"):
                raise LibraryError(f"{owner}: {name} contains the control character {c!r}",
                                   hint="write plain text (no escape sequences, carriage returns or "
                                        "direction marks)")


def _check_types(owner: str, kind: type, **fields: object) -> None:
    """Each field of the type ``kind`` (a title 5 or ``integer="yes"`` is refused at construction)."""
    for name, value in fields.items():
        if not isinstance(value, kind):
            raise LibraryError(f"{owner}: {name} must be {'text' if kind is str else 'True or False'}, got {value!r}")


def _plain_latex(expr: sp.Expr) -> str:
    """LaTeX with each symbol by its name (``\\mathit{critical\\_batch}``): sympy's own guesses turn
    ``critical_batch`` into a calligraphic subscript.  The library-aware form is ``derive.claim``."""
    names = {s: r"\mathit{" + str(s).replace("_", r"\_") + "}" for s in expr.free_symbols}
    return sp.latex(expr, symbol_names=names)


@dataclass(frozen=True)
class Source:
    """Where a declaration or a number comes from."""

    kind: str  # "lecture", "spec", "paper", "derived", "user"
    ref: str  # lecture timestamp, URL or citation
    detail: str = ""  # chapter title, quote or table name
    reconstructed: bool = False  # not said in the source; rebuilt by us
    as_of: str | None = None

    def __post_init__(self) -> None:
        _check_text("source", kind=self.kind, ref=self.ref, detail=self.detail, as_of=self.as_of)

    def __str__(self) -> str:
        text = {"lecture": f"lecture {self.ref}"}.get(self.kind, self.ref)
        if self.detail:
            text += f" ({self.detail})"
        if self.reconstructed:
            text += " [reconstructed]"
        if self.as_of:
            text += f", as of {self.as_of}"
        return text


def lecture(timestamp: str, chapter: str = "", *, reconstructed: bool = False) -> Source:
    return Source("lecture", timestamp, chapter, reconstructed)


def paper(citation: str, detail: str = "") -> Source:
    return Source("paper", citation, detail)


def spec(reference: str, as_of: str, detail: str = "") -> Source:
    return Source("spec", reference, detail, as_of=as_of)


def derived(detail: str) -> Source:
    return Source("derived", "derivation", detail)


@dataclass(frozen=True, eq=False)
class Quantity:
    """A named physical quantity.

    ``latex`` is given explicitly (sympy would guess subscripts).  The sympy symbol carries *no*
    assumptions: positivity is a hypothesis handed to the prover, never something sympy can use
    silently.  A quantity with ``value`` is a constant of the theory (substituted everywhere).
    ``integer``: the proofs read it as a whole number.  ``whole``: a count the proofs read as a real (so that
    their problems stay in real arithmetic) but a user sets in whole units: a threshold a what-if suggests for it
    (``derive audit``'s "needs ...") is rounded to a whole number.
    """

    name: str
    latex: str
    unit: str
    meaning: str
    domain: str = "positive"
    integer: bool = False
    value: sp.Rational | None = None
    source: Source | None = None
    display_unit: str | None = None
    whole: bool = False

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise LibraryError(f"quantity name '{self.name}' is not snake_case")
        if self.domain not in DOMAINS:
            raise LibraryError(f"quantity '{self.name}': domain must be one of {DOMAINS}")
        _check_text(f"quantity '{self.name}'", latex=self.latex, meaning=self.meaning, unit=self.unit,
                    display_unit=self.display_unit)
        _check_types(f"quantity '{self.name}'", str, latex=self.latex, meaning=self.meaning, unit=self.unit)
        _check_types(f"quantity '{self.name}'", bool, integer=self.integer, whole=self.whole)
        if self.display_unit is not None:
            _check_types(f"quantity '{self.name}'", str, display_unit=self.display_unit)
        if self.latex.count("{") != self.latex.count("}"):  # copied into every .tex: unbalanced, none compiles
            raise LibraryError(f"quantity '{self.name}': latex {self.latex!r} has unbalanced braces")
        if self.value is not None:
            value = _exact_value(self.name, self.value)
            object.__setattr__(self, "value", value)
            # the value is substituted everywhere, so a declaration it breaks would be silently ignored
            if self.outside_domain(value):
                raise LibraryError(f"constant '{self.name}': value {value} is outside its declared domain "
                                   f"({self.domain_words})", hint="fix the value or declare domain='real'")
            if (self.integer or self.whole) and not value.is_integer:
                raise LibraryError(f"constant '{self.name}': value {value} is not an integer, but it is declared "
                                   f"{'integer' if self.integer else 'whole'}=True")
            if self.source is None:
                raise LibraryError(f"constant '{self.name}' needs a source")
        _ = self.parsed_unit  # fail early on a bad unit string
        if self.display_unit is not None and parse_unit(self.display_unit).dimension != self.dimension:
            raise LibraryError(f"quantity '{self.name}': display_unit {self.display_unit!r} does not measure "
                               f"{self.unit}", hint=f"give a unit of the same kind as {self.unit}, or none")

    @cached_property
    def sym(self) -> sp.Symbol:
        return sp.Symbol(self.name)

    @cached_property
    def parsed_unit(self) -> Unit:
        return parse_unit(self.unit)

    @property
    def dimension(self) -> Dimension:
        return self.parsed_unit.dimension

    @property
    def unit_si(self) -> sp.Rational:
        """One unit of the quantity in SI base units (one whole count of a ``whole`` quantity: 1 seq is 1)."""
        scale = self.parsed_unit.scale
        return sp.Rational(scale.numerator, scale.denominator)

    @property
    def counted(self) -> bool:
        """Whether it takes whole values (``integer`` or ``whole``)."""
        return self.integer or self.whole

    def domain_formula(self) -> Formula | None:
        if self.domain == "positive":
            return Rel(self.sym, ">", 0)
        if self.domain == "nonnegative":
            return Rel(self.sym, ">=", 0)
        if self.domain == "fraction":
            return And((Rel(self.sym, ">=", 0), Rel(self.sym, "<=", 1)))
        return None

    @property
    def domain_words(self) -> str:
        """The declared domain as a reader says it: "positive", "non-negative", "between 0 and 1"."""
        return {"nonnegative": "non-negative", "fraction": "between 0 and 1"}.get(self.domain, self.domain)

    def outside_domain(self, value: float | sp.Rational) -> bool:
        """Whether a number lies outside the declared domain (the one test of every value given from outside)."""
        return not bool(self.inside_domain(value))

    def inside_domain(self, values: Any) -> Any:  # a number, or a numpy array read elementwise
        """Whether ``values`` lie inside the declared domain: a truth value for a number, an array of them for a
        numpy array (a sweep's grid); NaN is outside."""
        if self.domain == "positive":
            return values > 0
        if self.domain == "nonnegative":
            return values >= 0
        if self.domain == "fraction":
            return (values >= 0) & (values <= 1)
        return values == values  # every real number (a NaN, no number, is not equal to itself)

    def _repr_latex_(self) -> str:
        from derive.model.display import tex_text

        return rf"${self.latex}\ \text{{{tex_text(f': {self.meaning} [{self.unit}]')}}}$"

    def __repr__(self) -> str:
        return f"Quantity({self.name!r})"


@dataclass(frozen=True, eq=False)
class Declaration:
    id: str
    title: str
    statement: str
    source: Source
    tags: tuple[str, ...] = ()  # e.g. "inconsistency": the lecture contradicts itself or the facts here

    kind = "declaration"

    def __post_init__(self) -> None:
        if not _ID.fullmatch(self.id):
            raise LibraryError(f"declaration id '{self.id}' must look like 'topic.name' in snake_case")
        if not self.title or not self.statement:
            raise LibraryError(f"declaration '{self.id}' needs a title and a statement")
        if isinstance(self.tags, str):  # tags="inconsistency" would read as thirteen one-letter tags
            raise LibraryError(f"declaration '{self.id}': tags is a tuple of words, got the text {self.tags!r}",
                               hint=f"write tags=({self.tags!r},)")
        object.__setattr__(self, "tags", tuple(self.tags))
        _check_types(f"declaration '{self.id}'", str, title=self.title, statement=self.statement,
                     **{f"tag {i + 1}": t for i, t in enumerate(self.tags)},
                     **{k: getattr(self, k) for k in ("label", "notes") if getattr(self, k, None) is not None})
        _check_text(f"declaration '{self.id}'", ("statement",), title=self.title, statement=self.statement,
                    label=getattr(self, "label", None), notes=getattr(self, "notes", None),
                    **{f"tag {t!r}": t for t in self.tags if isinstance(t, str)})
        if not isinstance(self.source, Source):
            raise LibraryError(f"declaration '{self.id}' needs a Source")

    @property
    def topic(self) -> str:
        return self.id.rsplit(".", 1)[0]

    @property
    def short(self) -> str:
        return self.id.rsplit(".", 1)[1]

    def exprs(self) -> list[sp.Expr]:
        return []

    def explicit_uses(self) -> tuple[Declaration, ...]:
        return ()

    def _repr_latex_(self) -> str:
        """Title and formula, for Jupyter (``derive.claim(id)`` adds the library's symbols and values)."""
        from derive.model.display import tex_text

        title = rf"\textbf{{{tex_text(self.title)}}}"
        formula = self.formula_latex()
        if formula is None:
            return f"${title}$"
        return rf"$$\begin{{array}}{{l}}{title} \\ {formula}\end{{array}}$$"

    def formula_latex(self) -> str | None:
        """The declaration's formula in plain sympy LaTeX (symbols by name), or None."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id!r})"


@dataclass(frozen=True, eq=False)
class Definition(Declaration):
    """Binds a derived quantity to an expression in other quantities.  ``domain``: where the
    definition means something (``critical_batch_kv`` only for ``context < critical_context``);
    evaluating it outside says ``undefined`` with the reason instead of a number."""

    defines: Quantity = None  # type: ignore[assignment]
    expr: sp.Expr = None  # type: ignore[assignment]
    uses: tuple[Declaration, ...] = ()
    domain: Formula | None = None

    kind = "definition"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.defines, Quantity) or self.expr is None:
            raise LibraryError(f"definition '{self.id}' needs `defines` (a Quantity) and `expr`")
        if self.domain is not None and not isinstance(self.domain, Formula):
            raise LibraryError(f"definition '{self.id}': `domain` must be a relation (a logic Formula)")
        object.__setattr__(self, "expr", sp.sympify(self.expr, strict=True))

    def exprs(self) -> list[sp.Expr]:
        return [self.defines.sym, self.expr]

    def formula_latex(self) -> str | None:
        return f"{self.defines.latex} = {_plain_latex(self.expr)}"

    def explicit_uses(self) -> tuple[Declaration, ...]:
        return tuple(self.uses)


@dataclass(frozen=True, eq=False)
class Assumption(Declaration):
    """Taken as given: a relation between quantities, or a cited qualitative fact (``relation=None``)."""

    relation: Formula | None = None
    uses: tuple[Declaration, ...] = ()

    kind = "assumption"

    def exprs(self) -> list[sp.Expr]:
        return self.relation.exprs() if self.relation is not None else []

    def formula_latex(self) -> str | None:
        return self.relation.latex(_plain_latex) if self.relation is not None else None

    def explicit_uses(self) -> tuple[Declaration, ...]:
        return tuple(self.uses)


@dataclass(frozen=True)
class Step:
    """One line of a derivation: an expression equal to the previous one, or a relation
    equivalent to the previous one, with the reason in words."""

    formula: sp.Expr | Formula
    why: str = ""
    link: str = "implies"  # for relations: the previous line "implies" this one, or they are equivalent ("iff")

    def __post_init__(self) -> None:
        if self.link not in ("implies", "iff"):
            raise LibraryError(f"step link must be 'implies' or 'iff', not {self.link!r}")
        _check_text("step", why=self.why)
        if not isinstance(self.formula, Formula):
            object.__setattr__(self, "formula", sp.sympify(self.formula, strict=True))


@dataclass(frozen=True, eq=False)
class Claim(Declaration):
    """Something to be shown.

    ``goal`` is the conclusion; ``hypotheses`` are local premises; ``steps`` a derivation whose
    consecutive lines are each checked (equal expressions, or equivalent relations).  ``uses`` lists
    assumptions and claims this one rests on (definitions are found from the symbols).

    ``instance=False`` (default): a general statement; scenario values are never substituted, so a
    proof holds for every value the assumptions allow.  ``instance=True``: checked at the scenario's
    values, except for the quantities in ``forall``, which stay universally quantified.
    """

    goal: Formula = None  # type: ignore[assignment]
    hypotheses: tuple[Formula, ...] = ()
    steps: tuple[Step, ...] = ()
    uses: tuple[Declaration, ...] = ()
    instance: bool = False
    forall: tuple[Quantity, ...] = ()
    expected: str = "proved"
    label: str | None = None  # a headline name in bold, e.g. "Batch optimum"
    bounds: tuple[tuple[Quantity, sp.Rational, sp.Rational], ...] = ()  # boxes for the interval engine
    notes: str = ""

    kind = "claim"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.goal, Formula):
            raise LibraryError(f"claim '{self.id}' needs a goal (a Formula, e.g. derive.kernel.logic.ge(a, b))")
        if self.expected not in VERDICTS:
            raise LibraryError(f"claim '{self.id}': expected verdict must be one of {VERDICTS}")
        object.__setattr__(self, "hypotheses", tuple(self.hypotheses))
        object.__setattr__(self, "steps", tuple(self.steps))
        for h in self.hypotheses:
            if not isinstance(h, Formula):
                raise LibraryError(f"claim '{self.id}': hypotheses must be Formulas, got {h!r}")
        object.__setattr__(self, "bounds", _bounds_triples(self.id, self.bounds))
        forall = _items(self.forall)
        odd = next((q for q in forall if not isinstance(q, Quantity)), None)
        if odd is not None or not all(isinstance(u, Declaration) for u in _items(self.uses)):
            what = f"forall holds {odd!r}" if odd is not None else "uses holds something that is no declaration"
            raise LibraryError(f"claim '{self.id}': {what}", where=f"claim {self.id}",
                               hint="forall=(quantity, ...) names Quantity objects (not their .sym); "
                                    "uses=(declaration, ...) names Assumption, Definition and Claim objects")
        object.__setattr__(self, "forall", forall)

    def exprs(self) -> list[sp.Expr]:
        out = list(self.goal.exprs())
        for h in self.hypotheses:
            out.extend(h.exprs())
        for s in self.steps:
            out.extend(s.formula.exprs() if isinstance(s.formula, Formula) else [s.formula])
        return out

    def formula_latex(self) -> str | None:
        return self.goal.latex(_plain_latex)

    def explicit_uses(self) -> tuple[Declaration, ...]:
        return tuple(self.uses)


def _items(value: object) -> tuple:
    """A declaration's tuple field as a tuple; one item given alone (``forall=x``) as a tuple of it."""
    try:
        return tuple(value)  # type: ignore[arg-type]
    except TypeError:
        return (value,)


def _bounds_triples(claim_id: str, bounds: object) -> tuple:
    """``bounds`` as (Quantity, low, high) triples; a mapping {Quantity: (low, high)} is accepted too.  The
    kernel judges the numbers (exact, low <= high); here only the shape is checked, so a malformed
    library is a load error, not a claim that fails at check time."""
    hint = "write bounds=((quantity, low, high), ...) or {quantity: (low, high)}"
    try:
        items = [(q, *pair) for q, pair in bounds.items()] if isinstance(bounds, dict) else list(bounds)
        triples = tuple(tuple(t) for t in items)
    except TypeError:
        raise LibraryError(f"claim '{claim_id}': malformed bounds", where=f"claim {claim_id}", hint=hint) from None
    for t in triples:
        if len(t) != 3 or not isinstance(t[0], Quantity):
            raise LibraryError(f"claim '{claim_id}': malformed bounds entry", where=f"claim {claim_id}", hint=hint)
        if any(_too_long(end) for end in t[1:]):
            raise LibraryError(f"claim '{claim_id}': a bound of {t[0].name} has more than 4,000 digits",
                               hint="derive prints every number in decimal; scale the quantity's unit instead")
    return triples


def _too_long(value: object) -> bool:
    """An exact number past the digits derive prints (``derive.kernel.logic.PRINT_BITS``)."""
    if isinstance(value, (int, Fraction, sp.Rational)) and not isinstance(value, bool):
        q = sp.Rational(value)
        return rational_bits(q) > PRINT_BITS
    return False


def free_symbols_of(exprs: Sequence[sp.Expr]) -> set[sp.Symbol]:
    """The symbols of the expressions, each distinct part visited once (sympy shares repeated parts,
    whose tree can be exponentially larger than the expression)."""
    out: set[sp.Symbol] = set()
    seen: set[int] = set()
    todo = list(exprs)
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, sp.Symbol):
            out.add(e)
        elif isinstance(e, sp.Basic):
            todo += e.args
    return out


@dataclass(frozen=True)
class Topic:
    """A module's worth of declarations, in order, with its docstring summary."""

    name: str
    title: str
    summary: str
    quantities: tuple[Quantity, ...] = field(default=())
    declarations: tuple[Declaration, ...] = field(default=())
    prose: tuple[str, ...] = field(default=())  # the module's PROSE: paragraphs of the chapter's argument
    part: str = ""  # the module's PART: the title of the documents' part it opens or continues ("" = part I)


def _exact_value(name: str, value: object) -> sp.Rational:
    """A constant's value as an exact rational; a float by the one rule of ``derive.model.numbers``."""
    from derive.model.numbers import exact_from_float

    try:
        if isinstance(value, (float, sp.Float)):
            return exact_from_float(value)
        if isinstance(value, bool) or not isinstance(value, (int, str, sp.Rational, Fraction)):
            raise TypeError(type(value).__name__)
        exact = sp.Rational(value)
    except (TypeError, ValueError, ArithmeticError, sp.SympifyError) as err:
        raise LibraryError(f"constant '{name}': value {str(value)[:60]!r} is not an exact number ({err})",
                           hint="give an int, a Fraction, a decimal string like '0.1' or a float") from None
    except DeriveError as err:
        raise LibraryError(f"constant '{name}': {err.message}") from None
    if not isinstance(exact, sp.Rational):
        raise LibraryError(f"constant '{name}': value {str(value)[:60]!r} is not a rational number")
    if _too_long(exact):
        raise LibraryError(f"constant '{name}': a value of more than 4,000 digits",
                           hint="derive prints every number in decimal; scale the quantity's unit instead")
    return exact
