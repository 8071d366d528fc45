"""Processes a notebook starts: ranks (`launch`), commands such as torchrun (`run_commands`), a chapter 09 cell's
own processes (`time_limit`), snippets in a fresh interpreter (`run_fresh_python`), and `scratch_folder`.

Each has a time limit and leaves nothing running; CONTRIBUTING.md ("Launchers") says what each guarantees, and why."""

from __future__ import annotations

import atexit
import contextlib
import datetime
import gc
import logging
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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .profiling import quiet_stderr

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


#: How a rank's worker ended, as `RankOutcome.ended` says it.
RETURNED, RAISED, RUNNING, DIED, STARTING = "returned", "raised", "running", "died", "starting"

#: One line of a stack: (file, line, function).
Frame = tuple[str, int, str]


#: Where torch's distributed code lives: torch.distributed, and DistributedDataParallel.
_DISTRIBUTED = ("/torch/distributed/", "/torch/nn/parallel/distributed.py")
#: Where a rank can wait for its peers: there, and in autograd (DDP averages gradients inside backward()).
_WAITS = (*_DISTRIBUTED, "/torch/autograd/")
_SHIMS = ("/helpers/exercises/", "/unittest/mock.py")  # a checker's wrapper around a collective: see through it
_C10D = "/torch/distributed/distributed_c10d.py"
#: What torch.distributed raises when a collective times out or a peer is gone (by type, never by text).
_COMMUNICATION_ERRORS = ("RuntimeError", "DistError", "DistBackendError", "DistNetworkError", "DistStoreError")
#: Names a learner knows for modules of torch's distributed code.
_OWNERS = {"torch.nn.parallel.distributed": "DistributedDataParallel"}


def _posix(path: str) -> str:
    return os.path.normcase(path).replace("\\", "/")


def _inside_wait(frames: Sequence[Frame]) -> bool:
    """Whether the innermost frames, past torch's own plumbing, are where a rank waits for its peers (not code
    of the learner's or the course's that happened to be running)."""
    import torch

    torch_dir = _posix(os.path.dirname(torch.__file__)) + "/"
    entry = next((name for f, _, name in frames if any(part in _posix(f) for part in _DISTRIBUTED)), "")
    if entry.startswith(("get_", "is_")) or entry == "size":
        return False  # a query (dist.get_rank(), mesh.size()) never waits for a peer: a loop calling one is busy
    for path in (_posix(f) for f, _, _ in reversed(frames)):
        if any(part in path for part in _WAITS):
            return True
        if not path.startswith(torch_dir) and not any(part in path for part in _SHIMS):
            return False
    return False


@dataclass(frozen=True)
class RankOutcome:
    """How one rank ended, as data: `RETURNED` (with its `result`), `RAISED` (the exception's type, its
    `frames` outermost first), `RUNNING` at the limit (its stack), `DIED`, or `STARTING` (never got going).
    `waited`: it was left waiting for its peers (inside torch.distributed or autograd when asked where it
    was, or a communication error raised there no sooner than the collective timeout). Checkers decide from
    these fields, never from an error's text; `details` is for people."""

    rank: int
    ended: str
    result: Any = None
    error: str = ""
    frames: tuple[Frame, ...] = ()
    details: str = ""
    exit: str = ""  # how a process that DIED ended: "was killed by signal SIGABRT before reporting a result"
    seconds: float = 0.0  # from the moment every rank had started to the moment it raised
    waited: bool = False
    where_first: tuple[Frame, ...] = ()  # its stack when first asked where it ran (as a peer failed, say)

    @property
    def collective(self) -> str | None:
        """The public collective of `torch.distributed` it was inside ("all_reduce", "barrier", …), or None."""
        return next((n for f, _, n in self.frames if _posix(f).endswith(_C10D) and not n.startswith("_")), None)

    @property
    def waiting_in(self) -> str | None:
        """Where it waited for its peers, for people ("all_reduce", "DistributedDataParallel.forward",
        "torch.autograd.backward"); None when it did not wait."""
        if not self.waited:
            return None
        if self.collective is not None:
            return self.collective
        frames = [f for f in self.frames if any(part in _posix(f[0]) for part in _WAITS)]
        if not frames:
            return "a collective"
        path, name = _posix(frames[0][0]), frames[0][2]
        module = path[path.rindex("/torch/") + 1 :].removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        return f"{_OWNERS.get(module, module)}.{name}"

    def judged(self, collective_timeout: float, waits_last: bool = True) -> RankOutcome:
        """This outcome with `waited` decided: where it ran when asked (a wait only if a wait could last that
        long: `waits_last`), or its error's kind and time."""
        inside = _inside_wait(self.frames)
        if self.ended == RUNNING:
            return replace(self, waited=inside and waits_last)
        late = self.seconds >= 0.9 * collective_timeout  # a timeout fires no sooner; an error of its own, anytime
        return replace(self, waited=self.ended == RAISED and self.error in _COMMUNICATION_ERRORS and late and inside)

    @property
    def error_line(self) -> str:
        """The line of its traceback naming its error (FSDP's spans lines and ends in a module), cut to 300."""
        lines = self.details.strip().splitlines()
        heads = [line for line in lines if line.split(":")[0].split(".")[-1] == self.error]
        line = heads[-1] if heads else lines[-1] if lines else "no details"
        return line if len(line) <= 300 else line[:300] + "…"

    def line_in(self, file: str) -> int | None:
        """The line of the innermost frame from `file` (a basename such as "ddp_answer.py"), or None."""
        return next((line for f, line, _ in reversed(self.frames) if os.path.basename(f) == file), None)


class WorkerFailed(RuntimeError):
    """A rank raised or died: `rank`, its traceback (`details`, `last_line`), every rank's `outcomes`."""

    def __init__(self, rank: int, details: str, outcomes: Sequence[RankOutcome] = ()) -> None:
        self.rank = rank
        self.details = details
        self.outcomes = list(outcomes)
        self.last_line = details.strip().splitlines()[-1] if details.strip() else "no details"
        message = f"rank {rank} failed: {self.last_line}\n--- traceback from rank {rank} ---\n{details.rstrip()}"
        super().__init__(message + _nccl_advice(details))


class LaunchTimeout(TimeoutError):
    """The launch did not finish in time; every rank was killed. `outcomes` says how each had got on."""

    def __init__(self, seconds: float, unfinished: list[int], outcomes: Sequence[RankOutcome] = (), who: str = "ranks"):
        self.unfinished = list(unfinished)
        self.outcomes = list(outcomes)
        if any(o.ended == STARTING for o in self.outcomes):
            said = f"ranks {self.unfinished} had not all started within {seconds:g} s (a busy machine starts slowly)"
        else:
            said = f"the run did not finish within {seconds:g} s; {who} {self.unfinished} had not finished: killed"
            said += " (a rank waiting for a peer that never arrives hangs until this timeout)" * (who == "ranks")
        super().__init__(said)


def _nccl_advice(text: str) -> str:
    """`NCCL_ADVICE`, after a blank line, when an error text comes from NCCL; else nothing."""
    return "\n\n" + NCCL_ADVICE if "nccl" in text.lower() else ""


def to_plain(value: Any) -> Any:
    """Tensors (also inside lists, tuples and dicts) as nested Python lists and numbers: a rank's result
    crosses a pipe by value, where a tensor would travel as a handle to shared memory that can vanish."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().cpu().tolist()
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_plain(v) for v in value)
    return value


def loopback_listener() -> socket.socket:
    """A TCP socket bound to 127.0.0.1 on a port the kernel chose as free, already listening."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


def free_loopback_port() -> int:
    """A port that was free on 127.0.0.1 a moment ago, for tools that need a number (torchrun)."""
    with loopback_listener() as sock:
        return sock.getsockname()[1]


def loopback_interface() -> str:
    """The name of the loopback network interface ("lo" on Linux, "lo0" on macOS)."""
    with contextlib.suppress(OSError, AttributeError, StopIteration):  # no if_nameindex, or no "lo…" in it
        return next(name for _, name in socket.if_nameindex() if name.startswith("lo"))
    return "lo0" if sys.platform == "darwin" else "lo"


def _check_importable(worker: Callable[..., Any]) -> None:
    """Refuse, before any rank starts, a worker that a process started with spawn or forkserver cannot import."""
    module, qualname = getattr(worker, "__module__", None), getattr(worker, "__qualname__", "")
    if not callable(worker):
        raise TypeError(f"the worker must be a function, not {type(worker).__name__}")
    if module in (None, "__main__") or "<locals>" in qualname or "<lambda>" in qualname:
        raise TypeError(
            f"the worker {qualname or worker!r} is defined in the notebook (module {module!r}); a process "
            "started with 'spawn' or 'forkserver' imports the worker's module and cannot see notebook "
            "code. Write the function into a file with %%writefile {WORK}/name.py, then `import name` "
            "and launch name.function."
        )


def default_backend(world_size: int) -> str:
    """NCCL when every rank can have its own CUDA GPU, gloo otherwise (CPU tensors)."""
    import torch

    if torch.cuda.is_available() and torch.cuda.device_count() >= world_size and torch.distributed.is_nccl_available():
        return "nccl"
    return "gloo"


def process_context() -> Any:
    """`forkserver` where it exists, else `spawn` (clean children, safe after CUDA started); the server forks
    ranks with torch, Dynamo (DDP imports it) and this module loaded, so a launch costs a fraction of a second."""
    import torch.multiprocessing as mp

    if "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["torch", "torch.distributed", "torch._dynamo", "helpers.processes"])
        return ctx
    return mp.get_context("spawn")


def start_process_server() -> None:
    """Start `launch`'s fork server now, without waiting: its imports then overlap the cells before the
    first launch. Where ranks are spawned (Windows) there is no server."""
    if process_context().get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


def rank_environment(rank: int, world_size: int, port: int) -> dict[str, str]:
    """The variables torchrun gives a rank; `TORCHELASTIC_USE_AGENT_STORE` makes `init_process_group()`
    join the launcher's store as a client."""
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


#: Seconds the ranks get to report, once one failed or a limit passed, before they are stopped.
GRACE_SECONDS = 2.0
#: Seconds between asks of where a rank runs, while its peer has given up waiting for it.
ASK_EVERY_SECONDS = 0.5


@dataclass
class _Plan:
    """What every rank receives (torch.multiprocessing hands each the same arguments)."""

    worker: Callable[..., Any]
    world_size: int
    args: tuple[Any, ...]
    backend: str
    port: int
    init_group: bool
    threads: int
    timeout: float
    collective_timeout: float
    start_timeout: float
    pipes: list[Any] = field(default_factory=list)  # each rank's end of its two-way pipe to the parent
    stderr_paths: list[str] = field(default_factory=list)


def _listen(conn: Any, send: Callable[[tuple[Any, ...]], None]) -> dict[str, threading.Event]:
    """In a rank: a thread hearing the launcher's "go", "finish" and "report" (send the main thread's stack).
    A pipe, not a multiprocessing `Event`, whose `set()` waits for every waiter: a dead rank never wakes."""
    heard = {word: threading.Event() for word in ("go", "finish")}
    main = threading.main_thread().ident

    def listen() -> None:
        with contextlib.suppress(Exception):  # EOF: the launcher is gone (or the interpreter is ending)
            while True:
                word = conn.recv()
                here = sys._current_frames().get(main) if word == "report" and main is not None else None
                if here is not None:
                    send(("running", tuple((f.filename, f.lineno or 0, f.name) for f in traceback.extract_stack(here))))
                elif word in heard:
                    heard[word].set()
        os._exit(1)  # the launcher is gone: nobody is left to report to, or to stop this rank

    threading.Thread(target=listen, name="listen to the launcher", daemon=True).start()
    return heard


def _rank_main(rank: int, plan: _Plan) -> None:
    """Runs in each rank: wait until every rank has started, join the group, run the worker, report as data."""
    import torch
    import torch.distributed as dist

    conn = plan.pipes[rank]
    for other in plan.pipes:
        if other is not conn:
            other.close()  # only the parent and this rank hold this rank's pipe: EOF means it is gone
    lock, returned, went = threading.Lock(), threading.Event(), 0.0

    def send(message: tuple[Any, ...]) -> None:
        with lock:
            if message[0] != "running" or not returned.is_set():
                conn.send(message)

    try:
        write_output_to(plan.stderr_paths[rank])
        torch.set_num_threads(plan.threads)
        os.environ.update(rank_environment(rank, plan.world_size, plan.port))
        os.environ.setdefault("OMP_NUM_THREADS", str(plan.threads))
        heard = _listen(conn, send)
        send(("started",))
        heard["go"].wait()  # only the launcher's clocks decide: it stops a rank it stops waiting for
        went = time.monotonic()
        store = None
        if plan.init_group:
            gpu = torch.device("cuda", rank) if plan.backend == "nccl" else None  # device_id: barrier() needs it
            if gpu is not None:
                torch.cuda.set_device(gpu)
            store = dist.TCPStore("127.0.0.1", plan.port, None, False, datetime.timedelta(seconds=plan.timeout))
            patience = datetime.timedelta(seconds=plan.collective_timeout)
            with quiet_stderr(fd=1):  # gloo's greeting (torch 2.10 prints one a rank) is no lesson
                dist.init_process_group(
                    plan.backend, store=store, rank=rank, world_size=plan.world_size, timeout=patience, device_id=gpu
                )
        result = to_plain(plan.worker(rank, plan.world_size, *plan.args))
        with lock:
            returned.set()
            conn.send(("returned", result))
        heard["finish"].wait()  # nobody closes sockets while a peer's worker still needs them
        gc.collect()
        if dist.is_initialized():  # the launcher's group, or one the worker forgot to destroy
            dist.destroy_process_group()
        del store
    except BaseException as exc:  # report everything, KeyboardInterrupt included
        try:
            frames = tuple((f.filename, f.lineno or 0, f.name) for f in traceback.extract_tb(exc.__traceback__))
            seconds = time.monotonic() - went if went else 0.0
            send(("raised", type(exc).__name__, frames, traceback.format_exc(), seconds))
            # Stay, sockets open, until the launcher stops every rank: it first asks the others where they are,
            # and a rank that left now would turn their waits into errors of their own (a lost peer).
            time.sleep(plan.start_timeout + plan.timeout)
        finally:
            os._exit(1)  # skip the interpreter's teardown, which would wait for gloo's threads
    conn.close()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # as multiprocessing ends a child, but now: a thread the worker left running must not keep it


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


def write_output_to(path: str) -> None:
    """In a child: send file descriptor 2 (C++'s output too) to `path`, with `faulthandler`'s stack on a fatal
    signal, so the parent can quote why a child died without reporting (`died_before_reporting`); and descriptor 1
    to `path + ".out"`, shown after the launch: ranks printing at once would interleave."""
    import faulthandler

    sys.stdout.flush()
    sys.stderr.flush()
    for fd, name in ((1, path + ".out"), (2, path)):
        target = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(target, fd)
        os.close(target)
    faulthandler.enable()  # every thread: a gloo abort comes from a C++ thread, the learner's line is in the main one


@contextlib.contextmanager
def stderr_files(n: int) -> Iterator[list[str]]:
    """`n` paths for children's error output; afterwards the children's printed output, then their error
    output, is echoed here (to stdout, then stderr), rank by rank, and removed."""
    folder = tempfile.mkdtemp(prefix="course-stderr-")
    paths = [os.path.join(folder, f"stderr{i}.txt") for i in range(n)]
    try:
        yield paths
    finally:
        for path, stream in [(p + ".out", sys.stdout) for p in paths] + [(p, sys.stderr) for p in paths]:
            with contextlib.suppress(OSError):
                stream.write(Path(path).read_text(errors="replace"))
        shutil.rmtree(folder, ignore_errors=True)


def died_before_reporting(who: str, code: int | None, stderr_path: str, started: bool = False) -> str:
    """Why a child or rank gave no result: how it ended and the last lines of its error output (the cause)."""
    lines = Path(stderr_path).read_text(errors="replace").strip().splitlines() if Path(stderr_path).exists() else []
    said = f"{who} {describe_exit(code)} before reporting a result"
    if lines:
        return f"{said}; the last lines of its error output:\n" + "\n".join(lines[-10:])
    if started:
        return f"{said}, and wrote nothing to its error output"
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


class _Reports:
    """The parent's side of the ranks' pipes: what each rank said, read as it arrives."""

    def __init__(self, pipes: list[Any]) -> None:
        self.open = {conn: rank for rank, conn in enumerate(pipes)}
        self.started: set[int] = set()
        self.said: dict[int, RankOutcome] = {}
        self.order: list[int] = []  # ranks in the order they raised
        self.same_stack: set[int] = set()  # ranks whose last two reports of where they run were the same
        self.stopping = False  # from here on, a rank's error may be a consequence of stopping another

    def read(self, timeout: float) -> None:
        """Read every message that arrives within `timeout` seconds (0: only what is there)."""
        from multiprocessing.connection import wait

        for conn in wait(list(self.open), timeout=timeout):
            rank = self.open[conn]
            try:
                while conn.poll():
                    self._take(rank, conn.recv())
            except (EOFError, OSError):  # the rank is gone (a cut-off message ends in EOF too)
                del self.open[conn]

    def _take(self, rank: int, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "started":
            self.started.add(rank)
        elif kind == "returned":
            self.said[rank] = RankOutcome(rank, RETURNED, result=message[1])
        elif kind == "running" and (rank not in self.said or self.said[rank].ended == RUNNING):
            before = self.said.get(rank)
            self.same_stack = self.same_stack - {rank} | ({rank} if before and before.frames == message[1] else set())
            first = before.where_first if before else message[1]
            self.said[rank] = RankOutcome(rank, RUNNING, frames=message[1], where_first=first)
        elif kind == "raised":  # its own error; not one after it was asked where it ran, as ranks are stopped
            before = self.said.get(rank, RankOutcome(rank, RETURNED))
            if before.ended == RETURNED or (before.ended == RUNNING and not self.stopping):
                fields = dict(zip(("error", "frames", "details", "seconds"), message[1:], strict=True))
                self.said[rank] = RankOutcome(rank, RAISED, where_first=before.where_first, **fields)
                self.order.append(rank)

    def tell(self, word: str) -> None:
        """Say `word` ("go", "finish", "report") to every rank still there."""
        for conn in self.open:
            with contextlib.suppress(OSError):
                conn.send(word)


def _outcomes(reports: _Reports, processes: list[Any], stderr_paths: list[str], stopped: set[int]) -> list[RankOutcome]:
    """Every rank's outcome: what it said, else how its process ended (`stopped`: still running when it was stopped)."""
    found = []
    for rank, p in enumerate(processes):
        said = reports.said.get(rank)
        if said is not None and not (said.ended == RETURNED and p.exitcode not in (0, None) and rank not in stopped):
            found.append(said)
        elif said is not None:  # returned, then its process failed on the way out
            how = f"{describe_exit(p.exitcode)} at exit, after reporting its result"
            found.append(RankOutcome(rank, DIED, details=f"the process finished its work but {how}", exit=how))
        elif rank in stopped:
            found.append(RankOutcome(rank, RUNNING if rank in reports.started else STARTING))
        else:
            started = rank in reports.started
            why = died_before_reporting("the process", p.exitcode, stderr_paths[rank], started)
            when = "before reporting a result" if started else "while starting (importing the worker's module)"
            found.append(RankOutcome(rank, DIED, details=why, exit=f"{describe_exit(p.exitcode)} {when}"))
    return found


def _blame(outcomes: list[RankOutcome], order: list[int]) -> RankOutcome | None:
    """The rank whose failure explains the launch's (the one that crashed, not the peer it left waiting): an
    error of a kind no wait raises, a death, an error that was no wait (a quick one), then any error."""
    raised = sorted((o for o in outcomes if o.ended == RAISED), key=lambda o: order.index(o.rank))
    own = [o for o in raised if o.error not in _COMMUNICATION_ERRORS]  # ValueError, AssertionError, …
    first = own + [o for o in outcomes if o.ended == DIED] + [o for o in raised if not o.waited] + raised
    return first[0] if first else None


def launch(
    worker: Callable[..., Any],
    world_size: int = 2,
    args: tuple[Any, ...] = (),
    *,
    backend: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    collective_timeout: float | None = None,
    start_timeout: float | None = None,
    threads_per_rank: int | None = None,
    init_group: bool = True,
) -> LaunchResult:
    """Run `worker(rank, world_size, *args)` in `world_size` processes joined in one process group.

    Returns a `LaunchResult` (`results[r]`: rank `r`'s value, tensors as lists). Raises `WorkerFailed` naming the
    rank that raised or died, or `LaunchTimeout` when the ranks have not finished `timeout` s after all started,
    or not all started within `start_timeout` (default `timeout`); both carry every rank's `outcomes`.
    `collective_timeout` (default `timeout`) is the group's; `init_group=False` leaves `init_process_group()`
    to the worker, with torchrun's variables. No rank survives the call."""
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp

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
    fd, patience = os.dup(listener.fileno()), datetime.timedelta(seconds=timeout)
    store = dist.TCPStore("127.0.0.1", port, None, True, patience, wait_for_workers=False, master_listen_fd=fd)
    ours, theirs = zip(*(ctx.Pipe() for _ in range(world_size)), strict=True)
    processes: list[Any] = []
    error_files: list[str] = []
    with stderr_files(world_size) as stderr_paths:  # each rank's error output, quoted when it dies, echoed at the end
        waits = [timeout if t is None else t for t in (collective_timeout, start_timeout)]
        plan = _Plan(worker, world_size, tuple(args), backend, port, init_group, threads_per_rank, timeout, *waits)
        plan.pipes, plan.stderr_paths = list(theirs), stderr_paths
        try:
            context = mp.start_processes(
                _rank_main, (plan,), world_size, join=False, daemon=True, start_method=ctx.get_start_method()
            )
            processes, error_files = context.processes, context.error_files
            for conn in theirs:
                conn.close()  # each rank holds the only other end of its pipe: EOF tells us it is gone
            spawn_log = logging.getLogger("torch.multiprocessing.spawn")  # "Terminating process …": ours to say
            level = spawn_log.level
            spawn_log.setLevel(logging.ERROR)
            try:
                outcomes, limit, order = _wait(context, plan, _Reports(list(ours)), start)
            finally:
                spawn_log.setLevel(level)
            if all(o.ended == RETURNED for o in outcomes):
                return LaunchResult([o.result for o in outcomes], time.perf_counter() - start, world_size, backend)
            blamed = _blame(outcomes, order)
            if limit is None and blamed is not None:
                raise WorkerFailed(blamed.rank, blamed.details, outcomes)
            unfinished = [o.rank for o in outcomes if o.ended in (RUNNING, STARTING)]
            raise LaunchTimeout(limit or timeout, unfinished, outcomes)
        finally:
            stop_processes(processes)
            for conn in (*ours, *theirs):
                conn.close()
            for path in error_files:  # torch.multiprocessing's error files (a rank here never leaves one)
                with contextlib.suppress(OSError):
                    os.remove(path)
            del store
            listener.close()


def _wait(
    context: Any, plan: _Plan, reports: _Reports, start: float
) -> tuple[list[RankOutcome], float | None, list[int]]:
    """Wait for the ranks (`ProcessContext.join`), reading their reports; return every outcome, the limit
    hit (or None) and the ranks in the order they raised. When a rank fails (one that timed out waiting: once
    its peers end or wait too) or a limit passes, the rest get `GRACE_SECONDS` to say where they are."""
    from torch.multiprocessing import ProcessExitedException, ProcessRaisedException

    processes, world = context.processes, plan.world_size
    deadline, limit, running = start + plan.start_timeout, None, False
    told_finish, told_report, next_ask = False, False, 0.0
    while True:
        reports.read(timeout=min(0.05, max(0.0, deadline - time.perf_counter())))
        if not running and len(reports.started) == world:
            running, deadline = True, time.perf_counter() + plan.timeout
            reports.tell("go")
        if not told_finish and sum(o.ended == RETURNED for o in reports.said.values()) == world:
            reports.tell("finish")
            told_finish = True
        if not told_report and (reports.order or any(p.exitcode not in (None, 0) for p in processes)):
            reports.tell("report")  # a rank failed: the others say where they are before join stops them
            told_report = True
        alive = {rank for rank, p in enumerate(processes) if p.exitcode is None}
        try:
            if context.join(timeout=0, grace_period=GRACE_SECONDS):
                break
        except (ProcessExitedException, ProcessRaisedException):
            break  # join has waited its grace period for the others, then stopped them
        returned = {r for r, o in reports.said.items() if o.ended == RETURNED}
        silent = any(p.exitcode == 0 and r not in returned for r, p in enumerate(processes))  # os._exit(0), say
        failed = bool(reports.order) or silent  # a rank that raised stays until stopped: its report says it
        now = time.perf_counter()
        if failed and running and not silent and now < deadline and _peers_still_going(reports, plan, alive):
            if now >= next_ask:
                reports.tell("report")
                next_ask = now + ASK_EVERY_SECONDS
            continue
        if failed or now > deadline:
            limit = None if failed else plan.timeout if running else plan.start_timeout
            reports.tell("report")
            until = time.perf_counter() + GRACE_SECONDS  # each rank still running says where it is
            while time.perf_counter() < until and any(r in reports.started and r not in reports.said for r in alive):
                reports.read(timeout=0.05)
            break
    reports.stopping = True
    stop_processes(processes)
    until = time.monotonic() + 5.0
    while reports.open and time.monotonic() < until:  # every rank has ended: read its pipe to the end
        reports.read(timeout=0.5)
    ours = {-getattr(signal, name) for name in ("SIGTERM", "SIGKILL") if hasattr(signal, name)}  # not a crash's
    stopped = {r for r in alive if processes[r].exitcode in ours}
    waits_last = limit is None or plan.collective_timeout >= plan.timeout  # else a wait would have raised first
    found = _outcomes(reports, processes, plan.stderr_paths, stopped)
    outcomes = [o.judged(plan.collective_timeout, waits_last) for o in found]
    return outcomes, limit, reports.order


def _peers_still_going(reports: _Reports, plan: _Plan, alive: set[int]) -> bool:
    """Whether every rank that raised gave up waiting (a collective's timeout) while a peer still runs outside
    a wait (the same stack in torch.distributed or autograd at two asks in a row): what the peer does next
    says what went wrong; a peer slowed by a loaded machine is not a missing collective."""
    if not all(reports.said[r].judged(plan.collective_timeout).waited for r in reports.order):
        return False
    others = [reports.said.get(rank) for rank in alive - set(reports.order)]
    waits = [o is not None and o.rank in reports.same_stack and _inside_wait(o.frames) for o in others]
    return any(o is None or (o.ended == RUNNING and not w) for o, w in zip(others, waits, strict=True))


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
        message = f"{who}{shlex.join(result.command)} {describe_exit(result.returncode)}; the end of its output:\n"
        super().__init__(message + tail + _nccl_advice(result.output))


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
    """Every live process below `pids`, and every process in their sessions (empty without /proc): torch
    elastic gives each rank a session of its own, so its own children are found even after torchrun died."""
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


def kill_tree(pids: Sequence[int], known: set[int]) -> set[int]:
    """SIGKILL `pids`, their process groups and descendants, and `known` (ranks seen earlier); return the pids hit."""
    targets = set(pids) | descendants(pids) | known
    sigkill = getattr(signal, "SIGKILL", signal.SIGTERM)  # Windows has no SIGKILL: TerminateProcess
    for pid in targets:
        for kill in (os.killpg, os.kill) if hasattr(os, "killpg") else (os.kill,):
            with contextlib.suppress(OSError):  # gone already (ProcessLookupError), or not ours
                kill(pid, sigkill)
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
    """Run `commands` side by side (one `torchrun` per "node"), each in its own session, and wait at most `timeout` s.

    Each gets `env` and `envs[i]`, a private `TMPDIR` and torchrun's `--log-dir` in a folder removed afterwards;
    however the wait ends, every process they started is killed (`kill_tree`). A command that wrote
    `done_files[i]` during the run and then exited with an error counts as done, with a note (CONTRIBUTING,
    "Launchers": an abort at exit, a node that lost the rendezvous store). Outcomes come from exit codes
    and that file, never from output; with `check`, a failure raises `CommandFailed`."""
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
            result = CommandResult([str(c) for c in command], p.returncode, output, seconds, p.returncode == 0)
            if not result.done and _stamp(files[i]) not in (None, before[i]):  # written during this run
                result.done = True
                result.notes.append(
                    f"it {describe_exit(p.returncode)} after writing its result ({files[i].name}): the work was "
                    "done, so the run counts"
                )
            results.append(result)
        failed = [result for result in results if not result.done]
        if check and failed:
            raise CommandFailed(failed[0])
        return results
    finally:
        kill_tree([p.pid for p in procs], seen)  # whatever ended the wait; a no-op when all are gone
        for p in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(5.0)
        for log in logs:
            log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _stamp(path: Path | None) -> int | None:
    """When `path` was last written (nanoseconds), or None when it does not exist."""
    try:
        return None if path is None else path.stat().st_mtime_ns
    except OSError:
        return None


def _started(p: Any) -> bool:
    """Whether `p` was started and not closed (`pid` is None before `start()`, and raises after `close()`)."""
    try:
        return p.pid is not None
    except ValueError:
        return False


def _running(p: Any) -> bool:
    """Whether `p` was started and has not ended, read from its sentinel without consuming it (thread-safe)."""
    from multiprocessing.connection import wait

    try:
        return _started(p) and not wait([p.sentinel], 0)
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
    """`with time_limit(processes, seconds):` around code that starts and joins the list `processes`: from
    `seconds` on, a watchdog terminates every process running (late ones too); leaving the block stops them
    all. `LaunchTimeout` names those it stopped (indices), unless the block was interrupted."""

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
            raise LaunchTimeout(self.seconds, self.stopped, who="processes") from exc
        return False


def run_fresh_python(code: str, env: dict[str, str | None] | None = None, timeout: float = 120.0) -> str:
    """Run `code` in a new interpreter (this Python, `helpers` importable) and return what it printed; `env`
    entries override this environment (None removes one); a failure raises RuntimeError with its last line."""
    child_env = {name: value for name, value in {**os.environ, **(env or {})}.items() if value is not None}
    package_parent = str(Path(__file__).resolve().parent.parent)
    child_env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, child_env.get("PYTHONPATH", "")) if p)
    command = [sys.executable, "-c", textwrap.dedent(code)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=child_env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"the child Python did not finish within {timeout:g} s") from None
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "(no error output)"
        raise RuntimeError(f"the child Python exited with code {done.returncode}: {last}")
    return done.stdout


PREFIX = "pytorch-gpu-course-"


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: no signal is sent, only whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, under another user
    return True


def remove_abandoned_folders(parent: Path | None = None) -> list[Path]:
    """Remove the scratch folders of kernels that no longer run (POSIX only: there `os.kill(pid, 0)` only asks)."""
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
    """A new empty folder for this kernel's files, removed when the kernel exits; with `importable`, first on
    `sys.path`, so modules written there import here and in spawned processes."""
    remove_abandoned_folders()
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    if importable:
        sys.path.insert(0, str(folder))
    return folder
