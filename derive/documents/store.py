"""A cache of build artifacts (figures, compiled PDFs) by content key, in the cache folder.

``derive build`` spends most of a warm build redrawing figures that have not changed and running
pdflatex on a ``.tex`` that has not changed.  Each is keyed by everything its bytes depend on (for
figures: the engine and library sources, the scenario and the verdicts; for the PDF: the ``.tex``
and the figure files it includes, and the LaTeX engine) and kept under ``<cache>/documents/``.
An entry is a folder written atomically (a temporary folder, then one rename) whose manifest holds a
SHA-256 of every file; a missing, damaged or edited entry is a miss (rebuilt and rewritten), never an
error and never copied into a build, and a folder that cannot be written just means no caching.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

FORMAT = 2


def content_key(*parts: str | bytes) -> str:
    h = hashlib.sha256(f"derive-documents {FORMAT}".encode())
    for p in parts:
        data = p.encode() if isinstance(p, str) else p
        h.update(len(data).to_bytes(8, "big") + data)
    return h.hexdigest()[:40]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class ArtifactStore:
    """Folders of files by key: ``<root>/documents/<kind>-<key>/`` with a ``manifest.json``."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.dir = Path(root) / "documents"

    def get(self, kind: str, key: str, dest: Path) -> dict | None:
        """Copy the entry's files into ``dest`` (same relative names); its manifest, or None on a miss."""
        entry = self.dir / f"{kind}-{key}"
        try:
            manifest = json.loads((entry / "manifest.json").read_text())
            names, digests = manifest["files"], manifest["sha256"]
            if manifest.get("key") != key or sorted(digests) != sorted(names):
                return None
            for name in names:
                if _digest(entry / name) != digests[name]:
                    return None
            for name in names:
                target = dest / name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(entry / name, target)
            return manifest
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, kind: str, key: str, src: Path, names: Iterable[str], manifest: dict | None = None) -> None:
        """Store ``src/name`` for every name, with ``manifest`` (plus the file list)."""
        names = sorted(set(names))
        entry = self.dir / f"{kind}-{key}"
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{kind}-", dir=self.dir))
            try:
                for name in names:
                    target = tmp / name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(src / name, target)
                digests = {name: _digest(tmp / name) for name in names}
                (tmp / "manifest.json").write_text(json.dumps({**(manifest or {}), "files": names, "key": key,
                                                               "sha256": digests}, sort_keys=True))
                if entry.exists():
                    shutil.rmtree(entry, ignore_errors=True)
                os.replace(tmp, entry)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        except OSError:
            pass
