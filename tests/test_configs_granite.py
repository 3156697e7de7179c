"""IBM Granite 4 hybrids (``granitemoehybrid``): Mamba-2 or attention layers as ``layer_types`` lists them, and in
every layer a shared MLP plus (H-Small, H-Tiny) a mixture of experts; parameters against IBM's published counts,
KV bytes for the attention layers only and the fixed Mamba-2 state.  Granite MoE with shared experts
(``granitemoeshared``): Granite MoE's count plus one shared MLP per layer, on a shape written for the test (below).

No public copy of a Granite 4 ``config.json`` was found whole (``tests/fixtures/configs/SOURCES.md``); the
H-Small config below is written out from the fields public copies quote (hidden 4096, 40 layers of which 4
attention, 32 heads and 8 KV heads, 72 experts of 768 with 10 per token, a shared MLP of 1536, Mamba-2 of 128
heads x 64 with state 128, vocabulary 100,352, tied embeddings).  Published: 32B total, 9B active (IBM's model
card); the Hugging Face page of ibm-granite/granite-4.0-h-small gives 32.2B from the checkpoint.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from libtools import refused_by_reader_and_cli

from derive.cli import main
from derive.errors import ScenarioError
from theorems.configs import SUPPORTED_MODEL_TYPES, kv_layout, model_values, param_breakdown

H_SMALL = {
    "architectures": ["GraniteMoeHybridForCausalLM"], "model_type": "granitemoehybrid", "hidden_size": 4096,
    "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8, "num_local_experts": 72,
    "num_experts_per_tok": 10, "shared_intermediate_size": 1536, "intermediate_size": 768, "mamba_d_state": 128,
    "mamba_d_conv": 4, "mamba_expand": 2, "mamba_n_heads": 128, "mamba_d_head": 64, "mamba_n_groups": 1,
    "tie_word_embeddings": True, "vocab_size": 100352, "torch_dtype": "bfloat16", "position_embedding_type": "nope",
    # as a public copy abbreviates it: 36 Mamba-2 and 4 attention layers (the file interleaves them; the reader
    # uses the counts, which do not depend on the order)
    "layer_types": ["mamba"] * 36 + ["attention"] * 4,
}

D, VOCAB, INNER = 4096, 100_352, 8192
CONV = INNER + 2 * 128  # x, B and C through the convolution
ATTENTION = D * 32 * 128 + 2 * D * 8 * 128 + 32 * 128 * D
MAMBA = D * (INNER + CONV + 128) + CONV * 4 + INNER * D  # in_proj (z, x, B, C, dt), conv1d, out_proj
EXPERT, SHARED, ROUTER = 3 * D * 768, 3 * D * 1536, D * 72
TOTAL = VOCAB * D + 4 * ATTENTION + 36 * MAMBA + 40 * (72 * EXPERT + SHARED + ROUTER)  # tied: one matrix
ACTIVE = VOCAB * D + 4 * ATTENTION + 36 * MAMBA + 40 * (10 * EXPERT + SHARED + ROUTER)
STATE = 36 * (128 * 64 * 128 + CONV * 3) * 2  # bf16 SSM and convolution state


def test_layer_kinds_are_read_from_the_list() -> None:
    kv, pb = kv_layout(H_SMALL), param_breakdown(H_SMALL)
    assert (kv.full_layers, kv.state_layers, pb.layers, pb.moe_layers) == (4, 36, 40, 40)
    assert (pb.experts_total, pb.experts_active, pb.experts_shared) == (72, 10, 1)
    interleaved = H_SMALL | {"layer_types": (["mamba"] * 9 + ["attention"]) * 4}
    assert model_values(interleaved)["params_total"].value == model_values(H_SMALL)["params_total"].value


def test_h_small_against_published_counts() -> None:
    values = model_values(H_SMALL)
    assert values["params_total"].value == TOTAL == 32_206_393_344
    assert round(float(TOTAL) / 1e9, 1) == 32.2  # the checkpoint's count as Hugging Face shows it
    assert values["params_active"].value == ACTIVE
    assert float(ACTIVE) == pytest.approx(9e9, abs=0.25e9)  # IBM: 9B active


def test_kv_and_state_bytes() -> None:
    values = model_values(H_SMALL)
    assert values["kv_bytes_per_token"].value == 4 * 2 * 8 * 128 * 2 == 16_384
    assert values["kv_state_bytes"].value == STATE == 77_322_240
    assert kv_layout(H_SMALL).bytes_per_sequence(131_072, 2) == 16_384 * 131_072 + STATE


def test_transformers_newer_layer_names_read_the_same() -> None:
    renamed = H_SMALL | {"layer_types": ["linear_attention" if t == "mamba" else "full_attention"
                                         for t in H_SMALL["layer_types"]]}
    assert model_values(renamed)["params_total"].value == TOTAL


def test_no_experts_is_a_dense_hybrid() -> None:
    # Granite-4.0-H-Micro: no experts, the shared MLP is the only MLP
    micro = H_SMALL | {"num_local_experts": 0, "num_experts_per_tok": 0}
    pb = param_breakdown(micro)
    assert not pb.is_moe and pb.dense_mlp == 40 * SHARED and pb.router == 0


def test_no_layer_types_is_all_mamba_as_transformers_makes_it() -> None:
    config = {k: v for k, v in H_SMALL.items() if k != "layer_types"}
    values = model_values(config)
    assert values["kv_bytes_per_token"].value == 0 and kv_layout(config).state_layers == 40
    assert any("'layer_types' absent" in n for n in values.notes)


@pytest.mark.parametrize("changes, what", [
    ({"mamba_d_head": 32}, "mamba_n_heads \\(128\\) \\* mamba_d_head \\(32\\) is not mamba_expand \\* hidden_size"),
    ({"layer_types": ["mamba"] * 39}, "lists 39 layers but num_hidden_layers is 40"),
    ({"num_experts_per_tok": 80}, "80 experts per token but only 72 experts"),
    ({"shared_intermediate_size": None}, "missing field 'shared_intermediate_size'"),
])
def test_bad_layout_is_refused(changes: dict, what: str) -> None:
    with pytest.raises(ScenarioError, match=what) as err:
        model_values(H_SMALL | changes)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("kind", ["conv", "hybrid", "sliding"])
def test_planted_unknown_layer_kind_is_refused_on_the_command_line(tmp_path: Path, capsys, kind: str) -> None:
    # "sliding" is a window the family does not have (no sliding_window field): refused, not read as full
    path = tmp_path / "config.json"
    path.write_text(json.dumps(H_SMALL | {"layer_types": H_SMALL["layer_types"][:-1] + [kind]}))
    assert main(["eval", "params_total", "--model", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1


@pytest.mark.parametrize("drop", [(), ("layer_types",)])
def test_under_an_unknown_type_the_layers_are_not_guessed(drop: tuple[str, ...]) -> None:
    # Granite's fields match Mixtral's (num_local_experts); read so, its Mamba-2 layers would vanish
    config = {k: v for k, v in H_SMALL.items() if k not in drop} | {"model_type": "my_model",
                                                                   "architectures": ["MyModelForCausalLM"]}
    with pytest.raises(ScenarioError, match="unknown architecture 'my_model'") as err:
        model_values(config)
    assert "\n" not in str(err.value)


# Granite MoE with shared experts (``granitemoeshared``).  No publisher's config.json of this type was found in a public
# copy: its one published model, ibm-research/moe-7b-1b-active-shared-experts (the test model transformers' and vLLM's
# documentation name), has a 75-byte model card and no size quoted anywhere searched.  The shape below is therefore
# written for the test: ibm-granite/granite-3.1-3b-a800m-instruct's granitemoe sizes (as test_configs_llama_like.py
# reads them: hidden 1536, 32 layers, 24 heads, 8 KV heads, 40 experts of 512, 8 per token, vocabulary 49,155, tied)
# with a shared MLP of 1024 added, so that the granitemoe count it extends is a checked one.
MOE_SHARED = {
    "architectures": ["GraniteMoeSharedForCausalLM"], "model_type": "granitemoeshared", "hidden_size": 1536,
    "num_hidden_layers": 32, "num_attention_heads": 24, "num_key_value_heads": 8, "intermediate_size": 512,
    "num_local_experts": 40, "num_experts_per_tok": 8, "shared_intermediate_size": 1024, "vocab_size": 49155,
    "tie_word_embeddings": True, "torch_dtype": "bfloat16", "max_position_embeddings": 4096,
    "attention_multiplier": 0.015625, "embedding_multiplier": 12.0, "logits_scaling": 6.0, "residual_multiplier": 0.22,
}
GRANITEMOE_3B = 3_298_693_632  # ibm-granite/granite-3.1-3b-a800m-instruct as the granitemoe reader counts it
S_D, S_N = 1536, 32
S_EXPERT, S_SHARED = 3 * S_D * 512, 3 * S_D * 1024  # gate, up (input_linear, twice the width) and down
S_TOTAL = GRANITEMOE_3B + S_N * S_SHARED
S_ACTIVE = S_TOTAL - S_N * (40 - 8) * S_EXPERT  # tied: the embedding stays, as the output head


def test_granitemoeshared_is_granitemoe_plus_one_shared_mlp_per_layer() -> None:
    v = model_values(MOE_SHARED)
    plain = model_values(MOE_SHARED | {"model_type": "granitemoe", "architectures": ["GraniteMoeForCausalLM"],
                                   "shared_intermediate_size": None})
    assert plain["params_total"].value == GRANITEMOE_3B
    assert v["params_total"].value == S_TOTAL == 3_449_688_576
    assert v["params_active"].value == S_ACTIVE == 1_033_769_472
    assert v["kv_bytes_per_token"].value == S_N * 2 * 8 * 64 * 2 == 65_536
    assert (v["experts_total"].value, v["experts_active"].value, v["experts_shared"].value) == (40, 8, 1)
    pb = param_breakdown(MOE_SHARED)
    assert (pb.shared_experts, pb.moe_layers, pb.router) == (S_N * S_SHARED, S_N, S_N * S_D * 40)


def test_granitemoeshared_without_a_shared_width_is_granitemoe() -> None:
    # transformers' GraniteMoeSharedConfig: shared_intermediate_size 0 by default, and 0 builds no shared MLP
    for config in ({k: v for k, v in MOE_SHARED.items() if k != "shared_intermediate_size"},
                   MOE_SHARED | {"shared_intermediate_size": 0}):
        v = model_values(config)
        assert v["params_total"].value == GRANITEMOE_3B and "experts_shared" not in v
    absent = model_values({k: v for k, v in MOE_SHARED.items() if k != "shared_intermediate_size"})
    assert any("'shared_intermediate_size' absent" in n for n in absent.notes)


def test_granitemoeshared_on_the_command_line(tmp_path: Path, capsys) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(MOE_SHARED))
    assert main(["eval", "params_active", "--model", str(path)]) == 0
    assert "exactly 1033769472 " in capsys.readouterr().out.splitlines()[0]


@pytest.mark.parametrize("changes, what", [
    ({"shared_intermediate_size": -1024}, "field 'shared_intermediate_size' must be at least 0"),
    ({"shared_intermediate_size": 1024.5}, "field 'shared_intermediate_size' must be a whole number"),
    ({"num_local_experts": None}, "missing field 'num_local_experts'"),
    ({"num_experts_per_tok": 41}, "41 experts per token but only 40 experts"),
    ({"layer_types": ["full_attention"] * 31 + ["mamba"]}, "unknown layer kind 'mamba'"),
    ({"layer_types": ["full_attention"] * 31 + ["linear_attention"]}, "linear-attention layer"),
])
def test_a_planted_granitemoeshared_field_the_reader_cannot_place_is_refused(changes: dict, what: str, capsys,
                                                                            tmp_path: Path) -> None:
    refused_by_reader_and_cli(capsys, tmp_path, MOE_SHARED | changes, what)


def test_granitemoeshared_under_an_unknown_type_is_refused_naming_the_shared_width() -> None:
    # read as Mixtral (num_local_experts), the shared MLP would vanish
    with pytest.raises(ScenarioError, match="shared_intermediate_size") as err:
        model_values(MOE_SHARED | {"model_type": "my_model", "architectures": ["MyModelForCausalLM"]})
    assert "\n" not in str(err.value)


def test_granitemoeshared_is_supported() -> None:
    assert "granitemoeshared" in SUPPORTED_MODEL_TYPES
