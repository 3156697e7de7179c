"""The trusted base: what a claim means, exact evaluation, and the gate every verdict passes.  Read this first.

Lean keeps a small kernel apart from its tactics: a tactic may fail, it cannot make a false theorem pass.
So here.  Everything else that decides (``derive.kernel.prover``: the z3 route, the sympy shortcut, the
counterexample search; ``derive.kernel.interval``: branch and bound; ``derive.kernel.z3_tactics``: which z3
procedure runs, on what budget and wall clock) is an untrusted *proposer*.  A proposal becomes a verdict
only through ``Kernel.proved``, ``Kernel.refuted`` or ``Kernel.inconsistent``; one the kernel cannot
confirm becomes ``unknown`` with the reason.

The trusted base, read in this order (``docs/trusted-base.md`` gives their sizes, which a test keeps):

``meaning``
    What a problem states (bounds are hypotheses, integrality, declared conditions), what is refused
    (floats, complex numbers, functions without a domain rule), the side conditions of every expression.
``enclose``
    Outward-rounded interval enclosures on a box, strict about definedness.
``evaluate``
    The truth of a formula at a point of exact rationals (exact arithmetic, else certified enclosures).
``routes``
    The proof routes the kernel runs itself: sympy identities, interval certificates, Taylor leaves.
``query``
    z3 in the gate: the queries the kernel translates and whose answers it reads (which z3 procedure
    answers is a proposer's choice: ``Tactics``).
``gate``
    ``Kernel``: the region, the goal's side conditions, and the admission of each verdict.

Outside this package the trusted base also holds ``derive.kernel.logic`` (formula trees),
``derive.kernel.problem`` (the object that crosses in), ``derive.kernel.translate`` (sympy to z3, exact
rationals), z3's ``sat``/``unsat`` answers, sympy's ``expand``/``together``/``cancel`` on assumption-free
symbols (and its automatic evaluation of numbers, trusted only when it gives exactly 0), sympy's ``diff``
of smooth expressions, and mpmath's outward-rounded intervals.

Nothing in this package imports a proposer, a printer or z3's tactics (``tests/test_trusted_base.py``).
"""

from derive.kernel.trusted.enclose import (
    BOX_PRECISION,
    MaybeUndefined,
    OverBudget,
    Undefined,
    Unsettled,
    Unsupported,
    bool_formula,
    enclose,
    truth_on_box,
)
from derive.kernel.trusted.evaluate import ALGEBRA_TERMS, EXACT_BITS, PRECISIONS, evaluate_at, expansion_size
from derive.kernel.trusted.gate import Kernel
from derive.kernel.trusted.meaning import (
    FLOAT_HINT,
    MAX_NODES,
    Refused,
    SideCondition,
    formula_side_conditions,
    lost_side_conditions,
    refusal,
    side_conditions,
    substitute_values,
    tree_size,
    without_mod,
)
from derive.kernel.trusted.query import PlainZ3, Tactics
from derive.kernel.trusted.routes import TAYLOR_NODES, TAYLOR_SYMBOLS

__all__ = [
    "ALGEBRA_TERMS", "BOX_PRECISION", "EXACT_BITS", "FLOAT_HINT", "MAX_NODES", "PRECISIONS", "TAYLOR_NODES",
    "TAYLOR_SYMBOLS", "Kernel", "MaybeUndefined", "OverBudget", "PlainZ3", "Refused", "SideCondition", "Tactics",
    "Undefined", "Unsettled", "Unsupported", "bool_formula", "enclose", "evaluate_at", "expansion_size",
    "formula_side_conditions", "lost_side_conditions", "refusal", "side_conditions", "substitute_values",
    "tree_size", "truth_on_box", "without_mod",
]
