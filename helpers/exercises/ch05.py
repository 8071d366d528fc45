"""Chapter 05 exercises: a tensor's size before allocating it, and what the allocator's counters say."""

from __future__ import annotations

import math
from typing import Any

import torch

from ..checking import Question, Wrong, expect_function, expect_number, expect_type
from ..memory import CachingAllocatorModel, tensor_nbytes

_CASES = (
    ((64, 3, 224, 224), torch.float32),
    ((64, 3, 224, 224), torch.float16),
    ((1000,), torch.int8),
    ((4096, 4096), torch.float64),
    ((2, 0, 5), torch.float32),
    ((), torch.bfloat16),
)


def _check_tensor_bytes(fn: Any) -> None:
    expect_function(fn, "tensor_bytes", "(shape, dtype)")
    for shape, dtype in _CASES:
        expected = tensor_nbytes(shape, dtype)
        got = expect_number(fn(shape, dtype), f"a number of bytes from tensor_bytes{(shape, dtype)}")
        if got != expected:
            numel = math.prod(shape)
            if got == numel and dtype.itemsize != 1:
                raise Wrong(
                    f"tensor_bytes({shape}, {dtype}) returned {got}, the number of elements; "
                    f"multiply by the bytes per element ({dtype.itemsize})"
                )
            if got == numel * dtype.itemsize * 8:
                raise Wrong(f"tensor_bytes({shape}, {dtype}) returned {got}, which counts bits, not bytes")
            raise Wrong(f"tensor_bytes({shape}, {dtype}) returned {got!r}; a dense tensor needs {expected} bytes")


def _model_answer() -> tuple[int, int]:
    model = CachingAllocatorModel()
    model.malloc(1000)
    return model.allocated, model.reserved


def _check_counters_after(value: Any) -> None:
    value = expect_type(value, tuple, "a tuple (memory_allocated, memory_reserved)")
    if len(value) != 2:
        raise Wrong("give two whole numbers of bytes: (memory_allocated, memory_reserved)")
    allocated, reserved = (expect_type(v, int, "two whole numbers of bytes") for v in value)
    want_allocated, want_reserved = _model_answer()
    if allocated == 1000:
        raise Wrong("the allocator never hands out exactly 1000 bytes: it rounds up to a multiple of 512")
    if allocated != want_allocated:
        raise Wrong(f"allocated {allocated} is off: round 1000 bytes up to the next multiple of 512")
    if reserved == allocated:
        raise Wrong("reserved counts the whole segment the allocator took from the driver, not just the block")
    if reserved != want_reserved:
        raise Wrong(f"reserved {reserved} is off: small requests (≤ 1 MiB) are cut from a segment of 2 MiB")


QUESTIONS = [
    Question(
        number=1,
        task="Write `tensor_bytes(shape, dtype)` returning the bytes a dense tensor of that shape and dtype needs.",
        variable="tensor_bytes",
        checker=_check_tensor_bytes,
        hint_text="Multiply the dimensions together (math.prod) for the number of elements, then multiply "
        "by dtype.itemsize, the bytes of one element.",
        solution_code="def tensor_bytes(shape, dtype):\n    return math.prod(shape) * dtype.itemsize",
        wrong_answers=(
            "def tensor_bytes(shape, dtype):\n    return math.prod(shape)",
            "def tensor_bytes(shape, dtype):\n    return math.prod(shape) * 4",
            "def tensor_bytes(shape, dtype):\n    return sum(shape) * dtype.itemsize",
            "def tensor_bytes(shape, dtype):\n    return math.prod(shape) * torch.finfo(dtype).bits",
            "tensor_bytes = 38535168",
        ),
        context=lambda: {"math": math, "torch": torch},
    ),
    Question(
        number=2,
        task="Set `counters_after` to (memory_allocated(), memory_reserved()) after a fresh process "
        "creates a 1000-byte uint8 tensor on a GPU.",
        variable="counters_after",
        checker=_check_counters_after,
        hint_text="Blocks are multiples of 512 bytes; a request of at most 1 MiB gets a block cut from a new "
        "2 MiB segment when nothing is cached. Try it on CachingAllocatorModel().",
        solution_code="counters_after = (1024, 2 * 1024 * 1024)",
        wrong_answers=(
            "counters_after = (1000, 1000)",
            "counters_after = (1024, 1024)",
            "counters_after = (1000, 2 * 1024 * 1024)",
            "counters_after = (1024, 20 * 1024 * 1024)",
        ),
    ),
]
