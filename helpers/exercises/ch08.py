"""Chapter 08 exercises: a rank's share of the data (DistributedSampler), the lines that make a worker DDP,
and the global batch and learning rate of a recipe moved to several ranks.

The second question's worker lives in a file the learner writes (`%%writefile`), because every
rank is a new process that imports it, as chapter 08 teaches. The checker runs it for real: on one
rank in this process first (so a mistake shows with its line number and what it prints), then on
two gloo ranks through the chapter's launcher, `helpers.processes.launch`, with a time limit.
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import itertools
import math
import os
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import torch

from ..checking import CouldNotCheck, Question, Wrong, expect_function, expect_pair

#: Seconds the two ranks may take to start (the first launch of a session also starts the process server,
#: which a busy machine makes slow); a slow start is never held against an answer.
START_TIMEOUT = 60.0
#: Seconds the two ranks may run an answer once both have started.
LAUNCH_TIMEOUT = 60.0
#: Seconds a rank may wait in one collective (the process group's timeout), far shorter than the run's
#: limit: a rank its peer left waiting raises there, and says in which collective.
COLLECTIVE_TIMEOUT = 15.0
#: The most the learner's code may run in one check of a two-rank question: here, then on two ranks.
TWO_RANK_TIME_LIMIT = START_TIMEOUT + LAUNCH_TIMEOUT + 30


def run_on_two_ranks(worker: Any, args: tuple[Any, ...] = (), *, file: str) -> list[Any]:
    """Call `worker(rank, 2, *args)` on two gloo ranks and return what each returned; a failure is a `Wrong`.

    `worker` and `args` travel by name: the learner's function must come from a file (`inspect.unwrap`
    gives it back from the checker's wrapper); `file` names it in verdicts. A worker that finds a
    mistake on its rank returns `{"wrong": sentence}`. What went wrong is decided from how each rank
    ended (`helpers.processes.RankOutcome`), never from an error's text.
    """
    from ..processes import RETURNED, LaunchTimeout, WorkerFailed, launch

    args = tuple(inspect.unwrap(a) if callable(a) else a for a in args)
    try:
        out = launch(
            inspect.unwrap(worker),
            2,
            args,
            backend="gloo",
            timeout=LAUNCH_TIMEOUT,
            collective_timeout=COLLECTIVE_TIMEOUT,
            start_timeout=START_TIMEOUT,
            threads_per_rank=1,
        )
    except (WorkerFailed, LaunchTimeout) as error:
        _wrong_on_a_rank({o.rank: o.result for o in error.outcomes if o.ended == RETURNED})
        raise _what_the_ranks_did(error, file) from None
    _wrong_on_a_rank(dict(enumerate(out.results)))
    return out.results


def _wrong_on_a_rank(results: dict[int, Any]) -> None:
    for rank, result in sorted(results.items()):
        if isinstance(result, dict) and "wrong" in result:
            raise Wrong(f"on rank {rank} of two: {result['wrong']}")


def _where(outcome: Any, file: str) -> str:
    line = outcome.line_in(file)
    return f" (line {line} of {file})" if line is not None else ""


def _what_the_ranks_did(error: Any, file: str) -> Exception:
    """The verdict on a two-rank run that failed, from each rank's outcome."""
    from ..processes import DIED, RAISED, RETURNED, RUNNING, STARTING, LaunchTimeout

    outcomes = [_where_it_was(o, error.outcomes, file) for o in error.outcomes]
    if any(o.ended == STARTING for o in outcomes):
        return CouldNotCheck(
            f"the two ranks did not start within {START_TIMEOUT:g} s. Each starts by importing your file; if "
            "that is quick, the machine is busy: run check() again"
        )
    done = [o for o in outcomes if o.ended == RETURNED]
    after = f", after rank {done[0].rank} had already finished" if done else ""
    blamed = next((o for o in outcomes if o.rank == getattr(error, "rank", None)), None)  # by the launcher
    if blamed is not None and blamed.ended == RAISED and blamed.waiting_in is None:  # not a wait its peer caused
        also = "".join(
            f"; rank {o.rank} failed too{_where(o, file)}: {_error_line(o)}"
            for o in outcomes
            if o.ended == RAISED and not o.waited and o.rank != blamed.rank and o.error != "RuntimeError"
        )
        return Wrong(
            f"on two ranks, rank {blamed.rank} failed{_where(blamed, file)}{after}: {_error_line(blamed)}{also}"
        )
    if blamed is not None and blamed.ended == DIED:  # gloo aborts a rank whose collective does not match its peer's
        return Wrong(f"on two ranks, rank {blamed.rank} {blamed.exit}{after}")
    waiting = sorted(
        (o for o in outcomes if o.waiting_in is not None),
        key=lambda o: (o.collective is None, o.line_in(file) is None),  # first a collective the answer called
    )
    for waited in waiting:
        others = [o for o in outcomes if o.rank != waited.rank]
        if all(_elsewhere(o, waited, file) for o in others):
            pair = " (a recv needs a send on the other rank, and a send a recv)" if waited.collective in _P2P else ""
            if "autograd" in waited.waiting_in:  # DDP's gradient averaging, inside backward()
                pair = " (DDP averages the gradients inside backward(): every rank must run as many steps)"
            return Wrong(
                f"rank {waited.rank} waited in {waited.waiting_in}{_where(waited, file)} "
                f"{' and '.join(_what_it_did(o, file) for o in others)}: every rank must make the same "
                "collective calls, in the same order, on tensors of the same shape and dtype (look for one that "
                f"only some ranks make){pair}"
            )
    if waiting and len(waiting) == len(outcomes):
        each = " and ".join(f"rank {o.rank} in {o.waiting_in}{_where(o, file)}" for o in waiting)
        return Wrong(
            f"on two ranks, every rank ended up waiting for the others ({each}): do the ranks make the "
            "same collective calls, in the same order, with the same arguments (src, dst) and tensors of the same "
            "shape and dtype?"
        )
    running = [o for o in outcomes if o.ended == RUNNING and o.waiting_in is None]
    limit = LAUNCH_TIMEOUT if isinstance(error, LaunchTimeout) else COLLECTIVE_TIMEOUT
    if running and waiting:
        waited, busy = waiting[0], running[0]
        return Wrong(
            f"rank {waited.rank} waited {limit:g} s in {waited.waiting_in}{_where(waited, file)} while rank "
            f"{busy.rank} was still running{_where(busy, file)}: is rank {busy.rank} slow, stuck in a loop, or "
            f"waiting for something rank {waited.rank} never does?"
        )
    if running:
        each = " and ".join(f"rank {o.rank}{_where(o, file)}" for o in running)
        return Wrong(
            f"on two ranks, {each} {'was' if len(running) == 1 else 'were'} still running after {LAUNCH_TIMEOUT:g} s"
            f"{after}: does the answer loop forever, or wait for something another rank never does?"
        )
    return Wrong(f"on two ranks, the answer did not finish{after}: {str(error).splitlines()[0]}")


def _where_it_was(outcome: Any, outcomes: Any, file: str) -> Any:
    """A rank that reached the wait its peer gave up on only later was late, not missing: judged by where it
    ran when the peer gave up (`where_first`), as if it had been stopped there."""
    from ..processes import RAISED, RUNNING

    gave_up = [o for o in outcomes if o.ended == RAISED and o.waiting_in is not None]
    late = outcome.where_first and outcome.where_first != outcome.frames  # it ran on after it was first asked
    here = (outcome.waiting_in, outcome.line_in(file))
    if late and any((o.waiting_in, o.line_in(file)) == here for o in gave_up if o.rank != outcome.rank):
        return replace(outcome, ended=RUNNING, frames=outcome.where_first, waited=False)
    return outcome


def _error_line(outcome: Any) -> str:
    """The line of a rank's traceback that names its error and starts its message (a message may span lines, as
    FSDP's does, ending in a printed module), cut to a length a verdict can show."""
    lines = outcome.details.strip().splitlines()
    heads = [line for line in lines if line.split(":")[0].split(".")[-1] == outcome.error]
    line = heads[-1] if heads else lines[-1] if lines else "no details"
    return line if len(line) <= 300 else line[:300] + "…"


def _elsewhere(other: Any, waited: Any, file: str) -> bool:
    """Whether `other` is not in the collective `waited` waits in: it finished, or waits in another one."""
    from ..processes import RETURNED

    if other.ended == RETURNED:
        return True
    return other.waiting_in is not None and (other.waiting_in, other.line_in(file)) != (
        waited.waiting_in,
        waited.line_in(file),
    )


def _what_it_did(outcome: Any, file: str) -> str:
    from ..processes import RETURNED

    if outcome.ended == RETURNED:
        return f"after rank {outcome.rank} had already finished"
    return f"while rank {outcome.rank} waited in {outcome.waiting_in}{_where(outcome, file)}"


#: Point-to-point calls: a rank waiting in one waits for its partner, not for every rank.
_P2P = ("send", "recv", "isend", "irecv")


# -- Question 1: DistributedSampler ---------------------------------------------------------------

#: (samples, world size); 10 over 4 does not divide, so DistributedSampler pads by repeating samples.
_SAMPLER_CASES = ((16, 2), (12, 3), (10, 4))


def _sampler_indices(n: int, world_size: int, rank: int, epoch: int) -> list[int]:
    from torch.utils.data import DistributedSampler

    sampler = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=0)
    sampler.set_epoch(epoch)
    return [*sampler]


#: More indices than any case's share has; an iterator is read only this far.
_MOST_INDICES = 1_000


def _as_index_list(value: Any, call: str) -> list[int]:
    if isinstance(value, torch.Tensor):
        if value.device.type == "meta":
            raise Wrong(f"{call} returned a tensor on the meta device, which holds no values; return the indices")
        value = value.tolist()
    if hasattr(value, "tolist") and type(value).__module__ == "numpy":  # a numpy array of indices
        value = value.tolist()
    if isinstance(value, range | map | filter | Iterator) or inspect.isgenerator(value):
        value = list(itertools.islice(value, _MOST_INDICES + 1))  # bounded: an endless iterator gives a verdict
    if not isinstance(value, (list, tuple)):
        raise Wrong(f"{call} returned a {type(value).__name__}; return the list of sample indices")
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        raise Wrong(f"{call} should return whole numbers (sample indices), got {list(value)[:6]!r}")
    return list(value)


def _check_rank_indices(fn: Any) -> None:
    expect_function(fn, "rank_indices", "(n_samples, world_size, rank, epoch)")
    for n, world in _SAMPLER_CASES:
        for epoch in (0, 1):
            got_all = []
            for rank in range(world):
                call = f"rank_indices({n}, {world}, {rank}, {epoch})"
                got = _as_index_list(fn(n, world, rank, epoch), call)
                expected = _sampler_indices(n, world, rank, epoch)
                got_all.append(got)
                if got == expected:
                    continue
                if sorted(got) == list(range(rank, n, world)):
                    raise Wrong(
                        f"{call} gives rank {rank} the samples {rank}, {rank + world}, {rank + 2 * world}, … in order: "
                        "shuffle (shuffle=True)"
                    )
                if epoch == 1 and got == _sampler_indices(n, world, rank, 0):
                    raise Wrong(
                        f"{call} repeats epoch 0's order: call sampler.set_epoch(epoch), or every epoch "
                        "sees the same shuffle"
                    )
                if rank > 0 and got == _sampler_indices(n, world, 0, epoch):
                    raise Wrong(f"{call} is rank 0's share: pass rank={rank} (and num_replicas) to the sampler")
                if len(got) != len(expected):
                    raise Wrong(
                        f"{call} has {len(got)} indices; each of {world} ranks reads ceil({n} / {world}) = "
                        f"{len(expected)} (DistributedSampler repeats a few samples when {n} does not divide)"
                    )
                raise Wrong(f"{call} returned {got}, but DistributedSampler(seed=0) gives rank {rank} {expected}")
            covered = sorted({i for share in got_all for i in share})
            if covered != list(range(n)):
                raise Wrong(f"with {n} samples over {world} ranks some samples are read by no rank")


# -- Question 2: the lines that make a worker DDP ------------------------------------------------


STEPS, LR = 5, 0.1


def _rank_data(rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The data rank `rank` trains on in the exercise (the same as its template builds)."""
    g = torch.Generator().manual_seed(rank)
    return torch.randn(8, 4, generator=g), torch.full((8, 1), float(rank))


def _expected_weights(world_size: int, average: bool = True, zero_grad: bool = True) -> torch.Tensor:
    """One process trained on every rank's data at once: what DDP (which averages gradients) must give.

    `average=False` sums the ranks' gradients instead; `zero_grad=False` lets them pile up from step to step.
    """
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    data = [_rank_data(r) for r in range(world_size)]
    for _ in range(STEPS):
        if zero_grad:
            opt.zero_grad()
        losses = [torch.nn.functional.mse_loss(model(x), y) for x, y in data]
        (sum(losses) / (world_size if average else 1)).backward()
        opt.step()
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def _initial_weights() -> torch.Tensor:
    torch.manual_seed(0)
    return torch.cat([p.detach().reshape(-1) for p in torch.nn.Linear(4, 1).parameters()])


def _flat(value: Any, where: str) -> torch.Tensor:
    """The returned parameters as one flat tensor (tensors, lists of tensors, nested lists of numbers)."""

    def parts(v: Any) -> list[torch.Tensor]:
        if isinstance(v, torch.Tensor):
            return [v.detach().cpu().float().reshape(-1)]
        if isinstance(v, torch.nn.Module):
            return [p.detach().cpu().float().reshape(-1) for p in v.parameters()]
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return [torch.tensor([float(v)])]
        if isinstance(v, (list, tuple)) and v:
            return [t for item in v for t in parts(item)]
        raise Wrong(
            f"{where} your function returned {type(v).__name__}; return the model's parameters, "
            "e.g. [p.detach() for p in model.parameters()]"
        )

    flat = torch.cat(parts(value))
    if flat.numel() != 5:
        raise Wrong(f"{where} the returned parameters hold {flat.numel()} numbers; nn.Linear(4, 1) has 5")
    return flat


@contextlib.contextmanager
def one_rank_group() -> Iterator[bool]:
    """A gloo group of one rank in this process, for a checker's first run of a learner's code (what it
    prints and raises shows with line numbers); yields False, and leaves it alone, if the notebook has a group.
    """
    import torch.distributed as dist

    from ..processes import loopback_interface

    if dist.is_initialized():
        yield False
        return
    old = os.environ.get("GLOO_SOCKET_IFNAME")
    os.environ["GLOO_SOCKET_IFNAME"] = old or loopback_interface()
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        yield True
    finally:
        gc.collect()  # free the learner's wrapped model while its group still exists
        if dist.is_initialized():
            dist.destroy_process_group()
        if old is None:
            os.environ.pop("GLOO_SOCKET_IFNAME", None)


def _run_on_one_rank_here(fn: Any) -> tuple[bool, Any]:
    """Call the learner's worker in this process, on one gloo rank: (whether it ran, what it returned).

    It does not run when the notebook has a process group of its own.
    """
    with one_rank_group() as made:
        return (True, fn(0, 1)) if made else (False, None)


def _check_ddp_worker(fn: Any) -> None:
    expect_function(fn, "train_on_rank", "(rank, world_size)")
    # 1. One rank, here: what it prints and raises shows in this notebook, with your line numbers.
    ran, alone = _run_on_one_rank_here(fn)
    if ran and torch.allclose(_flat(alone, "on one rank"), _initial_weights()):
        raise Wrong("the weights did not change: write the training step (loss, zero_grad, backward, step)")
    # 2. Two gloo ranks, each with its own data, through the course's launcher.
    results = run_on_two_ranks(fn, file="ddp_answer.py")
    w0, w1 = (_flat(r, f"on rank {i},") for i, r in enumerate(results))
    if torch.allclose(w0, _initial_weights()):
        raise Wrong("the weights did not change: write the training step (loss, zero_grad, backward, step)")
    if not torch.allclose(w0, w1, atol=1e-6):
        raise Wrong(
            "rank 0 and rank 1 ended with different weights: each trained on its own data alone, so no gradient "
            "was averaged over the ranks. Wrap the model in DDP and run the forward pass through the wrapped "
            "model (ddp_model(x)): that call is what sets up the averaging in backward()"
        )
    if torch.allclose(w0, _expected_weights(2, average=False), atol=1e-5):
        raise Wrong("the ranks agree, but their gradients were summed, not averaged (DDP divides by world_size)")
    if torch.allclose(w0, _expected_weights(2, zero_grad=False), atol=1e-5):
        raise Wrong(
            "the ranks agree, but each step's gradients were added to the last step's: call "
            "optimizer.zero_grad() every step"
        )
    if not torch.allclose(w0, _expected_weights(2), atol=1e-5):
        raise Wrong(
            "the ranks agree, but not with one process trained on both ranks' data: did every step zero the "
            "gradients and use mse_loss on this rank's x and y?"
        )


# -- Question 3: the global batch and the learning rate on N ranks --------------------------------

#: (world_size, per_rank_batch, base_lr, base_batch): the chapter's own run first (its global batch is the
#: recipe's, so the rate stays), then a global batch four times the recipe's, then one half of it.
_SCALING_CASES = ((2, 16, 0.05, 32), (4, 64, 0.1, 64), (8, 32, 0.001, 512))


def _near(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6)


def _check_scaled_run(fn: Any) -> None:
    expect_function(fn, "scaled_run", "(world_size, per_rank_batch, base_lr, base_batch)")
    for world, per_rank, base_lr, base_batch in _SCALING_CASES:
        call = f"scaled_run({world}, {per_rank}, {base_lr:g}, {base_batch})"
        batch, lr = expect_pair(fn(world, per_rank, base_lr, base_batch), call, "global_batch", "lr")
        every_rank = per_rank * world  # samples behind one optimizer step, all ranks together
        rate = base_lr * every_rank / base_batch  # linear rule: the rate grows with the samples per step
        if _near(batch, every_rank) and _near(lr, rate):
            continue
        if _near(batch, rate) and _near(lr, every_rank):
            raise Wrong(f"{call} returned ({batch:g}, {lr:g}): the two are swapped; return (global_batch, lr)")
        if not _near(batch, every_rank):
            if _near(batch, per_rank):
                raise Wrong(
                    f"{call}: the global batch is every rank's batch together, {world} × {per_rank} = "
                    f"{every_rank}, not one rank's {per_rank}"
                )
            raise Wrong(f"{call}: global batch {batch:g}; {world} ranks of {per_rank} samples make {every_rank}")
        if _near(lr, base_lr):
            raise Wrong(
                f"{call}: the learning rate was kept at {base_lr:g}, but the global batch is now {every_rank}, "
                f"not the recipe's {base_batch}: scale the rate by {every_rank}/{base_batch}"
            )
        if _near(lr, base_lr * world):
            raise Wrong(
                f"{call}: the rate was scaled by the number of ranks ({world}), but it follows the global batch: "
                f"{every_rank} samples against the recipe's {base_batch}, so {rate:g}"
            )
        if _near(lr, base_lr * per_rank / base_batch):
            raise Wrong(
                f"{call}: the rate was scaled by one rank's batch ({per_rank}); DDP averages the gradients "
                f"over all {every_rank} samples, so the rate is {base_lr:g} × {every_rank}/{base_batch} = {rate:g}"
            )
        if _near(lr, base_lr * base_batch / every_rank):
            raise Wrong(
                f"{call}: the rate was scaled the wrong way: a global batch {every_rank / base_batch:g} times the "
                f"recipe's takes a rate {every_rank / base_batch:g} times as large"
            )
        if _near(lr, base_lr * math.sqrt(every_rank / base_batch)):
            raise Wrong(f"{call}: that is the square-root rule; this question asks for the linear one")
        raise Wrong(f"{call}: learning rate {lr:g}; {base_lr:g} × {every_rank}/{base_batch} is {rate:g}")


QUESTIONS = [
    Question(
        number=1,
        task="Write `rank_indices(n_samples, world_size, rank, epoch)` returning the sample indices that rank "
        "`rank` reads in epoch `epoch` with `DistributedSampler(..., shuffle=True, seed=0)`.",
        variable="rank_indices",
        checker=_check_rank_indices,
        hint_text="DistributedSampler takes the data set (range(n_samples) will do), num_replicas=world_size, "
        "rank=rank, shuffle=True and seed=0; call set_epoch(epoch) before reading it, then list(sampler).",
        chapter="08",
        context=lambda: {"DistributedSampler": __import__("torch.utils.data", fromlist=["x"]).DistributedSampler},
    ),
    Question(
        number=2,
        task="Complete `train_on_rank(rank, world_size)` in the file ddp_answer.py: wrap the model in DDP and "
        "write the training step, so that two ranks with different data end with the same weights as one "
        "process trained on both.",
        variable="train_on_rank",
        checker=_check_ddp_worker,
        hint_text="`model = DDP(model)` right after building it (the launcher already called init_process_group); "
        "then each step: loss = F.mse_loss(model(x), y), opt.zero_grad(), loss.backward(), opt.step().",
        chapter="08",
        file="ddp_answer.py",
        time_limit=TWO_RANK_TIME_LIMIT,
    ),
    Question(
        number=3,
        task="Write `scaled_run(world_size, per_rank_batch, base_lr, base_batch)`: a recipe trained with "
        "learning rate `base_lr` on batches of `base_batch`; on `world_size` DDP ranks with `per_rank_batch` "
        "samples each, return (the global batch per optimizer step, the learning rate by the linear scaling rule).",
        variable="scaled_run",
        checker=_check_scaled_run,
        hint_text="One optimizer step averages the gradients of every rank's batch; the linear rule multiplies "
        "the rate by how many times larger that global batch is than the recipe's.",
        chapter="08",
    ),
]
