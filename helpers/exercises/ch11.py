"""Chapter 11 exercises: mend a captured training step, capture one that accumulates gradients, mend a graph break."""

import contextlib
import copy
from typing import Any

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


class _Graph(GraphReplayModel):
    """The CPU model of a graph, noting at capture the gradients that exist and the momentum buffers that do not."""

    def capture(self, fn: Any, *static_inputs: torch.Tensor) -> Any:
        params, state = list(self.model.parameters()), self.optimizer.state  # type: ignore[attr-defined]
        self.grads = {p.grad.data_ptr() for p in params if p.grad is not None}
        self.unmade = [p for p in params if "momentum_buffer" not in state[p]]
        return super().capture(fn, *static_inputs)

    def wrote(self, ptrs: set, name: str = "") -> bool:
        """Whether a recorded operator (its name starting with `name`) wrote a tensor at one of the addresses `ptrs`."""
        return any(f.__name__.startswith(name) and getattr(o, "data_ptr", int)() in ptrs for f, *_, o in self._ops)


_MADE = "the momentum buffers were made inside the capture, so every replay makes them again from the gradient and "
_MADE += "the momentum is lost: run a real step before capturing"
_ADDED = "backward added to gradients that existed at capture, and every replay adds to them again: set them to None "
_ADDED += "(optimizer.zero_grad(set_to_none=True)) just before capturing"
_weights = lambda m: torch.cat([p.detach().reshape(-1) for p in m.parameters()])
_near = lambda a, b: torch.allclose(a, b, rtol=1e-5, atol=1e-6)


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
        opt, graph, rng = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), _Graph(), torch.Generator()
        rng.manual_seed(seed)
        F.mse_loss(model(torch.randn(4, 6)), torch.zeros(4, 1)).backward()
        batch = lambda: [torch.randn(*(k,) * bool(k), 4, n, generator=rng) for n in (6, 1)]  # noqa: B023
        (sx, sy), settings = batch(), {key: v for key, v in opt.param_groups[0].items() if key != "params"}
        graph.model, graph.optimizer, call = model, opt, f"{name}(graph, model, optimizer, {statics})"
        got = call_or_wrong(fn, (graph, model, opt, sx, sy), call + f" with {k} micro-batches" * bool(k))
        if graph._ops is None or "replay" in vars(graph):
            raise Wrong(f"{call} captured nothing: capture the step with graph.capture(step, {statics})")
        if not isinstance(got, torch.Tensor) or got.numel() != 1:
            raise Wrong(f"{call} returned {show(got)}; expected the static loss, the one-number tensor step returns")
        if {key: opt.param_groups[0][key] for key in settings} != settings:
            raise Wrong(f"{call} changed the optimizer's settings: leave them as they are")
        twins = [copy.deepcopy(model) for _ in (k, 1)]  # eager steps on the mean loss, and on the sum (a slip)
        opts = [torch.optim.SGD(t.parameters(), **settings) for t in twins]
        [o.load_state_dict(copy.deepcopy(opt.state_dict())) for o in opts]
        for i in range(1, 4):
            (x, y), before, said = batch(), _weights(model), f"after replay {i} of what {call} captured, the "
            sx.copy_(x), sy.copy_(y), graph.replay()
            want, _ = (_eager_step(t, o, x, y, k, div) for t, o, div in zip(twins, opts, (k, 1), strict=True))
            if _near(_weights(model), _weights(twins[0])) and not _near(got, want):
                mean = f" (the mean of the {k} micro-batches' losses)" * bool(k)
                raise Wrong(f"{said}returned loss holds {got.item():.6g}; expected {want.item():.6g}{mean}")
            if not _near(_weights(model), _weights(twins[0])):
                gap = f" (at most {(_weights(model) - _weights(twins[0])).abs().max().item():.3g} away)"
                made = {b.data_ptr() for p in graph.unmade if (b := opt.state[p].get("momentum_buffer")) is not None}
                summed = f"it followed the sum of the {k} losses: divide each by {k}"
                why = [_MADE] * graph.wrote(made) + [_ADDED] * graph.wrote(graph.grads, "add_")
                why += [summed] * (k > 1 and _near(_weights(model), _weights(twins[1])))
                why += [
                    "the replay left them as they were: the captured step must call optimizer.step()"
                ] * torch.equal(before, _weights(model))
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
    "step that each replay repeats as an eager step would, and return its static loss.\n`.item()` reads on the CPU: "
    "return the loss and read it after a replay. SGD makes its momentum buffer on its first step: run one real step "
    "before capturing, then set the gradients to None.",
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
