"""Chapter 07's GPU claims, checked on a real CUDA GPU (skipped, with the reason, elsewhere)."""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from helpers.bandwidth import (
    bandwidth_sweep,
    copy_bandwidth,
    d2h_trap,
    link_peak_gb_per_s,
    loader_epoch_seconds,
    pcie_peak_gb_per_s,
    time_to_pin,
)

pytestmark = pytest.mark.gpu
DEV = torch.device("cuda:0")
MB64 = 64 * 2**20


def _peak() -> float:
    peak, _how = link_peak_gb_per_s(DEV)
    return peak if peak is not None else pcie_peak_gb_per_s(3, 16)  # Kaggle's T4 link


def test_pin_memory_makes_a_pinned_copy() -> None:
    t = torch.arange(6.0)
    p = t.pin_memory()
    assert p.is_pinned() and not t.is_pinned() and p.data_ptr() != t.data_ptr() and torch.equal(p, t)
    assert torch.empty(4, pin_memory=True).is_pinned()
    first, later = time_to_pin(16 * 2**20, repeats=2)
    assert first > 0 and later > 0


def test_nvml_reads_the_link() -> None:
    pytest.importorskip("pynvml")
    peak, how = link_peak_gb_per_s(DEV)
    assert peak is not None, how
    assert peak >= pcie_peak_gb_per_s(1, 1) and "PCIe" in how


def test_copy_bandwidth_result_fields() -> None:
    r = copy_bandwidth(4096, "d2h", False, DEV, repeats=2)
    assert (r.nbytes, r.direction, r.pinned, r.device) == (4096, "d2h", False, "cuda:0")
    assert r.seconds > 0 and r.gb_per_s == pytest.approx(4096 / r.seconds / 1e9)
    assert "torch" in r.stamp
    results = bandwidth_sweep([4096, 2**20], ["h2d", "d2h"], [True, False], DEV)
    assert len(results) == 8


def test_pinned_h2d_reaches_75_percent_of_the_link_and_beats_pageable() -> None:
    peak = _peak()
    for nbytes in (MB64, 4 * MB64):
        pinned = copy_bandwidth(nbytes, "h2d", True, DEV)
        pageable = copy_bandwidth(nbytes, "h2d", False, DEV)
        assert pinned.gb_per_s >= 0.75 * peak, f"{pinned} is {pinned.gb_per_s / peak:.0%} of {peak:.2f} GB/s"
        assert pinned.gb_per_s > pageable.gb_per_s, f"{pinned} vs {pageable}"


def test_non_blocking_d2h_gives_wrong_values_without_waiting_and_right_ones_with_it() -> None:
    for _ in range(3):  # reproducible, not a lucky race
        assert d2h_trap(DEV, wait=False) < 0.5
        assert d2h_trap(DEV, wait=True) == 1.0


def test_dataloader_pin_memory_timing_runs() -> None:
    data = TensorDataset(torch.randn(512, 3, 32, 32), torch.randint(0, 10, (512,)))
    for pin in (False, True):
        loader = DataLoader(data, batch_size=128, num_workers=2, pin_memory=pin)
        assert next(iter(loader))[0].is_pinned() == pin
        assert loader_epoch_seconds(loader, DEV, non_blocking=pin) > 0
