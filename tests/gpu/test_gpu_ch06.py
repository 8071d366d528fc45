"""Chapter 06's GPU claims: asynchronous launches, the stream race and its fix, copy/compute overlap.

Every time below is taken after synchronising the device or with CUDA events, as medians of repeats;
the thresholds compare two times measured in the same test, with margins far from what a GPU gives.
"""

from __future__ import annotations

import statistics
import time

import pytest
import torch

from helpers import streams as st

DEV = torch.device("cuda", 0)
DELAY_MS = 100.0  # the producer's delay in the race: far longer than launching a round (well under 1 ms)
ROUNDS = 3


@pytest.mark.gpu
def test_a_kernel_launch_returns_before_the_work_ends() -> None:
    cycles = st.sleep_cycles(50.0, DEV)
    launches, totals = [], []
    for _ in range(3):
        torch.cuda.synchronize(DEV)
        start = time.perf_counter()
        with torch.cuda.device(DEV):
            torch.cuda._sleep(cycles)
        launches.append(time.perf_counter() - start)
        torch.cuda.synchronize(DEV)
        totals.append(time.perf_counter() - start)
    launch, synced = statistics.median(launches), statistics.median(totals)
    # GPU clocks vary (a T4 throttles): the ≈ 50 ms kernel may take from ≈ 20 ms to much longer
    assert synced > 0.015, f"the (about) 50 ms sleep kernel took only {synced * 1000:.1f} ms"
    assert launch < 0.1 * synced, f"launch {launch * 1000:.2f} ms is not << synchronised {synced * 1000:.1f} ms"


@pytest.mark.gpu
def test_time_three_ways_shows_launch_time_far_below_the_work() -> None:
    result = st.time_three_ways(st.matmul_work(DEV, size=2048, times=10), DEV, repeats=5)
    assert result.launch_s < 0.2 * result.synchronized_s, str(result)


@pytest.mark.gpu
def test_cuda_events_agree_with_synchronised_wall_time() -> None:
    result = st.time_three_ways(st.matmul_work(DEV, size=2048, times=10), DEV, repeats=5)
    assert result.event_s is not None
    assert abs(result.event_s - result.synchronized_s) < 0.15 * result.synchronized_s + 0.002, str(result)


@pytest.mark.gpu
def test_unsynchronised_side_stream_read_sees_stale_values() -> None:
    result = st.stream_race(DEV, "no_wait", rounds=ROUNDS, delay_ms=DELAY_MS)
    assert result.stale == ROUNDS, str(result)
    assert result.seen == (0.0,) * ROUNDS, f"every read ran before the first fill: {result}"


@pytest.mark.gpu
def test_stream_ordered_fix_reads_right_values_without_blocking_the_host() -> None:
    ordered = st.stream_race(DEV, "stream_ordered", rounds=ROUNDS, delay_ms=DELAY_MS)
    assert ordered.correct, str(ordered)
    # Python queued every round and got control back long before the GPU finished the delays
    assert ordered.host_ms < 0.2 * ordered.total_ms, f"the stream-ordered fix should not block Python: {ordered}"


@pytest.mark.gpu
def test_host_synchronize_fix_is_right_but_blocks_the_host() -> None:
    host_sync = st.stream_race(DEV, "host_synchronize", rounds=ROUNDS, delay_ms=DELAY_MS)
    assert host_sync.correct, str(host_sync)
    # Python sat through every producer delay: nearly all the time until the results were back
    assert host_sync.host_ms > 0.5 * host_sync.total_ms, str(host_sync)
    ordered = st.stream_race(DEV, "stream_ordered", rounds=ROUNDS, delay_ms=DELAY_MS)
    assert host_sync.host_ms > 5 * ordered.host_ms, f"{host_sync}\n{ordered}"


@pytest.mark.gpu
def test_overlapped_copy_and_compute_is_at_least_1_3_times_faster() -> None:
    """8 balanced chunks of 16 MiB: the ideal is 2 × 8 / 9 ≈ 1.78×; 1.3× leaves room for an imperfect balance."""
    runs = st.make_overlap_runs(DEV, chunks=8, chunk_elements=4 * 1024 * 1024)
    measured = st.measure_overlap(runs, repeats=5)
    assert measured.speedup >= 1.3, str(measured)


@pytest.mark.gpu
def test_profiler_timeline_shows_copies_and_kernels_on_two_streams() -> None:
    # 16 MiB chunks: a copy and a chunk's compute take about a millisecond or more, far more than launching
    # them under the profiler, so the GPU (not Python) sets the pace and the two streams can overlap
    runs = st.make_overlap_runs(DEV, chunks=4, chunk_elements=4 * 1024 * 1024)
    runs.overlapped()
    spans = st.profile_spans(runs.overlapped, runs.device)
    copy_lanes = {s.lane for s in spans if s.kind == "copy"}
    compute_lanes = {s.lane for s in spans if s.kind == "compute"}
    assert copy_lanes and compute_lanes and copy_lanes.isdisjoint(compute_lanes), spans
    # some copy runs while some kernel runs: the two streams really overlap
    copies = [s for s in spans if s.kind == "copy"]
    kernels = [s for s in spans if s.kind == "compute"]
    assert any(c.start_ms < k.end_ms and k.start_ms < c.end_ms for c in copies for k in kernels), spans
