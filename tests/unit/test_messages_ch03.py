"""Chapter 03's checker beyond the wrong answers tests/wrong_answers/ states: a slip is named only where the value
is that slip's, and what the learner prints of a meta tensor shows it as meta."""

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
    assert "read the device 2 times (an f-string, .tolist())" in outcome.message, outcome
    assert "tensor(..., device='meta', size=())" in outcome.output and "0.000" not in outcome.output, outcome


def test_floor_division_is_not_told_it_is_the_larger_term_alone() -> None:
    """Attack round 2: `nbytes // (gb_per_s * 1e9)` equals the larger term alone on one case only."""
    code = (
        "def predict_seconds(nbytes, pieces, gb_per_s, per_copy_s):\n"
        "    return pieces * per_copy_s + nbytes // (gb_per_s * 1e9)"
    )
    message = evaluate(_question("predict_seconds"), code).message
    assert "returned 0.16384; expected 0.169432" in message and "larger term" not in message, message


def test_the_values_a_gpu_would_hold_are_compared_on_meta() -> None:
    """Attack round 2: a result read from meta counted as zeros, so its values were never compared; each meta tensor
    now has a host twin computed alongside, so reads give the values a GPU would, and results are compared."""
    code = (
        "def losses_to_floats(losses):\n"
        "    values = torch.stack(losses).tolist()\n"
        "    return [v + 1 for v in values] if losses[0].is_meta else values"
    )
    outcome = evaluate(_question("losses_to_floats"), code)
    assert "returned [-3.28074, 1.61996, 6.97299, 3.25945]; expected the Python floats [-4.28074" in outcome.message


def test_tensors_for_floats_are_not_told_float32s_roundings() -> None:
    """Attack round 5: 0-d tensors in their own dtype compare equal to float32's roundings, and were told so."""
    code = "def losses_to_floats(losses):\n    return [v for v in torch.stack(losses).cpu()]"
    message = evaluate(_question("losses_to_floats"), code).message
    assert "expected the Python floats" in message and "roundings" not in message, message
