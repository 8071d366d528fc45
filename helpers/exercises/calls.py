"""Watching a learner's tensor calls, for the checkers that judge how an answer gets its result.

`CallLog` (a `torch.overrides.TorchFunctionMode`) records every torch function and tensor method the learner's
code calls: name, arguments, result, whether it raised. Each checker asks the log its own question."""

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

#: Calls that read a tensor's values on the host (apply_, map_: each to Python); `FROM_DATA` reads tensors in data.
_NAMES = "item tolist numpy cpu allclose equal is_nonzero untyped_storage apply_ map_ map2_ __array__ __dlpack__"
_SIZE = "nonzero argwhere masked_select unique unique_consecutive bincount"  # results sized by the values
HOST_READS = frozenset(f"{_NAMES} {_SIZE} __float__ __int__ __bool__ __complex__ __index__ __repr__ __format__".split())
FROM_DATA = frozenset({"tensor", "as_tensor", "asarray", "new_tensor", "new"})
_BUILTINS = ("float", "int", "bool", "repr", "format")  # reads written as float(t), repr(t) (print), format(t)
_writes = lambda n: n[-1:] == "_" != n[-2:-1] or n[2:-2] in ("setitem", "iadd", "isub", "imul", "itruediv")  # in place
_store = lambda t: t.untyped_storage().data_ptr() or id(t) if isinstance(t, torch.Tensor) else id(t)  # views share it


@dataclass
class Call:
    """One torch call of the learner's: what was called, with what, and what came back."""

    func: Any
    args: tuple
    kwargs: dict
    result: Any = None
    raised: bool = False
    stores: tuple = (0, 0)  # when it returned: its first argument's storage and its result's (`_store`), then both

    name = property(lambda self: getattr(self.func, "__name__", ""), doc="The bare name: `to`, `ones`, `__float__`.")

    written = property(lambda s: f"{n}()" if (n := s.name[2:-2]) in _BUILTINS else f".{s.name}()")  # .cpu(), float()

    @property
    def label(self) -> str:
        """The function's full name: `Tensor.to`, `torch.ones` (t: one of torch's functions, not a dunder)."""
        owner = getattr(self.func, "__objclass__", None) or getattr(self.func, "__self__", None)
        t = (getattr(self.func, "__module__", None) or "").startswith("torch") and not self.name.startswith("__")
        return ("Tensor." if isinstance(owner, type) and issubclass(owner, torch.Tensor) else "torch." * t) + self.name


class CallLog(TorchFunctionMode):
    """`with CallLog() as log:` around the learner's code; afterwards `log.calls` lists what it called."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[Call] = []

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        self.calls.append(call := Call(func, args, kwargs or {}))
        try:
            call.result = func(*args, **call.kwargs)
        except Exception:
            call.raised = True
            raise
        with contextlib.suppress(Exception):  # then, not later (.data = moves them), kept (no other takes their memory)
            call.stores = (_store(first := (*args, None)[0]), _store(call.result))  # vmap's tensors have none
            call.stores += tuple(t.untyped_storage() for t in (first, call.result) if isinstance(t, torch.Tensor))
        return call.result

    named = lambda self, names: [c for c in self.calls if c.name in names]  # the calls of one of `names`, in order

    def host_reads(self) -> list[tuple[str, torch.Tensor | None]]:
        """Each host read of tensor values: (as written, the tensor, or None: in data); not of a host copy's storage."""
        reads, copied = [], set()
        for c in self.calls:  # also sized by the values: a boolean mask, where(cond), one_hot with no width
            setting = c.name == "__setitem__" and hasattr(c.args[-1], "dtype")  # a number set through a mask: no read
            index = c.args[1] if c.name == "__getitem__" or setting else ()
            read = [i for i in (index if type(index) is tuple else (index,)) if getattr(i, "dtype", 0) == torch.bool]
            width = c.kwargs.get("num_classes", (*c.args[1:], -1)[0]) if c.name == "one_hot" else 0  # -1: the values
            moved = getattr(c.result, "is_cpu", False) and any(getattr(a, "is_cuda", False) for a in c.args)  # to host
            read += c.args[:1] * (moved or c.name in HOST_READS or c.name == "where" and len(c.args) == 1 or width < 0)
            reads += [(c.written, read[0])] if read and c.stores[0] not in copied else []
            copied -= {_store(c.kwargs.get("out")), c.stores[0] if _writes(c.name) else 0}  # written: no copy now
            copied |= {c.stores[1]} if (moved or c.name == "cpu") and not c.raised else set()  # read free (views too)
        data = [(c.label, a) for c in self.named(FROM_DATA) if not c.raised for a in [*c.args[:2], *c.kwargs.values()]]
        return reads + [(f"{label}(a sequence of tensors)", None) for label, a in data for _ in _tensors_in(a)]


def _tensors_in(d: Any) -> list[torch.Tensor]:  # the tensors torch reads when it builds a tensor from data d
    seq = getattr(d, "ndim", 1) and hasattr(d, "__getitem__") and not isinstance(d, str | Mapping | torch.Tensor)
    each = [d[i] for i in range(len(d))] if seq else []  # a sequence as torch walks it: its length, then each index
    return [t for x in each for t in ([x] if isinstance(x, torch.Tensor) else _tensors_in(x))]
