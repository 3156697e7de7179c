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
