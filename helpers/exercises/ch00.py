"""Chapter 00 exercises: predict built for vs usable and the counts on other machines, spot the P100 trap (a table)."""

import collections
import contextlib
import os
import pathlib
import tempfile
from typing import Any
from unittest import mock

import torch

from ..answers import Wrong, expect_function, expect_type
from ..environment import build_supports
from ..learner_code import describe_error
from ..standins import pretend_machine
from .cases import questions, table

#: A machine: the accelerator torch can use, how many, built for, T4s nvidia-smi lists, CUDA_VISIBLE_DEVICES (None).
Machine = collections.namedtuple("Machine", "name usable count built listed visible", defaults=(None,))
T4 = collections.namedtuple("Properties", "name major minor total_memory")("Tesla T4", 7, 5, 15 * 2**30)
MACHINES = (
    Machine("a CPU-only build of torch", None, 0, None, 0),
    Machine("Kaggle with the accelerator off (a CUDA build of torch without a driver)", None, 0, "cuda", 0),
    Machine("an mps build of torch on a Mac that cannot use mps", None, 0, "mps", 0),
    Machine("a CPU-only build of torch on a machine with an NVIDIA GPU (nvidia-smi lists it)", None, 0, None, 1, ""),
    Machine("a CUDA build of torch whose driver is too old for it (nvidia-smi lists a GPU)", None, 0, "cuda", 1, "0"),
    Machine("a CUDA build of torch with its GPU hidden (CUDA_VISIBLE_DEVICES is empty)", None, 0, "cuda", 1, ""),
    Machine("a machine with one CUDA GPU", "cuda", 1, "cuda", 1),
    Machine("one GPU, and a job script's CUDA_VISIBLE_DEVICES=0,1 (torch sees one)", "cuda", 1, "cuda", 1, "0,1"),
    Machine("a cluster job given GPU 3 of 8 (CUDA_VISIBLE_DEVICES=3: torch's cuda:0)", "cuda", 1, "cuda", 8, "3"),
    Machine("Kaggle's two T4 GPUs", "cuda", 2, "cuda", 2),
    Machine("a machine with sixteen CUDA GPUs", "cuda", 16, "cuda", 16),  # cuda:10 sorts before cuda:2 as text
    Machine("a Mac with Apple's mps", "mps", 1, "mps", 0),
)
devices = lambda m: [torch.device(m.usable, i) for i in range(m.count)] or [torch.device("cpu")]  # what torch can use


def shown(value: Any) -> str:  # a device as torch names it (cuda:0), devices as [cuda:0, cpu] or (cuda:0, cpu)
    if not isinstance(value, list | tuple):
        return repr(value) if isinstance(value, str) else str(value)  # a string quoted
    return ("[{}]" if isinstance(value, list) else "({})").format(", ".join(map(str, value)))


def ask(fn: Any, m: Machine, call: str, *args: Any, may_raise: bool = False) -> Any:
    """What `fn(*args)` returns on `m` (or raises, where it `may_raise`: then an error it caught is not judged either),
    torch's device queries, nvidia-smi, KAGGLE_KERNEL_RUN_TYPE and CUDA_VISIBLE_DEVICES answering as there (the current
    device 1 at first where there are two or more; a CUDA build lists its kernels where a GPU is usable or listed)."""
    start = int(m.count > 1)
    kernels = _LISTS[0].split() * (m.built == "cuda" and (m.count or m.listed) > 0)

    def properties(device: Any = None) -> Any:  # torch.cuda.get_device_properties (and name, capability): a T4's
        if 0 <= torch.cuda._get_device_index(device, optional=True) < m.count:
            return T4
        raise AssertionError("Invalid device id")

    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as folder:
        smi = pathlib.Path(folder, "nvidia-smi")
        smi.write_text("#!/bin/sh\n" + "".join(f"echo 'GPU {i}: Tesla T4 (UUID: GPU-{i})'\n" for i in range(m.listed)))
        smi.chmod(0o755)
        path = [d for d in os.get_exec_path() if not os.path.exists(os.path.join(d, "nvidia-smi"))]
        stack.enter_context(mock.patch.dict(os.environ, PATH=os.pathsep.join([folder] * (m.listed > 0) + path)))
        for key in ("KAGGLE_KERNEL_RUN_TYPE", "CUDA_VISIBLE_DEVICES"):  # as on that machine; restored after
            os.environ.pop(key, None)
        os.environ.update({"KAGGLE_KERNEL_RUN_TYPE": "Interactive"} if "Kaggle" in m.name else {})
        os.environ.update({} if m.visible is None else {"CUDA_VISIBLE_DEVICES": m.visible})  # "": torch counts none
        now = stack.enter_context(pretend_machine(m.usable, m.count, built=m.built, listed=m.listed, current=start))
        stack.enter_context(mock.patch("torch.cuda.get_arch_list", lambda: list(kernels)))
        ran = AssertionError("a stand-in GPU runs no CUDA code") if m.usable == "cuda" else torch.cuda._lazy_init
        started = stack.enter_context(mock.patch.object(torch.cuda, "_lazy_init", mock.Mock(side_effect=ran)))
        if m.usable == "cuda":  # elsewhere, CUDA's first use (so a query of a GPU's properties) raises as there
            stack.enter_context(mock.patch.object(torch.cuda, "get_device_properties", properties))
        try:
            got = fn(*args)
        except Exception as error:
            got = error
    if started.called and m.usable == "cuda":
        raise Wrong(f"on {m.name}, {call} ran CUDA code, which a stand-in cannot: decide by torch's device queries")
    if started.called and not isinstance(got, Exception) and not may_raise:  # it caught what CUDA's first use raised
        said = f"on {m.name}, {call} started CUDA, which fails there, and went on: decide by torch's device queries"
        raise Wrong(f"{said} (torch.cuda.is_available(), torch.accelerator...), not by catching CUDA's errors")
    if now[0] != start:
        raise Wrong(f"on {m.name}, {call} left the current device at {now[0]} (it was {start}): put it back")
    if isinstance(got, Exception) and not may_raise:
        raise Wrong(f"on {m.name}, {call} raised {describe_error(got)}")
    return got


def on_machines(name: str, takes: str, kind: type, what: str, judge: Any, calls: Any = None) -> Any:
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
                    same = len({repr(ask(fn, other, call, *args, may_raise=True)) for other in MACHINES}) == 1
                    raise Wrong(f"on {m.name}, {call} returned {shown(got)}{' (as on every machine)' * same}; {said}")

    return check


def _predicted(name: str, calls: tuple, truths: dict, where: str) -> Any:
    """Questions 1, 2: `name` maps machine letters to what `calls` give there, as predicted; `truths`, as they are."""

    def check(given: Any) -> None:
        each = f"({', '.join(calls)})"
        if (keys := set(expect_type(given, dict, f"{name} to be a dict"))) != set(truths):
            raise Wrong(f"{name} should map {', '.join(map(repr, truths))} to {each}, not {sorted(keys, key=repr)}")
        for letter, truth in truths.items():
            said = expect_type(given[letter], tuple, f"{name}[{letter!r}] to be a tuple {each}")
            if (n := len(said)) != len(calls) or any(value is ... for value in said):
                left = f", not {n}" if n != len(calls) else ", with no `...` left"
                raise Wrong(f"{name}[{letter!r}] should hold {len(calls)} predictions, {each}{left}")
            for call, guess, right in zip(calls, said, truth, strict=True):
                guess = str(guess) if isinstance(guess, torch.device | str) else guess  # a device as torch names it
                if (type(guess), guess) != (type(right), right):  # True is no 1, nor '4' a 4
                    raise Wrong(f"on machine {letter}, {call} gives {right!r}, not {guess!r} (section {where})")

    return check


#: Question 3's cases: every GPU (older than the lists, the same, later, 12.1) with every list and each single entry.
_GPUS = ((7, 5), (6, 0), (8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (12, 1))
_LISTS = ("sm_75 sm_80 sm_86 sm_90 compute_90", "sm_90 sm_80", "sm_90 compute_90 sm_80", "", "sm_90 sm_120a")
_ENTRIES = "sm_75 sm_80 sm_86 sm_89 sm_100 sm_120 compute_80 compute_86 compute_90 sm_90a compute_90a"
_KERNELS = [(gpu, arch) for arch in [*map(str.split, _LISTS), *([a] for a in _ENTRIES.split())] for gpu in _GPUS]
_bool = lambda value, call: expect_type(value, bool, f"{call} to return True or False")
_BUILT_USABLE = ("current_accelerator()", "current_accelerator(check_available=True)")
_ACCELERATORS = {"A": ("cuda", None), "B": ("mps", "mps"), "C": (None, None), "D": ("cuda", "cuda")}
_COUNTS = {"A": (False, 4, 4), "B": (True, 1, 2), "C": (False, 0, 2), "D": (True, 1, 1)}  # D: a P100, no kernels

_CHECKS = (
    _predicted("accelerators", _BUILT_USABLE, _ACCELERATORS, "2"),
    _predicted("counts", ("torch.cuda.is_available()", "torch.cuda.device_count()", "nvidia-smi -L"), _COUNTS, "3"),
    table("has_kernels_for", "(capability, arch_list)", _KERNELS, build_supports, answer=_bool),
)
_TEXTS = {
    "accelerators": "Predict current_accelerator() with and without check_available=True on machines A to D.\n"
    "Without it torch names what it was built for; with it, what it can use now (None if nothing).",
    "counts": "Predict is_available(), device_count() and the GPUs nvidia-smi -L lists on machines A to D.\n"
    "is_available() asks CUDA; device_count() counts the GPUs CUDA_VISIBLE_DEVICES leaves; nvidia-smi lists all.",
    "has_kernels_for": "Write `has_kernels_for(capability, arch_list)`: can a build with arch_list run on that GPU?\n"
    "Split each entry into kind, number and an optional letter: 'sm_XY' runs on major X, minor Y or higher; "
    "'compute_XY' on any capability X.Y or higher; 'a' targets only on X.Y. sm_120 is 12.0.",
}
QUESTIONS = questions("00", _TEXTS, _CHECKS)
