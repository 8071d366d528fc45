"""Chapter 08 exercises: a rank's share of the data, the lines that make a worker DDP, a recipe's batch and rate on
several ranks. The worker (a file) runs on one rank here, then on two gloo ranks, as chapter 12's does."""

import gc
import inspect
import itertools
import os
import traceback
from collections.abc import Iterator
from dataclasses import replace
from typing import Any
from unittest import mock

import torch
import torch.distributed as dist
from torch.utils.data import DistributedSampler

from ..answers import Wrong, expect_function, expect_pair, one_element_item, with_article
from ..checking import CouldNotCheck
from ..processes import DIED, RAISED, RETURNED, RUNNING, STARTING, LaunchTimeout, WorkerFailed, launch
from .cases import Slip, questions, show, table

#: Seconds two ranks may take to start (a slow start is never held against an answer), to run, and to wait in
#: one collective (far shorter: a rank left waiting says where); the most a two-rank check may run.
START_TIMEOUT, LAUNCH_TIMEOUT, COLLECTIVE_TIMEOUT = 60.0, 60.0, 15.0
TWO_RANK_TIME_LIMIT = START_TIMEOUT + LAUNCH_TIMEOUT + 30
#: Said, in chapters 08 and 12 alike, of an answer after which no process group is left.
DESTROYED = "destroyed the process group: the launcher made it and ends it, so leave destroy_process_group() to it"


def run_here(worker: Any, fn: Any) -> list[Any]:
    """`[worker(0, 1, fn)]` on a one-rank gloo group here, so the learner's prints and errors show in the notebook
    (`[]` if it has a group); their destroy_process_group() is noted, not done (mid-collective it hangs the kernel)."""
    from ..processes import loopback_interface

    if dist.is_initialized():
        return []
    ifname, destroyed = os.environ.get("GLOO_SOCKET_IFNAME") or loopback_interface(), []
    with mock.patch.dict(os.environ, {"GLOO_SOCKET_IFNAME": ifname}):
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
        try:
            with mock.patch.object(dist, "destroy_process_group", lambda *_, **__: destroyed.append(True)):
                result = worker(0, 1, fn)
        except BaseException as exc:
            traceback.clear_frames(exc.__traceback__)  # what it raised must not keep the learner's model alive
            raise
        finally:
            gc.collect()  # free the learner's wrapped model while its group still exists
            if dist.is_initialized():
                dist.destroy_process_group()
    result = {"wrong": f"{fn.__name__} {DESTROYED}"} if destroyed else result
    _wrong_on_a_rank({0: result}, "on one rank here (world_size 1)")
    return [result]


def run_on_two_ranks(worker: Any, args: tuple[Any, ...] = (), *, file: str) -> list[Any]:
    """What `worker(rank, 2, *args)` returned on each of two gloo ranks (a worker that finds a mistake returns
    `{"wrong": sentence}`); a failure is a `Wrong` decided from how each rank ended, named in `file`."""
    args = tuple(inspect.unwrap(a) if callable(a) else a for a in args)
    clocks = {"timeout": LAUNCH_TIMEOUT, "collective_timeout": COLLECTIVE_TIMEOUT, "start_timeout": START_TIMEOUT}
    try:
        results = launch(inspect.unwrap(worker), 2, args, backend="gloo", threads_per_rank=1, **clocks).results
    except (WorkerFailed, LaunchTimeout) as error:
        _wrong_on_a_rank({o.rank: o.result for o in error.outcomes if o.ended == RETURNED}, "on rank {} of two")
        raise _what_the_ranks_did(error, file) from None
    _wrong_on_a_rank(dict(enumerate(results)), "on rank {} of two")
    return results


def _wrong_on_a_rank(results: dict[int, Any], where: str, key: str = "wrong") -> None:
    for rank, result in sorted(results.items()):
        if isinstance(result, dict) and result.get(key):
            raise Wrong(f"{where.format(rank)}: {result[key]}")


def _what_the_ranks_did(error: Any, file: str) -> Exception:
    """The verdict on a two-rank run that failed, from each rank's outcome: a rank that failed on its own (not the
    peer it left waiting), else where each rank waited, ran or finished."""
    ranks = [_where_it_was(o, error.outcomes, file) for o in error.outcomes]
    if any(o.ended == STARTING for o in ranks):
        said = "Each starts by importing your file; if that is quick, the machine is busy: run check() again"
        return CouldNotCheck(f"the two ranks did not start within {START_TIMEOUT:g} s. {said}")
    running = any(o.ended == RUNNING and not o.waiting_in for o in ranks)
    limit = LAUNCH_TIMEOUT if isinstance(error, LaunchTimeout) else COLLECTIVE_TIMEOUT
    at = lambda o: f" (line {o.line_in(file)} of {file})" if o.line_in(file) is not None else ""

    def said(o: Any) -> str:
        if o.ended == RETURNED:
            return f"rank {o.rank} had already finished"
        if o.waiting_in:
            return f"rank {o.rank} waited{f' {limit:g} s' if running else ''} in {o.waiting_in}{at(o)}"
        if o.ended == RUNNING:
            return f"rank {o.rank} was still running after {limit:g} s{at(o)}"
        return f"rank {o.rank} {o.exit}" if o.ended == DIED else f"rank {o.rank} failed{at(o)}: {o.error_line}"

    own = [o for o in ranks if o.ended == DIED or (o.ended == RAISED and not o.waiting_in)]
    if any(o.rank == getattr(error, "rank", None) for o in own):  # the launcher's blame: an error of its own
        own.sort(key=lambda o: o.rank != error.rank)
        also = [o for o in own[1:] if o.ended == RAISED and o.error != "RuntimeError"]  # not a lost peer's error
        shown = [own[0], *also, *(o for o in ranks if o.ended == RETURNED)]
        return Wrong("on two ranks, " + "; ".join(map(said, shown)))
    ranks.sort(key=lambda o: (not o.waiting_in, o.ended != RUNNING, o.collective is None, o.line_in(file) is None))
    if running:
        why = ": is a rank slow, stuck in a loop, or waiting for something another rank never does?"
    elif ranks[0].waiting_in:  # first a collective the answer called, then a wait in its own file
        why = ": every rank must make the same collective calls, in the same order, with the same arguments (src, "
        why += "dst), on tensors of the same shape and dtype (look for one that only some ranks make)"
        if ranks[0].collective in ("send", "recv", "isend", "irecv"):
            why += " (a recv needs a send on the other rank, and a send a recv)"
        if "autograd" in ranks[0].waiting_in:  # DDP's gradient averaging, inside backward()
            why += " (DDP averages the gradients inside backward(): every rank must run as many steps)"
    else:
        why = f": the answer did not finish ({str(error).splitlines()[0]})"
    return Wrong("on two ranks, " + "; ".join(map(said, sorted(ranks, key=lambda o: o.rank))) + why)  # in rank order


def _where_it_was(outcome: Any, outcomes: Any, file: str) -> Any:
    """A rank that reached the wait its peer gave up on only later was late, not missing: judged by where it
    ran when the peer gave up (`where_first`), as if it had been stopped there."""
    late = outcome.where_first and outcome.where_first != outcome.frames  # it ran on after it was first asked
    gave_up = {(o.waiting_in, o.line_in(file)) for o in outcomes if o.ended == RAISED and o.rank != outcome.rank}
    if late and outcome.waiting_in is not None and (outcome.waiting_in, outcome.line_in(file)) in gave_up:
        return replace(outcome, ended=RUNNING, frames=outcome.where_first, waited=False)
    return outcome


def _sampler(n: int, world: int, rank: int, epoch: int) -> list[int]:
    """What DistributedSampler(shuffle=True, seed=0) gives `rank` in `epoch`."""
    reference = DistributedSampler(range(n), num_replicas=world, rank=rank, shuffle=True, seed=0)
    reference.set_epoch(epoch)
    return [*reference]


def _indices(value: Any, call: str) -> list[int]:
    """What `rank_indices` returned, as a list of ints (one-element tensors count): any sequence, array or iterator."""
    if isinstance(value, torch.Tensor) and value.device.type == "meta":
        raise Wrong(f"{call} returned a tensor on the meta device, which holds no values; return the indices")
    kind = show(value) if hasattr(value, "dtype") else with_article(type(value).__name__)
    value = value.tolist() if hasattr(value, "tolist") else value
    if isinstance(value, Iterator | range | tuple):
        value = list(itertools.islice(value, 100_000))  # bounded: an endless iterator gets a verdict
    if not isinstance(value, list):
        raise Wrong(f"{call} returned {show(value)}; return the list of sample indices")
    for k, index in enumerate(value):  # a float or a bool is shown as it came
        if type(item := one_element_item(index)) is not int:
            shown, floats = (repr(index), ", not floats") if isinstance(item, float) else (show(index), "")
            raise Wrong(f"{call} returned {kind} whose element {k} is {shown}: return the indices as ints{floats}")
    return [one_element_item(i) for i in value]


#: (n_samples, world_size): dividing or not, fewer samples than ranks, padding longer than the data, past 255, none.
_SIZES = ((16, 2), (10, 4), (7, 3), (5, 1), (3, 4), (1, 3), (2, 5), (400, 2), (0, 2))
_RANK_CASES = [(n, w, r, e) for n, w in _SIZES for e in (0, 2) for r in range(w)]
_PADDED = "when n_samples does not divide by world_size, DistributedSampler repeats the shuffle from its start, as "
_PADDED += "often as it takes, so that every rank reads ceil(n_samples / world_size) indices"
_RANK_SLIPS = (  # the padding first: an empty share is "in order" too, but what it lacks is the padding
    Slip(lambda n, w, r, e: _sampler(n, w, r, e)[: len(range(r, n, w))], _PADDED),  # without the padding at its end
    Slip(lambda n, w, r, e: list(range(r, n, w)), "the indices are in order: shuffle them (shuffle=True, seed=0)"),
    Slip(lambda n, w, r, e: _sampler(n, w, r, 0), "that is epoch 0's shuffle: call sampler.set_epoch(epoch)"),
    Slip(lambda n, w, r, e: _sampler(n, w, 0, e), "that is rank 0's share: pass rank=rank to the sampler"),
)
_check_rank_indices = table(
    "rank_indices", "(n_samples, world_size, rank, epoch)", _RANK_CASES, _sampler, answer=_indices, slips=_RANK_SLIPS
)


STEPS, LR = 5, 0.1


def _expected_weights(world: int, zero_grad: bool = True, steps: int = STEPS) -> list[float]:
    """One process trained on every rank's data, as DDP trains (zero_grad=False: gradients pile up; steps=0: start)."""
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    seeded = [torch.Generator().manual_seed(r) for r in range(world)]
    data = [(torch.randn(8, 4, generator=g), torch.full((8, 1), float(r))) for r, g in enumerate(seeded)]
    for _ in range(steps):
        if zero_grad:
            opt.zero_grad()
        (sum(torch.nn.functional.mse_loss(model(x), y) for x, y in data) / world).backward()
        opt.step()
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).tolist()


def ddp_rank(rank: int, world_size: int, fn: Any) -> dict[str, Any]:
    """In each rank: `fn(rank, world_size)`, noting DDP's forward passes (False: under no_sync) and each step's lr."""
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.optim.optimizer import register_optimizer_step_pre_hook as on_step

    synced, lrs, wraps, forward, init = [], [], [], DDP.forward, DDP.__init__
    noted = lambda ddp, *a, **k: synced.append(ddp.require_backward_grad_sync) or forward(ddp, *a, **k)
    with (  # DDP's forward however it is called (model(x), model.forward(x)); model.module(x) skips it
        mock.patch.object(DDP, "forward", noted),
        mock.patch.object(DDP, "__init__", lambda ddp, *a, **k: wraps.append(ddp) or init(ddp, *a, **k)),
        on_step(lambda opt, *_: lrs.append(float(opt.param_groups[0]["lr"]))),
    ):
        returned = fn(rank, world_size)
    if not dist.is_initialized():
        return {"wrong": f"train_on_rank {DESTROYED}"}
    try:
        parts = returned.parameters() if isinstance(returned, torch.nn.Module) else returned
        weights = torch.cat([torch.as_tensor(p).detach().float().reshape(-1) for p in parts]).tolist()
    except (TypeError, ValueError, RuntimeError):
        weights = []
    if len(weights) != 5:
        return {"wrong": f"train_on_rank returned {show(returned)}; return the model's parameters, as the file does"}
    if len(wraps) > 1:  # each wrap copies rank 0's weights to every rank again; nested ones all-reduce again too
        return {"differed": f"the model was wrapped in DDP {len(wraps)} times: wrap it once, before the loop"}
    return {"differed": _what_differed(weights, lrs, synced, world_size)}  # said if every rank returns


def _what_differed(weights: list[float], lrs: list[float], synced: list[bool], world: int) -> str | None:
    """What a rank's notes show, where its weights are not one process's trained on every rank's data."""
    near = lambda want: max(abs(a - b) for a, b in zip(weights, want, strict=True)) < 1e-5
    want = _expected_weights(world)
    if not lrs:
        return "opt.step() never ran: write the training step (loss, zero_grad, backward, step)"
    if not synced:
        said = "no forward pass called a DistributedDataParallel model: wrap the model (model = DDP(model)) and call "
        return said + "the wrapped model (model(x)); DDP averages the gradients over the ranks only after that"
    if near(want):
        return None
    if len(lrs) != STEPS:
        return f"opt.step() ran {len(lrs)} times; the loop runs {STEPS} steps, one opt.step() each"
    if lrs[0] != LR:
        scaled = " (0.1 × world_size)" if lrs[0] == LR * world else ""
        said = f"the optimizer stepped with lr={lrs[0]:g}{scaled}: keep the file's lr=0.1, since DDP averages the "
        return said + "gradients over the ranks and each step is already one process's step on every rank's data"
    if False in synced:
        said = f"{synced.count(False)} of the {len(synced)} forward passes through DDP ran under no_sync(), so their "
        return said + "backward() did not average the gradients over the ranks: run every step outside no_sync()"
    if near(_expected_weights(world, zero_grad=False)):
        return "each step's gradients were added to the last step's: call opt.zero_grad() every step"
    if near(_expected_weights(world, steps=0)):  # SGD moves no weight whose gradient is zero or None
        said = f"the weights never changed: after {STEPS} opt.step() calls they are the starting weights, so no step "
        said += "found a gradient: run opt.zero_grad(), loss.backward(), opt.step() in order, on a loss from model(x)"
        return said
    return f"the weights {show(weights)} differ from one process trained on every rank's data: {show(want)}"


def _check_ddp_worker(fn: Any) -> None:
    expect_function(fn, "train_on_rank", "(rank, world_size)")
    _wrong_on_a_rank(dict(enumerate(run_here(ddp_rank, fn))), "on one rank here (world_size 1)", "differed")
    two = run_on_two_ranks(ddp_rank, (fn,), file="ddp_answer.py")  # else: where each rank was
    _wrong_on_a_rank(dict(enumerate(two)), "on rank {} of two", "differed")


_scaled = lambda world, per_rank, lr, batch: (world * per_rank, lr * world * per_rank / batch)
#: The chapter's run (the recipe's batch: the rate stays), larger and smaller ones, ratios not whole (below, above 1).
_RUNS = ((2, 16, 0.05, 32), (4, 64, 0.1, 64), (8, 32, 0.001, 512), (3, 10, 0.1, 16), (5, 7, 0.03, 48))
_RUNS += ((2, 80, 0.1, 32),)
_RUN_SLIPS = (
    Slip(lambda w, *case: _scaled(1, *case), "the global batch is every rank's batch together, not one rank's"),
    Slip(lambda w, p, lr, b: (w * p, lr), "the rate was kept, but the global batch is not the recipe's: scale it"),
    Slip(lambda w, p, lr, b: (w * p, lr * w), "the rate follows the global batch, not the number of ranks"),
)
_pair = lambda value, call: expect_pair(value, call, "global_batch", "lr")
_check_scaled_run = table(
    "scaled_run", "(world_size, per_rank_batch, base_lr, base_batch)", _RUNS, _scaled, answer=_pair, slips=_RUN_SLIPS
)


_TEXTS = {  # each question's variable: its task, then (after a newline) its hint
    "rank_indices": "Write `rank_indices(n_samples, world_size, rank, epoch)` returning the sample indices that rank "
    "`rank` reads in epoch `epoch` with `DistributedSampler(..., shuffle=True, seed=0)`.\n"
    "DistributedSampler takes the data set (range(n_samples) will do), num_replicas=world_size, rank=rank, "
    "shuffle=True and seed=0; call set_epoch(epoch) before reading it, then list(sampler).",
    "train_on_rank": "Complete `train_on_rank(rank, world_size)` in the file ddp_answer.py: wrap the model in DDP and "
    "write the training step, so that two ranks with different data end with the same weights as one process trained "
    "on both.\n"
    "`model = DDP(model)` right after building it (the launcher makes the process group and ends it); then each step: "
    "loss = F.mse_loss(model(x), y), opt.zero_grad(), loss.backward(), opt.step().",
    "scaled_run": "Write `scaled_run(world_size, per_rank_batch, base_lr, base_batch)`: a recipe trained with learning "
    "rate `base_lr` on batches of `base_batch`; on `world_size` DDP ranks with `per_rank_batch` samples each, return "
    "(the global batch per optimizer step, the learning rate by the linear scaling rule).\n"
    "One optimizer step averages the gradients of every rank's batch; the linear rule multiplies the rate by how many "
    "times larger that global batch is than the recipe's.",
}
_CHECKS = (_check_rank_indices, _check_ddp_worker, _check_scaled_run)
#: Question 1's answer runs with the name the notebook imported; question 2's is a file that two ranks import.
_EXTRA = {
    "rank_indices": {"context": lambda: {"DistributedSampler": DistributedSampler}},
    "train_on_rank": {"file": "ddp_answer.py", "time_limit": TWO_RANK_TIME_LIMIT},
}
QUESTIONS = questions("08", _TEXTS, _CHECKS, _EXTRA)
