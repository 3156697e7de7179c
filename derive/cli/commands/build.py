"""derive build."""

from __future__ import annotations

from derive.cli import terminal

HELP = "the derivation document (Markdown, LaTeX, PDF, web site), paper macros, figures, status.json"

DESCRIPTION = """\
Check every claim under the scenario and write, into --out (default build/):
  derivation.md     the document, renders on GitHub (figures/*.svg)
  derivation.tex    the document as a LaTeX article (figures/*.pdf); derivation.pdf (and its .log) when
                    pdflatex is installed: part I follows the lecture, the catalogue is in the appendices
  claims.tex        a macro per formula (\\claimBatchOptimum, \\defnCriticalBatch, ...)
  values.tex        a macro per value under the scenario, with its unit (\\valCriticalBatch, ...), and a
                    verdict per claim (\\deriveVerdict{batch_optimum}; \\derivestricttrue stops a paper
                    that cites a claim no longer proved)
  index.html, chapter-*.html, graph.html, assets/   with --format html: a static offline web site
  status.json       the check report (as `derive check --json`, without timings)
  graph.dot, graph.json   the dependency graph
With a scenario other than the baseline `lecture` (--hardware, --model, --set, --assume, --scenario), the
document has a "What breaks" section: claims whose verdict differs from the baseline, with counterexamples.

Outputs are written atomically (a failed build leaves the previous one intact) and reproducibly (two
builds of the same input are byte-identical, PDF included).  Without pdflatex, a notice is printed and
the .tex is still written (exit 0); with DERIVE_REQUIRE_LATEX=1 that is an error.

Examples:
  derive build
  derive build --format md --out docs/
  derive build --format html --out site/
  derive build --hardware b200 --model deepseek-v3 --set "context=32000 token/seq" --out build/b200
"""


def add_arguments(p) -> None:
    import argparse

    p.description = DESCRIPTION
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("--format", default="md,tex,pdf", metavar="md,tex,pdf",
                   help="which documents to write, comma-separated: md, tex, pdf, html (default: md,tex,pdf)")
    p.add_argument("--out", default="build", metavar="DIR", help="output folder (default: build)")


def run(args, ctx) -> int:

    from derive.cli.commands.output import check_output_folder, emit
    from derive.documents.build import build, parse_formats
    from derive.documents.render import check_templates
    from derive.model.scenario import build_scenario

    formats = parse_formats(args.format)
    check_output_folder(args.out, "--out")
    check_templates()  # a broken installation fails here, before any proving
    library = ctx.library
    scenario = ctx.read_scenario  # one chip in one stage is one layout: its values printed, with the note
    baseline = build_scenario(library)

    result = build(library, scenario, args.out, formats, baseline=baseline, rlimit=getattr(args, "rlimit", None),
                   cache=getattr(ctx, "cache", None), stage=terminal.stage)
    from derive.errors import escape_control

    for notice in result.notices:  # one line each, whatever the paths in them hold
        terminal.write_err(f"derive build: notice: {escape_control(notice)}\n")
    from derive.checking.summary import expectations_elsewhere, verdict_summary
    from derive.model.scenario import DEFAULT_SCENARIO

    summary = verdict_summary(result.report.results,
                              expectations_elsewhere(library, scenario, result.report.results), DEFAULT_SCENARIO)
    emit(f"wrote {len(result.files)} files to {result.out}/ (scenario {scenario.name}: {summary})")
    return 0

