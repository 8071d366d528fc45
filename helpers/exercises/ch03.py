"""Chapter 03 exercises: copy_ into an existing buffer, one copy instead of many, one read instead of many."""

from __future__ import annotations

from typing import Any

import torch

from ..checking import Question, Wrong, expect_function, expect_type


def _check_fill_rows(fn: Any) -> None:
    expect_function(fn, "fill_rows", "(buffer, tensors)")
    tensors = [torch.arange(3.0) + 10 * i for i in range(4)]
    sent = torch.stack([t.clone() for t in tensors])
    buffer = torch.zeros(4, 3)
    got = fn(buffer, tensors)
    if not all(torch.equal(t, row) for t, row in zip(tensors, sent, strict=True)):
        raise Wrong("the tensors you were given changed: x.copy_(y) copies y into x, so write row.copy_(t)")
    if got is not buffer:
        if isinstance(got, torch.Tensor) and not torch.equal(buffer, sent):
            raise Wrong("you returned a new tensor and left `buffer` empty: write into `buffer` itself and return it")
        raise Wrong("return `buffer` itself, the tensor you filled (copy_ returns the tensor it wrote into)")
    if not torch.equal(buffer, sent):
        raise Wrong("row i of `buffer` should hold the values of tensors[i] afterwards")


#: Calls that bring a tensor's values to the host: on a GPU tensor each is one device → host copy.
_TO_HOST = frozenset({"item", "tolist", "__float__", "__int__", "__index__", "__bool__", "__repr__", "__format__"})


def _counting_device_tensors() -> type[torch.Tensor]:
    """A fresh tensor class that plays a GPU tensor and counts the trips its values make to the host.

    Each call in `_TO_HOST` (printing included), and each `.cpu()` or `.to("cpu")`, counts as one trip; what arrives
    on the host is a plain tensor, so reading the arrived values again (`float(v)` of a row of
    `.cpu()`'s result) is free, as it is on a real GPU. `.numpy()` refuses, as it does on a GPU.
    """

    class OnDevice(torch.Tensor):
        trips = 0

        @classmethod
        def __torch_function__(cls, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
            kwargs = kwargs or {}
            name = getattr(func, "__name__", "")
            if name in {"numpy", "__array__"}:
                raise Wrong(
                    "on a GPU, .numpy() refuses a GPU tensor (TypeError): bring the values over with .cpu() first"
                )
            to_host = name in _TO_HOST or name == "cpu" or (name == "to" and _names_the_cpu(args[1:], kwargs))
            if not to_host:
                return super().__torch_function__(func, types, args, kwargs)
            cls.trips += 1
            with torch._C.DisableTorchFunctionSubclass():
                result = func(*args, **kwargs)
                if isinstance(result, torch.Tensor):
                    result = torch.Tensor.as_subclass(result, torch.Tensor)  # a plain tensor: now on the host
            return result

    return OnDevice


def _names_the_cpu(args: tuple, kwargs: dict) -> bool:
    """Whether the arguments of a `Tensor.to` call name the CPU as the destination."""
    for value in (*args, kwargs.get("device")):
        if isinstance(value, (str, torch.device)):
            return torch.device(value).type == "cpu"
    return False


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
    expect_function(fn, "losses_to_floats", "(losses)")
    on_device = _counting_device_tensors()
    losses = [torch.tensor(v).as_subclass(on_device) for v in (0.5, 0.25, 0.125, 0.0625)]
    got = fn(losses)
    got = expect_type(got, list, "a list of Python floats")
    if not all(isinstance(v, float) for v in got):
        kind = type(got[0]).__name__ if got else "nothing"
        raise Wrong(f"return a list of Python floats, not a list of {kind}s: {got!r:.60}")
    if got != [0.5, 0.25, 0.125, 0.0625]:
        raise Wrong(f"the floats should be the losses in order, got {got}")
    if on_device.trips > 1:
        raise Wrong(
            f"the values travelled to the host {on_device.trips} times (each .item(), float() or .cpu() "
            "of a GPU tensor waits for the GPU): stack the losses on the device and bring them over once"
        )


QUESTIONS = [
    Question(
        number=1,
        task="Write `fill_rows(buffer, tensors)`: `buffer` is an existing 2-D host tensor with one row per "
        "1-D tensor in `tensors` (which may live on a GPU). Copy each tensor into its row of `buffer`, "
        "allocating no new buffer, and return `buffer`.",
        variable="fill_rows",
        checker=_check_fill_rows,
        hint_text="Iterating over a 2-D tensor gives its rows as views; row.copy_(t) writes t's values into "
        "that row of the buffer, across devices too.",
        solution_code=(
            "def fill_rows(buffer, tensors):\n"
            "    for row, t in zip(buffer, tensors):\n"
            "        row.copy_(t)\n"
            "    return buffer"
        ),
        wrong_answers=(
            "def fill_rows(buffer, tensors):\n    return torch.stack(tensors)",
            "def fill_rows(buffer, tensors):\n    for row, t in zip(buffer, tensors):\n        t.copy_(row)\n"
            "    return buffer",
            "def fill_rows(buffer, tensors):\n    for row, t in zip(buffer, tensors):\n        row = t.cpu()\n"
            "    return buffer",
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
        hint_text="torch.stack makes one tensor of the list (on the device); one .tolist() (or one .cpu()) "
        "then brings them all to the host.",
        solution_code="def losses_to_floats(losses):\n    return torch.stack(losses).tolist()",
        wrong_answers=(
            "def losses_to_floats(losses):\n    return [loss.item() for loss in losses]",
            "def losses_to_floats(losses):\n    return [float(loss) for loss in losses]",
            "def losses_to_floats(losses):\n    return torch.stack(losses)",
            "def losses_to_floats(losses):\n    return [loss.cpu().tolist() for loss in losses]",
        ),
    ),
]
