"""Chapter 07 exercises on the course's SIMULATED GPU (`helpers.standins.simulated_cuda`), from a caller's stream."""

import itertools
from typing import Any

import torch

from ..answers import Wrong, expect_function
from ..standins import SimulatedCuda, simulated_cuda
from .cases import questions, show, unchanged
from .ch06 import kept_current


def _upload(fn: Any, args: tuple, call: str, pinned: tuple = ()) -> tuple[Any, SimulatedCuda, str]:
    """fn(*args) on the simulated GPU (`pinned`: pinned already), then all it queued; and a copy the caller missed."""
    with simulated_cuda(copy_ms=1.0) as sim:
        caller = sim.current = sim.Stream(name="caller's stream")
        with sim.tensors(pinned):
            got = fn(*args)
        kept_current(sim, caller, call)
        sim.land(everything=True)
    late = [s.lane for s in sim.spans if s.kind == "copy" and s.end_ms > max(caller.free_ms, sim.host_ms)]
    said = f"{call}: a copy ran on the {late[0]} and the current stream did not wait for it" if late else ""
    return got, sim, said and f"{said}: make it wait for the {late[0]} before you return"


def _show(sim: SimulatedCuda, value: Any) -> str:
    """`show(value)`, with a tensor the simulated GPU holds (or a list's, up to 6) said to be on the GPU (or meta)."""
    if isinstance(value, list | tuple) and value:
        return "[" + ", ".join(_show(sim, v) for v in value[:6]) + (", …" if len(value) > 6 else "") + "]"
    where = sim.device[id(value)][1] if sim.is_on_gpu(value) else "cpu"
    return show(value).replace(" on cpu", " on the GPU" if where == "cuda" else f" on {where}")


def _waited(sim: SimulatedCuda, copy: Any) -> str:
    """What the host waited for, and when, around a copy it needed to wait for: as observed."""
    after = sim.host_waits[copy.waits_before :]
    when = "but not for it" if after else "only before the copy was queued"
    when = "for it after that refill" if copy.landed_by else when
    waits = ", ".join(dict.fromkeys([copy.landed_by] if copy.landed_by else after or sim.host_waits))
    return f"the copy ran on the {copy.stream} until {copy.end_ms:.3g} ms; the host waited {when} ({waits})"


#: Question 1's batches, pinned or not: as a pinning DataLoader gives them (two keys; none), one of each dtype by hand.
_DTYPES = (torch.int32, torch.int64, torch.bool, torch.half, torch.bfloat16, torch.float32)
_BATCHES = ((True, lambda: {"image": torch.rand(4, 3, 8, 8), "label": torch.arange(4)}), (True, lambda: {}))
_BATCHES += ((False, lambda: {str(dtype): torch.arange(5.0 + i).to(dtype) for i, dtype in enumerate(_DTYPES)}),)
_NEVER = "you recorded an event but the host never waited for it: call event.synchronize() after its record()"


def _check_to_device(fn: Any) -> None:
    expect_function(fn, "to_device", "(batch, device)")
    for (pinned, make), device in itertools.product(_BATCHES, (torch.device("meta"), torch.device("cuda"))):
        batch = make()
        kept, values = [(key, id(t)) for key, t in batch.items()], {key: t.clone() for key, t in batch.items()}
        keys = ", ".join(f"{key!r}: …" for key in batch)
        call = f"to_device({{{keys}}}{'' if pinned else ' (not pinned)'}, {device})"
        got, sim, late = _upload(fn, (batch, device), call, tuple(batch.values()) if pinned else ())
        if [(key, id(t)) for key, t in batch.items()] != kept or not unchanged(values, batch):
            raise Wrong(f"{call} changed its arguments: build a new dict and leave `batch` as it was")
        if not isinstance(got, dict) or got is batch or got.keys() != batch.keys():
            said = "batch" if got is batch else _show(sim, got)
            raise Wrong(f"{call} returned {said}; expected a new dict with its keys")
        for k, t in got.items():
            at, want = sim.device.get(id(t), (None, "the host"))[1], values[k]
            if at != device.type or not (isinstance(t, torch.Tensor) and t.dtype == want.dtype and t.equal(want)):
                raise Wrong(f"{call}[{k!r}] is {_show(sim, t)}, not batch[{k!r}] on {device}")
        waited = f"the host waited for {', '.join(dict.fromkeys(sim.host_waits))}; it need not wait at all (later GPU"
        if late or sim.host_waits:
            raise Wrong(late or f"{call}: {waited} work on the current stream waits for host→device copies by itself)")


def _check_to_host(fn: Any) -> None:
    expect_function(fn, "to_host", "(t)")
    kept = []  # each call's result and what it held: later ones (65 of a shape: a pool of 64) must leave them be
    for values in _TO_HOST:
        call = f"to_host({show(values).replace(' on cpu', ' on the GPU')})"
        with simulated_cuda(copy_ms=1.0) as sim:
            caller = sim.current = sim.Stream(name="caller's stream")
            sim.work("the kernel that writes t", 3.0)  # still running when to_host is called
            written, t = sim.current.free_ms, sim.on_gpu(values.clone())
            with sim.tensors():
                got = fn(t)
            read = got.clone() if isinstance(got, torch.Tensor) else None  # what the caller reads now
        kept_current(sim, caller, call)
        if not unchanged(values, t):
            raise Wrong(f"{call} changed its arguments: copy t, leave it as it was")
        if stale := [got for got, read in kept if not torch.equal(got, read)]:  # an earlier call's host tensor
            raise Wrong(f"{call} changed a tensor an earlier call returned (to {stale[0].tolist()}): return new ones")
        if read is None or sim.is_on_gpu(got):
            raise Wrong(f"{call} returned {_show(sim, got)}; expected a tensor on the host")
        for copy in [c for c in sim.copies if c.end_ms - sim.copy_ms < written]:  # it began before t was written
            said = f"{call}: the copy on the {copy.stream} started before the kernel writing t on the current stream"
            raise Wrong(f"{said} had finished at {written:.3g} ms: make its stream wait for the current stream")
        if (read.dtype, read.shape) == (values.dtype, values.shape) and torch.equal(read, values):
            if not sim.copies or all(c.destination.data_ptr() != got.data_ptr() for c in sim.copies):
                how = f"read t with {sim.host_waits[0]}" if not sim.copies else "returned a tensor no such copy filled"
                raise Wrong(f"{call}: the values are right, but it {how}: return what a non_blocking copy fills")
            mine = got.untyped_storage().data_ptr()  # a slice of a buffer that earlier results lie in, say
            if at := [k for k, (old, _) in enumerate(kept, 1) if old.untyped_storage().data_ptr() == mine]:
                raise Wrong(f"{call} returned memory that call {at[0]}'s result lies in: return a new tensor each call")
            kept.append((got, read))
            continue
        said = f"{call} returned {show(read)} holding {read.tolist()}; expected {values.dtype} {values.tolist()}"
        early = ": what the host buffer held before the copy landed: read it after waiting"  # what a read too soon saw
        if all(copy.landed for copy in sim.copies):  # nothing lands after fn returns: the host waits no more
            raise Wrong(said + early * bool(sim.copies and read.numel() and (read == sim.NOT_LANDED).all()))
        why = _NEVER if sim.recorded else "the copy had not arrived when to_host returned: wait for it first"
        raise Wrong(f"{said}: {_waited(sim, next(c for c in sim.copies if not c.landed)) if sim.host_waits else why}")


_TO_HOST = (*(torch.arange(1.0, 9.0) * k for k in range(1, 66)), torch.arange(6).view(3, 2).T, torch.rand(5).half())
#: Question 3's cases: (batches, the first), float32 and int64 (too large for float32), more than two buffers cover.
_UPLOADS = ((3, torch.arange(6.0).view(2, 3), "cuda"), (5, torch.arange(4) + 2**40, "meta"))


def _check_upload_all(fn: Any) -> None:
    expect_function(fn, "upload_all", "(batches, device)")
    for count, first, device in _UPLOADS:
        batches = [first + 100 * k for k in range(count)]
        given, held = [b.clone() for b in batches], list(batches)  # their values, and the tensors themselves
        call = f"upload_all({count} {first.dtype} batches of shape {tuple(first.shape)}, {device})"
        got, sim, late = _upload(fn, (batches, torch.device(device)), call)
        if not unchanged(given, batches) or list(map(id, held)) != list(map(id, batches)):
            raise Wrong(f"{call} changed its arguments (the list of batches or their values): leave them be")
        at = {sim.device.get(id(t), (t, "cpu"))[1] for t in got} if isinstance(got, list | tuple) else set()
        if at != {device} or len(got) != count:
            raise Wrong(f"{call} returned {_show(sim, got)}; expected {count} tensors on {device}, one per batch")
        why = "make the host wait for an event recorded after it, on its stream, before the next refill"
        for k, t in enumerate(got):
            if t.dtype != first.dtype:  # wrong whatever its values: say so, as observed
                raise Wrong(f"{call}: the tensor for batch {k} is {_show(sim, t)}; expected {first.dtype}")
            holds = [j for j, b in enumerate(given) if torch.equal(t, b)]
            said = f"{call}: the tensor for batch {k} holds {f'batch {holds[0]}' if holds else 'no batch'}'s values"
            if holds and holds[0] > k:  # what a copy that reads the buffer after a later refill gives
                copy = next((c for c in sim.copies if c.destination is t), None)
                seen = f"{_waited(sim, copy)}: " if copy and sim.host_waits else ""
                raise Wrong(f"{said}: its copy read the buffer after a refill: {seen}{why}")
            if holds != [k]:
                raise Wrong(f"{said} ({_show(sim, t)})")
        pageable, blocking, pinned = sim.kinds["pageable"], sim.kinds["blocking"], len(sim.pinned)
        if late or pageable or blocking or pinned > 1:
            said = f"{call}: right values, but copies from pageable memory: {pageable}, blocking copies: {blocking}, "
            said += f"pinned buffers: {pinned}; copy from the one pinned staging buffer, non_blocking"
            raise Wrong(late or said)


_TEXTS = {  # each question's variable: its task, then (after a newline) its hint
    "to_device": "Write `to_device(batch, device)`: return a new dict with every tensor of the dict `batch` moved to "
    "`device` with non_blocking=True, without making the host wait: no synchronisation at all.\nA dict comprehension "
    "over batch.items() with t.to(device, non_blocking=True), which queues each copy and goes on. No "
    "torch.cuda.synchronize() inside: later kernels on the stream wait for the copies.",
    "to_host": "Write `to_host(t)`: copy the GPU tensor `t` to the host with non_blocking=True, wait until the copy "
    "has arrived (an event recorded after it, or a synchronisation), and return the host tensor.\nhost = t.to('cpu', "
    "non_blocking=True) only queues the copy. copied = torch.cuda.Event(); copied.record() marks the stream after it, "
    "and copied.synchronize() makes the host wait for that mark.",
    "upload_all": "Debug `upload_all(batches, device)` (batches of one shape and dtype): some arrive holding another "
    "batch's values. Make all arrive intact, keeping the one pinned staging buffer and non_blocking copies.\nA "
    "non_blocking copy from pinned memory reads the buffer when the GPU gets to it, maybe after the next refill: "
    "record a torch.cuda.Event() after each copy, and call its synchronize() before the next refill.",
}
_CHECKS = (_check_to_device, _check_to_host, _check_upload_all)
QUESTIONS = questions("07", _TEXTS, _CHECKS)
