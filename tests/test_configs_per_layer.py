"""Configs that describe their layers one by one: Llama-Nemotron NAS ``block_configs`` (``nemotron-nas``) and
``moe_layer_freq`` given as a per-layer list (MiMo-V2-Flash's form).

The fixture ``llama-3.3-nemotron-super-49b-v1.json`` is NVIDIA's Llama-3.3-Nemotron-Super-49B-v1 file as NeMo
quotes it (``tests/fixtures/configs/SOURCES.md``): its 80 blocks are read one by one and the total compared with
the checkpoint's 49.9B.  The smaller NAS configs below have the file's form (every block carries
``n_heads_in_group``, ``no_op``, ``replace_with_linear``, ``sparsify``, sink and window keys, the last ones null or
false; ``ffn_mult`` 5.25, 2.625, 1.3125, 1.0, 0.5); the counts are written out by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from derive.cli import main
from derive.errors import ScenarioError
from theorems.configs import kv_layout, model_values, param_breakdown

CONFIGS = Path(__file__).parent / "fixtures" / "configs"
D = 8192


def _block(group: int | None, mult: float, *, linear_attention: bool = False, ffn_no_op: bool = False,
           **attention_extra: object) -> dict:
    return {"attention": {"n_heads_in_group": group, "no_op": group is None and not linear_attention,
                          "num_sink_tokens": None, "replace_with_linear": linear_attention, "sparsify": None,
                          "unshifted_sink": False, "use_prefill_window_in_sink_attention": False,
                          "window_length": None, **attention_extra},
            "ffn": {"ffn_mult": mult, "no_op": ffn_no_op, "replace_with_linear": False, "sparsify": None}}


def _nas(blocks: list[dict]) -> dict:
    return {"architectures": ["DeciLMForCausalLM"], "model_type": "nemotron-nas", "hidden_size": D,
            "num_attention_heads": 64, "num_hidden_layers": len(blocks), "num_key_value_heads": None,
            "intermediate_size": None, "vocab_size": 128_256, "tie_word_embeddings": False,
            "torch_dtype": "bfloat16", "rms_norm_eps": 1e-05, "block_configs": blocks}


ATTENTION_8 = D * D + 2 * D * 8 * 128 + D * D  # q, k and v (8 KV heads of 128), o


@pytest.mark.parametrize("mult, width", [(5.25, 28_672), (2.625, 14_336), (1.3125, 7168), (1.0, 5632), (0.5, 2816)])
def test_ffn_width_from_ffn_mult(mult: float, width: int) -> None:
    # int(2/3 * ffn_mult * 8192) rounded up to 256: 5.25 gives Llama-3.3-70B's 28,672
    pb = param_breakdown(_nas([_block(8, mult)]))
    assert pb.dense_mlp == 3 * D * width


def test_blocks_are_counted_one_by_one() -> None:
    blocks = [_block(8, 5.25), _block(None, 2.625), _block(None, 0.5, linear_attention=True),
              _block(8, 1.0, ffn_no_op=True)]
    pb, kv = param_breakdown(_nas(blocks)), kv_layout(_nas(blocks))
    assert pb.attention == 2 * ATTENTION_8 + D * D  # two attention blocks, one linear in place of attention
    assert pb.dense_mlp == 3 * D * (28_672 + 14_336 + 2816)  # the fourth block has no MLP
    assert pb.total == 2 * 128_256 * D + pb.attention + pb.dense_mlp
    # only the two real attention blocks keep K and V
    assert kv.full_layers == 2 and kv.full_elements == 2 * 2 * 8 * 128
    values = model_values(_nas(blocks))
    assert values["kv_bytes_per_token"].value == 2 * 2 * 8 * 128 * 2 and values["kv_heads"].value == 8


def test_blocks_with_different_kv_heads_give_no_single_kv_heads() -> None:
    values = model_values(_nas([_block(8, 1.0), _block(4, 1.0)]))
    assert values["kv_bytes_per_token"].value == (2 * 8 * 128 + 2 * 16 * 128) * 2
    assert "kv_heads" not in values and "kv_cache_layers" not in values


@pytest.mark.parametrize("extra, what", [
    ({"window_length": 4096}, "window_length"),
    ({"num_sink_tokens": 4}, "num_sink_tokens"),
    ({"sparsify": ["x"]}, "sparsify"),
    ({"moe": {"num_experts": 8}}, "moe"),
])
def test_a_block_kind_the_reader_does_not_model_is_refused(extra: dict, what: str) -> None:
    with pytest.raises(ScenarioError, match=what) as err:
        model_values(_nas([_block(8, 5.25), _block(8, 5.25, **extra)]))
    assert "block_configs[1]" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("blocks, what", [
    ([_block(8, 5.25)] * 2, None),
    ([_block(7, 5.25)], "n_heads_in_group"),
    ([_block(8, float("inf"))], "ffn_mult"),
    ([_block(8, 5.25) | {"ffn": "big"}], "ffn"),
])
def test_bad_blocks(blocks: list[dict], what: str | None) -> None:
    config = _nas(blocks)
    if what is None:  # a block count that is not num_hidden_layers
        config["num_hidden_layers"] = 3
        what = "lists 2 blocks"
    with pytest.raises(ScenarioError, match=what):
        model_values(config)


# --------------------------------------------------------------------------------------------------
# moe_layer_freq as a per-layer list


def _deepseek_with(freq: object, **changes: object) -> dict:
    return json.loads((CONFIGS / "deepseek_v3.json").read_text()) | {"moe_layer_freq": freq, **changes}


def test_moe_layer_freq_as_a_list_marks_each_layer() -> None:
    base = json.loads((CONFIGS / "deepseek_v3.json").read_text())
    n, first = base["num_hidden_layers"], base["first_k_dense_replace"]
    listed = param_breakdown(_deepseek_with([0] * first + [1] * (n - first)))
    same = param_breakdown(base)  # the same layers as first_k_dense_replace with frequency 1
    assert (listed.total, listed.active, listed.moe_layers, listed.dense_mlp) == (same.total, same.active,
                                                                                  same.moe_layers, same.dense_mlp)
    every_other = param_breakdown(_deepseek_with([0] * first + [i % 2 for i in range(n - first)]))
    assert every_other.moe_layers == (n - first) // 2


@pytest.mark.parametrize("freq, what", [([1, 1], "one 0 or 1 per layer"), ("all", "whole number")])
def test_bad_moe_layer_freq_lists(freq: object, what: str) -> None:
    with pytest.raises(ScenarioError, match=what):
        model_values(_deepseek_with(freq))


def test_moe_layer_freq_list_against_first_k_dense_replace() -> None:
    n = json.loads((CONFIGS / "deepseek_v3.json").read_text())["num_hidden_layers"]
    with pytest.raises(ScenarioError, match="disagree"):
        model_values(_deepseek_with([1] * n))  # first_k_dense_replace 3 says the first three are dense


# NVIDIA's Llama-3.3-Nemotron-Super-49B-v1 file (tests/fixtures/configs/SOURCES.md): 80 blocks, 49 with attention
SUPER = CONFIGS / "llama-3.3-nemotron-super-49b-v1.json"
# blocks per ffn_mult, read off the file; width = 2/3 * ffn_mult * 8192 rounded up to 256 (DeciLM's rule)
SUPER_MLPS = {5.25: (49, 28_672), 2.625: (6, 14_336), 3.28125: (1, 17_920), 1.3125: (10, 7_168), 1.0: (8, 5_632),
              0.5: (6, 2_816)}


def test_super_49b_blocks_are_read_one_by_one() -> None:
    config = json.loads(SUPER.read_text())
    blocks = config["block_configs"]
    assert len(blocks) == 80 == sum(n for n, _ in SUPER_MLPS.values())
    for mult, (count, _) in SUPER_MLPS.items():
        assert sum(1 for b in blocks if b["ffn"]["ffn_mult"] == mult) == count
    kv, pb = kv_layout(config), param_breakdown(config)
    assert kv.full_layers == 49 and pb.attention == 49 * ATTENTION_8
    assert pb.dense_mlp == sum(n * 3 * D * width for n, width in SUPER_MLPS.values())


def test_super_49b_against_published_counts() -> None:
    values = model_values(json.loads(SUPER.read_text()))
    total = 2 * 128_256 * D + 49 * ATTENTION_8 + sum(n * 3 * D * w for n, w in SUPER_MLPS.values())
    assert values["params_total"].value == total == 49_866_080_256
    assert round(total / 1e9, 1) == 49.9  # the checkpoint's count as Hugging Face shows it (49.9B params)
    # 49 attention layers, K and V, 8 KV heads of 128, bf16; the 31 blocks without attention keep no cache
    assert values["kv_bytes_per_token"].value == 49 * 2 * 8 * 128 * 2 == 200_704
    assert values["kv_heads"].value == 8 and values["kv_cache_layers"].value == 49


def test_super_49b_with_a_windowed_block_is_refused_on_the_command_line(tmp_path: Path, capsys) -> None:
    # a window is a layer kind the reader does not model: refused, not read as full attention
    config = json.loads(SUPER.read_text())
    config["block_configs"][40]["attention"]["window_length"] = 4096
    with pytest.raises(ScenarioError, match="block_configs\\[40\\].attention.window_length") as err:
        model_values(config)
    assert "\n" not in str(err.value)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    assert main(["eval", "params_total", "--model", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "window_length" in captured.err
