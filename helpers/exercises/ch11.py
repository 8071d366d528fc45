"""Chapter 11 exercises: mend a captured training step, capture one that accumulates gradients, mend a graph break."""

import contextlib
import copy
from typing import Any
from unittest import mock

import torch
from torch.nn import functional as F

from ..answers import Wrong, expect_function
from ..standins import GraphReplayModel
from .calls import CallLog
from .cases import call_or_wrong, questions, show, unchanged

#: normalise's inputs: peaks above 1, below 1, tiny, subnormal (no guard on the peak holds); 2-D, ints, halves, zeros.
_XS = [(x, torch.float32) for x in ([3.0, -6.0, 1.5], [0.25, -0.5, 0.125], [1e-13, -2e-13], [[1.0, -4.0], [2.0, 0.5]])]
_XS += [([3, -6, 1], torch.int64), ([0, 0], torch.int64), ([0.25, -0.5, 0.125], torch.float16), ([0, 0], torch.float16)]
_XS += [([1e-3, -5e-4], torch.float16), ([1e-5, -2e-5], torch.float16), ([3e-45, -6e-45], torch.float32)]
_HOST_READS = frozenset({"item", "tolist", "numpy", "__float__", "__int__", "__bool__", "__repr__", "__format__"})


def _shown(t: Any, like: torch.Tensor | None = None, rtol: float = 0) -> str:  # "" if t is a tensor like `like`
    kind = (t.shape, t.dtype, t.device) if isinstance(t, torch.Tensor) else None
    if like is not None and kind == (like.shape, like.dtype, like.device):
        if like.is_meta or torch.allclose(t.double(), like.double(), rtol=rtol, atol=0):
            return ""
    return f"{show(t.tolist())} ({t.dtype})" if kind and not t.is_meta else show(t)


_MADE = "{} of the {} parameters had no momentum buffer at capture, so each replay makes it anew (a GPU's capture runs "
_MADE += "nothing): run real steps first, with a gradient for every parameter"
_ADDED = "backward added to gradients that existed at capture, and each replay adds again: set them to None first"
_LATE = "a step after the capture added to the gradients it made (on a GPU, unfilled until a replay): capture last"
_MOVED = "after a capture rebind or replace none of them (.data =, set_, load_state_dict, .to(dtype))"
_STALE = "a backward before the capture added to gradients an earlier step left: set them to None before each step"
_rows = lambda t: sorted(map(tuple, t.reshape(-1, t.shape[-1]).tolist()))  # a batch's rows, in any order
_weights = lambda m: torch.cat([p.detach().reshape(-1) for p in m.parameters()])
_near = lambda a, b: torch.allclose(a.double(), b.double(), rtol=1e-5, atol=1e-6)
_ptrs = lambda ts: {t.data_ptr() for t in ts if isinstance(t, torch.Tensor)}
_events = lambda: {"inputs": [], "grads": 0, "steps": 0}  # what a capture (or what follows it) ran
_kinds = lambda m: [(p.dtype, p.requires_grad) for p in m.parameters()]
_memory = lambda m, opt, *ts: _ptrs([*m.parameters(), *ts, *(s.get("momentum_buffer") for s in opt.state.values())])
_settings = lambda opt: {key: value for key, value in opt.param_groups[0].items() if key != "params"}
_UNREAD = "the captured step never read {}: capture a step on the static tensors, so that what is copied in reaches it"
_STEPS = "the captured step called the given optimizer's step() {} times; one replay is one optimizer step"
_ACCUMULATE = "the captured step ran {} forward{} (of {} rows) and {} backward pass{}; accumulation takes one forward "
_ACCUMULATE += "and one backward() per micro-batch: {}, on 4 rows each"


def _watched(model: Any, opt: Any, fn: Any, args: tuple, call: str) -> tuple[Any, list[dict], bool]:
    """`fn(*args)`, watching each capture of the CPU model, what runs after it, and real steps on stale gradients."""
    seen, real, params, now, fresh, stale = [], GraphReplayModel.capture, list(model.parameters()), _events(), set(), []
    first = next(m for m in model.modules() if [*m.parameters(recurse=False)])  # its forward: one a model's forward
    rows = lambda m, a: now["inputs"].append(a[0].detach().clone())  # each forward's input, with autograd or not
    old, was = lambda p: p.grad is not None and bool(p.grad.any()) and id(p) not in fresh, {}  # a past step's there?
    onto = lambda p: lambda g: ["graph" in now or seen or was.__setitem__(id(p), old(p))] and None  # before adding
    added = lambda p: ["graph" in now or seen or stale.append(was.pop(id(p), False)), fresh.add(id(p))] and None
    grads = lambda g: now.update(grads=now["grads"] + 1)  # backward passes (each reaches the first parameter)
    steps = lambda *_: now.update(steps=now["steps"] + 1) or fresh.clear()  # fresh: parameters a backward reached since
    hooks = [first.register_forward_pre_hook(rows), params[0].register_hook(grads), opt.register_step_post_hook(steps)]
    hooks += [h for p in params for h in (p.register_hook(onto(p)), p.register_post_accumulate_grad_hook(added))]

    def capture(graph: Any, step: Any, *static: Any) -> Any:
        nonlocal now
        unmade = [p for p in params if "momentum_buffer" not in opt.state[p]]
        now = info = {"graph": graph, "had": _ptrs(p.grad for p in params), "settings": _settings(opt), **_events()}
        info["memory"] = _memory(model, opt, *args[3:])  # rebound later (`.data =`), a graph misses it
        try:
            return real(graph, step, *static)
        finally:
            info["made"] = [p for p in unmade if "momentum_buffer" in opt.state[p]] and (len(unmade), len(params))
            info["own grads"] = _ptrs(p.grad for p in params)
            now = info["after"] = _events()
            seen.append(info)

    try:
        with mock.patch.object(GraphReplayModel, "capture", capture):
            return call_or_wrong(fn, args, call), seen, any(stale)
    finally:
        [hook.remove() for hook in hooks]


def _eager_step(model: Any, opt: Any, xs: torch.Tensor, ys: torch.Tensor, k: int, div: int) -> torch.Tensor:
    opt.zero_grad(set_to_none=True)  # the mean of k micro-batches' losses (k = 0: one batch), their sum if div is 1
    loss = sum(F.mse_loss(model(x), y) for x, y in zip(xs, ys, strict=True)) / k if k else F.mse_loss(model(xs), ys)
    (loss * k / div if k else loss).backward()
    opt.step()
    return loss.detach()


def _check_capture(fn: Any, name: str, ks: tuple[int, int]) -> None:
    statics = "static_xs, static_ys" if ks[0] else "static_x, static_y"
    expect_function(fn, name, f"(graph, model, optimizer, {statics})")
    for k, seed in zip(ks, (3, 4), strict=True):  # a model with an earlier step's gradients left, SGD with momentum
        torch.manual_seed(seed)
        model, graph, nn = torch.nn.Sequential(), GraphReplayModel(), torch.nn
        model.extend([nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1)])
        opt, rng = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), torch.Generator().manual_seed(seed)
        F.mse_loss(model(torch.randn(4, 6)), torch.zeros(4, 1)).backward()
        batch = lambda: [torch.randn(*(k,) * bool(k), 4, n, generator=rng) for n in (6, 1)]  # noqa: B023
        (sx, sy), settings, kinds = batch(), _settings(opt), _kinds(model)
        call = f"{name}(graph, model, optimizer, {statics})" + f" with {k} micro-batches" * bool(k)
        got, seen, stale = _watched(model, opt, fn, (graph, model, opt, sx, sy), call)
        info = ([i for i in seen if i["graph"] is graph] or [None])[-1]
        if info is None or graph._ops is None or "replay" in vars(graph):  # or into another graph than it was given
            raise Wrong(f"{call} captured nothing{' into graph' * bool(seen)}: call graph.capture(step, {statics})")
        if made := next((i["made"] for i in seen if i["made"]), None):
            raise Wrong(f"{call}: {_MADE.format(*made)}")
        if (_settings(opt), _kinds(model)) != (settings, kinds):
            what = ("the parameters' dtype or requires_grad", "the optimizer's settings")[_settings(opt) != settings]
            raise Wrong(f"{call} changed {what}: leave them as they are")
        if changed := {key: v for key, v in info["settings"].items() if settings[key] != v}:
            raise Wrong(f"{call} captured the step with {show(changed)}: a graph keeps the settings it captured")
        reads, writes = (set().union(*(_ptrs(o[part]) for o in graph._ops)) for part in (1, slice(3, 4)))
        if unread := [n for n, t in zip(statics.split(", "), (sx, sy), strict=True) if t.data_ptr() not in reads]:
            raise Wrong(f"{call}: {_UNREAD.format(' and '.join(unread))}")
        if info["steps"] != 1:
            raise Wrong(f"{call}: {_STEPS.format(info['steps'])}")
        if k and ((rows := [x.numel() // x.shape[-1] for x in info["inputs"]]) != [4] * k or info["grads"] != k):
            n, grads = len(rows), info["grads"]  # forwards, and backward passes (gradients computed)
            raise Wrong(f"{call}: {_ACCUMULATE.format(n, 's' * (n != 1), rows, grads, 'es' * (grads != 1), k)}")
        if stale:  # after the counts: a step per micro-batch also steps on gradients left from the one before
            raise Wrong(f"{call}: {_STALE}")
        if info["after"]["grads"] and info["own grads"] & _ptrs(p.grad for p in model.parameters()):
            raise Wrong(f"{call}: {_LATE}")
        if not isinstance(got, torch.Tensor) or got.numel() != 1:
            raise Wrong(f"{call} returned {show(got)}; expected the static loss, the one-number tensor step returns")
        if got.data_ptr() not in writes:
            raise Wrong(f"{call} returned a tensor no replay writes: return the loss the captured step returns")
        twins = [copy.deepcopy(model) for _ in (k, 1)]  # eager steps on the mean loss, and on the sum (a slip)
        opts = [torch.optim.SGD(t.parameters(), **settings) for t in twins]
        [o.load_state_dict(copy.deepcopy(opt.state_dict())) for o in opts]
        for i in range(1, 4):
            (x, y), said = batch(), f"after replay {i} of what {call} captured, the "
            y *= 100 if i == 3 else 1  # a large loss: a step changed by clipping, say, shows
            if _memory(model, opt, sx, sy) != info["memory"]:
                raise Wrong(f"{said}parameters, momentum or static tensors are not the memory captured: {_MOVED}")
            sx.copy_(x), sy.copy_(y)
            try:
                graph.replay()
            except RuntimeError as exc:  # a size read from values at capture
                raise Wrong(f"{said}replay failed: {exc}") from None
            used = [j for x in info["inputs"] for j in range(k) if _rows(x) == _rows(sx[j])]  # replayed: refilled
            if k and sorted(used) != [*range(k)]:
                raise Wrong(f"{call}: its forwards did not read the {k} micro-batches static_xs[i] once each")
            want, _ = (_eager_step(t, o, x, y, k, div) for t, o, div in zip(twins, opts, (k, 1), strict=True))
            if (same := _near(w := _weights(model), w0 := _weights(twins[0]))) and not _near(got, want):
                mean = f" (the mean of the {k} micro-batches' losses)" * bool(k)
                raise Wrong(f"{said}returned loss holds {got.item():.6g}; expected {want.item():.6g}{mean}")
            if not same:
                gap = f" (at most {(w - w0).abs().max().item():.3g} away)"
                added = info["had"] & set().union(*(_ptrs([o]) for f, *_, o in graph._ops if f._opname == "add_"))
                summed = k > 1 and _near(w, _weights(twins[1]))
                why = [_ADDED] * bool(added) + [f"it followed the sum of the {k} losses: divide each by {k}"] * summed
                raise Wrong(f"{said}weights differ from an eager step's{f': {why[0]}' if why else gap}")


def _check_normalise(fn: Any) -> None:
    expect_function(fn, "normalise", "(x)")
    for values, dtype in _XS:
        x, kept = torch.tensor(values, dtype=dtype), torch.tensor(values, dtype=dtype)
        call, want, got = f"normalise({values}, {dtype})", kept / kept.abs().max() if kept.any() else kept, fn(x)
        if not unchanged(kept, x):
            raise Wrong(f"{call} changed its arguments: return a new tensor and leave x as it was")
        if (seen := _shown(got, want, 1e-3)) and _shown(got, want.to((kept / 1).dtype), 1e-3):  # all zeros: either
            raise Wrong(f"{call} returned {seen}; expected {_shown(want)}")
    with CallLog() as log, contextlib.suppress(Exception):  # a run of its own: a call log breaks torch.cond
        fn(torch.tensor(_XS[0][0]))
    reads = ["print(t)" if c.name in ("__repr__", "__format__") else c.written for c in log.named(_HOST_READS)]
    graphs = []  # one compile after the results: each break adds a graph
    torch.compiler.reset()
    torch.compile(fn, backend=lambda gm, inputs: graphs.append(gm) or gm.forward)(torch.tensor(_XS[0][0]))
    why = "breaks the graph" if graphs else "keeps torch.compile out (torch.compiler.disable?)"
    why = f"reads a tensor's value on the CPU ({reads[0]}): choose with torch.where" if reads else why
    if len(graphs) != 1:  # none: compiled nothing
        raise Wrong(f"torch.compile made {len(graphs)} graphs of normalise, not one: it {why} (set_logs shows where)")


_TEXTS = {
    "capture_step": "Debug this: make `capture_step(graph, model, optimizer, static_x, static_y)` capture a step "
    "each replay repeats as an eager step would; return its static loss.\nAn `if` on a tensor reads it on the CPU: "
    "check the loss after a replay. Gradients the real steps left get added to by each replay: set them to None.",
    "capture_accumulation": "Write `capture_accumulation(graph, model, optimizer, static_xs, static_ys)`: one captured "
    "step over len(static_xs) micro-batches; return the static mean loss.\nIn the step: for each micro-batch, (loss / "
    "k).backward(), summing loss.detach() / k; then optimizer.step(). Gradients to None, one real step, to None again.",
    "normalise": "Debug this: make `normalise(x)` compile into one graph, with the same results.\n"
    "`peak.item()` reads on the CPU; torch.where picks on the device.",
}
_capture = lambda name, ks: lambda fn: _check_capture(fn, name, ks)  # ks: micro-batches (0: one batch), two cases
_CHECKS = (_capture("capture_step", (0, 0)), _capture("capture_accumulation", (2, 3)), _check_normalise)
QUESTIONS = questions("11", _TEXTS, _CHECKS, {"normalise": {"time_limit": 60.0}})  # compile: torch._dynamo
