"""Chapter 03 exercises: copy_ into an existing buffer, one copy instead of many, one read instead of many."""

from __future__ import annotations

import math
from typing import Any

import torch

from ..checking import Question, Wrong, expect_function, expect_number, expect_type
from ..standins import names_the_cpu
from .calls import CallLog


def _values(count: int, width: int, seed: int) -> list[torch.Tensor]:
    """`count` 1-D tensors of `width` random values, the same for a given seed."""
    generator = torch.Generator().manual_seed(seed)
    return list(torch.randn(count, width, generator=generator).unbind(0))


def _expect_list_unchanged(given: list, original: list, what: str) -> None:
    if len(given) != len(original) or any(g is not o for g, o in zip(given, original, strict=False)):
        raise Wrong(f"your function changed the list `{what}` it was given: read it, leave it as it is")


def _check_fill_rows(fn: Any) -> None:
    expect_function(fn, "fill_rows", "(buffer, tensors)")
    for rows, width in ((4, 3), (3, 5)):  # two sizes: an answer written for one example fails the other
        tensors = _values(rows, width, seed=rows)
        given, sent = list(tensors), torch.stack([t.clone() for t in tensors])
        buffer = torch.zeros(rows, width)
        memory = buffer.untyped_storage().data_ptr()
        got = fn(buffer, given)
        _expect_list_unchanged(given, tensors, "tensors")
        if not all(torch.equal(t, row) for t, row in zip(tensors, sent, strict=True)):
            raise Wrong("the tensors you were given changed: x.copy_(y) copies y into x, so write row.copy_(t)")
        if got is not buffer:
            if isinstance(got, torch.Tensor) and not torch.equal(buffer, sent):
                raise Wrong(
                    "you returned a new tensor and left `buffer` empty: write into `buffer` itself and return it"
                )
            raise Wrong("return `buffer` itself, the tensor you filled (copy_ returns the tensor it wrote into)")
        if buffer.untyped_storage().data_ptr() != memory or tuple(buffer.shape) != (rows, width):
            raise Wrong(
                "`buffer` now uses new memory (buffer.data = ... or buffer.set_(...) swap it for another tensor's): "
                "copy the values into the memory it has, row.copy_(t), and allocate no new buffer"
            )
        if not buffer.any():
            raise Wrong(
                f"with {rows} tensors of {width} values, `buffer` came back as zeros as it went in: `row = ...` "
                "only gives the name `row` a new tensor; write into the row itself, row.copy_(t)"
            )
        if not torch.equal(buffer, sent):
            raise Wrong(f"with {rows} tensors of {width} values, row i of `buffer` should hold tensors[i] afterwards")


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
            to_host = name in _TO_HOST or name == "cpu" or (name == "to" and names_the_cpu(args[1:], kwargs))
            if not to_host:
                return super().__torch_function__(func, types, args, kwargs)
            cls.trips += 1
            with torch._C.DisableTorchFunctionSubclass():
                result = func(*args, **kwargs)
                if isinstance(result, torch.Tensor):
                    result = torch.Tensor.as_subclass(result, torch.Tensor)  # a plain tensor: now on the host
            return result

    return OnDevice


#: Factories that build a tensor from host data (a Python list, a NumPy array) on the device they are given.
_FROM_HOST_DATA = frozenset({"tensor", "as_tensor", "asarray", "from_numpy"})


def _trips(log: CallLog) -> int:
    """The calls that brought host values onto the `meta` device (`.to`, `copy_`, `torch.tensor(list, device=)`)."""
    return sum(
        1
        for c in log.calls
        if isinstance(c.result, torch.Tensor)
        and c.result.device.type == "meta"
        and (any(d.type == "cpu" for d in c.devices) or c.name in _FROM_HOST_DATA)
    )


def _check_in_one_copy(fn: Any) -> None:
    expect_function(fn, "in_one_copy", "(pieces, device)")
    for count, width, device in ((3, 4, "meta"), (5, 2, "cpu")):  # two sizes: nothing can be written for one
        pieces = _values(count, width, seed=count)
        given, log = list(pieces), CallLog()
        with log:
            got = fn(given, torch.device(device))
        trips = _trips(log)
        _expect_list_unchanged(given, pieces, "pieces")
        if not isinstance(got, list | tuple):
            raise Wrong(f"return a list of tensors, one per piece, not a {type(got).__name__}")
        if len(got) != count or any(not isinstance(g, torch.Tensor) for g in got):
            raise Wrong(f"given {count} pieces, return {count} tensors, one per piece")
        if any(g.device.type != device for g in got):
            raise Wrong(f"the pieces should arrive on the device you were given (the test passes {device})")
        if any(tuple(g.shape) != (width,) for g in got):
            raise Wrong("each returned piece should have the shape of the piece that went in")
        if trips > 1:
            raise Wrong(
                f"the pieces made {trips} trips to the device: join them into one tensor on the host "
                "(torch.cat), move it once, then split it there"
            )
        if device == "cpu" and not all(torch.equal(g, p) for g, p in zip(got, pieces, strict=True)):
            raise Wrong("the pieces that arrive should hold the values that were sent, in order")


def _check_losses_to_floats(fn: Any) -> None:
    expect_function(fn, "losses_to_floats", "(losses)")
    for values in ((0.5, 0.125, 0.75, 0.0625), (1.5, 0.25, 3.0, 0.375, 2.25, 0.5)):
        on_device = _counting_device_tensors()
        losses = [torch.tensor(v).as_subclass(on_device) for v in values]
        given = list(losses)
        got = fn(given)
        _expect_list_unchanged(given, losses, "losses")
        if isinstance(got, torch.Tensor):
            raise Wrong("you returned a tensor (still on the device): .tolist() turns it into a list of Python floats")
        got = expect_type(got, list, "a list of Python floats")
        if not all(isinstance(v, float) for v in got):
            kind = type(got[0]).__name__ if got else "nothing"
            raise Wrong(f"return a list of Python floats, not a list of {kind}s: {got!r:.60}")
        if got != list(values):
            raise Wrong(f"given the losses {list(values)}, return their values in that order, not {got}")
        if on_device.trips > 1:
            raise Wrong(
                f"the values travelled to the host {on_device.trips} times (each .item(), float() or .cpu() "
                "of a GPU tensor waits for the GPU): stack the losses on the device and bring them over once"
            )


# -- Question 4: predict a copy's time from two measured figures --------------------------------------

#: (bytes, copies, GB/s, seconds per copy): large and small pieces, fast and slow links.
_PREDICT_CASES = (
    (64 * 2**20, 1, 12.0, 10e-6),
    (64 * 2**20, 16_384, 12.0, 10e-6),
    (4 * 2**20, 1_024, 3.0, 2e-6),
    (12_000, 10, 0.5, 5e-6),
)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6)


def _check_predict_seconds(fn: Any) -> None:
    expect_function(fn, "predict_seconds", "(nbytes, pieces, gb_per_s, per_copy_s)")
    for nbytes, pieces, gb, per_copy in _PREDICT_CASES:
        call = f"predict_seconds({nbytes:_}, {pieces}, {gb:g}, {per_copy:g})"
        got = expect_number(fn(nbytes, pieces, gb, per_copy), f"{call} (a number of seconds)")
        on_the_link = nbytes / (gb * 1e9)
        want = pieces * per_copy + on_the_link
        if _close(got, want):
            continue
        copies = "the one copy pays" if pieces == 1 else f"each of the {pieces} copies pays"
        if _close(got, on_the_link):
            raise Wrong(f"{call}: the per-copy cost is missing; {copies} {per_copy:g} s")
        if pieces > 1 and _close(got, per_copy + on_the_link):
            raise Wrong(f"{call}: per_copy_s is paid once per copy, so {pieces} times, not once")
        if _close(got, pieces * per_copy + nbytes / (gb * 2**30)):
            raise Wrong(f"{call}: GB/s here means 10^9 bytes a second, as the chapter's figures do, not 2^30")
        if _close(got, pieces * per_copy + nbytes / gb):
            raise Wrong(f"{call}: gb_per_s counts gigabytes; turn it into bytes a second (× 1e9) first")
        if pieces > 1 and _close(got, pieces * per_copy + on_the_link / pieces):
            raise Wrong(f"{call}: every byte crosses the link, so the bytes term is for all {nbytes:_}, not one piece")
        if _close(got, want * 1e3):
            raise Wrong(f"{call} looks like milliseconds ({got:.4g}); return seconds")
        raise Wrong(
            f"{call} returned {got:.4g} s; {pieces} cop{'y' if pieces == 1 else 'ies'} of {per_copy:g} s plus "
            f"{nbytes:_} bytes at {gb:g} GB/s take {want:.4g} s"
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
        chapter="03",
    ),
    Question(
        number=2,
        task="Write `in_one_copy(pieces, device)`: move a list of equally long 1-D tensors to `device` "
        "in one copy and return the list of moved pieces.",
        variable="in_one_copy",
        checker=_check_in_one_copy,
        hint_text="torch.cat joins the pieces; .to(device) moves the joined tensor once; .split or .chunk "
        "cuts it again into views.",
        chapter="03",
    ),
    Question(
        number=3,
        task="Write `losses_to_floats(losses)`: turn a list of 0-dimensional loss tensors into a list of "
        "Python floats, reading the values from the device only once.",
        variable="losses_to_floats",
        checker=_check_losses_to_floats,
        hint_text="torch.stack makes one tensor of the list (on the device); one .tolist() (or one .cpu()) "
        "then brings them all to the host.",
        chapter="03",
    ),
    Question(
        number=4,
        task="Write `predict_seconds(nbytes, pieces, gb_per_s, per_copy_s)`: the seconds it takes to move "
        "`nbytes` as `pieces` equal copies over a link of `gb_per_s` GB/s (10^9 bytes a second) that also "
        "costs `per_copy_s` seconds per copy.",
        variable="predict_seconds",
        checker=_check_predict_seconds,
        hint_text="Two terms: what the copies cost whatever their size (pieces × per_copy_s), and what the "
        "bytes cost on the link (nbytes ÷ (gb_per_s × 10^9)).",
        chapter="03",
    ),
]
