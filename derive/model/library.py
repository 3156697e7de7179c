"""The library: declarations in a dependency graph (a networkx one where asked for), built explicitly from modules."""

from __future__ import annotations

import heapq
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import sympy as sp

from derive.errors import AmbiguousNameError, DimensionError, LibraryError, UnknownNameError
from derive.kernel.logic import (
    Formula,
    IsInteger,
    Rel,
    name_of,
    read_signs,
    replace,
    structurally_integer,
    structurally_signed,
)
from derive.kernel.trusted import side_conditions
from derive.model.declarations import Assumption, Claim, Declaration, Definition, Quantity, Step, Topic, free_symbols_of
from derive.model.dimensions import check_formula, dimension_of
from derive.model.prose import check_no_placeholder, check_topic_prose
from derive.model.units import format_dimension

if TYPE_CHECKING:
    import networkx as nx


@dataclass
class Library:
    """Topics in order, their quantities and declarations, and the dependency graph.

    Edges run from a dependency to its dependant (``definition -> claim``), so ancestors are what a
    declaration rests on and descendants are what a change can affect.  The library walks its own
    adjacency; ``graph``, the same edges as a networkx ``DiGraph``, is made when first asked for (a check
    never asks: importing networkx was a twentieth of a cold check).
    """

    topics: list[Topic]
    preset_dirs: list[Path] = field(default_factory=list)
    model_config_reader: Callable[[Path], Mapping[str, object]] | None = None
    figures: list = field(default_factory=list)  # derive.documents.figures.Figure specs, from a root's FIGURES
    title: str = ""  # a root's TITLE, else the first line of its docstring
    # quantities that are peak rates (a root's CEILINGS), each with the id of the assumption that says no
    # measurement exceeds it (or None): --measured may replace them, derive ledger checks them
    ceilings: dict[str, str | None] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)  # e.g. a user library printed while loading (see loader)
    # (label, expression) pairs a what-if always reports before and after, from a root's HEADLINES
    headlines: list[tuple[str, str]] = field(default_factory=list)
    # what `derive audit` holds a metric column to, from a root's AUDIT_BOUNDS (see derive.whatif.audit)
    audit_bounds: list[dict[str, object]] = field(default_factory=list)
    # ids of the claims that state when a scenario can exist at all (a root's FEASIBILITY)
    feasibility: list[str] = field(default_factory=list)
    card: list[dict] = field(default_factory=list)  # the rows of derive card (a root's CARD)
    # the audit metric whose floor derive.predict gives (a root's PREDICT_METRIC), or None
    predict_metric: str | None = None
    # tables of inputs a scenario file may give as a [NAME] table (a root's INPUT_TABLES): each maps its members
    # (quantity names) to their default text and its source, used when the table is given but the member is not
    input_tables: dict[str, dict] = field(default_factory=dict)
    # rules the inputs of any scenario must meet (a root's INPUT_CONSTRAINTS), checked where a scenario is built:
    # each an id, a rule in words, a relation over quantities, a plain-words reason, a hint and a source
    input_constraints: list[dict] = field(default_factory=list)
    # where a Hugging Face id's config.json is (``--model ORG/NAME``; a root's MODEL_CONFIG_FINDER), or None
    model_config_finder: Callable[[str], Path] | None = None
    # the config reader as formulas for the plain file types (a root's LIVE_CONFIG_FORMULAS, checked by
    # derive.model.config_formulas): file type -> its reading; the live page reads a pasted config.json with them
    live_config_formulas: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.quantities: dict[str, Quantity] = {}
        self.declarations: dict[str, Declaration] = {}
        self._by_symbol: dict[sp.Symbol, Quantity] = {}
        self._topic_of_quantity: dict[str, str] = {}  # the first topic to declare each quantity, for errors
        for topic in self.topics:
            for q in topic.quantities:
                self._add_quantity(q, topic.name)
            for d in topic.declarations:
                if d.id in self.declarations and self.declarations[d.id] is not d:
                    raise LibraryError(f"duplicate declaration id '{d.id}'")
                self.declarations[d.id] = d
        # ids by their last part, in declaration order: the prose's placeholders name claims by it (a load
        # resolves about 70 of them; a walk of every declaration each time was measurable)
        self._by_short: dict[str, list[str]] = {}
        for d in self.declarations.values():
            self._by_short.setdefault(d.short, []).append(d.id)
        self.definition_of: dict[str, Definition] = {}
        for d in self.declarations.values():
            if isinstance(d, Definition):
                name = d.defines.name
                if name in self.definition_of:
                    raise LibraryError(
                        f"quantity '{name}' is defined twice: {self.definition_of[name].id} and {d.id}"
                    )
                if d.defines.value is not None:  # its value would win wherever it is read, the definition nowhere
                    raise LibraryError(f"quantity '{name}' is a constant ({d.defines.value}) and is also defined by "
                                       f"{d.id}", where=f"definition {d.id}",
                                       hint="a quantity has a value or a definition, not both")
                self._add_quantity(d.defines)
                self.definition_of[name] = d
        self._edges = self._build_edges()
        self._uses: dict[str, dict[str, None]] = {d: {} for d in self.declarations}  # predecessors, in edge order
        self._users: dict[str, dict[str, None]] = {d: {} for d in self.declarations}  # successors
        for u, v in self._edges:
            self._uses[v][u] = None
            self._users[u][v] = None
        self._graph: nx.DiGraph | None = None
        self._check_acyclic()
        self._check_dimensions()
        self._check_prose()
        self._expanded: dict[tuple[str, frozenset[str]], sp.Expr] = {}
        self._expansions: dict[tuple[sp.Expr, frozenset[str]], sp.Expr] = {}  # expand's answers
        self._reach: dict[tuple[str, frozenset[str]], frozenset[str]] = {}
        self._assumption_ids = [d.id for d in self.declarations.values() if isinstance(d, Assumption)]
        self._rests_on: dict[str, tuple[str, ...]] = {}  # rests_on's answers, by declaration id
        self._violations: dict[tuple[sp.Symbol, type, object], tuple[Formula, ...]] = {}  # _violations_at's answers

    # construction --------------------------------------------------------------------------------

    def _add_quantity(self, q: Quantity, topic: str | None = None) -> None:
        known = self.quantities.get(q.name)
        if known is not None and known is not q:
            first = self._topic_of_quantity.get(q.name)
            raise LibraryError(
                f"two different quantities are named '{q.name}'"
                + (f": topic {first} declares one, topic {topic} another" if first and topic else ""),
                hint=f"rename one of them, or import the other's quantity instead of declaring it again"
                     f"{f' (from the module of topic {first})' if first else ''}")
        self.quantities[q.name] = q
        self._by_symbol[q.sym] = q
        if topic is not None:
            self._topic_of_quantity.setdefault(q.name, topic)

    def _symbol_quantity(self, sym: sp.Symbol, where: str) -> Quantity:
        q = self._by_symbol.get(sym)
        if q is None:
            raise LibraryError(
                f"symbol '{sym}' is not a declared quantity", where=where,
                hint="declare it with derive.Quantity and use quantity.sym",
            )
        return q

    def _build_edges(self) -> list[tuple[str, str]]:
        """The dependency edges ``(used, user)``, in the order they are found (a repeated edge once)."""
        edges: dict[tuple[str, str], None] = {}
        for d in self.declarations.values():
            if isinstance(d, Definition) and d.defines.sym in d.expr.free_symbols:
                raise LibraryError(f"definition '{d.id}' defines '{d.defines.name}' in terms of itself",
                                   hint="a definition's expression must not use the quantity it defines")
            for sym in sorted(free_symbols_of(d.exprs()), key=name_of):
                q = self._symbol_quantity(sym, d.id)
                definition = self.definition_of.get(q.name)
                if definition is not None and definition is not d:
                    edges[(definition.id, d.id)] = None
            for used in d.explicit_uses():
                if not isinstance(used, Declaration):
                    raise LibraryError(f"'{d.id}' uses {used!r}, which is not a declaration")
                if used.id not in self.declarations:
                    raise LibraryError(
                        f"'{d.id}' depends on '{used.id}', which is not in the library",
                        hint="load the library that declares it too (--library lecture --library PATH)",
                    )
                edges[(used.id, d.id)] = None
        return list(edges)

    def _check_acyclic(self) -> None:
        """A dependency cycle is an error, named by networkx's ``find_cycle`` (imported only then)."""
        indegree = {d: len(u) for d, u in self._uses.items()}
        ready = [d for d, n in indegree.items() if n == 0]
        seen = 0
        while ready:
            d = ready.pop()
            seen += 1
            for user in self._users[d]:
                indegree[user] -= 1
                if indegree[user] == 0:
                    ready.append(user)
        if seen == len(indegree):
            return
        import networkx as nx

        cycle = nx.find_cycle(self.graph)
        path = " -> ".join([cycle[0][0]] + [v for _, v in cycle])
        raise LibraryError(f"dependency cycle: {path}")

    @property
    def graph(self) -> nx.DiGraph:
        """The dependency graph as a networkx ``DiGraph`` (nodes in declaration order, the same edges)."""
        if self._graph is None:
            import networkx as nx

            g = nx.DiGraph()
            g.add_nodes_from(self.declarations)
            g.add_edges_from(self._edges)
            self._graph = g
        return self._graph

    def predecessors(self, decl_id: str) -> list[str]:
        """Ids of the declarations ``decl_id`` uses directly (the graph's predecessors, in its order)."""
        return list(self._uses[decl_id])

    def dimension(self, sym: sp.Symbol) -> object:
        return self._symbol_quantity(sym, "dimension lookup").dimension

    def _check_dimensions(self) -> None:
        lookup = lambda s: self._symbol_quantity(s, "dimension check").dimension  # noqa: E731
        for d in self.declarations.values():
            if isinstance(d, Definition):
                got = dimension_of(d.expr, lookup, where=d.id)
                if got != d.defines.dimension:
                    raise DimensionError(
                        f"'{d.defines.name}' is declared in {format_dimension(d.defines.dimension)} "
                        f"but its formula gives {format_dimension(got)}",
                        where=d.id,
                    )
                if d.domain is not None:
                    check_formula(d.domain, lookup, where=f"{d.id} (domain)")
            elif isinstance(d, Assumption) and d.relation is not None:
                check_formula(d.relation, lookup, where=d.id)
            elif isinstance(d, Claim):
                check_formula(d.goal, lookup, where=d.id)
                for h in d.hypotheses:
                    check_formula(h, lookup, where=d.id)
                _check_steps(d.steps, lookup, d.id)

    def _check_prose(self) -> None:
        """Placeholders (``derive.model.prose``) name what exists, and appear in PROSE only."""
        for topic in self.topics:
            check_topic_prose(topic, self.resolve, self.quantities, self.figures)
        for d in self.declarations.values():
            check_no_placeholder(d.statement, d.id)
            check_no_placeholder(getattr(d, "notes", "") or "", f"{d.id} (notes)")
            for i, step in enumerate(getattr(d, "steps", ()), start=1):
                check_no_placeholder(step.why, f"{d.id}, step {i}")

    # look-ups ------------------------------------------------------------------------------------

    def resolve(self, name: str) -> Declaration:
        """A declaration by full id or by its unique last part."""
        if name in self.declarations:
            return self.declarations[name]
        matches = [self.declarations[i] for i in self._by_short.get(name, ())]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise AmbiguousNameError(
                f"id '{name}' is ambiguous", hint="use one of " + ", ".join(d.id for d in matches)
            )
        known = list(self.declarations) + [d.short for d in self.declarations.values()]
        raise UnknownNameError("id", name, known)

    def quantity(self, name: str) -> Quantity:
        if name in self.quantities:
            return self.quantities[name]
        raise UnknownNameError("quantity", name, self.quantities)

    def quantity_of(self, sym: sp.Symbol) -> Quantity:
        return self._symbol_quantity(sym, "look-up")

    def quantity_or_none(self, sym: sp.Basic) -> Quantity | None:
        """The quantity of a symbol, or None for anything else."""
        return self._by_symbol.get(sym) if isinstance(sym, sp.Symbol) else None

    def domain_violations(self, symbols: Iterable[sp.Symbol], values: Mapping[sp.Symbol, sp.Expr]) -> list[Formula]:
        """The domain relations (positive, non-negative, an integer) that ``values`` of ``symbols`` break, each
        false at its value: as hypotheses they make a claim checked at those values inconsistent, so a value
        outside a quantity's domain is never a counterexample, nor a point where a claim holds."""
        out: list[Formula] = []
        for s in sorted(set(symbols) & set(values), key=name_of):
            out += self._violations_at(s, values[s])
        return out

    def _violations_at(self, s: sp.Symbol, v: sp.Expr) -> tuple[Formula, ...]:
        """``domain_violations`` of one quantity at one value, kept: a check asks for the same scenario values
        in every problem (each an exact evaluation of the domain)."""
        key = (s, type(v), v)  # 1 and 1.0 are equal keys, and only one is an integer
        found = self._violations.get(key)
        if found is None:
            q = self.quantity_of(s)
            domain = q.domain_formula()
            out: list[Formula] = []
            if domain is not None and not domain.evaluate({s: v}):
                out.append(domain)
            if q.integer and sp.sympify(v).is_integer is not True:
                out.append(Rel(s, "==", sp.floor(v)))  # false at v: an integer quantity's value is an integer
            found = self._violations[key] = tuple(out)
        return found

    def symbols(self) -> dict[str, sp.Symbol]:
        return {name: q.sym for name, q in self.quantities.items()}

    def claims(self) -> list[Claim]:
        return [d for d in self.ordered() if isinstance(d, Claim)]

    def ordered(self) -> list[Declaration]:
        """Topic order, declaration order within a topic (the reading order of documents)."""
        return list(self.declarations.values())

    def topological(self) -> list[Declaration]:
        """Every declaration after those it uses; among those ready at once, the earliest in ``ordered``
        first (the unique order networkx's ``lexicographical_topological_sort`` gives with that key)."""
        order = {d.id: i for i, d in enumerate(self.ordered())}
        indegree = {d: len(u) for d, u in self._uses.items()}
        ready = [(order[d], d) for d, n in indegree.items() if n == 0]
        heapq.heapify(ready)
        out: list[Declaration] = []
        while ready:
            _, d = heapq.heappop(ready)
            out.append(self.declarations[d])
            for user in self._users[d]:
                indegree[user] -= 1
                if indegree[user] == 0:
                    heapq.heappush(ready, (order[user], user))
        return out

    def is_derived(self, name: str) -> bool:
        return name in self.definition_of

    def ancestors(self, decl_id: str) -> set[str]:
        """Ids of every declaration ``decl_id`` rests on, directly or through others."""
        return _reachable(self._uses, decl_id)

    def descendants(self, decl_id: str) -> set[str]:
        """Ids of every declaration that rests on ``decl_id``."""
        return _reachable(self._users, decl_id)

    def rests_on(self, decl: Declaration) -> list[str]:
        """Ids of the assumptions the declaration depends on, directly or through others, in the library's
        order."""
        done = self._rests_on.get(decl.id)
        if done is None:  # asked three times per claim checked: a walk of every declaration each time
            anc = self.ancestors(decl.id)
            done = self._rests_on[decl.id] = tuple(a for a in self._assumption_ids if a in anc)
        return list(done)

    def claim_dependencies(self, claim: Claim) -> list[Claim]:
        """Claims this one explicitly uses (their verdict can block it)."""
        return [u for u in claim.uses if isinstance(u, Claim)]

    # expansion -----------------------------------------------------------------------------------

    def expand(self, expr: sp.Expr, pinned: Iterable[str] = ()) -> sp.Expr:
        """Replace derived quantities by their definitions (recursively) and constants by values.

        Quantities named in ``pinned`` are left as symbols: the scenario gives them a value and cuts
        their definition.
        """
        pinned = frozenset(pinned)
        key = (expr, pinned)
        done = self._expansions.get(key)
        if done is not None:  # a check expands the same expressions again and again (8 times in 10)
            return done
        mapping: dict[sp.Symbol, sp.Expr] = {}
        for sym in free_symbols_of([expr]):
            mapping[sym] = self._expanded_symbol(self.quantity_of(sym).name, pinned)
        out = replace(expr, mapping)
        if len(self._expansions) >= 50_000:
            self._expansions.clear()
        self._expansions[key] = out
        return out

    def _expanded_symbol(self, name: str, pinned: frozenset[str]) -> sp.Expr:
        key = (name, pinned)
        if key in self._expanded:
            return self._expanded[key]
        q = self.quantities[name]
        if name in pinned:
            out: sp.Expr = q.sym
        elif q.value is not None:
            out = q.value
        elif name in self.definition_of:
            inner = self.definition_of[name].expr
            out = replace(
                inner, {s: self._expanded_symbol(self.quantity_of(s).name, pinned) for s in free_symbols_of([inner])}
            )
        else:
            out = q.sym
        self._expanded[key] = out
        return out

    def reaches(self, expr: sp.Expr, pinned: Iterable[str] = ()) -> set[str]:
        """Names of the base (or pinned) quantities ``expand`` could leave in ``expr``, found by walking the
        definitions without building the expansion (a superset: a symbol may cancel in the expansion)."""
        pinned = frozenset(pinned)
        out: set[str] = set()
        for sym in free_symbols_of([expr]):
            out |= self._reached(self.quantity_of(sym).name, pinned)
        return out

    def _reached(self, name: str, pinned: frozenset[str]) -> frozenset[str]:
        key = (name, pinned)
        if key in self._reach:
            return self._reach[key]
        q = self.quantities[name]
        if name in pinned:
            out = frozenset((name,))
        elif q.value is not None:
            out = frozenset()
        elif name in self.definition_of:
            found: set[str] = set()
            for s in free_symbols_of([self.definition_of[name].expr]):
                found |= self._reached(self.quantity_of(s).name, pinned)
            out = frozenset(found)
        else:
            out = frozenset((name,))
        self._reach[key] = out
        return out

    def base_inputs(self, expr: sp.Expr, pinned: Iterable[str] = ()) -> list[str]:
        """Names of the base (or pinned) quantities an expression finally depends on."""
        return sorted(str(s) for s in self.expand(expr, pinned).free_symbols)

    def formula_expand(self, formula: Formula, pinned: Iterable[str] = ()) -> Formula:
        """``formula`` with every expression expanded (``expand``), and each ``within_factor`` range read
        with the declared domains of its target's quantities (``derive.kernel.logic.Within``)."""
        pinned = frozenset(pinned)
        formula = read_signs(formula, self._may_be_negative)
        return formula.map_exprs(lambda e: self.expand(e, pinned))

    def _may_be_negative(self, sym: sp.Symbol) -> bool:
        q = self._by_symbol.get(sym)
        return q is None or q.domain not in ("positive", "nonnegative", "fraction")

    # what a definition declares: side conditions of every expression that uses the quantity -----------

    def definition_conditions(self, exprs: Iterable[sp.Expr], pinned: Iterable[str] = (),
                              kinds: Iterable[str] = ("domain", "defined", "declared")) -> list[tuple[str, Formula]]:
        """The side conditions that the definitions ``exprs`` expand through declare, expanded like the
        expressions (``expand``), each with its origin in words.  This is their one meaning, for every
        engine (``derive.kernel.trusted``: a statement is defined only where its side conditions hold):

        * a definition's ``domain`` (``critical_batch_kv`` only where ``context < critical_context``);
        * where a definition's own expression has a value (its denominators, radicands, logarithms, the
          side conditions the kernel reads), unless the declared domains of its quantities settle it: once
          expanded, sympy folds ``t*(1/t)`` to 1, so the expansion alone would not say it;
        * a derived quantity's declared domain (``positive``: its definition > 0; ``nonnegative``: >= 0)
          and integrality (its definition is an integer).

        So a claim is decided only where its definitions are defined: in a hypothesis they restrict the
        region (like a denominator there), in a goal they must be shown on the region, and a point
        outside them is never a counterexample.  They are never hypotheses of a goal: ``d := a - b``
        declared positive does not prove ``a > b``.  Whether each definition meets its own declaration
        under the library's assumptions is a separate obligation (``derive.checking.checker.obligations``).
        Pinned quantities are leaves (their definition is cut: their value is checked against the
        quantity's domain instead, ``domain_violations``).  Conditions that hold by the structure of the
        expansion alone (a product of positive quantities is positive) are left out.

        ``kinds`` picks them: ``"domain"``, a definition's own ``domain`` (where it is defined: a goal that
        uses it is a statement about those points only, so the checker reads it as a hypothesis),
        ``"defined"``, where its expression has a value (read like ``"declared"`` in a goal: never assumed,
        so a goal whose expansion still has the division must show it, as before the expansion), and
        ``"declared"``, a derived quantity's declared domain and integrality (a claim about its value,
        never assumed)."""
        pinned, kinds = frozenset(pinned), frozenset(kinds)
        out: list[tuple[str, Formula]] = []
        for sym in sorted(free_symbols_of(list(exprs)), key=name_of):
            for kind, label, c in self._conditions_of(self.quantity_of(sym).name, pinned):
                if kind in kinds and (label, c) not in out:
                    out.append((label, c))
        return out

    def formula_conditions(self, formulas: Iterable[Formula], pinned: Iterable[str] = (),
                           kinds: Iterable[str] = ("domain", "defined", "declared")) -> list[tuple[str, Formula]]:
        """``definition_conditions`` of every expression of the formulas."""
        return self.definition_conditions([e for f in formulas for e in f.exprs()], pinned, kinds)

    def _conditions_of(self, name: str, pinned: frozenset[str]) -> tuple[tuple[str, str, Formula], ...]:
        key = (name, pinned)
        cache = self.__dict__.setdefault("_conditions", {})
        if key in cache:
            return cache[key]
        cache[key] = ()  # no cycles (the graph is acyclic); a guard all the same
        q = self.quantities[name]
        out: list[tuple[str, str, Formula]] = []  # (kind, label, condition)
        d = self.definition_of.get(name)
        if d is not None and name not in pinned and q.value is None:
            for sym in sorted(free_symbols_of([d.expr, *(d.domain.exprs() if d.domain is not None else [])]),
                              key=name_of):
                out += [c for c in self._conditions_of(self.quantity_of(sym).name, pinned) if c not in out]
            if d.domain is not None:
                out.append(("domain", f"{name} is defined only where {d.domain}",
                            self.formula_expand(d.domain, pinned)))
            # by the structure of the definition's own expression, its quantities read by their declared
            # domains: a derived one's declaration is itself in ``out`` unless its structure shows it, so
            # what is left out here follows from what is kept (and the expansion, which can be a tree far
            # larger than the definitions, is never walked)
            own = {s: self.quantity_of(s) for s in free_symbols_of([d.expr])}
            pos: set[sp.Symbol] = set()
            nonneg: set[sp.Symbol] = set()
            for s, o in own.items():  # a constant by its value, any other quantity by its declared domain
                if (o.value > 0) if o.value is not None else o.domain == "positive":
                    pos.add(s)
                elif (o.value >= 0) if o.value is not None else o.domain in ("nonnegative", "fraction"):
                    nonneg.add(s)
            # where the expression itself has a value (a denominator, a radicand, a logarithm's argument): sympy
            # folds ``t*(1/t)`` to 1 and ``0*(1/t)`` to 0 once it is expanded, so the expansion alone no longer
            # says that the quantity has no value at t = 0 (an instance claim was proved where eval says undefined)
            for sc in side_conditions(d.expr):
                # a power with a symbolic exponent is read by the engines only on a positive base, but it has a
                # value elsewhere too (0**(k + 1) at k = 1): that condition is the engines', not the value's
                if sc.kind != "power base" and not _settled(sc.condition, pos, nonneg):
                    out.append(("defined", f"{name} is defined only where {sc.condition}",
                                self.formula_expand(sc.condition, pinned)))
            if q.domain in ("positive", "nonnegative", "fraction"):
                want = "pos" if q.domain == "positive" else "nonneg"
                if not structurally_signed(d.expr, want, pos, nonneg):
                    rel = Rel(self.expand(q.sym, pinned), ">" if want == "pos" else ">=", 0)
                    out.append(("declared", f"{name} is declared {q.domain}", rel))
            if q.domain == "fraction":  # its upper end too: a fraction read as nonnegative above broke here
                out.append(("declared", f"{name} is declared {q.domain}", Rel(self.expand(q.sym, pinned), "<=", 1)))
            integers = {s for s, o in own.items() if (o.value.is_integer if o.value is not None else o.integer)}
            if q.integer and not structurally_integer(d.expr, integers):
                out.append(("declared", f"{name} is declared an integer", IsInteger(self.expand(q.sym, pinned))))
        cache[key] = tuple(out)
        return cache[key]


def _settled(condition: Formula, pos: set[sp.Symbol], nonneg: set[sp.Symbol]) -> bool:
    """Whether a side condition ``e > 0``, ``e >= 0`` or ``e != 0`` holds by the structure of ``e`` alone, its
    quantities read by their declared domains (``structurally_signed``)."""
    if not (isinstance(condition, Rel) and condition.rhs == 0):
        return False
    e = condition.lhs
    if condition.op == ">":
        return structurally_signed(e, "pos", pos, nonneg)
    if condition.op == ">=":
        return structurally_signed(e, "nonneg", pos, nonneg)
    if condition.op == "!=":
        return structurally_signed(e, "pos", pos, nonneg) or structurally_signed(-e, "pos", pos, nonneg)
    return False


def _check_steps(steps: tuple[Step, ...], lookup: Callable, where: str) -> None:
    prev_dim = None
    for i, step in enumerate(steps):
        label = f"{where}, step {i + 1}"
        if isinstance(step.formula, Formula):
            check_formula(step.formula, lookup, where=label)
            prev_dim = None
        else:
            dim = dimension_of(step.formula, lookup, where=label)
            if prev_dim is not None and dim != prev_dim and step.formula != 0:
                raise DimensionError(
                    f"step changes dimension: {format_dimension(prev_dim)} to {format_dimension(dim)}", where=label
                )
            prev_dim = dim


# building from modules -------------------------------------------------------------------------------

def topic_from_module(module: ModuleType, seen_quantities: set[int], seen_decls: set[int]) -> Topic:
    """Collect a module's Quantity and Declaration values in the order they were defined."""
    name = module.__name__.rsplit(".", 1)[-1]
    doc = inspect.getdoc(module) or name
    title, _, rest = doc.partition("\n")
    quantities, decls = [], []
    for value in vars(module).values():
        if isinstance(value, Quantity) and id(value) not in seen_quantities:
            seen_quantities.add(id(value))
            quantities.append(value)
        elif isinstance(value, Declaration) and id(value) not in seen_decls:
            seen_decls.add(id(value))
            decls.append(value)
    summary = rest.strip().split("\n\n")[0].replace("\n", " ") if rest.strip() else ""
    prose = getattr(module, "PROSE", ())
    prose = (prose,) if isinstance(prose, str) else tuple(str(p) for p in prose)
    part = getattr(module, "PART", "")
    if not isinstance(part, str):
        raise LibraryError(f"PART of {name} must be text, got {type(part).__name__}")
    return Topic(name=name, title=title.strip(), summary=summary, quantities=tuple(quantities),
                 declarations=tuple(decls), prose=prose, part=part)


def library_from_modules(modules: Iterable[ModuleType], *, preset_dirs: Iterable[Path] = (),
                         model_config_reader: Callable | None = None, figures: Iterable = (),
                         title: str = "", ceilings: Mapping[str, str | None] | None = None,
                         headlines: Iterable[tuple[str, str]] = (),
                         audit_bounds: Iterable[Mapping[str, object]] = ()) -> Library:
    seen_q: set[int] = set()
    seen_d: set[int] = set()
    topics = [topic_from_module(m, seen_q, seen_d) for m in modules]
    return Library([t for t in topics if t.quantities or t.declarations], list(preset_dirs), model_config_reader,
                   list(figures), title, dict(ceilings or {}), headlines=[(str(a), str(b)) for a, b in headlines],
                   audit_bounds=[dict(b) for b in audit_bounds])


def _reachable(edges: Mapping[str, Mapping[str, None]], start: str) -> set[str]:
    """Nodes reached from ``start`` along ``edges`` (``start`` itself not counted); a ``KeyError`` for an
    unknown node, as networkx raises its own error there."""
    seen: set[str] = set()
    todo = list(edges[start])
    while todo:
        d = todo.pop()
        if d not in seen:
            seen.add(d)
            todo.extend(edges[d])
    return seen
