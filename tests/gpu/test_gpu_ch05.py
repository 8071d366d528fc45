"""Chapter 05's GPU claims, checked on a real CUDA GPU (skipped, with the reason, elsewhere).

The allocator's arithmetic (512-byte blocks; 2 MiB, 20 MiB and own-size segments) is checked as
deltas from a clean start. One thing in the process is not a tensor of ours but lives in the
caching allocator all the same: **cuBLAS's workspace**, 8 MiB + 128 KiB on sm_75 (Kaggle's T4), 32 MiB
on sm_90. torch 2.10 to 2.13 allocate it at the first cuBLAS call of the process (any matmul or linear
layer, in any earlier test) and keep it; torch 2.15 allocates one for each product and frees it after,
unless TORCH_CUBLAS_WORKSPACE_CACHE=1 (docs/sources.md §2). A kept one sits, on a T4, in a 20 MiB
segment whose free remainder (≈ 11.9 MiB) `empty_cache()` cannot return and a later 1-10 MiB request
is cut from, so the fixture gives the workspace back first (see `_release_cublas_workspaces`); the
next cuBLAS call allocates a fresh one. One made for each product shows in a peak, so a ceiling on a
peak allows for it (`_workspace_bytes`).
"""

from __future__ import annotations

import gc
import os
import pickle
import subprocess
import sys

import pytest
import torch

from helpers.exercises.ch05 import _KEPT, _blocks
from helpers.memory import MIB, MemoryCounters
from helpers.processes import run_fresh_python
from helpers.standins import CachingAllocatorModel

from .missing import missing

pytestmark = pytest.mark.gpu
DEV = torch.device("cuda:0")


def _release_cublas_workspaces() -> None:
    """Hand cuBLAS's cached workspaces back to the caching allocator, so that `empty_cache` can return them.

    `torch._C._cuda_clearCublasWorkspaces` is private; PyTorch's own memory-leak check calls it for the
    same reason before it reads `memory_allocated` (torch/testing/_internal/common_utils.py,
    `CudaMemoryLeakCheck`). Where a torch build lacks it, the tests below that need an empty allocator
    skip with the reason instead of failing on the workspace's segment.
    """
    clear = getattr(torch._C, "_cuda_clearCublasWorkspaces", None)
    if clear is not None:
        clear()


def _workspace_bytes() -> int:
    """The most a cuBLAS or cuBLASLt workspace takes: as torch reports it where it can (2.13 and 2.15), else
    PyTorch's default for the GPU (`CUBLAS_WORKSPACE_CONFIG` `:4096:2:16:8`, 32 MiB from sm_90 on)."""
    queries = [
        getattr(torch.backends.cuda, name, None) for name in ("cublas_workspace_size", "cublaslt_workspace_size")
    ]
    if sizes := [query() for query in queries if query is not None]:
        return max(sizes)
    return 32 * MIB if torch.cuda.get_device_properties(DEV).major >= 9 else 8 * MIB + 128 * 1024


def _default_allocator_or_skip() -> None:
    """The segment arithmetic below is the default allocator's; `PYTORCH_CUDA_ALLOC_CONF` options change it."""
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF") or os.environ.get("PYTORCH_ALLOC_CONF")
    if conf:
        missing(
            "the default caching-allocator settings",
            f"PYTORCH_CUDA_ALLOC_CONF is {conf!r}; chapter 05 teaches the default segment sizes",
        )


@pytest.fixture(autouse=True)
def clean_allocator():
    gc.collect()
    torch.cuda.synchronize(DEV)
    _release_cublas_workspaces()
    torch.cuda.empty_cache()
    yield
    gc.collect()
    torch.cuda.synchronize(DEV)
    torch.cuda.empty_cache()


def _counters(device: torch.device) -> MemoryCounters:
    """The four counters the chapter reads, straight from torch."""
    return MemoryCounters(
        torch.cuda.memory_allocated(device),
        torch.cuda.memory_reserved(device),
        torch.cuda.max_memory_allocated(device),
        torch.cuda.max_memory_reserved(device),
        str(device),
    )


def _warm_up_cublas() -> None:
    """Make cuBLAS allocate its workspaces now (matmul and linear), so that they are in a baseline taken next."""
    a = torch.ones(64, 64, device=DEV)
    torch.nn.functional.linear(a, a, a[0])
    a @ a
    torch.cuda.synchronize(DEV)


def test_counters_are_plain_ints_and_allocated_never_exceeds_reserved() -> None:
    keep = torch.empty(3 * MIB, dtype=torch.uint8, device=DEV)
    c = _counters(DEV)
    assert all(isinstance(v, int) for v in (c.allocated, c.reserved, c.max_allocated, c.max_reserved))
    assert 3 * MIB <= c.allocated <= c.reserved <= c.max_reserved
    stats = torch.cuda.memory_stats(DEV)
    assert len(stats) > 100, "chapter 05, section 3: memory_stats holds the allocator's counters"
    assert stats["allocated_bytes.all.current"] == torch.cuda.memory_allocated(DEV)
    assert stats["reserved_bytes.all.current"] == torch.cuda.memory_reserved(DEV)
    del keep


def test_small_tensor_rounds_to_512_and_takes_a_2_mib_segment() -> None:
    _default_allocator_or_skip()
    before = _counters(DEV)
    small_segments = torch.cuda.memory_stats(DEV).get("segment.small_pool.current", 0)
    x = torch.empty(1000, dtype=torch.uint8, device=DEV)
    after = _counters(DEV)
    assert after.allocated - before.allocated == 1024  # 1000 bytes, rounded up to a multiple of 512
    if small_segments == 0:  # no small segment survived empty_cache: the tensor needs a new one
        assert after.reserved - before.reserved == 2 * MIB
    else:  # a live small tensor elsewhere keeps a segment, which may have room
        assert after.reserved - before.reserved in (0, 2 * MIB)
    del x


def test_large_tensor_gets_its_own_segment_and_freeing_keeps_it_reserved() -> None:
    _default_allocator_or_skip()
    before = _counters(DEV)
    x = torch.empty(30 * MIB, dtype=torch.uint8, device=DEV)
    during = _counters(DEV)
    assert during.allocated - before.allocated == 30 * MIB
    assert during.reserved - before.reserved == 30 * MIB
    del x
    after = _counters(DEV)
    assert after.allocated == before.allocated
    assert after.reserved == during.reserved  # cached, not returned
    y = torch.empty(16 * MIB, dtype=torch.uint8, device=DEV)  # cut from the cached segment
    assert _counters(DEV).reserved == during.reserved
    del y


def test_model_agrees_with_the_real_allocator_on_a_sequence() -> None:
    _default_allocator_or_skip()
    base = _counters(DEV)
    if base.cached_free:
        missing(
            "an allocator with no partly used cached segment",
            f"{base.cached_free} bytes stay cached in partly used segments after empty_cache (live tensors or "
            "a cuBLAS workspace this torch cannot release): the model starts from an empty allocator",
        )
    model = CachingAllocatorModel()
    live = []
    for nbytes in (1000, 1000, 3 * MIB, 30 * MIB):
        live.append(torch.empty(nbytes, dtype=torch.uint8, device=DEV))
        model.malloc(nbytes)
        real = _counters(DEV)
        assert real.allocated - base.allocated == model.allocated, f"after {nbytes} bytes"
        assert real.reserved - base.reserved == model.reserved, f"after {nbytes} bytes"
    del live


def test_peak_of_a_matmul_counts_the_temporary_product() -> None:
    """Chapter 05, section 4: a peak counts temporaries: `(a @ b).relu()` holds the product and the result at once."""
    n = 2048
    nbytes = n * n * 4  # one float32 matrix: 16 MiB
    a = torch.randn(n, n, device=DEV)
    b = torch.randn(n, n, device=DEV)
    _warm_up_cublas()  # torch 2.10-2.13 keep cuBLAS's workspace from its first call: keep it out of the step
    torch.cuda.reset_peak_memory_stats(DEV)
    start = _counters(DEV)
    out = (a @ b).relu()
    torch.cuda.synchronize(DEV)
    end = _counters(DEV)
    assert end.allocated - start.allocated == nbytes, "only relu's result is kept"
    assert end.max_allocated - start.allocated >= 2 * nbytes, "product and result were alive together"
    del a, b, out


def test_peak_and_reset() -> None:
    torch.cuda.reset_peak_memory_stats(DEV)
    start = _counters(DEV)
    x = torch.empty(64 * MIB, dtype=torch.uint8, device=DEV)
    del x
    c = _counters(DEV)
    assert c.max_allocated >= start.allocated + 64 * MIB > c.allocated
    torch.cuda.reset_peak_memory_stats(DEV)
    c = _counters(DEV)
    assert c.max_allocated == c.allocated and c.max_reserved == c.reserved


def test_empty_cache_lowers_reserved_but_not_allocated() -> None:
    keep = torch.empty(64 * MIB, dtype=torch.uint8, device=DEV)
    drop = torch.empty(64 * MIB, dtype=torch.uint8, device=DEV)
    del drop
    before = _counters(DEV)
    torch.cuda.empty_cache()
    after = _counters(DEV)
    assert after.allocated == before.allocated, "empty_cache never frees a live tensor"
    assert after.reserved <= before.reserved - 64 * MIB
    assert keep.fill_(7)[-1].item() == 7, "and the live tensor is still usable"
    del keep


def test_mem_get_info_is_the_drivers_view() -> None:
    free, total = torch.cuda.mem_get_info(DEV)
    assert 0 < free <= total
    assert total == pytest.approx(torch.cuda.get_device_properties(DEV).total_memory, rel=0.05)
    x = torch.empty(256 * MIB, dtype=torch.uint8, device=DEV)  # a new segment: the driver hands it out
    free_after, _ = torch.cuda.mem_get_info(DEV)
    assert free - free_after >= 0.9 * 256 * MIB, f"driver's free memory went from {free} to {free_after} bytes"
    del x


def _net(width: int, hidden_layers: int = 2) -> torch.nn.Sequential:
    """Chapter 05's MLP: Linear(256, width), ReLU, ..., Linear(width, 10)."""
    layers: list[torch.nn.Module] = [torch.nn.Linear(256, width), torch.nn.ReLU()]
    for _ in range(hidden_layers - 1):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers, torch.nn.Linear(width, 10)).to(DEV)


def _peak_and_kept(fn) -> tuple[int, int]:
    """Section 4's `measure` on a GPU: bytes above the start at the peak and at the end."""
    torch.cuda.synchronize(DEV)
    start = torch.cuda.memory_allocated(DEV)
    torch.cuda.reset_peak_memory_stats(DEV)
    fn()
    torch.cuda.synchronize(DEV)
    return torch.cuda.max_memory_allocated(DEV) - start, torch.cuda.memory_allocated(DEV) - start


def test_fine_tuning_peak_holds_the_predicted_parts_and_little_more() -> None:
    """Chapter 05, question 2's measurement: section 4's net with its first layer frozen and twice its batch.

    At the end of the second step's forward pass the parameters, Adam's moments of the trainable
    ones and the activations are alive together, so the peak holds them all (the cell asserts the
    weaker: parameters and activations). The prediction (those, plus a gradient per trainable
    parameter) falls short by at most about one more copy of the activations: while backward runs,
    ReLU's backward makes an activation-sized gradient beside the activations and the gradient it
    was given. Measured through the profiler's allocation events on the CPU: 114.3 MiB for a
    prediction of 98.4 MiB (2026-11, torch 2.13); the GPU's caching allocator sees the same tensors.
    """
    torch.manual_seed(0)
    width, batch = 2048, 2048

    def fine_tuned_net() -> torch.nn.Sequential:
        net = torch.nn.Sequential(
            torch.nn.Linear(256, width),
            torch.nn.ReLU(),
            torch.nn.Linear(width, width),
            torch.nn.ReLU(),
            torch.nn.Linear(width, 10),
        )
        net[0].requires_grad_(False)
        return net

    with torch.device("meta"):
        planned = fine_tuned_net()
    params = sum(p.nbytes for p in planned.parameters())
    trained = sum(p.nbytes for p in planned.parameters() if p.requires_grad)
    acts = batch * 2 * width * 4  # two ReLU outputs per sample, float32
    predicted = params + 3 * trained + acts
    x = torch.randn(batch, 256, device=DEV)
    y = torch.randint(0, 10, (batch,), device=DEV)

    def fine_tune() -> None:
        tuned = fine_tuned_net().to(DEV)
        opt = torch.optim.Adam(tuned.parameters(), lr=1e-3)
        for _ in range(2):
            torch.nn.functional.cross_entropy(tuned(x), y).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

    fine_tune()  # a workspace kept from the first products on (torch 2.10 to 2.13) stays out of the measurement
    peak, kept = _peak_and_kept(fine_tune)
    assert peak >= params + acts, "the notebook's claim: parameters and activations alive together"
    assert peak >= params + 2 * trained + acts, f"peak {peak / MIB:.1f} MiB"
    ceiling = predicted + acts + 8 * MIB + _workspace_bytes()  # a workspace made for each product (torch 2.15)
    assert peak <= ceiling, f"peak {peak / MIB:.1f} MiB, predicted {predicted / MIB:.1f} MiB"
    assert kept <= 1 * MIB, "everything the step made was local to it"


def test_cublas_workspace_is_counted_in_memory_allocated() -> None:
    """Chapter 05, "What the sources got wrong": cuBLAS's workspace goes through the caching allocator, so
    `memory_allocated` counts it: kept from the first product on (torch 2.10 to 2.13), or made for each product
    and freed after it (torch 2.15), when it shows in each product's peak only. Which one, the run tells."""
    out = run_fresh_python(
        """
        import torch
        a = torch.ones(512, 512, device="cuda")
        base, beyond = torch.cuda.memory_allocated(), []
        for _ in range(2):
            start = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            b = a @ a
            torch.cuda.synchronize()
            beyond.append(torch.cuda.max_memory_allocated() - start - b.nbytes)  # beyond the product's own 1 MiB
            del b
        print(*beyond, torch.cuda.memory_allocated() - base)
        """,
        env={"CUBLAS_WORKSPACE_CONFIG": None, "TORCH_CUBLAS_WORKSPACE_CACHE": None},
    )
    first, second, kept = (int(n) for n in out.split()[-3:])
    assert first >= 1 * MIB, f"the first product allocated {first} bytes beyond its result: no workspace seen"
    if kept:  # this torch keeps the workspace: the second product finds it
        assert 1 * MIB <= kept <= first, f"{kept} bytes stay allocated after the products; {first} during the first"
        assert second < 1 * MIB, f"the second product allocated {second} bytes beyond its result"
    else:  # this torch makes one for each product and frees it after
        assert second >= 1 * MIB, f"the second product allocated {second} bytes beyond its result: no workspace"


def test_training_step_peak_is_at_least_gradients_and_at_least_activations() -> None:
    """Chapter 05, section 4: the peak of a step with Adam, between max(P, A) and a generous ceiling."""
    torch.manual_seed(0)
    width, batch_size = 2048, 1024
    net = _net(width)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    x = torch.randn(batch_size, 256, device=DEV)
    y = torch.randint(0, 10, (batch_size,), device=DEV)

    def step() -> None:
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()
    P = sum(p.numel() * p.element_size() for p in net.parameters())
    A = 2 * batch_size * width * 4
    state = sum(t.numel() * t.element_size() for s in opt.state.values() for t in s.values() if torch.is_tensor(t))
    assert state >= 2 * P
    peak, kept = _peak_and_kept(step)
    assert peak >= max(P, A)
    assert peak <= 4 * (P + A) + 64 * MIB
    assert kept <= 1 * MIB, "gradients were set to None, activations died in backward"


def test_no_grad_and_inference_mode_keep_only_the_output() -> None:
    """Chapter 05, section 4: with autograd on, a forward pass keeps the ReLU outputs; without, only the output."""
    torch.manual_seed(0)
    width, batch_size = 2048, 1024
    net = _net(width)
    x = torch.randn(batch_size, 256, device=DEV)
    net(x)  # warm up cuBLAS so that its workspace is not counted as kept
    A = 2 * batch_size * width * 4
    kept_by_mode = {}
    for mode in (torch.enable_grad, torch.no_grad, torch.inference_mode):
        outputs: list[torch.Tensor] = []

        def forward(mode=mode, outputs=outputs) -> None:
            with mode():
                outputs.append(net(x))

        kept_by_mode[mode.__name__] = _peak_and_kept(forward)[1]
        del outputs
    assert kept_by_mode["enable_grad"] >= A
    assert kept_by_mode["no_grad"] < A / 2
    assert kept_by_mode["inference_mode"] < A / 2


def test_snapshot_records_allocations_and_frees_in_order(tmp_path) -> None:
    """Chapter 05, section 5: `_record_memory_history` + `_dump_snapshot`, read back and added up."""
    torch.manual_seed(0)
    net = _net(512)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    x = torch.randn(256, 256, device=DEV)
    y = torch.randint(0, 10, (256,), device=DEV)
    path = tmp_path / "snapshot.pickle"
    torch.cuda.memory._record_memory_history(max_entries=100_000, context="alloc", stacks="python")
    try:
        for _ in range(2):
            torch.nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize(DEV)
        torch.cuda.memory._dump_snapshot(str(path))
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)
    with open(path, "rb") as f:
        snapshot = pickle.load(f)
    events = [(e["action"], e["size"]) for e in snapshot["device_traces"][DEV.index]]
    actions = {a for a, _ in events}
    assert {"alloc", "free_completed"} <= actions
    live, timeline = 0, []
    for action, nbytes in events:
        live += nbytes if action == "alloc" else -nbytes if action == "free_completed" else 0
        timeline.append(live)
    P = sum(p.numel() * p.element_size() for p in net.parameters())
    assert max(timeline) >= P, "every gradient was alive at some moment"


def _allocate_a_block_here() -> torch.Tensor:
    return torch.empty(8 * MIB, dtype=torch.uint8, device=DEV)


def test_snapshot_frames_name_the_line_that_allocated_and_the_viewer_reads_the_file(tmp_path) -> None:
    """Chapter 05, section 5: an entry's frames run innermost first, so the first frame outside torch is the line
    that asked; `python -m torch.cuda._memory_viz trace_plot FILE -o PAGE` writes the viewer's page from the dump."""
    torch_dir = os.path.dirname(torch.__file__)
    path = tmp_path / "snapshot.pickle"
    torch.cuda.memory._record_memory_history(max_entries=1000, context="alloc", stacks="python")
    try:
        kept = _allocate_a_block_here()
        torch.cuda.memory._dump_snapshot(str(path))
        entries = torch.cuda.memory._snapshot()["device_traces"][DEV.index]
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)
    made = [e for e in entries if e["action"] == "alloc" and e["addr"] == kept.data_ptr()]
    assert made and made[-1]["size"] == 8 * MIB, "the block is in the trace, with its size"
    yours = next(f for f in made[-1]["frames"] if not f["filename"].startswith(torch_dir))
    assert (os.path.basename(yours["filename"]), yours["name"]) == (
        os.path.basename(__file__),
        "_allocate_a_block_here",
    )
    assert yours["line"] == _allocate_a_block_here.__code__.co_firstlineno + 1, "the line, not the function's first"
    page = tmp_path / "snapshot.html"
    command = [sys.executable, "-m", "torch.cuda._memory_viz", "trace_plot", str(path), "-o", str(page)]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    assert "MemoryViz.js" in page.read_text() and "Active Memory Timeline" in page.read_text()
    del kept


def test_allocated_bytes_counts_what_the_real_allocator_counts() -> None:
    """Chapter 05, question 1: every case of the checker, made on the GPU, grows `memory_allocated` by the checker's
    answer (each storage of at most 1 MiB once, rounded up to 512 bytes; none for an empty one); so does the cell's
    `kept_by_a_loop` (a row of a batch, a loss, a mask)."""
    _default_allocator_or_skip()
    cases = [*_KEPT, "[(b := torch.zeros(500, 500))[0], b.sum(), torch.ones(100) > 0]"]
    for code in cases:
        torch.cuda.synchronize(DEV)
        before = torch.cuda.memory_allocated(DEV)
        with torch.device(DEV):
            kept = eval(code, {"torch": torch})
        torch.cuda.synchronize(DEV)
        assert torch.cuda.memory_allocated(DEV) - before == _blocks(kept), code
        del kept


def test_expandable_segments_map_20_mib_pages_into_one_segment() -> None:
    """Chapter 05, section 6: 30 MiB, freed, then 50 MiB, each run in a fresh process.

    By default a request of 10 MiB or more gets a segment of its own, rounded up to 2 MiB (`get_allocation_size`):
    30 MiB reserved, then 30 + 50 = 80. With expandable segments the large pool's one segment is mapped in 20 MiB pages
    (`find_expandable_block`: `kLargeBuffer`; `ExpandableSegment::map` rounds the end up to a page): 30 MiB maps two
    pages, 40 MiB; the 50 MiB request takes the freed 40 MiB at the segment's end and maps one page behind it
    (`try_allocate_expandable_block`), 60 MiB (c10/cuda/CUDACachingAllocator.cpp; docs/sources.md §2).

    Linux only: Windows builds of torch lack the driver API the feature needs (c10/cuda/CMakeLists.txt defines
    PYTORCH_C10_DRIVER_API_SUPPORTED only `if(NOT WIN32)`), warn "expandable_segments not supported on this
    platform" and keep the default (`CUDAAllocatorConfig::expandable_segments`)."""
    if sys.platform == "win32":
        missing("expandable segments", "Windows builds of torch do not support them: the chapter says so")
    child = """
    import torch
    x = torch.empty(30 * 2**20, dtype=torch.uint8, device="cuda")
    after_x = torch.cuda.memory_reserved()
    del x
    y = torch.empty(50 * 2**20, dtype=torch.uint8, device="cuda")
    print(after_x, torch.cuda.memory_reserved())
    """
    reserved = {}
    for conf in (None, "expandable_segments:True"):
        said = run_fresh_python(child, env={"PYTORCH_ALLOC_CONF": conf, "PYTORCH_CUDA_ALLOC_CONF": None})
        reserved[conf] = tuple(int(n) for n in said.split()[-2:])
    assert reserved[None] == (30 * MIB, 80 * MIB), "default: one segment per request, its size rounded up to 2 MiB"
    assert reserved["expandable_segments:True"] == (40 * MIB, 60 * MIB), "two 20 MiB pages, then one more"


def test_out_of_memory_in_a_training_step_recovers_with_micro_batches() -> None:
    """Chapter 05, section 7: the whole batch fails with OutOfMemoryError, whose message up to PyTorch's advice says
    what was asked, free and held (the notebook prints that much); halving micro-batches gets the step done."""
    torch.manual_seed(0)
    wide = 16384
    net = torch.nn.Sequential(torch.nn.Linear(256, wide), torch.nn.ReLU(), torch.nn.Linear(wide, 10)).to(DEV)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    per_sample = 2 * wide * 4
    free, _ = torch.cuda.mem_get_info(DEV)
    x = torch.randn(int(1.5 * free / per_sample), 256, device=DEV)
    y = torch.randint(0, 10, (len(x),), device=DEV)
    ooms = torch.cuda.memory_stats(DEV).get("num_ooms", 0)
    micro, done, failures, said = len(x), False, 0, ""
    while not done:
        try:
            for i in range(0, len(x), micro):
                loss = torch.nn.functional.cross_entropy(net(x[i : i + micro]), y[i : i + micro], reduction="sum")
                (loss / len(x)).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            done = True
        except torch.OutOfMemoryError as exc:
            said = said or str(exc).split(" If reserved")[0]  # what the notebook prints of it
            opt.zero_grad(set_to_none=True)
            failures += 1
            micro //= 2
            assert micro > 0
    assert (
        issubclass(torch.cuda.OutOfMemoryError, RuntimeError) and torch.cuda.OutOfMemoryError is torch.OutOfMemoryError
    )
    assert failures >= 1 and micro < len(x)
    assert all(part in said for part in ("Tried to allocate", " is free.", "reserved by PyTorch but unallocated")), said
    assert torch.cuda.memory_stats(DEV)["num_ooms"] >= ooms + 1
    assert all(torch.isfinite(p).all() for p in net.parameters())


def test_gradient_accumulation_gives_the_whole_batch_gradient() -> None:
    """Chapter 05, section 7: a summed loss over micro-batches, divided by the batch size, gives the batch gradient."""
    torch.manual_seed(0)
    net = _net(64)
    x = torch.randn(96, 256, device=DEV)
    y = torch.randint(0, 10, (96,), device=DEV)
    torch.nn.functional.cross_entropy(net(x), y).backward()
    whole = [p.grad.clone() for p in net.parameters()]
    net.zero_grad(set_to_none=True)
    for i in range(0, 96, 32):
        (torch.nn.functional.cross_entropy(net(x[i : i + 32]), y[i : i + 32], reduction="sum") / 96).backward()
    for p, g in zip(net.parameters(), whole, strict=True):
        torch.testing.assert_close(p.grad, g, rtol=1e-4, atol=1e-5)


def test_a_kept_traceback_keeps_cuda_memory_allocated() -> None:
    """Chapter 05, section 7: the frames of a kept exception hold tensors; clearing the reference frees them."""
    nbytes = 64 * MIB

    def failing_step() -> None:
        activations = torch.empty(nbytes, dtype=torch.uint8, device=DEV)  # noqa: F841 (held by the frame)
        raise RuntimeError("the step failed")

    before = torch.cuda.memory_allocated(DEV)
    kept: list[BaseException] = []
    try:
        failing_step()
    except RuntimeError as exc:
        kept.append(exc)
    assert torch.cuda.memory_allocated(DEV) >= before + nbytes
    kept.clear()
    gc.collect()
    assert torch.cuda.memory_allocated(DEV) == before
