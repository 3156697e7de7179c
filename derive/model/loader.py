"""Loading libraries: the built-in one by name (a ``derive.libraries`` entry point) or a user's
file or folder of declarations written with the same API.

A library module either is a topic itself or lists its topic modules in ``TOPICS``; it may give
``PRESET_DIRS`` (folders with ``hardware/``, ``models/``, ``scenarios/``, ``measurements/``, ``ledger/``
TOML files), a ``MODEL_CONFIG_READER`` (turns a ``config.json`` mapping into quantity values), a
``MODEL_CONFIG_FINDER`` (the path of a Hugging Face id's ``config.json``, for ``--model ORG/NAME``) and
``CEILINGS`` (quantities that are peak rates, which ``--measured`` may replace by measured ones), and
``HEADLINES`` ((label, expression) pairs that ``derive diff`` reports before and after every what-if) and
``AUDIT_BOUNDS`` (tables: the metric columns ``derive audit`` reads and the claims it holds them to; the
format is ``derive.whatif.audit``'s, checked there against the library's names) and ``PREDICT_METRIC`` (the
``AUDIT_BOUNDS`` metric, one with a claim and terms, whose floor ``derive.predict`` gives a simulator),
``INPUT_TABLES`` (tables of inputs a scenario file may give as ``[NAME]``, each member with its default) and
``INPUT_CONSTRAINTS`` (rules every scenario's inputs must meet, each with a plain-words reason; a scenario
that breaks one is refused in one line, or noted where ``refuse`` is false, ``derive.model.scenario``; a rule's
``remedies``, each a ``when`` relation with units and a ``take`` table, put a chip preset's other value in place
of the one the rule found wrong, where the preset gave both) and ``LIVE_CONFIG_FORMULAS`` (the config
reader as formulas for the plain file types, which the live page reads a pasted ``config.json`` with; format
and checks in ``derive.model.config_formulas``).

A user's library is code and may misbehave while it loads: an exception, ``sys.exit(0)`` (which would
otherwise end ``derive check`` with exit 0 and no output, read as success by a paper's CI) or ``print``
(which would corrupt ``--json``).  All of these are caught here: an exception or ``SystemExit`` becomes
a one-line ``LibraryError`` (exit 2), and text the library writes to stdout or stderr while loading is
captured and kept in ``Library.notices`` (the command line reports it as one notice on stderr), so
stdout carries only derive's own output.  Malformed library attributes (``TOPICS``, ``PRESET_DIRS``,
``MODEL_CONFIG_READER``, ``MODEL_CONFIG_FINDER``, ``FIGURES``, ``TITLE``) are ``LibraryError``s naming the attribute.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType

from derive.errors import DeriveError, LibraryError
from derive.model.library import Library, library_from_modules

ENTRY_POINT_GROUP = "derive.libraries"


def _builtin(name: str) -> ModuleType:
    import difflib
    from importlib.metadata import entry_points

    registered = sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            return ep.load()
    close = difflib.get_close_matches(name, registered, n=1)
    raise LibraryError(f"no library named '{name}'",
                       hint=(f"did you mean {close[0]}? " if close else "") + "give a path to a .py file or folder, "
                            f"or a built-in library ({', '.join(registered)})")


def builtin_library_names() -> list[str]:
    """The names of the libraries installed through the ``derive.libraries`` entry point, sorted."""
    from importlib.metadata import entry_points

    return sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)})


def _module_name(*parts: str) -> str:
    """``derive_user_<parts>`` as a Python identifier: the module's name is its chapter's name, which becomes
    file names, anchors and labels of the documents (a file ``a"b<c> d.py`` gave the page
    ``chapter-derive_user_a"b<c> d.html`` and broke the Markdown's ``<a id="...">``).  Other characters become
    ``_``, with a short digest of the original so that two such names stay apart."""
    import hashlib
    import re

    raw = "_".join(parts)
    safe = re.sub(r"\W", "_", raw, flags=re.ASCII)
    if safe != raw:
        safe += "_" + hashlib.sha256(raw.encode("utf-8", "surrogateescape")).hexdigest()[:6]
    return f"derive_user_{safe}"


def _import_path(path: Path) -> list[ModuleType]:
    if not path.exists():
        raise LibraryError(f"library not found: {path}", where="--library")
    try:
        if path.is_file():
            if path.suffix != ".py":
                raise LibraryError(f"library file must be a .py file: {path}", where="--library")
            return [_import_file(path, _module_name(path.stem))]
        if (path / "__init__.py").exists():
            _check_package_name(path)
            _forget_package(path)  # imported before in this process: read it again (it may have been edited)
            sys.path.insert(0, str(path.parent))
            try:
                return [importlib.import_module(path.name)]
            finally:
                sys.path.remove(str(path.parent))
        files = sorted(p for p in path.glob("*.py") if not p.name.startswith(("_", "test_")))
        if not files:
            if (path / "presets").is_dir():
                return []  # a data-only library: presets (e.g. a probe's measurement and ledger files)
            raise LibraryError(f"no .py files in {path}", where="--library")
        return [_import_file(p, _module_name(path.name, p.stem)) for p in files]
    except DeriveError:
        raise
    except SystemExit as err:
        raise LibraryError(f"library {path} called sys.exit({err.code!r}) while loading", where="--library",
                           hint="a library declares quantities and claims; it must not exit") from None
    except RecursionError:
        raise LibraryError(f"could not load library {path}: recursion too deep", where="--library") from None
    except KeyboardInterrupt:
        raise
    except BaseException as err:  # noqa: BLE001 - the user's own code failed to import (BaseException, GeneratorExit
        # included): report it in one line, at its line
        raise LibraryError(f"could not load library {path}: {type(err).__name__}: {_said(err)}",
                           where=f"--library {_failing_line(err, path) or path}", hint=_signature_hint(err)) from None


def _said(err: BaseException) -> str:
    """``str(err)``, or what stands for it where the library's exception cannot say itself."""
    try:
        return str(err)
    except Exception:  # noqa: BLE001 - a user's __str__ that raises
        return "(its message cannot be printed)"


def _failing_line(err: BaseException, path: Path) -> str | None:
    """``file.py:LINE`` of the library's own line that raised (the innermost frame in its file or folder)."""
    root = path.resolve()
    found = None
    tb = err.__traceback__
    while tb is not None:
        name = Path(tb.tb_frame.f_code.co_filename)
        if name.suffix == ".py" and (name == root or root in name.parents):
            found = f"{path if name == root else path / name.relative_to(root)}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def _signature_hint(err: BaseException) -> str | None:
    """For a declaration of derive's given a keyword it does not take (or missing one): the keywords it takes."""
    import dataclasses

    import derive.model.declarations as declarations

    m = re.match(r"(\w+)\.__init__\(\) (got an unexpected keyword argument|missing)", _said(err))
    cls = getattr(declarations, m.group(1), None) if isinstance(err, TypeError) and m else None
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        return None
    names = [f.name for f in dataclasses.fields(cls) if f.init]
    return f"derive.{cls.__name__} takes {', '.join(names)} (docs/own-claims.md)"


def _check_package_name(path: Path) -> None:
    """A package folder is imported under its own name, so that its modules can import each other.  A name
    that is already a module (``json``, ``derive``, ``numpy``) would load that module instead, or shadow it for
    the rest of the run: refused, with the hint to rename the folder."""
    name = path.name
    if not name.isidentifier():
        raise LibraryError(f"library package folder '{name}' is not a Python module name", where="--library",
                           hint="rename the folder: letters, digits and '_'")
    module = sys.modules.get(name)
    origin = getattr(module, "__file__", None) if module is not None else None
    if module is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        origin = spec.origin if spec is not None else None
        if spec is None:
            return
    if origin is not None:
        try:
            if Path(origin).resolve().is_relative_to(path.resolve()):
                return  # this very package, imported before
        except (OSError, RuntimeError):
            pass
    raise LibraryError(f"library package '{name}' has the name of a module Python already has "
                       f"({origin or 'built in'})", where="--library",
                       hint=f"rename the folder {path}, or load its modules as a folder without __init__.py")


def _forget_package(path: Path) -> None:
    """Drop the package at ``path`` and its submodules from ``sys.modules`` (only modules whose files lie
    in that folder), so that importing it executes its current source."""
    name = path.name
    try:
        root = path.resolve()
    except (OSError, RuntimeError):
        return
    for mod_name in [n for n in sys.modules if n == name or n.startswith(name + ".")]:
        origin = getattr(sys.modules.get(mod_name), "__file__", None)
        try:
            if origin is not None and Path(origin).resolve().is_relative_to(root):
                del sys.modules[mod_name]
        except (OSError, RuntimeError):
            continue
    importlib.invalidate_caches()


def _import_file(path: Path, module_name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise LibraryError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module


@contextlib.contextmanager
def _captured(notices: list[str], what: str) -> Iterator[None]:
    """Keep what user code writes to stdout/stderr out of derive's output; note that it did."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        yield
    for stream, text in (("stdout", out.getvalue()), ("stderr", err.getvalue())):
        if text:
            lines = text.count("\n") + (not text.endswith("\n"))
            notices.append(f"{what} wrote {lines} line{'s' if lines != 1 else ''} to {stream} while loading "
                           "(captured, not shown)")


@contextlib.contextmanager
def _where(where: str) -> Iterator[None]:
    """A typed error from declarations built while a library loads says which library it is in."""
    try:
        yield
    except DeriveError as err:
        if not err.where:
            err.where = where
        raise


def _attribute(root: ModuleType, name: str, default: object, spec: str) -> object:
    try:
        return getattr(root, name, default)
    except Exception as err:  # a module __getattr__ that raises
        raise LibraryError(f"attribute {name} of library {spec} cannot be read: {type(err).__name__}: {err}",
                           where=f"--library {spec}") from None


def _list_attribute(root: ModuleType, name: str, spec: str, default: object = ()) -> list:
    value = _attribute(root, name, default, spec)
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise LibraryError(f"{name} must be a list, got {type(value).__name__}", where=f"--library {spec}",
                           hint=f"write {name} = [...]")
    return list(value)


def _root_parts(root: ModuleType, spec: str) -> tuple[list[ModuleType], list[Path], object, list, str | None, dict]:
    """A root module's TOPICS, PRESET_DIRS, MODEL_CONFIG_READER, FIGURES, title and CEILINGS, each checked."""
    where = f"--library {spec}"
    topics = _list_attribute(root, "TOPICS", spec, [root]) if hasattr(root, "TOPICS") else [root]
    for i, t in enumerate(topics):
        if not isinstance(t, ModuleType):
            raise LibraryError(f"TOPICS[{i}] must be a module, got {type(t).__name__}", where=where,
                               hint="list the topic modules themselves: TOPICS = [roofline, batching]")
    dirs = []
    for i, d in enumerate(_list_attribute(root, "PRESET_DIRS", spec)):
        if not isinstance(d, (str, Path)):
            raise LibraryError(f"PRESET_DIRS[{i}] must be a path, got {type(d).__name__}", where=where)
        dirs.append(Path(d))
    reader = _function_attribute(root, "MODEL_CONFIG_READER", spec)
    figures = _list_attribute(root, "FIGURES", spec)
    title = None
    if hasattr(root, "TITLE") or hasattr(root, "TOPICS"):
        raw = _attribute(root, "TITLE", "", spec) or (root.__doc__ or "").strip().split("\n")[0]
        if not isinstance(raw, str):
            raise LibraryError(f"TITLE must be text, got {type(raw).__name__}", where=where)
        title = raw
    ceilings = _attribute(root, "CEILINGS", {}, spec)
    try:
        ceilings = dict(ceilings)
    except (TypeError, ValueError):
        raise LibraryError(f"CEILINGS must be a mapping, got {type(ceilings).__name__}", where=where,
                           hint='write CEILINGS = {"flops": "assumption.id"}') from None
    if not all(isinstance(k, str) and (v is None or isinstance(v, str)) for k, v in ceilings.items()):
        raise LibraryError("CEILINGS must map quantity names to assumption ids (or None)", where=where)
    return topics, dirs, reader, figures, title, ceilings


def _function_attribute(root: ModuleType, name: str, spec: str) -> object:
    """A root's attribute that must be a function (``MODEL_CONFIG_READER``, ``MODEL_CONFIG_FINDER``), or None."""
    value = _attribute(root, name, None, spec)
    if value is not None and not callable(value):
        raise LibraryError(f"{name} must be a function, got {type(value).__name__}", where=f"--library {spec}")
    return value


def _headlines(root: ModuleType, spec: str) -> list[tuple[str, str]]:
    """A root's HEADLINES: (label, expression text) pairs."""
    out = []
    for i, item in enumerate(_list_attribute(root, "HEADLINES", spec)):
        if not (isinstance(item, (tuple, list)) and len(item) == 2 and all(isinstance(x, str) for x in item)):
            raise LibraryError(f"HEADLINES[{i}] must be a (label, expression) pair of strings",
                               where=f"--library {spec}", hint='write HEADLINES = [("B*", "critical_batch")]')
        out.append((item[0], item[1]))
    return out


AUDIT_KEYS = frozenset({"metric", "unit", "meaning", "claim", "measured", "reading", "terms", "defaults",
                        "row_inputs", "unchecked", "when_given", "unless_given", "note", "notes_when_missing"})
_AUDIT_NAME_LISTS = ("row_inputs", "when_given", "unless_given")


def _audit_bounds(root: ModuleType, spec: str) -> list[dict[str, object]]:
    """A root's AUDIT_BOUNDS: tables with known keys and text values (``terms``/``defaults``/``notes_when_missing``:
    text to text; ``row_inputs``, ``when_given``, ``unless_given``: lists of names).  Names and dimensions are
    checked when an audit compiles them."""
    out = []
    where = f"--library {spec}"
    for i, item in enumerate(_list_attribute(root, "AUDIT_BOUNDS", spec)):
        if not (isinstance(item, dict) and isinstance(item.get("metric"), str) and isinstance(item.get("unit"), str)):
            raise LibraryError(f"AUDIT_BOUNDS[{i}] must be a table with text 'metric' and 'unit'", where=where,
                               hint='write {"metric": "tpot", "unit": "s", "claim": "...", "measured": "tpot"}')
        unknown = sorted(set(item) - AUDIT_KEYS)
        if unknown:
            raise LibraryError(f"AUDIT_BOUNDS[{i}] has unknown key '{unknown[0]}'", where=where,
                               hint="known: " + ", ".join(sorted(AUDIT_KEYS)))
        for key, value in item.items():
            ok = (isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
                  if key in ("terms", "defaults", "notes_when_missing") else
                  isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
                  if key in _AUDIT_NAME_LISTS else isinstance(value, str))
            if not ok:
                raise LibraryError(f"AUDIT_BOUNDS[{i}] key '{key}' has the wrong type ({type(value).__name__})",
                                   where=where, hint="terms, defaults and notes_when_missing map text to text; "
                                                     "row_inputs, when_given and unless_given are lists of names")
        if ("claim" in item) == ("unchecked" in item):
            raise LibraryError(f"AUDIT_BOUNDS[{i}] needs exactly one of 'claim' (with 'measured') or 'unchecked' "
                               "(the reason no bound exists)", where=where)
        if "claim" in item and "measured" not in item:
            raise LibraryError(f"AUDIT_BOUNDS[{i}] names a claim but no 'measured' expression", where=where)
        out.append(dict(item))
    return out


def _add_bound(bounds: list[dict[str, object]], bound: dict[str, object]) -> None:
    """``bound`` added to ``bounds``, once: a bound that repeats one already there, or repeats it with notes of its
    own on empty columns (a library that builds on another says more about the same reading), is merged into it."""
    def reading(b: dict[str, object]) -> dict[str, object]:
        return {k: v for k, v in b.items() if k != "notes_when_missing"}

    for i, there in enumerate(bounds):
        if reading(there) == reading(bound):
            notes = {**dict(there.get("notes_when_missing", {})), **dict(bound.get("notes_when_missing", {}))}  # type: ignore[arg-type]
            bounds[i] = {**there, **({"notes_when_missing": notes} if notes else {})}
            return
    bounds.append(bound)


def _predict_metric(root: ModuleType, spec: str, bounds: list[dict[str, object]]) -> str | None:
    """A root's PREDICT_METRIC: the name of an AUDIT_BOUNDS metric declared with a claim and its terms."""
    value = _attribute(root, "PREDICT_METRIC", None, spec)
    if value is None:
        return None
    if not isinstance(value, str):
        raise LibraryError(f"PREDICT_METRIC must be a metric name (text), got {type(value).__name__}",
                           where=f"--library {spec}", hint='write PREDICT_METRIC = "tpot"')
    if not any(b["metric"] == value and "claim" in b and b.get("terms") for b in bounds):
        raise LibraryError(f"PREDICT_METRIC '{value}' is no AUDIT_BOUNDS metric declared with a claim and terms",
                           where=f"--library {spec}", hint="declare the metric's bound, its claim and its terms")
    return value


def _feasibility(root: ModuleType, spec: str) -> list[str]:
    """A root's FEASIBILITY: ids of the claims that state when a scenario can exist at all."""
    out = _list_attribute(root, "FEASIBILITY", spec)
    if not all(isinstance(i, str) for i in out):
        raise LibraryError("FEASIBILITY must list claim ids (text)", where=f"--library {spec}",
                           hint='write FEASIBILITY = ["capacity.memory_fits_in_hbm"]')
    return out


CARD_KEYS = frozenset({"label", "value", "decl", "vary", "unit", "caveats"})
CAVEAT_KEYS = frozenset({"when", "note"})


def _card(root: ModuleType, spec: str) -> list[dict]:
    """A root's CARD: the rows of ``derive card``, each a table with a ``label``, the declaration it rests on
    (``decl``), and either a ``value`` (an expression) or a ``vary`` (the quantity whose margin in the claim
    ``decl`` is shown)."""
    out = []
    for i, row in enumerate(_list_attribute(root, "CARD", spec)):
        ok = (isinstance(row, dict) and set(row) <= CARD_KEYS and isinstance(row.get("label"), str)
              and isinstance(row.get("decl"), str) and (isinstance(row.get("value"), str)
                                                        ^ isinstance(row.get("vary"), str)))
        if not ok:
            raise LibraryError(f"CARD[{i}] must be a table with label, decl and one of value or vary",
                               where=f"--library {spec}",
                               hint='write {"label": "B*", "value": "critical_batch", "decl": "claim.id"}')
        caveats = row.get("caveats", [])
        if not (isinstance(caveats, list) and all(
                isinstance(c, dict) and set(c) == CAVEAT_KEYS and isinstance(c["when"], str)
                and isinstance(c["note"], str) and c["note"].strip() for c in caveats)):
            raise LibraryError(f"CARD[{i}] ('{row['label']}'): 'caveats' is a list of tables with 'when' (a "
                               "relation) and 'note' (words)", where=f"--library {spec}",
                               hint='write "caveats": [{"when": "context >= critical_context", "note": "..."}]')
        out.append(dict(row))
    return out


def _parse_card_caveats(library: Library, where: str) -> None:
    """Each card row's caveats with their relation read once (a card decides it at the scenario's values)."""
    from derive.model.parse import parse_quantity_relation

    for i, row in enumerate(library.card):
        if "caveats" in row:
            row["caveats"] = [{**c, "relation": parse_quantity_relation(
                c["when"], library.symbols(), library.dimension, where=f"{where}: CARD[{i}] caveats[{j}]")}
                for j, c in enumerate(row["caveats"])]


def _live_config_formulas(root: ModuleType, spec: str) -> dict:
    """A root's LIVE_CONFIG_FORMULAS, checked (``derive.model.config_formulas.validate``); {} when absent."""
    value = _attribute(root, "LIVE_CONFIG_FORMULAS", None, spec)
    if value is None:
        return {}
    from derive.model.config_formulas import validate

    return validate(value, where=f"--library {spec}")


TABLE_KEYS = frozenset({"meaning", "members", "gives"})
MEMBER_KEYS = frozenset({"default", "source"})


def _input_tables(root: ModuleType, spec: str) -> dict[str, dict]:
    """A root's INPUT_TABLES: ``{table: {"meaning": text, "members": {quantity: {"default": text, "source":
    text}}, "gives": {quantity: derived quantity}}}``; a member without a default is given or absent; ``gives``
    (optional) names quantities a table in use sets from its members (``chips`` from ``stage_chips``, see
    ``derive.model.scenario``); a derived one given is pinned while the table is in use.  Names are checked
    against the library when it is built (``_check_inputs``)."""
    where = f"--library {spec}"
    value = _attribute(root, "INPUT_TABLES", {}, spec)
    if not isinstance(value, dict):
        raise LibraryError(f"INPUT_TABLES must be a mapping, got {type(value).__name__}", where=where,
                           hint='write INPUT_TABLES = {"layout": {"meaning": "...", "members": {...}}}')
    out: dict[str, dict] = {}
    for name, table in value.items():
        label = f"INPUT_TABLES[{name!r}]"
        if not (isinstance(name, str) and name.isidentifier()):
            raise LibraryError(f"{label}: a table's name must be a plain word", where=where)
        if not (isinstance(table, dict) and set(table) <= TABLE_KEYS and isinstance(table.get("meaning"), str)
                and isinstance(table.get("members"), dict) and table["members"]):
            raise LibraryError(f"{label} must be a table with text 'meaning' and a non-empty mapping 'members'",
                               where=where)
        for member, entry in table["members"].items():
            ok = (isinstance(member, str) and isinstance(entry, dict) and set(entry) <= MEMBER_KEYS
                  and all(isinstance(v, str) for v in entry.values()) and ("default" in entry) == ("source" in entry))
            if not ok:
                raise LibraryError(f"{label} member {member!r} must map to a table with text 'default' and 'source' "
                                   "(or to an empty table: no default)", where=where)
        gives = table.get("gives", {})
        if not (isinstance(gives, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in gives.items())):
            raise LibraryError(f"{label} 'gives' must map quantity names to derived quantity names", where=where,
                               hint='e.g. "gives": {"chips": "stage_chips"}')
        out[name] = {"meaning": table["meaning"], "members": {m: dict(e) for m, e in table["members"].items()},
                     "gives": dict(gives)}
    return out


CONSTRAINT_KEYS = frozenset({"id", "what", "rule", "relation", "reason", "hint", "source", "refuse", "remedies"})
REMEDY_KEYS = frozenset({"when", "take", "set", "reason"})


def _input_constraints(root: ModuleType, spec: str) -> list[dict]:
    """A root's INPUT_CONSTRAINTS: tables with an ``id``, ``what`` it constrains (``layout``), the ``rule`` in
    words, a ``relation`` (a ``derive.logic`` formula over quantities), a plain-words ``reason``, a ``hint``, a
    ``source`` and ``refuse`` (default True; False: a broken rule is a note, not an error)."""
    from derive.kernel.logic import Formula
    from derive.model.declarations import Source

    where = f"--library {spec}"
    out = []
    for i, item in enumerate(_list_attribute(root, "INPUT_CONSTRAINTS", spec)):
        label = f"INPUT_CONSTRAINTS[{i}]"
        if not isinstance(item, dict):
            raise LibraryError(f"{label} must be a table", where=where)
        unknown = sorted(set(item) - CONSTRAINT_KEYS)
        if unknown:
            raise LibraryError(f"{label} has unknown key '{unknown[0]}'", where=where,
                               hint="known: " + ", ".join(sorted(CONSTRAINT_KEYS)))
        for key in ("id", "what", "rule", "reason"):
            if not (isinstance(item.get(key), str) and item[key].strip()):
                raise LibraryError(f"{label} needs a text '{key}'", where=where)
        if not isinstance(item.get("relation"), Formula):
            raise LibraryError(f"{label} ('{item['id']}') needs a 'relation' built with derive.logic",
                               where=where, hint="e.g. logic.IsInteger(heads / tp) or logic.le(pp, layers)")
        if not isinstance(item.get("hint", ""), str) or not isinstance(item.get("refuse", True), bool):
            raise LibraryError(f"{label} ('{item['id']}'): 'hint' is text and 'refuse' true or false", where=where)
        source = item.get("source")
        if not (isinstance(source, Source) or (isinstance(source, str) and source.strip())):
            raise LibraryError(f"{label} ('{item['id']}') needs a source (text or a derive Source)", where=where)
        remedies = item.get("remedies", [])
        if not isinstance(remedies, list) or not all(isinstance(r, dict) for r in remedies):
            raise LibraryError(f"{label} ('{item['id']}'): 'remedies' is a list of tables", where=where)
        for j, r in enumerate(remedies):
            what = f"{label} ('{item['id']}') remedies[{j}]"
            strays = sorted(set(r) - REMEDY_KEYS)
            if strays:
                raise LibraryError(f"{what} has unknown key '{strays[0]}'", where=where,
                                   hint="known: " + ", ".join(sorted(REMEDY_KEYS)))
            if not (isinstance(r.get("when"), str) and isinstance(r.get("reason"), str) and r["reason"].strip()):
                raise LibraryError(f"{what} needs a text 'when' (a relation with units) and a text 'reason'",
                                   where=where, hint='e.g. "when": "bytes_per_param < 2 byte/param"')
            for key in ("take", "set"):
                table = r.get(key, {})
                if not (isinstance(table, dict) and all(isinstance(k, str) and isinstance(v, str)
                                                        for k, v in table.items())):
                    raise LibraryError(f"{what}: '{key}' maps quantity names to text", where=where)
            if not r.get("take"):
                raise LibraryError(f"{what} needs a 'take' (the value to replace -> the preset's value to use)",
                                   where=where, hint='e.g. "take": {"flops": "flops_fp8"}')
        out.append({**item, "source": str(source), "hint": item.get("hint", ""), "refuse": item.get("refuse", True),
                    "remedies": [dict(r, set=dict(r.get("set", {}))) for r in remedies]})
    return out


def _check_inputs(library: Library, specs: list[str]) -> None:
    """The input tables and constraints against the built library: every member and every symbol of a relation
    is a quantity that can be given (not a constant), a default is a value of its quantity, a relation's units
    agree, and ids are unique."""
    from derive.kernel.logic import name_of
    from derive.model.dimensions import check_formula
    from derive.model.parse import parse_quantity_relation, parse_value

    where = f"--library {', '.join(specs)}"
    for name, table in library.input_tables.items():
        for member, entry in table["members"].items():
            q = library.quantities.get(member)
            if q is None or q.value is not None:
                raise LibraryError(f"INPUT_TABLES[{name!r}] member '{member}' is "
                                   + ("no quantity" if q is None else "a constant") + " of the library", where=where)
            if "default" in entry:
                parse_value(entry["default"], q.dimension, where=f"{where}: INPUT_TABLES[{name!r}] {member}",
                            quantity=member)
        for given, source in table.get("gives", {}).items():
            q, s = library.quantities.get(given), library.quantities.get(source)
            label = f"INPUT_TABLES[{name!r}] gives '{given}' from '{source}'"
            # a derived quantity may be given: the table in use pins it (its definition is what holds without
            # the table: the rented chips are the lecture's n chips, a layout gives every stage's)
            if q is None or q.value is not None or given in table["members"]:
                raise LibraryError(f"{label}: '{given}' must be an input or derived quantity of the library outside "
                                   "the table", where=where)
            if s is None or not (library.is_derived(source) or source in table["members"]):
                raise LibraryError(f"{label}: '{source}' must be a member of the table or a quantity derived from "
                                   "them", where=where)
            if q.dimension != s.dimension:
                raise LibraryError(f"{label}: the units differ ({q.unit} and {s.unit})", where=where)
            strays = sorted(set(library.base_inputs(s.sym)) - set(table["members"]))
            if strays:
                raise LibraryError(f"{label}: '{source}' rests on '{strays[0]}', which is no member of the table",
                                   where=where)
    seen: set[str] = set()
    for c in library.input_constraints:
        if c["id"] in seen:
            raise LibraryError(f"INPUT_CONSTRAINTS names '{c['id']}' twice", where=where)
        seen.add(c["id"])
        for sym in sorted(c["relation"].free_symbols(), key=name_of):
            if library.quantity_or_none(sym) is None:
                raise LibraryError(f"INPUT_CONSTRAINTS '{c['id']}' uses '{sym}', which is not a quantity of the "
                                   "library", where=where)
        check_formula(c["relation"], library.dimension, where=f"INPUT_CONSTRAINTS '{c['id']}'")
        for j, r in enumerate(c["remedies"]):
            what = f"{where}: INPUT_CONSTRAINTS '{c['id']}' remedies[{j}]"
            # the relation is read once here (a scenario decides it at its values); parse errors are the library's
            r["relation"] = parse_quantity_relation(r["when"], library.symbols(), library.dimension, where=what)
            for target, source in r["take"].items():
                q, s = library.quantities.get(target), library.quantities.get(source)
                if q is None or s is None or q.value is not None or s.value is not None:
                    raise LibraryError(f"{what}: 'take' maps '{target}' to '{source}': both must be quantities "
                                       "that can be given", where=where)
                if q.dimension != s.dimension:
                    raise LibraryError(f"{what}: '{target}' and '{source}' have different units ({q.unit} and "
                                       f"{s.unit})", where=where)
            for target, text in r["set"].items():
                q = library.quantities.get(target)
                if q is None or q.value is not None:
                    raise LibraryError(f"{what}: 'set' names '{target}', which is no quantity that can be given",
                                       where=where)
                r.setdefault("values", {})[target] = parse_value(text, q.dimension, where=what, quantity=target)


def _distinct(specs: Iterable[str]) -> list[str]:
    """The library specs, each once (``--library x.py --library ./x.py`` loads x.py once: loading it twice
    would declare every quantity twice); an empty spec is an error, never the current folder."""
    out: list[str] = []
    seen: set[str] = set()
    for spec in specs:
        if not isinstance(spec, str) or not spec.strip():
            raise LibraryError("--library is empty", where="--library",
                               hint="give a path to a .py file or folder, or 'lecture' for the built-in library")
        try:
            key = str(Path(spec).resolve()) if Path(spec).exists() else spec
        except (OSError, RuntimeError):
            key = spec
        if key not in seen:
            seen.add(key)
            out.append(spec)
    return out


def _advise_lecture(err: DeriveError, specs: list[str]) -> None:
    """A user library that uses the lecture's quantities (``import theorems.roofline``) but is loaded without
    it: say to load the lecture first (the usual hint, "declare it with derive.Quantity", would mislead)."""
    if "lecture" in specs or not err.message.startswith("symbol '") or "declared quantity" not in err.message:
        return
    name = err.message.split("'")[1]
    try:
        lecture = {q.name for q in load_library(["lecture"]).quantities.values()}
    except DeriveError:
        return
    if name in lecture:
        err.hint = (f"{name} is a quantity of the built-in lecture: load it first, --library lecture "
                    + " ".join(f"--library {s}" for s in specs))


@contextlib.contextmanager
def _interpreter_kept() -> Iterator[None]:
    """User code may change the interpreter's recursion limit while it loads; derive's own limit comes back."""
    limit = sys.getrecursionlimit()
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def load_library(specs: Iterable[str] = ("lecture",)) -> Library:
    """Load and merge libraries, in order; 'lecture' names the built-in one."""
    topics: list[ModuleType] = []
    preset_dirs: list[Path] = []
    reader = None
    finder = None
    figures: list = []
    titles: list[str] = []
    notices: list[str] = []
    ceilings: dict[str, str | None] = {}
    headlines: list[tuple[str, str]] = []
    audit_bounds: list[dict[str, object]] = []
    feasibility: list[str] = []
    card: list[dict] = []
    predict_metric: str | None = None
    input_tables: dict[str, dict] = {}
    input_constraints: list[dict] = []
    live_formulas: dict = {}
    specs = _distinct(specs)
    for spec in specs:
        builtin = "/" not in spec and not spec.endswith(".py") and not Path(spec).exists()
        with _captured(notices, f"library {spec}"), _where(f"--library {spec}"), _interpreter_kept():
            roots = [_builtin(spec)] if builtin else _import_path(Path(spec))
            for root in roots:
                try:
                    parts = _root_parts(root, spec)
                    # a library that builds on another lists its parts again (the serving library lists the
                    # lecture's topics, figures and presets): each is taken once
                    headlines.extend(h for h in _headlines(root, spec) if h not in headlines)
                    for b in _audit_bounds(root, spec):
                        _add_bound(audit_bounds, b)
                    feasibility.extend(f for f in _feasibility(root, spec) if f not in feasibility)
                    card.extend(c for c in _card(root, spec) if c not in card)
                    predict_metric = _predict_metric(root, spec, audit_bounds) or predict_metric
                    for name, table in _input_tables(root, spec).items():
                        if input_tables.setdefault(name, table) != table:
                            raise LibraryError(f"two libraries declare the input table '{name}' differently",
                                               where=f"--library {spec}")
                    input_constraints.extend(c for c in _input_constraints(root, spec) if c not in input_constraints)
                    finder = _function_attribute(root, "MODEL_CONFIG_FINDER", spec) or finder
                    live_formulas = _live_config_formulas(root, spec) or live_formulas
                except DeriveError:
                    raise
                except Exception as err:  # e.g. a module __getattr__ that raises
                    raise LibraryError(f"malformed library: {type(err).__name__}: {err}",
                                       where=f"--library {spec}") from None
                topics.extend(parts[0])
                preset_dirs.extend(d for d in parts[1] if d not in preset_dirs)
                reader = parts[2] or reader
                figures.extend(f for f in parts[3] if all(f is not g for g in figures))
                if parts[4] is not None:
                    titles.append(parts[4])
                ceilings.update(parts[5])
        if Path(spec).is_dir() and (Path(spec) / "presets").is_dir():
            preset_dirs.append(Path(spec) / "presets")
    try:
        with _where(f"--library {', '.join(specs)}"):
            library = library_from_modules(topics, preset_dirs=preset_dirs, model_config_reader=reader, figures=figures,
                                           title="; ".join(t.rstrip(".") for t in titles if t), ceilings=ceilings,
                                           headlines=headlines, audit_bounds=audit_bounds)
    except DeriveError as err:
        _advise_lecture(err, specs)
        raise
    except RecursionError:
        raise LibraryError("a declaration of the library is nested too deeply",
                           where=f"--library {', '.join(specs)}") from None
    except Exception as err:  # a malformed declaration the checks above do not name
        raise LibraryError(f"malformed library: {type(err).__name__}: {_said(err)}",
                           where=f"--library {', '.join(specs)}",
                           hint="declarations are derive.Quantity, Definition, Claim, ... values") from None
    library.notices.extend(notices)
    library.feasibility = list(dict.fromkeys(feasibility))
    library.card = card
    library.predict_metric = predict_metric
    library.input_tables = input_tables
    library.input_constraints = input_constraints
    with _where(f"--library {', '.join(specs)}"):
        _check_inputs(library, specs)
        _parse_card_caveats(library, f"--library {', '.join(specs)}")
    library.model_config_finder = finder
    if live_formulas:
        from derive.model.config_formulas import check_against

        check_against(live_formulas, library.quantities, where=f"--library {', '.join(specs)}")
    library.live_config_formulas = live_formulas
    return library
