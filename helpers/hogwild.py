"""Hogwild: several processes train one model whose parameters live in shared memory, without locks.

`model.share_memory()` moves every parameter into shared memory; processes started afterwards
receive handles to that memory (not copies), so an `optimizer.step()` in any process changes the
parameters every process sees. Nobody waits for anybody: updates may overwrite each other now and
then, which for sparse-ish, small-step SGD costs little (Niu et al., "Hogwild!", 2011).

`hogwild_train(processes=N)` runs N such workers and returns the loss history as plain Python
lists (the workers write it into a shared tensor; the parent copies it out with `tolist()`), plus
the wall time, so the chapter can compare 1 process with several on the same total number of
SGD steps. Process handling (start method, timeout, errors naming the worker, nothing left
running) is the same as `helpers.distributed.launch`.
"""

from __future__ import annotations

import math
import time
import traceback
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from .distributed import LaunchTimeout, WorkerFailed, describe_exit, process_context, stop_processes
from .validation import checks, one_of, positive_number, whole_number


@dataclass(frozen=True)
class HogwildSetup:
    """The problem every worker trains on: a teacher network's labels, learned by a student MLP."""

    samples: int = 4096
    features: int = 64
    hidden: int = 512
    classes: int = 8
    batch: int = 256
    lr: float = 0.05
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("samples", "features", "hidden", "classes", "batch"):
            whole_number(getattr(self, name), name)
        positive_number(self.lr, "lr")


def make_data(setup: HogwildSetup) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and labels (from a random teacher network), the same for every process."""
    g = torch.Generator().manual_seed(setup.seed + 1)
    x = torch.randn(setup.samples, setup.features, generator=g)
    teacher = torch.randn(setup.features, setup.classes, generator=g)
    y = (x @ teacher).argmax(dim=1)
    return x, y


def make_model(setup: HogwildSetup) -> nn.Module:
    """The student MLP, initialised from the seed."""
    torch.manual_seed(setup.seed)
    return nn.Sequential(nn.Linear(setup.features, setup.hidden), nn.ReLU(), nn.Linear(setup.hidden, setup.classes))


def full_loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    """Cross-entropy on the whole data set."""
    with torch.no_grad():
        return nn.functional.cross_entropy(model(x), y).item()


def hogwild_worker(
    index: int,
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    steps: int,
    setup: HogwildSetup,
    losses: torch.Tensor,
    times: torch.Tensor,
    conn: Any,
) -> None:
    """One Hogwild worker: plain SGD on the shared parameters, its own random mini-batches."""
    import os

    try:
        torch.set_num_threads(1)
        g = torch.Generator().manual_seed(1000 + index)
        opt = torch.optim.SGD(model.parameters(), lr=setup.lr)  # updates the shared memory in place
        times[index, 0] = time.monotonic()
        for step in range(steps):
            idx = torch.randint(0, x.shape[0], (setup.batch,), generator=g)
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses[index, step] = loss.item()
        times[index, 1] = time.monotonic()
        conn.send(("ok", index, None))
    except BaseException:
        try:
            conn.send(("error", index, traceback.format_exc()))
        finally:
            os._exit(1)
    finally:
        conn.close()


@dataclass
class HogwildResult:
    """Loss history (one list per process, plain floats), timing and the final loss."""

    processes: int
    steps_per_process: int
    losses: list[list[float]]
    seconds: float
    initial_loss: float
    final_loss: float

    @property
    def updates_per_second(self) -> float:
        """SGD steps applied to the shared model per second, all processes together."""
        return self.processes * self.steps_per_process / self.seconds


def hogwild_train(
    processes: int = 2, total_steps: int = 400, setup: HogwildSetup | None = None, timeout: float = 120.0
) -> HogwildResult:
    """Train one shared model with `processes` Hogwild workers, `total_steps` SGD steps in all.

    The model, the data and the loss log are put in shared memory before the workers start; each
    worker runs `total_steps / processes` steps. Returns plain values; raises `WorkerFailed` naming
    the worker if one fails and `LaunchTimeout` after `timeout` seconds, killing every worker.
    """
    from multiprocessing.connection import wait

    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise ValueError(f"processes must be a whole number ≥ 1, not {processes!r}")
    if isinstance(total_steps, bool) or not isinstance(total_steps, int) or total_steps < processes:
        raise ValueError(f"total_steps must be a whole number ≥ processes ({processes}), not {total_steps!r}")
    if not (isinstance(timeout, (int, float)) and timeout > 0 and math.isfinite(timeout)):
        raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
    setup = setup or HogwildSetup()
    steps = total_steps // processes
    x, y = make_data(setup)
    model = make_model(setup)
    initial = full_loss(model, x, y)
    model.share_memory()  # parameters move to shared memory: every worker updates the same numbers
    x.share_memory_()
    y.share_memory_()
    losses = torch.full((processes, steps), float("nan")).share_memory_()
    times = torch.zeros(processes, 2, dtype=torch.float64).share_memory_()

    ctx = process_context()
    workers, pipes = [], []
    start = time.monotonic()
    try:
        for i in range(processes):
            receive, send = ctx.Pipe(duplex=False)
            p = ctx.Process(
                target=hogwild_worker,
                name=f"hogwild-{i}",
                daemon=True,
                args=(i, model, x, y, steps, setup, losses, times, send),
            )
            p.start()
            send.close()
            workers.append(p)
            pipes.append(receive)
        waiting = {pipes[i]: i for i in range(processes)}
        while waiting:
            remaining = start + timeout - time.monotonic()
            if remaining <= 0:
                raise LaunchTimeout(timeout, sorted(waiting.values()))
            for conn in wait(list(waiting), timeout=remaining):
                i = waiting.pop(conn)
                try:
                    kind, _, payload = conn.recv()
                except EOFError:
                    workers[i].join(2.0)
                    raise WorkerFailed(
                        i, f"Hogwild worker {i} {describe_exit(workers[i].exitcode)} before reporting"
                    ) from None
                if kind == "error":
                    raise WorkerFailed(i, payload)
        for i, p in enumerate(workers):
            p.join(max(0.1, start + timeout - time.monotonic()))
            if p.exitcode != 0:
                raise WorkerFailed(i, f"Hogwild worker {i} {describe_exit(p.exitcode)} at exit")
    finally:
        stop_processes(workers)
        for conn in pipes:
            conn.close()
        for p in workers:
            p.close()
    seconds = float(times[:, 1].max() - times[:, 0].min())
    return HogwildResult(
        processes=processes,
        steps_per_process=steps,
        losses=losses.tolist(),
        seconds=seconds,
        initial_loss=initial,
        final_loss=full_loss(model, x, y),
    )


def plot_loss_curves(results: list[HogwildResult], stamp_text: str) -> Any:
    """Loss against the number of SGD steps applied to the shared model, one line per run.

    Steps of a run with N processes are interleaved in time; the x axis counts them all together
    (step s of each of N workers ≈ shared update N·s), smoothed over a window.
    """
    from .plots import add_stamp, new_figure

    fig, ax = new_figure(7.5, 4.0)
    for res in results:
        per_step = torch.tensor(res.losses)  # (processes, steps)
        merged = per_step.t().reshape(-1)  # interleave: shared update index
        window = max(1, len(merged) // 40)
        smooth = merged.unfold(0, window, window).mean(dim=1) if len(merged) >= window else merged
        xs = (torch.arange(len(smooth)) * window + window / 2).tolist()
        ax.plot(
            xs,
            smooth.tolist(),
            label=f"{res.processes} process{'es' if res.processes > 1 else ''} "
            f"({res.seconds:.2f} s, final loss {res.final_loss:.3f})",
        )
    ax.set_xlabel("SGD steps applied to the shared model (all processes together)")
    ax.set_ylabel("mini-batch cross-entropy (smoothed)")
    ax.set_title("Hogwild: the same number of updates, shared by 1 or more processes")
    ax.legend(fontsize=8)
    add_stamp(fig, stamp_text)
    return fig


# --------------------------------------------------------------------------------------------
# Small demonstrations for the chapter on processes and shared memory
# --------------------------------------------------------------------------------------------


def fill_slot(index: int, shared: torch.Tensor) -> None:
    """Write `index + 1` into slot `index` of a tensor that the parent shares with us."""
    shared[index] = index + 1


def run_processes(procs: list[Any], timeout: float) -> list[int]:
    """Start every process, wait for all of them (at most `timeout` s in all), return their exit codes.

    Raises `LaunchTimeout` naming the processes still running after `timeout`; whatever happens,
    none of them is left running.
    """
    try:
        for p in procs:
            p.start()
        deadline = time.monotonic() + timeout
        for p in procs:
            p.join(max(0.0, deadline - time.monotonic()))
        if any(p.is_alive() for p in procs):
            raise LaunchTimeout(timeout, [i for i, p in enumerate(procs) if p.is_alive()])
        return [p.exitcode for p in procs]
    finally:
        stop_processes(procs)
        for p in procs:
            p.close()


def _run_all(target: Any, args_list: list[tuple[Any, ...]], timeout: float) -> list[int]:
    """Start one process per argument tuple, wait for all (with a timeout), return their exit codes."""
    ctx = process_context()
    return run_processes([ctx.Process(target=target, args=args, daemon=True) for args in args_list], timeout)


def shared_memory_demo(processes: int = 2, timeout: float = 60.0) -> list[float]:
    """Each of `processes` children writes into its own slot of one shared tensor; return what the parent sees."""
    shared = torch.zeros(processes).share_memory_()
    codes = _run_all(fill_slot, [(i, shared) for i in range(processes)], timeout)
    if any(codes):
        raise WorkerFailed(codes.index(next(c for c in codes if c)), f"exit codes {codes}")
    return shared.tolist()


def _add_one_on_gpu(shared: torch.Tensor, done: Any) -> None:
    """Child side of CUDA sharing: the tensor arrives as a handle to the parent's GPU memory."""
    shared.add_(1)
    torch.cuda.synchronize()
    del shared  # release the handle quickly: the parent must keep the memory alive until we do
    done.set()


def share_cuda_tensor_demo(timeout: float = 120.0) -> list[float]:
    """Pass a CUDA tensor to a child (spawn-like start), let it add 1 in place, return what the parent sees.

    Needs a CUDA GPU. The producer (here the parent) keeps `t` alive until the child is done.
    """
    if not torch.cuda.is_available():
        raise RuntimeError("share_cuda_tensor_demo needs a CUDA GPU")
    ctx = process_context()
    t = torch.zeros(3, device="cuda")
    done = ctx.Event()
    codes = _run_all(_add_one_on_gpu, [(t, done)], timeout)
    if codes != [0] or not done.is_set():
        raise WorkerFailed(0, f"the child exited with {codes}")
    return t.cpu().tolist()


def _cuda_in_forked_child(conn: Any) -> None:
    try:
        torch.zeros(1, device="cuda")
        conn.send("no error")
    except Exception as exc:  # the expected outcome
        conn.send(f"{type(exc).__name__}: {exc}")
    finally:
        conn.close()


def fork_after_cuda_error(timeout: float = 60.0) -> str:
    """Initialise CUDA here, then use CUDA in a child started with `fork`; return the child's error.

    Needs a CUDA GPU. The answer is PyTorch's "Cannot re-initialize CUDA in forked subprocess".
    """
    import multiprocessing

    if not torch.cuda.is_available():
        raise RuntimeError("fork_after_cuda_error needs a CUDA GPU")
    torch.zeros(1, device="cuda")  # CUDA is now initialised in this process
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_cuda_in_forked_child, args=(send,), daemon=True)
    p.start()
    send.close()
    try:
        if not receive.poll(timeout):
            raise LaunchTimeout(timeout, [0])
        return receive.recv()
    finally:
        stop_processes([p])
        receive.close()


def add_one(t: torch.Tensor) -> None:
    """The child's work in `add_one_in_child`: add 1 to `t` in place."""
    t += 1


@checks(library=one_of("torch", "stdlib"))
def add_one_in_child(t: torch.Tensor, library: str = "torch", timeout: float = 60.0) -> None:
    """Pass `t` to a child process started through `torch.multiprocessing` or the standard library's
    `multiprocessing`; the child adds 1 in place. Afterwards, look at `t` and `t.is_shared()`."""
    import multiprocessing

    import torch.multiprocessing as tmp

    module = tmp if library == "torch" else multiprocessing
    method = "forkserver" if "forkserver" in module.get_all_start_methods() else "spawn"
    p = module.get_context(method).Process(target=add_one, args=(t,), daemon=True)
    [code] = run_processes([p], timeout)  # start it, wait at most `timeout` s; it never outlives this call
    if code != 0:
        raise WorkerFailed(0, f"the child {describe_exit(code)}")
