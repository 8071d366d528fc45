"""helpers.devices: device choice on this machine and on pretend machines, bad arguments, messages."""

from __future__ import annotations

import pytest
import torch

from helpers import devices, standins


def test_on_this_machine_everything_falls_back_to_what_exists() -> None:
    count = torch.accelerator.device_count() if torch.accelerator.is_available() else 0
    assert len(devices.try_all_gpus()) == max(count, 1)
    assert devices.try_gpu(count) == torch.device("cpu")


@pytest.fixture
def two_cuda_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devices, "accelerator_type", lambda: "cuda")
    monkeypatch.setattr(devices, "accelerator_count", lambda: 2)


@pytest.mark.usefixtures("two_cuda_gpus")
def test_with_two_gpus_try_gpu_names_them_and_falls_back_past_them() -> None:
    assert devices.try_gpu() == torch.device("cuda:0")
    assert devices.try_gpu(1) == torch.device("cuda:1")
    assert devices.try_gpu(2) == torch.device("cpu")
    assert devices.try_all_gpus() == [torch.device("cuda:0"), torch.device("cuda:1")]


def test_an_apple_gpu_is_found_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devices, "accelerator_type", lambda: "mps")
    monkeypatch.setattr(devices, "accelerator_count", lambda: 1)
    assert devices.try_gpu() == torch.device("mps:0")
    assert devices.try_all_gpus() == [torch.device("mps:0")]


@pytest.mark.parametrize(
    ("bad", "error", "words"),
    [
        (-1, ValueError, "cannot be negative"),
        ("1", TypeError, "whole number"),
        (1.0, TypeError, "whole number"),
        (True, TypeError, "whole number"),
        (None, TypeError, "whole number"),
    ],
)
def test_bad_indices_get_clear_errors(bad: object, error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words):
        devices.try_gpu(bad)  # type: ignore[arg-type]
    with pytest.raises(error, match=words):
        devices.have_gpus(bad)  # type: ignore[arg-type]


def test_have_gpus_explains_what_is_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(devices, "cuda_gpu_count", lambda: 1)
    assert devices.have_gpus(1, "do one thing") is True
    assert capsys.readouterr().out == ""
    assert devices.have_gpus(2, "copy between GPUs") is False
    out = capsys.readouterr().out
    assert devices.NO_GPU_MARKER in out and "copy between GPUs" in out and "2 CUDA GPUs" in out
    assert "GPU T4 ×2" in out and "this machine has 1" in out


def test_synchronize_accepts_cpu_and_strings() -> None:
    devices.synchronize("cpu")
    devices.synchronize(torch.device("cpu"))
    with pytest.raises(RuntimeError):
        devices.synchronize("not-a-device")


@pytest.mark.parametrize(
    ("spelling", "words"),
    [
        ("cuda:1", "index=1"),
        ("cuda", "current device"),
        ("cpu", "the one 'cpu' device"),
        ("cpu:1", "drops the index"),
        ("meta", "the one 'meta' device"),
        ("gpu", "torch rejects 'gpu'"),
        ("cuda:-1", "torch rejects"),
        (7, "not a int"),
    ],
)
def test_describe_device_spelling(spelling: object, words: str) -> None:
    assert words in devices.describe_device_spelling(spelling)  # type: ignore[arg-type]


PRETEND = {
    "CPU-only build": ((None, 0, None), (False, None, None, 0, False, 0, False)),
    "CUDA build, no driver": ((None, 0, "cuda"), (False, "cuda", None, 0, False, 0, False)),
    "two CUDA GPUs": (("cuda", 2, None), (True, "cuda", "cuda", 2, True, 2, False)),
    "a Mac": (("mps", 1, None), (True, "mps", "mps", 1, False, 0, True)),
}


@pytest.mark.parametrize(("arguments", "answers"), PRETEND.values(), ids=PRETEND.keys())
def test_pretend_machine_answers_like_that_machine_and_restores(arguments: tuple, answers: tuple) -> None:
    accelerator, count, built = arguments
    real = (torch.accelerator.is_available(), torch.cuda.device_count(), torch.accelerator.current_accelerator())

    def kind(d: torch.device | None) -> str | None:
        return None if d is None else d.type

    with standins.pretend_machine(accelerator, count, built=built):
        seen = (
            torch.accelerator.is_available(),
            kind(torch.accelerator.current_accelerator()),
            kind(torch.accelerator.current_accelerator(check_available=True)),
            torch.accelerator.device_count(),
            torch.cuda.is_available(),
            torch.cuda.device_count(),
            torch.backends.mps.is_available(),
        )
        expected = [torch.device(accelerator, i) for i in range(count)] if accelerator else [torch.device("cpu")]
        assert devices.try_all_gpus() == expected
    assert seen == answers
    after = (torch.accelerator.is_available(), torch.cuda.device_count(), torch.accelerator.current_accelerator())
    assert after == real, "the real answers are back after the block"


def test_pretend_machine_restores_after_an_error() -> None:
    real = torch.cuda.device_count()
    with pytest.raises(KeyError), standins.pretend_machine("cuda", 8):
        raise KeyError("boom")
    assert torch.cuda.device_count() == real


@pytest.mark.parametrize(
    ("arguments", "error", "words"),
    [
        ((None, 1, None), ValueError, "has 0 of them"),
        (("cuda", 0, None), ValueError, "count >= 1"),
        (("cuda", 1, "mps"), ValueError, "built for one accelerator"),
        (("cuda", -1, None), ValueError, "cannot be negative"),
        (("cuda", 1.0, None), TypeError, "whole number"),
        ((0, 1, None), TypeError, "device type"),
        ((None, 0, ""), TypeError, "device type"),
    ],
)
def test_pretend_machine_refuses_impossible_machines(arguments: tuple, error: type[Exception], words: str) -> None:
    accelerator, count, built = arguments
    with pytest.raises(error, match=words), standins.pretend_machine(accelerator, count, built=built):
        pass
