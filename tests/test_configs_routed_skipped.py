"""The routed experts one token skips, as the library reads them for a model read from its config.json.

``roofline.params_routed_skipped`` is the total less the input embedding less the active weights: exact where the
output head is a matrix of its own, short by the head where the head is the input table (tied), since the active
count holds the head and the total holds the table once.  A tied mixture of experts (Hunyuan-A13B: 64 experts,
8 per token, ``tie_word_embeddings`` true) gives its own count; every other model keeps the definition.  Either way
the value is the routed experts less those one token uses, as the reader counts them.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from derive.model.evaluate import evaluate
from derive.model.loader import load_library
from derive.model.scenario import build_scenario
from theorems.configs import model_values, param_breakdown

CONFIGS = Path(__file__).parent / "fixtures" / "configs"
LIB = load_library(["lecture"])
READABLE = []
for path in sorted(CONFIGS.glob("*.json")):
    try:
        model_values(json.loads(path.read_text()), where=path.name)
    except Exception:  # noqa: BLE001 - a planted refusal or a family the reader refuses: not this test's subject
        continue
    READABLE.append(path)


@pytest.mark.parametrize("path", READABLE, ids=[p.stem for p in READABLE])
def test_skipped_experts_are_the_routed_less_the_active(path):
    pb = param_breakdown(json.loads(path.read_text()), where=path.name)
    sc = build_scenario(LIB, model=str(path))
    got = Fraction(str(evaluate(LIB, sc, "params_routed_skipped").exact))
    assert got == pb.routed_experts - pb.routed_experts_active


def test_a_tied_mixture_of_experts_gives_its_own_count():
    cfg = json.loads((CONFIGS / "hunyuan-a13b-instruct.json").read_text())
    assert cfg["tie_word_embeddings"] is True
    values = model_values(cfg, where="hunyuan")
    pb = param_breakdown(cfg, where="hunyuan")
    assert values["params_routed_skipped"].value == 67_645_734_912  # 32 layers x 56 skipped experts x 3 x 4096 x 3072
    assert 32 * 56 * 3 * 4096 * 3072 == 67_645_734_912
    # the definition's reading would leave out the tied head: vocabulary x width
    assert pb.total - pb.lookup - pb.active == 67_645_734_912 - 128_167 * 4096


@pytest.mark.parametrize("name", ["mixtral-8x7b-v0.1.json", "olmoe-1b-7b-0924.json", "llama3_70b.json"])
def test_an_untied_or_dense_model_keeps_the_definition(name):
    assert "params_routed_skipped" not in model_values(json.loads((CONFIGS / name).read_text()), where=name)
