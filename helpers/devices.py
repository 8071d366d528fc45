"""Choosing devices without crashing on machines that lack them.

`try_gpu` and `try_all_gpus` come from the d2l book; these ask `torch.accelerator` rather than CUDA
alone, so the same code picks a Kaggle GPU, Apple's `mps` or the CPU. A chapter cell asks for GPUs with `have_gpus`."""

from __future__ import annotations

import torch

#: Printed by `have_gpus` when a cell takes its no-GPU path; counted by the runner and tests.
NO_GPU_MARKER = "[no-GPU path]"

#: How a learner gets GPUs; every "needs a GPU" message ends with it.
HOW_TO_GET_A_GPU = (
    "On Kaggle: Settings → Accelerator → GPU T4 ×2, then run the notebook again. "
    "Locally: an NVIDIA GPU with a CUDA build of PyTorch (see pytorch.org/get-started)."
)

#: The device spellings the helpers accept, named in every error about a device.
DEVICE_FORMS = "'cpu', 'cuda' or 'cuda:0' (a GPU by number), 'mps' (Apple), or a torch.device"


class DeviceError(ValueError, RuntimeError):
    """A misspelt or unusable device argument; a RuntimeError too, as torch raises for a spelling it does not know."""


def a_device(value: object) -> torch.device:
    """`value` as a `torch.device` if torch knows its spelling (only that: the device may be absent here)."""
    if isinstance(value, torch.device):
        return value
    if not isinstance(value, str):
        raise TypeError(f"device must be a device such as {DEVICE_FORMS}, not {value!r} ({type(value).__name__})")
    try:
        return torch.device(value)
    except (RuntimeError, ValueError):
        raise DeviceError(f"device={value!r} is not a device torch knows; pass {DEVICE_FORMS}") from None


def usable_device(value: object) -> torch.device:
    """`value` as a `torch.device` if this process can use it; else raise saying what to pass. A misspelling, a
    type this machine cannot use ('cuda' without a driver) or an index past the devices present is refused here,
    by torch's own queries (`is_available`, the counts), not deep inside torch."""
    device = a_device(value)
    if device.type in ("cpu", "meta"):
        return device
    if device.type == "cuda":
        usable, count = torch.cuda.is_available(), cuda_gpu_count()
    else:
        usable, count = accelerator_type() == device.type, accelerator_count()
    if not usable:
        raise DeviceError(
            f"device {str(device)!r} is not usable here: this machine has no usable {device.type} device; "
            "pass 'cpu' or helpers.try_gpu() (the first GPU if there is one, else the CPU)"
        )
    if device.index is not None and device.index >= count:
        raise DeviceError(
            f"device {str(device)!r} does not exist: this machine has {count} {device.type} device(s), "
            f"numbered from 0; pass '{device.type}:0'" + (f" to '{device.type}:{count - 1}'" if count > 1 else "")
        )
    return device


def a_function(value: object, name: str) -> None:
    """Refuse `value` unless it can be called: a learner's function handed to a measuring harness."""
    if not callable(value):
        raise TypeError(f"{name} must be a function (something callable), not {value!r} ({type(value).__name__})")


def check_device_index(i: object) -> int:
    """Return `i` if it is a usable device index, else raise an error that says what to pass."""
    if isinstance(i, bool) or not isinstance(i, int):
        raise TypeError(f"a device index must be a whole number such as 0 or 1, not {i!r} ({type(i).__name__})")
    if i < 0:
        raise ValueError(f"a device index counts from 0, so it cannot be negative (got {i})")
    return i


def accelerator_type() -> str | None:
    """The type of this machine's accelerator ("cuda", "mps", "xpu", ...), or None when there is none."""
    current = torch.accelerator.current_accelerator(check_available=True)
    return None if current is None else current.type


def accelerator_count() -> int:
    """How many devices of the current accelerator type this process can see (0 without one)."""
    return torch.accelerator.device_count() if accelerator_type() else 0


def try_gpu(i: int = 0) -> torch.device:
    """Accelerator device `i` if it exists, otherwise the CPU: "the second GPU, if there is one"."""
    i = check_device_index(i)
    return torch.device(accelerator_type(), i) if accelerator_count() > i else torch.device("cpu")


def try_all_gpus() -> list[torch.device]:
    """Return every accelerator device, or `[cpu]` when there is none, so loops over devices always run."""
    kind = accelerator_type()
    return [torch.device(kind, i) for i in range(accelerator_count())] or [torch.device("cpu")]


def cuda_gpu_count() -> int:
    """Number of CUDA GPUs visible to this process (0 on CPU-only builds, without raising)."""
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def have_gpus(n: int = 1, task: str = "this cell") -> bool:
    """True when at least `n` CUDA GPUs are visible; else print what `task` lacks and return False (for a stand-in)."""
    n = check_device_index(n)
    if not isinstance(task, str):
        raise TypeError(f"task must be a string that says what the cell does, not {task!r} ({type(task).__name__})")
    found = cuda_gpu_count()
    if found >= n:
        return True
    plural = "GPU" if n == 1 else "GPUs"
    print(f"{NO_GPU_MARKER} To {task} you need {n} CUDA {plural}; this machine has {found}.\n  {HOW_TO_GET_A_GPU}")
    return False


def synchronize(device: torch.device | str) -> None:
    """Wait until every queued operation on `device` has finished (a no-op for the CPU). Every timing calls it
    before reading a clock, inside timed code, so it checks nothing: its caller has."""
    device = torch.device(device)
    if device.type in ("cpu", "meta"):
        return
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    else:
        torch.accelerator.synchronize(device)


def describe_device_spelling(spelling: str) -> str:
    """Explain what a device string means to torch, or why torch rejects it (for the chapter 01 widget)."""
    if not isinstance(spelling, str):
        return f"A device spelling is a string such as 'cuda:1', not a {type(spelling).__name__}."
    try:
        device = torch.device(spelling)  # as torch reads it: " cuda" is refused too
    except RuntimeError as exc:
        reason = str(exc).split(":")[0] if "Expected one of" in str(exc) else str(exc)
        return f"torch rejects {spelling!r}: {reason}."
    if device.type in ("cpu", "meta"):  # one device of each: torch.zeros(1, device="cpu:1").device is cpu
        return f"type={device.type!r}, index={device.index} → the one {device.type!r} device (torch drops the index)"
    if device.index is None:
        return f"type={device.type!r}, index=None → means the current device of that type"
    return f"type={device.type!r}, index={device.index} → device number {device.index} of type {device.type!r}"
