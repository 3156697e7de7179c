"""Everything the command line prints goes through here: ``write_out`` and ``write_err`` (the one route
to stdout and stderr), and terminal output that reads well: coloured verdicts, tables and progress with
``rich``, only when a person is watching.  Plain text when stdout is not a terminal, with ``NO_COLOR`` set
(no-color.org) or ``TERM=dumb``; rich itself is imported only when it will be used, so ``derive --help`` stays instant.

Progress goes to the real stderr, never into captured output (the output cache replays what a
command printed, so a progress bar must not be part of it), and appears only once work has taken
longer than ``DELAY`` seconds.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

VERDICT_STYLES = {"proved": "bold green", "refuted": "bold red", "unknown": "yellow", "inconsistent": "bold magenta",
                  "assumed": "dim", "blocked": "dark_orange"}
DELAY = 2.0  # seconds of work before progress is shown
TABLE_MIN_WIDTH = 120  # below it, six columns squeeze counterexamples into a few characters each


def write_out(text: str) -> None:
    """Text on stdout, as it is (the caller ends its lines)."""
    sys.stdout.write(text)


def write_err(text: str) -> None:
    """Text on stderr, as it is (the caller ends its lines)."""
    sys.stderr.write(text)


def _real(stream):
    """The terminal behind a capturing wrapper (the output cache's tee keeps the real one as ``stream``)."""
    return getattr(stream, "stream", stream)


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def plain() -> bool:
    """True when output should carry no colour or cursor movement."""
    return bool(os.environ.get("NO_COLOR")) or os.environ.get("TERM") == "dumb"


def colour(stream=None) -> bool:
    """Whether ``stream`` (stdout by default) gets colours and tables."""
    return not plain() and _is_terminal(stream if stream is not None else sys.stdout)


def _console(stream):
    from rich.console import Console

    return Console(file=stream, highlight=False, soft_wrap=True)


def print_rich(renderable: object = "") -> None:
    """A rich renderable (a table) on stdout, for a command that has checked it is on a terminal."""
    _console(sys.stdout).print(renderable)


def emit_lines(lines: list[str]) -> None:
    """Lines of text, with verdict words coloured on a terminal; unchanged otherwise."""
    if not colour():
        for line in lines:
            write_out(line + "\n")
        return
    from rich.text import Text

    console = _console(sys.stdout)
    for line in lines:
        text = Text(line)
        for word, style in VERDICT_STYLES.items():
            text.highlight_regex(rf"(?<![\w.]){word}(?![\w.])", style)
        console.print(text)


def verdict_table(rows: list[tuple[str, str, str, str, str, str]], caption: str | None = None) -> bool:
    """(mark, verdict, id, title, engine, detail) rows as a table with coloured verdicts; False (nothing
    printed) when stdout is not a terminal, so the caller prints its plain lines."""
    if not colour():
        return False
    if _console(sys.stdout).width < TABLE_MIN_WIDTH:
        return False  # a narrow terminal: the caller's plain lines (details indented below each claim) read better
    from rich.table import Table
    from rich.text import Text

    table = Table(show_edge=False, pad_edge=False, box=None, caption=caption)
    for name in ("", "verdict", "claim", "title", "engine", "detail"):
        table.add_column(name, no_wrap=name in ("verdict", "claim"), overflow="fold")
    for mark, verdict, cid, title, engine, detail in rows:
        # colour marks only a surprise (a verdict not as expected): a false twin refuted on purpose stays plain
        style = VERDICT_STYLES.get(verdict, "") if mark.strip() else ""
        table.add_row(Text(mark, style="bold red"), Text(verdict, style=style),
                      Text(cid), Text(title), Text(engine, style="dim"), Text(detail))
    _console(sys.stdout).print(table)
    return True


@contextmanager
def progress(label: str) -> Iterator[Callable[[int, int], None]]:
    """A callback ``update(done, total)`` drawing a progress bar on the terminal's stderr once the work
    has taken ``DELAY`` seconds; a no-op when stderr is not a terminal."""
    err = _real(sys.stderr)
    if plain() or not _is_terminal(err):
        counts = [0, 0]
        start = time.monotonic()

        def record(done: int, total: int) -> None:
            counts[:] = [done, total]

        yield record
        _stage_line(label, start, f"{counts[0]} of {counts[1]}" if counts[1] else "")
        return
    start = time.monotonic()
    state: dict = {}

    def update(done: int, total: int) -> None:
        if "bar" not in state:
            if time.monotonic() - start < DELAY:
                return
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                           console=_console(err), transient=True, redirect_stdout=False, redirect_stderr=False)
            bar.start()
            state["bar"], state["task"] = bar, bar.add_task(label, total=total)
        state["bar"].update(state["task"], completed=done, total=total)

    try:
        yield update
    finally:
        if "bar" in state:
            state["bar"].stop()


def _stage_line(label: str, start: float, counts: str) -> None:
    """Piped output (make, CI): one line per stage that took ``DELAY`` seconds or more, once it is done, so a
    log shows where the time went (``derive: checking claims: 144 of 144 in 21.3 s``)."""
    seconds = time.monotonic() - start
    if seconds < DELAY:
        return
    head = label if label.startswith("derive") else f"derive: {label}"
    _PENDING.append(f"{head}: " + (f"{counts} in " if counts else "done in ") + f"{seconds:.1f} s\n")
    if not label.startswith("derive"):  # a stage: wait for the command's own line (``working``), or its end
        return
    flush_stages()


_PENDING: list[str] = []  # stage lines of the running command, written once it has not failed


def flush_stages() -> None:
    """Write the stage lines held so far (a command that fails on bad input says one line and drops them:
    ``drop_stages``)."""
    text, _PENDING[:] = "".join(_PENDING), []
    try:
        write_err(text)
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: progress is never worth an error
        pass


def drop_stages() -> None:
    _PENDING.clear()


_SPINNER: dict = {}  # the running spinner's label parts (``working``), which ``stage`` extends


@contextmanager
def stage(label: str) -> Iterator[Callable[[int, int], None]]:
    """One stage of a long command (a build's checking, drawing, writing, compiling): piped, one line once
    it is done if it took ``DELAY`` seconds or more (``derive: drawing figures: done in 6.2 s``); on a
    terminal, the running spinner names the stage and its counts.  Yields ``update(done, total)``."""
    err = _real(sys.stderr)
    if plain() or not _is_terminal(err):
        with progress(label) as record:
            yield record
        return
    _SPINNER["stage"] = label

    def update(done: int, total: int) -> None:
        _SPINNER["stage"] = f"{label} {done}/{total}" if total else label

    try:
        yield update
    finally:
        _SPINNER.pop("stage", None)


@contextmanager
def working(label: str) -> Iterator[None]:
    """A spinner with elapsed time on the terminal's stderr, shown once work has taken ``DELAY`` seconds
    (for work with no count to report: a build, a sweep, a what-if)."""
    err = _real(sys.stderr)
    if plain() or not _is_terminal(err):
        start = time.monotonic()
        yield
        _stage_line(label, start, "")
        flush_stages()  # the command's own line ends its stages
        return
    state: dict = {}
    lock = threading.Lock()

    def show() -> None:
        with lock:
            if state.get("done"):
                return
            from rich.live import Live
            from rich.spinner import Spinner

            started = time.monotonic() - DELAY
            spinner = Spinner("dots", text=label)

            def render():
                now = f"{label}: {_SPINNER['stage']}" if _SPINNER.get("stage") else label
                spinner.update(text=f"{now}  {time.monotonic() - started:.0f} s")
                return spinner

            live = Live(get_renderable=render, console=_console(err), transient=True, refresh_per_second=8,
                        redirect_stdout=False, redirect_stderr=False)
            live.start()
            state["status"] = live

    timer = threading.Timer(DELAY, show)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with lock:
            state["done"] = True
            if "status" in state:
                state["status"].stop()


# inline math for a terminal ---------------------------------------------------------------------------------

_TEX_SYMBOLS = {
    "cdot": "·", "times": "×", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠",
    "approx": "≈", "sim": "~", "pm": "±", "to": "→", "rightarrow": "→", "Rightarrow": "⇒", "implies": "⇒",
    "iff": "⇔", "Leftrightarrow": "⇔", "infty": "∞", "in": "∈", "ldots": "…", "dots": "…", "cdots": "⋯",
    "ast": "*", "star": "*", "prime": "′", "propto": "∝", "ll": "≪", "gg": "≫", "partial": "∂",
    "sum": "Σ", "prod": "Π", "oplus": "⊕", "wedge": "∧", "vee": "∨", "neg": "¬", "circ": "∘",
    "max": "max", "min": "min", "log": "log", "ln": "ln", "exp": "exp", "sin": "sin", "cos": "cos",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "µ", "nu": "ν", "xi": "ξ", "pi": "π",
    "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω",
    "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Pi": "Π", "Sigma": "Σ", "Phi": "Φ",
    "Psi": "Ψ", "Omega": "Ω", "Theta_": "Θ",
    "%": "%", "$": "$", "&": "&", "#": "#", "_": "_", "{": "{", "}": "}",
    ",": " ", ";": " ", ":": " ", "!": "", " ": " ", "quad": "  ", "qquad": "    ",
    "left": "", "right": "", "big": "", "Big": "", "bigl": "", "bigr": "", "displaystyle": "",
}
_SPACED = {"cdot", "times", "le", "leq", "ge", "geq", "ne", "neq", "approx", "sim", "pm", "to", "rightarrow",
           "Rightarrow", "implies", "iff", "Leftrightarrow", "in", "propto", "ll", "gg", "wedge", "vee"}
_SUPER = str.maketrans("0123456789-+=()n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺⁼⁽⁾ⁿ")
_TEXT_MACROS = ("mathrm", "text", "mathit", "mathbf", "operatorname", "textrm", "mathsf", "texttt", "mathcal")


def _group(tex: str, i: int) -> tuple[str, int]:
    """The argument at ``tex[i]``: a brace group's content, one control word, or one character."""
    while i < len(tex) and tex[i] == " ":
        i += 1
    if i >= len(tex):
        return "", i
    if tex[i] == "{":
        depth = 0
        for j in range(i, len(tex)):
            depth += {"{": 1, "}": -1}.get(tex[j], 0)
            if depth == 0:
                return tex[i + 1:j], j + 1
        return tex[i + 1:], len(tex)
    if tex[i] == "\\":
        m = re.match(r"\\([A-Za-z]+|.)", tex[i:])
        return (m.group(0), i + m.end()) if m else ("", i + 1)
    return tex[i], i + 1


def _bracket(text: str) -> str:
    return f"({text})" if re.search(r"[\s+\-·×/]", text) else text


def plain_math(tex: str) -> str:
    """Simple inline LaTeX as plain text for a terminal: ``N_{\\mathrm{tot}}/N_{\\mathrm{act}}`` gives
    ``N_tot/N_act``, ``B^{*}`` gives ``B*``, ``\\frac{a}{b}`` gives ``a/b``, ``e^{-u/2}`` gives ``e^(-u/2)``,
    ``\\sqrt{ab}`` gives ``√(ab)``, ``\\le`` gives ``≤``.  What it does not know it leaves as written."""
    out: list[str] = []
    i = 0
    while i < len(tex):
        ch = tex[i]
        if ch == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", tex[i:])
            name = m.group(1) if m else ""
            i += m.end() if m else 1
            if name in _TEXT_MACROS:
                arg, i = _group(tex, i)
                out.append(plain_math(arg))
            elif name in ("frac", "tfrac", "dfrac"):
                num, i = _group(tex, i)
                den, i = _group(tex, i)
                out.append(f"{_bracket(plain_math(num))}/{_bracket(plain_math(den))}")
            elif name == "sqrt":
                arg, i = _group(tex, i)
                inner = plain_math(arg)
                out.append("√" + (inner if len(inner) == 1 else f"({inner})"))
            elif name in _TEX_SYMBOLS:
                sym = _TEX_SYMBOLS[name]
                if name.isalpha():
                    while i < len(tex) and tex[i] == " ":
                        i += 1
                    if name in _SPACED:
                        sym = f" {sym} "
                    elif sym.isalpha() and i < len(tex) and tex[i].isalnum():
                        sym += " "
                out.append(sym)
            else:
                out.append("\\" + name)
        elif ch in "^_":
            arg, i = _group(tex, i + 1)
            inner = plain_math(arg)
            if ch == "_":
                out.append("_" + (inner if re.fullmatch(r"[\w.]+", inner) else f"({inner})"))
            elif inner in ("*", "′", "'"):
                out.append(inner)
            elif inner and all(c in "0123456789-+=()n" for c in inner):
                out.append(inner.translate(_SUPER))
            else:
                out.append("^" + (inner if len(inner) == 1 else f"({inner})"))
        elif ch in "{}":
            i += 1
        elif ch == "~":
            out.append(" ")
            i += 1
        else:
            out.append(ch)
            i += 1
    text = re.sub(r" {2,}", " ", "".join(out)).strip()
    return re.sub(r"([(\[]) | (?=[)\],])", r"\1", text)


def plain_prose(text: str) -> str:
    """Prose with ``\\( ... \\)`` math (statements, step reasons, notes) as plain terminal text."""
    from derive.model.prose import PROSE_MATH

    return PROSE_MATH.sub(lambda m: plain_math(m.group(1)), str(text))
