"""The roofline model for chapter 10: the pure model, its plots and its widget, and datasheet plots.

Units throughout: intensity in FLOP/byte, compute in TFLOP/s (10^12), bandwidth in GB/s (10^9)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from .devices import usable_device
from .gpu_specs import GPUS, GpuSpec, find_spec
from .plots import OKABE_ITO, WHITE, add_stamp, colour, keep_labels_inside, new_figure, set_alt


def attainable_tflops(intensity: float, peak_tflops: float, bandwidth_gbs: float) -> float:
    """The roofline: min(peak compute, intensity × memory bandwidth) in TFLOP/s, whichever ceiling is lower."""
    return min(peak_tflops, intensity * bandwidth_gbs / 1e3)


def ridge_point(peak_tflops: float, bandwidth_gbs: float) -> float:
    """The intensity (FLOP/byte) where the two roofs meet: below it memory binds, above it compute."""
    return peak_tflops * 1e3 / bandwidth_gbs


def bound_by(intensity: float, peak_tflops: float, bandwidth_gbs: float) -> str:
    """'memory' if an operation of this intensity is limited by bandwidth, else 'compute'."""
    return "memory" if intensity < ridge_point(peak_tflops, bandwidth_gbs) else "compute"


def explain(spec: GpuSpec, precision: str, intensity: float) -> str:
    """Which ceiling binds for an operation of `intensity` on a GPU from the table, and how fast it can go."""
    peak = spec.peak_tflops(precision)
    if peak is None:
        return f"{spec.short} has no {precision.upper()} tensor-core figure (no such hardware); pick another precision."
    ridge = ridge_point(peak, spec.bandwidth_gbs)
    reach = attainable_tflops(intensity, peak, spec.bandwidth_gbs)
    if bound_by(intensity, peak, spec.bandwidth_gbs) == "memory":
        why = (
            f"memory-bound: {intensity:.3g} FLOP/B × {spec.bandwidth_gbs:g} GB/s = {reach:.3g} TFLOP/s, "
            f"{reach / peak * 100:.2g}% of the {peak:g} TFLOP/s peak"
        )
    else:
        why = f"compute-bound: the {peak:g} TFLOP/s {precision.upper()} peak binds"
    return (
        f"{spec.short}, {precision.upper()}, intensity {intensity:.3g} FLOP/byte (ridge point {ridge:.3g}): "
        f"{why}. Attainable ≤ {reach:.3g} TFLOP/s. [datasheet figures: {spec.source}]"
    )


def spec_for_device(device: torch.device | str) -> GpuSpec | None:
    """The datasheet row for this CUDA device if it is in the table (None for CPUs and unknown GPUs)."""
    device = usable_device(device)
    return find_spec(torch.cuda.get_device_name(device)) if device.type == "cuda" else None


def plot_roofline(
    points: Sequence[Mapping[str, Any]],
    bandwidth_gbs: float,
    compute_tflops: Mapping[str, float],
    stamp: str,
    spec: GpuSpec | None = None,
    *,
    device: str = "cpu",
    roof_notes: Mapping[str, str] | None = None,
) -> Any:
    """Log-log roofline: measured roofs (solid), datasheet roofs (dashed, when `spec`), measured points.

    `points` are dicts with `what` (a label), `dtype`, `flops`, `bytes` and `seconds`;
    `compute_tflops` maps a dtype name to its measured compute roof; `roof_notes` adds a few words to
    a roof's legend entry (e.g. that a CPU's bfloat16 "roof" is its best emulated matmul, not a peak)."""
    import numpy as np

    notes = {dtype: f" ({note})" for dtype, note in (roof_notes or {}).items()}  # legend suffixes
    placed = [(p, p["flops"] / p["bytes"], p["flops"] / p["seconds"] / 1e12) for p in points]  # FLOP/byte, TFLOP/s
    fig, ax = new_figure(8, 5)
    lo = min([0.03] + [i / 2 for _, i, _ in placed])
    hi = max([1e3] + [i * 2 for _, i, _ in placed])
    x = np.logspace(math.log10(lo), math.log10(hi), 200)
    for i, (dtype, peak) in enumerate(compute_tflops.items()):
        y = [attainable_tflops(v, peak, bandwidth_gbs) for v in x]
        label = f"measured roof {dtype}: {peak:.3g} TFLOP/s, {bandwidth_gbs:.3g} GB/s{notes.get(dtype, '')}"
        roof_colour = _DTYPE_COLOURS.get(dtype, OKABE_ITO["black"])
        ax.plot(x, y, color=roof_colour, lw=max(1.0, 4 - 1.2 * i), alpha=0.85, label=label)
    if spec is not None:
        for label, peak, color in (
            ("FP32", spec.fp32_tflops, _DTYPE_COLOURS["float32"]),
            ("16-bit tensor", spec.tensor_tflops, _DTYPE_COLOURS["float16"]),
        ):
            if peak is not None:
                y = [attainable_tflops(v, peak, spec.bandwidth_gbs) for v in x]
                ax.plot(x, y, ls="--", color=color, lw=1.2, label=f"{spec.short} datasheet {label}: {peak:g} TFLOP/s")
    markers = {"matmul": "o", "vector": "s", "conv2d": "^"}
    for p, intensity, tflops in placed:
        marker = markers.get(str(p["what"]).split()[0], "x")
        face = _DTYPE_COLOURS.get(p["dtype"], OKABE_ITO["black"])
        ax.scatter(intensity, tflops, marker=marker, color=face, edgecolor=OKABE_ITO["black"], zorder=5, s=36)
        ax.annotate(str(p["what"]), (intensity, tflops), xytext=(4, -10), textcoords="offset points", fontsize=7)
    ax.set(xscale="log", yscale="log")
    ax.set(xlabel="arithmetic intensity (FLOP per byte of memory traffic)", ylabel="throughput (TFLOP/s)")
    where = "this CPU's own roofline (no GPU here)" if device == "cpu" else f"roofline of {device}"
    ax.set_title(f"Roofline measured on this machine: {where}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    add_stamp(fig, stamp + (f" · dashed: {spec.source}" if spec is not None else ""))
    keep_labels_inside(ax)
    roofs = ", ".join(f"{dtype} {peak:.3g} TFLOP/s{notes.get(dtype, '')}" for dtype, peak in compute_tflops.items())
    shown = "; ".join(f"{p['what']} ({p['dtype']}) {i:.3g} FLOP/byte at {t:.3g} TFLOP/s" for p, i, t in placed[:6])
    more = f" and {len(placed) - 6} more" if len(placed) > 6 else ""
    return set_alt(
        fig,
        f"Roofline, log-log, {where}: measured memory roof {bandwidth_gbs:.3g} GB/s, compute roofs {roofs}"
        + (f"; dashed, the {spec.short} datasheet" if spec is not None else "")
        + (f". Measured points: {shown}{more}." if placed else "."),
    )


#: Colours of the precisions on the roofline plots (Okabe–Ito, from helpers.plots).
_DTYPE_COLOURS = {
    "float32": OKABE_ITO["blue"],
    "float16": OKABE_ITO["orange"],
    "bfloat16": OKABE_ITO["bluish green"],
    "tf32": OKABE_ITO["reddish purple"],
}


def _fp32_and_tensor_bars(
    ax: Any, labels: Sequence[str], fp32: Sequence[float], tensor: Sequence[float], tensor_label: str
) -> None:
    """Two bars per GPU, labelled: FP32 (plain) and tensor-core (hatched, so they differ in more than colour)."""
    xs = range(len(fp32))
    ax.bar([x - 0.2 for x in xs], fp32, width=0.4, label="FP32", color=colour(0))
    ax.bar([x + 0.2 for x in xs], tensor, width=0.4, label=tensor_label, color=colour(1), hatch="//", edgecolor=WHITE)
    ax.set_xticks(list(xs), labels, fontsize=8)
    ax.legend(fontsize=8)


def plot_price_performance(specs: Sequence[GpuSpec] = GPUS) -> Any:
    """TFLOP/s per 1,000 US$ of launch price, for the rows that have a cited price."""
    priced = [s for s in specs if s.launch_price_usd]
    fig, ax = new_figure(7, 3.8)
    labels = [f"{s.short}\n${s.launch_price_usd:,.0f} ({s.year})" for s in priced]
    fp32 = [s.fp32_tflops / s.launch_price_usd * 1e3 for s in priced]
    tensor = [(s.tensor_tflops or 0) / s.launch_price_usd * 1e3 for s in priced]
    _fp32_and_tensor_bars(ax, labels, fp32, tensor, "FP16/BF16 tensor (dense, FP32 accumulate)")
    ax.set(ylabel="TFLOP/s per $1,000 (launch price)", xlabel="GPU (launch price, year)")
    ax.set_title("Price/performance at launch (prices move: check today's)")
    add_stamp(
        fig,
        "Figures from datasheets/whitepapers (helpers.gpu_specs).\nLaunch list prices (MSRP) from launch coverage; "
        "street and cloud prices move a lot, and NVIDIA publishes none for data-centre GPUs.",
    )
    bars = "; ".join(
        f"{s.short} (${s.launch_price_usd:,.0f}, {s.year}) FP32 {f:.3g}, tensor {t:.3g}"
        for s, f, t in zip(priced, fp32, tensor, strict=True)
    )
    return set_alt(fig, f"Bar chart of datasheet TFLOP/s per $1,000 of launch price, not measured: {bars}.")


def plot_performance_per_watt(specs: Sequence[GpuSpec] = GPUS) -> Any:
    """Datasheet GFLOP/s per watt of rated board power (log scale), oldest GPU first."""
    rows = sorted(specs, key=lambda s: (s.year, s.short))
    fig, ax = new_figure(11, 3.8)
    fp32 = [s.fp32_tflops / s.power_w * 1e3 for s in rows]
    tensor = [(s.tensor_tflops or 0) / s.power_w * 1e3 for s in rows]
    labels = [f"{s.short}\n{s.year}" for s in rows]
    _fp32_and_tensor_bars(ax, labels, fp32, tensor, "FP16/BF16 tensor (dense; the P100 has no tensor cores)")
    ax.set(ylabel="GFLOP/s per W (log scale)", xlabel="GPU (year of launch)", yscale="log")
    ax.set_title("Performance per watt from the datasheets (rated power, not measured)")
    add_stamp(fig, "Figures from datasheets/whitepapers named in helpers.gpu_specs (peak rates ÷ rated power).")
    bars = "; ".join(
        f"{s.short} ({s.year}, {s.power_w:g} W) FP32 {f:.3g}" + (f", tensor {t:.3g}" if t else "")
        for s, f, t in zip(rows, fp32, tensor, strict=True)
    )
    return set_alt(fig, f"Bar chart of datasheet GFLOP/s per watt of rated power, log scale, not measured: {bars}.")


def roofline_widget(specs: Sequence[GpuSpec] = GPUS) -> Any:
    """An `ipywidgets.interactive`: pick a GPU from the table, a precision and an intensity, and see which roof
    binds and the attainable speed."""
    import ipywidgets as widgets

    wide = {"description_width": "initial"}  # the whole description shows, never cut to "prec…"
    t4 = next((s for s in specs if s.short == "T4"), specs[0])
    gpu = widgets.Dropdown(options=[(s.short, s) for s in specs], value=t4, description="GPU", style=wide)
    precision = widgets.Dropdown(options=["fp32", "fp16", "bf16"], value="fp32", description="precision", style=wide)
    intensity = widgets.FloatLogSlider(
        value=10, base=10, min=-2, max=4, step=0.05, description="FLOP/byte", readout_format=".3g", style=wide
    )

    def show(gpu: GpuSpec, precision: str, intensity: float) -> None:
        print(explain(gpu, precision, intensity))

    return widgets.interactive(show, gpu=gpu, precision=precision, intensity=intensity)
