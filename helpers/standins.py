"""Stand-ins for hardware the machine lacks, each labelled as what it is: a pretend machine, a
simulated GPU, a model of the caching allocator, a model of CUDA graph replay.

* **`pretend_machine(accelerator, count, built=...)`** makes torch's device *queries* answer as on
  another machine (two CUDA GPUs, a Mac, a CUDA build without a driver), so that code that chooses
  devices can be run and checked anywhere (chapters 00 and 01).
* **`simulated_cuda()`**, a SIMULATED GPU for the cells' own stream code (chapter 06): inside the
  `with` block, `torch.cuda.Stream`, `stream`, `current_stream`, `default_stream`, `Event`,
  `synchronize` and `_sleep` (and `torch.Stream`, `torch.Event`, `torch.accelerator.synchronize`)
  queue work on a model instead of a GPU. `sim.zeros()` makes a tensor whose `fill_` and `mean`
  are queued work, so the same code that races on a GPU races here, read-after-write and
  write-after-read alike; `sim.work(name, ms)` queues work of a chosen length (a kernel, or a copy),
  and `sim.spans` is the timeline of everything queued. Real tensors can play GPU tensors too
  (`sim.on_gpu(t)` inside `with sim.tensors():`): a copy to the host with `non_blocking=True` lands
  only when the host has waited past it (chapter 07's exercise). `PretendAsyncDevice` is the same
  idea on the real clock, for checking a learner's timing code (chapters 10 and 11).
* **`CachingAllocatorModel`**, a MODEL of PyTorch's CUDA caching allocator for machines without a
  GPU (chapter 05). It follows the rules in PyTorch's `c10/cuda/CUDACachingAllocator.cpp` (the
  "Memory management" section of the "CUDA semantics" docs describes the behaviour): requests are
  rounded up to multiples of 512 bytes; requests of at most 1 MiB come from 2 MiB segments,
  requests under 10 MiB from 20 MiB segments, larger ones from a segment of their own size
  rounded up to 2 MiB; freed blocks stay cached for reuse; `empty_cache` returns wholly free
  segments. It is a teaching model, not the allocator: see the class docstring for what it leaves
  out.
* **`GraphReplayModel`**, a CPU model of what a CUDA graph does on replay (chapter 11): it records
  the operators a function dispatches and replays them on the very tensors they were captured
  with, without running Python again, so that the rules of static inputs, CPU-side branches
  frozen at capture and host reads refused during capture can be shown and checked. It makes
  nothing faster.
* **`missing_triton()`**, for a machine without Triton (macOS, Windows, a CPU-only torch without it;
  chapter 13): stand-ins for the `triton` and `triton.language` modules that let the cells that
  *define* kernels run, so that the chapter's plain-PyTorch parts still run. Launching such a kernel
  raises `RuntimeError` saying what to install (`helpers.kernels.triton_advice`).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

import torch
from torch.overrides import TorchFunctionMode

from .devices import check_device_index
from .memory import (
    LARGE_BUFFER,
    MIB,
    MIN_BLOCK_SIZE,
    MIN_LARGE_ALLOC,
    ROUND_LARGE,
    SMALL_BUFFER,
    SMALL_SIZE,
    MemoryCounters,
)
from .timelines import Span

# ----------------------------------------------------------------------------------------------
# A pretend machine: torch's device queries answer as elsewhere
# ----------------------------------------------------------------------------------------------


@contextlib.contextmanager
def pretend_machine(accelerator: str | None, count: int = 0, *, built: str | None = None) -> Iterator[None]:
    """Make torch's device *queries* answer as they would on another machine, inside a `with` block.

    A CPU stand-in for checking a learner's device-choosing code on machines they lack (chapters 00, 01):
    `pretend_machine("cuda", 2)` is a machine with two usable CUDA GPUs, `pretend_machine("mps", 1)`
    a Mac, `pretend_machine(None, built="cuda")` a CUDA build of torch without a driver, and
    `pretend_machine(None)` the CPU-only build. Only these answers change:
    `torch.accelerator.is_available / current_accelerator / device_count`,
    `torch.cuda.is_available / device_count`, `torch.backends.mps.is_available` and
    `torch.version.cuda` (this build's CUDA version, or 12.8, on a CUDA build; None elsewhere).
    Nothing can run on a pretend device: creating a tensor there still fails (or uses the real
    hardware).
    """
    if accelerator is not None and (not isinstance(accelerator, str) or not accelerator):
        raise TypeError(f"accelerator must be a device type such as 'cuda' or 'mps', or None, not {accelerator!r}")
    if built is not None and (not isinstance(built, str) or not built):
        raise TypeError(f"built must be a device type such as 'cuda', or None, not {built!r}")
    count = check_device_index(count)
    if accelerator is None and count:
        raise ValueError(f"a machine without a usable accelerator has 0 of them, not {count}")
    if accelerator is not None and not count:
        raise ValueError("a usable accelerator needs count >= 1 (use accelerator=None, built=... for an unusable one)")
    if accelerator is not None and built not in (None, accelerator):
        raise ValueError(f"torch is built for one accelerator: built={built!r} cannot go with {accelerator!r}")
    built = accelerator or built

    def current_accelerator(check_available: bool = False) -> torch.device | None:
        if built is None or (check_available and accelerator is None):
            return None
        return torch.device(built)

    answers = {
        (torch.version, "cuda"): (torch.version.cuda or "12.8") if built == "cuda" else None,
        (torch.accelerator, "is_available"): lambda: accelerator is not None,
        (torch.accelerator, "current_accelerator"): current_accelerator,
        (torch.accelerator, "device_count"): lambda: count,
        (torch.cuda, "is_available"): lambda: accelerator == "cuda",
        (torch.cuda, "device_count"): lambda: count if accelerator == "cuda" else 0,
        (torch.backends.mps, "is_available"): lambda: accelerator == "mps",
    }
    saved = {key: getattr(*key) for key in answers}
    try:
        for (module, name), answer in answers.items():
            setattr(module, name, answer)
        yield
    finally:
        for (module, name), original in saved.items():
            setattr(module, name, original)


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
    the work starts when its stream is free and what it waits for is done. Only the `synchronize`
    calls, `.item()`, blocking reads of tensors playing GPU tensors and asking `query()` in a loop
    make the host wait.
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

    def Stream(self, device: Any = None, priority: int = 0, *, name: str = "", **kwargs: Any) -> SimulatedStream:  # noqa: N802
        """A new stream; `name` (the simulation's own argument) labels its lane on the timeline."""
        name = name or ("side stream" if len(self.streams) == 1 else f"stream {len(self.streams)}")
        stream = SimulatedStream(self, name)
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

    def work(self, name: str, ms: float, kind: str = "compute") -> None:
        """Queue `ms` of GPU work named `name` on the current stream: a kernel, or a copy with kind="copy"."""
        self._queue(self.current, name, float(ms), kind)

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
# The caching allocator, modelled (chapter 05)
# ----------------------------------------------------------------------------------------------


def round_size(nbytes: int) -> int:
    """The block size the allocator gives a request: at least 512 bytes, rounded up to a multiple of 512."""
    _check_request(nbytes)
    return max(MIN_BLOCK_SIZE, -(-nbytes // MIN_BLOCK_SIZE) * MIN_BLOCK_SIZE)


def segment_size(rounded: int) -> int:
    """How much the allocator asks the driver for (cudaMalloc) when no cached block fits `rounded` bytes."""
    _check_request(rounded)
    if rounded <= SMALL_SIZE:
        return SMALL_BUFFER
    if rounded < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return -(-rounded // ROUND_LARGE) * ROUND_LARGE


def _check_request(nbytes: Any) -> None:
    """Refuse a request that is not a whole number of bytes from 1.

    The model would otherwise give a request of 0, a negative or a fractional size a block as if
    it were real.
    """
    if isinstance(nbytes, bool) or not isinstance(nbytes, int):
        raise TypeError(f"a request is a whole number of bytes, not {nbytes!r} ({type(nbytes).__name__})")
    if nbytes <= 0:
        raise ValueError(f"a request must ask for at least one byte, not {nbytes} (empty tensors take no block)")


@dataclass
class Block:
    """A piece of a segment: free, or holding one tensor (`handle`)."""

    offset: int
    size: int
    handle: int | None = None


@dataclass
class Segment:
    """One region the allocator got from the driver (one cudaMalloc), cut into blocks."""

    number: int
    size: int
    small: bool
    blocks: list[Block] = field(default_factory=list)

    @property
    def unused(self) -> bool:
        """True when the whole segment is one free block, so `empty_cache` can return it."""
        return len(self.blocks) == 1 and self.blocks[0].handle is None


class CachingAllocatorModel:
    """A MODEL of PyTorch's CUDA caching allocator, small enough to read, for machines without a GPU.

    What it does as the real allocator does (c10/cuda/CUDACachingAllocator.cpp):

    * rounds every request up to a multiple of 512 bytes (`round_size`);
    * keeps two pools: requests of at most 1 MiB ("small") and larger ones, never mixed;
    * looks for the smallest cached free block of the right pool that fits (best fit), and splits
      it when the rest is worth keeping (≥ 512 bytes in the small pool, > 1 MiB in the large one);
      an unsplit block is counted whole in `allocated`, as the real counter does;
    * otherwise asks the "driver" for a new segment of `segment_size(rounded)` bytes;
    * on `free`, keeps the block cached and merges it with free neighbours in its segment;
    * `empty_cache` returns every segment that is wholly free; blocks in use stay put.

    What it leaves out: streams (a real block is reused only on the stream it was freed on, or
    after `record_stream` events complete), the options of `PYTORCH_ALLOC_CONF` (`max_split_size_mb`,
    `roundup_power2_divisions`, `expandable_segments`, garbage collection thresholds; its older name
    is `PYTORCH_CUDA_ALLOC_CONF`), CUDA graphs' private pools, the CUDA context (which the driver
    counts but the allocator does not), cuBLAS workspaces (which the real allocator does hold, from
    the first matrix product on), and running out of memory (its "driver" has no limit: a real
    allocator that finds none frees its cache, retries once, then raises `torch.OutOfMemoryError`).
    """

    def __init__(self) -> None:
        self.segments: list[Segment] = []
        self.max_allocated = 0
        self.max_reserved = 0
        self._next_handle = 1
        self._next_segment = 1

    # counters, named as torch names them
    @property
    def allocated(self) -> int:
        """Bytes in blocks that hold a tensor (the model's `memory_allocated`)."""
        return sum(b.size for s in self.segments for b in s.blocks if b.handle is not None)

    @property
    def reserved(self) -> int:
        """Bytes in all segments (the model's `memory_reserved`)."""
        return sum(s.size for s in self.segments)

    def counters(self) -> MemoryCounters:
        """The four counters in the same record the real reader returns."""
        return MemoryCounters(self.allocated, self.reserved, self.max_allocated, self.max_reserved, "model")

    def reset_peaks(self) -> None:
        """Peaks back to the current values, like `torch.cuda.reset_peak_memory_stats`."""
        self.max_allocated = self.allocated
        self.max_reserved = self.reserved

    def _note_peaks(self) -> None:
        self.max_allocated = max(self.max_allocated, self.allocated)
        self.max_reserved = max(self.max_reserved, self.reserved)

    def malloc(self, nbytes: int) -> int:
        """Serve a request of `nbytes`; return a handle to pass to `free`."""
        rounded = round_size(nbytes)
        small = rounded <= SMALL_SIZE
        found = self._best_fit(rounded, small)
        if found is None:
            found = self._new_segment(segment_size(rounded), small)
        segment, index = found
        block = segment.blocks[index]
        rest = block.size - rounded
        worth_splitting = rest >= MIN_BLOCK_SIZE if small else rest > SMALL_SIZE
        if worth_splitting:
            segment.blocks.insert(index + 1, Block(block.offset + rounded, rest))
            block.size = rounded
        block.handle = self._next_handle
        self._next_handle += 1
        self._note_peaks()
        return block.handle

    def _best_fit(self, rounded: int, small: bool) -> tuple[Segment, int] | None:
        candidates = [
            (b.size, s.number, b.offset, s, i)
            for s in self.segments
            if s.small == small
            for i, b in enumerate(s.blocks)
            if b.handle is None and b.size >= rounded
        ]
        if not candidates:
            return None
        *_, segment, index = min(candidates, key=lambda c: c[:3])
        return segment, index

    def _new_segment(self, size: int, small: bool) -> tuple[Segment, int]:
        segment = Segment(self._next_segment, size, small, [Block(0, size)])
        self._next_segment += 1
        self.segments.append(segment)
        return segment, 0

    def free(self, handle: int) -> None:
        """Give a block back to the cache (it stays reserved) and merge it with free neighbours."""
        for segment in self.segments:
            for i, block in enumerate(segment.blocks):
                if block.handle == handle and handle is not None:
                    block.handle = None
                    self._merge(segment, i)
                    return
        raise KeyError(f"no live block has handle {handle!r} (freed twice, or never allocated here?)")

    @staticmethod
    def _merge(segment: Segment, i: int) -> None:
        blocks = segment.blocks
        if i + 1 < len(blocks) and blocks[i + 1].handle is None:
            blocks[i].size += blocks.pop(i + 1).size
        if i > 0 and blocks[i - 1].handle is None:
            blocks[i - 1].size += blocks.pop(i).size

    def empty_cache(self) -> int:
        """Return every wholly free segment to the driver; return how many bytes that gave back."""
        before = self.reserved
        self.segments = [s for s in self.segments if not s.unused]
        return before - self.reserved

    def describe(self) -> str:
        """One line per segment: its size, pool and blocks (`#n` in use, `free`), all in one exact unit.

        Exact, so that the blocks of a segment visibly add up to its size (rounded figures such as
        "1.0 KiB + 1.0 KiB + 2.0 MiB" would not).
        """
        if not self.segments:
            return "(no segments: nothing reserved)"
        lines = []
        for s in self.segments:
            sizes = [s.size, *(b.size for b in s.blocks)]
            units = ((MIB, "MiB"), (1024, "KiB"), (1, "B"))
            unit, name = next((u, n) for u, n in units if all(x % u == 0 for x in sizes))
            parts = [f"{'#' + str(b.handle) if b.handle else 'free'} {b.size // unit:,} {name}" for b in s.blocks]
            pool = "small" if s.small else "large"
            lines.append(f"segment {s.number} ({pool} pool, {s.size // unit:,} {name}): " + " | ".join(parts))
        return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# CUDA graph replay, modelled on the CPU (chapter 11)
# ----------------------------------------------------------------------------------------------


class GraphReplayModel:
    """A CPU model of a CUDA graph, for machines without a CUDA GPU. **Not a CUDA graph.**

    `capture(fn, *static_inputs)` runs `fn` once, without autograd, and records every ATen
    operator it dispatches with the tensors it was called with. `replay()` runs exactly those
    operators again on those same tensor objects, writing each result into the tensor the capture
    made, as a CUDA graph replays its kernels on the addresses they were captured with. Python is
    not run again: a Python `if`, a Python number, whatever `fn` decided on the CPU, stays as it was
    at capture. So a replay reads the captured inputs' memory and overwrites the captured output's,
    whatever the Python names point at now: copy new data *into* a static input (`copy_`) and clone
    what you keep of the output.

    During capture, reading a tensor's value on the host (`.item()`, `float(t)`, `if t:`,
    `print(t)`, `.tolist()`, `.numpy()`) raises RuntimeError: on a GPU each of those copies to the
    CPU and waits for the GPU, and CUDA refuses to synchronise while a stream is being captured.

    What it leaves out: a real replay re-runs recorded kernels without Python or dispatch, so it
    skips the per-operator launch cost (the point of CUDA graphs); this model re-dispatches every
    operator and makes nothing faster.
    """

    #: Tensor methods that read values on the host without dispatching an ATen operator on the CPU.
    HOST_READS = ("__repr__", "__format__", "tolist", "numpy")

    def __init__(self) -> None:
        self._ops: list[tuple[Any, tuple, dict, Any]] = []
        self.captured = False
        self.replays = 0

    def capture(self, fn: Callable[..., Any], *static_inputs: torch.Tensor) -> Any:
        """Run `fn(*static_inputs)` once, recording its operators; return its output: the static output."""
        from torch.utils._python_dispatch import TorchDispatchMode  # see helpers.exercises.ch11

        ops: list[tuple[Any, tuple, dict, Any]] = []

        def host_read(what: str) -> RuntimeError:
            return RuntimeError(
                f"CPU MODEL of a CUDA graph: {what} reads a tensor's value on the host during capture. On a GPU "
                "that copies to the CPU and waits for the GPU, which CUDA forbids while a stream is captured: "
                "the capture fails with a RuntimeError. Keep the decision on the device (torch.where) or move "
                "the read out of the captured code."
            )

        class Recorder(TorchDispatchMode):
            def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
                if func is torch.ops.aten._local_scalar_dense.default:
                    raise host_read(".item() (or float(t), int(t), `if t:`)")
                out = func(*args, **(kwargs or {}))
                ops.append((func, args, kwargs or {}, out))
                return out

        def refuse(name: str) -> Callable[..., Any]:
            def method(*args: Any, **kwargs: Any) -> Any:
                raise host_read("print(t)" if name in ("__repr__", "__format__") else f".{name}()")

            return method

        with contextlib.ExitStack() as stack:
            for name in self.HOST_READS:
                stack.enter_context(mock.patch.object(torch.Tensor, name, refuse(name)))
            stack.enter_context(torch.no_grad())
            stack.enter_context(Recorder())
            output = fn(*static_inputs)
        self._ops, self.captured = ops, True
        return output

    def replay(self) -> None:
        """Re-run the recorded operators on the recorded tensors, each result written into the tensor capture made."""
        if not self.captured:
            raise RuntimeError("nothing captured yet: call capture(fn, *static_inputs) first")
        with torch.no_grad():
            for func, args, kwargs, out in self._ops:
                result = func(*args, **kwargs)
                olds, news = (out, result) if isinstance(out, (tuple, list)) else ((out,), (result,))
                for old, new in zip(olds, news, strict=True):
                    # An in-place operator or a view already wrote into (or points at) the captured memory.
                    if isinstance(old, torch.Tensor) and new.data_ptr() != old.data_ptr():
                        old.copy_(new)
        self.replays += 1


class KernelNeedingTriton:
    """What the stand-in `triton.jit` makes of a kernel: its Python function, which cannot be launched here."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        from .kernels import triton_advice

        raise RuntimeError(f"`{self.__name__}` is a Triton kernel, and Triton is missing here. {triton_advice()}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self[None]


class _StandInConfig:
    """The stand-in `triton.Config`: it keeps the block sizes it was given."""

    def __init__(self, kwargs: dict[str, Any], **options: Any) -> None:
        self.kwargs, self.options = dict(kwargs), options

    def __repr__(self) -> str:
        return f"Config({self.kwargs})"


class _StandInLanguage:
    """The stand-in `triton.language`: `tl.constexpr` and the dtypes exist (for signatures); nothing runs."""

    class constexpr:  # noqa: N801 - Triton's own spelling, used in kernel signatures
        """Marks a compile-time argument; here only an annotation."""

    def __getattr__(self, name: str) -> Any:
        return f"tl.{name} (stand-in: Triton is missing)"


def missing_triton() -> tuple[Any, Any]:
    """Stand-ins for the `triton` and `triton.language` modules where Triton cannot be imported (LABELLED).

    `@triton.jit` and `@triton.autotune(...)` keep the kernel's Python function; launching it raises
    `RuntimeError` with what to install. `triton.cdiv` and `triton.next_power_of_2` work as Triton's do.
    """
    import types

    def jit(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
        return KernelNeedingTriton(fn) if fn is not None else KernelNeedingTriton

    def autotune(configs: list[Any], key: list[str], **options: Any) -> Callable[[Any], Any]:
        return lambda kernel: kernel

    triton = types.SimpleNamespace(
        jit=jit,
        autotune=autotune,
        Config=_StandInConfig,
        cdiv=lambda x, y: (x + y - 1) // y,
        next_power_of_2=lambda n: 1 << max(int(n) - 1, 0).bit_length(),
        __version__="missing (stand-in)",
        STAND_IN=True,
    )
    return triton, _StandInLanguage()
