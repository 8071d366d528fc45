"""Reading a learner's tensor calls, for the checkers that watch them (chapters 03 and 07)."""

from __future__ import annotations

import torch


def names_the_cpu(args: tuple, kwargs: dict) -> bool:
    """Whether the arguments of a `Tensor.to` call name the CPU as the destination."""
    for value in (*args, kwargs.get("device")):
        if isinstance(value, (str, torch.device)):
            try:
                return torch.device(value).type == "cpu"
            except RuntimeError:
                return False
    return False


def non_blocking(args: tuple, kwargs: dict) -> bool:
    """The `non_blocking` flag of a `to` / `copy_` / `cuda` call, given by keyword or as a positional bool."""
    if "non_blocking" in kwargs:
        return bool(kwargs["non_blocking"])
    return any(isinstance(a, bool) and a for a in args)
