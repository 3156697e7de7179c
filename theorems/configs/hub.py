"""The local Hugging Face cache: where ``--model ORG/NAME`` finds its ``config.json``, offline."""

from __future__ import annotations

import os
import pathlib

from derive.errors import ScenarioError


def _hub_cache() -> pathlib.Path:
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            return pathlib.Path(os.environ[var])
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface")
    return pathlib.Path(home) / "hub"


def find_cached_config(model_id: str) -> pathlib.Path:
    """The ``config.json`` of Hugging Face model ``ORG/NAME`` in the local cache, offline.

    Looks in ``$HF_HUB_CACHE`` (else ``$HF_HOME/hub``, else ``~/.cache/huggingface/hub``) for
    ``models--ORG--NAME/snapshots/*/config.json``, preferring the snapshot ``refs/main`` names.  Uses
    ``huggingface_hub.try_to_load_from_cache`` when that optional package is installed (it knows the
    same layout).  Never downloads.  Raises ``ScenarioError`` (one line) when absent.
    """
    parts = model_id.split("/")
    if len(parts) != 2 or not all(p and p not in (".", "..") and "\\" not in p for p in parts):
        raise ScenarioError(f"not a Hugging Face model id: {model_id!r}", where="--model",
                            hint="give ORG/NAME (e.g. meta-llama/Llama-3.1-8B) or a path to a config.json")
    cache = _hub_cache()
    try:
        from huggingface_hub import try_to_load_from_cache  # optional extra

        found = try_to_load_from_cache(model_id, "config.json", cache_dir=str(cache))
        if isinstance(found, str) and os.path.isfile(found):
            return pathlib.Path(found)
    except ImportError:
        pass
    except Exception:  # noqa: BLE001 - a broken optional package must not hide the plain lookup below
        pass
    repo = cache / ("models--" + "--".join(parts))
    snapshots = repo / "snapshots"
    ref = repo / "refs" / "main"
    candidates: list[pathlib.Path] = []
    try:
        if ref.is_file():
            candidates.append(snapshots / ref.read_text(encoding="utf-8").strip() / "config.json")
    except (OSError, ValueError):  # ValueError: a ref that is not UTF-8 text; the snapshots are still tried
        pass
    try:
        if snapshots.is_dir():
            candidates.extend(sorted(snapshots.glob("*/config.json"), key=lambda p: p.stat().st_mtime,
                                     reverse=True))
    except OSError:
        pass
    for path in candidates:
        try:
            if path.is_file():
                return path
        except (OSError, ValueError):  # a name the file system refuses (a NUL in the ref)
            continue
    raise ScenarioError(f"model {model_id} is not in the local Hugging Face cache ({cache})", where="--model",
                        hint=f"download it first (huggingface-cli download {model_id} config.json) or give "
                             "a path to its config.json")
