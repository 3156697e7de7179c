"""Rendering the documents' templates with jinja2: the packaged template folders, the filters, and
``render``.  The data they render comes from ``derive.documents.view``.

Rendering uses ``StrictUndefined`` (a missing field is an error) and, for LaTeX, delimiters that cannot clash
with TeX: ``\\VAR{...}``, ``\\BLOCK{...}``, ``\\#{...}``.  Templates live inside the package,
``derive/documents/templates/<kind>``, so a wheel carries them.
"""

from __future__ import annotations

import importlib.resources
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import jinja2

from derive.documents.latex import (
    latex_comment,
    latex_escape,
    latex_escape_breakable,
    latex_prose,
    markdown_escape,
    markdown_heading,
    markdown_math,
    markdown_prose,
)
from derive.errors import ResourceError, TemplateError

TEMPLATE_KINDS = ("latex", "markdown", "html")


# templates --------------------------------------------------------------------------------------------

def template_folder(kind: str):
    """The packaged template folder of one kind, read through importlib.resources (works from a wheel or a zip)."""
    return importlib.resources.files("derive.documents").joinpath("templates", kind)


def check_templates(kinds: Sequence[str] = TEMPLATE_KINDS) -> None:
    """Fail fast, before any proving, when the package was installed without its templates."""
    for kind in kinds:
        folder = template_folder(kind)
        if not folder.is_dir() or not any(entry.name.endswith(".j2") for entry in folder.iterdir()):
            raise ResourceError(f"the installed package lacks its {kind} templates "
                                f"(derive/documents/templates/{kind}); "
                                "reinstall derive-llm")


def _environment(kind: str, template_dir: Path | None = None) -> jinja2.Environment:
    if template_dir is not None:
        folder = template_dir / kind
        if not folder.is_dir():
            raise TemplateError(f"template folder not found: {folder}")
        loader: jinja2.BaseLoader = jinja2.FileSystemLoader(str(folder))
    else:
        check_templates([kind])
        loader = jinja2.PackageLoader("derive.documents", f"templates/{kind}")
    common = {"loader": loader, "undefined": jinja2.StrictUndefined,
              "keep_trailing_newline": True, "trim_blocks": True, "lstrip_blocks": True, "autoescape": False}
    if kind == "latex":
        env = jinja2.Environment(block_start_string=r"\BLOCK{", block_end_string="}",
                                 variable_start_string=r"\VAR{", variable_end_string="}",
                                 comment_start_string=r"\#{", comment_end_string="}",
                                 line_statement_prefix=None, line_comment_prefix=None, **common)
    elif kind == "html":
        from derive.documents.htmltext import html_filters

        env = jinja2.Environment(**{**common, "autoescape": True})
        env.filters.update(html_filters())
        return env
    else:
        env = jinja2.Environment(**common)
    env.filters["tex"] = latex_escape
    env.filters["texbreak"] = latex_escape_breakable
    env.filters["texcomment"] = latex_comment
    env.filters["md"] = markdown_escape
    env.filters["mdmath"] = markdown_math
    env.filters["texprose"] = latex_prose
    env.filters["mdprose"] = markdown_prose
    env.filters["mdheading"] = markdown_heading
    return env


def render(kind: str, template: str, model: Mapping, template_dir: Path | None = None) -> str:
    """Render the packaged ``templates/<kind>/<template>`` with the model; lines are stripped of trailing spaces."""
    try:
        text = _environment(kind, template_dir).get_template(template).render(**model)
    except jinja2.UndefinedError as err:
        raise TemplateError(f"template {kind}/{template}: {err.message}") from None
    except jinja2.TemplateError as err:
        raise TemplateError(f"template {kind}/{template}: {err}") from None
    lines = [line.rstrip() for line in text.splitlines()]
    out = "\n".join(lines).strip("\n") + "\n"
    return re.sub(r"\n{3,}", "\n\n", out)
