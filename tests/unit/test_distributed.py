"""The notebook DDP launcher: reliable, clear about failures, and leaves nothing behind.

These launches run for real (gloo on the CPU). They are kept cheap: the launcher forks ranks
from a forkserver that has already imported torch, so a launch costs well under a second.
"""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest
import torch

from helpers import distributed as d


def _descendants(pid: int | None = None) -> set[int]:
    """Every live process below `pid` (default: this one), read from /proc."""
    pid = pid or os.getpid()
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] == "Z":  # a zombie is already dead
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


@pytest.fixture(scope="module")
def warm() -> set[int]:
    """Start the forkserver once (it stays, idle, for the life of this process) and note what runs."""
    if not Path("/proc").is_dir():
        pytest.skip("needs /proc (Linux) to list processes")
    d.launch(d.hello_worker, 1, timeout=60)
    return _descendants()


def _nothing_left(before: set[int], leftovers: dict[str, list[str]]) -> None:
    assert multiprocessing.active_children() == []
    assert _descendants() <= before, f"processes left behind: {_descendants() - before}"
    assert d.leftovers() == leftovers


def test_launch_20_times_in_a_row(warm: set[int]) -> None:
    before = d.leftovers()
    for attempt in range(20):
        out = d.launch(d.hello_worker, 2, timeout=60)
        assert [r["rank"] for r in out.results] == [0, 1], f"attempt {attempt}"
        assert all(r["sum"] == 3.0 and r["backend"] == "gloo" for r in out.results), f"attempt {attempt}"
        assert out.results[0]["pid"] != out.results[1]["pid"] != os.getpid()
    _nothing_left(warm, before)


def test_a_failing_worker_names_its_rank_and_leaves_nothing(warm: set[int]) -> None:
    before = d.leftovers()
    with pytest.raises(d.WorkerFailed, match=r"^rank 1 failed: ValueError: rank 1 was told to fail") as info:
        d.launch(d.failing_worker, 2, (1,), timeout=60)
    assert info.value.rank == 1
    assert "Traceback" in info.value.details and "failing_worker" in info.value.details
    _nothing_left(warm, before)


def test_a_hung_rank_hits_the_timeout_and_is_killed(warm: set[int]) -> None:
    with pytest.raises(d.LaunchTimeout, match=r"within 2 s; ranks \[0, 1\]"):
        d.launch(d.sleeping_worker, 2, (60.0,), timeout=2)
    _nothing_left(warm, d.leftovers())


def test_ddp_matches_single_process_training(warm: set[int]) -> None:
    setup = d.TrainingSetup(steps=6)
    out = d.launch(d.ddp_train_worker, 2, (setup,), timeout=60)
    rank0, rank1 = out.results
    assert rank0["params"] == rank1["params"], "parameters must be bitwise identical on every rank"
    reference = d.train_single_process(setup, world_size_to_mimic=2)
    ddp, single = torch.tensor(rank0["params"]), torch.tensor(reference["params"])
    assert torch.allclose(ddp, single, rtol=0, atol=1e-5), (ddp - single).abs().max()
    assert rank0["losses"] == pytest.approx(reference["losses"], abs=1e-5)
    assert rank0["local_losses"] != rank1["local_losses"], "each rank should see its own shard"


def test_rank_batches_split_the_global_batch_without_overlap() -> None:
    setup = d.TrainingSetup(samples=64, global_batch=8, steps=3)
    r0, r1 = d.rank_batches(setup, 2, 0), d.rank_batches(setup, 2, 1)
    for a, b in zip(r0, r1, strict=True):
        assert len(a) == len(b) == 4 and not set(a) & set(b)
    with pytest.raises(ValueError, match="split evenly"):
        d.rank_batches(setup, 3, 0)


def test_scaling_measurement_reports_both_configurations(warm: set[int]) -> None:
    points = d.measure_scaling(width=32, depth=1, global_batch=16, steps=2, timeout=60, rounds=1)
    assert [(p.ranks, p.threads_per_rank, p.communicates) for p in points] == [
        (1, 1, True),
        (2, 1, True),
        (2, 1, False),
        (1, 2, True),
    ]
    assert all(p.samples_per_second > 0 and p.step_seconds > 0 and p.allreduce_seconds > 0 for p in points)


def test_torchrun_script_runs_and_cleans_up() -> None:
    before = d.leftovers()
    result = d.run_torchrun(2, timeout=120)
    assert result.returncode == 0, result.output[-2000:]
    assert "--standalone" in result.command and "--nproc_per_node=2" in result.command
    assert result.result and result.result["world_size"] == 2 and result.result["identical_on_all_ranks"]
    assert "terminate called" not in result.output
    assert d.leftovers() == before, "torchrun left a /tmp/torchelastic_* folder"


def test_the_torchrun_script_is_a_module_that_runs_nothing_on_import() -> None:
    import inspect

    from helpers import ddp_train_script

    assert d.TRAINING_SCRIPT_PATH == Path(ddp_train_script.__file__)
    assert inspect.signature(d.run_torchrun).parameters["script"].default == d.TRAINING_SCRIPT_PATH
    text = d.TRAINING_SCRIPT_PATH.read_text(encoding="utf-8")
    assert "import helpers" not in text and "from helpers" not in text, "the script runs on its own"
    ending = text[text.index('if __name__ == "__main__":') :]
    lines = [line.strip() for line in ending.splitlines()]
    assert lines.index("sys.stdout.flush()") < lines.index("sys.stderr.flush()") < lines.index("os._exit(0)")


def notebook_worker(rank: int, world_size: int) -> int:
    return rank


def test_a_notebook_defined_worker_is_refused_with_a_reason() -> None:
    notebook_worker.__module__ = "__main__"  # what a function defined in a notebook cell looks like
    with pytest.raises(TypeError, match="defined in the notebook"):
        d.launch(notebook_worker, 2)
    with pytest.raises(TypeError, match="defined in the notebook"):
        d.launch(lambda rank, world: rank, 2)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"world_size": 0}, ValueError),
        ({"world_size": 2.0}, ValueError),
        ({"timeout": -1}, ValueError),
        ({"timeout": float("inf")}, ValueError),
        ({"backend": "mpi"}, ValueError),
    ],
)
def test_bad_arguments_are_refused_before_anything_starts(kwargs: dict, error: type) -> None:
    args = {"world_size": 2, **kwargs}
    with pytest.raises(error):
        d.launch(d.hello_worker, **args)
    assert multiprocessing.active_children() == []


def test_nccl_without_gpus_says_so() -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(RuntimeError, match="one CUDA GPU per rank"):
        d.launch(d.hello_worker, 2, backend="nccl")
    assert d.default_backend(2) == "gloo"


def test_to_plain_turns_tensors_into_lists() -> None:
    value = {"a": torch.tensor([1.0, 2.0]), "b": (torch.tensor(3), "x"), "c": [torch.zeros(1, 2)]}
    assert d.to_plain(value) == {"a": [1.0, 2.0], "b": (3, "x"), "c": [[[0.0, 0.0]]]}


def test_ports_and_sockets_are_on_loopback() -> None:
    with d.loopback_listener() as sock:
        host, port = sock.getsockname()
        assert host == "127.0.0.1" and port > 0
    assert 0 < d.free_loopback_port() < 65536
    assert d.loopback_interface().startswith("lo")


def test_training_setup_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="steps"):
        d.TrainingSetup(steps=0)
    with pytest.raises(ValueError, match="nproc"):
        d.run_torchrun(0)
