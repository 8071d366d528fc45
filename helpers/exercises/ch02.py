"""Chapter 02 exercises: creating a tensor on a given device, and adding tensors that live apart.

The checkers call the learner's functions with the `meta` device, which exists on every machine
(tensors there have a shape and a dtype but no values), so they test device handling for real
without a GPU.
"""

from __future__ import annotations

from typing import Any

import torch

from ..checking import Question, Wrong, expect_function

META = torch.device("meta")


def _check_ones_on(fn: Any) -> None:
    expect_function(fn, "ones_on")
    for device in (META, torch.device("cpu")):
        t = fn(device)
        if not isinstance(t, torch.Tensor):
            raise Wrong(f"ones_on({str(device)!r}) returned a {type(t).__name__}, not a tensor")
        if t.device.type != device.type:
            raise Wrong(
                f"ones_on(torch.device({str(device)!r})) made a tensor on {t.device}: pass device=... to the "
                "factory so the tensor is created where it is asked for"
            )
        if tuple(t.shape) != (2, 3):
            raise Wrong(f"the tensor has shape {tuple(t.shape)}, not (2, 3)")
        if t.dtype != torch.float32:
            raise Wrong(f"the tensor's dtype is {t.dtype}, not torch.float32 (integer data make an int64 tensor)")
        if device.type == "cpu" and not bool((t == 1).all()):
            raise Wrong("the tensor should hold ones")


def _check_add_on_first(fn: Any) -> None:
    expect_function(fn, "add_on_first")
    a, b = torch.arange(6.0).reshape(2, 3), torch.full((2, 3), 10.0)
    got = fn(a, b)
    if not isinstance(got, torch.Tensor):
        raise Wrong(f"add_on_first(a, b) returned a {type(got).__name__}, not a tensor")
    if not torch.equal(got, a + b):
        raise Wrong("with a and b on the same device the result should simply be a + b")
    a_meta = torch.ones(2, 3, device=META)
    b_before = b.clone()
    got = fn(a_meta, b)
    if not isinstance(got, torch.Tensor) or got.device != META:
        where = got.device if isinstance(got, torch.Tensor) else type(got).__name__
        raise Wrong(f"with a on meta and b on cpu the result should live on a's device (meta), not {where}")
    if tuple(got.shape) != (2, 3):
        raise Wrong(f"the sum has shape {tuple(got.shape)}, not (2, 3)")
    if b.device.type != "cpu" or not torch.equal(b, b_before):
        raise Wrong("leave the inputs as they are: move a copy of b, do not change b")


QUESTIONS = [
    Question(
        number=1,
        task="Write `ones_on(device)` returning a 2 × 3 float32 tensor of ones created directly on `device`.",
        variable="ones_on",
        checker=_check_ones_on,
        hint_text="Every factory function (torch.ones, torch.zeros, torch.rand, torch.tensor) takes device=...",
        solution_code="def ones_on(device):\n    return torch.ones(2, 3, device=device)",
        wrong_answers=(
            "def ones_on(device):\n    return torch.ones(2, 3)",
            "def ones_on(device):\n    return torch.tensor([[1, 1, 1], [1, 1, 1]], device=device)",
            "def ones_on(device):\n    return torch.Tensor(2, 3).fill_(1)",
            "ones_on = torch.ones(2, 3)",
        ),
    ),
    Question(
        number=2,
        task="Write `add_on_first(a, b)` returning a + b computed on the device of `a`, wherever `b` lives.",
        variable="add_on_first",
        checker=_check_add_on_first,
        hint_text="Tensors must share a device before they meet: bring b to a.device with .to(...).",
        solution_code="def add_on_first(a, b):\n    return a + b.to(a.device)",
        wrong_answers=(
            "def add_on_first(a, b):\n    return a + b",
            "def add_on_first(a, b):\n    return a.to(b.device) + b",
            "def add_on_first(a, b):\n    return a.cpu() + b.cpu()",
        ),
    ),
]
