"""helpers.environment: the diagnosis of every kind of machine, the report, the stamp."""

from __future__ import annotations

import sys
import types
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from helpers import environment as env
from helpers.environment import Gpu, Machine, build_supports, diagnose


def example_machines() -> dict[str, Machine]:
    """Machines learners meet, described by hand.

    The arch list is the one torch 2.10's CUDA 12.8 wheel (Kaggle's build) reports, with no sm_60
    (docs/sources.md §2); read your own with `torch.cuda.get_arch_list()`.
    """
    modern = ("sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")
    gib = 2**30

    def t4(i: int) -> Gpu:
        return Gpu(i, "Tesla T4", 15 * gib, (7, 5), 40)

    two_t4s = ("Tesla T4", "Tesla T4")

    return {
        "Kaggle, GPU T4 ×2": Machine(
            "2.10.0+cu128",
            "12.8",
            "cuda",
            (t4(0), t4(1)),
            modern,
            driver_gpus=two_t4s,
            cpus_usable=4,
            cpus_machine=4,
            torch_threads=4,
            on_kaggle=True,
        ),
        "Kaggle, accelerator off": Machine(
            "2.10.0+cu128", "12.8", None, (), modern, cpus_usable=4, cpus_machine=4, torch_threads=4, on_kaggle=True
        ),
        "an old P100 with a modern torch": Machine(
            "2.10.0+cu128",
            "12.8",
            "cuda",
            (Gpu(0, "Tesla P100-PCIE-16GB", 16 * gib, (6, 0), 56),),
            modern,
            driver_gpus=("Tesla P100-PCIE-16GB",),
            cpus_usable=4,
            cpus_machine=4,
            torch_threads=4,
        ),
        "a GPU box with CPU-only torch": Machine(
            "2.13.0+cpu",
            None,
            None,
            (),
            (),
            driver_gpus=("NVIDIA A10",),
            cpus_usable=8,
            cpus_machine=8,
            torch_threads=8,
        ),
        "GPUs hidden by CUDA_VISIBLE_DEVICES": Machine(
            "2.13.0+cu128",
            "12.8",
            None,
            (),
            modern,
            cuda_visible_devices="",
            driver_gpus=two_t4s,
            cpus_usable=8,
            cpus_machine=8,
            torch_threads=8,
        ),
        "a CUDA build of torch without a driver": Machine(
            "2.10.0+cu128", "12.8", None, (), modern, cpus_usable=2, cpus_machine=2, torch_threads=2
        ),
        "a laptop without a GPU": Machine(
            "2.13.0+cpu", None, None, (), (), cpus_usable=2, cpus_machine=8, torch_threads=8
        ),
    }


MACHINES = example_machines()


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


def test_hidden_gpus_are_a_problem_that_names_the_variable() -> None:
    (problem,) = levels(MACHINES["GPUs hidden by CUDA_VISIBLE_DEVICES"])["problem"]
    assert (
        "lists 2 GPUs and torch cannot use them (torch.cuda.is_available() is False), with CUDA_VISIBLE_DEVICES=''"
        in problem
    )
    assert (
        "Unset CUDA_VISIBLE_DEVICES" in problem and "if torch still cannot use them, check that the driver" in problem
    )


T4 = Gpu(0, "Tesla T4", 15 * 2**30, (7, 5), 40)


@pytest.mark.parametrize(
    ("torch_sees", "variable", "problem", "note"),
    [
        # The driver lists two GPUs; what torch sees and whether the variable is set decide the finding.
        (0, "", "is False), with CUDA_VISIBLE_DEVICES='': the variable may hide them", None),
        (0, "GPU-8932f937,MIG-5c2a", "with CUDA_VISIBLE_DEVICES='GPU-8932f937,MIG-5c2a': the variable may hide", None),
        (0, "0,1", "with CUDA_VISIBLE_DEVICES='0,1': the variable may hide them", None),  # CUDA's reading, not ours
        (
            0,
            None,
            "lists 2 GPUs but torch cannot use them (torch.cuda.is_available() is False). | To find out why: "
            "check that the driver supports CUDA 12.x or newer",
            None,
        ),
        (
            1,
            "1",
            None,
            "torch can use 1 of the 2 GPUs the NVIDIA driver lists: CUDA_VISIBLE_DEVICES='1' may hide the rest",
        ),
        (1, None, None, "torch can use 1 of the 2 GPUs the NVIDIA driver lists."),
        (2, "0,1", None, None),
        (2, None, None, None),
    ],
)
def test_what_the_driver_lists_against_what_torch_sees(
    torch_sees: int, variable: str | None, problem: str | None, note: str | None
) -> None:
    m = replace(
        MACHINES["Kaggle, GPU T4 ×2"],
        gpus=tuple(replace(T4, index=i) for i in range(torch_sees)),
        accelerator="cuda" if torch_sees else None,
        cuda_visible_devices=variable,
        on_kaggle=False,
    )
    found = levels(m)
    if problem is None:
        assert found["problem"] == [], found
    else:
        (text,) = found["problem"]
        assert problem in text, text
        assert ("Unset CUDA_VISIBLE_DEVICES" in text) is (variable is not None), "only a set variable is blamed"
        assert "driver supports CUDA 12.x or newer" in text, "an old driver is the other cause"
    notes = [n for n in found["note"] if "the NVIDIA driver lists" in n]
    if note is None:
        assert notes == [], found
    else:
        (text,) = notes
        assert note in text, text


@pytest.mark.parametrize("variable", ["0", None])
def test_a_driver_older_than_the_build_is_named_whether_or_not_the_variable_is_set(variable: str | None) -> None:
    hidden = MACHINES["GPUs hidden by CUDA_VISIBLE_DEVICES"]
    m = replace(hidden, cuda_build="13.0", driver_cuda="12.8", cuda_visible_devices=variable)
    (problem,) = levels(m)["problem"]
    assert "supports CUDA up to 12.8, older than this torch's CUDA 13.0" in problem and "Update the NVIDIA driver" in (
        problem
    )
    assert ("CUDA_VISIBLE_DEVICES" in problem) is (variable is not None), "a set variable: named as a second step"
    same_major = replace(m, cuda_build="12.8", driver_cuda="12.4")  # minor version compatibility: not the cause
    assert not any("older than" in p for p in levels(same_major)["problem"])


def test_one_gpu_hidden_is_it_and_a_driver_with_no_gpu_is_not_a_missing_driver() -> None:
    one = replace(MACHINES["GPUs hidden by CUDA_VISIBLE_DEVICES"], driver_gpus=("Tesla T4",), cuda_visible_devices="0")
    assert any("lists 1 GPU and torch cannot use it" in p and "may hide it." in p for p in levels(one)["problem"])
    none = replace(one, driver_gpus=(), cuda_visible_devices=None)
    notes = levels(none)["note"]
    assert any("driver answers but lists no GPU" in n for n in notes) and not any(
        "no NVIDIA driver" in n for n in notes
    )


def test_a_long_value_is_shortened_in_every_message() -> None:
    value = "7" + "x" * 4999
    m = replace(MACHINES["GPUs hidden by CUDA_VISIBLE_DEVICES"], cuda_visible_devices="garbage" * 700)
    text = env.report(m)
    assert "… (4,900 characters)" in text and "garbage" * 20 not in text
    assert max(len(line) for line in text.splitlines()) < 400
    assert env.echo_value(value) == repr(value[:60]) + "… (5,000 characters)"
    assert env.echo_value("0,1") == "'0,1'"


def test_driver_sees_gpus_that_torch_does_not() -> None:
    m = Machine("2.13.0+cu128", "12.8", None, (), ("sm_80",), driver_gpus=("NVIDIA A100-SXM4-40GB",))
    assert m.driver_gpu_count == 1 and Machine("2.13.0+cpu", None, None).driver_gpu_count is None
    assert any("lists 1 GPU but torch cannot use it" in p for p in levels(m)["problem"])


def _fake_nvidia_smi(folder: Path, exit_code: int) -> str:
    """A folder for PATH whose `nvidia-smi` prints two GPU names and exits with `exit_code`."""
    folder.mkdir()
    smi = folder / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\nprintf 'Tesla T4\\n NVIDIA H200 \\n\\n'\nexit {exit_code}\n")
    smi.chmod(0o755)
    return str(folder)


@pytest.mark.skipif(sys.platform == "win32", reason="the stand-in nvidia-smi is a shell script")
def test_the_driver_list_falls_back_to_nvidia_smi(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(env, "nvml", lambda read: (None, "no NVML here"))  # as on a machine without NVML
    monkeypatch.setenv("PATH", _fake_nvidia_smi(tmp_path / "works", 0))
    assert env.driver_gpu_names() == ("Tesla T4", "NVIDIA H200")
    monkeypatch.setenv("PATH", _fake_nvidia_smi(tmp_path / "no_driver", 9))  # nvidia-smi reaching no driver
    assert env.driver_gpu_names() is None
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert env.driver_gpu_names() is None


def test_the_driver_list_comes_from_nvml_first(monkeypatch: pytest.MonkeyPatch) -> None:
    class NVMLError(Exception):
        pass

    def fails() -> None:
        raise NVMLError("Driver Not Loaded")

    calls: list[str] = []

    class NoPermission(NVMLError):
        pass

    def name(handle: int) -> str | bytes:
        if handle == 2:
            raise NoPermission("Insufficient Permissions")  # a cluster job's cgroup: another job's GPU
        if handle == 3:
            raise NVMLError("GPU is lost")  # a fault, named as one
        return {0: b"Tesla T4", 1: "Tesla T4"}[handle]  # older pynvml releases return bytes

    fake = types.SimpleNamespace(
        NVMLError=NVMLError,
        NVMLError_NoPermission=NoPermission,
        nvmlInit=lambda: calls.append("init"),
        nvmlShutdown=lambda: calls.append("shutdown"),
        nvmlDeviceGetCount=lambda: 4,
        nvmlDeviceGetHandleByIndex=lambda i: i,
        nvmlDeviceGetName=name,
        nvmlSystemGetCudaDriverVersion=lambda: 12080,
    )
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    monkeypatch.setattr(env, "_nvidia_smi_gpu_names", lambda: pytest.fail("NVML answered"))
    found = env.driver_gpu_names()
    assert found == ("Tesla T4", "Tesla T4", env.NO_ACCESS, "GPU 3 (NVML: GPU is lost)") and calls == [
        "init",
        "shutdown",
    ]
    assert env.nvml(env._driver_cuda) == ("12.8", "")

    monkeypatch.setattr(fake, "nvmlDeviceGetCount", fails)
    monkeypatch.setattr(env, "_nvidia_smi_gpu_names", lambda: None)
    assert env.driver_gpu_names() is None and calls[-1] == "shutdown"


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
        ((12, 1), ("sm_120a",), False),  # an architecture-specific target runs on exactly that capability
        ((12, 1), ("sm_120",), True),
        ((10, 0), ("compute_90a",), False),  # nor is its PTX compiled for newer GPUs
        ((10, 3), ("sm_100f",), True),  # a family target runs like plain machine code
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
    assert (
        "GPUs the NVIDIA driver lists: 2× Tesla T4" in text
        and "CUDA GPUs torch can open: 2 (torch.cuda.is_available(): True)" in text
    )
    assert "python -m torch.utils.collect_env" in text
    assert "GPUs the NVIDIA driver lists: no driver found" in env.report(MACHINES["a laptop without a GPU"])
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


def test_gpus_this_process_may_not_access_are_a_jobs_share_not_a_hidden_variable() -> None:
    names = (env.NO_ACCESS,) * 7 + ("NVIDIA A100-SXM4-80GB",)
    a100 = Gpu(0, "NVIDIA A100-SXM4-80GB", 80 * 2**30, (8, 0), 108)
    m = replace(
        MACHINES["Kaggle, GPU T4 ×2"], gpus=(a100,), driver_gpus=names, cuda_visible_devices="0", on_kaggle=False
    )
    (note,) = [n for n in levels(m)["note"] if "the NVIDIA driver lists" in n]
    assert "7 of them this process may not access" in note and "may hide" not in note, note


def test_a_driver_new_enough_is_said_so_and_the_report_shows_its_cuda() -> None:
    m = replace(MACHINES["GPUs hidden by CUDA_VISIBLE_DEVICES"], cuda_visible_devices=None, driver_cuda="12.9")
    (problem,) = levels(m)["problem"]
    assert (
        "read the 'CUDA initialization' warning, if torch printed one" in problem
        and "CUDA up to 12.9, is new enough" in problem
    )
    assert "(the driver supports CUDA 12.9: it runs CUDA 12.x builds)" in env.report(m)


def test_a_driver_nvml_cannot_start_is_not_a_missing_driver() -> None:
    from coursetools import selftest

    m = replace(MACHINES["a CUDA build of torch without a driver"], driver_fault="NVMLError_LibRmVersionMismatch")
    (problem,) = levels(m)["problem"]
    assert "An NVIDIA driver is installed, but NVML cannot talk to it (NVMLError_LibRmVersionMismatch)" in problem
    assert "reboot" in problem and not any("no NVIDIA driver" in n for n in levels(m)["note"])
    assert "GPUs the NVIDIA driver lists: none: NVML cannot start (NVMLError_LibRmVersionMismatch)" in env.report(m)
    denied = replace(m, driver_fault="NVMLError_NoPermission")
    assert any("/dev/nvidia*" in p and "reboot" not in p for p in levels(denied)["problem"])
    assert selftest.check_gpus(m).unusable, "the self-test fails at once with the doctor's reason"


def test_gpus_that_are_all_another_jobs_share_are_a_note_not_a_problem() -> None:
    hidden = MACHINES["GPUs hidden by CUDA_VISIBLE_DEVICES"]
    m = replace(hidden, driver_gpus=(env.NO_ACCESS,) * 4, cuda_visible_devices=None)
    found = levels(m)
    assert found["problem"] == [] and any("none of which this process may access" in n for n in found["note"])
    from coursetools import selftest

    check = selftest.check_gpus(replace(m, gpus=()))
    assert not check.unusable and check.listed == 0, "no GPU of this run's: nothing verified, not a broken GPU"


def test_a_gpu_newer_than_every_architecture_the_build_ships_is_not_called_too_old() -> None:
    t4 = MACHINES["Kaggle, GPU T4 ×2"]
    new = replace(t4.gpus[0], name="NVIDIA GeForce RTX 5090", capability=(12, 0))
    (problem,) = levels(replace(t4, gpus=(new,), arch_list=("sm_75", "sm_80", "sm_86", "sm_90")))["problem"]
    assert "(NVIDIA GeForce RTX 5090, sm_120) is not covered by this torch build" in problem, problem
    assert "too old" not in problem and "newer GPU" not in problem, problem
    (problem,) = levels(replace(t4, gpus=t4.gpus[:1], arch_list=("sm_80", "sm_90")))["problem"]
    assert "is too old for this torch build" in problem and "or use a newer GPU" in problem, problem


def test_a_driver_of_an_older_cuda_major_names_the_builds_it_runs() -> None:
    m = replace(MACHINES["GPUs hidden by CUDA_VISIBLE_DEVICES"], cuda_visible_devices=None, driver_cuda="12.4")
    (problem,) = levels(replace(m, torch_version="2.15.0+cu130", cuda_build="13.0"))["problem"]
    assert "install a torch build for CUDA 12.x if the release you need has one" in problem, problem
    assert "12.4 or older" not in problem


class DeferredCudaCallError(Exception):
    """What torch 2.10's lazy start-up raises (an Exception, not a RuntimeError)."""


@pytest.mark.parametrize("torch_release", ["2.10: CUDA's start fails", "2.15: opening GPU 1 fails"])
def test_a_job_given_fewer_gpus_than_nvml_lists_is_diagnosed_not_a_crash(
    monkeypatch: pytest.MonkeyPatch, torch_release: str
) -> None:
    """Until CUDA starts torch counts NVML's GPUs (8 on the node); CUDA then opens the job's one and raises."""
    from coursetools import selftest

    def opens_one(index: int) -> None:
        raise AssertionError("Invalid device id")

    def start() -> None:
        raise DeferredCudaCallError(
            "CUDA call failed lazily at initialization: device=1\n\nCUDA call was originally invoked"
        )

    monkeypatch.setattr(env, "cuda_gpu_count", lambda: 8)
    monkeypatch.setattr(env.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(env.torch.cuda, "init", start if torch_release.startswith("2.10") else lambda: None)
    monkeypatch.setattr(env.torch.cuda, "get_device_properties", opens_one)
    m = env.describe_machine()
    first_lines = (
        "DeferredCudaCallError: CUDA call failed lazily at initialization: device=1",
        "AssertionError: Invalid device id",
    )
    assert m.gpus == () and m.cuda_error in first_lines, "the error's first line, not torch's stack"
    on_node = replace(m, driver_gpus=("NVIDIA H100",) + (env.NO_ACCESS,) * 7, cuda_build="12.8")
    problems = levels(on_node)["problem"]
    assert any("CUDA could not start" in p and "CUDA_VISIBLE_DEVICES" in p for p in problems), problems
    assert "CUDA GPUs torch can open: none, CUDA could not start" in env.report(on_node)
    assert "usable accelerator: none" in env.report(on_node) and "CUDA could not start" in env.one_line(on_node)
    assert selftest.check_gpus(on_node).unusable, "the self-test fails at once with the doctor's reason"
    assert selftest.check_gpus(replace(on_node, driver_gpus=None)).unusable, "with no driver list, too"


def test_a_cpu_build_on_a_node_of_other_jobs_gpus_is_not_told_to_install_cuda() -> None:
    m = Machine("2.13.0+cpu", None, None, driver_gpus=(env.NO_ACCESS,) * 8)
    found = levels(m)
    assert found["problem"] == [] and any("none of which this process may access" in n for n in found["note"])
