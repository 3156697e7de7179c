"""derive audit streams a table: memory does not grow with its rows (speed is measured in bench/audit.py).

The table is generated line by line as it is read (no file of that size is written), every metric value distinct,
and the audit's chunk and cache sizes are scaled down so that a small table spans many chunks and many cache
flushes; the peak traced allocation is then the same for ten times the rows.
"""

from __future__ import annotations

import io
import tracemalloc

import pytest

import derive.whatif.audit as audit
from derive.model.loader import load_library
from derive.whatif.audit import Auditor, checker_for, plan_audit, read_rows

LIB = load_library(["lecture"])
PLAN = plan_audit(LIB, checker_for(LIB))


class GeneratedTable(io.TextIOBase):
    """A CSV table of ``rows`` decode steps, made one line at a time as it is read."""

    HEADER = "id,model,hardware,chips,batch,context,bytes_per_param,tpot\n"

    def __init__(self, rows: int) -> None:
        self.rows = rows
        self.line = -1

    def readable(self) -> bool:
        return True

    def readline(self, size: int = -1) -> str:
        self.line += 1
        i = self.line
        if i == 0:
            return self.HEADER
        if i > self.rows:
            return ""
        return f"r{i},llama3-8b,h100-sxm,1,{1 + i % 64},{128 + i % 4096},2 byte/param,{5 + (i % 99991) / 1000} ms\n"

    def __iter__(self):
        return iter(self.readline, "")


def _peak(rows: int, keep: bool = False) -> tuple[int, int]:
    """(rows audited, peak traced bytes while auditing); ``keep``: the consumer holds every row (a leak)."""
    header, stream = read_rows("-", stdin=GeneratedTable(rows), fmt="csv")
    auditor = Auditor(PLAN, header, where="<generated>")
    held, count = [], 0
    tracemalloc.start()
    try:
        for row in auditor.audit(stream):
            count += 1
            if keep:
                held.append(row)
        return count, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(audit, "CHUNK_ROWS", 250)
    monkeypatch.setattr(audit, "CACHE_ENTRIES", 1000)


def test_memory_does_not_grow_with_rows(small_chunks):
    n_small, small = _peak(2_000)
    n_large, large = _peak(20_000)
    assert (n_small, n_large) == (2_000, 20_000)  # every generated row was audited
    assert large < 1.2 * small, f"peak {small:,} bytes for 2k rows, {large:,} for 20k"


def test_the_memory_measure_sees_rows_that_are_kept(small_chunks):
    """The planted twin: a consumer that holds its rows does show growth, so the check above can fail."""
    _, small = _peak(2_000, keep=True)
    _, large = _peak(6_000, keep=True)
    assert large > 1.5 * small
