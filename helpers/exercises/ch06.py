"""Chapter 06 exercises: ordering the calls of a stream-ordered read, and the time of an overlapped schedule."""

from __future__ import annotations

import math
from typing import Any

from ..checking import Question, Wrong, expect_number, expect_type
from ..streams import ideal_overlapped_ms, simulate_copy_compute

#: The steps a learner may order in question 1 (the notebook prints them).
STREAM_STEPS = {
    "produce": 'A = torch.randn(1_000_000, device="cuda")          # on the default stream',
    "side_waits": "s.wait_stream(torch.cuda.current_stream())",
    "consume": "with torch.cuda.stream(s):\n    B = A.sum()",
    "record": "A.record_stream(s)",
    "default_waits": "torch.cuda.current_stream().wait_stream(s)",
    "read": "print(B.item())",
    "host_sync": "torch.cuda.synchronize()",
}
_REQUIRED = ("produce", "side_waits", "consume", "record", "default_waits", "read")


def _check_stream_steps(steps: Any) -> None:
    expect_type(steps, (list, tuple), "a list of step names such as ['produce', ...]")
    for step in steps:
        if not isinstance(step, str):
            raise Wrong(f"each step is a name in quotes, such as 'produce', not {step!r}")
        if step not in STREAM_STEPS:
            raise Wrong(f"{step!r} is not one of the steps; choose from {', '.join(STREAM_STEPS)}")
    if len(set(steps)) != len(steps):
        raise Wrong("a step appears twice; each call is needed once here")
    if "host_sync" in steps:
        raise Wrong("torch.cuda.synchronize() blocks Python until the whole GPU is idle; order the streams instead")
    missing = [s for s in _REQUIRED if s not in steps]
    reasons = {
        "side_waits": "without s.wait_stream(...) the side stream may sum A before it is produced",
        "record": "without A.record_stream(s) the caching allocator may reuse A's memory while s still reads it",
        "default_waits": "without current_stream().wait_stream(s) the default stream may read B before s wrote it",
        "produce": "A must be produced first",
        "consume": "B must be computed on the side stream",
        "read": "the result must be read at the end",
    }
    if missing:
        raise Wrong(f"'{missing[0]}' is missing: {reasons[missing[0]]}")
    at = {s: i for i, s in enumerate(steps)}
    if at["produce"] != 0:
        raise Wrong("start by producing A: every other step refers to it")
    if at["side_waits"] > at["consume"]:
        raise Wrong("the side stream must wait before it sums A, not after")
    if at["default_waits"] < at["consume"]:
        raise Wrong("wait_stream only covers work queued so far: the default stream must wait after B is queued")
    if at["read"] < at["default_waits"]:
        raise Wrong("read B only after the default stream waits for the side stream")


def _check_overlapped_ms(value: Any) -> None:
    value = expect_number(value, "a number of milliseconds")
    answer = ideal_overlapped_ms(4, 3.0, 5.0)
    serial = simulate_copy_compute(4, 3.0, 5.0, overlapped=False).total_ms
    if math.isclose(value, answer, abs_tol=1e-6):
        return
    if math.isclose(value, serial):
        raise Wrong(f"{value:g} ms is the serial time, with nothing overlapping")
    if math.isclose(value, 4 * 5.0):
        raise Wrong("the computing can only start once the first chunk has been copied")
    if math.isclose(value, 4 * 3.0 + 5.0):
        raise Wrong("the compute stream is the slower lane: it sets the pace, not the copies")
    raise Wrong(f"{value:g} ms is not it; draw the two lanes and find when the last compute ends")


QUESTIONS = [
    Question(
        number=1,
        task=(
            "Put the steps of a correct stream-ordered read in order: set `stream_steps` to a list of step "
            "names from STREAM_STEPS (leave out any step that is not needed)."
        ),
        variable="stream_steps",
        checker=_check_stream_steps,
        hint_text=(
            "wait_stream makes a stream wait for the work queued on the other stream *so far*, so each wait "
            "comes after the work it must wait for. No step needs to block Python."
        ),
        solution_code=('stream_steps = ["produce", "side_waits", "consume", "record", "default_waits", "read"]'),
        wrong_answers=(
            'stream_steps = ["produce", "consume", "read"]',
            'stream_steps = ["side_waits", "produce", "consume", "record", "default_waits", "read"]',
            'stream_steps = ["produce", "host_sync", "consume", "read"]',
            'stream_steps = ["produce", "side_waits", "consume", "record", "read", "default_waits"]',
            'stream_steps = ["produce", "side_waits", "consume", "default_waits", "read"]',
        ),
        context=lambda: {"STREAM_STEPS": STREAM_STEPS},
    ),
    Question(
        number=2,
        task=(
            "Four chunks are copied to the GPU on one stream (3 ms each) and computed on another (5 ms each); "
            "each compute waits only for its own chunk's copy. Set `overlapped_ms` to the time from the first "
            "copy's start to the last compute's end."
        ),
        variable="overlapped_ms",
        checker=_check_overlapped_ms,
        hint_text=(
            "The first compute can start at 3 ms. After that, which lane is always busy? The copies finish early "
            "and wait; the computes run back to back."
        ),
        solution_code="overlapped_ms = 3 + 4 * 5  # first copy, then four computes back to back",
        wrong_answers=(
            "overlapped_ms = 4 * (3 + 5)",
            "overlapped_ms = 4 * 5",
            "overlapped_ms = 4 * 3 + 5",
            "overlapped_ms = 3 + 5",
        ),
    ),
]
