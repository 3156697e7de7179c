"""Gemma 4 (``gemma4``, ``gemma4_text``): sliding-window layers and global layers with heads of their own (global
keys serving as values), in 26B-A4B routed experts beside every layer's dense MLP (``top_k_experts``), and in E2B
and E4B per-layer input embeddings, layers that reuse an earlier layer's KV cache and (E2B) double-width MLPs.

No whole copy of Google's ``config.json`` was found (``tests/fixtures/configs/SOURCES.md``).
``gemma4_31b_printed.json`` is gemma-4-31B-it's config as transformers prints it from the checkpoint, whose tensor
total is compared exactly; ``gemma4_26b_a4b_shape.json``, ``gemma4_e2b_shape.json`` and ``gemma4_e4b_shape.json``
hold the sizes the public copies agree on.  Published: 26B-A4B about 25.2B parameters, about 3.8B active (Google's
model details); E2B 2.3B effective (5.1B with embeddings), E4B 4.5B effective (8B with embeddings), each with a
vision encoder of about 150M and an audio encoder of about 300M (Google's model card table).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from derive.cli import main
from derive.errors import ScenarioError
from derive.model.config_formulas import read_config, refusal, validate
from derive.model.evaluate import evaluate
from derive.model.scenario import build_scenario
from theorems.configs import kv_layout, load_config_json, model_values, param_breakdown
from theorems.configs.live_formulas import LIVE_CONFIG_FORMULAS

CONFIGS = Path(__file__).parent / "fixtures" / "configs"
DENSE, MOE = CONFIGS / "gemma4_31b_printed.json", CONFIGS / "gemma4_26b_a4b_shape.json"
E2B, E4B = CONFIGS / "gemma4_e2b_shape.json", CONFIGS / "gemma4_e4b_shape.json"


def _with(path: Path, **text_changes: object) -> dict:
    config = json.loads(path.read_text())
    text = dict(config["text_config"])
    for key, value in text_changes.items():
        if value is ...:
            text.pop(key, None)
        else:
            text[key] = value
    return config | {"text_config": text}


# hand counts, written out from the fields; every sixth layer global
VOCAB = 262_144
D31 = 5376
SLIDING_31 = D31 * 32 * 256 + 2 * D31 * 16 * 256 + 32 * 256 * D31  # q; k and v (16 KV heads of 256); o
GLOBAL_31 = D31 * 32 * 512 + D31 * 4 * 512 + 32 * 512 * D31  # q; k only (4 KV heads of 512, keys as values); o
TOTAL_31 = VOCAB * D31 + 50 * SLIDING_31 + 10 * GLOBAL_31 + 60 * 3 * D31 * 21_504  # tied: the embedding once
D26 = 2816
SLIDING_26 = D26 * 16 * 256 + 2 * D26 * 8 * 256 + 16 * 256 * D26
GLOBAL_26 = D26 * 16 * 512 + D26 * 2 * 512 + 16 * 512 * D26
EXPERT_26 = 3 * D26 * 704
BASE_26 = VOCAB * D26 + 25 * SLIDING_26 + 5 * GLOBAL_26 + 30 * (3 * D26 * 2112 + D26 * 128)  # + dense MLP, router
TOTAL_26 = BASE_26 + 30 * 128 * EXPERT_26
ACTIVE_26 = BASE_26 + 30 * 8 * EXPERT_26  # tied: the embedding matrix counts once, as the output head


# E2B and E4B by hand.  The last num_kv_shared_layers layers reuse an earlier layer's cache: queries and output only,
# no cache.  Global layers without attention_k_eq_v have num_key_value_heads heads of 512 and their own values.
# Per-layer inputs: a table of 262,144 x (layers * 256), looked up; a projection d x (layers * 256) and per layer a
# gate d x 256 and a projection 256 x d, multiplied.


def _e_model(d: int, layers: int, kv: int, inter: int, shared: int, double: bool, every: int) -> dict[str, int]:
    kinds = ["full" if (i + 1) % every == 0 else "window" for i in range(layers)]
    own = kinds[:layers - shared]
    sliding, global_ = d * 8 * 256 + 2 * d * kv * 256 + 8 * 256 * d, d * 8 * 512 + 2 * d * kv * 512 + 8 * 512 * d
    attention = (own.count("window") * sliding + own.count("full") * global_
                 + (kinds.count("window") - own.count("window")) * 2 * d * 8 * 256  # q and o of a reusing layer
                 + (kinds.count("full") - own.count("full")) * 2 * d * 8 * 512)
    mlp = (layers - shared) * 3 * d * inter + shared * 3 * d * inter * (2 if double else 1)
    table = VOCAB * layers * 256
    projections = d * layers * 256 + layers * 2 * d * 256
    total = VOCAB * d + table + projections + attention + mlp  # tied: the embedding once, as the head
    return {"total": total, "active": total - table, "lookup": VOCAB * d + table, "row": d + layers * 256,
            "full_kv": own.count("full") * 2 * kv * 512 * 2, "window_kv": own.count("window") * 2 * kv * 256 * 2,
            "global": kinds.count("full"), "caching_global": own.count("full")}


E2B_HAND = _e_model(1536, 35, 1, 6144, 20, True, 5)  # four sliding layers, then a global one
E4B_HAND = _e_model(2560, 42, 2, 10240, 18, False, 6)


def _31b_not_counted() -> int:
    """gemma-4-31B-it's tensors the reader does not count, from the shapes gogongxt/python's report lists
    (``scripts/models/gemma_4_31b_it.md`` @ cbff706): the vision tower and its projection, norms, layer scalars."""
    vision = (27 * (4 * 1152 * 1152 + 3 * 1152 * 4304 + 4 * 1152 + 2 * 72) + 1152 * 768 + 2 * 10_240 * 1152
              + 2 * 1152 + D31 * 1152)  # layers, patch embedder, position table, std bias and scale, embed_vision
    norms = 60 * 4 * D31 + 60 + 50 * 2 * 256 + 10 * 2 * 512 + D31  # layer norms, layer_scalar, q/k norms, final
    return vision + norms


def test_layer_kinds_follow_layer_types() -> None:
    kv31, kv26 = kv_layout(json.loads(DENSE.read_text())), kv_layout(json.loads(MOE.read_text()))
    assert (kv31.full_layers, kv31.window_layers, kv31.window) == (10, 50, 1024)
    assert (kv26.full_layers, kv26.window_layers, kv26.window) == (5, 25, 1024)
    pb = param_breakdown(json.loads(MOE.read_text()))
    assert (pb.moe_layers, pb.experts_total, pb.experts_active, pb.experts_shared) == (30, 128, 8, 1)
    assert pb.shared_experts == 30 * 3 * D26 * 2112 and pb.router == 30 * D26 * 128


def test_31b_equals_the_checkpoint_tensors() -> None:
    # gogongxt/python scripts/models/gemma_4_31b_it.md @ cbff706: "参数总量 31,273,088,876", vision tower included
    assert load_config_json(DENSE)["params_total"].value == TOTAL_31 == 31_273_088_876 - _31b_not_counted()
    assert round(TOTAL_31 / 1e8) == 307  # 30.7B


def test_26b_a4b_against_published_counts() -> None:
    values = load_config_json(MOE)
    assert values["params_total"].value == TOTAL_26 == 25_232_441_344
    assert float(TOTAL_26) == pytest.approx(25.2e9, abs=0.05e9)  # Google: about 25.2B
    assert values["params_active"].value == ACTIVE_26 == 3_821_830_144
    assert float(ACTIVE_26) == pytest.approx(3.8e9, abs=0.05e9)  # Google: about 3.8B active
    assert values["experts_total"].value == 128 and values["experts_active"].value == 8


@pytest.mark.parametrize("path, full, window", [
    (DENSE, 10 * 2 * 4 * 512 * 2, 50 * 2 * 16 * 256 * 2),  # bf16 keys and values, cached apart
    (MOE, 5 * 2 * 2 * 512 * 2, 25 * 2 * 8 * 256 * 2),
])
def test_kv_bytes_by_layer_kind(path: Path, full: int, window: int) -> None:
    values = load_config_json(path)
    assert values["kv_bytes_per_token"].value == full and values["kv_window_bytes_per_token"].value == window
    assert values["attention_window"].value == 1024
    # the context chapter's per-head formula on the global layers gives the same bytes
    assert (values["kv_cache_layers"].value * 2 * values["kv_heads"].value * values["head_dim"].value * 2) == full


@pytest.mark.parametrize("path, hand, total, active, full, window", [
    (E2B, E2B_HAND, 4_628_283_392, 2_279_473_152, 3 * 2 * 1 * 512 * 2, 12 * 2 * 1 * 256 * 2),
    (E4B, E4B_HAND, 7_462_453_248, 4_643_880_960, 4 * 2 * 2 * 512 * 2, 20 * 2 * 2 * 256 * 2),
], ids=["e2b", "e4b"])
def test_e2b_and_e4b_read_layer_by_layer(path: Path, hand: dict, total: int, active: int, full: int,
                                         window: int) -> None:
    # the totals are the meta-device counts too (tests/test_configs_meta.py, transformers 5.24)
    values = load_config_json(path)
    assert values["params_total"].value == hand["total"] == total
    assert values["params_active"].value == hand["active"] == active  # the per-layer table is a lookup
    assert values["params_embedding"].value == hand["lookup"]  # both tables a token looks up
    # only the layers before the shared ones keep a cache: E2B 3 global and 12 sliding of 35, E4B 4 and 20 of 42
    assert values["kv_bytes_per_token"].value == hand["full_kv"] == full
    assert values["kv_window_bytes_per_token"].value == hand["window_kv"] == window
    assert values["attention_window"].value == 512
    assert values["kv_cache_layers"].value == hand["caching_global"]
    assert values["global_attention_layers"].value == hand["global"] == 7  # reusing layers attend all the same
    assert values["d_model"].value + values["per_layer_row_params"].value == hand["row"]


# Google's model card counts the whole model: about 150M of vision encoder and 300M of audio encoder beside the
# language model read here; "effective" leaves out both embedding tables
ENCODERS = 150e6 + 300e6


@pytest.mark.parametrize("path, with_embeddings, effective, within", [
    (E2B, 5.1e9, 2.3e9, 0.05e9), (E4B, 8e9, 4.5e9, 0.1e9)], ids=["e2b", "e4b"])
def test_e2b_and_e4b_against_the_model_card(path: Path, with_embeddings: float, effective: float,
                                            within: float) -> None:
    values = load_config_json(path)
    total, tables = float(values["params_total"].value), float(values["params_embedding"].value)
    assert total + ENCODERS == pytest.approx(with_embeddings, abs=within)
    assert total - tables + ENCODERS == pytest.approx(effective, abs=within)
    # the per-layer table read as multiplied weights (only the input embedding left out) misses by billions
    input_only = float(values["d_model"].value) * VOCAB
    assert abs(total - input_only + ENCODERS - effective) > 2e9


@pytest.mark.parametrize("batch", [1, 8, 256])
def test_a_decode_step_reads_rows_of_the_per_layer_table_not_the_table(lecture_library, batch: int) -> None:
    sc = build_scenario(lecture_library, model=str(E2B), sets=[f"batch={batch}"])
    got = {name: Fraction(str(evaluate(lecture_library, sc, name).exact))
           for name in ("params_read", "params_routed_skipped", "embedding_row_params", "embedding_fetch_time",
                        "bytes_per_param", "chips", "hbm_bandwidth", "tokens_per_step")}
    assert got["params_routed_skipped"] == 0  # the table is no expert a token skips
    assert got["params_read"] == E2B_HAND["active"]  # every multiplied weight, no table whole
    assert got["embedding_row_params"] == 1536 + 35 * 256  # one row of each table per new token
    assert got["embedding_fetch_time"] == (batch * got["tokens_per_step"] * got["embedding_row_params"]
                                           * got["bytes_per_param"] / (got["chips"] * got["hbm_bandwidth"]))


@pytest.mark.parametrize("width", [1024, 2048])
def test_a_width_set_by_hand_keeps_the_per_layer_row(lecture_library, width: int) -> None:
    """--set d_model changes the input embedding's row only: the per-layer tables' row stays read."""
    sc = build_scenario(lecture_library, model=str(E2B), sets=[f"d_model={width}"])
    got = Fraction(str(evaluate(lecture_library, sc, "embedding_row_params").exact))
    assert got == width + 35 * 256


@pytest.mark.parametrize("context", [512, 1024, 262_144])
def test_kv_per_sequence_adds_the_window(lecture_library, context: int) -> None:
    sc = build_scenario(lecture_library, model=str(DENSE), sets=[f"context={context}"])
    got = Fraction(str(evaluate(lecture_library, sc, "kv_bytes_per_sequence").exact))
    assert got == context * 81_920 + min(context, 1024) * 819_200


@pytest.mark.parametrize("context", [256, 512, 131_072])
def test_e2b_kv_per_sequence_counts_only_the_layers_that_keep_one(lecture_library, context: int) -> None:
    sc = build_scenario(lecture_library, model=str(E2B), sets=[f"context={context}"])
    got = Fraction(str(evaluate(lecture_library, sc, "kv_bytes_per_sequence").exact))
    assert got == context * 6_144 + min(context, 512) * 12_288


@pytest.mark.parametrize("path, total, active, kv", [
    (DENSE, TOTAL_31, TOTAL_31, "81.92 kB/token"), (MOE, TOTAL_26, ACTIVE_26, "20.48 kB/token"),
    (E2B, E2B_HAND["total"], E2B_HAND["active"], "6.144 kB/token")])
def test_command_line_gives_the_numbers(capsys, path: Path, total: int, active: int, kv: str) -> None:
    assert main(["eval", "params_total", "params_active", "kv_bytes_per_token", "--model", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"exactly {total} param" in out and f"exactly {active} param" in out and kv in out


@pytest.mark.parametrize("path", [DENSE, MOE, E2B, E4B], ids=["31b", "26b-a4b", "e2b", "e4b"])
def test_planted_unknown_layer_kind_is_refused_on_the_command_line(tmp_path: Path, capsys, path: Path) -> None:
    types = json.loads(path.read_text())["text_config"]["layer_types"]
    config = _with(path, layer_types=types[:3] + ["chunked_attention"] + types[4:])
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert main(["eval", "params_total", "params_active", "kv_bytes_per_token",
                 "--model", str(tmp_path / "config.json")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "layer_types[3]" in captured.err and "unknown layer kind 'chunked_attention'" in captured.err


@pytest.mark.parametrize("path, changes, what", [
    (E2B, {"num_kv_shared_layers": 36}, "more layers than the model has"),
    (E2B, {"num_kv_shared_layers": 35}, "no layer would keep a cache for them to reuse"),
    (E2B, {"num_kv_shared_layers": 31}, "no earlier full_attention layer keeps a cache"),  # layers 0-3 slide
    (E2B, {"num_kv_shared_layers": -1}, "'num_kv_shared_layers' must be at least 0"),
    (E2B, {"vocab_size_per_layer_input": None}, "'vocab_size_per_layer_input' is null"),
    (E2B, {"vocab_size_per_layer_input": 0}, "'vocab_size_per_layer_input' must be at least 1"),
    (E2B, {"hidden_size_per_layer_input": 2.5}, "'hidden_size_per_layer_input' must be a whole number"),
    (E2B, {"num_global_key_value_heads": 2}, "attention_k_eq_v is not true"),  # transformers drops it: refused
    (DENSE, {"attention_k_eq_v": False}, "attention_k_eq_v is not true"),  # 4 global heads given, 16 built
    (DENSE, {"use_bidirectional_attention": "all"}, "use_bidirectional_attention"),
    (DENSE, {"layer_types": ["sliding_attention"] * 60}, "last layer is global"),
    (DENSE, {"layer_types": ["full_attention"] * 59}, "one kind for each of the 60 layers"),
    (DENSE, {"num_experts": 128}, "enable_moe_block is not true"),
    (DENSE, {"num_global_key_value_heads": 5}, "not a multiple"),
    (MOE, {"top_k_experts": ...}, "missing field 'top_k_experts'"),
    (MOE, {"top_k_experts": 129}, "129 experts per token but only 128 experts"),
    (MOE, {"num_experts_per_tok": 2}, "'top_k_experts' (8) and 'num_experts_per_tok' (2) disagree"),
    (MOE, {"expert_intermediate_size": 512}, "'moe_intermediate_size' (704) and 'expert_intermediate_size' (512)"),
    (MOE, {"global_head_dim": 0}, "global_head_dim"),
])
def test_a_field_that_cannot_be_placed_is_refused(path: Path, changes: dict, what: str) -> None:
    with pytest.raises(ScenarioError) as err:
        model_values(_with(path, **changes))
    assert what in str(err.value) and "\n" not in str(err.value)


def test_a_file_without_the_per_layer_vocabulary_takes_transformers_default() -> None:
    full = model_values(json.loads(E2B.read_text()))
    sparse = model_values(_with(E2B, vocab_size_per_layer_input=...))
    assert {k: v.value for k, v in sparse.items()} == {k: v.value for k, v in full.items()}
    assert any("'vocab_size_per_layer_input' absent: transformers' default 262,144" in n for n in sparse.notes)


def test_class_defaults_read_a_sparse_file_alike() -> None:
    # fields that equal Gemma4TextConfig's defaults may be left out of a file, as Google's Gemma 3 files do
    full = model_values(json.loads(MOE.read_text()))
    sparse = model_values(_with(MOE, layer_types=..., num_kv_shared_layers=..., use_double_wide_mlp=...,
                                global_head_dim=...))
    assert {k: v.value for k, v in sparse.items()} == {k: v.value for k, v in full.items()}
    assert any("every sixth layer global" in n for n in sparse.notes)
    assert any("'global_head_dim' absent: transformers' gemma4 default 512" in n for n in sparse.notes)


def test_values_projected_apart_add_the_value_matrices() -> None:
    # without attention_k_eq_v transformers gives global layers num_key_value_heads (16), each with its values
    apart = param_breakdown(_with(DENSE, attention_k_eq_v=False, num_global_key_value_heads=...))
    assert apart.total - TOTAL_31 == 10 * D31 * (2 * 16 * 512 - 4 * 512)
    assert kv_layout(_with(DENSE, attention_k_eq_v=False, num_global_key_value_heads=...)).full_elements == (
        10 * 2 * 16 * 512)
    same = param_breakdown(_with(DENSE, attention_k_eq_v=False, num_global_key_value_heads=16))
    absent = param_breakdown(_with(DENSE, attention_k_eq_v=..., num_global_key_value_heads=...))  # default False
    assert same.total == absent.total == apart.total and any("attention_k_eq_v" in n for n in absent.notes)


PER_LAYER_31 = VOCAB * 60 * 256 + D31 * 60 * 256 + 60 * 2 * D31 * 256  # table; projection; gates and projections


@pytest.mark.parametrize("changes, total, lookup", [
    ({"hidden_size_per_layer_input": 256}, TOTAL_31 + PER_LAYER_31, VOCAB * D31 + VOCAB * 60 * 256),
    ({"hidden_size_per_layer_input": ...}, TOTAL_31 + PER_LAYER_31, VOCAB * D31 + VOCAB * 60 * 256),  # default 256
    # layers 56-59 reuse caches: three sliding layers lose k and v, the global one its k (keys serve as values)
    ({"num_kv_shared_layers": 4}, TOTAL_31 - 3 * 2 * D31 * 16 * 256 - D31 * 4 * 512, VOCAB * D31),
    ({"num_kv_shared_layers": 4, "use_double_wide_mlp": True},
     TOTAL_31 - 3 * 2 * D31 * 16 * 256 - D31 * 4 * 512 + 4 * 3 * D31 * 21_504, VOCAB * D31),
    ({"use_double_wide_mlp": True}, TOTAL_31, VOCAB * D31),  # only layers that reuse a cache are widened
], ids=["per-layer", "per-layer-default", "shared", "shared-double", "double-without-shared"])
def test_fields_of_e2b_and_e4b_are_read_in_any_gemma4_file(changes: dict, total: int, lookup: int) -> None:
    values = model_values(_with(DENSE, **changes))
    assert values["params_total"].value == total and values["params_embedding"].value == lookup
    assert values["params_active"].value == total - (lookup - VOCAB * D31)  # tied: the input table is the head
    shared = changes.get("num_kv_shared_layers", 0)
    assert values["kv_bytes_per_token"].value == (10 - (1 if shared else 0)) * 2 * 4 * 512 * 2
    assert values["kv_window_bytes_per_token"].value == (50 - (3 if shared else 0)) * 2 * 16 * 256 * 2


def test_global_heads_default_to_the_sliding_ones() -> None:
    values = model_values(_with(DENSE, num_global_key_value_heads=...))
    assert values["kv_heads"].value == 16 and values["kv_bytes_per_token"].value == 10 * 2 * 16 * 512 * 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=11), st.integers(0, 12), st.booleans())
def test_shared_layers_are_the_layer_by_layer_sums(sliding: list[bool], shared: int, double: bool) -> None:
    kinds = sliding + [False]  # the last layer is global
    n = len(kinds)
    config = _with(E2B, num_hidden_layers=n, num_kv_shared_layers=shared, use_double_wide_mlp=double,
                   layer_types=["sliding_attention" if s else "full_attention" for s in kinds])
    own, reuse = kinds[:n - shared], kinds[n - shared:]
    if shared >= n or set(reuse) - set(own):
        with pytest.raises(ScenarioError, match="num_kv_shared_layers"):
            model_values(config)
        return
    d = 1536
    attention = sum(d * 8 * 256 * 2 + 2 * d * 256 if s else d * 8 * 512 * 2 + 2 * d * 512 for s in own)
    attention += sum(2 * d * 8 * 256 if s else 2 * d * 8 * 512 for s in reuse)  # queries and output only
    mlp = len(own) * 3 * d * 6144 + len(reuse) * 3 * d * 6144 * (2 if double else 1)
    per_layer = VOCAB * n * 256 + d * n * 256 + n * 2 * d * 256
    pb, kv = param_breakdown(config), kv_layout(config)
    assert pb.total == VOCAB * d + per_layer + attention + mlp
    assert pb.active == pb.total - VOCAB * n * 256
    assert (kv.full_layers, kv.window_layers) == (own.count(False), own.count(True))
    assert (kv.shared_full_layers, kv.shared_window_layers) == (reuse.count(False), reuse.count(True))
    assert kv.full_elements == own.count(False) * 2 * 512 and kv.window_elements == own.count(True) * 2 * 256


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=0, max_size=11))
def test_counts_are_the_layer_by_layer_sums(sliding: list[bool]) -> None:
    kinds = sliding + [False]  # the last layer is global
    config = _with(DENSE, num_hidden_layers=len(kinds),
                   layer_types=["sliding_attention" if s else "full_attention" for s in kinds])
    pb, kv = param_breakdown(config), kv_layout(config)
    att = sum(SLIDING_31 if s else GLOBAL_31 for s in kinds)
    assert pb.total == VOCAB * D31 + att + len(kinds) * 3 * D31 * 21_504
    assert kv.full_elements == kinds.count(False) * 2 * 4 * 512
    assert kv.window_elements == kinds.count(True) * 2 * 16 * 256


def test_the_live_page_gives_its_one_line() -> None:
    readings = validate(LIVE_CONFIG_FORMULAS, where="test")
    for path in (DENSE, MOE):
        config = json.loads(path.read_text())
        for shown in (config, config["text_config"]):
            with pytest.raises(ScenarioError) as err:
                read_config(readings, shown)
            line = refusal(readings, err.value.message)
            assert shown["model_type"] in line and line.endswith("`derive card --model config.json`")
