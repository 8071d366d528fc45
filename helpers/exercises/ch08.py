"""Chapter 08 exercises: buckets by hand, a collective one rank alone makes, a ring's time; one rank, then two."""

import contextlib
import datetime
import gc
import inspect
import os
import random
import traceback
from dataclasses import replace
from typing import Any
from unittest import mock

import torch
import torch.distributed as dist

from ..answers import Wrong, expect_function
from ..checking import CouldNotCheck
from ..processes import DIED, RAISED, RETURNED, RUNNING, STARTING, LaunchTimeout, WorkerFailed, launch
from .cases import Slip, questions, same, show, table

#: Seconds to start two ranks (never held against an answer), to run, to wait in a collective; a two-rank check's cap.
START_TIMEOUT, LAUNCH_TIMEOUT, COLLECTIVE_TIMEOUT = 60.0, 60.0, 8.0
TWO_RANK_TIME_LIMIT = START_TIMEOUT + LAUNCH_TIMEOUT + 30
#: Said, in chapters 08 and 12 alike, of an answer after which no process group is left.
DESTROYED = "destroyed the process group: the launcher made it and ends it, so leave destroy_process_group() to it"


def run_here(worker: Any, fn: Any, *args: Any) -> list[Any]:
    """`[worker(0, 1, fn)]` on a one-rank gloo group here, where prints and errors show (`[]` if a group exists)."""
    from ..processes import loopback_interface

    if dist.is_initialized():
        return []
    ifname, destroyed = os.environ.get("GLOO_SOCKET_IFNAME") or loopback_interface(), []
    ranks = {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "LOCAL_WORLD_SIZE": "1"}  # as the launcher sets them
    with mock.patch.dict(os.environ, {"GLOO_SOCKET_IFNAME": ifname, **ranks}):
        wait = datetime.timedelta(seconds=COLLECTIVE_TIMEOUT)  # a rank waiting for another that is not there
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1, timeout=wait)
        try:
            with mock.patch.object(dist, "destroy_process_group", lambda *_, **__: destroyed.append(True)):  # not done
                result = worker(0, 1, fn, *args)
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


def _wrong_on_a_rank(results: dict[int, Any], where: str) -> None:
    for rank, result in sorted(results.items()):
        if isinstance(result, dict) and result.get("wrong"):
            raise Wrong(f"{where.format(rank)}: {result['wrong']}")


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


#: The gradients' bytes as they finish: 4, 32, 32, 256, 32, 128 (float32); the caps split, pack, fill, pair, join.
CAPS, STEPS, LR, DTYPES = (1, 64, 68, 300, 10**6), 2, 0.1, {300: torch.float64}
_COLLECTIVES = "allreduce allgather _allgather_base broadcast reduce reduce_scatter _reduce_scatter_base send recv "
_COLLECTIVES += "scatter gather alltoall alltoall_base allreduce_coalesced allgather_coalesced barrier"
_unwaited = lambda works: any(not (w.wait.called or w.get_future.called) for w in works)  # a future's wait waits too


def _model(cap: int = 1) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(*(torch.nn.Linear(a, b) for a, b in ((4, 8), (8, 8), (8, 1)))).to(DTYPES.get(cap))


def _train(ranks: Any, average: Any = None, scale: float = 1.0) -> list[float]:
    """Weights after STEPS SGD steps per cap on the mean loss over `ranks`' data (× scale), `average` after backward."""
    seeded = [(r, torch.Generator().manual_seed(r)) for r in ranks]
    weights = []
    for cap in CAPS:
        model, kind = _model(cap), DTYPES.get(cap)
        data = [(torch.randn(8, 4, generator=g).to(kind), torch.full((8, 1), float(r)).to(kind)) for r, g in seeded]
        opt = torch.optim.SGD(model.parameters(), lr=LR)
        for _ in range(STEPS):
            opt.zero_grad()
            (scale * sum(torch.nn.functional.mse_loss(model(x), y) for x, y in data) / len(data)).backward()
            if average:
                average(model, cap)
            opt.step()
        weights += torch.cat([p.detach().reshape(-1) for p in model.parameters()]).tolist()
    return weights


def _buckets(sizes: list[int], cap: int, strict: bool = False) -> list[int]:
    """Bytes of each bucket when `sizes` are packed in turn, a new bucket whenever the next would pass `cap`."""
    out: list[int] = []
    for size in sizes:
        fits = out and (out[-1] + size < cap if strict else out[-1] + size <= cap)
        out = [*out[:-1], out[-1] + size] if fits else [*out, size]
    return out


def _noting(calls: list[list], works: list) -> contextlib.ExitStack:
    """The process group's collectives, noting each call in calls[-1] (an all-reduce's bytes, another's name)."""
    stack, pg = contextlib.ExitStack(), dist.ProcessGroup

    def noted(name: str, method: Any) -> Any:
        def call(group: Any, *args: Any, **kwargs: Any) -> Any:
            calls[-1].append(sum(t.nbytes for t in args[0]) if name == "allreduce" else name)
            works.append(mock.Mock(wraps=method(group, *args, **kwargs)))
            return works[-1]

        return call

    for name in (n for n in _COLLECTIVES.split() if hasattr(pg, n)):
        stack.enter_context(mock.patch.object(pg, name, noted(name, getattr(pg, name))))
    return stack


def bucket_rank(rank: int, world_size: int, fn: Any, _: int = 0) -> dict[str, Any]:
    """In each rank: `fn` averaging a small model's gradients for every cap, its collectives noted wherever from."""
    calls, works = [], []
    with _noting(calls, works):
        got = _train([rank], lambda model, cap: calls.append([]) or fn(model, cap))
    return {"wrong": _bucket_mistake(world_size, rank, got, calls, _unwaited(works))}


def _bucket_mistake(world: int, rank: int, got: list[float], calls: list, unwaited: bool) -> str | None:
    """What the learner's all-reduces or weights show, where they are not one process's on every rank's data."""
    for n, made in enumerate(calls):
        cap = CAPS[n // STEPS]
        sizes = [p.nbytes for p in _model(cap).parameters()][::-1]
        if other := next((c for c in made if isinstance(c, str)), None):
            return f"average_gradients called the process group's {other}: average with dist.all_reduce alone"
        if made == (want := _buckets(sizes, cap)):
            continue
        said = f"with bucket_bytes={cap}, average_gradients all-reduced {made or 'no'} bytes; expected {want}"
        for wrong, why in (
            ([], "call dist.all_reduce once per bucket, whatever the number of ranks"),
            (sizes, "one per gradient: flatten each bucket (gradients while their bytes, nbytes, fit) into one tensor"),
            (_buckets(sizes[::-1], cap), "they follow model.parameters(): build and all-reduce the buckets in reverse"),
            (_buckets(sizes, cap, strict=True), "a bucket may hold exactly bucket_bytes"),
            ([sum(sizes)], "start a new bucket whenever the next gradient would pass bucket_bytes"),
        ):
            if made == wrong:
                return f"{said}: {why}"
        return said
    if unwaited:
        return "an all_reduce(async_op=True) was never waited for: call .wait() on its work before using the gradients"
    far = lambda want: next((k for k, (a, b) in enumerate(zip(got, want, strict=True)) if abs(a - b) >= 1e-6), None)
    if (k := far(want := _train(range(world)))) is None:
        return None
    if far(_train(range(world), scale=world)) is None:
        return "the gradients were summed over the ranks, not averaged: divide each bucket by the world size"
    if far(_train([rank])) is None:
        return "each rank kept its own gradients: copy each all-reduced bucket back into the gradients, piece by piece"
    said = f"the weights differ from one process trained on every rank's data, first at number {k} of {len(got)} "
    return said + f"(the parameters in order, cap after cap): {show(got[k])}, not {show(want[k])}"


def log_rank(rank: int, world_size: int, fn: Any, seed: int = 0, steps: int = 7) -> dict[str, Any]:
    """In each rank: what `fn` logged from its random losses, against every other step's mean (rank 0) or nothing."""
    losses, works = torch.rand(world_size, steps, generator=torch.Generator().manual_seed(seed)).double(), []
    with _noting([[]], works):
        logged, call = fn(rank, world_size, losses[rank].tolist()), f"train_and_log({rank}, {world_size}, losses)"
    if _unwaited(works):
        return {"wrong": "an all_reduce(async_op=True) was never waited for: call .wait() on its work before reading"}
    try:
        got = [float(v) for v in logged]
    except (TypeError, ValueError):
        return {"wrong": f"{call} returned {show(logged)}; return the list of values logged"}
    means = losses.mean(0)[::2].tolist()
    if same(got, want := means if rank == 0 else [], 1e-5):
        return {"wrong": None}
    said = f"{call} returned {show(got)}; expected {show(want)}"
    if rank == 0 and world_size > 1 and same(got, losses[0][::2].tolist(), 1e-5):
        return {"wrong": f"{said}: that is rank 0's own loss, not the mean over the ranks"}
    if rank == 0 and same(got, [world_size * m for m in means], 1e-5):
        return {"wrong": f"{said}: that is the sum over the ranks; divide it by the world size"}
    return {"wrong": f"{said}: only rank 0 logs" if rank and same(got, means, 1e-5) else said}


def _on_ranks(worker: Any, name: str, takes: str) -> Any:
    """A checker that runs `worker` with the learner's function on one rank here, then on two."""

    def check(fn: Any) -> None:
        expect_function(fn, name, takes)
        run_here(worker, fn, seed := random.randrange(2**31))  # question 2's losses: no answer knows them ahead
        run_on_two_ranks(worker, (fn, seed), file=_EXTRA[name]["file"])

    return check


_ring = lambda n_bytes, n, latency, bandwidth: 2 * (n - 1) * latency + 2 * (n - 1) / n * n_bytes / bandwidth
_RING_CASES = ((2**20, 2, 1e-5, 1e9), (8 * 2**20, 4, 2e-5, 12e9), (1000, 8, 5e-6, 2e10), (4096, 1, 1e-5, 1e9))
_RING_CASES += ((3 * 10**8, 3, 0.0, 2.5e10), (0, 4, 1e-5, 1e9))
_RING_SLIPS = (
    Slip(lambda s, n, a, b: _ring(s, n, a, b) / 2, "that is the reduce-scatter alone: the all-gather doubles it"),
    Slip(lambda s, n, a, b: 2 * (n - 1) * a + 2 * s / b, "each rank sends 2(n - 1)/n × n_bytes, not 2 × n_bytes"),
    Slip(lambda s, n, a, b: 2 * n * a + 2 * (n - 1) / n * s / b, "a ring of n ranks takes 2(n - 1) steps, not 2n"),
    Slip(lambda s, n, a, b: a + 2 * (n - 1) / n * s / b, "the latency is paid at each of the 2(n - 1) steps, not once"),
    Slip(lambda s, n, a, b: 2 * (n - 1) / n * s / b, "each of the 2(n - 1) steps also costs latency seconds"),
    Slip(lambda s, n, a, b: 1000 * _ring(s, n, a, b), "that is in milliseconds: return seconds"),
)
_check_ring = table(
    "ring_allreduce_seconds", "(n_bytes, world_size, latency, bandwidth)", _RING_CASES, _ring, slips=_RING_SLIPS
)


_TEXTS = {  # each question's variable: its task, then (after a newline) its hint
    "average_gradients": "Complete `average_gradients(model, bucket_bytes)` in buckets_answer.py: one dist.all_reduce "
    "per bucket of at most bucket_bytes, the parameters in reverse order, each gradient averaged over the ranks.\n"
    "Add each p of reversed(list(model.parameters())) to the last bucket while its p.grad.nbytes fit; per bucket: "
    "flat = torch.cat of the p.grad.reshape(-1), dist.all_reduce(flat), divide by dist.get_world_size(), p.grad.copy_.",
    "train_and_log": "Fix `train_and_log(rank, world_size, losses)` in logging_answer.py: it must finish on 2 ranks, "
    "rank 0 logging the mean loss over every rank.\n"
    "Every rank must call the all-reduce (mean_over_ranks) at the steps that log; only the logging goes under rank 0.",
    "ring_allreduce_seconds": "Write `ring_allreduce_seconds(n_bytes, world_size, latency, bandwidth)`: the ring "
    "model's time for one all-reduce.\n"
    "2(n - 1) steps cost latency each, and each rank sends 2(n - 1)/n × n_bytes at bandwidth bytes per second.",
}
_EXTRA = {
    "average_gradients": {"file": "buckets_answer.py", "time_limit": TWO_RANK_TIME_LIMIT},
    "train_and_log": {"file": "logging_answer.py", "time_limit": TWO_RANK_TIME_LIMIT},
}
_CHECKS = (_on_ranks(bucket_rank, "average_gradients", "(model, bucket_bytes)"),)
_CHECKS += (_on_ranks(log_rank, "train_and_log", "(rank, world_size, losses)"), _check_ring)
QUESTIONS = questions("08", _TEXTS, _CHECKS, _EXTRA)
