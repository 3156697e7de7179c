"""``python -m derive.probe``: measure this machine (or analyse a saved result) and write the two files."""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

from derive.errors import DeriveError
from derive.probe.analysis import ProbeDataError, write_files


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m derive.probe",
                                description="Measure achieved ceilings, matmul knees and decode steps; write a "
                                            "measurement file and a ledger file.")
    p.add_argument("--hardware", required=True, metavar="NAME",
                   help="the hardware preset this machine is (e.g. h100-sxm); names the files")
    p.add_argument("--out", default="probe-out/presets", metavar="DIR",
                   help="presets folder to write measurements/<hardware>/ and ledger/ into (default: "
                        "probe-out/presets, which `--library lecture --library probe-out` reads)")
    p.add_argument("--from-json", metavar="FILE", help="analyse a saved probe result instead of measuring")
    p.add_argument("--tiny", action="store_true", help="tiny sizes (a CPU smoke test; the numbers mean nothing)")
    p.add_argument("--device", default=None, help="torch device (default: cuda when available, else cpu)")
    p.add_argument("--date", default=None, help="date written into the files (default: today, UTC)")
    p.add_argument("--source", default=None, help="source written into the files")
    p.add_argument("--save-json", metavar="FILE", help="also save the raw result as JSON")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    date = args.date or datetime.datetime.now(datetime.UTC).date().isoformat()
    try:
        if args.from_json:
            try:
                result = json.loads(Path(args.from_json).read_text())
            except (OSError, json.JSONDecodeError) as err:
                sys.stderr.write(f"derive.probe: error: cannot read {args.from_json}: {err}\n")
                return 2
            source = args.source or f"probe result {Path(args.from_json).name}"
        else:
            try:
                from derive.probe.bench import measure
            except ImportError as err:
                sys.stderr.write(f"derive.probe: error: {err} (install the optional extra: pip install "
                                 "'derive-llm[probe]')\n")
                return 2
            result = measure(device=args.device, tiny=args.tiny, log=sys.stderr)
            source = args.source or f"derive.probe on {result.get('device')} ({result.get('torch')}), {date}"
        if args.save_json:  # the raw result is kept even when the analysis below refuses it
            Path(args.save_json).write_text(json.dumps(result, indent=1) + "\n")
        from derive.probe.floors import evaluate
        from derive.probe.report import report

        rows = evaluate(result, hardware=args.hardware, date=date, source=source)  # before any file is written
        lines = report(result, rows)
        paths = write_files(result, hardware=args.hardware, date=date, source=source, out=Path(args.out))
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
