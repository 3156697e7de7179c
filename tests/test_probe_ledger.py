"""The ledger key the probe's prefill file needs: ``relation`` holds a value to a definition as a floor."""

from __future__ import annotations

import pytest

from derive.errors import ScenarioError
from derive.model.loader import load_library
from derive.whatif.ledger import evaluate_entry, read_ledger_file

ENTRY = """
source = "planted"
as_of = "2026-11-27"
hardware = "h200"
set = ["chips=1", "params_total=7e9 param", "params_active=7e9 param", "kv_bytes_per_token=131072 byte/token",
       "global_attention_layers=32", "query_heads=32", "head_dim=128", "batch=1 seq",
       "prefill_tokens=2048 token/seq"]
[[entry]]
id = "ttft"
check = "{check}"
{relation}
value = "{value}"
"""


@pytest.fixture(scope="module")
def serving():
    return load_library(["serving"])


def _row(serving, tmp_path, check="prefill.ttft_floor", relation='relation = ">="', value="40 ms"):
    path = tmp_path / "planted.toml"
    path.write_text(ENTRY.format(check=check, relation=relation, value=value))
    return evaluate_entry(serving, read_ledger_file(serving, path)[0])


@pytest.mark.parametrize(("value", "status"), [("40 ms", "above floor"), ("10 ms", "contradiction")],
                         ids=["above", "planted-below"])
def test_a_definition_held_as_a_floor(serving, tmp_path, value, status):
    row = _row(serving, tmp_path, value=value)
    assert row.kind == "floor" and row.status == status and row.broken == ()
    assert 0.02 < float(row.bound) < 0.04  # the TTFT floor of 7e9 weights and 2,048 tokens on an H200


def test_without_relation_a_definition_is_a_prediction(serving, tmp_path):
    row = _row(serving, tmp_path, relation="", value="10 ms")
    assert row.kind == "prediction" and row.status == "prediction"


@pytest.mark.parametrize(("check", "relation"), [("gap.roofline_floor_below_measured", 'relation = ">="'),
                                                 ("prefill.ttft_floor", 'relation = "=="')],
                         ids=["claim", "not-a-bound"])
def test_relation_needs_a_definition_and_a_bound(serving, tmp_path, check, relation):
    with pytest.raises(ScenarioError, match="relation"):
        _row(serving, tmp_path, check=check, relation=relation)
