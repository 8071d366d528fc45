"""Chapter 05's GPU claims, checked on a real CUDA GPU (skipped, with the reason, elsewhere)."""

from __future__ import annotations

import gc

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


@pytest.fixture(autouse=True)
def clean_allocator():
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.synchronize(DEV)
        torch.cuda.empty_cache()
    yield
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def test_counters_are_plain_ints_and_allocated_never_exceeds_reserved() -> None:
    c = memory_counters(DEV)
    assert all(isinstance(v, int) for v in (c.allocated, c.reserved, c.max_allocated, c.max_reserved))
    assert 0 <= c.allocated <= c.reserved <= c.max_reserved
    stats = allocator_stats(DEV)
    assert stats["allocated_bytes.all.current"] == torch.cuda.memory_allocated(DEV)
    assert stats["reserved_bytes.all.current"] == torch.cuda.memory_reserved(DEV)


def test_small_tensor_rounds_to_512_and_takes_a_2_mib_segment() -> None:
    before = memory_counters(DEV)
    x = torch.empty(1000, dtype=torch.uint8, device=DEV)
    after = memory_counters(DEV)
    assert after.allocated - before.allocated == 1024
    assert after.reserved - before.reserved in (0, 2 * MIB)  # 0 if a live small segment had room
    del x


def test_large_tensor_gets_its_own_segment_and_freeing_keeps_it_reserved() -> None:
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
    model = CachingAllocatorModel()
    base = memory_counters(DEV)
    live, handles = [], []
    for nbytes in (1000, 1000, 3 * MIB, 30 * MIB):
        live.append(torch.empty(nbytes, dtype=torch.uint8, device=DEV))
        handles.append(model.malloc(nbytes))
    real = memory_counters(DEV)
    assert real.allocated - base.allocated == model.allocated
    assert real.reserved - base.reserved in (model.reserved, model.reserved - 2 * MIB)
    del live


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
    assert after.allocated == before.allocated
    assert after.reserved <= before.reserved - 64 * MIB
    del keep


def test_mem_get_info_is_the_drivers_view() -> None:
    free, total = free_and_total(DEV)
    assert 0 < free <= total
    assert total == pytest.approx(torch.cuda.get_device_properties(DEV).total_memory, rel=0.05)


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
    p.allocate(MIB)
    p.allocate(64 * MIB)
    p.free_all()
    freed = p.history[-1]
    assert freed.reserved >= 64 * MIB  # freed but cached
    p.empty_cache()
    assert p.history[-1].reserved <= freed.reserved - 64 * MIB
