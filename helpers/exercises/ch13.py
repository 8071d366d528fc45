"""Chapter 13 exercises: a row kernel from its specification, a kernel to debug, an online softmax's time predicted."""

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
from .cases import Slip, questions, table

_FILL, _ATOMIC = -777, NotImplementedError("the checker follows loads and stores: write it without tl.atomic_*")
_UNDEF = "; a masked load without other= (or padding_option=) left lanes undefined: NaN, ±inf, 9 here"  # _FILL: out
_unwrapped = lambda v: _unwrapped(v.fn) if type(v).__name__ in ("Autotuner", "Heuristics") else v  # the kernel tuned


def _check_kernel(name: str, value: Any) -> None:  # each case interpreted, bounds-checked; then compiled on a GPU
    if isinstance(value, KernelNeedingTriton) or importlib.util.find_spec("triton") is None:
        raise Wrong(triton_advice())
    expect_function(value := _unwrapped(value), name)
    plain = not {"InterpretedFunction", "JITFunction"} & {t.__name__ for t in type(value).__mro__}  # no @triton.jit
    gpu = [(value.__getitem__, "cuda")] if type(value).__name__ == "JITFunction" and torch.cuda.is_available() else []
    for launch, device in [((lambda grid: value) if plain else as_interpreted(value).__getitem__, "cpu"), *gpu]:
        for label, *case in _rows_cases(name, device):  # run as Python, a kernel fails in Triton's words (they vary)
            said = " (compiled, on the GPU)" if device == "cuda" else " (run as Python: no @triton.jit)" * plain
            _launch(launch, f"{name} on {label}{said}", *case)
    if plain:
        raise Wrong(f"`{name}` is a plain Python function, not a Triton kernel: put @triton.jit above its def")


def _launch(launch: Any, call: str, grid: tuple, block: int, tensors: dict, rest: tuple, want: Any) -> None:  # a case
    from triton.runtime.interpreter import TensorHandle, _get_np_dtype
    from triton.runtime.interpreter import interpreter_builder as builder

    out, accesses, undefined, advise = tensors["out"], [], [], "scale" not in tensors  # row_scale_kernel: symptoms

    def watch(io: str, ptrs: Any, *args: Any, **kwargs: Any) -> Any:  # each interpreted access (compiled: none seen)
        on = np.asarray(args[io == "store"].data, dtype=bool).ravel().tolist()  # load(ptrs, mask, ...), store(.., mask)
        accesses.append((io, builder.grid_idx[0], list(zip(ptrs.data.ravel().tolist(), on, strict=True))))
        if io == "load" and args[1] is None and (kind := ptrs.get_element_ty()).name in ("fp16", "fp32", "fp64"):
            j = TensorHandle(np.resize([np.nan, np.inf, -np.inf, 9], ptrs.data.shape).astype(_get_np_dtype(kind)), kind)
            undefined.append(args := (args[0], j, *args[2:]))  # j: junk
        return do[io](ptrs, *args, **kwargs)

    try:
        with bounds_checked(**tensors) if out.is_cpu else contextlib.nullcontext():  # each access checked after watch
            do = {io: getattr(builder, f"create_masked_{io}") for io in ("load", "store")}  # bounds_checked's
            atomics = {f: mock.Mock(side_effect=_ATOMIC) for f in dir(builder) if f.startswith("create_atomic")}
            with mock.patch.multiple(builder, **atomics, **{f"create_masked_{io}": partial(watch, io) for io in do}):
                launch(grid)(*tensors.values(), *rest, BLOCK=block)
        torch.cuda.synchronize() if out.is_cuda else None
    except Exception as exc:
        cause = exc.__cause__ or exc
        if isinstance(cause, OutOfBounds):
            said = _strays(cause.tensor, *accesses[-1][1:], tensors, block, rest[0]) if advise else ""
            raise Wrong(f"{call}: {str(cause).replace(' given: ', ' given; the lowest lies ')}.{said}") from None
        raise Wrong(f"{call} raised {type(cause).__name__}: {first_line(cause)}") from None
    if stray := int((out._base != _FILL).sum() - (out != _FILL).sum()):  # out lies in a buffer that must not change
        raise Wrong(f"{call} wrote {stray} element(s) outside out, in the memory around it")
    got, tol = out.cpu().double(), 5e-3 if out.dtype == torch.float16 else 1e-5 if out.dtype.is_floating_point else 0
    lanes, loads = ([lane for io, _, each in accesses if io == kind for lane in each] for kind in ("store", "load"))
    xs, outs = (set(_element_addresses(tensors[name]).tolist()) for name in ("x", "out"))  # (address, on) above
    if into := sum(a not in outs for a, on in lanes if on):  # x or scale, whether its values changed or not
        raise Wrong(f"{call} stored {into} element(s) into an input, not out: a kernel should write into out only")
    if bool((wrong := ~torch.isclose(got, want, rtol=tol, atol=tol)).any()):
        at, missed = tuple(wrong.nonzero()[0].tolist()), got == _FILL
        more = f", nor are {int(missed.sum()) - 1} more" * bool(missed.sum() > 1)
        seen = f"never written{more}" if missed[at] else f"{float(got[at]):.{7 if tol else 12}g}"  # integers: all
        why = _gaps(out, missed, lanes) if missed[at] and advise else _UNDEF * bool(undefined and ~got[at].isfinite())
        seen += f"; expected {float(want[at]):.{7 if tol else 12}g} ({f'within {tol:g}' if tol else 'exactly'}){why}"
        raise Wrong(f"{call}: out[{', '.join(map(str, at))}] is {seen}")
    if (most := max((len(each) for _, _, each in accesses), default=0)) > block:  # a width other than BLOCK
        raise Wrong(f"{call}: one access of a program instance had {most} lanes, more than BLOCK ({block})")
    width = out.element_size() * out.stride(0)  # a row's bytes apart
    parts = {(p, (a - out.data_ptr()) // width) for io, p, each in accesses if io == "store" for a, on in each if on}
    if wide := sorted((p, n) for p, _ in parts if (n := sum(q == p for q, _ in parts)) > 1):  # more than one row
        raise Wrong(f"{call}: program instance {wide[0][0]} stored into {wide[0][1]} rows: one row each")
    if again := len(stored := [a for a, on in lanes if on]) - len(set(stored)):  # a round trip, or overlapping lanes
        raise Wrong(f"{call} made {again} repeated store(s) to out's elements: a kernel stores each result once")
    if read := sum(a in outs for a, on in loads if on):  # torch.empty's out may hold NaN: out * 0 is not 0
        raise Wrong(f"{call} loaded {read} element(s) of out: only store into out (print a value before its store)")
    if advise and (again := len(in_x := [a for a, on in loads if on and a in xs]) - len(set(in_x))):  # Q1: x once
        raise Wrong(f"{call} made {again} repeated load(s) of x's elements: load the row once, lanes past it masked")


def _strays(name: str, p: int, lanes: list, tensors: dict, block: int, end: int) -> str:  # what stray lanes show
    t, test, address = tensors[name], "cols < n_cols", f"tl.program_id(0) * {name}_row_stride + cols"
    inside = {int(a) for u in tensors.values() for a in _element_addresses(u)}
    stray = [i for i, (a, on) in enumerate(lanes) if on and a not in inside]
    at = [(a - t.data_ptr()) // t.element_size() - p * t.stride(0) for a, _ in lanes]
    shift = min(at) if sorted(at) == list(range(min(at), min(at) + block)) else None  # its own row or block, moved?
    past = [i for i in stray if (at[i] if shift == 0 else i) >= end]  # else lane i: place i
    why = f"fails {test}, yet the access's mask (if any) let it through: mask every load and store with {test}"
    why = why if past else f"passes {test}: its address should be {name}_ptr + {address}, the offsets the mask tests"
    why = f"is in an access off by {shift:+d}: its address should be {name}_ptr + {address}" if shift else why
    why = why if len(lanes) == block else f"is in an access of {len(lanes)} lanes: check its mask and its address"
    return f" Lane {(past or stray)[0]} of program instance {p} is one of them: it {why}"


def _gaps(out: torch.Tensor, missed: torch.Tensor, lanes: list) -> str:  # what store lanes show of missed elements
    where = set(_element_addresses(out)[missed.flatten().numpy()].tolist())  # row by row, as missed is
    if lanes and where <= {address for address, stored in lanes if not stored}:
        return ": the mask turned off every lane that reached them"
    unreached = lanes and where.isdisjoint(address for address, _ in lanes)
    return ": no program instance's offsets reach them: instance r must cover row r" * bool(unreached)


#: (rows, n_cols, row strides of x and out, BLOCK, dtype): ragged; apart; BLOCK far over; scales -1.5 to 4.5 by 1.5.
_ROWS_CASES = ((1, 100, 100, 100, 128, "float32"), (3, 128, 160, 136, 128, "int32"), (3, 100, 160, 136, 256, "float16"))
_ROWS_CASES += ((2, 4499, 8200, 8196, 8192, "float32"), (70, 5, 8, 7, 64, "float32"), (5, 1, 4, 2, 64, "float32"))
_ROWS_CASES += ((2, 3000, 3008, 3000, 4096, "float16"), (4, 40, 44, 40, 64, "float32"))  # sums past 65,504; zeros


def _rows_cases(name: str, device: str) -> Any:  # row_centre_kernel's: float rows, no scale
    for rows, cols, x_stride, out_stride, block, kind in _ROWS_CASES:
        centre, g, lift = name == "row_centre_kernel", torch.Generator().manual_seed(cols), 40.0 * (cols == 3000)
        dtype = getattr(torch, kind := "float32" if centre and kind == "int32" else kind)
        x = torch.cat([torch.randn(rows, x_stride, generator=g) * 4 + lift, torch.zeros(1, x_stride)]).to(dtype)
        x = x.round() if cols == 40 else x + (2**24 + 1) * (kind == "int32")  # with 0s; ints float32 rounds
        x64, scale = x[:rows, :cols].double(), (torch.arange(2, rows + 2 + block) % 5 * 1.5 - 1.5).to(dtype)[:rows]
        want = (x64 - x64.mean(1, keepdim=True) if centre else x64 * scale.double()[:, None]).to(dtype).double()
        out = torch.full((rows + 1, out_stride), _FILL, dtype=dtype, device=device)[:rows, :cols]
        label = f"{rows} row(s) of {cols} {kind}s, {x_stride} apart in x and {out_stride} in out, BLOCK={block}"
        tensors = {"x": x.to(device)[:rows, :cols]} | ({} if centre else {"scale": scale.to(device)}) | {"out": out}
        yield label, (rows,), block, tensors, (cols, x_stride, out_stride), want


_walks = lambda rows, cols, size, roof: 3 * rows * cols * size / (roof * 1e9)  # x read twice, the result written once
_WALK_CASES = ((8192, 1024, 4, 300.0), (4096, 2048, 2, 1000.0), (100_000, 300, 8, 250.5), (1, 2**20, 1, 900))


def _kernel_context() -> dict[str, Any]:  # names for answers run from strings (tests): kernels interpreted
    os.environ["TRITON_INTERPRET"] = "1"  # @triton.jit reads it: a kernel from a string has no file to compile from
    return {"torch": torch, "tl": importlib.import_module("triton.language"), "triton": __import__("triton")}


_TEXTS = {
    "row_centre_kernel": "Write `row_centre_kernel`: out[r, c] = x[r, c] minus row r's mean, one row per instance."
    "\nMask with cols < n_cols, masked lanes loaded as other=0.0; divide by n_cols; 16-bit rows: sum in float32.",
    "row_scale_kernel": "Debug `row_scale_kernel` (row r times scale[r]): find inputs it gets wrong and why; fix it."
    "\nRun it under bounds_checked on rows shorter than BLOCK, then on rows apart: torch.randn(3, 160)[:, :100].",
    "predicted_seconds": "Write `predicted_seconds(rows, cols, element_size, roof_gb_per_s)`: the online softmax's time"
    " if all its bytes cross memory.\nIt reads each row twice and writes it once; GB/s means 10^9 bytes per second.",
}
_SLIPS = [Slip(lambda *c: _walks(*c) * 2 / 3, "two passes counted: the online softmax reads x twice, then writes")]
_WALKS = table("predicted_seconds", "(rows, cols, element_size, roof_gb_per_s)", _WALK_CASES, _walks, slips=_SLIPS)
_CHECKS = (partial(_check_kernel, "row_centre_kernel"), partial(_check_kernel, "row_scale_kernel"), _WALKS)
_KERNEL = {"context": _kernel_context, "time_limit": 20.0}  # a kernel's question: Triton's names, its first import
QUESTIONS = questions("13", _TEXTS, _CHECKS, dict.fromkeys(("row_centre_kernel", "row_scale_kernel"), _KERNEL))
