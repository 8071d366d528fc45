"""Chapter 08's GPU claims, run for real on one GPU or two (Kaggle's T4 ×2); skipped here with the reason.

The DDP and throughput workers are the ones the chapter writes with `%%writefile`: they are read
from the notebook's cells, so these tests check the code the learner runs.
"""

from __future__ import annotations

import copy
import json
import shlex
from pathlib import Path
from types import ModuleType

import pytest
import torch
from torch import nn

from helpers import processes as dd

from .chapter_files import import_written_file

NOTEBOOK = "08_several_gpus.ipynb"


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ch08")


@pytest.fixture(scope="module")
def ddp_worker(work: Path) -> ModuleType:
    return import_written_file(NOTEBOOK, "ddp_worker", work)


@pytest.fixture(scope="module")
def allreduce_worker(work: Path) -> ModuleType:
    return import_written_file(NOTEBOOK, "allreduce_worker", work)


@pytest.fixture(scope="module")
def scaling_worker(work: Path, allreduce_worker: ModuleType) -> ModuleType:  # it imports section 5's timer
    return import_written_file(NOTEBOOK, "scaling_worker", work)


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))


def _one_process(ddp_worker: ModuleType, world_size: int = 2, epochs: int = 2) -> torch.Tensor:
    """The chapter's reference: one process on the union of the ranks' batches."""
    from torch.utils.data import DataLoader, DistributedSampler

    data, model = ddp_worker.make_data(), ddp_worker.make_model()
    opt = torch.optim.SGD(model.parameters(), lr=ddp_worker.LR)
    samplers = [
        DistributedSampler(data, num_replicas=world_size, rank=r, shuffle=True, seed=0) for r in range(world_size)
    ]
    loaders = [DataLoader(data, batch_size=ddp_worker.GLOBAL_BATCH // world_size, sampler=s) for s in samplers]
    for epoch in range(epochs):
        for s in samplers:
            s.set_epoch(epoch)
        for batches in zip(*loaders, strict=True):
            x, y = torch.cat([b[0] for b in batches]), torch.cat([b[1] for b in batches])
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


# -- two GPUs ---------------------------------------------------------------------------------------


@pytest.mark.gpu2
def test_real_replicate_scatter_apply_gather_equals_single_device() -> None:
    from torch.nn.parallel import gather, parallel_apply, replicate, scatter

    model, batch = _model().to("cuda:0"), torch.randn(10, 8)
    with torch.no_grad():
        chunks = scatter(batch, [0, 1])
        replicas = replicate(model, [0, 1])
        outputs = parallel_apply(replicas, chunks)
        result = gather(outputs, target_device=0)
        expected = model(batch.to("cuda:0"))
    assert [c.shape[0] for c in chunks] == [5, 5]
    assert [str(o.device) for o in outputs] == ["cuda:0", "cuda:1"] and result.device == torch.device("cuda:0")
    torch.testing.assert_close(result, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.gpu2
def test_data_parallel_splits_over_two_gpus_and_sums_gradients_on_gpu0() -> None:
    model, batch = _model(), torch.randn(10, 8)
    with pytest.raises(RuntimeError, match="module must have its parameters and buffers on device cuda:0"):
        nn.DataParallel(model, device_ids=[0, 1])(batch)  # with two GPUs nothing moves the model for you
    dp = nn.DataParallel(model.to("cuda:0"), device_ids=[0, 1])
    assert dp.device_ids == [0, 1]
    seen = []  # hooks are shared by the replicas: each records where its chunk ran
    hook = model[0].register_forward_pre_hook(lambda _m, args: seen.append((str(args[0].device), args[0].shape[0])))
    try:
        out = dp(batch)
    finally:
        hook.remove()
    assert sorted(seen) == [("cuda:0", 5), ("cuda:1", 5)], seen
    assert out.device == torch.device("cuda:0")
    out.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    assert all(g.device == torch.device("cuda:0") for g in grads)
    model.zero_grad()
    model(batch.to("cuda:0")).sum().backward()
    for a, p in zip(grads, model.parameters(), strict=True):
        torch.testing.assert_close(a, p.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.gpu2
def test_the_chapters_ddp_worker_uses_nccl_and_matches_one_process(ddp_worker: ModuleType, work: Path) -> None:
    out_dir = work / "spawn"
    out_dir.mkdir()
    run = dd.launch(ddp_worker.main, 2, (str(out_dir),), init_group=False, timeout=300)
    rank0, rank1 = run.results
    assert rank0["backend"] == "nccl" and rank0["identical_on_all_ranks"]
    assert rank0["params"] == rank1["params"]
    # The loss all-reduced for logging (SUM, then / world_size) is the mean of the ranks' own losses, on NCCL too.
    assert rank0["global_losses"] == rank1["global_losses"]
    means = [(a + b) / 2 for a, b in zip(rank0["losses"], rank1["losses"], strict=True)]
    assert max(abs(a - b) for a, b in zip(rank0["global_losses"], means, strict=True)) < 1e-5
    gap = (torch.tensor(rank0["params"]) - _one_process(ddp_worker)).abs().max().item()
    assert gap < 1e-4


@pytest.mark.gpu2
def test_torchrun_standalone_and_two_nodes_use_nccl(ddp_worker: ModuleType, work: Path) -> None:
    script = Path(ddp_worker.__file__)
    standalone = work / "torchrun"
    standalone.mkdir()
    command = ["torchrun", "--standalone", "--nproc-per-node=2", str(script), str(standalone)]
    dd.run_commands([command], timeout=300, done_files=[standalone / "result.json"])
    nodes = work / "nodes"
    nodes.mkdir()
    port = dd.free_loopback_port()
    commands = [
        ["torchrun", "--nnodes=2", f"--node-rank={n}", "--nproc-per-node=1", "--rdzv-backend=c10d"]
        + [f"--rdzv-endpoint=127.0.0.1:{port}", "--rdzv-id=gputest", str(script), str(nodes)]
        for n in (0, 1)
    ]
    gpu_per_node = [{"CUDA_VISIBLE_DEVICES": "0"}, {"CUDA_VISIBLE_DEVICES": "1"}]
    dd.run_commands(commands, timeout=300, envs=gpu_per_node, done_files=[nodes / "result.json"] * 2)
    reference = _one_process(ddp_worker)
    for folder in (standalone, nodes):
        result = json.loads((folder / "result.json").read_text())
        assert result["backend"] == "nccl" and result["identical_on_all_ranks"], folder.name
        assert (torch.tensor(result["params"]) - reference).abs().max().item() < 1e-4, folder.name


@pytest.mark.gpu2
def test_ddp_pays_on_the_chapters_big_workload_when_the_all_reduce_costs_less_than_it_saves(
    scaling_worker: ModuleType,
) -> None:
    """The chapter's rule on its 'big' workload (width 4096, depth 4, global batch 4096): DDP costs about
    half a step of work plus one all-reduce of the gradients (less, where they overlap), so it beats one GPU
    when that all-reduce costs clearly less than the half step a GPU saves. NCCL over peer-to-peer or shared
    memory does that on two T4s; where a container leaves NCCL only sockets, the all-reduce can cost more
    than the half step, and then DDP need not win: the figures are printed either way."""
    width, depth, batch, steps = 4096, 4, 4096, 5
    model = scaling_worker.make_mlp(width, depth).to("cuda:0")
    x, y = torch.randn(batch, width, device="cuda:0"), torch.randint(0, 10, (batch,), device="cuda:0")
    scaling_worker.seconds_per_step(model, x, y, 1)
    one_gpu = min(scaling_worker.seconds_per_step(model, x, y, steps) for _ in range(2))
    del model, x, y
    torch.cuda.empty_cache()
    run = dd.launch(scaling_worker.ddp_throughput, 2, (width, depth, batch, steps, 4), init_group=False, timeout=600)
    ddp = max(r["DDP"] for r in run.results)
    no_sync = max(r["DDP, accumulate\nunder no_sync"] for r in run.results)
    accumulate = max(r["DDP, accumulate"] for r in run.results)
    all_reduce = max(r["all_reduce"] for r in run.results)
    figures = (
        f"one GPU {one_gpu * 1e3:.1f} ms/step, DDP {ddp * 1e3:.1f} ms/step ({one_gpu / ddp:.2f}x), "
        f"one all-reduce of the gradients {all_reduce * 1e3:.1f} ms, half a step {one_gpu / 2 * 1e3:.1f} ms; "
        f"accumulating 4 micro-batches {accumulate * 1e3:.1f} ms, under no_sync {no_sync * 1e3:.1f} ms"
    )
    print(figures)
    assert ddp < 1.3 * (one_gpu / 2 + all_reduce), f"DDP costs about half the work plus one all-reduce: {figures}"
    if all_reduce < one_gpu / 4:
        assert ddp < one_gpu, f"the all-reduce costs less than half what a GPU saves, so DDP should win: {figures}"
    assert no_sync < accumulate, f"no_sync skips 3 of the 4 all-reduces of an accumulated step: {figures}"


@pytest.mark.gpu2
def test_gradients_averaged_by_hand_equal_ddps_on_nccl_and_ddp_is_faster(allreduce_worker: ModuleType) -> None:
    """Sections 5 and 6 on two GPUs: by hand and DDP reach the same weights over NCCL; DDP's buckets and overlap
    make its step shorter than 18 all-reduces after backward; the ring by hand sums as NCCL's all-reduce does;
    a 16 MiB all-reduce reaches a bus bandwidth any PCIe or NVLink pair exceeds (1 GB/s)."""
    sizes = [2**12, 2**24]
    run = dd.launch(allreduce_worker.by_hand_and_ddp, 2, (20, sizes, 5), timeout=300)
    assert run.backend == "nccl"
    figures = {k: max(r[k] for r in run.results) for k in ("gap", "by hand", "DDP")}
    busbw = sizes[-1] / max(r["sweep"][-1] for r in run.results) / 1e9  # 2(n - 1)/n = 1 on two ranks
    print(figures, f"bus bandwidth at 16 MiB: {busbw:.1f} GB/s")
    assert figures["gap"] < 1e-5 and figures["DDP"] < figures["by hand"], figures
    assert busbw > 1.0, busbw
    ring = dd.launch(allreduce_worker.ring_check, 2, timeout=120)
    assert ring.backend == "nccl" and all(r["equal"] and r["sent"] == r["bytes"] for r in ring.results)


# -- one GPU ----------------------------------------------------------------------------------------


@pytest.mark.gpu
def test_data_parallel_on_one_gpu_moves_the_model_and_still_scatters() -> None:
    model, batch = _model(), torch.randn(10, 8)
    dp = nn.DataParallel(copy.deepcopy(model), device_ids=[0])
    assert next(dp.module.parameters()).device == torch.device("cuda:0"), "the constructor moved the model"
    seen = []
    hook = dp.module[0].register_forward_pre_hook(lambda _m, args: seen.append((str(args[0].device), len(args[0]))))
    try:
        with torch.no_grad():
            out = dp(batch)  # a CPU batch: scatter copies it to cuda:0 as one chunk
    finally:
        hook.remove()
    assert seen == [("cuda:0", 10)] and out.device == torch.device("cuda:0")
    torch.testing.assert_close(out.cpu(), model(batch), rtol=1e-4, atol=1e-5)


@pytest.mark.gpu
def test_one_visible_gpu_and_two_ranks_fall_back_to_gloo(ddp_worker: ModuleType, work: Path) -> None:
    out_dir = work / "one_gpu"
    out_dir.mkdir()
    command = ["torchrun", "--standalone", "--nproc-per-node=2", ddp_worker.__file__, str(out_dir)]
    dd.run_commands([command], timeout=300, envs=[{"CUDA_VISIBLE_DEVICES": "0"}], done_files=[out_dir / "result.json"])
    result = json.loads((out_dir / "result.json").read_text())
    assert result["backend"] == "gloo", shlex.join(command)
    assert (torch.tensor(result["params"]) - _one_process(ddp_worker)).abs().max().item() < 1e-5
