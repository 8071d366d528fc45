"""Chapter 05 exercises: a tensor's size, the largest batch that fits, and a training step's memory."""

from __future__ import annotations

import math
from typing import Any

import torch

from ..checking import Question, Wrong, expect_function, expect_number
from ..memory import tensor_nbytes

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


#: (budget, fixed, per_sample) → the largest batch; the last ones leave no room or just one sample.
_BATCH_CASES = (
    (16 * 2**30, 2 * 2**30, 3 * 2**20),
    (1000, 100, 300),
    (1000, 100, 450),
    (1000, 100, 900),
    (1000, 100, 901),
    (1000, 1200, 10),
    (2**20, 0, 2**10),
)


def _largest_batch(budget: int, fixed: int, per_sample: int) -> int:
    return (budget - fixed) // per_sample if budget >= fixed else 0


def _check_largest_batch(fn: Any) -> None:
    expect_function(fn, "largest_batch", "(budget, fixed, per_sample)")
    for budget, fixed, per_sample in _BATCH_CASES:
        call = f"largest_batch({budget}, {fixed}, {per_sample})"
        expected = _largest_batch(budget, fixed, per_sample)
        got = expect_number(fn(budget, fixed, per_sample), f"a whole number of samples from {call}")
        if got == expected:
            continue
        if isinstance(got, float) and not got.is_integer():
            raise Wrong(f"{call} returned {got}: a batch holds a whole number of samples")
        if got == budget // per_sample:
            raise Wrong(f"{call} returned {got}: the fixed bytes ({fixed}) come out of the budget first")
        if got < 0:
            raise Wrong(f"{call} returned {got}: when not even one sample fits, the answer is 0")
        if got == expected + 1:
            raise Wrong(f"{call} returned {got}, but {fixed} + {got} × {per_sample} is more than {budget}")
        raise Wrong(f"{call} returned {got!r}; the largest batch that fits is {expected}")


def _meta_models() -> list[tuple[str, torch.nn.Module, int]]:
    """Models on the meta device (no memory used), each with the bytes the solution gives."""
    with torch.device("meta"):
        mlp = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
        frozen = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.Linear(32, 10))
        half = torch.nn.Linear(16, 8, dtype=torch.float16)
    frozen[0].requires_grad_(False)
    models = [("a float32 MLP", mlp), ("an MLP whose first layer is frozen", frozen), ("a float16 Linear", half)]
    return [(what, m, _adam_bytes(m)) for what, m in models]


def _adam_bytes(model: torch.nn.Module) -> int:
    total = 0
    for p in model.parameters():
        copies = 4 if p.requires_grad else 1  # the weights, and for a trained one its gradient and Adam's two moments
        total += p.numel() * p.element_size() * copies
    return total


def _check_adam_training_bytes(fn: Any) -> None:
    expect_function(fn, "adam_training_bytes", "(model)")
    for what, model, expected in _meta_models():
        got = expect_number(fn(model), f"a number of bytes from adam_training_bytes({what})")
        if got == expected:
            continue
        params = [(p.numel(), p.element_size(), p.requires_grad) for p in model.parameters()]
        all_bytes = sum(n * size for n, size, _ in params)
        if got == 4 * all_bytes:
            raise Wrong(f"for {what} you count gradients and moments for frozen parameters too; they have none")
        if got == sum(n * (4 if grad else 1) for n, _, grad in params):
            raise Wrong(f"for {what} you count elements, not bytes: multiply by element_size()")
        if got == sum(n * size * (3 if grad else 1) for n, size, grad in params):
            raise Wrong(f"for {what} one copy is missing: Adam keeps two moments besides the gradient")
        if got == sum(n * 4 * (4 if grad else 1) for n, _, grad in params):
            raise Wrong(f"for {what} you assume 4 bytes per element; use each parameter's element_size()")
        raise Wrong(f"adam_training_bytes({what}) returned {got!r}; it should be {expected}")


QUESTIONS = [
    Question(
        number=1,
        task="Write `tensor_bytes(shape, dtype)` returning the bytes a dense tensor of that shape and dtype needs.",
        variable="tensor_bytes",
        checker=_check_tensor_bytes,
        hint_text="Multiply the dimensions together (math.prod) for the number of elements, then multiply "
        "by dtype.itemsize, the bytes of one element. A tensor on the meta device gives the same via .nbytes.",
        chapter="05",
        context=lambda: {"math": math, "torch": torch},
    ),
    Question(
        number=2,
        task="Write `largest_batch(budget, fixed, per_sample)` returning the largest batch size b with "
        "fixed + b * per_sample <= budget (0 when none fits).",
        variable="largest_batch",
        checker=_check_largest_batch,
        hint_text="Take the fixed bytes out of the budget first, then see how many whole samples fit in what is "
        "left (floor division //). If the fixed part alone is over budget, the answer is 0, not a negative number.",
        chapter="05",
        context=lambda: {"math": math},
    ),
    Question(
        number=3,
        task="Write `adam_training_bytes(model)`: every parameter, plus gradient and two Adam moments for "
        "each trainable parameter, in bytes.",
        variable="adam_training_bytes",
        checker=_check_adam_training_bytes,
        hint_text="Loop over model.parameters(); a parameter's bytes are p.numel() * p.element_size(). A "
        "trainable one (p.requires_grad) counts four times: itself, its gradient and Adam's two moments; "
        "a frozen one once.",
        chapter="05",
        context=lambda: {"torch": torch},
    ),
]
