"""What a command needs from its arguments: the library and the scenario, built once, lazily."""

from __future__ import annotations

import argparse
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .library import Library
    from .scenario import Scenario


class Context:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args

    @cached_property
    def library(self) -> Library:
        from .loader import load_library

        return load_library(getattr(self.args, "libraries", None) or ["lecture"])

    @cached_property
    def scenario(self) -> Scenario:
        from .scenario import build_scenario

        a = self.args
        return build_scenario(self.library, scenario=getattr(a, "scenario", None),
                              hardware=getattr(a, "hardware", None), model=getattr(a, "model", None),
                              sets=getattr(a, "sets", []),
                              assumes=getattr(a, "assumes", []))

    @property
    def rlimit(self) -> int:
        from .prover import DEFAULT_RLIMIT

        return getattr(self.args, "rlimit", None) or DEFAULT_RLIMIT

    def checker(self):
        from .checker import Checker

        return Checker(self.library, self.scenario, rlimit=self.rlimit)
