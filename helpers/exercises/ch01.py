"""Chapter 01 exercises: your own `try_gpu` and `try_all_gpus`, counting usable CPUs, and a debug-this
on the trap of `try_gpu(1)` falling back to the CPU.

The device-choosing answers are called on pretend machines (`helpers.standins.pretend_machine`):
two CUDA GPUs, a Mac, a CUDA build without a driver and the CPU-only build, whatever this machine is
(question 4 adds one CUDA GPU and four). Only torch's device queries answer as there; no tensor is made.
"""

from __future__ import annotations

import os
from typing import Any

import torch

from ..checking import Question, Wrong, expect_function, expect_number, expect_type
from ..standins import pretend_machine

#: Pretend machines the device-choosing answers are checked on: (label, accelerator, count, built).
_NO_DRIVER = ("a CUDA build of torch without a driver", None, 0, "cuda")
_CPU_ONLY = ("the CPU-only build of torch", None, 0, None)
_TWO_T4 = ("two CUDA GPUs (Kaggle's T4 ×2)", "cuda", 2, None)
_MAC = ("a Mac with Apple's GPU", "mps", 1, None)
_MACHINES = (_NO_DRIVER, _CPU_ONLY, _TWO_T4, _MAC)


def _expected_devices(accelerator: str | None, count: int) -> list[torch.device]:
    return [torch.device(accelerator, i) for i in range(count)] if accelerator else [torch.device("cpu")]


def _expect_device(got: Any, call: str, where: str) -> torch.device:
    if got is None:
        raise Wrong(f"{call} returned None: the function needs a `return` of a torch.device")
    if isinstance(got, str):
        raise Wrong(f"on {where}, {call} returned the string {got!r}; return a torch.device (wrap it in torch.device)")
    return expect_type(got, torch.device, f"a torch.device from {call}")


def _check_try_gpu(fn: Any) -> None:
    expect_function(fn, "try_gpu", "(i=0)")
    for where, accelerator, count, built in _MACHINES:
        usable = _expected_devices(accelerator, count)
        for i in range(count + 1):
            want = usable[i] if accelerator and i < count else torch.device("cpu")
            with pretend_machine(accelerator, count, built=built):
                got = _expect_device(fn(i), f"try_gpu({i})", where)
                default = _expect_device(fn(), "try_gpu()", where) if i == 0 else want
            if got != want:
                index_note = " (name the index: a device without one means the current device)" * (
                    got.index is None and got.type == want.type
                )
                raise Wrong(f"on {where}, try_gpu({i}) returned {got}, but it should be {want}{index_note}")
            if default != want:
                raise Wrong(f"on {where}, try_gpu() returned {default}; with no argument it should be try_gpu(0)")


def _check_try_all_gpus(fn: Any) -> None:
    expect_function(fn, "try_all_gpus", "no arguments")
    for where, accelerator, count, built in _MACHINES:
        with pretend_machine(accelerator, count, built=built):
            got = fn()
        if got is None:
            raise Wrong("try_all_gpus() returned None: the function needs a `return` of a list of torch.device")
        got = expect_type(got, list, "a list of torch.device")
        if not got:
            raise Wrong(f"on {where}, try_all_gpus() returned an empty list; fall back to [torch.device('cpu')]")
        for d in got:
            if not isinstance(d, torch.device):
                raise Wrong(
                    f"on {where}, try_all_gpus() listed {d!r}; list torch.device objects (wrap with torch.device)"
                )
        want = _expected_devices(accelerator, count)
        if got != want:
            shown = ", ".join(map(str, got))
            raise Wrong(
                f"on {where}, try_all_gpus() returned [{shown}], but it should be [{', '.join(map(str, want))}]"
            )


def _cpu_count(got: Any) -> int:
    """The learner's count as an int (a whole float or a one-element tensor is meant as one); else `Wrong`."""
    number = expect_number(got, "a whole number of CPUs from count_usable_cpus()")
    if isinstance(number, float) and not number.is_integer():
        raise Wrong(f"count_usable_cpus() returned {number!r}; CPUs come in whole numbers")
    return int(number)


def _check_count_usable_cpus(fn: Any) -> None:
    expect_function(fn, "count_usable_cpus", "no arguments")
    if not hasattr(os, "sched_getaffinity"):  # macOS, Windows: only the plain answer can be checked
        got = _cpu_count(fn())
        if got != (os.cpu_count() or 1):
            raise Wrong(f"count_usable_cpus() returned {got!r}, not this machine's CPU count")
        return
    allowed = os.sched_getaffinity(0)
    if len(allowed) < 2:
        got = _cpu_count(fn())
        if got != len(allowed):
            raise Wrong(f"count_usable_cpus() returned {got!r}, but this process may use {len(allowed)} CPU")
        return
    one = {min(allowed)}
    os.sched_setaffinity(0, one)  # pretend a job scheduler gave us a single CPU
    try:
        got = fn()
    finally:
        os.sched_setaffinity(0, allowed)
    got = _cpu_count(got)
    if got != 1:
        raise Wrong(
            f"with this process limited to one CPU, count_usable_cpus() returned {got!r}; "
            "count the CPUs this process may use, not the machine's"
        )
    if _cpu_count(fn()) != len(allowed):
        raise Wrong("count_usable_cpus() should follow the process's CPU set, which is back to normal now")


# -- Question 4: debug this ---------------------------------------------------------------------------

#: The machines question 4's answer is called on, in this order: those above, one GPU and four.
_STAGE_MACHINES = (
    _CPU_ONLY,
    _NO_DRIVER,
    ("a machine with one CUDA GPU", "cuda", 1, None),
    _TWO_T4,
    _MAC,
    ("a machine with four CUDA GPUs", "cuda", 4, None),
)


def _stage_device(value: Any, stage: int, where: str) -> torch.device:
    """The device the learner gave for one stage: a torch.device, or a spelling torch knows."""
    if isinstance(value, str):
        try:
            return torch.device(value)
        except RuntimeError:
            raise Wrong(
                f"on {where}, stage_devices() gave {value!r} for stage {stage}: not a device torch knows"
            ) from None
    return expect_type(value, torch.device, f"a torch.device for stage {stage}")


def _stage_pair(fn: Any, where: str, accelerator: str | None, count: int, built: str | None) -> tuple:
    """The learner's two devices on one pretend machine; `Wrong` for an IndexError there or for not a pair."""
    with pretend_machine(accelerator, count, built=built):
        try:
            got = fn()
        except IndexError as error:
            devices = f"{count} {accelerator} device{'s' * (count != 1)}" if accelerator else "no usable accelerator"
            raise Wrong(
                f"on {where}, stage_devices() raised IndexError ({error}): that machine has {devices}, so a list "
                "of its devices is shorter than two there: plan for the number of devices you get"
            ) from None
    if got is None:
        raise Wrong("stage_devices() returned None: return the two devices as a pair, (first, second)")
    pair = expect_type(got, tuple, "a pair of devices (first, second) from stage_devices()")
    if len(pair) != 2:
        raise Wrong(f"on {where}, stage_devices() returned {len(pair)} values: return two, (first, second)")
    return tuple(_stage_device(d, n, where) for n, d in enumerate(pair, 1))


def _check_stage_devices(fn: Any) -> None:
    expect_function(fn, "stage_devices", "no arguments")
    for where, accelerator, count, built in _STAGE_MACHINES:
        first, second = _stage_pair(fn, where, accelerator, count, built)
        usable = _expected_devices(accelerator, count)
        said = f"on {where}, stage_devices() returned ({first}, {second})"
        for device in (first, second):
            if device.type == accelerator and device.index is None:
                raise Wrong(f"{said}: name the index ({accelerator}:0); a device without one means the current device")
            if device.type != "cpu" and device not in usable:
                because = (
                    f": this torch is built for {built} but has no driver, so nothing of that kind is usable. "
                    "Ask what is usable now (check_available=True, try_all_gpus()), not what torch was built for"
                    if built and device.type == built
                    else f", but {device} cannot be used there"
                )
                raise Wrong(f"{said}{because}")
        if not accelerator:
            continue
        if first.type == second.type == "cpu":
            if accelerator != "cuda":  # the CUDA machines, checked first, were answered right
                raise Wrong(
                    f"{said}, although {usable[0]} is usable: torch.cuda knows only CUDA GPUs; "
                    "count with torch.accelerator (or try_all_gpus()), which knows every kind"
                )
            raise Wrong(f"{said}: both stages on the CPU although {usable[0]} is usable")
        if second.type == "cpu":
            plan = "With one GPU, put both stages on it." if count == 1 else "Give it a GPU of its own."
            raise Wrong(
                f"{said}: the second stage would run on the CPU next to a GPU, and every step would copy "
                f"its input across. {plan}"
            )
        if first.type == "cpu":
            raise Wrong(f"{said}: the first stage would run on the CPU although {usable[0]} is usable")
        if count >= 2 and first == second:
            raise Wrong(
                f"{said}: each stage should get its own GPU where there are {count}; both on {first} leaves "
                f"{'the other' if count == 2 else 'the others'} idle"
            )


QUESTIONS = [
    Question(
        number=1,
        task="Write `try_gpu(i=0)`: device i of the accelerator this process can use right now, else the CPU.",
        variable="try_gpu",
        checker=_check_try_gpu,
        hint_text=(
            "torch.accelerator.current_accelerator(check_available=True) is None unless an accelerator is usable; "
            "torch.accelerator.device_count() says how many; torch.device(type, index) names one."
        ),
        chapter="01",
    ),
    Question(
        number=2,
        task="Write `try_all_gpus()`: a list of every usable accelerator device, or `[cpu]` when there is none.",
        variable="try_all_gpus",
        checker=_check_try_all_gpus,
        hint_text=(
            "Build the list with torch.device(accelerator.type, i) for i in range(torch.accelerator.device_count()), "
            "where accelerator comes from current_accelerator(check_available=True); an empty list becomes [cpu]."
        ),
        chapter="01",
    ),
    Question(
        number=3,
        task="Write `count_usable_cpus()` returning how many CPUs this process may run on.",
        variable="count_usable_cpus",
        checker=_check_count_usable_cpus,
        hint_text="os.cpu_count() counts the machine's CPUs; os.sched_getaffinity(0) is the set this process may use.",
        chapter="01",
        context=lambda: {"os": os},
    ),
    Question(
        number=4,
        task=(
            "Debug this: `stage_devices()` picks the devices for a model split in two stages with try_gpu(0) "
            "and try_gpu(1). Fix it so that each stage gets its own GPU where there are two or more, both "
            "stages share the GPU where there is one, and both use the CPU where there is none."
        ),
        variable="stage_devices",
        checker=_check_stage_devices,
        hint_text=(
            "What is try_gpu(1) on a machine with one GPU? Count first: try_all_gpus() lists the usable devices "
            "([cpu] when there is none), and its length says how many stages can have a device of their own."
        ),
        chapter="01",
    ),
]
