"""Jamba (``jamba``): attention on one layer in ``attn_layer_period``, Mamba on the others, experts on one layer in
``expert_layer_period``; parameters against AI21's published counts, KV bytes for the attention layers only and
the fixed Mamba state a sequence keeps.

The fixture ``ai21-jamba-1.5-mini.json`` is AI21-Jamba-1.5-Mini's config.json as transcribed in a public test
suite (``tests/fixtures/configs/SOURCES.md``).  Published (the model card): 52B total, 12B active parameters.
Jamba v0.1 has the same shape (Lieber et al., arXiv:2403.19887: 12B active of 52B total parameters).
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.cli import main
from derive.errors import ScenarioError
from derive.model.evaluate import evaluate
from derive.model.scenario import build_scenario
from theorems.configs import kv_layout, load_config_json, model_values, param_breakdown

MINI = Path(__file__).parent / "fixtures" / "configs" / "ai21-jamba-1.5-mini.json"


def _mini(**changes: object) -> dict:
    return json.loads(MINI.read_text()) | changes


# hand counts for Jamba 1.5 Mini, written out from the config's fields
D, VOCAB, INNER, STATE_N, KERNEL, DT_RANK = 4096, 65_536, 2 * 4096, 16, 4, 256
ATTENTION = D * 32 * 128 + 2 * D * 8 * 128 + 32 * 128 * D  # q, k and v (8 KV heads), o
MAMBA = (D * 2 * INNER + INNER * KERNEL + INNER * (DT_RANK + 2 * STATE_N) + DT_RANK * INNER + INNER * STATE_N
         + INNER * D)  # in_proj, conv1d, x_proj, dt_proj, A_log, out_proj
MLP = 3 * D * 14_336  # gate, up, down: the dense MLP and each expert
# layers 4, 12, 20, 28 attention; odd layers MoE (16 experts, 2 per token)
TOTAL = 2 * VOCAB * D + 4 * ATTENTION + 28 * MAMBA + 16 * MLP + 16 * (16 * MLP + D * 16)
ACTIVE = VOCAB * D + 4 * ATTENTION + 28 * MAMBA + 16 * MLP + 16 * (2 * MLP + D * 16)  # LM head, no input embedding
STATE = 28 * (INNER * STATE_N + INNER * (KERNEL - 1)) * 2  # bf16 SSM and convolution state


def test_layer_kinds_follow_the_periods_and_offsets() -> None:
    pb, kv = param_breakdown(_mini()), kv_layout(_mini())
    assert (kv.full_layers, kv.state_layers, pb.moe_layers, pb.layers) == (4, 28, 16, 32)
    assert kv.window_layers == kv.chunk_layers == 0
    assert pb.dense_mlp == 16 * MLP and pb.experts_total == 16 and pb.experts_active == 2


def test_mini_against_published_counts() -> None:
    values = load_config_json(MINI)
    assert values["params_total"].value == TOTAL == 51_569_360_896
    assert float(TOTAL) == pytest.approx(52e9, abs=0.5e9)  # AI21: 52B total
    assert values["params_active"].value == ACTIVE
    # AI21's "12B active" counts every weight on the token's path, the input embedding too
    assert float(ACTIVE + VOCAB * D) == pytest.approx(12e9, abs=0.2e9)


def test_kv_bytes_count_the_four_attention_layers_only() -> None:
    values = load_config_json(MINI)
    assert values["kv_bytes_per_token"].value == 4 * 2 * 8 * 128 * 2 == 16_384
    assert values["kv_cache_layers"].value == 4


def test_state_per_sequence() -> None:
    values = load_config_json(MINI)
    assert values["kv_state_bytes"].value == STATE == 8_716_288
    assert values["kv_state_bytes"].unit == "B/seq"


@pytest.mark.parametrize("context", [1, 4096, 262_144])
def test_kv_per_sequence_adds_the_fixed_state(lecture_library, context: int) -> None:
    sc = build_scenario(lecture_library, model=str(MINI), sets=[f"context={context}"])
    got = Fraction(str(evaluate(lecture_library, sc, "kv_bytes_per_sequence").exact))
    assert got == 16_384 * context + STATE
    assert kv_layout(_mini()).bytes_per_sequence(context, 2) == got


@pytest.mark.parametrize("period, offset, n", [(8, 4, 32), (2, 1, 7), (3, 0, 10), (5, 4, 4), (1, 0, 9)])
def test_attention_layers_are_those_at_the_offset(period: int, offset: int, n: int) -> None:
    # transformers' JambaConfig.layers_block_type, written out layer by layer
    expected = sum(1 for i in range(n) if i % period == offset)
    kv = kv_layout(_mini(attn_layer_period=period, attn_layer_offset=offset, num_hidden_layers=n))
    assert (kv.full_layers, kv.state_layers) == (expected, n - expected)


@pytest.mark.parametrize("period, offset, n", [(2, 1, 32), (2, 0, 7), (4, 3, 10), (1, 0, 9)])
def test_expert_layers_are_those_at_the_offset(period: int, offset: int, n: int) -> None:
    expected = sum(1 for i in range(n) if i % period == offset)
    pb = param_breakdown(_mini(expert_layer_period=period, expert_layer_offset=offset, num_hidden_layers=n))
    assert pb.moe_layers == expected and pb.dense_mlp == (n - expected) * MLP


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_layer_counts_match_the_layer_by_layer_rule(data: st.DataObject) -> None:
    # the reader counts arithmetically; transformers lists every layer (i % period == offset)
    n = data.draw(st.integers(1, 300))
    ap = data.draw(st.integers(1, 16))
    ao = data.draw(st.integers(0, ap - 1))
    ep = data.draw(st.integers(1, 16))
    eo = data.draw(st.integers(0, ep - 1))
    config = _mini(num_hidden_layers=n, attn_layer_period=ap, attn_layer_offset=ao, expert_layer_period=ep,
                   expert_layer_offset=eo)
    kv, pb = kv_layout(config), param_breakdown(config)
    attention = sum(1 for i in range(n) if i % ap == ao)
    moe = sum(1 for i in range(n) if i % ep == eo)
    assert (kv.full_layers, kv.state_layers, pb.moe_layers) == (attention, n - attention, moe)
    assert pb.total == 2 * VOCAB * D + attention * ATTENTION + (n - attention) * MAMBA + (n - moe) * MLP + moe * (
        16 * MLP + D * 16)


def test_one_expert_is_a_dense_model() -> None:
    pb = param_breakdown(_mini(num_experts=1))
    assert pb.moe_layers == 0 and pb.dense_mlp == 32 * MLP and not pb.is_moe


def test_dt_rank_auto_is_a_sixteenth_of_the_width() -> None:
    assert math.ceil(D / 16) == DT_RANK
    assert param_breakdown(_mini(mamba_dt_rank="auto")).total == TOTAL


@pytest.mark.parametrize("changes, what", [
    ({"attn_layer_offset": 8}, "'attn_layer_offset' \\(8\\) must be smaller than 'attn_layer_period' \\(8\\)"),
    ({"expert_layer_offset": 2}, "'expert_layer_offset' \\(2\\) must be smaller"),
    ({"mamba_dt_rank": "half"}, "'mamba_dt_rank' must be a whole number"),
    ({"layer_types": ["mamba"] * 31 + ["attention"]}, "'layer_types' given beside 'attn_layer_period'"),
    ({"mamba_d_state": float("inf")}, "'mamba_d_state' must be a finite whole number"),
])
def test_bad_layout_is_refused(changes: dict, what: str) -> None:
    with pytest.raises(ScenarioError, match=what) as err:
        model_values(_mini(**changes))
    assert "\n" not in str(err.value)


def test_planted_unknown_layer_kind_is_refused_on_the_command_line(tmp_path: Path, capsys) -> None:
    # Jamba's layers are placed by the periods; a layer list with a kind the reader does not know is refused
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_mini(layer_types=["mamba"] * 31 + ["retention"])))
    assert main(["eval", "params_total", "--model", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "layer_types" in captured.err
