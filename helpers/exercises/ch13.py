"""Chapter 13 exercises: write a Triton kernel, fix one with two planted bugs, predict a fused kernel's time.

The two kernel questions run the learner's kernel for real, on several shapes, ragged ones among
them: first under Triton's interpreter on CPU tensors, with every load and store checked against
the tensors' elements (`helpers.kernels.bounds_checked`), so that a missing mask is named instead
of silently reading or writing memory that belongs to nothing; then, where the kernel was compiled
for a GPU and one is here, on the GPU, against torch. A plain Python function is run the same way
(the interpreter runs one as it runs a kernel), so its mistakes get their verdicts, and is then
told to take `@triton.jit`.
"""

from __future__ import annotations

import inspect
import math
import types
from typing import Any

import torch

from ..checking import Question, Wrong, _first_line, expect_number
from ..kernels import as_interpreted, triton_advice
from ..standins import KernelNeedingTriton

#: The third question's cases: (rows, columns, bytes per element, memory roof in GB/s).
_PREDICT_CASES = ((8192, 1024, 4, 300.0), (4096, 2048, 2, 1000.0))


def _triton() -> Any:
    """The `triton` module, or a verdict that says what to install."""
    try:
        import triton
    except ImportError:
        raise Wrong(triton_advice()) from None
    return triton


def _kernels(value: Any, name: str, takes: str) -> tuple[Any, Any, bool]:
    """(an interpreted kernel to run on CPU tensors, the compiled kernel to run on the GPU or None, plain function?)."""
    _triton()
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    if isinstance(value, InterpretedFunction):
        return value, None, False
    if isinstance(value, JITFunction):
        return as_interpreted(value), (value if torch.cuda.is_available() else None), False
    if isinstance(value, types.FunctionType):
        return InterpretedFunction(_seeing_triton(inspect.unwrap(value))), None, True
    if isinstance(value, KernelNeedingTriton):  # defined while Triton was missing, before it was installed
        raise Wrong(triton_advice())
    kind = type(value).__name__
    raise Wrong(
        f"`{name}` should be a Triton kernel: a function taking {takes}, decorated with @triton.jit; got a {kind}"
    )


def _seeing_triton(fn: types.FunctionType) -> types.FunctionType:
    """`fn` with `triton` and `tl` among its globals, as the interpreter needs them (a notebook cell has them)."""
    import triton
    import triton.language as tl

    names = {"triton": triton, "tl": tl, **fn.__globals__}
    seeing = types.FunctionType(fn.__code__, names, fn.__name__, fn.__defaults__, fn.__closure__)
    seeing.__kwdefaults__, seeing.__annotations__ = fn.__kwdefaults__, fn.__annotations__
    return seeing


def _launch(
    kernel: Any, grid: tuple[int, ...], args: tuple, block: int, checked: dict[str, torch.Tensor] | None
) -> None:
    """Launch `kernel[grid](*args, BLOCK=block)`; under the bounds check when `checked` names the tensors."""
    from ..kernels import OutOfBounds, bounds_checked

    try:
        if checked is None:
            kernel[grid](*args, BLOCK=block)
            torch.cuda.synchronize()
        else:
            with bounds_checked(**checked):
                kernel[grid](*args, BLOCK=block)
    except Exception as exc:
        cause = exc.__cause__ if exc.__cause__ is not None else exc
        if isinstance(cause, OutOfBounds):
            raise cause from None
        raise Wrong(f"running your kernel raised {type(cause).__name__}: {_first_line(cause)}") from None


def _first_bad(got: torch.Tensor, expected: torch.Tensor) -> int:
    """The flat index of the first element of `got` that differs from `expected`."""
    close = torch.isclose(got.reshape(-1), expected.reshape(-1), rtol=1e-5, atol=1e-6)
    return int((~close).nonzero()[0])


# -- Question 1: write a fused element-wise kernel ---------------------------------------------------

#: (n, BLOCK): a ragged last block, an exact fit, a single element, several blocks of 1024.
_RELU_CASES = ((1000, 256), (256, 256), (1, 128), (2500, 1024))
_SCALE, _SHIFT = 1.5, -0.25


def _check_relu_affine(value: Any) -> None:
    interpreted, compiled, plain = _kernels(value, "relu_affine_kernel", "(x_ptr, out_ptr, n, scale, shift, BLOCK)")
    triton = _triton()
    for kernel, device in ((interpreted, "cpu"), (compiled, "cuda")):
        if kernel is None:
            continue
        for n, block in _RELU_CASES:
            x = torch.randn(n, generator=torch.Generator().manual_seed(n)).to(device)
            out = torch.full((n,), float("nan"), device=device)
            checked = {"x": x, "out": out} if device == "cpu" else None
            try:
                _launch(kernel, (triton.cdiv(n, block),), (x, out, n, _SCALE, _SHIFT), block, checked)
            except IndexError as oob:
                raise Wrong(
                    f"with n={n} in blocks of {block}, {oob}. The last block sticks out past n: mask every load and "
                    "store with offsets < n"
                ) from None
            _compare_relu(out.cpu(), x.cpu(), n, block, device)
    if plain:
        raise Wrong(
            "right results under the interpreter, but `relu_affine_kernel` is a plain Python function, which "
            "`relu_affine_kernel[grid](...)` cannot launch: decorate it with @triton.jit"
        )


def _compare_relu(got: torch.Tensor, x: torch.Tensor, n: int, block: int, device: str) -> None:
    affine = x * _SCALE + _SHIFT
    want = affine.clamp(min=0)
    unwritten = torch.isnan(got)
    if bool(unwritten.all()):
        raise Wrong(f"with n={n}, your kernel wrote nothing into out: store the result with tl.store(out_ptr + ...)")
    if bool(unwritten.any()):
        first = int(unwritten.nonzero()[0])
        if first == min(block, n) and bool(unwritten[first:].all()):
            raise Wrong(
                f"with n={n} in blocks of {block}, only out[:{block}] was written: every program instance wrote the "
                "same block. Start each instance's offsets at pid * BLOCK, with pid = tl.program_id(0)"
            )
        raise Wrong(f"with n={n}, {int(unwritten.sum())} elements of out were never written (the first: out[{first}])")
    if torch.allclose(got, want, rtol=1e-5, atol=1e-6):
        return
    if torch.allclose(got, affine, rtol=1e-5, atol=1e-6):
        raise Wrong("negative results stayed negative: apply the ReLU, max(x * scale + shift, 0), with tl.maximum")
    i = _first_bad(got, want)
    raise Wrong(
        f"on {device}, with n={n}: out[{i}] is {float(got[i]):.4g}, but max(x[{i}] * {_SCALE} + ({_SHIFT}), 0) is "
        f"{float(want[i]):.4g} (x[{i}] = {float(x[i]):.4g})"
    )


# -- Question 2: fix the two planted bugs -------------------------------------------------------------


def _row_scale_cases(device: str) -> list[tuple[str, torch.Tensor, torch.Tensor, int]]:
    """(what, x, out, BLOCK): rows that fill the block exactly, ragged rows, rows of views into wider tensors."""
    g = torch.Generator().manual_seed(13)
    exact = torch.randn(3, 64, generator=g).to(device)
    ragged = torch.randn(3, 100, generator=g).to(device)
    wide_x = torch.randn(3, 160, generator=g).to(device)
    wide_out = torch.full((3, 130), float("nan"), device=device)
    return [
        ("3 rows of 64 columns in blocks of 64", exact, torch.full_like(exact, float("nan")), 64),
        ("3 rows of 100 columns in blocks of 128", ragged, torch.full_like(ragged, float("nan")), 128),
        ("x = wide[:, :100], a view whose rows lie 160 elements apart", wide_x[:, :100], wide_out[:, :100], 128),
    ]


def _check_row_scale(value: Any) -> None:
    interpreted, compiled, plain = _kernels(
        value, "row_scale_kernel", "(x_ptr, scale_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK)"
    )
    for kernel, device in ((interpreted, "cpu"), (compiled, "cuda")):
        if kernel is None:
            continue
        for what, x, out, block in _row_scale_cases(device):
            rows, cols = x.shape
            scale = torch.arange(1.0, rows + 1.0, device=device)
            args = (x, scale, out, cols, x.stride(0), out.stride(0))
            checked = {"x": x, "scale": scale, "out": out} if device == "cpu" else None
            try:
                _launch(kernel, (rows,), args, block, checked)
            except IndexError as oob:
                raise Wrong(_row_scale_out_of_bounds(oob, what)) from None
            got, want = out.cpu(), x.cpu() * scale.cpu()[:, None]
            if not torch.allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=False):
                raise Wrong(_row_scale_wrong_values(got, want, what, x.stride(0) != cols))
    if plain:
        raise Wrong(
            "right results under the interpreter, but `row_scale_kernel` is a plain Python function, which "
            "`row_scale_kernel[grid](...)` cannot launch: keep @triton.jit above it"
        )


def _row_scale_out_of_bounds(oob: Any, what: str) -> str:
    access, tensor, kind = getattr(oob, "access", ""), getattr(oob, "tensor", ""), getattr(oob, "kind", "")
    if kind == "gap":
        stride = "x_row_stride" if tensor == "x" else "out_row_stride"
        return (
            f"on {what}: {oob}. Rows of {tensor} start {stride} elements apart, which need not be n_cols: "
            f"offset row r by r * {stride}"
        )
    return (
        f"on {what}: {oob}. A row shorter than the block leaves lanes past n_cols: mask them (cols < n_cols) in "
        f"every load and store (this {access} had none that covered them)"
    )


def _row_scale_wrong_values(got: torch.Tensor, want: torch.Tensor, what: str, strided: bool) -> str:
    if bool(torch.isnan(got).all()):
        return f"on {what}: your kernel wrote nothing into out"
    if strided:
        return (
            f"on {what}: wrong values. Rows of x start x_row_stride elements apart and rows of out "
            "out_row_stride apart; n_cols is only the length of a row"
        )
    i = _first_bad(got, want)
    row, col = divmod(i, got.shape[1])
    return (
        f"on {what}: out[{row}, {col}] is {float(got.reshape(-1)[i]):.4g}, but x[{row}, {col}] * scale[{row}] is "
        f"{float(want.reshape(-1)[i]):.4g}"
    )


# -- Question 3: predict the least time of the fused softmax ------------------------------------------


def _check_least_seconds(fn: Any) -> None:
    from ..checking import expect_function

    expect_function(fn, "least_seconds", "(rows, cols, element_size, roof_gb_per_s)")
    for rows, cols, size, roof in _PREDICT_CASES:
        got = expect_number(fn(rows, cols, size, roof), "seconds from least_seconds")
        moved = rows * cols * size  # bytes of x; the fused kernel reads them and writes as many
        want = 2 * moved / (roof * 1e9)
        call = f"least_seconds({rows}, {cols}, {size}, {roof:g})"
        if math.isclose(got, want, rel_tol=0.01):
            continue
        for factor, words in (
            (0.5, "you counted each element once: the fused kernel reads x once and writes the result once"),
            (4.0, "that is the traffic of the five-operator version (about 8 passes); the fused kernel makes 2"),
            (1 / size, "you counted elements, not bytes: multiply by element_size"),
            (1e9 / 2**30, "a GB/s is 10^9 bytes per second (the roof is in GB/s, not GiB/s)"),
            (1e3, "that looks like milliseconds: return seconds"),
            (1e6, "that looks like microseconds: return seconds"),
        ):
            if math.isclose(got, want * factor, rel_tol=0.01):
                raise Wrong(f"{call} returned {got:.4g}; {words}")
        raise Wrong(
            f"{call} returned {got:.4g}; expected {want:.4g} s: 2 × {rows} × {cols} × {size} bytes (one read and one "
            f"write of every element) at {roof:g} × 10^9 bytes per second"
        )


def _kernel_context() -> dict[str, Any]:
    """What the chapter's cells define before the exercises, for running answers written as strings (tests).

    Such an answer has no source file, which Triton's compiler reads and its interpreter does not, so
    kernels defined here are interpreted, as they are in the chapter on a machine without a GPU.
    """
    import os

    os.environ["TRITON_INTERPRET"] = "1"
    try:
        import triton
        import triton.language as tl
    except ImportError:
        from ..standins import missing_triton

        triton, tl = missing_triton()
    return {"torch": torch, "triton": triton, "tl": tl}


QUESTIONS = [
    Question(
        number=1,
        task="Write the Triton kernel `relu_affine_kernel(x_ptr, out_ptr, n, scale, shift, BLOCK)`: out[i] = "
        "max(x[i] * scale + shift, 0) for the n elements, one block of BLOCK elements per program instance.",
        variable="relu_affine_kernel",
        checker=_check_relu_affine,
        hint_text="Start from add_kernel (section 1): pid = tl.program_id(0); offsets = pid * BLOCK + "
        "tl.arange(0, BLOCK); mask = offsets < n; load x with that mask, compute tl.maximum(x * scale + shift, 0.0) "
        "and store it with the same mask.",
        chapter="13",
        context=_kernel_context,
        time_limit=20.0,
    ),
    Question(
        number=2,
        task="Fix `row_scale_kernel`: it multiplies row r of x by scale[r] and is right only when x's rows are "
        "exactly BLOCK long and packed one after the other. Find its two bugs.",
        variable="row_scale_kernel",
        checker=_check_row_scale,
        hint_text="Try it on x = torch.randn(3, 100) and on torch.randn(3, 160)[:, :100] (under "
        "helpers.kernels.bounds_checked on a CPU). One bug is a missing mask for the lanes past n_cols; the other "
        "is where a row starts: x_row_stride elements apart, not n_cols.",
        chapter="13",
        context=_kernel_context,
        time_limit=20.0,
    ),
    Question(
        number=3,
        task="Write `least_seconds(rows, cols, element_size, roof_gb_per_s)`: the least time the fused softmax "
        "can take on a (rows, cols) tensor whose elements are element_size bytes, on a GPU whose memory moves "
        "roof_gb_per_s GB/s.",
        variable="least_seconds",
        checker=_check_least_seconds,
        hint_text="A memory-bound kernel takes at least bytes moved / bandwidth. The fused kernel reads every "
        "element once and writes every result once; GB/s means 10^9 bytes per second.",
        chapter="13",
        context=lambda: {"torch": torch},
    ),
]
