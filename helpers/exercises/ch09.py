"""Chapter 09 exercises: a Hogwild worker, a queue consumer, a sum shared out between processes, a fork to fix."""

from __future__ import annotations

import functools
import multiprocessing
import os
import queue
import threading
import time
from typing import Any

import torch
from torch import nn
from torch.nn.functional import cosine_similarity, cross_entropy

from ..answers import Wrong, expect_function, normalise
from ..checking import Question
from ..processes import LaunchTimeout, WorkerFailed, launch, process_context, stop_processes
from .cases import same, show, unchanged

CHILD_SECONDS = 60.0  # for the child processes of one check, their start included (a session's first is slow)
#: Question 2's tasks (index, tensor): indices not 0, 1, 2; float16, float32, int64 (one whole mean), 2-D.
_TASKS = [(2, torch.tensor([0.5, 1, 2.25]).half()), (4, torch.tensor([0.1, 0.2, 0.7, 1.5])), (9, torch.tensor([3, 4]))]
_TASKS += [(6, torch.tensor([2, 4, 9])), (7, torch.tensor([[0.5, 1.5], [2, 4.5]]))]
#: Question 3's (x, world_size, where): sizes that do not divide (fewer chunks), an integer dtype; no chunk adds to 0.
_SUMS = [(torch.tensor([3.0, 1, 4, 1, 5, 9, 2, 6, 5, 3]), 3, "here"), (torch.tensor([7, -2, 8, 1, 8]), 4, "here")]
_SUMS += [(torch.tensor([2.5, 7, 1, 8, 2, 8, 1.5]), 2, "in child processes")]


def _hogwild_child(rank: int, world_size: int, fn: Any, model: _Model, steps: int, lr: float) -> list[list[int]]:
    fn(rank, model, model.x, model.y, steps, lr)
    return model.rows


def _in_children(worker: Any, what: str, world_size: int, args: tuple) -> list[Any]:
    try:
        return launch(worker, world_size, args, timeout=CHILD_SECONDS, backend="gloo", init_group=False).results
    except (LaunchTimeout, WorkerFailed) as exc:  # one raised or died (WorkerFailed), or ran past CHILD_SECONDS
        why = getattr(exc, "last_line", f"it did not finish within {CHILD_SECONDS:g} s, so they were stopped")
        raise Wrong(f"in child processes your `{what}` failed: {why}") from None


class _Model(nn.Sequential):  # question 1's: each forward with gradients notes its parameters and its rows of x
    def __init__(self, n: int) -> None:
        super().__init__(nn.Linear(8, 6), nn.Tanh(), nn.Linear(6, 3))
        self.x = torch.randn(n, 8, generator=torch.Generator().manual_seed(9))
        self.y, self.rows, self.states = self.x[:, :3].argmax(1), [], []

    def forward(self, inp: torch.Tensor) -> torch.Tensor:
        if torch.is_grad_enabled() and inp.shape[-1:] == (8,):  # which row of x each row of inp is (-1: none)
            match = (inp.detach().reshape(-1, 1, 8) == self.x).all(-1)
            self.rows.append(torch.where(match.any(1), match.float().argmax(1), -1).tolist())
            self.states.append([p.detach().clone() for p in self.parameters()])
        return super().forward(inp)


def _bad_step(lr: float, done: list) -> str:  # what step len(done) did instead of an SGD step: only what was seen
    (moved, grad), k = done[-1], len(done)
    if not moved.any():
        return "left the parameters as they were: call opt.step() after loss.backward(), opt.zero_grad() before it"
    if k > 1 and torch.allclose(moved, lr * sum(g for _, g in done), rtol=1e-3, atol=1e-5):
        return f"moved the parameters by lr × the sum of steps 1 to {k}'s gradients: they add up without zero_grad()"
    if cosine_similarity(moved, grad, 0) < 0.999:
        return "did not follow the mean cross-entropy's gradient: check the optimizer, the loss, that y uses x's rows"
    if abs((ratio := (moved.norm() / grad.norm()).item()) / (32 * lr) - 1) < 1e-3:
        return "moved the parameters by 32 × lr × the gradient: the loss is a sum over the 32 rows, not their mean"
    return f"moved the parameters by {show(ratio)} × the gradient's length; SGD with lr={lr} moves them by lr × it"


@torch.random.fork_rng(devices=[])  # torch.manual_seed in the answer leaves the notebook's random state as it was
def _check_hogwild_worker(fn: Any) -> None:
    expect_function(fn, "hogwild_worker", "(rank, model, x, y, steps, lr)")
    for steps, lr, n in ((5, 0.3, 256), (20, 0.05, 40)):  # 40 rows, 640 drawn: each comes but for 1e-7 by chance
        model, rng, call = _Model(n), torch.get_rng_state(), f"hogwild_worker(0, model, x, y, {steps}, {lr}), {n} rows"
        fn(0, model, model.x, model.y, steps, lr)
        if not torch.equal(rng, torch.get_rng_state()):
            raise Wrong(f"{call} changed torch's global random state: draw only with a Generator seeded from rank")
        if not unchanged((_Model(n).x, _Model(n).y), (model.x, model.y)):
            raise Wrong(f"{call} changed x or y: pick rows by index (x[idx]) and leave the data as it is")
        if not (rows := model.rows):
            raise Wrong(f"{call} never called the `model` it was given: train that model, in place")
        if (sizes := [len(r) - r.count(-1) for r in rows]) != [32] * steps:
            raise Wrong(f"{call} gave `model` {len(sizes)} batches of {show(sizes)} rows of x; expected {steps} of 32")
        if (same_rows := len({tuple(r) for r in rows}) == 1) or any(r == [*range(r[0], r[0] + 32)] for r in rows):
            why = "the same rows at every step" if same_rows else "32 consecutive rows of x, one after the other"
            raise Wrong(f"{call} drew {why}: draw a new mini-batch of 32 random rows each step")
        if n == 40 and n - 1 not in set().union(*rows):
            raise Wrong(f"{call} never drew the last row, x[{n - 1}]: draw from all len(x) (randint leaves out high)")
        states, done, twin = [*model.states, list(model.parameters())], [], nn.Sequential(*model)  # twin: no notes
        for idx, before, after in zip(rows, states, states[1:], strict=False):
            params = {k: p.clone().requires_grad_() for (k, _), p in zip(twin.named_parameters(), before, strict=True)}
            cross_entropy(torch.func.functional_call(twin, params, model.x[idx]), model.y[idx]).backward()
            moved = nn.utils.parameters_to_vector(before) - nn.utils.parameters_to_vector(after).detach()
            done.append((moved, nn.utils.parameters_to_vector([p.grad for p in params.values()])))
            if not torch.allclose(moved, lr * done[-1][1], rtol=1e-3, atol=1e-5):
                raise Wrong(f"{call}: step {len(done)} {_bad_step(lr, done)}")
    drawn = _in_children(_hogwild_child, "hogwild_worker", 2, (getattr(fn, "__wrapped__", fn), _Model(n), steps, lr))
    if drawn[0] == drawn[1] or drawn[0] != rows:
        why = "ranks 0 and 1 drew the same rows" if drawn[0] == drawn[1] else "rank 0 drew other rows than here"
        raise Wrong(f"in two child processes {why}: seed a generator from the rank (alone)")


def _check_consumer(fn: Any) -> None:
    expect_function(fn, "consumer", "(tasks, results)")
    sent, todo, results = [(i, t.clone()) for i, t in _TASKS], queue.Queue(), queue.Queue()
    (feeder := threading.Timer(0.1, lambda: [todo.put(item) for item in [*sent, None]])).start()  # come late
    fn(todo, results)
    if feeder.is_alive() or todo.unfinished_tasks - todo.qsize() <= len(sent):  # put - left = taken: not None
        raise Wrong("your consumer returned before None came (the tasks arrive while it runs): stop only at None")
    if not unchanged(_TASKS, sent):
        raise Wrong("your consumer changed the tensors it was given; leave them as they are")
    got = sorted((normalise(p) for p in results.queue), key=repr)  # by index, as want: one digit each
    want, sums = (sorted((i, f(t.double()).item()) for i, t in _TASKS) for f in (torch.mean, torch.sum))
    if not same(got, want):
        sums = " (the sums: a mean divides by numel())" if same(got, sums) else ""
        raise Wrong(f"`results` got {show(got)}{sums}; expected {show(want)}: (index, mean as a plain float) per task")
    if kinds := sorted({str(type(p[1])) for p in results.queue if type(p[1]) is not float}):
        raise Wrong(f"`results` got means of {', '.join(kinds)}: put each as a plain Python float (float(mean))")


def _check_partial_sum(fn: Any) -> None:
    expect_function(fn, "partial_sum", "(rank, world_size, x, out)")
    for kept, world_size, where in _SUMS:
        x, out = kept.clone().share_memory_(), torch.full((world_size,), -1, dtype=kept.dtype).share_memory_()
        for rank in range(world_size) if where == "here" else ():
            fn(rank, world_size, x, out)
        if where != "here":
            _in_children(getattr(fn, "__wrapped__", fn), "partial_sum", world_size, (x, out))
        sums, got = [c.sum().item() for c in kept.chunk(world_size)], out.tolist()
        where = f"Run {where} for ranks 0 to {world_size - 1} with x = {kept.tolist()} and out filled with -1,"
        if not unchanged(kept, x):
            raise Wrong(f"{where} your partial_sum changed x; read your chunk of it and write only into out[rank]")
        if not same(got, want := sums + [0] * (world_size - len(sums))):  # 0 for a rank x.chunk gives no chunk
            slips = {"write with =, not +=": [w - 1 for w in want], "write into out[rank] in place": [-1] * len(got)}
            slips[f"out[{len(sums)}] kept its old value: a rank without a chunk writes 0"] = [w or -1 for w in want]
            fix = next((f": {say}" for say, slip in slips.items() if same(got, slip)), "")
            raise Wrong(f"{where} out became {got}; the sums of x.chunk are {want}{fix}")


def _nudge(spans: Any, model: nn.Module) -> None:  # question 4's work: after a while, add 1 to every parameter
    began = time.monotonic()
    time.sleep(0.5)
    [p.detach().add_(1.0) for p in model.parameters()]  # in place, as an SGD step writes them
    spans.put((os.getpid(), began, time.monotonic(), model.weight.is_shared()))


def _check_run_in_forks(fn: Any) -> None:
    expect_function(fn, "run_in_forks", "(model, work, processes)")
    model, spans, earlier = nn.Linear(4, 2), process_context().SimpleQueue(), set(multiprocessing.active_children())
    weight, bias = (p.detach().clone() for p in model.parameters())
    try:
        fn(model, functools.partial(_nudge, spans), 3)  # picklable: spawn and forkserver run it too
        if any(p not in earlier for p in multiprocessing.active_children()):
            raise Wrong("your run_in_forks returned while its children were still running: join() them all first")
    finally:
        stop_processes([p for p in multiprocessing.active_children() if p not in earlier])
    ran = [spans.get() for _ in range(9) if not spans.empty()]
    if len(kids := [span for span in ran if span[0] != os.getpid()]) != 3:
        raise Wrong(f"`work` ran to its end in {len(kids)} child processes (and {len(ran) - len(kids)} here), not in 3")
    if unchanged(weight, model.weight.detach()):
        why = "the children trained a shared copy (pass them the model itself)" if any(k[3] for k in kids) else ""
        raise Wrong(f"the model here did not change: {why or 'each forked child wrote its own copy-on-write copy'}")
    if unchanged(bias, model.bias.detach()):
        raise Wrong("the model's bias did not change: share every parameter (model.share_memory())")
    if max(start for _, start, _, _ in kids) >= min(end for _, _, end, _ in kids):
        raise Wrong("the children ran `work` one after the other: start them all, then join them all")


QUESTIONS = [
    Question(number, task, name, checker, hint, chapter="09", time_limit=90.0, file=file)  # 90 s: children too
    for (number, name, file, checker), task, hint in (
        (
            (1, "hogwild_worker", "hogwild_answer.py", _check_hogwild_worker),
            "Write `hogwild_worker(rank, model, x, y, steps, lr)`: `steps` SGD steps (lr) on `model`, each on 32 "
            "random rows of (x, y) with cross-entropy, each rank drawing its own rows.",
            "Draw rows with a generator seeded from the rank; make torch.optim.SGD(model.parameters(), lr=lr).",
        ),
        (
            (2, "consumer", "consumer_answer.py", _check_consumer),
            "Write `consumer(tasks, results)`: take (index, tensor) items from the queue `tasks` until None; for "
            "each, put (index, the tensor's mean as a Python float) on `results`; then return.",
            "Loop on tasks.get() until None; for each (index, t) put (index, t.double().mean().item()).",
        ),
        (
            (3, "partial_sum", "partial_sum_answer.py", _check_partial_sum),
            "Write `partial_sum(rank, world_size, x, out)`: out[rank] = the sum of x.chunk(world_size)[rank] or 0.",
            "x.chunk(world_size) gives fewer chunks when x is short; out[rank] = ... writes into shared memory.",
        ),
        (
            (4, "run_in_forks", "", _check_run_in_forks),
            "Debug this: `run_in_forks(model, work, processes)` runs work(model) in `processes` forked children "
            "at once, but the parent's model never changes. Fix it so that what the children write reaches it.",
            "fork gives each child a copy of the parent's memory; memory shared before the fork is shared after.",
        ),
    )
]
