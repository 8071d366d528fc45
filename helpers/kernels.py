"""Chapter 13's harness: where Triton runs, interpreted copies of kernels, a bounds check for the interpreter (which
reads and writes raw addresses, `_interpreter.load` and `store`, so a missing mask is as silent as on a GPU: it wraps
the masked load and store every `tl.load` and `tl.store` goes through in Triton 3.6 to 3.9), and what Inductor wrote.
Where Triton is missing, `helpers.standins.missing_triton` keeps kernel definitions running."""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from typing import Any
from unittest import mock

import torch


def triton_advice() -> str:
    """What to do when `import triton` failed: what to install, or where to run the chapter instead."""
    if sys.platform.startswith("linux"):
        return (
            "Triton is not installed. On Linux: `pip install triton` (a CUDA build of torch brings the release it "
            "pins; for a CPU-only torch 2.13 that is `pip install triton==3.7.1`), then restart the kernel. Or run "
            "this chapter on Kaggle (Settings → Accelerator → GPU T4 ×2), where Triton comes with torch."
        )
    return (
        f"Triton has no wheels for this system ({sys.platform}): it runs on Linux only. Run this chapter on Kaggle "
        "(Settings → Accelerator → GPU T4 ×2) or on Linux; here the cells that launch kernels say so."
    )


def as_interpreted(kernel: Any) -> Any:
    """An interpreted copy of `kernel` that interprets the `@triton.jit` functions it calls too (`tl.zeros`, `tl.sum`,
    its own): imported before `TRITON_INTERPRET=1` was set they are compiled, even under an interpreted kernel, and
    calling one raises "Cannot call @triton.jit'd outside of the scope of a kernel" (Triton 3.6 to 3.9). Such a call
    patches `triton.language.core` and never restores it (3.6 to 3.9), which breaks every compile after: undone here."""
    from triton.runtime import JITFunction, interpreter

    def interpret(jitted: Any, *args: Any, **kwargs: Any) -> Any:
        scope = interpreter._patch_lang(jitted.fn)  # the same patches the call makes, so restoring undoes both
        try:
            return interpreter.InterpretedFunction(jitted.fn)(*args, **kwargs)
        finally:
            scope.restore()

    class Interpreted(interpreter.InterpretedFunction):
        def run(self, *args: Any, **kwargs: Any) -> Any:
            with mock.patch.object(JITFunction, "__call__", interpret):
                return super().run(*args, **kwargs)

    return Interpreted(kernel.fn)


class OutOfBounds(IndexError):
    """An interpreted kernel's `access` ("load" or "store") of an element of none of the tensors it was given: `tensor`
    the one the first bad address came nearest to, `kind` where: "past" its end, "before" its start, or in a "gap"."""

    def __init__(self, message: str, access: str, tensor: str, kind: str) -> None:
        super().__init__(message)
        self.access, self.tensor, self.kind = access, tensor, kind


def _element_addresses(t: torch.Tensor) -> Any:
    """The byte address of every element of the CPU tensor `t` (a view's gaps left out), sorted, as numpy uint64."""
    import numpy as np

    offsets = torch.zeros((), dtype=torch.int64)
    for size, stride in zip(t.shape, t.stride(), strict=True):
        offsets = offsets.unsqueeze(-1) + torch.arange(size, dtype=torch.int64) * stride
    return np.sort(t.data_ptr() + offsets.reshape(-1).numpy().astype(np.uint64) * np.uint64(t.element_size()))


@contextlib.contextmanager
def bounds_checked(**tensors: torch.Tensor) -> Iterator[None]:
    """Check every load and store of an interpreted kernel against the elements of `tensors` (CPU tensors); only
    those a mask lets through, as on a GPU. Raises `OutOfBounds` from inside the launch (Triton wraps it in its
    `InterpreterError`) at the first access outside every tensor. Nested, only the innermost block checks."""
    import numpy as np
    from triton.runtime import interpreter

    valid = {name: _element_addresses(t) for name, t in tensors.items()}
    every_element = np.concatenate([np.empty(0, dtype=np.uint64), *valid.values()])
    builder = interpreter.interpreter_builder

    def check(access: str, ptrs: Any, mask: Any) -> None:
        wanted = np.asarray(ptrs.data, dtype=np.uint64)[np.asarray(mask.data, dtype=bool)]
        inside = np.isin(wanted, every_element)
        if not inside.all():
            name, kind, where = _nearest(int(wanted[~inside].min()))
            message = f"a {access} of {int((~inside).sum())} element(s) outside every tensor given: {where}"
            raise OutOfBounds(message, access, name, kind)

    def _nearest(address: int) -> tuple[str, str, str]:
        """(tensor, kind, words) for the tensor that `address` came nearest to (the first, on a tie)."""
        candidates = []
        for name, t in tensors.items():
            start, size = t.data_ptr(), t.element_size()
            end = int(valid[name][-1]) + size if len(valid[name]) else start
            if address >= end:
                away = (address - end) // size + 1
                found = (away, name, "past", f"{away} element(s) past the end of {name}")
            elif address < start:
                away = (start - address + size - 1) // size
                found = (away, name, "before", f"{away} element(s) before the start of {name}")
            else:
                found = (0, name, "gap", f"inside {name}'s memory but not one of its elements (a gap between rows)")
            candidates.append(found)
        return min(candidates, key=lambda c: c[0])[1:]

    load, store = (getattr(type(builder), f"create_masked_{io}").__get__(builder) for io in ("load", "store"))  # bare
    checked_load = lambda p, m, *a, **k: check("load", p, m) or load(p, m, *a, **k)  # noqa: E731
    checked_store = lambda p, v, m, *a, **k: check("store", p, m) or store(p, v, m, *a, **k)  # noqa: E731

    with (
        mock.patch.object(builder, "create_masked_load", checked_load),
        mock.patch.object(builder, "create_masked_store", checked_store),
    ):
        yield


def output_code_path(log_text: str) -> str | None:
    """The file named in the log of `set_logs(output_code=True)` (the newest "Output code written to: PATH", logged
    after compiling and on a cache hit alike: `torch/_inductor/graph.py`, `codecache.py`, torch 2.10-2.15), or None."""
    paths = re.findall(r"Output code written to: (\S+\.py)", log_text)
    return paths[-1] if paths else None


def kernels_in(code: str) -> dict[str, str]:
    """Inductor's kernels, {name: source}: the C++ or Triton handed to `async_compile.cpp_pybinding` or `.triton`."""
    kernel = r"^(\w+) = async_compile\.\w+\((.*?)(?:r|)'''\n(.*?)\n'''"
    return {match.group(1): match.group(3) for match in re.finditer(kernel, code, re.M | re.S)}
