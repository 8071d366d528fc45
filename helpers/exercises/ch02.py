"""Chapter 02 exercises: tensors made on a device and added across devices, tried on every device (meta for a GPU)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.utils._pytree import tree_leaves, tree_map

from ..answers import Wrong, expect_function
from ..checking import Question
from ..learner_code import Checker
from .calls import Call, CallLog
from .cases import show

DEVICES = ("cpu", "meta", *(("cuda",) if torch.cuda.is_available() else ()))
PRINTS = ("__repr__", "__str__", "__format__")  # printing a GPU tensor reads it


class Watch(CallLog):
    """A `CallLog` in which meta tensors play GPU ones: a read of their values (`.item()`, `.cpu()`, printing, which
    shows them as meta) is kept in `reads`, once per tensor, and reads zeros; a host tensor copied over, `copies_in`."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[Call] = []
        self.copies_in: list[Call] = []

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        self.calls.append(call := Call(func, args, kwargs or {}))
        given = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        meta = [t for t in given if t.device.type == "meta"]
        if meta and call.name in PRINTS:  # a GPU tensor's text reads it; a meta one's, whatever the format, is meta
            self.reads += [call] * len(meta)
            return repr(args[0])
        try:
            call.result = func(*args, **call.kwargs)
        except (RuntimeError, NotImplementedError) as exc:
            if "meta tensor" not in str(exc):  # else it needed values, which a GPU would send
                raise
            self.reads += [call] * len(meta)
            zeros = {id(m): torch.zeros_like(m, device="cpu") for m in meta}
            host = tree_map(lambda t: zeros.get(id(t), t), (args, call.kwargs))
            call.result = func(*host[0], **host[1])
            return call.result
        devices = {t.device for t in tree_leaves((given, call.result)) if isinstance(t, torch.Tensor)}
        made = call.name.endswith(("_like", "new_zeros", "new_ones", "new_empty", "new_full"))  # shape, not values
        if len(devices) > 1 and not made and any(t.dim() and t.device.type == "cpu" for t in given):
            self.copies_in.append(call)
        return call.result


def run(fn: Any, name: str, takes: str, case: Sequence[Any], dtype: torch.dtype | None = None) -> tuple:
    """The `Watch`, arguments, result and text of a call of the learner's `name` on `case` (torch's default dtype
    `dtype` during it, if given), each `(values, device)` in it passed as a copy there; a changed one is `Wrong`."""
    expect_function(fn, name, takes)
    log, args, keys = Watch(), [_on(*a) if isinstance(a, tuple) else a for a in case], takes[1:-1].split(", ")
    call = f"{name}({', '.join(map(described, args))})" + (f" with torch's default dtype {dtype}" if dtype else "")
    kept = {id(t): k for k, a, c in zip(keys, args, case, strict=True) if isinstance(c, tuple) for t in tree_leaves(a)}
    before = torch.get_default_dtype()
    try:
        torch.set_default_dtype(dtype or before)
        with log:
            got = fn(*args)
    except Exception as exc:  # a `Wrong` when the log shows the cause: an input changed in place, or cuda named
        said = f"{call} raised {type(exc).__name__}: " + str(exc).partition("\n")[0]
        for c in log.calls:
            if in_place(c) and (changed := kept.get(id(c.args[0]))):
                raise Wrong(f"{said}, after changing {changed} ({spelled([c])}): leave the inputs as they are") from exc
            if "cuda" not in call and "cuda" in f"{c.name}{c.args}{c.kwargs}":  # a device or tensor of cuda
                raise Wrong(f"{said}; it named cuda ({spelled([c])}): use the device you were given") from exc
        raise
    finally:  # the learner's own change of the default is left for check() to name
        torch.set_default_dtype(before if dtype else torch.get_default_dtype())
    for label, arg, spec in zip(keys, args, case, strict=True):
        if isinstance(spec, tuple) and not same(arg, *spec):
            now = described(arg, not log.reads)
            raise Wrong(f"{call} changed its argument {label}, now {now}: leave the inputs as they are")
    return log, args, got, call


_SPELLED = {"__repr__": "print()", "__str__": "print()", "__format__": "an f-string", "__setitem__": "x[i] = ..."}


def spelled(calls: list[Call]) -> str:
    """The calls as a learner writes them, counted: `4 × .item()`, `.cpu()`, `x.data = ...`."""
    said = [f"x.{c.func.__self__.__name__} = ..." if c.name == "__set__" else _SPELLED.get(c.name) for c in calls]
    said = [s or (f"{c.label}()" if c.label[:6] == "torch." else c.written) for s, c in zip(said, calls, strict=True)]
    return ", ".join(f"{said.count(s)} × {s}" if said.count(s) > 1 else s for s in dict.fromkeys(said))


def in_place(call: Call) -> bool:
    """Whether `call` changes the tensor it is called on: `x.add_(...)`, `x[i] = ...`, `x.data = ...`."""
    return bool(call.args) and (call.name in ("__set__", "__setitem__") or call.name[-1:] == "_" != call.name[:1])


def _on(values: Any, device: str | torch.device) -> Any:
    return [_on(v, device) for v in values] if isinstance(values, list) else values.to(device, copy=True)


def same(t: Any, values: Any, device: str | torch.device, readable: bool = True) -> bool:
    """Whether `t` is (a list of) tensors like `values` on `device`: dtype, shape and, if `readable`, values."""
    if isinstance(values, list):
        pairs = zip(t, values, strict=True) if isinstance(t, list) and len(t) == len(values) else None
        return pairs is not None and all(same(*p, device, readable) for p in pairs)
    kind = (torch.device(device).type, values.dtype, values.shape)
    if not isinstance(t, torch.Tensor) or (t.device.type, t.dtype, t.shape) != kind:
        return False
    return not readable or kind[0] == "meta" or torch.allclose(t.cpu().cdouble(), values.cdouble(), rtol=1e-5)


def described(t: Any, readable: bool = True, device: str | torch.device | None = None) -> str:
    """`t` for a message: a tensor's kind and, if `readable` and not on the meta device, its values."""
    if isinstance(t, list) and t and isinstance(t[0], torch.Tensor):
        return f"a list of {len(t)} tensors, the first {described(t[0], readable, device)}"
    if not isinstance(t, torch.Tensor):
        return show(t)
    device = torch.device(device or t.device)
    values = f" holding {show(t.tolist())}" if readable and device.type != "meta" else ""
    return f"a {t.dtype} tensor of shape {tuple(t.shape)} on {device}{values}"


def _on_devices(name: str, takes: str, cases: list, want: Callable, made_there: bool, *dtypes: Any) -> Checker:
    """A checker that `run`s every case (again from the last, off the CPU, with each of `dtypes` torch's default) and
    expects `want(*values)` on the device of (or named by) the first argument; with `made_there`, made there."""

    def check(fn: Any) -> None:
        for dtype, case in [(d, c) for d in (None, *dtypes) for c in (cases[::-1] if d else cases)]:
            log, args, got, call = run(fn, name, takes, case, dtype)
            if made_there and log.copies_in:
                raise Wrong(f"{call} copied a tensor from the CPU ({log.copies_in[0].written}): pass device=...")
            right = want(*(a[0] if isinstance(a, tuple) else a for a in case))
            where, readable = (case[0][1] if isinstance(case[0], tuple) else case[0]), not log.reads
            if not same(got, right, where, readable):
                raise Wrong(f"{call} returned {described(got, readable)}; expected {described(right, readable, where)}")
            if any(c.args and c.args[0] is args[0] and c.name not in PRINTS for c in log.reads):
                raise Wrong(f"{call} copied {takes[1:-1].split(', ')[0]} to the host: compute where it lives")

    return check


#: Every device, named by a string and by a torch.device.
_ONES = [(d,) for d in (*DEVICES, *map(torch.device, DEVICES))]
#: a and b of one dtype (b broadcast in the last), then int64 and float32 either way round; every pair of devices.
_SUMS = (
    (torch.arange(6.0).reshape(2, 3), torch.full((2, 3), 10.0)),
    (torch.tensor([3, -1, 4, 1]), torch.tensor([5, 9, -2, 6])),
    (torch.tensor([[0.5, 1.5, -2.0], [4.0, 0.25, 8.0]]).half(), torch.tensor([1.0, -1.0, 0.5]).half()),
)
_MIXED = (torch.tensor([3, -1, 4]), torch.tensor([0.5, -1.25, 2.75]))
_ADDS = [((a, x), (b, y)) for a, b in (*_SUMS, _MIXED, _MIXED[::-1]) for x in DEVICES for y in DEVICES]
#: Dtypes other than the default, a 0-d t, no zeros at all; every device.
_TS = (torch.arange(3), torch.tensor([True, False]), torch.ones(2, 2).half(), torch.tensor(1j))
_ZEROS = [((t, d), n) for t, n in zip(_TS, (5, 0, 3, 1), strict=True) for d in DEVICES]
#: Many rows, few, one; float64, integer and float16 x (whose product with the float32 weights is float32).
_ROWS = (torch.arange(12.0).reshape(4, 3), torch.tensor([[0.1, 2.5], [-1.2, 3.0]]).double(), torch.tensor([[3, 1, -4]]))
_XS = [((x, d),) for x in (*_ROWS, torch.tensor([[1.5, -2.0], [4.0, 0.25], [8.0, 3.0]]).half()) for d in DEVICES]

_CHECKS = (
    _on_devices("ones_on", "(device)", _ONES, lambda d: torch.ones(2, 3, dtype=torch.float32), True, torch.float64),
    _on_devices("add_on_first", "(a, b)", _ADDS, lambda a, b: a + b, False),
    _on_devices("zeros_for", "(t, n)", _ZEROS, lambda t, n: torch.zeros(n, dtype=t.dtype), True),
    _on_devices("scale_rows", "(x)", _XS, lambda x: x * torch.linspace(0.5, 1.5, len(x))[:, None], False),
)
_TASKS = (
    "Write `ones_on(device)` returning a 2 × 3 float32 tensor of ones created directly on `device`.",
    "Write `add_on_first(a, b)` returning a + b computed on the device of `a`, wherever `b` lives.",
    "Write `zeros_for(t, n)` returning a 1-D tensor of `n` zeros with `t`'s dtype, created directly on `t`'s device.",
    "Debug this: `scale_rows(x)` works on the CPU but fails when x lives on another device. Fix it so that it works "
    "wherever x lives, computes the same, and leaves x where it is.",
)
_HINTS = (
    "Every factory function (torch.ones, torch.zeros, torch.rand, torch.tensor) takes device=... and dtype=...",
    "Tensors must share a device before they meet: bring b to a.device with .to(...).",
    "A tensor knows its own t.dtype and t.device: pass both to torch.zeros.",
    "Read the line that makes the weights: where does a factory function create a tensor when you do not say? "
    "x.device names the place it should be.",
)
_NAMES = ("ones_on", "add_on_first", "zeros_for", "scale_rows")
QUESTIONS = [Question(n + 1, *q, chapter="02") for n, q in enumerate(zip(_TASKS, _NAMES, _CHECKS, _HINTS, strict=True))]
