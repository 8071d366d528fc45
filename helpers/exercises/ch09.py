"""Chapter 09 exercises: shared memory, start methods, and what a worker may safely send back."""

from __future__ import annotations

from typing import Any

import torch

from ..checking import Question, Wrong, expect_function, expect_type


def _check_make_shared(fn: Any) -> None:
    expect_function(fn, "make_shared", "a tensor")
    t = torch.arange(6.0).reshape(2, 3)
    got = fn(t)
    if isinstance(got, bool):
        raise Wrong("that returns whether the tensor is shared; return the tensor, moved into shared memory")
    expect_type(got, torch.Tensor, "a tensor")
    if not got.is_shared():
        raise Wrong("the tensor you return is not in shared memory (got.is_shared() is False)")
    if not torch.equal(got, torch.arange(6.0).reshape(2, 3)):
        raise Wrong("the values changed; sharing must keep the tensor's contents")


def _check_start_method(value: Any) -> None:
    expect_type(value, str, "the name of a start method, as a string")
    name = value.strip().lower()
    if name == "fork":
        raise Wrong(
            "a forked child inherits a CUDA context it cannot use: CUDA fails with "
            "'Cannot re-initialize CUDA in forked subprocess'"
        )
    if name not in ("spawn", "forkserver"):
        raise Wrong(f"{value!r} is not a start method; multiprocessing knows 'fork', 'spawn' and 'forkserver'")


def _check_plain(fn: Any) -> None:
    expect_function(fn, "to_plain_losses", "a tensor")
    losses = torch.tensor([0.9, 0.5, 0.25])
    got = fn(losses)
    got = expect_type(got, list, "a Python list")
    if any(isinstance(v, torch.Tensor) for v in got):
        raise Wrong("the list still holds tensors (list(t) gives 0-d tensors, which travel as shared memory)")
    if not all(isinstance(v, float) for v in got):
        raise Wrong("every element should be a Python float")
    if got != losses.tolist():
        raise Wrong(f"the values differ: expected {losses.tolist()}, got {got}")


QUESTIONS = [
    Question(
        number=1,
        task="Write `make_shared(t)` that returns the tensor `t` moved into shared memory (same values), "
        "ready to be handed to worker processes.",
        variable="make_shared",
        checker=_check_make_shared,
        hint_text="There is an in-place tensor method for it; `is_shared()` tells you whether it worked.",
        solution_code="def make_shared(t):\n    return t.share_memory_()",
        wrong_answers=(
            "def make_shared(t):\n    return t.clone()",
            "def make_shared(t):\n    return t.is_shared()",
            "def make_shared(t):\n    return t.share_memory_() * 1",
        ),
    ),
    Question(
        number=2,
        task="Set `start_method_after_cuda` to a start method that is safe for new processes once this "
        "process has used CUDA.",
        variable="start_method_after_cuda",
        checker=_check_start_method,
        hint_text="Only one of the three start methods copies the parent as it is, CUDA state included.",
        solution_code='start_method_after_cuda = "spawn"',
        wrong_answers=(
            'start_method_after_cuda = "fork"',
            'start_method_after_cuda = "thread"',
            "start_method_after_cuda = 2",
        ),
    ),
    Question(
        number=3,
        task="Write `to_plain_losses(t)` turning a 1-D tensor of losses into a list of Python floats, safe to "
        "send back from a worker process.",
        variable="to_plain_losses",
        checker=_check_plain,
        hint_text="A tensor method turns a tensor into (nested) Python numbers.",
        solution_code="def to_plain_losses(t):\n    return t.tolist()",
        wrong_answers=(
            "def to_plain_losses(t):\n    return list(t)",
            "def to_plain_losses(t):\n    return t.numpy()",
            "def to_plain_losses(t):\n    return [round(v, 1) for v in t.tolist()]",
        ),
    ),
]
