"""Loading libraries: the built-in one by name (a ``derive.libraries`` entry point) or a user's
file or folder of declarations written with the same API.

A library module either is a topic itself or lists its topic modules in ``TOPICS``; it may give
``PRESET_DIRS`` (folders with ``hardware/``, ``models/``, ``scenarios/`` TOML files) and a
``MODEL_CONFIG_READER`` (turns a ``config.json`` mapping into quantity values) and ``HEADLINES``
((label, expression) pairs that ``derive diff`` reports before and after every what-if).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

from derive.errors import DeriveError, LibraryError
from derive.model.library import Library, library_from_modules

ENTRY_POINT_GROUP = "derive.libraries"


def _builtin(name: str) -> ModuleType:
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            return ep.load()
    raise LibraryError(f"no library named '{name}'", hint="give a path to a .py file or folder, or 'lecture'")


def _import_path(path: Path) -> list[ModuleType]:
    if not path.exists():
        raise LibraryError(f"library not found: {path}", where="--library")
    try:
        if path.is_file():
            if path.suffix != ".py":
                raise LibraryError(f"library file must be a .py file: {path}", where="--library")
            return [_import_file(path, f"derive_user_{path.stem}")]
        if (path / "__init__.py").exists():
            sys.path.insert(0, str(path.parent))
            try:
                return [importlib.import_module(path.name)]
            finally:
                sys.path.remove(str(path.parent))
        files = sorted(p for p in path.glob("*.py") if not p.name.startswith(("_", "test_")))
        if not files:
            raise LibraryError(f"no .py files in {path}", where="--library")
        return [_import_file(p, f"derive_user_{path.name}_{p.stem}") for p in files]
    except DeriveError:
        raise
    except Exception as err:  # the user's own code failed to import: report it in one line
        raise LibraryError(f"could not load library {path}: {type(err).__name__}: {err}", where="--library") from None


def _import_file(path: Path, module_name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise LibraryError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def load_library(specs: Iterable[str] = ("lecture",)) -> Library:
    """Load and merge libraries, in order; 'lecture' names the built-in one."""
    topics: list[ModuleType] = []
    preset_dirs: list[Path] = []
    reader = None
    figures: list = []
    headlines: list = []
    titles: list[str] = []
    for spec in specs:
        roots = [_builtin(spec)] if "/" not in spec and not spec.endswith(".py") and not Path(spec).exists() \
            else _import_path(Path(spec))
        for root in roots:
            topics.extend(getattr(root, "TOPICS", [root]))
            preset_dirs.extend(Path(p) for p in getattr(root, "PRESET_DIRS", []))
            reader = getattr(root, "MODEL_CONFIG_READER", None) or reader
            figures.extend(getattr(root, "FIGURES", []))
            headlines.extend(getattr(root, "HEADLINES", []))
            if hasattr(root, "TITLE") or hasattr(root, "TOPICS"):
                titles.append(str(getattr(root, "TITLE", "") or (root.__doc__ or "").strip().split("\n")[0]))
        if Path(spec).is_dir() and (Path(spec) / "presets").is_dir():
            preset_dirs.append(Path(spec) / "presets")
    return library_from_modules(topics, preset_dirs=preset_dirs, model_config_reader=reader, figures=figures,
                                title="; ".join(t.rstrip(".") for t in titles if t), headlines=headlines)
