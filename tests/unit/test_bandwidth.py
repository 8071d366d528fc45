"""helpers.bandwidth: the PCIe arithmetic, argument checks, the CPU-only errors, and the plot."""

from __future__ import annotations

import pytest
import torch

from helpers.bandwidth import (
    PUBLISHED_T4,
    BandwidthResult,
    NeedsCudaError,
    bandwidth_sweep,
    copy_bandwidth,
    link_peak_gb_per_s,
    pcie_peak_gb_per_s,
    plot_bandwidth,
    ratio_lines,
)

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


@pytest.mark.parametrize(
    ("generation", "width", "error"),
    [
        (0, 16, ValueError),
        (9, 16, ValueError),
        (3, 3, ValueError),
        (3, 0, ValueError),
        ("3", 16, TypeError),
        (3.0, 16, TypeError),
        (3, True, TypeError),
    ],
)
def test_pcie_peak_rejects_bad_arguments(generation, width, error) -> None:
    with pytest.raises(error):
        pcie_peak_gb_per_s(generation, width)


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"nbytes": 0}, ValueError, "nbytes must be at least 1"),
        ({"nbytes": 1.5}, TypeError, "whole number"),
        ({"nbytes": True}, TypeError, "whole number"),
        ({"direction": "up"}, ValueError, "h2d"),
        ({"pinned": "yes"}, TypeError, "True or False"),
        ({"repeats": 0}, ValueError, "repeats"),
    ],
)
def test_copy_bandwidth_rejects_bad_arguments_before_touching_a_device(kwargs, error, words) -> None:
    args = {"nbytes": 4096, "direction": "h2d", "pinned": True, **kwargs}
    repeats = args.pop("repeats", 5)
    with pytest.raises(error, match=words):
        copy_bandwidth(args["nbytes"], args["direction"], args["pinned"], repeats=repeats)


def test_sweep_rejects_bad_and_empty_arguments() -> None:
    with pytest.raises(ValueError, match="direction"):
        bandwidth_sweep([4096], ["sideways"], [True])
    with pytest.raises(ValueError, match="at least one"):
        bandwidth_sweep([], ["h2d"], [True])
    with pytest.raises(TypeError):
        bandwidth_sweep([4096], ["h2d"], [1])


@pytest.mark.skipif(not NO_CUDA, reason="checks the CPU-only behaviour")
def test_without_cuda_measurements_raise_a_clear_error_and_the_link_is_unknown() -> None:
    with pytest.raises(NeedsCudaError, match="needs a CUDA GPU"):
        copy_bandwidth(4096, "h2d", True)
    with pytest.raises(NeedsCudaError):
        bandwidth_sweep([4096], ["h2d"], [True])
    peak, reason = link_peak_gb_per_s()
    assert peak is None and "no CUDA GPU" in reason


def _result(nbytes, direction="h2d", pinned=True, gb=10.0) -> BandwidthResult:
    return BandwidthResult(nbytes, direction, pinned, nbytes / gb / 1e9, gb, "cuda:0", "test stamp")


def test_ratio_lines_and_str() -> None:
    rs = [_result(4096, gb=0.5), _result(64 * 2**20, gb=12.0)]
    lines = ratio_lines(rs, 15.75, min_nbytes=2**20)
    assert len(lines) == 1 and "76%" in lines[0] and "host→device" in lines[0]
    with pytest.raises(ValueError):
        ratio_lines(rs, 0)


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
    with pytest.raises(ValueError):
        plot_bandwidth([])


def test_published_t4_figures_name_their_source_and_stay_under_the_link() -> None:
    for ref in PUBLISHED_T4:
        assert ref["source"] and ref["gb_per_s"][1] <= pcie_peak_gb_per_s(3, 16)
