"""Asynchronous execution and CUDA streams (chapter 06): demos for a GPU, a model for a CPU.

Four parts:

* **Timing done wrong and right.** `time_three_ways` times one piece of work by stopping the
  clock as soon as the call returns (wrong on a GPU: it measures only the queuing), after
  `synchronize` (right), and with CUDA events (right, and measured on the GPU itself).
* **The race and its fix**, for real on a CUDA GPU: `stream_race` delays a producer on the
  default stream with `torch.cuda._sleep`, then reads its tensor on a side stream. Without a wait
  the reader sees stale values; `host_synchronize` (the sources' fix) is right but blocks Python;
  `stream_ordered` (the fix from the PyTorch docs "CUDA semantics") is right and leaves the
  host free.
* **Copy/compute overlap**, for real: `make_overlap_runs` builds a serial and a two-stream
  version of "copy chunks from pinned memory, compute on each", `measure_overlap` times both
  with CUDA events, and `profile_spans` turns `torch.profiler` events into a timeline.
* **A model of streams** for machines without a GPU: `simulate` runs a tiny deterministic
  scheduler (each stream runs its operations in order; an operation may wait for others; the
  host may block), which `simulate_copy_compute` and `simulate_race` use. Its results are a
  SIMULATION, and `plot_timelines` says so on the figure.

`plot_timelines` draws real and simulated timelines the same way: one lane per stream.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

import torch

from .devices import synchronize
from .timing import format_seconds, wall_seconds
from .validation import checks, one_of, optional, whole_number

# ----------------------------------------------------------------------------------------------
# Timelines: spans on lanes, from the model or from the profiler
# ----------------------------------------------------------------------------------------------

#: Colours of the kinds of work drawn on a timeline.
KIND_COLOURS = {
    "copy": "tab:orange",
    "compute": "tab:blue",
    "delay": "0.75",
    "read": "tab:green",
    "write": "tab:cyan",
    "host blocked": "tab:red",
    "host waits for results": "tab:olive",
    "other": "tab:purple",
}


@dataclass(frozen=True)
class Span:
    """One piece of work on one lane (a stream, a CPU thread, or the host), in milliseconds."""

    lane: str
    name: str
    start_ms: float
    end_ms: float
    kind: str = "compute"

    def __post_init__(self) -> None:
        if not isinstance(self.lane, str) or not self.lane:
            raise ValueError(f"a span needs a lane name, not {self.lane!r}")
        for value in (self.start_ms, self.end_ms):
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"span times must be finite numbers of milliseconds, not {value!r}")
        if self.end_ms < self.start_ms:
            raise ValueError(f"span {self.name!r} ends ({self.end_ms}) before it starts ({self.start_ms})")

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
    what the program called. Times are shifted so that the first span starts at 0 ms.
    """
    if device_type not in ("cuda", "cpu"):
        raise ValueError(f"device_type must be 'cuda' or 'cpu', not {device_type!r}")
    raw = []
    for e in events:
        try:
            name, kind_type = e.name, _device_type_name(e.device_type)
            start_us, end_us = e.time_range.start, e.time_range.end
        except AttributeError as exc:
            raise TypeError(
                f"expected profiler events with name, device_type and time_range, got {type(e).__name__}"
            ) from exc
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
    """Run `fn()` once under `torch.profiler` and return its timeline (GPU streams, or CPU threads)."""
    from torch.profiler import ProfilerActivity, profile

    device = torch.device(device)
    on_gpu = device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
    synchronize(device)
    with profile(activities=activities) as prof:
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

    if not panels:
        raise ValueError("plot_timelines needs at least one panel of spans")
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
                    edgecolors="white",
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
                        color="white" if s.kind in ("copy", "compute", "host blocked") else "black",
                        clip_on=True,
                    )
                if s.kind not in kinds_seen:
                    kinds_seen.append(s.kind)
        ax.set_yticks(range(len(lanes)), lanes)
        ax.set_ylim(len(lanes) - 0.5, -0.5)
        ax.set_title(f"{label}: {makespan(spans):.3g} ms", loc="left", fontsize=10)
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
                color="0.5",
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
    return fig


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
    _check_ms(launch_ms, "launch_ms", allow_zero=True)
    if not isinstance(ops, Sequence) or isinstance(ops, str):
        raise TypeError(f"ops must be a list of Op, not {type(ops).__name__}")
    host = 0.0
    stream_free: dict[str, float] = {}
    ends: list[float] = []
    spans: list[Span] = []
    host_after: list[float] = []
    for i, op in enumerate(ops):
        if not isinstance(op, Op):
            raise TypeError(f"ops[{i}] is a {type(op).__name__}, not an Op")
        if not op.stream:
            raise ValueError(f"ops[{i}] needs a stream name")
        _check_ms(op.ms, f"ops[{i}].ms", allow_zero=True)
        for j in op.after:
            if isinstance(j, bool) or not isinstance(j, int) or not 0 <= j < i:
                raise ValueError(f"ops[{i}] can only wait for an earlier operation (0..{i - 1}), not {j!r}")
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


def _check_ms(value: Any, what: str, *, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TypeError(f"{what} must be a number of milliseconds, not {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{what} must be {'zero or ' if allow_zero else ''}positive, not {value!r}")
    return float(value)


def copy_compute_ops(chunks: int, copy_ms: float, compute_ms: float, *, overlapped: bool) -> list[Op]:
    """The model's operations for "copy each chunk to the GPU, then compute on it".

    Serial: everything on the default stream. Overlapped: copies on a copy stream; each compute
    on a compute stream waits for its own chunk's copy only, so chunk i+1 is copied while
    chunk i is computed.
    """
    whole_number(chunks, "chunks")
    _check_ms(copy_ms, "copy_ms")
    _check_ms(compute_ms, "compute_ms")
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


def ideal_overlapped_ms(chunks: int, copy_ms: float, compute_ms: float) -> float:
    """Closed form of the two-stream makespan: first copy, then the slower lane sets the pace, then the last compute."""
    whole_number(chunks, "chunks")
    _check_ms(copy_ms, "copy_ms")
    _check_ms(compute_ms, "compute_ms")
    return copy_ms + (chunks - 1) * max(copy_ms, compute_ms) + compute_ms


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
    whole_number(chunks, "chunks")
    copy_ms = _check_ms(total_copy_ms, "total_copy_ms") / chunks
    compute_ms = _check_ms(total_compute_ms, "total_compute_ms") / chunks
    return OverlapModel(
        chunks,
        simulate_copy_compute(chunks, copy_ms, compute_ms, overlapped=False, launch_ms=launch_ms),
        simulate_copy_compute(chunks, copy_ms, compute_ms, overlapped=True, launch_ms=launch_ms),
    )


# ----------------------------------------------------------------------------------------------
# The race: a reader on a side stream, a delayed producer on the default stream
# ----------------------------------------------------------------------------------------------

RaceMode = Literal["no_wait", "host_synchronize", "stream_ordered"]
RACE_MODES: tuple[str, ...] = ("no_wait", "host_synchronize", "stream_ordered")


@dataclass(frozen=True)
class RaceResult:
    """What the reader saw in each round, what it should have seen, and how long the host was held.

    `host_ms` is the time Python spent queuing the rounds (blocked time included), `total_ms`
    the time until the results were back on the host.
    """

    mode: str
    seen: tuple[float, ...]
    expected: tuple[float, ...]
    host_ms: float
    total_ms: float
    simulated: bool
    spans: tuple[Span, ...] = field(default=(), repr=False)

    @property
    def stale(self) -> int:
        """How many rounds read a value other than the one just produced."""
        return sum(1 for s, e in zip(self.seen, self.expected, strict=True) if s != e)

    @property
    def correct(self) -> bool:
        return self.stale == 0

    def __str__(self) -> str:
        where = "SIMULATION" if self.simulated else "measured"
        verdict = "right" if self.correct else f"{self.stale} of {len(self.seen)} rounds STALE"
        seen = ", ".join(f"{v:g}" for v in self.seen)
        expected = ", ".join(f"{v:g}" for v in self.expected)
        return (
            f"{self.mode:<17} saw [{seen}] expected [{expected}] → {verdict}; "
            f"host busy {self.host_ms:.3g} ms, all done after {self.total_ms:.3g} ms ({where})"
        )


def _check_mode(mode: Any) -> str:
    if mode not in RACE_MODES:
        raise ValueError(f"mode must be one of {', '.join(RACE_MODES)}, not {mode!r}")
    return mode


def simulate_race(
    mode: str,
    *,
    rounds: int = 3,
    delay_ms: float = 20.0,
    fill_ms: float = 2.0,
    sum_ms: float = 2.0,
    launch_ms: float = 0.05,
) -> RaceResult:
    """SIMULATION of `stream_race`: what the reader sees in each mode, and how long the host waits.

    Each round the default stream is busy for `delay_ms`, then fills the tensor with the round's
    number; the side stream sums it. A sum reads the value of the last fill that had finished
    when the sum started (0 before any), so a sum that runs early reads a stale value.
    """
    _check_mode(mode)
    whole_number(rounds, "rounds")
    ops: list[Op] = []
    fills: list[int] = []
    sums: list[int] = []
    for r in range(rounds):
        ops.append(Op("default stream", f"delay {r}", _check_ms(delay_ms, "delay_ms"), "delay"))
        ops.append(
            Op(
                "default stream",
                f"fill with {r + 1}",
                _check_ms(fill_ms, "fill_ms"),
                "write",
                host_waits=mode == "host_synchronize",
            )
        )
        fills.append(len(ops) - 1)
        after = (fills[-1],) if mode == "stream_ordered" else ()
        ops.append(Op("side stream", f"sum {r}", _check_ms(sum_ms, "sum_ms"), "read", after=after))
        sums.append(len(ops) - 1)
    ops.append(
        Op(
            "default stream",
            "results",
            0.0,
            "read",
            after=tuple(sums),
            host_waits=True,
            host_kind="host waits for results",
        )
    )
    schedule = simulate(ops, launch_ms=launch_ms)
    device_spans = [s for s in schedule.spans if s.lane != "host"]
    seen = []
    for i in sums:
        started = device_spans[i].start_ms
        done = [r + 1 for r, f in enumerate(fills) if device_spans[f].end_ms <= started]
        seen.append(float(done[-1]) if done else 0.0)
    return RaceResult(
        mode=mode,
        seen=tuple(seen),
        expected=tuple(float(r + 1) for r in range(rounds)),
        host_ms=schedule.host_ms_after[sums[-1]],
        total_ms=schedule.total_ms,
        simulated=True,
        spans=schedule.spans,
    )


def cuda_device(device: torch.device | str | int | None) -> torch.device:
    """The CUDA device to use; a clear error when the argument is not one (or there is no GPU)."""
    if device is None:
        device = torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else "cuda"
    device = torch.device(device) if not isinstance(device, int) else torch.device("cuda", device)
    if device.type != "cuda":
        raise ValueError(f"this demo runs on a CUDA GPU, not on {device}; on a CPU use the simulate_* functions")
    if not torch.cuda.is_available():
        raise RuntimeError("this demo needs a CUDA GPU and this torch sees none; use the simulate_* functions")
    if device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return device


def event_ms(fn: Callable[[], Any], device: torch.device | str | int | None = None) -> float:
    """Milliseconds `fn()` takes on the GPU, measured with two CUDA events on the current stream."""
    device = cuda_device(device)
    with torch.cuda.device(device):
        stream = torch.cuda.current_stream(device)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record(stream)
        fn()
        end.record(stream)
        end.synchronize()  # wait for the end event only, not the whole device
        return start.elapsed_time(end)


@lru_cache(maxsize=16)
def _cycles_per_ms(device_index: int) -> float:
    device = torch.device("cuda", device_index)
    probe = 2_000_000
    event_ms(lambda: torch.cuda._sleep(10 * probe), device)  # warm-up: lets the GPU raise its clock first
    ms = event_ms(lambda: torch.cuda._sleep(10 * probe), device)
    return 10 * probe / max(ms, 1e-6)


def sleep_cycles(ms: float, device: torch.device | str | int | None = None) -> int:
    """How many GPU clock cycles `torch.cuda._sleep` must spin to keep a stream busy for about `ms`."""
    _check_ms(ms, "ms")
    device = cuda_device(device)
    return max(1, int(ms * _cycles_per_ms(device.index)))


@checks(mode=one_of(*RACE_MODES), rounds=whole_number, elements=whole_number)
def stream_race(
    device: torch.device | str | int | None,
    mode: str,
    *,
    rounds: int = 3,
    elements: int = 1 << 16,
    delay_ms: float = 50.0,
) -> RaceResult:
    """The sources' stream race made reproducible on a CUDA GPU, in one of three modes.

    Each round the default stream first spins for `delay_ms` (`torch.cuda._sleep`), then fills
    `a` with the round's number; a side stream then computes `a.mean()`.

    * `no_wait`: the side stream does not wait, so it averages `a` before the fill: stale values.
    * `host_synchronize`: the sources' fix; Python blocks until the default stream is done, every
      round. Right values, but the host sits idle for the whole delay.
    * `stream_ordered`: `side.wait_stream(current)` makes the *side stream* wait, not Python;
      `a.record_stream(side)` tells the caching allocator that `a` is used on `side`; and
      `current.wait_stream(side)` orders the read of the results after the side stream's work.
    """
    device = cuda_device(device)
    with torch.cuda.device(device):
        cycles = sleep_cycles(delay_ms, device)
        current = torch.cuda.current_stream(device)
        side = torch.cuda.Stream(device)
        a = torch.zeros(elements, device=device)  # made on the current (default) stream
        means = []
        torch.cuda.synchronize(device)  # start from an idle GPU: `a` is all zeros now
        start = time.perf_counter()
        for r in range(rounds):
            torch.cuda._sleep(cycles)  # the producer is slow ...
            a.fill_(r + 1)  # ... and only then writes this round's value
            if mode == "host_synchronize":
                current.synchronize()  # Python waits here until the default stream is done
            elif mode == "stream_ordered":
                side.wait_stream(current)  # the side stream waits; Python goes on at once
            with torch.cuda.stream(side):
                means.append(a.mean())  # the consumer, on the side stream
        if mode == "stream_ordered":
            a.record_stream(side)  # `a` was made on `current` but used on `side`
            current.wait_stream(side)  # order the read below after the side stream's work
        elif mode == "host_synchronize":
            side.synchronize()  # the sources' way: block Python again
        else:
            torch.cuda.synchronize(device)  # only so that we report what the reader really computed
        host_ms = (time.perf_counter() - start) * 1000
        del a  # safe in every mode here; without record_stream it would not be in general
        seen = torch.stack(means).tolist()  # runs on `current`, then copies to the host
        total_ms = (time.perf_counter() - start) * 1000
    return RaceResult(
        mode=mode,
        seen=tuple(float(v) for v in seen),
        expected=tuple(float(r + 1) for r in range(rounds)),
        host_ms=host_ms,
        total_ms=total_ms,
        simulated=False,
    )


# ----------------------------------------------------------------------------------------------
# Copy/compute overlap on a real GPU
# ----------------------------------------------------------------------------------------------


@dataclass
class OverlapRuns:
    """Two ways to run the same work on a GPU: `serial()` on one stream, `overlapped()` on two."""

    device: torch.device
    chunks: int
    chunk_bytes: int
    compute_repeats: int
    copy_ms: float  # one chunk's host→device copy, measured with CUDA events
    compute_ms: float  # one chunk's computation, measured with CUDA events
    serial: Callable[[], None]
    overlapped: Callable[[], None]


@checks(chunks=whole_number, chunk_elements=whole_number, compute_repeats=optional(whole_number))
def make_overlap_runs(
    device: torch.device | str | int | None = None,
    *,
    chunks: int = 8,
    chunk_elements: int = 4 * 1024 * 1024,
    compute_repeats: int | None = None,
) -> OverlapRuns:
    """Prepare pinned host chunks and the two schedules; balance compute to the copy time.

    The computation is `compute_repeats` products `x @ w` with a 256×256 matrix; when it is
    None, it is chosen so that computing one chunk takes about as long as copying it, which is
    where overlapping two streams can save the most (up to 2× for many chunks).
    """
    device = cuda_device(device)
    width = 256
    rows = max(1, chunk_elements // width)
    with torch.cuda.device(device):
        host = [torch.randn(rows, width).pin_memory() for _ in range(chunks)]  # page-locked: async copies
        on_gpu = [torch.empty(rows, width, device=device) for _ in range(chunks)]
        w = torch.randn(width, width, device=device) / width**0.5
        current = torch.cuda.current_stream(device)
        copy_stream, compute_stream = torch.cuda.Stream(device), torch.cuda.Stream(device)

        def compute(x: torch.Tensor, repeats: int) -> torch.Tensor:
            for _ in range(repeats):
                x = x @ w
            return x

        compute(on_gpu[0], 1)  # warm up cuBLAS before measuring anything
        copy_ms = statistics.median(
            event_ms(lambda: on_gpu[0].copy_(host[0], non_blocking=True), device) for _ in range(3)
        )
        step_ms = statistics.median(event_ms(lambda: compute(on_gpu[0], 1), device) for _ in range(3))
        repeats = compute_repeats or max(1, round(copy_ms / max(step_ms, 1e-6)))
        compute_ms = statistics.median(event_ms(lambda: compute(on_gpu[0], repeats), device) for _ in range(3))

        def serial() -> None:
            for i in range(chunks):  # one stream: each compute waits for its copy, each copy for the compute before
                on_gpu[i].copy_(host[i], non_blocking=True)
                compute(on_gpu[i], repeats)

        def overlapped() -> None:
            copy_stream.wait_stream(current)  # the buffers were made (and may be in use) on `current`
            compute_stream.wait_stream(current)
            for i in range(chunks):
                with torch.cuda.stream(copy_stream):
                    on_gpu[i].copy_(host[i], non_blocking=True)
                compute_stream.wait_stream(copy_stream)  # wait for the copies queued so far: chunk i is there
                with torch.cuda.stream(compute_stream):
                    compute(on_gpu[i], repeats)
            current.wait_stream(copy_stream)  # later work on `current` comes after both streams
            current.wait_stream(compute_stream)
            # The buffers outlive this function (they live in `on_gpu`), so no record_stream is needed.

    return OverlapRuns(device, chunks, rows * width * 4, repeats, copy_ms, compute_ms, serial, overlapped)


@dataclass(frozen=True)
class OverlapMeasurement:
    """Serial vs overlapped milliseconds of the same work (medians, CUDA events), with provenance."""

    chunks: int
    chunk_bytes: int
    copy_ms: float
    compute_ms: float
    serial_ms: float
    overlapped_ms: float
    stamp: str

    @property
    def speedup(self) -> float:
        return self.serial_ms / self.overlapped_ms

    def __str__(self) -> str:
        return (
            f"{self.chunks} chunks of {self.chunk_bytes / 2**20:.0f} MiB (copy ≈ {self.copy_ms:.3g} ms, "
            f"compute ≈ {self.compute_ms:.3g} ms per chunk): serial {self.serial_ms:.3g} ms, "
            f"overlapped {self.overlapped_ms:.3g} ms → {self.speedup:.2f}× ({self.stamp})"
        )


def measure_overlap(runs: OverlapRuns, *, repeats: int = 5) -> OverlapMeasurement:
    """Time `runs.serial` and `runs.overlapped` with CUDA events (median of `repeats`, after a warm-up)."""
    from .environment import stamp

    whole_number(repeats, "repeats")
    runs.serial()
    runs.overlapped()
    serial = statistics.median(event_ms(runs.serial, runs.device) for _ in range(repeats))
    overlapped = statistics.median(event_ms(runs.overlapped, runs.device) for _ in range(repeats))
    return OverlapMeasurement(runs.chunks, runs.chunk_bytes, runs.copy_ms, runs.compute_ms, serial, overlapped, stamp())


# ----------------------------------------------------------------------------------------------
# Timing done wrong and right
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TimingComparison:
    """The same work timed three ways (medians, seconds)."""

    device: str
    launch_s: float  # clock stopped when the call returned: on a GPU only the queuing
    synchronized_s: float  # clock stopped after synchronize: the work
    event_s: float | None  # CUDA events around the work (GPU only)
    repeats: int
    stamp: str
    launch_best_s: float = math.nan  # the fastest repeat of each: least disturbed by other programs
    synchronized_best_s: float = math.nan

    def rows(self) -> list[tuple[str, str]]:
        """(method, time) pairs for printing side by side."""
        rows = [
            ("perf_counter, no synchronize (WRONG on a GPU)", format_seconds(self.launch_s)),
            ("perf_counter + synchronize (right)", format_seconds(self.synchronized_s)),
        ]
        events = "needs a CUDA GPU" if self.event_s is None else format_seconds(self.event_s)
        rows.append(("CUDA events (right, measured on the GPU)", events))
        return rows

    def __str__(self) -> str:
        lines = [f"{name:<48} {value}" for name, value in self.rows()]
        lines.append(f"(median of {self.repeats} on {self.device}; {self.stamp})")
        return "\n".join(lines)


@checks(repeats=whole_number)
def time_three_ways(fn: Callable[[], Any], device: torch.device | str, *, repeats: int = 5) -> TimingComparison:
    """Time `fn()` by launch only, with synchronize, and with CUDA events (on a CUDA device)."""
    from .environment import stamp

    device = torch.device(device)
    fn()  # warm-up: first calls pay for library start-up
    synchronize(device)
    launch, synced, events = [], [], []
    for _ in range(repeats):
        synchronize(device)
        start = time.perf_counter()
        fn()
        launch.append(time.perf_counter() - start)  # WRONG on a GPU: the work may still be queued
        synchronize(device)  # let it finish before the next measurement
        synced.append(wall_seconds(fn, device))
        if device.type == "cuda":
            events.append(event_ms(fn, device) / 1000)
    return TimingComparison(
        device=str(device),
        launch_s=statistics.median(launch),
        synchronized_s=statistics.median(synced),
        event_s=statistics.median(events) if events else None,
        repeats=repeats,
        stamp=stamp(),
        launch_best_s=min(launch),
        synchronized_best_s=min(synced),
    )


def matmul_work(device: torch.device | str, *, size: int = 2048, times: int = 10) -> Callable[[], torch.Tensor]:
    """A piece of work to time: `times` products of a `size`×`size` matrix with itself."""
    whole_number(size, "size")
    whole_number(times, "times")
    x = torch.randn(size, size, device=device) / size**0.5

    def work() -> torch.Tensor:
        y = x
        for _ in range(times):
            y = y @ x
        return y

    return work
