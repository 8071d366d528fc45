"""helpers.bandwidth: PCIe arithmetic, CPU-only errors, the batch harness on the CPU (and what it refuses), the plot."""

from __future__ import annotations

import pytest
import torch

from helpers.bandwidth import (
    PUBLISHED_T4,
    BandwidthResult,
    NeedsCudaError,
    copies_for,
    copy_bandwidth,
    link_peak_gb_per_s,
    pcie_peak_gb_per_s,
    plot_bandwidth,
    ratio_lines,
    time_copy_batch,
    two_by_two,
)
from helpers.devices import DeviceError

NO_CUDA = not torch.cuda.is_available()


@pytest.mark.parametrize(
    ("generation", "width", "expected"),
    [
        (1, 16, 4.0),
        (2, 16, 8.0),
        (3, 16, 15.754),
        (4, 16, 31.508),
        (5, 16, 63.015),
        (6, 16, 121.0),
        (3, 8, 7.877),
        (4, 1, 1.969),
        (3, 4, 3.938),
    ],
)
def test_pcie_peak(generation, width, expected) -> None:
    assert pcie_peak_gb_per_s(generation, width) == pytest.approx(expected, rel=1e-3)


@pytest.mark.skipif(not NO_CUDA, reason="checks the CPU-only behaviour")
def test_without_cuda_measurements_raise_a_clear_error_and_the_link_is_unknown() -> None:
    with pytest.raises(NeedsCudaError, match="needs a CUDA GPU"):
        copy_bandwidth(4096, "h2d", True)
    peak, reason = link_peak_gb_per_s()
    assert peak is None and "no CUDA GPU" in reason


def _result(nbytes, direction="h2d", pinned=True, gb=10.0) -> BandwidthResult:
    return BandwidthResult(nbytes, direction, pinned, nbytes / gb / 1e9, gb, "cuda:0", "test stamp")


def test_ratio_lines_and_str() -> None:
    rs = [_result(4096, gb=0.5), _result(64 * 2**20, gb=12.0)]
    lines = ratio_lines(rs, 15.75, min_nbytes=2**20)
    assert len(lines) == 1 and "76%" in lines[0] and "host→device" in lines[0]


def test_plot_draws_lines_peak_and_reference() -> None:
    rs = [_result(n, d, p) for n in (4096, 2**20) for d in ("h2d", "d2h") for p in (True, False)]
    fig = plot_bandwidth(rs, 15.75)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len([x for x in labels if "pinned" in x or "pageable" in x]) == 4 and any("15.75" in x for x in labels)
    assert any("test stamp" in t.get_text() for t in fig.texts)
    ref = plot_bandwidth([], 15.75, reference=PUBLISHED_T4, stamp="published")
    assert any("published" in t.get_text() for t in ref.axes[0].get_legend().get_texts())


def test_published_t4_figures_name_their_source_and_stay_under_the_link() -> None:
    for ref in PUBLISHED_T4:
        assert ref["source"] and ref["gb_per_s"][1] <= pcie_peak_gb_per_s(3, 16)


def copy_many(tensors, device, non_blocking):
    """Chapter 07's copy loop, as the chapter writes it."""
    return [t.to(device, non_blocking=non_blocking, copy=True) for t in tensors]


def test_copies_for_fills_a_batch_within_bounds() -> None:
    assert copies_for(4096, 2**20, 64) == 64
    assert copies_for(2**16, 2**20, 64) == 16
    assert copies_for(2**22, 2**20, 64) == 1


def test_time_copy_batch_on_the_cpu_measures_host_to_host_copies() -> None:
    r = time_copy_batch(copy_many, 4096, "cpu", copies=8, pinned=False, non_blocking=True, repeats=2)
    assert (r.nbytes, r.pinned, r.non_blocking, r.copies, r.device) == (4096, False, True, 8, "cpu")
    assert r.gb_per_s > 0 and r.seconds > 0 and "torch" in r.stamp
    assert str(r).startswith("host→host 4.0 KiB pageable, non_blocking:")
    assert torch.get_num_threads() >= 1


@pytest.mark.parametrize(
    ("copy", "words"),
    [
        (lambda ts, d, nb: [t.to(d, non_blocking=nb) for t in ts], "returned its sources themselves"),
        (lambda ts, d, nb: [t.to(d, copy=True) for t in ts[:-1]], "a list of 3 tensors"),
        (lambda ts, d, nb: None, "a list of 3 tensors"),
        (lambda ts, d, nb: [t[:10].clone() for t in ts], "tensor of 4096 bytes"),
    ],
)
def test_time_copy_batch_refuses_a_copy_that_does_not_copy(copy, words) -> None:
    threads = torch.get_num_threads()
    with pytest.raises(ValueError, match=words):
        time_copy_batch(copy, 4096, "cpu", copies=3, pinned=False, non_blocking=False, repeats=1)
    assert torch.get_num_threads() == threads, "the thread count is restored after a failure"


def test_the_batch_harnesses_refuse_a_copy_that_is_not_a_function_or_a_device_torch_does_not_know() -> None:
    with pytest.raises(TypeError, match=r"copy must be a function \(something callable\), not 'copy_many'"):
        time_copy_batch("copy_many", 4096, "cpu", copies=2, pinned=False, non_blocking=True, repeats=1)
    with pytest.raises(TypeError, match="copy must be a function"):
        two_by_two("copy_many", [4096], "cpu")
    with pytest.raises(DeviceError, match="not a device torch knows"):
        two_by_two(copy_many, [4096], "gpu")


def test_two_by_two_on_the_cpu_measures_the_pageable_half_with_one_sync_per_batch() -> None:
    results = two_by_two(copy_many, [4096, 65536], "cpu", total_bytes=2**18, max_copies=8, repeats=1)
    assert {(r.pinned, r.non_blocking) for r in results} == {(False, False), (False, True)}
    assert [r.copies for r in results if r.nbytes == 65536] == [4, 4]
    fig = plot_bandwidth(results, 15.75, reference=PUBLISHED_T4)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "host→host, pageable, blocking" in labels and "host→host, pageable, non_blocking" in labels


@pytest.mark.skipif(not NO_CUDA, reason="checks the CPU-only behaviour")
def test_two_by_two_asks_for_pinned_memory_only_on_a_gpu() -> None:
    results = two_by_two(copy_many, [4096], "cpu", total_bytes=4096, repeats=1)
    assert not any(r.pinned for r in results)
