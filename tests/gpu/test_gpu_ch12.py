"""Chapter 12's GPU claims, run for real on one GPU or two (Kaggle's T4 ×2); skipped here with the reason.

The workers are the ones the chapter writes with `%%writefile`: they are read from the notebook's
cells, so these tests check the code the learner runs.
"""

from __future__ import annotations

import math
from pathlib import Path
from types import ModuleType

import pytest
import torch
from torch import nn

from helpers.processes import launch
from helpers.sharding import bytes_per_rank

from .chapter_files import import_written_file
from .missing import missing

NOTEBOOK = "12_sharding_with_fsdp.ipynb"
PARTS = ("parameters", "gradients", "optimizer states")


@pytest.fixture(scope="module")
def worker_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ch12")


@pytest.fixture(scope="module")
def fsdp_worker(worker_folder: Path) -> ModuleType:
    return import_written_file(NOTEBOOK, "fsdp_worker", worker_folder)


@pytest.fixture(scope="module")
def fit_worker(worker_folder: Path) -> ModuleType:
    return import_written_file(NOTEBOOK, "fit_worker", worker_folder)


@pytest.fixture(scope="module")
def prefetch_worker(worker_folder: Path) -> ModuleType:
    return import_written_file(NOTEBOOK, "prefetch_worker", worker_folder)


@pytest.mark.gpu
def test_forward_pass_allocates_the_saved_activations_on_the_gpu() -> None:
    """Section 1: the allocator's growth during forward ≈ the saved activations minus the pre-existing x and y."""
    width, blocks, batch = 1024, 4, 64
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.ReLU()) for _ in range(blocks)]).cuda()
    x, y = torch.randn(batch, width, device="cuda"), torch.randn(batch, width, device="cuda")
    with torch.no_grad():
        model(x)  # cuBLAS workspace
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    loss = nn.functional.mse_loss(model(x), y)
    growth = torch.cuda.memory_allocated() - before
    expected = blocks * batch * width * 4  # each block's ReLU output; x and y existed before
    # all of them are on the GPU, and they are most of what the forward pass left allocated (torch 2.11 with
    # CUDA 13: mse_loss keeps one more block the size of an activation, docs/sources.md §4)
    assert expected <= growth < 2 * expected, (growth, expected)
    del loss


@pytest.mark.gpu2
def test_fsdp_halves_per_rank_memory_and_trains_like_ddp_with_nccl(fsdp_worker: ModuleType) -> None:
    """Section 2 on two GPUs: NCCL, half the bytes per rank, the same weights as DDP, a lower peak."""
    width, blocks, batch = 1024, 4, 64
    run = launch(fsdp_worker.train_both, 2, (width, blocks, batch, 5), backend="nccl", timeout=180)
    assert run.backend == "nccl"
    n_params = blocks * (width * width + width)
    for report in run.results:
        for strategy in ("DDP", "FSDP"):
            held = sum(report[strategy][p] for p in PARTS)
            assert held == bytes_per_rank(n_params, 4, "Adam", 2, strategy)["total"]
        assert all(report["FSDP"][p] * 2 == report["DDP"][p] for p in PARTS)
        assert report["max weight difference"] <= 1e-4  # the chapter's NCCL tolerance
        assert report["FSDP"]["peak GPU bytes"] < report["DDP"]["peak GPU bytes"]
        assert report["FSDP"]["seconds per step"] > 0 and report["DDP"]["seconds per step"] > 0


@pytest.mark.gpu
def test_one_gpu_machine_runs_the_two_ranks_with_gloo(fsdp_worker: ModuleType) -> None:
    """With fewer GPUs than ranks the launcher picks gloo and the worker trains on the CPU."""
    if torch.cuda.device_count() >= 2:
        missing("a machine with one GPU", "two GPUs here: the chapter uses NCCL (the gpu2 test covers it)")
    run = launch(fsdp_worker.train_both, 2, (64, 2, 8, 2), timeout=120)
    assert run.backend == "gloo"
    assert run.results[0]["FSDP"]["peak GPU bytes"] is None
    assert run.results[0]["max weight difference"] <= 1e-5


@pytest.mark.gpu
def test_a_capped_allocator_raises_out_of_memory_past_the_budget() -> None:
    """Section 3's cap: past `set_per_process_memory_fraction`, an allocation raises torch.OutOfMemoryError."""
    device = torch.device("cuda", 0)
    total = torch.cuda.get_device_properties(device).total_memory
    room = 256 * 2**20
    budget = torch.cuda.memory_reserved(device) + room  # what earlier tests left cached counts against the cap
    torch.cuda.set_per_process_memory_fraction(budget / total, device)
    try:
        with pytest.raises(torch.OutOfMemoryError):
            torch.empty(2 * room, dtype=torch.uint8, device=device)
        fits = torch.empty(room // 4, dtype=torch.uint8, device=device)  # and the GPU is still usable
        assert fits.numel() == room // 4
        del fits
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0, device)


@pytest.mark.gpu2
def test_the_model_that_does_not_fit_runs_out_of_memory_under_ddp_and_trains_under_fsdp2(
    fit_worker: ModuleType,
) -> None:
    """Section 3 on two GPUs: each rank capped at 1 GB; training needs 1.5 GB under DDP, about half under FSDP2."""
    budget, blocks = 10**9, 16
    width = int((1.5 * budget / 16 / blocks) ** 0.5) // 64 * 64  # the chapter's sizing rule
    run = launch(fit_worker.ddp_then_fsdp, 2, (budget, width, blocks, 8, 2), backend="nccl", timeout=300)
    bf16 = torch.cuda.get_device_capability(0) >= (8, 0)
    for report in run.results:
        assert report["DDP"] == "out of memory", report
        assert len(report["FSDP"]) == 2 and all(math.isfinite(v) for v in report["FSDP"]), report
        assert report["FSDP peak bytes"] <= budget, report
        assert report["16-bit type"] == ("torch.bfloat16" if bf16 else "torch.float16")


@pytest.mark.gpu2
def test_fsdp_runs_its_all_gathers_on_a_stream_of_their_own_beside_the_compute(prefetch_worker: ModuleType) -> None:
    """Section 6 on two GPUs: rank 0's all-gather kernels run on a stream other than the compute's and overlap it."""
    run = launch(prefetch_worker.both, 2, (1024, 4), backend="nccl", timeout=300)
    *_, beside = prefetch_worker.gathers_and_compute(run.results[0][False]["kernels"])
    assert beside > 0, "a prefetched all-gather runs while the block before it computes"
    order = {
        (x, p): prefetch_worker.gathers_before_compute(r["hooks"], p)
        for x, r in run.results[0].items()
        for p in ("forward", "backward")
    }
    assert [g for _, g in order[False, "forward"]] == [["0"], ["1"], ["2"], ["3"]], order
    assert all(str(int(b) - 1) in g for b, g in order[False, "backward"][:-1]), order
    assert all(str(int(b) + 1) in g for b, g in order[True, "forward"][:-1]), order
