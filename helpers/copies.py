"""Copies between host memory and a device, timed (chapters 03, 07, 10), and the PCIe link's limit.

Each measurement is a `CopyTiming`: a batch of copies timed with the device synchronised before and after it, the
fastest of `repeats` batches after a warm-up (the one least disturbed by the rest of the machine). Without a GPU the
copies go from host memory to host memory on one CPU thread, a stand-in that every record names (`CopyTiming.route`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import groupby, product
from typing import Any

import torch

from .devices import a_function, try_gpu, usable_device
from .environment import nvml, stamp
from .memory import MIB, cuda_device_for, format_bytes
from .plots import GREY, OKABE_ITO, add_stamp, colour, keep_labels_inside, new_figure, number, set_alt
from .timing import format_seconds, gigabytes_per_second, wall_seconds
from .training import threads_on_cpu

CopyPieces = Callable[[torch.Tensor, torch.Tensor, int], object]
CopyMany = Callable[[list[torch.Tensor], torch.device, bool], Any]

#: Per PCIe generation: (GT/s per lane, fraction of the bits that carry data): 8b/10b coding for gen 1–2,
#: 128b/130b for 3–5, 256-byte FLITs carrying 242 bytes of data for 6–7 (PAM4, no line code). Source: PCI-SIG
#: specifications as tabulated on Wikipedia's "PCI Express" page (x16: 4, 8, 15.75, 31.5, 63, 121, 242 GB/s).
PCIE_GENERATIONS: dict[int, tuple[float, float]] = {
    1: (2.5, 8 / 10),
    2: (5.0, 8 / 10),
    3: (8.0, 128 / 130),
    4: (16.0, 128 / 130),
    5: (32.0, 128 / 130),
    6: (64.0, 242 / 256),
    7: (128.0, 242 / 256),
}
PCIE_WIDTHS = (1, 2, 4, 8, 12, 16, 32)

_SHMOO = "bandwidth-vs-size sweep ('shmoo') on a Colab T4, docs/sources.md §4"
#: Published host↔device figures for Kaggle's GPU (Tesla T4, PCIe 3.0 x16). Not measured here.
PUBLISHED_T4 = (
    {
        "what": "pinned host→device, large copies",
        "gb_per_s": (9.7, 12.4),
        "nbytes": 32_000_000,
        "source": "CUDA bandwidthTest results for T4 hosts (range across hosts; drawn at bandwidthTest's "
        "default 32 MB copy), docs/sources.md §4",
    },
    {"what": "pinned host→device, 1 KB copies", "gb_per_s": (0.4, 0.4), "nbytes": 1_000, "source": _SHMOO},
    {"what": "pinned host→device, ≥ 1 MB copies", "gb_per_s": (12.0, 12.0), "nbytes": 1_000_000, "source": _SHMOO},
)


@dataclass(frozen=True)
class CopyTiming:
    """`copies` copies of `nbytes` bytes each, timed as one batch: `seconds` is the fastest of `repeats`."""

    nbytes: int
    copies: int
    seconds: float  # the whole batch, from one synchronisation to the next
    device: str
    repeats: int
    stamp: str
    direction: str = "h2d"  # host memory to `device`; "d2h": back
    pinned: bool = False  # whether the host memory was pinned
    non_blocking: bool | None = None  # how the copies were issued; None: as the copy function chose

    @property
    def total_bytes(self) -> int:
        return self.nbytes * self.copies

    @property
    def gb_per_s(self) -> float:
        """The effective bandwidth: bytes moved per second, in GB/s (10^9 bytes per second)."""
        return gigabytes_per_second(self.total_bytes, self.seconds)

    @property
    def route(self) -> str:
        """'host → cuda:0', 'cuda:0 → host', or 'host → host (CPU stand-in for host → GPU)' without a GPU."""
        if self.device.startswith("cpu"):
            return f"host → host (CPU stand-in for {'host → GPU' if self.direction == 'h2d' else 'GPU → host'})"
        return f"host → {self.device}" if self.direction == "h2d" else f"{self.device} → host"

    @property
    def kind(self) -> str:
        """'pinned' or 'pageable', with ', non_blocking' or ', blocking' when the harness chose it."""
        memory = "pinned" if self.pinned else "pageable"
        if self.non_blocking is None:
            return memory
        return f"{memory}, {'non_blocking' if self.non_blocking else 'blocking'}"

    def __str__(self) -> str:
        return (
            f"{self.route}, {self.kind}: {self.copies:>5} × {format_bytes(self.nbytes):>9} "
            f"in {format_seconds(self.seconds):>8} ({format_seconds(self.seconds / self.copies)} each, "
            f"bytes included), {self.gb_per_s:6.2f} GB/s"
        )


def _measure(
    run: Callable[[], object], check: Callable[[object], None], device: torch.device, repeats: int, **fields: Any
) -> CopyTiming:
    """Time `run()`, one batch of copies: a warm-up whose result `check` inspects, then the fastest of `repeats`."""
    kept: list[object] = []  # what `run` returns, freed after the clock stops
    times = []
    with threads_on_cpu(device, 1):  # a stand-in's copy on several threads stalls whenever a core is busy elsewhere
        check(run())  # warm-up (first touch, allocator, CUDA context), and a check of what it copied
        for _ in range(repeats):
            times.append(wall_seconds(lambda: kept.append(run()), device))
            kept.clear()
    return CopyTiming(seconds=min(times), device=str(device), repeats=repeats, stamp=stamp(), **fields)


# Chapter 03: one copy or many.
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
    copy: CopyPieces = copy_in_pieces,
) -> CopyTiming:
    """Time `copy(src, dst, pieces)` (default `copy_in_pieces`) moving `total_bytes` of pageable host memory to
    `device` (default: the first GPU, else the CPU), once a warm-up has shown that it copies every byte."""
    a_function(copy, "copy")
    device = try_gpu() if device is None else usable_device(device)
    src = torch.ones(total_bytes, dtype=torch.uint8)  # touch every page before timing
    dst = torch.zeros(total_bytes, dtype=torch.uint8, device=device)

    def every_byte_copied(_: object) -> None:
        if not bool(dst.eq(1).all()):
            raise ValueError(f"{getattr(copy, '__name__', 'copy')} left some bytes of dst uncopied")

    return _measure(
        lambda: copy(src, dst, pieces), every_byte_copied, device, repeats, nbytes=total_bytes // pieces, copies=pieces
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
    copy: CopyPieces = copy_in_pieces,
) -> list[CopyTiming]:
    """`measure_pieces` for every piece count in `counts` (with a progress bar), timing `copy`."""
    from tqdm.auto import tqdm

    counts = tqdm(list(counts), desc="piece counts", unit="count", disable=not progress)
    return [measure_pieces(total_bytes, n, device, repeats=repeats, copy=copy) for n in counts]


# Chapter 07: the learner's copy loop.
def copies_for(nbytes: int, total_bytes: int, max_copies: int) -> int:
    """How many copies of `nbytes` a batch holds: enough for `total_bytes`, at least 1, at most `max_copies`."""
    return max(1, min(max_copies, total_bytes // nbytes))


def time_copy_batch(
    copy: CopyMany,
    nbytes: int,
    device: torch.device | str,
    *,
    copies: int,
    pinned: bool,
    non_blocking: bool,
    repeats: int = 5,
) -> CopyTiming:
    """Time `copy(tensors, device, non_blocking)` on `copies` host tensors of `nbytes` bytes each.

    The device is synchronised once before and ONCE after each batch, never between its copies, so blocking
    and non_blocking copies compare on equal terms: only the blocking ones make the host wait after each."""
    a_function(copy, "copy")
    device = usable_device(device)
    sources = [torch.empty(nbytes, dtype=torch.uint8, pin_memory=pinned).fill_(1) for _ in range(copies)]

    def one_copy_each(result: object) -> None:
        if not isinstance(result, (list, tuple)) or len(result) != len(sources):
            raise ValueError(f"the copy function should return a list of {len(sources)} tensors, one per source")
        for out, src in zip(result, sources, strict=True):
            if not isinstance(out, torch.Tensor) or out.device.type != device.type or out.nbytes != src.nbytes:
                raise ValueError(f"each copy should be a tensor of {src.nbytes} bytes on {device}")
            if out.data_ptr() == src.data_ptr():
                raise ValueError(
                    "the copy function returned its sources themselves, so nothing was copied "
                    "(on the CPU, t.to('cpu') returns t: pass copy=True)"
                )

    fields = {"nbytes": nbytes, "copies": copies, "pinned": pinned, "non_blocking": non_blocking}
    return _measure(lambda: copy(sources, device, non_blocking), one_copy_each, device, repeats, **fields)


def two_by_two(
    copy: CopyMany,
    sizes: Iterable[int],
    device: torch.device | str,
    *,
    total_bytes: int = 64 * MIB,
    max_copies: int = 256,
    repeats: int = 5,
) -> list[CopyTiming]:
    """`time_copy_batch` for every size × pageable/pinned (on a CUDA GPU) × blocking/non_blocking, with a
    progress bar; each batch holds `copies_for(size, total_bytes, max_copies)` tensors."""
    from tqdm.auto import tqdm

    a_function(copy, "copy")
    device = usable_device(device)
    pinned_options = (False, True) if device.type == "cuda" else (False,)
    cases = list(product(pinned_options, (False, True), sizes))
    return [
        time_copy_batch(
            copy, n, device, copies=copies_for(n, total_bytes, max_copies), pinned=p, non_blocking=nb, repeats=repeats
        )
        for p, nb, n in tqdm(cases, desc="copy batches", unit="batch")
    ]


# Chapter 10: to a GPU and back.
def copy_bandwidth(
    nbytes: int, direction: str, pinned: bool, device: torch.device | str | int | None = None, *, repeats: int = 5
) -> CopyTiming:
    """Time copies of `nbytes` between host memory (pinned or pageable) and a CUDA GPU, `direction` 'h2d' or 'd2h'.

    Copies from pinned memory are non_blocking (the usual pairing). Small copies are timed back to
    back, up to 100 in a batch (16 MiB at most), so that reading the clock is not most of the time."""
    dev = cuda_device_for(device, "copy_bandwidth (it copies between host memory and a GPU)")
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=pinned).fill_(1)
    on_device = torch.ones(nbytes, dtype=torch.uint8, device=dev)
    src, dst = (host, on_device) if direction == "h2d" else (on_device, host)
    copies = copies_for(nbytes, 16 * MIB, 100)

    def batch() -> None:
        for _ in range(copies):
            dst.copy_(src, non_blocking=pinned)

    fields = {"nbytes": nbytes, "copies": copies, "direction": direction, "pinned": pinned, "non_blocking": pinned}
    return _measure(batch, lambda _: None, dev, repeats, **fields)


# The link's limit.
def pcie_peak_gb_per_s(generation: int, width: int) -> float:
    """Theoretical data rate of a PCIe link in GB/s per direction: GT/s per lane × coding efficiency ÷ 8 × lanes
    (PCIe 3.0 x16: 15.75 GB/s). Real copies reach less: 62–79 % of it on published T4 hosts (PUBLISHED_T4)."""
    rate, efficiency = PCIE_GENERATIONS[generation]
    return rate * efficiency / 8 * width


def link_peak_gb_per_s(device: torch.device | str | int | None = None) -> tuple[float | None, str]:
    """(peak GB/s per direction, how it was found) for a GPU's PCIe link at the maximum generation and width
    NVML reports (an idle GPU drops to a slower link); (None, reason) when it cannot."""
    if not torch.cuda.is_available():
        return None, "no CUDA GPU here, so there is no link to read"
    try:
        dev = cuda_device_for(device, "link_peak_gb_per_s")
    except (TypeError, ValueError) as exc:
        return None, str(exc)
    found, why = nvml(lambda pynvml: _max_link(pynvml, dev))
    if found is None:
        return None, why
    generation, width, how, current = found
    if generation not in PCIE_GENERATIONS or width not in PCIE_WIDTHS:
        return None, (
            f"NVML reports PCIe gen {generation} x{width}, which this helper cannot price "
            f"(it knows gens {min(PCIE_GENERATIONS)}–{max(PCIE_GENERATIONS)}, widths x1–x32)"
        )
    peak = pcie_peak_gb_per_s(generation, width)
    return peak, f"PCIe {generation}.0 x{width} (maximum link of {dev}, read through NVML{how}{current})"


def _max_link(pynvml: Any, dev: torch.device) -> tuple[int, int, str, str]:
    """NVML's maximum PCIe generation and width of `dev`, how it was matched, and the link it runs at now."""
    try:  # by UUID, else (a UUID NVML does not know) by index
        handle, how = pynvml.nvmlDeviceGetHandleByUUID(f"GPU-{torch.cuda.get_device_properties(dev).uuid}"), ""
    except pynvml.NVMLError:
        handle, how = pynvml.nvmlDeviceGetHandleByIndex(dev.index), "; matched by index, check CUDA_VISIBLE_DEVICES"
    try:
        current = (
            f"; now running at gen {pynvml.nvmlDeviceGetCurrPcieLinkGeneration(handle)} "
            f"x{pynvml.nvmlDeviceGetCurrPcieLinkWidth(handle)}"
        )
    except pynvml.NVMLError:
        current = ""
    generation, width = pynvml.nvmlDeviceGetMaxPcieLinkGeneration(handle), pynvml.nvmlDeviceGetMaxPcieLinkWidth(handle)
    return int(generation), int(width), how, current


def ratio_lines(results: Sequence[CopyTiming], peak_gb_per_s: float, min_nbytes: int = 0) -> list[str]:
    """One line per result of at least `min_nbytes` per copy: measured GB/s and its fraction of the peak."""
    return [
        f"{r}  → {r.gb_per_s / peak_gb_per_s:.0%} of {peak_gb_per_s:.2f} GB/s"
        for r in results
        if r.nbytes >= min_nbytes
    ]


def plot_bandwidth(
    results: Sequence[CopyTiming],
    peak_gb_per_s: float | None = None,
    *,
    peak_label: str = "link peak",
    reference: Sequence[dict[str, Any]] = (),
    stamp: str | None = None,
    title: str = "copy bandwidth against bytes per copy",
) -> Any:
    """Bandwidth against bytes per copy, log-log: a line per route × memory kind × blocking (blocking dashed).

    `peak_gb_per_s` draws the link's limit; `reference` adds published points (dicts with `nbytes`,
    `gb_per_s` as (low, high), `what`). The stamp defaults to the results' own."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    fig, ax = new_figure(7.5, 4.2)
    colours = {("h2d", True): 0, ("h2d", False): 1, ("d2h", True): 2, ("d2h", False): 3}  # by (direction, pinned)
    parts = []
    by_line = sorted(results, key=lambda r: (r.route, r.kind, r.nbytes))
    for (route, kind), group in groupby(by_line, key=lambda r: (r.route, r.kind)):
        rs = list(group)
        ax.plot(
            [r.nbytes for r in rs],
            [r.gb_per_s for r in rs],
            color=colour(colours[(rs[0].direction, rs[0].pinned)]),
            linestyle="--" if rs[0].non_blocking is False else "-",
            marker="o" if rs[0].pinned else "s",
            markersize=4,
            label=f"{route}, {kind}",
        )
        best = max(rs, key=lambda r: r.gb_per_s)
        parts.append(
            f"{route}, {kind}: {number(rs[0].gb_per_s)} GB/s at {format_bytes(rs[0].nbytes)} per copy, "
            f"best {number(best.gb_per_s)} GB/s at {format_bytes(best.nbytes)}"
        )
    for i, point in enumerate(reference):
        low, high = point["gb_per_s"]
        xy = (point["nbytes"], (low + high) / 2)
        label = "published T4 (not measured here)" if i == 0 else None
        ax.errorbar(*xy, yerr=(high - low) / 2, fmt="^", color=OKABE_ITO["black"], label=label)
        right = point["nbytes"] >= 1e6  # labels from 1 MB up go left of their marker: inside the axes, apart
        side = {"xytext": (-6, -12), "ha": "right"} if right else {"xytext": (6, -12), "ha": "left"}
        ax.annotate(point["what"], xy, textcoords="offset points", fontsize=7, **side)
    if reference and not results:
        ax.set_xlim(512, 512 * MIB)
        ax.set_ylim(0.1, 2 * (peak_gb_per_s or 16))
    if peak_gb_per_s is not None:
        ax.axhline(peak_gb_per_s, color=GREY, linestyle=":", label=f"{peak_label}: {peak_gb_per_s:.2f} GB/s")
        parts.append(f"{peak_label} {number(peak_gb_per_s)} GB/s")
    if reference:
        published = ", ".join(f"{p['what']} {p['gb_per_s'][0]:g}–{p['gb_per_s'][1]:g} GB/s" for p in reference)
        parts.append(f"published T4 figures (not measured here): {published}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set(xlabel="bytes per copy (log scale)", ylabel="effective bandwidth (GB/s = 10⁹ bytes/s, log scale)")
    ax.set_title(title)
    ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))  # 0.5, 1, 2, 5, 10: a label even in a narrow span
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: format_bytes(x).replace(".0 ", " ") if x > 0 else ""))
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    add_stamp(fig, stamp or (results[0].stamp if results else "published figures, not measured here"))
    keep_labels_inside(ax)
    return set_alt(fig, "Copy bandwidth against bytes per copy, log-log: " + "; ".join(parts) + ".")
