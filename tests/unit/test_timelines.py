"""helpers.timelines and the simulated GPU it draws (helpers.standins.simulated_cuda), on any machine.

Timelines from profiler events, their plots, the simulated GPU's streams, events and races, and
chapter 06's copy/compute overlap run on the simulated GPU.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import SimpleNamespace

import pytest
import torch

from helpers import standins, timelines
from helpers.profiling import quiet_stderr
from helpers.timelines import Span, elapsed_ms

# the chapter's loop and schedules, as its cells write them
from tests.gpu.test_gpu_ch06 import overlapped, produce_and_consume, serial


def on_simulated_gpu(
    chunks: int,
    copy_ms: float,
    compute_ms: float,
    *,
    overlap: bool,
    launch_ms: float = 0.0,
    schedule: Callable[..., None] = overlapped,
) -> list[Span]:
    """Chapter 06's `on_simulated_gpu`, as its cell writes it: `overlapped` (or `serial`) on the simulated GPU."""
    with standins.simulated_cuda(launch_ms=launch_ms) as sim:

        def copy(i: int) -> None:
            sim.work(f"copy {i}", copy_ms, "copy")

        def compute(i: int) -> None:
            sim.work(f"compute {i}", compute_ms)

        if overlap:
            schedule(chunks, copy, compute, sim.Stream(name="copy stream"), sim.Stream(name="compute stream"))
        else:
            serial(chunks, copy, compute)
    return sim.spans


def ideal_overlapped_ms(chunks: int, copy_ms: float, compute_ms: float) -> float:
    """Closed form of the two-stream makespan: first copy, then the slower lane sets the pace, then the last compute."""
    return copy_ms + (chunks - 1) * max(copy_ms, compute_ms) + compute_ms


def speedup(chunks: int, total_copy_ms: float, total_compute_ms: float, launch_ms: float = 0.0) -> float:
    """Serial over overlapped time for fixed totals split into `chunks`, as the chapter's widget prints it."""
    copy_ms, compute_ms = total_copy_ms / chunks, total_compute_ms / chunks
    serial_ms, overlapped_ms = (
        elapsed_ms(on_simulated_gpu(chunks, copy_ms, compute_ms, overlap=overlap, launch_ms=launch_ms))
        for overlap in (False, True)
    )
    return serial_ms / overlapped_ms


def _event(name: str, device_type: str, start_us: float, end_us: float, **extra: object) -> SimpleNamespace:
    """An event as `prof.events()` holds one (a range's GPU copy sets `is_user_annotation`)."""
    time_range = SimpleNamespace(start=start_us, end=end_us)
    return SimpleNamespace(
        name=name, device_type=device_type, time_range=time_range, **{"is_user_annotation": False, **extra}
    )


def _item_read(start_us: float, end_us: float, inside: str) -> SimpleNamespace:
    """The operator `.item()` runs, under `aten::item`, called inside the range named `inside`."""
    scope = SimpleNamespace(name=inside, is_user_annotation=True, cpu_parent=None)
    item = _event("aten::item", "CPU", start_us, end_us, cpu_parent=scope)
    return _event("aten::_local_scalar_dense", "CPU", start_us, end_us, cpu_parent=item)


# -- the copy/compute overlap on the simulated GPU ---------------------------------------------


def test_serial_schedule_is_the_sum_of_all_work() -> None:
    spans = on_simulated_gpu(4, 3.0, 5.0, overlap=False)
    assert elapsed_ms(spans) == pytest.approx(4 * (3 + 5))
    assert {s.lane for s in spans} == {"default stream"}
    assert [s.name for s in spans][:3] == ["copy 0", "compute 0", "copy 1"]


@pytest.mark.parametrize(("chunks", "copy", "compute"), [(1, 2.0, 2.0), (4, 3.0, 5.0), (8, 5.0, 1.0), (3, 1.5, 1.5)])
def test_overlapped_schedule_matches_the_closed_form(chunks: int, copy: float, compute: float) -> None:
    spans = on_simulated_gpu(chunks, copy, compute, overlap=True)
    assert elapsed_ms(spans) == pytest.approx(ideal_overlapped_ms(chunks, copy, compute))
    assert {s.lane for s in spans} == {"copy stream", "compute stream"}


def test_each_compute_starts_after_its_own_copy_and_streams_stay_in_order() -> None:
    spans = on_simulated_gpu(5, 2.0, 3.0, overlap=True)
    copies = [s for s in spans if s.kind == "copy"]
    computes = [s for s in spans if s.kind == "compute"]
    assert len(copies) == len(computes) == 5
    for copy, compute in zip(copies, computes, strict=True):
        assert compute.start_ms >= copy.end_ms
    for lane in (copies, computes):
        assert all(a.end_ms <= b.start_ms for a, b in zip(lane, lane[1:], strict=False))


def test_without_the_wait_a_compute_starts_before_its_chunk_has_arrived() -> None:
    """The order comes from the waits the schedule queues, not from the simulation: leave one out and it shows."""

    def no_wait(chunks, copy, compute, copy_stream, compute_stream):  # noqa: ANN001, ANN202
        for i in range(chunks):
            with torch.cuda.stream(copy_stream):
                copy(i)
            with torch.cuda.stream(compute_stream):
                compute(i)

    spans = on_simulated_gpu(3, 2.0, 2.0, overlap=True, schedule=no_wait)
    first_copy, first_compute = (next(s for s in spans if s.name == f"{what} 0") for what in ("copy", "compute"))
    assert first_compute.start_ms < first_copy.end_ms


def test_balanced_work_approaches_twice_as_fast() -> None:
    assert speedup(16, 80.0, 80.0) == pytest.approx(2 * 16 / 17)
    assert speedup(1, 80.0, 80.0) == pytest.approx(1.0)  # one chunk: nothing to overlap


def test_launch_overhead_makes_too_many_chunks_hurt() -> None:
    few = elapsed_ms(on_simulated_gpu(8, 10.0 / 8, 10.0 / 8, overlap=True, launch_ms=0.2))
    many = elapsed_ms(on_simulated_gpu(200, 10.0 / 200, 10.0 / 200, overlap=True, launch_ms=0.2))
    assert many > few
    assert speedup(200, 10.0, 10.0, launch_ms=0.2) < 1.1 < speedup(8, 10.0, 10.0, launch_ms=0.2)


def test_the_overlap_is_deterministic_and_never_holds_the_host() -> None:
    first = on_simulated_gpu(6, 1.5, 2.5, overlap=True, launch_ms=0.1)
    assert first == on_simulated_gpu(6, 1.5, 2.5, overlap=True, launch_ms=0.1)
    assert all(s.lane != "host" for s in first), "stream waits are queued on the GPU: nothing made Python wait"
    # the first copy is the third call (after two waits), and the host spends 0.1 ms on each
    assert min(s.start_ms for s in first) == pytest.approx(0.3)


# -- timelines from events -----------------------------------------------------------------------


def test_spans_from_gpu_events_one_lane_per_stream() -> None:
    events = [
        _event("Memcpy HtoD (Pinned -> Device)", "CUDA", 1000.0, 1500.0, device_index=0, device_resource_id=13),
        _event("ampere_sgemm_128x64_nn", "CUDA", 1500.0, 2500.0, device_index=0, device_resource_id=7),
        _event("Memcpy HtoD (Pinned -> Device)", "CUDA", 1500.0, 2000.0, device_index=0, device_resource_id=13),
        _event("aten::mm", "CPU", 900.0, 950.0, thread=1, cpu_parent=None),
        _event("forward", "CUDA", 500.0, 2600.0, device_index=0, device_resource_id=7, is_user_annotation=True),
    ]
    spans = timelines.spans_from_events(events, "cuda")
    assert {s.lane for s in spans} == {"GPU 0 stream 13", "GPU 0 stream 7"}
    assert min(s.start_ms for s in spans) == 0.0
    assert [s.kind for s in spans if s.lane.endswith("13")] == ["copy", "copy"]
    assert elapsed_ms(spans) == pytest.approx(1.5)


def test_spans_from_cpu_events_keep_top_level_calls() -> None:
    parent = _event("aten::matmul", "CPU", 0.0, 100.0, thread=5, cpu_parent=None)
    events = [parent, _event("aten::mm", "CPU", 10.0, 90.0, thread=5, cpu_parent=parent)]
    assert [s.name for s in timelines.spans_from_events(events, "cpu")] == ["aten::matmul"]
    assert len(timelines.spans_from_events(events, "cpu", top_level_only=False)) == 2
    assert timelines.spans_from_events([], "cpu") == []


def test_step_spans_on_a_cpu_trace_host_phases_waits_and_operators() -> None:
    forward = _event("forward", "CPU", 100.0, 400.0, thread=1, cpu_parent=None, is_user_annotation=True)
    linear = _event("aten::linear", "CPU", 120.0, 300.0, cpu_parent=forward)
    adam = _event("Optimizer.step#Adam.step", "CPU", 310.0, 390.0, cpu_parent=forward, is_user_annotation=True)
    events = [
        _event("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "CPU", 0.0, 90.0, cpu_parent=None),
        forward,
        linear,
        _event("aten::addmm", "CPU", 130.0, 290.0, cpu_parent=linear),  # inside another operator: not drawn
        adam,  # a range of the optimizer's own: its operators are drawn, not the range
        _event("aten::_foreach_add_", "CPU", 320.0, 330.0, cpu_parent=adam),
        _item_read(410.0, 420.0, "forward"),  # .item() in the forward phase
        _event("aten::_local_scalar_dense", "CPU", 430.0, 435.0, cpu_parent=None),  # outside every phase: not drawn
        _item_read(450.0, 455.0, "Optimizer.step#Adam.step"),  # Adam reading its own step count: torch's, not yours
        _event("aten::add", "CPU", 500.0, 510.0, cpu_parent=None),  # outside every phase: not drawn
    ]
    spans = timelines.step_spans(events, ("forward",))
    assert [(s.lane, s.name, s.kind) for s in spans] == [
        ("CPU operators", "aten::linear", "compute"),
        ("CPU operators", "aten::_foreach_add_", "compute"),
        ("host", "next batch", "data"),
        ("host", "forward", "host phase"),
        ("host waits", "aten::_local_scalar_dense", "host waits for results"),
    ]
    assert spans[2].start_ms == 0.0 and spans[0].start_ms == pytest.approx(0.12)
    assert timelines._lane_order(spans)[:2] == ["host", "host waits"]


def test_step_spans_on_a_gpu_trace_draw_streams_not_cpu_operators() -> None:
    forward = _event("forward", "CPU", 0.0, 50.0, cpu_parent=None)
    events = [
        forward,
        _event("aten::mm", "CPU", 10.0, 20.0, cpu_parent=forward),
        _event("cudaStreamSynchronize", "CPU", 60.0, 900.0, cpu_parent=None),
        _event("sm90_xmma_gemm", "CUDA", 30.0, 800.0, device_index=0, device_resource_id=7),
        _event("forward", "CUDA", 25.0, 850.0, device_index=0, device_resource_id=7, is_user_annotation=True),
    ]
    spans = timelines.step_spans(events, ("forward",))
    assert {s.lane for s in spans} == {"host", "host waits", "GPU 0 stream 7"}
    assert [s.name for s in spans if s.lane.startswith("GPU")] == ["sm90_xmma_gemm"], "the range's GPU copy is no work"
    assert timelines.step_spans([], ("forward",)) == []


def test_spans_from_events_refuses_an_event_that_ends_before_it_starts() -> None:
    with pytest.raises(ValueError, match="ends"):
        timelines.spans_from_events([_event("k", "CUDA", 10.0, 5.0, device_resource_id=7)], "cuda")


def test_a_span_knows_how_long_it_took() -> None:
    assert Span("lane", "x", 1.0, 3.5).ms == 2.5


def test_profile_spans_on_cpu_ops_without_the_profilers_stderr_lines(capfd: pytest.CaptureFixture[str]) -> None:
    a = torch.randn(64, 64)
    spans = timelines.profile_spans(lambda: (a @ a).sin(), "cpu")
    assert "USDT" not in capfd.readouterr().err  # kineto's profiler_start/stop lines stay out of the notebook
    names = [s.name for s in spans]
    assert "aten::matmul" in names and "aten::sin" in names
    assert len({s.lane for s in spans}) == 1  # CPU ops run one after another on the calling thread


# -- plots ------------------------------------------------------------------------------


def test_plot_timelines_labels_simulations() -> None:
    import matplotlib

    matplotlib.use("Agg")
    panels = {name: on_simulated_gpu(4, 2.0, 2.0, overlap=name == "overlapped") for name in ("serial", "overlapped")}
    fig = timelines.plot_timelines(panels, title="copy/compute", simulated=True)
    assert fig._suptitle.get_text().startswith("SIMULATION")
    assert len(fig.axes) == 2
    assert [t.get_text() for t in fig.axes[1].get_yticklabels()] == ["copy stream", "compute stream"]
    real = timelines.plot_timelines({"measured": [Span("GPU 0 stream 7", "k", 0.0, 1.0)]}, title="t", simulated=False)
    assert "SIMULATION" not in real._suptitle.get_text()


def test_quiet_stderr_silences_file_descriptor_2_and_restores_it(capfd: pytest.CaptureFixture[str]) -> None:
    import os

    with quiet_stderr():
        os.write(2, b"from C++\n")
    os.write(2, b"after\n")
    err = capfd.readouterr().err
    assert "from C++" not in err and "after" in err


# -- the simulated GPU ------------------------------------------------------------------------------


def _race(producer_ms: float, consumer_ms: float, *, fix_raw: bool, fix_war: bool) -> tuple[list[float], float, float]:
    ms = standins.SIMULATED_CYCLES_PER_MS
    with standins.simulated_cuda() as sim:
        a, side = sim.zeros(), torch.cuda.Stream()
        means = produce_and_consume(
            a, side, 3, int(producer_ms * ms), int(consumer_ms * ms), fix_raw=fix_raw, fix_war=fix_war
        )
        host_ms = sim.host_ms
        return [m.item() for m in means], host_ms, sim.host_ms


def test_simulation_shows_the_read_after_write_race_and_its_fix() -> None:
    assert _race(20, 0, fix_raw=False, fix_war=False)[0] == [0.0, 0.0, 0.0]  # every read before its write
    assert _race(20, 0, fix_raw=True, fix_war=False)[0] == [1.0, 2.0, 3.0]


def test_simulation_shows_the_write_after_read_race_and_its_fix() -> None:
    assert _race(0, 20, fix_raw=True, fix_war=False)[0] == [3.0, 3.0, 3.0]  # overwritten before each read
    seen, host_ms, total_ms = _race(20, 20, fix_raw=True, fix_war=True)
    assert seen == [1.0, 2.0, 3.0]
    assert host_ms < 1.0 < 60.0 < total_ms  # the waits are on the GPU: Python was never held


def test_simulated_synchronize_blocks_the_host_and_item_reads_unwritten_results_as_nan() -> None:
    with standins.simulated_cuda() as sim:
        a, side = sim.zeros(fill_ms=5.0), torch.cuda.Stream()
        a.fill_(7)
        torch.cuda.synchronize()
        assert sim.host_ms >= 5.0 and sim.blocked_ms > 4.0 and sim.host_waits == ["torch.cuda.synchronize()"]
        with torch.cuda.stream(side):
            torch.cuda._sleep(3 * standins.SIMULATED_CYCLES_PER_MS)
            mean = a.mean()
        assert math.isnan(mean.item())  # read on the default stream, which did not wait for `side`
        torch.cuda.current_stream().wait_stream(side)
        assert mean.item() == 7.0


def test_simulated_events_time_the_gpu_and_refuse_what_cuda_refuses() -> None:
    with standins.simulated_cuda(launch_ms=0.0) as sim:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(4 * standins.SIMULATED_CYCLES_PER_MS)
        end.record()
        with pytest.raises(RuntimeError, match="not ready"):
            start.elapsed_time(end)  # the GPU has not reached `end` yet
        end.synchronize()
        assert start.elapsed_time(end) == pytest.approx(4.0)
        plain = torch.cuda.Event()
        plain.record()
        with pytest.raises(RuntimeError, match="enable_timing"):
            plain.elapsed_time(end)
        side = torch.cuda.Stream()
        marker = torch.cuda.current_stream().record_event()
        side.wait_event(marker)
        assert side.query() and sim.default.query()


def test_simulated_cuda_restores_torch_cuda_even_after_an_error() -> None:
    def patched() -> tuple:
        cuda = (torch.cuda.Stream, torch.cuda.Event, torch.cuda.stream, torch.cuda.synchronize, torch.cuda._sleep)
        return (*cuda, torch.Stream, torch.Event, torch.accelerator.synchronize)

    real = patched()
    with pytest.raises(ZeroDivisionError), standins.simulated_cuda():
        assert all(now is not before for now, before in zip(patched(), real, strict=True))
        1 / 0  # noqa: B018
    assert patched() == real


def test_simulated_cuda_rejects_bad_inputs() -> None:
    with standins.simulated_cuda() as sim:
        side = torch.cuda.Stream()
        with pytest.raises(TypeError, match="wait_stream needs a stream"):
            side.wait_stream("default")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="torch.cuda.stream"):
            torch.cuda.stream(42)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="whole number of cycles"):
            torch.cuda._sleep(2.5)  # type: ignore[arg-type]
        with pytest.raises(AttributeError, match="knows fill_"):
            sim.zeros().clamp_(0)


def test_a_stream_kept_from_an_earlier_simulation_joins_the_running_one_idle() -> None:
    """As a stream cached across calls on a GPU: made in one check, used in the next."""
    with standins.simulated_cuda():
        kept = torch.cuda.Stream()
        with torch.cuda.stream(kept):
            torch.cuda._sleep(5 * standins.SIMULATED_CYCLES_PER_MS)
    with standins.simulated_cuda() as sim:
        sim.default.wait_stream(kept)
        assert kept.sim is sim and kept in sim.streams and sim.default.free_ms < 1.0


def test_asking_query_in_a_loop_ends_and_holds_the_host_as_waiting_does():
    with standins.simulated_cuda() as sim:
        torch.cuda._sleep(2 * standins.SIMULATED_CYCLES_PER_MS)  # 2 ms of GPU work
        event = torch.cuda.Event()
        event.record()
        polls = 0
        while not event.query():
            polls += 1
        assert polls >= 1 and sim.host_ms >= 2.0
        stream = torch.cuda.current_stream()
        torch.cuda._sleep(standins.SIMULATED_CYCLES_PER_MS)
        while not stream.query():
            pass
    assert sim.host_ms >= 3.0
    assert sim.host_waits.count("query() in a loop") == 2  # one entry per loop, not per query
    assert sim.blocked_ms >= 2.9  # the loops held the host, like synchronize()


def test_a_non_blocking_copy_to_the_host_lands_only_when_the_host_waits_past_it() -> None:
    with standins.simulated_cuda(copy_ms=1.0) as sim:
        gpu = sim.on_gpu(torch.arange(1.0, 5.0))
        with sim.tensors():
            early = torch.cuda.Event()
            early.record()  # before the copy: waiting for it does not wait for the copy
            host = gpu.to("cpu", non_blocking=True)
            assert host.tolist() == [sim.NOT_LANDED] * 4, "only queued"
            early.synchronize()
            assert host.tolist() == [sim.NOT_LANDED] * 4
            late = torch.Event("cuda")  # the device-generic spelling is simulated too
            late.record()
            late.synchronize()
            assert host.tolist() == [1.0, 2.0, 3.0, 4.0]
            assert sim.is_on_gpu(gpu * 2) and not sim.is_on_gpu(host)
            blocking = gpu.cpu()
    assert blocking.tolist() == [1.0, 2.0, 3.0, 4.0] and sim.host_waits[-1] == "a blocking copy to the host"
    assert [e.copies_before for e in sim.recorded] == [0, 1]


def test_every_host_read_of_a_simulated_value_waits_and_is_named_as_the_code_spells_it() -> None:
    """Round-2 attack, chapter 06: print, bool, f-strings, comparisons, .cpu() of a simulated mean read it on the
    host as .item() does; one query() that says False is no wait, asking again at once is."""
    with standins.simulated_cuda() as sim:
        a = sim.zeros(fill_ms=1.0, numel=4)
        a[:] = 2
        mean = a.sum() / a.numel()
        assert sim.host_waits == [] and mean.value() == 2.0 and len(a) == 4
        read = (float(mean), int(mean), bool(mean), f"{mean}", bool(mean > 1), mean.tolist(), mean.to("cpu").item())
        assert read == (2.0, 2, True, "2.0", True, 2.0, 2.0) and a.cpu().tolist() == [2.0] * 4
        assert sim.host_waits == [
            "float()",
            "int()",
            "bool()",
            "an f-string or format()",
            "a `>` comparison",
            ".tolist()",
            '.to("cpu")',
            ".cpu()",
        ]
        with pytest.raises(AttributeError, match="the SIMULATED value has no 'abs': it knows v / number, .clone"):
            mean.abs()
        torch.cuda._sleep(2 * standins.SIMULATED_CYCLES_PER_MS)
        event = torch.cuda.Event()
        event.record()
        assert not event.query() and len(sim.host_waits) == 8, "asking once does not wait"
        assert not event.query() and sim.host_waits[-1] == "query() in a loop"
