"""Chapter 02's GPU claims: creation on the GPU, results stay there, the same-device rule and its error."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from helpers.devices import is_device_mismatch_error


@pytest.mark.gpu
def test_factories_create_on_the_gpu() -> None:
    for t in (
        torch.ones(2, 3, device="cuda"),
        torch.rand(2, 3, device="cuda:0"),
        torch.tensor([[2, 5, 8]], device=torch.device("cuda", 0)),
    ):
        assert t.device == torch.device("cuda", 0)
    with torch.device("cuda"):
        assert torch.zeros(3).device.type == "cuda"
        assert torch.tensor([1, 2]).device.type == "cuda"


@pytest.mark.gpu
def test_results_stay_on_the_gpu() -> None:
    x = torch.tensor([1, 2, 3], device="cuda")
    X = torch.ones(2, 3, device="cuda")
    for result in (x**2, X.sum(), X.mean(dim=1), X @ X.T, torch.relu(X - 1)):
        assert result.device == x.device


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
    with pytest.raises(RuntimeError) as info:
        torch.ones(3, device="cuda") + torch.tensor([2.0])
    assert is_device_mismatch_error(info.value), str(info.value)


@pytest.mark.gpu
def test_moving_one_side_fixes_the_mix() -> None:
    X, Y = torch.ones(2, 3, device="cuda"), torch.ones(2, 3)
    assert (X + Y.to(X.device)).device.type == "cuda"
    assert (X.cpu() + Y).device.type == "cpu"


@pytest.mark.gpu2
def test_two_gpus_are_two_devices() -> None:
    with pytest.raises(RuntimeError) as info:
        torch.ones(3, device="cuda:0") + torch.ones(3, device="cuda:1")
    assert is_device_mismatch_error(info.value), str(info.value)


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
