"""Chapter 13's checkers beyond the answers tests/wrong_answers/ states: a stray access names the mask only where
its lanes show a right mask would have turned them off, elements never written name the mask or the offsets only where
the store's lanes show it, and a masked load without other= is named only where it made the result NaN (all in
question 1: question 2's kernel to debug is told its symptoms only, never what to change), a kernel that writes float32
into an int32 out is caught, a kernel compiled from a file is checked in the interpreter where no GPU is, a kernel
defined without Triton is told what to install, the bounds check names where an access went, and an interpreted copy of
a compiled kernel runs the `@triton.jit` functions it calls."""

from __future__ import annotations

import importlib
import os
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from helpers.standins import missing_triton

from .answers import evaluate

triton = pytest.importorskip("triton", reason="Triton has Linux wheels only; chapter 13's checkers need it")

#: The words that tell a learner what to change in a kernel; question 2's kernel to debug is told none of them.
_ADVICE = ("Lane ", "mask every", "its address should be", "no program instance's offsets", "the mask turned off")


def _question(number: int):
    from helpers.exercises import ch13

    return ch13.QUESTIONS[number - 1]


def test_a_stray_access_names_the_mask_only_for_lanes_a_right_mask_turns_off() -> None:
    """The lanes of the access out of bounds are the evidence: a lane past n_cols that the mask let through names the
    mask; lanes that pass cols < n_cols and still stray name the address, never the mask (round 5: the mask right, the
    row stride used as the column stride, columns two apart, a load one element on). Question 1's row-centring kernel
    is told this; question 2's kernel to debug, the same mistakes, only where its access went."""
    from tests.wrong_answers.ch13 import _Q1_HEAD, _Q2_HEAD

    loose = (
        _Q1_HEAD + "    mask = cols < x_row_stride\n"
        "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0)\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x, axis=0) / n_cols, mask=mask)\n"
    )
    outcome = evaluate(_question(1), loose)
    assert (
        not outcome.correct
        and "it fails cols < n_cols, yet the access's mask (if any) let it through" in outcome.message
    )
    assert "its address" not in outcome.message, outcome.message
    load = "    x = tl.load(x_ptr + {}, mask=mask, other=0.0)\n"
    store = "    tl.store(out_ptr + {}, x - tl.sum(x, axis=0) / n_cols, mask=mask)\n"
    for loaded, stored in (
        ("row + cols * x_row_stride", "row + cols * out_row_stride"),
        ("row * x_row_stride + cols", "row + cols * out_row_stride"),
        ("row * x_row_stride + 2 * cols", "row * out_row_stride + cols"),
    ):
        code = _Q1_HEAD + "    mask = cols < n_cols\n" + load.format(loaded) + store.format(stored)
        outcome = evaluate(_question(1), code)
        assert not outcome.correct and "it passes cols < n_cols: its address should be" in outcome.message
        assert "mask them" not in outcome.message and "mask every" not in outcome.message, outcome.message
    shifted = (
        _Q1_HEAD + "    mask = cols < n_cols\n"
        "    x = tl.load(x_ptr + row * x_row_stride + cols + 1, mask=mask, other=0.0)\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, x - tl.sum(x, axis=0) / n_cols, mask=mask)\n"
    )
    outcome = evaluate(_question(1), shifted)
    assert not outcome.correct, outcome.message
    assert (
        "it is in an access off by +1: its address should be x_ptr + tl.program_id(0) * x_row_stride + cols"
        in outcome.message
    )
    assert "mask every" not in outcome.message, outcome.message
    scaled = (
        _Q2_HEAD + "    mask = cols < x_row_stride\n"
        "    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask)\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, x * tl.load(scale_ptr + row), mask=mask)\n"
    )
    outcome = evaluate(_question(2), scaled)
    assert not outcome.correct and "outside every tensor given" in outcome.message, outcome.message
    assert not any(words in outcome.message for words in _ADVICE), outcome.message


def test_question_2s_kernel_to_debug_is_told_its_symptoms_only() -> None:
    """Question 2 asks the learner to find the bug: every typical wrong answer's verdict says what went wrong (where an
    access went, which element is wrong) and never what to change (the lanes, the mask, the address, the offsets)."""
    from tests.wrong_answers.ch13 import WRONG_ANSWERS

    for code, _ in WRONG_ANSWERS[2]:
        outcome = evaluate(_question(2), code)
        assert not outcome.correct and outcome.message, code
        assert not [words for words in _ADVICE if words in outcome.message], f"{outcome.message}\nfor:\n{code}"


def test_a_missing_other_is_named_only_where_a_masked_load_without_it_made_the_result_not_finite() -> None:
    """A masked load without other= leaves its masked lanes undefined (NaN, ±inf and 9 in the checker): named where
    the result is not finite and such a load was made, whatever else is wrong; not where the lanes were loaded as NaN
    on purpose, nor where a wrong result is finite; and an answer whose masked lanes are never used (question 2's
    solution, a tl.where that zeroes them) is right."""
    from helpers.exercises.solutions.ch13 import SOLUTIONS
    from tests.wrong_answers.ch13 import RIGHT_ANSWERS

    undefined = "a masked load without other= (or padding_option=) left lanes undefined: NaN, ±inf, 9 here"
    for code in (SOLUTIONS[1].replace(", other=0.0)", ")"), SOLUTIONS[1].replace("other=0.0", "other=float('nan')")):
        outcome = evaluate(_question(1), code)
        assert not outcome.correct and "is nan; expected" in outcome.message, outcome.message
        assert (undefined in outcome.message) == ("other=" not in code), outcome.message
    where = next(code for code in RIGHT_ANSWERS[1] if "tl.where(mask, tl.load(" in code)
    assert "other=" not in where and evaluate(_question(1), where).correct
    by_block = where.replace("/ n_cols", "/ BLOCK")  # no other=, and a wrong mean that is not NaN
    outcome = evaluate(_question(1), by_block)
    assert not outcome.correct and "is nan" not in outcome.message and undefined not in outcome.message, outcome
    assert "other=" not in SOLUTIONS[2] and evaluate(_question(2), SOLUTIONS[2]).correct
    truncated = SOLUTIONS[2].replace("x * tl.load(scale_ptr + row)", "x * tl.load(scale_ptr + row).to(tl.int32)")
    outcome = evaluate(_question(2), truncated)
    assert not outcome.correct and undefined not in outcome.message, outcome.message


def test_a_kernel_that_stores_float32_whatever_out_holds_is_wrong_on_int32_rows() -> None:
    """Rows of float32 only would let a kernel through that writes float32 bits into out whatever its dtype."""
    code = (
        "@triton.jit\n"
        "def row_scale_kernel(x_ptr, scale_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):\n"
        "    r = tl.program_id(0)\n"
        "    c = tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + r * x_row_stride + c, mask=c < n_cols)\n"
        "    out = out_ptr.to(tl.pointer_type(tl.float32))\n"
        "    tl.store(out + r * out_row_stride + c, x * tl.load(scale_ptr + r), mask=c < n_cols)\n"
    )
    outcome = evaluate(_question(2), code)
    assert not outcome.correct and "int32s" in outcome.message, outcome.message


def test_a_kernel_compiled_from_a_file_is_checked_in_the_interpreter_without_a_gpu(tmp_path: Path) -> None:
    """In a notebook on a GPU machine the learner's kernel is compiled (its cell is its source file); without
    a usable GPU the checker still runs an interpreted copy of it, bounds-checked: question 1's row-centring kernel
    passes, and the same kernel with no mask is told to mask every load and store."""
    if torch.cuda.is_available():
        pytest.skip("with a GPU the compiled kernel runs there: tests/gpu/test_gpu_ch13.py checks that")
    from helpers.exercises.solutions.ch13 import SOLUTIONS
    from tests.wrong_answers.ch13 import WRONG_ANSWERS

    interpret = os.environ.pop("TRITON_INTERPRET", None)
    sys.path.insert(0, str(tmp_path))
    try:
        for i, code in enumerate((SOLUTIONS[1], WRONG_ANSWERS[1][0][0])):
            (tmp_path / f"compiled_answer_{i}.py").write_text("import triton\nimport triton.language as tl\n\n" + code)
            kernel = importlib.import_module(f"compiled_answer_{i}").row_centre_kernel
            assert type(kernel).__name__ == "JITFunction"
            outcome = _question(1).evaluate({"row_centre_kernel": kernel})
            assert outcome.correct == (i == 0), outcome.message
        assert "mask every load and store" in outcome.message
    finally:
        sys.path.remove(str(tmp_path))
        if interpret is not None:
            os.environ["TRITON_INTERPRET"] = interpret


def test_a_kernel_defined_without_triton_is_told_what_to_install() -> None:
    stand_in, tl = missing_triton()

    def row_centre_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
        pass

    kernel = stand_in.jit(row_centre_kernel)
    outcome = _question(1).evaluate({"row_centre_kernel": kernel})
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


def test_elements_never_written_name_the_mask_or_the_offsets_only_where_the_lanes_show_it() -> None:
    """The interpreter's store lanes are the evidence: elements every lane reached with the mask off name the mask
    (a store's mask one short, a store of the positive results only, a mask that leaves out a row BLOCK long); elements
    no lane reached name the offsets (no row in the address, or the row from an axis the grid does not have, with a
    right mask); neither names the other. Question 2's kernel to debug, one short too, is told neither."""
    from tests.wrong_answers.ch13 import _Q1_HEAD, _Q1_LOAD, _Q1_MASK, _Q2_HEAD

    store = "    tl.store(out_ptr + {}, {}, mask={})\n"
    centred, here = "x - tl.sum(x, axis=0) / n_cols", "row * out_row_stride + cols"
    short = _Q1_HEAD + _Q1_MASK + _Q1_LOAD + store.format(here, centred, "cols < n_cols - 1")
    positive = _Q1_HEAD + _Q1_MASK + _Q1_LOAD + f"    y = {centred}\n" + store.format(here, "y", "mask & (y > 0)")
    by_rest = "    mask = (cols < (n_cols - 1) // BLOCK * BLOCK) | (cols < n_cols % BLOCK)\n"
    rest = _Q1_HEAD + by_rest + _Q1_LOAD + store.format(here, centred, "mask")
    no_row = (
        _Q1_HEAD
        + _Q1_MASK
        + "    x = tl.load(x_ptr + cols, mask=mask, other=0.0)\n"
        + store.format("cols", centred, "mask")
    )
    whole = (_Q1_HEAD + _Q1_MASK + _Q1_LOAD + store.format(here, centred, "mask")).replace(
        "tl.program_id(0)", "tl.program_id(1)"
    )
    for code, said, not_said in (
        (short, "the mask turned off every lane that reached them", "offsets"),
        (positive, "the mask turned off every lane that reached them", "offsets"),
        (rest, "the mask turned off every lane that reached them", "offsets"),
        (no_row, "no program instance's offsets reach them", "mask"),
        (whole, "no program instance's offsets reach them", "mask"),
    ):
        outcome = evaluate(_question(1), code)
        assert not outcome.correct and said in outcome.message, outcome.message
        assert not_said not in outcome.message.split("expected")[-1], outcome.message
    rows_short = (
        _Q2_HEAD + "    mask = cols < n_cols - 1\n"
        "    tl.store(out_ptr + row * out_row_stride + cols, tl.load(x_ptr + row * x_row_stride + cols, mask=mask) "
        "* tl.load(scale_ptr + row), mask=mask)\n"
    )
    outcome = evaluate(_question(2), rows_short)
    assert not outcome.correct and "is never written" in outcome.message, outcome.message
    assert "mask" not in outcome.message and "offsets" not in outcome.message, outcome.message


def test_overlapping_offsets_with_a_right_mask_do_not_name_the_mask() -> None:
    """Rows from the program id alone, not times the stride: the rows overlap and stray into a gap of x, and the mask,
    cols < n_cols, is right: the address is named, not the mask."""
    from tests.wrong_answers.ch13 import _Q1_HEAD, _Q1_MASK

    code = (
        _Q1_HEAD + _Q1_MASK + "    x = tl.load(x_ptr + row + cols, mask=mask, other=0.0)\n"
        "    tl.store(out_ptr + row + cols, x - tl.sum(x, axis=0) / n_cols, mask=mask)\n"
    )
    outcome = evaluate(_question(1), code)
    assert not outcome.correct and "its address should be" in outcome.message and "mask" not in outcome.message


def test_an_interpreted_copy_of_a_compiled_kernel_runs_the_jitted_functions_it_calls(tmp_path: Path) -> None:
    """Where Triton is imported without TRITON_INTERPRET (a GPU machine), `tl.zeros`, `tl.max`, `tl.sum` and a kernel's
    own `@triton.jit` helpers are compiled functions; an interpreted copy that called one raised "Cannot call
    @triton.jit'd outside of the scope of a kernel" (chapter 13's matmul on an H200, Triton 3.6); and a compile after it
    failed ("'block_argument' object has no attribute 'dtype'", the H200 on 2026-11-30) while Triton's call of a
    helper left `triton.language.core` patched. A fresh interpreter imports Triton the way a GPU machine does."""
    from helpers.processes import run_fresh_python

    script = tmp_path / "interpreted_copy.py"  # Triton reads a kernel's source from its file
    script.write_text(
        textwrap.dedent(
            """
        import torch, triton, triton.language as tl
        from triton.runtime.jit import JITFunction
        from helpers.kernels import as_interpreted

        @triton.jit
        def half(x):
            return x * 0.5

        @triton.jit
        def half_softmax(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            cols = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + cols, mask=cols < n, other=-float("inf"))
            acc = tl.zeros((BLOCK,), dtype=tl.float32)
            e = tl.exp(x - tl.max(x, axis=0))
            acc += half(e / tl.sum(e, axis=0))
            tl.store(out_ptr + cols, acc, mask=cols < n)

        assert isinstance(tl.zeros, JITFunction) and isinstance(half_softmax, JITFunction), "not imported compiled"
        x, out = torch.randn(10), torch.empty(10)
        as_interpreted(half_softmax)[(1,)](x, out, 10, BLOCK=16)
        torch.testing.assert_close(out, torch.softmax(x, 0) / 2)
        from triton.backends.compiler import GPUTarget  # then a compile for a T4, no GPU needed: the cache is empty
        sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
        triton.compile(triton.compiler.ASTSource(half_softmax, sig, {(3,): 16}), target=GPUTarget("cuda", 75, 32))
        print("right")
        """
        ),
        encoding="utf-8",
    )
    env = {"TRITON_INTERPRET": None, "TRITON_CACHE_DIR": str(tmp_path / "cache")}
    printed = run_fresh_python(f"import runpy; runpy.run_path({str(script)!r})", env=env)
    assert printed.strip() == "right", printed


def test_a_right_kernel_is_right_when_checked_inside_the_learners_own_bounds_check_or_rebound_interpreted() -> None:
    """Attack round 5: the hint sends a learner to `bounds_checked`, and `check()` left inside that block was told of
    accesses outside the learner's tensors (the checker's own); a kernel rebound to `as_interpreted(kernel)` while
    debugging was run as plain Python. Both are the right kernel and are accepted; a wrong one is still told so."""
    from helpers.exercises.solutions.ch13 import SOLUTIONS
    from helpers.kernels import as_interpreted, bounds_checked

    for number, name in ((1, "row_centre_kernel"), (2, "row_scale_kernel")):
        question = _question(number)
        namespace = {"torch": torch, **question.context()}
        exec(compile(SOLUTIONS[number], f"<{name}>", "exec"), namespace)
        with bounds_checked(x=torch.randn(2, 2)):  # the learner's tensors, none of the checker's
            outcome = question.evaluate({name: namespace[name]})
        assert outcome.correct, outcome.message
        assert question.evaluate({name: as_interpreted(namespace[name])}).correct
    unmasked = SOLUTIONS[2].replace(", mask=mask", "")
    namespace = {"torch": torch, **_question(2).context()}
    exec(compile(unmasked, "<row_scale_kernel>", "exec"), namespace)
    outcome = _question(2).evaluate({"row_scale_kernel": as_interpreted(namespace["row_scale_kernel"])})
    assert not outcome.correct and "past the end of x" in outcome.message, outcome.message
