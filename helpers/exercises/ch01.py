"""Chapter 01 exercises: `try_gpu` and `try_all_gpus` (on chapter 00's machines), usable CPUs, the try_gpu(1) trap."""

import os
from typing import Any
from unittest import mock

import torch

from ..answers import Wrong, expect_function, expect_type
from ..devices import a_device
from .cases import questions
from .ch00 import Machine, devices, on_machines, shown


def _try_gpu(m: Machine, got: torch.device, i: int = 0) -> str:  # a negative i names none (it may raise, too)
    want = devices(m)[i] if 0 <= i < m.count else torch.device("cpu")
    return "" if got == want else f"expected {want}" + " (or an error: no device has a negative index)" * (i < 0)


def _try_all_gpus(m: Machine, got: list) -> str:
    found = [expect_type(d, torch.device, "try_all_gpus() to list torch.device objects") for d in got]
    return "" if found == devices(m) else f"expected {shown(devices(m))}"


def _count_usable_cpus(fn: Any) -> None:  # allowed one CPU (the last), two with a gap, then all, as a scheduler may
    expect_function(fn, "count_usable_cpus", "no arguments")
    whole, machine = "count_usable_cpus() to return a whole number (an int)", os.cpu_count()
    if not hasattr(os, "sched_getaffinity"):  # macOS, Windows: no per-process CPU set to vary
        if (got := expect_type(fn(), int, whole)) != machine:
            raise Wrong(f"count_usable_cpus() returned {got!r}; this machine has {machine} CPUs")
        return
    affinity, torch_threads = os.sched_getaffinity, torch.get_num_threads  # the real ones, not the spies below
    allowed, threads, tries = sorted(affinity(0)), torch_threads(), []
    two = [allowed[-3], allowed[-1]] if len(allowed) > 2 else allowed
    spy = lambda module, name: mock.patch.object(module, name, wraps=getattr(module, name))
    with spy(os, "cpu_count") as count, spy(torch, "get_num_threads") as threaded, spy(os, "sched_getaffinity") as own:
        for cpus in map(list, dict.fromkeys(map(tuple, ([allowed[-1]], two, allowed)))):
            n = len(cpus) - 1 or 2  # torch's threads, and OMP_NUM_THREADS: not the CPUs allowed (fewer where it can)
            omp = max(len(cpus) - 2, 1) if len(cpus) > 1 else n + 3
            os.sched_setaffinity(0, cpus)
            torch.set_num_threads(n)
            try:
                with mock.patch.dict(os.environ, OMP_NUM_THREADS=str(omp)):
                    tries.append((cpus, n, omp, expect_type(fn(), int, whole)))
                now = {"the CPUs it may run on": (sorted(affinity(0)), cpus), "torch's threads": (torch_threads(), n)}
                if said := [f"{k} at {a}, where the check set {b}" for k, (a, b) in now.items() if a != b]:
                    raise Wrong(f"count_usable_cpus() left {' and '.join(said)}: leave them be")  # set by the answer
            finally:
                os.sched_setaffinity(0, allowed)
                torch.set_num_threads(threads)
    if not (wrong := [(cpus, n, omp, got) for cpus, n, omp, got in tries if got != len(cpus)]):
        return
    (cpus, n, omp, got), why = wrong[0], ""
    if count.called and all(g == machine for *_, g in wrong):
        why = f" ({got} is the machine's count, os.cpu_count())"
    elif own.call_count < len(tries) and len({g for *_, g in tries}) == 1 < len(tries):  # not asked each time
        why = f" (it returned {got} whatever CPUs were allowed; os.sched_getaffinity(0) gives those allowed as it runs)"
    elif all(g == n for _, n, _, g in wrong) and threaded.called or all(g == o for *_, o, g in tries):  # every try
        source = "torch.get_num_threads()" if threaded.called and got == n else "OMP_NUM_THREADS"
        why = f" ({got} is {source}, which the check set to {got} for this try)"
    said = f"with this process allowed {len(cpus)} CPU(s) {cpus}, count_usable_cpus() returned {got!r}"
    raise Wrong(f"{said}; expected {len(cpus)}{why}")


def _stage_devices(m: Machine, pair: tuple) -> str:  # usable devices, a GPU each where there are two or more
    if len(pair) != 2:
        raise Wrong(f"on {m.name}, stage_devices() returned {len(pair)} values: return two, (first, second)")
    try:  # the question asks for no type: a torch.device or a spelling torch knows
        first, second = stages = [a_device(d) for d in pair]
    except (TypeError, ValueError) as error:
        raise Wrong(f"on {m.name}, stage_devices() gave a stage that is not a device: {error}") from None
    if all(d in devices(m) for d in stages) and (first != second or m.count < 2):
        return ""
    if any(d.type == m.usable and d.index is None for d in stages):
        return f"name the index ({m.usable}:0); a device without one means the current device"
    if m.usable and first in devices(m) and second.type == "cpu":
        return "the second stage would run on the CPU next to a GPU, copying its input every step"
    if m.count >= 2 and first == second:
        return f"where there are {m.count} GPUs, give each stage one of its own"
    return f"the devices torch can use there: {shown(devices(m))}"


_INDICES = lambda m: [(), *((i,) for i in range(m.count + 2)), (-1,)]  # past the last, and a negative one
_CHECKS = (
    on_machines("try_gpu", "(i=0)", torch.device, "a torch.device", _try_gpu, _INDICES),
    on_machines("try_all_gpus", "no arguments", list, "a list of torch.device", _try_all_gpus),
    _count_usable_cpus,
    on_machines("stage_devices", "no arguments", tuple, "(first, second)", _stage_devices),
)
_TEXTS = {  # each question's variable: its task (the notebook states it in full), then (after a newline) its hint
    "try_gpu": "Write `try_gpu(i=0)`: device i of the accelerator this process can use right now, else the CPU.\n"
    "torch.accelerator.current_accelerator(check_available=True) is None unless one is usable now; "
    "torch.accelerator.device_count() says how many; torch.device(type, i) names one.",
    "try_all_gpus": "Write `try_all_gpus()`: a list of every usable accelerator device, or `[cpu]` when there is none."
    "\nOne torch.device(accelerator.type, i) for each i in range(torch.accelerator.device_count()).",
    "count_usable_cpus": "Write `count_usable_cpus()` returning how many CPUs this process may run on.\n"
    "os.cpu_count() counts the machine's CPUs; os.sched_getaffinity(0) is the set it may use.",
    "stage_devices": "Debug `stage_devices()`: a GPU per stage where there are two or more, else one GPU or the CPU.\n"
    "What is try_gpu(1) on one GPU? Count first: try_all_gpus() lists every device, [cpu] at least.",
}
QUESTIONS = questions("01", _TEXTS, _CHECKS, context=lambda: {"os": os})
