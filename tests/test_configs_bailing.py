"""inclusionAI Ling 1.5 (``bailing_moe``, the publisher's remote code): the Ling-lite-1.5 file worked by hand, against
the publisher's rounded counts, the fields the reader refuses rather than guesses, the command line.

Published: "Ling-lite has 16.8 billion parameters with 2.75 billion activated parameters" (inclusionAI/Ling
@ 5ccaeae073d6d3a042f9b784802cefdd0abc819f, ``README.md``, introduction and model table: Ling-lite-1.5 16.8B total,
2.75B activated).  The structure is the publisher's ``models/modeling_bailing_moe.py`` in the same repository.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from libtools import refused_by_reader_and_cli, run_cli

from theorems.configs import SUPPORTED_MODEL_TYPES, model_values

CONFIGS = Path(__file__).parent / "fixtures" / "configs"
NAME = "ling-lite-1.5.json"

# Ling-lite-1.5 by hand: 28 layers, all MoE (first_k_dense_replace 0): a fused query_key_value of (16 + 2 * 4) heads of
# 128 and dense, 64 gated experts of 1408 with 6 per token, a router, and 2 shared experts as one MLP of 2 * 1408
D, N, HEADS, KV, HD, VOCAB, EXPERTS, TOP_K, SHARED, WIDTH = 2048, 28, 16, 4, 128, 126464, 64, 6, 2, 1408
ATTENTION = D * (HEADS + 2 * KV) * HD + HEADS * HD * D
EXPERT = 3 * D * WIDTH  # gate, up and down
LAYERS = N * (ATTENTION + 3 * D * SHARED * WIDTH + D * EXPERTS)  # all but the routed experts
TOTAL = 2 * VOCAB * D + LAYERS + N * EXPERTS * EXPERT  # untied: word_embeddings and lm_head
ACTIVE = VOCAB * D + LAYERS + N * TOP_K * EXPERT  # the head, not the input embedding (a lookup)


def _load() -> dict:
    return json.loads((CONFIGS / NAME).read_text())


def test_ling_lite_worked_example() -> None:
    v = model_values(_load())
    assert v["params_total"].value == TOTAL == 16_801_857_536
    assert v["params_active"].value == ACTIVE == 2_494_038_016
    assert v["params_embedding"].value == VOCAB * D == 258_998_272
    # 28 layers * 2 (K and V) * 4 kv heads * 128 head_dim * 2 bytes (bfloat16) = 57,344
    assert v["kv_bytes_per_token"].value == N * 2 * KV * HD * 2 == 57_344
    assert (v["experts_total"].value, v["experts_active"].value, v["experts_shared"].value) == (64, 6, 2)
    assert v["moe_layers"].value == N and v["bytes_per_param"].value == 2
    assert v["context"].value == 32768


def test_ling_lite_against_the_publishers_rounded_counts() -> None:
    # "16.8 billion parameters with 2.75 billion activated": the total with both untied tables, and the active count
    # with the input embedding on a token's path, each within half a unit of the last digit given; the reader leaves
    # out norms only (no bias: use_bias and use_qkv_bias false)
    assert float(TOTAL) == pytest.approx(16.8e9, abs=0.05e9)
    assert float(ACTIVE + VOCAB * D) == pytest.approx(2.75e9, abs=0.005e9)


def test_leading_dense_layers_and_a_dense_model() -> None:
    dense_mlp = 3 * D * 5632
    v = model_values(_load() | {"first_k_dense_replace": 2, "intermediate_size": 5632})
    assert v["moe_layers"].value == N - 2
    moe_layer = EXPERTS * EXPERT + 3 * D * SHARED * WIDTH + D * EXPERTS  # routed, shared, router
    assert v["params_total"].value == TOTAL - 2 * moe_layer + 2 * dense_mlp
    # null num_experts: the publisher's code builds the dense MLP in every layer
    v = model_values(_load() | {"num_experts": None, "intermediate_size": 5632})
    assert v["params_total"].value == 2 * VOCAB * D + N * (ATTENTION + dense_mlp)
    # null num_shared_experts: no shared MLP
    v = model_values(_load() | {"num_shared_experts": None})
    assert v["params_total"].value == TOTAL - N * 3 * D * SHARED * WIDTH


@pytest.mark.parametrize("change, words", [
    ({"architectures": ["BailingMoeV2ForCausalLM"]}, "architecture BailingMoeV2ForCausalLM \\(Ling 2.0\\)"),
    ({"num_key_value_heads": None}, "missing field 'num_key_value_heads'"),
    ({"num_experts": "64"}, "field 'num_experts' must be a whole number"),
    ({"moe_intermediate_size": [1408] * 28}, "field 'moe_intermediate_size' must be a whole number"),
    ({"num_experts_per_tok": 65}, "65 experts per token but only 64 experts"),
    ({"num_key_value_heads": 3}, "not a multiple"),
    ({"first_k_dense_replace": 1, "intermediate_size": None}, "missing field 'intermediate_size'"),
])
def test_a_planted_bailing_field_the_reader_cannot_place_is_refused(change: dict, words: str, capsys,
                                                                    tmp_path: Path) -> None:
    refused_by_reader_and_cli(capsys, tmp_path, _load() | change, words)


def test_an_absent_num_experts_is_refused_not_read_as_the_class_default(capsys, tmp_path: Path) -> None:
    config = {k: v for k, v in _load().items() if k != "num_experts"}
    refused_by_reader_and_cli(capsys, tmp_path, config, "missing field 'num_experts'")


def test_the_command_line_reads_the_ling_file(capsys) -> None:
    code, out, err = run_cli(capsys, ["eval", "params_total", "--model", str(CONFIGS / NAME)])
    assert code == 0 and "exactly 16801857536 " in out.splitlines()[0], err


def test_bailing_moe_is_supported() -> None:
    assert "bailing_moe" in SUPPORTED_MODEL_TYPES
