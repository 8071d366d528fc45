"""Chapter 08's GPU claims, run for real on two GPUs (Kaggle's T4 ×2); skipped here with the reason."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from helpers import distributed as dd
from helpers.parallel import check_matches_single_device, data_parallel_forward

pytestmark = pytest.mark.gpu2


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))


def test_real_replicate_scatter_apply_gather_equals_single_device() -> None:
    model, batch = _model().to("cuda:0"), torch.randn(10, 8)
    trace = data_parallel_forward(model, batch, [0, 1])
    assert not trace.simulated and trace.chunk_sizes == [5, 5]
    assert trace.replica_devices == ["cuda:0", "cuda:1"] and trace.output_devices == ["cuda:0", "cuda:1"]
    assert trace.result.device == torch.device("cuda:0")
    assert check_matches_single_device(model, batch, trace.result) < 1e-4


def test_data_parallel_splits_over_two_gpus_and_sums_gradients_on_gpu0() -> None:
    model, batch = _model().to("cuda:0"), torch.randn(10, 8)
    dp = nn.DataParallel(model, device_ids=[0, 1])
    assert dp.device_ids == [0, 1]
    seen = []  # each replica's first layer records where its chunk of the batch ran (hooks are shared by replicas)
    hook = model[0].register_forward_pre_hook(lambda _m, args: seen.append((str(args[0].device), args[0].shape[0])))
    try:
        out = dp(batch)  # the batch may stay on the CPU: scatter copies each chunk to its GPU
    finally:
        hook.remove()
    assert sorted(seen) == [("cuda:0", 5), ("cuda:1", 5)], seen
    assert out.device == torch.device("cuda:0")
    check_matches_single_device(model, batch, out)
    out.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    assert all(g.device == torch.device("cuda:0") for g in grads)
    model.zero_grad()
    model(batch.to("cuda:0")).sum().backward()
    for a, p in zip(grads, model.parameters(), strict=True):
        assert torch.allclose(a, p.grad, atol=1e-5)


def test_ddp_with_nccl_on_two_gpus_matches_one_process() -> None:
    setup = dd.TrainingSetup(steps=8)
    out = dd.launch(dd.ddp_train_worker, 2, (setup,), backend="nccl", timeout=300)
    assert out.backend == "nccl"
    rank0, rank1 = out.results
    assert rank0["params"] == rank1["params"], "DDP keeps the replicas bitwise identical"
    single = dd.train_single_process(setup, world_size_to_mimic=2)
    gap = (torch.tensor(rank0["params"]) - torch.tensor(single["params"])).abs().max().item()
    assert gap < 1e-4


def test_default_backend_is_nccl_with_two_gpus() -> None:
    assert dd.default_backend(2) == "nccl"
    hello = dd.launch(dd.hello_worker, 2, timeout=300)
    assert [r["backend"] for r in hello.results] == ["nccl", "nccl"]
    assert [r["sum"] for r in hello.results] == [3.0, 3.0], "all-reduce sums rank + 1 over the two ranks"


def test_torchrun_script_uses_nccl_on_two_gpus() -> None:
    before = dd.leftovers()
    run = dd.run_torchrun(2, timeout=300)
    assert run.returncode == 0, run.output[-3000:]
    assert run.result["backend"] == "nccl" and run.result["world_size"] == 2
    assert run.result["identical_on_all_ranks"] and "terminate called" not in run.output
    assert dd.leftovers() == before, "torchrun's logs and shared-memory files are cleaned up"
