"""Chapter 09's process handling: time limits that leave no process behind, and functions run in child processes."""

from __future__ import annotations

import json
import multiprocessing
import signal
import sys
import threading
import time

import pytest
import torch

from helpers.distributed import LaunchTimeout, WorkerFailed, process_context
from helpers.hogwild import run_in_children, time_limit
from helpers.portable import NotPortable, portable


def _notebook_function(source: str, name: str, **names: object) -> object:
    """A function compiled from `source` the way a notebook cell's is: not importable by a child process."""
    namespace: dict = {"__name__": "__main__", "torch": torch, **names}
    exec(compile(source, f"<cell {name}>", "exec"), namespace)
    return namespace[name]


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
    with pytest.raises(LaunchTimeout, match=r"within 1 s; ranks \[1\]") as caught:
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


# -- run_in_children -----------------------------------------------------------------------------


def test_a_notebook_function_runs_in_children_with_its_helpers_and_defaults() -> None:
    source = (
        "import math\n"
        "SCALE = 3\n"
        "def helper(v):\n"
        "    return v * SCALE\n"
        "def work(rank, shared, offset=1):\n"
        "    shared[rank] = helper(rank + offset) + math.floor(0.5)\n"
        "    return torch.tensor([rank, rank])\n"
    )
    work = _notebook_function(source, "work")
    assert isinstance(portable(work), dict), "a notebook function is sent as code"
    shared = torch.zeros(2).share_memory_()
    results = run_in_children(work, [(0, shared), (1, shared, 2)], timeout=60)
    assert results == [[0, 0], [1, 1]], "tensors come back as plain lists"
    assert shared.tolist() == [3.0, 9.0], "the children wrote into the parent's shared tensor"
    assert multiprocessing.active_children() == []


def test_an_importable_function_is_sent_by_name() -> None:
    assert portable(json.dumps) is json.dumps
    assert run_in_children(json.dumps, [([1, 2],)], timeout=60) == ["[1, 2]"]


def test_a_raising_child_is_named() -> None:
    fails = _notebook_function("def f(rank):\n    if rank == 1:\n        raise ValueError('mine')\n", "f")
    with pytest.raises(WorkerFailed) as caught:
        run_in_children(fails, [(0,), (1,)], timeout=60)
    assert caught.value.rank == 1 and "ValueError: mine" in caught.value.details
    assert multiprocessing.active_children() == []


def test_a_child_that_exits_is_reported() -> None:
    exits = _notebook_function("import sys\ndef f():\n    sys.exit(3)\n", "f")
    with pytest.raises(WorkerFailed, match="SystemExit: 3"):
        run_in_children(exits, [()], timeout=60)


def test_a_hanging_child_is_stopped() -> None:
    hangs = _notebook_function("import time\ndef f():\n    time.sleep(120)\n", "f")
    began = time.monotonic()
    with pytest.raises(LaunchTimeout):
        run_in_children(hangs, [(), ()], timeout=2)
    assert time.monotonic() - began < 30
    assert multiprocessing.active_children() == []


def test_what_cannot_be_sent_is_said_plainly() -> None:
    def outer() -> object:
        captured = 1

        def inner() -> int:
            return captured

        return inner

    with pytest.raises(NotPortable, match="enclosing function"):
        portable(outer())
    with pytest.raises(NotPortable, match="written with `def`"):
        portable(object())  # type: ignore[arg-type]
    uses_lock = _notebook_function("def f():\n    return LOCK\n", "f", LOCK=threading.Lock())
    with pytest.raises(NotPortable, match="`LOCK`"):
        portable(uses_lock)
    thing = type("Thing", (), {"__module__": "__main__"})()
    uses_thing = _notebook_function("def f():\n    return THING\n", "f", THING=thing)
    with pytest.raises(NotPortable, match="class defined in the notebook"):
        portable(uses_thing)


# -- The chapter's checkers, when the learner's function misbehaves only in a child process ------------


CHILD_ONLY = (
    "import multiprocessing, time\n"
    "def partial_sum(rank, world_size, x, out):\n"
    "    if multiprocessing.parent_process() is not None:\n"
    "        {misbehave}\n"
    "    out[rank] = x.chunk(world_size)[rank].sum()\n"
)


@pytest.mark.parametrize(
    ("misbehave", "verdict"),
    [
        ("time.sleep(600)", "did not finish within 2 s"),
        ("raise RuntimeError('only in a child')", "in child process 0 your `partial_sum` failed: RuntimeError"),
        ("import os; os._exit(7)", "exited with code 7"),
    ],
)
def test_a_function_that_fails_only_in_a_child_gets_a_verdict(
    monkeypatch: pytest.MonkeyPatch, misbehave: str, verdict: str
) -> None:
    from helpers.exercises import ch09

    monkeypatch.setattr(ch09, "CHILD_SECONDS", 2.0)
    fn = _notebook_function(CHILD_ONLY.format(misbehave=misbehave), "partial_sum")
    question = next(q for q in ch09.QUESTIONS if q.variable == "partial_sum")
    outcome = question.evaluate({"partial_sum": fn})
    assert not outcome.correct and verdict in outcome.message, outcome.message
    assert "Traceback" not in outcome.message
    assert multiprocessing.active_children() == []


# --------------------------------------------------------------------------------------------- children's failures


def add_one(x: int) -> int:
    """An importable worker (a child process can import this module)."""
    return x + 1


def write_to_stderr_and_die(code: int) -> None:
    """A child that dies without reporting (as C++ code that aborts would), its cause only on stderr."""
    import os
    import sys

    print("the cause: the child's own words on stderr", file=sys.stderr, flush=True)
    os._exit(code)


def test_a_child_that_dies_is_reported_with_the_last_lines_of_its_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(WorkerFailed) as failed:
        run_in_children(write_to_stderr_and_die, [(1,)], timeout=60)
    message = str(failed.value)
    assert "exited with code 1 before reporting a result" in message
    assert "the cause: the child's own words on stderr" in message
    assert "the child's own words" in capfd.readouterr().err  # still shown where it showed before


def test_an_argument_the_child_cannot_rebuild_is_reported_with_its_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    only_here = types.ModuleType("course_module_only_in_the_parent")

    class Thing:
        pass

    Thing.__module__, Thing.__qualname__ = only_here.__name__, "Thing"
    only_here.Thing = Thing  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, only_here.__name__, only_here)
    with pytest.raises(WorkerFailed, match="No module named 'course_module_only_in_the_parent'"):
        run_in_children(add_one, [(Thing(),)], timeout=60)


def test_an_argument_that_cannot_be_sent_is_refused_naming_it() -> None:
    with pytest.raises(TypeError, match=r"args_per_child\[0\] cannot be sent to a child process"):
        run_in_children(add_one, [(lambda: 1,)], timeout=60)
