"""Chapter 00 exercises: pick the device, tell the three CUDA situations apart, spot the P100 trap (a table)."""

from __future__ import annotations

import collections
import contextlib
import os
import pathlib
import tempfile
from collections.abc import Callable
from typing import Any
from unittest import mock

import torch

from ..answers import Wrong, expect_function, expect_type
from ..checking import Question
from ..environment import build_supports
from ..learner_code import describe_error
from ..standins import pretend_machine
from .cases import table

#: A machine: the accelerator torch can use, how many, what torch is built for, the T4 GPUs nvidia-smi lists there.
Machine = collections.namedtuple("Machine", "name usable count built listed")
T4 = collections.namedtuple("Properties", "name major minor total_memory")("Tesla T4", 7, 5, 15 * 2**30)
MACHINES = (
    Machine("a CPU-only build of torch", None, 0, None, 0),
    Machine("Kaggle with the accelerator off (a CUDA build of torch without a driver)", None, 0, "cuda", 0),
    Machine("an mps build of torch on a Mac that cannot use mps", None, 0, "mps", 0),
    Machine("a CPU-only build of torch on a machine with an NVIDIA GPU (nvidia-smi lists it)", None, 0, None, 1),
    Machine("a CUDA build of torch that cannot use the GPU nvidia-smi lists", None, 0, "cuda", 1),
    Machine("a machine with one CUDA GPU", "cuda", 1, "cuda", 1),
    Machine("Kaggle's two T4 GPUs", "cuda", 2, "cuda", 2),
    Machine("a machine with sixteen CUDA GPUs", "cuda", 16, "cuda", 16),  # cuda:10 sorts before cuda:2 as text
    Machine("a Mac with Apple's mps", "mps", 1, "mps", 0),
)
_SETTERS = "_C._cuda_setDevice _C._accelerator_setDeviceIndex _C._accelerator_exchangeDevice cuda._exchange_device"
_SETTERS = f"{_SETTERS} _C._accelerator_maybeExchangeDevice cuda._maybe_exchange_device".split()


def devices(m: Machine) -> list[torch.device]:
    """What torch can use on `m`: every accelerator device, else the CPU."""
    return [torch.device(m.usable, i) for i in range(m.count)] or [torch.device("cpu")]


def shown(value: Any) -> str:
    """A device as torch names it (cuda:0), devices as [cuda:0, cpu] or (cuda:0, cpu), a string quoted."""
    if not isinstance(value, list | tuple):
        return repr(value) if isinstance(value, str) else str(value)
    return ("[{}]" if isinstance(value, list) else "({})").format(", ".join(map(str, value)))


def ask(fn: Callable[..., Any], m: Machine, call: str, *args: Any, may_raise: bool = False) -> Any:
    """What `fn(*args)` returns on `m` (or raises, where it `may_raise`): torch's device queries answer as there, and
    nvidia-smi is on PATH only where `m`'s driver lists GPUs; a stand-in runs no CUDA code.
    KAGGLE_KERNEL_RUN_TYPE is set on Kaggle's only; torch's ways to set the current device set `m`'s, 0 at first."""
    ran_cuda, current = mock.Mock(side_effect=AssertionError("a stand-in GPU runs no CUDA code")), [0]

    def properties(device: Any = None) -> Any:  # torch.cuda.get_device_properties (and name, capability): a T4's
        if 0 <= torch.cuda._get_device_index(device, optional=True) < m.count:
            return T4
        raise AssertionError("Invalid device id")

    def exchange(index: int) -> int:  # set the current device to one of m's, returning the last; a negative: no-op
        if index >= 0 and properties(index):
            current[0], index = index, current[0]
        return index

    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as folder:
        smi = pathlib.Path(folder, "nvidia-smi")
        smi.write_text("#!/bin/sh\n" + "".join(f"echo 'GPU {i}: Tesla T4 (UUID: GPU-{i})'\n" for i in range(m.listed)))
        smi.chmod(0o755)
        path = [d for d in os.get_exec_path() if not os.path.exists(os.path.join(d, "nvidia-smi"))]
        stack.enter_context(mock.patch.dict(os.environ, PATH=os.pathsep.join([folder] * (m.listed > 0) + path)))
        os.environ.pop("KAGGLE_KERNEL_RUN_TYPE", None)  # restored after
        os.environ.update({"KAGGLE_KERNEL_RUN_TYPE": "Interactive"} if "Kaggle" in m.name else {})
        stack.enter_context(pretend_machine(m.usable, m.count, built=m.built))
        stack.enter_context(mock.patch("torch.cuda.get_arch_list", lambda: _LISTS[0].split() * (m.built == "cuda")))
        for name in _SETTERS:
            stack.enter_context(mock.patch(f"torch.{name}", exchange, create=True))
        for module, name in ((torch.accelerator, "current_device_index"), (torch.cuda, "current_device")):  # 0 or raise
            stack.enter_context(mock.patch.object(module, name, lambda get=module.__dict__[name]: get() + current[0]))
        if m.usable == "cuda":  # elsewhere, CUDA's first use (so a query of a GPU's properties) raises as there
            stack.enter_context(mock.patch.multiple(torch.cuda, _lazy_init=ran_cuda, get_device_properties=properties))
        try:
            got = fn(*args)
        except Exception as error:
            got = error
    if ran_cuda.called:
        raise Wrong(f"on {m.name}, {call} ran CUDA code, which a stand-in cannot: decide by torch's device queries")
    if current[0]:
        raise Wrong(f"on {m.name}, {call} left the current device at {current[0]} after the call: put it back")
    if isinstance(got, Exception) and not may_raise:
        raise Wrong(f"on {m.name}, {call} raised {describe_error(got)}")
    return got


def on_machines(name: str, takes: str, kind: type, what: str, judge: Callable[..., str], calls: Any = None) -> Any:
    """A checker calling `name(*args)` for each `args` of `calls(m)` (default: none) on every machine `m`: the answer
    must be a `kind` (`what`), and `judge(m, answer, *args)` says what was expected there, or "" where it is right."""

    def check(fn: Any) -> None:
        expect_function(fn, name, takes)
        for m in MACHINES:
            for args in calls(m) if calls else [()]:
                call = f"{name}({', '.join(map(str, args))})"
                if isinstance(got := ask(fn, m, call, *args, may_raise=bool(args) and args[0] < 0), Exception):
                    continue  # a negative index names no device: an error is right too
                if said := judge(m, expect_type(got, kind, f"{call} to return {what}"), *args):
                    everywhere = {repr(ask(fn, other, call, *args, may_raise=True)) for other in MACHINES}
                    same = " (the same on every machine, whatever devices it has)"  # seen, not guessed why
                    raise Wrong(f"on {m.name}, {call} returned {shown(got)}; {said}{same * (len(everywhere) == 1)}")

    return check


def _pick_device(m: Machine, got: torch.device) -> str:
    usable = devices(m)
    return "" if got in (torch.device(usable[0].type), *usable) else f"the usable device there is {usable[0].type}"


def _cuda_diagnosis(m: Machine, got: str) -> str:
    want = "GPU ready" if m.usable == "cuda" else "no usable GPU" if m.built == "cuda" else "CPU-only build"
    why = " (torch.version.cuda is None there: section 1's table)" * (m.built == "mps")
    return "" if got == want else f"the answer there is {want!r}{why}"


#: Question 3's cases: every GPU (older than the lists, the same, later, 12.1) with every list and each single entry.
_GPUS = ((7, 5), (6, 0), (8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (12, 1))
_LISTS = ("sm_75 sm_80 sm_86 sm_90 compute_90", "sm_90 sm_80", "sm_90 compute_90 sm_80", "", "sm_90 sm_120a")
_ENTRIES = "sm_75 sm_80 sm_86 sm_89 sm_100 sm_120 compute_80 compute_86 compute_90 sm_90a compute_90a"
_KERNELS = [(gpu, arch) for arch in [*map(str.split, _LISTS), *([a] for a in _ENTRIES.split())] for gpu in _GPUS]
_bool = lambda value, call: expect_type(value, bool, f"{call} to return True or False")

_CHECKS = (
    on_machines("pick_device", "no arguments", torch.device, "a torch.device", _pick_device),
    on_machines("cuda_diagnosis", "no arguments", str, "a string", _cuda_diagnosis),
    table("has_kernels_for", "(capability, arch_list)", _KERNELS, build_supports, answer=_bool),
)
#: Each question's task (the notebook states it in full) and hint, by the name it defines.
_TASKS = {
    "pick_device": "Write `pick_device()` that returns the torch.device to use now: the accelerator, or else the CPU.",
    "cuda_diagnosis": "Write `cuda_diagnosis()`: 'CPU-only build', 'no usable GPU' or 'GPU ready', for its torch.",
    "has_kernels_for": "Write `has_kernels_for(capability, arch_list)`: can a build with arch_list run on that GPU?",
}
_HINTS = {
    "pick_device": "torch.accelerator.current_accelerator(check_available=True): the accelerator usable now, or None.",
    "cuda_diagnosis": "Built with CUDA? torch.version.cuda is None if not. Usable now? torch.cuda.is_available().",
    "has_kernels_for": "Split each entry into kind, number and an optional letter: 'sm_XY' runs on major X, minor Y "
    "or higher; 'compute_XY' on any capability X.Y or higher; 'a' targets only on X.Y. sm_120 is 12.0.",
}
QUESTIONS = [
    Question(n, _TASKS[name], name, check, _HINTS[name], chapter="00")
    for n, (name, check) in enumerate(zip(_TASKS, _CHECKS, strict=True), start=1)
]
