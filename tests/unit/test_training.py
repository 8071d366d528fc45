"""helpers.training: data, model, CPU threads; and where a model lives (`tests/gpu/models.py`, for the GPU tests)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from helpers.devices import DeviceError
from helpers.training import make_data, make_model, threads_on_cpu
from tests.gpu.models import model_device


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


def test_threads_on_cpu_refuses_a_device_spelling_torch_does_not_know() -> None:
    before = torch.get_num_threads()
    with pytest.raises(DeviceError, match="not a device torch knows"), threads_on_cpu("gpu", 1):
        pass
    assert torch.get_num_threads() == before
