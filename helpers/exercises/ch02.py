"""Chapter 02 exercises: creating tensors on a given device, and adding tensors that live apart.

The checkers call the learner's functions with the `meta` device, which exists on every machine
(tensors there have a shape and a dtype but no values), so they test device handling for real
without a GPU. While the learner's function runs, a `CallLog` records the torch calls it makes,
so a checker can tell "created on the CPU, then moved" from "created on the device", and can
name the operation that mixed two devices.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..checking import Question, Wrong, expect_function
from .calls import MOVES, Call, CallLog

META = torch.device("meta")
#: The tensor methods that may take tensors on two devices (`b.to(a)`, `out.copy_(b)`).
_CROSS_DEVICE = MOVES | {"copy_"}


def _mixed(log: CallLog) -> list[Call]:
    """The calls that met tensors on two devices, other than those meant to (a move, a copy)."""
    return [c for c in log.calls if len(c.devices) > 1 and c.name not in _CROSS_DEVICE]


def _moves_off(log: CallLog, device: torch.device) -> list[Call]:
    """The moves (`.to`, `.cpu`, `.cuda`) of a tensor on `device` to another device, tried or done."""
    return [
        c
        for c in log.named(MOVES)
        if c.on == device and (c.raised or (isinstance(c.result, torch.Tensor) and c.result.device != device))
    ]


def _watched(fn: Callable[..., Any], *args: Any) -> tuple[Any, CallLog]:
    """Call the learner's `fn(*args)` under a fresh `CallLog`; a device mix that raised becomes a `Wrong`."""
    log = CallLog()
    try:
        with log:
            result = fn(*args)
    except RuntimeError:
        mixed = _mixed(log)
        if mixed:
            call = mixed[0]
            devices = " and ".join(sorted(map(str, call.devices)))
            raise Wrong(
                f"your code called {call.label} on tensors that live on {devices}, which torch refuses: bring one "
                "of them to the other's device first"
            ) from None
        raise
    return result, log


def _expect_tensor(value: Any, call: str) -> torch.Tensor:
    if value is None:
        raise Wrong(f"{call} returned None: replace the `...` with your code and `return` the tensor")
    if not isinstance(value, torch.Tensor):
        raise Wrong(f"{call} returned a {type(value).__name__}, not a tensor")
    return value


def _expect_made_on_the_device(log: CallLog, call: str) -> None:
    made_on_cpu = [c for c in log.calls if isinstance(c.result, torch.Tensor) and c.result.device.type == "cpu"]
    if made_on_cpu:
        raise Wrong(
            f"{call} first made a tensor on the CPU (with {made_on_cpu[0].label}) and moved it afterwards: "
            "pass device=... to the factory function so the tensor is created on the device directly"
        )


# -- Question 1 ------------------------------------------------------------------------------------


def _check_ones_on(fn: Any) -> None:
    expect_function(fn, "ones_on", "(device)")
    for device in (META, torch.device("cpu")):
        call = f"ones_on(torch.device({str(device)!r}))"
        got, watch = _watched(fn, device)
        t = _expect_tensor(got, call)
        if t.device.type != device.type:
            raise Wrong(
                f"{call} made a tensor on {t.device}: pass device=... to the factory so the tensor is created "
                "where it is asked for"
            )
        if device.type != "cpu":
            _expect_made_on_the_device(watch, call)
        if tuple(t.shape) != (2, 3):
            raise Wrong(f"the tensor has shape {tuple(t.shape)}, not (2, 3)")
        if t.dtype != torch.float32:
            raise Wrong(f"the tensor's dtype is {t.dtype}, not torch.float32 (integer data make an int64 tensor)")
        if device.type == "cpu" and not bool((t == 1).all()):
            raise Wrong("the tensor should hold ones")


# -- Question 2 ------------------------------------------------------------------------------------


def _blame_moves_and_mixes(log: CallLog, a: torch.Tensor, call: str) -> None:
    """Say what the learner's add_on_first did wrong when it moved `a`, moved the result, or mixed devices."""
    off_a_device = _moves_off(log, a.device)
    if any(c.args[0] is a for c in off_a_device):
        raise Wrong(f"{call} moved a off its device: move b to a.device instead; a stays where it is")
    if off_a_device:
        raise Wrong(f"{call} moved a tensor off a's device (meta): the sum should stay where a lives")
    mixed = _mixed(log)
    if any(c.name == "__set__" for c in mixed):  # `b.data = ...` swaps the caller's tensor's storage
        raise Wrong(
            f"{call} assigned to the .data of a tensor it was given, which changes the caller's tensor: "
            "leave the inputs as they are and move a copy, b.to(a.device)"
        )
    if mixed:
        devices = " and ".join(sorted(map(str, mixed[0].devices)))
        raise Wrong(
            f"{call}: your code called {mixed[0].label} on tensors that live on {devices}, which torch "
            "refuses: move b to a.device first (a stays where it is)"
        )


def _check_add_on_first(fn: Any) -> None:
    expect_function(fn, "add_on_first", "(a, b)")
    a, b = torch.arange(6.0).reshape(2, 3), torch.full((2, 3), 10.0)
    want, a_before = a + b, a.clone()
    got, _ = _watched(fn, a, b)
    got = _expect_tensor(got, "add_on_first(a, b)")
    if not torch.equal(a, a_before) or not torch.equal(b, torch.full((2, 3), 10.0)):
        raise Wrong("add_on_first changed a or b (an in-place +=, add_ or copy_): leave the inputs as they are")
    if got.shape != want.shape or not torch.equal(got, want):
        raise Wrong("with a and b on the same device the result should simply be a + b")
    a_meta, b_before = torch.ones(2, 3, device=META), b.clone()
    call = "add_on_first(a, b) with a on meta and b on cpu"
    log = CallLog()
    try:
        with log:
            got = fn(a_meta, b)
    except Exception:
        _blame_moves_and_mixes(log, a_meta, call)
        raise
    _blame_moves_and_mixes(log, a_meta, call)
    got = _expect_tensor(got, call)
    if got.device == b.device:
        raise Wrong(f"{call} computed the sum on b's device (cpu): move b to a.device, not a to b's device")
    if got.device != META:
        raise Wrong(f"{call} gave a result on {got.device}; it should live on a's device (meta)")
    if tuple(got.shape) != (2, 3):
        raise Wrong(f"the sum has shape {tuple(got.shape)}, not (2, 3)")
    if b.device.type != "cpu" or not torch.equal(b, b_before):
        raise Wrong("leave the inputs as they are: move a copy of b, do not change b")


# -- Question 3 ------------------------------------------------------------------------------------


def _check_zeros_for(fn: Any) -> None:
    expect_function(fn, "zeros_for", "(t, n)")
    cases = (
        torch.arange(3, device=META),  # int64 on meta
        torch.ones(2, 2, dtype=torch.float64, device=META),
        torch.ones(4, dtype=torch.float16),  # float16 on the CPU: the values can be checked
    )
    for t, n in zip(cases, (5, 2, 3), strict=True):
        call = f"zeros_for(t, {n}) with t a {t.dtype} tensor on {t.device}"
        before = (t.shape, t.dtype, t.device, t.clone() if t.device.type == "cpu" else None)
        got, watch = _watched(fn, t, n)
        got = _expect_tensor(got, call)
        after = (t.shape, t.dtype, t.device)
        if after != before[:3] or (before[3] is not None and not torch.equal(t, before[3])):
            raise Wrong(f"{call} changed t: read its dtype and device, and leave t as it is")
        if got.device != t.device:
            raise Wrong(f"{call} returned a tensor on {got.device}: create it on t.device")
        if t.device.type != "cpu":
            _expect_made_on_the_device(watch, call)
        if got.dtype != t.dtype:
            raise Wrong(
                f"{call} returned {got.dtype}, not t's dtype: without dtype=... a factory function uses the "
                f"default dtype ({torch.get_default_dtype()}), so pass dtype=t.dtype"
            )
        if tuple(got.shape) != (n,):
            raise Wrong(f"{call} returned shape {tuple(got.shape)}, not ({n},)")
        if got.device.type == "cpu" and bool((got != 0).any()):
            raise Wrong(f"{call} should hold zeros")


# -- Question 4: debug this ---------------------------------------------------------------------------


def _check_scale_rows(fn: Any) -> None:
    expect_function(fn, "scale_rows", "(x)")
    for x in (torch.ones(4, 3, device=META), torch.arange(6.0).reshape(3, 2)):
        call = f"scale_rows(x) with x of shape {tuple(x.shape)} on {x.device}"
        before = x.clone()
        log = CallLog()
        try:
            with log:
                got = fn(x)
        except (RuntimeError, NotImplementedError):  # a meta tensor moved to the CPU: NotImplementedError
            if any(c.args[0] is x for c in _moves_off(log, x.device)):
                raise Wrong(f"{call} moved x off its device: leave x where it lives, bring the weights to it") from None
            made_on_cpu = [
                c
                for c in log.calls
                if c.name not in MOVES and isinstance(c.result, torch.Tensor) and c.result.device.type == "cpu"
            ]
            if x.device.type != "cpu" and _mixed(log) and made_on_cpu:
                raise Wrong(
                    f"{call}: a tensor made on the CPU (by {made_on_cpu[0].label}) met x, which lives on "
                    f"{x.device}; make it where x lives (device=x.device)"
                ) from None
            raise
        got = _expect_tensor(got, call)
        if x.device != before.device or (x.device.type == "cpu" and not torch.equal(x, before)):
            raise Wrong(f"{call} changed x: leave the input as it is")
        if got.device != x.device:
            raise Wrong(f"{call} returned a tensor on {got.device}: the result should stay where x lives")
        if tuple(got.shape) != tuple(x.shape):
            raise Wrong(f"{call} returned shape {tuple(got.shape)}, not x's {tuple(x.shape)}")
        if x.device.type == "cpu":
            weights = torch.linspace(0.5, 1.5, x.shape[0])
            if not torch.allclose(got, x * weights[:, None]):
                raise Wrong(f"{call} changed what the function computes: row i is still multiplied by weights[i]")


QUESTIONS = [
    Question(
        number=1,
        task="Write `ones_on(device)` returning a 2 × 3 float32 tensor of ones created directly on `device`.",
        variable="ones_on",
        checker=_check_ones_on,
        hint_text="Every factory function (torch.ones, torch.zeros, torch.rand, torch.tensor) takes device=...",
        chapter="02",
    ),
    Question(
        number=2,
        task="Write `add_on_first(a, b)` returning a + b computed on the device of `a`, wherever `b` lives.",
        variable="add_on_first",
        checker=_check_add_on_first,
        hint_text="Tensors must share a device before they meet: bring b to a.device with .to(...).",
        chapter="02",
    ),
    Question(
        number=3,
        task=(
            "Write `zeros_for(t, n)` returning a 1-D tensor of `n` zeros with `t`'s dtype, created directly on "
            "`t`'s device."
        ),
        variable="zeros_for",
        checker=_check_zeros_for,
        hint_text="A tensor knows its own t.dtype and t.device: pass both to torch.zeros.",
        chapter="02",
    ),
    Question(
        number=4,
        task="Debug this: `scale_rows(x)` works on the CPU but fails when x lives on another device. Fix it so "
        "that it works wherever x lives, computes the same, and leaves x where it is.",
        variable="scale_rows",
        checker=_check_scale_rows,
        hint_text="Read the line that makes the weights: where does a factory function create a tensor when you "
        "do not say? x.device names the place it should be.",
        chapter="02",
    ),
]
