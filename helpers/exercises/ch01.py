"""Chapter 01 exercises: your own `try_gpu` and `try_all_gpus`, counting usable CPUs, and a debug-this
on the trap of `try_gpu(1)` falling back to the CPU.

The device answers are tried on chapter 00's `MACHINES`, where torch's device queries answer as there;
the CPU count with this process allowed one CPU (not the lowest-numbered), two with a gap, then all it had.
"""

from __future__ import annotations

import os
from typing import Any
from unittest import mock

import torch

from ..answers import Wrong, expect_function, expect_type
from ..checking import Question
from .ch00 import MACHINES, ask, devices, same_everywhere


def _names(found: list[torch.device]) -> str:
    return f"[{', '.join(map(str, found))}]"


def _check_try_gpu(fn: Any) -> None:
    expect_function(fn, "try_gpu", "(i=0)")
    for m in MACHINES:
        for args in ((), *((i,) for i in range(m.count + 2))):
            call, i = f"try_gpu({', '.join(map(str, args))})", (*args, 0)[0]
            got = expect_type(ask(fn, m, call, *args), torch.device, f"{call} to return a torch.device")
            want = devices(m)[i] if i < m.count else torch.device("cpu")
            if got != want:
                raise Wrong(f"on {m.name}, {call} returned {got}; expected {want}{same_everywhere(fn, call, *args)}")


def _check_try_all_gpus(fn: Any) -> None:
    expect_function(fn, "try_all_gpus", "no arguments")
    for m in MACHINES:
        got = expect_type(ask(fn, m, "try_all_gpus()"), list, "try_all_gpus() to return a list of torch.device")
        if [expect_type(d, torch.device, "try_all_gpus() to list torch.device objects") for d in got] != devices(m):
            said = f"on {m.name}, try_all_gpus() returned {_names(got)}; expected {_names(devices(m))}"
            raise Wrong(said + same_everywhere(fn, "try_all_gpus()"))


def _check_count_usable_cpus(fn: Any) -> None:
    expect_function(fn, "count_usable_cpus", "no arguments")
    whole = "count_usable_cpus() to return a whole number (an int)"
    if not hasattr(os, "sched_getaffinity"):  # macOS, Windows: no per-process CPU set to vary
        if (got := expect_type(fn(), int, whole)) != os.cpu_count():
            raise Wrong(f"count_usable_cpus() returned {got!r}; this machine has {os.cpu_count()} CPUs")
        return
    allowed = sorted(os.sched_getaffinity(0))  # as a job scheduler may: the last CPU, two with a gap, then all
    counts, two = [], [allowed[-3], allowed[-1]] if len(allowed) > 2 else allowed
    wrapped = [mock.patch.object(os, name, wraps=getattr(os, name)) for name in ("cpu_count", "sched_getaffinity")]
    with wrapped[0] as machine, wrapped[1] as own:  # which of the two it asks
        for cpus in dict.fromkeys(map(tuple, ([allowed[-1]], two, allowed))):
            os.sched_setaffinity(0, cpus)
            try:
                counts.append((list(cpus), expect_type(fn(), int, whole)))
            finally:
                os.sched_setaffinity(0, allowed)
    for cpus, got in counts:
        if got != len(cpus):
            said = f"with this process allowed {len(cpus)} CPU(s) {cpus}, count_usable_cpus() returned {got!r}"
            why = f" ({got!r} is the machine's count, os.cpu_count())" * (machine.called and got == os.cpu_count())
            same = len({c[1] for c in counts}) == 1 < len(counts) and not own.called
            once = " (the same whatever CPUs were allowed, and no call to os.sched_getaffinity: ask it each time)"
            raise Wrong(f"{said}; expected {len(cpus)}{why or once * same}")


def _stage(value: Any, said: str) -> torch.device:
    """A stage's device: a torch.device or a spelling torch knows (the question asks for no type)."""
    try:
        return torch.device(value) if isinstance(value, str) else expect_type(value, torch.device, "a device")
    except RuntimeError:
        raise Wrong(f"{said} {value!r} for a stage, which is not a device torch knows") from None


def _check_stage_devices(fn: Any) -> None:
    expect_function(fn, "stage_devices", "no arguments")
    for m in MACHINES:
        pair = expect_type(ask(fn, m, "stage_devices()"), tuple, "stage_devices() to return (first, second)")
        if len(pair) != 2:
            raise Wrong(f"on {m.name}, stage_devices() returned {len(pair)} values: return two, (first, second)")
        first, second = stages = [_stage(d, f"on {m.name}, stage_devices() gave") for d in pair]
        if all(d in devices(m) for d in stages) and (first != second or m.count < 2):
            continue
        said = f"on {m.name}, stage_devices() returned ({first}, {second})"
        if any(d.type == m.usable and d.index is None for d in stages):
            raise Wrong(f"{said}: name the index ({m.usable}:0); a device without one means the current device")
        if m.usable and first in devices(m) and second.type == "cpu":
            raise Wrong(f"{said}: the second stage would run on the CPU next to a GPU, copying its input every step")
        if m.count >= 2 and first == second:
            raise Wrong(f"{said}: where there are {m.count} GPUs, give each stage one of its own")
        raise Wrong(f"{said}; the devices torch can use there: {_names(devices(m))}")


QUESTIONS = [
    Question(number, task, name, checker, hint, chapter="01", context=lambda: {"os": os})
    for number, (name, checker, task, hint) in enumerate(
        (
            (
                "try_gpu",
                _check_try_gpu,
                "Write `try_gpu(i=0)`: device i of the accelerator this process can use right now, else the CPU.",
                "torch.accelerator.current_accelerator(check_available=True) is None unless an accelerator is "
                "usable; torch.accelerator.device_count() says how many; torch.device(type, index) names one.",
            ),
            (
                "try_all_gpus",
                _check_try_all_gpus,
                "Write `try_all_gpus()`: a list of every usable accelerator device, or `[cpu]` when there is none.",
                "Build the list with torch.device(accelerator.type, i) for i in "
                "range(torch.accelerator.device_count()), where accelerator comes from "
                "current_accelerator(check_available=True); an empty list becomes [cpu].",
            ),
            (
                "count_usable_cpus",
                _check_count_usable_cpus,
                "Write `count_usable_cpus()` returning how many CPUs this process may run on.",
                "os.cpu_count() counts the machine's CPUs; os.sched_getaffinity(0) is the set this process may use.",
            ),
            (
                "stage_devices",
                _check_stage_devices,
                "Debug this: `stage_devices()` picks the devices for a model split in two stages with try_gpu(0) "
                "and try_gpu(1). Fix it so that each stage gets its own GPU where there are two or more, both "
                "stages share the GPU where there is one, and both use the CPU where there is none.",
                "What is try_gpu(1) on a machine with one GPU? Count first: try_all_gpus() lists the usable devices "
                "([cpu] when there is none), and its length says how many stages can have a device of their own.",
            ),
        ),
        1,
    )
]
