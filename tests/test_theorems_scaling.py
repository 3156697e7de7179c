"""Chapter 5 (theorems/scaling.py): verdicts under the lecture scenario, the lecture's numbers, the
interval-engine claims, and worked examples against Hoffmann et al. (2022)."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy as sp
from libtools import close

from derive import Claim, Quantity, logic
from derive.checking.checker import Checker
from derive.model.evaluate import evaluate
from derive.model.scenario import build_scenario
from tests.libtools import make_library
from theorems import scaling

CLAIMS = [v for v in vars(scaling).values() if isinstance(v, Claim) and v.topic == "scaling"]
CATALOGUE = ["compute_equalisation", "lifecycle_compute_costs", "token_equalisation", "inference_token_estimate",
             "chinchilla_overtraining"]
INTERVAL = ["exp_equalisation", "chinchilla_overtraining_penalty", "chinchilla_equalisation_near_optimal",
            "chinchilla_equalisation_at_chinchilla_budget", "chinchilla_optimal_tokens_per_param"]


@pytest.mark.parametrize("name", CATALOGUE)
def test_catalogue_name_resolves(lecture_library, name):
    assert lecture_library.resolve(name).topic == "scaling"


def test_headline_rests_on_its_parts(lecture_library, report):
    parts = {u.short for u in lecture_library.resolve("compute_equalisation").uses}
    assert parts == {"reciprocal_linear_bound", "exp_equalisation", "power_law_term_ratio",
                     "equalisation_within_factor_two"}
    assert all(report[f"scaling.{p}"].verdict == "proved" for p in parts)
    assert report["scaling.token_equalisation"].verdict == "proved"


@pytest.mark.parametrize("name", INTERVAL)
def test_non_polynomial_claims_name_the_interval_engine(report, name):
    assert report[f"scaling.{name}"].engine == "interval"


@pytest.mark.parametrize(("expr", "target"), [
    ("serving_token_rate", 5 * 10**7),                                     # 5e8 / 10 (01:29)
    ("fleet_token_rate*deployment_time", Fraction(2592, 1000) * 10**15),  # "2.6 x 10^15" (01:28)
    ("inference_tokens", Fraction(2592, 10) * 10**12),                     # "around two hundred trillion"
    ("inference_tokens/(chinchilla_tokens_per_param*frontier_params_active)", Fraction(1296, 10)),  # ~100x
    ("rumoured_pretrain_tokens/(chinchilla_tokens_per_param*frontier_params_active)", 75),  # seed 004's 150T
])
def test_lecture_numbers(lecture_library, lecture_scenario, expr, target):
    assert close(evaluate(lecture_library, lecture_scenario, expr).exact, target)


def test_overtraining_lands_in_the_accepted_band(lecture_library, lecture_scenario):
    value = evaluate(lecture_library, lecture_scenario,
                     "inference_tokens/(chinchilla_tokens_per_param*frontier_params_active)").exact
    assert 50 <= value <= 300


def test_flashcard_token_split_numbers():
    # 6·D_pre = c_RL·η·D_RL = 2·η·D_inf with c_RL = 3, η = 3 (flashcard card 4)
    d_pre = sp.Integer(9)
    assert 6 * d_pre / (2 * 3) == d_pre                         # D_inf = D_pre
    assert 6 * d_pre / (3 * 3) == sp.Rational(2, 3) * d_pre     # D_RL = 2/3 D_pre


def test_chinchilla_compute_matches_the_paper(lecture_library):
    # Hoffmann et al. 2022: Chinchilla, 70B parameters on 1.4T tokens, used the Gopher budget of 5.76e23 FLOP;
    # 6·N·D gives 5.88e23, within 3%.  Its token count is 20 per parameter.
    scenario = build_scenario(lecture_library, sets=["params_active=70e9", "pretrain_tokens=1.4e12"])
    assert close(evaluate(lecture_library, scenario, "pretrain_compute").exact, Fraction(576, 100) * 10**23,
                 rel=Fraction(3, 100))
    assert evaluate(lecture_library, scenario, "chinchilla_tokens").exact == Fraction(14, 10) * 10**12
    assert evaluate(lecture_library, scenario, "overtraining_factor").exact == 1


def test_fitted_loss_at_chinchilla_matches_a_direct_computation():
    # L(70e9, 1.4e12) = 1.69 + 406.4/70e9**0.34 + 410.7/1.4e12**0.28 (Hoffmann et al. 2022, section 3.3)
    direct = 1.69 + 406.4 / 70e9**0.34 + 410.7 / 1.4e12**0.28
    values = {s: q.value for q in (scaling.loss_floor, scaling.loss_param_coeff, scaling.loss_data_coeff,
                                   scaling.loss_param_exponent, scaling.loss_data_exponent) for s in [q.sym]}
    ours = scaling.fitted_loss(sp.log(70 * 10**9, 10), sp.log(14 * 10**11, 10)).xreplace(values)
    assert abs(float(sp.N(ours, 30)) - direct) < 1e-9
    assert 1.9 < direct < 2.0


def test_a_false_equalisation_bound_is_refuted():
    # the false twin of reciprocal_linear_bound: 2.1·√(ab) is not a lower bound of a/x + b·x
    a = Quantity("a", "a", "USD", "cost scale")
    b = Quantity("b", "b", "USD", "cost scale")
    x = Quantity("x", "x", "1", "knob")
    twin = Claim("t.too_strong", title="too strong", statement="too strong", source=scaling.compute_equalisation.source,
                 goal=logic.ge(a.sym / x.sym + b.sym * x.sym, sp.Rational(21, 10) * sp.sqrt(a.sym * b.sym)),
                 expected="refuted")
    lib = make_library(a, b, x, twin)
    result = Checker(lib, build_scenario(lib)).check(["t.too_strong"]).results[0]
    assert result.verdict == "refuted" and result.counterexample
