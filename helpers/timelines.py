"""Timelines: what ran where and when, as spans on lanes, from `torch.profiler` events or a simulation.

`spans_from_events`, `profile_spans` (chapter 06) and `step_spans` (chapter 14) make spans from the profiler; the
simulated GPU (`helpers.standins.simulated_cuda`) records the same; `plot_timelines` draws both, labelling a model."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from .devices import a_function, synchronize, usable_device
from .plots import GREY, LIGHT_GREY, OKABE_ITO, WHITE, set_alt, text_colour_on
from .profiling import quiet_stderr

#: Colours of the kinds of work drawn on a timeline (helpers.plots: Okabe–Ito, colour-blind safe).
KIND_COLOURS = {
    "copy": OKABE_ITO["orange"],
    "compute": OKABE_ITO["blue"],
    "delay": LIGHT_GREY,
    "read": OKABE_ITO["bluish green"],
    "write": OKABE_ITO["sky blue"],
    "host blocked": OKABE_ITO["vermillion"],
    "host waits for results": OKABE_ITO["yellow"],
    "other": OKABE_ITO["reddish purple"],
    "communication": OKABE_ITO["vermillion"],
    "host phase": OKABE_ITO["sky blue"],
    "data": OKABE_ITO["bluish green"],
}

#: Where a trace shows the host waiting for the device: CUDA's synchronising calls, and the operator
#: that `.item()`, `int(t)` and `float(t)` run to read one value (on a CPU it waits for nothing).
HOST_WAITS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "aten::_local_scalar_dense")
#: A read your code made (`.item()` in a phase), not one inside torch (Adam's step count, the DataLoader's seed).
_yours = lambda e, phases: getattr(getattr(e.cpu_parent, "cpu_parent", None), "name", None) in phases
_in_phase = lambda e, ps: bool(p := e.cpu_parent) and (p.name in ps or p.is_user_annotation and _in_phase(p, ps))


@dataclass(frozen=True)
class Span:
    """One piece of work on one lane (a stream, a CPU thread, or the host), in milliseconds."""

    lane: str
    name: str
    start_ms: float
    end_ms: float
    kind: str = "compute"

    @property
    def ms(self) -> float:
        return self.end_ms - self.start_ms


def kind_of(name: str) -> str:
    """Classify a profiler event name: "copy" (a memory copy), "other" (a memset) or "compute"."""
    low = name.lower()
    if "memcpy" in low or low.startswith("aten::copy_") or "copy engine" in low:
        return "copy"
    if "memset" in low:
        return "other"
    return "compute"


def _device_type_name(value: Any) -> str:
    """`DeviceType.CUDA` → "cuda"; also accepts plain strings (for tests and hand-made events)."""
    return str(getattr(value, "name", value)).lower().removeprefix("devicetype.")


def spans_from_events(events: Iterable[Any], device_type: str = "cuda", *, top_level_only: bool = True) -> list[Span]:
    """Turn profiler events (`prof.events()`) into timeline spans on one lane per stream or thread, from 0 ms.

    With `top_level_only`, CPU operators called inside others are left out; an event that ends before it starts
    (a malformed trace) is refused."""
    raw = []
    for e in events:
        if _device_type_name(e.device_type) != device_type or device_type != "cpu" and e.is_user_annotation:
            continue
        if device_type == "cpu" and top_level_only and getattr(e, "cpu_parent", None) is not None:
            continue
        name, start_us, end_us = str(e.name), e.time_range.start, e.time_range.end
        if end_us < start_us:
            raise ValueError(f"profiler event {name!r} ends ({end_us} µs) before it starts ({start_us} µs)")
        lane = f"CPU thread {e.thread}" if device_type == "cpu" else _gpu_lane(e)
        raw.append((lane, name, start_us / 1000, end_us / 1000, kind_of(name)))
    return _from_zero(raw)


def _gpu_lane(event: Any) -> str:
    """The lane of a GPU event: its device and CUDA stream (`device_resource_id`, the profiler's stream ID)."""
    return f"GPU {getattr(event, 'device_index', 0)} stream {event.device_resource_id}"


def _from_zero(raw: Sequence[tuple[str, str, float, float, str]]) -> list[Span]:
    """Spans from (lane, name, start ms, end ms, kind), shifted so that the first starts at 0 ms, by lane and start."""
    origin = min((r[2] for r in raw), default=0.0)
    spans = [Span(lane, name, s - origin, t - origin, kind) for lane, name, s, t, kind in raw]
    return sorted(spans, key=lambda s: (s.lane, s.start_ms))


def step_spans(events: Iterable[Any], phases: Sequence[str]) -> list[Span]:
    """A training step's timeline from `torch.profiler` events (`prof.events()`), times from 0 ms.

    Lanes: "host", the ranges named in `phases` and the DataLoader's fetches ("next batch"); "host waits", CUDA's
    waits and the reads your code made; the device, one lane per CUDA stream, or without GPU events "CPU operators",
    those a phase called, if need be through ranges of their own (`Optimizer.step#...`), none inside another (the
    device's work on a CPU); not the ranges' GPU-side copies (`is_user_annotation`), labels over kernels, not work."""
    events, raw = list(events), []
    on_gpu = any(_device_type_name(e.device_type) == "cuda" for e in events)
    for e in events:
        name, start, end = str(e.name), e.time_range.start / 1000, e.time_range.end / 1000
        if on_gpu and _device_type_name(e.device_type) == "cuda" and not e.is_user_annotation:
            raw.append((_gpu_lane(e), name, start, end, kind_of(name)))
        elif _device_type_name(e.device_type) != "cpu":
            continue
        elif name in phases:
            raw.append(("host", name, start, end, "host phase"))
        elif name.startswith("enumerate(DataLoader)"):  # the DataLoader's profiler range around each fetch
            raw.append(("host", "next batch", start, end, "data"))
        elif name in HOST_WAITS and (name.startswith("cuda") or _yours(e, phases)):
            raw.append(("host waits", name, start, end, "host waits for results"))
        elif not on_gpu and not e.is_user_annotation and _in_phase(e, phases):
            raw.append(("CPU operators", name, start, end, kind_of(name)))
    return _from_zero(raw)


def profile_spans(fn: Callable[[], Any], device: torch.device | str) -> list[Span]:
    """Run the learner's `fn()` once under `torch.profiler` and return its timeline (GPU streams, or CPU
    threads), keeping the profiler's start/stop lines on stderr out of the notebook."""
    a_function(fn, "fn")
    device = usable_device(device)
    from torch.profiler import ProfilerActivity, profile

    on_gpu = device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    synchronize(device)
    with quiet_stderr(), profile(activities=activities) as prof:
        fn()
        synchronize(device)
    return spans_from_events(prof.events(), "cuda" if on_gpu else "cpu")


def _lane_order(spans: Sequence[Span]) -> list[str]:
    """Lanes top to bottom: the host's first, then the default stream, then the rest as they appear."""
    lanes = dict.fromkeys(s.lane for s in sorted(spans, key=lambda s: s.start_ms))  # in order of appearance
    return sorted(lanes, key=lambda lane: 0 if lane.startswith("host") else 1 if "default" in lane else 2)


def plot_timelines(panels: Mapping[str, Sequence[Span]], *, title: str, simulated: bool) -> Any:
    """Draw one timeline per panel (one lane per stream), stacked; return the figure. `simulated=True` writes
    SIMULATION in the title and across every panel: a model is not a measurement."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    lane_counts = [max(1, len({s.lane for s in spans})) for spans in panels.values()]
    height = 1.0 + sum(0.55 * n + 0.7 for n in lane_counts)
    fig, axes = plt.subplots(
        len(panels), figsize=(8.0, height), layout="constrained", sharex=True, squeeze=False, height_ratios=lane_counts
    )
    kinds_seen: dict[str, None] = {}  # the kinds drawn, in order (for the legend)
    x_range = max((elapsed_ms(spans) for spans in panels.values()), default=0.0) or 1.0
    for ax, (label, spans) in zip(axes[:, 0], panels.items(), strict=True):
        lanes = _lane_order(spans)
        for row, lane in enumerate(lanes):
            by_kind: dict[str, list[tuple[float, float]]] = {}
            for s in (s for s in spans if s.lane == lane):
                by_kind.setdefault(s.kind, []).append((s.start_ms, max(s.ms, 1e-6)))
                kinds_seen.setdefault(s.kind)
                if s.ms / x_range * 470 > 4.3 * len(s.name) + 6:  # name the span where the name fits (≈ points)
                    colour = text_colour_on(KIND_COLOURS.get(s.kind, KIND_COLOURS["other"]))
                    x = s.start_ms + s.ms / 2
                    ax.text(x, row, s.name, ha="center", va="center", fontsize=7, color=colour, clip_on=True)
            for kind, bars in by_kind.items():  # one collection per kind and lane: a trace has hundreds of spans
                colour = KIND_COLOURS.get(kind, KIND_COLOURS["other"])
                ax.broken_barh(bars, (row - 0.38, 0.76), facecolors=colour, edgecolors=WHITE, linewidth=0.6)
        ax.set_yticks(range(len(lanes)), lanes)
        ax.set_ylim(len(lanes) - 0.5, -0.5)
        ax.set_title(f"{label}: {elapsed_ms(spans):.3g} ms", loc="left", fontsize=10)
        ax.grid(axis="x", alpha=0.3)
        if simulated:
            faint = {"fontsize": 26, "color": GREY, "alpha": 0.18, "rotation": 8}
            ax.text(0.5, 0.5, "SIMULATION", transform=ax.transAxes, ha="center", va="center", **faint)
    axes[-1, 0].set_xlabel("time (ms)")
    handles = [Patch(color=KIND_COLOURS.get(k, KIND_COLOURS["other"]), label=k) for k in kinds_seen]
    if handles:  # under the last panel, clear of its lanes
        below = {"loc": "upper center", "bbox_to_anchor": (0.5, -0.3 * 3 / (lane_counts[-1] + 2)), "frameon": False}
        axes[-1, 0].legend(handles=handles, fontsize=8, ncols=min(len(handles), 6), **below)
    fig.suptitle(("SIMULATION · " if simulated else "") + title, fontsize=11)
    fig.supylabel("lane (host, stream or thread)", fontsize=8)
    described = "; ".join(
        f"{label}: {elapsed_ms(spans):.3g} ms on {len({s.lane for s in spans})} lane(s)"
        for label, spans in panels.items()
    )
    what = "SIMULATED timeline (a model, not a measurement)" if simulated else "Timeline measured with torch.profiler"
    return set_alt(fig, f"{what}, {title}, time in ms from the first launch: {described}.")


def elapsed_ms(spans: Iterable[Span]) -> float:
    """Milliseconds from 0 to the end of the last span (on the simulated GPU, 0 is where queuing began)."""
    return max((s.end_ms for s in spans), default=0.0)
