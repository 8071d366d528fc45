"""A time limit for the processes a chapter 09 cell starts and joins itself.

`with time_limit(processes, seconds):` around the cell's own `start()`/`join()` code. A watchdog
thread terminates every process still running after `seconds` (so a plain `p.join()` returns even
when the child hangs), and on leaving the block, normally, by an error or by the learner's
interrupt, every process the block started is stopped (terminate, then kill, then join): no
orphan survives the cell. If the watchdog had to stop a process, `LaunchTimeout` names it.
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

from .distributed import LaunchTimeout, stop_processes


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
