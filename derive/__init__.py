"""derive: claims as checked, rendered math.

The engine knows nothing about LLMs: it holds quantities with units, declarations (definitions,
assumptions, claims) in a dependency graph, and decides claims with sympy, z3 and interval
arithmetic under stated assumptions.  The public API for writing a library:

    from derive import Quantity, Definition, Assumption, Claim, Step, lecture, paper, spec, si, logic

(``declare_count_dimension`` makes a count of the library's own, like ``prefill_chip``, a unit and a dimension)

and for checking and what-ifs (notebooks, scripts; see ``derive.api``):

    derive.load, derive.scenario, derive.check, derive.evaluate, derive.diff, derive.margin, derive.claim

Names are resolved lazily so that ``derive --help`` does not pay for importing sympy.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types

__version__ = "0.2.0"

_DECL = "derive.model.declarations"
_FIG = "derive.documents.figures"
_EXPORTS = {
    "Assumption": _DECL, "Claim": _DECL, "Definition": _DECL, "Quantity": _DECL, "Source": _DECL, "Step": _DECL,
    "derived": _DECL, "lecture": _DECL, "paper": _DECL, "spec": _DECL, "si": "derive.model.units",
    "declare_count_dimension": "derive.model.units",
    "logic": None, "Figure": _FIG, "Curve": _FIG, "Mark": _FIG,
    # checking and what-if, for notebooks and scripts (derive/api.py)
    **{n: "derive.api" for n in ("load", "scenario", "check", "evaluate", "diff", "margin", "claim",
                                           "predict")},
    "format_value": "derive.model.display",
}
__all__ = sorted(_EXPORTS)

# 0.2.0 (2026-11-23) regrouped the flat modules into subpackages.  The old module paths stay importable
# as aliases of the new ones, so a library written against 0.1.0 (``from derive.logic import ge``) still loads.
MOVED_MODULES = {
    **{f"derive.{n}": f"derive.kernel.{n}" for n in ("logic", "translate", "prover", "interval")},
    **{f"derive.{n}": f"derive.model.{n}" for n in ("units", "dimensions", "declarations", "library", "scenario",
                                                     "parse", "evaluate", "loader")},
    **{f"derive.{n}": f"derive.checking.{n}" for n in ("checker", "cache")},
    **{f"derive.{n}": f"derive.whatif.{n}" for n in ("diff", "margin", "sweep")},
    **{f"derive.{n}": f"derive.documents.{n}" for n in ("render", "latex", "figures", "build", "export")},
    "derive.context": "derive.cli.context", "derive.commands": "derive.cli.commands",
}


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves a 0.1.0 module path to the module at its new place (the same module object)."""

    def find_spec(self, fullname, path, target=None):
        if fullname in MOVED_MODULES:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return importlib.import_module(MOVED_MODULES[spec.name])

    def exec_module(self, module) -> None:
        """Nothing to run: the module was executed at its new place."""


sys.meta_path.insert(0, _MovedModuleFinder())


class _Package(types.ModuleType):
    """``import derive.diff`` (a 0.1.0 module path) makes the import system set ``derive.diff`` to the module;
    the public function of that name (``derive.diff(...)``) must keep its place."""

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, types.ModuleType) and _EXPORTS.get(name) not in (None, value.__name__) \
                and f"derive.{name}" in MOVED_MODULES:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'derive' has no attribute {name!r}")
    module = importlib.import_module(_EXPORTS[name] or f"derive.kernel.{name}")
    value = module if _EXPORTS[name] is None else getattr(module, name)
    globals()[name] = value
    return value
