"""Chapter 05 exercises: a tensor's size, and a training step's peak memory, predicted then measured."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
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


# -- Question 2: predict a training step's peak, then measure it -----------------------------------


@dataclass(frozen=True)
class _Case:
    """A model on the meta device (no memory used), a batch, and the parts a prediction is made of."""

    what: str
    model: torch.nn.Module
    batch: int
    per_sample: int

    @property
    def sizes(self) -> list[tuple[int, int, bool]]:
        return [(p.numel(), p.element_size(), p.requires_grad) for p in self.model.parameters()]

    @property
    def weights(self) -> int:
        """Bytes of every parameter, trainable or frozen."""
        return sum(n * size for n, size, _ in self.sizes)

    @property
    def trained(self) -> int:
        """Bytes of one copy of the trainable parameters."""
        return sum(n * size for n, size, grad in self.sizes if grad)

    @property
    def acts(self) -> int:
        return self.batch * self.per_sample

    @property
    def want(self) -> int:
        return self.weights + 3 * self.trained + self.acts  # a gradient and two moments per trainable one

    def call(self) -> str:
        return f"predict_peak_bytes({self.what}, {self.batch}, {self.per_sample})"


def _cases() -> list[_Case]:
    """Three models: the second has a frozen layer, the third float16 parameters, so that every term counts."""
    with torch.device("meta"):
        mlp = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
        frozen = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
        half = torch.nn.Linear(16, 8, dtype=torch.float16)
    frozen[0].requires_grad_(False)
    return [
        _Case("a float32 MLP", mlp, 16, 32 * 4),
        _Case("an MLP whose first layer is frozen", frozen, 8, 32 * 4),
        _Case("a float16 Linear", half, 4, 8 * 2),
    ]


#: What a mistaken prediction gives, and what the learner is told: a mistake is named only when its
#: formula gives the learner's answer on every case.
_MISTAKES: tuple[tuple[Callable[[_Case], float], str], ...] = (
    (
        lambda c: 4 * c.weights + c.acts,
        "you count a gradient and Adam's two moments for frozen parameters too; "
        "a parameter with requires_grad=False gets neither",
    ),
    (
        lambda c: 4 * c.trained + c.acts,
        "the frozen parameters are missing: they get no gradient and no moments, but they are in memory (once)",
    ),
    (
        lambda c: c.weights + 2 * c.trained + c.acts,
        "one copy per trainable parameter is missing: it has a gradient AND two Adam moments "
        "(was the gradient forgotten, or the two moments counted once?)",
    ),
    (
        lambda c: c.weights + c.trained + c.acts,
        "Adam's two moments are missing: it keeps two per trainable parameter, each the parameter's size",
    ),
    (lambda c: c.weights + c.acts, "the gradients and Adam's moments of the trainable parameters are missing"),
    (lambda c: c.weights + 3 * c.trained, "the activations kept for backward are missing"),
    (
        lambda c: c.weights + 3 * c.trained + c.per_sample,
        "the activations are counted for one sample: multiply by the batch size",
    ),
    (
        lambda c: sum(n * (4 if grad else 1) for n, _, grad in c.sizes) + c.acts,
        "you count elements, not bytes: multiply numel() by element_size()",
    ),
    (
        lambda c: sum(n * 4 * (4 if grad else 1) for n, _, grad in c.sizes) + c.acts,
        "you assume 4 bytes per element; use each parameter's element_size() (float16 has 2)",
    ),
    (lambda c: 8 * (c.want - c.acts) + c.acts, "you count bits, not bytes: element_size() is in bytes already"),
    (lambda c: 8 * c.want, "you count bits, not bytes: element_size() is in bytes already"),
    (lambda c: c.want / 2**20, "that looks like MiB; return bytes"),
    (lambda c: c.want / 1e6, "that looks like megabytes (10^6 bytes); return bytes"),
)


def _close(got: float, want: float) -> bool:
    return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9)


def _check_predict_peak_bytes(fn: Any) -> None:
    expect_function(fn, "predict_peak_bytes", "(model, batch_size, activation_bytes_per_sample)")
    cases = _cases()
    answers = [expect_number(fn(c.model, c.batch, c.per_sample), f"a number of bytes from {c.call()}") for c in cases]
    wrong = [(c, got) for c, got in zip(cases, answers, strict=True) if not _close(got, c.want)]
    if not wrong:
        return
    case, got = wrong[0]
    for formula, message in _MISTAKES:
        if all(_close(answer, formula(c)) for c, answer in zip(cases, answers, strict=True)):
            raise Wrong(f"{case.call()} returned {got:,}: {message}")
    raise Wrong(f"{case.call()} returned {got!r}; a step with Adam holding all of it at once needs {case.want:,} bytes")


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
        task="Write `predict_peak_bytes(model, batch_size, activation_bytes_per_sample)`: the bytes a training "
        "step with Adam holds if all of it is alive at once: every parameter; for each trainable one its "
        "gradient and Adam's two moments; and the activations kept for backward, for every sample of the batch.",
        variable="predict_peak_bytes",
        checker=_check_predict_peak_bytes,
        hint_text="Loop over model.parameters(): a parameter's bytes are p.numel() * p.element_size(). A "
        "trainable one (p.requires_grad) is in memory four times (itself, its gradient, two moments), a frozen "
        "one once. Then add batch_size * activation_bytes_per_sample.",
        chapter="05",
        context=lambda: {"torch": torch},
    ),
]
