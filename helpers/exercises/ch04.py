"""Chapter 04 exercises: bring the data to the model, write a training epoch, load a checkpoint onto a
chosen device, write one mixed-precision training step, and debug one that clips its gradients.

The checkers use the `meta` device (present on every machine) as the "other" device, and the CPU
(bfloat16 autocast, a CPU gradient scaler) for mixed precision.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ..checking import Question, Wrong, expect_function, expect_number
from ..devices import is_device_mismatch_error
from ..training import make_data, make_model
from .calls import CallLog

# The first optimizer a process builds imports torch._dynamo, which takes seconds. One is built here,
# as the exercises load, so that this import never runs inside a checker's time limit: an import cut
# short there leaves torch._dynamo half-initialised, and every later check fails, until a restart.
torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1)


#: Calls that would take a tensor off the `meta` device, or read its values.
_OFF_DEVICE = frozenset({"to", "cpu", "cuda", "item", "tolist", "numpy", "__float__"})
#: Calls that bring a tensor's values to the host.
_HOST_READS = frozenset({"item", "tolist", "__float__", "__int__", "cpu", "numpy"})


def _check_predict(fn: Any) -> None:
    expect_function(fn, "predict")
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    x = torch.randn(4, 3)
    x_before, want = x.clone(), model(x).detach()
    got = fn(model, x)
    if not torch.equal(x, x_before):
        raise Wrong("predict changed the caller's x: leave it as it is and run the model on a moved copy")
    if not isinstance(got, torch.Tensor):
        raise Wrong(f"predict(model, x) returned a {type(got).__name__}, not the model's output tensor")
    if got.shape != (4, 2) or not torch.allclose(got, want):
        raise Wrong("with model and x on the same device, predict(model, x) should equal model(x)")
    model_on_meta, log = nn.Linear(3, 2).to("meta"), CallLog()
    try:
        with log:
            got = fn(model_on_meta, x)
    except Exception:
        off_meta = [c for c in log.named(_OFF_DEVICE) if c.on is not None and c.on.type == "meta"]
        if off_meta:  # moving meta tensors (the model, the output) raises: say what the rule is
            raise Wrong(
                f"with the model on meta, predict called {off_meta[0].written} on a tensor on the model's device: "
                "leave the model and the output where the model lives, and move only x"
            ) from None
        raise
    if next(model_on_meta.parameters()).device.type != "meta":
        raise Wrong("predict moved the model: move the (small) input to the model, not the model to the input")
    if not isinstance(got, torch.Tensor) or got.device.type != "meta":
        raise Wrong("with the model on meta the output should be computed there, on the model's device")
    if x.device.type != "cpu":
        raise Wrong("leave the caller's x where it was; move a copy")


def _check_load_on(fn: Any) -> None:
    expect_function(fn, "load_on")
    torch.manual_seed(0)
    saved = nn.Linear(3, 1).state_dict()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "weights.pt"
        torch.save(saved, path)
        on_meta = fn(path, torch.device("meta"))
        on_cpu = fn(path, torch.device("cpu"))
    for got in (on_meta, on_cpu):
        if not isinstance(got, dict) or set(got) != set(saved):
            raise Wrong(f"return the state dict itself (a dict with keys {sorted(saved)}), not {type(got).__name__}")
    if any(v.device.type != "meta" for v in on_meta.values()):
        raise Wrong("load_on(path, 'meta') left tensors elsewhere: tell torch.load where to put them (map_location)")
    if not all(torch.equal(on_cpu[k], saved[k]) for k in saved):
        raise Wrong("loaded onto the CPU the tensors should hold the saved values")


def _reference_epoch(model: nn.Module, optimizer: torch.optim.Optimizer, X, y, batch_size: int) -> torch.Tensor:
    """One epoch in order, one optimizer step per batch of mean squared error: what train_epoch should do."""
    total, batches = torch.zeros(()), 0
    for inputs, targets in zip(X.split(batch_size), y.split(batch_size), strict=True):
        loss = nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        total, batches = total + loss.detach(), batches + 1
    return total / batches


def _same_weights(a: nn.Module, b: nn.Module) -> bool:
    return all(torch.allclose(p, q, atol=1e-6) for p, q in zip(a.parameters(), b.parameters(), strict=True))


def _check_train_epoch(fn: Any) -> None:
    expect_function(fn, "train_epoch", "(model, optimizer, X, y, batch_size)")
    X, y = make_data(36, 4, seed=1)
    theirs, ours = make_model(4, 8, seed=2), make_model(4, 8, seed=2)
    log, batches = CallLog(), []
    theirs.register_forward_pre_hook(
        lambda module, inputs: batches.append(
            inputs[0].shape[0] if inputs and isinstance(inputs[0], torch.Tensor) else 0
        )
    )
    with log:
        got = fn(theirs, torch.optim.SGD(theirs.parameters(), lr=0.1), X, y, 12)
    want = _reference_epoch(ours, torch.optim.SGD(ours.parameters(), lr=0.1), X, y, 12)
    reads = log.named(_HOST_READS)
    if reads:
        raise Wrong(
            f"train_epoch read values back to the host ({reads[0].written}, {len(reads)} time(s)): on a GPU each "
            "such read makes the host wait; keep the losses on the device and return their mean as a tensor"
        )
    if batches != [12, 12, 12]:
        raise Wrong(
            f"with 36 rows and batch_size=12 the model should see batches of [12, 12, 12] rows, in order, but it saw "
            f"{batches}: slice X[start : start + batch_size] for start in range(0, len(X), batch_size)"
        )
    if not isinstance(got, torch.Tensor):
        raise Wrong(
            f"train_epoch returned a {type(got).__name__}: return the mean loss as a tensor left on the device "
            "(no .item() or float(): that would make the host wait for the GPU)"
        )
    if got.numel() != 1:
        raise Wrong(f"return one number, the epoch's mean loss, not a tensor of shape {tuple(got.shape)}")
    if _same_weights(theirs, make_model(4, 8, seed=2)):
        raise Wrong("the weights did not change: call loss.backward() and optimizer.step() for every batch")
    if not _same_weights(theirs, ours):
        raise Wrong(
            "after one epoch the weights differ from one step per batch: clear the gradients "
            "(optimizer.zero_grad()) every batch, and step after backward"
        )
    if not torch.allclose(got.detach().float().reshape(()), want, atol=1e-5):
        raise Wrong(f"the returned loss {got.item():.4g} is not the mean of the batches' losses ({want.item():.4g})")
    on_meta = make_model(4, 8).to("meta")
    try:
        got = fn(on_meta, torch.optim.SGD(on_meta.parameters(), lr=0.1), X, y, 12)
    except RuntimeError as error:
        if is_device_mismatch_error(error):
            raise Wrong(
                "with the model on meta and X, y on the CPU your function raised the device error: move the data "
                "(and any tensor you create) to the model's device, next(model.parameters()).device"
            ) from None
        raise
    if next(on_meta.parameters()).device.type != "meta":
        raise Wrong("train_epoch moved the model: leave it where it is and bring the data to it")
    if not isinstance(got, torch.Tensor) or got.device.type != "meta":
        raise Wrong("with the model on meta the loss should stay there, on the model's device")


class _Probe(nn.Module):
    """A linear model that records, at each forward pass, whether CPU autocast was on and its dtype."""

    def __init__(self) -> None:
        super().__init__()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(3)
            self.linear = nn.Linear(4, 1)
        self.seen: list[tuple[bool, torch.dtype]] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.seen.append((torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")))
        return self.linear(x)


def _scaler() -> torch.amp.GradScaler:
    # growth_interval=1: one step with finite gradients doubles the scale, so a missing update() shows
    return torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=1)


def _check_amp_step(fn: Any) -> None:
    expect_function(fn, "amp_step", "(model, optimizer, scaler, x, y)")
    X, y = make_data(16, 4, seed=5)
    theirs, ours = _Probe(), _Probe()
    their_scaler, our_scaler = _scaler(), _scaler()
    got = fn(theirs, torch.optim.SGD(theirs.parameters(), lr=0.1), their_scaler, X, y)
    our_optimizer = torch.optim.SGD(ours.parameters(), lr=0.1)
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        want = nn.functional.mse_loss(ours(X), y)
    our_scaler.scale(want).backward()
    our_scaler.step(our_optimizer)
    our_scaler.update()
    if not theirs.seen:
        raise Wrong("amp_step never ran the model: compute the loss of model(x) against y")
    if not theirs.seen[0][0]:
        raise Wrong(
            "the forward pass ran without autocast: put it inside `with torch.autocast(device_type, dtype=...)`"
        )
    if theirs.seen[0][1] != torch.bfloat16:
        raise Wrong(f"on the CPU autocast should use torch.bfloat16, not {theirs.seen[0][1]}")
    if _same_weights(theirs, _Probe()):
        raise Wrong("the weights did not change: finish with scaler.step(optimizer)")
    if not _same_weights(theirs, ours):
        raise Wrong(
            "the weights differ from one scaled step: call backward on scaler.scale(loss) and step with "
            "scaler.step(optimizer) (it unscales the gradients first), not optimizer.step()"
        )
    if their_scaler.get_scale() != our_scaler.get_scale():
        raise Wrong("the scale did not change after a good step: call scaler.update() after scaler.step(optimizer)")
    if any(p.grad is not None and p.grad.abs().sum() > 0 for p in theirs.parameters()):
        raise Wrong("the gradients are still there after the step: clear them with optimizer.zero_grad()")
    value = expect_number(got.detach() if isinstance(got, torch.Tensor) else got, "the loss (a number)")
    if abs(value - want.item()) > 1e-2 * max(1.0, abs(want.item())):
        raise Wrong(f"return the loss itself ({want.item():.4g}), not the scaled loss or something else ({value:.4g})")


#: The clipping exercise's scale: the scaler starts at 2**16 and, with growth_interval=1, doubles after a good step.
_CLIP_SCALE = 2.0**16
#: Its learning rate and clipping threshold; its data (below) give a gradient of norm 10 at the zero weights.
_CLIP_LR, _CLIP_MAX_NORM = 0.5, 1.0


class _WatchedScaler(torch.amp.GradScaler):
    """A CPU gradient scaler that notes which of its calls the learner's step made, in order.

    `step()` unscales the gradients itself when the learner did not; that call is not the learner's, so it
    is not noted.
    """

    def __init__(self) -> None:
        super().__init__("cpu", init_scale=_CLIP_SCALE, growth_interval=1)
        self.calls: list[str] = []
        self._inside_step = False

    def unscale_(self, optimizer: torch.optim.Optimizer) -> None:
        if not self._inside_step:
            self.calls.append("unscale_")
        super().unscale_(optimizer)

    def step(self, optimizer: torch.optim.Optimizer, *args: Any, **kwargs: Any) -> Any:
        self.calls.append("step")
        self._inside_step = True
        try:
            return super().step(optimizer, *args, **kwargs)
        finally:
            self._inside_step = False

    def update(self, new_scale: Any = None) -> None:
        self.calls.append("update")
        super().update(new_scale)


def _scaler_misuse(calls: list[str]) -> str | None:
    """What went wrong when the scaler's last call (the one that raised) broke the order of a step; else None."""
    if not calls:
        return None
    *before, last = calls
    since_update = before[len(before) - before[::-1].index("update") :] if "update" in before else before
    if last == "unscale_" and "step" in since_update:
        return (
            "scaler.unscale_(optimizer) came after scaler.step(optimizer), and the scaler refused it: the step "
            "has already used the gradients, so unscale and clip them before the step"
        )
    if last == "unscale_" and "unscale_" in since_update:
        return (
            "scaler.unscale_(optimizer) ran twice in one step, and the scaler refused the second: the first "
            "already divided the gradients by the scale (and scaler.step does not divide again), so unscale once, "
            "just before clipping"
        )
    if last == "update" and "step" not in since_update and "unscale_" not in since_update:
        return (
            "scaler.update() found no step to learn from: step with scaler.step(optimizer), not "
            "optimizer.step(), so that the scaler checks the gradients for inf and NaN and skips such a step"
        )
    return None


def _zero_linear() -> nn.Linear:
    model = nn.Linear(4, 1)
    with torch.no_grad():
        model.weight.zero_()
        model.bias.zero_()
    return model


def _flat(model: nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).double()


def _close(a: torch.Tensor, b: torch.Tensor, rtol: float) -> bool:
    return torch.allclose(a, b, rtol=rtol, atol=rtol * float(b.abs().max()))


def _check_clipped_step(fn: Any) -> None:
    expect_function(fn, "clipped_step", "(model, optimizer, scaler, x, y, max_norm)")
    # At zero weights the identity input makes each weight's gradient -y/2 (bias: 0): a norm of exactly 10,
    # every number exact in bfloat16, so the scaled gradients are exactly 65536 times that.
    x = torch.eye(4)
    y = torch.tensor([[10.0], [10.0], [-10.0], [-10.0]])
    model, scaler = _zero_linear(), _WatchedScaler()
    start = _flat(model)
    try:
        got = fn(model, torch.optim.SGD(model.parameters(), lr=_CLIP_LR), scaler, x, y, _CLIP_MAX_NORM)
    except Exception:
        misuse = _scaler_misuse(scaler.calls)
        if misuse:
            raise Wrong(misuse) from None
        raise
    # What one SGD step should do, from float32 gradients of the same loss: clip them to max_norm, then step.
    plain = _zero_linear()
    gradient = torch.cat(
        [g.reshape(-1) for g in torch.autograd.grad(nn.functional.mse_loss(plain(x), y), list(plain.parameters()))]
    ).double()
    true_norm = float(gradient.norm())
    shrink = min(1.0, _CLIP_MAX_NORM / (true_norm + 1e-6))
    unclipped = -_CLIP_LR * gradient
    wanted = shrink * unclipped
    if any(p.device.type != "cpu" for p in model.parameters()):
        raise Wrong("clipped_step moved the model off its device: leave it where it lives and bring x and y to it")
    moved = _flat(model) - start
    if not torch.isfinite(moved).all():
        raise Wrong(
            "the weights became inf or NaN after one step: step with scaler.step(optimizer), which divides the "
            "gradients by the scale (and skips a step whose gradients overflowed)"
        )
    if not moved.any():
        if "step" not in scaler.calls:
            raise Wrong("the weights did not change: the step never happened; finish with scaler.step(optimizer)")
        raise Wrong(
            "scaler.step(optimizer) ran but the weights did not change: it found no gradients; keep backward "
            "before the step and optimizer.zero_grad() after it"
        )
    if not _close(moved, wanted, 1e-3):
        size, should = float(moved.norm()), float(wanted.norm())
        if _close(moved, wanted / _CLIP_SCALE, 1e-2):
            raise Wrong(
                f"the weights moved {should / size:,.0f} times less than a step with the gradients clipped to "
                f"max_norm={_CLIP_MAX_NORM:g}: clip_grad_norm_ saw the gradients while they were still multiplied "
                f"by the scaler's scale ({_CLIP_SCALE:,.0f}), measured a norm {_CLIP_SCALE:,.0f} times too large "
                "and cut them that much too far; call scaler.unscale_(optimizer) before clipping"
            )
        if _close(moved, unclipped, 1e-2):
            raise Wrong(
                f"the weights moved as if the gradients had not been clipped (their norm is {true_norm:g}, "
                f"max_norm={_CLIP_MAX_NORM:g}): clip after scaler.unscale_(optimizer) and before "
                "scaler.step(optimizer); a clip after the step changes nothing that step used"
            )
        if _close(moved, wanted * _CLIP_SCALE, 1e-2) or _close(moved, unclipped * _CLIP_SCALE, 1e-2):
            raise Wrong(
                f"the weights moved {size / should:,.0f} times too far: the optimizer stepped with the gradients "
                "still multiplied by the scale; unscale them (scaler.unscale_, or scaler.step does it) first"
            )
        raise Wrong(
            f"one step of SGD(lr={_CLIP_LR:g}) with the gradients clipped to max_norm={_CLIP_MAX_NORM:g} moves the "
            f"weights by {should:.4g}, but yours moved them by {size:.4g}: one backward, unscale, clip, step"
        )
    if "step" not in scaler.calls:
        raise Wrong(
            "the optimizer stepped without the scaler: use scaler.step(optimizer), which skips a step whose "
            "gradients hold inf or NaN (optimizer.step() would write them into the weights)"
        )
    if scaler.get_scale() != 2 * _CLIP_SCALE:
        raise Wrong("the scale did not change after a good step: call scaler.update() after scaler.step(optimizer)")
    if any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters()):
        raise Wrong("the gradients are still there after the step: clear them with optimizer.zero_grad()")
    norm = expect_number(
        got.detach() if isinstance(got, torch.Tensor) else got, "the gradient norm (what clip_grad_norm_ returns)"
    )
    if not abs(norm - true_norm) <= 1e-3 * true_norm:  # written so that a NaN is not right
        scaled = abs(norm - true_norm * _CLIP_SCALE) <= 1e-3 * true_norm * _CLIP_SCALE
        fix = (
            "that is the norm of the scaled gradients; return the one measured after unscale_"
            if scaled
            else "return the norm that clip_grad_norm_ measured"
        )
        raise Wrong(f"clipped_step returned {norm:g}, but the gradients' norm is {true_norm:g}: {fix}")


def low_precision(device: torch.device) -> torch.dtype:
    """Chapter 04's `low_precision` (section 6), for answers run outside the notebook and for its GPU tests."""
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported(including_emulation=False) else torch.float16
    return torch.float16 if device.type == "mps" else torch.bfloat16


QUESTIONS = [
    Question(
        number=1,
        task="Write `predict(model, x)` that runs `model` on `x` on the model's device, whichever device x is on.",
        variable="predict",
        checker=_check_predict,
        hint_text="next(model.parameters()).device says where the model lives; move x there with .to(...).",
        chapter="04",
    ),
    Question(
        number=2,
        task=(
            "Write `train_epoch(model, optimizer, X, y, batch_size)`: one pass over (X, y) in order, on the model's "
            "device, with mean squared error; return the epoch's mean loss as a tensor on that device."
        ),
        variable="train_epoch",
        checker=_check_train_epoch,
        hint_text=(
            "device = next(model.parameters()).device; move X and y there once; for each slice X[s:s+batch_size]: "
            "loss = nn.functional.mse_loss(model(xb), yb), loss.backward(), optimizer.step(), optimizer.zero_grad(); "
            "keep loss.detach() and return torch.stack(losses).mean()."
        ),
        chapter="04",
    ),
    Question(
        number=3,
        task="Write `load_on(path, device)` returning the state dict saved at `path`, with every tensor on `device`.",
        variable="load_on",
        checker=_check_load_on,
        hint_text="torch.load(path, map_location=device, weights_only=True) puts each tensor on `device` as it loads.",
        chapter="04",
    ),
    Question(
        number=4,
        task=(
            "Write `amp_step(model, optimizer, scaler, x, y)`: one mixed-precision training step on the model's "
            "device (bfloat16 autocast on CPUs and on GPUs with bfloat16 hardware, float16 elsewhere), through "
            "the gradient scaler; return the loss."
        ),
        variable="amp_step",
        checker=_check_amp_step,
        hint_text=(
            "Forward and loss inside `with torch.autocast(device_type=device.type, dtype=low):`, then outside it "
            "scaler.scale(loss).backward(), scaler.step(optimizer), scaler.update(), optimizer.zero_grad()."
        ),
        chapter="04",
    ),
    Question(
        number=5,
        task=(
            "Debug this: `clipped_step(model, optimizer, scaler, x, y, max_norm)` should take one mixed-precision "
            "step, through the gradient scaler, with the gradients clipped to norm `max_norm`, and return their "
            "norm; its weights barely move and the norm it returns is far too large. Fix it."
        ),
        variable="clipped_step",
        checker=_check_clipped_step,
        hint_text=(
            "After scaler.scale(loss).backward() every gradient is multiplied by scaler.get_scale(). Which call "
            "divides them back, and must it come before or after clip_grad_norm_? It may run only once a step."
        ),
        context=lambda: {"low_precision": low_precision},
        chapter="04",
    ),
]
