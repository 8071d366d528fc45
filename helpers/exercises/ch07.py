"""Chapter 07 exercises: move a batch without waiting, wait for a device→host copy before reading it,
and debug a pinned staging buffer that is refilled before its copy has run.

All three run on any machine. Question 1 calls the learner's function on the `meta` device and counts
the waits it makes (`torch.cuda.synchronize` and friends are replaced by counters while it runs).
Question 2 runs it on the course's *simulated* GPU (`helpers.standins.simulated_cuda`): a copy
issued with `non_blocking=True` to the host is only queued, and its values land when the host
waits past it (an event recorded after the copy and synchronised, or a synchronise of the device
or stream), as on a real GPU. Question 3 runs it there too, with host→device copies added by
`_Uploads` below: a `non_blocking` copy from pinned memory reads its source only when the simulated
stream reaches it, so a buffer refilled before then sends the new values.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from ..checking import Question, Wrong, expect_function
from ..standins import SimulatedCuda, names_the_cpu, non_blocking, simulated_cuda
from .calls import CallLog


class _Waits:
    """Counts the host's waits for a device while the learner's code runs."""

    def __init__(self) -> None:
        self.count = 0

    def wait(self, *args: Any, **kwargs: Any) -> None:
        self.count += 1


@contextlib.contextmanager
def _replaced(*replacements: tuple[Any, str, Any]) -> Iterator[None]:
    """Set each (object, attribute, value) for the duration, and restore them all whatever happens."""
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in replacements]
    try:
        for obj, name, value in replacements:
            setattr(obj, name, value)
        yield
    finally:
        for obj, name, value in reversed(saved):
            setattr(obj, name, value)


# -- Question 1: a batch moved with non_blocking=True and no wait per tensor ---------------------------


def _refuse_cuda_and_pinning(log: CallLog) -> None:
    """A `Wrong` for `.cuda()` and for pinning the batch again, whether or not the call worked here."""
    if log.named({"cuda"}):
        raise Wrong(".cuda() always means a CUDA GPU: use .to(device) with the device you were given")
    if log.named({"pin_memory"}):
        raise Wrong(
            "the DataLoader already pinned the batch (pin_memory=True); pinning again first copies every "
            "tensor on the host (section 5)"
        )


class _WaitingStream:
    """`torch.cuda.current_stream()` while question 1 runs: its waits are counted like `synchronize`'s."""

    def __init__(self, waits: _Waits) -> None:
        self.synchronize = waits.wait

    def wait_stream(self, *args: Any, **kwargs: Any) -> None:
        """A stream waiting for a stream: no wait of the host's."""


def _check_to_device(fn: Any) -> None:
    expect_function(fn, "to_device", "(batch, device)")
    for device in ("meta", "cpu"):  # two devices: an answer that names one itself fails with the other
        _check_to_device_on(fn, torch.device(device))


def _check_to_device_on(fn: Any, device: torch.device) -> None:
    batch = {"image": torch.ones(4, 3, 8, 8), "label": torch.arange(4)}
    given = dict(batch)
    waits, log = _Waits(), CallLog()
    try:
        with (
            _replaced(
                (torch.cuda, "synchronize", waits.wait),
                (torch.accelerator, "synchronize", waits.wait),
                (torch.cuda, "current_stream", lambda *args, **kwargs: _WaitingStream(waits)),
            ),
            log,
        ):
            got = fn(batch, device)
    except Exception:
        _refuse_cuda_and_pinning(log)
        raise
    _refuse_cuda_and_pinning(log)
    moves = [
        non_blocking(c.args[1:], c.kwargs)
        for c in log.named({"to", "copy_"})
        if any(a is t for a in c.args for t in given.values())
    ]
    if batch.keys() != given.keys() or any(batch[key] is not given[key] for key in given):
        raise Wrong("your function changed the batch it was given: build a new dict and leave `batch` as it was")
    if not isinstance(got, dict):
        raise Wrong(f"return a dict with the same keys as the batch, not a {type(got).__name__}")
    if set(got) != set(given):
        raise Wrong(f"the returned dict should have the keys {sorted(given)}, not {sorted(map(str, got))}")
    for key, t in got.items():
        if not isinstance(t, torch.Tensor) or t.device.type != device.type:
            where = t.device if isinstance(t, torch.Tensor) else type(t).__name__
            raise Wrong(
                f"{key!r} should be on the device you were given (the checker passes {device}), not {where}: "
                "t.to(device) returns a new tensor, keep it"
            )
        if t.shape != given[key].shape or t.dtype != given[key].dtype:
            raise Wrong(f"{key!r} should keep its shape and dtype; moving a tensor changes only its device")
    if got is batch:
        raise Wrong("build a new dict and leave the batch you were given as it was")
    if waits.count > 1:
        raise Wrong(
            f"your function waited {waits.count} times: no synchronize per tensor; later GPU work waits for "
            "host→device copies by itself"
        )
    if not moves or not all(moves):
        raise Wrong("pass non_blocking=True to each .to(...): without it the host waits after every copy")


# -- Question 2: a device→host copy guarded by an event ---------------------------------------------


#: Device→host copies of the simulated GPU take this long, far more than a launch: one that is only
#: queued when the function returns has not landed.
_COPY_MS = 1.0


def _check_to_host(fn: Any) -> None:
    expect_function(fn, "to_host", "(t)")
    values = torch.arange(1.0, 9.0)
    with simulated_cuda(copy_ms=_COPY_MS) as sim:
        on_gpu = sim.on_gpu(values.clone())
        with sim.tensors():
            got = fn(on_gpu)
        read_now = got.clone() if isinstance(got, torch.Tensor) else None  # what the caller reads on return
    if read_now is None:
        raise Wrong(f"return the host tensor, not {type(got).__name__}")
    if sim.is_on_gpu(got):
        raise Wrong("that is still the GPU tensor: copy it to the host with .to('cpu', non_blocking=True)")
    if read_now.shape != values.shape:
        raise Wrong(f"the host tensor should have the shape of t, {tuple(values.shape)}, not {tuple(read_now.shape)}")
    if not sim.copies:
        if sim.blocking_reads:
            raise Wrong(
                "that copy blocks (.cpu() or non_blocking=False): the values are right, but the task is to "
                "start the copy with non_blocking=True and then wait for it yourself"
            )
        raise Wrong("copy t to the host with t.to('cpu', non_blocking=True)")
    if torch.equal(read_now.to(values.dtype), values):
        return
    waited_for_an_event = "event.synchronize()" in sim.host_waits
    if waited_for_an_event and any(event.copies_before == 0 for event in sim.recorded):
        raise Wrong(
            "you waited for an event recorded before the copy was queued, so the copy had not landed: "
            "record the event after the copy"
        )
    if sim.recorded and not waited_for_an_event:
        raise Wrong(
            "you recorded an event but the host never waited for it: call event.synchronize() "
            "(event.wait() makes a stream wait, not the host)"
        )
    raise Wrong(
        "the values had not arrived when your function returned: a non_blocking copy to the host is only "
        "queued; record an event after it and call event.synchronize() (or torch.cuda.synchronize())"
    )


# -- Question 3: debug a pinned staging buffer refilled too early -------------------------------------


class _Uploads(TorchFunctionMode):
    """Host→device copies on the simulated GPU (SIMULATION): while active, any device but the CPU is
    played by host tensors; a `non_blocking` copy from pinned memory is queued on the current
    simulated stream and reads its source when the stream has passed it, so writing into the source
    before then changes what arrives. Pageable and blocking copies read their source at once.
    """

    def __init__(self, sim: SimulatedCuda) -> None:
        super().__init__()
        self.sim = sim
        self.pinned: list[torch.Tensor] = []  # compared by identity
        self.on_device: list[torch.Tensor] = []
        self.pending: list[tuple[torch.Tensor, torch.Tensor, float]] = []  # (source, destination, end)
        self.queued = self.blocking = self.pageable = 0

    def holds(self, value: Any, where: list[torch.Tensor]) -> bool:
        return isinstance(value, torch.Tensor) and any(value is t for t in where)

    def land(self, everything: bool = False) -> None:
        """Copies the stream has finished by the host's present (or all of them) read their source now."""
        waiting = []
        for source, destination, end in self.pending:
            if everything or end <= self.sim.host_ms:
                destination.copy_(source)
            else:
                waiting.append((source, destination, end))
        self.pending = waiting

    def _copy(self, source: torch.Tensor, destination: torch.Tensor, asked_non_blocking: bool) -> torch.Tensor:
        stream = self.sim.current
        self.sim.host_ms += self.sim.launch_ms
        end = max(self.sim.host_ms, stream.free_ms) + self.sim.copy_ms
        stream.free_ms = end
        if not self.holds(source, self.pinned):
            self.pageable += 1  # the driver stages pageable data before the call returns
            destination.copy_(source)
        elif not asked_non_blocking:
            self.blocking += 1  # the host waits for the copy
            self.sim.host_waits.append("a blocking copy")
            self.sim.host_ms = max(self.sim.host_ms, end)
            self.land()
            destination.copy_(source)
        else:
            self.queued += 1
            self.pending.append((source, destination, end))
        return destination

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs, name = dict(kwargs or {}), getattr(func, "__name__", "")
        self.land()  # whatever the host does now, the copies the GPU has finished have read their source
        source = args[0] if args else None
        pin = bool(kwargs.pop("pin_memory", False))
        moves = name == "cuda" or (
            name == "to" and _names_a_device(args, kwargs) and not names_the_cpu(args[1:], kwargs)
        )
        to_device = kwargs.get("device") is not None and not names_the_cpu((), kwargs)
        if to_device:
            kwargs["device"] = "cpu"
        if name == "is_pinned" and isinstance(source, torch.Tensor):
            return self.holds(source, self.pinned)
        if name == "pin_memory" and isinstance(source, torch.Tensor):
            result = source.clone()
            self.pinned.append(result)
            return result
        if moves and isinstance(source, torch.Tensor) and not self.holds(source, self.on_device):
            destination = torch.full_like(source, float("nan") if source.is_floating_point() else -1)
            self.on_device.append(destination)
            return self._copy(source, destination, non_blocking(args[1:], kwargs))
        if (
            name == "copy_"
            and len(args) >= 2
            and self.holds(source, self.on_device)
            and not self.holds(args[1], self.on_device)
        ):
            return self._copy(args[1], source, non_blocking(args[2:], kwargs))
        if moves:
            return source
        result = func(*args, **kwargs)
        if isinstance(result, torch.Tensor):
            if pin:
                self.pinned.append(result)
            if to_device or any(self.holds(a, self.on_device) for a in args):
                self.on_device.append(result)
        return result


def _names_a_device(args: tuple, kwargs: dict) -> bool:
    """Whether a `Tensor.to` call names a device (not only a dtype)."""
    return any(isinstance(a, (str, torch.device)) for a in args[1:]) or kwargs.get("device") is not None


#: The batches the checker uploads: batch k is filled with k + 1, so a wrong value says whose it is.
_UPLOADS = 4


def _check_upload_all(fn: Any) -> None:
    expect_function(fn, "upload_all", "(batches, device)")
    batches = [torch.full((2, 3), float(k + 1)) for k in range(_UPLOADS)]
    given = [b.clone() for b in batches]
    with simulated_cuda(copy_ms=_COPY_MS) as sim:
        uploads = _Uploads(sim)
        with uploads:
            got = fn(batches, torch.device("cuda"))
        uploads.land(everything=True)  # the GPU runs what is still queued; each copy reads its source then
    if not isinstance(got, (list, tuple)) or not all(isinstance(t, torch.Tensor) for t in got):
        raise Wrong(f"return a list of the tensors on the device, one per batch, not {type(got).__name__}")
    if len(got) != _UPLOADS:
        raise Wrong(f"given {_UPLOADS} batches, return {_UPLOADS} tensors on the device, not {len(got)}")
    if any(not torch.equal(b, g) for b, g in zip(batches, given, strict=True)):
        raise Wrong("your function changed the batches it was given: refill the staging buffer, not them")
    for k, t in enumerate(got):
        if not uploads.holds(t, uploads.on_device):
            raise Wrong(f"tensor {k} is still on the host: return what .to(device, non_blocking=True) gives")
        if t.shape == given[k].shape and torch.equal(t, given[k]):
            continue
        holds = [j for j, b in enumerate(given) if t.shape == b.shape and torch.equal(t, b)]
        seen = f"batch {holds[0]}'s values" if holds else "values of no batch"
        said = f"the tensor for batch {k} holds {seen}: its copy ran after the staging buffer had been refilled"
        if "event.synchronize()" in sim.host_waits or "torch.cuda.synchronize()" in sim.host_waits:
            raise Wrong(
                f"{said}. You waited, but not for this copy: before each refill wait for an event recorded "
                "right after the copy that reads the buffer"
            )
        if sim.recorded:
            raise Wrong(
                f"{said}. You recorded an event but the host never waited for it: call event.synchronize() "
                "before the refill (event.wait() makes a stream wait, not the host)"
            )
        raise Wrong(
            f"{said}. A non_blocking copy from pinned memory reads the buffer only when the GPU gets there: record an "
            "event after each copy and wait for it before you refill the buffer"
        )
    if uploads.pageable:
        raise Wrong(
            f"{uploads.pageable} of the copies came from pageable memory: the values are right, but the task is "
            "to keep the pinned staging buffer and make its reuse safe"
        )
    if len(uploads.pinned) > 2:
        raise Wrong(
            f"you pinned {len(uploads.pinned)} buffers for {_UPLOADS} batches: each pin costs a host copy and "
            "unswappable memory (section 5); reuse one buffer (or two) and wait before refilling it"
        )
    if uploads.blocking:
        raise Wrong(
            "the copies block (non_blocking=False): the values are right, but the host then waits for every "
            "copy; keep non_blocking=True and wait only before a refill"
        )


QUESTIONS = [
    Question(
        number=1,
        task="Write `to_device(batch, device)`: return a new dict with every tensor of the dict `batch` moved "
        "to `device` with non_blocking=True, and no synchronisation per tensor.",
        variable="to_device",
        checker=_check_to_device,
        hint_text="A dict comprehension over batch.items(); t.to(device, non_blocking=True) queues each copy "
        "without waiting for the GPU (from pinned memory, as a DataLoader with pin_memory=True gives, it returns "
        "at once). Do not call torch.cuda.synchronize() inside: kernels that use the tensors later wait for the "
        "copies on the stream anyway.",
        chapter="07",
        context=lambda: {"torch": torch},
    ),
    Question(
        number=2,
        task="Write `to_host(t)`: copy the GPU tensor `t` to the host with non_blocking=True, wait until the "
        "copy has arrived (an event recorded after it, or a synchronisation), and return the host tensor.",
        variable="to_host",
        checker=_check_to_host,
        hint_text="host = t.to('cpu', non_blocking=True) only queues the copy. Then copied = torch.cuda.Event(); "
        "copied.record() marks the stream right after it, and copied.synchronize() makes the host wait for "
        "that mark. Return host after the wait.",
        chapter="07",
        context=lambda: {"torch": torch},
    ),
    Question(
        number=3,
        task="Debug `upload_all(batches, device)`: it refills one pinned staging buffer for every batch and copies "
        "it with non_blocking=True, and some batches arrive with another batch's values. Make every batch arrive "
        "intact, keeping the pinned buffer and the non_blocking copies.",
        variable="upload_all",
        checker=_check_upload_all,
        hint_text="A non_blocking copy from pinned memory reads the buffer when the GPU reaches it, which can be "
        "after the next refill. After each copy record a torch.cuda.Event(), and before writing into the buffer "
        "again call that event's synchronize(): the host then waits for that copy only. (Two buffers, each with "
        "its own event, let the host fill one while the other is being read.)",
        chapter="07",
        context=lambda: {"torch": torch},
    ),
]
