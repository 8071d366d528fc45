"""The course runner's progress bar: chapters done, and which chapter is running and for how long.

A chapter can run for minutes (a full-size run, or a stalled cell waiting out its time limit); a
bar that only changes when a chapter ends would show the last finished chapter the whole time. So
a background thread redraws the bar every few seconds with the running chapters and their time so
far: "chapters 4/13 | running 05_gpu_memory (2 min 12 s)". In a terminal it redraws every second;
in a log (CI, output piped to a file) every 30 s, so the log stays short.
"""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType
from typing import Any


def format_elapsed(seconds: float) -> str:
    """`seconds` as "7 s" or "2 min 12 s" (whole seconds: what a person watching a bar reads)."""
    whole = max(0, int(seconds))
    minutes, secs = divmod(whole, 60)
    return f"{minutes} min {secs} s" if minutes else f"{secs} s"


class ChapterProgress:
    """A tqdm bar over chapters that names the running ones with their elapsed time.

    Use as a context manager; call `started(name)` when a chapter begins and `finished(name,
    status)` when it ends (both thread-safe). `interval` is the redraw period in seconds (default:
    1 in a terminal, 30 otherwise).
    """

    def __init__(self, total: int, *, interval: float | None = None, file: Any = None) -> None:
        from tqdm.auto import tqdm

        self._file = file if file is not None else sys.stderr
        if interval is None:
            interval = 1.0 if getattr(self._file, "isatty", lambda: False)() else 30.0
        self._interval = interval
        self._bar = tqdm(total=total, desc="chapters", unit="chapter", file=self._file, mininterval=0)
        self._running: dict[str, float] = {}
        self._last: str = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="chapter-progress", daemon=True)

    def __enter__(self) -> ChapterProgress:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
        with self._lock:
            self._running.clear()
            self._redraw()
            self._bar.close()

    def started(self, chapter: str) -> None:
        """Note that `chapter` began now."""
        with self._lock:
            self._running[chapter] = time.monotonic()
            self._redraw()

    def finished(self, chapter: str, status: str) -> None:
        """Note that `chapter` ended with `status` ("ok" or "failed") and count it."""
        with self._lock:
            began = self._running.pop(chapter, None)
            took = f" in {format_elapsed(time.monotonic() - began)}" if began is not None else ""
            self._last = f"{chapter} {status}{took}"
            self._bar.set_postfix_str(self.describe(), refresh=False)
            self._bar.update()

    def describe(self) -> str:
        """The bar's text after the count: the running chapters with their time, else the last one that ended."""
        now = time.monotonic()
        if self._running:
            running = ", ".join(f"{name} ({format_elapsed(now - began)})" for name, began in self._running.items())
            return f"running {running}"
        return f"last: {self._last}" if self._last else ""

    def _redraw(self) -> None:
        self._bar.set_postfix_str(self.describe(), refresh=True)

    def _tick(self) -> None:
        while not self._stop.wait(self._interval):
            with self._lock:
                if self._running:
                    self._redraw()
