"""Chapter 09 exercises: shared buffers reused through two queues, a sum shared out between processes, a fork to fix."""

import functools
import multiprocessing
import os
import queue
import time
from typing import Any

import torch
from torch import nn

from ..answers import Wrong, expect_function
from ..processes import LaunchTimeout, WorkerFailed, launch, process_context, stop_processes
from .cases import questions, same, show, unchanged

CHILD_SECONDS = 60.0  # for the child processes of one check, their start included (a session's first is slow)
_SUMS = [(torch.arange(10.0), 3), (torch.tensor([7, -2, 2**25 + 1, 1, 2**53 + 1]), 4)]  # past float32, float64
_SUMS += [(torch.tensor([3001.5, 11, 2, 8]), 2)]


#: Question 1's cases: the batches (none at all in the last), each case's two shared buffers shaped like its first.
_BATCHES = [[torch.tensor([1.0, 2, 3]) * k for k in range(1, 6)], [torch.tensor([[7, 8], [9, 2**40]])], []]
_ptr = lambda t: t.untyped_storage().data_ptr()


class _Free:
    """Free buffers, from a slow consumer: it finishes the oldest it `held` (noted in `used`) when asked for one."""

    def __init__(self, buffers: list[torch.Tensor]) -> None:
        self.free, self.held, self.taken, self.used = list(buffers), [], [], []

    def get(self, block: bool = True, timeout: float | None = None) -> torch.Tensor:
        if not self.free and not self.held:
            raise Wrong("your producer asked `free` for a buffer while it held both: put each on tasks once filled")
        if not self.free and self.finish() and (not block or (timeout or 1) < 1):  # it frees one, in up to 1 s
            raise queue.Empty
        self.taken.append(self.free.pop(0))
        return self.taken[-1]

    def finish(self) -> bool:
        index, buffer, sent = self.held.pop(0)
        self.used.append((index, sent, buffer.clone()))
        return self.free.append(buffer) or True

    def put(self, *_: Any, **__: Any) -> None:
        raise Wrong("your producer put a buffer on free: the consumer does, once it has finished with it; only get()")

    def qsize(self) -> int:  # the buffers free when asked; asking lets the slow consumer free one for next time
        return len(self.free) or (self.finish() and 0 if self.held else 0)

    get_nowait, empty = lambda self: self.get(False), lambda self: self.qsize() == 0


class _Tasks:
    """The queue to the consumer: it checks that each pair holds a buffer `free` handed out and that is filled."""

    def __init__(self, free: _Free, buffers: list[torch.Tensor]) -> None:
        self.free, self.buffers, self.items, self.ptrs = free, buffers, [], [_ptr(b) for b in buffers]

    def put(self, item: Any, *_: Any, **__: Any) -> None:  # also put_nowait; close and join_thread do nothing
        self.items.append(item)
        if item is None:
            return
        if not (isinstance(item, tuple | list) and len(item) == 2 and isinstance(item[1], torch.Tensor)):
            raise Wrong(f"your producer put {show(item)} on tasks; put (index, buffer) pairs, then None")
        index, t = item
        if isinstance(index, torch.Tensor) or t.shape != self.buffers[0].shape:
            raise Wrong(f"your producer put ({show(index)}, {show(t)}); send (index as an int, the buffer itself)")
        if _ptr(t) not in self.ptrs:
            raise Wrong(f"batch {index} went out in a tensor of its own, shared anew: copy it into a buffer from free")
        if (k := next((k for k, b in enumerate(self.free.taken) if _ptr(b) == _ptr(t)), None)) is None:
            was = [f"the buffer of batch {o}, not yet back on free" for o, b, _ in self.free.held if _ptr(b) == _ptr(t)]
            raise Wrong(f"batch {index} went out in {(was or ['a buffer free never gave'])[0]}: a consumer may read it")
        del self.free.taken[k]
        self.free.held.append((index, t, t.clone()))

    put_nowait, close, join_thread = put, lambda self: None, lambda self: None


def _check_produce(fn: Any) -> None:
    expect_function(fn, "produce", "(batches, tasks, free)")
    for kept in _BATCHES:  # fresh batches: an answer may share or change them
        like, batches = (kept or [torch.zeros(3)])[0], [b.clone() for b in kept]
        buffers = [torch.zeros_like(like).share_memory_() for _ in "ab"]
        tasks = _Tasks(free := _Free(buffers), buffers)
        fn(batches, tasks, free)
        if not unchanged(kept, batches) or any(b.is_shared() for b in batches):
            raise Wrong("your producer changed the batches (or moved them to shared memory); copy them into buffers")
        if not tasks.items:
            raise Wrong("your producer sent nothing on tasks: send each batch as (index, buffer), then None")
        if tasks.items[-1:] != [None] or tasks.items.count(None) != 1:
            raise Wrong("your producer must put None on tasks once, after the last batch: the consumer stops there")
        while free.held:  # the consumer finishes the buffers it still holds
            free.finish()
        if sorted(got := [i for i, _, _ in free.used]) != list(range(len(batches))):
            raise Wrong(f"the consumer got batches {sorted(got)}; expected each of 0 to {len(batches) - 1} once")
        if [_ptr(b) for b in buffers] != tasks.ptrs:
            raise Wrong("a buffer no longer uses its shared memory (set_, .data =): copy the batch into it, in place")
        for index, sent, read in free.used:
            if not torch.equal(sent, kept[index]):
                said = f"batch {index} went out holding {sent.tolist()}, not its values {kept[index].tolist()}"
                raise Wrong(f"{said}: the buffer must hold batch {index}, all of it, when you send it")
            if not torch.equal(read, sent):
                raise Wrong(f"batch {index}'s buffer changed while the consumer had it: wait for it on free")


def _in_children(worker: Any, what: str, world_size: int, args: tuple) -> list[Any]:
    try:
        return launch(worker, world_size, args, timeout=CHILD_SECONDS, backend="gloo", init_group=False).results
    except (LaunchTimeout, WorkerFailed) as exc:  # one raised or died (WorkerFailed), or ran past CHILD_SECONDS
        why = getattr(exc, "last_line", f"it did not finish within {CHILD_SECONDS:g} s, so they were stopped")
        raise Wrong(f"in child processes your `{what}` failed: {why}") from None


def _check_partial_sum(fn: Any) -> None:  # _SUMS: sizes that do not divide (fewer chunks), int64, then one that does
    expect_function(fn, "partial_sum", "(rank, world_size, x, out)")
    for here, (kept, world_size) in zip((True, True, False), _SUMS, strict=True):  # alone: no rank waits on another
        x, out = kept.clone().share_memory_(), torch.full((world_size,), -1, dtype=kept.dtype).share_memory_()
        where = "here, each rank alone on its own out," if here else "in child processes on one out,"
        run = f"Run {where} for ranks 0 to {world_size - 1} with x = {kept.tolist()} and out filled with -1"
        for rank in range(world_size) if here else ():
            fn(rank, world_size, x, alone := torch.full_like(out, -1))
            if changed := [f"out[{i}]" for i, v in enumerate(alone.tolist()) if v != -1 and i != rank]:
                raise Wrong(f"{run}: rank {rank} changed {', '.join(changed)} too; a rank writes only out[rank]")
            out[rank] = alone[rank]
        if not here:  # the last case: a size that divides, a sum (3012.5) no float16 holds
            _in_children(getattr(fn, "__wrapped__", fn), "partial_sum", world_size, (x, out))
        if not unchanged(kept, x):
            raise Wrong(f"{run}: your partial_sum changed x; read your chunk of it and write only into out[rank]")
        sums = [c.sum().item() for c in kept.chunk(world_size)]  # integers to the last digit: float32 loses some
        if not same(got := out.tolist(), want := sums + [0] * (world_size - len(sums)), 1e-6 * x.is_floating_point()):
            raise Wrong(f"{run}, out became {got}; the sums of x.chunk are {want} (0 for a rank without a chunk)")


def _nudge(spans: Any, model: nn.Module) -> None:  # question 3's work: after a while, add 1 to every parameter
    time.sleep(0.5)
    [p.detach().add_(1.0) for p in model.parameters()]  # in place, as an SGD step writes them
    spans.put((os.getpid(), time.monotonic() - 0.5, time.monotonic(), model.weight.is_shared()))  # begun by then


def _check_run_in_forks(fn: Any) -> None:
    expect_function(fn, "run_in_forks", "(model, work, processes)")
    model, spans, earlier = nn.Linear(4, 2), process_context().SimpleQueue(), set(multiprocessing.active_children())
    weight, bias = (p.detach().clone() for p in model.parameters())
    fn(model, functools.partial(_nudge, spans), 3)  # picklable: spawn and forkserver run it too
    if late := [p for p in multiprocessing.active_children() if p not in earlier]:  # each ends within 0.5 s anyway
        stop_processes(late)
        raise Wrong("your run_in_forks returned while its children were still running: join() them all first")
    ran = [spans.get() for _ in iter(spans.empty, True)]
    if len(kids := [span for span in ran if span[0] != os.getpid()]) != 3 or len(ran) > len(kids):
        here = f"{len(ran) - len(kids)} times here, in the parent"
        raise Wrong(f"`work` ran to its end in {len(kids)} child processes and {here}; expected 3 children, none here")
    if unchanged(weight, model.weight.detach()):
        why = "the children wrote shared memory not this model's: share it before they start" * any(k[3] for k in kids)
        raise Wrong(f"the model here did not change: {why or 'each forked child wrote its own copy-on-write copy'}")
    if unchanged(bias, model.bias.detach()):
        raise Wrong("the model's bias did not change: share every parameter (model.share_memory())")
    if max(start for _, start, _, _ in kids) >= min(end for _, _, end, _ in kids):
        raise Wrong("the children ran `work` one after the other: start them all, then join them all")


_TEXTS = {  # each question's variable: its task, then (after a newline) its hint; `_CHECKS` follows
    "produce": "Write `produce(batches, tasks, free)`: send each batch as (index, buffer) through `tasks`, then None, "
    "using only the buffers `free` hands out.\nA buffer is yours to write only once free.get() has handed it to you; "
    "fill it in place (copy_), then put it on tasks.",
    "partial_sum": "Write `partial_sum(rank, world_size, x, out)`: out[rank] = the sum of x.chunk(world_size)[rank] "
    "or 0.\nx.chunk(world_size)'s chunks are ceil(len(x) / world_size) long: fewer when x runs out; out is shared.",
    "run_in_forks": "Debug `run_in_forks(model, work, processes)`: what its forked children write must reach the "
    "model.\nfork gives each child a copy of the parent's memory; memory shared before the fork is shared after.",
}
_CHECKS = (_check_produce, _check_partial_sum, _check_run_in_forks)
QUESTIONS = questions("09", _TEXTS, _CHECKS, {"partial_sum": {"file": "partial_sum_answer.py"}}, time_limit=90.0)
