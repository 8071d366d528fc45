"""Chapter 06 exercises: time work with CUDA events, order a producer and a consumer on two streams, and
debug a timing of work that another stream runs.

All three are checked on the course's SIMULATED GPU (`helpers.standins.simulated_cuda`), on every
machine: inside the check, `torch.cuda.Event`, `Stream`, `stream`, `current_stream`, `synchronize`
and `_sleep` are the simulation's stand-ins, so the learner's own `torch.cuda` code runs, its
timing and its races included, deterministically and without a GPU.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from unittest import mock

import torch

from ..checking import Question, Wrong, expect_function, expect_number, expect_type
from ..standins import SIMULATED_CYCLES_PER_MS, SimulatedValue, simulated_cuda


def _sleep_cycles(ms: float) -> int:
    """The `torch.cuda._sleep` argument that keeps the simulated GPU busy for `ms` milliseconds."""
    return int(ms * SIMULATED_CYCLES_PER_MS)


@contextlib.contextmanager
def _events_made(see: Callable[[Any], None]) -> Iterator[None]:
    """Inside a `simulated_cuda` block: hand every event the learner makes to `see` first.

    Both constructors are watched, `torch.cuda.Event` and the device-generic `torch.Event` (a CUDA
    event on a CUDA machine, so an answer may use either).
    """

    def watched(make: Any) -> Any:
        def new_event(*args: Any, **kwargs: Any) -> Any:
            event = make(*args, **kwargs)
            see(event)
            return event

        return new_event

    with (
        mock.patch.object(torch.cuda, "Event", watched(torch.cuda.Event)),
        mock.patch.object(torch, "Event", watched(torch.Event)),
    ):
        yield


#: How long the work takes on the simulated GPU in question 1, in milliseconds (two, so no constant passes).
_WORK_MS = (5.0, 2.0)


def _check_time_with_events(fn: Any) -> None:
    expect_function(fn, "time_with_events", "(fn)")
    for work_ms in _WORK_MS:
        calls: list[int] = []

        def work(ms: float = work_ms, calls: list[int] = calls) -> None:
            calls.append(1)
            torch.cuda._sleep(_sleep_cycles(ms))  # the simulation's stand-in: `ms` of GPU work

        with simulated_cuda(launch_ms=0.001) as sim:
            events: list[Any] = []
            with _events_made(events.append):
                got = fn(work)
        got = expect_number(got, "a number of milliseconds from time_with_events(fn)")
        if len(calls) != 1:
            raise Wrong(f"call fn() exactly once between the two events (your function called it {len(calls)} times)")
        if sum(e.enable_timing and e.at_ms is not None for e in events) < 2:
            raise Wrong(
                "measure with two CUDA events made with enable_timing=True (torch.cuda.Event(enable_timing=True)), "
                "recorded around fn(), as the task asks: they time the GPU's work on its stream, where a host clock "
                "times the host's view of it"
            )
        if abs(got - work_ms) <= 0.1:
            continue
        if math.isclose(got, work_ms / 1000, rel_tol=0.05):
            raise Wrong("start.elapsed_time(end) is already in milliseconds: return it as it is")
        if not sim.host_waits:
            raise Wrong(
                f"you measured {got:.3g} ms for work that takes {work_ms:g} ms on the GPU, and nothing waited for it: "
                "the call returned as soon as the work was queued. Record two CUDA events around fn() and "
                "synchronize the end event before elapsed_time"
            )
        if got < work_ms:
            raise Wrong(
                f"you measured {got:.3g} ms for work that takes {work_ms:g} ms: record the start event before "
                "fn() and the end event after it, on the same stream"
            )
        raise Wrong(f"you measured {got:.3g} ms for work that takes {work_ms:g} ms on the GPU")


#: Question 2's two timings on the simulated GPU: (fill_ms, read_ms) with a slow producer, then a slow consumer.
_SLOW_PRODUCER, _SLOW_CONSUMER = (10.0, 1.0), (1.0, 10.0)
#: Rounds asked for with the slow producer and with the slow consumer (two, so no constant passes).
_ROUNDS = (3, 4)


@dataclass
class _Run:
    """What the learner's rounds did on the simulated GPU."""

    seen: list[float]  # what each mean read (nan: a fill ran while it read)
    read_later: list[float]  # what the caller then read on the current stream (nan: not written yet)
    waited: list[str]  # what made the host wait inside the learner's function
    on_side: bool  # every mean ran on the side stream
    raw_ok: bool  # every mean started after its round's fill had finished
    war_ok: bool  # every fill after the first started after the previous round's mean had finished


def _run_rounds(fn: Any, fill_ms: float, read_ms: float, rounds: int) -> _Run:
    """Run the learner's rounds on the simulated GPU and record every ordering that matters."""
    with simulated_cuda(launch_ms=0.001) as sim:
        a = sim.zeros("a", fill_ms=fill_ms, read_ms=read_ms)
        side = torch.cuda.Stream()
        means = fn(a, side, rounds)
        waited = list(sim.host_waits)
        means = expect_type(means, list, "a list of the rounds' means (the results of a.mean())")
        if len(means) != rounds or not all(isinstance(m, SimulatedValue) for m in means):
            raise Wrong(
                f"given rounds={rounds}, return a list of the {rounds} results of a.mean(), one per round, as they are "
                "(do not read them)"
            )
        if len(a.writes) != rounds:
            raise Wrong(f"fill `a` once per round, with the round's number r + 1 ({len(a.writes)} fills seen)")
        reads = [m.read for m in means]
        run = _Run(
            seen=[r.value() for r in reads],
            read_later=[m.item() for m in means],  # the caller reads them on the current stream
            waited=waited,
            on_side=all(r.stream == side.name for r in a.reads),
            raw_ok=all(w.end_ms <= r.start_ms for w, r in zip(a.writes, reads, strict=True)),
            war_ok=all(w.start_ms >= r.end_ms for w, r in zip(a.writes[1:], reads, strict=False)),
        )
    return run


def _check_produce_and_consume(fn: Any) -> None:
    expect_function(fn, "produce_and_consume", "(a, side, rounds)")
    runs = {
        "a slow fill_": _run_rounds(fn, *_SLOW_PRODUCER, _ROUNDS[0]),
        "a slow mean": _run_rounds(fn, *_SLOW_CONSUMER, _ROUNDS[1]),
    }
    for run in runs.values():
        if run.waited:
            raise Wrong(
                f"Python waited for the GPU inside your function ({run.waited[0]}): that is right but blocks the "
                "host; order the streams with wait_stream (or events) instead"
            )
        if not run.on_side:
            raise Wrong("compute each mean on the side stream, inside `with torch.cuda.stream(side):`")
    orderings = (
        (
            "raw_ok",
            "the side stream read `a` before that round's fill was done (read-after-write). Make it wait "
            "for the current stream after each fill_",
        ),
        (
            "war_ok",
            "a round's fill_ overwrote `a` before the side stream had read the previous round's value "
            "(write-after-read). Make the current stream wait for the side stream before each fill_",
        ),
    )
    for ordering, what_went_wrong in orderings:
        for slow, run in runs.items():
            if not getattr(run, ordering):
                expected = [float(r + 1) for r in range(len(run.seen))]
                raise Wrong(
                    f"with {slow}, the means read {_shown(run.seen)} instead of {_shown(expected)}: {what_went_wrong}"
                )
    for run in runs.values():
        expected = [float(r + 1) for r in range(len(run.seen))]
        if run.seen != expected:
            raise Wrong(f"the means read {_shown(run.seen)} instead of {_shown(expected)}: fill `a` with r + 1")
        if run.read_later != expected:
            raise Wrong(
                f"read on the current stream after your function returned, the means were "
                f"{_shown(run.read_later, 'unwritten')}: they were read before the side stream wrote them. Make "
                "the current stream wait for the side stream before you return"
            )


def _shown(values: list[float], nan: str = "half-written") -> str:
    return "[" + ", ".join(nan if math.isnan(v) else f"{v:g}" for v in values) + "]"


#: Question 3's cases on the simulated GPU: (ms already queued on the current stream, ms already queued on
#: `side`, ms of work fn() queues on `side`). Idle streams first, then `side` busier, then the current stream
#: busier: an event on the wrong stream is early or late in one of them, whichever mistake it is.
_SIDE_CASES = ((0.0, 0.0, 5.0), (1.0, 3.0, 2.0), (4.0, 1.0, 2.0))
#: How far (ms) a measurement or an event may be from the work and still count as on it.
_TOLERANCE_MS = 0.1


@dataclass
class _Mark:
    """A timing event the learner recorded: where, when the GPU reached it, and how often Python had waited."""

    event: Any
    stream: str
    order: int
    waits_before: int


def _time_on_side(fn: Any, busy_current: float, busy_side: float, work_ms: float) -> None:
    """Run the learner's timer once on the simulated GPU and say what is off, if anything."""
    work: list[Any] = []  # the span of fn()'s work on the side stream
    marks: dict[int, _Mark] = {}
    order = itertools.count()
    with simulated_cuda(launch_ms=0.001) as sim:
        side = torch.cuda.Stream()
        torch.cuda._sleep(_sleep_cycles(busy_current))  # work queued before, on the current stream
        with torch.cuda.stream(side):
            torch.cuda._sleep(_sleep_cycles(busy_side))  # and on the side stream

        def queue_work(stream: Any = side, spans: list = sim.spans) -> None:
            with torch.cuda.stream(stream):
                torch.cuda._sleep(_sleep_cycles(work_ms))
            work.append(spans[-1])

        def marked(event: Any) -> None:
            plain_record = event.record

            def record(stream: Any = None) -> None:
                where = sim.current if stream is None else stream
                plain_record(stream)
                if event.enable_timing:
                    marks[id(event)] = _Mark(event, getattr(where, "name", "?"), next(order), len(sim.host_waits))

            event.record = record

        with _events_made(marked):
            got = fn(queue_work, side)
        waits = list(sim.host_waits)
    got = expect_number(got, "a number of milliseconds from time_side_work(fn, side)")
    if len(work) != 1:
        raise Wrong(f"call fn() exactly once between the two events (your function called it {len(work)} times)")
    recorded = sorted(marks.values(), key=lambda m: m.order)
    if len(recorded) < 2:
        raise Wrong(
            "time it with two CUDA events, torch.cuda.Event(enable_timing=True), recorded around fn(), as the task "
            "asks: events mark the GPU's own clock on a stream"
        )
    start, end = recorded[0], recorded[-1]
    if end.waits_before > start.waits_before:
        raise Wrong(
            f"Python waited for the GPU ({waits[start.waits_before]}) between your two events, so your end event "
            "marks the moment Python woke up and queued it, not the moment fn()'s work finished. Queue both "
            "events without waiting; wait only for the end event, before elapsed_time"
        )
    if abs(got - work_ms) <= _TOLERANCE_MS:
        return
    measured, span = end.event.at_ms - start.event.at_ms, work[0]
    if abs(got - measured) > _TOLERANCE_MS:
        if abs(measured - work_ms) <= _TOLERANCE_MS and math.isclose(got, measured / 1000, rel_tol=0.05):
            raise Wrong("start.elapsed_time(end) is already in milliseconds: return it as it is")
        if abs(got + measured) <= _TOLERANCE_MS:
            raise Wrong(
                "end.elapsed_time(start) counts backwards: start.elapsed_time(end) is the time from start to end"
            )
        raise Wrong(f"you returned {got:.3g} ms for {work_ms:g} ms of work: return what your two events measured")
    _say_which_event_is_off(got, work_ms, start, end, span)
    raise Wrong(f"you measured {got:.3g} ms for {work_ms:g} ms of work on the side stream")


def _say_which_event_is_off(got: float, work_ms: float, start: _Mark, end: _Mark, span: Any) -> None:
    """Raise `Wrong` naming the event the GPU reached before or after fn()'s work, and why (`span`: that work)."""
    note = f"you measured {got:.3g} ms for {work_ms:g} ms of work on the side stream: "
    on_work = "Record your events on the stream that runs the work"

    def reached(mark: _Mark, which: str) -> str:
        return f"your {which} event, recorded on the {mark.stream}, was reached at {mark.event.at_ms:.3g} ms"

    def busy(mark: _Mark) -> str:
        return f"because the {mark.stream} was still busy with its own earlier work"

    if end.event.at_ms < span.end_ms - _TOLERANCE_MS:
        why = (
            f"an event marks a point in one stream's queue, and the {end.stream} holds none of fn()'s work. {on_work}"
            if end.stream != span.lane
            else "record it after fn() has queued the work"
        )
        raise Wrong(f"{note}{reached(end, 'end')}, before fn()'s work had finished (at {span.end_ms:.3g} ms): {why}")
    if start.event.at_ms < span.start_ms - _TOLERANCE_MS:
        raise Wrong(
            f"{note}{reached(start, 'start')}, but fn()'s work could start only at {span.start_ms:.3g} ms, once the "
            f"side stream had done the work queued on it before: your time counts that wait too. {on_work}"
        )
    if start.event.at_ms > span.start_ms + _TOLERANCE_MS:
        why = f"{busy(start)}: part of fn()'s work is missing. {on_work}" if start.stream != span.lane else ""
        raise Wrong(
            f"{note}{reached(start, 'start')}, after fn()'s work had started (at {span.start_ms:.3g} ms)"
            + (f", {why}" if why else ": record it before fn() queues the work")
        )
    if end.event.at_ms > span.end_ms + _TOLERANCE_MS and end.stream != span.lane:
        raise Wrong(
            f"{note}{reached(end, 'end')}, after fn()'s work had finished (at {span.end_ms:.3g} ms), {busy(end)}: "
            f"your time counts that too. {on_work}"
        )


def _check_time_side_work(fn: Any) -> None:
    expect_function(fn, "time_side_work", "(fn, side)")
    for busy_current, busy_side, work_ms in _SIDE_CASES:
        _time_on_side(fn, busy_current, busy_side, work_ms)


#: The racy version question 2 starts from (the notebook's answer cell shows it).
_RACY = """def produce_and_consume(a, side, rounds):
    means = []
    for r in range(rounds):
        a.fill_(r + 1)
        with torch.cuda.stream(side):
            means.append(a.mean())
    return means"""


QUESTIONS = [
    Question(
        number=1,
        task=(
            "Write `time_with_events(fn)`: call fn() once and return how many milliseconds its GPU work took, "
            "measured with two CUDA events."
        ),
        variable="time_with_events",
        checker=_check_time_with_events,
        hint_text=(
            "Make two torch.cuda.Event(enable_timing=True); start.record(), fn(), end.record(); then "
            "end.synchronize() (the GPU must have reached the end event) and return start.elapsed_time(end)."
        ),
        chapter="06",
        context=lambda: {"time": time},
    ),
    Question(
        number=2,
        task=(
            "Fix `produce_and_consume(a, side, rounds)` so that every round's mean, computed on the stream `side`, "
            "reads that round's fill, and the caller can read the means on the current stream, without making "
            "Python wait for the GPU."
        ),
        variable="produce_and_consume",
        checker=_check_produce_and_consume,
        hint_text=(
            "Three waits, none of them on the host: the side stream waits for the current stream after each fill_ "
            "(read-after-write); the current stream waits for the side stream before each fill_ (write-after-read: "
            "the last round's mean must have read `a`); and the current stream waits for the side stream once "
            "more before you return. s.wait_stream(other) covers the work queued on `other` so far."
        ),
        chapter="06",
        context=lambda: {"RACY_PRODUCE_AND_CONSUME": _RACY},
    ),
    Question(
        number=3,
        task=(
            "Fix `time_side_work(fn, side)`: fn() queues its GPU work on the stream `side`; return how many "
            "milliseconds that work took, measured with two CUDA events, and let Python wait for the GPU only "
            "after both events are queued."
        ),
        variable="time_side_work",
        checker=_check_time_side_work,
        hint_text=(
            "An event marks a point in the queue of the stream it is recorded on, and the GPU reaches it in that "
            "stream's order. Which stream holds fn()'s work? Event.record takes a stream (or records on the "
            "current one, which `with torch.cuda.stream(...)` sets)."
        ),
        chapter="06",
        context=lambda: {"time": time},
    ),
]
