"""The launchers: reliable, clear about failures, prompt on timeouts and interrupts, and they leave nothing behind.

These launches run for real (gloo on the CPU). `launch` forks ranks from a forkserver that has
already imported torch, so a launch costs well under a second; a torchrun launch costs a few
seconds (torchrun and each rank import torch).
"""

from __future__ import annotations

import _thread
import multiprocessing
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import torch

from helpers import processes as d
from helpers.plots import plot_throughput

# -- workers (module-level, so that a new process can import them) --------------------------------


def leftovers() -> dict[str, list[str]]:
    """What a launch could leave behind: torchelastic and course folders in the temp dir, torch files in /dev/shm."""
    tmp = Path(tempfile.gettempdir())
    shm = Path("/dev/shm")
    return {
        "torchelastic": sorted(p.name for p in tmp.glob("torchelastic_*")),
        "course-run": sorted(p.name for p in tmp.glob("course-run-*")),
        "shm": sorted(p.name for p in shm.glob("torch_*")) if shm.is_dir() else [],
    }


def hello_worker(rank: int, world_size: int) -> dict:
    import torch.distributed as dist

    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    return {"rank": rank, "sum": t.item(), "pid": os.getpid(), "backend": dist.get_backend()}


def printing_worker(rank: int, world_size: int) -> None:
    """Each rank prints two lines from C's stdout, as C++ code may, and one from Python."""
    import ctypes

    for part in ("first", "second"):
        ctypes.CDLL(None).printf(f"rank {rank} {part} half\n".encode())
        ctypes.CDLL(None).fflush(None)
        time.sleep(0.05)  # the other rank prints in between
    print(f"rank {rank} from Python")


def failing_worker(rank: int, world_size: int) -> None:
    import torch.distributed as dist

    if rank == 1:
        raise ValueError("rank 1 was told to fail")
    dist.barrier()  # waits for the failed rank: only the parent can end this


def one_sided_worker(rank: int, world_size: int, collective: str) -> int:
    """Rank 0 alone enters a collective; rank 1 returns at once."""
    import torch.distributed as dist

    if rank == 0:
        dist.barrier() if collective == "barrier" else dist.all_reduce(torch.ones(1))
    return rank


def slow_peer_worker(rank: int, world_size: int, then: str) -> int:
    """Rank 0 alone enters all_reduce; rank 1 is slow (5 s of its own work), then returns or waits in a barrier."""
    import torch.distributed as dist

    if rank == 0:
        dist.all_reduce(torch.ones(1))
    elif then == "loops":  # busy, calling torch.distributed all the while: a query is no wait
        while dist.get_rank() == 1:
            pass
    else:
        time.sleep(5)
        if then == "waits":
            dist.barrier()
    return rank


def sleeping_worker(rank: int, world_size: int, seconds: float) -> None:
    time.sleep(seconds)


def self_initialising_worker(rank: int, world_size: int) -> dict:
    """Joins the group itself, from the environment, as a torchrun script does."""
    import torch.distributed as dist

    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    seen = {k: os.environ[k] for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR")}
    dist.destroy_process_group()
    return {"sum": t.item(), "env": seen}


def nccl_failing_worker(rank: int, world_size: int) -> None:
    raise RuntimeError("NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)")


def notebook_worker(rank: int, world_size: int) -> int:
    return rank


# -- helpers of the tests ---------------------------------------------------------------------------


def _descendants() -> set[int]:
    return d.descendants([os.getpid()])


def _processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes that mention `text` (a unique temporary path)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(f"{entry.name}: {cmdline}")
    return found


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="needs /proc (Linux)")


@pytest.fixture(scope="module")
def warm() -> set[int]:
    """Start the forkserver once (it stays, idle, for the life of this process) and note what runs."""
    if not Path("/proc").is_dir():
        pytest.skip("needs /proc (Linux) to list processes")
    d.start_process_server()  # returns at once; the launch below waits for the server's imports
    d.launch(hello_worker, 1, timeout=60)
    return _descendants()


def _nothing_left(before: set[int], found_before: dict[str, list[str]]) -> None:
    assert multiprocessing.active_children() == []
    assert _descendants() <= before, f"processes left behind: {_descendants() - before}"
    assert leftovers()["shm"] == found_before["shm"]


# -- launch -----------------------------------------------------------------------------------------


def test_the_process_server_started_early_is_the_one_launch_uses(warm: set[int]) -> None:
    from multiprocessing import forkserver

    server = forkserver._forkserver._forkserver_pid
    assert server is not None and Path(f"/proc/{server}").is_dir()
    d.start_process_server()  # already running: nothing new
    assert d.launch(hello_worker, 2, timeout=60).results[1]["rank"] == 1
    assert forkserver._forkserver._forkserver_pid == server


def test_launch_20_times_in_a_row(warm: set[int]) -> None:
    before = leftovers()
    for attempt in range(20):
        out = d.launch(hello_worker, 2, timeout=60)
        assert [r["rank"] for r in out.results] == [0, 1], f"attempt {attempt}"
        assert all(r["sum"] == 3.0 and r["backend"] == "gloo" for r in out.results), f"attempt {attempt}"
        assert out.results[0]["pid"] != out.results[1]["pid"] != os.getpid()
    _nothing_left(warm, before)


def test_what_ranks_print_is_shown_after_the_launch_rank_by_rank(warm: set[int], capfd: pytest.CaptureFixture) -> None:
    d.launch(printing_worker, 2, timeout=60)
    out = capfd.readouterr().out.splitlines()  # nothing else: gloo's greeting (torch 2.10) is not shown
    rank0 = ["rank 0 first half", "rank 0 second half", "rank 0 from Python"]
    assert out == rank0 + [line.replace("0", "1") for line in rank0]


def test_a_failing_worker_names_its_rank_and_leaves_nothing(warm: set[int]) -> None:
    before = leftovers()
    with pytest.raises(d.WorkerFailed, match=r"^rank 1 failed: ValueError: rank 1 was told to fail") as info:
        d.launch(failing_worker, 2, timeout=60)
    assert info.value.rank == 1
    assert "Traceback" in info.value.details and "failing_worker" in info.value.details
    assert "NCCL_P2P_DISABLE" not in str(info.value)
    _nothing_left(warm, before)


def test_a_hung_rank_hits_the_timeout_and_is_killed(warm: set[int]) -> None:
    started = time.monotonic()
    with pytest.raises(d.LaunchTimeout, match=r"within 2 s; ranks \[0, 1\]"):
        d.launch(sleeping_worker, 2, (60.0,), timeout=2)
    assert time.monotonic() - started < 10
    _nothing_left(warm, leftovers())


@pytest.mark.parametrize("collective", ["all_reduce", "barrier"])
@pytest.mark.parametrize(
    ("clock", "limits", "rank0"),
    [
        ("the collective's timeout fires first", {"timeout": 60, "collective_timeout": 3}, d.RAISED),
        ("the launch's limit fires first", {"timeout": 3, "collective_timeout": 600}, d.RUNNING),
    ],
)
def test_a_rank_left_waiting_in_a_collective_says_where_whichever_clock_fires_first(
    warm: set[int], collective: str, clock: str, limits: dict[str, float], rank0: str
) -> None:
    """The outcomes are data: rank 0 raised in (or was still running in) the collective; rank 1 returned."""
    before = leftovers()
    started = time.monotonic()
    with pytest.raises((d.WorkerFailed, d.LaunchTimeout)) as info:
        d.launch(one_sided_worker, 2, (collective,), **limits)
    assert time.monotonic() - started < 30, clock
    first, second = info.value.outcomes
    assert (first.ended, first.collective, first.waited) == (rank0, collective, True), clock
    assert first.line_in(Path(__file__).name) is not None, "where in the worker's file it waited"
    assert (second.ended, second.result) == (d.RETURNED, 1), clock
    _nothing_left(warm, before)


@pytest.mark.parametrize("then", ["returns", "waits"])
def test_a_peer_still_busy_when_a_collective_times_out_is_let_finish(warm: set[int], then: str) -> None:
    """Rank 0 gives up on all_reduce after 2 s while rank 1 still works: what rank 1 then does is the outcome
    (it returned; or it waited too), not "still running" because the machine was slow to bring it there."""
    with pytest.raises(d.WorkerFailed) as info:
        d.launch(slow_peer_worker, 2, (then,), timeout=60, collective_timeout=2)
    first, second = info.value.outcomes
    assert (first.ended, first.collective, first.waited) == (d.RAISED, "all_reduce", True)
    if then == "returns":
        assert (second.ended, second.result) == (d.RETURNED, 1)
    else:
        assert (second.waited, second.collective) == (True, "barrier"), second


def test_a_peer_looping_on_a_query_is_busy_not_waiting(warm: set[int]) -> None:
    """Rank 1 loops on dist.get_rank() while rank 0 gives up on all_reduce: rank 1 ran, it did not wait."""
    with pytest.raises(d.WorkerFailed) as info:
        d.launch(slow_peer_worker, 2, ("loops",), timeout=8, collective_timeout=2)
    first, second = info.value.outcomes
    assert (first.ended, first.waited, second.ended, second.waited) == (d.RAISED, True, d.RUNNING, False), second


def test_a_rank_that_raises_is_blamed_not_the_peer_it_left_waiting(warm: set[int]) -> None:
    with pytest.raises(d.WorkerFailed) as info:
        d.launch(failing_worker, 2, timeout=60, collective_timeout=30)
    assert info.value.rank == 1
    outcomes = {o.rank: o for o in info.value.outcomes}
    assert (outcomes[1].ended, outcomes[1].error, outcomes[1].waited) == (d.RAISED, "ValueError", False)
    assert outcomes[0].ended in (d.RAISED, d.RUNNING), "the peer it left waiting (joining the group, or in the barrier)"


def test_the_start_has_a_limit_of_its_own(warm: set[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ranks that have not all started in time are STARTING (a busy machine), not a worker that hangs.

    A rank starts by importing the worker's module; this one takes 30 s to import, against a start
    limit of 1 s and a run limit of 60 s.
    """
    (tmp_path / "slow_to_import.py").write_text(
        f"import os, time\nif os.getpid() != {os.getpid()}:  # a rank, not this test\n    time.sleep(30)\n\n\n"
        "def work(rank, world_size):\n    return rank\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from slow_to_import import work as worker

    started = time.monotonic()
    with pytest.raises(d.LaunchTimeout, match="had not all started within 1 s") as info:
        d.launch(worker, 2, timeout=60, start_timeout=1)
    assert time.monotonic() - started < 20
    assert [o.ended for o in info.value.outcomes] == [d.STARTING, d.STARTING]


def test_a_worker_can_join_the_group_itself_as_under_torchrun(warm: set[int]) -> None:
    out = d.launch(self_initialising_worker, 2, init_group=False, timeout=60)
    assert [r["sum"] for r in out.results] == [3.0, 3.0]
    assert [r["env"]["RANK"] for r in out.results] == ["0", "1"]
    assert out.results[1]["env"] == {"RANK": "1", "LOCAL_RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1"}
    _nothing_left(warm, leftovers())


def test_an_nccl_failure_comes_with_advice(warm: set[int]) -> None:
    with pytest.raises(d.WorkerFailed) as info:
        d.launch(nccl_failing_worker, 2, init_group=False, timeout=60)
    message = str(info.value)
    assert "NCCL_DEBUG=WARN" in message and "NCCL_P2P_DISABLE=1" in message and "/dev/shm" in message


def test_a_notebook_defined_worker_is_refused_with_a_reason() -> None:
    notebook_worker.__module__ = "__main__"  # what a function defined in a notebook cell looks like
    try:
        with pytest.raises(TypeError, match="defined in the notebook.*%%writefile"):
            d.launch(notebook_worker, 2)
    finally:
        notebook_worker.__module__ = __name__
    with pytest.raises(TypeError, match="defined in the notebook"):
        d.launch(lambda rank, world: rank, 2)


def test_nccl_without_gpus_says_so() -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(RuntimeError, match="one CUDA GPU per rank"):
        d.launch(hello_worker, 2, backend="nccl")
    assert d.default_backend(2) == "gloo"


# -- run_commands (torchrun) ----------------------------------------------------------

SLEEPER = "import sys, time\ntime.sleep(float(sys.argv[1]))\n"
FAILS_ON_RANK_1 = (
    "import os, time\nif os.environ['RANK'] == '1':\n    raise ValueError('rank 1 was told to fail')\ntime.sleep(30)\n"
)


def _script(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


@needs_proc
def test_torchrun_timeout_returns_promptly_and_kills_every_rank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    script = _script(tmp_path, "sleeps.py", SLEEPER)
    # A temp dir of this test's own: another test running at the same time may have a launch folder open.
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    folders = set(leftovers()["course-run"])
    started = time.monotonic()
    with pytest.raises(d.LaunchTimeout, match="within 6 s"):
        d.run_commands([["torchrun", "--standalone", "--nproc-per-node=2", str(script), "60"]], timeout=6)
    assert time.monotonic() - started < 6 + 5, "the launcher must not wait for the ranks"
    time.sleep(0.5)
    assert _processes_mentioning(str(script)) == [], "a rank survived the timeout"
    assert set(leftovers()["course-run"]) <= folders, "the launcher's temporary folder was left behind"


@needs_proc
@pytest.mark.usefixtures("sigint_raises_keyboardinterrupt")
def test_an_interrupt_during_torchrun_kills_every_rank(tmp_path: Path) -> None:
    script = _script(tmp_path, "sleeps_too.py", SLEEPER)
    timer = threading.Timer(4.0, _thread.interrupt_main)  # what the notebook's stop button does
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            d.run_commands([["torchrun", "--standalone", "--nproc-per-node=2", str(script), "60"]], timeout=120)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 4 + 10
    time.sleep(0.5)
    assert _processes_mentioning(str(script)) == [], "a rank survived the interrupt"


@needs_proc
def test_a_failing_torchrun_rank_is_named(tmp_path: Path) -> None:
    script = _script(tmp_path, "fails.py", FAILS_ON_RANK_1)
    with pytest.raises(d.CommandFailed, match=r"^rank 1 failed first") as info:
        d.run_commands([["torchrun", "--standalone", "--nproc-per-node=2", str(script)]], timeout=120)
    assert info.value.rank == 1 and "ValueError: rank 1 was told to fail" in info.value.result.output
    time.sleep(0.5)
    assert _processes_mentioning(str(script)) == []


@pytest.mark.parametrize(
    ("how", "ended"),
    [("os.abort()", "was killed by signal SIGABRT"), ("sys.exit(1)", "exited with code 1")],
    ids=["aborts at exit", "loses the rendezvous store"],
)
def test_a_command_that_fails_after_writing_its_result_counts_as_done(tmp_path: Path, how: str, ended: str) -> None:
    """Decided by the exit code and the result file, whatever the command prints."""
    done = tmp_path / "result.json"
    script = _script(
        tmp_path,
        "fails_after_work.py",
        "import os, sys\n"
        "if sys.argv[1] == 'work':\n"
        f"    open({str(done)!r}, 'w').write('{{}}')\n"
        "print('terminate called without an active exception', file=sys.stderr, flush=True)\n"
        f"{how}\n",
    )
    result = d.run_commands([["python", str(script), "work"]], timeout=60, done_files=[done])[0]
    assert result.done and result.returncode != 0
    assert f"it {ended} after writing its result (result.json)" in str(result)
    with pytest.raises(d.CommandFailed):  # the file is there, but from before this run
        d.run_commands([["python", str(script), "idle"]], timeout=60, done_files=[done])
    done.unlink()
    with pytest.raises(d.CommandFailed):
        d.run_commands([["python", str(script), "idle"]], timeout=60, done_files=[done])


def test_command_output_and_nccl_advice(tmp_path: Path) -> None:
    ok = d.run_commands([["python", "-c", "print('hello from the command')"]], timeout=60)[0]
    assert ok.done and ok.returncode == 0 and "hello from the command" in ok.output
    script = _script(tmp_path, "nccl.py", "import sys\nprint('NCCL WARN unhandled system error')\nsys.exit(1)\n")
    with pytest.raises(d.CommandFailed, match="NCCL_SHM_DISABLE=1"):
        d.run_commands([["python", str(script)]], timeout=60)
    failed = d.run_commands([["python", str(script)]], timeout=60, check=False)[0]
    assert not failed.done and failed.returncode == 1


def test_commands_run_side_by_side_with_their_own_environment() -> None:
    code = "import os; print('node', os.environ['NODE'])"
    results = d.run_commands(
        [["python", "-c", code], ["python", "-c", code]], timeout=60, envs=[{"NODE": "0"}, {"NODE": "1"}]
    )
    assert [r.output.strip() for r in results] == ["node 0", "node 1"]


def test_torchrun_means_this_pythons_torchrun() -> None:
    cmd = d.resolve_program(["torchrun", "--standalone", "x.py"])
    assert cmd[-2:] == ["--standalone", "x.py"]
    assert cmd[0] == str(Path(sys.executable).with_name("torchrun")) or cmd[:3] == [
        sys.executable,
        "-m",
        "torch.distributed.run",
    ]
    assert d.resolve_program(["python", "-c", "1"])[0] == sys.executable


def test_failed_rank_reads_torchruns_root_cause() -> None:
    output = (
        "Failures:\n[1]:\n  rank      : 0 (local_rank: 0)\n"
        "Root Cause (first observed failure):\n[0]:\n  rank      : 1 (local_rank: 1)\n"
    )
    assert d.failed_rank(output) == 1
    assert d.failed_rank("nothing here") is None


# -- small pieces ---------------------------------------------------------------------------------


def test_to_plain_turns_tensors_into_lists() -> None:
    value = {"a": torch.tensor([1.0, 2.0]), "b": (torch.tensor(3), "x"), "c": [torch.zeros(1, 2)]}
    assert d.to_plain(value) == {"a": [1.0, 2.0], "b": (3, "x"), "c": [[[0.0, 0.0]]]}


def test_ports_and_sockets_are_on_loopback() -> None:
    with d.loopback_listener() as sock:
        host, port = sock.getsockname()
        assert host == "127.0.0.1" and port > 0
    assert 0 < d.free_loopback_port() < 65536
    assert d.loopback_interface().startswith("lo")


def test_the_throughput_plot_draws() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plot_throughput(["1 GPU", "DDP"], [100.0, 180.0], "a title", "a stamp")
    try:
        assert [t.get_text() for t in fig.axes[0].texts][:2] == ["1.00×", "1.80×"]
    finally:
        plt.close(fig)
