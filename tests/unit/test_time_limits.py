"""Chapter 09's process handling: time limits that leave no process behind, and a checker's child processes."""

from __future__ import annotations

import multiprocessing
import signal
import sys
import threading
import time

import pytest

from helpers.processes import LaunchTimeout, WorkerFailed, launch, process_context, time_limit

from .answers import evaluate


def _sleepers(n: int, seconds: float) -> list:
    ctx = process_context()
    return [ctx.Process(target=time.sleep, args=(seconds,), daemon=True) for _ in range(n)]


def test_a_block_that_finishes_in_time_leaves_nothing_running() -> None:
    procs = _sleepers(2, 0.1)
    with time_limit(procs, 60) as limit:
        for p in procs:
            p.start()
        for p in procs:
            p.join()
    assert [p.exitcode for p in procs] == [0, 0] and limit.stopped == []
    assert multiprocessing.active_children() == []


def test_a_hung_process_is_stopped_and_named() -> None:
    warm_up = _sleepers(1, 0)[0]  # the first process of a session also starts the fork server (seconds)
    warm_up.start()
    warm_up.join()
    procs: list = []
    began = time.monotonic()
    with pytest.raises(LaunchTimeout, match=r"within 1 s; processes \[1\]") as caught:
        with time_limit(procs, 1):
            procs.extend(_sleepers(1, 0.05) + _sleepers(1, 120))  # appended inside the block: still covered
            for p in procs:
                p.start()
            for p in procs:
                p.join()  # returns once the watchdog has stopped the sleeper
    assert caught.value.unfinished == [1]
    assert time.monotonic() - began < 30
    assert procs[0].exitcode == 0 and procs[1].exitcode is not None and procs[1].exitcode < 0
    assert multiprocessing.active_children() == []


def test_an_error_in_the_block_stops_the_processes_and_is_not_hidden() -> None:
    procs = _sleepers(2, 120)
    with pytest.raises(ZeroDivisionError):
        with time_limit(procs, 60):
            for p in procs:
                p.start()
            1 / 0  # noqa: B018 - the error a cell's own code raises
    assert all(not p.is_alive() for p in procs)
    assert multiprocessing.active_children() == []


@pytest.mark.skipif(sys.platform == "win32", reason="no pthread_kill on Windows")
@pytest.mark.usefixtures("sigint_raises_keyboardinterrupt")
def test_an_interrupt_while_joining_leaves_no_orphan() -> None:
    procs = _sleepers(2, 120)
    interrupt = threading.Timer(1.0, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT))
    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with time_limit(procs, 60):
            for p in procs:
                p.start()
            interrupt.start()
            for p in procs:
                p.join()
    assert time.monotonic() - began < 30
    assert all(not p.is_alive() for p in procs)
    assert multiprocessing.active_children() == []


def test_processes_never_started_are_fine() -> None:
    procs = _sleepers(2, 0.1)
    with time_limit(procs, 5):
        procs[0].start()
        procs[0].join()
    assert procs[0].exitcode == 0 and procs[1].exitcode is None


@pytest.mark.parametrize(
    ("processes", "seconds", "error"),
    [
        ((), 5, TypeError),
        ([], 0, ValueError),
        ([], -1, ValueError),
        ([], float("inf"), ValueError),
        ([], True, ValueError),
    ],
)
def test_time_limit_rejects_nonsense(processes: object, seconds: object, error: type) -> None:
    with pytest.raises(error):
        time_limit(processes, seconds)  # type: ignore[arg-type]


# -- The chapter's checkers, when the learner's function misbehaves only in a child process ------------


CHILD_ONLY = (
    "import multiprocessing, time\n"
    "def partial_sum(rank, world_size, x, out):\n"
    "    if multiprocessing.parent_process() is not None:\n"
    "        {misbehave}\n"
    "    chunks = x.chunk(world_size)\n"
    "    out[rank] = chunks[rank].sum() if rank < len(chunks) else 0\n"
)


@pytest.mark.parametrize(
    ("misbehave", "verdict"),
    [
        ("time.sleep(600)", "did not finish within 2 s"),
        ("raise RuntimeError('only in a child')", "your `partial_sum` failed: RuntimeError: only in a child"),
        ("import os; os._exit(7)", "exited with code 7"),
    ],
)
def test_a_function_that_fails_only_in_a_child_gets_a_verdict(
    monkeypatch: pytest.MonkeyPatch, misbehave: str, verdict: str
) -> None:
    from helpers.exercises import ch09

    monkeypatch.setattr(ch09, "CHILD_SECONDS", 2.0)
    question = next(q for q in ch09.QUESTIONS if q.variable == "partial_sum")
    outcome = evaluate(question, CHILD_ONLY.format(misbehave=misbehave))
    assert not outcome.correct and verdict in outcome.message, outcome.message
    assert "Traceback" not in outcome.message
    assert multiprocessing.active_children() == []


# --------------------------------------------------------------------------------------------- children's failures


def write_to_stderr_and_die(rank: int, world_size: int, code: int) -> None:
    """A child that dies without reporting (as C++ code that aborts would), its cause only on stderr."""
    import os
    import sys

    print("the cause: the child's own words on stderr", file=sys.stderr, flush=True)
    os._exit(code)


def test_a_child_that_dies_is_reported_with_the_last_lines_of_its_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(WorkerFailed) as failed:
        launch(write_to_stderr_and_die, 1, (1,), init_group=False, timeout=60)
    message = str(failed.value)
    assert "exited with code 1 before reporting a result" in message
    assert "the cause: the child's own words on stderr" in message
    assert "the child's own words" in capfd.readouterr().err  # still shown where it showed before
