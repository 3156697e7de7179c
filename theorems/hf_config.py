"""Compatibility name for ``theorems.configs``, the config.json reader (one module per model family).

Kept so that code written against ``theorems.hf_config`` keeps working; new code imports
``theorems.configs``.
"""

from __future__ import annotations

from .configs import *  # noqa: F403  (the same public names, listed once in theorems.configs.__all__)
from .configs import __all__  # noqa: F401
