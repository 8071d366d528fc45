"""Chapter 06 exercises on the course's SIMULATED GPU (`helpers.standins.simulated_cuda`), whose timeline is read."""

import functools
import math
import time
from typing import Any
from unittest import mock

import torch

from ..answers import Wrong, expect_function, expect_number, expect_type
from ..checking import Question
from ..standins import SimulatedEvent, SimulatedValue, simulated_cuda
from .cases import show

#: Questions 1, 3: (ms queued on the current stream, on side; fn()'s ms; the caller's stream, not the default, current)
_Q1_CASES = ((0.0, 0.0, 5.0, False), (3.0, 0.0, 2.5, False), (1.0, 0.0, 2.0, True))
_Q3_CASES = ((0.0, 0.0, 5.0, False), (1.0, 3.0, 2.0, False), (4.0, 1.0, 2.5, True))  # a wrong event is off


def _check_timer(fn: Any, name: str, cases: tuple, on_side: bool) -> None:
    """Check a timer `name(fn)` (`name(fn, side)` when fn() queues its work on `side`) on `cases` as described above."""
    expect_function(fn, name, "(fn, side)" if on_side else "(fn)")
    elapsed, timed = SimulatedEvent.elapsed_time, []  # each elapsed_time call's (start, end)
    measured = lambda start, end: timed.append((start, end)) or elapsed(start, end)  # noqa: E731
    for busy_current, busy_side, work_ms, caller in cases:
        timed.clear()
        with simulated_cuda(launch_ms=0.001) as sim, mock.patch.object(SimulatedEvent, "elapsed_time", measured):
            side = torch.cuda.Stream()
            sim.current = sim.Stream(name="caller's stream") if caller else sim.current
            sim.work("earlier work", busy_current)
            sim.work("earlier work", busy_side, stream=side)
            work = functools.partial(sim.work, "fn()'s work", work_ms, stream=side if on_side else None)
            got = fn(work, side) if on_side else fn(work)
        spans = [s for s in sim.spans if s.name == "fn()'s work"]
        before = f"{busy_current:g} ms already on the current stream" + (f", {busy_side:g} on side" if on_side else "")
        before += ", the caller's, not the default stream" if caller else ""
        call = f"{name}({'fn, side' if on_side else 'fn'}) (fn() queues {work_ms:g} ms of GPU work; {before})"
        got = expect_number(got, f"{call} to return a number of milliseconds")
        if len(spans) != 1:
            raise Wrong(f"{call} called fn() {len(spans)} times; call it once, between the two events")
        if not timed:
            raise Wrong(f"{call} did not call elapsed_time: time fn() with two torch.cuda.Event(enable_timing=True)")
        (start, end), span = timed[-1], spans[0]
        if on_side and end.waits_before:
            raise Wrong(
                f"{call}: Python waited for the GPU ({sim.host_waits[0]}) before both events were queued. Queue the "
                "start event, fn() and the end event without waiting, then wait for the end event"
            )
        if not on_side and span.lane != sim.current.name and span.start_ms < busy_current:  # moved to a stream
            raise Wrong(
                f"{call}: fn()'s work ran on the {span.lane} from {span.start_ms:.3g} ms, before the earlier work on "
                f"the current stream ({sim.current.name}) had finished at {busy_current:g} ms: work on two streams has "
                "no order unless you make one (make that stream wait for the current one)"
            )
        if abs(got - work_ms) <= 0.1:  # ms; each launch takes 0.001 ms here
            continue
        said, value = f"{call} returned {show(got)}; expected {work_ms:g}", end.at_ms - start.at_ms
        if abs(value - work_ms) <= 0.1:  # the events are right: it returned something else
            how = " (already in milliseconds)" if math.isclose(got, value / 1000, rel_tol=1e-3) else ""
            how += ", not rounded" if float(got).is_integer() else ""
            raise Wrong(f"{said}: start.elapsed_time(end) gave {value:.4g}; return it as it is{how}")
        lanes = {start.stream.name, end.stream.name, span.lane}
        note = "" if len(lanes) == 1 else ": an event marks a point in its stream's queue"
        for way, times in (("from", sim.recorded.count(start)), ("to", sim.recorded.count(end))):
            note += f"; the event you measured {way} was recorded {times} times (it marks the last)" * (times > 1)
        raise Wrong(
            f"{said}: you measured from an event reached at {start.at_ms:.3g} ms on the {start.stream.name} to one "
            f"reached at {end.at_ms:.3g} ms on the {end.stream.name}; fn()'s work ran on the {span.lane} from "
            f"{span.start_ms:.3g} to {span.end_ms:.3g} ms{note}"
        )


#: (fill_ ms, mean ms, rounds, elements of `a`): a slow producer or consumer, for one round and several.
_CALLER = "the current stream is the caller's, not the default one, and has a.mean() queued"
_ROUNDS = ((10.0, 1.0, 1, 4), (1.0, 10.0, 1, 3), (10.0, 1.0, 3, 4), (1.0, 10.0, 5, 2))


def _check_produce_and_consume(fn: Any) -> None:
    expect_function(fn, "produce_and_consume", "(a, side, rounds)")
    for fill_ms, read_ms, rounds, size in _ROUNDS:
        setting = f"fill_ takes {fill_ms:g} ms, mean {read_ms:g} ms; `a` of {size} elements"
        call = f"produce_and_consume(a, side, {rounds}) ({setting}; {_CALLER})"
        with simulated_cuda(launch_ms=0.001) as sim:
            a, side = sim.zeros("a", fill_ms=fill_ms, read_ms=read_ms, numel=size), torch.cuda.Stream()
            sim.current = sim.Stream(name="caller's stream")
            earlier = a.mean().read  # the caller's own read of `a`, queued before the call
            try:
                got = fn(a, side, rounds)
            except Exception:  # a host read that raised (int() of a mean not computed yet) had waited first
                if not sim.host_waits:
                    raise
            if sim.host_waits:
                raise Wrong(f"{call}: Python waited for the GPU ({sim.host_waits[0]}); make streams wait instead")
            means = expect_type(got, list, f"{call} to return the list of the rounds' a.mean()")
            if len(means) != rounds or not all(isinstance(m, SimulatedValue) for m in means):
                said = ", ".join("a.mean()" if isinstance(m, SimulatedValue) else show(m) for m in means)
                raise Wrong(f"{call} returned [{said}]; expected the {rounds} results of a.mean(), unread")
        if earlier.value() != 0:
            said = f"{call}: round 1's fill_ started at {a.writes[0].start_ms:.3g} ms, while the caller's a.mean() read"
            raise Wrong(
                f"{said} `a` until {earlier.end_ms:.3g} ms (write-after-read): make its stream wait for the current one"
            )
        own = sim.own_waits[0] if sim.own_waits else ""  # a stream waiting for its own queue waits for nothing
        inside = "; inside `with torch.cuda.stream(side):` the current stream is side" * own.startswith(side.name)
        own = f" ({own} waits for nothing{inside})" * bool(own)
        rounds_end = [0, *(a.reads.index(m.read) for m in means)]  # a's reads queued by the end of each round
        if rounds_end != sorted(rounds_end):  # listed in another order than queued
            listed = ", ".join(f"round {sorted(rounds_end).index(i)}'s mean" for i in rounds_end[1:])
            raise Wrong(f"{call} returned [{listed}]; expected the means in the order of the rounds, round 1's first")
        for r, m in enumerate(means):
            ran, read = f"round {r + 1}'s mean", m.read
            ends = [w.end_ms for w in a.writes if rounds_end[r] < w.reads_before <= rounds_end[r + 1]]  # its writes
            then = [w for w in a.writes if w.reads_before > rounds_end[r + 1] and w.start_ms < read.end_ms]
            if read.stream != side.name:
                raise Wrong(f"{call}: {ran} ran on the {read.stream}; compute it on side")
            if not ends:
                raise Wrong(f"{call}: nothing wrote `a` in round {r + 1} before its mean; fill it with r + 1")
            if ends[-1] > read.start_ms:
                raise Wrong(
                    f"{call}: {ran} started at {read.start_ms:.3g} ms, before that round's fill_ had finished at "
                    f"{ends[-1]:.3g} ms (read-after-write): make side wait for the current stream after each fill_{own}"
                )
            if then:
                raise Wrong(
                    f"{call}: a fill_ queued after {ran} started at {then[0].start_ms:.3g} ms, while it read `a` until "
                    f"{read.end_ms:.3g} ms (write-after-read): make the current stream wait for side before each fill_"
                )
            if m.value() != r + 1:
                raise Wrong(f"{call}: {ran} read {m.value():g}; expected {r + 1}")
            if m.item() != r + 1:  # as the caller reads it, on the current stream
                raise Wrong(
                    f"{call}: read on the current stream after the function returned, {ran} was not written yet: "
                    f"make the current stream wait for the side stream before you return{own}"
                )


_Question = functools.partial(Question, chapter="06", context=lambda: {"time": time})  # the names cells provide
QUESTIONS = [
    _Question(
        number=1,
        task="Write `time_with_events(fn)`: call fn() once and return how many milliseconds its GPU work took, "
        "measured with two CUDA events.",
        variable="time_with_events",
        checker=lambda fn: _check_timer(fn, "time_with_events", _Q1_CASES, False),
        hint_text="Make two torch.cuda.Event(enable_timing=True); start.record(), fn(), end.record(); then "
        "end.synchronize() (the GPU must have reached the end event) and return start.elapsed_time(end).",
    ),
    _Question(
        number=2,
        task="Fix `produce_and_consume(a, side, rounds)` so that every round's mean, computed on the stream `side`, "
        "reads that round's fill, and the caller can read the means on the current stream, without making "
        "Python wait for the GPU.",
        variable="produce_and_consume",
        checker=_check_produce_and_consume,
        hint_text="Three waits, none on the host: side waits for the current stream after each fill_ (read-after-"
        "write); the current stream waits for side before each fill_ (write-after-read: the last mean must have read "
        "`a`) and once more before you return. s.wait_stream(other) covers the work queued on `other` so far.",
    ),
    _Question(
        number=3,
        task="Fix `time_side_work(fn, side)`: fn() queues its GPU work on the stream `side`; return its milliseconds, "
        "measured with two CUDA events, letting Python wait for the GPU only after both events are queued.",
        variable="time_side_work",
        checker=lambda fn: _check_timer(fn, "time_side_work", _Q3_CASES, True),
        hint_text="An event marks a point in the queue of the stream it is recorded on. Which stream holds fn()'s "
        "work? Event.record takes a stream (or records on the current one, which `with torch.cuda.stream(...)` sets).",
    ),
]
