"""Chapter 05's GPU claims, checked on a real CUDA GPU (skipped, with the reason, elsewhere).

The allocator's arithmetic (512-byte blocks; 2 MiB, 20 MiB and own-size segments) is checked as
deltas from a clean start. One thing in the process is not a tensor of ours but lives in the
caching allocator all the same: **cuBLAS's workspace**. The first cuBLAS call of the process (any
matmul or linear layer, in any earlier test) allocates it through the caching allocator and keeps it:
8 MiB + 128 KiB on sm_75 (Kaggle's T4), 32 MiB on sm_90. On a T4 it sits in a 20 MiB segment whose
free remainder (≈ 11.9 MiB) `empty_cache()` cannot return and a later 1-10 MiB request is cut from, so
the fixture gives the workspace back first (see `_release_cublas_workspaces`); the next cuBLAS call
allocates a fresh one.
"""

from __future__ import annotations

import gc
import os

import pytest
import torch

from helpers.memory import (
    MIB,
    AllocatorPlayground,
    CachingAllocatorModel,
    allocator_stats,
    free_and_total,
    memory_counters,
    reset_peaks,
)

pytestmark = pytest.mark.gpu
DEV = torch.device("cuda:0")


def _release_cublas_workspaces() -> None:
    """Hand cuBLAS's cached workspaces back to the caching allocator, so that `empty_cache` can return them.

    `torch._C._cuda_clearCublasWorkspaces` is private; PyTorch's own memory-leak check calls it for the
    same reason before it reads `memory_allocated` (torch/testing/_internal/common_utils.py,
    `CudaMemoryLeakCheck`). Where a torch build lacks it, the tests below that need an empty allocator
    skip with the reason instead of failing on the workspace's segment.
    """
    clear = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
    if clear is not None:
        clear()


def _default_allocator_or_skip() -> None:
    """The segment arithmetic below is the default allocator's; `PYTORCH_CUDA_ALLOC_CONF` options change it."""
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF") or os.environ.get("PYTORCH_ALLOC_CONF")
    if conf:
        pytest.skip(f"the allocator is configured ({conf!r}); chapter 05 teaches its default segment sizes")


@pytest.fixture(autouse=True)
def clean_allocator():
    gc.collect()
    torch.cuda.synchronize(DEV)
    _release_cublas_workspaces()
    torch.cuda.empty_cache()
    yield
    gc.collect()
    torch.cuda.synchronize(DEV)
    torch.cuda.empty_cache()


def _warm_up_cublas() -> None:
    """Make cuBLAS allocate its workspaces now (matmul and linear), so that they are in a baseline taken next."""
    a = torch.ones(64, 64, device=DEV)
    torch.nn.functional.linear(a, a, a[0])
    a @ a
    torch.cuda.synchronize(DEV)


def test_counters_are_plain_ints_and_allocated_never_exceeds_reserved() -> None:
    keep = torch.empty(3 * MIB, dtype=torch.uint8, device=DEV)
    c = memory_counters(DEV)
    assert all(isinstance(v, int) for v in (c.allocated, c.reserved, c.max_allocated, c.max_reserved))
    assert 3 * MIB <= c.allocated <= c.reserved <= c.max_reserved
    stats = allocator_stats(DEV)
    assert stats["allocated_bytes.all.current"] == torch.cuda.memory_allocated(DEV)
    assert stats["reserved_bytes.all.current"] == torch.cuda.memory_reserved(DEV)
    del keep


def test_small_tensor_rounds_to_512_and_takes_a_2_mib_segment() -> None:
    _default_allocator_or_skip()
    before = memory_counters(DEV)
    small_segments = torch.cuda.memory_stats(DEV).get("segment.small_pool.current", 0)
    x = torch.empty(1000, dtype=torch.uint8, device=DEV)
    after = memory_counters(DEV)
    assert after.allocated - before.allocated == 1024  # 1000 bytes, rounded up to a multiple of 512
    if small_segments == 0:  # no small segment survived empty_cache: the tensor needs a new one
        assert after.reserved - before.reserved == 2 * MIB
    else:  # a live small tensor elsewhere keeps a segment, which may have room
        assert after.reserved - before.reserved in (0, 2 * MIB)
    del x


def test_large_tensor_gets_its_own_segment_and_freeing_keeps_it_reserved() -> None:
    _default_allocator_or_skip()
    before = memory_counters(DEV)
    x = torch.empty(30 * MIB, dtype=torch.uint8, device=DEV)
    during = memory_counters(DEV)
    assert during.allocated - before.allocated == 30 * MIB
    assert during.reserved - before.reserved == 30 * MIB
    del x
    after = memory_counters(DEV)
    assert after.allocated == before.allocated
    assert after.reserved == during.reserved  # cached, not returned
    y = torch.empty(16 * MIB, dtype=torch.uint8, device=DEV)  # cut from the cached segment
    assert memory_counters(DEV).reserved == during.reserved
    del y


def test_model_agrees_with_the_real_allocator_on_a_sequence() -> None:
    _default_allocator_or_skip()
    base = memory_counters(DEV)
    if base.cached_free:
        pytest.skip(
            f"{base.cached_free} bytes stay cached in partly used segments after empty_cache (live tensors or "
            "a cuBLAS workspace this torch cannot release): the model starts from an empty allocator"
        )
    model = CachingAllocatorModel()
    live = []
    for nbytes in (1000, 1000, 3 * MIB, 30 * MIB):
        live.append(torch.empty(nbytes, dtype=torch.uint8, device=DEV))
        model.malloc(nbytes)
        real = memory_counters(DEV)
        assert real.allocated - base.allocated == model.allocated, f"after {nbytes} bytes"
        assert real.reserved - base.reserved == model.reserved, f"after {nbytes} bytes"
    del live


def test_peak_of_a_matmul_counts_the_temporary_product() -> None:
    """Chapter 05, section 3: `(a @ b).relu()` needs the product and the result at once, and keeps one."""
    n = 2048
    nbytes = n * n * 4  # one float32 matrix: 16 MiB
    a = torch.randn(n, n, device=DEV)
    b = torch.randn(n, n, device=DEV)
    _warm_up_cublas()  # cuBLAS's workspace appears at its first call and stays: keep it out of the step
    reset_peaks(DEV)
    start = memory_counters(DEV)
    out = (a @ b).relu()
    torch.cuda.synchronize(DEV)
    end = memory_counters(DEV)
    assert end.allocated - start.allocated == nbytes, "only relu's result is kept"
    assert end.max_allocated - start.allocated >= 2 * nbytes, "product and result were alive together"
    del a, b, out


def test_peak_and_reset() -> None:
    reset_peaks(DEV)
    start = memory_counters(DEV)
    x = torch.empty(64 * MIB, dtype=torch.uint8, device=DEV)
    del x
    c = memory_counters(DEV)
    assert c.max_allocated >= start.allocated + 64 * MIB > c.allocated
    reset_peaks(DEV)
    c = memory_counters(DEV)
    assert c.max_allocated == c.allocated and c.max_reserved == c.reserved


def test_empty_cache_lowers_reserved_but_not_allocated() -> None:
    keep = torch.empty(64 * MIB, dtype=torch.uint8, device=DEV)
    drop = torch.empty(64 * MIB, dtype=torch.uint8, device=DEV)
    del drop
    before = memory_counters(DEV)
    torch.cuda.empty_cache()
    after = memory_counters(DEV)
    assert after.allocated == before.allocated, "empty_cache never frees a live tensor"
    assert after.reserved <= before.reserved - 64 * MIB
    assert keep.fill_(7)[-1].item() == 7, "and the live tensor is still usable"
    del keep


def test_mem_get_info_is_the_drivers_view() -> None:
    free, total = free_and_total(DEV)
    assert 0 < free <= total
    assert total == pytest.approx(torch.cuda.get_device_properties(DEV).total_memory, rel=0.05)
    x = torch.empty(256 * MIB, dtype=torch.uint8, device=DEV)  # a new segment: the driver hands it out
    free_after, _ = free_and_total(DEV)
    assert free - free_after >= 0.9 * 256 * MIB, f"driver's free memory went from {free} to {free_after} bytes"
    del x


def test_out_of_memory_is_raised_caught_and_recovered() -> None:
    free, _ = free_and_total(DEV)
    ooms = allocator_stats(DEV)["num_ooms"]
    with pytest.raises(torch.cuda.OutOfMemoryError):
        torch.empty(free + 2**30, dtype=torch.uint8, device=DEV)
    assert issubclass(torch.cuda.OutOfMemoryError, RuntimeError)
    assert allocator_stats(DEV)["num_ooms"] == ooms + 1
    gc.collect()
    torch.cuda.empty_cache()
    x = torch.empty(free // 4, dtype=torch.uint8, device=DEV)  # the process carries on
    x.fill_(1)
    assert int(x[-1]) == 1
    del x


def test_playground_drives_the_real_counters() -> None:
    p = AllocatorPlayground.create()
    assert p.on_gpu and "real counters" in p.source
    start = p.history[-1]
    p.allocate(MIB)
    big = p.allocate(64 * MIB)
    assert big.allocated - p.history[-2].allocated == 64 * MIB, "memory_allocated grows by the tensor's bytes"
    freed = p.free_all()
    assert freed.allocated == start.allocated
    assert freed.reserved >= start.reserved + 64 * MIB  # freed but cached
    emptied = p.empty_cache()
    assert emptied.allocated == freed.allocated
    assert emptied.reserved <= freed.reserved - 64 * MIB
