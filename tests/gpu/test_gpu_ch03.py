"""Chapter 03's GPU claims: which calls copy, copy_ semantics, hidden waits, and small vs big copies."""

from __future__ import annotations

import pytest
import torch

from helpers.transfers import hidden_sync_timings, measure_pieces


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
    rows = {r.read: r for r in hidden_sync_timings("cuda", size=2048, work=20)}
    for name in ("y[0, 0].item()", "y[0, :3].tolist()", "explicit synchronize"):
        row = rows[name]
        assert row.read_seconds > row.queue_seconds, f"{name}: the read should absorb the GPU work ({row})"


@pytest.mark.gpu
def test_one_big_host_to_device_copy_beats_many_small_ones() -> None:
    total = 16 * 2**20
    one = measure_pieces(total, 1, "cuda", repeats=5)
    many = measure_pieces(total, 4096, "cuda", repeats=5)  # 4 KiB pieces
    assert one.direction == "host → cuda:0" and many.direction == "host → cuda:0"
    assert one.gb_per_s > 2 * many.gb_per_s, f"one copy {one.gb_per_s:.2f} GB/s, many {many.gb_per_s:.2f} GB/s"
    assert one.seconds < many.seconds
