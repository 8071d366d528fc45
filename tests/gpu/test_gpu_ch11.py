"""Chapter 11's GPU claims, checked on a real CUDA GPU (skipped, with the reason, elsewhere).

Floors are ones a Kaggle T4 meets: a tiny kernel costs microseconds to launch (not nanoseconds,
not milliseconds), a launch-bound model replayed as a CUDA graph beats eager launches, and
`torch.compile(mode="reduce-overhead")` replays CUDA graphs with eager's results. The capture rules
are checked without timings: `copy_` broadcasts into a static input, a host read inside capture
raises a RuntimeError (in a fresh process, as the chapter does), Python values are frozen at
capture while values in tensors follow, and graph breaks, recompiles and a compiled training step
behave on CUDA tensors as on the CPU. A whole training step captured after real steps replays as
eager steps do (and faster); captured without them, its momentum is lost; the graphed
forward-backward and reduce-overhead routes give eager's losses. Every timing synchronises the GPU.
The compile tests take tens of seconds on a T4 (Triton compiles each kernel).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

import pytest
import torch

from helpers.standins import GraphReplayModel

from .recorded import recorded

pytestmark = pytest.mark.gpu
DEV = torch.device("cuda:0")


def _seconds_per_call(fn, *args, calls: int = 200, repeats: int = 5) -> float:
    """The chapter's timing: best of `repeats` runs of `calls` calls, one warm-up call, the GPU synchronised."""
    fn(*args)
    best = float("inf")
    for _ in range(repeats):
        torch.cuda.synchronize(DEV)
        start = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        torch.cuda.synchronize(DEV)
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def _small_net() -> torch.nn.Module:
    """The chapter's launch-bound model: six Linear(128, 128) + GELU layers."""
    torch.manual_seed(0)
    layers: list[torch.nn.Module] = []
    for _ in range(6):
        layers += [torch.nn.Linear(128, 128), torch.nn.GELU()]
    return torch.nn.Sequential(*layers).to(DEV).eval()


def _capture(net: Callable[[torch.Tensor], Any], static_in: torch.Tensor) -> tuple[torch.cuda.CUDAGraph, Any]:
    """The docs' recipe, as in the chapter: warm up `net(static_in)` on a side stream, then capture it."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(3):
            net(static_in)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        static_out = net(static_in)
    return graph, static_out


def test_a_tiny_kernel_costs_microseconds_to_launch() -> None:
    tiny = torch.zeros(16, device=DEV)
    per_op = _seconds_per_call(tiny.add_, 1, calls=2000)
    assert 0.5e-6 < per_op < 200e-6, f"{per_op * 1e6:.2f} µs per tiny add_"


def test_for_tiny_work_the_gpu_is_no_faster_than_the_cpu() -> None:
    """The chapter's correction of seed 000 ("a GPU is fast"): a 16-number add_ costs the GPU its launch."""
    on_gpu = _seconds_per_call(torch.zeros(16, device=DEV).add_, 1, calls=2000)
    on_cpu = _seconds_per_call(torch.zeros(16).add_, 1, calls=2000)
    assert on_gpu >= 0.8 * on_cpu, f"GPU {on_gpu * 1e6:.2f} µs vs CPU {on_cpu * 1e6:.2f} µs"


def _past_the_l2_cache() -> int:
    """Numbers in the sweep's largest float32 tensor, as the chapter sizes it: 2**24, or more (in steps
    of 4x) until the tensor is at least twice the L2 cache, so that an add_ on it runs from memory."""
    n = 2**24
    while 4 * n < 2 * torch.cuda.get_device_properties(DEV).L2_cache_size:
        n *= 4
    return n


def test_small_sizes_sit_on_the_launch_floor_and_large_ones_cost_their_work() -> None:
    largest = _past_the_l2_cache()
    times = {}
    for n in (2**4, 2**12, largest):
        x = torch.zeros(n, device=DEV)
        times[n] = _seconds_per_call(x.add_, 1, calls=200 if n < 2**20 else 20)
        del x
    l2 = torch.cuda.get_device_properties(DEV).L2_cache_size
    print(
        f"add_ per call: {', '.join(f'{n:,} numbers {t * 1e6:.2f} µs' for n, t in times.items())}; "
        f"L2 {l2 / 2**20:.0f} MiB; largest / floor {times[largest] / times[2**4]:.1f}x"
    )
    assert times[2**12] < 3 * times[2**4], times
    assert times[largest] > 5 * times[2**4], times


def test_one_batched_matmul_beats_64_small_ones() -> None:
    torch.manual_seed(0)
    weights = [torch.randn(16, 16, device=DEV) for _ in range(64)]
    vectors = [torch.randn(16, device=DEV) for _ in range(64)]
    w, v = torch.stack(weights), torch.stack(vectors)

    def one_by_one() -> list[torch.Tensor]:
        return [a @ b for a, b in zip(weights, vectors, strict=True)]

    def batched() -> torch.Tensor:
        return (w @ v.unsqueeze(-1)).squeeze(-1)

    torch.testing.assert_close(torch.stack(one_by_one()), batched())
    assert _seconds_per_call(batched, calls=50) < _seconds_per_call(one_by_one, calls=50)


def test_cuda_graph_replay_equals_eager_and_is_faster_on_a_launch_bound_model() -> None:
    net = _small_net()
    static_in = torch.randn(8, 128, device=DEV)
    graph, static_out = _capture(net, static_in)
    batch = torch.randn(8, 128, device=DEV)
    static_in.copy_(batch)
    graph.replay()
    with torch.no_grad():
        torch.testing.assert_close(static_out, net(batch))
        eager = _seconds_per_call(net, static_in, calls=200)
    replay = _seconds_per_call(graph.replay, calls=200)
    assert replay * 1.2 < eager, f"replay {replay * 1e6:.1f} µs vs eager {eager * 1e6:.1f} µs"


def test_rebinding_the_static_input_gives_a_stale_result_and_copy_fixes_it() -> None:
    net = _small_net()
    static_in = torch.randn(8, 128, device=DEV)
    with torch.no_grad():
        captured_result = net(static_in).clone()
    graph, static_out = _capture(net, static_in)
    new_batch = torch.randn(8, 128, device=DEV)
    with torch.no_grad():
        wanted = net(new_batch)
    captured_in = static_in
    static_in = new_batch  # rebinding: the graph still reads captured_in's memory
    graph.replay()
    assert not torch.allclose(static_out, wanted)
    torch.testing.assert_close(static_out, captured_result)
    captured_in.copy_(new_batch)
    graph.replay()
    torch.testing.assert_close(static_out, wanted)


def test_each_replay_overwrites_the_static_output_so_clone_what_you_keep() -> None:
    net = _small_net()
    static_in = torch.randn(8, 128, device=DEV)
    graph, static_out = _capture(net, static_in)
    static_in.copy_(torch.randn(8, 128, device=DEV))
    graph.replay()
    kept, alias = static_out.clone(), static_out
    static_in.copy_(torch.randn(8, 128, device=DEV))
    graph.replay()
    assert alias.data_ptr() == static_out.data_ptr() and not torch.allclose(alias, kept)


def test_the_cpu_model_agrees_with_a_real_graph_on_the_rules() -> None:
    """The chapter's CPU stand-in gives what a real CUDA graph gives for the same replay / copy_ / replay sequence."""
    net = _small_net()
    first, second = torch.randn(8, 128, device=DEV), torch.randn(8, 128, device=DEV)
    results = {}
    for kind in ("cuda graph", "cpu model"):
        static_in = first.clone()
        if kind == "cuda graph":
            graph, static_out = _capture(net, static_in)
        else:
            graph = GraphReplayModel()
            static_out = graph.capture(net, static_in)
        graph.replay()
        seen = [static_out.clone()]
        static_in.copy_(second)
        graph.replay()
        seen.append(static_out.clone())
        results[kind] = seen
    for real, model in zip(results["cuda graph"], results["cpu model"], strict=True):
        torch.testing.assert_close(real, model, rtol=1e-4, atol=1e-5)


def test_torch_compile_fuses_the_gelu_chain_into_generated_kernels() -> None:
    from torch.profiler import ProfilerActivity, profile

    def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
        return 0.5 * x * (1 + torch.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))

    x = torch.randn(2**20, device=DEV)
    compiled = torch.compile(gelu_tanh, dynamic=True)
    torch.testing.assert_close(compiled(x), gelu_tanh(x), rtol=1e-5, atol=1e-5)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        compiled(x)
    assert not [e.name for e in prof.events() if e.name in ("aten::mul", "aten::add", "aten::tanh")]
    assert _seconds_per_call(compiled, x, calls=50) < _seconds_per_call(gelu_tanh, x, calls=50)


def test_reduce_overhead_replays_a_cuda_graph_and_gives_eagers_results() -> None:
    """What the chapter states for certain: the mode records CUDA graphs and replays them, with eager's results.

    Its speed is not claimed: on the H200 self-test host (torch 2.11, CUDA 13) it lost to eager on six blocks
    (320 vs 204 µs per forward) and on 24 (1,292 vs 1,103 µs), while a hand-captured graph beat eager there.
    """
    from torch.profiler import ProfilerActivity, profile

    net = _small_net()
    static_in = torch.randn(8, 128, device=DEV)
    graphed = torch.compile(net, mode="reduce-overhead")
    with torch.no_grad():
        for _ in range(3):  # compile, warm up, record
            graphed(static_in)
        torch.cuda.synchronize(DEV)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            out = graphed(static_in).clone()
            torch.cuda.synchronize(DEV)
        for _ in range(3):  # new data each call: copied into the graph's static input
            batch = torch.randn(8, 128, device=DEV)
            torch.testing.assert_close(graphed(batch).clone(), net(batch), rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(out, net(static_in), rtol=1e-4, atol=1e-4)
    names = [event.name for event in prof.events()]
    assert any(name.startswith("cudaGraphLaunch") for name in names), sorted(set(names))[:40]


def test_copy_into_a_static_input_broadcasts_a_batch_of_one_silently() -> None:
    """Section 7: copy_ guards no shape; a batch of 1 fills all 8 captured rows, a batch of 4 raises."""
    static_in = torch.zeros(8, 128, device=DEV)
    one = torch.randn(1, 128, device=DEV)
    static_in.copy_(one)
    assert torch.equal(static_in, one.expand(8, 128))
    with pytest.raises(RuntimeError):
        static_in.copy_(torch.randn(4, 128, device=DEV))


#: The chapter's section 8 child, with the three host reads defined inline: each capture on its own graph,
#: outcomes decided by exception type, the stream put back, and a clean capture afterwards as a control.
HOST_READS_CHILD = """
import json, torch

def with_item(x):
    y = x * 2
    return y / y.abs().max().item()

def with_print(x):
    y = x * 2
    print(y)
    return y

def with_if(x):
    y = x * 2
    if y.sum() > 0:
        return y
    return y - 1

x = torch.ones(8, device="cuda")
seen = {}
for fn in (with_item, with_print, with_if):
    try:
        with torch.cuda.graph(torch.cuda.CUDAGraph()):
            fn(x)
        seen[fn.__name__] = "captured"
    except RuntimeError as exc:
        seen[fn.__name__] = "refused " + type(exc).__name__
    torch.cuda.set_stream(torch.cuda.default_stream())
    seen[fn.__name__ + " still capturing"] = torch.cuda.is_current_stream_capturing()
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    out = torch.where((x * 2).sum() > 0, x * 2, x * 2 - 1)
x.fill_(-1.0)
graph.replay()
seen["control"] = out.tolist() == [-3.0] * 8
print("RESULT " + json.dumps(seen))
"""


def test_a_host_read_inside_capture_makes_the_capture_fail_with_a_runtime_error() -> None:
    """Section 8: .item(), print(t) and an `if` on a tensor each raise a RuntimeError inside capture (in a fresh
    process, as the chapter does), the stream leaves capture mode, and a clean capture works afterwards."""
    import json

    from helpers.processes import run_fresh_python

    out = run_fresh_python(HOST_READS_CHILD)
    seen = json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])
    for name in ("with_item", "with_print", "with_if"):
        assert seen[name].startswith("refused"), seen
        assert seen[name + " still capturing"] is False, seen
    assert seen["control"] is True, seen


def test_python_values_are_frozen_at_capture_and_values_in_tensors_follow() -> None:
    """Section 8: a Python number and a Python `if` are decided at capture; values kept in device tensors follow."""
    settings = {"scale": 2.0, "flip": False}

    def scaled(x: torch.Tensor) -> torch.Tensor:
        y = x * settings["scale"]
        if settings["flip"]:
            y = -y
        return y

    static_x = torch.ones(4, device=DEV)
    results = {}
    for kind in ("cuda graph", "cpu model"):
        settings.update(scale=2.0, flip=False)
        if kind == "cuda graph":
            graph, static_out = _capture(scaled, static_x)
        else:
            graph = GraphReplayModel()
            static_out = graph.capture(scaled, static_x)
        settings.update(scale=3.0, flip=True)
        graph.replay()
        results[kind] = static_out.tolist()
    assert results == {"cuda graph": [2.0] * 4, "cpu model": [2.0] * 4}, results

    scale_t, flip_t = torch.tensor(2.0, device=DEV), torch.tensor(False, device=DEV)
    graph, static_out = _capture(lambda x: torch.where(flip_t, -(x * scale_t), x * scale_t), static_x)
    scale_t.fill_(3.0)
    flip_t.fill_(True)
    graph.replay()
    assert static_out.tolist() == [-3.0] * 4


def test_a_choice_made_with_where_captures_and_follows_the_data() -> None:
    """Section 8's fix: torch.where keeps the decision on the device, so the capture succeeds and replays follow x."""

    def with_where(x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        return torch.where(y.sum() > 0, y, y - 1)

    static_x = torch.ones(8, device=DEV)
    graph, static_out = _capture(with_where, static_x)
    for sign, want in ((1.0, 2.0), (-1.0, -3.0)):
        static_x.fill_(sign)
        graph.replay()
        assert static_out.tolist() == [want] * 8


def test_graph_breaks_and_recompiles_count_the_same_on_the_gpu() -> None:
    """Section 10's counts, from a counting backend, with CUDA tensors: a break makes 2 graphs, moving the print
    out makes 1; 3 lengths give 3 graphs with dynamic=False, 2 by default, 1 with dynamic=True."""
    import contextlib
    import io

    graphs: list = []

    def counting_backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def step(x: torch.Tensor) -> torch.Tensor:
        y = torch.tanh(x) * 2
        print("mean:", y.mean().item())
        return y + 1

    torch.compiler.reset()
    with contextlib.redirect_stdout(io.StringIO()):
        torch.compile(step, backend=counting_backend)(torch.randn(64, device=DEV))
    assert len(graphs) == 2

    def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
        return 0.5 * x * (1 + torch.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))

    counts = {}
    for dynamic in (False, None, True):
        torch.compiler.reset()
        graphs.clear()
        compiled = torch.compile(gelu_tanh, backend=counting_backend, dynamic=dynamic)
        for n in (64, 128, 256):
            compiled(torch.randn(n, device=DEV))
        counts[dynamic] = len(graphs)
    torch.compiler.reset()
    assert counts == {False: 3, None: 2, True: 1}, counts


def test_a_compiled_training_step_gives_eagers_gradients() -> None:
    """Section 11: torch.compile (Inductor, Triton kernels) forward and backward; gradients equal an eager twin's."""
    import copy

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 1)).to(DEV)
    twin = copy.deepcopy(model)
    x, y = torch.randn(64, 32, device=DEV), torch.randn(64, 1, device=DEV)
    torch.nn.functional.mse_loss(torch.compile(model)(x), y).backward()
    torch.nn.functional.mse_loss(twin(x), y).backward()
    for p, q in zip(model.parameters(), twin.parameters(), strict=True):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-5)


def _training_net() -> torch.nn.Module:
    """Section 12's launch-bound model: six Linear(128, 128) + GELU blocks and a Linear(128, 1) head, seed 0."""
    torch.manual_seed(0)
    blocks = [m for _ in range(6) for m in (torch.nn.Linear(128, 128), torch.nn.GELU())]
    return torch.nn.Sequential(*blocks, torch.nn.Linear(128, 1)).to(DEV)


def _train_step(model: torch.nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss


def _after_real_steps(real_steps: int) -> tuple[Any, ...]:
    """Section 12's model, SGD with momentum and static tensors, after `real_steps` real steps on a side stream (the
    last step's gradients left in place)."""
    model = _training_net()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    sx, sy = torch.randn(32, 128, device=DEV), torch.randn(32, 1, device=DEV)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(real_steps):
            opt.zero_grad(set_to_none=True)
            _train_step(model, opt, sx, sy)
    torch.cuda.current_stream().wait_stream(side)
    return model, opt, sx, sy


def _captured_step(real_steps: int) -> tuple[Any, ...]:
    """Section 12's recipe with `real_steps` real steps first, and an eager twin: the same weights, and the momentum
    the real steps made (none without them: a buffer made inside the capture holds nothing until a replay)."""
    model, opt, sx, sy = _after_real_steps(real_steps)
    opt.zero_grad(set_to_none=True)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_loss = _train_step(model, opt, sx, sy)
    twin = copy.deepcopy(model)
    twin_opt = torch.optim.SGD(twin.parameters(), lr=0.05, momentum=0.9)
    if real_steps:
        twin_opt.load_state_dict(copy.deepcopy(opt.state_dict()))
    return model, opt, graph, static_loss, sx, sy, twin, twin_opt


def _replayed_and_eager(case: tuple[Any, ...], steps: int = 5) -> tuple[list[float], list[float]]:
    model, opt, graph, static_loss, sx, sy, twin, twin_opt = case
    replayed, eager = [], []
    for _ in range(steps):
        x, y = torch.randn(32, 128, device=DEV), torch.randn(32, 1, device=DEV)
        sx.copy_(x)
        sy.copy_(y)
        graph.replay()
        replayed.append(static_loss.item())
        twin_opt.zero_grad(set_to_none=True)
        eager.append(_train_step(twin, twin_opt, x, y).item())
    return replayed, eager


def test_a_whole_training_step_replays_as_eager_steps_and_faster() -> None:
    """Section 12: forward, backward and SGD with momentum in one graph give eager's losses, ignore a changed
    learning rate (a constant of the graph), and a replay beats an eager step on this launch-bound model."""
    case = _captured_step(real_steps=3)
    replayed, eager = _replayed_and_eager(case)
    torch.testing.assert_close(replayed, eager, rtol=1e-3, atol=1e-6)
    model, opt, graph, _, sx, sy, twin, twin_opt = case
    before = [p.clone() for p in model.parameters()]
    opt.param_groups[0]["lr"] = 0.0
    graph.replay()
    assert any(not torch.equal(p, q) for p, q in zip(model.parameters(), before, strict=True)), "lr=0 stopped a replay"

    def eager_step() -> None:
        twin_opt.zero_grad(set_to_none=True)
        _train_step(twin, twin_opt, sx, sy)

    eager_s, replay_s = _seconds_per_call(eager_step, calls=50), _seconds_per_call(graph.replay, calls=50)
    assert replay_s < eager_s, (replay_s, eager_s)


def test_momentum_made_inside_the_capture_is_remade_by_every_replay() -> None:
    """Section 12's claim, on CUDA: without real steps first, the momentum buffers are made by a captured kernel,
    every replay makes them again, and the replays drift from eager steps."""
    replayed, eager = _replayed_and_eager(_captured_step(real_steps=0))
    assert abs(replayed[0] - eager[0]) <= 1e-3 * eager[0], (replayed, eager)  # the first step has no momentum yet
    assert any(abs(a - b) > 1e-3 * b for a, b in zip(replayed, eager, strict=True)), (replayed, eager)


def _compiled_update(opt: torch.optim.Optimizer) -> Callable[[], None]:
    """The optimizer's step compiled as the chapter (and PyTorch's compiled-optimizer tutorial) does it."""

    @torch.compile(fullgraph=False)
    def update() -> None:
        opt.step()

    return update


def test_graphed_forward_backward_and_the_compiled_step_train_as_eager() -> None:
    """Section 12's other two routes: make_graphed_callables (SGD eager) and reduce-overhead with a compiled SGD step,
    the compiled one marked with cudagraph_mark_step_begin, give eager's losses over five steps."""
    batches = [(torch.randn(32, 128, device=DEV), torch.randn(32, 1, device=DEV)) for _ in range(5)]
    sample = torch.randn(32, 128, device=DEV)
    losses = {}
    for route in ("eager", "graphed", "compiled"):
        model = _training_net()
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        if route == "graphed":
            model = torch.cuda.make_graphed_callables(model, (sample,))
        update = _compiled_update(opt) if route == "compiled" else opt.step
        model = torch.compile(model, mode="reduce-overhead") if route == "compiled" else model
        losses[route] = []
        for x, y in batches:
            if route == "compiled":
                torch.compiler.cudagraph_mark_step_begin()
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            update()
            losses[route].append(loss.item())
    torch.testing.assert_close(losses["graphed"], losses["eager"], rtol=1e-3, atol=1e-6)
    torch.testing.assert_close(losses["compiled"], losses["eager"], rtol=1e-3, atol=1e-6)


def test_the_chapters_graph_replay_beats_eager() -> None:
    """Chapter 11's recorded speed-up of one graph replay over eager launches of its launch-bound forward."""
    speedup = recorded("11", "CUDA graph replay over eager, launch-bound forward")
    assert speedup["value"] > 1, speedup


def test_a_capture_changes_no_tensor_that_existed_on_a_gpu_nor_in_the_cpu_model() -> None:
    """A capture records kernels without running them: the weights and the gradients left at capture keep their
    values, in a CUDA graph and in the chapter's CPU model (which runs the step to record it, then puts them back)."""
    for kind in ("cuda graph", "cpu model"):
        model, opt, sx, sy = _after_real_steps(3)  # the last step's gradients stay: captured backward adds to them
        before = [t.detach().clone() for p in model.parameters() for t in (p, p.grad)]
        if kind == "cuda graph":
            with torch.cuda.graph(torch.cuda.CUDAGraph()):
                _train_step(model, opt, sx, sy)
        else:
            GraphReplayModel().capture(lambda: _train_step(model, opt, sx, sy))  # noqa: B023
        after = [t.detach() for p in model.parameters() for t in (p, p.grad)]
        assert all(torch.equal(a, b) for a, b in zip(after, before, strict=True)), kind
