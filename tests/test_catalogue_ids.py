"""Every claim name of the lecture catalogue resolves to a declaration of the library.

The catalogue (``lecture_claims.md``, kept beside the repository in ``../shared``) heads each of its 51
items with ``### N. name``; item 6 bundles two names.  The names are also listed here, so the test
never passes vacuously when the file is not around; when it is, the two lists must agree.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CATALOGUE_FILE = Path(__file__).resolve().parents[1].parent / "shared" / "lecture_claims.md"

# (catalogue number, names under that heading), in lecture order
CATALOGUE: list[tuple[int, tuple[str, ...]]] = [
    (1, ("fast_mode_premise",)), (2, ("roofline_step_time",)), (3, ("compute_time",)), (4, ("memory_time",)),
    (5, ("deepseek_v3_params",)), (6, ("latency_vs_batch_shape", "latency_floor")),
    (7, ("goldilocks_context_and_mfu",)), (8, ("cost_per_token_and_floor",)), (9, ("hw_ratio_300",)),
    (10, ("batch_optimum",)), (11, ("kv_raises_batch_optimum",)), (12, ("train_schedule",)),
    (13, ("hbm_drain_time",)), (14, ("fast_mode_pricing",)), (15, ("unbatched_cost_penalty",)),
    (16, ("batch_scale_independence",)), (17, ("system_throughput_and_gemini_fraction",)),
    (18, ("routed_scaling_tradeoff",)), (19, ("sparsity_bandwidth_win",)), (20, ("moe_expert_parallel_layout",)),
    (21, ("moe_rack_bound",)), (22, ("scaleout_bandwidth_ratio_and_rack",)), (23, ("scaleup_domain_growth",)),
    (24, ("scaleup_capacity_unlock",)), (25, ("scaleout_viability",)), (26, ("pipeline_neutrality",)),
    (27, ("pipeline_bubble_and_training_batch",)), (28, ("capacity_surplus_inference",)),
    (29, ("memory_wall_capex",)), (30, ("memory_capacity_per_gpu",)), (31, ("kv_cache_dominance",)),
    (32, ("inference_parallelism_practice",)), (33, ("pipeline_hop_latency",)),
    (34, ("scaleup_bandwidth_latency",)), (35, ("compute_equalisation",)), (36, ("lifecycle_compute_costs",)),
    (37, ("token_equalisation",)), (38, ("inference_token_estimate",)), (39, ("chinchilla_overtraining",)),
    (40, ("context_crossover",)), (41, ("kv_bytes_per_token",)), (42, ("kv_bytes_architecture",)),
    (43, ("price_tracks_cost",)), (44, ("decode_memory_bound",)), (45, ("cache_hit_discount",)),
    (46, ("quadratic_attention_negligible",)), (47, ("kv_tier_costs",)), (48, ("cache_tier_drain_time",)),
    (49, ("cipher_net_analogies",)), (50, ("revnet_invertibility",)), (51, ("revnet_memory_tradeoff",)),
]
NAMES = [name for _, names in CATALOGUE for name in names]
_HEADING = re.compile(r"^### (\d+)\. (.+)$")


def parse_catalogue(text: str) -> list[tuple[int, tuple[str, ...]]]:
    """``### 6. latency_vs_batch_shape + latency_floor`` -> (6, ("latency_vs_batch_shape", "latency_floor"));
    a comment after two spaces, "(" or "[" is dropped."""
    out = []
    for line in text.splitlines():
        m = _HEADING.match(line.strip())
        if m:
            head = re.split(r"\s{2,}|\(|\[", m.group(2))[0]
            out.append((int(m.group(1)), tuple(part.strip() for part in head.split("+"))))
    return out


def test_hard_coded_list_is_complete():
    assert [number for number, _ in CATALOGUE] == list(range(1, 52))
    assert len(NAMES) == 52 and len(set(NAMES)) == 52


def test_catalogue_file_matches_the_hard_coded_list():
    if not CATALOGUE_FILE.is_file():
        pytest.skip(f"catalogue file not found at {CATALOGUE_FILE}; the hard-coded list is still checked")
    assert parse_catalogue(CATALOGUE_FILE.read_text(encoding="utf-8")) == CATALOGUE


def test_parse_catalogue_heading_forms():
    text = "### 6. latency_vs_batch_shape + latency_floor\n### 8. cost_per_token_and_floor  (includes x)\n" \
           "### 14. fast_mode_pricing  [RECON model]\n#### 9. not_a_heading\n"
    assert parse_catalogue(text) == [(6, ("latency_vs_batch_shape", "latency_floor")),
                                     (8, ("cost_per_token_and_floor",)), (14, ("fast_mode_pricing",))]


@pytest.mark.parametrize("name", NAMES)
def test_catalogue_name_resolves(lecture_library, name):
    declaration = lecture_library.resolve(name)
    assert declaration.short == name


def test_kv_bytes_per_token_names_the_claim_not_only_the_quantity(lecture_library):
    # catalogue #41 shares its name with the base quantity; the claim that solves for it is context.*
    assert lecture_library.resolve("kv_bytes_per_token").id == "context.kv_bytes_per_token"
    assert "kv_bytes_per_token" in lecture_library.quantities
