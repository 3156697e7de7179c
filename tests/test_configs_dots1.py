"""rednote-hilab dots.llm1 (``dots1``): the fixture worked by hand, against the publisher's rounded counts, the fields
the reader refuses rather than guesses, the command line.

Published: "142B total parameters, 14B activated" (the dots.llm1 technical report, rednote-hilab/dots.llm1
@ c5baf7b7f52769841a5cc5eb7e5679daf5fcb4bf, ``dots1_tech_report.pdf``, abstract and Table 6; the same in the README's
model table).  Table 6 gives the sizes: hidden 4,096, FFN 10,944, vocabulary 152,064, MHA with 32 heads and 32 KV
heads, 62 layers, no attention biases, QK normalization, MoE FFN 1,408, 128 routed and 2 shared experts, top-6; section
4.2: "the first layer utilizing a vanilla dense FFN and the subsequent layers employing MoE".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from libtools import refused_by_reader_and_cli, run_cli

from theorems.configs import SUPPORTED_MODEL_TYPES, model_values

CONFIGS = Path(__file__).parent / "fixtures" / "configs"
NAME = "dots.llm1.inst.json"

# dots.llm1 by hand (Table 6): layer 0 a dense gated MLP, layers 1..61 a router, 128 gated experts and 2 shared ones
D, N, HEADS, KV, HD, FFN, VOCAB = 4096, 62, 32, 32, 128, 10944, 152064
EXPERTS, TOP_K, SHARED, WIDTH, DENSE = 128, 6, 2, 1408, 1
MOE = N - DENSE
ATTENTION = D * HEADS * HD + 2 * D * KV * HD + HEADS * HD * D  # q, k and v (32 KV heads: MHA), o
EXPERT = 3 * D * WIDTH  # gate, up and down
LAYERS = N * ATTENTION + DENSE * 3 * D * FFN + MOE * (SHARED * EXPERT + D * EXPERTS)  # all but the routed experts
TOTAL = 2 * VOCAB * D + LAYERS + MOE * EXPERTS * EXPERT  # untied: the embedding and the head
ACTIVE = VOCAB * D + LAYERS + MOE * TOP_K * EXPERT  # the head, not the input embedding (a lookup)


def _load() -> dict:
    return json.loads((CONFIGS / NAME).read_text())


def test_dots1_worked_example() -> None:
    v = model_values(_load())
    assert v["params_total"].value == TOTAL == 142_773_846_016
    assert v["params_active"].value == ACTIVE == 13_393_199_104
    assert v["params_embedding"].value == VOCAB * D == 622_854_144
    # 62 layers * 2 (K and V) * 32 kv heads * 128 head_dim * 2 bytes (no torch_dtype: bf16 assumed) = 1,015,808
    assert v["kv_bytes_per_token"].value == N * 2 * KV * HD * 2 == 1_015_808
    assert (v["experts_total"].value, v["experts_active"].value, v["experts_shared"].value) == (128, 6, 2)
    assert v["moe_layers"].value == MOE == 61
    assert v["context"].value == 32768
    assert any("q and k RMSNorms" in note for note in v.notes)
    assert any(note.startswith("every layer full attention (dots1") for note in v.notes)


def test_dots1_against_the_publishers_rounded_counts() -> None:
    # "142B total ... 14B activated": whole billions.  The active count with both embedding tables on a token's path
    # (14.02B) rounds to 14B; the reader's active count leaves the input embedding out (a lookup): 13.39B, within
    # the 0.62B of that table.  The total, 142.77B with both tables, is 142B only as a figure cut to whole billions
    # (142.15B without the untied head); the reader leaves out norms (q, k and layer norms) and the routing biases,
    # under 2M weights in all, so the gap is not weights the reader misses.
    assert 142e9 <= TOTAL < 143e9
    assert float(ACTIVE + VOCAB * D) == pytest.approx(14e9, abs=0.5e9)
    assert float(ACTIVE) == pytest.approx(14e9, abs=VOCAB * D)


def test_sliding_window_layers_follow_max_window_layers() -> None:
    # Dots1Config: layer i slides when sliding_window is set and i >= max_window_layers; the two windowed layers keep
    # only their last 4,096 tokens, so the per-token KV count is the 60 full layers'
    v = model_values(_load() | {"sliding_window": 4096, "max_window_layers": 60})
    assert v["kv_bytes_per_token"].value == (N - 2) * 2 * KV * HD * 2
    assert any("sliding_window = 4096 on layers 60 to 61" in note for note in v.notes)
    # an absent sliding_window is the class's 4096: a max_window_layers below the layer count windows the rest
    v = model_values(_load() | {"max_window_layers": 61})
    assert v["kv_bytes_per_token"].value == (N - 1) * 2 * KV * HD * 2
    # null sliding_window: no layer slides, whatever max_window_layers says
    v = model_values(_load() | {"sliding_window": None, "max_window_layers": 0})
    assert v["kv_bytes_per_token"].value == N * 2 * KV * HD * 2


@pytest.mark.parametrize("change, words", [
    ({"n_routed_experts": None}, "missing field 'n_routed_experts'"),
    ({"moe_intermediate_size": [1408] * 62}, "field 'moe_intermediate_size' must be a whole number"),
    ({"num_experts_per_tok": 200}, "200 experts per token but only 128 experts"),
    ({"num_key_value_heads": 7}, "not a multiple"),
    ({"moe_layer_freq": 2}, "field 'moe_layer_freq' is 2"),
    ({"sliding_window": 4096, "max_window_layers": 30, "use_sliding_window": False},
     "field 'use_sliding_window' is False"),
    ({"kv_lora_rank": 512}, "field 'kv_lora_rank' is set but model_type 'dots1' has no latent attention"),
])
def test_a_planted_dots1_field_the_reader_cannot_place_is_refused(change: dict, words: str, capsys,
                                                                  tmp_path: Path) -> None:
    refused_by_reader_and_cli(capsys, tmp_path, _load() | change, words)


def test_the_command_line_reads_the_dots1_file(capsys) -> None:
    code, out, err = run_cli(capsys, ["eval", "params_total", "--model", str(CONFIGS / NAME)])
    assert code == 0 and "exactly 142773846016 " in out.splitlines()[0], err


def test_dots1_is_supported() -> None:
    assert "dots1" in SUPPORTED_MODEL_TYPES
