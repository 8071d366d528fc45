"""Host↔device copy bandwidth: measured, swept over sizes, and compared with the PCIe link's limit.

Public API (chapter 07 teaches it, chapter 10 imports it):

* `copy_bandwidth(nbytes, direction, pinned, device=None, *, repeats=5) -> BandwidthResult`
* `bandwidth_sweep(sizes, directions, pinned_options, device=None) -> list[BandwidthResult]`
* `pcie_peak_gb_per_s(generation, width)`: the theoretical peak of a link, per direction (pure)
* `link_peak_gb_per_s(device=None)`: (peak, description) for this GPU's link read through NVML,
  or (None, reason) where NVML cannot tell
* `plot_bandwidth(results, peak_gb_per_s=None, ...)`: log-log plot with the peak as a line

Every time is synchronised (`helpers.timing.wall_seconds`) and every result carries `stamp()`.
On a machine without a CUDA GPU `copy_bandwidth` raises `NeedsCudaError` (nothing to copy to);
`PUBLISHED_T4` holds published figures for Kaggle's T4 to show instead, with their sources.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from .memory import MIB, NeedsCudaError, cuda_device_for, format_bytes
from .timing import gigabytes_per_second, wall_seconds
from .validation import checks, whole_number

DIRECTIONS = ("h2d", "d2h")
DIRECTION_NAMES = {"h2d": "host→device", "d2h": "device→host"}

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
    """One measured copy size: bytes per copy, direction, host memory kind, seconds per copy, GB/s."""

    nbytes: int
    direction: str  # "h2d" or "d2h"
    pinned: bool
    seconds: float  # median seconds per copy
    gb_per_s: float  # 10^9 bytes per second
    device: str
    stamp: str

    def __str__(self) -> str:
        kind = "pinned" if self.pinned else "pageable"
        return (
            f"{DIRECTION_NAMES[self.direction]} {format_bytes(self.nbytes)} {kind}: "
            f"{self.gb_per_s:.2f} GB/s ({self.seconds * 1e6:.1f} µs per copy) on {self.device}"
        )


def _check_direction(direction: Any) -> str:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'h2d' (host→device) or 'd2h' (device→host), not {direction!r}")
    return direction


def _check_pinned(pinned: Any) -> bool:
    if not isinstance(pinned, bool):
        raise TypeError(f"pinned must be True or False, not {pinned!r}")
    return pinned


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
) -> BandwidthResult:
    """Measure copies of `nbytes` between host memory (pinned or pageable) and a CUDA device.

    Pinned copies use `non_blocking=True` (the only way they can be asynchronous); the device is
    synchronised before and after each timed batch, so the time is the copies' real duration.
    The result is the median over `repeats` timed batches, after one warm-up copy.
    """
    from .environment import stamp

    nbytes, direction, pinned = whole_number(nbytes, "nbytes"), _check_direction(direction), _check_pinned(pinned)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a whole number ≥ 1, not {repeats!r}")
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
            dst.copy_(src, non_blocking=pinned)

    dst.copy_(src, non_blocking=pinned)  # warm-up
    times = [wall_seconds(batch, dev) / inner for _ in range(repeats)]
    seconds = statistics.median(times)
    return BandwidthResult(nbytes, direction, pinned, seconds, gigabytes_per_second(nbytes, seconds), str(dev), stamp())


def bandwidth_sweep(
    sizes: Iterable[int],
    directions: Iterable[str],
    pinned_options: Iterable[bool],
    device: torch.device | str | int | None = None,
) -> list[BandwidthResult]:
    """`copy_bandwidth` for every size × direction × pinned option, with a tqdm progress bar."""
    from tqdm.auto import tqdm

    sizes = [whole_number(n, "nbytes") for n in sizes]
    directions = [_check_direction(d) for d in directions]
    pinned_options = [_check_pinned(p) for p in pinned_options]
    if not (sizes and directions and pinned_options):
        raise ValueError("bandwidth_sweep needs at least one size, one direction and one pinned option")
    cuda_device_for(device, "bandwidth_sweep (it copies between host memory and a GPU)")
    cases = [(n, d, p) for d in directions for p in pinned_options for n in sizes]
    return [copy_bandwidth(n, d, p, device) for n, d, p in tqdm(cases, desc="copies", unit="size")]


def check_pcie_link(generation: int, width: int) -> None:
    """Refuse a PCIe generation or link width that does not exist."""
    for name, value in (("generation", generation), ("width", width)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be a whole number, not {value!r}")
    if generation not in PCIE_GENERATIONS:
        raise ValueError(f"PCIe generation {generation} is unknown; known: {sorted(PCIE_GENERATIONS)}")
    if width not in PCIE_WIDTHS:
        raise ValueError(f"a PCIe link is x1, x2, x4, x8, x12, x16 or x32, not x{width}")


@checks(check_pcie_link)
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
    try:
        peak = pcie_peak_gb_per_s(generation, width)
    except (TypeError, ValueError) as exc:
        return None, f"NVML reports PCIe gen {generation} x{width}, which this helper cannot price: {exc}"
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
    if peak_gb_per_s <= 0:
        raise ValueError(f"the peak must be positive, not {peak_gb_per_s!r}")
    return [
        f"{r}  → {r.gb_per_s / peak_gb_per_s:.0%} of {peak_gb_per_s:.2f} GB/s"
        for r in results
        if r.nbytes >= min_nbytes
    ]


def plot_bandwidth(
    results: Sequence[BandwidthResult],
    peak_gb_per_s: float | None = None,
    *,
    peak_label: str = "link peak",
    reference: Sequence[dict[str, Any]] = (),
    stamp: str | None = None,
) -> Any:
    """Bandwidth against copy size on log-log axes, one line per direction × memory kind.

    `peak_gb_per_s` draws the link's theoretical limit as a horizontal line. `reference` adds
    published points (dicts with `nbytes`, `gb_per_s` as (low, high), `what`) drawn as markers and
    labelled as published. The stamp defaults to the results' own; pass one when there are none.
    """
    from .plots import add_stamp, new_figure

    if not results and not reference:
        raise ValueError("plot_bandwidth needs measured results or reference points")
    fig, ax = new_figure(7.5, 4.2)
    groups: dict[tuple[str, bool], list[BandwidthResult]] = {}
    for r in results:
        groups.setdefault((r.direction, r.pinned), []).append(r)
    styles = {("h2d", True): "C0-o", ("h2d", False): "C0--s", ("d2h", True): "C1-o", ("d2h", False): "C1--s"}
    for (direction, pinned), rs in sorted(groups.items()):
        rs = sorted(rs, key=lambda r: r.nbytes)
        ax.plot(
            [r.nbytes for r in rs],
            [r.gb_per_s for r in rs],
            styles[(direction, pinned)],
            markersize=4,
            label=f"{DIRECTION_NAMES[direction]}, {'pinned' if pinned else 'pageable'}",
        )
    for i, point in enumerate(p for p in reference if "nbytes" in p):
        low, high = point["gb_per_s"]
        ax.errorbar(
            [point["nbytes"]],
            [(low + high) / 2],
            yerr=[[(high - low) / 2], [(high - low) / 2]],
            fmt="k^",
            label="published (not measured here)" if i == 0 else None,
        )
        ax.annotate(
            point["what"], (point["nbytes"], (low + high) / 2), textcoords="offset points", xytext=(6, -12), fontsize=7
        )
    if reference and not results:
        ax.set_xlim(512, 512 * MIB)
        ax.set_ylim(0.1, 2 * (peak_gb_per_s or 16))
    if peak_gb_per_s is not None:
        ax.axhline(peak_gb_per_s, color="0.3", linestyle=":", label=f"{peak_label}: {peak_gb_per_s:.2f} GB/s")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bytes per copy")
    ax.set_ylabel("GB/s (10⁹ bytes/s)")
    ax.set_title("host↔device copy bandwidth vs copy size")
    ax.xaxis.set_major_formatter(_bytes_formatter())
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    add_stamp(fig, stamp or (results[0].stamp if results else "published figures, not measured here"))
    return fig


def _bytes_formatter() -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda x, _pos: format_bytes(x).replace(".0 ", " ") if x > 0 else "")


# --------------------------------------------------------------------------- the rest of chapter 07


def time_to_pin(nbytes: int, *, repeats: int = 3) -> tuple[float, float]:
    """Seconds to pin a fresh pageable tensor of `nbytes` with `pin_memory()`: (first time, median of later).

    The first pin of a size asks the driver to page-lock new memory; PyTorch's pinned-memory
    cache serves later pins of the same size from memory it already locked, so they cost mostly
    the copy into it. Needs an accelerator (CPU-only builds cannot pin).
    """
    import time

    whole_number(nbytes, "nbytes")
    if repeats < 1:
        raise ValueError(f"repeats must be ≥ 1, not {repeats!r}")
    cuda_device_for(None, "time_to_pin (pinning registers memory with the GPU driver)")
    pageable = torch.ones(nbytes, dtype=torch.uint8)
    times = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        pinned = pageable.pin_memory()  # a host-side call: it returns when the pinned copy is done
        times.append(time.perf_counter() - start)
        assert pinned.is_pinned()
        del pinned
    return times[0], statistics.median(times[1:])


def d2h_trap(
    device: torch.device | str | int | None = None, *, wait: bool, n: int = 1 << 22, delay_cycles: int = 200_000_000
) -> float:
    """The `non_blocking` device→host trap: the fraction of values right when the host reads at once.

    Fills a pinned host buffer with -1, keeps the GPU busy for `delay_cycles` clock cycles
    (`torch.cuda._sleep`, about 0.1 s on a T4) so that the copy is still queued, then copies a
    tensor of ones into the buffer with `non_blocking=True`. With `wait=False` the host reads the
    buffer straight away and sees the old -1s; with `wait=True` it first waits for the copy's event.
    """
    dev = cuda_device_for(device, "d2h_trap")
    on_gpu = torch.ones(n, device=dev)
    host = torch.full((n,), -1.0, pin_memory=True)
    torch.cuda.synchronize(dev)
    with torch.cuda.device(dev):
        torch.cuda._sleep(delay_cycles)  # keep the stream busy, so the copy below waits in the queue
        host.copy_(on_gpu, non_blocking=True)  # returns at once
        done = torch.cuda.Event()
        done.record()
    if wait:
        done.synchronize()  # the fix: wait for the copy (torch.cuda.synchronize() works too)
    right = (host == 1.0).float().mean().item()  # reads host memory now
    torch.cuda.synchronize(dev)
    return right


def loader_epoch_seconds(loader: Iterable[Any], device: torch.device | str, *, non_blocking: bool = False) -> float:
    """Wall seconds for one pass over `loader`, moving every batch to `device` and reducing it there.

    The device is synchronised at the end, so the time includes every copy.
    """
    device = torch.device(device)

    def epoch() -> None:
        total = torch.zeros((), device=device)
        for batch in loader:
            tensors = batch if isinstance(batch, (list, tuple)) else [batch]
            for t in tensors:
                total += t.to(device, non_blocking=non_blocking).float().sum()

    return wall_seconds(epoch, device)


__all__ = [
    "DIRECTIONS",
    "PUBLISHED_T4",
    "BandwidthResult",
    "NeedsCudaError",
    "bandwidth_sweep",
    "copy_bandwidth",
    "d2h_trap",
    "link_peak_gb_per_s",
    "loader_epoch_seconds",
    "pcie_peak_gb_per_s",
    "plot_bandwidth",
    "ratio_lines",
    "time_to_pin",
]
