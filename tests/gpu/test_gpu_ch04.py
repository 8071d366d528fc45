"""Chapter 04's GPU claims: Module.to, where parameters live, input mismatch, training, checkpoints, autocast."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from helpers.devices import is_device_mismatch_error
from helpers.training import make_data, make_model, model_device, train


class _Scaled(nn.Module):
    """Chapter 04's example: parameters, buffers, and a plain tensor attribute that `to` does not know."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(3, 3)
        self.norm = nn.BatchNorm1d(3)
        self.stray = torch.ones(3)  # a plain attribute: not registered, so not moved

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.linear(x)) + self.stray


@pytest.mark.gpu
def test_module_to_moves_parameters_and_buffers_in_place() -> None:
    net = _Scaled()
    assert net.to("cuda") is net
    here = torch.device("cuda", torch.cuda.current_device())  # "cuda" without an index: the current GPU
    assert all(p.device == here for p in net.parameters())
    assert all(b.device == here for b in net.buffers())
    assert model_device(net) == here
    assert net.stray.device.type == "cpu"


@pytest.mark.gpu
def test_a_plain_tensor_attribute_breaks_the_forward_pass_until_it_is_a_buffer() -> None:
    net = _Scaled().to("cuda")
    x = torch.rand(4, 3, device=model_device(net))
    with pytest.raises(RuntimeError) as info:
        net(x)
    assert is_device_mismatch_error(info.value), str(info.value)
    stray = net.stray
    del net.stray
    net.register_buffer("stray", stray)
    net.to("cuda")
    assert net.stray.device == model_device(net) and net(x).device == model_device(net)


@pytest.mark.gpu
def test_cpu_input_to_a_gpu_model_raises_the_device_mismatch_error() -> None:
    net = nn.Linear(3, 1).cuda()
    with pytest.raises(RuntimeError) as info:
        net(torch.rand(2, 3))
    assert is_device_mismatch_error(info.value), str(info.value)
    assert net(torch.rand(2, 3).to(model_device(net))).device == model_device(net)


@pytest.mark.gpu
def test_training_runs_on_the_gpu_and_stays_there() -> None:
    X, y = make_data(512)
    net = make_model().to("cuda")
    losses = train(net, X, y, epochs=10)
    assert len(losses) == 10 and all(isinstance(v, float) for v in losses)
    assert losses[-1] < 0.75 * losses[0], losses  # on the CPU: 0.52 → 0.24 in 10 epochs
    assert model_device(net).type == "cuda"
    assert X.device.type == "cpu", "the caller's data are left where they were"


@pytest.mark.gpu
def test_a_gpu_checkpoint_loads_onto_the_cpu_with_map_location(tmp_path) -> None:
    net = make_model().to("cuda")
    path = tmp_path / "net.pt"
    torch.save(net.state_dict(), path)
    as_saved = torch.load(path, weights_only=True)
    assert all(v.device == model_device(net) for v in as_saved.values()), "without map_location: where it was saved"
    on_cpu = torch.load(path, map_location="cpu", weights_only=True)
    assert all(v.device.type == "cpu" for v in on_cpu.values())
    restored = make_model(seed=1)
    restored.load_state_dict(on_cpu)
    X = torch.rand(4, 8)
    with torch.no_grad():
        torch.testing.assert_close(restored(X), net(X.cuda()).cpu())


@pytest.mark.gpu
def test_autocast_runs_linear_layers_in_float16_on_cuda() -> None:
    net = nn.Linear(8, 4).cuda()
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        out = net(torch.rand(2, 8, device="cuda"))
    assert out.dtype == torch.float16
    assert net.weight.dtype == torch.float32
    assert net(torch.rand(2, 8, device="cuda")).dtype == torch.float32, "outside the block: float32 again"
