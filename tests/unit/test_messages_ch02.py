"""Chapter 02's checker beyond the wrong answers tests/wrong_answers/ states: the predictions are judged by running
each line (the notebook's own g, c and default device aside), an error is explained only where the call log shows its
cause, a meta tensor the learner prints shows as meta, and torch's own warnings do not show as the learner's output."""

from __future__ import annotations

from unittest import mock

import pytest
import torch

from helpers.exercises import ch02

from .answers import evaluate

MISMATCH = "Tensor on device cpu is not on the expected device meta!"
_RUN = ch02._ran  # each line as the checker runs it
NO_CUDA = pytest.mark.skipif(torch.cuda.is_available(), reason="a fixed cuda raises only where there is none")


def _question(variable: str):
    return next(q for q in ch02.QUESTIONS if q.variable == variable)


@NO_CUDA
def test_a_fixed_cuda_is_named_when_the_error_came_after_it() -> None:
    """Attack 2026-11-29: 'Torch not compiled with CUDA enabled' alone did not say to use the device given."""
    answers = (
        (
            "zeros_for",
            "def zeros_for(t, n):\n    return torch.zeros(n, dtype=t.dtype, device='cuda')",
            "(torch.zeros())",
        ),
        ("zeros_for", "def zeros_for(t, n):\n    return torch.zeros(n, dtype=t.dtype).to('cuda')", "(.to())"),
        ("scale_rows", "def scale_rows(x):\n    return x * torch.ones(len(x), 1).cuda()", "(.cuda())"),
    )
    for variable, code, spelled in answers:
        message = evaluate(_question(variable), code).message
        assert " raised " in message and "; it named cuda " + spelled in message, message  # torch's words vary by build
        assert message.endswith("use the device you were given"), message


def test_an_error_with_no_cause_in_the_log_is_torchs_own() -> None:
    """Neither a change of an input nor a cuda: the verdict is the error as raised, with its line, on the case that
    raised it (attack round 4: a raise on one case of many did not say which)."""
    code = "def scale_rows(x):\n    weights = torch.linspace(0.5, 1.5, x.shape[0])\n    return x * weights[:, None]"
    outcome = evaluate(_question("scale_rows"), code)
    assert outcome.message.startswith("Not yet: scale_rows(a torch.float32 tensor of shape (4, 3) on meta"), outcome
    assert outcome.message.endswith(") raised RuntimeError (line 3 of your code): " + MISMATCH), outcome


def test_each_prediction_is_judged_by_running_its_line() -> None:
    """Each line runs with g on meta (standing in for a GPU, as tests/gpu checks) and c on the CPU, whatever g, c and
    default device the notebook has; a prediction is told what the run gave, and nothing else."""
    for question in ch02.QUESTIONS[:2]:
        for line, said in eval(question.solution_code.partition(" = ")[2]).items():
            assert ch02._ran(line, "meta") == said, line
    notebook = {"g": torch.ones(3), "c": torch.ones(3, device="meta"), "torch": torch}
    torch.set_default_device("meta")
    try:
        for question in ch02.QUESTIONS[:2]:
            exec(question.solution_code, notebook)
            assert question.evaluate(notebook).correct, question.variable
    finally:
        torch.set_default_device(None)
    ran = {"g.sum() + c": "gpu", "torch.cat([g, c])": "cpu"}  # as if torch had changed: the message follows the run
    with mock.patch.object(ch02, "_ran", lambda line, gpu: ran.get(line) or _RUN(line, gpu)):
        outcome = evaluate(_question("mixed"), _question("mixed").solution_code)
    assert outcome.message.startswith("Not yet: g.sum() + c: you said 'error', but its result lives on the GPU"), (
        outcome
    )
    assert "(predictions off: 2 of 6;" in outcome.message, outcome


def test_a_printed_meta_tensor_shows_as_meta() -> None:
    """Attack 2026-11-29: the learner's own print showed the stand-in's zeros as if they were values (a print is
    not a use of x's values, so the answer is right)."""
    code = "def scale_rows(x):\n    print(x)\n    return x * torch.linspace(0.5, 1.5, len(x), device=x.device)[:, None]"
    outcome = evaluate(_question("scale_rows"), code)
    assert outcome.correct and "tensor(..., device='meta', size=(4, 3))" in outcome.output, outcome
    assert "tensor([[0., 0., 0.]" not in outcome.output


def test_torchs_warnings_inside_the_check_are_not_the_learners_output() -> None:
    """Attack round 2: new_tensor's UserWarning showed under "Your code printed" with the checker's path attached."""
    for code in (
        "def zeros_for(t, n):\n    return t.new_tensor(torch.zeros(n, dtype=t.dtype))",
        "def zeros_for(t, n):\n    return torch.tensor(torch.zeros(n, dtype=t.dtype), device=t.device)",
    ):
        outcome = evaluate(_question("zeros_for"), code)
        assert outcome.output == "", (code, outcome)  # wrong (made on the CPU and moved), but nothing printed
