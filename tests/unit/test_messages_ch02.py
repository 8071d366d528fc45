"""Chapter 02's checker beyond the wrong answers tests/wrong_answers/ states: an error is explained only where the
call log shows its cause, torch's default dtype is set back after the cases that change it, a meta tensor the
learner prints shows as meta, and torch's own warnings do not show as the learner's output."""

from __future__ import annotations

import pytest
import torch

from helpers.exercises import ch02

from .answers import evaluate

MISMATCH = "Tensor on device meta is not on the expected device cpu!"
NO_CUDA = pytest.mark.skipif(torch.cuda.is_available(), reason="a fixed cuda raises only where there is none")


def _question(variable: str):
    return next(q for q in ch02.QUESTIONS if q.variable == variable)


@NO_CUDA
def test_a_fixed_cuda_is_named_when_the_error_came_after_it() -> None:
    """Attack 2026-11-29: 'Torch not compiled with CUDA enabled' alone did not say to use the device given."""
    answers = {
        "ones_on": ("def ones_on(device):\n    return torch.ones(2, 3, device='cuda')", "(torch.ones())"),
        "add_on_first": ("def add_on_first(a, b):\n    return a + b.to('cuda')", "(.to())"),
        "scale_rows": ("def scale_rows(x):\n    return x * torch.ones(len(x), 1).cuda()", "(.cuda())"),
    }
    for variable, (code, spelled) in answers.items():
        message = evaluate(_question(variable), code).message
        assert " raised " in message and "; it named cuda " + spelled in message, message  # torch's words vary by build
        assert message.endswith("use the device you were given"), message


def test_an_error_with_no_cause_in_the_log_is_torchs_own() -> None:
    """Neither a change of an input nor a cuda: the verdict is the error as raised, with its line, on the case that
    raised it (attack round 4: a raise on one case of many did not say which)."""
    outcome = evaluate(_question("add_on_first"), "def add_on_first(a, b):\n    return a + b")
    assert outcome.message.startswith("Not yet: add_on_first(a torch.float32 tensor of shape (2, 3) on cpu"), outcome
    assert outcome.message.endswith(") raised RuntimeError (line 2 of your code): " + MISMATCH), outcome


def test_the_default_dtype_is_set_back_when_an_answer_fails_under_float64() -> None:
    code = (
        "def ones_on(device):\n"
        "    assert torch.get_default_dtype() == torch.float32\n"
        "    return torch.ones(2, 3, dtype=torch.float32, device=device)"
    )
    outcome = evaluate(_question("ones_on"), code)
    assert "raised AssertionError (line 2 of your code)" in outcome.message, outcome
    assert torch.get_default_dtype() == torch.float32


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
        "def add_on_first(a, b):\n    return a + a.new_tensor(b, dtype=b.dtype)",
        "def add_on_first(a, b):\n    return a + torch.tensor(b, device=a.device)",
    ):
        outcome = evaluate(_question("add_on_first"), code)
        assert outcome.output == "", (code, outcome)  # wrong now (b's graph is lost), but nothing printed
