"""Stand-ins for hardware the machine lacks, each labelled as what it is.

* `pretend_machine`: torch's device queries answer as on another machine (chapters 00, 01).
* `simulated_cuda`: a SIMULATED GPU that runs the cells' own `torch.cuda` stream code and keeps a
  timeline (chapters 06, 07).
* `CachingAllocatorModel`: a MODEL of PyTorch's CUDA caching allocator (chapter 05).
* `GraphReplayModel`: a CPU model of what a CUDA graph does on replay, a training step's too (chapter 11).
* `missing_triton`: stand-ins for `triton` and `triton.language` where Triton is missing (chapter 13)."""

from __future__ import annotations

import contextlib
import functools
import math
import os
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any
from unittest import mock

import torch
from torch.overrides import TorchFunctionMode

from . import memory
from .devices import check_device_index
from .timelines import Span


@contextlib.contextmanager
def pretend_machine(
    accelerator: str | None, count: int = 0, *, built: str | None = None, listed: int = 0, current: int = 0
) -> Iterator[list[int]]:
    """Make torch's device *queries* answer as on another machine inside the block; nothing runs on a pretend device.
    `("cuda", 2)` is two usable CUDA GPUs, `("mps", 1)` a Mac, `(None, built="cuda")` a CUDA build without a driver,
    `(None, built="mps")` an mps build that cannot use a GPU, `(None)` the CPU-only build. The build flags and a bare
    index (`torch.device(0)`) follow `built`; where no CUDA GPU is usable, the first CUDA use raises as there and
    `torch.cuda.device_count()` counts the `listed` GPUs CUDA_VISIBLE_DEVICES leaves (a driver too old). The current
    device is `current` until torch's setters change it (`as` gets `[it]`). Where releases differ, no driver answers
    as 2.10, a driver too old as 2.15; over two GPUs are a CUDA 13 build."""
    if accelerator is not None and (not isinstance(accelerator, str) or not accelerator):
        raise TypeError(f"accelerator must be a device type such as 'cuda' or 'mps', or None, not {accelerator!r}")
    if built is not None and (not isinstance(built, str) or not built):
        raise TypeError(f"built must be a device type such as 'cuda', or None, not {built!r}")
    count, listed, current = check_device_index(count), check_device_index(listed), [check_device_index(current)]
    names = os.environ.get("CUDA_VISIBLE_DEVICES", ",".join(map(str, range(listed)))).split(",")  # as torch counts:
    kept = next((i for i, n in enumerate(names) if not n.strip().isdigit() or int(n) >= listed), len(names))  # to a gap
    hidden, listed = kept == 0 and "CUDA_VISIBLE_DEVICES" in os.environ, kept  # hidden: the variable leaves none
    if accelerator is None and count:
        raise ValueError(f"a machine without a usable accelerator has 0 of them, not {count}")
    if accelerator is not None and not count:
        raise ValueError("a usable accelerator needs count >= 1 (use accelerator=None, built=... for an unusable one)")
    if accelerator is not None and built not in (None, accelerator):
        raise ValueError(f"torch is built for one accelerator: built={built!r} cannot go with {accelerator!r}")
    built = accelerator or built
    real_device, real_mod = torch.device, torch.get_device_module

    def current_accelerator(check_available: bool = False) -> torch.device | None:
        if built is None or (check_available and accelerator is None):
            return None
        return real_device(built)

    def first_cuda_use() -> None:  # torch.cuda._lazy_init where no CUDA GPU is usable: what the build raises there
        if built == "cuda":
            said = "The NVIDIA driver on your system is too old" if listed else "Found no NVIDIA driver on your system"
            said = "No CUDA GPUs are available" if hidden else said
            raise RuntimeError(f"{said} (a pretend CUDA build)")
        raise AssertionError("Torch not compiled with CUDA enabled")

    def current_device_index() -> int:  # as torch's: none without an accelerator; CUDA's is started first
        if built is None:
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if built == "cuda" and accelerator is None:
            torch.cuda._lazy_init()  # as torch's: through the module, so that a caller can watch it
        return current[0]

    def exchange(index: int) -> int:  # torch's ways to set the current device: to one of this machine's, or no change
        if index >= count:  # a negative index changes nothing
            raise RuntimeError(f"CUDA error: invalid device ordinal ({index}, on a pretend machine with {count})")
        if index >= 0:
            current[0], index = index, current[0]
        return index

    class DeviceType(type):  # torch.device, where a bare index names a device of the accelerator torch is built for
        def __instancecheck__(cls, value: object) -> bool:
            return isinstance(value, real_device)

        def __call__(cls, *args: Any, **kwargs: Any) -> torch.device:
            if len(args) == 1 and type(args[0]) is int and not kwargs:
                if built is None:
                    raise RuntimeError("Cannot access accelerator device when none is available.")
                args = (built, args[0])
            return real_device(*args, **kwargs)

    answers = {
        (torch.version, "cuda"): ("13.0" if count > 2 else "12.8") if built == "cuda" else None,
        (torch.backends.cuda, "is_built"): lambda: built == "cuda",
        (torch.cuda, "_is_compiled"): lambda: built == "cuda",
        (torch.backends.mps, "is_built"): lambda: built == "mps",
        (torch.backends.cudnn, "is_available"): lambda: built == "cuda",  # a CUDA wheel ships cuDNN, driver or not
        (torch, "device"): DeviceType("device", (), {"__doc__": real_device.__doc__}),
        (torch, "get_device_module"): lambda device=None: real_mod(device or accelerator or listed and built or "cpu"),
        (torch.accelerator, "is_available"): lambda: accelerator is not None,
        (torch.accelerator, "current_accelerator"): current_accelerator,
        (torch.accelerator, "device_count"): lambda: count or listed * (built == "cuda"),  # torch.cuda's count
        (torch.accelerator, "current_device_index"): current_device_index,
        (torch.cuda, "is_available"): lambda: accelerator == "cuda",
        (torch.cuda, "device_count"): lambda: count if accelerator == "cuda" else listed * (built == "cuda"),
        (torch.cuda, "current_device"): lambda: current[0] if accelerator == "cuda" else torch.cuda._lazy_init(),
        (torch.backends.mps, "is_available"): lambda: accelerator == "mps",
        (torch.mps, "device_count"): lambda: count if accelerator == "mps" else 0,
    }
    setters = "_cuda_setDevice _accelerator_setDeviceIndex _accelerator_exchangeDevice _accelerator_maybeExchangeDevice"
    answers |= {(torch._C, name): exchange for name in setters.split()}  # and torch.cuda's, which `with` blocks use:
    answers |= {(torch.cuda, name): exchange for name in ("_exchange_device", "_maybe_exchange_device")}
    answers |= {} if accelerator == "cuda" else {(torch.cuda, "_lazy_init"): first_cuda_use}
    with contextlib.ExitStack() as stack:
        for (module, name), answer in answers.items():
            stack.enter_context(mock.patch.object(module, name, answer, create=True))  # a CPU build lacks _cuda_...
        yield current


#: The simulated GPU's clock: `torch.cuda._sleep(cycles)` keeps a simulated stream busy cycles / this ms.
SIMULATED_CYCLES_PER_MS = 1_000_000
_RUNNING: list[SimulatedCuda] = []  # the simulations whose `simulated_cuda` block is running, innermost last


def non_blocking(args: tuple, kwargs: dict) -> bool:
    """The `non_blocking` flag of a `to` / `copy_` / `cuda` call, given by keyword or as a positional bool."""
    return bool(kwargs["non_blocking"]) if "non_blocking" in kwargs else any(a is True for a in args)


@dataclass
class _Copy:
    """A non_blocking copy queued on `stream` after `waits_before` waits; it lands at `end_ms` (in wait `landed_by`)."""

    source: torch.Tensor
    destination: torch.Tensor
    end_ms: float
    stream: str
    waits_before: int
    landed: bool = False
    landed_by: str = ""


class SimulatedStream:
    """A stream of the simulated GPU: work queued on it runs in order (SIMULATION)."""

    def __init__(self, sim: SimulatedCuda, name: str) -> None:
        self._sim, self.name = sim, name
        self.free_ms = 0.0  # when the work queued on this stream so far will be done

    @property
    def sim(self) -> SimulatedCuda:
        """Its simulation. A stream kept from an earlier one (cached across calls) joins the one running now, idle."""
        if _RUNNING and self._sim is not _RUNNING[-1]:
            self._sim, self.free_ms = _RUNNING[-1], 0.0
            self._sim.streams.append(self)
        return self._sim

    def wait_stream(self, stream: SimulatedStream) -> None:
        """Work queued here from now on starts only after the work queued on `stream` so far."""
        self.sim._expect(stream, SimulatedStream, "wait_stream needs a stream")
        self._wait(stream.free_ms, f"wait_stream({self.name})" * (stream is self))

    def wait_event(self, event: SimulatedEvent) -> None:
        """Work queued here from now on starts only after `event` has happened (at once if it never was, as in CUDA)."""
        self.sim._expect(event, SimulatedEvent, "wait_event needs an event")
        self._wait(event.at_ms or 0.0, f"wait_event(an event recorded on {self.name})" * (event.stream is self))

    def _wait(self, until_ms: float, own: str) -> None:  # `own`: how a wait for this stream's own queue is written
        self.sim.own_waits += [f"{self.name}.{own}"] * bool(own)
        self.sim.host_ms += self.sim.launch_ms
        self.free_ms = max(self.free_ms, until_ms, self.sim.host_ms)

    def record_event(self, event: SimulatedEvent | None = None) -> SimulatedEvent:
        (event := event or SimulatedEvent(self.sim)).record(self)
        return event

    def synchronize(self) -> None:
        """The host waits until this stream's queued work is done."""
        self.sim._host_waits(self.free_ms, f"{self.name}.synchronize()")

    def query(self) -> bool:
        """Whether this stream's queued work is done; each query of unfinished work passes host time."""
        return self.sim._poll(self.free_ms)

    def __enter__(self) -> SimulatedStream:
        self._previous, self.sim.current = self.sim.current, self
        return self

    __exit__ = lambda self, *exc: setattr(self._sim, "current", self._previous)  # its own (a generator may exit late)
    __repr__ = lambda self: f"<SIMULATED stream {self.name!r}>"


class _StreamType(type):  # isinstance(s, torch.cuda.Stream) holds for each simulated stream
    __instancecheck__ = lambda cls, value: isinstance(value, SimulatedStream)


class _TorchStream(SimulatedStream, metaclass=_StreamType):
    """`torch.cuda.Stream` in a `simulated_cuda` block, a class as torch's is: calling it makes a stream of the running
    simulation, and its methods take the stream first (`torch.cuda.Stream.synchronize(s)`)."""

    __new__ = lambda cls, *args, **kwargs: _RUNNING[-1].Stream(*args, **kwargs)


class SimulatedEvent:
    """An event of the simulated GPU: a marker in a stream with the time the stream reached it."""

    def __init__(self, sim: SimulatedCuda, enable_timing: bool = False) -> None:
        self.sim, self.enable_timing = sim, bool(enable_timing)
        self.at_ms: float | None = None
        self.stream: SimulatedStream | None = None  # the stream it was last recorded on
        self.copies_before = self.waits_before = 0  # copies queued and host waits before it was (last) recorded

    def record(self, stream: SimulatedStream | None = None) -> None:
        stream = self.sim.current if stream is None else stream
        self.sim._expect(stream, SimulatedStream, "Event.record needs a stream (or nothing: the current one)")
        self.at_ms, _ = self.sim._queue(stream, "record", 0.0, "event")  # takes no GPU time: no span
        self.stream = stream
        self.copies_before, self.waits_before = len(self.sim.copies), len(self.sim.host_waits)
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
        if (late := self if self.at_ms > end_event.at_ms else end_event).at_ms > self.sim.host_ms:
            why = f"the GPU had not reached the {'start' if late is self else 'end'} event (on the {late.stream.name})"
            fix = ("record both on one stream", "end_event.record(), then end_event.synchronize()")[late is end_event]
            raise RuntimeError(f"CUDA error: device not ready (SIMULATION: {why} when elapsed_time was called: {fix})")
        return end_event.at_ms - self.at_ms

    __repr__ = lambda self: f"<SIMULATED event at {self.at_ms} ms>"


#: How code spells each call that reads a GPU tensor's values on the host: each makes the host wait for the GPU.
HOST_READS = {"item": ".item()", "tolist": ".tolist()", "__float__": "float()", "__int__": "int()"}
HOST_READS |= {"__bool__": "bool()", "__str__": "print() or str()", "__repr__": "print() or repr()"}
HOST_READS |= {"__format__": "an f-string or format()", "equal": "torch.equal()", "allclose": "torch.allclose()"}
#: Operators whose result's size depends on the values: the host waits for them to learn it.
SIZED_BY_VALUES = ("nonzero", "argwhere", "unique", "unique_consecutive", "masked_select", "bincount")
_SIGNS = {"__eq__": "==", "__ne__": "!=", "__lt__": "<", "__le__": "<=", "__gt__": ">", "__ge__": ">="}


class _OnGpu:
    """What the simulated GPU holds: a host read (`READS`) waits for a copy on the current stream, then reads that."""

    READS = HOST_READS | {"cpu": ".cpu()", "numpy": ".numpy()"} | {n: f"a `{s}` comparison" for n, s in _SIGNS.items()}

    def _read(self, name: str, how: str, *args: Any, **kwargs: Any) -> Any:
        start, end = self.sim._queue(self.sim.current, "copy to host", 0.01, "read")
        self.sim._host_waits(end, how)
        return getattr(self._copied(start, end), name)(*args, **kwargs)

    def to(self, *args: Any, **kwargs: Any) -> Any:
        if "cpu" not in map(str, (*args, *kwargs.values())) or non_blocking(args, kwargs):
            raise self._lacks(".to(...) but a blocking .to('cpu')")
        return self._read("to", '.to("cpu")', *args, **kwargs)

    def record_stream(self, stream: SimulatedStream) -> None:  # nothing to free here: a stream is all it checks
        self.sim._expect(stream, SimulatedStream, "record_stream needs a stream")

    @classmethod
    def _lacks(cls, what: str) -> AttributeError:
        return AttributeError(f"the SIMULATED {cls.__name__[9:].lower()} has no {what}: it knows {cls.KNOWS}")

    def __getattr__(self, name: str) -> Any:
        raise self._lacks(repr(name))

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        """`torch.mean(a)` is `a.mean()`, and so on; one that takes values in a list (torch.stack) it lacks."""
        if not isinstance(args[0], _OnGpu):  # a list of values (torch.stack of means, say)
            raise cls._lacks(f"torch.{func.__name__} (return a list of the means)")
        return getattr(args[0], func.__name__)(*args[1:], **(kwargs or {}))


for _name, _how in _OnGpu.READS.items():
    setattr(_OnGpu, _name, functools.partialmethod(_OnGpu._read, _name, _how))


class SimulatedValue(_OnGpu):
    """A number the simulated GPU computes from a simulated tensor: `scale` times what each element held when `read`."""

    KNOWS = "v / number, .clone(), .float(), .detach(), record_stream, host reads (.item(), float(v), print, ...)"
    clone = float = detach = lambda self, *args, **kwargs: self / 1  # a copy: an op queued on the current stream

    def __init__(self, sim: SimulatedCuda, read: _Read, scale: float = 1.0, op_ms: float = math.inf) -> None:
        self.sim, self.read, self.scale, self.op_ms = sim, read, scale, op_ms  # op_ms: when the first op on it began

    def value(self) -> float:  # what the GPU computed, without reading it on the host (nan: an op on it ran too soon)
        return self.scale * self.read.value() if self.op_ms >= self.read.end_ms else math.nan

    def __truediv__(self, divisor: float) -> SimulatedValue:  # an op queued on the current stream
        start, _ = self.sim._queue(self.sim.current, "an op on a mean", 0.0, "read")
        return SimulatedValue(self.sim, self.read, self.scale / divisor, min(self.op_ms, start))

    def _copied(self, start: float, end: float) -> torch.Tensor:
        return torch.tensor(math.nan if self.read.end_ms > start else self.value())  # nan: copied before computed


@dataclass
class _Write:
    value: float
    start_ms: float
    end_ms: float
    stream: str


@dataclass(eq=False)
class _Read:
    writes: list[_Write]  # its tensor's (not the tensor: a read does not keep it alive)
    stream: str
    start_ms: float
    end_ms: float
    writes_before: int  # its tensor's writes queued before it

    def value(self) -> float:
        """What each element held for it: the last write done before it began (0 before any); nan if one overlapped."""
        if any(w.start_ms < self.end_ms and w.end_ms > self.start_ms for w in self.writes):
            return math.nan  # a write ran while the read did: a torn, half-written value
        done = [w for w in self.writes if w.end_ms <= self.start_ms]
        return max(done, key=lambda w: w.end_ms).value if done else 0.0

    __float__ = value


class SimulatedTensor(_OnGpu):
    """A 1-D tensor of `elements` equal elements on the simulated GPU: its writes and reads are queued work."""

    KNOWS = "fill_, zero_, add_, a[:] = v, mean, sum, numel, shape, view, host reads, ..."
    device = torch.device("cuda", 0)  # where it plays a tensor: torch.cuda.current_stream(a.device) works

    def __init__(self, sim: SimulatedCuda, name: str, fill_ms: float, read_ms: float, elements: int = 1) -> None:
        self.sim, self.name, self.elements = sim, name, elements
        self.fill_ms, self.read_ms = fill_ms, read_ms
        self.writes: list[_Write] = []
        self.reads: list[_Read] = []

    def fill_(self, value: Any) -> SimulatedTensor:
        """A write of a number queued on the current stream."""
        start, end = self.sim._queue(self.sim.current, f"{self.name}.fill_({float(value):g})", self.fill_ms, "write")
        self.writes.append(_Write(float(value), start, end, self.sim.current.name))
        return self

    def add_(self, value: float) -> SimulatedTensor:  # a write of what the write queued before it wrote, plus value
        return self.fill_((float(self.writes[-1].value) if self.writes else 0.0) + float(value))

    def __getitem__(self, index: Any) -> SimulatedTensor:
        if index not in (slice(None), Ellipsis):
            raise self._lacks(f"[{index!r}] but a[:]")
        return self

    zero_ = functools.partialmethod(fill_, 0.0)
    __setitem__ = lambda self, index, value: self[index].fill_(value)
    numel = __len__ = lambda self: self.elements
    shape = property(lambda self: torch.Size([self.elements]))
    float = detach = view = contiguous = flatten = lambda self, *args, **kwargs: self  # the same simulated data

    def mean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None, _op: str = "mean") -> SimulatedValue:
        if dim not in (None, 0, -1, (0,), (-1,)):
            raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})")
        start, end = self.sim._queue(self.sim.current, f"{self.name}.{_op}()", self.read_ms, "read")
        self.reads.append(_Read(self.writes, self.sim.current.name, start, end, len(self.writes)))
        return SimulatedValue(self.sim, self.reads[-1], self.elements if _op == "sum" else 1.0)

    sum = functools.partialmethod(mean, _op="sum")

    def _copied(self, start: float, end: float) -> torch.Tensor:
        return torch.full((self.elements,), _Read(self.writes, self.sim.current.name, start, end, 0).value())


class SimulatedCuda:
    """One simulated GPU: its streams, the host's clock and what ran when (`spans`) (SIMULATION). Each call costs the
    host `launch_ms` and its work starts when its stream is free; only synchronisations and host reads make it wait."""

    NOT_LANDED = -1.0  # what a host buffer holds until a copy into it has landed

    def __init__(self, *, launch_ms: float = 0.005, copy_ms: float = 1.0) -> None:
        self.launch_ms, self.copy_ms = float(launch_ms), float(copy_ms)  # copy_ms: one copy between host and device
        self.host_ms = 0.0
        self.spans: list[Span] = []
        self.host_waits: list[str] = []  # what made the host wait, in order
        self.current = self.default = SimulatedStream(self, "default stream")
        self.streams, self.pooled = [self.default], []  # every stream; those torch.cuda.Stream() handed out, in turn
        self.recorded: list[SimulatedEvent] = []  # every event recorded, in order
        self.own_waits: list[str] = []  # waits of a stream for a point in its own queue: waits for nothing
        self.copies: list[_Copy] = []  # copies queued with non_blocking=True, either way
        self.kinds = dict.fromkeys(("pageable", "blocking", "non_blocking"), 0)  # copies of each kind
        self.device: dict[int, tuple[torch.Tensor, str]] = {}  # tensors playing a device's (by id), with its type
        self.pinned: dict[int, torch.Tensor] = {}  # host tensors pinned, by id
        self._later: list[tuple] = []  # work on device tensors while copies were queued: (func, args, kwargs, result)
        self.kept: list[tuple[int, SimulatedStream]] = []  # record_stream calls: (the tensor's data_ptr, the stream)

    def Stream(self, device: Any = None, priority: int = 0, *, name: str = "", **kwargs: Any) -> SimulatedStream:  # noqa: N802
        """A stream of torch's pool, which hands its 32 out in turn; a new one where `name` (the simulation's own
        argument) labels its lane on the timeline."""
        if not name and len(self.pooled) >= 32:
            return self.pooled.append(self.pooled[-32]) or self.pooled[-1]
        label = name or ("side stream" if len(self.streams) == 1 else f"stream {len(self.streams)}")
        self.streams.append(SimulatedStream(self, label))
        self.pooled += [self.streams[-1]] * (not name)
        return self.streams[-1]

    def stream(self, stream: SimulatedStream | None) -> contextlib.AbstractContextManager[Any]:
        if stream is not None:
            self._expect(stream, SimulatedStream, "torch.cuda.stream(...) needs a stream")
        return stream or contextlib.nullcontext()

    Event = lambda self, enable_timing=False, blocking=False, interprocess=False: SimulatedEvent(self, enable_timing)
    current_stream = lambda self, device=None: self.current
    default_stream = lambda self, device=None: self.default
    set_stream = lambda self, stream: setattr(self, "current", self.stream(stream) if stream else self.current)

    def synchronize(self, device: Any = None, why: str = "torch.cuda.synchronize()") -> None:
        self._host_waits(max(s.free_ms for s in self.streams), why)

    empty_cache = lambda self: self.synchronize(why="torch.cuda.empty_cache() (it waits for the GPU before it frees)")

    def _sleep(self, cycles: int) -> None:
        if isinstance(cycles, bool) or not isinstance(cycles, int) or cycles < 0:
            raise TypeError(f"_sleep takes a whole number of cycles, not {cycles!r}")
        self._queue(self.current, "_sleep", cycles / SIMULATED_CYCLES_PER_MS, "delay")

    def work(self, name: str, ms: float, kind: str = "compute", stream: SimulatedStream | None = None) -> None:
        """Queue `ms` of GPU work named `name` on `stream` (the current one): a kernel, or a copy with kind="copy"."""
        self._queue(stream or self.current, name, float(ms), kind)

    def zeros(self, name: str = "a", *, fill_ms: float = 0.1, read_ms: float = 0.1, numel: int = 1) -> SimulatedTensor:
        """A simulated tensor, all zeros; its `fill_` and `mean` take `fill_ms` and `read_ms` on the GPU."""
        return SimulatedTensor(self, name, float(fill_ms), float(read_ms), numel)

    def on_gpu(self, tensor: torch.Tensor, device: str = "cuda") -> torch.Tensor:
        """Let the real `tensor` play a tensor on this GPU (inside `with sim.tensors():`); returns it."""
        self.device[id(tensor)] = tensor, device
        return tensor

    def is_on_gpu(self, value: Any) -> bool:
        """Whether `value` plays a tensor on this GPU (`on_gpu`, a copy to a device, or computed from one)."""
        return isinstance(value, torch.Tensor) and self.device.get(id(value), (None,))[0] is value

    def tensors(self, pinned: Iterable[torch.Tensor] = ()) -> _GpuTensors:
        """`with sim.tensors(pinned):` makes `on_gpu`'s tensors and copies to a device act as GPU tensors."""
        self.pinned |= {id(t): t for t in pinned}
        return _GpuTensors(self)

    def _copy(self, source: torch.Tensor, destination: torch.Tensor, non_blocking: bool) -> torch.Tensor:
        """Queue a copy: a blocking one makes the host wait; a non_blocking one lands late (pageable: at once)."""
        to = "device" if self.is_on_gpu(destination) else "host"
        pinned = to == "host" or id(source) in self.pinned
        kind = "blocking" if not non_blocking else "non_blocking" if pinned else "pageable"
        self.kinds[kind] += 1
        _, end = self._queue(self.current, f"{kind} copy to the {to}", self.copy_ms, "copy")
        if kind == "non_blocking":
            destination.fill_(self.NOT_LANDED)
            self.copies.append(_Copy(source, destination, end, self.current.name, len(self.host_waits)))
            return destination
        if kind == "blocking":
            self._host_waits(end, f"a blocking copy to the {to}")
        return destination.copy_(source)

    def land(self, everything: bool = False, by: str = "") -> None:
        """Land the copies finished by now (or all), then redo the device work queued meanwhile, which follows them."""
        due = [c for c in self.copies if not c.landed and (everything or c.end_ms <= self.host_ms)]
        with torch._C.DisableTorchFunction():
            for copy in due:
                copy.destination.copy_(copy.source)
                copy.landed, copy.landed_by = True, by
            for func, args, kwargs, result in self._later if due else ():
                result.copy_(func(*args, **kwargs))

    blocked_ms = property(lambda self: sum(s.ms for s in self.spans if s.lane == "host"))  # ms the host sat waiting

    def _queue(self, stream: SimulatedStream, name: str, ms: float, kind: str) -> tuple[float, float]:
        self._expect(stream, SimulatedStream, "work must be queued on a stream")
        self.host_ms += self.launch_ms
        start = max(self.host_ms, stream.free_ms)
        stream.free_ms = start + ms
        if ms > 0:
            self.spans.append(Span(stream.name, name, start, start + ms, kind))
        return start, start + ms

    POLL_MS = 0.05  # host ms one `query()` of unfinished work takes: asked in a loop, it holds the host as a wait does

    def _poll(self, until_ms: float) -> bool:
        """`query()`: whether the work is done by `until_ms`, else POLL_MS of asking; asked at once again: a wait."""
        last = self.spans[-1] if self.spans else None
        again = last is not None and last.name.startswith("polls: query()") and last.end_ms == self.host_ms
        if again and last.name == "polls: query()":  # the second query of a loop
            self.host_waits.append("query() in a loop")
            self.spans[-1] = replace(last, name="polls: query() in a loop")
        if until_ms <= self.host_ms:
            return True
        step_end = min(until_ms, self.host_ms + self.POLL_MS)
        if not again:  # a query of its own: a span of its own, which the next query of the loop lengthens
            self.spans.append(Span("host", "polls: query()", self.host_ms, step_end, "host blocked"))
        self.spans[-1] = replace(self.spans[-1], end_ms=step_end)
        self.host_ms = step_end
        self.land()
        return False

    def _host_waits(self, until_ms: float, why: str) -> None:
        self.host_waits.append(why)
        if until_ms > self.host_ms:
            self.spans.append(Span("host", f"waits: {why}", self.host_ms, until_ms, "host blocked"))
            self.host_ms = until_ms
        self.land(by=why)

    def _expect(self, value: Any, kind: type, what: str) -> None:
        if not isinstance(value, kind) or getattr(value, "sim", None) is not self:
            raise TypeError(f"{what}; got {value!r} (in the SIMULATION, make it with torch.cuda inside the same block)")


class _GpuTensors(TorchFunctionMode):
    """While active, tensors that play the GPU's (`on_gpu`, copies to a device, what is computed from them) act as GPU
    tensors: copies either way are queued (`SimulatedCuda._copy`), host reads wait, `.numpy()` refuses, and work runs
    at once, then again as copies land. Pinning is granted: host memory here is not really pinned, and need not be."""

    def __init__(self, sim: SimulatedCuda) -> None:
        super().__init__()
        self.sim = sim

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        sim, kwargs, name = self.sim, dict(kwargs or {}), getattr(func, "__name__", "")
        sim.land()  # whatever the host does now, the copies the GPU has finished have landed
        if name == "to" and len(args) > 1 and isinstance(other := args[1], torch.Tensor):  # to other's place, dtype
            args = (args[0], sim.device[id(other)][1] if sim.is_on_gpu(other) else "cpu", other.dtype, *args[2:])
        data = args[name == "new_tensor"] if len(args) > (name == "new_tensor") else None
        if name in ("as_tensor", "tensor", "new_tensor") and isinstance(data, torch.Tensor) and "device" in kwargs:
            args = (data, kwargs["device"], kwargs.get("dtype") or data.dtype)
            func, name, kwargs = torch.Tensor.to, "to", {}  # a blocking copy, as torch's constructors make
        source = args[0] if args else None
        on_gpu, pin = sim.is_on_gpu(source), bool(kwargs.pop("pin_memory", False)) or name == "pin_memory"
        places = (kwargs.get("device"), *(args[1:] if name == "to" else ()))  # where a device can be named
        named = [p for p in places if isinstance(p, str | torch.device)]
        there = "cuda" if name == "cuda" else "cpu" if name == "cpu" else str(named[0]).split(":")[0] if named else None
        if on_gpu and getattr(func, "__self__", None) is torch.Tensor.device:
            return torch.device(sim.device[id(source)][1])
        if name == "is_pinned" and not on_gpu:
            return id(source) in sim.pinned
        if on_gpu and name in ("numpy", "__array__"):
            raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy it first.")
        masked = name == "__getitem__" and getattr(args[1], "dtype", None) == torch.bool  # picks a number known later
        sized = "a[mask]" if masked else f"{name}()" if name in SIZED_BY_VALUES else ""
        if on_gpu and (name in HOST_READS or sized):
            sim._host_waits(sim.current.free_ms, HOST_READS.get(name) or f"{sized} (its size depends on the values)")
        if name in ("to", "cuda") and there not in (None, "cpu"):  # to a device
            dtype = [d for d in (kwargs.get("dtype"), *args[1:]) if isinstance(d, torch.dtype)][:1]
            if on_gpu:  # where it is already
                return sim.on_gpu(source.to(*dtype), there)
            made = sim.on_gpu(torch.empty_like(source, dtype=dtype[0] if dtype else None), there)
            return sim._copy(source, made, non_blocking(args[1:], kwargs))
        if name in ("to", "cpu") and there == "cpu" and on_gpu:  # to the host: into pinned memory if non_blocking
            values, queued = func(*args, **kwargs), non_blocking(args[1:], kwargs)
            host = torch.empty_like(values)
            sim.pinned |= {id(host): host} if queued else {}
            return sim._copy(values, host, queued)
        if name == "copy_" and len(args) > 1 and on_gpu != sim.is_on_gpu(args[1]):  # either way
            values = args[1] if on_gpu else args[1].to(source.dtype).expand_as(source).clone()
            return sim._copy(values, source, non_blocking(args[2:], kwargs))
        kwargs |= {"device": "cpu"} if "device" in kwargs else {}
        result = source.clone() if name == "pin_memory" else func(*args, **kwargs)
        sim.pinned |= {id(result): result} if pin else {}
        from_gpu = [a for a in (*args, *kwargs.values()) if sim.is_on_gpu(a)]
        where = there or (sim.device[id(from_gpu[0])][1] if from_gpu and name not in HOST_READS else "cpu")
        if where != "cpu" and (name == "__iter__" or type(result) in (tuple, list)):  # unbind, split, iter: parts
            result = (iter if name == "__iter__" else type(result))(
                sim.on_gpu(t, where) if isinstance(t, torch.Tensor) else t for t in result
            )
        if where != "cpu" and isinstance(result, torch.Tensor):
            sim.on_gpu(result, where)
            if from_gpu and result is not source and result._base is None and not all(c.landed for c in sim.copies):
                sim._later.append((func, args, kwargs, result))  # to run again once the copies before it land
        return result


@contextlib.contextmanager
def simulated_cuda(*, launch_ms: float = 0.005, copy_ms: float = 1.0) -> Iterator[SimulatedCuda]:
    """Run `torch.cuda` stream code on a SIMULATED GPU inside the block, whose methods named as in torch.cuda (and
    torch.Stream, torch.Event, torch.accelerator's, Tensor.record_stream) stand in; yield it. The code works
    on `sim.zeros()`, real tensors playing GPU ones (`sim.on_gpu`, in `with sim.tensors():`), or queues `sim.work`."""
    sim = SimulatedCuda(launch_ms=launch_ms, copy_ms=copy_ms)
    shared = ("current_stream", "set_stream", "synchronize")  # torch.cuda's and torch.accelerator's
    names = ("Event", "stream", "default_stream", "_sleep", "empty_cache", *shared)
    cuda = {name: getattr(sim, name) for name in names}
    real, gpu = torch.get_device_module, ("None", "cuda", "meta")  # `meta` plays a device of the simulated GPU too

    def record_stream(tensor: torch.Tensor, stream: SimulatedStream) -> None:  # as torch's: of a GPU tensor only
        if sim._expect(stream, SimulatedStream, "record_stream needs a stream") or not sim.is_on_gpu(tensor):
            raise NotImplementedError("Could not run 'aten::record_stream' with arguments from the 'CPU' backend.")
        sim.kept.append((tensor.untyped_storage().data_ptr(), stream))

    with (
        mock.patch.multiple(torch.cuda, Stream=_TorchStream, StreamContext=sim.stream, **cuda),
        mock.patch.multiple(torch, Stream=_TorchStream, Event=lambda device=None, **kwargs: sim.Event(**kwargs)),
        mock.patch.object(torch, "get_device_module", lambda d=None: torch.cuda if str(d)[:4] in gpu else real(d)),
        mock.patch.multiple(torch.accelerator, **{name: cuda[name] for name in shared}),
        mock.patch.object(torch.Tensor, "record_stream", record_stream),
        mock.patch(f"{__name__}._RUNNING", [*_RUNNING, sim]),
    ):
        yield sim


def round_size(nbytes: int) -> int:
    """The block size the allocator gives a request of a whole number of bytes from 1: a multiple of 512."""
    if isinstance(nbytes, bool) or not isinstance(nbytes, int):
        raise TypeError(f"a request is a whole number of bytes, not {nbytes!r} ({type(nbytes).__name__})")
    if nbytes <= 0:
        raise ValueError(f"a request must ask for at least one byte, not {nbytes} (empty tensors take no block)")
    return -(-nbytes // memory.MIN_BLOCK_SIZE) * memory.MIN_BLOCK_SIZE


def segment_size(rounded: int) -> int:
    """How much the allocator asks the driver for (cudaMalloc) when no cached block fits `rounded` bytes."""
    if rounded <= memory.SMALL_SIZE:
        return memory.SMALL_BUFFER
    if rounded < memory.MIN_LARGE_ALLOC:
        return memory.LARGE_BUFFER
    return -(-rounded // memory.ROUND_LARGE) * memory.ROUND_LARGE


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
    """A MODEL of PyTorch's CUDA caching allocator, small enough to read, for machines without a GPU. As
    c10/cuda/CUDACachingAllocator.cpp does: requests are rounded up (`round_size`) and kept in two pools (at most 1 MiB,
    "small", and larger); each takes the smallest cached free block that fits, split when the rest is worth keeping (an
    unsplit block counts whole in `allocated`), else a new segment (`segment_size`); `free` caches the block, merged
    with free neighbours; `empty_cache` returns wholly free segments. Left out: streams, `PYTORCH_ALLOC_CONF` options,
    CUDA graphs' private pools, the CUDA context, cuBLAS workspaces, running out of memory (no "driver" limit)."""

    def __init__(self) -> None:
        self.segments: list[Segment] = []
        self.max_allocated = self.max_reserved = 0
        self._next_handle = self._next_segment = 1

    @property
    def allocated(self) -> int:
        """Bytes in blocks that hold a tensor (the model's `memory_allocated`)."""
        return sum(b.size for s in self.segments for b in s.blocks if b.handle is not None)

    @property
    def reserved(self) -> int:
        """Bytes in all segments (the model's `memory_reserved`)."""
        return sum(s.size for s in self.segments)

    def counters(self) -> memory.MemoryCounters:
        """The four counters as one record, as a chapter's cells print them."""
        return memory.MemoryCounters(self.allocated, self.reserved, self.max_allocated, self.max_reserved, "model")

    def reset_peaks(self) -> None:
        """Peaks back to the current values, like `torch.cuda.reset_peak_memory_stats`."""
        self.max_allocated, self.max_reserved = self.allocated, self.reserved

    def malloc(self, nbytes: int) -> int:
        """Serve a request of `nbytes`; return a handle to pass to `free`."""
        rounded = round_size(nbytes)
        small = rounded <= memory.SMALL_SIZE
        found = self._best_fit(rounded, small)
        if found is None:
            size = segment_size(rounded)
            self.segments.append(Segment(self._next_segment, size, small, [Block(0, size)]))
            self._next_segment += 1
            found = self.segments[-1], 0
        segment, index = found
        block = segment.blocks[index]
        rest = block.size - rounded
        worth_splitting = rest >= memory.MIN_BLOCK_SIZE if small else rest > memory.SMALL_SIZE
        if worth_splitting:
            segment.blocks.insert(index + 1, Block(block.offset + rounded, rest))
            block.size = rounded
        block.handle = self._next_handle
        self._next_handle += 1
        self.max_allocated = max(self.max_allocated, self.allocated)
        self.max_reserved = max(self.max_reserved, self.reserved)
        return block.handle

    def _best_fit(self, rounded: int, small: bool) -> tuple[Segment, int] | None:
        blocks = [(s, i, b) for s in self.segments if s.small == small for i, b in enumerate(s.blocks)]
        candidates = [
            (b.size, s.number, b.offset, s, i) for s, i, b in blocks if b.handle is None and b.size >= rounded
        ]
        best = min(candidates, key=lambda c: c[:3], default=None)
        return None if best is None else (best[3], best[4])

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
        """One line per segment: its size, pool and blocks (`#n` in use, `free`) in one exact unit, so they add up."""
        if not self.segments:
            return "(no segments: nothing reserved)"
        lines = []
        for s in self.segments:
            sizes = [s.size, *(b.size for b in s.blocks)]
            units = ((memory.MIB, "MiB"), (1024, "KiB"), (1, "B"))
            unit, name = next((u, n) for u, n in units if all(x % u == 0 for x in sizes))
            parts = [f"{'#' + str(b.handle) if b.handle else 'free'} {b.size // unit:,} {name}" for b in s.blocks]
            pool = "small" if s.small else "large"
            lines.append(f"segment {s.number} ({pool} pool, {s.size // unit:,} {name}): " + " | ".join(parts))
        return "\n".join(lines)


class GraphReplayModel:
    """A CPU model of a CUDA graph (**not one**), for machines without a CUDA GPU: `replay()` re-runs the ATen operators
    `capture` recorded, on the captured tensors, without Python (copy new data *into* a static input, clone what you
    keep). A host read, a size read from values or a synchronisation during capture raises RuntimeError, as CUDA
    refuses them; so does a second capture. Nothing gets faster: a graph skips launches, this re-dispatches them."""

    #: Tensor methods that read on the host with no ATen operator on the CPU; operators that read on the host.
    HOST_READS = ("__repr__", "__format__", "tolist", "numpy", "cpu", "__reduce_ex__", "__dlpack__", "apply_")
    READING_OPS = ("_local_scalar_dense", "equal", "allclose", "is_nonzero", "nonzero", "masked_select", "_unique2")
    READING_OPS += ("unique_dim", "unique_consecutive", "bincount", "histc", "repeat_interleave", "lift_fresh")
    SAID = {"_local_scalar_dense": ".item() (or float(t), int(t), `if t:`)", "index": "a boolean index"}
    SAID |= dict(sync="a synchronize()", is_nonzero="`if t:`", __repr__="print(t), repr(t)", __format__="an f-string")
    SAID |= {"lift_fresh": "torch.tensor(data)", "__reduce_ex__": "pickling", "__dlpack__": "DLPack"}
    REFUSED = "CPU MODEL of a CUDA graph: {} during capture makes the CPU wait for the GPU, which CUDA refuses: "
    REFUSED += "read values after a replay."

    def __init__(self) -> None:
        self._ops: list[tuple[Any, tuple, dict, Any]] | None = None  # None until a capture
        self.replays = 0

    def capture(self, fn: Callable[..., Any], *static_inputs: torch.Tensor) -> Any:
        """Run `fn(*static_inputs)` once, recording its operators (a backward and an optimizer's step too); return its
        output. Autograd is on, as in `torch.cuda.graph`: capture under `torch.no_grad()` for inference. As a GPU's
        capture runs nothing, tensors that existed keep their values; floats it made hold NaN until the first replay."""
        from torch.utils._python_dispatch import TorchDispatchMode  # see helpers.exercises.ch11

        if self._ops is not None:
            raise RuntimeError("CPU MODEL of a CUDA graph: this graph already holds a capture: create a new one")
        ops, refused, said = [], [], lambda what: self.SAID.get(what, f".{what}()" if what in self.HOST_READS else what)
        kept, new, flat = [], set(), torch.utils._pytree.tree_leaves  # existing tensors written, storages made
        storage = lambda t: t.untyped_storage().data_ptr() if isinstance(t, torch.Tensor) else None
        host_read = lambda what: refused.append(said(what)) or RuntimeError(self.REFUSED.format(said(what)))

        class Recorder(TorchDispatchMode):
            def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
                bools = (torch.bool, torch.uint8)
                index = func is torch.ops.aten.index.Tensor and any(getattr(i, "dtype", None) in bools for i in args[1])
                if func._opname in GraphReplayModel.READING_OPS or index:
                    raise host_read(func._opname if func._opname in GraphReplayModel.SAID else f"torch.{func._opname}")
                named = {a.name: v for a, v in zip(func._schema.arguments, args, strict=False)} | (kwargs or {})
                writes = [named.get(a.name) for a in func._schema.arguments if a.alias_info and a.alias_info.is_write]
                kept.extend(
                    (t, t.clone()) for t in flat(writes) if isinstance(t, torch.Tensor) and storage(t) not in new
                )
                ops.append((func, args, kwargs or {}, out := func(*args, **(kwargs or {}))))
                new.update({*map(storage, flat(out))} - {*map(storage, flat(args)), *map(storage, flat(kwargs))})
                return out

        def refuse(tensor: torch.Tensor, name: str, *args: Any, **kwargs: Any) -> Any:
            raise host_read(name)

        def to(tensor: torch.Tensor, *args: Any, to: Any = torch.Tensor.to, **kwargs: Any) -> Any:  # .to("cpu")
            if any(isinstance(a, str) and a.startswith("cpu") for a in (*args, kwargs.get("device"))):
                raise host_read(".to('cpu')")
            return to(tensor, *args, **kwargs)

        with contextlib.ExitStack() as stack:
            for name in self.HOST_READS:
                stack.enter_context(mock.patch.object(torch.Tensor, name, functools.partialmethod(refuse, name)))
            stack.enter_context(mock.patch.object(torch.Tensor, "to", to))
            for module in (torch.cpu, torch.cuda, torch.accelerator):  # a synchronisation: the CPU waits too
                stack.enter_context(mock.patch.object(module, "synchronize", functools.partial(refuse, None, "sync")))
            stack.enter_context(Recorder())
            output = fn(*static_inputs)
        if refused:  # caught by fn: on a GPU the capture is invalid all the same
            raise RuntimeError(f"CPU MODEL of a CUDA graph: {refused[0]} during capture invalidated it (caught or not)")
        [t.detach().copy_(was) for t, was in reversed(kept)]  # a GPU's capture runs nothing: what existed is unchanged
        made = [t for *_, o in ops for t in flat(o) if isinstance(t, torch.Tensor) and storage(t) in new]
        [t.detach().fill_(math.nan) for t in made if t.is_floating_point()]  # and what it made is not yet filled
        self._ops = ops
        return output

    def replay(self) -> None:
        """Re-run the recorded operators on the recorded tensors, each result written into the tensor capture made."""
        if self._ops is None:
            raise RuntimeError("nothing captured yet: call capture(fn, *static_inputs) first")
        with torch.no_grad():
            for func, args, kwargs, out in self._ops:
                result = func(*args, **kwargs)
                olds, news = (out, result) if isinstance(out, (tuple, list)) else ((out,), (result,))
                for old, new in zip(olds, news, strict=True):
                    if isinstance(old, torch.Tensor) and old.shape != new.shape:  # sizes read from values
                        raise RuntimeError(f"CPU MODEL of a CUDA graph: {func._opname} changed size after capture")
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


class _StandInLanguage:
    """The stand-in `triton.language`: `tl.constexpr` and the dtypes exist (for signatures); nothing runs."""

    class constexpr:  # noqa: N801 - Triton's own spelling, used in kernel signatures
        """Marks a compile-time argument; here only an annotation."""

    def __getattr__(self, name: str) -> Any:
        return f"tl.{name} (stand-in: Triton is missing)"


def missing_triton() -> tuple[Any, Any]:
    """Stand-ins for the `triton` and `triton.language` modules where Triton cannot be imported (LABELLED): `triton.jit`
    keeps the kernel's Python function, whose launch raises `RuntimeError` with what to install; `triton.cdiv` and
    `triton.next_power_of_2` work as Triton's do."""

    def jit(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
        return KernelNeedingTriton(fn) if fn is not None else KernelNeedingTriton

    triton = types.SimpleNamespace(jit=jit, cdiv=lambda x, y: (x + y - 1) // y, Config=lambda *args, **options: None)
    triton.next_power_of_2, triton.__version__ = lambda n: 1 << max(int(n) - 1, 0).bit_length(), "missing (stand-in)"
    triton.autotune = lambda configs, key, **options: lambda kernel: kernel  # nothing to tune where nothing runs
    return triton, _StandInLanguage()
