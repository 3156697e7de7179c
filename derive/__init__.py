"""derive: claims as checked, rendered math.

The engine knows nothing about LLMs: it holds quantities with units, declarations (definitions,
assumptions, claims) in a dependency graph, and decides claims with sympy, z3 and interval
arithmetic under stated assumptions.  The public API for writing a library:

    from derive import Quantity, Definition, Assumption, Claim, Step, lecture, paper, spec, si, logic

Names are resolved lazily so that ``derive --help`` does not pay for importing sympy.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "Assumption": "declarations", "Claim": "declarations", "Definition": "declarations", "Quantity": "declarations",
    "Source": "declarations", "Step": "declarations", "derived": "declarations", "lecture": "declarations",
    "paper": "declarations", "spec": "declarations", "si": "units", "logic": None,
    "Figure": "figures", "Curve": "figures", "Mark": "figures",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'derive' has no attribute {name!r}")
    module = importlib.import_module(f"derive.{_EXPORTS[name] or name}")
    value = module if _EXPORTS[name] is None else getattr(module, name)
    globals()[name] = value
    return value
