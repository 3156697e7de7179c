"""Certificates: what a third party re-checks without trusting derive.

For every ``proved`` and ``inconsistent`` verdict, ``writer`` produces a file: an SMT-LIB2 query whose
``unsat`` establishes the verdict (``smt2``), or, for an interval proof or an exact evaluation that SMT-LIB2
arithmetic cannot state, a JSON box partition with its statement and enclosures as exact rationals.
``recheck`` confirms them with a second solver (cvc5) and ``replay``, an interval evaluator written apart
from the kernel's.  Nothing here decides a verdict: the kernel did; this package lets others confirm it.
"""
