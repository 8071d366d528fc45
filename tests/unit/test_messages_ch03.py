"""Chapter 03's checker beyond the wrong answers tests/wrong_answers/ states: a slip is named only where the value
is that slip's, and what the meta stand-in read is never shown as the learner's values."""

from __future__ import annotations

from helpers.exercises import ch03

from .answers import evaluate


def _question(variable: str):
    return next(q for q in ch03.QUESTIONS if q.variable == variable)


def test_the_larger_term_alone_is_not_told_the_per_copy_cost_is_missing() -> None:
    """Attack 2026-11-29: max(copies, bytes) met first a case where it equals the bytes' term alone."""
    code = (
        "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
        "    return max(pieces * per_copy_s, nbytes / (gb_per_s * 1e9))"
    )
    message = evaluate(_question("predict_seconds"), code).message
    assert "the larger term alone" in message and "per-copy cost is missing" not in message, message


def test_a_formatted_meta_loss_prints_as_meta_not_as_zero() -> None:
    """Attack 2026-11-29: an f-string of a loss on the stand-in printed 0.000, the stand-in's zero, as a value."""
    code = 'def losses_to_floats(losses):\n    print(f"{losses[0]:.3f}")\n    return torch.stack(losses).tolist()'
    outcome = evaluate(_question("losses_to_floats"), code)
    assert "read values from the device 2 times (an f-string, .tolist())" in outcome.message, outcome
    assert "tensor(..., device='meta', size=())" in outcome.output and "0.000" not in outcome.output, outcome


def test_a_copy_straight_into_the_buffer_is_right_however_it_is_written() -> None:
    """Reads into buffer's own memory are the copies asked for: one a row, or one of the stacked tensors."""
    for code in (
        "def fill_rows(buffer, tensors):\n    for row, t in zip(buffer, tensors):\n        row[:] = t\n"
        "    return buffer",
        "def fill_rows(buffer, tensors):\n    buffer.copy_(torch.stack(tensors))\n    return buffer",
    ):
        outcome = evaluate(_question("fill_rows"), code)
        assert outcome.correct, (code, outcome.message)
