"""Chapter 11's questions beyond the wrong answers tests/wrong_answers/ states: a mistake is named only where the
checker has evidence for it (a host read logged, a clock read while work was queued); otherwise it says what it
expected and what came back."""

from __future__ import annotations

import threading
import time

from .answers import evaluate


def _question(variable: str):
    from helpers.exercises import ch11

    return next(q for q in ch11.QUESTIONS if q.variable == variable)


def test_normalise_names_no_cause_it_did_not_see() -> None:
    head = "def normalise(x):\n"
    cases = {
        # float() reads the value on the CPU, as .item() does: the call log sees it
        head + "    peak = float(x.abs().max())\n    return x / peak if peak else x": "on the CPU (float())",
        # a wrong value with no known cause: expected and got, no blame
        head + "    return x / x.abs().sum()": (
            "normalise([3.0, -6.0, 1.5], torch.float32) returned [0.285714, -0.571429, 0.142857] (torch.float32); "
            "expected [0.5, -1, 0.25] (torch.float32)"
        ),
        # a tensor of another shape
        head
        + "    return (x / x.abs().max()).reshape(1, -1).nan_to_num()": "returned [[0.5, -1, 0.25]] (torch.float32)",
        # not a tensor
        head + "    return (x / x.abs().max()).tolist()": "returned [0.5, -1, 0.25]; expected [0.5, -1, 0.25] (torch",
    }
    for code, phrase in cases.items():
        message = evaluate(_question("normalise"), code).message
        assert message.startswith("Not yet: ") and phrase in message, (phrase, message)


def test_a_break_with_no_host_read_is_reported_without_a_guessed_cause() -> None:
    """A graph break from something else (here a call Dynamo cannot trace into) names no cause it did not see."""
    code = (
        "import torch._dynamo\n\n"
        "@torch._dynamo.disable\n"
        "def _peak(x):\n    return x.abs().max()\n\n"
        "def normalise(x):\n    y = x * 1\n    peak = _peak(y)\n    return torch.where(peak == 0, y, y / peak)"
    )
    message = evaluate(_question("normalise"), code).message
    assert "not one: it breaks the graph (set_logs shows where)" in message, message
    assert "reads a tensor's value" not in message, message


def test_a_clock_read_before_a_sync_is_named_only_when_it_happened() -> None:
    """Reading the clock twice at the start, both after a sync(), is fine; the second stop read before sync() is not."""
    head = "def steady_seconds(fn, x, sync, warmup, iters):\n    for _ in range(warmup):\n        fn(x)\n    sync()\n"
    twice = head + (
        "    time.perf_counter()\n    start = time.perf_counter()\n    for _ in range(iters):\n        fn(x)\n"
        "    sync()\n    return (time.perf_counter() - start) / iters"
    )
    assert evaluate(_question("steady_seconds"), twice).correct
    early = head + (
        "    start = time.perf_counter()\n    for _ in range(iters):\n        fn(x)\n"
        "    stop = time.perf_counter()\n    sync()\n    return (stop - start) / iters"
    )
    message = evaluate(_question("steady_seconds"), early).message
    assert "it read the clock after 23 calls of fn with work still queued: sync() first" in message, message


def test_clock_reads_of_other_threads_are_not_counted() -> None:
    """A notebook kernel has threads of its own (IOPub, heartbeat, tqdm's monitor) that read the clock while a check
    runs: each official solution and a right answer pass, every time, with another thread reading every 1 ms."""
    from helpers.exercises.solutions.ch11 import SOLUTIONS as ELEVEN

    from ..wrong_answers.ch11 import RIGHT_ANSWERS as ELEVEN_RIGHT

    steady = _question("steady_seconds")
    # the solution, right answers with a clock bound before the check (no read seen) and with each call timed
    answers = [(steady, ELEVEN[2]), (steady, ELEVEN_RIGHT[2][2]), (steady, ELEVEN_RIGHT[2][1])]
    stop = threading.Event()

    def read_the_clocks() -> None:
        while not stop.is_set():
            time.time(), time.monotonic(), time.perf_counter()
            time.sleep(0.001)

    reader = threading.Thread(target=read_the_clocks, daemon=True)
    reader.start()
    try:
        for _ in range(5):
            for question, code in answers:
                outcome = evaluate(question, code)
                assert outcome.correct, (code, outcome.message)
    finally:
        stop.set()
        reader.join()


def test_no_clock_read_seen_no_read_counted() -> None:
    """With a clock the checker cannot watch, a wrong number of calls is said without counts of clock reads."""
    code = (
        "from time import perf_counter\n\n"
        "def steady_seconds(fn, x, sync, warmup, iters):\n    for _ in range(3):\n        fn(x)\n    sync()\n"
        "    start = perf_counter()\n    for _ in range(20):\n        fn(x)\n    sync()\n"
        "    return (perf_counter() - start) / 20"
    )
    message = evaluate(_question("steady_seconds"), code).message
    assert "fn ran 23 times; expected 1 warm-up call, then 12 timed ones" in message, message
    assert "clock read" not in message, message
