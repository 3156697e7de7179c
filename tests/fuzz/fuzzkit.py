"""The fuzz kit: generators of hostile input, a worker that runs the command line in-process, the contract.

Shared by the CI fuzz tests (``tests/fuzz/test_fuzz_*.py``, bounded) and the long run (``bench/fuzz.py``).

Workers.  Cases run in worker processes (``python fuzzkit.py --serve``) that import derive and load the
lecture library once, then run ``derive.cli.main(argv)`` per case with stdout and stderr captured.  The
parent gives each case a wall-clock limit; a worker past it is killed and replaced, and the case counts as
a hang.  Two workers run at once.

The contract every case is held to (``violations``):
- no hang (per-case time limit), exit code 0, 1 or 2;
- no Python traceback and no untyped ``internal error`` on stderr; every stderr line printable (no raw
  control characters or escape sequences);
- exit 2 (bad input) comes with exactly one stderr line;
- ``--json`` output that exits 0 or 1 is strict JSON (no NaN, no Infinity);
- no code execution: no payload's canary file exists, and no process was started (an audit hook in the
  worker watches ``os.system``, ``subprocess.Popen``, ``os.exec*``, ``os.posix_spawn``, ``os.fork``).
"""

from __future__ import annotations

import json
import os
import random
import select
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(os.environ.get("FUZZ_ROOT") or Path(__file__).resolve().parents[2])  # the checkout under test
CASE_SECONDS = 15.0  # per-case wall-clock limit (a "hang" past it); generous for a loaded 2-core machine

# ------------------------------------------------------------------------------------------------------
# generators
# ------------------------------------------------------------------------------------------------------

QUANTITIES = ["flops", "hbm_bandwidth", "hbm_capacity", "batch", "critical_batch", "hardware_ratio",
              "params_total", "params_active", "step_time", "context", "kv_heads", "head_dim", "train_interval",
              "num_layers", "sparsity", "drain_time"]
UNITS = ["s", "ms", "us", "ns", "B", "kB", "MB", "GB", "TB", "KiB", "GiB", "TiB", "b", "Gb", "FLOP", "TFLOP",
         "PFLOP", "FLOP/s", "TFLOP/s", "PFLOP/s", "B/s", "TB/s", "GB/s", "token", "seq", "param", "USD",
         "token/seq", "token/s", "USD/s", "%", "1", "FLOP/(param*token)", "byte", "mb", "mFLOP", "uB", "h",
         "min", "day", "Tbyte", "param^2", "s^-1", "B*s", "1/s"]
FUNCTIONS = ["max", "min", "abs", "sqrt", "exp", "log"]
EXOTIC_FUNCTIONS = ["__import__", "eval", "exec", "open", "getattr", "print", "sympify", "S", "Symbol", "lambda",
                    "compile", "globals", "vars", "input", "breakpoint", "Integral", "factorial", "gamma"]
NUMBERS = ["0", "1", "2", "-1", "0.1", "1e12", "3.35e12", "1_000", "1e-40", "1+1e-20", "1e400", "1e-400", "1e401",
           "12345678901234567890", "0.000000000000000000001", ".5", "5.", "1/3", "2.5", "989e12", "007",
           "1e99999", "9" * 60, "9" * 450, "1" + "0" * 5000, "0x10", "0b101", "1j", "nan", "inf", "-0", "1e",
           "1__0", "１２", "٣", "Infinity", "NaN", "True", "None", "1.2.3", "10**10", "2**64", "2**0.5"]
CONTROL = ["\n", "\r", "\t", "\x1b[31m", "\x1b]0;pwned\x07", "\x1b[2J", "\x07", "\x7f", "\u202e", "\u2028",
           "\x00", "\x85", "\u200b", "\ufeff", "\x9b31m"]


def payloads(canary: str) -> list[str]:
    """Strings that would create ``canary`` (a path) if any of them ever ran as code or as a shell command."""
    c = canary
    return [
        f"__import__('os').system('touch {c}')",
        f'__import__("os").system("touch {c}")',
        f"open('{c}', 'w')",
        f"exec(\"open('{c}','w')\")",
        f"eval(\"__import__('os').system('touch {c}')\")",
        f"().__class__.__bases__[0].__subclasses__()[0]('touch {c}')",
        f"[x for x in [open('{c}','w')]]",
        f"(lambda: open('{c}','w'))()",
        f"$(touch {c})",
        f"`touch {c}`",
        f"; touch {c}",
        f"| touch {c}",
        f"{{{{open('{c}','w')}}}}",
        f"${{__import__('os').system('touch {c}')}}",
        f"f'{{open(\"{c}\",\"w\")}}'",
        f"flops + open('{c}','w')",
        f"S('open(\"{c}\",\"w\")')",
        f"sympify('open(\"{c}\",\"w\")')",
        f"Symbol('x').__class__.__init__.__globals__['__builtins__']['open']('{c}','w')",
        f"flops if open('{c}','w') else 1",
        f"(y := open('{c}','w'))",
        f"\\x6f\\x70\\x65\\x6e('{c}')",
    ]


def gen_number(r: random.Random) -> str:
    if r.random() < 0.5:
        return r.choice(NUMBERS)
    kind = r.randrange(5)
    if kind == 0:
        return str(r.randrange(-10**6, 10**6))
    if kind == 1:
        return f"{r.uniform(-1e3, 1e3):.{r.randrange(1, 20)}f}"
    if kind == 2:
        return f"{r.randrange(1, 1000)}e{r.randrange(-450, 450)}"
    if kind == 3:
        return "1" + "0" * r.randrange(0, 1200)
    return f"{r.randrange(1, 99)}.{r.randrange(0, 10**6)}e{r.choice(['', '+', '-'])}{r.randrange(0, 30)}"


def gen_name(r: random.Random) -> str:
    x = r.random()
    if x < 0.75:
        return r.choice(QUANTITIES)
    if x < 0.85:
        return r.choice(["flop", "bandwidth", "x", "__class__", "__builtins__", "os", "sys", "self", "pi", "E", "I",
                         "oo", "zoo", "nan", "Max", "Abs", "if", "lambda", "import", "None", "True"])
    return r.choice(QUANTITIES) + r.choice(["_", "2", "x", "é", ""])


def gen_expr(r: random.Random, depth: int = 0) -> str:
    if depth > 4 or r.random() < 0.3:
        return gen_number(r) if r.random() < 0.5 else gen_name(r)
    k = r.randrange(12)
    a = gen_expr(r, depth + 1)
    if k <= 3:
        return f"{a} {r.choice(['+', '-', '*', '/', '**', '^', '//', '%', '@', '<<', '&'])} {gen_expr(r, depth + 1)}"
    if k == 4:
        return f"({a})"
    if k == 5:
        return f"-{a}"
    if k == 6:
        f = r.choice(FUNCTIONS)
        args = ", ".join(gen_expr(r, depth + 1) for _ in range(r.choice([1, 1, 2, 3, 0])))
        return f"{f}({args})"
    if k == 7:
        return f"{a}**{r.choice(['2', '-1', '1/2', '(1/3)', '64', '65', '1/64', '1/65', '10**10', 'flops', '0.5'])}"
    if k == 8:
        return f"exp({r.choice(['10**10', '1000', '-1000', '10**60', '10**99', 'exp(exp(5))', a])})"
    if k == 9:
        return f"{r.choice(EXOTIC_FUNCTIONS)}({a})"
    if k == 10:
        return r.choice([f"{a}.real", f"{a}[0]", f"[{a}]", f"{{{a}}}", f"({a},)", f"'{a}'", f"{a} if 1 else 0",
                         f"not {a}", f"{a} and 1", f"*{a}"])
    return f"{a} {r.choice(['+', '*'])} {gen_expr(r, depth + 1)}"


def gen_relation(r: random.Random) -> str:
    k = r.randrange(7)
    a, b = gen_expr(r, 2), gen_expr(r, 2)
    op = r.choice(["<", "<=", ">", ">=", "==", "!=", "=", "=>", "≤", "≥", "≠", "is", "in"])
    if k <= 2:
        return f"{a} {op} {b}"
    if k == 3:
        return f"{a} < {b} <= {gen_expr(r, 3)}"
    if k == 4:
        return f"{gen_name(r)} in {r.choice(['[', '('])}{a}, {b}{r.choice([']', ')'])}"
    if k == 5:
        return f"({a} > {b}) {r.choice(['and', 'or', '&', '|'])} not {gen_name(r)} >= 0"
    return a  # an expression where a relation is expected


def gen_unit(r: random.Random) -> str:
    k = r.randrange(5)
    if k <= 1:
        return r.choice(UNITS)
    if k == 2:
        return f"{r.choice(UNITS)}{r.choice(['/', '*', '·', '^', ' per '])}{r.choice(UNITS)}"
    if k == 3:
        return r.choice(["", " ", "TB/s/s/s", "s^1000000", "s^(1/2)", "s^-0", "kkB", "K", "Kib", "TB/", "/s",
                         "(TB/s", "TB)/s", "B^" + "9" * 50, "s" * 500, "µs", "μs", "Å", "meters", "\u00b5s"])
    return "".join(r.choice("abcdefghijklmnopqrstuvwxyzKMGTPEBsb/*^()0123456789 .-") for _ in range(r.randrange(1, 12)))


SETTABLE = {"flops": ["TFLOP/s", "PFLOP/s", "FLOP/s"], "hbm_bandwidth": ["TB/s", "GB/s", "B/s"],
            "hbm_capacity": ["GB", "GiB", "TB"], "batch": ["seq"], "context": ["token/seq"],
            "params_total": ["param"], "kv_heads": [""], "head_dim": [""]}


def gen_positive(r: random.Random) -> str:
    return r.choice(["1e-40", "1e-20", "0.1", "3.35", "989", "1e300", "7", "123456789012345678901",
                     f"{r.randrange(1, 10**6)}", f"{r.uniform(0.001, 1e4):.{r.randrange(1, 25)}g}",
                     f"{r.randrange(1, 999)}e{r.randrange(-300, 300)}"])


def gen_clean_set(r: random.Random) -> str:
    """``--set`` that should be accepted: a settable quantity, a positive number, a unit of its dimension."""
    name = r.choice(list(SETTABLE))
    unit = r.choice(SETTABLE[name])
    return f"{name}={gen_positive(r)}{' ' + unit if unit else ''}"


def gen_clean_expr(r: random.Random, depth: int = 0) -> str:
    """An expression that is dimensionally sound: products, quotients and powers of quantities and numbers;
    functions of plain numbers; sums of one quantity with itself."""
    k = r.randrange(8) if depth < 3 else 0
    q = r.choice(QUANTITIES[:10])
    if k == 0:
        return r.choice([q, gen_positive(r)])
    if k == 1:
        return f"{gen_clean_expr(r, depth + 1)} {r.choice(['*', '/'])} {gen_clean_expr(r, depth + 1)}"
    if k == 2:
        return f"({gen_clean_expr(r, depth + 1)})**{r.choice(['2', '-1', '3', '1/2', '-2'])}"
    if k == 3:
        return f"{r.choice(['exp', 'log', 'sqrt', 'abs'])}({gen_positive(r)})"
    if k == 4:
        return f"{q} {r.choice(['+', '-'])} {q} * {gen_positive(r)}"
    if k == 5:
        return f"{r.choice(['max', 'min'])}({q}, {q} * {gen_positive(r)})"
    if k == 6:
        return f"exp({q} / {q} * {r.choice(['1000', '10**10', '-10**10', '709.7', '1e-300', '10**60'])})"
    return f"{q} / {q} - 1 + {r.choice(['1e-40', '1e-20', '0.1', '1e-300'])}"


def gen_value(r: random.Random) -> str:
    k = r.randrange(4)
    if k == 0:
        return gen_number(r)
    if k == 1:
        return f"{gen_number(r)} {gen_unit(r)}"
    if k == 2:
        return f"{gen_number(r)}/{gen_number(r)} {gen_unit(r)}"
    return f"{gen_number(r)}{r.choice(['%', ' %', 'x', ' TB/s', 'TB/s'])}"


def gen_set(r: random.Random) -> str:
    return f"{gen_name(r)}{r.choice(['=', '=', '==', ' = ', ':', ''])}{gen_value(r)}"


def gen_vary(r: random.Random) -> str:
    n = r.choice(["", "3", "20", "0", "-5", "1e9", "20000", "1000001", "x", "2.5", "99999999999999999999"])
    parts = [gen_value(r), gen_value(r)] + ([n] if n else []) + (["log"] if r.random() < 0.3 else [])
    sep = ":" if r.random() < 0.9 else r.choice([";", "::", ","])
    return f"{gen_name(r)}={sep.join(parts)}" if r.random() < 0.9 else gen_name(r)


def mutate(r: random.Random, text: str, extra: Sequence[str] = ()) -> str:
    """One to three random edits: insert, delete, replace, duplicate, control character, payload, wrap."""
    for _ in range(r.randrange(1, 4)):
        pos = r.randrange(len(text) + 1)
        k = r.randrange(9)
        if k == 0 and text:
            text = text[:pos] + text[pos + 1:]
        elif k == 1:
            text = text[:pos] + r.choice("()[]{}+-*/^=<>.,:;'\"\\#@!$%&|~`?_ 0123456789eE") + text[pos:]
        elif k == 2:
            text = text[:pos] + r.choice(CONTROL) + text[pos:]
        elif k == 3 and text:
            a, b = sorted((r.randrange(len(text)), r.randrange(len(text))))
            text = text[:b] + text[a:b] * r.randrange(1, 40) + text[b:]
        elif k == 4 and extra:
            text = text[:pos] + r.choice(extra) + text[pos:]
        elif k == 5:
            text = "(" * r.randrange(1, 120) + text + ")" * r.randrange(1, 120)
        elif k == 6:
            text = text[:pos] + r.choice(NUMBERS) + text[pos:]
        elif k == 7:
            text = text[:pos] + chr(r.randrange(0x80, 0x3000)) + text[pos:]
        else:
            text = text[:pos] + r.choice(UNITS) + text[pos:]
    return text.replace("\x00", "")  # argv cannot hold NUL


# ------------------------------------------------------------------------------------------------------
# file generators: scenario TOML and config.json
# ------------------------------------------------------------------------------------------------------

# `assume` comes first: below a [values.NAME] header it would be a key of that table (scenario files refuse it)
SCENARIO_SEED = """\
assume = ["flops > 0"]

[values.flops]
value = "989 TFLOP/s"
source = "fuzz seed"
as_of = "2026-01-01"

[values.hbm_bandwidth]
value = "3.35 TB/s"
source = "fuzz seed"
"""

CONFIG_SEED = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 14336,
    "vocab_size": 128256, "tie_word_embeddings": False,
}
MOE_SEED = {
    "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": 4096, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
    "num_local_experts": 8, "num_experts_per_tok": 2,
}


def toml_scalar(r: random.Random) -> str:
    return r.choice(['"989 TFLOP/s"', "5", "-1", "0.1", "1e400", "nan", "inf", "-inf", "true", '""', "[]", "{}",
                     "[1, 2]", "{value = 1}", '"' + "9" * 5000 + '"', "9" * 5000, "1979-05-27", '"\\u001b[31m"',
                     '"a\\nb"', "0x1F", '"' + gen_value(r).replace('"', "").replace("\\", "") + '"'])


def gen_scenario_toml(r: random.Random, canary: str) -> bytes:
    """A scenario file: the seed mutated structurally, as text, or byte by byte."""
    k = r.randrange(10)
    text = SCENARIO_SEED
    if k == 0:
        text = f"assume = {toml_scalar(r)}\n" + text.replace('assume = ["flops > 0"]\n', "", 1)
    elif k == 1:
        text = text.replace('"989 TFLOP/s"', toml_scalar(r), 1)
    elif k == 2:
        depth = r.choice([10, 70, 500, 3000])
        text += "\nx = " + "[" * depth + "]" * depth + "\n"
    elif k == 3:
        text += f"\n[values.{gen_name(r)}]\nvalue = {toml_scalar(r)}\nsource = {toml_scalar(r)}\n"
    elif k == 4:
        text = text.replace('assume = ["flops > 0"]', f'assume = ["{r.choice(payloads(canary))}"]'
                            .replace("\\", "\\\\"), 1)
    elif k == 5:
        text = text.replace('"flops > 0"', '"' + gen_relation(r).replace('"', "").replace("\\", "") + '"', 1)
    elif k == 6:
        text = "[values]\nflops = 5\n" if r.random() < 0.5 else "values = 5\n"
    elif k == 7:
        text = mutate(r, text, payloads(canary))
    data = text.encode("utf-8", "surrogatepass") if k != 8 else text.encode("utf-16")
    if k == 9:  # bytes: flips, truncation, invalid UTF-8
        b = bytearray(data)
        for _ in range(r.randrange(1, 6)):
            i = r.randrange(len(b))
            b[i] ^= 1 << r.randrange(8)
        if r.random() < 0.5:
            b = b[: r.randrange(len(b))]
        data = bytes(b) + (b"\xff\xfe" if r.random() < 0.3 else b"")
    return data


def gen_config_json(r: random.Random, canary: str) -> bytes:
    cfg = dict(r.choice([CONFIG_SEED, MOE_SEED]))
    k = r.randrange(9)
    keys = list(cfg)
    if k == 0:
        cfg[r.choice(keys)] = r.choice([0, -1, 10**9, 10**18, 1e308, 1.5, "32", None, [], {}, True, "", 2**63,
                                        float("1e-320")])
    elif k == 1:
        cfg["num_hidden_layers"] = r.choice([1_000_000_000, 10**8, 10**30, 0, -5, 3.7])
    elif k == 2:
        del cfg[r.choice(keys)]
    elif k == 3:
        depth = r.choice([50, 2000, 100_000])
        return (b'{"hidden_size": 4096, "x": ' + b"[" * depth + b"]" * depth + b"}")
    elif k == 4:
        return b'{"hidden_size": ' + b"9" * r.choice([400, 5000, 100_000]) + b"}"
    elif k == 5:
        cfg["model_type"] = r.choice(payloads(canary))
    elif k == 6:
        cfg[r.choice(payloads(canary))] = 1
    elif k == 7:
        return r.choice([b"", b"[]", b"null", b"5", b'"x"', b"\xff\xfe{", b'{"a": NaN}', b'{"a": Infinity}',
                         json.dumps(cfg).encode()[: r.randrange(1, 60)]])
    else:
        text = mutate(r, json.dumps(cfg))
        return text.encode("utf-8", "surrogatepass")
    return json.dumps(cfg).encode()


# ------------------------------------------------------------------------------------------------------
# running cases
# ------------------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    argv: list[str]
    code: int | None
    out: str = ""
    err: str = ""
    seconds: float = 0.0
    hang: bool = False
    spawned: list[str] = field(default_factory=list)  # process-starting events seen by the audit hook


def _serve() -> None:
    """Worker loop: one JSON request per line on stdin ({"argv": [...], "replay": bool}), one JSON reply."""
    import contextlib
    import io

    spawned: list[str] = []
    watching = [False]

    def audit(event: str, args: tuple) -> None:
        if watching[0] and event in ("os.system", "subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn",
                                     "os.fork", "os.forkpty", "pty.spawn"):
            spawned.append(f"{event}: {str(args)[:200]}")

    sys.addaudithook(audit)
    import derive.model.loader as loader
    from derive.cli import main

    real_load = loader.load_library
    memo: dict = {}

    def load_library(specs=("lecture",)):  # the lecture is loaded once per worker (loading is not under test)
        key = tuple(specs)
        if key != ("lecture",):
            return real_load(specs)
        if key not in memo:
            memo[key] = real_load(specs)
        return memo[key]

    loader.load_library = load_library
    load_library(["lecture"])
    reply_stream = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        out, err = io.StringIO(), io.StringIO()
        spawned.clear()
        start = time.perf_counter()
        watching[0] = not request.get("allow_processes", False)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main(request["argv"], replay=request.get("replay", False))
                except SystemExit as exc:  # argparse's own exit
                    code = exc.code if isinstance(exc.code, int) else 2
        except BaseException as exc:  # noqa: BLE001 - anything escaping main is a contract violation
            import traceback

            err.write("Traceback (escaped main): " + "".join(traceback.format_exception(exc))[-2000:])
            code = None
        watching[0] = False
        reply = {"code": code, "out": out.getvalue()[-200_000:], "err": err.getvalue()[-20_000:],
                 "seconds": time.perf_counter() - start, "spawned": list(spawned)}
        reply_stream.write(json.dumps(reply) + "\n")
        reply_stream.flush()


class Worker:
    """A ``--serve`` process; restarted after a hang."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.env = dict(os.environ, **(env or {}))
        self.env["PYTHONPATH"] = os.pathsep.join([str(ROOT), self.env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-u", __file__, "--serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=self.env,
                                     cwd=self.env.get("FUZZ_CWD", str(ROOT)), text=True, bufsize=1)

    def send(self, argv: list[str], *, replay: bool = False, allow_processes: bool = False) -> None:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        assert self.proc and self.proc.stdin
        self.argv, self.started = list(argv), time.monotonic()
        self.proc.stdin.write(json.dumps({"argv": argv, "replay": replay, "allow_processes": allow_processes}) + "\n")
        self.proc.stdin.flush()

    def receive(self, limit: float) -> Outcome:
        assert self.proc and self.proc.stdout
        remaining = limit + 20.0 if not hasattr(self, "_warm") else limit  # the first case also loads derive
        ready, _, _ = select.select([self.proc.stdout], [], [], max(remaining - (time.monotonic() - self.started), 0))
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            hang = self.proc.poll() is None
            self.stop()
            return Outcome(self.argv, None, hang=hang, seconds=time.monotonic() - self.started,
                           err="" if hang else "worker died")
        self._warm = True
        data = json.loads(line)
        return Outcome(self.argv, data["code"], data["out"], data["err"], data["seconds"], False, data["spawned"])

    def run(self, argv: list[str], limit: float = CASE_SECONDS, **kw) -> Outcome:
        self.send(argv, **kw)
        return self.receive(limit)

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
        self.proc = None
        if hasattr(self, "_warm"):
            del self._warm


def run_many(cases: Iterable[list[str]], *, workers: int = 2, limit: float = CASE_SECONDS,
             env: dict[str, str] | None = None, on_outcome: Callable[[Outcome], None] | None = None,
             deadline: float | None = None) -> list[Outcome]:
    """Run argv lists on ``workers`` worker processes; stop early past ``deadline`` (time.monotonic())."""
    pool = [Worker(env) for _ in range(workers)]
    pending = iter(cases)
    busy: dict[int, Worker] = {}
    results: list[Outcome] = []
    try:
        for w in pool:
            argv = next(pending, None)
            if argv is None:
                break
            w.send(argv)
            busy[id(w)] = w
        while busy:
            streams = {w.proc.stdout: w for w in busy.values() if w.proc}
            ready, _, _ = select.select(list(streams), [], [], 0.5)
            now = time.monotonic()
            finished = [streams[s] for s in ready]
            finished += [w for w in busy.values() if w not in finished and w.proc and
                         now - w.started > limit + (0 if hasattr(w, "_warm") else 20.0)]
            for w in finished:
                outcome = w.receive(limit)
                results.append(outcome)
                if on_outcome:
                    on_outcome(outcome)
                del busy[id(w)]
                if deadline is not None and time.monotonic() > deadline:
                    continue
                argv = next(pending, None)
                if argv is not None:
                    w.send(argv)
                    busy[id(w)] = w
    finally:
        for w in pool:
            w.stop()
    return results


# ------------------------------------------------------------------------------------------------------
# the contract
# ------------------------------------------------------------------------------------------------------

def violations(o: Outcome, *, canaries: Iterable[Path] = (), bad: bool = False, good: bool = False) -> list[str]:
    """What ``o`` breaks of the contract (module docstring).  ``bad``: the input is known to be bad (must
    exit 2); ``good``: known to be good (must exit 0 or 1)."""
    found = []
    if o.hang:
        found.append(f"hang (> {CASE_SECONDS:.0f} s)")
    elif o.code not in (0, 1, 2):
        found.append(f"exit code {o.code}: {o.err[-300:]}")
    if "Traceback" in o.err:
        found.append("traceback on stderr: " + o.err[-600:])
    if "internal error" in o.err:
        found.append("untyped internal error: " + o.err.strip()[:300])
    body = o.err[:-1] if o.err.endswith("\n") else o.err
    if any(not line.isprintable() for line in body.split("\n")):
        found.append(f"raw control character on stderr: {o.err[:200]!r}")
    if o.code == 2 and o.err.count("\n") != 1:
        found.append(f"exit 2 with {o.err.count(chr(10))} stderr lines: {o.err[:400]!r}")
    if bad and o.code in (0, 1):
        found.append(f"bad input accepted (exit {o.code})")
    if good and o.code == 2:
        found.append(f"good input refused: {o.err.strip()[:300]}")
    if "--json" in o.argv and o.code in (0, 1) and o.out.strip():
        try:
            json.loads(o.out, parse_constant=_refuse_constant)
        except ValueError as exc:
            found.append(f"--json output is not strict JSON: {exc}")
    if o.spawned:
        found.append(f"process started: {o.spawned[:2]}")
    for canary in canaries:
        if Path(canary).exists():
            found.append(f"CODE EXECUTED: canary {canary} exists")
    return found


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} in JSON")


# ------------------------------------------------------------------------------------------------------
# case sets
# ------------------------------------------------------------------------------------------------------

def string_cases(r: random.Random, n: int, canary: str) -> list[tuple[list[str], str]]:
    """``n`` argv lists fuzzing --set, --assume, eval, --unit and --vary, each with what it exercises."""
    load = payloads(canary)
    seeds_expr = ["critical_batch", "flops / hbm_bandwidth", "hardware_ratio * 2", "exp(10**10)", "1+1e-20",
                  "max(flops, 1e15)", "sqrt(hbm_capacity)", "log(flops)"]
    seeds_rel = ["flops / hbm_bandwidth >= 600", "batch in [1, 4096]", "flops > 0 and not batch < 1"]
    seeds_set = ["flops=989 TFLOP/s", "hbm_bandwidth=3.35 TB/s", "batch=128", "hbm_capacity=80 GB"]
    cases: list[tuple[list[str], str]] = []
    names = ["h100-sxm", "b200", "tpu-v5p", "llama3-70b", "deepseek-v3", "lecture", "roofline.latency_floor",
             "critical_batch", "flops"]
    for i in range(n):
        k = i % 6
        if i % 10 == 9:  # preset, measurement and declaration names; a real check under a fuzzed assumption
            name = mutate(r, r.choice(names), load)
            j = (i // 10) % 5
            if j == 0:
                cases.append((["show", name], "show"))
            elif j == 1:
                cases.append((["eval", "critical_batch", "--hardware", name], "--hardware"))
            elif j == 2:
                cases.append((["eval", "params_total", "--model", name], "--model"))
            elif j == 3:
                cases.append((["eval", "flops", "--hardware", "h100-sxm", "--measurement", name], "--measurement"))
            else:
                rel = pick_relation = gen_relation(r) if r.random() < 0.5 else mutate(r, "flops > 100 TFLOP/s", load)
                cases.append((["check", "roofline.latency_floor", "--assume", pick_relation or rel, "--json"],
                              "check --assume"))
            continue
        mutated = r.random() < 0.5

        def pick(gen, seeds, mutated=mutated):
            base = r.choice(seeds) if mutated else gen(r)
            return mutate(r, base, load) if mutated else base

        if k == 0:
            expr = pick(gen_expr, seeds_expr) if r.random() > 0.1 else r.choice(load)
            if r.random() < 0.4:
                expr = gen_clean_expr(r)
            argv = ["eval", expr] + (["--json"] if r.random() < 0.5 else [])
            cases.append((argv, "eval"))
        elif k == 1:
            value = pick(gen_set, seeds_set) if r.random() > 0.4 else gen_clean_set(r)
            argv = ["eval", r.choice(QUANTITIES[:6]), "--set", value]
            cases.append((argv + (["--json"] if r.random() < 0.3 else []), "--set"))
        elif k == 2:
            rel = pick(gen_relation, seeds_rel) if r.random() > 0.1 else r.choice(load)
            cases.append((["eval", "critical_batch", "--assume", rel], "--assume"))
        elif k == 3:
            unit = mutate(r, r.choice(UNITS), load) if mutated else gen_unit(r)
            cases.append((["eval", r.choice(["flops", "hbm_bandwidth", "critical_batch", "drain_time"]), "--unit",
                           unit] + (["--json"] if r.random() < 0.3 else []), "--unit"))
        elif k == 4:
            vary = mutate(r, gen_vary(r), load) if mutated else gen_vary(r)
            cases.append((["sweep", r.choice(["critical_batch", "hardware_ratio"]), "--vary", vary,
                           "--points", r.choice(["5", "5", "0", "2000000", "-1"])], "--vary"))
        else:
            varies = [f"flops=1e14:1e16:{r.choice(['20000', '2000', '10', '3000'])}",
                      f"hbm_bandwidth=1e12:1e13:{r.choice(['20000', '1500', '10'])}"]
            cmd = r.choice([["sweep", "critical_batch"], ["margin", "lecture_batch_near_optimum"]])
            cases.append(([*cmd, "--vary", varies[0], "--vary", varies[1]], "grid"))
    return cases


KNOWN_BAD: list[tuple[list[str], str]] = [
    (["eval", "x\ny"], "newline"),
    (["eval", "\x1b[31mflops"], "escape sequence"),
    (["eval", "flops", "--set", "flops=1 TB\n/s"], "newline in --set"),
    (["eval", "flops", "--unit", "TB\x1b[2J"], "escape in --unit"),
    (["eval", "flops", "--assume", "flops > 0\nrm -rf /"], "newline in --assume"),
    (["eval", "2**" + "9" * 5000], "5000-digit exponent"),
    (["eval", "9" * 5000], "5000-digit integer"),
    (["eval", "10**10**10"], "tower"),
    (["eval", "exp(-14975 * exp(10**60))"], "exp tower (found by fuzzing: mpmath never finished)"),
    (["eval", "exp(exp(10**60))", "--json"], "exp tower"),
    (["eval", "(" * 5000 + "1" + ")" * 5000], "deep nesting"),
    (["eval", "flops", "--set", "flops=" + "9" * 5000], "5000-digit value"),
    (["sweep", "critical_batch", "--vary", "flops=1e14:1e16:20000", "--vary", "hbm_bandwidth=1e12:1e13:20000"],
     "20000 x 20000 grid"),
    (["margin", "lecture_batch_near_optimum", "--vary", "flops=1e14:1e16:20000", "--vary",
      "hbm_bandwidth=1e12:1e13:20000"], "20000 x 20000 region"),
    (["sweep", "critical_batch", "--vary", "flops=1e14:1e16:100000000"], "1e8-point axis"),
    (["sweep", "critical_batch", "--vary", "flops=1e14:1e16:5", "--out", "/tmp"], "a folder as the CSV file"),
    (["sweep", "critical_batch", "--vary", "flops=1e14:1e16:5", "--figure", "x.gif"], "unknown figure format"),
    (["eval", "critical_batch", "--model", "/tmp"], "a folder as config.json"),
    (["eval", "critical_batch", "--scenario", "/dev/"], "a folder without scenario files"),
    (["eval", "params_total", "--model", "m" * 300 + ".json"], "a file name too long (--model)"),
    (["eval", "flops", "--scenario", "s" * 300 + ".toml"], "a file name too long (--scenario)"),
    (["eval", "flops", "--library", "l" * 300 + ".py"], "a file name too long (--library)"),
    (["eval", "flops", "--scenario", "/dev/zero"], "a device as a scenario file"),
    (["eval", "critical_batch", "--hardware", "h100\n-sxm"], "newline in a preset name"),
    (["eval", "critical_batch", "--scenario", "/nonexistent/\x1b[31m.toml"], "escape in a path"),
]

KNOWN_GOOD: list[tuple[list[str], str]] = [
    (["eval", "exp(10**10)"], "exp(10**10) within the budget"),
    (["eval", "exp(1000)", "--json"], "exp(1000) as strict JSON"),
    (["eval", "1+1e-20", "--json"], "exact sum"),
    (["eval", "1e-40", "--json"], "tiny"),
    (["eval", "1/hbm_capacity**2"], "a unit with nothing in its numerator"),
    (["eval", "((max(hbm_capacity, hbm_capacity * 123456789012345678901))**-2)**1/2", "--json"], "found by fuzzing"),
    (["eval", "drain_time", "--hardware", "tpu-v5p", "--json"], "exact rational"),
    (["sweep", "critical_batch", "--vary", "flops=1e14:1e16:30"], "small sweep"),
]


if __name__ == "__main__" and "--serve" in sys.argv:
    _serve()
