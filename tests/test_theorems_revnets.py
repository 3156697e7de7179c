"""Chapter 7 (theorems/revnets.py): verdicts under the lecture scenario, the Feistel and RevNet
inverses checked again with concrete (also non-invertible) functions, and the memory/compute trade
against Gomez et al. (2017)."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy as sp

from derive.model.declarations import Claim
from derive.model.evaluate import evaluate
from derive.model.scenario import build_scenario
from theorems import revnets

CLAIMS = [v for v in vars(revnets).values() if isinstance(v, Claim) and v.topic == "revnets"]
CATALOGUE = ["cipher_net_analogies", "revnet_invertibility", "revnet_memory_tradeoff"]
CONCRETE = [lambda t: t**2, lambda t: sp.Integer(7), lambda t: sp.Abs(t) - 3 * t**3, lambda t: sp.Max(t, 0)]


@pytest.mark.parametrize("name", CATALOGUE)
def test_catalogue_name_resolves(lecture_library, name):
    assert lecture_library.resolve(name).topic == "revnets"


@pytest.mark.parametrize("g", CONCRETE)
@pytest.mark.parametrize("h", CONCRETE)
def test_revnet_block_inverts_with_concrete_functions(g, h):
    # F and G need not be invertible: squares, constants and ReLU all work
    x1, x2 = sp.Rational(-5, 3), sp.Rational(11, 7)
    y1 = x1 + g(x2)
    y2 = x2 + h(y1)
    x2_back = y2 - h(y1)
    assert x2_back == x2
    assert y1 - g(x2_back) == x1


@pytest.mark.parametrize("g", CONCRETE)
def test_feistel_round_inverts_with_concrete_functions(g):
    x, y = sp.Rational(2, 9), sp.Rational(-4, 5)
    z = y + g(x)
    assert z - g(x) == y


def test_the_definitions_compose_to_the_block(lecture_library):
    # the recovered x1, expanded through the library's definitions, is x1 itself
    x1 = revnets.rev_x1.sym
    assert lecture_library.expand(revnets.rev_x1_back_q.sym) == x1


def test_compute_overhead_matches_gomez_et_al(lecture_library, lecture_scenario):
    # Gomez et al. 2017: reversible backpropagation takes about 4N operations against 3N, a third more
    ratio = evaluate(lecture_library, lecture_scenario,
                     "revnet_train_flops_per_param_token/train_flops_per_param_token").exact
    assert ratio == Fraction(4, 3)


def test_memory_saving_grows_with_depth(lecture_library):
    # DeepSeek-V3 has 61 layers (config_671B.json): a RevNet would keep 61/2 times fewer activations
    scenario = build_scenario(lecture_library, sets=["network_depth=61", "activation_bytes_per_layer=1 GB"])
    standard = evaluate(lecture_library, scenario, "activation_memory_standard").exact
    reversible = evaluate(lecture_library, scenario, "activation_memory_revnet").exact
    assert standard / reversible == Fraction(61, 2)
