"""Chapter 04 exercises: a CPU-only script made right on every device (`meta` as a GPU), a clipped fp16 step."""

import contextlib
import inspect
import os
import shutil
import tempfile
from typing import Any
from unittest import mock

import torch
from torch import nn
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook
from torch.utils._pytree import tree_leaves, tree_map

from ..answers import Wrong, expect_function, expect_number
from ..training import make_data, make_model
from .calls import CallLog
from .cases import call_or_wrong, questions, unchanged

torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1)  # a process's first imports torch._dynamo (s): not timed

_CPU, _META = torch.device("cpu"), torch.device("meta")
#: The GPUs here, as their tensors name them: CUDA's last (not the current one where there are two) and Apple's.
_GPUS = [torch.device("cuda", n - 1) for n in [torch.cuda.device_count()] if n]
_GPUS += [torch.device("mps", 0)] * torch.backends.mps.is_available()
_N, _AUTOCAST, _SCALER = 3, torch.amp.autocast_mode.autocast, torch.amp.GradScaler  # _N: steps per call of `fit`
#: x = eye(4), zero weights: gradients (-2, -1e-8, 0, 0); in float16 the first overflows times 2**15, the second is 0.
_TINY = (torch.eye(4), torch.tensor([[4.0], [2e-8], [0.0], [0.0]]))
_HUGE = (torch.eye(4), torch.full((4, 1), 1e5))  # y = 1e5: the bias's gradient -2e5 overflows float16 at any scale
_T4 = "low_precision asked of a device fit does not train on: on a T4 the CPU's bfloat16 is not the GPU's float16"
_SHOWN = "print, an f-string, .cpu() of a number (a loss, a step count) read it back: meta, a GPU's stand-in, has none"


def _train(fn: Any, device: torch.device, model: nn.Module, data: tuple, path: str, said: str, **case: Any) -> Any:
    """Call `fit(model, X, y, _N, path, device)` (`case`: half, start, least); refuse what its runs and files show."""
    meta, kind, half, raised = device.type == "meta", device.type.replace("meta", "cpu"), bool(case.get("half")), None
    said += " with low_precision giving float16, as on a T4" * half
    call, fed, steps, asked, infs = f"fit(model, X, y, {_N}, path, torch.device('{device}')) {said}", [], [], [], []
    first, start, tiny, tested = next(model.parameters()), case.get("start"), data is _TINY, device.type
    low, live = torch.float16 if half else low_precision(device), lambda params: [p.detach().clone() for p in params]
    real = [_AUTOCAST.__init__, _SCALER.__init__, nn.Module.load_state_dict, torch.optim.Optimizer.load_state_dict]
    real, scales = [*real, _SCALER.update], case.get("scales", [])  # the scaler's state before and after each update
    zeros = lambda t: tree_map(lambda v: torch.zeros_like(v, device=first.device) if getattr(v, "ndim", 0) else v, t)
    shown = lambda real: lambda t, *a, **k: torch._check(not t.is_meta, lambda: _SHOWN) or real(t, *a, **k)  # reads
    load, cpu = lambda n: lambda m, state_dict, *a, **k: real[n](m, zeros(state_dict), *a, **k), shown(torch.Tensor.cpu)
    meta_as_gpu = {  # CPU autocast marked as meta's; a scaler passes through (bfloat16 needs none); no values, so
        (_AUTOCAST, "__init__"): lambda s, device_type, *a, **k: (  # zeros where a checkpoint's are loaded or copied
            asked.append(device_type) or real[0](s, "cpu" if device_type == "meta" else device_type, *a, **k)
        ),
        (_SCALER, "__init__"): lambda s, *a, **k: real[1](s, *a, **k) or vars(s).update(_on=s._enabled, _enabled=False),
        (_SCALER, "is_enabled"): lambda s: s._on,  # what the answer asked for; off all the same (no values)
        (nn.Module, "load_state_dict"): load(2),
        (torch.optim.Optimizer, "load_state_dict"): load(3),
        (torch.Tensor, "cpu"): lambda t, *a, **k: (
            torch.zeros_like(t, device=_CPU) if t.is_meta and t.ndim else cpu(t, *a, **k)
        ),
        **{(torch.Tensor, name): shown(getattr(torch.Tensor, name)) for name in ("__repr__", "__format__")},
    }

    def forward(module: nn.Module, inputs: tuple) -> None:  # (x's device, the model's, its autocast, weights)
        typed = (asked or [kind])[-1] if meta else kind  # the device type autocast was asked for
        on = torch.is_autocast_enabled(kind) and (typed, torch.get_autocast_dtype(kind))
        fed.append((inputs[0].device, next(module.parameters()).device, on or None, live(module.parameters())))

    def before(optimizer: Any, *_: Any) -> None:  # [any state, its devices off its parameter's, finite, weights]
        params = [p for group in optimizer.param_groups for p in group["params"]]
        state = [(v, p) for p in params for v in optimizer.state.get(p, {}).values() if torch.is_tensor(v)]
        off = [str(v.device) for v, p in state if v.device != p.device and v.ndim]  # and a count each step reads:
        fast = optimizer.defaults.get("fused") or optimizer.defaults.get("capturable")  # they read no count back
        off += [f"{v.device} (a step count, read back each step)" for v, _ in state if not (fast or v.ndim or v.is_cpu)]
        [group.update(fused=False) for group in optimizer.param_groups if meta]  # meta: no fused kernels, no step
        for state in optimizer.state.values() if meta else ():  # count to read: the CPU's code and count stand in
            state |= {k: torch.zeros(()) for k, v in state.items() if torch.is_tensor(v) and v.is_meta and not v.ndim}
        finite = meta or all(p.grad is None or bool(p.grad.isfinite().all()) for p in params)
        steps.append([any(optimizer.state.get(p) for p in params), off, finite])
        steps[-1] += [live(params), params, optimizer]

    after = lambda *_: steps[-1].__setitem__(3, meta or not all(map(torch.equal, *steps[-1][3:5])))  # changed a weight?
    inf_seen = lambda p: infs.append(not meta and not p.grad.isfinite().all())  # in the first weight's gradient
    with contextlib.ExitStack() as stack:
        for (owner, name), stand_in in meta_as_gpu.items() if meta else ():
            stack.enter_context(mock.patch.object(owner, name, stand_in))
        swapping = torch.__future__.get_swap_module_params_on_conversion()  # on meta too, `to` keeps each parameter
        stack.callback(torch.__future__.set_swap_module_params_on_conversion, swapping)
        torch.__future__.set_swap_module_params_on_conversion(swapping or meta)
        t4 = lambda device: (  # section 6's low_precision, its argument named as there; as on a T4 where half
            torch._check(half <= (device.type == tested), _T4.strip) or (low_precision(device), torch.half)[half]
        )
        stack.enter_context(mock.patch.dict(getattr(inspect.unwrap(fn), "__globals__", {}), {"low_precision": t4}))
        hooks = [model.register_forward_pre_hook(forward), register_optimizer_step_pre_hook(before)]
        hooks += [register_optimizer_step_post_hook(after), first.register_post_accumulate_grad_hook(inf_seen)]
        stack.callback(lambda: [hook.remove() for hook in hooks])
        state = lambda s: scales.append((s.get_scale(), s._get_growth_tracker()))  # the scale, good steps since
        update = lambda s, *a, **k: state(s) or real[4](s, *a, **k) or state(s)
        stack.enter_context(mock.patch.object(_SCALER, "update", update))
        try:
            call_or_wrong(fn, (model, *data, _N, path, device), call)
        except Wrong as exc:
            raised = exc
    if off := [(x, m) for x, m, *_ in fed if x != m]:
        raise Wrong(f"{call} fed the model, on {off[0][1]}, a tensor on {off[0][0]}")
    if off := [d for s in steps for d in s[1]]:
        raise Wrong(f"{call} stepped the optimizer with its state on {off[0]} and the model on {device}")
    if raised is not None:
        raise raised
    if off := {p.device if p.device != device else p.dtype for p in model.parameters()} - {torch.float32}:
        raise Wrong(f"{call} left the model's parameters {'in' * isinstance(o := off.pop(), torch.dtype) or 'on'} {o}")
    for on in [on for *_, on, _ in fed if on != (device.type, low)][:1]:  # the first forward pass that ran otherwise
        how = f"under autocast for {on[0]}" if on and on[0] != device.type else "without autocast"
        how = f"in {on[1]}, where low_precision(device) gives {low}" if on and on[0] == device.type else how
        raise Wrong(f"{call} ran the model on {device.type} {how}")
    if not os.path.exists(path):
        raise Wrong(f"{call} saved no checkpoint at path")
    if start is not None and fed and not meta and not all(map(torch.equal, (w.cpu() for w in fed[0][3]), start)):
        raise Wrong(f"{call} trained from other weights than the checkpoint's")
    if start is not None and steps and not steps[0][0]:
        raise Wrong(f"{call} found the optimizer's state empty at its first step, as if nothing had trained before")
    keep = 2 if tiny or start is None else 1  # after a bfloat16 run, the scale alone: a scaler left on kept counting
    if (was := case.get("at")) and scales and scales[0][:keep] != was[0][:keep]:  # was: [the state to begin from]
        why = "where the run it resumes left it" if keep == 2 else "as from scratch: bfloat16 kept none"
        raise Wrong(f"{call} began with (loss scale, good steps toward its growth) {scales[0]}, not {was[0]} ({why})")
    if [s for s in steps if s[3] is True and not s[2]]:
        raise Wrong(f"{call} took an optimizer step with inf or nan gradients")
    if (taken := sum(s[3] is True for s in steps)) > _N:
        raise Wrong(f"{call} changed the weights {taken} times in its {_N} steps")
    if taken < case.get("least", _N):  # from scratch, a float16 run may skip steps on overflows
        why = ", as they did in the first steps of the run it resumes" * (tiny and start is not None)
        overflowed = f" (in {sum(infs)} the gradients overflowed to inf{why})" * any(infs)
        raise Wrong(f"{call} changed the weights in {taken} of its {_N} steps{overflowed}")
    read = lambda: [h for h in tree_leaves(torch.load(path, _CPU, weights_only=False)) if torch.is_tensor(h)]
    held = [] if meta else call_or_wrong(read, (), f"torch.load of the checkpoint {call} left at path")  # its tensors
    kept = lambda ts: meta or all(any(h.shape == t.shape and h.equal(t.cpu()) for h in held) for t in ts if t.ndim)
    last = [v for s in steps[-1][5].state.values() for v in s.values() if torch.is_tensor(v)] if steps else []
    for what in [w for w, ts in (("weights", [*model.parameters()]), ("optimizer state", last)) if not kept(ts)][:1]:
        raise Wrong(f"after {call} the checkpoint at path does not hold the {what} the run ended with")
    if tiny and float(first.detach()[0, 1]) == 0.0:
        raise Wrong(f"{call} never moved the weight whose gradient is -1e-8 (float16's smallest number is 6e-8)")
    return None if meta else [p.detach().cpu().clone() for p in model.parameters()]


def _check_fit(fn: Any) -> None:
    expect_function(fn, "fit", "(model, X, y, steps, path, device)")
    data, tag, ends = make_data(64), f"cuda:{torch.cuda.device_count() + 1}", {}
    with tempfile.TemporaryDirectory() as folder:
        new = lambda: f"{folder}/{os.urandom(8).hex()}.pt"  # a path no file has
        for device in (_CPU, _META, *_GPUS):  # from scratch on each device, each leaving its checkpoint
            ends[device] = (path := new(), _train(fn, device, make_model(seed=1), data, path, "from scratch"))
        optimizer = torch.optim.Adam((script := make_model(seed=1)).parameters(), lr=1e-2)  # the colleague's steps
        for _ in range(_N):  # on the CPU, from the same start (backward inside autocast: the same numbers)
            with torch.autocast("cpu", dtype=torch.bfloat16):
                nn.functional.mse_loss(script(data[0]), data[1]).backward()
            optimizer.step(), optimizer.zero_grad()
        if not all(map(lambda g, w: torch.allclose(g, w, rtol=0, atol=1e-6), ends[_CPU][1], script.parameters())):
            said = f"fit(model, X, y, {_N}, path, torch.device('cpu')) from scratch trained to other weights than"
            raise Wrong(f"{said} the colleague's script gives on the CPU")
        with mock.patch("torch.serialization.location_tag", lambda _: tag):  # the CPU's, as if saved on a GPU
            torch.save(torch.load(ends[_CPU][0], weights_only=False), gpu := new())
        relabelled = f"resuming its CPU checkpoint relabelled as saved on {tag}"
        resumes = [(d, gpu, ends[_CPU][1], relabelled) for d in (_CPU, _META, *_GPUS)]
        resumes += [(_CPU, *ends[g], f"resuming its checkpoint saved on {g}") for g in _GPUS]
        for device, source, start, said in resumes:  # a fresh model: its weights and state from the checkpoint
            _train(fn, device, make_model(seed=2), data, shutil.copy(source, new()), said, start=start)
        for device in (_CPU, *_GPUS):  # float16, as on a T4: from scratch, resumed, overflowing, resuming bfloat16
            nn.init.zeros_((tiny := nn.Linear(4, 1, bias=False)).weight)
            said, ended = "from scratch on x = eye(4)", []
            start = _train(fn, device, tiny, _TINY, path := new(), said, half=True, least=1, scales=ended)
            said, again = "resuming that float16 run", nn.Linear(4, 1, bias=False)
            _train(fn, device, again, _TINY, shutil.copy(path, new()), said, half=True, start=start, at=ended[-1:])
            said, scales = "from scratch on x = eye(4), y = 1e5", []  # the scale comes down at each overflow
            _train(fn, device, nn.Linear(4, 1), _HUGE, path := new(), said, half=True, least=0, scales=scales)
            said, was = "resuming that overflowing run", scales[-1:]
            _train(fn, device, nn.Linear(4, 1), _HUGE, shutil.copy(path, new()), said, half=True, least=0, at=was)
            said, was, start = f"resuming the bfloat16 run relabelled as saved on {tag}", scales[:1], ends[_CPU][1]
            _train(fn, device, make_model(seed=2), data, shutil.copy(gpu, new()), said, half=True, start=start, at=was)
        _train(fn, _META, make_model(seed=1), data, new(), "from scratch", half=True)  # float16's own lines, on meta


#: At zero weights, x = eye(4) and y give (weight, bias) the gradient -0.5 * (y, sum(y)), exact in float16 times 2**16:
#: norm 1.5, √0.5, inf (x = ones, y = 1e38: scaled past every dtype, no 0 meets inf), 16-bit rounding; bias's not 0.
_Y, _INF = torch.tensor([[1.0], [0.0], [0.0], [0.0]]), torch.full((4, 1), 1e38)
_STEPS = [(torch.tensor([[1.5], [-1.5], [1.5], [0.0]]), 0.25, "y=(1.5, -1.5, 1.5, 0)"), (_Y, 0.25, "y=(1, 0, 0, 0)")]
_STEPS += [(_INF, 0.5, "y=1e38"), (torch.tensor([[0.1], [1 / 3], [-0.7], [0.2]]), 5.0, "y=(0.1, 1/3, -0.7, 0.2)")]
_autocast = lambda kind: torch.is_autocast_enabled(kind) and torch.get_autocast_dtype(kind)  # its dtype, or False


def _check_clip(fn: Any) -> None:
    expect_function(fn, "clipped_step", "(model, optimizer, scaler, x, y, max_norm)")
    reads = []  # (the call, how) of each host read of the gradients or of what was computed from them
    for device, (y, top, says) in [(d, case) for d in (_CPU, *_GPUS) for case in _STEPS]:
        model, seen, kind, low = nn.Linear(4, 1, device=device), [], device.type, low_precision(device)
        nn.utils.vector_to_parameters(torch.zeros(5, device=device), model.parameters())
        model.register_forward_pre_hook(lambda m, i, k=kind, s=seen: s.append((_autocast(k), m.weight.dtype, *i, 0)))
        x, exp = (torch.eye(4), torch.ones(4, 4))[y is _INF], 14 if top == 5.0 else 16  # 2**exp: not always 2**16
        scaler, args = torch.amp.GradScaler(kind, init_scale=2**exp, growth_interval=1), (x.clone(), y.clone(), top)
        args[0].requires_grad_(top == 5.0)  # the last case's x requires grad, as a learner's may: leave it so
        scaler.scale, scaler.step = mock.Mock(wraps=scaler.scale), mock.Mock(wraps=scaler.step)  # to see them called
        opt.zero_grad = model.zero_grad = mock.Mock(wraps=(opt := torch.optim.SGD(model.parameters(), 0.5)).zero_grad)
        call = f"clipped_step(model on {kind}, SGD(lr=0.5), GradScaler(2**{exp}), x, {says}, {top})"  # either zero_grad
        default = kind in ("cpu", "cuda") and torch.get_autocast_dtype(kind)  # here, the dtype low_precision is not:
        torch.set_autocast_dtype(kind, torch.float16 if low == torch.bfloat16 else torch.bfloat16) if default else None
        try:  # its torch calls: a host read of what the gradients gave waits, on a GPU, for the backward pass
            with CallLog() as log:
                got = call_or_wrong(fn, (model, opt, scaler, *args), call)
        finally:
            torch.set_autocast_dtype(kind, default) if default else None
        if (ran := seen[0][0] if seen else False) != low:
            how = ran and f"under autocast in {ran}; expected {low}: dtype=low_precision(device) (the default varies)"
            raise Wrong(f"{call} ran the model {how or f'without autocast for {kind}: device_type=device.type'}")
        if (steps := scaler.step.call_count) > 1:
            raise Wrong(f"{call} called scaler.step {steps} times: step the optimizer once")
        if (fed := getattr(seen[0][2], "dtype", torch.float32)) != torch.float32:  # layer_norm, softmax stay float32
            raise Wrong(f"{call} fed the model x in {fed}: leave x float32 (autocast casts inside the block)")
        if made := {seen[0][1], *(p.dtype for p in model.parameters())} - {torch.float32}:
            raise Wrong(f"{call} made the model's weights {made.pop()}: mixed precision keeps them float32")
        if not unchanged((x, y, top, top == 5.0, False), (*args, *(a.requires_grad for a in args[:2]))):
            raise Wrong(f"{call} changed x or y (values, dtype or requires_grad): move copies, leave them as they were")
        weight = (-0.5 * y.flatten()).to(low)  # the weight's and the bias's gradient, in autocast's dtype as there
        grad = torch.cat([weight, weight.float().sum().to(low).reshape(1)]).double()
        norm, g = (float("inf"), grad * 0) if y is _INF else (float(grad.norm()), grad)  # an overflow skips the step
        clipped = lambda v, to=top: -0.5 * v * min(1, to / (float(v.norm()) + 1e-6))  # SGD(lr=0.5) after the clip
        step, little, want = -0.5 * g, -0.5 * g / 2**exp * top / norm, clipped(g)
        if unused := " or ".join(f"scaler.{n}" for n in ("scale", "step") if not getattr(scaler, n).called):
            raise Wrong(f"{call} never called {unused} on the scaler given: backward and step go through it")
        slips = {"they are an unclipped step's: clip them to max_norm after scaler.unscale_, before scaler.step": step}
        slips["they are a step clipped to norm 1 (section 6): clip to max_norm"] = clipped(g, 1)
        again = "" if top > norm else ", or the scale was divided out again after the clip"  # by the weights alone
        slips[f"they moved 2**{exp} times too little: clip_grad_norm_ saw scaled gradients{again}"] = little
        what = "their start: these gradients overflow, so scaler.step skips the step" if y is _INF else "one SGD step"
        moved = nn.utils.parameters_to_vector(model.parameters()).detach().double().cpu()
        if not torch.allclose(moved, want, rtol=1e-4, atol=1e-7):  # then the one slip whose weights they are, if one
            said = [f": {s}" for s, w in slips.items() if torch.allclose(moved, w, 1e-3, 1e-9) and not w.equal(want)]
            raise Wrong(f"after {call} the weights differ from {what}{said[0] if len(said) == 1 else ''}")
        if scaler.get_scale() != 2.0 ** (exp - 1 if y is _INF else exp + 1):
            raise Wrong(f"{call} left the scale at {scaler.get_scale():g}: the scaler given updates it after each step")
        if not opt.zero_grad.called and any(p.grad is not None and p.grad.any() for p in model.parameters()):
            raise Wrong(f"{call} left gradients in .grad and never called zero_grad: the next step would add to them")
        if not isinstance(got, torch.Tensor) or got.device != device or got.dtype.itemsize < 4 or got.ndim:  # 0-dim
            raise Wrong(f"{call} returned {type(got).__name__} {got!r}, not clip_grad_norm_'s tensor on {device}")
        tensors, ptrs = lambda tree: {t.data_ptr() for t in tree_leaves(tree) if torch.is_tensor(t)} - {0}, set()
        for c in log.calls:  # the gradients, and each tensor computed from them (log.calls keeps them alive)
            grad = getattr(getattr(c.func, "__self__", None), "__name__", "") == "grad"  # a `.grad` read
            ptrs |= tensors(c.result) if grad or tensors((c.args, c.kwargs)) & ptrs else set()
        reads += [(call, w) for w, t in log.host_reads() if torch.is_tensor(t) and t.data_ptr() in ptrs]
        to_cpu = [
            c for c in log.named(("to", "tensor", "as_tensor")) if "cpu" in (*c.args[1:2], c.kwargs.get("device"))
        ]
        reads += [(call, c.written) for c in to_cpu if not c.kwargs.get("non_blocking") and tensors(c.args[:1]) & ptrs]
        value = expect_number(got.detach(), f"{call} to return a number")
        if (y is _INF) == (abs(value) < float("inf")) or y is not _INF and abs(value - norm) > 1e-3 * norm:
            scaled = ": that is the scaled value" if abs(value / 2**exp - norm) <= 1e-3 * norm < float("inf") else ""
            raise Wrong(f"{call} returned {value:g}; expected the unclipped norm, {norm:g}{scaled}")
    for call, how in reads[:1]:  # once every case is right otherwise
        raise Wrong(f"{call} read on the host ({how}) a value computed from the gradients: on a GPU, a wait each step")


#: Section 6's `low_precision(device)`, for answers outside the notebook and for the GPU tests.
low_precision = lambda device: (torch.bfloat16, torch.float16)[
    device.type == "mps" or device.type == "cuda" and not torch.cuda.is_bf16_supported(including_emulation=False)
]
_TEXTS = {  # each question's variable: its task (the notebook states it in full), then (after a newline) its hint
    "fit": "Debug `fit(model, X, y, steps, path, device)`: right anywhere, resumable anywhere, safe in float16.\n"
    "Where is each tensor (the checkpoint's too) when used, and what keeps tiny float16 gradients and skips inf steps?",
    "clipped_step": "Debug `clipped_step`: one scaled step, gradients clipped to `max_norm`; return their norm.\n"
    "Which call divides the gradients by the scale, and must it come before or after clip_grad_norm_?",
}
QUESTIONS = questions("04", _TEXTS, (_check_fit, _check_clip), context=lambda: dict(low_precision=low_precision, os=os))
