"""Chapter 03 exercises: copy_ into an existing buffer, one copy instead of many, one read instead of many.

Each is tried with its tensors on the host, where values are compared, and on the meta device, which plays a
GPU (chapter 02's `Watch`): there the copies to it and the reads from it are counted.
"""

from __future__ import annotations

from collections import Counter
from itertools import product
from typing import Any

import torch

from ..checking import Question, Wrong, expect_type
from . import cases
from .calls import Call
from .cases import Slip, show, table
from .ch02 import described, run, same

F16, F32, F64, I64 = torch.float16, torch.float32, torch.float64, torch.int64
#: How the calls whose names say less are written.
_SPELLED = {"__repr__": "print()", "__str__": "print()", "__format__": "an f-string", "__setitem__": "x[i] = ..."}


def _spelled(calls: list[Call]) -> str:
    """The calls as a learner writes them, counted: `4 × .item()`, `.cpu()`."""
    spelled = (_SPELLED.get(c.name) or (f"{c.label}()" if c.label.startswith("torch.") else c.written) for c in calls)
    return ", ".join(f"{n} × {s}" if n > 1 else s for s, n in Counter(spelled).items())


def _values(count: int, width: int, dtype: torch.dtype) -> list[torch.Tensor]:
    """`count` tensors of `width` random values (0-d for no width), the same for a given count."""
    values = torch.randn(count, width or 1, generator=torch.Generator().manual_seed(count)).mul(8).to(dtype)
    return list((values if width else values[:, 0]).unbind(0))


#: (rows, width, the tensors' dtype, the buffer's dtype): one row and several, a buffer of another dtype.
_FILLS = ((4, 3, F32, F32), (3, 5, I64, I64), (2, 4, F16, F32), (1, 2, F32, F32))


def _check_fill_rows(fn: Any) -> None:
    for (rows, width, dtype, kind), device in product(_FILLS, ("cpu", "meta")):
        buffer, sent = torch.full((rows, width), 7, dtype=kind), _values(rows, width, dtype)
        memory = buffer.data_ptr()
        log, _, got, call = run(fn, "fill_rows", "(buffer, tensors)", (buffer, (sent, device)))
        if got is not buffer or buffer.data_ptr() != memory:
            what = "gave buffer new memory" if got is buffer else f"returned {described(got)}, not buffer"
            raise Wrong(f"{call} {what}: copy each tensor into its row of buffer (row.copy_(t)), and return buffer")
        if not same(buffer, want := torch.stack(sent).to(kind), "cpu", not log.reads):
            raise Wrong(f"{call} left buffer as {described(buffer)}; expected {described(want)}")


#: (pieces, width, dtype), moved host → host (the values compared), host → device and device → host.
_MOVES = [*product(((3, 4, F32), (5, 2, I64), (1, 3, F16)), (("cpu", "cpu"), ("cpu", "meta"), ("meta", "cpu")))]


def _check_in_one_copy(fn: Any) -> None:
    for (count, width, dtype), (home, device) in _MOVES:
        sent = _values(count, width, dtype)
        log, _, got, call = run(fn, "in_one_copy", "(pieces, device)", ((sent, home), torch.device(device)))
        got = expect_type(got, list, f"{call} to return a list of tensors")
        if not same(got, sent, device, not log.reads):
            raise Wrong(f"{call} returned {described(got, not log.reads)}; expected {described(sent, True, device)}")
        made = [  # torch.tensor(data, device=...) copies host data too
            c
            for c in log.calls
            if c.name in ("tensor", "as_tensor")
            and getattr(c.result, "device", None) == torch.device("meta")
            and all(c is not k for k in log.copies_in)
        ]
        copies = log.copies_in + log.reads + made
        if len(copies) > 1:
            raise Wrong(
                f"{call} copied {len(copies)} times between host and device ({_spelled(copies)}): join the pieces "
                "(torch.cat), copy them once, and split them on the other side"
            )


#: (losses, dtype): one loss and several, in three dtypes.
_LOSSES = [*product(((4, F32), (6, F16), (1, F64)), ("cpu", "meta"))]


def _check_losses_to_floats(fn: Any) -> None:
    for (count, dtype), device in _LOSSES:
        sent = _values(count, 0, dtype)
        log, _, got, call = run(fn, "losses_to_floats", "(losses)", ((sent, device),))
        got, want = expect_type(got, list, f"{call} to return a list of Python floats"), [v.item() for v in sent]
        floats = len(got) == count and all(isinstance(v, float) for v in got)
        if not floats or not (log.reads or cases.same(got, want)):
            said = show(got) if not log.reads else f"{len(got)} values"
            raise Wrong(f"{call} returned {said}; expected the Python floats {show(want)}")
        if len(log.reads) > 1:
            raise Wrong(
                f"{call} read values from the device {len(log.reads)} times ({_spelled(log.reads)}), and each read "
                "waits for the GPU: stack the losses on the device and read them once"
            )


def _seconds(n: float, copies: float, gb: float, each: float) -> float:
    return copies * each + n / (gb * 1e9)


#: (bytes, copies, GB/s, seconds per copy): large and small pieces, fast and slow links, bytes that do not divide.
_check_predict_seconds = table(
    "predict_seconds",
    "(nbytes, pieces, gb_per_s, per_copy_s)",
    [(64 * 2**20, 1, 12.0, 10e-6), (64 * 2**20, 16_384, 12, 1e-5), (4 * 2**20, 1_024, 3.0, 2e-6), (12_345, 7, 0.5, 0)],
    _seconds,
    slips=(
        Slip(lambda n, p, gb, c: n / (gb * 1e9), "the per-copy cost is missing: each copy pays per_copy_s"),
        Slip(lambda n, p, gb, c: c + n / (gb * 1e9), "per_copy_s is paid once per copy, not once in all"),
        Slip(lambda n, p, gb, c: p * c + n / (gb * 2**30), "GB/s here means 10^9 bytes a second, not 2^30"),
        Slip(lambda n, p, gb, c: p * c + n / p / (gb * 1e9), "every byte crosses the link, not only one piece's"),
        Slip(lambda *case: 1e3 * _seconds(*case), "that looks like milliseconds; return seconds"),
    ),
)

_NAMES = ("fill_rows", "in_one_copy", "losses_to_floats", "predict_seconds")
_CHECKS = (_check_fill_rows, _check_in_one_copy, _check_losses_to_floats, _check_predict_seconds)
_TASKS = (
    "Write `fill_rows(buffer, tensors)`: copy each 1-D tensor of the non-empty list `tensors` (which may live on a "
    "GPU) into its row of `buffer`, an existing 2-D host tensor, allocating no new buffer, and return `buffer`.",
    "Write `in_one_copy(pieces, device)`: move a non-empty list of equally long 1-D tensors to `device` in one "
    "copy and return the list of moved pieces.",
    "Write `losses_to_floats(losses)`: turn a non-empty list of 0-dimensional loss tensors into a list of Python "
    "floats, reading the values from the device only once.",
    "Write `predict_seconds(nbytes, pieces, gb_per_s, per_copy_s)`: the seconds it takes to move `nbytes` as "
    "`pieces` equal copies over a link of `gb_per_s` GB/s (10^9 bytes a second) that also costs `per_copy_s` "
    "seconds per copy.",
)
_HINTS = (
    "Iterating over a 2-D tensor gives its rows as views; row.copy_(t) writes t's values into that row of the "
    "buffer, across devices too.",
    "torch.cat joins the pieces; .to(device) moves the joined tensor once; .split or .chunk cuts it again into views.",
    "torch.stack makes one tensor of the list (on the device); one .tolist() (or one .cpu()) then brings them all "
    "to the host.",
    "Two terms: what the copies cost whatever their size (pieces × per_copy_s), and what the bytes cost on the "
    "link (nbytes ÷ (gb_per_s × 10^9)).",
)
QUESTIONS = [Question(n + 1, *q, chapter="03") for n, q in enumerate(zip(_TASKS, _NAMES, _CHECKS, _HINTS, strict=True))]
