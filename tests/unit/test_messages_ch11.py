"""Chapter 11's debug-this question (normalise) beyond the wrong answers tests/wrong_answers/ states: other
right answers are accepted, and a mistake is named only where the checker has evidence for it (a host read
dispatched, something printed, a nan where the original returned zeros); otherwise it says what it expected."""

from __future__ import annotations

from .answers import evaluate

HEAD = "def normalise(x):\n"


def _question():
    from helpers.exercises import ch11

    return next(q for q in ch11.QUESTIONS if q.variable == "normalise")


def test_other_right_answers_are_accepted() -> None:
    right = [
        HEAD + "    return x / x.abs().max().clamp_min(1e-30)",
        HEAD + "    return (x / x.abs().max()).nan_to_num(0.0)",
        HEAD + "    peak = x.abs().amax()\n    return x / torch.where(peak == 0, torch.ones_like(peak), peak)",
        HEAD + "    peak = x.abs().max()\n    return torch.where(peak > 0, x / peak, x)",
    ]
    for code in right:
        outcome = evaluate(_question(), code)
        assert outcome.correct, (code, outcome.message)


def test_more_wrong_answers_are_named_by_what_they_did() -> None:
    cases = {
        # float() reads the value on the CPU, as .item() does: the dispatch mode sees it
        HEAD + "    peak = float(x.abs().max())\n    return x / peak if peak else x": (
            "Your function reads a tensor's value on the CPU"
        ),
        # a wrong value with no known cause: expected and got, no blame
        HEAD + "    return x / x.abs().sum()": "for x = [3, -6, 1.5] normalise should return [0.5, -1, 0.25]",
        # a tensor of another shape
        HEAD + "    return (x / x.abs().max()).reshape(1, -1).nan_to_num()": "got a tensor of shape (1, 3)",
        # not a tensor
        HEAD + "    return (x / x.abs().max()).tolist()": "normalise returned list",
    }
    for code, phrase in cases.items():
        message = evaluate(_question(), code).message
        assert message.startswith("Not yet: ") and phrase in message, (phrase, message)


def test_a_break_with_no_host_read_or_print_is_reported_without_a_guessed_cause() -> None:
    """A graph break from something else (here a call Dynamo cannot trace into) names no cause it did not see."""
    code = (
        "import torch._dynamo\n\n"
        "@torch._dynamo.disable\n"
        "def _peak(x):\n    return x.abs().max()\n\n"
        + HEAD
        + "    y = x * 1\n    peak = _peak(y)\n    return torch.where(peak == 0, y, y / peak)"
    )
    message = evaluate(_question(), code).message
    assert "breaks the graph" in message and "set_logs(graph_breaks=True)" in message, message
    assert "reads a tensor's value" not in message and "prints" not in message, message
