"""Chapter 07 exercises on the course's SIMULATED GPU (`helpers.standins.simulated_cuda`), and question 1 on a GPU."""

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

import torch

from ..answers import Wrong, expect_function
from ..standins import SimulatedCuda, SimulatedStream, simulated_cuda
from .cases import call_or_wrong, questions, show, unchanged
from .ch06 import kept_current

#: show(value), a tensor the simulated GPU holds said to be on it
_show = lambda s, v: show(v, lambda t: {"cuda": "the GPU"}.get(d := s.device[id(t)][1] if s.is_on_gpu(t) else "cpu", d))
#: Question 1's cases: (batches, dtype, pinned (else sent to `meta`), ms a step, ends in .item(), calls in a row, the
#: second left a batch early); steps shorter than copies run on the default stream, the others on a caller's stream
_PREFETCH = ((6, torch.float, 1, 1, 1, 1), (5, torch.long, 0, 2, 0, 1), (1, torch.half, 1, 1, 0, 1))
_PREFETCH += ((0, torch.int, 1, 1, 0, 1), (4, torch.double, 1, 0.5, 0, 1), (99, torch.float, 1, 3, 0, 3))


def _yielded(fn: Any, args: tuple, call: str, most: int) -> Iterator:  # fn(*args)'s items; its errors, the learner's
    if not isinstance(got := call_or_wrong(fn, args, call), Iterable):
        raise Wrong(f"{call} returned {show(got)}; expected a generator: `yield` each batch on the device")
    batches = call_or_wrong(iter, (got,), call)
    yield from itertools.islice(iter(lambda: call_or_wrong(next, (batches, ...), call), ...), most + 1)


def _check_prefetched(fn: Any) -> None:
    expect_function(fn, "prefetched", "(batches, device)")
    for count, dtype, pinned, step_ms, item, calls in _PREFETCH:  # each copy takes 1 ms
        host, device = [torch.arange(4.0, dtype=dtype) + 100 * k for k in range(count)], ("meta", "cuda")[pinned]
        device, n = torch.device(device), count // calls  # `meta` for pageable batches; n a call, one after another
        again = f" {calls} times, the second left after {n - 1} (a break; batches numbered as taken)" * (calls > 1)
        call = f"prefetched({n} {'pinned' * pinned or 'pageable'} {dtype} batches, {device}){again} (copies 1 ms, "
        call, read, made, steps, marks = f"{call}steps {step_ms:g} ms{' then .item()' * item})", [], {}, [], []
        with simulated_cuda(copy_ms=1.0) as sim:
            caller = sim.current = sim.default if step_ms < 1 else SimulatedStream(sim, "caller's stream")
            mark = lambda t, s=sim, m=made: m.setdefault(id(t), (s.current, s.current.free_ms, len(s.spans))) and t
            sim.on_gpu = lambda t, d="cuda", s=sim, mark=mark: SimulatedCuda.on_gpu(s, mark(t), d)  # made where, when
            with sim.tensors(host * pinned):
                parts = [(read.append(b) or b for b in host[i : i + n]) for i in range(0, count or 1, n or 1)]
                runs = [_yielded(fn, (p, device), call, n - 2 * (i == 1)) for i, p in enumerate(parts)]  # 2nd: n - 1
                host, count = (host[: 2 * n - 1] + host[2 * n :], count - 1) if calls > 1 else (host, count)  # taken
                for k, x in enumerate(itertools.chain(*runs)):
                    marks.append(len(sim.spans))  # the caller lets batch k - 1 go now
                    if sim.current is not caller:
                        raise Wrong(f"{call} yielded batch {k} with the {sim.current.name} current, not the caller's")
                    if len(read) > k + 3 + (calls > 1 and k >= 2 * n - 1):  # read one at a time, as from a DataLoader
                        raise Wrong(f"{call} read {len(read)} batches before it yielded batch {k}: two ahead at most")
                    sim.work(f"step on batch {k}", step_ms)
                    steps.append((x, sim.spans[-1].start_ms, sim.spans[-1].end_ms, len(sim.copies), marks[-1]))
                    if calls > 1 and k == 2 * n - 2:  # it breaks: lets batch k go, the generator not resumed
                        marks.append(len(sim.spans))
                    sim.host_ms = max(sim.host_ms, caller.free_ms * item)  # the step's .item() waits for it
        sim.land(everything=True)
        if len(steps) != count:
            raise Wrong(f"{call} yielded {len(steps)}{'+' * (len(steps) > count)} batches; expected {count}, in order")
        for k, (x, start, end, queued, _) in enumerate(steps):
            if not (sim.is_on_gpu(x) and sim.device[id(x)][1] == device.type and x.dtype == host[k].dtype):
                raise Wrong(f"{call}: batch {k} is {_show(sim, x)}; expected batch {k}, {dtype}, on {device}")
            into = [(i < queued, c) for i, c in enumerate(sim.copies) if c.destination.data_ptr() == x.data_ptr()]
            c = ([c for before, c in into if before] or [None])[-1]  # the copy that filled it, before its yield
            d = [c, *(d for before, d in into if not before and d.end_ms - sim.copy_ms < end - 1e-9)][-1]  # or a refill
            if not (got := (d.source if d else x).to(dtype)).equal(host[k]):  # the values its step read
                said = ([f"batch {j}'s values" for j, b in enumerate(host) if got.equal(b)] or [f"{got.tolist()}"])[0]
                said += f" (refilled on the {getattr(d, 'stream', '')} while its step ran)" * (d is not c)
                raise Wrong(f"{call}: batch {k} holds {said}; expected {host[k].tolist()}")
            if c and start < c.end_ms:
                said = f"the step on batch {k} began at {start:.3g} ms, before its copy on the {c.stream} ended at "
                raise Wrong(f"{call}: {said}{c.end_ms:.3g} ms: make the current stream wait for that copy first")
            if c and (m := made[id(c.destination)])[0].name != c.stream and c.end_ms - sim.copy_ms < m[1] - 1e-9:
                said = f"batch {k}'s copy on the {c.stream} began at {c.end_ms - sim.copy_ms:.3g} ms, into memory the "
                said += f"{m[0].name} made while its work ran until {m[1]:.3g} ms, which may still use it: make the "
                raise Wrong(f"{call}: {said}{c.stream} wait for the {m[0].name} first")
        uses = [(x, caller, end, mark, f"batch {k}") for k, (x, _, end, _, mark) in enumerate(steps)]  # steps' reads
        uses += [(a, *made[id(r)], f"the input of {f.__name__}()") for f, args, _, r in sim._later for a in args]
        for t, on, until, after, what in uses:  # memory made on another stream: let go at the next yield after?
            mine, gone = made.get(id(t), (on,))[0].name, next((m for m in marks if m > after), len(sim.spans))
            later = [s.start_ms for s in sim.spans[gone:] if s.lane == mine and s.start_ms < until]
            if mine != on.name and (t.untyped_storage().data_ptr(), on) not in sim.kept and later:
                said = f"{what} (made on the {mine}, no record_stream for the {on.name}) is read until {until:.3g} ms"
                raise Wrong(f"{call}: {said}: once let go, its memory may go to the {mine}'s work at {later[0]:.3g} ms")
        if why := ", ".join(dict.fromkeys(sim.host_waits)) or "its pageable copies" * bool(sim.kinds["pageable"]):
            raise Wrong(f"{call}: the host waited for {why}: queue pinned copies non_blocking, let streams wait")
        total, best = max(caller.free_ms, *(s.free_ms for s in sim.streams)), min(1, step_ms) + count * max(1, step_ms)
        if count > 1 and total > best + count * min(1, step_ms) / 2:  # copies and steps took turns: no overlap
            began = [(s.start_ms, s.end_ms) for s in sim.spans if s.kind == "copy"] + [(0.0, 1e9)] * count  # in turn
            said = f"{call} took {total:.3g} ms, not {best} (each copy during the step before it)"
            on = "its copies ran on the caller's stream" * (caller.name in {c.stream for c in sim.copies})
            if k := next((k for k in range(1, count) if began[k][0] >= steps[k - 1][2]), 0):
                on += f"{', so ' * bool(on)}batch {k}'s copy began after the step on batch {k - 1} had ended"
            elif not on and (k := next((k for k in range(count - 1) if steps[k][1] >= began[k + 1][1]), -1)) >= 0:
                on = f"the step on batch {k} began after batch {k + 1}'s copy had ended: make it wait for its own only"
            raise Wrong(f"{said}{': ' * bool(on)}{on}")
    if torch.cuda.is_available():  # the same loop on this machine's GPU, each step checking what it reads
        host, call = [torch.full((1 << 20,), k + 1.0).pin_memory() for k in range(4)], "prefetched(4 batches, cuda)"
        with torch.cuda.stream(torch.cuda.Stream()):  # a caller's stream, not the default one
            got = _yielded(fn, (iter(host), torch.device("cuda")), call, 4)
            right, _ = [(x == k + 1).all() for k, x in enumerate(got)], torch.cuda.synchronize()
        if wrong := [k for k, r in enumerate(right) if not r.item()]:
            raise Wrong(f"{call} on this GPU: the step on batch {wrong[0]} read other values than batch {wrong[0]}'s")


#: Question 2's cases: (batches, the first), float32 and int64 (too large for float32), more than two buffers cover.
_UPLOADS = ((3, torch.arange(6.0).view(2, 3), "cuda"), (5, torch.arange(4) + 2**40, "meta"))


def _check_upload_all(fn: Any) -> None:
    expect_function(fn, "upload_all", "(batches, device)")
    for count, first, device in _UPLOADS:
        batches = [first + 100 * k for k in range(count)]
        given, held = [b.clone() for b in batches], list(batches)  # their values, and the tensors themselves
        call = f"upload_all({count} {first.dtype} batches of shape {tuple(first.shape)}, {device})"
        with simulated_cuda(copy_ms=1.0) as sim:
            caller = sim.current = sim.Stream(name="caller's stream")
            with sim.tensors():
                got = fn(batches, torch.device(device))
            kept_current(sim, caller, call)
            sim.land(everything=True)
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
                copy, seen = next((c for c in sim.copies if c.destination is t), None), ""
                if copy and sim.host_waits:  # what the host waited for, and when, around that copy: as observed
                    after, by = sim.host_waits[copy.waits_before :], copy.landed_by
                    waits = ", ".join(dict.fromkeys([by] if by else after or sim.host_waits))
                    when = "for it after that refill" if by else "but not for it" if after else "only before the copy"
                    seen = f"the copy ran on the {copy.stream} until {copy.end_ms:.3g} ms; the host waited {when}"
                    seen += f"{' was queued' * (not by and not after)} ({waits}): "
                raise Wrong(f"{said}: its copy read the buffer after a refill: {seen}{why}")
            if holds != [k]:
                raise Wrong(f"{said} ({_show(sim, t)})")
        if late := [s.lane for s in sim.spans if s.kind == "copy" and s.end_ms > max(caller.free_ms, sim.host_ms)]:
            said = f"{call}: a copy ran on the {late[0]} and the current stream did not wait for it: make it wait for"
            raise Wrong(f"{said} the {late[0]} before you return")
        pageable, blocking, pinned = sim.kinds["pageable"], sim.kinds["blocking"], len(sim.pinned)
        if pageable or blocking or pinned > 1:
            said = f"{call}: right values, but copies from pageable memory: {pageable}, blocking copies: {blocking}, "
            raise Wrong(f"{said}pinned buffers: {pinned}; copy from the one pinned staging buffer, non_blocking")


_TEXTS = {  # each question's variable: its task, then (after a newline) its hint
    "prefetched": "Write the generator `prefetched(batches, device)`: yield each host batch on `device` in order, the "
    "next one's copy running on a side stream during the caller's step on this one, each step seeing its whole batch "
    "in memory of its own; the host never waits.\nPin each batch, copy it non_blocking in `with torch.cuda.stream("
    "side):` before yielding the one before; current_stream().wait_stream(side), record_stream(current_stream()).",
    "upload_all": "Debug `upload_all(batches, device)`: some batches arrive holding another one's values. Make all "
    "arrive intact, keeping the one pinned staging buffer and non_blocking copies.\nA copy from pinned memory reads "
    "the buffer when the GPU gets to it: record a torch.cuda.Event() after each copy; synchronize() it, then refill.",
}
QUESTIONS = questions("07", _TEXTS, (_check_prefetched, _check_upload_all))
