"""Chapter 07 exercises, each on the course's SIMULATED GPU (`helpers.standins.simulated_cuda`)."""

import itertools
from collections.abc import Iterable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from ..checking import Question, Wrong, expect_function
from ..standins import SimulatedCuda, non_blocking, simulated_cuda
from .cases import show, unchanged


class _Uploads(TorchFunctionMode):
    """SIMULATED host→device copies: a non_blocking one from pinned memory reads its source when the stream gets
    there. Host tensors play the device's; work on one runs at once, on what it holds then."""

    def __init__(self, sim: SimulatedCuda, pinned: Iterable[torch.Tensor] = ()) -> None:
        super().__init__()
        self.sim, self.count = sim, dict.fromkeys(("pageable", "blocking", "non_blocking"), 0)  # copies of each kind
        self.pinned = {id(t): t for t in pinned}  # by id, as are the tensors playing a device's (with its type)
        self.device, self.pending = {}, []  # and the queued copies: (source, destination, end ms)

    def land(self, everything: bool = False) -> None:  # the copies finished by now (or all) read their source
        for source, destination, _ in [p for p in self.pending if everything or p[2] <= self.sim.host_ms]:
            destination.copy_(source)
        self.pending = [p for p in self.pending if not (everything or p[2] <= self.sim.host_ms)]

    def copy(self, source: torch.Tensor, destination: torch.Tensor, asked_non_blocking: bool) -> torch.Tensor:
        kind = "pageable" if id(source) not in self.pinned else "non_blocking" if asked_non_blocking else "blocking"
        self.count[kind] += 1
        self.sim.work(f"{kind} copy to the device", self.sim.copy_ms, "copy")
        self.pending.append((source, destination, self.sim.current.free_ms if kind == "non_blocking" else 0.0))
        if kind == "blocking":  # the host waits for it, and so for the copies queued before it
            self.sim._host_waits(self.sim.current.free_ms, "a blocking copy")
        self.land()  # a pageable or blocking copy has read its source before the call returns
        return destination

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs, name = dict(kwargs or {}), getattr(func, "__name__", "")
        self.land()  # whatever the host does now, the copies the GPU has finished have read their source
        pin = bool(kwargs.pop("pin_memory", False)) or name == "pin_memory"
        given = (kwargs.get("device"), *(args[1:] if name == "to" else ()))  # where a device can be named
        places = [p for p in given if isinstance(p, str | torch.device)]
        there = "cuda" if name == "cuda" else str(places[0]).split(":")[0] if places else "cpu"
        if name in ("to", "cuda") and there != "cpu":
            if id(args[0]) in self.device:
                return args[0]
            made = torch.full_like(args[0], -1)
            self.device[id(made)] = made, there
            return self.copy(args[0], made, non_blocking(args[1:], kwargs))
        if name == "copy_" and len(args) > 1 and id(args[0]) in self.device and id(args[1]) not in self.device:
            return self.copy(args[1], args[0], non_blocking(args[2:], kwargs))
        kwargs |= {"device": "cpu"} if there != "cpu" else {}
        result = args[0].clone() if name == "pin_memory" else func(*args, **kwargs)
        there = self.device[id(args[0])][1] if args and id(args[0]) in self.device else there  # work stays there
        self.pinned |= {id(result): result} if pin else {}
        self.device |= {id(result): (result, there)} if there != "cpu" else {}
        return result


#: Question 1's batches, as a DataLoader with pin_memory=True gives them: two keys; none; one of each dtype.
_DTYPES = (torch.int32, torch.int64, torch.bool, torch.half, torch.bfloat16, torch.float32)
_BATCHES = (
    lambda: {"image": torch.rand(4, 3, 8, 8), "label": torch.arange(4)},
    lambda: {},
    lambda: {str(dtype): torch.arange(5.0 + i).to(dtype) for i, dtype in enumerate(_DTYPES)},
)


def _check_to_device(fn: Any) -> None:
    expect_function(fn, "to_device", "(batch, device)")
    for make, device in itertools.product(_BATCHES, (torch.device("meta"), torch.device("cuda"))):
        batch = make()
        kept, values = [(key, id(t)) for key, t in batch.items()], {key: t.clone() for key, t in batch.items()}
        call = f"to_device({{{', '.join(f'{key!r}: …' for key in batch)}}}, {device})"
        with simulated_cuda(copy_ms=1.0) as sim:
            with _Uploads(sim, pinned=batch.values()) as uploads:
                got = fn(batch, device)
            uploads.land(everything=True)  # the GPU runs what is still queued
        if [(key, id(t)) for key, t in batch.items()] != kept or not unchanged(values, batch):
            raise Wrong(f"{call} changed its arguments: build a new dict and leave `batch` as it was")
        if not isinstance(got, dict) or got is batch or got.keys() != batch.keys():
            raise Wrong(f"{call} returned {'batch' if got is batch else show(got)}; expected a new dict with its keys")
        for k, t in got.items():
            at, want = uploads.device.get(id(t), (None, "the host"))[1], values[k]
            if at != device.type or not (isinstance(t, torch.Tensor) and t.dtype == want.dtype and t.equal(want)):
                raise Wrong(f"{call}[{k!r}] is {show(t).replace(' on cpu', f' on {at}')}, not batch[{k!r}] on {device}")
        if uploads.count["blocking"] or len(sim.host_waits) > 1:  # one wait for the batch is not one per tensor
            raise Wrong(f"{call}: the host waited for {', '.join(sim.host_waits)}; no wait per tensor")


def _check_to_host(fn: Any) -> None:
    expect_function(fn, "to_host", "(t)")
    for values in (torch.arange(1.0, 9.0), torch.arange(6).view(2, 3) * 7, torch.rand(5).half()):
        call = f"to_host({show(values).replace(' on cpu', ' on the GPU')})"
        with simulated_cuda(copy_ms=1.0) as sim:
            t = sim.on_gpu(values.clone())
            with sim.tensors():
                got = fn(t)
            read = got.clone() if isinstance(got, torch.Tensor) else None  # what the caller reads now
        if not unchanged(values, t):
            raise Wrong(f"{call} changed its arguments: copy t, leave it as it was")
        if read is None or sim.is_on_gpu(got):
            raise Wrong(f"{call} returned {show(got).replace(' on cpu', ' on the GPU')}; expected a tensor on the host")
        if (read.dtype, read.shape) == (values.dtype, values.shape) and torch.equal(read, values):
            if not sim.copies:
                raise Wrong(f"{call}: the values are right, but it read t with {sim.host_waits[0]}, not non_blocking")
            continue
        said = f"{call} returned {show(read)} holding {read.tolist()}; expected {values.dtype} {values.tolist()}"
        if all(copy.landed for copy in sim.copies):  # nothing lands after fn returns: the host waits no more
            raise Wrong(said)
        if "event.synchronize()" in sim.host_waits and not any(e.copies_before for e in sim.recorded):
            raise Wrong(f"{said}: you waited for an event recorded before the copy was queued; record it after")
        if sim.recorded and not sim.host_waits:
            raise Wrong(f"{said}: you recorded an event but the host never waited for it: call event.synchronize()")
        raise Wrong(f"{said}: the copy had not arrived when to_host returned; wait for it before you return")


def _check_upload_all(fn: Any) -> None:
    expect_function(fn, "upload_all", "(batches, device)")
    for count, first in ((3, torch.arange(6.0).view(2, 3)), (5, torch.arange(4.0))):  # more than two buffers cover
        batches = [first + 100 * k for k in range(count)]
        given, call = [b.clone() for b in batches], f"upload_all({count} batches of shape {tuple(first.shape)}, cuda)"
        with simulated_cuda(copy_ms=1.0) as sim:
            with _Uploads(sim) as uploads:
                got = fn(batches, torch.device("cuda"))
            uploads.land(everything=True)  # the GPU runs what is still queued; each copy reads its source then
        if not unchanged(given, batches):
            raise Wrong(f"{call} changed its arguments: refill the staging buffer, not the batches")
        if not isinstance(got, list | tuple) or len(got) != count or not all(id(t) in uploads.device for t in got):
            raise Wrong(f"{call} returned {show(got)}; expected {count} tensors on the device, one per batch")
        for k, t in enumerate(got):
            holds = [j for j, b in enumerate(given) if b.shape == t.shape and torch.equal(t, b)]
            said = f"{call}: the tensor for batch {k} holds {f'batch {holds[0]}' if holds else 'no batch'}'s values"
            if holds and holds[0] > k:  # what a copy that reads the buffer after a later refill gives
                raise Wrong(f"{said}: its copy read the buffer after a refill: wait for an event recorded after it")
            if holds != [k]:
                raise Wrong(said)
        if uploads.count["pageable"] or uploads.count["blocking"] or len(uploads.pinned) > 2:
            raise Wrong(f"{call}: right values, but its copies: {uploads.count}; pinned buffers: {len(uploads.pinned)}")


QUESTIONS = [
    Question(
        number=1,
        task="Write `to_device(batch, device)`: return a new dict with every tensor of the dict `batch` moved "
        "to `device` with non_blocking=True, and no synchronisation per tensor.",
        variable="to_device",
        checker=_check_to_device,
        hint_text="A dict comprehension over batch.items() with t.to(device, non_blocking=True), which queues each "
        "copy and goes on. No torch.cuda.synchronize() inside: later kernels on the stream wait for the copies.",
        chapter="07",
    ),
    Question(
        number=2,
        task="Write `to_host(t)`: copy the GPU tensor `t` to the host with non_blocking=True, wait until the "
        "copy has arrived (an event recorded after it, or a synchronisation), and return the host tensor.",
        variable="to_host",
        checker=_check_to_host,
        hint_text="host = t.to('cpu', non_blocking=True) only queues the copy. copied = torch.cuda.Event(); "
        "copied.record() marks the stream after it, and copied.synchronize() makes the host wait for that mark.",
        chapter="07",
    ),
    Question(
        number=3,
        task="Debug `upload_all(batches, device)`: some batches arrive holding another batch's values. Make every "
        "batch arrive intact, keeping the one pinned staging buffer and the non_blocking copies.",
        variable="upload_all",
        checker=_check_upload_all,
        hint_text="A non_blocking copy from pinned memory reads the buffer when the GPU gets to it, maybe after the "
        "next refill: record a torch.cuda.Event() after each copy, and call its synchronize() before the next refill.",
        chapter="07",
    ),
]
