"""The folders are the architecture: imports point one way, down, with no circle.

Every import in ``derive/`` (module level or inside a function) is read from the source with ``ast``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parents[1] / "derive"
# lower layers never import higher ones; the top-level modules (errors, __init__) sit below everything
LAYERS = ["kernel", "model", "checking", "certify", "whatif", "documents", "probe", "api", "cli"]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(path: Path, name: str, known: set[str]) -> list[tuple[str, list[str]]]:
    """(imported module, names taken from it) for every import in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.append((sub, []) if sub in known else (base, [a.name]))
    return out


def _graph() -> nx.DiGraph:
    mods = _modules()
    g = nx.DiGraph()
    g.add_nodes_from(mods)
    for name, path in mods.items():
        for target, _ in _imports(path, name, set(mods)):
            if target in mods and target != name and not name.startswith(target + ".") and target != "derive":
                g.add_edge(name, target)
    return g


def test_no_import_circle():
    cycles = list(nx.simple_cycles(_graph()))
    assert not cycles, "import circles: " + "; ".join(" -> ".join(c + [c[0]]) for c in cycles)


def _layer(module: str) -> int:
    if module == "derive.__main__":  # ``python -m derive`` is the command line itself
        return len(LAYERS)
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else -1


def test_imports_point_down():
    wrong = [f"{a} -> {b}" for a, b in _graph().edges if _layer(b) > _layer(a)]
    assert not wrong, "a lower layer imports a higher one: " + ", ".join(sorted(wrong))


def test_no_private_name_crosses_a_module():
    mods = _modules()
    bad = []
    for name, path in mods.items():
        for target, names in _imports(path, name, set(mods)):
            if target.startswith("derive") and target != name:
                bad += [f"{name} imports {target}.{n}" for n in names if n.startswith("_") and not n.startswith("__")]
    assert not bad, "; ".join(bad)


def test_engine_never_imports_the_lecture():
    mods = _modules()
    bad = [f"{name} imports {t}" for name, path in mods.items()
           for t, _ in _imports(path, name, set(mods)) if t == "theorems" or t.startswith("theorems.")]
    assert not bad, "; ".join(bad)


def test_the_circle_check_can_fail():
    g = _graph()
    g.add_edge("derive.kernel.logic", "derive.cli")
    g.add_edge("derive.cli", "derive.kernel.logic")
    assert list(nx.simple_cycles(g))


def _private_names(tree: ast.AST) -> set[str]:
    """Leading-underscore names a module defines: functions, classes, globals and attributes it assigns."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return {n for n in out if n.startswith("_") and not n.startswith("__")}


def _foreign_private_reads(sources: dict[str, str]) -> list[str]:
    """``obj._name`` in one module where ``_name`` is private state another module of the package defines and
    this one does not (``k._pos`` read outside the kernel module that keeps it): ``self``/``cls`` aside."""
    trees = {name: ast.parse(text, name) for name, text in sources.items()}
    own = {name: _private_names(tree) for name, tree in trees.items()}
    bad = []
    for name, tree in trees.items():
        others = set().union(*(names for other, names in own.items() if other != name))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if node.attr in others and node.attr not in own[name]:
                bad.append(f"{name}:{node.lineno} reads {ast.unparse(node)}")
    return sorted(bad)


# reads that wait for their owner to publish the state: each must still exist (delete the entry when it goes)
KNOWN_PRIVATE_READS = {"derive.kernel.prover reads k._pos", "derive.kernel.prover reads k._nonneg"}


def test_no_module_reads_another_modules_private_state():
    found = _foreign_private_reads({name: path.read_text() for name, path in _modules().items()})
    by_kind = {line.split(":")[0] + " reads " + line.split(" reads ")[1] for line in found}
    assert by_kind <= KNOWN_PRIVATE_READS, "private state read across modules: " + "; ".join(
        f for f in found if f.split(":")[0] + " reads " + f.split(" reads ")[1] not in KNOWN_PRIVATE_READS)
    assert by_kind == KNOWN_PRIVATE_READS, f"gone, delete from KNOWN_PRIVATE_READS: {KNOWN_PRIVATE_READS - by_kind}"


def test_the_private_state_check_can_fail():
    owner = "class Kernel:\n    def __init__(self):\n        self._pos = set()\n"
    reader = "def sample(k):\n    return k._pos\n"
    assert _foreign_private_reads({"derive.a": owner, "derive.b": reader}) == ["derive.b:2 reads k._pos"]
    # the owner reading its own state through another name is its own business
    assert _foreign_private_reads({"derive.a": owner + "def f(k):\n    return k._pos\n"}) == []


def _error_findings(sources: dict[str, str]) -> list[str]:
    """A bare ``raise DeriveError(...)`` (the base class says nothing of what failed), and an error class
    defined outside ``derive.errors`` (the one hierarchy)."""
    bad = []
    for name, text in sources.items():
        for node in ast.walk(ast.parse(text, name)):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) \
                    and isinstance(node.exc.func, ast.Name) and node.exc.func.id == "DeriveError":
                bad.append(f"{name}:{node.lineno} raises the base class DeriveError")
            if isinstance(node, ast.ClassDef) and name != "derive.errors" and any(
                    isinstance(b, ast.Name) and b.id.endswith("Error") and b.id in ERROR_NAMES for b in node.bases):
                bad.append(f"{name} defines the error {node.name}")
    return bad


ERROR_NAMES = {n for n, v in vars(__import__("derive.errors", fromlist=["x"])).items()
               if isinstance(v, type) and issubclass(v, Exception)}
# the audit's input error stays in derive.whatif.audit until that module moves it to derive.errors
KNOWN_ERROR_CLASSES = {"derive.whatif.audit defines the error AuditInputError"}


def test_errors_are_typed_and_live_in_one_module():
    found = _error_findings({name: path.read_text() for name, path in _modules().items()})
    assert set(found) <= KNOWN_ERROR_CLASSES, "; ".join(f for f in found if f not in KNOWN_ERROR_CLASSES)


def test_the_error_check_can_fail():
    planted = "from derive.errors import DeriveError\nclass OddError(DeriveError):\n    pass\n" \
              "def f():\n    raise DeriveError('x')\n"
    assert _error_findings({"derive.x": planted}) == ["derive.x defines the error OddError",
                                                      "derive.x:5 raises the base class DeriveError"]


# one place prints -------------------------------------------------------------------------------------

# the command line's printing room, and the probe's own command line (python -m derive.probe)
PRINTERS = {"derive.cli.terminal", "derive.probe.__main__"}


def _print_findings(sources: dict[str, str]) -> list[str]:
    """A ``print(...)`` call, or a write to ``sys.stdout`` / ``sys.stderr``, outside the printing rooms: the
    library returns results, and the command line prints them through ``derive.cli.terminal``."""
    bad = []
    for name, text in sources.items():
        if name in PRINTERS:
            continue
        for node in ast.walk(ast.parse(text, name)):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if isinstance(f, ast.Name) and f.id == "print":
                bad.append(f"{name}:{node.lineno} calls print")
            elif isinstance(f, ast.Attribute) and f.attr in ("write", "writelines") \
                    and isinstance(f.value, ast.Attribute) and f.value.attr in ("stdout", "stderr") \
                    and isinstance(f.value.value, ast.Name) and f.value.value.id == "sys":
                bad.append(f"{name}:{node.lineno} writes to sys.{f.value.attr}")
    return bad


def test_one_place_prints():
    found = _print_findings({name: path.read_text() for name, path in _modules().items()})
    assert found == [], "; ".join(found)


def test_the_print_check_can_fail():
    planted = "import sys\ndef f():\n    print('x')\n    sys.stderr.write('y')\n"
    assert _print_findings({"derive.x": planted}) == ["derive.x:3 calls print", "derive.x:4 writes to sys.stderr"]
    assert _print_findings({"derive.cli.terminal": planted}) == []
