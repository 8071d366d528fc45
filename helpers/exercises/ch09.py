"""Chapter 09 exercises: a Hogwild worker, a queue consumer, a sum shared out between processes, a fork to fix."""

import functools
import multiprocessing
import os
import queue
import random
import sys
import threading
import time
from pickle import dumps
from typing import Any

import torch
from torch import nn

from ..answers import Wrong, expect_function
from ..processes import LaunchTimeout, WorkerFailed, launch, process_context, stop_processes
from .cases import questions, same, show, unchanged

CHILD_SECONDS = 60.0  # for the child processes of one check, their start included (a session's first is slow)
_TASKS = [(2, torch.tensor([0.5, 1, 2.25]).half().repeat(20_000)), (4, torch.tensor([0.1, 0.2, 0.7]))]  # ~1/3
_TASKS += [(9, torch.tensor([2049, 2047, 1])), (6, torch.tensor([2, 4, 9]))]
_TASKS += [(7, torch.tensor([[0.0, 0, 1], [0, 0, 0]]).bfloat16())]  # numpy has no bfloat16; its own mean is off 1/6
_SUMS = [(torch.arange(10.0), 3), (torch.tensor([7, -2, 2**25 + 1, 1, 2**53 + 1]), 4)]  # past float32, float64
_SUMS += [(torch.tensor([3001.5, 11, 2, 8]), 2)]
_SEED = "global random state (a seed, or a draw without generator=): use only a Generator seeded from rank"  # q1
_KEPT = [f"torch's {_SEED}", f"Python's {_SEED}", f"numpy's {_SEED}", "parameters' memory: train them in place"]


class _Model(nn.Sequential):  # question 1's: notes each forward's rows of x, parameters and their SGD gradient
    def __init__(self, n: int) -> None:
        torch.manual_seed(n)  # the same layers at every check (check() sets torch's random state back afterwards)
        super().__init__(nn.Linear(8, 6), nn.Tanh(), nn.Linear(6, 3))
        self[2].weight.detach().mul_(10)  # the first step's gradient has a norm above 3.5: clipping it shows
        self.x = torch.randn(n, 8, generator=torch.Generator().manual_seed(9))
        self.y, self.rows, self.states = self.x[:, :3].argmax(1), [], []

    def forward(self, inp: torch.Tensor) -> torch.Tensor:
        if torch.is_grad_enabled() and inp.shape[-1:] == (8,):  # which row of x each row of inp is (-1: none)
            match = (inp.detach().reshape(-1, 1, 8) == self.x).all(-1)
            self.rows.append((idx := torch.where(match.any(1), match.float().argmax(1), -1)).tolist())
            loss = nn.functional.cross_entropy(super().forward(self.x[idx]), self.y[idx])  # the loss to step on
            grad = torch.autograd.grad(loss, params := list(self.parameters()))
            self.states.append([nn.utils.parameters_to_vector(t).detach() for t in (params, grad)])
        return super().forward(inp)

    def kept(self) -> list[bytes]:  # torch's, Python's, numpy's (if imported) random states; the parameters' memory
        np, mem = sys.modules.get("numpy"), [p.data_ptr() for p in self.parameters()]  # the memory processes share
        return list(map(dumps, (torch.get_rng_state().numpy(), random.getstate(), np and np.random.get_state(), mem)))

    def batches(self, steps: int) -> tuple[list, list]:  # rows and states of the forwards a step followed, if `steps`
        params = [old for old, _ in self.states] + [nn.utils.parameters_to_vector(self.parameters()).detach()]
        took = [k for k in range(len(self.states)) if not params[k].equal(params[k + 1])]
        keep = took if len(took) == steps else range(len(self.rows))  # else every forward: a logged loss is no batch
        return [self.rows[k] for k in keep], [self.states[k] for k in keep]

    def run_rank(self, rank: int, world_size: int, fn: Any, steps: int, lr: float) -> list[list[int]]:  # in a child
        fn(rank, self, self.x, self.y, steps, lr)
        return self.rows

    def bad_step(self, lr: float, moved: torch.Tensor, grad: torch.Tensor) -> str:  # what it did instead: as seen
        if not moved.any():
            return "did not move the parameters: zero_grad(), backward(), then step an optimizer of model.parameters()"
        ratio = (moved.norm() / grad.norm()).item()  # lr × its length, yet not lr × it: off it (weight decay)
        if torch.cosine_similarity(moved, grad, 0) < 0.999 or abs(ratio / lr - 1) < 1e-3:
            return "did not follow the mean cross-entropy's gradient: check the optimizer, zero_grad(), loss, y's rows"
        return f"moved the parameters by {show(ratio)} × the gradient ({show(ratio / lr)} × lr); an SGD step is lr × it"


def _in_children(worker: Any, what: str, world_size: int, args: tuple) -> list[Any]:
    try:
        return launch(worker, world_size, args, timeout=CHILD_SECONDS, backend="gloo", init_group=False).results
    except (LaunchTimeout, WorkerFailed) as exc:  # one raised or died (WorkerFailed), or ran past CHILD_SECONDS
        why = getattr(exc, "last_line", f"it did not finish within {CHILD_SECONDS:g} s, so they were stopped")
        raise Wrong(f"in child processes your `{what}` failed: {why}") from None


def _check_hogwild_worker(fn: Any) -> None:
    expect_function(fn, "hogwild_worker", "(rank, model, x, y, steps, lr)")
    drew = [([], []), ([], [])]  # each rank's batches and forwards on the last case
    for steps, lr, n, rank in [(*case, rank) for case in ((5, 0.3, 256), (20, 0.05, 40)) for rank in (0, 1)]:
        kept, call = (model := _Model(n)).kept(), f"hogwild_worker({rank}, model, x, y, {steps}, {lr}), {n} rows"
        fn(rank, model, model.x, model.y, steps, lr)
        if changed := [what for what, a, b in zip(_KEPT, kept, model.kept(), strict=True) if a != b]:
            raise Wrong(f"{call} changed {changed[0]}")
        if not unchanged((_Model(n).x, _Model(n).y), (model.x, model.y)):
            raise Wrong(f"{call} changed x or y: pick rows by index (x[idx]) and leave the data as it is")
        rows, states = model.batches(steps)
        if (sizes := [len(r) - r.count(-1) for r in rows]) != [32] * steps:  # none: it trained another model
            raise Wrong(f"{call} gave `model` {len(sizes)} batches of {show(sizes)} rows of x; expected {steps} of 32")
        if len(set(map(tuple, rows))) == 1 or any(r == [*range(r[0], r[0] + 32)] for r in rows):
            raise Wrong(f"{call} drew rows {show(rows[0])}, then {show(rows[1])}: draw 32 random rows anew each step")
        if n == 40 and (gone := sorted({0, n - 1} - set().union(*rows))):  # 640 drawn: each comes but for 1e-7
            why = ("last", "randint leaves out high") if gone[-1] else ("first", "rows count from 0")
            raise Wrong(f"{call} never drew the {why[0]} row, x[{gone[-1]}]: draw from all len(x) ({why[1]})")
        news = [old for old, _ in states[1:]] + [nn.utils.parameters_to_vector(model.parameters()).detach()]
        for step, ((old, grad), new) in enumerate(zip(states, news, strict=True), 1):
            if not torch.allclose(moved := old - new, lr * grad, rtol=1e-3, atol=1e-5):
                raise Wrong(f"{call}: step {step} {model.bad_step(lr, moved, grad)}")
        drew[rank] = (rows, model.rows)  # its batches, and every forward's rows, as a child notes them
    own = getattr(fn, "__wrapped__", fn)  # the learner's function, as a child imports it; the same rows: no children
    both = sorted(set(map(tuple, drew[0][0])) & set(map(tuple, drew[1][0])))  # a seed of rank + step shares batches
    if both or _in_children(_Model(n).run_rank, "hogwild_worker", 2, (own, steps, lr)) != [d[1] for d in drew]:
        why = f"both ranks drew a batch, rows {show(list(both[0]))}" if both else "a rank drew other rows in a child"
        raise Wrong(f"{why}: seed one generator from the rank alone, before the loop")


def _check_consumer(fn: Any) -> None:  # _TASKS: indices not 0-2; a float16 sum overflows; an int64 mean no float16
    expect_function(fn, "consumer", "(tasks, results)")
    sent, todo, results = [(i, t.clone()) for i, t in _TASKS], queue.Queue(), queue.Queue()
    todo.task_done = lambda: None  # allowed, and kept out of unfinished_tasks: what was put (taken: put - left)
    (feeder := threading.Timer(1.5, lambda: [todo.put(item) for item in [*sent, None]])).start()  # 1.5 s late
    fn(todo, results)
    if feeder.is_alive() or todo.unfinished_tasks - todo.qsize() <= len(sent):
        raise Wrong("your consumer returned before None came (the tasks arrive while it runs): stop only at None")
    if not unchanged(_TASKS, sent):
        raise Wrong("your consumer changed the tensors it was given; leave them as they are")
    if odd := [p for p in results.queue if not (isinstance(p, tuple | list) and list(map(type, p)) == [int, float])]:
        kinds = [type(v).__name__ for v in odd[0]] if isinstance(odd[0], tuple | list) else type(odd[0]).__name__
        raise Wrong(f"`results` got {show(odd[0])} of {kinds}; expected (index, mean) pairs: an int and a Python float")
    got = sorted(results.queue, key=repr)  # by index, as want: one digit each
    if not same(got, want := sorted((i, t.double().mean().item()) for i, t in _TASKS)):
        raise Wrong(f"`results` got {show(got)}; expected {show(want)}: (index, mean as a plain float) for each task")


def _check_partial_sum(fn: Any) -> None:  # _SUMS: sizes that do not divide (fewer chunks), int64, then one that does
    expect_function(fn, "partial_sum", "(rank, world_size, x, out)")
    for here, (kept, world_size) in zip((True, True, False), _SUMS, strict=True):  # alone: no rank waits on another
        x, out = kept.clone().share_memory_(), torch.full((world_size,), -1, dtype=kept.dtype).share_memory_()
        where = "here, each rank alone on its own out," if here else "in child processes on one out,"
        run = f"Run {where} for ranks 0 to {world_size - 1} with x = {kept.tolist()} and out filled with -1"
        for rank in range(world_size) if here else ():
            fn(rank, world_size, x, alone := torch.full_like(out, -1))
            if changed := [f"out[{i}]" for i, v in enumerate(alone.tolist()) if v != -1 and i != rank]:
                raise Wrong(f"{run}: rank {rank} changed {', '.join(changed)} too; a rank writes only out[rank]")
            out[rank] = alone[rank]
        if not here:  # the last case: a size that divides, a sum (3012.5) no float16 holds
            _in_children(getattr(fn, "__wrapped__", fn), "partial_sum", world_size, (x, out))
        if not unchanged(kept, x):
            raise Wrong(f"{run}: your partial_sum changed x; read your chunk of it and write only into out[rank]")
        sums = [c.sum().item() for c in kept.chunk(world_size)]  # integers to the last digit: float32 loses some
        if not same(got := out.tolist(), want := sums + [0] * (world_size - len(sums)), 1e-6 * x.is_floating_point()):
            raise Wrong(f"{run}, out became {got}; the sums of x.chunk are {want} (0 for a rank without a chunk)")


def _nudge(spans: Any, model: nn.Module) -> None:  # question 4's work: after a while, add 1 to every parameter
    time.sleep(0.5)
    [p.detach().add_(1.0) for p in model.parameters()]  # in place, as an SGD step writes them
    spans.put((os.getpid(), time.monotonic() - 0.5, time.monotonic(), model.weight.is_shared()))  # begun by then


def _check_run_in_forks(fn: Any) -> None:
    expect_function(fn, "run_in_forks", "(model, work, processes)")
    model, spans, earlier = nn.Linear(4, 2), process_context().SimpleQueue(), set(multiprocessing.active_children())
    weight, bias = (p.detach().clone() for p in model.parameters())
    fn(model, functools.partial(_nudge, spans), 3)  # picklable: spawn and forkserver run it too
    if late := [p for p in multiprocessing.active_children() if p not in earlier]:  # each ends within 0.5 s anyway
        stop_processes(late)
        raise Wrong("your run_in_forks returned while its children were still running: join() them all first")
    ran = [spans.get() for _ in iter(spans.empty, True)]
    if len(kids := [span for span in ran if span[0] != os.getpid()]) != 3 or len(ran) > len(kids):
        here = f"{len(ran) - len(kids)} times here, in the parent"
        raise Wrong(f"`work` ran to its end in {len(kids)} child processes and {here}; expected 3 children, none here")
    if unchanged(weight, model.weight.detach()):
        why = "the children wrote shared memory not this model's: share it before they start" * any(k[3] for k in kids)
        raise Wrong(f"the model here did not change: {why or 'each forked child wrote its own copy-on-write copy'}")
    if unchanged(bias, model.bias.detach()):
        raise Wrong("the model's bias did not change: share every parameter (model.share_memory())")
    if max(start for _, start, _, _ in kids) >= min(end for _, _, end, _ in kids):
        raise Wrong("the children ran `work` one after the other: start them all, then join them all")


_TEXTS = {  # each question's variable: its task, then (after a newline) its hint; `_CHECKS` follows
    "hogwild_worker": "Write `hogwild_worker(rank, model, x, y, steps, lr)`: `steps` SGD steps on `model`, each on 32 "
    "random rows with cross-entropy.\nSeed a Generator from rank; torch.optim.SGD(model.parameters(), lr=lr).",
    "consumer": "Write `consumer(tasks, results)`: for each (index, t) from `tasks` until None, put (index, t's mean "
    "as a Python float) on `results`.\nLoop on tasks.get() until None; t.double().mean().item() takes integers too.",
    "partial_sum": "Write `partial_sum(rank, world_size, x, out)`: out[rank] = the sum of x.chunk(world_size)[rank] "
    "or 0.\nx.chunk(world_size)'s chunks are ceil(len(x) / world_size) long: fewer when x runs out; out is shared.",
    "run_in_forks": "Debug `run_in_forks(model, work, processes)`: what its forked children write must reach the "
    "model.\nfork gives each child a copy of the parent's memory; memory shared before the fork is shared after.",
}
_FILES = dict(hogwild_worker="hogwild_answer.py", consumer="consumer_answer.py", partial_sum="partial_sum_answer.py")
_CHECKS = (_check_hogwild_worker, _check_consumer, _check_partial_sum, _check_run_in_forks)
QUESTIONS = questions("09", _TEXTS, _CHECKS, {n: {"file": f} for n, f in _FILES.items()}, time_limit=90.0)  # children
