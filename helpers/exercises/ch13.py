"""Chapter 13 exercises: write a Triton kernel, fix one with two planted bugs, predict a fused kernel's time."""

import contextlib
import importlib.util
import os
from functools import partial
from typing import Any
from unittest import mock

import torch

from ..answers import Wrong, expect_function
from ..checking import Question
from ..kernels import OutOfBounds, as_interpreted, bounds_checked, triton_advice
from ..learner_code import first_line
from ..standins import KernelNeedingTriton
from .cases import Slip, table, unchanged

_FILL = -777  # what an output buffer holds before the launch (no right answer is this)


def _check_kernel(name: str, value: Any) -> None:
    """Launch the kernel on each case: interpreted on CPU tensors under `bounds_checked`, then compiled on a GPU."""
    if isinstance(value, KernelNeedingTriton) or importlib.util.find_spec("triton") is None:
        raise Wrong(triton_advice())
    expect_function(value, name)
    plain = type(value).__name__ not in ("InterpretedFunction", "JITFunction")  # no @triton.jit: seen from its type
    jit = f"`{name}` is a plain Python function, not a Triton kernel: put @triton.jit above its def"
    gpu = [(value.__getitem__, "cuda")] if type(value).__name__ == "JITFunction" and torch.cuda.is_available() else []
    for launch, device in [((lambda grid: value) if plain else as_interpreted(value).__getitem__, "cpu"), *gpu]:
        for label, *case in _CASES[name](device):
            try:
                _launch(launch, f"{name} on {label}" + " (compiled, on the GPU)" * (device == "cuda"), *case)
            except Wrong as wrong:  # run as Python, a kernel fails in Triton's words, which differ by version
                raise Wrong(f"{wrong}; {jit}" if plain else str(wrong)) from None
    if plain:
        raise Wrong(jit)


def _launch(launch: Any, call: str, grid: tuple, block: int, tensors: dict, rest: tuple, want: Any, pins: str) -> None:
    """Launch on one case: `tensors` by name, `out` among them; `pins`, the mistake a stray access to x or out shows."""
    from triton.runtime.interpreter import interpreter_builder as builder

    out, kept, lanes = tensors["out"], {k: t.clone() for k, t in tensors.items() if k != "out"}, []

    def watch(store: Any, ptrs: Any, value: Any, mask: Any, *args: Any) -> Any:
        lanes.extend(zip(ptrs.data.ravel().tolist(), mask.data.astype(bool).ravel().tolist(), strict=True))
        return store(ptrs, value, mask, *args)  # each interpreted lane: (address, stored); compiled: none seen

    try:
        with bounds_checked(**tensors) if out.is_cpu else contextlib.nullcontext():  # then `store` checks bounds
            with mock.patch.object(builder, "create_masked_store", partial(watch, builder.create_masked_store)):
                launch(grid)(*tensors.values(), *rest, BLOCK=block)
        torch.cuda.synchronize() if out.is_cuda else None
    except Exception as exc:
        cause = exc.__cause__ or exc
        if isinstance(cause, OutOfBounds):
            said = (_SCALE if cause.tensor == "scale" else pins).format(cause.tensor) if cause.kind != "before" else ""
            raise Wrong(f"{call}: {str(cause).replace(' given: ', ' given; the lowest lies ')}.{said}") from None
        raise Wrong(f"{call} raised {type(cause).__name__}: {first_line(cause)}") from None
    if not unchanged(kept, {k: tensors[k] for k in kept}):
        raise Wrong(f"{call} changed its arguments: a kernel should write into out only")
    if stray := int((out._base != _FILL).sum() - (out != _FILL).sum()):  # out lies in a buffer that must not change
        raise Wrong(f"{call} wrote {stray} element(s) outside out, in the memory around it")
    got, tol = out.cpu().double(), 5e-3 if out.dtype == torch.float16 else 1e-5
    stored = [address for address, on in lanes if on]  # compiled: none seen
    again = len(stored) - len(set(stored))  # a round trip through out, or a pass writing it before the last
    if bool((wrong := ~torch.isclose(got, want, rtol=tol, atol=tol)).any()):
        at, missed = tuple(wrong.nonzero()[0].tolist()), got == _FILL
        more = f", nor are {int(missed.sum()) - 1} more" * bool(missed.sum() > 1)
        seen = f"never written{more}" if missed[at] else f"{float(got[at]):.7g}"
        seen += f"; expected {float(want[at]):.7g} (within {tol:g})" + _gaps(out, missed, lanes) * bool(missed[at])
        raise Wrong(f"{call}: out[{', '.join(map(str, at))}] is {seen}")
    if again:
        raise Wrong(f"{call} stored {again} element(s) again: fused into one pass, a kernel stores each result once")


def _gaps(out: torch.Tensor, missed: torch.Tensor, lanes: list) -> str:
    """What the stores' lanes show of out's elements never written (compiled, none seen: nothing said)."""
    places = torch.arange(out._base.numel()).as_strided(out.shape, out.stride(), out.storage_offset())[missed]
    where = set((out._base.data_ptr() + places * out.element_size()).tolist())
    if lanes and where <= {address for address, stored in lanes if not stored}:
        return ": the mask turned off every lane that reached them"
    each = "i must cover the BLOCK elements from i * BLOCK" if missed.dim() == 1 else "r must cover row r"
    unreached = lanes and where.isdisjoint(address for address, _ in lanes)
    return f": no program instance's offsets reach them: instance {each}" * bool(unreached)


#: (n, BLOCK, scale, shift, dtype): a ragged last block; n under one block and a negative scale; float16.
_RELU_CASES = ((1000, 256, 1.5, -0.25, "float32"), (100, 128, -2.0, 0.5, "float32"), (3000, 1024, 0.75, 0.1, "float16"))
_PAST_N = " The last block sticks out past n: mask every load and store with offsets < n"
_MASK = " A row shorter than the block leaves lanes past n_cols: mask them (cols < n_cols) in every load and store"
_STRIDE = " Rows of {0} start {0}_row_stride elements apart: row r of {0} starts at r * {0}_row_stride"
_EITHER = " Either the mask lets lanes past n_cols through or row r of {0} does not start at r * {0}_row_stride"
_SCALE = " scale holds one number a row: load scale_ptr + row, one element for the whole row"
#: (rows, n_cols, x's and out's row strides, BLOCK, dtype, what a stray access shows): ragged, strided, both.
_ROWS_CASES = ((1, 100, 100, 100, 128, "float32", _MASK), (3, 128, 160, 136, 128, "int32", _STRIDE))
_ROWS_CASES += ((3, 100, 160, 136, 128, "float16", _EITHER),)


def _relu_cases(device: str) -> Any:
    for n, block, scale, shift, kind in _RELU_CASES:
        x = torch.randn(n, generator=torch.Generator().manual_seed(n)).to(getattr(torch, kind)).to(device)
        out = torch.full((n + 2 * block,), _FILL, dtype=x.dtype, device=device)[block : block + n]
        want = (x.cpu().double() * scale + shift).clamp(min=0).to(x.dtype).double()
        label = f"n={n} in blocks of {block} (scale={scale}, shift={shift}, {kind})"
        yield label, (-(-n // block),), block, {"x": x, "out": out}, (n, scale, shift), want, _PAST_N


def _rows_cases(device: str) -> Any:
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
    (lambda *case: 1e3, "that is 1000 times the least time: milliseconds, or a GB taken as 10^6 bytes, not 10^9"),
)
_LEAST = [Slip(lambda *case, f=f: f(*case) * _least(*case), says) for f, says in _LEAST_SLIPS]
_LEAST_CASES = ((8192, 1024, 4, 300.0), (4096, 2048, 2, 1000.0), (100_000, 300, 8, 250.5), (1, 2**20, 1, 900))


def _kernel_context() -> dict[str, Any]:
    """The chapter's names for answers run from strings (tests): with no source file, their kernels are interpreted."""
    os.environ["TRITON_INTERPRET"] = "1"
    tl = importlib.import_module("triton.language")  # imports triton too
    return {"torch": torch, "triton": importlib.import_module("triton"), "tl": tl}


_TEXTS = {
    "relu_affine_kernel": "Write the Triton kernel `relu_affine_kernel`: out[i] = max(x[i] * scale + shift, 0), one "
    "block of BLOCK elements per program instance.\nStart from add_kernel; mask the load and the store: offsets < n.",
    "row_scale_kernel": "Fix `row_scale_kernel` (row r of x times scale[r]): it is right only for packed rows BLOCK "
    "long.\nMask the lanes past n_cols; rows start x_row_stride apart (try torch.randn(3, 160)[:, :100]).",
    "least_seconds": "Write `least_seconds(rows, cols, element_size, roof_gb_per_s)`: the fused softmax's least time."
    "\nBytes moved / bandwidth: x read once, the result written once; GB/s means 10^9 bytes per second.",
}
_CASES = {"relu_affine_kernel": _relu_cases, "row_scale_kernel": _rows_cases}
_LEAST_CHECK = table("least_seconds", "(rows, cols, element_size, roof_gb_per_s)", _LEAST_CASES, _least, slips=_LEAST)
_CHECKS = (partial(_check_kernel, "relu_affine_kernel"), partial(_check_kernel, "row_scale_kernel"), _LEAST_CHECK)
_KERNEL = {"context": _kernel_context, "time_limit": 20.0}  # a kernel's question: Triton's names, its first import
QUESTIONS = [
    Question(n, task, name, check, hint, chapter="13", **(_KERNEL if name in _CASES else {}))
    for n, ((name, text), check) in enumerate(zip(_TEXTS.items(), _CHECKS, strict=True), 1)
    for task, hint in [text.split("\n")]
]
