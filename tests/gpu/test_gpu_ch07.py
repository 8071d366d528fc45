"""Chapter 07's GPU claims, checked on a real CUDA GPU (skipped, with the reason, elsewhere).

Bandwidth floors are fractions of the GPU's own PCIe link (read through NVML, or PCIe 3.0 x16 for a
T4, Kaggle's link), never absolute numbers: published pinned host→device figures for T4 hosts are
9.7-12.4 GB/s, 61-79 % of PCIe 3.0 x16's 15.75 GB/s (docs/sources.md §4).
"""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from helpers.bandwidth import (
    copy_bandwidth,
    d2h_trap,
    link_peak_gb_per_s,
    pcie_peak_gb_per_s,
    time_to_pin,
)
from helpers.gpu_specs import find_spec

pytestmark = pytest.mark.gpu
DEV = torch.device("cuda:0")
MIB = 2**20


def _is_t4() -> bool:
    spec = find_spec(torch.cuda.get_device_name(DEV))
    return spec is not None and spec.short == "T4"


def _link_peak_or_skip() -> tuple[float, str]:
    """This GPU's link peak per direction: NVML's answer, else PCIe 3.0 x16 for a T4; otherwise skip."""
    peak, how = link_peak_gb_per_s(DEV)
    if peak is not None:
        return peak, how
    if _is_t4():
        return pcie_peak_gb_per_s(3, 16), f"PCIe 3.0 x16, assumed for a T4 (Kaggle's link); NVML: {how}"
    pytest.skip(f"no link peak to compare with: NVML gave none ({how}) and {torch.cuda.get_device_name(DEV)} is no T4")


def test_pin_memory_makes_a_pinned_copy_and_a_second_pin_of_a_size_costs_less() -> None:
    t = torch.arange(6.0)
    p = t.pin_memory()
    assert p.is_pinned() and not t.is_pinned() and p.data_ptr() != t.data_ptr() and torch.equal(p, t)
    assert torch.empty(4, pin_memory=True).is_pinned()
    # A size no other GPU test pins (its block rounds to 128 MiB), so the first pin really asks the
    # driver to page-lock memory; later pins reuse PyTorch's cached pinned block and only copy.
    first, later = time_to_pin(96 * MIB, repeats=3)
    assert later < first, f"first pin {first * 1e3:.1f} ms, later pins {later * 1e3:.1f} ms (median)"


def test_nvml_reads_the_link() -> None:
    pytest.importorskip("pynvml")
    peak, how = link_peak_gb_per_s(DEV)
    assert peak is not None, how
    assert peak >= pcie_peak_gb_per_s(1, 1) and "PCIe" in how
    if _is_t4():  # chapter 07: both of Kaggle's T4s sit on PCIe 3.0 x16 links
        assert peak == pytest.approx(pcie_peak_gb_per_s(3, 16)), how


def test_small_copies_move_far_fewer_bytes_per_second_than_large_ones() -> None:
    small = copy_bandwidth(4096, "h2d", True, DEV)
    large = copy_bandwidth(16 * MIB, "h2d", True, DEV)
    assert (small.nbytes, small.direction, small.pinned, small.device) == (4096, "h2d", True, "cuda:0")
    assert "torch" in small.stamp
    # each copy pays microseconds of fixed cost (driver call, DMA set-up), so 4 KiB copies move a small
    # fraction of the bytes per second that 16 MiB copies do (on a T4, published: ≈ 0.4 GB/s at 1 KB,
    # ≈ 12 GB/s from 1 MB); asking for less than 30 % leaves a wide margin
    assert small.gb_per_s < 0.3 * large.gb_per_s, f"{small} vs {large}"


def test_pinned_h2d_reaches_60_percent_of_the_link_and_beats_pageable() -> None:
    peak, how = _link_peak_or_skip()
    pinned = [copy_bandwidth(n, "h2d", True, DEV) for n in (64 * MIB, 256 * MIB)]
    pageable = [copy_bandwidth(n, "h2d", False, DEV) for n in (64 * MIB, 256 * MIB)]
    for p, q in zip(pinned, pageable, strict=True):
        assert p.gb_per_s > q.gb_per_s, f"pinned should beat pageable: {p} vs {q}"
        assert p.gb_per_s <= 1.05 * peak, f"{p} is above the link's peak ({how}): the timing is not synchronised"
    best = max(p.gb_per_s for p in pinned)
    assert best >= 0.6 * peak, f"best pinned copy {best:.2f} GB/s is {best / peak:.0%} of {peak:.2f} GB/s ({how})"


def test_non_blocking_d2h_gives_wrong_values_without_waiting_and_right_ones_with_it() -> None:
    for _ in range(3):  # reproducible, not a lucky race
        assert d2h_trap(DEV, wait=False) < 0.5
        assert d2h_trap(DEV, wait=True) == 1.0


def test_dataloader_pin_memory_pins_the_batches_and_non_blocking_copies_arrive() -> None:
    images, labels = torch.randn(512, 3, 32, 32), torch.randint(0, 10, (512,))
    data = TensorDataset(images, labels)
    for pin in (False, True):
        loader = DataLoader(data, batch_size=128, num_workers=2, pin_memory=pin)
        for i, (x, y) in enumerate(loader):
            assert x.is_pinned() == pin and y.is_pinned() == pin
            # host→device with non_blocking=True has no trap for the GPU: later work on the stream waits for it
            on_gpu = x.to(DEV, non_blocking=pin)
            assert torch.equal((on_gpu * 2).cpu(), images[128 * i : 128 * (i + 1)] * 2)
