"""Chapter 09's GPU claims: a child process changes a shared CUDA tensor in place, and CUDA fails after fork.

The workers are written into a temporary module, as the chapter writes them with `%%writefile`,
because a child started with `spawn` or `forkserver` must import the function it runs.
"""

from __future__ import annotations

import importlib
import multiprocessing
import textwrap

import pytest
import torch

from helpers.processes import process_context, time_limit

from .missing import missing

WORKERS = textwrap.dedent(
    """
    import torch


    def add_one(t):
        t.add_(1)
        if t.is_cuda:
            torch.cuda.synchronize(t.device)  # the tensor's GPU, not the child's current one
        del t


    def mean_of_queued(tasks, results):
        t = tasks.get(timeout=60)  # a CUDA tensor from the parent, which keeps it alive
        results.put(t.mean().item())  # a plain float back


    def cuda_after_fork(conn):
        try:
            torch.zeros(1, device="cuda")
            conn.send("no error")
        except Exception as exc:
            conn.send(f"{type(exc).__name__}: {exc}")
        conn.close()
    """
)


@pytest.fixture
def cuda_workers(tmp_path, monkeypatch):
    (tmp_path / "ch09_cuda_workers.py").write_text(WORKERS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))  # children get the parent's sys.path
    import ch09_cuda_workers

    yield importlib.reload(ch09_cuda_workers)
    assert multiprocessing.active_children() == []


def _run_child(target, *args) -> int:
    p = process_context().Process(target=target, args=args)
    with time_limit([p], 120):
        p.start()
        p.join()
    return p.exitcode


@pytest.mark.gpu
def test_a_child_changes_a_shared_cuda_tensor_in_place(cuda_workers) -> None:
    t = torch.zeros(3, device="cuda")
    assert _run_child(cuda_workers.add_one, t) == 0
    assert t.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.gpu
def test_a_cuda_tensor_sent_through_a_queue_arrives_while_the_producer_keeps_it(cuda_workers) -> None:
    ctx = process_context()
    tasks, results = ctx.Queue(), ctx.Queue()
    t = torch.arange(4.0, device="cuda")  # the producer keeps t alive until the consumer has answered
    p = ctx.Process(target=cuda_workers.mean_of_queued, args=(tasks, results))
    with time_limit([p], 120):
        p.start()
        tasks.put(t)
        answer = results.get(timeout=120)
        p.join()
    assert answer == 1.5 and p.exitcode == 0


@pytest.mark.gpu2
def test_the_child_synchronises_the_tensors_own_gpu(cuda_workers) -> None:
    torch.cuda.set_device(0)
    t = torch.zeros(1000, device="cuda:1")
    assert _run_child(cuda_workers.add_one, t) == 0
    assert t.sum().item() == 1000.0 and t.device == torch.device("cuda:1")


@pytest.mark.gpu
def test_cuda_in_a_forked_child_after_cuda_init_fails(cuda_workers) -> None:
    if "fork" not in multiprocessing.get_all_start_methods():
        missing("the fork start method", "this system has no fork")
    torch.zeros(1, device="cuda")  # CUDA is initialised in this process
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    p = ctx.Process(target=cuda_workers.cuda_after_fork, args=(send,))
    with time_limit([p], 60):
        p.start()
        send.close()
        message = receive.recv()
        p.join()
    receive.close()
    assert "Cannot re-initialize CUDA in forked subprocess" in message
