"""Chapter 13 exercises: write a Triton kernel, fix one with two planted bugs, predict a fused kernel's time."""

import contextlib
import importlib.util
import os
from functools import partial
from typing import Any
from unittest import mock

import numpy as np
import torch

from ..answers import Wrong, expect_function
from ..kernels import OutOfBounds, _element_addresses, as_interpreted, bounds_checked, triton_advice
from ..learner_code import first_line
from ..standins import KernelNeedingTriton
from .cases import questions, table, unchanged

_FILL = -777  # what an output buffer holds before the launch (no right answer is this)


def _check_kernel(name: str, value: Any) -> None:  # each case interpreted, bounds-checked; then compiled on a GPU
    if isinstance(value, KernelNeedingTriton) or importlib.util.find_spec("triton") is None:
        raise Wrong(triton_advice())
    expect_function(value, name)
    plain = type(value).__name__ not in ("InterpretedFunction", "JITFunction")  # no @triton.jit: seen from its type
    gpu = [(value.__getitem__, "cuda")] if type(value).__name__ == "JITFunction" and torch.cuda.is_available() else []
    for launch, device in [((lambda grid: value) if plain else as_interpreted(value).__getitem__, "cpu"), *gpu]:
        for label, *case in _CASES[name](device):  # run as Python, a kernel fails in Triton's words (they vary)
            said = " (compiled, on the GPU)" if device == "cuda" else " (run as Python: no @triton.jit)" * plain
            _launch(launch, f"{name} on {label}{said}", *case)
    if plain:
        raise Wrong(f"`{name}` is a plain Python function, not a Triton kernel: put @triton.jit above its def")


def _launch(launch: Any, call: str, grid: tuple, block: int, tensors: dict, rest: tuple, want: Any) -> None:
    """Launch on one case: `tensors` by name, `out` among them; `rest`, n or n_cols first."""
    from triton.runtime.interpreter import interpreter_builder as builder

    out, kept, accesses = tensors["out"], {k: t.clone() for k, t in tensors.items() if k != "out"}, []

    def watch(io: str, ptrs: Any, *args: Any, **kwargs: Any) -> Any:  # each interpreted access (compiled: none seen)
        on = np.asarray(args[io == "store"].data, dtype=bool).ravel().tolist()  # load(ptrs, mask, ...), store(.., mask)
        accesses.append((io, builder.grid_idx[0], list(zip(ptrs.data.ravel().tolist(), on, strict=True))))
        return do[io](ptrs, *args, **kwargs)

    try:
        with bounds_checked(**tensors) if out.is_cpu else contextlib.nullcontext():  # each access checked after watch
            do = {io: getattr(builder, f"create_masked_{io}") for io in ("load", "store")}  # bounds_checked's
            with mock.patch.multiple(builder, **{f"create_masked_{io}": partial(watch, io) for io in do}):
                launch(grid)(*tensors.values(), *rest, BLOCK=block)
        torch.cuda.synchronize() if out.is_cuda else None
    except Exception as exc:
        cause = exc.__cause__ or exc
        if isinstance(cause, OutOfBounds):
            said = "" if cause.tensor == "scale" else _strays(cause.tensor, *accesses[-1][1:], tensors, block, rest[0])
            raise Wrong(f"{call}: {str(cause).replace(' given: ', ' given; the lowest lies ')}.{said}") from None
        raise Wrong(f"{call} raised {type(cause).__name__}: {first_line(cause)}") from None
    if not unchanged(kept, {k: tensors[k] for k in kept}):
        raise Wrong(f"{call} changed its arguments: a kernel should write into out only")
    if stray := int((out._base != _FILL).sum() - (out != _FILL).sum()):  # out lies in a buffer that must not change
        raise Wrong(f"{call} wrote {stray} element(s) outside out, in the memory around it")
    got, tol = out.cpu().double(), 5e-3 if out.dtype == torch.float16 else 1e-5
    lanes = [lane for io, _, each in accesses if io == "store" for lane in each]  # (address, stored)
    if bool((wrong := ~torch.isclose(got, want, rtol=tol, atol=tol)).any()):
        at, missed = tuple(wrong.nonzero()[0].tolist()), got == _FILL
        more = f", nor are {int(missed.sum()) - 1} more" * bool(missed.sum() > 1)
        seen = f"never written{more}" if missed[at] else f"{float(got[at]):.7g}"
        seen += f"; expected {float(want[at]):.7g} (within {tol:g})" + _gaps(out, missed, lanes) * bool(missed[at])
        raise Wrong(f"{call}: out[{', '.join(map(str, at))}] is {seen}")
    if (most := max((len(each) for _, _, each in accesses), default=0)) > block:  # a width other than BLOCK
        raise Wrong(f"{call}: one access of a program instance had {most} lanes, more than BLOCK ({block})")
    width = out.element_size() * (out.stride(0) if out.dim() == 2 else block)  # a row's bytes apart, or a block's
    parts = {(p, (a - out.data_ptr()) // width) for io, p, each in accesses if io == "store" for a, on in each if on}
    if wide := sorted(p for p, _ in parts if sum(q == p for q, _ in parts) > 1):  # one instance doing more than one
        what = "rows: one row each" if out.dim() == 2 else "blocks of BLOCK elements: one block each"
        raise Wrong(f"{call}: program instance {wide[0]} stored into {sum(q == wide[0] for q, _ in parts)} {what}")
    if again := len(stored := [a for a, on in lanes if on]) - len(set(stored)):  # a round trip, or overlapping lanes
        raise Wrong(f"{call} stored {again} element(s) more than once: a kernel stores each result once")


def _strays(name: str, p: int, lanes: list, tensors: dict, block: int, end: int) -> str:  # what stray lanes show
    rows, t = tensors["out"].dim() == 2, tensors[name]
    test, address = ("cols < n_cols", f"row * {name}_row_stride + cols") if rows else ("offsets < n", "offsets")
    inside = {int(a) for u in tensors.values() for a in _element_addresses(u)}
    stray = [i for i, (a, on) in enumerate(lanes) if on and a not in inside]
    at = [(a - t.data_ptr()) // t.element_size() - p * (t.stride(0) if rows else block) for a, _ in lanes]
    shift = min(at) if sorted(at) == list(range(min(at), min(at) + block)) else None  # its own row or block, moved?
    past = [i for i in stray if p * block * (not rows) + (at[i] if shift == 0 else i) >= end]  # else lane i: place i
    why = f"fails {test}, yet nothing masked it off: mask every load and store with {test}"
    why = why if past else f"passes {test}: its address should be {name}_ptr + {address}, the offsets the mask tests"
    why = f"is in an access off by {shift:+d}: its address should be {name}_ptr + {address}" if shift else why
    why = why if len(lanes) == block else f"is in an access of {len(lanes)} lanes: check its mask and its address"
    return f" Lane {(past or stray)[0]} of program instance {p} is one of them: it {why}"


def _gaps(out: torch.Tensor, missed: torch.Tensor, lanes: list) -> str:  # what store lanes show of missed elements
    places = torch.arange(out._base.numel()).as_strided(out.shape, out.stride(), out.storage_offset())[missed]
    where = set((out._base.data_ptr() + places * out.element_size()).tolist())
    if lanes and where <= {address for address, stored in lanes if not stored}:
        return ": the mask turned off every lane that reached them"
    each = "i must cover the BLOCK elements from i * BLOCK" if missed.dim() == 1 else "r must cover row r"
    unreached = lanes and where.isdisjoint(address for address, _ in lanes)
    return f": no program instance's offsets reach them: instance {each}" * bool(unreached)


#: (n, BLOCK, scale, shift, dtype): a ragged last block; n under one block, a negative scale; whole blocks; BLOCK 4.
_RELU_CASES = ((1000, 256, 1.5, -0.25, "float32"), (100, 128, -2.0, 0.5, "float32"), (3072, 1024, 0.75, 0.1, "float16"))
_RELU_CASES += ((51, 4, 0.5, 1.0, "float32"),)  # odd; a descriptor's block needs 16 bytes
#: (rows, n_cols, row strides of x and out, BLOCK, dtype): ragged; apart; BLOCK far over; scales not whole numbers.
_ROWS_CASES = ((1, 100, 100, 100, 128, "float32"), (3, 128, 160, 136, 128, "int32"), (3, 100, 160, 136, 256, "float16"))
_ROWS_CASES += ((2, 4499, 8200, 8196, 8192, "float32"), (70, 5, 8, 7, 64, "float32"))  # odd; more rows than BLOCK


def _relu_cases(device: str) -> Any:
    for n, block, scale, shift, kind in _RELU_CASES:
        g = torch.Generator().manual_seed(n)  # x's memory runs a block past it: a stray lane lands in no other tensor
        x = torch.cat([torch.randn(n, generator=g), torch.zeros(block)]).to(getattr(torch, kind)).to(device)[:n]
        out = torch.full((n + 2 * block,), _FILL, dtype=x.dtype, device=device)[block : block + n]
        want = (x.cpu().double() * scale + shift).clamp(min=0).to(x.dtype).double()
        label = f"n={n} in blocks of {block} (scale={scale}, shift={shift}, {kind})"
        yield label, (-(-n // block),), block, {"x": x, "out": out}, (n, scale, shift), want


def _rows_cases(device: str) -> Any:
    for rows, cols, x_stride, out_stride, block, kind in _ROWS_CASES:
        g, dtype = torch.Generator().manual_seed(cols), getattr(torch, kind)
        x = torch.cat([torch.randn(rows, x_stride, generator=g) * 4, torch.zeros(1, x_stride)]).to(dtype).to(device)
        x, scale = x[:rows, :cols], (torch.arange(2, rows + 2 + block) * 0.75 + 0.1).to(dtype).to(device)[:rows]
        out = torch.full((rows + 1, out_stride), _FILL, dtype=dtype, device=device)[:rows, :cols]
        want = (x.cpu().double() * scale.cpu().double()[:, None]).to(dtype).double()
        label = f"{rows} row(s) of {cols} {kind}s, {x_stride} apart in x and {out_stride} in out, BLOCK={block}"
        yield label, (rows,), block, {"x": x, "scale": scale, "out": out}, (cols, x_stride, out_stride), want


_least = lambda rows, cols, size, roof: 2 * rows * cols * size / (roof * 1e9)  # x read once, the result written once
_LEAST_CASES = ((8192, 1024, 4, 300.0), (4096, 2048, 2, 1000.0), (100_000, 300, 8, 250.5), (1, 2**20, 1, 900))


def _kernel_context() -> dict[str, Any]:  # names for answers run from strings (tests): kernels interpreted
    os.environ["TRITON_INTERPRET"] = "1"  # triton.language first: it imports triton, interpreted
    return {"torch": torch, "tl": importlib.import_module("triton.language"), "triton": __import__("triton")}


_TEXTS = {
    "relu_affine_kernel": "Write the Triton kernel `relu_affine_kernel`: out[i] = max(x[i] * scale + shift, 0), one "
    "block of BLOCK elements per program instance.\nStart from add_kernel; mask the load and the store: offsets < n.",
    "row_scale_kernel": "Fix `row_scale_kernel` (row r of x times scale[r]): it is right only for packed rows BLOCK "
    "long.\nMask the lanes past n_cols; rows start x_row_stride apart (try torch.randn(3, 160)[:, :100]).",
    "least_seconds": "Write `least_seconds(rows, cols, element_size, roof_gb_per_s)`: the fused softmax's least time."
    "\nBytes moved / bandwidth: x read once, the result written once; GB/s means 10^9 bytes per second.",
}
_CASES = {"relu_affine_kernel": _relu_cases, "row_scale_kernel": _rows_cases}
_LEAST_CHECK = table("least_seconds", "(rows, cols, element_size, roof_gb_per_s)", _LEAST_CASES, _least)
_CHECKS = (partial(_check_kernel, "relu_affine_kernel"), partial(_check_kernel, "row_scale_kernel"), _LEAST_CHECK)
_KERNEL = {"context": _kernel_context, "time_limit": 20.0}  # a kernel's question: Triton's names, its first import
QUESTIONS = questions("13", _TEXTS, _CHECKS, dict.fromkeys(_CASES, _KERNEL))
