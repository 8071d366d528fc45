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

from ..checking import Question, Wrong, expect_function, normalise
from ..processes import LaunchTimeout, WorkerFailed, launch, process_context, stop_processes
from .cases import same, show, unchanged

CHILD_SECONDS = 60.0  # for the child processes of one check, their start included (a session's first is slow)
#: Question 2's tasks (index, tensor): indices that are not 0, 1, 2; means that are not whole; float16, float32, int64.
_TASKS = [(2, torch.tensor([0.5, 1, 2.25]).half()), (4, torch.tensor([0.1, 0.2, 0.7, 1.5])), (9, torch.tensor([3, 4]))]
#: Question 3's (x, world_size, where): sizes that do not divide (shorter or fewer chunks), an integer dtype.
_SUMS = [(torch.tensor([3.0, 1, 4, 1, 5, 9, 2, 6, 5, 3]), 3, "here"), (torch.tensor([7, -2, 8, 1, 8]), 4, "here")]
_SUMS += [(torch.tensor([2.5, 7, 1, 8, 2, 8, 1.5]), 2, "in child processes")]


def _hogwild_child(rank: int, world_size: int, fn: Any, model: _Model, steps: int, lr: float) -> list[list[int]]:
    """Runs in each child of question 1: the learner's worker on the model (shared as it was pickled); its rows."""
    fn(rank, model, model.x, model.y, steps, lr)
    return model.rows


def _in_children(worker: Any, what: str, world_size: int, args: tuple) -> list[Any]:
    """worker(rank, world_size, *args) in `world_size` child processes; their results; each failure is a `Wrong`."""
    try:
        return launch(worker, world_size, args, timeout=CHILD_SECONDS, backend="gloo", init_group=False).results
    except (LaunchTimeout, WorkerFailed) as exc:  # one raised or died (WorkerFailed), or ran past CHILD_SECONDS
        why = getattr(exc, "last_line", f"it did not finish within {CHILD_SECONDS:g} s, so they were stopped")
        raise Wrong(f"in child processes your `{what}` failed: {why}") from None


class _Model(nn.Linear):
    """Question 1's model and data: each forward with gradients on notes its parameters, and which rows of x it got."""

    def __init__(self) -> None:
        super().__init__(8, 3)
        self.x = torch.randn(256, 8, generator=torch.Generator().manual_seed(9))
        self.y, self.rows, self.states = self.x[:, :3].argmax(1), [], []

    def forward(self, inp: torch.Tensor) -> torch.Tensor:
        if torch.is_grad_enabled() and inp.shape[-1:] == (8,):  # which row of x each row of inp is (-1: none)
            match = (inp.detach().reshape(-1, 1, 8) == self.x).all(-1)
            self.rows.append(torch.where(match.any(1), match.float().argmax(1), -1).tolist())
            self.states.append([p.detach().clone() for p in self.parameters()])
        return super().forward(inp)


def _check_hogwild_worker(fn: Any) -> None:
    expect_function(fn, "hogwild_worker", "(rank, model, x, y, steps, lr)")
    for steps, lr in ((5, 0.3), (3, 0.05)):
        model, call = _Model(), f"hogwild_worker(0, model, x, y, steps={steps}, lr={lr})"
        fn(0, model, model.x, model.y, steps, lr)
        if not unchanged((_Model().x, _Model().y), (model.x, model.y)):
            raise Wrong(f"{call} changed x or y: pick rows by index (x[idx]) and leave the data as it is")
        sizes = [len(r) - r.count(-1) for r in model.rows]
        if sizes != [32] * steps:
            raise Wrong(f"{call} gave `model` {len(sizes)} batches of {show(sizes)} rows of x; expected {steps} of 32")
        states = [*model.states, [p.detach() for p in model.parameters()]]
        for k, (idx, before, after) in enumerate(zip(model.rows, states, states[1:], strict=False), 1):
            w, b = (p.clone().requires_grad_() for p in before)
            nn.functional.cross_entropy(nn.functional.linear(model.x[idx], w, b), model.y[idx]).backward()
            moved = nn.utils.parameters_to_vector(before) - nn.utils.parameters_to_vector(after)
            grad = nn.utils.parameters_to_vector([w.grad, b.grad])
            if not torch.allclose(moved, lr * grad, rtol=1e-3, atol=1e-5):
                by = f"{show((moved.norm() / grad.norm()).item())} × the gradient's length"
                raise Wrong(f"{call}: step {k} moved the parameters by {by}; SGD with lr={lr} moves them by lr × it")
    drawn = _in_children(_hogwild_child, "hogwild_worker", 2, (getattr(fn, "__wrapped__", fn), _Model(), 10, 0.1))
    if drawn[0] == drawn[1]:
        raise Wrong("in two child processes ranks 0 and 1 drew the same rows: seed a generator from the rank")


def _check_consumer(fn: Any) -> None:
    expect_function(fn, "consumer", "(tasks, results)")
    sent, todo, results = [(i, t.clone()) for i, t in _TASKS], queue.Queue(), queue.Queue()
    feeder = threading.Timer(0.1, lambda: [todo.put(item) for item in [*sent, None]])  # the tasks arrive late
    feeder.start()
    fn(todo, results)
    if feeder.is_alive() or not todo.empty():  # None was still to come
        raise Wrong("your consumer returned before None came (the tasks arrive while it runs): stop only at None")
    if not unchanged(_TASKS, sent):
        raise Wrong("your consumer changed the tensors it was given; leave them as they are")
    got = sorted((normalise(p) for p in results.queue), key=repr)  # by index, as _TASKS: one digit each
    want = [(i, t.double().mean().item()) for i, t in _TASKS]
    if not same(got, want) or any(type(mean) is not float for _, mean in got):
        sums = " (the sums: a mean divides by numel())" if same(got, [(i, t.sum().item()) for i, t in _TASKS]) else ""
        raise Wrong(f"`results` got {show(got)}{sums}; expected {show(want)}: (index, mean as a plain float) per task")


def _check_partial_sum(fn: Any) -> None:
    expect_function(fn, "partial_sum", "(rank, world_size, x, out)")
    for kept, world_size, where in _SUMS:
        x, out = kept.clone().share_memory_(), torch.zeros(world_size, dtype=kept.dtype).share_memory_()
        for rank in range(world_size) if where == "here" else ():
            fn(rank, world_size, x, out)
        if where != "here":
            _in_children(getattr(fn, "__wrapped__", fn), "partial_sum", world_size, (x, out))
        chunks, got, where = kept.chunk(world_size), out.tolist(), f"Run {where} for ranks 0 to {world_size - 1},"
        want = [c.sum().item() for c in chunks] + [0] * (world_size - len(chunks))  # 0 where x.chunk gives none
        if not unchanged(kept, x):
            raise Wrong(f"{where} your partial_sum changed x; read your chunk of it and write only into out[rank]")
        if not same(got, want):
            fix = ": write into it in place (out[rank] = ...)" if not any(got) else ""
            raise Wrong(f"{where} with x = {kept.tolist()}, out became {got}; the sums of x.chunk are {want}{fix}")


def _nudge(spans: Any, model: nn.Module) -> None:
    """Question 4's worker: after a while (as training takes), add 1 to the weight; report (pid, start, end)."""
    began = time.monotonic()
    time.sleep(0.5)
    model.weight.detach().add_(1.0)  # in place, as an SGD step writes it
    spans.put((os.getpid(), began, time.monotonic()))


def _check_run_in_forks(fn: Any) -> None:
    expect_function(fn, "run_in_forks", "(model, work, processes)")
    model, spans, earlier = nn.Linear(4, 2), process_context().SimpleQueue(), set(multiprocessing.active_children())
    before = model.weight.detach().clone()
    try:
        fn(model, functools.partial(_nudge, spans), 3)  # picklable: spawn and forkserver run it too
        if any(p not in earlier for p in multiprocessing.active_children()):
            raise Wrong("your run_in_forks returned while its children were still running: join() them all first")
    finally:
        stop_processes([p for p in multiprocessing.active_children() if p not in earlier])
    ran = [spans.get() for _ in range(9) if not spans.empty()]
    children = [(start, end) for pid, start, end in ran if pid != os.getpid()]
    if len(children) != 3:
        raise Wrong(f"`work` ran to its end in {len(children)} child processes (and {len(ran) - len(children)} here)")
    if max(start for start, _ in children) >= min(end for _, end in children):
        raise Wrong("the children ran `work` one after the other: start them all, then join them all")
    if unchanged(before, model.weight.detach()):
        raise Wrong("the model here did not change: each forked child wrote its own copy-on-write copy")


_question = functools.partial(Question, chapter="09", time_limit=90.0)  # 90 s for the learner's code, children included
QUESTIONS = [
    _question(
        number=1,
        task="Write `hogwild_worker(rank, model, x, y, steps, lr)`: `steps` SGD steps (lr) on `model`, each on 32 "
        "random rows of (x, y) with cross-entropy, each rank drawing its own rows.",
        variable="hogwild_worker",
        file="hogwild_answer.py",
        checker=_check_hogwild_worker,
        hint_text="Draw rows with a generator seeded from the rank; make torch.optim.SGD(model.parameters(), lr=lr).",
    ),
    _question(
        number=2,
        task="Write `consumer(tasks, results)`: take (index, tensor) items from the queue `tasks` until None; for "
        "each, put (index, the tensor's mean as a Python float) on `results`; then return.",
        variable="consumer",
        file="consumer_answer.py",
        checker=_check_consumer,
        hint_text="Loop on tasks.get() until None; for each (index, t) put (index, t.double().mean().item()).",
    ),
    _question(
        number=3,
        task="Write `partial_sum(rank, world_size, x, out)`: out[rank] = the sum of x.chunk(world_size)[rank] or 0.",
        variable="partial_sum",
        file="partial_sum_answer.py",
        checker=_check_partial_sum,
        hint_text="x.chunk(world_size) gives fewer chunks when x is short; out[rank] = ... writes into shared memory.",
    ),
    _question(
        number=4,
        task="Debug this: `run_in_forks(model, work, processes)` runs work(model) in `processes` forked children "
        "at once, but the parent's model never changes. Fix it so that what the children write reaches it.",
        variable="run_in_forks",
        checker=_check_run_in_forks,
        hint_text="fork gives each child a copy of the parent's memory; memory shared before the fork is shared after.",
    ),
]
