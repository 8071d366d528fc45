"""Chapter 00 exercises: naming GPU architectures and describing Kaggle's machine."""

from __future__ import annotations

from typing import Any

from ..checking import Question, Wrong, expect_function, expect_type
from ..environment import Gpu, Machine, build_supports, diagnose


def _check_arch_name(fn: Any) -> None:
    expect_function(fn, "arch_name", "(major, minor)")
    for capability, expected in (((7, 5), "sm_75"), ((6, 0), "sm_60"), ((9, 0), "sm_90"), ((12, 0), "sm_120")):
        got = fn(*capability)
        if got != expected:
            raise Wrong(f"arch_name{capability} returned {got!r}; CUDA writes that capability as {expected!r}")


def _check_kaggle_machine(m: Any) -> None:
    expect_type(m, Machine, "a Machine (from helpers.environment)")
    if len(m.gpus) != 2:
        raise Wrong(f"Kaggle's GPU accelerator gives two T4s, but your machine has {len(m.gpus)} GPU(s)")
    for g in m.gpus:
        expect_type(g, Gpu, "Gpu records in `gpus`")
        if "T4" not in g.name or tuple(g.capability) != (7, 5):
            raise Wrong(f"GPU {g.index} is {g.name!r} with capability {g.capability}; a T4 is 'Tesla T4', (7, 5)")
    if sorted(g.index for g in m.gpus) != [0, 1]:
        raise Wrong("torch numbers the two GPUs 0 and 1")
    if not m.on_kaggle:
        raise Wrong("set on_kaggle=True: this machine is a Kaggle session")
    if m.cuda_build is None or not m.arch_list:
        raise Wrong("Kaggle's torch is a CUDA build: give cuda_build (e.g. '12.8') and its arch_list")
    if not build_supports((7, 5), tuple(m.arch_list)):
        raise Wrong(f"with arch_list={tuple(m.arch_list)} this torch has no kernels a T4 (sm_75) can run")
    problems = [f.message for f in diagnose(m) if f.level == "problem"]
    if problems:
        raise Wrong(f"diagnose() finds a problem: {problems[0]}")


QUESTIONS = [
    Question(
        number=1,
        task="Write `arch_name(major, minor)` that turns a compute capability into CUDA's architecture name.",
        variable="arch_name",
        checker=_check_arch_name,
        hint_text="A T4 has capability (7, 5) and its architecture is 'sm_75': glue the two numbers together.",
        solution_code='def arch_name(major, minor):\n    return f"sm_{major}{minor}"',
        wrong_answers=(
            'def arch_name(major, minor):\n    return f"sm_{major}.{minor}"',
            'def arch_name(major, minor):\n    return f"sm{major}{minor}"',
            'def arch_name(major, minor):\n    return "sm_75"',
            'arch_name = "sm_75"',
        ),
    ),
    Question(
        number=2,
        task="Describe Kaggle's 'GPU T4 ×2' machine as a `Machine` that `diagnose` finds no problem with.",
        variable="kaggle_machine",
        checker=_check_kaggle_machine,
        hint_text=(
            "Two Gpu(...) records named 'Tesla T4' with capability (7, 5), indices 0 and 1; on_kaggle=True; "
            "a cuda_build such as '12.8'; and an arch_list that contains a kernel a T4 can run."
        ),
        solution_code=(
            "def t4(i):\n"
            '    return Gpu(index=i, name="Tesla T4", total_memory_bytes=15 * 2**30, capability=(7, 5), '
            "multiprocessors=40)\n\n"
            'kaggle_machine = Machine(torch_version="2.10.0+cu128", cuda_build="12.8", accelerator="cuda",\n'
            '                         gpus=(t4(0), t4(1)), arch_list=("sm_75", "sm_80", "sm_90"), on_kaggle=True)'
        ),
        wrong_answers=(
            'kaggle_machine = Machine(torch_version="2.10.0", cuda_build="12.8", accelerator="cuda",\n'
            '    gpus=(Gpu(0, "Tesla T4", 15 * 2**30, (7, 5), 40),), arch_list=("sm_75",), on_kaggle=True)',
            'kaggle_machine = Machine(torch_version="2.10.0", cuda_build="12.8", accelerator="cuda",\n'
            '    gpus=(Gpu(0, "Tesla T4", 15 * 2**30, (7, 5), 40), Gpu(1, "Tesla T4", 15 * 2**30, (7, 5), 40)),\n'
            '    arch_list=("sm_80", "sm_90"), on_kaggle=True)',
            'kaggle_machine = Machine(torch_version="2.10.0", cuda_build="12.8", accelerator="cuda",\n'
            '    gpus=(Gpu(0, "Tesla P100", 16 * 2**30, (6, 0), 56), Gpu(1, "Tesla P100", 16 * 2**30, (6, 0), 56)),\n'
            '    arch_list=("sm_75",), on_kaggle=True)',
            'kaggle_machine = "Tesla T4 x2"',
        ),
        context=lambda: {"Machine": Machine, "Gpu": Gpu},
    ),
]
