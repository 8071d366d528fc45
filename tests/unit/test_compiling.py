"""helpers.compiling: the compiler advice for torch.compile failures and the CPU model of CUDA graph replay."""

from __future__ import annotations

import copy
import sys

import pytest
import torch

from helpers import compiling
from helpers.compiling import compiled_files, compiler_advice, cpp_compiler, inductor_cache_dir
from helpers.standins import GraphReplayModel


@pytest.mark.parametrize(("platform", "expected"), [("linux", "g++"), ("darwin", "clang++"), ("win32", "cl")], ids=str)
def test_cpp_compiler_is_the_one_inductor_calls_per_platform(monkeypatch, platform: str, expected: str) -> None:
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setattr(sys, "platform", platform)
    assert cpp_compiler() == expected
    monkeypatch.setenv("CXX", "/opt/bin/my-c++")
    assert cpp_compiler() == "/opt/bin/my-c++", "CXX overrides the default, as in torch._inductor.config.cpp.cxx"


def test_cpp_compiler_matches_inductors_own_setting_here(monkeypatch) -> None:
    from torch._inductor import config

    candidates = [c for c in config.cpp.cxx if c is not None]
    assert cpp_compiler() in candidates or sys.platform == "win32"


@pytest.mark.parametrize(
    ("platform", "advice"),
    [("linux", "apt-get install g++"), ("darwin", "xcode-select --install"), ("win32", "Visual Studio Build Tools")],
    ids=str,
)
def test_compiler_advice_says_what_broke_what_is_missing_and_how_to_fix_it(monkeypatch, platform, advice) -> None:
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.setattr(compiling.shutil, "which", lambda name: None)
    text = compiler_advice(RuntimeError("InvalidCxxCompiler: No working C++ compiler found\nmore lines"))
    assert text.startswith("torch.compile failed: RuntimeError: InvalidCxxCompiler: No working C++ compiler found")
    assert "more lines" not in text, "only the first line of the error"
    assert f"{cpp_compiler()!r}" in text and "not found: install" in text
    assert advice in text and "restart the kernel" in text


def test_compiler_advice_names_the_compiler_found(monkeypatch) -> None:
    monkeypatch.setattr(compiling.shutil, "which", lambda name: f"/usr/bin/{name}")
    text = compiler_advice(ValueError("something else broke"))
    assert f"with /usr/bin/{cpp_compiler()}: check that it runs" in text
    assert ("libomp" if sys.platform == "darwin" else "python3-dev") in text
    assert "apt-get install g++" not in text, "a compiler that is there is not to be installed again"


def test_compiler_advice_on_a_gpu_is_about_triton() -> None:
    text = compiler_advice(RuntimeError("Cannot find a working triton installation"), torch.device("cuda", 0))
    assert "Triton" in text and "import triton" in text and "gcc or clang" in text and "C++" not in text.split("\n")[1]


def test_compiler_advice_on_apple_gpus_is_not_about_cpp_compilers(monkeypatch) -> None:
    monkeypatch.setattr(compiling.shutil, "which", lambda name: None)
    text = compiler_advice(RuntimeError("metal shader failed"), "mps")
    assert "Metal" in text and "install" not in text and "CXX" not in text


def test_compiler_advice_survives_an_empty_message() -> None:
    assert compiler_advice(RuntimeError()).startswith("torch.compile failed: RuntimeError: ")


def test_inductor_cache_dir_follows_the_environment_then_inductors_default(monkeypatch, tmp_path) -> None:
    from torch._inductor.runtime import cache_dir_utils

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "mine"))
    assert inductor_cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR")
    assert str(inductor_cache_dir()) == cache_dir_utils.default_cache_dir(), "the same folder Inductor picks"


def test_compiled_files_counts_compiled_code_only(tmp_path) -> None:
    assert compiled_files(tmp_path / "missing") == 0
    (tmp_path / "ab").mkdir()
    for name in ("ab/kernel.so", "ab/wrapper.py", "ab/kernel.cpp", "locks.lock", "k.cubin"):
        (tmp_path / name).write_text("x")
    (tmp_path / "ab" / "folder.py").mkdir()
    assert compiled_files(tmp_path) == 3, "the .so, the .py and the .cubin; not sources, locks or folders"


def _affine(x: torch.Tensor) -> torch.Tensor:
    return 2 * x + 1


def test_replay_reads_the_captured_input_and_writes_the_captured_output() -> None:
    graph = GraphReplayModel()
    static_in = torch.zeros(3)
    static_out = graph.capture(_affine, static_in)
    assert torch.isnan(static_out).all() and graph.replays == 0, "like a GPU's capture, which runs nothing"
    static_in.copy_(torch.tensor([1.0, 2.0, 3.0]))
    graph.replay()
    assert torch.equal(static_out, torch.tensor([3.0, 5.0, 7.0])), "the same output tensor, overwritten"
    assert graph.replays == 1


def test_rebinding_the_input_name_gives_a_stale_result() -> None:
    graph = GraphReplayModel()
    static_in = torch.zeros(3)
    static_out = graph.capture(_affine, static_in)
    static_in = torch.full((3,), 5.0)  # noqa: F841 - the point: the graph does not see the new tensor
    graph.replay()
    assert torch.equal(static_out, torch.ones(3))


def test_capture_keeps_autograd_on_as_cuda_does_and_no_grad_turns_it_off() -> None:
    net = torch.nn.Linear(4, 2)
    static_in = torch.randn(5, 4)
    assert GraphReplayModel().capture(net, static_in).requires_grad
    with torch.no_grad():
        out = GraphReplayModel().capture(net, static_in)
    assert out.shape == (5, 2) and not out.requires_grad


def test_a_whole_training_step_replays_as_eager_steps_and_state_made_in_capture_is_remade() -> None:
    def trained(momentum: float, warm_up: bool) -> tuple[torch.Tensor, torch.Tensor]:
        torch.manual_seed(0)
        net, x, y = torch.nn.Linear(4, 1), torch.randn(8, 4), torch.randn(8, 1)
        twin = copy.deepcopy(net)
        opt, twin_opt = (torch.optim.SGD(m.parameters(), lr=0.1, momentum=momentum) for m in (net, twin))

        def step(m: torch.nn.Module, o: torch.optim.Optimizer) -> torch.Tensor:
            loss = torch.nn.functional.mse_loss(m(x), y)
            loss.backward()
            o.step()
            return loss

        for _ in range(warm_up):  # a real step first: the momentum buffer exists before capture
            step(net, opt)
        opt.zero_grad(set_to_none=True)
        graph = GraphReplayModel()
        graph.capture(lambda: step(net, opt))
        twin.load_state_dict(net.state_dict())
        twin_opt.load_state_dict(copy.deepcopy(opt.state_dict()))  # its own buffers, not shared ones
        for _ in range(3):
            graph.replay()
            twin_opt.zero_grad()
            step(twin, twin_opt)
        return net.weight, twin.weight

    for momentum, warm_up in ((0.0, False), (0.9, True)):
        torch.testing.assert_close(*trained(momentum, warm_up))
    replayed, eager = trained(0.9, False)  # the buffer made inside capture: each replay re-makes it from the gradient
    assert not torch.allclose(replayed, eager)


def test_a_captured_steps_learning_rate_is_the_one_it_captured() -> None:
    net = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    graph = GraphReplayModel()
    graph.capture(lambda: (torch.nn.functional.mse_loss(net(x), y).backward(), opt.step()))
    before = net.weight.detach().clone()
    opt.param_groups[0]["lr"] = 0.0  # a scheduler's change: the recorded add_ keeps alpha=-0.1
    graph.replay()
    assert not torch.equal(net.weight, before)


def test_a_capture_leaves_the_tensors_that_existed_as_they_were_as_a_gpus_capture_runs_nothing() -> None:
    net, x = torch.nn.Linear(4, 1), torch.randn(8, 4)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    net(x).sum().backward()  # gradients an earlier step left
    before = [t.detach().clone() for t in (net.weight, net.weight.grad)]
    graph = GraphReplayModel()
    loss = graph.capture(lambda: (net(x).sum().backward(), opt.step(), opt.zero_grad(set_to_none=False))[0])
    assert all(map(torch.equal, (net.weight, net.weight.grad), before)), "the captured step and zero_ wrote them"
    assert loss is None or torch.isnan(loss).all()
    graph.replay()  # adds onto the stale gradients, as on a GPU, then zeroes them
    torch.testing.assert_close(net.weight, before[0] - 0.1 * (before[1] + x.sum(0)))


def test_several_static_inputs() -> None:
    graph = GraphReplayModel()
    a, b = torch.ones(2), torch.ones(2)
    out = graph.capture(torch.add, a, b)
    b.fill_(3.0)
    graph.replay()
    assert torch.equal(out, torch.full((2,), 4.0))


def test_replay_before_capture_says_what_to_do() -> None:
    with pytest.raises(RuntimeError, match="nothing captured yet"):
        GraphReplayModel().replay()


def test_replay_runs_no_python_so_cpu_side_values_and_branches_stay_as_captured() -> None:
    settings = {"scale": 2.0, "flip": False}

    def step(x: torch.Tensor) -> torch.Tensor:
        y = x * settings["scale"]
        if settings["flip"]:  # decided on the CPU, once, at capture
            y = -y
        return y

    static_in = torch.ones(3)
    graph = GraphReplayModel()
    static_out = graph.capture(step, static_in)
    settings.update(scale=3.0, flip=True)
    static_in.fill_(5.0)
    graph.replay()
    assert torch.equal(static_out, torch.full((3,), 10.0)), "new data, but the captured scale and branch"


def test_values_kept_in_tensors_follow_the_new_settings() -> None:
    scale, flip = torch.tensor(2.0), torch.tensor(False)
    static_in = torch.ones(3)
    graph = GraphReplayModel()
    static_out = graph.capture(lambda x: torch.where(flip, -(x * scale), x * scale), static_in)
    scale.fill_(3.0)
    flip.fill_(True)
    graph.replay()
    assert torch.equal(static_out, torch.full((3,), -3.0))


@pytest.mark.parametrize(
    ("read", "named"),
    [
        (lambda x: x.sum().item(), ".item()"),
        (lambda x: x * 2 if x.sum() > 0 else x, "`if t:`"),
        (lambda x: print(x), "print(t)"),
        (lambda x: x.tolist(), ".tolist()"),
        (lambda x: x.numpy(), ".numpy()"),
    ],
)
def test_a_host_read_during_capture_raises_and_leaves_tensors_printable(read, named: str) -> None:
    with pytest.raises(RuntimeError, match="CPU MODEL") as caught:
        GraphReplayModel().capture(read, torch.ones(2))
    assert named in str(caught.value)
    assert repr(torch.ones(2)) == "tensor([1., 1.])" and torch.ones(2).tolist() == [1.0, 1.0]


def test_a_layered_module_replays_on_new_data_like_eager() -> None:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU(), torch.nn.Linear(8, 3)).eval()
    static_in = torch.randn(4, 8)
    graph = GraphReplayModel()
    static_out = graph.capture(net, static_in)
    batch = torch.randn(4, 8)
    static_in.copy_(batch)
    graph.replay()
    with torch.no_grad():
        torch.testing.assert_close(static_out, net(batch))


def test_compiler_advice_for_a_cxx_that_names_nothing_says_to_fix_cxx(monkeypatch) -> None:
    monkeypatch.setenv("CXX", "/nonexistent/g++")
    monkeypatch.setattr(compiling.shutil, "which", lambda name: None)
    text = compiler_advice(RuntimeError("InvalidCxxCompiler"))
    assert "'/nonexistent/g++' was not found: fix or unset CXX" in text and "apt-get" not in text


def test_compiler_advice_shows_the_compilers_own_error_line() -> None:
    exc = RuntimeError(
        "C++ compile error\n\nCommand:\ng++ x.cpp\n\nOutput:\nx.cpp:1: fatal error: Python.h: No such file"
    )
    assert "\n  x.cpp:1: fatal error: Python.h: No such file" in compiler_advice(exc)
