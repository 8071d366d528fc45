"""helpers.training: data, model, CPU threads, where a model lives, and bad inputs."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from helpers.training import make_data, make_model, model_device, threads_on_cpu


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


def test_threads_on_cpu_sets_and_restores_the_thread_count() -> None:
    before = torch.get_num_threads()
    with threads_on_cpu(torch.device("cpu"), 1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with threads_on_cpu("meta", 1):  # not the CPU: torch's setting is left alone
        assert torch.get_num_threads() == before
    with threads_on_cpu("cpu", None):
        assert torch.get_num_threads() == before


def test_threads_on_cpu_restores_the_count_after_an_error() -> None:
    before = torch.get_num_threads()
    with pytest.raises(KeyError), threads_on_cpu("cpu", 1):
        raise KeyError("boom")
    assert torch.get_num_threads() == before


def test_threads_on_cpu_rejects_bad_counts() -> None:
    with pytest.raises(ValueError, match="cpu_threads must be at least 1"), threads_on_cpu("cpu", 0):
        pass
    with pytest.raises(TypeError, match="whole number"), threads_on_cpu("cpu", 1.5):
        pass
