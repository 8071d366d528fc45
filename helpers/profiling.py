"""Keeping the profiler's own start/stop lines out of a learner's cell: `torch.profiler` is a lesson, they are not."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator


@contextlib.contextmanager
def quiet_stderr(fd: int = 2) -> Iterator[None]:
    """Send what C++ code writes to file descriptor `fd` nowhere inside the block; Python's streams are left alone.

    The profiler's tracing library (kineto) prints `USDT: … profiler_start` and `profiler_stop` lines at every
    start and stop, whatever its log level (`SyncActivityProfilerHandler.cpp`), straight to file descriptor 2,
    which redirecting `sys.stderr` does not reach."""
    try:
        (sys.stderr if fd == 2 else sys.stdout).flush()
        saved = os.dup(fd)
    except (OSError, ValueError, AttributeError):  # no such file descriptor here: nothing to silence
        yield
        return
    try:
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), fd)
            yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)
