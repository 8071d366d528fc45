"""Chapter 06's GPU claims: asynchronous launches, the stream race and its fix, copy/compute overlap."""

from __future__ import annotations

import time

import pytest
import torch

from helpers import streams as st


@pytest.mark.gpu
def test_a_kernel_launch_returns_before_the_work_ends() -> None:
    device = torch.device("cuda", 0)
    cycles = st.sleep_cycles(50.0, device)
    torch.cuda.synchronize(device)
    start = time.perf_counter()
    with torch.cuda.device(device):
        torch.cuda._sleep(cycles)
    launch = time.perf_counter() - start
    torch.cuda.synchronize(device)
    synced = time.perf_counter() - start
    assert synced > 0.015, f"the (about) 50 ms sleep kernel took only {synced * 1000:.1f} ms"
    assert launch < 0.1 * synced, f"launch {launch * 1000:.2f} ms is not << synchronised {synced * 1000:.1f} ms"


@pytest.mark.gpu
def test_time_three_ways_shows_launch_time_far_below_the_work() -> None:
    device = torch.device("cuda", 0)
    result = st.time_three_ways(st.matmul_work(device, size=2048, times=10), device, repeats=5)
    assert result.launch_s < 0.2 * result.synchronized_s, str(result)


@pytest.mark.gpu
def test_cuda_events_agree_with_synchronised_wall_time() -> None:
    device = torch.device("cuda", 0)
    result = st.time_three_ways(st.matmul_work(device, size=2048, times=10), device, repeats=5)
    assert result.event_s is not None
    assert abs(result.event_s - result.synchronized_s) < 0.15 * result.synchronized_s + 0.002, str(result)


@pytest.mark.gpu
def test_unsynchronised_side_stream_read_sees_stale_values() -> None:
    result = st.stream_race(0, "no_wait", rounds=3, delay_ms=50.0)
    assert result.stale == 3, str(result)
    assert result.seen == (0.0, 0.0, 0.0), str(result)


@pytest.mark.gpu
def test_stream_ordered_fix_reads_right_values_without_blocking_the_host() -> None:
    ordered = st.stream_race(0, "stream_ordered", rounds=3, delay_ms=50.0)
    assert ordered.correct, str(ordered)
    assert ordered.host_ms < 20.0, f"the stream-ordered fix should not block Python: {ordered}"


@pytest.mark.gpu
def test_host_synchronize_fix_is_right_but_blocks_the_host() -> None:
    host_sync = st.stream_race(0, "host_synchronize", rounds=3, delay_ms=50.0)
    assert host_sync.correct, str(host_sync)
    # Python sat through every producer delay (≈ 50 ms each; GPU clocks vary, so allow a wide margin)
    assert host_sync.host_ms > 3 * 20.0, str(host_sync)
    ordered = st.stream_race(0, "stream_ordered", rounds=3, delay_ms=50.0)
    assert host_sync.host_ms > 5 * ordered.host_ms, f"{host_sync}\n{ordered}"


@pytest.mark.gpu
def test_overlapped_copy_and_compute_is_at_least_1_3_times_faster() -> None:
    runs = st.make_overlap_runs(0, chunks=8, chunk_elements=4 * 1024 * 1024)
    measured = st.measure_overlap(runs, repeats=5)
    assert measured.speedup >= 1.3, str(measured)


@pytest.mark.gpu
def test_profiler_timeline_shows_copies_and_kernels_on_two_streams() -> None:
    runs = st.make_overlap_runs(0, chunks=4, chunk_elements=1024 * 1024)
    runs.overlapped()
    spans = st.profile_spans(runs.overlapped, runs.device)
    copy_lanes = {s.lane for s in spans if s.kind == "copy"}
    compute_lanes = {s.lane for s in spans if s.kind == "compute"}
    assert copy_lanes and compute_lanes and copy_lanes.isdisjoint(compute_lanes), spans
    # some copy runs while some kernel runs: the two streams really overlap
    copies = [s for s in spans if s.kind == "copy"]
    kernels = [s for s in spans if s.kind == "compute"]
    assert any(c.start_ms < k.end_ms and k.start_ms < c.end_ms for c in copies for k in kernels)
