"""``python -m derive.probe``: measure this machine (or analyse a saved result), report it, write the files."""

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
from pathlib import Path

from derive.errors import DeriveError
from derive.probe.analysis import ProbeDataError, save_result, write_files
from derive.probe.floors import check_hardware, evaluate, library_for
from derive.probe.report import report


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m derive.probe",
                                description="Measure achieved ceilings, matmul knees, the rates at the knees' "
                                            "shapes, decode steps and prefill passes; print TPOT and TTFT "
                                            "against their floors; write a measurement file and ledger files.")
    p.add_argument("--hardware", required=True, metavar="NAME",
                   help="the hardware preset this machine is (e.g. h100-sxm); names the files")
    p.add_argument("--out", default="probe-out/presets", metavar="DIR",
                   help="presets folder to write measurements/<hardware>/ and ledger/ into (default: "
                        "probe-out/presets, which `--library lecture --library probe-out` reads)")
    p.add_argument("--from-json", metavar="FILE", help="analyse a saved probe result instead of measuring")
    p.add_argument("--tiny", action="store_true", help="tiny sizes (a CPU smoke test; the numbers mean nothing)")
    p.add_argument("--device", default=None, help="torch device (default: cuda when available, else cpu)")
    p.add_argument("--name", default=None, metavar="NAME",
                   help="name of the files written (default: probe-<date>); a second run on one day needs its own")
    p.add_argument("--date", default=None, help="date written into the files (default: today, UTC)")
    p.add_argument("--source", default=None, help="source written into the files")
    p.add_argument("--save-json", metavar="FILE",
                   help="also save the raw result as JSON (rewritten after each section, so a run cut short "
                        "keeps what it measured)")
    p.add_argument("--sections", metavar="LIST",
                   help="measure only these sections, comma-separated (default: all: ceilings, knees, layer_rates, "
                        "read_sizes, shape_rates, decode, prefill)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.name is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", args.name):
        sys.stderr.write(f"derive.probe: error: --name {args.name!r} is not a file name (letters, digits, '.', '_' "
                         "and '-', starting with a letter or digit)\n")
        return 2
    date = args.date or datetime.datetime.now(datetime.UTC).date().isoformat()
    try:
        if args.from_json:
            try:
                result = json.loads(Path(args.from_json).read_text())
            except (OSError, json.JSONDecodeError) as err:
                sys.stderr.write(f"derive.probe: error: cannot read {args.from_json}: {err}\n")
                return 2
            if not isinstance(result, dict):
                raise ProbeDataError(f"{args.from_json} holds no JSON object")
            library = library_for(result)
            check_hardware(library, args.hardware)
            source = args.source or f"probe result {Path(args.from_json).name}"
        else:
            try:
                from derive.probe.bench import SECTIONS, measure
            except ImportError as err:
                sys.stderr.write(f"derive.probe: error: {err} (install the optional extra: pip install "
                                 "'derive-llm[probe]')\n")
                return 2
            sections = SECTIONS if args.sections is None else tuple(x.strip() for x in args.sections.split(","))
            unknown = [x for x in sections if x not in SECTIONS]
            if unknown or not sections:
                sys.stderr.write(f"derive.probe: error: --sections {args.sections!r}: no such section "
                                 f"{', '.join(map(repr, unknown))}; hint: the sections are {', '.join(SECTIONS)}\n")
                return 2
            library = library_for()
            check_hardware(library, args.hardware)  # before minutes of measuring, not after
            keep = None if not args.save_json else (lambda partial: save_result(partial, Path(args.save_json)))
            result = measure(device=args.device, tiny=args.tiny, log=sys.stderr, saved=keep, sections=sections)
            source = args.source or f"derive.probe on {result.get('device')} ({result.get('torch')}), {date}"
        if args.save_json:  # the raw result is kept even when the analysis below refuses it
            save_result(result, Path(args.save_json))
        try:
            rows = evaluate(result, hardware=args.hardware, date=date, source=source, library=library)
            lines = report(result, rows)
            paths = write_files(result, hardware=args.hardware, date=date, source=source, out=Path(args.out),
                                name=args.name)
        except (KeyError, TypeError) as err:  # a saved result edited by hand or from another tool
            raise ProbeDataError(f"probe result has a missing or malformed field ({type(err).__name__}: {err})"
                                 ) from err
    except (ProbeDataError, DeriveError) as err:
        sys.stderr.write(f"derive.probe: error: {err}\n")
        return 2
    for line in lines:
        sys.stdout.write(line + "\n")
    for path in paths:
        sys.stdout.write(f"wrote {path}\n")
    # a floor above a measurement is a bug to report: the exit code says so, as derive ledger's does
    return 1 if any(r.status == "contradiction" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
