"""derive cache info|clear|prune."""

from __future__ import annotations

from derive.cli import cache_folder, terminal

HELP = "the proof cache: where it is, how big (info), empty it (clear), shrink it to its bound (prune)"
SCENARIO = False


def add_arguments(p) -> None:
    p.add_argument("action", choices=("info", "clear", "prune"), help="what to do")
    p.add_argument("--cache-dir", metavar="DIR", default=None, type=cache_folder,
                   help="cache folder (default: the per-user cache folder, or $DERIVE_CACHE_DIR)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def run(args, ctx) -> int:

    from derive.checking import cache
    from derive.model.display import format_value
    from derive.model.numbers import dumps_json

    def _size(n: int) -> str:
        return format_value(n, "byte", sig=3)

    folder = cache.cache_dir(args.cache_dir)
    if args.action == "clear":
        removed = cache.clear(folder)
        doc = {"folder": str(folder), "removed": removed}
        text = f"removed {removed} entries from {folder}"
    elif args.action == "prune":
        removed = cache.prune(folder)
        doc = {"folder": str(folder), "removed": removed, "limit_bytes": cache.max_bytes()}
        text = f"removed {removed} least recently used entries from {folder} (bound {_size(cache.max_bytes())})"
    else:
        info = cache.info(folder)
        doc = {"folder": str(folder), "entries": info.entries, "bytes": info.bytes, "total_bytes": info.total_bytes,
               "limit_bytes": info.limit}
        lines = [f"cache folder: {folder}"]
        lines += [f"  {kind:<9} {info.entries[kind]:>6} entries  {_size(info.bytes[kind]):>9}" for kind in cache.KINDS]
        lines.append(f"  total     {sum(info.entries.values()):>6} entries  {_size(info.total_bytes):>9}"
                     f"  (bound {_size(info.limit)}, set DERIVE_CACHE_MAX_MB)")
        text = "\n".join(lines)
    terminal.write_out(dumps_json(doc) + "\n" if args.json else text + "\n")
    return 0
