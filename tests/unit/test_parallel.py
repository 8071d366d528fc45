"""The data-parallel stand-in does what replicate/scatter/parallel_apply/gather do, and says it is a stand-in."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from helpers import parallel as par


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))


@pytest.mark.parametrize(("rows", "devices", "sizes"), [(10, 2, [5, 5]), (7, 3, [3, 3, 1]), (9, 2, [5, 4])])
def test_stand_in_equals_the_single_device_forward(rows: int, devices: int, sizes: list[int]) -> None:
    model, batch = _model(), torch.randn(rows, 6)
    trace = par.simulated_data_parallel_forward(model, batch, devices)
    assert trace.simulated and trace.chunk_sizes == sizes
    assert par.check_matches_single_device(model, batch, trace.result) < 1e-6
    assert par.STAND_IN_LABEL in trace.describe()


def test_a_small_batch_uses_fewer_devices_and_says_so() -> None:
    trace = par.simulated_data_parallel_forward(_model(), torch.randn(2, 6), 4)
    assert trace.chunk_sizes == [1, 1] and len(trace.replica_devices) == 2
    assert "only 2 chunks" in trace.notes[0]


def test_gradients_through_the_replicas_add_up_in_the_original() -> None:
    model, batch = _model(), torch.randn(8, 6)
    par.simulated_data_parallel_forward(model, batch, 2).result.sum().backward()
    stand_in = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(batch).sum().backward()
    for a, b in zip(stand_in, (p.grad for p in model.parameters()), strict=True):
        assert torch.allclose(a, b, atol=1e-6)


def test_replicas_are_copies_not_the_original() -> None:
    model = _model()
    replicas = par.replicate_on_cpu(model, 2)
    assert len(replicas) == 2 and all(r is not model for r in replicas)
    assert all(not r[0].weight.is_leaf for r in replicas), "replica parameters are copies inside the graph"
    assert torch.equal(replicas[0][0].weight, model[0].weight)


def test_tensor_device_finds_parameters_that_are_plain_attributes() -> None:
    model = _model()
    assert par._tensor_device(model) == torch.device("cpu")
    replica = par.replicate_on_cpu(model, 1)[0]
    replica[0]._parameters.clear()
    replica[0].weight = model[0].weight.clone()  # how torch's replicate stores a replica's parameters
    assert par._tensor_device(replica[0]) == torch.device("cpu")
    with pytest.raises(ValueError, match="no tensors"):
        par._tensor_device(nn.ReLU())


def test_check_catches_a_wrong_result() -> None:
    model, batch = _model(), torch.randn(4, 6)
    with pytest.raises(AssertionError, match="differs"):
        par.check_matches_single_device(model, batch, model(batch).detach() + 1)
    with pytest.raises(AssertionError, match="shapes differ"):
        par.check_matches_single_device(model, batch, torch.zeros(3, 3))


@pytest.mark.parametrize(
    ("batch", "devices", "error"),
    [
        ("not a tensor", 2, TypeError),
        (torch.zeros(0, 6), 2, ValueError),
        (torch.tensor(1.0), 2, ValueError),
        (torch.zeros(4, 6), 0, ValueError),
        (torch.zeros(4, 6), True, ValueError),
    ],
)
def test_bad_inputs_are_refused(batch: object, devices: object, error: type) -> None:
    with pytest.raises(error):
        par.simulated_data_parallel_forward(_model(), batch, devices)  # type: ignore[arg-type]


def test_the_real_path_needs_gpus() -> None:
    if torch.cuda.device_count() >= 2:
        pytest.skip("this machine has GPUs; tests/test_gpu_ch08.py covers the real path")
    with pytest.raises(RuntimeError, match="needs 2 CUDA GPUs"):
        par.data_parallel_forward(_model(), torch.randn(4, 6), [0, 1])
    with pytest.raises(ValueError, match="at least one"):
        par.data_parallel_forward(_model(), torch.randn(4, 6), [])


def test_the_diagram_draws() -> None:
    import matplotlib

    matplotlib.use("Agg")
    fig = par.draw_batch_flow(8, 2)
    assert fig.axes and "8" in fig.axes[0].get_title()
    import matplotlib.pyplot as plt

    plt.close(fig)
