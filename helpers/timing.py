"""Timing that is right on a GPU: GPU work is queued and returns at once, so every timer here waits
for the device (`helpers.devices.synchronize`) before it reads the clock. A `Timing` carries the stamp
of the hardware and torch that produced it; `gpu_cycles_per_ms` calibrates `torch.cuda._sleep` (chapter 06)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import torch

from .devices import a_function, synchronize, usable_device
from .environment import stamp


@dataclass(frozen=True)
class Timing:
    """Seconds per call of some work on a device (median over repeats), with its provenance."""

    seconds: float
    repeats: int
    device: str
    stamp: str
    threads: int = 1  # torch's CPU threads while it ran (`torch.get_num_threads()`), which a CPU timing depends on

    def __str__(self) -> str:
        n = f", {self.threads} CPU thread{'s' * (self.threads != 1)}" * (self.device == "cpu")
        return f"{format_seconds(self.seconds)} per call on {self.device} ({self.repeats} repeats{n}; {self.stamp})"


def format_seconds(seconds: float) -> str:
    """Seconds in the unit a person reads best: ns, µs, ms or s (a difference keeps its sign: '-1 s')."""
    sign, seconds = ("-" if seconds < 0 else ""), abs(seconds)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{sign}{seconds / scale:.3g} {unit}"
    return f"{sign}{seconds / 1e-9:.3g} ns"


def time_call(fn: Callable[[], Any], device: torch.device | str, *, min_run_time: float = 0.2, threads=1) -> Timing:
    """Median seconds per call of `fn()` on `device`, synchronising the device around every call: a
    `torch.utils.benchmark.Timer` (warm-up, automatic repeat count) times a statement that ends with one, on
    `threads` CPU threads (the Timer's `num_threads`, 1 by default; `torch.get_num_threads()` for all of torch's)."""
    logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)  # its "No CUDA runtime is found": noise
    from torch.utils import benchmark

    a_function(fn, "fn")
    synchronize(device := usable_device(device))
    run = lambda: (fn(), synchronize(device))
    timer = benchmark.Timer(stmt="run()", globals={"run": run}, num_threads=threads)
    measured = timer.blocked_autorange(min_run_time=min_run_time)
    return Timing(measured.median, len(measured.times) * measured.number_per_run, str(device), stamp(), threads)


def wall_seconds(fn: Callable[[], Any], device: torch.device | str) -> float:
    """Wall-clock seconds of one call of `fn()`, the device synchronised before and after (both checked first)."""
    a_function(fn, "fn")
    synchronize(device := usable_device(device))
    start = time.perf_counter()
    fn()
    synchronize(device)
    return time.perf_counter() - start


def gigabytes_per_second(nbytes: int, seconds: float) -> float:
    """Bandwidth in GB/s (10^9 bytes per second, as datasheets count) for `nbytes` moved in `seconds`."""
    return nbytes / seconds / 1e9


@lru_cache(maxsize=16)
def gpu_cycles_per_ms(device_index: int = 0) -> float:
    """GPU clock cycles per millisecond of `torch.cuda._sleep` on CUDA device `device_index`, measured.

    Timed with CUDA events after a warm-up sleep (which lets the GPU raise its clock first), so that
    `torch.cuda._sleep(int(ms * gpu_cycles_per_ms()))` keeps a stream busy for about `ms`."""
    probe = 20_000_000
    with torch.cuda.device(device_index):
        torch.cuda._sleep(probe)  # warm-up
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(probe)
        end.record()
        end.synchronize()
        return probe / max(start.elapsed_time(end), 1e-6)
