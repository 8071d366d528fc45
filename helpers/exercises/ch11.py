"""Chapter 11 exercises: batch many launches into one, time a compiled function, replay a graph, mend a graph break."""

import contextlib
import functools
import sys
import threading
import time
from typing import Any
from unittest import mock

import torch

from ..answers import Wrong, expect_function, expect_number
from ..standins import GraphReplayModel, PretendAsyncDevice
from .calls import CallLog
from .cases import call_or_wrong, questions, show, unchanged

_APPLY = ((3, 5, torch.float32, "cpu"), (12, 5, torch.float32, "cpu"), (1, 4, torch.int64, "cpu"))  # (n, k, dtype,
_APPLY += ((4, 3, torch.float16, "cpu"), (5, 6, torch.int32, "meta"))  # device): 3, 12 pairs counted; 1; ints; halves
#: normalise's inputs: peaks above 1, below 1, tiny, subnormal (no guard on the peak holds); 2-D, ints, halves, zeros.
_XS = [(x, torch.float32) for x in ([3.0, -6.0, 1.5], [0.25, -0.5, 0.125], [1e-13, -2e-13], [[1.0, -4.0], [2.0, 0.5]])]
_XS += [([3, -6, 1], torch.int64), ([0, 0], torch.int64), ([0.25, -0.5, 0.125], torch.float16), ([0, 0], torch.float16)]
_XS += [([1e-3, -5e-4], torch.float16), ([1e-5, -2e-5], torch.float16), ([3e-45, -6e-45], torch.float32)]
_HOST_READS = frozenset({"item", "tolist", "numpy", "__float__", "__int__", "__bool__", "__repr__", "__format__"})
_STANDINS = PretendAsyncDevice.__module__  # whose clock reads are the pretend device's own
#: Clocks that stand still while the process waits (a sleep, a GPU synchronisation): CPU time only.
CPU_CLOCKS = ("process_time", "process_time_ns", "thread_time", "thread_time_ns")


def _shown(t: Any, like: torch.Tensor | None = None, rtol: float = 0) -> str:  # "" if t is a tensor like `like`
    kind = (t.shape, t.dtype, t.device) if isinstance(t, torch.Tensor) else None
    if like is not None and kind == (like.shape, like.dtype, like.device):
        if like.is_meta or torch.allclose(t.double(), like.double(), rtol=rtol, atol=0):
            return ""
    return f"{show(t.tolist())} ({t.dtype})" if kind and not t.is_meta else show(t)


def _launches(c: Any) -> bool:  # on a GPU, a launch at least: it makes a tensor (not a view) or writes into one
    made = isinstance(c.result, torch.Tensor) and (c.result._base is None or "out" in c.kwargs)
    return made or c.name == "__setitem__" or c.name.endswith("_") and not c.name.startswith("__")


def _check_apply_all(fn: Any) -> None:
    expect_function(fn, "apply_all", "(weights, vectors)")
    counts = []
    for n, k, dtype, device in _APPLY:
        ints = torch.randint(-9, 10, (n, k, k + 1), generator=torch.Generator().manual_seed(n)).to(device, dtype)
        args, kept = ([list(ints[..., :k].clone()), list(ints[..., k].clone())] for _ in range(2))
        call = f"apply_all on {n} pair{'s' * (n > 1)} of {k}×{k} {dtype} matrices and vectors on {device}"
        with CallLog() as log:
            got = call_or_wrong(fn, args, call)  # its error said with the call: on meta, a copy off it raises
        counts.append(sum(map(_launches, log.calls)))
        if not unchanged(kept, args):
            raise Wrong(f"{call} changed its arguments: compute new tensors and leave the inputs as they were")
        if not isinstance(got, list | tuple) or len(got) != n or not all(isinstance(r, torch.Tensor) for r in got):
            raise Wrong(f"{call} returned {show(got)}; expected a Python list of {n} tensor{'s' * (n > 1)}")
        for i, (row, w, v) in enumerate(zip(got, *kept, strict=True)):
            if seen := _shown(row, w @ v):
                raise Wrong(f"{call}: result {i} is {seen}; expected weights[{i}] @ vectors[{i}], {_shown(w @ v)}")
    if counts[1] > counts[0]:
        raise Wrong(f"your code ran {counts[0]} operators for 3 pairs and {counts[1]} for 12: batch them")


class TimedDevice(PretendAsyncDevice):
    """The pretend device, with work queued: `fn` queues `run_s` a call; `run` keeps the clock reads of its thread."""

    def __init__(self, run_s: float) -> None:
        super().__init__()
        self.run_s, self.thread, self.reads, self.calls, self.syncs = run_s, threading.get_ident(), [], [], [0]
        self.launch(0.02)

    def sync(self) -> None:
        self.syncs.append(len(self.calls))  # how many calls of fn came before each sync()
        super().sync()

    def fn(self, *args: Any) -> None:
        self.calls.append((self.busy_until, args))  # when the work queued before this call is done, and its arguments
        self.launch(self.run_s)

    def read(self, name: str, clock: Any, perf: Any = time.perf_counter) -> Any:
        """`clock()`, the read kept unless helpers.standins made it: (clock, calls so far, work queued, from, to)."""
        before, value = perf(), clock()
        if threading.get_ident() == self.thread and sys._getframe(1).f_globals.get("__name__") != _STANDINS:
            self.reads.append((name, len(self.calls), self.busy_until > before, before, perf()))
        return value

    def run(self, timer: Any, *args: Any) -> Any:
        clocks = ("perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns", *CPU_CLOCKS)
        with mock.patch.multiple(time, **{n: functools.partial(self.read, n, getattr(time, n)) for n in clocks}):
            return timer(*args)

    def judge(self, said: str, seconds: float, count: int, warm: range, slips: dict | None = None) -> None:
        """Raise `Wrong` unless fn ran `warm` times, then `count` timed after a sync(), and `seconds` is one's time."""
        slips = {count: "that is all the calls' time, not one's", 1e3: "that is milliseconds", **(slips or {})}
        slips.setdefault(1e6, "that is microseconds")
        calls, start = len(self.calls), len(self.calls) - count
        first, last = (self.reads[0][1], self.reads[-1][1]) if self.reads else (start, calls)
        if start in warm and first == start and last < calls:  # the calls are right, the clock's reads are not
            raise Wrong(f"{said}: the clock's last read came after {last} of fn's {calls} calls: read it after all")
        if start not in warm or (first, last) != (start, calls):
            seen = f", {first} before the first clock read and {calls - first} after" if self.reads else ""
            warm_up = f"{'up to ' * (len(warm) > 1)}{warm[-1]} warm-up call{'s' * (warm[-1] != 1)}"
            raise Wrong(f"{said}: fn ran {calls} times{seen}; expected {warm_up}, then {count} timed ones")
        if busy := [r[1] for r in self.reads if r[2]]:
            raise Wrong(f"{said}: it read the clock after {busy[0]} calls of fn with work still queued: sync() first")
        spans = [self.reads[-1][4] - self.reads[0][3]] if self.reads else []  # the most a value of the reads spans
        low, high = self.run_s, min([time.perf_counter() - self.calls[start][0], *spans]) / count
        fits = [k for k in (1, *slips) if low * k * 0.999 <= seconds <= high * k * 1.001]
        if 1 not in fits:
            cpu = [f": time.{r[0]}() counts only this process's CPU time" for r in self.reads if r[0] in CPU_CLOCKS]
            why = cpu[0] if cpu and seconds < low else f": {slips[fits[0]]}" if fits else ""
            why = why or ": no sync() after the last call: its work was still queued" * (max(self.syncs) < calls)
            span = f"{low:.3g}" + f" to {high:.3g}" * (f"{low:.3g}" != f"{max(high, low):.3g}")
            raise Wrong(f"{said}; expected {span} s a call{why}")


def _check_steady_seconds(fn: Any) -> None:
    expect_function(fn, "steady_seconds", "(fn, x, sync, warmup, iters)")
    for warmup, iters, run_s in ((3, 20, 0.002), (1, 12, 0.0002), (0, 5, 0.002)):  # round(t, 3) keeps 2 ms, not 0.2
        gpu, x, call = TimedDevice(run_s), torch.zeros(3), f"steady_seconds(fn, x, sync, {warmup}, {iters})"
        got = expect_number(gpu.run(fn, gpu.fn, x, gpu.sync, warmup, iters), f"{call} to return seconds")
        if odd := [(i, args) for i, (_, args) in enumerate(gpu.calls, 1) if len(args) != 1 or args[0] is not x]:
            raise Wrong(f"{call}: call {odd[0][0]} of fn was given {show(odd[0][1])}, not x: time fn(x) each call")
        gpu.judge(f"{call} returned {show(got)} s a call", got, iters, range(warmup, warmup + 1))
        if [k for k in gpu.syncs if warmup < k < warmup + iters]:  # steady: the calls queue back to back
            raise Wrong(f"{call} called sync() between timed calls: sync() only before starting and stopping the clock")


def _check_run_batches(fn: Any) -> None:
    expect_function(fn, "run_batches", "(graph, static_input, static_output, batches)")
    for count, dtype, big in ((3, torch.float32, 0), (5, torch.int64, 2**25 + 1), (4, torch.float16, 0)):
        static_input, graph = torch.zeros(2, 3, dtype=dtype), GraphReplayModel()
        static_output, captured = graph.capture(lambda x: 2 * x + 1, static_input), static_input.data_ptr()
        batches = [torch.arange(big, big + 6, dtype=dtype).reshape(2, 3) - i for i in range(count)]  # big is no float32
        kept, call = [b.clone() for b in batches], f"run_batches on {count} {dtype} batches of the static shape (2, 3)"
        got = fn(graph, static_input, static_output, batches)
        if not unchanged(kept, batches):
            raise Wrong(f"{call} changed its arguments: copy each batch into static_input, leave the batches alone")
        if static_input.data_ptr() != captured:
            raise Wrong(f"{call} gave static_input other memory: copy_ into it, as a graph reads the captured memory")
        if not isinstance(got, list | tuple) or len(got) != count or graph.replays != count:
            raise Wrong(f"{call}: {graph.replays} replays and {show(got)}; expected a replay and a list entry a batch")
        for i, (out, batch) in enumerate(zip(got, kept, strict=True)):
            if isinstance(out, torch.Tensor) and out.untyped_storage().data_ptr() == static_output.data_ptr():
                raise Wrong(f"{call}: output {i} is static_output's memory, which every replay overwrites: clone it")
            if seen := _shown(out, 2 * batch + 1):
                raise Wrong(f"{call}: output {i} is {seen}; expected the tensor {_shown(2 * batch + 1)}")


def _check_normalise(fn: Any) -> None:
    expect_function(fn, "normalise", "(x)")
    for values, dtype in _XS:
        x, kept = torch.tensor(values, dtype=dtype), torch.tensor(values, dtype=dtype)
        call, want, got = f"normalise({values}, {dtype})", kept / kept.abs().max() if kept.any() else kept, fn(x)
        if not unchanged(kept, x):
            raise Wrong(f"{call} changed its arguments: return a new tensor and leave x as it was")
        if (seen := _shown(got, want, 1e-3)) and _shown(got, want.to((kept / 1).dtype), 1e-3):  # all zeros: either
            raise Wrong(f"{call} returned {seen}; expected {_shown(want)}")
    with CallLog() as log, contextlib.suppress(Exception):  # a run of its own: a call log breaks torch.cond
        fn(torch.tensor(_XS[0][0]))
    reads = ["print(t)" if c.name in ("__repr__", "__format__") else c.written for c in log.named(_HOST_READS)]
    graphs = []  # one compile after the results: each break adds a graph
    torch.compiler.reset()
    torch.compile(fn, backend=lambda gm, inputs: graphs.append(gm) or gm.forward)(torch.tensor(_XS[0][0]))
    why = "breaks the graph" if graphs else "keeps torch.compile out (torch.compiler.disable?)"
    why = f"reads a tensor's value on the CPU ({reads[0]}): choose with torch.where" if reads else why
    if len(graphs) != 1:  # none: compiled nothing
        raise Wrong(f"torch.compile made {len(graphs)} graphs of normalise, not one: it {why} (set_logs shows where)")


_TEXTS = {
    "apply_all": "Write `apply_all(weights, vectors)`: the list of the n products weights[i] @ vectors[i], in a "
    "number of operators that does not grow with n.\ntorch.stack both lists, the vectors unsqueezed: one batched @.",
    "steady_seconds": "Write `steady_seconds(fn, x, sync, warmup, iters)`: the seconds a call of fn(x) takes once "
    "warm.\nA warm-up loop; sync(); start the clock; the timed loop; sync(); stop the clock.",
    "run_batches": "Write `run_batches(graph, static_input, static_output, batches)`: one replay a batch, and the "
    "outputs.\nFor each batch: static_input.copy_(batch); graph.replay(); keep static_output.clone().",
    "normalise": "Debug this: make `normalise(x)` compile into one graph, with the same results.\n"
    "`peak.item()` reads on the CPU; torch.where picks on the device.",
}
_CHECKS = (_check_apply_all, _check_steady_seconds, _check_run_batches, _check_normalise)
_SLOW = dict.fromkeys(("apply_all", "normalise"), {"time_limit": 60.0})  # first meta tensors, compile: torch._dynamo
QUESTIONS = questions("11", _TEXTS, _CHECKS, _SLOW, context=lambda: {"time": time})
