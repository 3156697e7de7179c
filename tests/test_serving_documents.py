"""Part II in the documents: a topic module's PART opens a part after the lecture's (Markdown, LaTeX, the site's
index), and the serving library's chapters carry it; a library without parts renders as before."""

from __future__ import annotations

import dataclasses

import doclib
import pytest

from derive.checking.checker import Checker
from derive.documents.render import render
from derive.documents.view import document_model
from derive.errors import LibraryError
from derive.model.library import Library, topic_from_module
from derive.model.loader import load_library
from theorems.serving import SERVING_TOPICS


def _model(parts: bool) -> dict:
    lib = doclib.library()
    if parts:
        topics = [lib.topics[0], dataclasses.replace(lib.topics[1], part="Beyond the lecture")]
        lib = Library(topics, figures=lib.figures, title=lib.title)
    scenario = doclib.scenario()
    return document_model(lib, scenario, Checker(lib, scenario).check())


@pytest.fixture(scope="module")
def models():
    return {parts: _model(parts) for parts in (False, True)}


def test_markdown_opens_part_two_before_its_first_chapter(models):
    md = render("markdown", "derivation.md.j2", models[True])
    second = models[True]["chapters"][1]
    assert md.count("# Part II. Beyond the lecture") == 1
    assert md.index("# Part II. Beyond the lecture") < md.index(f'<a id="{second["anchor"]}">')
    assert md.index(f'<a id="{models[True]["chapters"][0]["anchor"]}">') < md.index("# Part II.")
    assert "**Part II. Beyond the lecture**" in md  # in the contents too
    assert "Part II" not in render("markdown", "derivation.md.j2", models[False])


def test_latex_opens_a_part(models):
    tex = render("latex", "derivation.tex.j2", models[True])
    assert tex.count(r"\part{Beyond the lecture}") == 1
    assert r"\part{Beyond the lecture}" not in render("latex", "derivation.tex.j2", models[False])


def test_serving_chapters_are_part_two_and_the_lecture_part_one():
    lib = load_library(["serving"])
    serving = {m.__name__.rsplit(".", 1)[-1] for m in SERVING_TOPICS}
    assert {t.name for t in lib.topics if t.part == "Beyond the lecture"} == serving
    assert all(t.part == "" for t in lib.topics if t.name not in serving)
    # the lecture's chapters come first: part II follows part I
    names = [t.name for t in lib.topics]
    assert max(names.index(n) for n in names if n not in serving) < min(names.index(n) for n in serving)


def test_part_that_is_not_text_is_a_library_error():
    import types

    module = types.ModuleType("odd")
    module.PART = 2
    with pytest.raises(LibraryError, match="PART"):
        topic_from_module(module, set(), set())
