"""Tests for the preset data files in theorems/presets/: schema, sources, units and cross-checks.

Hardware presets: every value has a source and a date, parses as "NUMBER UNIT" with the dimension
its quantity needs, and the well-known traps are guarded (dense not sparse FLOPs, GiB where the
vendor writes GiB, GB200 per GPU).  Model presets: the [config] table runs through the config
reader and lands within 5 % of the vendor's published totals.
"""

from __future__ import annotations

import re
import tomllib
from fractions import Fraction
from pathlib import Path

import pytest

from derive.model.units import DIMENSIONLESS, Dimension, parse_unit
from theorems.configs import model_values, param_breakdown

PRESETS = Path(__file__).resolve().parent.parent / "theorems" / "presets"
HARDWARE = sorted((PRESETS / "hardware").glob("*.toml"))
MODELS = sorted((PRESETS / "models").glob("*.toml"))

# DESIGN.md "Names users rely on", plus the chips and models the presets brief lists.
REQUIRED_HARDWARE = {
    "a100-80gb", "h100-sxm", "h200", "b200", "gb200-nvl72", "tpu-v5e", "tpu-v5p", "mi300x",
    "b300", "gb300-nvl72", "rubin", "tpu-v4", "tpu-v6e", "tpu7x", "mi325x", "mi355x",
}
REQUIRED_MODELS = {
    "deepseek-v3", "llama3-70b", "llama3-405b", "mixtral-8x7b", "qwen3-235b-a22b",
    "llama3-8b", "mixtral-8x22b", "kimi-k2", "gpt-oss-120b", "gemma3-27b",
}

HARDWARE_DIMENSIONS = {
    "flops": Dimension.of(FLOP=1, s=-1),
    "hbm_bandwidth": Dimension.of(byte=1, s=-1),
    "hbm_capacity": Dimension.of(byte=1),
    "bytes_per_param": Dimension.of(byte=1, param=-1),
    "flops_datatype_bytes": Dimension.of(byte=1, param=-1),
    "bytes_per_kv_element": Dimension.of(byte=1),
    "chips": DIMENSIONLESS,
    "scaleup_domain": DIMENSIONLESS,
    "scaleup_bandwidth": Dimension.of(byte=1, s=-1),
    "scaleout_bandwidth": Dimension.of(byte=1, s=-1),
    "flops_bf16": Dimension.of(FLOP=1, s=-1),
    "flops_fp8": Dimension.of(FLOP=1, s=-1),
    "flops_fp4": Dimension.of(FLOP=1, s=-1),
    "flops_int8": Dimension.of(FLOP=1, s=-1),
    "chip_power": Dimension.of(J=1, s=-1),
    "scaleup_latency": Dimension.of(s=1),
    "scaleout_latency": Dimension.of(s=1),
}
HARDWARE_REQUIRED_VALUES = {"flops", "hbm_bandwidth", "hbm_capacity", "bytes_per_param", "chips", "scaleup_domain",
                            "flops_datatype_bytes"}
BYTES_PER_PRECISION = {"bf16": Fraction(2), "fp8": Fraction(1), "fp4": Fraction(1, 2)}
AS_OF = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")
NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def _load(path: Path) -> dict:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def _quantity(text: str) -> tuple[Fraction, Dimension]:
    """'989 TFLOP/s' -> (989e12, FLOP/s); a bare number is dimensionless."""
    number, _, unit = text.strip().partition(" ")
    parsed = parse_unit(unit)
    return Fraction(number) * parsed.scale, parsed.dimension


def _si(data: dict, key: str) -> Fraction:
    return _quantity(data["values"][key]["value"])[0]


def _check_sourced(entry: object, what: str) -> None:
    assert isinstance(entry, dict), f"{what} must be a table"
    for key in ("value", "source", "as_of"):
        assert isinstance(entry.get(key), str) and entry[key].strip(), f"{what} needs a non-empty {key}"
    assert AS_OF.match(entry["as_of"]), f"{what}: as_of {entry['as_of']!r} is not YYYY-MM"
    assert set(entry) <= {"value", "source", "as_of", "note"}, f"{what}: unexpected keys {set(entry)}"


# --------------------------------------------------------------------------------------------------
# both kinds


def test_required_presets_exist() -> None:
    assert REQUIRED_HARDWARE <= {p.stem for p in HARDWARE}
    assert REQUIRED_MODELS <= {p.stem for p in MODELS}


@pytest.mark.parametrize("path", HARDWARE + MODELS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_header(path: Path) -> None:
    data = _load(path)
    kind = {"hardware": "hardware", "models": "model"}[path.parent.name]
    assert data["name"] == path.stem and NAME.match(path.stem)
    assert data["kind"] == kind
    assert isinstance(data["title"], str) and data["title"].strip()
    assert isinstance(data.get("note", ""), str)


# --------------------------------------------------------------------------------------------------
# hardware


@pytest.mark.parametrize("path", HARDWARE, ids=lambda p: p.stem)
def test_hardware_values(path: Path) -> None:
    data = _load(path)
    assert set(data) <= {"name", "kind", "title", "precision", "note", "values"}
    assert data["precision"] in BYTES_PER_PRECISION
    values = data["values"]
    assert HARDWARE_REQUIRED_VALUES <= set(values), f"missing {HARDWARE_REQUIRED_VALUES - set(values)}"
    assert set(values) <= set(HARDWARE_DIMENSIONS), f"unknown values {set(values) - set(HARDWARE_DIMENSIONS)}"
    for key, entry in values.items():
        _check_sourced(entry, f"{path.stem} values.{key}")
        number, dimension = _quantity(entry["value"])
        assert dimension == HARDWARE_DIMENSIONS[key], f"{path.stem} {key}: {entry['value']!r} is {dimension}"
        assert number > 0
    missing = {"scaleup_bandwidth", "scaleout_bandwidth", "scaleup_latency", "scaleout_latency"} - set(values)
    if missing:  # an omitted value is explained at the top, never silently absent
        assert "omitted" in data.get("note", "").lower(), f"{path.stem}: say why {missing} is omitted"


@pytest.mark.parametrize("path", HARDWARE, ids=lambda p: p.stem)
def test_hardware_plausible_ranges(path: Path) -> None:
    data = _load(path)
    assert _si(data, "bytes_per_param") == BYTES_PER_PRECISION[data["precision"]]
    assert _si(data, "flops_datatype_bytes") == BYTES_PER_PRECISION[data["precision"]]  # flops is at that datatype
    # the native KV datatype: bf16 chips 2 bytes, FP8 and FP4 setups an FP8 cache
    assert _si(data, "bytes_per_kv_element") == max(BYTES_PER_PRECISION[data["precision"]], 1)
    assert 1e14 <= _si(data, "flops") <= 2e16
    assert 5e11 <= _si(data, "hbm_bandwidth") <= 3e13
    assert 1e10 <= _si(data, "hbm_capacity") <= 3e11  # per chip, never per rack
    chips = _si(data, "chips")
    assert chips.denominator == 1 and 1 <= chips <= 10_000
    # a preset's chips are one scale-up domain: the lecture's replica, when no layout says otherwise
    assert _si(data, "scaleup_domain") == chips
    for key in ("scaleup_bandwidth", "scaleout_bandwidth"):
        if key in data["values"]:
            assert 1e9 <= _si(data, key) <= 3e12  # Trainium3's NeuronLink-v4: 2.56 TB/s a device
    if "scaleout_bandwidth" in data["values"] and "scaleup_bandwidth" in data["values"]:
        assert _si(data, "scaleout_bandwidth") < _si(data, "scaleup_bandwidth")
    for key in ("scaleup_latency", "scaleout_latency"):  # a message step: tenths of a microsecond to tens
        if key in data["values"]:
            assert Fraction(1, 10**7) <= _si(data, key) <= Fraction(1, 10**4)
    if "scaleout_latency" in data["values"] and "scaleup_latency" in data["values"]:
        assert _si(data, "scaleup_latency") < _si(data, "scaleout_latency")


def _variants() -> list[tuple[Path, Path]]:
    names = {p.stem: p for p in HARDWARE}
    out = []
    for stem, path in names.items():
        base = re.sub(r"-(fp8|fp4)$", "", stem)
        if base != stem:
            assert base in names, f"{stem} has no base preset {base}"
            out.append((names[base], path))
    return out


@pytest.mark.parametrize("base,variant", _variants(), ids=lambda p: p.stem)
def test_precision_variants(base: Path, variant: Path) -> None:
    """A low-precision variant is the same chip: same memory and links, its FLOP/s the base preset's own rate for its
    datatype, faster than BF16 (2x for FP8 on NVIDIA and AMD; Trainium2's FP8 is 1,299 against 667, 1.95x;
    Trainium3's MXFP8 2,517 against 671, 3.75x)."""
    b, v = _load(base), _load(variant)
    assert b["precision"] == "bf16"
    for key in set(b["values"]) - {"flops", "bytes_per_param", "bytes_per_kv_element", "flops_datatype_bytes"}:
        assert b["values"][key]["value"] == v["values"][key]["value"], f"{variant.stem} differs in {key}"
    assert _si(v, "flops") == _si(b, f"flops_{v['precision']}")
    assert _si(v, "flops") > _si(b, "flops") and _si(v, "bytes_per_param") < _si(b, "bytes_per_param")


def test_dense_not_sparse() -> None:
    # NVIDIA's pages print 2:4-sparse figures; the presets carry the dense ones.
    h100 = _load(PRESETS / "hardware" / "h100-sxm.toml")
    assert _si(h100, "flops") == Fraction(989 * 10**12)
    assert "sparse" in h100["values"]["flops"]["note"]
    assert _si(_load(PRESETS / "hardware" / "h100-sxm-fp8.toml"), "flops") == Fraction(1979 * 10**12)
    assert _si(_load(PRESETS / "hardware" / "mi355x-fp8.toml"), "flops") < Fraction(6 * 10**15)  # not 10.1 PF


def test_gib_where_the_vendor_writes_gib() -> None:
    for name, gib in {"tpu-v4": 32, "tpu-v5p": 95, "tpu7x": 192}.items():
        entry = _load(PRESETS / "hardware" / f"{name}.toml")["values"]["hbm_capacity"]
        assert entry["value"] == f"{gib} GiB"
        assert _quantity(entry["value"])[0] == gib * 2**30


def test_gb200_is_per_gpu() -> None:
    gb200 = _load(PRESETS / "hardware" / "gb200-nvl72.toml")
    assert _si(gb200, "chips") == 72
    assert _si(gb200, "flops") == Fraction(2500 * 10**12)  # a superchip (2 GPUs) would be 5000
    assert _si(gb200, "hbm_capacity") < 2e11  # a rack is 13.4 TB
    assert "per gpu" in gb200["note"].lower()


def test_tpu_fp8_equals_bf16_has_no_variant() -> None:
    # Google lists the same rate for FP8 and BF16 on v5p and v6e: an fp8 preset would double-count.
    names = {p.stem for p in HARDWARE}
    assert "tpu-v5p-fp8" not in names and "tpu-v6e-fp8" not in names


def test_rubin_marked_low_confidence() -> None:
    rubin = _load(PRESETS / "hardware" / "rubin.toml")
    assert "low confidence" in rubin["note"].lower()


def test_lecture_ratio_near_300_on_recent_chips() -> None:
    # flops * bytes_per_param / (2 * hbm_bandwidth): the lecture's "around 300".
    for name in ("h100-sxm-fp8", "b200-fp4", "gb200-nvl72-fp4", "tpu7x-fp8", "mi355x-fp8"):
        data = _load(PRESETS / "hardware" / f"{name}.toml")
        ratio = _si(data, "flops") * _si(data, "bytes_per_param") / (2 * _si(data, "hbm_bandwidth"))
        assert 250 <= ratio <= 350, (name, float(ratio))


# --------------------------------------------------------------------------------------------------
# models


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_model_schema(path: Path) -> None:
    data = _load(path)
    assert set(data) <= {"name", "kind", "title", "source", "as_of", "note", "config", "published"}
    assert isinstance(data["source"], str) and data["source"].strip()
    assert AS_OF.match(data["as_of"])
    assert isinstance(data["config"], dict) and data["config"]
    assert all(re.match(r"^[a-z_][a-z0-9_]*$", k) for k in data["config"]), "config keys are HF field names"
    assert {"params_total", "params_active"} <= set(data["published"])
    for key, entry in data["published"].items():
        _check_sourced(entry, f"{path.stem} published.{key}")
        assert _quantity(entry["value"])[1] == Dimension.of(param=1)


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_model_config_matches_published(path: Path) -> None:
    data = _load(path)
    values = model_values(data["config"], where=str(path))
    pb = param_breakdown(data["config"])
    for key in ("params_total", "params_active"):
        entry = data["published"][key]
        published = _quantity(entry["value"])[0]
        derived = values[key].value
        if key == "params_active" and "excludes the input embedding" not in entry.get("note", ""):
            derived = pb.active_with_embedding  # most publishers count the embedding (gpt-oss's does not)
        assert float(derived) == pytest.approx(float(published), rel=0.05), (path.stem, key, float(derived))
    assert values["layers"].value == data["config"]["num_hidden_layers"]
    assert values["kv_bytes_per_token"].value > 0


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_model_moe_fields_consistent(path: Path) -> None:
    data = _load(path)
    values = model_values(data["config"])
    moe = any(k in data["config"] for k in ("num_local_experts", "num_experts", "n_routed_experts"))
    # a dense model is one expert every token uses; a MoE model's counts come from its config
    expected = param_breakdown(data["config"]).experts_total if moe else 1
    assert values["experts_total"].value == expected >= 1
    pb = param_breakdown(data["config"])
    assert values["params_active"].value == pb.active
    if moe:
        assert pb.active_with_embedding < values["params_total"].value
    else:
        assert pb.active_with_embedding == values["params_total"].value


def test_model_kv_headline_numbers() -> None:
    def kv(name: str) -> Fraction:
        return model_values(_load(PRESETS / "models" / f"{name}.toml")["config"])["kv_bytes_per_token"].value

    assert kv("llama3-70b") == 2 * 80 * 8 * 128 * 2
    assert kv("deepseek-v3") == 61 * (512 + 64) * 2
    assert kv("kimi-k2") == 61 * (512 + 64) * 2


# --------------------------------------------------------------------------------------------------
# FLOP/s per datatype and rated power (the serving library's economics reads chip_power)


@pytest.mark.parametrize("path", HARDWARE, ids=lambda p: p.stem)
def test_flops_per_datatype_agree_with_the_preset_precision(path: Path) -> None:
    data = _load(path)
    values = data["values"]
    own = f"flops_{data['precision']}"
    assert own in values, f"{path.stem}: the rate of its own precision ({own}) is missing"
    assert _si(data, own) == _si(data, "flops")
    rates = [_si(data, f"flops_{p}") for p in BYTES_PER_PRECISION if f"flops_{p}" in values]
    assert rates == sorted(rates), f"{path.stem}: a narrower datatype is never slower"
    assert "flops_bf16" in values  # every chip in the presets has a BF16 rate


@pytest.mark.parametrize("path", [p for p in HARDWARE if "chip_power" in _load(p)["values"]], ids=lambda p: p.stem)
def test_chip_power_is_per_chip(path: Path) -> None:
    watts = _si(_load(path), "chip_power")
    assert 100 <= watts <= 2000  # one accelerator, never a node (8x) or a rack (72x)


def test_chip_power_published_numbers() -> None:
    # NVIDIA: H100 SXM and H200 SXM up to 700 W; AMD: MI300X 750 W, MI355X 1,400 W; A100 SXM4 400 W
    for name, watts in {"h100-sxm": 700, "h100-sxm-fp8": 700, "h200": 700, "mi300x": 750, "mi355x": 1400,
                        "a100-80gb": 400, "b200": 1000}.items():
        assert _si(_load(PRESETS / "hardware" / f"{name}.toml"), "chip_power") == watts, name
    # the false twin: a node's eight GPUs are not one chip's power
    assert _si(_load(PRESETS / "hardware" / "h100-sxm.toml"), "chip_power") != 8 * 700


# --------------------------------------------------------------------------------------------------
# The rates scenario assembly takes for FP8 / FP4 weights, and the link latencies the network floors read

# narrowest last: a narrower datatype is never slower on the same chip
DATATYPE_RATES = ("flops_bf16", "flops_fp8", "flops_fp4")


def _slower_narrower_rates(data: dict) -> list[str]:
    """Each 'narrow < wide' pair among the datatype rates a preset quotes (none when fp4 >= fp8 >= bf16)."""
    present = [key for key in DATATYPE_RATES if key in data["values"]]
    pairs = zip(present, present[1:], strict=False)  # neighbours: the shorter list ends the pairing
    return [f"{narrow} < {wide}" for wide, narrow in pairs if _si(data, narrow) < _si(data, wide)]


@pytest.mark.parametrize("path", HARDWARE, ids=lambda p: p.stem)
def test_narrower_datatype_rate_at_least_the_wider(path: Path) -> None:
    assert _slower_narrower_rates(_load(path)) == [], path.stem


def test_narrower_rate_check_can_fail() -> None:
    # the false twin: H100's 2:4-sparse BF16 figure (1,979) above a dense FP8 one typed too low, and an FP4 rate
    # below FP8 with BF16 absent between them
    h100 = _load(PRESETS / "hardware" / "h100-sxm.toml")
    planted = {"values": {**h100["values"], "flops_bf16": {"value": "1979 TFLOP/s"},
                          "flops_fp8": {"value": "989 TFLOP/s"}}}
    assert _slower_narrower_rates(planted) == ["flops_fp8 < flops_bf16"]
    fp4_low = {"values": {"flops_fp8": {"value": "4500 TFLOP/s"}, "flops_fp4": {"value": "2250 TFLOP/s"}}}
    assert _slower_narrower_rates(fp4_low) == ["flops_fp4 < flops_fp8"]


@pytest.mark.parametrize("path", HARDWARE, ids=lambda p: p.stem)
def test_latencies_are_positive_times(path: Path) -> None:
    data = _load(path)
    for key, entry in data["values"].items():
        if key.endswith("_latency"):
            number, dimension = _quantity(entry["value"])
            assert dimension == Dimension.of(s=1), f"{path.stem} {key}: {entry['value']!r} is not a time"
            assert number > 0, f"{path.stem} {key}"


def test_every_gpu_preset_has_its_link_latencies() -> None:
    # a floor on a multi-chip layout needs both; only the TPUs' data-centre network and AWS Trainium's links have no
    # published figure, and a preset that leaves one out says so in its note (a layout then asks for it: --set)
    for path in HARDWARE:
        data = _load(path)
        values, note = data["values"], data.get("note", "")
        assert "scaleup_latency" in values or "Scale-up latency omitted" in note, path.stem
        if not path.stem.startswith(("tpu", "trn")):
            assert "scaleout_latency" in values, path.stem
        elif "scaleout_latency" not in values:
            assert "latency omitted" in note, path.stem
    assert {p.stem for p in HARDWARE if "scaleup_latency" not in _load(p)["values"]} == {
        "trn2", "trn2-fp8", "trn3", "trn3-fp8"}


def test_amd_latencies_are_the_smallest_published() -> None:
    # RCCL's tables (ROCm/rocm-systems projects/rccl/src/graph/tuning.cc@03a8914): xGMI Ring/LL 0.8 us at the least;
    # the network: NCCL's 2.7 us per step, below RCCL's smallest (5.1 us)
    for name in ("mi300x", "mi300x-fp8", "mi325x", "mi355x", "mi355x-fp8"):
        data = _load(PRESETS / "hardware" / f"{name}.toml")
        assert _si(data, "scaleup_latency") == Fraction(8, 10**7), name
        assert _si(data, "scaleout_latency") == Fraction(27, 10**7) < Fraction(51, 10**7), name
        assert "smallest" in data["values"]["scaleup_latency"]["note"]


def test_blackwell_ultra_and_amd_dense_rates() -> None:
    # dense, not 2:4-sparse: B300 FP8 4,500 (9,000 sparse); GB300 per GPU 5,000 and 15,000; MI325X FP8 2,614.9
    # (AMD's datasheet); MI355X MXFP4 10.1 PF; A100 has no FP8 at all
    expected = {("b300", "flops_fp8"): 4500, ("b300", "flops_fp4"): 15000, ("gb300-nvl72", "flops_fp8"): 5000,
                ("gb300-nvl72", "flops_fp4"): 15000, ("mi325x", "flops_fp8"): Fraction("2614.9"),
                ("mi355x", "flops_fp4"): 10100, ("rubin", "flops_fp8"): 17500, ("rubin", "flops_fp4"): 35000}
    for (name, key), tflops in expected.items():
        assert _si(_load(PRESETS / "hardware" / f"{name}.toml"), key) == tflops * 10**12, (name, key)
    a100 = _load(PRESETS / "hardware" / "a100-80gb.toml")
    assert "flops_fp8" not in a100["values"] and "fp8" in a100["note"].lower()


def test_new_chip_power_published_numbers() -> None:
    # AMD MI325X 1,000 W; NVIDIA B300 (HGX/DGX) 1,000 W, GB300 1,400 W and GB200 1,200 W per GPU
    for name, watts in {"mi325x": 1000, "b300": 1000, "gb300-nvl72": 1400, "gb200-nvl72": 1200}.items():
        assert _si(_load(PRESETS / "hardware" / f"{name}.toml"), "chip_power") == watts, name
    for name in ("rubin", "tpu-v5e", "tpu7x"):  # not published: absent, and the note says so
        data = _load(PRESETS / "hardware" / f"{name}.toml")
        assert "chip_power" not in data["values"] and "chip_power omitted" in data["note"], name
