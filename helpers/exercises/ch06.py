"""Chapter 06 exercises on the course's SIMULATED GPU (`helpers.standins.simulated_cuda`), whose timeline is read."""

import functools
import time
from typing import Any
from unittest import mock

import torch

from ..answers import Wrong, expect_function, expect_number, expect_type
from ..standins import SIMULATED_CYCLES_PER_MS, SimulatedEvent, simulated_cuda
from ..timing import gpu_cycles_per_ms
from .cases import call_or_wrong, questions, show


def kept_current(sim: Any, caller: Any, call: str) -> None:  # on return, the caller's stream is current again
    if sim.current is not caller:
        raise Wrong(f"{call} left the {sim.current.name} current: set the caller's stream back, or use `with`")


_SNIPPETS = """gpu(20, side); side.wait_stream(default); gpu(10)|gpu(10); gpu(20, side); default.wait_stream(side)
|gpu(10); side.wait_stream(default); gpu(20, side); default.wait_stream(side)|gpu(10); host(40); gpu(10)
|gpu(10); torch.cuda.synchronize(); host(40); gpu(10)""".replace("\n", "").split("|")  # question 1's, in order


def _events_ms(snippet: str, sim: Any = None) -> float:  # question 1: around `snippet` on the simulated or a CUDA GPU
    per_ms = SIMULATED_CYCLES_PER_MS if sim else gpu_cycles_per_ms(0)  # measured before anything is timed

    def gpu(ms: float, stream: Any = None) -> None:
        with torch.cuda.stream(stream):
            torch.cuda._sleep(int(ms * per_ms))

    host = lambda ms: sim._host_waits(sim.host_ms + ms, f"host({ms:g})") if sim else time.sleep(ms / 1000)
    side, start, end = (torch.cuda.Stream(), *(torch.cuda.Event(enable_timing=True) for _ in "se"))
    torch.cuda._sleep(0 if sim else 1), torch.cuda.synchronize(), start.record()  # the kernel loaded, the GPU idle
    exec(snippet, {"torch": torch, "gpu": gpu, "host": host, "side": side, "default": torch.cuda.default_stream()})
    return [end.record(), end.synchronize(), start.elapsed_time(end)][-1]


def _check_event_ms(given: Any) -> None:
    given = expect_type(given, dict, "a dict: each snippet of the cell, then the milliseconds you predict")
    for snippet in _SNIPPETS:
        if snippet not in given:
            raise Wrong(f"event_ms has no key {snippet!r}: keep each key of the cell exactly as it is written")
        said = expect_number(given[snippet], f"event_ms[{snippet!r}] to be the milliseconds you predict")
        if not abs(said) < float("inf"):  # nan or infinite
            raise Wrong(f"event_ms[{snippet!r}] is {show(said)}: a prediction must be a finite number of ms")
        with simulated_cuda(launch_ms=0.0) as sim:
            ms = _events_ms(snippet, sim)
        if abs(said - ms) > 1:  # what ran, and when, on the simulated GPU; on a GPU, what its events reported
            ran = [f"{s.lane} {s.start_ms:g}–{s.end_ms:g} ms ({s.name.removeprefix('waits: ')})" for s in sim.spans]
            real = f"; {_events_ms(snippet):.3g} ms with real events on this GPU" if torch.cuda.is_available() else ""
            said = f"{snippet!r}: you predicted {show(said)} ms; the events report {ms:g} ms (simulated GPU{real})"
            raise Wrong(f"{said}. Between them: {', '.join(ran[:-1])}")  # the last: the wait for the end event


def _check_double_buffered(fn: Any) -> None:
    expect_function(fn, "double_buffered", "(bufs, side, rounds, produce, consume)")
    for fill_ms, use_ms, rounds in ((2.0, 2.0, 4), (3.0, 1.0, 5), (1.0, 5.0, 5), (2.0, 2.0, 1), (2.0, 2.0, 0)):
        call = f"double_buffered(bufs, side, {rounds}, produce, consume) (produce takes {fill_ms:g} ms, consume "
        call += f"{use_ms:g} ms; the current stream is the caller's, whose earlier reads of both buffers are queued)"
        used, made, consume = [], [], lambda b: used.append(b.mean()) or used[-1]  # noqa: B023 (this round only)
        with simulated_cuda(launch_ms=0.001) as sim:
            bufs = [sim.zeros(f"bufs[{k}]", fill_ms=fill_ms, read_ms=use_ms) for k in (0, 1)]
            sim.current, side = sim.Stream(name="caller's stream"), sim.Stream(name="side stream")
            reads = [b.mean().read for b in bufs]  # the caller's, queued before the call: rounds -2 and -1
            produce = lambda b, r: made.append(r) or b.fill_(r + 1)  # noqa: B023
            got = call_or_wrong(fn, (bufs, side, rounds, produce, consume), call)
        kept_current(sim, sim.streams[1], call)
        if sim.host_waits:
            raise Wrong(f"{call}: Python waited for the GPU ({sim.host_waits[0]}); make the streams wait instead")
        got = expect_type(got, list, f"{call} to return the list of consume's results")
        if made != [*range(rounds)] or len(used) != rounds:
            said = f"called produce with r = {made}, consume {len(used)} times"  # in the order of the calls
            raise Wrong(f"{call} {said}: call each once a round, produce(bufs[r % 2], r) for r in range(rounds)")
        if len(got) != rounds or any(getattr(m, "read", None) is not u.read for m, u in zip(got, used, strict=True)):
            raise Wrong(f"{call} returned {len(got)} values, not consume's {rounds} results in round order")
        call += "; it used the default stream, which is not the current stream here" * (sim.default.free_ms > 0)
        _timeline(call, bufs, [*reads, *(m.read for m in got)])


def _timeline(call: str, bufs: list, reads: list) -> None:  # the first mistake question 2's timeline shows, if any
    for i, read in enumerate(reads):
        r, k, now = i - 2, i % 2, f"round {i - 2}'s consume" if i > 1 else "the caller's read on the current stream"
        own, astray = next((w for w in bufs[k].writes if w.value == r + 1), None), read.writes is not bufs[k].writes
        if i > 1 and (astray or not own):  # own: round r's produce (none for the caller's reads)
            said = f"did not read bufs[{k}]" if astray else f"read bufs[{k}], which round {r}'s produce did not fill"
            raise Wrong(f"{call}: round {r}'s consume {said}; round r fills and reads bufs[r % 2]")
        if i > 1 and (read.stream != "caller's stream" or own.stream != "side stream"):
            said = f"round {r}'s consume ran on the {read.stream}, its produce on the {own.stream}"
            raise Wrong(f"{call}: {said}; queue produce on side and consume on the current stream")
        if own and read.start_ms < own.end_ms:
            said = f"{call}: {now} started at {read.start_ms:.3g} ms, before its produce had finished at "
            raise Wrong(f"{said}{own.end_ms:.3g} ms (a stale read): make the current stream wait for that produce")
        if w := next((w for w in read.writes if w.start_ms < read.end_ms and w.end_ms > getattr(own, "end_ms", 0)), 0):
            said = f"{call}: round {w.value - 1:g}'s produce wrote bufs[{k}] at {w.start_ms:.3g} ms, before {now} had"
            raise Wrong(f"{said} finished reading it at {read.end_ms:.3g} ms: write-after-read; make side wait for it")
        if i > 2 and not (own.start_ms < reads[i - 1].end_ms and reads[i - 1].start_ms < own.end_ms):
            said = f"{call}: round {r}'s produce ran {own.start_ms:.3g}–{own.end_ms:.3g} ms, round {r - 1}'s consume "
            raise Wrong(f"{said}{reads[i - 1].start_ms:.3g}–{reads[i - 1].end_ms:.3g} ms (simulated clock): no overlap")


def _check_time_side_work(fn: Any) -> None:
    expect_function(fn, "time_side_work", "(fn, side)")
    timer = mock.patch.object(SimulatedEvent, "elapsed_time", autospec=True, side_effect=SimulatedEvent.elapsed_time)
    for busy_current, busy_side, work_ms, caller in ((0, 0, 5, False), (1, 3, 2, False), (4, 1, 2.5, True)):
        with simulated_cuda(launch_ms=0.001) as sim, timer as timed:  # timed: its calls, (start, end)
            side, here = torch.cuda.Stream(), sim.Stream(name="caller's stream") if caller else sim.current
            sim.current = here  # the caller's stream, current again when fn returns
            sim.work("earlier work", busy_current), sim.work("earlier work", busy_side, stream=side)
            got = fn(functools.partial(sim.work, "fn()'s work", work_ms, stream=side), side)
        spans = [s for s in sim.spans if s.name == "fn()'s work"]
        call = f"time_side_work(fn, side) (fn() queues {work_ms:g} ms of GPU work; {busy_current:g} ms already on the "
        call += "current stream" + " (the caller's, not the default stream)" * caller + f", {busy_side:g} on side)"
        kept_current(sim, here, call)
        got = expect_number(got, f"{call} to return a number of milliseconds")
        if len(spans) != 1 or not timed.called:
            said = f"called fn() {len(spans)} times; call it once" if len(spans) != 1 else "did not call elapsed_time"
            raise Wrong(f"{call} {said}: time fn() with two torch.cuda.Event(enable_timing=True)")
        (start, end), span = timed.call_args.args, spans[0]
        if end.waits_before:
            said = f"{call}: Python waited for the GPU ({sim.host_waits[0]}) before both events were queued. Queue the"
            raise Wrong(f"{said} start event, fn() and the end event without waiting, then wait for the end event")
        if abs(got - work_ms) <= 0.1:  # ms; each launch takes 0.001 ms here
            continue
        said, value = f"{call} returned {show(got)}; expected {work_ms:g}", end.at_ms - start.at_ms
        if abs(value - work_ms) <= 0.1:  # the events are right: it returned something else
            raise Wrong(f"{said}: start.elapsed_time(end) gave {value:.4g}; return it as it is")
        lanes = {start.stream.name, end.stream.name, span.lane}
        note = ": an event marks a point in its stream's queue" * (len(lanes) > 1)
        said += f": you measured from an event reached at {start.at_ms:.3g} ms on the {start.stream.name} to one "
        said += f"reached at {end.at_ms:.3g} ms on the {end.stream.name}; fn()'s work ran on the {span.lane} from "
        raise Wrong(f"{said}{span.start_ms:.3g} to {span.end_ms:.3g} ms{note}")


_TEXTS = {  # each question's variable: its task, then (after a newline) its hint
    "event_ms": "Set `event_ms` to the milliseconds two events on the default stream report around each snippet."
    "\nAn event marks a point in one stream's queue; the GPU notes when it gets there. What runs before each mark?",
    "double_buffered": "Write `double_buffered(bufs, side, rounds, produce, consume)`: produce on side, consume on the "
    "current stream, overlapping, no stale read, no overwrite of a buffer still read, Python never waiting.\nPer "
    "buffer, an event after its produce (the current stream waits for it) and one after its consume (side waits for "
    "it before the next produce); side first waits for the current stream. wait_stream waits for all queued.",
    "time_side_work": "Fix `time_side_work(fn, side)`: fn() queues its GPU work on the stream `side`; return its "
    "milliseconds, measured with two CUDA events, letting Python wait for the GPU only after both events are queued."
    "\nAn event marks a point in the queue of the stream it is recorded on. Which stream holds fn()'s work? "
    "Event.record takes a stream (or records on the current one, which `with torch.cuda.stream(...)` sets).",
}
_CHECKS = (_check_event_ms, _check_double_buffered, _check_time_side_work)
QUESTIONS = questions("06", _TEXTS, _CHECKS, context=lambda: {"time": time})  # `time`: what the cells provide
