"""Fault injection for builds: kills at every step of the switch, random kills, write errors part-way.

The write/switch phase (``derive.documents.build.publish``) runs a toy build (files that all carry one
token) so that thousands of steps are cheap; one test runs the real ``derive build`` of a small library.
After every fault, ``--out`` must be exactly one whole build (all files of the old token, or all of the
new one, plus the user's own file), and the next build must leave no staging or old folder behind.
"""

from __future__ import annotations

import errno
import os
import random
import shutil
import signal
import time
from pathlib import Path

import pytest

from derive.documents import build as build_module
from derive.documents.build import publish
from derive.errors import OutputError

ROOT = Path(__file__).resolve().parents[2]
NAMES = ["status.json", "derivation.md", "figures/a.svg", "figures/b.svg", "graph.json", "deep/er/c.txt"]
SEED = int(os.environ.get("FUZZ_SEED", "20261123"))
KILLS = int(os.environ.get("FUZZ_KILLS", "16"))


def writer(token: str, names=NAMES, pause: float = 0.0):
    def write(staging: Path) -> list[str]:
        for name in names:
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{token} {name}\n")
            if pause:
                time.sleep(pause)
        (staging / "derivation.aux").write_text("LaTeX leftovers are not outputs\n")
        return list(names)
    return write


def whole_build(out: Path) -> str:
    """The token of the one complete build in ``out``; fails on a mixed, partial or missing build."""
    assert out.is_dir(), f"{out} is missing"
    tokens = {(out / n).read_text().split()[0] for n in NAMES if (out / n).exists()}
    present = [n for n in NAMES if (out / n).exists()]
    assert present == NAMES, f"partial build: {sorted(set(NAMES) - set(present))} missing"
    assert len(tokens) == 1, f"mixed build: {tokens}"
    assert (out / "mine.txt").read_text() == "the user's own file\n", "the user's file was lost"
    assert not (out / "derivation.aux").exists()
    return tokens.pop()


def leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def fresh(tmp_path: Path, name: str = "out") -> Path:
    out = tmp_path / name
    publish(out, writer("OLD"))
    (out / "mine.txt").write_text("the user's own file\n")
    return out


def _kill_run(out: Path, kill_at: int, exchange: bool) -> tuple[int, int]:
    """Fork; the child runs a NEW build and dies (``os._exit``: no finally, no cleanup) right before its
    ``kill_at``-th file-system step.  Returns the child's exit status and how many steps it took."""
    read, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        status = 3
        try:
            os.close(read)
            count = [0]

            def step(fn):
                def wrapped(*a, **k):
                    count[0] += 1
                    if count[0] == kill_at:
                        os._exit(137)
                    return fn(*a, **k)
                return wrapped

            for name in ("rename", "link", "symlink", "unlink", "mkdir", "rmdir"):
                setattr(os, name, step(getattr(os, name)))
            shutil.rmtree = step(shutil.rmtree)
            build_module._exchange = step(build_module._exchange) if exchange else (lambda a, b: False)

            def write(staging: Path) -> list[str]:
                for n in NAMES:
                    path = staging / n
                    path.parent.mkdir(parents=True, exist_ok=True)
                    step(path.write_text)(f"NEW {n}\n")
                return NAMES

            publish(out, write)
            os.write(write_end, str(count[0]).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read) as fh:
        steps = fh.read()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), int(steps or 0)


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "two-renames"])
def test_a_kill_at_any_step_leaves_one_whole_build(tmp_path, exchange):
    probe = fresh(tmp_path, "probe")
    code, steps = _kill_run(probe, 0, exchange)  # how many steps a build takes
    assert code == 0 and whole_build(probe) == "NEW"
    assert steps > 10
    for kill_at in range(1, steps + 1):
        out = fresh(tmp_path, f"out{kill_at}")
        code, _ = _kill_run(out, kill_at, exchange)
        assert code == 137
        if out.exists():
            assert whole_build(out) in ("OLD", "NEW")
        else:  # killed between the two renames: the old build is aside, and the next build restores it
            assert not exchange and any(".old-" in n for n in leftovers(out))
        notices: list[str] = []
        publish(out, writer("NEXT"), notices)
        assert whole_build(out) == "NEXT"
        assert leftovers(out) == [], f"kill at step {kill_at}: the next build left {leftovers(out)}"


def test_random_kills_while_writing(tmp_path):
    r = random.Random(SEED)
    out = fresh(tmp_path)
    seen = set()
    for _ in range(KILLS):
        pid = os.fork()
        if pid == 0:
            try:
                publish(out, writer("NEW", pause=0.004))
            finally:
                os._exit(0)
        time.sleep(r.uniform(0, 0.04))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        seen.add(whole_build(out))
        publish(out, writer("OLD"))
        assert leftovers(out) == []
    assert "OLD" in seen


@pytest.mark.parametrize("code", [errno.EACCES, errno.ENOSPC, errno.EROFS, errno.EIO])
def test_write_errors_part_way_are_typed_and_change_nothing(tmp_path, monkeypatch, code):
    r = random.Random(SEED + code)
    for trial in range(6):
        out = fresh(tmp_path, f"out{trial}")
        fail_at = r.randrange(1, 12)
        calls = [0]

        def failing(staging: Path, fail_at=fail_at, calls=calls) -> list[str]:
            for name in NAMES:
                calls[0] += 1
                if calls[0] == fail_at:
                    raise OSError(code, os.strerror(code), str(staging / name))
                path = staging / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"NEW {name}\n")
            return NAMES

        real_rename, real_exchange = os.rename, build_module._exchange

        def rename(a, b, fail_at=fail_at, calls=calls, real_rename=real_rename):
            calls[0] += 1
            if calls[0] == fail_at:
                raise OSError(code, os.strerror(code), str(b))
            return real_rename(a, b)

        def exchange(a, b, fail_at=fail_at, calls=calls, real_exchange=real_exchange):
            calls[0] += 1
            if calls[0] == fail_at:
                raise OSError(code, os.strerror(code), str(b))
            return real_exchange(a, b)

        monkeypatch.setattr(os, "rename", rename)
        monkeypatch.setattr(build_module, "_exchange", exchange)
        try:
            publish(out, failing)
        except OutputError as err:
            line = err.one_line()
            assert "\n" not in line and f"--out {out}" in line and os.strerror(code) in line
            assert whole_build(out) == "OLD"
        else:
            assert whole_build(out) == "NEW"
        finally:
            monkeypatch.undo()
        assert leftovers(out) == []


def test_output_folder_errors_are_typed(tmp_path, monkeypatch):
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(OutputError, match="not a folder"):
        publish(afile, writer("NEW"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OutputError, match="current folder"):
        publish(Path("."), writer("NEW"))
    with pytest.raises(OutputError, match="current folder"):
        publish(tmp_path.parent, writer("NEW"))
    out = fresh(tmp_path)
    monkeypatch.setattr(os, "access", lambda *a, **k: False)  # as a non-root user would see a read-only folder
    with pytest.raises(OutputError, match="read-only") as info:
        publish(out, writer("NEW"))
    assert info.value.where == f"--out {out}"
    assert whole_build(out) == "OLD"


def test_cli_build_write_error_is_one_line_and_a_killed_build_is_cleaned(tmp_path, monkeypatch, capsys):
    from derive.cli import main

    library = str(ROOT / "tests" / "fixtures" / "user_library")
    out = tmp_path / "site"
    monkeypatch.setenv("DERIVE_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["build", "--library", library, "--format", "md", "--out", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    stale = tmp_path / f".site.staging-{2**22 + 12345}-dead"  # a killed build's staging folder (no such process)
    (stale / "figures").mkdir(parents=True)
    (stale / "derivation.md").write_text("half")

    def denied(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(out))

    monkeypatch.setattr(build_module, "_switch", denied)
    code = main(["build", "--library", library, "--format", "md", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert f"--out {out}" in err and "Permission denied" in err and "internal error" not in err
    assert {p.name: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert leftovers(out) == [], "the stale staging folder of a killed build was not removed"


def test_a_symlinked_output_folder_stays_a_link(tmp_path):
    real = fresh(tmp_path, "real")
    link = tmp_path / "site"
    link.symlink_to(real, target_is_directory=True)
    publish(link, writer("NEW"))
    assert link.is_symlink() and whole_build(link) == "NEW" and whole_build(real) == "NEW"
    assert leftovers(real) == [] and leftovers(link) == []
