"""Watching a learner's tensor calls, for the checkers that judge how an answer gets its result.

`CallLog` (a `torch.overrides.TorchFunctionMode`) records every torch function and tensor method the learner's
code calls: name, arguments, result, whether it raised. Each checker asks the log its own question."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

#: The tensor methods that move a tensor to another device.
MOVES = frozenset({"to", "cpu", "cuda"})


@dataclass
class Call:
    """One torch call of the learner's: what was called, with what, and what came back."""

    func: Any
    args: tuple
    kwargs: dict
    result: Any = None
    raised: bool = False

    @property
    def name(self) -> str:
        """The bare name: `to`, `ones`, `__float__`."""
        return getattr(self.func, "__name__", "")

    @property
    def written(self) -> str:
        """The call as a learner writes it on a tensor: `.item()`, `.cpu()`, `float()`."""
        name = self.name
        return f"{name.strip('_')}()" if name in ("__float__", "__int__", "__bool__") else f".{name}()"

    @property
    def label(self) -> str:
        """The function's full name: `Tensor.to`, `torch.ones`."""
        name = self.name
        owner = getattr(self.func, "__objclass__", None) or getattr(self.func, "__self__", None)
        if isinstance(owner, type) and issubclass(owner, torch.Tensor):
            return f"Tensor.{name}"
        module = getattr(self.func, "__module__", None) or ""
        return f"torch.{name}" if module.startswith("torch") and not name.startswith("__") else name


class CallLog(TorchFunctionMode):
    """`with CallLog() as log:` around the learner's code; afterwards `log.calls` lists what it called."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[Call] = []

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        call = Call(func, args, kwargs or {})
        self.calls.append(call)
        try:
            call.result = func(*args, **call.kwargs)
        except Exception:
            call.raised = True
            raise
        return call.result

    def named(self, names: frozenset[str] | set[str]) -> list[Call]:
        """The calls whose bare name is one of `names`, in order."""
        return [c for c in self.calls if c.name in names]


#: Clocks that stand still while the process waits (a sleep, a GPU synchronisation): CPU time only.
CPU_CLOCKS = ("process_time", "process_time_ns", "thread_time", "thread_time_ns")
