"""Training FLOPs with attention, and Chinchilla's fitted table beside its rule: worked examples against
published numbers."""

from __future__ import annotations

from fractions import Fraction

import pytest

from derive.errors import ScenarioError
from derive.model.evaluate import evaluate
from derive.model.scenario import build_scenario

# DeepSeek-V3 at a 4,096-token training sequence: 37B active parameters, 61 layers, 128 heads of query-key
# width 128 + 64 and value width 128 (deepseek-ai/DeepSeek-V3 config.json); published 250 GFLOP per token
# (Zhao et al. 2025, arXiv:2505.09343, Table 2).
DEEPSEEK_V3_4K = ["params_active=37e9 param", "layers=61", "train_context=4096 token",
                  "attention_dot_width=40960 param/token"]
PUBLISHED = 250 * 10**9


def test_deepseek_v3_training_flops_with_attention(lecture_library):
    sc = build_scenario(lecture_library, sets=DEEPSEEK_V3_4K)
    flops = evaluate(lecture_library, sc, "train_flops_per_token").exact
    assert abs(Fraction(int(flops.p), int(flops.q)) / PUBLISHED - 1) < Fraction(2, 100)  # 252.7 GFLOP
    six_n = 6 * 37 * 10**9
    assert Fraction(PUBLISHED, six_n) > Fraction(11, 10)  # 6N alone is 11 % short


def test_zero_attention_width_is_refused(lecture_library):
    # attention has a width: a zero is an input error (one line), never a silent 6N
    with pytest.raises(ScenarioError, match="attention_dot_width"):
        build_scenario(lecture_library, sets=[*DEEPSEEK_V3_4K[:3], "attention_dot_width=0 param/token"])


def test_chinchilla_table_against_rule_at_ten_trillion(lecture_library):
    sc = build_scenario(lecture_library, sets=["params_active=10e12 param"])
    rule = evaluate(lecture_library, sc, "chinchilla_tokens").exact
    table = evaluate(lecture_library, sc, "chinchilla_table_tokens").exact
    assert rule == 200 * 10**12
    assert table == 2162 * 10**11  # Hoffmann et al. 2022, Table 3: 216.2T tokens at 10T parameters
    assert table > rule
