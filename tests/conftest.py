"""Shared fixtures: the lecture library and its default scenario are built once per session."""

from __future__ import annotations

import os
import tempfile

import pytest
from hypothesis import settings

# CI runs the property tests from a fixed seed (HYPOTHESIS_PROFILE=ci in .ci/run), so a red run is one anyone can
# rerun; by hand they explore afresh each time.  Neither has a per-example deadline: the suite runs on every CPU
# (make test), so an example's wall time depends on what runs beside it, and speed is bench/'s to measure
settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# Tests that run commands in-process must not write the proof cache into the work tree.
os.environ.setdefault("DERIVE_CACHE_DIR", tempfile.mkdtemp(prefix="derive-test-cache-"))


@pytest.fixture(scope="session")
def lecture_library():
    from derive.model.loader import load_library

    return load_library(["lecture"])


@pytest.fixture(scope="session")
def lecture_scenario(lecture_library):
    from derive.model.scenario import build_scenario

    return build_scenario(lecture_library)


@pytest.fixture(scope="session")
def library(lecture_library):
    return lecture_library


@pytest.fixture(scope="session")
def lecture(lecture_scenario):
    return lecture_scenario


@pytest.fixture(scope="session")
def report(lecture_library, lecture_scenario):
    """Every claim of the lecture checked once under the lecture scenario, by id."""
    from derive.checking.checker import Checker

    return Checker(lecture_library, lecture_scenario).check().by_id()
