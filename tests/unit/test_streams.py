"""helpers.streams on any machine: the stream model, timelines from events, plots, timing, bad inputs."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from helpers import streams as st


def _event(name: str, device_type: str, start_us: float, end_us: float, **extra: object) -> SimpleNamespace:
    return SimpleNamespace(
        name=name, device_type=device_type, time_range=SimpleNamespace(start=start_us, end=end_us), **extra
    )


# -- the model ---------------------------------------------------------------------------------


def test_serial_schedule_is_the_sum_of_all_work() -> None:
    schedule = st.simulate_copy_compute(4, 3.0, 5.0, overlapped=False)
    assert schedule.total_ms == pytest.approx(4 * (3 + 5))
    assert {s.lane for s in schedule.spans} == {"default stream"}


@pytest.mark.parametrize(("chunks", "copy", "compute"), [(1, 2.0, 2.0), (4, 3.0, 5.0), (8, 5.0, 1.0), (3, 1.5, 1.5)])
def test_overlapped_schedule_matches_the_closed_form(chunks: int, copy: float, compute: float) -> None:
    schedule = st.simulate_copy_compute(chunks, copy, compute, overlapped=True)
    assert schedule.total_ms == pytest.approx(st.ideal_overlapped_ms(chunks, copy, compute))
    assert {s.lane for s in schedule.spans} == {"copy stream", "compute stream"}


def test_each_compute_starts_after_its_own_copy_and_streams_stay_in_order() -> None:
    spans = st.simulate_copy_compute(5, 2.0, 3.0, overlapped=True).spans
    copies = [s for s in spans if s.kind == "copy"]
    computes = [s for s in spans if s.kind == "compute"]
    for copy, compute in zip(copies, computes, strict=True):
        assert compute.start_ms >= copy.end_ms
    for lane in (copies, computes):
        assert all(a.end_ms <= b.start_ms for a, b in zip(lane, lane[1:], strict=False))


def test_balanced_work_approaches_twice_as_fast() -> None:
    model = st.split_work(16, 80.0, 80.0)
    assert model.speedup == pytest.approx(2 * 16 / 17)
    assert st.split_work(1, 80.0, 80.0).speedup == pytest.approx(1.0)  # one chunk: nothing to overlap


def test_launch_overhead_makes_too_many_chunks_hurt() -> None:
    few = st.split_work(8, 10.0, 10.0, launch_ms=0.2).overlapped.total_ms
    many = st.split_work(200, 10.0, 10.0, launch_ms=0.2).overlapped.total_ms
    assert many > few


def test_simulate_is_deterministic_and_host_blocks_only_when_asked() -> None:
    ops = [st.Op("a", "x", 2.0), st.Op("b", "y", 1.0, after=(0,), host_waits=True), st.Op("a", "z", 1.0)]
    first, second = st.simulate(ops, launch_ms=0.5), st.simulate(ops, launch_ms=0.5)
    assert first == second
    y = next(s for s in first.spans if s.name == "y")
    assert y.start_ms == pytest.approx(2.5)  # waits for x (ends at 0.5 + 2)
    assert first.host_ms_after[1] == pytest.approx(3.5)  # the host blocked until y ended
    assert [s.lane for s in first.spans].count("host") == 1


@pytest.mark.parametrize(
    ("ops", "error"),
    [
        ("not a list", TypeError),
        ([("a", "x", 1.0)], TypeError),
        ([st.Op("", "x", 1.0)], ValueError),
        ([st.Op("a", "x", -1.0)], ValueError),
        ([st.Op("a", "x", float("nan"))], TypeError),
        ([st.Op("a", "x", 1.0, after=(0,))], ValueError),
        ([st.Op("a", "x", 1.0), st.Op("a", "y", 1.0, after=(5,))], ValueError),
    ],
)
def test_simulate_rejects_bad_operations(ops: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        st.simulate(ops)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((0, 1.0, 1.0), ValueError),
        ((2.5, 1.0, 1.0), TypeError),
        ((True, 1.0, 1.0), TypeError),
        ((2, 0.0, 1.0), ValueError),
        ((2, 1.0, "5"), TypeError),
    ],
)
def test_copy_compute_rejects_bad_inputs(args: tuple, error: type[Exception]) -> None:
    with pytest.raises(error):
        st.simulate_copy_compute(*args, overlapped=True)


def test_simulated_race_stale_without_wait_right_with_either_fix() -> None:
    broken = st.simulate_race("no_wait")
    assert broken.simulated and broken.stale == 3 and broken.seen == (0.0, 0.0, 0.0)
    host_sync = st.simulate_race("host_synchronize")
    ordered = st.simulate_race("stream_ordered")
    assert host_sync.correct and ordered.correct
    # the sources' fix blocks Python for every producer delay; the stream-ordered one does not
    assert host_sync.host_ms > 3 * 20.0
    assert ordered.host_ms < 1.0
    assert ordered.total_ms == pytest.approx(host_sync.total_ms, rel=0.05)
    assert "STALE" in str(broken) and "SIMULATION" in str(ordered)


def test_simulated_race_rejects_bad_inputs() -> None:
    with pytest.raises(ValueError, match="mode must be one of"):
        st.simulate_race("synchronize")
    with pytest.raises(ValueError):
        st.simulate_race("no_wait", rounds=0)
    with pytest.raises(ValueError):
        st.simulate_race("no_wait", delay_ms=-1)


# -- timelines from events -----------------------------------------------------------------------


def test_spans_from_gpu_events_one_lane_per_stream() -> None:
    events = [
        _event("Memcpy HtoD (Pinned -> Device)", "CUDA", 1000.0, 1500.0, device_index=0, device_resource_id=13),
        _event("ampere_sgemm_128x64_nn", "CUDA", 1500.0, 2500.0, device_index=0, device_resource_id=7),
        _event("Memcpy HtoD (Pinned -> Device)", "CUDA", 1500.0, 2000.0, device_index=0, device_resource_id=13),
        _event("aten::mm", "CPU", 900.0, 950.0, thread=1, cpu_parent=None),
    ]
    spans = st.spans_from_events(events, "cuda")
    assert {s.lane for s in spans} == {"GPU 0 stream 13", "GPU 0 stream 7"}
    assert min(s.start_ms for s in spans) == 0.0
    assert [s.kind for s in spans if s.lane.endswith("13")] == ["copy", "copy"]
    assert st.makespan(spans) == pytest.approx(1.5)


def test_spans_from_cpu_events_keep_top_level_calls() -> None:
    parent = _event("aten::matmul", "CPU", 0.0, 100.0, thread=5, cpu_parent=None)
    events = [parent, _event("aten::mm", "CPU", 10.0, 90.0, thread=5, cpu_parent=parent)]
    assert [s.name for s in st.spans_from_events(events, "cpu")] == ["aten::matmul"]
    assert len(st.spans_from_events(events, "cpu", top_level_only=False)) == 2
    assert st.spans_from_events([], "cpu") == []


def test_spans_from_events_rejects_bad_inputs() -> None:
    with pytest.raises(TypeError, match="profiler events"):
        st.spans_from_events([{"name": "x"}], "cuda")
    with pytest.raises(ValueError, match="device_type"):
        st.spans_from_events([], "gpu")
    with pytest.raises(ValueError, match="ends"):
        st.spans_from_events([_event("k", "CUDA", 10.0, 5.0, device_resource_id=7)], "cuda")


def test_span_validates_itself() -> None:
    with pytest.raises(ValueError):
        st.Span("", "x", 0.0, 1.0)
    with pytest.raises(ValueError):
        st.Span("lane", "x", 2.0, 1.0)
    assert st.Span("lane", "x", 1.0, 3.5).ms == 2.5


def test_profile_spans_on_cpu_ops() -> None:
    a = torch.randn(64, 64)
    spans = st.profile_spans(lambda: (a @ a).sin(), "cpu")
    names = [s.name for s in spans]
    assert "aten::matmul" in names and "aten::sin" in names
    assert len({s.lane for s in spans}) == 1  # CPU ops run one after another on the calling thread


# -- plots and timing ------------------------------------------------------------------------------


def test_plot_timelines_labels_simulations() -> None:
    import matplotlib

    matplotlib.use("Agg")
    model = st.split_work(4, 8.0, 8.0)
    fig = st.plot_timelines(
        {"serial": model.serial.spans, "overlapped": model.overlapped.spans}, title="copy/compute", simulated=True
    )
    assert fig._suptitle.get_text().startswith("SIMULATION")
    assert len(fig.axes) == 2
    assert [t.get_text() for t in fig.axes[1].get_yticklabels()] == ["copy stream", "compute stream"]
    real = st.plot_timelines({"measured": [st.Span("GPU 0 stream 7", "k", 0.0, 1.0)]}, title="t", simulated=False)
    assert "SIMULATION" not in real._suptitle.get_text()
    with pytest.raises(ValueError):
        st.plot_timelines({}, title="nothing", simulated=True)


def test_cpu_ops_are_synchronous_so_launch_time_is_the_work_time() -> None:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        result = st.time_three_ways(st.matmul_work("cpu", size=256, times=4), "cpu", repeats=7)
    finally:
        torch.set_num_threads(threads)
    assert result.event_s is None and "needs a CUDA GPU" in str(result)
    # the call returned only when the work was done (fastest runs: least disturbed by other programs)
    assert result.launch_best_s / result.synchronized_best_s > 0.3


def test_gpu_only_demos_refuse_a_cpu_device() -> None:
    with pytest.raises(ValueError, match="CUDA GPU"):
        st.stream_race("cpu", "no_wait")
    with pytest.raises(ValueError, match="CUDA GPU"):
        st.make_overlap_runs("cpu")
    with pytest.raises(ValueError, match="mode must be one of"):
        st.stream_race("cpu", "sometimes")
    with pytest.raises(TypeError):
        st.time_three_ways(lambda: None, "cpu", repeats=2.0)  # type: ignore[arg-type]
