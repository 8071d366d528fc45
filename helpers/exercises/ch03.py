"""Chapter 03 exercises: copy_ into an existing buffer, one copy instead of many, one read instead of many.

Each is tried with its tensors on the host, where values are compared, and on the meta device, which plays a
GPU (chapter 02's `Watch`): there the copies to it and the reads from it are counted."""

from __future__ import annotations

from itertools import product
from typing import Any

import torch

from ..answers import Wrong, expect_type
from ..checking import Question
from . import cases
from .cases import Slip, show, table
from .ch02 import described, in_place, run, same, spelled

F16, F32, F64, I64 = torch.float16, torch.float32, torch.float64, torch.int64


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
        seen = not log.reads  # else the values are the meta stand-in's
        if got is not buffer or buffer.data_ptr() != memory:
            what = "gave buffer new memory" if got is buffer else f"returned {described(got, seen)}, not buffer"
            raise Wrong(f"{call} {what}: copy each tensor into its row of buffer (row.copy_(t)), and return buffer")
        aside = [c for c in log.reads if not in_place(c) or c.args[0].untyped_storage().data_ptr() != memory]
        if aside or len(log.reads) > rows:  # each read waits for the GPU; one aside reads or copies on the host
            what = f"took values to the host first ({spelled(aside)})" if aside else f"copied {len(log.reads)} times"
            raise Wrong(f"{call} {what}: copy each tensor straight into its row (row.copy_(t)), one copy a row")
        if not same(buffer, want := torch.stack(sent).to(kind), "cpu", seen):
            raise Wrong(f"{call} left buffer as {described(buffer, seen)}; expected {described(want)}")


#: (pieces, width, dtype), moved host → host (the values compared), host → device and device → host.
_MOVES = [*product(((3, 4, F32), (5, 2, I64), (1, 3, F16)), (("cpu", "cpu"), ("cpu", "meta"), ("meta", "cpu")))]


def _check_in_one_copy(fn: Any) -> None:
    for (count, width, dtype), (home, device) in _MOVES:
        sent = _values(count, width, dtype)
        log, _, got, call = run(fn, "in_one_copy", "(pieces, device)", ((sent, home), torch.device(device)))
        got = expect_type(got, list, f"{call} to return a list of tensors")
        if not same(got, sent, device, not log.reads):
            raise Wrong(f"{call} returned {described(got, not log.reads)}; expected {described(sent, True, device)}")
        made = [c for c in log.calls if c.name in ("tensor", "as_tensor") and getattr(c.result, "is_meta", False)]
        copies = log.copies_in + log.reads + [c for c in made if all(c is not k for k in log.copies_in)]  # data sent
        if len(copies) > 1:
            raise Wrong(
                f"{call} copied {len(copies)} times between host and device ({spelled(copies)}): join the pieces "
                "(torch.cat), copy them once, and split them on the other side"
            )


#: (losses, dtype, whether they require grad, as a training step's do): one loss and several, in three dtypes.
_LOSSES = [*product(((4, F32, False), (6, F16, False), (1, F64, False), (3, F32, True)), ("cpu", "meta"))]


def _check_losses_to_floats(fn: Any) -> None:
    for (count, dtype, grad), device in _LOSSES:
        sent = list(torch.stack(_values(count, 0, dtype)).requires_grad_(grad).unbind())
        log, _, got, call = run(fn, "losses_to_floats", "(losses)", ((sent, device),))
        got, want = expect_type(got, list, f"{call} to return a list of Python floats"), [v.item() for v in sent]
        floats = len(got) == count and all(isinstance(v, float) for v in got)
        if not floats or not (log.reads or cases.same(got, want)):
            said = show(got) if not log.reads else f"{len(got)} values"
            raise Wrong(f"{call} returned {said}; expected the Python floats {show(want)}")
        if len(log.reads) > 1:
            raise Wrong(
                f"{call} read values from the device {len(log.reads)} times ({spelled(log.reads)}), and each read "
                "waits for the GPU: stack the losses on the device and read them once"
            )


#: (bytes, copies, GB/s, s a copy): copies dearer than their bytes first, one copy, small pieces, odd bytes.
_check_predict_seconds = table(
    "predict_seconds",
    "(nbytes, pieces, gb_per_s, per_copy_s)",
    [(64 * 2**20, 16_384, 12, 1e-5), (64 * 2**20, 1, 12.0, 10e-6), (4 * 2**20, 1_024, 3.0, 2e-6), (12_345, 7, 0.5, 0)],
    lambda n, p, gb, c: p * c + n / (gb * 1e9),
    slips=(
        Slip(lambda n, p, gb, c: n / (gb * 1e9), "the per-copy cost is missing: each copy pays per_copy_s"),
        Slip(lambda n, p, gb, c: c + n / (gb * 1e9), "per_copy_s is paid once per copy, not once in all"),
        Slip(lambda n, p, gb, c: p * c + n / (gb * 2**30), "GB/s here means 10^9 bytes a second, not 2^30"),
        Slip(lambda n, p, gb, c: p * c + n / p / (gb * 1e9), "every byte crosses the link, not only one piece's"),
        Slip(lambda n, p, gb, c: 1e3 * (p * c + n / (gb * 1e9)), "that looks like milliseconds; return seconds"),
        Slip(lambda n, p, gb, c: max(p * c, n / (gb * 1e9)), "that is the larger term alone: the two costs add up"),
        Slip(lambda n, p, gb, c: p * c + 8 * n / (gb * 1e9), "GB/s counts bytes, as nbytes does: no × 8 for bits"),
        Slip(lambda n, p, gb, c: p * c + n / gb, "gb_per_s is in 10^9 bytes a second: divide by gb_per_s × 1e9"),
        Slip(lambda n, p, gb, c: p * (c + n // p / (gb * 1e9)), "nbytes // pieces drops the bytes that do not divide"),
    ),
)

_NAMES = ("fill_rows", "in_one_copy", "losses_to_floats", "predict_seconds")
_CHECKS = (_check_fill_rows, _check_in_one_copy, _check_losses_to_floats, _check_predict_seconds)
_TASKS = (
    "Write `fill_rows(buffer, tensors)`: copy each 1-D tensor of the non-empty list `tensors` (maybe on a GPU) "
    "straight into its row of `buffer`, an existing 2-D host tensor, allocating no new buffer, and return `buffer`.",
    "Write `in_one_copy(pieces, device)`: move a non-empty list of 1-D tensors of one dtype and one length (at "
    "least 1) to `device` in one copy and return the list of moved pieces.",
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
