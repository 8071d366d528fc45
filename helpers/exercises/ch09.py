"""Chapter 09 exercises: a Hogwild worker, a queue consumer, a sum shared out between processes, and a
launcher that forks (debug this).

Each answer to questions 1-3 is a function in a file the learner writes (`%%writefile`), because a
child process imports the function it runs, as the chapter teaches. Question 4's launcher forks, so it
may live in the notebook; its checker calls it here, with a worker of its own. Each checker runs it for real, twice:
first in this process (where a function that hangs, exits or raises gets the checker's usual
verdict), then in two child processes started by `helpers.processes.launch` without a process
group (a child that raises is named, one that hangs is stopped after `CHILD_SECONDS`, and none
outlives the check).
"""

from __future__ import annotations

import functools
import inspect
import math
import multiprocessing
import os
import queue
import time
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ..checking import Question, Wrong, expect_function, normalise
from ..processes import LaunchTimeout, WorkerFailed, launch, process_context, stop_processes

#: Seconds the child processes of one check may take, their start included (the first start of a session
#: imports torch in the process server, which a loaded machine makes slow; the question's own limit is longer).
CHILD_SECONDS = 60.0
#: Seconds the learner's code may run during one check, children included.
TIME_LIMIT = 90.0


def call_with_own_arguments(rank: int, world_size: int, fn: Any, args_per_child: list[tuple[Any, ...]]) -> None:
    """Runs in each child: call the learner's function with this child's arguments."""
    fn(*args_per_child[rank])


def _in_children(fn: Any, what: str, args_per_child: list[tuple[Any, ...]]) -> None:
    """Run `fn` in one child process per entry of `args_per_child`; every way it can go wrong is a `Wrong`."""
    children = len(args_per_child)
    try:
        launch(
            call_with_own_arguments,
            children,
            (inspect.unwrap(fn), args_per_child),
            backend="gloo",
            init_group=False,
            timeout=CHILD_SECONDS,
            threads_per_rank=1,
        )
    except LaunchTimeout:
        raise Wrong(
            f"in the child processes your `{what}` did not finish within {CHILD_SECONDS:g} s, so they were "
            "stopped; it worked here, so look for something it waits for that only this process has"
        ) from None
    except WorkerFailed as exc:
        raise Wrong(f"in child process {exc.rank} your `{what}` failed: {exc.last_line}") from None


# -- Question 1: a Hogwild worker --------------------------------------------------------------

_FEATURES, _CLASSES, _SAMPLES = 8, 3, 256
_STEPS, _LR = 60, 0.5


def _problem() -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and labels from a random linear teacher (a generator: the notebook's random state is untouched)."""
    g = torch.Generator().manual_seed(9)
    x = torch.randn(_SAMPLES, _FEATURES, generator=g)
    y = (x @ torch.randn(_FEATURES, _CLASSES, generator=g)).argmax(dim=1)
    return x, y


def _fresh_model() -> nn.Module:
    g = torch.Generator().manual_seed(10)
    model = nn.Linear(_FEATURES, _CLASSES)
    with torch.no_grad():
        model.weight.copy_(0.1 * torch.randn(_CLASSES, _FEATURES, generator=g))
        model.bias.zero_()
    return model


def _loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return F.cross_entropy(model(x), y).item()


def _snapshot(model: nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def _unchanged(model: nn.Module, before: list[torch.Tensor]) -> bool:
    return all(torch.equal(p.detach(), b) for p, b in zip(model.parameters(), before, strict=True))


def _judge_training(model: nn.Module, before: list[torch.Tensor], initial: float, same: str, flat: str) -> None:
    """Raise `Wrong(same)` if the parameters did not change, `Wrong(flat)` if the loss did not fall by 20 %."""
    if _unchanged(model, before):
        raise Wrong(same)
    after = _loss(model, *_problem())
    if not after < 0.8 * initial:
        raise Wrong(flat.format(initial=initial, after=after))


def _check_hogwild_worker(fn: Any) -> None:
    expect_function(fn, "hogwild_worker", "(rank, model, x, y, steps, lr)")
    x, y = _problem()
    model = _fresh_model()
    before, initial = _snapshot(model), _loss(model, x, y)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in a Hogwild worker: tiny steps run faster on one thread than on several
    try:
        for steps, lr, what in ((0, _LR, "steps=0"), (_STEPS, 0.0, "lr=0.0")):  # each must leave the model as it is
            fn(0, model, x, y, steps, lr)
            if not _unchanged(model, before):
                raise Wrong(f"with {what} the model still changed: take the number of steps and lr from the arguments")
        fn(0, model, x, y, _STEPS, _LR)
    finally:
        torch.set_num_threads(threads)
    if not (torch.equal(x, _problem()[0]) and torch.equal(y, _problem()[1])):
        raise Wrong("your worker changed x or y: pick random rows with indices (x[idx]), and leave the data as it is")
    _judge_training(
        model,
        before,
        initial,
        "the model's parameters did not change: build the optimizer on model.parameters() (the model you "
        "were given, not a copy) and call its step() after backward()",
        f"after {_STEPS} steps with lr={_LR} the loss went from {{initial:.3f}} to {{after:.3f}}; it should fall "
        "clearly: zero the gradients, backward() the cross-entropy of a mini-batch, step()",
    )
    shared = _fresh_model()
    shared.share_memory()
    x.share_memory_()
    y.share_memory_()
    before, initial = _snapshot(shared), _loss(shared, x, y)
    _in_children(fn, "hogwild_worker", [(rank, shared, x, y, _STEPS, _LR) for rank in range(2)])
    _judge_training(
        shared,
        before,
        initial,
        "the two child processes did not change the shared model: train `model` itself, whose parameters "
        "live in shared memory, not a copy of it",
        "with two processes on the shared model the loss went from {initial:.3f} to {after:.3f} only",
    )


# -- Question 2: a queue consumer --------------------------------------------------------------


def _tasks(count: int) -> list[tuple[int, torch.Tensor]]:
    return [(i, torch.arange(5.0) * (i + 1) + i) for i in range(count)]


def _judge_results(got: list[Any], tasks: list[tuple[int, torch.Tensor]], where: str) -> None:
    """Whether `got` (what came out of the results queue) answers every task with (index, mean as a float)."""
    if not got:
        raise Wrong(f"{where} nothing arrived on `results`: put one (index, mean) pair there for every task")
    pairs = []
    for item in got:
        if isinstance(item, torch.Tensor) or not isinstance(item, tuple | list) or len(item) != 2:
            raise Wrong(f"{where} `results` received {str(item)[:60]!r}; put pairs (index, mean) there")
        index, mean = normalise(item[0]), normalise(item[1])
        if isinstance(mean, torch.Tensor):
            raise Wrong(
                f"{where} the mean you sent is a tensor; send a plain Python float (`.item()`): a tensor travels "
                "as a handle to shared memory that the sender must keep alive"
            )
        if isinstance(index, torch.Tensor) or isinstance(index, bool) or not isinstance(index, int):
            raise Wrong(f"{where} the index should be the plain int from the task, not {index!r}")
        if isinstance(mean, bool) or not isinstance(mean, int | float):
            raise Wrong(f"{where} the mean should be a Python float, not a {type(mean).__name__}")
        pairs.append((index, float(mean)))
    if len(pairs) != len(tasks):
        raise Wrong(
            f"{where} {len(tasks)} tasks went in and {len(pairs)} results came out: handle every task, "
            "and stop only at None"
        )
    expected = {i: t.mean().item() for i, t in tasks}
    for index, mean in sorted(pairs):
        if index not in expected:
            raise Wrong(f"{where} a result has index {index}, which no task had")
        if not math.isclose(mean, expected[index], rel_tol=1e-5, abs_tol=1e-6):
            total = tasks[index][1].sum().item()
            if math.isclose(mean, total, rel_tol=1e-5):
                raise Wrong(f"{where} for task {index} you sent {mean:g}, the sum; the mean divides it by numel()")
            raise Wrong(f"{where} for task {index} you sent {mean:g}; its mean is {expected[index]:g}")
    if sorted(i for i, _ in pairs) != sorted(expected):
        raise Wrong(f"{where} some tasks were answered twice and others not at all")


def _drain(q: Any, count: int, timeout: float) -> list[Any]:
    got = []
    for _ in range(count):
        try:
            got.append(q.get(timeout=timeout))
        except queue.Empty:
            break
    return got


def _check_consumer(fn: Any) -> None:
    expect_function(fn, "consumer", "(tasks, results)")
    tasks = _tasks(3)
    todo, results = queue.Queue(), queue.Queue()
    for task in tasks:
        todo.put(task)
    todo.put(None)
    fn(todo, results)
    got = [results.get_nowait() for _ in range(results.qsize())]
    _judge_results(got, tasks, "Run here:")
    if not todo.empty():
        raise Wrong("Run here: your consumer returned before taking every task (and the None) from `tasks`")

    ctx = process_context()
    tasks = _tasks(6)
    todo, results = ctx.Queue(), ctx.Queue()
    try:
        for task in tasks:
            todo.put(task)
        for _ in range(2):
            todo.put(None)  # one stop signal per consumer
        _in_children(fn, "consumer", [(todo, results), (todo, results)])
        _judge_results(_drain(results, len(tasks), 5.0), tasks, "From two child processes:")
    finally:
        for q in (todo, results):
            q.close()
            q.join_thread()


# -- Question 3: a sum shared out between processes ------------------------------------------------


def _partitions(x: torch.Tensor, world_size: int) -> list[list[float]]:
    """The sums each rank may rightly write: contiguous chunks (chunk, tensor_split) or every world_size-th element."""
    return [
        [c.sum().item() for c in x.chunk(world_size)] + [0.0] * (world_size - len(x.chunk(world_size))),
        [c.sum().item() for c in x.tensor_split(world_size)],
        [x[r::world_size].sum().item() for r in range(world_size)],
    ]


def _judge_sums(out: torch.Tensor, x: torch.Tensor, world_size: int, where: str) -> None:
    got = out.tolist()
    if all(v == 0.0 for v in got):
        raise Wrong(
            f"{where} `out` is still all zeros: write into it in place (out[rank] = ...); assigning to the name "
            "`out` or returning the sum changes nothing the parent sees"
        )
    if world_size > 1 and all(math.isclose(v, x.sum().item(), rel_tol=1e-6) for v in got):
        raise Wrong(f"{where} every process wrote the sum of all of x; each should sum only its own chunk")
    for expected in _partitions(x, world_size):
        if all(math.isclose(v, e, rel_tol=1e-6, abs_tol=1e-6) for v, e in zip(got, expected, strict=True)):
            return
    chunks = [c.sum().item() for c in x.chunk(world_size)]
    raise Wrong(
        f"{where} with {world_size} process{'es' if world_size > 1 else ''} `out` became {got}; "
        f"the sums of x.chunk({world_size}) are {chunks}"
    )


def _expect_x_unchanged(x: torch.Tensor) -> None:
    if not torch.equal(x, torch.arange(1.0, 11.0)):
        raise Wrong("Run here: your partial_sum changed x; read your chunk of it and write only into out[rank]")


def _check_partial_sum(fn: Any) -> None:
    expect_function(fn, "partial_sum", "(rank, world_size, x, out)")
    x = torch.arange(1.0, 11.0)
    out = torch.zeros(1)
    fn(0, 1, x, out)
    _expect_x_unchanged(x)
    _judge_sums(out, x, 1, "Run here with one process:")
    out = torch.zeros(3)
    for rank in range(3):
        fn(rank, 3, x, out)
    _expect_x_unchanged(x)
    _judge_sums(out, x, 3, "Run here for ranks 0, 1 and 2 in turn:")

    x.share_memory_()
    out = torch.zeros(2).share_memory_()
    _in_children(fn, "partial_sum", [(rank, 2, x, out) for rank in range(2)])
    _judge_sums(out, x, 2, "In two child processes:")
    if not math.isclose(out.sum().item(), x.sum().item(), rel_tol=1e-6):
        raise Wrong(f"In two child processes: out.sum() is {out.sum().item():g}, not the sum of x ({x.sum().item():g})")


# -- Question 4: debug this: a launcher that forks ----------------------------------------------------

_CHILDREN = 2
#: How long the checker's worker runs in each child before it writes.
_WORK_SECONDS = 0.3


def _nudge(ran: torch.Tensor, parent: int, model: nn.Module) -> None:
    """The checker's worker: add 1 to every parameter (as an SGD step writes them) and note where it ran.

    It takes a while first, as training does, so that a launcher that returns without join() returns
    while its children still run, however fast this machine starts them.
    """
    time.sleep(_WORK_SECONDS)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)
    ran[0 if os.getpid() != parent else 1] += 1  # ran[0]: in a child process; ran[1]: in the checker's own


def _check_run_in_forks(fn: Any) -> None:
    expect_function(fn, "run_in_forks", "(model, work, processes)")
    model = nn.Linear(4, 2)
    before = _snapshot(model)
    ran = torch.zeros(2).share_memory_()  # in shared memory before any child exists: every child's count arrives
    work = functools.partial(_nudge, ran, os.getpid())  # picklable, so spawn and forkserver can run it too
    earlier = set(multiprocessing.active_children())
    try:
        fn(model, work, _CHILDREN)
        running = [p for p in multiprocessing.active_children() if p not in earlier]
        if running:
            raise Wrong(
                f"your run_in_forks returned while {len(running)} child process(es) were still running: join() "
                "every process before returning, or the caller reads the model before the children have written it"
            )
    finally:
        stop_processes([p for p in multiprocessing.active_children() if p not in earlier])
    in_children, here = int(ran[0].item()), int(ran[1].item())
    if here and not in_children:
        raise Wrong(
            "`work` ran in this process, not in child processes: start each one with "
            "ctx.Process(target=work, args=(model,)) and let the children call it"
        )
    if not in_children:
        raise Wrong(
            f"no child process ran `work` to its end: start {_CHILDREN} processes with target=work and "
            "args=(model,), and look at their exitcode"
        )
    if not _unchanged(model, before):
        return
    if all(p.is_shared() for p in model.parameters()):
        raise Wrong(
            "the parameters are in shared memory now, but the children were forked before they were: a forked "
            "child keeps a copy of memory as it was at start(), so share the model before starting the processes"
        )
    raise Wrong(
        "the child processes ran `work`, but the model in this process did not change: a forked child trains "
        "its own copy-on-write copy of the parameters, so nothing reaches the parent; put the model in shared "
        "memory first"
    )


QUESTIONS = [
    Question(
        number=1,
        task="Write `hogwild_worker(rank, model, x, y, steps, lr)`: train the shared `model` in place with SGD "
        "(learning rate lr) for `steps` steps, each on 32 random rows of (x, y) with cross-entropy.",
        variable="hogwild_worker",
        file="hogwild_answer.py",
        checker=_check_hogwild_worker,
        hint_text="Make the optimizer inside the worker: opt = torch.optim.SGD(model.parameters(), lr=lr). Then "
        "`steps` times: pick rows with torch.randint(0, len(x), (32,)), compute F.cross_entropy(model(x[idx]), "
        "y[idx]), then opt.zero_grad(), loss.backward(), opt.step().",
        chapter="09",
        time_limit=TIME_LIMIT,
    ),
    Question(
        number=2,
        task="Write `consumer(tasks, results)`: take (index, tensor) items from the queue `tasks` until None; for "
        "each, put (index, the tensor's mean as a Python float) on `results`; then return.",
        variable="consumer",
        file="consumer_answer.py",
        checker=_check_consumer,
        hint_text="A `while True:` loop: item = tasks.get(); if item is None: return; otherwise index, t = item "
        "and results.put((index, t.mean().item())). `.item()` makes the mean a plain float.",
        chapter="09",
        time_limit=TIME_LIMIT,
    ),
    Question(
        number=3,
        task="Write `partial_sum(rank, world_size, x, out)`: sum this process's chunk of the 1-D tensor x, "
        "x.chunk(world_size)[rank], into out[rank] (out is a tensor the parent shared).",
        variable="partial_sum",
        file="partial_sum_answer.py",
        checker=_check_partial_sum,
        hint_text="out[rank] = x.chunk(world_size)[rank].sum() writes in place, into the shared memory the parent "
        "sees. Assigning to `out` itself, or returning the sum, changes nothing the parent can see.",
        chapter="09",
        time_limit=TIME_LIMIT,
    ),
    Question(
        number=4,
        task="Debug this: `run_in_forks(model, work, processes)` runs work(model) in `processes` forked child "
        "processes, but the parent's model never changes. Fix it so that what the children write reaches it.",
        variable="run_in_forks",
        checker=_check_run_in_forks,
        hint_text="fork gives each child a copy of the parent's memory, and a child's write to its copy stays "
        "there. Memory that is shared before the fork is the same pages in every process: see section 2.",
        chapter="09",
        time_limit=TIME_LIMIT,
    ),
]
