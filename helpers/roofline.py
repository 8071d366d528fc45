"""The roofline model, measured on the machine at hand (chapter 10).

Three layers, so that the arithmetic can be tested anywhere and the measurements run everywhere:

* **Costs** (pure): how many floating-point operations an operation does and how many bytes it
  must move at least, hence its *arithmetic intensity* (FLOP per byte): `vector_add_cost`,
  `matmul_cost`, `conv2d_cost`.
* **The model** (pure): `attainable_tflops(intensity, peak, bandwidth) = min(peak, intensity ×
  bandwidth)`, `ridge_point`, `bound_by`, `explain`.
* **Measurements** (this machine): matmul throughput over sizes and dtypes, memory bandwidth
  from a large copy, and real operations placed by their intensity and measured speed. Every
  timing goes through `helpers.timing.time_call` (which synchronises the device) and carries
  `helpers.environment.stamp()`.

Units throughout: intensity in FLOP/byte, compute in TFLOP/s (10^12), bandwidth in GB/s (10^9).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from .gpu_specs import GPUS, GpuSpec, find_spec
from .validation import checks, positive_number, whole_number

# --------------------------------------------------------------------------------------------
# Costs: FLOPs and bytes of an operation (pure)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cost:
    """Floating-point operations and the minimum bytes an operation moves to and from memory."""

    what: str
    flops: float
    bytes: float

    @property
    def intensity(self) -> float:
        """Arithmetic intensity: FLOP per byte of memory traffic."""
        return self.flops / self.bytes


def element_size(dtype: torch.dtype | int) -> int:
    """Bytes per element of a dtype (or pass the byte count itself, e.g. 4)."""
    if isinstance(dtype, torch.dtype):
        return dtype.itemsize
    return whole_number(dtype, "bytes per element")


def vector_add_cost(n: int, dtype: torch.dtype | int = torch.float32) -> Cost:
    """`c = a + b` on n elements: n additions; reads a and b, writes c, so 3·n·bytes.

    Intensity = 1 / (3 · bytes per element): 1/12 FLOP/byte in float32, whatever n is.
    """
    n, b = whole_number(n, "n"), element_size(dtype)
    return Cost(f"vector add n={n:,}", flops=n, bytes=3 * n * b)


@checks(n=whole_number)
def matmul_cost(n: int, dtype: torch.dtype | int = torch.float32) -> Cost:
    """`C = A @ B` with n×n matrices: n² outputs × n multiply-adds = 2·n³ FLOPs.

    The least traffic reads A and B once and writes C once: 3·n²·bytes. Intensity = 2n / (3 ·
    bytes) — it grows with n, which is why big matmuls can be compute-bound and small ones are not.
    (Real kernels move more than this minimum when the matrices do not fit in cache.)
    """
    b = element_size(dtype)
    return Cost(f"matmul n={n}", flops=2 * n**3, bytes=3 * n * n * b)


def conv2d_cost(
    batch: int,
    in_channels: int,
    out_channels: int,
    height: int,
    width: int,
    kernel: int,
    dtype: torch.dtype | int = torch.float32,
) -> Cost:
    """A 2-D convolution, stride 1, 'same' padding (output height × width = input's), no bias.

    FLOPs: every output element is a dot product of in_channels·kernel² pairs, so
    2 · batch · out_channels · height · width · in_channels · kernel².
    Bytes (minimum): read the input (batch·in·h·w) and the weights (out·in·k²), write the output
    (batch·out·h·w), each element `bytes` long.
    """
    batch = whole_number(batch, "batch")
    cin, cout = whole_number(in_channels, "in_channels"), whole_number(out_channels, "out_channels")
    h, w, k = whole_number(height, "height"), whole_number(width, "width"), whole_number(kernel, "kernel")
    if k % 2 == 0:
        raise ValueError(f"'same' padding needs an odd kernel size here, not {k}")
    b = element_size(dtype)
    flops = 2 * batch * cout * h * w * cin * k * k
    moved = (batch * cin * h * w + cout * cin * k * k + batch * cout * h * w) * b
    return Cost(f"conv2d {cin}→{cout} k={k} {h}×{w} batch={batch}", flops=flops, bytes=moved)


# --------------------------------------------------------------------------------------------
# The roofline model (pure)
# --------------------------------------------------------------------------------------------


@checks(intensity=positive_number, peak_tflops=positive_number, bandwidth_gbs=positive_number)
def attainable_tflops(intensity: float, peak_tflops: float, bandwidth_gbs: float) -> float:
    """The roofline: min(peak compute, intensity × memory bandwidth), in TFLOP/s.

    An operation doing `intensity` FLOPs per byte cannot run faster than memory delivers bytes
    (intensity × bandwidth), nor faster than the arithmetic units (peak).
    """
    return min(peak_tflops, intensity * bandwidth_gbs / 1e3)


def ridge_point(peak_tflops: float, bandwidth_gbs: float) -> float:
    """The intensity (FLOP/byte) where the two roofs meet: below it memory binds, above it compute."""
    return positive_number(peak_tflops, "peak_tflops") * 1e3 / positive_number(bandwidth_gbs, "bandwidth_gbs")


def bound_by(intensity: float, peak_tflops: float, bandwidth_gbs: float) -> str:
    """'memory' if an operation of this intensity is limited by bandwidth, else 'compute'."""
    intensity = positive_number(intensity, "intensity (FLOP/byte)")
    return "memory" if intensity < ridge_point(peak_tflops, bandwidth_gbs) else "compute"


def explain(spec: GpuSpec, precision: str, intensity: float) -> str:
    """Which ceiling binds for an operation of `intensity` on a GPU from the table, and how fast it can go."""
    peak = spec.peak_tflops(precision)
    if peak is None:
        return f"{spec.short} has no {precision.upper()} tensor-core figure (no such hardware); pick another precision."
    ridge = ridge_point(peak, spec.bandwidth_gbs)
    reach = attainable_tflops(intensity, peak, spec.bandwidth_gbs)
    which = bound_by(intensity, peak, spec.bandwidth_gbs)
    if which == "memory":
        why = (
            f"memory-bound: {intensity:g} FLOP/B × {spec.bandwidth_gbs:g} GB/s = {reach:.3g} TFLOP/s, "
            f"{reach / peak:.0%} of the {peak:g} TFLOP/s peak"
        )
    else:
        why = f"compute-bound: the {peak:g} TFLOP/s {precision.upper()} peak binds"
    return (
        f"{spec.short}, {precision.upper()}, intensity {intensity:g} FLOP/byte (ridge point {ridge:.3g}): "
        f"{why}. Attainable ≤ {reach:.3g} TFLOP/s. [datasheet figures: {spec.source}]"
    )


# --------------------------------------------------------------------------------------------
# Measurements on this machine
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Measurement:
    """An operation timed on this machine: its cost, seconds per call, and the stamp of the machine."""

    what: str
    dtype: str
    flops: float
    bytes: float
    seconds: float
    device: str
    stamp: str

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes

    @property
    def tflops(self) -> float:
        return self.flops / self.seconds / 1e12

    @property
    def gbs(self) -> float:
        """Bytes moved (the minimum the cost counts) per second, in GB/s."""
        return self.bytes / self.seconds / 1e9

    def __str__(self) -> str:
        return (
            f"{self.what} [{self.dtype}]: {self.tflops * 1e3:.4g} GFLOP/s, {self.gbs:.4g} GB/s, "
            f"intensity {self.intensity:.3g} FLOP/B ({self.seconds * 1e3:.3g} ms per call; {self.stamp})"
        )


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _time(
    fn: Callable[[], Any], device: torch.device, cost: Cost, dtype: torch.dtype, min_run_time: float
) -> Measurement:
    from .timing import time_call

    timing = time_call(fn, device, min_run_time=min_run_time)
    return Measurement(cost.what, _dtype_name(dtype), cost.flops, cost.bytes, timing.seconds, str(device), timing.stamp)


def measure_matmul(n: int, dtype: torch.dtype, device: torch.device | str, *, min_run_time: float = 0.2) -> Measurement:
    """Time `a @ b` for n×n matrices of `dtype` on `device` (synchronised, median of repeats)."""
    device = torch.device(device)
    cost = matmul_cost(n, dtype)
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)
    out = torch.empty(n, n, device=device, dtype=dtype)
    return _time(lambda: torch.matmul(a, b, out=out), device, cost, dtype, min_run_time)


def measure_vector_add(
    n: int, dtype: torch.dtype, device: torch.device | str, *, min_run_time: float = 0.2
) -> Measurement:
    """Time `torch.add(a, b, out=c)` on n elements (1 FLOP and 3 elements of traffic each)."""
    device = torch.device(device)
    cost = vector_add_cost(n, dtype)
    a = torch.rand(n, device=device).to(dtype)
    b = torch.rand(n, device=device).to(dtype)
    c = torch.empty_like(a)
    return _time(lambda: torch.add(a, b, out=c), device, cost, dtype, min_run_time)


def measure_conv2d(
    batch: int,
    in_channels: int,
    out_channels: int,
    size: int,
    kernel: int,
    dtype: torch.dtype,
    device: torch.device | str,
    *,
    min_run_time: float = 0.2,
) -> Measurement:
    """Time a stride-1, 'same'-padded `torch.nn.functional.conv2d` on square images of side `size`."""
    device = torch.device(device)
    cost = conv2d_cost(batch, in_channels, out_channels, size, size, kernel, dtype)
    x = torch.randn(batch, in_channels, size, size, device=device).to(dtype)
    w = torch.randn(out_channels, in_channels, kernel, kernel, device=device).to(dtype)
    pad = kernel // 2
    return _time(lambda: torch.nn.functional.conv2d(x, w, padding=pad), device, cost, dtype, min_run_time)


def measure_copy_bandwidth(nbytes: int, device: torch.device | str, *, min_run_time: float = 0.2) -> Measurement:
    """Device-memory bandwidth from `dst.copy_(src)` of a large buffer: bytes read + bytes written.

    The buffer should be much larger than the caches (tens of MB on a CPU, a GPU's L2 is 4-50 MB),
    or the figure is the cache's bandwidth, not the memory's.
    """
    nbytes = whole_number(nbytes, "nbytes")
    device = torch.device(device)
    n = max(1, nbytes // 4)
    src = torch.rand(n, device=device)
    dst = torch.empty_like(src)
    cost = Cost(f"copy {n * 4 / 1e6:,.0f} MB", flops=0.0, bytes=2 * n * 4)
    from .timing import time_call

    timing = time_call(lambda: dst.copy_(src), device, min_run_time=min_run_time)
    return Measurement(cost.what, "float32", 0.0, cost.bytes, timing.seconds, str(device), timing.stamp)


@dataclass(frozen=True)
class DtypeChoice:
    """Which dtypes this device measures, and why (said in the notebook)."""

    dtypes: tuple[torch.dtype, ...]
    reason: str


def choose_dtypes(device: torch.device | str, *, probe_n: int = 128, min_run_time: float = 0.05) -> DtypeChoice:
    """FP32 everywhere; FP16 and BF16 on CUDA where the GPU has tensor cores for them; on a CPU,
    BF16 and FP16 only if a small probe matmul runs at least half as fast as FP32 (many CPUs
    emulate them far more slowly; some have BF16 instructions and run it faster)."""
    device = torch.device(device)
    if device.type == "cuda":
        major, _minor = torch.cuda.get_device_capability(device)
        chosen = [torch.float32]
        if major >= 7:  # Volta and later: FP16 tensor cores
            chosen.append(torch.float16)
        if major >= 8:  # Ampere and later: BF16 tensor cores (a T4, sm_75, only emulates BF16)
            chosen.append(torch.bfloat16)
        return DtypeChoice(
            tuple(chosen),
            f"CUDA device of compute capability {major}.x: "
            + ", ".join(_dtype_name(d) for d in chosen)
            + " have hardware support",
        )
    base = measure_matmul(probe_n, torch.float32, device, min_run_time=min_run_time)
    chosen, notes = [torch.float32], [f"float32 {base.tflops * 1e3:.3g} GFLOP/s"]
    for dtype in (torch.bfloat16, torch.float16):
        probe = measure_matmul(probe_n, dtype, device, min_run_time=min_run_time)
        ratio = probe.tflops / base.tflops
        keep = ratio >= 0.5
        notes.append(
            f"{_dtype_name(dtype)} {probe.tflops * 1e3:.3g} GFLOP/s ({ratio:.2g}× float32: "
            f"{'measured' if keep else 'skipped, too slow here'})"
        )
        if keep:
            chosen.append(dtype)
    return DtypeChoice(tuple(chosen), f"probe matmul n={probe_n} on {device}: " + "; ".join(notes))


def matmul_sweep(
    sizes: Sequence[int],
    dtypes: Iterable[torch.dtype],
    device: torch.device | str,
    *,
    min_run_time: float = 0.2,
    progress: bool = True,
) -> list[Measurement]:
    """Measure matmul throughput for every size and dtype (largest sizes reveal the compute roof)."""
    jobs = [(dtype, n) for dtype in dtypes for n in sizes]
    if progress:
        from tqdm.auto import tqdm

        jobs = tqdm(jobs, desc="matmul sizes × dtypes")
    return [measure_matmul(n, dtype, device, min_run_time=min_run_time) for dtype, n in jobs]


@dataclass(frozen=True)
class Ceilings:
    """This machine's measured roofs: best matmul TFLOP/s per dtype, and copy bandwidth."""

    device: str
    compute_tflops: dict[str, float]
    bandwidth_gbs: float
    stamp: str

    def ridge(self, dtype: str = "float32") -> float:
        return ridge_point(self.compute_tflops[dtype], self.bandwidth_gbs)


def measured_ceilings(matmuls: Sequence[Measurement], copy: Measurement) -> Ceilings:
    """The measured compute roof of each dtype is its best matmul; the memory roof is the copy bandwidth."""
    if not matmuls:
        raise ValueError("need at least one matmul measurement to find a compute ceiling")
    best: dict[str, float] = {}
    for m in matmuls:
        best[m.dtype] = max(best.get(m.dtype, 0.0), m.tflops)
    return Ceilings(copy.device, best, copy.gbs, copy.stamp)


def spec_for_device(device: torch.device | str) -> GpuSpec | None:
    """The datasheet row for this CUDA device if it is in the table (None for CPUs and unknown GPUs)."""
    device = torch.device(device)
    if device.type != "cuda":
        return None
    return find_spec(torch.cuda.get_device_name(device))


def host_device_bandwidth(nbytes: int, device: torch.device | str, direction: str = "h2d", pinned: bool = True) -> Any:
    """Host↔device copy bandwidth, measured by chapter 07's `helpers.bandwidth.copy_bandwidth`.

    Returns its `BandwidthResult` (with `.gb_per_s` and `.stamp`), or None when that module is
    not in this copy of the course.
    """
    try:
        from .bandwidth import copy_bandwidth
    except ImportError:
        return None
    return copy_bandwidth(nbytes, direction, pinned, device)


def host_device_link_peak(device: torch.device | str) -> tuple[float | None, str]:
    """(theoretical GB/s per direction, how it was found) of the GPU's PCIe link, via chapter 07's helper."""
    try:
        from .bandwidth import link_peak_gb_per_s
    except ImportError:
        return None, "helpers.bandwidth (chapter 07) is not in this copy of the course"
    return link_peak_gb_per_s(device)


# --------------------------------------------------------------------------------------------
# Plots and the widget
# --------------------------------------------------------------------------------------------


def plot_roofline(
    ceilings: Ceilings, operations: Sequence[Measurement], spec: GpuSpec | None = None, *, title: str | None = None
) -> Any:
    """Log-log roofline: measured roofs (solid), datasheet roofs (dashed, when `spec`), operations as points."""
    import numpy as np

    from .plots import add_stamp, new_figure

    fig, ax = new_figure(8, 5)
    lo = min([0.03] + [m.intensity / 2 for m in operations])
    hi = max([1e3] + [m.intensity * 2 for m in operations])
    x = np.logspace(math.log10(lo), math.log10(hi), 200)
    colors = {"float32": "tab:blue", "float16": "tab:orange", "bfloat16": "tab:green"}
    for i, (dtype, peak) in enumerate(ceilings.compute_tflops.items()):
        y = np.minimum(peak, x * ceilings.bandwidth_gbs / 1e3)
        ax.plot(
            x,
            y,
            color=colors.get(dtype, "k"),
            lw=4 - 1.2 * i,
            alpha=0.85,
            zorder=2 + i,
            label=f"measured roof {dtype}: {peak:.3g} TFLOP/s, {ceilings.bandwidth_gbs:.3g} GB/s",
        )
    if spec is not None:
        for label, peak, color in (
            ("FP32", spec.fp32_tflops, "tab:blue"),
            ("16-bit tensor", spec.tensor_tflops, "tab:orange"),
        ):
            if peak is None:
                continue
            y = np.minimum(peak, x * spec.bandwidth_gbs / 1e3)
            ax.plot(x, y, ls="--", color=color, lw=1.2, label=f"{spec.short} datasheet {label}: {peak:g} TFLOP/s")
    markers = {"matmul": "o", "vector": "s", "conv2d": "^"}
    for m in operations:
        kind = m.what.split()[0]
        ax.scatter(
            m.intensity,
            m.tflops,
            marker=markers.get(kind, "x"),
            color=colors.get(m.dtype, "k"),
            edgecolor="k",
            zorder=5,
            s=36,
        )
        label = m.what.split()[-1] if kind == "matmul" else kind
        ax.annotate(label, (m.intensity, m.tflops), xytext=(4, -10), textcoords="offset points", fontsize=7)
    for kind, marker in markers.items():
        ax.scatter([], [], marker=marker, color="0.7", edgecolor="k", label=f"measured: {kind}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per byte of memory traffic)")
    ax.set_ylabel("throughput (TFLOP/s)")
    where = "this CPU's own roofline (no GPU here)" if ceilings.device == "cpu" else f"roofline of {ceilings.device}"
    ax.set_title(title or f"Roofline measured on this machine: {where}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    note = f"{ceilings.stamp}"
    if spec is not None:
        note += f" · dashed: {spec.source}"
    add_stamp(fig, note)
    return fig


def roof_ratios(ceilings: Ceilings, operations: Sequence[Measurement]) -> list[tuple[Measurement, float, float]]:
    """For each operation: (measurement, roofline limit in TFLOP/s at its intensity, achieved fraction)."""
    rows = []
    for m in operations:
        peak = ceilings.compute_tflops.get(m.dtype, max(ceilings.compute_tflops.values()))
        limit = attainable_tflops(m.intensity, peak, ceilings.bandwidth_gbs)
        rows.append((m, limit, m.tflops / limit))
    return rows


_PRICE_CAVEAT = (
    "Launch list prices (MSRP) from launch coverage; street and cloud prices move a lot, "
    "and NVIDIA publishes none for data-centre GPUs."
)


def plot_price_performance(specs: Sequence[GpuSpec] = GPUS) -> Any:
    """TFLOP/s per 1,000 US$ of launch price, for the rows that have a cited price."""
    from .plots import add_stamp, new_figure

    priced = [s for s in specs if s.launch_price_usd]
    if not priced:
        raise ValueError("none of these GPUs has a cited launch price")
    fig, ax = new_figure(7, 3.8)
    labels = [f"{s.short}\n${s.launch_price_usd:,.0f} ({s.year})" for s in priced]
    xs = range(len(priced))
    fp32 = [s.fp32_tflops / s.launch_price_usd * 1e3 for s in priced]
    tensor = [(s.tensor_tflops or 0) / s.launch_price_usd * 1e3 for s in priced]
    ax.bar([x - 0.2 for x in xs], fp32, width=0.4, label="FP32")
    ax.bar([x + 0.2 for x in xs], tensor, width=0.4, label="FP16/BF16 tensor (dense, FP32 accumulate)")
    ax.set_xticks(list(xs), labels, fontsize=8)
    ax.set_ylabel("TFLOP/s per $1,000 of launch price")
    ax.set_title("Price/performance at launch (prices move: check today's)")
    ax.legend(fontsize=8)
    add_stamp(fig, "Figures from datasheets/whitepapers (helpers.gpu_specs).\n" + _PRICE_CAVEAT)
    return fig


def plot_performance_per_watt(specs: Sequence[GpuSpec] = GPUS) -> Any:
    """Datasheet TFLOP/s per watt of rated board power, oldest GPU first."""
    from .plots import add_stamp, new_figure

    rows = sorted(specs, key=lambda s: (s.year, s.short))
    fig, ax = new_figure(8, 3.8)
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [s.fp32_tflops / s.power_w * 1e3 for s in rows], width=0.4, label="FP32")
    ax.bar(
        [x + 0.2 for x in xs],
        [(s.tensor_tflops or 0) / s.power_w * 1e3 for s in rows],
        width=0.4,
        label="FP16/BF16 tensor (dense; the P100 has no tensor cores)",
    )
    ax.set_xticks(list(xs), [f"{s.short}\n{s.year}" for s in rows], fontsize=8)
    ax.set_ylabel("GFLOP/s per watt")
    ax.set_yscale("log")
    ax.set_title("Performance per watt from the datasheets (rated power, not measured)")
    ax.legend(fontsize=8)
    add_stamp(fig, "Figures from datasheets/whitepapers named in helpers.gpu_specs (peak rates ÷ rated power).")
    return fig


def roofline_widget(specs: Sequence[GpuSpec] = GPUS) -> Any:
    """Pick a GPU from the table, a precision and an intensity: see which roof binds and the attainable speed.

    Returns an `ipywidgets.interactive` (display it, or leave it as a cell's last expression).
    """
    import ipywidgets as widgets

    options = [(s.short, s) for s in specs]
    gpu = widgets.Dropdown(
        options=options,
        value=specs[[s.short for s in specs].index("T4")] if any(s.short == "T4" for s in specs) else specs[0],
        description="GPU",
    )
    precision = widgets.Dropdown(options=["fp32", "fp16", "bf16"], value="fp32", description="precision")
    intensity = widgets.FloatLogSlider(
        value=10, base=10, min=-2, max=4, step=0.05, description="FLOP/byte", readout_format=".3g"
    )

    def show(gpu: GpuSpec, precision: str, intensity: float) -> None:
        print(explain(gpu, precision, intensity))

    return widgets.interactive(show, gpu=gpu, precision=precision, intensity=intensity)
