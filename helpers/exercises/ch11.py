"""Chapter 11 exercises: one batched launch instead of many, timing a compiled function right, replaying a graph,
and (debug this) a function that torch.compile breaks into two graphs."""

from __future__ import annotations

import contextlib
import io
import sys
import time
from typing import Any

import torch

# TorchDispatchMode has no public import path; PyTorch documents it under this module's name
# (docs: "Extending PyTorch", section "Extending all torch API with Modes").
from torch.utils._python_dispatch import TorchDispatchMode

from ..checking import Question, Wrong, expect_function, expect_number
from ..standins import GraphReplayModel, PretendAsyncDevice
from .calls import cpu_clocks_read


class _CountOperators(TorchDispatchMode):
    """Counts the operators that compute something (views excluded): on a GPU each is at least one kernel launch.

    `TorchDispatchMode` sees every ATen operator torch dispatches; a view (`select`, `unsqueeze`,
    `unbind`, ...) only makes new metadata for existing memory and launches nothing.
    """

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        if not getattr(func, "is_view", False):
            self.count += 1
        return func(*args, **(kwargs or {}))


def _pairs(n: int, k: int = 5) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    generator = torch.Generator().manual_seed(n)
    weights = [torch.randn(k, k, generator=generator) for _ in range(n)]
    vectors = [torch.randn(k, generator=generator) for _ in range(n)]
    return weights, vectors


def _rows(got: Any, n: int, k: int) -> list[torch.Tensor]:
    """The learner's results as a list of n tensors: a list or tuple of them, or one (n, k) tensor."""
    if isinstance(got, torch.Tensor):
        if tuple(got.shape) != (n, k):
            raise Wrong(
                f"for {n} pairs of ({k}×{k} matrix, length-{k} vector) return {n} vectors; got a tensor of "
                f"shape {tuple(got.shape)}"
            )
        return list(got)
    if not isinstance(got, (list, tuple)) or not all(isinstance(g, torch.Tensor) for g in got):
        raise Wrong(f"return a list of tensors, one result per pair, not a {type(got).__name__}")
    if len(got) != n:
        raise Wrong(f"for {n} pairs return {n} results, got {len(got)}")
    return list(got)


def _check_apply_all(fn: Any) -> None:
    expect_function(fn, "apply_all", "(weights, vectors)")
    counts = {}
    for n in (3, 12):
        weights, vectors = _pairs(n)
        with _CountOperators() as counter:
            got = fn(weights, vectors)
        rows = _rows(got, n, 5)
        for i, (w, v, row) in enumerate(zip(weights, vectors, rows, strict=True)):
            if tuple(row.reshape(-1).shape) != (5,):
                raise Wrong(f"result {i} should be a vector of length 5 (W @ x), got shape {tuple(row.shape)}")
            if not torch.allclose(row.reshape(-1), w @ v, rtol=1e-4, atol=1e-5):
                if torch.allclose(row.reshape(-1), v @ w, rtol=1e-4, atol=1e-5):
                    raise Wrong(f"result {i} is x @ W; the task asks for W @ x (the matrix on the left)")
                raise Wrong(f"result {i} should be weights[{i}] @ vectors[{i}]")
        counts[n] = counter.count
    if counts[12] > counts[3]:
        raise Wrong(
            f"your code ran {counts[3]} operators for 3 pairs and {counts[12]} for 12: one launch (or more) per "
            "pair. Stack the matrices and the vectors and multiply them in one batched matmul."
        )


class _PretendGPU:
    """The function timed on a pretend asynchronous device: its first call also compiles (costs host
    time) and queues a long first run, like a compiled function's first call on a GPU."""

    COMPILE_S = 0.12
    FIRST_RUN_S = 0.04
    RUN_S = 0.001

    def __init__(self) -> None:
        self.device = PretendAsyncDevice()
        self.sync = self.device.sync
        self.calls = 0

    def fn(self, x: Any) -> Any:
        self.calls += 1
        if self.calls == 1:
            time.sleep(self.COMPILE_S)
        self.device.launch(self.FIRST_RUN_S if self.calls == 1 else self.RUN_S)
        return x


def _check_steady_seconds(fn: Any) -> None:
    expect_function(fn, "steady_seconds", "(fn, x, sync, warmup, iters)")
    for warmup, iters in ((3, 20), (2, 12)):  # two settings: an answer that ignores its arguments fails one
        _check_steady_seconds_with(fn, warmup, iters)


def _check_steady_seconds_with(fn: Any, warmup: int, iters: int) -> None:
    device = _PretendGPU()
    run = _PretendGPU.RUN_S
    started = time.perf_counter()
    with cpu_clocks_read() as cpu_clocks:
        got = fn(device.fn, torch.zeros(3), device.sync, warmup, iters)
    wall = time.perf_counter() - started
    got = expect_number(got, "seconds per call from steady_seconds")
    if device.calls < iters:
        raise Wrong(f"call fn(x) `iters` times ({iters}) in the timed loop; it was called {device.calls} times")
    if device.calls == iters:
        raise Wrong("the first call of a compiled function compiles: call fn(x) `warmup` times before the timed loop")
    if device.calls != warmup + iters:
        raise Wrong(
            f"with warmup={warmup} and iters={iters}, fn(x) should run {warmup + iters} times ({warmup} warm-up "
            f"calls, then {iters} timed ones), not {device.calls}: use the arguments"
        )
    if got <= 0:
        raise Wrong(f"steady_seconds returned {got!r}: a time per call is a positive number of seconds")
    if got * iters > 1.5 * wall:  # more per call than the whole function took
        if 0.5 * run <= got / 1e3 <= 1.5 * wall / iters:
            raise Wrong(f"you returned {got:.4g}, which looks like milliseconds per call: return seconds")
        if got <= 1.5 * wall:
            raise Wrong(f"you returned {got * 1e3:.1f} ms, the time of all {iters} calls: divide by iters")
        raise Wrong(
            f"you returned {got:.4g} s per call, but steady_seconds itself took {wall:.4g} s: return the timed "
            "loop's seconds divided by iters"
        )
    if got < 0.5 * run and cpu_clocks:
        raise Wrong(
            f"you measured {got * 1e6:.0f} µs per call, but the device needs {run * 1e3:.0f} ms: {cpu_clocks[0]} "
            "counts only this process's CPU time, not the time it spends waiting in sync(). Use time.perf_counter()"
        )
    if got < 0.5 * run:
        raise Wrong(
            f"you measured {got * 1e6:.0f} µs per call, but the device needs {run * 1e3:.0f} ms: you stopped the clock "
            "while its work was still queued. Call sync() before you read the clock at the end."
        )
    # What a timing that includes the first call (compiling) or the warm-up's queued work would give:
    with_compile = (_PretendGPU.COMPILE_S + _PretendGPU.FIRST_RUN_S + iters * run) / iters
    with_warmup_work = (_PretendGPU.FIRST_RUN_S + iters * run) / iters
    if got > (with_compile + with_warmup_work) / 2:
        raise Wrong(
            f"you measured {got * 1e3:.1f} ms per call: the first call (which compiles) is in your timing. Start "
            "the clock after the warm-up calls."
        )
    if got > (with_warmup_work + run) / 2:
        raise Wrong(
            f"you measured {got * 1e3:.1f} ms per call, but a call takes {run * 1e3:.0f} ms once warm: the warm-up's "
            "work was still running on the device when you started the clock. Call sync() before you start it."
        )


def _affine(x: torch.Tensor) -> torch.Tensor:
    return 2 * x + 1


def _check_run_batches(fn: Any) -> None:
    expect_function(fn, "run_batches", "(graph, static_input, static_output, batches)")
    for count in (3, 5):  # two lengths: an answer written for one list of batches fails the other
        _check_run_batches_of(fn, count)


def _check_run_batches_of(fn: Any, count: int) -> None:
    static_input = torch.zeros(4)
    graph = GraphReplayModel()
    static_output = graph.capture(_affine, static_input)
    batches = [torch.full((4,), float(i + 1)) for i in range(count)]
    given, sent = list(batches), [b.clone() for b in batches]
    expected = [_affine(b) for b in batches]
    got = fn(graph, static_input, static_output, given)
    if len(given) != count or any(g is not b for g, b in zip(given, batches, strict=False)):
        raise Wrong("your function changed the list `batches` it was given: read it, leave it as it is")
    if not all(torch.equal(b, s) for b, s in zip(batches, sent, strict=True)):
        raise Wrong("the batches changed: copy each batch *into* static_input (static_input.copy_(batch)), not back")
    if not isinstance(got, (list, tuple)) or not all(isinstance(g, torch.Tensor) for g in got):
        raise Wrong(f"return a list of tensors, one output per batch, not a {type(got).__name__}")
    if len(got) != len(batches):
        raise Wrong(f"return one output per batch: {len(batches)} batches, {len(got)} outputs")
    if graph.replays == 0:
        raise Wrong("the graph never ran: call graph.replay() for each batch (it writes into static_output)")
    if all(torch.equal(g, expected[-1]) for g in got) and any(g is static_output for g in got):
        raise Wrong(
            "every output is the last batch's: each replay overwrites static_output, so keep a copy "
            "(static_output.clone()) of each result"
        )
    stale = _affine(torch.zeros(4))
    if all(torch.equal(g, stale) for g in got):
        raise Wrong(
            "every output is what the captured input (zeros) gives: the graph reads the tensor it was captured with. "
            "Rebinding a name (static_input = batch) changes nothing; copy the batch into it: static_input.copy_(batch)"
        )
    if (
        len(got) > 1
        and torch.equal(got[0], stale)
        and all(torch.equal(g, e) for g, e in zip(got[1:], expected[:-1], strict=True))
    ):
        raise Wrong("each output belongs to the batch before: copy the batch in first, then replay, then read")
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        if not torch.equal(g, e):
            raise Wrong(f"output {i} should be what the captured function gives for batches[{i}]")


class _HostReads(TorchDispatchMode):
    """Counts reads of a tensor's value on the CPU: `.item()`, `float(t)` and `if t:` dispatch `_local_scalar_dense`."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        if func is torch.ops.aten._local_scalar_dense.default:
            self.count += 1
        return func(*args, **(kwargs or {}))


#: Inputs for `normalise`: a peak above 1, a peak below 1, and all zeros (which must come back as they are).
_NORMALISE_INPUTS = ([3.0, -6.0, 1.5], [0.25, -0.5, 0.125], [0.0, 0.0, 0.0])


class _Tee(io.TextIOBase):
    """Passes what is written on to `out` and remembers whether anything was."""

    def __init__(self, out: Any) -> None:
        self.out, self.wrote = out, False

    def write(self, text: str) -> int:
        self.wrote = self.wrote or bool(text)
        return self.out.write(text)


def _shown(t: torch.Tensor) -> str:
    shown = "[" + ", ".join(f"{float(v):g}" for v in t.detach().flatten().tolist()) + "]"
    return shown if t.dim() == 1 else f"a tensor of shape {tuple(t.shape)}"


def _check_normalise(fn: Any) -> None:
    """Eager results first (evidence for the values), then a compile with a counting backend (evidence for breaks).

    The compile starts with `torch.compiler.reset()`, so that the count is this function's alone.
    """
    expect_function(fn, "normalise", "(x)")
    printed, reads = _Tee(sys.stdout), _HostReads()
    for values in _NORMALISE_INPUTS:
        x = torch.tensor(values)
        with contextlib.redirect_stdout(printed), reads:
            got = fn(x)
        if not isinstance(got, torch.Tensor):
            raise Wrong(f"normalise returned {type(got).__name__}: return the normalised tensor")
        if x.tolist() != values:
            raise Wrong(f"normalise changed the x it was given (now {_shown(x)}): return a new tensor, leave x alone")
        peak = max(abs(v) for v in values)
        want = torch.tensor([v / peak if peak else v for v in values])
        if got.shape != want.shape or not torch.allclose(got.float(), want, rtol=1e-5, atol=1e-7, equal_nan=False):
            if not peak and torch.isnan(got).any():
                raise Wrong(
                    f"for an all-zero x your function returned {_shown(got)}: 0 / 0 is nan. The original returned x "
                    "unchanged there; pick between the two on the device with torch.where(condition, a, b)"
                )
            raise Wrong(f"for x = {_shown(x)} normalise should return {_shown(want)}, got {_shown(got)}")
    graphs: list[Any] = []

    def counting_backend(gm: Any, example_inputs: Any) -> Any:
        graphs.append(gm)
        return gm.forward

    torch.compiler.reset()
    compiled = torch.compile(fn, backend=counting_backend)
    with contextlib.redirect_stdout(io.StringIO()):
        compiled(torch.tensor(_NORMALISE_INPUTS[0]))  # one call: a break shows as a second graph
    torch.compiler.reset()
    if len(graphs) <= 1:
        return
    said = f"torch.compile made {len(graphs)} graphs of normalise, so it breaks the graph: one graph is the goal. "
    if reads.count:
        raise Wrong(
            said + "Your function reads a tensor's value on the CPU (.item(), float(t) and a Python `if` on a tensor "
            "all do). Keep the choice on the device: torch.where(condition, a, b) computes both and picks one"
        )
    if printed.wrote:
        raise Wrong(said + "Your function prints, and print is a graph break: leave it out of the compiled function")
    raise Wrong(said + "torch._logging.set_logs(graph_breaks=True) says where and why")


QUESTIONS = [
    Question(
        number=1,
        task="Write `apply_all(weights, vectors)`: for lists of n square matrices and n vectors, return the n "
        "products weights[i] @ vectors[i], with a number of operators that does not grow with n.",
        variable="apply_all",
        checker=_check_apply_all,
        hint_text="torch.stack(weights) is one (n, k, k) tensor and torch.stack(vectors) one (n, k) tensor. A "
        "batched matmul (torch.bmm, or @ on 3-D tensors) multiplies all n pairs in one launch; give the vectors "
        "a trailing dimension of size 1 (unsqueeze(-1)) so that they are (n, k, 1) matrices.",
        chapter="11",
        context=lambda: {"torch": torch},
    ),
    Question(
        number=2,
        task="Write `steady_seconds(fn, x, sync, warmup, iters)`: the seconds per call of fn(x) once warm: call "
        "fn(x) `warmup` times, then time `iters` calls, calling sync() before you start and before you stop the clock.",
        variable="steady_seconds",
        checker=_check_steady_seconds,
        hint_text="The first call of a compiled function compiles, and on a GPU every call returns before its work "
        "is done. So: a warm-up loop; sync(); start = time.perf_counter(); the timed loop; sync(); then "
        "(time.perf_counter() - start) / iters.",
        chapter="11",
        context=lambda: {"time": time},
    ),
    Question(
        number=3,
        task="Write `run_batches(graph, static_input, static_output, batches)`: run a captured graph once per "
        "batch and return the list of outputs, following the rules of static inputs and outputs.",
        variable="run_batches",
        checker=_check_run_batches,
        hint_text="For each batch: static_input.copy_(batch) puts the data where the graph reads it; "
        "graph.replay() writes static_output; static_output.clone() keeps that result before the next replay "
        "overwrites it.",
        chapter="11",
        context=lambda: {"torch": torch},
    ),
    Question(
        number=4,
        task="Debug this: `normalise(x)` divides x by its largest absolute value and leaves an all-zero x as it is, "
        "but torch.compile breaks it into two graphs. Fix it so that it compiles into one graph, with the same "
        "results.",
        variable="normalise",
        checker=_check_normalise,
        hint_text="`if peak.item() == 0:` reads a value on the CPU, and Dynamo must stop its graph there. Make the "
        "choice on the device instead: torch.where(condition, a, b) takes a tensor as its condition, computes both "
        "a and b, and picks between them without a Python `if`.",
        chapter="11",
        context=lambda: {"torch": torch},
        time_limit=60.0,
    ),
]
