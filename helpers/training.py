"""Chapter 04's small pieces: reproducible synthetic data and a tiny model (for the checkers), CPU threads."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn

from .devices import usable_device


def make_data(n: int = 1024, features: int = 8, *, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs `X` (n × features) and targets `y` (n × 1): a smooth function plus noise, made on the CPU with its
    own generator, so the data are the same on every machine (the training loop moves them to the model's device)."""
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, features, generator=g)
    w = torch.randn(features, 1, generator=g) / features**0.5
    y = torch.sin(2 * X @ w) + 0.05 * torch.randn(n, 1, generator=g)
    return X, y


def make_model(features: int = 8, hidden: int = 32, *, seed: int = 0) -> nn.Sequential:
    """A two-layer perceptron, created on the CPU with reproducible initial weights."""
    with torch.random.fork_rng(devices=[]):  # leave the global random state alone
        torch.manual_seed(seed)
        return nn.Sequential(nn.Linear(features, hidden), nn.Tanh(), nn.Linear(hidden, 1))


@contextmanager
def threads_on_cpu(device: torch.device | str, threads: int | None) -> Iterator[None]:
    """Run the block with `threads` torch threads when `device` is the CPU (None: leave torch's setting).

    For the chapter's small models extra threads only add waiting, and a great deal of it when
    other programs share the cores. The previous setting comes back when the block ends, errors included."""
    device = usable_device(device)
    before = torch.get_num_threads()
    if device.type == "cpu" and threads is not None:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
