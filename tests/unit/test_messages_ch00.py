"""Chapter 00's checker beyond the wrong answers tests/wrong_answers/ states: the stand-in machines answer
as the machines they stand for, and a verdict says what differed without guessing at a cause."""

from __future__ import annotations

import pytest
import torch

from helpers.checking import Wrong
from helpers.exercises import ch00

from .answers import evaluate


def _first_cuda_use() -> str:
    try:
        torch.cuda.current_device()
    except Exception as error:
        return type(error).__name__
    return "nothing raised"


def test_each_stand_in_answers_and_raises_as_the_machine_it_stands_for() -> None:
    cpu_only, no_driver, one_gpu, *_, mac = ch00.MACHINES
    flags = lambda: (torch.version.cuda is not None, torch.backends.cuda.is_built(), torch.backends.mps.is_built())
    assert ch00.ask(flags, cpu_only, "flags()") == (False, False, False)
    assert ch00.ask(flags, no_driver, "flags()") == (True, True, False)
    assert ch00.ask(flags, mac, "flags()") == (False, False, True)
    assert ch00.ask(lambda: torch.mps.is_available(), mac, "mps()") is True
    assert ch00.ask(_first_cuda_use, cpu_only, "use()") == "AssertionError"  # Torch not compiled with CUDA enabled
    assert ch00.ask(_first_cuda_use, no_driver, "use()") == "RuntimeError"  # Found no NVIDIA driver
    with pytest.raises(Wrong, match="on a machine with one CUDA GPU, use\\(\\) ran CUDA code"):
        ch00.ask(_first_cuda_use, one_gpu, "use()")


def test_a_wrong_answer_is_told_the_call_and_what_differed_only() -> None:
    question = next(q for q in ch00.QUESTIONS if q.variable == "has_kernels_for")
    always_true = "def has_kernels_for(capability, arch_list):\n    return len(arch_list) > 0"
    message = evaluate(question, always_true).message
    assert message == (
        "Not yet: has_kernels_for((6, 0), ['sm_75', 'sm_80', 'sm_86', 'sm_90', 'compute_90']) returned True; "
        "expected False"
    ), message
    crashes_on_letters = (
        "def has_kernels_for(capability, arch_list):\n"
        "    major, minor = capability\n"
        "    return any(int(a.split('_')[1]) // 10 == major and int(a.split('_')[1]) % 10 <= minor\n"
        "               or (a.startswith('compute') and int(a.split('_')[1]) <= major * 10 + minor)\n"
        "               for a in arch_list)"
    )
    outcome = evaluate(question, crashes_on_letters)
    assert not outcome.correct and "ValueError" in outcome.message and "'90a'" in outcome.message, outcome.message
