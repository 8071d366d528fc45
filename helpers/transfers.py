"""Copies between devices, measured: many small copies against one big one (chapter 03's harness).

`measure_pieces` / `sweep_pieces` time a copy function (the learner's, or the reference
`copy_in_pieces`) that moves the same bytes as one copy or as N smaller copies, and report the
total time and the effective bandwidth. On a GPU the copies go from host memory to the device
(pageable memory, as most code has it); on a machine without one they go from host memory to
host memory, and every record says which it measured (`direction`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from .devices import a_function, try_gpu, usable_device
from .memory import format_bytes
from .timing import format_seconds, gigabytes_per_second, wall_seconds
from .training import STAND_IN_COPY_THREADS, threads_on_cpu

#: A copy function: `copy(src, dst, pieces)` copies 1-D `src` into `dst` as `pieces` equal copies.
CopyFunction = Callable[[torch.Tensor, torch.Tensor, int], object]


def destination_for_transfers(device: torch.device | str | None = None) -> torch.device:
    """The device host memory is copied to: `device` if given, else the first GPU, else the CPU."""
    return usable_device(device) if device is not None else try_gpu()


def transfer_direction(device: torch.device | str) -> str:
    """Words for what a measurement copied: 'host → cuda:0', or on the CPU a host → host stand-in."""
    device = torch.device(device)
    if device.type == "cpu":
        return "host → host, one thread (no GPU here: a stand-in for host → GPU)"
    return f"host → {device}"


@dataclass(frozen=True)
class PieceTiming:
    """Moving `total_bytes` as `pieces` copies of `piece_bytes` each: total time and effective bandwidth."""

    pieces: int
    piece_bytes: int
    total_bytes: int
    seconds: float  # fastest of `repeats` runs: the time to move all pieces
    gb_per_s: float  # total_bytes / seconds, in 10^9 bytes per second
    repeats: int
    direction: str
    stamp: str

    def __str__(self) -> str:
        return (
            f"{self.pieces:>6} × {format_bytes(self.piece_bytes):>9}: "
            f"{format_seconds(self.seconds):>9} in all, {self.gb_per_s:7.2f} GB/s"
        )


def copy_in_pieces(src: torch.Tensor, dst: torch.Tensor, pieces: int) -> None:
    """Copy 1-D `src` into `dst` as `pieces` equal consecutive slices, one `copy_` each."""
    for d, s in zip(dst.view(pieces, -1), src.view(pieces, -1), strict=True):
        d.copy_(s)


def measure_pieces(
    total_bytes: int,
    pieces: int,
    device: torch.device | str | None = None,
    *,
    repeats: int = 5,
    copy: CopyFunction | None = None,
) -> PieceTiming:
    """Time `copy(src, dst, pieces)` moving `total_bytes` from host memory to `device`.

    `copy` defaults to `copy_in_pieces`; pass your own to measure it (it is checked to copy every
    byte before it is timed). `device` defaults to the first GPU, or the CPU when there is none
    (then the copies are host to host). The destination is allocated once, so only the copies are
    timed; the device is synchronised before and after every repeat, and the fastest of `repeats`
    runs is reported (the run least disturbed by other work on the machine, as bandwidth tests
    usually report). `copy` and `device` are the learner's, so they are checked before anything is
    allocated or timed.
    """
    from .environment import stamp

    copy = copy_in_pieces if copy is None else copy
    a_function(copy, "copy")
    device = destination_for_transfers(device)
    src = torch.ones(total_bytes, dtype=torch.uint8)  # touch every page before timing
    dst = torch.zeros(total_bytes, dtype=torch.uint8, device=device)
    with threads_on_cpu(device, STAND_IN_COPY_THREADS):
        copy(src, dst, pieces)  # warm-up: first touch, allocator, CUDA context
        if not bool(dst.eq(1).all()):
            raise ValueError(f"{getattr(copy, '__name__', 'copy')} left some bytes of dst uncopied")
        times = [wall_seconds(lambda: copy(src, dst, pieces), device) for _ in range(repeats)]
    seconds = min(times)
    return PieceTiming(
        pieces=pieces,
        piece_bytes=total_bytes // pieces,
        total_bytes=total_bytes,
        seconds=seconds,
        gb_per_s=gigabytes_per_second(total_bytes, seconds),
        repeats=repeats,
        direction=transfer_direction(device),
        stamp=stamp(),
    )


def piece_counts(total_bytes: int, smallest_piece_bytes: int = 1024, step: int = 4) -> list[int]:
    """Piece counts 1, step, step², ... while pieces hold `smallest_piece_bytes` or more and divide evenly."""
    if step < 2:
        raise ValueError(f"step must be 2 or more (each count is `step` times the last), not {step}")
    counts, n = [], 1
    while total_bytes // n >= smallest_piece_bytes and total_bytes % n == 0:
        counts.append(n)
        n *= step
    return counts


def sweep_pieces(
    total_bytes: int,
    counts: Iterable[int],
    device: torch.device | str | None = None,
    *,
    repeats: int = 5,
    progress: bool = True,
    copy: CopyFunction | None = None,
) -> list[PieceTiming]:
    """`measure_pieces` for every piece count in `counts` (with a progress bar), timing `copy`."""
    counts = list(counts)
    if progress:
        from tqdm.auto import tqdm

        counts_iter: Iterable[int] = tqdm(counts, desc="piece counts", unit="count")
    else:
        counts_iter = counts
    return [measure_pieces(total_bytes, n, device, repeats=repeats, copy=copy) for n in counts_iter]


def plot_sweep(records: Sequence[PieceTiming]) -> Any:
    """Total time against number of pieces, and effective bandwidth against piece size (log axes), stamped."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter

    from .plots import add_stamp, colour, set_alt, style_axes

    fig, (ax_time, ax_bw) = plt.subplots(1, 2, figsize=(10.0, 4.0), layout="constrained")
    style_axes(ax_time)
    style_axes(ax_bw)
    pieces = [r.pieces for r in records]
    ax_time.loglog(pieces, [r.seconds * 1e3 for r in records], "o-", color=colour(3))
    ax_time.set_xlabel("number of copies (same total bytes)")
    ax_time.set_ylabel("total time (ms)")
    ax_time.set_title(f"moving {format_bytes(records[0].total_bytes)}")
    ax_time.grid(True, which="both", alpha=0.3)
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    ax_time.yaxis.set_major_formatter(plain)
    times = [r.seconds for r in records]
    if max(times) < 10 * min(times):  # less than a decade: label the minor ticks too
        ax_time.yaxis.set_minor_formatter(plain)
    else:
        ax_time.yaxis.set_minor_formatter(NullFormatter())
    ax_bw.semilogx([r.piece_bytes for r in records], [r.gb_per_s for r in records], "s-", color=colour(0))
    ax_bw.set_xlabel("bytes per copy (log scale)")
    ax_bw.set_ylabel("effective bandwidth (GB/s)")
    ax_bw.set_title("fewer, bigger copies move bytes faster")
    ax_bw.set_ylim(bottom=0)
    ax_bw.grid(True, which="both", alpha=0.3)
    fig.suptitle(records[0].direction)
    add_stamp(fig, records[0].stamp)
    fewest, most = min(records, key=lambda r: r.pieces), max(records, key=lambda r: r.pieces)
    return set_alt(
        fig,
        f"Two log-scale panels, {records[0].direction}, moving {format_bytes(records[0].total_bytes)}: "
        + "; ".join(
            f"{r.pieces} cop{'y' if r.pieces == 1 else 'ies'} of {format_bytes(r.piece_bytes)} "
            f"take{'s' if r.pieces == 1 else ''} "
            f"{format_seconds(r.seconds)} ({r.gb_per_s:.3g} GB/s)"
            for r in (fewest, most)
        )
        + f"; {len(records)} piece counts measured.",
    )
