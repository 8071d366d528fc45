"""Host↔device copy bandwidth: a measuring harness, the PCIe link's limit, and published T4 figures.

* `time_copy_batch(copy, nbytes, device, *, copies, pinned, non_blocking)`: one batch of `copies`
  copies of `nbytes` each, made by a copy loop such as chapter 07's
  `copy_many(tensors, device, non_blocking)`, with ONE synchronise after the batch
  (and one before); the fastest of the repeats, per copy, as a `BandwidthResult`
* `two_by_two(copy, sizes, device)`: the same for every size × pageable/pinned × blocking/non_blocking
  (pinned only where the device is a GPU; on a CPU the copies are host→host, a labelled stand-in)
* `copy_bandwidth(nbytes, direction, pinned, device=None)`: one tensor copied in one `direction`
  between host memory and a CUDA GPU, the median over repeats (chapter 10 and the GPU tests use it)
* `pcie_peak_gb_per_s(generation, width)`: the theoretical peak of a link, per direction (pure)
* `link_peak_gb_per_s(device=None)`: (peak, description) for this GPU's link read through NVML,
  or (None, reason) where NVML cannot tell
* `plot_bandwidth(results, peak_gb_per_s=None, ...)`: log-log plot with the peak and published points

Every time is synchronised (`helpers.devices.synchronize`) and every result carries `stamp()`.
`PUBLISHED_T4` holds published figures for Kaggle's T4, with their sources (docs/sources.md §4).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from .devices import a_function, synchronize, usable_device
from .memory import MIB, NeedsCudaError, cuda_device_for, format_bytes
from .timing import gigabytes_per_second, wall_seconds
from .training import STAND_IN_COPY_THREADS, threads_on_cpu

DIRECTIONS = ("h2d", "d2h")
DIRECTION_NAMES = {"h2d": "host→device", "d2h": "device→host"}

#: A copy function as chapter 07 writes it: `copy(tensors, device, non_blocking)` returns the copies.
CopyMany = Callable[[list[torch.Tensor], torch.device, bool], Any]

#: Per PCIe generation: (transfer rate in GT/s per lane, fraction of the bits that carry data).
#: Gen 1–2 use 8b/10b coding, gen 3–5 128b/130b; gen 6–7 send 256-byte FLITs of which 242 carry
#: data (PAM4 signalling, no line code). Sources: PCI-SIG specifications as tabulated on
#: Wikipedia's "PCI Express" page (x16: 4, 8, 15.75, 31.5, 63, 121, 242 GB/s per direction).
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

#: Published host↔device figures for Kaggle's GPU (Tesla T4, PCIe 3.0 x16). Not measured here.
PUBLISHED_T4 = (
    {
        "what": "pinned host→device, large copies",
        "gb_per_s": (9.7, 12.4),
        "nbytes": 32_000_000,
        "source": "CUDA bandwidthTest results for T4 hosts (range across hosts; drawn at bandwidthTest's "
        "default 32 MB copy), docs/sources.md §4",
    },
    {
        "what": "host→device, 1 KB copies",
        "gb_per_s": (0.4, 0.4),
        "nbytes": 1_000,
        "source": "bandwidth-vs-size sweep ('shmoo') on a Colab T4, docs/sources.md §4",
    },
    {
        "what": "host→device, ≥ 1 MB copies",
        "gb_per_s": (12.0, 12.0),
        "nbytes": 1_000_000,
        "source": "bandwidth-vs-size sweep ('shmoo') on a Colab T4, docs/sources.md §4",
    },
)


@dataclass(frozen=True)
class BandwidthResult:
    """One measured copy size: bytes per copy, direction, host memory kind, seconds per copy, GB/s.

    `non_blocking` is how the copies were issued (None: not recorded) and `copies` how many were
    timed between two synchronisations.
    """

    nbytes: int
    direction: str  # "h2d" or "d2h"
    pinned: bool
    seconds: float  # seconds per copy: the median (`copy_bandwidth`) or the fastest (`time_copy_batch`) batch
    gb_per_s: float  # 10^9 bytes per second
    device: str
    stamp: str
    non_blocking: bool | None = None
    copies: int = 1

    @property
    def kind(self) -> str:
        """'pinned' or 'pageable', with ', non_blocking' or ', blocking' when recorded."""
        memory = "pinned" if self.pinned else "pageable"
        if self.non_blocking is None:
            return memory
        return f"{memory}, {'non_blocking' if self.non_blocking else 'blocking'}"

    @property
    def route(self) -> str:
        """'host→device', 'device→host', or 'host→host' for the CPU stand-in."""
        return "host→host" if self.device.startswith("cpu") else DIRECTION_NAMES[self.direction]

    def __str__(self) -> str:
        return (
            f"{self.route} {format_bytes(self.nbytes)} {self.kind}: "
            f"{self.gb_per_s:.2f} GB/s ({self.seconds * 1e6:.1f} µs per copy) on {self.device}"
        )


def _copies_per_timing(nbytes: int) -> int:
    """Small copies are timed in batches (up to 100 back to back), so that a clock read is not most of the time."""
    return max(1, min(100, (16 * 1024 * 1024) // nbytes))


def copy_bandwidth(
    nbytes: int,
    direction: str,
    pinned: bool,
    device: torch.device | str | int | None = None,
    *,
    repeats: int = 5,
    non_blocking: bool | None = None,
) -> BandwidthResult:
    """Measure copies of `nbytes` between host memory (pinned or pageable) and a CUDA device.

    `non_blocking` defaults to `pinned` (the usual pairing). The copies are timed in batches with
    the device synchronised before and after each batch, so the time is the copies' real
    duration. The result is the median over `repeats` timed batches, after one warm-up copy.
    """
    from .environment import stamp

    non_blocking = pinned if non_blocking is None else non_blocking
    dev = cuda_device_for(device, "copy_bandwidth (it copies between host memory and a GPU)")
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=pinned)
    on_device = torch.empty(nbytes, dtype=torch.uint8, device=dev)
    if direction == "h2d":
        host.fill_(1)
        src, dst = host, on_device
    else:
        on_device.fill_(1)
        src, dst = on_device, host
    inner = _copies_per_timing(nbytes)

    def batch() -> None:
        for _ in range(inner):
            dst.copy_(src, non_blocking=non_blocking)

    dst.copy_(src, non_blocking=non_blocking)  # warm-up
    times = [wall_seconds(batch, dev) / inner for _ in range(repeats)]
    seconds = statistics.median(times)
    return BandwidthResult(
        nbytes,
        direction,
        pinned,
        seconds,
        gigabytes_per_second(nbytes, seconds),
        str(dev),
        stamp(),
        non_blocking,
        inner,
    )


# --------------------------------------------------------------------------- timing the learner's copy loop


def copies_for(nbytes: int, total_bytes: int, max_copies: int) -> int:
    """How many tensors of `nbytes` a batch holds: enough for `total_bytes`, at least 1, at most `max_copies`."""
    return max(1, min(max_copies, total_bytes // nbytes))


def _check_copied(result: Any, sources: list[torch.Tensor], device: torch.device) -> None:
    """Refuse a copy function whose result is not one new tensor per source on `device`."""
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


def time_copy_batch(
    copy: CopyMany,
    nbytes: int,
    device: torch.device | str,
    *,
    copies: int,
    pinned: bool,
    non_blocking: bool,
    repeats: int = 5,
) -> BandwidthResult:
    """Time `copy(tensors, device, non_blocking)` on `copies` host tensors of `nbytes` bytes each.

    The device is synchronised once before and ONCE after each batch, never between its copies,
    so blocking and non_blocking copies are compared on equal terms: both run one after another on
    the stream, and only the blocking ones make the host wait after each. Pinned sources come from
    `torch.empty(..., pin_memory=True)`. Returns the fastest of `repeats` batches (the one least
    disturbed by the rest of the machine, as bandwidth tests report), per copy. `copy` and `device`
    are the learner's, so they are checked before anything is allocated or timed.
    """
    from .environment import stamp

    a_function(copy, "copy")
    device = usable_device(device)
    sources = [torch.empty(nbytes, dtype=torch.uint8, pin_memory=pinned).fill_(1) for _ in range(copies)]
    with threads_on_cpu(device, STAND_IN_COPY_THREADS):
        _check_copied(copy(sources, device, non_blocking), sources, device)  # warm-up, and a check
        times = []
        for _ in range(repeats):
            synchronize(device)
            start = time.perf_counter()
            arrived = copy(sources, device, non_blocking)
            synchronize(device)  # the one wait of this batch
            times.append(time.perf_counter() - start)
            del arrived
    seconds = min(times) / copies
    return BandwidthResult(
        nbytes,
        "h2d",
        pinned,
        seconds,
        gigabytes_per_second(nbytes, seconds),
        str(device),
        stamp(),
        non_blocking,
        copies,
    )


def two_by_two(
    copy: CopyMany,
    sizes: Iterable[int],
    device: torch.device | str,
    *,
    total_bytes: int = 64 * MIB,
    max_copies: int = 256,
    repeats: int = 5,
) -> list[BandwidthResult]:
    """`time_copy_batch` for every size × pageable/pinned × blocking/non_blocking, with a progress bar.

    Each batch holds `copies_for(size, total_bytes, max_copies)` tensors. Pinned sources are
    measured only when `device` is a CUDA GPU: a CPU cannot pin (and host→host copies gain nothing).
    `copy` and `device` are the learner's, so they are checked before the first batch.
    """
    from tqdm.auto import tqdm

    a_function(copy, "copy")
    device = usable_device(device)
    sizes = list(sizes)
    pinned_options = (False, True) if device.type == "cuda" else (False,)
    cases = [(n, p, nb) for p in pinned_options for nb in (False, True) for n in sizes]
    return [
        time_copy_batch(
            copy, n, device, copies=copies_for(n, total_bytes, max_copies), pinned=p, non_blocking=nb, repeats=repeats
        )
        for n, p, nb in tqdm(cases, desc="copy batches", unit="batch")
    ]


def pcie_peak_gb_per_s(generation: int, width: int) -> float:
    """Theoretical data rate of a PCIe link, in GB/s per direction (10^9 bytes/s).

    rate per lane (GT/s) × coding efficiency ÷ 8 bits × lanes: PCIe 3.0 x16 → 15.75 GB/s.
    Real copies reach less: packet headers and DMA overheads take another 10–25 %.
    """
    rate, efficiency = PCIE_GENERATIONS[generation]
    return rate * efficiency / 8 * width


def link_peak_gb_per_s(device: torch.device | str | int | None = None) -> tuple[float | None, str]:
    """(peak GB/s per direction, how it was found) for a GPU's PCIe link, read through NVML.

    Uses the link's maximum generation and width (a GPU at rest drops to a slower link to save
    power, so the *current* values read low until it is busy). Returns (None, reason) without
    a CUDA GPU, without the `nvidia-ml-py` package (module `pynvml`), or when NVML cannot answer.
    """
    if not torch.cuda.is_available():
        return None, "no CUDA GPU here, so there is no link to read"
    try:
        dev = cuda_device_for(device, "link_peak_gb_per_s")
    except (TypeError, ValueError) as exc:
        return None, str(exc)
    try:
        import pynvml  # from the nvidia-ml-py package
    except ImportError:
        return None, "the nvidia-ml-py package (module pynvml) is not installed: pip install nvidia-ml-py"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return None, f"NVML could not start ({exc})"
    try:
        handle, how = _nvml_handle(pynvml, dev)
        generation = int(pynvml.nvmlDeviceGetMaxPcieLinkGeneration(handle))
        width = int(pynvml.nvmlDeviceGetMaxPcieLinkWidth(handle))
        try:
            current = (
                f"; now running at gen {pynvml.nvmlDeviceGetCurrPcieLinkGeneration(handle)} "
                f"x{pynvml.nvmlDeviceGetCurrPcieLinkWidth(handle)}"
            )
        except pynvml.NVMLError:
            current = ""
    except pynvml.NVMLError as exc:
        return None, f"NVML could not read the PCIe link ({exc})"
    finally:
        pynvml.nvmlShutdown()
    if generation not in PCIE_GENERATIONS or width not in PCIE_WIDTHS:
        return None, (
            f"NVML reports PCIe gen {generation} x{width}, which this helper cannot price "
            f"(it knows gens {min(PCIE_GENERATIONS)}–{max(PCIE_GENERATIONS)}, widths x1–x32)"
        )
    peak = pcie_peak_gb_per_s(generation, width)
    return peak, f"PCIe {generation}.0 x{width} (maximum link of {dev}, read through NVML{how}{current})"


def _nvml_handle(pynvml: Any, dev: torch.device) -> tuple[Any, str]:
    """NVML's handle for a torch CUDA device: by UUID when torch knows it, else by index."""
    uuid = getattr(torch.cuda.get_device_properties(dev), "uuid", None)
    if uuid is not None:
        try:
            return pynvml.nvmlDeviceGetHandleByUUID(f"GPU-{uuid}"), ""
        except pynvml.NVMLError:
            pass
    return pynvml.nvmlDeviceGetHandleByIndex(dev.index), "; matched by index, check CUDA_VISIBLE_DEVICES"


def ratio_lines(results: Sequence[BandwidthResult], peak_gb_per_s: float, min_nbytes: int = 0) -> list[str]:
    """One line per result of at least `min_nbytes`: measured GB/s and its fraction of the peak."""
    return [
        f"{r}  → {r.gb_per_s / peak_gb_per_s:.0%} of {peak_gb_per_s:.2f} GB/s"
        for r in results
        if r.nbytes >= min_nbytes
    ]


#: Colour (an index into helpers.plots.PALETTE) of each line of `plot_bandwidth`, by (direction, pinned).
_COLOURS = {("h2d", True): 0, ("h2d", False): 1, ("d2h", True): 2, ("d2h", False): 3}


def plot_bandwidth(
    results: Sequence[BandwidthResult],
    peak_gb_per_s: float | None = None,
    *,
    peak_label: str = "link peak",
    reference: Sequence[dict[str, Any]] = (),
    stamp: str | None = None,
    title: str = "host↔device copy bandwidth vs copy size",
) -> Any:
    """Bandwidth against copy size on log-log axes, one line per direction × memory kind × blocking.

    `peak_gb_per_s` draws the link's theoretical limit as a horizontal line. `reference` adds
    published points (dicts with `nbytes`, `gb_per_s` as (low, high), `what`) drawn as markers and
    labelled as published. The stamp defaults to the results' own; pass one when there are none.
    """
    from .plots import GREY, OKABE_ITO, add_stamp, colour, keep_labels_inside, new_figure, set_alt

    fig, ax = new_figure(7.5, 4.2)
    groups: dict[tuple[str, bool, bool | None], list[BandwidthResult]] = {}
    for r in results:
        groups.setdefault((r.direction, r.pinned, r.non_blocking), []).append(r)
    for (direction, pinned, non_blocking), rs in sorted(groups.items(), key=lambda kv: str(kv[0])):
        rs = sorted(rs, key=lambda r: r.nbytes)
        ax.plot(
            [r.nbytes for r in rs],
            [r.gb_per_s for r in rs],
            color=colour(_COLOURS[(direction, pinned)]),
            linestyle="--" if non_blocking is False else "-",
            marker="o" if pinned else "s",
            markersize=4,
            label=f"{rs[0].route}, {rs[0].kind}",
        )
    for i, point in enumerate(p for p in reference if "nbytes" in p):
        low, high = point["gb_per_s"]
        ax.errorbar(
            [point["nbytes"]],
            [(low + high) / 2],
            yerr=[[(high - low) / 2], [(high - low) / 2]],
            fmt="^",
            color=OKABE_ITO["black"],
            label="published T4 (not measured here)" if i == 0 else None,
        )
        right = point["nbytes"] >= 1e6  # labels from 1 MB up go left of their marker: inside the axes, apart
        ax.annotate(
            point["what"],
            (point["nbytes"], (low + high) / 2),
            textcoords="offset points",
            xytext=(-6 if right else 6, -12),
            ha="right" if right else "left",
            fontsize=7,
        )
    if reference and not results:
        ax.set_xlim(512, 512 * MIB)
        ax.set_ylim(0.1, 2 * (peak_gb_per_s or 16))
    if peak_gb_per_s is not None:
        ax.axhline(peak_gb_per_s, color=GREY, linestyle=":", label=f"{peak_label}: {peak_gb_per_s:.2f} GB/s")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("copy size (bytes, log scale)")
    ax.set_ylabel("bandwidth (GB/s = 10⁹ bytes/s)")
    ax.set_title(title)
    ax.xaxis.set_major_formatter(_bytes_formatter())
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    add_stamp(fig, stamp or (results[0].stamp if results else "published figures, not measured here"))
    keep_labels_inside(ax)
    return set_alt(fig, _bandwidth_alt(groups, peak_gb_per_s, peak_label, reference))


def _bandwidth_alt(
    groups: dict[tuple[str, bool, bool | None], list[BandwidthResult]],
    peak_gb_per_s: float | None,
    peak_label: str,
    reference: Sequence[dict[str, Any]],
) -> str:
    """Alt text of `plot_bandwidth`: the best bandwidth of each line, with the copy size it was reached at."""
    parts = []
    for rs in groups.values():
        best = max(rs, key=lambda r: r.gb_per_s)
        parts.append(f"{best.route}, {best.kind} reaches {best.gb_per_s:.3g} GB/s at {format_bytes(best.nbytes)}")
    if peak_gb_per_s is not None:
        parts.append(f"{peak_label} {peak_gb_per_s:.3g} GB/s")
    published = [f"{p['what']} {p['gb_per_s'][0]:g}–{p['gb_per_s'][1]:g} GB/s" for p in reference if "nbytes" in p]
    if published:
        parts.append("published T4 figures (not measured here): " + ", ".join(published))
    return "Copy bandwidth against copy size, log-log: " + "; ".join(parts) + "."


def _bytes_formatter() -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda x, _pos: format_bytes(x).replace(".0 ", " ") if x > 0 else "")


__all__ = [
    "DIRECTIONS",
    "PUBLISHED_T4",
    "BandwidthResult",
    "NeedsCudaError",
    "copies_for",
    "copy_bandwidth",
    "link_peak_gb_per_s",
    "pcie_peak_gb_per_s",
    "plot_bandwidth",
    "ratio_lines",
    "time_copy_batch",
    "two_by_two",
]
