"""Helpers for engine tests."""

from __future__ import annotations

from derive.model.declarations import Topic
from derive.model.library import Library


def make_library(*items, name: str = "t") -> Library:
    """A one-topic library from quantities and declarations, for engine tests."""
    from derive.model.declarations import Declaration, Quantity

    quantities = tuple(i for i in items if isinstance(i, Quantity))
    decls = tuple(i for i in items if isinstance(i, Declaration))
    return Library([Topic(name, name, "", quantities, decls)])


def close(value, target, rel=None) -> bool:
    """``value`` within a relative ``rel`` (default 1 %) of ``target``, compared exactly."""
    from fractions import Fraction

    rel = Fraction(1, 100) if rel is None else Fraction(rel)
    return abs(Fraction(str(value)) - Fraction(target)) <= rel * abs(Fraction(target))


def scenario_with(library, hardware=None, model=None, **kw):
    """The lecture scenario with a hardware and/or model preset on top (a missing preset is an error)."""
    from derive.model.scenario import build_scenario

    return build_scenario(library, hardware=hardware, model=model, **kw)


def run_cli(capsys, argv):
    """``derive ARGV`` in-process: (exit code, stdout, stderr)."""
    from derive.cli import main

    try:
        code = main(list(argv))
    except SystemExit as stop:
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(code, err):
    """Bad input: exit 2 and exactly one line on stderr, no traceback, no internal error."""
    assert code == 2, err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err and "internal error" not in err, err


def refused_by_reader_and_cli(capsys, tmp_path, config, words):
    """A config.json both the reader (``ScenarioError`` matching ``words``) and ``derive eval --model`` refuse:
    one error line, nothing on stdout."""
    import json

    import pytest

    from derive.errors import ScenarioError
    from theorems.configs import model_values

    with pytest.raises(ScenarioError, match=words):
        model_values(config)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    code, out, err = run_cli(capsys, ["eval", "params_total", "--model", str(path)])
    one_error_line(code, err)
    assert out == ""


def cli_reads_config(capsys, path, total, kv):
    """``derive eval`` prints a config's exact ``params_total`` and ``kv_bytes_per_token`` (as text), and ``derive
    card`` on an H100 gives its decode floor from a proved claim."""
    for quantity, exact in (("params_total", total), ("kv_bytes_per_token", kv)):
        code, out, err = run_cli(capsys, ["eval", quantity, "--model", str(path)])
        assert code == 0, err
        assert out.startswith(quantity) and f"exactly {exact} " in out.splitlines()[0], out
    code, out, err = run_cli(capsys, ["card", "--hardware", "h100-sxm", "--model", str(path)])
    assert code == 0, err
    assert "decode floor" in out and "roofline.latency_floor (proved)" in out, out
