"""Chapter 03 exercises: copy_ into a buffer, one copy instead of many, one read instead of many (meta plays a GPU)."""

from functools import partial
from itertools import product
from typing import Any

import torch

from ..answers import Wrong, expect_type
from ..checking import Question
from .cases import Slip, show, table
from .ch02 import described, host, in_place, run, same, spelled

F16, F32, F64, I64, B16 = torch.float16, torch.float32, torch.float64, torch.int64, torch.bfloat16
#: `n` tensors of `w` random values (0-d for no width), the same for a given `n`.
_values = lambda n, w, t: [*torch.randn((n, w) if w else (n,), generator=torch.Generator().manual_seed(n)).mul(8).to(t)]
_mem = lambda t: host(t).untyped_storage().data_ptr() if torch.is_tensor(t) else t and _mem(t[0]) if _seq(t) else None
_seq = lambda t: isinstance(t, list | tuple)  # _mem of a list of tensors (torch._foreach_copy_): the first's
_FILLS = ((4, 3, F32, F32), (3, 5, I64, I64), (2, 4, F16, F32), (1, 1, F32, F32))  # rows, width, dtype, buffer's
_MOVES = [*product(((3, 4, F32), (5, 2, I64), (1, 3, F16)), product(("cpu", "meta"), repeat=2))]  # host ⇄ device
#: losses_to_floats: (losses, dtype, whether they require grad); values in thirds, which float32 cannot hold exactly.
_LOSSES = [*product(((4, F32, 0), (6, F16, 0), (2, F64, 0), (3, F32, 1), (1, B16, 0)), ("cpu", "meta"))]


def _check_fill_rows(fn: Any) -> None:
    for (rows, width, dtype, kind), device in product(_FILLS, ("cpu", "meta")):
        buffer, sent = torch.full((rows, width), 7, dtype=kind), _values(rows, width, dtype)
        memory = _mem(buffer)
        log, _, got, call = run(fn, "fill_rows", "(buffer, tensors)", (buffer, (sent, device)))
        if got is not buffer and _mem(got) == _mem(buffer) == memory:
            raise Wrong(f"{call} returned a view of buffer, {described(got)}: return buffer itself, not a view")
        if got is not buffer or _mem(buffer) != memory:
            raise Wrong(f"{call} returned {described(got)}, not buffer filled in its own memory: copy into its rows")
        aside = [c for c in log.reads if not in_place(c) or _mem(c.args[0]) != memory]  # a read on the host
        made = [c for c in log.calls if getattr(c.result, "is_meta", 0) and _mem(c.result) not in map(_mem, c.args)]
        if aside or made or len(log.reads) > rows:  # each read waits for the GPU
            what = f"took values to the host first ({spelled(aside)})" if aside else f"copied {len(log.reads)} times"
            what = f"made a new tensor on the device first ({spelled(made)})" if made and not aside else what
            raise Wrong(f"{call} {what}: copy each tensor straight into its row (row.copy_(t)), one copy a row")
        if not same(buffer, want := torch.stack(sent).to(kind), "cpu"):
            raise Wrong(f"{call} left buffer as {described(buffer)}; expected {described(want)}")


def _check_in_one_copy(fn: Any) -> None:
    for (count, width, dtype), (home, device) in _MOVES:
        sent = _values(count, width, dtype)
        log, _, got, call = run(fn, "in_one_copy", "(pieces, device)", ((sent, home), torch.device(device)))
        got = expect_type(got, list, f"{call} to return a list of tensors")
        made = [c for c in log.calls if c.name in ("tensor", "as_tensor") and getattr(c.result, "is_meta", False)]
        copies = [*log.copies_in, *log.reads, *(c for c in made if all(c is not k for k in log.copies_in))]  # sent
        if (n := len(copies)) > 1:
            raise Wrong(f"{call} copied {n} times between host and device ({spelled(copies)}): join, copy once, split")
        if not same(got, sent, device):  # the first piece that differs
            at = next((i for i, (g, w) in enumerate(zip(got, sent, strict=False)) if not same(g, w, device)), 0)
            raise Wrong(f"{call} returned {described(got, at=at)}; expected {described(sent, device, at)}")


def _check_losses_to_floats(fn: Any) -> None:
    for (count, dtype, grad), device in _LOSSES:
        sent = list(torch.stack(_values(count, 0, F64)).div(3).to(dtype).requires_grad_(bool(grad)).unbind())
        log, _, got, call = run(fn, "losses_to_floats", "(losses)", ((sent, device),))
        got, want = expect_type(got, list, f"{call} to return a list of Python floats"), [v.item() for v in sent]
        if (n := len(log.reads)) > 1:
            raise Wrong(f"{call} read the device {n} times ({spelled(log.reads)}), each a wait: stack, then read once")
        if repr(got) != repr(want):  # exactly, as Python floats: a float64 loss keeps every digit
            said = (show(got), show(want)) if show(got) != show(want) else (repr(got), repr(want))
            rounded = repr(got) == repr(torch.tensor(want, dtype=F32).tolist())  # Python floats, float32's values
            why = ": float32's roundings of them; keep their dtype" * rounded
            raise Wrong(f"{call} returned {said[0]}; expected the Python floats {said[1]}{why}")


#: (bytes, copies, GB/s, s a copy): copies dearer than their bytes first, one copy, small pieces, odd bytes.
_SECONDS = [(2**26, 16_384, 12, 1e-5), (2**26, 1, 12.0, 10e-6), (2**22, 1_024, 3.0, 2e-6), (12_345, 7, 0.5, 0)]
_SLIPS = (
    Slip(lambda n, p, gb, c: n / (gb * 1e9), "the per-copy cost is missing: each copy pays per_copy_s"),
    Slip(lambda n, p, gb, c: c + n / (gb * 1e9), "per_copy_s is paid once per copy, not once in all"),
    Slip(lambda n, p, gb, c: p * c + n / (gb * 2**30), "GB/s here means 10^9 bytes a second, not 2^30"),
    Slip(lambda n, p, gb, c: p * c + n / p / (gb * 1e9), "every byte crosses the link, not only one piece's"),
    Slip(lambda n, p, gb, c: 1e3 * (p * c + n / (gb * 1e9)), "that looks like milliseconds; return seconds"),
    Slip(lambda n, p, gb, c: max(p * c, n / (gb * 1e9)), "that is the larger term alone: the two costs add up"),
    Slip(lambda n, p, gb, c: p * c + 8 * n / (gb * 1e9), "GB/s counts bytes, as nbytes does: no × 8 for bits"),
    Slip(lambda n, p, gb, c: p * c + n / gb, "gb_per_s is in 10^9 bytes a second: divide by gb_per_s × 1e9"),
    Slip(lambda n, p, gb, c: p * (c + n // p / (gb * 1e9)), "nbytes // pieces drops the bytes that do not divide"),
    Slip(lambda n, p, gb, c: p * (c + n / (gb * 1e9)), "each copy moves nbytes / pieces, not all nbytes"),
    Slip(lambda n, p, gb, c: (p - 1) * c + n / (gb * 1e9), "every copy pays per_copy_s, the first one too"),
    Slip(lambda n, p, gb, c: p * c + gb * 1e9 / n, "the bytes take nbytes / (gb_per_s × 1e9) seconds, not its inverse"),
    Slip(lambda n, p, gb, c: p * c + n / (gb * 1e6), "GB/s counts 10^9 bytes a second, not 10^6"),
)
_seconds = lambda n, p, gb, c: p * c + n / (gb * 1e9)
_check_seconds = table("predict_seconds", "(nbytes, pieces, gb_per_s, per_copy_s)", _SECONDS, _seconds, slips=_SLIPS)

#: Each question's task (the notebook states it in full), then its hint, a line each.
_TEXTS = """Write `fill_rows(buffer, tensors)`: copy each tensor straight into its row of `buffer`, allocating none.
Iterating over a 2-D tensor gives its rows as views; row.copy_(t) writes t into that row, across devices too.
Write `in_one_copy(pieces, device)`: the 1-D pieces moved to `device` in one copy, as a list.
torch.cat joins the pieces; .to(device) moves the joined tensor once; .split or .chunk cuts it again into views.
Write `losses_to_floats(losses)`: the 0-d losses (of one dtype) as Python floats, read from the device once.
torch.stack makes one tensor of the list (on the device); one .tolist() then brings them all to the host.
Write `predict_seconds(nbytes, pieces, gb_per_s, per_copy_s)`: the seconds `pieces` copies of `nbytes` take.
Two terms: pieces × per_copy_s for the copies, nbytes ÷ (gb_per_s × 10^9) for the bytes.""".split("\n")
_NAMES = ("fill_rows", "in_one_copy", "losses_to_floats", "predict_seconds")
_CHECKS = (_check_fill_rows, _check_in_one_copy, _check_losses_to_floats, _check_seconds)
QUESTIONS = [*map(partial(Question, chapter="03"), range(1, 5), _TEXTS[::2], _NAMES, _CHECKS, _TEXTS[1::2])]
