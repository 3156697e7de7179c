"""tests/kernel: the trusted kernel, the issue-13 classes, the planted suite and property tests."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
