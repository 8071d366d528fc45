"""Chapter 13's checkers beyond the wrong answers tests/wrong_answers/ states: other right kernels are
accepted, a kernel compiled from a file is checked in the interpreter where no GPU is, a kernel defined
without Triton is told what to install, and the bounds check names where an access went."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest
import torch

from helpers.standins import missing_triton

from .answers import evaluate

triton = pytest.importorskip("triton", reason="Triton has Linux wheels only; chapter 13's checkers need it")


def _question(number: int):
    from helpers.exercises import ch13

    return ch13.QUESTIONS[number - 1]


def test_other_right_kernels_are_accepted() -> None:
    relu_head = "@triton.jit\ndef relu_affine_kernel(x_ptr, out_ptr, n, scale, shift, BLOCK: tl.constexpr):\n"
    row_head = (
        "@triton.jit\n"
        "def row_scale_kernel(x_ptr, scale_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):\n"
    )
    right = {
        1: [
            relu_head + "    i = tl.program_id(axis=0) * BLOCK + tl.arange(0, BLOCK)\n"
            "    y = tl.load(x_ptr + i, mask=i < n, other=0.0) * scale + shift\n"
            "    tl.store(out_ptr + i, tl.where(y > 0, y, 0.0), mask=i < n)\n",
        ],
        2: [
            row_head + "    r = tl.program_id(0)\n"
            "    c = tl.arange(0, BLOCK)\n"
            "    inside = c < n_cols\n"
            "    row = tl.load(x_ptr + r * x_row_stride + c, mask=inside, other=0.0)\n"
            "    tl.store(out_ptr + r * out_row_stride + c, row * tl.load(scale_ptr + r), mask=inside)\n",
        ],
        3: [
            "def least_seconds(rows, cols, element_size, roof_gb_per_s):\n"
            "    return (rows * cols * element_size * 2) / roof_gb_per_s / 1e9",
            "def least_seconds(rows, cols, element_size, roof_gb_per_s):\n"
            "    return torch.tensor(2.0 * rows * cols * element_size) / (roof_gb_per_s * 10**9)",
        ],
    }
    for number, answers in right.items():
        for code in answers:
            outcome = evaluate(_question(number), code)
            assert outcome.correct, (code, outcome.message)


def test_a_kernel_compiled_from_a_file_is_checked_in_the_interpreter_without_a_gpu(tmp_path: Path) -> None:
    """In a notebook on a GPU machine the learner's kernel is compiled (its cell is its source file); without
    a usable GPU the checker still runs an interpreted copy of it, bounds-checked."""
    if torch.cuda.is_available():
        pytest.skip("with a GPU the compiled kernel runs there: tests/gpu/test_gpu_ch13.py checks that")
    from helpers.exercises.solutions.ch13 import SOLUTIONS
    from tests.wrong_answers.ch13 import WRONG_ANSWERS

    interpret = os.environ.pop("TRITON_INTERPRET", None)
    sys.path.insert(0, str(tmp_path))
    try:
        for i, code in enumerate((SOLUTIONS[1], WRONG_ANSWERS[1][0][0])):
            (tmp_path / f"compiled_answer_{i}.py").write_text("import triton\nimport triton.language as tl\n\n" + code)
            kernel = importlib.import_module(f"compiled_answer_{i}").relu_affine_kernel
            assert type(kernel).__name__ == "JITFunction"
            outcome = _question(1).evaluate({"relu_affine_kernel": kernel})
            assert outcome.correct == (i == 0), outcome.message
        assert "mask every load and store" in outcome.message
    finally:
        sys.path.remove(str(tmp_path))
        if interpret is not None:
            os.environ["TRITON_INTERPRET"] = interpret


def test_a_kernel_defined_without_triton_is_told_what_to_install() -> None:
    stand_in, tl = missing_triton()

    def relu_affine_kernel(x_ptr, out_ptr, n, scale, shift, BLOCK: tl.constexpr):
        pass

    kernel = stand_in.jit(relu_affine_kernel)
    outcome = _question(1).evaluate({"relu_affine_kernel": kernel})
    assert not outcome.correct and "Triton" in outcome.message and "Kaggle" in outcome.message, outcome.message
    with pytest.raises(RuntimeError, match="Triton is missing here"):
        kernel[(1,)]


def test_the_bounds_check_names_the_tensor_and_where_the_access_went() -> None:
    import triton.language as tl

    from helpers.kernels import OutOfBounds, as_interpreted, bounds_checked

    os.environ["TRITON_INTERPRET"] = "1"

    @triton.jit
    def copy_rows(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        tl.store(
            out_ptr + row * n_cols + cols, tl.load(x_ptr + row * stride + cols, mask=cols < n_cols), mask=cols < n_cols
        )

    kernel = as_interpreted(copy_rows)
    x = torch.randn(3, 160)[:, :100]
    out = torch.empty(3, 100)
    with bounds_checked(x=x, out=out):
        kernel[(3,)](x, out, 100, x.stride(0), BLOCK=128)
    torch.testing.assert_close(out, x)
    with pytest.raises(Exception) as caught, bounds_checked(x=x, out=out):
        kernel[(3,)](x, out, 100, 100, BLOCK=128)  # the wrong stride: row 1 starts in row 0's gap
    error = caught.value.__cause__ or caught.value
    assert isinstance(error, OutOfBounds) and (error.access, error.tensor, error.kind) == ("load", "x", "gap"), error
