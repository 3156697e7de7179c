"""derive presets."""

from __future__ import annotations

from derive.cli import library_option

HELP = "hardware and model presets with their sources, and the measurement files of each hardware preset"
SCENARIO = False


def add_arguments(p) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")
    library_option(p)


def run(args, ctx) -> int:
    from derive.cli.commands.output import emit, emit_json
    from derive.model.scenario import PresetStore, read_toml

    store = PresetStore.discover(ctx.library.preset_dirs)
    out: dict[str, list[dict]] = {}
    for kind in ("hardware", "model", "scenario"):
        rows = []
        for name in store.names(kind):
            path = store.files[kind][name]
            data: dict = {}
            for part in sorted(path.glob("*.toml")) if path.is_dir() else [path]:
                part_data = read_toml(part)
                data.setdefault("values", {}).update(_tables(part_data, "values", part))
                data.update({k: v for k, v in part_data.items() if k != "values"})
            values = {k: {"value": _plain(v.get("value")), "source": _plain(v.get("source")),
                          "as_of": _plain(v.get("as_of"))}
                      for k, v in data.get("values", {}).items()}
            rows.append({"name": name, "title": _plain(data.get("title", "")), "source": _plain(data.get("source")),
                         "as_of": _plain(data.get("as_of")), "values": values,
                         "config": sorted(_table(data, "config", path))})
        out[kind] = rows
    measurements = []
    for hw in store.measured_hardware():
        for path in store.measurement_files(hw):
            data = read_toml(path)
            values = {k: {"value": _plain(v.get("value")), "method": _plain(v.get("method", data.get("method")))}
                      for k, v in _tables(data, "values", path).items()}
            measurements.append({"hardware": hw, "name": path.stem, "title": _plain(data.get("title", "")),
                                 "source": _plain(data.get("source")), "date": _plain(data.get("date")),
                                 "values": values})
    out["measurement"] = measurements
    if args.json:
        emit_json(out)
        return 0
    for kind, rows in out.items():
        if kind == "measurement":
            emit("measurement files (--measured; --measurement NAME picks one):" + ("" if rows else " none"))
            for r in rows:
                emit(f"  {r['hardware'] + '/' + r['name']:<40} {r['date'] or ''}  {r['title']}")
                for k, v in r["values"].items():
                    emit(f"      {k:<20} {_shown(ctx.library, k, v['value']):<16} {v['method'] or ''}")
            continue
        emit(f"{kind} presets:" + ("" if rows else " none"))
        for r in rows:
            emit(f"  {r['name']:<18} {r['title']}")
            for k, v in r["values"].items():
                dated = f" ({v['as_of']})" if v["as_of"] else ""
                emit(f"      {k:<20} {_shown(ctx.library, k, v['value']):<16} {v['source']}{dated}")
            if r["source"]:
                emit(f"      config fields from {r['source']}" + (f" ({r['as_of']})" if r["as_of"] else ""))
    return 0


def _table(data: dict, key: str, path) -> dict:
    """``data[key]`` when it is a table (empty when absent); a preset file where it is not is bad input."""
    from derive.errors import ScenarioError

    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ScenarioError(f"[{key}] must be a table", where=str(path))
    return value


def _tables(data: dict, key: str, path) -> dict:
    """``data[key]``, a table of tables (``[values.NAME]``), checked like ``_table``."""
    from derive.errors import ScenarioError

    table = _table(data, key, path)
    for name, entry in table.items():
        if not isinstance(entry, dict):
            raise ScenarioError(f"{key}.{name} must be a table with `value` and `source`", where=str(path),
                                hint=f'write [{key}.{name}] then value = "..." and source = "..."')
    return table


def _plain(value: object) -> object:
    """A value of a preset file as JSON and a terminal can hold it: a TOML date in ISO form, text with its control
    characters escaped (a preset's title or source could move the cursor or rewrite a line), numbers as they are."""
    import datetime
    import math

    from derive.errors import escape_control

    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if value is None or isinstance(value, (bool, int)) or (isinstance(value, float) and math.isfinite(value)):
        return value  # inf and nan (TOML's own, or 1e400) as text: JSON has no such numbers
    return escape_control(value)


def _shown(library, name: str, text: object) -> str:
    """A preset's value text for people (``3048255290975.663 byte/s`` -> ``3.048 TB/s``); as written when it
    cannot be read (the check that rejects it happens where the preset is used)."""
    from derive.errors import DeriveError
    from derive.model.display import format_quantity
    from derive.model.parse import parse_value

    q = library.quantities.get(name)
    if q is None or text is None:
        return str(text)
    try:
        return format_quantity(parse_value(str(text), q.dimension, quantity=name), q.dimension, q.display_unit)
    except DeriveError:
        return str(text)
