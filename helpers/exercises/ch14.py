"""Chapter 14 exercises: the idle share of a device lane from a trace, and a slow training loop to fix.

The first checker compares the learner's share with its own on windows where pairs overlap, stick
out of the window or leave it empty, and names the usual slips when the answer matches one (pairs
counted twice, the busy share, a percentage). The second runs the learner's loop on fresh copies
of one small model: its results must equal the slow loop's, its trace (read from
`torch.profiler`'s events, never from printed text) must not show a read per step or an
element-by-element loop, and it must run in well under the slow loop's time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch

from ..checking import Question, Wrong, expect_function, expect_number, expect_type
from ..profiling import quiet_stderr
from .cases import Slip, table

# -- Question 1: the idle share of a window ------------------------------------------------------


def covered_ms(pairs: Any, lo: float | None = None, hi: float | None = None) -> float:
    """Milliseconds covered by at least one pair, each cut to [lo, hi] when given (the GPU tests use it too)."""
    cut = [(max(a, lo) if lo is not None else a, min(b, hi) if hi is not None else b) for a, b in pairs]
    total, reach = 0.0, None
    for a, b in sorted(p for p in cut if p[1] > p[0]):
        if reach is None or a > reach:
            total, reach = total + b - a, b
        elif b > reach:
            total, reach = total + b - reach, b
    return total


def _idle(pairs: Any, lo: float, hi: float) -> float:
    return 1 - covered_ms(pairs, lo, hi) / (hi - lo)


#: Overlapping, unsorted, nested and touching pairs; pairs sticking out, wholly before and wholly after the
#: window; no pairs; a window that does not start at 0.
_IDLE_CASES = (
    ([(2.0, 5.0), (1.0, 3.0), (7.0, 8.0)], 0.0, 12.0),
    ([(9.0, 12.0), (-2.0, 1.0)], 0.0, 10.0),
    ([], 0.0, 4.0),
    ([(0.0, 4.0), (1.0, 2.0), (6.0, 7.0)], 0.0, 8.0),
    ([(12.0, 15.0), (-5.0, -1.0), (3.0, 4.0), (4.0, 6.0)], 0.0, 10.0),
    ([(6.5, 7.0), (5.0, 6.0), (5.5, 9.0)], 5.0, 10.0),
)

_check_idle_share = table(
    "idle_share",
    "(busy, start_ms, end_ms)",
    _IDLE_CASES,
    _idle,
    slips=(
        Slip(
            lambda busy, lo, hi: 1 - sum(max(0.0, min(b, hi) - max(a, lo)) for a, b in busy) / (hi - lo),
            "pairs that overlap were counted twice: merge overlapping pairs before adding up their lengths",
        ),
        Slip(
            lambda busy, lo, hi: 1 - covered_ms(busy) / (hi - lo),
            "a pair that sticks out of the window counts only for the part inside it: clip each pair to "
            "[start_ms, end_ms]",
        ),
        Slip(lambda busy, lo, hi: 1 - _idle(busy, lo, hi), "that is the busy share; return the idle share"),
        Slip(lambda busy, lo, hi: 100 * _idle(busy, lo, hi), "that looks like a percentage; return a fraction"),
    ),
)


# -- Question 2: the slow loop, fixed ------------------------------------------------------------

#: Steps of the checker's pass, and samples in each batch.
_STEPS, _BATCH = 8, 256
#: Steps of the pass whose trace is read (a trace of a slow loop has thousands of events to parse).
_TRACED_STEPS = 2
#: A fixed loop takes at most this share of the slow loop's time (the slow one takes about 4× longer) ...
_MOST_TIME_SHARE = 0.5
#: ... or at most this many times the checker's own fixed loop (either will do: a busy machine slows some runs).
_MOST_TIMES_QUICK = 1.5


def _fresh(steps: int = _STEPS) -> tuple[Any, Any, list[tuple[torch.Tensor, torch.Tensor]]]:
    """The same small model, optimizer and `steps` batches every time."""
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    batches = []
    for _ in range(steps):
        inputs = torch.randn(_BATCH, 8, generator=g)
        batches.append((inputs, inputs[:, :4].argmax(dim=1)))
    return model, opt, batches


def slow_train(model: Any, opt: Any, batches: Any) -> tuple[list[float], int]:
    """The loop as the notebook gives it: a read per step, and accuracy counted element by element."""
    import torch.nn.functional as F

    losses, correct = [], 0
    for x, y in batches:
        opt.zero_grad()
        out = model(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        pred = out.argmax(dim=1)
        for i in range(len(y)):
            correct += int(pred[i] == y[i])
    return losses, correct


def _quick_train(model: Any, opt: Any, batches: Any) -> tuple[list[float], int]:
    """The same pass without a read a step or a loop over samples: the yardstick for the learner's time."""
    import torch.nn.functional as F

    kept, hits = [], torch.zeros((), dtype=torch.long)
    for inputs, labels in batches:
        opt.zero_grad()
        logits = model(inputs)
        value = F.cross_entropy(logits, labels)
        value.backward()
        opt.step()
        kept.append(value.detach())
        hits += logits.argmax(1).eq(labels).sum()
    return torch.stack(kept).tolist(), int(hits)


def _seconds(*fns: Callable[..., Any]) -> list[float]:
    """The best of five runs of each function on fresh copies, on one thread (threads that wait for a busy core
    stall a step), taken in turn, so that whatever else loads the machine slows each of them alike."""
    best, threads = [float("inf")] * len(fns), torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for _ in range(5):
            for i, fn in enumerate(fns):
                args = _fresh()
                start = time.perf_counter()
                fn(*args)
                best[i] = min(best[i], time.perf_counter() - start)
    finally:
        torch.set_num_threads(threads)
    return best


def _losses(value: Any) -> list[float]:
    if isinstance(value, torch.Tensor):
        value = value.detach().reshape(-1).tolist()
    values = expect_type(value, list, "a list of the losses, one a step")
    return [float(expect_number(v, "each loss to be a number")) for v in values]


def _check_train(fn: Callable[..., Any]) -> None:
    from torch.profiler import ProfilerActivity, profile

    expect_function(fn, "train", "(model, opt, batches)")
    want_losses, want_correct = slow_train(*_fresh())
    got = fn(*_fresh())
    pair = expect_type(got, tuple, "train to return (losses, correct)")
    if len(pair) != 2:
        raise Wrong(f"train returned {len(pair)} values; return two: (losses, correct)")
    losses = _losses(pair[0])
    if len(losses) != _STEPS:
        raise Wrong(f"train returned {len(losses)} losses for {_STEPS} steps; return one a step")
    if not torch.allclose(torch.tensor(losses), torch.tensor(want_losses), rtol=1e-4, atol=1e-6):
        step = next(
            i for i, (a, b) in enumerate(zip(losses, want_losses, strict=True)) if abs(a - b) > 1e-4 * abs(b) + 1e-6
        )
        raise Wrong(
            f"the losses differ from the slow loop's from step {step} on ({losses[step]:.5g} instead of "
            f"{want_losses[step]:.5g}): a fix must keep what the loop computes (zero_grad, backward, step each time)"
        )
    correct = expect_number(pair[1], "correct, the number of right predictions, to be a number")
    if correct != int(correct):
        raise Wrong(f"correct should count the right predictions, a whole number; got {correct:g}, a fraction")
    if correct != want_correct:
        raise Wrong(f"train counted {correct:g} right predictions, the slow loop {want_correct}")
    with quiet_stderr(), profile(activities=[ProfilerActivity.CPU], acc_events=True) as prof:  # a short trace
        fn(*_fresh(_TRACED_STEPS))
    counts = {e.key: e.count for e in prof.key_averages()}
    selects, reads = counts.get("aten::select", 0), counts.get("aten::_local_scalar_dense", 0)
    if selects > 2 * _TRACED_STEPS:  # a step may index a tensor or two; a loop over samples indexes hundreds of times
        raise Wrong(
            f"the trace of {_TRACED_STEPS} steps shows {selects} aten::select calls: a Python loop still indexes a "
            "tensor element by element; compare and sum over the whole batch"
        )
    if reads > _TRACED_STEPS // 2 + 1:  # one read at the end of the pass, or two
        raise Wrong(
            f"the trace of {_TRACED_STEPS} steps shows {reads} calls to aten::_local_scalar_dense, which .item(), "
            "int() and float() of a tensor run: on a GPU each one waits for the GPU; keep the values on the device and "
            "read them once at the end"
        )
    slow, quick, yours = _seconds(slow_train, _quick_train, fn)
    if yours > _MOST_TIME_SHARE * slow and yours > _MOST_TIMES_QUICK * quick:
        raise Wrong(
            f"your loop took {yours * 1e3:.1f} ms, the slow one {slow * 1e3:.1f} ms: it should take at most "
            f"{_MOST_TIME_SHARE:.0%} of that; trace it and look for what still runs once per sample or per step"
        )


def _context() -> dict[str, Any]:
    import torch.nn.functional as F

    return {"torch": torch, "F": F}


QUESTIONS = [
    Question(
        number=1,
        task="Write `idle_share(busy, start_ms, end_ms)`: the share of the window [start_ms, end_ms] in which "
        "none of the (start, end) pairs in busy was running, from 0 to 1; pairs may overlap and stick out.",
        variable="idle_share",
        checker=_check_idle_share,
        hint_text="Clip each pair to the window, sort the pairs by start, and walk through them keeping the "
        "end of the covered stretch so far: a pair that starts before it only adds what reaches past it. "
        "Idle = 1 - covered / (end_ms - start_ms).",
        chapter="14",
    ),
    Question(
        number=2,
        task="Rewrite the slow `train(model, opt, batches)` so that it returns the same (losses, correct) "
        "without a read of a value every step and without a Python loop over the predictions.",
        variable="train",
        checker=_check_train,
        hint_text="Trace it as section 3 did: count aten::_local_scalar_dense (what .item() and int() run) and "
        "aten::select (indexing). Keep each loss as loss.detach() and stack them once at the end; count right "
        "predictions with (out.argmax(dim=1) == y).sum() on the device, and turn it into an int once.",
        chapter="14",
        context=_context,
        time_limit=30.0,
    ),
]
