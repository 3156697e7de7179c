"""The package carries what it reads at run time, says its version, and fails fast without its templates."""

from __future__ import annotations

import importlib
import importlib.resources
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import derive
from derive.cli import main
from derive.documents import render
from derive.errors import ResourceError

ROOT = Path(__file__).resolve().parents[1]


def test_version_is_the_distributions():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["name"] == "derive-llm" and meta["license"] == "MIT" and "version" in meta["dynamic"]
    proc = subprocess.run([sys.executable, "-m", "derive", "--version"], capture_output=True, text=True, check=True)
    assert proc.stdout.strip().startswith(f"derive {derive.__version__}")


def test_templates_are_package_resources():
    for kind in render.TEMPLATE_KINDS:
        folder = importlib.resources.files("derive.documents").joinpath("templates", kind)
        assert any(entry.name.endswith(".j2") for entry in folder.iterdir())
    render.check_templates()


def test_missing_templates_fail_before_any_proving(monkeypatch, capsys):
    class Empty:
        def is_dir(self) -> bool:
            return False

    monkeypatch.setattr(render, "template_folder", lambda kind: Empty())
    with pytest.raises(ResourceError):
        render.check_templates()

    def no_proving(*a, **k):
        raise AssertionError("proving started")

    monkeypatch.setattr("derive.checking.checker.Checker.check", no_proving)
    for argv in (["build", "--out", "unused"], ["export", "batch_optimum"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "templates" in err and "reinstall" in err


def test_old_module_paths_are_aliases_of_the_new_ones():
    from derive.checker import Checker  # 0.1.0 path
    from derive.logic import ge  # 0.1.0 path

    import derive.checking.checker
    import derive.kernel.logic

    assert Checker is derive.checking.checker.Checker and ge is derive.kernel.logic.ge
    for old, new in derive.MOVED_MODULES.items():
        assert importlib.import_module(old) is importlib.import_module(new), old


def test_an_old_module_path_does_not_shadow_a_public_function():
    import derive.diff  # noqa: F401 - the 0.1.0 module path
    import derive.evaluate  # noqa: F401
    import derive.margin  # noqa: F401

    from derive import api

    assert derive.diff is api.diff and derive.margin is api.margin and derive.evaluate is api.evaluate
    assert callable(derive.diff)
