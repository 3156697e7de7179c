"""The trusted base stays small, named and apart from the proposers.

The trusted base is ``derive/kernel/trusted/`` plus ``logic``, ``problem`` and ``translate``
(``docs/trusted-base.md``).  Its modules import nothing of derive's outside it (but ``derive.errors``),
no proposer, no printer and none of z3's tactic machinery or a clock; each opens with a docstring that
states the invariants it keeps; and the line counts the documentation names are the files' own, within
10 %, so the size a reader is promised cannot drift.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KERNEL = ROOT / "derive" / "kernel"
DOC = ROOT / "docs" / "trusted-base.md"
TRUSTED = sorted([*(KERNEL / "trusted").glob("*.py"), KERNEL / "logic.py", KERNEL / "problem.py",
                  KERNEL / "translate.py"])
OUTSIDE_ALLOWED = {"derive.errors"}  # the one hierarchy of errors
# z3's machinery for choosing procedures and budgets in wall clock: the proposers' business
TACTIC_NAMES = {"Tactic", "SolverFor", "Then", "OrElse", "ParOr", "ParThen", "TryFor", "Repeat", "With",
                "SimpleSolver", "Probe"}
CLOCKS = {"time", "random", "threading", "signal", "multiprocessing", "concurrent"}


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


TRUSTED_MODULES = {_module(p) for p in TRUSTED}


def _imported(source: str, package: str) -> list[str]:
    """Every module an import in ``source`` names (module level or inside a function)."""
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            out.append(base)
    return out


def trust_violations(source: str, module: str) -> list[str]:
    """Why a trusted module's source breaks the rules of the trusted base (empty when it keeps them)."""
    package = module if module.endswith("trusted") else module.rpartition(".")[0]
    bad: list[str] = []
    for target in _imported(source, package):
        top = target.split(".")[0]
        if target.startswith("derive") and target not in TRUSTED_MODULES and target not in OUTSIDE_ALLOWED:
            bad.append(f"{module} imports {target}, outside the trusted base")
        if top in CLOCKS:
            bad.append(f"{module} imports {target}: no clock and no chance in the trusted base")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in TACTIC_NAMES and \
                isinstance(node.value, ast.Name) and node.value.id == "z3":
            bad.append(f"{module} uses z3.{node.attr}: tactic choice belongs to derive.kernel.z3_tactics")
        if isinstance(node, ast.Constant) and node.value == "timeout":
            bad.append(f"{module} sets a wall-clock timeout")
    return bad


@pytest.mark.parametrize("path", TRUSTED, ids=lambda p: _module(p))
def test_a_trusted_module_imports_only_the_trusted_base(path):
    assert trust_violations(path.read_text(encoding="utf-8"), _module(path)) == []


@pytest.mark.parametrize("path", TRUSTED, ids=lambda p: _module(p))
def test_a_trusted_module_states_what_it_keeps(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    assert len(doc.splitlines()) >= 3, f"{_module(path)} needs a module docstring that states its invariants"


@pytest.mark.parametrize("source", [
    "from derive.kernel.prover import decide",
    "from derive.kernel import interval",
    "import derive.kernel.z3_tactics",
    "from derive.documents.render import render",
    "import time",
    "s = z3.Tactic('default', ctx).solver()",
    "s = z3.SolverFor('QF_LIA')",
    "s.set('timeout', 10)",
])
def test_the_check_finds_a_planted_violation(source):
    assert trust_violations(source, "derive.kernel.trusted.gate")


def test_the_check_accepts_the_trusted_bases_own_imports():
    source = ("import z3\nimport sympy as sp\nfrom derive.errors import TranslationError\n"
              "from derive.kernel.logic import Rel\nfrom derive.kernel.trusted.meaning import refusal\n"
              "s = z3.Solver(ctx=ctx)\ns.set('rlimit', 10)\n")
    assert trust_violations(source, "derive.kernel.trusted.gate") == []


def documented_sizes(text: str) -> dict[str, int]:
    """``{path: lines}`` from the documentation's table rows ``| `derive/...py` | 1,234 | ... |``."""
    return {m.group(1): int(m.group(2).replace(",", ""))
            for m in re.finditer(r"^\|\s*`(derive/[\w/]+\.py)`\s*\|\s*([\d,]+)\s*\|", text, re.MULTILINE)}


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_documentation_names_every_trusted_module_and_its_size():
    sizes = documented_sizes(DOC.read_text(encoding="utf-8"))
    paths = {str(p.relative_to(ROOT)) for p in TRUSTED}
    assert set(sizes) == paths, f"documented {sorted(sizes)}, trusted {sorted(paths)}"
    off = {p: (n, _lines(ROOT / p)) for p, n in sizes.items() if abs(_lines(ROOT / p) - n) > 0.1 * _lines(ROOT / p)}
    assert not off, f"documented line counts off by more than 10 % (documented, actual): {off}"
    total = re.search(r"in all,? ([\d,]+) lines", DOC.read_text(encoding="utf-8"))
    actual = sum(_lines(p) for p in TRUSTED)
    assert total is not None and abs(int(total.group(1).replace(",", "")) - actual) <= 0.1 * actual


def test_the_size_check_finds_a_drifted_count():
    text = "| `derive/kernel/problem.py` | 590 | a problem |\n"
    (path, documented), = documented_sizes(text).items()
    assert abs(_lines(ROOT / path) - documented) > 0.1 * _lines(ROOT / path)


def test_no_trusted_module_is_long():
    """Short enough to read in one sitting, module by module."""
    long = {_module(p): _lines(p) for p in TRUSTED if _lines(p) > 650}
    assert not long, long
