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


_MADE = "the momentum buffers were made inside a capture: on a GPU a capture runs nothing, and every replay would "
_MADE += "make them again from the gradient, losing the momentum: run a real step before capturing"
_ADDED = "backward added to gradients that existed at capture, and every replay adds to them again: set them to None "
_ADDED += "(optimizer.zero_grad(set_to_none=True)) just before capturing"
_LATE = "a step after the capture added to the gradients it made, which on a GPU hold nothing until a replay: capture "
_LATE += "last, or set the gradients to None before a later step"
_weights = lambda m: torch.cat([p.detach().reshape(-1) for p in m.parameters()])
_near = lambda a, b: torch.allclose(a, b, rtol=1e-5, atol=1e-6)
_ptrs = lambda ts: {t.data_ptr() for t in ts if isinstance(t, torch.Tensor)}
_UNREAD = "the captured step never read {}: capture a step on them, so that what is copied into them reaches the graph"
_STEPS = "the captured step called the given optimizer's step() {} times; one replay is one optimizer step"
_ACCUMULATE = "the captured step ran {} forwards (of {} rows) and {} backward passes; accumulation takes one of each "
_ACCUMULATE += "per micro-batch: {}, on 4 rows"


def _watched(model: Any, opt: Any, fn: Any, args: tuple, call: str) -> tuple[Any, list[dict]]:
    """`fn(*args)`, watching every capture of the CPU model it makes: the gradients that existed, the momentum buffers
    it made, the rows of each forward, the backward passes and optimizer steps it ran, the weights at its end."""
    seen, real, params = [], GraphReplayModel.capture, list(model.parameters())
    count = lambda d, k: d.update({k: d[k] + 1})

    def capture(graph: Any, step: Any, *static: Any) -> Any:
        info = {"graph": graph, "grads": _ptrs(p.grad for p in params), "rows": [], "backwards": 0, "steps": 0}
        unmade = [p for p in params if "momentum_buffer" not in opt.state[p]]
        hooks = [model.register_forward_pre_hook(lambda m, a: info["rows"].append(getattr(a[0], "shape", [0])[0]))]
        hooks += [params[0].register_post_accumulate_grad_hook(lambda p: count(info, "backwards"))]
        hooks += [opt.register_step_post_hook(lambda *_: count(info, "steps"))]
        try:
            return real(graph, step, *static)
        finally:
            [hook.remove() for hook in hooks]
            info["made"] = [p for p in unmade if "momentum_buffer" in opt.state[p]]
            info["end"], info["own grads"] = _weights(model), _ptrs(p.grad for p in params)
            seen.append(info)

    with mock.patch.object(GraphReplayModel, "capture", capture):
        return call_or_wrong(fn, args, call), seen


def _eager_step(model: Any, opt: Any, xs: torch.Tensor, ys: torch.Tensor, k: int, div: int) -> torch.Tensor:
    """One eager step on the mean loss of k micro-batches (k = 0: one batch), or on their sum if div is 1."""
    opt.zero_grad(set_to_none=True)
    loss = sum(F.mse_loss(model(x), y) for x, y in zip(xs, ys, strict=True)) / k if k else F.mse_loss(model(xs), ys)
    (loss * k / div if k else loss).backward()
    opt.step()
    return loss.detach()


def _check_capture(fn: Any, name: str, ks: tuple[int, int]) -> None:
    statics = "static_xs, static_ys" if ks[0] else "static_x, static_y"
    expect_function(fn, name, f"(graph, model, optimizer, {statics})")
    for k, seed in zip(ks, (3, 4), strict=True):  # a model with an earlier step's gradients left, SGD with momentum
        torch.manual_seed(seed)
        model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
        opt, graph = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), GraphReplayModel()
        rng, params = torch.Generator().manual_seed(seed), list(model.parameters())
        F.mse_loss(model(torch.randn(4, 6)), torch.zeros(4, 1)).backward()
        batch = lambda: [torch.randn(*(k,) * bool(k), 4, n, generator=rng) for n in (6, 1)]  # noqa: B023
        (sx, sy), settings = batch(), {key: v for key, v in opt.param_groups[0].items() if key != "params"}
        call = f"{name}(graph, model, optimizer, {statics})" + f" with {k} micro-batches" * bool(k)
        got, seen = _watched(model, opt, fn, (graph, model, opt, sx, sy), call)
        info = ([i for i in seen if i["graph"] is graph] or [None])[-1]
        if info is None or graph._ops is None or "replay" in vars(graph):
            raise Wrong(f"{call} captured nothing: capture the step with graph.capture(step, {statics})")
        if any(i["made"] for i in seen):
            raise Wrong(f"{call}: {_MADE}")
        reads, writes = (set().union(*(_ptrs(o[part]) for o in graph._ops)) for part in (1, slice(3, 4)))
        if not {sx.data_ptr(), sy.data_ptr()} <= reads:
            raise Wrong(f"{call}: {_UNREAD.format(statics)}")
        if info["steps"] != 1:
            raise Wrong(f"{call}: {_STEPS.format(info['steps'])}")
        if k and (info["rows"] != [4] * k or info["backwards"] != k):
            raise Wrong(f"{call}: {_ACCUMULATE.format(len(info['rows']), info['rows'], info['backwards'], k)}")
        if not torch.equal(info["end"], _weights(model)) and info["own grads"] & _ptrs(p.grad for p in params):
            raise Wrong(f"{call}: {_LATE}")
        if not isinstance(got, torch.Tensor) or got.numel() != 1:
            raise Wrong(f"{call} returned {show(got)}; expected the static loss, the one-number tensor step returns")
        if got.data_ptr() not in writes:
            raise Wrong(f"{call} returned a tensor no replay writes: return the loss the captured step returns")
        if {key: opt.param_groups[0][key] for key in settings} != settings:
            raise Wrong(f"{call} changed the optimizer's settings: leave them as they are")
        twins = [copy.deepcopy(model) for _ in (k, 1)]  # eager steps on the mean loss, and on the sum (a slip)
        opts = [torch.optim.SGD(t.parameters(), **settings) for t in twins]
        [o.load_state_dict(copy.deepcopy(opt.state_dict())) for o in opts]
        for i in range(1, 4):
            (x, y), said = batch(), f"after replay {i} of what {call} captured, the "
            sx.copy_(x), sy.copy_(y), graph.replay()
            want, _ = (_eager_step(t, o, x, y, k, div) for t, o, div in zip(twins, opts, (k, 1), strict=True))
            if _near(_weights(model), _weights(twins[0])) and not _near(got, want):
                mean = f" (the mean of the {k} micro-batches' losses)" * bool(k)
                raise Wrong(f"{said}returned loss holds {got.item():.6g}; expected {want.item():.6g}{mean}")
            if not _near(_weights(model), _weights(twins[0])):
                gap = f" (at most {(_weights(model) - _weights(twins[0])).abs().max().item():.3g} away)"
                added = info["grads"] & set().union(*(_ptrs([o]) for f, *_, o in graph._ops if f._opname == "add_"))
                why = [_ADDED] * bool(added) + [f"it followed the sum of the {k} losses: divide each by {k}"] * (
                    k > 1 and _near(_weights(model), _weights(twins[1]))
                )
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
    "capture_step": "Debug this: make `capture_step(graph, model, optimizer, static_x, static_y)` capture a training "
    "step that each replay repeats as an eager step would, and return its static loss.\nAn `if` on a tensor reads it "
    "on the CPU: check the returned loss after each replay instead. Gradients the real steps left are added to by "
    "every replay: set them to None just before capturing.",
    "capture_accumulation": "Write `capture_accumulation(graph, model, optimizer, static_xs, static_ys)`: capture "
    "one optimizer step over len(static_xs) micro-batches, and return the static mean loss.\nIn the step: for each "
    "micro-batch, (loss / k).backward(), keeping the sum of loss.detach() / k; then optimizer.step(). Before "
    "capturing: one real step, then the gradients set to None.",
    "normalise": "Debug this: make `normalise(x)` compile into one graph, with the same results.\n"
    "`peak.item()` reads on the CPU; torch.where picks on the device.",
}
_CHECKS = (
    lambda fn: _check_capture(fn, "capture_step", (0, 0)),
    lambda fn: _check_capture(fn, "capture_accumulation", (2, 3)),
    _check_normalise,
)
_SLOW = {"normalise": {"time_limit": 60.0}}  # compile: torch._dynamo
QUESTIONS = questions("11", _TEXTS, _CHECKS, _SLOW)
