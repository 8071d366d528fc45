"""Chapter 03 exercises: copy_ into an existing buffer, one copy instead of many, one read instead of many."""

from __future__ import annotations

from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from ..checking import Question, Wrong, expect_function, expect_type


def _check_fill_host(fn: Any) -> None:
    expect_function(fn, "fill_host")
    buffer = torch.zeros(5)
    src = torch.arange(5.0)
    got = fn(buffer, src)
    if not torch.equal(buffer, src):
        if torch.equal(src, torch.zeros(5)):
            raise Wrong("the values went the wrong way: x.copy_(y) copies y into x, so call buffer.copy_(src)")
        raise Wrong("`buffer` does not hold src's values afterwards: write into the existing buffer")
    if got is not buffer:
        raise Wrong("return the buffer itself (copy_ returns the tensor it wrote into), not a new tensor")


class _CountConversions(TorchFunctionMode):
    """Counts the calls that turn tensor values into Python or NumPy values (each one is a read)."""

    READS = frozenset({"item", "tolist", "numpy", "__float__", "__int__", "__index__", "__bool__"})

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        if getattr(func, "__name__", "") in self.READS:
            self.reads += 1
        return func(*args, **(kwargs or {}))


def _check_in_one_copy(fn: Any) -> None:
    expect_function(fn, "in_one_copy")
    pieces = [torch.arange(4.0) + 10 * i for i in range(3)]
    got = fn(pieces, torch.device("meta"))
    if not isinstance(got, (list, tuple)):
        raise Wrong(f"return a list of tensors, one per piece, not a {type(got).__name__}")
    if len(got) != len(pieces) or any(not isinstance(g, torch.Tensor) for g in got):
        raise Wrong(f"return {len(pieces)} tensors, one per piece")
    if any(g.device.type != "meta" for g in got):
        raise Wrong("the pieces should arrive on the device you were given (the test passes meta)")
    if any(tuple(g.shape) != (4,) for g in got):
        raise Wrong("each returned piece should have the shape of the piece that went in")
    got = fn(pieces, torch.device("cpu"))
    if not all(torch.equal(g, p) for g, p in zip(got, pieces, strict=False)):
        raise Wrong("the pieces that arrive should hold the values that were sent, in order")
    storages = {g.untyped_storage().data_ptr() for g in got}
    if len(storages) != 1 or any(
        g.untyped_storage().data_ptr() == p.untyped_storage().data_ptr() for g, p in zip(got, pieces, strict=False)
    ):
        raise Wrong("each piece made its own trip: join them into one tensor (torch.cat), move it once, split it")


def _check_losses_to_floats(fn: Any) -> None:
    expect_function(fn, "losses_to_floats")
    losses = [torch.tensor(v) for v in (0.5, 0.25, 0.125, 0.0625)]
    with _CountConversions() as counter:
        got = fn(losses)
    got = expect_type(got, list, "a list of Python floats")
    if not all(isinstance(v, float) for v in got):
        raise Wrong(f"return a list of Python floats, not a list of {type(got[0]).__name__}s: {got!r:.60}")
    if got != [0.5, 0.25, 0.125, 0.0625]:
        raise Wrong(f"the floats should be the losses in order, got {got}")
    if counter.reads > 1:
        raise Wrong(
            f"your code read tensor values {counter.reads} times "
            "(each .item() or float() on a GPU waits for it); "
            "stack the losses and read them once"
        )


QUESTIONS = [
    Question(
        number=1,
        task="Write `fill_host(buffer, src)` that copies src's values into the existing tensor `buffer` "
        "(no new tensor) and returns what the copy returns.",
        variable="fill_host",
        checker=_check_fill_host,
        hint_text="x.copy_(y) writes y's values into x (across devices too) and returns x.",
        solution_code="def fill_host(buffer, src):\n    return buffer.copy_(src)",
        wrong_answers=(
            "def fill_host(buffer, src):\n    return src.copy_(buffer)",
            "def fill_host(buffer, src):\n    buffer = src.cpu()\n    return buffer",
            "def fill_host(buffer, src):\n    buffer.copy_(src)\n    return src",
        ),
    ),
    Question(
        number=2,
        task="Write `in_one_copy(pieces, device)`: move a list of equally long 1-D tensors to `device` "
        "in one copy and return the list of moved pieces.",
        variable="in_one_copy",
        checker=_check_in_one_copy,
        hint_text="torch.cat joins the pieces; .to(device) moves the joined tensor once; .split or .chunk "
        "cuts it again into views.",
        solution_code=(
            "def in_one_copy(pieces, device):\n"
            "    moved = torch.cat(pieces).to(device)\n"
            "    return list(moved.split(len(pieces[0])))"
        ),
        wrong_answers=(
            "def in_one_copy(pieces, device):\n    return [p.to(device) for p in pieces]",
            "def in_one_copy(pieces, device):\n    return torch.cat(pieces).to(device)",
            "def in_one_copy(pieces, device):\n    return list(torch.cat(pieces).split(len(pieces[0])))",
        ),
    ),
    Question(
        number=3,
        task="Write `losses_to_floats(losses)`: turn a list of 0-dimensional loss tensors into a list of "
        "Python floats, reading the values from the device only once.",
        variable="losses_to_floats",
        checker=_check_losses_to_floats,
        hint_text="torch.stack makes one tensor of the list (on the device); one .tolist() then reads them all.",
        solution_code="def losses_to_floats(losses):\n    return torch.stack(losses).tolist()",
        wrong_answers=(
            "def losses_to_floats(losses):\n    return [loss.item() for loss in losses]",
            "def losses_to_floats(losses):\n    return [float(loss) for loss in losses]",
            "def losses_to_floats(losses):\n    return torch.stack(losses)",
        ),
    ),
]
