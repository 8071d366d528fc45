"""Chapter 06's checker beyond the wrong answers tests/wrong_answers/ states: other right answers are
accepted, and a mistake is named only where the checker has evidence for it."""

from __future__ import annotations

from helpers.exercises import ch06
from helpers.exercises.solutions.ch06 import SOLUTIONS

from .answers import evaluate


def _question(variable: str):  # noqa: ANN202
    return next(q for q in ch06.QUESTIONS if q.variable == variable)


def test_timing_work_on_a_side_stream_accepts_every_stream_it_can_be_marked_on() -> None:
    """Question 3: the solution, events recorded inside `with torch.cuda.stream(side)`, and a wait before the start."""
    question = _question("time_side_work")
    head = (
        "def time_side_work(fn, side):\n"
        "    start = torch.cuda.Event(enable_timing=True)\n"
        "    end = torch.cuda.Event(enable_timing=True)\n"
    )
    inside_the_block = (
        head + "    with torch.cuda.stream(side):\n"
        "        start.record()\n"
        "        fn()\n"
        "        end.record()\n"
        "    end.synchronize()\n"
        "    return start.elapsed_time(end)"
    )
    # Python may wait before the start event: then the current stream is idle and a wait for `side` orders the end.
    idle_first = (
        head + "    torch.cuda.synchronize()\n"
        "    start.record()\n"
        "    fn()\n"
        "    torch.cuda.current_stream().wait_stream(side)\n"
        "    end.record()\n"
        "    end.synchronize()\n"
        "    return start.elapsed_time(end)"
    )
    for code in (SOLUTIONS[question.number], inside_the_block, idle_first):
        outcome = evaluate(question, code)
        assert outcome.correct, (code, outcome.message)


def test_the_device_generic_event_times_the_work_too() -> None:
    """Question 1: torch.Event is a CUDA event on a CUDA machine, so timing with it is right."""
    generic = (
        "def time_with_events(fn):\n"
        "    start, end = torch.Event(enable_timing=True), torch.Event(enable_timing=True)\n"
        "    start.record()\n"
        "    fn()\n"
        "    end.record()\n"
        "    end.synchronize()\n"
        "    return start.elapsed_time(end)"
    )
    outcome = evaluate(_question("time_with_events"), generic)
    assert outcome.correct, outcome.message
