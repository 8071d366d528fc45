"""A tiny model, synthetic data and a training loop that run unchanged on any device (chapter 04).

The loop is *device-agnostic*: it asks the model where its parameters live and brings each batch
there, so the same code trains on the CPU here and on a GPU on Kaggle. It also keeps the loss of
every epoch on the device and converts the whole history to Python floats once, at the end:
calling `.item()` every step would make the host wait for the GPU every step (chapter 03).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn

from .validation import checks, optional, whole_number


def make_data(
    n: int = 1024, features: int = 8, *, noise: float = 0.05, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs `X` (n × features) and targets `y` (n × 1) on the CPU: a smooth function plus noise.

    Generated on the CPU with its own generator, so the data are the same on every machine; the
    training loop moves them to the model's device.
    """
    n = whole_number(n, "n")
    features = whole_number(features, "features")
    if noise < 0:
        raise ValueError(f"noise is a standard deviation, so it cannot be negative (got {noise})")
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, features, generator=g)
    w = torch.randn(features, 1, generator=g) / features**0.5
    y = torch.sin(2 * X @ w) + noise * torch.randn(n, 1, generator=g)
    return X, y


def make_model(features: int = 8, hidden: int = 32, *, seed: int = 0) -> nn.Sequential:
    """A two-layer perceptron, created on the CPU with reproducible initial weights."""
    features = whole_number(features, "features")
    hidden = whole_number(hidden, "hidden")
    with torch.random.fork_rng(devices=[]):  # leave the global random state alone
        torch.manual_seed(seed)
        return nn.Sequential(nn.Linear(features, hidden), nn.Tanh(), nn.Linear(hidden, 1))


@contextmanager
def threads_on_cpu(device: torch.device, threads: int | None) -> Iterator[None]:
    """Run the block with `threads` torch threads when `device` is the CPU (None: leave torch's setting)."""
    if threads is not None:
        threads = whole_number(threads, "cpu_threads")
    before = torch.get_num_threads()
    if device.type == "cpu" and threads is not None:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def model_device(model: nn.Module) -> torch.device:
    """The device of the model's first parameter (the models here keep all of them on one device)."""
    try:
        return next(model.parameters()).device
    except StopIteration:
        raise ValueError(f"{type(model).__name__} has no parameters, so it has no device") from None


def check_training_data(X: torch.Tensor, y: torch.Tensor, lr: float) -> None:
    """Refuse what `train` cannot use: a learning rate that is not positive, X and y that do not pair up."""
    if not lr > 0:
        raise ValueError(f"lr (the learning rate) must be positive, not {lr!r}")
    if X.dim() != 2 or y.dim() != 2:
        raise ValueError(f"X and y must be 2-D (samples × values), not {X.dim()}-D and {y.dim()}-D")
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} samples but y has {y.shape[0]}")


@checks(check_training_data, epochs=whole_number, batch_size=whole_number, cpu_threads=optional(whole_number))
def train(
    model: nn.Module,
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    epochs: int = 20,
    batch_size: int = 64,
    lr: float = 1e-2,
    seed: int = 0,
    cpu_threads: int | None = 1,
) -> list[float]:
    """Train `model` on (X, y) with Adam and mean squared error; return the mean loss of each epoch.

    Runs wherever the model is: the data go to the model's device once, batches are drawn there,
    and the losses stay there until one `.tolist()` at the end.

    On the CPU the loop uses `cpu_threads` torch threads (None keeps torch's setting). For a model
    this small extra threads only add waiting, and a great deal of it when other programs share
    the cores (measured here: 0.4 s with one thread, 10 s with two on a busy 2-core machine).
    """
    device = model_device(model)
    X, y = X.to(device), y.to(device)  # one copy each, before the loop
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    g = torch.Generator().manual_seed(seed)
    n = X.shape[0]
    history = []
    model.train()
    with threads_on_cpu(device, cpu_threads):
        for _ in range(epochs):
            order = torch.randperm(n, generator=g).to(device)
            total = torch.zeros((), device=device)
            for start in range(0, n, batch_size):
                idx = order[start : start + batch_size]
                loss = loss_fn(model(X[idx]), y[idx])
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                total += loss.detach() * idx.numel()
            history.append(total / n)
    return torch.stack(history).tolist()  # the only device → host copy of the loop
