"""helpers.environment: the diagnosis of every kind of machine, the report, the stamp."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from helpers import environment as env
from helpers.environment import Gpu, Machine, build_supports, diagnose

MACHINES = env.example_machines()


def levels(m: Machine) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"ok": [], "note": [], "problem": []}
    for f in diagnose(m):
        out[f.level].append(f.message + " | " + f.fix)
    return out


def test_two_t4s_on_kaggle_are_fine() -> None:
    found = levels(MACHINES["Kaggle, GPU T4 ×2"])
    assert not found["problem"]
    assert any("2 CUDA GPUs" in m and "Tesla T4" in m for m in found["ok"])


def test_a_p100_on_a_modern_build_is_named_as_the_problem_with_the_fix() -> None:
    found = levels(MACHINES["an old P100 with a modern torch"])
    assert len(found["problem"]) == 1
    message = found["problem"][0]
    assert "sm_60" in message and "no kernel image" in message and "GPU T4 ×2" in message


def test_no_gpu_says_how_to_get_one() -> None:
    found = levels(MACHINES["a laptop without a GPU"])
    assert not found["problem"]
    assert any("Accelerator → GPU T4 ×2" in m for m in found["note"])
    kaggle_off = levels(MACHINES["Kaggle, accelerator off"])
    assert any("accelerator is off" in m for m in kaggle_off["note"])


def test_a_cuda_build_without_a_driver_names_the_error_and_both_fixes() -> None:
    found = levels(MACHINES["a CUDA build of torch without a driver"])
    assert not found["problem"]
    (note,) = [n for n in found["note"] if "Found no NVIDIA driver" in n]
    assert "install its driver" in note and "CPU build" in note and "GPU T4 ×2" in note
    kaggle_off = levels(MACHINES["Kaggle, accelerator off"])
    assert any("Found no NVIDIA driver" in n and "Accelerator → GPU T4 ×2" in n for n in kaggle_off["note"])
    cpu_build = levels(MACHINES["a laptop without a GPU"])
    assert not any("Found no NVIDIA driver" in n for n in cpu_build["note"]), "a CPU-only build never raises it"


def test_cpu_only_build_on_a_gpu_machine_is_a_problem() -> None:
    found = levels(MACHINES["a GPU box with CPU-only torch"])
    assert any("built without CUDA" in m and "CUDA build" in m for m in found["problem"])


def test_hidden_gpus_are_a_problem() -> None:
    found = levels(MACHINES["GPUs hidden by CUDA_VISIBLE_DEVICES"])
    assert any("hides all 2" in m for m in found["problem"])
    for value in ("-1", "none", "NoDevFiles"):
        m = replace(MACHINES["GPUs hidden by CUDA_VISIBLE_DEVICES"], cuda_visible_devices=value)
        assert levels(m)["problem"], value


def test_a_partly_hidden_machine_gets_a_note() -> None:
    one = (Gpu(0, "Tesla T4", 15 * 2**30, (7, 5), 40),)
    m = replace(MACHINES["Kaggle, GPU T4 ×2"], gpus=one, cuda_visible_devices="1")
    assert any("1 of the 2 GPUs" in n for n in levels(m)["note"])


def test_driver_sees_gpus_that_torch_does_not() -> None:
    m = Machine("2.13.0+cu128", "12.8", None, (), ("sm_80",), driver_gpu_count=1)
    assert any("torch sees none" in p for p in levels(m)["problem"])


def test_too_many_threads_is_noted() -> None:
    assert any("threads compete" in n for n in levels(MACHINES["a laptop without a GPU"])["note"])


@pytest.mark.parametrize(
    ("capability", "archs", "expected"),
    [
        ((7, 5), ("sm_75",), True),
        ((7, 5), ("sm_70",), True),  # same major, lower minor: binary compatible
        ((7, 0), ("sm_75",), False),  # a newer minor does not run on an older GPU
        ((8, 0), ("sm_75",), False),  # machine code is not forward compatible across majors
        ((8, 0), ("compute_75",), True),  # PTX is, by JIT compilation
        ((6, 0), ("sm_75", "sm_80", "compute_90"), False),
        ((9, 0), ("sm_90a",), True),
        ((9, 0), ("weird",), False),
    ],
)
def test_build_supports(capability: tuple[int, int], archs: tuple[str, ...], expected: bool) -> None:
    assert build_supports(capability, archs) is expected


def test_describe_machine_matches_torch() -> None:
    m = env.describe_machine()
    assert m.torch_version == torch.__version__
    assert len(m.gpus) == (torch.cuda.device_count() if torch.cuda.is_available() else 0)
    assert 1 <= m.cpus_usable <= m.cpus_machine


def test_report_and_one_line_name_the_essentials() -> None:
    m = MACHINES["Kaggle, GPU T4 ×2"]
    text = env.report(m)
    assert "Tesla T4" in text and "sm_75" in text and "Diagnosis" in text and "on Kaggle: yes" in text
    line = env.one_line(m)
    assert line.startswith("Running on: 2× Tesla T4 |") and "CUDA 12.8" in line and "Kaggle" in line
    assert env.one_line(MACHINES["a laptop without a GPU"]).startswith("Running on: CPU only |")


def test_stamp_names_hardware_versions_and_date() -> None:
    s = env.stamp(MACHINES["Kaggle, GPU T4 ×2"])
    assert "Tesla T4" in s and "torch 2.10.0+cu128" in s and "CUDA 12.8" in s
    assert torch.__version__ in env.stamp()


def test_on_kaggle_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAGGLE_KERNEL_RUN_TYPE", "Interactive")
    assert env.running_on_kaggle()
