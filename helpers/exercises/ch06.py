"""Chapter 06 exercises on the course's SIMULATED GPU (`helpers.standins.simulated_cuda`), whose timeline is read."""

import functools
import time
from typing import Any
from unittest import mock

import torch

from ..answers import Wrong, expect_function, expect_number, expect_type
from ..standins import SimulatedEvent, SimulatedValue, simulated_cuda
from .cases import call_or_wrong, questions, show

#: Questions 1, 3: (ms queued on the current stream, on side; fn()'s ms; the caller's stream, not the default, current)
_Q1_CASES = ((0.0, 0.0, 5.0, False), (3.0, 0.0, 2.5, False), (1.0, 0.0, 2.0, True))
_Q3_CASES = ((0.0, 0.0, 5.0, False), (1.0, 3.0, 2.0, False), (4.0, 1.0, 2.5, True))  # a wrong event is off


def kept_current(sim: Any, caller: Any, call: str) -> None:  # on return, the caller's stream is current again
    if sim.current is not caller:
        raise Wrong(f"{call} left the {sim.current.name} current: set the caller's stream back, or use `with`")


def _check_timer(fn: Any, name: str) -> None:
    """Check question 1's timer `name(fn)` or question 3's `name(fn, side)` (fn() queues its work on `side`)."""
    on_side = name == "time_side_work"
    expect_function(fn, name, "(fn, side)" if on_side else "(fn)")
    timer = mock.patch.object(SimulatedEvent, "elapsed_time", autospec=True, side_effect=SimulatedEvent.elapsed_time)
    for busy_current, busy_side, work_ms, caller in _Q3_CASES if on_side else _Q1_CASES:
        with simulated_cuda(launch_ms=0.001) as sim, timer as timed:  # timed: its calls, (start, end)
            side, sim.current = torch.cuda.Stream(), sim.Stream(name="caller's stream") if caller else sim.current
            here = sim.current  # the caller's stream, current again when fn returns
            sim.work("earlier work", busy_current)
            sim.work("earlier work", busy_side, stream=side)
            work = functools.partial(sim.work, "fn()'s work", work_ms, stream=side if on_side else None)
            got = fn(work, side) if on_side else fn(work)
        spans = [s for s in sim.spans if s.name == "fn()'s work"]
        before = f"{busy_current:g} ms already on the current stream"
        before += " (the caller's, not the default stream)" * caller + f", {busy_side:g} on side" * on_side
        call = f"{name}({'fn, side' if on_side else 'fn'}) (fn() queues {work_ms:g} ms of GPU work; {before})"
        kept_current(sim, here, call)
        got = expect_number(got, f"{call} to return a number of milliseconds")
        if len(spans) != 1:
            raise Wrong(f"{call} called fn() {len(spans)} times; call it once, between the two events")
        if not timed.called:
            raise Wrong(f"{call} did not call elapsed_time: time fn() with two torch.cuda.Event(enable_timing=True)")
        (start, end), span = timed.call_args.args, spans[0]
        if on_side and end.waits_before:
            said = f"{call}: Python waited for the GPU ({sim.host_waits[0]}) before both events were queued. Queue the"
            raise Wrong(f"{said} start event, fn() and the end event without waiting, then wait for the end event")
        if not on_side and span.lane != here.name and span.start_ms < busy_current:  # moved to a stream
            said = f"{call}: fn() ran on the {span.lane} from {span.start_ms:.3g} ms, before the current stream's"
            raise Wrong(f"{said} earlier work ended at {busy_current:g} ms: make that stream wait for the current one")
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


#: (fill_ ms, mean ms, rounds, elements of `a`): a slow producer or consumer, for one round, several and none.
_ROUNDS = ((10.0, 1.0, 1, 4), (1.0, 10.0, 1, 3), (10.0, 1.0, 3, 4), (1.0, 10.0, 5, 2), (1.0, 1.0, 0, 2))


def _check_produce_and_consume(fn: Any) -> None:
    expect_function(fn, "produce_and_consume", "(a, side, rounds)")
    for fill_ms, read_ms, rounds, size in _ROUNDS:
        call = f"produce_and_consume(a, side, {rounds}) (fill_ takes {fill_ms:g} ms, mean {read_ms:g} ms; `a` of "
        call += f"{size} elements; the current stream is the caller's, not the default one, and has a.mean() queued)"
        with simulated_cuda(launch_ms=0.001) as sim:
            a, side = sim.zeros("a", fill_ms=fill_ms, read_ms=read_ms, numel=size), torch.cuda.Stream()
            sim.current = caller = sim.Stream(name="caller's stream")
            earlier = a.mean().read  # the caller's own read of `a`, queued before the call
            try:
                got = call_or_wrong(fn, (a, side, rounds), call)
            finally:  # a host read that raised (int() of a mean not computed yet) had waited first
                if sim.host_waits:
                    raise Wrong(f"{call}: Python waited for the GPU ({sim.host_waits[0]}); make streams wait instead")
            means = expect_type(got, list, f"{call} to return the list of the rounds' a.mean()")
            if len(means) != rounds or not all(isinstance(m, SimulatedValue) for m in means):
                said = ", ".join("a.mean()" if isinstance(m, SimulatedValue) else show(m) for m in means)
                raise Wrong(f"{call} returned [{said}]; expected the {rounds} results of a.mean(), unread")
            kept_current(sim, caller, call)  # every later op of the caller's would run there
        own = sim.own_waits[0] if sim.own_waits else ""  # a stream waiting for its own queue waits for nothing
        inside = "; inside `with torch.cuda.stream(side):` the current stream is side" * own.startswith(side.name)
        own = f" ({own} waits for nothing{inside})" * bool(own)
        chains = [[earlier], *([m.read] for m in means)]  # "round 0": the caller's read; then each round's mean's
        for chain in chains:  # its read, then that of the copy that wrote what it read, and so on
            while (due := chain[-1].writes[: chain[-1].writes_before]) and not isinstance(due[-1].value, float):
                chain.append(due[-1].value)
        if unread := [r for r, chain in enumerate(chains) if chain[-1] not in a.reads]:
            raise Wrong(f"{call}: round {unread[0]}'s mean read neither `a` nor a copy of it")
        for r, chain in enumerate(chains):
            if r and chain[0].stream != side.name:
                raise Wrong(f"{call}: round {r}'s mean ran on the {chain[0].stream}; compute it on side")
            for read in chain:  # the mean's read, then the read of each copy it read (the last one's of `a`)
                of_a = read is chain[-1]
                what, wrote = ("fill_", "that round's fill_") if of_a else ("copy", "the copy it read")
                ran = f"round {r}'s {'mean' if read is chain[0] else 'copy of `a`'}" if r else "the caller's a.mean()"
                due = read.writes[chains[r - 1][-1].writes_before if of_a and r else 0 : read.writes_before]
                if due and due[-1].end_ms > read.start_ms:
                    said = f"{call}: {ran} started at {read.start_ms:.3g} ms, before {wrote} had finished at "
                    said += f"{due[-1].end_ms:.3g} ms (read-after-write): make the {read.stream} wait for the "
                    raise Wrong(f"{said}{due[-1].stream} after each {what}{own}")
                if then := [w for w in read.writes[read.writes_before :] if w.start_ms < read.end_ms]:
                    said = f"{call}: a {what} queued after {ran} started at {then[0].start_ms:.3g} ms, while it read "
                    said += f"{'`a`' if of_a else 'the copy'} until {read.end_ms:.3g} ms (write-after-read): make the"
                    raise Wrong(f"{said} {then[0].stream} wait for the {read.stream} before each {what}")
            if r and (m := means[r - 1]).value() != r:  # nan: a copy or / of it began before it was computed
                early = f" (a copy or / of it ran at {m.op_ms:.3g} ms, before it was done at {m.read.end_ms:.3g} ms)"
                raise Wrong(f"{call}: round {r}'s mean is {m.value()}; expected {r}{early * (m.op_ms < m.read.end_ms)}")
            if r and means[r - 1].item() != r:  # as the caller reads it, on the current stream
                said = f"{call}: read on the current stream after the function returned, round {r}'s mean was not"
                said += " written yet: make the current stream wait for the side stream before you return"
                raise Wrong(said + own)
        for reads, recorded, made, queued in sim.frees:  # a copy Python freed while another stream may read it
            if late := [r for r in reads if r.stream not in (made, *recorded) and r.end_ms > queued]:
                said = f"{call}: Python freed a copy of `a` made on the {made} while the {late[0].stream} read it "
                said += f"until {late[0].end_ms:.3g} ms (the {made} had work queued to {queued:.3g} ms only), with no "
                raise Wrong(f"{said}record_stream for it: the allocator may give its memory to a tensor made after it")


_TEXTS = {  # each question's variable: its task, then (after a newline) its hint
    "time_with_events": "Write `time_with_events(fn)`: call fn() once and return how many milliseconds its GPU "
    "work took, measured with two CUDA events.\nMake two torch.cuda.Event(enable_timing=True); start.record(), fn(), "
    "end.record(); then end.synchronize() (the GPU must have reached the end event) and return "
    "start.elapsed_time(end).",
    "produce_and_consume": "Fix `produce_and_consume(a, side, rounds)` so that every round's mean, computed on the "
    "stream `side`, reads that round's fill, and the caller can read the means on the current stream, without making "
    "Python wait for the GPU.\nThree waits, none on the host: side waits for the current stream after each fill_ "
    "(read-after-write); the current stream waits for side before each fill_ (write-after-read: the last mean must "
    "have read `a`) and once more before you return. s.wait_stream(other) covers the work queued on `other` so far.",
    "time_side_work": "Fix `time_side_work(fn, side)`: fn() queues its GPU work on the stream `side`; return its "
    "milliseconds, measured with two CUDA events, letting Python wait for the GPU only after both events are queued."
    "\nAn event marks a point in the queue of the stream it is recorded on. Which stream holds fn()'s work? "
    "Event.record takes a stream (or records on the current one, which `with torch.cuda.stream(...)` sets).",
}
_CHECKS = [
    _check_produce_and_consume if n == "produce_and_consume" else functools.partial(_check_timer, name=n)
    for n in _TEXTS
]
QUESTIONS = questions("06", _TEXTS, _CHECKS, context=lambda: {"time": time})  # `time`: what the cells provide
