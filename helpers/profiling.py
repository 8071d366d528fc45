"""Keeping the profiler's own start/stop lines out of a learner's cell.

`torch.profiler` is a lesson in chapters 05, 06, 07 and 11; the lines its tracing library prints
are not. They are written by C++ code straight to file descriptor 2, so redirecting Python's
`sys.stderr` does not catch them.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """Send what C++ code writes to the process's stderr (file descriptor 2) nowhere, inside the block.

    The profiler's tracing library (kineto) prints `USDT: … profiler_start` and `profiler_stop`
    lines on stderr at every start and stop, whatever its log level (`SyncActivityProfilerHandler.cpp`);
    in a notebook they land in the learner's cell. Python's own `sys.stderr` is left alone.
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):  # no file descriptor 2 here: nothing to silence
        yield
        return
    try:
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
