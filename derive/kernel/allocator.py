"""Keep freed memory in the process while z3 contexts come and go.

The kernel asks z3 each question in a fresh context (so answers never depend on what was asked
before).  A context allocates a few large tables; glibc hands them back to the operating system when
the context is deleted, and the next context faults the same pages in again, zeroed by the kernel.
Over the lecture's few hundred contexts that was about a quarter of a cold check's CPU time, almost
all of it system time.  Raising glibc's trim and mmap thresholds keeps those pages in the process for
reuse; the peak memory of a check does not change.  Elsewhere than glibc this does nothing.
"""

from __future__ import annotations

import ctypes

_M_TRIM_THRESHOLD = -1  # mallopt parameters, from glibc's <malloc.h>
_M_MMAP_THRESHOLD = -3
THRESHOLD = 64 * 1024 * 1024

_set: bool | None = None


def keep_freed_memory() -> bool:
    """Set glibc's thresholds once per process; True when they are set (False: not glibc)."""
    global _set
    if _set is None:
        try:
            mallopt = getattr(ctypes.CDLL(None), "mallopt", None)  # the symbols the process already has
        except OSError:
            mallopt = None
        _set = mallopt is not None and bool(mallopt(_M_TRIM_THRESHOLD, THRESHOLD)) \
            and bool(mallopt(_M_MMAP_THRESHOLD, THRESHOLD))
    return _set
