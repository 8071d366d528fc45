"""Chapter 03's GPU claims: which calls copy, copy_ semantics, hidden waits, and small vs big copies."""

from __future__ import annotations

import io
import statistics
import time

import pytest
import torch

from helpers.copies import copy_in_pieces, measure_pieces

from .recorded import recorded

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


@pytest.mark.gpu
def test_cuda_takes_a_torch_device() -> None:
    """Section 1: `t.cuda(torch.device("cuda", 0))` copies a CPU tensor and returns a tensor already there."""
    gpu0 = torch.device("cuda", 0)
    t = torch.arange(6.0)
    g = t.cuda(gpu0)
    assert g is not t and g.device == gpu0
    assert g.cuda(gpu0) is g and g.to(g.device) is g
    assert torch.equal(g.cpu(), t)


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


@pytest.mark.gpu2
def test_copy_into_a_tensor_on_the_other_gpu_returns_that_tensor() -> None:
    X = torch.ones(2, 3, device="cuda:0")
    W = torch.empty(2, 3, device=torch.device("cuda", 1))
    assert W.copy_(X) is W
    assert W.device == torch.device("cuda", 1)
    assert W.sum().item() == 6.0


@pytest.mark.gpu
def test_copy_into_a_cpu_tensor_returns_that_cpu_tensor() -> None:
    cpu_tensor = torch.zeros(2, 3)
    gpu_tensor = torch.arange(6.0, device="cuda").reshape(2, 3)
    result = cpu_tensor.copy_(gpu_tensor)
    assert result is cpu_tensor
    assert result.device.type == "cpu"
    assert torch.equal(cpu_tensor, gpu_tensor.cpu())


@pytest.mark.gpu
def test_sync_debug_mode_warns_at_item_and_cpu_but_not_at_a_queued_sum() -> None:
    """Chapter 03's way to find hidden waits: set_sync_debug_mode("warn") names each call that waits."""
    import warnings

    y = torch.rand(1000, device="cuda")

    def warned(fn) -> bool:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn()
        return any("synchroniz" in str(w.message) for w in caught)

    torch.cuda.set_sync_debug_mode("warn")
    try:
        found = [warned(lambda: y.sum()), warned(lambda: y.sum().item()), warned(lambda: y.cpu())]
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert found == [False, True, True], found
    assert torch.cuda.get_sync_debug_mode() == 0


@pytest.mark.gpu
def test_numpy_refuses_a_gpu_tensor() -> None:
    with pytest.raises(TypeError):
        torch.ones(2, device="cuda").numpy()
    assert torch.ones(2, device="cuda").cpu().numpy().tolist() == [1.0, 1.0]


@pytest.mark.gpu
def test_item_gives_a_python_number() -> None:
    total = torch.ones(4, 4, device=DEV).sum().item()
    assert type(total) is float and total == 16.0


@pytest.mark.gpu
def test_reading_a_value_waits_for_the_queued_work() -> None:
    """Section 4, as its cells do it: every host read of its list absorbs the queued work, a result whose size
    depends on the values included (`y[y > 0]`, `torch.nonzero`: the docs of torch.nonzero say it synchronises).

    2048² matrices, 20 products: ≈ 40-80 ms of GPU work on a T4, while queuing 20 launches takes well
    under a millisecond; the test asks only for the read to take twice the queuing (medians of 3).
    """
    x = torch.randn(2048, 2048, device=DEV) / 2048**0.5

    def queue_matmuls() -> torch.Tensor:
        y = x
        for _ in range(20):
            y = x @ x
        return y

    def time_read(read) -> tuple[float, float]:
        torch.cuda.synchronize(DEV)
        start = time.perf_counter()
        y = queue_matmuls()
        queued = time.perf_counter()
        read(y)
        done = time.perf_counter()
        torch.cuda.synchronize(DEV)
        return queued - start, done - queued

    queue_matmuls()  # warm-up: cuBLAS handle, kernel selection
    torch.cuda.synchronize(DEV)
    printed = io.StringIO()
    reads = {
        "print": lambda y: print(y[0, :3], file=printed),
        "item": lambda y: y[0, 0].item(),
        "tolist": lambda y: y[0, :3].tolist(),
        "cpu().numpy()": lambda y: y[0, :3].cpu().numpy(),
        "if y > 0": lambda y: bool(y[0, 0] > 0),
        "y[y > 0]": lambda y: y[y > 0],
        "torch.nonzero": lambda y: torch.nonzero(y),
        "synchronize": lambda y: torch.cuda.synchronize(DEV),
    }
    control = statistics.median(time_read(lambda y: None)[1] for _ in range(3))
    for name, read in reads.items():
        runs = [time_read(read) for _ in range(3)]
        queue = statistics.median(q for q, _ in runs)
        wait = statistics.median(r for _, r in runs)
        assert wait > 2 * queue, f"{name}: the read should absorb the GPU work: {runs}"
        assert wait > 2 * control, f"{name}: the read should take longer than no read ({control:.6f} s): {runs}"


@pytest.mark.gpu
def test_the_chapters_reads_waited_for_the_queued_work() -> None:
    """Section 4's figure: its shortest host read over its longest queuing (≈ 20-200× on a T4 or an H100)."""
    ratio = recorded("03", "the shortest host read, over queuing the work")
    assert ratio["value"] > 2, ratio


@pytest.mark.gpu
def test_a_blocking_copy_waits_for_its_stream_from_pinned_memory_as_from_pageable() -> None:
    """Section 5: the wait in every copy comes from `non_blocking=False` (the default), not from pageable memory.

    A blocking host→device copy is `cudaMemcpyAsync` then `cudaStreamSynchronize` whatever the host memory
    (`aten/src/ATen/native/cuda/Copy.cu`, `copy_kernel_cuda`; `c10/cuda/CUDAFunctions.h`, `memcpy_and_sync`):
    set_sync_debug_mode("warn") names it, and after queued work it takes as long as that work. A `non_blocking`
    copy from pinned memory neither warns nor waits. 2048² matrices, 20 products: ≈ 5-80 ms of GPU work on an
    H100 or a T4, queued in well under a millisecond; the floors are 2× (medians of 3).
    """
    import warnings

    x = torch.randn(2048, 2048, device=DEV) / 2048**0.5
    dst = torch.empty(2**20, device=DEV)
    pageable, pinned = torch.ones(2**20), torch.ones(2**20).pin_memory()
    copies = {
        "pageable": lambda: dst.copy_(pageable),
        "pinned": lambda: dst.copy_(pinned),
        "pinned, non_blocking": lambda: dst.copy_(pinned, non_blocking=True),
    }

    def warned(copy) -> bool:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            copy()
        return any("synchroniz" in str(w.message) for w in caught)

    torch.cuda.synchronize(DEV)
    torch.cuda.set_sync_debug_mode("warn")
    try:
        found = {name: warned(copy) for name, copy in copies.items()}
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert found == {"pageable": True, "pinned": True, "pinned, non_blocking": False}, found

    def queue_then_copy(copy) -> tuple[float, float]:
        torch.cuda.synchronize(DEV)
        start = time.perf_counter()
        for _ in range(20):
            x @ x  # queued work that the copy's stream must finish first
        queued = time.perf_counter()
        copy()
        done = time.perf_counter()
        torch.cuda.synchronize(DEV)
        return queued - start, done - queued

    queue_then_copy(lambda: None)  # warm-up: cuBLAS handle, kernel selection
    runs = {name: [queue_then_copy(copy) for _ in range(3)] for name, copy in copies.items()}
    queue = max(statistics.median(q for q, _ in rs) for rs in runs.values())
    copy_s = {name: statistics.median(c for _, c in rs) for name, rs in runs.items()}
    assert copy_s["pageable"] > 2 * queue and copy_s["pinned"] > 2 * queue, (queue, runs)
    assert copy_s["pinned, non_blocking"] < 0.5 * copy_s["pinned"], (queue, runs)
    assert torch.equal(dst.cpu(), pinned)


@pytest.mark.gpu
def test_one_big_host_to_device_copy_beats_many_small_ones() -> None:
    """The same 64 MiB as one copy and as 16,384 copies of 4 KiB (pageable, as in the chapter).

    Each copy has a fixed cost of microseconds, so 16,384 copies cost tens of milliseconds more than
    one; the one big copy takes about 5-20 ms on a T4 host. `measure_pieces` synchronises around every
    repeat and keeps the fastest; the rounds interleave the two cases, so that a slow moment on a shared
    host hits both, and the test compares the medians of the rounds with a ratio far below the expected ≈ 10×.
    The copy function is the chapter's `copy_in_pieces` (one `copy_` per piece), passed as the chapter does.
    """
    total = 64 * 2**20
    ones, manys = [], []
    for _ in range(3):
        ones.append(measure_pieces(total, 1, DEV, repeats=3, copy=copy_in_pieces))
        manys.append(measure_pieces(total, total // 4096, DEV, repeats=3, copy=copy_in_pieces))
    assert {r.route for r in ones + manys} == {"host → cuda:0"}
    one = statistics.median(r.seconds for r in ones)
    many = statistics.median(r.seconds for r in manys)
    assert many > 2 * one, f"one copy: {[str(r) for r in ones]}; many: {[str(r) for r in manys]}"


@pytest.mark.gpu
def test_the_chapters_one_big_copy_stays_under_the_link() -> None:
    """Chapter 03's one pageable copy (its recorded figure): a real rate, not faster than the link it crosses."""
    copy = recorded("03", "one pageable host-to-device copy")
    assert copy["value"] > 0.1, copy
    if copy["limit"]:
        assert copy["value"] <= 1.05 * copy["limit"], f"faster than the link: a timing is not synchronised ({copy})"


@pytest.mark.gpu
def test_the_chapters_one_copy_beats_its_smallest_pieces() -> None:
    """Section 5's figure: one copy's effective bandwidth over that of the sweep's smallest pieces (1-4 KiB), pageable.

    Each small copy pays microseconds of fixed cost against a fraction of a microsecond for its bytes, so the
    ratio is well above 10 on a T4 or an H100 host; the floor is 2.
    """
    ratio = recorded("03", "one copy over the smallest pieces, effective bandwidth")
    assert ratio["value"] > 2, ratio
