"""The output cache's import roots: a folder on ``sys.path`` that a run only listed (the import system lists
every one) is held by the names in it and its data files (``root_digest``), not by every byte below it; a
folder the command line names is still held whole."""

from __future__ import annotations

import sys

from derive.checking.cache import OutputCache, root_digest, unseal


def test_a_new_module_or_a_changed_data_file_in_an_import_root_changes_its_digest(tmp_path):
    (tmp_path / "tool").write_bytes(b"\x7fELF" + b"\0" * 64)
    (tmp_path / "notes.toml").write_text("a = 1\n")
    first = root_digest(str(tmp_path))
    (tmp_path / "tool").write_bytes(b"\x7fELF" + b"\1" * 64)  # an executable's bytes: not read
    assert root_digest(str(tmp_path)) == first
    (tmp_path / "notes.toml").write_text("a = 2\n")  # a data file beside the modules: read
    second = root_digest(str(tmp_path))
    assert second != first
    (tmp_path / "shadow.py").write_text("x = 1\n")  # a new module: may change what is imported
    assert root_digest(str(tmp_path)) != second
    (tmp_path / "shadow.py").unlink()
    (tmp_path / "pkg").mkdir()  # a new package folder too
    assert root_digest(str(tmp_path)) != second


def test_a_listed_import_root_is_kept_by_its_names_and_replays_until_one_is_added(tmp_path, monkeypatch):
    root = tmp_path / "root"
    root.mkdir()
    (root / "big.bin").write_bytes(b"\0" * 1024)
    monkeypatch.setattr(sys, "path", [str(root), *sys.path])
    oc = OutputCache(tmp_path / "cache")
    assert oc.store("k", argv=["check"], data_dirs=[], stdout="x\n", stderr="", exit_code=0, read=[str(root)])
    body = unseal(tmp_path / "cache" / "outputs" / "k.json", "output", "k")
    assert str(root) in body["roots"] and str(root) not in body["dirs"]
    assert oc.lookup("k") == ("x\n", "", 0)
    (root / "shadow.py").write_text("x = 1\n")
    assert oc.lookup("k") is None


def test_an_import_root_named_on_the_command_line_is_kept_whole(tmp_path, monkeypatch):
    root = tmp_path / "lib"
    root.mkdir()
    (root / "values.bin").write_bytes(b"\0")
    monkeypatch.setattr(sys, "path", [str(root), *sys.path])
    oc = OutputCache(tmp_path / "cache")
    argv = ["check", "--library", str(root)]
    assert oc.store("k", argv=argv, data_dirs=[], stdout="x\n", stderr="", exit_code=0, read=[str(root)])
    body = unseal(tmp_path / "cache" / "outputs" / "k.json", "output", "k")
    assert str(root) in body["dirs"] and str(root) not in body["roots"]
    (root / "values.bin").write_bytes(b"\1")  # any byte of a named folder: run again
    assert oc.lookup("k") is None
