"""What a command needs from its arguments: the library and the scenario, built once, lazily."""

from __future__ import annotations

import argparse
from functools import cached_property
from typing import TYPE_CHECKING

from derive.cli import terminal

if TYPE_CHECKING:
    from derive.model.library import Library
    from derive.model.scenario import Scenario


class Context:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.wrote_cache = False  # set by a run whose output went to the output cache

    @cached_property
    def library(self) -> Library:

        from derive.errors import escape_control
        from derive.model.loader import load_library

        library = load_library(getattr(self.args, "libraries", None) or ["lecture"])
        for notice in library.notices:  # stdout stays derive's own (clean --json)
            terminal.write_err(f"derive {self.args.command}: notice: {escape_control(notice)}\n")
        return library

    @cached_property
    def scenario(self) -> Scenario:
        from derive.model.scenario import build_scenario

        a = self.args
        return build_scenario(self.library, scenario=getattr(a, "scenario", None),
                              hardware=getattr(a, "hardware", None), model=getattr(a, "model", None),
                              sets=getattr(a, "sets", []),
                              assumes=getattr(a, "assumes", []), si=getattr(a, "si", False),
                              measured=getattr(a, "measured", False), measurements=getattr(a, "measurements", []))

    @cached_property
    def read_scenario(self) -> Scenario:
        """The scenario as the commands that check and evaluate read it (check, eval, build; the card and the
        what-ifs do the same in the library): an input table it does not use is read at its defaults where those
        are what it says (one chip in one stage is one layout, with a note), so every command answers alike."""
        from derive.model.scenario import with_implied_input_tables

        return with_implied_input_tables(self.library, self.scenario)

    @property
    def rlimit(self) -> int:
        from derive.kernel.problem import DEFAULT_RLIMIT

        return getattr(self.args, "rlimit", None) or DEFAULT_RLIMIT

    @cached_property
    def cache(self):
        """The proof cache (``derive.checking.cache.ProofCache``), or None under ``--no-cache``."""
        from derive.checking.cache import ProofCache, cache_dir, cache_disabled, unwritable

        if cache_disabled(getattr(self.args, "no_cache", False)):
            return None
        folder = cache_dir(getattr(self.args, "cache_dir", None))
        why = unwritable(folder)
        if why is not None:  # the run goes on without a cache, as --no-cache would, but not without a word
            from derive.cli import terminal
            from derive.errors import escape_control

            terminal.write_err(f"derive {self.args.command}: notice: the cache folder {escape_control(str(folder))} "
                               f"cannot be written ({escape_control(why)}): running without the cache\n")
            return None
        return ProofCache(folder)

    def close(self) -> None:
        """Keep the cache folder within its size bound after a run that wrote to it."""
        cache = self.__dict__.get("cache")
        if self.wrote_cache or (cache is not None and cache.writes):
            from derive.checking.cache import cache_dir, prune

            prune(cache_dir(getattr(self.args, "cache_dir", None)))

    def checker(self, scenario: Scenario | None = None, *, workers: int = 1):
        from derive.checking.checker import Checker

        return Checker(self.library, scenario or self.scenario, rlimit=self.rlimit, cache=self.cache,
                       workers=workers)

    def data_dirs(self) -> list[str]:
        """Folders of data the run read (the library's presets), when the library was loaded."""
        if "library" not in self.__dict__:
            return []
        return [str(d) for d in self.library.preset_dirs]
