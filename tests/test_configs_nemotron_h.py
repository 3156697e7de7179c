"""Nemotron-H / Nemotron 3 (``nemotron_h``): Mamba-2, attention and MoE layers read from
``hybrid_override_pattern``, parameters against NVIDIA's published counts, KV bytes for the six attention layers
only, and the fixed recurrent state a sequence keeps in the Mamba-2 layers.

The fixture ``nvidia-nemotron-3-nano-30b-a3b-bf16.json`` is the publisher's config.json verbatim
(``tests/fixtures/configs/SOURCES.md``).  Published: 31.6B total, about 3.2B active (3.5B counting the
embedding), 23 Mamba-2 + 23 MoE + 6 attention layers, 128 experts + 1 shared, 6 per token.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from derive.cli import main
from derive.errors import ScenarioError
from derive.model.evaluate import evaluate
from derive.model.scenario import build_scenario
from theorems.configs import kv_layout, load_config_json, model_values, param_breakdown

CONFIGS = Path(__file__).parent / "fixtures" / "configs"
NANO = CONFIGS / "nvidia-nemotron-3-nano-30b-a3b-bf16.json"


def _nano(**changes: object) -> dict:
    return json.loads(NANO.read_text()) | changes


# hand counts for the Nano, written out from the config's fields
D, VOCAB = 2688, 131_072
INNER, GN, HEADS, KERNEL = 64 * 64, 8 * 128, 64, 4  # mamba_num_heads * mamba_head_dim, n_groups * ssm_state_size
CONV = INNER + 2 * GN
MAMBA = D * (INNER + CONV + HEADS) + CONV * KERNEL + INNER * D  # in_proj (z, x, B, C, dt), conv1d, out_proj
ATTENTION = D * 32 * 128 + 2 * D * 2 * 128 + 32 * 128 * D  # q, k and v (2 KV heads), o
EXPERT, SHARED, ROUTER = 2 * D * 1856, 2 * D * 3712, D * 128  # up and down (squared ReLU, no gate)
TOTAL = 2 * VOCAB * D + 23 * MAMBA + 6 * ATTENTION + 23 * (128 * EXPERT + SHARED + ROUTER)
ACTIVE = VOCAB * D + 23 * MAMBA + 6 * ATTENTION + 23 * (6 * EXPERT + SHARED + ROUTER)  # LM head, no input embedding
STATE = 23 * (64 * 64 * 128 * 4 + CONV * (KERNEL - 1) * 2)  # FP32 SSM state (mamba_ssm_cache_dtype), bf16 conv


def test_nano_layer_pattern_is_read_exactly() -> None:
    pb, kv = param_breakdown(_nano()), kv_layout(_nano())
    assert (kv.full_layers, kv.state_layers, pb.moe_layers, pb.layers) == (6, 23, 23, 52)
    assert kv.window_layers == kv.chunk_layers == 0 and pb.dense_mlp == 0


def test_nano_against_published_counts() -> None:
    values = load_config_json(NANO)
    assert values["params_total"].value == TOTAL
    assert float(TOTAL) == pytest.approx(31.6e9, abs=0.05e9)  # NVIDIA: 31.6B total
    assert values["params_active"].value == ACTIVE
    assert float(ACTIVE) == pytest.approx(3.2e9, abs=0.05e9)  # about 3.2B active
    # the "3.5B active" of NVIDIA's summary pages counts the input embedding too
    assert float(ACTIVE + VOCAB * D) == pytest.approx(3.5e9, abs=0.1e9)
    experts = (values["experts_total"].value, values["experts_active"].value, values["experts_shared"].value)
    assert experts == (128, 6, 1)


def test_nano_kv_bytes_count_the_attention_layers_only() -> None:
    values = load_config_json(NANO)
    assert values["kv_bytes_per_token"].value == 6 * 2 * 2 * 128 * 2 == 6144  # 6 layers, K and V, 2 heads, bf16
    assert values["kv_cache_layers"].value == 6


def test_nano_state_per_sequence() -> None:
    values = load_config_json(NANO)
    assert values["kv_state_bytes"].value == STATE == 49_082_368
    assert values["kv_state_bytes"].unit == "B/seq"
    # without mamba_ssm_cache_dtype the SSM state takes the KV element size
    plain = {k: v for k, v in _nano().items() if k != "mamba_ssm_cache_dtype"}
    assert model_values(plain)["kv_state_bytes"].value == 23 * (64 * 64 * 128 + CONV * 3) * 2


@pytest.mark.parametrize("context", [1, 8192, 262_144])
def test_nano_kv_per_sequence_adds_the_fixed_state(lecture_library, context: int) -> None:
    sc = build_scenario(lecture_library, model=str(NANO), sets=[f"context={context}"])
    got = Fraction(str(evaluate(lecture_library, sc, "kv_bytes_per_sequence").exact))
    assert got == 6144 * context + STATE
    assert kv_layout(_nano()).bytes_per_sequence(context, 2) == got


def test_mlp_layers_are_two_matrices() -> None:
    # Nemotron-H's dense layers ('-'): up and down of intermediate_size, squared ReLU
    config = _nano(hybrid_override_pattern="M-*E", num_hidden_layers=4)
    pb = param_breakdown(config)
    assert pb.dense_mlp == 2 * D * 1856 and pb.moe_layers == 1
    assert pb.attention == MAMBA + ATTENTION


@pytest.mark.parametrize("pattern, what", [
    ("MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEMX", "unknown layer kind 'X' at layer 51"),
    ("MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM", "has 51 layers but num_hidden_layers is 52"),
    (["M"] * 52, "must be a string"),
])
def test_bad_pattern_is_refused(pattern: object, what: str) -> None:
    with pytest.raises(ScenarioError, match=what) as err:
        model_values(_nano(hybrid_override_pattern=pattern))
    assert "\n" not in str(err.value)


def test_missing_pattern_is_refused() -> None:
    config = {k: v for k, v in _nano().items() if k != "hybrid_override_pattern"}
    with pytest.raises(ScenarioError, match="hybrid_override_pattern"):
        model_values(config)


def test_layer_types_beside_the_pattern_is_refused() -> None:
    with pytest.raises(ScenarioError, match="layer_types"):
        model_values(_nano(layer_types=["attention"] * 52))


def test_infinity_in_a_setting_is_read_and_in_a_size_refused(tmp_path: Path, capsys) -> None:
    # Nemotron-H files hold "time_step_limit": [0.0, Infinity]; Python's json reads it, and so does derive
    text = NANO.read_text().replace('"time_step_floor"', '"time_step_limit": [0.0, Infinity],\n  "time_step_floor"')
    ok = tmp_path / "config.json"
    ok.write_text(text)
    assert main(["eval", "kv_bytes_per_token", "--model", str(ok)]) == 0
    assert "6144" in capsys.readouterr().out.replace(",", "")
    for field, constant in (("hidden_size", "Infinity"), ("max_position_embeddings", "NaN"),
                            ("ssm_state_size", "-Infinity")):
        bad = tmp_path / f"bad-{field}.json"
        bad.write_text(json.dumps(_nano()).replace(f'"{field}": {_nano()[field]}', f'"{field}": {constant}'))
        assert main(["eval", "params_total", "--model", str(bad)]) == 2
        err = capsys.readouterr().err
        assert f"'{field}'" in err and "finite" in err and err.count("\n") == 1 and "Traceback" not in err
