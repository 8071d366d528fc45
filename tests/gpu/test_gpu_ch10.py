"""Chapter 10's GPU claims, checked on a real GPU (skipped with a reason on CPU-only machines).

The chapter's measurements are cells; these tests repeat the same plain PyTorch measurements with
`helpers.timing.time_call` (synchronised, median of repeats) and check the claims the chapter
makes about them. Floors are loose on purpose: a 70 W T4 lowers its clock under sustained load (on
Kaggle's T4 ×2, published: FP32 matmul 4.35 TFLOP/s = 54 % of 8.1, FP16 41.9 TFLOP/s = 64 % of 65;
device-to-device copies ≈ 239 GB/s = 75 % of 320; docs/sources.md §4), so a figure far below them
means the measurement is broken, not the GPU. Ceilings at 110 % of the datasheet catch
unsynchronised timings, which read impossibly fast.
"""

from __future__ import annotations

import pytest
import torch

from helpers import roofline as r
from helpers.copies import copy_bandwidth, link_peak_gb_per_s, pcie_peak_gb_per_s
from helpers.timing import time_call

from .missing import missing
from .recorded import recorded

pytestmark = pytest.mark.gpu
DEV = torch.device("cuda", 0)
N = 2**26  # 256 MiB of float32 per buffer, as the chapter uses on a GPU: beyond any L2 cache


def _spec_or_skip():
    spec = r.spec_for_device(DEV)
    if spec is None:
        missing("datasheet figures for this GPU", f"{torch.cuda.get_device_name(DEV)} is not in helpers.gpu_specs")
    return spec


@pytest.fixture
def true_fp32():
    """FP32 matmuls and convolutions (TF32 off, as the chapter sets it), then the previous flags back."""
    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before


def _matmul_tflops(m: int, n: int, k: int, dtype: torch.dtype, seconds: float = 0.3) -> float:
    a = torch.randn(m, k, device=DEV, dtype=dtype)
    b = torch.randn(k, n, device=DEV, dtype=dtype)
    return 2 * m * n * k / time_call(lambda: a @ b, DEV, min_run_time=seconds).seconds / 1e12


def _sweep_roof(dtype: torch.dtype) -> float:
    """The chapter's compute roof: the best matmul over square and rectangular shapes."""
    shapes = [(s, s, s) for s in (1024, 2048, 4096)] + [(16384, 1024, 4096), (4096, 4096, 16384)]
    return max(_matmul_tflops(*shape, dtype) for shape in shapes)


#: L2 caches the chapter's facts state (docs/sources.md §4), in bytes as `L2_cache_size` reports them.
L2_BYTES = {"T4": 4 * 2**20, "H100": 50 * 2**20, "H100 PCIe": 50 * 2**20}


def test_device_properties_the_chapter_reads_match_the_datasheet() -> None:
    """Section 1 reads name, SM count, memory and L2 from `get_device_properties`: each is there and sane."""
    props = torch.cuda.get_device_properties(DEV)
    assert props.name and props.multi_processor_count > 0, props
    assert props.L2_cache_size > 0 and props.total_memory > 2**30, props
    spec = _spec_or_skip()
    # a datasheet's "16 GB" lies between 16·10^9 and 16·2^30 bytes, less what the driver keeps for itself
    assert 0.85 * spec.memory_gb * 1e9 <= props.total_memory <= 1.01 * spec.memory_gb * 2**30, (
        f"{props.total_memory / 2**30:.1f} GiB vs {spec.memory_gb} GB in the table"
    )
    if spec.short in L2_BYTES:
        assert props.L2_cache_size == L2_BYTES[spec.short], f"L2 {props.L2_cache_size / 2**20:g} MiB on {spec.short}"


def test_achievable_fp32_matmul_peak_is_below_the_datasheet_with_tf32_off(true_fp32) -> None:
    spec = _spec_or_skip()
    best = _sweep_roof(torch.float32)
    assert best >= 0.3 * spec.fp32_tflops, f"{best:.2f} TFLOP/s vs datasheet {spec.fp32_tflops}"
    # above 110 %: unsynchronised timing, or TF32 tensor cores running a "float32" matmul
    assert best <= 1.1 * spec.fp32_tflops, f"{best:.2f} TFLOP/s is above the FP32 peak {spec.fp32_tflops}"


def test_tf32_is_a_different_roof_on_ampere_and_later(true_fp32) -> None:
    major, _ = torch.cuda.get_device_capability(DEV)
    if major < 8:
        missing("TF32 (compute capability 8.0 or later)", "a T4 is 7.5")
    fp32 = _matmul_tflops(4096, 4096, 4096, torch.float32)
    torch.backends.cuda.matmul.allow_tf32 = True
    tf32 = _matmul_tflops(4096, 4096, 4096, torch.float32)
    assert tf32 > 1.5 * fp32, f"TF32 {tf32:.1f} vs FP32 {fp32:.1f} TFLOP/s: the flag should switch to tensor cores"


def test_fp16_matmul_uses_the_tensor_cores(true_fp32) -> None:
    spec = _spec_or_skip()
    if spec.fp16_tensor_tflops is None:
        missing("FP16 tensor cores", f"{spec.short} has none")
    fp16 = _sweep_roof(torch.float16)
    fp32 = _matmul_tflops(4096, 4096, 4096, torch.float32)
    # datasheet FP16-tensor / FP32: 8× on a T4, 16× on an A100, 2× on GeForce cards; measured on Kaggle's T4 ≈ 10×
    ratio = spec.fp16_tensor_tflops / spec.fp32_tflops
    assert fp16 > max(1.0, ratio / 3) * fp32, f"FP16 {fp16:.1f} vs FP32 {fp32:.1f} TFLOP/s; datasheet {ratio:.3g}×"
    assert fp16 >= 0.25 * spec.fp16_tensor_tflops, f"{fp16:.1f} TFLOP/s vs datasheet {spec.fp16_tensor_tflops}"
    assert fp16 <= 1.1 * spec.fp16_tensor_tflops, "faster than the datasheet peak: the timing is not synchronised"


def _streaming_gbs() -> dict[str, float]:
    """GB/s of the chapter's streaming kernels on the GPU, every byte counted once (no write-allocate)."""
    x, y, out = (torch.full((N,), 0.5, device=DEV) for _ in range(3))
    kernels = {
        "copy": (lambda: out.copy_(x), 2),
        "scale": (lambda: x.mul_(1.0), 2),
        "sum": (lambda: x.sum(), 1),
        "triad": (lambda: torch.add(y, x, alpha=2.0, out=out), 3),
        "add": (lambda: torch.add(x, y, out=out), 3),
    }
    return {
        k: elements * N * 4 / time_call(fn, DEV, min_run_time=0.3).seconds / 1e9
        for k, (fn, elements) in kernels.items()
    }


def test_no_streaming_kernel_beats_the_memory_roof() -> None:
    gbs = _streaming_gbs()
    roof = max(v for k, v in gbs.items() if k != "add")
    assert gbs["add"] <= 1.1 * roof, f"vector add {gbs['add']:.0f} GB/s above the roof {roof:.0f} GB/s: {gbs}"
    assert gbs["add"] >= 0.6 * roof, f"vector add {gbs['add']:.0f} GB/s far below the roof {roof:.0f}: {gbs}"
    spec = r.spec_for_device(DEV)
    if spec is not None:
        assert roof >= 0.5 * spec.bandwidth_gbs, f"{roof:.0f} GB/s vs datasheet {spec.bandwidth_gbs}"
        assert roof <= 1.1 * spec.bandwidth_gbs, f"{roof:.0f} GB/s: faster than the datasheet, not synchronised"


def test_vector_add_is_far_below_the_matmul_roof(true_fp32) -> None:
    x, y, out = (torch.full((N,), 0.5, device=DEV) for _ in range(3))
    add = N / time_call(lambda: torch.add(x, y, out=out), DEV, min_run_time=0.3).seconds / 1e12
    big = _matmul_tflops(4096, 4096, 4096, torch.float32)
    assert big > 20 * add, f"matmul {big:.3g} vs vector add {add:.3g} TFLOP/s: the same units, different roofs"


def test_small_matmuls_are_launch_bound(true_fp32) -> None:
    small = _matmul_tflops(64, 64, 64, torch.float32)
    big = _matmul_tflops(4096, 4096, 4096, torch.float32)
    assert small < 0.2 * big, f"64×64×64 at {small:.3g} TFLOP/s vs {big:.3g}: small matmuls should be far below"


def test_fp32_conv2d_with_cudnn_tf32_off_stays_below_the_fp32_peak(true_fp32) -> None:
    spec = _spec_or_skip()
    x = torch.randn(16, 64, 56, 56, device=DEV)
    w = torch.randn(64, 64, 3, 3, device=DEV)
    flops = 2 * 16 * 64 * 56 * 56 * 64 * 9
    seconds = time_call(lambda: torch.nn.functional.conv2d(x, w, padding=1), DEV, min_run_time=0.3).seconds
    # cuDNN may pick Winograd, which does fewer real multiplies than the direct count: allow 3×, not TF32's 7-8×
    assert flops / seconds / 1e12 <= 3 * spec.fp32_tflops, "a 'float32' convolution far above the FP32 peak: TF32?"


def test_host_to_device_bandwidth_is_below_the_link() -> None:
    result = copy_bandwidth(64 * 2**20, "h2d", True, DEV)
    link, how = link_peak_gb_per_s(DEV)
    spec = r.spec_for_device(DEV)
    if link is None and spec is not None and spec.pcie_generation:
        link, how = pcie_peak_gb_per_s(spec.pcie_generation, 16), f"PCIe {spec.pcie_generation}.0 x16 from the table"
    if link is not None:
        assert result.gb_per_s <= 1.05 * link, f"{result} is above the link's peak ({how}): not synchronised"
    gbs = _streaming_gbs()
    assert max(gbs.values()) > 5 * result.gb_per_s, f"device memory {gbs} vs host→device {result}"


@pytest.mark.gpu2
def test_gpu_to_gpu_copy_is_bounded_by_the_link() -> None:
    if torch.cuda.device_count() < 2:
        missing("a second CUDA GPU")
    src = torch.empty(256 * 2**20, dtype=torch.uint8, device="cuda:0")
    dst = torch.empty(256 * 2**20, dtype=torch.uint8, device="cuda:1")

    def copy() -> None:
        dst.copy_(src)
        torch.cuda.synchronize(1)

    gbs = src.nbytes / time_call(copy, DEV, min_run_time=0.3).seconds / 1e9
    spec = r.spec_for_device(DEV)
    assert gbs > 1, f"{gbs:.2f} GB/s between GPUs"
    if spec is not None and spec.nvlink_gbs is None and spec.pcie_generation:
        # no NVLink (a T4 ×2): the copy crosses PCIe, and cannot beat one direction of it
        peak = pcie_peak_gb_per_s(spec.pcie_generation, 16)
        assert gbs <= 1.05 * peak, f"{gbs:.1f} GB/s over PCIe {spec.pcie_generation}.0 x16 ({peak:.2f} GB/s)"


@pytest.mark.parametrize("figure", ["float32 matmul", "float16 matmul", "bfloat16 matmul", "memory roof"])
def test_the_chapters_roofs_stay_under_the_datasheet(figure: str) -> None:
    """Chapter 10's recorded roofs: a real rate, and not above 110 % of the datasheet's dense peak or bandwidth."""
    spec = _spec_or_skip()  # the chapter records its figures only for a GPU in the table
    dtype = figure.removesuffix(" matmul")
    if figure != "memory roof" and not spec.peak_tflops(dtype):  # a T4 has no bf16, a P100 no FP16 tensor cores
        missing(f"a datasheet {dtype} peak for this GPU", f"{spec.short} has none")
    best = recorded("10", figure)
    assert 0 < best["value"] <= 1.1 * best["limit"], best
