"""Chapter 11's questions beyond the wrong answers tests/wrong_answers/ states: a mistake is named only where the
checker has evidence for it (a host read logged, a buffer made inside the capture, a gradient added to); otherwise
it says what it expected and what came back."""

from __future__ import annotations

from .answers import evaluate


def _question(variable: str):
    from helpers.exercises import ch11

    return next(q for q in ch11.QUESTIONS if q.variable == variable)


def test_normalise_names_no_cause_it_did_not_see() -> None:
    head = "def normalise(x):\n"
    cases = {
        # float() reads the value on the CPU, as .item() does: the call log sees it
        head + "    peak = float(x.abs().max())\n    return x / peak if peak else x": "on the CPU (float())",
        # a wrong value with no known cause: expected and got, no blame
        head + "    return x / x.abs().sum()": (
            "normalise([3.0, -6.0, 1.5], torch.float32) returned [0.285714, -0.571429, 0.142857] (torch.float32); "
            "expected [0.5, -1, 0.25] (torch.float32)"
        ),
        # a tensor of another shape
        head
        + "    return (x / x.abs().max()).reshape(1, -1).nan_to_num()": "returned [[0.5, -1, 0.25]] (torch.float32)",
        # not a tensor
        head + "    return (x / x.abs().max()).tolist()": "returned [0.5, -1, 0.25]; expected [0.5, -1, 0.25] (torch",
    }
    for code, phrase in cases.items():
        message = evaluate(_question("normalise"), code).message
        assert message.startswith("Not yet: ") and phrase in message, (phrase, message)


def test_a_break_with_no_host_read_is_reported_without_a_guessed_cause() -> None:
    """A graph break from something else (here a call Dynamo cannot trace into) names no cause it did not see."""
    code = (
        "import torch._dynamo\n\n"
        "@torch._dynamo.disable\n"
        "def _peak(x):\n    return x.abs().max()\n\n"
        "def normalise(x):\n    y = x * 1\n    peak = _peak(y)\n    return torch.where(peak == 0, y, y / peak)"
    )
    message = evaluate(_question("normalise"), code).message
    assert "not one: it breaks the graph (set_logs shows where)" in message, message
    assert "reads a tensor's value" not in message, message


def test_capture_names_no_cause_it_did_not_see() -> None:
    """A captured step that is wrong in a way no rule names (a doubled loss) gets the gap, not a guessed cause."""
    code = (
        "def capture_step(graph, model, optimizer, static_x, static_y):\n    def step(x, y):\n"
        "        loss = 2 * torch.nn.functional.mse_loss(model(x), y)\n        loss.backward()\n"
        "        optimizer.step()\n        return loss / 2\n\n    optimizer.zero_grad()\n    step(static_x, static_y)\n"
        "    optimizer.zero_grad(set_to_none=True)\n    return graph.capture(step, static_x, static_y)"
    )
    message = evaluate(_question("capture_step"), code).message
    assert "the weights differ from an eager step's (at most" in message, message
