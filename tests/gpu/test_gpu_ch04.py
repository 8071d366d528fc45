"""Chapter 04's GPU claims: Module.to, where parameters live, input mismatch, the training loop, checkpoints
with optimizer state, autocast and the gradient scaler (and clipping only after `unscale_`, exercise 5), and
float16 autocast being faster on a GPU.

The floors are ones a Kaggle T4 (sm_75, float16 tensor cores) meets.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from helpers.devices import is_device_mismatch_error
from helpers.exercises.ch04 import low_precision
from helpers.timing import time_call
from helpers.training import make_data, make_model

from .missing import missing
from .models import model_device


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


def _train(model, optimizer, X, y, epochs, batch_size=64, *, mixed=False, low=None):
    """Chapter 04's loops (sections 4 and 6): on the model's device; autocast (in `low`, else the chapter's
    choice) when `mixed`, with a gradient scaler for float16 on CUDA."""
    device = next(model.parameters()).device
    low = low or low_precision(device)
    scaler = torch.amp.GradScaler(device.type, enabled=mixed and device.type == "cuda" and low == torch.float16)
    X, y = X.to(device), y.to(device)
    n, history = X.shape[0], []
    for _ in range(epochs):
        order = torch.randperm(n, device=device)
        total = torch.zeros((), device=device)
        for start in range(0, n, batch_size):
            idx = order[start : start + batch_size]
            with torch.autocast(device_type=device.type, dtype=low, enabled=mixed):
                loss = nn.functional.mse_loss(model(X[idx]), y[idx])
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
            total += loss.detach() * len(idx)
        history.append(total / n)
    return torch.stack(history).tolist(), scaler.get_scale()


@pytest.mark.gpu
def test_randperm_is_made_on_the_gpu_and_is_a_permutation() -> None:
    order = torch.randperm(1000, device="cuda")
    assert order.device.type == "cuda" and order.dtype == torch.int64
    assert torch.equal(order.sort().values, torch.arange(1000, device="cuda"))


@pytest.mark.gpu
def test_the_training_loop_runs_on_the_gpu_and_stays_there() -> None:
    X, y = make_data(512)
    net = make_model().to("cuda")
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
    losses, _ = _train(net, optimizer, X, y, 10)
    assert len(losses) == 10 and all(isinstance(v, float) for v in losses)
    assert losses[-1] < 0.75 * losses[0], losses  # on the CPU: 0.51 → 0.06 in 12 epochs
    assert model_device(net).type == "cuda"
    assert X.device.type == "cpu", "the caller's data are left where they were"
    state = optimizer.state[net[0].weight]
    assert state["exp_avg"].device.type == "cuda" and state["step"].device.type == "cpu"


@pytest.mark.gpu
def test_the_chapter_picks_bfloat16_from_ampere_on_and_float16_before() -> None:
    """A T4 (7.5) gets float16 and a scaler; an A100 or H100 (8.0, 9.0) bfloat16 without one."""
    major, _ = torch.cuda.get_device_capability()
    assert low_precision(torch.device("cuda")) == (torch.bfloat16 if major >= 8 else torch.float16)


@pytest.mark.gpu
def test_bfloat16_autocast_trains_without_a_scaler_where_the_gpu_has_it() -> None:
    if not torch.cuda.is_bf16_supported(including_emulation=False):
        missing("bfloat16 hardware (compute capability 8.0 or newer)", "the chapter uses float16 with a scaler here")
    X, y = make_data(512)
    net = make_model().to("cuda")
    losses, scale = _train(net, torch.optim.Adam(net.parameters(), lr=1e-2), X, y, 10, mixed=True)
    assert all(math.isfinite(v) for v in losses) and losses[-1] < 0.75 * losses[0], losses
    assert scale == 1.0, "a disabled scaler reports a scale of 1"
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        assert net(X[:2].cuda()).dtype == torch.bfloat16


@pytest.mark.gpu
def test_float16_autocast_with_a_grad_scaler_trains_and_keeps_a_finite_scale() -> None:
    X, y = make_data(512)
    net = make_model().to("cuda")
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    losses, scale = _train(net, opt, X, y, 10, mixed=True, low=torch.float16)
    assert all(math.isfinite(v) for v in losses) and losses[-1] < 0.75 * losses[0], losses
    assert math.isfinite(scale) and scale > 0, scale
    assert net[0].weight.dtype == torch.float32, "autocast leaves the weights in float32"


@pytest.mark.gpu
def test_the_grad_scaler_scales_the_loss_and_unscales_before_the_step() -> None:
    net = nn.Linear(4, 1).cuda()
    scaler = torch.amp.GradScaler("cuda", init_scale=1024.0)
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        loss = nn.functional.mse_loss(net(torch.ones(2, 4, device="cuda")), torch.zeros(2, 1, device="cuda"))
    assert loss.dtype == torch.float32, "mse_loss runs in float32 under CUDA autocast"
    scaled = scaler.scale(loss)
    torch.testing.assert_close(scaled, loss * 1024.0)
    scaled.backward()
    plain = nn.Linear(4, 1).cuda()
    plain.load_state_dict(net.state_dict())
    nn.functional.mse_loss(plain(torch.ones(2, 4, device="cuda")), torch.zeros(2, 1, device="cuda")).backward()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    scaler.unscale_(optimizer)  # gradients divided by the scale, as scaler.step would do
    torch.testing.assert_close(net.weight.grad, plain.weight.grad, rtol=1e-2, atol=1e-3)
    scaler.step(optimizer)
    scaler.update()
    assert scaler.get_scale() == 1024.0, "a good step keeps the scale until growth_interval good steps"


@pytest.mark.gpu
def test_the_grad_scaler_skips_a_step_with_inf_gradients_and_lowers_the_scale() -> None:
    net = nn.Linear(2, 1).cuda()
    before = net.weight.detach().clone()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda", init_scale=1024.0)
    loss = net(torch.tensor([[math.inf, 1.0]], device="cuda")).sum()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    assert torch.equal(net.weight.detach(), before), "the step was skipped"
    assert scaler.get_scale() == 512.0, "and the scale halved (backoff_factor 0.5)"


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
def test_optimizer_state_saved_on_the_gpu_resumes_on_the_cpu_and_back(tmp_path) -> None:
    X, y = make_data(256)
    net = make_model().to("cuda")
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
    _train(net, optimizer, X, y, 2)
    path = tmp_path / "checkpoint.pt"
    torch.save({"model": net.state_dict(), "optimizer": optimizer.state_dict()}, path)
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    on_cpu = make_model(seed=1)
    on_cpu_optimizer = torch.optim.Adam(on_cpu.parameters(), lr=1e-2)
    on_cpu.load_state_dict(checkpoint["model"])
    on_cpu_optimizer.load_state_dict(checkpoint["optimizer"])
    assert all(v.device.type == "cpu" for v in on_cpu_optimizer.state[on_cpu[0].weight].values())
    torch.testing.assert_close(
        on_cpu_optimizer.state[on_cpu[0].weight]["exp_avg"], optimizer.state[net[0].weight]["exp_avg"].cpu()
    )
    back = make_model(seed=2).to("cuda")
    back_optimizer = torch.optim.Adam(back.parameters(), lr=1e-2)
    back_optimizer.load_state_dict(checkpoint["optimizer"])  # CPU state, GPU parameters
    state = back_optimizer.state[back[0].weight]
    assert state["exp_avg"].device.type == "cuda" and state["step"].device.type == "cpu"


@pytest.mark.gpu
def test_autocast_runs_linear_layers_in_float16_on_cuda() -> None:
    net = nn.Linear(8, 4).cuda()
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        out = net(torch.rand(2, 8, device="cuda"))
    assert out.dtype == torch.float16
    assert net.weight.dtype == torch.float32
    assert net(torch.rand(2, 8, device="cuda")).dtype == torch.float32, "outside the block: float32 again"


@pytest.mark.gpu
def test_float16_autocast_makes_a_wide_training_step_faster_than_float32() -> None:
    """Chapter 04 section 6, full size on a GPU: T4 float16 tensor cores give well over 1.5x (65 vs 8.1 TFLOP/s)."""
    width, batch = 4096, 2048
    torch.manual_seed(0)
    wide = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 1))
    wide.cuda()
    optimizer = torch.optim.SGD(wide.parameters(), lr=1e-4)
    xb, yb = torch.randn(batch, width, device="cuda"), torch.randn(batch, 1, device="cuda")

    def step(mixed: bool) -> None:
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=mixed):
            loss = nn.functional.mse_loss(wide(xb), yb)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    fp32 = time_call(lambda: step(False), "cuda", min_run_time=0.5)
    fp16 = time_call(lambda: step(True), "cuda", min_run_time=0.5)
    assert fp16.seconds * 1.5 < fp32.seconds, (str(fp32), str(fp16))


def _clipped_step(device: str, unscale_first: bool) -> tuple[torch.Tensor, float, float]:
    """Exercise 5's step in float16 with a scaler at 2**16, clipping after (or, the bug, before) `unscale_`.

    At zero weights the identity input gives each weight a gradient of -y/2 = ±1/16 (norm 1/8, bias 0),
    scaled to ±4096: every number is exact in float16 and below its largest, 65504.
    Returns the weights after one step, the norm `clip_grad_norm_` returned, and the scale after the update.
    """
    model = nn.Linear(4, 1).to(device)
    with torch.no_grad():
        model.weight.zero_()
        model.bias.zero_()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    scaler = torch.amp.GradScaler(device, init_scale=2.0**16)
    x = torch.eye(4, device=device)
    y = torch.tensor([[0.125], [0.125], [-0.125], [-0.125]], device=device)
    with torch.autocast(device_type=device, dtype=torch.float16):
        loss = nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    if unscale_first:
        scaler.unscale_(optimizer)
    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1 / 64)
    if not unscale_first:
        scaler.unscale_(optimizer)
    scaler.step(optimizer)
    scaler.update()
    return model.weight.detach().cpu(), float(norm), scaler.get_scale()


@pytest.mark.gpu
def test_clipping_before_unscale_makes_the_float16_step_scale_times_too_small() -> None:
    """Exercise 5 on CUDA in float16: the fixed order takes the clipped step; the bug a step 65536 times smaller."""
    clipped = torch.tensor([[1.0, 1.0, -1.0, -1.0]]) / 256  # -lr * g * (max_norm / |g|) = 0.5 * (1/16) / 8
    weights, norm, scale = _clipped_step("cuda", unscale_first=True)
    torch.testing.assert_close(weights, clipped, rtol=1e-4, atol=0.0)
    assert norm == pytest.approx(0.125, rel=1e-6) and scale == 2.0**16, (norm, scale)
    weights, norm, scale = _clipped_step("cuda", unscale_first=False)
    torch.testing.assert_close(weights * 2.0**16, clipped, rtol=1e-3, atol=0.0)
    assert norm == pytest.approx(0.125 * 2.0**16, rel=1e-6), "the bug measures the scaled gradients' norm"
    assert scale == 2.0**16, "the step was taken, not skipped: no gradient overflowed"
