"""DistributedDataParallel from a notebook, and from a script with `torchrun`.

`launch(worker, world_size)` starts one process per rank, runs `worker(rank, world_size, *args)`
in each with a process group already set up (gloo on the CPU, NCCL when every rank has a GPU),
and returns what each rank returned, as plain Python values. It is built to be safe to call from
a notebook cell again and again:

* **Importable workers.** A new process started with `spawn` or `forkserver` finds the worker by
  importing its module, so a function defined in a notebook cell (module `__main__`) cannot be
  found there. The workers the course uses live in this module; `launch` refuses a notebook
  function with a message that says so, instead of the child's cryptic
  "Can't get attribute 'worker' on <module '__main__'>".
* **Loopback only, no port race.** The parent binds a socket to 127.0.0.1 port 0 (the kernel picks
  a free port) and hands that very socket to a `TCPStore` server (`master_listen_fd`), so nothing
  listens on other interfaces and no other program can grab the port between "found free" and
  "used". Gloo's own connections are kept on the loopback interface too (`GLOO_SOCKET_IFNAME`).
* **A timeout on everything.** The parent waits at most `timeout` seconds; a hung rank is killed
  and `LaunchTimeout` names the ranks that had not finished.
* **Clear errors.** A rank that raises sends its traceback to the parent, which stops the other
  ranks and raises `WorkerFailed` naming the rank. A rank that dies without a word (killed,
  crashed) is reported with its exit code or signal.
* **Nothing left behind.** Every rank process is joined (terminated, then killed, if needed) in a
  `finally`, the store and socket are closed, and results travel as pickled plain values, never
  tensors: a tensor sent through a queue is backed by shared memory that the receiver maps only
  after the sender may have exited (`FileNotFoundError`), and it can leave shared memory behind.
* **A clean end.** A rank that has finished (`barrier()` passed, `destroy_process_group()`
  called, result sent) flushes stdout and stderr and ends with `os._exit(0)`. Once
  DDP has used a process group, gloo's threads outlive `destroy_process_group()`, and a normal
  interpreter exit can race with them and abort the process (SIGABRT); `os._exit` ends the process
  and its threads at once, without that teardown and without running `atexit` handlers. The
  torchrun script, `TRAINING_SCRIPT_PATH`, ends the same way.
"""

from __future__ import annotations

import datetime
import gc
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from .validation import whole_number

#: Seconds a launch may take before every rank is killed (a hung rank must not hang a notebook).
DEFAULT_TIMEOUT = 120.0


class WorkerFailed(RuntimeError):
    """A rank raised an exception or died; `rank` says which, `details` holds its traceback."""

    def __init__(self, rank: int, details: str) -> None:
        self.rank = rank
        self.details = details
        last = details.strip().splitlines()[-1] if details.strip() else "no details"
        super().__init__(f"rank {rank} failed: {last}\n--- traceback from rank {rank} ---\n{details.rstrip()}")


class LaunchTimeout(TimeoutError):
    """The launch did not finish in time; every rank was killed."""

    def __init__(self, seconds: float, unfinished: Sequence[int]) -> None:
        self.unfinished = list(unfinished)
        super().__init__(
            f"the launch did not finish within {seconds:g} s; ranks {self.unfinished} had not finished "
            "and were killed (a rank waiting for a peer that never arrives hangs until this timeout)"
        )


# --------------------------------------------------------------------------------------------
# Plain values only
# --------------------------------------------------------------------------------------------


def to_plain(value: Any) -> Any:
    """Turn tensors (also inside lists, tuples and dicts) into nested Python lists and numbers.

    What a rank returns crosses to the parent through a pipe; plain values are copied by value and
    cannot dangle, unlike tensors, which travel as handles to shared memory.
    """
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().tolist()
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_plain(v) for v in value)
    return value


# --------------------------------------------------------------------------------------------
# Ports and sockets, loopback only
# --------------------------------------------------------------------------------------------


def loopback_listener() -> socket.socket:
    """A TCP socket bound to 127.0.0.1 on a port the kernel chose as free, already listening."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


def free_loopback_port() -> int:
    """A port that was free on 127.0.0.1 a moment ago (for tools that need a number, like torchrun).

    `launch` does better: it keeps the socket open and lets the store listen on it, so the port
    cannot be taken in between.
    """
    with loopback_listener() as sock:
        return sock.getsockname()[1]


def loopback_interface() -> str:
    """The name of the loopback network interface ("lo" on Linux, "lo0" on macOS)."""
    try:
        names = [name for _, name in socket.if_nameindex()]
    except (OSError, AttributeError):
        names = []
    for name in names:
        if name.startswith("lo"):
            return name
    return "lo0" if sys.platform == "darwin" else "lo"


# --------------------------------------------------------------------------------------------
# The launcher
# --------------------------------------------------------------------------------------------


def _check_importable(worker: Callable[..., Any]) -> None:
    module = getattr(worker, "__module__", None)
    qualname = getattr(worker, "__qualname__", "")
    if not callable(worker):
        raise TypeError(f"the worker must be a function, not {type(worker).__name__}")
    if module in (None, "__main__") or "<locals>" in qualname or "<lambda>" in qualname:
        raise TypeError(
            f"the worker {qualname or worker!r} is defined in the notebook (module {module!r}); a process "
            "started with 'spawn' or 'forkserver' imports the worker's module and cannot see notebook "
            "code. Put the function in a .py file (a module) and import it, as helpers.distributed does."
        )


def default_backend(world_size: int) -> str:
    """NCCL when every rank can have its own CUDA GPU, gloo otherwise (CPU tensors)."""
    if torch.cuda.is_available() and torch.cuda.device_count() >= world_size and torch.distributed.is_nccl_available():
        return "nccl"
    return "gloo"


def process_context() -> Any:
    """Processes are started with `forkserver` where it exists (Linux, macOS), else `spawn`.

    Both start clean children (safe after CUDA has been initialised, unlike `fork`). `forkserver`
    forks each rank from a small server process that has already imported torch and this module,
    so a launch costs a fraction of a second instead of one `import torch` (≈ 2 s) per rank.
    `torch._dynamo` is preloaded too: `DistributedDataParallel(...)` imports it on first use, which
    would otherwise cost every rank of every launch several seconds. The server starts on the first
    launch (paying those imports once), stays idle between launches, and ends with this process.
    """
    import torch.multiprocessing as mp

    if "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(
            ["torch", "torch.distributed", "torch._dynamo", "helpers.distributed", "helpers.hogwild"]
        )
        return ctx
    return mp.get_context("spawn")


def _rank_main(
    worker: Callable[..., Any],
    rank: int,
    world_size: int,
    port: int,
    backend: str,
    args: tuple[Any, ...],
    conn: Any,
    timeout: float,
    threads: int,
) -> None:
    """Runs in each rank process: join the group, run the worker, leave in the right order, report."""
    import torch.distributed as dist

    try:
        torch.set_num_threads(threads)
        os.environ.setdefault("GLOO_SOCKET_IFNAME", loopback_interface())
        if backend == "nccl":
            os.environ.setdefault("NCCL_SOCKET_IFNAME", loopback_interface())
            torch.cuda.set_device(rank)
        store = dist.TCPStore("127.0.0.1", port, None, False, datetime.timedelta(seconds=timeout))
        dist.init_process_group(
            backend, store=store, rank=rank, world_size=world_size, timeout=datetime.timedelta(seconds=timeout)
        )
        result = to_plain(worker(rank, world_size, *args))
        gc.collect()
        dist.barrier()  # nobody closes sockets while a peer still needs them
        dist.destroy_process_group()
        del store
        conn.send(("ok", rank, result))
        conn.close()
    except BaseException:  # report everything, KeyboardInterrupt included, then die quickly
        try:
            conn.send(("error", rank, traceback.format_exc()))
            conn.close()
        finally:
            # The group may be half-used and peers blocked on us: skip interpreter teardown
            # (which would try to join gloo threads waiting for peers) and let the parent
            # stop everyone.
            os._exit(1)
    # End at once, without the interpreter's exit-time teardown (see "A clean end" in the module docstring).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@dataclass
class LaunchResult:
    """What `launch` returns: each rank's value (index = rank) and how long the launch took."""

    results: list[Any]
    seconds: float
    world_size: int
    backend: str


def describe_exit(code: int | None) -> str:
    """How a process ended, for an error message: 'exited with code 1', 'was killed by signal SIGKILL'."""
    if code is None:
        return "is still running"
    if code < 0:
        try:
            return f"was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def stop_processes(processes: list[Any]) -> None:
    """Terminate, then kill, then join every process that is still alive."""
    for p in processes:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + 3.0
    for p in processes:
        p.join(max(0.0, deadline - time.monotonic()))
    for p in processes:
        if p.is_alive():
            p.kill()
            p.join(5.0)


def launch(
    worker: Callable[..., Any],
    world_size: int = 2,
    args: tuple[Any, ...] = (),
    *,
    backend: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    threads_per_rank: int | None = None,
) -> LaunchResult:
    """Run `worker(rank, world_size, *args)` in `world_size` processes joined in one process group.

    Returns a `LaunchResult` whose `results[r]` is what rank `r` returned (tensors turned into
    lists). Raises `WorkerFailed` naming the rank when a rank raises or dies, and `LaunchTimeout`
    after `timeout` seconds. No rank process survives the call, whatever happens.

    `threads_per_rank` (default: the usable CPUs shared out equally) keeps ranks from fighting
    over cores.
    """
    from multiprocessing.connection import wait

    import torch.distributed as dist

    if isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1:
        raise ValueError(f"world_size must be a whole number ≥ 1, not {world_size!r}")
    if not (isinstance(timeout, (int, float)) and timeout > 0 and math.isfinite(timeout)):
        raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
    _check_importable(worker)
    backend = backend or default_backend(world_size)
    if backend not in ("gloo", "nccl"):
        raise ValueError(f"backend must be 'gloo' or 'nccl', not {backend!r}")
    if backend == "nccl" and (not torch.cuda.is_available() or torch.cuda.device_count() < world_size):
        raise RuntimeError(f"the NCCL backend needs one CUDA GPU per rank ({world_size}); use backend='gloo'")
    if threads_per_rank is None:
        from .environment import usable_cpu_count

        threads_per_rank = max(1, usable_cpu_count() // world_size)

    ctx = process_context()
    start = time.perf_counter()
    listener = loopback_listener()
    port = listener.getsockname()[1]
    store = dist.TCPStore(
        "127.0.0.1",
        port,
        None,
        True,
        datetime.timedelta(seconds=timeout),
        wait_for_workers=False,
        master_listen_fd=os.dup(listener.fileno()),
    )
    processes, pipes = [], []
    try:
        for rank in range(world_size):
            receive, send = ctx.Pipe(duplex=False)
            p = ctx.Process(
                target=_rank_main,
                name=f"rank-{rank}",
                daemon=True,
                args=(worker, rank, world_size, port, backend, args, send, timeout, threads_per_rank),
            )
            p.start()
            send.close()  # the child holds the only sending end: EOF tells us it is gone
            processes.append(p)
            pipes.append(receive)

        results: dict[int, Any] = {}
        waiting = {pipes[r]: r for r in range(world_size)}
        deadline = start + timeout
        while waiting:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise LaunchTimeout(timeout, sorted(waiting.values()))
            for conn in wait(list(waiting), timeout=remaining):
                rank = waiting.pop(conn)
                try:
                    kind, _, payload = conn.recv()
                except EOFError:
                    processes[rank].join(2.0)
                    raise WorkerFailed(
                        rank, f"the process {describe_exit(processes[rank].exitcode)} before reporting a result"
                    ) from None
                if kind == "error":
                    raise WorkerFailed(rank, payload)
                results[rank] = payload
        # Every rank reported; each must also exit cleanly (a crash at exit is a failure too).
        for rank, p in enumerate(processes):
            p.join(max(0.1, deadline - time.perf_counter()))
            if p.is_alive():
                raise LaunchTimeout(timeout, [r for r, q in enumerate(processes) if q.is_alive()])
            if p.exitcode != 0:
                raise WorkerFailed(rank, f"the process finished its work but {describe_exit(p.exitcode)} at exit")
        return LaunchResult([results[r] for r in range(world_size)], time.perf_counter() - start, world_size, backend)
    finally:
        stop_processes(processes)
        for conn in pipes:
            conn.close()
        for p in processes:
            p.close()
        del store
        listener.close()


# --------------------------------------------------------------------------------------------
# The training the chapter runs: same data, same model, one process or several
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainingSetup:
    """Everything that defines a training run, so every rank (and the reference) builds the same."""

    samples: int = 256
    features: int = 16
    hidden: int = 32
    global_batch: int = 32
    steps: int = 8
    lr: float = 0.05
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("samples", "features", "hidden", "global_batch", "steps"):
            whole_number(getattr(self, name), name)


def make_model(setup: TrainingSetup) -> torch.nn.Module:
    """The small MLP every run trains, initialised from `setup.seed`."""
    torch.manual_seed(setup.seed)
    return torch.nn.Sequential(
        torch.nn.Linear(setup.features, setup.hidden),
        torch.nn.Tanh(),
        torch.nn.Linear(setup.hidden, setup.hidden),
        torch.nn.Tanh(),
        torch.nn.Linear(setup.hidden, 1),
    )


def make_dataset(setup: TrainingSetup) -> torch.utils.data.TensorDataset:
    """A synthetic regression problem, the same on every rank (generated from the seed)."""
    g = torch.Generator().manual_seed(setup.seed + 1)
    x = torch.randn(setup.samples, setup.features, generator=g)
    w = torch.randn(setup.features, 1, generator=g)
    y = torch.sin(x @ w) + 0.1 * torch.randn(setup.samples, 1, generator=g)
    return torch.utils.data.TensorDataset(x, y)


def rank_batches(setup: TrainingSetup, world_size: int, rank: int) -> list[list[int]]:
    """The sample indices rank `rank` uses at each step: a `DistributedSampler` shard, cut in batches.

    `DistributedSampler` (without shuffling) gives rank r the samples r, r + W, r + 2W, ... so the
    ranks' shards do not overlap; each step takes the next `global_batch / W` of them.
    """
    from torch.utils.data import DistributedSampler

    if setup.global_batch % world_size:
        raise ValueError(f"the global batch {setup.global_batch} must split evenly over {world_size} ranks")
    local = setup.global_batch // world_size
    sampler = DistributedSampler(
        range(setup.samples), num_replicas=world_size, rank=rank, shuffle=False, drop_last=True
    )
    shard = list(sampler)
    per_epoch = len(shard) // local
    if per_epoch == 0:
        raise ValueError("too few samples for one batch per rank")
    return [shard[(s % per_epoch) * local : (s % per_epoch + 1) * local] for s in range(setup.steps)]


def flat_parameters(model: torch.nn.Module) -> list[float]:
    """All parameters of `model` in one flat list of floats (plain values, safe to send anywhere)."""
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).tolist()


def train_single_process(setup: TrainingSetup, world_size_to_mimic: int = 1) -> dict[str, Any]:
    """The reference: one process, and at each step the union of what the ranks would use.

    The loss is the mean over the global batch, which is what DDP's averaged gradients amount to
    when every rank holds an equal share.
    """
    data = make_dataset(setup)
    model = make_model(setup)
    opt = torch.optim.SGD(model.parameters(), lr=setup.lr)
    shards = [rank_batches(setup, world_size_to_mimic, r) for r in range(world_size_to_mimic)]
    losses = []
    for step in range(setup.steps):
        idx = [i for shard in shards for i in shard[step]]
        x, y = data[idx]
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"params": flat_parameters(model), "losses": losses}


def ddp_train_worker(rank: int, world_size: int, setup: TrainingSetup) -> dict[str, Any]:
    """One rank of DDP training: its `DistributedSampler` shard, DDP's all-reduced gradients.

    Returns plain values: the final parameters, the loss this rank saw at each step (on its own
    shard) and the global-batch loss (the all-reduced mean), so the notebook can compare.
    """
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    device = torch.device("cuda", rank) if dist.get_backend() == "nccl" else torch.device("cpu")
    data = make_dataset(setup)
    model = DDP(make_model(setup).to(device), device_ids=[rank] if device.type == "cuda" else None)
    opt = torch.optim.SGD(model.parameters(), lr=setup.lr)
    local_losses, global_losses = [], []
    for idx in rank_batches(setup, world_size, rank):
        x, y = (t.to(device) for t in data[idx])
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()  # DDP all-reduces (averages) the gradients here, bucket by bucket
        opt.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        local_losses.append(loss.item())
        global_losses.append(mean.item() / world_size)
    result = {
        "rank": rank,
        "params": flat_parameters(model.module),
        "local_losses": local_losses,
        "losses": global_losses,
    }
    del model, opt, loss, mean, x, y  # release the Reducer (and the group it holds) now
    return result


def hello_worker(rank: int, world_size: int) -> dict[str, Any]:
    """The smallest useful worker: every rank contributes `rank + 1` to an all-reduce (sum)."""
    import torch.distributed as dist

    device = torch.device("cuda", rank) if dist.get_backend() == "nccl" else torch.device("cpu")
    t = torch.tensor([float(rank + 1)], device=device)  # NCCL reduces GPU tensors, gloo CPU tensors
    dist.all_reduce(t)
    return {"rank": rank, "world_size": world_size, "sum": t.item(), "pid": os.getpid(), "backend": dist.get_backend()}


def failing_worker(rank: int, world_size: int, bad_rank: int = 1) -> dict[str, Any]:
    """Raises on `bad_rank` on purpose (the others wait in a collective that never completes)."""
    import torch.distributed as dist

    if rank == bad_rank:
        raise ValueError(f"rank {rank} was told to fail (a bug in the training code, say)")
    dist.barrier()  # waits for the failed rank: only the parent can end this
    return {"rank": rank}


def sleeping_worker(rank: int, world_size: int, seconds: float = 60.0) -> dict[str, Any]:
    """Never finishes in time (stands for a rank stuck in a collective), to show the timeout."""
    time.sleep(seconds)
    return {"rank": rank}


# --------------------------------------------------------------------------------------------
# Throughput: a compute-bound workload, 1 vs 2 ranks on the same global batch
# --------------------------------------------------------------------------------------------


def throughput_worker(
    rank: int,
    world_size: int,
    width: int,
    depth: int,
    global_batch: int,
    steps: int,
    warmup: int = 1,
    communicate: bool = True,
) -> dict[str, Any]:
    """Train a wide MLP with DDP on random data and time `steps` steps after `warmup` steps.

    Each rank processes `global_batch / world_size` samples per step, so 1 and 2 ranks do the same
    work per step. With `communicate=False` the ranks train plain, unwrapped models (no all-reduce):
    a control that shows how fast the same computation runs side by side with no communication at
    all. Afterwards the rank times an all-reduce of all the parameters on its own.
    """
    import statistics

    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    if global_batch % world_size:
        raise ValueError(f"the global batch {global_batch} must split evenly over {world_size} ranks")
    torch.manual_seed(0)
    layers: list[torch.nn.Module] = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    net = torch.nn.Sequential(*layers, torch.nn.Linear(width, 10))
    model = DDP(net) if communicate else net
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(global_batch // world_size, width, generator=g)
    y = torch.randint(0, 10, (global_batch // world_size,), generator=g)

    def step() -> None:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    for _ in range(warmup):
        step()
    dist.barrier()
    step_seconds = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()  # with DDP, the all-reduce inside backward() keeps the ranks in step
        step_seconds.append(time.perf_counter() - t0)
    dist.barrier()
    flat = torch.cat([p.detach().reshape(-1) for p in net.parameters()])
    t0 = time.perf_counter()
    for _ in range(3):
        dist.all_reduce(flat)
    allreduce = (time.perf_counter() - t0) / 3
    return {
        "rank": rank,
        "step_seconds": step_seconds,
        "median_step": statistics.median(step_seconds),
        "allreduce_seconds": allreduce,
        "samples": steps * global_batch,
        "global_batch": global_batch,
        "parameters": flat.numel(),
        "threads": torch.get_num_threads(),
    }


@dataclass(frozen=True)
class ScalingPoint:
    """One bar of the scaling plot."""

    label: str
    ranks: int
    threads_per_rank: int
    samples_per_second: float
    step_seconds: float = 0.0
    allreduce_seconds: float = 0.0
    communicates: bool = True


def measure_scaling(
    width: int = 512,
    depth: int = 3,
    global_batch: int = 512,
    steps: int = 6,
    timeout: float = DEFAULT_TIMEOUT,
    threads_baseline: bool = True,
    rounds: int = 2,
    control: bool = True,
) -> list[ScalingPoint]:
    """Throughput with 1 rank and with 2 ranks (one thread each) on the same global batch.

    Each configuration is launched `rounds` times, interleaved with the others; a launch's rate is
    the global batch over the median step time of its slowest rank, and each configuration keeps
    its best round. Medians and best-of-rounds keep a busy machine's hiccups out of the comparison;
    process start-up is not counted. One thread per rank makes "ranks" play the role GPUs play: one
    unit of compute each. Extra points: with `control`, 2 ranks that never communicate (the
    ceiling for 2 ranks on this machine); with `threads_baseline`, 1 rank with 2 threads (on a CPU
    the honest alternative to a second process; on GPUs there is no such alternative).
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be a whole number ≥ 1, not {rounds!r}")
    configs = [(1, 1, True), (2, 1, True)]
    configs += [(2, 1, False)] if control else []
    configs += [(1, 2, True)] if threads_baseline else []
    best: dict[tuple[int, int, bool], ScalingPoint] = {}
    for _ in range(rounds):
        for ranks, threads, talk in configs:
            out = launch(
                throughput_worker,
                ranks,
                (width, depth, global_batch, steps, 1, talk),
                backend="gloo",
                timeout=timeout,
                threads_per_rank=threads,
            )
            slowest = max(r["median_step"] for r in out.results)
            label = f"{ranks} rank{'s' if ranks > 1 else ''} × {threads} thread{'s' if threads > 1 else ''}"
            if not talk:
                label += "\n(no all-reduce)"
            point = ScalingPoint(
                label,
                ranks,
                threads,
                global_batch / slowest,
                slowest,
                max(r["allreduce_seconds"] for r in out.results),
                talk,
            )
            key = (ranks, threads, talk)
            if key not in best or point.samples_per_second > best[key].samples_per_second:
                best[key] = point
    return [best[c] for c in configs]


def plot_scaling(points: Sequence[ScalingPoint], stamp_text: str) -> Any:
    """Bar chart of samples per second for each configuration, with the speed-up over the first."""
    from .plots import add_stamp, new_figure

    fig, ax = new_figure(7.5, 3.8)
    base = points[0].samples_per_second
    bars = ax.bar(
        [p.label for p in points],
        [p.samples_per_second for p in points],
        color=["0.6", "tab:blue", "tab:cyan", "tab:orange"][: len(points)],
    )
    for bar, p in zip(bars, points, strict=True):
        ax.text(
            bar.get_x() + bar.get_width() / 2,
            bar.get_height(),
            f"{p.samples_per_second / base:.2f}×",
            ha="center",
            va="bottom",
            fontsize=9,
        )
    ax.set_ylabel("training samples per second")
    ax.tick_params(axis="x", labelsize=8)
    ax.set_title("DDP with gloo on this CPU: same global batch, 1 vs 2 ranks")
    add_stamp(fig, stamp_text)
    return fig


# --------------------------------------------------------------------------------------------
# torchrun: the same training as a script
# --------------------------------------------------------------------------------------------

#: The DDP training as a script for `torchrun` (it reads RANK, WORLD_SIZE, ... from the environment
#: torchrun sets). It depends on torch only and writes rank 0's result as JSON.
TRAINING_SCRIPT_PATH = Path(__file__).with_name("ddp_train_script.py")


@dataclass
class TorchrunResult:
    """What a torchrun launch printed and produced."""

    command: list[str]
    returncode: int
    seconds: float
    output: str
    result: dict[str, Any] | None


def torchrun_command(script: str | Path, nproc: int, *extra: str, log_dir: str | Path | None = None) -> list[str]:
    """The command line: `torchrun --standalone --nproc_per_node=N [--log-dir D] script ...`.

    Uses the `torchrun` next to this Python when it exists, else `python -m torch.distributed.run`
    (the same program).
    """
    torchrun = Path(sys.executable).with_name("torchrun")
    head = [str(torchrun)] if torchrun.is_file() else [sys.executable, "-m", "torch.distributed.run"]
    cmd = head + ["--standalone", f"--nproc_per_node={nproc}"]
    if log_dir is not None:
        cmd.append(f"--log-dir={log_dir}")
    return cmd + [str(script), *extra]


def run_torchrun(
    nproc: int = 2, timeout: float = DEFAULT_TIMEOUT, script: str | Path = TRAINING_SCRIPT_PATH
) -> TorchrunResult:
    """Copy `script` to a temporary folder and run it there with torchrun; clean everything up.

    torchrun keeps per-rank logs in a folder it creates as /tmp/torchelastic_* and never removes;
    passing `--log-dir` inside our temporary folder makes them go away with it. The launch runs in
    its own process session so that on timeout the whole tree (torchrun and its ranks) is killed.
    """
    if isinstance(nproc, bool) or not isinstance(nproc, int) or nproc < 1:
        raise ValueError(f"nproc must be a whole number ≥ 1, not {nproc!r}")
    import json

    with tempfile.TemporaryDirectory(prefix="course-torchrun-") as tmp:
        # Run a copy: Python puts a script's folder first on sys.path, and helpers/ should not be there.
        copied = Path(tmp) / "train_ddp.py"
        shutil.copyfile(script, copied)
        out = Path(tmp) / "result.json"
        cmd = torchrun_command(copied, nproc, str(out), log_dir=Path(tmp) / "logs")
        env = dict(
            os.environ,
            OMP_NUM_THREADS="1",
            GLOO_SOCKET_IFNAME=os.environ.get("GLOO_SOCKET_IFNAME", loopback_interface()),
        )
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
        )
        try:
            output, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
            raise LaunchTimeout(timeout, list(range(nproc))) from None
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        seconds = time.perf_counter() - start
        result = json.loads(out.read_text()) if out.is_file() else None
        shutil.rmtree(Path(tmp) / "logs", ignore_errors=True)
    return TorchrunResult(cmd, proc.returncode, seconds, output, result)


def leftovers() -> dict[str, list[str]]:
    """What a launch could leave behind: torchelastic folders in the temp dir and torch files in /dev/shm."""
    tmp = Path(tempfile.gettempdir())
    shm = Path("/dev/shm")
    return {
        "torchelastic": sorted(p.name for p in tmp.glob("torchelastic_*")),
        "shm": sorted(p.name for p in shm.glob("torch_*")) if shm.is_dir() else [],
    }
