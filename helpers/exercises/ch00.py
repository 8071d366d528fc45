"""Chapter 00 exercises: pick the device to use, tell the three CUDA situations apart, and spot the P100 trap.

Questions 1 and 2, and chapter 01's, are tried on the stand-in machines `MACHINES`; question 3 is a table.
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Callable
from typing import Any
from unittest import mock

import torch

from ..answers import Wrong, expect_function, expect_type
from ..checking import Question
from ..environment import build_supports
from ..standins import pretend_machine
from .cases import table

#: A machine an answer is tried on: the accelerator torch can use there and how many, what torch is built for.
Machine = collections.namedtuple("Machine", "name usable count built")
MACHINES = (
    Machine("a CPU-only build of torch", None, 0, None),
    Machine("a CUDA build of torch without a driver", None, 0, "cuda"),
    Machine("an mps build of torch on a Mac that cannot use mps", None, 0, "mps"),
    Machine("a machine with one CUDA GPU", "cuda", 1, "cuda"),
    Machine("Kaggle's two T4 GPUs", "cuda", 2, "cuda"),
    Machine("a machine with four CUDA GPUs", "cuda", 4, "cuda"),
    Machine("a Mac with Apple's mps", "mps", 1, "mps"),
)


def devices(m: Machine) -> list[torch.device]:
    """What torch can use on `m`: every accelerator device, else the CPU."""
    return [torch.device(m.usable, i) for i in range(m.count)] or [torch.device("cpu")]


def ask(fn: Callable[..., Any], m: Machine, call: str, *args: Any) -> Any:
    """What `fn(*args)` returns on `m`, where torch's device queries answer and its first CUDA use raises as there
    (`pretend_machine`); a stand-in GPU runs no CUDA code, so an answer that needs it is told so."""
    ran_cuda = mock.Mock(side_effect=AssertionError("a stand-in GPU runs no CUDA code"))
    on_gpu = mock.patch.object(torch.cuda, "_lazy_init", ran_cuda) if m.usable == "cuda" else contextlib.nullcontext()
    with pretend_machine(m.usable, m.count, built=m.built), on_gpu:
        try:
            got = fn(*args)
        except Exception as error:
            got = error
    if ran_cuda.called:
        raise Wrong(f"on {m.name}, {call} ran CUDA code, which a stand-in cannot: decide by torch's device queries")
    if isinstance(got, Exception):
        raise Wrong(f"on {m.name}, {call} raised {type(got).__name__}: {(str(got).splitlines() or [''])[0][:200]}")
    return got


def same_everywhere(fn: Callable[..., Any], call: str, *args: Any) -> str:
    """What a verdict adds where `fn(*args)` gives the same answer on every machine: it did not ask torch."""
    with contextlib.suppress(Wrong):
        if len({repr(ask(fn, m, call, *args)) for m in MACHINES}) == 1:
            return " (the same on every machine: ask torch inside the function, each time it is called)"
    return ""


def _check_pick_device(fn: Any) -> None:
    expect_function(fn, "pick_device", "no arguments")
    for m in MACHINES:
        got = expect_type(ask(fn, m, "pick_device()"), torch.device, "pick_device() to return a torch.device")
        if got not in (torch.device(devices(m)[0].type), *devices(m)):
            said = f"on {m.name}, pick_device() returned {got}; the usable device there is {devices(m)[0].type}"
            raise Wrong(said + same_everywhere(fn, "pick_device()"))


def _check_cuda_diagnosis(fn: Any) -> None:
    expect_function(fn, "cuda_diagnosis", "no arguments")
    for m in MACHINES:  # section 1's table: a torch without CUDA (a Mac's too) is a CPU-only build
        want = "GPU ready" if m.usable == "cuda" else "no usable GPU" if m.built == "cuda" else "CPU-only build"
        got = expect_type(ask(fn, m, "cuda_diagnosis()"), str, "cuda_diagnosis() to return a string")
        if got != want:
            why = " (torch.version.cuda is None there: section 1's table)" * (m.built == "mps")
            said = f"on {m.name}, cuda_diagnosis() returned {got!r}; the answer there is {want!r}{why}"
            raise Wrong(said + same_everywhere(fn, "cuda_diagnosis()"))


#: Question 3's (capability, arch_list): sorted and unsorted lists, sm_ and compute_ entries, PTX on the same,
#: a later minor and a later major capability (NVIDIA's rule) and on an older one, 'a' targets, an empty list.
_KERNELS = (
    ((7, 5), ["sm_75", "sm_80", "sm_86", "sm_90", "compute_90"]),
    ((6, 0), ["sm_75", "sm_80", "sm_86", "sm_90", "compute_90"]),
    ((8, 9), ["sm_90", "sm_80"]),
    ((8, 6), ["sm_89"]),
    ((8, 0), ["sm_75"]),
    ((10, 0), ["sm_90", "compute_90", "sm_80"]),
    ((9, 0), ["compute_80"]),
    ((9, 0), ["compute_90"]),
    ((8, 6), ["compute_80"]),
    ((8, 9), ["compute_86"]),
    ((7, 5), ["compute_80"]),
    ((7, 5), []),
    ((9, 0), ["sm_90a"]),
    ((12, 1), ["sm_90", "sm_120a"]),
    ((12, 1), ["sm_100", "sm_120"]),
    ((10, 0), ["compute_90a"]),
)


def _bool(value: Any, call: str) -> bool:
    return expect_type(value, bool, f"{call} to return True or False")


_check_has_kernels_for = table("has_kernels_for", "(capability, arch_list)", _KERNELS, build_supports, answer=_bool)

QUESTIONS = [
    Question(number, task, name, checker, hint, chapter="00")
    for number, (name, checker, task, hint) in enumerate(
        (
            (
                "pick_device",
                _check_pick_device,
                "Write `pick_device()` that returns the torch.device to use now: the accelerator, or else the CPU.",
                "torch.accelerator.current_accelerator() names what torch was built for; pass check_available=True "
                "to get None unless that device is usable right now.",
            ),
            (
                "cuda_diagnosis",
                _check_cuda_diagnosis,
                "Write `cuda_diagnosis()`: 'CPU-only build', 'no usable GPU' or 'GPU ready', for the torch it runs in.",
                "First ask whether this torch was built with CUDA at all (torch.version.cuda is None if not), "
                "then whether CUDA is usable now (torch.cuda.is_available()).",
            ),
            (
                "has_kernels_for",
                _check_has_kernels_for,
                "Write `has_kernels_for(capability, arch_list)`: whether a torch build whose "
                "`torch.cuda.get_arch_list()` is `arch_list` can run on a GPU of compute capability `capability`.",
                "Split each entry into kind, number and an optional letter: 'sm_XY' machine code runs on major "
                "version X with minor Y or higher; 'compute_XY' PTX on any capability X.Y or higher; an 'a' target "
                "(sm_90a, compute_90a) only on exactly X.Y. The last digit is the minor version: sm_120 is 12.0.",
            ),
        ),
        1,
    )
]
