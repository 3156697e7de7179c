"""Caches: proof verdicts by content hash, and whole command outputs by the files they read.

Three layers, all in the per-user cache folder (``platformdirs.user_cache_dir("derive-llm")``, e.g.
``~/.cache/derive-llm`` on Linux; ``--cache-dir DIR`` or ``DERIVE_CACHE_DIR`` elsewhere; ``--no-cache`` or
``DERIVE_NO_CACHE=1`` bypasses them all), never the current folder:

- **Proof cache** (``ProofCache``): one entry per prover problem, a row of one SQLite database
  (``proofs.sqlite3``; the other kinds are files), keyed by a SHA-256 of the problem's
  full text (hypotheses, goal, integrality, bounds as ``srepr``, the resource limit, the search seed) and
  of the engine (``derive.__version__``, the source of the modules that decide: ``prover``, ``translate``,
  ``interval``, ``logic``, and the sympy and z3 versions).  The problem is what the checker hands to
  the prover *after* expansion and substitution of the scenario values it uses, so a changed value,
  assumption, pin or definition changes exactly the keys of the problems it reaches, and nothing else.
- **Results cache** (``ResultsCache``): the own (pre-blocking) results of every claim under one
  scenario, keyed by the engine's and the libraries' source, the scenario's fingerprint (values,
  assumptions, pins), the resource limit and the claim ids: the baseline of ``derive diff`` and the
  pairs of the preset matrix are then read, not re-assembled.
- **Output cache** (``OutputCache``): the printed output and exit code of a read-only command
  (``check``, ``diff``, ``margin``), keyed by the command line, the working directory and the
  environment, and valid while every file the run read is unchanged: the engine's and the library's
  Python modules (with the listing of their folders, so a new module invalidates), the preset
  folders, and files named on the command line.  A hit answers without importing sympy or z3.

Every entry is sealed: it carries its kind, its key and a SHA-256 of its own content, and a read checks
all three, so a damaged, truncated, edited or foreign entry is a miss (re-computed and rewritten), never
an answer.  A cached counterexample is re-checked by the kernel against its problem on every read (a
proof's against the stored problem, a claim's in the results cache against the claim as it is now).  Writes are
atomic (a file's: a temporary file, then ``os.replace``; a row's: SQLite's transaction); a cache folder
that cannot be written is not an error.  The folder is bounded (``DERIVE_CACHE_MAX_MB``, default 256):
after a command that wrote entries, the least recently used ones (a hit refreshes a file's modification
time, a row's time of use) are removed down to 80 % of it.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite3

    from derive.kernel.problem import Outcome, Problem

CACHE_ENV = "DERIVE_CACHE_DIR"
NO_CACHE_ENV = "DERIVE_NO_CACHE"
MAX_MB_ENV = "DERIVE_CACHE_MAX_MB"
DEFAULT_MAX_MB = 256
APP_NAME = "derive-llm"
FORMAT = 4  # bump when the entry layout or the problem text changes
KINDS = ("proofs", "outputs", "results", "documents")  # documents: derive.documents.store, thresholds


def default_cache_dir() -> Path:
    """The per-user cache folder (platformdirs; without it, the XDG rule)."""
    try:
        import platformdirs
    except ImportError:  # pragma: no cover - platformdirs is a dependency
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return Path(base) / APP_NAME
    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def not_a_folder_on_the_way(path: str | os.PathLike, *, itself: bool = True) -> Path | None:
    """The nearest existing path at (``itself``) or above ``path`` that is no folder (a file, a looping link):
    nothing can be made below it.  None where the nearest existing one is a folder, or the file system cannot
    say (what it refuses is named where the path is used)."""
    path = Path(path)
    for above in ([path] if itself else []) + list(path.parents):
        try:
            if os.path.lexists(above):
                return None if os.path.isdir(above) else above
        except OSError:
            return None
    return None


def cache_dir(explicit: str | os.PathLike | None = None) -> Path:
    """The cache folder: ``explicit``, else ``$DERIVE_CACHE_DIR``, else the per-user cache folder (``~`` read as the
    home folder, as a shell would have)."""
    if explicit:
        return Path(os.path.expanduser(explicit))
    env = os.environ.get(CACHE_ENV)
    if not env:
        return default_cache_dir()
    if not env.strip():  # " " made a folder named by a blank in the working folder
        from derive.errors import OutputError

        raise OutputError("it is blank", where=CACHE_ENV, hint="name a folder, or unset it")
    env = os.path.expanduser(env)
    blocked = not_a_folder_on_the_way(env)  # a file there would turn the cache off without a word
    if blocked is not None:
        from derive.errors import OutputError

        what = "is not a folder" if blocked == Path(env) else f"runs through {blocked}, which is not a folder"
        raise OutputError(f"{env} {what}", where=CACHE_ENV,
                          hint="name a folder (it is created when missing), or unset it")
    return Path(env)


def unwritable(folder: Path) -> str | None:
    """Why a cache cannot be kept in ``folder`` (made when missing), else None: a name too long, no permission, a
    read-only disk.  Asked once per run: a write that fails later is skipped as before."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK | os.X_OK):
            return "no permission to write there"
    except OSError as err:
        return err.strerror or type(err).__name__
    return None


def max_bytes() -> int:
    """The size bound of the cache folder, from ``DERIVE_CACHE_MAX_MB`` (a positive number of MB)."""
    text = os.environ.get(MAX_MB_ENV, "")
    try:
        mb = float(text) if text else DEFAULT_MAX_MB
    except ValueError:
        mb = DEFAULT_MAX_MB
    return int(mb * 10**6) if mb > 0 else DEFAULT_MAX_MB * 10**6


def cache_disabled(no_cache: bool = False) -> bool:
    return bool(no_cache) or os.environ.get(NO_CACHE_ENV, "") not in ("", "0")


_TEMPORARY = itertools.count()  # this process's temporary names (with its pid: unique among processes)


def atomic_write(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically (a temporary file beside it, readable by its owner only, then
    renamed over it); False (never an exception) when it cannot be written.  The folder is made only when
    the temporary file cannot be created for want of it: a cold check writes hundreds of entries, and
    ``Path.mkdir`` and ``tempfile.mkstemp`` on each were a twentieth of its workers' time."""
    folder = os.fspath(path.parent)
    tmp = os.path.join(folder, f".{path.name}.{os.getpid()}-{next(_TEMPORARY)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    try:
        try:
            fd = os.open(tmp, flags, 0o600)
        except FileNotFoundError:
            os.makedirs(folder, exist_ok=True)
            fd = os.open(tmp, flags, 0o600)
        except FileExistsError:  # left by a process of the same pid that died: a name of tempfile's
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return True
    except OSError:
        return False


def _sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def seal(kind: str, key: str, body: Any) -> bytes:
    """An entry: its kind, key, format and body, with a SHA-256 of all four."""
    head = _canonical({"format": FORMAT, "kind": kind, "key": key, "body": body})
    # ``_canonical({**head, "sha": ...})`` without writing the body twice: "sha" sorts after the other keys
    return f'{head[:-1]},"sha":"{_sha(head)}"}}'.encode()


def unseal(path: Path, kind: str, key: str) -> Any:
    """The body of the entry at ``path`` when it is intact and is the entry of ``kind`` and ``key``;
    None for anything else (missing, unreadable, truncated, edited, of another kind or format)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return unseal_bytes(data, kind, key)


def unseal_bytes(raw: bytes, kind: str, key: str) -> Any:
    """``unseal`` of an entry's bytes."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(data, dict) or set(data) != {"format", "kind", "key", "body", "sha"}:
        return None
    head = {k: data[k] for k in ("format", "kind", "key", "body")}
    try:
        intact = data["sha"] == _sha(_canonical(head))
    except (TypeError, ValueError):
        return None
    if not intact or head["format"] != FORMAT or head["kind"] != kind or head["key"] != key:
        return None
    return head["body"]


def touch(path: Path) -> None:
    """Mark an entry as just used (least-recently-used eviction reads modification times)."""
    try:
        os.utime(path)
    except OSError:
        pass


# engine fingerprint ----------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def engine_fingerprint() -> str:
    """``derive.__version__``, the source of every module of ``derive/kernel`` (``kernel_sources``: what
    decides), and the sympy and z3 versions."""
    import sympy
    import z3

    from derive import __version__

    h = hashlib.sha256(f"derive {__version__}; sympy {sympy.__version__}; z3 {z3.get_version_string()};"
                       f" format {FORMAT}".encode())
    for name, path in kernel_sources():
        h.update(name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def kernel_sources() -> list[tuple[str, Path]]:
    """The modules of ``derive/kernel``, its trusted base (``kernel/trusted/``) included, by their path
    inside it (so a change to any of them starts a new proof cache)."""
    kernel = Path(__file__).resolve().parent.parent / "kernel"
    return sorted((path.relative_to(kernel).as_posix(), path) for path in kernel.rglob("*.py"))


# problem text ----------------------------------------------------------------------------------------

def formula_text(f: object, memo: dict[int, str] | None = None) -> str:
    """A canonical text of a formula tree: ``srepr`` for sympy expressions, field by field otherwise.
    ``memo`` (by object identity, for objects alive during the call): a declaration that others use is
    written out once, not once per path that reaches it (the lecture's digest made 42,000 calls)."""
    import sympy as sp

    if memo is None:
        memo = {}
    done = memo.get(id(f))
    if done is not None:
        return done
    if isinstance(f, sp.Basic):
        out = _sympy_text(f)
    elif isinstance(f, (tuple, list)):
        out = "[" + ",".join(formula_text(a, memo) for a in f) + "]"
    elif dataclasses.is_dataclass(f) and not isinstance(f, type):
        inner = ",".join(f"{fl.name}={formula_text(getattr(f, fl.name), memo)}" for fl in dataclasses.fields(f))
        out = f"{type(f).__name__}({inner})"
    else:
        return repr(f)
    memo[id(f)] = out
    return out


@functools.lru_cache(maxsize=65536)
def _sympy_text(e: object) -> str:
    """``srepr`` of a leaf (its class, value and assumptions); a node as its class and its arguments'
    texts (a sympy node is its class applied to its arguments).  Cached by value: problems share most
    of their subterms, and ``srepr`` of each whole problem was most of a cached check's key time."""
    import sympy as sp

    from derive.kernel.logic import PRINT_BITS, rational_bits

    assert isinstance(e, sp.Basic)
    if e.is_Rational and rational_bits(e) > PRINT_BITS:
        return f"Rational(0x{int(e.p):x},0x{int(e.q):x})"  # decimal text stops at 4,300 digits (Python's limit)
    if not e.args:
        return sp.srepr(e)
    return f"{type(e).__name__}({','.join(_sympy_text(a) for a in e.args)})"


def problem_text(problem: Problem) -> str:
    """Everything ``prover.decide`` reads from a problem, as canonical text."""
    bounds = sorted((str(s), str(lo), str(hi)) for s, (lo, hi) in problem.bounds.items())
    memo: dict[int, str] = {}
    return "\n".join([
        "hypotheses " + formula_text(list(problem.hypotheses), memo),
        "goal " + formula_text(problem.goal, memo),
        "conditions " + formula_text(list(problem.conditions), memo),
        "integer " + ",".join(sorted(str(s) for s in problem.integer)),
        "bounds " + repr(bounds),
        f"rlimit {problem.rlimit}",
        f"seed {problem.seed}",
    ])


# outcomes <-> JSON -----------------------------------------------------------------------------------

def outcome_to_json(outcome: Outcome) -> dict:
    return {"verdict": outcome.verdict, "engine": outcome.engine, "reason": outcome.reason,
            "counterexample": outcome.as_text_counterexample(), "recheck": outcome.recheck,
            "side_conditions": list(outcome.side_conditions)}


def outcome_from_json(data: object) -> Outcome | None:
    """An ``Outcome`` from its JSON, or None when the data is not a well-formed entry."""
    import sympy as sp

    from derive.kernel.problem import Outcome

    if not isinstance(data, Mapping):
        return None
    verdict, engine = data.get("verdict"), data.get("engine")
    if verdict not in ("proved", "refuted", "unknown", "inconsistent") or not isinstance(engine, str):
        return None
    reason, recheck, cex = data.get("reason"), data.get("recheck"), data.get("counterexample")
    if not (reason is None or isinstance(reason, str)) or not (recheck is None or isinstance(recheck, str)):
        return None
    sides = data.get("side_conditions", [])
    if not isinstance(sides, list) or not all(isinstance(c, str) for c in sides):
        return None
    point = None
    if cex is not None:
        if not isinstance(cex, Mapping):
            return None
        try:
            point = {str(k): sp.Rational(str(v)) for k, v in cex.items()}
        except (TypeError, ValueError, ArithmeticError):  # "1/0" is a ZeroDivisionError
            return None
    return Outcome(verdict, engine, reason, point, recheck, tuple(sides))


# the proof cache -------------------------------------------------------------------------------------

class ProofCache:
    """Prover outcomes on disk, in one SQLite database beside the other entries (``proofs.sqlite3``: a
    table of sealed entries by key, each with the time of its last use), plus an in-memory layer so a
    process never reads the same entry twice.

    One database rather than a file per entry: a cold check of the serving library decides about 400
    problems, and creating that many files (and their folders) was a fifth of its workers' time on a
    virtual machine, where a row is a few microseconds.  Each process opens its own connection (a
    forked worker never uses its parent's: SQLite forbids it); the database is written ahead (WAL) so
    workers and other commands read while one writes.  A folder where the database cannot be opened or
    written is not an error: every read is a miss and every write is dropped.  A damaged database (not
    SQLite's format) is removed and started anew.

    ``hits``, ``misses`` and ``writes`` count this object's traffic (tests and benchmarks read them).
    """

    def __init__(self, directory: str | os.PathLike) -> None:
        self.root = Path(directory)
        self.path = self.root / PROOF_STORE
        self.hits = 0
        self.misses = 0
        self.writes = 0
        self._memory: dict[str, Outcome] = {}
        self._db: sqlite3.Connection | None = None
        self._pid: int | None = None  # the process ``_db`` belongs to
        self._unusable = False
        self._inherited: list[sqlite3.Connection] = []  # a parent's connections, kept open and never used

    def key(self, problem: Problem) -> str:
        return _sha(engine_fingerprint() + "\n" + problem_text(problem))

    def _connection(self) -> sqlite3.Connection | None:
        if self._pid != os.getpid():
            if self._db is not None:  # inherited through fork: closing it here could disturb the parent's
                self._inherited.append(self._db)
            self._db, self._pid, self._unusable = None, os.getpid(), False
        if self._db is None and not self._unusable:
            self._db = open_store(self.path)
            self._unusable = self._db is None
        return self._db

    def read_entry(self, key: str) -> bytes | None:
        """The stored bytes of the entry ``key`` (sealed, not yet checked), or None."""
        db = self._connection()
        if db is None:
            return None
        import sqlite3  # importable: there is a connection

        try:
            row = db.execute("SELECT entry FROM proofs WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error:
            return None
        return row[0] if row is not None and isinstance(row[0], bytes) else None

    def stored_keys(self) -> list[str]:
        """The keys of the entries in the store, in order."""
        db = self._connection()
        if db is None:
            return []
        import sqlite3  # importable: there is a connection

        try:
            return [row[0] for row in db.execute("SELECT key FROM proofs ORDER BY key")]
        except sqlite3.Error:
            return []

    def write_entry(self, key: str, data: bytes) -> bool:
        """Store ``data`` as the entry ``key`` (replacing one there); False when it cannot be written."""
        db = self._connection()
        if db is None:
            return False
        import sqlite3  # importable: there is a connection

        try:
            db.execute("INSERT OR REPLACE INTO proofs (key, entry, used) VALUES (?, ?, ?)", (key, data, time.time()))
        except sqlite3.Error:
            return False
        return True

    def _touch(self, key: str) -> None:
        db = self._connection()
        if db is not None:
            import sqlite3  # importable: there is a connection

            try:
                db.execute("UPDATE proofs SET used = ? WHERE key = ?", (time.time(), key))
            except sqlite3.Error:
                pass

    def get(self, key: str, problem: Problem | None = None) -> Outcome | None:
        """The stored outcome, or None.  With ``problem``, a stored counterexample must pass the exact
        re-check against it (a stored ``refuted`` without ``problem`` is never returned)."""
        if key in self._memory:
            self.hits += 1
            return self._memory[key]
        data = self.read_entry(key)
        outcome = None if data is None else outcome_from_json(unseal_bytes(data, "proof", key))
        if outcome is not None and outcome.counterexample is not None and not _still_refutes(problem, outcome):
            outcome = None
        if outcome is None:
            self.misses += 1
            return None
        self._touch(key)
        self.hits += 1
        self._memory[key] = outcome
        return outcome

    def put(self, key: str, outcome: Outcome) -> None:
        self._memory[key] = outcome
        if self.write_entry(key, seal("proof", key, outcome_to_json(outcome))):
            self.writes += 1

    def decide(self, problem: Problem) -> tuple[Outcome, bool]:
        """The outcome of ``problem`` and whether the prover had to run."""
        from derive.kernel.prover import decide

        key = self.key(problem)
        hit = self.get(key, problem)
        if hit is not None:
            return hit, False
        outcome = decide(problem)
        self.put(key, outcome)
        return outcome, True


PROOF_STORE = "proofs.sqlite3"  # in the cache folder
_STORE_TIMEOUT_S = 10.0  # how long a statement waits for another process's write to finish


def open_store(path: Path) -> sqlite3.Connection | None:
    """A connection to the proof store at ``path`` (made, with its folder, when missing), or None when
    it cannot be opened.  A file there that is not a SQLite database is removed and the store made anew."""
    try:
        import sqlite3  # here, not at the top: a replayed output never opens the store
    except ImportError:  # a Python built without SQLite: no proof store, every read a miss
        return None

    for attempt in range(2):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # made readable by its owner only, as the other entries are (SQLite gives its side files the mode)
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600))
            db = sqlite3.connect(os.fspath(path), timeout=_STORE_TIMEOUT_S, isolation_level=None,
                                 check_same_thread=False)
        except (OSError, sqlite3.Error):
            return None
        try:
            db.execute("PRAGMA auto_vacuum = FULL")  # only before the table exists: removed rows give back space
            db.execute("PRAGMA journal_mode = WAL")  # where the file system cannot, SQLite keeps its default
            db.execute("PRAGMA synchronous = NORMAL")  # a cache: a power cut may lose the last entries, never the file
            db.execute("CREATE TABLE IF NOT EXISTS proofs (key TEXT PRIMARY KEY, entry BLOB NOT NULL,"
                       " used REAL NOT NULL) WITHOUT ROWID")
            return db
        except sqlite3.OperationalError:  # locked past the timeout, read-only, full: not the file's fault
            db.close()
            return None
        except sqlite3.DatabaseError:  # not a database (damaged, or a stray file by that name)
            db.close()
            if attempt or not _remove_store(path):
                return None
    return None


def _remove_store(path: Path) -> bool:
    removed = True
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(f"{path}{suffix}")
        except FileNotFoundError:
            continue
        except OSError:
            removed = False
    return removed


def _still_refutes(problem: Problem | None, outcome: Outcome) -> bool:
    """A cached counterexample is an answer only when it still refutes the problem, exactly: every name
    is a symbol of the problem and the point satisfies the hypotheses and violates the goal."""
    import sympy as sp

    from derive.kernel.trusted import Kernel

    if problem is None or outcome.verdict != "refuted":
        return False
    symbols = {str(s): s for s in problem.symbols()}
    cex = outcome.counterexample or {}
    if not set(cex) <= set(symbols):
        return False
    # the trusted kernel's own exact re-check (derive.kernel.problem.confirms moved there)
    point = {symbols[name]: sp.Rational(value) for name, value in cex.items()}
    return Kernel(problem).refuted(point, outcome.engine) is not None


# the output cache ------------------------------------------------------------------------------------

def _excluded_prefixes() -> tuple[str, ...]:
    import sysconfig

    paths = sysconfig.get_paths()
    out = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    out |= {sys.base_prefix + os.sep + "lib", sys.prefix + os.sep + "lib"}
    return tuple(sorted(p.rstrip(os.sep) + os.sep for p in out if p))


def _site_listing() -> str:
    """Names of the installed distributions (their versions are in the names): a changed
    dependency invalidates cached outputs without importing it."""
    import sysconfig

    names: list[str] = []
    for key in ("purelib", "platlib"):
        folder = sysconfig.get_paths().get(key)
        try:
            names.extend(n for n in os.listdir(folder) if n.endswith((".dist-info", ".egg-info")))
        except (OSError, TypeError):
            continue
    return ",".join(sorted(set(names)))


def path_kind(path: str) -> str:
    """``file``, ``dir``, ``missing`` or ``other``: what an existence probe of ``path`` sees."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return "missing"
    import stat

    return "dir" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "other"


def file_digest(path: str) -> str | None:
    """SHA-256 of a regular file's bytes, read in chunks; None for anything else (missing, a folder, a FIFO or a
    device beside a scenario file, which an open would wait on or read without end)."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        h = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


def dir_digest(path: str) -> str | None:
    """Names and contents of the files below ``path`` (hidden entries and ``__pycache__`` skipped)."""
    if not os.path.isdir(path):
        return None
    h = hashlib.sha256()
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            if name.startswith(".") or name.endswith((".pyc", ".tmp")):
                continue
            full = os.path.join(root, name)
            h.update(os.path.relpath(full, path).encode() + b"\0" + (file_digest(full) or "?").encode() + b"\0")
    return h.hexdigest()


_DATA_SUFFIXES = (".toml", ".json", ".csv", ".yaml", ".yml", ".txt", ".md")


def listing_digest(path: str) -> str | None:
    """The names of the modules directly in ``path`` (a new module invalidates), with the names and
    contents of the data files beside them (a library may read them when it is imported)."""
    try:
        names = sorted(n for n in os.listdir(path) if n.endswith((".py", *_DATA_SUFFIXES)))
    except OSError:
        return None
    h = hashlib.sha256()
    for n in names:
        h.update(n.encode() + b"\0")
        if n.endswith(_DATA_SUFFIXES):
            h.update((file_digest(os.path.join(path, n)) or "?").encode() + b"\0")
    return h.hexdigest()


def root_digest(path: str) -> str | None:
    """The names in an import root (a ``sys.path`` folder, which the import system lists), every entry but
    hidden ones, ``__pycache__`` and byte code, with the contents of the data files among them (as in
    ``listing_digest``): a new module or package there can change what is imported.  What is imported from
    below it is digested file by file (``loaded_source_files``, and ``listing_digest`` of each module's
    folder), and what a run opens or lists there is recorded on its own, so its other contents (a virtual
    environment's ``bin`` holds z3's and ruff's executables, 50 MB) are not read on every cold run."""
    try:
        names = sorted(n for n in os.listdir(path)
                       if not n.startswith(".") and n != "__pycache__" and not n.endswith((".pyc", ".tmp")))
    except OSError:
        return None
    h = hashlib.sha256()
    for n in names:
        h.update(n.encode("utf-8", "surrogateescape") + b"\0")
        full = os.path.join(path, n)
        if n.endswith(_DATA_SUFFIXES) and os.path.isfile(full):
            h.update((file_digest(full) or "?").encode() + b"\0")
    return h.hexdigest()


def _import_roots() -> set[str]:
    return {os.path.abspath(p or os.curdir) for p in sys.path if isinstance(p, str)}


def loaded_source_files() -> list[str]:
    """Files of the imported modules that are neither the standard library nor installed packages:
    the engine (an editable install included) and the libraries of declarations."""
    excluded = _excluded_prefixes()
    out = set()
    for module in list(sys.modules.values()):
        f = getattr(module, "__file__", None)
        if not f:
            continue
        f = os.path.abspath(f)
        if not f.startswith(excluded) and os.path.isfile(f):
            out.add(f)
    return sorted(out)


def paths_in_argv(argv: Iterable[str]) -> list[str]:
    """Existing files or folders named by command-line tokens (``--model cfg.json``, ``--vary`` excluded)."""
    out = set()
    for token in argv:
        for candidate in (token, token.partition("=")[2]):
            if candidate and not candidate.startswith("-") and os.path.exists(candidate):
                out.add(os.path.abspath(candidate))
    return sorted(out)


# Variables that differ between shells without changing what a command computes.
_VOLATILE_ENV = frozenset({"_", "OLDPWD", "PWD", "SHLVL", "TERM", "COLUMNS", "LINES", "TMUX_PANE", "WINDOWID",
                           "SSH_CLIENT", "SSH_CONNECTION", "SSH_TTY", "SSH_AUTH_SOCK", "DISPLAY", "COLORTERM"})


class OutputCache:
    """Stdout, stderr and exit code of a read-only command, valid while its input files are unchanged.

    The key holds the command line, the working directory and the whole environment (a library may read
    any variable); the entry lists every file and folder the run read (``ReadTracker``), with digests."""

    def __init__(self, directory: str | os.PathLike) -> None:
        self.dir = Path(directory) / "outputs"

    @staticmethod
    def run_key(argv: list[str]) -> str:
        env = sorted((k, v) for k, v in os.environ.items() if k not in _VOLATILE_ENV)
        return _sha(json.dumps({"argv": argv, "cwd": os.getcwd(), "env": env, "python": sys.version,
                                "executable": sys.executable, "site": _site_listing(), "format": FORMAT}))

    def lookup(self, key: str) -> tuple[str, str, int] | None:
        path = self.dir / f"{key}.json"
        data = unseal(path, "output", key)
        if not isinstance(data, Mapping):
            return None
        try:
            for file, digest in data["files"].items():
                if file_digest(file) != digest:
                    return None
            for folder, digest in data["dirs"].items():
                if dir_digest(folder) != digest:
                    return None
            for folder, digest in data["listings"].items():
                if listing_digest(folder) != digest:
                    return None
            for folder, digest in data.get("roots", {}).items():
                if root_digest(folder) != digest:
                    return None
            for path, kind in data["probed"].items():
                if path_kind(path) != kind:
                    return None
            out, err, code = data["stdout"], data["stderr"], data["exit"]
        except (KeyError, AttributeError, TypeError):
            return None
        if not (isinstance(out, str) and isinstance(err, str) and isinstance(code, int)) or code not in (0, 1):
            return None
        touch(path)
        return out, err, code

    def store(self, key: str, *, argv: list[str], data_dirs: Iterable[str | os.PathLike], stdout: str, stderr: str,
              exit_code: int, read: Iterable[str] = (), probed: Iterable[str] = ()) -> bool:
        """``read``: files and folders the run opened (a ``ReadTracker``'s), beyond its loaded modules;
        ``probed``: paths whose existence or kind it asked (``os.stat``), or that it tried to open and did
        not find: what each was (a file, a folder, missing) is part of the entry."""
        files = {f: file_digest(f) for f in loaded_source_files()}
        dirs: dict[str, str | None] = {}
        kinds: dict[str, str] = {}
        root = os.path.abspath(self.dir.parent)
        excluded = _excluded_prefixes()

        def outside(p: str) -> bool:  # the cache itself (--cache-dir) and installed packages are not inputs
            return not (p == root or p.startswith(root + os.sep) or root.startswith(p + os.sep)
                        or p.startswith(excluded))

        roots: dict[str, str | None] = {}  # import roots the run only listed (``root_digest``)
        import_roots = _import_roots()
        named = {os.path.abspath(p) for p in [*data_dirs, *paths_in_argv(argv)]}
        for p in [*data_dirs, *paths_in_argv(argv), *read]:
            p = os.path.abspath(p)
            if not outside(p):
                continue
            if os.path.isdir(p) and p in import_roots and p not in named:
                roots[p] = root_digest(p)
            elif os.path.isdir(p):
                dirs[p] = dir_digest(p)
            elif os.path.isfile(p):
                files[p] = file_digest(p)
            else:  # looked for and not found: its appearance changes what the run would read
                kinds[p] = path_kind(p)
        for p in probed:
            p = os.path.abspath(p)
            if outside(p) and p not in files and p not in dirs and p not in roots:
                kinds[p] = path_kind(p)
        listings = {d: listing_digest(d) for d in sorted({os.path.dirname(f) for f in files})}
        body = {"argv": argv, "files": files, "dirs": dirs, "listings": listings, "roots": roots, "probed": kinds,
                "stdout": stdout, "stderr": stderr, "exit": exit_code}
        return atomic_write(self.dir / f"{key}.json", seal("output", key, body))


class ReadTracker:
    """Records the files and folders a run opens, so that an output replayed from the cache is
    invalidated by any of them changing: a library that reads a data file outside its own folder
    included.  While a tracker is active, Python's ways of opening files and listing folders are
    wrapped: ``io.open`` (which is ``open`` and what ``pathlib`` uses), ``os.open``, ``os.listdir`` and
    ``os.scandir``, and the existence probes ``os.stat``, ``os.lstat`` and ``os.access`` (what
    ``os.path.exists``, ``isfile`` and ``pathlib``'s ``exists`` call: a library that reads a file only when
    it exists reads nothing on the first run, and its kind, missing, is then part of the entry); leaving
    it puts the originals back.  (A Python audit hook sees the same opens, but
    it cannot be removed and is called on every audited event of the process: z3's bindings raise about
    125,000 of them in a check, which cost a second of it.)"""

    _active: ReadTracker | None = None
    _saved: dict[tuple[Any, str], Any] | None = None

    def __init__(self) -> None:
        self.paths: set[str] = set()
        self.probed: set[str] = set()

    def __enter__(self) -> ReadTracker:
        import builtins
        import io

        ReadTracker._active = self
        if ReadTracker._saved is None:
            saved = {(io, "open"): io.open, (builtins, "open"): builtins.open, (os, "open"): os.open,
                     (os, "listdir"): os.listdir, (os, "scandir"): os.scandir, (os, "stat"): os.stat,
                     (os, "lstat"): os.lstat, (os, "access"): os.access}
            ReadTracker._saved = saved
            opener = _tracked_open(saved[(io, "open")])
            io.open = builtins.open = opener  # type: ignore[assignment]
            os.open = _tracked_os_open(saved[(os, "open")])  # type: ignore[assignment]
            os.listdir = _tracked_listing(saved[(os, "listdir")])  # type: ignore[assignment]
            os.scandir = _tracked_listing(saved[(os, "scandir")])  # type: ignore[assignment]
            for name in ("stat", "lstat", "access"):
                setattr(os, name, _tracked_probe(saved[(os, name)]))
        return self

    def __exit__(self, *exc: object) -> None:
        ReadTracker._active = None
        saved, ReadTracker._saved = ReadTracker._saved, None
        for (module, name), original in (saved or {}).items():
            setattr(module, name, original)

    @staticmethod
    def record(path: object, probe: bool = False) -> None:
        tracker = ReadTracker._active
        if tracker is None or isinstance(path, int):
            return
        try:
            path = os.fsdecode(os.fspath(path))  # type: ignore[arg-type]
        except TypeError:
            return
        (tracker.probed if probe else tracker.paths).add(path if os.path.isabs(path) else
                                                         os.path.join(os.getcwd(), path))


def _tracked_open(original: Callable) -> Callable:
    @functools.wraps(original)
    def open(file, mode="r", *args, **kwargs):  # noqa: A001 - stands in for the builtin
        if not (isinstance(mode, str) and set(mode) & set("wax+")):  # read, not written
            ReadTracker.record(file)
        return original(file, mode, *args, **kwargs)
    return open


def _tracked_os_open(original: Callable) -> Callable:
    @functools.wraps(original)
    def os_open(path, flags, *args, **kwargs):
        if not flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            ReadTracker.record(path)
        return original(path, flags, *args, **kwargs)
    return os_open


def _tracked_probe(original: Callable) -> Callable:
    @functools.wraps(original)
    def probe(path, *args, **kwargs):
        ReadTracker.record(path, probe=True)
        return original(path, *args, **kwargs)
    return probe


def _tracked_listing(original: Callable) -> Callable:
    @functools.wraps(original)
    def listing(path=".", *args, **kwargs):
        ReadTracker.record(path)
        return original(path, *args, **kwargs)
    return listing


# own results of a whole scenario (the baseline of `derive diff`) ------------------------------------------

def sources_digest() -> str:
    """One digest of the engine's source (every ``.py`` of the ``derive`` package, loaded or not) and of
    every other loaded source file outside the standard library and installed packages (the libraries
    of declarations).  Processes that loaded the same libraries agree on it, whatever commands they ran."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the derive package
    files = {f for f in loaded_source_files() if not f.startswith(here + os.sep)}
    for root, dirs, names in os.walk(here):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        files |= {os.path.join(root, n) for n in names if n.endswith(".py")}
    h = hashlib.sha256()
    for f in sorted(files):
        h.update(f.encode() + b"\0" + (file_digest(f) or "?").encode() + b"\0")
    return h.hexdigest()


def result_to_json(r) -> dict:
    """A ``checker.ClaimResult`` (its own verdict, before blocking) as JSON; step formulas are dropped."""
    return {"id": r.id, "title": r.title, "kind": r.kind, "verdict": r.verdict, "expected": r.expected,
            "engine": r.engine, "counterexample": r.counterexample, "reason": r.reason, "rests_on": r.rests_on,
            "seconds": r.seconds, "recheck": r.recheck, "own_verdict": r.own_verdict,
            "steps": [{"index": s.index, "why": s.why, "outcome": outcome_to_json(s.outcome)} for s in r.steps]}


def result_from_json(data: Mapping):
    from derive.checking.checker import ClaimResult, StepResult

    steps = []
    for s in data["steps"]:
        outcome = outcome_from_json(s["outcome"])
        if outcome is None:
            raise ValueError("bad step outcome")
        steps.append(StepResult(int(s["index"]), None, str(s["why"]), outcome))
    cex = data["counterexample"]
    return ClaimResult(
        id=str(data["id"]), title=str(data["title"]), kind=str(data["kind"]), verdict=str(data["verdict"]),
        expected=str(data["expected"]), engine=str(data["engine"]),
        counterexample=None if cex is None else {str(k): str(v) for k, v in cex.items()},
        reason=data["reason"], rests_on=[str(x) for x in data["rests_on"]], seconds=float(data["seconds"]),
        steps=steps, recheck=data["recheck"], own_verdict=data["own_verdict"],
    )


def library_digest(library: Any) -> str:
    """A digest of what the declarations of a library say (ids, kinds, formulas, domains, bounds), read
    from the loaded objects: whatever a library read to build them (data files, environment) is in it."""
    h = hashlib.sha256()
    memo: dict[int, str] = {}
    for decl in library.ordered():
        h.update(f"{decl.id}\0{formula_text(decl, memo)}\0".encode())
    for name in sorted(library.quantities):
        h.update(f"{name}\0{formula_text(library.quantities[name], memo)}\0".encode())
    return h.hexdigest()


class ResultsCache:
    """Own (pre-blocking) results of the claims of a library under one scenario, keyed by the engine's
    and the libraries' source, what the library's declarations say, the scenario's fingerprint (values,
    assumptions, pins), the resource limit and the claim ids."""

    def __init__(self, directory: str | os.PathLike) -> None:
        self.dir = Path(directory) / "results"

    @staticmethod
    def key(scenario, rlimit: int, ids: Iterable[str], sources: str | None = None, library: Any = None) -> str:
        """``sources``: a ``sources_digest()`` computed once by a caller that checks many scenarios;
        ``library``: the library checked (its ``library_digest`` joins the key)."""
        return _sha(json.dumps({"sources": sources or sources_digest(), "scenario": scenario.fingerprint(),
                                "library": None if library is None else library_digest(library),
                                "rlimit": rlimit, "ids": sorted(ids), "format": FORMAT}))

    def get(self, key: str, confirm: Callable[[Any], bool] | None = None) -> dict | None:
        """The stored results, or None.  A stored ``refuted`` is replayed only when ``confirm`` (the
        checker's ``Checker.confirms``: the kernel's re-check of its counterexample) accepts it; without
        ``confirm``, an entry holding one is a miss."""
        path = self.dir / f"{key}.json"
        data = unseal(path, "results", key)
        if not isinstance(data, list):
            return None
        try:
            results = {r["id"]: result_from_json(r) for r in data}
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        if any(r.verdict == "refuted" and (confirm is None or not confirm(r)) for r in results.values()):
            return None
        touch(path)
        return results

    def put(self, key: str, results: Mapping) -> bool:
        body = [result_to_json(r) for r in results.values()]
        return atomic_write(self.dir / f"{key}.json", seal("results", key, body))


# size bound, information, clearing ---------------------------------------------------------------------

@dataclasses.dataclass
class CacheInfo:
    folder: Path
    entries: dict[str, int]
    bytes: dict[str, int]
    limit: int

    @property
    def total_bytes(self) -> int:
        return sum(self.bytes.values())


@dataclasses.dataclass(frozen=True)
class _Entry:
    used: float  # the time of its last use
    size: int
    kind: str
    path: Path  # its file, or the proof store
    key: str | None = None  # for a row of the proof store


def _existing_store(root: Path) -> sqlite3.Connection | None:
    """The proof store of the folder ``root`` where there is one (maintenance never makes it)."""
    path = root / PROOF_STORE
    return open_store(path) if path.is_file() else None


def _store_bytes(root: Path) -> int:
    """The proof store's size on disk, its write-ahead log included: at least what its rows hold."""
    total = 0
    for suffix in ("", "-wal"):
        try:
            total += os.stat(f"{root / PROOF_STORE}{suffix}").st_size
        except OSError:
            continue
    return total


def _entries(root: Path, rows: bool = True) -> list[_Entry]:
    """Every entry: the files of each kind's folder (a proof's, in the folder of earlier versions of
    ``derive``) and, with ``rows``, the rows of the proof store."""
    out = []
    for kind in KINDS:
        for folder, _, names in os.walk(root / kind):
            for name in names:
                path = Path(folder) / name
                try:
                    st = path.stat()
                except OSError:
                    continue
                out.append(_Entry(st.st_mtime, st.st_size, kind, path))
    db = _existing_store(root) if rows else None
    if db is not None:
        import sqlite3  # importable: there is a connection

        try:
            found = db.execute("SELECT used, length(key) + length(entry), key FROM proofs").fetchall()
        except sqlite3.Error:
            found = []
        finally:
            db.close()
        out += [_Entry(float(used), int(size), "proofs", root / PROOF_STORE, key) for used, size, key in found]
    return out


def info(root: str | os.PathLike) -> CacheInfo:
    entries = _entries(Path(root))
    counts = {k: sum(1 for e in entries if e.kind == k) for k in KINDS}
    sizes = {k: sum(e.size for e in entries if e.kind == k) for k in KINDS}
    return CacheInfo(Path(root), counts, sizes, max_bytes())


def _remove(root: Path, entries: Iterable[_Entry]) -> int:
    """Remove ``entries``; the number removed (one another process removed meanwhile is not counted)."""
    removed = 0
    keys = []
    for e in entries:
        if e.key is not None:
            keys.append((e.key,))
            continue
        try:
            e.path.unlink()
        except OSError:
            continue
        removed += 1
    db = _existing_store(root) if keys else None
    if db is not None:
        import sqlite3  # importable: there is a connection

        try:
            with db:  # one transaction
                db.execute("BEGIN")
                removed += db.executemany("DELETE FROM proofs WHERE key = ?", keys).rowcount
        except sqlite3.Error:
            pass
        finally:
            db.close()
    return removed


def prune(root: str | os.PathLike, limit: int | None = None) -> int:
    """Remove least recently used entries while the folder holds more than ``limit`` bytes (down to 80 %
    of it); returns the number removed.  Entries another process removed meanwhile are skipped."""
    limit = max_bytes() if limit is None else limit
    files = _entries(Path(root), rows=False)
    if sum(e.size for e in files) + _store_bytes(Path(root)) <= limit:
        return 0  # without opening the store (the usual case, after every command that wrote)
    entries = _entries(Path(root))
    total = sum(e.size for e in entries)
    if total <= limit:
        return 0
    chosen = []
    for e in sorted(entries, key=lambda e: (e.used, str(e.path), e.key or "")):
        if total <= limit * 0.8:
            break
        chosen.append(e)
        total -= e.size
    return _remove(Path(root), chosen)


def clear(root: str | os.PathLike) -> int:
    """Remove every entry (and nothing else: a folder given by mistake keeps its other files)."""
    removed = _remove(Path(root), _entries(Path(root)))
    for kind in KINDS:
        for folder, _, _ in sorted(os.walk(Path(root) / kind), key=lambda w: -len(w[0])):
            try:
                os.rmdir(folder)
            except OSError:
                pass
    return removed
