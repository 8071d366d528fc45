"""Chapter 06 exercises: time work with CUDA events, and order a producer and a consumer on two streams.

Both are checked on the course's SIMULATED GPU (`helpers.standins.simulated_cuda`), on every
machine: inside the check, `torch.cuda.Event`, `Stream`, `stream`, `current_stream`, `synchronize`
and `_sleep` are the simulation's stand-ins, so the learner's own `torch.cuda` code runs, its
timing and its races included, deterministically and without a GPU.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any
from unittest import mock

import torch

from ..checking import Question, Wrong, expect_function, expect_number, expect_type
from ..standins import SIMULATED_CYCLES_PER_MS, SimulatedValue, simulated_cuda

#: How long the work takes on the simulated GPU in question 1, in milliseconds (two, so no constant passes).
_WORK_MS = (5.0, 2.0)


def _check_time_with_events(fn: Any) -> None:
    expect_function(fn, "time_with_events", "(fn)")
    for work_ms in _WORK_MS:
        calls: list[int] = []

        def work(ms: float = work_ms, calls: list[int] = calls) -> None:
            calls.append(1)
            torch.cuda._sleep(int(ms * SIMULATED_CYCLES_PER_MS))  # the simulation's stand-in: `ms` of GPU work

        with simulated_cuda(launch_ms=0.001) as sim:
            events: list[Any] = []
            make_event = torch.cuda.Event  # the simulation's stand-in, while the block runs

            def counted_event(*args: Any, make: Any = make_event, made: list = events, **kwargs: Any) -> Any:
                made.append(make(*args, **kwargs))
                return made[-1]

            with mock.patch.object(torch.cuda, "Event", counted_event):
                got = fn(work)
        got = expect_number(got, "a number of milliseconds from time_with_events(fn)")
        if len(calls) != 1:
            raise Wrong(f"call fn() exactly once between the two events (your function called it {len(calls)} times)")
        if sum(e.enable_timing and e.at_ms is not None for e in events) < 2:
            raise Wrong(
                "measure with two CUDA events, torch.cuda.Event(enable_timing=True), recorded around fn(), as the "
                "task asks: they time the GPU's work on its stream, where a host clock times the host's view of it"
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
]

#: The racy version question 2 starts from (the notebook prints it).
RACY_PRODUCE_AND_CONSUME = _RACY
