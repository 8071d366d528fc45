"""Chapter 04 exercises, each tried on every device here (`meta` stands in for a GPU, except under autocast)."""

from __future__ import annotations

import copy
import math
import tempfile
from typing import Any
from unittest import mock

import torch
from torch import nn

from ..answers import Wrong, expect_function, expect_number
from ..training import make_data, make_model
from .calls import MOVES, CallLog
from .cases import call_or_wrong, questions, show, unchanged

# The first optimizer a process builds imports torch._dynamo (seconds): built here, not within a time limit.
torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1)

_CPU, _META = torch.device("cpu"), torch.device("meta")
#: The GPUs here, as their tensors name them: CUDA's last (not the current one where there are two) and Apple's.
_GPUS = [torch.device("cuda", n - 1) for n in [torch.cuda.device_count()] if n]
_GPUS += [torch.device("mps", 0)] * torch.backends.mps.is_available()
_flat = lambda *values: [t for v in values for t in (v if isinstance(v, list | tuple) else [v])]


def _call(fn: Any, call: str, home: torch.device, model: nn.Module, *args: Any) -> tuple:
    """(fn(model, *args), a Wrong naming what it raised, the model's inputs, its reads of the model's values)."""
    got, raised, log, fed, ids = None, None, CallLog(), [], {id(p) for p in model.parameters()}
    model.register_forward_pre_hook(lambda module, inputs: fed.append((module, inputs[0] if inputs else None)))
    try:
        with log:
            got = call_or_wrong(fn, (model, *args), call)
    except Wrong as exc:
        raised = exc
    tried = [c for c in log.named(MOVES) if id(c.args[0]) in ids and (c.raised or c.result.device != c.args[0].device)]
    if tried or {p.device for p in model.parameters()} != {home}:  # a change of dtype alone is no move
        raise Wrong(f"{call} moved the model (or tried to): leave it on {home}, and move the data there")
    for c in log.calls:  # the model's values: its parameters, what a call makes from them or writes them into
        if any(id(t) in ids for t in _flat(*c.args, *c.kwargs.values())):
            ids |= {id(t) for t in _flat(c.result, *c.args[:1]) if isinstance(t, torch.Tensor)}
    read = [w for w, t in log.host_reads() if t is None or id(t) in ids]  # None: a tensor built from data
    return got, raised, fed, read and f"{', '.join(dict.fromkeys(read))}, {len(read)} time(s)"  # each spelling once


def _expect(got: Any, want: torch.Tensor, said: str, what: str) -> None:
    """Refuse `got` unless it is a tensor like `want`: dtype, shape, device (`show`), values."""
    if show(got) != show(want) or not (want.is_meta or torch.allclose(got.cpu().double(), want.cpu().double())):
        other = " of other values" if show(got) == show(want) else ""
        raise Wrong(f"{said} {show(got)}{other}; expected {what}, {show(want)}")


#: predict's models, copied for each try: a parameter-free first layer; float16 fed integers, with buffers and modes.
_NORMS = nn.Sequential(nn.Embedding(10, 2).requires_grad_(False), nn.BatchNorm1d(3), nn.BatchNorm1d(3).eval()).half()
_PREDICT = {"Sequential(Tanh, Linear)": (nn.Sequential(nn.Tanh(), nn.Linear(3, 2)), torch.randn(4, 3))}
_PREDICT["float16 (frozen Embedding, BatchNorm1d, BatchNorm1d in eval)"] = (_NORMS, torch.randint(10, (4, 3)))
_PREDICT["Linear, x requiring grad"] = (nn.Linear(3, 2), torch.randn(4, 3).requires_grad_())
_kept = lambda model, x: {  # what predict leaves as it was, by its name in messages (a state dict has the buffers)
    "x (its values, dtype or requires_grad)": (x.clone(), x.requires_grad),
    "a module's train/eval mode": [m.training for m in model.modules()],
    "the model's weights or buffers (values, dtype, requires_grad or .grad)": [
        (t.detach().clone(), t.requires_grad, copy.deepcopy(t.grad)) for t in model.state_dict(keep_vars=True).values()
    ],
}


def _check_predict(fn: Any) -> None:
    expect_function(fn, "predict", "(model, x)")
    places = [(_CPU, _CPU), (_CPU, _META), *((g, _CPU) for g in _GPUS), *((_CPU, g) for g in _GPUS), (_META, _CPU)]
    for (home, there), (name, (made, data)) in [(p, m) for p in [*places, (_META, _META)] for m in _PREDICT.items()]:
        model, as_is = copy.deepcopy(made).to(home), copy.deepcopy(made).to(home)
        x = data.detach().clone().to(there).requires_grad_(data.requires_grad)  # a leaf, as the learner's x
        for p in [*model.parameters(), *as_is.parameters()]:  # .grad as training leaves it (a copy loses it)
            p.grad = torch.ones_like(p) if p.requires_grad else None
        before, call = _kept(model, x), f"predict({name} on {home.type}, {x.dtype} x on {there.type})"
        got, raised, fed, _ = _call(fn, call, home, model, x)
        fails = there == _META != home  # x on meta has no values for the model: an error is right
        want = None if fails else as_is(data.to(home)).detach()  # in the model's own modes
        after, ran = _kept(model, x), _kept(as_is, data.to(there))  # ran: as model(x) leaves it
        if changed := [k for k, v in before.items() if not (unchanged(v, after[k]) or unchanged(ran[k], after[k]))]:
            raise Wrong(f"{call} changed {changed[0]}: leave x and the model as they were")
        if fed := [(m is model, show(i)) for m, i in fed if i is not None and (i.device, i.dtype) != (home, x.dtype)]:
            raise Wrong(
                f"{call} fed {'' if fed[0][0] else 'a copy of '}the model {fed[0][1]}; expected x ({x.dtype}) on {home}"
            )
        if (raised is None) == fails:
            raise raised or Wrong(f"{call} returned {show(got)}; expected an error: x on meta has no values for {home}")
        if raised is None:
            _expect(got, want, f"{call} returned", "model(x) on the model's device, each module in its own mode")


def _epoch(X: torch.Tensor, y: torch.Tensor, size: int, device: torch.device, lr=0.1, zero=True) -> tuple:
    """The batches' losses, and the weights after an epoch of SGD(lr) with mean squared error (zero_grad if `zero`)."""
    optimizer, losses = torch.optim.SGD((model := make_model(4, 8, seed=2).to(device)).parameters(), lr=lr), []
    for xb, yb in zip(X.to(device).split(size), y.to(device).split(size), strict=True):
        losses.append(loss := nn.functional.mse_loss(model(xb), yb))
        loss.backward()
        optimizer.step()
        if zero:
            optimizer.zero_grad()
    return torch.stack(losses).detach(), nn.utils.parameters_to_vector(model.parameters()).detach().double().cpu()


def _weights(model: nn.Module, want: torch.Tensor, call: str, what: str, slips: dict[str, torch.Tensor]) -> None:
    """Refuse `model` unless its weights are `want`; name the one slip whose weights they are here, if one is."""
    got = nn.utils.parameters_to_vector(model.parameters()).detach().double().cpu()
    if not torch.allclose(got, want, rtol=1e-4, atol=1e-7):
        said = [f": {s}" for s, w in slips.items() if torch.allclose(got, w, 1e-3, 1e-9) and not w.equal(want)]
        raise Wrong(f"after {call} the weights differ from {what}{said[0] if len(said) == 1 else ''}")


def _check_train_epoch(fn: Any) -> None:
    expect_function(fn, "train_epoch", "(model, optimizer, X, y, batch_size)")
    # rows, batch_size: dividing, a short last batch (so a mean over rows differs), one batch under batch_size
    cases = [(36, 12, _CPU), (30, 12, _CPU), (5, 8, _CPU), (101, 1, _CPU), *((30, 12, d) for d in [_META, *_GPUS])]
    for rows, size, device in cases:  # 101 batches: a log every 10th or 100th batch shows
        (X, y), model, steps = make_data(rows, 4, seed=rows), make_model(4, 8, seed=2).to(device), []
        (optimizer := torch.optim.SGD(model.parameters(), 0.1)).register_step_post_hook(lambda *_, s=steps: s.append(1))
        kept, call = (X.clone(), y.clone()), f"train_epoch(model on {device.type}, SGD, X and y of {rows} rows, {size})"
        got, raised, seen, read = _call(fn, call, device, model, optimizer, X, y, size)
        if read:
            raise Wrong(f"{call} read values on the host ({read}): keep them there")
        if raised is not None:
            raise raised
        if not unchanged(kept, (X, y)):
            raise Wrong(f"{call} changed its arguments: move or slice copies, and leave X and y as they were")
        if len(seen) != len(batches := X.to(device).split(size)):
            raise Wrong(f"{call} ran the model {len(seen)} times; expected {len(batches)} batches of X's rows")
        for i, ((_, fed), batch) in enumerate(zip(seen, batches, strict=True)):
            _expect(fed, batch, f"{call} fed the model, as batch {i + 1},", "X's rows in order")
        if len(steps) != len(batches):
            raise Wrong(f"{call} stepped the optimizer given {len(steps)} times, not once per batch ({len(batches)})")
        if not isinstance(got, torch.Tensor) or got.device.type != device.type or got.numel() != 1 or got.requires_grad:
            raise Wrong(f"{call} returned {show(got)}; expected the mean loss, detached, one number on {device.type}")
        if device == _META:
            continue
        losses, want = _epoch(X, y, size, device)
        slips = {"they are the starting weights: no step changed them": _epoch(X, y, size, device, lr=0.0)[1]}
        slips["the gradients piled up: clear them after each step"] = _epoch(X, y, size, device, zero=False)[1]
        _weights(model, want, call, "one SGD step per batch of mean squared error", slips)
        value, mean = float(got.detach().reshape(())), float(losses.mean())
        if not math.isclose(value, mean, rel_tol=1e-4):
            per_row = float(sum(loss * len(b) for loss, b in zip(losses, batches, strict=True)) / rows)
            slip = ": that is the mean over rows; each batch counts once" * math.isclose(value, per_row, rel_tol=1e-5)
            raise Wrong(f"{call} returned {value:.6g}; expected {mean:.6g}, the mean of the batches' losses{slip}")


def _check_load_on(fn: Any) -> None:
    expect_function(fn, "load_on", "(path, device)")
    saved = nn.Sequential(nn.Linear(3, 2, dtype=torch.float16), nn.BatchNorm1d(2)).state_dict()  # an int64 too
    places = iter(["cpu", f"cuda:{torch.cuda.device_count()}", f"cuda:{torch.cuda.device_count() + 99}"] * 3)
    with tempfile.TemporaryDirectory() as folder:  # as if from the CPU and two GPUs this machine lacks (one unusual)
        with mock.patch("torch.serialization.location_tag", lambda _: next(places)):
            torch.save(saved, path := f"{folder}/weights.pt")
        for device in (_CPU, _META, *_GPUS):
            call = f"load_on(path, torch.device({str(device)!r}))"
            if not isinstance(got := call_or_wrong(fn, (path, device), call), dict) or set(got) != set(saved):
                raise Wrong(f"{call} returned {show(got)}; expected the state dict, a dict with keys {sorted(saved)}")
            for key, value in saved.items():
                _expect(got[key], value.to(device), f"{call}[{key!r}] is", "the saved tensor there")


#: At zero weights, x = eye(4) and targets y give (weight, bias) the gradient -0.5 * (y, sum(y)), exact in float16
#: times 2**16: norm 1.5 (a clip to 1 shows), √0.5, overflow, a y 16 bits round (unclipped); bias's not 0 (per tensor).
_Y, _INF = torch.tensor([[1.0], [0.0], [0.0], [0.0]]), torch.full((4, 1), math.inf)
_STEPS = [(torch.tensor([[1.5], [-1.5], [1.5], [0.0]]), 0.25, "y=(1.5, -1.5, 1.5, 0)"), (_Y, 0.25, "y=(1, 0, 0, 0)")]
_STEPS += [(_INF, 0.5, "y=inf"), (torch.tensor([[0.1], [1 / 3], [-0.7], [0.2]]), 5.0, "y=(0.1, 1/3, -0.7, 0.2)")]
_autocast = lambda kind: torch.is_autocast_enabled(kind) and torch.get_autocast_dtype(kind)  # its dtype, or False


def _check_step(fn: Any, clip: bool) -> None:
    name, fix = (("amp_step", "nothing"), ("clipped_step", "to max_norm"))[clip]
    expect_function(fn, name, f"(model, optimizer, scaler, x, y{', max_norm' * clip})")
    for device, (y, top, says) in [(d, case) for d in (_CPU, *_GPUS) for case in _STEPS]:
        model, seen, kind, low = nn.Linear(4, 1, device=device), [], device.type, low_precision(device)
        nn.utils.vector_to_parameters(torch.zeros(5, device=device), model.parameters())
        model.register_forward_pre_hook(lambda m, i, k=kind, s=seen: s.append((_autocast(k), m.weight.dtype, *i, 0)))
        scaler, args = torch.amp.GradScaler(kind, init_scale=2.0**16, growth_interval=1), (torch.eye(4), y.clone(), top)
        args[0].requires_grad_(top == 5.0)  # the last case's x requires grad, as a learner's may: leave it so
        scaler.scale, scaler.step = mock.Mock(wraps=scaler.scale), mock.Mock(wraps=scaler.step)  # to see them called
        call = f"{name}(model on {kind}, SGD(lr=0.5), GradScaler(2**16), x, {says}{f', {top}' * clip})"
        default = kind in ("cpu", "cuda") and torch.get_autocast_dtype(kind)  # here, the dtype low_precision is not:
        torch.set_autocast_dtype(kind, torch.float16 if low == torch.bfloat16 else torch.bfloat16) if default else None
        try:
            got = fn(model, torch.optim.SGD(model.parameters(), lr=0.5), scaler, *args[: 2 + clip])
        finally:
            torch.set_autocast_dtype(kind, default) if default else None
        if (ran := seen[0][0] if seen else False) != low:
            said = f"{call} ran the model {f'under autocast in {ran}' if ran else 'without autocast'}; expected"
            raise Wrong(f"{said} autocast in {low} on {kind}: dtype=low_precision(device) (autocast's default varies)")
        if (steps := scaler.step.call_count) > 1:
            raise Wrong(f"{call} called scaler.step {steps} times: step the optimizer once")
        if (fed := getattr(seen[0][2], "dtype", torch.float32)) != torch.float32:  # layer_norm, softmax stay float32
            raise Wrong(f"{call} fed the model x in {fed}: leave x float32 (autocast casts inside the block)")
        if made := {seen[0][1], *(p.dtype for p in model.parameters())} - {torch.float32}:
            raise Wrong(f"{call} made the model's weights {made.pop()}: mixed precision keeps them float32")
        if not unchanged(
            (torch.eye(4), y, top, (top == 5.0, False)), (*args, (args[0].requires_grad, args[1].requires_grad))
        ):
            raise Wrong(f"{call} changed x or y (values, dtype or requires_grad): move copies, leave them as they were")
        weight = (-0.5 * y.flatten()).to(low)  # the weight's and the bias's gradient, in autocast's dtype as there
        grad = torch.cat([weight, weight.float().sum().to(low).reshape(1)]).double()
        norm, g = float(grad.norm()), grad.nan_to_num(0, 0, 0)  # an overflow skips the step
        clipped = lambda v, to=top: -0.5 * v * min(1, to / (float(v.norm()) + 1e-6))  # SGD(lr=0.5) after the clip
        step, little, want = -0.5 * g, -0.5 * g / 2**16 * top / norm, clipped(g) if clip else -0.5 * g
        if unused := " or ".join(f"scaler.{n}" for n in ("scale", "step") if not getattr(scaler, n).called):
            raise Wrong(f"{call} never called {unused} on the scaler given: backward and step go through it")
        slips = {"they are an unclipped step's: clip them to max_norm after scaler.unscale_, before scaler.step": step}
        slips[f"they are a step clipped to norm 1 (section 6): clip {fix}"] = clipped(g, 1)
        if clip:  # by the weights alone, a clip of scaled gradients is one of unscaled ones divided again, if it clips
            again = "" if top > norm else ", or the scale was divided out again after the clip"
            slips[f"they moved 2**16 times too little: clip_grad_norm_ saw scaled gradients{again}"] = little
        what = "their start: these gradients overflow, so scaler.step skips the step" if y is _INF else "one SGD step"
        _weights(model, want, call, what, slips)
        if scaler.get_scale() != 2.0 ** (15 if y is _INF else 17):
            raise Wrong(f"{call} left the scale at {scaler.get_scale():g}: the scaler given updates it after each step")
        if any(p.grad is not None and bool(p.grad.any()) for p in model.parameters()):
            raise Wrong(f"{call} left gradients in .grad after the step: clear them (optimizer.zero_grad())")
        value = expect_number(got.detach() if isinstance(got, torch.Tensor) else got, f"{call} to return a number")
        want, close = (norm, 1e-3) if clip else (float((y**2).mean()), 1e-5)  # the loss is float32's, of y as given
        if y is not _INF and not math.isclose(value, want, rel_tol=close):
            scaled = ": that is the scaled value" if math.isclose(value, want * 2**16, rel_tol=1e-3) else ""
            raise Wrong(f"{call} returned {value:g}; expected the {('loss', 'unclipped norm')[clip]}, {want:g}{scaled}")


def low_precision(device: torch.device) -> torch.dtype:
    """Chapter 04's `low_precision` (section 6), for answers run outside the notebook and for its GPU tests."""
    cuda_bf16 = device.type == "cuda" and torch.cuda.is_bf16_supported(including_emulation=False)
    return torch.bfloat16 if cuda_bf16 or device.type not in ("cuda", "mps") else torch.float16


_TEXTS = {  # each question's variable: its task (the notebook states it in full), then (after a newline) its hint
    "predict": "Write `predict(model, x)`: run `model` on `x` on the model's device, whichever device x is on.\n"
    "next(model.parameters()).device says where the model lives; move x there with .to(...).",
    "train_epoch": "Write `train_epoch(model, optimizer, X, y, batch_size)`: return the mean of the batches' losses.\n"
    "For s in range(0, len(X), batch_size), train on X[s : s + batch_size]; keep each loss.detach().",
    "load_on": "Write `load_on(path, device)`: the state dict saved at `path`, with every tensor on `device`.\n"
    "torch.load(path, map_location=device, weights_only=True) puts each tensor on `device` as it loads.",
    "amp_step": "Write `amp_step(model, optimizer, scaler, x, y)`: one mixed-precision step; return the loss.\n"
    "autocast(device.type, dtype=low_precision(device)) around forward and loss; then the scaler's calls.",
    "clipped_step": "Debug `clipped_step`: one scaled step, gradients clipped to `max_norm`; return their norm.\n"
    "Which call divides the gradients by the scale, and must it come before or after clip_grad_norm_?",
}
_CHECKS = (_check_predict, _check_train_epoch, _check_load_on, *(lambda fn, c=c: _check_step(fn, c) for c in (0, 1)))
QUESTIONS = questions("04", _TEXTS, _CHECKS, context=lambda: {"low_precision": low_precision})
