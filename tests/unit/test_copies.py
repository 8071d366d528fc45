"""helpers.copies: the timed copies of chapters 03, 07 and 10 on the CPU (and what they refuse), the record,
PCIe arithmetic, the CPU-only errors, and the one plot."""

from __future__ import annotations

import weakref

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from helpers.copies import (  # noqa: E402
    PUBLISHED_T4,
    CopyTiming,
    copies_for,
    copy_bandwidth,
    copy_in_pieces,
    link_peak_gb_per_s,
    measure_pieces,
    pcie_peak_gb_per_s,
    piece_counts,
    plot_bandwidth,
    ratio_lines,
    sweep_pieces,
    time_copy_batch,
    two_by_two,
)
from helpers.devices import DeviceError  # noqa: E402
from helpers.memory import NeedsCudaError  # noqa: E402
from helpers.timing import wall_seconds  # noqa: E402
from tests.gpu.errors import is_device_mismatch_error  # noqa: E402

KIB = 1024
NO_CUDA = not torch.cuda.is_available()


def _record(nbytes: int, copies: int = 1, gb: float = 10.0, **kind) -> CopyTiming:
    return CopyTiming(nbytes, copies, nbytes * copies / gb / 1e9, "cuda:0", 3, "test stamp", **kind)


def copy_many(tensors, device, non_blocking):
    """Chapter 07's copy loop, as the chapter writes it."""
    return [t.to(device, non_blocking=non_blocking, copy=True) for t in tensors]


# --------------------------------------------------------------------------- the record


def test_a_record_derives_its_bandwidth_route_and_kind() -> None:
    r = _record(4 * KIB, copies=16, gb=2.0, pinned=True, non_blocking=False)
    assert r.total_bytes == 64 * KIB and r.gb_per_s == pytest.approx(2.0)
    assert (r.route, r.kind) == ("host → cuda:0", "pinned, blocking")
    assert str(r).startswith("host → cuda:0, pinned, blocking:    16 ×   4.0 KiB in ") and "2.00 GB/s" in str(r)
    back = CopyTiming(4096, 1, 1e-3, "cuda:1", 1, "s", direction="d2h")
    assert (back.route, back.kind) == ("cuda:1 → host", "pageable")
    assert CopyTiming(4096, 1, 1e-3, "cpu", 1, "s").route == "host → host (CPU stand-in for host → GPU)"


# --------------------------------------------------------------------------- chapter 03: one copy or many


def test_copy_in_pieces_copies_every_byte() -> None:
    src = torch.arange(64, dtype=torch.float32)
    dst = torch.zeros(64)
    copy_in_pieces(src, dst, 8)
    assert torch.equal(src, dst)


def test_measure_pieces_on_the_cpu_is_a_labelled_stamped_record() -> None:
    threads = torch.get_num_threads()
    r = measure_pieces(64 * KIB, 16, "cpu", repeats=2)
    assert isinstance(r, CopyTiming)
    assert (r.copies, r.nbytes, r.total_bytes, r.repeats) == (16, 4 * KIB, 64 * KIB, 2)
    assert r.seconds > 0 and r.gb_per_s == pytest.approx(64 * KIB / r.seconds / 1e9)
    assert r.route == "host → host (CPU stand-in for host → GPU)" and r.kind == "pageable"
    assert r.stamp.startswith("measured on") and "torch" in r.stamp
    assert torch.get_num_threads() == threads, "the thread count is restored"
    assert "16 ×" in str(r) and "GB/s" in str(r)


def test_measure_pieces_times_the_copy_function_it_is_given() -> None:
    calls = []

    def my_copy(src, dst, pieces):
        calls.append(pieces)
        for d, s in zip(dst.view(pieces, -1), src.view(pieces, -1), strict=True):
            d.copy_(s)

    r = measure_pieces(16 * KIB, 4, "cpu", repeats=2, copy=my_copy)
    assert calls == [4, 4, 4], "one warm-up and one call per repeat"
    assert r.copies == 4
    records = sweep_pieces(16 * KIB, [1, 4], "cpu", repeats=1, progress=False, copy=my_copy)
    assert [r.copies for r in records] == [1, 4] and calls[-2:] == [4, 4]


def test_measure_pieces_rejects_a_copy_that_misses_bytes() -> None:
    def first_piece_only(src, dst, pieces):
        dst.view(pieces, -1)[0].copy_(src.view(pieces, -1)[0])

    threads = torch.get_num_threads()
    with pytest.raises(ValueError, match="first_piece_only left some bytes of dst uncopied"):
        measure_pieces(16 * KIB, 4, "cpu", repeats=1, copy=first_piece_only)
    assert torch.get_num_threads() == threads, "the thread count is restored after a failure"
    with pytest.raises(TypeError, match="copy must be a function"):
        measure_pieces(16 * KIB, 4, "cpu", repeats=1, copy="copy_")


def test_measure_pieces_defaults_to_this_machine_device() -> None:
    r = measure_pieces(4 * KIB, 1, repeats=1)
    assert r.route == ("host → cuda:0" if torch.cuda.is_available() else "host → host (CPU stand-in for host → GPU)")


def test_piece_counts() -> None:
    assert piece_counts(16 * KIB, smallest_piece_bytes=KIB) == [1, 4, 16]
    assert piece_counts(16 * KIB, smallest_piece_bytes=KIB, step=2) == [1, 2, 4, 8, 16]
    assert piece_counts(3000, smallest_piece_bytes=1000) == [1]  # 3000 / 4 is not whole
    with pytest.raises(ValueError, match="step must be 2 or more"):
        piece_counts(16 * KIB, step=1)


def test_the_sweep_and_its_plot() -> None:
    records = sweep_pieces(16 * KIB, [1, 4, 16], "cpu", repeats=1, progress=False)
    assert [r.copies for r in records] == [1, 4, 16]
    assert len({r.total_bytes for r in records}) == 1
    fig = plot_bandwidth(records)
    try:
        (ax,) = fig.get_axes()
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        (line,) = ax.get_lines()
        assert list(line.get_xdata()) == [KIB, 4 * KIB, 16 * KIB], "one point per piece size, by size"
        assert [t.get_text() for t in ax.get_legend().get_texts()] == [
            "host → host (CPU stand-in for host → GPU), pageable"
        ]
        assert any("measured on" in t.get_text() for t in fig.texts), "the plot carries the stamp"
        assert "host → host (CPU stand-in for host → GPU), pageable" in fig.alt_text
    finally:
        plt.close(fig)


def test_is_device_mismatch_error_recognises_the_real_error() -> None:
    try:
        torch.ones(2, device="meta") + torch.ones(2)
    except RuntimeError as error:
        assert is_device_mismatch_error(error)
    else:
        pytest.fail("meta + cpu should raise")
    cuda_wording = RuntimeError(
        "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    )
    assert is_device_mismatch_error(cuda_wording)
    assert not is_device_mismatch_error(RuntimeError("shape mismatch"))
    assert not is_device_mismatch_error(ValueError("not on the same device"))


# --------------------------------------------------------------------------- chapter 07: the learner's copy loop


def test_copies_for_fills_a_batch_within_bounds() -> None:
    assert copies_for(4096, 2**20, 64) == 64
    assert copies_for(2**16, 2**20, 64) == 16
    assert copies_for(2**22, 2**20, 64) == 1


def test_time_copy_batch_on_the_cpu_measures_host_to_host_copies() -> None:
    r = time_copy_batch(copy_many, 4096, "cpu", copies=8, pinned=False, non_blocking=True, repeats=2)
    assert (r.nbytes, r.pinned, r.non_blocking, r.copies, r.device) == (4096, False, True, 8, "cpu")
    assert r.gb_per_s > 0 and r.seconds > 0 and "torch" in r.stamp
    assert str(r).startswith("host → host (CPU stand-in for host → GPU), pageable, non_blocking:     8 ×   4.0 KiB in ")


def test_the_copies_a_batch_made_are_freed_after_the_clock_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    import helpers.copies

    made: list[weakref.ref] = []
    alive_when_timed: list[bool] = []
    earlier_freed: list[bool] = []

    def copy_and_watch(tensors, device, non_blocking):
        earlier_freed.append(all(ref() is None for ref in made))
        copies = copy_many(tensors, device, non_blocking)
        made.append(weakref.ref(copies[0]))
        return copies

    def watched(fn, device):
        seconds = wall_seconds(fn, device)
        alive_when_timed.append(made[-1]() is not None)
        return seconds

    monkeypatch.setattr(helpers.copies, "wall_seconds", watched)
    time_copy_batch(copy_and_watch, 4096, "cpu", copies=2, pinned=False, non_blocking=False, repeats=3)
    assert len(made) == 4, "one warm-up and one call per repeat"
    assert alive_when_timed == [True] * 3, "freeing the copies is not timed"
    assert earlier_freed == [True] * 4, "each batch's copies are freed before the next batch"
    assert all(ref() is None for ref in made)


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
    try:
        labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
        assert "host → host (CPU stand-in for host → GPU), pageable, blocking" in labels
        assert "host → host (CPU stand-in for host → GPU), pageable, non_blocking" in labels
    finally:
        plt.close(fig)


@pytest.mark.skipif(not NO_CUDA, reason="checks the CPU-only behaviour")
def test_two_by_two_asks_for_pinned_memory_only_on_a_gpu() -> None:
    results = two_by_two(copy_many, [4096], "cpu", total_bytes=4096, repeats=1)
    assert not any(r.pinned for r in results)


# --------------------------------------------------------------------------- chapter 10 and the link's limit


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


def test_ratio_lines() -> None:
    rs = [_record(4096, gb=0.5, pinned=True), _record(64 * 2**20, gb=12.0, pinned=True)]
    lines = ratio_lines(rs, 15.75, min_nbytes=2**20)
    assert len(lines) == 1 and "76%" in lines[0] and lines[0].startswith("host → cuda:0, pinned:")


def test_published_t4_figures_name_their_source_and_stay_under_the_link() -> None:
    for ref in PUBLISHED_T4:
        assert ref["source"] and ref["gb_per_s"][1] <= pcie_peak_gb_per_s(3, 16)


# --------------------------------------------------------------------------- the plot


def test_the_plot_draws_a_line_per_route_and_kind_the_peak_and_the_published_points() -> None:
    rs = [
        _record(n, direction=d, pinned=p, non_blocking=p)
        for n in (4096, 2**20)
        for d in ("h2d", "d2h")
        for p in (True, False)
    ]
    fig = plot_bandwidth(rs, 15.75)
    ref = plot_bandwidth([], 15.75, reference=PUBLISHED_T4, stamp="published")
    try:
        ax = fig.axes[0]
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert len([x for x in labels if "pinned" in x or "pageable" in x]) == 4 and any("15.75" in x for x in labels)
        styles = {line.get_label(): line.get_linestyle() for line in ax.get_lines()}
        assert styles["host → cuda:0, pinned, non_blocking"] == "-"
        assert styles["cuda:0 → host, pageable, blocking"] == "--"
        assert any("test stamp" in t.get_text() for t in fig.texts)
        assert any("published" in t.get_text() for t in ref.axes[0].get_legend().get_texts())
        assert "published T4 figures (not measured here)" in ref.alt_text
    finally:
        plt.close(fig)
        plt.close(ref)
