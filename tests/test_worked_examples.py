"""Worked examples: the engine's numbers against published ones (spec sheets, papers, the scaling
book).  Each row cites where the expected number is printed; tolerances cover the rounding there."""

from __future__ import annotations

import pytest

from derive.model.evaluate import evaluate
from derive.model.scenario import build_scenario

# (hardware, model, sets, quantity, unit, expected, relative tolerance, citation)
EXAMPLES = [
    ("h100-sxm", None, [], "critical_intensity", "FLOP/B", 295, 0.01,
     "scaling book, roofline.md: H100 bf16 9.89e14 FLOP/s / 3.35e12 B/s ~ 295"),
    ("tpu-v5e", None, [], "critical_intensity", "FLOP/B", 240, 0.01,
     "scaling book, roofline.md: TPU v5e 1.97e14 / 8.2e11 ~ 240 FLOP/byte"),
    ("a100-80gb", None, [], "critical_intensity", "FLOP/B", 153, 0.01,
     "A100 datasheet: 312 TFLOP/s bf16 dense, 2,039 GB/s (nvidia.com/en-us/data-center/a100)"),
    ("tpu-v5p", None, [], "critical_intensity", "FLOP/B", 166, 0.01,
     "Google Cloud TPU v5p docs: 459 TFLOP/s bf16, 2,765 GB/s"),
    ("mi300x", None, [], "critical_intensity", "FLOP/B", 247, 0.01,
     "AMD MI300X datasheet: 1,307.4 TFLOP/s fp16 dense, 5.3 TB/s"),
    ("b200", None, [], "critical_intensity", "FLOP/B", 281, 0.01,
     "DGX B200 datasheet: 2.25 PFLOP/s bf16 dense, 8 TB/s"),
    ("h100-sxm", None, [], "hardware_ratio", "token", 295, 0.01,
     "same H100 figures; bf16 stores 2 bytes per weight and a weight costs 2 FLOPs per token"),
    ("h100-sxm", None, [], "drain_time", "ms", 23.9, 0.01,
     "H100 SXM datasheet: 80 GB / 3.35 TB/s (the lecture's '20 ms on many generations')"),
    ("b200", None, [], "drain_time", "ms", 22.5, 0.01, "DGX B200 datasheet: 180 GB per GPU / 8 TB/s"),
    ("h200", None, [], "drain_time", "ms", 29.4, 0.01, "H200 datasheet: 141 GB / 4.8 TB/s"),
    ("h100-sxm", None, [], "chips * hbm_capacity", "GB", 640, 0.001,
     "DGX H100 datasheet: 640 GB of GPU memory in 8 GPUs (the lecture's 'eight Hoppers ... 640 gigabytes')"),
    ("gb200-nvl72", None, [], "chips * hbm_capacity", "TB", 13.4, 0.01,
     "NVIDIA GB200 NVL72 spec: 13.4 TB of HBM3e per rack"),
    ("gb200-nvl72", None, [], "chips * scaleup_bandwidth", "TB/s", 64.8, 0.01,
     "GB200 NVL72: 130 TB/s NVLink bidirectional per rack = 72 x 900 GB/s per direction"),
    (None, "llama3-70b", ["bytes_per_kv_element=2 B"], "kv_bytes_per_token", "B/token", 327_680, 0,
     "Llama 3.1 70B config (80 layers, 8 KV heads, head dim 128) in bf16: 2*80*8*128*2 bytes"),
    (None, "llama3-8b", ["bytes_per_kv_element=2 B"], "kv_bytes_per_token", "B/token", 131_072, 0,
     "Llama 3.1 8B config (32 layers, 8 KV heads, head dim 128) in bf16: 128 KiB per token"),
    (None, "deepseek-v3", ["bytes_per_kv_element=2 B"], "kv_bytes_per_token", "B/token", 70_272, 0,
     "DeepSeek-V2/V3 papers: MLA caches kv_lora_rank 512 + rope 64 per layer, 61 layers, bf16"),
    (None, "deepseek-v3", [], "params_total", "param", 671e9, 0.01, "DeepSeek-V3 README: 671B total parameters"),
    (None, "deepseek-v3", [], "params_active", "param", 37e9, 0.03, "DeepSeek-V3 README: 37B activated per token"),
    (None, "mixtral-8x7b", [], "params_total", "param", 46.7e9, 0.01,
     "Mixtral of Experts (Jiang et al. 2024): 47B parameters"),
    (None, "mixtral-8x7b", [], "params_active + params_embedding", "param", 12.9e9, 0.01,
     "Mixtral of Experts (Jiang et al. 2024): 13B active parameters per token; Mistral's 12.9B counts the input "
     "embedding, which derive's params_active (what a token multiplies) leaves out"),
    (None, "qwen3-235b-a22b", [], "params_active", "param", 22e9, 0.03,
     "Qwen3 technical report: 235B total, 22B activated"),
    (None, "llama3-405b", [], "params_total", "param", 405e9, 0.01, "Llama 3 herd of models paper: 405B parameters"),
    ("h100-sxm", "llama3-70b", ["chips=8", "bytes_per_param=2 B/param"], "weight_fetch_time", "ms", 5.27, 0.02,
     "scaling book, inference chapter: 70B bf16 weights read over 8 x 3.35 TB/s take ~5.3 ms per step"),
    (None, "mixtral-8x7b", [], "sparsity", "1", 46.7 / 12.9, 0.02,
     "Mixtral paper: each token sees 13B of 47B parameters"),
]


@pytest.mark.parametrize(("hardware", "model", "sets", "name", "unit", "expected", "tol", "citation"), EXAMPLES,
                         ids=[f"{e[0] or ''}-{e[1] or ''}-{e[3]}" for e in EXAMPLES])
def test_published_number(lecture_library, hardware, model, sets, name, unit, expected, tol, citation):
    scenario = build_scenario(lecture_library, hardware=hardware, model=model, sets=sets)
    got = evaluate(lecture_library, scenario, name, unit).value
    assert got == pytest.approx(expected, rel=tol or 1e-12, abs=0 if tol else 1e-9), citation


def test_enough_worked_examples():
    assert len(EXAMPLES) >= 20
