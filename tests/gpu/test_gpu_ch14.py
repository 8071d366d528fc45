"""Chapter 14's GPU claims, checked on a real CUDA GPU (skipped, with the reason, elsewhere).

What the chapter says a GPU trace shows: the GPU's kernels on stream lanes (`helpers.timelines.step_spans`)
and device time in `key_averages()`, each range's GPU-side copy left out; pinned whole batches fetched with
no one-sample indexing; `.item()` as a `cudaStreamSynchronize` on the host, once per step,
gone once the losses stay on the device; `set_sync_debug_mode("warn")` warning on it; a tiny batch
leaving the GPU idle more than a big one, and costing far more per sample; `profile_memory` events
for the CUDA allocator, with the forward pass's blocks alive at the peak; a memory snapshot naming the
line behind a block; and on two GPUs, DDP handing small buckets to NCCL while gradients are still
being computed, and one bucket only after them, with one NCCL kernel a bucket.
Floors are ones a Kaggle T4 and an H100 both meet; every timing synchronises the GPU.
"""

from __future__ import annotations

import json
import pickle
import warnings
from pathlib import Path
from types import ModuleType

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function

from helpers import processes
from helpers.exercises.ch14 import covered_ms
from helpers.profiling import quiet_stderr
from helpers.timelines import step_spans

from .chapter_files import import_written_file
from .recorded import recorded

pytestmark = pytest.mark.gpu
NOTEBOOK = "14_reading_a_timeline.ipynb"
DEV = torch.device("cuda:0")
PHASES = ("forward", "backward", "optimizer", "bookkeeping")
ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.CUDA]


def _step_parts(batch: int) -> tuple[nn.Module, torch.optim.Optimizer, torch.Tensor, torch.Tensor]:
    """The chapter's model (32 → 64 → 64 → 10, Adam) and one batch on the GPU."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)).to(DEV)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(batch, 32, device=DEV)
    return model, opt, x, x[:, :10].argmax(dim=1)


def _steps(model, opt, x, y, steps: int, item_each_step: bool) -> list:
    losses = []
    for _ in range(steps):
        with record_function("forward"):
            loss = F.cross_entropy(model(x), y)
        with record_function("backward"):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        with record_function("optimizer"):
            opt.step()
        with record_function("bookkeeping"):
            losses.append(loss.item() if item_each_step else loss.detach())
    return losses


def _trace(batch: int, steps: int = 4, item_each_step: bool = False):
    parts = _step_parts(batch)
    _steps(*parts, steps=2, item_each_step=False)  # warm-up: cuBLAS, the allocator, Adam's state
    torch.cuda.synchronize(DEV)
    with quiet_stderr(), profile(activities=ACTIVITIES) as prof:
        _steps(*parts, steps=steps, item_each_step=item_each_step)
        torch.cuda.synchronize(DEV)
    return prof


def _idle_share(prof) -> float:
    """Share of the traced window (first to last GPU span) in which no GPU span runs."""
    spans = sorted((s.start_ms, s.end_ms) for s in step_spans(prof.events(), PHASES) if s.lane.startswith("GPU"))
    return 1 - covered_ms(spans) / (spans[-1][1] - spans[0][0])


def test_a_gpu_trace_has_kernels_on_stream_lanes_and_device_time() -> None:
    prof = _trace(64)
    spans = step_spans(prof.events(), PHASES)
    gpu_lanes = {s.lane for s in spans if s.lane.startswith("GPU 0 stream")}
    assert gpu_lanes, f"no GPU lane among {sorted({s.lane for s in spans})}"
    assert {"forward", "backward", "optimizer"} <= {s.name for s in spans if s.lane == "host"}
    assert "CPU operators" not in {s.lane for s in spans}, "with GPU events the device lanes are the streams"
    device_us = sum(e.self_device_time_total for e in prof.key_averages() if not e.is_user_annotation)
    assert device_us > 0, "key_averages() counts the kernels' device time"
    copies = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and e.is_user_annotation]
    assert "forward" in {e.name for e in copies}, "the trace holds a GPU-side copy of the forward range"
    assert "forward" not in {s.name for s in spans if s.lane.startswith("GPU")}, "step_spans leaves the copies out"


def test_pinned_whole_batches_index_no_single_sample() -> None:
    """Fix 2's check: pinning runs operators inside the DataLoader's range, but no one-sample `aten::select`."""
    from torch.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset

    data = TensorDataset(torch.randn(512, 32), torch.randint(0, 10, (512,)))
    whole = DataLoader(data, batch_size=None, sampler=BatchSampler(RandomSampler(data), 32, False), pin_memory=True)
    assert all(t.is_pinned() for t in next(iter(whole))), "pin_memory=True pins each batch"

    def per_batch(loader: DataLoader, op: str | None) -> float:
        def inside(e) -> bool:  # noqa: ANN001
            while (e := e.cpu_parent) is not None and not e.name.startswith("enumerate(DataLoader)"):
                pass
            return e is not None

        with quiet_stderr(), profile(activities=ACTIVITIES) as prof:
            for _ in zip(range(4), loader, strict=False):
                pass
        ops = [e for e in prof.events() if (e.name == op or op is None and e.name.startswith("aten::")) and inside(e)]
        return len(ops) / 4

    assert per_batch(DataLoader(data, batch_size=32, shuffle=True), "aten::select") == 2 * 32
    assert per_batch(whole, "aten::select") == 0
    assert per_batch(whole, None) > 0, "pinning's own operators run inside the range"


def test_item_each_step_is_a_stream_synchronize_and_keeping_losses_on_the_device_removes_it() -> None:
    def syncs(prof) -> int:
        return sum(1 for e in prof.events() if e.name == "cudaStreamSynchronize")

    steps = 4
    with_item, without = _trace(64, steps, item_each_step=True), _trace(64, steps, item_each_step=False)
    assert syncs(with_item) >= steps, f"{syncs(with_item)} cudaStreamSynchronize for {steps} .item() calls"
    assert syncs(without) < steps, f"{syncs(without)} cudaStreamSynchronize with the losses kept on the device"
    waits = [s for s in step_spans(with_item.events(), PHASES) if s.lane == "host waits"]
    assert len(waits) >= steps, "step_spans draws each wait on the 'host waits' lane"
    quiet = [s for s in step_spans(without.events(), PHASES) if s.lane == "host waits"]
    assert len(quiet) < steps, f"without .item() no wait a step (Adam's own reads are not drawn): {len(quiet)}"


def test_sync_debug_mode_warns_on_item_in_a_training_loop() -> None:
    parts = _step_parts(64)
    torch.cuda.set_sync_debug_mode("warn")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _steps(*parts, steps=4, item_each_step=True)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert len(caught) >= 4, [str(w.message)[:80] for w in caught]


def test_a_tiny_batch_leaves_the_gpu_idle_more_and_costs_far_more_per_sample() -> None:
    small, big = _trace(16), _trace(2**16)

    def step_ms(prof) -> float:
        kernels = [s for s in step_spans(prof.events(), PHASES) if s.lane.startswith("GPU")]
        return (max(s.end_ms for s in kernels) - min(s.start_ms for s in kernels)) / 4  # four steps traced

    assert _idle_share(small) > 0.5, f"batch 16: GPU idle {_idle_share(small):.0%} of the steps"
    assert _idle_share(big) < _idle_share(small)
    assert step_ms(small) / 16 > 5 * step_ms(big) / 2**16


def test_the_chapter_measured_a_tiny_batch_launch_bound() -> None:
    """The chapter's own figures from this self-test: a sample costs far more at batch 16, and the GPU idles more."""
    cost = recorded("14", "a sample's cost, batch 16 over the big batch")
    assert cost["value"] > 5, cost
    small, big = recorded("14", "device idle share, batch 16"), recorded("14", "device idle share, the big batch")
    assert small["value"] > big["value"], (small, big)


def test_profile_memory_records_cuda_blocks_and_forward_holds_the_peak(tmp_path: Path) -> None:
    model, opt, x, y = _step_parts(2**16)
    _steps(model, opt, x, y, steps=1, item_each_step=False)
    with quiet_stderr(), profile(activities=ACTIVITIES, profile_memory=True) as prof:
        _steps(model, opt, x, y, steps=1, item_each_step=False)
        torch.cuda.synchronize(DEV)
    prof.export_chrome_trace(str(tmp_path / "memory.json"))
    trace = json.loads((tmp_path / "memory.json").read_text())["traceEvents"]
    ranges = [
        (e["ts"], e["ts"] + e["dur"], e["name"])
        for e in trace
        if e.get("name") in PHASES and e.get("cat") == "user_annotation"
    ]
    memory = sorted(
        (e for e in trace if e.get("name") == "[memory]" and e["args"]["Device Type"] == 1), key=lambda e: e["ts"]
    )
    assert memory, "profile_memory records the CUDA allocator's blocks as [memory] events of device type 1"
    live, total, peak = {}, 0, (0, {})
    for e in memory:
        nbytes, address = e["args"]["Bytes"], e["args"]["Addr"]
        total += nbytes
        if nbytes > 0:
            where = next((name for start, end, name in ranges if start <= e["ts"] <= end), "outside")
            live[address] = (nbytes, where)
        else:
            live.pop(address, None)
        if total > peak[0]:
            peak = (total, dict(live))
    forward = sum(n for n, where in peak[1].values() if where == "forward")
    assert forward > 0.3 * peak[0], f"forward holds {forward} of the peak's {peak[0]} bytes"


def test_a_memory_snapshot_names_the_line_behind_a_block(tmp_path: Path) -> None:
    parts = _step_parts(2**16)
    torch.cuda.memory._record_memory_history(max_entries=100_000, stacks="python")
    try:
        _steps(*parts, steps=1, item_each_step=False)
        torch.cuda.synchronize(DEV)
        torch.cuda.memory._dump_snapshot(str(tmp_path / "snapshot.pickle"))
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)
    with open(tmp_path / "snapshot.pickle", "rb") as f:
        events = pickle.load(f)["device_traces"][DEV.index]
    allocs = [e for e in events if e["action"] == "alloc"]
    assert allocs and all({"addr", "size", "frames"} <= e.keys() for e in allocs)
    # A block made on backward's own thread may carry no Python frame; the forward pass's carry this file's.
    biggest = max((e for e in allocs if e["frames"]), key=lambda e: e["size"])
    torch_dir = str(Path(torch.__file__).parent)
    assert any(fr["filename"] == __file__ for fr in biggest["frames"]), "this file's line, among the frames"
    outside = next(fr for fr in biggest["frames"] if not fr["filename"].startswith(torch_dir))
    assert outside["filename"] == __file__, f"the innermost frame outside torch is the caller's line, not {outside}"


@pytest.fixture(scope="module")
def ddp_trace_worker(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return import_written_file(NOTEBOOK, "ddp_trace_worker", tmp_path_factory.mktemp("ch14"))


@pytest.mark.gpu2
def test_ddp_on_two_gpus_hands_small_buckets_to_nccl_while_gradients_are_computed(
    ddp_trace_worker: ModuleType, tmp_path: Path
) -> None:
    run = processes.launch(ddp_trace_worker.traced_step, 2, (str(tmp_path),), timeout=300)
    assert run.backend == "nccl"
    for cap, spans in run.results[0].items():
        gradients_end = max(s[4] for s in spans if s[1] == "gradients")
        handed = [s[3] for s in spans if s[1] == "handed over"]
        kernels = [s for s in spans if s[1] == "all-reduce"]
        assert all(s[0] == "GPU" for s in kernels) and len(kernels) >= len(handed), f"one NCCL kernel a bucket: {cap}"
        early = sum(start < gradients_end for start in handed)
        said = f"buckets of {cap} MB: {early} of {len(handed)} handed over before the last gradient"
        assert early >= 1 if cap < 1 else (early, len(handed)) == (0, 1), said
    names = sorted(p.name for p in tmp_path.glob("ddp_rank*.json"))
    assert names == [f"ddp_rank{r}_{cap}MB.json" for r in (0, 1) for cap in ("0.25", "25")]
