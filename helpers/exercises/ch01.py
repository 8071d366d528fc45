"""Chapter 01 exercises: spelling a device, hiding GPUs, and counting usable CPUs."""

from __future__ import annotations

import os
from typing import Any

import torch

from ..checking import Question, Wrong, expect_function, expect_type


def _check_second_gpu(d: Any) -> None:
    if isinstance(d, str):
        raise Wrong(f"{d!r} is a string; wrap it in torch.device(...) to get a device object")
    expect_type(d, torch.device, "a torch.device")
    if d.type != "cuda":
        raise Wrong(f"{d} is a {d.type!r} device; the GPUs here are 'cuda' devices")
    if d.index is None:
        raise Wrong(f"{d} has no index, so it means whichever GPU is current; name the second GPU explicitly")
    if d.index != 1:
        raise Wrong(f"{d} is GPU number {d.index}; indices count from 0, so the second GPU is 1")


def _check_visible(value: Any) -> None:
    if isinstance(value, int) and not isinstance(value, bool):
        raise Wrong("environment variables hold text: write the index as a string, e.g. '3'")
    expect_type(value, str, "a string (environment variables are text)")
    if value.strip().startswith("cuda"):
        raise Wrong("CUDA_VISIBLE_DEVICES takes bare indices such as '0,1', not device names like 'cuda:1'")
    if value.strip() != "1":
        raise Wrong(f"CUDA_VISIBLE_DEVICES={value!r} does not show exactly the second GPU (the driver numbers it 1)")


def _check_count_usable_cpus(fn: Any) -> None:
    expect_function(fn, "count_usable_cpus", "no arguments")
    if not hasattr(os, "sched_getaffinity"):  # macOS, Windows: only the plain answer can be checked
        got = fn()
        if got != (os.cpu_count() or 1):
            raise Wrong(f"count_usable_cpus() returned {got!r}, not this machine's CPU count")
        return
    allowed = os.sched_getaffinity(0)
    if len(allowed) < 2:
        got = fn()
        if got != len(allowed):
            raise Wrong(f"count_usable_cpus() returned {got!r}, but this process may use {len(allowed)} CPU")
        return
    one = {min(allowed)}
    os.sched_setaffinity(0, one)  # pretend a job scheduler gave us a single CPU
    try:
        got = fn()
    finally:
        os.sched_setaffinity(0, allowed)
    if got != 1:
        raise Wrong(
            f"with this process limited to one CPU, count_usable_cpus() returned {got!r}; "
            "count the CPUs this process may use, not the machine's"
        )
    if fn() != len(allowed):
        raise Wrong("count_usable_cpus() should follow the process's CPU set, which is back to normal now")


QUESTIONS = [
    Question(
        number=1,
        task="Set `second_gpu` to the torch.device of the second CUDA GPU (it works even without GPUs).",
        variable="second_gpu",
        checker=_check_second_gpu,
        hint_text="torch.device takes 'type:index', or the type and index as two arguments. Indices start at 0.",
        solution_code='second_gpu = torch.device("cuda:1")',
        wrong_answers=(
            'second_gpu = "cuda:1"',
            'second_gpu = torch.device("cuda:2")',
            'second_gpu = torch.device("cuda")',
        ),
    ),
    Question(
        number=2,
        task="Set `visible_for_second_gpu` to the CUDA_VISIBLE_DEVICES value that shows a process only "
        "the machine's second GPU.",
        variable="visible_for_second_gpu",
        checker=_check_visible,
        hint_text="The variable lists the driver's GPU indices, separated by commas, as text.",
        solution_code='visible_for_second_gpu = "1"',
        wrong_answers=(
            "visible_for_second_gpu = 1",
            'visible_for_second_gpu = "cuda:1"',
            'visible_for_second_gpu = "0"',
        ),
    ),
    Question(
        number=3,
        task="Write `count_usable_cpus()` returning how many CPUs this process may run on.",
        variable="count_usable_cpus",
        checker=_check_count_usable_cpus,
        hint_text="os.cpu_count() counts the machine's CPUs; os.sched_getaffinity(0) is the set this process may use.",
        solution_code=(
            "def count_usable_cpus():\n"
            '    if hasattr(os, "sched_getaffinity"):  # Linux\n'
            "        return len(os.sched_getaffinity(0))\n"
            "    return os.cpu_count()  # macOS and Windows have no per-process CPU set here"
        ),
        wrong_answers=(
            "def count_usable_cpus():\n    return os.cpu_count()",
            "def count_usable_cpus():\n    return torch.get_num_threads()",
            "count_usable_cpus = len(os.sched_getaffinity(0))",
        ),
        context=lambda: {"os": os},
    ),
]
