"""A tiny library for the diff / margin / sweep / cache tests: general and instance claims over three inputs.

``aa``, ``bb``, ``cc`` are base quantities; ``ratio = aa/bb`` is derived.  ``fx.general`` (an identity)
does not depend on values; ``fx.inst_r`` (ratio >= 2) uses aa and bb; ``fx.inst_c`` (cc <= 10) uses cc
only; ``fx.dep`` is a general claim that rests on ``fx.inst_r`` (it is blocked when that one fails).
Presets: hardware ``fast`` / ``slow`` set aa, models ``m1`` / ``m2`` set bb and cc.
"""

from __future__ import annotations

from pathlib import Path

SOURCE = '''
"""What-if fixture."""
from derive import Claim, Definition, Quantity, derived, logic

aa = Quantity("aa", "a", "1", "first input")
bb = Quantity("bb", "b", "1", "second input")
cc = Quantity("cc", "c", "1", "third input")
ratio_q = Quantity("ratio", "r", "1", "aa over bb")
ratio = Definition("fx.ratio", title="Ratio", statement="aa over bb.", source=derived("fixture"),
                   defines=ratio_q, expr=aa.sym / bb.sym)
general = Claim("fx.general", title="ratio times bb is aa", statement="An identity.", source=derived("fixture"),
                goal=logic.eq(ratio_q.sym * bb.sym, aa.sym))
inst_r = Claim("fx.inst_r", title="ratio at least 2", statement="At the scenario values.",
               source=derived("fixture"), goal=logic.ge(ratio_q.sym, 2), instance=True, label="Ratio bound")
inst_c = Claim("fx.inst_c", title="cc at most 10", statement="At the scenario values.", source=derived("fixture"),
               goal=logic.le(cc.sym, 10), instance=True)
dep = Claim("fx.dep", title="rests on inst_r", statement="A general claim using inst_r.", source=derived("fixture"),
            goal=logic.gt(aa.sym * bb.sym, 0), uses=(inst_r,))
'''

PRESETS = {
    "hardware/fast.toml": '[values.aa]\nvalue = "10"\nsource = "fixture"\n',
    "hardware/slow.toml": '[values.aa]\nvalue = "3"\nsource = "fixture"\n',
    "models/m1.toml": '[values.bb]\nvalue = "2"\nsource = "fixture"\n[values.cc]\nvalue = "5"\nsource = "fixture"\n',
    "models/m2.toml": '[values.bb]\nvalue = "4"\nsource = "fixture"\n[values.cc]\nvalue = "20"\nsource = "fixture"\n',
}

BASE_SETS = ("aa=10", "bb=2", "cc=5")


def write_library(root: Path) -> Path:
    """The fixture as a library folder (``fx.py`` and ``presets/``); returns the folder."""
    folder = root / "whatif_lib"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fx.py").write_text(SOURCE)
    for rel, text in PRESETS.items():
        path = folder / "presets" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


def load(root: Path):
    from derive.model.loader import load_library

    return load_library([str(write_library(root))])
