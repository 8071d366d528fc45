"""Process handling for chapter 09 (processes and shared memory): time limits, and child processes for the checkers.

What makes the chapter's `torch.multiprocessing` cells safe to run again and again in a notebook:

* `time_limit(processes, seconds)`: a `with` block around the cell's own `start()`/`join()` code.
  A watchdog thread terminates every process still running after `seconds` (so a plain
  `p.join()` returns even when the child hangs), and on leaving the block, normally, by an
  error or by the learner's interrupt, every process the block started is stopped (terminate,
  then kill, then join): no orphan survives the cell. If the watchdog had to stop a process,
  `LaunchTimeout` names it.
* `run_in_children(fn, args_per_child, timeout)`: runs a function in child processes and returns
  what each returned, as plain values; the exercise checkers use it to run the learner's worker
  for real. A function defined in a notebook cell cannot be imported by a child started with
  `spawn` or `forkserver` (its module is `__main__`), so the function's compiled code is sent
  instead (`helpers.portable`); a function that lives in a module is sent by name as usual.
  Errors name the child; a child that hangs is stopped after `timeout`.
"""

from __future__ import annotations

import contextlib
import math
import pickle
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch

from .distributed import (
    LaunchTimeout,
    WorkerFailed,
    died_before_reporting,
    process_context,
    stderr_files,
    stop_processes,
    to_plain,
    write_stderr_to,
)
from .portable import portable, rebuild


def _started(p: Any) -> bool:
    """Whether `p` was started and not closed (`pid` is None before `start()`, and raises after `close()`)."""
    try:
        return p.pid is not None
    except ValueError:
        return False


def _running(p: Any) -> bool:
    """Whether `p` was started and has not ended, read from its sentinel without consuming it (thread-safe)."""
    from multiprocessing.connection import wait

    if not _started(p):
        return False
    try:
        return not wait([p.sentinel], 0)
    except (ValueError, OSError):
        return False


@contextlib.contextmanager
def _alarm_held() -> Iterator[None]:
    """Hold SIGALRM back (where it exists) while processes are being stopped, so a time limit cannot cut it short."""
    can = hasattr(signal, "pthread_sigmask") and hasattr(signal, "SIGALRM")
    if not can or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class time_limit:  # noqa: N801 - used like a function: `with time_limit(procs, 30):`
    """`with time_limit(processes, seconds):` around code that starts and joins `processes`.

    `processes` is the list the block fills (read again and again, so processes appended inside the
    block count). From `seconds` after the block began, a watchdog terminates every process that is
    running, started late ones included, which makes a waiting `p.join()` return. When the block ends, for any
    reason, every process it started is stopped and joined. If the watchdog stopped any,
    `LaunchTimeout` names them (by their index in `processes`), unless the block was interrupted.
    """

    def __init__(self, processes: list[Any], seconds: float) -> None:
        if not isinstance(processes, list):
            raise TypeError(f"processes must be a list of processes, not {type(processes).__name__}")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not (0 < seconds < math.inf):
            raise ValueError(f"seconds must be a positive number, not {seconds!r}")
        self.processes = processes
        self.seconds = float(seconds)
        #: Indices (in `processes`) of the processes the watchdog had to stop.
        self.stopped: list[int] = []
        self._done = threading.Event()
        self._watchdog: threading.Thread | None = None

    def _watch(self) -> None:
        """The watchdog: from the deadline on, stop every process that is (or gets) running, until the block ends."""
        if self._done.wait(self.seconds):
            return
        kill_after: dict[int, float] = {}
        while True:
            for i, p in enumerate(list(self.processes)):
                if not _running(p):
                    continue
                if i not in kill_after:  # also a process started after the deadline
                    self.stopped.append(i)
                    kill_after[i] = time.monotonic() + 3.0
                    with contextlib.suppress(Exception):
                        p.terminate()
                elif time.monotonic() > kill_after[i]:  # SIGTERM ignored or blocked: SIGKILL cannot be
                    with contextlib.suppress(Exception):
                        p.kill()
            if self._done.wait(0.05):
                return

    def __enter__(self) -> time_limit:
        self._done.clear()
        self._watchdog = threading.Thread(target=self._watch, name="time_limit watchdog", daemon=True)
        self._watchdog.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> bool:
        with _alarm_held():
            self._done.set()
            if self._watchdog is not None:
                self._watchdog.join()
            stop_processes([p for p in self.processes if _started(p)])
        if self.stopped and (kind is None or issubclass(kind, Exception)):
            raise LaunchTimeout(self.seconds, self.stopped) from exc
        return False


# --------------------------------------------------------------------------------------------
# Running a function (a learner's, from a notebook cell) in child processes
# --------------------------------------------------------------------------------------------


class _ArgumentsForChild:
    """A child's arguments, pickled while its process starts and rebuilt by the child's own code.

    Pickled then, not earlier, because a multiprocessing Queue may only be handed to a process as
    it starts. Rebuilt by `_child_main`, not by Python's start-up in the child, so that one the
    child cannot rebuild (an object of a class defined in a notebook) comes back with its traceback
    instead of a child that dies before any of our code runs. (A forked child gets them as they are.)
    """

    def __init__(self, args: tuple[Any, ...], pickled: bytes | None = None) -> None:
        self.args, self.pickled = args, pickled

    def __reduce__(self) -> tuple[Any, ...]:
        from multiprocessing.reduction import ForkingPickler  # the pickler that shares tensors and queues

        return (_ArgumentsForChild, ((), bytes(ForkingPickler.dumps(self.args))))

    def rebuild(self) -> tuple[Any, ...]:
        return pickle.loads(self.pickled) if self.pickled is not None else self.args


def _child_main(target: Any, index: int, sent: _ArgumentsForChild, conn: Any, stderr_path: str | None = None) -> None:
    """Runs in each child: rebuild the function and its arguments, call it with one CPU thread, send back what happened.

    If the child dies before it can report, its stderr file tells the parent why.
    """
    try:
        write_stderr_to(stderr_path)
        torch.set_num_threads(1)
        args = sent.rebuild()
        result = rebuild(target)(*args)
        message: tuple[str, Any] = ("ok", to_plain(result))
        try:
            pickle.dumps(message)
        except Exception as exc:
            message = ("error", f"the function returned a value that cannot be sent back ({type(exc).__name__})")
    except BaseException:  # SystemExit and KeyboardInterrupt too: the parent reports them
        message = ("error", traceback.format_exc())
    try:
        conn.send(message)
    finally:
        conn.close()


def run_in_children(
    fn: Callable[..., Any], args_per_child: Sequence[tuple[Any, ...]], timeout: float = 30.0
) -> list[Any]:
    """Run `fn(*args)` in one child process per entry of `args_per_child`; return each result as plain values.

    The children run at the same time. Raises `NotPortable` when `fn` cannot be sent to a child,
    `WorkerFailed` naming the first child that raised or died, and `LaunchTimeout` when they had
    not all finished within `timeout` seconds. No child outlives the call.
    """
    from multiprocessing.connection import wait

    target = portable(fn)
    ctx = process_context()
    processes: list[Any] = []
    pipes: list[Any] = []
    results: dict[int, Any] = {}
    try:
        with stderr_files(len(args_per_child)) as stderr_paths, time_limit(processes, timeout):
            for i, args in enumerate(args_per_child):
                receive, send = ctx.Pipe(duplex=False)
                pipes.append(receive)
                p = ctx.Process(
                    target=_child_main,
                    args=(target, i, _ArgumentsForChild(tuple(args)), send, stderr_paths[i]),
                    daemon=True,
                    name=f"child-{i}",
                )
                try:
                    p.start()
                except (pickle.PicklingError, TypeError, AttributeError) as exc:
                    raise TypeError(
                        f"args_per_child[{i}] cannot be sent to a child process ({type(exc).__name__}: {exc}); "
                        "pass numbers, strings, lists, dicts, tensors, queues or objects of classes defined in a module"
                    ) from None
                send.close()  # the child holds the only sending end: EOF tells us it is gone
                processes.append(p)
            waiting = dict(zip(pipes, range(len(pipes)), strict=True))
            while waiting:
                for conn in wait(list(waiting)):
                    i = waiting.pop(conn)
                    try:
                        kind, payload = conn.recv()
                    except EOFError:
                        processes[i].join(2.0)
                        raise WorkerFailed(
                            i, died_before_reporting(f"child process {i}", processes[i].exitcode, stderr_paths[i])
                        ) from None
                    if kind == "error":
                        raise WorkerFailed(i, payload)
                    results[i] = payload
            for p in processes:
                p.join()
    finally:
        for conn in pipes:
            conn.close()
    return [results[i] for i in range(len(processes))]
