"""Chapter 06 exercises: time GPU work with CUDA events, order two streams, time another stream's work: each on
the course's SIMULATED GPU (`helpers.standins.simulated_cuda`), whose timeline, events and host waits are read."""

from __future__ import annotations

import math
import time
from typing import Any
from unittest import mock

import torch

from ..answers import Wrong, expect_function, expect_number, expect_type
from ..checking import Question
from ..standins import SimulatedEvent, SimulatedValue, simulated_cuda
from .cases import show

#: Question 1's and 3's cases: (ms already queued on the current stream, on side, ms of fn()'s work, whether the
#: current stream is the caller's own, not the default stream). For 3, idle streams, then side busier, then the
#: current stream busier: an event on the wrong stream is early or late.
_Q1_CASES = ((0.0, 0.0, 5.0, False), (3.0, 0.0, 2.5, False), (1.0, 0.0, 2.0, True))
_Q3_CASES = ((0.0, 0.0, 5.0, False), (1.0, 3.0, 2.0, False), (4.0, 1.0, 2.5, False))


def _run_timer(fn: Any, on_side: bool, busy_current: float, busy_side: float, work_ms: float, caller: bool) -> tuple:
    """A timer's run: result, host waits, each event's (stream, waits before, records), elapsed_time pairs, spans."""
    record, elapsed = SimulatedEvent.record, SimulatedEvent.elapsed_time
    marks: dict[SimulatedEvent, tuple[str, int, int]] = {}
    timed: list[tuple[SimulatedEvent, SimulatedEvent]] = []  # each elapsed_time call's (start, end)
    spans: list[Any] = []  # the span of fn()'s work, one per call
    with simulated_cuda(launch_ms=0.001) as sim:
        side = torch.cuda.Stream()
        sim.current = sim.Stream(name="caller's stream") if caller else sim.current
        sim.work("earlier work", busy_current)
        with side:
            sim.work("earlier work", busy_side)

        def work() -> None:  # not `with side:`, which would end a `with torch.cuda.stream(side):` of the learner's
            previous, sim.current = sim.current, side if on_side else sim.current
            sim.work("fn()'s work", work_ms)
            sim.current = previous
            spans.append(sim.spans[-1])

        def marked(event: SimulatedEvent, stream: Any = None) -> None:
            record(event, stream)
            again = marks.get(event, ("", 0, 0))[2] + 1
            marks[event] = ((sim.current if stream is None else stream).name, len(sim.host_waits), again)

        measured = lambda start, end: timed.append((start, end)) or elapsed(start, end)  # noqa: E731
        with mock.patch.multiple(SimulatedEvent, record=marked, elapsed_time=measured):
            got = fn(work, side) if on_side else fn(work)
    return got, sim.host_waits, marks, timed, spans


def _check_timer(fn: Any, name: str, cases: tuple, on_side: bool) -> None:
    """Check a timer `name(fn)` (`name(fn, side)` when fn() queues its work on `side`) on `cases` as described above."""
    expect_function(fn, name, "(fn, side)" if on_side else "(fn)")
    for busy_current, busy_side, work_ms, caller in cases:
        got, waits, marks, timed, spans = _run_timer(fn, on_side, busy_current, busy_side, work_ms, caller)
        before = f"{busy_current:g} ms already on the current stream" + (f", {busy_side:g} on side" if on_side else "")
        before += ", the caller's, not the default stream" if caller else ""
        call = f"{name}({'fn, side' if on_side else 'fn'}) (fn() queues {work_ms:g} ms of GPU work; {before})"
        got = expect_number(got, f"{call} to return a number of milliseconds")
        if len(spans) != 1:
            raise Wrong(f"{call} called fn() {len(spans)} times; call it once, between the two events")
        if not timed:
            raise Wrong(f"{call} did not call elapsed_time: time fn() with two torch.cuda.Event(enable_timing=True)")
        (start, end), span = timed[-1], spans[0]
        if on_side and marks[end][1]:
            raise Wrong(
                f"{call}: Python waited for the GPU ({waits[0]}) before both events were queued. Queue the start "
                "event, fn() and the end event without waiting, then wait for the end event"
            )
        if abs(got - work_ms) <= 0.1:  # ms; each launch takes 0.001 ms here
            continue
        said, value = f"{call} returned {show(got)}; expected {work_ms:g}", end.at_ms - start.at_ms
        if abs(value - work_ms) <= 0.1:  # the events are right: it returned something else
            how = " (already in milliseconds)" if math.isclose(got, value / 1000, rel_tol=1e-3) else ""
            how += ", not rounded" if float(got).is_integer() else ""
            raise Wrong(f"{said}: start.elapsed_time(end) gave {value:.4g}; return it as it is{how}")
        note = "" if marks[start][0] == marks[end][0] == span.lane else ": an event marks a point in its stream's queue"
        for way, event in (("from", start), ("to", end)):
            if marks[event][2] > 1:
                note += f"; the event you measured {way} was recorded {marks[event][2]} times (it marks the last)"
        raise Wrong(
            f"{said}: you measured from an event reached at {start.at_ms:.3g} ms on the {marks[start][0]} to one "
            f"reached at {end.at_ms:.3g} ms on the {marks[end][0]}; fn()'s work ran on the {span.lane} from "
            f"{span.start_ms:.3g} to {span.end_ms:.3g} ms{note}"
        )


#: (fill_ ms, mean ms, rounds): a slow producer and a slow consumer, for one round and for several; and every call's
#: setting, as its messages say it.
_CALLER = "`a` of 4 elements; the current stream is the caller's, not the default one, and has a.mean() queued"
_ROUNDS = ((10.0, 1.0, 1), (1.0, 10.0, 1), (10.0, 1.0, 3), (1.0, 10.0, 5))


def _check_produce_and_consume(fn: Any) -> None:
    expect_function(fn, "produce_and_consume", "(a, side, rounds)")
    for fill_ms, read_ms, rounds in _ROUNDS:
        call = f"produce_and_consume(a, side, {rounds}) (fill_ takes {fill_ms:g} ms, mean {read_ms:g} ms; {_CALLER})"
        with simulated_cuda(launch_ms=0.001) as sim:
            a, side = sim.zeros("a", fill_ms=fill_ms, read_ms=read_ms, numel=4), torch.cuda.Stream()
            sim.current = sim.Stream(name="caller's stream")
            earlier = a.mean().read  # the caller's own read of `a`, queued before the call
            means = expect_type(fn(a, side, rounds), list, f"{call} to return the list of the rounds' a.mean()")
            if sim.host_waits:
                raise Wrong(f"{call}: Python waited for the GPU ({sim.host_waits[0]}); make streams wait instead")
            if len(means) != rounds or not all(isinstance(m, SimulatedValue) for m in means):
                raise Wrong(f"{call} returned {show(means)}; expected the {rounds} results of a.mean(), unread")
            later = [m.item() for m in means]  # what the caller reads on the current stream
        if len(a.writes) != rounds:
            raise Wrong(f"{call} filled `a` {len(a.writes)} times; fill it once a round, with r + 1")
        if earlier.value() != 0:
            said = f"{call}: round 1's fill_ started at {a.writes[0].start_ms:.3g} ms, while the caller's a.mean() read"
            raise Wrong(
                f"{said} `a` until {earlier.end_ms:.3g} ms (write-after-read): make its stream wait for the current one"
            )
        own = sim.own_waits[0] if sim.own_waits else ""  # a stream waiting for its own queue waits for nothing
        if own:
            inside = "; inside `with torch.cuda.stream(side):` the current stream is side" * own.startswith(side.name)
            own = f" ({own} waits for nothing{inside})"
        for r, (write, read) in enumerate(zip(a.writes, [m.read for m in means], strict=True)):
            ran, then = f"round {r + 1}'s mean", a.writes[r + 1 :]
            if read.stream != side.name:
                raise Wrong(f"{call}: {ran} ran on the {read.stream}; compute it on side")
            if write.end_ms > read.start_ms:
                raise Wrong(
                    f"{call}: {ran} started at {read.start_ms:.3g} ms, before that round's fill_ had finished at "
                    f"{write.end_ms:.3g} ms (read-after-write): make side wait for the current stream after each "
                    f"fill_{own}"
                )
            if then and then[0].start_ms < read.end_ms:
                raise Wrong(
                    f"{call}: round {r + 2}'s fill_ started at {then[0].start_ms:.3g} ms, while {ran} read `a` until "
                    f"{read.end_ms:.3g} ms (write-after-read): make the current stream wait for side before each fill_"
                )
            if read.value() != r + 1:
                raise Wrong(f"{call}: {ran} read {read.value():g}; expected {r + 1}")
            if later[r] != r + 1:
                raise Wrong(
                    f"{call}: read on the current stream after the function returned, {ran} was not written yet: "
                    f"make the current stream wait for the side stream before you return{own}"
                )


QUESTIONS = [
    Question(
        number=1,
        task=(
            "Write `time_with_events(fn)`: call fn() once and return how many milliseconds its GPU work took, "
            "measured with two CUDA events."
        ),
        variable="time_with_events",
        checker=lambda fn: _check_timer(fn, "time_with_events", _Q1_CASES, False),
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
    ),
    Question(
        number=3,
        task=(
            "Fix `time_side_work(fn, side)`: fn() queues its GPU work on the stream `side`; return how many "
            "milliseconds that work took, measured with two CUDA events, and let Python wait for the GPU only "
            "after both events are queued."
        ),
        variable="time_side_work",
        checker=lambda fn: _check_timer(fn, "time_side_work", _Q3_CASES, True),
        hint_text=(
            "An event marks a point in the queue of the stream it is recorded on, and the GPU reaches it in that "
            "stream's order. Which stream holds fn()'s work? Event.record takes a stream (or records on the "
            "current one, which `with torch.cuda.stream(...)` sets)."
        ),
        chapter="06",
        context=lambda: {"time": time},
    ),
]
