"""helpers.training: data, model, the device-agnostic loop, and bad inputs."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from helpers.training import make_data, make_model, model_device, train


def test_data_are_reproducible_and_on_the_cpu() -> None:
    X1, y1 = make_data(32, 4, seed=3)
    X2, y2 = make_data(32, 4, seed=3)
    assert X1.shape == (32, 4) and y1.shape == (32, 1)
    assert X1.device.type == "cpu" and torch.equal(X1, X2) and torch.equal(y1, y2)
    assert not torch.equal(make_data(32, 4, seed=4)[0], X1)


def test_model_is_reproducible_and_leaves_the_global_seed_alone() -> None:
    torch.manual_seed(123)
    expected = torch.rand(1)
    torch.manual_seed(123)
    a, b = make_model(4, 8, seed=1), make_model(4, 8, seed=1)
    assert torch.rand(1).item() == expected.item()
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    assert model_device(a).type == "cpu"


def test_training_lowers_the_loss_and_returns_floats() -> None:
    X, y = make_data(256)
    model = make_model()
    threads = torch.get_num_threads()
    losses = train(model, X, y, epochs=6, batch_size=32, lr=1e-2)
    assert len(losses) == 6 and all(isinstance(v, float) and math.isfinite(v) for v in losses)
    assert losses[-1] < losses[0]
    assert torch.get_num_threads() == threads, "the thread count is restored"


def test_training_is_deterministic() -> None:
    X, y = make_data(128)
    assert train(make_model(), X, y, epochs=2) == train(make_model(), X, y, epochs=2)


def test_model_device_follows_the_model() -> None:
    model = make_model().to("meta")
    assert model_device(model).type == "meta"
    with pytest.raises(ValueError, match="no parameters"):
        model_device(nn.ReLU())


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n": 0}, ValueError, "n must be at least 1"),
        ({"n": -5}, ValueError, "n must be at least 1"),
        ({"features": 0}, ValueError, "features must be at least 1"),
        ({"n": 10.5}, TypeError, "whole number"),
        ({"noise": -0.1}, ValueError, "cannot be negative"),
    ],
)
def test_make_data_rejects_bad_inputs(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        make_data(**kwargs)


def test_make_model_rejects_bad_inputs() -> None:
    with pytest.raises(ValueError, match="hidden must be at least 1"):
        make_model(hidden=0)
    with pytest.raises(TypeError, match="whole number"):
        make_model(features="8")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"epochs": 0}, ValueError, "epochs must be at least 1"),
        ({"batch_size": -1}, ValueError, "batch_size must be at least 1"),
        ({"lr": 0.0}, ValueError, "must be positive"),
        ({"lr": -1e-3}, ValueError, "must be positive"),
        ({"cpu_threads": 0}, ValueError, "cpu_threads must be at least 1"),
        ({"epochs": 1.5}, TypeError, "whole number"),
    ],
)
def test_train_rejects_bad_settings(kwargs, error, match) -> None:
    X, y = make_data(16)
    with pytest.raises(error, match=match):
        train(make_model(), X, y, **kwargs)


def test_train_rejects_mismatched_data() -> None:
    X, y = make_data(16)
    with pytest.raises(ValueError, match="16 samples but y has 8"):
        train(make_model(), X, y[:8])
    with pytest.raises(ValueError, match="2-D"):
        train(make_model(), X, y.squeeze(1))


def test_train_brings_cpu_data_to_the_model_device() -> None:
    """With the model on meta, the loop moves the data there and runs (values are not computed)."""
    X, y = make_data(16)
    model = make_model().to("meta")
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        train(model, X, y, epochs=1)  # only the final .tolist() fails: meta tensors hold no values
    assert model_device(model).type == "meta", "the loop moved the data, not the model"
