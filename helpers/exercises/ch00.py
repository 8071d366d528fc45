"""Chapter 00 exercises: pick the device to use, tell the three CUDA situations apart, and spot the P100 trap.

The first two checkers call the learner's function on this machine, then again while torch pretends
to be other machines (`helpers.standins.pretend_machine`): a CPU-only build, a CUDA build without a
driver, Kaggle's two T4s and a Mac. Only the answers torch gives are replaced, for one call.
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch

from ..checking import Question, Wrong, expect_function, expect_type
from ..environment import build_supports, split_arch
from ..standins import pretend_machine

#: Machines we do not have: (what to call it, `pretend_machine`'s accelerator, count and built).
_MACHINES = (
    ("a CPU-only build of torch", None, 0, None),
    ("a CUDA build without a driver (Kaggle with the accelerator off)", None, 0, "cuda"),
    ("Kaggle with GPU T4 ×2", "cuda", 2, None),
    ("a Mac with Apple's mps", "mps", 1, None),
)


def _as_device(value: Any, call: str) -> torch.device:
    if isinstance(value, str):
        try:
            return torch.device(value)
        except RuntimeError:
            raise Wrong(f"{call} returned {value!r}, which is not a device torch knows") from None
    return expect_type(value, torch.device, f"{call} to return a torch.device")


def _usable_or_cpu() -> torch.device:
    return torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")


def _check_pick_device(fn: Any) -> None:
    expect_function(fn, "pick_device", "no arguments")
    got = _as_device(fn(), "pick_device()")
    if got.type != _usable_or_cpu().type:
        raise Wrong(
            f"on this machine pick_device() returned {got}, but the device torch can use here is {_usable_or_cpu()}"
        )
    for name, accelerator, count, built in _MACHINES:
        with pretend_machine(accelerator, count, built=built):
            got = _as_device(fn(), "pick_device()")
            wanted = _usable_or_cpu()
        if got.type != wanted.type:
            raise Wrong(f"on {name}, pick_device() returned {got}; the usable device there is {wanted.type}")


_READY, _NO_GPU, _NO_CUDA = "GPU ready", "no usable GPU", "CPU-only build"


def _expected_diagnosis() -> str:
    built_with_cuda = torch.version.cuda is not None
    return _NO_CUDA if not built_with_cuda else _READY if torch.cuda.is_available() else _NO_GPU


def _check_cuda_diagnosis(fn: Any) -> None:
    expect_function(fn, "cuda_diagnosis", "no arguments")
    machines = [("this machine", None)] + [(m[0], m[1:]) for m in _MACHINES if m[1] != "mps"]
    for name, machine in machines:
        pretending = pretend_machine(machine[0], machine[1], built=machine[2]) if machine else contextlib.nullcontext()
        with pretending:
            got = fn()
            wanted = _expected_diagnosis()
        got = expect_type(got, str, "cuda_diagnosis() to return a string")
        if got.strip().lower() != wanted.lower():
            raise Wrong(f"on {name}, cuda_diagnosis() returned {got!r}; the answer there is {wanted!r}")


def _truth(got: Any) -> bool | int:
    """The learner's yes-or-no answer as a bool or an int; `Wrong` for anything else (a list, a string, None)."""
    if isinstance(got, bool | int):
        return got
    if isinstance(got, torch.Tensor) and got.numel() == 1:
        return bool(got)
    raise Wrong(f"has_kernels_for should return True or False, but returned {_short(got)}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "…"


#: The cases of question 3: (capability, arch_list, the answer, why). Most are GPUs and builds that
#: section 4 did not show, so the rule has to be applied, not looked up.
_KERNEL_CASES = (
    ((7, 5), ["sm_75", "sm_80", "sm_86", "sm_90", "compute_90"], True, "a T4 (7.5) with sm_75 in the list"),
    (
        (6, 0),
        ["sm_75", "sm_80", "sm_86", "sm_90", "compute_90"],
        False,
        "a P100 (6.0): every entry is built for a newer GPU, and neither machine code nor PTX runs on a GPU "
        "older than it was built for",
    ),
    ((8, 9), ["sm_80", "sm_90"], True, "an RTX 4090 (8.9): sm_80 machine code runs on any 8.x at or above 8.0"),
    ((7, 0), ["sm_75"], False, "a V100 (7.0): sm_75 code needs 7.5 or newer within major 7"),
    ((8, 0), ["sm_75"], False, "an A100 (8.0): machine code never crosses a major version"),
    (
        (10, 0),
        ["sm_75", "sm_80", "sm_86", "sm_90", "compute_90"],
        True,
        "a 10.0 GPU: compute_90 is PTX, compiled for any newer GPU",
    ),
    ((7, 5), ["compute_80"], False, "a T4 (7.5): PTX for 8.0 cannot run on an older GPU"),
    ((7, 5), [], False, "an empty list (a CPU-only build, or CUDA not usable)"),
    ((9, 0), ["sm_90a"], True, "an H100 (9.0): sm_90a is built for exactly 9.0"),
    ((12, 1), ["sm_120a"], False, "a 12.1 GPU: an 'a' target (sm_120a) runs on exactly 12.0, no other"),
    ((12, 1), ["sm_120"], True, "a 12.1 GPU: plain sm_120 machine code runs on any 12.x at or above 12.0"),
    ((10, 0), ["compute_90a"], False, "a 10.0 GPU: 'a' PTX (compute_90a) runs on exactly 9.0, no newer GPU"),
)


def _target(arch: str) -> tuple[str, int, int, bool]:
    """'sm_120a' as ('sm', 12, 0, True): kind, major, minor, and whether it is for that capability alone."""
    parsed = split_arch(arch)
    if parsed is None:
        raise ValueError(f"not an architecture of the checker's cases: {arch!r}")
    kind, number, letter = parsed
    return kind, number // 10, number % 10, letter == "a"


def _ask(fn: Any, capability: tuple[int, int], archs: list[str]) -> bool | int:
    """The learner's answer for one case, after checking that it left the list it was given alone."""
    given = list(archs)
    got = _truth(fn(capability, given))
    if given != list(archs):
        raise Wrong(f"has_kernels_for changed the arch_list it was given ({given}): read it, do not change it")
    return got


def _probe(fn: Any, capability: tuple[int, int], archs: list[str]) -> bool | None:
    """The learner's answer to a question the checker asks only to find the mistake; None if it fails."""
    try:
        return bool(fn(capability, list(archs)))
    except Exception:  # no evidence then: the case itself is reported as it is
        return None


def _on_major(arch: str, major: int) -> str:
    """`arch` rebuilt for another major version: ('sm_120a', 8) gives 'sm_80a'."""
    kind, _, minor, _ = _target(arch)
    return f"{kind}_{major}{minor}{arch[-1] if arch[-1] in 'af' else ''}"


def _mistake(fn: Any, capability: tuple[int, int], archs: list[str], expected: bool) -> str:
    """What the learner's function gets wrong in a failed case, where further questions to it show it; else ""."""
    major, minor = capability
    running = [a for a in archs if build_supports(capability, (a,))]
    if expected and len(archs) > 1:
        for arch in running:
            if _probe(fn, capability, [arch]) is True:
                return (
                    f" With only [{arch!r}] your function says True: one entry that runs is enough, so look at "
                    "every entry before you answer False."
                )
    for arch in running:
        kind, built_major, built_minor, exact = _target(arch)
        if kind == "sm" and not exact and built_minor < minor and _probe(fn, capability, [f"sm_{major}{minor}"]):
            return (
                f" Your function wants an exact match (it accepts sm_{major}{minor} on {major}.{minor}), but "
                f"machine code for {built_major}.{built_minor} runs on every later {built_major}.x too."
            )
        if kind == "compute" and not exact and built_major < major and _probe(fn, (built_major, built_minor), [arch]):
            return (
                f" Your function runs {arch} on {built_major}.{built_minor} but not on {major}.{minor}: PTX is "
                "compiled for the GPU when it is loaded, so it runs on newer major versions too."
            )
    long = [a for a in archs if _target(a)[1] >= 10]
    if long and major >= 10 and all(_target(a)[1] == major for a in long):
        other = 8
        analog = [_on_major(a, other) if a in long else a for a in archs]
        if _probe(fn, (other, minor), analog) == build_supports((other, minor), tuple(analog)):
            return (
                f" Your function answers the same question for {other}.{minor} with {analog} rightly, so it reads "
                f"{long[0]!r} wrongly: the last digit is the minor version and the digits before it the major, "
                f"so {long[0]} is for {_target(long[0])[1]}.{_target(long[0])[2]}."
            )
    return ""


def _check_has_kernels_for(fn: Any) -> None:
    expect_function(fn, "has_kernels_for", "(capability, arch_list)")
    for capability, archs, expected, why in _KERNEL_CASES:
        got = _ask(fn, capability, archs)
        if bool(got) != expected:
            mistake = _mistake(fn, capability, archs, expected)
            raise Wrong(
                f"has_kernels_for({capability}, {archs}) returned {got!r}, but should be {expected}: {why}"
                + (f".{mistake}" if mistake else "")
            )


QUESTIONS = [
    Question(
        number=1,
        task="Write `pick_device()` that returns the accelerator torch can use now, or the CPU when there is none.",
        variable="pick_device",
        checker=_check_pick_device,
        hint_text=(
            "torch.accelerator.current_accelerator() names what torch was built for; pass check_available=True "
            "to get None unless that device is usable right now."
        ),
        chapter="00",
    ),
    Question(
        number=2,
        task=(
            "Write `cuda_diagnosis()` that returns 'CPU-only build', 'no usable GPU' or 'GPU ready' "
            "for the torch it runs in."
        ),
        variable="cuda_diagnosis",
        checker=_check_cuda_diagnosis,
        hint_text=(
            "First ask whether this torch was built with CUDA at all (torch.version.cuda is None if not), "
            "then whether CUDA is usable now (torch.cuda.is_available())."
        ),
        chapter="00",
    ),
    Question(
        number=3,
        task=(
            "Write `has_kernels_for(capability, arch_list)`: whether a torch build whose "
            "`torch.cuda.get_arch_list()` is `arch_list` can run on a GPU of compute capability `capability`."
        ),
        variable="has_kernels_for",
        checker=_check_has_kernels_for,
        hint_text=(
            "Split each entry into its kind, its number and an optional letter: 'sm_XY' machine code runs on "
            "GPUs of major version X with minor version Y or higher; 'compute_XY' PTX runs on any GPU whose "
            "capability is X.Y or higher; a target ending in 'a' (sm_90a, compute_90a) runs only on exactly X.Y. "
            "The last digit is the minor version: sm_120 is 12.0."
        ),
        chapter="00",
    ),
]
