"""helpers.transfers: the pieces sweep (default and given copy functions, and ones it refuses), its plot and widget."""

from __future__ import annotations

import pytest
import torch

from helpers.devices import is_device_mismatch_error
from helpers.transfers import (
    PieceTiming,
    copy_in_pieces,
    measure_pieces,
    piece_counts,
    plot_sweep,
    sweep_pieces,
    transfer_direction,
)

KIB = 1024


def test_copy_in_pieces_copies_every_byte() -> None:
    src = torch.arange(64, dtype=torch.float32)
    dst = torch.zeros(64)
    copy_in_pieces(src, dst, 8)
    assert torch.equal(src, dst)


def test_measure_pieces_on_the_cpu_is_a_labelled_stamped_record() -> None:
    threads = torch.get_num_threads()
    r = measure_pieces(64 * KIB, 16, "cpu", repeats=2)
    assert isinstance(r, PieceTiming)
    assert (r.pieces, r.piece_bytes, r.total_bytes, r.repeats) == (16, 4 * KIB, 64 * KIB, 2)
    assert r.seconds > 0 and r.gb_per_s == pytest.approx(64 * KIB / r.seconds / 1e9)
    assert "host → host" in r.direction and "stand-in" in r.direction
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
    assert r.pieces == 4
    records = sweep_pieces(16 * KIB, [1, 4], "cpu", repeats=1, progress=False, copy=my_copy)
    assert [r.pieces for r in records] == [1, 4] and calls[-2:] == [4, 4]


def test_measure_pieces_rejects_a_copy_that_misses_bytes() -> None:
    def first_piece_only(src, dst, pieces):
        dst.view(pieces, -1)[0].copy_(src.view(pieces, -1)[0])

    with pytest.raises(ValueError, match="first_piece_only left some bytes of dst uncopied"):
        measure_pieces(16 * KIB, 4, "cpu", repeats=1, copy=first_piece_only)
    with pytest.raises(TypeError, match="copy must be a function"):
        measure_pieces(16 * KIB, 4, "cpu", repeats=1, copy="copy_")


def test_measure_pieces_defaults_to_this_machine_device() -> None:
    r = measure_pieces(4 * KIB, 1, repeats=1)
    expected = "host → cuda:0" if torch.cuda.is_available() else "host → host"
    assert r.direction.startswith(expected)


def test_piece_counts() -> None:
    assert piece_counts(16 * KIB, smallest_piece_bytes=KIB) == [1, 4, 16]
    assert piece_counts(16 * KIB, smallest_piece_bytes=KIB, step=2) == [1, 2, 4, 8, 16]
    assert piece_counts(3000, smallest_piece_bytes=1000) == [1]  # 3000 / 4 is not whole
    with pytest.raises(ValueError, match="step must be 2 or more"):
        piece_counts(16 * KIB, step=1)


def test_sweep_and_plot() -> None:
    records = sweep_pieces(16 * KIB, [1, 4, 16], "cpu", repeats=1, progress=False)
    assert [r.pieces for r in records] == [1, 4, 16]
    assert len({r.total_bytes for r in records}) == 1
    fig = plot_sweep(records)
    axes = fig.get_axes()
    assert len(axes) == 2
    assert axes[0].get_xscale() == "log" and axes[0].get_yscale() == "log"
    assert "host → host" in fig._suptitle.get_text()
    assert any("measured on" in t.get_text() for t in fig.texts), "the plot carries the stamp"
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_transfer_direction_names_what_was_measured() -> None:
    assert transfer_direction("cuda:1") == "host → cuda:1"
    assert "stand-in" in transfer_direction(torch.device("cpu"))


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
