"""Broken user libraries: each is a one-line typed error (exit 2), never a silent success or a traceback.

A library that calls ``sys.exit(0)`` while loading must not make ``derive check`` exit 0 with no output
(a paper's CI would read that as success); a library that prints must not corrupt ``--json``.
"""

from __future__ import annotations

import json

import fuzzkit as fk
import pytest

OK = '''
from derive import Claim, Quantity, derived, logic
rate = Quantity("gadget_rate", "r", "1/s", "gadgets per second")
count = Quantity("gadget_count", "n", "1", "gadgets in a batch")
positive = Claim("gadget.positive", title="A batch takes time", statement="n/r > 0", source=derived("fuzz"),
                 goal=logic.gt(count.sym / rate.sym, 0))
'''

BROKEN = {
    "exit0": "import sys\nsys.exit(0)\n",
    "exit3": "raise SystemExit(3)\n",
    "exit_text": "import sys\nsys.exit('bye\\n\\x1b[31mred')\n",
    "syntax": "def (:\n",
    "raises": "raise RuntimeError('boom\\nsecond line\\x1b[2J')\n",
    "missing_import": "import no_such_module_for_derive_fuzz\n",
    "recursion": "def f():\n    return f()\nf()\n",
    "keyerror": "{}['x']\n",
    "topics_int": "TOPICS = 5\n",
    "topics_items": "TOPICS = [5, 'x']\n",
    "topics_text": "TOPICS = 'roofline'\n",
    "preset_dirs_int": "PRESET_DIRS = 5\n",
    "preset_dirs_items": "PRESET_DIRS = [5]\n",
    "reader_int": "MODEL_CONFIG_READER = 5\n",
    "finder_int": "MODEL_CONFIG_FINDER = 5\n",
    "figures_int": "FIGURES = 5\n",
    "title_int": "TITLE = 5\nTOPICS = []\n",
    "ceilings_list": "CEILINGS = [1, 2]\n",
    "ceilings_values": "CEILINGS = {'flops': 5}\n",
    "getattr_raises": "def __getattr__(name):\n    raise RuntimeError('no ' + name)\n",
    "bad_unit": "from derive import Quantity\nq = Quantity('widget_x', 'x', 'furlongs/fortnight', 'x')\n",
    "bad_name": "from derive import Quantity\nq = Quantity('Not Snake', 'x', 's', 'x')\n",
    "bad_value": "from derive import Quantity, derived\nq = Quantity('widget_c', 'c', '1', 'c', value=object(), "
                 "source=derived('s'))\n",
    "duplicate_ids": OK + "again = Claim('gadget.positive', title='t', statement='s', source=derived('f'), "
                          "goal=logic.gt(count.sym, 0))\n",
    "goal_text": OK + "bad = Claim('gadget.text', title='t', statement='s', source=derived('f'), goal='n > 0')\n",
    "deep": "x = " + "[" * 50 + "]" * 50 + "\nraise ValueError(x)\n",
    "huge_int_text": "x = int('9' * 5000)\n",
    "self_definition": OK + "from derive import Definition\nloop = Definition('gadget.loop', title='t', statement='s', "
                            "source=derived('f'), defines=count, expr=count.sym + 1)\n",
}
PRINTING = {
    "prints": "print('hello from the library')\n" + OK,
    "prints_stderr": "import sys\nprint('warning!', file=sys.stderr)\n" + OK,
    "stdout_none": "import sys\nsys.stdout = None\n" + OK,
    "float_constant": OK + "half = Quantity('gadget_half', 'h', '1', 'a half', value=0.1, source=derived('s'))\n",
}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fuzz-libraries")
    cases = []
    for name, source in {**BROKEN, **PRINTING}.items():
        path = tmp / f"lib_{name}.py"
        path.write_text(source)
        kind = "bad" if name in BROKEN else "good"
        for command in (["check"], ["list"]):
            cases.append(([*command, "--library", str(path), "--json"], name, kind))
    results = fk.run_many([c[0] for c in cases], workers=2,
                          env={"DERIVE_CACHE_DIR": str(tmp / "cache"), "FUZZ_CWD": str(tmp)})
    by_argv = {tuple(o.argv): o for o in results}
    return [(c, by_argv[tuple(c[0])]) for c in cases]


def test_broken_libraries_are_one_line_errors(outcomes):
    wrong = []
    for (argv, name, kind), o in outcomes:
        if kind == "bad":
            wrong += [f"{name} ({argv[0]}): {v}" for v in fk.violations(o, bad=True)]
            if o.code == 2 and "--library" not in o.err:
                wrong.append(f"{name}: the error does not say where: {o.err.strip()}")
    assert not wrong, "\n".join(wrong)


def test_a_library_that_exits_zero_is_not_a_success(outcomes):
    for (_argv, name, _), o in outcomes:
        if name == "exit0":
            assert o.code == 2 and "sys.exit(0)" in o.err and o.out == ""


def test_printing_libraries_keep_json_clean(outcomes):
    wrong = []
    for (argv, name, kind), o in outcomes:
        if kind != "good":
            continue
        wrong += [f"{name} ({argv[0]}): {v}" for v in fk.violations(o, good=True)]
        if o.code == 0:
            data = json.loads(o.out)
            if argv[0] == "check":
                assert [c["verdict"] for c in data["claims"]] == ["proved"], name
            if name.startswith("prints"):
                assert "notice: library" in o.err and o.err.count("\n") == 1, o.err
    assert not wrong, "\n".join(wrong)
