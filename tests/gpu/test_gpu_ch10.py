"""Chapter 10's GPU claims, checked on a real GPU (skipped with a reason on CPU-only machines).

Measured figures are compared with the GPU's datasheet row when the GPU is in the table; the
thresholds are loose on purpose (clocks, drivers and neighbours vary), but a roofline that
reads far below them means the measurement is broken, not the GPU.
"""

from __future__ import annotations

import pytest
import torch

from helpers import roofline as r

pytestmark = pytest.mark.gpu


def _spec_or_skip():
    spec = r.spec_for_device("cuda:0")
    if spec is None:
        pytest.skip(f"{torch.cuda.get_device_name(0)} is not in helpers.gpu_specs; no datasheet to compare with")
    return spec


def test_fp32_matmul_reaches_a_sane_fraction_of_the_datasheet_peak() -> None:
    spec = _spec_or_skip()
    torch.set_float32_matmul_precision("highest")  # true FP32: no TF32 tensor cores on Ampere and later
    best = max(r.measure_matmul(n, torch.float32, "cuda:0", min_run_time=0.5).tflops for n in (2048, 4096))
    assert best >= 0.4 * spec.fp32_tflops, f"{best:.2f} TFLOP/s vs datasheet {spec.fp32_tflops}"
    assert best <= 1.1 * spec.fp32_tflops, "faster than the datasheet peak: the timing is not synchronised"


def test_fp16_matmul_uses_the_tensor_cores() -> None:
    spec = _spec_or_skip()
    if spec.fp16_tensor_tflops is None:
        pytest.skip(f"{spec.short} has no FP16 tensor cores")
    fp16 = r.measure_matmul(4096, torch.float16, "cuda:0", min_run_time=0.5).tflops
    fp32 = spec.fp32_tflops
    assert fp16 > 1.5 * fp32, f"FP16 matmul {fp16:.1f} TFLOP/s is not clearly above the FP32 peak {fp32}"
    assert fp16 <= 1.1 * spec.fp16_tensor_tflops


def test_device_memory_bandwidth_is_at_least_half_the_datasheet() -> None:
    spec = _spec_or_skip()
    copy = r.measure_copy_bandwidth(512 * 2**20, "cuda:0", min_run_time=0.5)
    assert copy.gbs >= 0.5 * spec.bandwidth_gbs, f"{copy.gbs:.0f} GB/s vs datasheet {spec.bandwidth_gbs}"
    assert copy.gbs <= 1.1 * spec.bandwidth_gbs


def test_vector_add_is_memory_bound_and_near_the_copy_bandwidth() -> None:
    copy = r.measure_copy_bandwidth(256 * 2**20, "cuda:0", min_run_time=0.3)
    add = r.measure_vector_add(64 * 2**20, torch.float32, "cuda:0", min_run_time=0.3)
    assert add.gbs >= 0.6 * copy.gbs
    big = r.measure_matmul(4096, torch.float32, "cuda:0", min_run_time=0.3)
    assert big.tflops > 20 * add.tflops  # high intensity runs far faster than a streaming op


def test_dtype_choice_on_cuda_follows_the_capability() -> None:
    choice = r.choose_dtypes("cuda:0")
    major, _ = torch.cuda.get_device_capability(0)
    assert (torch.bfloat16 in choice.dtypes) == (major >= 8)
    assert torch.float16 in choice.dtypes


def test_host_to_device_bandwidth_through_chapter_07_helper() -> None:
    result = r.host_device_bandwidth(64 * 2**20, "cuda:0", "h2d", True)
    if result is None:
        pytest.skip("helpers.bandwidth (chapter 07) is not installed")
    assert result.gb_per_s > 1.0  # pinned 64 MB over PCIe: several GB/s on any real link
    copy = r.measure_copy_bandwidth(256 * 2**20, "cuda:0", min_run_time=0.3)
    assert copy.gbs > 5 * result.gb_per_s  # the GPU's own memory is far faster than the PCIe link
