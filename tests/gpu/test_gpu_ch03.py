"""Chapter 03's GPU claims: which calls copy, copy_ semantics, hidden waits, and small vs big copies."""

from __future__ import annotations

import statistics

import pytest
import torch

from helpers.transfers import hidden_sync_timings, measure_pieces

DEV = torch.device("cuda", 0)  # an explicit index: the helpers label their records with the device they are given


@pytest.mark.gpu
def test_moving_to_where_a_tensor_already_is_returns_it() -> None:
    t = torch.arange(6.0)
    g = t.to("cuda:0")
    assert g is not t and g.device == torch.device("cuda", 0)
    assert g.to(g.device) is g
    assert g.to("cuda:0") is g
    assert g.cuda(0) is g
    assert g.cpu() is not g and g.cpu().device.type == "cpu"
    assert t.cuda(0) is not t


@pytest.mark.gpu2
def test_cuda_1_returns_the_same_tensor_only_when_already_there() -> None:
    X = torch.ones(2, 3, device="cuda:0")
    Z = X.cuda(1)
    assert Z.device == torch.device("cuda", 1)
    assert Z.cuda(1) is Z
    assert X.cuda(1) is not X
    Y = torch.rand(2, 3, device="cuda:1")
    assert (Y + Z).device == torch.device("cuda", 1)
    assert torch.equal(Z.cpu(), X.cpu())


@pytest.mark.gpu
def test_copy_into_a_cpu_tensor_returns_that_cpu_tensor() -> None:
    cpu_tensor = torch.zeros(2, 3)
    gpu_tensor = torch.arange(6.0, device="cuda").reshape(2, 3)
    result = cpu_tensor.copy_(gpu_tensor)
    assert result is cpu_tensor
    assert result.device.type == "cpu"
    assert torch.equal(cpu_tensor, gpu_tensor.cpu())


@pytest.mark.gpu
def test_numpy_refuses_a_gpu_tensor() -> None:
    with pytest.raises(TypeError):
        torch.ones(2, device="cuda").numpy()
    assert torch.ones(2, device="cuda").cpu().numpy().tolist() == [1.0, 1.0]


@pytest.mark.gpu
def test_reading_a_value_waits_for_the_queued_work() -> None:
    """Every read that needs values on the host (print, .item(), .tolist(), .numpy()) absorbs the queued work."""
    runs = [hidden_sync_timings(DEV, size=2048, work=20) for _ in range(3)]  # ≈ 80 ms of matmuls per read on a T4
    for name in [r.read for r in runs[0]]:
        rows = [row for run in runs for row in run if row.read == name]
        queue = statistics.median(r.queue_seconds for r in rows)
        read = statistics.median(r.read_seconds for r in rows)
        assert read > 2 * queue, f"{name}: the read should absorb the GPU work: {[str(r) for r in rows]}"


@pytest.mark.gpu
def test_one_big_host_to_device_copy_beats_many_small_ones() -> None:
    """The same 64 MiB as one copy and as 16,384 copies of 4 KiB (pageable, as in the chapter).

    Each copy has a fixed cost of microseconds, so 16,384 copies cost tens of milliseconds more than
    one; the one big copy takes about 5-20 ms on a T4 host. `measure_pieces` synchronises around every
    repeat and keeps the fastest; the rounds interleave the two cases, so that a slow moment on a shared
    host hits both, and the test compares the medians of the rounds with a ratio far below the expected ≈ 10×.
    """
    total = 64 * 2**20
    ones, manys = [], []
    for _ in range(3):
        ones.append(measure_pieces(total, 1, DEV, repeats=3))
        manys.append(measure_pieces(total, total // 4096, DEV, repeats=3))
    assert {r.direction for r in ones + manys} == {"host → cuda:0"}
    one = statistics.median(r.seconds for r in ones)
    many = statistics.median(r.seconds for r in manys)
    assert many > 2 * one, f"one copy: {[str(r) for r in ones]}; many: {[str(r) for r in manys]}"
