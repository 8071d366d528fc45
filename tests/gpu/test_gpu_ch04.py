"""Chapter 04's GPU claims: Module.to, where parameters live, input mismatch, the training loop, checkpoints
with optimizer state, autocast and the gradient scaler (float16 as on a T4; clipping only after `unscale_`, exercise
2), exercise 1's checker on a real GPU, and float16 autocast being faster on a GPU.

The floors are ones a Kaggle T4 (sm_75, float16 tensor cores, no bfloat16 hardware) and an H100 both meet.
"""

from __future__ import annotations

import json
import math

import pytest
import torch
from torch import nn

from helpers.exercises.ch04 import low_precision
from helpers.timing import time_call
from helpers.training import make_data, make_model

from .chapter_files import NOTEBOOKS
from .errors import is_device_mismatch_error
from .missing import missing
from .models import model_device
from .recorded import recorded


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


def _chapter_function(name: str, **names: object):
    """The chapter's own `def name(...)` cell (the function alone), as the notebook runs it: with torch, nn and the
    chapter's `low_precision`, or the `names` given instead."""
    for cell in json.loads((NOTEBOOKS / "04_models_on_the_gpu.ipynb").read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and source.startswith(f"def {name}("):
            namespace = {"torch": torch, "nn": nn, "low_precision": low_precision, **names}
            exec(source.split("\n\n\n")[0], namespace)
            return namespace[name]
    raise AssertionError(f"chapter 04 has no cell defining {name}")


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
    losses = _chapter_function("train")(net, optimizer, X, y, 10)
    assert len(losses) == 10 and all(isinstance(v, float) for v in losses)
    assert losses[-1] < 0.75 * losses[0], losses  # on the CPU, the same 10 epochs: about 0.52 → 0.29
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
    losses, scale = _chapter_function("train_amp")(net, torch.optim.Adam(net.parameters(), lr=1e-2), X, y, 10)
    assert all(math.isfinite(v) for v in losses) and losses[-1] < 0.75 * losses[0], losses
    assert scale == 1.0, "a disabled scaler reports a scale of 1"
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        assert net(X[:2].cuda()).dtype == torch.bfloat16


@pytest.mark.gpu
def test_the_chapters_float16_training_with_a_scaler_runs_on_cuda_as_on_a_t4() -> None:
    """Section 6's own `train_amp` with `low_precision` giving float16, as on a T4 (which has no bfloat16 hardware):
    float16 forward passes, a scaler that is on and keeps a finite, positive scale, steps taken (a few may be skipped
    while the scale settles) and the loss falling. Floors a T4 and an H100 both meet: in bfloat16 on a CPU the same
    loop on the same data takes the loss from about 0.53 to 0.18-0.19 in 12 epochs (torch 2.10, 2.13, 2.15)."""
    train_amp = _chapter_function("train_amp", low_precision=lambda device: torch.float16)
    X, y = make_data(1024)
    net = make_model().to("cuda")
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
    taken, dtypes = [], set()
    optimizer.register_step_post_hook(lambda *_: taken.append(1))  # scaler.step does not call a step it skips
    net.register_forward_hook(lambda module, inputs, output: dtypes.add(output.dtype))
    losses, scale = train_amp(net, optimizer, X, y, 12)
    assert dtypes == {torch.float16}, dtypes
    assert math.isfinite(scale) and 1.0 < scale <= 2.0**16, f"{scale}: 1.0 is a scaler that is off"
    assert len(taken) >= 0.9 * 12 * (1024 // 64), len(taken)
    assert all(math.isfinite(v) for v in losses) and losses[-1] < 0.5 * losses[0], losses
    assert net[0].weight.dtype == torch.float32, "autocast leaves the weights in float32"


@pytest.mark.gpu
def test_question_1_checker_sees_on_this_gpu_what_it_sees_on_the_stand_ins(tmp_path) -> None:
    """The checker's GPU cases, for real: the solution passes everywhere (resuming across devices, float16 forced);
    on this GPU the optimizer's state left on the CPU (the model moved after loading), float16 gradients left
    unscaled (one of them 0) and a fixed loss scale that steps on an overflow are told as on the CPU's stand-ins."""
    from helpers.answers import Wrong
    from helpers.exercises import ch04
    from helpers.exercises.solutions.ch04 import SOLUTIONS

    question = ch04.QUESTIONS[0]

    def train(code: str):
        namespace = {"torch": torch, "nn": nn, **question.context()}
        exec(code, namespace)
        return namespace["fit"]

    outcome = question.evaluate({"fit": train(SOLUTIONS[1])})
    assert outcome.correct, outcome.message
    gpu, cpu, data = torch.device("cuda", torch.cuda.device_count() - 1), torch.device("cpu"), make_data(64)
    path = str(tmp_path / "cpu.pt")
    start = ch04._train(train(SOLUTIONS[1]), cpu, make_model(seed=1), data, path, "new")
    late = SOLUTIONS[1].replace("    model.to(device)\n    X, y", "    X, y")
    late = late.replace("    for _ in range", "    model.to(device)\n    for _ in range")
    with pytest.raises(Wrong, match=f"stepped the optimizer with its state on cpu and the model on {gpu}"):
        ch04._train(train(late), gpu, make_model(seed=2), data, path, "resuming", start=start)
    unscaled = SOLUTIONS[1].replace("scaler.scale(loss).backward()", "loss.backward()")
    unscaled = unscaled.replace("scaler.step(optimizer)", "optimizer.step()").replace("        scaler.update()\n", "")
    tiny = nn.Linear(4, 1, bias=False)
    nn.init.zeros_(tiny.weight)
    with pytest.raises(Wrong, match="never moved the weight whose gradient is -1e-8"):
        ch04._train(train(unscaled), gpu, tiny, ch04._TINY, str(tmp_path / "tiny.pt"), "new", half=True, least=1)
    static = unscaled.replace("        loss.backward()\n", "        (loss * 1024).backward()\n")  # no inf check
    static = static.replace(
        "        optimizer.step()\n",
        "        [p.grad.div_(1024) for p in model.parameters()]\n        optimizer.step()\n",
    )
    with pytest.raises(Wrong, match="took an optimizer step with inf or nan gradients"):
        ch04._train(
            train(static), gpu, nn.Linear(4, 1), ch04._HUGE, str(tmp_path / "huge.pt"), "new", half=True, least=0
        )


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
    _chapter_function("train")(net, optimizer, X, y, 2)
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
def test_adams_step_loaded_onto_the_gpu_makes_each_step_wait_and_loaded_on_the_cpu_does_not(tmp_path) -> None:
    """Section 5: Adam, neither fused nor capturable, reads `step` with `.item()` for every parameter at every step
    (`_get_value`). Loaded with map_location="cpu" the counter stays on the CPU and a step queues without a wait;
    loaded onto the GPU it stays there, and the step synchronises (CUDA's sync debug mode raises on it)."""
    X, y = make_data(256)
    net = make_model().to("cuda")
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
    _chapter_function("train")(net, optimizer, X, y, 1)
    torch.save({"model": net.state_dict(), "optimizer": optimizer.state_dict()}, path := tmp_path / "checkpoint.pt")
    for where, waits in (("cpu", False), ("cuda", True)):
        checkpoint = torch.load(path, map_location=where, weights_only=True)
        resumed = make_model(seed=1).to("cuda")
        resumed_optimizer = torch.optim.Adam(resumed.parameters(), lr=1e-2)
        resumed.load_state_dict(checkpoint["model"])
        resumed_optimizer.load_state_dict(checkpoint["optimizer"])
        assert resumed_optimizer.state[resumed[0].weight]["step"].device.type == where
        nn.functional.mse_loss(resumed(X[:64].cuda()), y[:64].cuda()).backward()
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")
        try:
            if waits:
                with pytest.raises(RuntimeError, match="synchroniz"):
                    resumed_optimizer.step()
            else:
                resumed_optimizer.step()  # raises if anything in the step waits for the GPU
        finally:
            torch.cuda.set_sync_debug_mode(0)


@pytest.mark.gpu
def test_the_chapters_recorded_autocast_speed_up_is_real() -> None:
    """Section 6's recorded figure: autocast (bfloat16 from Ampere on, float16 on a T4) over float32 for one training
    step of the 4096-wide MLP, at least 1.5x on a T4 (65 against 8.1 TFLOP/s on its datasheet) and on an H100."""
    figure = recorded("04", "autocast over float32, a 4096-wide MLP's training step")
    assert figure["value"] >= 1.5, figure


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
    """Exercise 2's step in float16 with a scaler at 2**16, clipping after (or, the bug, before) `unscale_`.

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
    """Exercise 2 on CUDA in float16: the fixed order takes the clipped step; the bug a step 65536 times smaller."""
    clipped = torch.tensor([[1.0, 1.0, -1.0, -1.0]]) / 256  # -lr * g * (max_norm / |g|) = 0.5 * (1/16) / 8
    weights, norm, scale = _clipped_step("cuda", unscale_first=True)
    torch.testing.assert_close(weights, clipped, rtol=1e-4, atol=0.0)
    assert norm == pytest.approx(0.125, rel=1e-6) and scale == 2.0**16, (norm, scale)
    weights, norm, scale = _clipped_step("cuda", unscale_first=False)
    torch.testing.assert_close(weights * 2.0**16, clipped, rtol=1e-3, atol=0.0)
    assert norm == pytest.approx(0.125 * 2.0**16, rel=1e-6), "the bug measures the scaled gradients' norm"
    assert scale == 2.0**16, "the step was taken, not skipped: no gradient overflowed"


@pytest.mark.gpu
def test_question_2_checker_on_this_gpu_refuses_a_norm_copied_to_the_host() -> None:
    """On a GPU a norm returned on the CPU is a copy each step (a wait for the GPU): told so; the gradients cleared at
    the start of the step, as many loops do, pass."""
    from helpers.exercises import ch04
    from helpers.exercises.solutions.ch04 import SOLUTIONS

    question = ch04.QUESTIONS[1]

    def step(code: str):
        namespace = {"torch": torch, "nn": nn, **question.context()}
        exec(code, namespace)
        return {"clipped_step": namespace["clipped_step"]}

    early = SOLUTIONS[2].replace("    optimizer.zero_grad()\n", "")
    early = early.replace("    device =", "    optimizer.zero_grad()\n    device =")
    outcome = question.evaluate(step(early))
    assert outcome.correct, outcome.message
    outcome = question.evaluate(step(SOLUTIONS[2].replace("return norm", "return norm.cpu()")))
    gpu = torch.device("cuda", torch.cuda.device_count() - 1)
    assert not outcome.correct and f"not clip_grad_norm_'s tensor on {gpu}" in outcome.message, outcome.message
