"""The Python API for notebooks and scripts: load a library, build a scenario, check, evaluate, diff and
find margins, with results that render themselves.

    import derive
    lib = derive.load()                                   # the lecture (or derive.load("my_lib/"))
    sc = derive.scenario(hardware="h100-sxm", set={"context": "128k token/seq"})
    derive.check(scenario=sc)                             # an HTML table in a notebook; .to_dataframe()
    derive.evaluate("critical_batch", "step_time", scenario=sc)
    derive.diff(set={"hbm_bandwidth": "40 TB/s"})        # what moved, headline values before and after
    derive.margin("scaleout_viability", "scaleout_bandwidth")
    derive.claim("batch_optimum_lecture")                 # formula, values substituted, verdict
    derive.predict(hardware="h100-sxm", batch=["1 seq", "64 seq"])  # the proved floor per decode step, by term

Every function takes ``library=`` (default: the lecture, loaded once) and either ``scenario=`` (a
``Scenario`` from ``derive.scenario``) or the scenario keywords themselves (``hardware``, ``model``,
``base``, ``set``, ``assume``, ``si``).  As on the command line, a bare number for a quantity with a unit
is an error unless ``si=True``.  Nothing here prints; results have ``_repr_html_`` / ``_repr_latex_``
for Jupyter, ``to_json()`` and, where a table makes sense, ``to_dataframe()`` (pandas is optional).

This module sits above the documents layer (it uses the library's LaTeX printer) and below the command
line; it is exported lazily from ``derive`` so ``derive --help`` stays instant.
"""

from __future__ import annotations

import dataclasses
import html
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache, wraps
from typing import TypeVar, cast

import sympy as sp

from derive.checking.checker import Checker, ClaimResult, Report
from derive.errors import DeriveError, MissingExtraError, MissingValueError, UsageError
from derive.model.declarations import Claim, Declaration, Definition
from derive.model.display import format_quantity, format_value, tex_text
from derive.model.evaluate import Evaluation
from derive.model.evaluate import evaluate as _evaluate_one
from derive.model.library import Library
from derive.model.scenario import Scenario, build_scenario
from derive.model.units import format_dimension

__all__ = ["CheckReport", "ClaimView", "DiffView", "MarginView", "Values", "check", "claim", "diff", "evaluate",
           "load", "margin", "predict", "scenario"]

VERDICT_COLOURS = {"proved": "#1a7f37", "refuted": "#cf222e", "unknown": "#9a6700", "inconsistent": "#8250df",
                   "assumed": "#57606a", "blocked": "#bc4c00"}


_F = TypeVar("_F", bound=Callable[..., object])


def _names(v: object) -> bool:
    return isinstance(v, (list, tuple, set, frozenset)) and all(isinstance(x, str) for x in v)  # not a generator:
    # the check would use it up


_KINDS = {"None": lambda v: v is None, "str": lambda v: isinstance(v, str), "bool": lambda v: isinstance(v, bool),
          "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
          "Library": lambda v: isinstance(v, Library), "Scenario": lambda v: isinstance(v, Scenario),
          "os.PathLike": lambda v: isinstance(v, os.PathLike), "Sequence[str]": _names, "Iterable[str]": _names,
          "Mapping[str, object]": lambda v: isinstance(v, Mapping) and all(isinstance(k, str) for k in v)}


def _accepts(annotation: str, value: object) -> bool:
    """Whether ``value`` fits a public function's annotation (as written, ``from __future__ import annotations``):
    each ``|`` part a type this API names; a part it does not know accepts anything."""
    return any(p not in _KINDS or _KINDS[p](value) for p in (p.strip() for p in annotation.split("|")))


def _checked(fn: _F) -> _F:
    """``fn`` whose arguments are held to its annotations first: a wrong type is one ``UsageError`` naming the
    parameter (not a TypeError from deep inside)."""
    import inspect

    sig = inspect.signature(fn)

    @wraps(fn)
    def call(*args, **kwargs):
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as err:
            raise UsageError(f"{fn.__name__}(): {err}") from None
        for name, value in bound.arguments.items():
            param = sig.parameters[name]
            if not isinstance(param.annotation, str):
                continue
            for v in value if param.kind is param.VAR_POSITIONAL else (value,):
                if not _accepts(param.annotation, v):
                    raise UsageError(f"{fn.__name__}(): {name} takes {param.annotation}, got {type(v).__name__} "
                                     f"{v!r:.60}", hint=f"see help(derive.{fn.__name__})")
        return fn(*args, **kwargs)
    return cast(_F, call)


def _python_hints(fn: _F) -> _F:
    """``fn`` with a missing value's hint in this API's words: the library's names the command line's ``--set``,
    where a caller here gives ``set={...}``; its arguments held to its annotations (``_checked``)."""
    fn = _checked(fn)

    @wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except MissingValueError as err:
            if err.hint != MissingValueError.default_hint(err.names):
                _in_python_words(err)
                raise
            raise MissingValueError(err.what, err.names, where=_python_where(err.where),
                                    hint=f"give set={{{err.names[0]!r}: VALUE}}, or hardware= and model= presets "
                                         "(the command line's derive presets lists them)") from None
        except DeriveError as err:
            _in_python_words(err)
            raise
    return cast(_F, call)


# where an error names a command-line option, this API's argument: "(in --set pc=50)" is "(in set: pc=50)"
_ARGUMENTS = {"--set": "set", "--assume": "assume", "--vary": "vary", "--unit": "unit", "--hardware": "hardware",
              "--model": "model", "--scenario": "base", "--library": "load()"}


def _python_where(where: str | None) -> str | None:
    option, _, rest = (where or "").partition(" ")
    if option not in _ARGUMENTS:
        return where
    return f"{_ARGUMENTS[option]}: {rest}" if rest else _ARGUMENTS[option]


def _in_python_words(err: DeriveError) -> None:
    """``err`` said in this API's words (its ``where``, and ``--si`` as ``si=True``), its message kept."""
    import re

    hint = re.sub(r"--si\b", "si=True", err.hint) if err.hint else err.hint
    where = _python_where(err.where)
    if (where, hint) != (err.where, err.hint):
        err.where, err.hint = where, hint
        err.args = (err.one_line(),)


# library and scenario -----------------------------------------------------------------------------------------

@lru_cache(maxsize=8)
def _load(specs: tuple[str, ...], stamp: tuple) -> Library:
    from derive.model.loader import load_library

    return load_library(list(specs))


def _source_stamp(specs: tuple[str, ...]) -> tuple:
    """The contents of the files of every library given as a path (hidden entries and ``__pycache__``
    skipped): a library edited in a notebook between two ``load`` calls is read again, not served stale."""
    import hashlib
    from pathlib import Path

    out = []
    for spec in specs:
        root = Path(spec)
        if not root.exists():
            out.append(None)
            continue
        files = [root] if root.is_file() else sorted(
            f for f in root.rglob("*")
            if f.is_file() and not any(p.startswith(".") or p == "__pycache__" for p in f.relative_to(root).parts))
        h = hashlib.sha256()
        for f in files:
            try:
                h.update(str(f).encode() + b"\0" + f.read_bytes() + b"\0")
            except OSError:
                h.update(str(f).encode() + b"\0?\0")
        out.append(h.hexdigest())
    return tuple(out)


@_python_hints
def load(*libraries: str | os.PathLike) -> Library:
    """A library: ``load()`` is the lecture; ``load("path/to/lib")`` a user's; several are merged in order.
    Loaded once per process and argument list while the files of the libraries given as paths are
    unchanged (an edited library is loaded again; a data file it reads from elsewhere is not watched)."""
    specs = tuple(os.fspath(x) for x in libraries) or ("lecture",)
    return _load(specs, _source_stamp(specs))


def _sets(values: Mapping[str, object] | Iterable[str] | None) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        return [values]
    if not isinstance(values, (Mapping, Iterable)):  # set=3 failed deep inside with a TypeError
        raise UsageError(f"set takes a mapping of quantity to value or a list of \"name=value\" texts, got "
                         f"{type(values).__name__} {values!r}")
    try:
        if isinstance(values, Mapping):
            return [f"{k}={v}" for k, v in values.items()]
        return [str(v) for v in values]
    except ValueError as err:  # Python writes an integer of more than 4,300 digits only past a process limit
        from derive.errors import ParseError

        raise ParseError(f"a value given in set cannot be written as text ({err})",
                         hint="numbers must stay within 1e-400 .. 1e400") from None


@_python_hints
def scenario(library: Library | None = None, *, base: str | None = None, hardware: str | None = None,
             model: str | None = None, set: Mapping[str, object] | Iterable[str] | None = None,  # noqa: A002
             assume: str | Iterable[str] | None = None, si: bool = False) -> Scenario:
    """A scenario from its layers, as on the command line: ``base`` (``--scenario``, default the lecture),
    ``hardware``, ``model``, ``set`` ({"hbm_bandwidth": "40 TB/s"} or ["hbm_bandwidth=40 TB/s"]),
    ``assume`` (relations, units allowed: "hbm_bandwidth >= 30 TB/s")."""
    lib = library or load()
    assumes = [assume] if isinstance(assume, str) else list(assume or [])
    return build_scenario(lib, scenario=base, hardware=hardware, model=model, sets=_sets(set), assumes=assumes,
                          si=si)


def _resolve(library: Library | None, sc: Scenario | None, kwargs: dict) -> tuple[Library, Scenario]:
    lib = library or load()
    if sc is not None and kwargs:
        raise UsageError("give either scenario= or scenario keywords (hardware, model, set, ...), not both")
    if sc is not None:  # its type held to the annotation by the public function (``_checked``)
        foreign = sorted(n for n in sc.values if n not in lib.quantities)
        if foreign:  # built with another library: its values would be read where this one declares nothing
            raise UsageError(f"scenario {sc.name} gives {', '.join(foreign[:3])}, which this library does not "
                             "declare: it was built with another library",
                             hint="build the scenario with the library you pass: derive.scenario(library, ...)")
    return lib, sc if sc is not None else scenario(lib, **kwargs)


# escaping ------------------------------------------------------------------------------------------------------

def _h(text: object) -> str:
    return html.escape(str(text), quote=True)


def _verdict_html(verdict: str) -> str:
    colour = VERDICT_COLOURS.get(verdict, "#57606a")
    return f'<span style="color:{colour};font-weight:600">{_h(verdict)}</span>'


def _dataframe(rows: list[dict]):
    try:
        import pandas as pd
    except ImportError:
        raise MissingExtraError("to_dataframe() needs pandas", hint="pip install pandas") from None
    return pd.DataFrame(rows)


# check -----------------------------------------------------------------------------------------------------------

@dataclass
class CheckReport:
    """The verdicts of a check, renderable: an HTML table with coloured verdicts in a notebook."""

    report: Report
    library: Library

    @property
    def results(self) -> list[ClaimResult]:
        return self.report.results

    @property
    def ok(self) -> bool:
        """Every verdict met its expectation, instance claims at another scenario than the library's own aside
        (their expectations are for that one)."""
        return all(r.meets_expectation or r.id in self._elsewhere for r in self.results)

    @property
    def _elsewhere(self) -> frozenset[str]:
        from derive.checking.summary import expectations_elsewhere

        return expectations_elsewhere(self.library, self.report.scenario, self.results)

    def __getitem__(self, claim_id: str | int) -> ClaimResult:
        """One claim's result, by id or by position in ``results`` (as ``Values`` takes a value)."""
        if isinstance(claim_id, int) and not isinstance(claim_id, bool):
            if not -len(self.results) <= claim_id < len(self.results):
                raise UsageError(f"CheckReport[{claim_id}]: there are {len(self.results)} results")
            return self.results[claim_id]
        if not isinstance(claim_id, str):  # report[None] reached difflib's close-match search
            raise UsageError(f"CheckReport[...] takes a claim id (text) or a position, got "
                             f"{type(claim_id).__name__} {claim_id!r}")
        found = self.report.by_id().get(self.library.resolve(claim_id).id)
        if found is None:
            from derive.errors import UnknownNameError

            raise UnknownNameError("checked claim", claim_id, self.report.by_id(), where="CheckReport")
        return found

    @cached_property
    def infeasible(self) -> list[str]:
        """The scenario's violated feasibility bounds, as notes: where no deployment can exist, the verdicts at
        its values describe none (``derive check`` says so too)."""
        from derive.whatif.feasibility import feasibility

        return feasibility(self.library, self.report.scenario).notes

    def summary(self) -> dict[str, int]:
        return self.report.summary()

    def rows(self) -> list[dict]:
        out, elsewhere = [], self._elsewhere
        for r in self.results:
            cex = "; ".join(f"{k} = {_quantity(self.library, k, v)}" for k, v in (r.counterexample or {}).items())
            out.append({"id": r.id, "title": r.title, "verdict": r.verdict, "expected": r.expected,
                        "as_expected": r.meets_expectation or r.id in elsewhere, "engine": r.engine,
                        "counterexample": cex or None,
                        "reason": r.reason if r.verdict != "proved" else None})
        return out

    def to_json(self) -> dict:
        return {**self.report.to_json(), "infeasible": list(self.infeasible)}

    def to_dataframe(self):
        """One row per claim (pandas; ``pip install pandas``)."""
        return _dataframe(self.rows())

    def __repr__(self) -> str:
        from derive.checking.summary import verdict_summary
        from derive.model.scenario import DEFAULT_SCENARIO

        summary = verdict_summary(self.results, self._elsewhere, DEFAULT_SCENARIO)
        return "\n".join([f"<CheckReport {self.report.scenario.name}: {summary}>", *self.infeasible])

    def _repr_html_(self) -> str:
        head = (f"<p><b>scenario {_h(self.report.scenario.name)}</b>: "
                + ", ".join(f"{n} {_verdict_html(v)}" for v, n in self.summary().items()) + "</p>")
        head += "".join(f"<p style='color:{VERDICT_COLOURS['refuted']}'>{_h(n)}</p>" for n in self.infeasible)
        rows = []
        for row in self.rows():
            mark = "" if row["as_expected"] else f" (expected {_h(row['expected'])})"
            detail = row["counterexample"] or row["reason"] or ""
            rows.append(f"<tr><td><code>{_h(row['id'])}</code></td><td>{_h(row['title'])}</td>"
                        f"<td>{_verdict_html(row['verdict'])}{mark}</td><td>{_h(row['engine'])}</td>"
                        f"<td>{_h(detail)}</td></tr>")
        return (head + "<table><thead><tr><th>claim</th><th>title</th><th>verdict</th><th>engine</th>"
                "<th>counterexample or reason</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


def _quantity(library: Library, name: str, si_text: object) -> str:
    value = sp.Rational(str(si_text)) if not isinstance(si_text, sp.Basic) else si_text
    q = library.quantities.get(name)
    return format_value(value, "1") if q is None else format_quantity(value, q.dimension, q.display_unit)


@_python_hints
def check(ids: str | Sequence[str] | None = None, *, library: Library | None = None,
          scenario: Scenario | None = None, workers: int = 1, **scenario_kwargs) -> CheckReport:
    """Check claims (all, or ``ids`` and what they rest on) under the scenario; ``workers`` processes (1: this one)."""
    if workers < 1:  # 0 or -1 would read as "one" silently, or as "all CPUs" to a reader of other tools
        raise UsageError(f"check(): workers must be 1 or more, got {workers}; see help(derive.check)")
    lib, sc = _resolve(library, scenario, scenario_kwargs)
    wanted = [ids] if isinstance(ids, str) else (None if ids is None else list(ids))
    if wanted == []:  # an empty selection is no request to check everything
        raise UsageError("check(): ids is empty; give claim ids, or leave ids out to check every claim")
    return CheckReport(Checker(lib, sc, workers=workers).check(wanted), lib)


# evaluate ----------------------------------------------------------------------------------------------------------

@dataclass
class Values:
    """Values of quantities or expressions under a scenario: ``name = 2,400 seq`` lines, an HTML table."""

    evaluations: list[Evaluation]
    scenario: Scenario
    infeasible: list[str] = field(default_factory=list)  # the scenario's violated feasibility bounds, as notes

    def __post_init__(self) -> None:  # each value carries the marks: one taken out (v[name], a loop) says them
        marks = tuple(self.infeasible)
        self.evaluations = [ev if ev.infeasible == marks else dataclasses.replace(ev, infeasible=marks)
                            for ev in self.evaluations]

    def __getitem__(self, name: str | int) -> Evaluation:
        """One value, by name or position, with the scenario's infeasible marks (its repr, HTML and ``to_json()``
        say them)."""
        if isinstance(name, int) and not isinstance(name, bool):
            if not -len(self.evaluations) <= name < len(self.evaluations):
                raise UsageError(f"Values[{name}]: there are {len(self.evaluations)} values")
            return self.evaluations[name]
        if not isinstance(name, str):
            raise UsageError(f"Values[...] takes a name (text) or a position, got {type(name).__name__} {name!r}")
        for ev in self.evaluations:
            if ev.name == name:
                return ev
        from derive.errors import UnknownNameError

        raise UnknownNameError("evaluated name", name, [ev.name for ev in self.evaluations], where="Values")

    def __iter__(self):
        return iter(self.evaluations)

    def __len__(self) -> int:
        return len(self.evaluations)

    @property
    def notes(self) -> list[str]:
        """What the values rest on that the reader would not guess, as ``derive eval`` prints it: a value that
        breaks its declaration, then the scenario's notes about the inputs used (a lecture value kept, a
        preset's whole node of chips, a deployment default, the config reader's readings)."""
        out = [f"{ev.name}: {n}" for ev in self.evaluations if ev.exact is not None for n in ev.notes]
        return out + self.scenario.notes_for({n for ev in self.evaluations for n in ev.used})

    def rows(self) -> list[dict]:
        """One row per value; ``infeasible``: the bounds the scenario breaks (the same for every row), or None."""
        infeasible = "; ".join(self.infeasible) or None
        return [{"name": ev.name, "display": ev.display, "value": ev.value, "unit": ev.unit,
                 "exact": None if ev.exact is None else str(ev.exact), "reason": ev.reason, "infeasible": infeasible}
                for ev in self.evaluations]

    def to_json(self) -> list[dict]:
        """Each value as ``derive eval --json`` gives one, with the bounds the scenario breaks (``infeasible``)."""
        return [{**ev.to_json(), "infeasible": list(self.infeasible)} for ev in self.evaluations]

    def to_dataframe(self):
        return _dataframe(self.rows())

    def __repr__(self) -> str:
        return "\n".join([*(f"{ev.name} = {ev.display}" for ev in self.evaluations), *self.infeasible,
                          *(f"note: {n}" for n in self.notes)])

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td><code>{_h(ev.name)}</code></td><td>{_h(ev.display)}</td></tr>"
                       for ev in self.evaluations)
        notes = "".join(f"<p style='color:{VERDICT_COLOURS['refuted']}'>{_h(n)}</p>" for n in self.infeasible)
        notes += "".join(f"<p><small>note: {_h(n)}</small></p>" for n in self.notes)
        return (f"<table><caption>scenario {_h(self.scenario.name)}</caption><thead><tr><th>name</th>"
                f"<th>value</th></tr></thead><tbody>{rows}</tbody></table>{notes}")


@_python_hints
def evaluate(*names: str, library: Library | None = None, scenario: Scenario | None = None,
             unit: str | None = None, **scenario_kwargs) -> Values:
    """The values of quantities, definition ids or expressions (``"hbm_bandwidth * 20 ms"``).  A value
    through a definition outside its domain is ``undefined`` with the reason (``exact`` and ``value``
    None)."""
    if not names:
        raise UsageError("evaluate() needs at least one name or expression")
    from derive.model.names import check_value_name

    lib, sc = _resolve(library, scenario, scenario_kwargs)
    from derive.whatif.feasibility import feasibility

    for n in names:
        check_value_name(lib, n, where="derive.evaluate")
    # dependence: which inputs each value rests on at this scenario, so the notes name only those (as eval's)
    return Values([_evaluate_one(lib, sc, n, unit, dependence=True) for n in names], sc, feasibility(lib, sc).notes)


# diff and margin ---------------------------------------------------------------------------------------------------

@dataclass
class DiffView:
    """A what-if: ``derive.whatif.diff.DiffReport`` with its explanations, renderable."""

    report: object  # derive.whatif.diff.DiffReport

    def to_json(self) -> dict:
        return self.report.to_json()  # type: ignore[attr-defined]

    def changed(self) -> list[str]:
        return self.report.changed()  # type: ignore[attr-defined]

    def headlines_dataframe(self):
        return _dataframe([{"quantity": h["label"], "before": h["before"]["display"], "after": h["after"]["display"]}
                           for h in self.report.headlines])  # type: ignore[attr-defined]

    def to_dataframe(self):
        """One row per claim whose verdict changed."""
        rows = []
        for cid in self.changed():
            e = self.report.entry(cid)  # type: ignore[attr-defined]
            rows.append({"id": cid, "title": e["title"], "before": e["before"], "after": e["after"],
                         "group": e.get("group"), "why": "; ".join(v["text"] for v in e.get("violations", [])),
                         "threshold": (e.get("threshold") or {}).get("text")})
        return _dataframe(rows)

    def __repr__(self) -> str:
        return "\n".join(self.report.text_lines())  # type: ignore[attr-defined]

    def _repr_html_(self) -> str:
        r = self.report
        parts = [f"<p><b>what if</b>: {_h(r.baseline.name)} &rarr; {_h(r.current.name)}</p>"]  # type: ignore[attr-defined]
        changes = r.change_lines()  # type: ignore[attr-defined]
        if changes:
            parts.append("<ul>" + "".join(f"<li>{_h(line)}</li>" for line in changes) + "</ul>")
        if r.headlines:  # type: ignore[attr-defined]
            rows = "".join(f"<tr><td>{_h(h['label'])}</td><td>{_h(h['before']['display'])}</td>"
                           f"<td>{'<b>' if h['changed'] else ''}{_h(h['after']['display'])}"
                           f"{'</b>' if h['changed'] else ''}</td></tr>" for h in r.headlines)  # type: ignore[attr-defined]
            parts.append("<table><thead><tr><th>headline</th><th>before</th><th>after</th></tr></thead>"
                         f"<tbody>{rows}</tbody></table>")
        rows = []
        for cid in self.changed():
            e = r.entry(cid)  # type: ignore[attr-defined]
            why = [v["text"] for v in e.get("violations", [])]
            if e.get("threshold"):
                why.append(e["threshold"]["text"])
            rows.append(f"<tr><td><code>{_h(cid)}</code><br>{_h(e['title'])}</td><td>{_h(e.get('group', ''))}</td>"
                        f"<td>{_verdict_html(e['before'])} &rarr; {_verdict_html(e['after'])}</td>"
                        f"<td>{'<br>'.join(_h(w) for w in why)}</td></tr>")
        parts.append("<table><thead><tr><th>claim</th><th>kind</th><th>verdict</th><th>what moved</th></tr></thead>"
                     f"<tbody>{''.join(rows)}</tbody></table>" if rows else "<p>No claim changes verdict.</p>")
        for c in r.conflicts:  # type: ignore[attr-defined]
            parts.append("<p>" + "<br>".join(_h(line) for line in c.lines()) + "</p>")
        parts += [f"<p style='color:{VERDICT_COLOURS['refuted']}'>{_h(n)}</p>"
                  for n in r.infeasible_lines()]  # type: ignore[attr-defined]
        return "".join(parts)


@_python_hints
def diff(baseline: Scenario | str | None = None, *, library: Library | None = None,
         scenario: Scenario | None = None, ids: str | Sequence[str] | None = None, **scenario_kwargs) -> DiffView:
    """What changes from ``baseline`` (a Scenario, a scenario name or TOML path; default the lecture) to
    the scenario: verdict flips with the bound each now violates and the flipping value, headline
    quantities before and after, and any contradiction in the scenario with ``--set`` suggestions."""
    from derive.whatif.diff import diff as _diff
    from derive.whatif.explain import explain_flips

    lib, sc = _resolve(library, scenario, scenario_kwargs)
    base = _resolve(lib, baseline, {})[1] if isinstance(baseline, Scenario) else build_scenario(lib, scenario=baseline)
    report = _diff(lib, base, sc, ids=[ids] if isinstance(ids, str) else ids)  # one id, not its letters
    explain_flips(report)
    return DiffView(report)


@dataclass
class MarginView:
    """Where a claim holds as one quantity varies (``derive.whatif.margin.Margin``), renderable."""

    margin: object  # derive.whatif.margin.Margin

    def to_json(self) -> dict:
        return self.margin.to_json()  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return "\n".join(self.margin.text_lines())  # type: ignore[attr-defined]

    def _repr_html_(self) -> str:
        return "<pre>" + _h(repr(self)) + "</pre>"


@_python_hints
def margin(claim_id: str, vary: str, *, library: Library | None = None, scenario: Scenario | None = None,
           unit: str | None = None, verify: bool = True, **scenario_kwargs) -> MarginView:
    """The exact set of values of ``vary`` on which the claim holds, other values from the scenario."""
    from derive.whatif.margin import margin as _margin

    lib, sc = _resolve(library, scenario, scenario_kwargs)
    return MarginView(_margin(lib, sc, claim_id, vary, unit=unit, verify=verify))


# a claim, handcalcs-style --------------------------------------------------------------------------------------------

@dataclass
class ClaimView:
    """A declaration with its formula and, under the scenario, the formula with values substituted and
    the result (``B^* = R \\cdot S = 300 \\times 8 = 2{,}400\\ \\text{seq}``)."""

    declaration: Declaration
    library: Library
    scenario: Scenario
    result: ClaimResult | None = None
    lines: list[str] = field(default_factory=list)  # LaTeX lines
    values: dict[str, str] = field(default_factory=dict)  # the quantities it is about, at the scenario
    infeasible: list[str] = field(default_factory=list)  # the scenario's violated feasibility bounds, as notes

    def __repr__(self) -> str:
        d = self.declaration
        out = f"{d.kind} {d.id}: {d.title}"
        if self.result is not None:
            out += f"  [{self.result.verdict}]"
        return out + "".join(f"\n  {n} = {v}" for n, v in self.values.items()) + "".join(
            f"\n{n}" for n in self.infeasible)

    def _repr_latex_(self) -> str:
        d = self.declaration
        title = rf"\textbf{{{tex_text(d.title)}}}\ \ \text{{({tex_text(d.id)})}}"
        if self.result is not None:
            title += rf"\ \ \text{{{tex_text(self.result.verdict)}}}"
        body = r" \\ ".join([*self.lines, *(rf"\text{{{tex_text(n)}}}" for n in self.infeasible)])
        return r"$$\begin{array}{l}" + title + (r" \\ " + body if body else "") + r"\end{array}$$"

    def _repr_html_(self) -> str:
        d = self.declaration
        verdict = f" {_verdict_html(self.result.verdict)}" if self.result is not None else ""
        math = "".join(f"<div>$${_h(line)}$$</div>" for line in self.lines)
        values = "".join(f"<tr><td><code>{_h(n)}</code></td><td>{_h(v)}</td></tr>" for n, v in self.values.items())
        table = f"<table><tbody>{values}</tbody></table>" if values else ""
        notes = "".join(f"<p style='color:{VERDICT_COLOURS['refuted']}'>{_h(n)}</p>" for n in self.infeasible)
        return (f"<p><b>{_h(d.title)}</b> <code>{_h(d.id)}</code>{verdict}</p><p>{_h(d.statement)}</p>{math}"
                f"{table}{notes}")


def _value_latex(library: Library, sc: Scenario, sym: sp.Symbol) -> str | None:
    name = str(sym)
    try:
        ev = _evaluate_one(library, sc, name)
    except DeriveError:
        return None
    if ev.exact is None:
        return r"\text{undefined}"
    return _shown_latex(format_value(ev.exact, format_dimension(ev.dimension)))


def _shown_latex(text: str) -> str:
    """``2,400 seq`` -> ``2{,}400\\ \\text{seq}``; ``$2.3/Mtok`` -> ``\\$2.3\\text{/Mtok}``."""
    number, _, unit = text.partition(" ")
    number = number.replace(",", "{,}").replace("$", r"\$")
    if "/" in number and not unit:  # $2.3/Mtok
        number, _, rest = number.partition("/")
        return number + r"\text{/" + tex_text(rest) + "}"
    number = number.replace("∞", r"\infty")
    return number + (r"\ \text{" + tex_text(unit) + "}" if unit else "")


def _printer(library: Library):
    """The library's LaTeX forms, products written with a centred dot (``R \\cdot S``)."""
    from derive.documents.latex import QuantityLatexPrinter, symbol_latex_map

    return QuantityLatexPrinter(symbol_latex_map(library.quantities), {"mul_symbol": "dot"}).doprint


def _handcalc(library: Library, sc: Scenario, d: Definition) -> list[str]:
    printer = _printer(library)
    lhs = library.quantities[d.defines.name].latex
    formula = printer(d.expr)
    lines = [f"{lhs} = {formula}"]
    values = {s: _value_latex(library, sc, s) for s in d.expr.free_symbols}
    if any(v is None for v in values.values()):
        return lines
    result = _value_latex(library, sc, d.defines.sym)
    subs = {s: sp.Symbol(f"v{i}") for i, s in enumerate(sorted(values, key=str))}
    names = {subs[s]: rf"\left({v}\right)" if " " in v or "-" in v else v for s, v in values.items()}
    substituted = sp.latex(d.expr.xreplace(subs), symbol_names=names, mul_symbol="times", order="none")
    lines[0] = f"{lhs} = {formula} = {substituted} = {result}"
    return lines


@_python_hints
def claim(claim_id: str, *, library: Library | None = None, scenario: Scenario | None = None, check: bool = True,
          **scenario_kwargs) -> ClaimView:
    """A declaration shown with its formula; a definition with its values substituted and its result; a
    claim with its goal, the values of its quantities, and (``check=True``) its verdict."""
    from derive.documents.latex import formula_latex

    lib, sc = _resolve(library, scenario, scenario_kwargs)
    d = lib.resolve(claim_id)
    printer = _printer(lib)
    lines: list[str] = []
    result = None
    if isinstance(d, Definition):
        lines = _handcalc(lib, sc, d)
        if d.domain is not None:
            lines.append(r"\text{defined where } " + formula_latex(d.domain, printer))
    elif isinstance(d, Claim):
        lines.append(formula_latex(d.goal, printer))
        for h in d.hypotheses:
            lines.append(r"\text{if } " + formula_latex(h, printer))
        for sym in sorted(d.goal.free_symbols(), key=str):
            q = lib.quantities.get(str(sym))
            value = _value_latex(lib, sc, sym) if q is not None else None
            if q is not None and value is not None:
                definition = lib.definition_of.get(q.name)
                if definition is not None and q.name not in sc.pinned:
                    lines += _handcalc(lib, sc, definition)
                else:
                    lines.append(f"{q.latex} = {value}")
        if check:
            result = Checker(lib, sc).check([d.id]).by_id()[d.id]
    elif getattr(d, "relation", None) is not None:
        lines.append(formula_latex(d.relation, printer))  # type: ignore[attr-defined]
    from derive.model.names import about

    values: dict[str, str] = {}
    for name in about(lib, d) if not isinstance(d, Definition) else [d.defines.name]:
        try:
            values[name] = _evaluate_one(lib, sc, name).display
        except DeriveError:
            continue  # a quantity the scenario gives no value is shown in the formula only
    from derive.whatif.feasibility import feasibility

    shown = bool(values) or result is not None  # values or a verdict at the scenario: where none can exist, say so
    infeasible = feasibility(lib, sc).notes if shown else []
    return ClaimView(d, lib, sc, result, lines, values, infeasible)


# the speed-of-light predictor ----------------------------------------------------------------------------------------

MAX_PREDICT_POINTS = 10_000  # predict's points (batch x context), each a scenario built and decided


def _listed(value: object) -> list[object]:
    return [None] if value is None else list(value) if isinstance(value, (list, tuple)) else [value]


@_python_hints
def predict(*, batch: object = None, context: object = None, library: Library | None = None,
            scenario: Scenario | None = None, **scenario_kwargs):
    """The proved floor on one decode step (the library's ``PREDICT_METRIC``), split into its terms, with the
    claim it rests on and its verdict (``derive.whatif.predict.Floors``; ``to_json()`` is the floors-json
    schema).  ``batch`` and ``context`` (a value or a list: ``["1 seq", "64 seq"]``) are set on top of the
    scenario keywords, one point per combination, batch first; values agree exactly with ``derive.evaluate``."""
    from derive.whatif.audit import checker_for
    from derive.whatif.predict import predict_floors

    batches, contexts = _listed(batch), _listed(context)
    if len(batches) * len(contexts) > MAX_PREDICT_POINTS:  # a scenario each (about 10 ms): 9M points ran for a day
        from derive.errors import BudgetError

        raise BudgetError(f"predict() of {len(batches):,} x {len(contexts):,} points is beyond the budget of "
                          f"{MAX_PREDICT_POINTS:,} points (a scenario each)",
                          hint="derive.margin or derive sweep for large grids")
    varied = [(b, c) for b in batches for c in contexts]
    if scenario is not None and varied != [(None, None)]:
        raise UsageError("give batch= and context= with scenario keywords (hardware, model, set, ...), "
                          "not with scenario=")
    lib = library or load()
    if scenario is not None:
        scenarios = [_resolve(lib, scenario, scenario_kwargs)[1]]
    else:
        base = dict(scenario_kwargs)
        sets = _sets(base.pop("set", None))
        scenarios = [_resolve(lib, None, {**base, "set": [*sets, *(f"{k}={v}" for k, v in (("batch", b),
                                                                                          ("context", c))
                                                                   if v is not None)]})[1]
                     for b, c in varied]
    return predict_floors(lib, scenarios, checker_for(lib))
