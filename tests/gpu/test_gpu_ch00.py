"""Chapter 00's GPU claims: what torch, `torch.accelerator` and `nvidia-smi` say on a machine whose GPU works."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
import torch

from helpers.environment import _older, build_supports, describe_machine, diagnose
from helpers.exercises import ch00


@pytest.mark.gpu
def test_a_cuda_build_with_a_usable_gpu_answers_yes_everywhere() -> None:
    assert torch.version.cuda is not None
    assert torch.cuda.device_count() >= 1
    usable = torch.accelerator.current_accelerator(check_available=True)
    assert usable is not None and usable.type == "cuda"
    assert torch.accelerator.current_accelerator() == usable, "built for and usable now agree where CUDA works"
    assert torch.accelerator.is_available()


@pytest.mark.gpu
def test_every_gpu_has_kernels_in_the_build_and_runs_one() -> None:
    arch_list = torch.cuda.get_arch_list()
    assert arch_list, "a usable CUDA build lists the architectures it ships"
    for i in range(torch.cuda.device_count()):
        major, minor = torch.cuda.get_device_capability(i)
        assert (major, minor) >= (7, 5), f"GPU {i} ({torch.cuda.get_device_name(i)}) is a T4 or newer"
        assert build_supports((major, minor), tuple(arch_list)), (torch.cuda.get_device_name(i), arch_list)
        assert (torch.ones(4, device=f"cuda:{i}") * 2).sum().item() == 8.0
        assert torch.cuda.get_device_name(i)


@pytest.mark.gpu
def test_nvidia_smi_lists_at_least_the_gpus_torch_sees() -> None:
    smi = shutil.which("nvidia-smi")
    assert smi is not None, "the NVIDIA driver installs nvidia-smi"
    listing = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60, check=True).stdout
    driver_gpus = sum(1 for line in listing.splitlines() if line.startswith("GPU "))
    if os.environ.get("CUDA_VISIBLE_DEVICES") is None:
        assert driver_gpus == torch.cuda.device_count()
    else:
        assert driver_gpus >= torch.cuda.device_count()
    fields = "index,name,memory.total,memory.used,utilization.gpu,pcie.link.gen.max,pcie.link.width.max"
    query = subprocess.run(
        [smi, f"--query-gpu={fields}", "--format=csv"], capture_output=True, text=True, timeout=60, check=True
    )
    rows = [line for line in query.stdout.splitlines() if line.strip()]
    assert rows[0].startswith("index, name") and len(rows) == 1 + driver_gpus


@pytest.mark.gpu
def test_the_doctor_finds_no_problem_on_a_working_gpu() -> None:
    machine = describe_machine()
    assert len(machine.gpus) == torch.cuda.device_count()
    assert [f.message for f in diagnose(machine) if f.level == "problem"] == []
    if machine.cuda_visible_devices is None:  # nothing hidden: the driver lists as many as torch sees (MIG aside)
        assert machine.driver_gpu_count == len(machine.gpus), (machine.driver_gpus, machine.gpus)
    assert machine.driver_cuda is not None, "NVML (nvidia-ml-py, a course dependency) answers on a GPU machine"
    major, minor = (int(x) for x in machine.driver_cuda.split("."))  # from NVML's 12080: "12.8"
    assert major >= 11 and 0 <= minor < 10, machine.driver_cuda
    assert not _older(machine.driver_cuda, machine.cuda_build), "torch runs here, so its driver is new enough"


@pytest.mark.gpu
def test_the_exercise_solutions_are_right_on_a_real_gpu() -> None:
    for question in ch00.QUESTIONS:
        namespace = {"torch": torch}
        exec(compile(question.solution_code, f"<{question.variable}>", "exec"), namespace)
        outcome = question.evaluate(namespace)
        assert outcome.correct, (question.number, outcome.message)


_QUERIES = (
    "import torch; print(torch.cuda.is_available(), torch.cuda.device_count(), "
    "getattr(torch.accelerator.current_accelerator(), 'type', None), "
    "getattr(torch.accelerator.current_accelerator(check_available=True), 'type', None))"
)


def _fresh_python(visible: str) -> list[str]:
    """What a fresh Python started with CUDA_VISIBLE_DEVICES=`visible` answers to the questions' queries."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": visible}
    done = subprocess.run([sys.executable, "-c", _QUERIES], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.gpu
def test_cuda_visible_devices_hides_gpus_from_cuda_not_from_the_build_nor_nvidia_smi() -> None:
    """Questions 1 and 2 (machines 1A, 1D, 2B, 2C): hidden GPUs leave the build as it is and nvidia-smi's list whole."""
    assert _fresh_python("") == ["False", "0", "cuda", "None"], "every GPU hidden: built for cuda, none usable"
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]  # a GPU this job may use
    assert _fresh_python(first) == ["True", "1", "cuda", "cuda"], "one GPU left visible: one usable"
    smi = shutil.which("nvidia-smi")
    assert smi is not None, "the NVIDIA driver installs nvidia-smi"
    listing = lambda env: subprocess.run([smi, "-L"], env=env, capture_output=True, text=True, timeout=60).stdout
    hidden = listing({**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert hidden == listing(dict(os.environ)) and hidden.count("GPU ") >= 1, "nvidia-smi does not read the variable"
    past = str(hidden.count("GPU "))  # a number past the machine's last GPU (2C): it and all after it hidden
    assert _fresh_python(past) == ["False", "0", "cuda", "None"], "an index the machine lacks leaves no GPU"


@pytest.mark.gpu
def test_torch_gives_the_device_details_pycuda_was_used_for() -> None:
    """Section 4's "without pycuda": count, name, memory and properties, from torch.cuda alone."""
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        free, total = torch.cuda.mem_get_info(i)
        assert props.name == torch.cuda.get_device_name(i) and props.multi_processor_count > 0
        assert 0 < free <= total and props.total_memory > 0
        assert (props.major, props.minor) == torch.cuda.get_device_capability(i)
