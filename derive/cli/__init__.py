"""The ``derive`` command line: argument parsing, one place for errors, exit codes.

Commands live in ``derive/cli/commands/``; each module gives ``HELP``, ``add_arguments(parser)`` and
``run(args, ctx) -> int``.  Modules are imported when the parser is built, so they keep heavy
imports (sympy, z3) inside ``run``: ``derive --help`` stays instant.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

from derive.cli import terminal
from derive.cli.commands import COMMANDS
from derive.cli.context import Context

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def error_line(prefix: str, message: str) -> None:
    """Write one error line to stderr.  Every error the command line reports goes through here, and
    ``derive.errors.escape_control`` escapes any control character left in it, so a newline or a terminal
    escape sequence in user text can never make two lines or reach the terminal raw."""
    from derive.errors import MAX_MESSAGE, escape_control

    terminal.write_err(f"{escape_control(prefix)}: {escape_control(message, limit=2 * MAX_MESSAGE)}\n")


_ARGV: list[str] = []  # the arguments being parsed, for the hints of argparse's own errors


def _dash_hint(tokens: list[str], prog: str) -> str:
    """A value that starts with '-' (``derive eval -flops``) reads as an option: say how to pass it."""
    for t in tokens:
        if t.startswith("-") and not t.startswith("--") and t not in ("-h",):
            return f"; a value that starts with '-' goes after --, like {prog} -- {t}"
    return ""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own errors: one line, exit 2
        hint = ""
        if "ignored explicit argument" in message or "are required" in message:
            hint = _dash_hint(_ARGV, self.prog)
        elif message.startswith("argument COMMAND: invalid choice"):
            import difflib

            given = next((t for t in _ARGV if not t.startswith("-")), "")
            close = difflib.get_close_matches(given, list(COMMANDS), n=1, cutoff=0.6)
            message = f"unknown command '{given}'"
            hint = f"; did you mean {close[0]}?" if close else f"; commands: {', '.join(COMMANDS)}"
        error_line(f"{self.prog}: error", f"{message}{hint} (see {self.prog} --help)")
        raise SystemExit(EXIT_BAD_INPUT)


def _unrecognized(parser: argparse.ArgumentParser, command: str | None, extra: list[str]) -> None:
    """Arguments no option of the command takes: named in the command's own words, with the closest option."""
    import difflib

    sub = getattr(parser, "_derive_commands", {}).get(command) if command else None
    prog = sub.prog if sub is not None else parser.prog
    # --help and --version are no one's misspelling (ledger --model read as "did you mean --help?")
    options = sorted({o for a in (sub or parser)._actions for o in a.option_strings
                      if o.startswith("--") and o not in ("--help", "--version")})
    hint = ""
    for token in extra:
        if token.startswith("--"):
            close = difflib.get_close_matches(token.split("=", 1)[0], options, n=1, cutoff=0.6)
            if close:
                hint = f"; did you mean {close[0]}?"
                break
    hint = hint or _dash_hint(extra, prog)
    error_line(f"{prog}: error", f"unrecognized argument{'s' if len(extra) > 1 else ''}: {' '.join(extra)}{hint} "
               f"(see {prog} --help)")
    raise SystemExit(EXIT_BAD_INPUT)


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (a count, a limit)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def cache_folder(text: str) -> str:
    """An argparse type: the cache folder, where one can be (a file there would turn the cache off silently)."""
    from derive.checking.cache import not_a_folder_on_the_way

    if not text.strip():
        raise argparse.ArgumentTypeError("is empty; name a folder (it is created when missing)")
    blocked = not_a_folder_on_the_way(text)
    if blocked is not None:
        raise argparse.ArgumentTypeError(f"'{text}' is not a folder; name a folder (it is created when missing)"
                                         if blocked == Path(text) else
                                         f"'{text}' runs through '{blocked}', which is not a folder")
    return text


def library_option(p, what: str = "declarations") -> None:
    """``--library PATH`` (repeatable), the one option every command that reads a library shares; ``what`` says
    what a command reads from it beside the declarations."""
    p.add_argument("--library", dest="libraries", action="append", default=[], metavar="PATH",
                   help=f"load {what} from PATH instead of the lecture ('lecture' names the built-in one; "
                        "'serving' the serving library)")


def scenario_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("scenario")
    g.add_argument("--hardware", metavar="NAME", help="hardware preset (see derive presets)")
    g.add_argument("--model", metavar="NAME|PATH", help="model preset or a Hugging Face config.json")
    g.add_argument("--scenario", metavar="NAME|FILE", help="base scenario (default: lecture)")
    g.add_argument("--set", dest="sets", action="append", default=[], metavar="Q=VALUE",
                   help='pin a quantity, e.g. --set "hbm_bandwidth=3.35 TB/s" (repeatable)')
    g.add_argument("--assume", dest="assumes", action="append", default=[], metavar="RELATION",
                   help='add an assumption, e.g. --assume "hbm_bandwidth >= 30 TB/s" (repeatable)')
    g.add_argument("--si", action="store_true",
                   help="read a bare number for a quantity with a unit in SI base units (default: an error)")
    g.add_argument("--measured", action="store_true",
                   help="use the hardware's measured ceilings (measurement files) instead of its spec-sheet peaks")
    g.add_argument("--measurement", dest="measurements", action="append", default=[], metavar="NAME",
                   help="use only this measurement file of the hardware (implies --measured; repeatable)")
    library_option(g)
    g.add_argument("--rlimit", type=positive_int, default=None, metavar="N", help="z3 resource limit per query")
    g.add_argument("--no-cache", action="store_true",
                   help="bypass the proof and output caches (also DERIVE_NO_CACHE=1)")
    g.add_argument("--cache-dir", metavar="DIR", default=None, type=cache_folder,
                   help="cache folder (default: the per-user cache folder, or $DERIVE_CACHE_DIR)")


def build_parser() -> argparse.ArgumentParser:
    from derive import __version__

    parser = _Parser(prog="derive", description="Claims about LLM training and serving, as checked math.")
    parser.add_argument("--version", action="version", version=f"derive {__version__} (distribution derive-llm)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    parser._derive_commands = {}  # type: ignore[attr-defined]
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(f"derive.cli.commands.{module_name}")
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        parser._derive_commands[name] = p  # type: ignore[attr-defined]
        module.add_arguments(p)
        if getattr(module, "SCENARIO", True):
            scenario_options(p)
        p.set_defaults(_module=module)
    return parser


def main(argv: list[str] | None = None, *, replay: bool = False) -> int:
    """Run one command.  ``replay``: answer a read-only command from the output cache when none of
    the files it read has changed (the console script does; in-process callers get a fresh run)."""
    parser = build_parser()
    _ARGV[:] = list(sys.argv[1:] if argv is None else argv)
    args, extra = parser.parse_known_args(argv)
    if extra:
        _unrecognized(parser, getattr(args, "command", None), extra)
    if not getattr(args, "command", None):  # bad input like any other: one line, the commands in it
        error_line("derive: error", f"give a command: {', '.join(COMMANDS)} (see derive --help)")
        return EXIT_BAD_INPUT
    ctx = Context(args)
    try:
        if replay and _replayable(args):
            return _run_replayed(args, ctx, list(sys.argv[1:] if argv is None else argv))
        return _run(args, ctx)
    finally:
        ctx.close()


def _run(args: argparse.Namespace, ctx: Context) -> int:
    from derive.errors import DeriveError

    try:
        if args.command in _LONG:
            with terminal.working(f"derive {args.command}"):
                code = args._module.run(args, ctx)
        else:
            code = args._module.run(args, ctx)
        terminal.flush_stages()  # piped progress, once the command has not failed on bad input
        return code
    except DeriveError as err:
        terminal.drop_stages()
        _advise(err, ctx)
        error_line(f"derive {args.command}: error", err.one_line())
        return err.exit_code
    except KeyboardInterrupt:
        terminal.write_err("derive: interrupted\n")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except SystemExit as err:  # user code (a library's reader or figure) called sys.exit: not a success
        error_line(f"derive {args.command}: error", f"user code called sys.exit({err.code!r}) while the command ran "
                   "(in --library); a library raises errors, it never exits")
        return EXIT_BAD_INPUT
    except OSError as err:  # the file system refused a path the user gave (name too long, permission denied)
        from derive.errors import escape_control

        name = f" ({escape_control(err.filename, limit=120)})" if err.filename else ""
        error_line(f"derive {args.command}: error", f"{err.strerror or type(err).__name__}{name}: a path given on the "
                   "command line or named in a file cannot be used; check the path")
        return EXIT_BAD_INPUT
    except MemoryError:
        error_line(f"derive {args.command}: error", "out of memory (a value, grid or file too large for this "
                   "machine); use smaller inputs")
        return EXIT_BAD_INPUT
    except Exception as err:  # a bug, not bad input; still one line (DERIVE_DEBUG=1 shows the traceback)
        if os.environ.get("DERIVE_DEBUG"):
            raise
        error_line(f"derive {args.command}: internal error", f"{type(err).__name__}: {err} "
                   "(rerun with DERIVE_DEBUG=1 for details)")
        return EXIT_BAD_INPUT


def _advise(err, ctx: Context) -> None:
    """A better hint for an unknown id that names something else of the library: a quantity given where a
    declaration id is expected (``derive check hbm_bandwidth``); for a missing value, the options that give it."""
    from derive.errors import MissingValueError, UnknownNameError

    if isinstance(err, MissingValueError) and "library" in ctx.__dict__ and "scenario" in ctx.__dict__ \
            and err.hint == MissingValueError.default_hint(err.names):
        err.hint = _missing_value_hint(err.names, ctx) or err.hint
        return
    column = getattr(err, "column", None)  # derive audit: a column no loaded library reads
    if column and "library" in ctx.__dict__:
        other = _library_that_has(column, getattr(ctx.args, "libraries", None) or ["lecture"])
        if other:
            err.hint = f"the {other} library reads '{column}': add --library {other}"
        return
    if not isinstance(err, UnknownNameError) or getattr(err, "kind", None) not in ("id", "quantity") \
            or "library" not in ctx.__dict__:
        return
    if err.kind == "id" and err.name in ctx.library.quantities:
        err.hint = f"'{err.name}' is a quantity, not a declaration: derive show {err.name}, derive eval {err.name}"
        return
    other = _library_that_has(err.name, getattr(ctx.args, "libraries", None) or ["lecture"])
    if other:
        err.hint = f"the {other} library has '{err.name}': add --library {other}"


def _missing_value_hint(names: list[str], ctx: Context) -> str | None:
    """Which of ``--model`` and ``--hardware`` (not given) would give the missing ``names``: a preset of that
    kind gives them at this scenario (read on the error path only); the rest need a ``--set``."""
    from derive.errors import DeriveError
    from derive.model.scenario import PresetStore, build_scenario

    args, missing = ctx.args, set(names)
    parts: list[str] = []
    for kind in ("model", "hardware"):
        if getattr(args, kind, None) is not None or not missing:
            continue
        for preset in PresetStore.discover(ctx.library.preset_dirs).names(kind):
            try:
                given = build_scenario(ctx.library, scenario=getattr(args, "scenario", None), **{kind: preset},
                                       sets=getattr(args, "sets", []), si=getattr(args, "si", False)).values
            except DeriveError:
                continue
            found = sorted(n for n in missing if n in given)
            if found:
                what = "NAME or a config.json" if kind == "model" else "NAME"
                parts.append(f"--{kind} {what} gives {', '.join(found)} (derive presets)")
                missing -= set(found)
                break
    if not parts:
        return None
    rest = [n for n in names if n in missing]
    if rest:
        parts.append(f"--set {rest[0]}=VALUE" + (f" (and {', '.join(rest[1:])})" if rest[1:] else ""))
    return "; ".join(parts)


def _library_that_has(name: str, loaded: list[str]) -> str | None:
    """A built-in library not loaded that declares ``name`` (an id, a quantity or an audit metric), for the hint
    of an unknown name; None where none does or one cannot be loaded (the error stays as it was)."""
    from derive.errors import DeriveError
    from derive.model.loader import builtin_library_names, load_library

    for other in builtin_library_names():
        if other in loaded:
            continue
        try:
            lib = load_library([other])
        except (DeriveError, ImportError):
            continue
        if name in lib.quantities or name in lib.declarations or any(b.get("metric") == name for b in lib.audit_bounds):
            return other
    return None


# Commands that can take more than a few seconds and report no count: a spinner on a terminal's stderr.
_LONG = ("build", "diff", "margin", "sweep", "presets", "ledger", "export")

# Commands whose output is a function of their inputs only (no files written): replayable.
_REPLAYABLE = ("check", "diff", "margin", "card")


def _replayable(args: argparse.Namespace) -> bool:
    from derive.checking.cache import cache_disabled

    return (args.command in _REPLAYABLE and not getattr(args, "out", None)
            and not cache_disabled(getattr(args, "no_cache", False)))


class _Tee:
    """Writes through to a stream and keeps a copy."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return self.stream.write(text)

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


def _run_replayed(args: argparse.Namespace, ctx: Context, argv: list[str]) -> int:
    from derive.checking.cache import OutputCache, ReadTracker, cache_dir
    from derive.errors import DeriveError

    try:
        cache = OutputCache(cache_dir(getattr(args, "cache_dir", None)))
    except DeriveError as err:  # $DERIVE_CACHE_DIR naming a file: bad input, before any work
        error_line(f"derive {args.command}: error", err.one_line())
        return err.exit_code
    from derive.cli.terminal import colour

    # coloured output (a terminal) and plain output are cached apart, so a pipe never replays colours
    key = cache.run_key(argv + (["<colour>"] if colour() else []))
    hit = cache.lookup(key)
    if hit is not None:
        out, err, code = hit
        try:
            terminal.write_out(out)
            sys.stdout.flush()
        except BrokenPipeError:
            return EXIT_OK
        terminal.write_err(err)
        return code
    out, err = _Tee(sys.stdout), _Tee(sys.stderr)
    sys.stdout, sys.stderr = out, err
    try:
        with ReadTracker() as tracker:
            code = _run(args, ctx)
    finally:
        sys.stdout, sys.stderr = out.stream, err.stream
    if code in (EXIT_OK, EXIT_FAILED):
        ctx.wrote_cache |= cache.store(key, argv=argv, data_dirs=ctx.data_dirs(), stdout="".join(out.parts),
                                       stderr="".join(err.parts), exit_code=code, read=sorted(tracker.paths),
                                       probed=sorted(tracker.probed))
    return code


def entry() -> None:
    """The ``derive`` console script: ``main``, then a quick exit (``_quick_exit``)."""
    import atexit
    import gc

    # sympy allocates many short-lived containers: with the default threshold (700) the collector runs
    # thousands of times over a growing heap while the library loads and the claims are checked, a few
    # percent of a check; a process that lives for one command can afford larger generations
    gc.set_threshold(50_000, 20, 10)
    code = [EXIT_FAILED]  # an exception that escapes main (DERIVE_DEBUG=1) exits 1, after its traceback
    atexit.register(_quick_exit, code)  # registered first, so it runs after every other exit handler
    try:
        code[0] = main(replay=True)
    except SystemExit as stop:  # argparse's --help, --version and usage errors
        code[0] = stop.code if isinstance(stop.code, int) else EXIT_OK if stop.code is None else EXIT_FAILED
        raise
    sys.exit(code[0])


def _quick_exit(code: list[int]) -> None:
    """End the process once every other exit handler has run (temporary folders, multiprocessing, logging)
    and the standard streams are flushed, without the interpreter's teardown: freeing sympy's caches and a
    large library object by object takes a tenth of a check's time, and the operating system frees the
    memory at once.  Only the console script does this; ``main`` returns as any function does."""
    if "logging" in sys.modules:  # its handler, if registered before ours, would run after it
        sys.modules["logging"].shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (derive check | head) or a closed stream
            pass
    os._exit(code[0])

