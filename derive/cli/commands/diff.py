"""derive diff."""

from __future__ import annotations

HELP = "claims whose verdict changes between a baseline scenario and the given one, with counterexamples"

DESCRIPTION = """\
Claims whose verdict changes between the baseline (default: the `lecture` scenario, or --against)
and the scenario given by the scenario options, each with its exactly re-checked counterexample.

Only the claims the change can reach are re-checked: instance claims that use a quantity whose value
or pin changed (through definitions), and claims that share a quantity with an added or dropped
--assume relation.  Every other claim keeps its baseline verdict; blocking is recomputed over the
whole graph.  The output says how many claims were re-checked and how many prover calls ran.

Formats: text (default); --json: {"changed": [{"id", "before", "after", "counterexample", ...}],
"unchanged": n, "rechecked": n, "rechecked_ids", "prover_calls", "changes", "pinned"};
--format md: a Markdown report (a table of the changed claims, the scenario change, the re-checked
claims and why), for a pull request or a notebook.

Exit status 0 (1 with --exit-code when some verdict changes; 2 on bad input).

Examples:
  derive diff --set "flops=989 TFLOP/s"
  derive diff --set "hardware_ratio=600 token" --json
  derive diff --hardware h100-sxm --model llama3-70b --format md > diff.md
  derive diff --against my_scenario.toml --assume "experts_active in [4, 16]"
"""


def add_arguments(p) -> None:
    p.description = DESCRIPTION
    import argparse

    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("ids", nargs="*", metavar="ID", help="only these claims (and the claims they rest on)")
    p.add_argument("--against", metavar="SCENARIO", default=None,
                   help="baseline scenario: a name or a TOML file (default: lecture)")
    p.add_argument("--json", action="store_true", help="machine-readable output (same as --format json)")
    p.add_argument("--format", choices=("text", "json", "md"), default=None, help="output format")
    p.add_argument("--exit-code", action="store_true", help="exit 1 when some claim changes verdict")


def run(args, ctx) -> int:
    from derive.checking.cache import ResultsCache, cache_dir
    from derive.cli.commands.output import emit, emit_json, pinned_notes
    from derive.errors import DeriveError
    from derive.model.scenario import build_scenario
    from derive.whatif.diff import diff
    from derive.whatif.explain import explain_flips

    fmt = "json" if args.json else (args.format or "text")
    lib = ctx.library
    try:
        baseline = build_scenario(lib, scenario=args.against)
    except DeriveError as err:  # the baseline's problem is in --against, not in --scenario
        if err.where and err.where.startswith("--scenario"):
            err.where = "--against" + err.where[len("--scenario"):]
            err.message = err.message.replace("--scenario", "--against")
            err.hint = err.hint and err.hint.replace("--scenario", "--against")
        raise
    current = ctx.scenario
    if args.scenario and args.against is None and (args.sets or args.assumes):
        from derive.cli import terminal  # the baseline is not the scenario the changes were made to: said once
        from derive.errors import escape_control

        shown = escape_control(args.scenario)
        terminal.write_err(f"derive diff: notice: the baseline is the lecture's scenario; --against {shown} "
                           f"compares against {shown} without the --set/--assume changes\n")
    results_cache = None if ctx.cache is None else ResultsCache(cache_dir(getattr(args, "cache_dir", None)))
    report = diff(lib, baseline, current, rlimit=ctx.rlimit, cache=ctx.cache, results_cache=results_cache,
                  ids=args.ids or None)
    explain_flips(report, rlimit=ctx.rlimit)
    report.pinned = {"baseline": pinned_notes(lib, baseline), "scenario": pinned_notes(lib, current)}
    if fmt == "json":
        emit_json(report.to_json())
    elif fmt == "md":
        emit(report.markdown())
    else:
        from derive.cli.terminal import emit_lines

        emit_lines(report.text_lines())
    return 1 if args.exit_code and report.changed() else 0
