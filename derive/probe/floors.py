"""The probe's measurements against the library's floors: the ledger, asked about the files the probe makes.

The probe computes no floor of its own.  It writes its ledger files (``derive.probe.analysis``) into a
scratch preset folder placed before the library's own, and ``derive.whatif.ledger`` evaluates each entry
there exactly as ``derive ledger`` would: a decode step (unfused or fused attention: a sequence's time per
output token) against ``gap.roofline_floor_below_measured``, a prefill pass (time to first token) against
``prefill.ttft_floor`` of the serving library, a knee against ``gap.knee_tokens`` (the lecture's R x S),
each at the spec-sheet peaks and at the ceilings the same run measured.  A measurement below its floor
comes back as a ``contradiction`` row: the caller reports it, never drops it.
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Mapping
from pathlib import Path

from derive.errors import UnknownNameError
from derive.model.library import Library
from derive.model.loader import load_library
from derive.model.scenario import PresetStore
from derive.probe.analysis import write_files
from derive.whatif.ledger import LedgerRow, evaluate_entry, read_ledger_file

# the scratch files' name: "~" sorts after every other name of the same date, so this run's own ceilings win
# the "at achieved ceilings" side over another measurement file dated the same day
SCRATCH_NAME = "~probe-analysis"


def library_for(result: Mapping | None = None) -> Library:
    """The lecture, and the serving library when the result has prefill passes (its TTFT floor); no result:
    a measurement about to run, which will have them."""
    prefill = result is None or bool(result.get("prefill"))
    return load_library(["lecture", "serving"] if prefill else ["lecture"])


def check_hardware(library: Library, hardware: str) -> None:
    """Refuse a ``--hardware`` that names no hardware preset (its floors could not be evaluated)."""
    known = PresetStore.discover(library.preset_dirs).names("hardware")
    if hardware not in known:
        raise UnknownNameError("hardware preset", hardware, known, where="--hardware")


def evaluate(result: Mapping, *, hardware: str, date: str, source: str,
             library: Library | None = None) -> list[LedgerRow]:
    """Every ledger entry the probe makes of ``result``, evaluated against ``library`` (default:
    ``library_for(result)``; the library is not changed)."""
    library = library or library_for(result)
    with tempfile.TemporaryDirectory(prefix="derive-probe-") as tmp:
        folder = Path(tmp)
        paths = write_files(result, hardware=hardware, date=date, source=source, out=folder, name=SCRATCH_NAME)
        scoped = copy.copy(library)  # the same declarations; its own list of preset folders
        scoped.preset_dirs = [folder, *library.preset_dirs]
        store = PresetStore.discover(scoped.preset_dirs)
        return [evaluate_entry(scoped, entry, store)
                for path in paths if path.parent.name == "ledger"
                for entry in read_ledger_file(scoped, path)]
