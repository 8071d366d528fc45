"""Chapter 14 exercises: the idle share of a device lane from a trace, and a slow training loop to fix."""

import timeit
from time import process_time
from typing import Any

import torch

from ..answers import Wrong, expect_function, expect_type, one_element_item
from ..training import threads_on_cpu
from .calls import FROM_DATA, CallLog
from .cases import call_or_wrong, questions, same, show, table, unchanged


def covered_ms(pairs: Any, lo: float | None = None, hi: float | None = None) -> float:
    """Milliseconds covered by at least one pair, each cut to [lo, hi] when given (the GPU tests use it too)."""
    total, reach = 0.0, float("-inf")
    for a, b in sorted((a if lo is None else max(a, lo), b if hi is None else min(b, hi)) for a, b in pairs):
        total, reach = total + max(0.0, b - max(a, reach)), max(reach, b)
    return total


_idle = lambda pairs, lo, hi: (v := 1 - covered_ms(pairs, lo, hi) / (hi - lo)) * (v > 1e-12)  # a rounding hair: 0
#: Overlapping, unsorted, nested, touching, sticking out, wholly outside, none; start_ms < 0 (a pair below 0); off-grid.
_IDLE_CASES = (([(2, 5), (1, 3), (7, 8)], 0.0, 12), ([], 0.0, 4), ([(9, 12), (-2, 1), (15, 16)], 0.0, 10))
_IDLE_CASES += (([(0.1, 0.3), (0.2417, 0.4523)], 0.0, 0.7), ([(0.0, 4), (1, 2), (2.5, 3), (6, 7)], 0.0, 8))
_IDLE_CASES += (([(12, 15), (-5, -1), (3, 4), (4, 6)], 0.0, 10), ([(6.5, 7), (5, 6), (5.5, 9), (-4, -3)], -5, 10))
_IDLE_CASES += (([(0.1371, 1.7129), (1.5003, 2.0417), (2.9, 3.1)], 0.0613, 2.9871),)
_IDLE_CASES += (([(16_777_217, 16_777_219), (16_777_220, 16_777_221)], 16_777_216, 16_777_226),)  # past float32
_IDLE_CASES += (([(0.5748, 0.8362), (0.8362, 0.95), (0.2, 0.5748)], 0.3151, 0.8637),)  # an exact cover: 1 - 1 < 0
_SAMPLES, _BATCH = 5220, 1024  # question 2's pass: six steps, the last of 100 samples
_PASSES = ((None, ""), (594, " on one batch of 594 samples"), (0, " on no batches"))  # a float32 share × 594 < 149 hits


def _fresh(device: str = "cpu", size: int | None = None) -> tuple[Any, Any, list[tuple[torch.Tensor, torch.Tensor]]]:
    torch.manual_seed(0)  # the dropout's masks too: the answer's pass draws the slow loop's
    model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Dropout(0.2), torch.nn.Linear(32, 4))
    [setattr(p, "grad", torch.ones_like(p)) for p in model.to(device).parameters()]  # gradients of an earlier step
    (opt := torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)).step()
    x = torch.randn(_SAMPLES, 8, generator=torch.Generator().manual_seed(1)).to(device)
    chunks = x.split(_BATCH) if size is None else [x[:size]] * (size > 0)
    return model, opt, [(b, b[:, :4].argmax(dim=1)) for b in chunks]


def _slow(model: Any, opt: Any, batches: Any) -> tuple[list[float], int]:
    losses, correct = [], 0  # the loop as the notebook gives it: one-hot targets a sample at a time, a nonzero count
    for x, y in batches:  # a step (its size read back: a wait on a GPU), and a read for each loss at the end
        opt.zero_grad()
        out = model(x)
        target = torch.zeros_like(out)
        for i, label in enumerate(y):
            target[i, label] = 1.0
        loss = torch.nn.functional.cross_entropy(out, target)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
        correct += len(torch.nonzero(out.argmax(dim=1) == y))
    return [float(loss) for loss in losses], correct


@threads_on_cpu("cpu", 1)  # a thread waiting for a busy core stalls a step, and counts as CPU time
def _check_train(fn: Any) -> None:
    expect_function(fn, "train", "(model, opt, batches)")
    for device, (size, words) in [(d, p) for d in ["cpu"] + ["cuda"] * torch.cuda.is_available() for p in _PASSES]:
        call, want = f"train(...) on {device}{words}", _slow(*(slow := _fresh(device, size)))
        model, opt, batches = _fresh(device, size)  # seeded again: the same dropout masks as the slow loop's
        with CallLog() as log:
            got = call_or_wrong(fn, (model, opt, batches), call)  # its error said with the pass that raised it
        changed = "" if unchanged(_fresh(device, size)[2], batches) else " and changed its arguments (the batches)"
        got = expect_type(got, tuple, f"{call} to return (losses, correct)")
        if len(got) != 2 or not isinstance(got[0], list | tuple) or any(isinstance(v, torch.Tensor) for v in got[0]):
            raise Wrong(f"{call} returned {show(got)}; expected (losses, correct), the losses a list of floats")
        got = tuple([*map(one_element_item, g)] if isinstance(g, list | tuple) else one_element_item(g) for g in got)
        kept = model.training and same(*([p.tolist() for p in m.parameters()] for m in (slow[0], model)), 1e-4)
        kept = kept and [p.dtype for p in model.parameters()] == [p.dtype for p in slow[0].parameters()]
        changed += " but left the model unlike the slow loop's (weights, dtype, mode)" * (not kept and same(got, want))
        if changed or not same(got, want, 1e-5):
            raise Wrong(f"{call} returned {show(got)}{changed}; the slow loop returns {show(want)}")
        reads = [written for written, _ in log.host_reads()]
        data = [a for c in log.named(FROM_DATA) for a in c.args[:1] if isinstance(a, list | tuple) and a]
        long = max([len(a) for a in data if isinstance(a[0], list | tuple)] + [0])  # a list a sample: Python rows
        built = f", a tensor from {long} Python lists (one-hot rows written a sample at a time)" * (long >= 100)
        said = f"{call} made {len(log.calls)} tensor calls and {len(reads)} reads {sorted(set(reads))}{built}"
        if size is None and (len(log.calls) >= _SAMPLES or len(reads) > 2 or built):
            raise Wrong(f"{said} for {_SAMPLES} samples in 6 steps; fixed: fewer calls than samples, 2 reads in all")
    cpu = [min(timeit.repeat(lambda f=f: f(*_fresh()), number=1, repeat=5, timer=process_time)) for f in (_slow, fn)]
    if cpu[1] > 0.8 * cpu[0]:  # right answers take a third of it, or up to 0.55 on a loaded machine; waste 1.8
        raise Wrong(f"your train took {cpu[1] * 1e3:.1f} ms of CPU, the slow one {cpu[0] * 1e3:.1f} ms: 80 % at most")


_TEXTS = {
    "idle_share": "Write `idle_share(busy, start_ms, end_ms)`: the share of [start_ms, end_ms] when no pair ran.\n"
    "Clip the pairs to the window, sort them, and add what each reaches past the furthest end so far: that is covered.",
    "train": "Rewrite the slow `train(model, opt, batches)`: the same results, no read a step, no loop over samples.\n"
    "cross_entropy takes y as it is; keep loss.detach() and (out.argmax(dim=1) == y).sum(); read both at the end.",
}
_CHECKS = (table("idle_share", "(busy, start_ms, end_ms)", _IDLE_CASES, _idle), _check_train)
QUESTIONS = questions("14", _TEXTS, _CHECKS, {"train": {"time_limit": 30.0}})  # a first optimizer imports torch._dynamo
