"""Chapter 06's checker beyond the wrong answers tests/wrong_answers/ states: other right answers are
accepted, and a mistake is named only where the checker has evidence for it."""

from __future__ import annotations

import pytest

from helpers.exercises import ch06
from helpers.exercises.solutions.ch06 import SOLUTIONS
from tests.wrong_answers.ch06 import RIGHT_ANSWERS, WRONG_ANSWERS

from .answers import evaluate


def _question(variable: str):  # noqa: ANN202
    return next(q for q in ch06.QUESTIONS if q.variable == variable)


def test_timing_work_on_a_side_stream_accepts_every_stream_it_can_be_marked_on() -> None:
    """Question 3: the solution, and events recorded inside `with torch.cuda.stream(side)`."""
    question = _question("time_side_work")
    inside_the_block = (
        "def time_side_work(fn, side):\n"
        "    start = torch.cuda.Event(enable_timing=True)\n"
        "    end = torch.cuda.Event(enable_timing=True)\n"
        "    with torch.cuda.stream(side):\n"
        "        start.record()\n"
        "        fn()\n"
        "        end.record()\n"
        "    end.synchronize()\n"
        "    return start.elapsed_time(end)"
    )
    for code in (SOLUTIONS[question.number], inside_the_block):
        outcome = evaluate(question, code)
        assert outcome.correct, (code, outcome.message)


def test_a_wait_before_the_start_event_is_refused_as_the_task_words_it() -> None:
    """Question 3 lets Python wait only after both events are queued: a synchronize before the start measures
    right, but is a wait the task rules out (until 2026-11-29 it was accepted)."""
    idle_first = (
        "def time_side_work(fn, side):\n"
        "    start = torch.cuda.Event(enable_timing=True)\n"
        "    end = torch.cuda.Event(enable_timing=True)\n"
        "    torch.cuda.synchronize()\n"
        "    start.record(side)\n"
        "    fn()\n"
        "    end.record(side)\n"
        "    end.synchronize()\n"
        "    return start.elapsed_time(end)"
    )
    outcome = evaluate(_question("time_side_work"), idle_first)
    assert not outcome.correct and "(torch.cuda.synchronize()) before both events were queued" in outcome.message


def test_double_buffering_names_each_mistake_it_observes_and_accepts_either_way_of_waiting() -> None:
    """Question 2: among the typical wrong answers, each kind of mistake is named (a stale read, an overwrite of a
    buffer still read, no overlap, Python waiting, produce or consume called too often, results out of order); events
    and wait_stream both make right answers."""
    question = _question("double_buffered")
    messages = [evaluate(question, code).message for code, _ in WRONG_ANSWERS[question.number]]
    kinds = ("(a stale read)", "write-after-read", "no overlap", "Python waited for the GPU", "called produce with r")
    for kind in (*kinds, "not consume's 4 results in round order"):
        assert any(kind in m for m in messages), f"no wrong answer is told {kind!r}: {messages}"
    for code in (SOLUTIONS[question.number], *RIGHT_ANSWERS[question.number][:2]):  # events; wait_stream
        assert evaluate(question, code).correct, code


def test_predictions_are_judged_against_the_simulated_gpu_within_a_millisecond() -> None:
    """Question 1: each prediction within 1 ms of what the simulated GPU's events report is right."""
    question = _question("event_ms")
    off = SOLUTIONS[question.number].replace(": 30,", ": 31,").replace(": 50,", ": 49,")
    assert evaluate(question, off).correct
    outcome = evaluate(question, off.replace(": 31,", ": 32,"))
    assert not outcome.correct and "you predicted 32 ms; the events report 30 ms" in outcome.message


#: What a verdict says of a wait, and the call in the code that it takes as evidence.
_WAITS = {
    "(torch.cuda.synchronize())": "torch.cuda.synchronize()",
    "(side stream.synchronize())": "side.synchronize()",
    "(query() in a loop)": ".query()",
}


@pytest.mark.parametrize("number", [2, 3])
def test_a_wait_is_named_only_when_the_code_made_it(number: int) -> None:
    question = next(q for q in ch06.QUESTIONS if q.number == number)
    for code, _ in WRONG_ANSWERS[number]:
        message = evaluate(question, code).message
        for said, call in _WAITS.items():
            assert said not in message or call in code, (message, code)


def test_the_simulated_stream_is_a_class_as_torch_cuda_stream_is() -> None:
    """Round-1 review: `torch.cuda.Stream` was a bound method in the simulation, so the seed's
    `torch.cuda.Stream.synchronize(s)` and `isinstance(s, torch.cuda.Stream)` failed in right answers."""
    import torch

    from helpers.standins import simulated_cuda

    with simulated_cuda() as sim:
        a, side, current = sim.zeros(fill_ms=1.0, read_ms=5.0), torch.cuda.Stream(), torch.cuda.current_stream()
        a.fill_(3)
        torch.cuda.Stream.wait_stream(side, current)
        with torch.cuda.stream(side):
            mean = a.mean()
        torch.cuda.Stream.wait_event(current, side.record_event())
        torch.cuda.Stream.synchronize(current)
        assert isinstance(side, torch.cuda.Stream) and isinstance(current, torch.Stream) and mean.item() == 3.0
        assert sim.host_waits[0] == "default stream.synchronize()" and side in sim.streams
        with pytest.raises(AttributeError, match="the SIMULATED value has no torch.stack"):
            torch.stack([mean, mean])
