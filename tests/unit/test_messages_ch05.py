"""Chapter 05's checker beyond the wrong answers tests/wrong_answers/ states: other right answers are
accepted, and a mistake is named only where the checker has evidence for it."""

from __future__ import annotations

from .answers import evaluate

RIGHT_COPIES = "4 if p.requires_grad else 1"


def _question():
    from helpers.exercises import ch05

    return next(q for q in ch05.QUESTIONS if q.variable == "predict_peak_bytes")


def _prediction(
    copies: str = RIGHT_COPIES,
    size: str = "p.numel() * p.element_size()",
    activations: str = "batch_size",
    total: str = "{}",
) -> str:
    """A prediction with one part changed; `total` wraps the returned sum ("({}) / 1e6" for megabytes)."""
    returned = total.format(f"held + {activations} * activation_bytes_per_sample")
    return (
        "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
        f"    held = sum({size} * ({copies}) for p in model.parameters())\n"
        f"    return {returned}"
    )


def test_more_wrong_predictions_are_named_by_their_term() -> None:
    question = _question()
    cases = {
        _prediction("2 if p.requires_grad else 1"): "Adam's two moments are missing",
        _prediction("1"): "the gradients and Adam's moments of the trainable parameters are missing",
        _prediction(activations="0"): "the activations kept for backward are missing",
        _prediction(size="p.numel()"): "you count elements, not bytes",
        _prediction(total="({}) / 1e6"): "that looks like megabytes",
        _prediction(total="8 * ({})"): "you count bits, not bytes",
    }
    for code, phrase in cases.items():
        message = evaluate(question, code).message
        assert message.startswith("Not yet: ") and phrase in message, (phrase, message)


def test_a_mistake_is_named_only_with_evidence_from_every_case() -> None:
    """Right on two models and off by one byte on the third: no term is blamed, and the right total is given."""
    code = _prediction(total="{} + (1 if isinstance(model, torch.nn.Linear) else 0)")
    message = evaluate(_question(), code).message
    assert message.startswith("Not yet: predict_peak_bytes(a float16 Linear, 4, 16) returned 1153"), message
    assert "needs 1,152 bytes" in message and "missing" not in message and "you count" not in message, message


def test_other_right_predictions_are_accepted() -> None:
    question = _question()
    right = [
        _prediction(size="p.nbytes"),
        _prediction("1 + 3 * p.requires_grad"),  # True counts as 1
        _prediction(total="float({})"),
        "def predict_peak_bytes(model, batch_size, activation_bytes_per_sample):\n"
        "    held = torch.tensor(0)\n"
        "    for p in model.parameters():\n"
        "        held += p.numel() * p.element_size() * (4 if p.requires_grad else 1)\n"
        "    return held + batch_size * activation_bytes_per_sample",  # a 0-d tensor
    ]
    for code in right:
        outcome = evaluate(question, code)
        assert outcome.correct, (outcome.message, code)
