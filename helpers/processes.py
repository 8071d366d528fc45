"""Processes a notebook starts: ranks and torchrun, a cell's own children, fresh interpreters, scratch folders.

Each launcher starts the workers a chapter writes (`%%writefile`), waits with a time limit, reports
a failure by rank, and cleans up. CONTRIBUTING.md ("Launchers") explains the choices; in short:

* **`launch(worker, world_size, args)`** starts one process per rank (forkserver where it exists,
  else spawn) and returns what each rank returned, as plain Python values. By default it sets up
  the process group itself (gloo on the CPU, NCCL when every rank has a GPU). With
  `init_group=False` it only provides what `torchrun` provides (`RANK`, `WORLD_SIZE`,
  `LOCAL_RANK`, `MASTER_ADDR`, `MASTER_PORT` in the environment), so the worker calls
  `dist.init_process_group(backend)` itself, exactly as under torchrun.
* **Importable workers.** A process started with spawn or forkserver imports the worker's module;
  a function defined in a notebook cell (module `__main__`) is refused up front with a message
  that says so.
* **Loopback only, no port race.** The parent binds 127.0.0.1 port 0 and hands that very socket to
  a `TCPStore` server (`master_listen_fd`); the ranks connect to it as clients.
* **A time limit on everything**, `WorkerFailed` naming the rank that raised or died, and no rank
  process, store or socket left behind (`finally`). A rank's result travels as plain values.
* **`run_commands(commands, timeout)`** runs shell commands such as `torchrun ...` (several at
  once for a two-"node" run) with a time limit. torch elastic starts every rank in a session of
  its own, so killing torchrun's process group misses them; the launcher therefore collects every
  descendant from /proc and kills each one's process group, on a timeout, on an error and on a
  KeyboardInterrupt. Output goes to files, not pipes, so a surviving rank cannot make it wait.
  Temporary files (`TMPDIR`, torchrun's logs) go into a folder that is removed afterwards.
* **NCCL trouble** (two PCIe GPUs without peer-to-peer, a small `/dev/shm`) is explained:
  `NCCL_ADVICE` is added to the error whenever a failure mentions NCCL.
* **`time_limit(processes, seconds)`**, a `with` block around a chapter 09 cell's own
  `start()`/`join()` code: a watchdog terminates every process still running after `seconds`, and
  leaving the block, however it is left, stops every process the block started.
* **`run_fresh_python(code, env)`** runs a snippet in a new interpreter, for settings that only
  count at start-up (`CUDA_VISIBLE_DEVICES`, the allocator's configuration).
* **`scratch_folder()`**, a per-kernel folder for the files a chapter writes (workers, answers),
  first on `sys.path` and removed when the kernel exits.
"""

from __future__ import annotations

import atexit
import contextlib
import datetime
import gc
import math
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Seconds a launch may take before every rank is killed (a hung rank must not hang a notebook).
DEFAULT_TIMEOUT = 120.0

#: What to try when NCCL fails, printed with any launch failure that mentions NCCL.
NCCL_ADVICE = """\
NCCL failed. On two PCIe GPUs without NVLink (Kaggle's T4 ×2) try, one at a time, in the
environment of the launch (os.environ[...] = ... before launching, or VAR=value torchrun ...):
  NCCL_DEBUG=WARN        print NCCL's own reason (INFO prints every transport it picks)
  NCCL_P2P_DISABLE=1     do not copy GPU to GPU directly (peer-to-peer); go through host memory
  NCCL_SHM_DISABLE=1     do not use shared memory (/dev/shm) between the processes
and check the size of /dev/shm (`df -h /dev/shm`): containers often give it 64 MB, too little
for NCCL's buffers (docker run --shm-size=1g ...)."""


class WorkerFailed(RuntimeError):
    """A rank raised an exception or died; `rank` says which, `details` holds its traceback.

    `last_line` is the traceback's last line (the exception and its message), for a one-line report.
    """

    def __init__(self, rank: int, details: str) -> None:
        self.rank = rank
        self.details = details
        self.last_line = details.strip().splitlines()[-1] if details.strip() else "no details"
        message = f"rank {rank} failed: {self.last_line}\n--- traceback from rank {rank} ---\n{details.rstrip()}"
        if mentions_nccl(details):
            message += "\n\n" + NCCL_ADVICE
        super().__init__(message)


class LaunchTimeout(TimeoutError):
    """The launch did not finish in time; every rank was killed."""

    def __init__(self, seconds: float, unfinished: Sequence[int]) -> None:
        self.unfinished = list(unfinished)
        super().__init__(
            f"the launch did not finish within {seconds:g} s; ranks {self.unfinished} had not finished "
            "and were killed (a rank waiting for a peer that never arrives hangs until this timeout)"
        )


def mentions_nccl(text: str) -> bool:
    """Whether an error text comes from NCCL (then `NCCL_ADVICE` helps)."""
    return "nccl" in text.lower()


# --------------------------------------------------------------------------------------------
# Plain values only
# --------------------------------------------------------------------------------------------


def to_plain(value: Any) -> Any:
    """Turn tensors (also inside lists, tuples and dicts) into nested Python lists and numbers.

    What a rank returns crosses to the parent through a pipe; plain values are copied by value and
    cannot dangle, unlike tensors, which travel as handles to shared memory.
    """
    import torch

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
    """Refuse, before any rank starts, a worker that a process started with spawn or forkserver cannot import."""
    module = getattr(worker, "__module__", None)
    qualname = getattr(worker, "__qualname__", "")
    if not callable(worker):
        raise TypeError(f"the worker must be a function, not {type(worker).__name__}")
    if module in (None, "__main__") or "<locals>" in qualname or "<lambda>" in qualname:
        raise TypeError(
            f"the worker {qualname or worker!r} is defined in the notebook (module {module!r}); a process "
            "started with 'spawn' or 'forkserver' imports the worker's module and cannot see notebook "
            "code. Write the function into a file with %%writefile {WORK}/name.py, then `import name` "
            "and launch name.function."
        )


@contextlib.contextmanager
def one_rank_group() -> Iterator[bool]:
    """A gloo process group of one rank in this process, torn down afterwards; yields whether it made one.

    The exercise checkers first run a learner's distributed code here, where what it prints and
    raises shows in the notebook with its line numbers, before running it on two ranks. When the
    notebook already has a process group of its own, it is left alone and this yields False.
    """
    import torch.distributed as dist

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


def default_backend(world_size: int) -> str:
    """NCCL when every rank can have its own CUDA GPU, gloo otherwise (CPU tensors)."""
    import torch

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
        ctx.set_forkserver_preload(["torch", "torch.distributed", "torch._dynamo", "helpers.processes"])
        return ctx
    return mp.get_context("spawn")


def start_process_server() -> None:
    """Start the server that `launch` forks its ranks from now, and return without waiting for it.

    The server imports torch and Dynamo first (several seconds, once per kernel); started early, it
    does so while the cells before the first launch run, on another core where there is one. Where
    processes are spawned instead (Windows) there is no server, and this does nothing.
    """
    if process_context().get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


def rank_environment(rank: int, world_size: int, port: int) -> dict[str, str]:
    """The variables torchrun gives each rank, for a worker that calls `init_process_group()` itself.

    `TORCHELASTIC_USE_AGENT_STORE` tells `init_process_group` that the store already runs (in the
    launcher, as torchrun's agent runs it), so every rank connects to it as a client.
    """
    return {
        "RANK": str(rank),
        "LOCAL_RANK": str(rank),
        "WORLD_SIZE": str(world_size),
        "LOCAL_WORLD_SIZE": str(world_size),
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
        "TORCHELASTIC_USE_AGENT_STORE": "True",
        "GLOO_SOCKET_IFNAME": os.environ.get("GLOO_SOCKET_IFNAME", loopback_interface()),
        "NCCL_SOCKET_IFNAME": os.environ.get("NCCL_SOCKET_IFNAME", loopback_interface()),
    }


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
    init_group: bool = True,
    stderr_path: str | None = None,
) -> None:
    """Runs in each rank process: join the group (or let the worker do it), run the worker, report."""
    import torch
    import torch.distributed as dist

    try:
        write_stderr_to(stderr_path)
        torch.set_num_threads(threads)
        os.environ.update(rank_environment(rank, world_size, port))
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))
        store = None
        if init_group:
            if backend == "nccl":
                torch.cuda.set_device(rank)
            store = dist.TCPStore("127.0.0.1", port, None, False, datetime.timedelta(seconds=timeout))
            dist.init_process_group(
                backend, store=store, rank=rank, world_size=world_size, timeout=datetime.timedelta(seconds=timeout)
            )
        result = to_plain(worker(rank, world_size, *args))
        gc.collect()
        if dist.is_initialized():  # the launcher's group, or one the worker forgot to destroy
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
            # Peers may be blocked on us inside a collective: skip the interpreter's teardown (which
            # would wait for gloo's threads) and let the parent stop everyone.
            os._exit(1)
    # multiprocessing ends every child it starts with os._exit after the target returns; flush first.
    sys.stdout.flush()
    sys.stderr.flush()


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


def write_stderr_to(path: str | None) -> None:
    """In a child process: send its error output (file descriptor 2, C/C++ code's too) to the file `path`.

    A child that dies without reporting (`os._exit`, a crash, an abort in C++) leaves its cause on
    its error output; with it in a file, the parent can quote it (`died_before_reporting`).
    `faulthandler` writes the Python stack there too when a signal kills the child.
    """
    import faulthandler

    if path is None:
        return
    sys.stderr.flush()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(fd, 2)
    os.close(fd)
    faulthandler.enable()


@contextlib.contextmanager
def stderr_files(n: int) -> Iterator[list[str]]:
    """`n` file paths for children's error output (`write_stderr_to`); afterwards their text is echoed here and removed.

    Echoed to this process's stderr, so what the children wrote shows where this process's own
    error output does (a notebook cell, a terminal).
    """
    folder = tempfile.mkdtemp(prefix="course-stderr-")
    paths = [os.path.join(folder, f"stderr{i}.txt") for i in range(n)]
    try:
        yield paths
    finally:
        for path in paths:
            with contextlib.suppress(OSError):
                text = Path(path).read_text(errors="replace")
                if text:
                    sys.stderr.write(text)
        shutil.rmtree(folder, ignore_errors=True)


def died_before_reporting(who: str, code: int | None, stderr_path: str) -> str:
    """Why a child or rank gave no result: how it ended and the last lines of its error output (the cause)."""
    try:
        lines = Path(stderr_path).read_text(errors="replace").strip().splitlines()
    except OSError:
        lines = []
    said = f"{who} {describe_exit(code)} before reporting a result"
    if lines:
        return f"{said}; the last lines of its error output:\n" + "\n".join(lines[-10:])
    return (
        f"{said}, and wrote nothing to its error output (an error while it was starting, before it ran "
        "any of our code, goes to the terminal that runs Python or Jupyter)"
    )


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
    init_group: bool = True,
) -> LaunchResult:
    """Run `worker(rank, world_size, *args)` in `world_size` processes joined in one process group.

    Returns a `LaunchResult` whose `results[r]` is what rank `r` returned (tensors turned into
    lists). Raises `WorkerFailed` naming the rank when a rank raises or dies, and `LaunchTimeout`
    after `timeout` seconds. No rank process survives the call, whatever happens.

    With `init_group=False` the worker calls `dist.init_process_group(backend)` itself, reading
    `RANK`, `WORLD_SIZE`, `MASTER_ADDR` and `MASTER_PORT` from the environment as under torchrun
    (`backend` is then only what the result reports). `threads_per_rank` (default: the usable CPUs
    shared out equally) keeps ranks from fighting over cores.
    """
    from multiprocessing.connection import wait

    import torch
    import torch.distributed as dist

    _check_importable(worker)
    backend = backend or default_backend(world_size)
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
    echo_stderr = stderr_files(world_size)  # each rank's error output, quoted when it dies, echoed at the end
    stderr_paths = echo_stderr.__enter__()
    try:
        for rank in range(world_size):
            receive, send = ctx.Pipe(duplex=False)
            p = ctx.Process(
                target=_rank_main,
                name=f"rank-{rank}",
                daemon=True,
                args=(
                    worker,
                    rank,
                    world_size,
                    port,
                    backend,
                    args,
                    send,
                    timeout,
                    threads_per_rank,
                    init_group,
                    stderr_paths[rank],
                ),
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
                        rank, died_before_reporting("the process", processes[rank].exitcode, stderr_paths[rank])
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
        echo_stderr.__exit__(None, None, None)


# --------------------------------------------------------------------------------------------
# Commands such as torchrun: a time limit, every rank killed, nothing left behind
# --------------------------------------------------------------------------------------------


@dataclass
class CommandResult:
    """One finished command: what it printed, how it ended, and whether its job got done."""

    command: list[str]
    returncode: int
    output: str
    seconds: float
    done: bool
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        how = "done" if self.done else f"failed: it {describe_exit(self.returncode)}"
        extra = "".join(f"\nnote: {n}" for n in self.notes)
        return f"{how} in {self.seconds:.1f} s{extra}"


class CommandFailed(RuntimeError):
    """A command exited with an error; its output (the end of it) is in the message."""

    def __init__(self, result: CommandResult) -> None:
        self.result = result
        self.rank = failed_rank(result.output)
        tail = "\n".join(result.output.rstrip().splitlines()[-40:])
        who = f"rank {self.rank} failed first; " if self.rank is not None else ""
        message = (
            f"{who}{shlex.join(result.command)} {describe_exit(result.returncode)}; the end of its output:\n{tail}"
        )
        if mentions_nccl(result.output):
            message += "\n\n" + NCCL_ADVICE
        super().__init__(message)


def failed_rank(output: str) -> int | None:
    """The rank torchrun names as the root cause of a failure (its "Root Cause" block), if any."""
    import re

    cause = output.split("Root Cause", 1)
    found = re.search(r"^\s*rank\s*:\s*(\d+)", cause[1] if len(cause) > 1 else output, re.M)
    return int(found.group(1)) if found else None


def resolve_program(command: Sequence[str]) -> list[str]:
    """`torchrun` means this Python's torchrun (or `-m torch.distributed.run`), and `python` this Python."""
    command = [str(c) for c in command]
    if command and command[0] == "torchrun":
        torchrun = Path(sys.executable).with_name("torchrun")
        head = [str(torchrun)] if torchrun.is_file() else [sys.executable, "-m", "torch.distributed.run"]
        return head + command[1:]
    if command and command[0] in ("python", "python3"):
        return [sys.executable, *command[1:]]
    return command


def _process_table() -> dict[int, tuple[int, int, int]]:
    """pid -> (parent pid, process group, session) of every live process, read from /proc (Linux)."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] in ("Z", "X"):  # already dead
            continue
        table[int(entry.name)] = (int(fields[1]), int(fields[2]), int(fields[3]))
    return table


def descendants(pids: Sequence[int]) -> set[int]:
    """Every live process below `pids`, and every process in their sessions (empty without /proc).

    torch elastic starts each rank with a session of its own, so a rank is found as a child of
    torchrun, and whatever the rank started (data-loader workers) as a member of its session, even
    after torchrun is gone and the rank was handed to init.
    """
    if not Path("/proc/self/stat").is_file():
        return set()
    table = _process_table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    todo = list(pids)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    sessions = {table[p][2] for p in found | set(pids) if p in table}
    sessions.discard(os.getsid(0))  # never this process's own session
    found |= {pid for pid, (_, _, sid) in table.items() if sid in sessions}
    found.discard(os.getpid())
    return found


def kill_tree(pids: Sequence[int], known: set[int] | None = None) -> set[int]:
    """SIGKILL the processes `pids`, their process groups and all their descendants; return the pids hit.

    `known` adds pids seen earlier (ranks whose parent has already died and that init adopted).
    """
    targets = set(pids) | descendants(pids) | (known or set())
    sigkill = getattr(signal, "SIGKILL", signal.SIGTERM)  # Windows has no SIGKILL: TerminateProcess
    for pid in targets:
        for kill in (os.killpg, os.kill) if hasattr(os, "killpg") else (os.kill,):
            try:
                kill(pid, sigkill)
            except OSError:  # gone already (ProcessLookupError), or not ours
                pass
    return targets


def run_commands(
    commands: Sequence[Sequence[str]],
    timeout: float = DEFAULT_TIMEOUT,
    *,
    env: Mapping[str, str] | None = None,
    envs: Sequence[Mapping[str, str]] | None = None,
    done_files: Sequence[str | Path | None] | None = None,
    check: bool = True,
) -> list[CommandResult]:
    """Run `commands` side by side (e.g. one `torchrun` per "node"), wait at most `timeout` seconds.

    Each command gets its own session, `env` (plus its own `envs[i]`), a private `TMPDIR` and
    torchrun's `--log-dir` inside a temporary folder that is removed afterwards. On a timeout, an
    error or a KeyboardInterrupt every process of every command is killed (see `kill_tree`) before
    the call returns, and `LaunchTimeout` names the commands that had not finished.

    `done_files[i]`, when given, is the file command `i` writes when its work is done (the course's
    workers write it last, after every rank has finished). A command that wrote it during this run
    and then exited with an error counts as done, with a note saying how it ended: what failed came
    after the work (a rank that aborted while the interpreter shut down, a torchrun "node" that lost
    the rendezvous store when the node hosting it finished first; CONTRIBUTING, "Launchers"). The
    outcome is decided by exit codes and that file only, never by the command's output. With
    `check`, a command that failed raises `CommandFailed` (NCCL advice included when its output
    mentions NCCL).
    """
    envs = list(envs) if envs is not None else [{} for _ in commands]
    files = [None if f is None else Path(f) for f in done_files] if done_files is not None else [None] * len(commands)
    before = [_stamp(f) for f in files]  # a file left by an earlier run does not count

    tmp = Path(tempfile.mkdtemp(prefix="course-run-"))
    procs: list[subprocess.Popen] = []
    logs = []
    seen: set[int] = set()
    start = time.perf_counter()
    try:
        for i, command in enumerate(commands):
            cmd = resolve_program(command)
            if "torch.distributed.run" in " ".join(cmd[:3]) or Path(cmd[0]).name == "torchrun":
                cmd.insert(3 if cmd[1] == "-m" else 1, f"--log-dir={tmp / f'logs{i}'}")
            full_env = {**os.environ, **(env or {}), **envs[i], "TMPDIR": str(tmp), "PYTHONUNBUFFERED": "1"}
            full_env.setdefault("GLOO_SOCKET_IFNAME", loopback_interface())
            log = open(tmp / f"output{i}.txt", "w+b")  # noqa: SIM115 - closed in finally
            logs.append(log)
            procs.append(
                subprocess.Popen(cmd, env=full_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            )
        deadline = start + timeout
        while any(p.poll() is None for p in procs):
            seen |= descendants([p.pid for p in procs])  # remember the ranks while their parents live
            if time.perf_counter() > deadline:
                raise LaunchTimeout(timeout, [i for i, p in enumerate(procs) if p.poll() is None])
            time.sleep(0.1)
        seconds = time.perf_counter() - start
        results = []
        for i, (command, p, log) in enumerate(zip(commands, procs, logs, strict=True)):
            log.seek(0)
            output = log.read().decode(errors="replace")
            done = p.returncode == 0
            result = CommandResult([str(c) for c in command], p.returncode, output, seconds, done)
            wrote = files[i] is not None and _stamp(files[i]) not in (None, before[i])
            if not done and wrote:
                result.done = True
                result.notes.append(
                    f"it {describe_exit(p.returncode)} after writing its result ({files[i].name}): the work was "
                    "done, so the run counts"
                )
            results.append(result)
        if check:
            for result in results:
                if not result.done:
                    raise CommandFailed(result)
        return results
    finally:
        kill_tree([p.pid for p in procs], seen)  # whatever ended the wait; a no-op when all are gone
        for p in procs:
            try:
                p.wait(5.0)
            except subprocess.TimeoutExpired:
                pass
        for log in logs:
            log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _stamp(path: Path | None) -> int | None:
    """When `path` was last written (nanoseconds), or None when it does not exist."""
    try:
        return None if path is None else path.stat().st_mtime_ns
    except OSError:
        return None


def run_command(command: Sequence[str], timeout: float = DEFAULT_TIMEOUT, **kwargs: Any) -> CommandResult:
    """`run_commands` for one command (`done_file=` names the file it writes when done)."""
    done_file = kwargs.pop("done_file", None)
    return run_commands([command], timeout, done_files=[done_file], **kwargs)[0]


# --------------------------------------------------------------------------------------------
# A time limit for a cell's own processes (chapter 09)
# --------------------------------------------------------------------------------------------


def _started(p: Any) -> bool:
    """Whether `p` was started and not closed (`pid` is None before `start()`, and raises after `close()`)."""
    try:
        return p.pid is not None
    except ValueError:
        return False


def _running(p: Any) -> bool:
    """Whether `p` was started and has not ended, read from its sentinel without consuming it (thread-safe)."""
    from multiprocessing.connection import wait

    if not _started(p):
        return False
    try:
        return not wait([p.sentinel], 0)
    except (ValueError, OSError):
        return False


@contextlib.contextmanager
def _alarm_held() -> Iterator[None]:
    """Hold SIGALRM back (where it exists) while processes are being stopped, so a time limit cannot cut it short."""
    can = hasattr(signal, "pthread_sigmask") and hasattr(signal, "SIGALRM")
    if not can or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class time_limit:  # noqa: N801 - used like a function: `with time_limit(procs, 30):`
    """`with time_limit(processes, seconds):` around code that starts and joins `processes`.

    `processes` is the list the block fills (read again and again, so processes appended inside the
    block count). From `seconds` after the block began, a watchdog terminates every process that is
    running, started late ones included, which makes a waiting `p.join()` return. When the block ends, for any
    reason, every process it started is stopped and joined. If the watchdog stopped any,
    `LaunchTimeout` names them (by their index in `processes`), unless the block was interrupted.
    """

    def __init__(self, processes: list[Any], seconds: float) -> None:
        if not isinstance(processes, list):
            raise TypeError(f"processes must be a list of processes, not {type(processes).__name__}")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not (0 < seconds < math.inf):
            raise ValueError(f"seconds must be a positive number, not {seconds!r}")
        self.processes = processes
        self.seconds = float(seconds)
        #: Indices (in `processes`) of the processes the watchdog had to stop.
        self.stopped: list[int] = []
        self._done = threading.Event()
        self._watchdog: threading.Thread | None = None

    def _watch(self) -> None:
        """The watchdog: from the deadline on, stop every process that is (or gets) running, until the block ends."""
        if self._done.wait(self.seconds):
            return
        kill_after: dict[int, float] = {}
        while True:
            for i, p in enumerate(list(self.processes)):
                if not _running(p):
                    continue
                if i not in kill_after:  # also a process started after the deadline
                    self.stopped.append(i)
                    kill_after[i] = time.monotonic() + 3.0
                    with contextlib.suppress(Exception):
                        p.terminate()
                elif time.monotonic() > kill_after[i]:  # SIGTERM ignored or blocked: SIGKILL cannot be
                    with contextlib.suppress(Exception):
                        p.kill()
            if self._done.wait(0.05):
                return

    def __enter__(self) -> time_limit:
        self._done.clear()
        self._watchdog = threading.Thread(target=self._watch, name="time_limit watchdog", daemon=True)
        self._watchdog.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> bool:
        with _alarm_held():
            self._done.set()
            if self._watchdog is not None:
                self._watchdog.join()
            stop_processes([p for p in self.processes if _started(p)])
        if self.stopped and (kind is None or issubclass(kind, Exception)):
            raise LaunchTimeout(self.seconds, self.stopped) from exc
        return False


# --------------------------------------------------------------------------------------------
# A fresh interpreter, for settings read at start-up
# --------------------------------------------------------------------------------------------


def run_fresh_python(code: str, env: dict[str, str | None] | None = None, timeout: float = 120.0) -> str:
    """Run `code` with this kernel's Python in a new process and return what it printed.

    `env` entries are set in a copy of this process's environment (a value of None removes the
    variable). The child can `import helpers` wherever this process found it. Raises
    RuntimeError with the child's last error line when the child fails.
    """
    child_env = dict(os.environ)
    for name, value in (env or {}).items():
        if value is None:
            child_env.pop(name, None)
        else:
            child_env[name] = value
    package_parent = str(Path(__file__).resolve().parent.parent)
    child_env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, child_env.get("PYTHONPATH", "")) if p)
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            env=child_env,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"the child Python did not finish within {timeout:g} s") from None
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "(no error output)"
        raise RuntimeError(f"the child Python exited with code {done.returncode}: {last}")
    return done.stdout


# --------------------------------------------------------------------------------------------
# Scratch folders for the files a chapter writes
# --------------------------------------------------------------------------------------------


PREFIX = "pytorch-gpu-course-"


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: no signal is sent, only whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, under another user
    return True


def remove_abandoned_folders(parent: Path | None = None) -> list[Path]:
    """Remove the scratch folders of kernels that no longer run; returns what was removed.

    Only on POSIX: on Windows `os.kill` would end the process it is asked about.
    """
    if os.name != "posix":
        return []
    removed = []
    for folder in Path(parent or tempfile.gettempdir()).glob(f"{PREFIX}*-*"):
        pid_text = folder.name[len(PREFIX) :].split("-", 1)[0]
        if folder.is_dir() and pid_text.isdigit() and not _process_alive(int(pid_text)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def scratch_folder(importable: bool = True) -> Path:
    """Make a new empty folder for this kernel's files; it is removed when the kernel exits.

    With `importable` (the default) the folder is put first on `sys.path`, so a module written
    there can be imported here and by processes started with `spawn`, which copy `sys.path`.
    """
    remove_abandoned_folders()
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    if importable:
        sys.path.insert(0, str(folder))
    return folder
