"""Watching a learner's tensor calls, for the checkers that judge how an answer gets its result.

`CallLog` records every torch function and tensor method the learner's code calls while it is
active (a `torch.overrides.TorchFunctionMode`): its name, arguments, result, and whether it
raised. Each checker asks the log its own question: which calls made a tensor on the CPU, which
moved one, which read values back to the host, how many trips went to a device.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
    #: The devices of the tensor arguments (one level into lists), 0-d CPU tensors left out.
    devices: set[torch.device] = field(default_factory=set)

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
        if owner is torch.Tensor or (isinstance(owner, type) and issubclass(owner, torch.Tensor)):
            return f"Tensor.{name}"
        module = getattr(self.func, "__module__", None) or ""
        return f"torch.{name}" if module.startswith("torch") and not name.startswith("__") else name

    @property
    def on(self) -> torch.device | None:
        """The device of the tensor the method was called on (its first argument), if it is a tensor."""
        return self.args[0].device if self.args and isinstance(self.args[0], torch.Tensor) else None


def _devices(values: Any) -> set[torch.device]:
    found: set[torch.device] = set()
    for value in values:
        for item in value if isinstance(value, list | tuple) else (value,):
            if isinstance(item, torch.Tensor) and not (item.device.type == "cpu" and item.dim() == 0):
                found.add(item.device)
    return found


class CallLog(TorchFunctionMode):
    """`with CallLog() as log:` around the learner's code; afterwards `log.calls` lists what it called."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[Call] = []

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        call = Call(func, args, kwargs, devices=_devices([*args, *kwargs.values()]))
        self.calls.append(call)
        try:
            call.result = func(*args, **kwargs)
        except Exception:
            call.raised = True
            raise
        return call.result

    def named(self, names: frozenset[str] | set[str]) -> list[Call]:
        """The calls whose bare name is one of `names`, in order."""
        return [c for c in self.calls if c.name in names]


#: Clocks that stand still while the process waits (a sleep, a GPU synchronisation): CPU time only.
CPU_CLOCKS = ("process_time", "process_time_ns", "thread_time", "thread_time_ns")
