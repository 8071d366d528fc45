"""Chapter 13 exercises: write a Triton kernel, fix one with two planted bugs, predict a fused kernel's time."""

from __future__ import annotations

import contextlib
import importlib.util
import os
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any
from unittest import mock

import torch

from ..answers import Wrong, with_article
from ..checking import Question
from ..kernels import OutOfBounds, as_interpreted, bounds_checked, triton_advice
from ..learner_code import first_line
from ..standins import KernelNeedingTriton
from .cases import Slip, table, unchanged

_FILL = -777  # what an output buffer holds before the launch (no right answer is this)
_OWN = "each program instance must write its own part of out (its block, its row), found from tl.program_id(0)"


def _check_kernel(name: str, cases: Callable[[str], Iterator[tuple]], value: Any) -> None:
    """Launch the kernel on each case: interpreted on CPU tensors under `bounds_checked`, then compiled on a GPU."""
    if isinstance(value, KernelNeedingTriton) or importlib.util.find_spec("triton") is None:
        raise Wrong(triton_advice())
    plain = type(value).__name__ not in ("InterpretedFunction", "JITFunction")  # no @triton.jit: seen from its type
    jit = f"`{name}` is a plain Python function, not a Triton kernel, which `{name}[grid](...)` launches: "
    jit += "put @triton.jit above it"
    if plain and not callable(value):
        got = with_article(type(value).__name__)
        raise Wrong(f"`{name}` should be a Triton kernel, decorated with @triton.jit; got {got}")
    gpu = type(value).__name__ == "JITFunction" and torch.cuda.is_available()
    python = (lambda grid: value) if plain else as_interpreted(value).__getitem__
    for launch, device in [(python, "cpu")] + ([(value.__getitem__, "cuda")] if gpu else []):
        for label, *case in cases(device):
            try:
                _launch(launch, f"{name} on {label}" + " (compiled, on the GPU)" * (device == "cuda"), *case)
            except Wrong as wrong:  # run as Python, a kernel fails in Triton's words, which differ by version
                raise Wrong(f"{wrong}; {jit}" if plain else str(wrong)) from None
    if plain:
        raise Wrong(jit)


def _stores(stored: list) -> Any:
    """A patch that adds to `stored` the address of each element an interpreted kernel stores (compiled: not seen)."""
    from triton.runtime.interpreter import interpreter_builder as builder

    def watch(ptrs: Any, value: Any, mask: Any, *args: Any, store: Any = builder.create_masked_store) -> Any:
        stored.extend(ptrs.data[mask.data.astype(bool)].tolist())  # numpy arrays: addresses, and which lanes store
        return store(ptrs, value, mask, *args)

    return mock.patch.object(builder, "create_masked_store", watch)


def _launch(launch: Any, call: str, grid: tuple, block: int, tensors: dict, rest: tuple, want: Any, pins: str) -> None:
    """Launch on one case: `tensors` by name, `out` among them; `pins`, the mistake a stray access to x or out shows."""
    out, kept, stored = tensors["out"], {k: t.clone() for k, t in tensors.items() if k != "out"}, []
    try:
        with bounds_checked(**tensors) if out.is_cpu else contextlib.nullcontext(), _stores(stored):
            launch(grid)(*tensors.values(), *rest, BLOCK=block)
        torch.cuda.synchronize() if out.is_cuda else None
    except Exception as exc:
        cause = exc.__cause__ if exc.__cause__ is not None else exc
        if isinstance(cause, OutOfBounds):
            said = (_SCALE if cause.tensor == "scale" else pins).format(cause.tensor) if cause.kind != "before" else ""
            raise Wrong(f"{call}: {str(cause).replace(' given: ', ' given; the lowest lies ')}.{said}") from None
        raise Wrong(f"{call} raised {type(cause).__name__}: {first_line(cause)}") from None
    if not unchanged(kept, {k: tensors[k] for k in kept}):
        raise Wrong(f"{call} changed its arguments: a kernel should write into out only")
    around = out._base.clone()  # the buffer out lies in must not change, but for out's own elements
    around.as_strided(out.shape, out.stride(), out.storage_offset()).fill_(_FILL)
    if bool((around != _FILL).any()):
        raise Wrong(f"{call} wrote {int((around != _FILL).sum())} element(s) outside out, in the memory around it")
    got, tol = out.cpu().double(), 5e-3 if out.dtype == torch.float16 else 1e-5
    wrong = ~torch.isclose(got, want, rtol=tol, atol=tol)
    if bool(wrong.any()):
        at = tuple(wrong.nonzero()[0].tolist())
        value = f"{float(got[at]):.7g}; expected {float(want[at]):.7g} (within {tol:g})"
        value = f"never written, nor are {int((got == _FILL).sum()) - 1} more: {_OWN}" if got[at] == _FILL else value
        raise Wrong(f"{call}: out[{', '.join(map(str, at))}] is {value}")
    if (again := len(stored) - len(set(stored))) > 0:  # a round trip through out, or a pass writing it before the last
        raise Wrong(f"{call} stored {again} element(s) again: fused into one pass, a kernel stores each result once")


#: (n, BLOCK, scale, shift, dtype): a ragged last block; n under one block and a negative scale; float16.
_RELU_CASES = ((1000, 256, 1.5, -0.25, "float32"), (100, 128, -2.0, 0.5, "float32"), (3000, 1024, 0.75, 0.1, "float16"))
_PAST_N = " The last block sticks out past n: mask every load and store with offsets < n"


def _relu_cases(device: str) -> Iterator[tuple]:
    for n, block, scale, shift, kind in _RELU_CASES:
        x = torch.randn(n, generator=torch.Generator().manual_seed(n)).to(getattr(torch, kind)).to(device)
        out = torch.full((n + 2 * block,), _FILL, dtype=x.dtype, device=device)[block : block + n]
        want = (x.cpu().double() * scale + shift).clamp(min=0).to(x.dtype).double()
        label = f"n={n} in blocks of {block} (scale={scale}, shift={shift}, {kind})"
        yield label, (-(-n // block),), block, {"x": x, "out": out}, (n, scale, shift), want, _PAST_N


_MASK = " A row shorter than the block leaves lanes past n_cols: mask them (cols < n_cols) in every load and store"
_STRIDE = " Rows of {0} start {0}_row_stride elements apart, not always n_cols: row r starts at r * {0}_row_stride"
_EITHER = " Either the mask lets lanes past n_cols through or row r of {0} does not start at r * {0}_row_stride"
_SCALE = " scale holds one number a row: load scale_ptr + row, one element for the whole row"
#: (rows, n_cols, x's and out's row strides, BLOCK, dtype, what a stray access shows): ragged, strided, both.
_ROWS_CASES = (
    (1, 100, 100, 100, 128, "float32", _MASK),
    (3, 128, 160, 136, 128, "int32", _STRIDE),
    (3, 100, 160, 136, 128, "float16", _EITHER),
)


def _rows_cases(device: str) -> Iterator[tuple]:
    for rows, cols, x_stride, out_stride, block, kind, pins in _ROWS_CASES:
        g, dtype = torch.Generator().manual_seed(cols), getattr(torch, kind)
        x = (torch.randn(rows, x_stride, generator=g) * 4).to(dtype).to(device)[:, :cols]
        scale = torch.arange(2, rows + 2, dtype=dtype, device=device)
        out = torch.full((rows + 1, out_stride), _FILL, dtype=dtype, device=device)[:rows, :cols]
        want = (x.cpu().double() * scale.cpu().double()[:, None]).to(dtype).double()
        label = f"{rows} row(s) of {cols} {kind}s, {x_stride} apart in x and {out_stride} in out, BLOCK={block}"
        yield label, (rows,), block, {"x": x, "scale": scale, "out": out}, (cols, x_stride, out_stride), want, pins


_least = lambda rows, cols, size, roof: 2 * rows * cols * size / (roof * 1e9)  # x read once, the result written once
_LEAST_SLIPS = (
    (lambda *case: 0.5, "you counted each element once: the fused kernel reads x once and writes the result once"),
    (lambda *case: 4.0, "that is the traffic of the five-operator version (about 8 passes); the fused kernel makes 2"),
    (lambda r, c, size, g: 1 / size, "you counted elements, not bytes: multiply by element_size"),
    (lambda *case: 1e9 / 2**30, "a GB/s is 10^9 bytes per second (the roof is in GB/s, not GiB/s)"),
    (lambda r, c, size, g: 4 / size, "that takes every element as 4 bytes: multiply by element_size"),
    (lambda *case: 1e3, "that is in milliseconds: return seconds"),
    (lambda *case: 1e6, "that is in microseconds: return seconds"),
    (lambda *case: 8, "that counts bits: element_size is in bytes, and a GB/s is 10^9 bytes per second"),
)
_LEAST = [Slip(lambda *case, f=f: f(*case) * _least(*case), says) for f, says in _LEAST_SLIPS]
_LEAST_CASES = ((8192, 1024, 4, 300.0), (4096, 2048, 2, 1000.0), (100_000, 300, 8, 250.5), (1, 2**20, 1, 900))


def _kernel_context() -> dict[str, Any]:
    """The chapter's names for answers run from strings (tests): with no source file, their kernels are interpreted."""
    os.environ["TRITON_INTERPRET"] = "1"
    tl = importlib.import_module("triton.language")  # imports triton too
    return {"torch": torch, "triton": importlib.import_module("triton"), "tl": tl}


_KERNEL_QUESTION: dict[str, Any] = {"chapter": "13", "context": _kernel_context, "time_limit": 20.0}

QUESTIONS = [
    Question(
        number=1,
        task="Write the Triton kernel `relu_affine_kernel(x_ptr, out_ptr, n, scale, shift, BLOCK)`: out[i] = "
        "max(x[i] * scale + shift, 0) for the n elements, one block of BLOCK elements per program instance.",
        variable="relu_affine_kernel",
        checker=partial(_check_kernel, "relu_affine_kernel", _relu_cases),
        hint_text="Start from add_kernel (section 1): offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK); "
        "mask = offsets < n; load x with that mask, then store tl.maximum(x * scale + shift, 0.0) with it.",
        **_KERNEL_QUESTION,
    ),
    Question(
        number=2,
        task="Fix `row_scale_kernel`: it multiplies row r of x by scale[r] and is right only when x's rows are "
        "exactly BLOCK long and packed one after the other. Find its two bugs.",
        variable="row_scale_kernel",
        checker=partial(_check_kernel, "row_scale_kernel", _rows_cases),
        hint_text="Try x = torch.randn(3, 100) and torch.randn(3, 160)[:, :100] under helpers.kernels.bounds_checked "
        "on a CPU. One bug: no mask for the lanes past n_cols; the other: rows start x_row_stride apart, not n_cols.",
        **_KERNEL_QUESTION,
    ),
    Question(
        number=3,
        task="Write `least_seconds(rows, cols, element_size, roof_gb_per_s)`: the least time the fused softmax "
        "can take on a (rows, cols) tensor of element_size-byte elements, on a GPU moving roof_gb_per_s GB/s.",
        variable="least_seconds",
        checker=table("least_seconds", "(rows, cols, element_size, roof_gb_per_s)", _LEAST_CASES, _least, slips=_LEAST),
        hint_text="A memory-bound kernel takes at least bytes moved / bandwidth. The fused kernel reads every "
        "element once and writes every result once; GB/s means 10^9 bytes per second.",
        chapter="13",
    ),
]
