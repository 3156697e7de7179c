"""``python -m derive.probe``: measure this machine (or analyse a saved result) and write the two files."""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

from derive.probe.analysis import ProbeDataError, knee, write_files


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
        if args.save_json:
            Path(args.save_json).write_text(json.dumps(result, indent=1) + "\n")
        paths = write_files(result, hardware=args.hardware, date=date, source=source, out=Path(args.out))
    except ProbeDataError as err:
        sys.stderr.write(f"derive.probe: error: {err}\n")
        return 2
    _table(result)
    for path in paths:
        sys.stdout.write(f"wrote {path}\n")
    return 0


def _table(result: dict) -> None:
    from derive.model.display import format_value

    w = sys.stdout.write
    w(f"device: {result.get('device')}\n")
    w(f"  achieved dense FLOP/s   {format_value(result['matmul_flops_per_s'], 'FLOP/s')}\n")
    w(f"  achieved HBM read       {format_value(result['read_bytes_per_s'], 'byte/s')}\n")
    ratio = result["matmul_flops_per_s"] / result["read_bytes_per_s"]
    w(f"  achieved F/W            {format_value(ratio, 'FLOP/byte')}\n")
    if result.get("dense_knee"):
        w(f"  dense knee              {format_value(knee(result['dense_knee']['points']).tokens, 'token')}\n")
    for moe in result.get("moe_knee", []):
        s = moe["experts"] / moe["top_k"]
        w(f"  knee E={moe['experts']:<3} k={moe['top_k']:<2} S={s:<4g}  "
          f"{format_value(knee(moe['points']).tokens, 'token')}\n")
    for p in result.get("decode", []):
        w(f"  decode B={p['batch']:<5} L={p['context']:<6} {format_value(p['seconds'], 's')}\n")


if __name__ == "__main__":
    sys.exit(main())
