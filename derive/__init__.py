"""derive: claims as checked, rendered math.

The engine knows nothing about LLMs: it holds quantities with units, declarations (definitions,
assumptions, claims) in a dependency graph, and decides claims with sympy, z3 and interval
arithmetic under stated assumptions.  The public API for writing a library:

    from derive import Quantity, Definition, Assumption, Claim, Step, lecture, paper, spec, logic
"""

from . import logic
from .declarations import Assumption, Claim, Definition, Quantity, Source, Step, derived, lecture, paper, spec
from .units import si

__all__ = ["Assumption", "Claim", "Definition", "Quantity", "Source", "Step", "derived", "lecture", "logic",
           "paper", "si", "spec"]
__version__ = "0.1.0"
