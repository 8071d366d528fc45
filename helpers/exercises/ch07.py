"""Chapter 07 exercises: move a batch without waiting, and wait for a device→host copy before reading it.

Both run on any machine. Question 1 calls the learner's function on the `meta` device and counts
the waits it makes (`torch.cuda.synchronize` and friends are replaced by counters while it runs).
Question 2 runs it on the course's *simulated* GPU (`helpers.standins.simulated_cuda`): a copy
issued with `non_blocking=True` to the host is only queued, and its values land when the host
waits past it (an event recorded after the copy and synchronised, or a synchronise of the device
or stream), as on a real GPU.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch

from ..checking import Question, Wrong, expect_function
from ..standins import non_blocking, simulated_cuda
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
]
