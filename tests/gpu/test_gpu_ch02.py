"""Chapter 02's GPU claims: creation on the GPU, results stay there, the same-device rule and its error."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from .errors import is_device_mismatch_error
from .recorded import recorded


def _current_gpu() -> torch.device:
    """What "cuda" without an index means: the current GPU (GPU 0 unless `torch.cuda.set_device` moved it)."""
    return torch.device("cuda", torch.cuda.current_device())


@pytest.mark.gpu
def test_factories_create_on_the_gpu() -> None:
    assert torch.ones(2, 3, device="cuda").device == _current_gpu()
    for t in (torch.rand(2, 3, device="cuda:0"), torch.tensor([[2, 5, 8]], device=torch.device("cuda", 0))):
        assert t.device == torch.device("cuda", 0)
    with torch.device("cuda"):
        assert torch.zeros(3).device == _current_gpu()
        assert torch.tensor([1, 2]).device == _current_gpu()
    assert torch.zeros(3).device.type == "cpu", "the `with torch.device(...)` default ends with the block"


@pytest.mark.gpu
def test_where_a_gpu_tensor_says_it_lives() -> None:
    """Section 2: on a GPU `.is_cuda` is True and `.get_device()` is the GPU's index; on the CPU False and -1."""
    X = torch.zeros(2, 3, device="cuda:0")
    assert X.device == torch.device("cuda", 0) and X.is_cuda and X.get_device() == 0
    assert torch.equal(X.cpu(), torch.zeros(2, 3)), "torch.zeros(..., device=...) holds zeros"
    assert torch.ones(2, 3, device="cuda").get_device() == torch.cuda.current_device()
    on_cpu = X.cpu()
    assert not on_cpu.is_cuda and on_cpu.get_device() == -1


@pytest.mark.gpu
def test_the_chapters_device_is_the_first_gpu() -> None:
    """The chapter's `device = helpers.try_gpu()` is `cuda:0` on a CUDA machine, so its asserts hold."""
    import helpers

    device = helpers.try_gpu()
    assert device == torch.device("cuda", 0)
    X = torch.zeros(2, 3, device=device)
    assert X.device == device and X.is_cuda == (device.type == "cuda") and X.get_device() == device.index


@pytest.mark.gpu
def test_results_stay_on_the_gpu() -> None:
    x = torch.tensor([1, 2, 3], device="cuda")
    X = torch.ones(2, 3, device="cuda")
    for result in (x**2, X.sum(), X.mean(dim=1), X @ X.T, torch.relu(X - 1)):
        assert result.device == x.device and result.is_cuda and result.get_device() == X.get_device()
    assert torch.equal((X @ X.T).cpu(), torch.full((2, 2), 3.0)), "and they are the right values"


@pytest.mark.gpu
def test_gpu_plus_cpu_raises_the_device_mismatch_error() -> None:
    with pytest.raises(RuntimeError) as info:
        torch.ones(2, 3, device="cuda") + torch.ones(2, 3)
    assert is_device_mismatch_error(info.value), str(info.value)
    with pytest.raises(RuntimeError) as info:
        torch.ones(2, 3) + torch.ones(2, 3, device="cuda")
    assert is_device_mismatch_error(info.value), str(info.value)


@pytest.mark.gpu
def test_a_zero_dim_cpu_tensor_may_join_a_gpu_tensor() -> None:
    out = torch.ones(3, device="cuda") + torch.tensor(2.0)
    assert out.device.type == "cuda" and out.tolist() == [3.0, 3.0, 3.0]
    assert (torch.tensor(2.0) * torch.ones(3, device="cuda")).is_cuda, "first or second"
    assert (torch.ones(3, device="cuda") > torch.tensor(0.5)).is_cuda, "in comparisons too"
    with pytest.raises(RuntimeError) as info:
        torch.ones(3, device="cuda") + torch.tensor([2.0])
    assert is_device_mismatch_error(info.value), str(info.value)
    with pytest.raises(RuntimeError) as info:  # the pass is for 0-d tensors on the CPU, not 0-d tensors anywhere
        torch.ones(3) + torch.tensor(2.0, device="cuda")
    assert is_device_mismatch_error(info.value), str(info.value)


@pytest.mark.gpu
def test_each_line_of_questions_1_and_2_gives_on_a_gpu_what_it_gives_on_meta() -> None:
    """The predict-then-run questions run each line with g on meta, standing in for a GPU: a GPU must agree."""
    from helpers.exercises import ch02

    want = {"torch.zeros_like(g)": "gpu", "torch.zeros(3, dtype=g.dtype)": "cpu", "g.new_ones(2)": "gpu"}
    want |= {"torch.ones(g.shape)": "cpu", "g[0]": "gpu", "g[c > 0]": "gpu", "torch.tensor(2.0) * g": "gpu"}
    want |= {"g.sum() + c": "error", "c.sum() + g.sum()": "gpu", "torch.where(c > 0, g, 0.0)": "error"}
    want |= {"torch.cat([g, c])": "error"}
    assert set(want) == {*ch02._MADE, *ch02._MIXED, "torch.cat([g, c])"}
    for line, outcome in want.items():
        assert ch02._ran(line, "cuda") == ch02._ran(line, "meta") == outcome, line


@pytest.mark.gpu
def test_moving_one_side_fixes_the_mix() -> None:
    X, Y = torch.ones(2, 3, device="cuda"), torch.ones(2, 3)
    on_gpu, on_cpu = X + Y.to(X.device), X.cpu() + Y
    assert on_gpu.device == X.device and on_cpu.device.type == "cpu"
    assert torch.equal(on_gpu.cpu(), on_cpu)
    assert X.to(Y.device).device.type == "cpu" and (X.to(Y.device) + Y).device.type == "cpu", (
        "the chapter's other choice"
    )


@pytest.mark.gpu2
def test_two_gpus_are_two_devices() -> None:
    first, second = torch.ones(3, device="cuda:0"), torch.ones(3, device="cuda:1")
    assert (first.get_device(), second.get_device()) == (0, 1)
    with pytest.raises(RuntimeError) as info:
        first + second
    assert is_device_mismatch_error(info.value), str(info.value)
    assert (first + second.to(first.device)).device == first.device  # section 5's fixes, both ways
    assert (first.to(second.device) + second).device == second.device


@pytest.mark.gpu
def test_legacy_cuda_tensor_type_warns_no_longer_recommended() -> None:
    """torch.cuda.FloatTensor still works on a GPU but warns (once per process: run it fresh)."""
    code = (
        "import warnings, torch\n"
        "warnings.simplefilter('always')\n"
        "t = torch.cuda.FloatTensor([1.0, 2.0])\n"
        "print(t.device.type, t.dtype)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split() == ["cuda", "torch.float32"]
    assert "no longer recommended" in done.stderr


@pytest.mark.gpu
def test_legacy_constructor_stays_cpu_only_on_a_gpu_machine() -> None:
    """Section 3's first lines behave the same with a GPU: CPU tensors of the default dtype, no other device."""
    legacy = torch.Tensor([1, 2, 3])
    assert legacy.device.type == "cpu" and legacy.dtype == torch.get_default_dtype()
    for device in ("meta", "cuda", torch.device("cuda", 0)):  # source 003's torch.Tensor([1., 2.], device=cuda1)
        with pytest.raises(RuntimeError, match="legacy constructor expects device type: cpu"):
            torch.Tensor([1.0, 2.0], device=device)


@pytest.mark.gpu
def test_legacy_cuda_tensor_type_makes_a_cuda_float32_tensor() -> None:
    """Section 3's GPU branch: `torch.cuda.FloatTensor` gives a float32 tensor with `.is_cuda` True."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old = torch.cuda.FloatTensor([1.0, 2.0])  # teaches-deprecated
    assert old.is_cuda and old.dtype == torch.float32 and old.tolist() == [1.0, 2.0]


@pytest.mark.gpu
def test_the_chapters_matmul_is_several_times_faster_on_the_gpu() -> None:
    """Chapter 02's payoff cell records the GPU's speed over all of torch's CPU threads (it prints how many): a T4
    (about 4 TFLOP/s in float32) and an H100 both beat a CPU 3x."""
    ratio = recorded("02", "float32 matmul, GPU over all CPU threads")
    assert ratio["value"] > 3, ratio
