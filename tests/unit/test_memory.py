"""helpers.memory: byte formats and the readers of the counters; the caching-allocator model and its checks."""

from __future__ import annotations

import pytest
import torch

from helpers.memory import MIB, format_bytes
from helpers.standins import CachingAllocatorModel, round_size, segment_size

NO_CUDA = not torch.cuda.is_available()


def test_format_bytes() -> None:
    assert format_bytes(512) == "512 B"
    assert format_bytes(2 * MIB) == "2.0 MiB"
    assert format_bytes(15 * 2**30) == "15.0 GiB"
    assert format_bytes(-1024) == "-1.0 KiB"


def test_rounding_and_segment_sizes_follow_the_allocator_constants() -> None:
    assert [round_size(n) for n in (1, 511, 512, 513, 1000)] == [512, 512, 512, 1024, 1024]
    assert segment_size(512) == segment_size(MIB) == 2 * MIB  # small pool
    assert segment_size(MIB + 512) == segment_size(10 * MIB - 512) == 20 * MIB  # 1–10 MiB share 20 MiB
    assert segment_size(10 * MIB) == 10 * MIB
    assert segment_size(25 * MIB + 512) == 26 * MIB  # rounded up to 2 MiB
    for bad in (0, -5):
        with pytest.raises(ValueError):
            round_size(bad)
    for bad in (1.5, "1", True):
        with pytest.raises(TypeError):
            round_size(bad)


def test_small_requests_share_a_2_mib_segment() -> None:
    m = CachingAllocatorModel()
    m.malloc(1000)
    assert (m.allocated, m.reserved) == (1024, 2 * MIB)
    m.malloc(1000)
    assert (m.allocated, m.reserved) == (2048, 2 * MIB)
    assert len(m.segments) == 1


def test_small_and_large_pools_do_not_mix() -> None:
    m = CachingAllocatorModel()
    m.free(m.malloc(20 * MIB))  # a cached 20 MiB large segment
    m.malloc(1000)  # small: must not be carved from the large segment
    assert m.reserved == 22 * MIB
    assert {s.small for s in m.segments} == {True, False}


def test_free_keeps_memory_reserved_and_reuse_takes_no_new_segment() -> None:
    m = CachingAllocatorModel()
    h = m.malloc(30 * MIB)
    m.free(h)
    assert (m.allocated, m.reserved) == (0, 30 * MIB)
    m.malloc(16 * MIB)  # best fit: cut from the cached 30 MiB segment (rest 14 MiB > 1 MiB: split)
    assert (m.allocated, m.reserved) == (16 * MIB, 30 * MIB)
    assert len(m.segments[0].blocks) == 2


def test_unsplit_block_is_counted_whole() -> None:
    m = CachingAllocatorModel()
    m.free(m.malloc(12 * MIB))
    m.malloc(11 * MIB + 512)  # rest under 1 MiB: the large pool does not split it
    assert m.allocated == 12 * MIB


def test_free_merges_neighbours() -> None:
    m = CachingAllocatorModel()
    a, b, c = (m.malloc(1000) for _ in range(3))
    m.free(a)
    m.free(c)
    m.free(b)
    assert m.segments[0].unused


def test_empty_cache_returns_only_wholly_free_segments() -> None:
    m = CachingAllocatorModel()
    keep = m.malloc(16 * MIB)
    m.free(m.malloc(16 * MIB))
    given_back = m.empty_cache()
    assert given_back == 16 * MIB
    assert (m.allocated, m.reserved) == (16 * MIB, 16 * MIB)
    m.free(keep)
    m.empty_cache()
    assert m.reserved == 0


def test_peaks_and_reset() -> None:
    m = CachingAllocatorModel()
    m.free(m.malloc(8 * MIB))
    assert m.max_allocated == 8 * MIB and m.allocated == 0
    m.reset_peaks()
    assert m.max_allocated == 0 and m.max_reserved == m.reserved


def test_free_of_unknown_handle_is_a_clear_error() -> None:
    m = CachingAllocatorModel()
    h = m.malloc(10)
    m.free(h)
    with pytest.raises(KeyError, match="freed twice"):
        m.free(h)


@pytest.mark.skipif(not NO_CUDA, reason="checks the CPU-only behaviour")
def test_describe_shows_blocks_that_add_up_to_their_segment() -> None:
    """One exact unit per segment: rounded figures ("1.0 KiB + 1.0 KiB + 2.0 MiB") would not add up."""
    import re

    m = CachingAllocatorModel()
    m.malloc(1000)
    m.malloc(1000)
    m.free(m.malloc(30 * MIB))
    lines = m.describe().splitlines()
    assert lines[0] == "segment 1 (small pool, 2,048 KiB): #1 1 KiB | #2 1 KiB | free 2,046 KiB"
    for line in lines:
        total, *parts = (int(n.replace(",", "")) for n in re.findall(r"(\d[\d,]*) (?:MiB|KiB|B)\b", line))
        assert sum(parts) == total, line
