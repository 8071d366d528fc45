"""Asynchronous execution and CUDA streams (chapter 06): timelines, a simulated GPU, and small GPU harness parts.

What the chapter's cells lean on:

* **Timelines.** `Span` is one piece of work on one lane (a stream, or the host);
  `spans_from_events` turns `torch.profiler` events into spans, one lane per CUDA stream, and
  `profile_spans` runs a function under the profiler (without the profiler's stderr chatter);
  `plot_timelines` draws measured and simulated timelines the same way.
* **A model of streams** (`simulate`, `simulate_copy_compute`, `split_work`): a tiny deterministic
  scheduler in which each stream runs its operations in order, an operation may wait for others
  and the host may block. Its results are a SIMULATION, and the plots say so.
* **A simulated GPU for the cells' own code** (`simulated_cuda`): inside the `with` block,
  `torch.cuda.Stream`, `torch.cuda.stream`, `current_stream`, `default_stream`, `Event`,
  `synchronize` and `_sleep` are stand-ins that queue work on the model instead of a GPU, and
  `sim.zeros()` makes a tensor whose `fill_` and `mean` are queued work too. The same code that
  races on a GPU races in the simulation, read-after-write and write-after-read alike, so a
  learner without a GPU sees both races and both fixes, labelled SIMULATION. The exercises check
  a learner's stream code with it. Real tensors can play GPU tensors too (`sim.on_gpu(t)` inside
  `with sim.tensors():`): a copy of one to the host with `non_blocking=True` is queued work whose
  values land only when the host has waited past it, as chapter 07's exercise needs.
* **GPU harness parts:** `gpu_cycles_per_ms` calibrates `torch.cuda._sleep` on a real GPU.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from unittest import mock

import torch
from torch.overrides import TorchFunctionMode

from .devices import a_function, synchronize, usable_device
from .plots import LIGHT_GREY, OKABE_ITO
from .profiling import quiet_stderr

# ----------------------------------------------------------------------------------------------
# Timelines: spans on lanes, from the model or from the profiler
# ----------------------------------------------------------------------------------------------

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
}


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


def makespan(spans: Iterable[Span]) -> float:
    """Milliseconds from the first start to the last end of `spans` (0 for none)."""
    spans = list(spans)
    if not spans:
        return 0.0
    return max(s.end_ms for s in spans) - min(s.start_ms for s in spans)


def kind_of(name: str) -> str:
    """Classify a profiler event name: a memory copy, or computation."""
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
    """Turn profiler events (`prof.events()`) into timeline spans on one lane per stream or thread.

    GPU events carry their CUDA stream in `device_resource_id` (the profiler's documented field
    for "stream ID"), so each stream gets a lane; CPU events get one lane per thread. With
    `top_level_only`, CPU operators called inside other operators are left out, so a lane shows
    what the program called. Times are shifted so that the first span starts at 0 ms. An event
    that ends before it starts (a malformed trace) is refused.
    """
    raw = []
    for e in events:
        name, kind_type = e.name, _device_type_name(e.device_type)
        start_us, end_us = e.time_range.start, e.time_range.end
        if kind_type != device_type:
            continue
        if device_type == "cpu":
            if top_level_only and getattr(e, "cpu_parent", None) is not None:
                continue
            lane = f"CPU thread {e.thread}"
        else:
            lane = f"GPU {getattr(e, 'device_index', 0)} stream {e.device_resource_id}"
        if end_us < start_us:
            raise ValueError(f"profiler event {name!r} ends ({end_us} µs) before it starts ({start_us} µs)")
        raw.append((lane, str(name), start_us / 1000, end_us / 1000))
    if not raw:
        return []
    origin = min(r[2] for r in raw)
    spans = [Span(lane, name, s - origin, t - origin, kind_of(name)) for lane, name, s, t in raw]
    return sorted(spans, key=lambda s: (s.lane, s.start_ms))


def profile_spans(fn: Callable[[], Any], device: torch.device | str) -> list[Span]:
    """Run `fn()` once under `torch.profiler` and return its timeline (GPU streams, or CPU threads).

    `fn` and `device` are checked before anything runs, since a learner hands in their own. The
    profiler's own start/stop lines on stderr are kept out of the notebook (`quiet_stderr`).
    """
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
    """Lanes top to bottom: the host first, then the default stream, then the rest as they appear."""
    lanes: list[str] = []
    for s in sorted(spans, key=lambda s: s.start_ms):
        if s.lane not in lanes:
            lanes.append(s.lane)

    def rank(lane: str) -> tuple[int, int]:
        first = 0 if lane == "host" else 1 if "default" in lane else 2
        return first, lanes.index(lane)

    return sorted(lanes, key=rank)


def plot_timelines(
    panels: Mapping[str, Sequence[Span]],
    *,
    title: str,
    simulated: bool,
    share_x: bool = True,
) -> Any:
    """Draw one timeline per panel (one lane per stream), stacked; return the figure.

    `simulated=True` prefixes the title with SIMULATION and writes it across every panel, so a
    model's picture is never mistaken for a measurement.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    from .plots import GREY, WHITE, set_alt, text_colour_on

    lane_counts = [max(1, len({s.lane for s in spans})) for spans in panels.values()]
    height = 1.0 + sum(0.55 * n + 0.7 for n in lane_counts)
    fig, axes = plt.subplots(
        len(panels),
        1,
        figsize=(8.0, height),
        layout="constrained",
        sharex=share_x,
        gridspec_kw={"height_ratios": lane_counts},
        squeeze=False,
    )
    kinds_seen: list[str] = []
    x_range = max((max((s.end_ms for s in spans), default=0.0) for spans in panels.values()), default=0.0) or 1.0
    for ax, (label, spans) in zip(axes[:, 0], panels.items(), strict=True):
        lanes = _lane_order(spans)
        for row, lane in enumerate(lanes):
            for s in (s for s in spans if s.lane == lane):
                colour = KIND_COLOURS.get(s.kind, KIND_COLOURS["other"])
                ax.broken_barh(
                    [(s.start_ms, max(s.ms, 1e-6))],
                    (row - 0.38, 0.76),
                    facecolors=colour,
                    edgecolors=WHITE,
                    linewidth=0.6,
                )
                if s.ms / x_range * 470 > 4.3 * len(s.name) + 6:  # name the span where the name fits (≈ points)
                    ax.text(
                        s.start_ms + s.ms / 2,
                        row,
                        s.name,
                        ha="center",
                        va="center",
                        fontsize=7,
                        color=text_colour_on(colour),
                        clip_on=True,
                    )
                if s.kind not in kinds_seen:
                    kinds_seen.append(s.kind)
        ax.set_yticks(range(len(lanes)), lanes)
        ax.set_ylim(len(lanes) - 0.5, -0.5)
        ax.set_title(f"{label}: {elapsed_ms(spans):.3g} ms", loc="left", fontsize=10)
        ax.grid(axis="x", alpha=0.3)
        if simulated:
            ax.text(
                0.5,
                0.5,
                "SIMULATION",
                transform=ax.transAxes,
                ha="center",
                va="center",
                fontsize=26,
                color=GREY,
                alpha=0.18,
                rotation=8,
            )
    axes[-1, 0].set_xlabel("time (ms)")
    handles = [Patch(color=KIND_COLOURS.get(k, KIND_COLOURS["other"]), label=k) for k in kinds_seen]
    if handles:
        axes[-1, 0].legend(
            handles=handles,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.3 * 3 / (lane_counts[-1] + 2)),
            fontsize=8,
            ncols=min(len(handles), 6),
            frameon=False,
        )
    fig.suptitle(("SIMULATION · " if simulated else "") + title, fontsize=11)
    fig.supylabel("lane (host, stream or thread)", fontsize=8)
    described = "; ".join(
        f"{label}: {elapsed_ms(spans):.3g} ms on {len({s.lane for s in spans})} lane(s)"
        for label, spans in panels.items()
    )
    what = "SIMULATED timeline (a model, not a measurement)" if simulated else "Timeline measured with torch.profiler"
    return set_alt(fig, f"{what}, {title}, time in ms from the first launch: {described}.")


def elapsed_ms(spans: Iterable[Span]) -> float:
    """Milliseconds from time 0 (the first launch) to the end of the last span: what a panel's title shows.

    For the model it equals `Schedule.total_ms`; measured spans start at 0, so it is their makespan.
    """
    return max((s.end_ms for s in spans), default=0.0)


# ----------------------------------------------------------------------------------------------
# The model: streams as in-order queues, waits as dependencies, a host that may block
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Op:
    """One operation the host queues on a stream, in the model.

    `after` lists earlier operations (by position) this one must wait for, as `wait_stream` or
    `wait_event` make a stream wait; `host_waits` makes the host block until this operation
    has finished, as `synchronize()` does (drawn on the host lane as `host_kind`).
    """

    stream: str
    name: str
    ms: float
    kind: str = "compute"
    after: tuple[int, ...] = ()
    host_waits: bool = False
    host_kind: str = "host blocked"


@dataclass(frozen=True)
class Schedule:
    """What the model did: the spans, and where the host's clock stood after queuing each operation."""

    spans: tuple[Span, ...]
    host_ms_after: tuple[float, ...]

    @property
    def total_ms(self) -> float:
        return max((s.end_ms for s in self.spans), default=0.0)


def simulate(ops: Sequence[Op], *, launch_ms: float = 0.0) -> Schedule:
    """Run the model: every stream executes its operations in the order queued.

    The host queues `ops` one after another, spending `launch_ms` on each. An operation starts
    when the host has queued it, its stream has finished the previous operation, and every
    operation in `after` has finished. Deterministic: the same input gives the same schedule.
    """
    host = 0.0
    stream_free: dict[str, float] = {}
    ends: list[float] = []
    spans: list[Span] = []
    host_after: list[float] = []
    for op in ops:
        host += launch_ms
        start = max([host, stream_free.get(op.stream, 0.0), *(ends[j] for j in op.after)])
        end = start + op.ms
        stream_free[op.stream] = end
        ends.append(end)
        spans.append(Span(op.stream, op.name, start, end, op.kind))
        if op.host_waits and end > host:
            spans.append(Span("host", f"waits for {op.name}", host, end, op.host_kind))
            host = end
        host_after.append(host)
    return Schedule(tuple(spans), tuple(host_after))


def copy_compute_ops(chunks: int, copy_ms: float, compute_ms: float, *, overlapped: bool) -> list[Op]:
    """The model's operations for "copy each chunk to the GPU, then compute on it".

    Serial: everything on the default stream. Overlapped: copies on a copy stream; each compute
    on a compute stream waits for its own chunk's copy only, so chunk i+1 is copied while
    chunk i is computed.
    """
    ops: list[Op] = []
    for i in range(chunks):
        if overlapped:
            ops.append(Op("copy stream", f"copy {i}", copy_ms, "copy"))
            ops.append(Op("compute stream", f"compute {i}", compute_ms, "compute", after=(len(ops) - 1,)))
        else:
            ops.append(Op("default stream", f"copy {i}", copy_ms, "copy"))
            ops.append(Op("default stream", f"compute {i}", compute_ms, "compute"))
    return ops


def simulate_copy_compute(
    chunks: int, copy_ms: float, compute_ms: float, *, overlapped: bool, launch_ms: float = 0.0
) -> Schedule:
    """SIMULATION of the copy/compute schedule: `chunks` chunks, each copied then computed on."""
    return simulate(copy_compute_ops(chunks, copy_ms, compute_ms, overlapped=overlapped), launch_ms=launch_ms)


@dataclass(frozen=True)
class OverlapModel:
    """Serial vs overlapped time of a fixed amount of data split into chunks (from the model)."""

    chunks: int
    serial: Schedule
    overlapped: Schedule

    @property
    def speedup(self) -> float:
        return self.serial.total_ms / self.overlapped.total_ms


def split_work(chunks: int, total_copy_ms: float, total_compute_ms: float, *, launch_ms: float = 0.0) -> OverlapModel:
    """Split fixed totals of copying and computing into `chunks` pieces; simulate both schedules."""
    copy_ms = total_copy_ms / chunks
    compute_ms = total_compute_ms / chunks
    return OverlapModel(
        chunks,
        simulate_copy_compute(chunks, copy_ms, compute_ms, overlapped=False, launch_ms=launch_ms),
        simulate_copy_compute(chunks, copy_ms, compute_ms, overlapped=True, launch_ms=launch_ms),
    )


# ----------------------------------------------------------------------------------------------
# A simulated GPU that runs the cells' own torch.cuda code (SIMULATION)
# ----------------------------------------------------------------------------------------------

#: The simulated GPU's clock: `torch.cuda._sleep(cycles)` keeps a simulated stream busy cycles / this ms.
SIMULATED_CYCLES_PER_MS = 1_000_000


def names_the_cpu(args: tuple, kwargs: dict) -> bool:
    """Whether the arguments of a `Tensor.to` call name the CPU as the destination."""
    for value in (*args, kwargs.get("device")):
        if isinstance(value, (str, torch.device)):
            try:
                return torch.device(value).type == "cpu"
            except RuntimeError:
                return False
    return False


def non_blocking(args: tuple, kwargs: dict) -> bool:
    """The `non_blocking` flag of a `to` / `copy_` / `cuda` call, given by keyword or as a positional bool."""
    if "non_blocking" in kwargs:
        return bool(kwargs["non_blocking"])
    return any(isinstance(a, bool) and a for a in args)


@dataclass
class _HostCopy:
    """A device→host copy queued with `non_blocking=True`: `values` land in `host` at `end_ms`."""

    host: torch.Tensor
    values: torch.Tensor
    end_ms: float
    landed: bool = False


class SimulatedStream:
    """A stream of the simulated GPU: work queued on it runs in order (SIMULATION)."""

    def __init__(self, sim: SimulatedCuda, name: str) -> None:
        self.sim, self.name = sim, name
        self.free_ms = 0.0  # when the work queued on this stream so far will be done

    def wait_stream(self, stream: SimulatedStream) -> None:
        """Work queued here from now on starts only after the work queued on `stream` so far."""
        self.sim._expect(stream, SimulatedStream, "wait_stream needs a stream")
        self.sim.host_ms += self.sim.launch_ms
        self.free_ms = max(self.free_ms, stream.free_ms, self.sim.host_ms)

    def wait_event(self, event: SimulatedEvent) -> None:
        """Work queued here from now on starts only after `event` has happened."""
        self.sim._expect(event, SimulatedEvent, "wait_event needs an event")
        self.sim.host_ms += self.sim.launch_ms
        if event.at_ms is not None:  # waiting for an event never recorded returns at once, as in CUDA
            self.free_ms = max(self.free_ms, event.at_ms, self.sim.host_ms)

    def record_event(self, event: SimulatedEvent | None = None) -> SimulatedEvent:
        event = SimulatedEvent(self.sim) if event is None else event
        event.record(self)
        return event

    def synchronize(self) -> None:
        """The host waits until this stream's queued work is done."""
        self.sim._host_waits(self.free_ms, f"{self.name}.synchronize()")

    def query(self) -> bool:
        """Whether this stream's queued work is done; each query of unfinished work passes host time."""
        return self.sim._poll(self.free_ms)

    def __enter__(self) -> SimulatedStream:
        self._previous = self.sim.current
        self.sim.current = self
        return self

    def __exit__(self, *exc: object) -> None:
        self.sim.current = self._previous

    def __repr__(self) -> str:
        return f"<SIMULATED stream {self.name!r}>"


class SimulatedEvent:
    """An event of the simulated GPU: a marker in a stream with the time the stream reached it."""

    def __init__(
        self, sim: SimulatedCuda, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ) -> None:
        self.sim, self.enable_timing = sim, bool(enable_timing)
        self.at_ms: float | None = None
        #: Device→host copies queued before the event was recorded.
        self.copies_before = 0

    def record(self, stream: SimulatedStream | None = None) -> None:
        stream = self.sim.current if stream is None else stream
        self.sim._expect(stream, SimulatedStream, "Event.record needs a stream (or nothing: the current one)")
        self.sim.host_ms += self.sim.launch_ms
        stream.free_ms = max(stream.free_ms, self.sim.host_ms)
        self.at_ms = stream.free_ms
        self.copies_before = len(self.sim.copies)
        self.sim.recorded.append(self)

    def wait(self, stream: SimulatedStream | None = None) -> None:
        (self.sim.current if stream is None else stream).wait_event(self)

    def synchronize(self) -> None:
        if self.at_ms is not None:
            self.sim._host_waits(self.at_ms, "event.synchronize()")

    def query(self) -> bool:
        """Whether the GPU has reached this event; each query of one not reached yet passes host time."""
        return self.at_ms is None or self.sim._poll(self.at_ms)

    def elapsed_time(self, end_event: SimulatedEvent) -> float:
        """Milliseconds between two recorded events; raises as CUDA does when they are not ready."""
        self.sim._expect(end_event, SimulatedEvent, "elapsed_time needs the end event")
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self.at_ms is None or end_event.at_ms is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        if max(self.at_ms, end_event.at_ms) > self.sim.host_ms:
            raise RuntimeError(
                "CUDA error: device not ready (SIMULATION: the GPU has not reached the event yet; "
                "call end_event.synchronize() first)"
            )
        return end_event.at_ms - self.at_ms

    def __repr__(self) -> str:
        return f"<SIMULATED event at {self.at_ms} ms>"


class SimulatedValue:
    """A result the simulated GPU computes (the mean of a simulated tensor), readable with `.item()`."""

    def __init__(self, sim: SimulatedCuda, read: _Read) -> None:
        self.sim, self.read = sim, read

    def item(self) -> float:
        """Copy the value to the host on the current stream, and wait for the copy (like `.item()`).

        A copy that runs before the value was written reads memory nobody wrote yet: nan here.
        """
        start, end = self.sim._queue(self.sim.current, "copy to host", 0.01, "read")
        self.sim._host_waits(end, ".item()")
        if self.read.end_ms > start:
            return math.nan
        return self.read.value()

    def __float__(self) -> float:
        return self.item()

    def record_stream(self, stream: SimulatedStream) -> None:
        self.sim._expect(stream, SimulatedStream, "record_stream needs a stream")

    def __repr__(self) -> str:
        return "<SIMULATED value: read it with .item()>"


@dataclass
class _Write:
    value: float
    start_ms: float
    end_ms: float


@dataclass
class _Read:
    tensor: SimulatedTensor
    stream: str
    start_ms: float
    end_ms: float

    def value(self) -> float:
        """What this read saw: the last write finished before it began (0 before any); nan if one overlapped it."""
        if any(w.start_ms < self.end_ms and w.end_ms > self.start_ms for w in self.tensor.writes):
            return math.nan  # a write ran while the read did: a torn, half-written value
        done = [w for w in self.tensor.writes if w.end_ms <= self.start_ms]
        return max(done, key=lambda w: w.end_ms).value if done else 0.0


class SimulatedTensor:
    """A tensor on the simulated GPU: `fill_`, `zero_`, `mean`, `sum` and `record_stream` are queued work."""

    def __init__(self, sim: SimulatedCuda, name: str, fill_ms: float, read_ms: float) -> None:
        self.sim, self.name = sim, name
        self.fill_ms, self.read_ms = fill_ms, read_ms
        self.writes: list[_Write] = []
        self.reads: list[_Read] = []
        self.recorded_on: list[str] = []

    def fill_(self, value: float) -> SimulatedTensor:
        value = float(value)
        start, end = self.sim._queue(self.sim.current, f"{self.name}.fill_({value:g})", self.fill_ms, "write")
        self.writes.append(_Write(value, start, end))
        return self

    def zero_(self) -> SimulatedTensor:
        return self.fill_(0.0)

    def mean(self) -> SimulatedValue:
        start, end = self.sim._queue(self.sim.current, f"{self.name}.mean()", self.read_ms, "read")
        read = _Read(self, self.sim.current.name, start, end)
        self.reads.append(read)
        return SimulatedValue(self.sim, read)

    sum = mean  # the same kind of read, for the model (its value is the fill value, not a true sum)

    def record_stream(self, stream: SimulatedStream) -> None:
        self.sim._expect(stream, SimulatedStream, "record_stream needs a stream")
        self.recorded_on.append(stream.name)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"the SIMULATED tensor {self.__dict__.get('name', '?')!r} has no {name!r}: "
            "it knows fill_, zero_, mean, sum and record_stream"
        )

    def __repr__(self) -> str:
        return f"<SIMULATED tensor {self.name!r}>"


class SimulatedCuda:
    """The state of one simulated GPU: its streams, the host's clock, and what ran when (SIMULATION).

    Every call queues work the way CUDA does: the host spends `launch_ms` per call and goes on;
    the work starts when its stream is free and what it waits for is done. Only `synchronize`,
    `Event.synchronize`, `.item()` and asking `query()` in a loop make the host wait.
    """

    #: What a host buffer holds until a copy into it has landed.
    NOT_LANDED = -1.0

    def __init__(self, *, launch_ms: float = 0.005, copy_ms: float = 1.0) -> None:
        self.launch_ms = float(launch_ms)
        self.copy_ms = float(copy_ms)  # one device→host copy of a tensor that plays a GPU tensor
        self.host_ms = 0.0
        self.spans: list[Span] = []
        self.host_waits: list[str] = []  # what made the host wait, in order
        self.default = SimulatedStream(self, "default stream")
        self.streams = [self.default]
        self.current = self.default
        self.recorded: list[SimulatedEvent] = []  # every event recorded, in order
        self.copies: list[_HostCopy] = []  # device→host copies queued with non_blocking=True
        self.blocking_reads = 0  # blocking copies and reads (.item(), .cpu()) of tensors playing GPU tensors
        self._gpu_tensors: list[torch.Tensor] = []  # compared by identity

    # -- the torch.cuda stand-ins ----------------------------------------------------------------

    def Stream(self, device: Any = None, priority: int = 0, **kwargs: Any) -> SimulatedStream:  # noqa: N802
        stream = SimulatedStream(self, "side stream" if len(self.streams) == 1 else f"stream {len(self.streams)}")
        self.streams.append(stream)
        return stream

    def Event(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> SimulatedEvent:  # noqa: N802
        return SimulatedEvent(self, enable_timing, blocking, interprocess)

    def stream(self, stream: SimulatedStream | None) -> contextlib.AbstractContextManager[Any]:
        if stream is None:
            return contextlib.nullcontext()
        self._expect(stream, SimulatedStream, "torch.cuda.stream(...) needs a stream")
        return stream

    def current_stream(self, device: Any = None) -> SimulatedStream:
        return self.current

    def default_stream(self, device: Any = None) -> SimulatedStream:
        return self.default

    def synchronize(self, device: Any = None) -> None:
        self._host_waits(max(s.free_ms for s in self.streams), "torch.cuda.synchronize()")

    def sleep(self, cycles: int) -> None:
        """`torch.cuda._sleep(cycles)`: keep the current stream busy for cycles / SIMULATED_CYCLES_PER_MS ms."""
        if isinstance(cycles, bool) or not isinstance(cycles, int) or cycles < 0:
            raise TypeError(f"_sleep takes a whole number of cycles, not {cycles!r}")
        self._queue(self.current, "_sleep", cycles / SIMULATED_CYCLES_PER_MS, "delay")

    # -- making simulated tensors and reading the result -----------------------------------------

    def zeros(self, name: str = "a", *, fill_ms: float = 0.1, read_ms: float = 0.1) -> SimulatedTensor:
        """A simulated tensor, all zeros; its `fill_` and `mean` take `fill_ms` and `read_ms` on the GPU."""
        return SimulatedTensor(self, name, float(fill_ms), float(read_ms))

    def on_gpu(self, tensor: torch.Tensor) -> torch.Tensor:
        """Let the real `tensor` play a tensor on this GPU (inside `with sim.tensors():`); returns it."""
        self._gpu_tensors.append(tensor)
        return tensor

    def is_on_gpu(self, value: Any) -> bool:
        """Whether `value` plays a tensor on this GPU (`on_gpu`, or computed from one)."""
        return isinstance(value, torch.Tensor) and any(value is t for t in self._gpu_tensors)

    def tensors(self) -> _GpuTensors:
        """`with sim.tensors():` makes the tensors given to `on_gpu` act as GPU tensors (copies to the host)."""
        return _GpuTensors(self)

    def _copy_to_host(self, values: torch.Tensor, host: torch.Tensor, non_blocking: bool) -> torch.Tensor:
        """A copy to `host`: queued (its values land later) with non_blocking, else the host waits for it."""
        if non_blocking:
            host.fill_(self.NOT_LANDED)
            _, end = self._queue(self.current, "copy to host", self.copy_ms, "copy")
            self.copies.append(_HostCopy(host, values, end))
        else:
            self._read_on_host("a blocking copy to the host")
            host.copy_(values)
        return host

    def _read_on_host(self, why: str) -> None:
        """A blocking read of GPU values: the host waits for the current stream's work first."""
        self.blocking_reads += 1
        self._host_waits(self.current.free_ms, why)

    def _land(self) -> None:
        """Copy in the values of every queued device→host copy the GPU has finished by now."""
        for copy in self.copies:
            if not copy.landed and copy.end_ms <= self.host_ms:
                with torch._C.DisableTorchFunction():
                    copy.host.copy_(copy.values)
                copy.landed = True

    @property
    def blocked_ms(self) -> float:
        """Milliseconds the host sat waiting for the simulated GPU so far."""
        return sum(s.ms for s in self.spans if s.lane == "host")

    # -- the scheduler ---------------------------------------------------------------------------

    def _queue(self, stream: SimulatedStream, name: str, ms: float, kind: str) -> tuple[float, float]:
        self._expect(stream, SimulatedStream, "work must be queued on a stream")
        self.host_ms += self.launch_ms
        start = max(self.host_ms, stream.free_ms)
        stream.free_ms = start + ms
        if ms > 0:
            self.spans.append(Span(stream.name, name, start, start + ms, kind))
        return start, start + ms

    #: Host milliseconds one `query()` of unfinished work stands for: asking in a loop holds the host
    #: as waiting does (Python does nothing else meanwhile), and the GPU gets there eventually.
    POLL_MS = 0.05

    def _poll(self, until_ms: float) -> bool:
        """One `query()`: True when the work is done by `until_ms`, else the host spends POLL_MS asking."""
        if until_ms <= self.host_ms:
            return True
        step_end = min(until_ms, self.host_ms + self.POLL_MS)
        last = self.spans[-1] if self.spans else None
        if last is not None and last.lane == "host" and last.name == "polls: query()" and last.end_ms == self.host_ms:
            self.spans[-1] = Span("host", last.name, last.start_ms, step_end, "host blocked")  # one span per loop
        else:
            self.host_waits.append("query() in a loop")
            self.spans.append(Span("host", "polls: query()", self.host_ms, step_end, "host blocked"))
        self.host_ms = step_end
        self._land()
        return False

    def _host_waits(self, until_ms: float, why: str) -> None:
        self.host_waits.append(why)
        if until_ms > self.host_ms:
            self.spans.append(Span("host", f"waits: {why}", self.host_ms, until_ms, "host blocked"))
            self.host_ms = until_ms
        self._land()

    def _expect(self, value: Any, kind: type, what: str) -> None:
        if not isinstance(value, kind) or getattr(value, "sim", None) is not self:
            raise TypeError(f"{what}; got {value!r} (in the SIMULATION, make it with torch.cuda inside the same block)")


class PretendAsyncDevice:
    """A labelled stand-in for an asynchronous device on the real clock, for checking timing code.

    `launch(seconds)` queues that much work and returns at once, as a kernel launch does; `sync()`
    sleeps until the queued work is done, as `torch.cuda.synchronize()` waits. A learner's timer
    that reads the clock without `sync()` sees the launches only, as on a GPU.
    """

    def __init__(self) -> None:
        self.busy_until = time.perf_counter()

    def launch(self, seconds: float) -> None:
        self.busy_until = max(self.busy_until, time.perf_counter()) + seconds

    def sync(self) -> None:
        while (left := self.busy_until - time.perf_counter()) > 0:
            time.sleep(left)

    @property
    def busy(self) -> bool:
        """Whether queued work is still running."""
        return self.busy_until > time.perf_counter()


#: Tensor calls that read a GPU tensor's values on the host, each waiting for the GPU.
_HOST_READS = frozenset({"item", "tolist", "__bool__", "__float__", "__int__", "__repr__"})


class _GpuTensors(TorchFunctionMode):
    """While active, the tensors given to `SimulatedCuda.on_gpu` (and results computed from them) act
    as GPU tensors: copies to the host go through the simulated stream, reads wait for it, `.numpy()`
    refuses. Pinning host memory is granted (host memory here is never really pinned, and need not be).
    """

    def __init__(self, sim: SimulatedCuda) -> None:
        super().__init__()
        self.sim = sim

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        sim, kwargs, name = self.sim, dict(kwargs or {}), getattr(func, "__name__", "")
        kwargs.pop("pin_memory", None)
        source = args[0] if args else None
        on_gpu = sim.is_on_gpu(source)
        if name == "pin_memory" and isinstance(source, torch.Tensor) and not on_gpu:
            return source.clone()
        if name == "is_pinned" and not on_gpu:
            return True
        if on_gpu and name in ("numpy", "__array__"):
            raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy it first.")
        if on_gpu and (name == "cpu" or (name == "to" and names_the_cpu(args[1:], kwargs))):
            values = func(*args, **kwargs)
            return sim._copy_to_host(values, torch.empty_like(values), non_blocking(args[1:], kwargs))
        if name == "copy_" and len(args) >= 2 and sim.is_on_gpu(args[1]) and not on_gpu:
            values = args[1].to(args[0].dtype).expand_as(args[0]).clone()
            return sim._copy_to_host(values, args[0], non_blocking(args[2:], kwargs))
        if on_gpu and name in _HOST_READS:
            sim._read_on_host(f"Tensor.{name}")
        result = func(*args, **kwargs)
        from_gpu = any(sim.is_on_gpu(a) for a in (*args, *kwargs.values()))
        if from_gpu and isinstance(result, torch.Tensor) and not names_the_cpu((), kwargs):
            sim.on_gpu(result)
        return result


@contextlib.contextmanager
def simulated_cuda(*, launch_ms: float = 0.005, copy_ms: float = 1.0) -> Iterator[SimulatedCuda]:
    """Run `torch.cuda` stream code on a SIMULATED GPU inside the block; yield the simulation.

    `torch.cuda.Stream`, `Event`, `stream`, `current_stream`, `default_stream`, `synchronize` and
    `_sleep`, and the device-generic `torch.Stream`, `torch.Event` and `torch.accelerator.synchronize`,
    are replaced by stand-ins for the duration of the block and restored afterwards, even when the
    block raises. Make the tensors the code works on with `sim.zeros()`, or let real tensors play GPU
    tensors (`sim.on_gpu`, inside `with sim.tensors():`).
    """
    sim = SimulatedCuda(launch_ms=launch_ms, copy_ms=copy_ms)
    stand_ins = {
        "Stream": sim.Stream,
        "Event": sim.Event,
        "stream": sim.stream,
        "current_stream": sim.current_stream,
        "default_stream": sim.default_stream,
        "synchronize": sim.synchronize,
        "_sleep": sim.sleep,
    }

    def generic_stream(device: Any = None, priority: int = 0, **kwargs: Any) -> SimulatedStream:
        return sim.Stream(priority=priority)

    def generic_event(device: Any = None, **kwargs: Any) -> SimulatedEvent:
        return sim.Event(**kwargs)

    with (
        mock.patch.multiple(torch.cuda, **stand_ins),
        mock.patch.multiple(torch, Stream=generic_stream, Event=generic_event),
        mock.patch.object(torch.accelerator, "synchronize", sim.synchronize),
    ):
        yield sim


# ----------------------------------------------------------------------------------------------
# GPU harness parts
# ----------------------------------------------------------------------------------------------


@lru_cache(maxsize=16)
def gpu_cycles_per_ms(device_index: int = 0) -> float:
    """GPU clock cycles per millisecond of `torch.cuda._sleep` on CUDA device `device_index`, measured.

    Measured with CUDA events after a warm-up sleep (which lets the GPU raise its clock first), so
    that `torch.cuda._sleep(int(ms * gpu_cycles_per_ms()))` keeps a stream busy for about `ms`.
    """
    probe = 20_000_000
    with torch.cuda.device(device_index):
        torch.cuda._sleep(probe)  # warm-up
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(probe)
        end.record()
        end.synchronize()
        return probe / max(start.elapsed_time(end), 1e-6)
